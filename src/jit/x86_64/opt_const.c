/* opt_const.c - passes rodata and constjump (passes.def): constants the program's own
 * instructions and its frozen read-only map values decide, used where clang's code for
 * `const volatile` configuration (Cilium's and libbpf-tools' .rodata flags) tests them.
 *
 * rodata: a load at an address opt.c's constant dataflow knows, inside a frozen read-only
 * map value (struct brt_jit_rodata: BPF_F_RDONLY_PROG + BPF_MAP_FREEZE before the load, so
 * neither the program nor bpf() can change a byte of it while the program exists), is the
 * value's bytes read at compile time: an immediate move, and a known register for the
 * dataflow from there on (brt_jit_const_eval, which opt.c's cstep() asks).  The verifier
 * reads these values as constants too (verifier/memory.c rodata_read).  Not an immediate
 * under constant blinding (the value would appear verbatim): the load stays, the
 * dataflow still knows its value.
 *
 * constjump: with ALU operations on known operands evaluated too, a conditional jump
 * whose operands are both known is decided: never taken, it emits nothing; always taken
 * (forward: a backward one may carry the run budget's charge), it is a jmp, or nothing
 * when only dropped code lies between.  Then the instructions no path reaches from a
 * function's entry are not emitted, and neither are pure instructions (ALU operations,
 * constant lddw's, rodata's immediates) whose register no path reads any more: the
 * decided jumps no longer read theirs, rodata's loads no longer their address (a
 * backward liveness over the jumps as decided).  Everything is proved from the
 * instructions (and the frozen bytes), not from the verifier, so it holds for unverified
 * programs too.  The kernel's verifier removes the same code after reading .rodata
 * (opt_hard_wire_dead_code_branches(), opt_remove_dead_code()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit/x86_64/opt.h"
#include "util/util.h"

/* --- values ----------------------------------------------------------------------------- */

/* The size bytes at addr, when they lie inside one frozen read-only range. */
static bool rodata_bytes(const struct jit_state *st, uint64_t addr, unsigned size, uint64_t *v)
{
	for (size_t i = 0; i < st->env->nrodata; i++) {
		const struct brt_jit_rodata *r = &st->env->rodata[i];
		if (addr < r->addr || addr - r->addr > r->size || size > r->size - (addr - r->addr))
			continue;
		/* little endian, as the value is stored and the load reads it */
		*v = brt_load((const void *)(uintptr_t)addr, size);
		return true;
	}
	return false;
}

static uint64_t sext(uint64_t v, unsigned bits)
{
	return bits >= 64 ? v : (uint64_t)((int64_t)(v << (64 - bits)) >> (64 - bits));
}

/* Load pc (one of the ldx rows) from a known address inside a frozen value. */
static bool load_value(const struct jit_state *st, enum brt_op op, const struct bpf_insn *in,
		       uint16_t known, const uint64_t *val, uint64_t *out)
{
	unsigned size = brt_isa_access_size(brt_ops[op].opcode);
	bool sign = op == BRT_OP_ldxsb || op == BRT_OP_ldxsh || op == BRT_OP_ldxsw;
	uint64_t v;

	if (!(st->passes & BRT_JIT_PASS(rodata)) || !st->env->nrodata ||
	    in->src_reg >= BPF_REG_10 || !(known & (1u << in->src_reg)) ||
	    !rodata_bytes(st, val[in->src_reg] + (uint64_t)(int64_t)in->off, size, &v))
		return false;
	*out = sign ? sext(v, size * 8) : v;
	return true;
}

static uint64_t bswap_bits(uint64_t v, unsigned bits)
{
	return bits == 16 ? __builtin_bswap16((uint16_t)v)
	       : bits == 32 ? __builtin_bswap32((uint32_t)v) : __builtin_bswap64(v);
}

/* Byte-order row op on v: its width is its imm, whatever its class (be64 is BPF_ALU);
 * the result is zero-extended from that width. */
static bool endian_value(enum brt_op op, uint64_t v, uint64_t *out)
{
	switch (op) {
	case BRT_OP_be16: case BRT_OP_bswap16:
		*out = bswap_bits(v, 16);
		return true;
	case BRT_OP_be32: case BRT_OP_bswap32:
		*out = bswap_bits(v, 32);
		return true;
	case BRT_OP_be64: case BRT_OP_bswap64:
		*out = bswap_bits(v, 64);
		return true;
	case BRT_OP_le16:
		*out = (uint16_t)v;
		return true;
	case BRT_OP_le32:
		*out = (uint32_t)v;
		return true;
	case BRT_OP_le64:
		*out = v;
		return true;
	default:
		return false;
	}
}

