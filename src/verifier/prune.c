/* prune.c - comparing states for state pruning: a state that is "inside" an already
 * verified one at the same instruction needs no further exploration, and an exact repeat
 * on the current path is an infinite loop.  Stored states live in one list per
 * instruction, newest first, those still being explored and complete ones together, and
 * leave it after missing too often, as the kernel's explored_states.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/internal.h"

#define IDMAP_SIZE 128

struct idmap {
	uint32_t old[IDMAP_SIZE];
	uint32_t cur[IDMAP_SIZE];
	int n;
	uint32_t tmp; /* ids standing in for a scalar's id 0 (check_scalar_ids) */
};

/* ids must correspond one to one between the two states */
static int check_ids(uint32_t old_id, uint32_t cur_id, struct idmap *m)
{
	if (!old_id && !cur_id)
		return 1;
	if (!old_id || !cur_id)
		return 0;
	for (int i = 0; i < m->n; i++) {
		if (m->old[i] == old_id)
			return m->cur[i] == cur_id;
		if (m->cur[i] == cur_id)
			return 0;
	}
	if (m->n == IDMAP_SIZE)
		return 0;
	m->old[m->n] = old_id;
	m->cur[m->n++] = cur_id;
	return 1;
}

/* Scalars linked by an id learn from each other's branches: the old state's links must
 * exist in the current one.  An old id of 0 relied on no link: any current one only adds
 * knowledge (6.18.44's relaxed check_scalar_ids); a current 0 stands for a fresh id, so
 * two unlinked current scalars cannot stand for one old link. */
static int check_scalar_ids(uint32_t old_id, uint32_t cur_id, struct idmap *m)
{
	if (!old_id)
		return 1;
	cur_id = cur_id ? cur_id : ++m->tmp;
	return check_ids(old_id, cur_id, m);
}

static int range_within(const struct brt_reg *o, const struct brt_reg *c)
{
	return o->umin <= c->umin && o->umax >= c->umax && o->smin <= c->smin &&
	       o->smax >= c->smax && o->u32_min <= c->u32_min && o->u32_max >= c->u32_max &&
	       o->s32_min <= c->s32_min && o->s32_max >= c->s32_max;
}

static int regs_exact(const struct brt_reg *o, const struct brt_reg *c, struct idmap *m)
{
	return o->type == c->type && o->off == c->off && o->var_off.value == c->var_off.value &&
	       o->var_off.mask == c->var_off.mask && o->smin == c->smin && o->smax == c->smax &&
	       o->umin == c->umin && o->umax == c->umax && o->s32_min == c->s32_min &&
	       o->s32_max == c->s32_max && o->u32_min == c->u32_min && o->u32_max == c->u32_max &&
	       o->range == c->range && o->mem_size == c->mem_size && o->map_idx == c->map_idx &&
	       o->frameno == c->frameno && o->btf_id == c->btf_id && check_ids(o->id, c->id, m) &&
	       check_ids(o->ref_obj_id, c->ref_obj_id, m);
}

enum { EQ_NOT_EXACT, EQ_EXACT, EQ_WITHIN };

static int regsafe(const struct brt_reg *o, const struct brt_reg *c, struct idmap *m, int exact,
		   int relevant)
{
	/* exact: EQ_NOT_EXACT, EQ_EXACT or EQ_WITHIN (every scalar by its range), as the
	 * kernel's.  An old uninitialised register was not used from there on, inside a
	 * loop too (6.18.44 has "allow states pruning for misc/invalid slots in iterator
	 * loops": every path from the old state exits or leads to the current one) */
	if (o->type == NOT_INIT)
		return exact != EQ_EXACT || c->type == NOT_INIT;
	if (c->type == NOT_INIT)
		return 0;
	if (exact == EQ_EXACT)
		return regs_exact(o, c, m);
	if (o->type != c->type)
		return 0;
	switch (BASE_TYPE(o->type)) {
	case SCALAR_VALUE:
		/* explore_alu_limits (relevant 2): every scalar exactly, for the masks */
		if (relevant == 2)
			return regs_exact(o, c, m);
		/* an imprecise scalar (no path from the old state relied on its value), or
		 * one that can no longer matter (cfg.c's relevance, for states still being
		 * explored), is as good as any */
		if (!relevant)
			return 1;
		/* an old link at a constant offset needs the same kind of link (64- or 32-bit)
		 * at the same offset, to a base that corresponds too; an old plain link needs
		 * a plain one (the kernel's regsafe, 6.18.44) */
		if (o->id && (o->id & BRT_ADD_CONST) != (c->id & BRT_ADD_CONST))
			return 0;
		if ((o->id & BRT_ADD_CONST) && o->off != c->off)
			return 0;
		if (!check_scalar_ids(o->id, c->id, m))
			return 0;
		if ((o->id & BRT_ADD_CONST) &&
		    !check_ids(o->id & ~BRT_ADD_CONST, c->id & ~BRT_ADD_CONST, m))
			return 0;
		return range_within(o, c) && brt_tnum_in(o->var_off, c->var_off);
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MAP_KEY:
	case PTR_TO_MEM:
		/* btf_id: a slice's dynptr id (internal.h), compared as the kernel's memcmp */
		/* range, frameno: a slice's stack buffer (internal.h) */
		return o->off == c->off && o->map_idx == c->map_idx &&
		       o->mem_size == c->mem_size && o->btf_id == c->btf_id &&
		       o->range == c->range && o->frameno == c->frameno && range_within(o, c) &&
		       brt_tnum_in(o->var_off, c->var_off) && check_ids(o->id, c->id, m) &&
		       check_ids(o->ref_obj_id, c->ref_obj_id, m);
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (o->range > c->range || o->off != c->off)
			return 0;
		if ((o->range < 0) != (c->range < 0) || (o->range < 0 && o->range != c->range))
			return 0;
		return check_ids(o->id, c->id, m) && range_within(o, c) &&
		       brt_tnum_in(o->var_off, c->var_off);
	default:
		return regs_exact(o, c, m);
	}
}

