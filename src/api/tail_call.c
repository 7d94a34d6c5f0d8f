/* tail_call.c - bpf_tail_call(): jump to the program in slot r3 of prog array r2 with the
 * same context.  The callee runs nested, with the caller's context, packet and regions,
 * and its result ends the caller (bpfrt_run_stop()), which is what replacing the running
 * program amounts to.  An empty slot, an index out of range or more than 33 tail calls in
 * a chain (MAX_TAIL_CALL_CNT) fall through, as in the kernel.
 */
#include "api/api.h"
#include "util/util.h"
#include "vm/vm.h"

#define MAX_TAIL_CALL_CNT 33

static _Thread_local int chain;

uint64_t brt_helper_tail_call(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	struct brt_run_opts o = { 0 };
	struct brt_prog *callee;
	struct brt_obj *obj;
	uint64_t r0 = 0;
	char msg[160];
	int err;

	(void)r4, (void)r5;
	if (!map || r3 > UINT32_MAX || chain >= MAX_TAIL_CALL_CNT)
		return 0;
	obj = brt_prog_array_get(map, (uint32_t)r3);
	if (!obj)
		return 0;
	callee = (struct brt_prog *)(void *)obj;
	o.r1 = r1;
	o.regions = ctx->regions;
	o.nr_regions = ctx->nr_regions;
	o.skb_data = ctx->skb_data;
	o.skb_len = ctx->skb_len;
	o.user = &callee->pm;
	chain++;
	err = brt_vm_run_opts(callee->vm, &o, &r0, msg, sizeof(msg));
	chain--;
	if (err) {
		brt_print(BPFRT_WARN, "bpfrt: tail call: %s\n", msg);
		r0 = 0;
	}
	bpfrt_run_stop(ctx, r0);
	return 0;
}
