/* precision.c - which scalars must keep their exact range: the kernel's precision
 * backtracking (mark_chain_precision), written from its description.
 *
 * Scalars in stored states start imprecise: state pruning (prune.c) lets an imprecise one
 * match any scalar.  When the walk relies on a scalar's value (a branch it decides, an
 * offset added to a pointer, a helper's size argument, a checked return value, a zero
 * written to the stack), the instructions of the current path are walked backwards
 * through the state's history to find what that value was computed from, and those
 * registers and spilled stack slots are marked precise in every stored state the path
 * passed, up to where the value was made from constants.  A path pruned by a stored
 * state does the same for what that state needed (prune.c).
 *
 * The history (struct brt_hist) holds every instruction reached other than from the one
 * before it, and the slot of each fixed-offset stack load and store; a state stored at
 * insn X keeps the history of the path from its own first insn to the insn before X.
 * Callbacks are walked as the kernel's: from the helper call back into the callback's exit
 * (its frame), through its body, and out at its first insn to the call that started it.
 * Whatever the walk cannot follow (atomics on tracked slots, LD_ABS) falls back
 * to marking every scalar of every stored state on the path precise, as the kernel does:
 * more precision only prunes less.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

#define BT_GIVE_UP 1 /* backtrack_insn(): the walk cannot follow this instruction */

void brt_hist_reset(struct brt_vstate *st)
{
	st->hcnt = 0;
}

static struct brt_hist *hist_push(struct brt_env *env, int prev_idx)
{
	struct brt_vstate *st = env->cur;
	struct brt_hist *h;

	if (st->hcnt == st->hcap) {
		uint32_t cap = st->hcap ? st->hcap * 2 : 8;

		h = realloc(st->hent, cap * sizeof(*h));
		if (!h)
			return NULL;
		st->hent = h;
		st->hcap = cap;
	}
	h = &st->hent[st->hcnt];
	memset(h, 0, sizeof(*h));
	h->idx = env->insn_idx;
	h->prev_idx = prev_idx;
	env->cur_hent = (int)st->hcnt++;
	return h;
}

int brt_hist_note(struct brt_env *env, int prev_idx)
{
	struct brt_hist *h;

	env->cur_hent = -1;
	/* the kernel records every visit of a jump point, one entered in sequence too (a
	 * callback-calling insn a state starts at, entered again by the callback's return,
	 * then has two entries, and the walk goes on through the callback) */
	if (prev_idx == env->insn_idx - 1 && !env->aux[env->insn_idx].jmp_point)
		return 0;
	/* a fork that runs its insn again (fork_sign_mask): the kernel records history only
	 * at jump points, so its walk passes the insn once */
	if (prev_idx == env->insn_idx && !env->aux[prev_idx].jmp_point)
		return 0;
	h = hist_push(env, prev_idx);
	if (!h)
		return -ENOMEM;
	/* the kernel's entries (jmp_history_cnt, which forces a checkpoint past 40) are its
	 * jump points; the insn after a 2-insn lddw is reached from idx - 2, an entry only
	 * for bpfrt's walk, counted if a spill or link is recorded on it later */
	if (env->aux[env->insn_idx].jmp_point)
		env->cur->hist++;
	else
		h->flags |= BRT_HIST_WALK;
	return 0;
}

/* the current insn's entry for a stack access or a link: one of the kernel's */
static struct brt_hist *cur_entry(struct brt_env *env)
{
	struct brt_hist *h;

	if (env->cur_hent >= 0 && (uint32_t)env->cur_hent < env->cur->hcnt &&
	    env->cur->hent[env->cur_hent].idx == env->insn_idx) {
		h = &env->cur->hent[env->cur_hent];
		if (h->flags & BRT_HIST_WALK) {
			h->flags &= (uint8_t)~BRT_HIST_WALK;
			env->cur->hist++;
		}
		return h;
	}
	h = hist_push(env, env->prev_insn_idx);
	if (h)
		env->cur->hist++;
	return h;
}

