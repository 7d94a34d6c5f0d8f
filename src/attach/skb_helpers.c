/* skb_helpers.c - helpers that read the packet of an skb program (socket filter, tc):
 * bpf_skb_load_bytes copies bytes from the packet the run's LD_ABS/LD_IND see
 * (bpfrt_run_ctx skb_data/skb_len: from the link layer for attached programs, from the
 * network header for socket filters in BPF_PROG_TEST_RUN, as in the kernel).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "attach/attach.h"
#include "vm/vm.h"

/* long bpf_skb_load_bytes(const void *skb, u32 offset, void *to, u32 len): 0, or -EFAULT
 * with to zeroed when [offset, offset + len) is not inside the packet (the kernel's
 * skb_header_pointer() failing; offsets above INT_MAX fail the same way). */
uint64_t brt_helper_skb_load_bytes(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint32_t off = (uint32_t)r2, len = (uint32_t)r4;
	void *to = (void *)(uintptr_t)r3;

	(void)r1, (void)r5;
	/* unverified programs (checked engine): the destination must be theirs to write */
	if (!len || !bpfrt_run_access_ok(ctx, to, len, 1))
		return (uint64_t)-EFAULT;
	if (off > INT32_MAX || !ctx->skb_data || (uint64_t)off + len > ctx->skb_len) {
		memset(to, 0, len);
		return (uint64_t)-EFAULT;
	}
	memcpy(to, ctx->skb_data + off, len);
	return 0;
}
