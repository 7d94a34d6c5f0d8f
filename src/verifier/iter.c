/* iter.c - open-coded iterators (struct bpf_iter_<type> on the stack), as the kernel's
 * verifier models them (process_iter_arg(), process_iter_next_call() and the loop rules
 * of is_state_visited()).  bpf_iter_<type>_new() (KF_ITER_NEW) takes 8-byte slots of
 * uninitialised stack, writes them and marks them STACK_ITER with a new reference (the
 * program must destroy the iterator on every path); _next() (KF_ITER_NEXT) and
 * _destroy() (KF_ITER_DESTROY), and any kfunc argument named "__iter", need an
 * initialised iterator of that type; _destroy() releases the reference and clears the
 * slots.  The facts live in the first slot's register (internal.h: brt_iter_*()).
 *
 * _next() forks the walk: the current path sees NULL with the iterator DRAINED, a pushed
 * path sees the element (r0 not NULL) with the iterator still ACTIVE one level deeper.  A
 * loop over _next() converges when a path comes back to the call in a state within the
 * one stored there on the way in with the iterator ACTIVE (prune.c: the kernel's loop
 * hit at an iter_next insn); between iterations, scalars that changed and nothing needed
 * precise are widened (brt_widen_imprecise()).  The depth only keeps the infinite-loop
 * check from taking two iterations for one state (brt_iter_depths_differ()).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "verifier/internal.h"

static struct brt_frame *reg_frame(struct brt_env *env, const struct brt_reg *reg)
{
	return env->cur->frame[reg->frameno];
}

const char *brt_iter_state_str(uint32_t state)
{
	switch (state) {
	case BRT_ITER_ACTIVE:
		return "active";
	case BRT_ITER_DRAINED:
		return "drained";
	default:
		return "<invalid>";
	}
}

/* iter_type_str(): the struct's name without "bpf_iter_" */
const char *brt_iter_type_str(const struct brt_btf *btf, uint32_t btf_id)
{
	const char *n = btf ? brt_btf_name(btf, btf_id) : "";

	return strlen(n) > 9 ? n + 9 : n;
}

/* __get_spi(): the slot of stack offset off.  The kernel divides by BPF_REG_SIZE as an
 * unsigned quantity, which rounds down for an offset at or above the frame's top (fp-0 is
 * slot -1: "cannot pass in iter at an offset=0") */
static int get_spi_of(int64_t off)
{
	int64_t x = -off - 1;

	return (int)(x >= 0 ? x / 8 : -((-x + 7) / 8));
}

int brt_stack_obj_spi(struct brt_env *env, const struct brt_reg *reg, const char *kind,
		      int nr_slots)
{
	const struct brt_frame *f = reg_frame(env, reg);
	int64_t off;
	int spi;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "%s has to be at a constant offset\n", kind);
		return -EINVAL;
	}
	off = reg->off + (int64_t)reg->var_off.value;
	if (off % 8) {
		brt_verr(env, "cannot pass in %s at an offset=%d\n", kind, (int)off);
		return -EINVAL;
	}
	spi = get_spi_of(off);
	if (spi + 1 < nr_slots) {
		brt_verr(env, "cannot pass in %s at an offset=%d\n", kind, (int)off);
		return -EINVAL;
	}
	if (spi - nr_slots + 1 < 0 || spi >= f->allocated_stack / 8)
		return -ERANGE;
	return spi;
}

static int get_spi(struct brt_env *env, const struct brt_reg *reg, int nr_slots)
{
	return brt_stack_obj_spi(env, reg, "iter", nr_slots);
}

/* btf_check_iter_arg(): argument arg of proto is a pointer to a struct bpf_iter_*: its
 * id, or -EINVAL */
