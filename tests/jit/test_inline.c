/* test_inline.c - pass inlinehelper (src/jit/x86_64/inline.c): bpf_get_prandom_u32 of the
 * built-in helper is emitted inline (its fs-relative state load), not with the pass off,
 * not for a host's helper under the same id (the vm's registered one is the one called);
 * the JIT's numbers are the helper's, call for call, alternating with the interpreter on
 * one thread's state, from a thread's first number (the seeding at the program's entry)
 * on, in two threads, and with constant blinding; a thread's first number drawn inside a
 * bpf-to-bpf function and inside a callback entered from C is seeded too.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bpfrt.h"

#include "harness.h"
#include "jit/jit.h"
#include "jit_test.h"
#include "vm/vm.h"

#define CALLS  16
#define ROUNDS 2000

static uint64_t host_prandom(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 42;
}

static bool host;

static bpfrt_helper_fn resolve(void *arg, uint32_t id)
{
	(void)arg;
	if (id != BPF_FUNC_get_prandom_u32)
		return NULL;
	return host ? host_prandom : brt_helper_get_prandom_u32;
}

/* r6 = 0; CALLS times r6 = r6 * 3 ^ bpf_get_prandom_u32(); r0 = r6 (order matters) */
static struct bpf_insn fold[3 * CALLS + 3];
static const struct bpf_insn one[] = { CALL(BPF_FUNC_get_prandom_u32), EXIT() };

static void build_fold(void)
{
	size_t k = 0;

	fold[k++] = (struct bpf_insn)MOV64_IMM(6, 0);
	for (int i = 0; i < CALLS; i++) {
		fold[k++] = (struct bpf_insn)CALL(BPF_FUNC_get_prandom_u32);
		fold[k++] = (struct bpf_insn)ALU64_IMM(BPF_MUL, 6, 3);
		fold[k++] = (struct bpf_insn)ALU64_REG(BPF_XOR, 6, 0);
	}
	fold[k++] = (struct bpf_insn)MOV64_REG(0, 6);
	fold[k++] = (struct bpf_insn)EXIT();
}

/* the inline state reads: loads into rax through the thread pointer */
static size_t inline_reads(const struct brt_jit_prog *p)
{
	/* mov r11, fs:[0] (the thread pointer); mov rax, [r11 + disp] (the state) */
	const uint8_t pat[11] = { 0x64, 0x4c, 0x8b, 0x1c, 0x25, 0, 0, 0, 0, 0x49, 0x8b };
	size_t size, found = 0;
	const uint8_t *code = brt_jit_code(p, &size, NULL);

	for (size_t k = 0; k + sizeof(pat) <= size; k++)
		found += !memcmp(code + k, pat, sizeof(pat));
	return found;
}

static struct brt_jit_prog *compile(const struct bpf_insn *insns, size_t n, uint32_t off,
				    uint32_t flags)
{
	struct brt_jit_env e = { .helper = resolve, .passes_off = off, .flags = flags };
	struct brt_jit_prog *p = NULL;
	char err[128];

	if (brt_jit_compile(insns, n, &e, &p, err, sizeof(err)))
		return NULL;
	return p;
}

/* (no T_ checks here: the threads call these; the harness's counters are not atomic) */
static uint64_t run_vm(struct bpfrt_vm *vm, uint64_t *bad)
{
	uint64_t r0 = 0;
	char err[128];

	*bad += bpfrt_vm_run(vm, NULL, 0, &r0, err, sizeof(err)) != 0;
	return r0;
}

static struct bpfrt_vm *load(const struct bpf_insn *insns, size_t n, enum bpfrt_engine eng)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = eng);
	struct bpfrt_vm *vm = NULL;
	char err[128];

	return bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err)) ? NULL : vm;
}