/* The scalar a slot holds when compared as a whole: a 64-bit spilled scalar, or an unknown
 * one for a slot of bytes that read as unknown (all STACK_MISC; also STACK_INVALID where
 * uninitialised stack may be read, as the kernel's is_stack_all_misc) */
static const struct brt_reg *slot_scalar(const struct brt_stack_slot *s, struct brt_reg *tmp,
					 int uninit_ok)
{
	int misc = 1;

	if (brt_is_spilled(s) && s->spilled.type == SCALAR_VALUE) {
		for (int j = 0; j < 8; j++)
			if (s->type[j] != STACK_SPILL)
				return NULL;
		return &s->spilled;
	}
	for (int j = 0; j < 8; j++)
		misc &= s->type[j] == STACK_MISC || (uninit_ok && s->type[j] == STACK_INVALID);
	if (!misc)
		return NULL;
	brt_mark_reg_unknown(NULL, tmp);
	return tmp;
}

/* how a stored scalar is compared: REL_PRECISE by its precise mark (privileged), REL_ALL
 * every one (unprivileged, and states still being explored: their marks are not final) */
enum { REL_PRECISE, REL_ALL };

static int scalar_relevant(const struct brt_reg *o, int how)
{
	return how == REL_ALL || o->precise;
}

static int stacksafe(struct brt_env *env, const struct brt_frame *o, const struct brt_frame *c,
		     struct idmap *m, int exact, int how, uint64_t live)
{
	struct brt_reg t1, t2;

	for (int i = 0; i < o->allocated_stack; i++) {
		int spi = i / 8, k = i % 8;
		uint8_t ot = o->stack[spi].type[k], ct;

		/* no path from here reads the slot before overwriting it */
		if (!(live & (1ULL << (spi & 63)))) {
			i += 7 - k;
			continue;
		}

		/* slot types match exactly only for the loop check; inside a loop an old
		 * uninitialised or MISC byte was not relied on either (see regsafe) */
		if (exact == EQ_EXACT && (i >= c->allocated_stack || ot != c->stack[spi].type[k]))
			return 0;
		if (ot == STACK_INVALID)
			continue;
		if (env->allow_uninit_stack && ot == STACK_MISC)
			continue;
		if (i >= c->allocated_stack)
			return 0;
		ct = c->stack[spi].type[k];
		if (k == 0) {
			int u = env->allow_uninit_stack;
			const struct brt_reg *os = slot_scalar(&o->stack[spi], &t1, u);
			const struct brt_reg *cs = slot_scalar(&c->stack[spi], &t2, u);

			if (os && cs) {
				if (!regsafe(os, cs, m, exact,
					     env->explore_alu_limits ? 2 : scalar_relevant(os, how)))
					return 0;
				i += 7;
				continue;
			}
		}
		if (ot == STACK_MISC && ct == STACK_ZERO)
			continue;
		if (ot != ct)
			return 0;
		/* a dynptr's slots: same type and half, references that correspond */
		if (k == 7 && ot == STACK_DYNPTR &&
		    (brt_dynptr_type(&o->stack[spi].spilled) !=
			     brt_dynptr_type(&c->stack[spi].spilled) ||
		     brt_dynptr_first(&o->stack[spi].spilled) !=
			     brt_dynptr_first(&c->stack[spi].spilled) ||
		     !check_ids(o->stack[spi].spilled.ref_obj_id, c->stack[spi].spilled.ref_obj_id,
				m)))
			return 0;
		/* an iterator's slots: same type and state, references that correspond; the
		 * depth is not compared (only the loop check looks at it) */
		if (k == 7 && ot == STACK_ITER &&
		    (o->stack[spi].spilled.btf_id != c->stack[spi].spilled.btf_id ||
		     brt_iter_state(&o->stack[spi].spilled) !=
			     brt_iter_state(&c->stack[spi].spilled) ||
		     !check_ids(o->stack[spi].spilled.ref_obj_id, c->stack[spi].spilled.ref_obj_id,
				m)))
			return 0;
		/* an irq flag's slot: references that correspond, saved by the same kind */
		if (k == 7 && ot == STACK_IRQ_FLAG &&
		    (!check_ids(o->stack[spi].spilled.ref_obj_id, c->stack[spi].spilled.ref_obj_id,
				m) ||
		     o->stack[spi].spilled.btf_id != c->stack[spi].spilled.btf_id))
			return 0;
		if (k == 7 && ot == STACK_SPILL &&
		    !regsafe(&o->stack[spi].spilled, &c->stack[spi].spilled, m, exact,
			     scalar_relevant(&o->stack[spi].spilled, how)))
			return 0;
	}
	return 1;
}

