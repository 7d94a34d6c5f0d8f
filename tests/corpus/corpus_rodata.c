/* corpus_rodata.c - the .rodata a project's loader writes before the load (rodata.txt
 * next to this file), computed from the running kernel's BTF as that loader computes it,
 * and given to both sides alike.  Elastic's event probe reads kernel function arguments
 * at indexes and struct fields at offsets its loader finds in vmlinux BTF (a `const
 * volatile` per function argument, return slot and field, the value's meaning in the
 * variable's name); pwru's CFG holds its default flags and the BTF ids of sk_buff and
 * skb_shared_info.  The verifier sees frozen .rodata as known constants, so these values
 * choose which branches it walks: an object loaded with its zeros is not the program the
 * project loads.
 *
 * rodata.txt lines: OBJECT_GLOB VARIABLE[+OFFSET:SIZE] VALUE
 *   OBJECT_GLOB  fnmatch pattern over "project/object.o:program"
 *   VARIABLE     fnmatch pattern over the names of .rodata's variables (its BTF DATASEC);
 *                +OFFSET:SIZE writes SIZE bytes at OFFSET inside it (a struct's field),
 *                else the whole variable (its BTF size, at most 8)
 *   VALUE        a number (strtoull base 0); btf_id:NAME, the id of struct NAME in the
 *                kernel's BTF; or from the variable's name (Elastic's scheme, two
 *                underscores between the parts, the name ending in two):
 *                arg_index   arg__FUNC__ARG__    index of parameter ARG of function FUNC
 *                ret_index   ret__FUNC__         FUNC's parameter count (the return slot
 *                                                of a fexit program's context)
 *                arg_exists  exists__FUNC__ARG__ 1 when FUNC has a parameter ARG
 *                field_offset off__STRUCT__FIELD__ byte offset of FIELD in struct STRUCT,
 *                                                the first in member order, nested
 *                                                structs and unions searched in place
 * A value the kernel's BTF cannot answer (no such function, parameter, field) leaves the
 * variable as the object has it, as the loader leaves what it does not fill.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfrt.h"
#include "corpus_diff.h"

enum value_kind { V_NUMBER, V_BTF_ID, V_ARG_INDEX, V_RET_INDEX, V_ARG_EXISTS, V_FIELD_OFFSET };

static const struct {
	const char *word, *prefix; /* VALUE word; the variable name's prefix it parses */
	enum value_kind kind;
} kinds[] = {
	{ "arg_index", "arg__", V_ARG_INDEX },
	{ "ret_index", "ret__", V_RET_INDEX },
	{ "arg_exists", "exists__", V_ARG_EXISTS },
	{ "field_offset", "off__", V_FIELD_OFFSET },
};

struct rodata_rule {
	char obj[256], var[160], arg[160]; /* arg: btf_id's struct name */
	enum value_kind kind;
	unsigned long long number;
	long off;      /* -1: the whole variable */
	unsigned size; /* with off */
};

static struct rodata_rule rules[32];
static size_t nrules;

void read_rodata_rules(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], obj[256], var[160], val[160];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nrules < sizeof(rules) / sizeof(rules[0])) {
		struct rodata_rule *r = &rules[nrules];
		char *plus, *end;

		if (line[0] == '#' || sscanf(line, "%255s %159s %159s", obj, var, val) != 3)
			continue;
		memset(r, 0, sizeof(*r));
		r->off = -1;
		if ((plus = strchr(var, '+'))) {
			*plus = 0;
			r->off = strtol(plus + 1, &end, 0);
			r->size = *end == ':' ? (unsigned)strtoul(end + 1, NULL, 0) : 0;
			if (r->off < 0 || !r->size || r->size > 8) {
				fprintf(stderr, "rodata.txt: %s: +OFFSET:SIZE (size 1..8) wanted\n", var);
				continue;
			}
		}
		snprintf(r->obj, sizeof(r->obj), "%s", obj);
		snprintf(r->var, sizeof(r->var), "%s", var);
		if (!strncmp(val, "btf_id:", 7)) {
			r->kind = V_BTF_ID;
			snprintf(r->arg, sizeof(r->arg), "%s", val + 7);
		} else {
			size_t k;

			for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
				if (!strcmp(val, kinds[k].word))
					break;
			if (k < sizeof(kinds) / sizeof(kinds[0])) {
				r->kind = kinds[k].kind;
			} else {
				r->kind = V_NUMBER;
				errno = 0;
				r->number = strtoull(val, &end, 0);
				if (errno || *end) {
					fprintf(stderr, "rodata.txt: %s: not a value\n", val);
					continue;
				}
			}
		}
		nrules++;
	}
	fclose(f);
}

