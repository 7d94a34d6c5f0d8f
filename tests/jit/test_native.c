/* test_native.c - bpfrt_vm_native(): the JIT code of a program that needs no run context
 * called as a plain function gives what bpfrt_vm_run() gives, on every packet; so does a
 * program whose calls are all of helpers that read no run context (bpf_get_prandom_u32),
 * for the helpers it was asked for; every vm that needs more (another engine, a call of
 * another helper, a run budget) gets NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "harness.h"

/* Packet-reading code with branches: r0 = len < 8 ? 7 : (u32 at 0) + (u8 at 5) * len. */
static const char reader[] = "mov %r0, 7\njlt %r2, 8, out\nldxw %r0, [%r1+0]\n"
			     "ldxb %r3, [%r1+5]\nmul %r3, %r2\nadd %r0, %r3\nout:\nexit\n";

static struct bpfrt_vm *load(const char *text, enum bpfrt_engine engine, uint64_t budget)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine, .run_budget = budget);
	struct bpfrt_vm *vm = NULL;
	struct bpf_insn *insns;
	char err[256];
	size_t n;

	if (bpfrt_asm(text, "test", &insns, &n, err, sizeof(err))) {
		T_FAIL("%s", err);
		return NULL;
	}
	if (bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err)))
		T_FAIL("%s", err);
	free(insns);
	return vm;
}

/* r0 = len + (bpf_get_prandom_u32() >> 32): len, whatever the random value */
static const char leaf_caller[] = "mov %r6, %r2\ncall 7\nrsh %r0, 32\nadd %r0, %r6\nexit\n";

static uint64_t helper_42(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			  struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 42ull << 32;
}

int main(void)
{
	uint8_t pkt[64];
	struct bpfrt_vm *vm;
	bpfrt_vm_native_fn fn;

	unsetenv("BPFRT_JIT_PASSES"); /* every pass: leafcall's calls read no run ctx */
	T_CASE("same results as bpfrt_vm_run");
	vm = load(reader, BPFRT_ENGINE_JIT, 0);
	fn = bpfrt_vm_native(vm);
	T_ASSERT(fn != NULL);
	for (size_t len = 0; fn && len <= sizeof(pkt); len += 3) {
		uint64_t r0 = 0;
		uint32_t w;

		for (size_t i = 0; i < sizeof(pkt); i++)
			pkt[i] = (uint8_t)(i * 37 + len);
		T_EQ_INT(0, bpfrt_vm_run(vm, pkt, len, &r0, NULL, 0));
		T_EQ_U64(r0, fn(pkt, len));
		memcpy(&w, pkt, sizeof(w));
		T_EQ_U64(len < 8 ? 7 : (uint64_t)w + (uint64_t)pkt[5] * len, r0);
	}
	bpfrt_vm_free(vm);

	T_CASE("NULL memory: r1 = 0");
	vm = load("mov %r0, %r1\nadd %r0, %r2\nexit\n", BPFRT_ENGINE_JIT, 0);
	fn = bpfrt_vm_native(vm);
	T_ASSERT(fn != NULL);
	if (fn) {
		T_EQ_U64(0, fn(NULL, 0));
		T_EQ_U64(9, fn(NULL, 9));
	}
	bpfrt_vm_free(vm);

	T_CASE("a program whose calls are all leaf helpers");
	vm = load(leaf_caller, BPFRT_ENGINE_JIT, 0);
	fn = bpfrt_vm_native(vm); /* before any run: compiled for it */
	T_ASSERT(fn != NULL);
	if (fn) {
		BPFRT_OPTS(bpfrt_helper_proto, p, .id = 7, .name = "helper_42", .fn = helper_42);
		uint64_t r0 = 0;

		T_EQ_U64(5, fn(pkt, 5));
		T_EQ_INT(0, bpfrt_vm_run(vm, pkt, 6, &r0, NULL, 0));
		T_EQ_U64(6, r0);
		T_ASSERT(bpfrt_vm_native(vm) == fn);
		/* a host's own helper under the id is called the full way (it may read the
		 * ctx): no plain function any more; the one returned before still runs the
		 * code it was, with the helper it was compiled for */
		T_EQ_INT(0, bpfrt_helper_register(vm, &p));
		T_ASSERT(bpfrt_vm_native(vm) == NULL);
		T_EQ_INT(0, bpfrt_vm_run(vm, pkt, 6, &r0, NULL, 0));
		T_EQ_U64(42 + 6, r0);
		T_EQ_U64(7, fn(pkt, 7));
	}
	bpfrt_vm_free(vm);

	T_CASE("NULL where a run needs more");
	T_ASSERT(bpfrt_vm_native(NULL) == NULL);
	vm = load(reader, BPFRT_ENGINE_INTERP, 0);
	T_ASSERT(bpfrt_vm_native(vm) == NULL);
	bpfrt_vm_free(vm);
	vm = load(reader, BPFRT_ENGINE_CHECKED, 0);
	T_ASSERT(bpfrt_vm_native(vm) == NULL);
	bpfrt_vm_free(vm);
	vm = load(reader, BPFRT_ENGINE_JIT, 1000); /* a run budget needs the context */
	T_ASSERT(bpfrt_vm_native(vm) == NULL);
	bpfrt_vm_free(vm);
	vm = load("call 105\nexit\n", BPFRT_ENGINE_JIT, 0); /* a call of a non-leaf helper */
	T_ASSERT(bpfrt_vm_native(vm) == NULL);
	bpfrt_vm_free(vm);
	vm = load(leaf_caller, BPFRT_ENGINE_INTERP, 0);
	T_ASSERT(bpfrt_vm_native(vm) == NULL);
	bpfrt_vm_free(vm);
	vm = load(leaf_caller, BPFRT_ENGINE_JIT, 1000);
	T_ASSERT(bpfrt_vm_native(vm) == NULL);
	bpfrt_vm_free(vm);
	return t_done();
}
