/* ctx.c - the program context as the verifier sees it: per program type, which bytes of
 * the context (struct __sk_buff, struct xdp_md, pt_regs, ...) may be read or written with
 * which sizes, and which fields load packet pointers instead of data (the kernel's
 * *_is_valid_access() and convert_ctx_access() types).
 */
#include <linux/bpf.h>

#include "verifier/internal.h"

enum { SKB_SIZE = 192, XDP_SIZE = 24, PT_REGS_SIZE = 168, RAW_TP_SIZE = 96 };
/* struct __sk_buff offsets (uapi, stable) */
enum {
	SKB_LEN = 0, SKB_MARK = 8, SKB_QUEUE_MAPPING = 12, SKB_PRIORITY = 32, SKB_TC_INDEX = 44,
	SKB_CB = 48, SKB_CB_END = 68, SKB_TC_CLASSID = 72, SKB_DATA = 76, SKB_DATA_END = 80,
	SKB_FAMILY = 88, SKB_LOCAL_PORT_END = 140, SKB_DATA_META = 140, SKB_FLOW_KEYS = 144,
	SKB_TSTAMP = 152, SKB_WIRE_LEN = 160, SKB_SK = 168, SKB_TSTAMP_TYPE = 180,
	SKB_HWTSTAMP = 184,
};

static int in(int off, int start, int len)
{
	return off >= start && off < start + len;
}

/* bpf_skb_is_valid_access(): the part shared by every __sk_buff program type */
static int skb_valid(int off, int size, enum brt_access t, uint32_t *rt)
{
	if (off < 0 || off >= SKB_SIZE || off % size)
		return 0;
	if (in(off, SKB_CB, 20))
		return off + size <= SKB_CB_END;
	if (in(off, 92, 40) || in(off, SKB_DATA, 8) || in(off, SKB_DATA_META, 4))
		return size == 4; /* ip addresses, data, data_end, data_meta */
	if (in(off, SKB_FLOW_KEYS, 8) || off == SKB_TSTAMP_TYPE || in(off, 181, 3))
		return 0;
	if (in(off, SKB_HWTSTAMP, 8))
		return t == BRT_READ && size == 8;
	if (in(off, SKB_TSTAMP, 8))
		return size == 8;
	if (in(off, SKB_SK, 8)) { /* the skb's socket, if any (never one in bpfrt's runs) */
		*rt = PTR_TO_SOCK_COMMON | PTR_MAYBE_NULL;
		return t == BRT_READ && size == 8;
	}
	if (t == BRT_WRITE)
		return size == 4;
	return size <= 4 && !(size & (size - 1));
}