/* ---- answers from the kernel's BTF ---- */

static struct btf *vmlinux(void)
{
	static struct btf *btf;
	static int tried;

	if (!tried) {
		tried = 1;
		btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			btf = NULL;
	}
	return btf;
}

/* the prototype of the first function named func (in id order), or NULL */
static const struct btf_type *func_proto(struct btf *btf, const char *func)
{
	int id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	t = t ? btf__type_by_id(btf, t->type) : NULL;
	return t && btf_is_func_proto(t) ? t : NULL;
}

static int param_index(struct btf *btf, const char *func, const char *arg)
{
	const struct btf_type *p = func_proto(btf, func);
	const struct btf_param *params = p ? btf_params(p) : NULL;

	for (int i = 0; p && i < btf_vlen(p); i++) {
		const char *n = btf__name_by_offset(btf, params[i].name_off);

		if (n && !strcmp(n, arg))
			return i;
	}
	return -1;
}

/* field's byte offset in t (base bits in), depth first in member order: a member of
 * that name, else one inside a member that is itself a struct or union; -1 if none */
static long field_in(struct btf *btf, const struct btf_type *t, long base, const char *field)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *mt = btf__type_by_id(btf, m->type);
		long bits = base + (long)btf_member_bit_offset(t, (uint32_t)i), found;

		if (n && !strcmp(n, field))
			return bits / 8;
		if (mt && (btf_is_struct(mt) || btf_is_union(mt)) &&
		    (found = field_in(btf, mt, bits, field)) >= 0)
			return found;
	}
	return -1;
}

static long field_offset(struct btf *btf, const char *st, const char *field)
{
	int id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	return t ? field_in(btf, t, 0, field) : -1;
}

/* a two-part name (FUNC__ARG, STRUCT__FIELD) split at each "__" in turn, as either part
 * may hold "__" itself (off__iov_iter____iov__): the first split the BTF answers wins */
static int two_parts(struct btf *btf, enum value_kind kind, const char *mid, long *out)
{
	for (const char *s = strstr(mid, "__"); s; s = strstr(s + 1, "__")) {
		char a[128];
		const char *b = s + 2;
		long v;

		if (s == mid || !*b || (size_t)(s - mid) >= sizeof(a))
			continue;
		snprintf(a, sizeof(a), "%.*s", (int)(s - mid), mid);
		if (kind == V_FIELD_OFFSET)
			v = field_offset(btf, a, b);
		else
			v = param_index(btf, a, b);
		if (v >= 0) {
			*out = kind == V_ARG_EXISTS ? 1 : v;
			return 0;
		}
	}
	return -1;
}

/* the value of rule r for variable var, 0 when the kernel's BTF answers it */
static int value_of(const struct rodata_rule *r, const char *var, unsigned long long *v)
{
	struct btf *btf = vmlinux();
	char mid[128];
	size_t len, plen;
	long n = -1;
	const char *prefix = NULL;

	if (r->kind == V_NUMBER) {
		*v = r->number;
		return 0;
	}
	if (!btf)
		return -1;
	if (r->kind == V_BTF_ID) {
		n = btf__find_by_name_kind(btf, r->arg, BTF_KIND_STRUCT);
		*v = (unsigned long long)n;
		return n > 0 ? 0 : -1;
	}
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (kinds[k].kind == r->kind)
			prefix = kinds[k].prefix;
	plen = strlen(prefix);
	len = strlen(var);
	if (strncmp(var, prefix, plen) || len < plen + 3 || strcmp(var + len - 2, "__") ||
	    len - plen - 2 >= sizeof(mid))
		return -1;
	snprintf(mid, sizeof(mid), "%.*s", (int)(len - plen - 2), var + plen);
	if (r->kind == V_RET_INDEX) {
		const struct btf_type *p = func_proto(btf, mid);

		n = p ? btf_vlen(p) : -1;
	} else if (two_parts(btf, r->kind, mid, &n)) {
		return -1;
	}
	*v = (unsigned long long)n;
	return n >= 0 ? 0 : -1;
}

