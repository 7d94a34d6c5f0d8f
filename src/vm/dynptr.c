/* dynptr.c - the dynptr helpers of the kernel's bpf_base_func_proto() (CAP_BPF):
 * bpf_dynptr_from_mem, bpf_dynptr_read, bpf_dynptr_write and bpf_dynptr_data, with the
 * kernel's answers (kernel/bpf/helpers.c) over struct brt_dynptr (vm.h), the kernel's
 * layout.  Ring buffer dynptrs are made and released in maps/ringbuf.c.  The verifier
 * (verifier/dynptr.c) proves the dynptr initialised for verified programs; a checked run
 * of an unverified one may hold anything there, so its pointers are checked first.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "vm/vm.h"

enum { DYNPTR_LOCAL = 1, DYNPTR_RINGBUF = 2, DYNPTR_SKB = 3, DYNPTR_XDP = 4, DYNPTR_SKB_META = 5 };

void brt_dynptr_init(struct brt_dynptr *p, void *data, uint32_t type, uint32_t size)
{
	p->data = data;
	p->offset = 0;
	p->size = size | (type << BRT_DYNPTR_TYPE_SHIFT);
}

void brt_dynptr_set_null(struct brt_dynptr *p)
{
	memset(p, 0, sizeof(*p));
}

struct brt_dynptr *brt_dynptr_arg(struct bpfrt_run_ctx *ctx, uint64_t r)
{
	struct brt_dynptr *p = (struct brt_dynptr *)(uintptr_t)r;

	/* a checked run of an unverified program may pass anything: an unaligned or foreign
	 * pointer is no dynptr */
	if (ctx->checked && ((r & 7) || !bpfrt_run_access_ok(ctx, p, sizeof(*p), 1)))
		return NULL;
	return p;
}

static uint32_t dsize(const struct brt_dynptr *p)
{
	return p->size & BRT_DYNPTR_SIZE_MASK;
}

static uint32_t dtype(const struct brt_dynptr *p)
{
	return (p->size >> BRT_DYNPTR_TYPE_SHIFT) & 7u;
}

/* bpf_dynptr_check_off_len() */
static int check_off_len(const struct brt_dynptr *p, uint64_t offset, uint64_t len)
{
	uint32_t size = dsize(p);

	if (len > size || offset > size - len)
		return -E2BIG;
	return 0;
}

/* The bytes [offset, offset + len) of a dynptr, or NULL when a checked run may not touch
 * them (a forged dynptr).  A packet dynptr holds the run's struct brt_run_pkt, as the
 * kernel's holds the skb (helpers/dynptr.c makes them): its bytes are the packet's from
 * data (skb metadata: from meta). */
static uint8_t *mem_at(struct bpfrt_run_ctx *ctx, const struct brt_dynptr *p, uint32_t offset,
		       uint32_t len, int writable)
{
	uint8_t *m;

	switch (dtype(p)) {
	case DYNPTR_LOCAL:
	case DYNPTR_RINGBUF:
		m = (uint8_t *)p->data;
		break;
	case DYNPTR_SKB:
	case DYNPTR_XDP:
	case DYNPTR_SKB_META: {
		const struct brt_run_pkt *pkt = p->data;

		if (pkt != ctx->pkt)
			return NULL;
		m = dtype(p) == DYNPTR_SKB_META ? pkt->meta : pkt->data;
		break;
	}
	default:
		return NULL;
	}
	/* as integers: a forged dynptr's offsets must not make pointer arithmetic overflow */
	m = (uint8_t *)((uintptr_t)m + p->offset + offset);

	if (ctx->checked && len && !bpfrt_run_access_ok(ctx, m, len, writable))
		return NULL;
	return m;
}

uint64_t brt_helper_dynptr_from_mem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_dynptr *p = brt_dynptr_arg(ctx, r4);
	uint32_t size = (uint32_t)r2;

	(void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	if (size > BRT_DYNPTR_SIZE_MASK) {
		brt_dynptr_set_null(p);
		return (uint64_t)-E2BIG;
	}
	if (r3 || (ctx->checked && size &&
		   !bpfrt_run_access_ok(ctx, (void *)(uintptr_t)r1, size, 1))) {
		brt_dynptr_set_null(p);
		return (uint64_t)-EINVAL;
	}
	brt_dynptr_init(p, (void *)(uintptr_t)r1, DYNPTR_LOCAL, size);
	return 0;
}

uint64_t brt_helper_dynptr_read(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *src = brt_dynptr_arg(ctx, r3);
	uint32_t len = (uint32_t)r2, off = (uint32_t)r4;
	const uint8_t *m;
	int err;

	if (!src || !src->data || r5)
		return (uint64_t)-EINVAL;
	err = check_off_len(src, off, len);
	if (err)
		return (uint64_t)(int64_t)err;
	m = mem_at(ctx, src, off, len, 0);
	if (!m || (ctx->checked && len && !bpfrt_run_access_ok(ctx, (void *)(uintptr_t)r1, len, 1)))
		return (uint64_t)-EFAULT;
	memmove((void *)(uintptr_t)r1, m, len);
	return 0;
}

uint64_t brt_helper_dynptr_write(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				 struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *dst = brt_dynptr_arg(ctx, r1);
	uint32_t off = (uint32_t)r2, len = (uint32_t)r4;
	uint8_t *m;
	int err;

	if (!dst || !dst->data || (dst->size & BRT_DYNPTR_RDONLY_BIT))
		return (uint64_t)-EINVAL;
	err = check_off_len(dst, off, len);
	if (err)
		return (uint64_t)(int64_t)err;
	/* __bpf_skb_store_bytes()'s flags; the others take none */
	if (dtype(dst) == DYNPTR_SKB ? (r5 & ~(uint64_t)(BPF_F_RECOMPUTE_CSUM | BPF_F_INVALIDATE_HASH))
				     : r5 != 0)
		return (uint64_t)-EINVAL;
	m = mem_at(ctx, dst, off, len, 1);
	if (!m || (ctx->checked && len && !bpfrt_run_access_ok(ctx, (void *)(uintptr_t)r3, len, 0)))
		return (uint64_t)-EFAULT;
	memmove(m, (const void *)(uintptr_t)r3, len);
	return 0;
}

uint64_t brt_helper_dynptr_data(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				struct bpfrt_run_ctx *ctx)
{
	const struct brt_dynptr *p = brt_dynptr_arg(ctx, r1);
	uint32_t off = (uint32_t)r2, len = (uint32_t)r3;

	(void)r4, (void)r5;
	if (!p || !p->data || check_off_len(p, off, len) || (p->size & BRT_DYNPTR_RDONLY_BIT))
		return 0;
	/* skb and xdp dynptrs give slices through the slice kfuncs only */
	if (dtype(p) != DYNPTR_LOCAL && dtype(p) != DYNPTR_RINGBUF)
		return 0;
	return (uint64_t)(uintptr_t)mem_at(ctx, p, off, len, 1);
}
