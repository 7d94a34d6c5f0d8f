/* maps.c - the map benchmark of bench/sections/20-maps.sh: one repetition of every
 * measurement, printed as "RES <name> <value>" lines for the section script to aggregate.
 *   user-space lookup / update on a 100k-entry hash map (4-byte key, 8-byte value):
 *     kernel bpf(2), bpfrt fd wrappers, bpfrt map handles; random keys over the whole map
 *     (memory-bound) and 64 hot keys (cache-resident: the path's own cost); ns/op, thread
 *     CPU time
 *   in-program lookup + atomic add through BPF_PROG_TEST_RUN (XDP, repeat), bpfrt and the
 *     kernel JIT, each net of its own empty program's test-run cost; ns/run
 *   throughput of lookups + updates from 1 and 2 threads (kernel bpf(2), bpfrt handles);
 *     ops/s, wall clock
 *   the memory floor of random keys: a dependent pointer chase over as many bytes as the
 *     bpfrt map holds (one cache-missing access per step); ns/step
 * Usage: maps [ms per measurement (default 200) [user|prog|mt]].  Kernel rows need root.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

#define ENTRIES 100000
#define HOT 64

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static double budget_ns = 200e6;

static int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int map_create(sys_fn sys)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = ENTRIES;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

static int elem(sys_fn sys, int cmd, int fd, uint32_t *key, uint64_t *val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)val;
	return sys(cmd, &a, sizeof(a));
}

static int fill(sys_fn sys, int fd)
{
	uint64_t v = 0;

	for (uint32_t k = 0; k < ENTRIES; k++)
		if (sys == sys_kernel ? elem(sys, BPF_MAP_UPDATE_ELEM, fd, &k, &v) :
					bpfrt_map_update_elem(fd, &k, &v, BPF_ANY))
			return -1;
	return 0;
}

/* ---- user-space operations ------------------------------------------------------------ */

enum path { KERNEL, FDAPI, HANDLE };
static const char *const path_names[] = { "kernel", "bpfrt_fd", "bpfrt_handle" };

struct target {
	enum path path;
	int fd;
	struct bpfrt_map_handle *h;
};

static inline uint32_t next_key(uint32_t *seed, uint32_t range)
{
	*seed = *seed * 1103515245 + 12345;
	return (*seed >> 8) % range;
}

static int do_op(const struct target *t, int update, uint32_t key, uint64_t *v)
{
	switch (t->path) {
	case KERNEL:
		return elem(sys_kernel, update ? BPF_MAP_UPDATE_ELEM : BPF_MAP_LOOKUP_ELEM, t->fd,
			    &key, v);
	case FDAPI:
		return update ? bpfrt_map_update_elem(t->fd, &key, v, BPF_ANY) :
				bpfrt_map_lookup_elem(t->fd, &key, v);
	default:
		return update ? bpfrt_map_handle_update(t->h, &key, v, BPF_ANY) :
				bpfrt_map_handle_lookup(t->h, &key, v);
	}
}

/* ns per operation (thread CPU time), running for about budget_ns. */
static double time_ops(const struct target *t, int update, uint32_t range)
{
	uint32_t seed = 12345;
	uint64_t v = 1;
	long n = 0, batch = 1000;
	double t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), el;

	do {
		for (long i = 0; i < batch; i++) {
			if (update)
				v = (uint64_t)n + i;
			if (do_op(t, update, next_key(&seed, range), &v))
				return -1;
		}
		n += batch;
		el = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	} while (el < budget_ns);
	return el / n;
}

/* ns per step of a random cyclic pointer chase through bytes/64 cache lines: what one
 * memory access costs when the data is as big as the map (no two steps on one line). */
