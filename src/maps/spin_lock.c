/* spin_lock.c - maps whose value holds a struct bpf_spin_lock (found in the map's BTF at
 * creation; hash and array maps only, as the kernel).  Like the kernel's
 * copy_map_value(), lookups and updates never copy the lock word (a lookup shows it as
 * zero, an update leaves it alone, a new hash element starts unlocked); with BPF_F_LOCK
 * the copy is made holding that lock, a spin lock on the word in the shared value, so
 * threads and processes sharing the map exclude each other.  A spin lock (with yields),
 * not a futex: an element the hash map reuses, or a program's whole-value store, may
 * rewrite the word under a holder, which must cost exclusion for that moment, never a
 * sleeper nobody wakes.  The word names its holder, so a holder killed with SIGKILL or a
 * scribbled word costs a waiter about a millisecond, never a spin for ever.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maps/maps.h"

static _Atomic uint32_t *lock_of(const struct brt_map *map, void *value)
{
	return (_Atomic uint32_t *)(void *)((char *)value + map->lock_off);
}

/* Copy the value in 4-byte atomic words (a value with a lock is 4-byte aligned and sized),
 * skipping the lock word; out=1 copies from the map to dst. */
static void copy_words(const struct brt_map *map, void *shm, void *buf, int out)
{
	uint32_t skip = (uint32_t)map->lock_off / 4;

	for (uint32_t i = 0; i < map->value_size / 4; i++) {
		_Atomic uint32_t *w = (_Atomic uint32_t *)shm + i;
		uint32_t v;

		if (i == skip)
			continue;
		if (out) {
			v = atomic_load_explicit(w, memory_order_relaxed);
			memcpy((char *)buf + 4 * i, &v, 4);
		} else {
			memcpy(&v, (char *)buf + 4 * i, 4);
			atomic_store_explicit(w, v, memory_order_relaxed);
		}
	}
}

/* The lock word: 0 free, else the holder's owner word (thread id and check bits,
 * brt_shm_self()), so that a waiter can tell a live holder from a dead one or from a word
 * another process scribbled on.  A waiter spins (yielding) and, once it has waited
 * SPIN_CHECK_NS, asks every SPIN_CHECK_NS whether the holder still exists; a dead holder's
 * lock, or a word that names no owner, is taken over.  A live holder keeps it for at most
 * SPIN_LIMIT_NS: past that (a stopped process, a scribbled word that happens to name a
 * live thread) the operation fails with EBUSY instead of spinning for ever.  A copy is a
 * bounded number of word stores, so a live holder never needs that long. */
#define SPIN_CHECK_NS 1000000ll     /* 1 ms */
#define SPIN_LIMIT_NS 1000000000ll  /* 1 s */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int spin_lock(_Atomic uint32_t *w)
{
	uint32_t me = brt_shm_self();
	long long start = 0, checked = 0, t;

	for (unsigned spin = 0;; spin++) {
		uint32_t c = atomic_load_explicit(w, memory_order_relaxed);

		if (!c && atomic_compare_exchange_weak_explicit(w, &c, me, memory_order_acquire,
								memory_order_relaxed))
			return 0;
		if (spin % 64 != 63)
			continue;
		sched_yield();
		t = now_ns();
		if (!start)
			start = checked = t;
		/* our own id: a dead thread's whose id this thread now has (copies do not
		 * nest, so it is not ours) */
		if (c && (c == me || (t - checked >= SPIN_CHECK_NS && brt_shm_owner_dead(c)))) {
			if (atomic_compare_exchange_strong_explicit(w, &c, me,
								    memory_order_acquire,
								    memory_order_relaxed))
				return 0;
		}
		if (t - checked >= SPIN_CHECK_NS)
			checked = t;
		if (t - start >= SPIN_LIMIT_NS)
			return -EBUSY;
	}
}

/* Release only a word that still names this thread: one taken over meanwhile (we were
 * thought dead), or rewritten by an element's reuse, is not ours to clear. */
