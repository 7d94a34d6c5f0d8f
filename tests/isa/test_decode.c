/* test_decode.c - the opcode table and the decoder: every row decodes back to itself, the
 * field rules reject what they should, and whole-program structural checks name the
 * instruction. */
#include <errno.h>

#include "harness.h"
#include "isa/isa.h"

/* Build an instruction that selects row op with valid operands. */
static struct bpf_insn sample(enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	struct bpf_insn insn = { .code = info->opcode, .dst_reg = 1 };

	switch (info->shape) {
	case BRT_SHAPE_ALU_REG:
	case BRT_SHAPE_LOAD:
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_ATOMIC:
	case BRT_SHAPE_JMP_REG:
		insn.src_reg = 2;
		break;
	case BRT_SHAPE_LD_ABS:
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_MAY_GOTO:
	case BRT_SHAPE_CALL:
	case BRT_SHAPE_CALL_LOCAL:
	case BRT_SHAPE_EXIT:
		insn.dst_reg = 0;
		break;
	case BRT_SHAPE_LD_IND:
		insn.dst_reg = 0;
		insn.src_reg = 3;
		break;
	default:
		break;
	}
	if (info->disc == BRT_DISC_OFF)
		insn.off = (int16_t)info->disc_val;
	else if (info->disc == BRT_DISC_IMM)
		insn.imm = info->disc_val;
	else if (info->disc == BRT_DISC_SRC)
		insn.src_reg = (uint8_t)info->disc_val;
	return insn;
}

static void test_every_row_decodes(void)
{
	for (int op = 0; op < BRT_OP_COUNT; op++) {
		struct bpf_insn insn[2] = { sample((enum brt_op)op), { 0 } };
		const char *why;

		T_CASE(brt_ops[op].id);
		T_EQ_INT(op, brt_isa_decode(insn, 2, &why));
	}
}

static void test_rows_are_unique(void)
{
	for (int a = 0; a < BRT_OP_COUNT; a++)
		for (int b = a + 1; b < BRT_OP_COUNT; b++) {
			T_CASE(brt_ops[a].id);
			T_ASSERT(strcmp(brt_ops[a].id, brt_ops[b].id) != 0);
			T_ASSERT(!(brt_ops[a].opcode == brt_ops[b].opcode &&
				   brt_ops[a].disc == brt_ops[b].disc &&
				   brt_ops[a].disc_val == brt_ops[b].disc_val));
		}
}

struct field_case {
	const char *name;
	struct bpf_insn insn[2];
	size_t avail;
	const char *reason; /* NULL: valid */
};

