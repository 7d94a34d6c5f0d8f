/* callbacks.c - helpers that call back into the program (bpf_loop, bpf_for_each_map_elem,
 * bpf_user_ringbuf_drain, bpf_find_vma): the callback is walked as a call from the helper, in a new frame
 * with the arguments the helper passes.  bpf_timer's callback, which runs later on its own,
 * is helper_timer.c's.
 */
#include <errno.h>

#include "verifier/internal.h"

int brt_is_callback_helper(int32_t id)
{
	return id == BPF_FUNC_loop || id == BPF_FUNC_for_each_map_elem ||
	       id == BPF_FUNC_user_ringbuf_drain || id == BPF_FUNC_find_vma;
}

void brt_callback_elem_args(struct brt_reg *regs, int map_idx)
{
	regs[BPF_REG_2].type = PTR_TO_MAP_KEY;
	brt_mark_reg_known_zero(&regs[BPF_REG_2]);
	regs[BPF_REG_2].map_idx = (uint16_t)map_idx;
	regs[BPF_REG_3].type = PTR_TO_MAP_VALUE;
	brt_mark_reg_known_zero(&regs[BPF_REG_3]);
	regs[BPF_REG_3].map_idx = (uint16_t)map_idx;
}

/* Map types whose elements bpf_for_each_map_elem walks (map_for_each_callback). */
static int map_for_each_ok(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return 1;
	default:
		return 0;
	}
}

/* The kernel's push_callback_call(): the callback's first instruction goes on the stack of
 * pending paths with a new frame (bpf_loop: r1 = the index, r2 = the helper's r3;
 * bpf_for_each_map_elem: r1 = the map, r2 = a key, r3 = its value, r4 = the helper's r3),
 * while this path goes on after the call as if the helper had not called it.  When the
 * callback exits, its path comes back to this call (brt_prepare_func_exit()), which
 * schedules the next iteration, until the states converge (brt_is_state_visited()) or,
 * for bpf_loop, nr_loops iterations were explored. */
int brt_push_callback(struct brt_env *env, int insn_idx, int32_t id,
		      const struct brt_call_meta *meta)
{
	struct brt_frame *caller = brt_cur_frame(env), *callee;
	struct brt_vstate *cb;
	int err;

	if (id == BPF_FUNC_loop && caller->callback_depth >= caller->regs[BPF_REG_1].umax) {
		caller->callback_depth = 0;
		if (LOG_L2(env))
			brt_vinfo(env, "frame%d bpf_loop iteration limit reached\n",
				  env->cur->curframe);
		return 0;
	}
	err = brt_push_stack(env, env->subprogs[meta->subprogno].start, insn_idx, &cb);
	if (err)
		return err;
	if (cb->curframe + 1 >= BRT_MAX_FRAMES) {
		brt_verr(env, "the call stack of %d frames is too deep\n", cb->curframe + 2);
		return -E2BIG;
	}
	if (id == BPF_FUNC_for_each_map_elem && !map_for_each_ok(meta->map->type)) {
		brt_verr(env, "callback function not allowed for map\n");
		return -524; /* the kernel's internal ENOTSUPP */
	}
	callee = brt_frame_new(insn_idx, cb->curframe + 1, meta->subprogno);
	if (!callee)
		return -ENOMEM;
	/* the kernel's init_func_state() scratches the whole state: the caller's next
	 * state line prints every register and slot */
	env->scratched_regs = 0xffff;
	env->scratched_stack = ~0ULL;
	if (id == BPF_FUNC_loop) {
		/* callback(u32 index, void *ctx) */
		brt_mark_reg_unknown(env, &callee->regs[BPF_REG_1]);
		callee->regs[BPF_REG_2] = caller->regs[BPF_REG_3];
	} else if (id == BPF_FUNC_user_ringbuf_drain) {
		/* set_user_ringbuf_callback_state(): callback(const struct bpf_dynptr *, void
		 * *ctx), the dynptr a local one over the record (mark_dynptr_cb_reg()) */
		struct brt_reg *r1 = &callee->regs[BPF_REG_1];

		brt_mark_reg_known_zero(r1);
		r1->type = CONST_PTR_TO_DYNPTR;
		r1->id = ++env->id_gen;
		r1->range = (int32_t)(BRT_DYNPTR_LOCAL | BRT_DYNPTR_FIRST);
		callee->regs[BPF_REG_2] = caller->regs[BPF_REG_3];
	} else if (id == BPF_FUNC_find_vma) {
		/* set_find_vma_callback_state(): callback(task, struct vm_area_struct *vma,
		 * void *ctx), the task the helper's r1, vma a kernel pointer (PTR_TO_BTF_ID
		 * without PTR_TRUSTED, never NULL) */
		struct brt_reg *r2 = &callee->regs[BPF_REG_2];

		callee->regs[BPF_REG_1] = caller->regs[BPF_REG_1];
		r2->type = PTR_TO_BTF_ID;
		brt_mark_reg_known_zero(r2);
		r2->btf_id = brt_btf_kstruct_id(env, BRT_KS_VMA);
		callee->regs[BPF_REG_3] = caller->regs[BPF_REG_4];
	} else {
		/* callback(map, const key *, value *, void *ctx) */
		callee->regs[BPF_REG_1] = caller->regs[BPF_REG_1];
		brt_callback_elem_args(callee->regs, meta->map_idx);
		/* the running 6.18.44 gives the value pointer an id (its level-2 log shows
		 * R3=map_value(id=N,...) in the callback, a new one each iteration; 6.18.19's
		 * map_set_for_each_callback_args() did not) */
		callee->regs[BPF_REG_3].id = ++env->id_gen;
		callee->regs[BPF_REG_4] = caller->regs[BPF_REG_3];
	}
	callee->in_callback_fn = 1;
	cb->callback_unroll++;
	cb->frame[cb->curframe]->callback_depth++;
	cb->frame[++cb->curframe] = callee;
	caller->callback_depth = 0;
	return 0;
}

/* update_loop_inline_state(): the flags are looked at (and a zero kept precise) until the
 * call is known unfit for inlining; then the count */
int brt_check_loop_call(struct brt_env *env, const struct brt_call_meta *meta)
{
	struct brt_insn_aux *aux = &env->aux[env->insn_idx];
	int zero = brt_reg_is_null(&brt_cur_regs(env)[BPF_REG_4]);
	int err;

	if (!aux->loop_init || aux->loop_fit) {
		err = zero ? brt_mark_precise(env, BPF_REG_4) : 0;
		if (err)
			return err;
		aux->loop_fit = (uint8_t)(zero && (!aux->loop_init ||
						  aux->loop_subprog == meta->subprogno));
		if (!aux->loop_init)
			aux->loop_subprog = meta->subprogno;
		aux->loop_init = 1;
	}
	return brt_mark_precise(env, BPF_REG_1);
}
