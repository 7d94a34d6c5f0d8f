/* cb.c - callbacks: bpf_loop(), bpf_for_each_map_elem() and bpf_find_vma() with a function address (lddw
 * BPF_PSEUDO_FUNC), func_info BTF and static linkage, the callback's frame (bpf_loop:
 * r1 = index, r2 = the helper's r3; for_each: map, key, value, ctx), its return range,
 * argument types, map types, iteration until the states converge, stack and depth. */
#include <errno.h>

#include "case.h"

/* main: fp-8 = 0; bpf_loop(NR, <insn 10>, fp-8 (R3 set by SETUP3), FLAGS); r0 = fp-8 */
#define MAIN(nr, r3setup, flags)                                                                 \
	ST(BPF_DW, 10, -8, 0), r3setup, MOV64_IMM(1, nr), LD_FUNC(2, 5), MOV64_IMM(4, flags),   \
		CALL(BPF_FUNC_loop), LDX(BPF_DW, 0, 10, -8), EXIT()
#define FP8 MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8)
#define CB_RET0 MOV64_IMM(0, 0), EXIT()
/* callback: *(u64 *)r2 += r1 */
#define CB_SUM LDX(BPF_DW, 3, 2, 0), ALU64_REG(BPF_ADD, 3, 1), STX(BPF_DW, 2, 3, 0), CB_RET0