static const struct field_case field_cases[] = {
	{ "add64 imm ok", { { BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 5 } }, 1, NULL },
	{ "add64 imm with off", { { BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 1, 5 } }, 1,
	  "reserved field off is not 0" },
	{ "add64 imm with src", { { BPF_ALU64 | BPF_ADD | BPF_K, 1, 1, 0, 5 } }, 1,
	  "reserved field src_reg is not 0" },
	{ "add64 reg with imm", { { BPF_ALU64 | BPF_ADD | BPF_X, 1, 2, 0, 5 } }, 1,
	  "reserved field imm is not 0" },
	{ "bad dst r11", { { BPF_ALU64 | BPF_ADD | BPF_K, 11, 0, 0, 5 } }, 1,
	  "invalid dst register" },
	{ "bad src r12", { { BPF_ALU64 | BPF_ADD | BPF_X, 1, 12, 0, 0 } }, 1,
	  "invalid src register" },
	{ "write r10", { { BPF_ALU64 | BPF_MOV | BPF_K, 10, 0, 0, 0 } }, 1,
	  "frame pointer r10 is read only" },
	{ "store through r10 ok", { { BPF_STX | BPF_MEM | BPF_DW, 10, 1, -8, 0 } }, 1, NULL },
	{ "unknown opcode", { { 0xff, 0, 0, 0, 0 } }, 1, "unknown opcode" },
	{ "div off 2", { { BPF_ALU64 | BPF_DIV | BPF_K, 1, 0, 2, 3 } }, 1, "unknown opcode" },
	{ "movsx off 24", { { BPF_ALU64 | BPF_MOV | BPF_X, 1, 2, 24, 0 } }, 1, "unknown opcode" },
	{ "le with imm 8", { { BPF_ALU | BPF_END | BPF_TO_LE, 1, 0, 0, 8 } }, 1, "unknown opcode" },
	{ "lddw truncated", { { BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 1 } }, 1,
	  "lddw is missing its second slot" },
	{ "lddw bad second", { { BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 1 }, { 0x07, 0, 0, 0, 0 } }, 2,
	  "second slot of lddw has non-zero fields" },
	{ "lddw map fd", { { BPF_LD | BPF_IMM | BPF_DW, 1, 1, 0, 3 }, { 0 } }, 2, NULL },
	{ "lddw pseudo 7", { { BPF_LD | BPF_IMM | BPF_DW, 1, 7, 0, 3 }, { 0 } }, 2,
	  "unknown lddw pseudo source" },
	{ "exit with imm", { { BPF_JMP | BPF_EXIT, 0, 0, 0, 1 } }, 1, "reserved field imm is not 0" },
	{ "call with dst", { { BPF_JMP | BPF_CALL, 1, 0, 0, 1 } }, 1,
	  "reserved field dst_reg is not 0" },
	{ "fetch into r10", { { BPF_STX | BPF_ATOMIC | BPF_DW, 1, 10, 0, BPF_ADD | BPF_FETCH } }, 1,
	  "frame pointer r10 is read only" },
	{ "ldx with imm", { { BPF_LDX | BPF_MEM | BPF_W, 0, 10, -4, 1 } }, 1,
	  "reserved field imm is not 0" },
};

static void test_field_rules(void)
{
	for (size_t i = 0; i < sizeof(field_cases) / sizeof(field_cases[0]); i++) {
		const struct field_case *c = &field_cases[i];
		const char *why;
		enum brt_op op;

		T_CASE(c->name);
		op = brt_isa_decode(c->insn, c->avail, &why);
		if (c->reason) {
			T_EQ_INT(BRT_OP_INVALID, op);
			T_EQ_STR(c->reason, why);
		} else {
			T_ASSERT(op != BRT_OP_INVALID);
		}
	}
}

struct prog_case {
	const char *name;
	struct bpf_insn insns[4];
	size_t n;
	int ret;
	const char *err;
	size_t max; /* instruction limit; 0 means 4096 */
};

static const struct prog_case prog_cases[] = {
	{ "ok", { { BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1 }, { BPF_JMP | BPF_EXIT } }, 2, 0, "" },
	{ "empty", { { 0 } }, 0, -EINVAL, "program is empty" },
	{ "jump out", { { BPF_JMP | BPF_JA, 0, 0, 5, 0 }, { BPF_JMP | BPF_EXIT } }, 2, -EINVAL,
	  "insn 0: jump out of range to insn 6" },
	{ "jump back out", { { BPF_JMP | BPF_JA, 0, 0, -2, 0 }, { BPF_JMP | BPF_EXIT } }, 2, -EINVAL,
	  "insn 0: jump out of range to insn -1" },
	{ "into lddw",
	  { { BPF_JMP | BPF_JA, 0, 0, 1, 0 }, { BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 1 }, { 0 },
	    { BPF_JMP | BPF_EXIT } },
	  4, -EINVAL, "insn 0: jump into the middle of lddw at insn 1" },
	{ "bad insn 1", { { BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1 }, { 0xff } }, 2, -EINVAL,
	  "insn 1: unknown opcode (code 0xff dst r0 src r0 off 0 imm 0)" },
	{ "too long", { { 0 } }, 3, -E2BIG, "program has 3 instructions, more than the limit of 2", 2 },
};

