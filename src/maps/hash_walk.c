/* hash_walk.c - a hash map's key walks (get_next_key).  Order: bucket by bucket, chain
 * order within a bucket; a key that is not present restarts from the first key, as the
 * kernel does.  Only a key a lookup finds where it was read is returned (a key copied out
 * that hashes to another bucket, whose stored hash is wrong, or that repeats an earlier
 * key of the chain, in a corrupt or cyclic chain: shared memory, would send the next call
 * back to the start or round the cycle forever): the next call finds it again and goes on
 * after it, so every walk moves forward and ends after at most one step per element
 * position even in a corrupt region.  Which positions those are is decided on a copy of
 * the chain, after its lock is gone, by one sort (copy_reach()): asking a lookup position
 * by position, under the lock, was quadratic in a chain a scribbler makes as long as the
 * map (131,088 elements: over 10 s, the bucket's writers waiting meanwhile).  On a
 * read-only mapping (hash.c, "read-only mappings") the chains are read without their
 * locks, each element validated against its sequence word and bucket.
 *
 * Nothing is allocated under a bucket's lock, and a walk of a sound map allocates
 * nothing at all: a chain is copied into room on the stack (CHAIN_ROOM positions, fewer
 * for long keys), which holds a sound map's chains (n_buckets is at least max_entries:
 * chains of an element or two); a longer one (keys that collide, a scribbled chain) is
 * counted to its end under the lock, the room made outside it, and the chain copied
 * again.  The kernel's htab_map_get_next_key() never answers ENOMEM; bpfrt's did (the
 * copy grew with realloc under the lock).  When that room cannot be made (a process out
 * of memory), the answer is found on the chain itself under its lock (chain_next_locked():
 * linear for a sound chain however long: keys that collide, a BPF_F_ZERO_SEED map's; a
 * scribbled chain's walk is budgeted, then ENOMEM); on a read-only mapping, without the
 * lock (chain_next_ro(): the same walk, each element validated; a scribbled chain's walk
 * within the read-only budget, then EBUSY, never ENOMEM).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "maps/hash.h"
#include "maps/maps.h"
#include "util/util.h"

/* A bucket's chain copied: the stored hash and a private copy of the key of each element,
 * in chain order.  The reads stop at a repeated index (Brent's cycle check: a scribbled
 * chain may loop), so a copy holds at most about twice the chain's distinct elements.
 * The arrays are the stack room below (chain_init()) or, for a longer chain, one
 * allocation (heap). */
#define CHAIN_ROOM 32          /* positions of the stack room */
#define CHAIN_ROOM_KEYS 2048   /* bytes of keys in it (keys are at most 512 bytes) */
struct chain_copy {
	uint32_t n, cap;
	uint32_t *hash;
	unsigned char *keys; /* n keys of key_size bytes */
	uint32_t *order;     /* copy_reach()'s scratch */
	unsigned char *reach;
	void *heap;          /* the arrays' allocation, NULL while they are the room's */
	uint32_t room_hash[CHAIN_ROOM], room_order[CHAIN_ROOM];
	unsigned char room_reach[CHAIN_ROOM];
	_Alignas(8) unsigned char room_keys[CHAIN_ROOM_KEYS];
};

static void chain_init(struct chain_copy *c, uint32_t key_size)
{
	c->n = 0;
	c->cap = CHAIN_ROOM_KEYS / key_size < CHAIN_ROOM ? CHAIN_ROOM_KEYS / key_size : CHAIN_ROOM;
	c->hash = c->room_hash;
	c->keys = c->room_keys;
	c->order = c->room_order;
	c->reach = c->room_reach;
	c->heap = NULL;
}

/* Room for cap positions, the n copied kept; never called under a lock.  0 or -ENOMEM
 * (the copy as it was). */
