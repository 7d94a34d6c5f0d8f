/* vma.c - bpf_find_vma(task, addr, callback_fn, callback_ctx, flags): the mapping of
 * current's address space that holds addr, handed to a callback of the program, as
 * 6.18's kernel/bpf/task_iter.c answers it.  Every task pointer bpfrt hands out stands
 * for current (bpf_get_current_task_btf's stand-in), whose address space is this
 * process's for a program the host runs, or the process a kernel record names
 * (brt_trace_set_task()): its /proc/PID/maps is the list of mappings.  The callback gets
 * a read-only stand-in of struct vm_area_struct: zeroed but for vm_start and vm_end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "trace/trace.h"
#include "vm/vm.h"

/* 6.18's struct vm_area_struct is 192 bytes on x86-64, vm_start and vm_end its first two
 * words (an anonymous struct in an anonymous union at offset 0); room for growth. */
#define VMA_STAND_IN_SIZE 512

static _Thread_local uint64_t vma_stand_in[VMA_STAND_IN_SIZE / 8];

int brt_vma_find_in(FILE *f, uint64_t addr, uint64_t *start, uint64_t *end)
{
	char line[512];
	int ret = -ENOENT;

	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && lo <= addr && addr < hi) {
			*start = lo;
			*end = hi;
			ret = 0;
			break;
		}
		/* a line longer than the buffer: skip its rest */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	return ret;
}

/* The mapping of process tgid (0: this one) holding addr: 0 with [*start, *end), or
 * -ENOENT (none, or the list cannot be read: the kernel's answer for a task without an
 * mm). */
static int mapping_of(int32_t tgid, uint64_t addr, uint64_t *start, uint64_t *end)
{
	char path[64];
	FILE *f;
	int ret;

	if (tgid > 0)
		snprintf(path, sizeof(path), "/proc/%" PRId32 "/maps", tgid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	ret = brt_vma_find_in(f, addr, start, end);
	fclose(f);
	return ret;
}

uint64_t brt_helper_find_vma(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     struct bpfrt_run_ctx *ctx)
{
	const struct brt_trace_task *cur = brt_trace_get_task();
	uint64_t start, end, args[3];

	if (r5)
		return (uint64_t)-EINVAL;
	if (!r1)
		return (uint64_t)-ENOENT;
	if (mapping_of(cur ? cur->tgid : 0, r2, &start, &end))
		return (uint64_t)-ENOENT;
	memset(vma_stand_in, 0, sizeof(vma_stand_in));
	vma_stand_in[0] = start;
	vma_stand_in[1] = end;
	bpfrt_run_grant(ctx, vma_stand_in, sizeof(vma_stand_in), 0);
	args[0] = r1;
	args[1] = (uint64_t)(uintptr_t)vma_stand_in;
	args[2] = r4;
	/* the callback's return (0 or 1, the verifier's range) is not looked at */
	brt_vm_call_func(ctx, r3, args, 3);
	return 0;
}
