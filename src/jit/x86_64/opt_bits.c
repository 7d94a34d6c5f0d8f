/* opt_bits.c - the JIT's passes on what the bits of a value are (passes.def: knownbits,
 * bittest), and the whole-function register liveness bittest uses; opt.c describes how
 * passes work and runs them (brt_jit_optimise()), opt.h lists what they share.
 *
 * knownbits: a forward dataflow over each function says which bits of each register may
 * be set (loads of 1/2/4 bytes, 32-bit results, masks, shifts by constants, constants;
 * states or'ed at jump targets); an `and` with a mask that keeps every such bit, and a
 * `w = w` of a register whose upper half is known clear, change nothing and are dropped
 * (clang re-masks a byte it loaded: `w9 = w1; w9 &= 255` after `r1 = *(u8 *)`).
 *
 * bittest: `r = 1; r <<= x; [lddw k;] r &= k; if r != 0` (clang's test of x against a set
 * of small values, `1 << x & K`) with r dead afterwards is `bt k, x` and a jump on the
 * carry: two instructions where four were (x86's bt on a register takes the bit number
 * mod 64, as eBPF's shift takes the count).
 */
#include <stdlib.h>
#include <string.h>

#include "jit/x86_64/opt.h"
#include "jit/x86_64/x86.h"

/* --- knownbits ------------------------------------------------------------------------ */

/* Bits each of r0-r9 may have set (all ones: nothing known). */
struct kstate {
	bool reached;
	uint64_t may[BRT_MAX_REGS];
};

static void kstep(const struct jit_state *st, const uint16_t *ops, size_t pc, struct kstate *k)
{
	const struct bpf_insn *in = &st->insns[pc];
	enum brt_op op = (enum brt_op)ops[pc];
	unsigned d = in->dst_reg, s = in->src_reg;
	uint64_t imm = (uint64_t)(int64_t)in->imm, sm, dm, m;
	struct brt_isa_regs r;
	bool known = true;

	if (op == BRT_OP_INVALID)
		return;
	brt_isa_regs_op(in, op, &r);
	sm = s < BRT_MAX_REGS ? k->may[s] : ~0ull;
	dm = d < BRT_MAX_REGS ? k->may[d] : ~0ull;
	switch (op) {
	case BRT_OP_mov64_imm: m = imm; break;
	case BRT_OP_mov32_imm: m = (uint32_t)in->imm; break;
	case BRT_OP_lddw: m = in->src_reg ? ~0ull : brt_isa_lddw_value(in, pc); break;
	case BRT_OP_mov64_reg: m = sm; break;
	case BRT_OP_mov32_reg: m = (uint32_t)sm; break;
	case BRT_OP_ldxb: m = 0xff; break;
	case BRT_OP_ldxh: m = 0xffff; break;
	case BRT_OP_ldxw: m = 0xffffffffu; break;
	case BRT_OP_and64_imm: m = dm & imm; break;
	case BRT_OP_and64_reg: m = dm & sm; break;
	case BRT_OP_and32_imm: m = (uint32_t)(dm & imm); break;
	case BRT_OP_and32_reg: m = (uint32_t)(dm & sm); break;
	case BRT_OP_or64_imm:
	case BRT_OP_xor64_imm: m = dm | imm; break;
	case BRT_OP_or64_reg:
	case BRT_OP_xor64_reg: m = dm | sm; break;
	case BRT_OP_or32_imm:
	case BRT_OP_xor32_imm: m = (uint32_t)(dm | imm); break;
	case BRT_OP_or32_reg:
	case BRT_OP_xor32_reg: m = (uint32_t)(dm | sm); break;
	case BRT_OP_rsh64_imm: m = dm >> (in->imm & 63); break;
	case BRT_OP_rsh32_imm: m = (uint32_t)dm >> (in->imm & 31); break;
	case BRT_OP_lsh64_imm: m = dm << (in->imm & 63); break;
	case BRT_OP_lsh32_imm: m = (uint32_t)(dm << (in->imm & 31)); break;
	default:
		/* any other 32-bit ALU result is zero-extended (endianness rows excepted:
		 * le64/be64 are in that class too) */
		m = 0xffffffffu;
		known = BPF_CLASS(brt_ops[op].opcode) == BPF_ALU &&
			brt_ops[op].shape != BRT_SHAPE_ENDIAN;
		break;
	}
	/* a call (helper or bpf-to-bpf: unverified code may leave anything anywhere) */
	if (brt_ops[op].shape == BRT_SHAPE_CALL || brt_ops[op].shape == BRT_SHAPE_CALL_LOCAL ||
	    brt_ops[op].shape == BRT_SHAPE_CALLX)
		r.def = 0x3ff;
	for (unsigned i = 0; i < BRT_MAX_REGS; i++)
		if (r.def & (1u << i))
			k->may[i] = ~0ull;
	if (known && r.def == (1u << d) && d < BRT_MAX_REGS)
		k->may[d] = m;
}

