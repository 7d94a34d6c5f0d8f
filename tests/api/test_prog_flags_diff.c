/* test_prog_flags_diff.c - which BPF_PROG_LOAD prog_flags each program type accepts
 * (src/api/prog.c, the verifier's check_sleepable()), against the kernel's bpf(2): a
 * sleepable socket filter, XDP, tc, tracepoint, raw tracepoint, cgroup skb or perf event
 * program is EINVAL with the kernel's message (issue 14); a kprobe may be sleepable (a
 * uprobe's is decided at attach); the other flags load on every type; unknown bits are
 * EINVAL.  bpfrt must give the expected errno and log; as root the kernel must too.
 */
#include <stdio.h>

#include "harness.h"
#include "api/diff.h"

#define SLEEPABLE_MSG                                                                            \
	"Only fentry/fexit/fmod_ret, lsm, iter, uprobe, and struct_ops programs can be "         \
	"sleepable\n"                                                                            \
	"processed 0 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 "  \
	"mark_read 0\n"

struct flags_case {
	const char *name;
	uint32_t prog_type;
	uint32_t attach;     /* expected_attach_type */
	uint32_t flags;      /* prog_flags */
	int err;             /* 0: loads */
	const char *log;     /* the whole level-1 log of a rejection, or NULL */
};

static const struct flags_case cases[] = {
	{ "socket filter, sleepable", BPF_PROG_TYPE_SOCKET_FILTER, 0, BPF_F_SLEEPABLE, EINVAL,
	  SLEEPABLE_MSG },
	{ "xdp, sleepable", BPF_PROG_TYPE_XDP, 0, BPF_F_SLEEPABLE, EINVAL, SLEEPABLE_MSG },
	{ "sched_cls, sleepable", BPF_PROG_TYPE_SCHED_CLS, 0, BPF_F_SLEEPABLE, EINVAL,
	  SLEEPABLE_MSG },
	{ "tracepoint, sleepable", BPF_PROG_TYPE_TRACEPOINT, 0, BPF_F_SLEEPABLE, EINVAL,
	  SLEEPABLE_MSG },
	{ "raw_tp, sleepable", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, BPF_F_SLEEPABLE, EINVAL,
	  SLEEPABLE_MSG },
	{ "cgroup_skb, sleepable", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS,
	  BPF_F_SLEEPABLE, EINVAL, SLEEPABLE_MSG },
	{ "perf_event, sleepable", BPF_PROG_TYPE_PERF_EVENT, 0, BPF_F_SLEEPABLE, EINVAL,
	  SLEEPABLE_MSG },
	{ "sleepable with strict alignment", BPF_PROG_TYPE_SOCKET_FILTER, 0,
	  BPF_F_SLEEPABLE | BPF_F_STRICT_ALIGNMENT, EINVAL, SLEEPABLE_MSG },
	{ "kprobe, sleepable", BPF_PROG_TYPE_KPROBE, 0, BPF_F_SLEEPABLE, 0, NULL },
	{ "socket filter, no flags", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, 0, NULL },
	{ "socket filter, strict alignment", BPF_PROG_TYPE_SOCKET_FILTER, 0,
	  BPF_F_STRICT_ALIGNMENT, 0, NULL },
	{ "socket filter, any alignment", BPF_PROG_TYPE_SOCKET_FILTER, 0, BPF_F_ANY_ALIGNMENT, 0,
	  NULL },
	{ "socket filter, xdp frags", BPF_PROG_TYPE_SOCKET_FILTER, 0, BPF_F_XDP_HAS_FRAGS, 0,
	  NULL },
	{ "xdp, xdp frags", BPF_PROG_TYPE_XDP, 0, BPF_F_XDP_HAS_FRAGS, 0, NULL },
	{ "socket filter, dev bound only", BPF_PROG_TYPE_SOCKET_FILTER, 0, 1u << 6, 0, NULL },
	{ "socket filter, reg invariants", BPF_PROG_TYPE_SOCKET_FILTER, 0, 1u << 7, 0, NULL },
	{ "socket filter, state freq", BPF_PROG_TYPE_SOCKET_FILTER, 0, BPF_F_TEST_STATE_FREQ, 0,
	  NULL },
	{ "socket filter, unknown bit 12", BPF_PROG_TYPE_SOCKET_FILTER, 0, 1u << 12, EINVAL, "" },
	{ "socket filter, unknown bit 20", BPF_PROG_TYPE_SOCKET_FILTER, 0, 1u << 20, EINVAL, "" },
};

/* Load "r0 = 0; exit" as c says; 0 or the errno, the log in log. */
static int load(sys_fn sys, const struct flags_case *c, char *log, size_t size)
{
	static const struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	memset(log, 0, size);
	a.prog_type = c->prog_type;
	a.expected_attach_type = c->attach;
	a.prog_flags = c->flags;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)size;
	a.log_level = 1;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static void check(sys_fn sys, const char *who, const struct flags_case *c)
{
	char name[160], log[1024];
	int err;

	snprintf(name, sizeof(name), "%s: %s", who, c->name);
	T_CASE(name);
	err = load(sys, c, log, sizeof(log));
	T_EQ_INT(c->err, err);
	if (c->err && c->log)
		T_EQ_STR(c->log, log);
}

int main(void)
{
	int kernel = kernel_available();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check(sys_bpfrt, "bpfrt", &cases[i]);
		if (kernel)
			check(sys_kernel, "kernel", &cases[i]);
	}
	if (!kernel)
		printf("note: not root or no bpf(2): bpfrt checked against the expected values only\n");
	return t_done();
}
