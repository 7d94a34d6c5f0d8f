/* func_calls.c - bpf-to-bpf calls and program exit: a call pushes a frame holding the
 * caller's r1-r5, exit pops it (or, in a callback, returns to the helper that calls again);
 * the combined stack of every call chain is checked after the walk; and the main program's
 * return value must lie in the range its program type allows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "verifier/internal.h"

/* The kernel's verbose_invalid_scalar(): "<where> the register R0 has smin=.. smax=..
 * should have been in [lo, hi]", as one error line. */
static void bad_range(struct brt_env *env, const struct brt_reg *r0, const char *where,
		      int64_t lo, int64_t hi, const char *name)
{
	char line[BRT_VERIFY_ERRLEN], smin[32] = "", smax[32] = "";

	if (r0->smin > INT64_MIN)
		snprintf(smin, sizeof(smin), " smin=%lld", (long long)r0->smin);
	if (r0->smax < INT64_MAX)
		snprintf(smax, sizeof(smax), " smax=%lld", (long long)r0->smax);
	snprintf(line, sizeof(line), "%s the register %s has%s%s%s should have been in [%d, %d]",
		 where, name, smin, smax, smin[0] || smax[0] ? "" : " unknown scalar value", (int)lo,
		 (int)hi);
	brt_verr(env, "%s\n", line);
}

/* ---- bpf-to-bpf calls --------------------------------------------------------------------- */
int brt_check_func_call(struct brt_env *env, const struct bpf_insn *insn, int *insn_idx)
{
	struct brt_vstate *st = env->cur;
	struct brt_frame *caller = st->frame[st->curframe], *callee;
	int target = *insn_idx + insn->imm + 1, sub = brt_find_subprog(env, target), err;

	if (sub < 0) {
		brt_verr(env, "verifier bug. No program starts at insn %d\n", target);
		return -EFAULT;
	}
	/* the prototype's argument check; a global function is not descended into */
	err = brt_global_call(env, sub);
	if (err)
		return err < 0 ? err : 0;
	if (st->curframe + 1 >= BRT_MAX_FRAMES) {
		brt_verr(env, "the call stack of %d frames is too deep\n", st->curframe + 2);
		return -E2BIG;
	}
	callee = brt_frame_new(*insn_idx, st->curframe + 1, sub);
	if (!callee)
		return -ENOMEM;
	for (int i = BPF_REG_1; i <= BPF_REG_5; i++)
		callee->regs[i] = caller->regs[i];
	st->frame[++st->curframe] = callee;
	for (int i = BPF_REG_0; i <= BPF_REG_5; i++)
		brt_mark_reg_not_init(&caller->regs[i]);
	*insn_idx = env->subprogs[sub].start - 1;
	brt_live_log_reset_chain(env);
	env->scratched_regs = 0xffff;
	env->scratched_stack = ~0ULL;
	if (LOG_L1(env)) {
		brt_vinfo(env, "caller:\n");
		brt_print_state(env, st, caller->frameno, 1);
		brt_vinfo(env, "callee:\n");
		brt_print_state(env, st, st->curframe, 1);
	}
	return 0;
}

int brt_prepare_func_exit(struct brt_env *env, int *insn_idx)
{
	struct brt_vstate *st = env->cur;
	struct brt_frame *callee = st->frame[st->curframe], *caller;

	brt_stack_live_sync(env);
	brt_live_log_update(env);
	/* r0 may be unset: the caller only fails if it reads it */
	if (callee->regs[BPF_REG_0].type == PTR_TO_STACK) {
		brt_verr(env, "cannot return stack pointer to the caller\n");
		return -EINVAL;
	}
	caller = st->frame[st->curframe - 1];
	if (callee->in_callback_fn) {
		const struct brt_reg *r0 = &callee->regs[BPF_REG_0];

		if (r0->type != SCALAR_VALUE) {
			brt_verr(env, "R0 not a scalar value\n");
			return -EACCES;
		}
		/* marked precise before the range is checked, as the kernel's (a level-2 log
		 * shows the walk before the error) */
		if (brt_mark_precise(env, BPF_REG_0))
			return -ENOMEM;
		if (r0->smin < 0 || r0->smax > 1) {
			bad_range(env, r0, "At callback return", 0, 1, "R0");
			return -EINVAL;
		}
		/* back to the call: the helper may call again (do_check adds one) */
		*insn_idx = callee->callsite - 1;
	} else {
		caller->regs[BPF_REG_0] = callee->regs[BPF_REG_0];
		*insn_idx = callee->callsite;
	}
	if (LOG_L1(env)) {
		brt_vinfo(env, "returning from callee:\n");
		brt_print_state(env, st, callee->frameno, 1);
		brt_vinfo(env, "to caller at %d:\n", *insn_idx + 1);
		brt_print_state(env, st, caller->frameno, 1);
	}
	if (callee->in_callback_fn) {
		int callsite = callee->callsite;
		struct brt_vstate *prev;

		free(callee->stack);
		free(callee);
		st->frame[st->curframe--] = NULL;
		prev = brt_prev_entry(st, callsite);
		if (prev)
			brt_widen_imprecise(env, prev, st, callsite);
		return 0;
	}
	free(callee->stack);
	free(callee);
	st->frame[st->curframe--] = NULL;
	return 0;
}

