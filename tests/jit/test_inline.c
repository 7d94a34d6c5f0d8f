/* test_inline.c - pass inlinehelper (src/jit/x86_64/inline.c): bpf_get_prandom_u32 of the
 * built-in helper is emitted inline (its fs-relative state load), not with the pass off,
 * not for a host's helper under the same id (the vm's registered one is the one called);
 * the JIT's numbers are the helper's, call for call, alternating with the interpreter on
 * one thread's state, from a thread's first number (the seeding at the program's entry)
 * on, in two threads, and with constant blinding; a thread's first number drawn inside a
 * bpf-to-bpf function and inside a callback entered from C is seeded too.  Pass
 * prandomreg: consecutive inlined calls load the state once and store it once a run; a
 * helper that reads the state, a division, an atomic, a branch that joins, a bpf-to-bpf
 * call and tail calls between draws end a run, and the JIT (with the pass, without it,
 * blinded) draws the interpreter's numbers and leaves its state, the helper seeing the
 * state the interpreter's does.
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

/* Helper 8 of the run tests: logs the state it finds (the draws before it must have
 * stored it) and draws a number itself (the draws after must step from there). */
#define LOG_MAX 64
static uint64_t obs_log[LOG_MAX];
static size_t obs_n;

static uint64_t observer(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	if (obs_n < LOG_MAX)
		obs_log[obs_n++] = *brt_prandom_state();
	return brt_helper_get_prandom_u32(r1, r2, r3, r4, r5, ctx) ^ 0x5a;
}

