/* jit.c - the x86-64 JIT's driver: splits the program into functions, checks what the
 * code generator relies on, runs the emission passes until jump sizes settle, and maps the
 * result read+exec.
 *
 * Theory of operation
 *
 * Registers.  Every eBPF register lives in one x86 register for the whole run (regmap.c
 * explains the choice), so instructions translate one by one, mostly to one or two
 * machine instructions, with no spills.
 *
 * Frames.  The C caller (brt_jit_call) enters the main function with r1 in rdi, r2 in rsi
 * and the run ctx in rdx.  The main prologue pushes the callee-saved registers that any
 * function of the program uses, then, if the program calls anything or loads packets, 24
 * bytes of slots (ctx, callx id, program) whose address it keeps in r12, the ANCHOR, for
 * the whole run.  A function that uses r10 gets 512 bytes below its pushes, with rbp (r10)
 * pointing at their top.  Functions reached by bpf-to-bpf calls (x86 `call`) push what
 * they use themselves and get their own 512 bytes, so r6-r9 and r10 survive calls, as
 * eBPF requires.  rsp stays 16-byte aligned at every call.  Early exits (a helper stopped
 * the run, LD_ABS out of bounds) jump to a stub that resets rsp from the ANCHOR, which
 * is valid at any depth, and returns through the main epilogue.
 *
 * Tail calls.  bpf_tail_call is a helper call like any other (the helper finds the target
 * and counts the chain); when it leaves a code address in the run ctx, the caller unwinds
 * like an early exit but ends with a jump into the target's entry instead of a return, so
 * the target returns straight to brt_jit_call()'s caller and a chain of 33 tail calls
 * uses no more native stack than one program.  A target that is not JIT code runs nested
 * inside the helper, which then stops the caller with its result.
 *
 * Packet filters.  A program whose one function calls nothing but LD_ABS/LD_IND and never
 * names r2-r5 (every classic filter converted by src/attach/cbpf.c) keeps the packet's
 * start and length in r2/r3's registers for the whole run, so a packet load is a compare,
 * a load and a byte swap, with no ANCHOR.  Its exits all go to STUB_DONE, which either
 * returns or, in a batch run, stores r0 and loads the next packet: one entry, prologue
 * and epilogue per batch instead of per packet (calls.c, pkt_regs_prologue).
 *
 * Checks.  The generated code trusts the program the way the kernel's JIT trusts
 * verified code: no bounds checks on memory, no instruction budget.  What the JIT checks
 * at compile time is what its own frames depend on: functions do not jump into each
 * other or fall off their end, calls do not recurse and nest at most 8 frames deep, and
 * helper ids resolve.
 *
 * Optimisation passes (opt.c, passes.def) run once, after the frames are planned: they only
 * record per instruction what to emit instead (a fused idiom at its first instruction,
 * nothing at the others, never across a jump target), so the emission below is unchanged.
 *
 * Passes.  Jumps have a short (rel8) and a near (rel32) form.  The first pass emits all
 * jumps short; each later pass measures every short jump against the previous layout and
 * turns it near, for good, when it does not fit.  Sizes only grow, so the loop ends; it
 * stops at the first pass where nothing grew, whose code is then exact because every
 * offset equals the previous pass's (after MAX_PASSES every jump is made near).
 */
#include <cpuid.h>
#include <errno.h>
#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc 2.33: the features ld.so read at start */
#define HAVE_X86_PLATFORM 1
#endif
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "jit/x86_64/x86.h"

#define MAX_PASSES 24
#define MAX_CODE_BYTES (256u << 20)

