/* bench.c - the benchmark harness: runs the workloads of bench/progs/ natively (gcc -O2,
 * the same C compiled into this file) and as eBPF on every bpfrt engine (public API only)
 * and through BPF_PROG_TEST_RUN of an XDP program: bpfrt's bpfrt_bpf() and, when root, the
 * kernel's bpf(2) with its JIT.  The map workload (hash lookup + atomic add) needs a map
 * fd in its lddw, so bpfrt's engines run it through BPF_PROG_TEST_RUN too (the engine
 * chosen at load with BPFRT_F_ENGINE()), next to the empty program run the same way (its
 * per-run overhead).  One figure per
 * (workload, engine) per invocation, the median of BENCH_ROUNDS blocks with the engines
 * interleaved block by block; bench/run.sh runs it REPS times and aggregate.py makes the
 * table.  Output lines:
 *   RES <engine> <workload> <ns per run>     CHK <engine> <check> <value>     NOTE <text>
 *   BLK <engine> <workload> <ns per run of each block> (when there is more than one)
 * kernel-image: the kernel JIT's own machine code for the XDP version (loaded with bpf(2),
 * read back with BPF_OBJ_GET_INFO_BY_FD) called in this process like native's function,
 * with an xdp_buff's data and data_end: the one way to run the kernel's code on the
 * rotating sets (test-run takes one packet of at most a page; see kimage_load()).
 * jit-xdp: bpfrt's JIT on that same XDP build, called the same way (its xdp_md holds 32-bit
 * addresses: every engine's packets are below 4 GiB, as bpfrt's test run places them), so
 * the kernel's code and bpfrt's compete on one program.
 * Usage: bench PROGDIR [ENGINE...]   (default: native interp checked jit bpfrt-testrun kernel-jit
 * kernel-image jit-xdp)
 * Environment: BENCH_TARGET_MS (timed part of one measurement, 50; each block on the rotating
 * sets is preceded by a warm-up as long as the block), BENCH_ROUNDS (blocks it
 * is cut into, engines interleaved block by block, the median block reported; 5),
 * BENCH_WORKLOADS (names to measure, default all), BENCH_RUNS (a fixed run count instead: for
 * instruction counts; one block), BENCH_ZERO_SEED (the map workload's hash map with
 * BPF_F_ZERO_SEED: the same buckets in every process, for instruction counts).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

#include "progs/flow.h"
#include "progs/loop.h"

/* Headers older than the engine load option (bench/compare.sh builds this file against
 * older revisions' libraries for its instruction counts): their test-run loads take the
 * default engine. */
#ifndef BPFRT_F_ENGINE
#define BPFRT_F_ENGINE(engine) 0u
#endif

#define ROT_PKTS 16384 /* 2 MiB of 128-byte slots: past L2, random order */

enum wl {
	WL_EMPTY, WL_FLOW1, WL_FLOW6, WL_ROT, WL_ROT6, WL_LOOP, WL_HELPERS, WL_EMPTY_TR, WL_HASH,
	WL_COUNT
};
static const char *const wl_names[WL_COUNT] = { "empty", "flow1",   "flow6",    "rot16k", "rot6",
						"loop",  "helpers", "empty_tr", "hash" };
/* Which program each workload runs. */
static const char *const wl_prog[WL_COUNT] = { "empty", "flow",    "flow",  "flow", "flow",
					       "loop",  "helpers", "empty", "hash" };

/* Workloads bpfrt's engines run through BPF_PROG_TEST_RUN (is_testrun engines: all). */
static int via_testrun(enum wl w)
{
	return w == WL_EMPTY_TR || w == WL_HASH;
}

/* Workloads over the rotating packet sets: userspace engines only. */
static int rotating(enum wl w)
{
	return w == WL_ROT || w == WL_ROT6;
}

#define HELPER_CALLS 16
#define HASH_ENTRIES 1024

/* The helper-call workload: HELPER_CALLS bpf_get_prandom_u32() folded by xor (raw: r0 is
 * that; XDP: its low 2 bits, a valid action).  Assembly, as no C builds it call for call. */
static const char helpers_head[] = "mov %r6, 0\n";
static const char helpers_call[] = "call 7\nxor %r6, %r0\n";
static const char helpers_tail_raw[] = "mov %r0, %r6\nexit\n";
static const char helpers_tail_xdp[] = "mov %r0, %r6\nand %r0, 3\nexit\n";
/* The map workload: look key 42 up in a BPF_MAP_TYPE_HASH (u32 -> u64, HASH_ENTRIES keys
 * present) and add 1 to its value atomically; XDP_PASS. */
