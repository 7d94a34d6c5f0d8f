/* kfunc_oracle_throw.c - verifier.kfunc_oracle's bpf_throw (BPF exceptions; verifier/
 * exception.c): the kernel's refusals of a throw inside an RCU section of the main
 * program (directly, and through a subprogram whose other path returns), with a socket
 * reference held, inside a bpf_loop callback, and under bpf_spin_lock-free code
 * otherwise; verdict, errno and error line equal.  Known difference, asserted as such: a
 * program the kernel accepts with a reachable bpf_throw is refused by bpfrt with the
 * kernel's own answer for a JIT without exception support (ENOTSUPP, "JIT does not
 * support calling kfunc bpf_throw#ID"): no engine here unwinds frames.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "harness.h"
#include "kfunc_oracle.h"

#define CALL_LOCAL(o) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, o)

void throw_rules(void)
{
	int t = kid("bpf_throw"), rl = kid("bpf_rcu_read_lock");
	char want[96];

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
		/* nothing held: the kernel accepts (and its run returns the cookie); bpfrt
		 * refuses, as the kernel does on a JIT without exceptions */
		const struct bpf_insn p[] = {
			MOV_K(BPF_REG_1, 0), KCALL(t, 0), MOV_K(BPF_REG_0, 0), EXIT(),
		};
		struct kres k, b;

		load_run(oracle_kernel_bpf, BPF_PROG_TYPE_SCHED_CLS, 0, p, 4, &k);
		load_run(bpfrt_bpf, BPF_PROG_TYPE_SCHED_CLS, 0, p, 4, &b);
		T_CASE("throw: nothing held (known difference: no exceptions here)");
		T_ASSERT(k.r.fd >= 0);
		T_EQ_INT(524, b.r.err);
		snprintf(want, sizeof(want), "JIT does not support calling kfunc bpf_throw#%d", t);
		T_EQ_STR(want, b.r.last);
	}
}
