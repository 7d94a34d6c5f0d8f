/* test_cache.c - the JIT as a vm engine (src/jit/cache.c): helpers bound at the first run
 * with each table, re-bound when the vm's table changes, per-run tables, refusals at load
 * (programs that call helpers are only checked there), concurrent runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "harness.h"
#include "jit_test.h"
#include "vm/vm.h"

static uint64_t h_add(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		      struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5, (void)ctx;
	return r1 + r2;
}

static uint64_t h_mul(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
		      struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5, (void)ctx;
	return r1 * r2;
}

static const struct bpf_insn call7[] = { MOV64_IMM(1, 6), MOV64_IMM(2, 7), CALL(1000), EXIT() };

static struct bpfrt_vm *load(const struct bpf_insn *insns, size_t n, char *err, int *rc)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_JIT);
	struct bpfrt_vm *vm = NULL;

	*rc = bpfrt_vm_load(insns, n, &o, &vm, err, 256);
	return vm;
}

/* Make helper id call fn in vm only (bpfrt_helper_register() with a vm). */
static int vm_helper(struct bpfrt_vm *vm, uint32_t id, const char *name, bpfrt_helper_fn fn)
{
	BPFRT_OPTS(bpfrt_helper_proto, p, .id = id, .name = name, .fn = fn);

	return bpfrt_helper_register(vm, &p);
}

static void test_rebinding(void)
{
	char err[256];
	uint64_t r0 = 0;
	int rc;
	struct bpfrt_vm *vm = load(call7, 4, err, &rc);

	T_CASE("helper registered after load");
	T_EQ_INT(0, rc);
	if (!vm)
		return;
	T_EQ_INT(-EFAULT, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_STR("insn 2: call to unknown helper 1000", err);
	T_EQ_INT(0, vm_helper(vm, 1000, "add", h_add));
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(13, r0);
	T_CASE("helper replaced");
	T_EQ_INT(0, vm_helper(vm, 1000, "mul", h_mul));
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(42, r0);
	T_CASE("helper put back");
	T_EQ_INT(0, vm_helper(vm, 1000, "add", h_add));
	T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
	T_EQ_U64(13, r0);

	T_CASE("per-run helper tables");
	for (int i = 0; i < 100; i++) {
		brt_helper_fn table[1001] = { 0 };
		struct brt_run_opts o = { .helpers = table, .nr_helpers = 1001 };

		table[1000] = i % 2 ? h_mul : h_add;
		T_EQ_INT(0, brt_vm_run_opts(vm, &o, &r0, err, sizeof(err)));
		T_EQ_U64(i % 2 ? 42 : 13, r0);
	}
	bpfrt_vm_free(vm);
}

static void test_refusals(void)
{
	static const struct bpf_insn rec[] = { CALL_LOCAL(1), EXIT(), CALL_LOCAL(-1), EXIT() };
	char err[256];
	int rc;
	struct bpfrt_vm *vm = load(rec, 4, err, &rc);

	T_CASE("recursion refused at load");
	T_EQ_INT(-EINVAL, rc);
	T_ASSERT(vm == NULL);
	T_CONTAINS("insn 2: recursive call", err);
}

/* A program that calls helpers is compiled at its first run, with the table it runs with;
 * its load only checks it (BRT_JIT_CHECK), and must still refuse what the compile would. */
static void test_refusals_with_helpers(void)
{
	static const struct bpf_insn rec[] = { CALL(1000), CALL_LOCAL(1), EXIT(), CALL(1000),
					       CALL_LOCAL(-2), EXIT() };
	static const struct bpf_insn out[] = { CALL(1000), CALL_LOCAL(2), JA(2), EXIT(),
					       MOV64_IMM(0, 1), EXIT() };
	static const struct bpf_insn fall[] = { CALL(1000), CALL_LOCAL(1), EXIT(), CALL(1000) };
	/* nine frames deep: main and eight functions, each calling the next */
	struct bpf_insn deep[2 + 8 * 3];
	char err[256];
	size_t n = 0;
	int rc;
	struct bpfrt_vm *vm = load(rec, 6, err, &rc);

	T_CASE("recursion refused at load, helper calls");
	T_EQ_INT(-EINVAL, rc);
	T_ASSERT(vm == NULL);
	T_CONTAINS("recursive call", err);
	T_CASE("jump out of its function refused at load, helper calls");
	vm = load(out, 6, err, &rc);
	T_EQ_INT(-EINVAL, rc);
	T_ASSERT(vm == NULL);
	T_CONTAINS("insn 2: jump out of its function", err);
	T_CASE("function falling off its end refused at load, helper calls");
	vm = load(fall, 4, err, &rc);
	T_EQ_INT(-EINVAL, rc);
	T_ASSERT(vm == NULL);
	T_CONTAINS("last insn is not an exit or jmp", err);
	T_CASE("nine frames refused at load, helper calls");
	deep[n++] = (struct bpf_insn)CALL_LOCAL(1);
	deep[n++] = (struct bpf_insn)EXIT();
	for (int k = 0; k < 8; k++) {
		deep[n++] = (struct bpf_insn)CALL(1000);
		deep[n++] = k < 7 ? (struct bpf_insn)CALL_LOCAL(1) : (struct bpf_insn)MOV64_IMM(0, 0);
		deep[n++] = (struct bpf_insn)EXIT();
	}
	vm = load(deep, n, err, &rc);
	T_EQ_INT(-EINVAL, rc);
	T_ASSERT(vm == NULL);
	T_CONTAINS("nested frames", err);
	T_CASE("eight frames load and run, helper calls");
	deep[n - 5] = (struct bpf_insn)MOV64_IMM(0, 0); /* the eighth function calls none */
	vm = load(deep, n, err, &rc);
	T_EQ_INT(0, rc);
	if (vm) {
		uint64_t r0 = 1;

		vm_helper(vm, 1000, "add", h_add);
		T_EQ_INT(0, bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)));
		T_EQ_U64(0, r0);
		bpfrt_vm_free(vm);
	}
}

static void *runner(void *arg)
{
	struct bpfrt_vm *vm = arg;
	uint64_t r0, bad = 0;

	for (int i = 0; i < 20000; i++)
		if (bpfrt_vm_run(vm, NULL, 0, &r0, NULL, 0) || r0 != 13)
			bad++;
	return (void *)(uintptr_t)bad;
}

static void test_threads(void)
{
	char err[256];
	int rc;
	struct bpfrt_vm *vm = load(call7, 4, err, &rc);
	pthread_t t[4];
	uintptr_t bad = 0;

	T_CASE("concurrent runs, first compile racing");
	if (!vm)
		return;
	vm_helper(vm, 1000, "add", h_add);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, runner, vm);
	for (int i = 0; i < 4; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		bad += (uintptr_t)ret;
	}
	T_EQ_U64(0, bad);
	bpfrt_vm_free(vm);
}

int main(void)
{
	test_rebinding();
	test_refusals();
	test_refusals_with_helpers();
	test_threads();
	return t_done();
}
