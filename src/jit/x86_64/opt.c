/* opt.c - the x86-64 JIT's optimisation passes (passes.def): each looks at the decoded
 * program before emission and records, per instruction, a plan that run_pass() emits
 * instead of the instruction's own code (struct jit_plan).  The passes prove what they
 * rely on themselves (register liveness, constants, which instructions are jump targets)
 * from the instructions alone, so they hold for programs the verifier never saw: a pass
 * that cannot prove its condition leaves the instructions alone.
 *
 * rotate: eBPF has no rotate, so clang spells (x << k) | (x >> (w - k)) as a copy, two
 * shifts and an or, and when the rotated value is a product, folds the left shift into a
 * second multiplier: (x * (K << (w - s))) | ((x * K) >> s).  A window of straight-line
 * ALU instructions is executed symbolically, in terms of the register values at its start;
 * when an `or` yields one of those two shapes, the window becomes mov + [imul] + rol into
 * the or's destination, provided every other register the window writes is dead after it.
 *
 * zext: a 32-bit ALU result or a 1/2/4-byte load is already zero-extended, so a following
 * `w = w` on the same register is dropped; `r <<= 32; r >>= 32` (s>>= 32) is one mov32
 * (movsxd).
 *
 * constfill: clang zero-fills a struct on the stack and then, on one path, fills parts of
 * it with zeros again, rematerialising the zero in a register before each store (w4 = 0;
 * *(u32 *)(r10 - 24) = r4; w4 = 0; ...).  A forward dataflow over each function knows
 * which registers hold which constant and which r10 slots hold which constant (a store
 * through any other register, an atomic on the slot, and every call forget them: such a
 * pointer or callee may reach the stack); a move of the value the register already holds
 * and a store of the value the slot already holds are dropped.
 *
 * lea: `r = s; r += k` is one lea: a copy and an add become one instruction (flags are
 * never read across eBPF instructions).
 *
 * constkey: constfill's dataflow also says, at a bpf_map_lookup_elem bound to a hash map
 * (lookup.c's inline probe), whether r2 points at stack bytes it knows: then the key is
 * hashed here (jit_ckey) and the probe compares immediates.
 *
 * Passes in files of their own (opt_bits.c: knownbits, bittest) are declared in opt.h,
 * which also holds what the pass files share and says how to add a pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/x86_64/opt.h"
#include "jit/x86_64/x86.h"
#include "util/util.h"

#define B (&st->buf)

static const char *const pass_names[] = {
#define PASS(id, desc) #id,
#include "jit/x86_64/passes.def"
#undef PASS
};

static const char *const pass_descs[] = {
#define PASS(id, desc) desc,
#include "jit/x86_64/passes.def"
#undef PASS
};

const char *brt_jit_pass_name(unsigned i)
{
	return i < BRT_JIT_PASS_COUNT ? pass_names[i] : NULL;
}

const char *brt_jit_pass_desc(unsigned i)
{
	return i < BRT_JIT_PASS_COUNT ? pass_descs[i] : NULL;
}

static uint32_t pass_bit(const char *name, size_t len)
{
	for (unsigned i = 0; i < BRT_JIT_PASS_COUNT; i++)
		if (strlen(pass_names[i]) == len && !strncmp(pass_names[i], name, len))
			return 1u << i;
	return 0;
}

uint32_t brt_jit_passes_parse(const char *spec)
{
	uint32_t mask = BRT_JIT_PASSES_ALL;
	bool first = true;

	for (const char *p = spec; p && *p;) {
		size_t len;

		p += strspn(p, ", ");
		len = strcspn(p, ", ");
		if (!len)
			break;
		if (len == 4 && !strncmp(p, "none", 4))
			mask = 0;
		else if (len == 3 && !strncmp(p, "all", 3))
			mask = BRT_JIT_PASSES_ALL;
		else if (*p == '-')
			mask &= ~pass_bit(p + 1, len - 1);
		else
			mask = (first ? 0 : mask) | pass_bit(p, len);
		first = false;
		p += len;
	}
	return mask;
}

/* --- what the passes share (struct opt, is_branch(), is_ja(): opt.h) ---------------- */

/* Registers r0-r9 with a known value: the bit in known, the value in val. */
struct cstate {
	uint16_t known;
	bool reached;
	uint64_t val[BRT_MAX_REGS];
};

static int mark_targets(struct opt *o)
{
	struct jit_state *st = o->st;

	o->target = calloc(st->n + 1, 1);
	if (!o->target)
		return -ENOMEM;
	for (size_t k = 0; k < st->nfuncs; k++)
		o->target[st->funcs[k].start] = 1;
	for (size_t pc = 0; pc < st->n; pc++) {
		enum brt_op op = (enum brt_op)o->ops[pc];

		if (op != BRT_OP_INVALID && brt_isa_has_target(op))
			o->target[brt_isa_jump_target(&st->insns[pc], op, pc)] = 1;
	}
	return 0;
}

static int ensure_plan(struct jit_state *st)
{
	if (!st->plan)
		st->plan = calloc(st->n, sizeof(*st->plan));
	return st->plan ? 0 : -ENOMEM;
}

/* Whether every register in mask is dead after instruction q: on every path from q + 1,
 * written before it is read.  Paths are followed through at most 64 instructions and 16
 * open branches; past that the answer is "live". */
static bool dead_after(const struct opt *o, size_t q, uint16_t mask)
{
	struct {
		size_t pc;
		uint16_t m;
	} stack[16];
	int sp = 0, budget = 64;
	const struct jit_state *st = o->st;

	stack[sp].pc = q + 1;
	stack[sp++].m = mask;
	while (sp) {
		size_t pc = stack[--sp].pc;
		uint16_t m = stack[sp].m;

		while (m) {
			enum brt_op op;
			struct brt_isa_regs r;

			if (--budget < 0 || pc >= st->n)
				return false;
			op = (enum brt_op)o->ops[pc];
			if (op == BRT_OP_INVALID) { /* lddw's second slot */
				pc++;
				continue;
			}
			brt_isa_regs_op(&st->insns[pc], op, &r);
			/* a bpf-to-bpf callee runs on the caller's registers: unverified code
			 * may read r0 and r6-r9 there too */
			if (op == BRT_OP_call_local)
				r.use = 0x3ff;
			if (r.use & m)
				return false;
			/* calls and packet loads: the verifier takes r1-r5 as clobbered, but an
			 * unverified program may read what the interpreters leave there */
			if (r.def == 0x3f)
				r.def = 1;
			/* an instruction an earlier pass dropped writes nothing: constfill's
			 * drop of `r = K` says the register still holds K from before */
			if (st->plan && st->plan[pc].kind == PLAN_SKIP)
				r.def = 0;
			m &= (uint16_t)~r.def;
			if (op == BRT_OP_exit)
				break; /* only r0 leaves a function (r6-r9 are restored) */
			if (is_branch(op)) {
				size_t t = (size_t)brt_isa_jump_target(&st->insns[pc], op, pc);

				if (is_ja(op)) {
					pc = t;
					continue;
				}
				if (sp == (int)(sizeof(stack) / sizeof(stack[0])))
					return false;
				stack[sp].pc = t;
				stack[sp++].m = m;
			}
			pc++;
		}
	}
	return true;
}

