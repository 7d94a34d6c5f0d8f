/* btf_format.c - a value printed through its BTF type the way bpftool's btf_dumper prints
 * map keys and values: integers in decimal (bitfields and odd widths in hex), bool, chars,
 * char arrays holding a NUL-terminated printable string as strings, pointers, structs and
 * unions as objects (bitfields included), arrays, enums by name when a value matches,
 * typedefs and qualifiers looked through, VAR and DATASEC as {name: ...} for global-data
 * maps.  Floats, which bpftool 7.1 refuses, print as numbers.  "plain" is bpftool's text
 * flavour (pointers as %p, unprintable chars as 0x..), otherwise JSON's.
 *
 * The BTF may come from a map file another process scribbled over: every read is checked
 * against the value's size, nesting and work are bounded, and a failure stops the output
 * where bpftool's would stop, with every open collection closed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "btf_format.h"
#include "util/util.h"

#define MAX_DEPTH 64 /* nested types; the kernel resolves at most 32 */

struct fmt {
	const struct brt_btf *btf;
	const uint8_t *data;
	size_t size;
	int plain;
	struct json *w;
	unsigned int depth;
	uint64_t budget; /* values still allowed: zero-sized elements cost nothing else */
};

static int value(struct fmt *f, uint32_t id, unsigned int bit_off, size_t off);

/* n bytes at off are inside the value */
static int in_range(const struct fmt *f, size_t off, uint64_t n)
{
	return off <= f->size && n <= f->size - off;
}

/* A marker bpftool prints bare; quoted in JSON so the document stays valid. */
static void marker(struct fmt *f, const char *s)
{
	if (f->plain)
		json_printf(f->w, "%s", s);
	else
		json_string_n(f->w, s, strlen(s));
}

/* Bits [bit_off, bit_off + nbits) of little-endian bytes p, nbits <= 128. */
static void extract(const uint8_t *p, unsigned int bit_off, unsigned int nbits, uint64_t v[2])
{
	v[0] = v[1] = 0;
	for (unsigned int i = 0; i < nbits; i++) {
		unsigned int b = bit_off + i;

		if ((p[b / 8] >> (b % 8)) & 1)
			v[i / 64] |= 1ull << (i % 64);
	}
}

static void print_hex128(struct fmt *f, const uint64_t v[2])
{
	const char *q = f->plain ? "" : "\"";

	if (v[1])
		json_printf(f->w, "%s0x%" PRIx64 "%016" PRIx64 "%s", q, v[1], v[0], q);
	else
		json_printf(f->w, "%s0x%" PRIx64 "%s", q, v[0], q);
}

static int bitfield(struct fmt *f, size_t off, unsigned int bit_off, unsigned int nbits)
{
	uint64_t v[2];

	if (bit_off + nbits > 128 || !in_range(f, off, (bit_off + nbits + 7) / 8))
		return -ERANGE;
	extract(f->data + off, bit_off, nbits, v);
	print_hex128(f, v);
	return 0;
}

static int print_int(struct fmt *f, const struct btf_type *t, unsigned int bit_off, size_t off)
{
	uint32_t word, bits, enc;
	uint64_t u;

	memcpy(&word, t + 1, sizeof(word));
	bits = BTF_INT_BITS(word);
	enc = BTF_INT_ENCODING(word);
	if (bit_off || BTF_INT_OFFSET(word) || bits % 8 ||
	    (bits != 8 && bits != 16 && bits != 32 && bits != 64 && bits != 128 &&
	     (enc == 0 || enc == BTF_INT_SIGNED))) {
		unsigned int total = bit_off + BTF_INT_OFFSET(word);

		return bitfield(f, off + total / 8, total % 8, bits);
	}
	if (bits == 128)
		return bitfield(f, off, 0, 128);
	if (!in_range(f, off, enc == 0 || enc == BTF_INT_SIGNED ? bits / 8 : 1))
		return -ERANGE;
	switch (enc) {
	case 0:
		json_printf(f->w, "%" PRIu64, brt_load(f->data + off, bits / 8));
		return 0;
	case BTF_INT_SIGNED:
		u = brt_load(f->data + off, bits / 8);
		if (bits < 64)
			u = (u ^ (1ull << (bits - 1))) - (1ull << (bits - 1)); /* sign-extend */
		json_printf(f->w, "%" PRId64, (int64_t)u);
		return 0;
	case BTF_INT_CHAR: {
		char c = (char)f->data[off];

		if (isprint((unsigned char)c))
			json_string_n(f->w, &c, 1);
		else if (f->plain)
			json_printf(f->w, "0x%x", (unsigned char)c);
		else
			json_printf(f->w, "\"\\u00%02x\"", (unsigned char)c);
		return 0;
	}
	case BTF_INT_BOOL:
		json_printf(f->w, "%s", f->data[off] ? "true" : "false");
		return 0;
	default:
		return -ERANGE;
	}
}

