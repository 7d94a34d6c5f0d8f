/* ringbuf.c - BPF_MAP_TYPE_RINGBUF with the kernel's memory layout: a consumer page
 * (consumer_pos), a producer page (producer_pos) and max_entries bytes of data, records of
 * an 8-byte header { u32 len | BUSY | DISCARD, u32 owner } plus the sample rounded up to
 * 8 (the kernel's second word, pg_off, is for the kernel only; here it names the producing
 * thread, so that a consumer discards a record whose producer was killed).  Each process maps the data twice back to back, as the kernel does, so a record that
 * wraps is contiguous.  Producers (programs) serialise on a lock word in the producer
 * page; the consumer only moves consumer_pos.  Consumed with bpfrt_ringbuf_consume().
 * Wake-ups: bpfrt_ringbuf_poll_fd() gives the consumer a pipe to poll and publishes it in
 * the consumer page; a producer whose record the consumer had caught up to (or that says
 * BPF_RB_FORCE_WAKEUP), in any process, writes a byte to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define RB_BUSY (1u << 31)
#define RB_DISCARD (1u << 30)
#define RB_HDR 8u
#define RB_LOCK_OFF 128 /* lock word, in the producer page after producer_pos */
#define RB_WAKER_OFF 128 /* struct brt_waker, in the consumer page after consumer_pos */

struct rb_view {
	_Atomic uint64_t *consumer_pos;
	_Atomic uint64_t *producer_pos;
	_Atomic uint32_t *lock;
	unsigned char *data;  /* 2 * size bytes: the data mapped twice */
	uint64_t size;
	struct brt_waker_view wake; /* the consumer's pipe (waker.c) */
};

static int rb_alloc_check(const union bpf_attr *attr)
{
	uint32_t n = attr->max_entries;

	if ((attr->map_flags & ~(uint32_t)BPF_F_NUMA_NODE) || attr->key_size ||
	    attr->value_size || !n || (n & (n - 1)) || n % BRT_PAGE)
		return -EINVAL;
	return 0;
}

static int rb_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = 2ull * BRT_PAGE + map->max_entries;
	return 0;
}

/* Which ring buffer a record belongs to: submit and discard get only the record's address.
 * The kernel reads it from pg_off in the record header, but here that header is in memory
 * any process with the map file may rewrite, so the answer comes from this process's own
 * table of the data areas it mapped.  Entries are never freed, only emptied (lo = 0) and
 * reused, so a lockless reader never follows a dangling pointer; a ring is in the table
 * from attach to detach, and a program holds its map (hence the entry) while it holds a
 * record. */
struct rb_area {
	struct rb_area *next;
	_Atomic uintptr_t lo;           /* data, 0: unused entry */
	_Atomic uintptr_t hi;           /* data + 2 * size */
	struct brt_map *_Atomic map;
};

static struct rb_area *_Atomic areas;
static pthread_mutex_t areas_lock = PTHREAD_MUTEX_INITIALIZER;

static int area_add(struct brt_map *map, const unsigned char *data, uint64_t size)
{
	struct rb_area *a;

	pthread_mutex_lock(&areas_lock);
	for (a = atomic_load_explicit(&areas, memory_order_relaxed); a; a = a->next)
		if (!atomic_load_explicit(&a->lo, memory_order_relaxed))
			break;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a) {
			pthread_mutex_unlock(&areas_lock);
			return -ENOMEM;
		}
		a->next = atomic_load_explicit(&areas, memory_order_relaxed);
		atomic_store_explicit(&areas, a, memory_order_release);
	}
	atomic_store_explicit(&a->map, map, memory_order_relaxed);
	atomic_store_explicit(&a->hi, (uintptr_t)data + 2 * size, memory_order_relaxed);
	atomic_store_explicit(&a->lo, (uintptr_t)data, memory_order_release);
	pthread_mutex_unlock(&areas_lock);
	return 0;
}

static void area_del(const struct brt_map *map)
{
	pthread_mutex_lock(&areas_lock);
	for (struct rb_area *a = atomic_load_explicit(&areas, memory_order_relaxed); a;
	     a = a->next)
		if (atomic_load_explicit(&a->map, memory_order_relaxed) == map)
			atomic_store_explicit(&a->lo, 0, memory_order_relaxed);
	pthread_mutex_unlock(&areas_lock);
}