static bool kmerge(struct kstate *dst, const struct kstate *src)
{
	bool changed = false;

	if (!dst->reached) {
		*dst = *src;
		dst->reached = true;
		return true;
	}
	for (unsigned i = 0; i < BRT_MAX_REGS; i++) {
		uint64_t m = dst->may[i] | src->may[i];

		changed |= m != dst->may[i];
		dst->may[i] = m;
	}
	return changed;
}

/* Whether instruction pc (plan NONE), given the bits its registers may have, changes
 * nothing: an and whose mask keeps them all, `w = w` of a value below 2^32. */
static bool kidle(const struct jit_state *st, const uint16_t *ops, size_t pc,
		  const struct kstate *k)
{
	const struct bpf_insn *in = &st->insns[pc];
	uint64_t dm = in->dst_reg < BRT_MAX_REGS ? k->may[in->dst_reg] : ~0ull;

	switch ((enum brt_op)ops[pc]) {
	case BRT_OP_and64_imm:
		return !(dm & ~(uint64_t)(int64_t)in->imm);
	case BRT_OP_and32_imm:
		return !(dm & ~(uint64_t)(uint32_t)in->imm);
	case BRT_OP_mov32_reg:
		return in->dst_reg == in->src_reg && in->off == 0 && !(dm >> 32);
	default:
		return false;
	}
}

/* One sweep over every function: the states at targets merged from their predecessors
 * (true when one changed); with drop, instructions kidle() finds idle are skipped. */
static bool ksweep(struct opt *o, struct kstate *kin, bool drop)
{
	struct jit_state *st = o->st;
	bool changed = false;

	for (size_t f = 0; f < st->nfuncs; f++) {
		const struct jit_func *fn = &st->funcs[f];
		struct kstate cur = { .reached = true };

		memset(cur.may, 0xff, sizeof(cur.may));
		if (!kin[fn->start].reached)
			kin[fn->start] = cur; /* entry: nothing known */
		for (size_t pc = fn->start; pc < fn->end; pc++) {
			enum brt_op op = (enum brt_op)o->ops[pc];

			if (o->target[pc]) {
				if (cur.reached && pc != fn->start)
					changed |= kmerge(&kin[pc], &cur);
				cur = kin[pc];
			}
			if (!cur.reached || op == BRT_OP_INVALID)
				continue;
			if (drop && st->plan[pc].kind == PLAN_NONE && kidle(st, o->ops, pc, &cur))
				st->plan[pc].kind = PLAN_SKIP;
			kstep(st, o->ops, pc, &cur);
			if (is_branch(op))
				changed |= kmerge(&kin[brt_isa_jump_target(&st->insns[pc], op, pc)],
						  &cur);
			if (is_ja(op) || op == BRT_OP_exit)
				cur.reached = false;
		}
	}
	return changed;
}

/* The states only grow (bits or'ed in), so they settle; a loop shifting a register a bit
 * per round may take a sweep per bit.  Nothing is dropped unless they settled (a state
 * short of its fixed point may miss bits a later round sets). */
void brt_jit_pass_knownbits(struct opt *o)
{
	struct kstate *kin = calloc(o->st->n + 1, sizeof(*kin));

	if (!kin)
		return; /* an optimisation: nothing is dropped */
	for (int sweep = 0; sweep < 80; sweep++) {
		if (!ksweep(o, kin, false)) {
			ksweep(o, kin, true);
			break;
		}
	}
	free(kin);
}

/* Registers live when each instruction starts (read on some path before written), by the
 * rules of dead_after() but over whole functions: a backward dataflow to a fixed point.
 * A fall off a function's end or a jump out of it takes every register as live.  NULL
 * when out of memory or not settled in 64 sweeps. */
