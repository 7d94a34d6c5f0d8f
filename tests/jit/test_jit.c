/* test_jit.c - table tests of the x86-64 JIT (src/jit/x86_64/): each case is a program,
 * an input buffer and the r0 it must return, chosen where x86 and eBPF disagree (div by
 * zero, INT_MIN/-1, shift masks, zero-extension, implicit rax/rdx/rcx operands), plus
 * the compile-time refusals.  Failures print the generated code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/filter.h>

#include "harness.h"
#include "isa/isa.h"
#include "jit/jit.h"
#include "vm/vm.h"
#include "jit_test.h"

#define MAX_INSNS 300

/* What the tests pass as the run ctx: the two fields the JIT reads, then the packet. */
struct test_ctx {
	uint64_t stopped;
	uint64_t stop_r0;
	const uint8_t *pkt;
	uint64_t pkt_len;
};

static uint64_t helper_sum(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			   struct bpfrt_run_ctx *ctx)
{
	(void)ctx;
	return r1 + 2 * r2 + 3 * r3 + 4 * r4 + 5 * r5;
}

/* The conformance suite's "unwind" helper: returns its argument, stops the run on 0. */
static uint64_t helper_unwind(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	struct test_ctx *c = (struct test_ctx *)(void *)ctx;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!r1) {
		c->stopped = 1;
		c->stop_r0 = 0;
	}
	return r1;
}

static bpfrt_helper_fn resolve(void *arg, uint32_t id)
{
	(void)arg;
	return id == 1 ? helper_sum : id == 5 ? helper_unwind : NULL;
}

static const struct brt_jit_env env = {
	.helper = resolve,
	.pkt_data_off = offsetof(struct test_ctx, pkt),
	.pkt_len_off = offsetof(struct test_ctx, pkt_len),
};

struct jit_case {
	const char *name;
	struct bpf_insn insns[MAX_INSNS];
	uint8_t mem[32];
	uint32_t mem_len;
	uint64_t result;
	const char *errstr; /* compile must fail with this text */
};

#define INT64_MIN_IMM64 0x8000000000000000ull

