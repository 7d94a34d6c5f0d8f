/* test_map.c - the map-type table of src/maps/map.c (map_types.def): every type the kernel
 * names has bpftool's name, offered or not; only offered types are found by name (what
 * `bpfrt map create type NAME` accepts); every offered type is known and every other one
 * is not.
 */
#include <errno.h>

#include "harness.h"
#include "maps/maps.h"

static const struct {
	uint32_t type;
	const char *name;
	int offered;
} cases[] = {
	{ BPF_MAP_TYPE_HASH, "hash", 1 },
	{ BPF_MAP_TYPE_PROG_ARRAY, "prog_array", 1 },
	{ BPF_MAP_TYPE_ARRAY_OF_MAPS, "array_of_maps", 1 },
	{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, "perf_event_array", 1 },
	{ BPF_MAP_TYPE_UNSPEC, "unspec", 0 },
	{ BPF_MAP_TYPE_DEVMAP, "devmap", 1 },
	{ BPF_MAP_TYPE_SOCKMAP, "sockmap", 1 },
	{ BPF_MAP_TYPE_INODE_STORAGE, "inode_storage", 1 },
	{ 32, "cgrp_storage", 1 }, /* BPF_MAP_TYPE_CGRP_STORAGE */
	{ BPF_MAP_TYPE_USER_RINGBUF, "user_ringbuf", 1 },
	{ BPF_MAP_TYPE_STRUCT_OPS, "struct_ops", 1 },
	{ 9999, "unknown", 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_CASE(cases[i].name);
		T_EQ_STR(cases[i].name, brt_map_type_name(cases[i].type));
		T_EQ_INT(cases[i].offered, brt_map_type_known(cases[i].type));
		T_EQ_INT(cases[i].offered ? (int)cases[i].type : -EINVAL,
			 brt_map_type_from_name(cases[i].name));
	}
	/* The table has no gaps below the last type the kernel header names. */
	T_CASE("every kernel type named");
	for (uint32_t t = 0; t <= BPF_MAP_TYPE_USER_RINGBUF; t++)
		if (!strcmp(brt_map_type_name(t), "unknown"))
			T_FAIL("map type %u has no name", t);
	return t_done();
}
