/* helpers.c - the default helper table, generated from helpers.def (prototypes for the
 * verifier, functions by id for the engines), and the generic helpers that need nothing
 * but the host: time, random numbers, CPU and NUMA ids.
 */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "util/util.h"
#include "vm/vm.h"

/* Rows name their function; declaring each here spares this file the other folders'
 * headers (a row's folder declares it too, with the same type). */
#define HELPER(id, name, fn, gpl, ret, a1, a2, a3, a4, a5)                                       \
	uint64_t fn(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, struct bpfrt_run_ctx *);
#include "vm/helpers.def"
#undef HELPER

static const struct brt_helper_proto protos[] = {
#define HELPER(id_, name_, fn_, gpl, ret_, a1, a2, a3, a4, a5)                                   \
	[id_] = { .id = (id_),                                                                \
		  .name = #name_,                                                             \
		  .fn = fn_,                                                                  \
		  .gpl_only = (gpl),                                                          \
		  .ret = BRT_RET_##ret_,                                                      \
		  .args = { BRT_ARG_##a1, BRT_ARG_##a2, BRT_ARG_##a3, BRT_ARG_##a4,         \
			    BRT_ARG_##a5 } },
#include "vm/helpers.def"
#undef HELPER
};

static const brt_helper_fn fns[BRT_ARRAY_SIZE(protos)] = {
#define HELPER(id_, name_, fn_, gpl, ret_, a1, a2, a3, a4, a5) [id_] = fn_,
#include "vm/helpers.def"
#undef HELPER
};

const struct brt_helper_proto *brt_helper_proto_get(uint32_t id)
{
	if (id >= BRT_ARRAY_SIZE(protos) || !protos[id].fn)
		return NULL;
	return &protos[id];
}

const brt_helper_fn *brt_helper_default_table(size_t *n)
{
	*n = BRT_ARRAY_SIZE(fns);
	return fns;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t brt_helper_ktime_get_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t brt_helper_ktime_get_boot_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return clock_ns(CLOCK_BOOTTIME);
}

/* One xorshift64* state per thread, seeded from the clock and the state's address so
 * threads started together still differ.  Not cryptographic, like the kernel's. */
static _Thread_local uint64_t prandom_state;

uint64_t brt_helper_get_prandom_u32(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint64_t x = prandom_state;

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	if (!x)
		x = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)&prandom_state ^
		    0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	prandom_state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

uint64_t brt_helper_get_smp_processor_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	int cpu = sched_getcpu();

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return cpu < 0 ? 0 : (uint64_t)cpu;
}

uint64_t brt_helper_get_numa_node_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}