static const struct jit_case cases[] = {
	{ "mov64 imm", { MOV64_IMM(0, 42), EXIT() }, .result = 42 },
	{ "mov64 imm sign-extends", { MOV64_IMM(0, -1), EXIT() }, .result = UINT64_MAX },
	{ "mov32 imm zero-extends", { MOV64_IMM(0, -1), MOV32_IMM(0, -1), EXIT() },
	  .result = 0xffffffff },
	{ "lddw", { LD_IMM64(0, 0x123456789abcdef0ull), EXIT() }, .result = 0x123456789abcdef0ull },
	{ "lddw negative small", { LD_IMM64(0, 0xfffffffffffffff0ull), EXIT() },
	  .result = 0xfffffffffffffff0ull },
	{ "args r1 r2", { MOV64_REG(0, 2), ALU64_REG(BPF_SUB, 0, 1), EXIT() }, .mem_len = 4,
	  .result = 0 /* patched: r2 - r1 below */ },
	{ "add32 wraps and zero-extends", { MOV64_IMM(0, -1), ALU32_IMM(BPF_ADD, 0, 1), EXIT() },
	  .result = 0 },
	{ "add32 0 still zero-extends", { LD_IMM64(0, 0xffffffff00000005ull),
	  ALU32_IMM(BPF_ADD, 0, 0), EXIT() }, .result = 5 },
	{ "and64 imm sign-extends", { LD_IMM64(0, 0xf0f0f0f0f0f0f0f0ull),
	  ALU64_IMM(BPF_AND, 0, -16), EXIT() }, .result = 0xf0f0f0f0f0f0f0f0ull },
	{ "and32 -1 zero-extends", { MOV64_IMM(0, -2), ALU32_IMM(BPF_AND, 0, -1), EXIT() },
	  .result = 0xfffffffe },
	{ "xor or sub reg", { MOV64_IMM(0, 0x0f), MOV64_IMM(3, 0xf0), ALU64_REG(BPF_OR, 0, 3),
	  MOV64_IMM(4, 0x3c), ALU64_REG(BPF_XOR, 0, 4), ALU64_IMM(BPF_SUB, 0, 200), EXIT() },
	  .result = (uint64_t)(0xc3 - 200) },
	{ "mul64 imm", { MOV64_IMM(0, 7), ALU64_IMM(BPF_MUL, 0, -3), EXIT() },
	  .result = (uint64_t)-21 },
	{ "mul64 imm pow2", { MOV64_IMM(0, 7), ALU64_IMM(BPF_MUL, 0, 8), EXIT() }, .result = 56 },
	{ "mul32 reg wraps", { MOV64_IMM(0, 0x10000), MOV64_IMM(7, 0x10001),
	  ALU32_REG(BPF_MUL, 0, 7), EXIT() }, .result = 0x10000 },
	{ "mul32 imm 1 zero-extends", { MOV64_IMM(0, -1), ALU32_IMM(BPF_MUL, 0, 1), EXIT() },
	  .result = 0xffffffff },
	{ "div64 reg", { MOV64_IMM(0, 100), MOV64_IMM(1, 7), ALU64_REG(BPF_DIV, 0, 1), EXIT() },
	  .result = 14 },
	{ "div64 by zero is 0", { MOV64_IMM(0, 100), MOV64_IMM(1, 0), ALU64_REG(BPF_DIV, 0, 1),
	  EXIT() }, .result = 0 },
	{ "mod64 by zero keeps dst", { MOV64_IMM(0, -100), MOV64_IMM(1, 0),
	  ALU64_REG(BPF_MOD, 0, 1), EXIT() }, .result = (uint64_t)-100 },
	{ "mod32 by zero zero-extends", { MOV64_IMM(0, -100), MOV64_IMM(1, 0),
	  ALU32_REG(BPF_MOD, 0, 1), EXIT() }, .result = (uint32_t)-100 },
	{ "div32 imm 0", { MOV64_IMM(0, -100), ALU32_IMM(BPF_DIV, 0, 0), EXIT() }, .result = 0 },
	{ "mod32 imm 0", { MOV64_IMM(0, -100), ALU32_IMM(BPF_MOD, 0, 0), EXIT() },
	  .result = (uint32_t)-100 },
	{ "div64 unsigned imm -1", { MOV64_IMM(0, -1), ALU64_IMM(BPF_DIV, 0, -1), EXIT() },
	  .result = 1 },
	{ "div32 imm pow2", { MOV64_IMM(0, -1), ALU32_IMM(BPF_DIV, 0, 16), EXIT() },
	  .result = 0x0fffffff },
	{ "mod64 imm pow2", { MOV64_IMM(0, -1), ALU64_IMM(BPF_MOD, 0, 16), EXIT() }, .result = 15 },
	{ "mod32 imm 2^31", { MOV64_IMM(0, -1), ALU32_IMM(BPF_MOD, 0, INT32_MIN), EXIT() },
	  .result = 0x7fffffff },
	{ "div64 imm 7", { MOV64_IMM(0, 100), ALU64_IMM(BPF_DIV, 0, 7), EXIT() }, .result = 14 },
	{ "div keeps r0 and r3", { MOV64_IMM(0, 11), MOV64_IMM(3, 33), MOV64_IMM(6, 100),
	  MOV64_IMM(7, 9), ALU64_REG(BPF_DIV, 6, 7), ALU64_REG(BPF_ADD, 0, 3),
	  ALU64_REG(BPF_ADD, 0, 6), EXIT() }, .result = 11 + 33 + 11 },
	{ "div dst r3 src r0", { MOV64_IMM(0, 4), MOV64_IMM(3, 100), ALU64_REG(BPF_DIV, 3, 0),
	  ALU64_IMM(BPF_MUL, 0, 1000), ALU64_REG(BPF_ADD, 0, 3), EXIT() }, .result = 4025 },
	{ "mod dst r0 src r3", { MOV64_IMM(0, 100), MOV64_IMM(3, 7), ALU64_REG(BPF_MOD, 0, 3),
	  ALU64_IMM(BPF_MUL, 3, 1000), ALU64_REG(BPF_ADD, 0, 3), EXIT() }, .result = 7002 },
	{ "sdiv64 INT_MIN / -1", { LD_IMM64(0, INT64_MIN_IMM64), MOV64_IMM(1, -1),
	  SDIV64_REG(0, 1), EXIT() }, .result = INT64_MIN_IMM64 },
	{ "smod64 INT_MIN % -1", { LD_IMM64(0, INT64_MIN_IMM64), MOV64_IMM(1, -1),
	  SMOD64_REG(0, 1), EXIT() }, .result = 0 },
	{ "sdiv32 INT_MIN / -1", { MOV32_IMM(0, INT32_MIN), MOV64_IMM(1, -1), SDIV32_REG(0, 1),
	  EXIT() }, .result = 0x80000000 },
	{ "smod32 INT_MIN % -1", { MOV32_IMM(0, INT32_MIN), MOV64_IMM(1, -1), SMOD32_REG(0, 1),
	  EXIT() }, .result = 0 },
	{ "sdiv64 -7 / 2", { MOV64_IMM(0, -7), MOV64_IMM(1, 2), SDIV64_REG(0, 1), EXIT() },
	  .result = (uint64_t)-3 },
	{ "smod64 -7 % 2", { MOV64_IMM(0, -7), MOV64_IMM(1, 2), SMOD64_REG(0, 1), EXIT() },
	  .result = (uint64_t)-1 },
	{ "sdiv64 by zero", { MOV64_IMM(0, -7), MOV64_IMM(1, 0), SDIV64_REG(0, 1), EXIT() },
	  .result = 0 },
	{ "smod32 by zero", { MOV64_IMM(0, -7), MOV64_IMM(1, 0), SMOD32_REG(0, 1), EXIT() },
	  .result = (uint32_t)-7 },
	{ "sdiv64 imm -1", { LD_IMM64(0, INT64_MIN_IMM64), SDIV64_IMM(0, -1), EXIT() },
	  .result = INT64_MIN_IMM64 },
	{ "sdiv64 imm -3", { MOV64_IMM(0, 10), SDIV64_IMM(0, -3), EXIT() }, .result = (uint64_t)-3 },
	{ "smod32 imm -3", { MOV64_IMM(0, -10), SMOD32_IMM(0, -3), EXIT() },
	  .result = (uint32_t)-1 },
	{ "lsh64 reg masks to 6 bits", { MOV64_IMM(0, 1), MOV64_IMM(1, 65), ALU64_REG(BPF_LSH, 0, 1),
	  EXIT() }, .result = 2 },
	{ "lsh32 reg masks to 5 bits", { MOV64_IMM(0, 1), MOV64_IMM(1, 33), ALU32_REG(BPF_LSH, 0, 1),
	  EXIT() }, .result = 2 },
	{ "lsh32 by 0 zero-extends", { MOV64_IMM(0, -1), MOV64_IMM(1, 0), ALU32_REG(BPF_LSH, 0, 1),
	  EXIT() }, .result = 0xffffffff },
	{ "rsh64 dst r4", { MOV64_IMM(4, -1), MOV64_IMM(2, 60), ALU64_REG(BPF_RSH, 4, 2),
	  MOV64_REG(0, 4), EXIT() }, .result = 15 },
	{ "rsh32 src r4 keeps r4", { MOV64_IMM(0, -1), MOV64_IMM(4, 28), ALU32_REG(BPF_RSH, 0, 4),
	  ALU64_REG(BPF_ADD, 0, 4), EXIT() }, .result = 15 + 28 },
	{ "arsh64 reg keeps r4", { MOV64_IMM(0, -64), MOV64_IMM(1, 3), MOV64_IMM(4, 1000),
	  ALU64_REG(BPF_ARSH, 0, 1), ALU64_REG(BPF_ADD, 0, 4), EXIT() }, .result = 1000 - 8 },
	{ "arsh32 imm", { MOV32_IMM(0, INT32_MIN), ALU32_IMM(BPF_ARSH, 0, 4), EXIT() },
	  .result = 0xf8000000 },
	{ "lsh64 imm 0 noop", { MOV64_IMM(0, -1), ALU64_IMM(BPF_LSH, 0, 0), EXIT() },
	  .result = UINT64_MAX },
	{ "neg64", { MOV64_IMM(0, 5), ALU64_IMM(BPF_NEG, 0, 0), EXIT() }, .result = (uint64_t)-5 },
	{ "neg32", { MOV64_IMM(0, 5), ALU32_IMM(BPF_NEG, 0, 0), EXIT() }, .result = (uint32_t)-5 },
	{ "movsx8_64 from sil", { MOV64_IMM(2, 0x180), MOVSX64(0, 2, 8), EXIT() },
	  .result = (uint64_t)-128 },
	{ "movsx16_64", { MOV64_IMM(3, 0x18000), MOVSX64(0, 3, 16), EXIT() },
	  .result = (uint64_t)-32768 },
	{ "movsx32_64", { MOV32_IMM(1, -2), MOVSX64(0, 1, 32), EXIT() }, .result = (uint64_t)-2 },
	{ "movsx8_32 from dil", { MOV64_IMM(1, 0xff), MOVSX32(0, 1, 8), EXIT() },
	  .result = 0xffffffff },
	{ "movsx16_32", { MOV64_IMM(1, 0x8000), MOVSX32(0, 1, 16), EXIT() }, .result = 0xffff8000 },
	{ "mov32 reg zero-extends", { MOV64_IMM(0, -1), ALU32_REG(BPF_MOV, 0, 0), EXIT() },
	  .result = 0xffffffff },
	{ "be16", { LD_IMM64(0, 0x1122334455667788ull), ENDIAN(BPF_TO_BE, 0, 16), EXIT() },
	  .result = 0x8877 },
	{ "be32", { LD_IMM64(0, 0x1122334455667788ull), ENDIAN(BPF_TO_BE, 0, 32), EXIT() },
	  .result = 0x88776655 },
	{ "be64", { LD_IMM64(0, 0x1122334455667788ull), ENDIAN(BPF_TO_BE, 0, 64), EXIT() },
	  .result = 0x8877665544332211ull },
	{ "le16", { LD_IMM64(0, 0x1122334455667788ull), ENDIAN(BPF_TO_LE, 0, 16), EXIT() },
	  .result = 0x7788 },
	{ "le32", { LD_IMM64(0, 0x1122334455667788ull), ENDIAN(BPF_TO_LE, 0, 32), EXIT() },
	  .result = 0x55667788 },
	{ "le64", { LD_IMM64(0, 0x1122334455667788ull), ENDIAN(BPF_TO_LE, 0, 64), EXIT() },
	  .result = 0x1122334455667788ull },
	{ "bswap16 r8", { LD_IMM64(8, 0x1122334455667788ull), BSWAP(8, 16), MOV64_REG(0, 8), EXIT() },
	  .result = 0x8877 },
	{ "bswap32", { LD_IMM64(0, 0x1122334455667788ull), BSWAP(0, 32), EXIT() },
	  .result = 0x88776655 },
	{ "bswap64 r5", { LD_IMM64(5, 0x1122334455667788ull), BSWAP(5, 64), MOV64_REG(0, 5), EXIT() },
	  .result = 0x8877665544332211ull },
	{ "stack store/load all sizes", {
	  ST(BPF_DW, 10, -8, -2), ST(BPF_W, 10, -12, 0x11223344), ST(BPF_H, 10, -14, 0x5566),
	  ST(BPF_B, 10, -15, 0x77), LDX(BPF_DW, 0, 10, -8), LDX(BPF_W, 1, 10, -12),
	  ALU64_REG(BPF_ADD, 0, 1), LDX(BPF_H, 1, 10, -14), ALU64_REG(BPF_ADD, 0, 1),
	  LDX(BPF_B, 1, 10, -15), ALU64_REG(BPF_ADD, 0, 1), EXIT() },
	  .result = (uint64_t)-2 + 0x11223344 + 0x5566 + 0x77 },
	{ "stx from sil and r13", { MOV64_IMM(2, 0x1ab), MOV64_IMM(7, 0x1cd), STX(BPF_B, 10, 2, -1),
	  STX(BPF_B, 10, 7, -2), LDX(BPF_H, 0, 10, -2), EXIT() }, .result = 0xabcd },
	{ "sign-extending loads", { ST(BPF_DW, 10, -8, -1), ST(BPF_B, 10, -8, 0x80),
	  LDXS(BPF_B, 0, 10, -8), LDXS(BPF_H, 1, 10, -8), ALU64_REG(BPF_ADD, 0, 1),
	  LDXS(BPF_W, 1, 10, -8), ALU64_REG(BPF_ADD, 0, 1), EXIT() },
	  .result = (uint64_t)(-128 + (int16_t)0xff80 + (int32_t)0xffffff80) },
	{ "load from input", { LDX(BPF_W, 0, 1, 2), EXIT() },
	  .mem = { 1, 2, 3, 4, 5, 6 }, .mem_len = 6, .result = 0x06050403 },
	{ "store to input, r6 base", { MOV64_REG(6, 1), STX(BPF_DW, 6, 6, 0), LDX(BPF_DW, 0, 1, 0),
	  ALU64_REG(BPF_SUB, 0, 6), EXIT() }, .mem_len = 8, .result = 0 },
	{ "big offsets", { ST(BPF_DW, 10, -512, 77), LDX(BPF_DW, 0, 10, -512), EXIT() },
	  .result = 77 },
	{ "atomic add/or/and/xor 64", { ST(BPF_DW, 10, -8, 0x10), MOV64_IMM(1, 0x3),
	  ATOMIC(BPF_DW, BPF_ADD, 10, 1, -8), MOV64_IMM(1, 0x100), ATOMIC(BPF_DW, BPF_OR, 10, 1, -8),
	  MOV64_IMM(1, 0x1f0), ATOMIC(BPF_DW, BPF_AND, 10, 1, -8), MOV64_IMM(1, 0x1),
	  ATOMIC(BPF_DW, BPF_XOR, 10, 1, -8), LDX(BPF_DW, 0, 10, -8), EXIT() }, .result = 0x111 },
	{ "atomic fetch_add 32", { ST(BPF_DW, 10, -8, -1), MOV64_IMM(1, 2),
	  ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, 10, 1, -8), LDX(BPF_DW, 0, 10, -8),
	  ALU64_REG(BPF_ADD, 0, 1), EXIT() }, .result = 0xffffffff00000001ull + 0xffffffffull },
	{ "atomic fetch_or src r0", { ST(BPF_DW, 10, -8, 0x0f), MOV64_IMM(0, 0xf0),
	  ATOMIC(BPF_DW, BPF_OR | BPF_FETCH, 10, 0, -8), LDX(BPF_DW, 1, 10, -8),
	  ALU64_IMM(BPF_LSH, 1, 8), ALU64_REG(BPF_OR, 0, 1), EXIT() }, .result = 0xff0f },
	{ "atomic fetch_and keeps r0", { ST(BPF_DW, 10, -8, 0x0f), MOV64_IMM(0, 1000),
	  MOV64_IMM(2, 0x3c), ATOMIC(BPF_DW, BPF_AND | BPF_FETCH, 10, 2, -8), ALU64_REG(BPF_ADD, 0, 2),
	  LDX(BPF_DW, 1, 10, -8), ALU64_IMM(BPF_MUL, 1, 10000), ALU64_REG(BPF_ADD, 0, 1), EXIT() },
	  .result = 1000 + 0x0f + 10000 * 0x0c },
	{ "atomic fetch_xor 32 base r0", { MOV64_REG(0, 10), ST(BPF_DW, 10, -8, -1), MOV64_IMM(2, 0xff),
	  ATOMIC(BPF_W, BPF_XOR | BPF_FETCH, 0, 2, -8), LDX(BPF_DW, 0, 10, -8),
	  ALU64_REG(BPF_XOR, 0, 2), EXIT() }, .result = 0xffffffffffffff00ull ^ 0xffffffffull },
	{ "atomic xchg 64", { ST(BPF_DW, 10, -8, 5), MOV64_IMM(1, 9),
	  ATOMIC(BPF_DW, BPF_XCHG, 10, 1, -8), LDX(BPF_DW, 0, 10, -8), ALU64_IMM(BPF_MUL, 0, 10),
	  ALU64_REG(BPF_ADD, 0, 1), EXIT() }, .result = 95 },
	{ "atomic cmpxchg 64 success", { ST(BPF_DW, 10, -8, 5), MOV64_IMM(0, 5), MOV64_IMM(1, 9),
	  ATOMIC(BPF_DW, BPF_CMPXCHG, 10, 1, -8), LDX(BPF_DW, 1, 10, -8), ALU64_IMM(BPF_MUL, 0, 10),
	  ALU64_REG(BPF_ADD, 0, 1), EXIT() }, .result = 59 },
	{ "atomic cmpxchg 32 fail zero-extends r0", { ST(BPF_DW, 10, -8, 5), LD_IMM64(0, 0x100000004ull),
	  MOV64_IMM(1, 9), ATOMIC(BPF_W, BPF_CMPXCHG, 10, 1, -8), EXIT() }, .result = 5 },
	{ "atomic cmpxchg 32 success zero-extends r0", { ST(BPF_DW, 10, -8, 5),
	  LD_IMM64(0, 0x100000005ull), MOV64_IMM(1, 9), ATOMIC(BPF_W, BPF_CMPXCHG, 10, 1, -8),
	  LDX(BPF_W, 1, 10, -8), ALU64_IMM(BPF_LSH, 1, 8), ALU64_REG(BPF_OR, 0, 1), EXIT() },
	  .result = 0x905 },
	{ "loop sum 1..10", { MOV64_IMM(0, 0), MOV64_IMM(1, 10), ALU64_REG(BPF_ADD, 0, 1),
	  ALU64_IMM(BPF_SUB, 1, 1), JMP_IMM(BPF_JNE, 1, 0, -3), EXIT() }, .result = 55 },
	{ "jumps signed and unsigned", { MOV64_IMM(0, 0), MOV64_IMM(1, -1), MOV64_IMM(2, 1),
	  JMP_REG(BPF_JGT, 1, 2, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 1),
	  JMP_REG(BPF_JSGT, 1, 2, 1), ALU64_IMM(BPF_OR, 0, 2),
	  JMP_IMM(BPF_JSLT, 1, 0, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 4),
	  JMP_IMM(BPF_JLE, 2, 1, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 8),
	  JMP_IMM(BPF_JSGE, 1, -1, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 16),
	  JMP_IMM(BPF_JGE, 1, 0, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 32),
	  JMP_REG(BPF_JLT, 2, 1, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 64),
	  JMP_REG(BPF_JSLE, 1, 2, 1), EXIT(), ALU64_IMM(BPF_OR, 0, 128), EXIT() }, .result = 0xff },
	{ "jmp32 ignores upper half", { LD_IMM64(1, 0x500000007ull), MOV64_IMM(0, 1),
	  JMP32_IMM(BPF_JEQ, 1, 7, 1), EXIT(), MOV64_IMM(0, 2), JMP_IMM(BPF_JEQ, 1, 7, 1),
	  MOV64_IMM(0, 3), JMP32_IMM(BPF_JSLT, 1, 0, 1), ALU64_IMM(BPF_ADD, 0, 10), EXIT() },
	  .result = 13 },
	{ "jset", { MOV64_IMM(1, 0x10), MOV64_IMM(0, 0), JMP_IMM(BPF_JSET, 1, 0x30, 1), EXIT(),
	  MOV64_IMM(2, 0x0f), JMP_REG(BPF_JSET, 1, 2, 1), MOV64_IMM(0, 1), EXIT() }, .result = 1 },
	{ "jset imm sign-extends", { LD_IMM64(1, 0x100000000ull), MOV64_IMM(0, 0),
	  JMP_IMM(BPF_JSET, 1, -1, 1), EXIT(), MOV64_IMM(0, 1), JMP32_IMM(BPF_JSET, 1, -1, 1),
	  EXIT(), MOV64_IMM(0, 2), EXIT() }, .result = 1 },
	{ "ja and ja32", { MOV64_IMM(0, 1), JA(1), MOV64_IMM(0, 2), JA32(1), MOV64_IMM(0, 3),
	  JA(0), EXIT() }, .result = 1 },
	{ "helper call", { MOV64_IMM(6, 100), MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 3),
	  MOV64_IMM(4, 4), MOV64_IMM(5, 5), CALL(1), ALU64_REG(BPF_ADD, 0, 6), EXIT() },
	  .result = 1 + 4 + 9 + 16 + 25 + 100 },
	{ "helper stops the run", { MOV64_IMM(1, 0), CALL(5), MOV64_IMM(0, 2), EXIT() },
	  .result = 0 },
	{ "helper does not stop", { MOV64_IMM(1, -1), CALL(5), MOV64_IMM(0, 2), EXIT() },
	  .result = 2 },
	{ "callx", { MOV64_IMM(1, -1), MOV64_IMM(2, 5), CALLX(2), MOV64_IMM(0, 2), EXIT() },
	  .result = 2 },
	{ "callx unknown id stops", { MOV64_IMM(0, 7), MOV64_IMM(2, 99), CALLX(2), MOV64_IMM(0, 2),
	  EXIT() }, .result = 0 },
	{ "local call with own stack", {
	  MOV64_IMM(6, 7), ST(BPF_DW, 10, -8, 1000), MOV64_IMM(1, 5), CALL_LOCAL(4),
	  ALU64_REG(BPF_ADD, 0, 6), LDX(BPF_DW, 1, 10, -8), ALU64_REG(BPF_ADD, 0, 1), EXIT(),
	  /* f(r1): */ MOV64_IMM(6, 1), STX(BPF_DW, 10, 1, -8), LDX(BPF_DW, 0, 10, -8),
	  ALU64_IMM(BPF_MUL, 0, 2), ALU64_REG(BPF_ADD, 0, 6), EXIT() },
	  .result = 11 + 7 + 1000 },
	{ "nested calls and stop from depth", {
	  MOV64_IMM(6, 1), CALL_LOCAL(2), MOV64_IMM(0, 99), EXIT(),
	  /* f: */ MOV64_IMM(7, 2), CALL_LOCAL(1), EXIT(),
	  /* g: */ MOV64_IMM(1, 0), CALL(5), MOV64_IMM(0, 5), EXIT() }, .result = 0 },
	{ "nested calls return", {
	  MOV64_IMM(6, 1), CALL_LOCAL(2), ALU64_REG(BPF_ADD, 0, 6), EXIT(),
	  /* f: */ MOV64_IMM(6, 10), CALL_LOCAL(2), ALU64_REG(BPF_ADD, 0, 6), EXIT(),
	  /* g: */ MOV64_IMM(6, 100), MOV64_REG(0, 6), EXIT() }, .result = 111 },
	{ "ld_abs", { LD_ABS(BPF_B, 0), MOV64_REG(6, 0), LD_ABS(BPF_H, 1), ALU64_IMM(BPF_LSH, 6, 16),
	  ALU64_REG(BPF_OR, 6, 0), LD_ABS(BPF_W, 4), ALU64_IMM(BPF_LSH, 6, 32),
	  ALU64_REG(BPF_OR, 0, 6), EXIT() }, .mem = { 0x11, 0x22, 0x33, 0, 0xa1, 0xb2, 0xc3, 0xd4 },
	  .mem_len = 8, .result = 0x00112233a1b2c3d4ull },
	{ "ld_ind", { MOV64_IMM(7, 2), LD_IND(BPF_H, 7, 1), EXIT() },
	  .mem = { 1, 2, 3, 4, 5 }, .mem_len = 5, .result = 0x0405 },
	{ "ld_abs out of bounds ends with 0", { MOV64_IMM(0, 7), LD_ABS(BPF_W, 2), MOV64_IMM(0, 1),
	  EXIT() }, .mem_len = 5, .result = 0 },
	{ "ld_ind negative offset ends with 0", { MOV64_IMM(7, -4), LD_IND(BPF_B, 7, 2),
	  MOV64_IMM(0, 1), EXIT() }, .mem_len = 5, .result = 0 },
	/* the packet lives in rsi/rdx (pkt_regs): div and variable shifts use rdx/rcx */
	{ "ld_abs after div and mod", { MOV64_IMM(7, 100), MOV64_IMM(8, 6),
	  ALU64_REG(BPF_DIV, 7, 8), ALU64_REG(BPF_MOD, 7, 8), MOV64_IMM(9, 0),
	  ALU64_REG(BPF_MOD, 7, 9), ALU32_REG(BPF_DIV, 8, 9), LD_ABS(BPF_B, 4),
	  ALU64_REG(BPF_ADD, 0, 7), ALU64_REG(BPF_ADD, 0, 8), EXIT() },
	  .mem = { 1, 2, 3, 4, 0x50 }, .mem_len = 5, .result = 0x54 },
	{ "ld_ind after variable shifts", { MOV64_IMM(7, 1), MOV64_IMM(8, 2),
	  ALU64_REG(BPF_LSH, 7, 8), LD_IND(BPF_B, 7, 0), ALU64_REG(BPF_RSH, 0, 8),
	  MOV64_REG(6, 0), LD_ABS(BPF_B, 4), ALU64_REG(BPF_ADD, 0, 6), EXIT() },
	  .mem = { 1, 2, 3, 4, 0x50 }, .mem_len = 5, .result = 0x64 },
	{ "ld_abs with a stack frame", { ST(BPF_W, 10, -4, 0x10), LD_ABS(BPF_B, 1),
	  LDX(BPF_W, 7, 10, -4), ALU64_REG(BPF_ADD, 0, 7), EXIT() },
	  .mem = { 1, 2 }, .mem_len = 2, .result = 0x12 },
	{ "ld_abs out of bounds with a stack frame", { ST(BPF_DW, 10, -8, 5), LD_ABS(BPF_W, 3),
	  LDX(BPF_DW, 0, 10, -8), EXIT() }, .mem_len = 5, .result = 0 },
	{ "ld_abs from SKF_NET_OFF and SKF_LL_OFF", { LD_ABS(BPF_B, SKF_NET_OFF + 1),
	  MOV64_REG(6, 0), LD_ABS(BPF_B, SKF_LL_OFF + 2), ALU64_IMM(BPF_LSH, 6, 8),
	  ALU64_REG(BPF_OR, 0, 6), EXIT() }, .mem = { 1, 2, 3 }, .mem_len = 3, .result = 0x0203 },
	{ "ld_ind from SKF_NET_OFF", { MOV64_IMM(7, SKF_NET_OFF), LD_IND(BPF_H, 7, 1), EXIT() },
	  .mem = { 1, 2, 3 }, .mem_len = 3, .result = 0x0203 },
	{ "ld_ind from SKF_LL_OFF", { MOV64_IMM(7, SKF_LL_OFF), LD_IND(BPF_W, 7, 0), EXIT() },
	  .mem = { 1, 2, 3, 4 }, .mem_len = 4, .result = 0x01020304 },
	{ "ld_abs below SKF_LL_OFF ends with 0", { MOV64_IMM(0, 9), LD_ABS(BPF_B, SKF_LL_OFF - 1),
	  EXIT() }, .mem_len = 4, .result = 0 },
	{ "ld_abs at offset 2^31 - 2 ends with 0", { MOV64_IMM(0, 9), LD_ABS(BPF_W, 0x7ffffffe),
	  EXIT() }, .mem_len = 4, .result = 0 },
	{ "ld_ind past the end by one ends with 0", { MOV64_IMM(7, 2), MOV64_IMM(0, 9),
	  LD_IND(BPF_H, 7, 1), EXIT() }, .mem_len = 4, .result = 0 },
	{ "unknown helper", { CALL(77), EXIT() }, .errstr = "insn 0: call to unknown helper 77" },
	{ "recursion", { CALL_LOCAL(1), EXIT(), CALL_LOCAL(-1), EXIT() },
	  .errstr = "insn 2: recursive call" },
	{ "jump between functions", { CALL_LOCAL(1), EXIT(), JA(-2), EXIT() },
	  .errstr = "insn 2: jump out of its function" },
	{ "falls off the end", { MOV64_IMM(0, 1) }, .errstr = "last insn is not an exit or jmp" },
};

