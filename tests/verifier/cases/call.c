/* call.c - bpf-to-bpf calls: frames, arguments and return values, stack pointers across
 * frames, call depth, the combined stack limit, subprogram exits. */
#include <errno.h>

#include "case.h"

static const struct vcase cases[] = {
	{ "call/ok_simple", PROG(MOV64_IMM(1, 20), CALL_SUB(2), ALU64_IMM(BPF_ADD, 0, 1), EXIT(),
				 MOV64_REG(0, 1), ALU64_IMM(BPF_MUL, 0, 2), EXIT()) },
	{ "call/arg_uninit_in_callee", PROG(CALL_SUB(2), ALU64_IMM(BPF_ADD, 0, 1), EXIT(),
					    MOV64_REG(0, 2), EXIT()) },
	{ "call/callee_r0_uninit", PROG(CALL_SUB(2), MOV64_IMM(0, 0), EXIT(), EXIT()) },
	{ "call/caller_r1_clobbered", PROG(MOV64_IMM(1, 1), CALL_SUB(2), MOV64_REG(0, 1), EXIT(),
					   MOV64_IMM(0, 0), EXIT()) },
	{ "call/caller_r6_kept", PROG(MOV64_IMM(6, 1), CALL_SUB(2), MOV64_REG(0, 6), EXIT(),
				      MOV64_IMM(0, 0), EXIT()) },
	{ "call/callee_r6_uninit", PROG(MOV64_IMM(6, 1), CALL_SUB(2), EXIT(), EXIT(),
					MOV64_REG(0, 6), EXIT()) },
	{ "call/return_stack_ptr", PROG(CALL_SUB(2), MOV64_IMM(0, 0), EXIT(), MOV64_REG(0, 10),
					EXIT()) },
	{ "call/pass_stack_ptr", PROG(ST(BPF_DW, 10, -8, 5), MOV64_REG(1, 10),
				      ALU64_IMM(BPF_ADD, 1, -8), CALL_SUB(1), EXIT(),
				      LDX(BPF_DW, 0, 1, 0), EXIT()) },
	{ "call/callee_writes_caller_stack", PROG(MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
						  CALL_SUB(2), LDX(BPF_DW, 0, 10, -8), EXIT(),
						  ST(BPF_DW, 1, 0, 3), MOV64_IMM(0, 0), EXIT()) },
	{ "call/callee_ctx", PROG(CALL_SUB(1), EXIT(), LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "call/combined_stack_1024", PROG(ST(BPF_DW, 10, -512, 0), CALL_SUB(2), MOV64_IMM(0, 0),
					   EXIT(), ST(BPF_DW, 10, -512, 0), MOV64_IMM(0, 0),
					   EXIT()) },
	{ "call/combined_stack_ok", PROG(ST(BPF_DW, 10, -256, 0), CALL_SUB(2), MOV64_IMM(0, 0),
					 EXIT(), ST(BPF_DW, 10, -256, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "call/combined_stack_kprobe", PROG(ST(BPF_DW, 10, -512, 0), CALL_SUB(2), MOV64_IMM(0, 0),
					     EXIT(), ST(BPF_DW, 10, -512, 0), MOV64_IMM(0, 0),
					     EXIT()),
	  .prog_type = BPF_PROG_TYPE_KPROBE },
	{ "call/depth_9", PROG(CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(),
			       CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(),
			       CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(), MOV64_IMM(0, 0), EXIT()) },
	{ "call/depth_8", PROG(CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(),
			       CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(), CALL_SUB(1), EXIT(),
			       CALL_SUB(1), EXIT(), MOV64_IMM(0, 0), EXIT()) },
	{ "call/recursion", PROG(CALL_SUB(1), EXIT(), CALL_SUB(-1), EXIT()) },
	{ "call/two_calls_same_sub", PROG(MOV64_IMM(1, 1), CALL_SUB(4), MOV64_REG(6, 0),
					  MOV64_IMM(1, 2), CALL_SUB(1), EXIT(), MOV64_REG(0, 1),
					  EXIT()) },
	{ "call/callee_returns_ptr_unpriv", PROG(CALL_SUB(1), EXIT(), MOV64_REG(0, 1), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "call/callee_leaves_r0_unset", PROG(CALL_SUB(2), MOV64_IMM(0, 0), EXIT(), MOV64_IMM(1, 1),
					      EXIT()) },
	{ "call/callee_r0_unset_read", PROG(CALL_SUB(1), EXIT(), MOV64_IMM(1, 1), EXIT()) },
	{ "call/callee_returns_ctx_root", PROG(CALL_SUB(2), MOV64_IMM(0, 0), EXIT(),
					       MOV64_REG(0, 1), EXIT()) },
	{ "call/unpriv_call", PROG(CALL_SUB(1), EXIT(), MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_UNPRIV, .uerr = EPERM,
	  .umsg = "loading/calling other bpf or kernel functions are allowed for CAP_BPF and "
		  "CAP_SYS_ADMIN" },
	{ "call/caller_stack_deep_read", PROG(MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
					      CALL_SUB(2), MOV64_IMM(0, 0), EXIT(),
					      LDX(BPF_DW, 0, 1, -8), EXIT()) },
	{ "call/spill_fp_to_caller", PROG(MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8), CALL_SUB(2),
					  MOV64_IMM(0, 0), EXIT(), STX(BPF_DW, 1, 10, 0),
					  MOV64_IMM(0, 0), EXIT()) },
	{ "call/tail_call_in_subprog", PROG(CALL_SUB(2), MOV64_IMM(0, 0), EXIT(), MOV64_IMM(3, 0),
					    LD_MAP(2, 0), CALL(BPF_FUNC_tail_call), MOV64_IMM(0, 0),
					    EXIT()),
	  .maps = { { BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0 } } },
	/* with BTF a subprogram may tail call; the tail-called program returns to its caller
	 * (6.18 walks that exit too, r0 unknown): the main program's exit sees either r0 */
	{ "call/tail_call_in_subprog_btf", PROG(CALL_SUB(1), EXIT(), MOV64_IMM(3, 0), LD_MAP(2, 0),
						CALL(BPF_FUNC_tail_call), MOV64_IMM(0, 0), EXIT()),
	  .btf = 1, .maps = { { BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0 } } },
	{ "call/tail_call_in_subprog_ret_unknown",
	  PROG(CALL_SUB(1), EXIT(), MOV64_IMM(3, 0), LD_MAP(2, 0), CALL(BPF_FUNC_tail_call),
	       MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS, .btf = 1,
	  .maps = { { BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0 } } },
	/* the path where the tail call fails keeps packet pointers (only the exit path above
	 * forgets them), in the main program too */
	{ "call/tail_call_fail_keeps_pkt",
	  PROG(MOV64_REG(6, 1), LDX(BPF_W, 7, 1, 76), LDX(BPF_W, 8, 1, 80), MOV64_REG(0, 7),
	       ALU64_IMM(BPF_ADD, 0, 1), JREG(BPF_JGT, 0, 8, 6), MOV64_IMM(3, 0), LD_MAP(2, 0),
	       CALL(BPF_FUNC_tail_call), LDX(BPF_B, 0, 7, 0), EXIT(), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS, .maps = { { BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0 } } },
};

void vcases_call(struct vcase_list *l)
{
	/* main and callee stack sizes around the 512-byte combined limit */
	for (int a = 64; a <= 512; a += 64)
		for (int b = 64; b <= 512; b += 128) {
			struct bpf_insn p[] = { ST(BPF_DW, 10, (int16_t)-a, 0), CALL_SUB(2),
						MOV64_IMM(0, 0), EXIT(), ST(BPF_DW, 10, (int16_t)-b, 0),
						MOV64_IMM(0, 0), EXIT() };

			vc_add(l, &(struct vcase){ .name = vc_name("call/stack_%d_%d", a, b),
						   .insns = vc_keep(p, 7), .len = 7 });
		}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
