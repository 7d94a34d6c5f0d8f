/* corpus_diff.c - the real-world corpus (scripts/corpus.sh) loaded program by program into
 * the kernel and into bpfrt (issue #15), with the verdicts compared.
 *
 * usage: corpus_diff [-v] [-r REPORT.tsv] [-b BASELINE] [-p GLOB [-l LOGDIR]] [CORPUS_DIR]
 *
 * -v prints libbpf's messages of refusals, each differing test run with the bytes that
 * differ, and the runs that differ for a known reason; -r writes the per-program table.
 * -p GLOB loads only the programs whose "project/file.o:name" matches (no baseline check);
 * -l LOGDIR then writes both verifiers' level-2 logs there (KEY.kernel.log, KEY.bpfrt.log,
 * '/' in the key as '_'), to see where the processed-insn counts part.
 *
 * The kernel side is libbpf (libbpf-dev): the loader these programs are written for (CO-RE,
 * its section names, its map formats), so "the kernel accepts" means what a user of the
 * project sees.  An object libbpf cannot open (iproute2's struct bpf_elf_map, the samples'
 * maps section) goes through bpfrt's own object loader in kernel mode (the real bpf(2))
 * instead.  The bpfrt side is bpfrt_object_* with bpfrt_bpf().  Each program is loaded
 * alone (autoload off for the others), with the program type the kernel side used: the
 * section's, or for sections that name none the type the project's loader gives
 * (types.txt next to this file), so the comparison is of verifiers, helpers and maps, and
 * whether bpfrt found that type from the section on its own is counted separately.
 *
 * Per program: kernel verdict, bpfrt verdict, and when both refuse, whether the errno
 * agrees ("first-error agreement"); for packet programs both accept, one BPF_PROG_TEST_RUN
 * on a fixed UDP packet, compared on errno, retval and output packet; for syscall programs,
 * one run on a zeroed context, compared on errno and retval.  A run that differs is
 * printed (TEST RUN DIFFERS) unless baseline.txt names it with the reason ("differs": a
 * random number, a clock, an address), and then counted apart.  bpfrt refusals are put into
 * categories (helper, map type, program type, object format, section name, ...) printed at
 * the end.  Exit 1 when bpfrt accepts a program the kernel refuses or accepts fewer programs
 * than the baseline's floor; 77 (skipped) without the corpus, libbpf or root.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfrt.h"

#define LOG_CAP (1u << 16)

static int verbose;
static const char *only;   /* -p: glob over "project/file.o:name" */
static const char *logdir; /* -l: level-2 logs of both sides go here */

static void save_log(const char *key, const char *side, const char *log)
{
	char path[1024], *c;
	FILE *f;
	int n = snprintf(path, sizeof(path), "%s/", logdir);

	snprintf(path + n, sizeof(path) - (size_t)n, "%s.%s.log", key, side);
	for (c = path + n; *c; c++)
		if (*c == '/')
			*c = '_';
	f = fopen(path, "w");
	if (f) {
		fputs(log ? log : "", f);
		fclose(f);
	}
}
static size_t unreadable; /* objects neither libbpf nor bpfrt opens */

/* ---- captured messages (libbpf's and bpfrt's print callbacks) ---- */

static char libbpf_msgs[LOG_CAP];
static char bpfrt_msgs[LOG_CAP];

static void append(char *buf, const char *fmt, va_list ap)
{
	size_t n = strlen(buf);

	if (n < LOG_CAP - 1)
		vsnprintf(buf + n, LOG_CAP - n, fmt, ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG)
		append(libbpf_msgs, fmt, ap);
	return 0;
}

static int bpfrt_print_cb(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	append(bpfrt_msgs, fmt, ap);
	return 0;
}

/* ---- program types for sections that name none (types.txt) ---- */

struct type_rule {
	char glob[256];     /* project/object.o:section, fnmatch pattern */
	char type[64];      /* program type name as bpftool spells it */
};

static struct type_rule rules[128];
static size_t nrules;

static void read_rules(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nrules < sizeof(rules) / sizeof(rules[0])) {
		struct type_rule *r = &rules[nrules];

		if (line[0] == '#' || sscanf(line, "%255s %63s", r->glob, r->type) != 2)
			continue;
		nrules++;
	}
	fclose(f);
}

static enum bpf_prog_type type_by_name(const char *name)
{
	for (int t = 1; t < 64; t++) {
		const char *n = libbpf_bpf_prog_type_str((enum bpf_prog_type)t);

		if (n && !strcmp(n, name))
			return (enum bpf_prog_type)t;
	}
	return BPF_PROG_TYPE_UNSPEC;
}

static enum bpf_prog_type rule_type(const char *key)
{
	for (size_t i = 0; i < nrules; i++)
		if (!fnmatch(rules[i].glob, key, 0))
			return type_by_name(rules[i].type);
	return BPF_PROG_TYPE_UNSPEC;
}

/* ---- one program's results ---- */

enum verdict { V_NA, V_OK, V_REFUSED };

