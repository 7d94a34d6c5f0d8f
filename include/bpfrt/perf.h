/* bpfrt/perf.h - where bpf_perf_event_output() writes: perf output rings (user-space
 * stand-ins for the kernel's PERF_COUNT_SW_BPF_OUTPUT events, with the kernel's perf mmap
 * layout) that a BPF_MAP_TYPE_PERF_EVENT_ARRAY holds, and a consumer in the style of
 * libbpf's perf_buffer.  Included by <bpfrt.h>.
 */
#ifndef BPFRT_PERF_H
#define BPFRT_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- perf output rings ------------------------------------------------------------------ */

struct bpfrt_perf_ring_opts {
	size_t sz;
	/* wake the poller every wakeup_events samples (the perf_event_attr field); 0 and
	 * no watermark: 1, as libbpf's perf_buffer asks for */
	uint32_t wakeup_events;
	/* instead: wake once this many bytes were written since the last wake-up */
	uint32_t wakeup_watermark;
};
#define bpfrt_perf_ring_opts__last wakeup_watermark

/* Create a ring of pages data pages (a power of two) for cpu (0 .. CPUs - 1, or -1 for
 * a ring any CPU may write, like a perf event of this task).  The returned fd (O_CLOEXEC)
 * goes into a perf event array as BPF_MAP_UPDATE_ELEM's value, where the kernel takes a
 * perf_event_open() fd; bpf_perf_event_output() from a program running on another CPU
 * than the ring's gets -EOPNOTSUPP, as in the kernel.  mmap() of (1 + pages) pages of the
 * fd shows the kernel's layout: struct perf_event_mmap_page (data_head, data_tail,
 * data_offset, data_size), then the data pages holding PERF_RECORD_SAMPLE records with
 * PERF_SAMPLE_RAW ({ u32 size; data padded so the record is a multiple of 8 }) and
 * PERF_RECORD_LOST records.  Producers may be other processes (the ring is a shared
 * file).  Returns the fd or -errno: EINVAL (cpu, pages, opts), ENOMEM. */
BPFRT_API int bpfrt_perf_ring_create(int cpu, unsigned pages,
				     const struct bpfrt_perf_ring_opts *opts);

/* An fd that polls readable (poll, select, epoll: POLLIN) after a producer, in any
 * process, wrote the samples its wake-up rule counts; reading the ring's records
 * (bpfrt_perf_buffer_*) clears it.  A pipe's read end: close() it.  One consumer
 * process per ring is woken (the last to ask).  Returns the fd or -errno (EBADF; EINVAL:
 * not a perf output ring). */
BPFRT_API int bpfrt_perf_ring_poll_fd(int ring_fd);

/* For a consumer that reads the ring's mmap itself (libbpf's perf_buffer through
 * libbpfrt-preload.so): after its poll fd woke, before reading data_head, re-arm the
 * wake-up (producers write one byte per wake-up until the consumer drains) and empty the
 * poll fd.  0 or -errno (EBADF; EINVAL: not a perf output ring). */
BPFRT_API int bpfrt_perf_ring_drain(int ring_fd);

/* ---- consumer (libbpf's perf_buffer) ------------------------------------------------------ */

struct bpfrt_perf_buffer;

/* A sample's raw data (size: the PERF_SAMPLE_RAW size, padding included; the data is only
 * 4-byte aligned, as in the kernel's records: memcpy() it out), and samples lost because a
 * ring was full. */
typedef void (*bpfrt_perf_sample_fn)(void *ctx, int cpu, void *data, uint32_t size);
typedef void (*bpfrt_perf_lost_fn)(void *ctx, int cpu, uint64_t cnt);

struct bpfrt_perf_buffer_opts {
	size_t sz;
	uint32_t wakeup_events;    /* as in struct bpfrt_perf_ring_opts */
	uint32_t wakeup_watermark;
	/* cpu_cnt > 0: rings only for cpus[0 .. cpu_cnt) (-1: any CPU), stored at
	 * map_keys[i] (NULL: at the CPU's index), as libbpf's perf_buffer__new_raw() */
	uint32_t cpu_cnt;
	const int *cpus;
	const int *map_keys;
};
#define bpfrt_perf_buffer_opts__last map_keys

/* Create one ring of page_cnt pages (a power of two) for every CPU (up to the map's
 * max_entries) and store it in the perf event array map_fd at index cpu (replacing what
 * was there), as libbpf's perf_buffer__new() does; opts may name the CPUs and indexes.
 * sample_cb gets each sample, lost_cb (may be NULL) each PERF_RECORD_LOST.  Returns NULL with errno: EINVAL (not a perf event
 * array, page_cnt, opts), EBADF, ENOMEM, or the map update's errno. */
BPFRT_API struct bpfrt_perf_buffer *
bpfrt_perf_buffer_new(int map_fd, size_t page_cnt, bpfrt_perf_sample_fn sample_cb,
		      bpfrt_perf_lost_fn lost_cb, void *ctx,
		      const struct bpfrt_perf_buffer_opts *opts);

/* Wait up to timeout_ms (-1: forever) for a ring to be woken, then hand the records of
 * the woken rings to the callbacks.  Returns the number of records handled (0 on
 * timeout) or -errno (EINTR when a signal came). */
BPFRT_API int bpfrt_perf_buffer_poll(struct bpfrt_perf_buffer *pb, int timeout_ms);
/* Hand every record of every ring to the callbacks without waiting; count or -errno. */
BPFRT_API int bpfrt_perf_buffer_consume(struct bpfrt_perf_buffer *pb);
/* The epoll fd bpfrt_perf_buffer_poll() waits on (to put into another event loop). */
BPFRT_API int bpfrt_perf_buffer_epoll_fd(const struct bpfrt_perf_buffer *pb);
/* Number of rings, and ring i's fd (its map index is its CPU); -EINVAL when out of range. */
BPFRT_API size_t bpfrt_perf_buffer_buffer_cnt(const struct bpfrt_perf_buffer *pb);
BPFRT_API int bpfrt_perf_buffer_buffer_fd(const struct bpfrt_perf_buffer *pb, size_t i);
/* Remove the rings from the map (the slots that still hold them) and free everything. */
BPFRT_API void bpfrt_perf_buffer_free(struct bpfrt_perf_buffer *pb);

#ifdef __cplusplus
}
#endif

#endif