static const char hash_text[] =
	"stw [%r10-4], 42\nmov %r2, %r10\nadd %r2, -4\nlddw %r1, map_fd 0\ncall 1\n"
	"jeq %r0, 0, +2\nmov %r1, 1\nlock add [%r0+0], %r1\nmov %r0, 2\nexit\n";

static uint8_t flow1[64], flow6[64];
/* Where the runs find flow1's and flow6's packet: copies below 4 GiB when the kernel gives
 * such a page (jit-xdp's 32-bit ctx fields must hold the addresses; make_packets()). */
static uint8_t *flow1_at = flow1, *flow6_at = flow6;
static uint8_t *rot_pkts, *rot6_pkts;
static uint32_t rot_perm[ROT_PKTS];
static volatile uint64_t sink;
static double target_ns = 50e6; /* per engine and workload, over all rounds */
/* BENCH_ROUNDS: blocks each (engine, workload) measurement is cut into, engines
 * interleaved block by block; the figure is the median block. */
#define MAX_ROUNDS 15
static int rounds = 5;
/* BENCH_RUNS=N: every measurement is exactly N runs (test runs: one test run of N
 * repetitions), without warm-up or calibration, so an instruction counter (callgrind)
 * sees the same work on every build. */
static uint64_t fixed_runs;

/* --- native: the workloads' C, called through functions the optimiser cannot see into -- */

__attribute__((noinline, noipa)) static uint64_t native_empty(const uint8_t *p, size_t len)
{
	(void)p;
	(void)len;
	return 0;
}

__attribute__((noinline, noipa)) static uint64_t native_flow(const uint8_t *p, size_t len)
{
	return bench_flow(p, p + len);
}

__attribute__((noinline, noipa)) static uint64_t native_loop(const uint8_t *p, size_t len)
{
	return len < 8 ? 0 : bench_loop(BENCH_LD64(p));
}

/* bpf_get_prandom_u32() as bpfrt implements it: a thread's xorshift64*; out of line, as
 * a helper is. */
static _Thread_local uint64_t native_rand_state = 0x9e3779b97f4a7c15ull;

