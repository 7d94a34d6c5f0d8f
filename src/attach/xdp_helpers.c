/* xdp_helpers.c - helpers that move the bounds of an XDP program's packet, with the
 * kernel's rules on its xdp_buff: bpf_xdp_adjust_head, bpf_xdp_adjust_meta,
 * bpf_xdp_adjust_tail; and those that read and write it at an offset: bpf_xdp_load_bytes,
 * bpf_xdp_store_bytes, bpf_xdp_get_buff_len (frames here are linear: no fragments).
 *
 * The frame (struct brt_run_pkt, vm/vm.h) is the kernel's: head is data_hard_start, the first
 * XDP_FRAME_SIZE bytes of headroom are reserved for the struct xdp_frame the kernel keeps
 * there, metadata sits right before data, and data_end may grow up to p->end (the frame
 * less its skb_shared_info).  Each helper checks as the kernel does, then moves the
 * pointers and updates the program's struct xdp_md (brt_pkt_moved()).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <linux/if_ether.h>

#include "attach/attach.h"
#include "vm/vm.h"

#define XDP_FRAME_SIZE 40 /* sizeof(struct xdp_frame), x86-64 */
#define XDP_META_MAX 255  /* skb_shared_info.meta_len is a u8 */

static intptr_t addr(const uint8_t *p)
{
	return (intptr_t)(uintptr_t)p;
}

/* long bpf_xdp_adjust_head(xdp_md, int delta): move data by delta (negative: grow the
 * packet into the headroom), carrying the metadata along.  -EINVAL when data would go
 * below the reserved frame plus the metadata, or leave less than an Ethernet header. */
uint64_t brt_helper_xdp_adjust_head(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	intptr_t off = (int32_t)r2, metalen, data;

	(void)r3, (void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	metalen = p->meta <= p->data ? p->data - p->meta : 0;
	data = addr(p->data) + off;
	if (data < addr(p->head) + XDP_FRAME_SIZE + metalen || data > addr(p->data_end) - ETH_HLEN)
		return (uint64_t)-EINVAL;
	if (metalen)
		memmove(p->meta + off, p->meta, (size_t)metalen);
	p->meta += off;
	p->data += off;
	brt_pkt_moved(ctx, p);
	return 0;
}

/* long bpf_xdp_adjust_meta(xdp_md, int delta): move data_meta by delta.  -EINVAL when it
 * would go below the reserved frame or past data; -EACCES for metadata that is not a
 * multiple of 4 bytes or longer than 255. */
uint64_t brt_helper_xdp_adjust_meta(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	intptr_t meta, metalen;

	(void)r3, (void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	meta = addr(p->meta) + (int32_t)r2;
	if (meta < addr(p->head) + XDP_FRAME_SIZE || meta > addr(p->data))
		return (uint64_t)-EINVAL;
	metalen = addr(p->data) - meta;
	if ((metalen & 3) || metalen > XDP_META_MAX)
		return (uint64_t)-EACCES;
	p->meta = (uint8_t *)(uintptr_t)meta;
	brt_pkt_moved(ctx, p);
	return 0;
}

/* long bpf_xdp_adjust_tail(xdp_md, int delta): move data_end by delta; grown bytes are
 * zeroed.  -EINVAL past the end of the frame or for less than an Ethernet header. */
uint64_t brt_helper_xdp_adjust_tail(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	intptr_t off = (int32_t)r2, end;

	(void)r3, (void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	end = addr(p->data_end) + off;
	if (end > addr(p->end) || end < addr(p->data) + ETH_HLEN)
		return (uint64_t)-EINVAL;
	if (off > 0)
		memset(p->data_end, 0, (size_t)off);
	p->data_end = (uint8_t *)(uintptr_t)end;
	brt_pkt_moved(ctx, p);
	return 0;
}

/* u64 bpf_xdp_get_buff_len(xdp_md): the packet's length (linear frames: data_end - data). */
uint64_t brt_helper_xdp_get_buff_len(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);

	(void)r2, (void)r3, (void)r4, (void)r5;
	return p ? (uint64_t)(p->data_end - p->data) : 0;
}

/* bpf_xdp_pointer()'s checks: -EFAULT for an offset or length over 0xffff, -EINVAL past
 * the end of the packet; else the bytes. */
static long xdp_span(struct brt_run_pkt *p, uint32_t off, uint32_t len, uint8_t **at)
{
	if (off > 0xffff || len > 0xffff)
		return -EFAULT;
	if (!p || off + len > (uint64_t)(p->data_end - p->data))
		return -EINVAL;
	*at = p->data + off;
	return 0;
}

/* long bpf_xdp_load_bytes(xdp_md, u32 offset, void *buf, u32 len): copies out; on error
 * buf is left as it was (unlike bpf_skb_load_bytes). */
uint64_t brt_helper_xdp_load_bytes(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint8_t *at = NULL;
	long err = xdp_span(brt_pkt_of(ctx, r1), (uint32_t)r2, (uint32_t)r4, &at);
	void *buf = (void *)(uintptr_t)r3;

	(void)r5;
	if (err)
		return (uint64_t)err;
	if (!bpfrt_run_access_ok(ctx, buf, (uint32_t)r4, 1))
		return (uint64_t)-EFAULT;
	memcpy(buf, at, (uint32_t)r4);
	return 0;
}

/* long bpf_xdp_store_bytes(xdp_md, u32 offset, const void *buf, u32 len) */
uint64_t brt_helper_xdp_store_bytes(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint8_t *at = NULL;
	long err = xdp_span(brt_pkt_of(ctx, r1), (uint32_t)r2, (uint32_t)r4, &at);
	const void *buf = (const void *)(uintptr_t)r3;

	(void)r5;
	if (err)
		return (uint64_t)err;
	if (!bpfrt_run_access_ok(ctx, buf, (uint32_t)r4, 0))
		return (uint64_t)-EFAULT;
	memmove(at, buf, (uint32_t)r4);
	return 0;
}