/* --- constants: which registers hold a known value at an instruction ------------------ */

static void cstep(const struct jit_state *st, const uint16_t *ops, size_t pc, struct cstate *c)
{
	const struct bpf_insn *in = &st->insns[pc];
	enum brt_op op = (enum brt_op)ops[pc];
	struct brt_isa_regs r;
	unsigned d = in->dst_reg;

	if (op == BRT_OP_INVALID)
		return;
	brt_isa_regs_op(in, op, &r);
	if (op == BRT_OP_mov64_imm || op == BRT_OP_mov32_imm ||
	    (op == BRT_OP_lddw && in->src_reg == 0)) {
		c->known |= (uint16_t)(1u << d);
		c->val[d] = op == BRT_OP_mov64_imm   ? (uint64_t)(int64_t)in->imm
			    : op == BRT_OP_mov32_imm ? (uint32_t)in->imm
						     : brt_isa_lddw_value(in, pc);
	} else if (op == BRT_OP_mov64_reg && in->src_reg < BRT_MAX_REGS) {
		if (c->known & (1u << in->src_reg)) {
			c->known |= (uint16_t)(1u << d);
			c->val[d] = c->val[in->src_reg];
		} else {
			c->known &= (uint16_t)~(1u << d);
		}
	} else if (d < BRT_MAX_REGS && brt_jit_const_eval(st, ops, pc, c->known, c->val, &c->val[d])) {
		c->known |= (uint16_t)(1u << d); /* passes rodata, constjump (opt_const.c) */
	} else {
		c->known &= (uint16_t)~r.def;
	}
}

/* merge src into *dst (a target's state); true when *dst changed */
static bool cmerge(struct cstate *dst, const struct cstate *src)
{
	uint16_t k;

	if (!dst->reached) {
		*dst = *src;
		dst->reached = true;
		return true;
	}
	k = dst->known & src->known;
	for (unsigned i = 0; i < BRT_MAX_REGS; i++)
		if ((k & (1u << i)) && dst->val[i] != src->val[i])
			k &= (uint16_t)~(1u << i);
	if (k == dst->known)
		return false;
	dst->known = k;
	return true;
}

/* Forward dataflow over each function: the known registers at every target, merged over
 * its predecessors; sweeps until nothing changes (at most 32, else no constants). */
static void const_flow(struct opt *o)
{
	const struct jit_state *st = o->st;

	o->consts_done = true;
	o->cin = calloc(st->n + 1, sizeof(*o->cin));
	if (!o->cin)
		return;
	for (int sweep = 0; sweep < 32; sweep++) {
		bool changed = false;

		for (size_t k = 0; k < st->nfuncs; k++) {
			const struct jit_func *f = &st->funcs[k];
			struct cstate cur = { .reached = true };

			o->cin[f->start].reached = true; /* entry: nothing known */
			for (size_t pc = f->start; pc < f->end; pc++) {
				enum brt_op op = (enum brt_op)o->ops[pc];

				if (o->target[pc]) {
					if (cur.reached && pc != f->start)
						changed |= cmerge(&o->cin[pc], &cur);
					cur = o->cin[pc];
				}
				if (!cur.reached || op == BRT_OP_INVALID)
					continue;
				cstep(st, o->ops, pc, &cur);
				if (is_branch(op))
					changed |= cmerge(&o->cin[brt_isa_jump_target(&st->insns[pc],
										  op, pc)],
							  &cur);
				if (is_ja(op) || op == BRT_OP_exit)
					cur.reached = false;
			}
		}
		if (!changed) {
			o->consts_ok = true;
			return;
		}
	}
}

/* Whether register reg holds a known value (*v) whenever instruction pc starts. */
static bool const_at(struct opt *o, size_t pc, unsigned reg, uint64_t *v)
{
	struct cstate c;
	size_t b = pc;

	if (!o->consts_done)
		const_flow(o);
	if (!o->consts_ok || reg >= BRT_MAX_REGS)
		return false;
	while (!o->target[b])
		b--; /* the function's start is a target */
	c = o->cin[b];
	if (!c.reached)
		return false;
	for (size_t i = b; i < pc; i++)
		cstep(o->st, o->ops, i, &c);
	if (!(c.known & (1u << reg)))
		return false;
	*v = c.val[reg];
	return true;
}

/* --- rotate ------------------------------------------------------------------------- */

enum sym_kind { S_REG, S_MUL, S_SHL, S_SHR, S_OR };

struct sym {
	uint8_t kind;
	uint8_t a, b;  /* operand nodes */
	uint8_t k;     /* SHL/SHR: count; REG: the register */
	uint8_t mul;   /* MUL: enum jit_plan_mul */
	uint8_t mreg;  /* MUL_REG */
	int32_t imm;   /* MUL_IMM */
	size_t pc;     /* MUL: the instruction (for the multiplier's value) */
};

#define WINDOW 8
#define NSYM (BRT_MAX_REGS + WINDOW)

struct win {
	struct sym s[NSYM];
	unsigned ns;
	uint8_t reg[BRT_MAX_REGS]; /* node each register holds */
	unsigned w;                /* 32 or 64; 0 until an operation says */
};

static bool set_width(struct win *wn, unsigned w)
{
	if (wn->w && wn->w != w)
		return false;
	wn->w = w;
	return true;
}

static int node(struct win *wn, struct sym s)
{
	if (wn->ns == NSYM)
		return -1;
	wn->s[wn->ns] = s;
	return (int)wn->ns++;
}

