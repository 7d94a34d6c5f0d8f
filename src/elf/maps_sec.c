/* maps_sec.c - map definitions: legacy SEC("maps") struct bpf_map_def records, BTF-defined
 * SEC(".maps") variables (every property is a member whose *type* carries the value:
 * `int (*type)[BPF_MAP_TYPE_HASH]` is a pointer to an array whose length is the value),
 * global data sections as single-entry array maps, and the initial entries of prog arrays
 * and maps of maps.
 */
#include <errno.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "elf/parse.h"
#include "isa/isa.h"
#include "util/util.h"

#ifndef R_BPF_64_64
#define R_BPF_64_64 1
#endif
#ifndef R_BPF_64_ABS64
#define R_BPF_64_ABS64 2
#endif
/* GNU as before binutils 2.41 (Debian 12's, under bpf-gcc) numbers its relocations apart
 * from LLVM's: a 64-bit datum is R_BPF_DATA_64, 12, which LLVM leaves unused.  libbpf takes
 * any type in .maps; the slots of a GCC-built map of maps or prog array carry this one. */
#define R_BPF_GNU_DATA_64 12

static struct brt_elf_map *new_map(struct brt_elf_ctx *ctx)
{
	struct brt_elf_obj *obj = ctx->obj;
	struct brt_elf_map *n = realloc(obj->maps, (obj->nmaps + 1) * sizeof(*n));

	if (!n)
		return NULL;
	obj->maps = n;
	memset(&n[obj->nmaps], 0, sizeof(*n));
	return &n[obj->nmaps++];
}

