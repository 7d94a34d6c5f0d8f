/* loop.h - the arithmetic-loop workload: BENCH_ROUNDS rounds of a xorshift generator
 * feeding a multiply/rotate accumulator, seeded from the first 8 packet bytes so the
 * compiler cannot fold it.  Unrolling is off so the eBPF build keeps a real loop (and the
 * kernel verifier walks a small one).
 */
#ifndef BPFRT_BENCH_LOOP_H
#define BPFRT_BENCH_LOOP_H

#include "progs.h"

BENCH_INLINE uint32_t bench_loop(uint64_t seed)
{
	uint64_t s = seed | 1, acc = 0;

#ifdef __clang__
#pragma clang loop unroll(disable)
#else
#pragma GCC unroll 1
#endif
	for (uint32_t i = 0; i < BENCH_ROUNDS; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		acc = (acc ^ s) * 0xd6e8feb86659fd93ull;
		acc = (acc << 23 | acc >> 41) + i;
	}
	return (uint32_t)(acc ^ acc >> 32);
}

#endif
