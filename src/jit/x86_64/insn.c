/* insn.c - one emitter per row of insn.def: ALU, byte swaps, loads, stores, atomics and
 * jumps (calls, exits and packet loads forward to calls.c).  The dispatch switch is
 * generated from the table, so a row without an emit_<id>() does not compile.
 */
#include <errno.h>
#include <stdio.h>

#include "jit/x86_64/x86.h"

#define B (&st->buf)

typedef const struct bpf_insn *insn_t;

/* --- ALU ----------------------------------------------------------------------------- */

/* Writing a 32-bit register zero-extends it: the one instruction eBPF's ALU32 needs when
 * an operation folds away. */
static void zext32(struct jit_state *st, int reg)
{
	emit_mov_rr(B, false, reg, reg);
}

static void alu_imm(struct jit_state *st, insn_t insn, enum x86_alu op, bool w)
{
	int dst = xreg(st, insn->dst_reg);
	int32_t imm = insn->imm;

	if ((imm == 0 && op != ALU_AND) || (imm == -1 && op == ALU_AND)) {
		/* x+0, x-0, x|0, x^0, x&-1: identity */
		if (!w)
			zext32(st, dst);
	} else if (imm == 0 && op == ALU_AND) {
		emit_alu_rr(B, ALU_XOR, false, dst, dst);
	} else {
		emit_alu_ri(B, op, w, dst, imm);
	}
}

static void alu_reg(struct jit_state *st, insn_t insn, enum x86_alu op, bool w)
{
	emit_alu_rr(B, op, w, xreg(st, insn->dst_reg), xreg(st, insn->src_reg));
}

#define ALU_ROWS(name, op)                                                              \
	static int emit_##name##64_imm(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		alu_imm(st, insn, op, true);                                           \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##64_reg(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		alu_reg(st, insn, op, true);                                           \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##32_imm(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		alu_imm(st, insn, op, false);                                          \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##32_reg(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		alu_reg(st, insn, op, false);                                          \
		return 0;                                                              \
	}
ALU_ROWS(add, ALU_ADD)
ALU_ROWS(sub, ALU_SUB)
ALU_ROWS(or, ALU_OR)
ALU_ROWS(and, ALU_AND)
ALU_ROWS(xor, ALU_XOR)

static int log2_exact(uint64_t v)
{
	if (v == 0 || (v & (v - 1)))
		return -1;
	return __builtin_ctzll(v);
}

static void mul_imm(struct jit_state *st, insn_t insn, bool w)
{
	int dst = xreg(st, insn->dst_reg);
	/* the low 64 (32) bits of a product do not depend on signedness */
	uint64_t m = w ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm;
	int k = log2_exact(m);

	if (m == 0)
		emit_alu_rr(B, ALU_XOR, false, dst, dst);
	else if (k == 0)
		w ? (void)0 : zext32(st, dst);
	else if (k > 0)
		emit_shift_ri(B, SH_SHL, w, dst, (uint8_t)k);
	else
		emit_imul_rri(B, w, dst, dst, insn->imm);
}

static int emit_mul64_imm(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	mul_imm(st, insn, true);
	return 0;
}

static int emit_mul32_imm(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	mul_imm(st, insn, false);
	return 0;
}

static int emit_mul64_reg(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_imul_rr(B, true, xreg(st, insn->dst_reg), xreg(st, insn->src_reg));
	return 0;
}

static int emit_mul32_reg(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_imul_rr(B, false, xreg(st, insn->dst_reg), xreg(st, insn->src_reg));
	return 0;
}

/*
 * Division.  x86 div/idiv take the dividend in rdx:rax (eBPF r3:r0) and fault on a zero
 * divisor and on INT_MIN / -1, while eBPF defines x/0 = 0, x%0 = x, INT_MIN/-1 = INT_MIN
 * and INT_MIN%-1 = 0 (as Linux does; programs rely on it).  So: divisor into TMP, r0 and
 * r3 parked in AUX/TMP2 unless they are the destination, and explicit paths for 0 and -1
 * when the divisor is a register.
 */