struct result {
	char key[512];           /* project/object.o:program */
	char sec[128];
	enum bpf_prog_type type;  /* type both sides loaded it with */
	enum bpf_attach_type attach;
	int type_found;          /* bpfrt's section table gave the same type by itself */
	enum verdict kernel, bpfrt;
	int kernel_err, bpfrt_err;
	int run;                 /* 0 not run, 1 same, -1 differs, -2 differs for a known reason */
	char run_diff[160];      /* a differing run: each side's errno, retval and size */
	char *run_why;           /* -2: baseline.txt's reason */
	size_t maps_compared;    /* data maps compared after the run */
	char kernel_why[256];    /* last line of the kernel log when refused */
	char bpfrt_why[256];     /* bpfrt's reason when refused */
	char category[128];
	int libbpf_gave_up;      /* libbpf refused before the kernel saw it (CO-RE, externs) */
	uint32_t kernel_insns;   /* both accept: bpf_prog_info.verified_insns of each (#16) */
	uint32_t bpfrt_insns;
	/* both accept: each verifier's "verification time N usec" (log level 4) */
	uint64_t kernel_us;
	uint64_t bpfrt_us;
	int timed;               /* both lines were found */
	char libbpf_why[256];
	double kernel_ms, bpfrt_ms; /* open + load (verification) + close, each side */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void last_line(char *dst, size_t len, const char *log)
{
	const char *end = log + strlen(log), *start;

	while (end > log && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > log && start[-1] != '\n')
		start--;
	/* verifier logs end with statistics (log level 4: "processed N insns ...", "stack
	 * depth N", "verification time N usec"): the reason is the line before them */
	while (start > log && (!strncmp(start, "processed ", 10) ||
			       !strncmp(start, "stack depth ", 12) ||
			       !strncmp(start, "verification time ", 18))) {
		end = start - 1;
		start = end;
		while (start > log && start[-1] != '\n')
			start--;
	}
	snprintf(dst, len, "%.*s", (int)(end - start), start);
}

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

static void read_byte_rules(const char *path)
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

/* ---- refusal categories ---- */

static void categorise(struct result *r)
{
	const char *w = r->bpfrt_why;
	const char *p;

	if (r->bpfrt != V_REFUSED)
		return;
	if (!strncmp(w, "elf:", 4) || strstr(w, "open:")) {
		/* "elf: NAME: section N 'S' offset 0xX: what": keep the what */
		p = strstr(w, ": ");
		p = p ? strstr(p + 2, ": ") : NULL;
		while (p && strstr(p + 2, ": ") && !strstr(p, "map '"))
			p = strstr(p + 2, ": ");
		snprintf(r->category, sizeof(r->category), "object format: %.90s",
			 p ? p + 2 : w);
	} else if ((p = strstr(w, "BPF_MAP_CREATE (type "))) {
		snprintf(r->category, sizeof(r->category), "map type %.*s",
			 (int)strcspn(p + 21, ","), p + 21);
	} else if ((p = strstr(w, "unknown func ")) || (p = strstr(w, "helper "))) {
		snprintf(r->category, sizeof(r->category), "helper: %.100s", p);
	} else if ((p = strstr(w, ", type ")) && strstr(p, "): BPF_PROG_LOAD: ")) {
		/* the loader's line without a verifier log: the type itself is refused */
		snprintf(r->category, sizeof(r->category), "program type %.*s: %s",
			 (int)strcspn(p + 7, ")"), p + 7, strstr(p, "BPF_PROG_LOAD: ") + 15);
	} else if (strstr(w, "program type") || strstr(w, "prog_type")) {
		snprintf(r->category, sizeof(r->category), "program type %s",
			 libbpf_bpf_prog_type_str(r->type));
	} else if (strstr(w, "names no program type")) {
		snprintf(r->category, sizeof(r->category), "section name");
	} else {
		/* verifier and others: the message with numbers taken out */
		char *d = r->category;
		size_t n = 0;

		for (p = w; *p && n < sizeof(r->category) - 1; p++) {
			if (*p >= '0' && *p <= '9') {
				if (n && d[n - 1] == '#')
					continue;
				d[n++] = '#';
			} else {
				d[n++] = *p;
			}
		}
		d[n] = 0;
	}
}

/* Maps whose definition leaves the size to user space (max_entries 0; xdp-tools sizes
 * them by CPU count or interface): both sides get the same size, as the project's user
 * space would set.  Perf event arrays and ring buffers have their own rules. */
#define DEFAULT_ENTRIES 64
#define DEFAULT_RINGBUF (64u << 10) /* a ring buffer's size: pages, a power of 2 */

/* The size to give a map of this type and definition, or 0 to leave it.  Perf event
 * arrays are sized by the loaders themselves (CPU count); a ring buffer of size 0 (Falco's
 * per-CPU ring buffers, sized from its configuration) gets DEFAULT_RINGBUF. */
static uint32_t size_for(uint32_t type, uint32_t max_entries)
{
	if (max_entries || type == BPF_MAP_TYPE_PERF_EVENT_ARRAY)
		return 0;
	if (type == BPF_MAP_TYPE_RINGBUF || type == BPF_MAP_TYPE_USER_RINGBUF)
		return DEFAULT_RINGBUF;
	return DEFAULT_ENTRIES;
}

/* each side's maps, and the inner templates of BTF maps of maps, sized by size_for().
 * libbpf 1.1 cannot resize an inner template (bpf_map__set_max_entries() on it crashes):
 * the kernel side gets one made to size instead, as Falco's user space does
 * (bpf_map__set_inner_map_fd()); its fds go to fds[] (up to nfds) for the caller to close
 * after the load.  Returns how many. */
static size_t size_libbpf_maps(struct bpf_object *obj, int *fds, size_t nfds)
{
	struct bpf_map *m, *in;
	uint32_t n;
	size_t k = 0;

	bpf_object__for_each_map(m, obj) {
		if ((n = size_for(bpf_map__type(m), bpf_map__max_entries(m))))
			bpf_map__set_max_entries(m, n);
		in = bpf_map__inner_map(m);
		if (in && k < nfds && (n = size_for(bpf_map__type(in), bpf_map__max_entries(in)))) {
			int fd = bpf_map_create(bpf_map__type(in), NULL, bpf_map__key_size(in),
						bpf_map__value_size(in), n, NULL);

			if (fd >= 0 && bpf_map__set_inner_map_fd(m, fd))
				close(fd);
			else if (fd >= 0)
				fds[k++] = fd;
		}
	}
	return k;
}

static void size_bpfrt_maps(struct bpfrt_object *obj)
{
	struct bpfrt_map *in;
	uint32_t n;

	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); m;
	     m = bpfrt_object_next_map(obj, m)) {
		if ((n = size_for(bpfrt_map__type(m), bpfrt_map__max_entries(m))))
			bpfrt_map__set_max_entries(m, n);
		in = bpfrt_map__inner_map(m);
		if (in && (n = size_for(bpfrt_map__type(in), bpfrt_map__max_entries(in))))
			bpfrt_map__set_max_entries(in, n);
	}
}

