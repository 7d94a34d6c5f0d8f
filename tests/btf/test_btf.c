/* test_btf.c - the .BTF reader on hand-built type sections: sizes and modifier chains
 * resolve, and bad headers, offsets, ids, kinds and loops are refused with the offset of
 * the record at fault; plus the .BTF.ext line-info reader. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>

#include "btf/btf.h"
#include "harness.h"

/* A BTF image under construction: header, types, strings. */
struct blob {
	uint32_t types[256];
	size_t ntypes; /* u32 words */
	char strs[256];
	size_t nstrs;
	unsigned char out[4096];
	size_t len;
};

static uint32_t str(struct blob *b, const char *s)
{
	uint32_t off = (uint32_t)b->nstrs;

	if (!b->nstrs) {
		b->strs[0] = 0;
		b->nstrs = 1;
		off = 1;
	}
	if (!*s)
		return 0;
	memcpy(b->strs + b->nstrs, s, strlen(s) + 1);
	b->nstrs += strlen(s) + 1;
	return off;
}

static void words(struct blob *b, int n, ...)
{
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		b->types[b->ntypes++] = va_arg(ap, uint32_t);
	va_end(ap);
}

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (uint32_t)(vlen))

/* Each helper adds one type; ids count from 1 in call order. */
static void t_int(struct blob *b, const char *name, uint32_t size)
{
	words(b, 4, str(b, name), INFO(BTF_KIND_INT, 0), size, size * 8);
}

static void t_ref(struct blob *b, unsigned kind, const char *name, uint32_t type)
{
	words(b, 3, str(b, name), INFO(kind, 0), type);
}

static void t_array(struct blob *b, uint32_t elem, uint32_t index, uint32_t n)
{
	words(b, 6, 0, INFO(BTF_KIND_ARRAY, 0), 0, elem, index, n);
}

static void t_struct(struct blob *b, const char *name, uint32_t size, int nmembers, ...)
{
	va_list ap;

	words(b, 3, str(b, name), INFO(BTF_KIND_STRUCT, nmembers), size);
	va_start(ap, nmembers);
	for (int i = 0; i < nmembers; i++) {
		const char *mname = va_arg(ap, const char *);
		uint32_t type = va_arg(ap, uint32_t), bits = va_arg(ap, uint32_t);

		words(b, 3, str(b, mname), type, bits);
	}
	va_end(ap);
}

static void finish(struct blob *b)
{
	struct btf_header h = {
		.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h),
		.type_off = 0, .type_len = (uint32_t)(b->ntypes * 4),
		.str_off = (uint32_t)(b->ntypes * 4), .str_len = (uint32_t)b->nstrs,
	};

	if (!b->nstrs)
		str(b, "");
	h.str_len = (uint32_t)b->nstrs;
	memcpy(b->out, &h, sizeof(h));
	memcpy(b->out + sizeof(h), b->types, b->ntypes * 4);
	memcpy(b->out + sizeof(h) + b->ntypes * 4, b->strs, b->nstrs);
	b->len = sizeof(h) + b->ntypes * 4 + b->nstrs;
}

static void test_valid(void)
{
	struct blob b = { 0 };
	struct brt_btf *btf;
	char err[256];
	uint64_t size;
	int ret;

	T_CASE("valid types");
	t_int(&b, "int", 4);                          /* [1] */
	t_ref(&b, BTF_KIND_PTR, "", 1);               /* [2] int * */
	t_ref(&b, BTF_KIND_TYPEDEF, "myint", 1);      /* [3] */
	t_ref(&b, BTF_KIND_CONST, "", 3);             /* [4] const myint */
	t_array(&b, 4, 1, 6);                         /* [5] const myint[6] */
	t_struct(&b, "node", 16, 2, "next", 7, 0, "val", 4, 64); /* [6] */
	t_ref(&b, BTF_KIND_PTR, "", 6);               /* [7] struct node * (a legal cycle) */
	t_array(&b, 5, 1, 3);                         /* [8] const myint[3][6] */
	t_ref(&b, BTF_KIND_CONST, "", 0);             /* [9] const void */
	t_ref(&b, BTF_KIND_PTR, "", 9);               /* [10] const void * */
	finish(&b);
	ret = brt_btf_parse(b.out, b.len, &btf, err, sizeof(err));
	T_EQ_INT(0, ret);
	if (ret) {
		T_FAIL("%s", err);
		return;
	}
	T_EQ_INT(11, btf->ntypes);
	T_EQ_INT(0, brt_btf_skip_mods(btf, 9));
	T_EQ_INT(-EINVAL, brt_btf_resolve_size(btf, 9, &size));
	T_EQ_STR("myint", brt_btf_name(btf, 3));
	T_EQ_STR("node", brt_btf_name(btf, 6));
	T_EQ_INT(1, brt_btf_skip_mods(btf, 4));
	T_EQ_INT(0, brt_btf_resolve_size(btf, 5, &size));
	T_EQ_U64(24, size);
	T_EQ_INT(0, brt_btf_resolve_size(btf, 8, &size));
	T_EQ_U64(72, size);
	T_EQ_INT(0, brt_btf_resolve_size(btf, 7, &size));
	T_EQ_U64(8, size);
	T_EQ_INT(6, brt_btf_find(btf, "node", BTF_KIND_STRUCT));
	T_EQ_INT(-ENOENT, brt_btf_find(btf, "node", BTF_KIND_UNION));
	T_ASSERT(brt_btf_type(btf, 0) == NULL);
	T_ASSERT(brt_btf_type(btf, 11) == NULL);
	T_ASSERT(brt_btf_str(btf, 100000) == NULL);
	brt_btf_free(btf);
}

