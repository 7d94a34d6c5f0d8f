/* perf_output.c - perf output rings: what bpf_perf_event_output() writes into here, where
 * the kernel writes into a PERF_COUNT_SW_BPF_OUTPUT perf event's mmap'd buffer.  A ring is
 * an object file (kind BRT_OBJ_PERF_RING) laid out as the kernel's perf mmap: a control
 * page (struct perf_event_mmap_page), 2^n data pages, then a page of our own state
 * (producer lock, wake-up rule, lost count, the consumer's pipe).  Producers in any
 * process serialise on the lock, write PERF_RECORD_SAMPLE / PERF_RECORD_LOST records at
 * data_head and publish it with a release store; the consumer reads up to data_head and
 * publishes data_tail, the perf ABI's pairing.  brt_perf_walk() reads records of both
 * kinds of ring (the kernel's in src/trace/perf_ring.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "util/util.h"

#define LOST_SIZE 24u /* header, u64 id, u64 lost */

/* Our page after the data (shared). */
struct ring_ctl {
	_Atomic uint32_t lock;    /* producers serialise on it */
	int32_t cpu;              /* the CPU the ring is for, -1: any */
	uint32_t pages;           /* data pages, a power of two */
	uint32_t wakeup_events;   /* wake every N samples; 0: watermark */
	uint32_t watermark;       /* bytes between wake-ups when wakeup_events is 0 */
	uint32_t events;          /* under lock: samples since the last wake-up */
	uint64_t wake_head;       /* under lock: data_head at the last wake-up */
	uint64_t lost;            /* under lock: samples lost since the last LOST record */
	_Atomic uint32_t pending; /* a wake-up byte is in the pipe (or being written), not
				   * drained yet: later samples need not write another */
	uint32_t pad;
	struct brt_waker waker;   /* the consumer's pipe */
};

struct perf_out {
	struct brt_obj obj;        /* first: a ring is an object */
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;             /* data bytes */
	struct ring_ctl *ctl;
	struct brt_waker_view wake;
};

static struct perf_out *out_of(struct brt_obj *obj)
{
	return (struct perf_out *)(void *)obj;
}

static void out_release(struct brt_obj *obj)
{
	brt_waker_fini(&out_of(obj)->wake);
}

/* Per-process view of a mapped ring; the region was checked by the caller. */
static void out_setup(struct perf_out *r, uint32_t pages)
{
	unsigned char *base = r->obj.base;

	r->meta = (struct perf_event_mmap_page *)(void *)base;
	r->data = base + BRT_PAGE;
	r->size = (uint64_t)pages * BRT_PAGE;
	r->ctl = (struct ring_ctl *)(void *)(base + BRT_PAGE + r->size);
	brt_waker_init(&r->wake, &r->ctl->waker);
	r->obj.release = out_release;
}

static int out_init(struct brt_obj *obj, void *arg)
{
	const struct ring_ctl *params = arg;
	struct perf_out *r = out_of(obj);

	out_setup(r, params->pages);
	r->meta->data_offset = BRT_PAGE;
	r->meta->data_size = r->size;
	r->ctl->cpu = params->cpu;
	r->ctl->pages = params->pages;
	r->ctl->wakeup_events = params->wakeup_events;
	r->ctl->watermark = params->watermark;
	return 0;
}

/* A ring file seen for the first time in this process (BRT_OBJ_PERF_RING's attach
 * callback). */
static int perf_out_attach_obj(const struct brt_obj *tmpl, struct brt_obj **out)
{
	const struct brt_obj_hdr *hdr = &tmpl->snap; /* read once (another process may write) */
	uint32_t pages = hdr->max_entries;
	struct perf_out *r;

	/* a file from another process: only what the header and size imply is trusted */
	if (!pages || (pages & (pages - 1)) || hdr->data_size != ((uint64_t)pages + 2) * BRT_PAGE ||
	    tmpl->size != hdr->data_size + BRT_PAGE)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->obj = *tmpl;
	out_setup(r, pages);
	*out = &r->obj;
	return 0;
}

