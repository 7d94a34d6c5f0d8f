/* exception.c - bpf_throw(cookie), the kernel's BPF exceptions, as far as the verifier's
 * rules go.  bpfrt's engines cannot unwind a program's frames, so a program that may
 * throw is refused in the end as the kernel refuses it on a JIT without exception
 * support ("JIT does not support calling kfunc bpf_throw#ID", ENOTSUPP); before that it
 * is verified as the kernel verifies it, so a program the kernel refuses is refused for
 * the same reason:
 * - a call under bpf_spin_lock is refused as any kfunc call there (do_check_insn());
 * - the call ends its path as an exit of the whole program (process_bpf_exit_full() with
 *   exception_exit): references held in any frame leak, and no RCU or preempt-disabled
 *   section may be open in any frame (check_resource_leak() of 6.18.44, whose messages
 *   start "bpf_throw"; the 6.18.y tree read for this checked sections in the main
 *   program's frame only, as "BPF_EXIT instruction in main prog");
 * - no callback may throw, nor a function a callback calls (check_max_stack_depth()'s
 *   walk: func_calls.c asks brt_throw_in_callback()).
 */
#include <errno.h>
#include <string.h>

#include "verifier/internal.h"

#define ENOTSUPP_KERNEL 524 /* the kernel's internal ENOTSUPP */

int brt_is_throw_call(const struct bpf_insn *insn)
{
	const struct brt_btf *vml;

	if (insn->code != (BPF_JMP | BPF_CALL) || insn->src_reg != BPF_PSEUDO_KFUNC_CALL ||
	    insn->off || insn->imm <= 0)
		return 0;
	vml = brt_btf_vmlinux();
	return vml && !strcmp(brt_btf_name(vml, (uint32_t)insn->imm), "bpf_throw");
}

int brt_throw_exit(struct brt_env *env)
{
	/* 6.18.44's check_resource_leak() for an exception exit: every frame's references
	 * leak, and the sections are checked in any frame (none returns to a caller) */
	int err = brt_check_resource_leak(env, 1, 1, "bpf_throw");

	if (err)
		return err;
	return 1; /* the path ends here, as at the main program's exit */
}

int brt_throw_in_callback(struct brt_env *env, int insn_idx, int subprog)
{
	brt_verr(env, "bpf_throw kfunc (insn %d) cannot be called from callback subprog %d\n",
		 insn_idx, subprog);
	return -EINVAL;
}

int brt_refuse_throw(struct brt_env *env)
{
	for (int i = 0; i < env->len; i++)
		if (env->aux[i].seen && brt_is_throw_call(&env->insns[i])) {
			brt_verr(env, "JIT does not support calling kfunc bpf_throw#%d\n",
				 env->insns[i].imm);
			return -ENOTSUPP_KERNEL;
		}
	return 0;
}
