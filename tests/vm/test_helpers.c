/* test_helpers.c - the default helper table from helpers.def (prototypes by id, the table
 * the engines start from) and the generic helpers' results.
 */
#include <sched.h>

#include "vm/vm.h"
#include "harness.h"

static const struct {
	uint32_t id;
	const char *name;
} rows[] = {
	{ BPF_FUNC_ktime_get_ns, "ktime_get_ns" },
	{ BPF_FUNC_get_prandom_u32, "get_prandom_u32" },
	{ BPF_FUNC_get_smp_processor_id, "get_smp_processor_id" },
	{ BPF_FUNC_get_numa_node_id, "get_numa_node_id" },
	{ BPF_FUNC_ktime_get_boot_ns, "ktime_get_boot_ns" },
};

int main(void)
{
	const brt_helper_fn *table;
	size_t n;
	uint64_t a, b, all_or = 0, all_and = UINT64_MAX;

	table = brt_helper_default_table(&n);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct brt_helper_proto *p = brt_helper_proto_get(rows[i].id);

		T_CASE(rows[i].name);
		if (!p) {
			T_FAIL("no prototype for id %u", rows[i].id);
			continue;
		}
		T_EQ_STR(rows[i].name, p->name);
		T_EQ_INT(rows[i].id, p->id);
		T_EQ_INT(BRT_RET_INTEGER, p->ret);
		T_ASSERT(rows[i].id < n && table[rows[i].id] == p->fn);
	}
	T_CASE("unknown ids");
	T_ASSERT(brt_helper_proto_get(0) == NULL);
	T_ASSERT(brt_helper_proto_get(UINT32_MAX) == NULL);

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
