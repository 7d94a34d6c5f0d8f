/* test_jiffies_oracle.c - bpf_jiffies64 against the kernel's jiffies_64: an XDP program
 * stores bpf_jiffies64() into an array map, test-run on the kernel and on bpfrt (each
 * engine), twice 300 ms apart.  Both sides advance at the kernel's HZ (each side's
 * delta is 0.3 s of ticks, within a tick and the runs' spacing), and bpfrt's value is
 * within 2 ticks of the kernel's runs just before and just after it (util/jiffies.c
 * calibrates against /proc/timer_list, which root reads; where it gives nothing, as in a
 * container that masks it, within a second; skipped when neither it nor a kernel
 * configuration gives HZ).  Before session 26 bpfrt refused the call in every program
 * type (helpers.proto_sets_oracle checks where it may be called).  A process that cannot
 * read /proc/timer_list (nobody) takes HZ from the kernel's configuration: the same HZ
 * (skipped when nobody cannot read a configuration), its values ahead by less than a
 * second.  Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "oracle_load.h"
#include "util/util.h"

static int map_create(bpf_fn bpf)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	return bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

static int load(bpf_fn bpf, int map, uint32_t flags)
{
	char text[512], err[256], log[4096], last[256];
	struct bpf_insn *insns;
	union bpf_attr a;
	size_t n;
	int fd, e;

	snprintf(text, sizeof(text),
		 "call bpf_jiffies64\nstxdw [%%r10-8], %%r0\nstw [%%r10-16], 0\n"
		 "lddw %%r1, map_fd %d\nmov %%r2, %%r10\nadd %%r2, -16\nmov %%r3, %%r10\n"
		 "add %%r3, -8\nmov %%r4, 0\ncall bpf_map_update_elem\nmov %%r0, 2\nexit\n",
		 map);
	if (bpfrt_asm(text, "jiffies.s", &insns, &n, err, sizeof(err)))
		return -1;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uintptr_t)"GPL";
	a.prog_flags = flags;
	fd = oracle_load(bpf, &a, log, sizeof(log), &e, last, sizeof(last));
	if (fd < 0)
		fprintf(stderr, "load: %s (%s)\n", strerror(e), last);
	free(insns);
	return fd;
}

/* one test run; the jiffies it stored, 0 when it did not run */
static uint64_t run(bpf_fn bpf, int prog, int map)
{
	static const unsigned char pkt[64];
	union bpf_attr a;
	uint64_t v = 0;
	uint32_t key = 0, retval;
	int err;

	oracle_test_run(bpf, prog, pkt, sizeof(pkt), &err, &retval);
	if (err || retval != 2)
		return 0;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	return bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) ? 0 : v;
}

