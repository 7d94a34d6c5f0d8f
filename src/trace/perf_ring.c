/* perf_ring.c - one perf_event_open() event with its mmap'd ring: the kernel writes
 * records after the control page and moves data_head; brt_perf_peek() (src/maps, which
 * reads bpfrt's own perf output rings the same way) reads them and data_tail moves past.
 * And what a link thread that reads a set of such rings does (tracepoint.c, kprobe.c): the
 * loop over them, and the program's run on each record.
 *
 * Order: the kernel runs a program at the event, so a task's events reach it in the order
 * they happened, whichever CPUs they happened on.  Here the events of one source go to a
 * ring per CPU, and a task that moved between CPUs left its records in several rings;
 * reading the rings one after the other ran a later event first (session 13: a record of
 * CPU 0 before an earlier one of CPU 1, the stack_oracle flake).  So samples carry their
 * time (PERF_SAMPLE_TIME on CLOCK_MONOTONIC) and the rings are merged: the oldest record
 * first.  A record can become visible after a newer one of another ring was read (the
 * reader saw that ring's head first); a round therefore takes only records stamped before
 * the clock it read before the heads, and every record stamped earlier than one the round
 * read was already visible (one task's next event comes after its previous record was
 * published); a record stamped later waits for the next round, which follows at once.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "trace/trace.h"
#include "util/util.h"
#include "vm/vm.h"

#define PAGE 4096u
#define POLL_MS 50 /* drain at least this often (wakeups come per watermark) */
#define MAX_WARN 5 /* run faults printed per link */

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

