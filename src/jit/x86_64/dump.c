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

#ifdef BPFRT_HAVE_CAPSTONE
#include "util/dl.h"

/* capstone is opened on first use, not linked: its tables cost every process that links
 * libbpfrt ~6 ms of relocations at start-up (util/dl.h). */
static struct {
	__typeof__(&cs_open) open;
	__typeof__(&cs_disasm) disasm;
	__typeof__(&cs_free) free;
	__typeof__(&cs_close) close;
} cs;
static const char *const cs_names[] = { "cs_open", "cs_disasm", "cs_free", "cs_close", NULL };
static const char *const cs_sonames[] = { "libcapstone.so.4", "libcapstone.so.5",
					  "libcapstone.so", NULL };
static struct brt_dl_lib cs_lib = { cs_sonames, cs_names, &cs, 0, "" };
_Static_assert(sizeof(cs) == 4 * sizeof(void *), "one address per call");

/* 1 when capstone's calls are in cs (else the dump falls back to raw bytes) */
static int cs_ready(void)
{
	return !brt_dl_load(&cs_lib, NULL, 0);
}
#endif

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

	if (cs_ready() && cs.open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK) {
		count = cs.disasm(h, code, size, addr, 0, &ci);
		for (size_t i = 0; i < count; i++) {
			fprintf(out, "%s%4" PRIx64 ":  ", indent, ci[i].address);
			if (flags & BRT_JIT_DUMP_OPCODES) {
				print_bytes(ci[i].bytes, ci[i].size, out);
				fprintf(out, "%*s", (int)(3 * (12 - (ci[i].size % 12))), "");
			}
			fprintf(out, "%s %s\n", ci[i].mnemonic, ci[i].op_str);
		}
		cs.free(ci, count);
		cs.close(&h);
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

/* Where the code of instruction pc starts: its function's prologue for a first
 * instruction.  *k walks the function list in step with pc. */
static size_t insn_start(const struct brt_jit_prog *p, size_t pc, size_t k)
{
	if (pc >= p->n)
		return p->stubs_off;
	if (k < p->nfuncs && p->func_insn[k] == pc)
		return p->func_entry[k];
	return p->insn_off[pc];
}

static const char *lookup_note(const struct brt_jit_prog *p, size_t pc)
{
	if (p->lookup_kind && (p->lookup_kind[pc] & LOOKUP_CONST_KEY))
		return "hash probe inlined, constant key hashed at compile time (the map's "
		       "lookup called past "
		       JIT_STR(JIT_PROBE_CHAIN) " elements of the chain)";
	switch (p->lookup_kind ? LOOKUP_KIND(p->lookup_kind[pc]) : 0) {
	case BRT_JIT_LOOKUP_ARRAY:
		return "array lookup inlined";
	case BRT_JIT_LOOKUP_OP:
		return "the map type's lookup, called directly";
	case BRT_JIT_LOOKUP_HASH:
		return "hash probe inlined (the map's lookup called past "
		       JIT_STR(JIT_PROBE_CHAIN) " elements of the chain)";
	case BRT_JIT_LOOKUP_PERCPU_ARRAY:
		return "per-CPU array lookup inlined (the map's lookup called past its CPUs)";
	default:
		return "";
	}
}

int brt_jit_dump(const struct brt_jit_prog *p, const struct bpf_insn *insns, FILE *out,
		 unsigned flags)
{
	const char *pad = "        ";
	char line[160];
	size_t k = 0;

	for (size_t pc = 0; pc < p->n; pc++) {
		size_t start = p->insn_off[pc], end;
		int slots;

		if (k < p->nfuncs && p->func_insn[k] == pc) {
			fprintf(out, "%s; %s at insn %zu\n", pc ? "\n" : "",
				pc ? "function" : "main program", pc);
			brt_jit_disasm(p->code + p->func_entry[k], start - p->func_entry[k],
				       p->func_entry[k], pad, flags, out);
			k++;
		}
		slots = brt_disasm_insn(&insns[pc], p->n - pc, BRT_DISASM_KERNEL, line,
					sizeof(line));
		fprintf(out, "%4zu: %s\n", pc, line);
		if (*lookup_note(p, pc))
			fprintf(out, "%s; %s\n", pad, lookup_note(p, pc));
		if (slots == 2)
			pc++;
		end = insn_start(p, pc + 1, k);
		if (end > start)
			brt_jit_disasm(p->code + start, end - start, start, pad, flags, out);
	}
	if (p->stubs_off < p->code_size) {
		fprintf(out, "\n; shared exits: %s\n", p->pkt_entry_off ?
			"packet load out of bounds, exit (next packet of a batch, or return)" :
			p->seeds_prandom ? "a thread's first bpf_get_prandom_u32 seeded, helper "
					   "stopped the run, packet load out of bounds" :
			"helper stopped the run, packet load out of bounds");
		brt_jit_disasm(p->code + p->stubs_off, p->code_size - p->stubs_off, p->stubs_off,
			       pad, flags, out);
	}
	return ferror(out) ? -EIO : 0;
}
