/* checked.c - what the checked engine lets a program touch: the regions of a run (input
 * memory or context, packet, what helpers grant), and the wording of run faults.  The
 * stack frames are checked inline by the loop (interp_loop.h).  Also the rest of the
 * run context's calls for helpers (bpfrt_run_stop(), bpfrt_run_user()), which the loops
 * use too: they call nothing, so the loops (interp.c) need not call back into vm.c, the
 * file that runs them.  Design: vm.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/util.h"
#include "vm/vm.h"

static int contains(const struct brt_region *r, uint64_t addr, uint64_t size)
{
	return addr >= r->start && addr - r->start <= r->len && size <= r->len - (addr - r->start);
}

static _Atomic(brt_vm_obj_fn) obj_fn;

void brt_vm_set_obj_fn(brt_vm_obj_fn fn)
{
	obj_fn = fn;
}

int brt_vm_region_ok(const struct bpfrt_run_ctx *ctx, uint64_t addr, uint64_t size,
		     int writable)
{
	brt_vm_obj_fn fn;

	for (size_t i = 0; i < ctx->nr_regions; i++) {
		const struct brt_region *r = &ctx->regions[i];

		if ((r->writable || !writable) && contains(r, addr, size))
			return 1;
	}
	fn = obj_fn;
	return fn && fn(addr, size);
}

void bpfrt_run_stop(struct bpfrt_run_ctx *ctx, uint64_t r0)
{
	ctx->stop_r0 = r0;
	ctx->stopped = BRT_STOP_RUN;
}

void *bpfrt_run_user(struct bpfrt_run_ctx *ctx)
{
	return ctx->user;
}

int bpfrt_run_access_ok(struct bpfrt_run_ctx *ctx, const void *ptr, size_t len, int writable)
{
	uint64_t addr = (uint64_t)(uintptr_t)ptr;

	if (!ctx->checked)
		return 1;
	if (addr >= ctx->stack_lo && addr - ctx->stack_lo <= ctx->stack_hi - ctx->stack_lo &&
	    len <= ctx->stack_hi - addr)
		return 1;
	return brt_vm_region_ok(ctx, addr, len, writable);
}

int bpfrt_run_grant(struct bpfrt_run_ctx *ctx, void *ptr, size_t len, int writable)
{
	struct brt_region *r;
	uint64_t addr = (uint64_t)(uintptr_t)ptr;

	if (!ctx->checked)
		return 0;
	/* a helper called in a loop grants the same value again and again */
	for (size_t i = ctx->nr_regions; i-- > 0;) {
		r = &ctx->regions[i];
		if (r->start == addr && r->len == len && r->writable == !!writable)
			return 0;
	}
	if (ctx->nr_regions == ctx->cap_regions) {
		size_t cap = ctx->cap_regions * 2;

		if (ctx->regions_owned) {
			r = realloc(ctx->regions, cap * sizeof(*r));
		} else {
			r = malloc(cap * sizeof(*r));
			if (r)
				memcpy(r, ctx->regions, ctx->nr_regions * sizeof(*r));
		}
		if (!r) {
			errno = ENOMEM;
			return -ENOMEM;
		}
		ctx->regions = r;
		ctx->cap_regions = cap;
		ctx->regions_owned = 1;
	}
	ctx->regions[ctx->nr_regions++] =
		(struct brt_region){ .start = addr, .len = len, .writable = !!writable };
	return 0;
}

int brt_vm_fault_msg(const struct brt_fault *f, char *err, size_t errlen)
{
	static const char *const what[] = {
		[BRT_FAULT_READ] = "read",
		[BRT_FAULT_WRITE] = "write",
		[BRT_FAULT_ATOMIC] = "atomic access",
		[BRT_FAULT_MISALIGNED] = "atomic access",
	};

	switch (f->kind) {
	case BRT_FAULT_READ:
	case BRT_FAULT_WRITE:
	case BRT_FAULT_ATOMIC:
		snprintf(err, errlen, "insn %zu: %s of %u bytes at r%u%+" PRId32 " outside any %s",
			 f->insn, what[f->kind], f->size, f->reg, f->off,
			 f->kind == BRT_FAULT_READ ? "region" : "writable region");
		return -EFAULT;
	case BRT_FAULT_MISALIGNED:
		snprintf(err, errlen, "insn %zu: misaligned %s of %u bytes at r%u%+" PRId32,
			 f->insn, what[f->kind], f->size, f->reg, f->off);
		return -EFAULT;
	case BRT_FAULT_BUDGET:
		snprintf(err, errlen, "insn %zu: instruction budget of %" PRIu64 " exhausted",
			 f->insn, f->value);
		return -E2BIG;
	case BRT_FAULT_DEPTH:
		snprintf(err, errlen, "insn %zu: call stack deeper than %d frames", f->insn,
			 BRT_MAX_CALL_DEPTH);
		return -EFAULT;
	case BRT_FAULT_HELPER:
		snprintf(err, errlen, "insn %zu: call to unknown helper %" PRIu64, f->insn,
			 f->value);
		return -EFAULT;
	case BRT_FAULT_HELPER_ARG:
		snprintf(err, errlen, "insn %zu: helper %" PRIu64 " called with argument %u (r%u) "
			 "outside the run's memory or of a type only a verified program can pass",
			 f->insn, f->value, f->reg, f->reg);
		return -EFAULT;
	case BRT_FAULT_FUNC:
		snprintf(err, errlen, "insn %zu: callback to 0x%" PRIx64 ", not a function of the "
			 "program", f->insn, f->value);
		return -EFAULT;
	case BRT_FAULT_END:
		snprintf(err, errlen, "insn %zu: execution falls off the end of the program",
			 f->insn);
		return -EFAULT;
	case BRT_FAULT_UNWRITTEN_REG:
		snprintf(err, errlen, "insn %zu: r%u read before it was written", f->insn, f->reg);
		return -EFAULT;
	case BRT_FAULT_UNWRITTEN_STACK:
		snprintf(err, errlen,
			 "insn %zu: read of %u bytes at r%u%+" PRId32 " reads stack never written",
			 f->insn, f->size, f->reg, f->off);
		return -EFAULT;
	default:
		snprintf(err, errlen, "internal error: fault without a kind at insn %zu", f->insn);
		return -EFAULT;
	}
}