static int frames_equal(struct brt_env *env, const struct brt_frame *o, const struct brt_frame *c,
			uint16_t live, struct idmap *m, int exact, int how, uint64_t slive)
{
	/* a state that had run more callback iterations from this frame does not cover one
	 * that ran fewer: bpf_loop's iteration limit counts from there (the kernel's
	 * func_states_equal) */
	if (o->callsite != c->callsite || o->callback_depth > c->callback_depth)
		return 0;
	for (int i = 0; i < BRT_NREGS; i++)
		if ((live & (1u << i)) &&
		    !regsafe(&o->regs[i], &c->regs[i], m, exact,
			     env->explore_alu_limits ? 2 : scalar_relevant(&o->regs[i], how)))
			return 0;
	return stacksafe(env, o, c, m, exact, how, slive);
}

/* Where frame i of st continues: the current insn for the top frame, else after the call
 * that made frame i + 1, or at the call itself for a callback (the helper calls again). */
static int resume_insn(const struct brt_vstate *st, int i, int insn_idx)
{
	const struct brt_frame *callee;

	if (i == st->curframe)
		return insn_idx;
	callee = st->frame[i + 1];
	return callee->in_callback_fn ? callee->callsite : callee->callsite + 1;
}

/* The loop a state is in and the calls that lead there: the first frame whose call insn
 * (the current insn for the top frame) lies in a component (the kernel's
 * compute_scc_callchain and frame_insn_idx: the call itself, not the insn after it, so a
 * call just before a loop's head is outside the loop, and a call at insn 0 ends the
 * printed chain).  0: in none. */
static int scc_chain(const struct brt_env *env, const struct brt_vstate *st, int insn_idx,
		     struct brt_scc_chain *ch)
{
	memset(ch, 0, sizeof(*ch));
	for (int i = 0; i <= st->curframe && i < BRT_MAX_FRAMES; i++) {
		int at = i == st->curframe ? insn_idx : st->frame[i + 1]->callsite;

		if (at >= 0 && at < env->len && env->aux[at].scc) {
			ch->scc = env->aux[at].scc;
			return 1;
		}
		if (i == st->curframe)
			return 0;
		ch->callsites[i] = at;
	}
	return 0;
}

