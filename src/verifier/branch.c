/* branch.c - conditional jumps in the verifier: decide a branch when the operands' ranges
 * allow it, otherwise narrow both registers on each side (and NULL / packet-range facts
 * for pointers).  The number domain itself is bounds.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verifier/internal.h"

/* ---- conditional jumps ------------------------------------------------------------------- */
int brt_reg_const(const struct brt_reg *reg, int is32)
{
	return reg->type == SCALAR_VALUE &&
	       (is32 ? brt_tnum_subreg_is_const(reg->var_off) : brt_tnum_is_const(reg->var_off));
}

uint64_t brt_reg_const_val(const struct brt_reg *reg, int is32)
{
	return is32 ? (uint32_t)reg->var_off.value : reg->var_off.value;
}

static int flip_op(int op)
{
	switch (op) {
	case BPF_JGT: return BPF_JLT;
	case BPF_JLT: return BPF_JGT;
	case BPF_JGE: return BPF_JLE;
	case BPF_JLE: return BPF_JGE;
	case BPF_JSGT: return BPF_JSLT;
	case BPF_JSLT: return BPF_JSGT;
	case BPF_JSGE: return BPF_JSLE;
	case BPF_JSLE: return BPF_JSGE;
	default: return op;
	}
}

#define JSET_NOT (BPF_JSET | BPF_X) /* "not JSET": the fall-through of JSET */

static int rev_op(int op)
{
	switch (op) {
	case BPF_JEQ: return BPF_JNE;
	case BPF_JNE: return BPF_JEQ;
	case BPF_JSET: return JSET_NOT;
	case JSET_NOT: return BPF_JSET;
	case BPF_JGT: return BPF_JLE;
	case BPF_JLE: return BPF_JGT;
	case BPF_JGE: return BPF_JLT;
	case BPF_JLT: return BPF_JGE;
	case BPF_JSGT: return BPF_JSLE;
	case BPF_JSLE: return BPF_JSGT;
	case BPF_JSGE: return BPF_JSLT;
	default: return BPF_JSGE; /* BPF_JSLT */
	}
}

struct view {
	struct tnum t;
	uint64_t umin, umax;
	int64_t smin, smax;
};

static struct view view_of(const struct brt_reg *r, int is32)
{
	if (is32)
		return (struct view){ brt_tnum_subreg(r->var_off), r->u32_min, r->u32_max,
				      r->s32_min, r->s32_max };
	return (struct view){ r->var_off, r->umin, r->umax, r->smin, r->smax };
}

static int scalar_branch_taken(const struct brt_reg *r1, const struct brt_reg *r2, int op,
			       int is32)
{
	struct view a = view_of(r1, is32), b = view_of(r2, is32);

	switch (op) {
	case BPF_JEQ:
	case BPF_JNE: {
		int ne = -1;

		if (brt_tnum_is_const(a.t) && brt_tnum_is_const(b.t))
			ne = a.t.value != b.t.value;
		/* 6.18's tnum_overlap(): a bit known in both, with different values (a
		 * multiple of 8 against 20: Calico's calico_xdp_main) */
		else if (!brt_tnum_overlap(a.t, b.t))
			ne = 1;
		else if (a.umin > b.umax || a.umax < b.umin || a.smin > b.smax || a.smax < b.smin)
			ne = 1;
		else if (!is32 && (r1->u32_min > r2->u32_max || r1->u32_max < r2->u32_min ||
				   r1->s32_min > r2->s32_max || r1->s32_max < r2->s32_min))
			ne = 1;
		if (ne < 0)
			return -1;
		return op == BPF_JNE ? ne : !ne;
	}
	case BPF_JSET:
		if (!brt_reg_const(r2, is32)) {
			struct view t = a;

			a = b;
			b = t;
			if (!brt_reg_const(r1, is32))
				return -1;
		}
		if ((~a.t.mask & a.t.value) & b.t.value)
			return 1;
		if (!((a.t.mask | a.t.value) & b.t.value))
			return 0;
		return -1;
	case BPF_JGT: return a.umin > b.umax ? 1 : a.umax <= b.umin ? 0 : -1;
	case BPF_JSGT: return a.smin > b.smax ? 1 : a.smax <= b.smin ? 0 : -1;
	case BPF_JLT: return a.umax < b.umin ? 1 : a.umin >= b.umax ? 0 : -1;
	case BPF_JSLT: return a.smax < b.smin ? 1 : a.smin >= b.smax ? 0 : -1;
	case BPF_JGE: return a.umin >= b.umax ? 1 : a.umax < b.umin ? 0 : -1;
	case BPF_JSGE: return a.smin >= b.smax ? 1 : a.smax < b.smin ? 0 : -1;
	case BPF_JLE: return a.umax <= b.umin ? 1 : a.umin > b.umax ? 0 : -1;
	case BPF_JSLE: return a.smax <= b.smin ? 1 : a.smin > b.smax ? 0 : -1;
	}
	return -1;
}

