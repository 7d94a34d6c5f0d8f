/* test_opt_stackreg.c - pass stackreg (src/jit/x86_64/opt_stackreg.c): r10 slots that never
 * escape live in registers.  Each case is a program, how many of its stack accesses (loads
 * and stores at rsp/rbp + disp) the code keeps with the pass on, and r0 for two inputs;
 * the near misses (the address escaping through a copy of r10, r10 stored, an atomic or a
 * sign-extending load on the slot, another width or offset overlapping it, a load a path
 * reaches before any store, a helper call, a bpf-to-bpf call (one in a loop whose callee
 * has a slot at the same offset: only the one-function test keeps it), a tail call, a slot past
 * the free registers, a slot outside loops when only callee-saved registers are free)
 * keep their accesses.  Every program returns the same r0 with the
 * pass on, off and blinded (blinding turns the pass off).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "isa/isa.h"
#include "jit/jit.h"
#include "jit_test.h"

#define MAXN 56

struct sr_case {
	const char *name;
	struct bpf_insn insns[MAXN];
	size_t n;
	uint64_t in[2];  /* r1 of the two runs */
	uint64_t r0[2];
	int kept;        /* stack accesses left with the pass on (-1: as many as without) */
	int pushes;      /* callee-saved registers the pass takes (pushed) */
	bool norun;      /* compiled only (a tail call needs its run ctx) */
};

static uint64_t helper_sum(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			   struct bpfrt_run_ctx *ctx)
{
	(void)ctx;
	return r1 + 2 * r2 + 3 * r3 + 4 * r4 + 5 * r5;
}

static bpfrt_helper_fn resolve(void *arg, uint32_t id)
{
	(void)arg;
	/* the tail call's case is only compiled: any function will do */
	return id == 1 || id == BPF_FUNC_tail_call ? helper_sum : NULL;
}

/* r0 += the 8-byte slot at r10 + off */
#define ADD_SLOT(off) LDX(BPF_DW, 2, 10, off), ALU64_REG(BPF_ADD, 0, 2)
#define N(...) { __VA_ARGS__ }, sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn)