__attribute__((noinline, noipa)) static uint64_t native_prandom(void)
{
	uint64_t x = native_rand_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	native_rand_state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

__attribute__((noinline, noipa)) static uint64_t native_helpers(const uint8_t *p, size_t len)
{
	uint64_t acc = 0;

	(void)p;
	(void)len;
	for (int i = 0; i < HELPER_CALLS; i++)
		acc ^= native_prandom();
	return acc;
}

/* The map workload natively: an open-addressing table of HASH_ENTRIES u32 keys (twice as
 * many slots, multiplicative hash, linear probing), then the same lock add. */
static struct {
	uint32_t key;
	uint32_t used;
	uint64_t value;
} native_table[2 * HASH_ENTRIES];

__attribute__((noinline, noipa)) static uint64_t *native_lookup(uint32_t key)
{
	uint32_t i = (key * 0x9e3779b1u) >> 21; /* 11 bits: 2048 slots */

	for (;; i = (i + 1) & (2 * HASH_ENTRIES - 1)) {
		if (!native_table[i].used)
			return NULL;
		if (native_table[i].key == key)
			return &native_table[i].value;
	}
}

__attribute__((noinline, noipa)) static uint64_t native_hash(const uint8_t *p, size_t len)
{
	uint64_t *v = native_lookup(42);

	(void)p;
	(void)len;
	if (v)
		__atomic_fetch_add(v, 1, __ATOMIC_SEQ_CST);
	return 2;
}

static void native_hash_fill(void)
{
	for (uint32_t k = 0; k < HASH_ENTRIES; k++) {
		uint32_t i = (k * 0x9e3779b1u) >> 21;

		while (native_table[i].used)
			i = (i + 1) & (2 * HASH_ENTRIES - 1);
		native_table[i].key = k;
		native_table[i].used = 1;
	}
}

static uint64_t (*const native_fn[WL_COUNT])(const uint8_t *, size_t) = {
	[WL_EMPTY] = native_empty,     [WL_FLOW1] = native_flow, [WL_FLOW6] = native_flow,
	[WL_ROT] = native_flow,	       [WL_ROT6] = native_flow,	 [WL_LOOP] = native_loop,
	[WL_HELPERS] = native_helpers, [WL_EMPTY_TR] = NULL,	 [WL_HASH] = native_hash,
};

/* --- engines ------------------------------------------------------------------------------ */

struct engine {
	const char *name;
	enum bpfrt_engine kind; /* bpfrt engines */
	struct bpfrt_vm *vm[WL_COUNT];
	int kfd[WL_COUNT]; /* test-run engines, and via_testrun() workloads: program fds */
	int map_fd;        /* the map workload's hash map (-1 before setup) */
	/* Test-run engines: the bpf() to go through (bpf(2), or bpfrt_bpf()). */
	int (*bpf)(int cmd, union bpf_attr *attr, unsigned int size);
	int is_native;
	int is_testrun;
	int is_kimage;
	int is_xdp; /* jit-xdp: bpfrt's JIT on the XDP build, called like kernel-image */
	/* kernel-image: the code per workload (NULL: not run) and where its ctx loads
	 * xdp_buff's data and data_end */
	uint32_t (*kfn[WL_COUNT])(void *ctx);
	int16_t koff_data[WL_COUNT], koff_end[WL_COUNT];
};

/* CPU time of this thread: time spent preempted by other work on a shared machine does not
 * count, as the kernel's test-run timer also stops while the CPU is given away. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const uint8_t *pkt_at(enum wl w, uint64_t i)
{
	if (rotating(w))
		return (w == WL_ROT ? rot_pkts : rot6_pkts) +
		       (size_t)rot_perm[i & (ROT_PKTS - 1)] * BENCH_SLOT;
	return w == WL_FLOW6 ? flow6_at : flow1_at;
}

static size_t pkt_len(enum wl w)
{
	return rotating(w) ? BENCH_SLOT : sizeof(flow1);
}

/* Run workload w n times on a userspace engine; returns the sum of the results.  Never
 * inlined: callgrind counts inside it (bench/sections/45-jit-passes.sh), whichever way the
 * engine's runs are made. */
__attribute__((noinline)) static uint64_t batch(struct engine *e, enum wl w, uint64_t n)
{
	uint64_t sum = 0, r0 = 0;
	size_t len = pkt_len(w);

	if (e->is_kimage) {
		uint32_t (*kfn)(void *) = e->kfn[w];
		void *ctx[8] = { 0 };

		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = pkt_at(w, i);

			__asm__ volatile("" : "+r"(p));
			ctx[e->koff_data[w] / 8] = (void *)(uintptr_t)p;
			ctx[e->koff_end[w] / 8] = (void *)(uintptr_t)(p + len);
			sum += kfn(ctx);
		}
		return sum;
	}
	if (e->is_xdp) {
		bpfrt_vm_native_fn xfn = bpfrt_vm_native(e->vm[w]);
		uint32_t md[6] = { 0 }; /* struct xdp_md: data, data_end, ... */

		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = pkt_at(w, i);

			__asm__ volatile("" : "+r"(p));
			md[0] = (uint32_t)(uintptr_t)p;
			md[1] = (uint32_t)(uintptr_t)(p + len);
			sum += xfn(md, sizeof(md));
		}
		return sum;
	}
	if (e->is_native) {
		uint64_t (*fn)(const uint8_t *, size_t) = native_fn[w];

		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = pkt_at(w, i);

			/* Hide p from the optimiser so a pure call cannot be hoisted. */
			__asm__ volatile("" : "+r"(p));
			sum += fn(p, len);
		}
		return sum;
	}
#ifdef BPFRT_HAVE_VM_NATIVE
	/* A JIT program that needs no run context runs as a plain function, as native's C
	 * does (bpfrt_vm_run()'s checks and its stores of r0 and err cost ~30 instructions a
	 * run, which on the rotating sets leaves fewer packets' misses in flight). */
	bpfrt_vm_native_fn jfn = bpfrt_vm_native(e->vm[w]);

	if (jfn) {
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = pkt_at(w, i);

			__asm__ volatile("" : "+r"(p));
			sum += jfn((void *)(uintptr_t)p, len);
		}
		return sum;
	}
#endif
	for (uint64_t i = 0; i < n; i++) {
		bpfrt_vm_run(e->vm[w], (void *)(uintptr_t)pkt_at(w, i), len, &r0, NULL, 0);
		sum += r0;
	}
	return sum;
}

/* --- test-run engines: an XDP program through bpf(2) (no libbpf) or bpfrt_bpf() ----------- */

static int sys_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static int testrun_load(struct engine *e, const struct bpf_insn *insns, size_t n)
{
	static char log[1 << 20];
	union bpf_attr a;
	int fd, saved;
	size_t l;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t) "Dual MIT/GPL";
	/* interp, checked, jit: that engine; the test-run engines (kind 0): the default, and
	 * no bpfrt bit reaches the kernel */
	a.prog_flags = BPFRT_F_ENGINE(e->kind);
	fd = e->bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0 || errno == EPERM)
		return fd;
	/* Load again with a log: its last lines say why. */
	saved = errno;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	e->bpf(BPF_PROG_LOAD, &a, sizeof(a));
	l = strlen(log);
	printf("NOTE %s verifier: %s\n", e->name, l > 300 ? log + l - 300 : log);
	errno = saved;
	return -1;
}

