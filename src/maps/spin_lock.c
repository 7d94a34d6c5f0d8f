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
 *
 * A holder killed in the middle of an update's copy would leave the value half old, half
 * new (the kernel always finishes its copy).  So an update writes the new value to a redo
 * record of the map's journal first (a slot naming its writer and the value), marks it
 * committed, copies, then clears the record before it unlocks.  Whoever takes the lock of
 * a value over from a dead holder applies that holder's committed record for it: the
 * value is the new one, whole; a holder that died before committing left the value
 * untouched, the old one, whole (docs/MEMORY_MODEL.md, "Crashes").
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

static _Atomic uint32_t *lock_of(const struct brt_map *map, void *value)
{
	return (_Atomic uint32_t *)(void *)((char *)value + map->lock_off);
}

static uint32_t root_size(const struct brt_obj_root *r)
{
	return r->rb == BRT_ROOT_KPTR ? 8 : 16;
}

/* word i of the value is in one of its graph roots (16 bytes each) or kptrs (8) */
static int in_root(const struct brt_map *map, uint32_t i)
{
	for (uint32_t r = 0; r < map->nroots; r++)
		if (4 * i >= map->roots[r].off && 4 * i < map->roots[r].off + root_size(&map->roots[r]))
			return 1;
	return 0;
}

void brt_map_put_value(const struct brt_map *map, void *dst, const void *src, int fresh)
{
	uint32_t pos = 0;

	while (pos < map->value_size) {
		uint32_t next = map->value_size, len = 0;

		for (uint32_t r = 0; r < map->nroots; r++)
			if (map->roots[r].off >= pos && map->roots[r].off < next) {
				next = map->roots[r].off;
				len = root_size(&map->roots[r]);
			}
		if (next > pos)
			brt_shm_write((char *)dst + pos, (const char *)src + pos, next - pos);
		if (len && fresh)
			brt_shm_zero((char *)dst + next, len);
		pos = next + len;
	}
}

/* Copy the value in 4-byte atomic words (a value with a lock is 4-byte aligned and sized),
 * skipping the lock word and the graph roots (copy_map_value()); out=1 copies from the
 * map to dst, the roots zero there. */
