/* interp.c - the interpreter: the pre-decoded program is run by a direct-threaded loop
 * (computed goto: each decoded instruction holds its handler's address) or, when
 * BPFRT_INTERP_SWITCH is defined, by a portable switch.  The loop body is interp_loop.h,
 * compiled twice: the fast engine and the checked engine.  Design: vm.h.
 */
/* labels as values (&&label, goto *p) are a GNU extension this one file is allowed */
#if defined(__GNUC__) && !defined(BPFRT_INTERP_SWITCH)
#pragma GCC diagnostic ignored "-Wpedantic"
#endif

#include <linux/filter.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"
#include "vm/vm.h"

/* Registers a bpf-to-bpf call saves; r10 moves by one frame. */
struct brt_frame {
	uint64_t r6;
	uint64_t r7;
	uint64_t r8;
	uint64_t r9;
	uint64_t loops; /* the caller's may_goto counter */
	const struct brt_dinsn *ret;
};

static inline uint64_t udiv64(uint64_t a, uint64_t b)
{
	return b ? a / b : 0;
}

static inline uint64_t umod64(uint64_t a, uint64_t b)
{
	return b ? a % b : a;
}

static inline uint64_t udiv32(uint32_t a, uint32_t b)
{
	return b ? a / b : 0;
}

static inline uint64_t umod32(uint32_t a, uint32_t b)
{
	return b ? a % b : a;
}

static inline uint64_t sdiv64(uint64_t a, uint64_t b)
{
	if (b == 0)
		return 0;
	if (b == UINT64_MAX) /* -1: INT64_MIN / -1 wraps instead of trapping */
		return 0 - a;
	return (uint64_t)((int64_t)a / (int64_t)b);
}

static inline uint64_t smod64(uint64_t a, uint64_t b)
{
	if (b == 0)
		return a;
	if (b == UINT64_MAX)
		return 0;
	return (uint64_t)((int64_t)a % (int64_t)b);
}

static inline uint64_t sdiv32(uint32_t a, uint32_t b)
{
	if (b == 0)
		return 0;
	if (b == UINT32_MAX)
		return (uint32_t)(0 - a);
	return (uint32_t)((int32_t)a / (int32_t)b);
}

static inline uint64_t smod32(uint32_t a, uint32_t b)
{
	if (b == 0)
		return a;
	if (b == UINT32_MAX)
		return 0;
	return (uint32_t)((int32_t)a % (int32_t)b);
}

static inline uint64_t bswap16_(uint64_t x)
{
	return __builtin_bswap16((uint16_t)x);
}

static inline uint64_t bswap32_(uint64_t x)
{
	return __builtin_bswap32((uint32_t)x);
}

static inline uint64_t bswap64_(uint64_t x)
{
	return __builtin_bswap64(x);
}

static inline uint64_t cmpxchg32_(uint32_t *p, uint32_t expected, uint32_t desired)
{
	/* on failure `expected` receives the current value: either way it is the old one */
	__atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expected;
}

static inline uint64_t cmpxchg64_(uint64_t *p, uint64_t expected, uint64_t desired)
{
	__atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return expected;
}

/* Is [addr, addr + size) inside the live stack frames [lo, hi)? */
static inline int in_stack(uint64_t addr, uint64_t size, uint64_t lo, uint64_t hi)
{
	return addr >= lo && addr - lo <= hi - lo - size;
}

