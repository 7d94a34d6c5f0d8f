/* core.c - CO-RE ("compile once, run everywhere") relocations: the compiler records, for an
 * instruction that reads a field, a type's size or id, or an enumerator, the local type and
 * an accessor string ("0:1:2": element of the root pointer, then member or array indexes);
 * here the same entity is found in the target BTF (the running kernel's vmlinux, or a
 * file) and the instruction's constant is rewritten for it.  The rules are libbpf's, so
 * that an object relocates to the same instructions under bpfrt as under libbpf:
 *
 *   - candidates are the target types of a compatible kind (enum and enum64 mix) whose
 *     name equals the local one once a "___flavour" suffix is dropped from both;
 *   - a field access matches a candidate when every named member along the local path
 *     exists by name in the candidate (anonymous structs and unions are searched through),
 *     with compatible types, and every array index is within bounds;
 *   - all matching candidates must agree on the result, and the candidates that matched
 *     become the list for the next relocation of the same local type (as libbpf prunes);
 *   - no match: existence kinds answer 0, TYPE_ID_TARGET/TYPE_SIZE 0, and the other kinds
 *     poison the instruction (a call to helper 0xbad2310, which the verifier refuses only
 *     if the instruction is reachable, so guarded code still loads).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"

#define SPEC_MAX 64 /* libbpf's BPF_CORE_SPEC_MAX_LEN */
#define MATCH_DEPTH 32

/* One step of an access path with a meaning: a named member or an array index. */
struct acc {
	uint32_t type_id;  /* struct/union holding the member, or the array's element type */
	uint32_t idx;      /* member index or array index */
	const char *name;  /* member name; NULL for an array index */
};

struct spec {
	const struct brt_btf *btf;
	uint32_t root;            /* root type id */
	uint32_t kind;            /* enum bpf_core_relo_kind */
	struct acc acc[SPEC_MAX]; /* named members and indexes */
	int len;
	int raw[SPEC_MAX];        /* every step of the accessor string, anonymous members too */
	int raw_len;
	uint32_t bit_off;         /* of the accessed field from the root */
};

struct brt_core_cands {
	uint32_t *ids; /* target candidates (pruned as relocations resolve) */
	uint32_t n;
	int done;      /* searched */
};

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

const char *brt_core_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[BPF_CORE_FIELD_BYTE_OFFSET] = "byte_off",
		[BPF_CORE_FIELD_BYTE_SIZE] = "byte_sz",
		[BPF_CORE_FIELD_EXISTS] = "field_exists",
		[BPF_CORE_FIELD_SIGNED] = "signed",
		[BPF_CORE_FIELD_LSHIFT_U64] = "lshift_u64",
		[BPF_CORE_FIELD_RSHIFT_U64] = "rshift_u64",
		[BPF_CORE_TYPE_ID_LOCAL] = "local_type_id",
		[BPF_CORE_TYPE_ID_TARGET] = "target_type_id",
		[BPF_CORE_TYPE_EXISTS] = "type_exists",
		[BPF_CORE_TYPE_SIZE] = "type_size",
		[BPF_CORE_ENUMVAL_EXISTS] = "enumval_exists",
		[BPF_CORE_ENUMVAL_VALUE] = "enumval_value",
		[BPF_CORE_TYPE_MATCHES] = "type_matches",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

static int is_field_kind(uint32_t k)
{
	return k <= BPF_CORE_FIELD_RSHIFT_U64;
}

static int is_type_kind(uint32_t k)
{
	return k == BPF_CORE_TYPE_ID_LOCAL || k == BPF_CORE_TYPE_ID_TARGET ||
	       k == BPF_CORE_TYPE_EXISTS || k == BPF_CORE_TYPE_SIZE ||
	       k == BPF_CORE_TYPE_MATCHES;
}

static int is_enumval_kind(uint32_t k)
{
	return k == BPF_CORE_ENUMVAL_EXISTS || k == BPF_CORE_ENUMVAL_VALUE;
}

/* ---- small readers over checked BTF records ---- */

static unsigned int kind_of(const struct btf_type *t)
{
	return t ? BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;
}

static unsigned int vlen_of(const struct btf_type *t)
{
	return BTF_INFO_VLEN(t->info);
}

static int is_composite(const struct btf_type *t)
{
	return t && (kind_of(t) == BTF_KIND_STRUCT || kind_of(t) == BTF_KIND_UNION);
}

static int is_any_enum(const struct btf_type *t)
{
	return t && (kind_of(t) == BTF_KIND_ENUM || kind_of(t) == BTF_KIND_ENUM64);
}

static struct btf_member member(const struct btf_type *t, uint32_t i)
{
	struct btf_member m;

	memcpy(&m, (const char *)(t + 1) + i * sizeof(m), sizeof(m));
	return m;
}

static uint32_t member_bit_off(const struct btf_type *t, uint32_t i)
{
	uint32_t off = member(t, i).offset;

	return BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(off) : off;
}

static uint32_t member_bitfield_size(const struct btf_type *t, uint32_t i)
{
	uint32_t off = member(t, i).offset;

	return BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BITFIELD_SIZE(off) : 0;
}

static struct btf_array array_of(const struct btf_type *t)
{
	struct btf_array a;

	memcpy(&a, t + 1, sizeof(a));
	return a;
}

static uint32_t int_word(const struct btf_type *t)
{
	uint32_t w;

	memcpy(&w, t + 1, sizeof(w));
	return w;
}

static struct btf_param param(const struct btf_type *t, uint32_t i)
{
	struct btf_param p;

	memcpy(&p, (const char *)(t + 1) + i * sizeof(p), sizeof(p));
	return p;
}

/* Name offset and value of enumerator i of an enum or enum64. */
static uint32_t enum_name_off(const struct btf_type *t, uint32_t i)
{
	if (kind_of(t) == BTF_KIND_ENUM) {
		struct btf_enum e;

		memcpy(&e, (const char *)(t + 1) + i * sizeof(e), sizeof(e));
		return e.name_off;
	} else {
		struct btf_enum64 e;

		memcpy(&e, (const char *)(t + 1) + i * sizeof(e), sizeof(e));
		return e.name_off;
	}
}