static int add_slot(struct brt_elf_map *m, uint32_t index, int32_t target)
{
	struct brt_elf_slot *n = realloc(m->slots, (m->nslots + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	m->slots = n;
	m->slots[m->nslots++] = (struct brt_elf_slot){ .index = index, .target = target };
	return 0;
}

static int cmp_sym_off(const void *a, const void *b)
{
	const struct brt_elf_sym *const *x = a, *const *y = b;

	return (*x)->value < (*y)->value ? -1 : (*x)->value > (*y)->value;
}

/* Legacy maps: the section is an array of equal-sized definitions, one symbol each; the
 * record size is the section size over the symbol count (older compilers give no sizes).
 * The size says which loader's layout it is; all begin with type, key_size, value_size,
 * max_entries, map_flags (20 bytes):
 *   16, 20  libbpf's struct bpf_map_def (map_flags optional);
 *   24, 28  the kernel samples' (samples/bpf/bpf_load.h): + inner_map_idx, numa_node;
 *   36      iproute2's struct bpf_elf_map (tc, Cilium): + id, pinning, inner_id, inner_idx;
 *   28 in a "maps/<name>" section: aya's struct bpf_map_def: + id (unused), pinning
 *           (PinningType: 0 none, 1 by name: <pin root>/NAME, reused when it exists).
 * Other sizes load when every byte past the 20 is zero. */
enum legacy_layout { LAYOUT_LIBBPF, LAYOUT_SAMPLES, LAYOUT_IPROUTE2, LAYOUT_AYA };

#define PIN_OBJECT_NS 1 /* iproute2's bpf_elf.h: <tc dir>/<object id>/NAME */
#define PIN_GLOBAL_NS 2 /* <tc dir>/globals/NAME */
/* Cilium's bpf/include/bpf/loader.h: its tail-call maps are created fresh at every load,
 * never taken from a pin (its agent pins them after attaching, replacing the old pin) */
#define CILIUM_PIN_REPLACE (1 << 4)

static const char *const legacy_fields[] = { "type", "key_size", "value_size", "max_entries",
					     "map_flags", NULL, NULL, NULL, NULL };
static const char *const samples_fields[] = { NULL, NULL, NULL, NULL, NULL, "inner_map_idx",
					      "numa_node" };
static const char *const iproute2_fields[] = { NULL, NULL, NULL, NULL, NULL, "id", "pinning",
					       "inner_id", "inner_idx" };
static const char *const aya_fields[] = { NULL, NULL, NULL, NULL, NULL, "id", "pinning" };

static int is_map_in_map(uint32_t type)
{
	return type == BPF_MAP_TYPE_ARRAY_OF_MAPS || type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

/* Refusal naming the field of map m (definition at off in sec) and its file offset. */
static int field_fail(struct brt_elf_ctx *ctx, uint32_t sec, uint64_t off, const char *map,
		      enum legacy_layout layout, unsigned field, const char *what, uint32_t val)
{
	const char *const *names = layout == LAYOUT_IPROUTE2 ? iproute2_fields
				   : layout == LAYOUT_AYA    ? aya_fields
							     : samples_fields;
	const char *name = field < 5 ? legacy_fields[field] : names[field];
	uint64_t at = off + 4 * field;

	return brt_elf_fail(ctx, -EINVAL, sec, at, "map '%s': %s %u (%s, byte %u of the "
			    "definition, file offset 0x%llx): %s", map, name ? name : "field", val,
			    layout == LAYOUT_IPROUTE2 ? "struct bpf_elf_map" :
			    layout == LAYOUT_AYA ? "aya's struct bpf_map_def" :
			    "the samples' struct bpf_map_def", 4 * field,
			    (unsigned long long)(ctx->secs[sec].file_off + at), what);
}

/* tc's object id for PIN_OBJECT_NS: iproute2 names the directory by a hash of the object
 * file; ours is FNV-1a over the contents of every section (same object, same directory):
 * the sections the open skips (debug info) are read for it first. */
static const char *object_pin_dir(struct brt_elf_ctx *ctx)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char dir[32];

	for (size_t i = 1; i < ctx->nsecs; i++)
		for (size_t b = 0; ctx->secs[i].data && b < ctx->secs[i].size; b++)
			h = (h ^ ctx->secs[i].data[b]) * 0x100000001b3ull;
	snprintf(dir, sizeof(dir), "tc/%016llx", (unsigned long long)h);
	return brt_elf_keep(ctx->obj, dir);
}

/* The fields past map_flags, as the loader of that layout reads them. */
static int legacy_extra(struct brt_elf_ctx *ctx, uint32_t sec, uint64_t off, size_t nmaps,
			enum legacy_layout layout, const uint32_t *f, struct brt_elf_map *m)
{
	if (layout == LAYOUT_SAMPLES) {
		/* bpf_load.c: inner_map_idx indexes the maps section; numa_node counts only
		 * with BPF_F_NUMA_NODE */
		if (is_map_in_map(m->type)) {
			if (f[5] >= nmaps)
				return field_fail(ctx, sec, off, m->name, layout, 5,
						  "no map of the section has that index", f[5]);
			m->inner_ref = f[5] + 1;
		}
		if (m->map_flags & BPF_F_NUMA_NODE)
			m->numa_node = f[6];
	} else if (layout == LAYOUT_IPROUTE2) {
		m->id = f[5];
		if (f[6] == PIN_GLOBAL_NS) {
			m->pinning = 1;
			m->pin_dir = brt_elf_keep(ctx->obj, "tc/globals");
		} else if (f[6] == PIN_OBJECT_NS) {
			int ret = brt_elf_fetch_all(ctx);

			if (ret)
				return ret;
			m->pinning = 1;
			m->pin_dir = object_pin_dir(ctx);
		} else if (f[6] == CILIUM_PIN_REPLACE) {
			/* a fresh map, unpinned: the pin is the agent's step after attach */
		} else if (f[6]) {
			return field_fail(ctx, sec, off, m->name, layout, 6,
					  "custom pinning (tc's /etc/iproute2/bpf_pinning) is not "
					  "supported; use PIN_GLOBAL_NS (2), PIN_OBJECT_NS (1) or "
					  "Cilium's PIN_REPLACE (16)",
					  f[6]);
		}
		if (m->pinning && !m->pin_dir)
			return -ENOMEM;
	} else if (layout == LAYOUT_AYA) {
		/* aya's PinningType::try_from(): None (0) or ByName (1) */
		if (f[6] > 1)
			return field_fail(ctx, sec, off, m->name, layout, 6,
					  "aya pins by name (1) or not at all (0)", f[6]);
		m->pinning = f[6];
	}
	/* both loaders give a map of maps a 4-byte value (the inner map's fd) */
	if (layout != LAYOUT_LIBBPF && is_map_in_map(m->type) && !m->value_size)
		m->value_size = 4;
	return 0;
}

/* iproute2 map-in-map: an outer map's inner_id names the id of its inner map; that inner
 * map (id set, inner_id 0, inner_idx not -1) is also put into the outer at key inner_idx
 * (lib/bpf_legacy.c, bpf_maps_attach_all). */
static int iproute2_inner(struct brt_elf_ctx *ctx, uint32_t sec, size_t first, const uint32_t *ids)
{
	struct brt_elf_obj *obj = ctx->obj;

	for (size_t o = first; o < obj->nmaps; o++) {
		struct brt_elf_map *outer = &obj->maps[o];
		uint32_t inner_id = ids[2 * (o - first)];

		if (!is_map_in_map(outer->type))
			continue;
		if (!inner_id)
			return field_fail(ctx, sec, outer->sec_off, outer->name, LAYOUT_IPROUTE2, 7,
					  "a map of maps needs the id of its inner map", 0);
		for (size_t i = first; i < obj->nmaps; i++) {
			const struct brt_elf_map *in = &obj->maps[i];
			uint32_t inner_idx = ids[2 * (i - first) + 1];
			int ret;

			if (in->id != inner_id || ids[2 * (i - first)])
				continue;
			if (!outer->inner_ref)
				outer->inner_ref = (uint32_t)i + 1;
			if (inner_idx != UINT32_MAX && (ret = add_slot(outer, inner_idx, (int32_t)i)))
				return ret;
		}
		if (!outer->inner_ref)
			return field_fail(ctx, sec, outer->sec_off, outer->name, LAYOUT_IPROUTE2, 7,
					  "no map of the object has that id", inner_id);
	}
	return 0;
}

static int legacy_maps(struct brt_elf_ctx *ctx, uint32_t sec)
{
	const struct brt_elf_sec *s = &ctx->secs[sec];
	const struct brt_elf_sym **syms;
	size_t n = 0, def_size, first = ctx->obj->nmaps;
	enum legacy_layout layout;
	uint32_t *ids = NULL;
	int ret = 0;

	syms = calloc(ctx->nsyms ? ctx->nsyms : 1, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->nsyms; i++)
		if (ctx->syms[i].shndx == sec && ctx->syms[i].type != STT_SECTION &&
		    ctx->syms[i].name[0])
			syms[n++] = &ctx->syms[i];
	if (!n) {
		ret = brt_elf_fail(ctx, -EINVAL, sec, 0, "%zu bytes of map definitions but no "
				   "symbols name them", s->size);
		goto out;
	}
	qsort(syms, n, sizeof(*syms), cmp_sym_off);
	def_size = s->size / n;
	if (def_size < 4 * sizeof(uint32_t) || s->size % n || !s->data) {
		ret = brt_elf_fail(ctx, -EINVAL, sec, 0,
				   "%zu bytes for %zu maps: a struct bpf_map_def is at least 16 bytes",
				   s->size, n);
		goto out;
	}
	layout = def_size == 28 && !strncmp(s->name, "maps/", 5) ? LAYOUT_AYA :
		 def_size == 24 || def_size == 28 ? LAYOUT_SAMPLES :
		 def_size == 36 ? LAYOUT_IPROUTE2 : LAYOUT_LIBBPF;
	/* inner_id and inner_idx of each map, for the iproute2 pass after all are read */
	ids = calloc(2 * n, sizeof(*ids));
	if (!ids) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		uint64_t off = syms[i]->value;
		uint32_t f[9] = { 0 };
		size_t known = layout == LAYOUT_LIBBPF ? 20 : def_size;
		struct brt_elf_map *m;

		if (off % def_size || off + def_size > s->size) {
			ret = brt_elf_fail(ctx, -EINVAL, sec, off,
					   "map '%s' is not at a multiple of the %zu-byte definition",
					   syms[i]->name, def_size);
			break;
		}
		memcpy(f, s->data + off, def_size < sizeof(f) ? def_size : sizeof(f));
		for (size_t b = known; b < def_size; b++) {
			if (s->data[off + b]) {
				ret = brt_elf_fail(ctx, -ENOTSUP, sec, off + b,
						   "map '%s': unknown non-zero field at byte %zu of "
						   "its %zu-byte definition (file offset 0x%llx)",
						   syms[i]->name, b, def_size,
						   (unsigned long long)(s->file_off + off + b));
				break;
			}
		}
		m = ret ? NULL : new_map(ctx);
		if (!ret && !m)
			ret = -ENOMEM;
		if (ret)
			break;
		m->name = brt_elf_keep(ctx->obj, syms[i]->name);
		m->kind = BRT_ELF_MAP_LEGACY;
		m->sec_idx = sec;
		m->sec_off = (uint32_t)off;
		m->type = f[0];
		m->key_size = f[1];
		m->value_size = f[2];
		m->max_entries = f[3];
		m->map_flags = f[4];
		ids[2 * i] = f[7];
		ids[2 * i + 1] = f[8];
		if (!m->name)
			ret = -ENOMEM;
		else
			ret = legacy_extra(ctx, sec, off, n, layout, f, m);
	}
	if (layout == LAYOUT_IPROUTE2)
		ctx->tc_object = 1;
	if (!ret && layout == LAYOUT_IPROUTE2)
		ret = iproute2_inner(ctx, sec, first, ids);
	if (!ret && layout == LAYOUT_SAMPLES) {
		/* inner_map_idx counted within this section */
		for (size_t i = first; i < ctx->obj->nmaps; i++)
			if (ctx->obj->maps[i].inner_ref)
				ctx->obj->maps[i].inner_ref += (uint32_t)first;
	}
out:
	free(ids);
	free(syms);
	return ret;
}

/* The value of `__uint(name, val)`: member type is pointer to array[val]. */
static int btf_uint(const struct brt_btf *btf, uint32_t type, uint32_t *val)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, type));
	struct btf_array a;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
		return -EINVAL;
	t = brt_btf_type(btf, brt_btf_skip_mods(btf, t->type));
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_ARRAY)
		return -EINVAL;
	memcpy(&a, t + 1, sizeof(a));
	*val = a.nelems;
	return 0;
}