/* The multiplier of MUL node s, if known (width w). */
static bool mul_value(struct opt *o, const struct sym *s, unsigned w, uint64_t *v)
{
	if (s->mul == MUL_IMM)
		*v = (uint64_t)(int64_t)s->imm;
	else if (!const_at(o, s->pc, s->mreg, v))
		return false;
	if (w == 32)
		*v = (uint32_t)*v;
	return true;
}

/* Node x is the start value of a register, or that times a multiplier. */
static bool rot_base(const struct win *wn, unsigned x)
{
	const struct sym *s = &wn->s[x];

	return s->kind == S_REG || (s->kind == S_MUL && wn->s[s->a].kind == S_REG);
}

/* Node `or` (operands a, b) as a rotation of a base node: *base and the left count. */
static bool rot_match(struct opt *o, const struct win *wn, unsigned a, unsigned b, unsigned *base,
		      unsigned *rol)
{
	const struct sym *sa = &wn->s[a], *sb = &wn->s[b];
	unsigned w = wn->w;

	/* (x << k) | (x >> (w - k)) */
	if (sa->kind == S_SHL && sb->kind == S_SHR && sa->a == sb->a && sa->k + sb->k == w &&
	    rot_base(wn, sa->a)) {
		*base = sa->a;
		*rol = sa->k;
		return true;
	}
	/* (x * (K << (w - s))) | ((x * K) >> s) */
	if (sa->kind == S_MUL && sb->kind == S_SHR && wn->s[sb->a].kind == S_MUL &&
	    wn->s[sa->a].kind == S_REG && sa->a == wn->s[sb->a].a) {
		const struct sym *m = &wn->s[sb->a];
		uint64_t ka, kb, mask = w == 64 ? ~0ull : 0xffffffffull;

		if (!mul_value(o, sa, w, &ka) || !mul_value(o, m, w, &kb))
			return false;
		if (((kb << (w - sb->k)) & mask) != ka)
			return false;
		*base = sb->a;
		*rol = w - sb->k;
		return true;
	}
	return false;
}

/* The rotate window starting at p: on a match fills st->plan and returns its last
 * instruction, else 0. */
static size_t rotate_at(struct opt *o, size_t p)
{
	struct jit_state *st = o->st;
	struct win wn = { .ns = BRT_MAX_REGS };
	uint16_t written = 0;

	for (unsigned r = 0; r < BRT_MAX_REGS; r++) {
		wn.s[r] = (struct sym){ .kind = S_REG, .k = (uint8_t)r };
		wn.reg[r] = (uint8_t)r;
	}
	for (size_t pc = p; pc < st->n && pc < p + WINDOW; pc++) {
		const struct bpf_insn *in = &st->insns[pc];
		enum brt_op op = (enum brt_op)o->ops[pc];
		unsigned d = in->dst_reg, s = in->src_reg, base, rol;
		bool w64 = BPF_CLASS(in->code) == BPF_ALU64;
		int nd;

		if (op == BRT_OP_INVALID || (pc > p && o->target[pc]))
			return 0;
		if (d >= BRT_MAX_REGS - 1 || (brt_ops[op].shape == BRT_SHAPE_ALU_REG &&
					       s >= BRT_MAX_REGS))
			return 0; /* r10 is never written */
		switch (op) {
		case BRT_OP_mov64_reg:
			wn.reg[d] = wn.reg[s];
			break;
		case BRT_OP_mov32_reg:
			if (!set_width(&wn, 32))
				return 0;
			wn.reg[d] = wn.reg[s];
			break;
		case BRT_OP_lsh64_imm:
		case BRT_OP_rsh64_imm:
		case BRT_OP_lsh32_imm:
		case BRT_OP_rsh32_imm: {
			unsigned k = (unsigned)in->imm & (w64 ? 63 : 31);

			if (!set_width(&wn, w64 ? 64 : 32) || !k)
				return 0;
			nd = node(&wn, (struct sym){
					       .kind = op == BRT_OP_lsh64_imm || op == BRT_OP_lsh32_imm
							       ? S_SHL : S_SHR,
					       .a = wn.reg[d], .k = (uint8_t)k });
			if (nd < 0)
				return 0;
			wn.reg[d] = (uint8_t)nd;
			break;
		}
		case BRT_OP_mul64_imm:
		case BRT_OP_mul32_imm:
		case BRT_OP_mul64_reg:
		case BRT_OP_mul32_reg: {
			bool reg = op == BRT_OP_mul64_reg || op == BRT_OP_mul32_reg;

			if (!set_width(&wn, w64 ? 64 : 32))
				return 0;
			/* a register multiplier is read at the window's start: unchanged so far */
			if (reg && (s == d || wn.reg[s] != s))
				return 0;
			nd = node(&wn, (struct sym){ .kind = S_MUL, .a = wn.reg[d],
						     .mul = reg ? MUL_REG : MUL_IMM,
						     .mreg = (uint8_t)s, .imm = in->imm, .pc = pc });
			if (nd < 0)
				return 0;
			wn.reg[d] = (uint8_t)nd;
			break;
		}
		case BRT_OP_or64_reg:
		case BRT_OP_or32_reg: {
			unsigned a = wn.reg[d], b = wn.reg[s];
			const struct sym *bs;

			if (!set_width(&wn, w64 ? 64 : 32))
				return 0;
			if (!rot_match(o, &wn, a, b, &base, &rol) &&
			    !rot_match(o, &wn, b, a, &base, &rol)) {
				nd = node(&wn, (struct sym){ .kind = S_OR, .a = (uint8_t)a,
							     .b = (uint8_t)b });
				if (nd < 0)
					return 0;
				wn.reg[d] = (uint8_t)nd;
				break;
			}
			written |= (uint16_t)(1u << d);
			bs = &wn.s[base];
			/* the result is written before the multiplier is read */
			if (bs->kind == S_MUL && bs->mul == MUL_REG && bs->mreg == d)
				return 0;
			if (!dead_after(o, pc, (uint16_t)(written & ~(1u << d))))
				return 0;
			st->plan[p] = (struct jit_plan){
				.kind = PLAN_ROTATE, .w64 = wn.w == 64, .dst = (uint8_t)d,
				.src = bs->kind == S_REG ? bs->k : wn.s[bs->a].k,
				.mul = bs->kind == S_MUL ? bs->mul : MUL_NONE, .mreg = bs->mreg,
				.imm = bs->imm, .rol = (uint8_t)rol };
			for (size_t i = p + 1; i <= pc; i++)
				st->plan[i].kind = PLAN_SKIP;
			return pc;
		}
		default:
			return 0;
		}
		written |= (uint16_t)(1u << d);
	}
	return 0;
}

