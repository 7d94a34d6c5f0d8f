/* lpm.c - BPF_MAP_TYPE_LPM_TRIE: longest-prefix-match maps keyed by
 * struct bpf_lpm_trie_key { u32 prefixlen; u8 data[] }.  The entries are max_entries
 * slots in the shared region under one process-shared lock, searched linearly: the same
 * answers as the kernel's trie (lookup = longest matching prefix, delete = exact prefix,
 * ENOSPC when full, iteration in the trie's post-order) at O(n) cost per operation.
 */
#include <errno.h>
#include <string.h>

#include "maps/maps.h"

#define LPM_DATA_MAX 256
#define LPM_FLAGS                                                                        \
	(BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY |              \
	 BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)

struct lpm_head {
	_Atomic uint32_t lock;
	uint32_t count;
	_Atomic uint32_t gen; /* odd while a writer changes the slots (maps.h, brt_map_gen) */
	uint32_t pad;         /* slots 8-byte aligned */
};

struct lpm_slot {
	uint32_t used;
	uint32_t prefixlen;
	unsigned char data[]; /* round_up(data size, 8), then the value */
};

static int lpm_alloc_check(const union bpf_attr *attr)
{
	uint32_t f = attr->map_flags;

	if (!attr->max_entries || !(f & BPF_F_NO_PREALLOC) || (f & ~LPM_FLAGS) ||
	    ((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG)) || attr->key_size < 5 ||
	    attr->key_size > 4 + LPM_DATA_MAX || !attr->value_size ||
	    attr->value_size > (4u << 20) - 512 - 64)
		return -EINVAL;
	return 0;
}

static uint32_t dsize(const struct brt_map *map)
{
	return map->key_size - 4;
}

static uint64_t slot_size(const struct brt_map *map)
{
	return sizeof(struct lpm_slot) + BRT_ROUND8(dsize(map)) + map->value_stride;
}

static int lpm_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = sizeof(struct lpm_head) + (uint64_t)map->max_entries * slot_size(map);
	return 0;
}

static struct lpm_slot *slot(const struct brt_map *map, uint32_t i)
{
	return (struct lpm_slot *)((unsigned char *)map->data + sizeof(struct lpm_head) +
				   (size_t)i * slot_size(map));
}

static void *value_of(const struct brt_map *map, struct lpm_slot *s)
{
	return s->data + BRT_ROUND8(dsize(map));
}

static int bit(const unsigned char *d, uint32_t i)
{
	return (d[i / 8] >> (7 - i % 8)) & 1;
}

/* Do the first n bits of a and b agree? */
static int match(const unsigned char *a, const unsigned char *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (bit(a, i) != bit(b, i))
			return 0;
	return 1;
}

/* The trie's post-order: a more specific prefix under another comes first; otherwise the
 * one with a 0 where they first differ. */
static int before(const unsigned char *a, uint32_t la, const unsigned char *b, uint32_t lb)
{
	uint32_t n = la < lb ? la : lb;

	for (uint32_t i = 0; i < n; i++)
		if (bit(a, i) != bit(b, i))
			return bit(a, i) < bit(b, i);
	return la > lb;
}

static uint32_t key_len(const void *key)
{
	uint32_t len;

	memcpy(&len, key, 4);
	return len;
}

/* The prefix length of slot s when it is in use and valid, else -1.  Read once: the slot
 * is shared memory another process may rewrite, and a length past the data would make
 * the bit comparisons read past the slot. */
static int64_t live_len(const struct brt_map *map, const struct lpm_slot *s)
{
	uint32_t used = *(const volatile uint32_t *)&s->used;
	uint32_t len = *(const volatile uint32_t *)&s->prefixlen;

	return used && len <= dsize(map) * 8 ? (int64_t)len : -1;
}

/* The slot holding exactly this prefix, or -1. */
static int find_exact(const struct brt_map *map, const void *key)
{
	const unsigned char *d = (const unsigned char *)key + 4;
	uint32_t len = key_len(key);

	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct lpm_slot *s = slot(map, i);

		if (live_len(map, s) == len && match(s->data, d, len))
			return (int)i;
	}
	return -1;
}

/* The longest prefix matching the key's data (lock held), no longer than the key's own
 * prefix length: the kernel's trie_lookup_elem() compares at most that many bits of each
 * node (__longest_prefix_match()) and finds nothing for a length past the data. */
static struct lpm_slot *best_match(struct brt_map *map, const void *key)
{
	const unsigned char *d = (const unsigned char *)key + 4;
	uint32_t klen = key_len(key);
	struct lpm_slot *best = NULL;
	int64_t best_len = -1;

	if (klen > dsize(map) * 8)
		return NULL;
	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct lpm_slot *s = slot(map, i);
		int64_t len = live_len(map, s);

		if (len > best_len && len <= (int64_t)klen && match(s->data, d, (uint32_t)len)) {
			best = s;
			best_len = len;
		}
	}
	return best;
}

static void *lpm_lookup(struct brt_map *map, const void *key)
{
	struct lpm_head *h = map->data;
	struct lpm_slot *best;

	brt_shm_lock(&h->lock);
	best = best_match(map, key);
	brt_shm_unlock(&h->lock);
	return best ? value_of(map, best) : NULL;
}

