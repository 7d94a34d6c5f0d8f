/* iter.c - the open-coded iterators of src/vm/kfuncs.def as user space runs them (the
 * verifier's side is verifier/iter.c): the state lives in the program's struct
 * bpf_iter_<type> on its stack, which _new() fills, _next() advances and _destroy()
 * clears.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bpfrt.h"
#include "helpers/helpers.h"

/* kernel/bpf/bpf_iter.c's BPF_MAX_LOOPS: the most numbers one iterator hands out */
#define MAX_LOOPS (8 * 1024 * 1024)

/* struct bpf_iter_num (8 bytes) as the kernel lays it out (bpf_iter_num_kern): the last
 * number handed out and the end of the range */
struct iter_num {
	int32_t cur;
	int32_t end;
};

static struct iter_num *num_of(uint64_t it, struct bpfrt_run_ctx *rc)
{
	struct iter_num *s = (struct iter_num *)(uintptr_t)it;

	return bpfrt_run_access_ok(rc, s, sizeof(*s), 1) ? s : NULL;
}

/* bpf_iter_num_new(it, start, end): [start, end); an empty range is fine, a reversed one
 * -EINVAL and one of more than MAX_LOOPS numbers -E2BIG, both leaving an iterator that
 * returns nothing.  _next() adds one before it hands out, so cur starts one below. */
uint64_t brt_kfunc_bpf_iter_num_new(uint64_t it, uint64_t start, uint64_t end, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *rc)
{
	struct iter_num *s = num_of(it, rc);
	int32_t a = (int32_t)start, b = (int32_t)end;

	(void)r4, (void)r5;
	if (!s)
		return (uint64_t)(uint32_t)-EFAULT;
	if (a > b || (int64_t)b - (int64_t)a > MAX_LOOPS) {
		s->cur = s->end = 0;
		return (uint64_t)(uint32_t)(a > b ? -EINVAL : -E2BIG);
	}
	s->cur = (int32_t)((int64_t)a - 1);
	s->end = b;
	return 0;
}

/* bpf_iter_num_next(it): a pointer to the next number, or NULL once the range is done
 * (and from then on: the iterator is emptied) */
uint64_t brt_kfunc_bpf_iter_num_next(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *rc)
{
	struct iter_num *s = num_of(it, rc);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!s)
		return 0;
	if ((int64_t)s->cur + 1 >= (int64_t)s->end) {
		s->cur = s->end = 0;
		return 0;
	}
	s->cur++;
	return (uint64_t)(uintptr_t)&s->cur;
}

uint64_t brt_kfunc_bpf_iter_num_destroy(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *rc)
{
	struct iter_num *s = num_of(it, rc);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (s)
		s->cur = s->end = 0;
	return 0;
}

/* include/linux/cgroup.h's CSS_TASK_ITER_PROCS and _THREADED */
#define CSS_TASK_ITER_PROCS 1u
#define CSS_TASK_ITER_THREADED 2u

/* bpf_iter_css_task_new(it, css, flags): the kernel walks the css's css_set list of
 * tasks.  A css in bpfrt is part of a cgroup stand-in (kfuncs.c: bpf_cgroup_from_id()
 * finds the cgroup but hands out zeroed memory), which names no tasks, so the walk is
 * empty: the flags are checked as the kernel checks them, then _next() answers NULL.
 * (The programs the corpus has, iter/cgroup and LSM, load but do not run in bpfrt.) */
uint64_t brt_kfunc_bpf_iter_css_task_new(uint64_t it, uint64_t css, uint64_t flags,
					 uint64_t r4, uint64_t r5, struct bpfrt_run_ctx *rc)
{
	uint64_t *s = (uint64_t *)(uintptr_t)it;

	(void)css, (void)r4, (void)r5;
	if (!bpfrt_run_access_ok(rc, s, sizeof(*s), 1))
		return (uint64_t)(uint32_t)-EFAULT;
	*s = 0;
	switch ((uint32_t)flags) {
	case CSS_TASK_ITER_PROCS | CSS_TASK_ITER_THREADED:
	case CSS_TASK_ITER_PROCS:
	case 0:
		return 0;
	default:
		return (uint64_t)(uint32_t)-EINVAL;
	}
}

uint64_t brt_kfunc_bpf_iter_css_task_next(uint64_t it, uint64_t r2, uint64_t r3, uint64_t r4,
					  uint64_t r5, struct bpfrt_run_ctx *rc)
{
	(void)it, (void)r2, (void)r3, (void)r4, (void)r5, (void)rc;
	return 0;
}

uint64_t brt_kfunc_bpf_iter_css_task_destroy(uint64_t it, uint64_t r2, uint64_t r3,
					     uint64_t r4, uint64_t r5, struct bpfrt_run_ctx *rc)
{
	uint64_t *s = (uint64_t *)(uintptr_t)it;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (bpfrt_run_access_ok(rc, s, sizeof(*s), 1))
		*s = 0;
	return 0;
}
