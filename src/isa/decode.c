/* decode.c - from instruction bytes to a row of the opcode table (insn.def), and the
 * per-instruction field rules: which fields a shape uses, and that the rest are zero.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "isa/isa.h"

const struct brt_opinfo brt_ops[BRT_OP_COUNT] = {
#define INSN(id_, opc, dk, dv, shape_, mnem_, grp, ver)                                         \
	[BRT_OP_##id_] = { .id = #id_,                                                          \
			   .mnem = mnem_,                                                       \
			   .opcode = (opc),                                                     \
			   .disc = BRT_DISC_##dk,                                               \
			   .disc_val = (dv),                                                    \
			   .shape = BRT_SHAPE_##shape_,                                         \
			   .group = BRT_GROUP_##grp,                                            \
			   .version = (ver) },
#include "isa/insn.def"
#undef INSN
};

const char *const brt_group_names[BRT_GROUP_COUNT] = {
	[BRT_GROUP_base32] = "base32",	   [BRT_GROUP_base64] = "base64",
	[BRT_GROUP_atomic32] = "atomic32", [BRT_GROUP_atomic64] = "atomic64",
	[BRT_GROUP_divmul32] = "divmul32", [BRT_GROUP_divmul64] = "divmul64",
	[BRT_GROUP_packet] = "packet",	   [BRT_GROUP_callx] = "callx",
};

/* Rows sharing an opcode byte are chained so lookup touches only the candidates. */
static uint16_t head[256];
static uint16_t next_row[BRT_OP_COUNT];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void build_index(void)
{
	for (unsigned i = 0; i < 256; i++)
		head[i] = BRT_OP_INVALID;
	for (int op = BRT_OP_COUNT - 1; op >= 0; op--) {
		next_row[op] = head[brt_ops[op].opcode];
		head[brt_ops[op].opcode] = (uint16_t)op;
	}
}

unsigned brt_isa_access_size(uint8_t opcode)
{
	switch (BPF_CLASS(opcode)) {
	case BPF_LD:
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		switch (BPF_SIZE(opcode)) {
		case BPF_B:
			return 1;
		case BPF_H:
			return 2;
		case BPF_W:
			return 4;
		default:
			return 8;
		}
	default:
		return 0;
	}
}

static int disc_matches(const struct brt_opinfo *info, const struct bpf_insn *insn)
{
	switch (info->disc) {
	case BRT_DISC_OFF:
		return insn->off == info->disc_val;
	case BRT_DISC_IMM:
		return insn->imm == info->disc_val;
	case BRT_DISC_SRC:
		return insn->src_reg == info->disc_val;
	default:
		return 1;
	}
}

enum brt_op brt_isa_lookup(const struct bpf_insn *insn)
{
	pthread_once(&index_once, build_index);
	for (unsigned op = head[insn->code]; op != BRT_OP_INVALID; op = next_row[op])
		if (disc_matches(&brt_ops[op], insn))
			return (enum brt_op)op;
	return BRT_OP_INVALID;
}

/* Field-use masks per shape: a set bit means the field carries an operand. */
enum { F_DST = 1, F_SRC = 2, F_OFF = 4, F_IMM = 8, F_WDST = 16 /* dst is written */ };

static const uint8_t shape_fields[] = {
	[BRT_SHAPE_ALU_IMM] = F_DST | F_IMM | F_WDST,
	[BRT_SHAPE_ALU_REG] = F_DST | F_SRC | F_WDST,
	[BRT_SHAPE_ALU_UNARY] = F_DST | F_WDST,
	[BRT_SHAPE_ENDIAN] = F_DST | F_WDST,
	[BRT_SHAPE_LOAD] = F_DST | F_SRC | F_OFF | F_WDST,
	[BRT_SHAPE_STORE_IMM] = F_DST | F_OFF | F_IMM,
	[BRT_SHAPE_STORE_REG] = F_DST | F_SRC | F_OFF,
	[BRT_SHAPE_ATOMIC] = F_DST | F_SRC | F_OFF,
	[BRT_SHAPE_LDDW] = F_DST | F_SRC | F_IMM | F_WDST,
	[BRT_SHAPE_LD_ABS] = F_IMM,
	[BRT_SHAPE_LD_IND] = F_SRC | F_IMM,
	[BRT_SHAPE_JA] = F_OFF,
	[BRT_SHAPE_JA32] = F_IMM,
	[BRT_SHAPE_MAY_GOTO] = F_OFF,
	[BRT_SHAPE_JMP_IMM] = F_DST | F_IMM | F_OFF,
	[BRT_SHAPE_JMP_REG] = F_DST | F_SRC | F_OFF,
	[BRT_SHAPE_CALL] = F_IMM,
	[BRT_SHAPE_CALL_LOCAL] = F_IMM,
	[BRT_SHAPE_CALLX] = F_DST,
	[BRT_SHAPE_EXIT] = 0,
};

