/* perf_event_array.c - BPF_MAP_TYPE_PERF_EVENT_ARRAY and bpf_perf_event_output().  Where the
 * kernel's slots hold perf events, ours hold perf output rings (perf_output.c, created
 * with bpfrt_perf_ring_create()).  A ring is a file, so a producer in another process can
 * reach it: each shared slot says which process holds an fd of the ring (our private dup,
 * made at BPF_MAP_UPDATE_ELEM), its number there and the file's inode, under a seqlock;
 * each process caches slot -> ring references and re-reads a slot whose sequence moved.
 * As in the kernel, the slots a process installed are cleared when it has no fd of the
 * map any more, unless the map was created with BPF_F_PRESERVE_ELEMS: at its next sweep
 * of the object cache, or sooner when it produces: a producer checks, at most once per
 * clock tick (CLOCK_MONOTONIC_COARSE, a few ms) and map, whether the process still has
 * an fd of the map when it installed slots of it, and whether the process that installed
 * the slot it writes to still holds that ring (a killed installer's slots are gone in
 * the kernel, its file closed).  The kernel clears them in close() itself; here a
 * producer may write for up to that tick more (docs/SECURITY.md, "Known limits").
 * A dead installer's slot stays while the map file it installed through is still open in
 * another process (inherited through fork, or passed): the installer marks that open
 * file description (brt_obj_desc_mark()), as the kernel's entry names its map_file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define PE_HDR 64u /* the map's lock word, then the slots */

/* The byte of the map file's description mark for slot i at sequence seq: far past the
 * file's data, one per slot and installation (so a mark the slot's previous installer
 * left says nothing of the current one; 2^24 installations of a slot wrap, keeping a slot
 * at worst, never dropping one). */
static uint64_t mark_off(uint32_t i, uint64_t seq)
{
	return (1ull << 60) + ((uint64_t)i << 24) + ((seq >> 1) & 0xffffffu);
}

/* One slot in the shared region. */
struct pe_slot {
	_Atomic uint64_t seq;     /* odd while it changes; moves on every change */
	_Atomic uint32_t pid;     /* process holding the ring's fd; 0: empty slot */
	_Atomic int32_t fd;       /* the fd's number in that process */
	_Atomic uint64_t ino;     /* the ring file's inode, checked after opening */
	_Atomic uint64_t pad;
};

/* This process's view of one slot. */
struct pe_local {
	uint64_t seq;             /* the shared seq ring reflects (0: never looked) */
	struct brt_obj *ring;     /* referenced ring, or NULL */
	int own_fd1;              /* our dup of the ring's fd, plus 1 (0: none), when this
				   * process installed the slot */
};

struct pe_view {
	pthread_rwlock_t lock;    /* guards slots[] */
	struct pe_local *slots;   /* max_entries */
	_Atomic uint32_t own;     /* slots this process installed (own_fd1 set) */
	_Atomic int64_t checked;  /* CLOCK_MONOTONIC_COARSE ns of the last recheck() */
};

static int pe_alloc_check(const union bpf_attr *attr)
{
	union bpf_attr a = *attr;

	/* the kernel's fd_array_map_alloc_check(), then array_map_alloc_check() where
	 * BPF_F_PRESERVE_ELEMS belongs to this type only */
	if (attr->value_size != 4 ||
	    (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG | BPF_F_MMAPABLE |
				BPF_F_INNER_MAP)))
		return -EINVAL;
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.map_flags &= ~(uint32_t)BPF_F_PRESERVE_ELEMS;
	return brt_array_map_ops.alloc_check(&a);
}

static int pe_data_size(const struct brt_map *map, uint64_t *size)
{
	if (map->max_entries > (1u << 31))
		return -E2BIG;
	*size = PE_HDR + (uint64_t)map->max_entries * sizeof(struct pe_slot);
	return 0;
}

