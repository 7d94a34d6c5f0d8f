/* test_checked.c - the checked engine's faults: every way a program can leave its regions
 * (input memory, stack frames, read-only memory, misaligned atomics), the instruction
 * budget, the call depth, unknown helpers and falling off the end, each with its exact
 * message and errno.  Faults that the fast engine also catches are checked there too.
 */
#include <errno.h>
#include <string.h>

#include "helpers/helpers.h"
#include "vm/helper_proto.h"
#include "vm/vm.h"
#include "vmtest.h"

struct fcase {
	const char *name;
	const char *text;
	size_t mem_len;     /* bytes of input memory (0: r1 = NULL) */
	uint64_t budget;    /* 0: default */
	int fast_too;       /* the fast engine reports the same fault */
	int ret;
	const char *msg;
};

static const struct fcase cases[] = {
	{ "read past input", "ldxdw %r0, [%r1+64]\nexit", 8, 0, 0, -EFAULT,
	  "insn 0: read of 8 bytes at r1+64 outside any region" },
	{ "read straddling the end", "mov %r0, 0\nldxdw %r0, [%r1+4]\nexit", 8, 0, 0, -EFAULT,
	  "insn 1: read of 8 bytes at r1+4 outside any region" },
	{ "read before input", "ldxb %r0, [%r1-1]\nexit", 8, 0, 0, -EFAULT,
	  "insn 0: read of 1 bytes at r1-1 outside any region" },
	{ "NULL input", "ldxw %r0, [%r1+0]\nexit", 0, 0, 0, -EFAULT,
	  "insn 0: read of 4 bytes at r1+0 outside any region" },
	{ "wild pointer", "lddw %r2, 0x7fff00001000\nstxdw [%r2+0], %r1\nexit", 8, 0, 0, -EFAULT,
	  "insn 2: write of 8 bytes at r2+0 outside any writable region" },
	{ "stack overflow past 512", "stdw [%r10-520], 1\nexit", 0, 0, 0, -EFAULT,
	  "insn 0: write of 8 bytes at r10-520 outside any writable region" },
	{ "stack straddling the bottom", "stdw [%r10-516], 1\nexit", 0, 0, 0, -EFAULT,
	  "insn 0: write of 8 bytes at r10-516 outside any writable region" },
	{ "above the stack top", "ldxdw %r0, [%r10+0]\nexit", 0, 0, 0, -EFAULT,
	  "insn 0: read of 8 bytes at r10+0 outside any region" },
	{ "callee below its frame", "call local f\nexit\nf:\nstb [%r10-513], 1\nexit", 0, 0, 0,
	  -EFAULT, "insn 2: write of 1 bytes at r10-513 outside any writable region" },
	{ "caller reads a returned frame",
	  "call local f\nldxdw %r0, [%r10-520]\nexit\nf:\nstdw [%r10-8], 1\nexit", 0, 0, 0, -EFAULT,
	  "insn 1: read of 8 bytes at r10-520 outside any region" },
	{ "atomic outside", "mov %r2, 1\nlock add [%r1+8], %r2\nexit", 8, 0, 0, -EFAULT,
	  "insn 1: atomic access of 8 bytes at r1+8 outside any writable region" },
	{ "misaligned atomic", "mov %r2, 1\nlock fetch add32 [%r1+1], %r2\nexit", 8, 0, 0, -EFAULT,
	  "insn 1: misaligned atomic access of 4 bytes at r1+1" },
	{ "budget on an infinite loop", "mov %r0, 0\nl:\nadd %r0, 1\nja l", 0, 1000, 0, -E2BIG,
	  "insn 2: instruction budget of 1000 exhausted" },
	{ "budget counts every instruction", "mov %r0, 1\nmov %r0, 2\nmov %r0, 3\nexit", 0, 3, 0,
	  -E2BIG, "insn 3: instruction budget of 3 exhausted" },
	{ "call depth above 8", "f:\ncall local f\nexit", 0, 0, 1, -EFAULT,
	  "insn 0: call stack deeper than 8 frames" },
	{ "unknown helper", "mov %r0, 0\ncall 9999\nexit", 0, 0, 1, -EFAULT,
	  "insn 1: call to unknown helper 9999" },
	{ "callx with a bad id", "mov %r2, -1\ncallx %r2\nexit", 0, 0, 1, -EFAULT,
	  "insn 1: call to unknown helper 18446744073709551615" },
	{ "falls off the end", "mov %r0, 1\nmov %r0, 2", 0, 0, 1, -EFAULT,
	  "insn 1: execution falls off the end of the program" },
};

/* Programs that stay inside their regions run normally on the checked engine. */
static const struct {
	const char *name;
	const char *text;
	size_t mem_len;
	uint64_t budget;
	uint64_t r0;
} ok_cases[] = {
	{ "last byte of input", "ldxb %r0, [%r1+7]\nexit", 8, 0, 0 },
	{ "whole stack frame", "stdw [%r10-512], 3\nldxdw %r0, [%r10-512]\nexit", 0, 0, 3 },
	{ "budget exactly enough", "mov %r0, 1\nmov %r0, 2\nexit", 0, 3, 2 },
	{ "uninitialised stack reads 0", "ldxdw %r0, [%r10-8]\nexit", 0, 0, 0 },
};

