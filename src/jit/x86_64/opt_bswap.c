/* opt_bswap.c - pass bswap (passes.def): byte swaps fused with the load or store next to
 * them.  insn.c emits be16 as rol r16, 8 and a movzx (the rol leaves bits 16-63 alone),
 * be32/be64 as bswap; clang puts them right after the load of a network-order field and
 * right before the store of one (a header built on the stack: 3,010 of the corpus's 3,730
 * be16 are followed by a 16-bit store of the swapped register).  So:
 *   - `r = *(u32|u64 *)(s + off); r = be32|be64 r` is movbe r, [s + off];
 *   - `r = be16|32|64 r; *(u16|32|64 *)(d + off) = r` with r dead after the store (and d
 *     not r) is movbe [d + off], r: the register is never swapped;
 *   - be16 of a value below 2^16 (a 1- or 2-byte load of r, or an and of r with a mask
 *     of 16 bits, just before) is the rol alone: its upper bits are zero already.
 * movbe only where the CPU has it (CPUID.1:ECX.MOVBE); the instructions fused are adjacent
 * and the second is no jump target, so no path sees the halfway state.
 */
#include "jit/x86_64/opt.h"

/* Instruction pc is a byte swap to big endian of `bits` (be16/32/64, or the ALU64
 * bswap rows, which zero-extend the same way); 0 for anything else. */
static unsigned swap_bits(enum brt_op op)
{
	switch (op) {
	case BRT_OP_be16:
	case BRT_OP_bswap16:
		return 16;
	case BRT_OP_be32:
	case BRT_OP_bswap32:
		return 32;
	case BRT_OP_be64:
	case BRT_OP_bswap64:
		return 64;
	default:
		return 0;
	}
}

/* Instruction q leaves register d below 2^16 (it writes d). */
static bool below_16(const struct opt *o, size_t q, unsigned d)
{
	const struct bpf_insn *in = &o->st->insns[q];

	if (in->dst_reg != d)
		return false;
	switch ((enum brt_op)o->ops[q]) {
	case BRT_OP_ldxb:
	case BRT_OP_ldxh:
		return true;
	case BRT_OP_and32_imm:
	case BRT_OP_and64_imm:
		return in->imm >= 0 && in->imm <= 0xffff;
	default:
		return false;
	}
}

/* The load before swap pc, or the rol alone for be16: true when planned. */
static bool fuse_load(struct opt *o, size_t pc, unsigned bits)
{
	struct jit_state *st = o->st;
	const struct bpf_insn *sw = &st->insns[pc], *ld;
	size_t q = pc - 1;
	enum brt_op op;

	if (!pc || o->target[pc] || st->plan[q].kind != PLAN_NONE)
		return false;
	if (bits == 16) {
		if (!below_16(o, q, sw->dst_reg))
			return false;
		st->plan[pc] = (struct jit_plan){ .kind = PLAN_ROL16, .dst = sw->dst_reg };
		return true;
	}
	ld = &st->insns[q];
	op = (enum brt_op)o->ops[q];
	if (!st->movbe || ld->dst_reg != sw->dst_reg ||
	    op != (bits == 32 ? BRT_OP_ldxw : BRT_OP_ldxdw))
		return false;
	st->plan[q] = (struct jit_plan){ .kind = PLAN_MOVBE_LD, .dst = ld->dst_reg,
					 .src = ld->src_reg, .imm = ld->off,
					 .rol = (uint8_t)(bits / 8) };
	st->plan[pc].kind = PLAN_SKIP;
	return true;
}

/* The store after swap pc of the swapped register, which dies there: true when planned. */
static bool fuse_store(struct opt *o, size_t pc, unsigned bits)
{
	struct jit_state *st = o->st;
	const struct bpf_insn *sw = &st->insns[pc], *sx;
	size_t q = pc + 1;
	enum brt_op want = bits == 16 ? BRT_OP_stxh : bits == 32 ? BRT_OP_stxw : BRT_OP_stxdw;

	if (!st->movbe || q >= st->n || o->target[q] || st->plan[q].kind != PLAN_NONE ||
	    o->ops[q] != want)
		return false;
	sx = &st->insns[q];
	if (sx->src_reg != sw->dst_reg || sx->dst_reg == sw->dst_reg ||
	    !o->dead_after(o, q, (uint16_t)(1u << sw->dst_reg)))
		return false;
	st->plan[pc].kind = PLAN_SKIP;
	st->plan[q] = (struct jit_plan){ .kind = PLAN_MOVBE_ST, .dst = sx->dst_reg,
					 .src = sx->src_reg, .imm = sx->off,
					 .rol = (uint8_t)(bits / 8) };
	return true;
}

void brt_jit_pass_bswap(struct opt *o)
{
	struct jit_state *st = o->st;

	for (size_t pc = 0; pc < st->n; pc++) {
		unsigned bits = swap_bits((enum brt_op)o->ops[pc]);

		if (!bits || st->plan[pc].kind != PLAN_NONE || st->insns[pc].dst_reg >= BPF_REG_10)
			continue;
		/* the store first: for be16 it saves the rol and the movzx, the load only
		 * the movzx */
		if (!fuse_store(o, pc, bits))
			fuse_load(o, pc, bits);
	}
}
