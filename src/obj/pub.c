/* pub.c - the reference table a process publishes for other processes' id walks
 * (api/ids.c: BPF_*_GET_FD_BY_ID, BPF_*_GET_NEXT_ID).  The kernel frees an object with
 * its last reference and its id is gone at once; a bpfrt object is a file that lives
 * while anything maps it, and every process's object cache (obj.c) maps each object it
 * has seen until a sweep of its own finds no fd of it left, which no other process can
 * make it do.  So that such a mapping does not keep a dead object findable from outside,
 * each process publishes, per cached object, which of its mappings of the file are the
 * cache's own and how many references it holds besides fds (refs: in-flight calls,
 * links, attachments, timers...), and of those how many other objects of it hold and
 * name in their files ("named": a program's map table, a prog array's slots; the walker
 * reads those itself, and only for a holder it finds alive, so a dead program or prog
 * array that this process has not swept yet keeps nothing findable).  The counters ARE the entries'
 * reference counts (obj.h, brt_obj.refs points into its slot): publishing costs no
 * system call and no second atomic.
 *
 * The table is a memfd ("bpfrt-refs") of fixed capacity, mapped shared once and never
 * moved (slots' addresses are the counters), its fd closed at once: only who may read
 * this process's mappings (/proc/PID/map_files, CAP_SYS_ADMIN, as the walk needs
 * anyway) can open it, and only this process writes it.  A fork's child replaces it by
 * a copy of its own (pthread_atfork): the counters are per process, as the cache is.
 * Readers snapshot it and treat every byte as untrusted: a scribbled table changes what
 * a walker finds, never what it reads or where.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obj/obj.h"

#define PUB_MAGIC 0x5346455254504201ull
#define PUB_VERSION 1
/* slots, the first one the head: 4 MiB of address space, pages allocated as used */
#define PUB_SLOTS 65536u

struct pub_head {
	uint64_t magic;
	uint32_t version;
	uint32_t slot_size;
	uint32_t cap;                 /* slots after the head */
	_Atomic uint32_t used;        /* slots ever handed out (readers read that many) */
	uint32_t pad[10];
};

_Static_assert(sizeof(struct brt_obj_pub) == 64, "one slot is 64 bytes");
_Static_assert(sizeof(struct pub_head) == sizeof(struct brt_obj_pub), "the head is a slot");

static pthread_mutex_t pub_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pub_once = PTHREAD_ONCE_INIT;
static struct pub_head *head;         /* NULL: no table */
static struct brt_obj_pub *slots;     /* head + 1 */
static uint32_t *free_idx;            /* slots given back, reused first */
static uint32_t nfree, free_cap;

static size_t table_bytes(void)
{
	return (size_t)(PUB_SLOTS + 1) * sizeof(struct brt_obj_pub);
}

/* A new memfd table mapped anywhere (its fd closed), or MAP_FAILED. */
static void *new_table(void)
{
	int fd = memfd_create("bpfrt-refs", MFD_CLOEXEC);
	void *m = MAP_FAILED;

	if (fd < 0)
		return MAP_FAILED;
	if (!ftruncate(fd, (off_t)table_bytes()))
		m = mmap(NULL, table_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m;
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&pub_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&pub_lock);
}

/* The child: the same slots at the same address in a table of its own (its counters
 * would otherwise be the parent's).  Without a new memfd, a private anonymous copy: the
 * counters still work, and walkers, finding no table, count every mapping of the child
 * as a holder (what they did before tables existed). */
