/* test_btf_format.c - btf_format() (tools/bpfrt/btf_format.c) on a hand-built BTF: every
 * kind bpftool prints, each value in its text flavour (laid out by the pretty writer, as
 * `bpfrt map dump` prints it) and its JSON flavour (compact, as in "formatted"), with the
 * exact bytes bpftool 7.1 prints for them; then types a corrupt blob could hold (a struct
 * containing itself, a million empty elements, members past the value, kinds that cannot
 * be printed), which must fail with balanced, well-formed output.
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/btf.h>

#include "harness.h"
#include "btf_format.h"

/* ---- a small BTF builder ---- */

static uint32_t words[512], nwords, ntypes;
static char strs[1024] = "";
static uint32_t nstrs = 1;

static uint32_t str(const char *s)
{
	uint32_t off = nstrs;

	memcpy(strs + nstrs, s, strlen(s) + 1);
	nstrs += (uint32_t)strlen(s) + 1;
	return off;
}

static uint32_t type(const char *name, uint32_t kind, uint32_t vlen, int kflag, uint32_t sz)
{
	words[nwords++] = name ? str(name) : 0;
	words[nwords++] = kind << 24 | vlen | (uint32_t)kflag << 31;
	words[nwords++] = sz;
	return ++ntypes;
}

static void w(uint32_t v)
{
	words[nwords++] = v;
}

static uint32_t int_type(const char *name, uint32_t size, uint32_t enc, uint32_t off,
			 uint32_t bits)
{
	uint32_t id = type(name, BTF_KIND_INT, 0, 0, size);

	w(enc << 24 | off << 16 | bits);
	return id;
}

static uint32_t array(uint32_t elem, uint32_t idx, uint32_t n)
{
	uint32_t id = type(NULL, BTF_KIND_ARRAY, 0, 0, 0);

	w(elem);
	w(idx);
	w(n);
	return id;
}

static void member(const char *name, uint32_t t, uint32_t off)
{
	w(str(name));
	w(t);
	w(off);
}

static struct brt_btf *build(void)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_len = nwords * 4,
				.str_off = nwords * 4, .str_len = nstrs };
	size_t len = sizeof(h) + nwords * 4 + nstrs;
	uint8_t *b = malloc(len);
	struct brt_btf *btf = NULL;
	char err[256];

	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), words, nwords * 4);
	memcpy(b + sizeof(h) + nwords * 4, strs, nstrs);
	if (brt_btf_parse(b, len, &btf, err, sizeof(err)))
		T_FAIL("build: %s", err);
	free(b);
	return btf;
}

/* ---- the types ---- */

static uint32_t t_int, t_uint, t_char, t_bool, t_u128, t_float, t_double, t_enum, t_enum64,
	t_str4, t_int2, t_ptr, t_ctd, t_s, t_u, t_sec, t_nib, t_self, t_empties, t_badmem,
	t_fwdmem, t_far, t_uchar, t_short, t_s64;

