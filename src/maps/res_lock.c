/* res_lock.c - struct bpf_res_spin_lock in a map value: the resilient spin lock the
 * bpf_res_spin_lock kfuncs take (the kernel's kernel/bpf/rqspinlock.c).  Taking it may
 * fail, and the verifier makes programs check: -EDEADLK when taking it would deadlock
 * (this thread holds it already: AA; or its holder, a thread of this process, waits for
 * a lock this thread holds: ABBA), -ETIMEDOUT when it stayed held for a quarter of a
 * second (RES_DEF_TIMEOUT), as the kernel answers.  Never a hang.
 *
 * The word (4 bytes, the value's field) is 0 when free, else its holder's owner word
 * (brt_shm_self(): thread id and check bits), so processes sharing the map exclude each
 * other and a waiter can tell a dead holder: a holder killed with the lock held (SIGKILL)
 * leaves a word naming a dead thread, which the next waiter takes over within about a
 * millisecond (what the holder stored before it died stays; the kernel's holder cannot
 * be killed there).  Each thread keeps the locks it holds or is taking, in order, as the
 * kernel's per-CPU rqspinlock_held (31 entries, more counted but not kept); the threads'
 * tables are in one process-wide array, so ABBA between threads of this process is found
 * as the kernel finds it between CPUs.
 *
 * Across processes the addresses mean nothing, so a thread that has waited a millisecond
 * publishes what it holds and waits for in a registry file all of its user's processes map
 * ($BPFRT_FS/.bpfrt-reslock.<uid>, 0600): one slot per waiting thread, each lock named by
 * the shared mapping it lies in (device, inode, file offset, from /proc/self/maps: a map's
 * value is the same file and offset in every process).  A waiter whose lock's holder is a
 * thread of another process reads the holder's slot: when the holder waits for a lock this
 * thread holds, it is ABBA (-EDEADLK), as the kernel's check_deadlock_ABBA() finds it.  The
 * registry is untrusted input (any process of the user writes it): slots are read with
 * atomic loads under a sequence count, counts are bounded, keys only compared, every walk
 * is bounded; a scribbled registry can at worst make a wait answer -EDEADLK or leave it to
 * the timeout, never crash or hang.  Any of them may also truncate the file, which would
 * make the next access to the mapping past its new end raise SIGBUS: every access goes
 * through util's fault-guarded accessors (brt_uload32(), brt_ustore32(), brt_ucas32(),
 * brt_ucopy(): -EFAULT instead of the signal), a faulting access counts as an empty or
 * unusable slot, and the file is grown back to its size (same inode, same checks as at
 * first) so that the next wait can use it again.  Without the file (no room, another
 * user's file in the way, no fault guard: BPFRT_UCOPY=syscall or not x86-64) the timeout
 * answers, as before.
 *
 * A run that ends while it holds locks (a budget, a fault of the checked engine, an
 * unverified program that never unlocks) would leave them taken by a live thread: the
 * first bpf_res_spin_lock call of this thread's next run (a new run context) releases
 * what its table still holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "maps/maps.h"
#include "obj/obj.h"
#include "util/util.h"
#include "vm/vm.h"

#define RES_NR_HELD 31             /* the kernel's RES_NR_HELD */
#define RES_TIMEOUT_NS 250000000ll /* RES_DEF_TIMEOUT: NSEC_PER_SEC / 4 */
#define RES_CHECK_NS 1000000ll     /* deadlock and dead-holder checks: every millisecond */
#define HELD_TABLES 256            /* threads of a process with an entry (others: no ABBA) */

/* One thread's locks held or being taken, oldest first (rqspinlock_held). */
struct held {
	_Atomic uint32_t owner; /* brt_shm_self() of the thread, 0: a free entry */
	_Atomic uint32_t cnt;   /* locks held or being taken (more than RES_NR_HELD counted) */
	_Atomic(uintptr_t) locks[RES_NR_HELD]; /* their words' addresses */
};

static struct held tables[HELD_TABLES];
static _Thread_local struct held *mine;
static _Thread_local struct held spare; /* when every entry of tables is taken */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* ---- the registry of waiting threads, shared by the user's processes ------------------- */
#define XSLOTS 256

/* where a lock word lies: a shared mapping's file and the offset in it (0, 0, 0: private
 * memory, which no other process can lock) */
struct xkey {
	uint64_t dev, ino, off;
};

