/* irq.c - irq flags saved in a stack slot (unsigned long *flags__irq_flag arguments of
 * bpf_local_irq_save/restore and bpf_res_spin_lock_irqsave/unlock_irqrestore), as the
 * kernel's process_irq_flag(): saving needs a slot that holds no flag, writes it and
 * marks it STACK_IRQ_FLAG with a new reference (refs.c, BRT_REF_IRQ); restoring needs
 * that slot, by whoever saved it, and the last flag saved (flags are restored in the
 * reverse order); then the slot is uninitialised again.  A flag never restored is a
 * leak at the exit ("... cannot be used inside bpf_local_irq_save-ed region").
 */
#include <errno.h>

#include "verifier/internal.h"

static struct brt_frame *reg_frame(struct brt_env *env, const struct brt_reg *reg)
{
	return env->cur->frame[reg->frameno];
}

static int get_spi(struct brt_env *env, const struct brt_reg *reg)
{
	return brt_stack_obj_spi(env, reg, "irq_flag", 1);
}

/* is_irq_flag_reg_valid_uninit(): no byte of the slot holds a flag (a stack that does
 * not reach there yet counts: the write grows it) */
static int valid_uninit(struct brt_env *env, const struct brt_reg *reg)
{
	int spi = get_spi(env, reg);

	if (spi == -ERANGE)
		return 1;
	if (spi < 0)
		return 0;
	for (int j = 0; j < 8; j++)
		if (reg_frame(env, reg)->stack[spi].type[j] == STACK_IRQ_FLAG)
			return 0;
	return 1;
}

/* is_irq_flag_reg_valid_init() */
static int valid_init(struct brt_env *env, const struct brt_reg *reg)
{
	int spi = get_spi(env, reg);
	const struct brt_stack_slot *s;

	if (spi < 0)
		return -EINVAL;
	s = &reg_frame(env, reg)->stack[spi];
	if (!s->spilled.ref_obj_id)
		return -EINVAL;
	for (int j = 0; j < 8; j++)
		if (s->type[j] != STACK_IRQ_FLAG)
			return -EINVAL;
	return 0;
}

/* mark_stack_slot_irq_flag() */
static int mark_slot(struct brt_env *env, const struct brt_reg *reg, int kfunc_class)
{
	int spi = get_spi(env, reg), id;
	struct brt_stack_slot *s;

	if (spi < 0)
		return spi;
	id = brt_acquire_irq_state(env, env->insn_idx);
	if (id < 0)
		return id;
	s = &reg_frame(env, reg)->stack[spi];
	brt_mark_reg_known_zero(&s->spilled);
	s->spilled.type = PTR_TO_STACK; /* the kernel has no register type of its own */
	s->spilled.ref_obj_id = (uint32_t)id;
	s->spilled.btf_id = (uint32_t)kfunc_class;
	for (int j = 0; j < 8; j++)
		s->type[j] = STACK_IRQ_FLAG;
	brt_stack_mark_write(env, reg_frame(env, reg)->frameno, 1ULL << (spi & 63));
	env->scratched_stack |= 1ULL << (spi & 63);
	return 0;
}

/* unmark_stack_slot_irq_flag() */
static int unmark_slot(struct brt_env *env, const struct brt_reg *reg, int kfunc_class)
{
	int spi = get_spi(env, reg), err;
	struct brt_vstate *st = env->cur;
	struct brt_stack_slot *s;

	if (spi < 0)
		return spi;
	s = &reg_frame(env, reg)->stack[spi];
	if ((int)s->spilled.btf_id != kfunc_class) {
		brt_verr(env, "irq flag acquired by %s kfuncs cannot be restored with %s kfuncs\n",
			 s->spilled.btf_id == BRT_IRQ_NATIVE ? "native" : "lock",
			 kfunc_class == BRT_IRQ_NATIVE ? "native" : "lock");
		return -EINVAL;
	}
	err = brt_release_irq_state(st, s->spilled.ref_obj_id);
	if (err) {
		int at = 0;

		for (int i = 0; i < st->nrefs; i++)
			if (st->refs[i].id == st->active_irq_id) {
				at = st->refs[i].insn_idx;
				break;
			}
		brt_verr(env, "cannot restore irq state out of order, expected id=%u "
			      "acquired at insn_idx=%d\n",
			 st->active_irq_id, at);
		return err;
	}
	brt_mark_reg_not_init(&s->spilled);
	brt_stack_mark_write(env, reg_frame(env, reg)->frameno, 1ULL << (spi & 63));
	for (int j = 0; j < 8; j++)
		s->type[j] = STACK_INVALID;
	env->scratched_stack |= 1ULL << (spi & 63);
	return 0;
}

int brt_process_irq_flag(struct brt_env *env, int regno, int save, int kfunc_class)
{
	struct brt_reg *reg = &brt_cur_regs(env)[regno];
	int err;

	if (save) {
		if (!valid_uninit(env, reg)) {
			brt_verr(env, "expected uninitialized irq flag as arg#%d\n", regno - 1);
			return -EINVAL;
		}
		/* the kernel writes the slot (8 bytes) first: the stack grows to hold it */
		err = brt_check_mem_access(env, env->insn_idx, regno, 0, 8, BRT_WRITE, -1, 0, 0);
		if (err)
			return err;
		return mark_slot(env, &brt_cur_regs(env)[regno], kfunc_class);
	}
	err = valid_init(env, reg);
	if (err) {
		brt_verr(env, "expected an initialized irq flag as arg#%d\n", regno - 1);
		return err;
	}
	/* mark_irq_flag_read(): the slot is read here (stack liveness) */
	brt_stack_mark_read(env, reg_frame(env, reg), reg->off + (int64_t)reg->var_off.value,
			    reg->off + (int64_t)reg->var_off.value + 8);
	return unmark_slot(env, reg, kfunc_class);
}