static int skb_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	uint32_t type = env->opts->prog_type;

	if (off < 0 || off >= SKB_SIZE)
		return 0;
	if (type == BPF_PROG_TYPE_SOCKET_FILTER) {
		if (in(off, SKB_TC_CLASSID, 4) || in(off, SKB_DATA, 8) || in(off, SKB_DATA_META, 4) ||
		    in(off, SKB_FAMILY, SKB_LOCAL_PORT_END - SKB_FAMILY) || in(off, SKB_TSTAMP, 8) ||
		    in(off, SKB_WIRE_LEN, 4) || in(off, SKB_HWTSTAMP, 8))
			return 0;
		if (t == BRT_WRITE && !in(off, SKB_CB, 20))
			return 0;
	} else if (type == BPF_PROG_TYPE_CGROUP_SKB) {
		if (in(off, SKB_TC_CLASSID, 4) || in(off, SKB_DATA_META, 4) || in(off, SKB_WIRE_LEN, 4))
			return 0;
		if (t == BRT_WRITE && !in(off, SKB_MARK, 4) && !in(off, SKB_PRIORITY, 4) &&
		    !in(off, SKB_CB, 20) && !in(off, SKB_TSTAMP, 8))
			return 0;
		if (in(off, SKB_DATA, 4))
			*rt = PTR_TO_PACKET;
		if (in(off, SKB_DATA_END, 4))
			*rt = PTR_TO_PACKET_END;
	} else if (type == BPF_PROG_TYPE_SK_SKB) {
		/* sk_skb_is_valid_access(): no mark, writes to tc_index and priority only */
		if (in(off, SKB_TC_CLASSID, 4) || in(off, SKB_DATA_META, 4) ||
		    in(off, SKB_TSTAMP, 8) || in(off, SKB_WIRE_LEN, 4) || in(off, SKB_HWTSTAMP, 8) ||
		    in(off, SKB_MARK, 4))
			return 0;
		if (t == BRT_WRITE && !in(off, SKB_TC_INDEX, 4) && !in(off, SKB_PRIORITY, 4))
			return 0;
		if (in(off, SKB_DATA, 4))
			*rt = PTR_TO_PACKET;
		if (in(off, SKB_DATA_END, 4))
			*rt = PTR_TO_PACKET_END;
	} else if (type == BPF_PROG_TYPE_LWT_IN || type == BPF_PROG_TYPE_LWT_OUT ||
		   type == BPF_PROG_TYPE_LWT_XMIT || type == BPF_PROG_TYPE_LWT_SEG6LOCAL) {
		/* lwt_is_valid_access(): no socket fields; mark, priority and cb writable */
		if (in(off, SKB_TC_CLASSID, 4) || in(off, SKB_FAMILY, SKB_LOCAL_PORT_END - SKB_FAMILY) ||
		    in(off, SKB_DATA_META, 4) || in(off, SKB_TSTAMP, 8) || in(off, SKB_WIRE_LEN, 4) ||
		    in(off, SKB_HWTSTAMP, 8))
			return 0;
		if (t == BRT_WRITE && !in(off, SKB_MARK, 4) && !in(off, SKB_PRIORITY, 4) &&
		    !in(off, SKB_CB, 20))
			return 0;
		if (in(off, SKB_DATA, 4))
			*rt = PTR_TO_PACKET;
		if (in(off, SKB_DATA_END, 4))
			*rt = PTR_TO_PACKET_END;
	} else if (type == BPF_PROG_TYPE_FLOW_DISSECTOR) {
		/* flow_dissector_is_valid_access(): read-only data, data_end and flow_keys */
		if (off % size || t == BRT_WRITE)
			return 0;
		if (in(off, SKB_DATA, 4) || in(off, SKB_DATA_END, 4)) {
			*rt = in(off, SKB_DATA, 4) ? PTR_TO_PACKET : PTR_TO_PACKET_END;
			return size == 4;
		}
		if (in(off, SKB_FLOW_KEYS, 8)) {
			*rt = PTR_TO_FLOW_KEYS;
			return size == 8;
		}
		return 0;
	} else { /* sched_cls, sched_act */
		if (t == BRT_WRITE && !in(off, SKB_MARK, 4) && !in(off, SKB_TC_INDEX, 4) &&
		    !in(off, SKB_PRIORITY, 4) && !in(off, SKB_TC_CLASSID, 4) &&
		    !in(off, SKB_CB, 20) && !in(off, SKB_TSTAMP, 8) && !in(off, SKB_QUEUE_MAPPING, 4))
			return 0;
		if (in(off, SKB_DATA, 4))
			*rt = PTR_TO_PACKET;
		if (in(off, SKB_DATA_META, 4))
			*rt = PTR_TO_PACKET_META;
		if (in(off, SKB_DATA_END, 4))
			*rt = PTR_TO_PACKET_END;
		if (in(off, SKB_FAMILY, SKB_LOCAL_PORT_END - SKB_FAMILY))
			return 0;
		if (off == SKB_TSTAMP_TYPE) /* tc reads tstamp_type as a byte */
			return size == 1;
	}
	return skb_valid(off, size, t, rt);
}

static int xdp_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	if (env->opts->expected_attach_type != BPF_XDP_DEVMAP && off == 20)
		return 0;
	if (t == BRT_WRITE)
		return 0;
	if (off == 0)
		*rt = PTR_TO_PACKET;
	else if (off == 8)
		*rt = PTR_TO_PACKET_META;
	else if (off == 4)
		*rt = PTR_TO_PACKET_END;
	return off >= 0 && off < XDP_SIZE && !(off % size) && size == 4;
}

static int pt_regs_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env, (void)rt;
	return off >= 0 && off < PT_REGS_SIZE && t == BRT_READ && !(off % size) &&
	       off + size <= PT_REGS_SIZE;
}

static int tp_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env, (void)rt;
	return off >= 8 && off < 8192 && t == BRT_READ && !(off % size);
}

static int raw_tp_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env, (void)rt;
	return off >= 0 && off < RAW_TP_SIZE && t == BRT_READ && !(off % size);
}

static int perf_event_ctx(struct brt_env *env, int off, int size, enum brt_access t,
			  uint32_t *rt)
{
	(void)env, (void)rt;
	if (off < 0 || off >= PT_REGS_SIZE + 16 || t != BRT_READ || off % size)
		return 0;
	if (off >= PT_REGS_SIZE)
		return size <= 8 && !(size & (size - 1));
	return size == 8;
}