/* The type of `__type(name, T)`: member type is pointer to T; sets its size. */
static int btf_pointee(const struct brt_btf *btf, uint32_t type, uint32_t *id, uint32_t *size)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, type));
	uint64_t sz;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
		return -EINVAL;
	if (brt_btf_resolve_size(btf, t->type, &sz) || sz > UINT32_MAX)
		return -EINVAL;
	*id = t->type;
	*size = (uint32_t)sz;
	return 0;
}

struct def_loc {
	struct brt_elf_ctx *ctx;
	uint32_t sec;
	uint64_t off;
	const char *name;
};

static int set_size(struct def_loc *loc, uint32_t *field, uint32_t val, const char *what)
{
	if (*field && *field != val)
		return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
				    "map '%s': %s is %u by one member and %u by another", loc->name,
				    what, *field, val);
	*field = val;
	return 0;
}

static int parse_btf_def(struct def_loc *loc, uint32_t struct_id, struct brt_elf_map *m,
			 int depth);

/* `__array(values, T)`: an array of pointers to T; T is an inner map definition (maps of
 * maps) or a function prototype (prog arrays). */
static int btf_values(struct def_loc *loc, const struct btf_member *mb, struct brt_elf_map *m,
		      int depth)
{
	const struct brt_btf *btf = loc->ctx->obj->btf;
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, mb->type));
	struct btf_array a;
	uint32_t inner_id;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_ARRAY)
		goto bad;
	memcpy(&a, t + 1, sizeof(a));
	t = brt_btf_type(btf, brt_btf_skip_mods(btf, a.type));
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
		goto bad;
	inner_id = brt_btf_skip_mods(btf, t->type);
	t = brt_btf_type(btf, inner_id);
	if (!t)
		goto bad;
	m->values_off = (uint32_t)(loc->off + BTF_MEMBER_BIT_OFFSET(mb->offset) / 8);
	if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC_PROTO)
		return 0;
	if (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT || depth)
		goto bad;
	m->inner = calloc(1, sizeof(*m->inner));
	if (!m->inner)
		return -ENOMEM;
	m->inner->name = m->name;
	m->inner->kind = BRT_ELF_MAP_BTF;
	return parse_btf_def(loc, inner_id, m->inner, depth + 1);
bad:
	return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
			    "map '%s': 'values' must be an array of pointers to a map definition "
			    "or a function (__array(values, ...))", loc->name);
}

/* A 64-bit field: __uint(name, N) as the others, or libbpf 1.4's __ulong(name, N), a
 * member whose type is an anonymous enum (enum64 for values past 32 bits) of the one
 * enumerator N. */
static int btf_ulong(const struct brt_btf *btf, uint32_t type, uint64_t *val)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, type));
	uint32_t v32, lo, hi;
	int32_t sv;

	if (!btf_uint(btf, type, &v32)) {
		*val = v32;
		return 0;
	}
	if (!t || BTF_INFO_VLEN(t->info) != 1)
		return -EINVAL;
	if (BTF_INFO_KIND(t->info) == BTF_KIND_ENUM) {
		/* struct btf_enum { name_off; s32 val; } (unsigned when kind_flag is 0 and
		 * the value was written as such: libbpf takes the 32 bits as they are) */
		memcpy(&sv, (const char *)(t + 1) + 4, 4);
		*val = (uint32_t)sv;
		return 0;
	}
	if (BTF_INFO_KIND(t->info) == 19) { /* BTF_KIND_ENUM64: name_off, val_lo32, val_hi32 */
		memcpy(&lo, (const char *)(t + 1) + 4, 4);
		memcpy(&hi, (const char *)(t + 1) + 8, 4);
		*val = (uint64_t)hi << 32 | lo;
		return 0;
	}
	return -EINVAL;
}

