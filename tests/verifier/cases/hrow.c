/* hrow.c - helpers whose helpers.def rows came with the tracing and packet work:
 * skb_load_bytes, probe_read*, trace_printk, get_current_*: argument kinds (context,
 * uninitialised memory + constant size, read-only memory), per-type availability,
 * privilege and licence rules, each checked against the kernel. */
#include "case.h"

#define KPROBE .prog_type = BPF_PROG_TYPE_KPROBE
#define TC .prog_type = BPF_PROG_TYPE_SCHED_CLS
#define XDP .prog_type = BPF_PROG_TYPE_XDP
#define CAPBPF .priv = BRT_PRIV_BPF_CAPABLE

/* r3 = fp + off, r2 = 0, r4 = len, bpf_skb_load_bytes(ctx, 0, r3, len) */
#define LOAD_BYTES(off, len) MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, off), MOV64_IMM(2, 0), \
	MOV64_IMM(4, len), CALL(BPF_FUNC_skb_load_bytes), MOV64_IMM(0, 0), EXIT()
/* r1 = fp + off, r2 = len, r3 = 0 (source), call id */
#define PROBE(id, off, len) MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, off), MOV64_IMM(2, len), \
	MOV64_IMM(3, 0), CALL(id), MOV64_IMM(0, 0), EXIT()
/* "hi\n" at fp-8, bpf_trace_printk(fp-8, len) */
#define PRINTK(len) ST(BPF_W, 10, -8, 0x0a6968), ST(BPF_W, 10, -4, 0), MOV64_REG(1, 10), \
	ALU64_IMM(BPF_ADD, 1, -8), MOV64_IMM(2, len), CALL(BPF_FUNC_trace_printk), \
	MOV64_IMM(0, 0), EXIT()
#define COMM(len) MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -16), MOV64_IMM(2, len), \
	CALL(BPF_FUNC_get_current_comm), MOV64_IMM(0, 0), EXIT()

