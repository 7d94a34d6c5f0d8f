/* kfunc_oracle_crypto.c - verifier.kfunc_oracle's bpf_crypto kfuncs (kernel/bpf/crypto.c):
 * bpf_crypto_ctx_create in sleepable syscall programs (its struct bpf_crypto_params on the
 * stack, params__sz, the int it writes the error to; the context an acquired reference,
 * released or leaked), refused in tc; bpf_crypto_encrypt / _decrypt in tc with a context
 * that is no pointer and one that may be NULL, refused in syscall programs.  Verdict,
 * errno, error line and, for programs both accept, the run's result: only runs whose
 * answer does not depend on the kernel's crypto modules (a reserved byte set: -EINVAL; an
 * empty type name: -ENOENT).  Selftests' crypto_bench showed them: bpfrt lacked the kfuncs
 * ("calling kernel function ... is not allowed", EACCES, where the kernel said EINVAL).
 */
#include <stdio.h>

#include "bpfrt.h"
#include "harness.h"
#include "kfunc_oracle.h"

#define PARAMS 408 /* sizeof(struct bpf_crypto_params), at fp-408; the error at fp-412 */

/* insns: params zeroed (with reserved[0] = res), err = 0, r1..r3 set: 57 insns */
static size_t create_args(struct bpf_insn *p, int res, int sz)
{
	size_t n = 0;

	for (int i = 0; i < PARAMS / 8; i++)
		p[n++] = ST(BPF_DW, 10, -PARAMS + 8 * i, 0);
	if (res)
		p[n++] = ST(BPF_B, 10, -PARAMS + 14, res);
	p[n++] = ST(BPF_W, 10, -PARAMS - 4, 0);
	p[n++] = MOV_X(1, 10);
	p[n++] = ADD_K(1, -PARAMS);
	p[n++] = MOV_K(2, sz);
	p[n++] = MOV_X(3, 10);
	p[n++] = ADD_K(3, -PARAMS - 4);
	return n;
}

void crypto_rules(void)
{
	int create = kid("bpf_crypto_ctx_create"), rel = kid("bpf_crypto_ctx_release");
	int enc = kid("bpf_crypto_encrypt"), dec = kid("bpf_crypto_decrypt");
	struct bpf_insn p[128];
	size_t n;

	if (create <= 0 || rel <= 0 || enc <= 0 || dec <= 0) {
		printf("bpf_crypto: skipped: kernel BTF without the crypto kfuncs\n");
		return;
	}
	/* create, released when made; the run returns the error (as u32) */
	static const struct {
		const char *name;
		int res, sz;
	} runs[] = {
		{ "crypto: create, a reserved byte set", 1, PARAMS },
		{ "crypto: create, no type", 0, PARAMS },
		{ "crypto: create, params__sz short", 0, PARAMS - 8 },
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		n = create_args(p, runs[i].res, runs[i].sz);
		p[n++] = KCALL(create, 0);
		p[n++] = JEQ_K(0, 0, 2);
		p[n++] = MOV_X(1, 0);
		p[n++] = KCALL(rel, 0);
		p[n++] = LDX(BPF_W, 0, 10, -PARAMS - 4);
		p[n++] = EXIT();
		kcheck(runs[i].name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	}
	n = create_args(p, 0, PARAMS);
	p[n++] = KCALL(create, 0);
	p[n++] = MOV_K(0, 0);
	p[n++] = EXIT();
	kcheck("crypto: create leaks the context", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p, n);
	kcheck("crypto: create, not sleepable", BPF_PROG_TYPE_SYSCALL, 0, p, n);
	n = create_args(p, 0, PARAMS);
	p[n++] = KCALL(create, 0);
	p[n++] = MOV_X(1, 0);
	p[n++] = KCALL(rel, 0);
	p[n++] = MOV_K(0, 0);
	p[n++] = EXIT();
	kcheck("crypto: release without a NULL check", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, p,
	       n);
	kcheck("crypto: create in tc", BPF_PROG_TYPE_SCHED_CLS, 0, p, n);
	/* encrypt / decrypt (ctx, src, dst, siv__nullable) with dynptrs never made: the
	 * context's check comes first */
	for (int d = 0; d < 2; d++) {
		const struct bpf_insn scalar[] = { MOV_K(1, 7), MOV_X(2, 10), ADD_K(2, -16),
						   MOV_X(3, 10), ADD_K(3, -32), MOV_K(4, 0),
						   KCALL(d ? dec : enc, 0), MOV_K(0, 0), EXIT() };
		const struct bpf_insn null[] = { MOV_K(1, 0), MOV_X(2, 10), ADD_K(2, -16),
						 MOV_X(3, 10), ADD_K(3, -32), MOV_K(4, 0),
						 KCALL(d ? dec : enc, 0), MOV_K(0, 0), EXIT() };
		char name[96];

		snprintf(name, sizeof(name), "crypto: %s with a scalar context",
			 d ? "decrypt" : "encrypt");
		kcheck(name, BPF_PROG_TYPE_SCHED_CLS, 0, scalar, 9);
		snprintf(name, sizeof(name), "crypto: %s with NULL", d ? "decrypt" : "encrypt");
		kcheck(name, BPF_PROG_TYPE_XDP, 0, null, 9);
		snprintf(name, sizeof(name), "crypto: %s in a syscall program",
			 d ? "decrypt" : "encrypt");
		kcheck(name, BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, scalar, 9);
	}
}
