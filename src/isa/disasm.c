/* disasm.c - one instruction to text, in two styles: the Linux verifier log's
 * ("(bf) r0 = r2", "(85) call bpf_map_lookup_elem#1"; checked against a real kernel by
 * tests/isa/test_disasm_oracle.c) and the conformance assembly syntax that brt_asm()
 * reads back to the same bytes.  The row comes from brt_isa_decode(), so only what
 * insn.def lists is printed; the per-shape printers below choose the layout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "bpfrt.h"
#include "isa/isa.h"


/* The verifier log's operator for each BPF_OP value (ALU and atomics share it, and the
 * verifier's messages about pointer arithmetic name operators with it, "neg" and "endian"
 * included, as the kernel's bpf_alu_string[]). */
static const char *const alu_sym[16] = {
	[BPF_ADD >> 4] = "+=", [BPF_SUB >> 4] = "-=",	[BPF_MUL >> 4] = "*=",
	[BPF_DIV >> 4] = "/=", [BPF_OR >> 4] = "|=",	[BPF_AND >> 4] = "&=",
	[BPF_LSH >> 4] = "<<=", [BPF_RSH >> 4] = ">>=", [BPF_NEG >> 4] = "neg",
	[BPF_MOD >> 4] = "%=", [BPF_XOR >> 4] = "^=",	[BPF_MOV >> 4] = "=",
	[BPF_ARSH >> 4] = "s>>=", [BPF_END >> 4] = "endian",
};

const char *brt_isa_alu_sym(uint8_t op)
{
	return alu_sym[BPF_OP(op) >> 4];
}

static const char *const jmp_sym[16] = {
	[BPF_JEQ >> 4] = "==",	[BPF_JGT >> 4] = ">",	[BPF_JGE >> 4] = ">=",
	[BPF_JSET >> 4] = "&",	[BPF_JNE >> 4] = "!=",	[BPF_JSGT >> 4] = "s>",
	[BPF_JSGE >> 4] = "s>=", [BPF_JLT >> 4] = "<",	[BPF_JLE >> 4] = "<=",
	[BPF_JSLT >> 4] = "s<", [BPF_JSLE >> 4] = "s<=",
};

/* Names of the atomic operations in "atomic_fetch_<op>". */
static const char *const atomic_name[16] = {
	[BPF_ADD >> 4] = "add", [BPF_OR >> 4] = "or", [BPF_AND >> 4] = "and",
	[BPF_XOR >> 4] = "xor",
};

/* A bounded output buffer: appends never overflow; overflow is remembered. */
struct out {
	char *buf;
	size_t len, pos;
	int truncated;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	size_t room = o->pos < o->len ? o->len - o->pos : 0;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (k < 0)
		k = 0;
	if ((size_t)k >= room)
		o->truncated = 1;
	o->pos += (size_t)k;
}

static const char *size_name(uint8_t code, int sign)
{
	switch (BPF_SIZE(code)) {
	case BPF_B:
		return sign ? "s8" : "u8";
	case BPF_H:
		return sign ? "s16" : "u16";
	case BPF_W:
		return sign ? "s32" : "u32";
	default:
		return "u64";
	}
}

static uint64_t lddw_value(const struct bpf_insn *insn)
{
	return (uint64_t)(uint32_t)insn[1].imm << 32 | (uint32_t)insn[0].imm;
}

/* ---- kernel verifier-log style -------------------------------------------------------- */

static void kernel_alu(struct out *o, const struct bpf_insn *insn, const struct brt_opinfo *info)
{
	char r = BPF_CLASS(insn->code) == BPF_ALU ? 'w' : 'r';
	const char *sym = alu_sym[BPF_OP(insn->code) >> 4];
	const char *sx = "";

	if (info->disc == BRT_DISC_OFF && insn->off == 1)
		sym = BPF_OP(insn->code) == BPF_DIV ? "s/=" : "s%=";
	/* the kernel's is_movsx(): other offsets print a plain mov */
	if (BPF_OP(insn->code) == BPF_MOV && (insn->off == 8 || insn->off == 16 || insn->off == 32))
		sx = insn->off == 8 ? "(s8)" : insn->off == 16 ? "(s16)" : "(s32)";
	if (info->shape == BRT_SHAPE_ALU_REG)
		put(o, "%c%u %s %s%c%u", r, insn->dst_reg, sym, sx, r, insn->src_reg);
	else
		put(o, "%c%u %s %d", r, insn->dst_reg, sym, insn->imm);
}

