/* alu.c - ALU cases: every operation on scalars (64/32 bit, imm/reg), pointer arithmetic
 * rules (which operators, which pointer types, 32-bit ops, pointer +/- pointer), results
 * used as memory offsets so the computed ranges matter. */
#include "case.h"

static const struct vcase cases[] = {
	{ "alu/ptr_plus_ptr", PROG(ALU64_REG(BPF_ADD, 1, 10), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/ptr_minus_ptr_root", PROG(MOV64_REG(2, 10), ALU64_REG(BPF_SUB, 2, 10),
					 MOV64_REG(0, 2), EXIT()) },
	{ "alu/scalar_minus_ptr", PROG(MOV64_IMM(2, 5), ALU64_REG(BPF_SUB, 2, 10), MOV64_IMM(0, 0),
				       EXIT()) },
	{ "alu/scalar_plus_ptr", PROG(MOV64_IMM(2, -8), ALU64_REG(BPF_ADD, 2, 10), ST(BPF_DW, 2, 0, 1),
				      MOV64_IMM(0, 0), EXIT()) },
	{ "alu/fp_sub_const", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_SUB, 2, 8), ST(BPF_DW, 2, 0, 1),
				   MOV64_IMM(0, 0), EXIT()) },
	{ "alu/ctx_sub_const", PROG(ALU64_IMM(BPF_SUB, 1, 8), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/ctx_add_then_load", PROG(ALU64_IMM(BPF_ADD, 1, 4), LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "alu/ctx_add_neg_then_load", PROG(ALU64_IMM(BPF_ADD, 1, -4), LDX(BPF_W, 0, 1, 4),
					    EXIT()) },
	{ "alu/ptr_neg", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_NEG, 2, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/ptr_end", PROG(MOV64_REG(2, 10), I(BPF_ALU | BPF_END | BPF_TO_BE, 2, 0, 0, 16),
			      MOV64_IMM(0, 0), EXIT()) },
	{ "alu/ptr_mov32", PROG(MOV32_REG(2, 10), MOV64_REG(0, 2), EXIT()) },
	{ "alu/ptr_movsx", PROG(I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 8, 0), MOV64_IMM(0, 0),
				EXIT()) },
	{ "alu/fp_big_const", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, 0x20000000),
				   MOV64_IMM(0, 0), EXIT()) },
	{ "alu/fp_plus_unknown", PROG(LDX(BPF_W, 3, 1, 0), MOV64_REG(2, 10), ALU64_REG(BPF_ADD, 2, 3),
				      MOV64_IMM(0, 0), EXIT()) },
	{ "alu/fp_plus_bounded_write", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 7),
					    MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					    ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 1),
					    MOV64_IMM(0, 0), EXIT()) },
	{ "alu/fp_plus_bounded_read", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 7),
					   ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0),
					   MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					   ALU64_REG(BPF_ADD, 2, 3), LDX(BPF_B, 0, 2, 0), EXIT()) },
	{ "alu/fp_var_oob", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 15), MOV64_REG(2, 10),
				 ALU64_IMM(BPF_ADD, 2, -8), ALU64_REG(BPF_ADD, 2, 3),
				 ST(BPF_B, 2, 0, 1), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/map_ptr_add", PROG(LD_MAP(1, 0), ALU64_IMM(BPF_ADD, 1, 8), MOV64_IMM(0, 0), EXIT()),
	  .maps = { HASH48 } },
	{ "alu/map_ptr_add0", PROG(LD_MAP(1, 0), ALU64_IMM(BPF_ADD, 1, 0), MOV64_IMM(0, 0), EXIT()),
	  .maps = { HASH48 } },
	{ "alu/mov32_keeps_low", PROG(LD64(2, 0x100000005ULL), MOV32_REG(3, 2), MOV64_REG(4, 10),
				      ALU64_IMM(BPF_ADD, 4, -8), ALU64_REG(BPF_SUB, 4, 3),
				      MOV64_IMM(0, 0), EXIT()) },
	{ "alu/and_bounds_index", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 0x38),
				       MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -64),
				       ALU64_REG(BPF_ADD, 2, 3), ST(BPF_DW, 2, 0, 0), MOV64_IMM(0, 0),
				       EXIT()) },
	{ "alu/rsh_bounds_index", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_RSH, 3, 29),
				       MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
				       ALU64_REG(BPF_SUB, 2, 3), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/mul_bounds", PROG(LDX(BPF_B, 3, 1, 0), ALU64_IMM(BPF_MUL, 3, 2), MOV64_REG(2, 10),
				 ALU64_IMM(BPF_ADD, 2, -512), ALU64_REG(BPF_ADD, 2, 3),
				 ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/mul_bounds_too_big", PROG(LDX(BPF_B, 3, 1, 0), ALU64_IMM(BPF_MUL, 3, 3),
					 MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -512),
					 ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0),
					 MOV64_IMM(0, 0), EXIT()) },
	{ "alu/div_unknown_result", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_DIV, 3, 3),
					 MOV64_REG(2, 10), ALU64_REG(BPF_ADD, 2, 3), MOV64_IMM(0, 0),
					 EXIT()) },
	{ "alu/lsh32_then_idx", PROG(LDX(BPF_B, 3, 1, 0), ALU32_IMM(BPF_LSH, 3, 1), MOV64_REG(2, 10),
				     ALU64_IMM(BPF_ADD, 2, -512), ALU64_REG(BPF_ADD, 2, 3),
				     ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	/* a sign mask (0 or -1) and-ed or or-ed with a constant: the kernel walks the two
	 * values apart (maybe_fork_scalars, the branch runs the insn again), so the insns
	 * after it run twice; 64-bit and 32-bit masks */
	{ "alu/fork_sign_mask_and", PROG(CALL(7), ALU64_IMM(BPF_ARSH, 0, 63),
					 ALU64_IMM(BPF_AND, 0, 5), MOV64_REG(1, 0), EXIT()) },
	{ "alu/fork_sign_mask_or32", PROG(CALL(7), ALU32_IMM(BPF_ARSH, 0, 31),
					  ALU32_IMM(BPF_OR, 0, 5), MOV64_REG(1, 0), EXIT()) },
	{ "alu/arsh_negative", PROG(MOV64_IMM(3, -64), ALU64_IMM(BPF_ARSH, 3, 2), MOV64_REG(2, 10),
				    ALU64_REG(BPF_ADD, 2, 3), ST(BPF_DW, 2, 0, 0), MOV64_IMM(0, 0),
				    EXIT()) },
	{ "alu/neg_const", PROG(MOV64_IMM(3, 8), ALU64_IMM(BPF_NEG, 3, 0), MOV64_REG(2, 10),
				ALU64_REG(BPF_ADD, 2, 3), ST(BPF_DW, 2, 0, 0), MOV64_IMM(0, 0),
				EXIT()) },
	{ "alu/xor_self_zero", PROG(LDX(BPF_W, 3, 1, 0), ALU64_REG(BPF_XOR, 3, 3), MOV64_REG(2, 10),
				    ALU64_IMM(BPF_ADD, 2, -8), ALU64_REG(BPF_ADD, 2, 3),
				    ST(BPF_DW, 2, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/be16_bounds", PROG(LDX(BPF_W, 3, 1, 0), I(BPF_ALU | BPF_END | BPF_TO_BE, 3, 0, 0, 16),
				  MOV64_REG(0, 3), EXIT()) },
	{ "alu/bswap64", PROG(MOV64_IMM(3, 1), I(BPF_ALU64 | BPF_END | BPF_TO_LE, 3, 0, 0, 64),
			      MOV64_REG(0, 3), EXIT()) },
	{ "alu/movsx8", PROG(MOV64_IMM(3, 0xff), I(BPF_ALU64 | BPF_MOV | BPF_X, 4, 3, 8, 0),
			     MOV64_REG(2, 10), ALU64_REG(BPF_ADD, 2, 4), ALU64_IMM(BPF_ADD, 2, -8),
			     ST(BPF_DW, 2, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "alu/sdiv_ok", PROG(MOV64_IMM(0, -7), I(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 1, 2), EXIT()) },
	{ "alu/smod_reg_ok", PROG(MOV64_IMM(0, -7), MOV64_IMM(1, 3),
				  I(BPF_ALU64 | BPF_MOD | BPF_X, 0, 1, 1, 0), EXIT()) },
	{ "alu/sdiv32_reg", PROG(MOV64_IMM(0, -7), MOV64_IMM(1, 3),
				 I(BPF_ALU | BPF_DIV | BPF_X, 0, 1, 1, 0), EXIT()) },
	{ "alu/mov_off_on_add", PROG(MOV64_IMM(0, 1), I(BPF_ALU64 | BPF_ADD | BPF_X, 0, 0, 1, 0),
				     EXIT()) },
	{ "alu/uninit_src", PROG(MOV64_IMM(0, 1), ALU64_REG(BPF_ADD, 0, 5), EXIT()) },
	{ "alu/uninit_dst", PROG(ALU64_IMM(BPF_ADD, 0, 1), EXIT()) },
	{ "alu/neg_uninit", PROG(ALU64_IMM(BPF_NEG, 0, 0), EXIT()) },
};

static const struct {
	uint8_t op;
	const char *name;
} ops[] = {
	{ BPF_ADD, "add" }, { BPF_SUB, "sub" }, { BPF_MUL, "mul" }, { BPF_DIV, "div" },
	{ BPF_OR, "or" },   { BPF_AND, "and" }, { BPF_LSH, "lsh" }, { BPF_RSH, "rsh" },
	{ BPF_MOD, "mod" }, { BPF_XOR, "xor" }, { BPF_MOV, "mov" }, { BPF_ARSH, "arsh" },
};

void vcases_alu(struct vcase_list *l)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (int cls = 0; cls < 2; cls++) {
			uint8_t c = cls ? BPF_ALU64 : BPF_ALU;
			const char *w = cls ? "64" : "32";
			/* scalar op imm and op reg */
			struct bpf_insn a[] = { LDX(BPF_W, 0, 1, 0), I(c | ops[i].op | BPF_K, 0, 0, 0, 3),
						EXIT() };
			struct bpf_insn b[] = { LDX(BPF_W, 0, 1, 0), MOV64_IMM(2, 5),
						I(c | ops[i].op | BPF_X, 0, 2, 0, 0), EXIT() };
			/* the op on the ctx pointer, and on the frame pointer copy */
			struct bpf_insn p[] = { I(c | ops[i].op | BPF_K, 1, 0, 0, 8), MOV64_IMM(0, 0),
						EXIT() };
			struct bpf_insn q[] = { MOV64_REG(2, 10), MOV64_IMM(3, 8),
						I(c | ops[i].op | BPF_X, 2, 3, 0, 0), MOV64_IMM(0, 0),
						EXIT() };

			vc_add(l, &(struct vcase){ .name = vc_name("alu/%s%s_imm", ops[i].name, w),
						   .insns = vc_keep(a, 3), .len = 3 });
			vc_add(l, &(struct vcase){ .name = vc_name("alu/%s%s_reg", ops[i].name, w),
						   .insns = vc_keep(b, 4), .len = 4 });
			vc_add(l, &(struct vcase){ .name = vc_name("alu/ctx_%s%s", ops[i].name, w),
						   .insns = vc_keep(p, 3), .len = 3 });
			vc_add(l, &(struct vcase){ .name = vc_name("alu/fp_%s%s_reg", ops[i].name, w),
						   .insns = vc_keep(q, 5), .len = 5 });
			vc_add(l, &(struct vcase){ .name = vc_name("alu/fp_%s%s_reg_unpriv", ops[i].name, w),
						   .insns = vc_keep(q, 5), .len = 5,
						   .priv = BRT_PRIV_BPF_CAPABLE });
		}
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