static int is_pkt(const struct brt_reg *r)
{
	return r->type == PTR_TO_PACKET || r->type == PTR_TO_PACKET_META ||
	       r->type == PTR_TO_PACKET_END;
}

static int ptr_not_null(const struct brt_reg *r)
{
	if (r->type & PTR_MAYBE_NULL)
		return 0;
	switch (BASE_TYPE(r->type)) {
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MAP_KEY:
	case CONST_PTR_TO_MAP: /* an lddw of a map is never NULL: "if map == 0" is decided */
	case PTR_TO_SOCKET:
	case PTR_TO_SOCK_COMMON:
	case PTR_TO_TCP_SOCK:
		return 1;
	case PTR_TO_MEM:
		/* memory a kernel pointer field points to (rdonly_untrusted_mem, loaded
		 * through BTF) may be NULL: both ways are walked */
		return !(r->type & PTR_UNTRUSTED);
	case PTR_TO_BTF_ID:
		/* a trusted kernel object (is_trusted_reg(): referenced, or flagged trusted,
		 * allocated or a non-owning reference, with no unsafe flag), such as an
		 * open-coded iterator's element */
		return brt_reg_is_trusted(r);
	default:
		return 0;
	}
}

static int branch_taken(const struct brt_reg *r1, const struct brt_reg *r2, int op, int is32)
{
	if (is_pkt(r1) && is_pkt(r2) && !is32) {
		const struct brt_reg *pkt;

		if (r2->type == PTR_TO_PACKET_END) {
			pkt = r1;
		} else if (r1->type == PTR_TO_PACKET_END) {
			pkt = r2;
			op = flip_op(op);
		} else {
			return -1;
		}
		if (pkt->range >= 0)
			return -1;
		if ((op == BPF_JLE || op == BPF_JGT) && pkt->range == BEYOND_PKT_END)
			return op == BPF_JGT;
		if (op == BPF_JLT || op == BPF_JGE)
			return op == BPF_JGE;
		return -1;
	}
	if (brt_is_pointer(r1) || brt_is_pointer(r2)) {
		if (!brt_reg_const(r2, is32)) {
			const struct brt_reg *t = r1;

			r1 = r2;
			r2 = t;
			op = flip_op(op);
		}
		if (!brt_reg_const(r2, is32) || !ptr_not_null(r1) || brt_reg_const_val(r2, is32))
			return -1;
		return op == BPF_JEQ ? 0 : op == BPF_JNE ? 1 : -1;
	}
	return scalar_branch_taken(r1, r2, op, is32);
}

static void swap_regs(struct brt_reg **a, struct brt_reg **b)
{
	struct brt_reg *t = *a;

	*a = *b;
	*b = t;
}