static int reserve(struct jit_state *st, size_t more)
{
	struct jit_buf *b = &st->buf;
	size_t cap;
	uint8_t *p;

	if (b->len + more <= b->cap)
		return 0;
	if (b->len + more > MAX_CODE_BYTES) {
		snprintf(st->err, st->errlen, "program too large for the JIT (over %u MiB of code)",
			 MAX_CODE_BYTES >> 20);
		return -E2BIG;
	}
	cap = b->cap ? b->cap * 2 : 4096;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		snprintf(st->err, st->errlen, "out of memory for %zu bytes of code", cap);
		return -ENOMEM;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

/* a jump: a row with a target that is not a call */
static bool is_branch(enum brt_op op)
{
	return brt_isa_has_target(op) && op != BRT_OP_call_local;
}

static bool is_call(enum brt_op op)
{
	return op == BRT_OP_call_helper || op == BRT_OP_callx || op == BRT_OP_call_local ||
	       brt_ops[op].shape == BRT_SHAPE_LD_ABS || brt_ops[op].shape == BRT_SHAPE_LD_IND;
}

/* Decode every instruction (the caller has run brt_isa_check_prog(), but the JIT must not
 * emit garbage if it did not) and mark where functions start. */
static int decode(struct jit_state *st, uint16_t *ops, uint8_t *starts)
{
	const char *why = "not an instruction";

	starts[0] = 1;
	for (size_t pc = 0; pc < st->n; pc++) {
		enum brt_op op = st->env->ops ? (enum brt_op)st->env->ops[pc]
					      : brt_isa_decode(&st->insns[pc], st->n - pc, &why);
		int64_t t;

		if (op == BRT_OP_INVALID) {
			snprintf(st->err, st->errlen, "insn %zu: %s", pc, why);
			return -EINVAL;
		}
		ops[pc] = (uint16_t)op;
		if (op == BRT_OP_lddw && st->insns[pc].src_reg == BPF_PSEUDO_FUNC) {
			/* a callback: its own function, with a C entry (calls.c) */
			t = (int64_t)brt_isa_lddw_value(&st->insns[pc], pc);
			if (t < 0 || (uint64_t)t >= st->n) {
				snprintf(st->err, st->errlen, "insn %zu: function out of range", pc);
				return -EINVAL;
			}
			starts[t] |= 2;
		}
		if (op == BRT_OP_lddw)
			ops[++pc] = BRT_OP_INVALID;
		else if (brt_isa_has_target(op)) {
			t = brt_isa_jump_target(&st->insns[pc], op, pc);
			if (t < 0 || (uint64_t)t >= st->n) {
				snprintf(st->err, st->errlen, "insn %zu: jump out of range", pc);
				return -EINVAL;
			}
			if (op == BRT_OP_call_local)
				starts[t] |= 1;
		}
		if ((brt_ops[op].shape == BRT_SHAPE_LD_ABS || brt_ops[op].shape == BRT_SHAPE_LD_IND) &&
		    (st->env->pkt_data_off < 0 || st->env->pkt_len_off < 0)) {
			snprintf(st->err, st->errlen, "insn %zu: packet load without a packet", pc);
			return -EINVAL;
		}
	}
	return 0;
}

static size_t func_of(const struct jit_state *st, size_t pc)
{
	size_t lo = 0, hi = st->nfuncs;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (st->funcs[mid].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Jumps stay inside their function, every function ends with exit or ja, lddw's second
 * slot is never a target. */
static int check_funcs(struct jit_state *st, const uint16_t *ops)
{
	for (size_t k = 0; k < st->nfuncs; k++) {
		const struct jit_func *f = &st->funcs[k];
		size_t last = f->end - 1;

		if (ops[last] == BRT_OP_INVALID && last > f->start)
			last--;
		if (ops[last] != BRT_OP_exit && ops[last] != BRT_OP_ja && ops[last] != BRT_OP_ja32) {
			snprintf(st->err, st->errlen, "insn %zu: last insn is not an exit or jmp",
				 f->end - 1);
			return -EINVAL;
		}
		for (size_t pc = f->start; pc < f->end; pc++) {
			int64_t t;

			if (ops[pc] == BRT_OP_INVALID || !is_branch(ops[pc]))
				continue;
			t = brt_isa_jump_target(&st->insns[pc], ops[pc], pc);
			if ((size_t)t < f->start || (size_t)t >= f->end) {
				snprintf(st->err, st->errlen, "insn %zu: jump out of its function", pc);
				return -EINVAL;
			}
			if (ops[t] == BRT_OP_INVALID) {
				snprintf(st->err, st->errlen, "insn %zu: jump into the middle of lddw",
					 pc);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Deepest chain of frames starting at function k; -1 on recursion.  depth[] caches
 * results (0 = unknown), on_path[] detects cycles.  Recursion depth is bounded by the
 * frame limit, so this recursion is too. */
static int frames_from(struct jit_state *st, const uint16_t *ops, size_t k, int *depth,
		       uint8_t *on_path, size_t *bad_pc)
{
	const struct jit_func *f = &st->funcs[k];
	int best = 0;

	if (depth[k])
		return depth[k];
	if (on_path[k])
		return -1;
	on_path[k] = 1;
	for (size_t pc = f->start; pc < f->end && best >= 0; pc++) {
		size_t callee;
		int d;

		if (ops[pc] != BRT_OP_call_local)
			continue;
		callee = func_of(st, (size_t)brt_isa_jump_target(&st->insns[pc], ops[pc], pc));
		d = frames_from(st, ops, callee, depth, on_path, bad_pc);
		if (d < 0 || d >= BRT_MAX_CALL_DEPTH) {
			if (*bad_pc == SIZE_MAX)
				*bad_pc = pc;
			best = -1;
		} else if (d > best) {
			best = d;
		}
	}
	on_path[k] = 0;
	depth[k] = best < 0 ? -1 : best + 1;
	return depth[k];
}

static int check_calls(struct jit_state *st, const uint16_t *ops)
{
	int *depth = calloc(st->nfuncs, sizeof(*depth));
	uint8_t *on_path = calloc(st->nfuncs, 1);
	size_t bad_pc = SIZE_MAX;
	int rc = 0;

	if (!depth || !on_path) {
		snprintf(st->err, st->errlen, "out of memory");
		rc = -ENOMEM;
		goto out_free;
	}
	if (frames_from(st, ops, 0, depth, on_path, &bad_pc) < 0) {
		snprintf(st->err, st->errlen,
			 "insn %zu: recursive call or more than %d nested frames", bad_pc,
			 BRT_MAX_CALL_DEPTH);
		rc = -EINVAL;
	}
out_free:
	free(depth);
	free(on_path);
	return rc;
}

/* Saved registers, stack and alignment padding of each function. */
/* The run budget's charge before instruction pc: the length of the loop a backward jump
 * closes, 0 for anything else. */
static uint32_t budget_charge(const struct jit_state *st, const uint16_t *ops, size_t pc)
{
	int64_t t;

	if (ops[pc] == BRT_OP_INVALID || !is_branch(ops[pc]))
		return 0;
	t = brt_isa_jump_target(&st->insns[pc], ops[pc], pc);
	return t <= (int64_t)pc ? (uint32_t)((int64_t)pc + 1 - t) : 0;
}

/* Pass redzone: a program of one function that calls nothing (no helper, no local call,
 * no callx or tail call, hence no ANCHOR) and names r10 only as the base of loads and
 * stores within 128 bytes below it needs no frame: System V keeps the 128 bytes below
 * rsp of a leaf function from signal handlers, so r10 is rsp itself there, and the
 * prologue saves no rbp, sets up no rbp and moves no rsp (5 instructions a run fewer). */
/* One function calling nothing: no helper, bound lookup, local call, callx or tail call,
 * hence no ANCHOR, no budget, no packet registers. */
static bool leaf_program(const struct jit_state *st)
{
	const struct jit_func *f = &st->funcs[0];

	return st->nfuncs == 1 && !st->anchor && !st->pkt_regs && !st->budget && !f->has_calls &&
	       !f->callback && !st->uses_callx && !st->uses_tail_call;
}

static void redzone(struct jit_state *st, const uint16_t *ops)
{
	struct jit_func *f = &st->funcs[0];

	if (!(st->passes & BRT_JIT_PASS(redzone)) || !f->stack || f->loops || !leaf_program(st))
		return;
	for (size_t pc = 0; pc < st->n; pc++) {
		const struct bpf_insn *in = &st->insns[pc];
		struct brt_isa_regs r;
		unsigned shape, size;

		if (ops[pc] == BRT_OP_INVALID)
			continue;
		brt_isa_regs_op(in, (enum brt_op)ops[pc], &r);
		if (!(r.named & (1u << BPF_REG_10)))
			continue;
		shape = brt_ops[ops[pc]].shape;
		size = brt_isa_access_size(brt_ops[ops[pc]].opcode);
		if (!((shape == BRT_SHAPE_LOAD && in->src_reg == BPF_REG_10 &&
		       in->dst_reg != BPF_REG_10) ||
		      (shape == BRT_SHAPE_STORE_IMM && in->dst_reg == BPF_REG_10) ||
		      (shape == BRT_SHAPE_STORE_REG && in->dst_reg == BPF_REG_10 &&
		       in->src_reg != BPF_REG_10)) ||
		    in->off < -128 || in->off + (int32_t)size > 0)
			return;
	}
	f->redzone = true;
	f->stack = false;
	f->frame = 0;
	f->saved &= (uint16_t)~(1u << RBP);
}

/* Pass leafregs: in a program that calls nothing and whose instructions all leave the
 * scratch registers alone, r6-r9 (callee-saved in eBPF, so in rbx and r13-r15, which the
 * prologue must push and the exit pop) live in TMP, AUX and TMP2 instead, caller-saved
 * in System V: up to three registers a run not pushed and popped.  Not under constant
 * blinding (its constants are rebuilt in AUX). */
static void leafregs(struct jit_state *st, const uint16_t *ops)
{
	static const uint8_t spare[] = { TMP, AUX, TMP2 };
	struct jit_func *f = &st->funcs[0];
	unsigned named = 0, k = 0;

	if (!(st->passes & BRT_JIT_PASS(leafregs)) || st->blind_seed || !leaf_program(st))
		return;
	for (size_t pc = 0; pc < st->n; pc++) {
		struct brt_isa_regs r;

		if (ops[pc] == BRT_OP_INVALID)
			continue;
		if (!brt_jit_scratch_free(st, (enum brt_op)ops[pc]))
			return;
		brt_isa_regs_op(&st->insns[pc], (enum brt_op)ops[pc], &r);
		named |= r.named;
	}
	for (unsigned r = BPF_REG_6; r <= BPF_REG_9 && k < sizeof(spare); r++) {
		if (!(named & (1u << r)))
			continue;
		f->saved &= (uint16_t)~(1u << st->regmap[r]);
		st->regmap[r] = spare[k++];
	}
}

static void plan_frames(struct jit_state *st, const uint16_t *ops)
{
	uint16_t all = 0;

	/* only code that can repeat itself counts; the counter is in the run ctx (ANCHOR) */
	for (size_t pc = 0; (st->env->flags & BRT_JIT_BUDGET) && pc < st->n; pc++)
		if (budget_charge(st, ops, pc))
			st->budget = true;
	/* a batch runs the body once per packet without its prologue, which sets may_goto's
	 * counter */
	st->pkt_regs = !st->budget && brt_jit_pkt_regs_fit(st->insns, st->n, ops);
	for (size_t pc = 0; pc < st->n; pc++)
		if (ops[pc] == BRT_OP_may_goto)
			st->pkt_regs = false;
	if (st->budget)
		st->anchor = true;
	for (size_t k = 0; k < st->nfuncs; k++)
		if (st->funcs[k].callback) /* its C entry needs the ANCHOR frame */
			st->pkt_regs = false;
	for (size_t k = 0; k < st->nfuncs; k++) {
		struct jit_func *f = &st->funcs[k];
		bool calls = false;

		f->saved = brt_jit_regs_used(st->insns, f->start, f->end, &f->stack);
		for (size_t pc = f->start; pc < f->end; pc++)
			if (ops[pc] == BRT_OP_may_goto)
				f->loops = f->stack = true;
		for (size_t pc = f->start; pc < f->end; pc++) {
			if (ops[pc] == BRT_OP_INVALID || !is_call(ops[pc]) || st->pkt_regs)
				continue;
			calls = true;
			/* a bound lookup or an inlined helper calls no helper, a leaf helper
			 * is given no run ctx and cannot stop the run: none needs the ANCHOR
			 * frame */
			if (!brt_jit_is_bound(st, pc) && !brt_jit_is_leaf_call(st, pc, ops[pc]) &&
			    !brt_jit_is_inline_site(st, pc, ops[pc]))
				st->anchor = true;
		}
		/* a callback's C entry sets ANCHOR up: the main prologue must save it */
		if (f->callback)
			st->anchor = true;
		if (f->stack)
			f->saved |= 1u << RBP;
		all |= f->saved;
		f->frame = f->stack ? BRT_STACK_SIZE + (f->loops ? 8u : 0u) : 0;
		f->has_calls = calls;
	}
	for (size_t pc = 0; pc < st->n; pc++) {
		if (ops[pc] == BRT_OP_callx)
			st->uses_callx = true;
		if (ops[pc] == BRT_OP_call_helper && st->insns[pc].imm == BPF_FUNC_tail_call)
			st->uses_tail_call = true;
	}
	redzone(st, ops);
	leafregs(st, ops);
	if (leaf_program(st))
		all = st->funcs[0].saved; /* the only function */
	/* an early exit from any depth restores through the main epilogue */
	st->funcs[0].saved = all | (st->anchor ? 1u << ANCHOR : 0) |
			     (st->pkt_regs ? 1u << BATCH_POS : 0);
	for (size_t k = 0; k < st->nfuncs; k++) {
		struct jit_func *f = &st->funcs[k];
		unsigned pushed = (unsigned)__builtin_popcount(f->saved) * 8;
		unsigned above = 8 + pushed + (k == 0 && st->anchor ? JIT_SLOTS_SIZE : 0);

		/* rsp must be 16-byte aligned at each call made from this function */
		if (f->has_calls && (above + f->frame) % 16)
			f->frame += 8;
	}
}

static int split_funcs(struct jit_state *st, const uint8_t *starts)
{
	size_t k = 0;

	st->nfuncs = 0;
	for (size_t pc = 0; pc < st->n; pc++)
		st->nfuncs += !!starts[pc];
	st->funcs = calloc(st->nfuncs, sizeof(*st->funcs));
	if (!st->funcs) {
		snprintf(st->err, st->errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t pc = 0; pc < st->n; pc++) {
		if (!starts[pc])
			continue;
		if (k)
			st->funcs[k - 1].end = pc;
		st->funcs[k].callback = starts[pc] & 2;
		st->funcs[k++].start = pc;
	}
	st->funcs[k - 1].end = st->n;
	return 0;
}

static int run_pass(struct jit_state *st, const uint16_t *ops)
{
	int rc;

	st->buf.len = 0;
	st->ncalls = 0;
	st->grew = false;
	for (st->cur = 0; st->cur < st->nfuncs; st->cur++) {
		const struct jit_func *f = &st->funcs[st->cur];

		rc = reserve(st, JIT_MAX_INSN_BYTES);
		if (rc)
			return rc;
		st->entry[f->start] = (uint32_t)st->buf.len;
		if (st->cur == 0 && !st->pkt_regs)
			brt_jit_emit_seed_main(st); /* inline.c: before the pushes */
		brt_jit_emit_prologue(st, f);
		for (size_t pc = f->start; pc < f->end; pc++) {
			rc = reserve(st, JIT_MAX_INSN_BYTES + JIT_ALIGN_MAX);
			if (rc)
				return rc;
			if (st->align && st->align[pc]) /* pass align: nothing falls into it */
				emit_align(&st->buf);
			st->off[pc] = (uint32_t)st->buf.len;
			if (ops[pc] == BRT_OP_INVALID) /* second slot of lddw */
				continue;
			/* plans are never jumps, but for jumpfold's and eqset's, which the
			 * jump's own emitter reads */
			if (st->plan && st->plan[pc].kind != PLAN_NONE &&
			    !brt_jit_plan_is_jump(st->plan[pc].kind)) {
				brt_jit_emit_plan(st, pc);
				continue;
			}
			if (st->budget && budget_charge(st, ops, pc)) {
				rc = reserve(st, JIT_BUDGET_BYTES);
				if (rc)
					return rc;
				brt_jit_emit_budget(st, budget_charge(st, ops, pc));
			}
			rc = brt_jit_emit_insn(st, pc, (enum brt_op)ops[pc]);
			if (rc)
				return rc;
		}
	}
	st->off[st->n] = (uint32_t)st->buf.len;
	rc = reserve(st, JIT_MAX_INSN_BYTES);
	if (rc)
		return rc;
	brt_jit_emit_prandom_stub(st); /* first of the stubs: stubs_off */
	brt_jit_emit_stubs(st);
	rc = reserve(st, JIT_BUDGET_BYTES);
	if (rc)
		return rc;
	brt_jit_emit_budget_stub(st);
	for (st->cur = 0; st->cur < st->nfuncs; st->cur++) {
		struct jit_func *f = &st->funcs[st->cur];

		if (!f->callback)
			continue;
		rc = reserve(st, JIT_MAX_INSN_BYTES);
		if (rc)
			return rc;
		f->cb_entry = (uint32_t)st->buf.len;
		brt_jit_emit_seed_cb(st); /* inline.c */
		brt_jit_emit_cb_entry(st, f);
	}
	return 0;
}

static void swap_u32p(uint32_t **a, uint32_t **b)
{
	uint32_t *t = *a;

	*a = *b;
	*b = t;
}

static int emit_all(struct jit_state *st, const uint16_t *ops)
{
	size_t prev_len;
	int rc;

	st->first_pass = true;
	rc = run_pass(st, ops);
	st->first_pass = false;
	for (int pass = 1; !rc; pass++) {
		swap_u32p(&st->off, &st->prev_off);
		swap_u32p(&st->entry, &st->prev_entry);
		memcpy(st->prev_stub, st->stub, sizeof(st->stub));
		prev_len = st->buf.len;
		rc = run_pass(st, ops);
		if (!rc && !st->grew && st->buf.len == prev_len)
			break;
		if (pass == MAX_PASSES)
			memset(st->is_long, 1, st->n);
	}
	return rc;
}

/* The target of the patchable call at code offset off (brt_jit_emit_call's movabs). */
static uint64_t call_target(const uint8_t *code, uint32_t off)
{
	uint64_t t;

	memcpy(&t, code + off + 2, 8);
	return t;
}

static bool call_reaches(uint64_t from_end, uint64_t target)
{
	return is_simm32((int64_t)(target - from_end));
}

/* Where the last mapping placed near the called functions ended: the next one asks for
 * the space after it.  0: start again below the first call's target. */
static _Atomic uintptr_t near_cursor;
#define NEAR_DISTANCE (1ull << 28) /* below the functions, away from the heap above them */

/* An address hint for code whose calls should reach their targets with rel32 (the
 * kernel takes it when the range is free, else maps elsewhere: the calls then stay
 * indirect). */
static void *near_hint(const struct jit_state *st)
{
	uint64_t t, cur;

	if (!st->ncalls)
		return NULL;
	t = call_target(st->buf.p, st->calls[0]);
	cur = atomic_load(&near_cursor);
	if (cur && call_reaches(cur, t) && call_reaches(cur + (1u << 26), t))
		return (void *)(uintptr_t)cur;
	return t > NEAR_DISTANCE ? (void *)(uintptr_t)((t - NEAR_DISTANCE) & ~0xfffffull) : NULL;
}

/* Each patchable call whose target is within rel32 of the mapped code becomes a 7-byte
 * nop and call rel32: the same 12 bytes, so no offset moves, the same return address. */
static void patch_calls(struct jit_state *st, uint8_t *mem)
{
	static const uint8_t nop7[7] = { 0x0f, 0x1f, 0x80, 0, 0, 0, 0 };

	for (size_t i = 0; i < st->ncalls; i++) {
		uint32_t off = st->calls[i];
		uint64_t end = (uint64_t)(uintptr_t)mem + off + JIT_CALL_BYTES;
		uint64_t t = call_target(mem, off);
		int32_t rel;

		if (!call_reaches(end, t))
			continue;
		rel = (int32_t)(int64_t)(t - end);
		memcpy(mem + off, nop7, sizeof(nop7));
		mem[off + 7] = 0xe8;
		memcpy(mem + off + 8, &rel, 4);
	}
}

static int map_code(struct jit_state *st, struct brt_jit_prog *p)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = (st->buf.len + (size_t)page - 1) & ~((size_t)page - 1);
	void *mem = mmap(near_hint(st), size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		snprintf(st->err, st->errlen, "cannot map %zu bytes for code", size);
		return -ENOMEM;
	}
	memcpy(mem, st->buf.p, st->buf.len);
	if (st->ncalls) {
		uint64_t t = call_target(mem, st->calls[0]);
		uintptr_t m = (uintptr_t)mem;

		atomic_store(&near_cursor, call_reaches(m + size, t) ? m + size : 0);
		patch_calls(st, mem);
	}
	/* W^X: the mapping is never writable and executable at once */
	if (mprotect(mem, size, PROT_READ | PROT_EXEC)) {
		int rc = -errno;

		munmap(mem, size);
		snprintf(st->err, st->errlen, "cannot make code executable");
		return rc;
	}
	p->code = mem;
	memcpy(&p->head.entry, &mem, sizeof(mem)); /* data to code pointer, as dlsym does */
	p->code_size = st->buf.len;
	p->map_size = size;
	return 0;
}

static int alloc_state(struct jit_state *st)
{
	size_t words = st->n + 1;

	st->off = calloc(words, sizeof(uint32_t));
	st->prev_off = calloc(words, sizeof(uint32_t));
	st->entry = calloc(words, sizeof(uint32_t));
	st->prev_entry = calloc(words, sizeof(uint32_t));
	st->is_long = calloc(words, 1);
	if (!st->off || !st->prev_off || !st->entry || !st->prev_entry || !st->is_long) {
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
		return -ENOMEM;
	}
	return 0;
}

/* The CPU features the code generator may use: CPUID.1:ECX bit 22, movbe (pass bswap),
 * and CPUID.(7,0):EBX bit 8, bmi2 (shifts by a register without rcx).  cpuid traps to
 * the hypervisor in a VM, ~10 us each on this one (#17 item 3: three of them were ~2 % of a
 * `bpfrt prog loadall` of eight tiny programs), so glibc's copy of the bits, read once by
 * ld.so at start, answers where there is one; else cpuid, once per process (the answer
 * cannot change while we run).  Never __builtin_cpu_supports(): linking it brings
 * libgcc's __cpu_indicator_init, a constructor asking a dozen leaves at the start of every
 * process, compile or not (~10 % of that loadall). */
enum { CPU_KNOWN = 1, CPU_MOVBE = 2, CPU_BMI2 = 4 };

static int cpu_features(void)
{
	static _Atomic int known; /* 0: not asked yet, else CPU_KNOWN | the features */
	int k = atomic_load_explicit(&known, memory_order_relaxed);

	if (!k) {
		k = CPU_KNOWN;
#ifdef HAVE_X86_PLATFORM
		if (CPU_FEATURE_PRESENT(MOVBE))
			k |= CPU_MOVBE;
		if (CPU_FEATURE_PRESENT(BMI2))
			k |= CPU_BMI2;
#else
		unsigned a, b, c, d;

		if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 22)))
			k |= CPU_MOVBE;
		if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 8)))
			k |= CPU_BMI2;
#endif
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k;
}

static void free_state(struct jit_state *st)
{
	free(st->off);
	free(st->prev_off);
	free(st->entry);
	free(st->prev_entry);
	free(st->is_long);
	free(st->funcs);
	free(st->plan);
	free(st->align);
	free(st->prandom_run);
	free(st->ckeys);
	free(st->consts);
	free(st->calls);
	free(st->buf.p);
}

/* What the code generator relies on (the file comment's "Checks"): decoded, functions
 * split, no jump between functions, no recursion, at most 8 frames.  Every refusal a
 * compile can make for a program's own sake comes from here or from reserve()'s size cap
 * (code_fits()); the passes and the emitters after it fail only for memory (or for a
 * helper id the table lacks, which BRT_JIT_CHECK's placeholder table always has). */
static int check_structure(struct jit_state *st, uint16_t *ops)
{
	uint8_t *starts = calloc(st->n, 1);
	int rc;

	if (!starts) {
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
		return -ENOMEM;
	}
	rc = decode(st, ops, starts);
	if (!rc)
		rc = split_funcs(st, starts);
	free(starts);
	if (!rc)
		rc = check_funcs(st, ops);
	if (!rc)
		rc = check_calls(st, ops);
	return rc;
}

/* Can n instructions never reach reserve()'s cap?  run_pass() reserves before each
 * instruction (JIT_MAX_INSN_BYTES + JIT_ALIGN_MAX, and JIT_BUDGET_BYTES more where the
 * budget is counted) and before each function's prologue and callback entry and the
 * stubs, and every emitter stays within what was reserved (or the buffer would overflow):
 * at most n functions, so 3n + 2 reservations of at most the three together. */
static bool code_fits(size_t n)
{
	const size_t most = JIT_MAX_INSN_BYTES + JIT_ALIGN_MAX + JIT_BUDGET_BYTES;

	return n <= (MAX_CODE_BYTES / most - 2) / 3;
}

static int analyse(struct jit_state *st, uint16_t *ops)
{
	int rc = brt_jit_bind_lookups(st, ops);

	if (!rc)
		plan_frames(st, ops);
	if (!rc)
		brt_jit_plan_inline(st, ops);
	if (!rc)
		rc = brt_jit_optimise(st, ops);
	return rc;
}

int brt_jit_compile(const struct bpf_insn *insns, size_t n, const struct brt_jit_env *env,
		    struct brt_jit_prog **out, char *err, size_t errlen)
{
	static const struct brt_jit_env no_env = { .pkt_data_off = -1, .pkt_len_off = -1 };
	struct jit_state st = { .insns = insns, .n = n, .env = env ? env : &no_env,
				.err = err, .errlen = errlen };
	struct brt_jit_prog *p;
	uint16_t *ops = NULL;
	int rc;

	*out = NULL;
	if (st.env->pkt_data_off >= JIT_NO_CTX_WORDS * 8 - 8 ||
	    st.env->pkt_len_off >= JIT_NO_CTX_WORDS * 8 - 8) {
		snprintf(err, errlen, "packet field offsets %d/%d beyond the run context",
			 st.env->pkt_data_off, st.env->pkt_len_off);
		return -EINVAL;
	}
	if ((st.env->flags & BRT_JIT_BUDGET) && !st.env->budget_slow) {
		snprintf(err, errlen, "run budget without a function to call when it runs out");
		return -EINVAL;
	}
	if (!n || n > UINT32_MAX / 2) {
		snprintf(err, errlen, "program has %zu instructions", n);
		return n ? -E2BIG : -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	ops = calloc(n, sizeof(*ops));
	if (!p || !ops) {
		snprintf(err, errlen, "out of memory for %zu instructions", n);
		rc = -ENOMEM;
		goto out_free;
	}
	st.prog = p;
	memcpy(st.regmap, brt_jit_reg2x86, sizeof(st.regmap));
	st.passes = brt_jit_passes_parse(getenv("BPFRT_JIT_PASSES")) & ~st.env->passes_off;
	st.bmi2 = !(st.env->flags & BRT_JIT_NO_BMI2) && (cpu_features() & CPU_BMI2);
	st.movbe = cpu_features() & CPU_MOVBE;
	if (st.env->flags & BRT_JIT_BLIND) {
		if (getrandom(&st.blind_seed, sizeof(st.blind_seed), 0) != sizeof(st.blind_seed))
			st.blind_seed = (uint64_t)(uintptr_t)p ^ (uint64_t)time(NULL);
		st.blind_seed |= 1;
	}
	p->helper = st.env->helper;
	p->helper_arg = st.env->helper_arg;
	p->n = n;
	rc = check_structure(&st, ops);
	/* only whether it would compile: it would, unless it is big enough for the size cap
	 * (then the whole compile says) */
	if (!rc && (st.env->flags & BRT_JIT_CHECK) && code_fits(n))
		goto out_free;
	if (!rc)
		rc = alloc_state(&st);
	if (!rc)
		rc = analyse(&st, ops);
	if (!rc)
		rc = emit_all(&st, ops);
	if (!rc && (st.env->flags & BRT_JIT_CHECK))
		goto out_free; /* compiles: nothing to map */
	if (!rc)
		rc = map_code(&st, p);
	if (rc)
		goto out_free;
	p->func_insn = calloc(st.nfuncs, sizeof(uint32_t));
	p->func_entry = calloc(st.nfuncs, sizeof(uint32_t));
	p->func_cb = calloc(st.nfuncs, sizeof(uint32_t));
	if (!p->func_insn || !p->func_entry || !p->func_cb) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		munmap(p->code, p->map_size);
		free(p->func_insn);
		free(p->func_entry);
		free(p->func_cb);
		goto out_free;
	}
	for (size_t k = 0; k < st.nfuncs; k++) {
		p->func_insn[k] = (uint32_t)st.funcs[k].start;
		p->func_entry[k] = st.entry[st.funcs[k].start];
		p->func_cb[k] = st.funcs[k].callback ? st.funcs[k].cb_entry : 0;
	}
	p->nfuncs = st.nfuncs;
	p->stubs_off = st.inline_prandom ? st.stub[STUB_PRANDOM]
		       : st.anchor	 ? st.stub[STUB_STOPPED]
		       : st.pkt_regs	 ? st.stub[STUB_ZERO]
					 : (uint32_t)p->code_size;
	p->needs_ctx = st.anchor || st.pkt_regs;
	p->seeds_prandom = st.inline_prandom;
	p->pkt_entry_off = st.pkt_regs ? st.pkt_entry : 0;
	p->batch_entry_off = st.pkt_regs ? st.batch_entry : 0;
	p->insn_off = st.off;
	st.off = NULL;
	*out = p;
	p = NULL;
out_free:
	free(ops);
	if (p)
		free(p->lookup_kind);
	free(p);
	free_state(&st);
	return rc;
}

/* A run without a ctx still needs the fields the code reads: stopped and stop_r0 after
 * helper calls, the packet fields for LD_ABS (a zero length: every load fails). */
uint64_t brt_jit_call_without_ctx(const struct brt_jit_prog *p, uint64_t r1, uint64_t r2)
{
	uint64_t no_ctx[JIT_NO_CTX_WORDS] = { 0 };

	return p->head.entry(r1, r2, (struct bpfrt_run_ctx *)(void *)no_ctx);
}

int brt_jit_needs_ctx(const struct brt_jit_prog *p)
{
	return p->needs_ctx;
}

brt_jit_pkt_fn *brt_jit_pkt_entry(const struct brt_jit_prog *p)
{
	brt_jit_pkt_fn *fn;
	const uint8_t *at = p->code + p->pkt_entry_off;

	if (!p->pkt_entry_off)
		return NULL;
	memcpy(&fn, &at, sizeof(fn)); /* data to code pointer, as dlsym does */
	return fn;
}

brt_jit_batch_fn *brt_jit_batch_entry(const struct brt_jit_prog *p)
{
	brt_jit_batch_fn *fn;
	const uint8_t *at = p->code + p->batch_entry_off;

	if (!p->batch_entry_off)
		return NULL;
	memcpy(&fn, &at, sizeof(fn));
	return fn;
}

void brt_jit_free(struct brt_jit_prog *p)
{
	if (!p)
		return;
	munmap(p->code, p->map_size);
	free(p->insn_off);
	free(p->func_insn);
	free(p->func_entry);
	free(p->func_cb);
	free(p->lookup_kind);
	free(p);
}

int brt_jit_call_func(const struct brt_jit_prog *p, uint64_t func, const uint64_t args[5],
		      struct bpfrt_run_ctx *ctx, uint64_t *r0)
{
	uint64_t (*entry)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
			  struct bpfrt_run_ctx *);
	const uint8_t *code;

	for (size_t k = 0; k < p->nfuncs; k++) {
		if (p->func_insn[k] != func || !p->func_cb[k])
			continue;
		code = p->code + p->func_cb[k];
		memcpy(&entry, &code, sizeof(entry)); /* data to code pointer, as dlsym does */
		*r0 = entry(args[0], args[1], args[2], args[3], args[4], ctx);
		return 0;
	}
	return -EINVAL;
}

const uint8_t *brt_jit_code(const struct brt_jit_prog *p, size_t *size,
			    const uint32_t **insn_off)
{
	*size = p->code_size;
	if (insn_off)
		*insn_off = p->insn_off;
	return p->code;
}