static void divmod_general(struct jit_state *st, int dst, bool w, bool is_mod, bool sign,
			   bool checks)
{
	int res = is_mod ? RDX : RAX;
	size_t j_zero = 0, j_m1 = 0, j_done, j_done2 = 0;

	if (dst != RAX)
		emit_mov_rr(B, true, AUX, RAX);
	if (dst != RDX)
		emit_mov_rr(B, true, TMP2, RDX);
	if (dst != RAX)
		emit_mov_rr(B, w, RAX, dst);
	if (checks) {
		emit_rr(B, 0x85, w, TMP, TMP); /* test TMP, TMP */
		j_zero = emit_jcc8_fwd(B, CC_E);
		if (sign) {
			emit_alu_ri(B, ALU_CMP, w, TMP, -1);
			j_m1 = emit_jcc8_fwd(B, CC_E);
		}
	}
	if (sign) {
		if (w)
			emit2(B, 0x48, 0x99); /* cqo */
		else
			emit1(B, 0x99); /* cdq */
		emit_grp3(B, 7, w, TMP); /* idiv TMP */
	} else {
		emit_alu_rr(B, ALU_XOR, false, RDX, RDX);
		emit_grp3(B, 6, w, TMP); /* div TMP */
	}
	if (checks) {
		j_done = emit_jmp8_fwd(B);
		patch8_here(B, j_zero);
		if (is_mod)
			emit_mov_rr(B, w, RDX, RAX); /* x % 0 = x */
		else
			emit_alu_rr(B, ALU_XOR, false, RAX, RAX); /* x / 0 = 0 */
		if (sign) {
			j_done2 = emit_jmp8_fwd(B);
			patch8_here(B, j_m1);
			if (is_mod)
				emit_alu_rr(B, ALU_XOR, false, RDX, RDX); /* x % -1 = 0 */
			else
				emit_grp3(B, 3, w, RAX); /* x / -1 = -x, INT_MIN stays */
			patch8_here(B, j_done2);
		}
		patch8_here(B, j_done);
	}
	if (dst != res)
		emit_mov_rr(B, w, dst, res);
	else if (!w)
		zext32(st, dst);
	if (dst != RAX)
		emit_mov_rr(B, true, RAX, AUX);
	if (dst != RDX)
		emit_mov_rr(B, true, RDX, TMP2);
}

/* Divisor known at compile time: fold 0, 1, -1 and unsigned powers of two. */
static void divmod_imm(struct jit_state *st, insn_t insn, bool w, bool is_mod, bool sign)
{
	int dst = xreg(st, insn->dst_reg);
	int32_t imm = insn->imm;
	uint64_t d = w ? (uint64_t)(int64_t)imm : (uint32_t)imm;
	int k = log2_exact(d);

	if (imm == 0) {
		if (!is_mod)
			emit_alu_rr(B, ALU_XOR, false, dst, dst);
		else if (!w)
			zext32(st, dst);
	} else if (sign && (imm == -1 || imm == 1)) {
		if (is_mod)
			emit_alu_rr(B, ALU_XOR, false, dst, dst);
		else if (imm == -1)
			emit_grp3(B, 3, w, dst); /* neg */
		else if (!w)
			zext32(st, dst);
	} else if (!sign && k >= 0) {
		/* d is 2^k with k <= 31 here, so d - 1 fits an imm32 */
		if (is_mod && k == 0)
			emit_alu_rr(B, ALU_XOR, false, dst, dst);
		else if (is_mod)
			emit_alu_ri(B, ALU_AND, w, dst, (int32_t)(d - 1));
		else if (k > 0)
			emit_shift_ri(B, SH_SHR, w, dst, (uint8_t)k);
		else if (!w)
			zext32(st, dst);
	} else {
		emit_mov_imm64(B, TMP, w ? d : (uint32_t)imm);
		divmod_general(st, dst, w, is_mod, sign, false);
	}
}

static void divmod_reg(struct jit_state *st, insn_t insn, bool w, bool is_mod, bool sign)
{
	emit_mov_rr(B, w, TMP, xreg(st, insn->src_reg));
	divmod_general(st, xreg(st, insn->dst_reg), w, is_mod, sign, true);
}