static uint64_t enum_value(const struct btf_type *t, uint32_t i)
{
	if (kind_of(t) == BTF_KIND_ENUM) {
		struct btf_enum e;

		memcpy(&e, (const char *)(t + 1) + i * sizeof(e), sizeof(e));
		/* a 32-bit value widens with its sign, as libbpf stores it */
		return (uint64_t)(int64_t)e.val;
	} else {
		struct btf_enum64 e;

		memcpy(&e, (const char *)(t + 1) + i * sizeof(e), sizeof(e));
		return ((uint64_t)e.val_hi32 << 32) | e.val_lo32;
	}
}

/* libbpf's lower-case kind names in its messages ("struct", "void" for type 0). */
static const char *kind_str(const struct btf_type *t)
{
	static const char *const names[NR_BTF_KINDS] = {
		[BTF_KIND_UNKN] = "void", [BTF_KIND_INT] = "int", [BTF_KIND_PTR] = "ptr",
		[BTF_KIND_ARRAY] = "array", [BTF_KIND_STRUCT] = "struct",
		[BTF_KIND_UNION] = "union", [BTF_KIND_ENUM] = "enum", [BTF_KIND_FWD] = "fwd",
		[BTF_KIND_TYPEDEF] = "typedef", [BTF_KIND_VOLATILE] = "volatile",
		[BTF_KIND_CONST] = "const", [BTF_KIND_RESTRICT] = "restrict",
		[BTF_KIND_FUNC] = "func", [BTF_KIND_FUNC_PROTO] = "func_proto",
		[BTF_KIND_VAR] = "var", [BTF_KIND_DATASEC] = "datasec", [BTF_KIND_FLOAT] = "float",
		[BTF_KIND_DECL_TAG] = "decl_tag", [BTF_KIND_TYPE_TAG] = "type_tag",
		[BTF_KIND_ENUM64] = "enum64",
	};
	unsigned int k = kind_of(t);

	return k < NR_BTF_KINDS && names[k] ? names[k] : "unknown";
}

/* Skip modifiers and typedefs; *id becomes the resolved id.  NULL for void. */
static const struct btf_type *skip(const struct brt_btf *btf, uint32_t id, uint32_t *out)
{
	id = brt_btf_skip_mods(btf, id);
	if (out)
		*out = id;
	return brt_btf_type(btf, id);
}

static int64_t size_of(const struct brt_btf *btf, uint32_t id)
{
	uint64_t sz;
	int ret = brt_btf_resolve_size(btf, id, &sz);

	return ret ? ret : (int64_t)sz;
}

static const char *str_of(const struct brt_btf *btf, uint32_t off)
{
	const char *s = brt_btf_str(btf, off);

	return s ? s : "";
}

/* Length of a name without its "___flavour" suffix: the last "X___Y" where neither X nor
 * Y is an underscore ends the essential part. */
size_t brt_core_essential_len(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = n >= 5 ? n - 5 + 1 : 0; i-- > 0;) {
		const char *s = name + i;

		if (s[0] != '_' && s[1] == '_' && s[2] == '_' && s[3] == '_' && s[4] != '_')
			return i + 1;
	}
	return n;
}

static int kinds_compat(const struct btf_type *a, const struct btf_type *b)
{
	return kind_of(a) == kind_of(b) || (is_any_enum(a) && is_any_enum(b));
}

static int names_match(const char *a, const char *b)
{
	size_t la = brt_core_essential_len(a), lb = brt_core_essential_len(b);

	return la == lb && !strncmp(a, b, la);
}

/* ---- the accessor string ---- */

/* Whether the array accessed after acc is a flexible array member: zero-sized and the
 * last member of the struct holding it. */
static int is_flex(const struct brt_btf *btf, const struct acc *acc, const struct btf_array *a)
{
	const struct btf_type *t;

	if (!acc->name || a->nelems)
		return 0;
	t = brt_btf_type(btf, acc->type_id);
	return t && acc->idx == vlen_of(t) - 1;
}

static int parse_spec(const struct brt_btf *btf, const struct brt_btf_core_relo *r,
		      struct spec *sp)
{
	const char *s = r->access;
	const struct btf_type *t;
	uint32_t id;
	int64_t sz;