static struct brt_map *area_map(const void *p)
{
	uintptr_t u = (uintptr_t)p;

	for (struct rb_area *a = atomic_load_explicit(&areas, memory_order_acquire); a;
	     a = a->next) {
		uintptr_t lo = atomic_load_explicit(&a->lo, memory_order_acquire);

		if (lo && u >= lo && u < atomic_load_explicit(&a->hi, memory_order_relaxed))
			return atomic_load_explicit(&a->map, memory_order_relaxed);
	}
	return NULL;
}

/* The data region of fd's file mapped twice, back to back, at area (2 * size bytes). */
static int map_data(unsigned char *area, uint64_t size, int prot, int fd)
{
	return mmap(area, size, prot, MAP_SHARED | MAP_FIXED, fd, 2 * BRT_PAGE) == MAP_FAILED ||
	       mmap(area + size, size, prot, MAP_SHARED | MAP_FIXED, fd, 2 * BRT_PAGE) ==
		       MAP_FAILED ? -errno : 0;
}

/* obj.h aux_writable: the process's read-only mapping of the file becomes writable (an
 * fd that may write it came), the data's two mappings with it, before anything may
 * produce or consume */
static int rb_aux_writable(struct brt_obj *obj, int fd)
{
	struct rb_view *v = brt_map_of(obj)->priv;

	return map_data(v->data, v->size, PROT_READ | PROT_WRITE, fd);
}

/* fd's own description, shared (a dup), when it may read (and write, for rw) and is still
 * map's file; else -EACCES.  For a process the file's mode refuses (the fd came over
 * SCM_RIGHTS from another user, or the process dropped its privileges): an open of
 * /proc/self/fd/N checks the mode against the caller (may_open()), and Linux has no
 * other way to make a new description of a file than to open a path to it. */
static int own_desc(const struct brt_map *map, int fd, int rw)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL), nfd;

	if (fl < 0 || ((fl & O_ACCMODE) != O_RDWR && (rw || (fl & O_ACCMODE) != O_RDONLY)))
		return -EACCES;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	if (fstat(nfd, &st) || st.st_dev != map->obj.dev || st.st_ino != map->obj.ino) {
		close(nfd);
		return -EBADF;
	}
	return nfd;
}

/* Map the data region twice, back to back, over a reservation of 2 * size: read-only
 * when the process maps the file so (obj.h ro: a BPF_OBJ_GET with BPF_F_RDONLY of a pin
 * it may only read), where nothing of the process may produce or consume (prog.c,
 * consumer_ok()) and the syscall reads are ENOTSUPP, as the kernel's. */