static const struct vcase cases[] = {
	{ "cb/loop_ok", PROG(MAIN(10, FP8, 0), CB_RET0), .btf = 1 },
	{ "cb/loop_sum", PROG(MAIN(10, FP8, 0), CB_SUM), .btf = 1 },
	{ "cb/loop_sum_cap_bpf", PROG(MAIN(10, FP8, 0), CB_SUM), .btf = 1,
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "cb/no_func_info", PROG(MAIN(10, FP8, 0), CB_RET0) },
	{ "cb/global_callback", PROG(MAIN(10, FP8, 0), CB_RET0), .btf = 1, .global_funcs = 2 },
	{ "cb/ret_2", PROG(MAIN(10, FP8, 0), MOV64_IMM(0, 2), EXIT()), .btf = 1 },
	{ "cb/ret_neg", PROG(MAIN(10, FP8, 0), MOV64_IMM(0, -1), EXIT()), .btf = 1 },
	{ "cb/ret_index", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 1), EXIT()), .btf = 1 },
	{ "cb/ret_index_and3", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 1), ALU64_IMM(BPF_AND, 0, 3),
				    EXIT()), .btf = 1 },
	{ "cb/ret_index_and1", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 1), ALU64_IMM(BPF_AND, 0, 1),
				    EXIT()), .btf = 1 },
	{ "cb/ret_1", PROG(MAIN(10, FP8, 0), MOV64_IMM(0, 1), EXIT()), .btf = 1 },
	{ "cb/ret_stack_ptr", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 2), EXIT()), .btf = 1 },
	{ "cb/ret_own_fp", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 10), EXIT()), .btf = 1 },
	{ "cb/ret_unset", PROG(MAIN(10, FP8, 0), MOV64_IMM(1, 0), EXIT()), .btf = 1 },
	{ "cb/r2_scalar", PROG(ST(BPF_DW, 10, -8, 0), FP8, MOV64_IMM(1, 10), MOV64_IMM(2, 5),
			       MOV64_IMM(4, 0), CALL(BPF_FUNC_loop), MOV64_IMM(0, 0), EXIT()),
	  .btf = 1 },
	{ "cb/r3_null", PROG(MAIN(10, MOV64_IMM(3, 0), 0), CB_RET0), .btf = 1 },
	{ "cb/r3_null_deref", PROG(MAIN(10, MOV64_IMM(3, 0), 0), LDX(BPF_DW, 0, 2, 0), CB_RET0),
	  .btf = 1 },
	{ "cb/r3_scalar", PROG(MAIN(10, MOV64_IMM(3, 5), 0), CB_RET0), .btf = 1 },
	{ "cb/r3_ctx", PROG(MAIN(10, MOV64_REG(3, 1), 0), CB_RET0), .btf = 1 },
	{ "cb/flags_nonzero", PROG(MAIN(10, FP8, 1), CB_RET0), .btf = 1 },
	{ "cb/cb_reads_r3", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 3), EXIT()), .btf = 1 },
	{ "cb/cb_reads_r6", PROG(MAIN(10, FP8, 0), MOV64_REG(0, 6), EXIT()), .btf = 1 },
	{ "cb/cb_writes_past_ctx", PROG(MAIN(10, FP8, 0), ST(BPF_DW, 2, 8, 1), CB_RET0), .btf = 1 },
	{ "cb/cb_own_stack", PROG(MAIN(10, FP8, 0), ST(BPF_DW, 10, -8, 1), LDX(BPF_DW, 0, 10, -8),
				  ALU64_IMM(BPF_AND, 0, 1), EXIT()), .btf = 1 },
	{ "cb/cb_reads_own_uninit", PROG(MAIN(10, FP8, 0), LDX(BPF_DW, 0, 10, -16),
					 ALU64_IMM(BPF_AND, 0, 1), EXIT()),
	  .btf = 1, .priv = BRT_PRIV_BPF_CAPABLE },
	{ "cb/func_deref", PROG(ST(BPF_DW, 10, -8, 0), LD_FUNC(2, 3), LDX(BPF_DW, 0, 2, 0), EXIT(),
				CB_RET0), .btf = 1 },
	{ "cb/func_arith", PROG(ST(BPF_DW, 10, -8, 0), FP8, MOV64_IMM(1, 10), LD_FUNC(2, 6),
				ALU64_IMM(BPF_ADD, 2, 8), MOV64_IMM(4, 0), CALL(BPF_FUNC_loop),
				MOV64_IMM(0, 0), EXIT(), CB_RET0), .btf = 1 },
	{ "cb/func_leak", PROG(LD_FUNC(0, 2), EXIT(), CB_RET0), .btf = 1,
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "cb/func_spill_fill", PROG(ST(BPF_DW, 10, -8, 0), LD_FUNC(2, 10), STX(BPF_DW, 10, 2, -16),
				     FP8, MOV64_IMM(1, 10), LDX(BPF_DW, 2, 10, -16),
				     MOV64_IMM(4, 0), CALL(BPF_FUNC_loop), MOV64_IMM(0, 0), EXIT(),
				     CB_RET0), .btf = 1 },
	{ "cb/nr_loops_unknown", PROG(LDX(BPF_W, 6, 1, 0), ST(BPF_DW, 10, -8, 0), FP8,
				      MOV64_REG(1, 6), LD_FUNC(2, 5), MOV64_IMM(4, 0),
				      CALL(BPF_FUNC_loop), LDX(BPF_DW, 0, 10, -8), EXIT(), CB_SUM),
	  .btf = 1 },
	{ "cb/counter_1000", PROG(MAIN(1000, FP8, 0), LDX(BPF_DW, 3, 2, 0), ALU64_IMM(BPF_ADD, 3, 1),
				  STX(BPF_DW, 2, 3, 0), CB_RET0), .btf = 1 },
	/* the callback keeps a counter in the caller's stack below 8 */
	{ "cb/counter_bounded_index", PROG(MAIN(100, FP8, 0), LDX(BPF_DW, 3, 2, 0),
					   JIMM(BPF_JGE, 3, 8, 4), ALU64_IMM(BPF_ADD, 3, 1),
					   STX(BPF_DW, 2, 3, 0), CB_RET0, MOV64_IMM(0, 1), EXIT()),
	  .btf = 1 },
	{ "cb/target_out_of_range", PROG(ST(BPF_DW, 10, -8, 0), FP8, MOV64_IMM(1, 10),
					 LD_FUNC(2, 100), MOV64_IMM(4, 0), CALL(BPF_FUNC_loop),
					 MOV64_IMM(0, 0), EXIT()), .btf = 1 },
	{ "cb/target_inside_main", PROG(ST(BPF_DW, 10, -8, 0), FP8, MOV64_IMM(1, 10),
					LD_FUNC(2, 1), MOV64_IMM(4, 0), CALL(BPF_FUNC_loop),
					MOV64_IMM(0, 0), EXIT()), .btf = 1 },
	{ "cb/combined_stack", PROG(ST(BPF_DW, 10, -512, 0), MAIN(10, FP8, 0),
				    ST(BPF_DW, 10, -512, 0), CB_RET0), .btf = 1 },
	/* the callback calls bpf_loop again with a second callback */
	{ "cb/nested", PROG(MAIN(3, FP8, 0), MOV64_IMM(1, 2), MOV64_REG(3, 2), LD_FUNC(2, 5),
			    MOV64_IMM(4, 0), CALL(BPF_FUNC_loop), CB_RET0, CB_SUM), .btf = 1 },
	/* ... or with itself: frames pile up to the limit */
	{ "cb/recursive", PROG(MAIN(3, FP8, 0), MOV64_IMM(1, 2), MOV64_REG(3, 2), LD_FUNC(2, -3),
			       MOV64_IMM(4, 0), CALL(BPF_FUNC_loop), CB_RET0), .btf = 1 },
	/* bpf_loop from a static subprogram */
	{ "cb/from_subprog", PROG(CALL_SUB(1), EXIT(), MAIN(4, FP8, 0), CB_SUM), .btf = 1 },
	/* what callbacks do with maps and references */
	{ "cb/ringbuf_leak", PROG(MAIN(10, FP8, 0), LD_MAP(1, 0), MOV64_IMM(2, 8), MOV64_IMM(3, 0),
				  CALL(BPF_FUNC_ringbuf_reserve), CB_RET0),
	  .btf = 1, .maps = { { BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 } } },
	{ "cb/ringbuf_submit", PROG(MAIN(10, FP8, 0), LD_MAP(1, 0), MOV64_IMM(2, 8),
				    MOV64_IMM(3, 0), CALL(BPF_FUNC_ringbuf_reserve),
				    JIMM(BPF_JEQ, 0, 0, 3), MOV64_REG(1, 0), MOV64_IMM(2, 0),
				    CALL(BPF_FUNC_ringbuf_submit), CB_RET0),
	  .btf = 1, .maps = { { BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 } } },
	{ "cb/map_lookup", PROG(MAIN(10, FP8, 0), MOV64_REG(6, 1), LOOKUP_MAP0,
				JIMM(BPF_JEQ, 0, 0, 1), STX(BPF_DW, 0, 6, 0), CB_RET0),
	  .btf = 1, .maps = { ARRAY48 } },
	{ "cb/map_lookup_no_null_check", PROG(MAIN(10, FP8, 0), MOV64_REG(6, 1), LOOKUP_MAP0,
					      STX(BPF_DW, 0, 6, 0), CB_RET0),
	  .btf = 1, .maps = { HASH48 } },
	{ "cb/tail_call", PROG(MAIN(10, FP8, 0), MOV64_IMM(1, 0), LD_MAP(2, 0), MOV64_IMM(3, 0),
			       CALL(BPF_FUNC_tail_call), CB_RET0),
	  .btf = 1, .maps = { { BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0 } } },
	/* the index is a u32 the callback may use, bounded, as an offset */
	{ "cb/index_bounded_access", PROG(MAIN(10, FP8, 0), MOV64_REG(6, 1), LOOKUP_MAP0,
					  JIMM(BPF_JEQ, 0, 0, 5), ALU64_IMM(BPF_AND, 6, 7),
					  ALU64_REG(BPF_ADD, 0, 6), ST(BPF_B, 0, 0, 1), CB_RET0,
					  CB_RET0),
	  .btf = 1, .maps = { ARRAY48 } },
	{ "cb/index_unbounded_access", PROG(MAIN(10, FP8, 0), MOV64_REG(6, 1), LOOKUP_MAP0,
					    JIMM(BPF_JEQ, 0, 0, 4), ALU64_REG(BPF_ADD, 0, 6),
					    ST(BPF_B, 0, 0, 1), CB_RET0, CB_RET0),
	  .btf = 1, .maps = { ARRAY48 } },
	{ "cb/xdp", PROG(MAIN(10, FP8, 0), CB_SUM), .btf = 1, .prog_type = BPF_PROG_TYPE_XDP },
	{ "cb/unpriv", PROG(MAIN(10, FP8, 0), CB_RET0), .btf = 1, .priv = BRT_PRIV_UNPRIV,
	  .uerr = EPERM,
	  .umsg = "loading/calling other bpf or kernel functions are allowed for CAP_BPF and "
		  "CAP_SYS_ADMIN" },
};