/* ALU operation pc on known operands, as the interpreter computes it (shift counts
 * masked; 32-bit results zero-extended).  Division and modulo are left unknown. */
static bool alu_value(enum brt_op op, const struct bpf_insn *in, uint16_t known,
		      const uint64_t *val, uint64_t *out)
{
	const struct brt_opinfo *info = &brt_ops[op];
	bool w64 = BPF_CLASS(info->opcode) == BPF_ALU64;
	unsigned d = in->dst_reg, s = in->src_reg;
	uint64_t a, b = 0, r;

	if (!(known & (1u << d)))
		return false;
	a = val[d];
	if (info->shape == BRT_SHAPE_ALU_REG) {
		if (s >= BPF_REG_10 || !(known & (1u << s)))
			return false;
		b = val[s];
	} else if (info->shape == BRT_SHAPE_ALU_IMM) {
		b = w64 ? (uint64_t)(int64_t)in->imm : (uint32_t)in->imm;
	} else if (info->shape == BRT_SHAPE_ENDIAN) {
		return endian_value(op, a, out);
	} else if (info->shape != BRT_SHAPE_ALU_UNARY) {
		return false;
	}
	if (!w64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
	}
	switch (op) {
	case BRT_OP_add64_imm: case BRT_OP_add64_reg: case BRT_OP_add32_imm: case BRT_OP_add32_reg:
		r = a + b;
		break;
	case BRT_OP_sub64_imm: case BRT_OP_sub64_reg: case BRT_OP_sub32_imm: case BRT_OP_sub32_reg:
		r = a - b;
		break;
	case BRT_OP_mul64_imm: case BRT_OP_mul64_reg: case BRT_OP_mul32_imm: case BRT_OP_mul32_reg:
		r = a * b;
		break;
	case BRT_OP_or64_imm: case BRT_OP_or64_reg: case BRT_OP_or32_imm: case BRT_OP_or32_reg:
		r = a | b;
		break;
	case BRT_OP_and64_imm: case BRT_OP_and64_reg: case BRT_OP_and32_imm: case BRT_OP_and32_reg:
		r = a & b;
		break;
	case BRT_OP_xor64_imm: case BRT_OP_xor64_reg: case BRT_OP_xor32_imm: case BRT_OP_xor32_reg:
		r = a ^ b;
		break;
	case BRT_OP_lsh64_imm: case BRT_OP_lsh64_reg:
		r = a << (b & 63);
		break;
	case BRT_OP_lsh32_imm: case BRT_OP_lsh32_reg:
		r = a << (b & 31);
		break;
	case BRT_OP_rsh64_imm: case BRT_OP_rsh64_reg:
		r = a >> (b & 63);
		break;
	case BRT_OP_rsh32_imm: case BRT_OP_rsh32_reg:
		r = a >> (b & 31);
		break;
	case BRT_OP_arsh64_imm: case BRT_OP_arsh64_reg:
		r = (uint64_t)((int64_t)a >> (b & 63));
		break;
	case BRT_OP_arsh32_imm: case BRT_OP_arsh32_reg:
		r = (uint32_t)((int32_t)(uint32_t)a >> (b & 31));
		break;
	case BRT_OP_neg64: case BRT_OP_neg32:
		r = 0 - a;
		break;
	case BRT_OP_movsx8_64: case BRT_OP_movsx8_32:
		r = sext(b, 8);
		break;
	case BRT_OP_movsx16_64: case BRT_OP_movsx16_32:
		r = sext(b, 16);
		break;
	case BRT_OP_movsx32_64:
		r = sext(b, 32);
		break;
	case BRT_OP_mov32_reg:
		r = b;
		break;
	default:
		return false;
	}
	*out = w64 ? r : (uint32_t)r;
	return true;
}

bool brt_jit_const_eval(const struct jit_state *st, const uint16_t *ops, size_t pc,
			uint16_t known, const uint64_t *val, uint64_t *out)
{
	const struct bpf_insn *in = &st->insns[pc];
	enum brt_op op = (enum brt_op)ops[pc];

	if (op == BRT_OP_INVALID || in->dst_reg >= BPF_REG_10)
		return false;
	switch (op) {
	case BRT_OP_ldxb: case BRT_OP_ldxh: case BRT_OP_ldxw: case BRT_OP_ldxdw:
	case BRT_OP_ldxsb: case BRT_OP_ldxsh: case BRT_OP_ldxsw:
		return load_value(st, op, in, known, val, out);
	default:
		break;
	}
	if (!(st->passes & BRT_JIT_PASS(constjump)))
		return false;
	return alu_value(op, in, known, val, out);
}