static const char *check_fields(const struct brt_opinfo *info, const struct bpf_insn *insn)
{
	unsigned used = shape_fields[info->shape];

	/* the discriminating field is "used": its value selected the row */
	if (info->disc == BRT_DISC_OFF)
		used |= F_OFF;
	else if (info->disc == BRT_DISC_IMM)
		used |= F_IMM;
	else if (info->disc == BRT_DISC_SRC)
		used |= F_SRC;

	if (!(used & F_DST) && insn->dst_reg)
		return "reserved field dst_reg is not 0";
	if (!(used & F_SRC) && insn->src_reg)
		return "reserved field src_reg is not 0";
	if (!(used & F_OFF) && insn->off)
		return "reserved field off is not 0";
	if (!(used & F_IMM) && insn->imm)
		return "reserved field imm is not 0";
	if (insn->dst_reg >= BRT_MAX_REGS)
		return "invalid dst register";
	if (info->disc != BRT_DISC_SRC && insn->src_reg >= BRT_MAX_REGS)
		return "invalid src register";
	if ((used & F_WDST) && insn->dst_reg == BPF_REG_10)
		return "frame pointer r10 is read only";
	return NULL;
}

static const char *check_lddw(const struct bpf_insn *insn, size_t avail)
{
	if (avail < 2)
		return "lddw is missing its second slot";
	if (insn->off)
		return "reserved field off is not 0";
	if (insn[1].code || insn[1].dst_reg || insn[1].src_reg || insn[1].off)
		return "second slot of lddw has non-zero fields";
	if (insn->src_reg > BPF_PSEUDO_MAP_IDX_VALUE)
		return "unknown lddw pseudo source";
	if (insn->dst_reg >= BRT_MAX_REGS)
		return "invalid dst register";
	if (insn->dst_reg == BPF_REG_10)
		return "frame pointer r10 is read only";
	return NULL;
}

enum brt_op brt_isa_decode(const struct bpf_insn *insn, size_t avail, const char **reason)
{
	enum brt_op op = brt_isa_lookup(insn);
	const char *why;

	*reason = NULL;
	if (op == BRT_OP_INVALID) {
		*reason = "unknown opcode";
		return op;
	}
	if (brt_ops[op].shape == BRT_SHAPE_LDDW)
		why = check_lddw(insn, avail);
	else
		why = check_fields(&brt_ops[op], insn);
	/* fetch forms write the old value back into src */
	if (!why && brt_ops[op].shape == BRT_SHAPE_ATOMIC && (insn->imm & BPF_FETCH) &&
	    insn->src_reg == BPF_REG_10)
		why = "frame pointer r10 is read only";
	if (why) {
		*reason = why;
		return BRT_OP_INVALID;
	}
	return op;
}

int64_t brt_isa_jump_target(const struct bpf_insn *insn, enum brt_op op, size_t pc)
{
	switch (brt_ops[op].shape) {
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_CALL_LOCAL:
		return (int64_t)pc + 1 + insn->imm;
	default:
		return (int64_t)pc + 1 + insn->off;
	}
}

