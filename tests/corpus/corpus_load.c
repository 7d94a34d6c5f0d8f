/* corpus_load.c - the corpus differential's loads (corpus_diff.c says how it works): one
 * program of an object loaded alone on each side, the kernel's through libbpf (or
 * bpfrt's loader in kernel mode when libbpf cannot open the object), bpfrt's through
 * bpfrt_object_*, with the messages and verdicts of each.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfrt.h"
#include "corpus_diff.h"

/* ---- captured messages (libbpf's and bpfrt's print callbacks) ---- */

char libbpf_msgs[LOG_CAP];
char bpfrt_msgs[LOG_CAP];

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
void capture_messages(void)
{
	libbpf_set_print(libbpf_print);
	bpfrt_set_print(bpfrt_print_cb);
}

/* ---- program types for sections that name none (types.txt) ---- */

struct type_rule {
	char glob[256];     /* project/object.o:section, fnmatch pattern */
	char type[64];      /* program type name as bpftool spells it */
	int attach;         /* "attach=N": expected_attach_type (a number: this host's
			     * libbpf 1.1 names none of the newer ones), else -1 */
	uint32_t flags;     /* "sleepable": BPF_F_SLEEPABLE */
};

static struct type_rule rules[128];
static size_t nrules;

void read_rules(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nrules < sizeof(rules) / sizeof(rules[0])) {
		struct type_rule *r = &rules[nrules];
		char extra[2][32] = { "", "" };

		if (line[0] == '#' || sscanf(line, "%255s %63s %31s %31s", r->glob, r->type,
					     extra[0], extra[1]) < 2)
			continue;
		r->attach = -1;
		r->flags = 0;
		for (int i = 0; i < 2; i++) {
			if (!strncmp(extra[i], "attach=", 7))
				r->attach = atoi(extra[i] + 7);
			else if (!strcmp(extra[i], "sleepable"))
				r->flags |= BPF_F_SLEEPABLE;
			else if (extra[i][0])
				fprintf(stderr, "types.txt: %s: unknown word %s\n", r->glob, extra[i]);
		}
		nrules++;
	}
	fclose(f);
}

static enum bpf_prog_type type_by_name(const char *name)
{
	/* a number: a type newer than this libbpf names (netfilter: 1.2) */
	if (name[0] >= '1' && name[0] <= '9' && strspn(name, "0123456789") == strlen(name))
		return (enum bpf_prog_type)atoi(name);
	for (int t = 1; t < 64; t++) {
		const char *n = libbpf_bpf_prog_type_str((enum bpf_prog_type)t);

		if (n && !strcmp(n, name))
			return (enum bpf_prog_type)t;
	}
	return BPF_PROG_TYPE_UNSPEC;
}

enum bpf_prog_type rule_type(const char *key, int *attach, uint32_t *flags)
{
	for (size_t i = 0; i < nrules; i++)
		if (!fnmatch(rules[i].glob, key, 0)) {
			*attach = rules[i].attach;
			*flags = rules[i].flags;
			return type_by_name(rules[i].type);
		}
	return BPF_PROG_TYPE_UNSPEC;
}

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

void last_line(char *dst, size_t len, const char *log)
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
	switch (type) {
	/* storage maps keyed by a kernel object: the kernel wants max_entries 0 (EINVAL
	 * otherwise), and no loader sizes them */
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
	case 32: /* BPF_MAP_TYPE_CGRP_STORAGE (6.2; the system uapi header may be older) */
	case BPF_MAP_TYPE_CGROUP_STORAGE:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
		return 0;
	default:
		break;
	}
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

/* ---- what a project's own loader does before the load (both sides alike) ---- */

/* Tracee (libbpfgo) leaves out the maps of types the kernel lacks (its
 * BPFMapTypeIsSupported(), which is libbpf_probe_bpf_map_type(), then SetAutocreate(false)):
 * here its features_test_arena, an arena this kernel refuses (EPERM). */
static int skips_missing_map_types(const char *key)
{
	return !fnmatch("tracee/*", key, 0);
}

