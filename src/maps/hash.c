/* hash.c - hash maps: hash, percpu_hash, lru_hash and lru_percpu_hash (the kernel's
 * hashtab.c family).  All elements live in the shared region, addressed by 1-based
 * index (0 = none): a header, the buckets (lock + first element) and the elements.
 * Writers take the bucket lock; an update of a present key links a fresh element in
 * place of the old one, so a value is never seen half-written.  Lookups take no lock:
 * each element carries a sequence word that is odd while the element is rewritten, and a
 * reader validates what it read against it (a seqlock per element), falling back to the
 * bucket lock after a few failed tries.  Every index read from
 * shared memory is range-checked and every chain walk bounded: a corrupt region yields
 * errors, never a wild access.  Details: docs/MEMORY_MODEL.md.  The region's structures
 * and the element accessors: hash.h; the key walks: hash_walk.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "maps/hash.h"
#include "maps/maps.h"
#include "util/util.h"

#define HTAB_VALUE_MAX (4u << 20) /* KMALLOC_MAX_SIZE */
#define HTAB_EXTRA 16 /* spare elements for replacing a present key in a full map */
#define HTAB_FLAGS                                                                       \
	(BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | BPF_F_RDONLY |       \
	 BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | BPF_F_ZERO_SEED)

/* Region layout version, in the header: a file of another layout is refused at attach. */
#define HTAB_LAYOUT 2

/* One allocation word per element, touched only under alloc_lock: whether the element is
 * in use, whether it is on the free list, and the free list's next index.  The free list
 * is kept out of the elements because an element can be taken without popping it (as
 * its bucket's home, below): such an element stays on the list, and is skipped and
 * dropped when popped. */
#define ALLOC_USED (1u << 31)
#define ALLOC_LISTED (1u << 30)
#define ALLOC_NEXT (ALLOC_LISTED - 1)

/* Lockless reads give up and take the bucket lock after this many invalidated walks. */
#define HTAB_READ_TRIES 4

