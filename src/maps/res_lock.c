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
 * as the kernel finds it between CPUs; across processes only the timeout answers.
 *
 * A run that ends while it holds locks (a budget, a fault of the checked engine, an
 * unverified program that never unlocks) would leave them taken by a live thread: the
 * first bpf_res_spin_lock call of this thread's next run (a new run context) releases
 * what its table still holds.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "maps/maps.h"
#include "obj/obj.h"
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

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

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

	release_all(h);
	if (h != &spare)
		atomic_store_explicit(&h->owner, 0, memory_order_release);
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

/* Wait for w: 0 when taken, -EDEADLK, -ETIMEDOUT. */
static int wait_lock(struct held *h, _Atomic uint32_t *w, uint32_t me)
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
