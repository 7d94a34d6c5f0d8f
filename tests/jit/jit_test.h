/* jit_test.h - instruction constructors for the JIT tests (kernel filter.h style, written
 * for this project) and a runner that compiles, runs and, on failure, disassembles.
 */
#ifndef BPFRT_TESTS_JIT_JIT_TEST_H
#define BPFRT_TESTS_JIT_JIT_TEST_H

#include <linux/bpf.h>

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define ALU64_IMM(op, d, imm) I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, imm)
#define ALU64_REG(op, d, s) I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, imm) I(BPF_ALU | (op) | BPF_K, d, 0, 0, imm)
#define ALU32_REG(op, d, s) I(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define SDIV64_REG(d, s) I(BPF_ALU64 | BPF_DIV | BPF_X, d, s, 1, 0)
#define SDIV64_IMM(d, imm) I(BPF_ALU64 | BPF_DIV | BPF_K, d, 0, 1, imm)
#define SMOD64_REG(d, s) I(BPF_ALU64 | BPF_MOD | BPF_X, d, s, 1, 0)
#define SDIV32_REG(d, s) I(BPF_ALU | BPF_DIV | BPF_X, d, s, 1, 0)
#define SMOD32_REG(d, s) I(BPF_ALU | BPF_MOD | BPF_X, d, s, 1, 0)
#define SMOD32_IMM(d, imm) I(BPF_ALU | BPF_MOD | BPF_K, d, 0, 1, imm)
#define MOV64_IMM(d, imm) ALU64_IMM(BPF_MOV, d, imm)
#define MOV64_REG(d, s) ALU64_REG(BPF_MOV, d, s)
#define MOV32_IMM(d, imm) ALU32_IMM(BPF_MOV, d, imm)
#define MOVSX64(d, s, bits) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, bits, 0)
#define MOVSX32(d, s, bits) I(BPF_ALU | BPF_MOV | BPF_X, d, s, bits, 0)
#define ENDIAN(src, d, bits) I(BPF_ALU | BPF_END | (src), d, 0, 0, bits)
#define BSWAP(d, bits) I(BPF_ALU64 | BPF_END | BPF_TO_LE, d, 0, 0, bits)
#define LD_IMM64(d, v) I(BPF_LD | BPF_IMM | BPF_DW, d, 0, 0, (int32_t)(uint32_t)(uint64_t)(v)), \
	I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define LDXS(sz, d, s, o) I(BPF_LDX | BPF_MEMSX | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, imm) I(BPF_ST | BPF_MEM | (sz), d, 0, o, imm)
#define ATOMIC(sz, op, d, s, o) I(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)
#define JMP_IMM(op, d, imm, o) I(BPF_JMP | (op) | BPF_K, d, 0, o, imm)
#define JMP_REG(op, d, s, o) I(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, imm, o) I(BPF_JMP32 | (op) | BPF_K, d, 0, o, imm)
#define JMP32_REG(op, d, s, o) I(BPF_JMP32 | (op) | BPF_X, d, s, o, 0)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JA32(o) I(BPF_JMP32 | BPF_JA, 0, 0, 0, o)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define CALL_LOCAL(o) I(BPF_JMP | BPF_CALL, 0, 1, 0, o)
#define CALLX(d) I(BPF_JMP | BPF_CALL | BPF_X, d, 0, 0, 0)
#define LD_ABS(sz, imm) I(BPF_LD | BPF_ABS | (sz), 0, 0, 0, imm)
#define LD_IND(sz, s, imm) I(BPF_LD | BPF_IND | (sz), 0, s, 0, imm)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#endif
