/* test_soundness.c - the verifier must never accept a program that misbehaves: random
 * socket-filter programs (ALU, stack and context accesses, pointer arithmetic, branches,
 * bounded loops, helper calls) go through brt_verify(); every accepted one runs on the
 * checked engine with random context bytes and must not fault (no access outside the
 * context and the stack, no budget exhaustion, no fall off the end).
 * Usage: test_verifier_soundness [PROGRAMS [SEED]] (scripts/verifier-soundness.sh runs a
 * long campaign).
 */
#include <stdio.h>

#include "bpfrt.h"
#include "cases/case.h"
#include "harness.h"

#define MAXP 96
#define CTX_SIZE 192

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

static uint32_t pick(uint32_t n)
{
	return rnd() % n;
}

struct gen {
	struct bpf_insn p[MAXP];
	int n;
};

static void emit(struct gen *g, struct bpf_insn insn)
{
	if (g->n < MAXP)
		g->p[g->n++] = insn;
}

static const uint8_t alu_ops[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
				   BPF_RSH, BPF_NEG, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH };
static const uint8_t jmp_ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT,
				   BPF_JSGE, BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE };
static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };

/* a scratch register: r0-r5 and r7-r9 (r6 keeps the context) */
static uint8_t sreg(void)
{
	static const uint8_t r[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9 };

	return r[pick(9)];
}

static int32_t small_imm(void)
{
	static const int32_t v[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 64, 255, -1, -8, 512,
				     0x7fffffff, -0x80000000LL };

	return v[pick(sizeof(v) / sizeof(v[0]))];
}

static void gen_alu(struct gen *g)
{
	uint8_t op = alu_ops[pick(sizeof(alu_ops))], cls = pick(3) ? BPF_ALU64 : BPF_ALU;
	uint8_t d = sreg();
	int32_t imm = small_imm();

	if (op == BPF_NEG) {
		emit(g, (struct bpf_insn)I(cls | op, d, 0, 0, 0));
		return;
	}
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH))
		imm &= cls == BPF_ALU64 ? 63 : 31;
	if ((op == BPF_DIV || op == BPF_MOD) && !imm)
		imm = 3;
	if (pick(2))
		emit(g, (struct bpf_insn)I(cls | op | BPF_K, d, 0, 0, imm));
	else
		emit(g, (struct bpf_insn)I(cls | op | BPF_X, d, sreg(), 0, 0));
}

static void gen_mem(struct gen *g)
{
	uint8_t sz = sizes[pick(4)], r = sreg();
	int16_t soff = (int16_t)(-8 * (int)(1 + pick(8)) + (pick(4) ? 0 : (int)pick(8)));
	int16_t coff = (int16_t)(4 * pick(12) + (pick(8) ? 0 : (int)pick(4)));

	switch (pick(6)) {
	case 0:
		emit(g, (struct bpf_insn)ST(sz, 10, soff, small_imm()));
		break;
	case 1:
		emit(g, (struct bpf_insn)STX(sz, 10, r, soff));
		break;
	case 2:
		emit(g, (struct bpf_insn)LDX(sz, r, 10, soff));
		break;
	case 3:
		emit(g, (struct bpf_insn)LDX(sz, r, 6, coff));
		break;
	case 4: /* variable stack address: r2 = fp - 64 + (rX & mask) */
		emit(g, (struct bpf_insn)MOV64_REG(2, 10));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 2, -64));
		emit(g, (struct bpf_insn)ALU64_IMM(BPF_AND, r, (int32_t)(pick(2) ? 63 : 127)));
		emit(g, (struct bpf_insn)ALU64_REG(BPF_ADD, 2, r));
		if (pick(2))
			emit(g, (struct bpf_insn)ST(sz, 2, (int16_t)pick(8), 1));
		else
			emit(g, (struct bpf_insn)LDX(sz, sreg(), 2, 0));
		break;
	default: /* write into cb[] of the context */
		emit(g, (struct bpf_insn)STX(BPF_W, 6, r, (int16_t)(48 + 4 * pick(6))));
		break;
	}
}

