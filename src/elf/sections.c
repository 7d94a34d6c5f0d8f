/* sections.c - ELF section names to program types and expected attach types (the table is
 * sec_def.def), and the bpftool-style names of attach types used in messages and in
 * `bpfrt object show` (program types are named by isa/prog_types.def, map types by
 * maps/map_types.def).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "isa/isa.h"

enum sec_match {
	EXACT,
	PREFIX,
};

/* Attach types newer than the linux/bpf.h bpfrt builds against (values of Linux 6.18)
 * that isa.h, which has those the verifier needs, does not name. */
enum {
	BRT_TCX_INGRESS = 46,
	BRT_TCX_EGRESS = 47,
	BRT_NETKIT_PRIMARY = 54,
	BRT_NETKIT_PEER = 55,
};

/* the prog_flags a row loads with (libbpf's SEC_SLEEPABLE, SEC_XDP_FRAGS) */
enum {
	SLEEPABLE = BPF_F_SLEEPABLE,
	XDP_FRAGS = BPF_F_XDP_HAS_FRAGS,
};

struct sec_def {
	const char *name;
	uint32_t prog_type;
	uint32_t attach_type;
	enum sec_match match;
	uint32_t prog_flags;
};

/* sec_def.def's type column is pasted after BPF_PROG_TYPE_; program types newer than
 * linux/bpf.h are isa.h's BRT_PROG_TYPE_* */
#define BPF_PROG_TYPE_BRT_NETFILTER BRT_PROG_TYPE_NETFILTER

static const struct sec_def sec_defs[] = {
#define SEC_DEF(name, type, attach, match, flags)                                                  \
	{ name, BPF_PROG_TYPE_##type, attach, match, flags },
#include "elf/sec_def.def"
#undef SEC_DEF
};

/* libbpf 0.x matched these by plain prefix too (its "kprobe/", "tracepoint/", ... kept
 * the slash); older objects rely on it: "xdp_prog", "socket1", "classifier_x". */
static int legacy_prefix(const struct sec_def *d)
{
	return d->match == EXACT || !strcmp(d->name, "xdp") || !strcmp(d->name, "classifier") ||
	       !strcmp(d->name, "action") || !strcmp(d->name, "sk_skb");
}

/* libbpf's rule: the name, or the name then '/' and an attach point (PREFIX rows); with
 * legacy set, libbpf 0.x's plain prefix for the rows it applied to. */
static const struct sec_def *find(const char *sec, int legacy)
{
	for (size_t i = 0; i < sizeof(sec_defs) / sizeof(sec_defs[0]); i++) {
		const struct sec_def *d = &sec_defs[i];
		size_t n;

		/* the first byte first: an object's every section (.BTF, .maps, .debug_*)
		 * is looked up, most of them in vain, twice over the whole table */
		if (d->name[0] && d->name[0] != sec[0])
			continue;
		n = strlen(d->name);
		if (strncmp(sec, d->name, n))
			continue;
		if (legacy ? !legacy_prefix(d) : sec[n] && (d->match == EXACT || sec[n] != '/'))
			continue;
		return d;
	}
	return NULL;
}

int brt_elf_sec_type(const char *sec, uint32_t *prog_type, uint32_t *attach_type,
		     uint32_t *prog_flags)
{
	const struct sec_def *d;

	/* libbpf: "?name" is the section "name" with autoload off (brt_elf_sec_autoload()) */
	if (*sec == '?')
		sec++;
	d = find(sec, 0);
	if (!d)
		d = find(sec, 1);
	if (!d)
		return -ENOENT;
	*prog_type = d->prog_type;
	*attach_type = d->attach_type;
	*prog_flags = d->prog_flags;
	return 0;
}

int brt_elf_tail_sec(const char *sec, uint32_t *map_id, uint32_t *key)
{
	char *end;
	unsigned long a, b;

	/* tc reads these with sscanf("%i/%i"): decimal, 0x hex or 0 octal */
	if (!sec || !(*sec >= '0' && *sec <= '9'))
		return 0;
	a = strtoul(sec, &end, 0);
	if (*end != '/' || !(end[1] >= '0' && end[1] <= '9'))
		return 0;
	b = strtoul(end + 1, &end, 0);
	if (*end || a > UINT32_MAX || b > UINT32_MAX)
		return 0;
	*map_id = (uint32_t)a;
	*key = (uint32_t)b;
	return 1;
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
	[BRT_TCX_INGRESS] = "tcx_ingress",
	[BRT_TCX_EGRESS] = "tcx_egress",
	[BRT_TRACE_UPROBE_MULTI] = "trace_uprobe_multi",
	[BRT_CGROUP_UNIX_CONNECT] = "cgroup_unix_connect",
	[BRT_CGROUP_UNIX_SENDMSG] = "cgroup_unix_sendmsg",
	[BRT_CGROUP_UNIX_RECVMSG] = "cgroup_unix_recvmsg",
	[BRT_CGROUP_UNIX_GETPEERNAME] = "cgroup_unix_getpeername",
	[BRT_CGROUP_UNIX_GETSOCKNAME] = "cgroup_unix_getsockname",
	[BRT_NETKIT_PRIMARY] = "netkit_primary",
	[BRT_NETKIT_PEER] = "netkit_peer",
	[BRT_TRACE_KPROBE_SESSION] = "trace_kprobe_session",
	[BRT_TRACE_UPROBE_SESSION] = "trace_uprobe_session",
	[BRT_NETFILTER] = "netfilter",
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
