/* test_random.c - differential test of the JIT against the checked interpreter: a fixed
 * series of random memory-safe programs (progen.h), each run by both engines on the same
 * input; r0 and the input buffer afterwards must be identical.  Deterministic (fixed seed),
 * so a failure reproduces; the failing program is printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "progen.h"

#define PROGRAMS 3000

int main(void)
{
	static struct pg_prog prog;
	struct pg_rand r = { .state = 0x9e3779b97f4a7c15ull };
	uint8_t input[PG_MEM];
	int ran = 0, skipped = 0;

	for (int i = 0; i < PROGRAMS; i++) {
		int rc;

		for (size_t b = 0; b < PG_MEM; b += 8) {
			uint64_t v = pg_next(&r);

			memcpy(input + b, &v, 8);
		}
		pg_generate(&r, &prog, 1 + pg_below(&r, PG_MAX_BODY));
		rc = pg_compare(&prog, input);
		if (rc < 0) {
			T_CASE("random program");
			T_FAIL("program %d (see above)", i);
			break;
		}
		ran += rc;
		skipped += !rc;
	}
	printf("%d programs agree, %d skipped (interpreter fault)\n", ran, skipped);
	T_CASE("enough programs ran");
	T_ASSERT(ran > PROGRAMS * 9 / 10);
	return t_done();
}