static int iter_arg_btf_id(const struct brt_btf *btf, const struct btf_type *proto, int arg)
{
	const struct btf_param *p = (const struct btf_param *)(const void *)(proto + 1);
	const struct btf_type *t;
	uint32_t id;

	if (arg >= (int)BTF_INFO_VLEN(proto->info))
		return -EINVAL;
	id = brt_btf_skip_mods(btf, p[arg].type);
	t = brt_btf_type(btf, id);
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
		return -EINVAL;
	id = brt_btf_skip_mods(btf, t->type);
	t = brt_btf_type(btf, id);
	if (!t || (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT &&
		   BTF_INFO_KIND(t->info) != BTF_KIND_UNION))
		return -EINVAL;
	if (strncmp(brt_btf_name(btf, id), "bpf_iter_", 9))
		return -EINVAL;
	return (int)id;
}

/* is_iter_reg_valid_uninit(): no byte of the slots is part of an iterator (a stack that
 * does not reach there yet counts: the writes grow it) */
static int valid_uninit(struct brt_env *env, const struct brt_reg *reg, int nr_slots)
{
	const struct brt_frame *f = reg_frame(env, reg);
	int spi = get_spi(env, reg, nr_slots);

	if (spi == -ERANGE)
		return 1;
	if (spi < 0)
		return 0;
	for (int i = 0; i < nr_slots; i++)
		for (int j = 0; j < 8; j++)
			if (f->stack[spi - i].type[j] == STACK_ITER)
				return 0;
	return 1;
}

/* is_iter_reg_valid_init(): 0, -EINVAL (not an initialised iterator of this type) or
 * -EPROTO (an RCU-protected one used outside its RCU section) */
static int valid_init(struct brt_env *env, const struct brt_reg *reg, uint32_t btf_id,
		      int nr_slots)
{
	const struct brt_frame *f = reg_frame(env, reg);
	int spi = get_spi(env, reg, nr_slots);

	if (spi < 0)
		return -EINVAL;
	for (int i = 0; i < nr_slots; i++) {
		const struct brt_reg *st = &f->stack[spi - i].spilled;

		if (st->type & PTR_UNTRUSTED)
			return -EPROTO;
		if ((i == 0) != (st->ref_obj_id != 0))
			return -EINVAL;
		if (st->btf_id != btf_id)
			return -EINVAL;
		for (int j = 0; j < 8; j++)
			if (f->stack[spi - i].type[j] != STACK_ITER)
				return -EINVAL;
	}
	return 0;
}

/* the kernel's in_rcu_cs(): an RCU read section, a spin lock, or any non-sleepable
 * program (which runs under RCU) */
static int in_rcu_cs(const struct brt_env *env)
{
	return env->cur->active_rcu || env->cur->active_locks ||
	       !(env->opts->prog_flags & BPF_F_SLEEPABLE);
}

/* mark_stack_slots_iter() */
static int mark_slots(struct brt_env *env, const struct brt_reg *reg, uint32_t kflags,
		      uint32_t btf_id, int nr_slots, int insn_idx)
{
	struct brt_frame *f = reg_frame(env, reg);
	int spi = get_spi(env, reg, nr_slots), id;

	if (spi < 0)
		return spi;
	id = brt_acquire_ref(env, insn_idx);
	if (id < 0)
		return id;
	for (int i = 0; i < nr_slots; i++) {
		struct brt_stack_slot *s = &f->stack[spi - i];
		struct brt_reg *st = &s->spilled;

		brt_mark_reg_known_zero(st);
		st->type = PTR_TO_STACK; /* the kernel has no register type of its own */
		if (kflags & BRT_KF_RCU_PROTECTED)
			st->type |= in_rcu_cs(env) ? MEM_RCU : PTR_UNTRUSTED;
		st->ref_obj_id = i == 0 ? (uint32_t)id : 0;
		st->btf_id = btf_id;
		brt_iter_set(st, BRT_ITER_ACTIVE, 0);
		for (int j = 0; j < 8; j++)
			s->type[j] = STACK_ITER;
		env->scratched_stack |= 1ULL << ((spi - i) & 63);
		brt_stack_mark_write(env, f->frameno, 1ULL << ((spi - i) & 63));
	}
	return 0;
}

/* unmark_stack_slots_iter(): the reference goes (and the elements _next() returned with
 * it), the slots are uninitialised again */