static struct brt_scc_visit *scc_visit(struct brt_env *env, const struct brt_vstate *st,
				       int insn_idx, int create)
{
	struct brt_scc_chain ch;

	if (!scc_chain(env, st, insn_idx, &ch))
		return NULL;
	for (int i = 0; i < env->nvisits; i++)
		if (!memcmp(&env->visits[i].chain, &ch, sizeof(ch)))
			return &env->visits[i];
	if (!create)
		return NULL;
	if (env->nvisits == env->capvisits) {
		int cap = env->capvisits ? env->capvisits * 2 : 8;
		struct brt_scc_visit *v = realloc(env->visits, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		env->visits = v;
		env->capvisits = cap;
	}
	memset(&env->visits[env->nvisits], 0, sizeof(env->visits[0]));
	env->visits[env->nvisits].chain = ch;
	return &env->visits[env->nvisits++];
}

/* Level 2 logs the loop visits as 6.18.44 does: "SCC enter|exit|backedge (CALLSITES,SCC)",
 * the call sites leading to the loop's subprogram, then the loop (format_callchain). */
static void log_scc(struct brt_env *env, const char *what, const struct brt_scc_visit *v)
{
	if (!LOG_L2(env) || !v)
		return;
	brt_vinfo(env, "SCC %s (", what);
	for (int i = 0; i < BRT_MAX_FRAMES && v->chain.callsites[i]; i++)
		brt_vinfo(env, "%d,", v->chain.callsites[i]);
	brt_vinfo(env, "%u)\n", v->chain.scc);
}

/* Inside a loop some path of which was pruned by a state still being explored, the
 * precision marks of the loop's states are not final until the loop's first state is
 * complete: such a state prunes only by ranges, every scalar counting, and no stack slot
 * is dropped as dead (the kernel's incomplete_read_marks(): RANGE_WITHIN, no
 * clean_live_states). */
static int incomplete_marks(struct brt_env *env, const struct brt_vstate *st)
{
	const struct brt_scc_visit *v = scc_visit(env, st, st->insn_idx, 0);

	return v && v->backedges;
}

/* The kernel's update_peak_states(): stored states, those dropped but still in memory
 * and the copies backedges keep all count */
static void update_peak(struct brt_env *env)
{
	uint32_t n = env->cur_states + env->freed_states + env->nbackedges;

	if (n > env->peak_states)
		env->peak_states = n;
}

/* cur was pruned at insn_idx by old, whose marks may not be final: old's loop keeps a
 * copy of cur, whose path gets old's marks again when the loop is done (the kernel's
 * add_scc_backedge) */
static int add_backedge(struct brt_env *env, const struct brt_vstate *old, int insn_idx)
{
	struct brt_scc_visit *v = scc_visit(env, old, old->insn_idx, 1);
	struct brt_backedge *be;

	if (!v)
		return 0;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->st = brt_state_dup(env->cur);
	if (!be->st) {
		free(be);
		return -ENOMEM;
	}
	be->st->insn_idx = insn_idx;
	be->equal = old;
	be->next = v->list;
	v->list = be;
	v->backedges++;
	env->nbackedges++;
	update_peak(env);
	return 0;
}

/* A stored state dropped from its list, complete, leaves memory: at once, or while
 * backedges wait to be propagated through their parents, when none is left.  Its count is
 * the kernel's maybe_free_verifier_state(): a state whose loop has backedges (marks not
 * final) stays in its free_list, counted in peak_states, until the walk ends; any other
 * leaves the count now.  The walk frees it no more later (the kernel visits it once, when
 * its last branch ends or when it is evicted complete). */
static void release(struct brt_env *env, struct brt_stored *sl)
{
	if (!incomplete_marks(env, sl->st))
		env->cur_states--;
	if (env->nbackedges) {
		sl->next = env->graveyard;
		env->graveyard = sl;
		return;
	}
	brt_state_free(sl->st);
	free(sl);
}

/* How states are compared: RANGE (old contains cur; the old state's exploration is
 * complete), EXACT (infinite loops), ACTIVE (old contains cur, but old is still being
 * explored, so every scalar counts by its range: callback iterations), WITHIN (the same
 * for a complete state whose loop is still explored: the kernel's RANGE_WITHIN). */
enum { CMP_RANGE, CMP_EXACT, CMP_ACTIVE, CMP_WITHIN };

static int states_equal(struct brt_env *env, const struct brt_vstate *o,
			const struct brt_vstate *c, int insn_idx, int mode, const uint64_t *clean)
{
	/* ids standing in for 0 start past every real one (the kernel's tmp_id_gen) */
	struct idmap m = { .n = 0, .tmp = env->id_gen };
	int exact = mode == CMP_EXACT				    ? EQ_EXACT
		    : mode == CMP_ACTIVE || mode == CMP_WITHIN ? EQ_WITHIN
							       : EQ_NOT_EXACT;

	/* a state only speculative execution reaches never prunes a real one */
	if (o->curframe != c->curframe || o->nrefs != c->nrefs || (o->speculative && !c->speculative))
		return 0;
	/* the kernel's refsafe() */
	if (o->active_locks != c->active_locks || !check_ids(o->active_irq_id, c->active_irq_id, &m) ||
	    !check_ids(o->active_lock_id, c->active_lock_id, &m) ||
	    o->active_lock_ptr != c->active_lock_ptr)
		return 0;
	for (int i = 0; i < o->nrefs; i++)
		if (!check_ids(o->refs[i].id, c->refs[i].id, &m) ||
		    o->refs[i].type != c->refs[i].type || o->refs[i].ptr != c->refs[i].ptr)
			return 0;
	if (o->active_preempt != c->active_preempt || o->active_rcu != c->active_rcu ||
	    o->in_sleepable != c->in_sleepable)
		return 0;
	for (int i = o->curframe; i >= 0; i--) {
		uint16_t live;
		uint64_t slive;
		int at = resume_insn(c, i, insn_idx);

		live = env->aux[at].live_in | (1u << BPF_REG_10);
		/* a caller: r0-r5 are overwritten by the return (not by a callback's: the
		 * helper runs again with its arguments) */
		if (i != o->curframe && !c->frame[i + 1]->in_callback_fn)
			live &= ~0x3fu;
		/* stack liveness: every frame of a complete state.  Without CAP_PERFMON too,
		 * as the kernel's clean_live_states(): a dead slot is overwritten whole (an
		 * 8-byte store through r10) on every path before any read, and such a store
		 * is refused by nothing it overwrites */
		slive = clean		      ? clean[i]
			: mode == CMP_RANGE ? brt_stack_live_frame(env, c, insn_idx, i)
					      : ~0ULL;
		if (!frames_equal(env, o->frame[i], c->frame[i], live, &m, exact,
				  mode == CMP_ACTIVE || mode == CMP_WITHIN || !env->bpf_capable
					  ? REL_ALL
					  : REL_PRECISE,
				  slive))
			return 0;
	}
	return 1;
}

static int same_callsites(const struct brt_vstate *a, const struct brt_vstate *b)
{
	if (a->curframe != b->curframe)
		return 0;
	for (int i = 0; i <= a->curframe; i++)
		if (a->frame[i]->callsite != b->frame[i]->callsite)
			return 0;
	return 1;
}

/* The newest state stored at insn_idx on the current path and still in its list (the
 * kernel's find_prev_entry: the states still being explored are the current path's) */
struct brt_vstate *brt_prev_entry(struct brt_vstate *cur, int insn_idx)
{
	for (struct brt_vstate *p = cur->parent; p; p = p->parent)
		if (p->insn_idx == insn_idx && same_callsites(p, cur) && !(p->node && p->node->evicted))
			return p;
	return NULL;
}

static void maybe_widen(struct brt_env *env, const struct brt_reg *o, struct brt_reg *c,
			struct idmap *m)
{
	if (o->type != SCALAR_VALUE || c->type != SCALAR_VALUE)
		return;
	if (brt_reg_precise(env, o) || brt_reg_precise(env, c) || regs_exact(o, c, m))
		return;
	brt_mark_reg_unknown(env, c);
}

/* The kernel's widen_imprecise_scalars(): after a callback iteration, scalars that changed
 * since the previous iteration and no path has needed precise so far become unknown, so
 * the iterations reach a state they have seen (bpf_loop(100, cb, &ctx) with ctx->i++
 * converges in two).  A scalar a branch in the callback relied on was marked precise in
 * the state stored at the call (precision.c walks through the callback's frame) and
 * keeps its value: such a loop runs until its counter decides. */
void brt_widen_imprecise(struct brt_env *env, const struct brt_vstate *old,
			 struct brt_vstate *cur, int insn_idx)
{
	struct idmap m = { .n = 0, .tmp = env->id_gen };

	(void)insn_idx;
	for (int fr = old->curframe; fr >= 0; fr--) {
		const struct brt_frame *fo = old->frame[fr];
		struct brt_frame *fc = cur->frame[fr];
		int slots = (fo->allocated_stack < fc->allocated_stack ? fo->allocated_stack
								     : fc->allocated_stack) / 8;

		for (int r = 0; r < BPF_REG_10; r++)
			maybe_widen(env, &fo->regs[r], &fc->regs[r], &m);
		for (int s = 0; s < slots; s++)
			if (brt_is_spilled(&fo->stack[s]) && brt_is_spilled(&fc->stack[s]))
				maybe_widen(env, &fo->stack[s].spilled, &fc->stack[s].spilled, &m);
	}
}

static void print_loop(struct brt_env *env, const struct brt_vstate *old, int insn_idx)
{
	const struct brt_vstate *cur = env->cur;

	brt_verr(env, "infinite loop detected at insn %d\n", insn_idx);
	brt_vinfo(env, "cur state:");
	brt_print_state(env, cur, cur->curframe, 1);
	brt_vinfo(env, "old state:");
	brt_print_state(env, old, cur->curframe, 1);
}

/* A fingerprint of the registers an exact comparison looks at except ids (which only
 * need to correspond), so the loop check compares in full only when it may succeed. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_reg(uint64_t h, const struct brt_reg *r)
{
	h = mix(h, r->type);
	if (r->type == NOT_INIT)
		return h;
	h = mix(h, r->var_off.value);
	h = mix(h, r->var_off.mask);
	h = mix(h, (uint64_t)r->smin);
	h = mix(h, (uint64_t)r->smax);
	h = mix(h, r->umin);
	h = mix(h, r->umax);
	h = mix(h, (uint64_t)(uint32_t)r->off << 32 | (uint32_t)r->range);
	return mix(h, (uint64_t)r->map_idx << 32 | r->frameno);
}

static uint64_t state_hash(struct brt_env *env, const struct brt_vstate *st, int insn_idx)
{
	uint64_t h = mix(0, (uint64_t)st->curframe << 32 | (uint32_t)st->nrefs);

	for (int i = 0; i <= st->curframe; i++) {
		const struct brt_frame *f = st->frame[i];
		uint16_t live = i == st->curframe ? env->aux[insn_idx].live_in : 0xffff;

		h = mix(h, (uint64_t)(uint32_t)f->callsite);
		for (int r = 0; r < BRT_NREGS; r++)
			if (live & (1u << r))
				h = hash_reg(h, &f->regs[r]);
		/* the stack's size but not its contents: hashing 64 spilled slots at every
		 * visit of a loop head was most of the time of a long loop; states that differ
		 * only there share a chain (at most 16 are compared, see below) */
		h = mix(h, (uint64_t)(uint32_t)f->allocated_stack);
	}
	return h;
}