static uint16_t *live_flow(const struct opt *o)
{
	const struct jit_state *st = o->st;
	uint16_t *live = calloc(st->n + 1, sizeof(*live));

	if (!live)
		return NULL;
	for (int sweep = 0; sweep < 64; sweep++) {
		bool changed = false;

		for (size_t f = 0; f < st->nfuncs; f++) {
			const struct jit_func *fn = &st->funcs[f];

			for (size_t pc = fn->end; pc-- > fn->start;) {
				enum brt_op op = (enum brt_op)o->ops[pc];
				struct brt_isa_regs r;
				uint16_t out, in;

				if (op == BRT_OP_INVALID) { /* lddw's second slot */
					in = pc + 1 < fn->end ? live[pc + 1] : 0x3ff;
					changed |= in != live[pc];
					live[pc] = in;
					continue;
				}
				brt_isa_regs_op(&st->insns[pc], op, &r);
				if (op == BRT_OP_call_local)
					r.use = 0x3ff;
				if (r.def == 0x3f)
					r.def = 1;
				if (st->plan && st->plan[pc].kind == PLAN_SKIP)
					r.def = 0;
				if (op == BRT_OP_exit) {
					out = 0;
				} else {
					out = 0;
					if (!is_ja(op))
						out = pc + 1 < fn->end ? live[pc + 1] : 0x3ff;
					if (is_branch(op)) {
						int64_t t = brt_isa_jump_target(&st->insns[pc], op, pc);

						out |= t >= (int64_t)fn->start && t < (int64_t)fn->end
							       ? live[t]
							       : 0x3ff;
					}
				}
				in = (uint16_t)(r.use | (out & ~r.def));
				changed |= in != live[pc];
				live[pc] = in;
			}
		}
		if (!changed)
			return live;
	}
	free(live);
	return NULL;
}

/* --- bittest -------------------------------------------------------------------------- */

/* Pass bittest: `r = 1; r <<= x; [k = lddw K;] r &= k; [up to two register moves;] if r
 * != 0 (== 0) goto T` is `bt k, x` and jc (jnc) T when r is dead on both sides: the moves
 * between leave the flags alone.  The shift's and the and's registers are not jump
 * targets (only the first move of 1 may be), the jump goes forward (a backward one may
 * carry the run budget's charge, whose code changes the flags), not under blinding. */
void brt_jit_pass_bittest(struct opt *o)
{
	struct jit_state *st = o->st;
	uint16_t *live = live_flow(o);

	for (size_t pc = 0; live && pc + 3 < st->n; pc++) {
		const struct bpf_insn *in = &st->insns[pc];
		enum brt_op op = (enum brt_op)o->ops[pc], jop;
		size_t sh = pc + 1, an = pc + 2, j, moves = 0;
		unsigned r = in->dst_reg, x, k;
		uint16_t bit;
		int64_t t;

		if ((op != BRT_OP_mov64_imm && op != BRT_OP_mov32_imm) || in->imm != 1 ||
		    r >= BRT_MAX_REGS || st->plan[pc].kind > PLAN_SKIP)
			continue;
		bit = (uint16_t)(1u << r);
		if (o->ops[sh] != BRT_OP_lsh64_reg || st->insns[sh].dst_reg != r || o->target[sh] ||
		    st->plan[sh].kind != PLAN_NONE)
			continue;
		x = st->insns[sh].src_reg;
		if (x == r || x >= BRT_MAX_REGS)
			continue;
		if (an + 2 < st->n && o->ops[an] == BRT_OP_lddw && !o->target[an] &&
		    st->insns[an].dst_reg != r && st->insns[an].dst_reg != x)
			an += 2;
		if (an >= st->n || o->ops[an] != BRT_OP_and64_reg || st->insns[an].dst_reg != r ||
		    o->target[an] || st->plan[an].kind != PLAN_NONE)
			continue;
		k = st->insns[an].src_reg;
		if (k == r || k >= BRT_MAX_REGS)
			continue;
		for (j = an + 1; j < st->n && moves < 2 && !o->target[j] &&
				 (o->ops[j] == BRT_OP_mov64_reg || o->ops[j] == BRT_OP_mov32_reg) &&
				 st->insns[j].dst_reg != r && st->insns[j].src_reg != r &&
				 st->plan[j].kind <= PLAN_SKIP;
		     j++)
			moves++;
		if (j >= st->n || o->target[j])
			continue;
		jop = (enum brt_op)o->ops[j];
		if ((jop != BRT_OP_jne_imm && jop != BRT_OP_jeq_imm) || st->insns[j].dst_reg != r ||
		    st->insns[j].imm != 0 ||
		    (st->plan[j].kind != PLAN_NONE && st->plan[j].kind != PLAN_JINV))
			continue;
		t = brt_isa_jump_target(&st->insns[j], jop, j);
		if (t <= (int64_t)j || ((live[j + 1] | live[t]) & bit))
			continue;
		if (st->plan[pc].kind == PLAN_NONE)
			st->plan[pc].kind = PLAN_SKIP;
		st->plan[sh].kind = PLAN_SKIP;
		st->plan[an] = (struct jit_plan){ .kind = PLAN_BT, .dst = (uint8_t)x,
						  .src = (uint8_t)k };
		/* jumpfold's inversion (to the ja's target) is kept: rol says so */
		st->plan[j] = (struct jit_plan){ .kind = PLAN_BTJ,
						 .rol = st->plan[j].kind == PLAN_JINV,
						 .imm = st->plan[j].imm };
		pc = j;
	}
	free(live);
}