#define DIV_ROWS(name, w, is_mod, sign)                                                 \
	static int emit_##name##_imm(struct jit_state *st, insn_t insn, size_t pc)       \
	{                                                                              \
		(void)pc;                                                              \
		divmod_imm(st, insn, w, is_mod, sign);                                 \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##_reg(struct jit_state *st, insn_t insn, size_t pc)       \
	{                                                                              \
		(void)pc;                                                              \
		divmod_reg(st, insn, w, is_mod, sign);                                 \
		return 0;                                                              \
	}
DIV_ROWS(div64, true, false, false)
DIV_ROWS(sdiv64, true, false, true)
DIV_ROWS(mod64, true, true, false)
DIV_ROWS(smod64, true, true, true)
DIV_ROWS(div32, false, false, false)
DIV_ROWS(sdiv32, false, false, true)
DIV_ROWS(mod32, false, true, false)
DIV_ROWS(smod32, false, true, true)

/* Shifts: x86 masks the count to 5/6 bits exactly as eBPF does. */
static void shift_imm(struct jit_state *st, insn_t insn, enum x86_shift op, bool w)
{
	int dst = xreg(st, insn->dst_reg);
	uint8_t n = (uint8_t)(insn->imm & (w ? 63 : 31));

	if (n)
		emit_shift_ri(B, op, w, dst, n);
	else if (!w)
		zext32(st, dst);
}

/* A variable count must be in cl, and rcx is r4: park r4 in TMP around the shift.  With
 * BMI2 the count can be any register. */
static void shift_reg(struct jit_state *st, insn_t insn, enum x86_shift op, bool w)
{
	int dst = xreg(st, insn->dst_reg), src = xreg(st, insn->src_reg);

	if (st->bmi2) {
		emit_shiftx(B, op == SH_SHL ? SHX_SHL : op == SH_SHR ? SHX_SHR : SHX_SAR, w, dst,
			    dst, src);
	} else if (src == RCX) {
		emit_shift_cl(B, op, w, dst);
	} else if (dst == RCX) {
		emit_mov_rr(B, true, TMP, RCX);
		emit_mov_rr(B, false, RCX, src);
		emit_shift_cl(B, op, w, TMP);
		emit_mov_rr(B, w, RCX, TMP);
	} else {
		emit_mov_rr(B, true, TMP, RCX);
		emit_mov_rr(B, false, RCX, src);
		emit_shift_cl(B, op, w, dst);
		emit_mov_rr(B, true, RCX, TMP);
	}
}

#define SHIFT_ROWS(name, op)                                                            \
	static int emit_##name##64_imm(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		shift_imm(st, insn, op, true);                                         \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##64_reg(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		shift_reg(st, insn, op, true);                                         \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##32_imm(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		shift_imm(st, insn, op, false);                                        \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##32_reg(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		(void)pc;                                                              \
		shift_reg(st, insn, op, false);                                        \
		return 0;                                                              \
	}
SHIFT_ROWS(lsh, SH_SHL)
SHIFT_ROWS(rsh, SH_SHR)
SHIFT_ROWS(arsh, SH_SAR)

static int emit_neg64(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_grp3(B, 3, true, xreg(st, insn->dst_reg));
	return 0;
}

static int emit_neg32(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_grp3(B, 3, false, xreg(st, insn->dst_reg));
	return 0;
}

static int emit_mov64_imm(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_mov_imm64(B, xreg(st, insn->dst_reg), (uint64_t)(int64_t)insn->imm);
	return 0;
}

static int emit_mov32_imm(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_mov_imm64(B, xreg(st, insn->dst_reg), (uint32_t)insn->imm);
	return 0;
}

static int emit_mov64_reg(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	if (insn->dst_reg != insn->src_reg)
		emit_mov_rr(B, true, xreg(st, insn->dst_reg), xreg(st, insn->src_reg));
	return 0;
}

static int emit_mov32_reg(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_mov_rr(B, false, xreg(st, insn->dst_reg), xreg(st, insn->src_reg));
	return 0;
}

/* movsx: 0F BE (from 8 bits), 0F BF (from 16), 63 (movsxd, from 32) */
static int emit_movsx8_64(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_0f_rr(B, 0xbe, true, xreg(st, insn->dst_reg), xreg(st, insn->src_reg), true);
	return 0;
}

static int emit_movsx16_64(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_0f_rr(B, 0xbf, true, xreg(st, insn->dst_reg), xreg(st, insn->src_reg), false);
	return 0;
}

static int emit_movsx32_64(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_movsxd_rr(B, xreg(st, insn->dst_reg), xreg(st, insn->src_reg));
	return 0;
}

static int emit_movsx8_32(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_0f_rr(B, 0xbe, false, xreg(st, insn->dst_reg), xreg(st, insn->src_reg), true);
	return 0;
}

static int emit_movsx16_32(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	emit_0f_rr(B, 0xbf, false, xreg(st, insn->dst_reg), xreg(st, insn->src_reg), false);
	return 0;
}

/* --- byte order: the host is little-endian, so "le" only truncates ------------------- */

static void swap(struct jit_state *st, insn_t insn, int bits)
{
	int dst = xreg(st, insn->dst_reg);

	if (bits == 16) {
		emit_rol16_8(B, dst);
		emit_0f_rr(B, 0xb7, false, dst, dst, false); /* movzx dst32, dst16 */
	} else {
		emit_bswap(B, bits == 64, dst);
	}
}