enum bad {
	B_TYPEDEF_LOOP,
	B_SELF_CONST,
	B_ARRAY_LOOP,
	B_MEMBER_ID,
	B_REF_ID,
	B_LOOP_THEN_REF_ID,
	B_CHAIN_TO_REF_ID,
	B_NAME_OFF,
	B_KIND,
	B_TRUNC_MEMBERS,
	B_MAGIC,
	B_VERSION,
	B_HDR_LEN,
	B_TYPE_ALIGN,
	B_STR_PAST,
	B_STR_UNTERMINATED,
	B_SHORT,
};

static const struct {
	const char *name;
	enum bad b;
	const char *msg;
} bad_cases[] = {
	{ "typedef loop", B_TYPEDEF_LOOP, "offset 0x18: type [1]: chain of typedefs, qualifiers or arrays is longer than 32 or loops" },
	{ "const of itself", B_SELF_CONST, "type [2]: chain of typedefs" },
	{ "array of itself", B_ARRAY_LOOP, "type [2]: chain of typedefs" },
	{ "member type id", B_MEMBER_ID, "offset 0x28: type [2]: member type refers to type [99], last is [2]" },
	{ "pointer type id", B_REF_ID, "type [2]: type refers to type [7]" },
	/* a reference out of range is the error even after an earlier type's loop (one
	 * pass checks both), and a chain that reaches it ends there, unread */
	{ "loop, then a type id", B_LOOP_THEN_REF_ID, "type [3]: type refers to type [7], last is [3]" },
	{ "chain to a type id", B_CHAIN_TO_REF_ID, "type [2]: type refers to type [90], last is [2]" },
	{ "name offset", B_NAME_OFF, "offset 0x18: type [1]: name offset 5000 is past the string section" },
	{ "unknown kind", B_KIND, "offset 0x28: type [2]: unknown kind 25" },
	{ "truncated members", B_TRUNC_MEMBERS, "type [2] STRUCT: 36 bytes of members run past" },
	{ "magic", B_MAGIC, "offset 0x0: bad magic 0x9feb (want 0xeb9f, the object is big-endian)" },
	{ "version", B_VERSION, "offset 0x2: version 2" },
	{ "header length", B_HDR_LEN, "offset 0x4: header length 8 out of range" },
	{ "type alignment", B_TYPE_ALIGN, "is not 4-byte aligned" },
	{ "string section past end", B_STR_PAST, "runs past the" },
	{ "string section unterminated", B_STR_UNTERMINATED, "must start and end with a NUL" },
	{ "shorter than header", B_SHORT, "shorter than the 24-byte header" },
};

