/* fuzz_asm.c - fuzz target for the assembler (src/isa/asm.c): any text must assemble or be
 * rejected with a "file:line:col: " message, never crash; every instruction it produces
 * that decodes must come back to the same bytes through the disassembler's asm style.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "isa/isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[256], line[128];
	struct bpf_insn *insns, *back;
	size_t n, m;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (brt_asm(text, "f.s", &insns, &n, err, sizeof(err))) {
		if (strncmp(err, "f.s:", 4) || insns || n)
			abort();
		free(text);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int slots = brt_disasm_insn(&insns[i], n - i, BRT_DISASM_ASM, line, sizeof(line));

		if (slots <= 0)
			continue;
		if (brt_asm(line, "rt.s", &back, &m, err, sizeof(err)) || m != (size_t)slots ||
		    memcmp(back, &insns[i], m * sizeof(*back)))
			abort();
		free(back);
		i += (size_t)slots - 1;
	}
	free(insns);
	free(text);
	return 0;
}