static size_t prog_len(const struct bpf_insn *insns)
{
	size_t n = MAX_INSNS;

	while (n && !memcmp(&insns[n - 1], &(struct bpf_insn){ 0 }, sizeof(struct bpf_insn)))
		n--;
	return n;
}

static bool has_pkt_load(const struct bpf_insn *insns, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (BPF_CLASS(insns[i].code) == BPF_LD &&
		    (BPF_MODE(insns[i].code) == BPF_ABS || BPF_MODE(insns[i].code) == BPF_IND))
			return true;
	return false;
}

/* A program with packet loads once more, with "r5 = 0" in front: naming r5 keeps the
 * packet out of registers (the run ctx path), which must give the same r0. */
static void run_with_r5(const struct jit_case *c, const struct bpf_insn *insns, size_t n,
			const struct brt_jit_env *e, uint64_t expect)
{
	struct bpf_insn prog[MAX_INSNS + 1] = { MOV64_IMM(5, 0) };
	uint8_t mem[32];
	struct test_ctx ctx = { .pkt = mem, .pkt_len = c->mem_len };
	struct brt_jit_prog *p;
	char err[256] = "";

	memcpy(prog + 1, insns, n * sizeof(*insns));
	memcpy(mem, c->mem, sizeof(mem));
	if (brt_jit_compile(prog, n + 1, e, &p, err, sizeof(err))) {
		T_FAIL("compile with r5 failed: %s", err);
		return;
	}
	T_ASSERT(brt_jit_pkt_entry(p) == NULL && brt_jit_batch_entry(p) == NULL);
	T_EQ_U64(expect, brt_jit_call(p, (uint64_t)(uintptr_t)mem, c->mem_len,
				      (struct bpfrt_run_ctx *)(void *)&ctx));
	brt_jit_free(p);
}