static void truncate_le(struct jit_state *st, insn_t insn, int bits)
{
	int dst = xreg(st, insn->dst_reg);

	if (bits == 16)
		emit_0f_rr(B, 0xb7, false, dst, dst, false); /* movzx dst32, dst16 */
	else if (bits == 32)
		zext32(st, dst);
}

#define SWAP_ROW(name, fn, bits)                                                        \
	static int emit_##name(struct jit_state *st, insn_t insn, size_t pc)             \
	{                                                                              \
		(void)pc;                                                              \
		fn(st, insn, bits);                                                    \
		return 0;                                                              \
	}
SWAP_ROW(bswap16, swap, 16)
SWAP_ROW(bswap32, swap, 32)
SWAP_ROW(bswap64, swap, 64)
SWAP_ROW(be16, swap, 16)
SWAP_ROW(be32, swap, 32)
SWAP_ROW(be64, swap, 64)
SWAP_ROW(le16, truncate_le, 16)
SWAP_ROW(le32, truncate_le, 32)
SWAP_ROW(le64, truncate_le, 64)

/* --- memory --------------------------------------------------------------------------- */

static int emit_lddw(struct jit_state *st, insn_t insn, size_t pc)
{
	emit_mov_imm64(B, xreg(st, insn->dst_reg), brt_isa_lddw_value(insn, pc));
	return 0;
}

#define LOAD_ROW(name, size, sign)                                                      \
	static int emit_##name(struct jit_state *st, insn_t insn, size_t pc)             \
	{                                                                              \
		(void)pc;                                                              \
		emit_load(B, size, sign, xreg(st, insn->dst_reg), mbase(st, insn->src_reg), \
			  insn->off);                                                  \
		return 0;                                                              \
	}
LOAD_ROW(ldxb, 1, false)
LOAD_ROW(ldxh, 2, false)
LOAD_ROW(ldxw, 4, false)
LOAD_ROW(ldxdw, 8, false)
LOAD_ROW(ldxsb, 1, true)
LOAD_ROW(ldxsh, 2, true)
LOAD_ROW(ldxsw, 4, true)

#define STORE_ROWS(sfx, size)                                                           \
	static int emit_st##sfx(struct jit_state *st, insn_t insn, size_t pc)            \
	{                                                                              \
		(void)pc;                                                              \
		emit_store_i(B, size, mbase(st, insn->dst_reg), insn->off, insn->imm); \
		return 0;                                                              \
	}                                                                              \
	static int emit_stx##sfx(struct jit_state *st, insn_t insn, size_t pc)           \
	{                                                                              \
		(void)pc;                                                              \
		emit_store_r(B, size, mbase(st, insn->dst_reg), insn->off,             \
			     xreg(st, insn->src_reg));                                     \
		return 0;                                                              \
	}
STORE_ROWS(b, 1)
STORE_ROWS(h, 2)
STORE_ROWS(w, 4)
STORE_ROWS(dw, 8)

static int emit_ldabsb(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	brt_jit_emit_ld_pkt(st, insn, false);
	return 0;
}

static int emit_ldabsh(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	brt_jit_emit_ld_pkt(st, insn, false);
	return 0;
}

static int emit_ldabsw(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	brt_jit_emit_ld_pkt(st, insn, false);
	return 0;
}

static int emit_ldindb(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	brt_jit_emit_ld_pkt(st, insn, true);
	return 0;
}

static int emit_ldindh(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	brt_jit_emit_ld_pkt(st, insn, true);
	return 0;
}

static int emit_ldindw(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)pc;
	brt_jit_emit_ld_pkt(st, insn, true);
	return 0;
}

/* --- atomics ------------------------------------------------------------------------ */

/* fetch-or/and/xor have no x86 instruction that returns the old value: a cmpxchg loop.
 * cmpxchg compares with rax (r0), so r0 is parked in AUX; the address goes to TMP2 first
 * because dst itself may be r0. */
static void atomic_fetch_loop(struct jit_state *st, insn_t insn, enum x86_alu op, bool w)
{
	int dst = xreg(st, insn->dst_reg), src = xreg(st, insn->src_reg);
	int operand = src == RAX ? AUX : src;
	size_t retry;

	emit_lea(B, TMP2, dst, insn->off);
	emit_mov_rr(B, true, AUX, RAX);
	emit_load(B, w ? 8 : 4, false, RAX, TMP2, 0);
	retry = B->len;
	emit_mov_rr(B, w, TMP, RAX);
	emit_alu_rr(B, op, w, TMP, operand);
	emit_rmw(B, true, true, 0xb1, w, TMP2, 0, TMP); /* lock cmpxchg [TMP2], TMP */
	emit2(B, 0x70 | CC_NE, (uint8_t)(int8_t)((int64_t)retry - (int64_t)(B->len + 2)));
	if (src != RAX) {
		emit_mov_rr(B, w, src, RAX);
		emit_mov_rr(B, true, RAX, AUX);
	}
}

