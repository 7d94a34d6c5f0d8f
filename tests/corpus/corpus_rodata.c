/* corpus_rodata.c - the .rodata a project's loader writes before the load (rodata.txt
 * next to this file), computed from the running kernel's BTF as that loader computes it,
 * and given to both sides alike.  Elastic's event probe reads kernel function arguments
 * at indexes and struct fields at offsets its loader finds in vmlinux BTF (a `const
 * volatile` per function argument, return slot and field, the value's meaning in the
 * variable's name); pwru's CFG holds its default flags and the BTF ids of sk_buff and
 * skb_shared_info; the OpenTelemetry profiler's task_struct and vm_area_struct offsets.  The verifier sees frozen .rodata as known constants, so these values
 * choose which branches it walks: an object loaded with its zeros is not the program the
 * project loads.
 *
 * rodata.txt lines: OBJECT_GLOB VARIABLE[+OFFSET:SIZE] VALUE
 *   OBJECT_GLOB  fnmatch pattern over "project/object.o:program"
 *   VARIABLE     fnmatch pattern over the names of the variables in .rodata or a
 *                .rodata.* section (the object's symbols);
 *                +OFFSET:SIZE writes SIZE bytes at OFFSET inside it (a struct's field),
 *                else the whole variable (its BTF size, at most 8)
 *   VALUE        a number (strtoull base 0); btf_id:NAME, the id of struct NAME in the
 *                kernel's BTF; offset:STRUCT.FIELD[.FIELD...], a field's byte offset
 *                (each part a member of that level or of an anonymous struct or union
 *                in it, as the OpenTelemetry profiler's loader resolves them); or from
 *                the variable's name (Elastic's scheme, two
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

#include <elf.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfrt.h"
#include "corpus_diff.h"

enum value_kind {
	V_NUMBER, V_BTF_ID, V_PATH_OFFSET, V_ARG_INDEX, V_RET_INDEX, V_ARG_EXISTS, V_FIELD_OFFSET
};

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
	char obj[256], var[160], arg[160]; /* arg: btf_id's struct, offset:'s path */
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
		} else if (!strncmp(val, "offset:", 7)) {
			r->kind = V_PATH_OFFSET;
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

/* field's byte offset in t and its type: a member of that name, else one inside an
 * anonymous struct or union member (the OpenTelemetry profiler's resolveBTFField()
 * order: named members of this level first); -1 if none */
static long member_in(struct btf *btf, const struct btf_type *t, const char *field,
		      const struct btf_type **type)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct btf_member *m = btf_members(t);

		for (int i = 0; i < btf_vlen(t); i++, m++) {
			const char *n = btf__name_by_offset(btf, m->name_off);
			const struct btf_type *mt = btf__type_by_id(btf, m->type);
			long at = (long)btf_member_bit_offset(t, (uint32_t)i) / 8, found;

			if (pass == 0 && n && !strcmp(n, field)) {
				*type = mt;
				return at;
			}
			if (pass == 1 && (!n || !*n) && mt && (btf_is_struct(mt) || btf_is_union(mt)) &&
			    (found = member_in(btf, mt, field, type)) >= 0)
				return at + found;
		}
	}
	return -1;
}

/* "STRUCT.F1.F2...": the byte offset of the path's last field, typedefs and modifiers
 * of each field's type skipped; -1 when a part is missing */
