/* test_callback.c - helpers that call back into the program (src/vm/callback.c): bpf_loop
 * on every engine (fast and checked interpreter, JIT): results, early stop, refusals,
 * nested callbacks and a callback with its own stack; and, unverified, what the engines
 * do with a value that names no function, a fault inside a callback, a callback chain
 * deeper than 8 frames and a stop (a tail-call-like bpfrt_run_stop()) inside one.
 */
#include <errno.h>
#include <stdio.h>

#include "vmtest.h"

/* fp-8 = 0; r0 = bpf_loop(N, cb, fp-8, FLAGS); return r0 * 1000 + fp-8 */
#define MAIN(n, flags)                                                                           \
	"stdw [%r10-8], 0\nmov %r3, %r10\nadd %r3, -8\nlddw %r1, " n "\nlddw %r2, func cb\n"     \
	"mov %r4, " flags "\ncall 181\nldxdw %r1, [%r10-8]\nmul %r0, 1000\nadd %r0, %r1\nexit\n" \
	"cb:\n"
#define CB_SUM "ldxdw %r3, [%r2]\nadd %r3, %r1\nstxdw [%r2], %r3\nmov %r0, 0\nexit\n"

struct cbcase {
	const char *name;
	const char *text;
	uint64_t r0;          /* expected result when err is 0 */
	int err;              /* expected -errno of the run: checked engine only */
	const char *msg;      /* ... and a part of its message */
};

static const struct cbcase cases[] = {
	{ "sum 0..9", MAIN("10", "0") CB_SUM, 10 * 1000 + 45 },
	{ "zero loops", MAIN("0", "0") CB_SUM, 0 },
	{ "nr_loops is u32", MAIN("0x100000002", "0") CB_SUM, 2 * 1000 + 1 },
	{ "100 loops", MAIN("100", "0") CB_SUM, 100 * 1000 + 4950 },
	{ "flags: -EINVAL", MAIN("3", "1") CB_SUM, (uint64_t)-EINVAL * 1000 },
	{ "too many: -E2BIG", MAIN("0x800001", "0") CB_SUM, (uint64_t)-E2BIG * 1000 },
	{ "early stop", MAIN("100", "0") "ldxdw %r3, [%r2]\nadd %r3, %r1\nstxdw [%r2], %r3\n"
		       "mov %r0, 0\njne %r1, 3, +1\nmov %r0, 1\nexit\n", 4 * 1000 + 6 },
	/* the callback keeps r6-r9 and its own stack; the caller's survive */
	{ "callee-saved and stack", "mov %r6, 7\n" MAIN("5", "0")
	  "mov %r6, 100\nstdw [%r10-8], 11\nldxdw %r3, [%r2]\nldxdw %r4, [%r10-8]\nadd %r3, %r4\n"
	  "stxdw [%r2], %r3\nmov %r0, 0\nexit\n", 5 * 1000 + 55 },
	{ "caller's r6 kept", "mov %r6, 7\nmov %r1, 3\nlddw %r2, func cb\nmov %r3, 0\nmov %r4, 0\n"
	  "call 181\nmov %r0, %r6\nexit\ncb:\nmov %r6, 100\nmov %r0, 0\nexit\n", 7 },
	/* a callback that runs bpf_loop again: 1 + 2 + 3 inner calls */
	{ "nested", MAIN("3", "0") "mov %r6, %r2\nmov %r3, %r2\nadd %r1, 1\nlddw %r2, func inner\n"
	  "mov %r4, 0\ncall 181\nmov %r0, 0\nexit\ninner:\nldxdw %r3, [%r2]\nadd %r3, 1\n"
	  "stxdw [%r2], %r3\nmov %r0, 0\nexit\n", 3 * 1000 + 6 },
	/* bpf_loop from a bpf-to-bpf callee */
	{ "from a subprogram", "call local sub\nexit\nsub:\n" MAIN("4", "0") CB_SUM, 4 * 1000 + 6 },
	/* unverified: r2 names no function (checked engine faults; others: trusted) */
	{ "bad function", "mov %r1, 1\nlddw %r2, 99999\nmov %r3, 0\nmov %r4, 0\ncall 181\nexit\n",
	  0, -EFAULT, "insn 5: callback to 0x1869f, not a function of the program" },
	{ "fault in callback", MAIN("2", "0") "ldxdw %r0, [%r2+4096]\nmov %r0, 0\nexit\n", 0,
	  -EFAULT, "insn 13: read of 8 bytes at r2+4096 outside any region" },
	/* a callback that loops on itself: 8 frames at most */
	{ "too deep", MAIN("2", "0") "mov %r3, %r2\nmov %r1, 1\nlddw %r2, func cb\nmov %r4, 0\n"
	  "call 181\nmov %r0, 0\nexit\n", 0, -EFAULT, "call stack deeper than 8 frames" },
};

static void run_case(const struct cbcase *c, enum bpfrt_engine e, const char *ename)
{
	char name[160], err[256];
	struct bpfrt_vm *vm;
	uint64_t r0 = 0;
	int ret;

	/* unverified programs that misbehave: only the checked engine promises a clean fault
	 * (the others trust the program, as they trust verified ones) */
	if (c->err && e != BPFRT_ENGINE_CHECKED)
		return;
	snprintf(name, sizeof(name), "%s: %s", ename, c->name);
	T_CASE(name);
	ret = vt_load(c->text, e, 0, &vm, err, sizeof(err));
	if (ret == -EOPNOTSUPP)
		return; /* no JIT in this build */
	T_EQ_INT(0, ret);
	if (ret)
		return;
	ret = bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err));
	bpfrt_vm_free(vm);
	if (c->err) {
		T_EQ_INT(c->err, ret);
		T_ASSERT(strstr(err, c->msg) != NULL);
		if (!strstr(err, c->msg))
			printf("  message: %s\n", err);
		return;
	}
	T_EQ_INT(0, ret);
	T_EQ_U64(c->r0, r0);
}

int main(void)
{
	static const enum bpfrt_engine engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
						     BPFRT_ENGINE_JIT };
	static const char *const names[] = { "interp", "checked", "jit" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t e = 0; e < 3; e++)
			run_case(&cases[i], engines[e], names[e]);
	return t_done();
}
