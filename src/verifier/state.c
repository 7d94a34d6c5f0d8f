/* state.c - the abstract machine state: registers, stack slots and call frames, and how
 * they are created and copied.  Printing them in the kernel's log notation is print.c;
 * comparing them for state pruning is prune.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/internal.h"

/* ---- registers ---------------------------------------------------------------------- */
void brt_mark_reg_unbounded(struct brt_reg *reg)
{
	reg->smin = INT64_MIN;
	reg->smax = INT64_MAX;
	reg->umin = 0;
	reg->umax = UINT64_MAX;
	reg->s32_min = INT32_MIN;
	reg->s32_max = INT32_MAX;
	reg->u32_min = 0;
	reg->u32_max = UINT32_MAX;
}

void brt_mark_reg_known(struct brt_reg *reg, uint64_t imm)
{
	reg->var_off = brt_tnum_const(imm);
	reg->smin = reg->smax = (int64_t)imm;
	reg->umin = reg->umax = imm;
	reg->s32_min = reg->s32_max = (int32_t)(uint32_t)imm;
	reg->u32_min = reg->u32_max = (uint32_t)imm;
	reg->off = 0;
	reg->id = 0;
	reg->ref_obj_id = 0;
	reg->range = 0;
}

void brt_mark_reg_known_zero(struct brt_reg *reg)
{
	uint32_t type = reg->type;

	memset(reg, 0, sizeof(*reg));
	reg->type = type;
	brt_mark_reg_known(reg, 0);
}

void brt_mark_reg_not_init(struct brt_reg *reg)
{
	memset(reg, 0, sizeof(*reg));
	brt_mark_reg_unbounded(reg);
	reg->var_off = brt_tnum_unknown;
	reg->type = NOT_INIT;
}

void brt_mark_reg_unknown(struct brt_env *env, struct brt_reg *reg)
{
	(void)env;
	memset(reg, 0, sizeof(*reg));
	reg->type = SCALAR_VALUE;
	reg->var_off = brt_tnum_unknown;
	brt_mark_reg_unbounded(reg);
}

int brt_is_pointer(const struct brt_reg *reg)
{
	return reg->type != SCALAR_VALUE && reg->type != NOT_INIT;
}

/* Whether a scalar counts as precise.  Unprivileged, the kernel creates every scalar
 * precise (__mark_reg_unknown() and __mark_reg_const_zero() set it when !bpf_capable, and
 * no unprivileged path spills a scalar or clears the mark), so its level-2 log prints P on
 * each, a prune hit logs "propagating" for each live one and no scalar is ever widened;
 * bpfrt derives that here rather than tracking a mark its precision walk never reads. */
int brt_reg_precise(const struct brt_env *env, const struct brt_reg *reg)
{
	return reg->type == SCALAR_VALUE && (reg->precise || !env->bpf_capable);
}

int brt_reg_is_null(const struct brt_reg *reg)
{
	return reg->type == SCALAR_VALUE && brt_tnum_equals_const(reg->var_off, 0);
}

int brt_is_spilled(const struct brt_stack_slot *slot)
{
	return slot->type[7] == STACK_SPILL;
}

struct brt_frame *brt_frame_new(int callsite, int frameno, int subprogno)
{
	struct brt_frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	for (int i = 0; i < BRT_NREGS; i++)
		brt_mark_reg_not_init(&f->regs[i]);
	f->regs[BPF_REG_10].type = PTR_TO_STACK;
	brt_mark_reg_known_zero(&f->regs[BPF_REG_10]);
	f->regs[BPF_REG_10].frameno = (uint8_t)frameno;
	f->callsite = callsite;
	f->frameno = frameno;
	f->subprogno = subprogno;
	return f;
}

int brt_grow_stack(struct brt_frame *f, int size)
{
	int n = (size + 7) / 8 * 8;
	struct brt_stack_slot *s;

	if (n <= f->allocated_stack)
		return 0;
	s = realloc(f->stack, (size_t)n / 8 * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + f->allocated_stack / 8, 0, (size_t)(n - f->allocated_stack) / 8 * sizeof(*s));
	for (int i = f->allocated_stack / 8; i < n / 8; i++)
		brt_mark_reg_not_init(&s[i].spilled);
	f->stack = s;
	f->allocated_stack = n;
	return 0;
}

static void frame_free(struct brt_frame *f);

void brt_frame_free(struct brt_frame *f)
{
	frame_free(f);
}

static void frame_free(struct brt_frame *f)
{
	if (!f)
		return;
	if (!f->stack_refs) {
		free(f->stack);
	} else if (!--*f->stack_refs) {
		free(f->stack);
		free(f->stack_refs);
	}
	free(f);
}

/* equal, precise marks too: each stored state has its own marks (the kernel's; a shared
 * array gets copied before a mark changes, brt_frame_own_stack()) */
static int stacks_alike(const struct brt_frame *a, const struct brt_frame *b)
{
	return !memcmp(a->stack, b->stack, (size_t)a->allocated_stack / 8 * sizeof(*a->stack));
}

