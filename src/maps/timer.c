/* timer.c - the bpf_timer helpers (kernel/bpf/helpers.c's bpf_timer_init, _set_callback,
 * _start, _cancel) on a map value's struct bpf_timer, and the timer thread that runs
 * armed timers' callbacks.
 *
 * Theory of operation.  A map value is shared memory (other processes map it, at other
 * addresses), so it holds no pointers: word 0 of the value's 16 bytes is the clock id + 1
 * once bpf_timer_init() ran (the kernel's "async->cb != NULL"), 0 when uninitialised or
 * freed.  Everything else is this process's: a table of timers (struct tmr) keyed by the
 * address of that word here, holding the map (referenced), the callback (the program,
 * referenced as the kernel's set_callback does, and the instruction index of its
 * function), and whether and until when it is armed.  One timer thread per process,
 * started by the first bpf_timer_start(), sleeps until the earliest expiry and runs
 * each expired callback as (map, key, value) as bpf_timer_cb() does: an array's key is a
 * u32 index, a hash map's the element's key.  Running a function of a program belongs to
 * the layer above (api/), which registers it (brt_timer_set_call()).
 *
 * The kernel's rules kept: init once per value (-EBUSY), clocks MONOTONIC, REALTIME and
 * BOOTTIME only; set_callback on an initialised timer, start only with a callback
 * (-EINVAL), BPF_F_TIMER_ABS an absolute time on the timer's clock (a REALTIME timer's is
 * the monotonic clock, as hrtimer_setup() makes it; BPF_F_TIMER_CPU_PIN accepted: one
 * thread serves every CPU); cancel answers 1 when it disarmed a queued
 * timer, waits for a callback running on the timer thread, drops the program (a new
 * start needs a new callback) and answers -EDEADLK from the timer's own callback.
 * Freeing a value's timer (element deleted, replaced, evicted or updated:
 * brt_timer_release(); the map's last fd gone: brt_timer_map_unref()) disarms it and
 * never waits, as bpf_timer_cancel_and_free() defers its wait to a worker.
 *
 * For other processes' id walks (api/ids.c), the callback's program id is kept in word 1
 * of the value's bpf_timer while a callback is set (user space never reads those bytes:
 * the kernel's copy_map_value() skips them, and so does bpfrt's), and the timer's
 * references (the program, the map) are published as named ones (obj.h,
 * brt_obj_named()): a walker counts the program as held only while it finds the map
 * alive by a user reference (an fd, a pin, a mapping: the kernel's usercnt) and a timer
 * word naming the program, so a map whose last fd went holds nothing for them even
 * before this process sweeps it, as map_release_uref() frees the kernel's timers at once.
 *
 * Not as the kernel: a timer lives in the process that initialised it; another process
 * sees the value initialised (-EBUSY) but has no callback for it (set_callback and start
 * answer -EINVAL there), and a timer another process freed is dropped when it would fire.
 * bpf_timer_init() does not answer -EPERM for a map no fd holds (the kernel's usercnt):
 * such a map's timers are freed at the next sweep of the object cache, which the timer
 * thread makes before it fires (at most once a millisecond), so closing a map's last fd
 * stops its timers as the kernel's map_release_uref() does (unless the map is pinned:
 * map.c's map_unref()).  The verifier's side (the
 * value's bpf_timer found from the map's BTF, the async callback walked on its own) is
 * verifier/helper_timer.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define CLOCK_REALTIME_ID 0
#define CLOCK_MONOTONIC_ID 1
#define CLOCK_BOOTTIME_ID 7
#define MAX_CLOCKS 16
#define TIMER_ABS 1u     /* BPF_F_TIMER_ABS */
#define TIMER_CPU_PIN 2u /* BPF_F_TIMER_CPU_PIN */
#define BUCKETS 1024u
/* the thread sweeps the object cache (closed maps' timers) at most this often */
#define SWEEP_NS 1000000
/* longest sleep while a REALTIME or BOOTTIME timer is armed: those clocks jump (settime,
 * suspend) against the monotonic one the thread sleeps on */
#define JUMPY_WAIT_NS 50000000