/* ---- kernel side ---- */

/* libbpf's messages end with "failed to load object": the reason is the last line before
 * its "-- END PROG LOAD LOG --" (the verifier's words) or else its first error line. */
static void kernel_reason(struct result *r, const char *msgs)
{
	const char *end = strstr(msgs, "-- END PROG LOAD LOG --");
	char *copy;

	if (end) {
		copy = strndup(msgs, (size_t)(end - msgs));
		if (copy) {
			last_line(r->kernel_why, sizeof(r->kernel_why), copy);
			free(copy);
			return;
		}
	}
	snprintf(r->kernel_why, sizeof(r->kernel_why), "%.*s", (int)strcspn(msgs, "\n"), msgs);
}

static char kpin[128]; /* bpffs of our own for the kernel side's pins */
static char bfs[64];   /* $BPFRT_FS for the bpfrt side */

/* Open with libbpf; programs are matched by name. */
static struct bpf_object *k_open(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = kpin);
	struct bpf_object *obj;

	libbpf_msgs[0] = 0;
	obj = bpf_object__open_file(path, &o);
	return obj && !libbpf_get_error(obj) ? obj : NULL;
}

/* Load one program with libbpf; returns the object (kept open for the test run) or NULL
 * with r->kernel_err set. */
static struct bpf_object *k_load_libbpf(const char *path, struct result *r, const char *name,
					int *fd)
{
	struct bpf_object *obj = k_open(path);
	struct bpf_program *p, *me = NULL;
	int err;

	if (!obj)
		return NULL;
	bpf_object__for_each_program(p, obj) {
		int mine = !strcmp(bpf_program__name(p), name);

		bpf_program__set_autoload(p, mine);
		if (mine)
			me = p;
	}
	if (!me) {
		bpf_object__close(obj);
		return NULL;
	}
	if (bpf_program__type(me) != r->type)
		bpf_program__set_type(me, r->type);
	int inner_fds[8];
	size_t ninner = size_libbpf_maps(obj, inner_fds, 8);
	static char klog[1 << 26];
	const char *vt;

	klog[0] = 0;
	bpf_program__set_log_buf(me, klog, logdir ? sizeof(klog) : (1u << 20));
	bpf_program__set_log_level(me, logdir ? 4 | 2 : 4);
	libbpf_msgs[0] = 0;
	err = bpf_object__load(obj);
	while (ninner)
		close(inner_fds[--ninner]);
	if (logdir)
		save_log(r->key, "kernel", klog);
	vt = strstr(klog, "verification time ");
	r->kernel_us = vt ? strtoull(vt + 18, NULL, 10) : 0;
	r->timed = vt != NULL;
	if (err) {
		r->kernel = V_REFUSED;
		r->kernel_err = -err;
		kernel_reason(r, libbpf_msgs);
		if (verbose)
			fprintf(stderr, "%s: libbpf:\n%s\n", r->key, libbpf_msgs);
		bpf_object__close(obj);
		return NULL;
	}
	r->kernel = V_OK;
	r->attach = bpf_program__expected_attach_type(me);
	*fd = bpf_program__fd(me);
	return obj;
}

