/* stack.c - stack accesses: bounds, alignment, uninitialised reads (allowed as root),
 * spills and fills of pointers and scalars (full and partial), zero tracking. */
#include "case.h"

/* *(u32 *)(r10 - 8k) = rR for k = 1..45 */
#define SPILL5(r, k) STX(BPF_W, 10, r, -8 * (k)), STX(BPF_W, 10, r, -8 * ((k) + 1)),         \
		     STX(BPF_W, 10, r, -8 * ((k) + 2)), STX(BPF_W, 10, r, -8 * ((k) + 3)),    \
		     STX(BPF_W, 10, r, -8 * ((k) + 4))
#define SPILLS45(r) SPILL5(r, 1), SPILL5(r, 6), SPILL5(r, 11), SPILL5(r, 16), SPILL5(r, 21), \
		    SPILL5(r, 26), SPILL5(r, 31), SPILL5(r, 36), SPILL5(r, 41)
/* r8 = a 64-bit constant, 10 times */
#define LDDW10 LD64(8, 1ull << 40), LD64(8, 2ull << 40), LD64(8, 3ull << 40), LD64(8, 4ull << 40), \
	       LD64(8, 5ull << 40), LD64(8, 6ull << 40), LD64(8, 7ull << 40), LD64(8, 8ull << 40), \
	       LD64(8, 9ull << 40), LD64(8, 10ull << 40)

