/* queue.c - queue and stack maps (the kernel's queue_stack_maps.c): a ring of
 * max_entries + 1 value slots with head (next write) and tail (oldest) indexes under one
 * process-shared lock.  Keys are absent (key_size 0); push, pop and peek are the element
 * commands.  Indexes read from shared memory are range-checked.
 */
#include <errno.h>

#include "maps/maps.h"

#define QS_FLAGS                                                                        \
	(BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)

/* Crash safety: every operation changes head and tail with single stores, ordered so
 * that a process killed at any point (its lock then taken over) leaves a ring of whole
 * values: a push writes the slot before the store of head publishes it, a pop copies the
 * value out before it moves head or tail.  So nothing needs repair after a takeover: a
 * push killed before its head store never happened (but for the oldest element it
 * dropped to make room, with BPF_EXIST), a pop killed before its index store did not
 * take the value. */
struct qs_head {
	_Atomic uint32_t lock;
	_Atomic uint32_t head; /* next slot to write */
	_Atomic uint32_t tail; /* oldest slot */
	uint32_t size;         /* max_entries + 1 */
	_Atomic uint32_t gen;  /* odd while a writer changes the ring (maps.h, brt_map_gen) */
	uint32_t pad;          /* slots 8-byte aligned */
};

static int qs_alloc_check(const union bpf_attr *attr)
{
	uint32_t f = attr->map_flags;

	if (!attr->max_entries || attr->key_size || !attr->value_size || (f & ~QS_FLAGS) ||
	    ((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG)))
		return -EINVAL;
	if (attr->value_size > (4u << 20))
		return -E2BIG;
	return 0;
}

static int qs_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = sizeof(struct qs_head) + ((uint64_t)map->max_entries + 1) * map->value_stride;
	return 0;
}

static int qs_init(struct brt_map *map)
{
	struct qs_head *h = map->data;

	h->size = map->max_entries + 1;
	return 0;
}

static int qs_attach(struct brt_map *map)
{
	const struct qs_head *h = map->data;

	return h->size == map->max_entries + 1 ? 0 : -EINVAL;
}

static unsigned char *slot(struct brt_map *map, uint32_t i)
{
	return (unsigned char *)map->data + sizeof(struct qs_head) + (size_t)i * map->value_stride;
}

/* The indexes, read once under the lock and range-checked: the region is shared with
 * whoever can write the file.  Out-of-range ones (a corrupt file) empty the map. */
static void indexes(struct brt_map *map, struct qs_head *h, uint32_t *head, uint32_t *tail)
{
	uint32_t size = map->max_entries + 1;

	*head = atomic_load_explicit(&h->head, memory_order_relaxed);
	*tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	if (*head >= size || *tail >= size)
		*head = *tail = 0;
}

static int qs_push(struct brt_map *map, const void *value, uint64_t flags)
{
	struct qs_head *h = map->data;
	uint32_t size = map->max_entries + 1, head, tail;
	int err = 0;

	if ((flags & BPF_NOEXIST) || flags > BPF_EXIST)
		return -EINVAL;
	brt_shm_lock(&h->lock);
	brt_map_gen_begin(&h->gen);
	indexes(map, h, &head, &tail);
	if ((head + 1) % size == tail) {
		if (!(flags & BPF_EXIST)) {
			err = -E2BIG;
			goto out_unlock;
		}
		/* overwrite the oldest */
		tail = (tail + 1) % size;
	}
	/* tail first, head last: a pusher killed in between leaves one element fewer at
	 * worst, never an empty-looking full ring */
	atomic_store_explicit(&h->tail, tail, memory_order_relaxed);
	brt_shm_write(slot(map, head), value, map->value_size);
	atomic_store_explicit(&h->head, (head + 1) % size, memory_order_release);
out_unlock:
	brt_map_gen_end(&h->gen);
	brt_shm_unlock(&h->lock);
	return err;
}

/* The element a pop takes (the oldest of a queue, the newest of a stack) copied to value,
 * its slot's head and tail after the pop in *head and *tail: 0 or -ENOENT. */
static int front(struct brt_map *map, struct qs_head *h, void *value, uint32_t *head,
		 uint32_t *tail)
{
	uint32_t size = map->max_entries + 1, i;

	indexes(map, h, head, tail);
	if (*head == *tail)
		return -ENOENT;
	if (map->type == BPF_MAP_TYPE_QUEUE) {
		i = *tail;
		*tail = (*tail + 1) % size;
	} else {
		i = *head ? *head - 1 : size - 1;
		*head = i;
	}
	brt_shm_read(value, slot(map, i), map->value_size);
	return 0;
}

/* front() for brt_map_gen_read(): a peek in a process that maps the file read-only
 * (maps.h, "read-only mappings") */
static int front_ro(struct brt_map *map, const void *arg, void *value)
{
	uint32_t head, tail;

	(void)arg;
	return front(map, map->data, value, &head, &tail);
}

static int take(struct brt_map *map, void *value, int remove)
{
	struct qs_head *h = map->data;
	uint32_t head, tail;
	int err;

	if (!remove && brt_map_ro(map))
		return brt_map_gen_read(map, &h->gen, value, map->value_size, front_ro, NULL);
	brt_shm_lock(&h->lock);
	if (remove)
		brt_map_gen_begin(&h->gen);
	err = front(map, h, value, &head, &tail);
	if (!err && remove) {
		atomic_store_explicit(&h->head, head, memory_order_release);
		atomic_store_explicit(&h->tail, tail, memory_order_release);
	}
	if (remove)
		brt_map_gen_end(&h->gen);
	brt_shm_unlock(&h->lock);
	return err;
}

static int qs_pop(struct brt_map *map, void *value)
{
	return take(map, value, 1);
}

static int qs_peek(struct brt_map *map, void *value)
{
	return take(map, value, 0);
}

const struct brt_map_ops brt_queue_map_ops = {
	.ro_reads = 1, /* front_ro() */
	.alloc_check = qs_alloc_check,
	.data_size = qs_data_size,
	.init = qs_init,
	.attach = qs_attach,
	.push = qs_push,
	.pop = qs_pop,
	.peek = qs_peek,
};