static int rb_attach(struct brt_map *map)
{
	struct rb_view *v = calloc(1, sizeof(*v));
	int fd = -1, ro = brt_map_ro(map);
	unsigned char *area;
	char path[64];

	if (!v)
		return -ENOMEM;
	v->size = map->max_entries;
	area = mmap(NULL, 2 * v->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		goto out_free;
	/* the object's file is open somewhere in this process: map it through /proc */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", map->obj.last_fd);
	fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	/* a file whose mode refuses this process (own_desc()): map through the fd */
	if (fd < 0 && errno == EACCES)
		fd = own_desc(map, map->obj.last_fd, !ro);
	if (fd < 0 || map_data(area, v->size, ro ? PROT_READ : PROT_READ | PROT_WRITE, fd))
		goto out_unmap;
	map->obj.aux_writable = rb_aux_writable;
	close(fd);
	fd = -1;
	if (area_add(map, area, v->size))
		goto out_unmap;
	v->data = area;
	/* the entry's own second mapping of the file: published with it, so other
	 * processes' id walks do not count it as a holder (obj.h, aux) */
	map->obj.aux = area;
	map->obj.aux_len = 2 * v->size;
	brt_waker_init(&v->wake,
		       (struct brt_waker *)(void *)((unsigned char *)map->data + RB_WAKER_OFF));
	v->consumer_pos = (_Atomic uint64_t *)map->data;
	v->producer_pos = (_Atomic uint64_t *)((unsigned char *)map->data + BRT_PAGE);
	v->lock = (_Atomic uint32_t *)((unsigned char *)map->data + BRT_PAGE + RB_LOCK_OFF);
	map->priv = v;
	return 0;

out_unmap:
	if (fd >= 0)
		close(fd);
	munmap(area, 2 * v->size);
out_free:
	free(v);
	return -ENOMEM;
}

static void rb_detach(struct brt_map *map)
{
	struct rb_view *v = map->priv;

	if (v) {
		area_del(map);
		brt_waker_fini(&v->wake);
		munmap(v->data, 2 * v->size);
		free(v);
	}
	map->priv = NULL;
}

/* Reserve a record of size bytes; NULL when it does not fit. */
static void *reserve(struct brt_map *map, uint64_t size)
{
	struct rb_view *v = map->priv;
	uint64_t len = (size + RB_HDR + 7) & ~7ull, cons, prod;
	unsigned char *hdr;
	uint32_t word;

	if (size > v->size - RB_HDR || size >= RB_DISCARD)
		return NULL;
	brt_shm_lock(v->lock);
	cons = atomic_load_explicit(v->consumer_pos, memory_order_acquire);
	prod = atomic_load_explicit(v->producer_pos, memory_order_relaxed);
	if (prod - cons + len > v->size) {
		brt_shm_unlock(v->lock);
		return NULL;
	}
	hdr = v->data + (prod & (v->size - 1));
	word = (uint32_t)size | RB_BUSY;
	atomic_store_explicit((_Atomic uint32_t *)(void *)hdr, word, memory_order_relaxed);
	/* The kernel keeps the record's page offset here, for its own use only (no consumer
	 * reads it); here the word names the producer's thread, so that a consumer can
	 * discard a record whose producer was killed before committing it. */
	atomic_store_explicit((_Atomic uint32_t *)(void *)(hdr + 4), brt_shm_self(),
			      memory_order_relaxed);
	atomic_store_explicit(v->producer_pos, prod + len, memory_order_release);
	brt_shm_unlock(v->lock);
	return hdr + RB_HDR;
}

/* The kernel's rule: wake the consumer when it had caught up to this record (it may be
 * asleep), or when the program forces it; BPF_RB_NO_WAKEUP never. */
static void wake(struct brt_map *map, const unsigned char *hdr, uint64_t flags)
{
	struct rb_view *v = map->priv;
	uint64_t cons;

	if (flags & BPF_RB_NO_WAKEUP)
		return;
	if (!brt_waker_armed(&v->wake))
		return;
	cons = atomic_load_explicit(v->consumer_pos, memory_order_acquire);
	if (!(flags & BPF_RB_FORCE_WAKEUP) &&
	    (uint64_t)(hdr - v->data) != (cons & (v->size - 1)))
		return;
	brt_waker_wake(&v->wake);
}

/* The header's length word is shared: a scribbled one is published as it is, and the
 * consumer checks every length against the ring. */
static void commit(void *sample, int discard, uint64_t flags)
{
	_Atomic uint32_t *len = (_Atomic uint32_t *)(void *)((unsigned char *)sample - RB_HDR);
	uint32_t word = atomic_load_explicit(len, memory_order_relaxed) & ~RB_BUSY;
	const unsigned char *hdr = (const unsigned char *)sample - RB_HDR;
	struct brt_map *map = area_map(hdr);

	atomic_store_explicit(len, word | (discard ? RB_DISCARD : 0), memory_order_release);
	if (map)
		wake(map, hdr, flags);
}

/* The ring buffer of the program's maps whose records contain p (checked engine), else
 * NULL.  Verified programs are trusted as the kernel trusts them. */
static struct brt_map *owner(struct bpfrt_run_ctx *ctx, uint64_t p)
{
	const struct brt_prog_maps *pm = bpfrt_run_user(ctx);

	if (!pm || pm->magic != BRT_PROG_MAPS_MAGIC)
		return NULL;
	for (uint32_t i = 0; i < pm->n; i++) {
		struct brt_map *m = pm->maps[i];
		struct rb_view *v = m->priv;

		if (m->type != BPF_MAP_TYPE_RINGBUF || !v)
			continue;
		if (p >= (uint64_t)(uintptr_t)v->data + RB_HDR &&
		    p < (uint64_t)(uintptr_t)v->data + 2 * v->size && p % 8 == 0)
			return m;
	}
	return NULL;
}

static struct brt_map *rb_arg(uint64_t r1, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = (struct brt_map *)(uintptr_t)r1;
	const struct brt_prog_maps *pm;

	if (!ctx->checked)
		return map;
	pm = bpfrt_run_user(ctx);
	if (!pm || pm->magic != BRT_PROG_MAPS_MAGIC)
		return NULL;
	for (uint32_t i = 0; i < pm->n; i++)
		if (pm->maps[i] == map && map->type == BPF_MAP_TYPE_RINGBUF)
			return map;
	return NULL;
}

uint64_t brt_helper_ringbuf_reserve(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = rb_arg(r1, ctx);
	void *p;

	(void)r4, (void)r5;
	if (!map || r3)
		return 0;
	p = reserve(map, r2);
	if (p && ctx->checked && bpfrt_run_grant(ctx, p, r2, 1)) {
		commit(p, 1, 0);
		return 0;
	}
	return (uint64_t)(uintptr_t)p;
}

static uint64_t submit_or_discard(uint64_t r1, uint64_t flags, struct bpfrt_run_ctx *ctx,
				  int discard)
{
	if (ctx->checked) {
		struct brt_map *m = owner(ctx, r1);
		uint32_t len;

		if (!m)
			return 0;
		len = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)(r1 - RB_HDR),
					   memory_order_relaxed);
		if (!(len & RB_BUSY))
			return 0;
	}
	commit((void *)(uintptr_t)r1, discard, flags);
	return 0;
}