/* lock <op> [dst+off], src */
static void atomic_alu(struct jit_state *st, insn_t insn, enum x86_alu op, bool w)
{
	emit_rmw(B, true, false, (uint8_t)(8 * op + 1), w, xreg(st, insn->dst_reg), insn->off,
		 xreg(st, insn->src_reg));
}

/* One function per operation, named after its rows: each row's emitter below calls
 * atomic_<row>(), so a new atomic row without its own function does not compile (nothing
 * switches on imm again here: decoding chose the row). */
static void atomic_add(struct jit_state *st, insn_t insn, bool w)
{
	atomic_alu(st, insn, ALU_ADD, w);
}

static void atomic_or(struct jit_state *st, insn_t insn, bool w)
{
	atomic_alu(st, insn, ALU_OR, w);
}

static void atomic_and(struct jit_state *st, insn_t insn, bool w)
{
	atomic_alu(st, insn, ALU_AND, w);
}

static void atomic_xor(struct jit_state *st, insn_t insn, bool w)
{
	atomic_alu(st, insn, ALU_XOR, w);
}

static void atomic_fetch_add(struct jit_state *st, insn_t insn, bool w)
{
	/* lock xadd [dst+off], src */
	emit_rmw(B, true, true, 0xc1, w, xreg(st, insn->dst_reg), insn->off, xreg(st, insn->src_reg));
}

static void atomic_fetch_or(struct jit_state *st, insn_t insn, bool w)
{
	atomic_fetch_loop(st, insn, ALU_OR, w);
}

static void atomic_fetch_and(struct jit_state *st, insn_t insn, bool w)
{
	atomic_fetch_loop(st, insn, ALU_AND, w);
}

static void atomic_fetch_xor(struct jit_state *st, insn_t insn, bool w)
{
	atomic_fetch_loop(st, insn, ALU_XOR, w);
}

static void atomic_xchg(struct jit_state *st, insn_t insn, bool w)
{
	/* xchg [dst+off], src (implicitly locked) */
	emit_rmw(B, false, false, 0x87, w, xreg(st, insn->dst_reg), insn->off, xreg(st, insn->src_reg));
}

static void atomic_cmpxchg(struct jit_state *st, insn_t insn, bool w)
{
	/* lock cmpxchg [dst+off], src; r0 = old value */
	emit_rmw(B, true, true, 0xb1, w, xreg(st, insn->dst_reg), insn->off, xreg(st, insn->src_reg));
	/* on success the 32-bit form leaves rax untouched: zero-extend by hand */
	if (!w)
		zext32(st, RAX);
}