static void build_bad(struct blob *b, enum bad which)
{
	struct btf_header *h = (struct btf_header *)(void *)b->out;

	switch (which) {
	case B_TYPEDEF_LOOP:
		t_ref(b, BTF_KIND_TYPEDEF, "a", 2);
		t_ref(b, BTF_KIND_TYPEDEF, "b", 1);
		break;
	case B_SELF_CONST:
		t_int(b, "int", 4);
		t_ref(b, BTF_KIND_CONST, "", 2);
		break;
	case B_ARRAY_LOOP:
		t_int(b, "int", 4);
		t_array(b, 2, 1, 4);
		break;
	case B_MEMBER_ID:
		t_int(b, "int", 4);
		t_struct(b, "s", 4, 1, "m", 99, 0);
		break;
	case B_REF_ID:
		t_int(b, "int", 4);
		t_ref(b, BTF_KIND_PTR, "", 7);
		break;
	case B_LOOP_THEN_REF_ID:
		t_ref(b, BTF_KIND_TYPEDEF, "a", 2);
		t_ref(b, BTF_KIND_TYPEDEF, "b", 1);
		t_ref(b, BTF_KIND_PTR, "", 7);
		break;
	case B_CHAIN_TO_REF_ID:
		t_ref(b, BTF_KIND_TYPEDEF, "a", 2);
		t_ref(b, BTF_KIND_CONST, "", 90);
		break;
	case B_NAME_OFF:
		words(b, 4, 5000, INFO(BTF_KIND_INT, 0), 4, 32);
		break;
	case B_KIND:
		t_int(b, "int", 4);
		words(b, 3, 0, INFO(25, 0), 0);
		break;
	case B_TRUNC_MEMBERS:
		t_int(b, "int", 4);
		words(b, 3, str(b, "s"), INFO(BTF_KIND_STRUCT, 3), 12);
		words(b, 3, str(b, "a"), 1, 0);
		break;
	default:
		t_int(b, "int", 4);
		break;
	}
	finish(b);
	switch (which) {
	case B_MAGIC:
		h->magic = 0x9FEB;
		break;
	case B_VERSION:
		h->version = 2;
		break;
	case B_HDR_LEN:
		h->hdr_len = 8;
		break;
	case B_TYPE_ALIGN:
		h->type_len -= 2;
		break;
	case B_STR_PAST:
		h->str_len += 100;
		break;
	case B_STR_UNTERMINATED:
		b->out[b->len - 1] = 'x';
		break;
	case B_SHORT:
		b->len = 10;
		break;
	default:
		break;
	}
}

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct blob b = { 0 };
		struct brt_btf *btf = (struct brt_btf *)&b; /* must be reset to NULL */
		char err[256] = "";
		int ret;

		T_CASE(bad_cases[i].name);
		build_bad(&b, bad_cases[i].b);
		ret = brt_btf_parse(b.out, b.len, &btf, err, sizeof(err));
		T_EQ_INT(-EINVAL, ret);
		T_ASSERT(btf == NULL);
		T_CONTAINS(bad_cases[i].msg, err);
	}
}

/* Struct A contains B contains A: parse accepts it (only pointers matter for chains), the
 * size resolver must stop. */
static void test_size_loop(void)
{
	struct blob b = { 0 };
	struct brt_btf *btf;
	char err[256];
	uint64_t size;

	T_CASE("struct size loop");
	t_struct(&b, "A", 4, 1, "b", 2, 0);
	t_struct(&b, "B", 4, 1, "a", 1, 0);
	t_array(&b, 1, 1, 0x40000000); /* [3] A[2^30]: 4 GiB */
	finish(&b);
	T_EQ_INT(0, brt_btf_parse(b.out, b.len, &btf, err, sizeof(err)));
	T_EQ_INT(0, brt_btf_resolve_size(btf, 1, &size));
	T_EQ_U64(4, size);
	T_EQ_INT(-E2BIG, brt_btf_resolve_size(btf, 3, &size));
	brt_btf_free(btf);
}