static void spin_unlock(_Atomic uint32_t *w)
{
	uint32_t me = brt_shm_self();

	atomic_compare_exchange_strong_explicit(w, &me, 0, memory_order_release,
						memory_order_relaxed);
}

static int copy_locked(const struct brt_map *map, void *shm, void *buf, int out, int lock)
{
	if (lock && spin_lock(lock_of(map, shm)))
		return -EBUSY;
	copy_words(map, shm, buf, out);
	if (lock)
		spin_unlock(lock_of(map, shm));
	return 0;
}

static void zero_lock(const struct brt_map *map, void *value)
{
	memset((char *)value + map->lock_off, 0, 4);
}

int brt_map_lock_lookup(struct brt_map *map, const void *key, void *value, uint64_t flags)
{
	void *shm;
	int err;

	if (!(flags & BPF_F_LOCK)) {
		err = map->ops->copy_value(map, key, value);
		if (!err)
			zero_lock(map, value);
		return err;
	}
	shm = map->ops->lookup(map, key);
	if (!shm)
		return -ENOENT;
	err = copy_locked(map, shm, value, 1, 1);
	if (!err)
		zero_lock(map, value);
	return err;
}

/* The kernel's array_map_update_elem(): checks, then the copy in place. */
static int array_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	uint32_t index;
	void *shm;

	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST)
		return -EINVAL;
	memcpy(&index, key, 4);
	if (index >= map->max_entries)
		return -E2BIG;
	if ((flags & ~(uint64_t)BPF_F_LOCK) == BPF_NOEXIST)
		return -EEXIST;
	shm = map->ops->lookup(map, key);
	if (!shm)
		return -E2BIG;
	return copy_locked(map, shm, (void *)(uintptr_t)value, 0, !!(flags & BPF_F_LOCK));
}

typedef int (*update_fn)(struct brt_map *map, const void *key, const void *value,
			 uint64_t flags);

/* The kernel's htab_map_update_elem(): with BPF_F_LOCK an existing element is updated in
 * place under its lock; otherwise (or for a new key) a new element, unlocked. */
static int hash_update(struct brt_map *map, const void *key, const void *value,
		       uint64_t flags, update_fn update)
{
	uint64_t f = flags & ~(uint64_t)BPF_F_LOCK;
	void *shm, *copy;
	int err;

	if (f > BPF_EXIST)
		return -EINVAL;
	if (flags & BPF_F_LOCK) {
		shm = map->ops->lookup(map, key);
		if (shm && f == BPF_NOEXIST)
			return -EEXIST;
		if (!shm && f == BPF_EXIST)
			return -ENOENT;
		if (shm)
			return copy_locked(map, shm, (void *)(uintptr_t)value, 0, 1);
	}
	copy = malloc(map->value_size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, value, map->value_size);
	zero_lock(map, copy);
	err = update(map, key, copy, f);
	free(copy);
	return err;
}

int brt_map_lock_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	return map->type == BPF_MAP_TYPE_ARRAY ? array_update(map, key, value, flags) :
						 hash_update(map, key, value, flags,
							     map->ops->update);
}

int brt_map_lock_prog_update(struct brt_map *map, const void *key, const void *value,
			     uint64_t flags)
{
	return map->type == BPF_MAP_TYPE_ARRAY ? array_update(map, key, value, flags) :
						 hash_update(map, key, value, flags,
							     map->ops->prog_update);
}

int brt_map_lock_lookup_and_delete(struct brt_map *map, const void *key, void *value,
				   uint64_t flags)
{
	int err;

	if (!map->ops->lookup_and_delete)
		return -BRT_ENOTSUPP;
	if (!(flags & BPF_F_LOCK)) {
		err = map->ops->lookup_and_delete(map, key, value);
		if (!err)
			zero_lock(map, value);
		return err;
	}
	err = brt_map_lock_lookup(map, key, value, flags);
	if (!err)
		err = map->ops->delete(map, key);
	return err;
}
