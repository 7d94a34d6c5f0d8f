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

/* bpf_dynptr_check_off_len() */
static int off_len_err(const struct brt_dynptr *p, uint32_t offset, uint32_t len)
{
	uint32_t size = dsize(p);

	return len > size || offset > size - len ? -E2BIG : 0;
}

/* __bpf_dynptr_read()'s and __bpf_dynptr_write()'s refusals, in their order */
static int read_err(const struct brt_dynptr *src, uint32_t offset, uint32_t len)
{
	if (!src->data)
		return -EINVAL;
	return off_len_err(src, offset, len);
}

static int write_err(const struct brt_dynptr *dst, uint32_t offset, uint32_t len)
{
	if (!dst->data || (dst->size & BRT_DYNPTR_RDONLY_BIT))
		return -EINVAL;
	return off_len_err(dst, offset, len);
}

/* int bpf_dynptr_copy(dst, dst_off, src, src_off, size) (Linux 6.16): memmove between
 * the two slices when both exist, else the kernel's fallbacks, whose answers these are:
 * a write of the source slice (-EINVAL for a null or read-only destination, -E2BIG out of
 * its range), a read into the destination slice (-EINVAL for a null source, -E2BIG), or,
 * neither slice, -E2BIG when either range is out, 0 for nothing to copy.  bpfrt's dynptrs
 * are all linear, so a slice fails only where those answers are errors. */
uint64_t brt_kfunc_bpf_dynptr_copy(uint64_t dst_ptr, uint64_t dst_off, uint64_t src_ptr,
				   uint64_t src_off, uint64_t size, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *dst = brt_dynptr_arg(ctx, dst_ptr);
	const struct brt_dynptr *src = brt_dynptr_arg(ctx, src_ptr);
	uint32_t doff = (uint32_t)dst_off, soff = (uint32_t)src_off, len = (uint32_t)size;
	void *s, *d;
	int err;

	if (!dst || !src)
		return (uint64_t)-EINVAL;
	s = (void *)(uintptr_t)slice(src, soff, len, ctx, 0);
	d = (dst->size & BRT_DYNPTR_RDONLY_BIT) ? NULL
						: (void *)(uintptr_t)slice(dst, doff, len, ctx, 1);
	if (s && d) {
		memmove(d, s, len);
		return 0;
	}
	if (s)
		err = write_err(dst, doff, len);
	else if (d)
		err = read_err(src, soff, len);
	else if (off_len_err(dst, doff, len) || off_len_err(src, soff, len))
		err = -E2BIG;
	else if (!len)
		err = 0;
	else if (!(err = read_err(src, soff, len)))
		err = write_err(dst, doff, len);
	if (!err && len) /* in range and allowed but no slice: a checked run's forged one */
		err = -EFAULT;
	return (uint64_t)(int64_t)err;
}

/* int bpf_dynptr_memset(p, offset, size, val) (Linux 6.17): val's low byte over the
 * slice; -EINVAL for a read-only dynptr, -E2BIG out of range (a null one: 0 bytes at 0
 * succeed, as the kernel's range check lets them). */
uint64_t brt_kfunc_bpf_dynptr_memset(uint64_t ptr, uint64_t offset, uint64_t size,
				     uint64_t val, uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, ptr);
	uint32_t off = (uint32_t)offset, len = (uint32_t)size;
	void *d;
	int err;

	UNUSED(r5);
	if (!p)
		return (uint64_t)-EINVAL;
	d = p->data && !(p->size & BRT_DYNPTR_RDONLY_BIT)
		    ? (void *)(uintptr_t)slice(p, off, len, ctx, 1)
		    : NULL;
	if (d) {
		memset(d, (uint8_t)val, len);
		return 0;
	}
	if (p->data && (p->size & BRT_DYNPTR_RDONLY_BIT))
		return (uint64_t)-EINVAL;
	err = off_len_err(p, off, len);
	if (err || !len)
		return (uint64_t)(int64_t)err;
	return (uint64_t)-EFAULT; /* in range but no slice: a checked run's forged dynptr */
}
