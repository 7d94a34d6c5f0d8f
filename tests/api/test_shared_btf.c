/* test_shared_btf.c - a map's BTF copy and the header fields derived from it, rewritten in
 * the map's file by a process that can write it (docs/SECURITY.md "Shared memory and
 * crashes"): the verifier checks programs against a private copy, checked once (api/
 * btf_load.c brt_map_btf_snap()), so the rewrite gets the same verdicts as the map had,
 * or a clean refusal (EINVAL), never an accept of an access the map's runtime does not
 * allow and never a crash.
 *
 * The map: an array whose value holds a kptr to a local struct, a bpf_spin_lock and a
 * bpf_timer.  Programs (tc classifiers verified as root): a plain load, a lock and
 * unlock, and three stores the kernel refuses (a scalar into the kptr, the lock word, the
 * timer).  The file is rewritten through its path, as another process would:
 *   - after creation, the creator loads again: same verdicts (before: the scalar store
 *     into the kptr was accepted once the BTF copy's kptr tag was renamed);
 *   - after this process dropped its view (fds closed, cache swept, then BPF_OBJ_GET:
 *     another process's first look): the kptr tag, the lock's offset, the timer's type,
 *     the header's fields, random bytes: baseline verdicts or EINVAL, never an accept of
 *     a refused store;
 *   - after the first load of a fresh view: same verdicts again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "obj/obj.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, v) I(BPF_ST | BPF_MEM | (sz), d, 0, o, v)
#define JNE_K(d, v, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, v)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_##f)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* [1] int, [2] u64, [3] struct plain { u64 a, b; }, [4] kptr tag, [5] ptr, [6] struct
 * bpf_spin_lock { int val; }, [7] struct bpf_timer { u64 a, b; }, [8] struct val {
 * struct plain __kptr *p; struct bpf_spin_lock l; int pad; struct bpf_timer t; } and
 * int prog(void *ctx): the programs are loaded with the same BTF, as an object's are
 * (bpfrt's kptrs are objects of the program's BTF) */
enum { T_INT = 1, T_U64, T_PLAIN, T_TAG, T_PTR, T_LOCK, T_TIMER, T_VAL, T_VOIDP, T_PROTO,
       T_FUNC };
enum { OFF_KPTR = 0, OFF_LOCK = 8, OFF_PAD = 12, OFF_TIMER = 16, VALUE_SIZE = 32 };

static struct btf_build btf;
static uint32_t btf_size, kptr_name, lock_member_pos, timer_member_pos;
static char dir[] = "/tmp/bpfrt-shared-btf.XXXXXX";
static char pin[160];

static void build_btf(void)
{
	struct btf_param param;

	memset(&btf, 0, sizeof(btf));
	btf_build_str(&btf, "");
	btf_build_int(&btf, "int", 4, 1);
	btf_build_int(&btf, "u64", 8, 0);
	btf_build_type(&btf, "plain", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(&btf, "a", T_U64, 0), btf_build_member(&btf, "b", T_U64, 64);
	kptr_name = btf.str_len;
	btf_build_type(&btf, "kptr", BTF_KIND_TYPE_TAG, 0, T_PLAIN);
	btf_build_type(&btf, NULL, BTF_KIND_PTR, 0, T_TAG);
	btf_build_type(&btf, "bpf_spin_lock", BTF_KIND_STRUCT, 1, 4);
	btf_build_member(&btf, "val", T_INT, 0);
	btf_build_type(&btf, "bpf_timer", BTF_KIND_STRUCT, 2, 16);
	btf_build_member(&btf, "a", T_U64, 0), btf_build_member(&btf, "b", T_U64, 64);
	btf_build_type(&btf, "val", BTF_KIND_STRUCT, 4, VALUE_SIZE);
	btf_build_member(&btf, "p", T_PTR, OFF_KPTR * 8);
	lock_member_pos = (uint32_t)sizeof(struct btf_header) + btf.len;
	btf_build_member(&btf, "l", T_LOCK, OFF_LOCK * 8);
	btf_build_member(&btf, "pad", T_INT, OFF_PAD * 8);
	timer_member_pos = (uint32_t)sizeof(struct btf_header) + btf.len;
	btf_build_member(&btf, "t", T_TIMER, OFF_TIMER * 8);
	btf_build_type(&btf, NULL, BTF_KIND_PTR, 0, 0);
	btf_build_type(&btf, NULL, BTF_KIND_FUNC_PROTO, 1, T_INT);
	param = (struct btf_param){ btf_build_str(&btf, "ctx"), T_VOIDP };
	btf_build_put(&btf, &param, sizeof(param));
	btf_build_type(&btf, "prog", BTF_KIND_FUNC, BTF_FUNC_GLOBAL, T_PROTO);
	btf_size = btf_build_finish(&btf);
	/* strings follow the types: the tag's name from the start of the blob */
	kptr_name += (uint32_t)sizeof(struct btf_header) + btf.len;
}

static int sys(int cmd, union bpf_attr *a)
{
	int r = bpfrt_bpf(cmd, a, sizeof(*a));

	return r < 0 ? -errno : r;
}

static int btf_fd = -1; /* the programs' */

static int load_btf(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)btf.data;
	a.btf_size = btf_size;
	return sys(BPF_BTF_LOAD, &a);
}

