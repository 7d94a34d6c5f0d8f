/* obj.c - objects behind real file descriptors.  Each map or loaded program is a file
 * (O_TMPFILE in the bpffs directory so BPF_OBJ_PIN can linkat() it there; a memfd when
 * that directory is unusable), so the kernel numbers the fds, refcounts them across dup,
 * fork and SCM_RIGHTS, and frees the memory on the last close.  This process keeps one
 * mapping per file, found by (st_dev, st_ino); when it is dropped is described in
 * docs/MEMORY_MODEL.md ("Object lifetime").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "obj/obj.h"
#include "util/util.h"

#define CACHE_BUCKETS 256
/* objects up to this size are written whole at creation (write_whole()) */
#define WHOLE_MAX (64u << 10)
/* The largest write-once file a batch keeps as a private copy instead of mapping it: the
 * copy is process memory next to the file's, so only small ones (every program of the
 * corpus's many-program objects is 2-4 pages) */
#define PRIVATE_COPY_MAX (256u << 10)
/* What one object may reserve at creation (the kernel's limit is memory), and how much
 * address space it may span with a hole (a lazy map's elements, reserved page by page as
 * they are used: maps/hash.c; the hash map's own bound on its elements is 2^40 bytes) */
#define BRT_OBJ_MAX_BYTES (4ull << 30)
#define BRT_OBJ_MAX_SPAN (1ull << 41)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct brt_obj *cache[CACHE_BUCKETS];
static int cache_count;
/* Filled by the layers that own the kinds (maps/, api/): this layer knows none of them.
 * A kind nobody registered is refused like a corrupt file. */
static _Atomic brt_obj_attach_fn attach_fns[BRT_OBJ_KINDS];

void brt_obj_set_attach(uint32_t kind, brt_obj_attach_fn fn)
{
	if (kind < BRT_OBJ_KINDS)
		atomic_store_explicit(&attach_fns[kind], fn, memory_order_release);
}

const char *brt_obj_fs_dir(void)
{
	const char *dir = getenv("BPFRT_FS");

	return dir && *dir ? dir : "/dev/shm/bpfrt";
}

