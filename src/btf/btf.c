/* btf.c - a reader for the .BTF type section clang emits: header and bounds checks, an index
 * from type id to record, name lookup, and the few resolutions the loader needs (strip
 * typedefs and qualifiers, type sizes, array lengths).  Also the .BTF.ext line-info reader.
 * Everything is checked once at parse time so the accessors can trust ids and offsets.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "btf/btf.h"

/* The kernel's limit on typedef/qualifier/array chains (MAX_RESOLVE_DEPTH); a longer chain
 * is either absurd or a loop, and both are rejected. */
#define RESOLVE_DEPTH 32

static int btf_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int btf_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Bytes that follow struct btf_type for each kind, or -1 for a kind we do not know. */
static long extra_size(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		return sizeof(uint32_t);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return sizeof(struct btf_decl_tag);
	default:
		return -1;
	}
}

static const char *const kind_names[NR_BTF_KINDS] = {
	[BTF_KIND_UNKN] = "UNKNOWN",	 [BTF_KIND_INT] = "INT",
	[BTF_KIND_PTR] = "PTR",		 [BTF_KIND_ARRAY] = "ARRAY",
	[BTF_KIND_STRUCT] = "STRUCT",	 [BTF_KIND_UNION] = "UNION",
	[BTF_KIND_ENUM] = "ENUM",	 [BTF_KIND_FWD] = "FWD",
	[BTF_KIND_TYPEDEF] = "TYPEDEF",	 [BTF_KIND_VOLATILE] = "VOLATILE",
	[BTF_KIND_CONST] = "CONST",	 [BTF_KIND_RESTRICT] = "RESTRICT",
	[BTF_KIND_FUNC] = "FUNC",	 [BTF_KIND_FUNC_PROTO] = "FUNC_PROTO",
	[BTF_KIND_VAR] = "VAR",		 [BTF_KIND_DATASEC] = "DATASEC",
	[BTF_KIND_FLOAT] = "FLOAT",	 [BTF_KIND_DECL_TAG] = "DECL_TAG",
	[BTF_KIND_TYPE_TAG] = "TYPE_TAG", [BTF_KIND_ENUM64] = "ENUM64",
};

const char *brt_btf_kind_name(unsigned int kind)
{
	return kind < NR_BTF_KINDS && kind_names[kind] ? kind_names[kind] : "UNKNOWN";
}

/* Kinds whose `type` field names another type (as opposed to holding a size). */
static int has_ref(unsigned int kind)
{
	switch (kind) {
	case BTF_KIND_PTR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FUNC_PROTO:
	case BTF_KIND_VAR:
	case BTF_KIND_TYPE_TAG:
	case BTF_KIND_DECL_TAG:
		return 1;
	default:
		return 0;
	}
}

/* Offset of type id's record from the start of the .BTF section, for messages. */
static uint32_t rec_off(const struct brt_btf *btf, uint32_t id)
{
	return btf->types_file_off +
	       (uint32_t)((const uint8_t *)(const void *)btf->types[id] - btf->type_data);
}

static int check_name(const struct brt_btf *btf, uint32_t id, uint32_t off, char *err,
		      size_t errlen)
{
	if (off >= btf->str_len)
		return btf_err(err, errlen,
			       "offset 0x%x: type [%u]: name offset %u is past the string section "
			       "(%u bytes)", rec_off(btf, id), id, off, btf->str_len);
	return 0;
}

static int check_id(const struct brt_btf *btf, uint32_t id, uint32_t ref, const char *what,
		    char *err, size_t errlen)
{
	if (ref >= btf->ntypes)
		return btf_err(err, errlen,
			       "offset 0x%x: type [%u]: %s refers to type [%u], last is [%u]",
			       rec_off(btf, id), id, what, ref, btf->ntypes - 1);
	return 0;
}

