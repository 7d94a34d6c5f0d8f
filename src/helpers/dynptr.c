/* dynptr.c - the dynptr kfuncs of vm/kfuncs.def as user space runs them: bpf_dynptr_from_skb
 * and bpf_dynptr_from_xdp over the run's packet (struct brt_run_pkt, vm.h), and the
 * common set's bpf_dynptr_slice/_rdwr, adjust, is_null, is_rdonly, size and clone, with
 * the kernel's answers (kernel/bpf/helpers.c, net/core/filter.c) over struct brt_dynptr,
 * the kernel's layout.  A packet dynptr holds the run's struct brt_run_pkt as the kernel's
 * holds the skb or xdp_buff; bpfrt's packets are linear, so a slice is always a pointer
 * into the packet.  The helpers on dynptrs are vm/dynptr.c's.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bpfrt.h"
#include "helpers/helpers.h"
#include "vm/vm.h"

#define UNUSED(x) (void)(x)

enum { LOCAL = 1, RINGBUF = 2, SKB = 3, XDP = 4, SKB_META = 5 };

static uint32_t dsize(const struct brt_dynptr *p)
{
	return p->size & BRT_DYNPTR_SIZE_MASK;
}

static uint32_t dtype(const struct brt_dynptr *p)
{
	return (p->size >> BRT_DYNPTR_TYPE_SHIFT) & 7u;
}

/* a packet dynptr's memory: the run's packet from data on (skb metadata: from meta) */
static uint8_t *pkt_base(const struct brt_dynptr *p)
{
	const struct brt_run_pkt *pkt = p->data;

	return dtype(p) == SKB_META ? pkt->meta : pkt->data;
}

/* bpf_dynptr_from_skb / _xdp: the whole packet; read-only where the program may not
 * write packets (the kernel's bpf_dynptr_from_skb_rdonly for those program types) */
static uint64_t from_pkt(uint64_t flags, uint64_t ptr, uint32_t type, struct bpfrt_run_ctx *ctx)
{
	struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);
	struct brt_run_pkt *pkt = ctx->pkt;
	int writable;

	if (!p)
		return (uint64_t)-EINVAL;
	if (flags || !pkt || !pkt->data) {
		brt_dynptr_set_null(p);
		return (uint64_t)-EINVAL;
	}
	switch (pkt->prog_type) {
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_XDP:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_SK_SKB:
		writable = 1;
		break;
	default:
		writable = 0;
		break;
	}
	brt_dynptr_init(p, pkt, type,
			type == SKB_META ? (uint32_t)(pkt->data - pkt->meta)
					 : (uint32_t)(pkt->data_end - pkt->data));
	if (!writable)
		p->size |= BRT_DYNPTR_RDONLY_BIT;
	return 0;
}

uint64_t brt_kfunc_bpf_dynptr_from_skb(uint64_t skb, uint64_t flags, uint64_t ptr, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	UNUSED(skb), UNUSED(r4), UNUSED(r5);
	return from_pkt(flags, ptr, SKB, ctx);
}

uint64_t brt_kfunc_bpf_dynptr_from_skb_meta(uint64_t skb, uint64_t flags, uint64_t ptr,
					    uint64_t r4, uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	UNUSED(skb), UNUSED(r4), UNUSED(r5);
	return from_pkt(flags, ptr, SKB_META, ctx);
}

uint64_t brt_kfunc_bpf_dynptr_from_xdp(uint64_t xdp, uint64_t flags, uint64_t ptr, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	UNUSED(xdp), UNUSED(r4), UNUSED(r5);
	return from_pkt(flags, ptr, XDP, ctx);
}

/* bpf_dynptr_slice(): a pointer to len bytes at offset, or NULL (a packet's bytes are in
 * one piece here, so the buffer is never needed) */
static uint64_t slice(const struct brt_dynptr *p, uint32_t offset, uint64_t len,
		      struct bpfrt_run_ctx *ctx, int writable)
{
	uint8_t *m;

	if (!p || !p->data || len > dsize(p) || offset > dsize(p) - len)
		return 0;
	switch (dtype(p)) {
	case LOCAL:
	case RINGBUF:
		m = (uint8_t *)((uintptr_t)p->data + p->offset + offset);
		break;
	case SKB:
	case XDP:
	case SKB_META:
		if (p->data != ctx->pkt)
			return 0;
		m = (uint8_t *)((uintptr_t)pkt_base(p) + p->offset + offset);
		break;
	default:
		return 0;
	}
	if (ctx->checked && len && !bpfrt_run_access_ok(ctx, m, len, writable))
		return 0;
	return (uint64_t)(uintptr_t)m;
}

uint64_t brt_kfunc_bpf_dynptr_slice(uint64_t ptr, uint64_t offset, uint64_t buf, uint64_t len,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	UNUSED(buf), UNUSED(r5);
	return slice(brt_dynptr_arg(ctx, ptr), (uint32_t)offset, (uint32_t)len, ctx, 0);
}

uint64_t brt_kfunc_bpf_dynptr_slice_rdwr(uint64_t ptr, uint64_t offset, uint64_t buf,
					 uint64_t len, uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);

	UNUSED(buf), UNUSED(r5);
	if (!p || !p->data || (p->size & BRT_DYNPTR_RDONLY_BIT))
		return 0;
	return slice(p, (uint32_t)offset, (uint32_t)len, ctx, 1);
}

uint64_t brt_kfunc_bpf_dynptr_adjust(uint64_t ptr, uint64_t start, uint64_t end, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);
	uint32_t s = (uint32_t)start, e = (uint32_t)end, size;

	UNUSED(r4), UNUSED(r5);
	if (!p || !p->data)
		return (uint64_t)-EINVAL;
	size = dsize(p);
	if (s > size || e > size)
		return (uint64_t)-ERANGE;
	if (s > e)
		return (uint64_t)-EINVAL;
	p->offset += s;
	p->size = (p->size & ~BRT_DYNPTR_SIZE_MASK) | (e - s);
	return 0;
}

uint64_t brt_kfunc_bpf_dynptr_is_null(uint64_t ptr, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);

	UNUSED(r2), UNUSED(r3), UNUSED(r4), UNUSED(r5);
	return !p || !p->data;
}

uint64_t brt_kfunc_bpf_dynptr_is_rdonly(uint64_t ptr, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);

	UNUSED(r2), UNUSED(r3), UNUSED(r4), UNUSED(r5);
	return p && p->data && (p->size & BRT_DYNPTR_RDONLY_BIT);
}

/* u32 bpf_dynptr_size(): -EINVAL as a u32 for a null dynptr */
uint64_t brt_kfunc_bpf_dynptr_size(uint64_t ptr, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);

	UNUSED(r2), UNUSED(r3), UNUSED(r4), UNUSED(r5);
	if (!p || !p->data)
		return (uint32_t)-EINVAL;
	return dsize(p);
}

uint64_t brt_kfunc_bpf_dynptr_clone(uint64_t ptr, uint64_t clone, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);
	struct brt_dynptr *c = brt_dynptr_arg(ctx, clone);

	UNUSED(r3), UNUSED(r4), UNUSED(r5);
	if (!c)
		return (uint64_t)-EINVAL;
	if (!p || !p->data) {
		brt_dynptr_set_null(c);
		return (uint64_t)-EINVAL;
	}
	*c = *p;
	return 0;
}