static int parse_member(struct def_loc *loc, const struct btf_member *mb, struct brt_elf_map *m,
			int depth)
{
	const struct brt_btf *btf = loc->ctx->obj->btf;
	const char *name = brt_btf_str(btf, mb->name_off);
	static const struct {
		const char *name;
		size_t field;
	} uints[] = {
		{ "type", offsetof(struct brt_elf_map, type) },
		{ "max_entries", offsetof(struct brt_elf_map, max_entries) },
		{ "map_flags", offsetof(struct brt_elf_map, map_flags) },
		{ "numa_node", offsetof(struct brt_elf_map, numa_node) },
		{ "pinning", offsetof(struct brt_elf_map, pinning) },
	};
	uint32_t val, id;

	for (size_t i = 0; i < sizeof(uints) / sizeof(uints[0]); i++) {
		if (!brt_elf_name_is(name, uints[i].name))
			continue;
		if (btf_uint(btf, mb->type, &val))
			goto bad_uint;
		memcpy((char *)m + uints[i].field, &val, sizeof(val));
		return 0;
	}
	if (brt_elf_name_is(name, "key_size") || brt_elf_name_is(name, "value_size")) {
		if (btf_uint(btf, mb->type, &val))
			goto bad_uint;
		return set_size(loc, name[0] == 'k' ? &m->key_size : &m->value_size, val, name);
	}
	if (brt_elf_name_is(name, "key") || brt_elf_name_is(name, "value")) {
		if (btf_pointee(btf, mb->type, &id, &val))
			return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
					    "map '%s': '%s' must be a pointer to a sized type "
					    "(__type(%s, T))", loc->name, name, name);
		if (name[0] == 'k') {
			m->btf_key_type_id = id;
			return set_size(loc, &m->key_size, val, "key_size");
		}
		m->btf_value_type_id = id;
		return set_size(loc, &m->value_size, val, "value_size");
	}
	if (brt_elf_name_is(name, "values"))
		return btf_values(loc, mb, m, depth);
	if (brt_elf_name_is(name, "map_extra")) {
		if (btf_ulong(btf, mb->type, &m->map_extra))
			return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
					    "map '%s': 'map_extra' must be a pointer to an array "
					    "(__uint(map_extra, N)) or an enum of one value "
					    "(__ulong(map_extra, N))", loc->name);
		return 0;
	}
	return brt_elf_fail(loc->ctx, -ENOTSUP, loc->sec, loc->off,
			    "map '%s': unknown field '%s'", loc->name, name);
bad_uint:
	return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
			    "map '%s': '%s' must be a pointer to an array (__uint(%s, N))",
			    loc->name, name, name);
}

static int parse_btf_def(struct def_loc *loc, uint32_t struct_id, struct brt_elf_map *m,
			 int depth)
{
	const struct brt_btf *btf = loc->ctx->obj->btf;
	const struct btf_type *t = brt_btf_type(btf, struct_id);
	const struct btf_member *mb;
	int ret;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT)
		return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
				    "map '%s': definition is not a struct (type [%u])", loc->name,
				    struct_id);
	mb = (const struct btf_member *)(const void *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++)
		if ((ret = parse_member(loc, &mb[i], m, depth)))
			return ret;
	if (m->values_off) {
		if (!m->key_size)
			m->key_size = 4;
		if (!m->value_size)
			m->value_size = 4;
	}
	if (!m->type)
		return brt_elf_fail(loc->ctx, -EINVAL, loc->sec, loc->off,
				    "map '%s': no map type (__uint(type, ...))", loc->name);
	m->max_entries = brt_elf_map_size(m->type, m->max_entries);
	return 0;
}

uint32_t brt_elf_map_size(uint32_t type, uint32_t sz)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t size;

	if ((type != BPF_MAP_TYPE_RINGBUF && type != BPF_MAP_TYPE_USER_RINGBUF) || !sz ||
	    page <= 0)
		return sz;
	if (sz % (uint64_t)page == 0 && !((sz / page) & (sz / page - 1)))
		return sz;
	for (size = (uint64_t)page; size <= UINT32_MAX; size <<= 1)
		if (size > sz)
			return (uint32_t)size;
	/* no such product fits in 32 bits: the size as written, for the kernel to refuse */
	return sz;
}

/* Offset of the ELF symbol that defines a .maps variable: clang leaves the BTF DATASEC
 * offsets to the loader, the symbol table is authoritative.  The first symbol of the
 * section by that name (by: the section's symbols by name, brt_elf_syms_by_name()). */
static int var_offset(const struct brt_elf_ctx *ctx, const uint32_t *by, size_t n,
		      const char *name, uint64_t *off, uint64_t *size)
{
	const struct brt_elf_sym *sym = brt_elf_sym_named(ctx, by, n, name);

	if (!sym)
		return -ENOENT;
	*off = sym->value;
	*size = sym->size;
	return 0;
}

static int btf_map_vars(struct brt_elf_ctx *ctx, uint32_t sec, const uint32_t *by, size_t nby)
{
	const struct brt_btf *btf = ctx->obj->btf;
	const struct btf_var_secinfo *vs;
	const struct btf_type *ds;
	int id, ret;

	if (!btf)
		return brt_elf_fail(ctx, -EINVAL, sec, 0, "BTF-defined maps need a .BTF section "
				    "(compile with -g)");
	id = brt_elf_datasec(ctx, ".maps");
	if (id < 0)
		return brt_elf_fail(ctx, -EINVAL, sec, 0, ".BTF has no DATASEC '.maps'");
	ds = brt_btf_type(btf, (uint32_t)id);
	vs = (const struct btf_var_secinfo *)(const void *)(ds + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(ds->info); i++) {
		const struct btf_type *var = brt_btf_type(btf, vs[i].type);
		struct def_loc loc = { .ctx = ctx, .sec = sec };
		struct brt_elf_map *m;
		uint64_t sz = 0, sym_size = 0;

		if (!var || BTF_INFO_KIND(var->info) != BTF_KIND_VAR)
			return brt_elf_fail(ctx, -EINVAL, sec, vs[i].offset,
					    "DATASEC '.maps' entry %u is not a variable", i);
		loc.name = brt_btf_str(btf, var->name_off);
		brt_btf_resolve_size(btf, var->type, &sz);
		/* The symbol's size counts the initialised part of a flexible `values` array. */
		if (var_offset(ctx, by, nby, loc.name, &loc.off, &sym_size))
			loc.off = vs[i].offset;
		if (sym_size > sz)
			sz = sym_size;
		if (loc.off > ctx->secs[sec].size || ctx->secs[sec].size - loc.off < sz)
			return brt_elf_fail(ctx, -EINVAL, sec, loc.off,
					    "map '%s' (%llu bytes) lies outside the section",
					    loc.name, (unsigned long long)sz);
		m = new_map(ctx);
		if (!m)
			return -ENOMEM;
		m->name = brt_elf_keep(ctx->obj, loc.name);
		if (!m->name)
			return -ENOMEM;
		m->kind = BRT_ELF_MAP_BTF;
		m->sec_idx = sec;
		m->sec_off = (uint32_t)loc.off;
		ret = parse_btf_def(&loc, brt_btf_skip_mods(btf, var->type), m, 0);
		if (ret)
			return ret;
		if (m->values_off)
			m->values_end = (uint32_t)(loc.off + sz);
	}
	return 0;
}