static int map_type_missing(uint32_t type)
{
	static signed char probed[64]; /* 0 not yet, 1 supported, 2 missing */

	if (type >= sizeof(probed))
		return 1;
	if (!probed[type])
		probed[type] = libbpf_probe_bpf_map_type((enum bpf_map_type)type, NULL) == 1 ? 1 : 2;
	return probed[type] == 2;
}

/* Projects loaded by cilium/ebpf (Go), whose MapSpec.fixupMagicFields() completes a perf
 * event array before creating it: 4-byte keys and values where the definition gives none
 * (Retina's declare only type and max_entries, which the kernel refuses as libbpf passes
 * them: EINVAL; OpenTelemetry Go's, SkyWalking Rover's and KubeSkoop's declare the type
 * alone), and
 * max_entries clamped to the possible CPUs (Retina's 16384), as a CPU
 * map's.  (Projects added before session 18 that use it keep libbpf's rules: their
 * definitions need none of this.) */
static int cilium_ebpf_loader(const char *key)
{
	static const char *const globs[] = { "retina/*", "kubeshark/*", "kmesh/*", "otel-go/*",
					     "skywalking-rover/*", "kubeskoop/*" };

	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++)
		if (!fnmatch(globs[i], key, 0))
			return 1;
	return 0;
}

/* the fixed key size, value size and max_entries for a map of this type and definition
 * under that loader: 0 in *max keeps the definition's */
static void cilium_ebpf_fixup(uint32_t type, uint32_t *key, uint32_t *value, uint32_t *max)
{
	uint32_t n = (uint32_t)libbpf_num_possible_cpus();

	if (type == BPF_MAP_TYPE_PERF_EVENT_ARRAY) {
		*key = 4;
		*value = 4;
	}
	if (type != BPF_MAP_TYPE_PERF_EVENT_ARRAY && type != BPF_MAP_TYPE_CPUMAP)
		*max = 0;
	else if (*max == 0 || *max > n)
		*max = n;
	else
		*max = 0;
}

/* Maps whose key and value sizes the project's user space sets before the load (the
 * object's definition leaves 0): both sides get them, as its loader would. */
static const struct size_rule {
	const char *glob, *map;
	uint32_t key, value;
} size_rules[] = {
	/* tubular's dispatcher (internal/dispatcher.go): destinations' key is the Go struct
	 * destinationKey (a 255-byte label, domain and protocol bytes: 257), its value
	 * destinationAlloc (id and count: 8) */
	{ "tubular/*", "destinations", 257, 8 },
};

/* the size rule of this map: its key and value sizes into *key, *value */
static void size_rule(const char *key, const char *map, uint32_t *ks, uint32_t *vs)
{
	for (size_t i = 0; i < sizeof(size_rules) / sizeof(size_rules[0]); i++)
		if (!strcmp(size_rules[i].map, map) && !fnmatch(size_rules[i].glob, key, 0)) {
			*ks = size_rules[i].key;
			*vs = size_rules[i].value;
		}
}

/* Maps of maps whose objects carry no inner template: the project's user space creates
 * them with their inner map (both sides get the inner map as the loader's input). */
static const struct outer_rule {
	const char *glob, *map;
	uint32_t type, key, value, max;
} outer_rules[] = {
	/* KubeArmor's agent (enforcer/bpflsm/enforcer.go) creates and pins
	 * kubearmor_containers with an inner hash of key 400, value 4, 256 entries */
	{ "kubearmor/*", "kubearmor_containers", BPF_MAP_TYPE_HASH, 400, 4, 256 },
	/* its system monitor (monitor/systemMonitor.go) kubearmor_visibility, inner hash of
	 * key 4, value 4, 6 entries */
	{ "kubearmor/*", "kubearmor_visibility", BPF_MAP_TYPE_HASH, 4, 4, 6 },
	/* systemd's restrict-fs (src/core/bpf-lsm.c) gives cgroup_hash a "dummy map to satisfy
	 * the verifier": a hash of key 4, value 4, 128 entries */
	{ "systemd/restrict-fs.o:*", "cgroup_hash", BPF_MAP_TYPE_HASH, 4, 4, 128 },
};