int main(void)
{
	uint8_t mem[64] = { 0 };
	char err[256], name[160];
	uint64_t r0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fcase *c = &cases[i];

		for (int fast = 0; fast <= c->fast_too; fast++) {
			struct bpfrt_vm *vm;
			int ret;

			snprintf(name, sizeof(name), "%s [%s]", c->name, fast ? "interp" : "checked");
			T_CASE(name);
			ret = vt_load(c->text, fast ? BPFRT_ENGINE_INTERP : BPFRT_ENGINE_CHECKED,
				      c->budget, &vm, err, sizeof(err));
			if (ret) {
				T_FAIL("load: %s", err);
				continue;
			}
			ret = bpfrt_vm_run(vm, c->mem_len ? mem : NULL, c->mem_len, &r0, err,
					   sizeof(err));
			T_EQ_INT(c->ret, ret);
			T_EQ_STR(c->msg, err);
			bpfrt_vm_free(vm);
		}
	}
	for (size_t i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
		struct bpfrt_vm *vm;

		T_CASE(ok_cases[i].name);
		if (vt_load(ok_cases[i].text, BPFRT_ENGINE_CHECKED, ok_cases[i].budget, &vm, err,
			    sizeof(err))) {
			T_FAIL("load: %s", err);
			continue;
		}
		r0 = 0xdead;
		T_EQ_INT(0, bpfrt_vm_run(vm, ok_cases[i].mem_len ? mem : NULL, ok_cases[i].mem_len,
					 &r0, err, sizeof(err)));
		T_EQ_U64(ok_cases[i].r0, r0);
		bpfrt_vm_free(vm);
	}
	/* the kernel functions' slots trust their pointers (only the verifier makes that
	 * safe): an unverified program naming one faults as for any unknown helper, never
	 * dereferences its arguments (fuzz/regress/checked/kfunc-slot-unverified) */
	for (uint32_t k = 0; k < BRT_KFUNC_COUNT; k++) {
		uint32_t id = BRT_KFUNC_HELPER_BASE + k;
		char text[96], want[64];
		struct bpfrt_vm *vm;

		snprintf(name, sizeof(name), "kfunc slot %u, unverified", id);
		T_CASE(name);
		snprintf(text, sizeof(text), "mov %%r1, 0\nmov %%r2, 0\ncall %u\nexit", id);
		if (vt_load(text, BPFRT_ENGINE_CHECKED, 0, &vm, err, sizeof(err))) {
			T_FAIL("load: %s", err);
			continue;
		}
		snprintf(want, sizeof(want), "insn 2: call to unknown helper %u", id);
		T_EQ_INT(-EFAULT, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_STR(want, err);
		bpfrt_vm_free(vm);
	}
	/* every built-in helper, called unverified with every argument 0x1000 (no memory of
	 * the run's): one whose pointers only the verifier can vouch for is not offered, one
	 * whose pointers the engine checks faults on the first of them (helper_args.c; the
	 * fuzz.checked findings fuzz/regress/checked/snprintf-unverified-fmt and
	 * syncookie-unverified-iph reached bpf_snprintf's fmt and a syncookie helper's iph) */
	for (uint32_t id = 1; id < 512; id++) {
		const struct brt_helper_proto *p = brt_helper_builtin(id);
		char text[160], want[96];
		struct bpfrt_vm *vm;
		int need;

		if (!p || (need = brt_vm_helper_need(p)) == BRT_HELPER_NEED_NOTHING)
			continue;
		snprintf(name, sizeof(name), "helper %u (%s), unverified", id, p->name);
		T_CASE(name);
		snprintf(text, sizeof(text), "mov %%r1, 4096\nmov %%r2, 4096\nmov %%r3, 4096\n"
			 "mov %%r4, 4096\nmov %%r5, 4096\ncall %u\nexit", id);
		if (vt_load(text, BPFRT_ENGINE_CHECKED, 0, &vm, err, sizeof(err))) {
			T_FAIL("load: %s", err);
			continue;
		}
		if (need == BRT_HELPER_NEED_REFUSE)
			snprintf(want, sizeof(want), "insn 5: call to unknown helper %u", id);
		else
			snprintf(want, sizeof(want), "insn 5: helper %u called with argument ", id);
		T_EQ_INT(-EFAULT, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_INT(0, strncmp(want, err, strlen(want)));
		bpfrt_vm_free(vm);
	}
	/* ... and with its memory in the run: bpf_snprintf("ab") into the stack */
	{
		struct bpfrt_vm *vm;

		T_CASE("bpf_snprintf unverified, fmt and buffer on the stack");
		if (vt_load("stw [%r10-8], 0x6261\nmov %r1, %r10\nadd %r1, -16\nmov %r2, 8\n"
			    "mov %r3, %r10\nadd %r3, -8\nmov %r4, 0\nmov %r5, 0\ncall 165\n"
			    "ldxb %r1, [%r10-15]\nlsh %r0, 8\nor %r0, %r1\nexit",
			    BPFRT_ENGINE_CHECKED, 0, &vm, err, sizeof(err))) {
			T_FAIL("load: %s", err);
		} else {
			T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
			T_EQ_U64((3u << 8) | 'b', r0); /* 3 bytes with the NUL; "ab" written */
			bpfrt_vm_free(vm);
		}
	}
	return t_done();
}