BRT_HELPER_VARIANT(brt_helper_ringbuf_submit, submit_or_discard, 0)
BRT_HELPER_VARIANT(brt_helper_ringbuf_discard, submit_or_discard, 1)

/* bpf_ringbuf_reserve_dynptr(map, size, flags, dynptr): a record behind a ring buffer
 * dynptr (the dynptr NULL when the answer is an error; the verifier makes the program
 * release it either way) */
uint64_t brt_helper_ringbuf_reserve_dynptr(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_dynptr *ptr = brt_dynptr_arg(ctx, r4);
	struct brt_map *map = rb_arg(r1, ctx);
	uint32_t size = (uint32_t)r2;
	void *p;

	(void)r5;
	if (!ptr)
		return (uint64_t)-EINVAL;
	if (r3) {
		brt_dynptr_set_null(ptr);
		return (uint64_t)-EINVAL;
	}
	if (size > BRT_DYNPTR_SIZE_MASK) {
		brt_dynptr_set_null(ptr);
		return (uint64_t)-E2BIG;
	}
	p = map ? reserve(map, size) : NULL;
	if (p && ctx->checked && bpfrt_run_grant(ctx, p, size, 1)) {
		commit(p, 1, 0);
		p = NULL;
	}
	if (!p) {
		brt_dynptr_set_null(ptr);
		return (uint64_t)-EINVAL;
	}
	brt_dynptr_init(ptr, p, 2 /* BPF_DYNPTR_TYPE_RINGBUF */, size);
	return 0;
}

static uint64_t dynptr_commit(uint64_t r1, uint64_t flags, struct bpfrt_run_ctx *ctx,
			      int discard)
{
	struct brt_dynptr *ptr = brt_dynptr_arg(ctx, r1);

	if (!ptr || !ptr->data)
		return 0;
	submit_or_discard((uint64_t)(uintptr_t)ptr->data, flags, ctx, discard);
	brt_dynptr_set_null(ptr);
	return 0;
}

BRT_HELPER_VARIANT(brt_helper_ringbuf_submit_dynptr, dynptr_commit, 0)
BRT_HELPER_VARIANT(brt_helper_ringbuf_discard_dynptr, dynptr_commit, 1)

uint64_t brt_helper_ringbuf_output(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = rb_arg(r1, ctx);
	void *p;

	(void)r5;
	if (!map || (r4 & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP)))
		return (uint64_t)-EINVAL;
	if (r3 && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r2, r3, 0))
		return (uint64_t)-EINVAL;
	p = reserve(map, r3);
	if (!p)
		return (uint64_t)-EAGAIN;
	memcpy(p, (const void *)(uintptr_t)r2, r3);
	commit(p, 0, r4);
	return 0;
}