/* The maps of .maps (section sec), with the section's symbols sorted by name once (a
 * scan of every symbol per map was Tracee's ~200 maps times its ~20k symbols; a scan of
 * the section's symbols per map, quadratic in the maps, was a tenth of the open of an
 * object of 30 maps, tetragon's, in strcmp). */
static int with_syms_by_name(struct brt_elf_ctx *ctx, uint32_t sec,
			     int (*vars)(struct brt_elf_ctx *, uint32_t, const uint32_t *, size_t))
{
	uint32_t *by = NULL;
	size_t nby = 0;
	int ret = brt_elf_syms_by_name(ctx, sec, UINT64_MAX, &by, &nby);

	if (!ret)
		ret = vars(ctx, sec, by, nby);
	free(by);
	return ret;
}

static int btf_maps(struct brt_elf_ctx *ctx, uint32_t sec)
{
	return with_syms_by_name(ctx, sec, btf_map_vars);
}

static int data_map(struct brt_elf_ctx *ctx, uint32_t sec)
{
	const struct brt_elf_sec *s = &ctx->secs[sec];
	struct brt_elf_map *m;

	if (s->size > UINT32_MAX)
		return brt_elf_fail(ctx, -E2BIG, sec, 0, "%zu bytes of global data", s->size);
	m = new_map(ctx);
	if (!m)
		return -ENOMEM;
	m->sec_idx = sec;
	m->type = BPF_MAP_TYPE_ARRAY;
	m->key_size = 4;
	m->value_size = (uint32_t)s->size;
	m->max_entries = 1;
	if (!strncmp(s->name, ".rodata", 7)) {
		m->kind = BRT_ELF_MAP_RODATA;
		m->map_flags = BPF_F_RDONLY_PROG;
	} else if (!strncmp(s->name, ".bss", 4)) {
		m->kind = BRT_ELF_MAP_BSS;
	} else {
		m->kind = BRT_ELF_MAP_DATA;
	}
	m->name = brt_elf_keep(ctx->obj, s->name);
	if (!m->name)
		return -ENOMEM;
	/* as libbpf: the section's DATASEC is the value type, with no key type */
	if (ctx->obj->btf) {
		int id = brt_elf_datasec(ctx, s->name);

		if (id > 0)
			m->btf_value_type_id = (uint32_t)id;
	}
	if (s->type != SHT_NOBITS && s->data) {
		m->data = malloc(s->size);
		if (!m->data)
			return -ENOMEM;
		memcpy(m->data, s->data, s->size);
	}
	return 0;
}

/* A struct_ops section (libbpf's init_struct_ops_maps()): each variable of its DATASEC is
 * a struct of operations, one BPF_MAP_TYPE_STRUCT_OPS map (key 4 bytes, one entry; value
 * the local struct until the loader finds the kernel's, BPF_F_LINK in .struct_ops.link);
 * its function pointers are relocations to programs (brt_elf_collect_slots()).  Each
 * struct's offset is its symbol's: clang leaves the DATASEC offsets 0 for the loader to
 * fill (libbpf's btf_fixup_datasec() before it reads them), which a section of two
 * structs shows (the selftests' bpf_dctcp: dctcp_nouse, then dctcp at 192). */
static int struct_ops_vars(struct brt_elf_ctx *ctx, uint32_t sec, const uint32_t *by,
			   size_t nby)
{
	const struct brt_elf_sec *s = &ctx->secs[sec];
	const struct brt_btf *btf = ctx->obj->btf;
	const struct btf_var_secinfo *vsi;
	const struct btf_type *ds, *vt, *st;
	int id = btf ? brt_elf_datasec(ctx, s->name) : -1;

	if (id <= 0)
		return brt_elf_fail(ctx, -EINVAL, sec, 0, "struct_ops section without BTF");
	ds = brt_btf_type(btf, (uint32_t)id);
	vsi = (const struct btf_var_secinfo *)(ds + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(ds->info); i++) {
		struct brt_elf_map *m;
		uint64_t off, sym_size;
		uint32_t sid;

		vt = brt_btf_type(btf, vsi[i].type);
		if (!vt || BTF_INFO_KIND(vt->info) != BTF_KIND_VAR)
			return brt_elf_fail(ctx, -EINVAL, sec, vsi[i].offset,
					    "struct_ops: entry %u of the section is no variable", i);
		sid = brt_btf_skip_mods(btf, vt->type);
		st = brt_btf_type(btf, sid);
		if (!st || BTF_INFO_KIND(st->info) != BTF_KIND_STRUCT)
			return brt_elf_fail(ctx, -EINVAL, sec, vsi[i].offset,
					    "struct_ops: '%s' is not a struct",
					    brt_btf_name(btf, vsi[i].type));
		if (var_offset(ctx, by, nby, brt_btf_name(btf, vsi[i].type), &off, &sym_size))
			off = vsi[i].offset;
		/* off is a symbol's value, any 64 bits: off + size must not wrap */
		if (off > s->size || st->size > s->size - off || vsi[i].size < st->size)
			return brt_elf_fail(ctx, -EINVAL, sec, off,
					    "struct_ops: '%s' lies outside its section",
					    brt_btf_name(btf, vsi[i].type));
		m = new_map(ctx);
		if (!m)
			return -ENOMEM;
		m->kind = BRT_ELF_MAP_STRUCT_OPS;
		m->sec_idx = sec;
		m->sec_off = off;
		m->type = BPF_MAP_TYPE_STRUCT_OPS;
		m->key_size = 4;
		m->value_size = st->size;
		m->max_entries = 1;
		m->map_flags = !strcmp(s->name, ".struct_ops.link") ? BRT_F_LINK : 0;
		m->btf_value_type_id = sid;
		m->name = brt_elf_keep(ctx->obj, brt_btf_name(btf, vsi[i].type));
		m->data = calloc(1, st->size ? st->size : 1);
		if (!m->name || !m->data)
			return -ENOMEM;
		if (s->type != SHT_NOBITS && s->data)
			memcpy(m->data, s->data + off, st->size);
	}
	return 0;
}

static int struct_ops_maps(struct brt_elf_ctx *ctx, uint32_t sec)
{
	return with_syms_by_name(ctx, sec, struct_ops_vars);
}