static void pass_rotate(struct opt *o)
{
	struct jit_state *st = o->st;

	/* a rotate's count would appear verbatim: blinded code keeps the shifts */
	if (st->blind_seed)
		return;
	for (size_t p = 0; p < st->n; p++) {
		enum brt_op op = (enum brt_op)o->ops[p];
		size_t q;

		/* windows start where clang's idioms do: a copy or a shift/multiply */
		if (st->plan[p].kind != PLAN_NONE ||
		    (op != BRT_OP_mov64_reg && op != BRT_OP_mov32_reg && op != BRT_OP_lsh64_imm &&
		     op != BRT_OP_lsh32_imm && op != BRT_OP_rsh64_imm && op != BRT_OP_rsh32_imm &&
		     op != BRT_OP_mul64_imm && op != BRT_OP_mul64_reg && op != BRT_OP_mul32_imm &&
		     op != BRT_OP_mul32_reg))
			continue;
		q = rotate_at(o, p);
		if (q)
			p = q;
	}
}

/* --- zext --------------------------------------------------------------------------- */

/* Instruction pc writes its dst zero-extended from 32 bits (x86 does that for every
 * 32-bit operation, and the JIT's ALU32 rows rely on it). */
static bool writes_zext(const struct opt *o, size_t pc)
{
	enum brt_op op = (enum brt_op)o->ops[pc];
	const struct brt_opinfo *info;

	if (op == BRT_OP_INVALID)
		return false;
	info = &brt_ops[op];
	if (op == BRT_OP_ldxb || op == BRT_OP_ldxh || op == BRT_OP_ldxw)
		return true;
	return BPF_CLASS(info->opcode) == BPF_ALU &&
	       (info->shape == BRT_SHAPE_ALU_IMM || info->shape == BRT_SHAPE_ALU_REG ||
		info->shape == BRT_SHAPE_ALU_UNARY);
}

static void pass_zext(struct opt *o)
{
	struct jit_state *st = o->st;

	for (size_t pc = 1; pc < st->n; pc++) {
		const struct bpf_insn *in = &st->insns[pc], *prev = &st->insns[pc - 1];
		enum brt_op op = (enum brt_op)o->ops[pc], pop = (enum brt_op)o->ops[pc - 1];

		if (st->plan[pc].kind != PLAN_NONE || st->plan[pc - 1].kind != PLAN_NONE ||
		    o->target[pc])
			continue;
		/* w = w right after a 32-bit write of r: already zero-extended */
		if (op == BRT_OP_mov32_reg && in->dst_reg == in->src_reg && in->off == 0 &&
		    writes_zext(o, pc - 1) && prev->dst_reg == in->dst_reg) {
			st->plan[pc].kind = PLAN_SKIP;
			continue;
		}
		/* r <<= 32; r >>= 32 (s>>= 32): one 32-bit move (movsxd) */
		if (pop == BRT_OP_lsh64_imm && prev->imm == 32 &&
		    (op == BRT_OP_rsh64_imm || op == BRT_OP_arsh64_imm) && in->imm == 32 &&
		    in->dst_reg == prev->dst_reg) {
			st->plan[pc - 1] = (struct jit_plan){
				.kind = op == BRT_OP_rsh64_imm ? PLAN_ZEXT : PLAN_SEXT,
				.dst = prev->dst_reg };
			st->plan[pc].kind = PLAN_SKIP;
		}
	}
}

/* --- constfill ------------------------------------------------------------------------ */

#define FSLOTS 16

/* A stack slot [r10 + off, r10 + off + size) known to hold val (truncated to size). */
struct fslot {
	int16_t off;
	uint8_t size;
	uint64_t val;
};

struct fstate {
	struct cstate c;
	uint8_t ns;
	struct fslot s[FSLOTS];
};

static uint64_t trunc_size(uint64_t v, unsigned size)
{
	return size >= 8 ? v : v & ((1ull << (size * 8)) - 1);
}

static void slots_forget(struct fstate *f, int32_t off, unsigned size)
{
	for (unsigned i = 0; i < f->ns;) {
		if (f->s[i].off < off + (int32_t)size && off < f->s[i].off + f->s[i].size)
			f->s[i] = f->s[--f->ns];
		else
			i++;
	}
}

/* The store at pc (r10 based) and the value it writes, if known. */
static bool store_value(const struct fstate *f, const struct bpf_insn *in, unsigned shape,
			unsigned size, uint64_t *v)
{
	if (shape == BRT_SHAPE_STORE_IMM) {
		*v = trunc_size((uint64_t)(int64_t)in->imm, size);
		return true;
	}
	if (in->src_reg >= BRT_MAX_REGS - 1 || !(f->c.known & (1u << in->src_reg)))
		return false;
	*v = trunc_size(f->c.val[in->src_reg], size);
	return true;
}

static bool slot_holds(const struct fstate *f, int32_t off, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < f->ns; i++)
		if (f->s[i].off == off && f->s[i].size == size && f->s[i].val == v)
			return true;
	return false;
}

static void fstep(const struct opt *o, size_t pc, struct fstate *f)
{
	const struct jit_state *st = o->st;
	const struct bpf_insn *in = &st->insns[pc];
	enum brt_op op = (enum brt_op)o->ops[pc];
	unsigned shape, size;
	uint64_t v;
	bool known;

	if (op == BRT_OP_INVALID)
		return;
	shape = brt_ops[op].shape;
	size = brt_isa_access_size(brt_ops[op].opcode);
	switch (shape) {
	case BRT_SHAPE_STORE_IMM:
	case BRT_SHAPE_STORE_REG:
		if (in->dst_reg != BPF_REG_10) {
			f->ns = 0; /* it may point into the stack */
			break;
		}
		known = store_value(f, in, shape, size, &v);
		slots_forget(f, in->off, size);
		if (known && in->off >= -BRT_STACK_SIZE && in->off + (int32_t)size <= 0 &&
		    f->ns < FSLOTS)
			f->s[f->ns++] = (struct fslot){ .off = in->off, .size = (uint8_t)size,
							.val = v };
		break;
	case BRT_SHAPE_ATOMIC:
		if (in->dst_reg != BPF_REG_10)
			f->ns = 0;
		else
			slots_forget(f, in->off, size);
		break;
	case BRT_SHAPE_CALL:
	case BRT_SHAPE_CALLX:
	case BRT_SHAPE_CALL_LOCAL:
		f->ns = 0; /* a helper or callee may write the stack through a pointer */
		break;
	default:
		break;
	}
	/* another pass's plan may leave registers the original writes unwritten (a rotate's
	 * dead temporaries): nothing is known of what such instructions write */
	if (st->plan[pc].kind != PLAN_NONE) {
		struct brt_isa_regs r;

		brt_isa_regs_op(in, op, &r);
		f->c.known &= (uint16_t)~r.def;
	} else if (shape == BRT_SHAPE_CALLX || shape == BRT_SHAPE_CALL_LOCAL) {
		f->c.known = 0; /* an unverified callee may leave any register changed */
	} else {
		cstep(st, o->ops, pc, &f->c);
	}
}