static int print_float(struct fmt *f, const struct btf_type *t, size_t off)
{
	double d;

	if ((t->size != 4 && t->size != 8) || !in_range(f, off, t->size)) {
		marker(f, "(unsupported-kind)");
		return -EINVAL;
	}
	if (t->size == 4) {
		float x;

		memcpy(&x, f->data + off, 4);
		d = x;
	} else {
		memcpy(&d, f->data + off, 8);
	}
	if (isfinite(d))
		json_printf(f->w, t->size == 4 ? "%.9g" : "%.17g", d);
	else
		marker(f, isnan(d) ? "nan" : d < 0 ? "-inf" : "inf");
	return 0;
}

static int print_ptr(struct fmt *f, size_t off)
{
	uint64_t p;

	if (!in_range(f, off, 8))
		return -ERANGE;
	p = brt_load(f->data + off, 8);
	if (!f->plain)
		json_printf(f->w, "%" PRIu64, p);
	else if (p)
		json_printf(f->w, "0x%" PRIx64, p); /* glibc's %p */
	else
		json_printf(f->w, "(nil)");
	return 0;
}

static int print_enum(struct fmt *f, const struct btf_type *t, size_t off)
{
	uint32_t n = BTF_INFO_VLEN(t->info);
	uint64_t raw;
	int64_t v;

	if ((t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8) ||
	    !in_range(f, off, t->size))
		return -ERANGE;
	raw = brt_load(f->data + off, t->size);
	/* bpftool compares the value read as signed with each (signed 32-bit) enumerator */
	v = t->size == 8 ? (int64_t)raw : t->size == 4 ? (int32_t)raw :
	    t->size == 2 ? (int16_t)raw : (int8_t)raw;
	for (uint32_t i = 0; i < n; i++) {
		struct btf_enum e;

		memcpy(&e, (const char *)(t + 1) + i * sizeof(e), sizeof(e));
		if (v == e.val) {
			const char *name = brt_btf_str(f->btf, e.name_off);

			json_string_n(f->w, name, strlen(name));
			return 0;
		}
	}
	json_printf(f->w, "%" PRId64, v);
	return 0;
}

static int print_enum64(struct fmt *f, const struct btf_type *t, size_t off)
{
	uint32_t n = BTF_INFO_VLEN(t->info);
	uint64_t v;

	if (!in_range(f, off, 8))
		return -ERANGE;
	v = brt_load(f->data + off, 8);
	for (uint32_t i = 0; i < n; i++) {
		struct btf_enum64 e;

		memcpy(&e, (const char *)(t + 1) + i * sizeof(e), sizeof(e));
		if (v == ((uint64_t)e.val_hi32 << 32 | e.val_lo32)) {
			const char *name = brt_btf_str(f->btf, e.name_off);

			json_string_n(f->w, name, strlen(name));
			return 0;
		}
	}
	json_printf(f->w, "%" PRId64, (int64_t)v);
	return 0;
}

/* bpftool's rule: an array of 1-byte chars (qualifiers looked through, typedefs not: a
 * typedef of char does not count) whose bytes are printable up to a NUL within it. */
static int is_string(const struct fmt *f, const struct btf_array *a, size_t off, size_t *len)
{
	const struct btf_type *e = brt_btf_type(f->btf, a->type);
	uint32_t word;

	for (int i = 0; e && i < MAX_DEPTH; i++) {
		unsigned int k = BTF_INFO_KIND(e->info);

		if (k != BTF_KIND_CONST && k != BTF_KIND_VOLATILE && k != BTF_KIND_RESTRICT &&
		    k != BTF_KIND_TYPE_TAG)
			break;
		e = brt_btf_type(f->btf, e->type);
	}
	if (!a->nelems || !e || BTF_INFO_KIND(e->info) != BTF_KIND_INT || e->size != 1 ||
	    !in_range(f, off, a->nelems))
		return 0;
	memcpy(&word, e + 1, sizeof(word));
	if (BTF_INT_ENCODING(word) != BTF_INT_CHAR && strcmp(brt_btf_str(f->btf, e->name_off),
							     "char"))
		return 0;
	for (uint32_t i = 0; i < a->nelems; i++) {
		uint8_t c = f->data[off + i];

		if (!c) {
			*len = i;
			return 1;
		}
		if (c <= 0x1f || c >= 0x7f)
			return 0;
	}
	return 0;
}

static int print_array(struct fmt *f, const struct btf_type *t, size_t off)
{
	struct btf_array a;
	uint64_t elem;
	size_t len;
	int err = 0;

	memcpy(&a, t + 1, sizeof(a));
	if (is_string(f, &a, off, &len)) {
		json_string_n(f->w, (const char *)f->data + off, len);
		return 0;
	}
	if (brt_btf_resolve_size(f->btf, a.type, &elem))
		return -ERANGE;
	json_begin_array(f->w);
	for (uint32_t i = 0; i < a.nelems && !err; i++) {
		if (elem && !in_range(f, off, elem * (i + 1))) {
			marker(f, "(invalid)");
			err = -EINVAL;
		} else
			err = value(f, a.type, 0, off + (size_t)(elem * i));
	}
	json_end_array(f->w);
	return err;
}