static void copy_words(const struct brt_map *map, void *shm, void *buf, int out)
{
	uint32_t skip = (uint32_t)map->lock_off / 4;

	for (uint32_t i = 0; i < map->value_size / 4; i++) {
		_Atomic uint32_t *w = (_Atomic uint32_t *)shm + i;
		uint32_t v;

		if (i == skip)
			continue;
		if (map->nroots && in_root(map, i)) {
			if (out)
				memset((char *)buf + 4 * i, 0, 4);
			continue;
		}
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

/* 0 when taken, -EBUSY; *dead: the owner word of a dead holder it was taken over from,
 * else 0. */
static int spin_lock(_Atomic uint32_t *w, uint32_t *dead)
{
	uint32_t me = brt_shm_self();
	long long start = 0, checked = 0, t;

	*dead = 0;
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
			uint32_t was = c;

			if (atomic_compare_exchange_strong_explicit(w, &c, me,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				*dead = was;
				return 0;
			}
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

/* ---- the redo journal ----------------------------------------------------------------
 * JOURNAL_SLOTS records after the type's region, each { owner, state, target, value }:
 * owner is the owner word of the thread using the slot (0: free); state is 1 once value
 * holds a whole new value for the element whose value starts at byte target - 1 of the
 * region; 0 while it is being written or after the copy.  Records are committed and
 * cleared only by a thread holding that value's lock, so a committed record names a
 * value whose lock word still names the record's owner, unless it is stale (the element
 * was freed and reused since: its lock word then names someone else). */
#define JOURNAL_SLOTS 16

struct jslot {
	_Atomic uint32_t owner;
	_Atomic uint32_t state;
	_Atomic uint64_t target;
	/* then round_up(value_size, 8) bytes */
};

uint64_t brt_map_journal_size(uint32_t value_size)
{
	return JOURNAL_SLOTS * (sizeof(struct jslot) + BRT_ROUND8(value_size));
}

static struct jslot *jslot(const struct brt_map *map, uint32_t i)
{
	return (struct jslot *)(void *)((char *)map->journal +
					(size_t)i * (sizeof(struct jslot) +
						     BRT_ROUND8(map->value_size)));
}

static uint64_t target_of(const struct brt_map *map, const void *shm)
{
	return (uint64_t)((const char *)shm - (const char *)map->data) + 1;
}

static void release_slot(struct jslot *j)
{
	atomic_store_explicit(&j->state, 0, memory_order_release);
	atomic_store_explicit(&j->owner, 0, memory_order_release);
}

/* The value's lock was just taken over from dead (a dead thread's owner word): finish its
 * committed update of this value, if any, and free its slots. */
static void journal_redo(const struct brt_map *map, void *shm, uint32_t dead)
{
	uint64_t target = target_of(map, shm);

	for (uint32_t i = 0; map->journal && i < JOURNAL_SLOTS; i++) {
		struct jslot *j = jslot(map, i);

		if (atomic_load_explicit(&j->owner, memory_order_acquire) != dead ||
		    atomic_load_explicit(&j->target, memory_order_relaxed) != target)
			continue;
		if (atomic_load_explicit(&j->state, memory_order_acquire) == 1)
			copy_words(map, shm, j + 1, 0);
		release_slot(j);
	}
}

/* Can slot j (owner word o, not free) be taken from its owner: the owner is dead, or is
 * this thread (a dead thread's id this thread now has: copies do not nest)?  A committed
 * record is first applied if its value's lock still names the dead owner (the lock is
 * then taken over here for the moment of the copy), else dropped as stale. */
static int reclaim_slot(const struct brt_map *map, struct jslot *j, uint32_t o, uint32_t me)
{
	uint64_t target;
	_Atomic uint32_t *w;
	uint32_t c = o;

	if (o != me && !brt_shm_owner_dead(o))
		return 0;
	if (!atomic_compare_exchange_strong_explicit(&j->owner, &c, me, memory_order_acquire,
						     memory_order_relaxed))
		return 0;
	target = atomic_load_explicit(&j->target, memory_order_relaxed);
	if (atomic_load_explicit(&j->state, memory_order_acquire) == 1 && target &&
	    target - 1 + map->value_size <= map->data_size && (target - 1) % 4 == 0) {
		void *shm = (char *)map->data + target - 1;

		w = lock_of(map, shm);
		c = o;
		if (atomic_compare_exchange_strong_explicit(w, &c, me, memory_order_acquire,
							    memory_order_relaxed)) {
			copy_words(map, shm, j + 1, 0);
			atomic_store_explicit(&j->state, 0, memory_order_release);
			spin_unlock(w);
		}
	}
	atomic_store_explicit(&j->state, 0, memory_order_release);
	return 1;
}

/* A free journal slot, taken for this thread; NULL when every slot stays busy (live
 * writers on as many values at once, for a second): the update then copies without a
 * record, as without a journal. */
static struct jslot *claim_slot(const struct brt_map *map)
{
	uint32_t me = brt_shm_self();
	long long start = 0;

	for (unsigned round = 0;; round++) {
		for (uint32_t i = 0; i < JOURNAL_SLOTS; i++) {
			struct jslot *j = jslot(map, i);
			uint32_t o = atomic_load_explicit(&j->owner, memory_order_relaxed);

			if (!o && atomic_compare_exchange_strong_explicit(
					  &j->owner, &o, me, memory_order_acquire,
					  memory_order_relaxed))
				return j;
			/* every slot busy twice over: look for dead owners' slots */
			if (o && round >= 2 && reclaim_slot(map, j, o, me))
				return j;
		}
		sched_yield();
		if (round >= 2) {
			long long t = now_ns();

			if (!start)
				start = t;
			else if (t - start >= SPIN_LIMIT_NS)
				return NULL;
		}
	}
}

/* An update's copy into the locked value shm: recorded, committed, copied, cleared. */
static void journalled_write(const struct brt_map *map, void *shm, const void *buf)
{
	struct jslot *j = map->journal ? claim_slot(map) : NULL;

	if (!j) {
		copy_words(map, shm, (void *)(uintptr_t)buf, 0);
		return;
	}
	atomic_store_explicit(&j->state, 0, memory_order_relaxed);
	atomic_store_explicit(&j->target, target_of(map, shm), memory_order_relaxed);
	brt_shm_write(j + 1, buf, map->value_size);
	atomic_store_explicit(&j->state, 1, memory_order_release);
	copy_words(map, shm, (void *)(uintptr_t)buf, 0);
	release_slot(j);
}

static int copy_locked(const struct brt_map *map, void *shm, void *buf, int out, int lock)
{
	uint32_t dead;

	if (lock && spin_lock(lock_of(map, shm), &dead))
		return -EBUSY;
	if (lock && dead)
		journal_redo(map, shm, dead);
	if (out || !lock)
		copy_words(map, shm, buf, out);
	else
		journalled_write(map, shm, buf);
	if (lock)
		spin_unlock(lock_of(map, shm));
	/* array_map_update_elem(): the replaced value's lists and trees are freed */
	if (!out)
		brt_map_free_roots((struct brt_map *)(uintptr_t)map, shm, 0);
	return 0;
}

static void zero_lock(const struct brt_map *map, void *value)
{
	memset((char *)value + map->lock_off, 0, 4);
	brt_map_zero_roots(map, value);
}

static brt_map_drain_fn drain_fn;

void brt_map_set_drain(brt_map_drain_fn fn)
{
	drain_fn = fn;
}

void brt_map_zero_roots(const struct brt_map *map, void *value)
{
	for (uint32_t r = 0; r < map->nroots; r++)
		memset((char *)value + map->roots[r].off, 0, root_size(&map->roots[r]));
}

/* a kptr field: taken with an atomic exchange (a program's bpf_kptr_xchg may race) */
static void free_kptr(struct brt_map *map, void *value, const struct brt_obj_root *r, int mine)
{
	_Atomic uint64_t *p = (_Atomic uint64_t *)(void *)((char *)value + r->off);
	uint64_t old = atomic_load_explicit(p, memory_order_acquire);

	(void)map;
	if (!old || !drain_fn)
		return;
	if (mine) {
		if (!drain_fn(p, &old, r, 1) ||
		    !atomic_compare_exchange_strong_explicit(p, &old, 0, memory_order_acq_rel,
							     memory_order_acquire))
			return;
	} else {
		old = atomic_exchange_explicit(p, 0, memory_order_acq_rel);
	}
	if (old)
		drain_fn(p, &old, r, 0);
}

void brt_map_free_roots(struct brt_map *map, void *value, int mine)
{
	for (uint32_t r = 0; r < map->nroots; r++) {
		if (map->roots[r].rb == BRT_ROOT_KPTR) {
			free_kptr(map, value, &map->roots[r], mine);
			continue;
		}
		unsigned char *root = (unsigned char *)value + map->roots[r].off, saved[16];
		uint32_t dead = 0;
		/* bpf_list_head_free() / bpf_rb_root_free(): taken out under the value's
		 * bpf_spin_lock (a bpf_res_spin_lock's holder is a program, which cannot
		 * hold it across runs), the nodes dropped outside it */
		int locked = !map->lock_res && !spin_lock(lock_of(map, value), &dead), take;

		if (locked && dead)
			journal_redo(map, value, dead);
		memcpy(saved, root, 16);
		take = !mine || (drain_fn && drain_fn(root, saved, &map->roots[r], 1));
		if (take)
			brt_shm_zero(root, 16);
		if (locked)
			spin_unlock(lock_of(map, value));
		if (take && drain_fn)
			drain_fn(root, saved, &map->roots[r], 0);
	}
}

int brt_map_lock_lookup(struct brt_map *map, const void *key, void *value, uint64_t flags)
{
	void *shm;
	int err;

	/* BPF_F_LOCK takes a bpf_spin_lock; a bpf_res_spin_lock is the programs' alone */
	if ((flags & BPF_F_LOCK) && map->lock_res)
		return -EINVAL;

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
	zero_lock(map, copy); /* the roots too: a new element's lists and trees are empty */
	err = update(map, key, copy, f);
	free(copy);
	return err;
}

int brt_map_lock_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	/* BPF_F_LOCK takes a bpf_spin_lock; a bpf_res_spin_lock is the programs' alone */
	if ((flags & BPF_F_LOCK) && map->lock_res)
		return -EINVAL;
	return map->type == BPF_MAP_TYPE_ARRAY ? array_update(map, key, value, flags) :
						 hash_update(map, key, value, flags,
							     map->ops->update);
}

int brt_map_lock_prog_update(struct brt_map *map, const void *key, const void *value,
			     uint64_t flags)
{
	/* BPF_F_LOCK takes a bpf_spin_lock; a bpf_res_spin_lock is the programs' alone */
	if ((flags & BPF_F_LOCK) && map->lock_res)
		return -EINVAL;
	return map->type == BPF_MAP_TYPE_ARRAY ? array_update(map, key, value, flags) :
						 hash_update(map, key, value, flags,
							     map->ops->prog_update);
}

int brt_map_lock_lookup_and_delete(struct brt_map *map, const void *key, void *value,
				   uint64_t flags)
{
	int err;

	/* BPF_F_LOCK takes a bpf_spin_lock; a bpf_res_spin_lock is the programs' alone */
	if ((flags & BPF_F_LOCK) && map->lock_res)
		return -EINVAL;

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

/* ---- bpf_spin_lock / bpf_spin_unlock for programs ------------------------------------
 * The same word and owner encoding as BPF_F_LOCK above, so programs and the syscall side
 * exclude each other (the kernel's bpf_spin_lock in a map value).  The verifier allows
 * nothing but loads, stores and bpf-to-bpf calls between lock and unlock, so a live
 * holder releases within a few instructions.  What a waiter may meet instead:
 *   - a holder killed in its region (a SIGKILLed process): its owner word names a dead
 *     thread, and the lock is taken over after about a millisecond (spin_lock()); if the
 *     dead holder was a BPF_F_LOCK update, its committed record is applied first, as
 *     copy_locked() does; a program killed between its stores leaves the ones it made
 *     (the kernel's holder is never killed there);
 *   - a holder that stays alive and never releases (a stopped process): after a second
 *     the waiting program's run ends with r0 = 0 and a warning, rather than spinning for
 *     ever or entering a region it does not own.  A map is never deadlocked. */

/* The map of the program's whose value holds the lock word w, or NULL (the value's
 * journal is only reached through its map). */
static struct brt_map *map_of_lock(struct bpfrt_run_ctx *ctx, const void *w)
{
	const struct brt_prog_maps *pm = bpfrt_run_user(ctx);

	if (!pm || pm->magic != BRT_PROG_MAPS_MAGIC)
		return NULL;
	for (uint32_t i = 0; i < pm->n; i++) {
		struct brt_map *m = pm->maps[i];

		if (m->lock_off >= 0 && (const char *)w >= (const char *)m->data &&
		    (const char *)w < (const char *)m->data + m->data_size)
			return m;
	}
	return NULL;
}

uint64_t brt_helper_spin_lock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	_Atomic uint32_t *w = (_Atomic uint32_t *)(uintptr_t)r1;
	struct brt_map *map;
	uint32_t dead;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (r1 % 4 || (ctx->checked && !bpfrt_run_access_ok(ctx, w, 4, 1))) {
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	if (spin_lock(w, &dead)) {
		brt_print(BPFRT_WARN, "bpfrt: bpf_spin_lock: the lock has been held by a live "
				      "thread for over a second; run stopped\n");
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	if (dead && (map = map_of_lock(ctx, w)))
		journal_redo(map, (char *)(uintptr_t)r1 - map->lock_off, dead);
	return 0;
}

uint64_t brt_helper_spin_unlock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	if (r1 % 4 || (ctx->checked && !bpfrt_run_access_ok(ctx, (void *)(uintptr_t)r1, 4, 1))) {
		bpfrt_run_stop(ctx, 0);
		return 0;
	}
	spin_unlock((_Atomic uint32_t *)(uintptr_t)r1);
	return 0;
}