static int chain_room(struct chain_copy *c, uint32_t key_size, uint64_t cap)
{
	size_t per = 2 * sizeof(uint32_t) + 1 + key_size;
	unsigned char *p;

	if (cap <= c->cap)
		return 0;
	if (cap > UINT32_MAX || cap > SIZE_MAX / per)
		return -ENOMEM;
	p = malloc((size_t)cap * per);
	if (!p)
		return -ENOMEM;
	/* hash, order (4-byte), keys, reach */
	memcpy(p, c->hash, (size_t)c->n * sizeof(uint32_t));
	memcpy(p + (size_t)cap * 8, c->keys, (size_t)c->n * key_size);
	c->hash = (uint32_t *)(void *)p;
	c->order = (uint32_t *)(void *)(p + (size_t)cap * 4);
	c->keys = p + (size_t)cap * 8;
	c->reach = c->keys + (size_t)cap * key_size;
	free(c->heap);
	c->heap = p;
	c->cap = (uint32_t)cap;
	return 0;
}

/* One step of a chain walk past the element at position len (index *idx) to next, with
 * Brent's cycle check: 0 where the chain comes back to the element saved (a scribbled
 * chain's loop), 1 to go on. */
static inline int chain_step(uint32_t *len, uint32_t *power, uint32_t *saved, uint32_t *idx,
			     uint32_t next)
{
	if (++*len == *power) {
		*saved = *idx;
		*power *= 2;
	}
	*idx = next;
	return *idx != *saved;
}

/* Bucket bi's chain as a lockless reader sees it, every element validated as hash.c's
 * find_lockless() does (the read restarts on doubt, at most BRT_MAP_RO_TRIES times and
 * within ro_budget(): then -EBUSY). */
static int chain_read_ro(const struct htab *ht, const struct brt_map *map, uint32_t bi,
			 struct chain_copy *c)
{
	uint32_t mask = ht->n_buckets - 1, ks = map->key_size;
	const struct htab_bucket *b = &ht->buckets[bi];
	uint64_t budget = ro_budget(ht);

	for (int tries = 0; tries < BRT_MAP_RO_TRIES && budget; tries++) {
		uint32_t idx = atomic_load_explicit(&b->head, memory_order_acquire);
		uint32_t saved = 0, power = 1;
		struct htab_elem *e;
		int ok = 1;

		c->n = 0;
		while ((e = elem(ht, idx)) && c->n <= ht->n_elems) {
			if (!budget) {
				ok = 0;
				break;
			}
			budget--;
			uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
			uint32_t h = atomic_load_explicit(&e->hash, memory_order_acquire);
			uint32_t next = atomic_load_explicit(&e->next, memory_order_acquire);

			/* no lock held: grow as the copy goes */
			if (c->n == c->cap && chain_room(c, ks, (uint64_t)c->cap * 2 + 16))
				return -ENOMEM;
			brt_shm_read(c->keys + (size_t)c->n * ks, e->key, ks);
			if ((s & 1) || atomic_load_explicit(&e->seq, memory_order_relaxed) != s ||
			    (h & mask) != bi) {
				ok = 0;
				break;
			}
			c->hash[c->n++] = h;
			if (c->n == power) {
				saved = idx;
				power *= 2;
			}
			idx = next;
			if (idx == saved)
				break;
		}
		if (ok)
			return 0;
		sched_yield();
	}
	return brt_map_ro_busy(map);
}

/* For every position of a copied chain at once: would a lookup of its key stop there
 * (only such a key may a key walk return)?  When the hash stored there is the key's and
 * no position before it holds the same hash and key.  Found by sorting the positions
 * whose stored hash is right by hash, key and position, the first of each run kept:
 * O(n log n), where asking position by position scanned all before it (quadratic, and
 * the chain is as long as a scribbler makes it: n_elems). */
static _Thread_local const struct chain_copy *sort_chain;
static _Thread_local uint32_t sort_ks;

static int pos_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct chain_copy *c = sort_chain;
	int d;

	if (c->hash[x] != c->hash[y])
		return c->hash[x] < c->hash[y] ? -1 : 1;
	d = memcmp(c->keys + (size_t)x * sort_ks, c->keys + (size_t)y * sort_ks, sort_ks);
	if (d)
		return d;
	return x < y ? -1 : x > y;
}

static void copy_reach(const struct htab *ht, const struct brt_map *map, uint32_t bi,
		       struct chain_copy *c)
{
	uint32_t ks = map->key_size, seed = ht->head->seed, m = 0;

