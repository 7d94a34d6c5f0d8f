/* unpriv.c - the lower privilege levels.  bpf_capable (CAP_BPF without CAP_PERFMON, checked
 * against the kernel): pointer leaks, pointer comparisons, uninitialised stack, Spectre
 * rules, precise spills.  Unprivileged (no capability): back-edges, bpf-to-bpf calls,
 * program types and sizes, plus twins of bpf_capable cases; their expected answers come
 * from the kernel's source because this machine's kernel refuses unprivileged loads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"

#define CAPBPF .priv = BRT_PRIV_BPF_CAPABLE
#define UNPRIV .priv = BRT_PRIV_UNPRIV
#define NOFUNCS "loading/calling other bpf or kernel functions are allowed for CAP_BPF and " \
		"CAP_SYS_ADMIN"
/* the filled slot is an unknown scalar: check_reg_sane_offset() refuses it first */
#define UNBOUNDED "math between fp pointer and register with unbounded min value is not allowed"

/* a constant spilled to the stack and filled back stays a constant only for bpf_capable
 * loaders; r3 = fp - 16 + that constant, then a store through r3 */
#define SPILL_CONST_OFF(spill) spill, LDX(BPF_DW, 2, 10, -8), MOV64_REG(3, 10), \
	ALU64_IMM(BPF_ADD, 3, -16), ALU64_REG(BPF_ADD, 3, 2), ST(BPF_DW, 3, 0, 0), \
	MOV64_IMM(0, 0), EXIT()
#define SPILL_REG MOV64_IMM(1, 8), STX(BPF_DW, 10, 1, -8)
#define SPILL_ST ST(BPF_DW, 10, -8, 8)
/* array lookup with the constant key 0, the value read without a NULL check: bpf_capable
 * loaders know the key is in range */
