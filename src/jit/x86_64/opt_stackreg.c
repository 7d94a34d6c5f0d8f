/* opt_stackreg.c - pass `stackreg`: stack slots that never escape live in x86 registers
 * the program leaves free (#17 item 1's spill elimination).
 *
 * clang keeps what does not fit its registers in 4- and 8-byte r10 slots (xdp_flow's
 * six address words: stored on the IPv6 path, reloaded for the hash); each store and
 * load is a memory access where gcc's code keeps the value in a register.  A slot can
 * live in a register when the instructions alone show that nothing but its own loads
 * and stores can see it:
 *   - the program is one function that calls nothing (no helper, bound lookup, inlined
 *     helper, bpf-to-bpf call, callx, tail call, callback, packet load or budget): no
 *     callee can be handed a pointer into the stack, and no frame but this one exists;
 *   - r10 appears only as the base of plain loads (not sign-extending) and stores: a copy
 *     of r10, r10 in an ALU operation, an atomic on the stack or r10 stored anywhere lets
 *     the address escape, and then no slot is kept (the pass does nothing);
 *   - every access that touches one of the slot's bytes is a load or store of exactly
 *     the slot (same offset, same width: 4 or 8 bytes), so the register, holding the
 *     value zero-extended, answers every read of it; the slot lies within r10's 512 bytes;
 *   - on every path from the entry to each of its loads a store to it comes first (a
 *     forward must-dataflow over the function), so no load reads what the frame held
 *     before the run (the register would hold the caller's value, not the frame's);
 *   - no other pass planned its loads and stores (bswap's movbe; a store constfill dropped
 *     counts as no store, but still needs no code: the register holds that constant).
 * The registers: TMP2, AUX and TMP (caller-saved) when no instruction's emitter uses
 * them as scratch (brt_jit_scratch_free()) and pass leafregs did not give them to r6-r9;
 * then callee-saved rbx, r12-r15 and rbp (rbp when r10 is rsp, pass redzone) that no
 * eBPF register maps to, pushed by the prologue and popped at the exit: a slot takes one
 * of those only when a loop (a backward jump's range) accesses it, so that the push and
 * the pop are paid once against accesses paid per round.  Straight-line code gains
 * nothing from them: the mov to or from the register is one instruction as the store or
 * load was, and the push and pop two more every run (xdp_flow's six address words in
 * five pushed registers: its IPv6 path 0.2 ns faster, its IPv4 path 0.1-0.3 ns slower,
 * session 23).  Slots accessed in loops come first, then those with the most accesses.
 * Not under constant blinding (a stored constant would sit in the code verbatim).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit/x86_64/opt.h"
#include "jit/x86_64/x86.h"

#define SR_MAX 64 /* slots considered (one bit each in the dataflow) */

struct sr_slot {
	int16_t off;
	uint8_t size;
	bool bad;
	uint32_t uses; /* loads and stores */
	bool looped;   /* one of them lies in a loop */
};

/* Whether instruction pc (row op) accesses the stack as a plain load or store of r10 +
 * off, size bytes (*store: a store); false for anything else. */
static bool sr_access(const struct bpf_insn *in, enum brt_op op, int16_t *off, unsigned *size,
		      bool *store)
{
	unsigned shape = brt_ops[op].shape, code = brt_ops[op].opcode;

	if (BPF_MODE(code) != BPF_MEM)
		return false;
	*off = in->off;
	*size = brt_isa_access_size(code);
	*store = shape != BRT_SHAPE_LOAD;
	if (shape == BRT_SHAPE_LOAD)
		return in->src_reg == BPF_REG_10 && in->dst_reg != BPF_REG_10;
	if (shape == BRT_SHAPE_STORE_IMM)
		return in->dst_reg == BPF_REG_10;
	if (shape == BRT_SHAPE_STORE_REG)
		return in->dst_reg == BPF_REG_10 && in->src_reg != BPF_REG_10;
	return false;
}

/* One function calling nothing (jit.c's leaf_program(), which the frame passes use). */
static bool sr_leaf(const struct jit_state *st)
{
	const struct jit_func *f = &st->funcs[0];

	return st->nfuncs == 1 && !st->anchor && !st->pkt_regs && !st->budget && !f->has_calls &&
	       !f->callback && !st->uses_callx && !st->uses_tail_call && !st->inline_prandom;
}