static void test_check_prog(void)
{
	for (size_t i = 0; i < sizeof(prog_cases) / sizeof(prog_cases[0]); i++) {
		const struct prog_case *c = &prog_cases[i];
		char err[256] = "";

		T_CASE(c->name);
		T_EQ_INT(c->ret, brt_isa_check_prog(c->insns, c->n, c->max ? c->max : 4096, err,
						      sizeof(err)));
		T_EQ_STR(c->err, err);
	}
}

/* Which registers instructions name, read and write (brt_isa_regs), on the rows where
 * implicit operands make the answer non-obvious. */
#define B(r) (1u << (r))
static const struct regs_case {
	const char *name;
	struct bpf_insn insn;
	unsigned named, use, def, flow;
} regs_cases[] = {
	{ "mov64 r1, r2", { BPF_ALU64 | BPF_MOV | BPF_X, 1, 2, 0, 0 }, B(1) | B(2), B(2), B(1), B(2) },
	{ "mov32 r1, 5", { BPF_ALU | BPF_MOV | BPF_K, 1, 0, 0, 5 }, B(1), 0, B(1), 0 },
	{ "add64 r1, r2", { BPF_ALU64 | BPF_ADD | BPF_X, 1, 2, 0, 0 }, B(1) | B(2), B(1) | B(2),
	  B(1), B(1) | B(2) },
	{ "sdiv64 r1, r2", { BPF_ALU64 | BPF_DIV | BPF_X, 1, 2, 1, 0 }, B(1) | B(2),
	  B(1) | B(2), B(1), B(1) | B(2) },
	{ "be16 r3", { BPF_ALU | BPF_END | BPF_TO_BE, 3, 0, 0, 16 }, B(3), B(3), B(3), B(3) },
	{ "ldxdw r1, [r2]", { BPF_LDX | BPF_MEM | BPF_DW, 1, 2, 0, 0 }, B(1) | B(2), B(2), B(1), 0 },
	{ "stdw [r10-8], 1", { BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 1 }, B(10), B(10), 0, 0 },
	{ "lock add", { BPF_STX | BPF_ATOMIC | BPF_DW, 1, 2, 0, BPF_ADD }, B(1) | B(2),
	  B(1) | B(2), 0, 0 },
	{ "lock fetch add", { BPF_STX | BPF_ATOMIC | BPF_DW, 1, 2, 0, BPF_ADD | BPF_FETCH },
	  B(1) | B(2), B(1) | B(2), B(2), 0 },
	{ "lock cmpxchg", { BPF_STX | BPF_ATOMIC | BPF_DW, 1, 2, 0, BPF_CMPXCHG }, B(1) | B(2),
	  B(0) | B(1) | B(2), B(0), 0 },
	{ "lddw r4 map_fd", { BPF_LD | BPF_IMM | BPF_DW, 4, BPF_PSEUDO_MAP_FD, 0, 3 }, B(4), 0,
	  B(4), 0 },
	{ "ldabsh", { BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, 12 }, 0, B(6), 0x3f, 0 },
	{ "ldindb r7", { BPF_LD | BPF_IND | BPF_B, 0, 7, 0, 1 }, B(7), B(6) | B(7), 0x3f, 0 },
	{ "jgt r1, r2", { BPF_JMP | BPF_JGT | BPF_X, 1, 2, 3, 0 }, B(1) | B(2), B(1) | B(2), 0, 0 },
	{ "ja", { BPF_JMP | BPF_JA, 0, 0, 3, 0 }, 0, 0, 0, 0 },
	{ "call 1", { BPF_JMP | BPF_CALL, 0, 0, 0, 1 }, 0, 0x3e, 0x3f, 0 },
	{ "call local", { BPF_JMP | BPF_CALL, 0, 1, 0, 4 }, 0, 0x3e, 0x3f, 0 },
	{ "callx r8", { BPF_JMP | BPF_CALL | BPF_X, 8, 0, 0, 0 }, B(8), B(8) | 0x3e, 0x3f, 0 },
	{ "exit", { BPF_JMP | BPF_EXIT, 0, 0, 0, 0 }, 0, B(0), 0, 0 },
	/* a discriminator no row has: the registers of the byte's rows */
	{ "sdiv with off 2", { BPF_ALU64 | BPF_DIV | BPF_X, 1, 2, 2, 0 }, B(1) | B(2),
	  B(1) | B(2), B(1), B(1) | B(2) },
	{ "no row", { 0xff, 1, 2, 0, 0 }, 0, 0, 0, 0 },
};

