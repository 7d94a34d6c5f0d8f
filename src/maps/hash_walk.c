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
 * chain may loop), so a copy holds at most about twice the chain's distinct elements. */
struct chain_copy {
	uint32_t n, cap;
	uint32_t *hash;
	unsigned char *keys; /* n keys of key_size bytes */
	uint32_t *order;     /* copy_reach()'s scratch */
	unsigned char *reach;
};

static int copy_grow(struct chain_copy *c, uint32_t key_size)
{
	uint32_t cap = c->cap ? c->cap * 2 : 16;
	uint32_t *h;
	unsigned char *k;

	if (cap < c->cap)
		return -ENOMEM;
	h = realloc(c->hash, (size_t)cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	c->hash = h;
	k = realloc(c->keys, (size_t)cap * key_size);
	if (!k)
		return -ENOMEM;
	c->keys = k;
	h = realloc(c->order, (size_t)cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	c->order = h;
	k = realloc(c->reach, cap);
	if (!k)
		return -ENOMEM;
	c->reach = k;
	c->cap = cap;
	return 0;
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

			if (c->n == c->cap && copy_grow(c, ks))
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
 * repeats an earlier one's key and hash, so no lookup stops there). */
static int chain_read_locked(struct htab *ht, const struct brt_map *map, uint32_t bi,
			     struct chain_copy *c)
{
	struct htab_bucket *b = &ht->buckets[bi];
	uint32_t ks = map->key_size, idx, saved = 0, power = 1;
	struct htab_elem *e;
	int err = 0;

	brt_hash_bucket_lock(ht, b);
	c->n = 0;
	idx = b->head;
	while ((e = elem(ht, idx)) && c->n <= ht->n_elems) {
		if (c->n == c->cap && (err = copy_grow(c, ks)))
			break;
		memcpy(c->keys + (size_t)c->n * ks, e->key, ks);
		c->hash[c->n++] = e->hash;
		if (c->n == power) {
			saved = idx;
			power *= 2;
		}
		idx = e->next;
		if (idx == saved)
			break;
	}
	brt_shm_unlock(&b->lock);
	return err;
}

/* hash.c's get_next_key (above): on chains copied under their locks (locked) or, on a
 * read-only mapping, read without them. */
int brt_hash_next_key(struct htab *ht, const struct brt_map *map, const void *key,
		      void *next_key, int locked)
{
	uint32_t start = 0, mask = ht->n_buckets - 1;
	struct chain_copy c = { 0 };
	int err = -ENOENT;

	if (key) {
		uint32_t hash = brt_keyhash(key, map->key_size, ht->head->seed), pos;

		err = locked ? chain_read_locked(ht, map, hash & mask, &c)
			     : chain_read_ro(ht, map, hash & mask, &c);
		if (err)
			goto out;
		for (pos = 0; pos < c.n; pos++)
			if (c.hash[pos] == hash &&
			    !memcmp(c.keys + (size_t)pos * map->key_size, key, map->key_size))
				break;
		err = pos < c.n ? copy_next_key(ht, map, hash & mask, &c, pos + 1, next_key)
				: -ESRCH;
		if (!err)
			goto out;
		if (err == -ENOENT)
			start = (hash & mask) + 1;
	}
	err = -ENOENT;
	for (uint32_t i = start; i < ht->n_buckets && err == -ENOENT; i++) {
		if (!atomic_load_explicit(&ht->buckets[i].head, memory_order_relaxed))
			continue;
		err = locked ? chain_read_locked(ht, map, i, &c) : chain_read_ro(ht, map, i, &c);
		if (!err)
			err = copy_next_key(ht, map, i, &c, 0, next_key);
	}
out:
	free(c.hash);
	free(c.keys);
	free(c.order);
	free(c.reach);
	return err;
}