static void run_case(const struct jit_case *c, uint32_t flags)
{
	struct brt_jit_env e = env;
	const struct bpf_insn *insns = c->insns;
	uint8_t mem[32];
	struct test_ctx ctx = { .pkt = mem, .pkt_len = c->mem_len };
	struct brt_jit_prog *p;
	char err[256] = "";
	size_t n = prog_len(c->insns);
	uint64_t r0, expect = c->result;
	int rc;

	T_CASE(c->name);
	memcpy(mem, c->mem, sizeof(mem));
	e.flags = flags;
	rc = brt_jit_compile(insns, n, &e, &p, err, sizeof(err));
	if (c->errstr) {
		T_EQ_INT(-EINVAL, rc);
		T_CONTAINS(c->errstr, err);
		if (!rc)
			brt_jit_free(p);
		return;
	}
	if (rc) {
		T_FAIL("compile failed: %d %s", rc, err);
		return;
	}
	r0 = brt_jit_call(p, (uint64_t)(uintptr_t)mem, c->mem_len, (struct bpfrt_run_ctx *)(void *)&ctx);
	if (!strcmp(c->name, "args r1 r2"))
		expect = c->mem_len - (uint64_t)(uintptr_t)mem;
	T_EQ_U64(expect, r0);
	if (r0 != expect)
		brt_jit_dump(p, insns, stderr, BRT_JIT_DUMP_OPCODES);
	if (brt_jit_pkt_entry(p)) /* the packet in registers: the same r0 entered directly */
		T_EQ_U64(expect, brt_jit_pkt_entry(p)((uint64_t)(uintptr_t)mem, mem, c->mem_len));
	brt_jit_free(p);
	if (has_pkt_load(insns, n))
		run_with_r5(c, insns, n, &e, expect);
}

/* The pass loop must shorten jumps that fit: a tiny loop is all rel8. */
static void test_short_jumps(void)
{
	const struct bpf_insn prog[] = { MOV64_IMM(0, 0), MOV64_IMM(1, 10), ALU64_REG(BPF_ADD, 0, 1),
					 ALU64_IMM(BPF_SUB, 1, 1), JMP_IMM(BPF_JNE, 1, 0, -3), EXIT() };
	struct brt_jit_prog *p;
	const uint32_t *off;
	const uint8_t *code;
	size_t size;
	char err[128];

	T_CASE("short jumps");
	T_EQ_INT(0, brt_jit_compile(prog, 6, &env, &p, err, sizeof(err)));
	code = brt_jit_code(p, &size, &off);
	/* test r1(rdi), rdi; jne rel8 */
	T_EQ_INT(5, off[5] - off[4]);
	T_EQ_INT(0x75, code[off[4] + 3]);
	brt_jit_free(p);
}

/* A loop whose body is too long for rel8 in both directions. */
static void test_long_jumps(void)
{
	enum { N = 50 };
	struct bpf_insn prog[N + 7];
	struct brt_jit_prog *p;
	char err[128];
	size_t k = 0;

	T_CASE("long jumps");
	prog[k++] = (struct bpf_insn)MOV64_IMM(0, 0);
	prog[k++] = (struct bpf_insn)MOV64_IMM(1, 3);
	prog[k++] = (struct bpf_insn)JMP_IMM(BPF_JEQ, 1, 0, N + 3);
	for (int i = 0; i < N; i++)
		prog[k++] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 9, 0x12345);
	prog[k++] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 0, 1);
	prog[k++] = (struct bpf_insn)ALU64_IMM(BPF_SUB, 1, 1);
	prog[k++] = (struct bpf_insn)JA(-(N + 4));
	prog[k++] = (struct bpf_insn)EXIT();
	T_EQ_INT(0, brt_jit_compile(prog, k, &env, &p, err, sizeof(err)));
	if (!p)
		return;
	T_EQ_U64(3, brt_jit_call(p, 0, 0, NULL));
	brt_jit_free(p);
}