/* Registered when the library is loaded (src/obj/ names no kind). */
__attribute__((constructor)) static void perf_out_register_kind(void)
{
	brt_obj_set_attach(BRT_OBJ_PERF_RING, perf_out_attach_obj);
}

int brt_perf_out_cpu(const struct brt_obj *obj)
{
	const struct perf_out *r = (const struct perf_out *)(const void *)obj;

	return obj->kind == BRT_OBJ_PERF_RING ? r->ctl->cpu : -1;
}

int bpfrt_perf_ring_create(int cpu, unsigned pages, const struct bpfrt_perf_ring_opts *opts)
{
	struct brt_obj_hdr hdr = { 0 };
	struct ring_ctl params = { 0 };
	struct brt_obj *obj;
	int fd;

	if (!brt_opts_valid(opts, offsetof(struct bpfrt_perf_ring_opts, wakeup_watermark) +
					  sizeof(uint32_t), "bpfrt_perf_ring_opts")) {
		fd = -EINVAL;
		goto out;
	}
	if (cpu < -1 || (cpu >= 0 && (uint32_t)cpu >= brt_ncpus()) || !pages ||
	    (pages & (pages - 1)) || pages > (1u << 20)) {
		brt_print(BPFRT_WARN, "bpfrt: perf ring: %s %d\n",
			  cpu < -1 || (cpu >= 0 && (uint32_t)cpu >= brt_ncpus()) ?
				  "no such cpu" : "pages must be a power of two, got",
			  cpu < -1 || (cpu >= 0 && (uint32_t)cpu >= brt_ncpus()) ? cpu :
										   (int)pages);
		fd = -EINVAL;
		goto out;
	}
	params.cpu = cpu;
	params.pages = pages;
	params.wakeup_events = BRT_OPTS_GET(opts, wakeup_events, 0);
	params.watermark = BRT_OPTS_GET(opts, wakeup_watermark, 0);
	if (!params.wakeup_events && !params.watermark)
		params.wakeup_events = 1;
	hdr.kind = BRT_OBJ_PERF_RING;
	hdr.data_size = ((uint64_t)pages + 2) * BRT_PAGE;
	hdr.max_entries = pages;
	fd = brt_obj_create(&hdr, sizeof(struct perf_out), out_init, &params, &obj);
	if (fd >= 0)
		brt_obj_put(obj);
out:
	if (fd < 0)
		errno = -fd;
	return fd;
}

/* Set pending and write the byte; a byte nobody got (no consumer, or its process is
 * gone) must not leave pending set, or no later sample would wake anyone. */
static void wake(struct perf_out *r)
{
	if (!atomic_exchange_explicit(&r->ctl->pending, 1, memory_order_seq_cst) &&
	    !brt_waker_wake(&r->wake))
		atomic_store_explicit(&r->ctl->pending, 0, memory_order_seq_cst);
}

/* A new consumer's pipe is empty: a pending left by the one before (whose pipe got the
 * byte, unread) is stale, and records it left unread are announced now, as the kernel's
 * poll reports a wake-up that came before the poller.  Clear, then read data_head
 * (seq_cst): a producer that found the stale pending set stored its record before. */
static void announce(struct perf_out *r)
{
	uint64_t head, tail;

	atomic_store_explicit(&r->ctl->pending, 0, memory_order_seq_cst);
	head = atomic_load_explicit((_Atomic uint64_t *)&r->meta->data_head, memory_order_seq_cst);
	tail = atomic_load_explicit((_Atomic uint64_t *)&r->meta->data_tail, memory_order_acquire);
	if (head != tail)
		wake(r);
}

