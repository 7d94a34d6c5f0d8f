/* test_handle.c - map handles (the syscall-free path) and fd access modes.  The same
 * operations run through the fd wrappers on one map and through a handle on an identical
 * map must give the same results on every map type; a handle keeps reaching its map
 * after the caller's fd is closed and its number reused, while the fd wrappers follow the
 * number.  BPF_OBJ_GET file_flags (read-only / write-only fds) run through bpfrt and, as
 * root with bpffs, the kernel, and must give the same errno for every command.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "harness.h"
#include "api/diff.h"
#include "maps/maps.h"

enum { LKP, UPD, DEL };

struct hop {
	int op;
	uint32_t key;
	uint64_t value;
	uint64_t flags;
	int null_key, null_value;
};

static const struct hop hops[] = {
	{ UPD, 1, 11, BPF_ANY },       { LKP, 1 },
	{ LKP, 2 },                    { UPD, 1, 12, BPF_NOEXIST },
	{ UPD, 3, 13, BPF_EXIST },     { UPD, 2, 22, BPF_NOEXIST },
	{ LKP, 2 },                    { UPD, 1, 1, BPF_F_LOCK },
	{ UPD, 1, 1, 8 },              { DEL, 2 },
	{ DEL, 2 },                    { LKP, 2 },
	{ LKP, 1, .null_key = 1 },     { LKP, 1, .null_value = 1 },
	{ UPD, 1, 5, BPF_ANY, .null_value = 1 },
	{ DEL, 1, .null_key = 1 },     { UPD, 7, 70, BPF_ANY },
	{ UPD, 100, 1, BPF_ANY },      { LKP, 7 },
};

#define NHOPS (sizeof(hops) / sizeof(hops[0]))

struct hres {
	int ret[NHOPS];
	uint64_t val[NHOPS][4];
};

static void run_hops(int fd, struct bpfrt_map_handle *h, int keyless, struct hres *r)
{
	for (size_t i = 0; i < NHOPS; i++) {
		const struct hop *o = &hops[i];
		const void *key = o->null_key || keyless ? NULL : &o->key;
		uint64_t in[4] = { o->value, o->value, o->value, o->value };
		uint64_t *out = r->val[i];

		memset(out, 0xa5, sizeof(r->val[i]));
		switch (o->op) {
		case LKP:
			r->ret[i] = h ? bpfrt_map_handle_lookup(h, key, o->null_value ? NULL : out) :
				    bpfrt_map_lookup_elem(fd, key, o->null_value ? NULL : out);
			break;
		case UPD:
			r->ret[i] = h ? bpfrt_map_handle_update(h, key, o->null_value ? NULL : in,
								 o->flags) :
				    bpfrt_map_update_elem(fd, key, o->null_value ? NULL : in,
							  o->flags);
			break;
		default:
			r->ret[i] = h ? bpfrt_map_handle_delete(h, key) :
				    bpfrt_map_delete_elem(fd, key);
		}
	}
}

static void test_same_as_fd(void)
{
	static const struct {
		const char *name;
		uint32_t type, key_size, value_size, max;
	} types[] = {
		{ "hash", BPF_MAP_TYPE_HASH, 4, 8, 4 },
		{ "array", BPF_MAP_TYPE_ARRAY, 4, 8, 8 },
		{ "percpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4 },
		{ "percpu_array", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 8 },
		{ "lru_hash", BPF_MAP_TYPE_LRU_HASH, 4, 8, 4 },
		{ "queue", BPF_MAP_TYPE_QUEUE, 0, 8, 4 },
		{ "big value hash", BPF_MAP_TYPE_HASH, 4, 1000, 4 },
	};
	static struct hres a, b;

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		int fa = bpfrt_map_create(types[t].type, NULL, types[t].key_size,
					  types[t].value_size, types[t].max, NULL);
		int fb = bpfrt_map_create(types[t].type, NULL, types[t].key_size,
					  types[t].value_size, types[t].max, NULL);
		struct bpfrt_map_handle *h = bpfrt_map_handle_open(fb);
		size_t vcmp = brt_ncpus() * 8 < sizeof(a.val[0]) ? brt_ncpus() * 8 : sizeof(a.val[0]);

		T_CASE(types[t].name);
		T_ASSERT(fa >= 0 && fb >= 0 && h);
		if (types[t].value_size > 8) {
			/* values larger than our buffers: only the return values are compared */
			close(fa);
			close(fb);
			bpfrt_map_handle_close(h);
			continue;
		}
		run_hops(fa, NULL, !types[t].key_size, &a);
		run_hops(-1, h, !types[t].key_size, &b);
		for (size_t i = 0; i < NHOPS; i++) {
			T_EQ_INT(a.ret[i], b.ret[i]);
			T_ASSERT(!memcmp(a.val[i], b.val[i], vcmp));
		}
		bpfrt_map_handle_close(h);
		close(fa);
		close(fb);
	}
}