/* bpf_ctx_narrow_access_ok(): a power of two no wider than the field */
static int narrow_ok(int size, int field)
{
	return size <= field && !(size & (size - 1));
}

/* struct bpf_sock (bpf_sock_is_valid_access()): read rules shared by the cgroup_sock
 * context and socket pointers; sock_common pointers have no type..priority. */
enum {
	SOCK_SIZE = 80, SOCK_BOUND_DEV_IF = 0, SOCK_TYPE = 8, SOCK_MARK = 16, SOCK_PRIORITY = 20,
	SOCK_SRC_IP4 = 24, SOCK_SRC_IP6 = 28, SOCK_SRC_PORT = 44, SOCK_DST_PORT = 48,
	SOCK_DST_IP4 = 52, SOCK_DST_IP6 = 56, SOCK_STATE = 72, SOCK_RX_QUEUE = 76,
};

int brt_sock_valid(int off, int size, int common)
{
	if (off < 0 || off >= SOCK_SIZE || off % size)
		return 0;
	if (common && off >= SOCK_TYPE && off < SOCK_PRIORITY + 4)
		return 0;
	if (off == SOCK_STATE || off == 4 || off == SOCK_TYPE || off == 12 ||
	    off == SOCK_SRC_PORT || off == SOCK_RX_QUEUE || in(off, SOCK_SRC_IP4, 4) ||
	    in(off, SOCK_SRC_IP6, 16) || in(off, SOCK_DST_IP4, 4) || in(off, SOCK_DST_IP6, 16))
		return narrow_ok(size, 4);
	if (in(off, SOCK_DST_PORT, 2))
		return size == 4 || narrow_ok(size, 2);
	if (in(off, SOCK_DST_PORT + 2, 2))
		return 0; /* the padding after dst_port (a 4-byte read at 48 covers it) */
	return size == 4;
}

/* struct bpf_tcp_sock: u32 fields up to icsk_retransmits, but the two u64 byte counters
 * (whose upper halves a 4-byte read may still take, as the kernel's) */
enum { TCP_SOCK_SIZE = 112, TCP_SOCK_BYTES_RECEIVED = 80, TCP_SOCK_BYTES_ACKED = 88 };

int brt_tcp_sock_valid(int off, int size)
{
	if (off < 0 || off >= TCP_SOCK_SIZE || off % size)
		return 0;
	if (off == TCP_SOCK_BYTES_RECEIVED || off == TCP_SOCK_BYTES_ACKED)
		return size == 8;
	return size == 4;
}

/* cgroup_sock: which fields each attach type sees (__sock_filter_check_attach_type()) */
static int sock_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	uint32_t at = env->opts->expected_attach_type;

	(void)rt;
	if (!brt_sock_valid(off, size, 0))
		return 0;
	if (off == SOCK_BOUND_DEV_IF || off == SOCK_MARK || off == SOCK_PRIORITY)
		return at == BPF_CGROUP_INET_SOCK_CREATE || at == BPF_CGROUP_INET_SOCK_RELEASE;
	if (in(off, SOCK_SRC_IP4, 4) && at != BPF_CGROUP_INET4_POST_BIND)
		return 0;
	if (in(off, SOCK_SRC_IP6, 16) && at != BPF_CGROUP_INET6_POST_BIND)
		return 0;
	if (in(off, SOCK_SRC_PORT, 4) && at != BPF_CGROUP_INET4_POST_BIND &&
	    at != BPF_CGROUP_INET6_POST_BIND)
		return 0;
	return t == BRT_READ;
}

/* struct bpf_sock_addr (sock_addr_is_valid_access()) */
enum {
	SA_USER_IP4 = 4, SA_USER_IP6 = 8, SA_USER_PORT = 24, SA_MSG_SRC_IP4 = 40,
	SA_MSG_SRC_IP6 = 44, SA_SK = 64, SA_SIZE = 72,
};