/* libbpf answers LINUX_HAS_SYSCALL_WRAPPER by trying to put a kprobe on the arch's
 * __<arch>_sys_bpf: 1 only when that works.  The same program must take the same branch
 * here as under libbpf (BPF_KSYSCALL reads its arguments through the wrapper's pt_regs or
 * not), so ask the same question without creating a probe: can this kernel place kprobes
 * at all (the kprobe PMU, or tracefs' kprobe_events), and does it have the wrapper symbol.
 * On a kernel built without kprobes libbpf says 0, and so does this. */
static uint64_t has_syscall_wrapper(void)
{
#if defined(__x86_64__)
	static const char sym[] = " __x64_sys_bpf\n";
#elif defined(__aarch64__)
	static const char sym[] = " __arm64_sys_bpf\n";
#elif defined(__s390x__)
	static const char sym[] = " __s390x_sys_bpf\n";
#elif defined(__riscv)
	static const char sym[] = " __riscv_sys_bpf\n";
#else
	static const char sym[] = "";
#endif
	/* asked once per process (kallsyms is ~200k lines): -1 not yet, else the answer */
	static int answer = -1;
	char line[256];
	uint64_t found = 0;
	FILE *f;
	int a = __atomic_load_n(&answer, __ATOMIC_RELAXED);

	if (a >= 0)
		return (uint64_t)a;
	if (!sym[0])
		return 0;
	if (access("/sys/bus/event_source/devices/kprobe/type", R_OK) &&
	    access("/sys/kernel/tracing/kprobe_events", F_OK) &&
	    access("/sys/kernel/debug/tracing/kprobe_events", F_OK))
		f = NULL;
	else
		f = fopen("/proc/kallsyms", "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		/* "ADDR T name\n": the name is the last field */
		if (n >= sizeof(sym) - 1 && !strcmp(line + n - (sizeof(sym) - 1), sym))
			found = 1;
	}
	if (f)
		fclose(f);
	__atomic_store_n(&answer, (int)found, __ATOMIC_RELAXED);
	return found;
}

/* libbpf's values of the kconfig externs it computes itself (the rest come from the
 * kernel's config, kconfig.c: weak ones it does not set are 0, others refused). */
static int kconfig_value(const char *name, uint64_t *v)
{
	struct utsname u;
	unsigned a = 0, b = 0, c = 0;

	if (!strcmp(name, "LINUX_KERNEL_VERSION")) {
		if (uname(&u) || sscanf(u.release, "%u.%u.%u", &a, &b, &c) < 2)
			return 0;
		*v = (uint64_t)a << 16 | b << 8 | (c > 255 ? 255 : c);
		return 1;
	}
	/* Linux 6.18 has the BPF cookie helpers */
	if (!strcmp(name, "LINUX_HAS_BPF_COOKIE")) {
		*v = 1;
		return 1;
	}
	if (!strcmp(name, "LINUX_HAS_SYSCALL_WRAPPER")) {
		*v = has_syscall_wrapper();
		return 1;
	}
	return 0;
}

/* libbpf's find_kcfg_type(): what an extern's BTF type takes from the config */
static enum brt_kcfg_type kcfg_type(const struct brt_btf *btf, uint32_t id, int *is_signed)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));
	const char *name;

	*is_signed = 0;
	if (!t)
		return BRT_KCFG_UNKNOWN;
	name = brt_btf_str(btf, t->name_off);
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: {
		uint32_t enc = BTF_INT_ENCODING(*(const uint32_t *)(t + 1));

		if (enc & BTF_INT_BOOL)
			return t->size == 1 ? BRT_KCFG_BOOL : BRT_KCFG_UNKNOWN;
		*is_signed = !!(enc & BTF_INT_SIGNED);
		if (t->size == 1)
			return BRT_KCFG_CHAR;
		if (t->size != 2 && t->size != 4 && t->size != 8)
			return BRT_KCFG_UNKNOWN;
		return BRT_KCFG_INT;
	}
	case BTF_KIND_ENUM:
	case 19: /* BTF_KIND_ENUM64 */
		if ((BTF_INFO_KIND(t->info) == BTF_KIND_ENUM && t->size != 4) || !name ||
		    strcmp(name, "libbpf_tristate"))
			return BRT_KCFG_UNKNOWN;
		return BRT_KCFG_TRISTATE;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = (const struct btf_array *)(t + 1);
		int sgn;

		if (!a->nelems || kcfg_type(btf, a->type, &sgn) != BRT_KCFG_CHAR)
			return BRT_KCFG_UNKNOWN;
		return BRT_KCFG_CHAR_ARR;
	}
	default:
		return BRT_KCFG_UNKNOWN;
	}
}

static int sym_weak(const struct brt_elf_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->nsyms; i++)
		if (ctx->syms[i].shndx == SHN_UNDEF && ctx->syms[i].name &&
		    !strcmp(ctx->syms[i].name, name))
			return ctx->syms[i].bind == STB_WEAK;
	return 0;
}

/* Where variable i of the .kconfig DATASEC t lives: clang leaves extern offsets (and the
 * section size) 0, so the loader lays them out, as libbpf does, each at its size's
 * alignment (at most 8) in DATASEC order.  *size the variable's bytes; returns its
 * offset, or the whole section's size for i == vlen; -1 for a variable with no size. */
int64_t brt_elf_kconfig_off(const struct brt_btf *btf, const struct btf_type *t, uint32_t i,
			    uint32_t *size)
{
	const struct btf_var_secinfo *vsi = (const struct btf_var_secinfo *)(t + 1);
	uint64_t off = 0, sz = 0;

	for (uint32_t k = 0; k <= i && k < BTF_INFO_VLEN(t->info); k++) {
		const struct btf_type *var = brt_btf_type(btf, vsi[k].type);
		uint64_t a;

		off += sz;
		if (!var || brt_btf_resolve_size(btf, var->type, &sz) || !sz || sz > 4096)
			return -1;
		a = sz >= 8 ? 8 : sz >= 4 ? 4 : sz >= 2 ? 2 : 1;
		off = (off + a - 1) / a * a;
	}
	if (i >= BTF_INFO_VLEN(t->info))
		off += sz;
	*size = (uint32_t)sz;
	return (int64_t)off;
}

/* The .kconfig DATASEC of extern variables as libbpf fills it: a read-only, frozen
 * one-element array (no ELF section; sec_idx 0) the externs' lddw point into. */