uint64_t brt_helper_ringbuf_query(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = rb_arg(r1, ctx);
	struct rb_view *v;
	uint64_t cons, prod;

	(void)r3, (void)r4, (void)r5;
	if (!map)
		return 0;
	v = map->priv;
	cons = atomic_load_explicit(v->consumer_pos, memory_order_acquire);
	prod = atomic_load_explicit(v->producer_pos, memory_order_acquire);
	switch (r2) {
	case BPF_RB_AVAIL_DATA:
		return prod - cons;
	case BPF_RB_RING_SIZE:
		return v->size;
	case BPF_RB_CONS_POS:
		return cons;
	case BPF_RB_PROD_POS:
		return prod;
	default:
		return 0;
	}
}

/* Consuming writes the consumer page (consumer_pos): through a read-only fd it is
 * EACCES, what the kernel's mmap() of a read-only ring buffer fd answers for libbpf's
 * writable mapping of that page (do_mmap(): a shared writable mapping of a file not
 * open for writing); a process that maps the file read-only has only read-only fds of
 * it.  Waiting (poll_fd) needs no more than the fd's read access, as the kernel's poll,
 * but it publishes the wake-up pipe in the consumer page: EACCES only when this process
 * maps the file read-only. */
/* Consuming writes the consumer page: what the kernel's mmap() of it for writing answers
 * libbpf's consumer, EACCES for a read-only fd, then EPERM for a frozen ring buffer
 * (bpf_map_mmap()); waiting needs no mapping of the kernel's fd. */
static int consumer_ok(const struct brt_map *map, int fd, int consume)
{
	if (map->type != BPF_MAP_TYPE_RINGBUF)
		return -EINVAL;
	if (!consume)
		return brt_map_ro(map) ? -EACCES : 0;
	if (brt_obj_fd_access(&map->obj, fd) == O_RDONLY)
		return -EACCES;
	return atomic_load_explicit(&map->obj.hdr->frozen, memory_order_acquire) ? -EPERM : 0;
}

int brt_ringbuf_consumer_live(struct brt_map *map)
{
	struct rb_view *v = map->priv;

	return map->type == BPF_MAP_TYPE_RINGBUF && v && brt_waker_live(&v->wake);
}