	for (uint32_t pos = 0; pos < c->n; pos++) {
		uint32_t hash = brt_keyhash(c->keys + (size_t)pos * ks, ks, seed);

		c->reach[pos] = 0;
		if (hash == c->hash[pos] && (hash & (ht->n_buckets - 1)) == bi)
			c->order[m++] = pos;
	}
	sort_chain = c;
	sort_ks = ks;
	if (m)
		qsort(c->order, m, sizeof(*c->order), pos_cmp);
	for (uint32_t i = 0; i < m; i++) {
		uint32_t p = c->order[i], q = i ? c->order[i - 1] : 0;

		if (!i || c->hash[p] != c->hash[q] ||
		    memcmp(c->keys + (size_t)p * ks, c->keys + (size_t)q * ks, ks))
			c->reach[p] = 1;
	}
}

/* The first key of a copied chain at position from or later that a lookup stops at,
 * copied to out; 0 or -ENOENT. */
static int copy_next_key(const struct htab *ht, const struct brt_map *map, uint32_t bi,
			 struct chain_copy *c, uint32_t from, void *out)
{
	copy_reach(ht, map, bi, c);
	for (uint32_t pos = from; pos < c->n; pos++)
		if (c->reach[pos]) {
			memcpy(out, c->keys + (size_t)pos * map->key_size, map->key_size);
			return 0;
		}
	return -ENOENT;
}

/* Bucket bi's chain copied under its lock (the walk a writer waits for: one pass, no
 * sequence words to check), ended as chain_read_ro() ends it: after n_elems + 1
 * elements, or where the chain comes back to an element it passed (a position after that
 * repeats an earlier one's key and hash, so no lookup stops there).  A chain longer than
 * the copy's room is counted to that end, the room made after the lock is gone and the
 * chain read again (it may have grown meanwhile: then once more, with room for the
 * longest chain there can be, n_elems + 1). */
static int chain_read_locked(struct htab *ht, const struct brt_map *map, uint32_t bi,
			     struct chain_copy *c)
{
	struct htab_bucket *b = &ht->buckets[bi];
	uint32_t ks = map->key_size;

	for (int pass = 0;; pass++) {
		uint32_t idx, saved = 0, power = 1, len = 0;
		struct htab_elem *e;
		uint64_t want;
		int err;

		brt_hash_bucket_lock(ht, b);
		c->n = 0;
		idx = b->head;
		while ((e = elem(ht, idx)) && len <= ht->n_elems) {
			if (len < c->cap) {
				memcpy(c->keys + (size_t)len * ks, e->key, ks);
				c->hash[len] = e->hash;
			}
			if (!chain_step(&len, &power, &saved, &idx, e->next))
				break;
		}
		brt_shm_unlock(&b->lock);
		if (len <= c->cap) {
			c->n = len;
			return 0;
		}
		want = pass ? (uint64_t)ht->n_elems + 1 : (uint64_t)len * 2;
		err = chain_room(c, ks, want < ht->n_elems + 1ull ? want : ht->n_elems + 1ull);
		if (err)
			return err;
	}
}

/* Would a lookup of the key at position pos of bucket bi's chain, element e, stop there
 * (copy_reach()'s answer, found on the chain itself under its lock)?  Its stored hash is
 * the key's and no position before it holds the same hash and key.  Each element visited
 * costs one of *budget; 0 when it runs out. */
static int reach_locked(const struct htab *ht, uint32_t bi, const struct htab_elem *e,
			uint32_t pos, uint32_t ks, uint64_t *budget)
{
	uint32_t h = e->hash, idx = ht->buckets[bi].head;
	const struct htab_elem *q;

	if (brt_keyhash(e->key, ks, ht->head->seed) != h || (h & (ht->n_buckets - 1)) != bi)
		return 0;
	for (uint32_t i = 0; i < pos && (q = elem(ht, idx)); i++, idx = q->next) {
		if (!*budget)
			return 0;
		--*budget;
		if (q->hash == h && !memcmp(q->key, e->key, ks))
			return 0;
	}
	return 1;
}