/* bpf_for_each_map_elem(map 0, <insn 12>, fp-8, FLAGS); r0 = fp-8 */
#define EACH(flags)                                                                              \
	ST(BPF_DW, 10, -8, 0), FP8, LD_MAP(1, 0), LD_FUNC(2, 5), MOV64_IMM(4, flags),           \
		CALL(BPF_FUNC_for_each_map_elem), LDX(BPF_DW, 0, 10, -8), EXIT()
/* callback(map, key, value, ctx): *(u64 *)ctx += *(u64 *)value */
#define EACH_SUM LDX(BPF_DW, 5, 3, 0), LDX(BPF_DW, 6, 4, 0), ALU64_REG(BPF_ADD, 6, 5),          \
	STX(BPF_DW, 4, 6, 0), CB_RET0

static const struct vcase each_cases[] = {
	{ "cb/each_array_sum", PROG(EACH(0), EACH_SUM), .btf = 1, .maps = { ARRAY4_64 } },
	{ "cb/each_hash_sum", PROG(EACH(0), EACH_SUM), .btf = 1, .maps = { HASH48 } },
	{ "cb/each_value_write", PROG(EACH(0), ST(BPF_DW, 3, 0, 7), CB_RET0), .btf = 1,
	  .maps = { HASH48 } },
	{ "cb/each_value_past_end", PROG(EACH(0), LDX(BPF_DW, 0, 3, 8), CB_RET0), .btf = 1,
	  .maps = { HASH48 } },
	{ "cb/each_key_read", PROG(EACH(0), LDX(BPF_W, 0, 2, 0), ALU64_IMM(BPF_AND, 0, 1),
				   EXIT()), .btf = 1, .maps = { HASH48 } },
	{ "cb/each_key_write", PROG(EACH(0), ST(BPF_W, 2, 0, 1), CB_RET0), .btf = 1,
	  .maps = { HASH48 } },
	{ "cb/each_map_arg", PROG(EACH(0), LDX(BPF_DW, 6, 3, 0), MOV64_REG(2, 10),
				  ALU64_IMM(BPF_ADD, 2, -8), ST(BPF_W, 10, -8, 0),
				  CALL(BPF_FUNC_map_lookup_elem), CB_RET0),
	  .btf = 1, .maps = { HASH48 } },
	{ "cb/each_ctx_null", PROG(ST(BPF_DW, 10, -8, 0), MOV64_IMM(3, 0), LD_MAP(1, 0),
				   LD_FUNC(2, 5), MOV64_IMM(4, 0),
				   CALL(BPF_FUNC_for_each_map_elem), MOV64_IMM(0, 0), EXIT(),
				   MOV64_REG(0, 4), EXIT()), .btf = 1, .maps = { HASH48 } },
	{ "cb/each_ret_2", PROG(EACH(0), MOV64_IMM(0, 2), EXIT()), .btf = 1, .maps = { HASH48 } },
	{ "cb/each_flags", PROG(EACH(1), CB_RET0), .btf = 1, .maps = { ARRAY48 } },
	{ "cb/each_ringbuf", PROG(EACH(0), CB_RET0), .btf = 1,
	  .maps = { { BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 } } },
	{ "cb/each_queue", PROG(EACH(0), CB_RET0), .btf = 1,
	  .maps = { { BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0 } } },
	{ "cb/each_r2_scalar", PROG(ST(BPF_DW, 10, -8, 0), FP8, LD_MAP(1, 0), MOV64_IMM(2, 0),
				    MOV64_IMM(4, 0), CALL(BPF_FUNC_for_each_map_elem),
				    MOV64_IMM(0, 0), EXIT()), .btf = 1, .maps = { HASH48 } },
	{ "cb/each_r1_scalar", PROG(ST(BPF_DW, 10, -8, 0), FP8, MOV64_IMM(1, 0), MOV64_IMM(5, 0),
				    LD_FUNC(2, 5), MOV64_IMM(4, 0),
				    CALL(BPF_FUNC_for_each_map_elem), MOV64_IMM(0, 0), EXIT(),
				    CB_RET0), .btf = 1, .maps = { HASH48 } },
};

