/* loop.c - loops: bounded loops that verify within the instruction budget, infinite loops,
 * loops that never converge, and a few real-program shapes that need state pruning. */
#include <errno.h>

#include "case.h"

static const struct vcase cases[] = {
	{ "loop/infinite_goto_self", PROG(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 0, 0, -1), EXIT()) },
	{ "loop/infinite_ja_back", PROG(MOV64_IMM(0, 0), MOV64_IMM(1, 1), JA(-2), EXIT()) },
	{ "loop/ok_sum_10", PROG(MOV64_IMM(0, 0), MOV64_IMM(1, 0), ALU64_REG(BPF_ADD, 0, 1),
				 ALU64_IMM(BPF_ADD, 1, 1), JIMM(BPF_JLT, 1, 10, -3), EXIT()) },
	{ "loop/ok_1000", PROG(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1), JIMM(BPF_JLT, 0, 1000, -2),
			       EXIT()) },
	{ "loop/too_complex", PROG(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
				   JIMM(BPF_JLT, 0, 1000000, -2), EXIT()) },
	{ "loop/unknown_bound", PROG(LDX(BPF_W, 2, 1, 0), MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
				     JREG(BPF_JLT, 0, 2, -2), EXIT()) },
	{ "loop/down_count", PROG(MOV64_IMM(0, 100), ALU64_IMM(BPF_SUB, 0, 1), JIMM(BPF_JNE, 0, 0, -2),
				  EXIT()) },
	{ "loop/unpriv_back_edge", PROG(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					JIMM(BPF_JLT, 0, 4, -2), EXIT()),
	  .priv = BRT_PRIV_UNPRIV, .uerr = EINVAL, .umsg = "back-edge from insn 2 to 1" },
	{ "loop/ok_stack_loop", PROG(MOV64_IMM(1, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -64),
				     ALU64_REG(BPF_ADD, 2, 1), ST(BPF_B, 2, 0, 0),
				     ALU64_IMM(BPF_ADD, 1, 1), JIMM(BPF_JLT, 1, 64, -5),
				     MOV64_IMM(0, 0), EXIT()) },
	{ "loop/stack_loop_overrun", PROG(MOV64_IMM(1, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -64),
					  ALU64_REG(BPF_ADD, 2, 1), ST(BPF_B, 2, 0, 0),
					  ALU64_IMM(BPF_ADD, 1, 1), JIMM(BPF_JLE, 1, 64, -5),
					  MOV64_IMM(0, 0), EXIT()) },
	{ "loop/diamonds", PROG(LDX(BPF_W, 2, 1, 0), MOV64_IMM(0, 0),
				JIMM(BPF_JSET, 2, 1, 1), ALU64_IMM(BPF_ADD, 0, 1),
				JIMM(BPF_JSET, 2, 2, 1), ALU64_IMM(BPF_ADD, 0, 2),
				JIMM(BPF_JSET, 2, 4, 1), ALU64_IMM(BPF_ADD, 0, 4),
				JIMM(BPF_JSET, 2, 8, 1), ALU64_IMM(BPF_ADD, 0, 8),
				JIMM(BPF_JSET, 2, 16, 1), ALU64_IMM(BPF_ADD, 0, 16),
				JIMM(BPF_JSET, 2, 32, 1), ALU64_IMM(BPF_ADD, 0, 32),
				JIMM(BPF_JSET, 2, 64, 1), ALU64_IMM(BPF_ADD, 0, 64),
				JIMM(BPF_JSET, 2, 128, 1), ALU64_IMM(BPF_ADD, 0, 128), EXIT()) },
	{ "loop/nested", PROG(MOV64_IMM(0, 0), MOV64_IMM(1, 0), MOV64_IMM(2, 0),
			      ALU64_IMM(BPF_ADD, 0, 1), ALU64_IMM(BPF_ADD, 2, 1),
			      JIMM(BPF_JLT, 2, 5, -3), ALU64_IMM(BPF_ADD, 1, 1),
			      JIMM(BPF_JLT, 1, 5, -6), EXIT()) },
	/* a branch inside a loop: the join must prune on the sum nobody checks */
	{ "loop/diamond_in_loop_100", PROG(MOV64_REG(6, 1), LDX(BPF_W, 7, 6, 0), MOV64_IMM(0, 0),
					   MOV64_IMM(1, 0), JIMM(BPF_JSET, 7, 1, 2),
					   ALU64_IMM(BPF_ADD, 0, 2), JA(1), ALU64_IMM(BPF_ADD, 0, 1),
					   ALU64_IMM(BPF_ADD, 1, 1), JIMM(BPF_JLT, 1, 100, -6), EXIT()) },
	{ "loop/diamond_shifting_100", PROG(MOV64_REG(6, 1), LDX(BPF_W, 7, 6, 0), MOV64_IMM(0, 0),
					    MOV64_IMM(1, 0), JIMM(BPF_JSET, 7, 1, 2),
					    ALU64_IMM(BPF_ADD, 0, 2), JA(1), ALU64_IMM(BPF_ADD, 0, 1),
					    ALU64_IMM(BPF_RSH, 7, 1), ALU64_IMM(BPF_ADD, 1, 1),
					    JIMM(BPF_JLT, 1, 100, -7), EXIT()) },
	{ "loop/diamonds_24", PROG(LDX(BPF_W, 2, 1, 0), MOV64_IMM(0, 0),
				   JIMM(BPF_JSET, 2, 1, 1), ALU64_IMM(BPF_ADD, 0, 1),
				   JIMM(BPF_JSET, 2, 2, 1), ALU64_IMM(BPF_ADD, 0, 2),
				   JIMM(BPF_JSET, 2, 4, 1), ALU64_IMM(BPF_ADD, 0, 4),
				   JIMM(BPF_JSET, 2, 8, 1), ALU64_IMM(BPF_ADD, 0, 8),
				   JIMM(BPF_JSET, 2, 16, 1), ALU64_IMM(BPF_ADD, 0, 16),
				   JIMM(BPF_JSET, 2, 32, 1), ALU64_IMM(BPF_ADD, 0, 32),
				   JIMM(BPF_JSET, 2, 64, 1), ALU64_IMM(BPF_ADD, 0, 64),
				   JIMM(BPF_JSET, 2, 128, 1), ALU64_IMM(BPF_ADD, 0, 128),
				   JIMM(BPF_JSET, 2, 256, 1), ALU64_IMM(BPF_ADD, 0, 1),
				   JIMM(BPF_JSET, 2, 512, 1), ALU64_IMM(BPF_ADD, 0, 2),
				   JIMM(BPF_JSET, 2, 1024, 1), ALU64_IMM(BPF_ADD, 0, 4),
				   JIMM(BPF_JSET, 2, 2048, 1), ALU64_IMM(BPF_ADD, 0, 8),
				   JIMM(BPF_JSET, 2, 4096, 1), ALU64_IMM(BPF_ADD, 0, 16),
				   JIMM(BPF_JSET, 2, 8192, 1), ALU64_IMM(BPF_ADD, 0, 32),
				   JIMM(BPF_JSET, 2, 16384, 1), ALU64_IMM(BPF_ADD, 0, 64),
				   JIMM(BPF_JSET, 2, 32768, 1), ALU64_IMM(BPF_ADD, 0, 128),
				   JIMM(BPF_JSET, 2, 65536, 1), ALU64_IMM(BPF_ADD, 0, 1),
				   JIMM(BPF_JSET, 2, 131072, 1), ALU64_IMM(BPF_ADD, 0, 2),
				   JIMM(BPF_JSET, 2, 262144, 1), ALU64_IMM(BPF_ADD, 0, 4),
				   JIMM(BPF_JSET, 2, 524288, 1), ALU64_IMM(BPF_ADD, 0, 8),
				   JIMM(BPF_JSET, 2, 1048576, 1), ALU64_IMM(BPF_ADD, 0, 16),
				   JIMM(BPF_JSET, 2, 2097152, 1), ALU64_IMM(BPF_ADD, 0, 32),
				   JIMM(BPF_JSET, 2, 4194304, 1), ALU64_IMM(BPF_ADD, 0, 64),
				   JIMM(BPF_JSET, 2, 8388608, 1), ALU64_IMM(BPF_ADD, 0, 128),
				   EXIT()) },
	{ "loop/call_in_loop", PROG(MOV64_IMM(6, 0), CALL(BPF_FUNC_ktime_get_ns),
				    ALU64_IMM(BPF_ADD, 6, 1), JIMM(BPF_JLT, 6, 8, -3),
				    MOV64_IMM(0, 0), EXIT()) },
};

void vcases_loop(struct vcase_list *l)
{
	for (int n = 2; n <= 4096; n *= 4) {
		struct bpf_insn p[] = { MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					JIMM(BPF_JLT, 0, n, -2), EXIT() };

		vc_add(l, &(struct vcase){ .name = vc_name("loop/count_to_%d", n),
					   .insns = vc_keep(p, 4), .len = 4 });
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