static void test_regs(void)
{
	for (size_t i = 0; i < sizeof(regs_cases) / sizeof(regs_cases[0]); i++) {
		const struct regs_case *c = &regs_cases[i];
		struct brt_isa_regs r;

		T_CASE(c->name);
		brt_isa_regs(&c->insn, &r);
		T_EQ_INT(c->named, r.named);
		T_EQ_INT(c->use, r.use);
		T_EQ_INT(c->def, r.def);
		T_EQ_INT(c->flow, r.flow);
	}
	/* every row: what the written value comes from is read, and r10 is never written */
	for (int op = 0; op < BRT_OP_COUNT; op++) {
		struct bpf_insn insn = sample((enum brt_op)op);
		struct brt_isa_regs r;

		T_CASE(brt_ops[op].id);
		T_EQ_INT(op, brt_isa_regs(&insn, &r));
		T_ASSERT(!(r.flow & ~r.use));
		T_ASSERT(!(r.def & B(10)));
	}
}

/* brt_isa_check_init_regs(): what the conformance plugin and `bpfrt run` refuse before
 * running an unverified program */
static void test_init_regs(void)
{
#define IN(c, d, s_, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s_), .off = (o), .imm = (i) }
	static const struct {
		const char *name;
		struct bpf_insn p[6];
		size_t n;
		int err;
		const char *msg;
	} t[] = {
		{ "or r0, r10 (conformance error.data)",
		  { IN(BPF_ALU64 | BPF_OR | BPF_X, 0, 10, 0, 0), IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) },
		  2, -EINVAL, "insn 0: r0 is read before it is written" },
		{ "r1 and r2 set by the run",
		  { IN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0), IN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 2, 0, 0),
		    IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) }, 3, 0, NULL },
		{ "r3 is not",
		  { IN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 3, 0, 0), IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) },
		  2, -EINVAL, "insn 0: r3 is read before it is written" },
		{ "written on one path only",
		  { IN(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1, 0), IN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
		    IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) }, 3, -EINVAL,
		  "insn 2: r0 is read before it is written" },
		{ "a call writes r0 and clobbers r1",
		  { IN(BPF_JMP | BPF_CALL, 0, 0, 0, 1), IN(BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0),
		    IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) }, 3, -EINVAL,
		  "insn 1: r1 is read before it is written" },
		{ "lddw writes its register",
		  { IN(BPF_LD | BPF_IMM | BPF_DW, 0, 0, 0, 7), IN(0, 0, 0, 0, 0),
		    IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) }, 3, 0, NULL },
		{ "a loop that writes before reading",
		  { IN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), IN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),
		    IN(BPF_JMP | BPF_JLT | BPF_K, 0, 0, -2, 4), IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) },
		  4, 0, NULL },
		{ "a jump out of range is still refused",
		  { IN(BPF_JMP | BPF_JA, 0, 0, 5, 0), IN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) }, 2, -EINVAL,
		  NULL },
	};
#undef IN
	char err[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		T_CASE(t[i].name);
		err[0] = 0;
		T_EQ_INT(t[i].err, brt_isa_check_init_regs(t[i].p, t[i].n, B(1) | B(2), err,
							   sizeof(err)));
		if (t[i].msg)
			T_EQ_STR(t[i].msg, err);
	}
}

int main(void)
{
	test_init_regs();
	test_every_row_decodes();
	test_rows_are_unique();
	test_field_rules();
	test_check_prog();
	test_regs();
	return t_done();
}
