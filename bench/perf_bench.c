/* perf_bench.c - cost of one bpf_perf_event_output() (16 bytes, BPF_F_CURRENT_CPU) from a
 * socket filter, in bpfrt (JIT) and in the kernel (BPF_PROG_TEST_RUN), with a wake-up per
 * sample (wakeup_events 1, libbpf's default) and one per run (wakeup_events = CALLS), next
 * to bpf_ringbuf_output() of the same 16 bytes and a loop that calls nothing.  The program
 * makes CALLS calls per run; the consumer empties the rings between runs (not timed).
 * Prints "RES <name> <ns per call>" lines for bench/sections/80-perf.sh.
 *
 *   perf_bench RUNS    (pin it to one CPU: the kernel writes to that CPU's event)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

#define CALLS 64
#define PAGES 64

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* kind 0: nothing, 1: perf_event_output, 2: ringbuf_output; CALLS times. */
static int load(sys_fn sys, int kind, int map_fd)
{
	struct bpf_insn p[] = {
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_7, 0, 0, CALLS },
		{ BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -16, 1 },
		{ BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 2 },
		/* loop: */
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0 },
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map_fd },
		{ 0, 0, 0, 0, 0 },
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_3, 0, 0, -1 },
		{ 0, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_10, 0, 0 },
		{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, -16 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, 16 },
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_perf_event_output },
		{ BPF_ALU64 | BPF_SUB | BPF_K, BPF_REG_7, 0, 0, 1 },
		{ BPF_JMP | BPF_JNE | BPF_K, BPF_REG_7, 0, -11, 0 },
		/* r0: the last call's result, which must be 0 (run_once() checks) */
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_0, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	union bpf_attr a;

	if (kind == 0) {
		/* the loop without the call: r0 = 0 stands in for it */
		p[12] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0 };
		p[5] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0 };
		p[6] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0 };
	} else if (kind == 2) {
		/* ringbuf_output(map, data, size, flags) */
		p[4] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0 };
		p[5].dst_reg = BPF_REG_1;
		p[7] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0 };
		p[8] = (struct bpf_insn){ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -16 };
		p[9] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 16 };
		p[10] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0 };
		p[11] = (struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, 0 };
		p[12].imm = BPF_FUNC_ringbuf_output;
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = sizeof(p) / sizeof(p[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	if (sys == bpfrt_bpf) /* bpfrt's side runs on its JIT, as the kernel's on its own */
		a.prog_flags = BPFRT_F_ENGINE(BPFRT_ENGINE_JIT);
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One timed run; the kernel's own duration for kernel programs. */
static double run_once(sys_fn sys, int prog, int is_kernel)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	double t0;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	t0 = now_ns();
	if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) || a.test.retval) {
		fprintf(stderr, "perf_bench: test run: %s / r0 %d\n", strerror(errno),
			(int)a.test.retval);
		exit(1);
	}
	return is_kernel ? (double)a.test.duration : now_ns() - t0;
}

static void ignore_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	(void)ctx, (void)cpu, (void)data, (void)size;
}

