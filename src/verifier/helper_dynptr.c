/* helper_dynptr.c - the dynptr rules of helper calls: which dynptr a helper's argument
 * needs or makes (process_dynptr_func(), on dynptr.c's stack slots), releasing a ring
 * buffer dynptr, and what a call does through its dynptr (the memory bpf_dynptr_from_mem
 * takes, a packet write, a slice tied to its dynptr).
 */
#include <errno.h>

#include "verifier/internal.h"

int brt_dynptr_release_arg(struct brt_env *env, int regno)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];

	/* only a dynptr on the stack can be released, one holding a reference */
	if (reg->type == PTR_TO_STACK) {
		int spi = brt_dynptr_get_spi(env, reg);

		if (spi < 0 || !env->cur->frame[reg->frameno]->stack[spi].spilled.ref_obj_id) {
			brt_verr(env, "arg %d is an unacquired reference\n", regno);
			return -EINVAL;
		}
		return 0;
	}
	brt_verr(env, "cannot release unowned const bpf_dynptr\n");
	return -EINVAL;
}

int brt_dynptr_helper_arg(struct brt_env *env, int regno, int arg, struct brt_call_meta *meta)
{
	switch (arg) {
	case BRT_ARG_PTR_TO_DYNPTR_RDONLY:
		meta->dynptr_regno = regno;
		return brt_process_dynptr(env, regno, env->insn_idx, BRT_DYNPTR_ARG_RDONLY,
					  BRT_DYNPTR_INVALID, 0);
	case BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT:
	case BRT_ARG_PTR_TO_DYNPTR_RINGBUF_UNINIT:
		return brt_process_dynptr(env, regno, env->insn_idx, BRT_DYNPTR_ARG_UNINIT,
					  arg == BRT_ARG_PTR_TO_DYNPTR_LOCAL_UNINIT ? BRT_DYNPTR_LOCAL
										  : BRT_DYNPTR_RINGBUF,
					  0);
	default: /* BRT_ARG_PTR_TO_DYNPTR_RINGBUF_RELEASE */
		meta->dynptr_regno = regno;
		return brt_process_dynptr(env, regno, env->insn_idx, 0, BRT_DYNPTR_RINGBUF, 0);
	}
}

int brt_dynptr_helper_call(struct brt_env *env, int32_t id, const struct brt_helper_proto *fn,
			   struct brt_call_meta *meta)
{
	/* a dynptr of memory only of a map value */
	if (id == BPF_FUNC_dynptr_from_mem && !fn->host &&
	    brt_cur_regs(env)[BPF_REG_1].type != PTR_TO_MAP_VALUE) {
		brt_verr(env, "Unsupported reg type %s for bpf_dynptr_from_mem data\n",
			 brt_reg_type_str(env, brt_cur_regs(env)[BPF_REG_1].type));
		return -EACCES;
	}
	if (id == BPF_FUNC_dynptr_write && !fn->host && meta->dynptr_regno) {
		uint32_t t = brt_dynptr_info(env, &brt_cur_regs(env)[meta->dynptr_regno], NULL, NULL);

		meta->dynptr_pkt_write = t == BRT_DYNPTR_SKB || t == BRT_DYNPTR_SKB_META;
	}
	/* a slice of a dynptr dies with it: it keeps the dynptr's id and reference */
	if (fn->ret == BRT_RET_PTR_TO_DYNPTR_MEM_OR_NULL && meta->dynptr_regno)
		brt_dynptr_info(env, &brt_cur_regs(env)[meta->dynptr_regno], &meta->dynptr_id,
				&meta->dynptr_ref);
	return 0;
}