void brt_perf_attr_sample(struct perf_event_attr *attr)
{
	attr->sample_type |= PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	/* names of the tasks, for those gone before their records run (task.c) */
	attr->comm = 1;
	attr->task = 1;
	attr->sample_id_all = 1; /* their time, for the merge (rec_time()) */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

int brt_perf_source_open(struct brt_perf_source *ps, struct perf_event_attr *attr, int pid,
			 int cpu_only, unsigned pages, const char *what)
{
	long ncpu = pid == -1 && cpu_only < 0 ? sysconf(_SC_NPROCESSORS_CONF) : 1;
	int err = -ENODEV;

	if (ncpu < 1)
		ncpu = 1;
	ps->rings = calloc((size_t)ncpu, sizeof(*ps->rings));
	if (!ps->rings)
		return -ENOMEM;
	for (long cpu = 0; cpu < ncpu; cpu++) {
		int on = cpu_only >= 0 ? cpu_only : pid == -1 ? (int)cpu : -1;
		int e = brt_perf_ring_open(attr, pid, on, pages, &ps->rings[ps->nrings]);

		if (!e)
			ps->nrings++;
		else if (pid != -1 || cpu_only >= 0 || (e != -ENODEV && e != -EINVAL))
			err = e;
	}
	if (ps->nrings)
		return 0;
	brt_print(BPFRT_WARN, "bpfrt: perf_event_open of %s failed: %s\n", what, strerror(-err));
	return err;
}

void brt_perf_source_free(struct brt_perf_source *ps)
{
	for (int i = 0; i < ps->nrings; i++)
		brt_perf_ring_close(&ps->rings[i]);
	free(ps->rings);
	free(ps);
}

void brt_perf_source_detach(struct brt_link *link)
{
	brt_perf_source_free(link->priv);
}

/* PERF_RECORD_SAMPLE for brt_perf_attr_sample()'s fields: what every source's samples
 * start with */
struct sample {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t time; /* CLOCK_MONOTONIC ns */
	uint32_t cpu, res;
	/* with PERF_SAMPLE_CALLCHAIN: u64 nr, nr u64 ips; then the source's own fields */
};

/* What the link thread's drain hands each record to. */
struct drain {
	struct brt_link *link;
	struct brt_perf_source *ps;
};

/* A sample of at least its minimum size: its task and call chain, then on_sample with
 * the source's fields (a chain that leaves less than min_tail bytes drops the sample). */
static void hand_on(struct brt_perf_source *ps, const struct perf_event_header *rec)
{
	const struct sample *s = (const void *)rec;
	struct brt_trace_task task = { .pid = (int32_t)s->tid, .tgid = (int32_t)s->pid,
				       .cpu = s->cpu };
	const uint8_t *p = (const uint8_t *)(s + 1), *end = (const uint8_t *)rec + rec->size;
	uint64_t nr;

	if (ps->chain) {
		memcpy(&nr, p, 8);
		if (nr > (uint64_t)(end - p - 8 - ps->min_tail) / 8)
			return;
		task.chain = (const uint64_t *)(p + 8);
		task.chain_nr = (uint32_t)nr;
		p += 8 + nr * 8;
	}
	ps->on_sample(ps, &task, p, end); /* ps starts the priv */
}

static void on_record(void *arg, const struct perf_event_header *rec)
{
	struct drain *d = arg;

	if (rec->type == PERF_RECORD_SAMPLE &&
	    rec->size >= sizeof(struct sample) + (d->ps->chain ? 8 : 0) + d->ps->min_tail) {
		hand_on(d->ps, rec);
	} else if (rec->type == PERF_RECORD_COMM && rec->size > sizeof(*rec) + 8) {
		uint32_t tid; /* after the header: u32 pid, u32 tid, the name */

		memcpy(&tid, (const uint8_t *)rec + sizeof(*rec) + 4, 4);
		brt_trace_note_comm((int32_t)tid, (const char *)rec + sizeof(*rec) + 8,
				    rec->size - sizeof(*rec) - 8);
	} else if (rec->type == PERF_RECORD_FORK && rec->size >= sizeof(*rec) + 16) {
		uint32_t ids[4]; /* pid, ppid, tid, ptid */

		memcpy(ids, (const uint8_t *)rec + sizeof(*rec), sizeof(ids));
		brt_trace_note_fork((int32_t)ids[2], (int32_t)ids[3]);
	} else if (rec->type == PERF_RECORD_LOST && rec->size >= sizeof(*rec) + 16) {
		uint64_t lost; /* after the header: u64 id, u64 lost */

		memcpy(&lost, (const uint8_t *)rec + sizeof(*rec) + 8, 8);
		atomic_fetch_add(&d->link->lost, lost);
	}
}

/* A record's time for the merge: a sample's; another record's from its sample_id
 * trailer (brt_perf_attr_sample()'s TID, TIME, CPU: the time 16 bytes before its end),
 * so that a task's fork, exec (PERF_RECORD_COMM) and samples are read in the order they
 * happened whatever rings they are in. */
static uint64_t rec_time(const struct perf_event_header *rec)
{
	const struct sample *s = (const void *)rec;
	uint64_t t = 0;

	if (rec->type == PERF_RECORD_SAMPLE)
		return rec->size >= sizeof(*s) ? s->time : 0;
	if (rec->size >= sizeof(*rec) + 24)
		memcpy(&t, (const uint8_t *)rec + rec->size - 16, 8);
	return t;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Where a drain is in one ring: the positions and the record read but not handed on. */
struct cursor {
	uint64_t head, tail, next;
	const struct perf_event_header *rec;
};

#define MAX_ROUNDS 16 /* rounds of one drain (a round leaves only records newer than it) */

/* Every record waiting in the n rings to on_record, oldest first (file comment). */
static void drain_ordered(struct brt_perf_ring *rings, struct cursor *c, int n, struct drain *d)
{
	for (int round = 0; round < MAX_ROUNDS; round++) {
		uint64_t now = now_ns();
		int newer = 0;

		for (int i = 0; i < n; i++) {
			struct brt_perf_walk *w = &rings[i].walk;

			c[i].head = __atomic_load_n(&w->meta->data_head, __ATOMIC_ACQUIRE);
			c[i].tail = __atomic_load_n(&w->meta->data_tail, __ATOMIC_RELAXED);
			/* positions more than the ring apart: not a producer's, nothing to read */
			if (c[i].head - c[i].tail > w->size)
				c[i].head = c[i].tail;
			c[i].rec = NULL;
		}
		for (;;) {
			uint64_t best_t = 0;
			int best = -1;

			for (int i = 0; i < n; i++) {
				uint64_t t;

				if (!c[i].rec)
					c[i].rec = brt_perf_peek(&rings[i].walk, c[i].tail, c[i].head,
								 &c[i].next);
				if (!c[i].rec)
					continue;
				t = rec_time(c[i].rec);
				if (t > now) { /* this ring waits for the next round */
					newer = 1;
					c[i].head = c[i].tail;
					c[i].rec = NULL;
					continue;
				}
				if (best < 0 || t < best_t) {
					best = i;
					best_t = t;
				}
			}
			if (best < 0)
				break;
			on_record(d, c[best].rec);
			c[best].tail = c[best].next;
			c[best].rec = NULL;
		}
		for (int i = 0; i < n; i++)
			__atomic_store_n(&rings[i].walk.meta->data_tail, c[i].tail,
					 __ATOMIC_RELEASE);
		if (!newer)
			break;
	}
}

void brt_perf_source_run(struct brt_link *link)
{
	struct brt_perf_source *ps = link->priv;
	struct brt_perf_ring *rings = ps->rings;
	struct drain d = { link, ps };
	int n = ps->nrings;
	struct pollfd *p = calloc((size_t)n + 2, sizeof(*p));
	struct cursor *c = calloc((size_t)n, sizeof(*c));

	if (!p || !c) {
		free(p);
		free(c);
		return;
	}
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = rings[i].fd, .events = POLLIN };
	p[n] = (struct pollfd){ .fd = link->peer, .events = POLLIN };
	p[n + 1] = (struct pollfd){ .fd = link->wake, .events = POLLIN };
	for (;;) {
		int r = poll(p, (nfds_t)n + 2, POLL_MS);

		if (r < 0 && errno != EINTR)
			break;
		/* drained before the stop check: what was recorded before the detach still runs */
		drain_ordered(rings, c, n, &d);
		if (r > 0 && brt_link_stopping(p + n))
			break;
	}
	free(c);
	free(p);
}

void brt_perf_link_run(struct brt_link *link, const struct brt_trace_task *task,
		       struct brt_run_opts *o, const char *what)
{
	uint64_t r0 = 0;
	char msg[160];
	/* the program sees the CPU the kernel took the record on, as it would run there:
	 * bpf_get_smp_processor_id, per-CPU map copies, BPF_F_CURRENT_CPU */
	uint32_t cpu = brt_cpu_enter(task->cpu);

	o->user = &link->prog->pm;
	brt_trace_set_task(task);
	if (brt_vm_run_opts(link->prog->vm, o, &r0, msg, sizeof(msg))) {
		if (atomic_fetch_add(&link->errors, 1) < MAX_WARN)
			brt_print(BPFRT_WARN, "bpfrt: %s: %s\n", what, msg);
	} else if (r0) {
		atomic_fetch_add(&link->nonzero, 1);
	}
	brt_trace_set_task(NULL);
	brt_cpu_leave(cpu);
	atomic_fetch_add(&link->events, 1);
}
