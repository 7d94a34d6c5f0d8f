/* spin_lock.c - maps whose value holds a struct bpf_spin_lock (found in the map's BTF at
 * creation; hash and array maps only, as the kernel).  Like the kernel's
 * copy_map_value(), lookups and updates never copy the lock word (a lookup shows it as
 * zero, an update leaves it alone, a new hash element starts unlocked); with BPF_F_LOCK
 * the copy is made holding that lock, a spin lock on the word in the shared value, so
 * threads and processes sharing the map exclude each other.  A spin lock (with yields),
 * not a futex: an element the hash map reuses, or a program's whole-value store, may
 * rewrite the word under a holder, which must cost exclusion for that moment, never a
 * sleeper nobody wakes.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

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

/* 0 free, 1 held; any other value was scribbled over and counts as free. */
static void spin_lock(_Atomic uint32_t *w)
{
	for (unsigned spin = 0;; spin++) {
		uint32_t c = atomic_load_explicit(w, memory_order_relaxed);

		if (c != 1 && atomic_compare_exchange_weak_explicit(w, &c, 1, memory_order_acquire,
								    memory_order_relaxed))
			return;
		if (spin % 64 == 63)
			sched_yield();
	}
}

static void spin_unlock(_Atomic uint32_t *w)
{
	atomic_store_explicit(w, 0, memory_order_release);
}

static void copy_locked(const struct brt_map *map, void *shm, void *buf, int out, int lock)
{
	if (lock)
		spin_lock(lock_of(map, shm));
	copy_words(map, shm, buf, out);
	if (lock)
		spin_unlock(lock_of(map, shm));
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
	copy_locked(map, shm, value, 1, 1);
	zero_lock(map, value);
	return 0;
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
	copy_locked(map, shm, (void *)(uintptr_t)value, 0, !!(flags & BPF_F_LOCK));
	return 0;
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
		if (shm) {
			copy_locked(map, shm, (void *)(uintptr_t)value, 0, 1);
			return 0;
		}
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