static int drop_record(void *arg, void *data, size_t size)
{
	(void)arg, (void)data, (void)size;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* (median run time - median time of the loop without calls) / CALLS, after a warm-up
 * (the first runs compile the program). */
static void measure(const char *name, sys_fn sys, int prog, int base, int is_kernel, int runs,
		    void (*drain)(void *), void *arg)
{
	double *t = calloc((size_t)runs, sizeof(*t)), *b = calloc((size_t)runs, sizeof(*b));

	if (!t || !b)
		exit(1);
	for (int i = 0; i < 20; i++) {
		run_once(sys, prog, is_kernel);
		drain(arg);
		run_once(sys, base, is_kernel);
	}
	for (int i = 0; i < runs; i++) {
		t[i] = run_once(sys, prog, is_kernel);
		drain(arg);
		b[i] = run_once(sys, base, is_kernel);
	}
	printf("RES %s %.2f\n", name, (median(t, runs) - median(b, runs)) / CALLS);
	free(t);
	free(b);
}

static void drain_pb(void *arg)
{
	bpfrt_perf_buffer_consume(arg);
}

static void drain_rb(void *arg)
{
	bpfrt_ringbuf_consume(*(int *)arg, drop_record, NULL);
}

/* The kernel's BPF output event's ring: move data_tail to data_head. */
static void drain_kernel_perf(void *arg)
{
	struct perf_event_mmap_page *m = arg;

	__atomic_store_n(&m->data_tail, __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static void drain_kernel_rb(void *arg)
{
	uint64_t **pos = arg; /* consumer_pos, producer_pos */

	__atomic_store_n(pos[0], __atomic_load_n(pos[1], __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

static void bench_bpfrt(int runs)
{
	int perf = bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "pb", 4, 4,
				    (uint32_t)bpfrt_num_possible_cpus(), NULL);
	int rb = bpfrt_map_create(BPF_MAP_TYPE_RINGBUF, "rb", 0, 0, PAGES * 4096, NULL);
	struct bpfrt_perf_buffer *pb = bpfrt_perf_buffer_new(perf, PAGES, ignore_sample, NULL,
							     NULL, NULL);
	int p_perf = load(bpfrt_bpf, 1, perf), p_rb = load(bpfrt_bpf, 2, rb);
	int p_base = load(bpfrt_bpf, 0, perf);

	if (!pb || p_perf < 0 || p_rb < 0 || p_base < 0) {
		fprintf(stderr, "perf_bench: bpfrt setup: %s\n", strerror(errno));
		exit(1);
	}
	measure("bpfrt-perf", bpfrt_bpf, p_perf, p_base, 0, runs, drain_pb, pb);
	bpfrt_perf_buffer_free(pb);
	{
		BPFRT_OPTS(bpfrt_perf_buffer_opts, po, .wakeup_events = CALLS);

		pb = bpfrt_perf_buffer_new(perf, PAGES, ignore_sample, NULL, NULL, &po);
		if (!pb)
			exit(1);
		measure("bpfrt-perf-batched", bpfrt_bpf, p_perf, p_base, 0, runs, drain_pb, pb);
		bpfrt_perf_buffer_free(pb);
	}
	measure("bpfrt-ringbuf", bpfrt_bpf, p_rb, p_base, 0, runs, drain_rb, &rb);
}

static void bench_kernel(int runs, uint32_t wakeup_events, int with_rb)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_BPF_OUTPUT,
					.sample_type = PERF_SAMPLE_RAW, .sample_period = 1,
					.wakeup_events = wakeup_events };
	union bpf_attr a;
	int cpu = sched_getcpu(), ev, perf, rb, p_perf, p_rb, p_base;
	uint32_t key = (uint32_t)cpu;
	long pg = sysconf(_SC_PAGESIZE);
	void *ring, *cons, *prod;
	uint64_t *pos[2];

	ev = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	a.key_size = a.value_size = 4;
	a.max_entries = (uint32_t)bpfrt_num_possible_cpus();
	perf = sys_kernel(BPF_MAP_CREATE, &a, sizeof(a));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_RINGBUF;
	a.max_entries = PAGES * 4096;
	rb = sys_kernel(BPF_MAP_CREATE, &a, sizeof(a));
	if (ev < 0 || perf < 0 || rb < 0) {
		printf("RES kernel-none 0\n");
		return;
	}
	ioctl(ev, PERF_EVENT_IOC_ENABLE, 0);
	ring = mmap(NULL, (size_t)(PAGES + 1) * (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ev, 0);
	cons = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, rb, 0);
	prod = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, rb, pg);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)perf;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&ev;
	if (ring == MAP_FAILED || cons == MAP_FAILED || prod == MAP_FAILED ||
	    sys_kernel(BPF_MAP_UPDATE_ELEM, &a, sizeof(a))) {
		printf("RES kernel-none 0\n");
		return;
	}
	pos[0] = cons;
	pos[1] = prod;
	p_perf = load(sys_kernel, 1, perf);
	p_rb = load(sys_kernel, 2, rb);
	p_base = load(sys_kernel, 0, perf);
	if (p_perf < 0 || p_rb < 0 || p_base < 0) {
		printf("RES kernel-none 0\n");
		return;
	}
	measure(wakeup_events > 1 ? "kernel-perf-batched" : "kernel-perf", sys_kernel, p_perf,
		p_base, 1, runs, drain_kernel_perf, ring);
	if (with_rb)
		measure("kernel-ringbuf", sys_kernel, p_rb, p_base, 1, runs, drain_kernel_rb, pos);
	close(p_perf);
	close(p_rb);
	close(p_base);
	munmap(ring, (size_t)(PAGES + 1) * (size_t)pg);
	munmap(cons, (size_t)pg);
	munmap(prod, (size_t)pg);
	close(ev);
	close(perf);
	close(rb);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 2000;

	bench_bpfrt(runs);
	if (geteuid() == 0) {
		bench_kernel(runs, 1, 1);
		bench_kernel(runs, CALLS, 0);
	}
	return 0;
}
