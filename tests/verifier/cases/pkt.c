/* pkt.c - direct packet access (XDP and tc): bounds proven by comparing with data_end in
 * every direction, reads and writes past the proven range, strict alignment with
 * NET_IP_ALIGN, data_meta, pointer arithmetic on packet pointers, LD_ABS/LD_IND. */
#include "case.h"

#define XDP .prog_type = BPF_PROG_TYPE_XDP
#define TC .prog_type = BPF_PROG_TYPE_SCHED_CLS
/* r2 = data, r3 = data_end (XDP layout) */
#define XDP_PTRS LDX(BPF_W, 2, 1, 0), LDX(BPF_W, 3, 1, 4)

static const struct vcase cases[] = {
	{ "pkt/no_check", PROG(XDP_PTRS, LDX(BPF_B, 0, 2, 0), EXIT()), XDP },
	{ "pkt/ok_14", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 14),
			    JREG(BPF_JGT, 4, 3, 2), LDX(BPF_H, 0, 2, 12), EXIT(), MOV64_IMM(0, 1),
			    EXIT()), XDP },
	{ "pkt/past_range", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 14),
				 JREG(BPF_JGT, 4, 3, 2), LDX(BPF_H, 0, 2, 13), EXIT(),
				 MOV64_IMM(0, 1), EXIT()), XDP },
	{ "pkt/wrong_branch", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 14),
				   JREG(BPF_JGT, 4, 3, 2), MOV64_IMM(0, 1), EXIT(),
				   LDX(BPF_B, 0, 2, 0), EXIT()), XDP },
	{ "pkt/end_lt", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
			     JREG(BPF_JLT, 3, 4, 2), LDX(BPF_DW, 0, 2, 0), EXIT(), MOV64_IMM(0, 1),
			     EXIT()), XDP },
	{ "pkt/jge_open", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
			       JREG(BPF_JGE, 4, 3, 2), LDX(BPF_B, 0, 2, 8), EXIT(), MOV64_IMM(0, 1),
			       EXIT()), XDP },
	{ "pkt/jle_taken", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
				JREG(BPF_JLE, 4, 3, 2), MOV64_IMM(0, 1), EXIT(),
				LDX(BPF_DW, 0, 2, 0), EXIT()), XDP },
	{ "pkt/write_xdp", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 4),
				JREG(BPF_JGT, 4, 3, 1), ST(BPF_W, 2, 0, 0), MOV64_IMM(0, 2), EXIT()),
	  XDP },
	{ "pkt/misaligned_strict", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
					JREG(BPF_JGT, 4, 3, 1), LDX(BPF_W, 0, 2, 1), MOV64_IMM(0, 2),
					EXIT()), XDP, .prog_flags = BPF_F_STRICT_ALIGNMENT },
	{ "pkt/aligned_strict_2", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
				       JREG(BPF_JGT, 4, 3, 1), LDX(BPF_W, 0, 2, 2), MOV64_IMM(0, 2),
				       EXIT()), XDP, .prog_flags = BPF_F_STRICT_ALIGNMENT },
	{ "pkt/misaligned_loose", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 8),
				       JREG(BPF_JGT, 4, 3, 1), LDX(BPF_W, 0, 2, 1), MOV64_IMM(0, 2),
				       EXIT()), XDP },
	{ "pkt/end_deref", PROG(XDP_PTRS, LDX(BPF_B, 0, 3, 0), EXIT()), XDP },
	{ "pkt/end_arith", PROG(XDP_PTRS, ALU64_IMM(BPF_ADD, 3, 1), MOV64_IMM(0, 0), EXIT()), XDP },
	{ "pkt/var_off_after_check", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 16),
					  JREG(BPF_JGT, 4, 3, 5), LDX(BPF_B, 5, 2, 0),
					  ALU64_IMM(BPF_AND, 5, 7), ALU64_REG(BPF_ADD, 2, 5),
					  LDX(BPF_B, 0, 2, 0), EXIT(), MOV64_IMM(0, 1), EXIT()), XDP },
	{ "pkt/var_then_check", PROG(XDP_PTRS, LDX(BPF_B, 5, 1, 12), ALU64_IMM(BPF_AND, 5, 15),
				     ALU64_REG(BPF_ADD, 2, 5), MOV64_REG(4, 2),
				     ALU64_IMM(BPF_ADD, 4, 4), JREG(BPF_JGT, 4, 3, 1),
				     LDX(BPF_W, 0, 2, 0), MOV64_IMM(0, 1), EXIT()), XDP },
	{ "pkt/meta_check", PROG(LDX(BPF_W, 2, 1, 8), LDX(BPF_W, 3, 1, 0), MOV64_REG(4, 2),
				 ALU64_IMM(BPF_ADD, 4, 4), JREG(BPF_JGT, 4, 3, 1),
				 LDX(BPF_W, 0, 2, 0), MOV64_IMM(0, 1), EXIT()), XDP },
	{ "pkt/meta_no_check", PROG(LDX(BPF_W, 2, 1, 8), LDX(BPF_W, 0, 2, 0), EXIT()), XDP },
	{ "pkt/pkt_ptr_return_unpriv", PROG(LDX(BPF_W, 0, 1, 0), EXIT()), XDP,
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "pkt/compare_unpriv_ok", PROG(XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 1),
					JREG(BPF_JGT, 4, 3, 1), LDX(BPF_B, 0, 2, 0), MOV64_IMM(0, 1),
					EXIT()), XDP, .priv = BRT_PRIV_BPF_CAPABLE },
	{ "pkt/tc_ok", PROG(LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), MOV64_REG(4, 2),
			    ALU64_IMM(BPF_ADD, 4, 2), JREG(BPF_JGT, 4, 3, 1), LDX(BPF_H, 0, 2, 0),
			    MOV64_IMM(0, 0), EXIT()), TC },
	{ "pkt/tc_write", PROG(LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), MOV64_REG(4, 2),
			       ALU64_IMM(BPF_ADD, 4, 2), JREG(BPF_JGT, 4, 3, 1), ST(BPF_H, 2, 0, 0),
			       MOV64_IMM(0, 0), EXIT()), TC },
	{ "pkt/cgroup_skb_write", PROG(LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), MOV64_REG(4, 2),
				       ALU64_IMM(BPF_ADD, 4, 2), JREG(BPF_JGT, 4, 3, 1),
				       ST(BPF_H, 2, 0, 0), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },
	{ "pkt/ld_abs_ok", PROG(MOV64_REG(6, 1), LD_ABS(BPF_B, 9), EXIT()) },
	{ "pkt/ld_ind_ok", PROG(MOV64_REG(6, 1), MOV64_IMM(2, 2), LD_IND(BPF_W, 2, 0), EXIT()) },
	{ "pkt/ld_abs_no_r6", PROG(LD_ABS(BPF_B, 9), EXIT()) },
	{ "pkt/ld_abs_r6_not_ctx", PROG(MOV64_REG(6, 10), LD_ABS(BPF_B, 9), EXIT()) },
	{ "pkt/ld_abs_xdp", PROG(MOV64_REG(6, 1), LD_ABS(BPF_B, 9), EXIT()), XDP },
	{ "pkt/ld_abs_clobbers", PROG(MOV64_REG(6, 1), MOV64_IMM(2, 1), LD_ABS(BPF_B, 9),
				      MOV64_REG(0, 2), EXIT()) },
	{ "pkt/ld_ind_uninit", PROG(MOV64_REG(6, 1), LD_IND(BPF_B, 4, 0), EXIT()) },
};

void vcases_pkt(struct vcase_list *l)
{
	/* check N bytes, then read one byte at offset k */
	for (int n = 1; n <= 16; n += 5)
		for (int k = 0; k <= 16; k += 3) {
			struct bpf_insn p[] = { XDP_PTRS, MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, n),
						JREG(BPF_JGT, 4, 3, 2), LDX(BPF_B, 0, 2, (int16_t)k),
						EXIT(), MOV64_IMM(0, 1), EXIT() };

			vc_add(l, &(struct vcase){ .name = vc_name("pkt/check%d_read_at_%d", n, k),
						   .insns = vc_keep(p, 9), .len = 9, XDP });
		}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