struct tmr {
	struct tmr *next;          /* bucket chain */
	_Atomic uint64_t *w;       /* the value's struct bpf_timer in this process (the key) */
	struct brt_map *map;       /* referenced while the entry lives */
	void *value;               /* the value holding it */
	int clock;                 /* CLOCK_* id */
	struct brt_obj *prog;      /* the callback's program (referenced), NULL: none */
	uint64_t func;             /* the callback's first instruction */
	int64_t expires;           /* ns on clock, while armed */
	uint8_t armed;
	uint8_t running;           /* its callback runs on the timer thread now */
	uint8_t dead;              /* released: out of the table, freed once idle */
	uint32_t pins;             /* cancellers waiting for the callback to end */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;  /* the thread: the earliest expiry may have changed */
static pthread_cond_t done;  /* cancellers: a callback ended */
static pthread_once_t conds_once = PTHREAD_ONCE_INIT;
static struct tmr *table[BUCKETS];
static int thread_started;
static brt_timer_call_fn call_fn;
/* the timer whose callback this thread runs now (the kernel's per-CPU hrtimer_running) */
static _Thread_local struct tmr *running_here;

void brt_timer_set_call(brt_timer_call_fn fn)
{
	__atomic_store_n(&call_fn, fn, __ATOMIC_RELEASE);
}

static void child_after_fork(void);

static void conds_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &a);
	pthread_condattr_destroy(&a);
	pthread_cond_init(&done, NULL);
	pthread_atfork(NULL, NULL, child_after_fork);
}

/* fork() copies no thread: the child forgets the parent's timers (they are the parent's
 * to fire; the refs they hold are the child's copies, never swept), and its first start
 * makes its own thread.  The lock may have been held by a thread that is gone. */
static void child_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
	for (unsigned b = 0; b < BUCKETS; b++)
		table[b] = NULL;
	thread_started = 0;
	running_here = NULL;
}

static unsigned bucket_of(const void *w)
{
	uintptr_t a = (uintptr_t)w >> 3;

	return (unsigned)((a ^ (a >> 10) ^ (a >> 20)) & (BUCKETS - 1));
}

static struct tmr *find(const _Atomic uint64_t *w)
{
	for (struct tmr *t = table[bucket_of(w)]; t; t = t->next)
		if (t->w == w)
			return t;
	return NULL;
}

static void unlink_tmr(struct tmr *t)
{
	for (struct tmr **pp = &table[bucket_of(t->w)]; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			return;
		}
}

static int64_t now_ns(int clock)
{
	struct timespec ts;

	clock_gettime((clockid_t)clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A timer's reference goes (a program's, the map's: named ones, above). */
static void drop(struct brt_obj *obj)
{
	brt_obj_named(obj, -1);
	brt_obj_put(obj);
}

/* Free an entry no one uses any more (under the lock; the refs are atomic counters). */
static void free_tmr(struct tmr *t)
{
	if (t->prog)
		drop(t->prog);
	drop(&t->map->obj);
	free(t);
}

/* Release t (under the lock): out of the table, disarmed, freed now or by whoever uses it
 * last (the timer thread after its callback, a waiting canceller). */
static void release_locked(struct tmr *t)
{
	unlink_tmr(t);
	t->dead = 1;
	t->armed = 0;
	if (!t->running && !t->pins)
		free_tmr(t);
}

/* The timer words, or NULL when a checked run may not write them (an unverified
 * program's pointer). */
static _Atomic uint64_t *timer_words(uint64_t r, struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)(uintptr_t)r;

	if (!w || (r & 7) || (ctx->checked && !bpfrt_run_access_ok(ctx, w, 16, 1)))
		return NULL;
	return w;
}

uint64_t brt_helper_timer_init(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			       struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	uint64_t clockid = r3 & (MAX_CLOCKS - 1), none = 0;
	struct tmr *t, *old;

	(void)r4, (void)r5;
	if (r3 >= MAX_CLOCKS || (clockid != CLOCK_MONOTONIC_ID && clockid != CLOCK_REALTIME_ID &&
				 clockid != CLOCK_BOOTTIME_ID))
		return (uint64_t)-EINVAL;
	if (!w || !map || map->timer_off < 0)
		return (uint64_t)-EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return (uint64_t)-ENOMEM;
	pthread_once(&conds_once, conds_init);
	pthread_mutex_lock(&lock);
	if (!atomic_compare_exchange_strong(&w[0], &none, clockid + 1)) {
		pthread_mutex_unlock(&lock);
		free(t);
		return (uint64_t)-EBUSY;
	}
	atomic_store(&w[1], 0);
	/* an entry left at this address: its value was freed where we could not see it
	 * (another process's delete or update) */
	old = find(w);
	if (old)
		release_locked(old);
	t->w = w;
	t->map = map;
	brt_map_get(map);
	brt_obj_named(&map->obj, 1);
	t->value = (void *)((uintptr_t)w - (uintptr_t)map->timer_off);
	/* hrtimer_setup() with a relative mode (bpf_timer_init()'s) puts a CLOCK_REALTIME
	 * timer on the monotonic base, so its BPF_F_TIMER_ABS times are monotonic too */
	t->clock = clockid == CLOCK_REALTIME_ID ? CLOCK_MONOTONIC_ID : (int)clockid;
	t->next = table[bucket_of(w)];
	table[bucket_of(w)] = t;
	pthread_mutex_unlock(&lock);
	return 0;
}

uint64_t brt_helper_timer_set_callback(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);
	const struct brt_prog_maps *pm = bpfrt_run_user(ctx);
	struct brt_obj *prog = pm && pm->magic == BRT_PROG_MAPS_MAGIC ? pm->owner : NULL;
	struct brt_obj *prev = NULL;
	struct tmr *t;

	(void)r3, (void)r4, (void)r5;
	if (!w || !atomic_load(&w[0]))
		return (uint64_t)-EINVAL;
	if (!prog) /* a bare vm run: no program to hold a callback of */
		return (uint64_t)-EOPNOTSUPP;
	pthread_once(&conds_once, conds_init);
	pthread_mutex_lock(&lock);
	t = find(w);
	if (!t) {
		pthread_mutex_unlock(&lock);
		return (uint64_t)-EINVAL; /* initialised by another process (see above) */
	}
	if (t->prog != prog) {
		/* one reference per timer, whichever of the program's functions it calls */
		brt_obj_get(prog);
		brt_obj_named(prog, 1);
		prev = t->prog;
		t->prog = prog;
		atomic_store(&w[1], prog->snap.id);
	}
	t->func = r2;
	pthread_mutex_unlock(&lock);
	if (prev)
		drop(prev);
	return 0;
}

