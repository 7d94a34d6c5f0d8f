/* dump.c - show generated code: each eBPF instruction followed by the x86-64 instructions
 * it became (capstone, Intel syntax), for `bpfrt prog dump jited` and test failures.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#ifdef BPFRT_HAVE_CAPSTONE
/* capstone.h defines an enumerator as 1 << 31, which -Wpedantic rejects */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <capstone.h>
#pragma GCC diagnostic pop
#endif

#include "jit/x86_64/x86.h"

static void print_bytes(const uint8_t *p, size_t n, FILE *out)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x ", p[i]);
}

void brt_jit_disasm(const uint8_t *code, size_t size, uint64_t addr, const char *indent,
		    unsigned flags, FILE *out)
{
#ifdef BPFRT_HAVE_CAPSTONE
	csh h;
	cs_insn *ci;
	size_t count;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK) {
		count = cs_disasm(h, code, size, addr, 0, &ci);
		for (size_t i = 0; i < count; i++) {
			fprintf(out, "%s%4" PRIx64 ":  ", indent, ci[i].address);
			if (flags & BRT_JIT_DUMP_OPCODES) {
				print_bytes(ci[i].bytes, ci[i].size, out);
				fprintf(out, "%*s", (int)(3 * (12 - (ci[i].size % 12))), "");
			}
			fprintf(out, "%s %s\n", ci[i].mnemonic, ci[i].op_str);
		}
		cs_free(ci, count);
		cs_close(&h);
		return;
	}
#endif
	(void)flags;
	for (size_t i = 0; i < size; i += 16) {
		fprintf(out, "%s%4" PRIx64 ":  ", indent, addr + i);
		print_bytes(code + i, size - i < 16 ? size - i : 16, out);
		fputc('\n', out);
	}
}

int brt_jit_dump(const struct brt_jit_prog *p, const struct bpf_insn *insns, FILE *out,
		 unsigned flags)
{
	size_t start = p->n ? p->insn_off[0] : p->code_size;

	if (start)
		brt_jit_disasm(p->code, start, 0, "      ", flags, out);
	for (size_t pc = 0; pc < p->n; pc++) {
		const struct bpf_insn *insn = &insns[pc];
		enum brt_op op = brt_isa_lookup(insn);
		size_t end = pc + 1 < p->n ? p->insn_off[pc + 1] : p->code_size;

		fprintf(out, "%4zu: %-18s dst r%u src r%u off %d imm %d\n", pc,
			op == BRT_OP_INVALID ? "(lddw slot 2)" : brt_ops[op].mnem, insn->dst_reg,
			insn->src_reg, insn->off, insn->imm);
		if (end > p->insn_off[pc])
			brt_jit_disasm(p->code + p->insn_off[pc], end - p->insn_off[pc],
				       p->insn_off[pc], "      ", flags, out);
	}
	return ferror(out) ? -EIO : 0;
}