#define ATOMIC_ROWS(name)                                                               \
	static int emit_##name##32(struct jit_state *st, insn_t insn, size_t pc)         \
	{                                                                              \
		(void)pc;                                                              \
		atomic_##name(st, insn, false);                                        \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##64(struct jit_state *st, insn_t insn, size_t pc)         \
	{                                                                              \
		(void)pc;                                                              \
		atomic_##name(st, insn, true);                                         \
		return 0;                                                              \
	}
ATOMIC_ROWS(add)
ATOMIC_ROWS(or)
ATOMIC_ROWS(and)
ATOMIC_ROWS(xor)
ATOMIC_ROWS(fetch_add)
ATOMIC_ROWS(fetch_or)
ATOMIC_ROWS(fetch_and)
ATOMIC_ROWS(fetch_xor)
ATOMIC_ROWS(xchg)
ATOMIC_ROWS(cmpxchg)

/* --- jumps ---------------------------------------------------------------------------- */

/* Jump (cc < 0: unconditional) from instruction pc to instruction target.  rel8 unless
 * this jump was found too far in an earlier pass; targets ahead come from the previous
 * pass's layout, targets behind from this pass (see the pass loop in jit.c). */
static void branch(struct jit_state *st, size_t pc, int cc, size_t target)
{
	bool is_short = !st->is_long[pc];
	size_t to = target <= pc ? st->off[target] : st->prev_off[target];

	if (is_short && !st->first_pass) {
		int64_t disp = (int64_t)to - (int64_t)(B->len + 2);

		if (!is_imm8(disp)) {
			st->is_long[pc] = 1;
			st->grew = true;
			is_short = false;
		}
	}
	if (cc < 0)
		emit_jmp_rel(B, is_short, to);
	else
		emit_jcc_rel(B, (enum x86_cc)cc, is_short, to);
}

static int emit_ja(struct jit_state *st, insn_t insn, size_t pc)
{
	if (insn->off)
		branch(st, pc, -1, pc + 1 + (size_t)(int64_t)insn->off);
	return 0;
}

static int emit_ja32(struct jit_state *st, insn_t insn, size_t pc)
{
	if (insn->imm)
		branch(st, pc, -1, pc + 1 + (size_t)(int64_t)insn->imm);
	return 0;
}

/* may_goto: jump when the function's counter (calls.c, loops_setup) is spent, else count
 * one down: cmp qword [rbp + LOOPS], 0; je target; dec qword [rbp + LOOPS] */
static int emit_may_goto(struct jit_state *st, insn_t insn, size_t pc)
{
	emit_cmp_mem_i8(B, RBP, BRT_JIT_LOOPS_OFF, 0);
	branch(st, pc, CC_E, pc + 1 + (size_t)(int64_t)insn->off);
	emit_rex(B, true, 0, RBP, false);
	emit1(B, 0xff);
	emit_modrm_mem(B, 1, RBP, BRT_JIT_LOOPS_OFF);
	return 0;
}

static int emit_op(struct jit_state *st, const struct bpf_insn *insn, size_t pc, enum brt_op op);

/* setcc into reg's low byte (sil/dil need a REX prefix) */
static void emit_setcc(struct jit_buf *b, enum x86_cc cc, int reg)
{
	emit_rex(b, false, 0, reg, true);
	emit2(b, 0x0f, (uint8_t)(0x90 | cc));
	emit_modrm_rr(b, 0, reg);
}

/* The constant of eqset's compare i (the jeqs, then the closing jne at ne). */
static int32_t eqset_k(const struct jit_state *st, size_t pc, size_t ne, unsigned i)
{
	return st->insns[i + 1 == st->plan[pc].rol ? ne : pc + i].imm;
}

/* Whether a 32-bit chain can test the product of (x - K) over its constants: each factor
 * is a 32-bit value, zero-extended, so the 64-bit product wraps to 0 only when its
 * factors' powers of two add up to 64.  Two factors divisible by 2^v make their
 * constants' difference divisible by 2^v, so with every pairwise difference's power of
 * two at most p, one factor has up to 31 and the others up to p: 31 + (n - 1) * p < 64
 * says the product is 0 exactly when a factor is. */
static bool eqset_product(const struct jit_state *st, size_t pc, size_t ne)
{
	unsigned n = st->plan[pc].rol, p = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++) {
			uint32_t d = (uint32_t)eqset_k(st, pc, ne, i) - (uint32_t)eqset_k(st, pc, ne, j);
			unsigned v;

			if (!d)
				return false;
			v = (unsigned)__builtin_ctz(d);
			p = v > p ? v : p;
		}
	return 31 + (n - 1) * p < 64;
}

/* The bits of eqset's constants below 64 (as the compare's width sees them); *nsmall: how
 * many there are. */
static uint64_t eqset_bits(const struct jit_state *st, size_t pc, size_t ne, unsigned *nsmall)
{
	const struct jit_plan *p = &st->plan[pc];
	uint64_t bits = 0;

	*nsmall = 0;
	for (unsigned i = 0; i < p->rol; i++) {
		int32_t k = eqset_k(st, pc, ne, i);

		if (k >= 0 && k < 64) {
			bits |= 1ull << k;
			++*nsmall;
		}
	}
	return bits;
}

/* Pass eqset's chain at pc (opt.c, pass_eqset): the constant move first; then, when two
 * constants or more are below 64, a bit test: each other constant's compare jumping to L,
 * then cmp x, 64 / sbb u, u (all ones when x is below 64), t = the small constants' bits
 * and u, bt t, x, carry clear to M (xdp_flow's `l4 == 6 || 132 || 17`: cmp/je 132, cmp,
 * sbb, mov, and, bt, jnc).  No multiply: the product's two imuls share the one multiplier
 * with the flow hash's chain of nine; and one branch for the small constants, not a
 * cmp/ja 63 before the bt (session 24's form): in bench.c's loop over 64 placements of
 * the code the raw build's cached IPv6 row ran 6.60 ns median with this form against 6.79
 * with the product and 6.73 with cmp/ja (IPv4 6.64 / 6.87 / 6.67; session 25).  Else, for a
 * 32-bit chain whose constants allow it, (x - K1) * (x - K2) * ... with lea and imul (one
 * macro-op a constant fewer than compares); else every compare's ZF into a byte, or'ed;
 * none equal: jump to M. */
