/* perf_buffer.c - the consumer side of bpf_perf_event_output(), in the shape of libbpf's
 * perf_buffer: one perf output ring per CPU stored in a BPF_MAP_TYPE_PERF_EVENT_ARRAY at
 * the CPU's index, an epoll set over the rings' wake-up fds, and a reader that hands
 * PERF_RECORD_SAMPLE payloads and PERF_RECORD_LOST counts to the caller's callbacks.
 * Ring layout and wake-ups: src/maps/perf_output.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "util/util.h"

struct pb_ring {
	int fd;                   /* the ring */
	int poll_fd;              /* its wake-up pipe */
	int cpu;
	uint32_t key;             /* its index in the map */
	struct brt_obj *obj;      /* referenced */
	struct brt_perf_walk walk;
};

struct bpfrt_perf_buffer {
	int map_fd;               /* our dup of the map's fd */
	int epoll_fd;
	bpfrt_perf_sample_fn sample_cb;
	bpfrt_perf_lost_fn lost_cb;
	void *ctx;
	size_t n;                 /* rings */
	struct pb_ring *rings;
	struct epoll_event *events; /* n, for epoll_wait */
	struct pb_ring *cur;      /* the ring being read (callbacks name its cpu) */
};

static void *fail(struct bpfrt_perf_buffer *pb, int err)
{
	bpfrt_perf_buffer_free(pb);
	errno = err < 0 ? -err : err;
	return NULL;
}

static int ring_open(struct bpfrt_perf_buffer *pb, struct pb_ring *r, int cpu, uint32_t key,
		     unsigned pages, const struct bpfrt_perf_ring_opts *ro)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	r->cpu = cpu;
	r->key = key;
	r->fd = bpfrt_perf_ring_create(cpu, pages, ro);
	if (r->fd < 0)
		return r->fd;
	r->poll_fd = bpfrt_perf_ring_poll_fd(r->fd);
	if (r->poll_fd < 0)
		return r->poll_fd;
	err = brt_obj_from_fd(r->fd, BRT_OBJ_PERF_RING, &r->obj);
	if (err)
		return err;
	brt_perf_out_walker(r->obj, &r->walk);
	ev.data.ptr = r;
	if (epoll_ctl(pb->epoll_fd, EPOLL_CTL_ADD, r->poll_fd, &ev))
		return -errno;
	err = bpfrt_map_update_elem(pb->map_fd, &key, &r->fd, BPF_ANY);
	if (err)
		brt_print(BPFRT_WARN, "bpfrt: perf buffer: storing cpu %d's ring at index %u: %s\n",
			  cpu, key, strerror(-err));
	return err;
}

struct bpfrt_perf_buffer *bpfrt_perf_buffer_new(int map_fd, size_t page_cnt,
						bpfrt_perf_sample_fn sample_cb,
						bpfrt_perf_lost_fn lost_cb, void *ctx,
						const struct bpfrt_perf_buffer_opts *opts)
{
	struct bpfrt_perf_ring_opts ro = { .sz = sizeof(ro) };
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	struct bpfrt_perf_buffer *pb;
	size_t n;

	if (!brt_opts_valid(opts, offsetof(struct bpfrt_perf_buffer_opts, map_keys) +
					  sizeof(opts->map_keys), "bpfrt_perf_buffer_opts"))
		return fail(NULL, EINVAL);
	if (!sample_cb || !page_cnt || (page_cnt & (page_cnt - 1)) || page_cnt > (1u << 20)) {
		brt_print(BPFRT_WARN, "bpfrt: perf buffer: page count %zu is not a power of two\n",
			  page_cnt);
		return fail(NULL, EINVAL);
	}
	if (BRT_OPTS_GET(opts, cpu_cnt, 0) && !BRT_OPTS_GET(opts, cpus, NULL))
		return fail(NULL, EINVAL);
	if (bpfrt_obj_get_info_by_fd(map_fd, &info, &len))
		return fail(NULL, errno);
	if (info.type != BPF_MAP_TYPE_PERF_EVENT_ARRAY) {
		brt_print(BPFRT_WARN, "bpfrt: perf buffer: map %d is not a perf event array\n",
			  map_fd);
		return fail(NULL, EINVAL);
	}
	ro.wakeup_events = BRT_OPTS_GET(opts, wakeup_events, 0);
	ro.wakeup_watermark = BRT_OPTS_GET(opts, wakeup_watermark, 0);
	n = brt_ncpus() < info.max_entries ? brt_ncpus() : info.max_entries;
	if (BRT_OPTS_GET(opts, cpu_cnt, 0))
		n = opts->cpu_cnt;
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return fail(NULL, ENOMEM);
	pb->map_fd = pb->epoll_fd = -1;
	pb->sample_cb = sample_cb;
	pb->lost_cb = lost_cb;
	pb->ctx = ctx;
	pb->rings = calloc(n, sizeof(*pb->rings));
	pb->events = calloc(n, sizeof(*pb->events));
	if (!pb->rings || !pb->events)
		return fail(pb, ENOMEM);
	pb->map_fd = fcntl(map_fd, F_DUPFD_CLOEXEC, 0);
	pb->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (pb->map_fd < 0 || pb->epoll_fd < 0)
		return fail(pb, errno);
	for (size_t i = 0; i < n; i++) {
		const int *keys = BRT_OPTS_GET(opts, map_keys, NULL);
		int cpu = BRT_OPTS_GET(opts, cpu_cnt, 0) ? opts->cpus[i] : (int)i;
		int err;

		pb->rings[i].fd = pb->rings[i].poll_fd = -1;
		pb->n = i + 1;
		err = ring_open(pb, &pb->rings[i], cpu, keys ? (uint32_t)keys[i] : (uint32_t)i,
				(unsigned)page_cnt, &ro);
		if (err)
			return fail(pb, err);
	}
	return pb;
}