static const struct sr_case cases[] = {
	{ "8- and 4-byte slots, register and immediate stores: in registers",
	  N(STX(BPF_DW, 10, 1, -8), ST(BPF_W, 10, -16, -5), ST(BPF_DW, 10, -24, -7),
	    LDX(BPF_DW, 0, 10, -8), LDX(BPF_W, 2, 10, -16), ALU64_REG(BPF_ADD, 0, 2),
	    LDX(BPF_DW, 2, 10, -24), ALU64_REG(BPF_ADD, 0, 2), EXIT()),
	  { 1, 0x100000000ull }, { 1 + 0xfffffffbull - 7, 0x100000000ull + 0xfffffffbull - 7 },
	  0, 0 },
	{ "a 4-byte slot holds the low half, zero-extended",
	  N(STX(BPF_W, 10, 1, -4), MOV64_IMM(1, -1), LDX(BPF_W, 0, 10, -4), EXIT()),
	  { 0xffffffff12345678ull, 0x80000000ull }, { 0x12345678, 0x80000000ull }, 0, 0 },
	{ "stored on both sides of a branch, loaded after the join",
	  N(JMP_IMM(BPF_JEQ, 1, 3, 2), ST(BPF_DW, 10, -8, 11), JA(1), STX(BPF_DW, 10, 1, -8),
	    LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 3, 4 }, { 3, 11 }, 0, 0 },
	{ "a loop storing before it loads",
	  N(MOV64_IMM(2, 3), MOV64_IMM(0, 0), STX(BPF_DW, 10, 2, -8), LDX(BPF_DW, 3, 10, -8),
	    ALU64_REG(BPF_ADD, 0, 3), ALU64_IMM(BPF_ADD, 2, -1), JMP_IMM(BPF_JNE, 2, 0, -5),
	    EXIT()),
	  { 0, 1 }, { 6, 6 }, 0, 0 },
	{ "a path loads before any store: kept",
	  N(JMP_IMM(BPF_JEQ, 1, 3, 1), STX(BPF_DW, 10, 1, -8), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 4, 5 }, { 4, 5 }, -1, 0 },
	{ "a loop loading before its store: kept",
	  N(MOV64_IMM(2, 3), STX(BPF_DW, 10, 2, -16), LDX(BPF_DW, 0, 10, -8),
	    STX(BPF_DW, 10, 2, -8), ALU64_IMM(BPF_ADD, 2, -1), JMP_IMM(BPF_JNE, 2, 0, -4),
	    LDX(BPF_DW, 0, 10, -16), EXIT()),
	  { 0, 1 }, { 3, 3 }, 2, 0 },
	{ "another width overlapping: both kept, the other slot in a register",
	  N(STX(BPF_DW, 10, 1, -8), LDX(BPF_W, 0, 10, -4), STX(BPF_DW, 10, 1, -16),
	    LDX(BPF_DW, 2, 10, -16), ALU64_REG(BPF_ADD, 0, 2), EXIT()),
	  { 0x500000001ull, 2 }, { 5 + 0x500000001ull, 2 }, 2, 0 },
	{ "another offset overlapping: kept",
	  N(STX(BPF_DW, 10, 1, -8), STX(BPF_DW, 10, 1, -12), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 0x1122334455667788ull, 9 }, { 0x1122334411223344ull, 0 }, -1, 0 },
	{ "a 1-byte slot: kept",
	  N(STX(BPF_B, 10, 1, -1), LDX(BPF_B, 0, 10, -1), EXIT()),
	  { 0x1ff, 3 }, { 0xff, 3 }, -1, 0 },
	{ "a copy of r10: nothing kept in registers",
	  N(STX(BPF_DW, 10, 1, -8), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
	    ST(BPF_DW, 2, 0, 7), STX(BPF_DW, 10, 1, -16), LDX(BPF_DW, 0, 10, -8),
	    LDX(BPF_DW, 2, 10, -16), ALU64_REG(BPF_ADD, 0, 2), EXIT()),
	  { 1, 2 }, { 8, 9 }, -1, 0 },
	{ "r10 stored: nothing kept in registers",
	  N(STX(BPF_DW, 10, 10, -16), STX(BPF_DW, 10, 1, -8), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 1, 2 }, { 1, 2 }, -1, 0 },
	{ "an atomic on the slot: nothing kept in registers",
	  N(STX(BPF_DW, 10, 1, -8), MOV64_IMM(2, 5), ATOMIC(BPF_DW, BPF_ADD, 10, 2, -8),
	    LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 1, 2 }, { 6, 7 }, -1, 0 },
	{ "a sign-extending load of the slot: nothing kept in registers",
	  N(STX(BPF_W, 10, 1, -4), LDXS(BPF_W, 0, 10, -4), EXIT()),
	  { 0xfffffffeull, 2 }, { (uint64_t)-2, 2 }, -1, 0 },
	{ "a helper call: kept",
	  N(STX(BPF_DW, 10, 1, -8), MOV64_IMM(2, 1), CALL(1), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 1, 2 }, { 1, 2 }, -1, 0 },
	{ "a bpf-to-bpf call: kept",
	  N(STX(BPF_DW, 10, 1, -8), CALL_LOCAL(2), LDX(BPF_DW, 0, 10, -8), EXIT(),
	    MOV64_IMM(0, 9), EXIT()),
	  { 1, 2 }, { 1, 2 }, -1, 0 },
	/* the leaf test alone keeps this one: the slot a loop loads would take a pushed
	 * register, which the callee's own slot at the same offset (its frame, not the
	 * caller's) would then write too */
	{ "a bpf-to-bpf call in a loop, the callee's slot at the same offset: kept",
	  N(STX(BPF_DW, 10, 1, -8), MOV64_IMM(7, 0), MOV64_IMM(6, 2), CALL_LOCAL(6),
	    LDX(BPF_DW, 2, 10, -8), ALU64_REG(BPF_ADD, 7, 2), ALU64_IMM(BPF_ADD, 6, -1),
	    JMP_IMM(BPF_JNE, 6, 0, -5), MOV64_REG(0, 7), EXIT(),
	    ST(BPF_DW, 10, -8, 100), LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 1, 2 }, { 2, 4 }, -1, 0 },
	{ "a tail call: kept",
	  N(STX(BPF_DW, 10, 1, -8), MOV64_IMM(2, 0), MOV64_IMM(3, 0), CALL(BPF_FUNC_tail_call),
	    LDX(BPF_DW, 0, 10, -8), EXIT()),
	  { 1, 2 }, { 1, 2 }, -1, 0, 1 },
	/* r6-r8 take the three scratch registers (pass leafregs): slots go to callee-saved
	 * ones, and only when a loop accesses them */
	{ "scratch registers taken: a slot a loop loads in a pushed register, one outside kept",
	  N(MOV64_REG(6, 1), MOV64_REG(7, 1), MOV64_REG(8, 1), STX(BPF_DW, 10, 1, -8),
	    STX(BPF_DW, 10, 6, -16), MOV64_IMM(0, 0), MOV64_IMM(3, 2), LDX(BPF_DW, 2, 10, -8),
	    ALU64_REG(BPF_ADD, 0, 2), ALU64_IMM(BPF_ADD, 3, -1), JMP_IMM(BPF_JNE, 3, 0, -4),
	    LDX(BPF_DW, 2, 10, -16), ALU64_REG(BPF_ADD, 0, 2), ALU64_REG(BPF_ADD, 0, 7),
	    ALU64_REG(BPF_ADD, 0, 8), EXIT()),
	  { 1, 2 }, { 5, 10 }, 2, 1 },
	{ "scratch registers taken, straight-line code: kept (no push)",
	  N(MOV64_REG(6, 1), MOV64_REG(7, 1), MOV64_REG(8, 1), STX(BPF_DW, 10, 1, -8),
	    STX(BPF_DW, 10, 6, -16), LDX(BPF_DW, 0, 10, -8), LDX(BPF_DW, 2, 10, -8),
	    ALU64_REG(BPF_ADD, 0, 2), LDX(BPF_DW, 2, 10, -16), ALU64_REG(BPF_ADD, 0, 2),
	    ALU64_REG(BPF_ADD, 0, 7), ALU64_REG(BPF_ADD, 0, 8), EXIT()),
	  { 1, 2 }, { 5, 10 }, -1, 0 },
	/* nine slots a loop loads: three scratch registers, five callee-saved (rbp in use:
	 * not a red-zone program, the slot at -256 is past its 128 bytes); the slot of the
	 * highest offset stays (ties go to the lower one) */
	{ "more slots than registers: one stays",
	  N(ST(BPF_DW, 10, -8, 1), ST(BPF_DW, 10, -16, 2), ST(BPF_DW, 10, -24, 3),
	    ST(BPF_DW, 10, -32, 4), ST(BPF_DW, 10, -40, 5), ST(BPF_DW, 10, -48, 6),
	    ST(BPF_DW, 10, -56, 7), ST(BPF_DW, 10, -64, 8), ST(BPF_DW, 10, -256, 9),
	    MOV64_IMM(0, 0), MOV64_IMM(3, 1),
	    ADD_SLOT(-8), ADD_SLOT(-16), ADD_SLOT(-24), ADD_SLOT(-32), ADD_SLOT(-40),
	    ADD_SLOT(-48), ADD_SLOT(-56), ADD_SLOT(-64), ADD_SLOT(-256),
	    ADD_SLOT(-8), ADD_SLOT(-16), ADD_SLOT(-24), ADD_SLOT(-32), ADD_SLOT(-40),
	    ADD_SLOT(-48), ADD_SLOT(-56), ADD_SLOT(-64), ADD_SLOT(-256),
	    ALU64_IMM(BPF_ADD, 3, -1), JMP_IMM(BPF_JNE, 3, 0, -38), EXIT()),
	  { 0, 1 }, { 90, 90 }, 3, 5 },
};