/* Only ever accessed through the fault-guarded accessors below (the file may shrink
 * under the mapping at any time). */
struct xslot {
	uint32_t owner; /* brt_shm_self() of the thread, 0: free */
	uint32_t seq;   /* odd while the thread rewrites cnt and keys */
	uint32_t cnt;   /* keys: the locks held, then the one waited for; 0: none */
	uint32_t pad;
	uint64_t keys[RES_NR_HELD][3];
};

#define XTAB_SIZE (sizeof(struct xslot) * XSLOTS)

static struct xslot *xtab; /* NULL: no registry (the timeout answers) */
static pthread_once_t xtab_once = PTHREAD_ONCE_INIT;
static _Thread_local struct xslot *xmine;
static char xtab_path[PATH_MAX];
static dev_t xtab_dev;
static ino_t xtab_ino;
static _Atomic unsigned xtab_faults; /* accesses that faulted (the file was truncated) */

unsigned brt_res_lock_registry_faults(void)
{
	return atomic_load_explicit(&xtab_faults, memory_order_relaxed);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Reopen the registry file, the same inode under the same checks as xtab_map()'s, and
 * grow it back to its size: an access past the end a process of this user truncated it
 * to faulted.  Other waiters' slots read as free until they write them again. */
static void xtab_regrow(void)
{
	struct stat st;
	int fd = open(xtab_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	atomic_fetch_add_explicit(&xtab_faults, 1, memory_order_relaxed);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_dev == xtab_dev &&
	    st.st_ino == xtab_ino && st.st_uid == geteuid() && !(st.st_mode & 077) &&
	    st.st_size < (off_t)XTAB_SIZE && ftruncate(fd, (off_t)XTAB_SIZE)) {
		/* no room: the next access faults again and the timeout answers */
	}
	close(fd);
}

#if defined(__x86_64__) && defined(__linux__)
#define XTAB_GUARDED 1
/* The registry's words: 0 (or 1/0 for xcas: swapped or not), -EFAULT after a fault */
static int xload(const uint32_t *p, uint32_t *v)
{
	int err = brt_uload32(p, v);

	if (err)
		xtab_regrow();
	return err;
}

static int xstore(uint32_t *p, uint32_t v)
{
	int err = brt_ustore32(p, v);

	if (err)
		xtab_regrow();
	return err;
}

static int xcas(uint32_t *p, uint32_t *expected, uint32_t desired)
{
	int r = brt_ucas32(p, expected, desired);

	if (r < 0)
		xtab_regrow();
	return r;
}

static int xcopy(void *dst, const void *src, size_t len, int to_registry)
{
	int err = brt_ucopy(dst, src, len, to_registry);

	if (err)
		xtab_regrow();
	return err;
}
#else
#define XTAB_GUARDED 0 /* no registry: never mapped, these never called */
static int xload(const uint32_t *p, uint32_t *v)
{
	(void)p;
	*v = 0;
	return -EFAULT;
}

static int xstore(uint32_t *p, uint32_t v)
{
	(void)p;
	(void)v;
	return -EFAULT;
}

static int xcas(uint32_t *p, uint32_t *expected, uint32_t desired)
{
	(void)p;
	(void)expected;
	(void)desired;
	return -EFAULT;
}

static int xcopy(void *dst, const void *src, size_t len, int to_registry)
{
	(void)dst;
	(void)src;
	(void)len;
	(void)to_registry;
	return -EFAULT;
}
#endif

/* Unlock what a table still holds (a run that ended inside its locks, or a thread that
 * exits), newest first; a word no longer naming this thread was taken over meanwhile. */
static void release_all(struct held *h)
{
	uint32_t me = brt_shm_self(), n = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	for (uint32_t i = n < RES_NR_HELD ? n : RES_NR_HELD; i-- > 0;) {
		_Atomic uint32_t *w = (_Atomic uint32_t *)atomic_load_explicit(
			&h->locks[i], memory_order_relaxed);
		uint32_t c = me;

		if (w)
			atomic_compare_exchange_strong_explicit(w, &c, 0, memory_order_release,
								memory_order_relaxed);
		atomic_store_explicit(&h->locks[i], 0, memory_order_relaxed);
	}
	atomic_store_explicit(&h->cnt, 0, memory_order_relaxed);
}

static void thread_exit(void *arg)
{
	struct held *h = arg;
	uint32_t me = brt_shm_self();

	release_all(h);
	if (h != &spare)
		atomic_store_explicit(&h->owner, 0, memory_order_release);
	if (xmine)
		xcas(&xmine->owner, &me, 0);
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* This thread's table: an entry of tables claimed on first use (freed at thread exit), or
 * the thread's own spare when all are taken. */
static struct held *my_table(void)
{
	uint32_t me;

	if (mine)
		return mine;
	me = brt_shm_self();
	pthread_once(&exit_once, make_key);
	for (size_t i = 0; i < HELD_TABLES && !mine; i++) {
		uint32_t o = atomic_load_explicit(&tables[i].owner, memory_order_relaxed);

		/* an entry of a thread that died without its destructor (never in a
		 * process that lives on) is not reclaimed: the table is per process */
		if (!o && atomic_compare_exchange_strong_explicit(&tables[i].owner, &o, me,
								  memory_order_acquire,
								  memory_order_relaxed))
			mine = &tables[i];
	}
	if (!mine)
		mine = &spare;
	atomic_store_explicit(&mine->cnt, 0, memory_order_relaxed);
	pthread_setspecific(exit_key, mine);
	return mine;
}

/* check_deadlock_AA(): this thread holds w already (the newest entry is w itself) */
static int holds(const struct held *h, const void *w, uint32_t upto)
{
	for (uint32_t i = 0; i < upto && i < RES_NR_HELD; i++)
		if (atomic_load_explicit(&h->locks[i], memory_order_relaxed) == (uintptr_t)w)
			return 1;
	return 0;
}

/* check_deadlock_ABBA(): w's holder (owner word c), a thread of this process, is taking
 * a lock this thread holds.  Inconclusive (0) when the holder is in another process, has
 * no entry or a table past RES_NR_HELD. */
static int abba(const struct held *h, uint32_t c)
{
	uint32_t n = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	for (size_t i = 0; i < HELD_TABLES; i++) {
		const struct held *r = &tables[i];
		uint32_t rn;
		uintptr_t want;

		if (r == h || atomic_load_explicit(&r->owner, memory_order_relaxed) != c)
			continue;
		rn = atomic_load_explicit(&r->cnt, memory_order_relaxed);
		if (rn < 2 || rn > RES_NR_HELD)
			return 0;
		want = atomic_load_explicit(&r->locks[rn - 1], memory_order_relaxed);
		return want && n >= 2 && holds(h, (const void *)want, n - 1);
	}
	return 0;
}

/* Map the user's registry: a regular file of this user's that only the user can
 * access, made XSLOTS slots long (the same size in every process). */
static void xtab_map(void)
{
	size_t size = XTAB_SIZE;
	char *path = xtab_path;
	struct stat st;
	void *p;
	int fd;

	char why[160];

	/* the objects' directory, if trusted as pins are (docs/SECURITY.md); only with
	 * the fault guard (a truncated file must not crash us) */
	if (!XTAB_GUARDED || !brt_ufault_ready() ||
	    brt_fs_dir_check(brt_obj_fs_dir(), why, sizeof(why)) ||
	    snprintf(path, sizeof(xtab_path), "%s/.bpfrt-reslock.%u", brt_obj_fs_dir(),
		     (unsigned)geteuid()) >= (int)sizeof(xtab_path))
		return;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || (st.st_size < (off_t)size && ftruncate(fd, (off_t)size))) {
		close(fd);
		return;
	}
	xtab_dev = st.st_dev;
	xtab_ino = st.st_ino;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		xtab = p;
}

/* This thread's slot: a free one, else one of a thread that is gone; NULL when none */
static struct xslot *xslot_mine(uint32_t me)
{
	pthread_once(&xtab_once, xtab_map);
	if (!xtab)
		return NULL;
	uint32_t o;

	if (xmine && !xload(&xmine->owner, &o) && o == me)
		return xmine;
	xmine = NULL;
	/* a fault (the file truncated) grew it back: the second try finds it whole
	 * unless it was truncated again meanwhile (then this wait does without) */
	for (int attempt = 0, fault = 1; attempt < 2 && fault; attempt++) {
		fault = 0;
		for (int pass = 0; pass < 2 && !xmine && !fault; pass++)
			for (size_t i = 0; i < XSLOTS && !xmine && !fault; i++) {
				fault = xload(&xtab[i].owner, &o) != 0;
				if (!fault && (pass ? o != me && brt_shm_owner_dead(o) : !o) &&
				    xcas(&xtab[i].owner, &o, me) == 1)
					xmine = &xtab[i];
			}
	}
	return xmine;
}

/* Where each of n lock words lies (/proc/self/maps: shared mappings with an inode); the
 * others' keys stay zero */
static void xkeys(const uintptr_t *addr, uint32_t n, struct xkey *out)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];
	int whole = 1; /* the previous read ended its line: this one starts a mapping */

	memset(out, 0, n * sizeof(*out));
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		char perms[8];
		int start = whole;

		whole = strchr(line, '\n') != NULL;
		if (!start ||
		    sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &off, &maj, &min,
			   &ino) != 7 ||
		    strlen(perms) != 4 || perms[3] != 's' || !ino)
			continue;
		for (uint32_t i = 0; i < n; i++)
			if (addr[i] >= lo && addr[i] < hi)
				out[i] = (struct xkey){ makedev(maj, min), ino, off + (addr[i] - lo) };
	}
	if (f)
		fclose(f);
}

