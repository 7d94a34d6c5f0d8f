/* test_disasm.c - the disassembler: every row of the opcode table survives
 * disasm (asm style) -> brt_asm() with its bytes intact; the kernel style matches lines
 * copied from a Linux 6.18 verifier log; bad input gives "invalid: ..." and never
 * overflows the caller's buffer. */
#include <errno.h>

#include "bpfrt.h"
#include "harness.h"
#include "isa/isa.h"

/* A valid instruction for row op, with field values varied by variant so that signs,
 * large immediates and every register show up across the rows. */
static void sample(enum brt_op op, unsigned variant, struct bpf_insn insn[2])
{
	const struct brt_opinfo *info = &brt_ops[op];
	unsigned v = (unsigned)op * 7 + variant * 3;
	int32_t imm = variant & 1 ? -(int32_t)(v % 1000) - 1 : (int32_t)(0x7fffff00u + v);
	uint8_t dst = (uint8_t)(v % 10), src = (uint8_t)((v / 3) % 11);

	memset(insn, 0, 2 * sizeof(*insn));
	insn->code = info->opcode;
	switch ((enum brt_shape)info->shape) {
	case BRT_SHAPE_ALU_IMM:
	case BRT_SHAPE_JMP_IMM:
		insn->dst_reg = dst;
		insn->imm = imm;
		insn->off = info->shape == BRT_SHAPE_JMP_IMM ? (int16_t)(variant ? -5 : 300) : 0;
		break;
	case BRT_SHAPE_ALU_REG:
	case BRT_SHAPE_JMP_REG:
		insn->dst_reg = dst;
		insn->src_reg = src;
		insn->off = info->shape == BRT_SHAPE_JMP_REG ? (int16_t)(variant ? 32767 : -32768)
							     : 0;
		break;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
	case BRT_SHAPE_CALLX:
		insn->dst_reg = dst;
		break;
	case BRT_SHAPE_LOAD:
		insn->dst_reg = dst;
		insn->src_reg = src;
		insn->off = (int16_t)(variant ? -8 : 4);
		break;
	case BRT_SHAPE_STORE_IMM:
		insn->dst_reg = (uint8_t)(v % 11);
		insn->off = (int16_t)(variant ? -16 : 0);
		insn->imm = imm;
		break;
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_ATOMIC:
		insn->dst_reg = (uint8_t)(v % 11);
		insn->src_reg = (uint8_t)(src % 10);
		insn->off = (int16_t)(variant ? -32768 : 12);
		break;
	case BRT_SHAPE_LDDW:
		insn->dst_reg = dst;
		insn[0].imm = imm;
		insn[1].imm = variant ? -1 : 0x12345678;
		break;
	case BRT_SHAPE_LD_ABS:
		insn->imm = imm;
		break;
	case BRT_SHAPE_LD_IND:
		insn->src_reg = src;
		insn->imm = imm;
		break;
	case BRT_SHAPE_JA:
	case BRT_SHAPE_MAY_GOTO:
		insn->off = (int16_t)(variant ? -1 : 0);
		break;
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_CALL_LOCAL:
	case BRT_SHAPE_CALL:
		insn->imm = variant ? imm : (int32_t)v % 200;
		break;
	case BRT_SHAPE_EXIT:
		break;
	}
	if (info->disc == BRT_DISC_OFF)
		insn->off = (int16_t)info->disc_val;
	else if (info->disc == BRT_DISC_IMM)
		insn->imm = info->disc_val;
	else if (info->disc == BRT_DISC_SRC)
		insn->src_reg = (uint8_t)info->disc_val;
}

static void round_trip(const struct bpf_insn *insn, const char *name)
{
	struct bpf_insn *back = NULL;
	char text[128], err[256];
	size_t n = 0;
	int slots;

	T_CASE(name);
	slots = brt_disasm_insn(insn, 2, BRT_DISASM_ASM, text, sizeof(text));
	if (slots < 1) {
		T_FAIL("disasm failed: %s", text);
		return;
	}
	if (brt_asm(text, "rt.s", &back, &n, err, sizeof(err))) {
		T_FAIL("'%s' does not assemble: %s", text, err);
		return;
	}
	if ((int)n == slots && !memcmp(back, insn, n * sizeof(*insn)))
		T_OK();
	else
		T_FAIL("'%s' assembles to %zu slot(s) with other bytes (code %02x dst %u src %u "
		       "off %d imm %d)", text, n, back[0].code, back[0].dst_reg, back[0].src_reg,
		       back[0].off, back[0].imm);
	free(back);
}

