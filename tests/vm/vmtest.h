/* vmtest.h - shared by the vm tests: assemble a program and run it on one engine. */
#ifndef BPFRT_TESTS_VM_VMTEST_H
#define BPFRT_TESTS_VM_VMTEST_H

#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "harness.h"

static const enum bpfrt_engine vt_engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED };
static const char *const vt_engine_names[] = { "interp", "checked" };

/* Assemble text and load it; 0 or -errno with the message in err. */
static inline int vt_load(const char *text, enum bpfrt_engine engine, uint64_t budget,
		   struct bpfrt_vm **vm, char *err, size_t errlen)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine, .insn_budget = budget);
	struct bpf_insn *insns;
	size_t n;
	int ret;

	ret = bpfrt_asm(text, "test", &insns, &n, err, errlen);
	if (ret)
		return ret;
	ret = bpfrt_vm_load(insns, n, &o, vm, err, errlen);
	free(insns);
	return ret;
}

/* Assemble, load and run once on mem; 0 or -errno with the message in err. */
static inline int vt_run(const char *text, enum bpfrt_engine engine, void *mem, size_t len,
		  uint64_t *r0, char *err, size_t errlen)
{
	struct bpfrt_vm *vm;
	int ret = vt_load(text, engine, 0, &vm, err, errlen);

	if (ret)
		return ret;
	ret = bpfrt_vm_run(vm, mem, len, r0, err, errlen);
	bpfrt_vm_free(vm);
	return ret;
}

#endif