/* A wait that found its holder outside this process: the thread's published keys */
struct xwait {
	int tried;            /* xpublish() ran (once per wait) */
	struct xslot *slot;   /* NULL: not published */
	uint32_t n;           /* keys, the last the lock waited for */
	struct xkey keys[RES_NR_HELD];
};

static void xslot_write(struct xslot *s, const struct xkey *k, uint32_t n)
{
	uint64_t keys[RES_NR_HELD][3];
	uint32_t q;

	/* x86 keeps stores in order (the accessors are single instructions, each call a
	 * compiler barrier): a reader that sees any new key sees the odd seq before it.
	 * A fault (the file truncated) ends the write: the slot is gone with the bytes. */
	if (xload(&s->seq, &q) || xstore(&s->seq, q | 1u))
		return;
	for (uint32_t i = 0; i < n; i++) {
		keys[i][0] = k[i].dev;
		keys[i][1] = k[i].ino;
		keys[i][2] = k[i].off;
	}
	if ((n && xcopy(s->keys, keys, n * sizeof(keys[0]), 1)) || xstore(&s->cnt, n))
		return;
	xstore(&s->seq, (q | 1u) + 1);
}

/* Publish what this thread holds and waits for (h's entries, w's the last) */
static void xpublish(struct xwait *x, const struct held *h)
{
	uintptr_t addr[RES_NR_HELD];
	uint32_t n = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	x->tried = 1;
	if (!n || n > RES_NR_HELD)
		return; /* a table past RES_NR_HELD cannot tell (the kernel's neither) */
	x->slot = xslot_mine(brt_shm_self());
	if (!x->slot)
		return;
	for (uint32_t i = 0; i < n; i++)
		addr[i] = atomic_load_explicit(&h->locks[i], memory_order_relaxed);
	xkeys(addr, n, x->keys);
	x->n = n;
	xslot_write(x->slot, x->keys, n);
}

