/* probe.c - in-application static probes (include/bpfrt/probe.h).  Sites register by name
 * on their first hit; a name's entry keeps its sites and an immutable snapshot of the
 * attached programs.  A hit reads the snapshot inside a two-counter read section (an
 * SRCU of our own: the reader counts itself in the counter the current epoch names);
 * attach and detach publish a new snapshot, flip the epoch twice and wait for each old
 * counter to drain before freeing the old snapshot, so hits never stall on a lock and a
 * detach that returned guarantees the program runs no more.  The site's flag is 1 while
 * any program is attached, so an idle site costs one predictable branch.
 * Programs are BPF_PROG_TYPE_RAW_TRACEPOINT: their context is six u64 arguments (the
 * seed's struct bpf_context) and attaching refuses reads past them, as the kernel's raw
 * tracepoints refuse reads past their arguments.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "api/link_rec.h"
#include "trace/trace.h"
#include "util/util.h"
#include "vm/vm.h"

#define NAME_MAX_LEN 64
#define MAX_WARN 5
#define MAX_MAP_REGIONS 15 /* array maps a checked run may address directly (.rodata, .bss) */

struct slot {
	struct brt_prog *prog;
	struct brt_link *link;
	/* the program's array maps, computed at attach: a checked engine's regions besides
	 * the probe's context, as test runs give them */
	struct brt_region maps[MAX_MAP_REGIONS];
	size_t nmaps;
};

struct snap {
	size_t n;
	struct slot s[];
};

struct entry {
	struct entry *next;
	char name[NAME_MAX_LEN];
	struct bpfrt_probe **sites;
	size_t nsites;
	_Atomic(struct snap *) snap;  /* NULL: nothing attached */
	atomic_uint epoch;            /* low bit: which counter new readers use */
	atomic_long readers[2];
};

/* Serialises registration, attach and detach (never taken by a registered hit). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *entries;

static struct entry *find_or_create(const char *name)
{
	struct entry *e;

	for (e = entries; e; e = e->next)
		if (!strcmp(e->name, name))
			return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->next = entries;
	entries = e;
	return e;
}

static void set_sites(struct entry *e, int active)
{
	for (size_t i = 0; i < e->nsites; i++)
		__atomic_store_n(&e->sites[i]->active, active, __ATOMIC_RELAXED);
}

static struct entry *register_site(struct bpfrt_probe *site)
{
	struct bpfrt_probe **sites;
	struct entry *e;

	pthread_mutex_lock(&lock);
	e = __atomic_load_n(&site->entry, __ATOMIC_ACQUIRE);
	if (e)
		goto out;
	if (!site->name || !*site->name || strlen(site->name) >= NAME_MAX_LEN)
		goto out_idle;
	e = find_or_create(site->name);
	sites = e ? realloc(e->sites, (e->nsites + 1) * sizeof(*sites)) : NULL;
	if (!sites) {
		e = NULL;
		goto out_idle;
	}
	e->sites = sites;
	sites[e->nsites++] = site;
	__atomic_store_n(&site->entry, e, __ATOMIC_RELEASE);
	__atomic_store_n(&site->active, atomic_load(&e->snap) != NULL, __ATOMIC_RELAXED);
	goto out;
out_idle:
	/* a site that cannot be registered stays quiet rather than retrying on every hit */
	__atomic_store_n(&site->active, 0, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&lock);
	return e;
}