int bpfrt_perf_ring_poll_fd(int ring_fd)
{
	struct brt_obj *obj;
	int ret = brt_obj_from_fd(ring_fd, BRT_OBJ_PERF_RING, &obj);

	if (!ret) {
		ret = brt_waker_poll_fd(&out_of(obj)->wake);
		if (ret >= 0)
			announce(out_of(obj));
		brt_obj_put(obj);
	}
	if (ret < 0)
		errno = -ret;
	return ret;
}

int bpfrt_perf_ring_drain(int ring_fd)
{
	struct brt_obj *obj;
	int ret = brt_obj_from_fd(ring_fd, BRT_OBJ_PERF_RING, &obj);

	if (!ret) {
		brt_perf_out_drain(obj);
		brt_obj_put(obj);
	}
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* Copy n bytes (zeros when src is NULL) to the ring at *head, wrapping. */
static void put(struct perf_out *r, uint64_t *head, const void *src, uint64_t n)
{
	while (n) {
		uint64_t off = *head & (r->size - 1), chunk = r->size - off;

		if (chunk > n)
			chunk = n;
		if (src) {
			memcpy(r->data + off, src, chunk);
			src = (const unsigned char *)src + chunk;
		} else {
			memset(r->data + off, 0, chunk);
		}
		*head += chunk;
		n -= chunk;
	}
}

static void put_header(struct perf_out *r, uint64_t *head, uint32_t type, uint64_t size)
{
	struct perf_event_header h = { .type = type, .size = (uint16_t)size };

	/* the kernel marks samples of BPF output with the mode of the registers it passed;
	 * a program here always runs "in the kernel" of this runtime */
	if (type == PERF_RECORD_SAMPLE)
		h.misc = PERF_RECORD_MISC_KERNEL;
	put(r, head, &h, sizeof(h));
}

/* The wake-up rule of perf_output_end(): every wakeup_events samples, or once watermark
 * bytes accumulated.  Called under the lock. */
static int due(struct ring_ctl *ctl, uint64_t head)
{
	if (ctl->wakeup_events) {
		if (++ctl->events < ctl->wakeup_events)
			return 0;
		ctl->events = 0;
		return 1;
	}
	if (head - ctl->wake_head < ctl->watermark)
		return 0;
	ctl->wake_head = head;
	return 1;
}

int brt_perf_out_write(struct brt_obj *ring, uint32_t cpu, const void *meta, uint32_t meta_size,
		       const void *extra, uint32_t extra_size)
{
	struct perf_out *r = out_of(ring);
	uint64_t raw = BRT_ROUND8(4ull + meta_size + extra_size) - 4;
	uint64_t size = sizeof(struct perf_event_header) + 4 + raw, head, tail, need;
	uint32_t raw32 = (uint32_t)raw;
	int32_t ring_cpu = r->ctl->cpu;
	int wake_due;

	if (ring_cpu >= 0 && (uint32_t)ring_cpu != cpu)
		return -EOPNOTSUPP;
	/* header.size is 16 bits; the kernel would write a record it cannot describe */
	if (size > 0xfff8)
		return -E2BIG;
	brt_shm_lock(&r->ctl->lock);
	head = atomic_load_explicit((_Atomic uint64_t *)&r->meta->data_head, memory_order_relaxed);
	tail = atomic_load_explicit((_Atomic uint64_t *)&r->meta->data_tail, memory_order_acquire);
	need = size + (r->ctl->lost ? LOST_SIZE : 0);
	/* the kernel's CIRC_SPACE(): a ring is full one byte short of its size, so head
	 * never catches up with tail; a consumer that wrote a data_tail ahead of data_head
	 * makes head - tail huge: full too */
	if (head - tail >= r->size || need >= r->size - (head - tail)) {
		r->ctl->lost++;
		brt_shm_unlock(&r->ctl->lock);
		return -ENOSPC;
	}
	if (r->ctl->lost) {
		uint64_t rec[2] = { r->obj.snap.id, r->ctl->lost };

		put_header(r, &head, PERF_RECORD_LOST, LOST_SIZE);
		put(r, &head, rec, sizeof(rec));
		r->ctl->lost = 0;
	}
	put_header(r, &head, PERF_RECORD_SAMPLE, size);
	put(r, &head, &raw32, 4);
	put(r, &head, meta, meta_size);
	put(r, &head, extra, extra_size);
	put(r, &head, NULL, raw - meta_size - extra_size);
	/* seq_cst, as the pending exchange below: with the consumer's clear of pending and
	 * its read of data_head (brt_perf_out_drain) they form a Dekker pair, so a sample is
	 * either seen by the reader or announced by a byte in its pipe */
	atomic_store_explicit((_Atomic uint64_t *)&r->meta->data_head, head, memory_order_seq_cst);
	wake_due = due(r->ctl, head);
	brt_shm_unlock(&r->ctl->lock);
	if (wake_due && brt_waker_armed(&r->wake))
		wake(r);
	return 0;
}

/* Consumer side of the wake-up: empty the pipe, clear pending, then read data_head.  In
 * this order: a producer that sets pending after our clear writes its byte after the
 * pipe was emptied, so it stays for the next poll; one that found pending still set
 * stored data_head before our clear, so our read sees its record.  (Clearing first let
 * the drain swallow a byte written between the clear and the read while pending stayed
 * set: no later sample wrote one, and the consumer slept on unread records.) */
void brt_perf_out_drain(struct brt_obj *ring)
{
	struct perf_out *r = out_of(ring);

	brt_waker_drain(&r->wake);
	atomic_store_explicit(&r->ctl->pending, 0, memory_order_seq_cst);
	/* the seq_cst read of the Dekker pair; the walk's acquire load sees this or later */
	(void)atomic_load_explicit((_Atomic uint64_t *)&r->meta->data_head, memory_order_seq_cst);
}

/* The ring's records as brt_perf_walk() reads them. */
void brt_perf_out_walker(struct brt_obj *ring, struct brt_perf_walk *w)
{
	struct perf_out *r = out_of(ring);

	w->meta = r->meta;
	w->data = r->data;
	w->size = r->size;
}

const struct perf_event_header *brt_perf_peek(struct brt_perf_walk *w, uint64_t tail,
					     uint64_t head, uint64_t *next)
{
	uint64_t off = tail & (w->size - 1);
	struct perf_event_header h;
	size_t first;

	if (tail >= head)
		return NULL;
	/* records are 8-byte aligned, so a header never straddles the end */
	memcpy(&h, w->data + off, sizeof(h));
	if (h.size < sizeof(h) || h.size > head - tail || h.size > w->size)
		return NULL; /* a corrupt ring: stop rather than loop or read past it */
	*next = tail + h.size;
	if (off + h.size <= w->size)
		return (const void *)(w->data + off);
	first = (size_t)(w->size - off);
	if (w->bounce_len < h.size) {
		void *b = realloc(w->bounce, h.size);

		if (!b)
			return NULL;
		w->bounce = b;
		w->bounce_len = h.size;
	}
	memcpy(w->bounce, w->data + off, first);
	memcpy((uint8_t *)w->bounce + first, w->data, h.size - first);
	return w->bounce;
}

int brt_perf_walk(struct brt_perf_walk *w,
		  void (*cb)(void *arg, const struct perf_event_header *rec), void *arg)
{
	uint64_t head = __atomic_load_n(&w->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&w->meta->data_tail, __ATOMIC_RELAXED), next = 0;
	const struct perf_event_header *rec;
	int n = 0;

	/* positions more than the ring apart were not written by a producer (the control
	 * page is shared with whoever can write the file): nothing to read */
	if (head - tail > w->size)
		return 0;
	while ((rec = brt_perf_peek(w, tail, head, &next))) {
		cb(arg, rec);
		tail = next;
		n++;
	}
	__atomic_store_n(&w->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
