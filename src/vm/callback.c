/* callback.c - helpers that call back into the program: bpf_loop() runs a function of
 * the program (named by the instruction index lddw BPF_PSEUDO_FUNC loads) up to nr_loops
 * times.  Each engine supplies the call itself (ctx->call_func: a nested interpreter loop,
 * or a JIT function's C entry); this file has the helpers' semantics, which are the
 * kernel's (kernel/bpf/bpf_iter.c).
 */
#include <errno.h>

#include "vm/vm.h"

/* The kernel's BPF_MAX_LOOPS: larger counts are refused with -E2BIG. */
#define BRT_MAX_LOOPS (8u * 1024 * 1024)

uint64_t brt_vm_call_func(struct bpfrt_run_ctx *ctx, uint64_t func, const uint64_t *args,
			  unsigned nargs)
{
	if (!ctx->call_func) {
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	/* every helper that calls back passes here: one call is one count of the run budget,
	 * so nested bpf_loop()s cannot run for weeks under a budget (the callback's own loops
	 * count at their back-edges) */
	if (brt_vm_budget_spend(ctx, 1))
		return 0;
	return ctx->call_func(ctx, func, args, nargs);
}

/* long bpf_loop(u32 nr_loops, void *callback_fn, void *callback_ctx, u64 flags): the
 * callback gets (index, callback_ctx); a non-zero return ends the loop early.  Returns the
 * number of calls made, -EINVAL for flags, -E2BIG for more than BRT_MAX_LOOPS. */
uint64_t brt_helper_loop(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	uint32_t nr_loops = (uint32_t)r1, i;
	uint64_t args[2] = { 0, r3 };

	(void)r5;
	if (r4)
		return (uint64_t)-EINVAL;
	if (nr_loops > BRT_MAX_LOOPS)
		return (uint64_t)-E2BIG;
	for (i = 0; i < nr_loops; i++) {
		uint64_t ret;

		args[0] = i;
		ret = brt_vm_call_func(ctx, r2, args, 2);
		if (ctx->stopped)
			return 0;
		if (ret)
			return (uint64_t)i + 1;
	}
	return i;
}
