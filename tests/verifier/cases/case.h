/* case.h - verifier test cases as data (in the spirit of the kernel's test_verifier):
 * each case is a program, the program type, the maps it needs and who loads it.  The
 * expected verdict and first error line come from the kernel (expected.inc, written by
 * test_cases_oracle --write); cases/<topic>.c hold the programs, grouped by topic.
 */
#ifndef BPFRT_TESTS_VERIFIER_CASE_H
#define BPFRT_TESTS_VERIFIER_CASE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "isa/isa.h"
#include "verifier/verifier.h"

#define VC_MAX_MAPS 4

struct vc_map {
	uint32_t type;        /* 0: unused slot */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;
	int frozen;                   /* BPF_MAP_FREEZE after writing data to key 0 */
	unsigned char data[16];       /* key 0's first bytes (arrays), the rest zero */
};

struct vcase {
	const char *name;             /* unique: topic/what */
	const struct bpf_insn *insns; /* lddw src_reg 1/2 imm = index into maps */
	size_t len;
	uint32_t prog_type;           /* 0 means socket filter */
	uint32_t attach;              /* expected_attach_type */
	uint32_t priv;                /* enum brt_priv */
	uint32_t prog_flags;
	int non_gpl;                  /* licence "MIT" instead of "GPL" */
	struct vc_map maps[VC_MAX_MAPS];
	/* BRT_PRIV_UNPRIV only: the kernel's answer, read from its source (this machine's
	 * kernel.unprivileged_bpf_disabled=2 refuses every unprivileged load, so the oracle
	 * cannot record it): errno (0 accepted) and first error line (NULL: none) */
	int uerr;
	const char *umsg;
	/* load with func_info (callbacks need it): a BTF FUNC per subprogram, static unless
	 * bit N (subprogram N, in start order) of global_funcs is set */
	int btf;
	uint32_t global_funcs;
};

/* What the kernel said (expected.inc). */
struct vexpect {
	const char *name;
	int err;                      /* 0 accepted, else errno (positive) */
	const char *msg;              /* first error line, "" when accepted */
	const char *known;            /* non-NULL: a documented disagreement (DISAGREEMENTS.md) */
	int berr;                     /* known only: bpfrt's errno (0 accepted) */
	const char *bmsg;             /* known only: bpfrt's first error line */
};

struct vcase_list {
	struct vcase *v;
	size_t n;
	size_t cap;
};

void vc_add(struct vcase_list *l, const struct vcase *c);
/* a copy of insns that lives as long as the program (for generated cases) */
const struct bpf_insn *vc_keep(const struct bpf_insn *insns, size_t n);
const char *vc_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vc_all(struct vcase_list *l);
/* unprivileged twins of bpf_capable cases (unpriv.c), added after every topic */
void vc_unpriv_twins(struct vcase_list *l);
const struct vexpect *vc_expect(const char *name);

#define VC_TOPICS(X) X(cfg) X(alu) X(jmp) X(stack) X(ctx) X(map) X(pkt) X(helper) X(call) \
	X(unpriv) X(loop) X(rodata) X(hrow) X(cb)
#define VC_DECL(t) void vcases_##t(struct vcase_list *l);
VC_TOPICS(VC_DECL)
#undef VC_DECL

/* Instruction builders (own macros, kernel-like names kept short). */
#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define MOV64_IMM(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_IMM(d, i) I(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_REG(d, s) I(BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU64_IMM(op, d, i) I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU32_IMM(op, d, i) I(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s) I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU32_REG(op, d, s) I(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define LDXSX(sz, d, s, o) I(BPF_LDX | BPF_MEMSX | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) I(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define ATOMIC(sz, d, s, o, op) I(BPF_STX | BPF_ATOMIC | (sz), d, s, o, op)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JIMM(op, d, i, o) I(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JREG(op, d, s, o) I(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define J32IMM(op, d, i, o) I(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define CALL_SUB(rel) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD64(d, v) I(BPF_LD | BPF_IMM | BPF_DW, d, 0, 0, (int32_t)(uint32_t)(uint64_t)(v)), \
	I(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define LD_MAP(d, n) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, n), I(0, 0, 0, 0, 0)
#define LD_MAP_VALUE(d, n, off) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_VALUE, 0, n), \
	I(0, 0, 0, 0, off)
#define LD_FUNC(d, rel) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_FUNC, 0, rel), I(0, 0, 0, 0, 0)
#define LD_ABS(sz, i) I(BPF_LD | BPF_ABS | (sz), 0, 0, 0, i)
#define LD_IND(sz, s, i) I(BPF_LD | BPF_IND | (sz), 0, s, 0, i)

/* A program built piece by piece: append the instructions to the caller's array p, whose
 * count so far is the caller's n (needs <string.h>). */
#define EMIT(...)                                                                         \
	do {                                                                              \
		const struct bpf_insn e_[] = { __VA_ARGS__ };                              \
		memcpy(p + n, e_, sizeof(e_));                                            \
		n += sizeof(e_) / sizeof(e_[0]);                                          \
	} while (0)

/* r2 = &key (u32 0 at fp-4), r1 = map 0, call bpf_map_lookup_elem */
#define LOOKUP_MAP0 ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), \
	LD_MAP(1, 0), CALL(BPF_FUNC_map_lookup_elem)

#define PROG(...) .insns = (const struct bpf_insn[]){ __VA_ARGS__ }, \
	.len = sizeof((const struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn)

#define HASH48 { BPF_MAP_TYPE_HASH, 4, 8, 16, 0 }
#define ARRAY48 { BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0 }
#define ARRAY4_64 { BPF_MAP_TYPE_ARRAY, 4, 64, 4, 0 }

#endif