static void test_emitted(void)
{
	size_t n = sizeof(fold) / sizeof(fold[0]);
	struct brt_jit_prog *p;

	T_CASE("inline with the pass on, blinded too");
	for (int blind = 0; blind < 2; blind++) {
		p = compile(fold, n, 0, blind ? BRT_JIT_BLIND : 0);
		T_ASSERT(p != NULL);
		if (p)
			T_EQ_U64(CALLS, inline_reads(p));
		brt_jit_free(p);
	}
	T_CASE("inline with -leafcall: no run ctx either");
	p = compile(fold, n, BRT_JIT_PASS(leafcall), 0);
	T_ASSERT(p != NULL);
	if (p) {
		T_EQ_U64(CALLS, inline_reads(p));
		T_EQ_INT(0, brt_jit_needs_ctx(p));
	}
	brt_jit_free(p);
	T_CASE("a call with -inlinehelper");
	p = compile(fold, n, BRT_JIT_PASS(inlinehelper), 0);
	T_ASSERT(p != NULL);
	if (p)
		T_EQ_U64(0, inline_reads(p));
	brt_jit_free(p);
	T_CASE("a call of a host's helper under the id");
	host = true;
	p = compile(one, 2, 0, 0);
	host = false;
	T_ASSERT(p != NULL);
	if (p) {
		T_EQ_U64(0, inline_reads(p));
		T_EQ_U64(42, brt_jit_call(p, 0, 0, NULL));
	}
	brt_jit_free(p);
}

/* bpfrt_helper_register() over the built-in one: the vm's JIT calls the registered one */
static void test_replaced(void)
{
	struct bpfrt_vm *vm = load(one, 2, BPFRT_ENGINE_JIT);
	BPFRT_OPTS(bpfrt_helper_proto, h, .id = BPF_FUNC_get_prandom_u32, .name = "mine",
		   .fn = host_prandom);

	uint64_t bad = 0;

	T_CASE("the vm's registered helper wins");
	T_ASSERT(vm != NULL);
	if (!vm)
		return;
	T_EQ_INT(0, bpfrt_helper_register(vm, &h));
	T_EQ_U64(42, run_vm(vm, &bad));
	T_EQ_U64(0, bad);
	bpfrt_vm_free(vm);
}

/* From this thread's state as it is (0 in a new thread: the JIT's first call seeds it):
 * the fold by the JIT equals the fold by the interpreter from the same state, and single
 * draws alternate between engines and the helper itself as one sequence. */
struct agree_res {
	uint64_t seeded; /* the state after the thread's first number */
	uint64_t bad;	 /* draws that differed, runs that failed */
	bool fresh;	 /* a new thread: its state must start at 0 */
};

static void *agree(void *arg)
{
	struct agree_res *res = arg;
	size_t n = sizeof(fold) / sizeof(fold[0]);
	struct bpfrt_vm *jit = load(fold, n, BPFRT_ENGINE_JIT);
	struct bpfrt_vm *interp = load(fold, n, BPFRT_ENGINE_CHECKED);
	struct brt_jit_prog *p1 = compile(one, 2, 0, 0), *pb = compile(one, 2, 0, BRT_JIT_BLIND);
	uint64_t *state = brt_prandom_state(), bad = 0;

	if (!jit || !interp || !p1 || !pb) {
		res->bad = 1;
		return NULL;
	}
	bad += res->fresh && *state != 0;
	brt_jit_call(p1, 0, 0, NULL); /* a new thread: the slow path's seeding */
	res->seeded = *state;
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t s = *state, a, b, after;

		a = run_vm(jit, &bad);
		after = *state;
		*state = s;
		b = run_vm(interp, &bad);
		bad += a != b || after != *state;
		/* one sequence: JIT, helper, blinded JIT, helper, ... against the helper alone */
		s = *state;
		uint64_t seq[8], ref[8];
		for (int k = 0; k < 8; k++)
			seq[k] = k % 2 ? brt_helper_get_prandom_u32(0, 0, 0, 0, 0, NULL) :
					 brt_jit_call(k % 4 ? pb : p1, 0, 0, NULL);
		after = *state;
		*state = s;
		for (int k = 0; k < 8; k++)
			ref[k] = brt_helper_get_prandom_u32(0, 0, 0, 0, 0, NULL);
		bad += memcmp(seq, ref, sizeof(seq)) != 0 || after != *state;
	}
	res->bad = bad;
	brt_jit_free(p1);
	brt_jit_free(pb);
	bpfrt_vm_free(jit);
	bpfrt_vm_free(interp);
	return NULL;
}

