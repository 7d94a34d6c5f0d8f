/* hash.h - what the hash map's files share (internal to src/maps/): the region's layout,
 * the process-local view of it (struct htab), the element accessors every reader of a
 * chain uses and the read-only readers' budget.  hash.c is the map (its opening comment
 * says how the region works: writers, lookups, crash repair, lazy elements, read-only
 * mappings); hash_walk.c its key walks.
 */
#ifndef BPFRT_SRC_MAPS_HASH_H
#define BPFRT_SRC_MAPS_HASH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "maps/maps.h"
#include "util/util.h"

struct htab_head {
	_Atomic uint32_t count;      /* linked elements */
	_Atomic uint32_t alloc_lock; /* guards free_head, bump and the allocation words */
	uint32_t free_head;          /* first element of the free list, 0 none */
	uint32_t bump;               /* the scan for never-used elements has passed this one */
	uint32_t n_buckets;          /* copies of the geometry, checked on attach */
	uint32_t n_elems;
	uint32_t elem_size;
	uint32_t seed;               /* hash seed (0 with BPF_F_ZERO_SEED) */
	_Atomic uint32_t lru_clock;  /* LRU: access counter stamped into elements */
	_Atomic uint32_t lru_cursor; /* LRU: where the next eviction scan starts */
	uint32_t layout;             /* hash.c's HTAB_LAYOUT */
	_Atomic uint32_t repair;     /* a lock was taken over: the next writer sweeps */
	uint32_t reserved[4];
};

struct htab_bucket {
	_Atomic uint32_t lock;
	_Atomic uint32_t head;   /* first element, 0 none; changed under lock */
};

/* Fields written while a lockless reader may look (next, hash, key, value) are stored
 * with atomic word stores; seq is odd while they are being rewritten. */
struct htab_elem {
	_Atomic uint32_t next;   /* next in bucket, or in the free list */
	_Atomic uint32_t hash;
	_Atomic uint32_t stamp;  /* LRU: last access */
	_Atomic uint32_t seq;    /* even: stable; odd: being rewritten */
	unsigned char key[];     /* round_up(key_size, 8), then the value(s) */
};

/* Process-local view: the geometry recomputed from the parameters, never read back from
 * shared memory. */
struct htab {
	struct htab_head *head;
	struct htab_bucket *buckets;
	unsigned char *elems;
	uint32_t *alloc;         /* allocation words, element i at alloc[i - 1] */
	uint32_t n_buckets;
	uint32_t n_elems;
	uint32_t elem_size;
	uint32_t value_off;
	uint32_t key_size;
	int lru;
	int percpu;
	/* BPF_F_NO_PREALLOC: the elements' pages are reserved as they are used (hash.c,
	 * "Lazy elements"); elements 1..usable are on pages this process populated, or all
	 * of them for a preallocated map */
	int lazy;
	_Atomic uint32_t usable;
	_Atomic uint32_t *usable_w; /* &usable, for elem()'s slow path on a const htab */
	struct brt_map *map;     /* the map this is the state of (bpf_timer's release) */
	_Atomic long long reclaim_ns; /* last scan for locks of dead owners (hash.c's reclaim()) */
};

/* elem()'s slow path (hash.c, "Lazy elements"). */
__attribute__((noinline, cold)) struct htab_elem *brt_hash_elem_populate(const struct htab *ht,
									  uint32_t idx);

/* Element idx (1-based), or NULL for 0, an index out of range, or one of a lazy map whose
 * page cannot be reserved. */
static inline struct htab_elem *elem(const struct htab *ht, uint32_t idx)
{
	if (__builtin_expect(idx - 1 >= atomic_load_explicit(&ht->usable, memory_order_relaxed),
			     0))
		return ht->lazy && idx ? brt_hash_elem_populate(ht, idx) : NULL;
	return (struct htab_elem *)(ht->elems + (size_t)(idx - 1) * ht->elem_size);
}

static inline void *value_of(const struct htab *ht, struct htab_elem *e)
{
	return (unsigned char *)e + ht->value_off;
}

/* Compare a key held in shared memory (read in atomic words: a writer may be rewriting a
 * recycled element) with the caller's. */
static inline int key_equal(const unsigned char *shm, const unsigned char *key, uint32_t len)
{
	const _Atomic uint64_t *w = (const _Atomic uint64_t *)(const void *)shm;
	uint64_t a, b;

	for (; len >= 8; len -= 8, key += 8) {
		a = atomic_load_explicit(w++, memory_order_acquire);
		memcpy(&b, key, 8);
		if (a != b)
			return 0;
	}
	if (!len)
		return 1;
	/* the padding of a stored key is zero, but the region is shared: mask it off */
	a = atomic_load_explicit(w, memory_order_acquire);
	return !((a ^ brt_keyhash_tail(key, len)) & (~0ull >> (64 - 8 * len)));
}

/* brt_shm_read() inline for the one-word value of counters */
static inline void read_value(void *out, const void *shm, uint32_t n)
{
	uint64_t v;

	if (n != 8) {
		brt_shm_read(out, shm, n);
		return;
	}
	v = atomic_load_explicit((const _Atomic uint64_t *)shm, memory_order_acquire);
	memcpy(out, &v, 8);
}

/* The elements a read-only read may visit over all its retries: two walks of the whole
 * map, and BRT_MAP_RO_TRIES of a short chain.  Retrying a chain as long as the map (a
 * scribbler's: a legitimate one is a few elements) BRT_MAP_RO_TRIES times, four walks
 * each, took over 10 s for 262,160 elements; past the budget the read is EBUSY. */
static inline uint64_t ro_budget(const struct htab *ht)
{
	return 2 * ((uint64_t)ht->n_elems + 1) + BRT_MAP_RO_TRIES * 64;
}

/* Take bucket b's lock; a dead owner's taken over and its chain repaired (hash.c,
 * "repair after a crash"). */
void brt_hash_bucket_lock(struct htab *ht, struct htab_bucket *b);

/* hash_walk.c: get_next_key, on chains copied under their locks (locked) or read without
 * them on a read-only mapping. */
/* The first key of the first non-empty bucket at or after bucket, *at that bucket: 0,
 * -ENOENT or another -errno (locked as brt_hash_next_key()). */
int brt_hash_first_from(struct htab *ht, const struct brt_map *map, uint32_t bucket,
			void *key, uint32_t *at, int locked);
int brt_hash_next_key(struct htab *ht, const struct brt_map *map, const void *key,
		      void *next_key, int locked);

#endif