/* ns per run as the test run measured it around its repeat loop; *ret gets the retval. */
static double testrun_run(struct engine *e, enum wl w, uint32_t repeat, uint32_t *ret)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)e->kfd[w];
	a.test.data_in = (uint64_t)(uintptr_t)pkt_at(w, 0);
	a.test.data_size_in = (uint32_t)pkt_len(w);
	a.test.repeat = repeat;
	if (e->bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -1;
	*ret = a.test.retval;
	return a.test.duration;
}

/* --- loading the eBPF programs -------------------------------------------------------- */

static struct bpf_insn *read_prog(const char *dir, const char *name, size_t *n)
{
	char path[4096];
	struct bpf_insn *insns;
	FILE *f;
	long size;

	snprintf(path, sizeof(path), "%s/%s.bin", dir, name);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0 || size % 8 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "bench: cannot read %s\n", path);
		exit(1);
	}
	insns = malloc((size_t)size);
	if (!insns || fread(insns, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "bench: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*n = (size_t)size / 8;
	return insns;
}

/* The workloads written in assembly (helpers, hash); the map fd patched in. */
static struct bpf_insn *asm_prog(const char *name, int xdp, int map_fd, size_t *n)
{
	char text[1024], err[256];
	struct bpf_insn *insns;

	if (!strcmp(name, "hash")) {
		snprintf(text, sizeof(text), "%s", hash_text);
	} else {
		snprintf(text, sizeof(text), "%s", helpers_head);
		for (int i = 0; i < HELPER_CALLS; i++)
			strcat(text, helpers_call);
		strcat(text, xdp ? helpers_tail_xdp : helpers_tail_raw);
	}
	if (bpfrt_asm(text, name, &insns, n, err, sizeof(err))) {
		fprintf(stderr, "bench: %s: %s\n", name, err);
		exit(1);
	}
	for (size_t i = 0; i < *n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg == 1)
			insns[i].imm = map_fd;
	return insns;
}

/* The map workload's hash map, HASH_ENTRIES keys present, through the engine's bpf(). */
static int hash_map(struct engine *e)
{
	union bpf_attr a;

	if (e->map_fd >= 0)
		return e->map_fd;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = HASH_ENTRIES;
	/* a random seed gives every process other bucket chains: other instruction counts */
	if (getenv("BENCH_ZERO_SEED"))
		a.map_flags = BPF_F_ZERO_SEED;
	e->map_fd = e->bpf(BPF_MAP_CREATE, &a, sizeof(a));
	for (uint32_t k = 0; e->map_fd >= 0 && k < HASH_ENTRIES; k++) {
		uint64_t v = 0;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)e->map_fd;
		a.key = (uint64_t)(uintptr_t)&k;
		a.value = (uint64_t)(uintptr_t)&v;
		e->bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
	}
	return e->map_fd;
}

/* Returns 0 when the engine can run every workload, else prints a NOTE and returns -1. */
/* kernel-image: load the XDP version of workload w into the kernel and map a copy of the
 * kernel JIT's code for it here.  Only for programs that call nothing (no helper, map or
 * kfunc: their calls would go to kernel addresses), reading only ctx->data and
 * ctx->data_end; the verifier rewrote those loads to xdp_buff's fields, whose offsets are
 * read back from the translated program.  The one change to the kernel's code: its
 * return, `jmp __x86_return_thunk` (the kernel's return-stack mitigation, a kernel
 * address), becomes `ret`: a return without the thunk, in the kernel's favour.  Anything
 * else unexpected (another layout, a call, a jump out of the image) and the workload is
 * not run. */
