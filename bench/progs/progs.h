/* progs.h - what the benchmark workloads (flow.h, loop.h) need from their two builds:
 * clang -O2 -target bpf (progs.bpf.c, run by bpfrt and the kernel) and gcc -O2 natively
 * (bench.c), so both run exactly the same C.
 */
#ifndef BPFRT_BENCH_PROGS_H
#define BPFRT_BENCH_PROGS_H

#include <stdint.h>

#define BENCH_SLOT   128  /* bytes per packet slot in the rotating set */
#define BENCH_ROUNDS 1000 /* rounds of the arithmetic loop */

#define BENCH_INLINE static inline __attribute__((always_inline))

#ifdef __bpf__
/* One ldx each; unaligned addresses are fine on x86 hosts, for the kernel and for bpfrt. */
#define BENCH_LD16(p) (*(const uint16_t *)(const void *)(p))
#define BENCH_LD32(p) (*(const uint32_t *)(const void *)(p))
#define BENCH_LD64(p) (*(const uint64_t *)(const void *)(p))
#else
#include <string.h>
BENCH_INLINE uint16_t bench_ld16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}
BENCH_INLINE uint32_t bench_ld32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
BENCH_INLINE uint64_t bench_ld64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
#define BENCH_LD16(p) bench_ld16(p)
#define BENCH_LD32(p) bench_ld32(p)
#define BENCH_LD64(p) bench_ld64(p)
#endif

/* A 16-bit constant in network byte order, as a little-endian load sees it. */
#define BENCH_NET16(x) ((uint16_t)((((x)&0xffu) << 8) | (((x) >> 8) & 0xffu)))

#endif