/* Big-endian 1, 2 or 4 bytes at p. */
static inline uint64_t load_be(const uint8_t *p, unsigned size)
{
	switch (size) {
	case 1:
		return p[0];
	case 2:
		return (uint64_t)p[0] << 8 | p[1];
	default:
		return (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
	}
}

/* LD_ABS/LD_IND below offset 0: the kernel's bpf_skb_load_helper_convert_offset() turns
 * SKF_NET_OFF + k into k bytes past the network header and SKF_LL_OFF + k into k bytes
 * past the link-layer (MAC) header, both relative to skb->data (the MAC header of a
 * socket filter's skb lies before data, a tc program's network header after it), and
 * refuses lower offsets.  The run's packet (ctx->pkt) says where those headers are; a
 * run without one (a socket filter run by attach/filter.c on a captured frame) counts
 * both from the packet's start.  Returns UINT64_MAX when the bytes are not there, else
 * the value in host order.  The JIT calls it too (brt_jit_env.ld_neg). */
uint64_t brt_vm_ld_neg(struct bpfrt_run_ctx *ctx, int64_t k, uint64_t size)
{
	const struct brt_run_pkt *p = ctx->pkt;
	const uint8_t *base = ctx->skb_data, *lo = ctx->skb_data;
	int64_t room;

	if (!base || k >= 0)
		return UINT64_MAX;
	if (k >= SKF_NET_OFF) {
		k -= SKF_NET_OFF;
		if (p)
			base = p->network;
	} else if (k >= SKF_LL_OFF) {
		k -= SKF_LL_OFF;
		if (p)
			base = p->mac; /* NULL: no MAC header was set */
	} else {
		return UINT64_MAX;
	}
	if (p)
		lo = p->head;
	if (!base || base < lo)
		return UINT64_MAX;
	/* [base + k, base + k + size) must end inside the packet (k >= 0 here) */
	room = (int64_t)(ctx->skb_data + ctx->skb_len - base);
	if (room < (int64_t)size || k > room - (int64_t)size)
		return UINT64_MAX;
	return load_be(base + k, (unsigned)size);
}

/* LD_ABS/LD_IND: the kernel's skb load.  Returns 1 and the value in host order, or 0
 * when the bytes are not in the packet. */
static int pkt_load(struct bpfrt_run_ctx *ctx, int32_t off, unsigned size, uint64_t *val)
{
	if (off < 0) {
		*val = brt_vm_ld_neg(ctx, off, size);
		return *val != UINT64_MAX;
	}
	if (!ctx->skb_data || (uint64_t)off + size > ctx->skb_len)
		return 0;
	*val = load_be(ctx->skb_data + off, size);
	return 1;
}

#define BRT_LOOP_FN loop_fast
#define BRT_LOOP_CHECKED 0
#define BRT_LOOP_BUDGET 0
#include "vm/interp_loop.h"
#undef BRT_LOOP_FN
#undef BRT_LOOP_CHECKED
#undef BRT_LOOP_BUDGET

/* The fast loop again, with the run budget: a run without one pays nothing for it */
#define BRT_LOOP_FN loop_budget
#define BRT_LOOP_CHECKED 0
#define BRT_LOOP_BUDGET 1
#include "vm/interp_loop.h"
#undef BRT_LOOP_FN
#undef BRT_LOOP_CHECKED
#undef BRT_LOOP_BUDGET

/* The checked engine counts every instruction against its cap, so a charge per backward
 * jump taken is small there: it always honours the run budget */
#define BRT_LOOP_FN loop_checked
#define BRT_LOOP_CHECKED 1
#define BRT_LOOP_BUDGET 1
#include "vm/interp_loop.h"
#undef BRT_LOOP_FN
#undef BRT_LOOP_CHECKED
#undef BRT_LOOP_BUDGET

int brt_vm_interp_fast(struct brt_exec *ex, uint64_t *r0)
{
	if (ex->ctx->budget)
		return loop_budget(ex, r0, NULL);
	return loop_fast(ex, r0, NULL);
}

int brt_vm_interp_checked(struct brt_exec *ex, uint64_t *r0)
{
	return loop_checked(ex, r0, NULL);
}

void brt_vm_labels(enum brt_vm_loop loop, struct brt_vm_labels *out)
{
	memset(out, 0, sizeof(*out));
	if (loop == BRT_VM_LOOP_CHECKED)
		loop_checked(NULL, NULL, out);
	else if (loop == BRT_VM_LOOP_BUDGET)
		loop_budget(NULL, NULL, out);
	else
		loop_fast(NULL, NULL, out);
}

/* A callback from a helper (bpf_loop): the same loop, nested, on a copy of the run's
 * state that starts at `func` in the frame below the helper's caller (ctx->stack_lo, set
 * before every helper call), sharing the budget and the write tracking.  A fault inside
 * becomes the run's fault; the helper sees a stopped run and returns. */
uint64_t brt_vm_interp_call_func(struct bpfrt_run_ctx *ctx, uint64_t func, const uint64_t *args,
				 unsigned nargs)
{
	struct brt_exec *ex = ctx->call_arg, sub;
	uint64_t top = (uint64_t)(uintptr_t)(ex->stack + BRT_VM_STACK_BYTES), r0 = 0;
	uint64_t depth = (top - ctx->stack_lo) / BRT_STACK_SIZE, saved_lo = ctx->stack_lo;
	uint32_t saved_written = 0;
	unsigned saved_depth = 0;
	uint64_t a[5] = { 0 };
	int ret;

	for (unsigned i = 0; i < nargs && i < 5; i++)
		a[i] = args[i];
	if (func >= ex->n || ex->code[func].op == BRT_OP_INVALID || depth >= BRT_MAX_CALL_DEPTH) {
		ex->fault.kind = depth >= BRT_MAX_CALL_DEPTH ? BRT_FAULT_DEPTH : BRT_FAULT_FUNC;
		ex->fault.value = func;
		ex->fault.insn = SIZE_MAX; /* the loop names the helper call */
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	sub = *ex;
	sub.start = func;
	sub.base_depth = (unsigned)depth;
	sub.r1 = a[0];
	sub.r2 = a[1];
	memcpy(sub.r3_5, a + 2, sizeof(sub.r3_5));
	if (ctx->checked)
		memset((void *)(uintptr_t)(saved_lo - BRT_STACK_SIZE), ex->poison, BRT_STACK_SIZE);
	if (ex->track) {
		/* the callee sees its arguments and a fresh frame, as a bpf-to-bpf callee */
		saved_written = ex->track->written;
		saved_depth = ex->track->depth;
		ex->track->written = (1u << BPF_REG_10) | ((1u << (nargs + 1)) - 2);
		ex->track->depth = (unsigned)depth;
		memset(ex->track->stack + (BRT_VM_STACK_BYTES - (depth + 1) * BRT_STACK_SIZE) / 8, 0,
		       BRT_STACK_SIZE / 8);
	}
	ctx->call_arg = &sub; /* callbacks of the callback nest from here */
	ret = ctx->checked ? loop_checked(&sub, &r0, NULL) : brt_vm_interp_fast(&sub, &r0);
	ctx->call_arg = ex;
	ctx->stack_lo = saved_lo;
	ex->left = sub.left;
	if (ex->track) {
		ex->track->written = saved_written;
		ex->track->depth = saved_depth;
	}
	if (ret) {
		ex->fault = sub.fault;
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	/* a tail call replaced the callback's own frame: r0 is the target's, the run goes on
	 * (as the JIT's callback does) */
	if (ctx->stopped == BRT_STOP_TAIL)
		ctx->stopped = 0;
	return r0;
}