/* ---- bpfrt side (also the kernel side, .kernel = 1, when libbpf cannot open) ---- */

static struct bpfrt_object *b_load(const char *path, struct result *r, const char *name,
				   int kernel, int *fd)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .kernel = kernel,
					    .pin_root_path = kernel ? kpin : NULL,
					    .log_level = kernel ? 0 : logdir ? 4 | 2 : 4 };
	struct bpfrt_object *obj;
	struct bpfrt_program *p, *me = NULL;
	enum verdict *v = kernel ? &r->kernel : &r->bpfrt;
	int *err = kernel ? &r->kernel_err : &r->bpfrt_err;
	char *why = kernel ? r->kernel_why : r->bpfrt_why;
	size_t whylen = kernel ? sizeof(r->kernel_why) : sizeof(r->bpfrt_why);

	bpfrt_msgs[0] = 0;
	obj = bpfrt_object_open_file(path, &o);
	if (!obj) {
		*v = V_REFUSED;
		*err = errno;
		last_line(why, whylen, bpfrt_msgs);
		return NULL;
	}
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		int mine = !strcmp(bpfrt_program_name(p), name);

		bpfrt_program_set_autoload(p, mine);
		if (mine)
			me = p;
	}
	if (!me) {
		*v = V_REFUSED;
		*err = ENOENT;
		snprintf(why, whylen, "program not found by bpfrt's object parser");
		bpfrt_object_close(obj);
		return NULL;
	}
	size_bpfrt_maps(obj);
	if (!kernel)
		r->type_found = bpfrt_program_type(me) == r->type;
	if (bpfrt_program_type(me) != r->type) {
		bpfrt_program_set_type(me, r->type);
		if (r->attach)
			bpfrt_program_set_expected_attach_type(me, r->attach);
	}
	int lerr = bpfrt_object_load(obj);

	if (!kernel && logdir)
		save_log(r->key, "bpfrt", bpfrt_object_log(obj));

	if (!kernel && bpfrt_object_log(obj)) {
		const char *vt = strstr(bpfrt_object_log(obj), "verification time ");

		r->bpfrt_us = vt ? strtoull(vt + 18, NULL, 10) : 0;
		r->timed = r->timed && vt != NULL;
	}
	if (lerr) {
		const char *log = bpfrt_object_log(obj);
		char first[256] = "";

		*v = V_REFUSED;
		*err = errno;
		/* the loader's own line ("prog 'x' ...: BPF_PROG_LOAD: ..." or "map ...") first,
		 * then the verifier's last words when there are some */
		if (log) {
			snprintf(first, sizeof(first), "%.*s", (int)strcspn(log, "\n"), log);
			last_line(why, whylen, log);
			if (!strstr(first, "BPF_PROG_LOAD"))
				snprintf(why, whylen, "%s", first);
		} else {
			last_line(why, whylen, bpfrt_msgs);
		}
		bpfrt_object_close(obj);
		return NULL;
	}
	*v = V_OK;
	*fd = bpfrt_program_fd(me);
	return obj;
}

/* ---- driver ---- */

static void rm_tree(const char *path);

/* Pins left by one program's load (tc's pinned prog arrays keep their programs) must not
 * reach the next: each program is measured alone. */
static void clear_pins(void)
{
	struct dirent *e;
	DIR *d;

	for (int k = 0; k < 2; k++) {
		const char *root = k ? bfs : kpin;
		char sub[512];

		if (!root[0] || !(d = opendir(root)))
			continue;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", root, e->d_name);
			/* a pin is a file, tc's globals a directory of them */
			if (e->d_type == DT_DIR)
				rm_tree(sub);
			else
				unlink(sub);
		}
		closedir(d);
	}
}

struct totals {
	size_t progs, kernel_ok, bpfrt_ok, both_ok, false_accept, both_refused, errno_agree;
	size_t type_found, runs, runs_same, runs_known, kernel_na, libbpf_gave_up, maps_compared;
	double kernel_ms, bpfrt_ms, both_kernel_ms, both_bpfrt_ms;
};

static struct result *results;
static size_t nresults, capresults;