static int pe_attach(struct brt_map *map)
{
	struct pe_view *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->slots = calloc(map->max_entries, sizeof(*v->slots));
	if (!v->slots) {
		free(v);
		return -ENOMEM;
	}
	pthread_rwlock_init(&v->lock, NULL);
	map->priv = v;
	return 0;
}

static _Atomic uint32_t *map_lock(struct brt_map *map)
{
	return (_Atomic uint32_t *)map->data;
}

static struct pe_slot *slot_of(struct brt_map *map, uint32_t i)
{
	return (struct pe_slot *)(void *)((unsigned char *)map->data + PE_HDR) + i;
}

/* Forget what this process knows of slot i.  Under v->lock (write). */
static void local_drop(struct pe_local *l, struct pe_view *v)
{
	if (l->ring)
		brt_obj_put(l->ring);
	if (l->own_fd1) {
		close(l->own_fd1 - 1);
		atomic_fetch_sub_explicit(&v->own, 1, memory_order_relaxed);
	}
	l->ring = NULL;
	l->own_fd1 = 0;
}

/* Change shared slot i (pid 0: empty it).  Under the map lock.  Returns the new seq. */
static uint64_t slot_write(struct pe_slot *s, uint32_t pid, int32_t fd, uint64_t ino)
{
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
	/* release: a reader that sees a new field sees the odd sequence too */
	atomic_store_explicit(&s->pid, pid, memory_order_release);
	atomic_store_explicit(&s->fd, fd, memory_order_release);
	atomic_store_explicit(&s->ino, ino, memory_order_release);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
	return seq + 2;
}

/* Empty the slots this process installed (the kernel clears a map file's entries when it
 * is released).  Under v->lock (write). */
static void clear_own(struct brt_map *map)
{
	struct pe_view *v = map->priv;
	uint32_t self = (uint32_t)getpid();

	for (uint32_t i = 0; v && i < map->max_entries; i++) {
		struct pe_local *l = &v->slots[i];
		struct pe_slot *s = slot_of(map, i);

		if (!l->own_fd1)
			continue;
		if (!(map->flags & BPF_F_PRESERVE_ELEMS)) {
			brt_shm_lock(map_lock(map));
			if (atomic_load_explicit(&s->pid, memory_order_relaxed) == self &&
			    atomic_load_explicit(&s->fd, memory_order_relaxed) == l->own_fd1 - 1)
				slot_write(s, 0, 0, 0);
			brt_shm_unlock(map_lock(map));
		} else {
			/* the slot outlives our fds: keep the dup other processes open */
			continue;
		}
		local_drop(l, v);
		l->seq = 0;
	}
}

static void pe_unref(struct brt_map *map)
{
	struct pe_view *v = map->priv;

	if (!v)
		return;
	pthread_rwlock_wrlock(&v->lock);
	clear_own(map);
	pthread_rwlock_unlock(&v->lock);
}

static void pe_detach(struct brt_map *map)
{
	struct pe_view *v = map->priv;

	if (!v)
		return;
	clear_own(map);
	for (uint32_t i = 0; i < map->max_entries; i++)
		local_drop(&v->slots[i], v);
	pthread_rwlock_destroy(&v->lock);
	free(v->slots);
	free(v);
	map->priv = NULL;
}

static int index_of(struct brt_map *map, const void *key, uint32_t *i)
{
	memcpy(i, key, 4);
	return *i < map->max_entries;
}