int brt_frame_own_stack(struct brt_frame *f)
{
	struct brt_stack_slot *s;
	size_t sz = (size_t)f->allocated_stack / 8 * sizeof(*s);

	if (!f->stack_refs)
		return 0;
	if (*f->stack_refs == 1) {
		free(f->stack_refs);
		f->stack_refs = NULL;
		return 0;
	}
	s = malloc(sz);
	if (!s)
		return -ENOMEM;
	memcpy(s, f->stack, sz);
	--*f->stack_refs;
	f->stack = s;
	f->stack_refs = NULL;
	return 0;
}

/* dst (a fresh copy of a frame equal in stack to pf) takes pf's stack instead of its own */
static void frame_share_stack(struct brt_frame *dst, struct brt_frame *pf)
{
	if (!pf || !dst->allocated_stack || pf->allocated_stack != dst->allocated_stack ||
	    pf->frameno != dst->frameno || !stacks_alike(pf, dst))
		return;
	if (!pf->stack_refs) {
		pf->stack_refs = malloc(sizeof(*pf->stack_refs));
		if (!pf->stack_refs)
			return;
		*pf->stack_refs = 1;
	}
	free(dst->stack);
	dst->stack = pf->stack;
	dst->stack_refs = pf->stack_refs;
	++*pf->stack_refs;
}

static struct brt_frame *frame_dup(const struct brt_frame *src)
{
	struct brt_frame *f = malloc(sizeof(*f));

	if (!f)
		return NULL;
	*f = *src;
	f->stack = NULL;
	f->stack_refs = NULL;
	if (src->allocated_stack) {
		size_t sz = (size_t)src->allocated_stack / 8 * sizeof(*f->stack);

		f->stack = malloc(sz);
		if (!f->stack) {
			free(f);
			return NULL;
		}
		memcpy(f->stack, src->stack, sz);
	}
	return f;
}

struct brt_vstate *brt_state_new(void)
{
	return calloc(1, sizeof(struct brt_vstate));
}

void brt_state_free(struct brt_vstate *st)
{
	if (!st)
		return;
	for (int i = 0; i < BRT_MAX_FRAMES; i++)
		frame_free(st->frame[i]);
	free(st->hent);
	free(st);
}

int brt_state_copy(struct brt_vstate *dst, const struct brt_vstate *src)
{
	for (int i = 0; i < BRT_MAX_FRAMES; i++) {
		frame_free(dst->frame[i]);
		dst->frame[i] = NULL;
	}
	memcpy(dst->refs, src->refs, sizeof(src->refs[0]) * (size_t)src->nrefs);
	dst->nrefs = src->nrefs;
	dst->curframe = src->curframe;
	dst->insn_idx = src->insn_idx;
	dst->parent = src->parent;
	dst->branches = src->branches;
	dst->hist = src->hist;
	dst->first_insn_idx = src->first_insn_idx;
	dst->last_insn_idx = src->last_insn_idx;
	dst->hcnt = 0;
	if (src->hcnt > dst->hcap) {
		struct brt_hist *h = realloc(dst->hent, src->hcnt * sizeof(*h));

		if (!h)
			return -ENOMEM;
		dst->hent = h;
		dst->hcap = src->hcnt;
	}
	if (src->hcnt)
		memcpy(dst->hent, src->hent, src->hcnt * sizeof(*dst->hent));
	dst->hcnt = src->hcnt;
	dst->speculative = src->speculative;
	dst->callback_unroll = src->callback_unroll;
	dst->active_locks = src->active_locks;
	dst->active_lock_ptr = src->active_lock_ptr;
	dst->active_lock_id = src->active_lock_id;
	dst->active_irq_id = src->active_irq_id;
	dst->active_rcu = src->active_rcu;
	dst->active_preempt = src->active_preempt;
	dst->in_sleepable = src->in_sleepable;
	dst->may_goto_depth = src->may_goto_depth;
	for (int i = 0; i <= src->curframe; i++) {
		dst->frame[i] = frame_dup(src->frame[i]);
		if (!dst->frame[i])
			return -ENOMEM;
	}
	return 0;
}

struct brt_vstate *brt_state_dup(const struct brt_vstate *src)
{
	struct brt_vstate *st = brt_state_new();

	if (!st)
		return NULL;
	if (brt_state_copy(st, src)) {
		brt_state_free(st);
		return NULL;
	}
	return st;
}

struct brt_vstate *brt_state_dup_stored(const struct brt_vstate *src, struct brt_vstate *prev)
{
	struct brt_vstate *st = calloc(1, offsetof(struct brt_vstate, refs) +
					      (size_t)src->nrefs * sizeof(src->refs[0]));

	if (!st)
		return NULL;
	if (brt_state_copy(st, src)) {
		brt_state_free(st);
		return NULL;
	}
	if (!prev)
		return st;
	for (int i = 0; i <= st->curframe && i <= prev->curframe; i++)
		frame_share_stack(st->frame[i], prev->frame[i]);
	return st;
}