static void one_prog(const char *proj, const char *file, const char *path, const char *name,
		     const char *sec, enum bpf_prog_type type, int use_libbpf)
{
	struct result *r;
	struct bpf_object *kobj = NULL;
	struct bpfrt_object *kbobj = NULL, *bobj = NULL;
	int kfd = -1, bfd = -1;
	char key[512];

	if (nresults == capresults) {
		capresults = capresults ? 2 * capresults : 256;
		results = realloc(results, capresults * sizeof(*results));
		if (!results)
			exit(2);
	}
	r = &results[nresults++];
	memset(r, 0, sizeof(*r));
	snprintf(r->key, sizeof(r->key), "%s/%s:%s", proj, file, name);
	snprintf(r->sec, sizeof(r->sec), "%s", sec);
	snprintf(key, sizeof(key), "%s/%s:%s", proj, file, sec);
	r->type = type;
	if (only && fnmatch(only, r->key, 0)) {
		nresults--;
		return;
	}
	if (r->type == BPF_PROG_TYPE_UNSPEC)
		r->type = rule_type(key);
	if (r->type == BPF_PROG_TYPE_UNSPEC) {
		/* nobody knows how this program is loaded: not counted */
		r->kernel = V_NA;
		snprintf(r->kernel_why, sizeof(r->kernel_why), "no program type for section");
		return;
	}
	double t0 = now_ms();

	if (use_libbpf)
		kobj = k_load_libbpf(path, r, name, &kfd);
	r->kernel_ms = now_ms() - t0;
	/* libbpf gave up before the verifier (a CO-RE relocation it cannot resolve, which it
	 * turns into a call the kernel refuses; an extern; a map): the kernel's verdict then
	 * comes from bpfrt's loader in kernel mode, on the same instructions bpfrt gets */
	if (r->kernel == V_REFUSED && (!strstr(libbpf_msgs, "program load failed") ||
				       strstr(libbpf_msgs, "failed to resolve CO-RE"))) {
		r->libbpf_gave_up = 1;
		snprintf(r->libbpf_why, sizeof(r->libbpf_why), "%s", r->kernel_why);
	}
	if (!use_libbpf || r->libbpf_gave_up) {
		r->kernel = V_NA;
		r->kernel_err = 0;
		t0 = now_ms();
		kbobj = b_load(path, r, name, 1, &kfd);
		r->kernel_ms += now_ms() - t0;
	}
	t0 = now_ms();
	bobj = b_load(path, r, name, 0, &bfd);
	r->bpfrt_ms = now_ms() - t0;
	if (r->kernel == V_OK && r->bpfrt == V_OK) {
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
	if (r->kernel == V_OK && r->bpfrt == V_OK && is_run_type(r->type)) {
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
	categorise(r);
	t0 = now_ms();
	if (kobj)
		bpf_object__close(kobj);
	if (kbobj)
		bpfrt_object_close(kbobj);
	r->kernel_ms += now_ms() - t0;
	t0 = now_ms();
	if (bobj)
		bpfrt_object_close(bobj);
	r->bpfrt_ms += now_ms() - t0;
	clear_pins();
}

static void one_object(const char *proj, const char *file, const char *path)
{
	struct bpf_object *obj = k_open(path);

	if (obj) {
		struct bpf_program *p;
		size_t n = 0, i = 0;
		struct { char name[128], sec[128]; enum bpf_prog_type type; } *list;

		bpf_object__for_each_program(p, obj)
			n++;
		list = calloc(n + 1, sizeof(*list));
		bpf_object__for_each_program(p, obj) {
			snprintf(list[i].name, sizeof(list[i].name), "%s", bpf_program__name(p));
			snprintf(list[i].sec, sizeof(list[i].sec), "%s", bpf_program__section_name(p));
			list[i++].type = bpf_program__type(p);
		}
		bpf_object__close(obj);
		for (i = 0; i < n; i++)
			one_prog(proj, file, path, list[i].name, list[i].sec, list[i].type, 1);
		free(list);
		return;
	}
	/* libbpf refuses the object: list its programs with bpfrt's parser */
	{
		struct bpfrt_object *b;
		struct bpfrt_program *p;

		bpfrt_msgs[0] = 0;
		b = bpfrt_object_open_file(path, NULL);
		if (!b) {
			char why[256];

			last_line(why, sizeof(why), libbpf_msgs);
			char bwhy[256];

			unreadable++;
			last_line(bwhy, sizeof(bwhy), bpfrt_msgs);
			printf("unreadable: %s/%s: libbpf: %s; bpfrt: %s\n", proj, file,
			       why + (strncmp(why, "libbpf: ", 8) ? 0 : 8), bwhy);
			return;
		}
		for (p = bpfrt_object_next_program(b, NULL); p; p = bpfrt_object_next_program(b, p))
			one_prog(proj, file, path, bpfrt_program_name(p),
				 bpfrt_program_section_name(p), bpfrt_program_type(p), 0);
		bpfrt_object_close(b);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **sorted_dir(const char *path, size_t *n, int dirs_only)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || (dirs_only && e->d_type != DT_DIR))
			continue;
		v = realloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

struct cat { char name[128]; size_t n; };

static int cmp_cat(const void *a, const void *b)
{
	const struct cat *x = a, *y = b;

	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

static void print_categories(FILE *out)
{
	struct cat *cats = calloc(nresults + 1, sizeof(*cats));
	size_t ncats = 0;

	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		size_t c;

		if (r->kernel != V_OK || r->bpfrt != V_REFUSED)
			continue;
		for (c = 0; c < ncats && strcmp(cats[c].name, r->category); c++)
			;
		if (c == ncats)
			snprintf(cats[ncats++].name, sizeof(cats[0].name), "%s", r->category);
		cats[c].n++;
	}
	qsort(cats, ncats, sizeof(*cats), cmp_cat);
	fprintf(out, "bpfrt refusals of programs the kernel accepts, by reason:\n");
	for (size_t c = 0; c < ncats; c++)
		fprintf(out, "  %4zu  %s\n", cats[c].n, cats[c].name);
	free(cats);
}

/* processed insns of the programs both accept, bpfrt / kernel: the ratio's distribution */
static void print_processed(FILE *out)
{
	static const double edge[] = { 0.9, 0.999999, 1.000001, 1.1, 1.5, 3.0, 10.0 };
	static const char *const label[] = { "< 0.9", "0.9-1.0", "= 1.0", "1.0-1.1", "1.1-1.5",
					     "1.5-3", "3-10", "> 10" };
	size_t bucket[8] = { 0 }, n = 0;
	uint64_t sk = 0, sb = 0;

	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		double q;
		int b = 0;

		if (!r->kernel_insns || !r->bpfrt_insns)
			continue;
		q = (double)r->bpfrt_insns / (double)r->kernel_insns;
		while (b < 7 && q >= edge[b])
			b++;
		bucket[b]++;
		n++;
		sk += r->kernel_insns;
		sb += r->bpfrt_insns;
	}
	fprintf(out, "processed insns, bpfrt / kernel, %zu programs both accept (sum %llu / %llu):",
		n, (unsigned long long)sb, (unsigned long long)sk);
	for (int b = 0; b < 8; b++)
		fprintf(out, " %s: %zu;", label[b], bucket[b]);
	fprintf(out, "\n");
	{
		uint64_t tk = 0, tb = 0;
		size_t nt = 0, faster = 0;

		for (size_t i = 0; i < nresults; i++) {
			const struct result *r = &results[i];

			if (!r->kernel_insns || !r->bpfrt_insns || !r->timed)
				continue;
			nt++;
			tk += r->kernel_us;
			tb += r->bpfrt_us;
			faster += r->bpfrt_us <= r->kernel_us;
		}
		fprintf(out, "verification time (the logs' line), %zu programs both accept: "
			"kernel %llu usec, bpfrt %llu usec; bpfrt at or below the kernel on %zu\n",
			nt, (unsigned long long)tk, (unsigned long long)tb, faster);
	}
}

static const char *vname(enum verdict v)
{
	return v == V_OK ? "ok" : v == V_REFUSED ? "refused" : "n/a";
}

static void rm_tree(const char *path)
{
	size_t n;
	char **v = sorted_dir(path, &n, 0);
	char sub[1024];
	struct stat st;

	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, v[i]);
		if (!lstat(sub, &st) && S_ISDIR(st.st_mode))
			rm_tree(sub);
		else
			unlink(sub);
		free(v[i]);
	}
	free(v);
	rmdir(path);
}