static void run_snap(const struct snap *s, struct bpfrt_probe_ctx *c)
{
	struct brt_region regs[1 + MAX_MAP_REGIONS];

	regs[0] = (struct brt_region){ (uint64_t)(uintptr_t)c, sizeof(*c), 0 };
	for (size_t i = 0; i < s->n; i++) {
		struct brt_link *link = s->s[i].link;
		struct brt_run_opts o = { 0 };
		uint64_t r0 = 0;
		char msg[160];

		o.r1 = (uint64_t)(uintptr_t)c;
		memcpy(regs + 1, s->s[i].maps, s->s[i].nmaps * sizeof(regs[0]));
		o.regions = regs;
		o.nr_regions = 1 + s->s[i].nmaps;
		o.user = &s->s[i].prog->pm;
		if (brt_vm_run_opts(s->s[i].prog->vm, &o, &r0, msg, sizeof(msg))) {
			if (atomic_fetch_add(&link->errors, 1) < MAX_WARN)
				brt_print(BPFRT_WARN, "bpfrt: probe: %s\n", msg);
		} else if (r0) {
			atomic_fetch_add_explicit(&link->nonzero, 1, memory_order_relaxed);
		}
		/* a plain atomic load and store, not a locked add: hits on several threads at
		 * once may lose a count (the stats are for people), the hit path keeps one
		 * locked instruction less */
		atomic_store_explicit(&link->events,
				      atomic_load_explicit(&link->events, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
}

void bpfrt_probe_fire(struct bpfrt_probe *site, uint64_t a1, uint64_t a2, uint64_t a3,
		      uint64_t a4, uint64_t a5, uint64_t a6)
{
	struct bpfrt_probe_ctx c = { a1, a2, a3, a4, a5, a6 };
	struct entry *e = __atomic_load_n(&site->entry, __ATOMIC_ACQUIRE);
	struct snap *s;
	unsigned idx;

	if (!e && !(e = register_site(site)))
		return;
	idx = atomic_load(&e->epoch) & 1;
	atomic_fetch_add(&e->readers[idx], 1);
	s = atomic_load(&e->snap);
	if (s)
		run_snap(s, &c);
	atomic_fetch_sub(&e->readers[idx], 1);
}

/* Wait until no hit can still see a snapshot replaced before the call (lock held). */
static void synchronize(struct entry *e)
{
	for (int pass = 0; pass < 2; pass++) {
		unsigned old = atomic_fetch_add(&e->epoch, 1) & 1;

		while (atomic_load(&e->readers[old]))
			sched_yield();
	}
}

/* Replace e's snapshot by next (NULL: empty), wait for hits using the old one, free it. */
static void publish(struct entry *e, struct snap *next)
{
	struct snap *old = atomic_exchange(&e->snap, next);

	set_sites(e, next != NULL);
	synchronize(e);
	free(old);
}

struct probe_att {
	struct entry *entry;
};

static void probe_detach(struct brt_link *link)
{
	struct probe_att *att = link->priv;
	struct entry *e = att->entry;
	struct snap *cur, *next = NULL;
	size_t j = 0;

	pthread_mutex_lock(&lock);
	cur = atomic_load(&e->snap);
	for (j = 0; cur && j < cur->n && cur->s[j].link != link; j++)
		;
	if (!cur || j == cur->n) /* never added (attach ran out of memory) */
		goto out;
	j = 0;
	if (cur->n > 1) {
		next = malloc(sizeof(*next) + (cur->n - 1) * sizeof(next->s[0]));
		if (!next) {
			/* cannot shrink: empty the entry rather than keep a detached program */
			brt_print(BPFRT_WARN, "bpfrt: probe %s: out of memory on detach; every "
				  "program of it was detached\n", e->name);
		} else {
			for (size_t i = 0; i < cur->n; i++)
				if (cur->s[i].link != link)
					next->s[j++] = cur->s[i];
			next->n = j;
		}
	}
	publish(e, next);
out:
	pthread_mutex_unlock(&lock);
	free(att);
}

static const struct brt_link_ops probe_ops = {
	.kind = "probe",
	.detach = probe_detach,
};

static int attach(struct brt_prog *prog, const char *name)
{
	struct probe_att *att;
	struct snap *cur, *next;
	struct brt_link *link;
	size_t n;
	int fd;

	if (prog->type != BPF_PROG_TYPE_RAW_TRACEPOINT) {
		brt_print(BPFRT_WARN, "bpfrt: probe %s runs BPF_PROG_TYPE_RAW_TRACEPOINT programs; "
			  "this one has type %u\n", name, prog->type);
		return -EINVAL;
	}
	if (prog->max_ctx_offset > sizeof(struct bpfrt_probe_ctx)) {
		brt_print(BPFRT_WARN, "bpfrt: probe %s: the program reads its context up to byte "
			  "%u; probes pass six u64 arguments (48 bytes)\n", name, prog->max_ctx_offset);
		return -EINVAL;
	}
	if (!*name || strlen(name) >= NAME_MAX_LEN)
		return -EINVAL;
	att = calloc(1, sizeof(*att));
	if (!att)
		return -ENOMEM;
	pthread_mutex_lock(&lock);
	att->entry = find_or_create(name);
	pthread_mutex_unlock(&lock);
	if (!att->entry) {
		free(att);
		return -ENOMEM;
	}
	/* the link cannot detach before its fd is returned: nobody can close it yet */
	fd = brt_link_create(&probe_ops, prog, att, &link);
	if (fd < 0) {
		free(att);
		return fd;
	}
	/* BPF_RAW_TRACEPOINT_OPEN made it: a raw tracepoint link to other processes */
	brt_link_publish(fd, &(struct brt_link_desc){ .type = BRT_LINK_RAW_TRACEPOINT,
							.name = name });
	pthread_mutex_lock(&lock);
	cur = atomic_load(&att->entry->snap);
	n = cur ? cur->n : 0;
	next = malloc(sizeof(*next) + (n + 1) * sizeof(next->s[0]));
	if (next) {
		if (n)
			memcpy(next->s, cur->s, n * sizeof(next->s[0]));
		next->s[n] = (struct slot){ .prog = link->prog, .link = link };
		next->s[n].nmaps = brt_prog_map_regions(link->prog, next->s[n].maps,
							MAX_MAP_REGIONS);
		next->n = n + 1;
		publish(att->entry, next);
	}
	pthread_mutex_unlock(&lock);
	if (!next) {
		close(fd); /* the link thread detaches: removing nothing is fine */
		return -ENOMEM;
	}
	return fd;
}

int bpfrt_probe_attach(int prog_fd, const char *name)
{
	struct brt_prog *prog;
	int err;

	if (!name)
		return -(errno = EINVAL);
	err = brt_prog_from_fd(prog_fd, &prog);
	if (err)
		return -(errno = -err);
	err = attach(prog, name);
	brt_obj_put(&prog->obj);
	if (err < 0)
		errno = -err;
	return err;
}

/* BPF_RAW_TRACEPOINT_OPEN: name the probe, get its link fd. */
static int cmd_raw_tracepoint_open(struct brt_call *call)
{
	char name[128];
	struct brt_prog *prog;
	int err;

	if (!call->attr->raw_tracepoint.name)
		return -EINVAL;
	err = call->ua->str(name, call->attr->raw_tracepoint.name, sizeof(name));
	if (err == -ENAMETOOLONG)
		return -EINVAL;
	if (err < 0)
		return err;
	err = brt_prog_from_fd((int)call->attr->raw_tracepoint.prog_fd, &prog);
	if (err)
		return err;
	err = attach(prog, name);
	brt_obj_put(&prog->obj);
	return err;
}

/* bpf() sits below trace/: hand it the command's handler when the library is loaded
 * (libbpfrt.a is one object, so a static link keeps this too). */
__attribute__((constructor)) static void probe_register_cmd(void)
{
	brt_api_register_cmd(BPF_RAW_TRACEPOINT_OPEN, cmd_raw_tracepoint_open);
}