static void kernel_atomic(struct out *o, const struct bpf_insn *insn)
{
	const char *sz = size_name(insn->code, 0);
	const char *w = BPF_SIZE(insn->code) == BPF_DW ? "64" : "";
	int op = insn->imm & ~BPF_FETCH;

	if (insn->imm == BPF_CMPXCHG)
		put(o, "r0 = atomic%s_cmpxchg((%s *)(r%u %+d), r0, r%u)", w, sz, insn->dst_reg,
		    insn->off, insn->src_reg);
	else if (insn->imm == BPF_XCHG)
		put(o, "r%u = atomic%s_xchg((%s *)(r%u %+d), r%u)", insn->src_reg, w, sz,
		    insn->dst_reg, insn->off, insn->src_reg);
	else if (insn->imm & BPF_FETCH)
		put(o, "r%u = atomic%s_fetch_%s((%s *)(r%u %+d), r%u)", insn->src_reg, w,
		    atomic_name[op >> 4], sz, insn->dst_reg, insn->off, insn->src_reg);
	else
		put(o, "lock *(%s *)(r%u %+d) %s r%u", sz, insn->dst_reg, insn->off,
		    alu_sym[op >> 4], insn->src_reg);
}

static void kernel_jump(struct out *o, const struct bpf_insn *insn, const struct brt_opinfo *info)
{
	char r = BPF_CLASS(insn->code) == BPF_JMP32 ? 'w' : 'r';
	const char *sym = jmp_sym[BPF_OP(insn->code) >> 4];

	if (info->shape == BRT_SHAPE_JMP_REG)
		put(o, "if %c%u %s %c%u goto pc%+d", r, insn->dst_reg, sym, r, insn->src_reg,
		    insn->off);
	else
		put(o, "if %c%u %s 0x%x goto pc%+d", r, insn->dst_reg, sym, (uint32_t)insn->imm,
		    insn->off);
}

/* Map references print as bpftool does (map[id:N], the value form with [0]+off): the kernel
 * log shows the map's address there, which means nothing outside the kernel. */
static void kernel_lddw(struct out *o, const struct bpf_insn *insn)
{
	switch (insn->src_reg) {
	case BPF_PSEUDO_MAP_FD:
	case BPF_PSEUDO_MAP_IDX:
		put(o, "r%u = map[id:%d]", insn->dst_reg, insn->imm);
		break;
	case BPF_PSEUDO_MAP_VALUE:
	case BPF_PSEUDO_MAP_IDX_VALUE:
		put(o, "r%u = map[id:%d][0]+%d", insn->dst_reg, insn->imm, insn[1].imm);
		break;
	default:
		put(o, "r%u = 0x%llx", insn->dst_reg, (unsigned long long)lddw_value(insn));
		break;
	}
}

