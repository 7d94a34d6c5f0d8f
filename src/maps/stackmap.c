/* stackmap.c - BPF_MAP_TYPE_STACK_TRACE and the helpers that fill stacks,
 * bpf_get_stackid() and bpf_get_stack().
 *
 * The map is the kernel's: roundup_pow_of_two(max_entries) buckets, each holding one
 * stack (nr frames of 8 bytes, or of 32-byte struct bpf_stack_build_id with
 * BPF_F_STACK_BUILD_ID) under the id the hash of its frames picked.  User space reads a
 * bucket (the frames, zero-filled up to value_size), deletes it or walks the ids; it
 * cannot write one (-EINVAL, as the kernel).
 *
 * Stacks come from the call chain of the event that ran the program.  No event this
 * runtime runs programs on carries one yet (tracepoint records are read without
 * PERF_SAMPLE_CALLCHAIN, test runs and in-application probes have none), so the helpers
 * answer what the kernel answers when it cannot fetch a call chain: -EFAULT, with
 * bpf_get_stack()'s buffer cleared; invalid flags or sizes are -EINVAL first, as there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "maps/maps.h"
#include "vm/vm.h"

#define STACK_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_STACK_BUILD_ID)
#define BUILD_ID_SIZE 32u /* sizeof(struct bpf_stack_build_id) */

struct bucket {
	_Atomic uint32_t nr; /* frames held, 0: empty */
	uint32_t hash;
	uint64_t data[];     /* value_size bytes */
};

/* kernel.perf_event_max_stack: the deepest stack a value may hold (127 by default) */
static uint32_t max_stack(void)
{
	uint32_t n = 127;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 127;
		fclose(f);
	}
	return n;
}

static int stack_alloc_check(const union bpf_attr *attr)
{
	uint32_t vs = attr->value_size;

	if (attr->map_flags & ~STACK_FLAGS)
		return -EINVAL;
	if (!attr->max_entries || attr->key_size != 4 || vs < 8 || vs % 8)
		return -EINVAL;
	if (attr->map_flags & BPF_F_STACK_BUILD_ID) {
		if (vs % BUILD_ID_SIZE || vs / BUILD_ID_SIZE > max_stack())
			return -EINVAL;
	} else if (vs / 8 > max_stack()) {
		return -EINVAL;
	}
	if (attr->max_entries > (1u << 31))
		return -E2BIG;
	return 0;
}

static uint64_t bucket_size(const struct brt_map *map)
{
	return sizeof(struct bucket) + map->value_size;
}

static int stack_data_size(const struct brt_map *map, uint64_t *size)
{
	uint64_t n = brt_map_buckets(map);

	if (n > (UINT64_MAX >> 24) / bucket_size(map))
		return -ENOMEM;
	*size = n * bucket_size(map);
	return 0;
}

static struct bucket *bucket_of(struct brt_map *map, const void *key)
{
	uint32_t id;

	memcpy(&id, key, 4);
	if (id >= brt_map_buckets(map))
		return NULL;
	return (struct bucket *)((char *)map->data + id * bucket_size(map));
}

static uint32_t frame_size(const struct brt_map *map)
{
	return map->flags & BPF_F_STACK_BUILD_ID ? BUILD_ID_SIZE : 8;
}

static int stack_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct bucket *b = bucket_of(map, key);
	uint64_t len;
	uint32_t nr;

	nr = b ? atomic_load_explicit(&b->nr, memory_order_acquire) : 0;
	if (!nr)
		return -ENOENT;
	len = (uint64_t)nr * frame_size(map);
	if (len > map->value_size) /* another process scribbled: show what fits */
		len = map->value_size;
	brt_shm_read(value, b->data, len);
	memset((char *)value + len, 0, map->value_size - len);
	return 0;
}

static int stack_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	(void)map, (void)key, (void)value, (void)flags;
	return -EINVAL;
}

static int stack_delete(struct brt_map *map, const void *key)
{
	struct bucket *b = bucket_of(map, key);

	if (!b)
		return -E2BIG;
	return atomic_exchange_explicit(&b->nr, 0, memory_order_acq_rel) ? 0 : -ENOENT;
}

static int stack_lookup_and_delete(struct brt_map *map, const void *key, void *value)
{
	int err = stack_copy_value(map, key, value);

	if (!err)
		err = stack_delete(map, key);
	return err;
}

static int stack_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	uint32_t id = 0, n = brt_map_buckets(map);
	struct bucket *b;

	if (key) {
		b = bucket_of(map, key);
		if (b && atomic_load_explicit(&b->nr, memory_order_acquire))
			memcpy(&id, key, 4), id++;
	}
	for (; id < n; id++) {
		b = bucket_of(map, &id);
		if (atomic_load_explicit(&b->nr, memory_order_acquire)) {
			memcpy(next_key, &id, 4);
			return 0;
		}
	}
	return -ENOENT;
}

const struct brt_map_ops brt_stack_trace_map_ops = {
	.alloc_check = stack_alloc_check,
	.data_size = stack_data_size,
	.copy_value = stack_copy_value,
	.update = stack_update,
	.delete = stack_delete,
	.get_next_key = stack_get_next_key,
	.lookup_and_delete = stack_lookup_and_delete,
};

uint64_t brt_helper_get_stackid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);

	(void)r1, (void)r4, (void)r5;
	if (!map || map->type != BPF_MAP_TYPE_STACK_TRACE)
		return (uint64_t)-EINVAL;
	if (r3 & ~(uint64_t)(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_FAST_STACK_CMP |
			     BPF_F_REUSE_STACKID))
		return (uint64_t)-EINVAL;
	return (uint64_t)-EFAULT; /* no call chain (file comment) */
}

uint64_t brt_helper_get_stack(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	void *buf = (void *)(uintptr_t)r2;
	uint32_t size = (uint32_t)r3, elem;
	int64_t err = -EINVAL;

	(void)r1, (void)r5;
	if (ctx->checked && size && !bpfrt_run_access_ok(ctx, buf, size, 1))
		return (uint64_t)-EINVAL;
	elem = r4 & BPF_F_USER_BUILD_ID ? BUILD_ID_SIZE : 8;
	if (!(r4 & ~(uint64_t)(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID)) &&
	    !((r4 & BPF_F_USER_BUILD_ID) && !(r4 & BPF_F_USER_STACK)) && !(size % elem))
		err = -EFAULT; /* no call chain (file comment) */
	if (size)
		memset(buf, 0, size);
	return (uint64_t)err;
}