static void xunpublish(struct xwait *x)
{
	if (x->slot)
		xslot_write(x->slot, NULL, 0);
}

/* check_deadlock_ABBA() across processes: the holder (owner word c) is a thread waiting
 * for a lock this thread holds (what its slot says, read as untrusted) */
static int xabba(const struct xwait *x, uint32_t c)
{
	for (size_t i = 0; x->slot && i < XSLOTS; i++) {
		struct xslot *r = &xtab[i];
		uint32_t o, q, q2, rn;
		uint64_t k[3];
		struct xkey want;

		if (xload(&r->owner, &o))
			return 0; /* truncated: inconclusive, the timeout answers */
		if (r == x->slot || o != c)
			continue;
		/* x86 keeps loads in order: the seq read again below is read after the
		 * keys; a fault is inconclusive */
		if (xload(&r->seq, &q) || xload(&r->cnt, &rn) || (q & 1) || rn < 2 ||
		    rn > RES_NR_HELD || xcopy(k, r->keys[rn - 1], sizeof(k), 0) ||
		    xload(&r->seq, &q2) || q2 != q || !k[1])
			return 0;
		want = (struct xkey){ k[0], k[1], k[2] };
		for (uint32_t j = 0; j + 1 < x->n; j++)
			if (x->keys[j].ino == want.ino && x->keys[j].dev == want.dev &&
			    x->keys[j].off == want.off)
				return 1;
		return 0;
	}
	return 0;
}

