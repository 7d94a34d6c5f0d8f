/* dynptr.c - struct bpf_dynptr on the stack, as the kernel's verifier models it
 * (process_dynptr_func() and the functions around it): a dynptr is two 8-byte slots of
 * STACK_DYNPTR, the first (higher) one marked first, both with the dynptr's type, its id
 * (slices of its memory carry it, so they die with it) and, for a ring buffer record, the
 * reference the program must release.  A helper or kfunc argument that makes a dynptr
 * (MEM_UNINIT) writes the 16 bytes and marks them; one that uses a dynptr needs both
 * slots whole and of the expected type; writing into a slot destroys the dynptr (a
 * referenced one may not be overwritten); releasing a ring buffer dynptr invalidates its
 * clones and its slices.  The facts live in the slots' registers (internal.h:
 * brt_dynptr_type()).
 */
#include <errno.h>
#include <stdint.h>

#include "verifier/internal.h"

#define DYNPTR_SLOTS 2

static struct brt_frame *reg_frame(struct brt_env *env, const struct brt_reg *reg)
{
	return env->cur->frame[reg->frameno];
}

/* dynptr_type_str() */
const char *brt_dynptr_type_str(uint32_t type)
{
	switch (type) {
	case BRT_DYNPTR_LOCAL:
		return "local";
	case BRT_DYNPTR_RINGBUF:
		return "ringbuf";
	case BRT_DYNPTR_SKB:
		return "skb";
	case BRT_DYNPTR_XDP:
		return "xdp";
	case BRT_DYNPTR_SKB_META:
		return "skb_meta";
	default:
		return "<unknown>";
	}
}

/* stack_slot_obj_get_spi() for a dynptr: the slot of its first half, or -errno (-ERANGE,
 * without a message, when the stack does not reach that far yet) */
int brt_dynptr_get_spi(struct brt_env *env, const struct brt_reg *reg)
{
	const struct brt_frame *f = reg_frame(env, reg);
	int64_t off;
	int spi;

	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "dynptr has to be at a constant offset\n");
		return -EINVAL;
	}
	off = reg->off + (int64_t)reg->var_off.value;
	if (off % 8) {
		brt_verr(env, "cannot pass in dynptr at an offset=%d\n", (int)off);
		return -EINVAL;
	}
	spi = (int)((-off - 1) / 8);
	if (spi + 1 < DYNPTR_SLOTS) {
		brt_verr(env, "cannot pass in dynptr at an offset=%d\n", (int)off);
		return -EINVAL;
	}
	if (spi - DYNPTR_SLOTS + 1 < 0 || spi >= f->allocated_stack / 8)
		return -ERANGE;
	return spi;
}

static void mark_invalid(struct brt_env *env, struct brt_reg *reg)
{
	if (env->allow_ptr_leaks)
		brt_mark_reg_unknown(env, reg);
	else
		brt_mark_reg_not_init(reg);
}

/* slices of dynptr id (PTR_TO_MEM, maybe NULL, only those exact types: the kernel's
 * test) become unusable */
static void invalidate_slices(struct brt_env *env, uint32_t id)
{
	struct brt_vstate *st = env->cur;

	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *f = st->frame[fi];

		for (int r = 0; r < BRT_NREGS; r++) {
			struct brt_reg *reg = &f->regs[r];

			if ((reg->type == PTR_TO_MEM || reg->type == (PTR_TO_MEM | PTR_MAYBE_NULL)) &&
			    reg->btf_id == id)
				mark_invalid(env, reg);
		}
		for (int s = 0; s < f->allocated_stack / 8; s++) {
			struct brt_reg *reg = &f->stack[s].spilled;

			if (brt_is_spilled(&f->stack[s]) &&
			    (reg->type == PTR_TO_MEM || reg->type == (PTR_TO_MEM | PTR_MAYBE_NULL)) &&
			    reg->btf_id == id)
				mark_invalid(env, reg);
		}
	}
}

static void clear_slots(struct brt_env *env, struct brt_frame *f, int spi)
{
	for (int i = 0; i < 8; i++) {
		f->stack[spi].type[i] = STACK_INVALID;
		f->stack[spi - 1].type[i] = STACK_INVALID;
	}
	brt_mark_reg_not_init(&f->stack[spi].spilled);
	brt_mark_reg_not_init(&f->stack[spi - 1].spilled);
	env->scratched_stack |= 3ULL << ((spi - 1) & 63);
	brt_stack_mark_write(env, f->frameno, 3ULL << ((spi - 1) & 63));
}