#define CONST_KEY_NO_CHECK PROG(LOOKUP_MAP0, LDX(BPF_DW, 0, 0, 0), EXIT())

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
	{ "unpriv/spill_reg_const_offset", PROG(SPILL_CONST_OFF(SPILL_REG)), CAPBPF },
	{ "unpriv/spill_st_const_offset", PROG(SPILL_CONST_OFF(SPILL_ST)), CAPBPF },
	{ "unpriv/array_const_key", CONST_KEY_NO_CHECK, CAPBPF, .maps = { ARRAY48 } },
	{ "unpriv/bpf2bpf_capbpf", PROG(MOV64_IMM(1, 1), CALL_SUB(1), EXIT(), MOV64_REG(0, 1),
					 EXIT()), CAPBPF },
	{ "unpriv/cgroup_skb_capbpf", PROG(MOV64_IMM(0, 1), EXIT()), CAPBPF,
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },

	/* no capability at all */
	{ "unpriv/u_ok_const", PROG(MOV64_IMM(0, 0), EXIT()), UNPRIV },
	{ "unpriv/u_forward_jump_ok", PROG(MOV64_IMM(0, 0), LDX(BPF_W, 2, 1, 0),
					   JIMM(BPF_JGT, 2, 10, 1), MOV64_IMM(0, 1), EXIT()),
	  UNPRIV },
	{ "unpriv/u_back_edge_ja_self", PROG(MOV64_IMM(0, 0), JA(-1), EXIT()), UNPRIV,
	  .uerr = EINVAL, .umsg = "back-edge from insn 1 to 1" },
	{ "unpriv/u_back_edge_cond_self", PROG(MOV64_IMM(0, 0), JIMM(BPF_JEQ, 0, 0, -1), EXIT()),
	  UNPRIV, .uerr = EINVAL, .umsg = "back-edge from insn 1 to 1" },
	{ "unpriv/u_back_edge_to_start", PROG(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					      MOV64_REG(1, 0), JIMM(BPF_JLT, 0, 10, -4), EXIT()),
	  UNPRIV, .uerr = EINVAL, .umsg = "back-edge from insn 3 to 0" },
	{ "unpriv/u_back_edge_jmp32", PROG(MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					   J32IMM(BPF_JNE, 0, 3, -2), EXIT()),
	  UNPRIV, .uerr = EINVAL, .umsg = "back-edge from insn 2 to 1" },
	{ "unpriv/u_bpf2bpf", PROG(MOV64_IMM(1, 1), CALL_SUB(1), EXIT(), MOV64_REG(0, 1), EXIT()),
	  UNPRIV, .uerr = EPERM, .umsg = NOFUNCS },
	{ "unpriv/u_pseudo_func", PROG(I(BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_FUNC, 0, 3),
				       I(0, 0, 0, 0, 0), MOV64_IMM(0, 0), EXIT(), MOV64_IMM(0, 0),
				       EXIT()),
	  UNPRIV, .uerr = EPERM, .umsg = NOFUNCS },
	{ "unpriv/u_xdp", PROG(MOV64_IMM(0, 2), EXIT()), UNPRIV, .prog_type = BPF_PROG_TYPE_XDP,
	  .uerr = EPERM },
	{ "unpriv/u_sched_cls", PROG(MOV64_IMM(0, 0), EXIT()), UNPRIV,
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS, .uerr = EPERM },
	{ "unpriv/u_kprobe", PROG(MOV64_IMM(0, 0), EXIT()), UNPRIV,
	  .prog_type = BPF_PROG_TYPE_KPROBE, .uerr = EPERM },
	{ "unpriv/u_tracepoint", PROG(MOV64_IMM(0, 0), EXIT()), UNPRIV,
	  .prog_type = BPF_PROG_TYPE_TRACEPOINT, .uerr = EPERM },
	{ "unpriv/u_raw_tracepoint", PROG(MOV64_IMM(0, 0), EXIT()), UNPRIV,
	  .prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT, .uerr = EPERM },
	{ "unpriv/u_cgroup_skb", PROG(MOV64_IMM(0, 1), EXIT()), UNPRIV,
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },
	{ "unpriv/u_cgroup_skb_leak", PROG(MOV64_REG(0, 1), EXIT()), UNPRIV,
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_EGRESS,
	  .uerr = EACCES, .umsg = "R0 leaks addr as return value" },
	{ "unpriv/u_ktime", PROG(CALL(BPF_FUNC_ktime_get_ns), EXIT()), UNPRIV },
	{ "unpriv/u_prandom", PROG(CALL(BPF_FUNC_get_prandom_u32), EXIT()), UNPRIV },
	{ "unpriv/u_spill_reg_const_offset", PROG(SPILL_CONST_OFF(SPILL_REG)), UNPRIV,
	  .uerr = EINVAL, .umsg = UNBOUNDED },
	{ "unpriv/u_spill_st_const_offset", PROG(SPILL_CONST_OFF(SPILL_ST)), UNPRIV,
	  .uerr = EINVAL, .umsg = UNBOUNDED },
	{ "unpriv/u_array_const_key", CONST_KEY_NO_CHECK, UNPRIV, .maps = { ARRAY48 },
	  .uerr = EACCES, .umsg = "R0 invalid mem access 'map_value_or_null'" },
	{ "unpriv/u_array_checked", PROG(LOOKUP_MAP0, JIMM(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 0),
					 EXIT()), UNPRIV, .maps = { ARRAY48 } },
};

void vcases_unpriv(struct vcase_list *l)
{
	struct bpf_insn *p = malloc(4097 * sizeof(*p));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
	if (!p)
		abort();
	/* BPF_MAXINSNS: 4,096 instructions for a loader without CAP_BPF, checked before
	 * anything else (E2BIG, empty log) */
	for (int i = 0; i < 4096; i++)
		p[i] = (struct bpf_insn)MOV64_IMM(0, 0);
	p[4095] = (struct bpf_insn)EXIT();
	vc_add(l, &(struct vcase){ "unpriv/u_4096_insns", vc_keep(p, 4096), 4096, UNPRIV });
	p[4095] = (struct bpf_insn)MOV64_IMM(0, 0);
	p[4096] = (struct bpf_insn)EXIT();
	vc_add(l, &(struct vcase){ "unpriv/u_4097_insns", vc_keep(p, 4097), 4097, UNPRIV,
				   .uerr = E2BIG });
	vc_add(l, &(struct vcase){ "unpriv/c_4097_insns", vc_keep(p, 4097), 4097, CAPBPF });
	free(p);
}