static int propagate_backedges(struct brt_env *env, struct brt_scc_visit *v);

/* Exploration from st is complete: it becomes usable for pruning (it is already in its
 * list), or, dropped from the list while it was explored, it is freed. */
void brt_state_done(struct brt_env *env, struct brt_vstate *st)
{
	struct brt_stored *sl = st->node;
	struct brt_scc_visit *v;

	if (!sl || !sl->active)
		return;
	/* the state that entered a loop is complete: so is every path through the loop, and
	 * the loop's states' marks are final (the kernel's maybe_exit_scc) */
	v = scc_visit(env, st, st->insn_idx, 0);
	if (v && v->entry == st) {
		log_scc(env, "exit", v);
		v->entry = NULL;
		if (propagate_backedges(env, v) && !env->internal_err)
			env->internal_err = -ENOMEM;
	}
	sl->active = 0;
	if (!sl->evicted)
		return;
	if (sl->prev)
		sl->prev->next = sl->next;
	else
		env->evicted = sl->next;
	if (sl->next)
		sl->next->prev = sl->prev;
	release(env, sl);
}

static void free_list(struct brt_stored *sl)
{
	for (struct brt_stored *next; sl; sl = next) {
		next = sl->next;
		brt_state_free(sl->st);
		free(sl);
	}
}