/* Narrow r1 and r2 given that "r1 op r2" holds. */
static void refine(struct brt_reg *r1, struct brt_reg *r2, int op, int is32)
{
	uint64_t val;
	struct tnum t;

	if (op == BPF_JGE || op == BPF_JGT || op == BPF_JSGE || op == BPF_JSGT) {
		op = flip_op(op);
		swap_regs(&r1, &r2);
	}
	switch (op) {
	case BPF_JEQ:
		if (is32) {
			r1->u32_min = r2->u32_min = max_u32(r1->u32_min, r2->u32_min);
			r1->u32_max = r2->u32_max = min_u32(r1->u32_max, r2->u32_max);
			r1->s32_min = r2->s32_min = max_s32(r1->s32_min, r2->s32_min);
			r1->s32_max = r2->s32_max = min_s32(r1->s32_max, r2->s32_max);
			t = brt_tnum_intersect(brt_tnum_subreg(r1->var_off),
					       brt_tnum_subreg(r2->var_off));
			r1->var_off = brt_tnum_with_subreg(r1->var_off, t);
			r2->var_off = brt_tnum_with_subreg(r2->var_off, t);
		} else {
			r1->umin = r2->umin = max_u64(r1->umin, r2->umin);
			r1->umax = r2->umax = min_u64(r1->umax, r2->umax);
			r1->smin = r2->smin = max_s64(r1->smin, r2->smin);
			r1->smax = r2->smax = min_s64(r1->smax, r2->smax);
			r1->var_off = r2->var_off = brt_tnum_intersect(r1->var_off, r2->var_off);
		}
		break;
	case BPF_JNE:
		if (!brt_reg_const(r2, is32))
			swap_regs(&r1, &r2);
		if (!brt_reg_const(r2, is32))
			break;
		val = brt_reg_const_val(r2, is32);
		if (is32) {
			if (r1->u32_min == (uint32_t)val)
				r1->u32_min++;
			if (r1->u32_max == (uint32_t)val)
				r1->u32_max--;
			if (r1->s32_min == (int32_t)val)
				r1->s32_min++;
			if (r1->s32_max == (int32_t)val)
				r1->s32_max--;
		} else {
			if (r1->umin == val)
				r1->umin++;
			if (r1->umax == val)
				r1->umax--;
			if (r1->smin == (int64_t)val)
				r1->smin++;
			if (r1->smax == (int64_t)val)
				r1->smax--;
		}
		break;
	case BPF_JSET:
	case JSET_NOT:
		if (!brt_reg_const(r2, is32))
			swap_regs(&r1, &r2);
		if (!brt_reg_const(r2, is32))
			break;
		val = brt_reg_const_val(r2, is32);
		if (op == BPF_JSET) {
			/* only a single tested bit tells which bit is set */
			if (!val || (val & (val - 1)))
				break;
			t = brt_tnum_const(val);
			if (is32)
				r1->var_off = brt_tnum_with_subreg(
					r1->var_off, brt_tnum_or(brt_tnum_subreg(r1->var_off), t));
			else
				r1->var_off = brt_tnum_or(r1->var_off, t);
		} else {
			t = brt_tnum_const(~val);
			if (is32)
				r1->var_off = brt_tnum_with_subreg(
					r1->var_off, brt_tnum_and(brt_tnum_subreg(r1->var_off), t));
			else
				r1->var_off = brt_tnum_and(r1->var_off, t);
		}
		break;
	case BPF_JLE:
		if (is32) {
			r1->u32_max = min_u32(r1->u32_max, r2->u32_max);
			r2->u32_min = max_u32(r1->u32_min, r2->u32_min);
		} else {
			r1->umax = min_u64(r1->umax, r2->umax);
			r2->umin = max_u64(r1->umin, r2->umin);
		}
		break;
	case BPF_JLT:
		if (is32) {
			r1->u32_max = min_u32(r1->u32_max, r2->u32_max - 1);
			r2->u32_min = max_u32(r1->u32_min + 1, r2->u32_min);
		} else {
			r1->umax = min_u64(r1->umax, r2->umax - 1);
			r2->umin = max_u64(r1->umin + 1, r2->umin);
		}
		break;
	case BPF_JSLE:
		if (is32) {
			r1->s32_max = min_s32(r1->s32_max, r2->s32_max);
			r2->s32_min = max_s32(r1->s32_min, r2->s32_min);
		} else {
			r1->smax = min_s64(r1->smax, r2->smax);
			r2->smin = max_s64(r1->smin, r2->smin);
		}
		break;
	case BPF_JSLT:
		if (is32) {
			r1->s32_max = min_s32(r1->s32_max, r2->s32_max - 1);
			r2->s32_min = max_s32(r1->s32_min + 1, r2->s32_min);
		} else {
			r1->smax = min_s64(r1->smax, r2->smax - 1);
			r2->smin = max_s64(r1->smin + 1, r2->smin);
		}
		break;
	}
}