void brt_hist_stack(struct brt_env *env, int frameno, int spi)
{
	uint8_t cls = BPF_CLASS(env->insns[env->insn_idx].code);
	struct brt_hist *h;

	/* only loads and stores move values between registers and slots */
	if (cls != BPF_LDX && cls != BPF_STX && cls != BPF_ST)
		return;
	h = cur_entry(env);
	if (!h) {
		env->internal_err = -ENOMEM;
		return;
	}
	h->flags |= BRT_HIST_STACK;
	h->frame = (uint8_t)frameno;
	h->spi = (uint8_t)spi;
}

#define LINKED_MAX 6

/* The kernel's linked_regs_push(): no check for an entry already there.  A branch whose
 * operands share an id collects the id's scalars twice (once per operand), so each takes
 * two of the LINKED_MAX places and past three of them the later ones lose the id
 * (brt_hist_linked()): they learn nothing from the branch, as in the kernel, which keeps
 * states apart that would otherwise be equal (and pruned). */
static void linked_add(struct brt_env *env, struct brt_hist *h, uint16_t e)
{
	env->linked[h->linked + h->nlinked++] = e;
}

uint16_t brt_frame_live_regs(const struct brt_env *env, const struct brt_vstate *st, int fr)
{
	int idx = fr == st->curframe ? env->insn_idx : st->frame[fr + 1]->callsite;

	return idx >= 0 && idx < env->len ? env->aux[idx].live_in : 0xffff;
}

/* The scalars sharing known's id that brt_hist_linked() would link (known itself
 * included): the kernel's collect_linked_regs() count, whose sum over a branch's operands
 * decides whether the branch gets a history entry (more than one). */
int brt_hist_linked_count(const struct brt_env *env, const struct brt_reg *known)
{
	const struct brt_vstate *st = env->cur;
	uint32_t id = known->id & ~BRT_ADD_CONST;
	int n = 0;

	if (known->type != SCALAR_VALUE || !known->id)
		return 0;
	for (int fr = st->curframe; fr >= 0; fr--) {
		const struct brt_frame *f = st->frame[fr];
		uint16_t live = brt_frame_live_regs(env, st, fr);

		for (int r = 0; r < BPF_REG_10; r++)
			n += (live & (1u << r)) && f->regs[r].type == SCALAR_VALUE &&
			     (f->regs[r].id & ~BRT_ADD_CONST) == id;
		for (int s = 0; s < f->allocated_stack / 8; s++)
			n += brt_is_spilled(&f->stack[s]) &&
			     f->stack[s].spilled.type == SCALAR_VALUE &&
			     (f->stack[s].spilled.id & ~BRT_ADD_CONST) == id;
	}
	return n;
}

/* A branch narrowed every scalar sharing known's id: a later need for one of them is a
 * need for the comparison's operand, and the other way round. */
void brt_hist_linked(struct brt_env *env, const struct brt_reg *known)
{
	struct brt_vstate *st = env->cur;
	struct brt_hist *h;

	if (known->type != SCALAR_VALUE || !known->id)
		return;
	h = cur_entry(env);
	if (!h) {
		env->internal_err = -ENOMEM;
		return;
	}
	if (!(h->flags & BRT_HIST_LINKED)) {
		if (env->nlinked + LINKED_MAX > env->caplinked) {
			uint32_t cap = env->caplinked ? env->caplinked * 2 : 64;
			uint16_t *l = realloc(env->linked, cap * sizeof(*l));

			if (!l) {
				env->internal_err = -ENOMEM;
				return;
			}
			env->linked = l;
			env->caplinked = cap;
		}
		h->linked = env->nlinked;
		env->nlinked += LINKED_MAX;
		h->nlinked = 0;
	}
	h->flags |= BRT_HIST_LINKED;
	/* the kernel's collect_linked_regs(): live registers and spilled scalars, innermost
	 * frame first; past LINKED_MAX the rest lose the id (they learn nothing from the
	 * branch, and need no history) */
	uint32_t id = known->id & ~BRT_ADD_CONST;

	for (int fr = st->curframe; fr >= 0; fr--) {
		struct brt_frame *f = st->frame[fr];
		uint16_t live = brt_frame_live_regs(env, st, fr);

		for (int r = 0; r < BPF_REG_10; r++) {
			struct brt_reg *reg = &f->regs[r];

			if (!(live & (1u << r)) || reg->type != SCALAR_VALUE ||
			    (reg->id & ~BRT_ADD_CONST) != id)
				continue;
			if (h->nlinked == LINKED_MAX)
				reg->id = 0;
			else
				linked_add(env, h, (uint16_t)(fr << 8 | 1 << 7 | r));
		}
		for (int s = 0; s < f->allocated_stack / 8; s++) {
			struct brt_reg *reg = &f->stack[s].spilled;

			if (!brt_is_spilled(&f->stack[s]) || reg->type != SCALAR_VALUE ||
			    (reg->id & ~BRT_ADD_CONST) != id)
				continue;
			if (h->nlinked == LINKED_MAX)
				reg->id = 0;
			else
				linked_add(env, h, (uint16_t)(fr << 8 | s));
		}
	}
}