void brt_free_stored(struct brt_env *env)
{
	for (int i = 0; i < env->nvisits; i++)
		for (struct brt_backedge *be = env->visits[i].list, *next; be; be = next) {
			next = be->next;
			brt_state_free(be->st);
			free(be);
		}
	env->nbackedges = 0;
	free_list(env->graveyard);
	env->graveyard = NULL;
	free(env->visits);
	env->visits = NULL;
	env->nvisits = env->capvisits = 0;
	for (int i = 0; env->explored && i < env->len; i++)
		free_list(env->explored[i]);
	free_list(env->evicted);
}

void brt_reset_stored(struct brt_env *env)
{
	brt_free_stored(env);
	for (int i = 0; i < env->len; i++) {
		env->explored[i] = NULL;
		env->bucket_states[i] = 0;
	}
	env->evicted = NULL;
	env->freed_states += env->cur_states;
	env->cur_states = 0;
}

/* Set the backtracking masks to old's precise scalars (the kernel's propagate_precision
 * before its walk); 1 when there are any.  A cleaned stored state has no dead registers
 * or slots: the kernel's clean_func_state() made them NOT_INIT and STACK_INVALID, so
 * their marks are not propagated (live registers at the frame's insn: the state's own,
 * or for a caller the call's) */
static int bt_from_precise(struct brt_env *env, const struct brt_vstate *old,
			   const struct brt_vstate *target)
{
	const struct brt_stored *cl = old->node && old->node->cleaned ? old->node : NULL;
	int any = 0;

	memset(env->bt_regs, 0, sizeof(env->bt_regs));
	memset(env->bt_stack, 0, sizeof(env->bt_stack));
	for (int fr = old->curframe; fr >= 0; fr--) {
		const struct brt_frame *f = old->frame[fr];
		uint16_t live = 0xffff;
		uint64_t slive = ~0ULL;
		int first = 1;

		if (cl) {
			int at = fr == old->curframe ? old->insn_idx : old->frame[fr + 1]->callsite;

			live = env->aux[at].live_in;
			slive = cl->slive[fr];
		}
		for (int r = 0; r < BPF_REG_10; r++) {
			if (!brt_reg_precise(env, &f->regs[r]) || !(live & (1u << r)))
				continue;
			if (LOG_L2(env)) {
				if (first)
					brt_vinfo(env, "frame %d: propagating r%d", fr, r);
				else
					brt_vinfo(env, ",r%d", r);
			}
			first = 0;
			env->bt_regs[fr] |= (uint16_t)(1u << r);
		}
		for (int sp = 0; sp < f->allocated_stack / 8 && sp < 64; sp++) {
			const struct brt_reg *reg = &f->stack[sp].spilled;

			if (!brt_is_spilled(&f->stack[sp]) || !brt_reg_precise(env, reg) ||
			    !(slive & (1ULL << sp)))
				continue;
			if (sp >= target->frame[fr]->allocated_stack / 8)
				continue;
			if (LOG_L2(env)) {
				if (first)
					brt_vinfo(env, "frame %d: propagating fp%d", fr, -(sp + 1) * 8);
				else
					brt_vinfo(env, ",fp%d", -(sp + 1) * 8);
			}
			first = 0;
			env->bt_stack[fr] |= 1ULL << sp;
		}
		if (!first && LOG_L2(env))
			brt_vinfo(env, "\n");
		any |= !first;
	}
	return any;
}

/* The current path is pruned by old: what old's exploration needed precise, this path
 * needs too (the kernel's propagate_precision).  A hit on a state whose marks are not
 * final (inside a loop still explored) first leaves a backedge, which propagates old's
 * marks again once they are (propagate_backedges). */
static int propagate_precision(struct brt_env *env, const struct brt_vstate *old,
			       int backedge, int insn_idx)
{
	int err = brt_hist_note(env, env->prev_insn_idx);

	if (!err && backedge)
		err = add_backedge(env, old, insn_idx);
	if (err)
		return err;
	bt_from_precise(env, old, env->cur);
	err = brt_mark_precise_batch(env);
	/* the kernel's add_scc_backedge() logs after its propagate_precision() */
	if (!err && backedge)
		log_scc(env, "backedge", scc_visit(env, old, old->insn_idx, 0));
	return err;
}

/* The loop's exploration is complete: its states' marks are final.  Each backedge's path
 * gets what the state that pruned it has precise now, until nothing changes (marks on
 * one path change the states others were pruned by); past 64 rounds every scalar of the
 * paths is precise.  Then the backedges go (the kernel's propagate_backedges). */
