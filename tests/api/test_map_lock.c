/* test_map_lock.c - maps whose BTF value type holds a struct bpf_spin_lock, against the
 * kernel: which value types BPF_BTF_LOAD and MAP_CREATE accept, then BPF_F_LOCK on lookup,
 * update, lookup_and_delete and the batch commands (errnos, and the values: the lock
 * word reads as zero and an update never writes it).  Each case is a script of steps run
 * through bpfrt_bpf() and, as root, bpf(2); every step's result must match.  Then locked
 * writers in two processes and a locked reader: never a torn value.  Then lock words left
 * by a killed holder or scribbled on by another process: taken over, or EBUSY after a
 * bounded wait while a live (stopped) thread holds it, never a spin for ever.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "api/diff.h"
#include "maps/maps.h"

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
#define M(name, type, bits) (name), (type), (bits)

/* names: 1 int, 5 bpf_spin_lock, 19 val, 23 v, 25 a, 27 l, 29 b, 31 inner, 37 m */
static const char strs[] = "\0int\0bpf_spin_lock\0val\0v\0a\0l\0b\0inner\0m";
enum { T_INT = 1, T_LOCK, T_INNER, T_CASE_TYPE };
static const uint32_t base[] = {
	/* [1] int */
	1, INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
	/* [2] struct bpf_spin_lock { int val; } */
	5, INFO(BTF_KIND_STRUCT, 1), 4, M(19, T_INT, 0),
	/* [3] struct inner { struct bpf_spin_lock l; } */
	31, INFO(BTF_KIND_STRUCT, 1), 4, M(27, T_LOCK, 0),
};

/* [4], one per blob: a BTF with two locks in a struct is refused by BTF_LOAD itself */
#define MAXW 16
static const uint32_t t_v[MAXW] = { /* struct v { int a; struct bpf_spin_lock l; int b; } */
	23, INFO(BTF_KIND_STRUCT, 3), 12, M(25, T_INT, 0), M(27, T_LOCK, 32), M(29, T_INT, 64) };
static const uint32_t t_l0[MAXW] = { /* { struct bpf_spin_lock l; int a; } */
	23, INFO(BTF_KIND_STRUCT, 2), 8, M(27, T_LOCK, 0), M(25, T_INT, 32) };
static const uint32_t t_two[MAXW] = { /* two locks */
	23, INFO(BTF_KIND_STRUCT, 2), 8, M(27, T_LOCK, 0), M(37, T_LOCK, 32) };
static const uint32_t t_mis[MAXW] = { /* a lock at byte 2 */
	23, INFO(BTF_KIND_STRUCT, 2), 8, M(25, T_INT, 0), M(27, T_LOCK, 16) };
static const uint32_t t_two_nest[MAXW] = { /* { struct inner l; struct bpf_spin_lock m; } */
	23, INFO(BTF_KIND_STRUCT, 2), 8, M(27, T_INNER, 0), M(37, T_LOCK, 32) };
static const uint32_t t_nest[MAXW] = { /* { int a; struct inner m; } */
	23, INFO(BTF_KIND_STRUCT, 2), 8, M(25, T_INT, 0), M(37, T_INNER, 32) };
static const uint32_t t_union[MAXW] = { /* union { struct bpf_spin_lock l; int a; } */
	23, INFO(BTF_KIND_UNION, 2), 4, M(27, T_LOCK, 0), M(25, T_INT, 0) };
static const uint32_t t_arr[MAXW] = { /* struct bpf_spin_lock[2] */
	0, INFO(BTF_KIND_ARRAY, 0), 0, T_LOCK, T_INT, 2 };

static size_t words(const uint32_t *t)
{
	/* kind's length: header 3 words, + 3 per member (struct, union) or 3 (array) */
	uint32_t kind = (t[1] >> 24) & 0x1f;

	return 3 + (kind == BTF_KIND_ARRAY ? 3 : 3 * (t[1] & 0xffff));
}

/* BTF fd, or -errno */
static int load_btf(sys_fn sys, const uint32_t *extra)
{
	uint32_t types[sizeof(base) / 4 + MAXW];
	int fd;

	memcpy(types, base, sizeof(base));
	memcpy(types + sizeof(base) / 4, extra, words(extra) * 4);
	fd = btf_blob_load(sys, types, (uint32_t)(sizeof(base) + words(extra) * 4), strs,
			   sizeof(strs));
	return fd < 0 ? -errno : fd;
}

