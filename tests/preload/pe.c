/* pe.c - what bpftrace's interval and profile probes do, by hand: perf_event_open() of
 * a CPU clock on one CPU with a period, BPF_PROG_TYPE_PERF_EVENT program loaded with
 * syscall(__NR_bpf), PERF_EVENT_IOC_SET_BPF, ENABLE.  The program counts its runs and
 * keeps its context's sample_period in an array map.  Prints "attach: ok|errno N",
 * "fired: yes|no", "period: N", then the same
 * attach of a kprobe program on the clock (the kernel refuses: EINVAL) and "done". */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>

#define PERIOD_NS 5000000ull /* 5 ms of CPU clock */
#define CPU 0

static long bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }

static int load(int type, int map)
{
	struct bpf_insn prog[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0),          /* r6 = ctx */
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),           /* key 0 */
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 6, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 7, 0, 0, 0),          /* r7 = value */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 7, 1, 0, BPF_ADD),  /* runs += 1 */
		/* kprobe programs read pt_regs->rax instead (the context is 168 bytes) */
		INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 6, 0, 0),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 7, 1, 8, 0),           /* sample_period */
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	char log[4096] = "";
	union bpf_attr a;
	long fd;

	if (type == BPF_PROG_TYPE_PERF_EVENT)
		prog[11].off = 168; /* struct bpf_perf_event_data's sample_period */
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	fd = bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		fprintf(stderr, "load of type %d: %s\n%s", type, strerror(errno), log);
	return (int)fd;
}

static int clock_event(void)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa)); /* size 0: the first version, as bpftrace 0.17 passes */
	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	pa.sample_period = PERIOD_NS;
	return (int)syscall(__NR_perf_event_open, &pa, -1, CPU, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(void)
{
	union bpf_attr a;
	uint64_t val[2] = { 0 };
	uint32_t key = 0;
	struct timespec end, now;
	int map, prog, kprog, ev;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = sizeof(val);
	a.max_entries = 1;
	map = (int)bpf(BPF_MAP_CREATE, &a);
	prog = load(BPF_PROG_TYPE_PERF_EVENT, map);
	kprog = load(BPF_PROG_TYPE_KPROBE, map);
	ev = clock_event();
	if (map < 0 || prog < 0 || kprog < 0 || ev < 0) {
		printf("setup: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(ev, PERF_EVENT_IOC_ENABLE, 0)) {
		printf("attach: errno %d\n", errno);
	} else {
		printf("attach: ok\n");
		/* keep CPU 0 busy for a while so its clock ticks whoever else runs */
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += 1;
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while (now.tv_sec < end.tv_sec ||
		       (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
		usleep(100000); /* bpfrt runs the program after the tick: let it catch up */
		ioctl(ev, PERF_EVENT_IOC_DISABLE, 0);
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)val;
	bpf(BPF_MAP_LOOKUP_ELEM, &a);
	printf("fired: %s\nperiod: %llu\n", val[0] > 10 ? "yes" : "no",
	       (unsigned long long)val[1]);
	close(ev);
	ev = clock_event();
	if (ioctl(ev, PERF_EVENT_IOC_SET_BPF, kprog))
		printf("kprobe program on the clock: errno %d\n", errno);
	else
		printf("kprobe program on the clock: attached\n");
	printf("done\n");
	return 0;
}
