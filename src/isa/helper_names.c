/* helper_names.c - helper ids <-> names ("bpf_map_lookup_elem" is 1), taken from the
 * uapi header's own list, for the disassembler's kernel style and the assembler's
 * "call bpf_ktime_get_ns".
 */
#include <string.h>

#include "isa/isa.h"

/* The 6.1 form of the macro: rows FN(name) separated by commas. */
#define HELPER_NAME(x) [BPF_FUNC_##x] = "bpf_" #x
static const char *const helper_names[] = { __BPF_FUNC_MAPPER(HELPER_NAME) };
#undef HELPER_NAME

#define N_HELPERS (sizeof(helper_names) / sizeof(helper_names[0]))

const char *brt_isa_helper_name(int32_t id)
{
	if (id >= 0 && (size_t)id < N_HELPERS && helper_names[id])
		return helper_names[id];
	return NULL;
}

int32_t brt_isa_helper_id(const char *name, size_t len)
{
	/* the bpf_ prefix is optional: "map_lookup_elem" works too */
	if (len > 4 && !strncmp(name, "bpf_", 4)) {
		name += 4;
		len -= 4;
	}
	for (size_t id = 1; id < N_HELPERS; id++)
		if (helper_names[id] && strlen(helper_names[id]) == len + 4 &&
		    !strncmp(helper_names[id] + 4, name, len))
			return (int32_t)id;
	return -1;
}