/* The figures of one project ("" for the whole corpus): the key's first component. */
static void count(struct totals *t, const char *proj)
{
	size_t plen = strlen(proj);

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		if (plen && (strncmp(r->key, proj, plen) || r->key[plen] != '/'))
			continue;
		if (r->kernel == V_NA) {
			t->kernel_na++;
			continue;
		}
		t->progs++;
		t->kernel_ok += r->kernel == V_OK;
		t->bpfrt_ok += r->bpfrt == V_OK;
		t->both_ok += r->kernel == V_OK && r->bpfrt == V_OK;
		t->type_found += r->type_found;
		t->libbpf_gave_up += r->libbpf_gave_up;
		t->false_accept += r->kernel == V_REFUSED && r->bpfrt == V_OK;
		if (r->kernel == V_REFUSED && r->bpfrt == V_REFUSED) {
			t->both_refused++;
			t->errno_agree += r->kernel_err == r->bpfrt_err;
		}
		t->runs += r->run != 0;
		t->runs_same += r->run > 0;
		t->runs_known += r->run == -2;
		t->maps_compared += r->maps_compared;
		t->kernel_ms += r->kernel_ms;
		t->bpfrt_ms += r->bpfrt_ms;
		if (r->kernel == V_OK && r->bpfrt == V_OK) {
			t->both_kernel_ms += r->kernel_ms;
			t->both_bpfrt_ms += r->bpfrt_ms;
		}
	}
}

static void print_projects(FILE *out, char **projs, size_t nproj)
{
	fprintf(out, "by project: programs, kernel accepts, bpfrt accepts too, false accepts, "
		"both refuse (same errno), test runs (same result; differ for a known reason)\n");
	for (size_t i = 0; i < nproj; i++) {
		struct totals t;

		count(&t, projs[i]);
		fprintf(out, "  %-20s %5zu %5zu %5zu %3zu %5zu (%zu) %4zu (%zu; %zu)\n", projs[i],
			t.progs, t.kernel_ok, t.both_ok, t.false_accept, t.both_refused,
			t.errno_agree, t.runs, t.runs_same, t.runs_known);
	}
}

/* baseline.txt's "known KEY" lines: false accepts understood and not (yet) fixed, each
 * with its reason in the file.  Returns how many of the run's false accepts they name
 * (each printed); the others fail the test. */
static size_t known_false_accepts(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], key[512];
	size_t n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "known %511s", key) != 1)
			continue;
		for (size_t i = 0; i < nresults; i++) {
			const struct result *r = &results[i];

			if (r->kernel == V_REFUSED && r->bpfrt == V_OK && !strcmp(r->key, key)) {
				printf("known false accept: %s (baseline.txt says why)\n", key);
				n++;
			}
		}
	}
	fclose(f);
	return n;
}