/* in_cb: idx runs as a callback or is called from one (bpf_throw may not be there);
 * in_exc: ... from the exception callback (a tail call may not be there) */
static int stack_visit(struct brt_env *env, int idx, int frame, int depth, int in_cb,
		       int in_exc)
{
	int sd = env->subprogs[idx].stack_depth, start = env->subprogs[idx].start;
	int end = env->subprogs[idx + 1].start, err;

	if (frame >= BRT_MAX_FRAMES) {
		brt_verr(env, "the call stack of %d frames is too deep !\n", frame);
		return -E2BIG;
	}
	/* a tail call replaces only the subprogram's frame: its callers' frames stay below
	 * the target, up to 33 times over, so they may hold little stack */
	if (idx && env->subprogs[idx].has_tail_call && depth >= 256) {
		brt_verr(env, "tail_calls are not allowed when call stack of previous frames is %d "
			      "bytes. Too large\n", depth);
		return -EACCES;
	}
	/* the kernel's walk asks when a function below the exception callback ends */
	if (in_exc && frame && env->subprogs[idx].has_tail_call) {
		brt_verr(env, "cannot tail call within exception cb\n");
		return -EINVAL;
	}
	depth += (sd + 15) / 16 * 16;
	if (depth > BRT_MAX_STACK) {
		brt_verr(env, "combined stack size of %d calls is %d. Too large\n", frame + 1, depth);
		return -EACCES;
	}
	for (int i = start; i < end; i++) {
		const struct bpf_insn *insn = &env->insns[i];
		int callee;

		if (in_cb && brt_is_throw_call(insn))
			return brt_throw_in_callback(env, i, idx);
		/* a callback runs on top of the frame that takes its address */
		if ((insn->code != (BPF_JMP | BPF_CALL) || insn->src_reg != BPF_PSEUDO_CALL) &&
		    (insn->code != (BPF_LD | BPF_IMM | BPF_DW) || insn->src_reg != BPF_PSEUDO_FUNC))
			continue;
		callee = brt_find_subprog(env, i + insn->imm + 1);
		if (callee < 0)
			continue;
		if (callee && callee == env->exc_cb_subprog) {
			if (insn->src_reg == BPF_PSEUDO_FUNC)
				continue; /* an async callback's own walk, not this one */
			brt_verr(env, "insn %d cannot call exception cb directly", i);
			return -EINVAL;
		}
		err = stack_visit(env, callee, frame + 1, depth,
				  in_cb || insn->src_reg == BPF_PSEUDO_FUNC, in_exc);
		if (err)
			return err;
	}
	return 0;
}

int brt_check_max_stack_depth(struct brt_env *env)
{
	/* the kernel walks the async callbacks' trees (the exception callback's) before the
	 * main program's; the exception callback is a callback: it may not throw */
	if (env->exc_cb_subprog) {
		int err = stack_visit(env, env->exc_cb_subprog, 0, 0, 1, 1);

		if (err)
			return err;
	}
	return stack_visit(env, 0, 0, 0, 0, 0);
}

