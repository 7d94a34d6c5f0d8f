/* rodata.c - loads from frozen read-only arrays (.rodata) are constants, as the kernel's
 * bpf_map_direct_read() makes them: branches on them are decided, so paths the data rules
 * out are never walked.  Not frozen, not BPF_F_RDONLY_PROG, a variable offset or more
 * than one element: unknown scalars (or ENOTSUPP). */
#include "case.h"

#define RO(...) { BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_RDONLY_PROG, 1, { __VA_ARGS__ } }
#define RO_NOT_FROZEN(...) { BPF_MAP_TYPE_ARRAY, 4, 8, 1, BPF_F_RDONLY_PROG, 0, { __VA_ARGS__ } }
#define RW_FROZEN(...) { BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, 1, { __VA_ARGS__ } }
#define RO2(...) { BPF_MAP_TYPE_ARRAY, 4, 8, 2, BPF_F_RDONLY_PROG, 1, { __VA_ARGS__ } }

/* r0 = byte 0 of the value; equal to 5: exit, else read past the value's end */
#define BYTE_IS_5(ld) PROG(LD_MAP_VALUE(1, 0, 0), ld, JIMM(BPF_JEQ, 0, 5, 1), \
			   LDX(BPF_DW, 0, 1, 8), MOV64_IMM(0, 0), EXIT())
/* walk the string at the value's start until its NUL, at most 16 bytes (rodata_str) */
#define STRLEN PROG(LD_MAP_VALUE(6, 0, 0), MOV64_IMM(7, 0), MOV64_REG(1, 6), \
		    ALU64_REG(BPF_ADD, 1, 7), LDX(BPF_B, 2, 1, 0), JIMM(BPF_JEQ, 2, 0, 2), \
		    ALU64_IMM(BPF_ADD, 7, 1), JIMM(BPF_JLT, 7, 16, -6), MOV64_REG(0, 7), EXIT())

static const struct vcase cases[] = {
	{ "rodata/byte_decides_branch", BYTE_IS_5(LDX(BPF_B, 0, 1, 0)), .maps = { RO(5) } },
	{ "rodata/byte_other_value", BYTE_IS_5(LDX(BPF_B, 0, 1, 0)), .maps = { RO(6) } },
	{ "rodata/word_decides_branch", BYTE_IS_5(LDX(BPF_W, 0, 1, 0)), .maps = { RO(5, 0, 0, 0) } },
	{ "rodata/word_high_bytes", BYTE_IS_5(LDX(BPF_W, 0, 1, 0)), .maps = { RO(5, 0, 1, 0) } },
	{ "rodata/dw_at_offset", BYTE_IS_5(LDX(BPF_DW, 0, 1, 0)), .maps = { RO(5, 0, 0, 0, 0, 0, 0, 0) } },
	{ "rodata/half_at_2", PROG(LD_MAP_VALUE(1, 0, 0), LDX(BPF_H, 0, 1, 2), JIMM(BPF_JEQ, 0, 0x0201, 1),
				   LDX(BPF_DW, 0, 1, 8), MOV64_IMM(0, 0), EXIT()),
	  .maps = { RO(9, 9, 1, 2) } },
	{ "rodata/not_frozen", BYTE_IS_5(LDX(BPF_B, 0, 1, 0)), .maps = { RO_NOT_FROZEN(5) } },
	{ "rodata/frozen_not_rdonly", BYTE_IS_5(LDX(BPF_B, 0, 1, 0)), .maps = { RW_FROZEN(5) } },
	{ "rodata/two_elements", BYTE_IS_5(LDX(BPF_B, 0, 1, 0)), .maps = { RO2(5) } },
	{ "rodata/sign_extended", PROG(LD_MAP_VALUE(1, 0, 0), LDXSX(BPF_B, 0, 1, 0),
				       JIMM(BPF_JEQ, 0, -1, 1), LDX(BPF_DW, 0, 1, 8), MOV64_IMM(0, 0),
				       EXIT()),
	  .maps = { RO(0xff) } },
	{ "rodata/zero_extended", PROG(LD_MAP_VALUE(1, 0, 0), LDX(BPF_B, 0, 1, 0),
				       JIMM(BPF_JEQ, 0, 255, 1), LDX(BPF_DW, 0, 1, 8), MOV64_IMM(0, 0),
				       EXIT()),
	  .maps = { RO(0xff) } },
	{ "rodata/strlen_hi", STRLEN, .maps = { RO('h', 'i', 0) } },
	{ "rodata/strlen_no_nul", STRLEN, .maps = { RO('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h') } },
	{ "rodata/strlen_not_frozen", STRLEN, .maps = { RO_NOT_FROZEN('h', 'i', 0) } },
	{ "rodata/var_offset", PROG(LD_MAP_VALUE(1, 0, 0), LDX(BPF_W, 2, 1, 0), ALU64_IMM(BPF_AND, 2, 1),
				    ALU64_REG(BPF_ADD, 1, 2), LDX(BPF_B, 0, 1, 0), JIMM(BPF_JEQ, 0, 5, 1),
				    LDX(BPF_DW, 0, 1, 8), MOV64_IMM(0, 0), EXIT()),
	  .maps = { RO(5, 5) } },
	{ "rodata/write_refused", PROG(LD_MAP_VALUE(1, 0, 0), ST(BPF_B, 1, 0, 1), MOV64_IMM(0, 0), EXIT()),
	  .maps = { RO(5) } },
	{ "rodata/lookup_value", PROG(LOOKUP_MAP0, JIMM(BPF_JEQ, 0, 0, 4), LDX(BPF_B, 1, 0, 0),
				      JIMM(BPF_JEQ, 1, 5, 2), LDX(BPF_DW, 1, 0, 8), MOV64_IMM(0, 0),
				      EXIT()),
	  .maps = { RO(5) } },
};

void vcases_rodata(struct vcase_list *l)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		vc_add(l, &cases[i]);
}