/* baseline.txt's "differs GLOB REASON" lines: test runs whose result depends on what the
 * two sides cannot share (a random number, a clock, a kernel or user-space address the
 * program returns or writes, uninitialised stack), each with its reason.  A differing run
 * of a program GLOB matches is counted apart ("differ for a known reason") with that
 * reason; any other difference is printed as one to fix. */
static void known_run_differences(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], glob[256];
	int n;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "differs %255s %n", glob, &n) != 1)
			continue;
		line[strcspn(line, "\n")] = 0;
		for (size_t i = 0; i < nresults; i++) {
			struct result *r = &results[i];

			if (r->run == -1 && !fnmatch(glob, r->key, 0)) {
				r->run = -2;
				r->run_why = strdup(line + n);
			}
		}
	}
	fclose(f);
}

/* baseline.txt's floors, "floor PROJECT N": bpfrt must accept at least N of the programs
 * of PROJECT the kernel accepts; "runs PROJECT N": at least N test runs give the kernel's
 * result or differ only for a known reason (one that flips between the two, such as
 * stack bytes never written that happen to be equal, moves no floor); "errno PROJECT N":
 * at least N programs both refuse with the same errno.  A project the corpus lacks (not built here) is not
 * checked, so a corpus of fewer projects passes as well as the full one.  Returns 1 when
 * one is below its floor. */