/* With blinding, no immediate of the program appears in the code. */
static void test_blinding(void)
{
	const struct bpf_insn prog[] = { MOV64_IMM(0, 0x1badc0de), ALU64_IMM(BPF_ADD, 0, 0x5eedf00d),
					 LD_IMM64(1, 0xfeedfacecafebeefull), ALU64_REG(BPF_XOR, 0, 1),
					 JMP_IMM(BPF_JEQ, 0, 0x0ddba11, 0), EXIT() };
	static const uint32_t imms[] = { 0x1badc0de, 0x5eedf00d, 0xcafebeef, 0xfeedface,
					 0x0ddba11 };
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	size_t size;
	char err[128];

	for (int blind = 0; blind <= 1; blind++) {
		size_t found = 0;

		T_CASE(blind ? "blinded code hides immediates" : "plain code has immediates");
		e.flags = blind ? BRT_JIT_BLIND : 0;
		T_EQ_INT(0, brt_jit_compile(prog, 7, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		for (size_t i = 0; i < sizeof(imms) / sizeof(imms[0]); i++)
			for (size_t k = 0; k + 4 <= size; k++)
				found += !memcmp(code + k, &imms[i], 4);
		T_EQ_U64((0x1badc0de + 0x5eedf00dull) ^ 0xfeedfacecafebeefull,
			 brt_jit_call(p, 0, 0, NULL));
		if (blind)
			T_EQ_INT(0, found);
		else
			T_ASSERT(found >= 4); /* the jeq to the next insn emits nothing */
		brt_jit_free(p);
	}
}

/* Whether code holds "rol reg, imm8" of width 64 (REX.W C1 /0) or 32 (C1 /0). */
static bool has_rol(const uint8_t *code, size_t size, bool w64, uint8_t count)
{
	for (size_t k = 1; k + 2 < size; k++)
		if (code[k] == 0xc1 && (code[k + 1] & 0xf8) == 0xc0 && code[k + 2] == count &&
		    ((code[k - 1] & 0xf8) == 0x48) == w64)
			return true;
	return false;
}

/* The passes (passes.def): clang's rotate idioms become one rol (the multiply form only
 * with the multipliers' relation proved, the temporaries dead); blinding keeps the shifts
 * (the count would appear verbatim); with passes_off the code is the plain translation;
 * every variant computes the same r0. */
static void test_passes(void)
{
	/* r0 = rol64(r1, 13) via shifts, + rol32(r1, 7), + rol64(r1 * K, 23) via two muls */
	const uint64_t k = 0xd6e8feb86659fd93ull;
	const struct bpf_insn prog[] = {
		MOV64_REG(2, 1), ALU64_IMM(BPF_LSH, 2, 13), MOV64_REG(0, 1),
		ALU64_IMM(BPF_RSH, 0, 51), ALU64_REG(BPF_OR, 0, 2),
		MOV64_REG(3, 1), ALU32_IMM(BPF_LSH, 3, 7), MOV64_REG(4, 1),
		ALU32_IMM(BPF_RSH, 4, 25), ALU32_REG(BPF_OR, 4, 3), ALU64_REG(BPF_ADD, 0, 4),
		LD_IMM64(6, k << 23), LD_IMM64(7, k),
		MOV64_REG(3, 1), ALU64_REG(BPF_MUL, 3, 6), MOV64_REG(4, 1),
		ALU64_REG(BPF_MUL, 4, 7), ALU64_IMM(BPF_RSH, 4, 41), ALU64_REG(BPF_OR, 4, 3),
		ALU64_REG(BPF_ADD, 0, 4),
		/* a temporary read afterwards: stays shifts */
		MOV64_REG(3, 1), ALU64_IMM(BPF_LSH, 3, 9), MOV64_REG(4, 1), ALU64_IMM(BPF_RSH, 4, 55),
		ALU64_REG(BPF_OR, 4, 3), ALU64_REG(BPF_XOR, 0, 4), ALU64_REG(BPF_XOR, 0, 3), EXIT() };
	size_t n = sizeof(prog) / sizeof(prog[0]);
	uint64_t x = 0x0123456789abcdefull, x32 = (uint32_t)x;
	uint64_t want = ((x << 13) | (x >> 51)) + (uint32_t)((x32 << 7) | (x32 >> 25)) +
			((x * k << 23) | (x * k >> 41));
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	size_t size;
	char err[128];

	want ^= ((x << 9) | (x >> 55)) ^ (x << 9);
	for (int v = 0; v < 3; v++) {
		T_CASE(v == 0 ? "rotate pass: rol" : v == 1 ? "rotate pass off" : "rotate pass, blinded");
		e.passes_off = v == 1 ? BRT_JIT_PASS(rotate) : 0;
		e.flags = v == 2 ? BRT_JIT_BLIND : 0;
		T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_U64(want, brt_jit_call(p, x, 0, NULL));
		T_EQ_INT(v == 0, has_rol(code, size, true, 13));
		T_EQ_INT(v == 0, has_rol(code, size, false, 7));
		T_EQ_INT(v == 0, has_rol(code, size, true, 23));
		T_EQ_INT(0, has_rol(code, size, true, 9)); /* r3 is read after the or */
		brt_jit_free(p);
	}
	T_CASE("BRT_JIT_CHECK: compiles, maps nothing");
	e.passes_off = 0;
	e.flags = BRT_JIT_CHECK;
	p = (struct brt_jit_prog *)1;
	T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
	T_ASSERT(p == NULL);
	T_CASE("BPFRT_JIT_PASSES");
	T_EQ_INT(BRT_JIT_PASSES_ALL, brt_jit_passes_parse(NULL));
	T_EQ_INT(BRT_JIT_PASSES_ALL & ~BRT_JIT_PASS(rotate), brt_jit_passes_parse("-rotate"));
	T_EQ_INT(BRT_JIT_PASS(rotate), brt_jit_passes_parse("rotate"));
	T_EQ_INT(0, brt_jit_passes_parse("none"));
	T_EQ_INT(BRT_JIT_PASS(zext), brt_jit_passes_parse("none,zext"));
}

static size_t count_bytes(const uint8_t *code, size_t size, const uint8_t *pat, size_t n)
{
	size_t found = 0;

	for (size_t k = 0; k + n <= size; k++)
		found += !memcmp(code + k, pat, n);
	return found;
}

/* constfill: a store of the constant a slot already holds, and a move of the constant a
 * register holds, emit nothing; a store through a copy of r10 makes the slot unknown, a
 * jump from where the slot differs too.  lea: r3 = r1; r3 += 7 is one lea (not blinded:
 * its constant would show).  Every variant returns the same r0. */
static void test_constfill_lea(void)
{
	const struct bpf_insn prog[] = {
		MOV64_IMM(0, 0), MOV32_IMM(4, 0), STX(BPF_W, 10, 4, -8), MOV32_IMM(4, 0),
		STX(BPF_W, 10, 4, -8),           /* both redundant */
		MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), ST(BPF_W, 2, 0, 5),
		MOV32_IMM(4, 0), STX(BPF_W, 10, 4, -8), /* the move only: the slot holds 5 */
		JMP_IMM(BPF_JEQ, 1, 3, 1),       /* r1 == 3: the slot keeps 0 */
		ST(BPF_W, 10, -8, 9),
		STX(BPF_W, 10, 4, -8),           /* 9 or 0 there: kept */
		LDX(BPF_W, 0, 10, -8),
		MOV64_REG(3, 1), ALU64_IMM(BPF_ADD, 3, 7), ALU64_REG(BPF_ADD, 0, 3), EXIT() };
	/* mov dword [rbp - 8], ecx (r4) and lea rdx, [rdi + 7] (r3 = r1 + 7) */
	static const uint8_t st_r4[] = { 0x89, 0x4d, 0xf8 }, lea[] = { 0x48, 0x8d, 0x57, 0x07 };
	size_t n = sizeof(prog) / sizeof(prog[0]);
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	size_t size;
	char err[128];

	for (int v = 0; v < 4; v++) {
		T_CASE(v == 0 ? "constfill, lea" : v == 1 ? "constfill off" : v == 2 ? "lea off"
										   : "blinded");
		e.passes_off = v == 1 ? BRT_JIT_PASS(constfill) : v == 2 ? BRT_JIT_PASS(lea) : 0;
		e.flags = v == 3 ? BRT_JIT_BLIND : 0;
		T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_U64(40 + 7, brt_jit_call(p, 40, 0, NULL));
		T_EQ_U64(3 + 7, brt_jit_call(p, 3, 0, NULL));
		T_EQ_INT(v == 1 ? 4 : 3, count_bytes(code, size, st_r4, sizeof(st_r4)));
		T_EQ_INT(v == 0 || v == 1, count_bytes(code, size, lea, sizeof(lea)));
		brt_jit_free(p);
	}
}

/* redzone: a program that calls nothing and keeps its stack within 128 bytes below r10
 * runs without a frame (no push rbp, r10 is rsp); 8 bytes further down, or with the pass
 * off, it has one; the same r0 every way, the slots written and read back. */
static void test_redzone(void)
{
	struct bpf_insn prog[] = {
		STX(BPF_DW, 10, 1, -8), ST(BPF_W, 10, -128, 77), STX(BPF_B, 10, 1, -100),
		LDX(BPF_DW, 0, 10, -8), LDX(BPF_W, 2, 10, -128), ALU64_REG(BPF_ADD, 0, 2),
		LDX(BPF_B, 2, 10, -100), ALU64_REG(BPF_ADD, 0, 2), EXIT() };
	size_t n = sizeof(prog) / sizeof(prog[0]);
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	size_t size;
	char err[128];

	for (int v = 0; v < 4; v++) {
		T_CASE(v == 0 ? "redzone" : v == 1 ? "redzone off" : v == 2 ? "redzone, 136 bytes"
									   : "redzone, blinded");
		e.passes_off = v == 1 ? BRT_JIT_PASS(redzone) : 0;
		e.flags = v == 3 ? BRT_JIT_BLIND : 0;
		prog[1].off = prog[4].off = v == 2 ? -136 : -128;
		T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_U64(0x1234 + 77 + 0x34, brt_jit_call(p, 0x1234, 0, NULL));
		T_EQ_INT(v == 0 || v == 3, code[0] != 0x55); /* push rbp */
		brt_jit_free(p);
	}
}

/* jumpfold: `if c goto +1; goto T` is one inverted jcc to T (the ja emits nothing), not
 * when a jump lands on the ja; align: a target after an exit starts 8-byte aligned
 * whatever comes before it (nops the path never runs), not with the pass off; the same r0
 * every way, blinded too. */
static void test_layout(void)
{
	for (int v = 0; v < 5; v++) {
		int misaligned = 0;

		T_CASE(v == 0 ? "layout" : v == 1 ? "layout, jumpfold off" : v == 2 ? "layout, ja a target"
			   : v == 3 ? "layout, align off" : "layout, blinded");
		for (unsigned k = 0; k < 8; k++) {
			struct bpf_insn prog[16];
			size_t n = 0, j;
			struct brt_jit_env e = env;
			struct brt_jit_prog *p;
			const uint32_t *off;
			size_t size;
			char err[128];

			for (unsigned i = 0; i < k; i++) /* 3 bytes each: every residue mod 8 */
				prog[n++] = (struct bpf_insn)MOV64_REG(2, 1);
			j = n;
			prog[n++] = v == 2 ? (struct bpf_insn)JMP_IMM(BPF_JEQ, 1, 7, 1)
					   : (struct bpf_insn)MOV64_IMM(0, 1);
			prog[n++] = (struct bpf_insn)JMP_IMM(BPF_JGT, 1, 5, 1);
			prog[n++] = (struct bpf_insn)JA(2);
			prog[n++] = (struct bpf_insn)MOV64_IMM(0, 2);
			prog[n++] = (struct bpf_insn)EXIT();
			prog[n++] = (struct bpf_insn)MOV64_IMM(0, 3);
			prog[n++] = (struct bpf_insn)EXIT();
			e.passes_off = v == 1 ? BRT_JIT_PASS(jumpfold) : v == 3 ? BRT_JIT_PASS(align) : 0;
			e.flags = v == 4 ? BRT_JIT_BLIND : 0;
			T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
			if (!p)
				return;
			brt_jit_code(p, &size, &off);
			T_EQ_U64(2, brt_jit_call(p, 10, 0, NULL));
			T_EQ_U64(3, brt_jit_call(p, 1, 0, NULL));
			T_EQ_U64(v == 2 ? 3 : 2, brt_jit_call(p, 7, 0, NULL));
			/* the ja emits nothing when folded */
			T_EQ_INT(v == 0 || v == 3 || v == 4, off[j + 2] == off[j + 3]);
			misaligned += off[j + 5] % 8 != 0;
			brt_jit_free(p);
		}
		T_EQ_INT(v == 3, misaligned > 0);
	}
}

/* eqset: `if x == 6 goto L; if x == 132 goto L; r4 = 0; if x != 17 goto M; L: r4 = 5`
 * (xdp_flow's ports test) is one predictable path when two registers are dead at L and at
 * M (r1 and r5 here), the move done first: with two constants or more below 64 a bit test
 * (cmp/je for 132, cmp 64/sbb mask/and, bt: 32- and 64-bit, and with 6 and 2^30 + 6); with one, the
 * product of x - K by lea/imul (32-bit, 70, 132, 17), or sete and or (64-bit, or constants
 * whose differences share a power of two too high for the product: 70 and 2^30 + 70); not
 * with r1 read at M, nor with the pass off or blinded; the same r0 for every x around the
 * constants, x's upper half set for the 32-bit chains. */
static bool has_bytes(const uint8_t *code, size_t size, uint8_t a, uint8_t b)
{
	for (size_t i = 0; i + 1 < size; i++)
		if (code[i] == a && code[i + 1] == b)
			return true;
	return false;
}

static void test_eqset(void)
{
	static const char *const names[] = { "eqset", "eqset off", "eqset, r1 read at M",
					     "eqset, blinded", "eqset, 64-bit", "eqset, 2^30 apart",
					     "eqset, one below 64", "eqset, one below 64, 2^30 apart",
					     "eqset, one below 64, 64-bit" };

	for (int v = 0; v < 9; v++) {
		struct bpf_insn prog[] = {
			MOV64_IMM(4, 9), MOV64_IMM(0, 100), MOV64_IMM(3, 1), MOV64_IMM(6, 2),
			MOV64_IMM(7, 3), MOV64_IMM(8, 4), MOV64_IMM(9, 5),
			JMP32_IMM(BPF_JEQ, 2, 6, 3), JMP32_IMM(BPF_JEQ, 2, 132, 2), MOV64_IMM(4, 0),
			JMP32_IMM(BPF_JNE, 2, 17, 3),
			MOV64_IMM(4, 5), MOV64_IMM(1, 0), MOV64_IMM(5, 0), /* L */
			ALU64_REG(BPF_ADD, 0, 4), ALU64_REG(BPF_ADD, 0, 3), /* M */
			ALU64_REG(BPF_ADD, 0, 6), ALU64_REG(BPF_ADD, 0, 7), ALU64_REG(BPF_ADD, 0, 8),
			ALU64_REG(BPF_ADD, 0, 9), MOV64_IMM(1, 0), MOV64_IMM(5, 0),
			ALU64_REG(BPF_ADD, 0, 1), ALU64_REG(BPF_ADD, 0, 5), EXIT() };
		size_t n = sizeof(prog) / sizeof(prog[0]), size;
		struct brt_jit_env e = env;
		struct brt_jit_prog *p;
		const uint8_t *code;
		char err[128];
		bool wide = v == 4 || v == 8;
		int32_t k1 = v >= 6 ? 70 : 6;
		int32_t k2 = v == 5 || v == 7 ? k1 + (1 << 30) : 132;

		T_CASE(names[v]);
		e.passes_off = v == 1 ? BRT_JIT_PASS(eqset) : 0;
		e.flags = v == 3 ? BRT_JIT_BLIND : 0;
		if (v == 2) /* M's r1 = 0 becomes r1 += 0: r1 (the input) is read there */
			prog[20] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 1, 0);
		if (wide)
			for (int i = 7; i <= 10; i++)
				if (i != 9)
					prog[i].code = (uint8_t)(BPF_JMP | BPF_OP(prog[i].code) | BPF_K);
		prog[7].imm = k1;
		prog[8].imm = k2;
		T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_INT(v == 0 || v == 4 || v == 5, has_bytes(code, size, 0x0f, 0xa3)); /* bt */
		T_EQ_INT(v == 6, has_bytes(code, size, 0x0f, 0xaf));                      /* imul */
		T_EQ_INT(v >= 7, has_bytes(code, size, 0x0f, 0x94));                      /* sete */
		for (uint64_t x = 0; x < 140; x++) {
			/* r2 = x with its upper half set (32-bit compares ignore it), r1 = 1000 */
			uint64_t r2 = wide ? x : x | 7ull << 32;
			bool in = x == (uint64_t)k1 || x == (uint64_t)k2 || x == 17;
			uint64_t want = in ? 120 : v == 2 ? 1115 : 115;

			T_EQ_U64(want, brt_jit_call(p, 1000, r2, NULL));
			/* 64-bit: x + 2^32 is none of the constants, whose low bits x has */
			if (wide)
				T_EQ_U64(115, brt_jit_call(p, 1000, x | 1ull << 32, NULL));
		}
		brt_jit_free(p);
	}
	/* a pair (`if x == 0x81 goto L; if x != 0xa888 goto M; L:`, xdp_flow's VLAN test) stays
	 * two compares: no imul, no sete; the same r0 for every x */
	{
		struct bpf_insn prog[] = {
			MOV64_IMM(4, 9), MOV64_IMM(0, 100), JMP32_IMM(BPF_JEQ, 2, 0x81, 1),
			JMP32_IMM(BPF_JNE, 2, 0xa888, 3),
			MOV64_IMM(4, 5), MOV64_IMM(1, 0), MOV64_IMM(5, 0), /* L */
			ALU64_REG(BPF_ADD, 0, 4), MOV64_IMM(1, 0), MOV64_IMM(5, 0), /* M */
			ALU64_REG(BPF_ADD, 0, 1), ALU64_REG(BPF_ADD, 0, 5), EXIT() };
		size_t size;
		struct brt_jit_prog *p;
		const uint8_t *code;
		char err[128];

		T_CASE("eqset, a pair");
		T_EQ_INT(0, brt_jit_compile(prog, sizeof(prog) / sizeof(prog[0]), &env, &p, err,
					    sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_INT(0, has_bytes(code, size, 0x0f, 0xaf)); /* imul */
		T_EQ_INT(0, has_bytes(code, size, 0x0f, 0x94)); /* sete */
		for (uint64_t x = 0x70; x < 0xa890; x += x < 0x90 ? 1 : x < 0xa880 ? 0x1000 : 1) {
			uint64_t r2 = x | 7ull << 32;

			T_EQ_U64(x == 0x81 || x == 0xa888 ? 105 : 109,
				 brt_jit_call(p, 1000, r2, NULL));
		}
		brt_jit_free(p);
	}
}

/* bittest: `r5 = 1; r5 <<= r2; r1 = K; r5 &= r1; w3 = w2; if r5 != 0 goto +1` (xdp_flow's
 * test of the next IPv6 header against hop-by-hop/routing/fragment/destination) is bt
 * and a jump on the carry when r5 is written before it is read on both sides: also for
 * == 0 and with jumpfold's `goto` after it; not with r5 read after, the pass off or
 * blinded.  The same r0 for every bit number, the upper bits of r2 set too (bt and the
 * shift both take it mod 64). */
static void test_bittest(void)
{
	static const uint64_t k = 0x1000180000000001ull;

	for (int v = 0; v < 6; v++) {
		struct bpf_insn prog[] = {
			MOV64_IMM(0, 10), MOV64_IMM(5, 1), ALU64_REG(BPF_LSH, 5, 2), LD_IMM64(1, k),
			ALU64_REG(BPF_AND, 5, 1), ALU32_REG(BPF_MOV, 3, 2), JMP_IMM(BPF_JNE, 5, 0, 1),
			MOV64_IMM(0, 20), MOV64_IMM(5, 0), ALU64_REG(BPF_ADD, 0, 3),
			ALU64_REG(BPF_ADD, 0, 5), EXIT() };
		/* v 5: if r5 != 0 goto +1; goto +1; r0 = 20; (r0 = 10 when the bit is clear) */
		struct bpf_insn folded[] = {
			MOV64_IMM(0, 20), MOV64_IMM(5, 1), ALU64_REG(BPF_LSH, 5, 2), LD_IMM64(1, k),
			ALU64_REG(BPF_AND, 5, 1), ALU32_REG(BPF_MOV, 3, 2), JMP_IMM(BPF_JNE, 5, 0, 1), JA(1),
			MOV64_IMM(0, 10), MOV64_IMM(5, 0), ALU64_REG(BPF_ADD, 0, 3),
			ALU64_REG(BPF_ADD, 0, 5), EXIT() };
		size_t n = v == 5 ? sizeof(folded) / sizeof(folded[0]) : sizeof(prog) / sizeof(prog[0]);
		size_t size;
		struct brt_jit_env e = env;
		struct brt_jit_prog *p;
		const uint8_t *code;
		char err[128];

		T_CASE(v == 0 ? "bittest" : v == 1 ? "bittest off" : v == 2 ? "bittest, r5 read after"
			   : v == 3 ? "bittest, blinded" : v == 4 ? "bittest, == 0" : "bittest, jumpfold");
		e.passes_off = v == 1 ? BRT_JIT_PASS(bittest) : 0;
		e.flags = v == 3 ? BRT_JIT_BLIND : 0;
		if (v == 2) /* r5 = 0 becomes r5 += 0: the product is read */
			prog[9] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 5, 0);
		if (v == 4) /* == 0: the bit clear jumps (r0 stays 10), set falls to 20 */
			prog[7].code = (uint8_t)(BPF_JMP | BPF_JEQ | BPF_K);
		T_EQ_INT(0, brt_jit_compile(v == 5 ? folded : prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_INT(v == 0 || v >= 4, has_bytes(code, size, 0x0f, 0xa3)); /* bt */
		for (uint64_t x = 0; x < 140; x++) {
			uint64_t r2 = x < 70 ? x : x | (x << 40), bit = k >> (r2 & 63) & 1;
			uint64_t want = (uint32_t)r2 + (v == 2 ? (bit << (r2 & 63)) : 0);

			want += v == 4 ? (bit ? 20 : 10) : (bit ? 10 : 20);
			T_EQ_U64(want, brt_jit_call(p, 0, r2, NULL));
		}
		brt_jit_free(p);
	}
}

/* knownbits: `w3 &= 0xff` after a byte load into r3, `r4 &= 0x1f` after r4 = r3 >> 4, and
 * `w3 = w3` emit nothing; `r4 &= 0x7f` where a path brings r4 = r1 (all 64 bits) stays;
 * with the pass off all three ands are there.  Blinded too; the same r0 either way. */
static void test_knownbits(void)
{
	const struct bpf_insn prog[] = {
		STX(BPF_DW, 10, 1, -8), LDX(BPF_B, 3, 10, -8), ALU32_IMM(BPF_AND, 3, 0xff),
		MOV64_REG(4, 3), ALU64_IMM(BPF_RSH, 4, 4), ALU64_IMM(BPF_AND, 4, 0x1f),
		JMP_IMM(BPF_JEQ, 2, 5, 1), MOV64_REG(4, 1), ALU64_IMM(BPF_AND, 4, 0x7f),
		ALU32_REG(BPF_MOV, 3, 3), MOV64_REG(0, 3), ALU64_REG(BPF_ADD, 0, 4), EXIT() };
	/* and edx, 0xff; and rcx, 0x1f; and rcx, 0x7f */
	static const uint8_t and_ff[] = { 0x81, 0xe2, 0xff, 0x00, 0x00, 0x00 },
			     and_1f[] = { 0x48, 0x83, 0xe1, 0x1f }, and_7f[] = { 0x48, 0x83, 0xe1, 0x7f };
	size_t n = sizeof(prog) / sizeof(prog[0]), size;
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	char err[128];

	for (int v = 0; v < 3; v++) {
		T_CASE(v == 0 ? "knownbits" : v == 1 ? "knownbits off" : "knownbits, blinded");
		e.passes_off = v == 1 ? BRT_JIT_PASS(knownbits) : 0;
		e.flags = v == 2 ? BRT_JIT_BLIND : 0;
		T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		if (v < 2) { /* blinding rebuilds the masks in a register */
			T_EQ_INT(v == 1, count_bytes(code, size, and_ff, sizeof(and_ff)));
			T_EQ_INT(v == 1, count_bytes(code, size, and_1f, sizeof(and_1f)));
			T_EQ_INT(1, count_bytes(code, size, and_7f, sizeof(and_7f)));
		}
		for (uint64_t x = 0; x < 600; x += 7) {
			uint64_t r1 = x * 0x9e3779b97f4a7c15ull;

			T_EQ_U64((r1 & 0xff) + ((r1 & 0xff) >> 4), brt_jit_call(p, r1, 5, NULL));
			T_EQ_U64((r1 & 0xff) + (r1 & 0x7f), brt_jit_call(p, r1, 6, NULL));
		}
		brt_jit_free(p);
	}
	/* a loop growing r0 a bit a round: r3 = r0 >> 40 may be non-zero only after 40
	 * sweeps of the dataflow, and until then `r3 &= 0` looks idle */
	{
		const struct bpf_insn loop[] = {
			MOV64_IMM(0, 1), MOV64_IMM(2, 45), MOV64_IMM(4, 0), ALU64_IMM(BPF_LSH, 0, 1),
			MOV64_REG(3, 0), ALU64_IMM(BPF_RSH, 3, 40), ALU64_IMM(BPF_AND, 3, 0),
			ALU64_REG(BPF_ADD, 4, 3), ALU64_IMM(BPF_SUB, 2, 1), JMP_IMM(BPF_JNE, 2, 0, -7),
			MOV64_REG(0, 4), EXIT() };

		T_CASE("knownbits, a mask settling late");
		e.passes_off = 0;
		e.flags = 0;
		T_EQ_INT(0, brt_jit_compile(loop, sizeof(loop) / sizeof(loop[0]), &e, &p, err,
					    sizeof(err)));
		if (!p)
			return;
		T_EQ_U64(0, brt_jit_call(p, 0, 0, NULL));
		brt_jit_free(p);
	}
}

/* Whether code starts with a push (rbx..rdi: 50+r; r8..r15: 41 50+r). */
static bool starts_with_push(const uint8_t *code)
{
	return (code[0] & 0xf8) == 0x50 || (code[0] == 0x41 && (code[1] & 0xf8) == 0x50);
}

/* leafregs: r6-r8 of a program that calls nothing live in r9-r11 (nothing pushed); a
 * division needs those registers (the prologue pushes again), as do blinding and the
 * pass off; the same r0 every way. */
static void test_leafregs(void)
{
	struct bpf_insn prog[] = {
		MOV64_REG(6, 1), MOV64_REG(7, 1), ALU64_IMM(BPF_ADD, 7, 1), MOV64_REG(8, 6),
		ALU64_IMM(BPF_MUL, 8, 3), ALU64_REG(BPF_XOR, 8, 7), MOV64_REG(0, 6),
		ALU64_REG(BPF_ADD, 0, 7), ALU64_REG(BPF_ADD, 0, 8), ALU64_IMM(BPF_ADD, 0, 0),
		EXIT() };
	size_t n = sizeof(prog) / sizeof(prog[0]);
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	size_t size;
	char err[128];

	for (int v = 0; v < 4; v++) {
		uint64_t x = 1000, want = x + (x + 1) + ((x * 3) ^ (x + 1));

		T_CASE(v == 0 ? "leafregs" : v == 1 ? "leafregs off" : v == 2 ? "leafregs, a division"
									    : "leafregs, blinded");
		e.passes_off = v == 1 ? BRT_JIT_PASS(leafregs) : 0;
		e.flags = v == 3 ? BRT_JIT_BLIND : 0;
		/* the last add becomes r0 /= 1 */
		prog[9] = v == 2 ? (struct bpf_insn)ALU64_IMM(BPF_DIV, 0, 1)
				 : (struct bpf_insn)ALU64_IMM(BPF_ADD, 0, 0);
		T_EQ_INT(0, brt_jit_compile(prog, n, &e, &p, err, sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		T_EQ_U64(want, brt_jit_call(p, x, 0, NULL));
		T_EQ_INT(v != 0, starts_with_push(code));
		brt_jit_free(p);
	}
}

/* The directcall pass: a helper call is a 7-byte nop and call rel32 whenever the code
 * was mapped within reach of the helper (map_code() asks for a place near it), the
 * movabs + call rax form otherwise; the same result either way, and after an early exit. */
static bool is_simm32_dist(uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(a - b);

	return d > INT32_MIN + (1 << 20) && d < INT32_MAX - (1 << 20);
}

static size_t count_direct(const uint8_t *code, size_t size, uint64_t target)
{
	static const uint8_t nop7_call[8] = { 0x0f, 0x1f, 0x80, 0, 0, 0, 0, 0xe8 };
	size_t found = 0;

	for (size_t i = 0; i + 12 <= size; i++) {
		int32_t rel;

		if (memcmp(code + i, nop7_call, 8))
			continue;
		memcpy(&rel, code + i + 8, 4);
		found += (uint64_t)(uintptr_t)(code + i + 12) + (uint64_t)(int64_t)rel == target;
	}
	return found;
}

static void test_direct_calls(void)
{
	const struct bpf_insn prog[] = {
		MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 0), MOV64_IMM(4, 0),
		MOV64_IMM(5, 0), CALL(1), MOV64_REG(6, 0),
		MOV64_IMM(1, 7), CALL(5), ALU64_REG(BPF_ADD, 0, 6), EXIT() };
	struct test_ctx c = { 0 };
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	const uint8_t *code;
	uint64_t sum = (uint64_t)(uintptr_t)helper_sum;
	char err[128];
	size_t size;

	for (int v = 0; v < 2; v++) {
		T_CASE(v == 0 ? "directcall pass: call rel32" : "directcall pass off");
		e.passes_off = v == 1 ? BRT_JIT_PASS(directcall) : 0;
		T_EQ_INT(0, brt_jit_compile(prog, sizeof(prog) / sizeof(prog[0]), &e, &p, err,
					    sizeof(err)));
		if (!p)
			return;
		code = brt_jit_code(p, &size, NULL);
		if (v == 0 && !is_simm32_dist((uint64_t)(uintptr_t)code, sum))
			printf("note: code at %p out of reach of the helper at %p: calls indirect\n",
			       (const void *)code, (void *)(uintptr_t)sum);
		else
			T_EQ_U64(v == 0 ? 1 : 0, count_direct(code, size, sum));
		T_EQ_U64(5 + 7, brt_jit_call(p, 0, 0, (struct bpfrt_run_ctx *)(void *)&c));
		brt_jit_free(p);
	}
}

/* W^X: the code's mapping is read+exec, never writable, also after map_code() patched
 * its calls into direct ones (done before the mapping became executable). */
static void test_wx(void)
{
	const struct bpf_insn prog[] = { MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 0),
					 MOV64_IMM(4, 0), MOV64_IMM(5, 0), CALL(1), EXIT() };
	struct brt_jit_prog *p;
	const uint8_t *code;
	char err[128], line[512];
	size_t size;
	FILE *maps;
	int found = 0;

	T_CASE("W^X: code mapped r-x");
	T_EQ_INT(0, brt_jit_compile(prog, sizeof(prog) / sizeof(prog[0]), &env, &p, err,
				    sizeof(err)));
	if (!p)
		return;
	code = brt_jit_code(p, &size, NULL);
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 ||
		    (uintptr_t)code < lo || (uintptr_t)code >= hi)
			continue;
		found = 1;
		T_EQ_STR("r-xp", perms);
	}
	if (maps)
		fclose(maps);
	T_ASSERT(found);
	T_EQ_U64(1 + 2 * 2, brt_jit_call(p, 0, 0, NULL));
	brt_jit_free(p);
}

/* The leafcall pass: a helper of the vm's leaf list (bpf_get_prandom_u32) is called
 * with no run ctx and no stop check, so a program calling only such helpers needs no ctx
 * at all; the same helper from a host table under another function is called fully. */
static bpfrt_helper_fn resolve_leaf(void *arg, uint32_t id)
{
	(void)arg;
	return id == BPF_FUNC_get_prandom_u32 ? brt_helper_get_prandom_u32
	       : id == 5			? helper_unwind
						: NULL;
}

static void test_leaf_calls(void)
{
	const struct bpf_insn leaf[] = { CALL(BPF_FUNC_get_prandom_u32), MOV64_REG(6, 0),
					 CALL(BPF_FUNC_get_prandom_u32), ALU64_REG(BPF_XOR, 0, 6),
					 ALU64_IMM(BPF_RSH, 0, 32), EXIT() };
	const struct bpf_insn mixed[] = { CALL(BPF_FUNC_get_prandom_u32), MOV64_IMM(1, 0),
					  CALL(5), MOV64_IMM(0, 9), EXIT() };
	struct test_ctx c = { 0 };
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	char err[128];

	e.helper = resolve_leaf;
	for (int v = 0; v < 2; v++) {
		T_CASE(v == 0 ? "leafcall pass: no run ctx" : "leafcall pass off");
		/* called, not inlined (pass inlinehelper: tests/jit/test_inline.c) */
		e.passes_off = BRT_JIT_PASS(inlinehelper) | (v == 1 ? BRT_JIT_PASS(leafcall) : 0);
		T_EQ_INT(0, brt_jit_compile(leaf, sizeof(leaf) / sizeof(leaf[0]), &e, &p, err,
					    sizeof(err)));
		if (!p)
			return;
		T_EQ_INT(v == 1, brt_jit_needs_ctx(p));
		/* two u32s xored: the high half is zero */
		T_EQ_U64(0, brt_jit_call(p, 0, 0, v == 0 ? NULL : (struct bpfrt_run_ctx *)(void *)&c));
		brt_jit_free(p);
		/* a leaf call next to a helper that stops the run: the stop still ends it */
		T_EQ_INT(0, brt_jit_compile(mixed, sizeof(mixed) / sizeof(mixed[0]), &e, &p, err,
					    sizeof(err)));
		if (!p)
			return;
		memset(&c, 0, sizeof(c));
		T_EQ_U64(0, brt_jit_call(p, 0, 0, (struct bpfrt_run_ctx *)(void *)&c));
		T_EQ_U64(1, c.stopped);
		brt_jit_free(p);
	}
}

/* A million instructions (the kernel's limit) compile, with jumps spanning the program;
 * the run checks the code really is there. */
static void test_huge(void)
{
	enum { N = 1000000 };
	struct bpf_insn *prog = calloc(N, sizeof(*prog));
	struct brt_jit_prog *p = NULL;
	char err[128];
	size_t k = 0;

	T_CASE("1M instructions");
	if (!prog)
		return;
	prog[k++] = (struct bpf_insn)MOV64_IMM(0, 0);
	prog[k++] = (struct bpf_insn)JMP_IMM(BPF_JNE, 1, 12345, 1);
	prog[k++] = (struct bpf_insn)JA32(N - 5); /* to the last add */
	while (k < N - 2)
		prog[k++] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 0, 1);
	prog[k++] = (struct bpf_insn)ALU64_IMM(BPF_ADD, 0, 1);
	prog[k++] = (struct bpf_insn)EXIT();
	T_EQ_INT(0, brt_jit_compile(prog, N, &env, &p, err, sizeof(err)));
	if (p) {
		T_EQ_U64(N - 4, brt_jit_call(p, 0, 0, NULL));
		T_EQ_U64(1, brt_jit_call(p, 12345, 0, NULL));
		brt_jit_free(p);
	}
	free(prog);
}