static int print_struct(struct fmt *f, const struct btf_type *t, size_t off)
{
	uint32_t n = BTF_INFO_VLEN(t->info);
	int kflag = BTF_INFO_KFLAG(t->info), err = 0;

	json_begin_object(f->w);
	for (uint32_t i = 0; i < n && !err; i++) {
		struct btf_member m;
		uint32_t bit_off, bf_size = 0;
		size_t at;

		memcpy(&m, (const char *)(t + 1) + i * sizeof(m), sizeof(m));
		bit_off = kflag ? BTF_MEMBER_BIT_OFFSET(m.offset) : m.offset;
		if (kflag)
			bf_size = BTF_MEMBER_BITFIELD_SIZE(m.offset);
		json_key(f->w, brt_btf_str(f->btf, m.name_off));
		at = off + bit_off / 8;
		if (at < off) { /* wrapped */
			marker(f, "(invalid)");
			err = -EINVAL;
		} else if (bf_size) {
			err = bitfield(f, at, bit_off % 8, bf_size);
			if (err) {
				marker(f, "(invalid)");
				err = -EINVAL;
			}
		} else
			err = value(f, m.type, bit_off % 8, at);
	}
	json_end_object(f->w);
	return err;
}

static int print_datasec(struct fmt *f, const struct btf_type *t, size_t off)
{
	uint32_t n = BTF_INFO_VLEN(t->info);
	int err = 0;

	json_begin_object(f->w);
	json_key(f->w, brt_btf_str(f->btf, t->name_off));
	json_begin_array(f->w);
	for (uint32_t i = 0; i < n && !err; i++) {
		struct btf_var_secinfo v;

		memcpy(&v, (const char *)(t + 1) + i * sizeof(v), sizeof(v));
		if (in_range(f, off, v.offset)) {
			err = value(f, v.type, 0, off + v.offset);
		} else {
			marker(f, "(invalid)");
			err = -EINVAL;
		}
	}
	json_end_array(f->w);
	json_end_object(f->w);
	return err;
}

/* libbpf's btf__resolve_type(): through qualifiers, typedefs and variables; void is an
 * error (0). */
static uint32_t resolve(const struct brt_btf *btf, uint32_t id)
{
	for (int depth = 0; depth < MAX_DEPTH; depth++) {
		const struct btf_type *t;

		id = brt_btf_skip_mods(btf, id);
		t = brt_btf_type(btf, id);
		if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_VAR)
			return t ? id : 0;
		id = t->type;
	}
	return 0;
}

static int value(struct fmt *f, uint32_t id, unsigned int bit_off, size_t off)
{
	const struct btf_type *t;
	int err;

	if (!id) {
		marker(f, "(unknown)");
		return 0;
	}
	t = brt_btf_type(f->btf, id);
	if (!t || f->depth >= MAX_DEPTH || !f->budget) {
		marker(f, t ? "(too-deep)" : "(invalid)");
		return t ? -E2BIG : -EINVAL;
	}
	f->budget--;
	f->depth++;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
		err = print_int(f, t, bit_off, off);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		err = print_struct(f, t, off);
		break;
	case BTF_KIND_ARRAY:
		err = print_array(f, t, off);
		break;
	case BTF_KIND_ENUM:
		err = print_enum(f, t, off);
		break;
	case BTF_KIND_ENUM64:
		err = print_enum64(f, t, off);
		break;
	case BTF_KIND_PTR:
		err = print_ptr(f, off);
		break;
	case BTF_KIND_FLOAT:
		err = print_float(f, t, off);
		break;
	case BTF_KIND_FWD:
		/* a key or value cannot be a forward declaration */
		marker(f, "(fwd-kind-invalid)");
		err = -EINVAL;
		break;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG: {
		uint32_t to = resolve(f->btf, id);

		err = to ? value(f, to, bit_off, off) : -ERANGE;
		break;
	}
	case BTF_KIND_VAR:
		json_begin_object(f->w);
		json_key(f->w, brt_btf_name(f->btf, id));
		err = value(f, t->type, bit_off, off);
		json_end_object(f->w);
		break;
	case BTF_KIND_DATASEC:
		err = print_datasec(f, t, off);
		break;
	default:
		marker(f, "(unsupported-kind)");
		err = -EINVAL;
		break;
	}
	f->depth--;
	/* -ERANGE: nothing printed.  bpftool prints nothing there either, but only types the
	 * kernel checked reach it; for a blob nobody checked, mark the spot so the output
	 * stays well-formed */
	if (err == -ERANGE) {
		marker(f, "(invalid)");
		err = -EINVAL;
	}
	return err;
}

int btf_format(const struct brt_btf *btf, uint32_t id, const void *data, size_t size, int plain,
	       struct json *w)
{
	struct fmt f = { .btf = btf, .data = data, .size = size, .plain = plain, .w = w,
			 /* every byte may be eight 1-bit fields, plus the containers */
			 .budget = 16 * (uint64_t)size + 4096 };

	return value(&f, id, 0, 0);
}