static void types(void)
{
	uint32_t td, v, wv, proto, fwd, empty;

	t_int = int_type("int", 4, BTF_INT_SIGNED, 0, 32);
	t_uint = int_type("unsigned int", 4, 0, 0, 32);
	t_char = int_type("char", 1, BTF_INT_SIGNED, 0, 8);
	t_bool = int_type("_Bool", 1, BTF_INT_BOOL, 0, 8);
	t_u128 = int_type("unsigned __int128", 16, 0, 0, 128);
	t_float = type("float", BTF_KIND_FLOAT, 0, 0, 4);
	t_double = type("double", BTF_KIND_FLOAT, 0, 0, 8);
	t_enum = type("e", BTF_KIND_ENUM, 2, 1, 4);
	w(str("X"));
	w(1);
	w(str("Y"));
	w((uint32_t)-1);
	t_enum64 = type("e64", BTF_KIND_ENUM64, 1, 0, 8);
	w(str("BIG"));
	w(0);
	w(1);
	t_str4 = array(t_char, t_uint, 4);
	t_int2 = array(t_int, t_uint, 2);
	t_ptr = type(NULL, BTF_KIND_PTR, 0, 0, t_int);
	td = type("td", BTF_KIND_TYPEDEF, 0, 0, t_uint);
	t_ctd = type(NULL, BTF_KIND_CONST, 0, 0, td);
	/* struct s { int a; unsigned b:3; int c:5; char x[4]; const td y; int *p; } */
	t_s = type("s", BTF_KIND_STRUCT, 6, 1, 24);
	member("a", t_int, 0);
	member("b", t_uint, 3u << 24 | 32);
	member("c", t_int, 5u << 24 | 35);
	member("x", t_str4, 64);
	member("y", t_ctd, 96);
	member("p", t_ptr, 128);
	t_u = type("u", BTF_KIND_UNION, 2, 0, 4);
	member("ip", t_uint, 0);
	member("bytes", t_str4, 0);
	v = type("v", BTF_KIND_VAR, 0, 0, t_uint);
	w(1);
	wv = type("w", BTF_KIND_VAR, 0, 0, t_enum);
	w(1);
	t_sec = type(".data", BTF_KIND_DATASEC, 2, 0, 8);
	w(v);
	w(0);
	w(4);
	w(wv);
	w(4);
	w(4);
	t_nib = int_type("nib", 1, 0, 2, 4);
	t_self = type("self", BTF_KIND_STRUCT, 1, 0, 4);
	member("me", t_self, 0);
	empty = type("empty", BTF_KIND_STRUCT, 0, 0, 0);
	t_empties = array(empty, t_uint, 1000000);
	proto = type(NULL, BTF_KIND_FUNC_PROTO, 0, 0, t_int);
	t_badmem = type("badmem", BTF_KIND_STRUCT, 1, 0, 4);
	member("f", proto, 0);
	fwd = type("opaque", BTF_KIND_FWD, 0, 0, 0);
	t_fwdmem = type("fwdmem", BTF_KIND_STRUCT, 1, 0, 4);
	member("o", fwd, 0);
	t_far = type("far", BTF_KIND_STRUCT, 1, 0, 4);
	member("a", t_int, 64);
	t_uchar = int_type("uchar", 1, BTF_INT_CHAR, 0, 8);
	t_short = int_type("short", 2, BTF_INT_SIGNED, 0, 16);
	t_s64 = int_type("long", 8, BTF_INT_SIGNED, 0, 64);
}

/* ---- the cases ---- */

struct fcase {
	const char *name;
	uint32_t *id;
	const char *bytes; /* hex */
	const char *plain; /* text flavour, pretty layout */
	const char *json;  /* JSON flavour, compact */
	int err;
};