int bpfrt_ringbuf_poll_fd(int fd)
{
	struct brt_map *map;
	int ret;

	ret = brt_map_from_fd(fd, &map);
	if (!ret) {
		ret = consumer_ok(map, fd, 0);
		if (!ret)
			ret = brt_waker_poll_fd(&((struct rb_view *)map->priv)->wake);
		brt_map_put(map);
	}
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* One record at cons, checked against the ring before anything uses it: every position
 * and length in the ring is shared memory another process may rewrite.  Its length
 * (header and padding included) in *step, or 0 when a live producer has not committed it
 * yet; -EUCLEAN for a record that cannot be (past producer_pos, or larger than the ring). */
static int next_record(const struct rb_view *v, uint64_t cons, uint64_t prod, uint32_t *len,
		       uint64_t *step)
{
	const unsigned char *hdr = v->data + (cons & (v->size - 1));
	_Atomic uint32_t *lenw = (_Atomic uint32_t *)(uintptr_t)hdr;
	uint32_t word = atomic_load_explicit(lenw, memory_order_acquire), owner;

	*step = 0;
	/* Reserved and not committed: wait for its producer, unless that producer is gone
	 * (killed between reserve and submit) or the word naming it is no owner's.  The
	 * kernel has a record either submitted or discarded (the verifier makes programs
	 * release every reservation); a dead producer's record is discarded, so that the
	 * consumer goes on.  The exchange fails if the producer commits meanwhile. */
	while (word & RB_BUSY) {
		owner = atomic_load_explicit((_Atomic uint32_t *)(uintptr_t)(hdr + 4),
					     memory_order_relaxed);
		if (owner && !brt_shm_owner_dead(owner))
			return 0;
		if (atomic_compare_exchange_strong_explicit(lenw, &word,
							    (word & ~RB_BUSY) | RB_DISCARD,
							    memory_order_acquire,
							    memory_order_acquire))
			word = (word & ~RB_BUSY) | RB_DISCARD;
	}
	*len = word & ~(RB_BUSY | RB_DISCARD);
	*step = ((uint64_t)*len + RB_HDR + 7) & ~7ull;
	if (*step > prod - cons)
		return -EUCLEAN;
	return (word & RB_DISCARD) ? 1 : 2;
}

/* Records from consumer_pos up to producer_pos.  A ring whose positions are more than its
 * size apart, or whose record does not fit between them, was written by something other
 * than a producer: -EUCLEAN (as the kernel reports corrupt structures), consumer_pos left
 * where the last good record ended.  At most one ring's worth of records per call (a
 * producer that never stops cannot keep the caller here). */
int bpfrt_ringbuf_consume(int fd, int (*cb)(void *arg, void *data, size_t size), void *arg)
{
	struct brt_map *map;
	struct rb_view *v;
	uint64_t cons, prod, budget;
	int n = 0, err;

	err = brt_map_from_fd(fd, &map);
	if (!err && (err = consumer_ok(map, fd, 1)))
		brt_map_put(map);
	if (err) {
		errno = -err;
		return err;
	}
	v = map->priv;
	budget = v->size / RB_HDR;
	/* empty the wake-up pipe before looking for records: a wake-up that comes
	 * after this stays in the pipe, so the next poll cannot miss a record */
	brt_waker_drain(&v->wake);
	cons = atomic_load_explicit(v->consumer_pos, memory_order_acquire);
	while (budget--) {
		const unsigned char *hdr = v->data + (cons & (v->size - 1));
		uint64_t step;
		uint32_t len;
		int kind;

		prod = atomic_load_explicit(v->producer_pos, memory_order_acquire);
		if (cons == prod)
			break;
		if (prod - cons > v->size) {
			err = -EUCLEAN;
			break;
		}
		kind = next_record(v, cons, prod, &len, &step);
		if (kind <= 0) {
			err = kind;
			break;
		}
		cons += step;
		if (kind == 2) {
			n++;
			err = cb ? cb(arg, (void *)(uintptr_t)(hdr + RB_HDR), len) : 0;
		}
		atomic_store_explicit(v->consumer_pos, cons, memory_order_release);
		if (err)
			break;
	}
	brt_map_put(map);
	if (err == -EUCLEAN)
		errno = EUCLEAN;
	return err < 0 ? err : n;
}

/* ---- user ring buffers: user space produces, programs drain ---- */

#define URB_BUSY_OFF 64 /* the drain's owner word, in the consumer page (read-only to
			 * user space in the kernel's layout) */
#define URB_MAX_SAMPLES (128 * 1024) /* BPF_MAX_USER_RINGBUF_SAMPLES */

/* rb->busy: one drain at a time (-EBUSY for another); a drainer that died holding it is
 * taken over. */
static int urb_busy_take(_Atomic uint32_t *busy)
{
	uint32_t want = 0, self = brt_shm_self();

	if (atomic_compare_exchange_strong(busy, &want, self))
		return 0;
	if (want && brt_shm_owner_dead(want) && atomic_compare_exchange_strong(busy, &want, self))
		return 0;
	return -EBUSY;
}

/* __bpf_user_ringbuf_peek(): the record at consumer_pos as the kernel checks it (every
 * position and length here is written by user space); 0 with the record in sample and size, -ENODATA
 * (empty, or a record still BUSY), -EAGAIN (a discarded record, consumed), -EINVAL /
 * -E2BIG (a record that cannot be). */
static int urb_peek(struct rb_view *v, unsigned char **sample, uint32_t *size)
{
	uint64_t prod = atomic_load_explicit(v->producer_pos, memory_order_acquire), cons, total;
	uint32_t word, len;
	unsigned char *hdr;

	if (prod % 8)
		return -EINVAL;
	cons = atomic_load_explicit(v->consumer_pos, memory_order_acquire);
	if (cons >= prod)
		return -ENODATA;
	hdr = v->data + (cons & (v->size - 1));
	word = atomic_load_explicit((_Atomic uint32_t *)(void *)hdr, memory_order_acquire);
	len = word & ~(RB_BUSY | RB_DISCARD);
	total = ((uint64_t)len + RB_HDR + 7) & ~7ull;
	if (total > prod - cons)
		return -EINVAL;
	if (total > v->size || len > BRT_DYNPTR_SIZE_MASK)
		return -E2BIG;
	if (word & RB_DISCARD) {
		atomic_store_explicit(v->consumer_pos, cons + total, memory_order_release);
		return -EAGAIN;
	}
	if (word & RB_BUSY)
		return -ENODATA;
	*sample = v->data + ((cons + RB_HDR) & (v->size - 1));
	*size = len;
	return 0;
}

/* bpf_user_ringbuf_drain(map, callback, ctx, flags): the program's callback on each
 * committed record, as a local dynptr over it (read-only for the verifier), until the ring
 * is empty, the callback returns 1 or 128 Ki records were seen; returns the records seen
 * less the discarded ones.  The wake-up flags are checked but wake nobody: a producer
 * waiting for room (libbpf's user_ring_buffer__reserve_blocking()) is not woken. */
uint64_t brt_helper_user_ringbuf_drain(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	struct rb_view *v = map && map->type == BPF_MAP_TYPE_USER_RINGBUF ? map->priv : NULL;
	_Atomic uint32_t *busy;
	long samples, discarded = 0, ret = 0;

	(void)r5;
	if (r4 & ~(uint64_t)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP))
		return (uint64_t)-EINVAL;
	if (!v)
		return (uint64_t)-EINVAL;
	busy = (_Atomic uint32_t *)(void *)((unsigned char *)map->data + URB_BUSY_OFF);
	if (urb_busy_take(busy))
		return (uint64_t)-EBUSY;
	for (samples = 0; samples < URB_MAX_SAMPLES && ret == 0; samples++) {
		_Alignas(8) struct brt_dynptr dp;
		unsigned char *sample;
		uint64_t args[2];
		uint32_t size;
		int err = urb_peek(v, &sample, &size);

		if (err == -ENODATA)
			break;
		if (err == -EAGAIN) {
			discarded++;
			continue;
		}
		if (err) {
			atomic_store_explicit(busy, 0, memory_order_release);
			return (uint64_t)(int64_t)err;
		}
		brt_dynptr_init(&dp, sample, 1 /* BPF_DYNPTR_TYPE_LOCAL */, size);
		if (ctx->checked && (bpfrt_run_grant(ctx, &dp, sizeof(dp), 1) ||
				     (size && bpfrt_run_grant(ctx, sample, size, 0)))) {
			atomic_store_explicit(busy, 0, memory_order_release);
			return (uint64_t)-ENOMEM;
		}
		args[0] = (uint64_t)(uintptr_t)&dp;
		args[1] = r3;
		ret = (long)brt_vm_call_func(ctx, r2, args, 2);
		/* __bpf_user_ringbuf_sample_release(): past the record, whatever it says now */
		atomic_store_explicit(v->consumer_pos,
				      atomic_load_explicit(v->consumer_pos, memory_order_relaxed) +
					      (((uint64_t)size + RB_HDR + 7) & ~7ull),
				      memory_order_release);
		if (ctx->stopped)
			break;
	}
	atomic_store_explicit(busy, 0, memory_order_release);
	return ctx->stopped ? 0 : (uint64_t)(samples - discarded);
}