/* Every name offset and type reference inside each record is in range. */
static int check_refs(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen)
{
	const struct btf_type *t = btf->types[id];
	unsigned int kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
	const void *extra = t + 1;
	int ret;

	if ((ret = check_name(btf, id, t->name_off, err, errlen)))
		return ret;
	if (has_ref(kind) && (ret = check_id(btf, id, t->type, "type", err, errlen)))
		return ret;
	if (kind == BTF_KIND_ARRAY) {
		struct btf_array a;

		memcpy(&a, extra, sizeof(a));
		if ((ret = check_id(btf, id, a.type, "element type", err, errlen)) ||
		    (ret = check_id(btf, id, a.index_type, "index type", err, errlen)))
			return ret;
	}
	for (uint32_t i = 0; i < vlen; i++) {
		if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION) {
			struct btf_member m;

			memcpy(&m, (const char *)extra + i * sizeof(m), sizeof(m));
			if ((ret = check_name(btf, id, m.name_off, err, errlen)) ||
			    (ret = check_id(btf, id, m.type, "member type", err, errlen)))
				return ret;
		} else if (kind == BTF_KIND_FUNC_PROTO) {
			struct btf_param p;

			memcpy(&p, (const char *)extra + i * sizeof(p), sizeof(p));
			if ((ret = check_name(btf, id, p.name_off, err, errlen)) ||
			    (ret = check_id(btf, id, p.type, "parameter type", err, errlen)))
				return ret;
		} else if (kind == BTF_KIND_DATASEC) {
			struct btf_var_secinfo v;

			memcpy(&v, (const char *)extra + i * sizeof(v), sizeof(v));
			if ((ret = check_id(btf, id, v.type, "variable", err, errlen)))
				return ret;
		} else if (kind == BTF_KIND_ENUM) {
			struct btf_enum e;

			memcpy(&e, (const char *)extra + i * sizeof(e), sizeof(e));
			if ((ret = check_name(btf, id, e.name_off, err, errlen)))
				return ret;
		} else if (kind == BTF_KIND_ENUM64) {
			struct btf_enum64 e;

			memcpy(&e, (const char *)extra + i * sizeof(e), sizeof(e));
			if ((ret = check_name(btf, id, e.name_off, err, errlen)))
				return ret;
		}
	}
	return 0;
}

/* Chains through typedefs, qualifiers and array elements must end; only a pointer may
 * close a cycle (struct list { struct list *next; }).  Checked in the same pass as the
 * references (parse()), so a chain may reach a type whose references are not checked
 * yet: one out of range ends it here, and check_refs() refuses it in that pass. */
static int check_chain(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen)
{
	uint32_t cur = id;

	for (int depth = 0; depth <= RESOLVE_DEPTH; depth++) {
		const struct btf_type *t;
		unsigned int kind;

		/* type 0 is void and has no record: test before reading it */
		if (!cur || cur >= btf->ntypes)
			return 0;
		t = btf->types[cur];
		kind = BTF_INFO_KIND(t->info);
		switch (kind) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
		case BTF_KIND_VAR:
			cur = t->type;
			break;
		case BTF_KIND_ARRAY: {
			struct btf_array a;

			memcpy(&a, t + 1, sizeof(a));
			cur = a.type;
			break;
		}
		default:
			return 0;
		}
	}
	return btf_err(err, errlen,
		       "offset 0x%x: type [%u]: chain of typedefs, qualifiers or arrays is longer "
		       "than %d or loops",
		       rec_off(btf, id), id, RESOLVE_DEPTH);
}

