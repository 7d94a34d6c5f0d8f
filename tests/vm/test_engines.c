/* test_engines.c - the engine names of engines.def: every engine round-trips through its
 * name, aliases only where asked for, unknown names and values are refused.
 */
#include "harness.h"
#include "vm/vm.h"

int main(void)
{
	static const struct {
		const char *name;
		int aliases;
		int ret;
		enum bpfrt_engine e;
	} cases[] = {
		{ "interp", 0, 0, BPFRT_ENGINE_INTERP },
		{ "checked", 0, 0, BPFRT_ENGINE_CHECKED },
		{ "jit", 0, 0, BPFRT_ENGINE_JIT },
		{ "fast", 1, 0, BPFRT_ENGINE_INTERP },
		{ "fast", 0, -1, BPFRT_ENGINE_DEFAULT },
		{ "default", 1, -1, BPFRT_ENGINE_DEFAULT },
		{ "JIT", 1, -1, BPFRT_ENGINE_DEFAULT },
		{ "", 1, -1, BPFRT_ENGINE_DEFAULT },
		{ NULL, 1, -1, BPFRT_ENGINE_DEFAULT },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum bpfrt_engine e = BPFRT_ENGINE_DEFAULT;

		T_CASE(cases[i].name ? cases[i].name : "(null)");
		T_EQ_INT(cases[i].ret, brt_vm_engine_parse(cases[i].name, cases[i].aliases, &e));
		T_EQ_INT(cases[i].e, e);
	}
	T_CASE("names");
	for (int e = BPFRT_ENGINE_INTERP; e <= BPFRT_ENGINE_JIT; e++) {
		enum bpfrt_engine back = BPFRT_ENGINE_DEFAULT;
		const char *name = brt_vm_engine_name((enum bpfrt_engine)e);

		T_ASSERT(name != NULL);
		T_EQ_INT(0, brt_vm_engine_parse(name, 0, &back));
		T_EQ_INT(e, back);
		T_CONTAINS(name ? name : "?", brt_vm_engine_list());
	}
	T_EQ_STR("default", brt_vm_engine_name(BPFRT_ENGINE_DEFAULT));
	T_ASSERT(brt_vm_engine_name((enum bpfrt_engine)7) == NULL);
	T_EQ_STR("interp, checked, jit", brt_vm_engine_list());
	return t_done();
}