/* merge src into *dst; true when *dst changed */
static bool fmerge(struct fstate *dst, const struct fstate *src)
{
	bool changed;

	if (!dst->c.reached) {
		*dst = *src;
		return true;
	}
	changed = cmerge(&dst->c, &src->c);
	for (unsigned i = 0; i < dst->ns;) {
		if (!slot_holds(src, dst->s[i].off, dst->s[i].size, dst->s[i].val)) {
			dst->s[i] = dst->s[--dst->ns];
			changed = true;
		} else {
			i++;
		}
	}
	return changed;
}

/* Instruction pc writes what state f says is already there. */
static bool redundant(const struct opt *o, size_t pc, const struct fstate *f)
{
	const struct bpf_insn *in = &o->st->insns[pc];
	enum brt_op op = (enum brt_op)o->ops[pc];
	unsigned d = in->dst_reg, shape = brt_ops[op].shape, size;
	uint64_t v;

	if (op == BRT_OP_mov64_imm || op == BRT_OP_mov32_imm ||
	    (op == BRT_OP_lddw && in->src_reg == 0)) {
		if (d >= BPF_REG_10 || !(f->c.known & (1u << d)))
			return false;
		v = op == BRT_OP_mov64_imm   ? (uint64_t)(int64_t)in->imm
		    : op == BRT_OP_mov32_imm ? (uint32_t)in->imm
					     : brt_isa_lddw_value(in, pc);
		return f->c.val[d] == v;
	}
	if ((shape == BRT_SHAPE_STORE_IMM || shape == BRT_SHAPE_STORE_REG) && d == BPF_REG_10) {
		size = brt_isa_access_size(brt_ops[op].opcode);
		return store_value(f, in, shape, size, &v) && slot_holds(f, in->off, size, v);
	}
	return false;
}

/* --- constkey: which registers hold r10 + a constant (within one straight run) -------- */

/* Registers known to hold r10 + off[r]; r10 itself is, with 0.  Only from the start of a
 * straight run (reset at every target), so no merge is needed: clang computes the key's
 * address just before the call. */
struct fpstate {
	uint16_t known;
	bool after_lea; /* the instruction before was a PLAN_LEA: this is its folded add */
	int64_t off[BRT_MAX_REGS];
};

static bool fp_reg(const struct fpstate *p, unsigned r, int64_t *off)
{
	if (r == BPF_REG_10) {
		*off = 0;
		return true;
	}
	if (r >= BRT_MAX_REGS || !(p->known & (1u << r)))
		return false;
	*off = p->off[r];
	return true;
}

static void fp_set(struct fpstate *p, unsigned r, bool known, int64_t off)
{
	if (r >= BPF_REG_10)
		return;
	if (known && off >= -(1 << 20) && off <= (1 << 20)) {
		p->known |= (uint16_t)(1u << r);
		p->off[r] = off;
	} else {
		p->known &= (uint16_t)~(1u << r);
	}
}

/* Instruction pc as emitted (its plan, if any), run on p. */
static void fp_step(const struct opt *o, size_t pc, struct fpstate *p)
{
	const struct jit_state *st = o->st;
	const struct bpf_insn *in = &st->insns[pc];
	enum brt_op op = (enum brt_op)o->ops[pc];
	const struct jit_plan *pl = &st->plan[pc];
	struct brt_isa_regs r;
	int64_t v = 0;
	bool after_lea = p->after_lea;

	p->after_lea = false;
	if (op == BRT_OP_INVALID)
		return;
	if (pl->kind == PLAN_LEA) { /* the copy and the add at once */
		bool known = pl->w64 && fp_reg(p, pl->src, &v);

		fp_set(p, pl->dst, known, v + pl->imm);
		p->after_lea = true;
		return;
	}
	if (after_lea) /* the lea's add, already counted */
		return;
	brt_isa_regs_op(in, op, &r);
	if (pl->kind != PLAN_NONE) { /* a rotate's window, a dropped move: no address */
		for (unsigned i = 0; i < BPF_REG_10; i++)
			if (r.def & (1u << i))
				fp_set(p, i, false, 0);
		return;
	}
	if (op == BRT_OP_mov64_reg && in->off == 0) {
		bool known = fp_reg(p, in->src_reg, &v);

		fp_set(p, in->dst_reg, known, v);
		return;
	}
	if ((op == BRT_OP_add64_imm || op == BRT_OP_sub64_imm) && fp_reg(p, in->dst_reg, &v)) {
		fp_set(p, in->dst_reg, true,
		       op == BRT_OP_add64_imm ? v + in->imm : v - (int64_t)in->imm);
		return;
	}
	for (unsigned i = 0; i < BPF_REG_10; i++)
		if (r.def & (1u << i))
			fp_set(p, i, false, 0);
}

/* The bytes [off, off + size) of the stack as state f knows them, if it knows each. */
static bool slots_bytes(const struct fstate *f, int64_t off, unsigned size, uint8_t *out)
{
	for (unsigned b = 0; b < size; b++) {
		int64_t at = off + b;
		bool got = false;

		for (unsigned i = 0; i < f->ns && !got; i++) {
			const struct fslot *sl = &f->s[i];

			if (at >= sl->off && at < sl->off + sl->size) {
				out[b] = (uint8_t)(sl->val >> (8 * (at - sl->off)));
				got = true;
			}
		}
		if (!got)
			return false;
	}
	return true;
}