static void test_ext_lines(void)
{
	struct blob b = { 0 };
	struct brt_btf *btf;
	struct brt_btf_ext e;
	unsigned char ext[256];
	uint32_t w[64];
	size_t n = 0;
	char err[256];
	uint32_t sec, file, src;

	T_CASE("BTF.ext line info");
	t_int(&b, "int", 4);
	t_ref(&b, BTF_KIND_FUNC, "main", 0);
	sec = str(&b, "socket");
	file = str(&b, "prog.c");
	src = str(&b, "return 0;");
	finish(&b);
	T_EQ_INT(0, brt_btf_parse(b.out, b.len, &btf, err, sizeof(err)));
	/* header: magic/version/flags, hdr_len, func off/len, line off/len */
	w[n++] = BTF_MAGIC | (BTF_VERSION << 16);
	w[n++] = 24;
	w[n++] = 0;
	w[n++] = 0;
	w[n++] = 0;
	w[n++] = 4 + 8 + 2 * 16;
	w[n++] = 16; /* record size */
	w[n++] = sec;
	w[n++] = 2;
	w[n++] = 0, w[n++] = file, w[n++] = src, w[n++] = (7u << 10) | 3;
	w[n++] = 8, w[n++] = file, w[n++] = src, w[n++] = (8u << 10) | 1;
	memcpy(ext, w, n * 4);
	T_EQ_INT(0, brt_btf_ext_parse(btf, ext, n * 4, &e, err, sizeof(err)));
	T_EQ_INT(2, e.nlines);
	T_EQ_INT(0, e.nfuncs);
	T_EQ_INT(1, e.nblocks[BRT_BTF_EXT_LINE]);
	if (e.nlines == 2 && e.nblocks[BRT_BTF_EXT_LINE] == 1) {
		const struct brt_btf_ext_block *bl = &e.blocks[BRT_BTF_EXT_LINE][0];
		struct brt_btf_line l0, l1;

		T_EQ_STR("socket", bl->sec);
		T_EQ_INT(0, bl->first);
		T_EQ_INT(2, bl->count);
		T_EQ_INT(24 + 4 + 8, bl->file_off);
		T_EQ_INT(0, brt_btf_ext_line(btf, bl, 0, &l0, err, sizeof(err)));
		T_EQ_INT(0, brt_btf_ext_line(btf, bl, 1, &l1, err, sizeof(err)));
		T_EQ_STR("socket", l0.sec);
		T_EQ_STR("prog.c", l1.file);
		T_EQ_STR("return 0;", l1.src);
		T_EQ_INT(7, l0.line);
		T_EQ_INT(3, l0.col);
		T_EQ_INT(8, l1.insn_off);
		T_EQ_INT(src, l1.src_off);
	}
	brt_btf_ext_free(&e);

	T_CASE("BTF.ext bad line record: checked when read");
	w[n - 2] = 99999; /* record 1's source line offset */
	memcpy(ext, w, n * 4);
	T_EQ_INT(0, brt_btf_ext_parse(btf, ext, n * 4, &e, err, sizeof(err)));
	if (e.nblocks[BRT_BTF_EXT_LINE] == 1) {
		struct brt_btf_line l;

		T_EQ_INT(0, brt_btf_ext_line(btf, &e.blocks[BRT_BTF_EXT_LINE][0], 0, &l, err,
					     sizeof(err)));
		T_EQ_INT(-EINVAL, brt_btf_ext_line(btf, &e.blocks[BRT_BTF_EXT_LINE][0], 1, &l, err,
						   sizeof(err)));
		T_CONTAINS("offset 0x34: line info record 1 of 'socket' names a bad string or type",
			   err);
	} else {
		T_FAIL("no line block");
	}
	brt_btf_ext_free(&e);
	w[n - 2] = src;

	T_CASE("BTF.ext truncated block");
	w[8] = 5; /* five records announced, two present */
	memcpy(ext, w, n * 4);
	T_EQ_INT(-EINVAL, brt_btf_ext_parse(btf, ext, n * 4, &e, err, sizeof(err)));
	T_CONTAINS("line info block truncated", err);

	T_CASE("BTF.ext bad section name");
	w[8] = 2;
	w[7] = 9999;
	memcpy(ext, w, n * 4);
	T_EQ_INT(-EINVAL, brt_btf_ext_parse(btf, ext, n * 4, &e, err, sizeof(err)));
	T_CONTAINS("section name offset 9999 out of range", err);

	T_CASE("BTF.ext line info past end");
	w[5] = 4000;
	memcpy(ext, w, n * 4);
	T_EQ_INT(-EINVAL, brt_btf_ext_parse(btf, ext, n * 4, &e, err, sizeof(err)));
	T_CONTAINS("runs past", err);

	T_CASE("BTF.ext func info");
	n = 0;
	w[n++] = BTF_MAGIC | (BTF_VERSION << 16);
	w[n++] = 24;
	w[n++] = 0;      /* func info at 0 */
	w[n++] = 4 + 8 + 2 * 8;
	w[n++] = 4 + 8 + 2 * 8; /* empty line info right after */
	w[n++] = 0;
	w[n++] = 8;
	w[n++] = sec;
	w[n++] = 2;
	w[n++] = 0, w[n++] = 2;  /* [2] is the FUNC below */
	w[n++] = 16, w[n++] = 1; /* [1] is an INT: refused */
	memcpy(ext, w, n * 4);
	T_EQ_INT(-EINVAL, brt_btf_ext_parse(btf, ext, n * 4, &e, err, sizeof(err)));
	T_CONTAINS("func info record 1 of 'socket' names a bad string or type", err);
	brt_btf_free(btf);
}

int main(void)
{
	test_valid();
	test_bad();
	test_size_loop();
	test_ext_lines();
	return t_done();
}