static void kernel_style(struct out *o, const struct bpf_insn *insn, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	const char *name;

	put(o, "(%02x) ", insn->code);
	switch ((enum brt_shape)info->shape) {
	case BRT_SHAPE_ALU_IMM:
	case BRT_SHAPE_ALU_REG:
		kernel_alu(o, insn, info);
		break;
	case BRT_SHAPE_ALU_UNARY: {
		char r = BPF_CLASS(insn->code) == BPF_ALU ? 'w' : 'r';

		put(o, "%c%u = -%c%u", r, insn->dst_reg, r, insn->dst_reg);
		break;
	}
	case BRT_SHAPE_ENDIAN:
		/* the kernel writes r even for the 32-bit class here */
		put(o, "r%u = %s%d r%u", insn->dst_reg,
		    BPF_CLASS(insn->code) == BPF_ALU64	   ? "bswap"
		    : BPF_SRC(insn->code) == BPF_TO_BE ? "be"
						       : "le",
		    insn->imm, insn->dst_reg);
		break;
	case BRT_SHAPE_LOAD:
		put(o, "r%u = *(%s *)(r%u %+d)", insn->dst_reg,
		    size_name(insn->code, BPF_MODE(insn->code) == BRT_MEMSX), insn->src_reg,
		    insn->off);
		break;
	case BRT_SHAPE_STORE_IMM:
		put(o, "*(%s *)(r%u %+d) = %d", size_name(insn->code, 0), insn->dst_reg, insn->off,
		    insn->imm);
		break;
	case BRT_SHAPE_STORE_REG:
		put(o, "*(%s *)(r%u %+d) = r%u", size_name(insn->code, 0), insn->dst_reg,
		    insn->off, insn->src_reg);
		break;
	case BRT_SHAPE_ATOMIC:
		kernel_atomic(o, insn);
		break;
	case BRT_SHAPE_LDDW:
		kernel_lddw(o, insn);
		break;
	case BRT_SHAPE_LD_ABS:
		put(o, "r0 = *(%s *)skb[%d]", size_name(insn->code, 0), insn->imm);
		break;
	case BRT_SHAPE_LD_IND:
		put(o, "r0 = *(%s *)skb[r%u + %d]", size_name(insn->code, 0), insn->src_reg,
		    insn->imm);
		break;
	case BRT_SHAPE_JA:
		put(o, "goto pc%+d", insn->off);
		break;
	case BRT_SHAPE_JA32:
		put(o, "gotol pc%+d", insn->imm);
		break;
	case BRT_SHAPE_MAY_GOTO:
		put(o, "may_goto pc%+d", insn->off);
		break;
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
		kernel_jump(o, insn, info);
		break;
	case BRT_SHAPE_CALL:
		name = brt_isa_helper_name(insn->imm);
		put(o, "call %s#%d", name ? name : "unknown", insn->imm);
		break;
	case BRT_SHAPE_CALL_LOCAL:
		put(o, "call pc%+d", insn->imm);
		break;
	case BRT_SHAPE_CALLX:
		/* Linux has no callx; LLVM's spelling */
		put(o, "callx r%u", insn->dst_reg);
		break;
	case BRT_SHAPE_EXIT:
		put(o, "exit");
		break;
	}
}

/* ---- conformance assembly style -------------------------------------------------------- */

/* Small immediates in decimal, large ones in hex (brt_asm() reads 0x80000000 as INT32_MIN). */
static void put_imm(struct out *o, int32_t imm)
{
	if (imm >= -1000000 && imm <= 1000000)
		put(o, "%d", imm);
	else
		put(o, "0x%x", (uint32_t)imm);
}

static void asm_lddw(struct out *o, const struct bpf_insn *insn)
{
	const char *kind = brt_isa_pseudo_name(insn->src_reg);

	put(o, "lddw %%r%u, ", insn->dst_reg);
	if (!kind) {
		put(o, "0x%llx", (unsigned long long)lddw_value(insn));
		return;
	}
	if (insn->src_reg == BPF_PSEUDO_FUNC)
		put(o, "func %+d", insn->imm);
	else
		put(o, "%s %d", kind, insn->imm);
	if (insn[1].imm || insn->src_reg == BPF_PSEUDO_MAP_VALUE ||
	    insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE)
		put(o, " %d", insn[1].imm);
}

static void asm_style(struct out *o, const struct bpf_insn *insn, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];

	if (info->shape == BRT_SHAPE_LDDW) {
		asm_lddw(o, insn);
		return;
	}
	put(o, "%s", info->mnem);
	switch ((enum brt_shape)info->shape) {
	case BRT_SHAPE_ALU_IMM:
		put(o, " %%r%u, ", insn->dst_reg);
		put_imm(o, insn->imm);
		break;
	case BRT_SHAPE_ALU_REG:
		put(o, " %%r%u, %%r%u", insn->dst_reg, insn->src_reg);
		break;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
	case BRT_SHAPE_CALLX:
		put(o, " %%r%u", insn->dst_reg);
		break;
	case BRT_SHAPE_LOAD:
		put(o, " %%r%u, [%%r%u%+d]", insn->dst_reg, insn->src_reg, insn->off);
		break;
	case BRT_SHAPE_STORE_IMM:
		put(o, " [%%r%u%+d], ", insn->dst_reg, insn->off);
		put_imm(o, insn->imm);
		break;
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_ATOMIC:
		put(o, " [%%r%u%+d], %%r%u", insn->dst_reg, insn->off, insn->src_reg);
		break;
	case BRT_SHAPE_LDDW: /* above */
		break;
	case BRT_SHAPE_LD_ABS:
	case BRT_SHAPE_CALL:
		put(o, " ");
		put_imm(o, insn->imm);
		break;
	case BRT_SHAPE_LD_IND:
		put(o, " %%r%u, ", insn->src_reg);
		put_imm(o, insn->imm);
		break;
	case BRT_SHAPE_JA:
	case BRT_SHAPE_MAY_GOTO:
		put(o, " %+d", insn->off);
		break;
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_CALL_LOCAL:
		put(o, " %+d", insn->imm);
		break;
	case BRT_SHAPE_JMP_IMM:
		put(o, " %%r%u, ", insn->dst_reg);
		put_imm(o, insn->imm);
		put(o, ", %+d", insn->off);
		break;
	case BRT_SHAPE_JMP_REG:
		put(o, " %%r%u, %%r%u, %+d", insn->dst_reg, insn->src_reg, insn->off);
		break;
	case BRT_SHAPE_EXIT:
		break;
	}
}