/* Call pc is a bound hash probe and r2 points at key bytes f knows: record them. */
static void constkey_at(struct opt *o, size_t pc, const struct fstate *f,
			const struct fpstate *p)
{
	struct jit_state *st = o->st;
	const struct brt_jit_hash_layout *h;
	struct jit_ckey *ck;
	int64_t off;

	if (o->ops[pc] != BRT_OP_call_helper || !(h = brt_jit_probe_layout(st, pc)) ||
	    h->key_size > JIT_CKEY_MAX || !fp_reg(p, BPF_REG_2, &off) ||
	    off < -BRT_STACK_SIZE || off + h->key_size > 0)
		return;
	ck = realloc(st->ckeys, (st->nckeys + 1) * sizeof(*ck));
	if (!ck)
		return;
	st->ckeys = ck;
	ck += st->nckeys;
	memset(ck, 0, sizeof(*ck));
	if (!slots_bytes(f, off, h->key_size, ck->key))
		return;
	ck->pc = pc;
	ck->hash = brt_keyhash(ck->key, h->key_size, h->seed);
	st->nckeys++;
	st->prog->lookup_kind[pc] |= LOOKUP_CONST_KEY;
}

/* fill: pass constfill's drops; keys: pass constkey's keys (one dataflow for both) */
static void pass_constfill(struct opt *o, bool fill, bool keys)
{
	struct jit_state *st = o->st;
	struct fstate *tin;
	uint32_t *tix, nt = 0;
	bool settled = false;

	/* states at targets only: a program of many instructions has few of them */
	tix = malloc((st->n + 1) * sizeof(*tix));
	if (!tix)
		return;
	for (size_t pc = 0; pc <= st->n; pc++)
		tix[pc] = o->target[pc] ? nt++ : UINT32_MAX;
	tin = calloc(nt ? nt : 1, sizeof(*tin));
	if (!tin) {
		free(tix);
		return;
	}
	for (int sweep = 0; sweep < 32 && !settled; sweep++) {
		settled = true;
		for (size_t k = 0; k < st->nfuncs; k++) {
			const struct jit_func *f = &st->funcs[k];
			struct fstate cur = { .c.reached = true };

			tin[tix[f->start]].c.reached = true; /* entry: nothing known */
			for (size_t pc = f->start; pc < f->end; pc++) {
				enum brt_op op = (enum brt_op)o->ops[pc];

				if (o->target[pc]) {
					if (cur.c.reached && pc != f->start &&
					    fmerge(&tin[tix[pc]], &cur))
						settled = false;
					cur = tin[tix[pc]];
				}
				if (!cur.c.reached || op == BRT_OP_INVALID)
					continue;
				fstep(o, pc, &cur);
				if (is_branch(op)) {
					int64_t t = brt_isa_jump_target(&st->insns[pc], op, pc);

					if (t >= 0 && (size_t)t <= st->n && fmerge(&tin[tix[t]], &cur))
						settled = false;
				}
				if (is_ja(op) || op == BRT_OP_exit)
					cur.c.reached = false;
			}
		}
	}
	/* the states settled: drop what rewrites a known value (the drop changes no state);
	 * constkey: note the keys of bound hash lookups */
	for (size_t k = 0; settled && k < st->nfuncs; k++) {
		const struct jit_func *f = &st->funcs[k];
		struct fstate cur = { .c.reached = false };
		struct fpstate fp = { 0 };

		for (size_t pc = f->start; pc < f->end; pc++) {
			enum brt_op op = (enum brt_op)o->ops[pc];
			bool drop;

			if (o->target[pc]) {
				cur = pc == f->start ? (struct fstate){ .c.reached = true }
						     : tin[tix[pc]];
				fp = (struct fpstate){ 0 };
			}
			if (!cur.c.reached || op == BRT_OP_INVALID)
				continue;
			drop = fill && st->plan[pc].kind == PLAN_NONE && redundant(o, pc, &cur);
			if (keys)
				constkey_at(o, pc, &cur, &fp);
			fstep(o, pc, &cur); /* as the sweeps saw it: before the plan changes */
			if (drop)
				st->plan[pc].kind = PLAN_SKIP;
			fp_step(o, pc, &fp);
			if (is_ja(op) || op == BRT_OP_exit)
				cur.c.reached = false;
		}
	}
	free(tin);
	free(tix);
}

/* --- lea ------------------------------------------------------------------------------ */

static void pass_lea(struct opt *o)
{
	struct jit_state *st = o->st;

	if (st->blind_seed) /* the added constant would appear verbatim in the lea */
		return;
	for (size_t pc = 0; pc + 1 < st->n; pc++) {
		const struct bpf_insn *mv = &st->insns[pc], *ad = &st->insns[pc + 1];
		enum brt_op op = (enum brt_op)o->ops[pc], aop = (enum brt_op)o->ops[pc + 1];
		bool w64 = op == BRT_OP_mov64_reg;

		/* only base + displacement: lea base + index takes 2 cycles on AMD's cores
		 * (the loop workload's accumulator got 13 % slower), where the copy it
		 * replaces is free (move elimination) and the add takes one */
		if ((op != BRT_OP_mov64_reg && op != BRT_OP_mov32_reg) || mv->off != 0 ||
		    aop != (w64 ? BRT_OP_add64_imm : BRT_OP_add32_imm) ||
		    st->plan[pc].kind != PLAN_NONE || st->plan[pc + 1].kind != PLAN_NONE ||
		    o->target[pc + 1] || mv->dst_reg == mv->src_reg || ad->dst_reg != mv->dst_reg)
			continue;
		st->plan[pc] = (struct jit_plan){ .kind = PLAN_LEA, .w64 = w64, .dst = mv->dst_reg,
						  .src = mv->src_reg, .imm = ad->imm };
		st->plan[pc + 1].kind = PLAN_SKIP;
		pc++;
	}
}

/* --- jumpfold and align: the layout of branches ------------------------------------------ */

/* Pass jumpfold: clang leaves `if c goto +1; goto T` where the likely side is T (the
 * ja is the fall-through it could not invert); one inverted conditional jump to T does
 * the same with one jump fewer, and the path to pc + 2 falls through.  Only when the ja
 * is no jump target (a jump landing on it would now fall into pc + 2) and both jumps go
 * forward (a backward one may carry the run budget's charge). */