/* ---- the backtracking state ------------------------------------------------------------ */
static int bt_empty(const struct brt_env *env)
{
	for (int i = 0; i < BRT_MAX_FRAMES; i++)
		if (env->bt_regs[i] || env->bt_stack[i])
			return 0;
	return 1;
}

static void bt_reset(struct brt_env *env)
{
	memset(env->bt_regs, 0, sizeof(env->bt_regs));
	memset(env->bt_stack, 0, sizeof(env->bt_stack));
}

static int linked_is_set(const struct brt_env *env, uint16_t e)
{
	int fr = e >> 8;

	return e & 0x80 ? !!(env->bt_regs[fr] & (1u << (e & 0x7f)))
			: !!(env->bt_stack[fr] & (1ULL << (e & 0x7f)));
}

/* a needed scalar of the entry makes every scalar it names needed */
static void bt_sync_linked(struct brt_env *env, const struct brt_hist *h)
{
	const uint16_t *set;
	int any = 0;

	if (!h || !(h->flags & BRT_HIST_LINKED))
		return;
	set = env->linked + h->linked;
	for (int i = 0; i < h->nlinked; i++)
		any |= linked_is_set(env, set[i]);
	if (!any)
		return;
	for (int i = 0; i < h->nlinked; i++) {
		uint16_t e = set[i];

		if (e & 0x80)
			env->bt_regs[e >> 8] |= (uint16_t)(1u << (e & 0x7f));
		else
			env->bt_stack[e >> 8] |= 1ULL << (e & 0x7f);
	}
}

static void fmt_regs(char *buf, size_t sz, uint16_t mask)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < 16 && n < sz; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(buf + n, sz - n, "%sr%d", n ? "," : "", i);
}

static void fmt_stack(char *buf, size_t sz, uint64_t mask)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < 64 && n < sz; i++)
		if (mask & (1ULL << i))
			n += (size_t)snprintf(buf + n, sz - n, "%s%d", n ? "," : "", -(i + 1) * 8);
}

static int is_pseudo_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

/* One instruction backwards: what must be precise before idx, given what must be after.
 * subseq is the instruction the path executed after idx. */
static int backtrack_insn(struct brt_env *env, int idx, int subseq, const struct brt_hist *h)
{
	const struct bpf_insn *insn = &env->insns[idx];
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code), mode = BPF_MODE(insn->code);
	int fr = env->bt_frame, dreg = insn->dst_reg, sreg = insn->src_reg;
	uint16_t *regs = &env->bt_regs[fr];

	if (LOG_L2(env)) {
		char r[64], s[512];

		fmt_regs(r, sizeof(r), *regs);
		fmt_stack(s, sizeof(s), env->bt_stack[fr]);
		brt_vinfo(env, "mark_precise: frame%d: regs=%s stack=%s before %d: ", fr, r, s, idx);
		brt_print_insn(env, idx);
	}
	bt_sync_linked(env, h);