int brt_obj_fs_open(int create)
{
	const char *dir = brt_obj_fs_dir();
	char why[PATH_MAX + 160];
	int err = create ? brt_fs_dir_prepare(dir) : brt_fs_dir_check(dir, why, sizeof(why));
	int fd;

	if (err)
		return err;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* The calling thread's batch (obj.h): its number, nesting, whether it swept already, the
 * directory it checked (empty: none yet) with an O_PATH fd of it (-1: none) and the fds it
 * resolved. */
#define BATCH_MEMO_MAX 64
static _Atomic uint64_t batch_seq;
static _Thread_local struct {
	uint64_t id;
	unsigned depth;
	int swept;
	char dir[256];
	int dirfd;
	unsigned n;
	int fd[BATCH_MEMO_MAX];
	struct brt_obj *obj[BATCH_MEMO_MAX]; /* a reference each */
	/* the fd the thread's last creation memoized in the current bpf() command (-1:
	 * none): the number that command hands out names that object, so handing it out
	 * does not forget it (brt_obj_batch_handed()) */
	int fresh;
} batch = { .fresh = -1 };

static int rw_fd(int fd);

/* In a batch, remember that fd is obj (a reference held until the batch ends), if the
 * memo has room. */
static void batch_memo(int fd, struct brt_obj *obj)
{
	if (batch.id && batch.n < BATCH_MEMO_MAX) {
		atomic_fetch_add_explicit(obj->refs, 1, memory_order_relaxed);
		batch.fd[batch.n] = fd;
		batch.obj[batch.n++] = obj;
	}
}

static unsigned bucket_of(dev_t dev, ino_t ino)
{
	return (unsigned)((ino ^ (ino >> 8) ^ dev) % CACHE_BUCKETS);
}

/* An unnamed file: in the bpffs directory when possible, so that pinning is a link. */
static int open_anon(void)
{
	const char *dir = brt_obj_fs_dir();
	int fd;

	/* an untrusted directory (another user's) gets no objects: memfd, unpinnable; a
	 * batch checks it once, and creates its files through an fd of the directory it
	 * checked (no walk of the path per file) */
	if (!batch.id || strcmp(batch.dir, dir)) {
		if (brt_fs_dir_prepare(dir))
			goto memfd;
		if (batch.id && strlen(dir) < sizeof(batch.dir)) {
			memcpy(batch.dir, dir, strlen(dir) + 1);
			if (batch.dirfd >= 0)
				close(batch.dirfd);
			batch.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (batch.dirfd >= 0) /* a number the memo may still name */
				brt_obj_batch_forget(batch.dirfd);
		}
	}
	if (batch.id && batch.dirfd >= 0 && !strcmp(batch.dir, dir))
		fd = openat(batch.dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	else
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
memfd:
	fd = memfd_create("bpfrt", MFD_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Ids: one counter per kind in IDS_FILE of the bpffs directory, shared by every process
 * that uses it, so ids are unique there and ascend in creation order (the kernel's
 * idr_alloc_cyclic(): from 1, wrapping); BPF_*_GET_NEXT_ID walks them in that order
 * (api/ids.c).  The counter file must be the caller's own (or root's) regular file: a
 * file someone else planted could only hand out duplicate ids, but an object then gets a
 * random id from the upper half instead, as it does without a usable directory. */
#define IDS_FILE ".bpfrt-ids"
#define ID_SEQ_MAX 0x3fffffffu

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t *ids_map; /* BRT_OBJ_KINDS counters, or NULL */
static char ids_dir[4096];

static _Atomic uint32_t *ids_counters(void)
{
	const char *dir = brt_obj_fs_dir();
	char path[4096 + sizeof(IDS_FILE) + 1];
	_Atomic uint32_t *m = NULL;
	struct stat st;
	void *p;
	int fd;

	if (ids_map && !strcmp(ids_dir, dir))
		return ids_map;
	if (strlen(dir) >= sizeof(ids_dir) || brt_fs_dir_prepare(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/" IDS_FILE, dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (!st.st_uid || st.st_uid == geteuid()) &&
	    (st.st_size >= BRT_PAGE || !ftruncate(fd, BRT_PAGE))) {
		p = mmap(NULL, BRT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED)
			m = p;
	}
	close(fd);
	if (!m)
		return NULL;
	/* a mapping of an earlier directory stays mapped: ids handed out stay valid */
	snprintf(ids_dir, sizeof(ids_dir), "%s", dir);
	ids_map = m;
	return m;
}

/* The id after cur: BTF id 1 is the kernel's vmlinux BTF, as in the kernel (api/ids.c) */
static uint32_t next_id(uint32_t kind, uint32_t cur)
{
	return cur >= ID_SEQ_MAX ? 1 + (kind == BRT_OBJ_BTF) :
				   cur + 1 + (kind == BRT_OBJ_BTF && !cur);
}

static uint32_t alloc_id(uint32_t kind, uint64_t seed)
{
	_Atomic uint32_t *c;
	uint32_t id = 0, cur;

	pthread_mutex_lock(&ids_lock);
	c = kind < BRT_OBJ_KINDS ? ids_counters() : NULL;
	pthread_mutex_unlock(&ids_lock);
#if defined(__x86_64__) && defined(__linux__)
	/* Any process of the file's owner may truncate it under the mapping, and the page
	 * would raise SIGBUS: guarded accesses (util's brt_ucas32()) fault into the random
	 * ids below instead, and the file is left as it is (growing it back would restart
	 * the counters at ids still in use). */
	if (c && brt_ufault_ready()) {
		int r;

		if (brt_uload32(&c[kind], &cur))
			c = NULL;
		while (c) {
			id = next_id(kind, cur);
			r = brt_ucas32(&c[kind], &cur, id);
			if (r == 1)
				return id;
			if (r < 0)
				c = NULL;
		}
	}
#endif
	/* without the guard (BPFRT_UCOPY=syscall, not x86-64): as the object files are */
	if (c) {
		cur = atomic_load(&c[kind]);
		do
			id = next_id(kind, cur);
		while (!atomic_compare_exchange_weak(&c[kind], &cur, id));
		return id;
	}
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint32_t)seed;
	return (id & 0x3fffffff) | 0x40000000;
}

uint32_t brt_obj_new_id(uint32_t kind)
{
	return alloc_id(kind, (uint64_t)time(NULL));
}

/* Counters of an entry not (or not yet) published: its own words. */
static void refs_init(struct brt_obj *obj, int32_t refs)
{
	obj->refs = &obj->own[0];
	obj->named = &obj->own[1];
	obj->pub = NULL;
	atomic_init(&obj->own[0], refs);
	atomic_init(&obj->own[1], 0);
}

/* Cache lock held.  The entry's counters move into its published slot (pub.c) when the
 * table has room; nothing else can reach the entry before it is in the cache. */
static void cache_insert(struct brt_obj *obj)
{
	unsigned b = bucket_of(obj->dev, obj->ino);

	obj->pub = brt_pub_alloc(obj);
	if (obj->pub) {
		obj->refs = &obj->pub->refs;
		obj->named = &obj->pub->named;
	}
	obj->next = cache[b];
	cache[b] = obj;
	cache_count++;
}

static struct brt_obj *cache_find(dev_t dev, ino_t ino)
{
	struct brt_obj *obj;

	for (obj = cache[bucket_of(dev, ino)]; obj; obj = obj->next)
		if (obj->dev == dev && obj->ino == ino)
			return obj;
	return NULL;
}

/* Creations since the last sweep.  A sweep costs an fstat() per cached object, so a
 * sweep at every creation made loading an object with n maps and programs quadratic in
 * system calls; sweeping once the creations since the last sweep reach half the cache
 * keeps it at two fstat()s per creation, and what the cache can hold past its fds at
 * about half again of what is live. */
static unsigned created_since_sweep;

static void sweep_due(void)
{
	int due;

	pthread_mutex_lock(&cache_lock);
	due = ++created_since_sweep * 2 >= (unsigned)cache_count;
	pthread_mutex_unlock(&cache_lock);
	/* a batch sweeps once: what it creates stays open until it ends */
	if (!due || (batch.id && batch.swept))
		return;
	batch.swept = batch.id != 0;
	brt_obj_sweep();
}

/* The sweep's dead entries (linked through next), destroyed together: mappings that lie
 * end to end (the kernel places a process's consecutive mmaps so, and a loaded object's
 * maps are created one after the other) go in one munmap.  Each call costs the mm's lock
 * and a TLB flush, which for a map of two or three pages is most of its unmapping
 * (test_sockmap_listen's six maps: six calls, one after merging).  A sweep's rounds each
 * release their entries (a program's release drops its maps, which the next round may
 * then find dead: release_list()) and unmap them all at the end (unmap_list()): the maps
 * of an object unmapped round by round were three calls where one does. */
struct span {
	uintptr_t lo, hi;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void obj_destroy(struct brt_obj *obj);

/* The last of an object's teardown, after its mappings: the slot goes after them (a walker
 * never sees one of them unaccounted for: it would take it for a holder).  One place for
 * obj_destroy() and unmap_list(), which once forgot the name. */
static void obj_free(struct brt_obj *obj)
{
	brt_pub_free(obj->pub);
	free(obj->name);
	free(obj);
}

/* The kind's teardown of every dead entry, and a private copy's process memory; the
 * mappings and the entries stay for unmap_list().  *tail: where the list ends (to chain
 * the next round's after it). */
static struct brt_obj **release_list(struct brt_obj *dead)
{
	struct brt_obj **tail = NULL, *obj;

	for (obj = dead; obj; obj = obj->next) {
		if (obj->release)
			obj->release(obj);
		obj->release = NULL;
		if (obj->private_copy) {
			free(obj->base);
			obj->base = NULL;
		}
		tail = &obj->next;
	}
	return tail;
}

/* Unmap and free released entries (release_list()), adjacent mappings in one call. */
static void unmap_list(struct brt_obj *dead)
{
	struct brt_obj *obj, *next;
	struct span *sp;
	size_t n = 0, cap = 0, m;

	for (obj = dead; obj; obj = obj->next)
		cap++;
	sp = cap > 1 ? malloc(cap * sizeof(*sp)) : NULL;
	if (!sp) {
		for (obj = dead; obj; obj = next) {
			next = obj->next;
			obj_destroy(obj);
		}
		return;
	}
	for (obj = dead; obj; obj = obj->next) {
		void *keep = atomic_load_explicit(&obj->keep, memory_order_acquire);
		void *m0 = obj->private_copy ? keep : obj->base;

		if (m0) {
			sp[n].lo = (uintptr_t)m0;
			sp[n++].hi = (uintptr_t)m0 + obj->size;
		}
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (size_t i = 0; i < n; i = m) {
		uintptr_t hi = sp[i].hi;

		for (m = i + 1; m < n && sp[m].lo == hi; m++)
			hi = sp[m].hi;
		munmap((void *)sp[i].lo, hi - sp[i].lo);
	}
	free(sp);
	/* the slots go after the mappings (obj_destroy()) */
	for (obj = dead; obj; obj = next) {
		next = obj->next;
		obj_free(obj);
	}
}

static void obj_destroy(struct brt_obj *obj)
{
	void *keep = atomic_load_explicit(&obj->keep, memory_order_acquire);

	if (obj->release)
		obj->release(obj);
	if (obj->private_copy) {
		free(obj->base);
		if (keep)
			munmap(keep, obj->size);
	} else {
		munmap(obj->base, obj->size);
	}
	obj_free(obj);
}

/* A private copy's file mapped (obj.h, private_copy) through fd, an fd of it: from now on
 * the entry keeps the file alive as a mapped one does.  A failed mapping leaves it as it
 * was (the object works; only a holder that outlives every fd of it could lose the file,
 * which the next resolution tries again to prevent). */
static void obj_keep(struct brt_obj *obj, int fd)
{
	void *none = NULL, *m;
	int rw;

	if (!obj->private_copy || atomic_load_explicit(&obj->keep, memory_order_acquire))
		return;
	/* reading is all the mapping is for: fd itself unless it was opened write-only */
	m = mmap(NULL, obj->size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED && errno == EACCES && (rw = rw_fd(fd)) >= 0) {
		m = mmap(NULL, obj->size, PROT_READ, MAP_SHARED, rw, 0);
		if (rw != fd)
			close(rw);
	}
	if (m == MAP_FAILED)
		return;
	if (!atomic_compare_exchange_strong_explicit(&obj->keep, &none, m, memory_order_acq_rel,
						     memory_order_acquire)) {
		munmap(m, obj->size); /* another thread mapped it first */
		return;
	}
	if (obj->pub) { /* the cache's mapping from now on (pub.c) */
		atomic_store_explicit(&obj->pub->hi, (uintptr_t)m + obj->size,
				      memory_order_relaxed);
		atomic_store_explicit(&obj->pub->lo, (uintptr_t)m, memory_order_release);
	}
}

/* Write all of buf at offset 0 of fd: 0 or -errno (a short write on tmpfs is ENOSPC). */
static int write_all(int fd, const char *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pwrite(fd, buf + done, size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		done += (size_t)n;
	}
	return 0;
}

/* Reserve the file's memory: all of it, or all but [hole_off, hole_off + hole_len) (page
 * aligned, inside the data: brt_obj_create_sparse()); the last range ends at size, which
 * sets the file's size.  0 or -errno (ENOMEM when tmpfs has no room, as MAP_CREATE's
 * failed allocation). */
static int hole_ok(uint64_t size, uint64_t hole_off, uint64_t hole_len)
{
	return hole_len && !(hole_off % BRT_PAGE) && !(hole_len % BRT_PAGE) &&
	       hole_off + hole_len < size;
}

static int reserve(int fd, uint64_t size, uint64_t hole_off, uint64_t hole_len)
{
	int err = 0;

	if (!hole_ok(size, hole_off, hole_len)) {
		hole_off = 0;
		hole_len = 0;
	}
	if (hole_off)
		err = posix_fallocate(fd, 0, (off_t)hole_off);
	if (!err)
		err = posix_fallocate(fd, (off_t)(hole_off + hole_len),
				      (off_t)(size - hole_off - hole_len));
	return err == ENOSPC || err == EFBIG ? -ENOMEM : -err;
}

static const char zero_page[BRT_PAGE];

/* Zeros from the current end of *iov up to at, a page of zero_page at a time. */
static void zeros_to(struct iovec *iov, int *n, uint64_t *pos, uint64_t at)
{
	while (*pos < at) {
		size_t len = at - *pos < BRT_PAGE ? (size_t)(at - *pos) : BRT_PAGE;

		iov[*n].iov_base = (void *)(uintptr_t)zero_page;
		iov[(*n)++].iov_len = len;
		*pos += len;
	}
}

/* A small object's file written whole in one call (size <= WHOLE_MAX): zeros, its
 * second region (tail, tail_size bytes, when given) and its header at their places.  A
 * write reserves the pages as fallocate does (tmpfs allocates every page written, and a
 * short write means it had no room: ENOMEM, as MAP_CREATE's failed allocation), sets the
 * size and leaves the pages in the page cache, so the mapping needs no populating: this
 * process faults in only the pages it touches (a map of a few values and its BTF copy,
 * created and closed by a loader, often none), and unmapping pages never mapped costs
 * no TLB flush.  0 or -errno. */
static int write_whole(int fd, uint64_t size, const struct brt_obj_hdr *hdr,
		       const void *tail)
{
	struct iovec iov[WHOLE_MAX / BRT_PAGE + 8];
	uint64_t pos = 0, tail_off = brt_obj_tail_off(hdr), hdr_at = brt_obj_hdr_at(hdr);
	int n = 0;
	ssize_t got;

	if (tail && hdr->tail_size) {
		zeros_to(iov, &n, &pos, tail_off);
		iov[n].iov_base = (void *)(uintptr_t)tail;
		iov[n++].iov_len = hdr->tail_size;
		pos += hdr->tail_size;
	}
	zeros_to(iov, &n, &pos, hdr_at);
	iov[n].iov_base = (void *)(uintptr_t)hdr;
	iov[n++].iov_len = sizeof(*hdr);
	pos += sizeof(*hdr);
	zeros_to(iov, &n, &pos, size);
	do
		got = pwritev(fd, iov, n, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return errno == ENOSPC || errno == EFBIG ? -ENOMEM : -errno;
	return (uint64_t)got == size ? 0 : -ENOMEM;
}

static int create(struct brt_obj_hdr *hdr, size_t obj_size, const void *tail,
		  int (*init)(struct brt_obj *obj, void *arg), void *arg, struct brt_obj **out,
		  int once, uint64_t hole_off, uint64_t hole_len)
{
	uint64_t data_pages = hdr->tail_packed ?
		(brt_obj_tail_off(hdr) + hdr->tail_size + BRT_PAGE - 1) / BRT_PAGE :
		(hdr->data_size + BRT_PAGE - 1) / BRT_PAGE +
			((uint64_t)hdr->tail_size + BRT_PAGE - 1) / BRT_PAGE;
	/* where the data and tail end when the tail shares their pages */
	uint64_t end = hdr->tail_size ? brt_obj_tail_off(hdr) + hdr->tail_size : hdr->data_size;
	struct brt_obj *obj;
	struct timespec now;
	struct stat st;
	size_t size;
	void *base, *buf = NULL;
	int fd, err, written;

	/* Shared memory is reserved up front (below), so cap what one object may take: its
	 * pages but a hole's, and the span of a file with one */
	if (data_pages > BRT_OBJ_MAX_SPAN / BRT_PAGE)
		return -ENOMEM;
	size = (size_t)(data_pages + 1) * BRT_PAGE;
	if (data_pages - (hole_ok(size, hole_off, hole_len) ? hole_len / BRT_PAGE : 0) >
	    BRT_OBJ_MAX_BYTES / BRT_PAGE)
		return -ENOMEM;
	/* written once, or a map that asked for it: the header after the data, in their
	 * last page when it has room (obj.h, brt_obj_hdr_at()) */
	hdr->hdr_at_end = (once ? hdr->kind == BRT_OBJ_PROG || hdr->kind == BRT_OBJ_BTF :
				  hdr->kind == BRT_OBJ_MAP && hdr->hdr_at_end) &&
			  (hdr->tail_packed || !hdr->tail_size);
	if (hdr->hdr_at_end)
		size = (size_t)BRT_ROUND_PAGE(end + BRT_OBJ_HDR_ROOM);
	/* a small object without a hole: its file written whole (write_whole()) */
	written = !once && !hole_len && size <= WHOLE_MAX;
	hdr->magic = BRT_OBJ_MAGIC;
	hdr->version = BRT_OBJ_VERSION;
	hdr->file_size = size;
	sweep_due();
	fd = open_anon();
	if (fd < 0)
		return fd;
	clock_gettime(CLOCK_REALTIME, &now);
	hdr->created_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (!hdr->id) /* a given id: an object re-created under its old id (api/ids.c) */
		hdr->id = alloc_id(hdr->kind, hdr->created_ns);
	if (once) {
		/* written once: built in process memory and written whole below, which
		 * reserves the memory as fallocate does (and says ENOSPC as it does) */
		base = buf = calloc(1, size);
		if (!buf) {
			err = -ENOMEM;
			goto out_close_fd;
		}
	} else {
		/* Reserve the memory now: a sparse tmpfs file would turn ENOSPC into SIGBUS
		 * later.  A hole the kind asked for is its own to reserve before use (it
		 * populates pages with MADV_POPULATE_WRITE, which fails instead). */
		err = written ? write_whole(fd, size, hdr, tail) :
				reserve(fd, size, hole_off, hole_len);
		if (err)
			goto out_close_fd;
		/* not populated: a small file's pages are in the page cache already and
		 * fault in cheaply where touched; a larger one's are faulted in as used */
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED) {
			err = -ENOMEM;
			goto out_close_fd;
		}
	}
	obj = calloc(1, obj_size);
	if (!obj || fstat(fd, &st)) {
		err = -ENOMEM;
		goto out_unmap;
	}
	obj->dev = st.st_dev;
	obj->ino = st.st_ino;
	obj->last_fd = fd;
	obj->kind = hdr->kind;
	obj->base = base;
	obj->size = size;
	obj->hdr = (struct brt_obj_hdr *)((char *)base + brt_obj_hdr_at(hdr));
	if (!written) {
		memcpy(obj->hdr, hdr, sizeof(*hdr));
		if (tail && hdr->tail_size && !once)
			memcpy((char *)base + brt_obj_tail_off(hdr), tail, hdr->tail_size);
	}
	obj->snap = *hdr;
	refs_init(obj, 1);
	err = init ? init(obj, arg) : 0;
	if (err)
		goto out_free;
	if (once && batch.id && size <= PRIVATE_COPY_MAX) {
		/* in a batch: the file, and the process memory stays the object's view of
		 * it (obj.h, private_copy) */
		err = write_all(fd, buf, size);
		if (err) {
			err = err == -ENOSPC ? -ENOMEM : err;
			goto out_free;
		}
		obj->private_copy = 1;
		buf = NULL;
	} else if (once) {
		/* the file, then its mapping (not populated: this process seldom reads the
		 * file again, and an untouched mapping is cheap to drop) */
		err = write_all(fd, buf, size);
		base = err ? MAP_FAILED :
			     mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED) {
			err = err == -ENOSPC || !err ? -ENOMEM : err;
			base = buf;
			goto out_free;
		}
		obj->base = base;
		obj->hdr = (struct brt_obj_hdr *)((char *)base + brt_obj_hdr_at(hdr));
		free(buf);
		buf = NULL;
	}
	pthread_mutex_lock(&cache_lock);
	cache_insert(obj);
	pthread_mutex_unlock(&cache_lock);
	brt_obj_batch_forget(fd);
	/* in a batch, the new fd answers from the memo at once: the load's programs resolve
	 * the maps and the BTF object it has just created without an fstat of each */
	batch_memo(fd, obj);
	if (batch.id)
		batch.fresh = fd;
	*out = obj;
	return fd;

out_free:
	if (obj->release)
		obj->release(obj);
out_unmap:
	free(obj);
	if (buf)
		free(buf);
	else
		munmap(base, size);
out_close_fd:
	close(fd);
	return err;
}

int brt_obj_create(struct brt_obj_hdr *hdr, size_t obj_size,
		   int (*init)(struct brt_obj *obj, void *arg), void *arg, struct brt_obj **out)
{
	return create(hdr, obj_size, NULL, init, arg, out, 0, 0, 0);
}

int brt_obj_create_sparse(struct brt_obj_hdr *hdr, size_t obj_size, uint64_t hole_off,
			  uint64_t hole_len, const void *tail,
			  int (*init)(struct brt_obj *obj, void *arg), void *arg,
			  struct brt_obj **out)
{
	return create(hdr, obj_size, tail, init, arg, out, 0, hole_off, hole_len);
}

int brt_obj_create_once(struct brt_obj_hdr *hdr, size_t obj_size,
			int (*init)(struct brt_obj *obj, void *arg), void *arg,
			struct brt_obj **out)
{
	return create(hdr, obj_size, NULL, init, arg, out, 1, 0, 0);
}

int brt_obj_read_hdr(int fd, uint64_t size, struct brt_obj_hdr *hdr)
{
	_Alignas(8) unsigned char page[BRT_PAGE];

	if (size < BRT_PAGE || size % BRT_PAGE || size > (uint64_t)INT64_MAX ||
	    pread(fd, page, BRT_PAGE, (off_t)(size - BRT_PAGE)) != (ssize_t)BRT_PAGE)
		return -EINVAL;
	/* the file's last bytes first: a header there marked hdr_at_end is the second
	 * layout's; anything else there (zeros in an honest file of the first layout) says
	 * the header is where the first layout has it (in a file of one page, the same
	 * place, unmarked in files of earlier versions) */
	memcpy(hdr, page + BRT_PAGE - BRT_OBJ_HDR_ROOM, sizeof(*hdr));
	if (hdr->magic != BRT_OBJ_MAGIC || !hdr->hdr_at_end) {
		memcpy(hdr, page + BRT_PAGE - (size - brt_obj_hdr_off(size)), sizeof(*hdr));
		if (hdr->hdr_at_end) /* a header that is not where it says it is */
			return -EINVAL;
	}
	return hdr->magic == BRT_OBJ_MAGIC && hdr->version == BRT_OBJ_VERSION &&
		       hdr->file_size == size && hdr->kind < BRT_OBJ_KINDS &&
		       brt_obj_size_ok(size, hdr->kind) &&
		       (!hdr->hdr_at_end || brt_obj_kind_hdr_at_end(hdr->kind)) ?
		       0 : -EINVAL;
}

/* A read-write fd of the same file for pread() and the shared mapping: fd itself, or, for
 * an fd opened read-only or write-only (BPF_OBJ_GET file_flags), a reopening of it
 * through /proc (the process's own mapping stays writable: programs write maps whatever
 * the user's fd allows).  Returns an fd to close when it differs from fd, or -errno. */
static int rw_fd(int fd)
{
	char proc[64];
	int fl = fcntl(fd, F_GETFL), rw;

	if (fl < 0 || (fl & O_ACCMODE) == O_RDWR)
		return fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rw = open(proc, O_RDWR | O_CLOEXEC);
	return rw >= 0 ? rw : -EACCES;
}

/* Map and validate a file seen for the first time in this process (rdwr: fd is known to
 * be open read-write). */
static int obj_open(int fd, const struct stat *st, int rdwr, struct brt_obj **out)
{
	struct brt_obj tmpl = { 0 };
	struct brt_obj_hdr hdr;
	struct brt_obj *obj;
	brt_obj_attach_fn attach;
	void *base;
	struct stat ost;
	int err, rw, own, ro = 0;

	if (st->st_size < (off_t)BRT_PAGE || st->st_size % BRT_PAGE)
		return -EINVAL;
	/* The caller's number was fstat()ed a moment ago; another thread may put another
	 * file there at any time (dup2), and its header read, its mode asked or its mapping
	 * made there could each be another file's than st's (the entry cached under st's
	 * inode would be some other file, read-only or sized for another, and written by
	 * make_writable()): all of it is done on a number of our own, checked to be st's
	 * file.  An fd the caller has just opened itself (rdwr) has not been handed out. */
	own = rdwr ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return -EBADF;
	if (own != fd && (fstat(own, &ost) || ost.st_dev != st->st_dev || ost.st_ino != st->st_ino)) {
		close(own);
		return -EINVAL;
	}
	rw = rdwr ? own : rw_fd(own);
	/* a file this process may only read, through an fd opened read-only: mapped so */
	if (rw == -EACCES && (fcntl(own, F_GETFL) & O_ACCMODE) == O_RDONLY)
		ro = 1, rw = own;
	if (rw < 0) {
		if (own != fd)
			close(own);
		return rw;
	}
	base = MAP_FAILED;
	err = -EINVAL;
	if (brt_obj_read_hdr(rw, (uint64_t)st->st_size, &hdr) ||
	    !(attach = atomic_load_explicit(&attach_fns[hdr.kind], memory_order_acquire)))
		goto out_close;
	err = -EACCES;
	if (ro && hdr.kind != BRT_OBJ_MAP && hdr.kind != BRT_OBJ_PROG)
		goto out_close;
	base = mmap(NULL, (size_t)st->st_size, PROT_READ | (ro ? 0 : PROT_WRITE), MAP_SHARED,
		    rw, 0);
	if (base == MAP_FAILED)
		err = errno == EACCES ? -EACCES : -ENOMEM;
out_close:
	if (rw != own)
		close(rw);
	if (own != fd)
		close(own);
	if (base == MAP_FAILED)
		return err;
	tmpl.dev = st->st_dev;
	tmpl.ino = st->st_ino;
	tmpl.last_fd = fd;
	tmpl.kind = hdr.kind;
	tmpl.base = base;
	tmpl.size = (size_t)st->st_size;
	tmpl.hdr = (struct brt_obj_hdr *)((char *)base + brt_obj_hdr_at(&hdr));
	tmpl.snap = hdr;
	atomic_init(&tmpl.ro, ro);
	err = attach(&tmpl, &obj);
	if (err) {
		munmap(base, tmpl.size);
		return err;
	}
	refs_init(obj, 1);
	*out = obj;
	return 0;
}

/* A read-only mapping of obj made writable in place when fd may write its file (its
 * mode changed since, or another user's fd came): the same file at the same address, so
 * every pointer into it stays good, and a thread reading it meanwhile waits on the mm's
 * lock for the new mapping.  Nothing when fd may not (a read-only fd stays read-only):
 * 0.  -EACCES when fd may write but the mapping stays read-only (a write-only fd of a
 * file this user may not read cannot be reopened read-write): the fd is refused, as
 * its commands would write the mapping (a crash). */
static int make_writable(struct brt_obj *obj, int fd)
{
	int fl = fcntl(fd, F_GETFL), own, rw;
	struct stat st;

	if (fl < 0)
		return -EBADF;
	if ((fl & O_ACCMODE) == O_RDONLY)
		return 0;
	/* fd's number was resolved to obj by an fstat a moment ago; another thread may put
	 * another file there at any time (dup2), and mapping that one over obj would make
	 * the map that file, and the store below write it: the file is held by an fd of our
	 * own, checked, and that one mapped */
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return -EBADF;
	rw = rw_fd(own);
	if (rw < 0) {
		close(own);
		return -EACCES;
	}
	if (fstat(rw, &st) || st.st_dev != obj->dev || st.st_ino != obj->ino) {
		if (rw != own)
			close(rw);
		close(own);
		return -EINVAL;
	}
	pthread_mutex_lock(&cache_lock);
	if (atomic_load_explicit(&obj->ro, memory_order_relaxed) &&
	    mmap(obj->base, obj->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, rw, 0) !=
		    MAP_FAILED &&
	    (!obj->aux_writable || !obj->aux_writable(obj, rw))) {
		/* the read-only fds that made it so still ask their mode */
		atomic_store_explicit(&obj->hdr->restricted, 1, memory_order_release);
		atomic_store_explicit(&obj->ro, 0, memory_order_release);
	}
	pthread_mutex_unlock(&cache_lock);
	if (rw != own)
		close(rw);
	close(own);
	return atomic_load_explicit(&obj->ro, memory_order_acquire) ? -EACCES : 0;
}

int brt_obj_writable(const struct brt_obj *obj, const char *what)
{
	if (!atomic_load_explicit(&obj->ro, memory_order_acquire))
		return 0;
	brt_print(BPFRT_WARN, "bpfrt: %s: the map is open read-only in this process (BPF_OBJ_GET "
		  "with BPF_F_RDONLY of a pin it may only read), and bpfrt needs write access to "
		  "its file for that (the kernel does not)\n", what);
	return -EACCES;
}

/* opened: fd was just opened by the caller (read-write when rdwr), whose stat of it
 * that is */
static int from_fd(int fd, uint32_t kind, struct brt_obj **out, int keep,
		   const struct stat *opened, int rdwr)
{
	struct brt_obj *obj, *raced;
	struct stat st;
	int err;

	if (fd < 0)
		return -EBADF;
	if (opened) {
		/* a number the batch may know from an fd closed since */
		brt_obj_batch_forget(fd);
		st = *opened;
		goto stated;
	}
	for (unsigned i = 0; i < batch.n; i++)
		if (batch.fd[i] == fd) {
			obj = batch.obj[i];
			if (kind && obj->kind != kind)
				return -EINVAL;
			brt_obj_get(obj);
			if (keep)
				obj_keep(obj, fd);
			*out = obj;
			return 0;
		}
	if (fstat(fd, &st))
		return errno == EBADF ? -EBADF : -EINVAL;
stated:
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	pthread_mutex_lock(&cache_lock);
	obj = cache_find(st.st_dev, st.st_ino);
	if (obj) {
		atomic_fetch_add_explicit(obj->refs, 1, memory_order_relaxed);
		obj->last_fd = fd;
	}
	pthread_mutex_unlock(&cache_lock);
	if (obj && atomic_load_explicit(&obj->ro, memory_order_acquire) &&
	    (err = make_writable(obj, fd))) {
		brt_obj_put(obj);
		return err;
	}
	if (!obj) {
		/* a new entry, like a creation: the sweep when due, once a batch (a sweep
		 * per miss made a loader that gets n pinned maps quadratic in fstat()s:
		 * Cilium's ~40 cost ~700) */
		sweep_due();
		err = obj_open(fd, &st, rdwr, &obj);
		if (err)
			return err;
		pthread_mutex_lock(&cache_lock);
		raced = cache_find(st.st_dev, st.st_ino);
		if (raced)
			atomic_fetch_add_explicit(raced->refs, 1, memory_order_relaxed);
		else
			cache_insert(obj);
		pthread_mutex_unlock(&cache_lock);
		if (raced) {
			obj_destroy(obj);
			obj = raced;
			if (atomic_load_explicit(&obj->ro, memory_order_acquire) &&
			    (err = make_writable(obj, fd))) {
				brt_obj_put(obj);
				return err;
			}
		}
	}
	batch_memo(fd, obj);
	if (kind && obj->kind != kind) {
		brt_obj_put(obj);
		return -EINVAL;
	}
	if (keep)
		obj_keep(obj, fd);
	*out = obj;
	return 0;
}

int brt_obj_from_fd(int fd, uint32_t kind, struct brt_obj **out)
{
	return from_fd(fd, kind, out, 1, NULL, 0);
}

int brt_obj_from_fd_transient(int fd, uint32_t kind, struct brt_obj **out)
{
	return from_fd(fd, kind, out, 0, NULL, 0);
}

int brt_obj_from_opened(int fd, int rdwr, const struct stat *st, struct brt_obj **out)
{
	return from_fd(fd, 0, out, 1, st, rdwr);
}

void brt_obj_keep_fd(struct brt_obj *obj, int fd)
{
	obj_keep(obj, fd);
}

void brt_obj_batch_begin(void)
{
	if (batch.depth++)
		return;
	batch.id = atomic_fetch_add(&batch_seq, 1) + 1;
	batch.swept = 0;
	batch.dir[0] = '\0';
	batch.dirfd = -1;
	batch.n = 0;
}

void brt_obj_batch_end(void)
{
	if (!batch.depth || --batch.depth)
		return;
	batch.id = 0;
	batch.dir[0] = '\0';
	if (batch.dirfd >= 0)
		close(batch.dirfd);
	batch.dirfd = -1;
	while (batch.n)
		brt_obj_put(batch.obj[--batch.n]);
}

uint64_t brt_obj_batch_id(void)
{
	return batch.id;
}

void brt_obj_batch_command(void)
{
	batch.fresh = -1;
}

void brt_obj_batch_handed(int fd)
{
	int fresh = batch.fresh;

	batch.fresh = -1;
	if (fd != fresh)
		brt_obj_batch_forget(fd);
}

void brt_obj_batch_forget(int fd)
{
	for (unsigned i = 0; i < batch.n; i++)
		if (batch.fd[i] == fd) {
			brt_obj_put(batch.obj[i]);
			batch.fd[i] = batch.fd[--batch.n];
			batch.obj[i] = batch.obj[batch.n];
			return;
		}
}

void brt_obj_get(struct brt_obj *obj)
{
	atomic_fetch_add_explicit(obj->refs, 1, memory_order_relaxed);
}

void brt_obj_named(struct brt_obj *obj, int delta)
{
	atomic_fetch_add_explicit(obj->named, delta, memory_order_relaxed);
}

int brt_obj_fd_access(const struct brt_obj *obj, int fd)
{
	int fl;

	/* every fd resolved to a read-only mapping was read-only (from_fd()), and ro is
	 * never set again once cleared: an fd number that says otherwise now was closed and
	 * reused since, and must not write the mapping */
	if (atomic_load_explicit(&obj->ro, memory_order_acquire))
		return O_RDONLY;
	if (!atomic_load_explicit(&obj->hdr->restricted, memory_order_acquire))
		return O_RDWR;
	fl = fcntl(fd, F_GETFL);
	return fl < 0 ? O_RDWR : fl & O_ACCMODE;
}

void brt_obj_put(struct brt_obj *obj)
{
	/* Dropping to zero frees nothing: the sweeper decides, under the cache lock, once
	 * no fd refers to the file either. */
	atomic_fetch_sub_explicit(obj->refs, 1, memory_order_release);
}

/* The files of the process's fds, as (st_dev, st_ino): 16 bytes each, so the set of a
 * process with a few dozen fds stays a small allocation */
struct fdset {
	size_t n;
	size_t cap;
	struct fdfile {
		dev_t dev;
		ino_t ino;
	} *f;
};

/* A getdents64 record (the kernel's struct linux_dirent64). */
struct dirent64_rec {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Collect the files of every fd of the process; -1 when /proc is not readable.  The
 * directory is read with getdents64 into a buffer on the stack (opendir() would fstat it
 * and allocate 32 KiB for a listing of a few entries). */
static int fdset_load(struct fdset *set)
{
	_Alignas(8) char buf[2048];
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long got;

	if (dfd < 0)
		return -1;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			const struct dirent64_rec *de = (const void *)(buf + at);
			struct stat st;
			char *end;
			long fd;

			at += de->reclen;
			if (de->name[0] == '.')
				continue;
			/* the number's own fstat, not a stat of /proc/self/fd/N (a path walk
			 * through procfs per fd): the same file, as of a moment later */
			fd = strtol(de->name, &end, 10);
			if (*end || fd < 0 || fd > INT_MAX || fd == dfd || fstat((int)fd, &st) ||
			    !S_ISREG(st.st_mode))
				continue;
			if (set->n == set->cap) {
				size_t cap = set->cap ? set->cap * 2 : 32;
				struct fdfile *nf = realloc(set->f, cap * sizeof(*nf));

				if (!nf) {
					close(dfd);
					return -1; /* could not look: keep everything */
				}
				set->f = nf;
				set->cap = cap;
			}
			set->f[set->n].dev = st.st_dev;
			set->f[set->n++].ino = st.st_ino;
		}
	}
	close(dfd);
	return got < 0 ? -1 : 1;
}

static int fdset_has(const struct fdset *set, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->f[i].dev == dev && set->f[i].ino == ino)
			return 1;
	return 0;
}

static int still_open(struct brt_obj *obj, struct fdset *set, int *loaded)
{
	struct stat st;

	/* once the sweep has read every fd, the set answers (an fd it lacks was closed
	 * before or during the sweep: the same answer a later fstat would give) */
	if (*loaded > 0)
		return fdset_has(set, obj->dev, obj->ino);
	if (!fstat(obj->last_fd, &st) && st.st_dev == obj->dev && st.st_ino == obj->ino)
		return 1;
	if (!*loaded)
		*loaded = fdset_load(set);
	/* Could not look: keep everything rather than unmap something in use. */
	if (*loaded < 0)
		return 1;
	return fdset_has(set, obj->dev, obj->ino);
}

/* guards every brt_obj's name (set by pins and gets, read by sweeps) */
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;

void brt_obj_note_name(struct brt_obj *obj, const char *path)
{
	char cwd[PATH_MAX], *abs = NULL, *old;

	if (path[0] == '/') {
		abs = strdup(path);
	} else if (getcwd(cwd, sizeof(cwd))) {
		size_t len = strlen(cwd) + strlen(path) + 2;

		abs = malloc(len);
		if (abs)
			snprintf(abs, len, "%s/%s", cwd, path);
	}
	if (!abs)
		return; /* not remembered: only the map_files answer then */
	pthread_mutex_lock(&name_lock);
	old = obj->name;
	obj->name = abs;
	pthread_mutex_unlock(&name_lock);
	free(old);
}

/* Does the name this process last pinned or got obj by still name its file? */
static int name_still(const struct brt_obj *obj)
{
	struct stat st;
	char *name;
	int yes;

	/* copied out: the stat, a path walk, runs without the lock every object shares */
	pthread_mutex_lock(&name_lock);
	name = obj->name ? strdup(obj->name) : NULL;
	pthread_mutex_unlock(&name_lock);
	yes = name && !stat(name, &st) && st.st_dev == obj->dev && st.st_ino == obj->ino;
	free(name);
	return yes;
}

int brt_obj_pinned(struct brt_obj *obj)
{
	void *keep = atomic_load_explicit(&obj->keep, memory_order_acquire);
	uintptr_t lo = obj->private_copy ? (uintptr_t)keep : (uintptr_t)obj->base;
	char path[96], target[16];
	struct stat st;
	ssize_t n;

	if (!lo)
		return name_still(obj);
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)lo,
		 (unsigned long)(lo + obj->size));
	/* readlink needs only what ptrace needs; following the link (stat) needs
	 * CAP_SYS_ADMIN, which an unprivileged user lacks: then the remembered name
	 * answers (a pin made elsewhere under another name is not seen) */
	n = readlink(path, target, sizeof(target));
	if (n >= 7 && !memcmp(target, "/memfd:", 7))
		return 0;
	if (n < 0 || stat(path, &st))
		return name_still(obj);
	return st.st_dev == obj->dev && st.st_ino == obj->ino && st.st_nlink > 0;
}