/* ---- the image of an object's .rodata with the rules applied ---- */

static struct {
	char path[1024];
	void *img; /* NULL: no rule applies (or no .rodata) */
	size_t size;
	unsigned writes;
} cache;

static int is_rodata(const char *name)
{
	size_t n = strlen(name);

	return n >= 7 && !strcmp(name + n - 7, ".rodata");
}

/* the rules on obj's .rodata (libbpf's view: its DATASEC has the variables' offsets) */
static void compute(struct bpf_object *obj, const char *key)
{
	struct btf *ob = bpf_object__btf(obj);
	struct bpf_map *m, *ro = NULL;
	const struct btf_type *sec;
	const struct btf_var_secinfo *vs;
	const void *init;
	size_t size;
	int id;

	bpf_object__for_each_map(m, obj)
		if (is_rodata(bpf_map__name(m)))
			ro = m;
	init = ro ? bpf_map__initial_value(ro, &size) : NULL;
	id = ob ? btf__find_by_name_kind(ob, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!init || id <= 0 || !(cache.img = malloc(size)))
		return;
	memcpy(cache.img, init, size);
	cache.size = size;
	sec = btf__type_by_id(ob, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(ob, vs->type);
		const char *name = var ? btf__name_by_offset(ob, var->name_off) : NULL;

		for (size_t k = 0; name && k < nrules; k++) {
			const struct rodata_rule *r = &rules[k];
			unsigned long long v;
			size_t at = vs->offset, len = vs->size;

			if (fnmatch(r->obj, key, 0) || fnmatch(r->var, name, 0))
				continue;
			if (r->off >= 0) {
				at += (size_t)r->off;
				len = r->size;
				if ((size_t)r->off + len > vs->size)
					continue;
			}
			if (len > 8 || at + len > size || value_of(r, name, &v))
				continue;
			memcpy((char *)cache.img + at, &v, len); /* little-endian host */
			cache.writes++;
			if (verbose)
				fprintf(stderr, "%s: .rodata %s+%zu = %llu (rodata.txt)\n", cache.path,
					name, at - vs->offset, v);
		}
	}
}

/* the .rodata image for the object at path (key: a program of it), NULL when no rule
 * applies; computed once per object with libbpf's view of its BTF */
static const void *rodata_image(const char *path, const char *key, size_t *size)
{
	size_t k;

	for (k = 0; k < nrules; k++)
		if (!fnmatch(rules[k].obj, key, 0))
			break;
	if (k == nrules)
		return NULL;
	if (strcmp(cache.path, path)) {
		struct bpf_object *obj;

		free(cache.img);
		memset(&cache, 0, sizeof(cache));
		snprintf(cache.path, sizeof(cache.path), "%s", path);
		obj = bpf_object__open_file(path, NULL);
		if (obj && !libbpf_get_error(obj)) {
			compute(obj, key);
			bpf_object__close(obj);
		}
	}
	*size = cache.size;
	return cache.writes ? cache.img : NULL;
}

void rodata_libbpf(struct bpf_object *obj, const char *path, const char *key)
{
	size_t size;
	const void *img = rodata_image(path, key, &size);
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		size_t have;

		if (img && is_rodata(bpf_map__name(m)) && bpf_map__initial_value(m, &have) &&
		    have == size)
			bpf_map__set_initial_value(m, img, size);
	}
}

void rodata_bpfrt(struct bpfrt_object *obj, const char *path, const char *key)
{
	size_t size;
	const void *img = rodata_image(path, key, &size);

	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); img && m;
	     m = bpfrt_object_next_map(obj, m)) {
		size_t have;

		if (is_rodata(bpfrt_map__name(m)) && bpfrt_map__initial_value(m, &have) &&
		    have == size)
			bpfrt_map__set_initial_value(m, img, size);
	}
}

void free_rodata(void)
{
	free(cache.img);
	memset(&cache, 0, sizeof(cache));
}
