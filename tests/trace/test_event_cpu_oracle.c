/* test_event_cpu_oracle.c - a program run for a kernel record sees the CPU the record was
 * taken on, as in the kernel, not the CPU of bpfrt's runner thread: bpf_get_smp_processor_id,
 * the per-CPU array's and per-CPU hash's copy (the JIT's inlined per-CPU lookup too).
 *
 * 1. A tracepoint program on syscalls:sys_enter_getppid counts this process's calls in
 *    arr[bpf_get_smp_processor_id()], in the per-CPU array's slot 0 and in the per-CPU
 *    hash's key 0; the test thread pinned to each CPU in turn makes a different number of
 *    calls there (CALLS + 100 * i on the i-th): each CPU's counts must be its calls,
 *    exactly, in the kernel and in bpfrt on each engine.
 * 2. A perf_event program on a CPU clock opened on one CPU only (bpftrace's profile
 *    probe): every sample of the event on CPU c must count in c's slots, none elsewhere.
 * 3. A raw tracepoint program's test run with BPF_F_TEST_RUN_ON_CPU: the kernel runs it
 *    on that CPU, -ENXIO past the last; bpfrt's run is for that CPU.
 * The runner thread runs on whatever CPU the scheduler gives it, so both fail when the
 * program is answered the runner's CPU (bpftrace's `profile:hz:99 { @[cpu] = count(); }`
 * split 89/11 where the kernel's is 49/48, session 21).  Needs root and two CPUs.
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include "trace_test.h"

#define TP_NAME "syscalls:sys_enter_getppid"
#define CALLS 300
#define MAXCPU 64

/* One side: bpfrt's API, or the kernel through bpf(2) and perf_event_open(). */
struct side {
	const char *name;
	int kernel;
	uint32_t engine_flags; /* bpfrt: BPFRT_F_ENGINE() */
	int arr, pcpu, phash;  /* the maps */
};

static uint32_t ncpus; /* possible CPUs: per-CPU values hold this many copies */
static int cpus[MAXCPU], ncpu_use; /* the CPUs this process may run on */

static int kbpf(int cmd, union bpf_attr *a)
{
	int r = (int)syscall(__NR_bpf, cmd, a, sizeof(*a));

	return r < 0 ? -errno : r;
}

static int map_create(const struct side *s, uint32_t type, uint32_t max)
{
	union bpf_attr a;

	if (!s->kernel)
		return bpfrt_map_create((enum bpf_map_type)type, "m", 4, 8, max, NULL);
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = max;
	return kbpf(BPF_MAP_CREATE, &a);
}

static int map_op(const struct side *s, int cmd, int fd, uint32_t key, void *val)
{
	union bpf_attr a;

	if (!s->kernel)
		return cmd == BPF_MAP_LOOKUP_ELEM ? bpfrt_map_lookup_elem(fd, &key, val)
						  : bpfrt_map_update_elem(fd, &key, val, 0);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)val;
	return kbpf(cmd, &a);
}

/* Fresh zeroed maps; key 0 of the per-CPU hash exists, so its lookup finds it. */
static int make_maps(struct side *s)
{
	static uint64_t zero[MAXCPU * 2];

	s->arr = map_create(s, BPF_MAP_TYPE_ARRAY, ncpus);
	s->pcpu = map_create(s, BPF_MAP_TYPE_PERCPU_ARRAY, 1);
	s->phash = map_create(s, BPF_MAP_TYPE_PERCPU_HASH, 4);
	if (s->arr < 0 || s->pcpu < 0 || s->phash < 0)
		return -1;
	return map_op(s, BPF_MAP_UPDATE_ELEM, s->phash, 0, zero);
}

static void close_maps(struct side *s)
{
	close(s->arr);
	close(s->pcpu);
	close(s->phash);
}

/* The counting program: tgid filter (pid > 0) or none; arr[cpu] += 1, pcpu[0] += 1,
 * phash[0] += 1. */