int brt_obj_has_fd(struct brt_obj *obj)
{
	struct fdset set = { 0 };
	int loaded = 0, r;

	pthread_mutex_lock(&cache_lock); /* last_fd is the sweeper's and the resolvers' */
	r = still_open(obj, &set, &loaded);
	pthread_mutex_unlock(&cache_lock);
	free(set.f);
	return r;
}

/* The fd this process last reached obj by, if it still refers to obj's file; -1 if not.
 * Under cache_lock. */
static int current_fd(const struct brt_obj *obj)
{
	struct stat st;

	if (obj->last_fd < 0 || fstat(obj->last_fd, &st) || st.st_dev != obj->dev ||
	    st.st_ino != obj->ino)
		return -1;
	return obj->last_fd;
}

int brt_obj_stat(const struct brt_obj *obj, struct stat *st)
{
	int fd, err = -EBADF;

	pthread_mutex_lock(&cache_lock); /* last_fd, as in brt_obj_has_fd() */
	fd = current_fd(obj);
	if (fd >= 0 && !fstat(fd, st))
		err = 0;
	pthread_mutex_unlock(&cache_lock);
	return err;
}

int brt_obj_link(struct brt_obj *obj, int dirfd, const char *name)
{
	int fd, err;

	pthread_mutex_lock(&cache_lock);
	fd = current_fd(obj);
	err = fd < 0 ? -EBADF : brt_fs_link_fd(fd, dirfd, name);
	pthread_mutex_unlock(&cache_lock);
	if (err == -EBADF) {
		/* no fd of it left: its mapping names it to whoever may follow
		 * /proc/self/map_files (CAP_SYS_ADMIN), checked to be that file once named */
		void *keep = atomic_load_explicit(&obj->keep, memory_order_acquire);
		uintptr_t lo = obj->private_copy ? (uintptr_t)keep : (uintptr_t)obj->base;
		char path[96];
		struct stat st;

		if (!lo)
			return -EBADF;
		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)lo,
			 (unsigned long)(lo + obj->size));
		if (linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW))
			return errno == EEXIST ? -EEXIST : -EBADF;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || st.st_dev != obj->dev ||
		    st.st_ino != obj->ino) {
			unlinkat(dirfd, name, 0);
			return -EBADF;
		}
		err = 0;
	}
	return err;
}

