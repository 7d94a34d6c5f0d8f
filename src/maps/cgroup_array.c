/* cgroup_array.c - BPF_MAP_TYPE_CGROUP_ARRAY: slots holding cgroups, which user space
 * stores by the fd of a cgroup v2 directory (the kernel refuses any other fd: -EBADF)
 * and programs test with bpf_current_task_under_cgroup() (src/trace/cgroup.c).  A slot
 * keeps the cgroup's id (its cgroupfs inode number, what the kernel's cgroup id is),
 * 0 when empty; user space cannot read it back (lookups are -ENOTSUPP, as in the kernel,
 * which has no syscall lookup for this fd array).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "maps/maps.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int cga_alloc_check(const union bpf_attr *attr)
{
	union bpf_attr a = *attr;

	/* an fd array: the prog array's rules; only plain arrays may be mmapable or inner */
	if (attr->map_flags & (BPF_F_MMAPABLE | BPF_F_INNER_MAP))
		return -EINVAL;
	a.map_type = BPF_MAP_TYPE_PROG_ARRAY;
	return brt_prog_array_map_ops.alloc_check(&a);
}

static int cga_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = (uint64_t)map->max_entries * 8;
	return 0;
}

static _Atomic uint64_t *cga_slot(struct brt_map *map, const void *key)
{
	uint32_t i;

	memcpy(&i, key, 4);
	return i < map->max_entries ? (_Atomic uint64_t *)map->data + i : NULL;
}

static int cga_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	_Atomic uint64_t *slot;
	struct statfs sfs;
	struct stat st;
	int32_t fd;

	if (flags != BPF_ANY)
		return -EINVAL;
	slot = cga_slot(map, key);
	if (!slot)
		return -E2BIG;
	memcpy(&fd, value, 4);
	if (fstatfs(fd, &sfs) || fstat(fd, &st) || sfs.f_type != CGROUP2_SUPER_MAGIC ||
	    !S_ISDIR(st.st_mode))
		return -EBADF;
	atomic_store_explicit(slot, (uint64_t)st.st_ino, memory_order_release);
	return 0;
}

static int cga_delete(struct brt_map *map, const void *key)
{
	_Atomic uint64_t *slot = cga_slot(map, key);

	if (!slot)
		return -E2BIG;
	return atomic_exchange_explicit(slot, 0, memory_order_acq_rel) ? 0 : -ENOENT;
}

int brt_cgroup_array_get(struct brt_map *map, uint32_t i, uint64_t *cgroup_id)
{
	if (map->type != BPF_MAP_TYPE_CGROUP_ARRAY)
		return -EINVAL;
	if (i >= map->max_entries)
		return -E2BIG;
	*cgroup_id = atomic_load_explicit((_Atomic uint64_t *)map->data + i, memory_order_acquire);
	return *cgroup_id ? 0 : -EAGAIN;
}

const struct brt_map_ops brt_cgroup_array_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.alloc_check = cga_alloc_check,
	.data_size = cga_data_size,
	.update = cga_update,
	.delete = cga_delete,
	.get_next_key = brt_array_get_next_key,
};