static int64_t diff(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ticks at hz in [a, b] of CLOCK_MONOTONIC, rounded up */
static int64_t ticks(uint64_t a, uint64_t b, unsigned hz)
{
	return (int64_t)(((b - a) * hz + 999999999u) / 1000000000u);
}

/* HZ and jiffies as a process that cannot read /proc/timer_list works them out (nobody:
 * HZ from the kernel's configuration, no offset), and whether it could read a
 * configuration: 0 when the child failed */
static int unprivileged(unsigned *hz, uint64_t *j, int *configured)
{
	uint64_t out[3] = { 0, 0, 0 };
	const char *v;
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return 0;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(1);
		out[0] = brt_jiffies_hz();
		out[1] = brt_jiffies64();
		out[2] = !brt_kconfig_get("CONFIG_HZ", &v) && v;
		_exit(write(p[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], out, sizeof(out)) != sizeof(out))
		out[0] = 0;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	*hz = (unsigned)out[0];
	*j = out[1];
	*configured = (int)out[2];
	return out[0] != 0;
}

int main(void)
{
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					    BPFRT_ENGINE_JIT
#endif
	};
	const struct timespec gap = { 0, 300 * 1000 * 1000 };
	int km = map_create(oracle_kernel_bpf), kp;
	unsigned hz, uhz = 0;
	uint64_t uj = 0, t0 = now_ns();
	int configured = 0, exact;
	const char *v;
	int64_t near;

	if (geteuid() != 0 || km < 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	/* first: a child forked after this process worked it out would inherit its answer */
	T_CASE("unprivileged: HZ from the configuration");
	T_ASSERT(unprivileged(&uhz, &uj, &configured));
	hz = brt_jiffies_hz();
	if (configured)
		T_EQ_INT(hz, uhz);
	else
		printf("unprivileged HZ: skipped: nobody reads no kernel configuration\n");
	/* the value within 2 ticks of the kernel's when /proc/timer_list gives the offset,
	 * else ahead by the kernel's offset, under a second */
	exact = brt_jiffies_exact();
	near = exact ? 2 : (int64_t)hz;
	if (!exact && brt_kconfig_get("CONFIG_HZ", &v))
		T_SKIP("neither /proc/timer_list nor a kernel configuration gives HZ (bpfrt "
		       "assumes %u)", hz);
	if (!exact)
		printf("exact value: skipped: /proc/timer_list gives no calibration (within %u "
		       "ticks instead)\n", hz);
	/* without the kernel's offset: ahead by the ticks between the monotonic clock's
	 * start and the tick's (64 on the development host), less the ticks since the
	 * child read it (none on a quiet machine) */
	T_ASSERT(diff(uj, brt_jiffies64()) >= -1 - ticks(t0, now_ns(), hz) &&
		 diff(uj, brt_jiffies64()) <= (int64_t)hz);
	printf("unprivileged: HZ %u, %lld ticks ahead of root's value\n", uhz,
	       (long long)diff(uj, brt_jiffies64()));
	kp = load(oracle_kernel_bpf, km, 0);
	T_CASE("kernel load");
	T_ASSERT(kp >= 0);
	if (kp < 0)
		return t_done();
	printf("HZ %u\n", hz);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		int bm = map_create(bpfrt_bpf), bp = load(bpfrt_bpf, bm, BPFRT_F_ENGINE(engines[e]));
		uint64_t k1, b1, k1b, k2, b2, k2b, ta, tb, tc, td;

		T_CASE("bpfrt load");
		T_ASSERT(bm >= 0 && bp >= 0);
		if (bp < 0)
			continue;
		/* a first run of each (whatever it sets up once is not timed); then bpfrt's
		 * run between two of the kernel's, so a delay on a loaded machine widens the
		 * bracket instead of failing */
		run(oracle_kernel_bpf, kp, km);
		run(bpfrt_bpf, bp, bm);
		ta = now_ns();
		k1 = run(oracle_kernel_bpf, kp, km);
		b1 = run(bpfrt_bpf, bp, bm);
		k1b = run(oracle_kernel_bpf, kp, km);
		tb = now_ns();
		nanosleep(&gap, NULL);
		tc = now_ns();
		k2 = run(oracle_kernel_bpf, kp, km);
		b2 = run(bpfrt_bpf, bp, bm);
		k2b = run(oracle_kernel_bpf, kp, km);
		td = now_ns();
		printf("engine %u: kernel %llu -> %llu (+%lld), bpfrt %llu -> %llu (+%lld)\n",
		       engines[e], (unsigned long long)k1, (unsigned long long)k2,
		       (long long)diff(k2, k1), (unsigned long long)b1, (unsigned long long)b2,
		       (long long)diff(b2, b1));
		T_CASE("runs stored a value");
		T_ASSERT(k1 && k1b && k2 && k2b && b1 && b2);
		/* each side's delta lies between the ticks of the sleep (tb..tc) and of the
		 * whole (ta..td), both read from CLOCK_MONOTONIC: a fixed slack failed when a
		 * loaded machine stopped the process longer than it allowed */
		T_CASE("both advance the measured time in the kernel's ticks");
		T_ASSERT(diff(k2, k1) >= ticks(tb, tc, hz) - 2 &&
			 diff(k2, k1) <= ticks(ta, td, hz) + 1);
		T_ASSERT(diff(b2, b1) >= ticks(tb, tc, hz) - 2 &&
			 diff(b2, b1) <= ticks(ta, td, hz) + 1);
		T_CASE("bpfrt's jiffies are the kernel's");
		T_ASSERT(diff(b1, k1) >= -2 && diff(b1, k1b) <= near);
		T_ASSERT(diff(b2, k2) >= -2 && diff(b2, k2b) <= near);
		close(bp);
		close(bm);
	}
	close(kp);
	close(km);
	return t_done();
}