static void test_every_row_round_trips(void)
{
	for (int op = 0; op < BRT_OP_COUNT; op++) {
		for (unsigned variant = 0; variant < 2; variant++) {
			struct bpf_insn insn[2];
			const char *why;

			sample((enum brt_op)op, variant, insn);
			T_CASE(brt_ops[op].id);
			T_EQ_INT(op, brt_isa_decode(insn, 2, &why));
			round_trip(insn, brt_ops[op].id);
		}
	}
}

#define I(code, dst, src, off, imm) { (code), (dst), (src), (off), (imm) }

/* lddw pseudo forms round-trip too. */
static void test_lddw_pseudo_round_trips(void)
{
	static const struct bpf_insn cases[][2] = {
		{ I(0x18, 1, BPF_PSEUDO_MAP_FD, 0, 3), I(0, 0, 0, 0, 0) },
		{ I(0x18, 1, BPF_PSEUDO_MAP_VALUE, 0, 3), I(0, 0, 0, 0, 16) },
		{ I(0x18, 1, BPF_PSEUDO_MAP_VALUE, 0, 3), I(0, 0, 0, 0, 0) },
		{ I(0x18, 2, BPF_PSEUDO_BTF_ID, 0, 1000), I(0, 0, 0, 0, 7) },
		{ I(0x18, 3, BPF_PSEUDO_FUNC, 0, -4), I(0, 0, 0, 0, 0) },
		{ I(0x18, 3, BPF_PSEUDO_FUNC, 0, 2), I(0, 0, 0, 0, 0x5b0000) },
		{ I(0x18, 4, BPF_PSEUDO_MAP_IDX, 0, 0), I(0, 0, 0, 0, 0) },
		{ I(0x18, 5, BPF_PSEUDO_MAP_IDX_VALUE, 0, 1), I(0, 0, 0, 0, 8) },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		round_trip(cases[i], "lddw pseudo");
}

struct text_case {
	struct bpf_insn insn[2];
	const char *kernel; /* from a Linux 6.18 verifier log (log_level 2), "N: " removed */
	const char *asm_text;
};

static const struct text_case text_cases[] = {
	{ { I(0xbf, 6, 1, 0, 0) }, "(bf) r6 = r1", "mov %r6, %r1" },
	{ { I(0xb7, 0, 0, 0, 0) }, "(b7) r0 = 0", "mov %r0, 0" },
	{ { I(0xbc, 2, 0, 0, 0) }, "(bc) w2 = w0", "mov32 %r2, %r0" },
	{ { I(0x07, 0, 0, 0, 5) }, "(07) r0 += 5", "add %r0, 5" },
	{ { I(0x7b, 10, 0, -8, 0) }, "(7b) *(u64 *)(r10 -8) = r0", "stxdw [%r10-8], %r0" },
	{ { I(0x61, 3, 10, -8, 0) }, "(61) r3 = *(u32 *)(r10 -8)", "ldxw %r3, [%r10-8]" },
	{ { I(0xdb, 10, 0, -8, BPF_ADD) }, "(db) lock *(u64 *)(r10 -8) += r0",
	  "lock add [%r10-8], %r0" },
	{ { I(0xc3, 10, 3, -8, BPF_OR | BPF_FETCH) },
	  "(c3) r3 = atomic_fetch_or((u32 *)(r10 -8), r3)", "lock fetch or32 [%r10-8], %r3" },
	{ { I(0xdb, 10, 0, -8, BPF_XCHG) }, "(db) r0 = atomic64_xchg((u64 *)(r10 -8), r0)",
	  "lock xchg [%r10-8], %r0" },
	{ { I(0xdb, 10, 3, -8, BPF_CMPXCHG) },
	  "(db) r0 = atomic64_cmpxchg((u64 *)(r10 -8), r0, r3)", "lock cmpxchg [%r10-8], %r3" },
	{ { I(0xdc, 3, 0, 0, 16) }, "(dc) r3 = be16 r3", "be16 %r3" },
	{ { I(0xd4, 3, 0, 0, 64) }, "(d4) r3 = le64 r3", "le64 %r3" },
	{ { I(0xd7, 3, 0, 0, 32) }, "(d7) r3 = bswap32 r3", "bswap32 %r3" },
	{ { I(0x84, 3, 0, 0, 0) }, "(84) w3 = -w3", "neg32 %r3" },
	{ { I(0x87, 3, 0, 0, 0) }, "(87) r3 = -r3", "neg %r3" },
	{ { I(0x37, 3, 0, 1, 3) }, "(37) r3 s/= 3", "sdiv %r3, 3" },
	{ { I(0x94, 3, 0, 1, -3) }, "(94) w3 s%= -3", "smod32 %r3, -3" },
	{ { I(0xbf, 4, 3, 8, 0) }, "(bf) r4 = (s8)r3", "movsx864 %r4, %r3" },
	{ { I(0xbc, 4, 3, 16, 0) }, "(bc) w4 = (s16)w3", "movsx1632 %r4, %r3" },
	{ { I(0x91, 5, 10, -8, 0) }, "(91) r5 = *(s8 *)(r10 -8)", "ldxsb %r5, [%r10-8]" },
	{ { I(0x62, 10, 0, -16, -5) }, "(62) *(u32 *)(r10 -16) = -5", "stw [%r10-16], -5" },
	{ { I(0x18, 1, 0, 0, 0x55667788), I(0, 0, 0, 0, 0x11223344) },
	  "(18) r1 = 0x1122334455667788", "lddw %r1, 0x1122334455667788" },
	{ { I(0x18, 1, 0, 0, -1), I(0, 0, 0, 0, -1) }, "(18) r1 = 0xffffffffffffffff",
	  "lddw %r1, 0xffffffffffffffff" },
	{ { I(0x15, 3, 0, 1, 16) }, "(15) if r3 == 0x10 goto pc+1", "jeq %r3, 16, +1" },
	{ { I(0x6e, 3, 1, 0, 0) }, "(6e) if w3 s> w1 goto pc+0", "jsgt32 %r3, %r1, +0" },
	{ { I(0x05, 0, 0, 0, 0) }, "(05) goto pc+0", "ja +0" },
	{ { I(0x85, 0, 0, 0, 5) }, "(85) call bpf_ktime_get_ns#5", "call 5" },
	/* Linux 6.2's helpers, past the 6.1 header's list (ebpf_exporter's cgroup_id_map
	 * level-2 log; bpfrt printed "call unknown#210") */
	{ { I(0x85, 0, 0, 0, 210) }, "(85) call bpf_cgrp_storage_get#210", "call 210" },
	{ { I(0x85, 0, 1, 0, 4) }, "(85) call pc+4", "call local +4" },
	{ { I(0xc7, 0, 0, 0, 3) }, "(c7) r0 s>>= 3", "arsh %r0, 3" },
	{ { I(0x30, 0, 0, 0, 3) }, "(30) r0 = *(u8 *)skb[3]", "ldabsb 3" },
	{ { I(0x48, 0, 6, 0, -2) }, "(48) r0 = *(u16 *)skb[r6 + -2]", "ldindh %r6, -2" },
	{ { I(0x95, 0, 0, 0, 0) }, "(95) exit", "exit" },
	{ { I(0x06, 0, 0, 0, 0) }, "(06) gotol pc+0", "ja32 +0" },
	/* not from the kernel's log (map addresses, helpers the kernel lacks) */
	{ { I(0x85, 0, 0, 0, 1) }, "(85) call bpf_map_lookup_elem#1", "call 1" },
	{ { I(0x85, 0, 0, 0, 100000) }, "(85) call unknown#100000", "call 100000" },
	{ { I(0x8d, 2, 0, 0, 0) }, "(8d) callx r2", "callx %r2" },
	{ { I(0x18, 1, 1, 0, 3), I(0, 0, 0, 0, 0) }, "(18) r1 = map[id:3]", "lddw %r1, map_fd 3" },
	{ { I(0x18, 1, 2, 0, 3), I(0, 0, 0, 0, 8) }, "(18) r1 = map[id:3][0]+8",
	  "lddw %r1, map_value 3 8" },
	{ { I(0xb4, 1, 0, 0, INT32_MIN) }, "(b4) w1 = -2147483648", "mov32 %r1, 0x80000000" },
	{ { I(0x55, 1, 0, -3, -1) }, "(55) if r1 != 0xffffffff goto pc-3", "jne %r1, -1, -3" },
};

static void test_text(void)
{
	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		const struct text_case *c = &text_cases[i];
		char buf[128];

		T_CASE(c->kernel);
		T_ASSERT(brt_disasm_insn(c->insn, 2, BRT_DISASM_KERNEL, buf, sizeof(buf)) > 0);
		T_EQ_STR(c->kernel, buf);
		T_ASSERT(brt_disasm_insn(c->insn, 2, BRT_DISASM_ASM, buf, sizeof(buf)) > 0);
		T_EQ_STR(c->asm_text, buf);
	}
}