static int index_types(struct brt_btf *btf, const uint8_t *p, uint32_t len, uint32_t file_off,
		       char *err, size_t errlen)
{
	uint32_t cap = 64, off = 0;

	btf->types = calloc(cap, sizeof(*btf->types));
	if (!btf->types)
		return -ENOMEM;
	btf->types[0] = NULL;
	btf->ntypes = 1;
	while (off < len) {
		const struct btf_type *t = (const struct btf_type *)(const void *)(p + off);
		long extra;

		if (len - off < sizeof(*t))
			return btf_err(err, errlen,
				       "offset 0x%x: type [%u]: record truncated (%u bytes left)",
				       file_off + off, btf->ntypes, len - off);
		extra = extra_size(t);
		if (extra < 0)
			return btf_err(err, errlen, "offset 0x%x: type [%u]: unknown kind %u",
				       file_off + off, btf->ntypes, BTF_INFO_KIND(t->info));
		if ((uint64_t)len - off - sizeof(*t) < (uint64_t)extra)
			return btf_err(err, errlen,
				       "offset 0x%x: type [%u] %s: %ld bytes of members "
				       "run past the type section",
				       file_off + off, btf->ntypes,
				       brt_btf_kind_name(BTF_INFO_KIND(t->info)), extra);
		if (btf->ntypes > BTF_MAX_TYPE)
			return btf_err(err, errlen, "more than %u types", BTF_MAX_TYPE);
		if (btf->ntypes == cap) {
			const struct btf_type **n = realloc(btf->types, 2 * cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			btf->types = n;
			cap *= 2;
		}
		btf->types[btf->ntypes++] = t;
		off += (uint32_t)(sizeof(*t) + (size_t)extra);
	}
	return 0;
}

/* mapped: data is a read-only mapping that outlives the result (brt_btf_parse_mapped()) */
static int parse(const void *data, size_t size, void *mapped, struct brt_btf **out, char *err,
		 size_t errlen)
{
	struct btf_header hdr;
	struct brt_btf *btf;
	uint64_t type_end, str_end;
	int ret, chain = 0;

	*out = NULL;
	if (size < sizeof(hdr))
		return btf_err(err, errlen, "%zu bytes, shorter than the %zu-byte header",
			       size, sizeof(hdr));
	memcpy(&hdr, data, sizeof(hdr));
	if (hdr.magic != BTF_MAGIC)
		return btf_err(err, errlen, "offset 0x0: bad magic 0x%04x (want 0x%04x%s)",
			       hdr.magic, BTF_MAGIC,
			       hdr.magic == 0x9FEB ? ", the object is big-endian" : "");
	if (hdr.version != BTF_VERSION)
		return btf_err(err, errlen, "offset 0x2: version %u, only %u is known",
			       hdr.version, BTF_VERSION);
	if (hdr.hdr_len < sizeof(hdr) || hdr.hdr_len > size)
		return btf_err(err, errlen, "offset 0x4: header length %u out of range", hdr.hdr_len);
	type_end = (uint64_t)hdr.hdr_len + hdr.type_off + hdr.type_len;
	str_end = (uint64_t)hdr.hdr_len + hdr.str_off + hdr.str_len;
	if (type_end > size || str_end > size)
		return btf_err(err, errlen,
			       "offset 0x8: type section [%u, +%u) or string section [%u, +%u) "
			       "runs past the %zu-byte section",
			       hdr.type_off, hdr.type_len, hdr.str_off, hdr.str_len, size - hdr.hdr_len);
	if (hdr.type_off % 4 || hdr.type_len % 4)
		return btf_err(err, errlen, "offset 0x8: type section offset %u or length %u "
			       "is not 4-byte aligned", hdr.type_off, hdr.type_len);
	if (hdr.type_off < hdr.str_off + hdr.str_len && hdr.str_off < hdr.type_off + hdr.type_len)
		return btf_err(err, errlen, "type and string sections overlap");
	if (mapped && (uintptr_t)((const char *)data + hdr.hdr_len + hdr.type_off) % 4)
		return -EAGAIN;
	btf = calloc(1, sizeof(*btf));
	if (!btf)
		return -ENOMEM;
	if (mapped) {
		/* read where they are: nothing writes a target's records, and the checked
		 * last NUL ends every string inside the section */
		btf->type_data = (uint8_t *)mapped + hdr.hdr_len + hdr.type_off;
		btf->strs = (char *)mapped + hdr.hdr_len + hdr.str_off;
	} else {
		/* Private copies: the records are then 4-byte aligned whatever the file
		 * layout. */
		btf->type_data = malloc(hdr.type_len + 1);
		btf->strs = malloc(hdr.str_len + 1);
		if (!btf->type_data || !btf->strs) {
			ret = -ENOMEM;
			goto err_free;
		}
		memcpy(btf->type_data, (const char *)data + hdr.hdr_len + hdr.type_off,
		       hdr.type_len);
		memcpy(btf->strs, (const char *)data + hdr.hdr_len + hdr.str_off, hdr.str_len);
		btf->strs[hdr.str_len] = 0;
	}
	btf->str_len = hdr.str_len;
	btf->type_len = hdr.type_len;
	btf->types_file_off = hdr.hdr_len + hdr.type_off;
	if (!hdr.str_len || btf->strs[0] || btf->strs[hdr.str_len - 1]) {
		ret = btf_err(err, errlen, "string section must start and end with a NUL byte");
		goto err_free;
	}
	ret = index_types(btf, btf->type_data, hdr.type_len, hdr.hdr_len + hdr.type_off, err,
			  errlen);
	/* One pass over the types for both checks (two were a fifth of the open of an
	 * object with 45 KB of BTF), with the answer of two: any reference out of range
	 * is the error, else the first chain that does not end (its message stays in err
	 * unless a later reference's replaces it). */
	for (uint32_t id = 1; !ret && id < btf->ntypes; id++) {
		ret = check_refs(btf, id, err, errlen);
		if (!ret && !chain)
			chain = check_chain(btf, id, err, errlen);
	}
	if (!ret)
		ret = chain;
	if (ret)
		goto err_free;
	/* only a success takes the mapping over: on error it stays the caller's */
	btf->mapped = mapped;
	btf->mapped_len = size;
	*out = btf;
	return 0;

err_free:
	if (mapped)
		btf->type_data = NULL, btf->strs = NULL;
	brt_btf_free(btf);
	return ret;
}

int brt_btf_parse(const void *data, size_t size, struct brt_btf **out, char *err, size_t errlen)
{
	return parse(data, size, NULL, out, err, errlen);
}

int brt_btf_parse_mapped(void *data, size_t size, struct brt_btf **out, char *err,
			 size_t errlen)
{
	return parse(data, size, data, out, err, errlen);
}

void brt_btf_free(struct brt_btf *btf)
{
	if (!btf)
		return;
	free(btf->types);
	free(btf->kernel_types);
	free(btf->kernel_strs);
	if (btf->mapped) {
		munmap(btf->mapped, btf->mapped_len);
	} else {
		free(btf->type_data);
		free(btf->strs);
	}
	free(btf);
}

const struct btf_type *brt_btf_type(const struct brt_btf *btf, uint32_t id)
{
	return id && id < btf->ntypes ? btf->types[id] : NULL;
}

const char *brt_btf_str(const struct brt_btf *btf, uint32_t off)
{
	return off < btf->str_len ? btf->strs + off : NULL;
}

const char *brt_btf_name(const struct brt_btf *btf, uint32_t id)
{
	const struct btf_type *t = brt_btf_type(btf, id);

	return t ? btf->strs + t->name_off : "";
}

uint32_t brt_btf_skip_mods(const struct brt_btf *btf, uint32_t id)
{
	/* check_chain() bounded every chain, so this terminates. */
	for (;;) {
		const struct btf_type *t = brt_btf_type(btf, id);

		if (!t)
			return id;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
}

static int resolve_size(const struct brt_btf *btf, uint32_t id, int depth, uint64_t *size)
{
	const struct btf_type *t;
	struct btf_array a;
	uint64_t elem;
	int ret;

	if (depth > RESOLVE_DEPTH)
		return -ELOOP;
	id = brt_btf_skip_mods(btf, id);
	t = brt_btf_type(btf, id);
	if (!t)
		return -EINVAL;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FLOAT:
	case BTF_KIND_DATASEC:
		*size = t->size;
		return 0;
	case BTF_KIND_PTR:
		*size = 8;
		return 0;
	case BTF_KIND_VAR:
		return resolve_size(btf, t->type, depth + 1, size);
	case BTF_KIND_ARRAY:
		memcpy(&a, t + 1, sizeof(a));
		ret = resolve_size(btf, a.type, depth + 1, &elem);
		if (ret)
			return ret;
		if (a.nelems && elem > UINT32_MAX / a.nelems)
			return -E2BIG;
		*size = elem * a.nelems;
		return 0;
	default:
		return -EINVAL;
	}
}

int brt_btf_resolve_size(const struct brt_btf *btf, uint32_t id, uint64_t *size)
{
	return resolve_size(btf, id, 0, size);
}

int brt_btf_find(const struct brt_btf *btf, const char *name, unsigned int kind)
{
	for (uint32_t id = 1; id < btf->ntypes; id++) {
		const struct btf_type *t = btf->types[id];

		if (BTF_INFO_KIND(t->info) == kind && !strcmp(btf->strs + t->name_off, name))
			return (int)id;
	}
	return -ENOENT;
}

/* .BTF.ext: func_info and line_info subsections are each a record size followed by one
 * block per ELF section: the section's name (a .BTF string), a count, then records whose
 * first word is a byte offset into that section.  One walker reads all three kinds; `fill`
 * turns a record into the caller's element (line records are left in place: no fill). */
struct ext_kind {
	const char *what;    /* "func info" / "line info" */
	uint32_t min_rec;    /* bytes a record needs */
	size_t elem_size;    /* bytes of one output element */
	/* 0, or -EINVAL when a field of the record is out of range */
	int (*fill)(const struct brt_btf *btf, const char *sec, const uint32_t *rec, void *elem);
};

static int fill_line(const struct brt_btf *btf, const char *sec, const uint32_t *rec, void *elem)
{
	struct brt_btf_line *l = elem;

	*l = (struct brt_btf_line){
		.sec = sec, .insn_off = rec[0], .file = brt_btf_str(btf, rec[1]),
		.src = brt_btf_str(btf, rec[2]), .line = rec[3] >> 10, .col = rec[3] & 0x3ff,
		.file_off = rec[1], .src_off = rec[2],
	};
	if (!l->file || !l->src)
		return -EINVAL;
	return 0;
}

static int fill_func(const struct brt_btf *btf, const char *sec, const uint32_t *rec, void *elem)
{
	struct brt_btf_func *f = elem;
	const struct btf_type *t = brt_btf_type(btf, rec[1]);

	*f = (struct brt_btf_func){ .sec = sec, .insn_off = rec[0], .type_id = rec[1] };
	return t && BTF_INFO_KIND(t->info) == BTF_KIND_FUNC ? 0 : -EINVAL;
}

static int fill_core(const struct brt_btf *btf, const char *sec, const uint32_t *rec, void *elem)
{
	struct brt_btf_core_relo *c = elem;

	*c = (struct brt_btf_core_relo){ .sec = sec, .insn_off = rec[0], .type_id = rec[1],
					 .access = brt_btf_str(btf, rec[2]), .kind = rec[3] };
	/* an unknown kind is refused when applied, naming the record, as libbpf does */
	return rec[1] && rec[1] < btf->ntypes && c->access ? 0 : -EINVAL;
}

static const struct ext_kind ext_kinds[BRT_BTF_EXT_KINDS] = {
	[BRT_BTF_EXT_FUNC] = { "func info", 8, sizeof(struct brt_btf_func), fill_func },
	[BRT_BTF_EXT_LINE] = { "line info", 16, 0, NULL },
	[BRT_BTF_EXT_CORE] = { "CO-RE relocation", 16, sizeof(struct brt_btf_core_relo),
			       fill_core },
};

static int bad_record(char *err, size_t errlen, uint32_t at, const char *what, uint32_t i,
		      const char *sec)
{
	return btf_err(err, errlen, "offset 0x%x: %s record %u of '%s' names a bad string or "
		       "type", at, what, i, sec);
}

int brt_btf_ext_line(const struct brt_btf *btf, const struct brt_btf_ext_block *b, uint32_t pos,
		     struct brt_btf_line *out, char *err, size_t errlen)
{
	uint32_t rec[4];

	memcpy(rec, b->recs + (size_t)pos * b->stride, sizeof(rec));
	if (fill_line(btf, b->sec, rec, out))
		return bad_record(err, errlen, b->file_off + pos * (uint32_t)b->stride,
				  ext_kinds[BRT_BTF_EXT_LINE].what, pos, b->sec);
	return 0;
}

/* Kind k's subsection (end bytes at p, at offset base of .BTF.ext) into ext. */
static int ext_walk(const struct brt_btf *btf, const uint8_t *p, uint32_t end, uint32_t base,
		    enum brt_btf_ext_kind kind, struct brt_btf_ext *ext, char *err, size_t errlen)
{
	const struct ext_kind *k = &ext_kinds[kind];
	uint8_t *elems = NULL;
	struct brt_btf_ext_block *blocks = NULL;
	size_t n = 0, cap = 0, nblocks = 0, bcap = 0;
	uint32_t rec_size, off;
	int ret = 0;

	if (end < 4)
		return btf_err(err, errlen, "offset 0x%x: %s shorter than its record size", base,
			       k->what);
	memcpy(&rec_size, p, 4);
	if (rec_size < k->min_rec || rec_size > 256 || rec_size % 4)
		return btf_err(err, errlen, "offset 0x%x: %s record size %u", base, k->what,
			       rec_size);
	/* room for as many records as the bytes could hold, at once (growing it by doubling
	 * copied Tracee's 181k lines about twice over) */
	cap = (end - 4) / rec_size + 1;
	if (k->fill) {
		elems = malloc(cap * k->elem_size);
		if (!elems)
			return -ENOMEM;
	}
	for (off = 4; off < end && !ret;) {
		uint32_t blk[2];
		const char *sec;

		if (end - off < sizeof(blk)) {
			ret = btf_err(err, errlen, "offset 0x%x: %s block truncated", base + off,
				      k->what);
			break;
		}
		memcpy(blk, p + off, sizeof(blk));
		sec = brt_btf_str(btf, blk[0]);
		if (!sec) {
			ret = btf_err(err, errlen, "offset 0x%x: %s: section name offset %u out "
				      "of range", base + off, k->what, blk[0]);
			break;
		}
		off += sizeof(blk);
		if ((uint64_t)blk[1] * rec_size > end - off) {
			ret = btf_err(err, errlen, "offset 0x%x: %s block truncated", base + off,
				      k->what);
			break;
		}
		if (blk[1]) {
			if (nblocks == bcap) {
				struct brt_btf_ext_block *nb;

				bcap = bcap ? 2 * bcap : 16;
				nb = realloc(blocks, bcap * sizeof(*nb));
				if (!nb) {
					ret = -ENOMEM;
					break;
				}
				blocks = nb;
			}
			blocks[nblocks++] = (struct brt_btf_ext_block){
				.sec = sec, .first = (uint32_t)n, .count = blk[1],
				.file_off = base + off,
				.recs = k->fill ? elems + n * k->elem_size : p + off,
				.stride = k->fill ? k->elem_size : rec_size,
			};
		}
		if (!k->fill) { /* lines: checked when read */
			n += blk[1];
			off += blk[1] * rec_size;
			continue;
		}
		for (uint32_t i = 0; i < blk[1]; i++, off += rec_size) {
			uint32_t rec[4];

			/* n < cap: each takes rec_size bytes.  The fields read are the first
			 * four words (two for func_info, whose records may be 8 bytes): a copy
			 * of a constant size is two loads, where rec_size's was a rep movs that
			 * took three quarters of the walk */
			if (rec_size >= 16)
				memcpy(rec, p + off, 16);
			else
				memcpy(rec, p + off, 8);
			if (k->fill(btf, sec, rec, elems + n * k->elem_size)) {
				ret = bad_record(err, errlen, base + off, k->what, i, sec);
				break;
			}
			if (kind == BRT_BTF_EXT_CORE)
				((struct brt_btf_core_relo *)(void *)elems)[n].sec_rec = i;
			n++;
		}
	}
	if (ret) {
		free(elems);
		free(blocks);
		return ret;
	}
	ext->blocks[kind] = blocks;
	ext->nblocks[kind] = nblocks;
	if (kind == BRT_BTF_EXT_FUNC) {
		ext->funcs = (struct brt_btf_func *)(void *)elems;
		ext->nfuncs = n;
	} else if (kind == BRT_BTF_EXT_CORE) {
		ext->cores = (struct brt_btf_core_relo *)(void *)elems;
		ext->ncores = n;
	} else {
		ext->nlines = n;
	}
	return 0;
}

int brt_btf_ext_parse(const struct brt_btf *btf, const void *data, size_t size,
		      struct brt_btf_ext *ext, char *err, size_t errlen)
{
	struct btf_ext_hdr {
		uint16_t magic;
		uint8_t version;
		uint8_t flags;
		uint32_t hdr_len;
		uint32_t func_info_off;
		uint32_t func_info_len;
		uint32_t line_info_off;
		uint32_t line_info_len;
		uint32_t core_relo_off; /* present when hdr_len >= 32 */
		uint32_t core_relo_len;
	} hdr;
	int ret = 0;

	const size_t base_hdr = offsetof(struct btf_ext_hdr, core_relo_off);

	memset(ext, 0, sizeof(*ext));
	memset(&hdr, 0, sizeof(hdr));
	if (size < base_hdr)
		return btf_err(err, errlen, "%zu bytes, shorter than the header", size);
	memcpy(&hdr, data, size < sizeof(hdr) ? base_hdr : sizeof(hdr));
	if (hdr.magic != BTF_MAGIC || hdr.version != BTF_VERSION)
		return btf_err(err, errlen, "offset 0x0: bad magic 0x%04x or version %u",
			       hdr.magic, hdr.version);
	if (hdr.hdr_len < sizeof(hdr))
		hdr.core_relo_off = hdr.core_relo_len = 0; /* an older header: no CO-RE part */
	if (hdr.hdr_len < base_hdr || hdr.hdr_len > size ||
	    (uint64_t)hdr.hdr_len + hdr.core_relo_off + hdr.core_relo_len > size ||
	    (uint64_t)hdr.hdr_len + hdr.line_info_off + hdr.line_info_len > size ||
	    (uint64_t)hdr.hdr_len + hdr.func_info_off + hdr.func_info_len > size)
		return btf_err(err, errlen,
			       "offset 0x4: func info [%u, +%u) or line info [%u, +%u) runs past "
			       "the %zu-byte section", hdr.func_info_off, hdr.func_info_len,
			       hdr.line_info_off, hdr.line_info_len, size);
	if (hdr.func_info_len)
		ret = ext_walk(btf, (const uint8_t *)data + hdr.hdr_len + hdr.func_info_off,
			       hdr.func_info_len, hdr.hdr_len + hdr.func_info_off, BRT_BTF_EXT_FUNC,
			       ext, err, errlen);
	if (!ret && hdr.line_info_len)
		ret = ext_walk(btf, (const uint8_t *)data + hdr.hdr_len + hdr.line_info_off,
			       hdr.line_info_len, hdr.hdr_len + hdr.line_info_off, BRT_BTF_EXT_LINE,
			       ext, err, errlen);
	if (!ret && hdr.core_relo_len)
		ret = ext_walk(btf, (const uint8_t *)data + hdr.hdr_len + hdr.core_relo_off,
			       hdr.core_relo_len, hdr.hdr_len + hdr.core_relo_off, BRT_BTF_EXT_CORE,
			       ext, err, errlen);
	if (ret)
		brt_btf_ext_free(ext);
	return ret;
}

void brt_btf_ext_free(struct brt_btf_ext *ext)
{
	free(ext->funcs);
	free(ext->cores);
	for (int k = 0; k < BRT_BTF_EXT_KINDS; k++)
		free(ext->blocks[k]);
	memset(ext, 0, sizeof(*ext));
}

/* The section as the kernel's BPF_BTF_LOAD wants it: header, types (with whatever fixups
 * were written into type_data), strings. */
int brt_btf_raw(const struct brt_btf *btf, void **out, size_t *len)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h) };
	uint32_t type_len = btf->kernel_types && btf->kernel_type_len ? btf->kernel_type_len
								      : btf->type_len;
	const char *strs = btf->kernel_strs ? btf->kernel_strs : btf->strs;
	uint32_t str_len = btf->kernel_strs ? btf->kernel_str_len : btf->str_len;
	uint8_t *raw;

	h.type_len = type_len;
	h.str_off = type_len;
	h.str_len = str_len;
	raw = malloc(sizeof(h) + type_len + str_len);
	if (!raw)
		return -ENOMEM;
	memcpy(raw, &h, sizeof(h));
	memcpy(raw + sizeof(h), btf->kernel_types ? btf->kernel_types : btf->type_data, type_len);
	memcpy(raw + sizeof(h) + type_len, strs, str_len);
	*out = raw;
	*len = sizeof(h) + type_len + str_len;
	return 0;
}