/* A user ring buffer's producers and BPF_MAP_FREEZE.  The kernel counts the writable
 * mappings of a map (bpf_map_mmap(), writecnt; a mapping's copy in a forked child counts
 * too, munmap() uncounts) and map_freeze() is EBUSY while any lasts; bpf_map_mmap()
 * refuses a writable mapping of a frozen map (EPERM).  bpfrt's fd is the map's file,
 * whose mmap() it does not see, so a producer maps through the fd
 * bpfrt_user_ringbuf_producer_fd() gives: a new open description of the file holding an
 * open-file-description read lock on byte URB_PRODUCER_OFF (far past the data).  Every
 * mapping made through it holds the description, so the lock lasts exactly while one of
 * them does, in any process.  A freeze takes the write lock on that byte through another
 * new description without waiting (brt_user_ringbuf_freeze_hold()): not while a producer
 * holds its lock (EBUSY); and while the freeze holds it, a producer's lock waits, then
 * sees the map frozen. */
#define URB_PRODUCER_OFF (1ull << 61)

static int urb_lock(int fd, short type, int cmd)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl)); /* l_pid 0 for the F_OFD_ commands */
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)URB_PRODUCER_OFF;
	fl.l_len = 1;
	/* a signal without SA_RESTART ends the wait for a concurrent freeze (EINTR): the
	 * kernel's mmap() has no such wait, so the caller never sees it */
	while (fcntl(fd, cmd, &fl))
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* fd's own access mode: brt_obj_fd_access() asks the fd only of a map some bpf() call
 * handed a read-only fd out for (its hot callers save the syscall), but a read-only
 * description made otherwise (an open of /proc/PID/fd/N) must not give a writable
 * producer either; a producer fd is made once per ring */