/* A program whose only draw is in a function: a bpf-to-bpf one (main calls it), or a
 * callback (main only names it; the test enters it from C, as bpf_timer's thread does). */
static const struct bpf_insn local_fn[] = {
	CALL_LOCAL(1), EXIT(), CALL(BPF_FUNC_get_prandom_u32), EXIT(),
};
static const struct bpf_insn cb_fn[] = {
	I(BPF_LD | BPF_IMM | BPF_DW, 2, BPF_PSEUDO_FUNC, 0, 3), I(0, 0, 0, 0, 0),
	MOV64_IMM(0, 0), EXIT(), CALL(BPF_FUNC_get_prandom_u32), EXIT(),
};

/* What the helper returns after stepping its state to s */
static uint64_t drawn_at(uint64_t s)
{
	return (uint32_t)((s * 0x2545f4914f6cdd1dull) >> 32);
}

struct first_res {
	bool callback;
	uint64_t before, after, r0; /* the new thread's state before and after, the number */
	int rc;
};

static void *first_draw(void *arg)
{
	struct first_res *res = arg;
	const struct bpf_insn *insns = res->callback ? cb_fn : local_fn;
	size_t n = res->callback ? sizeof(cb_fn) / sizeof(cb_fn[0]) : 4;
	struct brt_jit_prog *p = compile(insns, n, 0, 0);
	uint64_t args[5] = { 0 }, ctx[32] = { 0 };

	res->before = *brt_prandom_state();
	res->rc = -1;
	if (!p)
		return NULL;
	if (res->callback)
		res->rc = brt_jit_call_func(p, 4, args, (struct bpfrt_run_ctx *)(void *)ctx,
					    &res->r0);
	else
		res->r0 = brt_jit_call(p, 0, 0, NULL), res->rc = 0;
	res->after = *brt_prandom_state();
	brt_jit_free(p);
	return NULL;
}

static void test_first_in_function(void)
{
	for (int cb = 0; cb < 2; cb++) {
		struct first_res res = { .callback = cb };
		pthread_t t;
		struct brt_jit_prog *p = compile(cb ? cb_fn : local_fn, cb ? 6 : 4, 0, 0);

		T_CASE(cb ? "a new thread's first number in a callback entered from C"
			  : "a new thread's first number in a bpf-to-bpf function");
		T_ASSERT(p != NULL);
		if (p)
			T_EQ_U64(1, inline_reads(p));
		brt_jit_free(p);
		T_EQ_INT(0, pthread_create(&t, NULL, first_draw, &res));
		pthread_join(t, NULL);
		T_EQ_INT(0, res.rc);
		T_EQ_U64(0, res.before);
		T_ASSERT(res.after != 0);
		T_EQ_U64(drawn_at(res.after), res.r0);
	}
}

int main(void)
{
	pthread_t t[2];
	struct agree_res res[2] = { { 0, 0, true }, { 0, 0, true } };

	build_fold();
	test_emitted();
	test_replaced();
	test_first_in_function();
	T_CASE("JIT and interpreter draw one sequence, 2 threads");
	for (int i = 0; i < 2; i++)
		T_EQ_INT(0, pthread_create(&t[i], NULL, agree, &res[i]));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	T_EQ_U64(0, res[0].bad);
	T_EQ_U64(0, res[1].bad);
	/* each seeded its own, by the helper the slow path called */
	T_ASSERT(res[0].seeded != 0 && res[1].seeded != 0 && res[0].seeded != res[1].seeded);
	T_CASE("and on the main thread");
	res[0] = (struct agree_res){ 0, 0, false };
	agree(&res[0]);
	T_EQ_U64(0, res[0].bad);
	return t_done();
}
