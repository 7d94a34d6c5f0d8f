/* budget.c - the run budget every engine honours: how a run's counter (ctx->budget_left)
 * is armed, refilled and declared spent.  The counting itself is inline in the engines
 * (backward jumps in interp_loop.h and the JIT's code, callback calls in callback.c);
 * the semantics are in vm.h (struct brt_budget) and include/bpfrt/vm.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "vm/vm.h"

/* With a time budget the counter is handed out in slices, so the clock is read once per
 * slice of counted instructions, not at every back-edge: a few microseconds of run time
 * for a tight loop, which is how late a time budget may stop a run. */
#define TIME_SLICE 16384u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Move up to a slice (all of it without a time budget) from the reserve to the counter. */
static void refill(struct bpfrt_run_ctx *ctx, struct brt_budget *b)
{
	uint64_t n = b->reserve;

	if (b->deadline && n > TIME_SLICE)
		n = TIME_SLICE;
	b->reserve -= n;
	ctx->budget_left = n;
}

void brt_vm_budget_start(struct bpfrt_run_ctx *ctx, struct brt_budget *b, uint64_t insns,
			 uint64_t ns)
{
	if (!insns && !ns) {
		ctx->budget = NULL;
		ctx->budget_left = UINT64_MAX;
		return;
	}
	b->insns = insns;
	b->ns = ns;
	b->reserve = insns ? insns : UINT64_MAX;
	b->deadline = ns ? now_ns() + ns : 0;
	b->exhausted = 0;
	ctx->budget = b;
	refill(ctx, b);
}

int brt_vm_budget_slow(struct bpfrt_run_ctx *ctx)
{
	struct brt_budget *b = ctx->budget;
	uint64_t over = 0 - ctx->budget_left; /* the counter wrapped by this much */

	if (!b) {
		/* no budget: callbacks still count, from UINT64_MAX; never reached in practice */
		ctx->budget_left = UINT64_MAX;
		return 0;
	}
	if (b->exhausted)
		goto stop;
	if (b->reserve < over) {
		b->exhausted = BRT_BUDGET_INSNS;
		goto stop;
	}
	b->reserve -= over;
	if (b->deadline && now_ns() >= b->deadline) {
		b->exhausted = BRT_BUDGET_TIME;
		goto stop;
	}
	refill(ctx, b);
	if (ctx->budget_left)
		return 0;
	b->exhausted = BRT_BUDGET_INSNS;
stop:
	ctx->budget_left = 0;
	bpfrt_run_stop(ctx, 0);
	return 1;
}

int brt_vm_budget_msg(const struct bpfrt_run_ctx *ctx, char *err, size_t errlen)
{
	const struct brt_budget *b = ctx->budget;

	if (!b || !b->exhausted)
		return 0;
	if (b->exhausted == BRT_BUDGET_TIME)
		snprintf(err, errlen, "run budget of %" PRIu64 " ns exhausted", b->ns);
	else
		snprintf(err, errlen, "run budget of %" PRIu64 " instructions exhausted", b->insns);
	return -ETIME;
}