static int kconfig_map(struct brt_elf_ctx *ctx)
{
	const struct brt_btf *btf = ctx->obj->btf;
	int id = btf ? brt_elf_datasec(ctx, ".kconfig") : -1;
	const struct btf_type *t;
	const struct btf_var_secinfo *vsi;
	struct brt_elf_map *m;

	if (id <= 0)
		return 0;
	t = brt_btf_type(btf, (uint32_t)id);
	vsi = (const struct btf_var_secinfo *)(t + 1);
	m = new_map(ctx);
	if (!m)
		return -ENOMEM;
	m->kind = BRT_ELF_MAP_RODATA;
	m->type = BPF_MAP_TYPE_ARRAY;
	m->key_size = 4;
	{
		uint32_t sz;
		int64_t total = brt_elf_kconfig_off(btf, t, BTF_INFO_VLEN(t->info), &sz);

		if (total < 0)
			return brt_elf_fail(ctx, -EINVAL, 0, 0, "a .kconfig extern has no size");
		m->value_size = total ? (uint32_t)total : 1;
	}
	m->max_entries = 1;
	m->map_flags = BPF_F_RDONLY_PROG;
	m->name = brt_elf_keep(ctx->obj, ".kconfig");
	m->data = calloc(1, m->value_size);
	if (!m->name || !m->data)
		return -ENOMEM;
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		const char *name = brt_btf_name(btf, vsi[i].type);
		uint64_t v = 0;
		uint32_t sz;
		int64_t off = brt_elf_kconfig_off(btf, t, i, &sz);

		const char *val = NULL;
		char why[128];
		int have, err, sgn;

		if (off < 0 || off + sz > m->value_size)
			return brt_elf_fail(ctx, -EINVAL, 0, 0, "extern (kcfg) '%s' outside .kconfig",
					    name);
		if (kconfig_value(name, &v)) {
			memcpy(m->data + off, &v, sz < 8 ? sz : 8);
			continue;
		}
		/* the kernel's config file, as libbpf reads it; a __weak extern it does
		 * not set stays 0 */
		have = brt_kconfig_get(name, &val);
		if (val) {
			const struct btf_type *var = brt_btf_type(btf, vsi[i].type);
			enum brt_kcfg_type kt = kcfg_type(btf, var ? var->type : 0, &sgn);

			err = brt_elf_kconfig_store(kt, sgn, val, m->data + off, sz, why, sizeof(why));
			if (err)
				return brt_elf_fail(ctx, err, 0, 0, "extern (kcfg) '%s': %s", name, why);
		} else if (!sym_weak(ctx, name)) {
			return brt_elf_fail(ctx, -ESRCH, 0, 0, "extern (kcfg) '%s': value not found%s",
					    name,
					    have ? " (no kernel config: /boot/config-<release> or "
						   "/proc/config.gz; a __weak extern is 0)"
						 : "");
		}
	}
	return 0;
}

int brt_elf_kconfig_at(const struct brt_elf_ctx *ctx, const char *name, uint32_t *off)
{
	const struct brt_btf *btf = ctx->obj->btf;
	int id = btf && name ? brt_elf_datasec(ctx, ".kconfig") : -1;
	const struct btf_type *t;
	const struct btf_var_secinfo *vsi;

	if (id <= 0)
		return -1;
	t = brt_btf_type(btf, (uint32_t)id);
	vsi = (const struct btf_var_secinfo *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		if (strcmp(brt_btf_name(btf, vsi[i].type), name))
			continue;
		uint32_t sz;
		int64_t o = brt_elf_kconfig_off(btf, t, i, &sz);

		for (size_t k = 0; o >= 0 && k < ctx->obj->nmaps; k++)
			if (ctx->obj->maps[k].sec_idx == 0 && ctx->obj->maps[k].name &&
			    !strcmp(ctx->obj->maps[k].name, ".kconfig")) {
				*off = (uint32_t)o;
				return (int)k;
			}
	}
	return -1;
}

int brt_elf_collect_maps(struct brt_elf_ctx *ctx)
{
	static const enum brt_elf_sec_kind order[] = { BRT_SEC_MAPS, BRT_SEC_BTF_MAPS,
						       BRT_SEC_DATA, BRT_SEC_STRUCT_OPS };
	int ret = 0;

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		for (uint32_t i = 1; i < ctx->nsecs && !ret; i++) {
			if (ctx->secs[i].kind != order[k] || !ctx->secs[i].size)
				continue;
			if (order[k] == BRT_SEC_MAPS)
				ret = legacy_maps(ctx, i);
			else if (order[k] == BRT_SEC_BTF_MAPS)
				ret = btf_maps(ctx, i);
			else if (order[k] == BRT_SEC_STRUCT_OPS)
				ret = struct_ops_maps(ctx, i);
			else
				ret = data_map(ctx, i);
		}
	}
	return ret ? ret : kconfig_map(ctx);
}

int brt_elf_map_at(const struct brt_elf_ctx *ctx, uint32_t sec, uint64_t off)
{
	for (size_t i = 0; i < ctx->obj->nmaps; i++) {
		const struct brt_elf_map *m = &ctx->obj->maps[i];

		if (m->sec_idx != sec)
			continue;
		if (m->kind == BRT_ELF_MAP_LEGACY || m->kind == BRT_ELF_MAP_BTF) {
			if (m->sec_off == off)
				return (int)i;
		} else {
			return (int)i;
		}
	}
	return -1;
}

static int slot_target(struct brt_elf_ctx *ctx, uint32_t sec, const struct brt_elf_rel *r,
		       const struct brt_elf_map *m, int32_t *target)
{
	const struct brt_elf_sym *sym = &ctx->syms[r->sym];

	if (m->type == BPF_MAP_TYPE_PROG_ARRAY) {
		for (size_t i = 0; i < ctx->nfuncs; i++) {
			const struct brt_elf_func *f = &ctx->funcs[i];

			if (f->sec == sym->shndx && (uint64_t)f->start * 8 == sym->value &&
			    f->prog >= 0) {
				*target = f->prog;
				return 0;
			}
		}
		return brt_elf_fail(ctx, -EINVAL, sec, r->off,
				    "map '%s': entry refers to '%s', which is not a program",
				    m->name, sym->name);
	}
	if (m->type == BPF_MAP_TYPE_ARRAY_OF_MAPS || m->type == BPF_MAP_TYPE_HASH_OF_MAPS) {
		int idx = ctx->secs[sym->shndx < ctx->nsecs ? sym->shndx : 0].kind ==
					  BRT_SEC_BTF_MAPS ?
				  brt_elf_map_at(ctx, sym->shndx, sym->value) :
				  -1;

		if (idx < 0)
			return brt_elf_fail(ctx, -EINVAL, sec, r->off,
					    "map '%s': entry refers to '%s', which is not a map",
					    m->name, sym->name);
		*target = idx;
		return 0;
	}
	return brt_elf_fail(ctx, -EINVAL, sec, r->off,
			    "map '%s': initial values are only for prog arrays and maps of maps",
			    m->name);
}