static const struct outer_rule *outer_rule(const char *key, const char *map)
{
	for (size_t i = 0; i < sizeof(outer_rules) / sizeof(outer_rules[0]); i++)
		if (!strcmp(outer_rules[i].map, map) && !fnmatch(outer_rules[i].glob, key, 0))
			return &outer_rules[i];
	return NULL;
}

static int inner_for(const struct outer_rule *o, int (*sys)(int, union bpf_attr *, unsigned int))
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = o->type;
	a.key_size = o->key;
	a.value_size = o->value;
	a.max_entries = o->max;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -1 : fd;
}

static int kernel_sys(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* the rules above on libbpf's object; inner map fds to fds[] (to close after the load) */
static size_t project_maps_libbpf(struct bpf_object *obj, const char *key, int *fds,
				  size_t nfds)
{
	struct bpf_map *m;
	size_t k = 0;

	bpf_object__for_each_map(m, obj) {
		const struct outer_rule *o = outer_rule(key, bpf_map__name(m));
		int fd;

		if (skips_missing_map_types(key) && map_type_missing(bpf_map__type(m)))
			bpf_map__set_autocreate(m, false);
		{
			uint32_t ks = bpf_map__key_size(m), vs = bpf_map__value_size(m);
			uint32_t max = 0;

			if (cilium_ebpf_loader(key)) {
				max = bpf_map__max_entries(m);
				cilium_ebpf_fixup(bpf_map__type(m), &ks, &vs, &max);
			}
			size_rule(key, bpf_map__name(m), &ks, &vs);
			if (ks != bpf_map__key_size(m))
				bpf_map__set_key_size(m, ks);
			if (vs != bpf_map__value_size(m))
				bpf_map__set_value_size(m, vs);
			if (max)
				bpf_map__set_max_entries(m, max);
		}
		if (o && k < nfds && (fd = inner_for(o, kernel_sys)) >= 0) {
			if (bpf_map__set_inner_map_fd(m, fd))
				close(fd);
			else
				fds[k++] = fd;
		}
	}
	return k;
}

static size_t project_maps_bpfrt(struct bpfrt_object *obj, const char *key, int kernel,
				 int *fds, size_t nfds)
{
	size_t k = 0;

	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); m;
	     m = bpfrt_object_next_map(obj, m)) {
		const struct outer_rule *o = outer_rule(key, bpfrt_map__name(m));
		int fd;

		if (skips_missing_map_types(key) && map_type_missing(bpfrt_map__type(m)))
			bpfrt_map__set_autocreate(m, 0);
		{
			uint32_t ks = bpfrt_map__key_size(m), vs = bpfrt_map__value_size(m);
			uint32_t max = 0;

			if (cilium_ebpf_loader(key)) {
				max = bpfrt_map__max_entries(m);
				cilium_ebpf_fixup(bpfrt_map__type(m), &ks, &vs, &max);
			}
			size_rule(key, bpfrt_map__name(m), &ks, &vs);
			if (ks != bpfrt_map__key_size(m))
				bpfrt_map__set_key_size(m, ks);
			if (vs != bpfrt_map__value_size(m))
				bpfrt_map__set_value_size(m, vs);
			if (max)
				bpfrt_map__set_max_entries(m, max);
		}
		if (o && k < nfds && (fd = inner_for(o, kernel ? kernel_sys : bpfrt_bpf)) >= 0) {
			if (bpfrt_map__set_inner_map_fd(m, fd))
				close(fd);
			else
				fds[k++] = fd;
		}
	}
	return k;
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


/* Open with libbpf; programs are matched by name. */
struct bpf_object *k_open(const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = kpin);
	struct bpf_object *obj;

	libbpf_msgs[0] = 0;
	obj = bpf_object__open_file(path, &o);
	return obj && !libbpf_get_error(obj) ? obj : NULL;
}

/* Load one program with libbpf; returns the object (kept open for the test run) or NULL
 * with r->kernel_err set. */