static int kimage_load(struct engine *e, enum wl w, const struct bpf_insn *insns, size_t n)
{
	struct bpf_prog_info info;
	struct bpf_insn *x = NULL;
	uint8_t *img = NULL;
	union bpf_attr a;
	int fd = testrun_load(e, insns, n), ok = 0;
	uint32_t len, nx;

	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) || !info.jited_prog_len ||
	    info.xlated_prog_len != n * sizeof(*insns))
		goto out;
	len = info.jited_prog_len;
	nx = info.xlated_prog_len;
	img = malloc(len);
	x = malloc(nx);
	if (!img || !x)
		goto out;
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = len;
	info.jited_prog_insns = (uint64_t)(uintptr_t)img;
	info.xlated_prog_len = nx;
	info.xlated_prog_insns = (uint64_t)(uintptr_t)x;
	a.info.info_len = sizeof(info);
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)))
		goto out;
	e->koff_data[w] = e->koff_end[w] = -1;
	for (size_t i = 0; i < n; i++) {
		uint8_t cls = BPF_CLASS(insns[i].code);

		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && !insns[i].src_reg) {
			i++; /* a constant; its second slot */
			continue;
		}
		/* a call, a map or function address, a packet load: kernel addresses */
		if (insns[i].code == (BPF_JMP | BPF_CALL) ||
		    (cls == BPF_LD && (insns[i].code != (BPF_LD | BPF_IMM | BPF_DW) ||
				       insns[i].src_reg != 0)))
			goto out;
		/* the ctx loads (r1 untouched before them, as clang emits them) */
		if (insns[i].code == (BPF_LDX | BPF_MEM | BPF_W) && insns[i].src_reg == 1 &&
		    x[i].code == (BPF_LDX | BPF_MEM | BPF_DW) && x[i].off >= 0 && x[i].off < 64 &&
		    !(x[i].off % 8)) {
			if (insns[i].off == offsetof(struct xdp_md, data))
				e->koff_data[w] = x[i].off;
			else if (insns[i].off == offsetof(struct xdp_md, data_end))
				e->koff_end[w] = x[i].off;
			else
				goto out;
		}
	}
	/* the epilogue's last instruction: ret, or jmp rel32 to the return thunk */
	if (len >= 5 && img[len - 5] == 0xe9)
		memcpy(img + len - 5, "\xc3\xcc\xcc\xcc\xcc", 5);
	else if (img[len - 1] != 0xc3)
		goto out;
	{
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			goto out;
		memcpy(m, img, len);
		if (mprotect(m, len, PROT_READ | PROT_EXEC)) {
			munmap(m, len);
			goto out;
		}
		e->kfn[w] = (uint32_t (*)(void *))m;
		ok = 1;
	}
out:
	free(img);
	free(x);
	close(fd);
	return ok ? 0 : -1;
}

static int engine_setup(struct engine *e, const char *dir)
{
	char err[512];

	if (e->is_native) {
		native_hash_fill();
		return 0;
	}
	e->map_fd = -1;
	if (!e->bpf)
		e->bpf = bpfrt_bpf;
	if (e->is_xdp) {
		/* the same workloads as kernel-image; the packets must be below 4 GiB */
		if ((uintptr_t)rot_pkts >> 32 || (uintptr_t)rot6_pkts >> 32 ||
		    (uintptr_t)flow1_at >> 32) {
			printf("NOTE %s: no packet memory below 4 GiB\n", e->name);
			return -1;
		}
		for (int w = 0; w < WL_COUNT; w++) {
			char name[64];
			struct bpf_insn *insns;
			size_t n;
			BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_JIT);

			if (w == WL_HASH || w == WL_HELPERS || w == WL_EMPTY_TR)
				continue;
			snprintf(name, sizeof(name), "xdp_%s", wl_prog[w]);
			insns = read_prog(dir, name, &n);
			if (bpfrt_vm_load(insns, n, &o, &e->vm[w], err, sizeof(err)) ||
			    !bpfrt_vm_native(e->vm[w])) {
				printf("NOTE %s: %s not run: %s\n", e->name, wl_names[w], err);
				free(insns);
				return -1;
			}
			free(insns);
		}
		return 0;
	}
	if (e->is_kimage) {
		int any = 0;

		for (int w = 0; w < WL_COUNT; w++) {
			char name[64];
			struct bpf_insn *insns;
			size_t n;

			if (w == WL_HASH || w == WL_HELPERS || w == WL_EMPTY_TR)
				continue; /* maps, helpers: kernel addresses; test-run overhead */
			snprintf(name, sizeof(name), "xdp_%s", wl_prog[w]);
			insns = read_prog(dir, name, &n);
			if (kimage_load(e, (enum wl)w, insns, n))
				printf("NOTE %s: %s not run (no copy of the kernel's code)\n", e->name,
				       wl_names[w]);
			else
				any = 1;
			free(insns);
		}
		return any ? 0 : -1;
	}
	for (int w = 0; w < WL_COUNT; w++) {
		char name[64];
		struct bpf_insn *insns;
		size_t n;
		int rc, tr = e->is_testrun || via_testrun((enum wl)w);

		snprintf(name, sizeof(name), "%s_%s", tr ? "xdp" : "raw", wl_prog[w]);
		if (w == WL_HASH || w == WL_HELPERS)
			insns = asm_prog(wl_prog[w], tr, w == WL_HASH ? hash_map(e) : -1, &n);
		else
			insns = read_prog(dir, name, &n);
		if (tr) {
			/* bpfrt's engines run it through test-run: the engine is chosen at load
			 * (testrun_load()'s prog_flags) */
			/* The rotating sets would need maps in the kernel: not measured there. */
			e->kfd[w] = rotating((enum wl)w) ? -1 : testrun_load(e, insns, n);
			rc = !rotating((enum wl)w) && e->kfd[w] < 0 ? -errno : 0;
			snprintf(err, sizeof(err), "%s", strerror(-rc));
		} else {
			BPFRT_OPTS(bpfrt_vm_opts, o, .engine = e->kind);
			rc = bpfrt_vm_load(insns, n, &o, &e->vm[w], err, sizeof(err));
		}
		free(insns);
		if (rc) {
			printf("NOTE %s: %s not available: %s (%d)\n", e->name, name, err, rc);
			return -1;
		}
	}
	return 0;
}