int brt_disasm_insn(const struct bpf_insn *insn, size_t avail, enum brt_disasm_style style,
		    char *buf, size_t buflen)
{
	struct out o = { buf, buflen, 0, 0 };
	const char *why = "no instruction";
	enum brt_op op = BRT_OP_INVALID;

	if (avail)
		op = brt_isa_decode(insn, avail, &why);
	if (op == BRT_OP_INVALID) {
		if (avail)
			put(&o, "invalid: %s (code 0x%02x dst r%u src r%u off %d imm %d)", why,
			    insn->code, insn->dst_reg, insn->src_reg, insn->off, insn->imm);
		else
			put(&o, "invalid: %s", why);
		return -EINVAL;
	}
	if (style == BRT_DISASM_KERNEL)
		kernel_style(&o, insn, op);
	else
		asm_style(&o, insn, op);
	if (o.truncated)
		return -ENOSPC;
	return brt_ops[op].shape == BRT_SHAPE_LDDW ? 2 : 1;
}

int brt_disasm_kernel_unchecked(const struct bpf_insn *insn, size_t avail, char *buf,
				size_t buflen)
{
	struct out o = { buf, buflen, 0, 0 };
	enum brt_op op = brt_isa_lookup(insn);
	uint8_t cls = BPF_CLASS(insn->code);

	if (!avail)
		return -EINVAL;
	/* an instruction whose discriminator no row has prints as its opcode byte's row for
	 * discriminator 0, else its first (the kernel's printer looks at the opcode and
	 * only the offsets it knows: mov with off 3 is a plain mov), but for atomics, which
	 * it names by their imm */
	if (op == BRT_OP_INVALID && !(cls == BPF_STX && BPF_MODE(insn->code) == BPF_ATOMIC))
		for (unsigned i = 0; i < BRT_OP_COUNT; i++)
			if (brt_ops[i].opcode == insn->code &&
			    (op == BRT_OP_INVALID || !brt_ops[i].disc_val))
				op = (enum brt_op)i;
	if (op != BRT_OP_INVALID && (brt_ops[op].shape != BRT_SHAPE_LDDW || avail >= 2)) {
		kernel_style(&o, insn, op);
		return o.truncated ? -ENOSPC : 1;
	}
	switch (cls) {
	case BPF_STX:
		put(&o, "BUG_%02x", insn->code);
		break;
	case BPF_ST:
		put(&o, "BUG_st_%02x", insn->code);
		break;
	case BPF_LDX:
		put(&o, "BUG_ldx_%02x", insn->code);
		break;
	case BPF_LD:
		put(&o, "BUG_ld_%02x", insn->code);
		break;
	default:
		put(&o, "(%02x) ?", insn->code);
		break;
	}
	return o.truncated ? -ENOSPC : 1;
}

int bpfrt_disasm_insn(const struct bpf_insn *insn, size_t avail,
		      enum bpfrt_disasm_style style, char *buf, size_t buflen)
{
	int ret;

	if (!insn || (!buf && buflen) ||
	    (style != BPFRT_DISASM_KERNEL && style != BPFRT_DISASM_ASM)) {
		ret = -EINVAL;
		if (buflen && buf)
			snprintf(buf, buflen, "invalid: bad argument");
	} else {
		ret = brt_disasm_insn(insn, avail,
				      style == BPFRT_DISASM_KERNEL ? BRT_DISASM_KERNEL
								   : BRT_DISASM_ASM,
				      buf, buflen);
	}
	if (ret < 0)
		errno = -ret;
	return ret;
}