/* A value larger than the handle's stack staging buffer goes through the heap. */
static void test_big_value(void)
{
	static unsigned char in[1000], out[1000];
	int fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, NULL, 4, sizeof(in), 4, NULL);
	struct bpfrt_map_handle *h = bpfrt_map_handle_open(fd);
	uint32_t k = 3;

	T_CASE("big value");
	T_ASSERT(h);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)i;
	T_EQ_INT(0, bpfrt_map_handle_update(h, &k, in, BPF_ANY));
	T_EQ_INT(0, bpfrt_map_handle_lookup(h, &k, out));
	T_ASSERT(!memcmp(in, out, sizeof(in)));
	k = 4;
	memset(out, 0x5a, sizeof(out));
	T_EQ_INT(-ENOENT, bpfrt_map_handle_lookup(h, &k, out));
	T_EQ_INT(0x5a, out[0]);
	bpfrt_map_handle_close(h);
	close(fd);
}

/* The handle holds its own fd: the caller's fd may be closed and its number reused. */
static void test_fd_reuse(void)
{
	uint32_t k = 0;
	uint64_t va = 111, vb = 222, v = 0;
	int a = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL), b;
	struct bpfrt_map_handle *h;

	T_CASE("fd reuse");
	T_EQ_INT(0, bpfrt_map_update_elem(a, &k, &va, BPF_ANY));
	h = bpfrt_map_handle_open(a);
	T_ASSERT(h);
	T_ASSERT(bpfrt_map_handle_fd(h) != a);
	close(a);
	T_EQ_INT(-EBADF, bpfrt_map_lookup_elem(a, &k, &v));
	b = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);
	T_ASSERT(b >= 0);
	if (b != a) {
		/* the lowest free number normally comes back; make sure it does */
		T_EQ_INT(a, dup2(b, a));
		close(b);
		b = a;
	}
	T_EQ_INT(0, bpfrt_map_update_elem(b, &k, &vb, BPF_ANY));
	T_EQ_INT(0, bpfrt_map_handle_lookup(h, &k, &v));
	T_EQ_U64(111, v);
	T_EQ_INT(0, bpfrt_map_lookup_elem(b, &k, &v));
	T_EQ_U64(222, v);
	/* freezing through any fd freezes the map the handle reaches too */
	T_EQ_INT(0, bpfrt_map_freeze(bpfrt_map_handle_fd(h)));
	T_EQ_INT(-EPERM, bpfrt_map_handle_update(h, &k, &va, BPF_ANY));
	T_EQ_INT(0, bpfrt_map_handle_lookup(h, &k, &v));
	bpfrt_map_handle_close(h);
	close(b);

	T_CASE("handle open errors");
	errno = 0;
	T_ASSERT(!bpfrt_map_handle_open(-1) && errno == EBADF);
	T_ASSERT(!bpfrt_map_handle_open(b) && errno == EBADF);
	a = open("/dev/null", O_RDONLY);
	T_ASSERT(!bpfrt_map_handle_open(a) && errno == EINVAL);
	close(a);
	bpfrt_map_handle_close(NULL);
}

/* ---- BPF_OBJ_GET file_flags, against the kernel ------------------------------------- */

enum { F_LKP, F_UPD, F_DEL, F_NEXT, F_LAD, F_LBATCH, F_UBATCH, F_FREEZE, F_N };

struct ff_result {
	int get[4];           /* OBJ_GET: rdonly, wronly, both, prog rdonly */
	int ops[2][F_N];      /* errno per op through the rdonly and the wronly fd */
	int handle_upd;       /* bpfrt only: handle on the rdonly fd */
};

static int sys_err(sys_fn sys, int cmd, union bpf_attr *a)
{
	return sys(cmd, a, sizeof(*a)) < 0 ? errno : 0;
}

static int obj_get(sys_fn sys, const char *path, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.file_flags = flags;
	return sys(BPF_OBJ_GET, &a, sizeof(a));
}