/* destroy_if_dynptr_stack_slot(): a write into slot spi of f, part of a dynptr, destroys
 * the whole dynptr and its slices (the reference, if any, stays: the program still has
 * to release it, which it no longer can, so this is refused for a referenced one) */
int brt_dynptr_destroy_slot(struct brt_env *env, struct brt_frame *f, int spi)
{
	uint32_t id;

	if (spi < 0 || spi >= f->allocated_stack / 8 || f->stack[spi].type[0] != STACK_DYNPTR)
		return 0;
	if (!brt_dynptr_first(&f->stack[spi].spilled))
		spi++;
	if (spi >= f->allocated_stack / 8 || spi < 1)
		return 0;
	if (brt_dynptr_type(&f->stack[spi].spilled) == BRT_DYNPTR_RINGBUF) {
		brt_verr(env, "cannot overwrite referenced dynptr\n");
		return -EINVAL;
	}
	id = f->stack[spi].spilled.id;
	clear_slots(env, f, spi);
	invalidate_slices(env, id);
	return 0;
}

/* check_stack_range_initialized() in raw mode: a helper's uninitialised memory that
 * overlaps a dynptr is refused (it would write into it byte by byte) */
int brt_dynptr_raw_overlap(struct brt_env *env, const struct brt_frame *f, int64_t lo, int64_t hi)
{
	for (int64_t i = lo; i < hi; i++) {
		int64_t slot = -i - 1;

		if (slot < 0 || f->allocated_stack <= slot)
			continue;
		if (f->stack[slot / 8].type[slot % 8] == STACK_DYNPTR) {
			brt_verr(env, "potential write to dynptr at off=%d disallowed\n", (int)i);
			return -EACCES;
		}
	}
	return 0;
}

static int valid_init(struct brt_env *env, const struct brt_reg *reg)
{
	const struct brt_frame *f;
	int spi;

	if (reg->type == CONST_PTR_TO_DYNPTR)
		return 1;
	spi = brt_dynptr_get_spi(env, reg);
	if (spi < 0)
		return 0;
	f = reg_frame(env, reg);
	if (!brt_dynptr_first(&f->stack[spi].spilled))
		return 0;
	for (int i = 0; i < 8; i++)
		if (f->stack[spi].type[i] != STACK_DYNPTR || f->stack[spi - 1].type[i] != STACK_DYNPTR)
			return 0;
	return 1;
}

/* The register standing for the dynptr reg points at: the first slot's, or reg itself */
static const struct brt_reg *dynptr_reg(struct brt_env *env, const struct brt_reg *reg)
{
	int spi;

	if (reg->type == CONST_PTR_TO_DYNPTR)
		return reg;
	spi = brt_dynptr_get_spi(env, reg);
	return spi < 0 ? NULL : &reg_frame(env, reg)->stack[spi].spilled;
}

uint32_t brt_dynptr_info(struct brt_env *env, const struct brt_reg *reg, uint32_t *id,
			 uint32_t *ref_obj_id)
{
	const struct brt_reg *d = dynptr_reg(env, reg);

	if (id)
		*id = d ? d->id : 0;
	if (ref_obj_id)
		*ref_obj_id = d ? d->ref_obj_id : 0;
	return d ? brt_dynptr_type(d) : BRT_DYNPTR_INVALID;
}

static void mark_slot_reg(struct brt_reg *r, uint32_t type, int first, uint32_t id)
{
	brt_mark_reg_known_zero(r);
	r->type = CONST_PTR_TO_DYNPTR;
	r->id = id;
	r->range = (int32_t)(type | (first ? BRT_DYNPTR_FIRST : 0));
}

/* mark_stack_slots_dynptr() */
static int mark_slots(struct brt_env *env, const struct brt_reg *reg, uint32_t type, int insn_idx,
		      uint32_t clone_ref)
{
	struct brt_frame *f = reg_frame(env, reg);
	int spi = brt_dynptr_get_spi(env, reg), err;
	uint32_t id;

	if (spi < 0)
		return spi;
	err = brt_dynptr_destroy_slot(env, f, spi);
	if (!err)
		err = brt_dynptr_destroy_slot(env, f, spi - 1);
	if (err)
		return err;
	for (int i = 0; i < 8; i++) {
		f->stack[spi].type[i] = STACK_DYNPTR;
		f->stack[spi - 1].type[i] = STACK_DYNPTR;
	}
	brt_stack_mark_write(env, f->frameno, 3ULL << ((spi - 1) & 63));
	if (type == BRT_DYNPTR_INVALID)
		return -EINVAL;
	id = ++env->id_gen;
	mark_slot_reg(&f->stack[spi].spilled, type, 1, id);
	mark_slot_reg(&f->stack[spi - 1].spilled, type, 0, id);
	if (type == BRT_DYNPTR_RINGBUF) {
		int ref = clone_ref ? (int)clone_ref : brt_acquire_ref(env, insn_idx);

		if (ref < 0)
			return ref;
		f->stack[spi].spilled.ref_obj_id = (uint32_t)ref;
		f->stack[spi - 1].spilled.ref_obj_id = (uint32_t)ref;
	}
	env->scratched_stack |= 3ULL << ((spi - 1) & 63);
	return 0;
}