struct bad_case {
	struct bpf_insn insn[2];
	size_t avail;
	const char *text;
};

static const struct bad_case bad_cases[] = {
	{ { I(0xff, 0, 0, 0, 0) }, 1,
	  "invalid: unknown opcode (code 0xff dst r0 src r0 off 0 imm 0)" },
	{ { I(0xbf, 11, 0, 0, 0) }, 1, "invalid: invalid dst register (code 0xbf dst r11" },
	{ { I(0x07, 1, 0, 1, 0) }, 1, "invalid: reserved field off is not 0" },
	{ { I(0x18, 1, 0, 0, 0) }, 1, "invalid: lddw is missing its second slot" },
	{ { I(0x18, 1, 0, 0, 0), I(0x95, 0, 0, 0, 0) }, 2,
	  "invalid: second slot of lddw has non-zero fields" },
	{ { I(0x95, 0, 0, 0, 0) }, 0, "invalid: no instruction" },
};

static void test_bad_input(void)
{
	char buf[128], tiny[8];

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];

		T_CASE(c->text);
		T_EQ_INT(-EINVAL, brt_disasm_insn(c->insn, c->avail, BRT_DISASM_KERNEL, buf,
						  sizeof(buf)));
		T_CONTAINS(c->text, buf);
		T_EQ_INT(-EINVAL, brt_disasm_insn(c->insn, c->avail, BRT_DISASM_ASM, buf,
						  sizeof(buf)));
		T_CONTAINS(c->text, buf);
	}
	T_CASE("truncation");
	memset(tiny, 'x', sizeof(tiny));
	T_EQ_INT(-ENOSPC, brt_disasm_insn(text_cases[0].insn, 1, BRT_DISASM_KERNEL, tiny, 5));
	T_EQ_STR("(bf)", tiny);
	T_EQ_INT('x', tiny[5]);
	T_EQ_INT(-ENOSPC, brt_disasm_insn(text_cases[0].insn, 1, BRT_DISASM_ASM, NULL, 0));

	T_CASE("public API");
	errno = 0;
	T_EQ_INT(1, bpfrt_disasm_insn(text_cases[0].insn, 1, BPFRT_DISASM_KERNEL, buf,
				      sizeof(buf)));
	T_EQ_STR("(bf) r6 = r1", buf);
	T_EQ_INT(2, bpfrt_disasm_insn(text_cases[21].insn, 2, BPFRT_DISASM_ASM, buf,
				      sizeof(buf)));
	T_EQ_INT(-EINVAL, bpfrt_disasm_insn(bad_cases[0].insn, 1, BPFRT_DISASM_ASM, buf,
					    sizeof(buf)));
	T_EQ_INT(EINVAL, errno);
	T_EQ_INT(-EINVAL, bpfrt_disasm_insn(NULL, 1, BPFRT_DISASM_ASM, buf, sizeof(buf)));
	T_EQ_INT(-EINVAL, bpfrt_disasm_insn(text_cases[0].insn, 1, (enum bpfrt_disasm_style)7,
					    buf, sizeof(buf)));
}