static long path_offset(struct btf *btf, const char *path)
{
	char buf[160], *save = NULL, *part;
	const struct btf_type *t = NULL;
	long off = 0;
	int id;

	snprintf(buf, sizeof(buf), "%s", path);
	part = strtok_r(buf, ".", &save);
	id = part ? btf__find_by_name_kind(btf, part, BTF_KIND_STRUCT) : -1;
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	while (t && (part = strtok_r(NULL, ".", &save))) {
		const struct btf_type *ft = NULL;
		long at;

		if (!btf_is_struct(t) && !btf_is_union(t))
			return -1;
		if ((at = member_in(btf, t, part, &ft)) < 0 || !ft)
			return -1;
		off += at;
		while (ft && (btf_is_typedef(ft) || btf_is_mod(ft)))
			ft = btf__type_by_id(btf, ft->type);
		t = ft;
	}
	return t ? off : -1;
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
	if (r->kind == V_PATH_OFFSET) {
		n = path_offset(btf, r->arg);
		*v = (unsigned long long)n;
		return n >= 0 ? 0 : -1;
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

/* ---- the images of an object's read-only sections with the rules applied ---- */

/* .rodata and the custom .rodata.* sections (the OpenTelemetry profiler keeps its
 * variables in .rodata.var): each its own map, named "<object>.rodata" by libbpf for the
 * first and after the section for the others; bpfrt names them alike */
#define MAX_SECS 4
static struct {
	char path[1024];
	struct image {
		char sec[64]; /* ".rodata", ".rodata.var" */
		void *img;
		size_t size;
		unsigned writes;
	} secs[MAX_SECS];
	size_t nsecs;
} cache;

/* the section a global data map holds when it is a read-only one, else NULL */
static const char *rodata_sec(const char *map)
{
	const char *r = strstr(map, ".rodata");

	return r && (!r[7] || r[7] == '.') ? r : NULL;
}

/* the rules on one section's image, its variables found by the object's symbols */
static void apply(const Elf64_Sym *syms, size_t nsyms, const char *strtab, size_t strsz,
		  unsigned shndx, struct image *im, const char *key)
{
	for (size_t i = 0; i < nsyms; i++) {
		const Elf64_Sym *sy = &syms[i];
		const char *name = sy->st_name < strsz ? strtab + sy->st_name : NULL;

		if (sy->st_shndx != shndx || ELF64_ST_TYPE(sy->st_info) != STT_OBJECT || !name ||
		    !memchr(name, 0, strsz - sy->st_name))
			continue;
		for (size_t k = 0; k < nrules; k++) {
			const struct rodata_rule *r = &rules[k];
			unsigned long long v;
			size_t at = sy->st_value, len = sy->st_size;

			if (fnmatch(r->obj, key, 0) || fnmatch(r->var, name, 0))
				continue;
			if (r->off >= 0) {
				at += (size_t)r->off;
				len = r->size;
				if ((size_t)r->off + len > sy->st_size)
					continue;
			}
			if (!len || len > 8 || at > im->size || im->size - at < len ||
			    value_of(r, name, &v))
				continue;
			memcpy((char *)im->img + at, &v, len); /* little-endian host */
			im->writes++;
			if (verbose)
				fprintf(stderr, "%s: %s %s+%zu = %llu (rodata.txt)\n", cache.path,
					im->sec, name, at - (size_t)sy->st_value, v);
		}
	}
}

/* the object's read-only data sections (".rodata", ".rodata.*" holding variables) read
 * from its ELF file, each with the rules applied: the loaders' maps start from these
 * bytes (their initial values), so the image is the same for libbpf and bpfrt, and for
 * objects libbpf 1.1 does not open (static programs) */
static void compute(const char *path, const char *key)
{
	FILE *f = fopen(path, "rb");
	char *file = NULL;
	long n;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *symsh = NULL;
	const char *shstr;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < (long)sizeof(Elf64_Ehdr) ||
	    fseek(f, 0, SEEK_SET) || !(file = malloc((size_t)n)) ||
	    fread(file, 1, (size_t)n, f) != (size_t)n)
		goto out;
	eh = (const Elf64_Ehdr *)file;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > (size_t)n ||
	    eh->e_shnum > ((size_t)n - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum)
		goto out;
	sh = (const Elf64_Shdr *)(file + eh->e_shoff);
#define IN_FILE(s) ((s)->sh_offset <= (size_t)n && (s)->sh_size <= (size_t)n - (s)->sh_offset)
	if (!IN_FILE(&sh[eh->e_shstrndx]))
		goto out;
	shstr = file + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB && IN_FILE(&sh[i]) && sh[i].sh_link < eh->e_shnum &&
		    IN_FILE(&sh[sh[i].sh_link]))
			symsh = &sh[i];
	for (unsigned i = 0; symsh && i < eh->e_shnum && cache.nsecs < MAX_SECS; i++) {
		const char *name = sh[i].sh_name < sh[eh->e_shstrndx].sh_size ?
					   shstr + sh[i].sh_name : NULL;
		struct image *im = &cache.secs[cache.nsecs];

		if (!name || sh[i].sh_type != SHT_PROGBITS || !IN_FILE(&sh[i]) || !sh[i].sh_size ||
		    strncmp(name, ".rodata", 7) || (name[7] && name[7] != '.') ||
		    !memchr(name, 0, sh[eh->e_shstrndx].sh_size - sh[i].sh_name) ||
		    !(im->img = malloc(sh[i].sh_size)))
			continue;
		memcpy(im->img, file + sh[i].sh_offset, sh[i].sh_size);
		im->size = sh[i].sh_size;
		snprintf(im->sec, sizeof(im->sec), "%s", name);
		cache.nsecs++;
		apply((const Elf64_Sym *)(file + symsh->sh_offset),
		      symsh->sh_size / sizeof(Elf64_Sym), file + sh[symsh->sh_link].sh_offset,
		      sh[symsh->sh_link].sh_size, i, im, key);
	}
#undef IN_FILE
out:
	free(file);
	if (f)
		fclose(f);
}

static void drop_cache(void)
{
	for (size_t i = 0; i < cache.nsecs; i++)
		free(cache.secs[i].img);
	memset(&cache, 0, sizeof(cache));
}

/* the image of the read-only section a map named map holds, for the object at path
 * (key: a program of it), NULL when no rule wrote into it; computed once per object */
static const void *rodata_image(const char *path, const char *key, const char *map,
				size_t *size)
{
	const char *sec = rodata_sec(map);
	size_t k;

	for (k = 0; k < nrules; k++)
		if (!fnmatch(rules[k].obj, key, 0))
			break;
	if (k == nrules || !sec)
		return NULL;
	if (strcmp(cache.path, path)) {
		drop_cache();
		snprintf(cache.path, sizeof(cache.path), "%s", path);
		compute(path, key);
	}
	for (k = 0; k < cache.nsecs; k++)
		if (!strcmp(cache.secs[k].sec, sec) && cache.secs[k].writes) {
			*size = cache.secs[k].size;
			return cache.secs[k].img;
		}
	return NULL;
}

void rodata_libbpf(struct bpf_object *obj, const char *path, const char *key)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		size_t size, have;
		const void *img = rodata_image(path, key, bpf_map__name(m), &size);

		if (img && bpf_map__initial_value(m, &have) && have == size)
			bpf_map__set_initial_value(m, img, size);
	}
}

void rodata_bpfrt(struct bpfrt_object *obj, const char *path, const char *key)
{
	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); m;
	     m = bpfrt_object_next_map(obj, m)) {
		size_t size, have;
		const void *img = rodata_image(path, key, bpfrt_map__name(m), &size);

		if (img && bpfrt_map__initial_value(m, &have) && have == size)
			bpfrt_map__set_initial_value(m, img, size);
	}
}

void free_rodata(void)
{
	drop_cache();
}
