/* test_kprobe.c - kernel probes as event sources (src/trace/kprobe.c) and kernel raw
 * tracepoints rebuilt from records (bpfrt_raw_tracepoint_attach, tracepoint.c):
 *  - a KPROBE program on a uprobe of this test's own function (the uprobe PMU, config1
 *    the executable, config2 the function's file offset) reads its arguments from
 *    pt_regs (rdi, rsi), its ip and counts hits; closing the link detaches;
 *  - a RAW_TRACEPOINT program on sys_enter counts this process's getppid() calls from
 *    args[1] and reads the syscall's first argument through args[0] (the pt_regs bpfrt
 *    fills) with bpf_probe_read_kernel;
 *  - refusals: wrong program type, a perf type that is no probe, a short attr, bad opts,
 *    a raw tracepoint bpfrt cannot rebuild (EOPNOTSUPP), reads past args[1] (EINVAL).
 * Needs root and the uprobe PMU (CONFIG_UPROBE_EVENTS); this kernel may lack kprobes,
 * which take the same path with another PMU type. */
#include <linux/perf_event.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "trace_test.h"
#include "uprobe_target.h"

#define CALLS 3

long kp_target(long a, long b);

__attribute__((noinline)) long kp_target(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

static uint64_t slot(int map_fd, uint32_t k)
{
	uint64_t v[4] = { 0 };
	uint32_t key = 0;

	bpfrt_map_lookup_elem(map_fd, &key, v);
	return v[k];
}

static uint64_t wait_slot(int map_fd, uint32_t k, uint64_t want)
{
	uint64_t v = 0;

	for (int i = 0; i < 500 && (v = slot(map_fd, k)) < want; i++)
		usleep(10000);
	return v;
}

int main(void)
{
	static char log[65536];
	struct perf_event_attr attr;
	struct bpfrt_link_stats st;
	char text[2048];
	int map_fd, prog, link, fd;
	long type;
	uint64_t before, ip;

	tt_private_fs("kprobe");
	if (geteuid() != 0)
		T_SKIP("needs root for perf_event_open of probes");
	type = pmu_type("uprobe");
	if (type < 0)
		T_SKIP("the kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)");

	/* value: rdi, rsi, hits, rip */
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "regs", 4, 32, 1, NULL);
	snprintf(text, sizeof(text),
		 "mov %%r6, %%r1\nstw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\n"
		 "lddw %%r1, map_fd %d\ncall 1\njeq %%r0, 0, +9\n"
		 "ldxdw %%r1, [%%r6+%zu]\nstxdw [%%r0+0], %%r1\n"
		 "ldxdw %%r1, [%%r6+%zu]\nstxdw [%%r0+8], %%r1\n"
		 "ldxdw %%r1, [%%r6+%zu]\nstxdw [%%r0+24], %%r1\n"
		 "mov %%r1, 1\nlock add [%%r0+16], %%r1\nmov %%r0, 0\nexit\n",
		 map_fd, 14 * sizeof(uint64_t) /* rdi */, 13 * sizeof(uint64_t) /* rsi */,
		 16 * sizeof(uint64_t) /* rip */);
	prog = tt_load(BPF_PROG_TYPE_KPROBE, "GPL", text, log, sizeof(log));
	T_CASE("load the kprobe program");
	if (prog < 0)
		fprintf(stderr, "%s\n", log);
	T_ASSERT(prog >= 0);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)"/proc/self/exe";
	attr.config2 = exe_file_offset((uint64_t)(uintptr_t)kp_target);
	T_CASE("uprobe on kp_target: arguments and ip from pt_regs");
	link = bpfrt_perf_event_attach(prog, &attr, sizeof(attr), 0, NULL);
	T_ASSERT(link >= 0);
	for (int i = 0; i < CALLS; i++)
		kp_target(0x1234, 0x5678 + i);
	T_EQ_INT(CALLS, wait_slot(map_fd, 2, CALLS));
	T_EQ_INT(0x1234, slot(map_fd, 0));
	T_EQ_INT(0x5678 + CALLS - 1, slot(map_fd, 1));
	ip = slot(map_fd, 3);
	T_ASSERT(ip >= (uint64_t)(uintptr_t)kp_target && ip < (uint64_t)(uintptr_t)kp_target + 16);
	T_EQ_INT(0, bpfrt_link_stats(link, &st));
	T_EQ_INT(CALLS, st.events);
	T_EQ_INT(0, st.errors);

	T_CASE("closing the link detaches");
	T_EQ_INT(0, bpfrt_link_detach(link));
	close(link);
	before = slot(map_fd, 2);
	kp_target(1, 2);
	usleep(150000);
	T_EQ_INT(before, slot(map_fd, 2));

	T_CASE("refusals: bad attr, size, opts, program type");
	{
		struct perf_event_attr sw = { .size = sizeof(sw), .type = PERF_TYPE_SOFTWARE };
		BPFRT_OPTS(bpfrt_perf_event_opts, o, .ring_pages = 3);

		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(prog, &sw, sizeof(sw), 0, NULL));
		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(prog, &attr, 16, 0, NULL));
		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(prog, NULL, sizeof(attr), 0, NULL));
		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(prog, &attr, sizeof(attr), -2, NULL));
		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(prog, &attr, sizeof(attr), 0, &o));
		fd = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", "mov %r0, 0\nexit\n", NULL, 0);
		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(fd, &attr, sizeof(attr), 0, NULL));
		close(fd);
		T_EQ_INT(-EINVAL, bpfrt_perf_event_attach(map_fd, &attr, sizeof(attr), 0, NULL));
	}
	close(prog);

	T_CASE("raw tracepoint sys_enter: id from args[1], argument through args[0]");
	/* slot 2 counts getppid() entries whose rdi (through the pt_regs) is 77 */
	snprintf(text, sizeof(text),
		 "mov %%r6, %%r1\ncall bpf_get_current_pid_tgid\nrsh %%r0, 32\n"
		 "jne %%r0, %d, +19\nldxdw %%r1, [%%r6+8]\njne %%r1, %d, +17\n"
		 "ldxdw %%r3, [%%r6+0]\nadd %%r3, %zu\nmov %%r1, %%r10\nadd %%r1, -16\n"
		 "mov %%r2, 8\ncall bpf_probe_read_kernel\nldxdw %%r7, [%%r10-16]\n"
		 "jne %%r7, 77, +9\nstw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\n"
		 "lddw %%r1, map_fd %d\ncall 1\njeq %%r0, 0, +2\nmov %%r1, 1\n"
		 "lock add [%%r0+16], %%r1\nmov %%r0, 0\nexit\n",
		 (int)getpid(), (int)SYS_getppid, 14 * sizeof(uint64_t), map_fd);
	prog = tt_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", text, log, sizeof(log));
	if (prog < 0)
		fprintf(stderr, "%s\n", log);
	T_ASSERT(prog >= 0);
	link = bpfrt_raw_tracepoint_attach(prog, "sys_enter", NULL);
	if (link == -ENOENT || link == -ENODEV) {
		printf("raw tracepoint: skipped: no raw_syscalls tracepoints in tracefs\n");
	} else {
		T_ASSERT(link >= 0);
		before = slot(map_fd, 2);
		for (int i = 0; i < CALLS; i++)
			syscall(SYS_getppid, 77);
		syscall(SYS_getppid, 78);
		T_EQ_INT(before + CALLS, wait_slot(map_fd, 2, before + CALLS));
		usleep(100000);
		T_EQ_INT(before + CALLS, slot(map_fd, 2));
		close(link);
	}
	T_CASE("raw tracepoints bpfrt cannot rebuild: EOPNOTSUPP");
	T_EQ_INT(-EOPNOTSUPP, bpfrt_raw_tracepoint_attach(prog, "sched_switch", NULL));
	T_EQ_INT(-EOPNOTSUPP, bpfrt_raw_tracepoint_attach(prog, NULL, NULL));
	close(prog);
	T_CASE("raw tracepoint: reads past args[1] or another program type: EINVAL");
	fd = tt_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", "ldxdw %r0, [%r1+16]\nexit\n", NULL, 0);
	T_ASSERT(fd >= 0);
	T_EQ_INT(-EINVAL, bpfrt_raw_tracepoint_attach(fd, "sys_exit", NULL));
	close(fd);
	fd = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", "mov %r0, 0\nexit\n", NULL, 0);
	T_EQ_INT(-EINVAL, bpfrt_raw_tracepoint_attach(fd, "sys_enter", NULL));
	close(fd);
	close(map_fd);
	tt_cleanup_fs();
	return t_done();
}
