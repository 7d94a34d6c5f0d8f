/* perf_ring.c - one perf_event_open() event with its mmap'd ring: the kernel writes
 * records after the control page and moves data_head; brt_perf_walk() (src/maps, which
 * reads bpfrt's own perf output rings the same way) hands them on and moves data_tail.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/trace.h"

#define PAGE 4096u

int brt_perf_ring_open(struct perf_event_attr *attr, int pid, int cpu, unsigned pages,
		       struct brt_perf_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->map_len = (size_t)(pages + 1) * PAGE;
	r->base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		int err = -errno;

		close(r->fd);
		r->fd = -1;
		r->base = NULL;
		return err;
	}
	r->walk.meta = r->base;
	r->walk.data = (uint8_t *)r->base +
		       (r->walk.meta->data_offset ? r->walk.meta->data_offset : PAGE);
	r->walk.size = r->walk.meta->data_size ? r->walk.meta->data_size : (uint64_t)pages * PAGE;
	return 0;
}

void brt_perf_ring_close(struct brt_perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	free(r->walk.bounce);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int brt_perf_ring_drain(struct brt_perf_ring *r,
			void (*cb)(void *arg, const struct perf_event_header *rec), void *arg)
{
	return brt_perf_walk(&r->walk, cb, arg);
}
