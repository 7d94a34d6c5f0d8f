/* gen_progs.h - the generated programs of bench section 30-verifier (verifier_bench.c),
 * also compared log line by log line with the kernel's by tests/verifier/test_log2_oracle.c.
 * Each returns a malloc'd program and its length, or NULL. */
#ifndef BPFRT_BENCH_GEN_PROGS_H
#define BPFRT_BENCH_GEN_PROGS_H

#include <stdint.h>
#include <stdlib.h>

#include <linux/bpf.h>

#define BG_I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						.off = (o), .imm = (i) })

/* 4,000 instructions without a jump: constants, ALU between registers, stack traffic */
static inline struct bpf_insn *bench_gen_straight(size_t *count)
{
	static const uint8_t ops[] = { BPF_ADD, BPF_XOR, BPF_SUB, BPF_OR, BPF_AND, BPF_MUL };
	struct bpf_insn *p = malloc(4000 * sizeof(*p));
	size_t n = 0;

	if (!p)
		return NULL;
	for (uint8_t r = 2; r <= 9; r++)
		p[n++] = BG_I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, r * 7);
	while (n < 3998) {
		uint8_t d = (uint8_t)(2 + n % 8), s = (uint8_t)(2 + (n * 3 + 1) % 8);

		switch (n % 5) {
		case 0:
			p[n++] = BG_I(BPF_STX | BPF_MEM | BPF_DW, 10, d, (int16_t)(-8 * (1 + n % 16)), 0);
			break;
		case 1:
			p[n++] = BG_I(BPF_LDX | BPF_MEM | BPF_DW, d, 10, (int16_t)(-8 * (1 + (n - 1) % 16)), 0);
			break;
		default:
			p[n++] = BG_I(BPF_ALU64 | ops[n % 6] | BPF_X, d, s, 0, 0);
			break;
		}
	}
	p[n++] = BG_I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = BG_I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	*count = n;
	return p;
}

/* 200 conditions, each on a context field loaded just before it and skipping one
 * increment: paths join again after every condition */
static inline struct bpf_insn *bench_gen_branchy(size_t *count)
{
	static const uint8_t jops[] = { BPF_JGT, BPF_JEQ, BPF_JLT, BPF_JSET, BPF_JSGT };
	static const int16_t ctx_off[] = { 0, 4, 8, 12, 16, 20, 24, 28, 32 };
	struct bpf_insn *p = malloc(700 * sizeof(*p));
	size_t n = 0;

	if (!p)
		return NULL;
	p[n++] = BG_I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	for (int i = 0; i < 200; i++) {
		p[n++] = BG_I(BPF_LDX | BPF_MEM | BPF_W, 2, 1, ctx_off[i % 9], 0);
		p[n++] = BG_I(BPF_JMP | jops[i % 5] | BPF_K, 2, 0, 1, (i * 37) % 1500);
		p[n++] = BG_I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1);
	}
	p[n++] = BG_I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	*count = n;
	return p;
}

/* The state-explosion case (tests/verifier/test_scale.c): 64 stack stores, then a loop of
 * BENCH_EXPLOSION_ROUNDS rounds whose counter decides the branch, so every round is a new
 * state (68 insns; Linux 6.18: 998,066 processed, 24,951 states) */
#define BENCH_EXPLOSION_ROUNDS 499000
static inline struct bpf_insn *bench_gen_explosion(size_t *count)
{
	struct bpf_insn *p = malloc(68 * sizeof(*p));
	size_t n = 0;

	if (!p)
		return NULL;
	for (int i = 1; i <= 64; i++)
		p[n++] = BG_I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, (int16_t)(-8 * i), i);
	p[n++] = BG_I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[n++] = BG_I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1);
	p[n++] = BG_I(BPF_JMP | BPF_JLT | BPF_K, 0, 0, -2, BENCH_EXPLOSION_ROUNDS);
	p[n++] = BG_I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	*count = n;
	return p;
}

#endif