static void pass_jumpfold(struct opt *o)
{
	struct jit_state *st = o->st;

	for (size_t pc = 0; pc + 1 < st->n; pc++) {
		enum brt_op op = (enum brt_op)o->ops[pc], next = (enum brt_op)o->ops[pc + 1];
		unsigned shape;
		int64_t t;

		if (op == BRT_OP_INVALID || next == BRT_OP_INVALID || !is_ja(next) ||
		    o->target[pc + 1] || st->plan[pc].kind != PLAN_NONE ||
		    st->plan[pc + 1].kind != PLAN_NONE)
			continue;
		shape = brt_ops[op].shape;
		if ((shape != BRT_SHAPE_JMP_IMM && shape != BRT_SHAPE_JMP_REG) ||
		    st->insns[pc].off != 1)
			continue;
		t = brt_isa_jump_target(&st->insns[pc + 1], next, pc + 1);
		if (t <= (int64_t)pc + 1)
			continue;
		st->plan[pc].kind = PLAN_JINV;
		st->plan[pc].imm = (int32_t)(t - (int64_t)pc);
		st->plan[pc + 1].kind = PLAN_SKIP;
	}
}

/* Pass eqset: clang tests `x == K1 || x == K2 || x == K3` as `if x == K1 goto L; if x ==
 * K2 goto L; [r = imm;] if x != K3 goto M; L:`, a branch per test, each mispredicted
 * when x varies (TCP or UDP at random: half the packets); gcc sets a flag per test and
 * branches once.  Here one predictable path: a bit test of x when two constants or more
 * are below 64, else the product of the x - K or a sete per compare (insn.c, emit_eqset()),
 * into registers dead at L and at M, and one jump to M.  The constant move (clang's zero
 * of the value M reads) is done first, so its register must be dead at L too.  3 or 4
 * compares, all of one register and width, no target inside but L, forward jumps only; not
 * blinded (the compares keep their immediates). */
static void pass_eqset(struct opt *o)
{
	struct jit_state *st = o->st;

	for (size_t pc = 0; pc + 1 < st->n; pc++) {
		enum brt_op eq = (enum brt_op)o->ops[pc], op;
		const struct bpf_insn *j1 = &st->insns[pc];
		size_t q = pc, ne, l;
		unsigned ncmp = 0, tmp[2], nt = 0, named;
		size_t fk = 0;
		int mov = -1;
		int64_t m;

		if (eq != BRT_OP_jeq_imm && eq != BRT_OP_jeq32_imm)
			continue;
		l = (size_t)brt_isa_jump_target(j1, eq, pc);
		while (q < st->n && ncmp < 3 && o->ops[q] == eq &&
		       st->insns[q].dst_reg == j1->dst_reg &&
		       (size_t)brt_isa_jump_target(&st->insns[q], eq, q) == l &&
		       (q == pc || !o->target[q]))
			q++, ncmp++;
		/* Three compares or more: a pair (`x == K1 || x != K2`: the 802.1Q/802.1ad
		 * test) stays two macro-fused compares, 2 macro-ops resolved a cycle after x,
		 * where its product is 4 (lea, lea, imul, test+jcc) resolved 5 cycles after: on
		 * the 16k mix row, whose next branch (IPv4 or IPv6) mispredicts every other
		 * packet, jit-xdp ran 0.4 ns a packet slower with the pair's product (session
		 * 24), and a pair's one branch saves at most one mispredict. */
		if (ncmp < 2)
			continue;
		if (q + 1 < st->n && (o->ops[q] == BRT_OP_mov64_imm || o->ops[q] == BRT_OP_mov32_imm) &&
		    !o->target[q] && st->insns[q].dst_reg != j1->dst_reg)
			mov = (int)q++;
		ne = q;
		if (ne >= st->n || o->target[ne] || l != ne + 1)
			continue;
		op = (enum brt_op)o->ops[ne];
		if (op != (eq == BRT_OP_jeq_imm ? BRT_OP_jne_imm : BRT_OP_jne32_imm) ||
		    st->insns[ne].dst_reg != j1->dst_reg)
			continue;
		m = brt_isa_jump_target(&st->insns[ne], op, ne);
		if (m <= (int64_t)l)
			continue;
		for (size_t i = pc; i <= ne && mov >= -1; i++)
			if (st->plan[i].kind != PLAN_NONE)
				mov = -2;
		if (mov == -2 || (mov >= 0 && !dead_after(o, ne, (uint16_t)(1u << st->insns[mov].dst_reg))))
			continue;
		/* A temporary's x86 register must be one the code may clobber: r0-r5's are
		 * caller-saved (but for r2-r5's holding the packet with pkt_regs, and r1's
		 * its entry's), r6-r9's callee-saved ones are pushed only when the function
		 * names them. */
		named = 0;
		while (fk + 1 < st->nfuncs && st->funcs[fk + 1].start <= pc)
			fk++;
		for (size_t i = st->funcs[fk].start; i < st->funcs[fk].end; i++) {
			struct brt_isa_regs rg;

			if (o->ops[i] == BRT_OP_INVALID)
				continue;
			brt_isa_regs_op(&st->insns[i], (enum brt_op)o->ops[i], &rg);
			named |= rg.named;
		}
		for (unsigned r = 0; r < BPF_REG_10 && nt < 2; r++) {
			uint16_t bit = (uint16_t)(1u << r);

			if (r == j1->dst_reg || (mov >= 0 && r == st->insns[mov].dst_reg))
				continue;
			if ((r >= BPF_REG_6 && !(named & bit)) ||
			    (st->pkt_regs && r >= BPF_REG_1 && r <= BPF_REG_5))
				continue;
			if (dead_after(o, ne, bit) && dead_after(o, (size_t)m - 1, bit))
				tmp[nt++] = r;
		}
		if (nt < 2)
			continue;
		st->plan[pc] = (struct jit_plan){ .kind = PLAN_EQSET, .w64 = eq == BRT_OP_jeq_imm,
						  .dst = j1->dst_reg, .src = (uint8_t)tmp[0],
						  .mreg = (uint8_t)tmp[1], .rol = (uint8_t)(ncmp + 1),
						  .mul = mov >= 0, .imm = (int32_t)(m - (int64_t)pc) };
		for (size_t i = pc + 1; i <= ne; i++)
			st->plan[i].kind = PLAN_SKIP;
		pc = ne;
	}
}

