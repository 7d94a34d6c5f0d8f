/* unpriv.c - the same programs loaded with CAP_BPF but without CAP_PERFMON: pointer leaks,
 * pointer comparisons, uninitialised stack, Spectre-motivated arithmetic limits. */
#include "case.h"

#define CAPBPF .priv = BRT_PRIV_BPF_CAPABLE

static const struct vcase cases[] = {
	{ "unpriv/ret_fp", PROG(MOV64_REG(0, 10), EXIT()), CAPBPF },
	{ "unpriv/ret_ctx", PROG(MOV64_REG(0, 1), EXIT()), CAPBPF },
	{ "unpriv/ok_const", PROG(MOV64_IMM(0, 0), EXIT()), CAPBPF },
	{ "unpriv/ok_ctx_read", PROG(LDX(BPF_W, 0, 1, 0), EXIT()), CAPBPF },
	{ "unpriv/ptr_minus_ptr", PROG(MOV64_REG(2, 10), ALU64_REG(BPF_SUB, 2, 10), MOV64_IMM(0, 0),
				       EXIT()), CAPBPF },
	{ "unpriv/ptr_mov32", PROG(MOV32_REG(2, 10), MOV64_IMM(0, 0), EXIT()), CAPBPF },
	{ "unpriv/ptr_alu32_sub", PROG(MOV64_REG(2, 10), ALU32_IMM(BPF_SUB, 2, 1), MOV64_IMM(0, 0),
				       EXIT()), CAPBPF },
	{ "unpriv/fp_out_of_range", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -600),
					 MOV64_IMM(0, 0), EXIT()), CAPBPF },
	{ "unpriv/fp_positive", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, 8), MOV64_IMM(0, 0),
				     EXIT()), CAPBPF },
	{ "unpriv/fp_ok_arith", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), ST(BPF_DW, 2, 0, 0),
				     MOV64_IMM(0, 0), EXIT()), CAPBPF },
	{ "unpriv/store_fp_to_stack", PROG(STX(BPF_DW, 10, 10, -8), MOV64_IMM(0, 0), EXIT()), CAPBPF },
	{ "unpriv/spill_ctx_fill_half", PROG(STX(BPF_DW, 10, 1, -8), LDX(BPF_W, 0, 10, -8), EXIT()),
	  CAPBPF },
	{ "unpriv/neg_ptr", PROG(MOV64_REG(2, 10), ALU64_IMM(BPF_NEG, 2, 0), MOV64_IMM(0, 0), EXIT()),
	  CAPBPF },
	{ "unpriv/back_edge_ok_capbpf", PROG(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					     JIMM(BPF_JLT, 0, 4, -2), EXIT()), CAPBPF },
	{ "unpriv/kprobe_eperm", PROG(MOV64_IMM(0, 0), EXIT()), CAPBPF,
	  .prog_type = BPF_PROG_TYPE_KPROBE },
	{ "unpriv/xdp_ok", PROG(MOV64_IMM(0, 2), EXIT()), CAPBPF, .prog_type = BPF_PROG_TYPE_XDP },
	{ "unpriv/var_stack_read", PROG(ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -8, 0),
					LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 7),
					MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					ALU64_REG(BPF_ADD, 2, 3), LDX(BPF_B, 0, 2, 0), EXIT()), CAPBPF },
	{ "unpriv/leak_into_cb", PROG(STX(BPF_DW, 1, 1, 48), MOV64_IMM(0, 0), EXIT()), CAPBPF },
	{ "unpriv/mixed_sign_arith", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_SUB, 3, 4),
					  JIMM(BPF_JSGT, 3, 4, 5), JIMM(BPF_JSLT, 3, -4, 4),
					  MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					  ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0),
					  MOV64_IMM(0, 0), EXIT()), CAPBPF },
};

void vcases_unpriv(struct vcase_list *l)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