/* bpf_capable cases whose unprivileged answer is the kernel's bpf_capable one: socket
 * filters without loops, calls, constant spills or helpers beyond the base set, where
 * the two levels run the same code.  The rest need their own expectation. */
static const struct {
	const char *base;
	int override;  /* 1: err/msg below instead of the bpf_capable answer */
	int err;
	const char *msg;
} twins[] = {
	{ "jmp/ptr_vs_ptr_unpriv" }, { "jmp/ptr_vs_imm_unpriv" }, { "jmp/jmp32_ptr_unpriv" },
	{ "stack/uninit_read_unpriv" }, { "stack/partial_init_read_unpriv" },
	{ "stack/init_read_unpriv" }, { "stack/spill_ptr_4bytes_unpriv" },
	{ "stack/corrupt_spilled_ptr_unpriv" }, { "stack/leak_fp_unpriv" },
	{ "stack/leak_fp_spilled_ret_unpriv" }, { "stack/var_write_unpriv" },
	{ "stack/atomic_uninit_unpriv" }, { "stack/xchg_ptr_leak_unpriv" },
	{ "ctx/ctx_as_scalar_return_unpriv" }, { "map/update_value_uninit_unpriv" },
	{ "map/key_uninit_unpriv" }, { "map/leak_fp_into_map_unpriv" },
	{ "map/value_ptr_oob_arith_unpriv" }, { "map/lookup_result_leak_unpriv" },
	{ "helper/smp_id_unpriv" }, { "helper/probe_read_kernel_unpriv" },
	{ "unpriv/ret_fp" }, { "unpriv/ret_ctx" }, { "unpriv/ok_const" }, { "unpriv/ok_ctx_read" },
	{ "unpriv/ptr_minus_ptr" }, { "unpriv/ptr_mov32" }, { "unpriv/ptr_alu32_sub" },
	{ "unpriv/fp_out_of_range" }, { "unpriv/fp_positive" }, { "unpriv/fp_ok_arith" },
	{ "unpriv/store_fp_to_stack" }, { "unpriv/spill_ctx_fill_half" }, { "unpriv/neg_ptr" },
	{ "unpriv/var_stack_read" }, { "unpriv/leak_into_cb" }, { "unpriv/mixed_sign_arith" },
	{ "unpriv/back_edge_ok_capbpf", 1, EINVAL, "back-edge from insn 2 to 1" },
	{ "unpriv/xdp_ok", 1, EPERM, NULL },
	{ "unpriv/kprobe_eperm", 1, EPERM, NULL },
	{ "pkt/pkt_ptr_return_unpriv", 1, EPERM, NULL },
	{ "call/callee_returns_ptr_unpriv", 1, EPERM, NOFUNCS },
};

void vc_unpriv_twins(struct vcase_list *l)
{
	size_t n = l->n;

	for (size_t t = 0; t < sizeof(twins) / sizeof(twins[0]); t++)
		for (size_t i = 0; i < n; i++) {
			const struct vexpect *e;
			struct vcase c;

			if (strcmp(l->v[i].name, twins[t].base))
				continue;
			c = l->v[i];
			e = vc_expect(c.name);
			if (!twins[t].override && (!e || e->known))
				break; /* no kernel answer to borrow */
			c.name = vc_name("unpriv/twin:%s", c.name);
			c.priv = BRT_PRIV_UNPRIV;
			c.uerr = twins[t].override ? twins[t].err : e->err;
			c.umsg = twins[t].override ? twins[t].msg : e->msg;
			vc_add(l, &c);
			break;
		}
	for (size_t i = 0; i < n; i++) { /* every ALU op on the frame pointer (alu.c) */
		const char *nm = l->v[i].name;
		const struct vexpect *e = vc_expect(nm);
		struct vcase c = l->v[i];

		if (strncmp(nm, "alu/fp_", 7) || !strstr(nm, "_reg_unpriv") ||
		    c.priv != BRT_PRIV_BPF_CAPABLE || !e || e->known)
			continue;
		c.name = vc_name("unpriv/twin:%s", nm);
		c.priv = BRT_PRIV_UNPRIV;
		c.uerr = e->err;
		c.umsg = e->msg;
		vc_add(l, &c);
	}
}
