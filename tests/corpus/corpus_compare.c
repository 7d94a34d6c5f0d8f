/* corpus_compare.c - what the corpus differential compares of a program both sides accept
 * (corpus_diff.c says how it works): each verifier's processed insns, and for packet and
 * syscall programs one BPF_PROG_TEST_RUN each, compared on errno, retval, output packet
 * and the data maps after the runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfrt.h"
#include "corpus_diff.h"

static int is_packet_type(enum bpf_prog_type t)
{
	return t == BPF_PROG_TYPE_SOCKET_FILTER || t == BPF_PROG_TYPE_SCHED_CLS ||
	       t == BPF_PROG_TYPE_SCHED_ACT || t == BPF_PROG_TYPE_XDP ||
	       t == BPF_PROG_TYPE_CGROUP_SKB;
}

/* types test-run: packet programs on the packet below, syscall programs on a context */
static int is_run_type(enum bpf_prog_type t)
{
	return is_packet_type(t) || t == BPF_PROG_TYPE_SYSCALL;
}

/* Ethernet / IPv4 / UDP 10.0.0.1:1234 -> 10.0.0.2:53, 64 bytes. */
static const unsigned char test_pkt[64] = {
	0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,
	0x45, 0, 0, 50, 0, 1, 0x40, 0, 64, 17, 0x66, 0xb7, 10, 0, 0, 1, 10, 0, 0, 2,
	0x04, 0xd2, 0, 53, 0, 30, 0, 0,
	'b', 'p', 'f', 'r', 't', ' ', 'c', 'o', 'r', 'p', 'u', 's', 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0,
};