static void desc_byte(struct flock *fl, short type, uint64_t off)
{
	memset(fl, 0, sizeof(*fl)); /* l_pid must be 0 for the F_OFD_ commands */
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = (off_t)(off & (uint64_t)INT64_MAX);
	fl->l_len = 1;
}

int brt_obj_desc_mark(struct brt_obj *obj, uint64_t off)
{
	struct flock fl;
	int fd, r;

	desc_byte(&fl, F_RDLCK, off);
	pthread_mutex_lock(&cache_lock); /* last_fd, as in brt_obj_has_fd() */
	fd = current_fd(obj);
	r = fd < 0 ? -1 : fcntl(fd, F_OFD_SETLK, &fl);
	pthread_mutex_unlock(&cache_lock);
	return r < 0 ? -1 : 0;
}

int brt_obj_desc_marked(struct brt_obj *obj, uint64_t off)
{
	struct flock fl;
	char path[48];
	int fd, nfd;

	pthread_mutex_lock(&cache_lock);
	fd = current_fd(obj);
	/* a new description of the same file: F_OFD_GETLK never reports the asking
	 * description's own locks, and ours may be the one the mark was made through */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = fd < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	pthread_mutex_unlock(&cache_lock);
	if (nfd < 0)
		return -1;
	desc_byte(&fl, F_WRLCK, off);
	if (fcntl(nfd, F_OFD_GETLK, &fl)) {
		close(nfd);
		return -1;
	}
	close(nfd);
	return fl.l_type != F_UNLCK;
}