static void set_min_max(struct brt_reg *t1, struct brt_reg *t2, struct brt_reg *f1,
			struct brt_reg *f2, int op, int is32)
{
	if (f1->type != SCALAR_VALUE || f2->type != SCALAR_VALUE)
		return;
	refine(f1, f2, rev_op(op), is32);
	brt_reg_bounds_sync(f1);
	brt_reg_bounds_sync(f2);
	refine(t1, t2, op, is32);
	brt_reg_bounds_sync(t1);
	brt_reg_bounds_sync(t2);
}

/* Every register (and spilled register) of a state, for "all copies of this pointer". */
#define FOR_EACH_REG(st, reg, body)                                                    \
	for (int fi_ = 0; fi_ <= (st)->curframe; fi_++) {                              \
		struct brt_frame *f_ = (st)->frame[fi_];                               \
		for (int ri_ = 0; ri_ < BRT_NREGS; ri_++) {                            \
			struct brt_reg *reg = &f_->regs[ri_];                          \
			body;                                                          \
		}                                                                      \
		for (int si_ = 0; si_ < f_->allocated_stack / 8; si_++) {              \
			if (!brt_is_spilled(&f_->stack[si_]))                          \
				continue;                                              \
			struct brt_reg *reg = &f_->stack[si_].spilled;                 \
			body;                                                          \
		}                                                                      \
	}

static void mark_ptr_or_null(struct brt_env *env, struct brt_vstate *st, int regno,
			     int is_null)
{
	struct brt_reg *r = &st->frame[st->curframe]->regs[regno];
	uint32_t id = r->id, ref = r->ref_obj_id;

	/* NULL: nothing was acquired, so there is nothing to release */
	if (ref && ref == id && is_null)
		brt_release_ref_state(st, id);
	FOR_EACH_REG(st, reg, {
		if ((reg->type & PTR_MAYBE_NULL) && reg->id == id) {
			if (is_null) {
				reg->type = SCALAR_VALUE;
				brt_mark_reg_known(reg, 0);
				reg->id = 0;
				reg->ref_obj_id = 0;
			} else {
				reg->type &= ~PTR_MAYBE_NULL;
				/* a value with a bpf_spin_lock keeps the id: the lock is
				 * released through the same pointer (helper_args.c) */
				if (!(BASE_TYPE(reg->type) == PTR_TO_MAP_VALUE &&
				      (env->maps[reg->map_idx].info.spin_lock_off1 ||
				       env->maps[reg->map_idx].info.res_spin_lock_off1)) &&
				    !brt_graph_may_lock(env, reg))
					reg->id = 0;
				/* a sockmap/sockhash element is a socket (mark_ptr_not_null_reg()) */
				if (reg->type == PTR_TO_MAP_VALUE &&
				    (env->maps[reg->map_idx].info.type == BPF_MAP_TYPE_SOCKMAP ||
				     env->maps[reg->map_idx].info.type == BPF_MAP_TYPE_SOCKHASH)) {
					reg->type = PTR_TO_SOCKET;
					reg->map_idx++; /* a socket's map (internal.h) */
				}
			}
		}
	})
}

static void find_good_pkt_pointers(struct brt_vstate *st, const struct brt_reg *dst, int open)
{
	int new_range;

	if (dst->off < 0 || (dst->off == 0 && open))
		return;
	if (dst->umax > BRT_MAX_PACKET_OFF || dst->umax + (uint64_t)dst->off > BRT_MAX_PACKET_OFF)
		return;
	new_range = dst->off + (open ? 1 : 0);
	uint32_t type = dst->type, id = dst->id;

	FOR_EACH_REG(st, reg, {
		if (reg->type == type && reg->id == id && reg->range < new_range)
			reg->range = new_range;
	})
}