/* Which programs keep the packet in registers and get the direct entries: only those whose
 * one function calls nothing but packet loads and never names r2-r5. */
static void test_pkt_entries(void)
{
	static const struct {
		const char *name;
		struct bpf_insn insns[4];
		size_t n;
		bool direct;
	} progs[] = {
		{ "packet loads only", { LD_ABS(BPF_B, 0), EXIT() }, 2, true },
		{ "r1 and r6-r9 named", { MOV64_REG(6, 1), MOV64_REG(9, 6), LD_IND(BPF_B, 9, 0),
		  EXIT() }, 4, true },
		{ "r2 named", { MOV64_IMM(2, 0), LD_ABS(BPF_B, 0), EXIT() }, 3, false },
		{ "r4 as a source", { LD_ABS(BPF_B, 0), ALU64_REG(BPF_ADD, 0, 4), EXIT() }, 3,
		  false },
		{ "a helper call", { LD_ABS(BPF_B, 0), CALL(1), EXIT() }, 3, false },
		{ "no packet load", { MOV64_IMM(0, 1), EXIT() }, 2, false },
		{ "a bpf-to-bpf call", { LD_ABS(BPF_B, 0), CALL_LOCAL(1), EXIT(), EXIT() }, 4,
		  false },
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct brt_jit_prog *p;
		char err[128];

		T_CASE(progs[i].name);
		T_EQ_INT(0, brt_jit_compile(progs[i].insns, progs[i].n, &env, &p, err,
					    sizeof(err)));
		if (!p)
			continue;
		T_EQ_INT(progs[i].direct, brt_jit_pkt_entry(p) != NULL);
		T_EQ_INT(progs[i].direct, brt_jit_batch_entry(p) != NULL);
		brt_jit_free(p);
	}
}

