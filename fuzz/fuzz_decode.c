/* fuzz_decode.c - fuzz target for the decoder (src/isa/decode.c): any byte string, cut into
 * 8-byte instructions, must decode or be rejected with a reason, never crash; the
 * whole-program check must agree with the per-instruction decoder.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "isa/isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size / sizeof(struct bpf_insn);
	struct bpf_insn *insns = malloc(n ? n * sizeof(*insns) : 1);
	int all_decode = 1;
	char err[256];

	if (!insns)
		return 0;
	memcpy(insns, data, n * sizeof(*insns));
	for (size_t i = 0; i < n; i++) {
		const char *reason = NULL;
		enum brt_op op = brt_isa_decode(&insns[i], n - i, &reason);

		if (op == BRT_OP_INVALID) {
			all_decode = 0;
			if (!reason)
				abort();
			continue;
		}
		if (op > BRT_OP_COUNT || brt_ops[op].opcode != insns[i].code)
			abort();
		if (brt_ops[op].shape == BRT_SHAPE_LDDW)
			i++;
		else
			(void)brt_isa_jump_target(&insns[i], op, i);
	}
	/* A program the checker accepts must consist of instructions the decoder accepts. */
	if (brt_isa_check_prog(insns, n, 4096, err, sizeof(err)) == 0 && !all_decode)
		abort();
	free(insns);
	return 0;
}
