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
static int skb_valid(int off, int size, enum brt_access t)
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
	if (off == SKB_SK) /* a socket pointer; bpfrt has no socket types: read as data */
		return t == BRT_READ && size == 8;
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
	}
	return skb_valid(off, size, t);
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
};

int brt_ctx_valid(struct brt_env *env, int off, int size, enum brt_access t, uint32_t *rt)
{
	const struct brt_prog_type *pt = brt_prog_type(env->opts->prog_type);

	*rt = SCALAR_VALUE;
	if (!pt || pt->ctx >= sizeof(ctx_access) / sizeof(ctx_access[0]) || !ctx_access[pt->ctx])
		return 0;
	return ctx_access[pt->ctx](env, off, size, t, rt);
}

int brt_may_access_pkt(struct brt_env *env, enum brt_access t)
{
	return brt_prog_type_has(env->opts->prog_type,
				 t == BRT_READ ? BRT_PT_PKT_READ : BRT_PT_PKT_WRITE) != 0;
}