/* --- measuring ------------------------------------------------------------------------ */

static double measure(struct engine *e, enum wl w)
{
	uint64_t n, t0, t;
	uint32_t ret;

	if ((e->is_kimage && !e->kfn[w]) || (e->is_xdp && !e->vm[w]))
		return -1;
	if (!e->is_kimage && !e->is_xdp &&
	    (e->is_testrun || (!e->is_native && via_testrun(w)))) {
		double d;

		if (rotating(w))
			return -1;
		if (fixed_runs) /* one test run of exactly that many repetitions */
			return testrun_run(e, w, (uint32_t)fixed_runs, &ret);
		d = testrun_run(e, w, 1000, &ret);
		if (d < 0)
			return -1;
		n = (uint64_t)(target_ns / (d > 1 ? d : 1));
		n = n < 1000 ? 1000 : n > 100000000 ? 100000000 : n;
		/* The harness's clock around the test run, not the run's own duration: that
		 * figure is whole ns (a u32 average), too coarse for a 2 ns net row; the
		 * syscall's entry and exit, spread over n runs, add < 0.01 ns. */
		t0 = now_ns();
		if (testrun_run(e, w, (uint32_t)n, &ret) < 0)
			return -1;
		return (double)(now_ns() - t0) / (double)n;
	}
	if (e->is_native && w == WL_EMPTY_TR)
		return -1;
	if (fixed_runs) {
		t0 = now_ns();
		sink += batch(e, w, fixed_runs);
		return (double)(now_ns() - t0) / (double)fixed_runs;
	}
	/* Warm-up on the rotating sets: passes over the set for as long as the timed block
	 * (at least one), so every engine is timed in the steady state it keeps on a stream
	 * of packets.  One pass was not enough: the engine before in the round may leave
	 * the set cold (checked, at ~400 ns a run, touches it ~16x less often than a JIT,
	 * and the shared VM's other traffic evicts it meanwhile), and the passes after it
	 * start at up to 1.9x the steady figure, converging over ~10 passes (~4 ms); the jit
	 * column, always right after checked in the rotation, carried that (#17). */
	if (rotating(w)) {
		uint64_t w0 = now_ns();

		do
			sink += batch(e, w, ROT_PKTS);
		while ((double)(now_ns() - w0) < target_ns);
	}
	t0 = now_ns();
	sink += batch(e, w, 64);
	t = now_ns() - t0;
	n = (uint64_t)(target_ns * 64 / (double)(t ? t : 1));
	n = n < 64 ? 64 : n > 200000000 ? 200000000 : n;
	t0 = now_ns();
	sink += batch(e, w, n);
	return (double)(now_ns() - t0) / (double)n;
}

/* One run of workload w's program on packet p (userspace engines). */
static uint64_t run_one(struct engine *e, enum wl w, const uint8_t *p, size_t len)
{
	uint64_t r0 = 0;

	if (e->is_xdp) {
		uint32_t md[6] = { (uint32_t)(uintptr_t)p, (uint32_t)(uintptr_t)(p + len) };

		return bpfrt_vm_native(e->vm[w])(md, sizeof(md));
	}
	if (e->is_kimage) {
		void *ctx[8] = { 0 };

		ctx[e->koff_data[w] / 8] = (void *)(uintptr_t)p;
		ctx[e->koff_end[w] / 8] = (void *)(uintptr_t)(p + len);
		return e->kfn[w](ctx);
	}
	if (e->is_native)
		return native_fn[w](p, len);
	if (bpfrt_vm_run(e->vm[w], (void *)(uintptr_t)p, len, &r0, NULL, 0))
		printf("NOTE %s: %s run failed\n", e->name, wl_names[w]);
	return r0;
}