/* A struct_ops section's relocations: the function pointer at byte X of a struct is the
 * program the symbol starts (slot index X). */
static int struct_ops_slots(struct brt_elf_ctx *ctx, uint32_t s)
{
	const struct brt_elf_sec *sec = &ctx->secs[s];

	for (size_t i = 0; i < sec->nrels; i++) {
		const struct brt_elf_rel *r = &sec->rels[i];
		const struct brt_elf_sym *sym = &ctx->syms[r->sym];
		struct brt_elf_map *m = NULL;
		int32_t target = -1;
		int ret;

		for (size_t j = 0; j < ctx->obj->nmaps; j++) {
			struct brt_elf_map *c = &ctx->obj->maps[j];

			if (c->kind == BRT_ELF_MAP_STRUCT_OPS && c->sec_idx == s &&
			    r->off >= c->sec_off && r->off - c->sec_off < c->value_size)
				m = c;
		}
		for (size_t f = 0; m && f < ctx->nfuncs; f++)
			if (ctx->funcs[f].sec == sym->shndx &&
			    (uint64_t)ctx->funcs[f].start * 8 == sym->value && ctx->funcs[f].prog >= 0)
				target = ctx->funcs[f].prog;
		if (!m || target < 0 || (r->off - m->sec_off) % 8)
			return brt_elf_fail(ctx, -EINVAL, s, r->off,
					    "struct_ops: relocation %u against '%s' is no function "
					    "pointer of a struct to a program", r->idx, sym->name);
		if ((ret = add_slot(m, (uint32_t)(r->off - m->sec_off), target)))
			return ret;
	}
	return 0;
}

int brt_elf_collect_slots(struct brt_elf_ctx *ctx)
{
	for (uint32_t s = 1; s < ctx->nsecs; s++) {
		const struct brt_elf_sec *sec = &ctx->secs[s];

		if (sec->kind == BRT_SEC_STRUCT_OPS) {
			int ret = struct_ops_slots(ctx, s);

			if (ret)
				return ret;
			continue;
		}
		if (sec->kind != BRT_SEC_BTF_MAPS)
			continue;
		for (size_t i = 0; i < sec->nrels; i++) {
			const struct brt_elf_rel *r = &sec->rels[i];
			struct brt_elf_map *m = NULL;
			int32_t target = -1;
			int ret;

			if (r->type != R_BPF_64_ABS64 && r->type != R_BPF_64_64 &&
			    r->type != R_BPF_GNU_DATA_64)
				return brt_elf_fail(ctx, -ENOTSUP, s, r->off,
						    "relocation %u: type %u in .maps (want "
						    "R_BPF_64_ABS64)", r->idx, r->type);
			for (size_t j = 0; j < ctx->obj->nmaps; j++) {
				struct brt_elf_map *c = &ctx->obj->maps[j];

				if (c->sec_idx == s && c->values_off && r->off >= c->values_off &&
				    r->off < c->values_end)
					m = c;
			}
			if (!m || (r->off - m->values_off) % 8)
				return brt_elf_fail(ctx, -EINVAL, s, r->off,
						    "relocation %u against '%s' is not inside the "
						    "'values' array of a map", r->idx,
						    ctx->syms[r->sym].name);
			if ((ret = slot_target(ctx, s, r, m, &target)) ||
			    (ret = add_slot(m, (uint32_t)((r->off - m->values_off) / 8), target)))
				return ret;
		}
	}
	return 0;
}

/* tc's conventions for the sections of its objects (iproute2 lib/bpf_legacy.c):
 * - a section "N/M" is a tail call target: its program goes into key M of the prog array
 *   whose bpf_elf_map id is N (bpf_fill_prog_arrays; no such map: left alone, as tc does);
 * - tc loads every program section as the type its command names, so in an object written
 *   for tc (bpf_elf_map maps, sections "classifier"/"action" or "N/M") a section whose name
 *   gives no type ("from-container", "2/1", "ingress") is a classifier, or an action when
 *   the object's named sections are actions only. */
int brt_elf_tc_sections(struct brt_elf_ctx *ctx)
{
	struct brt_elf_obj *obj = ctx->obj;
	int classifier = 0, action = 0, tail = 0;
	uint32_t id, key;

	for (size_t i = 0; i < obj->nprogs; i++) {
		const char *sec = obj->progs[i].sec_name;

		/* tc's default section names, exactly (libbpf-style "classifier/x" is not) */
		classifier |= !strcmp(sec, "classifier");
		action |= !strcmp(sec, "action");
		tail |= brt_elf_tail_sec(sec, &id, &key);
	}
	if (!ctx->tc_object && !classifier && !action && !tail)
		return 0;
	for (size_t i = 0; i < obj->nprogs; i++) {
		struct brt_elf_prog *p = &obj->progs[i];

		if (p->type == BPF_PROG_TYPE_UNSPEC)
			p->type = action && !classifier ? BPF_PROG_TYPE_SCHED_ACT :
							  BPF_PROG_TYPE_SCHED_CLS;
		/* one program per tail-call section: tc loads the section as one */
		if (!brt_elf_tail_sec(p->sec_name, &id, &key) ||
		    (i && obj->progs[i - 1].sec_idx == p->sec_idx))
			continue;
		for (size_t m = 0; m < obj->nmaps; m++) {
			struct brt_elf_map *map = &obj->maps[m];
			int ret;

			if (map->kind != BRT_ELF_MAP_LEGACY || map->id != id || !id ||
			    map->type != BPF_MAP_TYPE_PROG_ARRAY)
				continue;
			if (key >= map->max_entries)
				return brt_elf_fail(ctx, -EINVAL, p->sec_idx, 0,
						    "tail call section '%s': key %u is past the %u "
						    "entries of map '%s' (id %u)", p->sec_name, key,
						    map->max_entries, map->name, id);
			if ((ret = add_slot(map, key, (int32_t)i)))
				return ret;
			break;
		}
	}
	return 0;
}