int brt_ret_range(const struct brt_env *env, int64_t *lo, int64_t *hi)
{
	const struct brt_prog_type *pt = brt_prog_type(env->opts->prog_type);

	if (env->opts->prog_type == BPF_PROG_TYPE_TRACING) {
		/* fentry/fexit return nothing to the traced function; an iterator's 1 asks to
		 * see the object again */
		uint32_t eat = env->opts->expected_attach_type;

		*lo = 0;
		*hi = eat == BPF_TRACE_ITER ? 1 : 0;
		return eat == BPF_TRACE_FENTRY || eat == BPF_TRACE_FEXIT || eat == BPF_TRACE_ITER;
	}
	/* check_return_code(): a session probe's 1 skips its return probe */
	if (env->opts->prog_type == BPF_PROG_TYPE_KPROBE) {
		*lo = 0;
		*hi = 1;
		return env->opts->expected_attach_type == BRT_TRACE_KPROBE_SESSION ||
		       env->opts->expected_attach_type == BRT_TRACE_UPROBE_SESSION;
	}
	if (!pt || !pt->ret_checked)
		return 0;
	*lo = pt->ret_lo;
	*hi = pt->ret_hi;
	/* attach types with a range of their own */
	if (pt->type == BPF_PROG_TYPE_CGROUP_SKB &&
	    env->opts->expected_attach_type == BPF_CGROUP_INET_EGRESS)
		*hi = 3;
	if (pt->type == BPF_PROG_TYPE_CGROUP_SOCK_ADDR) {
		switch (env->opts->expected_attach_type) {
		case BPF_CGROUP_UDP4_RECVMSG: case BPF_CGROUP_UDP6_RECVMSG:
		case BRT_CGROUP_UNIX_RECVMSG:
		case BPF_CGROUP_INET4_GETPEERNAME: case BPF_CGROUP_INET6_GETPEERNAME:
		case BRT_CGROUP_UNIX_GETPEERNAME:
		case BPF_CGROUP_INET4_GETSOCKNAME: case BPF_CGROUP_INET6_GETSOCKNAME:
		case BRT_CGROUP_UNIX_GETSOCKNAME:
			*lo = 1; /* the address may only be rewritten, not refused */
			break;
		case BPF_CGROUP_INET4_BIND: case BPF_CGROUP_INET6_BIND:
			*hi = 3; /* bit 1: bypass the bind's port capability check */
			break;
		}
	}
	return 1;
}

int brt_check_return_code(struct brt_env *env, int regno, const char *name)
{
	const struct brt_frame *f0 = env->cur->frame[0];
	/* the exception callback's exits are the program's */
	int is_subprog = f0->subprogno && !f0->in_exc_cb;
	const struct brt_reg *r0;
	int64_t lo = 0, hi = 0;
	int err;

	/* check_return_code(): a struct_ops member returning void takes no R0 at all */
	if (env->opts->prog_type == BPF_PROG_TYPE_STRUCT_OPS && !is_subprog &&
	    env->attach_proto && !env->attach_proto->type)
		return 0;
	err = brt_check_reg_arg(env, regno, SRC_OP);
	if (err)
		return err;
	if (brt_is_pointer_value(env, regno)) {
		brt_verr(env, "R%d leaks addr as return value\n", regno);
		return -EACCES;
	}
	r0 = &brt_cur_regs(env)[regno];
	if (f0->in_async_cb) {
		/* a timer callback returns 0 (set_timer_callback_state's range), a task
		 * work's any 32-bit value (set_task_work_schedule_callback_state's) */
		lo = f0->in_async_cb == BRT_ASYNC_TASK_WORK ? INT32_MIN : 0;
		hi = f0->in_async_cb == BRT_ASYNC_TASK_WORK ? INT32_MAX : 0;
		if (r0->type != SCALAR_VALUE) {
			brt_verr(env, "At async callback return the register R%d is not a known "
				      "value (%s)\n", regno, brt_reg_type_str(env, r0->type));
			return -EINVAL;
		}
		err = brt_mark_precise(env, regno);
		if (err)
			return err;
		if (r0->smin >= lo && r0->smax <= hi)
			return 0;
		bad_range(env, r0, "At async callback return", lo, hi, name);
		return -EINVAL;
	}
	if (is_subprog) {
		/* a global function walked on its own returns a scalar to any caller */
		if (r0->type != SCALAR_VALUE) {
			brt_verr(env, "At subprogram exit the register R%d is not a scalar value "
				      "(%s)\n", regno, brt_reg_type_str(env, r0->type));
			return -EINVAL;
		}
		return 0;
	}
	if (!brt_ret_range(env, &lo, &hi))
		return 0;
	if (r0->type != SCALAR_VALUE) {
		brt_verr(env, "At program exit the register R%d is not a known value (%s)\n",
			 regno, brt_reg_type_str(env, r0->type));
		return -EINVAL;
	}
	/* the program type checks the value: every path to here must keep it precise */
	err = brt_mark_precise(env, regno);
	if (err)
		return err;
	if (r0->smin >= lo && r0->smax <= hi)
		return 0;
	bad_range(env, r0, "At program exit", lo, hi, name);
	return -EINVAL;
}