static int propagate_backedges(struct brt_env *env, struct brt_scc_visit *v)
{
	struct brt_backedge *be, *next;
	int err = 0, changed;

	for (int i = 0; !err && v->list; i++) {
		if (i > 64) {
			if (LOG_L2(env))
				brt_vinfo(env, "propagate_backedges: too many iterations\n");
			for (be = v->list; be; be = be->next)
				brt_mark_all_precise(env, be->st);
			break;
		}
		changed = 0;
		for (be = v->list; !err && be; be = be->next) {
			env->bt_changed = 0;
			bt_from_precise(env, be->equal, be->st);
			err = brt_mark_precise_from(env, be->st, be->st->insn_idx);
			changed |= env->bt_changed;
		}
		if (!changed)
			break;
	}
	for (be = v->list; be; be = next) {
		next = be->next;
		brt_state_free(be->st);
		free(be);
		env->nbackedges--;
	}
	v->list = NULL;
	v->backedges = 0;
	if (!env->nbackedges) {
		struct brt_stored *sl = env->graveyard;

		env->graveyard = NULL;
		free_list(sl);
	}
	return err;
}

/* Drop sl (at *pprev) from its list: a complete state is freed, one still being explored
 * waits in env->evicted until its exploration ends (its descendants' parent) */
static uint32_t bucket(const struct brt_env *env, int insn_idx, const struct brt_vstate *st);

static void evict(struct brt_env *env, struct brt_stored **pprev, struct brt_stored *sl)
{
	*pprev = sl->next;
	env->bucket_states[bucket(env, sl->insn_idx, sl->st)]--;
	if (!sl->active) {
		release(env, sl);
		return;
	}
	sl->evicted = 1;
	sl->prev = NULL;
	sl->next = env->evicted;
	if (env->evicted)
		env->evicted->prev = sl;
	env->evicted = sl;
}

/* The kernel keeps its stored states in buckets by (insn ^ callsite of the top frame) %
 * the program's length (explored_state()) and walks only the current state's bucket: a
 * state stored at this insn from another call of the same subprogram is, unless the two
 * fall in one bucket, neither compared nor counted by the loop rule nor charged a miss
 * (pyperf_subprogs calls one function four times: the first call's states, still being
 * explored, kept the later calls from storing theirs where the kernel does). */
static uint32_t bucket(const struct brt_env *env, int insn_idx, const struct brt_vstate *st)
{
	return (uint32_t)(insn_idx ^ st->frame[st->curframe]->callsite) % (uint32_t)env->len;
}

/* Returns 1 when the current state is covered by one already verified here (prune the
 * path), 0 to go on (maybe after storing the state), or a negative errno.  The kernel's
 * is_state_visited(): one walk over the instruction's states (those of its bucket),
 * newest first. */