static int sock_addr_ctx(struct brt_env *env, int off, int size, enum brt_access t,
			 uint32_t *rt)
{
	uint32_t at = env->opts->expected_attach_type;
	int wide;

	if (off < 0 || off >= SA_SIZE || off % size)
		return 0;
	/* the address fields of the attach type's family only */
	if (in(off, SA_USER_IP4, 4) &&
	    at != BPF_CGROUP_INET4_BIND && at != BPF_CGROUP_INET4_CONNECT &&
	    at != BPF_CGROUP_INET4_GETPEERNAME && at != BPF_CGROUP_INET4_GETSOCKNAME &&
	    at != BPF_CGROUP_UDP4_SENDMSG && at != BPF_CGROUP_UDP4_RECVMSG)
		return 0;
	if (in(off, SA_USER_IP6, 16) &&
	    at != BPF_CGROUP_INET6_BIND && at != BPF_CGROUP_INET6_CONNECT &&
	    at != BPF_CGROUP_INET6_GETPEERNAME && at != BPF_CGROUP_INET6_GETSOCKNAME &&
	    at != BPF_CGROUP_UDP6_SENDMSG && at != BPF_CGROUP_UDP6_RECVMSG)
		return 0;
	if (in(off, SA_MSG_SRC_IP4, 4) && at != BPF_CGROUP_UDP4_SENDMSG)
		return 0;
	if (in(off, SA_MSG_SRC_IP6, 16) && at != BPF_CGROUP_UDP6_SENDMSG)
		return 0;
	if (in(off, SA_USER_IP4, 24) || in(off, SA_MSG_SRC_IP4, 20)) {
		/* 8-byte access inside user_ip6 or msg_src_ip6 (bpf_ctx_wide_access_ok()) */
		wide = size == 8 && !(off % 8) &&
		       ((off >= SA_USER_IP6 && off + 8 <= SA_USER_IP6 + 16) ||
			(off >= SA_MSG_SRC_IP6 && off + 8 <= SA_MSG_SRC_IP6 + 16));
		return wide || (t == BRT_READ ? narrow_ok(size, 4) : size == 4);
	}
	if (in(off, SA_SK, 8)) {
		*rt = PTR_TO_SOCKET;
		return t == BRT_READ && size == 8;
	}
	if (off == 0 || off == 28 || off == 32 || off == 36) /* user_family, family, type, protocol */
		return t == BRT_READ && size == 4;
	return 0;
}

/* struct bpf_sock_ops (sock_ops_is_valid_access()); 6.18 adds skb_hwtstamp at 216 */
enum {
	SO_REPLY = 4, SO_TXHASH = 164, SO_BYTES_RECEIVED = 168, SO_SK = 184, SO_SKB_DATA = 192,
	SO_SKB_DATA_END = 200, SO_TCP_FLAGS = 212, SO_HWTSTAMP = 216, SO_SIZE = 224,
};

static int sock_ops_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env;
	if (off < 0 || off >= SO_SIZE || off % size)
		return 0;
	if (t == BRT_WRITE)
		return (off == SO_REPLY || off == SO_TXHASH) && size == 4;
	if (in(off, SO_BYTES_RECEIVED, 16) || in(off, SO_HWTSTAMP, 8))
		return size == 8;
	if (in(off, SO_SK, 8)) {
		*rt = PTR_TO_SOCKET | PTR_MAYBE_NULL;
		return size == 8;
	}
	if (in(off, SO_SKB_DATA, 8) || in(off, SO_SKB_DATA_END, 8)) {
		*rt = in(off, SO_SKB_DATA, 8) ? PTR_TO_PACKET : PTR_TO_PACKET_END;
		return size == 8;
	}
	if (off == SO_TCP_FLAGS)
		return narrow_ok(size, 4);
	return size == 4;
}

/* struct sk_msg_md (sk_msg_is_valid_access()): read-only */
static int sk_msg_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env;
	if (t == BRT_WRITE || off < 0 || off % size)
		return 0;
	if (off == 0 || off == 8 || off == 72) {
		*rt = off == 0 ? PTR_TO_PACKET : off == 8 ? PTR_TO_PACKET_END : PTR_TO_SOCKET;
		return size == 8;
	}
	return off >= 16 && off < 72 && size == 4; /* family .. size */
}

/* struct bpf_cgroup_dev_ctx (cgroup_dev_is_valid_access()): narrow reads of access_type */
static int cgroup_dev_ctx(struct brt_env *env, int off, int size, enum brt_access t,
			  uint32_t *rt)
{
	(void)env, (void)rt;
	if (t == BRT_WRITE || off < 0 || off + size > 12 || off % size)
		return 0;
	return off < 4 ? narrow_ok(size, 4) : size == 4;
}