/* name in struct or union id, looked for in anonymous struct/union members too */
static int member_in(const struct brt_btf *btf, uint32_t id, const char *name, size_t len,
		     uint32_t base, uint32_t *off, uint32_t *type, int depth)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));
	const struct btf_member *m;
	unsigned kind;

	if (!t || depth > 8)
		return 0;
	kind = BTF_INFO_KIND(t->info);
	if (kind != BTF_KIND_STRUCT && kind != BTF_KIND_UNION)
		return 0;
	m = (const struct btf_member *)(t + 1);
	for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		const char *mn = brt_btf_str(btf, m->name_off);

		if ((BTF_INFO_KFLAG(t->info) && BTF_MEMBER_BITFIELD_SIZE(m->offset)) || bits % 8)
			continue;
		if (mn && strlen(mn) == len && !memcmp(mn, name, len)) {
			*off = base + bits / 8;
			*type = m->type;
			return 1;
		}
		if ((!mn || !*mn) &&
		    member_in(btf, m->type, name, len, base + bits / 8, off, type, depth + 1))
			return 1;
	}
	return 0;
}

int brt_btf_member_at(const struct brt_btf *btf, uint32_t id, const char *path, uint32_t *off,
		      uint32_t *size)
{
	uint32_t base = 0, type = id;
	uint64_t sz;

	for (const char *p = path, *dot;; p = dot + 1) {
		dot = strchr(p, '.');
		if (!member_in(btf, type, p, dot ? (size_t)(dot - p) : strlen(p), base, &base,
			       &type, 0))
			return -ENOENT;
		if (!dot)
			break;
	}
	if (brt_btf_resolve_size(btf, type, &sz) || sz > UINT32_MAX)
		return -ENOENT;
	*off = base;
	*size = (uint32_t)sz;
	return 0;
}
