/* engines.c - engine names, from the rows of engines.def: the one place where an engine
 * is spelled, for the environment default of BPF_PROG_LOAD, the CLI and messages.
 */
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "vm/vm.h"

static const struct {
	enum bpfrt_engine id;
	const char *name;
	const char *alias;
} engines[] = {
#define ENGINE(id, name, alias) { id, name, alias },
#include "vm/engines.def"
#undef ENGINE
};

const char *brt_vm_engine_name(enum bpfrt_engine e)
{
	for (size_t i = 0; i < BRT_ARRAY_SIZE(engines); i++)
		if (engines[i].id == e)
			return engines[i].name;
	return e == BPFRT_ENGINE_DEFAULT ? "default" : NULL;
}

int brt_vm_engine_parse(const char *s, int aliases, enum bpfrt_engine *out)
{
	for (size_t i = 0; s && i < BRT_ARRAY_SIZE(engines); i++) {
		if (!strcmp(s, engines[i].name) ||
		    (aliases && engines[i].alias && !strcmp(s, engines[i].alias))) {
			*out = engines[i].id;
			return 0;
		}
	}
	return -1;
}

const char *brt_vm_engine_list(void)
{
	/* ", interp, checked, jit" without its first separator */
	static const char list[] =
#define ENGINE(id, name, alias) ", " name
#include "vm/engines.def"
#undef ENGINE
		;

	return list + 2;
}