/* Loads and stores of the stack: mov to or from [rsp + disp] or [rbp + disp], mov of an
 * immediate there, movzx from there (88, 89, 8b, c7, 0f b6/b7 with a mod 01/10 operand
 * on rsp's SIB 24 or on rbp). */
static int stack_ops(const struct brt_jit_prog *p)
{
	size_t size;
	const uint8_t *code = brt_jit_code(p, &size, NULL);
	int n = 0;

	for (size_t k = 0; k + 3 < size; k++) {
		bool movzx = code[k] == 0x0f && (code[k + 1] == 0xb6 || code[k + 1] == 0xb7);
		uint8_t op = code[k], m = code[k + 1 + movzx], sib = code[k + 2 + movzx];

		if ((!movzx && op != 0x88 && op != 0x89 && op != 0x8b && op != 0xc7) ||
		    ((m >> 6) != 1 && (m >> 6) != 2))
			continue;
		n += (m & 7) == 5 || ((m & 7) == 4 && sib == 0x24);
	}
	return n;
}

/* stack_ops() of blinded code: its random keys are immediates that may hold the bytes of
 * one more "mov [rsp + disp]" (a run in ~30 of this test failed so), never fewer, so the
 * fewest over 8 compiles is the code's own count.  The 7 more are all kept until the end:
 * the key's seed mixes in the program's address, which a freed one would hand on. */