/* The value of key 42 after n runs of the map workload: n. */
static void check_hash(struct engine *e, uint32_t n)
{
	uint64_t v = 0;
	uint32_t key = 42, ret = 0;
	union bpf_attr a;

	if (e->is_native) {
		for (uint32_t i = 0; i < n; i++)
			native_hash(flow1, sizeof(flow1));
		v = *native_lookup(42);
		*native_lookup(42) = 0;
	} else {
		if (testrun_run(e, WL_HASH, n, &ret) < 0)
			return;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)e->map_fd;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&v;
		e->bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a));
	}
	printf("CHK %s hash_count %llu\n", e->name, (unsigned long long)v);
}

/* Results every engine must agree on: flow1's and flow6's hashes, the loop value, the
 * rotating sets' sums, the map workload's count.  (The helper workload is random.) */
static void cross_check(struct engine *e)
{
	static const enum wl single[] = { WL_FLOW1, WL_FLOW6, WL_LOOP };
	uint32_t ret = 0;

	if (!e->is_kimage && !e->is_xdp)
		check_hash(e, 1000);
	for (size_t k = 0; k < sizeof(single) / sizeof(single[0]); k++) {
		enum wl w = single[k];

		if ((e->is_kimage && !e->kfn[w]) || (e->is_xdp && !e->vm[w]))
			continue;

		if (e->is_testrun) {
			if (testrun_run(e, w, 1, &ret) >= 0)
				printf("CHK %s %s %u\n", e->name, wl_names[w], ret);
		} else {
			printf("CHK %s %s %llu\n", e->name, wl_names[w],
			       (unsigned long long)run_one(e, w, pkt_at(w, 0), pkt_len(w)));
		}
	}
	if (e->is_testrun)
		return;
	for (enum wl w = WL_ROT; w <= WL_ROT6; w++) {
		uint64_t sum = 0;

		if ((e->is_kimage && !e->kfn[w]) || (e->is_xdp && !e->vm[w]))
			continue;
		for (uint32_t i = 0; i < ROT_PKTS; i++)
			sum += run_one(e, w, (w == WL_ROT ? rot_pkts : rot6_pkts) +
					     (size_t)i * BENCH_SLOT, BENCH_SLOT);
		printf("CHK %s %s_sum %llu\n", e->name, wl_names[w], (unsigned long long)sum);
	}
}

/* --- packets -------------------------------------------------------------------------- */

static uint64_t rng = 0x853c49e6748fea9bull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet + IPv4 (v6 = 0) or IPv6 (+ a hop-by-hop header when hbh) + TCP or UDP. */
static void make_pkt(uint8_t *p, int v6, int hbh, int tcp, int random)
{
	uint8_t proto = tcp ? 6 : 17, *l4;

	memcpy(p, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	if (!v6) {
		put16(p + 12, 0x0800);
		p[14] = 0x45;
		put16(p + 16, 50);
		p[22] = 64;
		p[23] = proto;
		memcpy(p + 26, "\x0a\0\0\x01\x0a\0\0\x02", 8);
		l4 = p + 34;
	} else {
		put16(p + 12, 0x86dd);
		p[14] = 0x60;
		put16(p + 18, 40);
		p[20] = hbh ? 0 : proto;
		p[21] = 64;
		p[22] = 0x20;
		p[38] = 0x20;
		p[37] = 1;
		p[53] = 2;
		l4 = p + 54;
		if (hbh) {
			l4[0] = proto;
			l4 += 8;
		}
	}
	put16(l4, 12345);
	put16(l4 + 2, 80);
	if (random) {
		for (int i = 0; i < 4; i++) {
			uint32_t r = rnd();

			memcpy(v6 ? p + 26 + 4 * i : p + 26 + 4 * (i & 1), &r, 4);
		}
		put16(l4, (uint16_t)rnd());
		put16(l4 + 2, (uint16_t)rnd());
	}
}

static void make_packets(void)
{
	size_t size = (size_t)ROT_PKTS * BENCH_SLOT;

	make_pkt(flow1, 0, 0, 1, 0);
	make_pkt(flow6, 1, 0, 0, 0);
	/* below 4 GiB for every engine (jit-xdp's xdp_md holds 32-bit addresses, as bpfrt's
	 * test run places its packets); elsewhere if the kernel has no room there */
	rot_pkts = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			-1, 0);
	if (rot_pkts == MAP_FAILED)
		rot_pkts = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rot6_pkts = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			 -1, 0);
	if (rot6_pkts == MAP_FAILED)
		rot6_pkts = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	{
		uint8_t *lo = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

		if (lo != MAP_FAILED) {
			memcpy(lo, flow1, sizeof(flow1));
			memcpy(lo + 2048, flow6, sizeof(flow6));
			flow1_at = lo;
			flow6_at = lo + 2048;
		}
	}
	if (rot_pkts == MAP_FAILED || rot6_pkts == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* 4 KiB pages, like the kernel's packet buffers: no TLB advantage for userspace. */
	madvise(rot_pkts, size, MADV_NOHUGEPAGE);
	madvise(rot6_pkts, size, MADV_NOHUGEPAGE);
	for (uint32_t i = 0; i < ROT_PKTS; i++) {
		uint32_t r = rnd();

		make_pkt(rot_pkts + (size_t)i * BENCH_SLOT, r & 1, (r & 6) == 0, r & 8, 1);
		make_pkt(rot6_pkts + (size_t)i * BENCH_SLOT, 1, 0, 0, 1);
		rot_perm[i] = i;
	}
	for (uint32_t i = ROT_PKTS - 1; i > 0; i--) {
		uint32_t j = rnd() % (i + 1), t = rot_perm[i];

		rot_perm[i] = rot_perm[j];
		rot_perm[j] = t;
	}
}