struct run_out {
	int err;
	uint32_t retval, size;
	unsigned char data[4096];
};

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static void test_run(bpf_fn sys, int fd, enum bpf_prog_type type, struct run_out *o)
{
	/* a syscall program's context: zeroes, more than the selftests' read (the kernel
	 * refuses a run whose ctx_size_in is below the program's largest context offset) */
	static unsigned char sys_ctx[512];
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	memset(o, 0, sizeof(*o));
	attr.test.prog_fd = (uint32_t)fd;
	if (type == BPF_PROG_TYPE_SYSCALL) {
		/* no data, repeat or output: the kernel refuses them for this type */
		memset(sys_ctx, 0, sizeof(sys_ctx));
		attr.test.ctx_in = (uint64_t)(uintptr_t)sys_ctx;
		attr.test.ctx_size_in = sizeof(sys_ctx);
		o->err = sys(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
		o->retval = attr.test.retval;
		return;
	}
	attr.test.data_in = (uint64_t)(uintptr_t)test_pkt;
	attr.test.data_size_in = sizeof(test_pkt);
	attr.test.data_out = (uint64_t)(uintptr_t)o->data;
	attr.test.data_size_out = sizeof(o->data);
	attr.test.repeat = 1;
	o->err = sys(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
	o->retval = attr.test.retval;
	o->size = attr.test.data_size_out;
}

static int same_run(const struct run_out *a, const struct run_out *b)
{
	return a->err == b->err && a->retval == b->retval && a->size == b->size &&
	       !memcmp(a->data, b->data, a->size < sizeof(a->data) ? a->size : sizeof(a->data));
}

/* ---- maps after a test run ---- */

/* The maps a program's run may have written, compared after the run on both sides: the
 * data maps (hash, array, their per-CPU and LRU forms, LPM tries; global data is an
 * array).  Others hold kernel objects (programs, sockets, devices, perf events, rings)
 * whose values are fds or ids the two sides number differently. */
static int data_map(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH: case BPF_MAP_TYPE_ARRAY: case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY: case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH: case BPF_MAP_TYPE_LPM_TRIE:
		return 1;
	default:
		return 0;
	}
}

static int percpu_map(uint32_t type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

#define MAP_ENTRIES_MAX 65536 /* a larger map is not compared (both sides: time) */

struct map_dump {
	size_t n, row;        /* entries, bytes per entry (key then value) */
	size_t vslot, nslots; /* per-CPU: a CPU's bytes (value_size rounded to 8), CPUs */
	unsigned char *rows;
};

static size_t dump_row;
static size_t dump_vslot;
static int cmp_row(const void *a, const void *b)
{
	return memcmp(a, b, dump_row);
}
static int cmp_slot(const void *a, const void *b)
{
	return memcmp(a, b, dump_vslot);
}

static int elem_op(bpf_fn sys, int cmd, int fd, const void *key, void *value_or_next)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		attr.next_key = (uint64_t)(uintptr_t)value_or_next;
	else
		attr.value = (uint64_t)(uintptr_t)value_or_next;
	return sys(cmd, &attr, sizeof(attr)) ? -errno : 0;
}

/* Every entry of map fd, rows sorted by key (hash order is each side's own); a per-CPU
 * value's CPU slots sorted too, since the two runs may be on different CPUs.  -E2BIG for a
 * map too large to compare, -errno on a failed call. */
static int dump_map(bpf_fn sys, int fd, uint32_t type, uint32_t ksz, uint32_t vsz,
		    struct map_dump *d)
{
	int ncpu = percpu_map(type) ? libbpf_num_possible_cpus() : 1;
	unsigned char *key, *prev = NULL;
	int err = 0;

	memset(d, 0, sizeof(*d));
	if (ncpu < 1)
		return -EINVAL;
	d->vslot = percpu_map(type) ? (vsz + 7) / 8 * 8 : vsz;
	d->nslots = (size_t)ncpu;
	d->row = ksz + d->vslot * d->nslots;
	key = calloc(1, ksz ? ksz : 1);
	if (!key)
		return -ENOMEM;
	for (;;) {
		unsigned char *r;

		err = elem_op(sys, BPF_MAP_GET_NEXT_KEY, fd, prev, key);
		if (err == -ENOENT) {
			err = 0;
			break;
		}
		if (err)
			break;
		if (d->n == MAP_ENTRIES_MAX) {
			err = -E2BIG;
			break;
		}
		r = realloc(d->rows, (d->n + 1) * d->row);
		if (!r) {
			err = -ENOMEM;
			break;
		}
		d->rows = r;
		r += d->n * d->row;
		memcpy(r, key, ksz);
		err = elem_op(sys, BPF_MAP_LOOKUP_ELEM, fd, key, r + ksz);
		if (err == -ENOENT) { /* deleted meanwhile (LRU): not there */
			err = 0;
			continue;
		}
		if (err)
			break;
		if (d->nslots > 1) {
			dump_vslot = d->vslot;
			qsort(r + ksz, d->nslots, d->vslot, cmp_slot);
		}
		prev = r;
		d->n++;
	}
	free(key);
	if (!err && d->n) {
		dump_row = d->row;
		qsort(d->rows, d->n, d->row, cmp_row);
	}
	return err;
}

struct side_map {
	char name[64];
	int fd;
	uint32_t type, ksz, vsz;
};

/* A side's maps: libbpf's object, or bpfrt's (bpfrt's own side, or the kernel's when
 * libbpf gave up); at most cap of them. */
static size_t side_maps(struct bpf_object *lobj, struct bpfrt_object *bobj,
			struct side_map *m, size_t cap)
{
	size_t n = 0;

	if (lobj) {
		struct bpf_map *x;

		bpf_object__for_each_map(x, lobj) {
			if (n == cap)
				break;
			snprintf(m[n].name, sizeof(m[n].name), "%s", bpf_map__name(x));
			m[n].fd = bpf_map__fd(x);
			m[n].type = bpf_map__type(x);
			m[n].ksz = bpf_map__key_size(x);
			m[n++].vsz = bpf_map__value_size(x);
		}
	} else if (bobj) {
		for (struct bpfrt_map *x = bpfrt_object_next_map(bobj, NULL); x && n < cap;
		     x = bpfrt_object_next_map(bobj, x)) {
			snprintf(m[n].name, sizeof(m[n].name), "%s", bpfrt_map__name(x));
			m[n].fd = bpfrt_map__fd(x);
			m[n].type = bpfrt_map__type(x);
			m[n].ksz = bpfrt_map__key_size(x);
			m[n++].vsz = bpfrt_map__value_size(x);
		}
	}
	return n;
}

#define SIDE_MAPS 256

/* baseline.txt's "differs-bytes MAP FROM TO REASON": bytes FROM..TO of map MAP's values
 * that no program writes (a struct's padding the compiler copies from stack never
 * written): a run whose maps differ only there differs for that known reason. */
struct byte_rule {
	char map[64];
	size_t from, to;
	char *why;
};

static struct byte_rule byte_rules[32];
static size_t nbyte_rules;

void read_byte_rules(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t from, to;
	int n;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nbyte_rules < 32) {
		struct byte_rule *b = &byte_rules[nbyte_rules];

		if (sscanf(line, "differs-bytes %63s %zu %zu %n", b->map, &from, &to, &n) != 3)
			continue;
		line[strcspn(line, "\n")] = 0;
		b->from = from;
		b->to = to;
		b->why = strdup(line + n);
		nbyte_rules++;
	}
	fclose(f);
}