/* The slot of access (off, size), added when new; -1 when the table is full. */
static int sr_find(struct sr_slot *s, size_t *ns, int16_t *idx, int16_t off, unsigned size)
{
	unsigned key = (unsigned)(off + BRT_STACK_SIZE) * 4u + (unsigned)__builtin_ctz(size);

	if (idx[key] >= 0)
		return idx[key];
	if (*ns == SR_MAX)
		return -1;
	s[*ns] = (struct sr_slot){ .off = off, .size = (uint8_t)size, .bad = size < 4 };
	idx[key] = (int16_t)*ns;
	return (int)(*ns)++;
}

/* Slots a store of the function surely wrote before each instruction: bits of written
 * slots; clears the bit of a slot in *ok when one of its loads may come first. */
static void sr_written(struct opt *o, const int8_t *slot_of, uint64_t *in, uint64_t *ok)
{
	struct jit_state *st = o->st;
	const struct jit_func *fn = &st->funcs[0];
	bool changed = true;

	for (size_t pc = fn->start; pc < fn->end; pc++)
		in[pc] = ~0ull; /* not reached yet: the merges' identity */
	in[fn->start] = 0;
	while (changed) {
		uint64_t cur = 0;
		bool reached = true;

		changed = false;
		for (size_t pc = fn->start; pc < fn->end; pc++) {
			enum brt_op op = (enum brt_op)o->ops[pc];

			if (o->target[pc] && pc != fn->start) {
				if (reached && (in[pc] & cur) != in[pc]) {
					in[pc] &= cur;
					changed = true;
				}
				cur = in[pc];
				reached = true; /* unreached: cur is all ones, which merges as nothing */
			}
			if (!reached || op == BRT_OP_INVALID)
				continue;
			if (slot_of[pc] >= 0) {
				uint64_t bit = 1ull << slot_of[pc];
				int16_t off;
				unsigned size;
				bool store;

				sr_access(&st->insns[pc], op, &off, &size, &store);
				if (store && st->plan[pc].kind == PLAN_NONE)
					cur |= bit;
				else if (!store && !(cur & bit))
					*ok &= ~bit;
			}
			if (is_branch(op)) {
				size_t t = (size_t)brt_isa_jump_target(&st->insns[pc], op, pc);

				if ((in[t] & cur) != in[t]) {
					in[t] &= cur;
					changed = true;
				}
			}
			if (is_ja(op) || op == BRT_OP_exit) {
				reached = false;
				cur = ~0ull;
			}
		}
	}
}