/* A chain longer than the stack room when the process has no memory for a copy: the
 * answer of bucket_next() found on the chain under its lock, nothing copied.  The chain is
 * walked and ended as chain_read_locked() does; each candidate position is asked
 * reach_locked(), a walk back from the head.  A sound chain's first candidate is its
 * answer (distinct keys, right hashes), so a chain of any length costs two walks at most;
 * a scribbled one (duplicates, wrong hashes) could cost one walk per position under the
 * lock, so the visits are budgeted (four per element the map has, more than a sound chain
 * ever needs): past that, ENOMEM, as the copy's answer was. */
static int chain_next_locked(struct htab *ht, const struct brt_map *map, uint32_t bi,
			     const void *key, uint32_t hash, void *out)
{
	struct htab_bucket *b = &ht->buckets[bi];
	uint32_t ks = map->key_size, idx, saved = 0, power = 1, len = 0;
	uint64_t budget = 4 * ((uint64_t)ht->n_elems + 1);
	struct htab_elem *e;
	int found = !key, err = key ? -ESRCH : -ENOENT;

	brt_hash_bucket_lock(ht, b);
	idx = b->head;
	while ((e = elem(ht, idx)) && len <= ht->n_elems) {
		if (!budget) {
			err = -ENOMEM;
			break;
		}
		budget--;
		if (!found) {
			if (e->hash == hash && !memcmp(e->key, key, ks)) {
				found = 1;
				err = -ENOENT;
			}
		} else if (reach_locked(ht, bi, e, len, ks, &budget)) {
			memcpy(out, e->key, ks);
			err = 0;
			break;
		}
		if (!chain_step(&len, &power, &saved, &idx, e->next))
			break;
	}
	brt_shm_unlock(&b->lock);
	return err;
}

/* reach_locked() on a read-only mapping, no lock held: would a lookup of key (private,
 * stored hash h), read at position pos of the chain that started at element head, stop
 * there?  1, 0, or -1 when what was read was being changed (the chain's head is no longer
 * head, an element's sequence word odd or moved, its hash another bucket's: the caller
 * reads again).  Each element visited costs one of *budget; -1 when it runs out. */
static int reach_ro(const struct htab *ht, uint32_t bi, uint32_t head, const void *key,
		    uint32_t h, uint32_t pos, uint32_t ks, uint64_t *budget)
{
	const struct htab_bucket *b = &ht->buckets[bi];
	uint32_t idx = head, mask = ht->n_buckets - 1;
	const struct htab_elem *q;

	if (brt_keyhash(key, ks, ht->head->seed) != h)
		return 0;
	for (uint32_t i = 0; i < pos && (q = elem(ht, idx)); i++) {
		uint32_t s = atomic_load_explicit(&q->seq, memory_order_acquire);
		uint32_t qh = atomic_load_explicit(&q->hash, memory_order_acquire);
		uint32_t next = atomic_load_explicit(&q->next, memory_order_acquire);
		int same = qh == h && key_equal(q->key, key, ks);

		if (!*budget)
			return -1;
		--*budget;
		if ((s & 1) || atomic_load_explicit(&q->seq, memory_order_relaxed) != s ||
		    (qh & mask) != bi)
			return -1;
		if (same)
			return 0;
		idx = next;
	}
	return atomic_load_explicit(&b->head, memory_order_acquire) == head ? 1 : -1;
}

/* chain_next_locked() on a read-only mapping (a chain longer than the stack room, no
 * memory for a copy): the answer found on the chain without its lock, every element read
 * as chain_read_ro() reads it.  A candidate is read into out, checked unchanged, then
 * asked reach_ro() (a sound chain's first is the answer: two walks at most).  A doubt
 * reads the chain again, at most BRT_MAP_RO_TRIES times within ro_budget() (which a
 * scribbled chain's walks back use up): then EBUSY, as chain_read_ro() answers.  Never
 * ENOMEM: the kernel's walk allocates nothing.  out holds junk on an error. */