static void emit_eqset(struct jit_state *st, size_t pc)
{
	const struct jit_plan *p = &st->plan[pc];
	int x = xreg(st, p->dst), t = xreg(st, p->src), u = xreg(st, p->mreg);
	size_t ne = pc + p->rol - 1 + p->mul, hit[4];
	unsigned nsmall, nhit = 0;
	uint64_t bits;

	if (p->mul)
		emit_op(st, &st->insns[ne - 1], ne - 1, (enum brt_op)(st->insns[ne - 1].code ==
			(BPF_ALU64 | BPF_MOV | BPF_K) ? BRT_OP_mov64_imm : BRT_OP_mov32_imm));
	bits = eqset_bits(st, pc, ne, &nsmall);
	if (nsmall >= 2) {
		for (unsigned i = 0; i < p->rol; i++) {
			int32_t k = eqset_k(st, pc, ne, i);

			if (k >= 0 && k < 64)
				continue;
			emit_alu_ri(B, ALU_CMP, p->w64, x, k);
			hit[nhit++] = emit_jcc8_fwd(B, CC_E);
		}
		/* x below 64 unsigned (its low 32 bits for a 32-bit chain, the bit number bt
		 * takes from x's low 6 bits): u all ones, else 0; t the small constants' bits
		 * masked by u; bt t, x; carry clear: to M */
		emit_alu_ri(B, ALU_CMP, p->w64, x, 64);
		emit_rr(B, 0x19, true, u, u); /* sbb u, u */
		emit_mov_imm64(B, t, bits);
		emit_alu_rr(B, ALU_AND, true, t, u);
		emit_rex(B, true, x, t, false); /* bt t, x */
		emit2(B, 0x0f, 0xa3);
		emit_modrm_rr(B, x, t);
		branch(st, pc, CC_AE, pc + (size_t)(int64_t)p->imm);
		for (unsigned i = 0; i < nhit; i++)
			patch8_here(B, hit[i]);
		return;
	}
	/* Not zeroed first, as gcc does not: sete merges its byte with the register's old
	 * (dead) value, a dependency only on when the jz is checked, which is predicted;
	 * two xors more measured 1-1.5 ns a packet slower on rot6 (the window holds fewer
	 * packets' misses). */
	if (!p->w64 && eqset_product(st, pc, ne)) {
		for (unsigned i = 0; i < p->rol; i++) {
			/* the 32-bit lea zero-extends x - K, whatever x's upper half */
			emit_lea_w(B, false, i ? u : t, x,
				   (int32_t)(0u - (uint32_t)eqset_k(st, pc, ne, i)));
			if (i)
				emit_imul_rr(B, true, t, u);
		}
		emit_rr(B, 0x85, true, t, t);
		branch(st, pc, CC_NE, pc + (size_t)(int64_t)p->imm);
		return;
	}
	for (unsigned i = 0; i < p->rol; i++) {
		int32_t k = eqset_k(st, pc, ne, i);

		if (k == 0)
			emit_rr(B, 0x85, p->w64, x, x);
		else
			emit_alu_ri(B, ALU_CMP, p->w64, x, k);
		emit_setcc(B, CC_E, i ? u : t);
		if (i) { /* or t8, u8 */
			emit_rex(B, false, u, t, true);
			emit1(B, 0x08);
			emit_modrm_rr(B, u, t);
		}
	}
	branch(st, pc, CC_E, pc + (size_t)(int64_t)p->imm);
}