	memset(sp, 0, sizeof(*sp));
	sp->btf = btf;
	sp->root = r->type_id;
	sp->kind = r->kind;
	if (!*s || *s == ':')
		return -EINVAL;
	if (is_type_kind(r->kind))
		return strcmp(s, "0") ? -EINVAL : 0;
	while (*s) {
		char *end;
		long v;

		if (*s == ':')
			s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = strtol(s, &end, 10);
		if (v > INT32_MAX)
			return -EINVAL;
		if (sp->raw_len == SPEC_MAX)
			return -E2BIG;
		sp->raw[sp->raw_len++] = (int)v;
		s = end;
	}
	t = skip(btf, r->type_id, &id);
	if (!t)
		return -EINVAL;
	sp->acc[0] = (struct acc){ .type_id = id, .idx = (uint32_t)sp->raw[0] };
	sp->len = 1;
	if (is_enumval_kind(r->kind)) {
		if (!is_any_enum(t) || sp->raw_len > 1 || (uint32_t)sp->raw[0] >= vlen_of(t))
			return -EINVAL;
		sp->acc[0].name = str_of(btf, enum_name_off(t, (uint32_t)sp->raw[0]));
		return 0;
	}
	if (!is_field_kind(r->kind))
		return -EINVAL;
	sz = size_of(btf, id);
	if (sz < 0)
		return (int)sz;
	sp->bit_off = (uint32_t)((uint64_t)sp->raw[0] * (uint64_t)sz * 8);
	for (int i = 1; i < sp->raw_len; i++) {
		uint32_t idx = (uint32_t)sp->raw[i];

		t = skip(btf, id, &id);
		if (!t)
			return -EINVAL;
		if (is_composite(t)) {
			struct btf_member m;

			if (idx >= vlen_of(t))
				return -EINVAL;
			m = member(t, idx);
			sp->bit_off += member_bit_off(t, idx);
			if (m.name_off) {
				const char *name = str_of(btf, m.name_off);

				if (!*name)
					return -EINVAL;
				sp->acc[sp->len++] = (struct acc){ id, idx, name };
			}
			id = m.type;
		} else if (kind_of(t) == BTF_KIND_ARRAY) {
			struct btf_array a = array_of(t);

			if (!skip(btf, a.type, &id))
				return -EINVAL;
			if (!is_flex(btf, &sp->acc[sp->len - 1], &a) && idx >= a.nelems)
				return -EINVAL;
			sp->acc[sp->len++] = (struct acc){ id, idx, NULL };
			sz = size_of(btf, id);
			if (sz < 0)
				return (int)sz;
			sp->bit_off += (uint32_t)(idx * (uint64_t)sz * 8);
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/* "<byte_off> [12] STRUCT task_struct.pid (0:63 @ offset 2412)", libbpf's form. */
static void format_spec(char *buf, size_t len, const struct spec *sp)
{
	const struct btf_type *t = brt_btf_type(sp->btf, sp->root);
	const char *name = brt_btf_name(sp->btf, sp->root);
	size_t n = 0;

#define APPEND(...)                                                          \
	do {                                                                 \
		if (n < len) {                                               \
			int r_ = snprintf(buf + n, len - n, __VA_ARGS__);    \
			n += r_ > 0 ? (size_t)r_ : 0;                        \
		}                                                            \
	} while (0)

	buf[0] = 0;
	APPEND("<%s> [%u] %s %s", brt_core_kind_name(sp->kind), sp->root,
	       kind_str(t), *name ? name : "<anon>");
	if (is_type_kind(sp->kind) || sp->raw_len == 0)
		return;
	if (is_enumval_kind(sp->kind)) {
		const struct btf_type *e = skip(sp->btf, sp->root, NULL);
		uint32_t i = (uint32_t)sp->raw[0];
		uint64_t v = enum_value(e, i);

		if (kind_of(e) == BTF_KIND_ENUM)
			APPEND(BTF_INFO_KFLAG(e->info) ? "::%s = %d" : "::%s = %u",
			       str_of(sp->btf, enum_name_off(e, i)), (int)(uint32_t)v);
		else
			APPEND(BTF_INFO_KFLAG(e->info) ? "::%s = %lld" : "::%s = %llu",
			       str_of(sp->btf, enum_name_off(e, i)), (long long)v);
		return;
	}
	for (int i = 0; i < sp->len; i++) {
		if (sp->acc[i].name)
			APPEND(".%s", sp->acc[i].name);
		else if (i > 0 || sp->acc[i].idx > 0)
			APPEND("[%u]", sp->acc[i].idx);
	}
	APPEND(" (");
	for (int i = 0; i < sp->raw_len; i++)
		APPEND("%s%d", i ? ":" : "", sp->raw[i]);
	if (sp->bit_off % 8)
		APPEND(" @ offset %u.%u)", sp->bit_off / 8, sp->bit_off % 8);
	else
		APPEND(" @ offset %u)", sp->bit_off / 8);
#undef APPEND
}

/* ---- type compatibility ---- */

/* libbpf's "types are compatible" for TYPE_EXISTS/SIZE/ID_TARGET: same kind after
 * modifiers; ints not old-style bitfields; pointers, arrays and function prototypes
 * compared through. */
static int types_compat(const struct brt_btf *lb, uint32_t lid, const struct brt_btf *tb,
			uint32_t tid, int level)
{
	const struct btf_type *lt = brt_btf_type(lb, lid), *tt = brt_btf_type(tb, tid);

	if (!kinds_compat(lt, tt))
		return 0;
	for (int depth = 0; depth < MATCH_DEPTH; depth++) {
		lt = skip(lb, lid, &lid);
		tt = skip(tb, tid, &tid);
		if (!lt || !tt) /* void: compatible only with void */
			return !lt && !tt;
		if (!kinds_compat(lt, tt))
			return 0;
		switch (kind_of(lt)) {
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_FWD:
			return 1;
		case BTF_KIND_INT:
			return BTF_INT_OFFSET(int_word(lt)) == 0 && BTF_INT_OFFSET(int_word(tt)) == 0;
		case BTF_KIND_PTR:
			lid = lt->type;
			tid = tt->type;
			break;
		case BTF_KIND_ARRAY:
			lid = array_of(lt).type;
			tid = array_of(tt).type;
			break;
		case BTF_KIND_FUNC_PROTO:
			if (vlen_of(lt) != vlen_of(tt))
				return 0;
			for (uint32_t i = 0; i < vlen_of(lt); i++) {
				int r;

				if (level <= 0)
					return -EINVAL;
				r = types_compat(lb, brt_btf_skip_mods(lb, param(lt, i).type), tb,
						 brt_btf_skip_mods(tb, param(tt, i).type), level - 1);
				if (r <= 0)
					return r;
			}
			lid = lt->type;
			tid = tt->type;
			break;
		default:
			return 0;
		}
	}
	return -EINVAL;
}

int brt_btf_types_compat(const struct brt_btf *lb, uint32_t lid, const struct brt_btf *tb,
			 uint32_t tid)
{
	return types_compat(lb, lid, tb, tid, MATCH_DEPTH);
}

static int name_offs_match(const struct brt_btf *lb, uint32_t loff, const struct brt_btf *tb,
			   uint32_t toff)
{
	const char *l = str_of(lb, loff), *t = str_of(tb, toff);

	if (!*t)
		return !*l;
	return names_match(l, t);
}

static int types_match(const struct brt_btf *lb, uint32_t lid, const struct brt_btf *tb,
		       uint32_t tid, int behind_ptr, int level);

/* Every local member has a member of the same name in the target whose type matches. */
static int composites_match(const struct brt_btf *lb, const struct btf_type *lt,
			    const struct brt_btf *tb, const struct btf_type *tt, int behind_ptr,
			    int level)
{
	if (vlen_of(lt) > vlen_of(tt))
		return 0;
	for (uint32_t i = 0; i < vlen_of(lt); i++) {
		struct btf_member lm = member(lt, i);
		int matched = 0;

		for (uint32_t j = 0; j < vlen_of(tt) && !matched; j++) {
			struct btf_member tm = member(tt, j);
			int r;

			if (!name_offs_match(lb, lm.name_off, tb, tm.name_off))
				continue;
			r = types_match(lb, lm.type, tb, tm.type, behind_ptr, level - 1);
			if (r < 0)
				return r;
			matched = r > 0;
		}
		if (!matched)
			return 0;
	}
	return 1;
}

static int enums_match(const struct brt_btf *lb, const struct btf_type *lt,
		       const struct brt_btf *tb, const struct btf_type *tt)
{
	if (lt->size != tt->size || vlen_of(lt) > vlen_of(tt))
		return 0;
	for (uint32_t i = 0; i < vlen_of(lt); i++) {
		int matched = 0;

		for (uint32_t j = 0; j < vlen_of(tt) && !matched; j++)
			matched = name_offs_match(lb, enum_name_off(lt, i), tb, enum_name_off(tt, j));
		if (!matched)
			return 0;
	}
	return 1;
}

/* libbpf's TYPE_MATCHES relation (bpf_core_type_matches()): same kinds after modifiers,
 * names equal up to flavours, ints of the same size and signedness, enums whose local
 * enumerators all exist by name, structs whose local members all exist and match (only
 * by kind behind a pointer, where a forward declaration also matches), arrays of the same
 * length, function prototypes argument by argument. */
static int types_match(const struct brt_btf *lb, uint32_t lid, const struct brt_btf *tb,
		       uint32_t tid, int behind_ptr, int level)
{
	if (level <= 0)
		return -EINVAL;
	for (int depth = 0; depth < MATCH_DEPTH; depth++) {
		const struct btf_type *lt = skip(lb, lid, &lid), *tt = skip(tb, tid, &tid);
		unsigned int lk, tk;

		if (!lt || !tt)
			return lt == tt ? 1 : 0;
		if (!name_offs_match(lb, lt->name_off, tb, tt->name_off))
			return 0;
		lk = kind_of(lt);
		tk = kind_of(tt);
		switch (lk) {
		case BTF_KIND_FWD: {
			int lf = BTF_INFO_KFLAG(lt->info);

			if (behind_ptr && lk != tk)
				return (tk == BTF_KIND_STRUCT && !lf) || (tk == BTF_KIND_UNION && lf);
			return lk == tk && lf == (int)BTF_INFO_KFLAG(tt->info);
		}
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
			return is_any_enum(tt) && enums_match(lb, lt, tb, tt);
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			if (behind_ptr) {
				if (lk == tk)
					return 1;
				return tk == BTF_KIND_FWD &&
				       (lk == BTF_KIND_UNION) == !!BTF_INFO_KFLAG(tt->info);
			}
			return lk == tk && composites_match(lb, lt, tb, tt, behind_ptr, level);
		case BTF_KIND_INT:
			return lk == tk && lt->size == tt->size &&
			       (BTF_INT_ENCODING(int_word(lt)) & BTF_INT_SIGNED) ==
				       (BTF_INT_ENCODING(int_word(tt)) & BTF_INT_SIGNED);
		case BTF_KIND_PTR:
			if (lk != tk)
				return 0;
			behind_ptr = 1;
			lid = lt->type;
			tid = tt->type;
			break;
		case BTF_KIND_ARRAY:
			if (lk != tk || array_of(lt).nelems != array_of(tt).nelems)
				return 0;
			lid = array_of(lt).type;
			tid = array_of(tt).type;
			break;
		case BTF_KIND_FUNC_PROTO:
			if (lk != tk || vlen_of(lt) != vlen_of(tt))
				return 0;
			for (uint32_t i = 0; i < vlen_of(lt); i++) {
				int r = types_match(lb, param(lt, i).type, tb, param(tt, i).type,
						    behind_ptr, level - 1);

				if (r <= 0)
					return r;
			}
			lid = lt->type;
			tid = tt->type;
			break;
		default:
			return 0;
		}
	}
	return -EINVAL;
}

/* Field types a relocated access may see: composites with composites, pointers with
 * pointers, floats, enums and forward declarations of the same name (or one anonymous),
 * ints of any size and sign (not old-style bitfield ints), arrays by element type. */
static int fields_compat(const struct brt_btf *lb, uint32_t lid, const struct brt_btf *tb,
			 uint32_t tid)
{
	for (int depth = 0; depth < MATCH_DEPTH; depth++) {
		const struct btf_type *lt = skip(lb, lid, &lid), *tt = skip(tb, tid, &tid);

		if (!lt || !tt) /* void is no field type */
			return 0;
		if (is_composite(lt) && is_composite(tt))
			return 1;
		if (!kinds_compat(lt, tt))
			return 0;
		switch (kind_of(lt)) {
		case BTF_KIND_PTR:
		case BTF_KIND_FLOAT:
			return 1;
		case BTF_KIND_FWD:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64: {
			const char *ln = str_of(lb, lt->name_off), *tn = str_of(tb, tt->name_off);

			return !brt_core_essential_len(ln) || !brt_core_essential_len(tn) ||
			       names_match(ln, tn);
		}
		case BTF_KIND_INT:
			return BTF_INT_OFFSET(int_word(lt)) == 0 && BTF_INT_OFFSET(int_word(tt)) == 0;
		case BTF_KIND_ARRAY:
			lid = array_of(lt).type;
			tid = array_of(tt).type;
			break;
		default:
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- matching a local spec against one candidate ---- */

/* Find the member named by local accessor la in target composite tid, searching anonymous
 * members depth-first; extends ts (raw steps, bit offset, accessor).  1 found, 0 not, <0. */
static int match_member(const struct spec *ls, const struct acc *la, const struct brt_btf *tb,
			uint32_t tid, struct spec *ts, uint32_t *next)
{
	const struct btf_type *tt = skip(tb, tid, &tid), *lt;
	struct btf_member lm;
	const char *lname;

	if (!is_composite(tt))
		return 0;
	lt = brt_btf_type(ls->btf, la->type_id);
	lm = member(lt, la->idx);
	lname = str_of(ls->btf, lm.name_off);
	for (uint32_t i = 0; i < vlen_of(tt); i++) {
		struct btf_member m = member(tt, i);
		uint32_t off = member_bit_off(tt, i);
		const char *tname = str_of(tb, m.name_off);
		int r;

		if (ts->raw_len == SPEC_MAX)
			return -E2BIG;
		ts->bit_off += off;
		ts->raw[ts->raw_len++] = (int)i;
		if (!*tname) {
			r = match_member(ls, la, tb, m.type, ts, next);
			if (r)
				return r;
		} else if (!strcmp(lname, tname)) {
			ts->acc[ts->len++] = (struct acc){ tid, i, tname };
			*next = m.type;
			r = fields_compat(ls->btf, lm.type, tb, m.type);
			if (!r)
				ts->len--;
			return r;
		}
		ts->bit_off -= off;
		ts->raw_len--;
	}
	return 0;
}

static int spec_match(const struct spec *ls, const struct brt_btf *tb, uint32_t tid,
		      struct spec *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->btf = tb;
	ts->root = tid;
	ts->kind = ls->kind;
	if (is_type_kind(ls->kind))
		return ls->kind == BPF_CORE_TYPE_MATCHES
			       ? types_match(ls->btf, ls->root, tb, tid, 0, MATCH_DEPTH)
			       : types_compat(ls->btf, ls->root, tb, tid, MATCH_DEPTH);
	if (is_enumval_kind(ls->kind)) {
		const struct btf_type *tt = skip(tb, tid, &tid);

		if (!is_any_enum(tt))
			return 0;
		for (uint32_t i = 0; i < vlen_of(tt); i++) {
			const char *tn = str_of(tb, enum_name_off(tt, i));

			if (names_match(ls->acc[0].name, tn)) {
				ts->acc[0] = (struct acc){ tid, i, tn };
				ts->len = 1;
				ts->raw[ts->raw_len++] = (int)i;
				return 1;
			}
		}
		return 0;
	}
	if (!is_field_kind(ls->kind))
		return -EINVAL;
	for (int i = 0; i < ls->len; i++) {
		const struct acc *la = &ls->acc[i];
		const struct btf_type *tt = skip(tb, tid, &tid);
		int64_t sz;

		if (la->name) {
			int r = match_member(ls, la, tb, tid, ts, &tid);

			if (r <= 0)
				return r;
			continue;
		}
		/* the first accessor indexes the root pointer: the root is its element */
		if (i > 0) {
			struct btf_array a;

			if (kind_of(tt) != BTF_KIND_ARRAY)
				return 0;
			a = array_of(tt);
			if (!is_flex(tb, &ts->acc[ts->len - 1], &a) && la->idx >= a.nelems)
				return 0;
			if (!skip(tb, a.type, &tid))
				return -EINVAL;
		}
		if (ts->raw_len == SPEC_MAX)
			return -E2BIG;
		ts->acc[ts->len++] = (struct acc){ tid, la->idx, NULL };
		ts->raw[ts->raw_len++] = (int)la->idx;
		sz = size_of(tb, tid);
		if (sz < 0)
			return (int)sz;
		ts->bit_off += (uint32_t)(la->idx * (uint64_t)sz * 8);
	}
	return 1;
}

/* ---- values ---- */

#define POISON (-EUCLEAN) /* internal: the instruction is to be poisoned */

/* Size of the element type at the end of arrays of arrays of id. */
static int64_t elem_size(const struct brt_btf *btf, uint32_t id, uint32_t *elem)
{
	const struct btf_type *t = skip(btf, id, elem);

	while (kind_of(t) == BTF_KIND_ARRAY)
		t = skip(btf, array_of(t).type, elem);
	return size_of(btf, *elem);
}

static int field_value(const char *prog, const struct brt_btf_core_relo *r,
		       const struct spec *sp, uint64_t *val, uint32_t *fsz, uint32_t *type_id,
		       int *validate, char *err, size_t errlen)
{
	const struct acc *a;
	const struct btf_type *t, *mt;
	uint32_t byte_off, byte_sz, bit_off, bit_sz, ftype, elem;
	int64_t sz;
	int bitfield;

	*fsz = 0;
	if (r->kind == BPF_CORE_FIELD_EXISTS) {
		*val = sp != NULL;
		return 0;
	}
	if (!sp)
		return POISON;
	a = &sp->acc[sp->len - 1];
	t = brt_btf_type(sp->btf, a->type_id);
	if (!a->name) { /* an array element, or the root itself */
		if (r->kind == BPF_CORE_FIELD_BYTE_OFFSET) {
			*val = sp->bit_off / 8;
			sz = elem_size(sp->btf, a->type_id, &elem);
			if (sz < 0)
				return -EINVAL;
			*fsz = (uint32_t)sz;
			*type_id = a->type_id;
		} else if (r->kind == BPF_CORE_FIELD_BYTE_SIZE) {
			sz = size_of(sp->btf, a->type_id);
			if (sz < 0)
				return -EINVAL;
			*val = (uint64_t)sz;
		} else {
			return fail(err, errlen, -EINVAL,
				    "prog '%s': relo %u at insn #%u can't be applied to array access",
				    prog, r->kind, r->insn_off / 8);
		}
		if (validate)
			*validate = 1;
		return 0;
	}
	mt = skip(sp->btf, member(t, a->idx).type, &ftype);
	bit_off = sp->bit_off;
	bit_sz = member_bitfield_size(t, a->idx);
	bitfield = bit_sz > 0;
	if (!mt)
		return -EINVAL;
	if (bitfield) {
		/* the smallest naturally aligned load that holds every bit */
		byte_sz = mt->size;
		if (!byte_sz)
			return -EINVAL;
		byte_off = bit_off / 8 / byte_sz * byte_sz;
		while (bit_off + bit_sz - byte_off * 8 > byte_sz * 8) {
			if (byte_sz >= 8)
				return fail(err, errlen, -E2BIG,
					    "prog '%s': relo %u at insn #%u can't be satisfied for "
					    "bitfield", prog, r->kind, r->insn_off / 8);
			byte_sz *= 2;
			byte_off = bit_off / 8 / byte_sz * byte_sz;
		}
	} else {
		sz = size_of(sp->btf, ftype);
		if (sz < 0)
			return -EINVAL;
		byte_sz = (uint32_t)sz;
		byte_off = bit_off / 8;
		bit_sz = byte_sz * 8;
	}
	/* the compiler and we may disagree on a bitfield's load: only check the value the
	 * instruction holds when that is unambiguous */
	if (validate)
		*validate = !bitfield;
	switch (r->kind) {
	case BPF_CORE_FIELD_BYTE_OFFSET:
		*val = byte_off;
		if (!bitfield) {
			sz = elem_size(sp->btf, ftype, &elem);
			if (sz < 0)
				return -EINVAL;
			*fsz = (uint32_t)sz;
			*type_id = ftype;
		}
		return 0;
	case BPF_CORE_FIELD_BYTE_SIZE:
		*val = byte_sz;
		return 0;
	case BPF_CORE_FIELD_SIGNED:
		*val = (is_any_enum(mt) && BTF_INFO_KFLAG(mt->info)) ||
		       (kind_of(mt) == BTF_KIND_INT &&
			(BTF_INT_ENCODING(int_word(mt)) & BTF_INT_SIGNED));
		if (validate)
			*validate = 1;
		return 0;
	case BPF_CORE_FIELD_LSHIFT_U64: /* little-endian: bpfrt runs on x86-64 and arm64 */
		*val = 64 - (bit_off + bit_sz - byte_off * 8);
		return 0;
	case BPF_CORE_FIELD_RSHIFT_U64:
		*val = 64 - bit_sz;
		if (validate)
			*validate = 1;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int type_value(const struct brt_btf_core_relo *r, const struct spec *sp, uint64_t *val,
		      int *validate)
{
	int64_t sz;

	if (validate)
		*validate = 1;
	if (!sp) {
		*val = 0;
		return 0;
	}
	switch (r->kind) {
	case BPF_CORE_TYPE_ID_TARGET:
		*val = sp->root;
		/* ids move when objects are linked: nothing to check */
		if (validate)
			*validate = 0;
		return 0;
	case BPF_CORE_TYPE_EXISTS:
	case BPF_CORE_TYPE_MATCHES:
		*val = 1;
		return 0;
	case BPF_CORE_TYPE_SIZE:
		sz = size_of(sp->btf, sp->root);
		if (sz < 0)
			return -EINVAL;
		*val = (uint64_t)sz;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int enumval_value(const struct brt_btf_core_relo *r, const struct spec *sp,
			 uint64_t *val)
{
	switch (r->kind) {
	case BPF_CORE_ENUMVAL_EXISTS:
		*val = sp != NULL;
		return 0;
	case BPF_CORE_ENUMVAL_VALUE:
		if (!sp)
			return POISON;
		*val = enum_value(brt_btf_type(sp->btf, sp->acc[0].type_id), sp->acc[0].idx);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* The result for one pair of specs (target NULL: nothing matched). */
static int calc(const char *prog, const struct brt_btf_core_relo *r, const struct spec *ls,
		const struct spec *ts, struct brt_core_res *res, char *err, size_t errlen)
{
	int ret = -EOPNOTSUPP;

	memset(res, 0, sizeof(*res));
	res->validate = 1;
	if (is_field_kind(r->kind)) {
		ret = field_value(prog, r, ls, &res->orig_val, &res->orig_sz, &res->orig_type_id,
				  &res->validate, err, errlen);
		if (!ret)
			ret = field_value(prog, r, ts, &res->new_val, &res->new_sz,
					  &res->new_type_id, NULL, err, errlen);
		if (!ret && res->orig_sz != res->new_sz) {
			/* a load may change width only where zero extension keeps the value:
			 * pointers and unsigned ints; anything else is poisoned if loaded */
			const struct btf_type *o = brt_btf_type(ls->btf, res->orig_type_id);
			const struct btf_type *n = brt_btf_type(ts->btf, res->new_type_id);

			if (kind_of(o) == BTF_KIND_PTR && kind_of(n) == BTF_KIND_PTR)
				;
			else if (kind_of(o) == BTF_KIND_INT && kind_of(n) == BTF_KIND_INT &&
				 BTF_INT_ENCODING(int_word(o)) != BTF_INT_SIGNED &&
				 BTF_INT_ENCODING(int_word(n)) != BTF_INT_SIGNED)
				;
			else
				res->fail_memsz_adjust = 1;
		}
	} else if (is_type_kind(r->kind)) {
		ret = type_value(r, ls, &res->orig_val, &res->validate);
		if (!ret)
			ret = type_value(r, ts, &res->new_val, NULL);
	} else if (is_enumval_kind(r->kind)) {
		ret = enumval_value(r, ls, &res->orig_val);
		if (!ret)
			ret = enumval_value(r, ts, &res->new_val);
	}
	if (ret == POISON) {
		res->poison = 1;
		ret = 0;
	} else if (ret == -EOPNOTSUPP) {
		fail(err, errlen, ret,
		     "prog '%s': relo #%u: unrecognized CO-RE relocation %s (%u) at insn #%u", prog,
		     r->sec_rec, brt_core_kind_name(r->kind), r->kind, r->insn_off / 8);
	}
	return ret;
}

/* ---- candidates ---- */

int brt_core_init(struct brt_core *c, const struct brt_btf *local, const struct brt_btf *targ)
{
	memset(c, 0, sizeof(*c));
	c->local = local;
	c->targ = targ;
	c->cands = calloc(local->ntypes, sizeof(*c->cands));
	return c->cands ? 0 : -ENOMEM;
}

void brt_core_fini(struct brt_core *c)
{
	if (c->cands)
		for (uint32_t i = 0; i < c->local->ntypes; i++)
			free(c->cands[i].ids);
	free(c->cands);
	memset(c, 0, sizeof(*c));
}

/* The index: type ids grouped by the hash of their name without flavour (a counting sort,
 * so each group keeps ascending ids and a search through it finds the candidates in the
 * order the full scan does: "candidate #i" in messages and ambiguity checks agree).  Only
 * the kinds a candidate can have for a local type of an indexed kind are indexed
 * (kinds_compat() pairs a kind with itself, and enum with enum64); a local type of
 * another kind (a FUNC, a VAR: vmlinux's ~56k functions are most of its names) is
 * searched by the full scan. */
struct brt_core_index {
	uint32_t mask;   /* buckets - 1 (a power of two) */
	uint32_t *start; /* [mask + 2]: bucket b is ids[start[b] .. start[b + 1]) */
	uint32_t *ids;
};

static int indexed_kind(unsigned int kind)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_FLOAT:
		return 1;
	default:
		return 0;
	}
}

/* A hash of name's first len bytes from its length and its first and last 8 bytes: a
 * byte-wise hash of vmlinux's 19k indexed names cost as much as the index's other work.
 * Names alike at both ends only share a bucket, which the name compare then sorts out. */
static uint32_t name_hash(const char *name, size_t len)
{
	uint64_t head = 0, tail = 0, h;

	memcpy(&head, name, len < 8 ? len : 8);
	if (len > 8)
		memcpy(&tail, name + len - 8, 8);
	h = head * 0x9e3779b97f4a7c15ull + tail * 0xc2b2ae3d27d4eb4full + len;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

int brt_core_index_build(const struct brt_btf *targ, struct brt_core_index **out)
{
	struct brt_core_index *ix = calloc(1, sizeof(*ix));
	uint32_t n = 0, nb = 64, *hash = calloc(targ->ntypes ? targ->ntypes : 1, sizeof(*hash));

	*out = NULL;
	if (!ix || !hash)
		goto err_free;
	/* pass 1: hash the indexed names (0 marks "not indexed"; a real hash of 0 is
	 * moved to 1, which only puts it in bucket 1's group) */
	for (uint32_t id = 1; id < targ->ntypes; id++) {
		const struct btf_type *t = targ->types[id];
		const char *name = targ->strs + t->name_off;

		/* kind and name_off first: they are in the record being read, where the
		 * name is a cache miss in the string section (vmlinux's 85k FUNC and
		 * FUNC_PROTO records are most of its types) */
		if (!t->name_off || !indexed_kind(kind_of(t)) || !*name)
			continue;
		hash[id] = name_hash(name, brt_core_essential_len(name));
		hash[id] += !hash[id];
		n++;
	}
	while (nb < n && nb < (1u << 24))
		nb *= 2;
	ix->mask = nb - 1;
	ix->start = calloc((size_t)nb + 2, sizeof(*ix->start));
	ix->ids = malloc((n ? n : 1) * sizeof(*ix->ids));
	if (!ix->start || !ix->ids)
		goto err_free;
	for (uint32_t id = 1; id < targ->ntypes; id++)
		if (hash[id])
			ix->start[(hash[id] & ix->mask) + 2]++;
	for (uint32_t b = 2; b < nb + 2; b++)
		ix->start[b] += ix->start[b - 1];
	/* start[b + 1] is now where bucket b begins: fill it and move it on, after which
	 * it is where bucket b ends */
	for (uint32_t id = 1; id < targ->ntypes; id++)
		if (hash[id])
			ix->ids[ix->start[(hash[id] & ix->mask) + 1]++] = id;
	free(hash);
	*out = ix;
	return 0;

err_free:
	free(hash);
	brt_core_index_free(ix);
	return -ENOMEM;
}

void brt_core_index_free(struct brt_core_index *ix)
{
	if (!ix)
		return;
	free(ix->start);
	free(ix->ids);
	free(ix);
}

static int add_cand(struct brt_core_cands *cl, size_t *cap, uint32_t id)
{
	if (cl->n == *cap) {
		uint32_t *n;

		*cap = *cap ? 2 * *cap : 4;
		n = realloc(cl->ids, *cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		cl->ids = n;
	}
	cl->ids[cl->n++] = id;
	return 0;
}

/* Target types of a compatible kind whose name without flavour is the local one's; vmlinux
 * only (libbpf would go on to kernel modules' BTF when vmlinux has none). */
static int find_cands(struct brt_core *c, uint32_t lid, struct brt_core_cands **out)
{
	struct brt_core_cands *cl = &c->cands[lid];
	const struct btf_type *lt = brt_btf_type(c->local, lid);
	const char *lname = brt_btf_name(c->local, lid);
	size_t llen = brt_core_essential_len(lname), cap = 0;
	const struct brt_core_index *ix = indexed_kind(kind_of(lt)) ? c->index : NULL;
	uint32_t from = 1, to = c->targ->ntypes;

	*out = cl;
	if (cl->done)
		return 0;
	if (ix) {
		uint32_t h = name_hash(lname, llen), b;

		h += !h;
		b = h & ix->mask;
		from = ix->start[b];
		to = ix->start[b + 1];
	}
	for (uint32_t i = from; i < to; i++) {
		uint32_t id = ix ? ix->ids[i] : i;
		const struct btf_type *t = c->targ->types[id];
		const char *name;

		name = c->targ->strs + t->name_off;
		/* the name's prefix first: it fails at the first byte for almost every one
		 * of vmlinux's ~100k types, where the flavour scan reads the whole name */
		if (!*name || strncmp(name, lname, llen) || !kinds_compat(t, lt) ||
		    brt_core_essential_len(name) != llen)
			continue;
		if (add_cand(cl, &cap, id))
			return -ENOMEM;
	}
	cl->done = 1;
	return 0;
}

int brt_core_calc(struct brt_core *c, const char *prog, const struct brt_btf_core_relo *r,
		  struct brt_core_res *res, char *err, size_t errlen)
{
	struct spec ls, cs;
	const struct btf_type *lt = brt_btf_type(c->local, r->type_id);
	/* the first matching candidate's bit offset, -1 before one matched (the state itself,
	 * not the count of matches, says whether it is set) */
	int64_t bit_off0 = -1;
	const char *lname = brt_btf_name(c->local, r->type_id);
	struct brt_core_cands *cl;
	struct brt_core_res cres;
	char buf[256];
	uint32_t j = 0;
	int ret;

	err[0] = 0;
	if (!lt)
		return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: bad type id %u", prog,
			    r->sec_rec, r->type_id);
	ret = parse_spec(c->local, r, &ls);
	if (ret)
		return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: parsing [%u] %s %s + %s "
			    "failed: %d", prog, r->sec_rec, r->type_id,
			    kind_str(lt), *lname ? lname : "<anon>", r->access,
			    ret);
	if (r->kind == BPF_CORE_TYPE_ID_LOCAL) {
		memset(res, 0, sizeof(*res));
		res->orig_val = res->new_val = ls.root;
		return 0;
	}
	if (!*lname)
		return fail(err, errlen, -EOPNOTSUPP, "prog '%s': relo #%u: <%s> (%u) relocation "
			    "doesn't support anonymous types", prog, r->sec_rec,
			    brt_core_kind_name(r->kind), r->kind);
	if (!c->targ) {
		format_spec(buf, sizeof(buf), &ls);
		return fail(err, errlen, -ESRCH, "prog '%s': relo #%u: insn #%u: %s needs the "
			    "target kernel's BTF and none is available", prog, r->sec_rec,
			    r->insn_off / 8, buf);
	}
	ret = find_cands(c, r->type_id, &cl);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < cl->n; i++) {
		ret = spec_match(&ls, c->targ, cl->ids[i], &cs);
		if (ret < 0) {
			format_spec(buf, sizeof(buf), &cs);
			return fail(err, errlen, ret, "prog '%s': relo #%u: error matching candidate "
				    "#%u %s: %d", prog, r->sec_rec, i, buf, ret);
		}
		if (!ret)
			continue;
		ret = calc(prog, r, &ls, &cs, &cres, err, errlen);
		if (ret)
			return ret;
		if (bit_off0 < 0) {
			*res = cres;
			bit_off0 = cs.bit_off;
		} else if (cs.bit_off != bit_off0) {
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: field offset "
				    "ambiguity: %u != %u", prog, r->sec_rec, cs.bit_off,
				    (uint32_t)bit_off0);
		} else if (cres.poison != res->poison || cres.new_val != res->new_val) {
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: relocation decision "
				    "ambiguity: %s %llu != %s %llu", prog, r->sec_rec,
				    cres.poison ? "failure" : "success",
				    (unsigned long long)cres.new_val,
				    res->poison ? "failure" : "success",
				    (unsigned long long)res->new_val);
		}
		cl->ids[j++] = cl->ids[i];
	}
	/* later relocations of this type look only at the candidates that matched, when any
	 * did (libbpf prunes the same way, which decides later ambiguities) */
	if (j) {
		cl->n = j;
		return 0;
	}
	return calc(prog, r, &ls, NULL, res, err, errlen);
}

void brt_core_describe(const struct brt_btf *local, const struct brt_btf_core_relo *r,
		       char *buf, size_t len)
{
	struct spec sp;

	if (parse_spec(local, r, &sp)) {
		snprintf(buf, len, "<%s> [%u] + %s", brt_core_kind_name(r->kind), r->type_id,
			 r->access);
		return;
	}
	format_spec(buf, len, &sp);
}

/* ---- patching ---- */

static void poison(struct bpf_insn *insn)
{
	/* a call to helper 0xbad2310 ("bad relo"): refused by the verifier only if reached */
	*insn = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = BRT_CORE_POISON };
}

static int size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_DW: return 8;
	case BPF_W: return 4;
	case BPF_H: return 2;
	default: return 1;
	}
}

static int bytes_size(uint32_t sz)
{
	switch (sz) {
	case 8: return BPF_DW;
	case 4: return BPF_W;
	case 2: return BPF_H;
	case 1: return BPF_B;
	default: return -1;
	}
}

int brt_core_patch(struct bpf_insn *insns, size_t cnt, size_t idx, const char *prog,
		   const struct brt_btf_core_relo *r, const struct brt_core_res *res,
		   int *poisoned, char *err, size_t errlen)
{
	struct bpf_insn *insn = &insns[idx];
	int wide = insn->code == (BPF_LD | BPF_IMM | BPF_DW);
	uint64_t orig = res->orig_val, nv = res->new_val;

	*poisoned = 0;
	err[0] = 0;
	if (wide && idx + 1 >= cnt)
		return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: insn #%zu (LDIMM64) has "
			    "unexpected form", prog, r->sec_rec, idx);
	if (res->poison)
		goto poison;
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		if (BPF_SRC(insn->code) != BPF_K)
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: insn #%zu "
				    "(ALU/ALU64) has a register operand", prog, r->sec_rec, idx);
		if (res->validate && (uint64_t)(int64_t)insn->imm != orig)
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: unexpected insn "
				    "#%zu (ALU/ALU64) value: got %u, exp %llu -> %llu", prog,
				    r->sec_rec, idx, (uint32_t)insn->imm, (unsigned long long)orig,
				    (unsigned long long)nv);
		insn->imm = (int32_t)(uint32_t)nv;
		return 0;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		if (res->validate && (uint64_t)(int64_t)insn->off != orig)
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: unexpected insn "
				    "#%zu (LDX/ST/STX) value: got %u, exp %llu -> %llu", prog,
				    r->sec_rec, idx, (uint32_t)insn->off, (unsigned long long)orig,
				    (unsigned long long)nv);
		if (nv > INT16_MAX)
			return fail(err, errlen, -ERANGE, "prog '%s': relo #%u: insn #%zu "
				    "(LDX/ST/STX) value too big: %llu", prog, r->sec_rec, idx,
				    (unsigned long long)nv);
		if (res->fail_memsz_adjust) {
			/* libbpf warns and poisons: the load would read a wrong value */
			snprintf(err, errlen, "prog '%s': relo #%u: insn #%zu (LDX/ST/STX) accesses "
				 "field incorrectly. Make sure you are accessing pointers, unsigned "
				 "integers, or fields of matching type and size.", prog, r->sec_rec,
				 idx);
			goto poison;
		}
		insn->off = (int16_t)nv;
		if (res->new_sz != res->orig_sz) {
			int code;

			if ((uint32_t)size_bytes(insn->code) != res->orig_sz)
				return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: insn #%zu "
					    "(LDX/ST/STX) unexpected mem size: got %d, exp %u", prog,
					    r->sec_rec, idx, size_bytes(insn->code), res->orig_sz);
			code = bytes_size(res->new_sz);
			if (code < 0)
				return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: insn #%zu "
					    "(LDX/ST/STX) invalid new mem size: %u", prog,
					    r->sec_rec, idx, res->new_sz);
			insn->code = (uint8_t)(BPF_MODE(insn->code) | code | BPF_CLASS(insn->code));
		}
		return 0;
	case BPF_LD: {
		uint64_t imm;

		if (!wide || insn[0].src_reg || insn[0].off || insn[1].code || insn[1].dst_reg ||
		    insn[1].src_reg || insn[1].off)
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: insn #%zu (LDIMM64) "
				    "has unexpected form", prog, r->sec_rec, idx);
		imm = (uint32_t)insn[0].imm | ((uint64_t)(uint32_t)insn[1].imm << 32);
		if (res->validate && imm != orig)
			return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: unexpected insn "
				    "#%zu (LDIMM64) value: got %llu, exp %llu -> %llu", prog,
				    r->sec_rec, idx, (unsigned long long)imm,
				    (unsigned long long)orig, (unsigned long long)nv);
		insn[0].imm = (int32_t)(uint32_t)nv;
		insn[1].imm = (int32_t)(uint32_t)(nv >> 32);
		return 0;
	}
	default:
		return fail(err, errlen, -EINVAL, "prog '%s': relo #%u: trying to relocate "
			    "unrecognized insn #%zu, code:0x%x, src:0x%x, dst:0x%x, off:0x%x, "
			    "imm:0x%x", prog, r->sec_rec, idx, insn->code, insn->src_reg,
			    insn->dst_reg, (uint16_t)insn->off, (uint32_t)insn->imm);
	}

poison:
	/* the second slot too, so the verifier names the call rather than opcode 0 */
	if (wide)
		poison(&insn[1]);
	poison(insn);
	*poisoned = 1;
	return 0;
}