/* Pass align: a jump target that no instruction falls into (the one before it is an exit
 * or a jump that is emitted) starts at a 16-byte boundary when the padding takes at most
 * 10 bytes, else at an 8-byte one, as gcc -O2 aligns such labels (-falign-jumps): the
 * decoder fetches the target's block whole, and the nops in front are never run.  Not
 * function entries (their prologue comes first). */
static int pass_align(struct opt *o)
{
	struct jit_state *st = o->st;

	st->align = calloc(st->n, 1);
	if (!st->align)
		return -ENOMEM;
	for (size_t pc = 1; pc < st->n; pc++) {
		size_t prev = pc - 1;
		enum brt_op op;
		bool entry = false;

		for (size_t k = 0; k < st->nfuncs && !entry; k++)
			entry = st->funcs[k].start == pc;
		if (!o->target[pc] || entry || o->ops[pc] == BRT_OP_INVALID)
			continue;
		op = (enum brt_op)o->ops[prev];
		if (op == BRT_OP_INVALID || st->plan[prev].kind == PLAN_SKIP)
			continue;
		if (op == BRT_OP_exit ||
		    (is_ja(op) && brt_isa_jump_target(&st->insns[prev], op, prev) != (int64_t)pc))
			st->align[pc] = 1;
	}
	return 0;
}

/* --- driver and emission -------------------------------------------------------------- */

int brt_jit_optimise(struct jit_state *st, const uint16_t *ops)
{
	struct opt o = { .st = st, .ops = ops, .const_at = const_at, .dead_after = dead_after };
	bool any = false;
	int rc;

	if (!st->passes)
		return 0;
	rc = mark_targets(&o);
	if (!rc)
		rc = ensure_plan(st);
	if (rc) {
		free(o.target);
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
		return rc;
	}
	/* first: the constants they find make loads immediates and decide jumps, and the
	 * code no path reaches is dropped before the other passes match their windows */
	if (st->passes & BRT_JIT_PASS(rodata))
		rc = brt_jit_pass_rodata(&o);
	if (!rc && (st->passes & BRT_JIT_PASS(constjump)))
		rc = brt_jit_pass_constjump(&o);
	if (rc) {
		free(o.target);
		free(o.cin);
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
		return rc;
	}
	if (st->passes & BRT_JIT_PASS(rotate))
		pass_rotate(&o);
	if (st->passes & BRT_JIT_PASS(bswap))
		brt_jit_pass_bswap(&o);
	if (st->passes & BRT_JIT_PASS(zext))
		pass_zext(&o);
	if (st->passes & BRT_JIT_PASS(lea))
		pass_lea(&o);
	if (st->passes & (BRT_JIT_PASS(constfill) | BRT_JIT_PASS(constkey)))
		pass_constfill(&o, st->passes & BRT_JIT_PASS(constfill),
			       (st->passes & BRT_JIT_PASS(constkey)) && st->prog->lookup_kind);
	if (st->passes & BRT_JIT_PASS(jumpfold))
		pass_jumpfold(&o);
	if ((st->passes & BRT_JIT_PASS(eqset)) && !st->blind_seed)
		pass_eqset(&o);
	if ((st->passes & BRT_JIT_PASS(bittest)) && !st->blind_seed)
		brt_jit_pass_bittest(&o);
	if (st->passes & BRT_JIT_PASS(knownbits))
		brt_jit_pass_knownbits(&o);
	if ((st->passes & BRT_JIT_PASS(stackreg)) && !st->blind_seed)
		rc = brt_jit_pass_stackreg(&o);
	if (!rc && (st->passes & BRT_JIT_PASS(align)))
		rc = pass_align(&o);
	if (!rc && (st->passes & BRT_JIT_PASS(prandomreg)))
		rc = brt_jit_pass_prandomreg(&o);
	for (size_t pc = 0; pc < st->n && !any; pc++)
		any = st->plan[pc].kind != PLAN_NONE;
	if (!any) { /* nothing to do: run_pass takes the plain path */
		free(st->plan);
		st->plan = NULL;
	}
	free(o.target);
	free(o.cin);
	if (rc)
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
	return rc;
}

void brt_jit_emit_plan(struct jit_state *st, size_t pc)
{
	const struct jit_plan *p = &st->plan[pc];
	int dst = xreg(st, p->dst);

	switch ((enum jit_plan_kind)p->kind) {
	case PLAN_NONE:
	case PLAN_SKIP:
	case PLAN_JINV: /* jumps: insn.c's jmp_cond */
	case PLAN_EQSET:
	case PLAN_BTJ:
	case PLAN_JMP: /* insn.c's brt_jit_emit_insn */
		break;
	case PLAN_CONST:
		emit_mov_imm64(B, dst, st->consts[p->imm]);
		break;
	case PLAN_MOVBE_LD:
		emit_movbe(B, p->rol, false, dst, mbase(st, p->src), p->imm);
		break;
	case PLAN_MOVBE_ST:
		emit_movbe(B, p->rol, true, xreg(st, p->src), mbase(st, p->dst), p->imm);
		break;
	case PLAN_ROL16:
		emit_rol16_8(B, dst);
		break;
	case PLAN_BT: /* bt k, x: the carry is bit x mod 64 of k */
		emit_0f_rr(B, 0xa3, true, dst, xreg(st, p->src), false);
		break;
	case PLAN_ROTATE:
		if (p->dst != p->src)
			emit_mov_rr(B, p->w64, dst, xreg(st, p->src));
		if (p->mul == MUL_IMM)
			emit_imul_rri(B, p->w64, dst, dst, p->imm);
		else if (p->mul == MUL_REG)
			emit_imul_rr(B, p->w64, dst, xreg(st, p->mreg));
		emit_shift_ri(B, SH_ROL, p->w64, dst, p->rol);
		break;
	case PLAN_ZEXT:
		emit_mov_rr(B, false, dst, dst);
		break;
	case PLAN_SEXT:
		emit_movsxd_rr(B, dst, dst);
		break;
	case PLAN_LEA:
		emit_lea_w(B, p->w64, dst, xreg(st, p->src), p->imm);
		break;
	case PLAN_SLOT_LD:
		emit_mov_rr(B, p->w64, dst, p->mreg);
		break;
	case PLAN_SLOT_ST:
		emit_mov_rr(B, p->w64, p->mreg, xreg(st, p->src));
		break;
	case PLAN_SLOT_STI:
		emit_mov_imm64(B, p->mreg, p->w64 ? (uint64_t)(int64_t)p->imm : (uint32_t)p->imm);
		break;
	}
}
