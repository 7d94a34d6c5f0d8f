/* test_helpers.c - the generic helpers' results (their rows in the registry are checked
 * by tests/helpers/test_registry.c).
 */
#include <sched.h>

#include "vm/vm.h"
#include "harness.h"

int main(void)
{
	uint64_t a, b, all_or = 0, all_and = UINT64_MAX;

	T_CASE("ktime_get_ns moves forward");
	a = brt_helper_ktime_get_ns(0, 0, 0, 0, 0, NULL);
	b = brt_helper_ktime_get_ns(0, 0, 0, 0, 0, NULL);
	T_ASSERT(a > 0 && b >= a);
	T_CASE("prandom is 32-bit and varies");
	for (int i = 0; i < 64; i++) {
		uint64_t v = brt_helper_get_prandom_u32(0, 0, 0, 0, 0, NULL);

		T_ASSERT(v <= UINT32_MAX);
		all_or |= v;
		all_and &= v;
	}
	T_ASSERT(all_or != all_and);
	T_CASE("cpu id");
	T_ASSERT(brt_helper_get_smp_processor_id(0, 0, 0, 0, 0, NULL) < 4096);
	return t_done();
}