/* A conditional jump to the next instruction has no effect: nothing is emitted. */
static void jmp_cond(struct jit_state *st, insn_t insn, size_t pc, enum x86_cc cc, bool w,
		     bool is_imm, bool is_test)
{
	int dst = xreg(st, insn->dst_reg);
	size_t target = pc + 1 + (size_t)(int64_t)insn->off;

	if (!insn->off)
		return;
	if (st->plan && st->plan[pc].kind == PLAN_EQSET) {
		emit_eqset(st, pc);
		return;
	}
	if (st->plan && st->plan[pc].kind == PLAN_BTJ) {
		/* pass bittest: the bt before set the carry to the tested bit */
		cc = cc == CC_NE ? CC_B : CC_AE;
		if (st->plan[pc].rol) {
			cc = (enum x86_cc)(cc ^ 1);
			target = pc + (size_t)(int64_t)st->plan[pc].imm;
		}
		branch(st, pc, cc, target);
		return;
	}
	if (st->plan && st->plan[pc].kind == PLAN_JINV) {
		/* pass jumpfold: to the next ja's target when the condition fails (x86's
		 * condition codes come in pairs that differ in bit 0) */
		cc = (enum x86_cc)(cc ^ 1);
		target = pc + (size_t)(int64_t)st->plan[pc].imm;
	}
	if (is_test && is_imm)
		emit_test_ri(B, w, dst, insn->imm);
	else if (is_test)
		emit_rr(B, 0x85, w, dst, xreg(st, insn->src_reg));
	else if (is_imm && insn->imm == 0)
		emit_rr(B, 0x85, w, dst, dst); /* test: same flags as cmp with 0 */
	else if (is_imm)
		emit_alu_ri(B, ALU_CMP, w, dst, insn->imm);
	else
		emit_alu_rr(B, ALU_CMP, w, dst, xreg(st, insn->src_reg));
	branch(st, pc, cc, target);
}

#define JMP_ROWS(name, cc, is_test)                                                     \
	static int emit_##name##_imm(struct jit_state *st, insn_t insn, size_t pc)       \
	{                                                                              \
		jmp_cond(st, insn, pc, cc, true, true, is_test);                       \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##_reg(struct jit_state *st, insn_t insn, size_t pc)       \
	{                                                                              \
		jmp_cond(st, insn, pc, cc, true, false, is_test);                      \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##32_imm(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		jmp_cond(st, insn, pc, cc, false, true, is_test);                      \
		return 0;                                                              \
	}                                                                              \
	static int emit_##name##32_reg(struct jit_state *st, insn_t insn, size_t pc)     \
	{                                                                              \
		jmp_cond(st, insn, pc, cc, false, false, is_test);                     \
		return 0;                                                              \
	}
JMP_ROWS(jeq, CC_E, false)
JMP_ROWS(jne, CC_NE, false)
JMP_ROWS(jgt, CC_A, false)
JMP_ROWS(jge, CC_AE, false)
JMP_ROWS(jlt, CC_B, false)
JMP_ROWS(jle, CC_BE, false)
JMP_ROWS(jsgt, CC_G, false)
JMP_ROWS(jsge, CC_GE, false)
JMP_ROWS(jslt, CC_L, false)
JMP_ROWS(jsle, CC_LE, false)
JMP_ROWS(jset, CC_NE, true)

/* --- calls and exit (calls.c) ------------------------------------------------------- */

static int emit_call_helper(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)insn;
	if (brt_jit_is_bound(st, pc)) {
		brt_jit_emit_lookup(st, pc);
		return 0;
	}
	if (brt_jit_is_inline_site(st, pc, BRT_OP_call_helper)) { /* inline.c */
		brt_jit_emit_inline_call(st, pc);
		return 0;
	}
	return brt_jit_emit_helper_call(st, pc);
}

static int emit_call_local(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)insn;
	return brt_jit_emit_local_call(st, pc);
}

static int emit_callx(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)insn;
	return brt_jit_emit_callx(st, pc);
}

static int emit_exit(struct jit_state *st, insn_t insn, size_t pc)
{
	(void)insn;
	(void)pc;
	brt_jit_emit_exit(st);
	return 0;
}

static int emit_op(struct jit_state *st, const struct bpf_insn *insn, size_t pc, enum brt_op op)
{
	switch (op) {
#define INSN(id, opc, dk, dv, shape, mnem, grp, ver)                                           \
	case BRT_OP_##id:                                                                      \
		return emit_##id(st, insn, pc);
#include "isa/insn.def"
#undef INSN
	default:
		snprintf(st->err, st->errlen, "internal error: insn %zu: no emitter for op %d", pc,
			 (int)op);
		return -EFAULT;
	}
}

int brt_jit_emit_insn(struct jit_state *st, size_t pc, enum brt_op op)
{
	/* pass constjump: decided before blinding, no constant of the jump is emitted */
	if (st->plan && st->plan[pc].kind == PLAN_JMP) {
		branch(st, pc, -1, pc + (size_t)(int64_t)st->plan[pc].imm);
		return 0;
	}
	if (st->blind_seed) {
		struct bpf_insn in;
		enum brt_op bop;
		int rc = brt_jit_blind(st, pc, &in, &bop);

		if (rc == BRT_JIT_BLIND_REWRITTEN)
			return emit_op(st, &in, pc, bop);
		if (rc != BRT_JIT_BLIND_NONE)
			return rc < 0 ? rc : 0;
	}
	return emit_op(st, &st->insns[pc], pc, op);
}

