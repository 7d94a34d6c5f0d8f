/* blind.c - constant blinding: with BRT_JIT_BLIND no immediate of the program appears
 * verbatim in executable memory (the defence against JIT spraying, as the kernel's
 * bpf_jit_blind_constants()).  Each instruction with a constant is emitted in its
 * register form, the constant rebuilt in AUX from two values that differ from it.
 */
#include <errno.h>
#include <stdio.h>

#include "jit/x86_64/x86.h"

#define B (&st->buf)

/* The key for the constant of instruction pc: the same in every pass. */
static uint64_t blind_key(const struct jit_state *st, size_t pc)
{
	uint64_t z = st->blind_seed + (pc + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Constant blinding: a program's immediates never appear verbatim in executable memory
 * (they could be chosen to spell machine code, the JIT-spraying attack).  "op dst, imm"
 * becomes "mov AUX, imm ^ key; xor AUX, key; op dst, AUX"; lddw xors a 64-bit key.
 * Sign extension commutes with xor, so AUX holds exactly the value the immediate form
 * would use.  The instruction itself is then emitted by the caller (insn.c), in the
 * register form this writes to *in and *op: blinding rewrites, it does not emit rows.
 */
int brt_jit_blind(struct jit_state *st, size_t pc, struct bpf_insn *out, enum brt_op *out_op)
{
	struct bpf_insn in = st->insns[pc];
	enum brt_op op = brt_isa_lookup(&in);
	uint64_t key = blind_key(st, pc);
	int shape = brt_ops[op].shape;

	if (op == BRT_OP_lddw) {
		uint64_t v = brt_isa_lddw_value(&st->insns[pc], pc);

		emit_mov_imm64(B, AUX, v ^ key);
		emit_mov_imm64(B, xreg(st, in.dst_reg), key);
		emit_alu_rr(B, ALU_XOR, true, xreg(st, in.dst_reg), AUX);
		return BRT_JIT_BLIND_DONE;
	}
	if (shape != BRT_SHAPE_ALU_IMM && shape != BRT_SHAPE_JMP_IMM && shape != BRT_SHAPE_STORE_IMM)
		return BRT_JIT_BLIND_NONE;
	/* imm ^ key as a sign-extended imm32, key too: the xor of both is imm, extended */
	emit_mov_imm64(B, AUX, (uint64_t)(int64_t)(int32_t)((uint32_t)in.imm ^ (uint32_t)key));
	emit_alu_ri(B, ALU_XOR, true, AUX, (int32_t)(uint32_t)key);
	if (shape == BRT_SHAPE_STORE_IMM)
		in.code = (uint8_t)(BPF_STX | BPF_MEM | BPF_SIZE(in.code));
	else
		in.code = (uint8_t)((in.code & ~BPF_X) | BPF_X);
	in.src_reg = BRT_JIT_BLIND_REG;
	in.imm = 0;
	op = brt_isa_lookup(&in);
	if (op == BRT_OP_INVALID) {
		snprintf(st->err, st->errlen, "internal error: insn %zu: no register form", pc);
		return -EFAULT;
	}
	*out = in;
	*out_op = op;
	return BRT_JIT_BLIND_REWRITTEN;
}