int brt_process_dynptr(struct brt_env *env, int regno, int insn_idx, unsigned flags, uint32_t type,
		       uint32_t clone_ref)
{
	struct brt_reg *reg = &brt_cur_regs(env)[regno];

	if (reg->type != PTR_TO_STACK && reg->type != CONST_PTR_TO_DYNPTR) {
		brt_verr(env, "arg#%d expected pointer to stack or const struct bpf_dynptr\n",
			 regno - 1);
		return -EINVAL;
	}
	if (flags & BRT_DYNPTR_ARG_UNINIT) {
		int spi = reg->type == CONST_PTR_TO_DYNPTR ? -EINVAL : brt_dynptr_get_spi(env, reg);

		if (spi < 0 && spi != -ERANGE) {
			brt_verr(env, "Dynptr has to be an uninitialized dynptr\n");
			return -EINVAL;
		}
		/* the kernel writes the 16 bytes 8 at a time first */
		for (int i = 0; i < 16; i += 8) {
			int err = brt_check_mem_access(env, insn_idx, regno, i, 8, BRT_WRITE, -1, 0,
						       0);

			if (err)
				return err;
			reg = &brt_cur_regs(env)[regno];
		}
		return mark_slots(env, reg, type, insn_idx, clone_ref);
	}
	if (reg->type == CONST_PTR_TO_DYNPTR && !(flags & BRT_DYNPTR_ARG_RDONLY)) {
		brt_verr(env, "cannot pass pointer to const bpf_dynptr, the helper mutates it\n");
		return -EINVAL;
	}
	if (!valid_init(env, reg)) {
		brt_verr(env, "Expected an initialized dynptr as arg #%d\n", regno - 1);
		return -EINVAL;
	}
	if (type != BRT_DYNPTR_INVALID && brt_dynptr_info(env, reg, NULL, NULL) != type) {
		brt_verr(env, "Expected a dynptr of type %s as arg #%d\n", brt_dynptr_type_str(type),
			 regno - 1);
		return -EINVAL;
	}
	/* mark_dynptr_read(): both slots are read here, and scratched (the log's state line
	 * after the call shows them) */
	if (reg->type == PTR_TO_STACK) {
		int64_t off = reg->off + (int64_t)reg->var_off.value;
		int spi = brt_dynptr_get_spi(env, reg);

		brt_stack_mark_read(env, reg_frame(env, reg), off, off + 16);
		if (spi >= 1)
			env->scratched_stack |= 3ULL << ((spi - 1) & 63);
	}
	return 0;
}

/* unmark_stack_slots_dynptr(): a dynptr released by the helper; for a referenced one
 * the reference goes (with the slices that hold it) and so does every clone */
int brt_dynptr_release(struct brt_env *env, const struct brt_reg *reg)
{
	struct brt_frame *f = reg_frame(env, reg);
	int spi = brt_dynptr_get_spi(env, reg);
	uint32_t ref;

	if (spi < 0)
		return spi;
	if (brt_dynptr_type(&f->stack[spi].spilled) != BRT_DYNPTR_RINGBUF) {
		clear_slots(env, f, spi);
		return 0;
	}
	ref = f->stack[spi].spilled.ref_obj_id;
	if (brt_release_ref(env, ref))
		return -EFAULT;
	for (int i = 1; i < f->allocated_stack / 8; i++) {
		if (f->stack[i].spilled.ref_obj_id != ref)
			continue;
		if (f->stack[i].type[0] != STACK_DYNPTR) {
			brt_verr(env, "verifier bug: misconfigured ref_obj_id\n");
			return -EFAULT;
		}
		if (brt_dynptr_first(&f->stack[i].spilled))
			clear_slots(env, f, i);
	}
	return 0;
}
