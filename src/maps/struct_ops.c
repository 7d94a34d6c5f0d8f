/* struct_ops.c - BPF_MAP_TYPE_STRUCT_OPS maps (the kernel's bpf_struct_ops.c): one entry,
 * key 0, whose value is the kernel's bpf_struct_ops_<name> (a common header of refcount
 * and state, then the struct of operations with program fds in its function pointers).
 * MAP_CREATE's own checks are here; the value type is checked against the kernel's BTF one
 * layer up (api/map_cmds.c), which names the registered structs (btf/struct_ops.def).
 *
 * The kernel registers the struct with the kernel (a TCP congestion control, ...) when
 * the value is written (or, BPF_F_LINK, at BPF_LINK_CREATE).  A process cannot register
 * kernel callbacks, so the value stays in its initial state: lookups answer zeroes as the
 * kernel's do before an update, get_next_key and delete answer as for an unregistered
 * map, and an update that passes the kernel's first checks is refused with EOPNOTSUPP
 * rather than pretending to register.
 */
#include <errno.h>
#include <string.h>

#include "isa/isa.h"
#include "maps/maps.h"

static int so_alloc_check(const union bpf_attr *attr)
{
	if (attr->key_size != 4 || attr->max_entries != 1 ||
	    (attr->map_flags & ~(BRT_F_LINK | BRT_F_VTYPE_BTF_OBJ_FD)) ||
	    !attr->btf_vmlinux_value_type_id)
		return -EINVAL;
	return 0;
}

static int so_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = map->value_size ? map->value_size : 8;
	return 0;
}

static int so_init(struct brt_map *map)
{
	memset(map->data, 0, map->data_size);
	return 0;
}

static int so_attach(struct brt_map *map)
{
	return map->data_size >= map->value_size ? 0 : -EINVAL;
}

/* bpf_struct_ops_map_sys_lookup_elem(): key 0 only; unregistered, all zeroes */
static int so_copy_value(struct brt_map *map, const void *key, void *value)
{
	uint32_t k;

	memcpy(&k, key, 4);
	if (k)
		return -ENOENT;
	memset(value, 0, map->value_size);
	return 0;
}

/* bpf_struct_ops_map_update_elem()'s checks before it looks at the members: flags, key,
 * a value that claims a state or references */
static int so_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	uint64_t common;
	uint32_t k;

	memcpy(&k, key, 4);
	if (flags)
		return -EINVAL;
	if (k)
		return -E2BIG;
	memcpy(&common, value, map->value_size < 8 ? map->value_size : 8);
	if (map->value_size >= 8 && common)
		return -EINVAL;
	return -EOPNOTSUPP; /* registering a kernel struct of operations: not from a process */
}

/* bpf_struct_ops_map_delete_elem(): a link's map is never deleted from; an unregistered
 * one has nothing to delete */
static int so_delete(struct brt_map *map, const void *key)
{
	(void)key;
	return map->flags & BRT_F_LINK ? -EOPNOTSUPP : -ENOENT;
}

static int so_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	uint32_t k = 0;

	(void)map;
	if (key)
		memcpy(&k, key, 4);
	if (key && !k)
		return -ENOENT;
	memset(next_key, 0, 4);
	return 0;
}

const struct brt_map_ops brt_struct_ops_map_ops = {
	.alloc_check = so_alloc_check,
	.data_size = so_data_size,
	.init = so_init,
	.attach = so_attach,
	.copy_value = so_copy_value,
	.update = so_update,
	.delete = so_delete,
	.get_next_key = so_get_next_key,
};