int brt_jit_pass_stackreg(struct opt *o)
{
	static const uint8_t caller[] = { TMP2, AUX, TMP };
	static const uint8_t callee[] = { RBX, R12, R13, R14, R15, RBP };
	struct jit_state *st = o->st;
	struct jit_func *f = &st->funcs[0];
	struct sr_slot s[SR_MAX];
	int16_t idx[BRT_STACK_SIZE * 4];
	int16_t owner[BRT_STACK_SIZE];
	uint8_t reg_of[SR_MAX];
	int8_t *slot_of;
	uint64_t *in, ok = 0, taken = 0;
	uint16_t used = 0;
	unsigned named = 0;
	bool scratch = true;
	size_t ns = 0, nregs = 0;
	uint8_t regs[sizeof(caller) + sizeof(callee)];
	bool is_callee[sizeof(caller) + sizeof(callee)];

	if (!sr_leaf(st) || st->blind_seed)
		return 0;
	memset(idx, 0xff, sizeof(idx));
	memset(owner, 0xff, sizeof(owner));
	slot_of = malloc(st->n);
	in = malloc(st->n * sizeof(*in));
	if (!slot_of || !in) {
		free(slot_of);
		free(in);
		return -ENOMEM;
	}
	memset(slot_of, 0xff, st->n);
	/* the ranges of backward jumps: in[] counts, per instruction, the loops it is in */
	memset(in, 0, st->n * sizeof(*in));
	for (size_t pc = 0; pc < st->n; pc++) {
		enum brt_op op = (enum brt_op)o->ops[pc];
		size_t t;

		if (op == BRT_OP_INVALID || !is_branch(op))
			continue;
		t = (size_t)brt_isa_jump_target(&st->insns[pc], op, pc);
		if (t <= pc) {
			in[t]++;
			if (pc + 1 < st->n)
				in[pc + 1]--;
		}
	}
	for (size_t pc = 1; pc < st->n; pc++)
		in[pc] += in[pc - 1];
	/* the slots, and whether r10 escapes (then nothing is done) */
	for (size_t pc = 0; pc < st->n; pc++) {
		enum brt_op op = (enum brt_op)o->ops[pc];
		struct brt_isa_regs r;
		int16_t off;
		unsigned size;
		bool store;
		int k;

		if (op == BRT_OP_INVALID)
			continue;
		scratch &= brt_jit_scratch_free(st, op);
		brt_isa_regs_op(&st->insns[pc], op, &r);
		named |= r.named;
		if (!(r.named & (1u << BPF_REG_10)))
			continue;
		if (!sr_access(&st->insns[pc], op, &off, &size, &store) || off < -BRT_STACK_SIZE ||
		    off + (int)size > 0)
			goto out;
		k = sr_find(s, &ns, idx, off, size);
		if (k < 0)
			goto out;
		slot_of[pc] = (int8_t)k;
		s[k].uses++;
		s[k].looped |= in[pc] != 0;
		/* another pass's plan (movbe, a skipped load) stays as it is */
		if (st->plan[pc].kind != PLAN_NONE && !(store && st->plan[pc].kind == PLAN_SKIP))
			s[k].bad = true;
		/* bytes another slot touches too: both stay in memory */
		for (unsigned b = 0; b < size; b++) {
			int16_t *w = &owner[off + BRT_STACK_SIZE + (int)b];

			if (*w == -1) {
				*w = (int16_t)k;
			} else if (*w != k) {
				if (*w >= 0)
					s[*w].bad = true;
				s[k].bad = true;
				*w = -2;
			}
		}
	}
	for (size_t k = 0; k < ns; k++)
		if (!s[k].bad)
			ok |= 1ull << k;
	if (!ok)
		goto out;
	sr_written(o, slot_of, in, &ok);
	/* the free registers: caller-saved ones first (no push) */
	for (unsigned r = 0; r < BPF_REG_10; r++)
		if (named & (1u << r))
			used |= (uint16_t)(1u << st->regmap[r]);
	if (!f->redzone)
		used |= 1u << RBP;
	for (size_t i = 0; scratch && i < sizeof(caller); i++)
		if (!(used & (1u << caller[i]))) {
			is_callee[nregs] = false;
			regs[nregs++] = caller[i];
		}
	for (size_t i = 0; i < sizeof(callee); i++)
		if (!(used & (1u << callee[i])) && !(f->saved & (1u << callee[i]))) {
			is_callee[nregs] = true;
			regs[nregs++] = callee[i];
		}
	/* the slots in loops first, then by accesses, most first (ties: the lower offset) */
	for (size_t r = 0; r < nregs; r++) {
		int best = -1;

		for (size_t k = 0; k < ns; k++)
			if ((ok & ~taken & (1ull << k)) &&
			    (best < 0 || s[k].looped > s[best].looped ||
			     (s[k].looped == s[best].looped &&
			      (s[k].uses > s[best].uses ||
			       (s[k].uses == s[best].uses && s[k].off < s[best].off)))))
				best = (int)k;
		if (best < 0 || (is_callee[r] && !s[best].looped))
			break;
		taken |= 1ull << best;
		reg_of[best] = regs[r];
		if (is_callee[r])
			f->saved |= (uint16_t)(1u << regs[r]);
	}
	for (size_t pc = 0; taken && pc < st->n; pc++) {
		const struct bpf_insn *in1 = &st->insns[pc];
		struct jit_plan *p = &st->plan[pc];
		int k = slot_of[pc];

		if (k < 0 || !(taken & (1ull << k)) || p->kind == PLAN_SKIP)
			continue;
		*p = (struct jit_plan){ .w64 = s[k].size == 8, .mreg = reg_of[k], .dst = in1->dst_reg,
					.src = in1->src_reg, .imm = in1->imm };
		switch (brt_ops[o->ops[pc]].shape) {
		case BRT_SHAPE_LOAD:
			p->kind = PLAN_SLOT_LD;
			break;
		case BRT_SHAPE_STORE_IMM:
			p->kind = PLAN_SLOT_STI;
			break;
		default:
			p->kind = PLAN_SLOT_ST;
			break;
		}
	}
out:
	free(slot_of);
	free(in);
	return 0;
}