static int unmark_slots(struct brt_env *env, const struct brt_reg *reg, int nr_slots)
{
	struct brt_frame *f = reg_frame(env, reg);
	int spi = get_spi(env, reg, nr_slots);

	if (spi < 0)
		return spi;
	for (int i = 0; i < nr_slots; i++) {
		struct brt_stack_slot *s = &f->stack[spi - i];

		if (i == 0 && brt_release_ref(env, s->spilled.ref_obj_id)) {
			brt_verr(env, "verifier bug: iterator reference not held\n");
			return -EFAULT;
		}
		brt_mark_reg_not_init(&s->spilled);
		for (int j = 0; j < 8; j++)
			s->type[j] = STACK_INVALID;
		env->scratched_stack |= 1ULL << ((spi - i) & 63);
		brt_stack_mark_write(env, f->frameno, 1ULL << ((spi - i) & 63));
	}
	return 0;
}

int brt_process_iter_arg(struct brt_env *env, int regno, int insn_idx,
			 const struct brt_btf *btf, const struct btf_type *proto, uint32_t kflags,
			 const char *fname, struct brt_iter_meta *im)
{
	struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct btf_type *t;
	int btf_id, nr_slots, err, spi;

	if (reg->type != PTR_TO_STACK) {
		brt_verr(env, "arg#%d expected pointer to an iterator on stack\n", regno - 1);
		return -EINVAL;
	}
	btf_id = iter_arg_btf_id(btf, proto, regno - 1);
	if (btf_id < 0) {
		brt_verr(env, "expected valid iter pointer as arg #%d\n", regno - 1);
		return -EINVAL;
	}
	t = brt_btf_type(btf, (uint32_t)btf_id);
	nr_slots = (int)(t->size / 8);
	if (kflags & BRT_KF_ITER_NEW) {
		if (!valid_uninit(env, reg, nr_slots)) {
			brt_verr(env, "expected uninitialized iter_%s as arg #%d\n",
				 brt_iter_type_str(btf, (uint32_t)btf_id), regno - 1);
			return -EINVAL;
		}
		/* the kernel writes the slots 8 bytes at a time first */
		for (int i = 0; i < nr_slots * 8; i += 8) {
			err = brt_check_mem_access(env, insn_idx, regno, i, 8, BRT_WRITE, -1, 0, 0);
			if (err)
				return err;
			reg = &brt_cur_regs(env)[regno];
		}
		return mark_slots(env, reg, kflags, (uint32_t)btf_id, nr_slots, insn_idx);
	}
	err = valid_init(env, reg, (uint32_t)btf_id, nr_slots);
	if (err == -EINVAL) {
		brt_verr(env, "expected an initialized iter_%s as arg #%d\n",
			 brt_iter_type_str(btf, (uint32_t)btf_id), regno - 1);
		return err;
	}
	if (err == -EPROTO) {
		brt_verr(env, "expected an RCU CS when using %s\n", fname);
		return err;
	}
	spi = get_spi(env, reg, nr_slots);
	if (spi < 0)
		return spi;
	/* mark_iter_read(): the slots are read here (stack liveness) and scratched, so the
	 * log's state line after a _next() call shows the iterator's new state */
	{
		int64_t off = reg->off + (int64_t)reg->var_off.value;

		brt_stack_mark_read(env, reg_frame(env, reg), off, off + nr_slots * 8);
		for (int i = 0; i < nr_slots; i++)
			env->scratched_stack |= 1ULL << ((spi - i) & 63);
	}
	im->spi = spi;
	im->frameno = reg->frameno;
	im->ref_obj_id = reg_frame(env, reg)->stack[spi].spilled.ref_obj_id;
	if (kflags & BRT_KF_ITER_DESTROY)
		return unmark_slots(env, reg, nr_slots);
	return 0;
}

static struct brt_reg *iter_of(struct brt_vstate *st, const struct brt_iter_meta *im)
{
	return &st->frame[im->frameno]->stack[im->spi].spilled;
}