/* Median of v[0..n-1] (sorted in place); negative (not measured) when any is. */
static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	if (v[0] < 0)
		return -1;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* BENCH_WORKLOADS="flow1 loop": measure only these (NULL: all). */
static int wl_wanted(const char *only, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = only; p && *p; p += strcspn(p, " ")) {
		p += strspn(p, " ");
		if (!strncmp(p, name, len) && (p[len] == ' ' || p[len] == '\0'))
			return 1;
	}
	return !only;
}

int main(int argc, char **argv)
{
	struct engine all[] = {
		{ .name = "native", .is_native = 1 },
		{ .name = "interp", .kind = BPFRT_ENGINE_INTERP },
		{ .name = "checked", .kind = BPFRT_ENGINE_CHECKED },
		{ .name = "jit", .kind = BPFRT_ENGINE_JIT },
		{ .name = "bpfrt-testrun", .is_testrun = 1, .bpf = bpfrt_bpf },
		{ .name = "kernel-jit", .is_testrun = 1, .bpf = sys_bpf },
		{ .name = "kernel-image", .is_kimage = 1, .bpf = sys_bpf },
		{ .name = "jit-xdp", .kind = BPFRT_ENGINE_JIT, .is_xdp = 1 },
	};
	struct engine *use[12];
	const char *only;
	int nuse = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: bench PROGDIR [ENGINE...]\n");
		return 2;
	}
	if (getenv("BENCH_TARGET_MS"))
		target_ns = atof(getenv("BENCH_TARGET_MS")) * 1e6;
	if (getenv("BENCH_RUNS"))
		fixed_runs = strtoull(getenv("BENCH_RUNS"), NULL, 10);
	only = getenv("BENCH_WORKLOADS");
	make_packets();
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int wanted = argc == 2;

		for (int a = 2; a < argc; a++)
			wanted |= !strcmp(argv[a], all[i].name);
		if (wanted && !engine_setup(&all[i], argv[1])) {
			use[nuse++] = &all[i];
			cross_check(&all[i]);
		}
	}
	if (getenv("BENCH_ROUNDS"))
		rounds = atoi(getenv("BENCH_ROUNDS"));
	/* a fixed run count is one block per engine: the count is the measurement */
	rounds = fixed_runs || rounds < 1 ? 1 : rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
	target_ns /= rounds;
	for (int w = 0; w < WL_COUNT; w++) {
		double ns[12][MAX_ROUNDS];

		if (!wl_wanted(only, wl_names[w]))
			continue;
		/* Round r runs every engine once, starting with engine r: a few ms of
		 * interference (the other vCPU's work, a neighbour's cache traffic) lands on
		 * one engine's block of one round, and the median over the rounds drops it,
		 * where one block per engine put it whole into that engine's figure. */
		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < nuse; k++) {
				int i = (k + r) % nuse;

				ns[i][r] = measure(use[i], (enum wl)w);
			}
		for (int i = 0; i < nuse; i++) {
			double m = median(ns[i], rounds);

			if (m >= 0) {
				printf("RES %s %s %.2f\n", use[i]->name, wl_names[w], m);
				/* every block's figure: aggregate.py pools them over the
				 * repetitions to tell a bimodal row (issue #17 item 4) */
				if (rounds > 1) {
					printf("BLK %s %s", use[i]->name, wl_names[w]);
					for (int r = 0; r < rounds; r++)
						printf(" %.2f", ns[i][r]);
					printf("\n");
				}
			}
			fflush(stdout);
		}
	}
	return 0;
}