static void test_names(void)
{
	T_CASE("helper names");
	T_EQ_STR("bpf_map_lookup_elem", brt_isa_helper_name(BPF_FUNC_map_lookup_elem));
	T_EQ_STR("bpf_unspec", brt_isa_helper_name(0));
	T_ASSERT(brt_isa_helper_name(-1) == NULL);
	/* the last helpers (Linux 6.2's), past the 6.1 header's list */
	T_EQ_STR("bpf_cgrp_storage_get", brt_isa_helper_name(210));
	T_EQ_STR("bpf_cgrp_storage_delete", brt_isa_helper_name(211));
	T_ASSERT(brt_isa_helper_name(212) == NULL);
	/* every named helper maps back to its id, with or without the prefix */
	for (int32_t id = 1; id <= 211; id++) {
		const char *name = brt_isa_helper_name(id);

		T_ASSERT(name && brt_isa_helper_id(name, strlen(name)) == id);
		T_ASSERT(name && brt_isa_helper_id(name + 4, strlen(name) - 4) == id);
	}
	T_EQ_INT(-1, brt_isa_helper_id("bpf_nope", 8));

	T_CASE("lddw kinds");
	T_ASSERT(brt_isa_pseudo_name(0) == NULL);
	T_EQ_STR("map_fd", brt_isa_pseudo_name(BPF_PSEUDO_MAP_FD));
	for (unsigned k = 1; k <= BPF_PSEUDO_MAP_IDX_VALUE; k++) {
		const char *name = brt_isa_pseudo_name(k);

		T_ASSERT(name && brt_isa_pseudo_kind(name, strlen(name)) == (int)k);
	}
	T_ASSERT(brt_isa_pseudo_name(BPF_PSEUDO_MAP_IDX_VALUE + 1) == NULL);
	T_EQ_INT(-1, brt_isa_pseudo_kind("map", 3));
}

int main(void)
{
	test_every_row_round_trips();
	test_lddw_pseudo_round_trips();
	test_text();
	test_bad_input();
	test_names();
	return t_done();
}