static int ff_op(sys_fn sys, int fd, int op)
{
	uint32_t key = 1, next, keys[4] = { 1 }, count = 1;
	uint64_t value = 5, values[4] = { 5 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&value;
	switch (op) {
	case F_LKP:
		return sys_err(sys, BPF_MAP_LOOKUP_ELEM, &a);
	case F_UPD:
		return sys_err(sys, BPF_MAP_UPDATE_ELEM, &a);
	case F_DEL:
		key = 3;
		a.value = 0;
		return sys_err(sys, BPF_MAP_DELETE_ELEM, &a);
	case F_NEXT:
		a.next_key = (uint64_t)(uintptr_t)&next;
		return sys_err(sys, BPF_MAP_GET_NEXT_KEY, &a);
	case F_LAD:
		key = 3;
		return sys_err(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, &a);
	case F_FREEZE:
		a.key = a.value = 0;
		return sys_err(sys, BPF_MAP_FREEZE, &a);
	}
	memset(&a, 0, sizeof(a));
	a.batch.map_fd = (uint32_t)fd;
	a.batch.keys = (uint64_t)(uintptr_t)keys;
	a.batch.values = (uint64_t)(uintptr_t)values;
	a.batch.count = count;
	if (op == F_LBATCH) {
		a.batch.out_batch = (uint64_t)(uintptr_t)&next;
		return sys_err(sys, BPF_MAP_LOOKUP_BATCH, &a);
	}
	return sys_err(sys, BPF_MAP_UPDATE_BATCH, &a);
}

static void run_file_flags(sys_fn sys, const char *dir, int bpfrt, struct ff_result *r)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char path[512], ppath[512];
	union bpf_attr a;
	uint32_t key = 1;
	uint64_t value = 1;
	int fd, map, prog;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "%s/ff_map", dir);
	snprintf(ppath, sizeof(ppath), "%s/ff_prog", dir);
	for (int mode = 0; mode < 2; mode++) {
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 4;
		map = sys(BPF_MAP_CREATE, &a, sizeof(a));
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&value;
		sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
		memset(&a, 0, sizeof(a));
		a.bpf_fd = (uint32_t)map;
		a.pathname = (uint64_t)(uintptr_t)path;
		T_EQ_INT(0, sys(BPF_OBJ_PIN, &a, sizeof(a)));
		close(map);
		if (bpfrt)
			brt_obj_sweep(); /* the next OBJ_GET maps the file anew, from a restricted fd */
		fd = obj_get(sys, path, mode ? BPF_F_WRONLY : BPF_F_RDONLY);
		r->get[mode] = fd < 0 ? errno : 0;
		for (int op = 0; op < F_N; op++)
			r->ops[mode][op] = ff_op(sys, fd, op);
		if (bpfrt && !mode) {
			struct bpfrt_map_handle *h = bpfrt_map_handle_open(fd);

			r->handle_upd = h ? -bpfrt_map_handle_update(h, &key, &value, 0) : -1;
			bpfrt_map_handle_close(h);
		}
		if (!mode) {
			fd = obj_get(sys, path, BPF_F_RDONLY | BPF_F_WRONLY);
			r->get[2] = fd < 0 ? errno : 0;
		}
		close(fd);
		unlink(path);
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)ret0;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	prog = sys(BPF_PROG_LOAD, &a, sizeof(a));
	memset(&a, 0, sizeof(a));
	a.bpf_fd = (uint32_t)prog;
	a.pathname = (uint64_t)(uintptr_t)ppath;
	T_EQ_INT(0, sys(BPF_OBJ_PIN, &a, sizeof(a)));
	fd = obj_get(sys, ppath, BPF_F_RDONLY);
	r->get[3] = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	close(prog);
	unlink(ppath);
}

static void test_file_flags(void)
{
	static const int want[2][F_N] = {
		/* lkp  upd    del    next lad    lbatch  ubatch freeze */
		{ 0, EPERM, EPERM, 0, EPERM, 0, EPERM, EPERM },
		{ EPERM, 0, EINVAL, EPERM, EPERM, EPERM, 0, 0 },
	};
	char dir[] = "/dev/shm/bpfrt_ff_XXXXXX", kdir[] = "/tmp/bpfrt_kfs_XXXXXX";
	struct ff_result m, k;
	int kernel = kernel_available(), mounted = 0;

	T_ASSERT(t_scratch_dir(dir));
	setenv("BPFRT_FS", dir, 1);
	run_file_flags(sys_bpfrt, dir, 1, &m);
	T_CASE("file_flags: bpfrt");
	T_EQ_INT(0, m.get[0]);
	T_EQ_INT(0, m.get[1]);
	T_EQ_INT(EINVAL, m.get[2]);
	T_EQ_INT(0, m.get[3]); /* program fds ignore the flags */
	T_EQ_INT(EPERM, m.handle_upd);
	for (int mode = 0; mode < 2; mode++)
		for (int op = 0; op < F_N; op++) {
			T_CASE(mode ? "file_flags: wronly fd" : "file_flags: rdonly fd");
			T_EQ_INT(want[mode][op], m.ops[mode][op]);
		}
	rmdir(dir);
	if (!kernel)
		return;
	/* the kernel pins only on bpffs: a private mount for the test */
	if (mkdtemp(kdir) && !mount("bpf", kdir, "bpf", 0, NULL))
		mounted = 1;
	if (!mounted) {
		printf("note: cannot mount bpffs: file_flags not compared with the kernel\n");
		rmdir(kdir);
		return;
	}
	run_file_flags(sys_kernel, kdir, 0, &k);
	umount2(kdir, MNT_DETACH);
	rmdir(kdir);
	T_CASE("file_flags: same as the kernel");
	for (int i = 0; i < 4; i++)
		T_EQ_INT(k.get[i], m.get[i]);
	for (int mode = 0; mode < 2; mode++)
		for (int op = 0; op < F_N; op++)
			T_EQ_INT(k.ops[mode][op], m.ops[mode][op]);
}

int main(void)
{
	test_same_as_fd();
	test_big_value();
	test_fd_reuse();
	test_file_flags();
	return t_done();
}