/* struct bpf_sysctl (sysctl_is_valid_access()): write read-only, file_pos writable */
static int sysctl_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env, (void)rt;
	if (off < 0 || off + size > 8 || off % size)
		return 0;
	if (off < 4)
		return t == BRT_READ && narrow_ok(size, 4);
	return t == BRT_READ ? narrow_ok(size, 4) : size == 4;
}

/* struct bpf_sockopt (cg_sockopt_is_valid_access()) */
enum { SOPT_LEVEL = 24, SOPT_OPTNAME = 28, SOPT_OPTLEN = 32, SOPT_RETVAL = 36, SOPT_SIZE = 40 };

static int sockopt_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	uint32_t at = env->opts->expected_attach_type;

	if (off < 0 || off >= SOPT_SIZE || off % size)
		return 0;
	if (t == BRT_WRITE) {
		if (off == SOPT_RETVAL)
			return size == 4 && at == BPF_CGROUP_GETSOCKOPT;
		if (off == SOPT_OPTNAME || off == SOPT_LEVEL)
			return size == 4 && at == BPF_CGROUP_SETSOCKOPT;
		return off == SOPT_OPTLEN && size == 4;
	}
	if (off < SOPT_LEVEL) {
		*rt = off < 8 ? PTR_TO_SOCKET : off < 16 ? PTR_TO_PACKET : PTR_TO_PACKET_END;
		return size == 8;
	}
	if (in(off, SOPT_RETVAL, 4))
		return size == 4 && at == BPF_CGROUP_GETSOCKOPT;
	return size == 4;
}

/* struct sk_reuseport_md (sk_reuseport_is_valid_access()): read-only */
static int sk_reuseport_ctx(struct brt_env *env, int off, int size, enum brt_access t,
			    uint32_t *rt)
{
	(void)env;
	if (off < 0 || off >= 56 || off % size || t != BRT_READ)
		return 0;
	switch (off) {
	case 0: *rt = PTR_TO_PACKET; return size == 8;
	case 8: *rt = PTR_TO_PACKET_END; return size == 8;
	case 32: return size == 4; /* hash */
	case 40: *rt = PTR_TO_SOCKET; return size == 8;
	case 48: *rt = PTR_TO_SOCK_COMMON | PTR_MAYBE_NULL; return size == 8;
	}
	if (in(off, 20, 4) && size < 2) /* eth_protocol: no narrower than skb->protocol */
		return 0;
	return off >= 16 && off < 32 && narrow_ok(size, 4); /* len .. bind_inany */
}

/* struct bpf_sk_lookup (sk_lookup_is_valid_access()): read-only */
static int sk_lookup_ctx(struct brt_env *env, int off, int size, enum brt_access t,
			 uint32_t *rt)
{
	(void)env;
	if (off < 0 || off >= 72 || off % size || t != BRT_READ)
		return 0;
	if (in(off, 0, 8)) {
		*rt = PTR_TO_SOCKET | PTR_MAYBE_NULL;
		return size == 8;
	}
	if (in(off, 36, 2)) /* remote_port: 4 bytes too, for old programs */
		return size == 4 || narrow_ok(size, 2);
	if (in(off, 38, 2)) /* the zero padding after it */
		return narrow_ok(size, 2);
	return off >= 8 && off < 68 && narrow_ok(size, 4);
}

/* struct bpf_nf_ctx (nf_is_valid_access()): two trusted kernel pointers, typed by BTF
 * (their type ids: brt_btf_nf_ctx_id(), which the caller asks) */
static int nf_ctx(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	(void)env;
	if (off < 0 || off >= 16 || off % size || t == BRT_WRITE)
		return 0;
	*rt = PTR_TO_BTF_ID | PTR_TRUSTED;
	return size == 8;
}

/* syscall programs: the caller's bytes, any layout below 64 KiB */
static int syscall_ctx(struct brt_env *env, int off, int size, enum brt_access t,
		       uint32_t *rt)
{
	(void)env, (void)t, (void)rt;
	return off >= 0 && off < 65535 && !(off % size);
}

/* raw_tracepoint_writable: args[0] is the tracepoint's writable buffer */
static int raw_tp_w_ctx(struct brt_env *env, int off, int size, enum brt_access t,
			uint32_t *rt)
{
	(void)env;
	if (off == 0) {
		if (size != 8 || t != BRT_READ)
			return 0;
		*rt = PTR_TO_TP_BUFFER;
	}
	return off >= 0 && off < RAW_TP_SIZE && t == BRT_READ && !(off % size);
}