/* --- rodata ------------------------------------------------------------------------------ */

/* Keep v for PLAN_CONST (st->consts, by index in the plan's imm). */
static int add_const(struct jit_state *st, uint64_t v, int32_t *idx)
{
	uint64_t *k;

	if (st->nconsts >= INT32_MAX)
		return -ENOMEM;
	k = realloc(st->consts, (st->nconsts + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	st->consts = k;
	k[st->nconsts] = v;
	*idx = (int32_t)st->nconsts++;
	return 0;
}

int brt_jit_pass_rodata(struct opt *o)
{
	struct jit_state *st = o->st;

	/* blinded code keeps the load: the value would be an immediate verbatim */
	if (!st->env->nrodata || st->blind_seed)
		return 0;
	for (size_t pc = 0; pc < st->n; pc++) {
		const struct bpf_insn *in = &st->insns[pc];
		enum brt_op op = (enum brt_op)o->ops[pc];
		uint64_t val[BRT_MAX_REGS] = { 0 }, v;
		int32_t idx;

		if (op == BRT_OP_INVALID || brt_ops[op].shape != BRT_SHAPE_LOAD ||
		    st->plan[pc].kind != PLAN_NONE || in->dst_reg >= BPF_REG_10 ||
		    in->src_reg >= BPF_REG_10 ||
		    !o->const_at(o, pc, in->src_reg, &val[in->src_reg]) ||
		    !load_value(st, op, in, (uint16_t)(1u << in->src_reg), val, &v))
			continue;
		if (add_const(st, v, &idx))
			return -ENOMEM;
		st->plan[pc] = (struct jit_plan){ .kind = PLAN_CONST, .dst = in->dst_reg,
						  .imm = idx };
	}
	return 0;
}

/* --- constjump --------------------------------------------------------------------------- */

/* Conditional jump op on operands a (dst) and b (src or imm, as the row takes it). */
static bool jump_taken(enum brt_op op, const struct bpf_insn *in, uint64_t a, uint64_t b)
{
	const struct brt_opinfo *info = &brt_ops[op];
	bool w64 = BPF_CLASS(info->opcode) == BPF_JMP;
	int64_t sa, sb;

	if (info->shape == BRT_SHAPE_JMP_IMM)
		b = (uint64_t)(int64_t)in->imm;
	if (!w64) {
		a = (uint32_t)a;
		b = (uint32_t)b;
		sa = (int32_t)(uint32_t)a;
		sb = (int32_t)(uint32_t)b;
	} else {
		sa = (int64_t)a;
		sb = (int64_t)b;
	}
	switch (BPF_OP(info->opcode)) {
	case BPF_JEQ:
		return a == b;
	case BPF_JNE:
		return a != b;
	case BPF_JGT:
		return a > b;
	case BPF_JGE:
		return a >= b;
	case BPF_JLT:
		return a < b;
	case BPF_JLE:
		return a <= b;
	case BPF_JSET:
		return (a & b) != 0;
	case BPF_JSGT:
		return sa > sb;
	case BPF_JSGE:
		return sa >= sb;
	case BPF_JSLT:
		return sa < sb;
	default: /* BPF_JSLE: the shapes hold no other operation */
		return sa <= sb;
	}
}

/* Jump pc decided by known operands: 1 always taken, 0 never, -1 not known. */
static int decided(struct opt *o, size_t pc)
{
	const struct bpf_insn *in = &o->st->insns[pc];
	enum brt_op op = (enum brt_op)o->ops[pc];
	unsigned shape = brt_ops[op].shape;
	uint64_t a, b = 0;

	if (shape != BRT_SHAPE_JMP_IMM && shape != BRT_SHAPE_JMP_REG)
		return -1;
	if (!o->const_at(o, pc, in->dst_reg, &a) ||
	    (shape == BRT_SHAPE_JMP_REG && !o->const_at(o, pc, in->src_reg, &b)))
		return -1;
	return jump_taken(op, in, a, b);
}

/* Mark in live[] every instruction a path from a function's entry reaches, following
 * only the edges of decided jumps (taken[pc]: 1 always, 0 never, else both).  0 or
 * -ENOMEM. */
static int reach(const struct opt *o, const int8_t *taken, uint8_t *live)
{
	const struct jit_state *st = o->st;
	size_t *work = malloc((st->n + st->nfuncs + 1) * sizeof(*work)), sp = 0;

	if (!work)
		return -ENOMEM;
	for (size_t k = 0; k < st->nfuncs; k++)
		work[sp++] = st->funcs[k].start;
	while (sp) {
		size_t pc = work[--sp];
		enum brt_op op;

		while (pc < st->n && !live[pc]) {
			live[pc] = 1;
			op = (enum brt_op)o->ops[pc];
			if (op == BRT_OP_INVALID) { /* lddw's second slot */
				pc++;
				continue;
			}
			if (op == BRT_OP_exit)
				break;
			if (is_branch(op)) {
				size_t t = (size_t)brt_isa_jump_target(&st->insns[pc], op, pc);

				if (is_ja(op) || taken[pc] == 1) {
					pc = t;
					continue;
				}
				/* each instruction is pushed at most once: it is marked first */
				if (taken[pc] != 0 && t < st->n && !live[t])
					work[sp++] = t;
			}
			pc++;
		}
	}
	free(work);
	return 0;
}

/* Registers instruction pc reads and writes as planned so far (this pass runs before the
 * others: a PLAN_SKIP is a jump never taken or code no path reaches, a PLAN_CONST reads no
 * register), by dead_after()'s rules: a bpf-to-bpf callee reads every register, calls
 * and packet loads write only r0 (an unverified program may read what the interpreters
 * leave in r1-r5). */
static void planned_regs(const struct opt *o, size_t pc, uint16_t *use, uint16_t *def)
{
	const struct jit_state *st = o->st;
	enum brt_op op = (enum brt_op)o->ops[pc];
	struct brt_isa_regs r;

	*use = *def = 0;
	if (op == BRT_OP_INVALID || st->plan[pc].kind == PLAN_SKIP)
		return;
	brt_isa_regs_op(&st->insns[pc], op, &r);
	if (op == BRT_OP_call_local)
		r.use = 0x3ff;
	if (r.def == 0x3f)
		r.def = 1;
	if (st->plan[pc].kind == PLAN_CONST || st->plan[pc].kind == PLAN_JMP)
		r.use = 0;
	*use = r.use;
	*def = r.def;
}

/* Registers live after instruction pc of function f (live[] holds each instruction's
 * live-in): its successors as planned; leaving the function or jumping out of it, every
 * register. */
static uint16_t live_out(const struct opt *o, const struct jit_func *f, const int8_t *taken,
			 const uint16_t *live, size_t pc)
{
	const struct jit_state *st = o->st;
	enum brt_op op = (enum brt_op)o->ops[pc];
	uint16_t out = 0;
	int64_t t;

	if (op == BRT_OP_exit)
		return 0; /* only r0, which exit reads; r6-r9 are restored */
	if (op == BRT_OP_INVALID || !is_branch(op) || (!is_ja(op) && taken[pc] != 1))
		out |= pc + 1 < f->end ? live[pc + 1] : 0x3ff;
	if (op != BRT_OP_INVALID && is_branch(op) && taken[pc] != 0) {
		t = brt_isa_jump_target(&st->insns[pc], op, pc);
		out |= t >= (int64_t)f->start && t < (int64_t)f->end ? live[t] : 0x3ff;
	}
	return out;
}

/* live[] to the fixed point of the backward dataflow; false when not settled in 64
 * sweeps. */
static bool live_settle(const struct opt *o, const int8_t *taken, uint16_t *live)
{
	const struct jit_state *st = o->st;

	memset(live, 0, (st->n + 1) * sizeof(*live));
	for (int sweep = 0; sweep < 64; sweep++) {
		bool changed = false;

		for (size_t k = 0; k < st->nfuncs; k++) {
			const struct jit_func *f = &st->funcs[k];

			for (size_t pc = f->end; pc-- > f->start;) {
				uint16_t use, def, in;

				planned_regs(o, pc, &use, &def);
				in = (uint16_t)(use | (live_out(o, f, taken, live, pc) & ~def));
				changed |= in != live[pc];
				live[pc] = in;
			}
		}
		if (!changed)
			return true;
	}
	return false;
}

/* Instruction pc only writes its dst: an ALU operation (eBPF's have no side effect: a
 * division by zero is defined) or an lddw of a constant. */
static bool pure(enum brt_op op, const struct bpf_insn *in)
{
	const struct brt_opinfo *info = &brt_ops[op];
	unsigned cls = BPF_CLASS(info->opcode);

	if (op == BRT_OP_lddw)
		return in->src_reg == 0;
	return (cls == BPF_ALU || cls == BPF_ALU64) &&
	       (info->shape == BRT_SHAPE_ALU_IMM || info->shape == BRT_SHAPE_ALU_REG ||
		info->shape == BRT_SHAPE_ALU_UNARY || info->shape == BRT_SHAPE_ENDIAN);
}

/* Pure instructions (ALU operations, lddw of a constant, rodata's PLAN_CONST loads) whose
 * register no path reads afterwards, once the decided jumps no longer read theirs and
 * rodata's loads their address: dropped.  A
 * backward dataflow to a fixed point per round; a drop may kill the move feeding it (the
 * lddw of a .rodata address before its load), so up to 4 rounds. */
static int drop_dead_consts(struct opt *o, const int8_t *taken)
{
	struct jit_state *st = o->st;
	uint16_t *live = malloc((st->n + 1) * sizeof(*live));
	bool dropped = true;

	if (!live)
		return -ENOMEM;
	for (int round = 0; round < 4 && dropped && live_settle(o, taken, live); round++) {
		dropped = false;
		for (size_t k = 0; k < st->nfuncs; k++) {
			const struct jit_func *f = &st->funcs[k];

			for (size_t pc = f->start; pc < f->end; pc++) {
				const struct bpf_insn *in = &st->insns[pc];
				enum brt_op op = (enum brt_op)o->ops[pc];

				if (op == BRT_OP_INVALID || in->dst_reg >= BPF_REG_10 ||
				    !((pure(op, in) && st->plan[pc].kind == PLAN_NONE) ||
				      st->plan[pc].kind == PLAN_CONST) ||
				    (live_out(o, f, taken, live, pc) & (1u << in->dst_reg)))
					continue;
				st->plan[pc].kind = PLAN_SKIP;
				dropped = true;
			}
		}
	}
	free(live);
	return 0;
}

int brt_jit_pass_constjump(struct opt *o)
{
	struct jit_state *st = o->st;
	int8_t *taken = malloc(st->n + 1);
	uint8_t *live = calloc(st->n + 1, 1);
	bool any = false;
	int rc = 0;

	if (!taken || !live) {
		free(taken);
		free(live);
		return -ENOMEM;
	}
	memset(taken, -1, st->n + 1);
	for (size_t pc = 0; pc < st->n; pc++) {
		enum brt_op op = (enum brt_op)o->ops[pc];
		int64_t t;
		int d;

		if (op == BRT_OP_INVALID || st->plan[pc].kind != PLAN_NONE || (d = decided(o, pc)) < 0)
			continue;
		t = brt_isa_jump_target(&st->insns[pc], op, pc);
		if (d == 0 || t == (int64_t)pc + 1) {
			st->plan[pc].kind = PLAN_SKIP;
			taken[pc] = (int8_t)d;
			any = true;
		} else if (t > (int64_t)pc) { /* a backward one may carry the budget's charge */
			st->plan[pc] = (struct jit_plan){ .kind = PLAN_JMP,
							  .imm = (int32_t)(t - (int64_t)pc) };
			taken[pc] = 1;
			any = true;
		}
	}
	if (any)
		rc = reach(o, taken, live);
	for (size_t pc = 0; any && !rc && pc < st->n; pc++)
		if (!live[pc] && o->ops[pc] != BRT_OP_INVALID)
			st->plan[pc].kind = PLAN_SKIP;
	/* a jmp over nothing but dropped code falls through */
	for (size_t pc = 0; any && !rc && pc < st->n; pc++) {
		size_t t = pc + (size_t)(int64_t)st->plan[pc].imm, i = pc + 1;

		if (st->plan[pc].kind != PLAN_JMP)
			continue;
		while (i < t && (o->ops[i] == BRT_OP_INVALID || st->plan[i].kind == PLAN_SKIP))
			i++;
		if (i == t)
			st->plan[pc].kind = PLAN_SKIP;
	}
	/* rodata's loads no longer read their address: its lddw may be dead too */
	for (size_t pc = 0; !any && pc < st->n; pc++)
		any = st->plan[pc].kind == PLAN_CONST;
	if (any && !rc)
		rc = drop_dead_consts(o, taken);
	free(taken);
	free(live);
	return rc;
}
