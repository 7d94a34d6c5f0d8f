/* perf_ring.c - one perf_event_open() event with its mmap'd ring: the kernel writes
 * records after the control page and moves data_head; we read from data_tail, hand each
 * record on (copying the ones that wrap past the end into a bounce buffer) and move
 * data_tail, with the acquire/release pairing the perf ABI asks for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/trace.h"

#define PAGE 4096u

int brt_perf_ring_open(struct perf_event_attr *attr, int cpu, unsigned pages,
		       struct brt_perf_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
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
	r->meta = r->base;
	r->data = (uint8_t *)r->base + (r->meta->data_offset ? r->meta->data_offset : PAGE);
	r->size = r->meta->data_size ? r->meta->data_size : (uint64_t)pages * PAGE;
	return 0;
}

void brt_perf_ring_close(struct brt_perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	free(r->bounce);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int brt_perf_ring_drain(struct brt_perf_ring *r,
			void (*cb)(void *arg, const struct perf_event_header *rec), void *arg)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int n = 0;

	while (tail < head) {
		uint64_t off = tail % r->size;
		struct perf_event_header h;
		const struct perf_event_header *rec;

		/* records are 8-byte aligned, so a header never straddles the end */
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* a corrupt ring: stop rather than loop */
		if (off + h.size <= r->size) {
			rec = (const void *)(r->data + off);
		} else {
			size_t first = (size_t)(r->size - off);

			if (r->bounce_len < h.size) {
				void *b = realloc(r->bounce, h.size);

				if (!b)
					break;
				r->bounce = b;
				r->bounce_len = h.size;
			}
			memcpy(r->bounce, r->data + off, first);
			memcpy((uint8_t *)r->bounce + first, r->data, h.size - first);
			rec = r->bounce;
		}
		cb(arg, rec);
		tail += h.size;
		n++;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