struct bpf_object *k_load_libbpf(const char *path, struct result *r, const char *name,
					int *fd)
{
	struct bpf_object *obj = k_open(path);
	struct bpf_program *p, *me = NULL;
	int err;

	keep_log(0, "");
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
	if (r->rule_attach >= 0)
		bpf_program__set_expected_attach_type(me, (enum bpf_attach_type)r->rule_attach);
	if (r->rule_flags)
		bpf_program__set_flags(me, bpf_program__flags(me) | r->rule_flags);
	int inner_fds[8];
	size_t ninner = size_libbpf_maps(obj, inner_fds, 8);

	ninner += project_maps_libbpf(obj, r->key, inner_fds + ninner, 8 - ninner);
	rodata_libbpf(obj, path, r->key);
	static char klog[LOG1_SIZE];
	const char *vt;

	klog[0] = 0;
	/* a level-1 log holds a whole path (up to a million lines): room for it, as the
	 * kernel refuses with ENOSPC a log it had to cut */
	bpf_program__set_log_buf(me, klog, logdir || (log_level_req & 1) ? sizeof(klog)
								   : (1u << 20));
	bpf_program__set_log_level(me, logdir ? 4 | 2 | (uint32_t)logdir_fixed
					      : (uint32_t)log_level_req);
	libbpf_msgs[0] = 0;
	err = bpf_object__load(obj);
	while (ninner)
		close(inner_fds[--ninner]);
	if (logdir)
		save_log(r->key, "kernel", klog);
	else
		keep_log(0, klog);
	vt = strstr(klog, "verification time ");
	r->kernel_us = vt ? strtoull(vt + 18, NULL, 10) : 0;
	r->timed = vt != NULL;
	if (err) {
		r->kernel = V_REFUSED;
		r->kernel_err = -err;
		/* libbpf prints a program's log only from a buffer it owns: with klog set, the
		 * verifier's words (a host deviation's "cannot use helper", corpus_report.c) are
		 * there, not in its messages */
		if (klog[0])
			last_line(r->kernel_why, sizeof(r->kernel_why), klog);
		else
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

struct bpfrt_object *b_load(const char *path, struct result *r, const char *name,
				   int kernel, int *fd)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .kernel = kernel,
					    .pin_root_path = kernel ? kpin : NULL,
					    .log_level = logdir ? (kernel ? 2 : 4 | 2) |
									  (uint32_t)logdir_fixed
								: (uint32_t)log_level_req,
					    .log_size = logdir || (log_level_req & 1) ? LOG1_SIZE : 0 };
	struct bpfrt_object *obj;
	struct bpfrt_program *p, *me = NULL;
	enum verdict *v = kernel ? &r->kernel : &r->bpfrt;
	int *err = kernel ? &r->kernel_err : &r->bpfrt_err;
	char *why = kernel ? r->kernel_why : r->bpfrt_why;
	size_t whylen = kernel ? sizeof(r->kernel_why) : sizeof(r->bpfrt_why);

	bpfrt_msgs[0] = 0;
	keep_log(kernel ? 0 : 1, "");
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
	int inner_fds[8];
	size_t ninner = project_maps_bpfrt(obj, r->key, kernel, inner_fds, 8);

	rodata_bpfrt(obj, path, r->key);

	if (!kernel)
		r->type_found = bpfrt_program_type(me) == r->type;
	if (bpfrt_program_type(me) != r->type) {
		bpfrt_program_set_type(me, r->type);
		if (r->attach)
			bpfrt_program_set_expected_attach_type(me, r->attach);
	}
	if (r->rule_attach >= 0)
		bpfrt_program_set_expected_attach_type(me, (enum bpf_attach_type)r->rule_attach);
	if (r->rule_flags)
		bpfrt_program_set_flags(me, bpfrt_program_flags(me) | r->rule_flags);
	int lerr = bpfrt_object_load(obj);

	while (ninner)
		close(inner_fds[--ninner]);

	if (logdir) /* -l: the kernel's log too when this loader is its side */
		save_log(r->key, kernel ? "kernel" : "bpfrt", bpfrt_object_log(obj));
	else
		keep_log(kernel ? 0 : 1, bpfrt_object_log(obj));

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
