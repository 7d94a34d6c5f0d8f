/* ctx.c - context access for each program type: reads of every size and 4-byte writes
 * across the context (and past its end), packet pointers loaded from the context,
 * modified and variable ctx pointers, atomics on the context. */
#include "case.h"

static const struct {
	const char *name;
	uint32_t type;
	uint32_t attach;
	int size;
	int step;
} types[] = {
	{ "socket", BPF_PROG_TYPE_SOCKET_FILTER, 0, 192, 12 },
	{ "tc", BPF_PROG_TYPE_SCHED_CLS, 0, 192, 12 },
	{ "cgroup_skb", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS, 192, 20 },
	{ "xdp", BPF_PROG_TYPE_XDP, 0, 24, 2 },
	{ "kprobe", BPF_PROG_TYPE_KPROBE, 0, 168, 20 },
	{ "raw_tp", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 96, 12 },
	{ "tracepoint", BPF_PROG_TYPE_TRACEPOINT, 0, 64, 12 },
};

static const struct vcase cases[] = {
	{ "ctx/bad_offset_1000", PROG(LDX(BPF_W, 0, 1, 1000), EXIT()) },
	{ "ctx/len_8byte", PROG(LDX(BPF_DW, 0, 1, 0), EXIT()) },
	{ "ctx/write_len_socket", PROG(MOV64_IMM(0, 0), STX(BPF_W, 1, 0, 0), EXIT()) },
	{ "ctx/st_cb0", PROG(ST(BPF_W, 1, 48, 5), LDX(BPF_W, 0, 1, 48), EXIT()) },
	{ "ctx/atomic_cb0", PROG(MOV64_IMM(2, 1), ATOMIC(BPF_W, 1, 2, 48, BPF_ADD), MOV64_IMM(0, 0),
				 EXIT()) },
	{ "ctx/var_offset", PROG(LDX(BPF_W, 2, 1, 0), ALU64_REG(BPF_ADD, 1, 2), LDX(BPF_W, 0, 1, 0),
				 EXIT()) },
	{ "ctx/modified_load", PROG(ALU64_IMM(BPF_ADD, 1, 8), LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "ctx/negative_modified", PROG(ALU64_IMM(BPF_ADD, 1, -8), LDX(BPF_W, 0, 1, 8), EXIT()) },
	{ "ctx/leak_ptr_into_cb", PROG(STX(BPF_DW, 1, 10, 48), MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "ctx/store_ptr_into_cb_root", PROG(STX(BPF_W, 1, 10, 48), MOV64_IMM(0, 0), EXIT()) },
	{ "ctx/tc_data_pkt", PROG(LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), MOV64_REG(4, 2),
				  ALU64_IMM(BPF_ADD, 4, 4), JREG(BPF_JGT, 4, 3, 1),
				  LDX(BPF_W, 0, 2, 0), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS },
	{ "ctx/socket_data_denied", PROG(LDX(BPF_W, 2, 1, 76), MOV64_IMM(0, 0), EXIT()) },
	{ "ctx/tc_data_2byte", PROG(LDX(BPF_H, 2, 1, 76), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS },
	{ "ctx/xdp_write", PROG(MOV64_IMM(2, 0), STX(BPF_W, 1, 2, 0), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_XDP },
	{ "ctx/xdp_egress_ifindex", PROG(LDX(BPF_W, 0, 1, 20), EXIT()),
	  .prog_type = BPF_PROG_TYPE_XDP },
	{ "ctx/tc_write_mark", PROG(MOV64_IMM(2, 7), STX(BPF_W, 1, 2, 8), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS },
	{ "ctx/tc_write_mark_2byte", PROG(MOV64_IMM(2, 7), STX(BPF_H, 1, 2, 8), MOV64_IMM(0, 0),
					  EXIT()),
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS },
	{ "ctx/tc_write_tstamp", PROG(MOV64_IMM(2, 7), STX(BPF_DW, 1, 2, 152), MOV64_IMM(0, 0),
				      EXIT()),
	  .prog_type = BPF_PROG_TYPE_SCHED_CLS },
	{ "ctx/misaligned_read", PROG(LDX(BPF_W, 0, 1, 2), EXIT()) },
	{ "ctx/misaligned_read_strict", PROG(LDX(BPF_H, 0, 1, 1), EXIT()),
	  .prog_flags = BPF_F_STRICT_ALIGNMENT },
	{ "ctx/spill_fill_ctx", PROG(STX(BPF_DW, 10, 1, -8), MOV64_IMM(1, 0), LDX(BPF_DW, 1, 10, -8),
				     LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "ctx/ctx_as_scalar_return_unpriv", PROG(MOV64_REG(0, 1), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "ctx/ctx_return_root", PROG(MOV64_REG(0, 1), EXIT()) },
	{ "ctx/kprobe_write", PROG(MOV64_IMM(2, 0), STX(BPF_DW, 1, 2, 0), MOV64_IMM(0, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_KPROBE },
	{ "ctx/cgroup_skb_bad_ret", PROG(MOV64_IMM(0, 5), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },
	{ "ctx/cgroup_skb_ret_unknown", PROG(LDX(BPF_W, 0, 1, 0), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },
	{ "ctx/cgroup_skb_ret_masked", PROG(LDX(BPF_W, 0, 1, 0), ALU64_IMM(BPF_AND, 0, 1), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },
	{ "ctx/cgroup_skb_ret_ptr", PROG(MOV64_REG(0, 10), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_INGRESS },
	{ "ctx/cgroup_skb_egress_3", PROG(MOV64_IMM(0, 3), EXIT()),
	  .prog_type = BPF_PROG_TYPE_CGROUP_SKB, .attach = BPF_CGROUP_INET_EGRESS },
	{ "ctx/r1_clobbered_read", PROG(CALL(BPF_FUNC_ktime_get_ns), LDX(BPF_W, 0, 1, 0), EXIT()) },
};

void vcases_ctx(struct vcase_list *l)
{
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	static const char *const sname[] = { "b", "h", "w", "dw" };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (int off = 0; off <= types[t].size + 8; off += types[t].step) {
			for (int s = 0; s < 4; s++) {
				struct bpf_insn r[] = { LDX(sizes[s], 0, 1, (int16_t)off),
							MOV64_IMM(0, 0), EXIT() };

				if (s != 2 && s != 3 && (off / types[t].step) % 2)
					continue;
				vc_add(l, &(struct vcase){
						  .name = vc_name("ctx/%s_read_%s_%d", types[t].name,
								  sname[s], off),
						  .insns = vc_keep(r, 3), .len = 3,
						  .prog_type = types[t].type,
						  .attach = types[t].attach });
			}
			struct bpf_insn w[] = { MOV64_IMM(2, 0), STX(BPF_W, 1, 2, (int16_t)off),
						MOV64_IMM(0, 0), EXIT() };

			vc_add(l, &(struct vcase){ .name = vc_name("ctx/%s_write_w_%d", types[t].name,
								   off),
						   .insns = vc_keep(w, 4), .len = 4,
						   .prog_type = types[t].type,
						   .attach = types[t].attach });
		}
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