static void gen_body(struct gen *g, int len)
{
	int start = g->n;

	while (g->n - start < len && g->n < MAXP - 12) {
		uint32_t k = pick(20);

		if (k < 8) {
			gen_alu(g);
		} else if (k < 14) {
			gen_mem(g);
		} else if (k < 17) {
			uint8_t op = jmp_ops[pick(sizeof(jmp_ops))];
			uint8_t cls = pick(4) ? BPF_JMP : BPF_JMP32;
			int16_t off = (int16_t)(1 + pick(3));

			if (pick(2))
				emit(g, (struct bpf_insn)I(cls | op | BPF_K, sreg(), 0, off, small_imm()));
			else
				emit(g, (struct bpf_insn)I(cls | op | BPF_X, sreg(), sreg(), off, 0));
			for (int i = 0; i < off; i++)
				gen_alu(g);
		} else if (k < 18) {
			emit(g, (struct bpf_insn)CALL(BPF_FUNC_ktime_get_ns));
		} else {
			/* a bounded loop over r9 */
			int body = 1 + (int)pick(3), top;

			emit(g, (struct bpf_insn)MOV64_IMM(9, 0));
			top = g->n;
			for (int i = 0; i < body; i++)
				gen_alu(g);
			emit(g, (struct bpf_insn)ALU64_IMM(BPF_ADD, 9, 1));
			emit(g, (struct bpf_insn)JIMM(BPF_JLT, 9, (int32_t)(1 + pick(20)),
						       (int16_t)(top - g->n - 1)));
		}
	}
}

static void gen_prog(struct gen *g)
{
	g->n = 0;
	emit(g, (struct bpf_insn)MOV64_REG(6, 1));
	for (uint8_t r = 0; r <= 9; r++) {
		if (r == 6 || !pick(6))
			continue;
		if (pick(2))
			emit(g, (struct bpf_insn)MOV64_IMM(r, small_imm()));
		else
			emit(g, (struct bpf_insn)LDX(BPF_W, r, 6, (int16_t)(4 * pick(12))));
	}
	gen_body(g, 4 + (int)pick(40));
	if (pick(4))
		emit(g, (struct bpf_insn)MOV64_IMM(0, (int32_t)pick(2)));
	emit(g, (struct bpf_insn)EXIT());
}

static void dump(const struct gen *g)
{
	const uint8_t *b = (const uint8_t *)g->p;

	for (int i = 0; i < g->n * 8; i++)
		fprintf(stderr, "%02x%s", b[i], i % 8 == 7 ? "\n" : " ");
}

int main(int argc, char **argv)
{
	long programs = argc > 1 ? strtol(argv[1], NULL, 0) : 2000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
	long accepted = 0, faults = 0;
	uint8_t ctx[CTX_SIZE];
	struct gen g;

	rng_state = seed;
	for (long i = 0; i < programs; i++) {
		struct brt_verify_opts o = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER, .gpl = 1 };
		BPFRT_OPTS(bpfrt_vm_opts, vo, .engine = BPFRT_ENGINE_CHECKED,
			   .insn_budget = 10000000);
		struct bpfrt_vm *vm;
		char err[256];
		uint64_t r0;

		gen_prog(&g);
		if (brt_verify(g.p, (size_t)g.n, &o, NULL))
			continue;
		accepted++;
		if (bpfrt_vm_load(g.p, (size_t)g.n, &vo, &vm, err, sizeof(err))) {
			T_FAIL("program %ld: accepted but does not load: %s", i, err);
			continue;
		}
		for (int run = 0; run < 3; run++) {
			for (size_t k = 0; k < sizeof(ctx); k++)
				ctx[k] = (uint8_t)rnd();
			if (bpfrt_vm_run(vm, ctx, sizeof(ctx), &r0, err, sizeof(err))) {
				faults++;
				T_FAIL("program %ld (seed %#llx): verified but faults: %s", i,
				       (unsigned long long)seed, err);
				dump(&g);
				break;
			}
		}
		bpfrt_vm_free(vm);
	}
	printf("%ld programs, %ld accepted by the verifier, %ld faulted when run\n", programs,
	       accepted, faults);
	T_CASE("campaign");
	T_ASSERT(accepted * 20 >= programs); /* the generator must exercise acceptance */
	T_EQ_INT(0, faults);
	return t_done();
}
