/* kfunc_task_work.c - the bpf_task_work kfuncs' rules (bpf_task_work_schedule_signal_impl
 * and _resume_impl, Linux 6.18), apart from kfunc.c's general ones as helper_timer.c's
 * bpf_timer rules are apart from the helper calls': the struct bpf_task_work argument in a
 * map value (process_task_work_func()), the __map argument that names the same map, and
 * the callback, walked on its own as a sleepable async callback.  kfunc.c reads the
 * prototype and calls these for those arguments; the run-time side is maps/task_work.c.
 */
#include <errno.h>

#include "verifier/internal.h"

/* is_task_work_add_kfunc() */
int brt_kfunc_is_task_work(int row)
{
	return row == BRT_KFUNC_bpf_task_work_schedule_signal_impl ||
	       row == BRT_KFUNC_bpf_task_work_schedule_resume_impl;
}

/* Does the register hold a map (the kernel's reg->map_ptr)? */
static int reg_has_map(const struct brt_reg *reg)
{
	uint32_t t = BASE_TYPE(reg->type);

	return t == CONST_PTR_TO_MAP || t == PTR_TO_MAP_VALUE || t == PTR_TO_MAP_KEY;
}

/* KF_ARG_PTR_TO_MAP's first checks (a __map argument): a map, and the one of the call's
 * struct bpf_task_work, whether or not it has one (measured on 6.18.44; the kernel
 * compares map_uid too: bpfrt's registers name an inner map's template, never a value's
 * own map) */
int brt_kfunc_map_arg(struct brt_env *env, const struct brt_reg *reg, int regno, int *map1)
{
	if (!reg_has_map(reg)) {
		brt_verr(env, "pointer in R%d isn't map pointer\n", regno);
		return -EINVAL;
	}
	if (*map1 && *map1 != reg->map_idx + 1) {
		brt_verr(env, "bpf_task_work pointer in R2 map_uid=%d doesn't match map pointer in "
			      "R3 map_uid=%d\n", 0, 0);
		return -EINVAL;
	}
	*map1 = reg->map_idx + 1;
	return 0;
}

/* KF_ARG_PTR_TO_TASK_WORK: a map value's struct bpf_task_work (process_task_work_func()),
 * the call's first map */
int brt_task_work_arg(struct brt_env *env, const struct brt_reg *reg, int regno, int argno,
		      int *map1)
{
	int err;

	if (reg->type != PTR_TO_MAP_VALUE) {
		brt_verr(env, "arg#%d doesn't point to a map value\n", argno);
		return -EINVAL;
	}
	err = brt_map_field_arg(env, regno, "bpf_task_work",
				env->maps[reg->map_idx].info.task_work_off1);
	if (err < 0)
		return err;
	if (*map1) {
		brt_verr(env, "verifier bug: Two map pointers in a bpf_task_work helper\n");
		return -EFAULT;
	}
	*map1 = reg->map_idx + 1;
	return 0;
}

/* The callback's walk, as a timer's (helper_timer.c) but for a task work (the kernel's
 * set_task_work_schedule_callback_state(), with push_async_cb()'s is_sleepable: the
 * callback runs in the task's context, where it may sleep): r1 the map the call named
 * (its r3), r2 a key and r3 a value of it, r4 and r5 not initialised; any 32-bit return
 * value */
int brt_push_task_work_callback(struct brt_env *env, int insn_idx, int subprogno)
{
	int map_idx = brt_cur_regs(env)[BPF_REG_3].map_idx;
	struct brt_vstate *cb;
	struct brt_frame *f;
	int err;

	/* measured on 6.18.44 (EPERM, before the callback is looked at): its sleepable
	 * callback needs a sleepable program (later kernels run task works from any) */
	if (!brt_in_sleepable(env)) {
		brt_verr(env, "sleepable callback in a program that is not sleepable\n");
		return -EPERM;
	}
	err = brt_push_async(env, env->subprogs[subprogno].start, insn_idx, &cb);
	if (err)
		return err;
	f = brt_frame_new(-1, 0, subprogno);
	if (!f)
		return -ENOMEM;
	env->scratched_regs = 0xffff;
	env->scratched_stack = ~0ULL;
	cb->frame[0] = f;
	cb->in_sleepable = 1;
	f->regs[BPF_REG_1].type = CONST_PTR_TO_MAP;
	brt_mark_reg_known_zero(&f->regs[BPF_REG_1]);
	f->regs[BPF_REG_1].map_idx = (uint16_t)map_idx;
	brt_callback_elem_args(f->regs, map_idx);
	/* a new id for the value, as the timer's (measured: the caller's ids after the
	 * call are one higher, as with a timer callback) */
	f->regs[BPF_REG_3].id = ++env->id_gen;
	f->in_async_cb = BRT_ASYNC_TASK_WORK;
	return 0;
}
