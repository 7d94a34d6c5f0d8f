/* live_log.c - the level-2 log's stack-liveness lines ("(0,12) frame 0 insn 14 +live -8",
 * "(0) live stack update done in 2 iterations"), as Linux 6.18's kernel/bpf/liveness.c
 * prints them while it computes which stack slots a call chain may still read.
 *
 * bpfrt decides pruning with its own stack liveness (cfg.c brt_compute_stack_live(), one
 * record per subprogram); the kernel's analysis is per call chain and its log shows every
 * change of its masks, so the lines can only match if the same analysis runs on the same
 * marks at the same moments.  This file is that analysis, kept for the log alone: it runs
 * only at BPF_LOG_LEVEL2 (env->live_log is NULL otherwise, and every entry point returns
 * at once), and nothing in it feeds a verdict or a prune.
 *
 * The model, per the kernel: a "function instance" for each call chain (the call insns
 * leading to a subprogram, then its first insn) holds, for each frame of the chain and
 * each insn of the subprogram, the slots the insn may read (may_read), those it surely
 * writes whole (must_write: 8-byte stores at 8-aligned offsets, dynptr and iterator
 * slots), those written by it or on every path after it within the subprogram
 * (must_write_acc) and those live before it (live_before).  Marks accumulate while the
 * walk runs; at each path's end and each subprogram's exit the instances of the current
 * chain that changed are solved again (a fixed point in the subprogram's postorder, each
 * change of a logged insn's mask printed), and a callee's entry masks become its call
 * insn's in the caller's instance.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/internal.h"

#define LL_BUCKETS 256

struct ll_masks {
	uint64_t may_read;
	uint64_t must_write;
	uint64_t must_write_acc;
	uint64_t live_before;
};

struct ll_chain {
	int callsites[BRT_MAX_FRAMES]; /* call insn of each frame; the last: subprogram start */
	int sp_starts[BRT_MAX_FRAMES]; /* first insn of each frame's subprogram */
	int curframe;
};

struct ll_inst {
	struct ll_inst *next;                   /* hash bucket chain */
	struct ll_chain chain;
	int insn_cnt;                           /* insns of the subprogram */
	int sub;                                /* its index in env->subprogs */
	uint8_t updated;                        /* marks changed since the last solve */
	uint8_t must_write_dropped;             /* a must_write mask shrank */
	struct ll_masks *frames[BRT_MAX_FRAMES]; /* per frame of the chain, allocated lazily */
	uint8_t *must_write_set;                /* per insn: must_write initialised */
};

struct brt_live_log {
	struct ll_inst *buckets[LL_BUCKETS];
	struct ll_inst *cur;          /* the instance of env->cur's top frame, or NULL */
	uint64_t write_acc[BRT_MAX_FRAMES]; /* writes of the insn being checked, per frame */
	int write_insn;               /* that insn */
	int *postorder;               /* insns of each subprogram in the kernel's postorder */
	int *po_start;                /* subprogram i's at postorder[po_start[i] ...] */
};

/* The kernel's bpf_insn_successors(): fall-through and jump target of insn idx */
static int successors(const struct brt_env *env, int idx, int succ[2])
{
	const struct bpf_insn *insn = &env->insns[idx];
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);
	int n = 0, jump = 0, fall = 1;

	if (cls == BPF_JMP || cls == BPF_JMP32) {
		if (op == BPF_EXIT) {
			fall = 0;
		} else if (op == BPF_JA) {
			jump = 1;
			fall = 0;
		} else if (op != BPF_CALL) {
			jump = 1;
		}
	}
	if (fall)
		succ[n++] = idx + (insn->code == (BPF_LD | BPF_IMM | BPF_DW) ? 2 : 1);
	if (jump)
		succ[n++] = idx + 1 + (insn->code == (BPF_JMP32 | BPF_JA) ? insn->imm : insn->off);
	return n;
}

/* The kernel's compute_postorder(): per subprogram, a depth-first walk from its first
 * insn that pushes every undiscovered successor and emits an insn when it is popped
 * after its successors were pushed.  The order decides the order of the log's lines. */
