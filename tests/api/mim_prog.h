/* mim_prog.h - the map-of-maps tests' program (holds_oracle, mim_links): a socket filter
 * returning outer[0][0] (an array of maps of arrays of u64), 1000 when outer[0] is empty,
 * 2000 when the inner map has no element 0.  MIM_PROG_LEN instructions into insns, the
 * outer map's fd in its lddw. */
#ifndef BPFRT_TESTS_API_MIM_PROG_H
#define BPFRT_TESTS_API_MIM_PROG_H

#include <string.h>

#include <linux/bpf.h>

#define MIM_PROG_LEN 18

static inline void mim_prog_insns(struct bpf_insn *insns, int outer)
{
	const struct bpf_insn p[MIM_PROG_LEN] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = outer },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 0, .off = 2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1000 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 0, .off = 2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 2000 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 0, .src_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	memcpy(insns, p, sizeof(p));
}

#endif