/* ---- MAP_CREATE ---------------------------------------------------------------------- */

static const struct create_case {
	const char *name;
	uint32_t type, key, value;
	const uint32_t *t; /* type [4] of the blob */
	uint32_t value_id, flags;
	int ours;          /* a documented difference: bpfrt's answer (else the kernel's) */
} creates[] = {
	{ "hash, lock in the middle", BPF_MAP_TYPE_HASH, 4, 12, t_v, 4, 0 },
	{ "array, lock in the middle", BPF_MAP_TYPE_ARRAY, 4, 12, t_v, 4, 0 },
	{ "hash, lock first", BPF_MAP_TYPE_HASH, 4, 8, t_l0, 4, 0 },
	{ "two locks", BPF_MAP_TYPE_HASH, 4, 8, t_two, 4, 0 },
	{ "lock at byte 2", BPF_MAP_TYPE_HASH, 4, 8, t_mis, 4, 0 },
	/* the kernel accepts it and keeps both words out of copies (docs/MEMORY_MODEL.md) */
	{ "two locks, one nested", BPF_MAP_TYPE_HASH, 4, 8, t_two_nest, 4, 0, -E2BIG },
	{ "lock in a nested struct", BPF_MAP_TYPE_HASH, 4, 8, t_nest, 4, 0 },
	{ "value is the lock itself", BPF_MAP_TYPE_HASH, 4, 4, t_v, T_LOCK, 0 },
	{ "value is a struct around the lock", BPF_MAP_TYPE_ARRAY, 4, 4, t_v, T_INNER, 0 },
	{ "lock in a union", BPF_MAP_TYPE_HASH, 4, 4, t_union, 4, 0 },
	{ "array of locks", BPF_MAP_TYPE_HASH, 4, 8, t_arr, 4, 0 },
	{ "percpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 12, t_v, 4, 0 },
	{ "percpu_array", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 12, t_v, 4, 0 },
	{ "lru_hash", BPF_MAP_TYPE_LRU_HASH, 4, 12, t_v, 4, 0 },
	{ "hash without prealloc", BPF_MAP_TYPE_HASH, 4, 12, t_v, 4, BPF_F_NO_PREALLOC },
	{ "mmapable array", BPF_MAP_TYPE_ARRAY, 4, 12, t_v, 4, BPF_F_MMAPABLE },
	{ "read-only for programs", BPF_MAP_TYPE_ARRAY, 4, 12, t_v, 4, BPF_F_RDONLY_PROG },
};

/* MAP_CREATE through sys of a map of 4 elements typed by btf: an int key, a value of type
 * value_id; what sys returns */
static int create_typed(sys_fn sys, uint32_t type, uint32_t key, uint32_t value, int btf,
			uint32_t value_id, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = 4;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = T_INT;
	a.btf_value_type_id = value_id;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

/* a map of struct v (type 4 of t_v's blob: int, bpf_spin_lock, int) */
static int create_v(sys_fn sys, uint32_t type, int btf)
{
	return create_typed(sys, type, 4, 12, btf, 4, 0);
}

/* 1 for a map, else -errno (BTF_LOAD's errno - 1000 when the blob is refused) */
static int create(sys_fn sys, const struct create_case *c)
{
	int fd, btf = load_btf(sys, c->t);

	if (btf < 0)
		return btf - 1000;
	fd = create_typed(sys, c->type, c->key, c->value, btf, c->value_id, c->flags);
	fd = fd < 0 ? -errno : (close(fd), 1);
	close(btf);
	return fd;
}

/* ---- element scripts ------------------------------------------------------------------ */

enum op { UPDATE, LOOKUP, LOOKUP_DELETE, BATCH_LOOKUP, BATCH_UPDATE };

struct step {
	enum op op;
	uint32_t key;
	uint64_t flags;
	uint32_t v[3]; /* a, lock word, b */
};

struct script {
	const char *name;
	uint32_t type, value_id; /* value_id 0: a map without BTF */
	struct step steps[8];
	int n;
	const uint32_t *t;       /* type [4] of the blob (NULL: t_v) */
	uint32_t value_size;     /* 0: 12 */
};

#define S(...) { __VA_ARGS__ }
static const struct script scripts[] = {
	{ "hash: F_LOCK update, lookup",
	  BPF_MAP_TYPE_HASH, 4,
	  { S(UPDATE, 1, BPF_F_LOCK, { 1, 0, 2 }), S(LOOKUP, 1, BPF_F_LOCK),
	    S(UPDATE, 1, BPF_F_LOCK | BPF_EXIST, { 3, 9, 4 }), S(LOOKUP, 1, 0),
	    S(UPDATE, 1, BPF_F_LOCK | BPF_NOEXIST, { 5, 0, 6 }),
	    S(UPDATE, 2, BPF_F_LOCK | BPF_EXIST, { 5, 0, 6 }), S(LOOKUP, 2, BPF_F_LOCK),
	    S(UPDATE, 1, BPF_F_LOCK | 8, { 5, 0, 6 }) }, 8 },
	{ "hash: the lock word is neither written nor read",
	  BPF_MAP_TYPE_HASH, 4,
	  { S(UPDATE, 1, 0, { 1, 0xffff, 2 }), S(LOOKUP, 1, 0), S(LOOKUP, 1, BPF_F_LOCK),
	    S(LOOKUP_DELETE, 1, BPF_F_LOCK), S(LOOKUP, 1, 0),
	    S(UPDATE, 3, BPF_NOEXIST, { 7, 1, 8 }), S(LOOKUP_DELETE, 3, 0),
	    S(LOOKUP_DELETE, 3, BPF_F_LOCK | 1) }, 8 },
	{ "array: F_LOCK update, lookup",
	  BPF_MAP_TYPE_ARRAY, 4,
	  { S(UPDATE, 0, BPF_F_LOCK, { 1, 7, 2 }), S(LOOKUP, 0, BPF_F_LOCK), S(LOOKUP, 0, 0),
	    S(UPDATE, 0, BPF_F_LOCK | BPF_NOEXIST, { 1, 0, 2 }),
	    S(UPDATE, 1, BPF_F_LOCK | BPF_EXIST, { 3, 0, 4 }), S(LOOKUP, 1, BPF_F_LOCK),
	    S(UPDATE, 9, BPF_F_LOCK, { 3, 0, 4 }), S(LOOKUP, 2, BPF_F_LOCK | 1) }, 8 },
	{ "batches with elem_flags F_LOCK",
	  BPF_MAP_TYPE_HASH, 4,
	  { S(BATCH_UPDATE, 1, BPF_F_LOCK, { 1, 5, 2 }), S(BATCH_LOOKUP, 0, BPF_F_LOCK),
	    S(BATCH_LOOKUP, 0, 0), S(BATCH_LOOKUP, 0, BPF_F_LOCK | 1) }, 4 },
	{ "array batches with elem_flags F_LOCK",
	  BPF_MAP_TYPE_ARRAY, 4,
	  { S(BATCH_UPDATE, 1, BPF_F_LOCK, { 1, 5, 2 }), S(BATCH_LOOKUP, 0, BPF_F_LOCK),
	    S(BATCH_LOOKUP, 0, 0) }, 3 },
	{ "F_LOCK on maps without a lock",
	  BPF_MAP_TYPE_HASH, 0,
	  { S(UPDATE, 1, 0, { 1, 2, 3 }), S(UPDATE, 1, BPF_F_LOCK, { 1, 2, 3 }),
	    S(LOOKUP, 1, BPF_F_LOCK), S(LOOKUP_DELETE, 1, BPF_F_LOCK),
	    S(BATCH_LOOKUP, 0, BPF_F_LOCK), S(BATCH_UPDATE, 1, BPF_F_LOCK, { 1, 2, 3 }),
	    S(LOOKUP, 1, 0) }, 7 },
	/* where the kernel finds a lock: the update says (EINVAL without one) */
#define PROBE { S(UPDATE, 0, BPF_F_LOCK, { 1, 2, 3 }), S(LOOKUP, 0, 0) }, 2
	{ "lock first", BPF_MAP_TYPE_ARRAY, 4, PROBE, t_l0, 8 },
	{ "lock in a nested struct", BPF_MAP_TYPE_ARRAY, 4, PROBE, t_nest, 8 },
	{ "lock in a union", BPF_MAP_TYPE_ARRAY, 4, PROBE, t_union, 4 },
	{ "value is an array of locks", BPF_MAP_TYPE_ARRAY, 4, PROBE, t_arr, 8 },
	{ "value is the lock", BPF_MAP_TYPE_ARRAY, T_LOCK, PROBE, t_v, 4 },
	{ "value is a struct around the lock", BPF_MAP_TYPE_ARRAY, T_INNER, PROBE, t_v, 4 },
#undef PROBE
};

/* One step: its return (fds 1, else -errno) and the values it read (12 bytes each). */
static int step(sys_fn sys, int fd, const struct step *s, uint32_t out[12])
{
	union bpf_attr a;
	uint32_t keys[4] = { s->key }, next = 0;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(out, 0, 12 * sizeof(uint32_t));
	if (s->op == BATCH_LOOKUP || s->op == BATCH_UPDATE) {
		a.batch.map_fd = (uint32_t)fd;
		a.batch.keys = (uint64_t)(uintptr_t)keys;
		a.batch.values = (uint64_t)(uintptr_t)out;
		a.batch.count = s->op == BATCH_UPDATE ? 1 : 4;
		a.batch.elem_flags = s->flags;
		if (s->op == BATCH_UPDATE)
			memcpy(out, s->v, sizeof(s->v));
		else
			a.batch.out_batch = (uint64_t)(uintptr_t)&next;
		ret = sys(s->op == BATCH_UPDATE ? BPF_MAP_UPDATE_BATCH : BPF_MAP_LOOKUP_BATCH, &a,
			  sizeof(a));
		if (ret < 0 && !(errno == ENOENT && a.batch.count))
			return -errno;
		return (int)a.batch.count;
	}
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&s->key;
	a.flags = s->flags;
	if (s->op == UPDATE) {
		a.value = (uint64_t)(uintptr_t)s->v;
		ret = sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
	} else {
		a.value = (uint64_t)(uintptr_t)out;
		ret = sys(s->op == LOOKUP ? BPF_MAP_LOOKUP_ELEM : BPF_MAP_LOOKUP_AND_DELETE_ELEM,
			  &a, sizeof(a));
	}
	return ret < 0 ? -errno : ret;
}

static void run_script(int kernel, const struct script *sc)
{
	int btf[2] = { -1, -1 }, fd[2] = { -1, -1 };
	sys_fn sys[2] = { sys_bpfrt, sys_kernel };

	T_CASE(sc->name);
	for (int k = 0; k <= kernel; k++) {
		union bpf_attr a;

		btf[k] = load_btf(sys[k], sc->t ? sc->t : t_v);
		T_ASSERT(btf[k] >= 0);
		memset(&a, 0, sizeof(a));
		a.map_type = sc->type;
		a.key_size = 4;
		a.value_size = sc->value_size ? sc->value_size : 12;
		a.max_entries = 4;
		if (sc->value_id) {
			a.btf_fd = (uint32_t)btf[k];
			a.btf_key_type_id = T_INT;
			a.btf_value_type_id = sc->value_id;
		}
		fd[k] = sys[k](BPF_MAP_CREATE, &a, sizeof(a));
		T_ASSERT(fd[k] >= 0);
	}
	for (int i = 0; i < sc->n; i++) {
		uint32_t got[12], want[12];
		int r = step(sys[0], fd[0], &sc->steps[i], got);

		if (!kernel) {
			/* without the kernel: a lookup never shows the lock word */
			if (r >= 0 && sc->value_id && sc->steps[i].op != UPDATE &&
			    sc->steps[i].op != BATCH_UPDATE)
				T_EQ_INT(0, (int)got[1]);
			continue;
		}
		int w = step(sys[1], fd[1], &sc->steps[i], want);

		if (r != w || memcmp(got, want, sizeof(got)))
			T_FAIL("step %d: bpfrt %d {%u %u %u}, kernel %d {%u %u %u}", i, r, got[0],
			       got[1], got[2], w, want[0], want[1], want[2]);
		else
			T_OK();
	}
	for (int k = 0; k <= kernel; k++) {
		close(fd[k]);
		close(btf[k]);
	}
}

/* ---- programs may not touch the lock word (the verifier, as the kernel's) ----------- */

static const struct prog_case {
	const char *name;
	const char *access; /* one instruction on r0 = the value (struct v: a, lock, b) */
} progs[] = {
	{ "load a", "ldxw %r1, [%r0+0]" },
	{ "load the lock", "ldxw %r1, [%r0+4]" },
	{ "load 8 bytes over the lock", "ldxdw %r1, [%r0+0]" },
	{ "load its last byte", "ldxb %r1, [%r0+7]" },
	{ "store b", "stw [%r0+8], 1" },
	{ "store the lock", "stw [%r0+4], 0" },
	{ "atomic add on the lock", "lock add32 [%r0+4], %r1" },
};

/* PROG_LOAD of the case against a hash map of struct v: 1 loaded, else -errno; *said is
 * set when the log names the lock */
static int load_access(sys_fn sys, uint32_t type, const char *access, int *said)
{
	char text[512], err[256], log[4096] = "";
	struct bpf_insn *insns;
	union bpf_attr a;
	int btf = load_btf(sys, t_v), map = create_v(sys, BPF_MAP_TYPE_HASH, btf), fd;
	size_t n;

	snprintf(text, sizeof(text),
		 "stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call 1\nmov %%r1, 1\njeq %%r0, 0, +1\n%s\nmov %%r0, 0\nexit\n", map, access);
	if (btf < 0 || map < 0 || bpfrt_asm(text, "lock", &insns, &n, err, sizeof(err)))
		return -1000;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	fd = fd < 0 ? -errno : (close(fd), 1);
	*said = strstr(log, "bpf_spin_lock cannot be accessed directly by load/store") != NULL;
	free(insns);
	close(map);
	close(btf);
	return fd;
}

static void prog_accesses(int kernel)
{
	static const uint32_t refused[] = { BPF_PROG_TYPE_SOCKET_FILTER, BPF_PROG_TYPE_KPROBE,
					    BPF_PROG_TYPE_TRACEPOINT };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		int said = 0, ksaid = 0;
		int got = load_access(sys_bpfrt, BPF_PROG_TYPE_SCHED_CLS, progs[i].access, &said);

		T_CASE(progs[i].name);
		T_ASSERT(got == 1 || got == -EACCES);
		T_EQ_INT(got == -EACCES, said);
		if (kernel) {
			T_EQ_INT(load_access(sys_kernel, BPF_PROG_TYPE_SCHED_CLS, progs[i].access,
					     &ksaid), got);
			T_EQ_INT(ksaid, said);
		}
	}
	/* socket filters and tracing programs may not use such a map at all */
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int said, got = load_access(sys_bpfrt, refused[i], progs[0].access, &said);

		T_CASE("program type refused");
		T_EQ_INT(-EINVAL, got);
		if (kernel)
			T_EQ_INT(load_access(sys_kernel, refused[i], progs[0].access, &said), got);
	}
}