static const struct vcase cases[] = {
	{ "hrow/skb_load_bytes_ok", PROG(LOAD_BYTES(-8, 8)) },
	{ "hrow/skb_load_bytes_tc", PROG(LOAD_BYTES(-16, 16)), TC },
	{ "hrow/skb_load_bytes_too_long", PROG(LOAD_BYTES(-8, 16)) },
	{ "hrow/skb_load_bytes_zero", PROG(LOAD_BYTES(-8, 0)) },
	{ "hrow/skb_load_bytes_negative", PROG(LOAD_BYTES(-8, -1)) },
	{ "hrow/skb_load_bytes_xdp", PROG(LOAD_BYTES(-8, 8)), XDP },
	{ "hrow/skb_load_bytes_kprobe", PROG(LOAD_BYTES(-8, 8)), KPROBE },
	{ "hrow/skb_load_bytes_not_ctx", PROG(MOV64_REG(1, 10), LOAD_BYTES(-8, 8)) },
	{ "hrow/skb_load_bytes_unbounded", PROG(LDX(BPF_W, 4, 1, 0), MOV64_REG(3, 10),
						ALU64_IMM(BPF_ADD, 3, -8), MOV64_IMM(2, 0),
						CALL(BPF_FUNC_skb_load_bytes), MOV64_IMM(0, 0),
						EXIT()) },
	{ "hrow/skb_load_bytes_bounded", PROG(LDX(BPF_W, 4, 1, 0), ALU64_IMM(BPF_AND, 4, 7),
					      ALU64_IMM(BPF_ADD, 4, 1), MOV64_REG(3, 10),
					      ALU64_IMM(BPF_ADD, 3, -8), MOV64_IMM(2, 0),
					      CALL(BPF_FUNC_skb_load_bytes), MOV64_IMM(0, 0),
					      EXIT()) },
	{ "hrow/skb_load_bytes_map_value", PROG(MOV64_REG(6, 1), LOOKUP_MAP0, JIMM(BPF_JEQ, 0, 0, 5),
						MOV64_REG(1, 6), MOV64_REG(3, 0), MOV64_IMM(2, 0),
						MOV64_IMM(4, 8), CALL(BPF_FUNC_skb_load_bytes),
						MOV64_IMM(0, 0), EXIT()),
	  .maps = { ARRAY48 } },
	{ "hrow/skb_load_bytes_capbpf", PROG(LOAD_BYTES(-8, 8)), CAPBPF },
	{ "hrow/probe_read_kernel_ok", PROG(PROBE(BPF_FUNC_probe_read_kernel, -8, 8)), KPROBE },
	{ "hrow/probe_read_kernel_too_long", PROG(PROBE(BPF_FUNC_probe_read_kernel, -8, 9)),
	  KPROBE },
	{ "hrow/probe_read_kernel_zero", PROG(PROBE(BPF_FUNC_probe_read_kernel, -8, 0)), KPROBE },
	{ "hrow/probe_read_user_ok", PROG(PROBE(BPF_FUNC_probe_read_user, -16, 16)), KPROBE },
	{ "hrow/probe_read_ok", PROG(PROBE(BPF_FUNC_probe_read, -8, 8)), KPROBE },
	{ "hrow/probe_read_str_ok", PROG(PROBE(BPF_FUNC_probe_read_str, -8, 8)), KPROBE },
	{ "hrow/probe_read_kernel_str_zero", PROG(PROBE(BPF_FUNC_probe_read_kernel_str, -8, 0)),
	  KPROBE },
	{ "hrow/probe_read_user_str_ok", PROG(PROBE(BPF_FUNC_probe_read_user_str, -8, 8)), KPROBE },
	{ "hrow/probe_read_kernel_socket", PROG(PROBE(BPF_FUNC_probe_read_kernel, -8, 8)) },
	{ "hrow/probe_read_kernel_non_gpl", PROG(PROBE(BPF_FUNC_probe_read_kernel, -8, 8)), KPROBE,
	  .non_gpl = 1 },
	{ "hrow/probe_read_kernel_into_ctx", PROG(MOV64_IMM(2, 8), MOV64_IMM(3, 0),
						 CALL(BPF_FUNC_probe_read_kernel), MOV64_IMM(0, 0),
						 EXIT()), KPROBE },
	{ "hrow/trace_printk_ok", PROG(PRINTK(8)), KPROBE },
	{ "hrow/trace_printk_socket", PROG(PRINTK(8)) },
	{ "hrow/trace_printk_non_gpl", PROG(PRINTK(8)), KPROBE, .non_gpl = 1 },
	{ "hrow/trace_printk_too_long", PROG(PRINTK(16)), KPROBE },
	{ "hrow/trace_printk_uninit", PROG(MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
					   MOV64_IMM(2, 8), CALL(BPF_FUNC_trace_printk),
					   MOV64_IMM(0, 0), EXIT()), KPROBE },
	{ "hrow/trace_printk_capbpf", PROG(PRINTK(8)), CAPBPF },
	{ "hrow/pid_tgid_kprobe", PROG(CALL(BPF_FUNC_get_current_pid_tgid), EXIT()), KPROBE },
	{ "hrow/pid_tgid_socket", PROG(CALL(BPF_FUNC_get_current_pid_tgid), EXIT()) },
	{ "hrow/pid_tgid_xdp", PROG(CALL(BPF_FUNC_get_current_pid_tgid), EXIT()), XDP },
	{ "hrow/uid_gid_kprobe", PROG(CALL(BPF_FUNC_get_current_uid_gid), EXIT()), KPROBE },
	{ "hrow/uid_gid_socket", PROG(CALL(BPF_FUNC_get_current_uid_gid), EXIT()) },
	{ "hrow/comm_ok", PROG(COMM(16)), KPROBE },
	{ "hrow/comm_too_long", PROG(COMM(17)), KPROBE },
	{ "hrow/comm_zero", PROG(COMM(0)), KPROBE },
	{ "hrow/comm_socket", PROG(COMM(16)) },
	{ "hrow/comm_ret_leak_check", PROG(COMM(16)), KPROBE, .non_gpl = 1 },
};

void vcases_hrow(struct vcase_list *l)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
