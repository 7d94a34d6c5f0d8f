/* emit.h - x86-64 instruction encoders for the JIT: one small inline function per machine
 * instruction form, writing bytes into a growable buffer (struct jit_buf).  Every encoder
 * names the instruction it emits in Intel syntax; the operand conventions are in jit.c's
 * theory-of-operation comment.
 */
#ifndef BPFRT_SRC_JIT_X86_64_EMIT_H
#define BPFRT_SRC_JIT_X86_64_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* x86-64 register numbers as encoded in ModRM/REX (bit 3 goes into REX). */
enum x64_reg {
	RAX = 0, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

/* Condition codes (the low nibble of Jcc/SETcc/CMOVcc). */
enum x86_cc {
	CC_B = 0x2, CC_AE = 0x3, CC_E = 0x4, CC_NE = 0x5, CC_BE = 0x6, CC_A = 0x7,
	CC_L = 0xc, CC_GE = 0xd, CC_LE = 0xe, CC_G = 0xf,
};

/* Group-1 ALU operations: the /digit of opcodes 0x81/0x83 and, times 8 plus 1, the
 * "r/m, reg" opcode (add 0x01, or 0x09, and 0x21, sub 0x29, xor 0x31, cmp 0x39). */
enum x86_alu {
	ALU_ADD = 0, ALU_OR = 1, ALU_AND = 4, ALU_SUB = 5, ALU_XOR = 6, ALU_CMP = 7,
};

/* Group-2 shift operations: the /digit of 0xC1/0xD3. */
enum x86_shift {
	SH_ROL = 0, SH_ROR = 1, SH_SHL = 4, SH_SHR = 5, SH_SAR = 7,
};

/* Worst case bytes one eBPF instruction (or a prologue/stub) can expand to; the buffer
 * is grown by at least this much before each one so encoders need no checks. */
#define JIT_MAX_INSN_BYTES 512 /* the inlined hash probe of a 32-byte key: ~330 */

struct jit_buf {
	uint8_t *p;   /* bytes emitted so far */
	size_t len;   /* bytes used */
	size_t cap;   /* bytes allocated */
};

static inline void emit1(struct jit_buf *b, uint8_t x)
{
	b->p[b->len++] = x;
}

static inline void emit2(struct jit_buf *b, uint8_t x, uint8_t y)
{
	emit1(b, x);
	emit1(b, y);
}

static inline void emit3(struct jit_buf *b, uint8_t x, uint8_t y, uint8_t z)
{
	emit2(b, x, y);
	emit1(b, z);
}

static inline void emit_u32(struct jit_buf *b, uint32_t v)
{
	memcpy(b->p + b->len, &v, 4);
	b->len += 4;
}

static inline void emit_u64(struct jit_buf *b, uint64_t v)
{
	memcpy(b->p + b->len, &v, 8);
	b->len += 8;
}

static inline bool is_imm8(int64_t v)
{
	return v >= -128 && v <= 127;
}

static inline bool is_simm32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* REX prefix for operands reg (ModRM.reg) and rm (ModRM.rm or opcode register).  Emitted
 * when W is set, an extended register is used, or `byte` asks for sil/dil/spl/bpl. */
static inline void emit_rex(struct jit_buf *b, bool w, int reg, int rm, bool byte)
{
	uint8_t rex = 0x40 | (w ? 8 : 0) | ((reg & 8) ? 4 : 0) | ((rm & 8) ? 1 : 0);

	if (rex != 0x40 || (byte && ((reg & 7) >= 4 || (rm & 7) >= 4)))
		emit1(b, rex);
}

static inline void emit_modrm_rr(struct jit_buf *b, int reg, int rm)
{
	emit1(b, (uint8_t)(0xc0 | ((reg & 7) << 3) | (rm & 7)));
}

/* ModRM (+SIB, +disp) for [base + disp]: rsp/r12 need a SIB byte, rbp/r13 always a
 * displacement; disp8 when it fits. */
static inline void emit_modrm_mem(struct jit_buf *b, int reg, int base, int32_t disp)
{
	uint8_t mod = 0;

	if (disp == 0 && (base & 7) != RBP)
		mod = 0;
	else if (is_imm8(disp))
		mod = 1;
	else
		mod = 2;
	emit1(b, (uint8_t)((mod << 6) | ((reg & 7) << 3) | (base & 7)));
	if ((base & 7) == RSP)
		emit1(b, 0x24); /* SIB: base only, no index */
	if (mod == 1)
		emit1(b, (uint8_t)(int8_t)disp);
	else if (mod == 2)
		emit_u32(b, (uint32_t)disp);
}

/* op rm, reg for an "r/m, reg" opcode (add/sub/and/or/xor/cmp/test/mov...), 32 or 64 bit */
static inline void emit_rr(struct jit_buf *b, uint8_t opc, bool w, int rm, int reg)
{
	emit_rex(b, w, reg, rm, false);
	emit1(b, opc);
	emit_modrm_rr(b, reg, rm);
}

/* mov dst, src */
static inline void emit_mov_rr(struct jit_buf *b, bool w, int dst, int src)
{
	emit_rr(b, 0x89, w, dst, src);
}

/* <alu> dst, imm (imm8 form when it fits; the imm32 form sign-extends for 64 bit) */
static inline void emit_alu_ri(struct jit_buf *b, enum x86_alu op, bool w, int dst, int32_t imm)
{
	emit_rex(b, w, 0, dst, false);
	if (is_imm8(imm)) {
		emit2(b, 0x83, (uint8_t)(0xc0 | (op << 3) | (dst & 7)));
		emit1(b, (uint8_t)(int8_t)imm);
	} else {
		emit2(b, 0x81, (uint8_t)(0xc0 | (op << 3) | (dst & 7)));
		emit_u32(b, (uint32_t)imm);
	}
}

/* <alu> dst, src */
static inline void emit_alu_rr(struct jit_buf *b, enum x86_alu op, bool w, int dst, int src)
{
	emit_rr(b, (uint8_t)(op * 8 + 1), w, dst, src);
}

/* mov dst32, imm32 (zero-extends) */
static inline void emit_mov_ri32(struct jit_buf *b, int dst, uint32_t imm)
{
	emit_rex(b, false, 0, dst, false);
	emit1(b, (uint8_t)(0xb8 + (dst & 7)));
	emit_u32(b, imm);
}

/* Load a 64-bit constant with the shortest encoding: xor for 0, mov r32 for values that
 * zero-extend, mov r64, simm32 for small negatives, movabs otherwise. */
static inline void emit_mov_imm64(struct jit_buf *b, int dst, uint64_t imm)
{
	if (imm == 0) {
		emit_alu_rr(b, ALU_XOR, false, dst, dst); /* xor dst32, dst32 */
	} else if (imm <= UINT32_MAX) {
		emit_mov_ri32(b, dst, (uint32_t)imm);
	} else if (is_simm32((int64_t)imm)) {
		emit_rex(b, true, 0, dst, false); /* mov dst, simm32 */
		emit2(b, 0xc7, (uint8_t)(0xc0 | (dst & 7)));
		emit_u32(b, (uint32_t)imm);
	} else {
		emit_rex(b, true, 0, dst, false); /* movabs dst, imm64 */
		emit1(b, (uint8_t)(0xb8 + (dst & 7)));
		emit_u64(b, imm);
	}
}

/* shl/shr/sar/rol/ror dst, imm8 */
static inline void emit_shift_ri(struct jit_buf *b, enum x86_shift op, bool w, int dst, uint8_t n)
{
	emit_rex(b, w, 0, dst, false);
	if (n == 1) {
		emit2(b, 0xd1, (uint8_t)(0xc0 | (op << 3) | (dst & 7)));
	} else {
		emit2(b, 0xc1, (uint8_t)(0xc0 | (op << 3) | (dst & 7)));
		emit1(b, n);
	}
}

/* shl/shr/sar dst, cl */
static inline void emit_shift_cl(struct jit_buf *b, enum x86_shift op, bool w, int dst)
{
	emit_rex(b, w, 0, dst, false);
	emit2(b, 0xd3, (uint8_t)(0xc0 | (op << 3) | (dst & 7)));
}

/* BMI2 shlx/shrx/sarx dst, src, cnt (VEX.LZ.0F38 F7 /r; the prefix selects the shift:
 * 66 shlx, F2 shrx, F3 sarx).  No flags, any count register, count masked like shl. */
enum x86_shiftx {
	SHX_SHL = 1, /* pp = 66 */
	SHX_SAR = 2, /* pp = F3 */
	SHX_SHR = 3, /* pp = F2 */
};

static inline void emit_shiftx(struct jit_buf *b, enum x86_shiftx op, bool w, int dst, int src,
			       int cnt)
{
	emit1(b, 0xc4);
	emit1(b, (uint8_t)(((dst & 8) ? 0 : 0x80) | 0x40 | ((src & 8) ? 0 : 0x20) | 0x02));
	emit1(b, (uint8_t)((w ? 0x80 : 0) | ((~cnt & 0xf) << 3) | op));
	emit1(b, 0xf7);
	emit_modrm_rr(b, dst, src);
}

/* Group-3 unary: neg (/3), mul (/4), div (/6), idiv (/7), not (/2) on a register */
static inline void emit_grp3(struct jit_buf *b, uint8_t ext, bool w, int rm)
{
	emit_rex(b, w, 0, rm, false);
	emit2(b, 0xf7, (uint8_t)(0xc0 | (ext << 3) | (rm & 7)));
}

/* imul dst, src */
static inline void emit_imul_rr(struct jit_buf *b, bool w, int dst, int src)
{
	emit_rex(b, w, dst, src, false);
	emit2(b, 0x0f, 0xaf);
	emit_modrm_rr(b, dst, src);
}

/* imul dst, src, imm */
static inline void emit_imul_rri(struct jit_buf *b, bool w, int dst, int src, int32_t imm)
{
	emit_rex(b, w, dst, src, false);
	if (is_imm8(imm)) {
		emit1(b, 0x6b);
		emit_modrm_rr(b, dst, src);
		emit1(b, (uint8_t)(int8_t)imm);
	} else {
		emit1(b, 0x69);
		emit_modrm_rr(b, dst, src);
		emit_u32(b, (uint32_t)imm);
	}
}

/* test dst, imm32 (sign-extended for 64 bit) */
static inline void emit_test_ri(struct jit_buf *b, bool w, int dst, int32_t imm)
{
	emit_rex(b, w, 0, dst, false);
	emit2(b, 0xf7, (uint8_t)(0xc0 | (dst & 7)));
	emit_u32(b, (uint32_t)imm);
}

/* Two-byte-opcode register forms with dst in ModRM.reg: movzx/movsx (0F B6/B7/BE/BF).
 * `byte_src` forces REX so sil/dil are reachable. */
static inline void emit_0f_rr(struct jit_buf *b, uint8_t opc, bool w, int dst, int src,
			      bool byte_src)
{
	emit_rex(b, w, dst, src, byte_src);
	emit2(b, 0x0f, opc);
	emit_modrm_rr(b, dst, src);
}

/* movsxd dst, src32 */
static inline void emit_movsxd_rr(struct jit_buf *b, int dst, int src)
{
	emit_rex(b, true, dst, src, false);
	emit1(b, 0x63);
	emit_modrm_rr(b, dst, src);
}

/* bswap reg (32 or 64 bit) */
static inline void emit_bswap(struct jit_buf *b, bool w, int reg)
{
	emit_rex(b, w, 0, reg, false);
	emit2(b, 0x0f, (uint8_t)(0xc8 + (reg & 7)));
}

/* rol reg16, 8: swaps the two low bytes */
static inline void emit_rol16_8(struct jit_buf *b, int reg)
{
	emit1(b, 0x66);
	emit_shift_ri(b, SH_ROL, false, reg, 8);
}

/* Memory forms.  `size` is the access size in bytes (1, 2, 4, 8). */

/* Legacy prefixes and REX for a memory operand of the given size. */
static inline void emit_mem_prefix(struct jit_buf *b, unsigned size, int reg, int base)
{
	if (size == 2)
		emit1(b, 0x66);
	emit_rex(b, size == 8, reg, base, size == 1);
}

/* mov [base + off], src  (8/16/32/64 bit) */
static inline void emit_store_r(struct jit_buf *b, unsigned size, int base, int32_t off, int src)
{
	emit_mem_prefix(b, size, src, base);
	emit1(b, size == 1 ? 0x88 : 0x89);
	emit_modrm_mem(b, src, base, off);
}

/* mov size ptr [base + off], imm  (the 64-bit form sign-extends imm32) */
static inline void emit_store_i(struct jit_buf *b, unsigned size, int base, int32_t off,
				int32_t imm)
{
	emit_mem_prefix(b, size, 0, base);
	emit1(b, size == 1 ? 0xc6 : 0xc7);
	emit_modrm_mem(b, 0, base, off);
	if (size == 1)
		emit1(b, (uint8_t)imm);
	else if (size == 2)
		emit2(b, (uint8_t)imm, (uint8_t)(imm >> 8));
	else
		emit_u32(b, (uint32_t)imm);
}

/* movbe reg, [base + off] (load) or movbe [base + off], reg (store): a load or store of
 * `size` bytes (2, 4, 8) with the bytes swapped; a 4-byte load zero-extends, a 2-byte one
 * leaves the register's upper bytes alone. */
static inline void emit_movbe(struct jit_buf *b, unsigned size, bool store, int reg, int base,
			      int32_t off)
{
	emit_mem_prefix(b, size, reg, base);
	emit3(b, 0x0f, 0x38, store ? 0xf1 : 0xf0);
	emit_modrm_mem(b, reg, base, off);
}

/* Zero- or sign-extending load of `size` bytes from [base + off] into dst. */
static inline void emit_load(struct jit_buf *b, unsigned size, bool sign, int dst, int base,
			     int32_t off)
{
	if (size == 8 || (size == 4 && !sign)) {
		emit_rex(b, size == 8, dst, base, false); /* mov dst, [base+off] */
		emit1(b, 0x8b);
	} else if (size == 4) {
		emit_rex(b, true, dst, base, false); /* movsxd dst, dword [base+off] */
		emit1(b, 0x63);
	} else {
		/* movzx dst32 / movsx dst64, byte|word [base+off] */
		emit_rex(b, sign, dst, base, false);
		emit2(b, 0x0f, (uint8_t)((sign ? 0xbe : 0xb6) + (size == 2)));
	}
	emit_modrm_mem(b, dst, base, off);
}

/* lea dst, [base + off] */
static inline void emit_lea(struct jit_buf *b, int dst, int base, int32_t off)
{
	emit_rex(b, true, dst, base, false);
	emit1(b, 0x8d);
	emit_modrm_mem(b, dst, base, off);
}

/* lea dst, [base + off] with the result 32 (zero-extended) or 64 bits wide */
static inline void emit_lea_w(struct jit_buf *b, bool w, int dst, int base, int32_t off)
{
	emit_rex(b, w, dst, base, false);
	emit1(b, 0x8d);
	emit_modrm_mem(b, dst, base, off);
}

/* Read-modify-write with a register operand on memory: `opc` is the (two-byte when
 * prefixed by 0x0f) opcode: 01/09/21/31 (add/or/and/xor), 87 (xchg), 0F C1 (xadd),
 * 0F B1 (cmpxchg).  `lock` adds the F0 prefix. */
static inline void emit_rmw(struct jit_buf *b, bool lock, bool two_byte, uint8_t opc, bool w,
			    int base, int32_t off, int reg)
{
	if (lock)
		emit1(b, 0xf0);
	emit_rex(b, w, reg, base, false);
	if (two_byte)
		emit1(b, 0x0f);
	emit1(b, opc);
	emit_modrm_mem(b, reg, base, off);
}

/* cmp qword [base + off], imm8 */
static inline void emit_cmp_mem_i8(struct jit_buf *b, int base, int32_t off, int8_t imm)
{
	emit_rex(b, true, 0, base, false);
	emit1(b, 0x83);
	emit_modrm_mem(b, ALU_CMP, base, off);
	emit1(b, (uint8_t)imm);
}

/* push reg / pop reg */
static inline void emit_push(struct jit_buf *b, int reg)
{
	emit_rex(b, false, 0, reg, false);
	emit1(b, (uint8_t)(0x50 + (reg & 7)));
}

static inline void emit_pop(struct jit_buf *b, int reg)
{
	emit_rex(b, false, 0, reg, false);
	emit1(b, (uint8_t)(0x58 + (reg & 7)));
}

/* call reg */
static inline void emit_call_r(struct jit_buf *b, int reg)
{
	emit_rex(b, false, 0, reg, false);
	emit2(b, 0xff, (uint8_t)(0xd0 | (reg & 7)));
}

static inline void emit_ret(struct jit_buf *b)
{
	emit1(b, 0xc3);
}

/* Padding no path executes (pass align): to the next 16-byte boundary when that takes at
 * most 10 bytes, else to the next 8-byte one, in the fewest recommended long nops (0f 1f
 * forms with 66 prefixes, at most 8 bytes each, so the decoder never sees one longer). */
#define JIT_ALIGN_MAX 15
static inline void emit_align(struct jit_buf *b)
{
	static const uint8_t nops[8][8] = {
		{ 0x90 },
		{ 0x66, 0x90 },
		{ 0x0f, 0x1f, 0x00 },
		{ 0x0f, 0x1f, 0x40, 0x00 },
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};
	size_t pad = (size_t)-b->len & 15;

	if (pad > 10)
		pad = (size_t)-b->len & 7;
	while (pad) {
		size_t k = pad > 8 ? 8 : pad;

		for (size_t i = 0; i < k; i++)
			emit1(b, nops[k - 1][i]);
		pad -= k;
	}
}

/* Relative control transfers.  `from` is the offset of the first byte of the jump; the
 * displacement counts from its end. */
static inline void emit_jmp_rel(struct jit_buf *b, bool is_short, size_t target)
{
	if (is_short) {
		emit2(b, 0xeb, (uint8_t)(int8_t)((int64_t)target - (int64_t)(b->len + 2)));
	} else {
		emit1(b, 0xe9);
		emit_u32(b, (uint32_t)(int32_t)((int64_t)target - (int64_t)(b->len + 4)));
	}
}

static inline void emit_jcc_rel(struct jit_buf *b, enum x86_cc cc, bool is_short, size_t target)
{
	if (is_short) {
		emit2(b, (uint8_t)(0x70 | cc),
		      (uint8_t)(int8_t)((int64_t)target - (int64_t)(b->len + 2)));
	} else {
		emit2(b, 0x0f, (uint8_t)(0x80 | cc));
		emit_u32(b, (uint32_t)(int32_t)((int64_t)target - (int64_t)(b->len + 4)));
	}
}

static inline void emit_call_rel(struct jit_buf *b, size_t target)
{
	emit1(b, 0xe8);
	emit_u32(b, (uint32_t)(int32_t)((int64_t)target - (int64_t)(b->len + 4)));
}

/* Forward short jumps inside one instruction's expansion: emit with a zero
 * displacement, then patch once the target is reached. */
static inline size_t emit_jcc8_fwd(struct jit_buf *b, enum x86_cc cc)
{
	emit2(b, (uint8_t)(0x70 | cc), 0);
	return b->len;
}

static inline size_t emit_jmp8_fwd(struct jit_buf *b)
{
	emit2(b, 0xeb, 0);
	return b->len;
}

/* Point the rel8 jump that ended at `end` to the current position. */
static inline void patch8_here(struct jit_buf *b, size_t end)
{
	b->p[end - 1] = (uint8_t)(b->len - end);
}

#endif
