/* timer.c - the bpf_timer helpers (kernel/bpf/helpers.c's bpf_timer_init, _set_callback,
 * _start, _cancel) on a map value's struct bpf_timer, with the kernel's answers for the
 * timer's state: init once (-EBUSY after), a callback only on an initialised timer, start
 * only with a callback, cancel of a timer never initialised -EINVAL.  The state lives in
 * the value's 16 bytes (the value is shared memory: numbers, no pointers): word 0 the
 * clock id + 1 once initialised, word 1 the callback + 1 once set (cleared by cancel, as
 * the kernel drops the program there).  What is not built: callbacks never run, so
 * bpf_timer_start answers -EOPNOTSUPP where the kernel arms the timer (a timer thread per
 * runtime must first be able to run a function of a loaded program outside a run).
 * The verifier's side (the value's bpf_timer found from the map's BTF, the async callback
 * walked on its own) is verifier/helper_timer.c's.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define CLOCK_REALTIME_ID 0
#define CLOCK_MONOTONIC_ID 1
#define CLOCK_BOOTTIME_ID 7
#define MAX_CLOCKS 16
#define TIMER_ABS 1u     /* BPF_F_TIMER_ABS */
#define TIMER_CPU_PIN 2u /* BPF_F_TIMER_CPU_PIN */

/* The timer's two words, or NULL when a checked run may not write them (an unverified
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
	uint64_t clockid = r3 & (MAX_CLOCKS - 1), none = 0;

	(void)r2, (void)r4, (void)r5;
	if (r3 >= MAX_CLOCKS || (clockid != CLOCK_MONOTONIC_ID && clockid != CLOCK_REALTIME_ID &&
				 clockid != CLOCK_BOOTTIME_ID))
		return (uint64_t)-EINVAL;
	if (!w)
		return (uint64_t)-EINVAL;
	if (!atomic_compare_exchange_strong(&w[0], &none, clockid + 1))
		return (uint64_t)-EBUSY;
	atomic_store(&w[1], 0);
	return 0;
}

uint64_t brt_helper_timer_set_callback(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);

	(void)r3, (void)r4, (void)r5;
	if (!w || !atomic_load(&w[0]))
		return (uint64_t)-EINVAL;
	atomic_store(&w[1], r2 + 1);
	return 0;
}

uint64_t brt_helper_timer_start(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);

	(void)r2, (void)r4, (void)r5;
	if (r3 & ~(uint64_t)(TIMER_ABS | TIMER_CPU_PIN))
		return (uint64_t)-EINVAL;
	if (!w || !atomic_load(&w[0]) || !atomic_load(&w[1]))
		return (uint64_t)-EINVAL;
	return (uint64_t)-EOPNOTSUPP; /* no timer thread runs callbacks yet (see above) */
}

uint64_t brt_helper_timer_cancel(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				 struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *w = timer_words(r1, ctx);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!w || !atomic_load(&w[0]))
		return (uint64_t)-EINVAL;
	/* the kernel drops the program: a new start needs a new callback */
	atomic_store(&w[1], 0);
	return 0; /* never armed here: hrtimer_cancel()'s 0 */
}