#define SET(r) (*regs & (1u << (r)))
#define ADD(r) (*regs |= (uint16_t)(1u << (r)))
#define DEL(r) (*regs &= (uint16_t) ~(1u << (r)))
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		if (!SET(dreg) || op == BPF_END || op == BPF_NEG)
			break;
		if (op == BPF_MOV) {
			DEL(dreg);
			if (BPF_SRC(insn->code) == BPF_X && sreg != BPF_REG_10)
				ADD(sreg);
		} else if (BPF_SRC(insn->code) == BPF_X && sreg != BPF_REG_10) {
			ADD(sreg);
		}
		break;
	case BPF_LDX:
		if (!SET(dreg))
			break;
		DEL(dreg);
		/* only a fill from the stack carries a tracked value; other memory gives
		 * what the load's width allows */
		if (h && (h->flags & BRT_HIST_STACK))
			env->bt_stack[h->frame] |= 1ULL << h->spi;
		break;
	case BPF_STX:
	case BPF_ST:
		if (mode == BPF_ATOMIC) {
			if (SET(dreg) || SET(sreg) ||
			    (h && (h->flags & BRT_HIST_STACK) &&
			     (env->bt_stack[h->frame] & (1ULL << h->spi))))
				return BT_GIVE_UP;
			break;
		}
		if (SET(dreg)) /* a scalar used as an address: pointer arithmetic we lost */
			return BT_GIVE_UP;
		if (!h || !(h->flags & BRT_HIST_STACK) ||
		    !(env->bt_stack[h->frame] & (1ULL << h->spi)))
			break;
		env->bt_stack[h->frame] &= ~(1ULL << h->spi);
		if (cls == BPF_STX)
			ADD(sreg);
		break;
	case BPF_JMP:
	case BPF_JMP32:
		if (op == BPF_CALL && is_pseudo_call(insn) &&
		    brt_subprog_is_global(env, brt_find_subprog(env, idx + insn->imm + 1))) {
			/* a global function was not walked: like a helper, it sets r0 and
			 * leaves r1-r5 unusable */
			if (subseq != idx + 1)
				return BT_GIVE_UP;
			DEL(BPF_REG_0);
			if (*regs & 0x3eu)
				return BT_GIVE_UP;
		} else if (op == BPF_CALL && is_pseudo_call(insn)) {
			/* backwards out of a callee into its caller: only arguments remain */
			if (subseq != idx + insn->imm + 1 || fr == 0 || (*regs & ~0x3eu) ||
			    env->bt_stack[fr])
				return BT_GIVE_UP;
			env->bt_regs[fr - 1] |= *regs;
			*regs = 0;
			env->bt_frame--;
		} else if (op == BPF_CALL && env->aux[idx].calls_callback && subseq != idx + 1) {
			/* backwards out of a callback's body into the helper that called it
			 * (bpf_loop): r1-r5 were the helper's to set, not the caller's
			 * arguments; anything else left is a value the walk lost */
			if (fr == 0 || (*regs & ~0x3eu) || env->bt_stack[fr])
				return BT_GIVE_UP;
			*regs = 0;
			env->bt_frame--;
		} else if (op == BPF_CALL) {
			/* a tail call in a subprogram returns from it when it succeeds: the
			 * path went on in the caller, so backwards it enters the callee's
			 * frame, r0 the tail-called program's (the kernel's bt_subprog_enter()) */
			int tail = insn->src_reg == 0 && insn->imm == BPF_FUNC_tail_call &&
				   subseq != idx + 1;

			if (subseq != idx + 1 && !tail) /* a callback ran between */
				return BT_GIVE_UP;
			DEL(BPF_REG_0);
			if (*regs & 0x3eu)
				return BT_GIVE_UP;
			if (tail) {
				if (fr + 1 >= BRT_MAX_FRAMES)
					return BT_GIVE_UP;
				env->bt_frame++;
				env->bt_regs[fr + 1] = 0;
				env->bt_stack[fr + 1] = 0;
			}
		} else if (op == BPF_EXIT) {
			int r0, cb = subseq >= 0 && subseq < env->len && env->aux[subseq].calls_callback;

			/* backwards into a callee from the insn after its call, or into a
			 * callback from the helper that calls it again: the callback's r0
			 * only said whether to go on, and the caller's r1-r5 (the helper's
			 * arguments) stay in its frame, which the callback cannot write
			 * (6.18.44 walks on with them; 6.18.19 cleared them) */
			if (subseq < 0 ||
			    (!cb && (subseq < 1 || !is_pseudo_call(&env->insns[subseq - 1]))) ||
			    (!cb && (*regs & 0x3eu)) || fr + 1 >= BRT_MAX_FRAMES)
				return BT_GIVE_UP;
			r0 = subseq >= 1 && is_pseudo_call(&env->insns[subseq - 1]) && SET(BPF_REG_0);
			DEL(BPF_REG_0);
			env->bt_frame++;
			env->bt_regs[fr + 1] = (uint16_t)r0;
			env->bt_stack[fr + 1] = 0;
		} else if (op != BPF_JA && BPF_SRC(insn->code) == BPF_X) {
			if (!SET(dreg) && !SET(sreg))
				break;
			/* both sides of a comparison shaped the range of each */
			if (sreg != BPF_REG_10)
				ADD(sreg);
			if (dreg != BPF_REG_10)
				ADD(dreg);
		}
		break;
	default: /* BPF_LD */
		if (mode == BPF_ABS || mode == BPF_IND)
			return SET(BPF_REG_0) ? BT_GIVE_UP : 0;
		if (SET(dreg))
			DEL(dreg);
		break;
	}