/* ---- BPF_F_LOCK excludes: writers in two processes and a thread, a locked reader ---- */

#define ROUNDS 4000

static int stress_fd;

static int rw(int cmd, uint32_t *v)
{
	union bpf_attr a;
	uint32_t key = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)stress_fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)v;
	a.flags = BPF_F_LOCK;
	return bpfrt_bpf(cmd, &a, sizeof(a));
}

static void *writer(void *arg)
{
	uintptr_t first = (uintptr_t)arg;
	long failed = 0;

	for (uint32_t i = 0; i < ROUNDS; i++) {
		uint32_t v[3] = { (uint32_t)first + i, 0, (uint32_t)first + i };

		failed += rw(BPF_MAP_UPDATE_ELEM, v) != 0;
	}
	return (void *)failed;
}

static void *reader(void *arg)
{
	long torn = 0;

	(void)arg;
	for (int i = 0; i < 2 * ROUNDS; i++) {
		uint32_t v[3];

		if (rw(BPF_MAP_LOOKUP_ELEM, v) || v[0] != v[2] || v[1])
			torn++;
	}
	return (void *)torn;
}

static void stress(uint32_t type)
{
	pthread_t w, r;
	void *wf, *rt;
	int btf = load_btf(sys_bpfrt, t_v), st;
	uint32_t v[3] = { 0, 0, 0 };
	pid_t pid;

	T_CASE(type == BPF_MAP_TYPE_HASH ? "F_LOCK stress, hash" : "F_LOCK stress, array");
	stress_fd = create_v(sys_bpfrt, type, btf);
	T_ASSERT(stress_fd >= 0);
	T_EQ_INT(0, rw(BPF_MAP_UPDATE_ELEM, v));
	pid = fork();
	if (pid == 0)
		_exit(writer((void *)(uintptr_t)1000000) ? 1 : 0);
	pthread_create(&w, NULL, writer, (void *)(uintptr_t)0);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, &wf);
	pthread_join(r, &rt);
	T_EQ_INT(pid, waitpid(pid, &st, 0));
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	T_EQ_INT(0, (int)(long)wf);
	T_EQ_INT(0, (int)(long)rt);
	close(stress_fd);
	close(btf);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A locked lookup and a locked update of key 0 with the lock word set to word first;
 * returns the update's result, the time both took in *secs. */