static int pe_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct pe_view *v = map->priv;
	struct brt_obj *ring;
	struct pe_local *l;
	uint64_t seq;
	uint32_t i;
	int32_t fd;
	int own, err;

	if (flags != BPF_ANY)
		return -EINVAL;
	if (!index_of(map, key, &i))
		return -E2BIG;
	memcpy(&fd, value, 4);
	/* the kernel's perf_event_get(): anything but a perf event (here: a ring) is EBADF */
	err = brt_obj_from_fd(fd, BRT_OBJ_PERF_RING, &ring);
	if (err)
		return -EBADF;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0) {
		err = -errno;
		brt_obj_put(ring);
		return err;
	}
	pthread_rwlock_wrlock(&v->lock);
	l = &v->slots[i];
	local_drop(l, v);
	brt_shm_lock(map_lock(map));
	l->seq = slot_write(slot_of(map, i), (uint32_t)getpid(), own, (uint64_t)ring->ino);
	brt_shm_unlock(map_lock(map));
	seq = l->seq;
	l->ring = ring;
	l->own_fd1 = own + 1;
	atomic_fetch_add_explicit(&v->own, 1, memory_order_relaxed);
	pthread_rwlock_unlock(&v->lock);
	/* after v->lock: the mark takes the object cache's lock, which a sweep holds while
	 * it takes v->lock (pe_unref()): inside, the two orders could deadlock (TSan's
	 * lock-order-inversion in api.holds_oracle).  Until it is made, this process holds
	 * the ring, so no other process drops the slot for want of it.  Not taken (a
	 * write-only fd): the slot goes with this process, as before. */
	(void)brt_obj_desc_mark(&map->obj, mark_off(i, seq));
	return 0;
}

static int pe_delete(struct brt_map *map, const void *key)
{
	struct pe_view *v = map->priv;
	struct pe_slot *s;
	uint32_t i;
	int err = 0;

	if (!index_of(map, key, &i))
		return -E2BIG;
	s = slot_of(map, i);
	pthread_rwlock_wrlock(&v->lock);
	brt_shm_lock(map_lock(map));
	if (!atomic_load_explicit(&s->pid, memory_order_relaxed))
		err = -ENOENT;
	else
		v->slots[i].seq = slot_write(s, 0, 0, 0);
	brt_shm_unlock(map_lock(map));
	if (!err)
		local_drop(&v->slots[i], v);
	pthread_rwlock_unlock(&v->lock);
	return err;
}

/* A consistent copy of shared slot i; 0, or -EAGAIN when a writer never finished. */
static int slot_read(struct pe_slot *s, uint64_t *seq, uint32_t *pid, int32_t *fd,
		     uint64_t *ino)
{
	for (int tries = 0; tries < 1000; tries++) {
		*seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (*seq & 1) {
			sched_yield();
			continue;
		}
		/* acquire: the second sequence load cannot pass these */
		*pid = atomic_load_explicit(&s->pid, memory_order_acquire);
		*fd = atomic_load_explicit(&s->fd, memory_order_acquire);
		*ino = atomic_load_explicit(&s->ino, memory_order_acquire);
		if (atomic_load_explicit(&s->seq, memory_order_relaxed) == *seq)
			return 0;
	}
	return -EAGAIN;
}

/* The ring a slot names, opened through /proc (another process installed it, or this
 * one in a parent before fork), or NULL when that process or fd is gone. */
static struct brt_obj *open_ring(uint32_t pid, int32_t fd, uint64_t ino)
{
	struct brt_obj *ring = NULL;
	char path[64];
	struct stat st;
	int rfd;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	rfd = open(path, O_RDWR | O_CLOEXEC);
	if (rfd < 0)
		return NULL;
	/* a number of our own: what a batch's memo knew under it is some closed fd's, and
	 * it must not know this one once it is closed */
	brt_obj_batch_forget(rfd);
	if (!fstat(rfd, &st) && (uint64_t)st.st_ino == ino &&
	    brt_obj_from_fd(rfd, BRT_OBJ_PERF_RING, &ring))
		ring = NULL;
	brt_obj_batch_forget(rfd);
	close(rfd);
	return ring;
}

/* Bring slot i of this process's view up to date.  Takes no lock while opening (that
 * may sweep the object cache, which may call pe_unref()). */
