/* cgroup_storage.c - cgroup storage maps, shared and per-CPU (the kernel's
 * local_storage.c): a value per (cgroup, attach type) that the kernel creates when a
 * program using the map is attached to a cgroup, and that the program reaches with
 * bpf_get_local_storage().
 *
 * bpfrt attaches nothing to cgroups, so from bpf() the map is what the kernel's is before
 * any attach: lookups and updates find no storage (-ENOENT), get_next_key has no first
 * key, delete is refused as there (-EINVAL).  A test run (BPF_PROG_TEST_RUN) gets the
 * storage the kernel's test run allocates for it: one zeroed value (one per CPU for the
 * per-CPU type), kept in the map's region and cleared at the start of every test run
 * (brt_cgroup_storage_reset); test runs of two processes at once share it.
 */
#include <errno.h>
#include <string.h>

#include "maps/maps.h"
#include "vm/vm.h"

#define STORAGE_FLAGS                                                                  \
	(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)
/* the kernel's BPF_LOCAL_STORAGE_MAX_VALUE_SIZE (U16_MAX less an element's header,
 * rounded down to 8) and PCPU_MIN_UNIT_SIZE */
#define STORAGE_MAX_VALUE ((65535u - 80u) & ~7u)
#define PERCPU_MAX_VALUE 32768u

static int storage_alloc_check(const union bpf_attr *attr)
{
	uint32_t max = STORAGE_MAX_VALUE, f = attr->map_flags;

	if (attr->map_type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE && max > PERCPU_MAX_VALUE)
		max = PERCPU_MAX_VALUE;
	/* in the kernel's order: key, value, flags, max_entries */
	if (attr->key_size != sizeof(struct bpf_cgroup_storage_key) &&
	    attr->key_size != sizeof(uint64_t))
		return -EINVAL;
	if (!attr->value_size)
		return -EINVAL;
	if (attr->value_size > max)
		return -E2BIG;
	if ((f & ~STORAGE_FLAGS) || ((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG)))
		return -EINVAL;
	if (attr->max_entries)
		return -EINVAL;
	return 0;
}

/* the test run's value(s): value_stride per CPU for the per-CPU type */
static int storage_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = (uint64_t)map->value_stride * map->ncpus;
	return 0;
}

static int storage_copy_value(struct brt_map *map, const void *key, void *value)
{
	(void)map, (void)key, (void)value;
	return -ENOENT; /* no cgroup has storage from this map */
}

static int storage_update(struct brt_map *map, const void *key, const void *value,
			  uint64_t flags)
{
	(void)key, (void)value;
	if (map->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE) {
		if (flags != BPF_ANY && flags != BPF_EXIST)
			return -EINVAL;
	} else if (flags & ~(uint64_t)(BPF_F_LOCK | BPF_EXIST)) {
		return -EINVAL;
	}
	return -ENOENT;
}

static int storage_delete(struct brt_map *map, const void *key)
{
	(void)map, (void)key;
	return -EINVAL;
}

static int storage_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	(void)map, (void)key, (void)next_key;
	return -ENOENT;
}

const struct brt_map_ops brt_cgroup_storage_map_ops = {
	.btf = BRT_MAP_BTF_CGROUP_KEY,
	.alloc_check = storage_alloc_check,
	.data_size = storage_data_size,
	.copy_value = storage_copy_value,
	.update = storage_update,
	.delete = storage_delete,
	.get_next_key = storage_get_next_key,
};

void brt_cgroup_storage_reset(struct brt_map *map)
{
	if (map->type == BPF_MAP_TYPE_CGROUP_STORAGE ||
	    map->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE)
		memset(map->data, 0, map->data_size);
}

/* bpf_get_local_storage(map, flags): this CPU's value of the run's storage (flags is 0,
 * the verifier saw to it) */
uint64_t brt_helper_get_local_storage(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	unsigned char *v;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!map || (map->type != BPF_MAP_TYPE_CGROUP_STORAGE &&
		     map->type != BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE))
		return 0;
	v = map->data;
	if (map->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE)
		v += (size_t)brt_cpu() * map->value_stride;
	if (bpfrt_run_grant(ctx, v, map->value_size, !(map->flags & BPF_F_RDONLY_PROG)))
		return 0;
	return (uint64_t)(uintptr_t)v;
}