int brt_obj_sweep(void)
{
	struct brt_obj *dead, **pp, *obj, *all = NULL, **all_tail = &all;
	struct fdset set = { 0 };
	int loaded = 0, n = 0, round_n;

	/* Rounds: dropping a program drops its references to its maps, which a round
	 * after it may then drop (with the fds read once: the set stays the answer). */
	for (int round = 0; round < 4; round++) {
		dead = NULL;
		round_n = 0;
		pthread_mutex_lock(&cache_lock);
		created_since_sweep = 0;
		for (unsigned b = 0; b < CACHE_BUCKETS; b++) {
			pp = &cache[b];
			while ((obj = *pp)) {
				if (atomic_load_explicit(obj->refs, memory_order_acquire) > 0) {
					/* held by programs only: tell the kind once no fd is
					 * left (the first round: later ones would repeat it) */
					if (!round && obj->unref && !still_open(obj, &set, &loaded))
						obj->unref(obj);
					pp = &obj->next;
					continue;
				}
				if (still_open(obj, &set, &loaded)) {
					pp = &obj->next;
					continue;
				}
				*pp = obj->next;
				obj->next = dead;
				dead = obj;
				cache_count--;
				round_n++;
			}
		}
		pthread_mutex_unlock(&cache_lock);
		/* released now (the next round sees what they held), unmapped together */
		if (dead) {
			*all_tail = dead;
			all_tail = release_list(dead);
		}
		n += round_n;
		if (!round_n)
			break;
	}
	unmap_list(all);
	free(set.f);
	return n;
}

int brt_obj_cached(void)
{
	int n;

	pthread_mutex_lock(&cache_lock);
	n = cache_count;
	pthread_mutex_unlock(&cache_lock);
	return n;
}
