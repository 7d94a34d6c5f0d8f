/* test_batch.c - a batch (obj.h: one object's load) resolves each fd once and answers it
 * from its memo afterwards; a number closed and handed out again by the library is the
 * new object, never the one the memo had: created again (MAP_CREATE), opened from a pin
 * (OBJ_GET), or a program's fd; a closed number never handed out again is EBADF once the
 * batch has ended.  Each answer is checked by the map's id against its own fd's info.
 * A batch's program is a private copy until its fd is first resolved, then mapped, so a
 * holder keeps it alive and findable by id past its last fd (obj.h private_copy); a pin
 * does not map it (the name holds the file).  The BTF object of a batch's program is not
 * mapped either (its file is held only by its fd): once that fd is closed, the BTF's id
 * is still found, through the program's file.  A batch's cache misses sweep at most once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "api/api.h"
#include "maps/maps.h"
#include "obj/obj.h"

static int map_new(uint32_t max)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = max;
	return bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

/* max_entries of the map fd resolves to, or -errno */
static long resolved(int fd)
{
	struct brt_map *m;
	long r;
	int err = brt_map_from_fd(fd, &m);

	if (err)
		return err;
	r = m->max_entries;
	brt_map_put(m);
	return r;
}

/* Mappings of this process of files under dir (/proc/self/maps). */
static int mappings(const char *dir)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, dir) != NULL;
	fclose(f);
	return n;
}

/* A socket filter's return value through BPF_PROG_TEST_RUN, or -errno. */
static long run(int fd)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = 1;
	if (bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -errno;
	return a.test.retval;
}

/* A socket filter that looks key 0 up in map and returns 9: its fd, or -1. */
static int prog_using(int map)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 9 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 8;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
}