static int blinded_stack_ops(const struct sr_case *t, const struct brt_jit_env *e,
			     const struct brt_jit_prog *p)
{
	struct brt_jit_prog *q[7] = { NULL };
	int n = stack_ops(p);
	char err[128];

	for (int i = 0; i < 7 && n >= 0; i++) {
		if (brt_jit_compile(t->insns, t->n, e, &q[i], err, sizeof(err)) || !q[i])
			n = -1;
		else if (stack_ops(q[i]) < n)
			n = stack_ops(q[i]);
	}
	for (int i = 0; i < 7; i++)
		brt_jit_free(q[i]);
	return n;
}

/* The pushes the code starts with (the main prologue's: 53, 55, 41 54..57). */
static int pushes(const struct brt_jit_prog *p)
{
	size_t size, k = 0;
	const uint8_t *code = brt_jit_code(p, &size, NULL);
	int n = 0;

	for (;;) {
		if (k < size && (code[k] == 0x53 || code[k] == 0x55))
			k++;
		else if (k + 1 < size && code[k] == 0x41 && code[k + 1] >= 0x54 && code[k + 1] <= 0x57)
			k += 2;
		else
			return n;
		n++;
	}
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sr_case *t = &cases[i];
		int ops[2] = { 0, 0 }, push[2] = { 0, 0 };

		for (int v = 0; v < 3; v++) { /* pass on, off, blinded */
			struct brt_jit_env e = { .helper = resolve, .pkt_data_off = -1,
						 .pkt_len_off = -1,
						 .passes_off = v == 1 ? BRT_JIT_PASS(stackreg) : 0,
						 .flags = v == 2 ? BRT_JIT_BLIND : 0 };
			struct brt_jit_prog *p = NULL;
			char err[128];

			T_CASE(t->name);
			T_EQ_INT(0, brt_jit_compile(t->insns, t->n, &e, &p, err, sizeof(err)));
			if (!p) {
				printf("  %s\n", err);
				continue;
			}
			for (int run = 0; run < 2 && !t->norun; run++)
				T_EQ_U64(t->r0[run], brt_jit_call(p, t->in[run], 0, NULL));
			if (v < 2) {
				ops[v] = stack_ops(p);
				push[v] = pushes(p);
			} else {
				T_EQ_INT(ops[1], blinded_stack_ops(t, &e, p));
			}
			brt_jit_free(p);
		}
		T_CASE(t->name);
		T_EQ_INT(t->kept < 0 ? ops[1] : t->kept, ops[0]);
		T_ASSERT(ops[1] > 0);
		T_EQ_INT(push[1] + t->pushes, push[0]);
	}
	return t_done();
}