static bpfrt_helper_fn resolve(void *arg, uint32_t id)
{
	(void)arg;
	if (id == BPF_FUNC_get_smp_processor_id)
		return observer;
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

/* the inline state's reads (store: writes) through the thread pointer: into or from rax
 * (a call on its own) or r9 (pass prandomreg's runs) */
static size_t state_ops(const struct brt_jit_prog *p, bool store)
{
	/* mov r11, fs:[0] (the thread pointer); mov rax|r9, [r11 + disp] (mov [..], rax|r9) */
	uint8_t pat[11] = { 0x64, 0x4c, 0x8b, 0x1c, 0x25, 0, 0, 0, 0, 0x49, 0x8b };
	size_t size, found = 0;
	const uint8_t *code = brt_jit_code(p, &size, NULL);

	pat[10] = store ? 0x89 : 0x8b;
	for (size_t k = 0; k + sizeof(pat) < size; k++) /* and the ModRM byte after */
		if ((code[k + 9] == 0x49 || code[k + 9] == 0x4d) &&
		    (code[k + 11] & 0x38) == (code[k + 9] == 0x49 ? 0 : 1 << 3)) {
			pat[9] = code[k + 9];
			found += !memcmp(code + k, pat, sizeof(pat));
		}
	return found;
}

static size_t inline_reads(const struct brt_jit_prog *p)
{
	return state_ops(p, false);
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

	T_CASE("inline with the pass on, blinded too: one run, one load and one store");
	for (int blind = 0; blind < 2; blind++) {
		p = compile(fold, n, 0, blind ? BRT_JIT_BLIND : 0);
		T_ASSERT(p != NULL);
		if (p) {
			T_EQ_U64(1, inline_reads(p));
			T_EQ_U64(1, state_ops(p, true));
		}
		brt_jit_free(p);
	}
	T_CASE("inline with -prandomreg: each call loads and stores");
	p = compile(fold, n, BRT_JIT_PASS(prandomreg), 0);
	T_ASSERT(p != NULL);
	if (p) {
		T_EQ_U64(CALLS, inline_reads(p));
		T_EQ_U64(CALLS, state_ops(p, true));
	}
	brt_jit_free(p);
	T_CASE("inline with -leafcall: no run ctx either");
	p = compile(fold, n, BRT_JIT_PASS(leafcall), 0);
	T_ASSERT(p != NULL);
	if (p) {
		T_EQ_U64(1, inline_reads(p));
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

/* Pass prandomreg's runs and what ends them.  Draws (call 7) fold into r6 in order; the
 * runs the pass may form: {1, 4, 8} (a store and a load of the stack between), {12} (the
 * observer, helper 8, before it), {17} (a division after), {21} (an atomic after), {25}
 * (a jump lands on it), {30} (a jump lands after it), {33}, {39, 43} (the function's, an
 * lddw between): 8 runs of 11 draws. */
#define RUN_DRAWS 11
#define RUN_RUNS  8
static const struct bpf_insn runs_prog[] = {
	MOV64_IMM(6, 0),
	CALL(BPF_FUNC_get_prandom_u32), /* 1 */
	ALU64_REG(BPF_XOR, 6, 0),
	ALU64_IMM(BPF_MUL, 6, 3),
	CALL(BPF_FUNC_get_prandom_u32), /* 4 */
	STX(BPF_DW, 10, 6, -8),
	LDX(BPF_DW, 7, 10, -8),
	ALU64_REG(BPF_ADD, 6, 7),
	CALL(BPF_FUNC_get_prandom_u32), /* 8 */
	ALU64_REG(BPF_XOR, 6, 0),
	CALL(BPF_FUNC_get_smp_processor_id), /* 10: the observer */
	ALU64_REG(BPF_XOR, 6, 0),
	CALL(BPF_FUNC_get_prandom_u32), /* 12 */
	ALU64_IMM(BPF_MUL, 6, 5),
	ALU64_REG(BPF_XOR, 6, 0),
	MOV64_REG(1, 0),
	ALU64_IMM(BPF_DIV, 1, 7),
	CALL(BPF_FUNC_get_prandom_u32), /* 17 */
	ALU64_REG(BPF_ADD, 6, 1),
	ALU64_REG(BPF_XOR, 6, 0),
	ATOMIC(BPF_DW, BPF_ADD, 10, 6, -8),
	CALL(BPF_FUNC_get_prandom_u32), /* 21 */
	ALU64_REG(BPF_XOR, 6, 0),
	JMP_IMM(BPF_JSET, 0, 1, 1),
	ALU64_IMM(BPF_ADD, 6, 11),
	CALL(BPF_FUNC_get_prandom_u32), /* 25: a jump target */
	ALU64_REG(BPF_XOR, 6, 0),
	CALL_LOCAL(11), /* 27: to 39 */
	ALU64_REG(BPF_XOR, 6, 0),
	JMP_IMM(BPF_JSET, 0, 1, 1),
	CALL(BPF_FUNC_get_prandom_u32), /* 30: jumped over */
	ALU64_REG(BPF_XOR, 6, 0), /* 31: a jump target */
	ALU64_IMM(BPF_MUL, 6, 7),
	CALL(BPF_FUNC_get_prandom_u32), /* 33 */
	ALU64_REG(BPF_XOR, 6, 0),
	LDX(BPF_DW, 7, 10, -8),
	ALU64_REG(BPF_ADD, 6, 7),
	MOV64_REG(0, 6),
	EXIT(),
	CALL(BPF_FUNC_get_prandom_u32), /* 39 */
	LD_IMM64(2, 0x1122334455667788ull),
	ALU64_REG(BPF_XOR, 2, 0),
	CALL(BPF_FUNC_get_prandom_u32), /* 43 */
	ALU64_REG(BPF_XOR, 0, 2),
	EXIT(),
};
#define RUNS_N (sizeof(runs_prog) / sizeof(runs_prog[0]))

/* Tail calls (helper 12) into slot 1 (empty: falls through) and slot 0 (tail_callee),
 * between runs of two draws; r1 (the ctx) kept in r9 for them. */
static const struct bpf_insn tail_caller[] = {
	MOV64_REG(9, 1),
	CALL(BPF_FUNC_get_prandom_u32),
	MOV64_REG(6, 0),
	CALL(BPF_FUNC_get_prandom_u32),
	ALU64_IMM(BPF_MUL, 6, 3),
	ALU64_REG(BPF_XOR, 6, 0),
	MOV64_REG(1, 9),
	MOV64_IMM(2, 1),
	CALL(BPF_FUNC_tail_call),
	CALL(BPF_FUNC_get_prandom_u32),
	ALU64_IMM(BPF_MUL, 6, 3),
	ALU64_REG(BPF_XOR, 6, 0),
	CALL(BPF_FUNC_get_prandom_u32),
	ALU64_IMM(BPF_MUL, 6, 3),
	ALU64_REG(BPF_XOR, 6, 0),
	MOV64_REG(1, 9),
	MOV64_IMM(2, 0),
	CALL(BPF_FUNC_tail_call),
	MOV64_REG(0, 6), /* not reached: slot 0 is full */
	EXIT(),
};
static const struct bpf_insn tail_callee[] = {
	CALL(BPF_FUNC_get_prandom_u32),
	MOV64_REG(6, 0),
	CALL(BPF_FUNC_get_prandom_u32),
	ALU64_IMM(BPF_MUL, 6, 3),
	ALU64_REG(BPF_XOR, 6, 0),
	MOV64_REG(0, 6),
	EXIT(),
};

static struct bpfrt_vm *tail_slot[2];

static uint64_t tail_helper(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			    struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5;
	if (r2 >= 2 || !tail_slot[r2])
		return 0;
	return brt_vm_tail_call(tail_slot[r2], NULL, r1, ctx);
}

/* What one run leaves: r0, the state after, the observer's log */
struct run_out {
	int rc;
	uint64_t r0, state;
	size_t n;
	uint64_t log[LOG_MAX];
};

static void run_from(struct bpfrt_vm *vm, struct brt_jit_prog *p, uint64_t s,
		     struct run_out *o)
{
	char err[128];

	*brt_prandom_state() = s;
	obs_n = 0;
	o->r0 = 0;
	o->rc = vm ? bpfrt_vm_run(vm, NULL, 0, &o->r0, err, sizeof(err)) : 0;
	if (!vm)
		o->r0 = brt_jit_call(p, 0, 0, NULL);
	o->state = *brt_prandom_state();
	o->n = obs_n;
	memcpy(o->log, obs_log, sizeof(o->log));
}

static bool same_run(const struct run_out *a, const struct run_out *b)
{
	return a->rc == 0 && b->rc == 0 && a->r0 == b->r0 && a->state == b->state &&
	       a->n == b->n && !memcmp(a->log, b->log, a->n * sizeof(a->log[0]));
}

static struct bpfrt_vm *load_with(const struct bpf_insn *insns, size_t n,
				  enum bpfrt_engine eng)
{
	BPFRT_OPTS(bpfrt_helper_proto, h8, .id = BPF_FUNC_get_smp_processor_id,
		   .name = "observer", .fn = observer);
	BPFRT_OPTS(bpfrt_helper_proto, h12, .id = BPF_FUNC_tail_call, .name = "tail",
		   .fn = tail_helper);
	struct bpfrt_vm *vm = load(insns, n, eng);

	if (vm && (bpfrt_helper_register(vm, &h8) || bpfrt_helper_register(vm, &h12))) {
		bpfrt_vm_free(vm);
		vm = NULL;
	}
	return vm;
}

static void test_runs(void)
{
	struct brt_jit_prog *with = compile(runs_prog, RUNS_N, 0, 0);
	struct brt_jit_prog *without = compile(runs_prog, RUNS_N, BRT_JIT_PASS(prandomreg), 0);
	struct brt_jit_prog *blind = compile(runs_prog, RUNS_N, 0, BRT_JIT_BLIND);
	struct bpfrt_vm *jit = load_with(runs_prog, RUNS_N, BPFRT_ENGINE_JIT);
	struct bpfrt_vm *interp = load_with(runs_prog, RUNS_N, BPFRT_ENGINE_CHECKED);
	uint64_t bad = 0, s = 0x9e3779b97f4a7c15ull;
	int jsets = 0;

	T_CASE("prandomreg: runs end at helpers, divisions, atomics, joins, calls");
	T_ASSERT(with && without && blind && jit && interp);
	if (!with || !without || !blind || !jit || !interp)
		goto out;
	T_EQ_U64(RUN_RUNS, inline_reads(with));
	T_EQ_U64(RUN_RUNS, state_ops(with, true));
	T_EQ_U64(RUN_RUNS, inline_reads(blind));
	T_EQ_U64(RUN_DRAWS, inline_reads(without));
	T_EQ_U64(RUN_DRAWS, state_ops(without, true));
	T_CASE("prandomreg: JIT draws, state and helper's view as the interpreter's");
	for (int i = 0; i < 200; i++, s = s * 0x2545f4914f6cdd1dull + 1) {
		struct run_out ref, out;

		if (!s)
			continue;
		run_from(interp, NULL, s, &ref);
		jsets += (int)ref.n; /* the observer ran */
		run_from(jit, NULL, s, &out);
		bad += !same_run(&ref, &out);
		run_from(NULL, with, s, &out);
		bad += !same_run(&ref, &out);
		run_from(NULL, without, s, &out);
		bad += !same_run(&ref, &out);
		run_from(NULL, blind, s, &out);
		bad += !same_run(&ref, &out);
	}
	T_EQ_U64(0, bad);
	T_EQ_INT(200, jsets);
out:
	brt_jit_free(with);
	brt_jit_free(without);
	brt_jit_free(blind);
	bpfrt_vm_free(jit);
	bpfrt_vm_free(interp);
}

/* Tail calls between runs, JIT into JIT (a jump) and interpreter into interpreter */
static void test_tail_runs(void)
{
	uint64_t bad = 0, s = 0x243f6a8885a308d3ull;
	struct run_out ref = { 0 }, out = { 0 };
	struct bpfrt_vm *callee[2], *caller[2];
	const enum bpfrt_engine eng[2] = { BPFRT_ENGINE_CHECKED, BPFRT_ENGINE_JIT };

	T_CASE("prandomreg: tail calls between runs");
	for (int e = 0; e < 2; e++) {
		caller[e] = load_with(tail_caller, sizeof(tail_caller) / sizeof(tail_caller[0]),
				      eng[e]);
		callee[e] = load_with(tail_callee, sizeof(tail_callee) / sizeof(tail_callee[0]),
				      eng[e]);
		T_ASSERT(caller[e] && callee[e]);
	}
	for (int i = 0; i < 200 && caller[0] && caller[1] && callee[0] && callee[1]; i++) {
		s = s * 0x2545f4914f6cdd1dull + 1;
		for (int e = 0; e < 2; e++) {
			tail_slot[0] = callee[e];
			run_from(caller[e], NULL, s, e ? &out : &ref);
		}
		bad += !same_run(&ref, &out);
	}
	tail_slot[0] = NULL;
	T_EQ_U64(0, bad);
	/* the callee's r0: two draws after the caller's four (not the caller's fold) */
	*brt_prandom_state() = s;
	for (int k = 0; k < 4; k++)
		brt_helper_get_prandom_u32(0, 0, 0, 0, 0, NULL);
	uint64_t a = brt_helper_get_prandom_u32(0, 0, 0, 0, 0, NULL);
	uint64_t b = brt_helper_get_prandom_u32(0, 0, 0, 0, 0, NULL);
	T_EQ_U64(a * 3 ^ b, out.r0);
	T_EQ_U64(*brt_prandom_state(), out.state);
	for (int e = 0; e < 2; e++) {
		bpfrt_vm_free(caller[e]);
		bpfrt_vm_free(callee[e]);
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
	test_runs();
	test_tail_runs();
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
