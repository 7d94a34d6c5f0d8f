/* array.c - array and percpu_array maps: max_entries values of round_up(value_size, 8)
 * bytes (times the CPU count for percpu_array) from file offset 0, zero-filled, so
 * mmap() of a BPF_F_MMAPABLE array's fd shows the values as the kernel's does.  Elements
 * never move or go away: lookups need no lock and updates are word-wise atomic stores.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/maps.h"

#define ARRAY_FLAGS                                                                     \
	(BPF_F_NUMA_NODE | BPF_F_MMAPABLE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | \
	 BPF_F_WRONLY_PROG | BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP)

static int array_alloc_check(const union bpf_attr *attr)
{
	int percpu = attr->map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
	uint32_t f = attr->map_flags;

	if (!attr->max_entries || attr->key_size != 4 || !attr->value_size ||
	    (f & ~ARRAY_FLAGS) || ((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG)) ||
	    (percpu && (f & BPF_F_NUMA_NODE)))
		return -EINVAL;
	if (attr->map_type != BPF_MAP_TYPE_ARRAY && (f & (BPF_F_MMAPABLE | BPF_F_INNER_MAP)))
		return -EINVAL;
	if (f & BPF_F_PRESERVE_ELEMS)
		return -EINVAL;
	if (attr->value_size > INT_MAX)
		return -E2BIG;
	if (percpu && BRT_ROUND8(attr->value_size) > 32768)
		return -E2BIG;
	return 0;
}

static int array_data_size(const struct brt_map *map, uint64_t *size)
{
	uint64_t elem = (uint64_t)map->value_stride * map->ncpus;

	/* The kernel rounds max_entries up to a power of two for its index mask. */
	if (map->max_entries > (1u << 31))
		return -E2BIG;
	if (elem && map->max_entries > (UINT64_MAX >> 24) / elem)
		return -ENOMEM;
	*size = elem * map->max_entries;
	return 0;
}

static unsigned char *elem_of(struct brt_map *map, const void *key)
{
	uint32_t idx;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= map->max_entries)
		return NULL;
	return (unsigned char *)map->data + (size_t)idx * map->value_stride * map->ncpus;
}

int brt_percpu_array_values(const struct brt_map *map, void **base, uint32_t *stride,
			    uint32_t *ncpus)
{
	if (map->type != BPF_MAP_TYPE_PERCPU_ARRAY)
		return -EOPNOTSUPP;
	*base = map->data;
	*stride = map->value_stride;
	*ncpus = map->ncpus;
	return 0;
}

int brt_array_values(const struct brt_map *map, void **base, uint32_t *stride)
{
	if (map->type != BPF_MAP_TYPE_ARRAY || map->ncpus != 1)
		return -EOPNOTSUPP;
	*base = map->data;
	*stride = map->value_stride;
	return 0;
}

static void *array_lookup_cpu(struct brt_map *map, const void *key, uint32_t cpu)
{
	unsigned char *v = elem_of(map, key);

	if (v && map->ncpus > 1)
		v += (size_t)cpu * map->value_stride;
	return v;
}

static void *array_lookup(struct brt_map *map, const void *key)
{
	return array_lookup_cpu(map, key, brt_cpu());
}

static int array_copy_value(struct brt_map *map, const void *key, void *value)
{
	unsigned char *v = elem_of(map, key);

	if (!v)
		return -ENOENT;
	brt_shm_read(value, v, brt_map_value_size(map));
	return 0;
}

static int check_update(struct brt_map *map, const void *key, uint64_t flags,
			unsigned char **v)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	*v = elem_of(map, key);
	if (!*v)
		return -E2BIG;
	if (flags == BPF_NOEXIST)
		return -EEXIST;
	return 0;
}

static int array_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	unsigned char *v;
	int err = check_update(map, key, flags, &v);

	if (err)
		return err;
	if (map->type == BPF_MAP_TYPE_ARRAY && map->nroots) {
		/* the value's kptrs are not copied; the replaced ones are freed.  Nothing
		 * after: the per-CPU copy below would write the caller's bytes over them */
		brt_map_put_value(map, v, value, 0);
		brt_map_free_roots(map, v, 0);
		if (map->timer_off >= 0)
			brt_timer_release(map, v);
		brt_task_work_release(map, v);
		return 0;
	} else if (map->type == BPF_MAP_TYPE_ARRAY) {
		brt_shm_write(v, value, map->value_size);
		/* the value's bpf_timer and task work are freed, not copied
		 * (array_map_update_elem()) */
		if (map->timer_off >= 0)
			brt_timer_release(map, v);
		brt_task_work_release(map, v);
		return 0;
	}
	/* the kernel copies round_up(value_size, 8) bytes per CPU: the caller's padding
	 * bytes are stored and come back on lookup */
	for (uint32_t cpu = 0; cpu < map->ncpus; cpu++)
		brt_shm_write(v + (size_t)cpu * map->value_stride,
			      (const unsigned char *)value + (size_t)cpu * map->value_stride,
			      map->value_stride);
	return 0;
}

static int array_prog_update(struct brt_map *map, const void *key, const void *value,
			     uint64_t flags)
{
	unsigned char *v;
	int err = check_update(map, key, flags, &v);

	if (err)
		return err;
	if (map->ncpus > 1)
		v += (size_t)brt_cpu() * map->value_stride;
	if (map->nroots) {
		brt_map_put_value(map, v, value, 0);
		brt_map_free_roots(map, v, 0);
	} else {
		brt_shm_write(v, value, map->value_size);
	}
	if (map->timer_off >= 0)
		brt_timer_release(map, v);
	brt_task_work_release(map, v);
	return 0;
}

int brt_array_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	uint32_t idx = UINT32_MAX, next;

	if (key)
		memcpy(&idx, key, sizeof(idx));
	if (idx >= map->max_entries) {
		next = 0;
	} else {
		if (idx == map->max_entries - 1)
			return -ENOENT;
		next = idx + 1;
	}
	memcpy(next_key, &next, sizeof(next));
	return 0;
}

/* file_values (maps.h): every element is in use; read in chunks of about 64 KiB */
static int array_file_values(const struct brt_map *m, int fd, uint32_t off, uint32_t len,
			     void (*fn)(void *arg, const void *bytes), void *arg)
{
	size_t elem = (size_t)m->value_stride * m->ncpus;
	uint32_t per = elem >= 65536 ? 1 : (uint32_t)(65536 / elem), n;
	unsigned char *buf;
	int err = 0;

	if (!elem || (uint64_t)off + len > m->value_size)
		return -EINVAL;
	buf = malloc(per * elem);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->max_entries && !err; i += n) {
		n = m->max_entries - i < per ? m->max_entries - i : per;
		if (pread(fd, buf, n * elem, (off_t)i * (off_t)elem) != (ssize_t)(n * elem)) {
			err = -EIO;
			break;
		}
		for (uint32_t k = 0; k < n; k++)
			fn(arg, buf + k * elem + off);
	}
	free(buf);
	return err;
}

const struct brt_map_ops brt_array_map_ops = {
	.btf = BRT_MAP_BTF_ARRAY,
	.ro_reads = 1,
	.file_values = array_file_values,
	.alloc_check = array_alloc_check,
	.data_size = array_data_size,
	.lookup = array_lookup,
	.lookup_cpu = array_lookup_cpu,
	.copy_value = array_copy_value,
	.update = array_update,
	.prog_update = array_prog_update,
	.get_next_key = brt_array_get_next_key,
};