static void refresh(struct brt_map *map, uint32_t i)
{
	struct pe_view *v = map->priv;
	struct brt_obj *ring = NULL;
	struct pe_local *l;
	uint64_t seq, ino;
	uint32_t pid;
	int32_t fd;

	if (slot_read(slot_of(map, i), &seq, &pid, &fd, &ino))
		return;
	if (pid)
		ring = open_ring(pid, fd, ino);
	pthread_rwlock_wrlock(&v->lock);
	l = &v->slots[i];
	if (l->seq != seq) {
		/* what we installed was replaced, by us or by another process */
		local_drop(l, v);
		l->ring = ring;
		l->seq = seq;
		ring = NULL;
	}
	pthread_rwlock_unlock(&v->lock);
	if (ring)
		brt_obj_put(ring);
}

/* A reference to the ring in slot i, or NULL when the slot is empty. */
static struct brt_obj *ring_get(struct brt_map *map, uint32_t i)
{
	struct pe_view *v = map->priv;
	struct brt_obj *ring = NULL;

	for (int pass = 0; pass < 2; pass++) {
		uint64_t seq = atomic_load_explicit(&slot_of(map, i)->seq, memory_order_acquire);
		int fresh;

		pthread_rwlock_rdlock(&v->lock);
		fresh = v->slots[i].seq == seq && !(seq & 1);
		if (fresh && (ring = v->slots[i].ring))
			brt_obj_get(ring);
		pthread_rwlock_unlock(&v->lock);
		if (fresh || !seq)
			return ring;
		refresh(map, i);
	}
	return ring;
}

/* At most once per clock tick of a map (see the top): this process's slots go once it
 * has no fd of the map left, and slot i, installed by another process, is forgotten once
 * that process no longer holds the ring there (it died, or cleared the slot). */
static void recheck(struct brt_map *map, uint32_t i)
{
	struct pe_view *v = map->priv;
	struct timespec ts;
	int64_t now, last = atomic_load_explicit(&v->checked, memory_order_relaxed);
	uint64_t seq, ino;
	uint32_t pid;
	int32_t fd;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (now == last || !atomic_compare_exchange_strong_explicit(
				   &v->checked, &last, now, memory_order_relaxed, memory_order_relaxed))
		return;
	if (!(map->flags & BPF_F_PRESERVE_ELEMS) && atomic_load_explicit(&v->own, memory_order_relaxed) &&
	    !brt_obj_has_fd(&map->obj))
		pe_unref(map);
	if (slot_read(slot_of(map, i), &seq, &pid, &fd, &ino) || !pid ||
	    pid == (uint32_t)getpid())
		return;
	{
		struct brt_obj *ring = open_ring(pid, fd, ino);

		if (ring) {
			brt_obj_put(ring);
			return;
		}
	}
	/* the installer is gone; the map file it installed through may not be */
	if (brt_obj_desc_marked(&map->obj, mark_off(i, seq)) == 1)
		return;
	pthread_rwlock_wrlock(&v->lock);
	if (v->slots[i].seq == seq && !v->slots[i].own_fd1)
		local_drop(&v->slots[i], v);
	pthread_rwlock_unlock(&v->lock);
}

/* What the kernel's __bpf_perf_event_output() checks, then the write. */
static int output(struct brt_map *map, uint64_t index, const void *meta, uint32_t meta_size,
		  const void *extra, uint32_t extra_size)
{
	uint32_t cpu = brt_cpu();
	struct brt_obj *ring;
	int err;

	if (index == BPF_F_CURRENT_CPU)
		index = cpu;
	if (index >= map->max_entries)
		return -E2BIG;
	recheck(map, (uint32_t)index);
	ring = ring_get(map, (uint32_t)index);
	if (!ring)
		return -ENOENT;
	err = brt_perf_out_write(ring, cpu, meta, meta_size, extra, extra_size);
	brt_obj_put(ring);
	return err;
}

/* The packet bytes BPF_F_CTXLEN_MASK appends for skb and XDP programs: 0, or -EFAULT when
 * they ask for more than the packet has. */