static const struct fcase cases[] = {
	{ "signed int", &t_int, "fbffffff", "-5", "-5", 0 },
	{ "unsigned int", &t_uint, "ffffffff", "4294967295", "4294967295", 0 },
	{ "short", &t_short, "0080", "-32768", "-32768", 0 },
	{ "long", &t_s64, "0000000000000080", "-9223372036854775808", "-9223372036854775808", 0 },
	{ "char is a number", &t_char, "41", "65", "65", 0 },
	{ "bool true", &t_bool, "01", "true", "true", 0 },
	{ "bool false", &t_bool, "00", "false", "false", 0 },
	{ "128-bit", &t_u128, "0100000000000000" "0200000000000000", "0x20000000000000001",
	  "\"0x20000000000000001\"", 0 },
	{ "128-bit small", &t_u128, "ff00000000000000" "0000000000000000", "0xff", "\"0xff\"", 0 },
	{ "float", &t_float, "0000c03f", "1.5", "1.5", 0 },
	{ "double", &t_double, "9a9999999999b93f", "0.10000000000000001", "0.10000000000000001",
	  0 },
	{ "enum by name", &t_enum, "01000000", "\"X\"", "\"X\"", 0 },
	{ "enum negative", &t_enum, "ffffffff", "\"Y\"", "\"Y\"", 0 },
	{ "enum unknown", &t_enum, "07000000", "7", "7", 0 },
	{ "enum64 by name", &t_enum64, "0000000001000000", "\"BIG\"", "\"BIG\"", 0 },
	{ "enum64 unknown", &t_enum64, "0500000000000000", "5", "5", 0 },
	{ "char array string", &t_str4, "61620000", "\"ab\"", "\"ab\"", 0 },
	{ "char array without NUL", &t_str4, "61626364", "[97,98,99,100\n]", "[97,98,99,100]",
	  0 },
	{ "char array unprintable", &t_str4, "61016200", "[97,1,98,0\n]", "[97,1,98,0]", 0 },
	{ "int array", &t_int2, "01000000ffffffff", "[1,-1\n]", "[1,-1]", 0 },
	{ "null pointer", &t_ptr, "0000000000000000", "(nil)", "0", 0 },
	{ "pointer", &t_ptr, "3412000000000000", "0x1234", "4660", 0 },
	{ "const typedef", &t_ctd, "07000000", "7", "7", 0 },
	{ "struct with bitfields", &t_s,
	  "feffffff" "fd000000" "68690000" "09000000" "0000000000000000",
	  "{\n    \"a\": -2,\n    \"b\": 0x5,\n    \"c\": 0x1f,\n    \"x\": \"hi\",\n"
	  "    \"y\": 9,\n    \"p\": (nil)\n}",
	  "{\"a\":-2,\"b\":\"0x5\",\"c\":\"0x1f\",\"x\":\"hi\",\"y\":9,\"p\":0}", 0 },
	{ "union", &t_u, "61626364", "{\n    \"ip\": 1684234849,\n    \"bytes\": [97,98,99,100\n"
	  "    ]\n}", "{\"ip\":1684234849,\"bytes\":[97,98,99,100]}", 0 },
	{ "datasec", &t_sec, "0300000001000000",
	  "{\n    \".data\": [{\n            \"v\": 3\n        },{\n            \"w\": \"X\"\n"
	  "        }\n    ]\n}", "{\".data\":[{\"v\":3},{\"w\":\"X\"}]}", 0 },
	{ "int with a bit offset", &t_nib, "ff", "0xf", "\"0xf\"", 0 },
	{ "printable CHAR", &t_uchar, "41", "\"A\"", "\"A\"", 0 },
	{ "unprintable CHAR", &t_uchar, "01", "0x1", "\"\\u0001\"", 0 },
	{ "member of a function type", &t_badmem, "00000000",
	  "{\n    \"f\": (unsupported-kind)\n}", "{\"f\":\"(unsupported-kind)\"}", -EINVAL },
	{ "member of a forward type", &t_fwdmem, "00000000",
	  "{\n    \"o\": (fwd-kind-invalid)\n}", "{\"o\":\"(fwd-kind-invalid)\"}", -EINVAL },
	{ "member past the value", &t_far, "00000000", "{\n    \"a\": (invalid)\n}",
	  "{\"a\":\"(invalid)\"}", -EINVAL },
	{ "value shorter than the type", &t_s64, "0000", "(invalid)", "\"(invalid)\"", -EINVAL },
	{ "struct containing itself", &t_self, "00000000", NULL, NULL, -E2BIG },
	{ "a million empty elements", &t_empties, "", NULL, NULL, -E2BIG },
};

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	for (; s[0] && s[1]; s += 2)
		out[n++] = (uint8_t)strtoul((char[3]){ s[0], s[1], 0 }, NULL, 16);
	return n;
}

/* Brackets and braces outside strings balance, and nothing follows the last close. */
static int balanced(const char *s)
{
	int depth = 0, in_str = 0;

	for (; *s; s++) {
		if (in_str) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				in_str = 0;
		} else if (*s == '"') {
			in_str = 1;
		} else if (*s == '{' || *s == '[') {
			depth++;
		} else if (*s == '}' || *s == ']') {
			if (--depth < 0)
				return 0;
		}
	}
	return depth == 0 && !in_str;
}

static void run(const struct brt_btf *btf, const struct fcase *c, int plain)
{
	uint8_t val[64];
	size_t n = unhex(c->bytes, val), len = 0;
	const char *want = plain ? c->plain : c->json;
	char *out = NULL;
	struct json jw;
	FILE *f = open_memstream(&out, &len);
	int err;

	json_init(&jw, f, plain ? JSON_BPFTOOL : JSON_COMPACT);
	err = btf_format(btf, *c->id, val, n, plain, &jw);
	fclose(f);
	T_EQ_INT(c->err, err);
	if (want)
		T_EQ_STR(want, out);
	T_ASSERT(balanced(out));
	free(out);
}

int main(void)
{
	struct brt_btf *btf;

	types();
	btf = build();
	if (!btf)
		return t_done();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_CASE(cases[i].name);
		run(btf, &cases[i], 1);
		run(btf, &cases[i], 0);
	}
	brt_btf_free(btf);
	return t_done();
}