static void mark_pkt_end(struct brt_vstate *st, int regno, int open)
{
	struct brt_reg *r = &st->frame[st->curframe]->regs[regno];

	if (r->type == PTR_TO_PACKET)
		r->range = open ? BEYOND_PKT_END : AT_PKT_END;
}

static int init_pkt(const struct brt_reg *r, uint32_t type)
{
	return r->type == type && r->off == 0 && brt_tnum_equals_const(r->var_off, 0);
}

/* this = fall-through state, other = jump-taken state */
static int match_pkt_pointers(const struct bpf_insn *insn, const struct brt_reg *d,
			      const struct brt_reg *s, struct brt_vstate *this_st,
			      struct brt_vstate *other)
{
	int op = BPF_OP(insn->code), dl, sl;
	const struct brt_reg *od, *os;

	if (BPF_SRC(insn->code) != BPF_X || BPF_CLASS(insn->code) == BPF_JMP32)
		return 0;
	/* left: d is a packet pointer checked against end (or meta against data) */
	dl = (d->type == PTR_TO_PACKET && s->type == PTR_TO_PACKET_END) ||
	     (d->type == PTR_TO_PACKET_META && init_pkt(s, PTR_TO_PACKET));
	sl = (d->type == PTR_TO_PACKET_END && s->type == PTR_TO_PACKET) ||
	     (init_pkt(d, PTR_TO_PACKET) && s->type == PTR_TO_PACKET_META);
	if (!dl && !sl)
		return 0;
	od = &other->frame[other->curframe]->regs[insn->dst_reg];
	os = &other->frame[other->curframe]->regs[insn->src_reg];
	(void)od;
	(void)os;
	switch (op) {
	case BPF_JGT:
		if (dl) {
			find_good_pkt_pointers(this_st, d, 0);
			mark_pkt_end(other, insn->dst_reg, 1);
		} else {
			find_good_pkt_pointers(other, s, 1);
			mark_pkt_end(this_st, insn->src_reg, 0);
		}
		break;
	case BPF_JLT:
		if (dl) {
			find_good_pkt_pointers(other, d, 1);
			mark_pkt_end(this_st, insn->dst_reg, 0);
		} else {
			find_good_pkt_pointers(this_st, s, 0);
			mark_pkt_end(other, insn->src_reg, 1);
		}
		break;
	case BPF_JGE:
		if (dl) {
			find_good_pkt_pointers(this_st, d, 1);
			mark_pkt_end(other, insn->dst_reg, 0);
		} else {
			find_good_pkt_pointers(other, s, 0);
			mark_pkt_end(this_st, insn->src_reg, 1);
		}
		break;
	case BPF_JLE:
		if (dl) {
			find_good_pkt_pointers(other, d, 0);
			mark_pkt_end(this_st, insn->dst_reg, 1);
		} else {
			find_good_pkt_pointers(this_st, s, 1);
			mark_pkt_end(other, insn->src_reg, 0);
		}
		break;
	default:
		return 0;
	}
	return 1;
}

/* Scalars sharing an id are copies: what one branch learns about one holds for all. */
/* reg is known's linked value plus its own offset less known's (an unflagged one's is 0) */
static void sync_one(struct brt_reg *reg, const struct brt_reg *known)
{
	int64_t delta;

	if (reg == known || reg->type != SCALAR_VALUE ||
	    (reg->id & ~BRT_ADD_CONST) != (known->id & ~BRT_ADD_CONST))
		return;
	/* one linked by a 32-bit add, the other by a 64-bit one: the offsets do not relate
	 * the two values (one wrapped at 2^32, the other not) */
	if (((reg->id ^ known->id) & BRT_ADD_CONST) == BRT_ADD_CONST)
		return;
	/* neither linked by an add, or both at the same offset: a copy of known, its id's
	 * add flag and offset too (6.18.44's copy_register_state() here: a register linked
	 * plainly takes the flag of an added one at offset 0, `id=4+0`, and unlinks at its
	 * next add; later kernels keep the register's own id) */
	if ((!(reg->id & BRT_ADD_CONST) && !(known->id & BRT_ADD_CONST)) ||
	    reg->off == known->off) {
		*reg = *known;
		return;
	}
	delta = (int64_t)(reg->id & BRT_ADD_CONST ? reg->off : 0) -
		(known->id & BRT_ADD_CONST ? known->off : 0);
	uint32_t id = reg->id;
	int32_t off = reg->off;

	*reg = *known;
	reg->id = id;
	reg->off = off;
	/* with a 32-bit link on either side the value is the low half of the sum,
	 * zero-extended */
	if (delta)
		brt_scalar_add_const(reg, delta, !!((id | known->id) & BRT_ADD_CONST32));
}

