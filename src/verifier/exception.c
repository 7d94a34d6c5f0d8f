/* exception.c - bpf_throw(cookie), the kernel's BPF exceptions, verified as Linux 6.18
 * verifies them (the running kernel's x86-64 JIT supports them, so it accepts such
 * programs):
 * - a call under bpf_spin_lock is refused as any kfunc call there (do_check_insn());
 * - the call ends its path as an exit of the whole program (process_bpf_exit_full() with
 *   exception_exit): references held in any frame leak, and no RCU or preempt-disabled
 *   section may be open in any frame (check_resource_leak() of 6.18.44, whose messages
 *   start "bpf_throw"; the 6.18.y tree read for this checked sections in the main
 *   program's frame only, as "BPF_EXIT instruction in main prog");
 * - without an exception callback the cookie becomes the program's return value: it is
 *   checked as r0 at the program's exit is (check_return_code(R1));
 * - the callback the main program's "exception_callback:" tag names (global.c) is a
 *   global function walked on its own after the others, with one scalar argument, whose
 *   exits are the program's (its return value checked as the main program's);
 * - no callback may throw, nor a function a callback calls, the exception callback
 *   included; nothing may call the exception callback directly nor tail-call below it
 *   (check_max_stack_depth()'s walk: func_calls.c).
 * At run time (vm/vm.c) a throw stops the run and the callback runs with the cookie; its
 * return value is the program's (the kernel's default callback returns the cookie).
 */
#include <errno.h>
#include <string.h>

#include "verifier/internal.h"

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

int brt_throw_cookie_check(struct brt_env *env)
{
	env->seen_exception = 1;
	/* the kernel's default callback returns the cookie: it is the program's value */
	if (env->exc_cb_subprog)
		return 0;
	return brt_check_return_code(env, BPF_REG_1, "R1");
}

int brt_exc_cb_entry(struct brt_env *env, int sub, struct brt_frame *f)
{
	const struct brt_subprog *sp = &env->subprogs[sub];

	f->in_exc_cb = 1;
	if (sp->arg_cnt != 1 || (sp->arg_kind[0] & ~BRT_GARG_NONNULL) != BRT_GARG_SCALAR) {
		brt_verr(env, "exception cb only supports single integer argument\n");
		return -EINVAL;
	}
	return 0;
}
