/* calls.c - helper calls (the kernel's check_helper_call()): the order of the checks.  A
 * call must name a helper the program may call (helper_set.c); its arguments are checked
 * against the prototype (helper_args.c, helper_dynptr.c, helper_timer.c), references it
 * releases are released (refs.c), callbacks are scheduled (callbacks.c), r1-r5 are
 * clobbered and r0 gets the return type (helper_ret.c); the map must suit the helper
 * (helper_maps.c).  bpf-to-bpf calls are func_calls.c.
 */
#include <errno.h>

#include "verifier/internal.h"

/* A tail call in a subprogram (6.18's check_helper_call()): the tail-called program
 * returns to the subprogram's caller, so besides the path where the call fails (queued
 * at the next insn, packet pointers kept) the walk goes on as if the subprogram exited
 * there, with r0 unknown and packet pointers gone. */
static int tail_call_exit(struct brt_env *env, int insn_idx)
{
	struct brt_vstate *branch;
	int err;

	env->scratched_regs |= 1u << BPF_REG_0;
	err = brt_push_stack(env, insn_idx + 1, insn_idx, &branch);
	if (err)
		return err;
	brt_clear_all_pkt_pointers(env);
	brt_mark_reg_unknown(env, &brt_cur_regs(env)[BPF_REG_0]);
	/* back at the call of the subprogram: do_check goes on after it */
	return brt_prepare_func_exit(env, &env->insn_idx);
}

int brt_check_helper_call(struct brt_env *env, const struct bpf_insn *insn, int insn_idx)
{
	int32_t id = insn->imm;
	const struct brt_helper_proto *fn;
	struct brt_call_meta meta = { .const_key = -1, .map_idx = -1 };
	struct brt_reg *regs;
	int err;

	err = brt_helper_resolve(env, id, &fn);
	if (err)
		return err;
	for (int i = 0; i < 5; i++) {
		err = brt_helper_check_arg(env, i, fn, &meta);
		if (err)
			return err;
	}
	err = brt_helper_record_map(env, &meta, id);
	if (err)
		return err;
	if (meta.release_regno) {
		if (fn->args[meta.release_regno - 1] == BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE)
			err = brt_dynptr_release(env, &brt_cur_regs(env)[meta.release_regno]);
		else if (id == BPF_FUNC_kptr_xchg && !fn->host && meta.ref_obj_id)
			err = brt_graph_kptr_release(env, meta.ref_obj_id);
		else if (id == BPF_FUNC_kptr_xchg && !fn->host)
			err = 0; /* a NULL stashed: nothing to release */
		else
			err = meta.ref_obj_id ? brt_release_ref(env, meta.ref_obj_id) : -EINVAL;
		if (err) {
			brt_verr(env, "func %s#%d reference has not been acquired before\n",
				 brt_verifier_helper_name(id), id);
			return err;
		}
	}
	if (id == BPF_FUNC_tail_call) {
		err = brt_check_resource_leak(env, 0, 1, "tail_call");
		if (err)
			return err;
	}
	err = brt_check_get_func_ip(env, id);
	if (err)
		return err;
	err = brt_dynptr_helper_call(env, id, fn, &meta);
	if (err)
		return err;
	if (id == BPF_FUNC_snprintf) {
		err = brt_check_snprintf_call(env);
		if (err)
			return err;
	}
	/* it cannot return an error, so it takes no flags */
	if (id == BPF_FUNC_get_local_storage &&
	    !brt_reg_is_null(&brt_cur_regs(env)[BPF_REG_2])) {
		brt_verr(env, "get_local_storage() doesn't support non-zero flags\n");
		return -EINVAL;
	}
	/* the kernel relies on these values (bpf_loop's count and inlining flags, the
	 * tail call's constant index): they are kept precise */
	if (id == BPF_FUNC_loop) {
		err = brt_check_loop_call(env, &meta);
		if (err)
			return err;
	}
	if (id == BPF_FUNC_tail_call && meta.map &&
	    brt_tnum_is_const(brt_cur_regs(env)[BPF_REG_3].var_off) &&
	    brt_cur_regs(env)[BPF_REG_3].type == SCALAR_VALUE &&
	    brt_cur_regs(env)[BPF_REG_3].var_off.value < meta.map->max_entries) {
		err = brt_mark_precise(env, BPF_REG_3);
		if (err)
			return err;
	}
	if (brt_is_callback_helper(id)) {
		err = brt_push_callback(env, insn_idx, id, &meta);
		if (err)
			return err;
	}
	if (id == BPF_FUNC_timer_set_callback && !fn->host && meta.map) {
		err = brt_push_timer_callback(env, insn_idx, &meta);
		if (err)
			return err;
	}
	regs = brt_cur_regs(env);
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++) {
		brt_mark_reg_not_init(&regs[i]);
		env->scratched_regs |= (uint16_t)(1u << i);
	}
	err = brt_helper_set_return(env, fn, &meta, id, insn_idx);
	if (err)
		return err;
	/* a tail call that fails goes on with the packet as it was: only the subprogram's
	 * exit below (the tail-called program's return) forgets packet pointers */
	if ((brt_helper_changes_pkt_data(id) && id != BPF_FUNC_tail_call) ||
	    meta.dynptr_pkt_write)
		brt_clear_all_pkt_pointers(env);
	err = brt_helper_map_compat(env, &meta, id);
	if (err)
		return err;
	if (id == BPF_FUNC_tail_call && env->cur->curframe)
		return tail_call_exit(env, insn_idx);
	return 0;
}