/* the register type of what _next() returns when it is a kernel object: RCU-protected
 * when the iterator is, else untrusted.  Linux 6.18.2's check_kfunc_call() (and 6.18.35's)
 * still says trusted there; the running 6.18.44 answers untrusted for every iterator that
 * is not RCU-protected (css_task's task, task_vma's vma, kmem_cache's cache: probed), so
 * such an element cannot go to a trusted or RCU argument (bpf_task_acquire: "R1 must be
 * a rcu pointer"), and only reads through it are allowed */
uint32_t brt_iter_next_obj_flag(struct brt_env *env, const struct brt_iter_meta *im)
{
	return (iter_of(env->cur, im)->type & MEM_RCU) ? MEM_RCU : PTR_UNTRUSTED;
}

/* process_iter_next_call() */
int brt_process_iter_next(struct brt_env *env, int insn_idx, const struct brt_iter_meta *im)
{
	struct brt_vstate *cur = env->cur, *queued, *prev;
	struct brt_reg *it = iter_of(cur, im), *r0;
	int err;

	if (brt_iter_state(it) != BRT_ITER_ACTIVE && brt_iter_state(it) != BRT_ITER_DRAINED) {
		brt_verr(env, "verifier bug: unexpected iterator state %d (%s)\n",
			 (int)brt_iter_state(it), brt_iter_state_str(brt_iter_state(it)));
		return -EFAULT;
	}
	if (brt_iter_state(it) == BRT_ITER_ACTIVE) {
		/* the call is a checkpoint: the state stored here on the way in is the
		 * parent; the one before it on this path, if any, is the previous iteration */
		if (!cur->parent || cur->parent->insn_idx != insn_idx) {
			brt_verr(env, "verifier bug: bad parent state for iter next call\n");
			return -EFAULT;
		}
		prev = brt_prev_entry(cur->parent, insn_idx);
		err = brt_push_stack(env, insn_idx + 1, insn_idx, &queued);
		if (err)
			return err;
		it = iter_of(queued, im);
		brt_iter_set(it, BRT_ITER_ACTIVE, brt_iter_depth(it) + 1);
		if (prev)
			brt_widen_imprecise(env, prev, queued, insn_idx);
		r0 = &queued->frame[queued->curframe]->regs[BPF_REG_0];
		r0->type &= ~PTR_MAYBE_NULL;
		it = iter_of(cur, im);
	}
	/* this path: the iterator is drained and returned NULL, at the same depth */
	brt_iter_set(it, BRT_ITER_DRAINED, brt_iter_depth(it));
	r0 = &brt_cur_regs(env)[BPF_REG_0];
	brt_mark_reg_known_zero(r0);
	r0->type = SCALAR_VALUE;
	return 0;
}

/* iter_active_depths_differ() */
int brt_iter_depths_differ(const struct brt_vstate *old, const struct brt_vstate *cur)
{
	for (int fr = old->curframe; fr >= 0; fr--) {
		const struct brt_frame *f = old->frame[fr], *c = cur->frame[fr];

		for (int i = 0; i < f->allocated_stack / 8; i++) {
			const struct brt_reg *s = &f->stack[i].spilled;

			if (f->stack[i].type[0] != STACK_ITER || brt_iter_state(s) != BRT_ITER_ACTIVE)
				continue;
			if (i >= c->allocated_stack / 8 ||
			    brt_iter_depth(&c->stack[i].spilled) != brt_iter_depth(s))
				return 1;
		}
	}
	return 0;
}

/* at an iter_next call (prune.c): the iterator R1 points at is ACTIVE */
int brt_iter_r1_active(const struct brt_vstate *st)
{
	const struct brt_reg *r1 = &st->frame[st->curframe]->regs[BPF_REG_1];
	const struct brt_frame *f;
	int64_t off;
	int spi;

	if (r1->type != PTR_TO_STACK || r1->frameno > st->curframe)
		return 0;
	f = st->frame[r1->frameno];
	off = r1->off + (int64_t)r1->var_off.value;
	spi = get_spi_of(off);
	if (off >= 0 || spi >= f->allocated_stack / 8 || f->stack[spi].type[0] != STACK_ITER)
		return 0;
	return brt_iter_state(&f->stack[spi].spilled) == BRT_ITER_ACTIVE;
}
