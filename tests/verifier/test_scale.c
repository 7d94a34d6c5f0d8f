/* test_scale.c - the verifier's cost on a program that makes many states (#16): 64 stack
 * stores, then a loop of 499,000 rounds (68 insns, 998,066 processed, just under the 1M
 * limit).  Every round is a distinct state (the counter decides the branch), so what is
 * stored, and how, bounds time and memory.  Linux 6.18 stores 24,951 states here (one per
 * 20 jumps once a state of the loop is on the path); bpfrt must store the same number,
 * accept with the same processed count, and grow its peak RSS by less than 50 MiB (the
 * stored states share their unchanged stacks).  As root, the kernel's counts are read from
 * its log and compared too.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases/case.h"
#include "harness.h"
#include "verifier/verifier.h"
#include "../../bench/verifier/gen_progs.h"

#define ROUNDS BENCH_EXPLOSION_ROUNDS
#define KERNEL_STATES 24951 /* Linux 6.18's total_states on this program */

struct figures {
	int err;
	uint32_t processed, total_states, peak_states;
	long rss_kib;
	double secs;
};

/* the program bench section 30-verifier times too (bench/verifier/gen_progs.h) */
static size_t build(struct bpf_insn *p)
{
	size_t n = 0;
	struct bpf_insn *g = bench_gen_explosion(&n);

	if (!g)
		return 0;
	memcpy(p, g, n * sizeof(*p));
	free(g);
	return n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* brt_verify in a fresh child: its ru_maxrss growth is this verification's alone */
static int run_bpfrt(const struct bpf_insn *p, size_t n, struct figures *f)
{
	int fds[2], st;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct brt_verify_opts o = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER, .gpl = 1 };
		struct brt_verify_result r;
		struct rusage before, after;
		struct figures out;
		double t0;

		close(fds[0]);
		getrusage(RUSAGE_SELF, &before);
		t0 = now();
		out.err = brt_verify(p, n, &o, &r);
		out.secs = now() - t0;
		getrusage(RUSAGE_SELF, &after);
		out.processed = r.insn_processed;
		out.total_states = r.total_states;
		out.peak_states = r.peak_states;
		out.rss_kib = after.ru_maxrss - before.ru_maxrss;
		_exit(write(fds[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], f, sizeof(*f)) != sizeof(*f)) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	waitpid(pid, &st, 0);
	return 0;
}

static uint32_t stat_after(const char *log, const char *key)
{
	const char *q = strstr(log, key);

	return q ? (uint32_t)strtoul(q + strlen(key), NULL, 10) : 0;
}

int main(void)
{
	struct bpf_insn p[70];
	size_t n = build(p);
	struct figures f;

	T_CASE("bpfrt");
	T_ASSERT(!run_bpfrt(p, n, &f));
	printf("bpfrt: err %d, processed %u, total_states %u, peak_states %u, %.2f s, peak RSS "
	       "+%ld KiB\n", f.err, f.processed, f.total_states, f.peak_states, f.secs, f.rss_kib);
	T_EQ_INT(0, f.err);
	T_EQ_INT(2 * ROUNDS + 66, (int)f.processed);
	T_EQ_INT(KERNEL_STATES, (int)f.total_states);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* the sanitizers' shadow memory and quarantine make RSS no measure of the verifier */
	printf("peak RSS bound not checked under a sanitizer\n");
#else
	T_ASSERT(f.rss_kib < 50 * 1024);
#endif
	if (geteuid() == 0) {
		static char log[4096];
		union bpf_attr a;
		int fd;
		double t0;

		T_CASE("kernel");
		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = (uint64_t)(uintptr_t)p;
		a.insn_cnt = (uint32_t)n;
		a.license = (uint64_t)(uintptr_t)"GPL";
		a.log_level = 4; /* statistics only */
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = sizeof(log);
		t0 = now();
		fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
		printf("kernel: fd %d, %.2f s, %s", fd, now() - t0, log);
		T_ASSERT(fd >= 0);
		if (fd >= 0)
			close(fd);
		T_EQ_INT((int)stat_after(log, "processed "), (int)f.processed);
		T_EQ_INT((int)stat_after(log, "total_states "), (int)f.total_states);
	} else {
		printf("kernel comparison: skipped: needs root\n");
	}
	return t_done();
}