static void on_record(void *arg, const struct perf_event_header *rec)
{
	struct bpfrt_perf_buffer *pb = arg;
	const unsigned char *p = (const unsigned char *)rec;
	uint32_t size;
	uint64_t lost;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		memcpy(&size, p + sizeof(*rec), 4);
		/* a ring another process wrote may lie: the payload stays inside the record */
		if (rec->size < sizeof(*rec) + 4 || size > rec->size - sizeof(*rec) - 4u)
			break;
		pb->sample_cb(pb->ctx, pb->cur->cpu, (void *)(uintptr_t)(p + sizeof(*rec) + 4),
			      size);
		break;
	case PERF_RECORD_LOST:
		if (rec->size < sizeof(*rec) + 16)
			break;
		memcpy(&lost, p + sizeof(*rec) + 8, 8);
		if (pb->lost_cb)
			pb->lost_cb(pb->ctx, pb->cur->cpu, lost);
		break;
	default:
		break;
	}
}

static int ring_consume(struct bpfrt_perf_buffer *pb, struct pb_ring *r)
{
	brt_perf_out_drain(r->obj);
	pb->cur = r;
	return brt_perf_walk(&r->walk, on_record, pb);
}

int bpfrt_perf_buffer_poll(struct bpfrt_perf_buffer *pb, int timeout_ms)
{
	int n, cnt = 0;

	n = epoll_wait(pb->epoll_fd, pb->events, (int)pb->n, timeout_ms);
	if (n < 0) {
		n = -errno;
		errno = -n;
		return n;
	}
	for (int i = 0; i < n; i++)
		cnt += ring_consume(pb, pb->events[i].data.ptr);
	return cnt;
}

int bpfrt_perf_buffer_consume(struct bpfrt_perf_buffer *pb)
{
	int cnt = 0;

	for (size_t i = 0; i < pb->n; i++)
		cnt += ring_consume(pb, &pb->rings[i]);
	return cnt;
}

int bpfrt_perf_buffer_epoll_fd(const struct bpfrt_perf_buffer *pb)
{
	return pb->epoll_fd;
}

size_t bpfrt_perf_buffer_buffer_cnt(const struct bpfrt_perf_buffer *pb)
{
	return pb->n;
}

int bpfrt_perf_buffer_buffer_fd(const struct bpfrt_perf_buffer *pb, size_t i)
{
	if (i >= pb->n) {
		errno = EINVAL;
		return -EINVAL;
	}
	return pb->rings[i].fd;
}

void bpfrt_perf_buffer_free(struct bpfrt_perf_buffer *pb)
{
	if (!pb)
		return;
	for (size_t i = 0; i < pb->n; i++) {
		struct pb_ring *r = &pb->rings[i];
		if (pb->map_fd >= 0 && r->fd >= 0)
			bpfrt_map_delete_elem(pb->map_fd, &r->key);
		if (r->obj)
			brt_obj_put(r->obj);
		if (r->poll_fd >= 0)
			close(r->poll_fd);
		if (r->fd >= 0)
			close(r->fd);
		free(r->walk.bounce);
	}
	if (pb->epoll_fd >= 0)
		close(pb->epoll_fd);
	if (pb->map_fd >= 0)
		close(pb->map_fd);
	free(pb->rings);
	free(pb->events);
	free(pb);
}