void free_byte_rules(void)
{
	for (size_t i = 0; i < nbyte_rules; i++)
		free(byte_rules[i].why);
	nbyte_rules = 0;
}

/* the rule that explains value byte off of map name differing, or NULL */
static const struct byte_rule *byte_rule(const char *name, size_t off)
{
	for (size_t i = 0; i < nbyte_rules; i++)
		if (!strcmp(byte_rules[i].map, name) && off >= byte_rules[i].from &&
		    off <= byte_rules[i].to)
			return &byte_rules[i];
	return NULL;
}

/* Compare the data maps of the two sides after their runs: 0 when every map of the same
 * name holds the same entries; -1 with what differs in why; -2 when they differ only in
 * bytes a "differs-bytes" rule names (*known gets its reason).  *compared counts maps. */
static int maps_differ(struct bpf_object *klobj, struct bpfrt_object *kbobj,
		       struct bpfrt_object *bobj, char *why, size_t whylen, size_t *compared,
		       const char **known)
{
	static struct side_map km[SIDE_MAPS], bm[SIDE_MAPS];
	size_t nk = side_maps(klobj, kbobj, km, SIDE_MAPS);
	size_t nb = side_maps(NULL, bobj, bm, SIDE_MAPS);
	int differ = 0;

	*known = NULL;
	for (size_t i = 0; i < nk && differ != -1; i++) {
		struct map_dump kd, bd;
		size_t j;
		int ke, be;

		if (km[i].fd < 0 || !data_map(km[i].type))
			continue;
		for (j = 0; j < nb && strcmp(km[i].name, bm[j].name); j++)
			;
		if (j == nb || bm[j].fd < 0 || bm[j].type != km[i].type ||
		    bm[j].ksz != km[i].ksz || bm[j].vsz != km[i].vsz)
			continue;
		ke = dump_map(kernel_bpf, km[i].fd, km[i].type, km[i].ksz, km[i].vsz, &kd);
		be = dump_map(bpfrt_bpf, bm[j].fd, bm[j].type, bm[j].ksz, bm[j].vsz, &bd);
		if (ke == -E2BIG || be == -E2BIG) {
			/* too large to read through: not compared */
		} else if (ke || be) {
			snprintf(why, whylen, "map %.60s: read: kernel %d, bpfrt %d", km[i].name, ke,
				 be);
			differ = -1;
		} else if (kd.n != bd.n) {
			snprintf(why, whylen, "map %.60s: kernel %zu entries, bpfrt %zu", km[i].name,
				 kd.n, bd.n);
			differ = -1;
		} else {
			(*compared)++;
			for (size_t e = 0; e < kd.n && differ != -1; e++) {
				const unsigned char *kr = kd.rows + e * kd.row;
				const unsigned char *br = bd.rows + e * bd.row;

				if (memcmp(kr, br, km[i].ksz)) {
					snprintf(why, whylen, "map %.60s: entry %zu: other keys",
						 km[i].name, e);
					differ = -1;
					break;
				}
				for (size_t at = km[i].ksz; at < kd.row; at++) {
					/* a CPU's slot of a per-CPU value counts from its start */
					size_t off = (at - km[i].ksz) % kd.vslot;
					const struct byte_rule *rule;

					if (kr[at] == br[at])
						continue;
					if (verbose)
						fprintf(stderr, "  map %s entry %zu value byte %zu: "
							"kernel %#04x bpfrt %#04x\n", km[i].name, e,
							at - km[i].ksz, kr[at], br[at]);
					rule = byte_rule(km[i].name, off);
					if (differ != -1)
						snprintf(why, whylen, "map %.60s: entry %zu: value "
							 "byte %zu: kernel %#04x bpfrt %#04x",
							 km[i].name, e, at - km[i].ksz, kr[at],
							 br[at]);
					if (!rule) {
						differ = -1;
						break;
					}
					differ = -2;
					*known = rule->why;
				}
			}
		}
		free(kd.rows);
		free(bd.rows);
	}
	return differ;
}