static const struct vcase cases[] = {
	/* a helper's raw write (probe_read_kernel of 2 bytes at fp-8) into a slot whose low
	 * half is a 4-byte spill and high half zeroes: the whole slot becomes data, zeroes
	 * included, so fp-4 reads unknown and the bad branch is walked (the kernel's
	 * scrub_spilled_slot(); Calico's bpf_skb_load_bytes over such a slot); without the
	 * spill the zeroes stay and the branch is decided */
	{ "stack/raw_helper_write_over_spill", PROG(ST(BPF_W, 10, -4, 0), LDX(BPF_W, 1, 1, 0),
						     STX(BPF_W, 10, 1, -8), MOV64_REG(1, 10),
						     ALU64_IMM(BPF_ADD, 1, -8), MOV64_IMM(2, 2),
						     MOV64_IMM(3, 0),
						     CALL(BPF_FUNC_probe_read_kernel),
						     LDX(BPF_W, 0, 10, -4), JIMM(BPF_JEQ, 0, 0, 1),
						     MOV64_REG(0, 9), EXIT()) },
	{ "stack/raw_helper_write_no_spill", PROG(ST(BPF_W, 10, -4, 0),
						    MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
						    MOV64_IMM(2, 2), MOV64_IMM(3, 0),
						    CALL(BPF_FUNC_probe_read_kernel),
						    LDX(BPF_W, 0, 10, -4), JIMM(BPF_JEQ, 0, 0, 1),
						    MOV64_REG(0, 9), EXIT()) },
	{ "stack/oob_below", PROG(ST(BPF_DW, 10, -520, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/oob_above", PROG(ST(BPF_DW, 10, 8, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/oob_straddle_top", PROG(ST(BPF_DW, 10, -4, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/read_oob_below", PROG(LDX(BPF_DW, 0, 10, -520), EXIT()) },
	{ "stack/uninit_read_root", PROG(LDX(BPF_DW, 0, 10, -8), EXIT()) },
	{ "stack/uninit_read_unpriv", PROG(LDX(BPF_DW, 0, 10, -8), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/partial_init_read_unpriv", PROG(ST(BPF_W, 10, -4, 0), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/init_read_unpriv", PROG(ST(BPF_DW, 10, -8, 7), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/misaligned_4_at_6", PROG(LDX(BPF_W, 0, 10, -6), EXIT()) },
	{ "stack/misaligned_write", PROG(ST(BPF_DW, 10, -12, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/byte_any_align", PROG(ST(BPF_B, 10, -3, 1), LDX(BPF_B, 0, 10, -3), EXIT()) },
	{ "stack/spill_ptr_partial_fill", PROG(STX(BPF_DW, 10, 1, -8), LDX(BPF_W, 0, 10, -8), EXIT()) },
	{ "stack/spill_ptr_4bytes", PROG(STX(BPF_W, 10, 1, -8), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/spill_ptr_4bytes_unpriv", PROG(STX(BPF_W, 10, 1, -8), MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/corrupt_spilled_ptr_unpriv", PROG(STX(BPF_DW, 10, 1, -8), ST(BPF_W, 10, -8, 0),
						   MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/corrupt_spilled_ptr_root", PROG(STX(BPF_DW, 10, 1, -8), ST(BPF_W, 10, -8, 0),
						 LDX(BPF_DW, 0, 10, -8), EXIT()) },
	{ "stack/spill_fill_ctx_load", PROG(STX(BPF_DW, 10, 1, -8), MOV64_IMM(1, 0),
					    LDX(BPF_DW, 1, 10, -8), LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "stack/spill_fill_overwritten", PROG(STX(BPF_DW, 10, 1, -8), ST(BPF_DW, 10, -8, 0),
					       LDX(BPF_DW, 1, 10, -8), LDX(BPF_W, 0, 1, 0), EXIT()) },
	{ "stack/spill_scalar_bounds", PROG(LDX(BPF_W, 2, 1, 0), ALU64_IMM(BPF_AND, 2, 7),
					    STX(BPF_DW, 10, 2, -8), LDX(BPF_DW, 3, 10, -8),
					    MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -16),
					    ALU64_REG(BPF_ADD, 4, 3), ST(BPF_B, 4, 0, 0),
					    MOV64_IMM(0, 0), EXIT()) },
	/* r6 = r2 + 4 stays linked to r2 (BPF_ADD_CONST): the check on r2 bounds r6, so the
	 * variable stack read at fp-32 + r6 stays inside the zeroed 32 bytes */
	{ "stack/linked_add_const_bound",
	  PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(6, 2),
	       ALU64_IMM(BPF_ADD, 6, 4), JIMM(BPF_JGT, 2, 8, 4), MOV64_REG(3, 10),
	       ALU64_IMM(BPF_ADD, 3, -32), ALU64_REG(BPF_ADD, 3, 6), LDX(BPF_B, 0, 3, 0),
	       MOV64_IMM(0, 0), EXIT()) },
	/* ... but a second add unlinks it: r6 is unbounded */
	{ "stack/linked_add_const_twice",
	  PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(6, 2),
	       ALU64_IMM(BPF_ADD, 6, 2), ALU64_IMM(BPF_ADD, 6, 2), JIMM(BPF_JGT, 2, 8, 4),
	       MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -32), ALU64_REG(BPF_ADD, 3, 6),
	       LDX(BPF_B, 0, 3, 0), MOV64_IMM(0, 0), EXIT()) },
	/* 6.18.44's links (its backport of negative offsets, BPF_SUB and alu32): r6 = r2 - 4
	 * stays linked to r2, so r2 in [4, 12] puts r6 in [0, 8]; the same through -= 4, a
	 * 32-bit += 4 (r2 fits in 32 bits) and += a register holding -4 */
	{ "stack/linked_add_neg_const", PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(6, 2),
	       ALU64_IMM(BPF_ADD, 6, -4), JIMM(BPF_JGT, 2, 12, 5), JIMM(BPF_JLT, 2, 4, 4), MOV64_REG(3, 10),
	       ALU64_IMM(BPF_ADD, 3, -32), ALU64_REG(BPF_ADD, 3, 6), LDX(BPF_B, 0, 3, 0),
	       MOV64_IMM(0, 0), EXIT()) },
	{ "stack/linked_sub_const", PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(6, 2),
	       ALU64_IMM(BPF_SUB, 6, 4), JIMM(BPF_JGT, 2, 12, 5), JIMM(BPF_JLT, 2, 4, 4), MOV64_REG(3, 10),
	       ALU64_IMM(BPF_ADD, 3, -32), ALU64_REG(BPF_ADD, 3, 6), LDX(BPF_B, 0, 3, 0),
	       MOV64_IMM(0, 0), EXIT()) },
	{ "stack/linked_add32_const", PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(6, 2),
	       ALU32_IMM(BPF_ADD, 6, 4), JIMM(BPF_JGT, 2, 8, 4), MOV64_REG(3, 10),
	       ALU64_IMM(BPF_ADD, 3, -32), ALU64_REG(BPF_ADD, 3, 6), LDX(BPF_B, 0, 3, 0),
	       MOV64_IMM(0, 0), EXIT()) },
	{ "stack/linked_add_reg_const", PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(6, 2), MOV64_IMM(7, -4),
	       ALU64_REG(BPF_ADD, 6, 7), JIMM(BPF_JGT, 2, 12, 5), JIMM(BPF_JLT, 2, 4, 4), MOV64_REG(3, 10),
	       ALU64_IMM(BPF_ADD, 3, -32), ALU64_REG(BPF_ADD, 3, 6), LDX(BPF_B, 0, 3, 0),
	       MOV64_IMM(0, 0), EXIT()) },
	/* a 32-bit link narrowed through its base, or the base through it: the sum's low
	 * half, zero-extended (r7 = 0xffffffff + 1 reads 0) */
	{ "stack/linked_add32_zext", PROG(CALL(7), MOV32_REG(6, 0), MOV64_REG(7, 6), ALU32_IMM(BPF_ADD, 7, 1),
	       LD64(8, 0xffffffffu), JREG(BPF_JLT, 6, 8, 2), MOV64_REG(0, 7), EXIT(), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/linked_add32_zext_known", PROG(CALL(7), MOV32_REG(6, 0), MOV64_REG(7, 6), ALU32_IMM(BPF_ADD, 7, 1),
	       LD64(8, 0xffffffffu), JREG(BPF_JLT, 7, 8, 2), MOV64_REG(0, 6), EXIT(), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/spill32_scalar_fill32", PROG(MOV64_IMM(2, 5), STX(BPF_W, 10, 2, -8),
					      LDX(BPF_W, 3, 10, -8), MOV64_REG(4, 10),
					      ALU64_REG(BPF_SUB, 4, 3), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/zero_fill_is_zero", PROG(ST(BPF_W, 10, -4, 0), LDX(BPF_W, 3, 10, -4),
					  MOV64_REG(4, 10), ALU64_REG(BPF_ADD, 4, 3),
					  ST(BPF_DW, 4, -8, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/misc_fill_unknown", PROG(ST(BPF_W, 10, -4, 1), LDX(BPF_W, 3, 10, -4),
					  MOV64_REG(4, 10), ALU64_REG(BPF_ADD, 4, 3),
					  ST(BPF_DW, 4, -8, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/fill_fp_then_write", PROG(STX(BPF_DW, 10, 10, -8), LDX(BPF_DW, 2, 10, -8),
					   ST(BPF_DW, 2, -16, 0), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/leak_fp_unpriv", PROG(MOV64_REG(0, 10), EXIT()), .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/leak_fp_spilled_ret_unpriv", PROG(STX(BPF_DW, 10, 10, -8), LDX(BPF_DW, 0, 10, -8),
						   EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/full_512", PROG(ST(BPF_DW, 10, -512, 0), LDX(BPF_DW, 0, 10, -512), EXIT()) },
	{ "stack/var_write_unpriv", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 7),
					 MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					 ALU64_REG(BPF_ADD, 2, 3), ST(BPF_B, 2, 0, 1), MOV64_IMM(0, 0),
					 EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/var_read_uninit_root", PROG(LDX(BPF_W, 3, 1, 0), ALU64_IMM(BPF_AND, 3, 7),
					     MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -16),
					     ALU64_REG(BPF_ADD, 2, 3), LDX(BPF_B, 0, 2, 0), EXIT()) },
	{ "stack/var_unbounded", PROG(LDX(BPF_W, 3, 1, 0), MOV64_REG(2, 10), ALU64_REG(BPF_SUB, 2, 3),
				      MOV64_IMM(0, 0), EXIT()) },
	{ "stack/ldxsx_fill", PROG(ST(BPF_DW, 10, -8, -1), LDXSX(BPF_B, 0, 10, -8), EXIT()) },
	{ "stack/atomic_on_stack", PROG(ST(BPF_DW, 10, -8, 1), MOV64_IMM(1, 2),
					ATOMIC(BPF_DW, 10, 1, -8, BPF_ADD | BPF_FETCH),
					MOV64_REG(0, 1), EXIT()) },
	{ "stack/atomic_uninit_unpriv", PROG(MOV64_IMM(1, 2), ATOMIC(BPF_DW, 10, 1, -8, BPF_ADD),
					     MOV64_IMM(0, 0), EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/cmpxchg_ok", PROG(ST(BPF_DW, 10, -8, 1), MOV64_IMM(0, 1), MOV64_IMM(1, 2),
				   ATOMIC(BPF_DW, 10, 1, -8, BPF_CMPXCHG), EXIT()) },
	{ "stack/cmpxchg_r0_uninit", PROG(ST(BPF_DW, 10, -8, 1), MOV64_IMM(1, 2),
					  ATOMIC(BPF_DW, 10, 1, -8, BPF_CMPXCHG), EXIT()) },
	{ "stack/xchg_ptr_leak_unpriv", PROG(ST(BPF_DW, 10, -8, 1), MOV64_REG(1, 10),
					     ATOMIC(BPF_DW, 10, 1, -8, BPF_XCHG), MOV64_IMM(0, 0),
					     EXIT()),
	  .priv = BRT_PRIV_BPF_CAPABLE },
	{ "stack/atomic_fetch_into_fp", PROG(ST(BPF_DW, 10, -8, 1), MOV64_REG(2, 10),
					     ATOMIC(BPF_DW, 2, 10, -8, BPF_ADD | BPF_FETCH),
					     MOV64_IMM(0, 0), EXIT()) },
	{ "stack/atomic_w_misaligned", PROG(ST(BPF_DW, 10, -8, 1), MOV64_IMM(1, 2),
					    ATOMIC(BPF_W, 10, 1, -6, BPF_ADD), MOV64_IMM(0, 0),
					    EXIT()) },
	/* a helper's write into a slot holding a spilled scalar makes the whole slot data,
	 * its zero byte at fp-2 too (scrub_spilled_slot), so the read of fp-2 is unknown and
	 * the path reading r7 is walked (bpfrt kept the zero: a false accept) */
	{ "stack/helper_write_scrubs_zero",
	  PROG(MOV64_REG(6, 1), ST(BPF_B, 10, -2, 0), LDX(BPF_W, 1, 6, 0), STX(BPF_W, 10, 1, -8),
	       MOV64_REG(1, 6), MOV64_IMM(2, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8),
	       MOV64_IMM(4, 4), CALL(BPF_FUNC_skb_load_bytes), LDX(BPF_B, 0, 10, -2),
	       JIMM(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 7, 0), EXIT()) },
	/* r3 = r2; r3 += 0 (linked at +0); if r3 == 0: r2 becomes a copy of r3, its +0 flag
	 * included (6.18.44's sync_linked_regs()), so r2 += 4 unlinks it and the check on r3
	 * does not bound r2: the variable stack read is refused */
	{ "stack/linked_copy_takes_add_flag",
	  PROG(ST(BPF_DW, 10, -8, 0), ST(BPF_DW, 10, -16, 0), ST(BPF_DW, 10, -24, 0),
	       ST(BPF_DW, 10, -32, 0), LDX(BPF_W, 2, 1, 0), MOV64_REG(3, 2), MOV64_IMM(1, 0),
	       ALU64_REG(BPF_ADD, 3, 1), JIMM(BPF_JEQ, 3, 0, 7), ALU64_IMM(BPF_ADD, 2, 4),
	       JIMM(BPF_JGT, 3, 8, 5), MOV64_REG(4, 10), ALU64_IMM(BPF_ADD, 4, -32),
	       ALU64_REG(BPF_ADD, 4, 2), LDX(BPF_B, 0, 4, 0), MOV64_IMM(0, 0), EXIT()) },
	/* 45 spills of a 4-byte scalar fill the state's history past 40: the jump target
	 * after them is a checkpoint though only one jump was seen (the kernel's forced
	 * checkpoint), which the precision walk of skb_load_bytes' size shows as its
	 * first_idx */
	/* ... but 30 lddw between 20 spills are no history (bpfrt counted the insn after
	 * each, which it keeps for its walk): no checkpoint at insn 47 + 60 */
	{ "stack/lddw_is_no_history",
	  PROG(MOV64_REG(6, 1), LDX(BPF_W, 7, 6, 0), SPILL5(7, 1), SPILL5(7, 6), LDDW10, LDDW10,
	       LDDW10, SPILL5(7, 11), SPILL5(7, 16), JIMM(BPF_JGT, 7, 5, 0), MOV64_REG(1, 6),
	       MOV64_IMM(2, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -168), MOV64_IMM(4, 4),
	       CALL(BPF_FUNC_skb_load_bytes), MOV64_IMM(0, 0), EXIT()) },
	{ "stack/history_forces_checkpoint",
	  PROG(MOV64_REG(6, 1), LDX(BPF_W, 7, 6, 0), SPILLS45(7), JIMM(BPF_JGT, 7, 5, 0),
	       MOV64_REG(1, 6), MOV64_IMM(2, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -368),
	       MOV64_IMM(4, 4), CALL(BPF_FUNC_skb_load_bytes), MOV64_IMM(0, 0), EXIT()) },
	/* A u32 fill of a spilled scalar keeps the spill's 32-bit bounds (the kernel's
	 * coerce_reg_to_size() leaves them at size 4): umin32=6 makes r4 >= 6, so the
	 * branch to the read of r7, which nothing wrote, is dead.  bpfrt made the 32-bit
	 * bounds unbounded and refused (Cilium's conntrack test printed smin=0 for the
	 * kernel's smin=umin=umin32=6). */
	{ "stack/u32_fill_keeps_subreg_bounds",
	  PROG(CALL(BPF_FUNC_ktime_get_ns), MOV64_REG(1, 0), JIMM(BPF_JLT, 1, 6, 7),
	       J32IMM(BPF_JLT, 1, 6, 6), STX(BPF_DW, 10, 1, -16), LDX(BPF_W, 4, 10, -16),
	       JIMM(BPF_JGE, 4, 6, 2), MOV64_REG(0, 7), EXIT(), MOV64_IMM(0, 0), EXIT()) },
};

void vcases_stack(struct vcase_list *l)
{
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	static const int bytes[] = { 1, 2, 4, 8 };

	/* write then read back at a spread of offsets and sizes */
	for (int s = 0; s < 4; s++)
		for (int off = -520; off <= 8; off += 37) {
			struct bpf_insn p[] = { ST(sizes[s], 10, (int16_t)off, 1),
						LDX(sizes[s], 0, 10, (int16_t)off), EXIT() };

			vc_add(l, &(struct vcase){ .name = vc_name("stack/rw%d_at_%d", bytes[s], off),
						   .insns = vc_keep(p, 3), .len = 3 });
		}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