uint64_t brt_isa_lddw_value(const struct bpf_insn *insn, size_t pc)
{
	if (insn->src_reg == BPF_PSEUDO_FUNC)
		return (uint64_t)((int64_t)pc + 1 + insn->imm);
	return (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;
}

int brt_isa_has_target(enum brt_op op)
{
	switch (brt_ops[op].shape) {
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_MAY_GOTO:
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
	case BRT_SHAPE_CALL_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* Registers by shape.  Implicit operands are the ISA's: exit returns r0; cmpxchg compares
 * with r0 and loads into it; fetch forms load into src; packet loads read the context in
 * r6 and, like calls, leave r0-r5 clobbered; calls pass r1-r5 (a helper may read fewer:
 * its prototype says, which only the verifier knows). */
#define BIT(r) ((uint16_t)(1u << (r)))
#define R0_R5 ((uint16_t)0x3f)
#define R1_R5 ((uint16_t)0x3e)

enum brt_op brt_isa_regs(const struct bpf_insn *insn, struct brt_isa_regs *r)
{
	return brt_isa_regs_op(insn, brt_isa_lookup(insn), r);
}

void brt_isa_lookup_prog(const struct bpf_insn *insns, size_t n, uint16_t *ops)
{
	for (size_t pc = 0; pc < n; pc++)
		ops[pc] = (uint16_t)brt_isa_lookup(&insns[pc]);
}

enum brt_op brt_isa_regs_op(const struct bpf_insn *insn, enum brt_op op, struct brt_isa_regs *r)
{
	uint16_t d = BIT(insn->dst_reg), s = BIT(insn->src_reg);
	int mov;

	*r = (struct brt_isa_regs){ 0 };
	/* a discriminator no row has: the registers of the opcode byte's first row (the
	 * shape is the same for every row of a byte but call/call local, whose registers
	 * agree) */
	if (op == BRT_OP_INVALID)
		op = (enum brt_op)head[insn->code];
	if (op == BRT_OP_INVALID)
		return op;
	mov = BPF_OP(brt_ops[op].opcode) == BPF_MOV;
	switch (brt_ops[op].shape) {
	case BRT_SHAPE_ALU_IMM:
		r->named = d;
		r->def = d;
		r->use = r->flow = mov ? 0 : d;
		break;
	case BRT_SHAPE_ALU_REG:
		r->named = d | s;
		r->def = d;
		r->use = r->flow = mov ? s : (uint16_t)(d | s);
		break;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
		r->named = r->use = r->def = r->flow = d;
		break;
	case BRT_SHAPE_LOAD:
		r->named = d | s;
		r->use = s;
		r->def = d;
		break;
	case BRT_SHAPE_STORE_IMM:
	case BRT_SHAPE_JMP_IMM:
		r->named = r->use = d;
		break;
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_JMP_REG:
		r->named = r->use = d | s;
		break;
	case BRT_SHAPE_ATOMIC:
		/* the operation is in imm (the rows' discriminator) */
		r->named = r->use = d | s;
		if (insn->imm == BPF_CMPXCHG) {
			r->use |= BIT(BPF_REG_0);
			r->def = BIT(BPF_REG_0);
		} else if (insn->imm & BPF_FETCH) {
			r->def = s;
		}
		break;
	case BRT_SHAPE_LDDW: /* src_reg is a kind, not a register */
		r->named = r->def = d;
		break;
	case BRT_SHAPE_LD_IND:
		r->named = s;
		r->use = s;
		__attribute__((fallthrough));
	case BRT_SHAPE_LD_ABS:
		r->use |= BIT(BPF_REG_6);
		r->def = R0_R5;
		break;
	case BRT_SHAPE_CALL:
	case BRT_SHAPE_CALL_LOCAL:
		r->use = R1_R5;
		r->def = R0_R5;
		break;
	case BRT_SHAPE_CALLX: /* the function's address in dst */
		r->named = d;
		r->use = d | R1_R5;
		r->def = R0_R5;
		break;
	case BRT_SHAPE_EXIT:
		r->use = BIT(BPF_REG_0);
		break;
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_MAY_GOTO:
		break;
	}
	return op;
}

static int decode_all(const struct bpf_insn *insns, size_t n, uint16_t *ops, char *err,
		      size_t errlen)
{
	const char *why;

	for (size_t pc = 0; pc < n; pc++) {
		enum brt_op op = brt_isa_decode(&insns[pc], n - pc, &why);

		if (op == BRT_OP_INVALID) {
			snprintf(err, errlen,
				 "insn %zu: %s (code 0x%02x dst r%u src r%u off %d imm %d)", pc,
				 why, insns[pc].code, insns[pc].dst_reg, insns[pc].src_reg,
				 insns[pc].off, insns[pc].imm);
			return -EINVAL;
		}
		ops[pc] = (uint16_t)op;
		if (op == BRT_OP_lddw)
			ops[++pc] = BRT_OP_INVALID;
	}
	return 0;
}

/* ops: decode_all()'s rows; BRT_OP_INVALID only on second slots of lddw */
static int check_targets(const struct bpf_insn *insns, size_t n, const uint16_t *ops,
			 char *err, size_t errlen)
{
	for (size_t pc = 0; pc < n; pc++) {
		enum brt_op op = (enum brt_op)ops[pc];
		int64_t t;

		if (op == BRT_OP_INVALID)
			continue;
		if (op == BRT_OP_lddw && insns[pc].src_reg == BPF_PSEUDO_FUNC)
			t = (int64_t)brt_isa_lddw_value(&insns[pc], pc); /* a function address */
		else if (!brt_isa_has_target(op))
			continue;
		else
			t = brt_isa_jump_target(&insns[pc], op, pc);
		if (t < 0 || (uint64_t)t >= n) {
			snprintf(err, errlen, "insn %zu: jump out of range to insn %lld", pc,
				 (long long)t);
			return -EINVAL;
		}
		if (ops[t] == BRT_OP_INVALID) {
			snprintf(err, errlen, "insn %zu: jump into the middle of lddw at insn %lld",
				 pc, (long long)t - 1);
			return -EINVAL;
		}
	}
	return 0;
}

int brt_isa_decode_prog(const struct bpf_insn *insns, size_t n, size_t max_insns,
			uint16_t *ops, char *err, size_t errlen)
{
	int ret;

	if (n == 0) {
		snprintf(err, errlen, "program is empty");
		return -EINVAL;
	}
	if (n > max_insns) {
		snprintf(err, errlen, "program has %zu instructions, more than the limit of %zu", n,
			 max_insns);
		return -E2BIG;
	}
	ret = decode_all(insns, n, ops, err, errlen);
	if (!ret)
		ret = check_targets(insns, n, ops, err, errlen);
	return ret;
}

int brt_isa_check_prog(const struct bpf_insn *insns, size_t n, size_t max_insns, char *err,
		       size_t errlen)
{
	uint16_t *ops;
	int ret;

	if (n == 0 || n > max_insns)
		return brt_isa_decode_prog(insns, n, max_insns, NULL, err, errlen);
	ops = malloc(n * sizeof(*ops));
	if (!ops) {
		snprintf(err, errlen, "out of memory checking %zu instructions", n);
		return -ENOMEM;
	}
	ret = brt_isa_decode_prog(insns, n, max_insns, ops, err, errlen);
	free(ops);
	return ret;
}

/* Must-be-written registers, forward over the control flow: a register is written before
 * insn pc when it is written on every path from the entry (or from a local call's target,
 * which starts with the caller's r1-r5 and r10).  A helper or local call reads whatever
 * arguments it takes, which is unknown here, so only what it writes counts: r0, and
 * r1-r5 become unwritten. */
int brt_isa_check_init_regs(const struct bpf_insn *insns, size_t n, uint16_t entry, char *err,
			    size_t errlen)
{
	uint16_t *ops = NULL, *in = NULL;
	uint32_t *work = NULL;
	uint8_t *seen = NULL, *queued = NULL;
	size_t nwork = 0;
	int ret;

	ret = brt_isa_check_prog(insns, n, n ? n : 1, err, errlen);
	if (ret)
		return ret;
	ops = malloc(n * sizeof(*ops));
	in = malloc(n * sizeof(*in));
	work = malloc(n * sizeof(*work));
	seen = calloc(n, 1);
	queued = calloc(n, 1);
	if (!ops || !in || !work || !seen || !queued) {
		snprintf(err, errlen, "out of memory checking %zu instructions", n);
		ret = -ENOMEM;
		goto out;
	}
	brt_isa_decode_prog(insns, n, n, ops, err, errlen);
#define FLOW(to, mask)                                                                   \
	do {                                                                             \
		size_t t_ = (to);                                                        \
		uint16_t m_ = (uint16_t)(mask);                                          \
		if (t_ < n && (!seen[t_] || (in[t_] & m_) != in[t_])) {                  \
			in[t_] = seen[t_] ? (uint16_t)(in[t_] & m_) : m_;                \
			seen[t_] = 1;                                                    \
			if (!queued[t_]) {                                               \
				queued[t_] = 1;                                          \
				work[nwork++] = (uint32_t)t_;                            \
			}                                                                \
		}                                                                        \
	} while (0)
	FLOW(0, entry | 1u << 10);
	while (nwork) {
		size_t pc = work[--nwork];
		const struct bpf_insn *insn = &insns[pc];
		enum brt_op op = (enum brt_op)ops[pc];
		struct brt_isa_regs r;
		uint8_t cls = BPF_CLASS(insn->code);
		uint16_t have = in[pc], out;
		int is_call = (cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(insn->code) == BPF_CALL;

		queued[pc] = 0;
		brt_isa_regs_op(insn, op, &r);
		if (is_call)
			r.use = 0;
		if (r.use & ~have) {
			int reg = __builtin_ctz((unsigned)(r.use & ~have));

			snprintf(err, errlen, "insn %zu: r%d is read before it is written", pc, reg);
			ret = -EINVAL;
			goto out;
		}
		if (is_call) {
			out = (uint16_t)((have & ~0x3eu) | 1u);
			if (insn->src_reg == BPF_PSEUDO_CALL)
				FLOW((size_t)brt_isa_jump_target(insn, op, pc), (have & 0x3eu) | 1u << 10);
			FLOW(pc + 1, out);
			continue;
		}
		out = (uint16_t)(have | r.def);
		if (cls == BPF_JMP && BPF_OP(insn->code) == BPF_EXIT)
			continue;
		if (brt_isa_has_target(op))
			FLOW((size_t)brt_isa_jump_target(insn, op, pc), out);
		if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(insn->code) == BPF_JA)
			continue;
		FLOW(pc + (insn->code == (BPF_LD | BPF_IMM | BPF_DW) ? 2 : 1), out);
	}
#undef FLOW
	ret = 0;
out:
	free(ops);
	free(in);
	free(work);
	free(seen);
	free(queued);
	return ret;
}