static double chase(size_t bytes)
{
	size_t n = bytes / 64, *next = aligned_alloc(64, n * 64);
	uint32_t *perm = malloc(n * sizeof(*perm)), seed = 99;
	volatile size_t sink;
	double t0, el;
	long steps = 0;
	size_t x;

	if (!next || !perm) {
		free(next);
		free(perm);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = next_key(&seed, (uint32_t)(i + 1));
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		next[perm[i] * 8] = perm[(i + 1) % n] * 8;
	x = perm[0] * 8;
	t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	do {
		for (int i = 0; i < 10000; i++)
			x = next[x];
		steps += 10000;
		el = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	} while (el < budget_ns);
	sink = x;
	(void)sink;
	free(next);
	free(perm);
	return el / steps;
}

static void user_ops(void)
{
	for (int p = KERNEL; p <= HANDLE; p++) {
		struct target t = { .path = p };
		sys_fn sys = p == KERNEL ? sys_kernel : bpfrt_bpf;

		t.fd = map_create(sys);
		if (t.fd < 0 || fill(sys, t.fd)) {
			printf("NOTE %s: no map (%s)\n", path_names[p], strerror(errno));
			continue;
		}
		if (p == HANDLE)
			t.h = bpfrt_map_handle_open(t.fd);
		printf("RES lookup_random_%s %.1f\n", path_names[p], time_ops(&t, 0, ENTRIES));
		printf("RES update_random_%s %.1f\n", path_names[p], time_ops(&t, 1, ENTRIES));
		printf("RES lookup_hot_%s %.1f\n", path_names[p], time_ops(&t, 0, HOT));
		printf("RES update_hot_%s %.1f\n", path_names[p], time_ops(&t, 1, HOT));
		bpfrt_map_handle_close(t.h);
		close(t.fd);
	}
	/* the bpfrt map: 131072 elements of 32 bytes, buckets of 8, allocation words of 4 */
	printf("RES chase_map_bytes %.1f\n", chase(131072 * (32 + 8 + 4)));
}

/* ---- throughput from 1 and 2 threads --------------------------------------------------- */

struct thr {
	const struct target *t;
	uint32_t seed;
	long ops;
	double wall_ns;
};

static void *thr_run(void *arg)
{
	struct thr *th = arg;
	uint64_t v = 1;
	double t0 = now_ns(CLOCK_MONOTONIC);

	do {
		for (int i = 0; i < 1000; i++)
			do_op(th->t, i & 1, next_key(&th->seed, ENTRIES), &v);
		th->ops += 1000;
	} while (now_ns(CLOCK_MONOTONIC) - t0 < th->wall_ns);
	return NULL;
}

static double throughput(const struct target *t, int nthreads)
{
	struct thr th[2];
	pthread_t id[2];
	long ops = 0;
	double t0 = now_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < nthreads; i++) {
		th[i] = (struct thr){ .t = t, .seed = 77u + (uint32_t)i, .wall_ns = budget_ns };
		pthread_create(&id[i], NULL, thr_run, &th[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(id[i], NULL);
		ops += th[i].ops;
	}
	return ops / ((now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
}

static void scaling(void)
{
	for (int p = KERNEL; p <= HANDLE; p += 2) {
		struct target t = { .path = p };
		sys_fn sys = p == KERNEL ? sys_kernel : bpfrt_bpf;

		t.fd = map_create(sys);
		if (t.fd < 0 || fill(sys, t.fd))
			continue;
		if (p == HANDLE)
			t.h = bpfrt_map_handle_open(t.fd);
		printf("RES mt1_%s %.0f\n", path_names[p], throughput(&t, 1));
		printf("RES mt2_%s %.0f\n", path_names[p], throughput(&t, 2));
		bpfrt_map_handle_close(t.h);
		close(t.fd);
	}
}

/* ---- in-program lookup + atomic add through BPF_PROG_TEST_RUN ------------------------- */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						.off = (o), .imm = (i) })

static int prog_load(sys_fn sys, int map_fd)
{
	struct bpf_insn counter[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 42),           /* key 42 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),   /* lock *(u64 *)r0 += 1 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 2),           /* XDP_PASS */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct bpf_insn empty[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 2),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uint64_t)(uintptr_t)(map_fd >= 0 ? counter : empty);
	a.insn_cnt = map_fd >= 0 ? sizeof(counter) / sizeof(counter[0]) : 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

/* Mean ns per run reported by the test run itself (attr.test.duration). */
static double test_run(sys_fn sys, int prog)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	uint32_t repeat = 200000;
	double best = -1;

	/* several runs: keep the fastest, as the kernel's duration includes preemption */
	for (int i = 0; i < 5; i++) {
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)prog;
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.repeat = repeat;
		if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
			return -1;
		if (best < 0 || a.test.duration < best)
			best = a.test.duration;
	}
	return best;
}

static void in_program(void)
{
	static const char *const names[] = { "kernel", "bpfrt" };

	for (int e = 0; e < 2; e++) {
		sys_fn sys = e ? bpfrt_bpf : sys_kernel;
		int map = map_create(sys), prog, empty;
		uint32_t key = 42;
		uint64_t v = 0;
		double full, base;

		if (map < 0 || fill(sys, map)) {
			printf("NOTE %s: no map (%s)\n", names[e], strerror(errno));
			continue;
		}
		prog = prog_load(sys, map);
		empty = prog_load(sys, -1);
		if (prog < 0 || empty < 0) {
			printf("NOTE %s: program not loaded (%s)\n", names[e], strerror(errno));
			close(map);
			continue;
		}
		full = test_run(sys, prog);
		base = test_run(sys, empty);
		/* the adds must all have landed */
		elem(sys, BPF_MAP_LOOKUP_ELEM, map, &key, &v);
		if (v != 5 * 200000ull)
			printf("NOTE %s: counter %llu, expected %llu\n", names[e],
			       (unsigned long long)v, 5 * 200000ull);
		printf("RES prog_full_%s %.1f\n", names[e], full);
		printf("RES prog_empty_%s %.1f\n", names[e], base);
		printf("RES prog_net_%s %.1f\n", names[e], full - base);
		close(prog);
		close(empty);
		close(map);
	}
}

int main(int argc, char **argv)
{
	const char *only = argc > 2 ? argv[2] : "";

	if (argc > 1)
		budget_ns = atof(argv[1]) * 1e6;
	if (!*only || !strcmp(only, "user"))
		user_ops();
	if (!*only || !strcmp(only, "prog"))
		in_program();
	if (!*only || !strcmp(only, "mt"))
		scaling();
	return 0;
}
