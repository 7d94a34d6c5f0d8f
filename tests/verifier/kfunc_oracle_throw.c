/* kfunc_oracle_throw.c - verifier.kfunc_oracle's bpf_throw (BPF exceptions; verifier/
 * exception.c, vm/vm.c run_throwing()): the kernel's refusals of a throw inside an RCU
 * section of the main program (directly, and through a subprogram whose other path
 * returns), with a socket reference held, inside a bpf_loop callback, a cookie outside
 * the program type's return range (the default callback returns it); and programs the
 * kernel accepts, test-run on both sides: the cookie is the return value (thrown in the
 * main program, in a subprogram, on one path only).  Verdict, errno, error line and
 * retval equal.  Exception callbacks (BTF-tagged) are verifier.global_oracle's.
 */
#include <stdio.h>

#include "bpfrt.h"
#include "harness.h"
#include "kfunc_oracle.h"

#define CALL_LOCAL(o) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, o)

void throw_rules(void)
{
	int t = kid("bpf_throw"), rl = kid("bpf_rcu_read_lock");

	if (t <= 0 || rl <= 0) {
		printf("bpf_throw: skipped: kernel BTF without bpf_throw\n");
		return;
	}
	{
		const struct bpf_insn p[] = {
			KCALL(rl, 0), MOV_K(BPF_REG_1, 0), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};

		kcheck("throw: inside an RCU section", BPF_PROG_TYPE_SCHED_CLS, 0, p, 5);
	}
	{
		/* the subprogram throws when skb->len != 0, else returns into the section */
		const struct bpf_insn p[] = {
			MOV_X(BPF_REG_6, BPF_REG_1), KCALL(rl, 0), LDX(BPF_W, BPF_REG_1, BPF_REG_6, 0),
			CALL_LOCAL(2), MOV_K(BPF_REG_0, 0), EXIT(),
			JEQ_K(BPF_REG_1, 0, 2), MOV_K(BPF_REG_1, 0), KCALL(t, 0), MOV_K(BPF_REG_0, 0),
			EXIT(),
		};

		kcheck("throw: in a subprogram, RCU section open in main", BPF_PROG_TYPE_SCHED_CLS,
		       0, p, 11);
	}
	{
		/* bpf_sk_lookup_tcp's socket (or NULL) is a reference until released */
		const struct bpf_insn p[] = {
			MOV_X(BPF_REG_6, BPF_REG_1), ST(BPF_DW, BPF_REG_10, -16, 0),
			ST(BPF_W, BPF_REG_10, -8, 0), MOV_X(BPF_REG_2, BPF_REG_10),
			ADD_K(BPF_REG_2, -16), MOV_K(BPF_REG_3, 12), MOV_K(BPF_REG_4, -1),
			MOV_K(BPF_REG_5, 0), MOV_X(BPF_REG_1, BPF_REG_6),
			CALLH(BPF_FUNC_sk_lookup_tcp), MOV_K(BPF_REG_1, 0), KCALL(t, 0),
			MOV_K(BPF_REG_0, 0), EXIT(),
		};

		kcheck("throw: holding a socket reference", BPF_PROG_TYPE_SCHED_CLS, 0, p, 14);
	}
	{
		/* bpf_loop(1, cb, NULL, 0) where cb throws */
		const struct bpf_insn p[] = {
			MOV_K(BPF_REG_1, 1), LDDW(BPF_REG_2, BPF_PSEUDO_FUNC, 6, 0),
			MOV_K(BPF_REG_3, 0), MOV_K(BPF_REG_4, 0), CALLH(BPF_FUNC_loop),
			MOV_K(BPF_REG_0, 0), EXIT(),
			MOV_K(BPF_REG_1, 0), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};

		kcheck("throw: in a bpf_loop callback", BPF_PROG_TYPE_SCHED_CLS, 0, p, 12);
	}
	{
		/* nothing held: the default callback returns the cookie */
		const struct bpf_insn p[] = {
			MOV_K(BPF_REG_1, 5), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};

		kcheck("throw: the cookie is the return value", BPF_PROG_TYPE_SCHED_CLS, 0, p, 4);
	}
	{
		/* thrown two frames down; the main program's own exit is never reached */
		const struct bpf_insn p[] = {
			CALL_LOCAL(2), MOV_K(BPF_REG_0, 1), EXIT(),
			CALL_LOCAL(2), MOV_K(BPF_REG_0, 2), EXIT(),
			MOV_K(BPF_REG_1, 32), KCALL(t, 0), MOV_K(BPF_REG_0, 3), EXIT(),
		};

		kcheck("throw: from a subprogram two calls down", BPF_PROG_TYPE_SCHED_CLS, 0, p, 10);
	}
	{
		/* throws only when skb->len > 100: the 64-byte test frame returns normally */
		const struct bpf_insn p[] = {
			LDX(BPF_W, BPF_REG_2, BPF_REG_1, 0), MOV_K(BPF_REG_0, 9),
			I(BPF_JMP | BPF_JGT | BPF_K, BPF_REG_2, 0, 1, 100), EXIT(),
			MOV_K(BPF_REG_1, 7), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};

		kcheck("throw: on a path the run does not take", BPF_PROG_TYPE_SCHED_CLS, 0, p, 8);
	}
	{
		/* the cookie must be in the type's return range: cgroup_skb's [0, 1] */
		const struct bpf_insn p[] = {
			MOV_K(BPF_REG_1, 5), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};
		const struct bpf_insn q[] = {
			MOV_K(BPF_REG_1, 1), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};

		kcheck("throw: cookie out of cgroup_skb's range", BPF_PROG_TYPE_CGROUP_SKB, 0, p, 4);
		kcheck("throw: cookie in cgroup_skb's range", BPF_PROG_TYPE_CGROUP_SKB, 0, q, 4);
	}
}
