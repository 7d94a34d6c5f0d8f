/* fuzz_disasm.c - fuzz target for the disassembler (src/isa/disasm.c): any bytes, cut into
 * instructions, print in both styles without overflowing even a tiny buffer, and every
 * instruction that decodes re-assembles from its asm style to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "isa/isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size / sizeof(struct bpf_insn), m;
	struct bpf_insn *insns = malloc(n ? n * sizeof(*insns) : 1), *back;
	char text[128], tiny[9], err[256];

	if (!insns)
		return 0;
	memcpy(insns, data, n * sizeof(*insns));
	for (size_t i = 0; i < n; i++) {
		int k = brt_disasm_insn(&insns[i], n - i, BRT_DISASM_KERNEL, text, sizeof(text));
		int a = brt_disasm_insn(&insns[i], n - i, BRT_DISASM_ASM, text, sizeof(text));
		int t = brt_disasm_insn(&insns[i], n - i, BRT_DISASM_KERNEL, tiny, sizeof(tiny));

		if (k != a || (k < 0 && k != -22) || k == 0 || k > 2 || !memchr(tiny, 0, 9) ||
		    (t != k && t != -28 /* -ENOSPC */))
			abort();
		if (a < 0)
			continue;
		if (brt_asm(text, "rt.s", &back, &m, err, sizeof(err)) || m != (size_t)a ||
		    memcmp(back, &insns[i], m * sizeof(*back)))
			abort();
		free(back);
	}
	free(insns);
	return 0;
}