/* The reads (this and next_key_of() below) run through lpm_read(). */
static int copy_best(struct brt_map *map, const void *key, void *value)
{
	struct lpm_slot *best = best_match(map, key);

	if (best)
		brt_shm_read(value, value_of(map, best), map->value_size);
	return best ? 0 : -ENOENT;
}

/* A read fn(map, key, out) of bytes bytes: with the lock held or, in a process that maps
 * the file read-only (maps.h, "read-only mappings"), inside brt_map_gen_read(). */
static int lpm_read(struct brt_map *map, const void *key, void *out, size_t bytes,
		    int (*fn)(struct brt_map *map, const void *key, void *out))
{
	struct lpm_head *h = map->data;
	int err;

	if (brt_map_ro(map))
		return brt_map_gen_read(map, &h->gen, out, bytes, fn, key);
	brt_shm_lock(&h->lock);
	err = fn(map, key, out);
	brt_shm_unlock(&h->lock);
	return err;
}

static int lpm_copy_value(struct brt_map *map, const void *key, void *value)
{
	return lpm_read(map, key, value, map->value_size, copy_best);
}

static int lpm_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct lpm_head *h = map->data;
	struct lpm_slot *s = NULL;
	int i, err = 0;

	if (flags > BPF_EXIST)
		return -EINVAL;
	if (key_len(key) > dsize(map) * 8)
		return -EINVAL;
	brt_shm_lock(&h->lock);
	brt_map_gen_begin(&h->gen);
	i = find_exact(map, key);
	if (i >= 0 && flags == BPF_NOEXIST) {
		err = -EEXIST;
	} else if (i < 0 && flags == BPF_EXIST) {
		err = -ENOENT;
	} else if (i >= 0) {
		/* the kernel's trie_update_elem() replaces the node with a new one holding the
		 * new key's data, bits past the prefix included (get_next_key shows them) */
		s = slot(map, (uint32_t)i);
		memcpy(s->data, (const unsigned char *)key + 4, dsize(map));
	} else if (h->count >= map->max_entries) {
		err = -ENOSPC;
	} else {
		for (uint32_t j = 0; j < map->max_entries && !s; j++)
			if (!slot(map, j)->used)
				s = slot(map, j);
		if (s) {
			s->prefixlen = key_len(key);
			memset(s->data, 0, BRT_ROUND8(dsize(map)));
			memcpy(s->data, (const unsigned char *)key + 4, dsize(map));
			s->used = 1;
			h->count++;
		} else {
			err = -ENOSPC;
		}
	}
	if (s)
		brt_shm_write(value_of(map, s), value, map->value_size);
	brt_map_gen_end(&h->gen);
	brt_shm_unlock(&h->lock);
	return err;
}

static int lpm_delete(struct brt_map *map, const void *key)
{
	struct lpm_head *h = map->data;
	int i;

	if (key_len(key) > dsize(map) * 8)
		return -EINVAL;
	brt_shm_lock(&h->lock);
	brt_map_gen_begin(&h->gen);
	i = find_exact(map, key);
	if (i >= 0) {
		slot(map, (uint32_t)i)->used = 0;
		if (h->count && h->count <= map->max_entries)
			h->count--;
	}
	brt_map_gen_end(&h->gen);
	brt_shm_unlock(&h->lock);
	return i >= 0 ? 0 : -ENOENT;
}

/* The entry after key in the trie's post-order (the first one without key, or when key is
 * absent).  Only valid slots take part (live_len()), compared by the caller's key and the
 * lengths read once, so each answer is strictly after the previous one and a walk ends. */
static int next_key_of(struct brt_map *map, const void *key, void *next_key)
{
	const unsigned char *cur = NULL;
	struct lpm_slot *best = NULL;
	uint32_t cur_len = 0, best_len = 0;

	if (key && key_len(key) <= dsize(map) * 8) {
		cur = (const unsigned char *)key + 4;
		cur_len = key_len(key);
	}
	if (cur && find_exact(map, key) < 0)
		cur = NULL; /* absent: restart from the first, as the kernel */
	for (uint32_t j = 0; j < map->max_entries; j++) {
		struct lpm_slot *s = slot(map, j);
		int64_t len = live_len(map, s);

		if (len < 0)
			continue;
		if (cur && !before(cur, cur_len, s->data, (uint32_t)len))
			continue;
		if (!best || before(s->data, (uint32_t)len, best->data, best_len)) {
			best = s;
			best_len = (uint32_t)len;
		}
	}
	if (best) {
		memcpy(next_key, &best_len, 4);
		memcpy((unsigned char *)next_key + 4, best->data, dsize(map));
	}
	return best ? 0 : -ENOENT;
}

static int lpm_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	return lpm_read(map, key, next_key, map->key_size, next_key_of);
}

const struct brt_map_ops brt_lpm_map_ops = {
	.btf = BRT_MAP_BTF_STRUCT_KEY,
	.ro_reads = 1, /* brt_map_gen_read() */
	.alloc_check = lpm_alloc_check,
	.data_size = lpm_data_size,
	.lookup = lpm_lookup,
	.copy_value = lpm_copy_value,
	.update = lpm_update,
	.prog_update = lpm_update,
	.delete = lpm_delete,
	.get_next_key = lpm_get_next_key,
};
