/* test_random.c - differential test of the JIT against the interpreters: a fixed series
 * of random memory-safe programs (progen.h), each run by the checked interpreter, the fast
 * interpreter and the JIT (plain and constant-blinded) on the same input; r0 and the input
 * buffer afterwards must be identical.  Programs look keys up in three hash maps (progen.h
 * pg_maps: a hash, an LRU hash and a BPF_F_NO_PREALLOC hash map, each with a bucket
 * chain of PG_CHAIN keys), recreated with fresh random seeds every PG_MAPS_EVERY
 * programs, so the JIT's inline probe meets keys at every position of chains of every
 * shape.  Deterministic (fixed seed), so a failure
 * reproduces; the failing program is printed.
 * The long run (scripts/jit-differential.sh) sets BPFRT_JIT_DIFF_PROGRAMS (how many),
 * BPFRT_JIT_DIFF_SECONDS (stop after that long) and BPFRT_JIT_DIFF_SEED, and reads the
 * last line: "jit-diff: N programs, N agree, N skipped, N differ, S s, seed X".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "harness.h"
#include "progen.h"

#define PROGRAMS 3000
#define PG_MAPS_EVERY 4096

static unsigned long long env_num(const char *name, unsigned long long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	static struct pg_prog prog;
	unsigned long long seed = env_num("BPFRT_JIT_DIFF_SEED", 0x9e3779b97f4a7c15ull);
	unsigned long long programs = env_num("BPFRT_JIT_DIFF_PROGRAMS", PROGRAMS);
	double seconds = (double)env_num("BPFRT_JIT_DIFF_SECONDS", 0), start = now_s();
	struct pg_rand r = { .state = seed ? seed : 1 };
	uint8_t input[PG_MEM];
	unsigned long long i, ran = 0, skipped = 0, differ = 0;

	for (i = 0; i < programs; i++) {
		int rc;

		if (!(i % PG_MAPS_EVERY) && (rc = pg_maps_init())) {
			T_CASE("hash maps for the lookups");
			T_FAIL("pg_maps_init: %d", rc);
			break;
		}

		for (size_t b = 0; b < PG_MEM; b += 8) {
			uint64_t v = pg_next(&r);

			memcpy(input + b, &v, 8);
		}
		pg_generate(&r, &prog, 1 + pg_below(&r, PG_MAX_BODY));
		rc = pg_compare(&prog, input);
		if (rc < 0) {
			T_CASE("random program");
			T_FAIL("program %llu (see above)", i);
			differ++;
			break;
		}
		ran += (unsigned)rc;
		skipped += !rc;
		if (seconds > 0 && (i & 255) == 255 && now_s() - start > seconds) {
			i++;
			break;
		}
	}
	printf("%llu programs agree, %llu skipped (interpreter fault)\n", ran, skipped);
	printf("jit-diff: %llu programs, %llu agree, %llu skipped, %llu differ, %.0f s, seed %#llx\n",
	       i, ran, skipped, differ, now_s() - start, seed);
	pg_maps_free();
	T_CASE("enough programs ran");
	T_ASSERT(ran > i * 9 / 10);
	return t_done();
}