/* bpf_find_vma(R1SRC, 0, <insn 12>, fp-8, FLAGS) from a kprobe (6.18's
 * bpf_base_func_proto with CAP_PERFMON), r1 from r0 (bpf_get_current_task_btf's task),
 * r8 (0) or r10: the callback gets (task, struct vm_area_struct *, ctx), vma a kernel
 * pointer (read through BTF, never written), and returns 0 or 1 */
#define FV_MAIN(r1src, flags)                                                                    \
	ST(BPF_DW, 10, -8, 0), MOV64_IMM(8, 0), CALL(BPF_FUNC_get_current_task_btf),              \
		MOV64_REG(1, r1src), MOV64_IMM(2, 0), LD_FUNC(3, 6), MOV64_REG(4, 10),              \
		ALU64_IMM(BPF_ADD, 4, -8), MOV64_IMM(5, flags), CALL(BPF_FUNC_find_vma), EXIT()
#define FV(name, r1src, flags, ...)                                                             \
	{ "cb/find_vma_" name, PROG(FV_MAIN(r1src, flags), __VA_ARGS__), .btf = 1,                 \
	  .prog_type = BPF_PROG_TYPE_KPROBE }

static const struct vcase vma_cases[] = {
	FV("ok", 0, 0, CB_RET0),
	FV("flags", 0, 1, CB_RET0),
	FV("task_scalar", 8, 0, CB_RET0),
	FV("task_stack", 10, 0, CB_RET0),
	/* vm_start, vm_end read through the vma; a write to it refused */
	FV("reads_vma", 0, 0, LDX(BPF_DW, 0, 2, 0), LDX(BPF_DW, 4, 2, 8), CB_RET0),
	FV("writes_vma", 0, 0, ST(BPF_DW, 2, 0, 0), CB_RET0),
	FV("vma_null_check", 0, 0, JIMM(BPF_JEQ, 2, 0, 0), CB_RET0),
	/* the task is the helper's r1 again; the ctx its r4 (fp-8 of the caller) */
	FV("reads_task", 0, 0, LDX(BPF_W, 0, 1, 0), CB_RET0),
	FV("writes_ctx", 0, 0, ST(BPF_DW, 3, 0, 7), CB_RET0),
	FV("ctx_past_end", 0, 0, ST(BPF_DW, 3, 8, 7), CB_RET0),
	FV("reads_r4", 0, 0, MOV64_REG(0, 4), EXIT()),
	FV("ret_2", 0, 0, MOV64_IMM(0, 2), EXIT()),
	FV("ret_vma", 0, 0, MOV64_REG(0, 2), EXIT()),
	{ "cb/find_vma_socket_filter", PROG(FV_MAIN(0, 0), CB_RET0), .btf = 1 },
	{ "cb/find_vma_bpf_capable", PROG(FV_MAIN(0, 0), CB_RET0), .btf = 1,
	  .prog_type = BPF_PROG_TYPE_KPROBE, .priv = BRT_PRIV_BPF_CAPABLE },
};

void vcases_cb(struct vcase_list *l)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
	for (size_t i = 0; i < sizeof(each_cases) / sizeof(each_cases[0]); i++)
		vc_add(l, &each_cases[i]);
	for (size_t i = 0; i < sizeof(vma_cases) / sizeof(vma_cases[0]); i++)
		vc_add(l, &vma_cases[i]);
}