static void fork_child(void)
{
	size_t used;
	void *m;

	/* the forking thread took the lock in fork_prepare(): it is the child's one thread,
	 * so it releases it (re-initialising a held mutex is undefined, and ThreadSanitizer
	 * then sees the child hold it forever: a lock-order inversion with cache_lock) */
	pthread_mutex_unlock(&pub_lock);
	if (!head)
		return;
	used = (size_t)(atomic_load_explicit(&head->used, memory_order_relaxed) + 1) *
	       sizeof(struct brt_obj_pub);
	m = new_table();
	if (m == MAP_FAILED)
		m = mmap(NULL, table_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (m == MAP_FAILED)
		return; /* nothing left to do it with; the counters stay shared */
	memcpy(m, head, used);
	if (mremap(m, table_bytes(), table_bytes(), MREMAP_MAYMOVE | MREMAP_FIXED, head) ==
	    MAP_FAILED)
		munmap(m, table_bytes());
}

static void table_init(void)
{
	void *m = new_table();

	if (m == MAP_FAILED)
		return;
	head = m;
	head->magic = PUB_MAGIC;
	head->version = PUB_VERSION;
	head->slot_size = sizeof(struct brt_obj_pub);
	head->cap = PUB_SLOTS;
	slots = (struct brt_obj_pub *)(void *)(head + 1);
	if (pthread_atfork(fork_prepare, fork_parent, fork_child)) {
		munmap(m, table_bytes());
		head = NULL;
		slots = NULL;
	}
}

struct brt_obj_pub *brt_pub_alloc(const struct brt_obj *obj)
{
	struct brt_obj_pub *p = NULL;
	void *keep = atomic_load_explicit(&obj->keep, memory_order_acquire);
	uintptr_t lo = obj->private_copy ? (uintptr_t)keep : (uintptr_t)obj->base;
	uint32_t i;

	pthread_once(&pub_once, table_init);
	if (!head)
		return NULL;
	pthread_mutex_lock(&pub_lock);
	if (nfree) {
		i = free_idx[--nfree];
	} else {
		i = atomic_load_explicit(&head->used, memory_order_relaxed);
		if (i < PUB_SLOTS)
			atomic_store_explicit(&head->used, i + 1, memory_order_release);
	}
	if (i < PUB_SLOTS) {
		p = &slots[i];
		atomic_store_explicit(&p->dev, (uint64_t)obj->dev, memory_order_relaxed);
		atomic_store_explicit(&p->lo, lo, memory_order_relaxed);
		atomic_store_explicit(&p->hi, lo ? lo + obj->size : 0, memory_order_relaxed);
		atomic_store_explicit(&p->aux_lo, (uintptr_t)obj->aux, memory_order_relaxed);
		atomic_store_explicit(&p->aux_hi, obj->aux ? (uintptr_t)obj->aux + obj->aux_len : 0,
				      memory_order_relaxed);
		atomic_store_explicit(&p->refs, atomic_load(&obj->own[0]), memory_order_relaxed);
		atomic_store_explicit(&p->named, atomic_load(&obj->own[1]), memory_order_relaxed);
		atomic_store_explicit(&p->ino, (uint64_t)obj->ino, memory_order_release);
	}
	pthread_mutex_unlock(&pub_lock);
	return p;
}

void brt_pub_free(struct brt_obj_pub *p)
{
	uint32_t *n;

	if (!p)
		return;
	atomic_store_explicit(&p->ino, 0, memory_order_release);
	pthread_mutex_lock(&pub_lock);
	if (nfree == free_cap) {
		n = realloc(free_idx, (free_cap ? 2 * free_cap : 64) * sizeof(*n));
		if (n) {
			free_idx = n;
			free_cap = free_cap ? 2 * free_cap : 64;
		}
	}
	/* no room to remember it: the slot stays unused (one slot lost, never wrong) */
	if (nfree < free_cap)
		free_idx[nfree++] = (uint32_t)(p - slots);
	pthread_mutex_unlock(&pub_lock);
}

/* ---- the reader ---------------------------------------------------------------------- */

static int slot_cmp(const void *a, const void *b)
{
	const struct brt_obj_pub *x = a, *y = b;
	uint64_t xd = atomic_load_explicit(&x->dev, memory_order_relaxed);
	uint64_t yd = atomic_load_explicit(&y->dev, memory_order_relaxed);
	uint64_t xi = atomic_load_explicit(&x->ino, memory_order_relaxed);
	uint64_t yi = atomic_load_explicit(&y->ino, memory_order_relaxed);

	if (xd != yd)
		return xd < yd ? -1 : 1;
	return xi < yi ? -1 : xi > yi;
}

int brt_pub_read(const char *path, struct brt_pub_view *v)
{
	struct pub_head h;
	struct stat st;
	size_t want;
	ssize_t got;
	int fd;

	v->slots = NULL;
	v->n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != PUB_MAGIC ||
	    h.version != PUB_VERSION || h.slot_size != sizeof(struct brt_obj_pub) ||
	    h.cap > PUB_SLOTS || h.used > h.cap ||
	    (uint64_t)st.st_size < (uint64_t)(h.used + 1) * sizeof(struct brt_obj_pub)) {
		close(fd);
		return -EINVAL;
	}
	want = (size_t)h.used * sizeof(struct brt_obj_pub);
	v->slots = want ? malloc(want) : NULL;
	if (want && !v->slots) {
		close(fd);
		return -ENOMEM;
	}
	got = want ? pread(fd, v->slots, want, sizeof(h)) : 0;
	close(fd);
	if (got < 0) {
		brt_pub_view_free(v);
		return -EIO;
	}
	v->n = (size_t)got / sizeof(struct brt_obj_pub);
	/* qsort's base must not be NULL even for 0 elements (an empty table's view) */
	if (v->n)
		qsort(v->slots, v->n, sizeof(*v->slots), slot_cmp);
	return 0;
}

void brt_pub_view_free(struct brt_pub_view *v)
{
	free(v->slots);
	v->slots = NULL;
	v->n = 0;
}

static int inside(uint64_t lo, uint64_t hi, uint64_t a, uint64_t b)
{
	return a && a < b && lo >= a && hi <= b;
}

enum brt_pub_verdict brt_pub_classify(const struct brt_pub_view *v, dev_t dev, ino_t ino,
				      uint64_t lo, uint64_t hi)
{
	struct brt_obj_pub key;
	const struct brt_obj_pub *p;
	int32_t refs, named;

	if (!ino)
		return BRT_PUB_HOLDER;
	memset(&key, 0, sizeof(key));
	atomic_init(&key.dev, (uint64_t)dev);
	atomic_init(&key.ino, (uint64_t)ino);
	p = v->n ? bsearch(&key, v->slots, v->n, sizeof(*p), slot_cmp) : NULL;
	/* no slot: the process mapped the file itself (an mmap'd array, a ring buffer's
	 * consumer pages) or its entry could not be published; either way a holder */
	if (!p)
		return BRT_PUB_HOLDER;
	if (!inside(lo, hi, atomic_load_explicit(&p->lo, memory_order_relaxed),
		    atomic_load_explicit(&p->hi, memory_order_relaxed)) &&
	    !inside(lo, hi, atomic_load_explicit(&p->aux_lo, memory_order_relaxed),
		    atomic_load_explicit(&p->aux_hi, memory_order_relaxed)))
		return BRT_PUB_HOLDER;
	refs = atomic_load_explicit(&p->refs, memory_order_relaxed);
	named = atomic_load_explicit(&p->named, memory_order_relaxed);
	if (named < 0 || named > refs)
		return BRT_PUB_HOLDER; /* not counters this library writes: as without a table */
	if (refs > named)
		return BRT_PUB_HOLDER;
	return named ? BRT_PUB_NAMED : BRT_PUB_NONE;
}