#undef SET
#undef ADD
#undef DEL
	bt_sync_linked(env, h);
	return 0;
}

void brt_mark_all_precise(struct brt_env *env, struct brt_vstate *start)
{
	if (LOG_L2(env))
		brt_vinfo(env, "mark_precise: frame%d: falling back to forcing all scalars precise\n",
			  start->curframe);
	for (struct brt_vstate *st = start->parent; st; st = st->parent)
		for (int i = 0; i <= st->curframe; i++) {
			struct brt_frame *f = st->frame[i];

			for (int r = 0; r < BPF_REG_10; r++) {
				if (f->regs[r].type != SCALAR_VALUE || f->regs[r].precise)
					continue;
				f->regs[r].precise = 1;
				env->bt_changed = 1;
				if (LOG_L2(env))
					brt_vinfo(env, "force_precise: frame%d: forcing r%d to be precise\n",
						  i, r);
			}
			for (int s = 0; s < f->allocated_stack / 8; s++) {
				struct brt_reg *reg = &f->stack[s].spilled;

				if (!brt_is_spilled(&f->stack[s]) || reg->type != SCALAR_VALUE ||
				    reg->precise)
					continue;
				/* out of memory: the shared array takes the mark (it only
				 * prunes less) */
				if (!brt_frame_own_stack(f))
					reg = &f->stack[s].spilled;
				reg->precise = 1;
				env->bt_changed = 1;
				if (LOG_L2(env))
					brt_vinfo(env, "force_precise: frame%d: forcing fp%d to be precise\n",
						  i, -(s + 1) * 8);
			}
		}
}

/* Mark in st (a stored state on the path) what is still needed; drop what is no scalar
 * and what is already precise there (its own ancestors were marked when it was).
 * 0, or -1 when the masks do not fit the state (give up). */