/* The batch entry: each packet's ctx word and bytes, out-of-bounds exits and stack frames
 * in the middle of a batch, n = 0, and nothing written past r0s[n - 1]. */
static void test_batch(uint32_t flags)
{
	/* r0 = ctx word << 16 | pkt[1] + stack word, 0 when the packet is shorter than 2 */
	const struct bpf_insn prog[] = {
		MOV64_REG(6, 1), ST(BPF_DW, 10, -8, 0x30), LD_ABS(BPF_B, 1), LDX(BPF_W, 7, 6, 0),
		ALU64_IMM(BPF_LSH, 7, 16), ALU64_REG(BPF_OR, 0, 7), LDX(BPF_DW, 7, 10, -8),
		ALU64_REG(BPF_ADD, 0, 7), EXIT(),
	};
	static const uint8_t a[] = { 1, 2, 3 }, b[] = { 9 }, c[] = { 4, 5 };
	const struct brt_jit_pkt pkts[] = {
		{ a, 3, 7 }, { b, 1, 8 }, { c, 2, 9 }, { a, 0, 10 }, { c, 2, 0x1234 },
	};
	const uint32_t want[] = { 0x70032, 0, 0x90035, 0, 0x12340035 };
	uint32_t r0s[6], ctx[4] = { 0 };
	struct brt_jit_env e = env;
	struct brt_jit_prog *p;
	brt_jit_batch_fn *fn;
	char err[128];

	T_CASE(flags & BRT_JIT_BLIND ? "batch entry, blinded" : "batch entry");
	e.flags = flags;
	T_EQ_INT(0, brt_jit_compile(prog, sizeof(prog) / sizeof(prog[0]), &e, &p, err,
				    sizeof(err)));
	if (!p)
		return;
	fn = brt_jit_batch_entry(p);
	T_ASSERT(fn != NULL);
	if (!fn) {
		brt_jit_free(p);
		return;
	}
	memset(r0s, 0xee, sizeof(r0s));
	fn(ctx, pkts, 0, r0s);
	T_EQ_U64(0xeeeeeeee, r0s[0]);
	fn(ctx, pkts, 5, r0s);
	for (size_t i = 0; i < 5; i++)
		T_EQ_U64(want[i], r0s[i]);
	T_EQ_U64(0xeeeeeeee, r0s[5]);
	T_EQ_U64(0x1234, ctx[0]);
	T_EQ_U64(0, ctx[1]);
	/* and one run through the other entries gives the same */
	T_EQ_U64(0x12340035, brt_jit_pkt_entry(p)((uint64_t)(uintptr_t)ctx, c, 2));
	brt_jit_free(p);
}

