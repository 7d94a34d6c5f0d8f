/* sections.c - ELF section names to program types and expected attach types (the table is
 * sec_def.def), and the bpftool-style names of attach types used in messages and in
 * `bpfrt object show` (program types are named by isa/prog_types.def, map types by
 * maps/map_types.def).
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

const char *brt_elf_attach_type_name(uint32_t attach_type)
{
	return lookup(attach_type_names, sizeof(attach_type_names) / sizeof(attach_type_names[0]),
		      attach_type);
}