static int ctx_bytes(uint32_t prog_type, uint64_t r1, uint64_t len, struct bpfrt_run_ctx *ctx,
		     const void **out)
{
	if (brt_prog_type(prog_type)->ctx == BRT_CTX_XDP) {
		uint32_t md[2]; /* struct xdp_md: data, data_end (addresses below 4 GiB here) */

		if (!bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r1, sizeof(md), 0))
			return -EFAULT;
		memcpy(md, (const void *)(uintptr_t)r1, sizeof(md));
		if (md[1] < md[0] || len > md[1] - md[0] ||
		    (len && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)md[0], len, 0)))
			return -EFAULT;
		*out = (const void *)(uintptr_t)md[0];
		return 0;
	}
	if (len > ctx->skb_len || (len && !ctx->skb_data))
		return -EFAULT;
	*out = ctx->skb_data;
	return 0;
}

static int skb_type(uint32_t t)
{
	const struct brt_prog_type *pt = brt_prog_type(t);

	return pt && (pt->ctx == BRT_CTX_SKB || pt->ctx == BRT_CTX_XDP);
}

/* The output of size bytes at data (then ext bytes at extra) to the ring flags' index
 * names: the helpers' common end. */
static uint64_t data_output(struct brt_map *map, uint64_t flags, uint64_t data, uint64_t size,
			    const void *extra, uint64_t ext, struct bpfrt_run_ctx *ctx)
{
	if (size > UINT32_MAX ||
	    (size && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)data, size, 0)))
		return (uint64_t)-EFAULT;
	return (uint64_t)(int64_t)output(map, flags & BPF_F_INDEX_MASK,
					 (const void *)(uintptr_t)data, (uint32_t)size, extra,
					 (uint32_t)ext);
}

/* long bpf_perf_event_output(void *ctx, struct bpf_map *map, u64 flags, void *data,
 * u64 size): the kernel has one prototype per family - tracing programs may only give an
 * index (BPF_F_INDEX_MASK), skb and XDP programs may also append ctxlen packet bytes
 * (BPF_F_CTXLEN_MASK) after data. */
