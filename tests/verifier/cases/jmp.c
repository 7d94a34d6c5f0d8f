/* jmp.c - conditional jumps: decided branches, both-ways refinement of ranges (64 and 32
 * bit, signed and unsigned) used as stack offsets, pointer comparisons, null checks. */
#include "case.h"

static const struct {
	uint8_t op;
	const char *name;
} ops[] = {
	{ BPF_JEQ, "jeq" }, { BPF_JGT, "jgt" }, { BPF_JGE, "jge" }, { BPF_JSET, "jset" },
	{ BPF_JNE, "jne" }, { BPF_JSGT, "jsgt" }, { BPF_JSGE, "jsge" }, { BPF_JLT, "jlt" },
	{ BPF_JLE, "jle" }, { BPF_JSLT, "jslt" }, { BPF_JSLE, "jsle" },
};

static const struct vcase cases[] = {
	{ "jmp/decided_skips_bad", PROG(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 0, 0, 1), MOV64_REG(0, 9),
					EXIT()) },
	{ "jmp/decided_other_way_bad", PROG(MOV64_IMM(0, 1), JIMM(BPF_JEQ, 0, 0, 1),
					    MOV64_REG(0, 9), EXIT()) },
	/* known bits decide jeq/jne (tnum_overlap()): a multiple of 8 in [0, 0x7ff8] is
	 * never 20, though the range holds it; never 24 is not decided */
	{ "jmp/jne_known_bits_decided", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 0x7ff8),
					     JIMM(BPF_JNE, 3, 20, 1), MOV64_REG(0, 9),
					     MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/jne32_known_bits_decided", PROG(LDX(BPF_W, 3, 1, 0),
					       ALU64_IMM(BPF_AND, 3, 0x7ff8),
					       J32IMM(BPF_JNE, 3, 20, 1), MOV64_REG(0, 9),
					       MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/jeq_known_bits_decided", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 0x7ff8),
					     JIMM(BPF_JEQ, 3, 20, 2), MOV64_IMM(0, 0), EXIT(),
					     MOV64_REG(0, 9), EXIT()) },
	{ "jmp/jne_known_bits_open", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 0x7ff8),
					  JIMM(BPF_JNE, 3, 24, 1), MOV64_REG(0, 9),
					  MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/ptr_vs_ptr_unpriv", PROG(JREG(BPF_JGT, 1, 10, 0), MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "jmp/ptr_vs_imm_unpriv", PROG(JIMM(BPF_JEQ, 1, 0, 0), MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "jmp/ptr_vs_ptr_root", PROG(JREG(BPF_JGT, 1, 10, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/jlt_bound_index", PROG(LDX(BPF_W, 3, 1, 0), JIMM(BPF_JLT, 3, 8, 2), MOV64_IMM(0, 0),
				      EXIT(), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
				      ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0),
				      EXIT()) },
	{ "jmp/jle_bound_off_by_one", PROG(LDX(BPF_W, 3, 1, 0), JIMM(BPF_JLE, 3, 8, 2),
					   MOV64_IMM(0, 0), EXIT(), MOV64_REG(2, 10),
					   ALU64_IMM(BPF_ADD, 2, -8), ALU64_REG(BPF_ADD, 2, 3),
					   ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/jsgt_no_lower_bound", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_SUB, 3, 100),
					  JIMM(BPF_JSGT, 3, 7, 4), MOV64_REG(2, 10),
					  ALU64_IMM(BPF_ADD, 2, -8), ALU64_REG(BPF_ADD, 2, 3),
					  ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/jmp32_bound", PROG(LDX(BPF_W, 3, 1, 0), J32IMM(BPF_JLT, 3, 8, 2), MOV64_IMM(0, 0),
				  EXIT(), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
				  ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0),
				  EXIT()) },
	{ "jmp/reg_vs_reg_bound", PROG(LDX(BPF_W, 3, 1, 0), MOV64_IMM(4, 8), JREG(BPF_JGE, 3, 4, 4),
				       MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
				       ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0),
				       MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/copy_shares_bound", PROG(LDX(BPF_W, 3, 1, 0), MOV64_REG(5, 3), JIMM(BPF_JGE, 5, 8, 4),
					MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
					ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0),
					EXIT()) },
	{ "jmp/jset_bit", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 3), JIMM(BPF_JSET, 3, 4, 1),
			       MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/uninit_cond", PROG(JIMM(BPF_JEQ, 5, 0, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/uninit_cond_src", PROG(JREG(BPF_JEQ, 1, 5, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/both_paths_r0", PROG(LDX(BPF_W, 3, 1, 0), JIMM(BPF_JEQ, 3, 0, 2), MOV64_IMM(0, 1),
				    EXIT(), EXIT()) },
	{ "jmp/jmp32_ptr_unpriv", PROG(J32IMM(BPF_JEQ, 1, 0, 0), MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "jmp/jne_edge_refine", PROG(LDX(BPF_B, 3, 1, 0), JIMM(BPF_JNE, 3, 255, 1), EXIT(),
				      MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -256),
				      ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0),
				      EXIT()) },
	/* Both operands of `if r9 >= r4` share an id (r2's, with fp-24's spill): the kernel's
	 * check_cond_jmp_op() collects the id's scalars once per operand into its 6 places
	 * (collect_linked_regs(), no check for one already there), so with four of them
	 * live the second pass keeps r2 and r4 and takes the id from r9 and fp-24.  On the
	 * fall-through (r9 < r4, a path that cannot happen) r9 then keeps its own narrowed
	 * range [0, 14], not r4's [1, 15], and the read at fp-16 + r9 + 1 stays inside.
	 * With r2 dead (three live) every one keeps the id and r9 takes r4's range: refused.
	 * bpfrt collected each once until session 25: it refused the first, and on
	 * SkyWalking Rover's 31 largest programs it pruned more than the kernel (451,603
	 * processed insns for the kernel's 455,195 up to 693,911 for 710,967). */
	{ "jmp/same_id_operands_four_linked",
	  PROG(LDX(BPF_W, 2, 1, 0), ALU64_IMM(BPF_AND, 2, 15), MOV64_REG(4, 2), MOV64_REG(9, 2),
	       STX(BPF_DW, 10, 2, -24), ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0),
	       JREG(BPF_JGE, 9, 4, 7), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -16),
	       ALU64_REG(BPF_ADD, 3, 9), LDX(BPF_B, 0, 3, 1), ALU64_REG(BPF_ADD, 0, 2),
	       MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 0), EXIT()) },
	{ "jmp/same_id_operands_three_linked",
	  PROG(LDX(BPF_W, 2, 1, 0), ALU64_IMM(BPF_AND, 2, 15), MOV64_REG(4, 2), MOV64_REG(9, 2),
	       STX(BPF_DW, 10, 2, -24), ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0),
	       JREG(BPF_JGE, 9, 4, 6), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -16),
	       ALU64_REG(BPF_ADD, 3, 9), LDX(BPF_B, 0, 3, 1), MOV64_IMM(0, 0), EXIT(),
	       MOV64_IMM(0, 0), EXIT()) },
};

