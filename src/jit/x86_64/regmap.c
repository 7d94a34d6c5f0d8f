/* regmap.c - where each eBPF register lives in x86-64 code, and why; plus the scan that
 * finds which of them a function touches (so prologues save only those).
 */
#include "jit/x86_64/x86.h"

/*
 * eBPF's calling convention was designed to map 1:1 onto System V AMD64, so helper calls
 * need no shuffling:
 *
 *   r0  -> rax  return value of helpers and of the program
 *   r1  -> rdi  r1-r5 are the helper arguments, in System V argument order; they are
 *   r2  -> rsi  caller-saved in both conventions, so a helper call clobbers exactly what
 *   r3  -> rdx  eBPF says it clobbers.  rdx and rcx are also implicit operands of div and
 *   r4  -> rcx  of variable shifts; those emitters save and restore them around the
 *   r5  -> r8   instruction (in r9-r11) instead of reserving other registers.
 *   r6  -> rbx  r6-r9 are callee-saved in eBPF and live in callee-saved x86 registers,
 *   r7  -> r13  so they survive helper calls for free.  r12 is skipped: as a base
 *   r8  -> r14  register it needs a SIB byte in every memory operand, and it is the
 *   r9  -> r15  ANCHOR (entry frame slots) instead.
 *   r10 -> rbp  the frame pointer: read-only, points at the top of the current function's
 *               512-byte stack.
 *
 * r9 (6th System V argument: the run ctx for helpers), r10 (AUX) and r11 (TMP) hold no
 * eBPF register and serve as scratch; r12 is the ANCHOR; rsp is the native stack.
 * Constant blinding rewrites "op dst, imm" into "op dst, BLIND_REG" with the constant
 * rebuilt in AUX, so the blinding register maps to AUX.
 */
const uint8_t brt_jit_reg2x86[BRT_JIT_NREGS] = {
	[BPF_REG_0] = RAX, [BPF_REG_1] = RDI, [BPF_REG_2] = RSI, [BPF_REG_3] = RDX,
	[BPF_REG_4] = RCX, [BPF_REG_5] = R8,  [BPF_REG_6] = RBX, [BPF_REG_7] = R13,
	[BPF_REG_8] = R14, [BPF_REG_9] = R15, [BPF_REG_10] = RBP,
	[BRT_JIT_BLIND_REG] = AUX,
};

static uint16_t reg_bit(unsigned r)
{
	return (uint16_t)(1u << brt_jit_reg2x86[r]);
}

/* Callee-saved x86 registers (of eBPF's r6-r9) that insns[start..end) name, as a bit
 * mask over x86 register numbers; *uses_r10 tells whether r10 is named (the function
 * then needs a stack frame).  lddw's second slot has no row, so it contributes nothing. */
uint16_t brt_jit_regs_used(const struct bpf_insn *insns, size_t start, size_t end, bool *uses_r10)
{
	uint16_t used = 0;
	unsigned seen = 0;

	for (size_t i = start; i < end; i++) {
		struct brt_isa_regs r;

		brt_isa_regs(&insns[i], &r);
		seen |= r.named;
	}
	for (unsigned r = BPF_REG_6; r <= BPF_REG_9; r++)
		if (seen & (1u << r))
			used |= reg_bit(r);
	*uses_r10 = seen & (1u << BPF_REG_10);
	return used;
}

/* Whether the packet can live in r2/r3's registers for the whole run (PKT_DATA, PKT_LEN):
 * the program loads packet bytes, calls nothing else (no helper, callx or bpf-to-bpf call
 * would preserve them), never names r2-r5 (a packet load clobbers them anyway, so
 * verified filters rarely do) and has no LD_ABS at a negative (header-relative) offset.  ops[] is the decoded program (BRT_OP_INVALID in lddw's
 * second slot). */
bool brt_jit_pkt_regs_fit(const struct bpf_insn *insns, size_t n, const uint16_t *ops)
{
	const unsigned r2_r5 = 0x3cu;
	bool loads = false;
	unsigned seen = 0;

	for (size_t i = 0; i < n; i++) {
		int shape = ops[i] == BRT_OP_INVALID ? -1 : brt_ops[ops[i]].shape;
		struct brt_isa_regs r;

		if (ops[i] == BRT_OP_call_helper || ops[i] == BRT_OP_callx ||
		    ops[i] == BRT_OP_call_local)
			return false;
		if (shape == BRT_SHAPE_LD_ABS || shape == BRT_SHAPE_LD_IND)
			loads = true;
		/* a negative LD_ABS reads a header only the run ctx knows (env->ld_neg) */
		if (shape == BRT_SHAPE_LD_ABS && insns[i].imm < 0)
			return false;
		brt_isa_regs(&insns[i], &r);
		seen |= r.named;
	}
	return loads && !(seen & r2_r5);
}

/* Whether row op's emitter (and any plan over it) leaves AUX, TMP and TMP2 alone (passes
 * leafregs and prandomreg keep values there across such rows): not
 * division (operands parked there), a shift by a register without BMI2 (rcx parked),
 * an atomic (address and r0 parked), nor anything that calls. */
bool brt_jit_scratch_free(const struct jit_state *st, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];

	switch (info->shape) {
	case BRT_SHAPE_ALU_IMM:
	case BRT_SHAPE_ALU_REG:
		if (BPF_OP(info->opcode) == BPF_DIV || BPF_OP(info->opcode) == BPF_MOD)
			return false;
		if (info->shape == BRT_SHAPE_ALU_REG && !st->bmi2 &&
		    (BPF_OP(info->opcode) == BPF_LSH || BPF_OP(info->opcode) == BPF_RSH ||
		     BPF_OP(info->opcode) == BPF_ARSH))
			return false;
		return true;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
	case BRT_SHAPE_LOAD:
	case BRT_SHAPE_STORE_IMM:
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_LDDW:
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
	case BRT_SHAPE_EXIT:
		return true;
	default:
		return false;
	}
}
