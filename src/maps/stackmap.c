/* stackmap.c - BPF_MAP_TYPE_STACK_TRACE: the map and its bucket step.
 *
 * The map is the kernel's: roundup_pow_of_two(max_entries) buckets, each holding one
 * stack (nr frames of 8 bytes, or of 32-byte struct bpf_stack_build_id with
 * BPF_F_STACK_BUILD_ID) under the id the hash of its frames picked.  User space reads a
 * bucket (the frames, zero-filled up to value_size), deletes it or walks the ids; it
 * cannot write one (-EINVAL, as the kernel).
 *
 * Programs fill it through bpf_get_stackid() (trace/stack.c: the call chain of the
 * event that ran the program) and brt_stack_map_store() here, __bpf_get_stackid()'s
 * step: jhash2 of the ips picks the bucket; the same stack there gives its id, another
 * one -EEXIST unless BPF_F_REUSE_STACKID replaces it.  The kernel swaps whole buckets
 * with xchg(); here a bucket is rewritten in place in the shared mapping, so a writer
 * owns it for the rewrite through the BUSY bit of nr, and readers wait for that bit.
 * The kernel keeps max_entries preallocated elements for its (power-of-two many)
 * buckets: a stack stored takes one, the one it replaces or user space deletes goes
 * back, and with none free the helper answers -ENOMEM; the map's header counts the
 * elements in use to answer the same.
 * bpf_get_task_stack() has no task's stack to read here (a task pointer is bpfrt's
 * stand-in): it answers -EFAULT after the kernel's checks.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "maps/maps.h"
#include "vm/vm.h"

#define STACK_FLAGS (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_STACK_BUILD_ID)
#define BUILD_ID_SIZE 32u /* sizeof(struct bpf_stack_build_id) */

#define BUSY (1u << 31)   /* in nr: a writer is rewriting the bucket */
#define WAIT_SPINS 100000 /* a reader's patience with BUSY (a writer that died holds it) */

/* the start of the map's data, before the buckets */
struct stack_head {
	_Atomic uint32_t used; /* elements in buckets (the kernel's freelist: max_entries) */
	uint32_t pad;
};

struct bucket {
	_Atomic uint32_t nr; /* frames held, 0: empty; | BUSY while rewritten */
	uint32_t hash;
	uint64_t data[];     /* value_size bytes */
};

/* kernel.perf_event_max_stack: the deepest stack a value may hold (127 by default) */
uint32_t brt_stack_max(void)
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
		if (vs % BUILD_ID_SIZE || vs / BUILD_ID_SIZE > brt_stack_max())
			return -EINVAL;
	} else if (vs / 8 > brt_stack_max()) {
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
	*size = sizeof(struct stack_head) + n * bucket_size(map);
	return 0;
}

static struct bucket *bucket_of(struct brt_map *map, const void *key)
{
	uint32_t id;

	memcpy(&id, key, 4);
	if (id >= brt_map_buckets(map))
		return NULL;
	return (struct bucket *)((char *)map->data + sizeof(struct stack_head) +
				 id * bucket_size(map));
}

uint32_t brt_stack_frame_size(const struct brt_map *map)
{
	return map->flags & BPF_F_STACK_BUILD_ID ? BUILD_ID_SIZE : 8;
}

/* The bucket's nr once no writer holds it (or, after WAIT_SPINS, what it says). */
static uint32_t settled_nr(struct bucket *b)
{
	uint32_t nr = atomic_load_explicit(&b->nr, memory_order_acquire);

	for (int i = 0; (nr & BUSY) && i < WAIT_SPINS; i++) {
		if (i > 100)
			sched_yield();
		nr = atomic_load_explicit(&b->nr, memory_order_acquire);
	}
	return nr & ~BUSY;
}

static struct stack_head *head_of(struct brt_map *map)
{
	return map->data;
}

/* Take a free element (pcpu_freelist_pop()): 0, or -ENOMEM when max_entries are in use. */
static int get_elem(struct brt_map *map)
{
	_Atomic uint32_t *used = &head_of(map)->used;
	uint32_t n = atomic_load_explicit(used, memory_order_relaxed);

	do {
		if (n >= map->max_entries)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak_explicit(used, &n, n + 1, memory_order_relaxed,
							memory_order_relaxed));
	return 0;
}

/* Give one back (pcpu_freelist_push()); never below 0 (a scribbled header) */
static void put_elem(struct brt_map *map)
{
	_Atomic uint32_t *used = &head_of(map)->used;
	uint32_t n = atomic_load_explicit(used, memory_order_relaxed);

	while (n && !atomic_compare_exchange_weak_explicit(used, &n, n - 1, memory_order_relaxed,
							   memory_order_relaxed))
		;
}

