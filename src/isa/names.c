/* names.c - names of the closed sets an instruction refers to besides its opcode (which
 * insn.def names): helpers ("bpf_map_lookup_elem" is id 1, from the uapi header's own list)
 * and the src_reg kinds of lddw ("map_fd" is 1).  Shared by the assembler and the
 * disassembler so both spell them the same way.
 */
#include <string.h>

#include "isa/isa.h"

/* The 6.1 form of the macro: rows FN(name) separated by commas. */
#define HELPER_NAME(x) [BPF_FUNC_##x] = "bpf_" #x
static const char *const helper_names[] = { __BPF_FUNC_MAPPER(HELPER_NAME) };
#undef HELPER_NAME

#define N_HELPERS (sizeof(helper_names) / sizeof(helper_names[0]))

/* The helpers after the 6.1 header's list: Linux 6.2 added these two and then no helper
 * was added again (new functions are kfuncs), so the kernel's own list ends here. */
static const char *const later_helpers[] = { "bpf_cgrp_storage_get", "bpf_cgrp_storage_delete" };
#define FIRST_LATER 210
#define N_LATER (sizeof(later_helpers) / sizeof(later_helpers[0]))

const char *brt_isa_helper_name(int32_t id)
{
	if (id >= 0 && (size_t)id < N_HELPERS && helper_names[id])
		return helper_names[id];
	if (id >= FIRST_LATER && (size_t)(id - FIRST_LATER) < N_LATER)
		return later_helpers[id - FIRST_LATER];
	return NULL;
}

int32_t brt_isa_helper_id(const char *name, size_t len)
{
	/* the bpf_ prefix is optional: "map_lookup_elem" works too */
	if (len > 4 && !strncmp(name, "bpf_", 4)) {
		name += 4;
		len -= 4;
	}
	for (int32_t id = 1; id < FIRST_LATER + (int32_t)N_LATER; id++) {
		const char *n = brt_isa_helper_name(id);

		if (n && strlen(n) == len + 4 && !strncmp(n + 4, name, len))
			return id;
	}
	return -1;
}

/* The lddw src_reg kinds as the asm syntax spells them. */
static const char *const pseudo_names[] = {
	[BPF_PSEUDO_MAP_FD] = "map_fd",	  [BPF_PSEUDO_MAP_VALUE] = "map_value",
	[BPF_PSEUDO_BTF_ID] = "btf_id",	  [BPF_PSEUDO_FUNC] = "func",
	[BPF_PSEUDO_MAP_IDX] = "map_idx", [BPF_PSEUDO_MAP_IDX_VALUE] = "map_idx_value",
};

#define N_PSEUDO (sizeof(pseudo_names) / sizeof(pseudo_names[0]))

const char *brt_isa_pseudo_name(unsigned src_reg)
{
	return src_reg < N_PSEUDO ? pseudo_names[src_reg] : NULL;
}

int brt_isa_pseudo_kind(const char *name, size_t len)
{
	for (unsigned k = 1; k < N_PSEUDO; k++)
		if (pseudo_names[k] && strlen(pseudo_names[k]) == len &&
		    !strncmp(pseudo_names[k], name, len))
			return (int)k;
	return -1;
}
