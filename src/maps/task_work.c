/* task_work.c - Linux 6.18's task works (kernel/bpf/helpers.c's
 * bpf_task_work_schedule_signal_impl / _resume_impl): a program schedules a callback of
 * its own on a map value's struct bpf_task_work, to run later in a task's context with
 * (map, key, value).
 *
 * What "later" is in user space.  The kernel queues the work on the target task, which
 * runs it when it next returns to user space (resume) or at once after a signal wakes it
 * (signal).  A bpfrt program runs on a thread of the process that runs it, which returns
 * to its caller when the run ends: the callback runs on that same thread at the end of
 * the run that scheduled it (brt_vm_run_opts() calls brt_task_work_run_pending()), before
 * BPF_PROG_TEST_RUN or the hook that ran the program returns, whatever task the call
 * named and for both modes.  So a value's work is pending (-EBUSY) only within that run,
 * and a second program run (a test run's repeat) schedules it again where the kernel's
 * would still be pending until the syscall returns.  Callbacks that schedule more works
 * run them in the same drain, as the kernel's task_work_run() loops.
 *
 * The value holds no pointer (other processes map it): the struct bpf_task_work's word
 * is a token this process drew when it scheduled the work (its pid and a count, never 0),
 * and the entry in this process's pending list that carries the token holds the program
 * (the callback's), the map and the value.  A value written meanwhile (an update from
 * user space or a program, a delete whose element is reused) has another word: the work
 * was cancelled (bpf_task_work_cancel_and_free()) and does not run.  After its callback
 * the word goes back to 0, ready for another schedule (BPF_TW_STANDBY).  Not as the
 * kernel: another process's pending work on a shared value is not seen (no -EBUSY).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "vm/vm.h"

struct work {
	struct work *next;
	pthread_t thread;          /* the thread whose run scheduled it, which runs it */
	_Atomic uint64_t *w;       /* the value's struct bpf_task_work in this process */
	uint64_t token;            /* what *w holds while the work is pending */
	struct brt_obj *prog;      /* referenced */
	uint64_t func;             /* the callback's instruction index */
	struct brt_map *map;       /* referenced */
	void *value;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct work *head, **tail = &head;
static uint64_t seq;
static brt_timer_call_fn call_fn;
static _Thread_local int draining;

void brt_task_work_set_call(brt_timer_call_fn fn)
{
	__atomic_store_n(&call_fn, fn, __ATOMIC_RELEASE);
}

/* Is the work on w pending (an entry carrying the word's token)?  Lock held. */
static int pending(_Atomic uint64_t *w)
{
	uint64_t now = atomic_load(w);

	for (struct work *k = head; k && now; k = k->next)
		if (k->w == w && k->token == now)
			return 1;
	return 0;
}

/* The value the word belongs to, when it is one of map's (this process's mapping) */
static void *value_of(struct brt_map *map, uint64_t tw)
{
	unsigned char *v = (unsigned char *)(uintptr_t)tw - map->task_work_off;
	unsigned char *data = map->data;

	if (v < data || v + map->value_size > data + map->data_size)
		return NULL;
	if (map->type == BPF_MAP_TYPE_ARRAY) {
		size_t at = (size_t)(v - data);

		if (at % map->value_stride || at / map->value_stride >= map->max_entries)
			return NULL;
		return v;
	}
	return brt_hash_key_of(map, v) ? v : NULL;
}

uint64_t brt_task_work_schedule(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)(uintptr_t)r2;
	struct brt_map *map = brt_map_helper_arg(r3, ctx);
	const struct brt_prog_maps *pm = bpfrt_run_user(ctx);
	struct brt_obj *prog = pm && pm->magic == BRT_PROG_MAPS_MAGIC ? pm->owner : NULL;
	struct work *k;
	void *value;

	if (!r1 || !w || (r2 & 7) || (ctx->checked && !bpfrt_run_access_ok(ctx, w, 8, 1)))
		return (uint64_t)-EINVAL;
	/* a map other than the value's (the verifier lets a __map without a task work
	 * through) or a bare vm run without a program to call back */
	if (!map || map->task_work_off < 0 || !(value = value_of(map, r2)))
		return (uint64_t)-EINVAL;
	if (!prog)
		return (uint64_t)-EOPNOTSUPP;
	k = calloc(1, sizeof(*k));
	if (!k)
		return (uint64_t)-ENOMEM;
	pthread_mutex_lock(&lock);
	if (pending(w)) {
		pthread_mutex_unlock(&lock);
		free(k);
		return (uint64_t)-EBUSY;
	}
	k->token = ((uint64_t)(uint32_t)getpid() << 32) | (uint32_t)++seq;
	k->token |= !k->token;
	k->thread = pthread_self();
	k->w = w;
	k->prog = prog;
	k->func = r4;
	k->map = map;
	k->value = value;
	brt_obj_get(prog);
	brt_map_get(map);
	atomic_store(w, k->token);
	*tail = k;
	tail = &k->next;
	pthread_mutex_unlock(&lock);
	atomic_fetch_add(&brt_vm_after_run_due, 1);
	return 0;
}

/* The next work of this thread, taken off the list, or NULL */
static struct work *take_mine(void)
{
	pthread_t me = pthread_self();
	struct work **p, *k = NULL;

	pthread_mutex_lock(&lock);
	for (p = &head; *p; p = &(*p)->next)
		if (pthread_equal((*p)->thread, me)) {
			k = *p;
			*p = k->next;
			if (tail == &k->next)
				tail = p;
			break;
		}
	pthread_mutex_unlock(&lock);
	return k;
}

/* bpf_task_work_callback(): run each work of this thread whose word still holds its
 * token, with (map, key, value); an array's key is a u32 index, a hash map's the
 * element's key */
void brt_task_work_run_pending(void)
{
	brt_timer_call_fn fn = __atomic_load_n(&call_fn, __ATOMIC_ACQUIRE);
	struct work *k;

	if (draining)
		return; /* the outer drain takes what a callback scheduled */
	draining = 1;
	while ((k = take_mine())) {
		uint64_t args[3], token = k->token;
		uint32_t idx = 0;

		args[0] = (uint64_t)(uintptr_t)k->map;
		if (k->map->type == BPF_MAP_TYPE_ARRAY) {
			idx = (uint32_t)(((unsigned char *)k->value - (unsigned char *)k->map->data) /
					 k->map->value_stride);
			args[1] = (uint64_t)(uintptr_t)&idx;
		} else {
			args[1] = (uint64_t)(uintptr_t)brt_hash_key_of(k->map, k->value);
		}
		args[2] = (uint64_t)(uintptr_t)k->value;
		if (fn && args[1] && atomic_load(k->w) == token) {
			fn(k->prog, k->func, args, k->map->key_size, k->map->value_size);
			/* BPF_TW_RUNNING -> BPF_TW_STANDBY, unless written meanwhile */
			atomic_compare_exchange_strong(k->w, &token, 0);
		}
		brt_obj_put(k->prog);
		brt_map_put(k->map);
		free(k);
		atomic_fetch_sub(&brt_vm_after_run_due, 1);
	}
	draining = 0;
}

__attribute__((constructor)) static void task_work_register(void)
{
	brt_vm_set_after_run(brt_task_work_run_pending);
}