/* Without a ctx, packet loads see an empty packet. */
static void test_no_ctx(void)
{
	const struct bpf_insn prog[] = { MOV64_IMM(0, 5), LD_ABS(BPF_B, 0), MOV64_IMM(0, 1), EXIT() };
	struct brt_jit_prog *p;
	char err[128];

	T_CASE("ld_abs without ctx");
	T_EQ_INT(0, brt_jit_compile(prog, 4, &env, &p, err, sizeof(err)));
	if (!p)
		return;
	T_EQ_U64(0, brt_jit_call(p, 0, 0, NULL));
	brt_jit_free(p);
}

static void test_empty(void)
{
	struct brt_jit_prog *p;
	char err[128];

	T_CASE("empty program");
	T_EQ_INT(-EINVAL, brt_jit_compile(NULL, 0, &env, &p, err, sizeof(err)));
	T_ASSERT(p == NULL);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_case(&cases[i], 0);
		run_case(&cases[i], BRT_JIT_BLIND);
		run_case(&cases[i], BRT_JIT_NO_BMI2);
	}
	test_blinding();
	test_passes();
	test_constfill_lea();
	test_redzone();
	test_layout();
	test_eqset();
	test_bittest();
	test_knownbits();
	test_leafregs();
	test_direct_calls();
	test_leaf_calls();
	test_wx();
	test_short_jumps();
	test_long_jumps();
	test_huge();
	test_no_ctx();
	test_empty();
	test_pkt_entries();
	test_batch(0);
	test_batch(BRT_JIT_BLIND);
	test_batch(BRT_JIT_NO_BMI2);
	return t_done();
}