/* What a branch learnt about known holds for the scalars linked to it: the live registers
 * and spilled scalars brt_hist_linked() kept the id of (the kernel's sync_linked_regs()
 * over what collect_linked_regs() found) */
static void sync_linked(struct brt_env *env, struct brt_vstate *st, const struct brt_reg *known)
{
	if (known->type != SCALAR_VALUE || !known->id)
		return;
	for (int fr = st->curframe; fr >= 0; fr--) {
		struct brt_frame *f = st->frame[fr];
		uint16_t live = brt_frame_live_regs(env, st, fr);

		for (int r = 0; r < BPF_REG_10; r++)
			if (live & (1u << r))
				sync_one(&f->regs[r], known);
		for (int s = 0; s < f->allocated_stack / 8; s++)
			if (brt_is_spilled(&f->stack[s]))
				sync_one(&f->stack[s].spilled, known);
	}
}

int brt_is_may_goto(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BRT_JCOND) && insn->src_reg == BRT_MAY_GOTO;
}

/* may_goto (the kernel's check_cond_jmp_op() for BPF_JCOND): at run time it jumps once
 * the function's hidden counter is spent, so both ways are walked: the jump first, the
 * fall-through (another iteration) queued one may_goto deeper.  The depth lets
 * is_state_visited() take an iteration that repeats an earlier one as covered instead of
 * as an infinite loop (prune.c); scalars that changed since the previous iteration and
 * cannot matter are widened in the queued state, so the iterations converge. */
int brt_check_may_goto(struct brt_env *env, const struct bpf_insn *insn, int *insn_idx)
{
	struct brt_vstate *queued, *prev;
	int idx = *insn_idx, err;

	if (!brt_is_may_goto(insn) || insn->dst_reg || insn->imm) {
		brt_verr(env, "invalid may_goto imm %d\n", insn->imm);
		return -EINVAL;
	}
	/* the previous iteration's state here: the newest stored before the one this visit
	 * may just have stored (the kernel's find_prev_entry() from cur->parent) */
	prev = env->cur->parent ? brt_prev_entry(env->cur->parent, idx) : NULL;
	err = brt_push_stack(env, idx + 1, idx, &queued);
	if (err)
		return err;
	queued->may_goto_depth++;
	if (prev)
		brt_widen_imprecise(env, prev, queued, idx);
	*insn_idx += insn->off;
	return 0;
}

