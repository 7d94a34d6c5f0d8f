/* helper_timer.c - bpf_timer's helper rules: the struct bpf_timer argument in a map value
 * (process_timer_func()) and the timer's callback, walked on its own (push_async_cb()).
 */
#include <errno.h>

#include "verifier/internal.h"

/* process_timer_func(): the argument points at the value's struct bpf_timer
 * (brt_map_field_arg()); the map is the helper's */
int brt_timer_arg(struct brt_env *env, int regno, struct brt_call_meta *meta)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_map_info *m = &env->maps[reg->map_idx].info;
	int err = brt_map_field_arg(env, regno, "bpf_timer", m->timer_off1);

	if (err)
		return err;
	meta->map = m;
	meta->map_idx = reg->map_idx;
	return 0;
}

/* push_async_cb() with set_timer_callback_state(): the timer's callback is walked on its
 * own, from an empty state (the caller's does not matter: it runs later, elsewhere; no
 * parent, so precision marks stop at its first insn and the caller's stored states do not
 * wait for it), with
 * r1 the map, r2 a key and r3 the value; it must return 0.  This path goes on after the
 * call. */
int brt_push_timer_callback(struct brt_env *env, int insn_idx, const struct brt_call_meta *meta)
{
	struct brt_vstate *cb;
	struct brt_frame *f;
	int err = brt_push_async(env, env->subprogs[meta->subprogno].start, insn_idx, &cb);

	if (err)
		return err;
	f = brt_frame_new(-1, 0, meta->subprogno);
	if (!f)
		return -ENOMEM;
	/* the kernel's init_func_state() of the callback's frame scratches the whole state:
	 * the state line after the call prints every register and slot of the caller's */
	env->scratched_regs = 0xffff;
	env->scratched_stack = ~0ULL;
	cb->frame[0] = f;
	f->regs[BPF_REG_1].type = CONST_PTR_TO_MAP;
	brt_mark_reg_known_zero(&f->regs[BPF_REG_1]);
	f->regs[BPF_REG_1].map_idx = (uint16_t)meta->map_idx;
	brt_callback_elem_args(f->regs, meta->map_idx);
	/* the running 6.18.44 gives the value pointer a new id, as for for_each_map_elem's
	 * callback (its level-2 log: R3=map_value(id=N,...) at the callback's entry, and every
	 * id the caller takes later one higher); 6.18.19's set_timer_callback_state() did not */
	f->regs[BPF_REG_3].id = ++env->id_gen;
	f->in_async_cb = BRT_ASYNC_TIMER;
	return 0;
}