static int compute_postorder(struct brt_env *env, struct brt_live_log *ll)
{
	int *stack = malloc((size_t)env->len * sizeof(*stack));
	uint8_t *state = calloc((size_t)env->len, 1);
	int cur = 0;

	ll->postorder = malloc((size_t)env->len * sizeof(*ll->postorder));
	ll->po_start = malloc((size_t)(env->subprog_cnt + 1) * sizeof(*ll->po_start));
	if (!stack || !state || !ll->postorder || !ll->po_start) {
		free(stack);
		free(state);
		return -ENOMEM;
	}
	for (int i = 0; i < env->subprog_cnt; i++) {
		int sp = 1;

		ll->po_start[i] = cur;
		stack[0] = env->subprogs[i].start;
		state[stack[0]] |= 1;
		while (sp) {
			int top = stack[sp - 1], succ[2], n;

			if (state[top] & 2) {
				ll->postorder[cur++] = top;
				sp--;
				continue;
			}
			n = successors(env, top, succ);
			for (int s = 0; s < n; s++)
				if (succ[s] >= 0 && succ[s] < env->len && !state[succ[s]] &&
				    sp < env->len) {
					stack[sp++] = succ[s];
					state[succ[s]] |= 1;
				}
			state[top] |= 2;
		}
	}
	ll->po_start[env->subprog_cnt] = cur;
	free(stack);
	free(state);
	return 0;
}

int brt_live_log_init(struct brt_env *env)
{
	struct brt_live_log *ll;

	if (!LOG_L2(env))
		return 0;
	ll = calloc(1, sizeof(*ll));
	if (!ll)
		return -ENOMEM;
	env->live_log = ll;
	return compute_postorder(env, ll);
}

void brt_live_log_free(struct brt_env *env)
{
	struct brt_live_log *ll = env->live_log;

	if (!ll)
		return;
	for (int b = 0; b < LL_BUCKETS; b++)
		for (struct ll_inst *in = ll->buckets[b], *nx; in; in = nx) {
			nx = in->next;
			for (int f = 0; f < BRT_MAX_FRAMES; f++)
				free(in->frames[f]);
			free(in->must_write_set);
			free(in);
		}
	free(ll->postorder);
	free(ll->po_start);
	free(ll);
	env->live_log = NULL;
}

/* The call chain of st's frames 0 .. frameno (the kernel's compute_callchain()) */
static void state_chain(const struct brt_env *env, const struct brt_vstate *st, int frameno,
			struct ll_chain *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i <= frameno; i++) {
		c->sp_starts[i] = env->subprogs[st->frame[i]->subprogno].start;
		if (i < st->curframe)
			c->callsites[i] = st->frame[i + 1]->callsite;
	}
	c->curframe = frameno;
	c->callsites[frameno] = c->sp_starts[frameno];
}

static unsigned chain_hash(const struct ll_chain *c)
{
	unsigned h = 2166136261u;

	for (int i = 0; i <= c->curframe; i++)
		h = (h ^ (unsigned)c->callsites[i]) * 16777619u;
	return h % LL_BUCKETS;
}

static int same_chain(const struct ll_chain *a, const struct ll_chain *b)
{
	if (a->curframe != b->curframe)
		return 0;
	for (int i = 0; i <= a->curframe; i++)
		if (a->callsites[i] != b->callsites[i])
			return 0;
	return 1;
}

static struct ll_inst *lookup_chain(struct brt_env *env, const struct ll_chain *c)
{
	struct brt_live_log *ll = env->live_log;
	unsigned h = chain_hash(c);
	struct ll_inst *in;
	int sub;

	for (in = ll->buckets[h]; in; in = in->next)
		if (same_chain(&in->chain, c))
			return in;
	/* the subprogram starting there (no call into cfg.c: this file calls only log.c) */
	for (sub = 0; sub < env->subprog_cnt; sub++)
		if (env->subprogs[sub].start == c->sp_starts[c->curframe])
			break;
	if (sub == env->subprog_cnt)
		return NULL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->sub = sub;
	in->insn_cnt = env->subprogs[sub + 1].start - env->subprogs[sub].start;
	in->must_write_set = calloc((size_t)in->insn_cnt, 1);
	if (!in->must_write_set) {
		free(in);
		return NULL;
	}
	in->chain = *c;
	in->next = ll->buckets[h];
	ll->buckets[h] = in;
	return in;
}

static struct ll_inst *lookup_state(struct brt_env *env, const struct brt_vstate *st, int frameno)
{
	struct ll_chain c;

	state_chain(env, st, frameno, &c);
	return lookup_chain(env, &c);
}

static int start_of(const struct ll_inst *in)
{
	return in->chain.sp_starts[in->chain.curframe];
}

static struct ll_masks *masks_of(struct ll_inst *in, int frame, int insn_idx)
{
	int rel = insn_idx - start_of(in);

