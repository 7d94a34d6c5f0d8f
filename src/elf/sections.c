/* sections.c - ELF section names to program types and expected attach types (the table is
 * sec_def.def), and the bpftool-style names of program and attach types used in messages
 * and in `bpfrt object show` (map types are named by maps/map_types.def).
 */
#include <errno.h>
#include <string.h>

#include "elf/elf.h"

enum sec_match {
	EXACT,
	PREFIX,
};

struct sec_def {
	const char *name;
	uint32_t prog_type;
	uint32_t attach_type;
	enum sec_match match;
};

static const struct sec_def sec_defs[] = {
#define SEC_DEF(name, type, attach, match) { name, BPF_PROG_TYPE_##type, attach, match },
#include "elf/sec_def.def"
#undef SEC_DEF
};

int brt_elf_sec_type(const char *sec, uint32_t *prog_type, uint32_t *attach_type)
{
	for (size_t i = 0; i < sizeof(sec_defs) / sizeof(sec_defs[0]); i++) {
		const struct sec_def *d = &sec_defs[i];
		size_t n = strlen(d->name);

		if (strncmp(sec, d->name, n))
			continue;
		if (sec[n] && (d->match == EXACT || sec[n] != '/'))
			continue;
		*prog_type = d->prog_type;
		*attach_type = d->attach_type;
		return 0;
	}
	return -ENOENT;
}

static const char *const prog_type_names[] = {
	[BPF_PROG_TYPE_UNSPEC] = "unspec",
	[BPF_PROG_TYPE_SOCKET_FILTER] = "socket_filter",
	[BPF_PROG_TYPE_KPROBE] = "kprobe",
	[BPF_PROG_TYPE_SCHED_CLS] = "sched_cls",
	[BPF_PROG_TYPE_SCHED_ACT] = "sched_act",
	[BPF_PROG_TYPE_TRACEPOINT] = "tracepoint",
	[BPF_PROG_TYPE_XDP] = "xdp",
	[BPF_PROG_TYPE_PERF_EVENT] = "perf_event",
	[BPF_PROG_TYPE_CGROUP_SKB] = "cgroup_skb",
	[BPF_PROG_TYPE_CGROUP_SOCK] = "cgroup_sock",
	[BPF_PROG_TYPE_LWT_IN] = "lwt_in",
	[BPF_PROG_TYPE_LWT_OUT] = "lwt_out",
	[BPF_PROG_TYPE_LWT_XMIT] = "lwt_xmit",
	[BPF_PROG_TYPE_SOCK_OPS] = "sock_ops",
	[BPF_PROG_TYPE_SK_SKB] = "sk_skb",
	[BPF_PROG_TYPE_CGROUP_DEVICE] = "cgroup_device",
	[BPF_PROG_TYPE_SK_MSG] = "sk_msg",
	[BPF_PROG_TYPE_RAW_TRACEPOINT] = "raw_tracepoint",
	[BPF_PROG_TYPE_CGROUP_SOCK_ADDR] = "cgroup_sock_addr",
	[BPF_PROG_TYPE_LWT_SEG6LOCAL] = "lwt_seg6local",
	[BPF_PROG_TYPE_LIRC_MODE2] = "lirc_mode2",
	[BPF_PROG_TYPE_SK_REUSEPORT] = "sk_reuseport",
	[BPF_PROG_TYPE_FLOW_DISSECTOR] = "flow_dissector",
	[BPF_PROG_TYPE_CGROUP_SYSCTL] = "cgroup_sysctl",
	[BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE] = "raw_tracepoint_writable",
	[BPF_PROG_TYPE_CGROUP_SOCKOPT] = "cgroup_sockopt",
	[BPF_PROG_TYPE_TRACING] = "tracing",
	[BPF_PROG_TYPE_STRUCT_OPS] = "struct_ops",
	[BPF_PROG_TYPE_EXT] = "ext",
	[BPF_PROG_TYPE_LSM] = "lsm",
	[BPF_PROG_TYPE_SK_LOOKUP] = "sk_lookup",
	[BPF_PROG_TYPE_SYSCALL] = "syscall",
};