void vcases_jmp(struct vcase_list *l)
{
	/* each comparison bounding a loaded u32 against 16; the taken side indexes the stack */
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		for (int w = 0; w < 2; w++) {
			uint8_t cls = w ? BPF_JMP32 : BPF_JMP;
			struct bpf_insn p[] = {
				LDX(BPF_W, 3, 1, 0), I(cls | ops[i].op | BPF_K, 3, 0, 2, 16),
				MOV64_IMM(0, 0), EXIT(), MOV64_REG(2, 10),
				ALU64_IMM(BPF_ADD, 2, -32), ALU64_REG(BPF_ADD, 2, 3),
				ST(BPF_B, 2, 0, 0), MOV64_IMM(0, 0), EXIT(),
			};
			struct bpf_insn q[] = { MOV64_IMM(3, 5), I(cls | ops[i].op | BPF_K, 3, 0, 1, 5),
						MOV64_REG(0, 9), MOV64_IMM(0, 0), EXIT() };

			vc_add(l, &(struct vcase){ .name = vc_name("jmp/bound_%s%s", ops[i].name,
								   w ? "32" : ""),
						   .insns = vc_keep(p, 10), .len = 10 });
			vc_add(l, &(struct vcase){ .name = vc_name("jmp/const_%s%s", ops[i].name,
								   w ? "32" : ""),
						   .insns = vc_keep(q, 5), .len = 5 });
		}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