	if (!in->frames[frame] || rel < 0 || rel >= in->insn_cnt)
		return NULL;
	return &in->frames[frame][rel];
}

static struct ll_masks *alloc_masks(struct ll_inst *in, int frame, int insn_idx)
{
	if (!in->frames[frame]) {
		in->frames[frame] = calloc((size_t)in->insn_cnt, sizeof(struct ll_masks));
		if (!in->frames[frame])
			return NULL;
	}
	return masks_of(in, frame, insn_idx);
}

/* A failed allocation stops the walk, as the kernel's -ENOMEM does */
static void oom(struct brt_env *env)
{
	if (!env->internal_err)
		env->internal_err = -ENOMEM;
}

static struct ll_inst *cur_inst(struct brt_env *env)
{
	struct brt_live_log *ll = env->live_log;

	if (!ll->cur) {
		ll->cur = lookup_state(env, env->cur, env->cur->curframe);
		if (!ll->cur)
			oom(env);
	}
	return ll->cur;
}

static void mark_read(struct brt_env *env, struct ll_inst *in, int frame, int insn_idx,
		      uint64_t mask)
{
	struct ll_masks *m = alloc_masks(in, frame, insn_idx);
	uint64_t nr;

	if (!m) {
		oom(env);
		return;
	}
	nr = m->may_read | mask;
	if (nr != m->may_read && (nr | m->live_before) != m->live_before)
		in->updated = 1;
	m->may_read = nr;
}

void brt_live_log_read(struct brt_env *env, int frame, uint64_t mask)
{
	struct ll_inst *in;

	if (!env->live_log || frame < 0 || frame >= BRT_MAX_FRAMES)
		return;
	in = cur_inst(env);
	if (in && frame <= in->chain.curframe)
		mark_read(env, in, frame, env->insn_idx, mask);
}

void brt_live_log_write(struct brt_env *env, int frame, uint64_t mask)
{
	if (env->live_log && frame >= 0 && frame < BRT_MAX_FRAMES)
		env->live_log->write_acc[frame] |= mask;
}

static void reset_writes(struct brt_live_log *ll, int insn_idx)
{
	ll->write_insn = insn_idx;
	memset(ll->write_acc, 0, sizeof(ll->write_acc));
}

void brt_live_log_insn_start(struct brt_env *env)
{
	if (env->live_log && cur_inst(env))
		reset_writes(env->live_log, env->insn_idx);
}

static void commit_writes(struct brt_env *env, struct ll_inst *in)
{
	struct brt_live_log *ll = env->live_log;
	int idx = ll->write_insn - start_of(in);

	if (idx < 0 || idx >= in->insn_cnt)
		return;
	for (int f = 0; f <= in->chain.curframe; f++) {
		uint64_t mask = ll->write_acc[f], old;
		struct ll_masks *m;

		if (!mask && !in->must_write_set[idx])
			continue;
		m = alloc_masks(in, f, ll->write_insn);
		if (!m) {
			oom(env);
			return;
		}
		old = m->must_write;
		/* seen before on this chain: only what every visit wrote */
		if (in->must_write_set[idx])
			mask &= old;
		if (old != mask) {
			m->must_write = mask;
			in->updated = 1;
		}
		if (old & ~mask)
			in->must_write_dropped = 1;
	}
	in->must_write_set[idx] = 1;
	ll->write_insn = 0;
}

void brt_live_log_insn_commit(struct brt_env *env)
{
	if (env->live_log && env->live_log->cur)
		commit_writes(env, env->live_log->cur);
}

void brt_live_log_reset_chain(struct brt_env *env)
{
	if (env->live_log)
		env->live_log->cur = NULL;
}

static void fmt_chain(char *buf, size_t sz, const struct ll_chain *c)
{
	size_t n = (size_t)snprintf(buf, sz, "(");

	for (int i = 0; i <= c->curframe && n < sz; i++)
		n += (size_t)snprintf(buf + n, sz - n, "%s%d", i ? "," : "", c->callsites[i]);
	if (n < sz)
		snprintf(buf + n, sz - n, ")");
}

static void fmt_mask(char *buf, size_t sz, uint64_t mask)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < 64 && n < sz; i++)
		if (mask & (1ULL << i))
			n += (size_t)snprintf(buf + n, sz - n, "%s%d", n ? "," : "", -(i + 1) * 8);
}