static int locked_ops(_Atomic uint32_t *lock, uint32_t word, double *secs)
{
	uint32_t v[3];
	double t0 = now_s();
	int err;

	atomic_store(lock, word);
	err = rw(BPF_MAP_LOOKUP_ELEM, v);
	if (!err) {
		v[0] = v[2] = 7;
		err = rw(BPF_MAP_UPDATE_ELEM, v);
	}
	*secs = now_s() - t0;
	return err ? -errno : 0;
}

/* The owner word of a child's thread: the child publishes it through a pipe and then
 * exits (dead owner) or stops until killed (live owner). */
static pid_t child_word(int stay, uint32_t *word)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		uint32_t w = brt_shm_self();

		close(p[0]);
		if (write(p[1], &w, 4) != 4)
			_exit(1);
		if (stay)
			for (;;)
				pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], word, 4) != 4)
		*word = 0;
	close(p[0]);
	return pid;
}

static void stale_words(uint32_t type)
{
	int btf = load_btf(sys_bpfrt, t_v), st;
	uint32_t key = 0, v[3] = { 1, 0, 1 }, word;
	struct brt_map *map;
	_Atomic uint32_t *lock;
	double secs;
	pid_t pid;

	T_CASE(type == BPF_MAP_TYPE_HASH ? "stale lock words, hash" : "stale lock words, array");
	stress_fd = create_v(sys_bpfrt, type, btf);
	T_ASSERT(stress_fd >= 0 && !brt_map_from_fd(stress_fd, &map));
	T_EQ_INT(0, rw(BPF_MAP_UPDATE_ELEM, v));
	lock = (_Atomic uint32_t *)(void *)((char *)map->ops->lookup(map, &key) + 4);
	/* scribbled words: the old "held" value 1, and any word that names no owner */
	T_EQ_INT(0, locked_ops(lock, 1, &secs));
	T_ASSERT(secs < 0.5);
	T_EQ_INT(0, locked_ops(lock, 0x5a5a5a5a, &secs));
	T_ASSERT(secs < 0.5);
	T_EQ_INT(0, atomic_load(lock));
	/* a holder killed while holding it */
	pid = child_word(0, &word);
	T_ASSERT(pid > 0 && word);
	T_EQ_INT(pid, waitpid(pid, &st, 0));
	T_EQ_INT(0, locked_ops(lock, word, &secs));
	T_ASSERT(secs < 0.5);
	/* a live holder that never lets go (stopped): EBUSY after about a second */
	pid = child_word(1, &word);
	T_ASSERT(pid > 0 && word);
	T_EQ_INT(-EBUSY, locked_ops(lock, word, &secs));
	T_ASSERT(secs >= 0.9 && secs < 5);
	T_EQ_INT(word, atomic_load(lock));
	kill(pid, SIGKILL);
	T_EQ_INT(pid, waitpid(pid, &st, 0));
	T_EQ_INT(0, locked_ops(lock, word, &secs));
	T_EQ_INT(0, rw(BPF_MAP_LOOKUP_ELEM, v));
	T_ASSERT(v[0] == 7 && v[1] == 0 && v[2] == 7);
	brt_map_put(map);
	close(stress_fd);
	close(btf);
}

int main(void)
{
	int kernel = kernel_available();

	if (!kernel)
		printf("kernel comparison skipped: not root or no bpf()\n");
	for (size_t i = 0; i < sizeof(creates) / sizeof(creates[0]); i++) {
		int got = create(sys_bpfrt, &creates[i]);

		T_CASE(creates[i].name);
		if (creates[i].ours)
			T_EQ_INT(creates[i].ours, got);
		else if (kernel)
			T_EQ_INT(create(sys_kernel, &creates[i]), got);
	}
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
		run_script(kernel, &scripts[i]);
	prog_accesses(kernel);
	stress(BPF_MAP_TYPE_HASH);
	stress(BPF_MAP_TYPE_ARRAY);
	stale_words(BPF_MAP_TYPE_HASH);
	stale_words(BPF_MAP_TYPE_ARRAY);
	return t_done();
}