static int is_lru(uint32_t type)
{
	return type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static int htab_alloc_check(const union bpf_attr *attr)
{
	int percpu = brt_map_is_percpu(attr->map_type), lru = is_lru(attr->map_type);
	uint32_t f = attr->map_flags;

	if ((f & ~HTAB_FLAGS) || ((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG)))
		return -EINVAL;
	if (!lru && (f & BPF_F_NO_COMMON_LRU))
		return -EINVAL;
	if (lru && (f & BPF_F_NO_PREALLOC))
		return -BRT_ENOTSUPP;
	if ((f & BPF_F_NUMA_NODE) && percpu)
		return -EINVAL;
	if (!attr->max_entries || !attr->key_size || !attr->value_size)
		return -EINVAL;
	if ((uint64_t)attr->key_size + attr->value_size >= HTAB_VALUE_MAX - 48)
		return -E2BIG;
	if (percpu && BRT_ROUND8(attr->value_size) > 32768)
		return -E2BIG;
	return 0;
}

static uint32_t n_buckets_of(uint32_t max_entries)
{
	uint32_t n = 1;

	while (n < max_entries && n < (1u << 30))
		n <<= 1;
	return n;
}

static uint64_t elem_size_of(const struct brt_map *map)
{
	return sizeof(struct htab_elem) + BRT_ROUND8(map->key_size) +
	       (uint64_t)map->value_stride * map->ncpus;
}

/* Element i (1-based) is the home of bucket i - 1: the element a key of that bucket takes
 * when it is free, which a lookup fetches at the same time as the bucket, so a key at home
 * costs one memory access.  There are elements for max_entries plus spares, raised
 * towards one per bucket, by at most half. */
static uint64_t n_elems_of(const struct brt_map *map)
{
	uint64_t ne = (uint64_t)map->max_entries + HTAB_EXTRA, nb = n_buckets_of(map->max_entries);

	return nb > ne ? (nb < ne + ne / 2 ? nb : ne + ne / 2) : ne;
}

/* Offsets in the region: header, buckets, elements (cache-line aligned), allocation
 * words. */
static uint64_t elems_off(uint64_t nb)
{
	return (sizeof(struct htab_head) + nb * sizeof(struct htab_bucket) + 63) & ~63ull;
}

static int htab_data_size(const struct brt_map *map, uint64_t *size)
{
	uint64_t nb = n_buckets_of(map->max_entries), ne = n_elems_of(map);

	/* The kernel's limit: n_buckets * sizeof(struct bucket) must fit in 32 bits. */
	if (nb > UINT32_MAX / 16)
		return -E2BIG;
	/* indexes fit ALLOC_NEXT; such a map exceeds the size limit of objects anyway */
	if (ne > ALLOC_NEXT || elem_size_of(map) > UINT32_MAX ||
	    ne > (UINT64_MAX >> 24) / elem_size_of(map))
		return -ENOMEM;
	*size = elems_off(nb) + ne * elem_size_of(map) + ne * sizeof(uint32_t);
	return 0;
}

/* Lazy elements.  The kernel allocates a BPF_F_NO_PREALLOC map's elements at update and
 * answers ENOMEM there when memory is short; creating it allocates the buckets only (Red
 * Hat NetObserv creates six of 16M entries each: 2-3.5 GiB of elements apiece here).  So
 * the file of such a map is created with its elements' pages unreserved (a hole:
 * brt_obj_create_sparse()) and a process reserves them in chunks as it first touches
 * them: madvise(MADV_POPULATE_WRITE) on its mapping allocates the pages of the file that
 * nobody allocated yet and maps them all, and fails (ENOMEM, EFAULT when tmpfs is full)
 * where a store into a hole would raise SIGBUS.  Every element is reached through elem(),
 * which hands out only elements of pages this process populated, so neither a key
 * inserted later nor an index another process scribbled into a chain can lead to an
 * unreserved page: a chunk that cannot be populated reads as the end of a chain, and an
 * update that needs it fails with ENOMEM as the kernel's.  Homes are off for these maps
 * (they would scatter the first keys over every page): elements are taken in index order,
 * so memory grows with the keys, as the kernel's.  Needs MADV_POPULATE_WRITE (Linux
 * 5.14); without it the map is reserved whole, as a preallocated one. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define LAZY_CHUNK (256u << 10) /* bytes of elements populated at a time */

static int populate_supported(void)
{
	static _Atomic int known; /* 0 unknown, 1 yes, 2 no */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	static char probe[BRT_PAGE] __attribute__((aligned(BRT_PAGE)));

	if (!k) {
		/* an unknown advice is EINVAL before a zero length is accepted */
		k = madvise(probe, 0, MADV_POPULATE_WRITE) ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 1;
}

static int is_lazy(const struct brt_map *map)
{
	return (map->flags & BPF_F_NO_PREALLOC) && populate_supported();
}

static void htab_lazy_range(const struct brt_map *map, uint64_t *off, uint64_t *len)
{
	uint64_t eoff = elems_off(n_buckets_of(map->max_entries));
	uint64_t lo = (eoff + BRT_PAGE - 1) & ~(uint64_t)(BRT_PAGE - 1);
	uint64_t hi = (eoff + n_elems_of(map) * elem_size_of(map)) & ~(uint64_t)(BRT_PAGE - 1);

	*off = *len = 0;
	if (is_lazy(map) && hi > lo) {
		*off = lo;
		*len = hi - lo;
	}
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* A mapping this process may only read (a read-only BPF_OBJ_GET, below "Read-only
 * mappings") is populated for reading: the write advice fails there (EFAULT), which
 * would read as the end of every chain past the populated pages. */
static int populate_advice(const struct htab *ht)
{
	return brt_map_ro(ht->map) ? MADV_POPULATE_READ : MADV_POPULATE_WRITE;
}

/* elem()'s slow path: element idx of a lazy map, whose page this process has not
 * populated yet.  Populates from the first unpopulated element to idx and a chunk
 * beyond (at most to the last element); NULL when that fails or idx is out of range. */
struct htab_elem *brt_hash_elem_populate(const struct htab *ht, uint32_t idx)
{
	uint32_t have = atomic_load_explicit(&ht->usable, memory_order_relaxed), want;
	uintptr_t lo, hi;

	if (!idx || idx > ht->n_elems)
		return NULL;
	if (idx > have) {
		want = idx + LAZY_CHUNK / ht->elem_size;
		if (want > ht->n_elems || want < idx)
			want = ht->n_elems;
		lo = (uintptr_t)(ht->elems + (size_t)have * ht->elem_size) &
		     ~(uintptr_t)(BRT_PAGE - 1);
		hi = ((uintptr_t)(ht->elems + (size_t)want * ht->elem_size) + BRT_PAGE - 1) &
		     ~(uintptr_t)(BRT_PAGE - 1);
		for (;;) {
			if (!madvise((void *)lo, hi - lo, populate_advice(ht)))
				break;
			if (errno != EINTR)
				return NULL;
		}
		/* others may have populated further meanwhile: keep the larger */
		while (have < want &&
		       !atomic_compare_exchange_weak_explicit(ht->usable_w, &have, want,
							      memory_order_relaxed,
							      memory_order_relaxed))
			;
	}
	return (struct htab_elem *)(ht->elems + (size_t)(idx - 1) * ht->elem_size);
}

static int htab_attach(struct brt_map *map)
{
	struct htab *ht = calloc(1, sizeof(*ht));

	if (!ht)
		return -ENOMEM;
	ht->head = map->data;
	ht->n_buckets = n_buckets_of(map->max_entries);
	ht->n_elems = (uint32_t)n_elems_of(map);
	ht->elem_size = (uint32_t)elem_size_of(map);
	ht->buckets = (struct htab_bucket *)(ht->head + 1);
	ht->elems = (unsigned char *)map->data + elems_off(ht->n_buckets);
	ht->alloc = (uint32_t *)(void *)(ht->elems + (size_t)ht->n_elems * ht->elem_size);
	ht->value_off = sizeof(struct htab_elem) + (uint32_t)BRT_ROUND8(map->key_size);
	ht->key_size = map->key_size;
	ht->lru = is_lru(map->type);
	ht->percpu = brt_map_is_percpu(map->type);
	ht->lazy = is_lazy(map);
	ht->usable_w = &ht->usable;
	atomic_init(&ht->usable, ht->lazy ? 0 : ht->n_elems);
	ht->map = map;
	if (ht->head->n_buckets != ht->n_buckets || ht->head->n_elems != ht->n_elems ||
	    ht->head->elem_size != ht->elem_size || ht->head->layout != HTAB_LAYOUT) {
		free(ht);
		return -EINVAL;
	}
	map->priv = ht;
	return 0;
}

static void htab_detach(struct brt_map *map)
{
	free(map->priv);
	map->priv = NULL;
}

static int htab_init(struct brt_map *map)
{
	struct htab_head *h = map->data;

	h->n_buckets = n_buckets_of(map->max_entries);
	h->n_elems = (uint32_t)n_elems_of(map);
	h->elem_size = (uint32_t)elem_size_of(map);
	h->layout = HTAB_LAYOUT;
	if (!(map->flags & BPF_F_ZERO_SEED) &&
	    getrandom(&h->seed, sizeof(h->seed), GRND_NONBLOCK) != sizeof(h->seed))
		h->seed = 0x5eed;
	return 0;
}

/* No homes in a lazy map (above). */
static uint32_t home_of(const struct htab *ht, uint32_t bucket)
{
	return !ht->lazy && bucket < ht->n_elems ? bucket + 1 : 0;
}

/* Walk bucket b (locked) for key; *prev gets the predecessor's index (0 = bucket head).
 * Returns the element's index or 0. */
static uint32_t find(const struct htab *ht, const struct brt_map *map, struct htab_bucket *b,
		     const void *key, uint32_t hash, uint32_t *prev)
{
	uint32_t idx = b->head, p = 0;
	struct htab_elem *e;

	for (uint32_t steps = 0; steps <= ht->n_elems && (e = elem(ht, idx)); steps++) {
		if (e->hash == hash && key_equal(e->key, key, map->key_size)) {
			if (prev)
				*prev = p;
			return idx;
		}
		p = idx;
		idx = e->next;
	}
	return 0;
}

/* Writer side of the element seqlock (the writer owns the element: fresh from the free
 * list, or linked in a bucket whose lock it holds).  A free element stays odd from
 * free_elem() until it is filled again, so a reader that stood on it while it was
 * unlinked and freed restarts instead of following the free list. */
static void seq_begin(struct htab_elem *e)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	/* no fence (TSan has none): every store that follows is a release store, so a
	 * reader that sees any of them sees this odd value too */
	atomic_store_explicit(&e->seq, (s + 1) | 1, memory_order_relaxed);
}

static void seq_end(struct htab_elem *e)
{
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	atomic_store_explicit(&e->seq, (s | 1) + 1, memory_order_release);
}

/* Find key without the bucket lock; copy its value to out (vsize bytes) when out is not
 * NULL.  Every element is validated against its sequence word after it was read, and
 * against the bucket its hash belongs to (an element recycled into another chain while we
 * stood on it would lead us there): on any doubt the walk restarts.  Returns the element
 * index, 0 when the key is absent, UINT32_MAX when the walks kept failing (take the
 * lock). */
static inline __attribute__((always_inline)) uint32_t
find_lockless(const struct htab *ht, const struct brt_map *map, const void *key, uint32_t hash,
	      void *out, uint32_t vsize)
{
	uint32_t mask = ht->n_buckets - 1, bi = hash & mask;
	struct htab_bucket *b = &ht->buckets[bi];

	/* the bucket and its home element are fetched together, not one after the other */
	__builtin_prefetch(elem(ht, home_of(ht, bi)));
	for (int tries = 0; tries < HTAB_READ_TRIES; tries++) {
		uint32_t idx = atomic_load_explicit(&b->head, memory_order_acquire), steps = 0;
		struct htab_elem *e;

		while ((e = elem(ht, idx)) && steps++ <= ht->n_elems) {
			/* data loads acquire, so the second sequence load cannot pass them */
			uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
			uint32_t h = atomic_load_explicit(&e->hash, memory_order_acquire);
			uint32_t next = atomic_load_explicit(&e->next, memory_order_acquire);
			int match = h == hash && key_equal(e->key, key, map->key_size);

			if (match && out)
				read_value(out, value_of(ht, e), vsize);
			if ((s & 1) || atomic_load_explicit(&e->seq, memory_order_relaxed) != s ||
			    (h & mask) != bi)
				break;
			if (match)
				return idx;
			idx = next;
		}
		if (!e)
			return 0;
	}
	return UINT32_MAX;
}

static void set_link(struct htab *ht, struct htab_bucket *b, uint32_t prev, uint32_t idx)
{
	struct htab_elem *p = elem(ht, prev);

	if (p)
		p->next = idx;
	else
		b->head = idx;
}

static void touch(struct htab *ht, struct htab_elem *e)
{
	if (ht->lru)
		atomic_store_explicit(&e->stamp,
				      atomic_fetch_add_explicit(&ht->head->lru_clock, 1,
								memory_order_relaxed),
				      memory_order_relaxed);
}

/* ---- repair after a crash ---------------------------------------------------------------
 * Every change of a chain, of the count and of the allocation words is made holding the
 * key's bucket lock (the allocator lock nests inside it), so a process killed in the
 * middle of one leaves its half-done state behind a lock it still holds.  Whoever takes
 * such a lock over (brt_shm_lock() returns 1) repairs the chain before using it: an
 * element left odd (its value was being rewritten in place) and a second copy of a key (a
 * replacement linked before the old element was unlinked) are unlinked, a cycle is cut.
 * What a chain cannot show (an element allocated or unlinked but not yet freed, a count
 * reserved for an element never linked, a free list half updated) is repaired by a sweep:
 * the taker sets the map's repair word, and the next writer (update, delete,
 * get_next_key) takes every bucket lock in order, then the allocator lock, and rebuilds
 * the count, the allocation words and the free list from the chains.  A dead owner's lock
 * nobody touches (an empty bucket) is found when the map looks full: reclaim() looks at
 * every lock word and takes dead owners' locks over.  Lookups take no lock and never
 * sweep, so they cost nothing more. */

static int bit_test_set(unsigned char *bits, uint32_t i)
{
	int was = bits[i / 8] >> (i % 8) & 1;

	bits[i / 8] |= (unsigned char)(1u << (i % 8));
	return was;
}

/* Does an element kept earlier in b's chain (the first kept ones from the head) hold e's
 * key?  Chains are short; past 1024 kept elements (a corrupt region) it is not asked. */
static int dup_key(const struct htab *ht, struct htab_bucket *b, uint32_t kept,
		   const struct htab_elem *e)
{
	uint32_t idx = b->head;
	struct htab_elem *k;

	for (uint32_t n = 0; n < kept && n < 1024 && (k = elem(ht, idx)); n++, idx = k->next)
		if (k->hash == e->hash && key_equal(k->key, e->key, ht->key_size))
			return 1;
	return 0;
}

/* Unlink from bucket b's chain (locked) what a dead writer may have left: elements with
 * an odd sequence and later copies of a key; cut the chain at an element already seen
 * (seen: one bit per element, shared by all chains of a sweep).  Unlinked elements stay
 * odd until reused.  Returns the number of elements kept. */
static uint32_t chain_repair(struct htab *ht, struct htab_bucket *b, unsigned char *seen)
{
	uint32_t idx = b->head, prev = 0, kept = 0;
	struct htab_elem *e;

	while ((e = elem(ht, idx))) {
		uint32_t next = e->next;

		if (bit_test_set(seen, idx - 1)) {
			set_link(ht, b, prev, 0);
			break;
		}
		if ((atomic_load_explicit(&e->seq, memory_order_relaxed) & 1) ||
		    dup_key(ht, b, kept, e)) {
			set_link(ht, b, prev, next);
			if (!(atomic_load_explicit(&e->seq, memory_order_relaxed) & 1))
				seq_begin(e);
			idx = next;
			continue;
		}
		kept++;
		prev = idx;
		idx = next;
	}
	return kept;
}

static void need_sweep(struct htab *ht)
{
	atomic_store_explicit(&ht->head->repair, 1, memory_order_relaxed);
}

/* Bucket b's lock was taken over: repair its chain now, the rest at the next sweep. */
static void bucket_recovered(struct htab *ht, struct htab_bucket *b)
{
	unsigned char *seen = calloc(ht->n_elems / 8 + 1, 1);

	if (seen)
		chain_repair(ht, b, seen);
	free(seen);
	need_sweep(ht);
}

void brt_hash_bucket_lock(struct htab *ht, struct htab_bucket *b)
{
	if (brt_shm_lock(&b->lock))
		bucket_recovered(ht, b);
}

static void alloc_lock(struct htab *ht)
{
	if (brt_shm_lock(&ht->head->alloc_lock))
		need_sweep(ht);
}

/* Every bucket lock in bucket order, then the allocator lock: nobody else takes two
 * bucket locks, so this cannot deadlock; afterwards no update is half done. */
static void lock_all(struct htab *ht)
{
	for (uint32_t i = 0; i < ht->n_buckets; i++)
		brt_hash_bucket_lock(ht, &ht->buckets[i]);
	alloc_lock(ht);
}

static void unlock_all(struct htab *ht)
{
	brt_shm_unlock(&ht->head->alloc_lock);
	for (uint32_t i = ht->n_buckets; i-- > 0;)
		brt_shm_unlock(&ht->buckets[i].lock);
}

/* Rebuild the count, the allocation words and the free list from the chains. */
static void sweep(struct htab *ht)
{
	struct htab_head *h = ht->head;
	unsigned char *seen = calloc(ht->n_elems / 8 + 1, 1);
	uint32_t count = 0, free_head = 0;

	if (!seen)
		return;
	lock_all(ht);
	if (atomic_load_explicit(&h->repair, memory_order_relaxed)) {
		for (uint32_t i = 0; i < ht->n_buckets; i++)
			count += chain_repair(ht, &ht->buckets[i], seen);
		for (uint32_t idx = ht->n_elems; idx; idx--) {
			if (seen[(idx - 1) / 8] >> ((idx - 1) % 8) & 1) {
				ht->alloc[idx - 1] = ALLOC_USED;
			} else {
				ht->alloc[idx - 1] = ALLOC_LISTED | free_head;
				free_head = idx;
			}
		}
		h->free_head = free_head;
		h->bump = ht->n_elems;
		atomic_store_explicit(&h->count, count, memory_order_relaxed);
		atomic_store_explicit(&h->repair, 0, memory_order_relaxed);
	}
	unlock_all(ht);
	free(seen);
}

/* Writers call this first: one load of a word of the header line they use anyway. */
static inline void sweep_if_needed(struct htab *ht)
{
	if (__builtin_expect(atomic_load_explicit(&ht->head->repair, memory_order_relaxed), 0))
		sweep(ht);
}

/* The map looks full: are locks of dead owners holding slots?  Takes them over (repairing
 * as above) and sweeps; 1 when something was repaired.  A scan of every lock word, so at
 * most once per 10 ms + 64 ns per bucket in a process (a full map refusing keys, or an
 * LRU map evicting, stays fast).  kill(tid, 0) only for words held at that moment. */
static int reclaim(struct htab *ht)
{
	long long last = atomic_load_explicit(&ht->reclaim_ns, memory_order_relaxed), now;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
	if (last && now - last < 10000000ll + 64ll * ht->n_buckets)
		return 0;
	atomic_store_explicit(&ht->reclaim_ns, now, memory_order_relaxed);
	for (uint32_t i = 0; i < ht->n_buckets; i++) {
		struct htab_bucket *b = &ht->buckets[i];

		if (atomic_load_explicit(&b->lock, memory_order_relaxed) &&
		    brt_shm_lock_reclaim(&b->lock)) {
			bucket_recovered(ht, b);
			brt_shm_unlock(&b->lock);
		}
	}
	if (atomic_load_explicit(&ht->head->alloc_lock, memory_order_relaxed) &&
	    brt_shm_lock_reclaim(&ht->head->alloc_lock)) {
		need_sweep(ht);
		brt_shm_unlock(&ht->head->alloc_lock);
	}
	if (!atomic_load_explicit(&ht->head->repair, memory_order_relaxed))
		return 0;
	sweep(ht);
	return 1;
}

int brt_hash_audit(struct brt_map *map, struct brt_hash_audit *out)
{
	struct htab *ht = map->priv;
	unsigned char *seen, *listed;
	uint32_t idx;

	if (!ht || map->ops != &brt_hash_map_ops)
		return -EINVAL;
	seen = calloc(ht->n_elems / 8 + 1, 1);
	listed = calloc(ht->n_elems / 8 + 1, 1);
	if (!seen || !listed) {
		free(seen);
		free(listed);
		return -ENOMEM;
	}
	memset(out, 0, sizeof(*out));
	lock_all(ht);
	for (uint32_t i = 0; i < ht->n_buckets; i++) {
		struct htab_elem *e;

		idx = ht->buckets[i].head;
		for (uint32_t steps = 0; steps <= ht->n_elems && (e = elem(ht, idx)); steps++) {
			if (bit_test_set(seen, idx - 1))
				break;
			out->linked++;
			out->torn += atomic_load_explicit(&e->seq, memory_order_relaxed) & 1;
			idx = e->next;
		}
	}
	idx = ht->head->free_head;
	for (uint32_t steps = 0; steps < ht->n_elems && elem(ht, idx); steps++) {
		if (bit_test_set(listed, idx - 1))
			break;
		idx = ht->alloc[idx - 1] & ALLOC_NEXT;
	}
	for (idx = 1; idx <= ht->n_elems; idx++) {
		int linked = seen[(idx - 1) / 8] >> ((idx - 1) % 8) & 1;
		int on_list = listed[(idx - 1) / 8] >> ((idx - 1) % 8) & 1;

		if (ht->alloc[idx - 1] & ALLOC_USED)
			out->leaked += !linked;
		else
			out->lost += !linked && !on_list && idx <= ht->head->bump;
	}
	out->count = atomic_load_explicit(&ht->head->count, memory_order_relaxed);
	out->repair = atomic_load_explicit(&ht->head->repair, memory_order_relaxed);
	unlock_all(ht);
	free(seen);
	free(listed);
	return 0;
}

/* Take the home element when it is free, else the first free one of the list (dropping
 * entries that were taken as homes meanwhile), else the next never-used one.  Indexes read
 * from the region are range-checked and the list walk is bounded: a corrupt list yields
 * E2BIG, never a wild access. */
static uint32_t alloc_elem(struct htab *ht, uint32_t home, int *nomem)
{
	struct htab_head *h = ht->head;
	uint32_t idx = 0, *w;

	alloc_lock(ht);
	if (home && !(ht->alloc[home - 1] & ALLOC_USED)) {
		idx = home;
		goto out_take;
	}
	for (uint32_t steps = 0; steps < ht->n_elems; steps++) {
		idx = h->free_head;
		if (!elem(ht, idx)) {
			/* a lazy map's page that cannot be reserved now: keep the list */
			if (idx && idx <= ht->n_elems && ht->lazy)
				goto out_nomem;
			break;
		}
		w = &ht->alloc[idx - 1];
		h->free_head = *w & ALLOC_NEXT;
		*w &= ALLOC_USED;
		if (!(*w & ALLOC_USED))
			goto out_take;
	}
	h->free_head = 0;
	while (h->bump < ht->n_elems) {
		if (!elem(ht, h->bump + 1)) /* a lazy map's page (elem()) */
			goto out_nomem;
		idx = ++h->bump;
		if (!(ht->alloc[idx - 1] & ALLOC_USED))
			goto out_take;
	}
	brt_shm_unlock(&h->alloc_lock);
	return 0;

out_nomem:
	*nomem = 1;
	brt_shm_unlock(&h->alloc_lock);
	return 0;

out_take:
	ht->alloc[idx - 1] |= ALLOC_USED;
	brt_shm_unlock(&h->alloc_lock);
	return idx;
}

static void free_elem(struct htab *ht, uint32_t idx)
{
	struct htab_head *h = ht->head;
	struct htab_elem *e = elem(ht, idx);
	uint32_t *w;

	if (!e)
		return;
	/* deleted, replaced or evicted: its bpf_timer is freed with it (a no-op without) */
	if (ht->map->timer_off >= 0)
		brt_timer_release(ht->map, value_of(ht, e));
	brt_task_work_release(ht->map, value_of(ht, e));
	/* ... and its lists and trees (check_and_free_fields()) */
	if (ht->map->nroots)
		brt_map_free_roots(ht->map, value_of(ht, e), 0);
	seq_begin(e);
	alloc_lock(ht);
	w = &ht->alloc[idx - 1];
	*w &= ~ALLOC_USED;
	if (!(*w & ALLOC_LISTED)) {
		*w = ALLOC_LISTED | (h->free_head & ALLOC_NEXT);
		h->free_head = idx;
	}
	brt_shm_unlock(&h->alloc_lock);
}

/* LRU: scan a few non-empty buckets from a moving cursor and unlink the least recently
 * used element seen.  Bucket locks are taken one at a time, never nested. */
static void evict_one(struct htab *ht)
{
	uint32_t cursor = atomic_fetch_add_explicit(&ht->head->lru_cursor, 1, memory_order_relaxed);
	uint32_t best_b = 0, best_idx = 0, best_age = 0, now, seen = 0, prev;
	uint32_t clock = atomic_load_explicit(&ht->head->lru_clock, memory_order_relaxed);
	struct htab_bucket *b;
	struct htab_elem *e;

	cursor *= 7919;
	for (uint32_t k = 0; k < ht->n_buckets && seen < 8; k++) {
		uint32_t bi = (cursor + k) & (ht->n_buckets - 1), idx, steps = 0;

		b = &ht->buckets[bi];
		brt_hash_bucket_lock(ht, b);
		for (idx = b->head; steps++ <= ht->n_elems && (e = elem(ht, idx)); idx = e->next) {
			now = clock - atomic_load_explicit(&e->stamp, memory_order_relaxed);
			if (!best_idx || now > best_age) {
				best_b = bi;
				best_idx = idx;
				best_age = now;
			}
		}
		if (b->head)
			seen++;
		brt_shm_unlock(&b->lock);
	}
	if (!best_idx)
		return;
	b = &ht->buckets[best_b];
	brt_hash_bucket_lock(ht, b);
	e = elem(ht, best_idx);
	prev = 0;
	for (uint32_t idx = b->head, steps = 0; steps++ <= ht->n_elems && elem(ht, idx);
	     prev = idx, idx = elem(ht, idx)->next) {
		if (idx != best_idx)
			continue;
		set_link(ht, b, prev, e->next);
		atomic_fetch_sub_explicit(&ht->head->count, 1, memory_order_relaxed);
		free_elem(ht, best_idx);
		brt_shm_unlock(&b->lock);
		return;
	}
	brt_shm_unlock(&b->lock);
}

static int reserve_slot(struct htab *ht, uint32_t max_entries)
{
	uint32_t c = atomic_load_explicit(&ht->head->count, memory_order_relaxed);

	while (c < max_entries)
		if (atomic_compare_exchange_weak_explicit(&ht->head->count, &c, c + 1,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return 0;
	return -E2BIG;
}

/* Write a value into a fresh or present element: all CPUs from a syscall buffer, or one
 * CPU (zeroing the others of a fresh element) from a program. */
static void put_value(struct brt_map *map, struct htab *ht, struct htab_elem *e,
		      const void *value, int onallcpus, int fresh)
{
	unsigned char *v = value_of(ht, e);

	if (!ht->percpu && map->nroots) {
		/* roots and kptrs are not copied: a fresh element's start empty, a present
		 * one's are freed */
		brt_map_put_value(map, v, value, fresh);
		if (!fresh)
			brt_map_free_roots(map, v, 0);
		if (map->timer_off >= 0)
			brt_timer_release(map, v);
		brt_task_work_release(map, v);
		return;
	} else if (!ht->percpu) {
		brt_shm_write(v, value, map->value_size);
		/* the caller's bytes of a struct bpf_timer are not copied (copy_map_value());
		 * a value written in place frees the timer it had */
		if (map->timer_off >= 0)
			brt_timer_release(map, v);
		brt_task_work_release(map, v);
		return;
	}
	for (uint32_t cpu = 0; cpu < map->ncpus; cpu++) {
		unsigned char *slot = v + (size_t)cpu * map->value_stride;

		if (onallcpus) /* round_up(value_size, 8) bytes, padding too, as the kernel */
			brt_shm_write(slot, (const unsigned char *)value +
						    (size_t)cpu * map->value_stride,
				      map->value_stride);
		else if (cpu == brt_cpu())
			brt_shm_write(slot, value, map->value_size);
		else if (fresh)
			brt_shm_zero(slot, map->value_stride);
	}
}

static int update(struct brt_map *map, const void *key, const void *value, uint64_t flags,
		  int onallcpus)
{
	struct htab *ht = map->priv;
	uint32_t hash = brt_keyhash(key, map->key_size, ht->head->seed), prev = 0, old, idx;
	uint32_t home = home_of(ht, hash & (ht->n_buckets - 1)), pred, next;
	struct htab_bucket *b = &ht->buckets[hash & (ht->n_buckets - 1)];
	struct htab_elem *e;
	int nomem = 0;

	if (flags > BPF_EXIST)
		return -EINVAL;
	sweep_if_needed(ht);
	__builtin_prefetch(elem(ht, home));
	for (int tries = 0;; tries++) {
		brt_hash_bucket_lock(ht, b);
		old = find(ht, map, b, key, hash, &prev);
		if (old && flags == BPF_NOEXIST)
			goto out_unlock_err_exist;
		if (!old && flags == BPF_EXIST) {
			brt_shm_unlock(&b->lock);
			return -ENOENT;
		}
		if (old || !reserve_slot(ht, map->max_entries))
			break;
		brt_shm_unlock(&b->lock);
		if (!tries && reclaim(ht))
			continue;
		if (!ht->lru)
			return -E2BIG;
		if (tries > 64)
			return -ENOMEM;
		evict_one(ht);
	}
	/* A value of one word is stored in place: one atomic store, so every reader sees the
	 * old or the new value whole, and no element changes hands.  A program holding the
	 * element sees the new value at once (the kernel's would, after its next reuse).
	 * Not with a bpf_spin_lock in the value: its holder must keep it (a fresh element's
	 * lock starts free, the old one's stays as it is). */
	if (old && !ht->percpu && map->value_size <= 8 && map->lock_off < 0 && !map->nroots) {
		e = elem(ht, old);
		brt_shm_write(value_of(ht, e), value, map->value_size);
		touch(ht, e);
		brt_shm_unlock(&b->lock);
		return 0;
	}
	/* Per-CPU values are updated in place, as the kernel does. */
	if (old && ht->percpu) {
		e = elem(ht, old);
		seq_begin(e);
		put_value(map, ht, e, value, onallcpus, 0);
		seq_end(e);
		touch(ht, e);
		brt_shm_unlock(&b->lock);
		return 0;
	}
	idx = alloc_elem(ht, home, &nomem);
	e = elem(ht, idx);
	if (!e) {
		if (!old) {
			atomic_fetch_sub_explicit(&ht->head->count, 1, memory_order_relaxed);
			brt_shm_unlock(&b->lock);
			/* the kernel's answer when a NO_PREALLOC element cannot be allocated */
			return nomem ? -ENOMEM : -E2BIG;
		}
		/* All spares in flight: overwrite in place rather than fail. */
		e = elem(ht, old);
		seq_begin(e);
		put_value(map, ht, e, value, onallcpus, 0);
		seq_end(e);
		brt_shm_unlock(&b->lock);
		return 0;
	}
	/* Where it goes: a key in its home element first in the chain (the lookup then reads
	 * the line it prefetched and nothing else), another behind the head when the head
	 * is at home; a replacement takes the old element's place otherwise. */
	if (old && !(idx == home && prev)) {
		pred = prev;
		next = elem(ht, old)->next;
	} else if (!old && idx != home && home && b->head == home) {
		pred = home;
		next = elem(ht, home)->next;
	} else {
		pred = 0;
		next = b->head;
	}
	seq_begin(e);
	e->hash = hash;
	brt_shm_write(e->key, key, map->key_size);
	put_value(map, ht, e, value, onallcpus, 1);
	e->next = next;
	seq_end(e);
	touch(ht, e);
	/* published only now, complete: readers that reach it see the stable sequence; a
	 * replacement moved to the head is unlinked from its old place afterwards, so a
	 * reader finds the key (old or new) all along */
	set_link(ht, b, pred, idx);
	if (old && pred != prev)
		set_link(ht, b, prev, elem(ht, old)->next);
	/* freed before the unlock: an element allocated or unlinked but not free exists
	 * only under a bucket lock, which is what lets a sweep find leaks (above) */
	if (old)
		free_elem(ht, old);
	brt_shm_unlock(&b->lock);
	return 0;

out_unlock_err_exist:
	brt_shm_unlock(&b->lock);
	return -EEXIST;
}

static int htab_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	return update(map, key, value, flags, 1);
}

static int htab_prog_update(struct brt_map *map, const void *key, const void *value,
			    uint64_t flags)
{
	return update(map, key, value, flags, 0);
}

/* Unlink key; if value is given, copy the value out first (lookup_and_delete). */
static int remove_key(struct brt_map *map, const void *key, void *value)
{
	struct htab *ht = map->priv;
	uint32_t hash = brt_keyhash(key, map->key_size, ht->head->seed), prev = 0, idx;
	struct htab_bucket *b = &ht->buckets[hash & (ht->n_buckets - 1)];
	struct htab_elem *e;

	sweep_if_needed(ht);
	brt_hash_bucket_lock(ht, b);
	idx = find(ht, map, b, key, hash, &prev);
	e = elem(ht, idx);
	if (!e) {
		brt_shm_unlock(&b->lock);
		return -ENOENT;
	}
	if (value)
		brt_shm_read(value, value_of(ht, e), brt_map_value_size(map));
	set_link(ht, b, prev, e->next);
	atomic_fetch_sub_explicit(&ht->head->count, 1, memory_order_relaxed);
	free_elem(ht, idx);
	brt_shm_unlock(&b->lock);
	return 0;
}

static int htab_delete(struct brt_map *map, const void *key)
{
	return remove_key(map, key, NULL);
}

static int htab_lookup_and_delete(struct brt_map *map, const void *key, void *value)
{
	return remove_key(map, key, value);
}

const void *brt_hash_key_of(const struct brt_map *map, const void *value)
{
	const struct htab *ht = map->priv;

	return (const unsigned char *)value - ht->value_off + offsetof(struct htab_elem, key);
}

int brt_hash_probe(const struct brt_map *map, struct brt_hash_probe *out)
{
	const struct htab *ht = map->priv;

	/* per-CPU values depend on the CPU: called instead */
	if ((map->type != BPF_MAP_TYPE_HASH && map->type != BPF_MAP_TYPE_LRU_HASH) || !ht ||
	    ht->percpu)
		return -EOPNOTSUPP;
	memset(out, 0, sizeof(*out));
	out->buckets = ht->buckets;
	out->elems = ht->elems;
	out->n_buckets = ht->n_buckets;
	out->n_elems = ht->n_elems;
	/* a lazy map's probe follows only populated elements: the rest through the map's
	 * lookup, whose elem() populates them */
	out->n_elems_live = ht->lazy ? &ht->usable : NULL;
	out->elem_size = ht->elem_size;
	out->key_size = ht->key_size;
	out->value_off = ht->value_off;
	out->seed = ht->head->seed;
	out->bucket_size = sizeof(struct htab_bucket);
	out->head_off = offsetof(struct htab_bucket, head);
	out->next_off = offsetof(struct htab_elem, next);
	out->hash_off = offsetof(struct htab_elem, hash);
	out->seq_off = offsetof(struct htab_elem, seq);
	out->key_off = offsetof(struct htab_elem, key);
	/* touch()'s stamp */
	out->lru_clock = ht->lru ? (void *)(uintptr_t)&ht->head->lru_clock : NULL;
	out->stamp_off = offsetof(struct htab_elem, stamp);
	return 0;
}

static void *htab_lookup_cpu(struct brt_map *map, const void *key, uint32_t cpu)
{
	struct htab *ht = map->priv;
	uint32_t hash = brt_keyhash(key, map->key_size, ht->head->seed);
	struct htab_bucket *b = &ht->buckets[hash & (ht->n_buckets - 1)];
	uint32_t idx = find_lockless(ht, map, key, hash, NULL, 0);
	struct htab_elem *e;
	unsigned char *v = NULL;

	if (idx != UINT32_MAX) {
		e = elem(ht, idx);
		if (!e)
			return NULL;
		touch(ht, e);
		v = value_of(ht, e);
		return ht->percpu ? v + (size_t)cpu * map->value_stride : v;
	}
	brt_hash_bucket_lock(ht, b);
	e = elem(ht, find(ht, map, b, key, hash, NULL));
	if (e) {
		touch(ht, e);
		v = value_of(ht, e);
		if (ht->percpu)
			v += (size_t)cpu * map->value_stride;
	}
	brt_shm_unlock(&b->lock);
	return v;
}

static void *htab_lookup(struct brt_map *map, const void *key)
{
	return htab_lookup_cpu(map, key, brt_cpu());
}

/* ---- read-only mappings -----------------------------------------------------------------
 * A process that got the map with BPF_OBJ_GET and BPF_F_RDONLY of a pin it may only read
 * maps the file read-only (obj.h's ro): it may take no lock, stamp no LRU element, sweep
 * nothing.  Its lookups (here) and key walks (hash_walk.c) read the chains as the lockless
 * lookup does, validating every element against its sequence word and bucket; where a
 * writer keeps an element odd (rewriting it, or dead in the middle of it until a writer
 * repairs the chain) the read is retried, yielding, and after BRT_MAP_RO_TRIES walks it
 * fails with EBUSY (maps.h) instead of waiting on a lock it cannot take.  The kernel's
 * syscall lookup of an LRU map does not mark the element either
 * (map_lookup_elem_sys_only), nor does its get_next_key: a read-only fd's reads change
 * nothing there too.  Only the syscall side reads such a mapping: no program of the
 * process may use the map (prog.c). */
/* find_lockless() for a read-only mapping: the same validation, each walk ended, as a
 * walk under the lock (find()), after n_elems elements, or before where the chain comes
 * back to an element it passed (Brent's check: every element of the chain has been seen
 * by then); *budget counts the elements visited.
 * UINT32_MAX when the walk must be retried, or the budget is spent. */
static uint32_t find_ro(const struct htab *ht, const struct brt_map *map, const void *key,
			uint32_t hash, void *out, uint32_t vsize, uint64_t *budget)
{
	uint32_t mask = ht->n_buckets - 1, bi = hash & mask;
	uint32_t idx = atomic_load_explicit(&ht->buckets[bi].head, memory_order_acquire);
	uint32_t saved = 0, n = 0, power = 1;
	struct htab_elem *e;

	while ((e = elem(ht, idx)) && n <= ht->n_elems) {
		uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
		uint32_t h = atomic_load_explicit(&e->hash, memory_order_acquire);
		uint32_t next = atomic_load_explicit(&e->next, memory_order_acquire);
		int match = h == hash && key_equal(e->key, key, map->key_size);

		if (!*budget)
			return UINT32_MAX;
		--*budget;
		if (match && out)
			read_value(out, value_of(ht, e), vsize);
		if ((s & 1) || atomic_load_explicit(&e->seq, memory_order_relaxed) != s ||
		    (h & mask) != bi)
			return UINT32_MAX;
		if (match)
			return idx;
		if (++n == power) {
			saved = idx;
			power *= 2;
		}
		idx = next;
		if (idx == saved)
			break;
	}
	return 0;
}

static int copy_value_ro(const struct htab *ht, const struct brt_map *map, const void *key,
			 uint32_t hash, void *value)
{
	uint64_t budget = ro_budget(ht);

	for (int tries = 0; tries < BRT_MAP_RO_TRIES && budget; tries++) {
		uint32_t idx = find_ro(ht, map, key, hash, value, brt_map_value_size(map),
				       &budget);

		if (idx != UINT32_MAX)
			return idx ? 0 : -ENOENT;
		sched_yield();
	}
	return brt_map_ro_busy(map);
}

static int htab_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct htab *ht = map->priv;
	uint32_t hash = brt_keyhash(key, map->key_size, ht->head->seed);
	struct htab_bucket *b = &ht->buckets[hash & (ht->n_buckets - 1)];
	uint32_t idx = find_lockless(ht, map, key, hash, value, brt_map_value_size(map));
	struct htab_elem *e;

	if (idx != UINT32_MAX)
		return idx ? 0 : -ENOENT;
	if (brt_map_ro(map))
		return copy_value_ro(ht, map, key, hash, value);
	brt_hash_bucket_lock(ht, b);
	e = elem(ht, find(ht, map, b, key, hash, NULL));
	if (e)
		brt_shm_read(value, value_of(ht, e), brt_map_value_size(map));
	brt_shm_unlock(&b->lock);
	return e ? 0 : -ENOENT;
}

/* hash_walk.c: the order, and why a walk ends even in a corrupt region.  A read-only
 * mapping's walk takes no lock, so it sweeps nothing. */
static int htab_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	struct htab *ht = map->priv;

	if (brt_map_ro(map))
		return brt_hash_next_key(ht, map, key, next_key, 0);
	sweep_if_needed(ht);
	return brt_hash_next_key(ht, map, key, next_key, 1);
}

uint32_t brt_hash_n_buckets(const struct brt_map *map)
{
	return ((const struct htab *)map->priv)->n_buckets;
}

uint32_t brt_hash_bucket_of(const struct brt_map *map, const void *key)
{
	const struct htab *ht = map->priv;

	return brt_keyhash(key, map->key_size, ht->head->seed) & (ht->n_buckets - 1);
}

int brt_hash_first_key_from(struct brt_map *map, uint32_t bucket, void *key, uint32_t *at)
{
	struct htab *ht = map->priv;
	int locked = !brt_map_ro(map);

	if (locked)
		sweep_if_needed(ht);
	return brt_hash_first_from(ht, map, bucket, key, at, locked);
}

uint64_t brt_hash_count(const struct brt_map *map)
{
	const struct htab_head *h = map->data;

	/* the count word is shared memory: a value, never an index, so no check needed */
	return map->ops == &brt_hash_map_ops && h ?
		       atomic_load_explicit(&h->count, memory_order_relaxed) : 0;
}

/* file_values (maps.h): the elements whose allocation word says in use (a replaced
 * element is freed under its bucket's lock before the lock goes, so at most the few in
 * flight are an old copy: they only make a walker find something a moment longer), read
 * with their allocation words in chunks of about 64 KiB */
static int htab_file_values(const struct brt_map *m, int fd, uint32_t off, uint32_t len,
			    void (*fn)(void *arg, const void *bytes), void *arg)
{
	uint64_t ne = n_elems_of(m), es = elem_size_of(m);
	uint64_t eoff = elems_off(n_buckets_of(m->max_entries)), aoff = eoff + ne * es;
	uint64_t vo = sizeof(struct htab_elem) + BRT_ROUND8(m->key_size);
	uint32_t per = es >= 65536 ? 1 : (uint32_t)(65536 / es), n;
	uint32_t *words = malloc(per * sizeof(*words));
	unsigned char *buf = malloc(per * es);
	int err = 0;

	if ((uint64_t)off + len > m->value_size)
		err = -EINVAL;
	else if (!words || !buf)
		err = -ENOMEM;
	for (uint64_t i = 0; i < ne && !err; i += n) {
		int any = 0;

		n = ne - i < per ? (uint32_t)(ne - i) : per;
		if (pread(fd, words, n * sizeof(*words), (off_t)(aoff + i * sizeof(*words))) !=
		    (ssize_t)(n * sizeof(*words))) {
			err = -EIO;
			break;
		}
		for (uint32_t k = 0; k < n; k++)
			any |= !!(words[k] & ALLOC_USED);
		if (!any)
			continue;
		if (pread(fd, buf, n * es, (off_t)(eoff + i * es)) != (ssize_t)(n * es)) {
			err = -EIO;
			break;
		}
		for (uint32_t k = 0; k < n; k++)
			if (words[k] & ALLOC_USED)
				fn(arg, buf + k * es + vo + off);
	}
	free(words);
	free(buf);
	return err;
}

const struct brt_map_ops brt_hash_map_ops = {
	.ro_reads = 1,
	.file_values = htab_file_values,
	.alloc_check = htab_alloc_check,
	.data_size = htab_data_size,
	.lazy_range = htab_lazy_range,
	.init = htab_init,
	.attach = htab_attach,
	.detach = htab_detach,
	.lookup = htab_lookup,
	.lookup_cpu = htab_lookup_cpu,
	.copy_value = htab_copy_value,
	.update = htab_update,
	.prog_update = htab_prog_update,
	.delete = htab_delete,
	.get_next_key = htab_get_next_key,
	.lookup_and_delete = htab_lookup_and_delete,
};