static int load_prog(const struct side *s, uint32_t type, int pid)
{
	static char log[65536];
	char text[2048];
	struct bpf_insn *insns;
	char err[256];
	size_t n;
	char filter[64] = "";
	int fd;

	if (pid > 0)
		snprintf(filter, sizeof(filter), "jne %%r0, %d, out\n", pid);
	snprintf(text, sizeof(text),
		 "call bpf_get_current_pid_tgid\nrsh %%r0, 32\n%s"
		 "call bpf_get_smp_processor_id\nstxw [%%r10-4], %%r0\n"
		 "mov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\ncall 1\n"
		 "jeq %%r0, 0, +2\nmov %%r1, 1\nlock add [%%r0+0], %%r1\n"
		 "stw [%%r10-8], 0\nmov %%r2, %%r10\nadd %%r2, -8\nlddw %%r1, map_fd %d\ncall 1\n"
		 "jeq %%r0, 0, +2\nmov %%r1, 1\nlock add [%%r0+0], %%r1\n"
		 "mov %%r2, %%r10\nadd %%r2, -8\nlddw %%r1, map_fd %d\ncall 1\n"
		 "jeq %%r0, 0, +2\nmov %%r1, 1\nlock add [%%r0+0], %%r1\n"
		 "out:\nmov %%r0, 0\nexit\n",
		 filter, s->arr, s->pcpu, s->phash);
	if (!s->kernel) {
		BPFRT_OPTS(bpfrt_prog_load_opts, o, .prog_flags = s->engine_flags, .log_level = 1,
			   .log_size = sizeof(log), .log_buf = log);

		if (bpfrt_asm(text, "cpu.s", &insns, &n, err, sizeof(err)))
			return -EINVAL;
		fd = bpfrt_prog_load((enum bpf_prog_type)type, "t", "GPL", insns, n, &o);
		free(insns);
	} else {
		fd = tt_kload(type, "GPL", text, log, sizeof(log));
	}
	if (fd < 0)
		fprintf(stderr, "%s: load: %d\n%s\n", s->name, fd, log);
	return fd;
}