static int chain_next_ro(const struct htab *ht, const struct brt_map *map, uint32_t bi,
			 const void *key, uint32_t hash, void *out)
{
	const struct htab_bucket *b = &ht->buckets[bi];
	uint32_t mask = ht->n_buckets - 1, ks = map->key_size;
	uint64_t budget = ro_budget(ht);

	for (int tries = 0; tries < BRT_MAP_RO_TRIES && budget; tries++) {
		uint32_t head = atomic_load_explicit(&b->head, memory_order_acquire);
		uint32_t idx = head, saved = 0, power = 1, len = 0;
		int found = !key, err = key ? -ESRCH : -ENOENT, r = 0;
		struct htab_elem *e;

		while ((e = elem(ht, idx)) && len <= ht->n_elems) {
			uint32_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
			uint32_t h = atomic_load_explicit(&e->hash, memory_order_acquire);
			uint32_t next = atomic_load_explicit(&e->next, memory_order_acquire);
			int match = !found && h == hash && key_equal(e->key, key, ks);

			if (!budget) {
				r = -1;
				break;
			}
			budget--;
			if (found)
				brt_shm_read(out, e->key, ks);
			if ((s & 1) || atomic_load_explicit(&e->seq, memory_order_relaxed) != s ||
			    (h & mask) != bi) {
				r = -1;
				break;
			}
			if (match) {
				found = 1;
				err = -ENOENT;
			} else if (found && (r = reach_ro(ht, bi, head, out, h, len, ks, &budget))) {
				if (r > 0)
					err = 0;
				break;
			}
			if (!chain_step(&len, &power, &saved, &idx, next))
				break;
		}
		if (r >= 0)
			return err;
		sched_yield();
	}
	return brt_map_ro_busy(map);
}

/* The first key a lookup stops at in bucket bi: from the chain's start, or (key, whose
 * hash is hash) after the key's position.  0 (copied to out), -ENOENT (none), -ESRCH (key
 * is not in the chain) or another -errno. */
static int bucket_next(struct htab *ht, const struct brt_map *map, uint32_t bi,
		       const void *key, uint32_t hash, struct chain_copy *c, int locked,
		       void *out)
{
	uint32_t from = 0, ks = map->key_size;
	int err = locked ? chain_read_locked(ht, map, bi, c) : chain_read_ro(ht, map, bi, c);

	if (err == -ENOMEM)
		return locked ? chain_next_locked(ht, map, bi, key, hash, out)
			      : chain_next_ro(ht, map, bi, key, hash, out);
	if (err)
		return err;
	if (key) {
		while (from < c->n &&
		       (c->hash[from] != hash || memcmp(c->keys + (size_t)from * ks, key, ks)))
			from++;
		if (from++ == c->n)
			return -ESRCH;
	}
	return copy_next_key(ht, map, bi, c, from, out);
}

/* hash.c's get_next_key (above): on chains copied under their locks (locked) or, on a
 * read-only mapping, read without them. */
int brt_hash_next_key(struct htab *ht, const struct brt_map *map, const void *key,
		      void *next_key, int locked)
{
	uint32_t start = 0, mask = ht->n_buckets - 1;
	struct chain_copy c;
	int err = -ENOENT;

	chain_init(&c, map->key_size);
	if (key) {
		uint32_t hash = brt_keyhash(key, map->key_size, ht->head->seed);

		err = bucket_next(ht, map, hash & mask, key, hash, &c, locked, next_key);
		if (err != -ENOENT && err != -ESRCH)
			goto out;
		if (err == -ENOENT)
			start = (hash & mask) + 1;
	}
	err = -ENOENT;
	for (uint32_t i = start; i < ht->n_buckets && err == -ENOENT; i++)
		if (atomic_load_explicit(&ht->buckets[i].head, memory_order_relaxed))
			err = bucket_next(ht, map, i, NULL, 0, &c, locked, next_key);
out:
	free(c.heap);
	return err;
}

int brt_hash_first_from(struct htab *ht, const struct brt_map *map, uint32_t bucket,
			void *key, uint32_t *at, int locked)
{
	struct chain_copy c;
	int err = -ENOENT;

	chain_init(&c, map->key_size);
	for (uint32_t i = bucket; i < ht->n_buckets && err == -ENOENT; i++)
		if (atomic_load_explicit(&ht->buckets[i].head, memory_order_relaxed)) {
			err = bucket_next(ht, map, i, NULL, 0, &c, locked, key);
			*at = i;
		}
	free(c.heap);
	return err;
}