int main(void)
{
	char dir[64] = "/dev/shm/bpfrt-batch-XXXXXX", pin[96], cmd[96];
	struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_insn ret7[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 3 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 0, .imm = 4 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fa, fb, fc, fp, base, fbtf;

	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	snprintf(pin, sizeof(pin), "%s/seven", dir);
	fc = map_new(7);
	T_ASSERT(fc >= 0);
	T_EQ_INT(0, bpfrt_obj_pin(fc, pin));
	close(fc);

	brt_api_batch_begin();
	T_CASE("resolved once, then from the memo");
	fa = map_new(1);
	T_EQ_INT(1, resolved(fa));
	T_EQ_INT(1, resolved(fa));

	T_CASE("closed and created again under the same number");
	close(fa);
	fb = map_new(2);
	T_EQ_INT(fa, fb);
	T_EQ_INT(2, resolved(fb));

	/* two numbers the memo knows, both closed: whatever OBJ_GET opens on its way,
	 * its fd and the program's below take these two */
	T_CASE("closed and opened from a pin under a known number");
	fa = map_new(3);
	T_EQ_INT(3, resolved(fa));
	close(fa);
	close(fb);
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)pin;
	fc = bpfrt_bpf(BPF_OBJ_GET, &a, sizeof(a));
	T_ASSERT(fc == fa || fc == fb);
	T_EQ_INT(7, resolved(fc));

	/* the same with BPF_F_RDONLY: the get restricts the map it opened (a write through
	 * its fd is EPERM), not the one the memo had under that number */
	T_CASE("closed, and opened read-only from a pin under a known number");
	{
		int ga = map_new(4), gb = map_new(5), g;
		uint32_t key = 0;
		uint64_t val = 1;

		T_ASSERT(ga >= 0 && gb >= 0);
		T_EQ_INT(4, resolved(ga));
		T_EQ_INT(5, resolved(gb));
		close(ga);
		close(gb);
		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)pin;
		a.file_flags = BPF_F_RDONLY;
		g = bpfrt_bpf(BPF_OBJ_GET, &a, sizeof(a));
		T_ASSERT(g >= 0);
		T_EQ_INT(7, resolved(g));
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)g;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&val;
		T_EQ_INT(-1, bpfrt_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)));
		T_EQ_INT(EPERM, errno);
		close(g);
	}

	T_CASE("closed and a program's fd under a known number");
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)ret0;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fp = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	T_ASSERT(fp == (fc == fa ? fb : fa));
	T_EQ_INT(-EINVAL, resolved(fp));
	close(fp);
	close(fc);
	brt_api_batch_end();

	T_CASE("after the batch: a closed number is EBADF");
	T_EQ_INT(-EBADF, resolved(fp));
	T_EQ_INT(-EBADF, resolved(fc));

	/* A batch's program keeps the memory it was written from instead of mapping its
	 * file (obj.h private_copy); the first resolution of its fd maps the file, so a
	 * holder keeps the program alive and findable by id after its last fd is closed. */
	T_CASE("a batch's program is not mapped until its fd is resolved");
	brt_obj_sweep();
	base = mappings(dir); /* the id counters' file */
	T_ASSERT(base >= 0);
	brt_api_batch_begin();
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)ret7;
	a.insn_cnt = 3;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fp = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	T_ASSERT(fp >= 0);
	brt_api_batch_end();
	T_EQ_INT(base, mappings(dir));
	T_EQ_INT(7, run(fp));
	T_EQ_INT(base + 1, mappings(dir));

	T_CASE("a held program outlives its fd, findable by id");
	{
		struct brt_prog *prog;
		uint32_t id;
		int fi;

		T_EQ_INT(0, brt_prog_from_fd(fp, &prog));
		id = prog->obj.snap.id;
		close(fp);
		brt_obj_sweep();
		T_EQ_INT(base + 1, mappings(dir));
		if (geteuid() == 0) {
			memset(&a, 0, sizeof(a));
			a.prog_id = id;
			fi = bpfrt_bpf(BPF_PROG_GET_FD_BY_ID, &a, sizeof(a));
			T_ASSERT(fi >= 0);
			T_EQ_INT(7, run(fi));
			close(fi);
		}
		brt_obj_put(&prog->obj);
		brt_obj_sweep();
		T_EQ_INT(base, mappings(dir));
		if (geteuid() == 0) {
			fi = bpfrt_bpf(BPF_PROG_GET_FD_BY_ID, &a, sizeof(a));
			T_EQ_INT(-1, fi);
			T_EQ_INT(ENOENT, errno);
		}
	}

	T_CASE("a batch's program's BTF: not mapped, its id found through the program");
	{
		/* [1] int, [2] int (void), [3] static int f(void) */
		static const char strs[] = "\0int\0f";
		const uint32_t types[] = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
					   0, BTF_KIND_FUNC_PROTO << 24, 1,
					   5, BTF_KIND_FUNC << 24, 2 };
		struct bpf_func_info fi = { .insn_off = 0, .type_id = 3 };
		struct bpf_prog_info info;
		int fi_fd;

		brt_obj_sweep();
		brt_api_batch_begin();
		fbtf = btf_blob_load(bpfrt_bpf, types, sizeof(types), strs, sizeof(strs));
		T_ASSERT(fbtf >= 0);
		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = (uint64_t)(uintptr_t)ret7;
		a.insn_cnt = 3;
		a.license = (uint64_t)(uintptr_t)"GPL";
		a.prog_btf_fd = (uint32_t)fbtf;
		a.func_info = (uint64_t)(uintptr_t)&fi;
		a.func_info_rec_size = sizeof(fi);
		a.func_info_cnt = 1;
		fp = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
		T_ASSERT(fp >= 0);
		brt_api_batch_end();
		/* neither the program nor the BTF object it holds is mapped */
		T_EQ_INT(base, mappings(dir));
		close(fbtf);
		brt_obj_sweep();
		T_EQ_INT(base, mappings(dir));
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fp;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		T_EQ_INT(0, bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)));
		T_ASSERT(info.btf_id != 0);
		if (geteuid() == 0) {
			memset(&a, 0, sizeof(a));
			a.btf_id = info.btf_id;
			fi_fd = bpfrt_bpf(BPF_BTF_GET_FD_BY_ID, &a, sizeof(a));
			T_ASSERT(fi_fd >= 0);
			close(fi_fd);
		}
		close(fp);
		brt_obj_sweep();
		T_EQ_INT(base, mappings(dir));
		if (geteuid() == 0) {
			fi_fd = bpfrt_bpf(BPF_BTF_GET_FD_BY_ID, &a, sizeof(a));
			T_EQ_INT(-1, fi_fd);
			T_EQ_INT(ENOENT, errno);
		}
	}

	T_CASE("a batch's program never resolved is gone with its fd");
	brt_api_batch_begin();
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)ret7;
	a.insn_cnt = 3;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fp = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	T_ASSERT(fp >= 0);
	brt_api_batch_end();
	close(fp);
	T_EQ_INT(1, brt_obj_sweep());
	T_EQ_INT(base, mappings(dir));
	/* A pin names the file, which keeps it alive: the pin resolves the program without
	 * mapping it (brt_obj_from_fd_transient()); opened from the pin it runs. */
	T_CASE("a batch's pin does not map its program, and the pin holds it");
	snprintf(pin, sizeof(pin), "%s/prog", dir);
	brt_api_batch_begin();
	fp = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	T_ASSERT(fp >= 0);
	T_EQ_INT(0, bpfrt_obj_pin(fp, pin));
	brt_api_batch_end();
	T_EQ_INT(base, mappings(dir));
	close(fp);
	brt_obj_sweep();
	fp = bpfrt_obj_get(pin);
	T_ASSERT(fp >= 0);
	T_EQ_INT(7, run(fp));
	close(fp);
	unlink(pin);

	/* A cache miss sweeps when due, as a creation does: at most once in a batch (a
	 * sweep at each miss cost an fstat per cached object, quadratic for a loader that
	 * opens n pinned maps); the batch's end leaves the rest to the next sweep. */
	T_CASE("a batch's cache misses sweep once");
	{
		char pin2[112];
		int fx, g1, g2, n;

		snprintf(pin, sizeof(pin), "%s/one", dir);
		snprintf(pin2, sizeof(pin2), "%s/two", dir);
		fa = map_new(1);
		fb = map_new(2);
		T_ASSERT(fa >= 0 && fb >= 0);
		T_EQ_INT(0, bpfrt_obj_pin(fa, pin));
		T_EQ_INT(0, bpfrt_obj_pin(fb, pin2));
		close(fa);
		close(fb);
		fx = map_new(9);
		T_ASSERT(fx >= 0);
		brt_obj_sweep();
		n = brt_obj_cached(); /* fx's map */
		T_ASSERT(n >= 1);
		brt_api_batch_begin();
		g1 = bpfrt_obj_get(pin); /* a miss, due: the batch's sweep (fx still open) */
		T_ASSERT(g1 >= 0);
		T_EQ_INT(n + 1, brt_obj_cached());
		close(fx);
		g2 = bpfrt_obj_get(pin2); /* a miss, due again: no second sweep */
		T_ASSERT(g2 >= 0);
		T_EQ_INT(n + 2, brt_obj_cached());
		T_EQ_INT(2, resolved(g2));
		brt_api_batch_end();
		T_EQ_INT(1, brt_obj_sweep()); /* fx's map, closed */
		T_EQ_INT(n + 1, brt_obj_cached());
		close(g1);
		close(g2);
		T_EQ_INT(2, brt_obj_sweep());
	}
	/* A program another process pinned, got with BPF_F_RDONLY in a batch: the get
	 * resolves its own fd, then reopens it read-write and closes it (pin.c), and the
	 * program is rebuilt here at once, its maps' files opened under the numbers free
	 * then, the closed one first: none of those numbers may answer from the memo as
	 * what the batch knew it as (the program: EINVAL, and it never ran). */
	T_CASE("another process's program got read-only in a batch runs with its map");
	{
		char ppin[112];
		int st = 0, g;
		pid_t pid;

		snprintf(ppin, sizeof(ppin), "%s/foreign", dir);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			int m = map_new(4), p = m < 0 ? -1 : prog_using(m);

			_exit(p < 0 || bpfrt_obj_pin(p, ppin) ? 1 : 0);
		}
		T_EQ_INT(pid, waitpid(pid, &st, 0));
		T_EQ_INT(0, st);
		brt_api_batch_begin();
		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)ppin;
		a.file_flags = BPF_F_RDONLY;
		g = bpfrt_bpf(BPF_OBJ_GET, &a, sizeof(a));
		T_ASSERT(g >= 0);
		T_EQ_INT(9, run(g));
		T_EQ_INT(9, run(g));
		/* the numbers the get and the rebuild closed, taken again by files that are
		 * no objects: none of them runs the program (or is its map) */
		{
			int nul[8], prog_at = 0;

			for (int i = 0; i < 8; i++)
				nul[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
			for (int i = 0; i < 8; i++) {
				if (nul[i] >= 0 && (run(nul[i]) != -EINVAL || resolved(nul[i]) != -EINVAL))
					prog_at = nul[i];
				if (nul[i] >= 0)
					close(nul[i]);
			}
			T_EQ_INT(0, prog_at);
		}
		close(g);
		brt_api_batch_end();
		unlink(ppin);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) < 0)
		T_FAIL("cleanup");
	return t_done();
}
