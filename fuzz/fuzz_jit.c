/* fuzz_jit.c - differential fuzz target for the JIT (src/jit/): the input's first 64 bytes
 * are the program's input buffer, the rest drives the generator of memory-safe random
 * programs (tests/jit/progen.h); the checked interpreter and the JIT must return the same
 * r0 and leave the same buffer.  A mismatch aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../tests/jit/progen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pg_prog prog;
	uint8_t input[PG_MEM] = { 0 };
	struct pg_rand r = { .state = 0x2545f4914f6cdd1dull };
	size_t used = size < PG_MEM ? size : PG_MEM;

	memcpy(input, data, used);
	r.data = data + used;
	r.size = size - used;
	pg_generate(&r, &prog, 1 + pg_below(&r, PG_MAX_BODY));
	if (pg_compare(&prog, input) < 0)
		abort();
	return 0;
}