static int stack_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct bucket *b = bucket_of(map, key);
	uint64_t len;
	uint32_t nr;

	nr = b ? settled_nr(b) : 0;
	if (!nr)
		return -ENOENT;
	len = (uint64_t)nr * brt_stack_frame_size(map);
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
	if (!settled_nr(b))
		return -ENOENT;
	if (!(atomic_exchange_explicit(&b->nr, 0, memory_order_acq_rel) & ~BUSY))
		return -ENOENT;
	put_elem(map);
	return 0;
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
		if (b && atomic_load_explicit(&b->nr, memory_order_acquire) & ~BUSY)
			memcpy(&id, key, 4), id++;
	}
	for (; id < n; id++) {
		b = bucket_of(map, &id);
		if (atomic_load_explicit(&b->nr, memory_order_acquire) & ~BUSY) {
			memcpy(next_key, &id, 4);
			return 0;
		}
	}
	return -ENOENT;
}

const struct brt_map_ops brt_stack_trace_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.alloc_check = stack_alloc_check,
	.data_size = stack_data_size,
	.copy_value = stack_copy_value,
	.update = stack_update,
	.delete = stack_delete,
	.get_next_key = stack_get_next_key,
	.lookup_and_delete = stack_lookup_and_delete,
};

/* memcmp() of n bytes of the shared bucket against a private buffer (read in chunks
 * through brt_shm_read: another process may write the mapping) */
static int shm_cmp(const void *shm, const void *p, size_t n)
{
	unsigned char chunk[256];

	for (size_t off = 0; off < n; off += sizeof(chunk)) {
		size_t len = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
		int d;

		brt_shm_read(chunk, (const char *)shm + off, len);
		d = memcmp(chunk, (const char *)p + off, len);
		if (d)
			return d;
	}
	return 0;
}

int64_t brt_stack_map_store(struct brt_map *map, const uint64_t *ips, const void *frames,
			    uint32_t nr, uint64_t flags)
{
	uint32_t hash = brt_map_jhash2(ips, nr * 2, 0), old, id;
	uint32_t len = nr * brt_stack_frame_size(map);
	int build_id = !!(map->flags & BPF_F_STACK_BUILD_ID);
	struct bucket *b;

	if (!nr || len > map->value_size)
		return -EFAULT; /* the caller's depth rules keep it from here */
	id = hash & (brt_map_buckets(map) - 1);
	b = bucket_of(map, &id);
	/* own the bucket: wait out another writer (one that died is waited out, then
	 * overruled, as readers do) */
	old = atomic_load_explicit(&b->nr, memory_order_acquire);
	for (int i = 0;; i++) {
		if ((old & BUSY) && i < WAIT_SPINS) {
			if (i > 100)
				sched_yield();
			old = atomic_load_explicit(&b->nr, memory_order_acquire);
			continue;
		}
		if (atomic_compare_exchange_weak_explicit(&b->nr, &old, (old & ~BUSY) | BUSY,
							  memory_order_acq_rel,
							  memory_order_acquire))
			break;
	}
	old &= ~BUSY;
	/* the kernel's order: the fast compare, then (build-id maps) an element taken
	 * before the slow compare, or (ips) the slow compare and -EEXIST first */
	if (old && b->hash == hash && (flags & BPF_F_FAST_STACK_CMP))
		goto same;
	if (build_id && get_elem(map))
		goto nomem;
	if (old && b->hash == hash && old == nr && !shm_cmp(b->data, frames, len)) {
		if (build_id)
			put_elem(map);
		goto same;
	}
	if (old && !(flags & BPF_F_REUSE_STACKID)) {
		if (build_id)
			put_elem(map);
		atomic_store_explicit(&b->nr, old, memory_order_release);
		return -EEXIST;
	}
	if (!build_id && get_elem(map))
		goto nomem;
	b->hash = hash;
	brt_shm_write(b->data, frames, len);
	atomic_store_explicit(&b->nr, nr, memory_order_release);
	if (old)
		put_elem(map); /* the replaced stack's element */
	return id;
same:
	atomic_store_explicit(&b->nr, old, memory_order_release);
	return id;
nomem:
	atomic_store_explicit(&b->nr, old, memory_order_release);
	return -ENOMEM;
}

uint64_t brt_helper_get_task_stack(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
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
		err = -EFAULT; /* no task's stack (file comment) */
	if (size)
		memset(buf, 0, size);
	return (uint64_t)err;
}
