/* interp_loop.h - the body of the interpreter loop, included twice by interp.c: once as
 * the fast engine (BRT_LOOP_CHECKED 0: no checks, verified programs only) and once as the
 * checked engine (BRT_LOOP_CHECKED 1: every access checked, instruction budget).  The
 * handlers are the rows of insn.def; the label table is generated from the same rows, so
 * a row without a handler does not compile.  Semantics follow Linux (kernel/bpf/core.c
 * plus the verifier's rewrites): see the comments at each group.
 *
 * Parameters: BRT_LOOP_FN (function name), BRT_LOOP_CHECKED (0 or 1), BRT_LOOP_BUDGET (0
 * or 1: taken backward jumps charge the run budget, vm.h struct brt_budget).
 */

#if !defined(BPFRT_INTERP_SWITCH) && !BRT_LOOP_CHECKED
#define BRT_LOOP_FUSED 1
#else
#define BRT_LOOP_FUSED 0
#endif

static int BRT_LOOP_FN(struct brt_exec *ex, uint64_t *r0, struct brt_vm_labels *labels_out)
{
#ifndef BPFRT_INTERP_SWITCH
	static const void *const labels[BRT_OP_COUNT + 1] = {
#define INSN(id, opc, dk, dv, shape, mnem, grp, ver) [BRT_OP_##id] = &&L_##id,
#include "isa/insn.def"
#undef INSN
		[BRT_OP_INVALID] = &&L_end,
	};
#endif
#if BRT_LOOP_FUSED
#define FUSED_ROWS(name) [BRT_OP_##name##64_imm] = &&F_##name##64_imm,                           \
			 [BRT_OP_##name##64_reg] = &&F_##name##64_reg,                           \
			 [BRT_OP_##name##32_imm] = &&F_##name##32_imm,                           \
			 [BRT_OP_##name##32_reg] = &&F_##name##32_reg,
	static const void *const after_mov[BRT_OP_COUNT] = {
		FUSED_ROWS(add) FUSED_ROWS(sub) FUSED_ROWS(mul) FUSED_ROWS(or) FUSED_ROWS(and)
		FUSED_ROWS(xor) FUSED_ROWS(lsh) FUSED_ROWS(rsh) FUSED_ROWS(arsh)
	};
#undef FUSED_ROWS
	static const void *const zext_after[BRT_OP_COUNT] = {
		[BRT_OP_ldxb] = &&Z_ldxb,
		[BRT_OP_ldxh] = &&Z_ldxh,
		[BRT_OP_ldxw] = &&Z_ldxw,
	};
	static const void *const store_after_mov64i[BRT_OP_COUNT] = {
		[BRT_OP_stxb] = &&S64_stxb,
		[BRT_OP_stxh] = &&S64_stxh,
		[BRT_OP_stxw] = &&S64_stxw,
		[BRT_OP_stxdw] = &&S64_stxdw,
	};
	static const void *const store_after_mov32i[BRT_OP_COUNT] = {
		[BRT_OP_stxb] = &&S32_stxb,
		[BRT_OP_stxh] = &&S32_stxh,
		[BRT_OP_stxw] = &&S32_stxw,
		[BRT_OP_stxdw] = &&S32_stxdw,
	};
#endif
	struct brt_frame frames[BRT_MAX_CALL_DEPTH];
	const struct brt_dinsn *pc;
	struct bpfrt_run_ctx *ctx;
	uint64_t reg[BRT_MAX_REGS];
	uint64_t addr, budget, stack_lo, stack_hi;
	struct brt_track *track;
	unsigned depth = 0, size = 0, max_depth;
	enum brt_fault_kind kind = BRT_FAULT_NONE;
	uint64_t helper_id = 0, loops = BRT_MAX_LOOPS;
	int32_t pkt_off = 0;

	if (labels_out) {
#ifndef BPFRT_INTERP_SWITCH
		labels_out->op = labels;
#endif
#if BRT_LOOP_FUSED
		labels_out->after_mov = after_mov;
		labels_out->zext_after = zext_after;
		labels_out->store_after_mov64i = store_after_mov64i;
		labels_out->store_after_mov32i = store_after_mov32i;
#endif
		return 0;
	}
	ctx = ex->ctx;
	pc = ex->code + ex->start;
	budget = ex->left;
	track = ex->track;
	(void)track;
	/* the checked engine's stack check covers every live frame, callers' included */
	stack_hi = (uint64_t)(uintptr_t)(ex->stack + BRT_VM_STACK_BYTES);
	max_depth = BRT_MAX_CALL_DEPTH - ex->base_depth;
	(void)budget;
	(void)kind;
	(void)addr;
	memset(reg, BRT_LOOP_CHECKED ? ex->poison : 0, sizeof(reg));
	reg[1] = ex->r1;
	reg[2] = ex->r2;
	reg[10] = stack_hi - (uint64_t)ex->base_depth * BRT_STACK_SIZE;
	stack_lo = reg[10] - BRT_STACK_SIZE;
	if (ex->base_depth || ex->start) { /* a callback: its arguments */
		reg[3] = ex->r3_5[0];
		reg[4] = ex->r3_5[1];
		reg[5] = ex->r3_5[2];
	}

#define DST reg[pc->dst]
#define SRC reg[pc->src]
#define IMM pc->imm
#define U32(x) ((uint32_t)(x))
#define S32(x) ((int32_t)(uint32_t)(x))
#define S64(x) ((int64_t)(x))

#if BRT_LOOP_CHECKED
#define BUDGET()                                                                                 \
	do {                                                                                     \
		if (budget-- == 0)                                                               \
			goto fault_budget;                                                       \
		if (track && brt_vm_track(track, pc, reg, &ex->fault))                           \
			goto fault_track;                                                        \
	} while (0)
#else
#define BUDGET() ((void)0)
#endif

#ifdef BPFRT_INTERP_SWITCH
#define CASE(id) case BRT_OP_##id:
#define CASE_END case BRT_OP_INVALID:
#define DISPATCH() goto dispatch
#else
#define CASE(id) L_##id:
#define CASE_END L_end:
#define DISPATCH()                                                                               \
	do {                                                                                     \
		BUDGET();                                                                        \
		goto *pc->label;                                                                 \
	} while (0)
#endif
#define NEXT()                                                                                   \
	do {                                                                                     \
		pc++;                                                                            \
		DISPATCH();                                                                      \
	} while (0)
/* a backward jump closes a loop of -off instructions: that is what it charges */
#if BRT_LOOP_BUDGET
#define SPEND()                                                                                  \
	do {                                                                                     \
		if (pc->off < 0 && brt_vm_budget_spend(ctx, (uint64_t)-(int64_t)pc->off))        \
			goto budget_spent;                                                       \
	} while (0)
#else
#define SPEND() ((void)0)
#endif
#define JUMP()                                                                                   \
	do {                                                                                     \
		SPEND();                                                                         \
		pc += pc->off + 1;                                                               \
		DISPATCH();                                                                      \
	} while (0)

/* The effective address of a memory access through base register b; the checked engine
 * accepts it when it lies in the live stack frames or in a region. */
#if BRT_LOOP_CHECKED
#define ACCESS(b, sz, k)                                                                         \
	do {                                                                                     \
		addr = reg[b] + (uint64_t)(int64_t)pc->off;                                      \
		size = (sz);                                                                     \
		kind = (k);                                                                      \
		if (!in_stack(addr, size, stack_lo, stack_hi) &&                                 \
		    !brt_vm_region_ok(ctx, addr, size, kind != BRT_FAULT_READ))                 \
			goto fault_mem;                                                          \
		if (kind == BRT_FAULT_ATOMIC && (addr & (size - 1)))                             \
			goto fault_misaligned;                                                   \
	} while (0)
#else
#define ACCESS(b, sz, k) (addr = reg[b] + (uint64_t)(int64_t)pc->off)
#endif
#define PTR ((void *)(uintptr_t)addr)

#ifdef BPFRT_INTERP_SWITCH
dispatch:
	BUDGET();
	switch ((enum brt_op)pc->op) {
#else
	DISPATCH();
#endif

	/* ALU.  32-bit forms compute on the low halves and zero-extend the result; shift
	 * amounts are masked to the width, as the kernel's interpreter and JITs do. */
#define ALU(name, OP)                                                                            \
	CASE(name##64_imm) DST = DST OP IMM; NEXT();                                             \
	CASE(name##64_reg) DST = DST OP SRC; NEXT();                                             \
	CASE(name##32_imm) DST = U32(U32(DST) OP U32(IMM)); NEXT();                              \
	CASE(name##32_reg) DST = U32(U32(DST) OP U32(SRC)); NEXT();
	ALU(add, +)
	ALU(sub, -)
	ALU(mul, *)
	ALU(or, |)
	ALU(and, &)
	ALU(xor, ^)
#undef ALU
#define SHIFT(name, OP)                                                                          \
	CASE(name##64_imm) DST = DST OP (IMM & 63); NEXT();                                      \
	CASE(name##64_reg) DST = DST OP (SRC & 63); NEXT();                                      \
	CASE(name##32_imm) DST = U32(U32(DST) OP (IMM & 31)); NEXT();                            \
	CASE(name##32_reg) DST = U32(U32(DST) OP (SRC & 31)); NEXT();
	SHIFT(lsh, <<)
	SHIFT(rsh, >>)
#undef SHIFT
	CASE(arsh64_imm) DST = (uint64_t)(S64(DST) >> (IMM & 63)); NEXT();
	CASE(arsh64_reg) DST = (uint64_t)(S64(DST) >> (SRC & 63)); NEXT();
	CASE(arsh32_imm) DST = U32(S32(DST) >> (IMM & 31)); NEXT();
	CASE(arsh32_reg) DST = U32(S32(DST) >> (SRC & 31)); NEXT();
	CASE(neg64) DST = 0 - DST; NEXT();
	CASE(neg32) DST = U32(0 - U32(DST)); NEXT();
	CASE(mov64_imm) DST = IMM; NEXT();
	CASE(mov64_reg) DST = SRC; NEXT();
	CASE(mov32_imm) DST = U32(IMM); NEXT();
	CASE(mov32_reg) DST = U32(SRC); NEXT();
	CASE(movsx8_64) DST = (uint64_t)(int64_t)(int8_t)SRC; NEXT();
	CASE(movsx16_64) DST = (uint64_t)(int64_t)(int16_t)SRC; NEXT();
	CASE(movsx32_64) DST = (uint64_t)(int64_t)(int32_t)SRC; NEXT();
	CASE(movsx8_32) DST = U32((int32_t)(int8_t)SRC); NEXT();
	CASE(movsx16_32) DST = U32((int32_t)(int16_t)SRC); NEXT();

	/* Division: x/0 = 0 and x%0 = x (32-bit forms zero-extend x), INT_MIN/-1 = INT_MIN
	 * and INT_MIN%-1 = 0: the kernel's verifier patches these in and programs rely on them.
	 * The _imm forms divide by imm sign-extended to 64 bits (RFC 9669). */
	CASE(div64_imm) DST = udiv64(DST, IMM); NEXT();
	CASE(div64_reg) DST = udiv64(DST, SRC); NEXT();
	CASE(div32_imm) DST = udiv32(U32(DST), U32(IMM)); NEXT();
	CASE(div32_reg) DST = udiv32(U32(DST), U32(SRC)); NEXT();
	CASE(mod64_imm) DST = umod64(DST, IMM); NEXT();
	CASE(mod64_reg) DST = umod64(DST, SRC); NEXT();
	CASE(mod32_imm) DST = umod32(U32(DST), U32(IMM)); NEXT();
	CASE(mod32_reg) DST = umod32(U32(DST), U32(SRC)); NEXT();
	CASE(sdiv64_imm) DST = sdiv64(DST, IMM); NEXT();
	CASE(sdiv64_reg) DST = sdiv64(DST, SRC); NEXT();
	CASE(sdiv32_imm) DST = sdiv32(U32(DST), U32(IMM)); NEXT();
	CASE(sdiv32_reg) DST = sdiv32(U32(DST), U32(SRC)); NEXT();
	CASE(smod64_imm) DST = smod64(DST, IMM); NEXT();
	CASE(smod64_reg) DST = smod64(DST, SRC); NEXT();
	CASE(smod32_imm) DST = smod32(U32(DST), U32(IMM)); NEXT();
	CASE(smod32_reg) DST = smod32(U32(DST), U32(SRC)); NEXT();

	/* Byte order (host is little-endian: le is a truncation, be a swap). */
	CASE(le16) DST = (uint16_t)DST; NEXT();
	CASE(le32) DST = U32(DST); NEXT();
	CASE(le64) NEXT();
	CASE(be16) DST = bswap16_(DST); NEXT();
	CASE(be32) DST = bswap32_(DST); NEXT();
	CASE(be64) DST = bswap64_(DST); NEXT();
	CASE(bswap16) DST = bswap16_(DST); NEXT();
	CASE(bswap32) DST = bswap32_(DST); NEXT();
	CASE(bswap64) DST = bswap64_(DST); NEXT();

	/* Jumps: 64-bit compares use imm sign-extended, JMP32 compares the low halves. */
#define JCOND(name, OP, T64, T32)                                                                \
	CASE(name##_imm) if ((T64)DST OP (T64)IMM) JUMP(); NEXT();                                \
	CASE(name##_reg) if ((T64)DST OP (T64)SRC) JUMP(); NEXT();                                \
	CASE(name##32_imm) if ((T32)DST OP (T32)IMM) JUMP(); NEXT();                              \
	CASE(name##32_reg) if ((T32)DST OP (T32)SRC) JUMP(); NEXT();
	JCOND(jeq, ==, uint64_t, uint32_t)
	JCOND(jne, !=, uint64_t, uint32_t)
	JCOND(jgt, >, uint64_t, uint32_t)
	JCOND(jge, >=, uint64_t, uint32_t)
	JCOND(jlt, <, uint64_t, uint32_t)
	JCOND(jle, <=, uint64_t, uint32_t)
	JCOND(jset, &, uint64_t, uint32_t)
	JCOND(jsgt, >, int64_t, int32_t)
	JCOND(jsge, >=, int64_t, int32_t)
	JCOND(jslt, <, int64_t, int32_t)
	JCOND(jsle, <=, int64_t, int32_t)
#undef JCOND
	CASE(ja) JUMP();
	CASE(ja32) JUMP();
	/* may_goto: the kernel's rewrite keeps a counter in a hidden slot of each function's
	 * frame, set to BPF_MAX_LOOPS at the function's entry; the jump is taken once it is
	 * spent.  (On x86-64 the kernel refills it every 0xffff for 250 ms instead: a loop
	 * that spends it ends after a different count there.) */
	CASE(may_goto)
		if (!loops)
			JUMP();
		loops--;
		NEXT();

	/* Loads and stores: ldx zero-extends, ldxs sign-extends, st stores imm truncated. */
	CASE(ldxb) ACCESS(pc->src, 1, BRT_FAULT_READ); DST = brt_load(PTR, 1); NEXT();
	CASE(ldxh) ACCESS(pc->src, 2, BRT_FAULT_READ); DST = brt_load(PTR, 2); NEXT();
	CASE(ldxw) ACCESS(pc->src, 4, BRT_FAULT_READ); DST = brt_load(PTR, 4); NEXT();
	CASE(ldxdw) ACCESS(pc->src, 8, BRT_FAULT_READ); DST = brt_load(PTR, 8); NEXT();
	CASE(ldxsb) ACCESS(pc->src, 1, BRT_FAULT_READ);
		DST = (uint64_t)(int64_t)(int8_t)brt_load(PTR, 1); NEXT();
	CASE(ldxsh) ACCESS(pc->src, 2, BRT_FAULT_READ);
		DST = (uint64_t)(int64_t)(int16_t)brt_load(PTR, 2); NEXT();
	CASE(ldxsw) ACCESS(pc->src, 4, BRT_FAULT_READ);
		DST = (uint64_t)(int64_t)(int32_t)brt_load(PTR, 4); NEXT();
	CASE(stb) ACCESS(pc->dst, 1, BRT_FAULT_WRITE); brt_store(PTR, 1, IMM); NEXT();
	CASE(sth) ACCESS(pc->dst, 2, BRT_FAULT_WRITE); brt_store(PTR, 2, IMM); NEXT();
	CASE(stw) ACCESS(pc->dst, 4, BRT_FAULT_WRITE); brt_store(PTR, 4, IMM); NEXT();
	CASE(stdw) ACCESS(pc->dst, 8, BRT_FAULT_WRITE); brt_store(PTR, 8, IMM); NEXT();
	CASE(stxb) ACCESS(pc->dst, 1, BRT_FAULT_WRITE); brt_store(PTR, 1, SRC); NEXT();
	CASE(stxh) ACCESS(pc->dst, 2, BRT_FAULT_WRITE); brt_store(PTR, 2, SRC); NEXT();
	CASE(stxw) ACCESS(pc->dst, 4, BRT_FAULT_WRITE); brt_store(PTR, 4, SRC); NEXT();
	CASE(stxdw) ACCESS(pc->dst, 8, BRT_FAULT_WRITE); brt_store(PTR, 8, SRC); NEXT();
	CASE(lddw) DST = IMM; pc += 2; DISPATCH();

	/* Atomics: real atomic read-modify-write so concurrent runs on shared map memory are
	 * exact.  FETCH forms and xchg put the old value (zero-extended) in src; cmpxchg
	 * compares with r0 and always leaves the old value in r0. */
#define ATOMIC(name, fn)                                                                         \
	CASE(name##32) ACCESS(pc->dst, 4, BRT_FAULT_ATOMIC);                                      \
		(void)fn((uint32_t *)PTR, U32(SRC), __ATOMIC_SEQ_CST); NEXT();                      \
	CASE(name##64) ACCESS(pc->dst, 8, BRT_FAULT_ATOMIC);                                      \
		(void)fn((uint64_t *)PTR, SRC, __ATOMIC_SEQ_CST); NEXT();                           \
	CASE(fetch_##name##32) ACCESS(pc->dst, 4, BRT_FAULT_ATOMIC);                              \
		SRC = fn((uint32_t *)PTR, U32(SRC), __ATOMIC_SEQ_CST); NEXT();                      \
	CASE(fetch_##name##64) ACCESS(pc->dst, 8, BRT_FAULT_ATOMIC);                              \
		SRC = fn((uint64_t *)PTR, SRC, __ATOMIC_SEQ_CST); NEXT();
	ATOMIC(add, __atomic_fetch_add)
	ATOMIC(or, __atomic_fetch_or)
	ATOMIC(and, __atomic_fetch_and)
	ATOMIC(xor, __atomic_fetch_xor)
#undef ATOMIC
	CASE(xchg32) ACCESS(pc->dst, 4, BRT_FAULT_ATOMIC);
		SRC = __atomic_exchange_n((uint32_t *)PTR, U32(SRC), __ATOMIC_SEQ_CST); NEXT();
	CASE(xchg64) ACCESS(pc->dst, 8, BRT_FAULT_ATOMIC);
		SRC = __atomic_exchange_n((uint64_t *)PTR, SRC, __ATOMIC_SEQ_CST); NEXT();
	CASE(cmpxchg32) ACCESS(pc->dst, 4, BRT_FAULT_ATOMIC);
		reg[0] = cmpxchg32_((uint32_t *)PTR, U32(reg[0]), U32(SRC)); NEXT();
	CASE(cmpxchg64) ACCESS(pc->dst, 8, BRT_FAULT_ATOMIC);
		reg[0] = cmpxchg64_((uint64_t *)PTR, reg[0], SRC); NEXT();

	/* Legacy packet loads: the kernel rewrites them into a helper call on the skb
	 * (offset = (s32)(src + imm), network byte order); a bad offset ends the whole program
	 * with r0 = 0.  r1-r5 are clobbered there; here they keep their values. */
	CASE(ldabsb) pkt_off = (int32_t)IMM; size = 1; goto ld_pkt;
	CASE(ldabsh) pkt_off = (int32_t)IMM; size = 2; goto ld_pkt;
	CASE(ldabsw) pkt_off = (int32_t)IMM; size = 4; goto ld_pkt;
	CASE(ldindb) pkt_off = (int32_t)(SRC + IMM); size = 1; goto ld_pkt;
	CASE(ldindh) pkt_off = (int32_t)(SRC + IMM); size = 2; goto ld_pkt;
	CASE(ldindw) pkt_off = (int32_t)(SRC + IMM); size = 4; goto ld_pkt;

	/* Calls.  Helpers get r1-r5 and the run context; bpfrt_run_stop() ends the program. */
	CASE(call_helper) helper_id = U32(IMM); goto call_helper;
	CASE(callx) helper_id = DST; goto call_helper;
	CASE(call_local)
		if (depth + 1 >= max_depth)
			goto fault_depth;
		frames[depth].r6 = reg[6];
		frames[depth].r7 = reg[7];
		frames[depth].r8 = reg[8];
		frames[depth].r9 = reg[9];
		frames[depth].loops = loops;
		frames[depth].ret = pc + 1;
		depth++;
		loops = BRT_MAX_LOOPS;
		reg[10] -= BRT_STACK_SIZE;
		stack_lo -= BRT_STACK_SIZE;
		if (BRT_LOOP_CHECKED)
			memset((void *)(uintptr_t)stack_lo, ex->poison, BRT_STACK_SIZE);
		pc += pc->off + 1; /* a call repeats nothing: no budget charge */
		DISPATCH();
	CASE(exit)
		if (depth == 0) {
			*r0 = reg[0];
			if (BRT_LOOP_CHECKED)
				ex->left = budget;
			return 0;
		}
	frame_return:
		depth--;
		reg[6] = frames[depth].r6;
		reg[7] = frames[depth].r7;
		reg[8] = frames[depth].r8;
		reg[9] = frames[depth].r9;
		loops = frames[depth].loops;
		reg[10] += BRT_STACK_SIZE;
		stack_lo += BRT_STACK_SIZE;
		pc = frames[depth].ret;
		DISPATCH();
	CASE_END
		/* the sentinel after the last instruction: report the last one */
		pc--;
		kind = BRT_FAULT_END;
		goto fault;
#ifdef BPFRT_INTERP_SWITCH
	}
#endif

#if BRT_LOOP_FUSED
	/* Superinstructions (see struct brt_vm_labels): dst = src OP x in one dispatch; x is
	 * the second instruction's imm, or the register in off (already redirected to src
	 * when the second instruction read dst). */
#define FUSED(name, OP)                                                                           \
	F_##name##64_imm: DST = SRC OP IMM; pc += 2; DISPATCH();                                 \
	F_##name##64_reg: DST = SRC OP reg[pc->off]; pc += 2; DISPATCH();                        \
	F_##name##32_imm: DST = U32(U32(SRC) OP U32(IMM)); pc += 2; DISPATCH();                  \
	F_##name##32_reg: DST = U32(U32(SRC) OP U32(reg[pc->off])); pc += 2; DISPATCH();
	FUSED(add, +)
	FUSED(sub, -)
	FUSED(mul, *)
	FUSED(or, |)
	FUSED(and, &)
	FUSED(xor, ^)
#undef FUSED
#define FUSED_SHIFT(name, OP)                                                                     \
	F_##name##64_imm: DST = SRC OP (IMM & 63); pc += 2; DISPATCH();                          \
	F_##name##64_reg: DST = SRC OP (reg[pc->off] & 63); pc += 2; DISPATCH();                 \
	F_##name##32_imm: DST = U32(U32(SRC) OP (IMM & 31)); pc += 2; DISPATCH();                \
	F_##name##32_reg: DST = U32(U32(SRC) OP (reg[pc->off] & 31)); pc += 2; DISPATCH();
	FUSED_SHIFT(lsh, <<)
	FUSED_SHIFT(rsh, >>)
#undef FUSED_SHIFT
	F_arsh64_imm: DST = (uint64_t)(S64(SRC) >> (IMM & 63)); pc += 2; DISPATCH();
	F_arsh64_reg: DST = (uint64_t)(S64(SRC) >> (reg[pc->off] & 63)); pc += 2; DISPATCH();
	F_arsh32_imm: DST = U32(S32(SRC) >> (IMM & 31)); pc += 2; DISPATCH();
	F_arsh32_reg: DST = U32(S32(SRC) >> (reg[pc->off] & 31)); pc += 2; DISPATCH();
	Z_ldxb: ACCESS(pc->src, 1, BRT_FAULT_READ); DST = brt_load(PTR, 1); pc += 2; DISPATCH();
	Z_ldxh: ACCESS(pc->src, 2, BRT_FAULT_READ); DST = brt_load(PTR, 2); pc += 2; DISPATCH();
	Z_ldxw: ACCESS(pc->src, 4, BRT_FAULT_READ); DST = brt_load(PTR, 4); pc += 2; DISPATCH();
	/* dst = imm, then store dst through the base register in src at off */
#define STORE_CONST(w, value)                                                                     \
	S##w##_stxb: DST = (value); ACCESS(pc->src, 1, BRT_FAULT_WRITE);                        \
		brt_store(PTR, 1, DST); pc += 2; DISPATCH();                                     \
	S##w##_stxh: DST = (value); ACCESS(pc->src, 2, BRT_FAULT_WRITE);                        \
		brt_store(PTR, 2, DST); pc += 2; DISPATCH();                                     \
	S##w##_stxw: DST = (value); ACCESS(pc->src, 4, BRT_FAULT_WRITE);                        \
		brt_store(PTR, 4, DST); pc += 2; DISPATCH();                                     \
	S##w##_stxdw: DST = (value); ACCESS(pc->src, 8, BRT_FAULT_WRITE);                       \
		brt_store(PTR, 8, DST); pc += 2; DISPATCH();
	STORE_CONST(64, IMM)
	STORE_CONST(32, U32(IMM))
#undef STORE_CONST
#endif

call_helper:
	if (helper_id >= ctx->nr_helpers || !ctx->helpers[helper_id]) {
		ex->fault.value = helper_id;
		kind = BRT_FAULT_HELPER;
		goto fault;
	}
	ctx->stack_lo = stack_lo;
	/* an unverified program's call of a built-in helper: its arguments as the prototype
	 * wants them (helper_args.c) */
	if (BRT_LOOP_CHECKED && helper_id < ctx->nr_helper_checks &&
	    ctx->helper_checks[helper_id]) {
		unsigned bad = brt_vm_helper_args_bad(ctx->helper_checks[helper_id], reg, ctx);

		if (bad) {
			ex->fault.value = helper_id;
			ex->fault.reg = (uint8_t)bad;
			kind = BRT_FAULT_HELPER_ARG;
			goto fault;
		}
	}
	if (BRT_LOOP_CHECKED)
		ex->left = budget; /* a callback inside the helper spends from it */
	reg[0] = ctx->helpers[helper_id](reg[1], reg[2], reg[3], reg[4], reg[5], ctx);
	if (BRT_LOOP_CHECKED)
		budget = ex->left;
	if (ctx->stopped) {
		if (ex->fault.kind != BRT_FAULT_NONE) {
			/* a callback faulted (or was refused: then the call is the culprit) */
			if (ex->fault.insn == SIZE_MAX)
				ex->fault.insn = (size_t)(pc - ex->code);
			return -1;
		}
		/* a tail call's target ran in place of this function: return its r0 */
		if (ctx->stopped == BRT_STOP_TAIL && depth) {
			ctx->stopped = 0;
			reg[0] = ctx->stop_r0;
#if BRT_LOOP_CHECKED
			if (track)
				brt_vm_track_return(track);
#endif
			goto frame_return;
		}
		*r0 = ctx->stop_r0;
		return 0;
	}
	NEXT();

ld_pkt:
	if (!pkt_load(ctx, pkt_off, size, &reg[0])) {
		*r0 = 0;
		return 0;
	}
	NEXT();

#if BRT_LOOP_BUDGET
budget_spent:
	/* the run is stopped (ctx->stopped); its runner reports the budget */
	if (BRT_LOOP_CHECKED)
		ex->left = budget;
	*r0 = 0;
	return 0;
#endif

#if BRT_LOOP_CHECKED
fault_budget:
	ex->fault.value = ex->budget;
	kind = BRT_FAULT_BUDGET;
	goto fault;
fault_track:
	kind = ex->fault.kind;
	goto fault;
fault_mem:
	/* a load through a kernel pointer: 0, as the kernel's fault-safe load */
	if (kind == BRT_FAULT_READ && ex->probe && ex->probe[pc - ex->code]) {
		DST = 0;
		NEXT();
	}
	ex->fault.size = size;
	ex->fault.reg = kind == BRT_FAULT_READ ? pc->src : pc->dst;
	ex->fault.off = pc->off;
	goto fault;
fault_misaligned:
	ex->fault.size = size;
	ex->fault.reg = pc->dst;
	ex->fault.off = pc->off;
	kind = BRT_FAULT_MISALIGNED;
	goto fault;
#endif
fault_depth:
	kind = BRT_FAULT_DEPTH;
fault:
	ex->fault.kind = kind;
	ex->fault.insn = (size_t)(pc - ex->code);
	return -1;

#undef DST
#undef SRC
#undef IMM
#undef U32
#undef S32
#undef S64
#undef BUDGET
#undef CASE
#undef CASE_END
#undef DISPATCH
#undef NEXT
#undef JUMP
#undef SPEND
#undef ACCESS
#undef PTR
}
#undef BRT_LOOP_FUSED
