/* verifier_bench.c - how long verification takes: bpfrt's verifier alone (brt_verify) and
 * bpfrt's whole BPF_PROG_LOAD against the kernel's BPF_PROG_LOAD (log_level 0; it also
 * JIT-compiles, as bpfrt's load does) and the kernel's own "verification time" (log_level
 * BPF_LOG_STATS), on the flow dissector, a 4,000-instruction straight-line program, a
 * program with 200 conditions and a bounded loop; plus the peak memory of one brt_verify
 * (ru_maxrss growth in a fresh child).  Prints a markdown section.
 * Usage: verifier_bench PROGDIR REPS   (PROGDIR holds xdp_flow.bin and xdp_loop.bin)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

#include "gen_progs.h"
#include "verifier/verifier.h"

#define MAXREPS 64
#define NPROGS 5

struct prog {
	const char *name;
	const char *what;
	uint32_t type;
	struct bpf_insn *insns;
	size_t n;
};

enum eng { E_VERIFY, E_BPFRT_LOAD, E_KERNEL_LOAD, E_KERNEL_VTIME, E_COUNT };

static double now_ns(void)
{
	struct timespec ts;

	/* CPU time of this thread, system time of the bpf() syscall included: other
	 * processes on a loaded machine do not count */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int load_bin(struct prog *p, const char *dir, const char *file)
{
	char path[512];
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p->n = (size_t)len / 8;
	p->insns = malloc((size_t)len);
	if (!p->insns || fread(p->insns, 8, p->n, f) != p->n) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static void prog_attr(const struct prog *p, union bpf_attr *a, uint32_t log_level, char *log,
		      uint32_t log_size)
{
	memset(a, 0, sizeof(*a));
	a->prog_type = p->type;
	a->insns = (uint64_t)(uintptr_t)p->insns;
	a->insn_cnt = (uint32_t)p->n;
	a->license = (uint64_t)(uintptr_t)"GPL";
	a->log_level = log_level;
	a->log_buf = (uint64_t)(uintptr_t)log;
	a->log_size = log_size;
}

/* one run of engine e on p: ns, or -1 when it failed */
static double run_once(const struct prog *p, enum eng e, uint32_t *processed)
{
	static char log[1 << 16];
	union bpf_attr a;
	double t0, t1;
	int fd;

	switch (e) {
	case E_VERIFY: {
		struct brt_verify_opts o = { .prog_type = p->type, .gpl = 1 };
		struct brt_verify_result res;
		int err;

		t0 = now_ns();
		err = brt_verify(p->insns, p->n, &o, &res);
		t1 = now_ns();
		*processed = res.insn_processed;
		return err ? -1 : t1 - t0;
	}
	case E_BPFRT_LOAD:
		prog_attr(p, &a, 0, NULL, 0);
		a.prog_flags = BPFRT_F_ENGINE(BPFRT_ENGINE_JIT); /* both loads JIT-compile */
		t0 = now_ns();
		fd = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
		t1 = now_ns();
		if (fd < 0)
			return -1;
		close(fd);
		return t1 - t0;
	case E_KERNEL_LOAD:
		prog_attr(p, &a, 0, NULL, 0);
		t0 = now_ns();
		fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
		t1 = now_ns();
		if (fd < 0)
			return -1;
		close(fd);
		return t1 - t0;
	default: { /* the kernel's own measurement of its verifier */
		const char *v, *q;

		prog_attr(p, &a, 4, log, sizeof(log));
		log[0] = 0;
		fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
		if (fd < 0)
			return -1;
		close(fd);
		v = strstr(log, "verification time ");
		q = strstr(log, "processed ");
		if (q)
			*processed = (uint32_t)strtoul(q + 10, NULL, 10);
		return v ? strtod(v + 18, NULL) * 1e3 : -1;
	}
	}
}

/* mean ns of one run over a batch of at least 20 ms (and 3 runs) */
static double measure(const struct prog *p, enum eng e, uint32_t *processed)
{
	double total = 0, t;
	int runs = 0;

	if (e == E_KERNEL_VTIME) { /* already a per-load figure: median of 5 */
		double v[5];

		for (int i = 0; i < 5; i++)
			if ((v[i] = run_once(p, e, processed)) < 0)
				return -1;
		for (int i = 0; i < 5; i++)
			for (int j = i + 1; j < 5; j++)
				if (v[j] < v[i]) {
					t = v[i];
					v[i] = v[j];
					v[j] = t;
				}
		return v[2];
	}
	while (runs < 3 || total < 20e6) {
		t = run_once(p, e, processed);
		if (t < 0)
			return -1;
		total += t;
		runs++;
	}
	return total / runs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void fmt_time(char *buf, size_t len, double ns)
{
	if (ns < 0)
		snprintf(buf, len, "n/a");
	else if (ns >= 1e6)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.1f µs", ns / 1e3);
}

/* "median [min–max]" of r reps */
static void cell(char *buf, size_t len, const double *v, int r)
{
	double s[MAXREPS];
	char a[32], b[32], c[32];

	memcpy(s, v, (size_t)r * sizeof(*s));
	qsort(s, (size_t)r, sizeof(*s), cmp_double);
	if (s[0] < 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	fmt_time(a, sizeof(a), s[r / 2]);
	fmt_time(b, sizeof(b), s[0]);
	fmt_time(c, sizeof(c), s[r - 1]);
	snprintf(buf, len, "%s [%s–%s]", a, b, c);
}

static double median(const double *v, int r)
{
	double s[MAXREPS];

	memcpy(s, v, (size_t)r * sizeof(*s));
	qsort(s, (size_t)r, sizeof(*s), cmp_double);
	return s[r / 2];
}

/* ru_maxrss growth (KiB) of a fresh child across one brt_verify of p */
static long peak_kib(const struct prog *p)
{
	int fds[2], st;
	long kib = -1;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct brt_verify_opts o = { .prog_type = p->type, .gpl = 1 };
		struct rusage before, after;
		long d;

		close(fds[0]);
		getrusage(RUSAGE_SELF, &before);
		brt_verify(p->insns, p->n, &o, NULL);
		getrusage(RUSAGE_SELF, &after);
		d = after.ru_maxrss - before.ru_maxrss;
		if (write(fds[1], &d, sizeof(d)) != sizeof(d))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &kib, sizeof(kib)) != sizeof(kib))
		kib = -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	return kib;
}

int main(int argc, char **argv)
{
	struct prog progs[NPROGS] = {
		{ "flow dissector", "bench/progs xdp_flow", BPF_PROG_TYPE_XDP, NULL, 0 },
		{ "straight-line", "4,000 insns, no jump", BPF_PROG_TYPE_SOCKET_FILTER, NULL, 0 },
		{ "branchy", "200 conditions on context fields", BPF_PROG_TYPE_SOCKET_FILTER, NULL,
		  0 },
		{ "bounded loop", "bench/progs xdp_loop, 1,000 rounds", BPF_PROG_TYPE_XDP, NULL, 0 },
		{ "state explosion", "64 stack stores + 499,000-round loop, tests/verifier/test_scale",
		  BPF_PROG_TYPE_SOCKET_FILTER, NULL, 0 },
	};
	static double t[NPROGS][E_COUNT][MAXREPS];
	uint32_t proc[NPROGS][E_COUNT] = { { 0 } };
	long peak[NPROGS];
	int reps = argc > 2 ? atoi(argv[2]) : 5, kernel = geteuid() == 0;

	if (argc < 2) {
		fprintf(stderr, "usage: verifier_bench PROGDIR [REPS]\n");
		return 2;
	}
	if (reps < 1)
		reps = 1;
	if (reps > MAXREPS)
		reps = MAXREPS;
	if (load_bin(&progs[0], argv[1], "xdp_flow.bin") ||
	    load_bin(&progs[3], argv[1], "xdp_loop.bin")) {
		fprintf(stderr, "verifier_bench: cannot read %s/xdp_{flow,loop}.bin\n", argv[1]);
		return 1;
	}
	progs[1].insns = bench_gen_straight(&progs[1].n);
	progs[2].insns = bench_gen_branchy(&progs[2].n);
	progs[4].insns = bench_gen_explosion(&progs[4].n);
	if (getenv("VB_PROFILE")) { /* VB_PROFILE=N: brt_verify program N for 2 s of CPU (perf) */
		int p = atoi(getenv("VB_PROFILE")) % NPROGS;
		uint32_t pr;
		double end = now_ns() + 2e9;

		while (now_ns() < end)
			run_once(&progs[p], E_VERIFY, &pr);
		return 0;
	}
	for (int p = 0; p < NPROGS; p++) /* before anything else grows this process's heap */
		peak[p] = peak_kib(&progs[p]);
	for (int r = 0; r < reps; r++)
		for (int p = 0; p < NPROGS; p++)
			for (int e = 0; e < E_COUNT; e++)
				t[p][e][r] = (e >= E_KERNEL_LOAD && !kernel)
						     ? -1
						     : measure(&progs[p], (enum eng)e, &proc[p][e]);
	printf("## Verifier: verification time (bpfrt vs the kernel's BPF_PROG_LOAD)\n\n");
	printf("Median [min–max] over %d repetitions, each the mean of a batch of >= 20 ms. "
	       "*bpfrt verify*: brt_verify() alone. *bpfrt load* / *kernel load*: the whole "
	       "BPF_PROG_LOAD with log_level 0 (both also JIT-compile). *kernel verifier*: the "
	       "kernel's own `verification time` (BPF_LOG_STATS), median of 5 loads - wall clock, "
	       "so it grows when the machine is loaded; every other column is the thread's CPU "
	       "time (system time of bpf(2) included). Ratio: kernel "
	       "load / bpfrt load (> 1: bpfrt faster). Peak memory: ru_maxrss growth of a fresh "
	       "process across one brt_verify().\n\n", reps);
	printf("| program | insns | processed (bpfrt / kernel) | bpfrt verify | bpfrt load | "
	       "kernel load | kernel verifier | kernel load / bpfrt load | bpfrt peak memory |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int p = 0; p < NPROGS; p++) {
		char c[E_COUNT][128], ratio[32] = "n/a", mem[32] = "n/a";
		double bl = median(t[p][E_BPFRT_LOAD], reps), kl = median(t[p][E_KERNEL_LOAD], reps);

		for (int e = 0; e < E_COUNT; e++)
			cell(c[e], sizeof(c[e]), t[p][e], reps);
		if (bl > 0 && kl > 0)
			snprintf(ratio, sizeof(ratio), "%.1f×", kl / bl);
		if (peak[p] >= 0)
			snprintf(mem, sizeof(mem), "%ld KiB", peak[p]);
		printf("| %s (%s) | %zu | %u / %u | %s | %s | %s | %s | %s | %s |\n", progs[p].name,
		       progs[p].what, progs[p].n, proc[p][E_VERIFY], proc[p][E_KERNEL_VTIME], c[0],
		       c[1], c[2], c[3], ratio, mem);
	}
	if (!kernel)
		printf("\nKernel columns: n/a (not root).\n");
	for (int p = 0; p < NPROGS; p++)
		free(progs[p].insns);
	return 0;
}