/* The kernel's log_mask_change(): "+what slots " for slots set, "-what slots" cleared */
static void log_change(struct brt_env *env, const struct ll_chain *c, const char *what, int frame,
		       int insn_idx, uint64_t old, uint64_t new)
{
	uint64_t changed = old ^ new;
	char chain[128], slots[320];

	if (!changed)
		return;
	fmt_chain(chain, sizeof(chain), c);
	brt_vlog(&env->log, "%s frame %d insn %d ", chain, frame, insn_idx);
	if (new & changed) {
		fmt_mask(slots, sizeof(slots), new & changed);
		brt_vlog(&env->log, "+%s %s ", what, slots);
	}
	if (~new & changed) {
		fmt_mask(slots, sizeof(slots), ~new & changed);
		brt_vlog(&env->log, "-%s %s", what, slots);
	}
	brt_vlog(&env->log, "\n");
}

/* One insn's live_before and must_write_acc from its successors'; 1 when they changed */
static int update_insn(struct brt_env *env, struct ll_inst *in, int frame, int insn_idx)
{
	struct ll_masks *m = masks_of(in, frame, insn_idx);
	uint64_t before, after = 0, acc = ~0ULL;
	int succ[2], n = successors(env, insn_idx, succ), changed;

	if (!n || !m)
		return 0;
	for (int s = 0; s < n; s++) {
		const struct ll_masks *sm = masks_of(in, frame, succ[s]);

		if (!sm)
			return 0;
		after |= sm->live_before;
		acc &= sm->must_write_acc;
	}
	acc |= m->must_write;
	before = (after & ~m->must_write) | m->may_read;
	changed = before != m->live_before || acc != m->must_write_acc;
	if (m->may_read || m->must_write || insn_idx == start_of(in) ||
	    env->aux[insn_idx].prune_point) {
		log_change(env, &in->chain, "live", frame, insn_idx, m->live_before, before);
		log_change(env, &in->chain, "written", frame, insn_idx, m->must_write_acc, acc);
	}
	m->live_before = before;
	m->must_write_acc = acc;
	return changed;
}

/* A callee instance's entry masks become its call insn's in the caller's instance (the
 * kernel's propagate_to_outer_instance()) */
static void propagate_out(struct brt_env *env, struct ll_inst *in)
{
	struct brt_live_log *ll = env->live_log;
	struct ll_chain c = in->chain;
	struct ll_inst *outer;
	int start = start_of(in), callsite = in->chain.callsites[in->chain.curframe - 1];

	c.callsites[c.curframe] = 0;
	c.sp_starts[c.curframe] = 0;
	c.curframe--;
	c.callsites[c.curframe] = c.sp_starts[c.curframe];
	outer = lookup_chain(env, &c);
	if (!outer) {
		oom(env);
		return;
	}
	reset_writes(ll, callsite);
	for (int f = 0; f < in->chain.curframe; f++) {
		const struct ll_masks *m = masks_of(in, f, start);

		if (!m)
			continue;
		ll->write_acc[f] |= m->must_write_acc;
		mark_read(env, outer, f, callsite, m->live_before);
	}
	commit_writes(env, outer);
}

/* The kernel's update_instance(): the fixed point, then the marks out to the caller */
static void update_inst(struct brt_env *env, struct ll_inst *in)
{
	const struct brt_live_log *ll = env->live_log;
	int po_start = ll->po_start[in->sub], po_end = ll->po_start[in->sub + 1], cnt = 0;
	char chain[128];
	int changed;

	if (in->must_write_dropped)
		for (int f = 0; f <= in->chain.curframe; f++)
			for (int i = 0; in->frames[f] && i < in->insn_cnt; i++)
				in->frames[f][i].must_write_acc = 0;
	do {
		cnt++;
		changed = 0;
		for (int f = 0; f <= in->chain.curframe; f++) {
			if (!in->frames[f])
				continue;
			for (int i = po_start; i < po_end; i++)
				changed |= update_insn(env, in, f, ll->postorder[i]);
		}
	} while (changed);
	fmt_chain(chain, sizeof(chain), &in->chain);
	brt_vlog(&env->log, "%s live stack update done in %d iterations\n", chain, cnt);
	if (in->chain.curframe > 0)
		propagate_out(env, in);
}

void brt_live_log_update(struct brt_env *env)
{
	if (!env->live_log || !env->cur)
		return;
	env->live_log->cur = NULL;
	for (int f = env->cur->curframe; f >= 0; f--) {
		struct ll_inst *in = lookup_state(env, env->cur, f);

		if (!in) {
			oom(env);
			return;
		}
		if (in->updated) {
			update_inst(env, in);
			in->updated = 0;
			in->must_write_dropped = 0;
		}
	}
}
