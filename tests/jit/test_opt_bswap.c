/* test_opt_bswap.c - pass bswap (src/jit/x86_64/opt_bswap.c): a load then a be32/be64 of
 * its register is one movbe, a be16 of a 16-bit load is the rol alone, a byte swap then
 * a store of that width of the register, dead after it, is one movbe store; near misses
 * (the register read after the store, a store of another width, a jump landing on the
 * swap) keep the plain code.  Every program returns the same r0 with the pass on, off
 * and blinded, and without movbe's CPU feature the pass leaves the code alone.
 */
#include <cpuid.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "isa/isa.h"
#include "jit/jit.h"
#include "jit_test.h"

struct bs_case {
	const char *name;
	struct bpf_insn insns[12];
	size_t n;
	uint64_t r0;
	int movbe_ld; /* movbe loads with the pass on (the CPU having movbe) */
	int movbe_st;
	bool shrinks;  /* fewer bytes (a movbe is as long as mov and bswap, one instruction) */
};

static const uint8_t buf[16] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
				 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01 };

static const struct bs_case cases[] = {
	{ "ldxw, be32", { LDX(BPF_W, 0, 1, 2), ENDIAN(BPF_TO_BE, 0, 32), EXIT() }, 3,
	  0x33445566, 1, 0, false },
	{ "ldxdw, be64", { LDX(BPF_DW, 0, 1, 8), ENDIAN(BPF_TO_BE, 0, 64), EXIT() }, 3,
	  0x99aabbccddeeff01ull, 1, 0, false },
	{ "ldxdw, bswap64", { LDX(BPF_DW, 0, 1, 0), BSWAP(0, 64), EXIT() }, 3,
	  0x1122334455667788ull, 1, 0, false },
	{ "ldxh, be16: rol only", { LDX(BPF_H, 0, 1, 1), ENDIAN(BPF_TO_BE, 0, 16), EXIT() }, 3,
	  0x2233, 0, 0, true },
	{ "and 0xffff, be16: rol only", { LDX(BPF_W, 0, 1, 0), ALU32_IMM(BPF_AND, 0, 0xffff),
	  ENDIAN(BPF_TO_BE, 0, 16), EXIT() }, 4, 0x1122, 0, 0, true },
	{ "ldxw, be16: kept", { LDX(BPF_W, 0, 1, 0), ENDIAN(BPF_TO_BE, 0, 16), EXIT() }, 3,
	  0x1122, 0, 0, false },
	{ "ldxw into another register: kept", { MOV64_IMM(0, 0x01020304), LDX(BPF_W, 2, 1, 0),
	  ENDIAN(BPF_TO_BE, 0, 32), ALU64_REG(BPF_ADD, 0, 2), EXIT() }, 5, 0x48362412, 0, 0,
	  false },
	{ "be16, stxh", { LDX(BPF_W, 2, 1, 4), ENDIAN(BPF_TO_BE, 2, 16), STX(BPF_H, 10, 2, -2),
	  LDX(BPF_H, 0, 10, -2), EXIT() }, 5, 0x5566, 0, 1, true },
	{ "be32, stxw", { LDX(BPF_DW, 2, 1, 0), ENDIAN(BPF_TO_BE, 2, 32), STX(BPF_W, 10, 2, -4),
	  LDX(BPF_W, 0, 10, -4), EXIT() }, 5, 0x11223344, 0, 1, false },
	{ "be64, stxdw", { LDX(BPF_W, 2, 1, 0), ENDIAN(BPF_TO_BE, 2, 64), STX(BPF_DW, 10, 2, -8),
	  LDX(BPF_DW, 0, 10, -8), EXIT() }, 5, 0x1122334400000000ull, 0, 1, true },
	{ "swapped register read after the store: kept",
	  { LDX(BPF_W, 2, 1, 4), ENDIAN(BPF_TO_BE, 2, 16), STX(BPF_H, 10, 2, -2),
	    LDX(BPF_H, 0, 10, -2), ALU64_REG(BPF_ADD, 0, 2), EXIT() }, 6, 0x5566 * 2, 0, 0, false },
	{ "store of another width: kept",
	  { LDX(BPF_W, 2, 1, 4), ENDIAN(BPF_TO_BE, 2, 32), STX(BPF_H, 10, 2, -2),
	    LDX(BPF_H, 0, 10, -2), EXIT() }, 5, 0x7788, 1, 0, false },
	{ "a jump landing on the swap: load kept",
	  { LDX(BPF_W, 0, 1, 0), JMP_IMM(BPF_JEQ, 0, 0, 1), LDX(BPF_W, 0, 1, 4),
	    ENDIAN(BPF_TO_BE, 0, 32), EXIT() }, 5, 0x55667788, 0, 0, false },
};

static size_t count(const struct brt_jit_prog *p, uint8_t last)
{
	const uint8_t pat[3] = { 0x0f, 0x38, last };
	size_t size, found = 0;
	const uint8_t *code = brt_jit_code(p, &size, NULL);

	for (size_t k = 0; k + 3 <= size; k++)
		found += !memcmp(code + k, pat, 3);
	return found;
}

int main(void)
{
	unsigned a, b, c, d;
	bool movbe = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 22));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bs_case *t = &cases[i];
		size_t size[2] = { 0, 0 };

		for (int v = 0; v < 3; v++) { /* pass on, off, blinded */
			/* stackreg off in both: the stores' slots would live in a register
			 * without the movbe store, and the sizes compare bswap alone */
			struct brt_jit_env e = { .pkt_data_off = -1, .pkt_len_off = -1,
						 .passes_off = (v == 1 ? BRT_JIT_PASS(bswap) : 0) |
							       BRT_JIT_PASS(stackreg),
						 .flags = v == 2 ? BRT_JIT_BLIND : 0 };
			struct brt_jit_prog *p = NULL;
			char err[128];

			T_CASE(t->name);
			T_EQ_INT(0, brt_jit_compile(t->insns, t->n, &e, &p, err, sizeof(err)));
			if (!p)
				continue;
			T_EQ_U64(t->r0, brt_jit_call(p, (uint64_t)(uintptr_t)buf, sizeof(buf), NULL));
			if (v < 2) {
				T_EQ_INT(v == 0 && movbe ? t->movbe_ld : 0, (int)count(p, 0xf0));
				T_EQ_INT(v == 0 && movbe ? t->movbe_st : 0, (int)count(p, 0xf1));
				brt_jit_code(p, &size[v], NULL);
			}
			brt_jit_free(p);
		}
		if (movbe || !(t->movbe_ld || t->movbe_st))
			T_ASSERT(t->shrinks ? size[0] < size[1] : size[0] <= size[1]);
	}
	return t_done();
}