static int create_map(void)
{
	union bpf_attr a;
	int fd;

	btf_fd = load_btf();
	if (btf_fd < 0)
		return btf_fd;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = VALUE_SIZE;
	a.max_entries = 1;
	a.btf_fd = (uint32_t)btf_fd;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = T_VAL;
	fd = sys(BPF_MAP_CREATE, &a);
	return fd;
}

enum { P_LOAD, P_LOCK, P_KPTR, P_LOCKW, P_TIMERW, NPROGS };
static const char *const prog_names[NPROGS] = { "plain load", "lock and unlock",
						"scalar into the kptr", "store to the lock",
						"store to the timer" };

static char vlog[4096]; /* the last load's verifier log */

/* r0 = the value of key 0 or exit 0; then the program's body */
static int load(int map, int which)
{
	struct bpf_insn insns[32] = {
		ST(BPF_W, 10, -4, 0), MOV_X(2, 10), ADD_K(2, -4),
		I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, map), I(0, 0, 0, 0, 0),
		CALL(map_lookup_elem), JNE_K(0, 0, 2), MOV_K(0, 0), EXIT(),
	};
	struct bpf_func_info fi = { 0, T_FUNC };
	uint32_t n = 9;
	union bpf_attr a;

	switch (which) {
	case P_LOAD:
		insns[n++] = LDX(BPF_W, 0, 0, OFF_PAD);
		break;
	case P_LOCK:
		insns[n++] = MOV_X(6, 0);
		insns[n++] = MOV_X(1, 6), insns[n++] = ADD_K(1, OFF_LOCK);
		insns[n++] = CALL(spin_lock);
		insns[n++] = MOV_X(1, 6), insns[n++] = ADD_K(1, OFF_LOCK);
		insns[n++] = CALL(spin_unlock);
		insns[n++] = MOV_K(0, 0);
		break;
	case P_KPTR:
		insns[n++] = MOV_K(1, 0x41);
		insns[n++] = STX(BPF_DW, 0, 1, OFF_KPTR);
		insns[n++] = MOV_K(0, 0);
		break;
	case P_LOCKW:
		insns[n++] = ST(BPF_W, 0, OFF_LOCK, 0);
		insns[n++] = MOV_K(0, 0);
		break;
	case P_TIMERW:
		insns[n++] = ST(BPF_DW, 0, OFF_TIMER + 8, 7);
		insns[n++] = MOV_K(0, 0);
		break;
	}
	insns[n++] = EXIT();
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	a.prog_flags = BPFRT_F_PRIV_FULL;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.prog_btf_fd = (uint32_t)btf_fd;
	a.func_info = (uint64_t)(uintptr_t)&fi;
	a.func_info_cnt = 1;
	a.func_info_rec_size = sizeof(fi);
	a.log_buf = (uint64_t)(uintptr_t)vlog;
	a.log_size = sizeof(vlog);
	a.log_level = 1;
	vlog[0] = 0;
	return sys(BPF_PROG_LOAD, &a);
}

/* Each program's verdict: 0 accepted, else the load's -errno */
static void verdicts(int map, int out[NPROGS])
{
	for (int p = 0; p < NPROGS; p++) {
		int fd = load(map, p);

		out[p] = fd >= 0 ? 0 : fd;
		if (getenv("T_VERBOSE"))
			fprintf(stderr, "%s: %d\n%s\n", prog_names[p], out[p], vlog);
		if (fd >= 0)
			close(fd);
	}
}