uint64_t brt_helper_perf_event_output(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_prog_maps *pm = bpfrt_run_user(ctx);
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	uint32_t type = pm && pm->magic == BRT_PROG_MAPS_MAGIC ? pm->prog_type : 0;
	uint64_t ext = (r3 & BPF_F_CTXLEN_MASK) >> 32;
	const void *extra = NULL;

	if (!map || map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return (uint64_t)-EINVAL;
	if (skb_type(type)) {
		int err;

		if (r3 & ~(BPF_F_CTXLEN_MASK | BPF_F_INDEX_MASK))
			return (uint64_t)-EINVAL;
		err = ctx_bytes(type, r1, ext, ctx, &extra);
		if (err)
			return (uint64_t)(int64_t)err;
	} else {
		if (r3 & ~BPF_F_INDEX_MASK)
			return (uint64_t)-EINVAL;
		ext = 0;
	}
	return data_output(map, r3, r4, r5, extra, ext, ctx);
}

/* long bpf_skb_output(struct sk_buff *skb, struct bpf_map *map, u64 flags, void *data,
 * u64 size) and bpf_xdp_output(struct xdp_buff *xdp, ...): a tracing or LSM program's perf
 * output of data plus ctxlen bytes of the kernel packet it was handed (the kernel's
 * bpf_skb_event_output() / bpf_xdp_event_output(): flags beyond index and ctxlen -EINVAL, no
 * packet or more bytes than it has -EFAULT).  A kernel sk_buff or xdp_buff is no memory a
 * run here holds, so ctxlen bytes of one are -EFAULT, as for a packet shorter than asked;
 * data alone is written. */
uint64_t brt_helper_skb_output(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			       struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);

	if (!map || map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return (uint64_t)-EINVAL;
	if (r3 & ~(BPF_F_CTXLEN_MASK | BPF_F_INDEX_MASK))
		return (uint64_t)-EINVAL;
	if (!r1 || (r3 & BPF_F_CTXLEN_MASK))
		return (uint64_t)-EFAULT;
	return data_output(map, r3, r4, r5, NULL, 0, ctx);
}

/* The kernel's get_map_perf_counter() and perf_event_read_local() on a slot: flags other
 * than an index -EINVAL, past the end -E2BIG, an empty slot -ENOENT; then the event
 * itself.  A slot here holds a perf output ring, bpfrt's PERF_COUNT_SW_BPF_OUTPUT event:
 * one for another CPU is a per-CPU event read elsewhere (-EINVAL); else its count, which
 * for a BPF output event is 0 (samples are written, never counted).  The enabled and
 * running times are the ring's: the kernel's are nanoseconds since the event was
 * enabled; here CLOCK_MONOTONIC's nanoseconds (positive, growing), never comparable with
 * the kernel's anyway. */
static int read_counter(struct brt_map *map, uint64_t flags, uint64_t *value,
			uint64_t *enabled)
{
	uint32_t cpu = brt_cpu();
	uint64_t index = flags & BPF_F_INDEX_MASK;
	struct brt_obj *ring;
	struct timespec ts;
	int ring_cpu;

	if (flags & ~(uint64_t)BPF_F_INDEX_MASK)
		return -EINVAL;
	if (index == BPF_F_CURRENT_CPU)
		index = cpu;
	if (index >= map->max_entries)
		return -E2BIG;
	ring = ring_get(map, (uint32_t)index);
	if (!ring)
		return -ENOENT;
	ring_cpu = brt_perf_out_cpu(ring);
	brt_obj_put(ring);
	if (ring_cpu >= 0 && (uint32_t)ring_cpu != cpu)
		return -EINVAL;
	*value = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*enabled = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

/* u64 bpf_perf_event_read(map, u64 flags): the counter, or the error as a negative value
 * (the uapi's ambiguity) */
uint64_t brt_helper_perf_event_read(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	uint64_t value = 0, enabled;
	int err;

	(void)r3, (void)r4, (void)r5;
	if (!map || map->type != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return (uint64_t)-EINVAL;
	err = read_counter(map, r2, &value, &enabled);
	return err ? (uint64_t)(int64_t)err : value;
}

/* long bpf_perf_event_read_value(map, u64 flags, struct bpf_perf_event_value *buf,
 * u32 size): size must be the struct's (-EINVAL); buf zeroed on every error. */
uint64_t brt_helper_perf_event_read_value(uint64_t r1, uint64_t r2, uint64_t r3,
					  uint64_t r4, uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	struct bpf_perf_event_value v = { 0 };
	void *buf = (void *)(uintptr_t)r3;
	uint64_t counter = 0, enabled = 0;
	int err = -EINVAL;

	(void)r5;
	if (!r4 || r4 > UINT32_MAX || !bpfrt_run_access_ok(ctx, buf, (size_t)r4, 1))
		return (uint64_t)-EFAULT;
	if (r4 == sizeof(v) && map && map->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		err = read_counter(map, r2, &counter, &enabled);
	if (err) {
		memset(buf, 0, (size_t)r4);
		return (uint64_t)(int64_t)err;
	}
	v.counter = counter;
	v.enabled = enabled;
	v.running = enabled; /* a software event runs whenever it is enabled */
	memcpy(buf, &v, sizeof(v));
	return 0;
}

const struct brt_map_ops brt_perf_event_array_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.alloc_check = pe_alloc_check,
	.data_size = pe_data_size,
	.attach = pe_attach,
	.detach = pe_detach,
	.update = pe_update,
	.delete = pe_delete,
	.get_next_key = brt_array_get_next_key,
	.unref = pe_unref,
	.unref_per_file = 1,
};