static int fd_mode(const struct brt_map *map, int fd)
{
	int acc = brt_obj_fd_access(&map->obj, fd), fl;

	if (acc != O_RDWR)
		return acc;
	fl = fcntl(fd, F_GETFL);
	return fl < 0 ? acc : fl & O_ACCMODE;
}

/* a new read-write open description of the file fd names: an fd, or -errno */
static int reopen_rw(int fd)
{
	char path[48];
	int nfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = open(path, O_RDWR | O_CLOEXEC);
	return nfd < 0 ? -errno : nfd;
}

int bpfrt_user_ringbuf_producer_fd(int fd)
{
	struct brt_map *map;
	int ret, nfd = -1;

	ret = brt_map_from_fd(fd, &map);
	if (!ret) {
		/* the kernel's writable shared mmap(): EACCES through an fd without read or
		 * write access (do_mmap()), EPERM once frozen (bpf_map_mmap()); the new
		 * description is read-write, so a write-only fd must not make one either */
		if (map->type != BPF_MAP_TYPE_USER_RINGBUF)
			ret = -EINVAL;
		else if (fd_mode(map, fd) != O_RDWR)
			ret = -EACCES;
		else if ((nfd = reopen_rw(fd)) >= 0)
			ret = urb_lock(nfd, F_RDLCK, F_OFD_SETLKW);
		else if (nfd == -EACCES)
			/* the file's mode refuses this process a new description: the
			 * fd's own, unlocked, so a freeze does not see its mappings (as a
			 * mapping of the map's fd itself), where the kernel's would EBUSY */
			ret = (nfd = own_desc(map, fd, 1)) < 0 ? nfd : 0;
		else
			ret = nfd;
		if (!ret && atomic_load_explicit(&map->obj.hdr->frozen, memory_order_acquire))
			ret = -EPERM;
		brt_map_put(map);
	}
	if (ret < 0) {
		if (nfd >= 0)
			close(nfd);
		errno = -ret;
		return ret;
	}
	return nfd;
}

int brt_user_ringbuf_freeze_hold(struct brt_map *map, int fd, int *hold)
{
	int nfd, err;

	*hold = -1;
	if (map->type != BPF_MAP_TYPE_USER_RINGBUF)
		return 0;
	/* no description to lock through (no /proc): no producer is seen, as before */
	nfd = reopen_rw(fd);
	if (nfd < 0)
		return 0;
	err = urb_lock(nfd, F_WRLCK, F_OFD_SETLK);
	if (err) {
		close(nfd);
		return err == -EAGAIN || err == -EACCES ? -EBUSY : 0;
	}
	*hold = nfd;
	return 0;
}

/* BPF_MAP_TYPE_USER_RINGBUF: the same memory with the roles swapped (the kernel's
 * ringbuf.c): user space produces (it maps the producer page and the data, as libbpf's
 * user_ring_buffer__new() does, and writes records with the kernel's header: length with
 * BUSY while it writes, DISCARD to skip), programs consume with bpf_user_ringbuf_drain().
 * Same MAP_CREATE rules as a ring buffer. */
const struct brt_map_ops brt_user_ringbuf_map_ops = {
	/* as a ring buffer's; the user side produces through a writable mmap() of the
	 * fd, which a read-only fd's file refuses (EACCES, as the kernel's), and only
	 * programs drain, which may not use a read-only mapping (prog.c) */
	.ro_reads = 1,
	.alloc_check = rb_alloc_check,
	.data_size = rb_data_size,
	.attach = rb_attach,
	.detach = rb_detach,
};

const struct brt_map_ops brt_ringbuf_map_ops = {
	.ro_reads = 1, /* lookup and get_next_key are ENOTSUPP; see rb_attach() */
	.alloc_check = rb_alloc_check,
	.data_size = rb_data_size,
	.attach = rb_attach,
	.detach = rb_detach,
};