/* The verdicts must be the baseline's, or every one a refusal of the map (EINVAL) */
static void same_or_refused(const char *what, const int base[NPROGS], const int got[NPROGS])
{
	int same = 1, refused = 1;

	T_CASE(what);
	for (int p = 0; p < NPROGS; p++) {
		same &= got[p] == base[p];
		refused &= got[p] == -EINVAL;
	}
	if (same || refused) {
		T_OK();
		return;
	}
	for (int p = 0; p < NPROGS; p++)
		if (got[p] != base[p])
			T_FAIL("%s: %s: %d, the map's own verdict %d", what, prog_names[p], got[p],
			       base[p]);
}

/* ---- the file, rewritten through its path ------------------------------------------- */
static unsigned char *orig; /* the file as created */
static size_t orig_size;
static off_t blob_at;       /* where the BTF copy is in it */

static int read_file(unsigned char **buf, size_t *size)
{
	int fd = open(pin, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	*buf = malloc(*size);
	if (!*buf || pread(fd, *buf, *size, 0) != (ssize_t)*size) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void write_at(off_t off, const void *p, size_t n)
{
	int fd = open(pin, O_WRONLY);

	if (fd < 0 || pwrite(fd, p, n, off) != (ssize_t)n)
		T_FAIL("rewriting %s at %lld: %s", pin, (long long)off, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void restore(void)
{
	write_at(0, orig, orig_size);
}

/* the BTF copy with one change: a byte at pos */
static void scribble_btf(uint32_t pos, const void *bytes, size_t n)
{
	write_at(blob_at + (off_t)pos, bytes, n);
}

static void scribble_hdr(void (*edit)(struct brt_obj_hdr *h))
{
	struct brt_obj_hdr h;
	int fd = open(pin, O_RDONLY);

	if (fd < 0 || brt_obj_read_hdr(fd, orig_size, &h)) {
		T_FAIL("reading the header of %s", pin);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	edit(&h);
	write_at((off_t)brt_obj_hdr_at(&h), &h, sizeof(h));
}

/* Close this process's fd and sweep: the next BPF_OBJ_GET attaches the file as another
 * process's first look would (the header read once, no BTF copy taken yet). */
static int fresh_view(int fd)
{
	if (fd >= 0)
		close(fd);
	brt_obj_sweep();
	brt_obj_sweep();
	return bpfrt_obj_get(pin);
}

/* The scalar-into-kptr program run once on the map, then the value replaced and read */
static void kptr_store_runs(int map)
{
	unsigned char pkt[64] = { 0 }, value[VALUE_SIZE] = { 0 };
	uint32_t key = 0;
	union bpf_attr a;
	int prog = load(map, P_KPTR);

	T_CASE("kptr store accepted: it runs, the value is replaced");
	T_ASSERT(prog >= 0);
	if (prog < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	T_EQ_INT(0, sys(BPF_PROG_TEST_RUN, &a));
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	T_EQ_INT(0, sys(BPF_MAP_UPDATE_ELEM, &a));
	T_EQ_INT(0, sys(BPF_MAP_LOOKUP_ELEM, &a));
	close(prog);
}

static void hdr_no_roots(struct brt_obj_hdr *h)
{
	h->ngraph_roots = 0;
}

static void hdr_lock_moved(struct brt_obj_hdr *h)
{
	h->spin_lock_off = OFF_PAD + 1;
}

static void hdr_no_fields(struct brt_obj_hdr *h)
{
	h->ngraph_roots = 0;
	h->spin_lock_off = 0;
	h->timer_off = 0;
}

static void hdr_value_type(struct brt_obj_hdr *h)
{
	h->btf_value_type_id = T_PLAIN;
}

static void check_view(const char *what, const int base[NPROGS])
{
	int fd = fresh_view(-1), got[NPROGS];

	if (fd < 0) {
		/* the rewrite made the file no map (BPF_OBJ_GET's -EACCES): a clean error too */
		T_CASE(what);
		T_EQ_INT(-EACCES, -errno);
		return;
	}
	verdicts(fd, got);
	same_or_refused(what, base, got);
	close(fd);
}

int main(void)
{
	int base[NPROGS], got[NPROGS], map, fd;
	unsigned char *blob_copy;
	uint32_t member[3];

	if (!t_scratch_dir(dir))
		T_SKIP("mkdtemp: %s", strerror(errno));
	setenv("BPFRT_FS", dir, 1);
	snprintf(pin, sizeof(pin), "%s/map", dir);
	build_btf();
	map = create_map();
	T_CASE("map with a kptr, a lock and a timer");
	T_ASSERT(map >= 0);
	if (map < 0)
		return t_done();
	verdicts(map, base);
	T_CASE("the map's own verdicts");
	T_EQ_INT(0, base[P_LOAD]);
	T_EQ_INT(0, base[P_LOCK]);
	T_EQ_INT(-EACCES, base[P_KPTR]);
	T_EQ_INT(-EACCES, base[P_LOCKW]);
	T_EQ_INT(-EACCES, base[P_TIMERW]);
	T_ASSERT(bpfrt_obj_pin(map, pin) == 0);
	if (read_file(&orig, &orig_size))
		T_SKIP("reading %s: %s", pin, strerror(errno));
	blob_copy = memmem(orig, orig_size, btf.data, btf_size);
	T_CASE("the file keeps a copy of the BTF");
	T_ASSERT(blob_copy != NULL);
	if (!blob_copy)
		return t_done();
	blob_at = (off_t)(blob_copy - orig);

	/* the creator, after its map's BTF copy was rewritten: the kptr tag renamed (the
	 * value then has no kptr for a verifier that reads the file) */
	scribble_btf(kptr_name, "x", 1);
	verdicts(map, got);
	same_or_refused("creator: kptr tag renamed after creation", base, got);
	T_EQ_INT(-EACCES, got[P_KPTR]);
	restore();
	close(map); /* the pin keeps the map */

	/* another process's first look at a rewritten file */
	scribble_btf(kptr_name, "x", 1);
	check_view("fresh view: kptr tag renamed", base);
	restore();
	memcpy(member, btf.data + lock_member_pos, sizeof(member));
	member[2] = OFF_PAD * 8; /* the lock where pad is */
	scribble_btf(lock_member_pos, member, sizeof(member));
	check_view("fresh view: lock moved", base);
	restore();
	memcpy(member, btf.data + timer_member_pos, sizeof(member));
	member[1] = T_PLAIN; /* the timer a plain struct of its size */
	scribble_btf(timer_member_pos, member, sizeof(member));
	check_view("fresh view: timer made plain", base);
	restore();
	scribble_hdr(hdr_no_roots);
	check_view("fresh view: header without the kptr root", base);
	restore();
	scribble_hdr(hdr_lock_moved);
	check_view("fresh view: header's lock moved", base);
	restore();
	scribble_hdr(hdr_no_fields);
	check_view("fresh view: header without fields", base);
	restore();
	scribble_hdr(hdr_value_type);
	check_view("fresh view: header's value type", base);
	restore();
	{
		/* unchanged: the same verdicts exactly */
		fd = fresh_view(-1);
		T_CASE("fresh view, unchanged file");
		T_ASSERT(fd >= 0);
		verdicts(fd, got);
		for (int p = 0; p < NPROGS; p++)
			T_EQ_INT(base[p], got[p]);
		/* rewritten after that view's first load: its checked copy stays */
		scribble_btf(kptr_name, "x", 1);
		verdicts(fd, got);
		T_CASE("fresh view, rewritten after its first load");
		for (int p = 0; p < NPROGS; p++)
			T_EQ_INT(base[p], got[p]);
		close(fd);
		restore();
	}

	/* random bytes of the copy (a few at a time), each on a fresh view: no crash, the
	 * lock and the timer never written by a program; the kptr store is accepted only
	 * where the copy passed every check as another BTF than the program's (bpfrt's kptrs
	 * are objects of the program's BTF; another BTF's kptr is 8 plain bytes), and then
	 * what it stored is no object of this process: running it and replacing the value
	 * (which frees the value's kptrs) must not touch it */
	srand(14);
	for (int trial = 0; trial < 300; trial++) {
		int nbytes = 1 + rand() % 4, bad = 0;

		for (int k = 0; k < nbytes; k++) {
			unsigned char b = (unsigned char)rand();

			scribble_btf((uint32_t)rand() % btf_size, &b, 1);
		}
		fd = fresh_view(-1);
		if (fd >= 0) {
			verdicts(fd, got);
			bad = !got[P_LOCKW] || !got[P_TIMERW];
			if (!got[P_KPTR])
				kptr_store_runs(fd);
			close(fd);
		}
		T_CASE("fresh view: random bytes of the BTF copy");
		if (bad)
			T_FAIL("trial %d: a refused store accepted (%d %d)", trial, got[P_LOCKW],
			       got[P_TIMERW]);
		else
			T_OK();
		restore();
	}
	close(btf_fd);
	free(orig);
	return t_done();
}