static int perf_open(struct perf_event_attr *pa, int cpu)
{
	int fd = (int)syscall(__NR_perf_event_open, pa, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The kernel's attach: the event on each CPU in cpu_list (n of them), the program set on
 * each; fds[] receives them.  bpfrt's: its API, one link (a tracepoint on every CPU). */
static int attach(const struct side *s, int prog, struct perf_event_attr *pa, const char *tp,
		  const int *cpu_list, int n, int *fds)
{
	if (!s->kernel) {
		if (tp) {
			fds[0] = bpfrt_tracepoint_attach(prog, tp, NULL);
		} else {
			BPFRT_OPTS(bpfrt_perf_event_opts, o, .cpu_plus1 = (uint32_t)cpu_list[0] + 1);

			fds[0] = bpfrt_perf_event_attach(prog, pa, sizeof(*pa), -1, &o);
		}
		return fds[0] < 0 ? fds[0] : 1;
	}
	for (int i = 0; i < n; i++) {
		fds[i] = perf_open(pa, cpu_list[i]);
		if (fds[i] < 0 || ioctl(fds[i], PERF_EVENT_IOC_SET_BPF, prog) ||
		    ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0)) {
			int e = fds[i] < 0 ? fds[i] : -errno;

			while (i >= 0)
				if (fds[i--] >= 0)
					close(fds[i + 1]);
			return e;
		}
	}
	return n;
}

static void detach(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* Each CPU's three counts: arr[c], pcpu's copy c, phash's copy c. */
static void counts(const struct side *s, uint64_t out[][3])
{
	uint64_t v[MAXCPU * 2];

	for (uint32_t c = 0; c < ncpus && c < MAXCPU; c++) {
		out[c][0] = 0;
		map_op(s, BPF_MAP_LOOKUP_ELEM, s->arr, c, &out[c][0]);
	}
	memset(v, 0, sizeof(v));
	map_op(s, BPF_MAP_LOOKUP_ELEM, s->pcpu, 0, v);
	for (uint32_t c = 0; c < ncpus && c < MAXCPU; c++)
		out[c][1] = v[c];
	memset(v, 0, sizeof(v));
	map_op(s, BPF_MAP_LOOKUP_ELEM, s->phash, 0, v);
	for (uint32_t c = 0; c < ncpus && c < MAXCPU; c++)
		out[c][2] = v[c];
}

static int pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* 1: the tracepoint, the calls made on each CPU in turn. */
static void tracepoint_case(struct side *s, uint32_t tp_id, const cpu_set_t *saved)
{
	struct perf_event_attr pa = { .size = sizeof(pa), .type = PERF_TYPE_TRACEPOINT,
				      .config = tp_id, .sample_period = 1,
				      .sample_type = PERF_SAMPLE_RAW, .wakeup_events = 1 };
	uint64_t got[MAXCPU][3], want = 0, total = 0;
	int prog, fds[MAXCPU], n;

	T_ASSERT(make_maps(s) == 0);
	prog = load_prog(s, BPF_PROG_TYPE_TRACEPOINT, (int)getpid());
	T_ASSERT(prog >= 0);
	/* the kernel's tracepoint programs are the tracepoint's, run on a hit on any CPU
	 * once one event has them (a second event's SET_BPF is EEXIST), as bpftrace opens it */
	n = attach(s, prog, &pa, TP_NAME, cpus, 1, fds);
	if (n <= 0)
		fprintf(stderr, "%s: attach: %s\n", s->name, strerror(-n));
	T_ASSERT(n > 0);
	for (int i = 0; i < ncpu_use; i++) {
		T_ASSERT(pin(cpus[i]) == 0);
		for (int k = 0; k < CALLS + 100 * i; k++)
			syscall(SYS_getppid);
		want += CALLS + 100 * (uint64_t)i;
	}
	sched_setaffinity(0, sizeof(*saved), saved);
	/* bpfrt runs the records after they happened: wait for all of them */
	for (int t = 0; t < 500 && total < want; t++) {
		counts(s, got);
		total = 0;
		for (uint32_t c = 0; c < ncpus && c < MAXCPU; c++)
			total += got[c][0];
		if (total < want)
			usleep(20000);
	}
	usleep(50000);
	counts(s, got);
	detach(fds, n);
	for (int i = 0; i < ncpu_use; i++)
		for (int m = 0; m < 3; m++) {
			if (got[cpus[i]][m] != CALLS + 100 * (uint64_t)i)
				fprintf(stderr, "%s: cpu %d map %d: %llu, want %d\n", s->name,
					cpus[i], m, (unsigned long long)got[cpus[i]][m],
					CALLS + 100 * i);
			T_EQ_U64(CALLS + 100 * (uint64_t)i, got[cpus[i]][m]);
		}
	close(prog);
	close_maps(s);
}

/* 2: a CPU clock opened on CPU c only, sampling every 200 us for 100 ms. */
static void cpu_clock_case(struct side *s, int cpu)
{
	struct perf_event_attr pa = { .size = sizeof(pa), .type = PERF_TYPE_SOFTWARE,
				      .config = PERF_COUNT_SW_CPU_CLOCK,
				      .sample_period = 200000 };
	uint64_t got[MAXCPU][3];
	int prog, fd, n;

	T_ASSERT(make_maps(s) == 0);
	prog = load_prog(s, BPF_PROG_TYPE_PERF_EVENT, 0);
	T_ASSERT(prog >= 0);
	n = attach(s, prog, &pa, NULL, &cpu, 1, &fd);
	T_ASSERT(n == 1);
	usleep(100000);
	detach(&fd, n);
	usleep(100000); /* bpfrt: the records read before the detach still run */
	counts(s, got);
	for (uint32_t c = 0; c < ncpus && c < MAXCPU; c++)
		for (int m = 0; m < 3; m++) {
			if ((int)c == cpu)
				T_ASSERT(got[c][m] > 0);
			else
				T_EQ_U64(0, got[c][m]);
		}
	/* one sample, one run: the three counts agree */
	T_EQ_U64(got[cpu][0], got[cpu][1]);
	T_EQ_U64(got[cpu][0], got[cpu][2]);
	close(prog);
	close_maps(s);
}

/* 3: BPF_PROG_TEST_RUN of a raw tracepoint program that returns
 * bpf_get_smp_processor_id() * 1000 + the per-CPU array's copy after adding 1 to it, on
 * each CPU this process may use and past the last. */
static void test_run_on_cpu(struct side *s)
{
	char text[1024];
	int prog;

	T_ASSERT(make_maps(s) == 0);
	snprintf(text, sizeof(text),
		 "stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call 1\nmov %%r6, 0\njeq %%r0, 0, +4\nldxdw %%r6, [%%r0+0]\nadd %%r6, 1\n"
		 "stxdw [%%r0+0], %%r6\nmov %%r0, 0\ncall bpf_get_smp_processor_id\n"
		 "mul %%r0, 1000\nadd %%r0, %%r6\nexit\n",
		 s->pcpu);
	if (s->kernel) {
		prog = tt_kload(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", text, NULL, 0);
	} else {
		BPFRT_OPTS(bpfrt_prog_load_opts, o, .prog_flags = s->engine_flags);
		struct bpf_insn *insns;
		char err[256];
		size_t n;

		prog = -EINVAL;
		if (!bpfrt_asm(text, "on_cpu.s", &insns, &n, err, sizeof(err))) {
			prog = bpfrt_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "t", "GPL", insns, n,
					       &o);
			free(insns);
		}
	}
	T_ASSERT(prog >= 0);
	for (int i = 0; i <= ncpu_use; i++) {
		uint32_t cpu = i < ncpu_use ? (uint32_t)cpus[i] : ncpus;
		union bpf_attr a;
		int r;

		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)prog;
		a.test.flags = BPF_F_TEST_RUN_ON_CPU;
		a.test.cpu = cpu;
		for (int k = 0; k < 2; k++) { /* twice: the copy counts each CPU's runs */
			if (s->kernel)
				r = kbpf(BPF_PROG_TEST_RUN, &a);
			else
				r = bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
			if (cpu == ncpus) {
				T_EQ_INT(-ENXIO, r);
			} else {
				T_EQ_INT(0, r);
				T_EQ_U64((uint64_t)cpu * 1000 + (uint64_t)k + 1, a.test.retval);
			}
		}
	}
	/* bpf_prog_test_run_raw_tp() checks no other flag (an XDP flag, an unknown bit:
	 * the run as without), only a CPU without BPF_F_TEST_RUN_ON_CPU (-EINVAL) */
	for (int i = 0; i < 3; i++) {
		static const uint32_t flags[] = { BPF_F_TEST_XDP_LIVE_FRAMES, 0x80000000u, 0 };
		union bpf_attr a;
		int r;

		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)prog;
		a.test.flags = flags[i] | (i == 1 ? BPF_F_TEST_RUN_ON_CPU : 0);
		a.test.cpu = i == 2;
		r = s->kernel ? kbpf(BPF_PROG_TEST_RUN, &a) :
				bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
		T_EQ_INT(i == 2 ? -EINVAL : 0, r);
	}
	close(prog);
	close_maps(s);
}