/* ---- a program both accept ---- */

/* each verifier's processed insns (bpf_prog_info.verified_insns) */
static void processed_insns(struct result *r, int kfd, int bfd)
{
	struct bpf_prog_info ki, bi;
	uint32_t kl = sizeof(ki), bl = sizeof(bi);

	memset(&ki, 0, sizeof(ki));
	memset(&bi, 0, sizeof(bi));
	if (!bpf_obj_get_info_by_fd(kfd, &ki, &kl) &&
	    !bpfrt_obj_get_info_by_fd(bfd, &bi, &bl)) {
		r->kernel_insns = ki.verified_insns;
		r->bpfrt_insns = bi.verified_insns;
	}
}

/* one test run on each side, then the data maps: r->run and what differs */
static void run_both(struct result *r, int kfd, int bfd, struct bpf_object *kobj,
		     struct bpfrt_object *kbobj, struct bpfrt_object *bobj)
{
	struct run_out *k = malloc(sizeof(*k)), *b = malloc(sizeof(*b));
	const char *known = NULL;
	int md;

	if (k && b) {
		test_run(kernel_bpf, kfd, r->type, k);
		test_run(bpfrt_bpf, bfd, r->type, b);
		r->run = same_run(k, b) ? 1 : -1;
		if (r->run < 0)
			snprintf(r->run_diff, sizeof(r->run_diff), "kernel err %d ret %u "
				 "size %u, bpfrt err %d ret %u size %u", k->err, k->retval,
				 k->size, b->err, b->retval, b->size);
		else if ((md = maps_differ(kobj, kbobj, bobj, r->run_diff,
					   sizeof(r->run_diff), &r->maps_compared,
					   &known)) != 0)
			r->run = md;
		if (r->run == -2)
			r->run_why = strdup(known);
		if (r->run < 0 && verbose) {
			fprintf(stderr, "%s: test run: kernel err %d ret %u size %u, bpfrt "
				"err %d ret %u size %u\n", r->key, k->err, k->retval,
				k->size, b->err, b->retval, b->size);
			for (uint32_t i = 0; i < k->size && i < b->size &&
					     i < sizeof(k->data); i++)
				if (k->data[i] != b->data[i])
					fprintf(stderr, "  byte %u: kernel %#04x bpfrt %#04x\n",
						i, k->data[i], b->data[i]);
		}
	}
	free(k);
	free(b);
}

void compare_accepted(struct result *r, int kfd, int bfd, struct bpf_object *kobj,
		      struct bpfrt_object *kbobj, struct bpfrt_object *bobj)
{
	processed_insns(r, kfd, bfd);
	if (is_run_type(r->type))
		run_both(r, kfd, bfd, kobj, kbobj, bobj);
}