static const char *const attach_type_names[] = {
	[BPF_CGROUP_INET_INGRESS] = "cgroup_inet_ingress",
	[BPF_CGROUP_INET_EGRESS] = "cgroup_inet_egress",
	[BPF_CGROUP_INET_SOCK_CREATE] = "cgroup_inet_sock_create",
	[BPF_CGROUP_SOCK_OPS] = "cgroup_sock_ops",
	[BPF_SK_SKB_STREAM_PARSER] = "sk_skb_stream_parser",
	[BPF_SK_SKB_STREAM_VERDICT] = "sk_skb_stream_verdict",
	[BPF_CGROUP_DEVICE] = "cgroup_device",
	[BPF_SK_MSG_VERDICT] = "sk_msg_verdict",
	[BPF_CGROUP_INET4_BIND] = "cgroup_inet4_bind",
	[BPF_CGROUP_INET6_BIND] = "cgroup_inet6_bind",
	[BPF_CGROUP_INET4_CONNECT] = "cgroup_inet4_connect",
	[BPF_CGROUP_INET6_CONNECT] = "cgroup_inet6_connect",
	[BPF_CGROUP_INET4_POST_BIND] = "cgroup_inet4_post_bind",
	[BPF_CGROUP_INET6_POST_BIND] = "cgroup_inet6_post_bind",
	[BPF_CGROUP_UDP4_SENDMSG] = "cgroup_udp4_sendmsg",
	[BPF_CGROUP_UDP6_SENDMSG] = "cgroup_udp6_sendmsg",
	[BPF_LIRC_MODE2] = "lirc_mode2",
	[BPF_FLOW_DISSECTOR] = "flow_dissector",
	[BPF_CGROUP_SYSCTL] = "cgroup_sysctl",
	[BPF_CGROUP_UDP4_RECVMSG] = "cgroup_udp4_recvmsg",
	[BPF_CGROUP_UDP6_RECVMSG] = "cgroup_udp6_recvmsg",
	[BPF_CGROUP_GETSOCKOPT] = "cgroup_getsockopt",
	[BPF_CGROUP_SETSOCKOPT] = "cgroup_setsockopt",
	[BPF_TRACE_RAW_TP] = "trace_raw_tp",
	[BPF_TRACE_FENTRY] = "trace_fentry",
	[BPF_TRACE_FEXIT] = "trace_fexit",
	[BPF_MODIFY_RETURN] = "modify_return",
	[BPF_LSM_MAC] = "lsm_mac",
	[BPF_TRACE_ITER] = "trace_iter",
	[BPF_CGROUP_INET4_GETPEERNAME] = "cgroup_inet4_getpeername",
	[BPF_CGROUP_INET6_GETPEERNAME] = "cgroup_inet6_getpeername",
	[BPF_CGROUP_INET4_GETSOCKNAME] = "cgroup_inet4_getsockname",
	[BPF_CGROUP_INET6_GETSOCKNAME] = "cgroup_inet6_getsockname",
	[BPF_XDP_DEVMAP] = "xdp_devmap",
	[BPF_CGROUP_INET_SOCK_RELEASE] = "cgroup_inet_sock_release",
	[BPF_XDP_CPUMAP] = "xdp_cpumap",
	[BPF_SK_LOOKUP] = "sk_lookup",
	[BPF_XDP] = "xdp",
	[BPF_SK_SKB_VERDICT] = "sk_skb_verdict",
	[BPF_SK_REUSEPORT_SELECT] = "sk_reuseport_select",
	[BPF_SK_REUSEPORT_SELECT_OR_MIGRATE] = "sk_reuseport_select_or_migrate",
	[BPF_PERF_EVENT] = "perf_event",
	[BPF_TRACE_KPROBE_MULTI] = "trace_kprobe_multi",
	[BPF_LSM_CGROUP] = "lsm_cgroup",
};

static const char *lookup(const char *const *names, size_t n, uint32_t v)
{
	return v < n && names[v] ? names[v] : "unknown";
}

const char *brt_elf_prog_type_name(uint32_t prog_type)
{
	return lookup(prog_type_names, sizeof(prog_type_names) / sizeof(prog_type_names[0]),
		      prog_type);
}

const char *brt_elf_attach_type_name(uint32_t attach_type)
{
	return lookup(attach_type_names, sizeof(attach_type_names) / sizeof(attach_type_names[0]),
		      attach_type);
}
