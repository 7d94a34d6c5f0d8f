/* test_sections.c - section names to program types and expected attach types
 * (src/elf/sec_def.def), including the EXACT/PREFIX matching rules, and the type names. */
#include <errno.h>

#include "elf/elf.h"
#include "harness.h"

static const struct {
	const char *sec;
	int ret;
	uint32_t type;
	uint32_t attach;
	uint32_t flags; /* prog_flags libbpf loads the section with */
} cases[] = {
	{ "socket", 0, BPF_PROG_TYPE_SOCKET_FILTER, 0 },
	/* libbpf 0.x's plain prefixes, after libbpf's own rules */
	{ "socket/x", 0, BPF_PROG_TYPE_SOCKET_FILTER, 0 },
	{ "socket1", 0, BPF_PROG_TYPE_SOCKET_FILTER, 0 },
	{ "xdp", 0, BPF_PROG_TYPE_XDP, BPF_XDP },
	{ "xdp/devmap", 0, BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP },
	{ "xdp.frags/cpumap", 0, BPF_PROG_TYPE_XDP, BPF_XDP_CPUMAP, BPF_F_XDP_HAS_FRAGS },
	{ "xdp.frags", 0, BPF_PROG_TYPE_XDP, BPF_XDP, BPF_F_XDP_HAS_FRAGS },
	/* SEC_SLEEPABLE rows; '?' (autoload off) is not part of the name */
	{ "syscall", 0, BPF_PROG_TYPE_SYSCALL, 0, BPF_F_SLEEPABLE },
	{ "?syscall", 0, BPF_PROG_TYPE_SYSCALL, 0, BPF_F_SLEEPABLE },
	{ "fentry.s/x", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, BPF_F_SLEEPABLE },
	{ "iter.s/task", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, BPF_F_SLEEPABLE },
	{ "lsm.s/file_open", 0, BPF_PROG_TYPE_LSM, BPF_LSM_MAC, BPF_F_SLEEPABLE },
	{ "uprobe.s", 0, BPF_PROG_TYPE_KPROBE, 0, BPF_F_SLEEPABLE },
	{ "?tc", 0, BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "?", -ENOENT, 0, 0 },
	{ "xdp_foo", 0, BPF_PROG_TYPE_XDP, BPF_XDP },
	{ "xdp_prog", 0, BPF_PROG_TYPE_XDP, BPF_XDP },
	{ "classifier_ingress", 0, BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "sockops_x", 0, BPF_PROG_TYPE_SOCK_OPS, BPF_CGROUP_SOCK_OPS },
	{ "tc/ingress", 0, BPF_PROG_TYPE_SCHED_CLS, 46 /* BPF_TCX_INGRESS */ },
	{ "tcx/egress", 0, BPF_PROG_TYPE_SCHED_CLS, 47 /* BPF_TCX_EGRESS */ },
	{ "netkit/peer", 0, BPF_PROG_TYPE_SCHED_CLS, 55 /* BPF_NETKIT_PEER */ },
	{ "kprobe.session/x", 0, BPF_PROG_TYPE_KPROBE, 56 /* BPF_TRACE_KPROBE_SESSION */ },
	{ "uprobe.multi.s/bin:f", 0, BPF_PROG_TYPE_KPROBE, 48 /* BPF_TRACE_UPROBE_MULTI */,
	  BPF_F_SLEEPABLE },
	{ "tp.s/syscalls/x", 0, BPF_PROG_TYPE_TRACEPOINT, 0 },
	{ "raw_tp.s/x", 0, BPF_PROG_TYPE_RAW_TRACEPOINT, 0 },
	{ "tp_btf.s/x", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP },
	{ "sk_skb/verdict", 0, BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_VERDICT },
	{ "cgroup/connect_unix", 0, BPF_PROG_TYPE_CGROUP_SOCK_ADDR, 49 },
	{ "struct_ops.s/x", 0, BPF_PROG_TYPE_STRUCT_OPS, 0, BPF_F_SLEEPABLE },
	/* tc names sections by iproute2 map id and key; no type by themselves */
	{ "2/1", -ENOENT, 0, 0 },
	{ "from-container", -ENOENT, 0, 0 },
	{ "tc", 0, BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "classifier", 0, BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "classifier/egress", 0, BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "action", 0, BPF_PROG_TYPE_SCHED_ACT, 0 },
	{ "tracepoint", 0, BPF_PROG_TYPE_TRACEPOINT, 0 },
	{ "tracepoint/syscalls/sys_enter_openat", 0, BPF_PROG_TYPE_TRACEPOINT, 0 },
	{ "tp/sched/sched_switch", 0, BPF_PROG_TYPE_TRACEPOINT, 0 },
	{ "tp_btf/sched_switch", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP },
	{ "raw_tp/sys_enter", 0, BPF_PROG_TYPE_RAW_TRACEPOINT, 0 },
	{ "raw_tp.w/bpf_test_finish", 0, BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE, 0 },
	{ "raw_tracepoint/sys_exit", 0, BPF_PROG_TYPE_RAW_TRACEPOINT, 0 },
	{ "kprobe/do_unlinkat", 0, BPF_PROG_TYPE_KPROBE, 0 },
	{ "kretprobe/do_unlinkat", 0, BPF_PROG_TYPE_KPROBE, 0 },
	{ "kprobe.multi/do_*", 0, BPF_PROG_TYPE_KPROBE, BPF_TRACE_KPROBE_MULTI },
	{ "uprobe/usr/lib/libc.so.6:malloc", 0, BPF_PROG_TYPE_KPROBE, 0 },
	{ "uretprobe.s/bin/bash:readline", 0, BPF_PROG_TYPE_KPROBE, 0, BPF_F_SLEEPABLE },
	{ "usdt/libc:setjmp", 0, BPF_PROG_TYPE_KPROBE, 0 },
	{ "ksyscall/openat", 0, BPF_PROG_TYPE_KPROBE, 0 },
	{ "fentry/tcp_v4_connect", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY },
	{ "fexit.s/vfs_read", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, BPF_F_SLEEPABLE },
	{ "fmod_ret/security_x", 0, BPF_PROG_TYPE_TRACING, BPF_MODIFY_RETURN },
	{ "freplace/handler", 0, BPF_PROG_TYPE_EXT, 0 },
	{ "lsm/bpf", 0, BPF_PROG_TYPE_LSM, BPF_LSM_MAC },
	{ "lsm.s/bpf", 0, BPF_PROG_TYPE_LSM, BPF_LSM_MAC, BPF_F_SLEEPABLE },
	{ "lsm_cgroup/socket_bind", 0, BPF_PROG_TYPE_LSM, BPF_LSM_CGROUP },
	{ "iter/task", 0, BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER },
	{ "perf_event", 0, BPF_PROG_TYPE_PERF_EVENT, 0 },
	{ "lwt_xmit", 0, BPF_PROG_TYPE_LWT_XMIT, 0 },
	{ "sockops", 0, BPF_PROG_TYPE_SOCK_OPS, BPF_CGROUP_SOCK_OPS },
	{ "sk_skb/stream_parser", 0, BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_PARSER },
	{ "sk_skb/stream_verdict", 0, BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT },
	{ "sk_skb", 0, BPF_PROG_TYPE_SK_SKB, 0 },
	{ "sk_msg", 0, BPF_PROG_TYPE_SK_MSG, BPF_SK_MSG_VERDICT },
	{ "flow_dissector", 0, BPF_PROG_TYPE_FLOW_DISSECTOR, BPF_FLOW_DISSECTOR },
	{ "cgroup_skb/egress", 0, BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS },
	{ "cgroup/skb", 0, BPF_PROG_TYPE_CGROUP_SKB, 0 },
	{ "cgroup/sock_release", 0, BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_RELEASE },
	{ "cgroup/bind6", 0, BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_BIND },
	{ "cgroup/recvmsg4", 0, BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_RECVMSG },
	{ "cgroup/dev", 0, BPF_PROG_TYPE_CGROUP_DEVICE, BPF_CGROUP_DEVICE },
	{ "cgroup/sysctl", 0, BPF_PROG_TYPE_CGROUP_SYSCTL, BPF_CGROUP_SYSCTL },
	{ "cgroup/setsockopt", 0, BPF_PROG_TYPE_CGROUP_SOCKOPT, BPF_CGROUP_SETSOCKOPT },
	{ "sk_lookup", 0, BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP },
	{ "netfilter", 0, 32 /* BPF_PROG_TYPE_NETFILTER */, 45 /* BPF_NETFILTER */ },
	{ "sk_reuseport/migrate", 0, BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT_OR_MIGRATE },
	{ "struct_ops/init", 0, BPF_PROG_TYPE_STRUCT_OPS, 0 },
	{ ".text", -ENOENT, 0, 0 },
	{ "", -ENOENT, 0, 0 },
	{ "kprobeX", -ENOENT, 0, 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t type = 0xdead, attach = 0xdead, flags = 0xdead;
		int ret;

		T_CASE(cases[i].sec);
		ret = brt_elf_sec_type(cases[i].sec, &type, &attach, &flags);
		T_EQ_INT(cases[i].ret, ret);
		if (ret)
			continue;
		T_EQ_INT(cases[i].type, type);
		T_EQ_INT(cases[i].attach, attach);
		T_EQ_INT(cases[i].flags, flags);
	}
	T_CASE("tail-call sections");
	{
		uint32_t id = 0, key = 0;

		T_EQ_INT(1, brt_elf_tail_sec("2/1", &id, &key));
		T_EQ_INT(2, id);
		T_EQ_INT(1, key);
		T_EQ_INT(1, brt_elf_tail_sec("0x10/0", &id, &key));
		T_EQ_INT(16, id);
		T_EQ_INT(0, brt_elf_tail_sec("2/1x", &id, &key));
		T_EQ_INT(0, brt_elf_tail_sec("2", &id, &key));
		T_EQ_INT(0, brt_elf_tail_sec("a/1", &id, &key));
		T_EQ_INT(0, brt_elf_tail_sec("1/", &id, &key));
	}
	T_CASE("names");
	T_EQ_STR("tcx_ingress", brt_elf_attach_type_name(46));
	T_EQ_STR("xdp_devmap", brt_elf_attach_type_name(BPF_XDP_DEVMAP));
	T_EQ_STR("netfilter", brt_elf_attach_type_name(45));
	T_EQ_STR("R_BPF_64_32", brt_elf_reloc_type_name(10));
	T_EQ_STR("unknown", brt_elf_reloc_type_name(99));
	return t_done();
}