static int check_floors(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], proj[128];
	long v;
	int fail = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct totals t;

		char what[16];
		size_t have;

		if (sscanf(line, "%15s %127s %ld", what, proj, &v) != 3)
			continue;
		count(&t, proj);
		if (!t.progs)
			continue;
		if (!strcmp(what, "floor"))
			have = t.both_ok;
		else if (!strcmp(what, "runs"))
			have = t.runs_same + t.runs_known;
		else if (!strcmp(what, "errno"))
			have = t.errno_agree;
		else
			continue;
		if ((long)have < v) {
			printf("FAIL: %s: %s %zu, below the floor %ld of %s\n", proj,
			       !strcmp(what, "floor") ? "bpfrt accepts of the kernel's programs" :
			       !strcmp(what, "runs") ? "test runs without an unexplained difference" :
			       "both refuse with the same errno", have, v, path);
			fail = 1;
		}
	}
	fclose(f);
	return fail;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("BPFRT_CORPUS_DIR"), *report = NULL;
	const char *baseline = BPFRT_SOURCE_DIR "/tests/corpus/baseline.txt";
	char home_dir[512];
	struct totals t = { 0 };
	size_t nproj;
	char **projs;
	FILE *rep = NULL;
	int opt, fail = 0;

	while ((opt = getopt(argc, argv, "vr:b:p:l:h")) != -1) {
		if (opt == 'v')
			verbose = 1;
		else if (opt == 'p')
			only = optarg;
		else if (opt == 'l')
			logdir = optarg;
		else if (opt == 'r')
			report = optarg;
		else if (opt == 'b')
			baseline = optarg;
		else {
			fprintf(stderr, "usage: %s [-v] [-r REPORT.tsv] [-b BASELINE] "
				"[-p GLOB [-l LOGDIR]] [CORPUS_DIR]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind < argc)
		dir = argv[optind];
	if (!dir || !*dir) {
		const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

		if (cache && *cache)
			snprintf(home_dir, sizeof(home_dir), "%s/bpfrt-corpus", cache);
		else
			snprintf(home_dir, sizeof(home_dir), "%s/.cache/bpfrt-corpus",
				 home ? home : "/root");
		dir = home_dir;
	}
	projs = sorted_dir(dir, &nproj, 1);
	if (!projs || !nproj) {
		printf("skipped: no corpus at %s (build it with scripts/corpus.sh)\n", dir);
		return 77;
	}
	if (geteuid()) {
		printf("skipped: needs root (loads programs into the kernel)\n");
		return 77;
	}
	read_rules(BPFRT_SOURCE_DIR "/tests/corpus/types.txt");
	read_byte_rules(baseline);
	libbpf_set_print(libbpf_print);
	bpfrt_set_print(bpfrt_print_cb);
	/* pinned maps (LIBBPF_PIN_BY_NAME, tc's pinning) go to a bpffs of our own, so that
	 * nothing is left behind and no pin of the host is reused */
	snprintf(kpin, sizeof(kpin), "/tmp/bpfrt-corpus-bpffs.XXXXXX");
	if (!mkdtemp(kpin) || mount("bpf", kpin, "bpf", 0, NULL)) {
		printf("skipped: cannot mount a bpffs for pinned maps: %s\n", strerror(errno));
		return 77;
	}
	snprintf(bfs, sizeof(bfs), "/dev/shm/bpfrt-corpus.XXXXXX");
	if (!mkdtemp(bfs)) {
		perror("mkdtemp");
		return 2;
	}
	setenv("BPFRT_FS", bfs, 1);

	for (size_t i = 0; i < nproj; i++) {
		char pdir[1024];
		size_t nobj;
		char **objs;

		snprintf(pdir, sizeof(pdir), "%s/%s", dir, projs[i]);
		objs = sorted_dir(pdir, &nobj, 0);
		for (size_t j = 0; j < nobj; j++) {
			char path[2048];
			size_t len = strlen(objs[j]);

			if (len > 2 && !strcmp(objs[j] + len - 2, ".o")) {
				snprintf(path, sizeof(path), "%s/%s", pdir, objs[j]);
				one_object(projs[i], objs[j], path);
			}
			free(objs[j]);
		}
		free(objs);
	}
	umount2(kpin, MNT_DETACH);
	rmdir(kpin);
	rm_tree(bfs);

	known_run_differences(baseline);
	if (report)
		rep = fopen(report, "w");
	if (rep)
		fprintf(rep, "program\tsection\ttype\tkernel\tbpfrt\tkernel_errno\tbpfrt_errno\t"
			"type_found\ttest_run\tcategory\tbpfrt_reason\tkernel_reason\t"
			"kernel_insns\tbpfrt_insns\tkernel_us\tbpfrt_us\ttest_run_diff\n");
	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		if (rep)
			fprintf(rep, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%u\t%u\t%llu\t%llu"
				"\t%s%s%s\n",
				r->key,
				r->sec, libbpf_bpf_prog_type_str(r->type) ?
					libbpf_bpf_prog_type_str(r->type) : "?",
				vname(r->kernel), vname(r->bpfrt), r->kernel_err, r->bpfrt_err,
				r->type_found, r->run, r->category, r->bpfrt_why, r->kernel_why,
				r->kernel_insns, r->bpfrt_insns, (unsigned long long)r->kernel_us,
				(unsigned long long)r->bpfrt_us, r->run_diff,
				r->run_why ? "; known: " : "", r->run_why ? r->run_why : "");
		if (r->kernel == V_REFUSED && r->bpfrt == V_OK)
			printf("FALSE ACCEPT: %s (section %s, %s): kernel: %s\n", r->key, r->sec,
			       libbpf_bpf_prog_type_str(r->type), r->kernel_why);
		if (r->run == -1)
			printf("TEST RUN DIFFERS: %s: %s\n", r->key, r->run_diff);
		else if (r->run == -2 && verbose)
			printf("test run differs (known: %s): %s: %s\n", r->run_why, r->key,
			       r->run_diff);
	}
	count(&t, "");
	if (rep)
		fclose(rep);
	printf("corpus %s: %zu projects, %zu programs (%zu more with no known type)\n", dir,
	       nproj, t.progs, t.kernel_na);
	printf("  objects neither libbpf nor bpfrt opens: %zu\n", unreadable);
	printf("  libbpf gave up before the kernel (kernel verdict through bpfrt's loader): %zu\n",
	       t.libbpf_gave_up);
	printf("  kernel accepts        %zu\n", t.kernel_ok);
	printf("  bpfrt accepts         %zu (%.1f %% of the kernel's; %zu both)\n", t.bpfrt_ok,
	       t.kernel_ok ? 100.0 * (double)t.both_ok / (double)t.kernel_ok : 0.0, t.both_ok);
	printf("  false accepts         %zu\n", t.false_accept);
	printf("  both refuse           %zu, same errno %zu\n", t.both_refused, t.errno_agree);
	printf("  section type found    %zu of %zu\n", t.type_found, t.progs);
	printf("  test runs             %zu, same result %zu, differ for a known reason %zu "
	       "(result: errno, retval, output packet, and %zu data maps read after the runs)\n",
	       t.runs, t.runs_same, t.runs_known, t.maps_compared);
	/* one pass, each program loaded alone: wall time, so a shared machine shows in it */
	printf("  load time (open + load/verify + close, one pass): every program: kernel "
	       "%.0f ms, bpfrt %.0f ms (%.2fx); the %zu both accept: kernel %.0f ms, bpfrt "
	       "%.0f ms (%.2fx)\n", t.kernel_ms, t.bpfrt_ms,
	       t.kernel_ms > 0 ? t.bpfrt_ms / t.kernel_ms : 0.0, t.both_ok, t.both_kernel_ms,
	       t.both_bpfrt_ms, t.both_kernel_ms > 0 ? t.both_bpfrt_ms / t.both_kernel_ms : 0.0);
	print_projects(stdout, projs, nproj);
	print_categories(stdout);
	print_processed(stdout);
	if (t.false_accept) {
		size_t known = known_false_accepts(baseline);

		if (t.false_accept > known) {
			printf("FAIL: bpfrt accepts %zu programs the kernel refuses (%zu of them "
			       "known, %s)\n", t.false_accept, known, baseline);
			fail = 1;
		}
	}
	if (!only && check_floors(baseline))
		fail = 1;
	for (size_t i = 0; i < nproj; i++)
		free(projs[i]);
	free(projs);
	for (size_t i = 0; i < nresults; i++)
		free(results[i].run_why);
	for (size_t i = 0; i < nbyte_rules; i++)
		free(byte_rules[i].why);
	free(results);
	return fail;
}