int brt_check_cond_jmp(struct brt_env *env, const struct bpf_insn *insn, int *insn_idx)
{
	struct brt_vstate *this_st = env->cur, *other;
	struct brt_reg *regs = brt_cur_regs(env), *dst, *src, *oregs;
	int op = BPF_OP(insn->code), is32 = BPF_CLASS(insn->code) == BPF_JMP32, pred, err;

	err = brt_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	dst = &regs[insn->dst_reg];
	if (BPF_SRC(insn->code) == BPF_X) {
		if (insn->imm) {
			brt_verr(env, "BPF_JMP/JMP32 uses reserved fields\n");
			return -EINVAL;
		}
		err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
		src = &regs[insn->src_reg];
		if (!(is_pkt(dst) && is_pkt(src)) && brt_is_pointer_value(env, insn->src_reg)) {
			brt_verr(env, "R%d pointer comparison prohibited\n", insn->src_reg);
			return -EACCES;
		}
	} else {
		if (insn->src_reg) {
			brt_verr(env, "BPF_JMP/JMP32 uses reserved fields\n");
			return -EINVAL;
		}
		src = &env->fake_reg[0];
		memset(src, 0, sizeof(*src));
		src->type = SCALAR_VALUE;
		brt_mark_reg_known(src, (uint64_t)(int64_t)insn->imm);
	}
	pred = branch_taken(dst, src, op, is32);
	if (pred >= 0) {
		/* the path relies on the operands' values: keep them precise */
		if (dst->type == SCALAR_VALUE)
			err = brt_mark_precise(env, insn->dst_reg);
		if (!err && BPF_SRC(insn->code) == BPF_X && src->type == SCALAR_VALUE)
			err = brt_mark_precise(env, insn->src_reg);
		if (err)
			return err;
	}
	/* without CAP_PERFMON the dead side is walked too, speculatively (ptr_alu.c) */
	if (pred == 1) {
		if (!env->bypass_spec_v1) {
			err = brt_push_speculative(env, insn, *insn_idx + 1, *insn_idx);
			if (err)
				return err;
		}
		/* printed here, under the jump's own index (the kernel's print_insn_state) */
		if (LOG_L1(env))
			brt_print_scratched(env);
		*insn_idx += insn->off;
		return 0;
	}
	if (pred == 0) {
		if (!env->bypass_spec_v1) {
			err = brt_push_speculative(env, insn, *insn_idx + insn->off + 1, *insn_idx);
			if (err)
				return err;
		}
		if (LOG_L1(env))
			brt_print_scratched(env);
		return 0;
	}
	/* before the other branch is copied, so both carry it in their history; only when
	 * the operands' ids link more than one scalar (the kernel's linked_regs.cnt > 1):
	 * a lone one adds no entry, which counts toward the forced checkpoint past 40 */
	if ((BPF_SRC(insn->code) == BPF_X ? brt_hist_linked_count(env, src) : 0) +
		    brt_hist_linked_count(env, dst) > 1) {
		if (BPF_SRC(insn->code) == BPF_X && src->type == SCALAR_VALUE && src->id)
			brt_hist_linked(env, src);
		if (dst->type == SCALAR_VALUE && dst->id)
			brt_hist_linked(env, dst);
	}
	if (env->internal_err)
		return env->internal_err;
	err = brt_push_stack(env, *insn_idx + insn->off + 1, *insn_idx, &other);
	if (err)
		return err;
	oregs = other->frame[other->curframe]->regs;
	if (BPF_SRC(insn->code) == BPF_X) {
		set_min_max(&oregs[insn->dst_reg], &oregs[insn->src_reg], dst, src, op, is32);
	} else {
		env->fake_reg[1] = env->fake_reg[0];
		set_min_max(&oregs[insn->dst_reg], &env->fake_reg[0], dst, &env->fake_reg[1], op,
			    is32);
	}
	if (BPF_SRC(insn->code) == BPF_X && src->type == SCALAR_VALUE && src->id) {
		sync_linked(env, this_st, src);
		sync_linked(env, other, &oregs[insn->src_reg]);
	}
	if (dst->type == SCALAR_VALUE && dst->id) {
		sync_linked(env, this_st, dst);
		sync_linked(env, other, &oregs[insn->dst_reg]);
	}
	if (!is32 && BPF_SRC(insn->code) == BPF_K && insn->imm == 0 &&
	    (op == BPF_JEQ || op == BPF_JNE) && (dst->type & PTR_MAYBE_NULL)) {
		mark_ptr_or_null(env, this_st, insn->dst_reg, op == BPF_JNE);
		mark_ptr_or_null(env, other, insn->dst_reg, op == BPF_JEQ);
	} else if (!match_pkt_pointers(insn, dst, src, this_st, other) &&
		   brt_is_pointer_value(env, insn->dst_reg)) {
		brt_verr(env, "R%d pointer comparison prohibited\n", insn->dst_reg);
		return -EACCES;
	}
	if (LOG_L1(env))
		brt_print_scratched(env);
	return 0;
}