/* The access rules of each context layout (prog_types.def's ctx column). */
typedef int (*ctx_access_fn)(struct brt_env *env, int off, int size, enum brt_access t,
			     uint32_t *rt);
static const ctx_access_fn ctx_access[] = {
	[BRT_CTX_SKB] = skb_ctx,
	[BRT_CTX_XDP] = xdp_ctx,
	[BRT_CTX_PT_REGS] = pt_regs_ctx,
	[BRT_CTX_TP] = tp_ctx,
	[BRT_CTX_RAW_TP] = raw_tp_ctx,
	[BRT_CTX_PERF_EVENT] = perf_event_ctx,
	[BRT_CTX_SOCK] = sock_ctx,
	[BRT_CTX_SOCK_ADDR] = sock_addr_ctx,
	[BRT_CTX_SOCK_OPS] = sock_ops_ctx,
	[BRT_CTX_SK_MSG] = sk_msg_ctx,
	[BRT_CTX_CGROUP_DEV] = cgroup_dev_ctx,
	[BRT_CTX_SYSCTL] = sysctl_ctx,
	[BRT_CTX_SOCKOPT] = sockopt_ctx,
	[BRT_CTX_SK_REUSEPORT] = sk_reuseport_ctx,
	[BRT_CTX_SK_LOOKUP] = sk_lookup_ctx,
	[BRT_CTX_NF] = nf_ctx,
	[BRT_CTX_SYSCALL] = syscall_ctx,
};

int brt_ctx_valid(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	const struct brt_prog_type *pt = brt_prog_type(env->opts->prog_type);

	*rt = SCALAR_VALUE;
	if (!pt || pt->ctx >= sizeof(ctx_access) / sizeof(ctx_access[0]) || !ctx_access[pt->ctx])
		return 0;
	if (pt->type == BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE)
		return raw_tp_w_ctx(env, off, size, t, rt);
	return ctx_access[pt->ctx](env, off, size, t, rt);
}

/* __sk_buff fields the kernel loads from a narrower kernel field (convert_ctx_access()'s
 * target size below 4), by offset. */
static int skb_target_size(int field)
{
	switch (field) {
	case offsetof(struct __sk_buff, pkt_type):
		return 1;
	case offsetof(struct __sk_buff, queue_mapping):
	case offsetof(struct __sk_buff, protocol):
	case offsetof(struct __sk_buff, vlan_tci):
	case offsetof(struct __sk_buff, vlan_proto):
	case offsetof(struct __sk_buff, tc_index):
	case offsetof(struct __sk_buff, tc_classid):
	case offsetof(struct __sk_buff, family):
	case offsetof(struct __sk_buff, local_port):
	case offsetof(struct __sk_buff, gso_segs):
	case offsetof(struct __sk_buff, gso_size):
		return 2;
	default:
		return 4;
	}
}

/* struct bpf_sk_lookup fields read from a u16 of bpf_sk_lookup_kern
 * (sk_lookup_convert_ctx_access()) */
static int sk_lookup_target_size(int field)
{
	switch (field) {
	case offsetof(struct bpf_sk_lookup, family):
	case offsetof(struct bpf_sk_lookup, protocol):
	case offsetof(struct bpf_sk_lookup, local_port):
		return 2;
	default:
		return 4;
	}
}

int brt_ctx_read_off(struct brt_env *env, int off, int size)
{
	const struct brt_prog_type *pt = brt_prog_type(env->opts->prog_type);
	int field = off & ~3;

	if (pt && pt->ctx == BRT_CTX_SK_LOOKUP && size < 4 && off != field && off >= 8 &&
	    off < 68)
		return size >= sk_lookup_target_size(field) ? field : off;

	/* The kernel reads a narrow load's whole 4-byte field, then shifts and masks only
	 * when the load is narrower than the kernel's own field (target size); a load at
	 * least that wide returns the whole value wherever in the field it starts.  bpfrt's
	 * context holds each value in its 4-byte field, so such a load reads at the field's
	 * start (remote_port, stored shifted, is not covered). */
	if (!pt || pt->ctx != BRT_CTX_SKB || size >= 4 || off == field || off < 0 ||
	    off >= (int)sizeof(struct __sk_buff))
		return off;
	return size >= skb_target_size(field) ? field : off;
}

int brt_may_access_pkt(struct brt_env *env, enum brt_access t)
{
	return brt_prog_type_has(env->opts->prog_type,
				 t == BRT_READ ? BRT_PT_PKT_READ : BRT_PT_PKT_WRITE) != 0;
}