/* A run's first lock: what the table holds is an earlier run's, which ended without
 * releasing it. */
static struct held *run_table(struct bpfrt_run_ctx *ctx)
{
	struct held *h = ctx->res_held;

	if (h)
		return h;
	h = my_table();
	if (atomic_load_explicit(&h->cnt, memory_order_relaxed))
		release_all(h);
	ctx->res_held = h;
	return h;
}

/* The kernel's release_held_lock_entry() */
static void drop_entry(struct held *h)
{
	uint32_t n = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	if (!n)
		return;
	if (n <= RES_NR_HELD)
		atomic_store_explicit(&h->locks[n - 1], 0, memory_order_relaxed);
	atomic_store_explicit(&h->cnt, n - 1, memory_order_relaxed);
}

/* Wait for w: 0 when taken, -EDEADLK, -ETIMEDOUT (what the registry was told is taken
 * back) */
static int wait_lock_x(struct held *h, _Atomic uint32_t *w, uint32_t me, struct xwait *x);

static int wait_lock(struct held *h, _Atomic uint32_t *w, uint32_t me)
{
	struct xwait x = { 0 };
	int err = wait_lock_x(h, w, me, &x);

	xunpublish(&x);
	return err;
}

static int wait_lock_x(struct held *h, _Atomic uint32_t *w, uint32_t me, struct xwait *x)
{
	long long start = now_ns(), checked = start, t;
	uint32_t n = atomic_load_explicit(&h->cnt, memory_order_relaxed);

	for (unsigned spin = 0;; spin++) {
		uint32_t c = atomic_load_explicit(w, memory_order_relaxed);

		if (!c && atomic_compare_exchange_weak_explicit(w, &c, me, memory_order_acquire,
								memory_order_relaxed))
			return 0;
		/* held by this thread: by this run (AA), else a dead thread's whose id this
		 * thread now has or a run that ended holding it, both over (unless the table
		 * overflowed and cannot tell: the timeout answers, as the kernel's) */
		if (c == me && holds(h, w, n - 1))
			return -EDEADLK;
		if (c == me && n - 1 < RES_NR_HELD)
			return 0;
		if (spin % 64 != 63)
			continue;
		sched_yield();
		t = now_ns();
		if (t - checked < RES_CHECK_NS) {
			if (t - start > RES_TIMEOUT_NS)
				return -ETIMEDOUT;
			continue;
		}
		checked = t;
		if (c && abba(h, c))
			return -EDEADLK;
		/* a holder in another process: publish once, then read its slot (a dead
		 * holder's slot is stale: its lock is taken over below) */
		if (c && !x->tried)
			xpublish(x, h);
		if (c && xabba(x, c) && !brt_shm_owner_dead(c))
			return -EDEADLK;
		if (c && brt_shm_owner_dead(c) &&
		    atomic_compare_exchange_strong_explicit(w, &c, me, memory_order_acquire,
							    memory_order_relaxed))
			return 0;
		if (t - start > RES_TIMEOUT_NS)
			return -ETIMEDOUT;
	}
}

int brt_res_lock(void *lock, struct bpfrt_run_ctx *ctx)
{
	_Atomic uint32_t *w = lock;
	struct held *h = run_table(ctx);
	uint32_t me = brt_shm_self(), c = 0;
	uint32_t n = atomic_load_explicit(&h->cnt, memory_order_relaxed);
	int err;

	/* grab_held_lock_entry(): recorded before waiting, so that another thread taking
	 * a lock this one holds sees what it waits for */
	if (n < RES_NR_HELD)
		atomic_store_explicit(&h->locks[n], (uintptr_t)w, memory_order_relaxed);
	atomic_store_explicit(&h->cnt, n + 1, memory_order_release);
	if (atomic_compare_exchange_strong_explicit(w, &c, me, memory_order_acquire,
						    memory_order_relaxed))
		return 0;
	err = wait_lock(h, w, me);
	if (err)
		drop_entry(h);
	return err;
}

void brt_res_unlock(void *lock, struct bpfrt_run_ctx *ctx)
{
	_Atomic uint32_t *w = lock;
	uint32_t me = brt_shm_self();

	/* only a word that still names this thread: one taken over meanwhile (this thread
	 * was thought dead) is not ours to clear */
	atomic_compare_exchange_strong_explicit(w, &me, 0, memory_order_release,
						memory_order_relaxed);
	drop_entry(run_table(ctx));
}