static void *timer_thread(void *arg);

uint64_t brt_helper_timer_start(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);
	struct tmr *t;
	int64_t exp;

	(void)r4, (void)r5;
	if (r3 & ~(uint64_t)(TIMER_ABS | TIMER_CPU_PIN))
		return (uint64_t)-EINVAL;
	if (!w || !atomic_load(&w[0]))
		return (uint64_t)-EINVAL;
	pthread_once(&conds_once, conds_init);
	pthread_mutex_lock(&lock);
	t = find(w);
	if (!t || !t->prog) {
		pthread_mutex_unlock(&lock);
		return (uint64_t)-EINVAL;
	}
	/* hrtimer_start(ns_to_ktime(nsecs)): a relative time adds to now, saturating as
	 * ktime_add_safe() */
	exp = (int64_t)r2;
	if (!(r3 & TIMER_ABS) && __builtin_add_overflow(now_ns(t->clock), exp, &exp))
		exp = INT64_MAX;
	t->expires = exp;
	t->armed = 1;
	if (!thread_started) {
		pthread_t th;
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &a, timer_thread, NULL)) {
			pthread_attr_destroy(&a);
			t->armed = 0;
			pthread_mutex_unlock(&lock);
			return (uint64_t)-ENOMEM;
		}
		pthread_attr_destroy(&a);
		thread_started = 1;
	}
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	return 0;
}

uint64_t brt_helper_timer_cancel(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				 struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);
	struct brt_obj *prog;
	struct tmr *t;
	int ret;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!w || !atomic_load(&w[0]))
		return (uint64_t)-EINVAL;
	pthread_once(&conds_once, conds_init);
	pthread_mutex_lock(&lock);
	t = find(w);
	if (!t) {
		pthread_mutex_unlock(&lock);
		return 0; /* another process's timer: nothing armed here */
	}
	if (running_here == t) {
		/* hrtimer_cancel() from its own callback would wait for itself */
		pthread_mutex_unlock(&lock);
		return (uint64_t)-EDEADLK;
	}
	/* drop_prog_refcnt(): later starts need a new callback */
	prog = t->prog;
	t->prog = NULL;
	atomic_store(&w[1], 0);
	ret = t->armed;
	t->armed = 0;
	/* hrtimer_cancel() waits for a callback running now (never this thread's own: the
	 * one timer thread runs one callback at a time, and it is not t's) */
	if (t->running) {
		t->pins++;
		while (t->running)
			pthread_cond_wait(&done, &lock);
		t->pins--;
		if (t->dead && !t->pins)
			free_tmr(t);
	}
	pthread_mutex_unlock(&lock);
	if (prog)
		drop(prog);
	return (uint64_t)(int64_t)ret;
}

void brt_timer_release(struct brt_map *map, void *value)
{
	_Atomic uint64_t *w;
	struct tmr *t;

	if (map->timer_off < 0)
		return;
	w = (_Atomic uint64_t *)(void *)((unsigned char *)value + map->timer_off);
	/* the caller's bytes never make an initialised timer (copy_map_value() skips it) */
	atomic_store(&w[0], 0);
	atomic_store(&w[1], 0);
	pthread_once(&conds_once, conds_init);
	pthread_mutex_lock(&lock);
	t = find(w);
	if (t)
		release_locked(t);
	pthread_mutex_unlock(&lock);
}