int brt_is_state_visited(struct brt_env *env, int insn_idx)
{
	struct brt_vstate *cur = env->cur;
	struct brt_stored *sl, **pprev;
	int cb = env->aux[insn_idx].calls_callback;
	int mg = brt_is_may_goto(&env->insns[insn_idx]);
	int itn = env->aux[insn_idx].iter_next;
	/* a callback call, a may_goto or an iterator's next always stores its state: the next
	 * iteration compares with it; a long history forces a checkpoint (the kernel bounds
	 * its jmp_history so) */
	int force = cb || mg || itn || cur->hist > 40;
	int add = force || (env->jmps_processed - env->prev_jmps_processed >= 2 &&
			    env->insn_processed - env->prev_insn_processed >= 8);
	int exact = 0, hashed = 0;
	uint64_t h = 0;

	uint32_t b = bucket(env, insn_idx, cur), in_bucket = env->bucket_states[b];

	/* the kernel's clean_live_states(): complete states here on the same call chain, not
	 * in a loop still explored, take their stack liveness now, once */
	for (sl = env->explored[insn_idx]; sl; sl = sl->next) {
		if (sl->active || sl->cleaned || !same_callsites(sl->st, cur) ||
		    incomplete_marks(env, sl->st))
			continue;
		for (int i = 0; i <= sl->st->curframe; i++)
			sl->slive[i] = brt_stack_live_frame(env, sl->st, insn_idx, i);
		sl->cleaned = 1;
	}

	for (pprev = &env->explored[insn_idx]; (sl = *pprev);) {
		/* misses before eviction: more for callback states still being explored,
		 * whose iterations must stay comparable (the kernel's 64 at checkpoints) */
		uint32_t lim = (cb || itn) && sl->active ? 64 : 3;

		if (bucket(env, insn_idx, sl->st) != b) {
			pprev = &sl->next;
			continue;
		}
		if (sl->active && cb) {
			/* a callback iteration inside one still being explored here adds
			 * nothing (the kernel's rule at callback calls, which replaces the
			 * loop check); its marks are not final: a backedge propagates them
			 * again when the loop is done */
			if (states_equal(env, sl->st, cur, insn_idx, CMP_ACTIVE, NULL)) {
				int err;

				sl->hits++;
				err = propagate_precision(env, sl->st, 1, insn_idx);
				return err ? err : 1;
			}
		} else if (sl->active && itn) {
			/* an iterator's next reached again in a state within the one stored here
			 * on the way in, the iterator still ACTIVE: the loop converges (the
			 * iterator ends it at run time).  Its marks are not final: a backedge
			 * propagates them again.  No exact loop check here: an iteration that
			 * repeats the last one is the convergence looked for */
			if (states_equal(env, sl->st, cur, insn_idx, CMP_ACTIVE, NULL) &&
			    brt_iter_r1_active(cur)) {
				int err;

				sl->hits++;
				err = propagate_precision(env, sl->st, 1, insn_idx);
				return err ? err : 1;
			}
		} else if (sl->active && mg && sl->st->may_goto_depth != cur->may_goto_depth &&
			   states_equal(env, sl->st, cur, insn_idx, CMP_ACTIVE, NULL)) {
			/* a may_goto iteration that repeats one still being explored here: the
			 * counter ends the loop at run time, so it is covered (the kernel's loop
			 * hit); its marks are not final: a backedge propagates them again */
			int err;

			sl->hits++;
			err = propagate_precision(env, sl->st, 1, insn_idx);
			return err ? err : 1;
		} else if (sl->active) {
			/* an exact repeat of a state on the current path: the loop cannot
			 * terminate.  The hash first; a bounded number of full comparisons:
			 * states that hash alike but differ in how ids pair up would make
			 * each visit quadratic (missing a loop only lets the walk run into
			 * the instruction limit) */
			if (!hashed) {
				h = state_hash(env, cur, insn_idx);
				hashed = 1;
			}
			if (sl->hash == h && sl->st->may_goto_depth == cur->may_goto_depth &&
			    sl->st->callback_unroll == cur->callback_unroll &&
			    !brt_iter_depths_differ(sl->st, cur) && exact++ < 16 &&
			    states_equal(env, sl->st, cur, insn_idx, CMP_EXACT, NULL)) {
				print_loop(env, sl->st, insn_idx);
				return -EINVAL;
			}
			/* inside a loop the iterations differ and rarely help pruning: the
			 * kernel stores a state only every 20 jumps or 100 insns, which
			 * bounds a counting loop to 10k states per 1M insns.  From here on
			 * in the list: states before this one have counted a miss already */
			if (!force && env->jmps_processed - env->prev_jmps_processed < 20 &&
			    env->insn_processed - env->prev_insn_processed < 100)
				add = 0;
		} else if (states_equal(env, sl->st, cur, insn_idx,
					incomplete_marks(env, sl->st) ? CMP_WITHIN : CMP_RANGE,
					sl->cleaned ? sl->slive : NULL)) {
			/* every complete state of the list is compared, however long, as the
			 * kernel's: a cap (64 until session 25) missed states the kernel
			 * prunes by (Falco's sendmmsg_x) */
			int err;

			sl->hits++;
			/* the rest of this path is the old state's subtree: what it needed
			 * precise, this path needs */
			err = propagate_precision(env, sl->st, incomplete_marks(env, sl->st),
						  insn_idx);
			return err ? err : 1;
		}
		/* misses count only when a state is added instead (else the iterations of a
		 * loop would evict the states stored before it); states that keep failing
		 * to match leave the list, as the kernel's */
		if (add)
			sl->miss++;
		if (sl->miss > sl->hits * lim + lim) {
			evict(env, pprev, sl);
			continue;
		}
		pprev = &sl->next;
	}
	/* the kernel counts every state of the bucket, stored at this insn or another */
	if (in_bucket > env->max_states_per_insn)
		env->max_states_per_insn = in_bucket;
	if (!add || env->cur_states > 200000)
		return 0;
	if (!hashed)
		h = state_hash(env, cur, insn_idx);
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	/* what the path so far needed precise is marked in the states before; from here
	 * only what the new state's own subtree needs (marked as it is explored) */
	if (env->bpf_capable)
		brt_mark_all_imprecise(cur);
	cur->last_insn_idx = env->prev_insn_idx;
	sl->st = brt_state_dup_stored(cur, cur->parent);
	if (!sl->st) {
		free(sl);
		return -ENOMEM;
	}
	sl->hash = h;
	sl->insn_idx = insn_idx;
	sl->active = 1;
	env->total_states++;
	env->cur_states++;
	update_peak(env);
	env->prev_jmps_processed = env->jmps_processed;
	env->prev_insn_processed = env->insn_processed;
	sl->st->insn_idx = insn_idx;
	sl->st->branches = 1;
	sl->st->parent = cur->parent;
	sl->st->node = sl;
	cur->parent = sl->st;
	cur->hist = 0;
	cur->first_insn_idx = insn_idx;
	brt_hist_reset(cur);
	sl->next = env->explored[insn_idx];
	env->explored[insn_idx] = sl;
	env->bucket_states[b]++;
	/* the first state stored inside a loop enters it: the loop's exploration ends with
	 * this state's (the kernel's maybe_enter_scc) */
	struct brt_scc_visit *v = scc_visit(env, sl->st, insn_idx, 1);

	if (v && !v->entry) {
		v->entry = sl->st;
		log_scc(env, "enter", v);
	}
	return 0;
}