int main(void)
{
	struct side sides[] = {
		{ .name = "kernel", .kernel = 1 },
		{ .name = "bpfrt interp", .engine_flags = BPFRT_F_ENGINE(BPFRT_ENGINE_INTERP) },
#ifdef BPFRT_HAVE_JIT /* a build without it (the switch preset) runs the engines it has */
		{ .name = "bpfrt jit", .engine_flags = BPFRT_F_ENGINE(BPFRT_ENGINE_JIT) },
#endif
	};
	cpu_set_t saved;
	uint32_t size = 0, id = 0;
	static char what[160];

	tt_private_fs("event-cpu");
	if (geteuid() != 0)
		T_SKIP("needs root for perf_event_open of tracepoints and CPU clocks");
	if (bpfrt_tracepoint_fields(TP_NAME, NULL, 0, &size, &id) < 0)
		T_SKIP("no tracefs or no %s tracepoint", TP_NAME);
	ncpus = (uint32_t)bpfrt_num_possible_cpus();
	if (sched_getaffinity(0, sizeof(saved), &saved))
		T_SKIP("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < MAXCPU && c < (int)ncpus; c++)
		if (CPU_ISSET(c, &saved))
			cpus[ncpu_use++] = c;
	if (ncpu_use < 2 || ncpus > MAXCPU)
		T_SKIP("needs 2 to %d CPUs to run on (%d of %u)", MAXCPU, ncpu_use, ncpus);
	for (size_t k = 0; k < sizeof(sides) / sizeof(sides[0]); k++) {
		snprintf(what, sizeof(what), "%s: tracepoint records count on their CPU",
			 sides[k].name);
		T_CASE(what);
		tracepoint_case(&sides[k], id, &saved);
		for (int i = 0; i < ncpu_use; i++) {
			snprintf(what, sizeof(what), "%s: CPU clock on CPU %d counts there only",
				 sides[k].name, cpus[i]);
			T_CASE(what);
			cpu_clock_case(&sides[k], cpus[i]);
		}
		snprintf(what, sizeof(what), "%s: test run with BPF_F_TEST_RUN_ON_CPU",
			 sides[k].name);
		T_CASE(what);
		test_run_on_cpu(&sides[k]);
	}
	tt_cleanup_fs();
	return t_done();
}