void brt_timer_map_unref(struct brt_map *map)
{
	pthread_once(&conds_once, conds_init);
	pthread_mutex_lock(&lock);
	for (unsigned b = 0; b < BUCKETS; b++) {
		struct tmr *t = table[b], *next;

		for (; t; t = next) {
			next = t->next;
			if (t->map != map)
				continue;
			atomic_store(&t->w[0], 0);
			atomic_store(&t->w[1], 0);
			release_locked(t);
		}
	}
	pthread_mutex_unlock(&lock);
}

/* The armed timer that expired first (NULL: none yet), and in *wait_ns how long until
 * the next one expires (-1: none armed).  Under the lock. */
static struct tmr *next_due(int64_t *wait_ns)
{
	struct tmr *due = NULL;
	int64_t now[MAX_CLOCKS] = { 0 }, best = INT64_MAX, late = 0;
	int jumpy = 0, any = 0;

	for (unsigned b = 0; b < BUCKETS; b++)
		for (struct tmr *t = table[b]; t; t = t->next) {
			int64_t left;

			if (!t->armed)
				continue;
			if (!now[t->clock])
				now[t->clock] = now_ns(t->clock);
			any = 1;
			jumpy |= t->clock != CLOCK_MONOTONIC_ID;
			if (__builtin_sub_overflow(t->expires, now[t->clock], &left))
				left = t->expires < 0 ? INT64_MIN : INT64_MAX;
			if (left <= 0 && (!due || left < late)) {
				due = t;
				late = left;
			}
			if (left < best)
				best = left;
		}
	if (!any)
		*wait_ns = -1;
	else
		*wait_ns = jumpy && best > JUMPY_WAIT_NS ? JUMPY_WAIT_NS : best;
	return due;
}

/* bpf_timer_cb(): run t's callback with (map, key, value).  The entry stays allocated
 * (running) while the lock is dropped; its program is held by our own reference. */
static void fire(struct tmr *t)
{
	struct brt_obj *prog = t->prog;
	uint64_t func = t->func, args[3];
	brt_timer_call_fn fn = __atomic_load_n(&call_fn, __ATOMIC_ACQUIRE);
	struct brt_map *map = t->map;
	uint32_t idx = 0;

	if (!prog || !fn)
		return;
	brt_obj_get(prog);
	t->running = 1;
	pthread_mutex_unlock(&lock);
	args[0] = (uint64_t)(uintptr_t)map;
	if (map->type == BPF_MAP_TYPE_ARRAY) {
		/* the kernel's key: a u32 index on the callback's caller's stack */
		idx = (uint32_t)(((unsigned char *)t->value - (unsigned char *)map->data) /
				 map->value_stride);
		args[1] = (uint64_t)(uintptr_t)&idx;
	} else {
		args[1] = (uint64_t)(uintptr_t)brt_hash_key_of(map, t->value);
	}
	args[2] = (uint64_t)(uintptr_t)t->value;
	/* freed by another process (the words cleared) while armed: nothing to call */
	if (atomic_load(&t->w[0])) {
		running_here = t;
		fn(prog, func, args, map->key_size, map->value_size);
		running_here = NULL;
	}
	brt_obj_put(prog);
	pthread_mutex_lock(&lock);
	t->running = 0;
	pthread_cond_broadcast(&done);
	if (t->dead && !t->pins)
		free_tmr(t);
}

static void *timer_thread(void *arg)
{
	int64_t last_sweep = 0;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		int64_t wait;
		struct tmr *t = next_due(&wait);

		if (t) {
			int64_t now = now_ns(CLOCK_MONOTONIC_ID);

			if (now - last_sweep >= SWEEP_NS) {
				/* maps whose last fd closed lose their timers first (map.c's unref
				 * hook); the sweep takes the object cache's lock, never ours held */
				pthread_mutex_unlock(&lock);
				brt_obj_sweep();
				last_sweep = now;
				pthread_mutex_lock(&lock);
				continue; /* t may be gone */
			}
			t->armed = 0;
			fire(t);
			continue;
		}
		if (wait < 0) {
			pthread_cond_wait(&wake, &lock);
		} else {
			struct timespec ts;
			int64_t at = now_ns(CLOCK_MONOTONIC_ID) + wait;

			ts.tv_sec = (time_t)(at / 1000000000);
			ts.tv_nsec = (long)(at % 1000000000);
			pthread_cond_timedwait(&wake, &lock, &ts);
		}
	}
	return NULL;
}