static int mark_parent(struct brt_env *env, struct brt_vstate *st)
{
	if (st->curframe < env->bt_frame)
		return -1;
	for (int fr = env->bt_frame; fr >= 0; fr--) {
		struct brt_frame *f = st->frame[fr];

		for (int r = 0; r < BRT_NREGS; r++) {
			struct brt_reg *reg = &f->regs[r];

			if (!(env->bt_regs[fr] & (1u << r)))
				continue;
			if (reg->type != SCALAR_VALUE || reg->precise) {
				env->bt_regs[fr] &= (uint16_t) ~(1u << r);
			} else {
				reg->precise = 1;
				env->bt_changed = 1;
			}
		}
		for (int s = 0; s < 64; s++) {
			struct brt_reg *reg;

			if (!(env->bt_stack[fr] & (1ULL << s)))
				continue;
			if (s >= f->allocated_stack / 8)
				return -1;
			reg = &f->stack[s].spilled;
			if (!brt_is_spilled(&f->stack[s]) || reg->type != SCALAR_VALUE ||
			    reg->precise) {
				env->bt_stack[fr] &= ~(1ULL << s);
				continue;
			}
			/* this state's marks alone (out of memory: the shared array's) */
			if (!brt_frame_own_stack(f))
				reg = &f->stack[s].spilled;
			reg->precise = 1;
			env->bt_changed = 1;
		}
		if (LOG_L2(env)) {
			char r[64], s[512];

			fmt_regs(r, sizeof(r), env->bt_regs[fr]);
			fmt_stack(s, sizeof(s), env->bt_stack[fr]);
			brt_vinfo(env, "mark_precise: frame%d: parent state regs=%s stack=%s: ", fr, r,
				  s);
			brt_print_state(env, st, fr, 1);
		}
	}
	return 0;
}

/* The walk from the current instruction (not itself: it is the one relying on the value)
 * back through the current state's history, then each stored state's, until nothing is
 * left to find. */
static int backtrack(struct brt_env *env, struct brt_vstate *start, int last)
{
	struct brt_vstate *st = start;
	int first = st->first_insn_idx, subseq = -1, skip_first = 1;

	for (;;) {
		uint32_t cnt = st->hcnt;

		if (LOG_L2(env))
			brt_vinfo(env, "mark_precise: frame%d: last_idx %d first_idx %d subseq_idx %d \n",
				  env->bt_frame, last, first, subseq);
		for (int i = last;;) {
			const struct brt_hist *h = cnt && st->hent[cnt - 1].idx == i
							   ? &st->hent[cnt - 1]
							   : NULL;

			if (i < 0 || i >= env->len || env->insns[i].code == 0)
				goto give_up;
			if (skip_first)
				skip_first = 0;
			else if (backtrack_insn(env, i, subseq, h))
				goto give_up;
			if (bt_empty(env))
				return 0;
			subseq = i;
			if (i == st->first_insn_idx &&
			    (cnt == 0 || (cnt == 1 && st->hent[0].idx == i)))
				break;
			if (h) {
				i = h->prev_idx;
				cnt--;
			} else {
				i--;
			}
		}
		st = st->parent;
		if (!st)
			break;
		if (mark_parent(env, st))
			goto give_up;
		if (bt_empty(env))
			return 0;
		subseq = first;
		last = st->last_insn_idx;
		first = st->first_insn_idx;
	}
give_up:
	/* something was left that the walk could not place: everything precise */
	brt_mark_all_precise(env, start);
	bt_reset(env);
	return 0;
}

int brt_mark_precise_batch(struct brt_env *env)
{
	if (!env->bpf_capable || bt_empty(env)) {
		bt_reset(env);
		return 0;
	}
	env->bt_frame = env->cur->curframe;
	return backtrack(env, env->cur, env->insn_idx);
}

int brt_mark_precise_from(struct brt_env *env, struct brt_vstate *st, int last)
{
	if (!env->bpf_capable || bt_empty(env)) {
		bt_reset(env);
		return 0;
	}
	env->bt_frame = st->curframe;
	return backtrack(env, st, last);
}

int brt_mark_precise(struct brt_env *env, int regno)
{
	if (!env->bpf_capable || regno < 0 || regno >= BPF_REG_10 ||
	    brt_cur_regs(env)[regno].type != SCALAR_VALUE)
		return 0;
	bt_reset(env);
	env->bt_regs[env->cur->curframe] = (uint16_t)(1u << regno);
	return brt_mark_precise_batch(env);
}

void brt_mark_all_imprecise(struct brt_vstate *st)
{
	for (int i = 0; i <= st->curframe; i++) {
		struct brt_frame *f = st->frame[i];

		for (int r = 0; r < BRT_NREGS; r++)
			f->regs[r].precise = 0;
		for (int s = 0; s < f->allocated_stack / 8; s++)
			f->stack[s].spilled.precise = 0;
	}
}
