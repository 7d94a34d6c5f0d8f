/* asm.c - the assembler for the conformance-suite syntax (see include/bpfrt/asm.h for the
 * accepted language).  One pass over the lines encodes instructions and records label uses;
 * a second pass patches jump offsets.  Mnemonics are looked up in brt_ops[] (insn.def), so
 * every row of the opcode table is assemblable and nothing here lists opcodes again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "isa/isa.h"

#define MAX_OPERANDS 4
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A place in the source, for messages. */
struct pos {
	unsigned line;
	unsigned col;
};

struct label {
	const char *name;
	size_t len;
	size_t insn_idx;
	struct pos at;
};

/* A jump, local call or lddw func whose target is a label, patched after the last line. */
struct fixup {
	const char *name;
	size_t len;
	size_t insn_idx;
	int to_imm; /* the target goes in imm (ja32, call local, lddw func) rather than off */
	struct pos at;
};

struct assembler {
	const char *file;
	char *err;
	size_t errlen;
	const char *line_start;
	unsigned line;
	struct bpf_insn *insns;
	size_t n, cap;
	struct label *labels;
	size_t n_labels, cap_labels;
	struct fixup *fixups;
	size_t n_fixups, cap_fixups;
	long first_exit; /* index of the first exit: the implicit target "exit" */
};

/* An operand: a slice of the line. */
struct operand {
	const char *s;
	size_t len;
};

static int fail_at(struct assembler *a, struct pos at, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(struct assembler *a, struct pos at, int ret, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!a->errlen)
		return ret;
	k = snprintf(a->err, a->errlen, "%s:%u:%u: ", a->file, at.line, at.col);
	if (k >= 0 && (size_t)k < a->errlen) {
		va_start(ap, fmt);
		vsnprintf(a->err + k, a->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static struct pos pos_of(const struct assembler *a, const char *p)
{
	return (struct pos){ a->line, (unsigned)(p - a->line_start) + 1 };
}

#define FAIL(a, p, ...) fail_at((a), pos_of((a), (p)), -EINVAL, __VA_ARGS__)

/* ---- mnemonic index: brt_ops[] sorted by mnemonic, built once ------------------------- */

static uint16_t by_mnem[BRT_OP_COUNT];
static pthread_once_t by_mnem_once = PTHREAD_ONCE_INIT;

static int cmp_rows(const void *x, const void *y)
{
	const uint16_t *a = x, *b = y;
	int c = strcmp(brt_ops[*a].mnem, brt_ops[*b].mnem);

	return c ? c : (int)*a - (int)*b;
}

static void build_by_mnem(void)
{
	for (unsigned i = 0; i < BRT_OP_COUNT; i++)
		by_mnem[i] = (uint16_t)i;
	qsort(by_mnem, BRT_OP_COUNT, sizeof(by_mnem[0]), cmp_rows);
}

/* strcmp between a NUL-terminated mnemonic and a slice. */
static int cmp_slice(const char *mnem, const char *s, size_t len)
{
	int c = strncmp(mnem, s, len);

	if (c)
		return c;
	return mnem[len] ? 1 : 0;
}

/* Rows whose mnemonic is s[0..len): fills rows[], returns how many (at most max). */
static size_t find_rows(const char *s, size_t len, enum brt_op *rows, size_t max)
{
	size_t lo = 0, hi = BRT_OP_COUNT, n = 0;

	pthread_once(&by_mnem_once, build_by_mnem);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_slice(brt_ops[by_mnem[mid]].mnem, s, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < BRT_OP_COUNT && n < max; lo++) {
		if (cmp_slice(brt_ops[by_mnem[lo]].mnem, s, len))
			break;
		rows[n++] = (enum brt_op)by_mnem[lo];
	}
	return n;
}

/* ---- lexical helpers ----------------------------------------------------------------- */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int is_ident(char c, int first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.')
		return 1;
	return !first && c >= '0' && c <= '9';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

static struct operand trim(const char *s, const char *end)
{
	s = skip_ws(s, end);
	while (end > s && is_space(end[-1]))
		end--;
	return (struct operand){ s, (size_t)(end - s) };
}

static int slice_eq(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !strncmp(s, word, len);
}

/* Parse an unsigned decimal or 0x-hex magnitude covering all of s[0..len).
 * Returns 0, or -ERANGE (more than 64 bits) / -EINVAL (not a number). */
static int parse_mag(const char *s, size_t len, uint64_t *out, int *hex)
{
	unsigned base = 10;
	uint64_t v = 0;

	*hex = 0;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		*hex = 1;
		s += 2;
		len -= 2;
	}
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* A signed number of `bits` bits (16, 32 or 64): decimal must fit the signed range; hex may
 * also spell the unsigned range (0xffffffff is -1 as a 32-bit field), as the suite does. */
static int parse_num(struct assembler *a, struct operand o, unsigned bits, const char *what,
		     int64_t *out)
{
	const char *s = o.s;
	size_t len = o.len;
	uint64_t mag, smax, umax;
	int neg = 0, hex, ret;

	if (len && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
		len--;
		while (len && is_space(*s)) {
			s++;
			len--;
		}
	}
	ret = parse_mag(s, len, &mag, &hex);
	if (ret == -EINVAL)
		return FAIL(a, o.s, "Invalid %s '%.*s': not a number", what, (int)o.len, o.s);
	smax = bits == 64 ? (uint64_t)INT64_MAX : (1ull << (bits - 1)) - 1;
	umax = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
	/* lddw takes any 64-bit pattern, decimal too: the suite writes 2^63 and up in decimal */
	if (bits == 64 && !neg)
		smax = umax;
	if (ret || (neg && mag > smax + 1) || (!neg && mag > (hex ? umax : smax)))
		return FAIL(a, o.s, "Invalid %s '%.*s': out of %u-bit range", what, (int)o.len, o.s,
			    bits);
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

static int is_reg_syntax(struct operand o)
{
	if (!o.len)
		return 0;
	return o.s[0] == '%' || (o.len >= 2 && o.s[0] == 'r' && o.s[1] >= '0' && o.s[1] <= '9');
}

/* %rN (the % is optional), N in 0..10. */
static int parse_reg(struct assembler *a, struct operand o, uint8_t *reg)
{
	const char *s = o.s;
	size_t len = o.len;
	unsigned v = 0;

	if (len && *s == '%') {
		s++;
		len--;
	}
	if (len < 2 || len > 3 || *s != 'r')
		goto bad;
	for (size_t i = 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			goto bad;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v >= BRT_MAX_REGS || (len == 3 && s[1] == '0'))
		goto bad;
	*reg = (uint8_t)v;
	return 0;
bad:
	if (!o.len)
		return FAIL(a, o.s, "Invalid register: operand is empty");
	return FAIL(a, o.s, "Invalid register '%.*s'", (int)o.len, o.s);
}

/* [%rN], [%rN+off], [%rN-off] */
static int parse_mem(struct assembler *a, struct operand o, uint8_t *reg, int16_t *off)
{
	const char *end = o.s + o.len, *p, *r;
	struct operand num;
	int64_t v = 0;
	int ret;

	if (!o.len || o.s[0] != '[' || end[-1] != ']')
		return FAIL(a, o.s, "Invalid memory operand '%.*s': expected [%%rN+offset]",
			    (int)o.len, o.s);
	end--;
	r = skip_ws(o.s + 1, end);
	for (p = r; p < end && *p != '+' && *p != '-' && !is_space(*p); p++)
		;
	ret = parse_reg(a, (struct operand){ r, (size_t)(p - r) }, reg);
	if (ret)
		return ret;
	p = skip_ws(p, end);
	if (p < end) {
		if (*p != '+' && *p != '-')
			return FAIL(a, p, "Invalid memory operand '%.*s': expected + or - after "
				    "the register", (int)o.len, o.s);
		num = trim(p, end);
		ret = parse_num(a, num, 16, "offset", &v);
		if (ret)
			return ret;
	}
	*off = (int16_t)v;
	return 0;
}

/* ---- output buffers -------------------------------------------------------------------- */

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *nbuf;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	nbuf = realloc(*buf, ncap * elem);
	if (!nbuf)
		return -ENOMEM;
	*buf = nbuf;
	*cap = ncap;
	return 0;
}

static int emit(struct assembler *a, const struct bpf_insn *insn, size_t count, const char *at)
{
	if (a->n + count > BRT_ISA_MAX_INSNS)
		return fail_at(a, pos_of(a, at), -E2BIG,
			       "program has more than %u instructions", BRT_ISA_MAX_INSNS);
	if (grow((void **)&a->insns, &a->cap, a->n + count, sizeof(*insn)))
		return fail_at(a, pos_of(a, at), -ENOMEM, "out of memory");
	memcpy(&a->insns[a->n], insn, count * sizeof(*insn));
	a->n += count;
	return 0;
}

static int add_label(struct assembler *a, const char *name, size_t len)
{
	if (grow((void **)&a->labels, &a->cap_labels, a->n_labels + 1, sizeof(*a->labels)))
		return fail_at(a, pos_of(a, name), -ENOMEM, "out of memory");
	a->labels[a->n_labels++] = (struct label){ name, len, a->n, pos_of(a, name) };
	return 0;
}

static int cmp_name(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

static int cmp_labels(const void *x, const void *y)
{
	const struct label *a = x, *b = y;
	int c = cmp_name(a->name, a->len, b->name, b->len);

	if (c)
		return c;
	return a->at.line != b->at.line ? (a->at.line > b->at.line ? 1 : -1)
					: (a->at.col > b->at.col) - (a->at.col < b->at.col);
}

/* Sort the labels for lookup; a name defined twice is an error at its second definition. */
static int sort_labels(struct assembler *a)
{
	if (a->n_labels)
		qsort(a->labels, a->n_labels, sizeof(*a->labels), cmp_labels);
	for (size_t i = 1; i < a->n_labels; i++) {
		const struct label *prev = &a->labels[i - 1], *l = &a->labels[i];

		if (!cmp_name(prev->name, prev->len, l->name, l->len))
			return fail_at(a, l->at, -EINVAL,
				       "Duplicate label '%.*s' (first defined on line %u)",
				       (int)l->len, l->name, prev->at.line);
	}
	return 0;
}

static const struct label *find_label(const struct assembler *a, const char *name, size_t len)
{
	size_t lo = 0, hi = a->n_labels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_name(a->labels[mid].name, a->labels[mid].len, name, len);

		if (!c)
			return &a->labels[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A jump target: +N / -N / N is an offset; anything else names a label resolved later. */
static int parse_target(struct assembler *a, struct operand o, int to_imm, int64_t *val)
{
	struct fixup *f;

	if (!o.len)
		return FAIL(a, o.s, "Invalid jump target: operand is empty");
	if (o.s[0] == '+' || o.s[0] == '-' || (o.s[0] >= '0' && o.s[0] <= '9'))
		return parse_num(a, o, to_imm ? 32 : 16, "jump offset", val);
	for (size_t i = 0; i < o.len; i++)
		if (!is_ident(o.s[i], i == 0))
			return FAIL(a, o.s, "Invalid label '%.*s'", (int)o.len, o.s);
	if (grow((void **)&a->fixups, &a->cap_fixups, a->n_fixups + 1, sizeof(*a->fixups)))
		return fail_at(a, pos_of(a, o.s), -ENOMEM, "out of memory");
	f = &a->fixups[a->n_fixups++];
	*f = (struct fixup){ o.s, o.len, a->n, to_imm, pos_of(a, o.s) };
	*val = 0;
	return 0;
}

static int resolve_fixups(struct assembler *a)
{
	int ret = sort_labels(a);

	if (ret)
		return ret;
	for (size_t i = 0; i < a->n_fixups; i++) {
		const struct fixup *f = &a->fixups[i];
		const struct label *l = find_label(a, f->name, f->len);
		int64_t target = l ? (int64_t)l->insn_idx : -1, rel;

		/* the suite's convention: "exit" names the first exit instruction */
		if (target < 0 && slice_eq(f->name, f->len, "exit") && a->first_exit >= 0)
			target = a->first_exit;
		if (target < 0)
			return fail_at(a, f->at, -EINVAL, "Invalid label '%.*s': not defined",
				       (int)f->len, f->name);
		rel = target - (int64_t)f->insn_idx - 1;
		if (f->to_imm) {
			a->insns[f->insn_idx].imm = (int32_t)rel;
			continue;
		}
		if (rel < INT16_MIN || rel > INT16_MAX)
			return fail_at(a, f->at, -EINVAL,
				       "jump to label '%.*s' is %lld instructions away, out of "
				       "16-bit offset range",
				       (int)f->len, f->name, (long long)rel);
		a->insns[f->insn_idx].off = (int16_t)rel;
	}
	return 0;
}

/* ---- instructions ---------------------------------------------------------------------- */

static unsigned shape_operands(enum brt_shape shape)
{
	switch (shape) {
	case BRT_SHAPE_EXIT:
		return 0;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
	case BRT_SHAPE_LD_ABS:
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_MAY_GOTO:
	case BRT_SHAPE_CALL:
	case BRT_SHAPE_CALL_LOCAL:
	case BRT_SHAPE_CALLX:
		return 1;
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
		return 3;
	default:
		return 2;
	}
}

static int imm32(struct assembler *a, struct operand o, int32_t *imm)
{
	int64_t v;
	int ret = parse_num(a, o, 32, "immediate", &v);

	*imm = (int32_t)v;
	return ret;
}

/* "call 5" or "call bpf_ktime_get_ns" (the bpf_ prefix is optional). */
static int helper_operand(struct assembler *a, struct operand o, int32_t *imm)
{
	if (!o.len || !is_ident(o.s[0], 1))
		return imm32(a, o, imm);
	*imm = brt_isa_helper_id(o.s, o.len);
	if (*imm < 0)
		return FAIL(a, o.s, "Invalid helper '%.*s' (a bpf-to-bpf call is 'call local "
			    "LABEL')", (int)o.len, o.s);
	return 0;
}

/* lddw's pseudo forms: "KIND A [B]" where A goes in the first imm and B in the second,
 * KIND one of brt_isa_pseudo_name()'s; "func" takes a label or offset. */
static int parse_lddw(struct assembler *a, struct operand o, struct bpf_insn *insn)
{
	const char *end = o.s + o.len, *p = o.s, *q;
	struct operand arg;
	int64_t v = 0, v2 = 0;
	int ret, kind;

	while (p < end && is_ident(*p, p == o.s))
		p++;
	if (p == o.s) {
		ret = parse_num(a, o, 64, "immediate", &v);
		insn[0].imm = (int32_t)(uint32_t)(uint64_t)v;
		insn[1].imm = (int32_t)(uint32_t)((uint64_t)v >> 32);
		return ret;
	}
	kind = brt_isa_pseudo_kind(o.s, (size_t)(p - o.s));
	if (kind < 0)
		return FAIL(a, o.s, "Invalid lddw operand '%.*s': expected a number or one of "
			    "map_fd, map_value, btf_id, func, map_idx, map_idx_value",
			    (int)o.len, o.s);
	insn->src_reg = (uint8_t)kind;
	p = skip_ws(p, end);
	for (q = p; q < end && !is_space(*q); q++)
		;
	arg = (struct operand){ p, (size_t)(q - p) };
	if (insn->src_reg == BPF_PSEUDO_FUNC)
		ret = parse_target(a, arg, 1, &v);
	else
		ret = parse_num(a, arg, 32, "immediate", &v);
	if (ret)
		return ret;
	arg = trim(q, end);
	if (arg.len && (ret = parse_num(a, arg, 32, "immediate", &v2)))
		return ret;
	insn[0].imm = (int32_t)v;
	insn[1].imm = (int32_t)v2;
	return 0;
}

/* Register and memory operands of a row, parsed into plain fields (bpf_insn's registers are
 * bit-fields, which cannot be passed by address). */
struct fields {
	uint8_t dst, src;
	int16_t off;
	int32_t imm;
};

static int encode_operands(struct assembler *a, enum brt_shape shape, const struct operand *o,
			   struct fields *f, struct bpf_insn *insn)
{
	int ret;

	switch (shape) {
	case BRT_SHAPE_ALU_IMM:
	case BRT_SHAPE_JMP_IMM:
		ret = parse_reg(a, o[0], &f->dst);
		return ret ? ret : imm32(a, o[1], &f->imm);
	case BRT_SHAPE_ALU_REG:
	case BRT_SHAPE_JMP_REG:
		ret = parse_reg(a, o[0], &f->dst);
		return ret ? ret : parse_reg(a, o[1], &f->src);
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
	case BRT_SHAPE_CALLX:
		return parse_reg(a, o[0], &f->dst);
	case BRT_SHAPE_LOAD:
		ret = parse_reg(a, o[0], &f->dst);
		return ret ? ret : parse_mem(a, o[1], &f->src, &f->off);
	case BRT_SHAPE_STORE_IMM:
		ret = parse_mem(a, o[0], &f->dst, &f->off);
		return ret ? ret : imm32(a, o[1], &f->imm);
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_ATOMIC:
		ret = parse_mem(a, o[0], &f->dst, &f->off);
		return ret ? ret : parse_reg(a, o[1], &f->src);
	case BRT_SHAPE_LDDW:
		ret = parse_reg(a, o[0], &f->dst);
		if (ret)
			return ret;
		ret = parse_lddw(a, o[1], insn);
		f->src = insn->src_reg;
		f->imm = insn->imm;
		return ret;
	case BRT_SHAPE_CALL:
		return helper_operand(a, o[0], &f->imm);
	case BRT_SHAPE_LD_ABS:
		return imm32(a, o[0], &f->imm);
	case BRT_SHAPE_LD_IND:
		ret = parse_reg(a, o[0], &f->src);
		return ret ? ret : imm32(a, o[1], &f->imm);
	default:
		return 0;
	}
}

static int encode_target(struct assembler *a, enum brt_shape shape, const struct operand *o,
			 struct fields *f)
{
	int64_t v = 0;
	int ret;

	switch (shape) {
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
	case BRT_SHAPE_JA:
	case BRT_SHAPE_MAY_GOTO:
		ret = parse_target(a, o[shape == BRT_SHAPE_JMP_IMM || shape == BRT_SHAPE_JMP_REG ? 2 : 0],
				   0, &v);
		f->off = (int16_t)v;
		return ret;
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_CALL_LOCAL:
		ret = parse_target(a, o[0], 1, &v);
		f->imm = (int32_t)v;
		return ret;
	default:
		return 0;
	}
}

/* Encode operands o[] for row op into insn (two slots for lddw). */
static int encode(struct assembler *a, enum brt_op op, const struct operand *o,
		  struct bpf_insn *insn)
{
	const struct brt_opinfo *info = &brt_ops[op];
	enum brt_shape shape = (enum brt_shape)info->shape;
	struct fields f = { 0 };
	int ret;

	ret = encode_operands(a, shape, o, &f, insn);
	if (!ret)
		ret = encode_target(a, shape, o, &f);
	if (ret)
		return ret;
	/* the field that tells this row apart from others sharing its opcode byte */
	if (info->disc == BRT_DISC_OFF)
		f.off = (int16_t)info->disc_val;
	else if (info->disc == BRT_DISC_IMM)
		f.imm = info->disc_val;
	else if (info->disc == BRT_DISC_SRC)
		f.src = (uint8_t)info->disc_val;
	insn->code = info->opcode;
	insn->dst_reg = f.dst;
	insn->src_reg = f.src;
	insn->off = f.off;
	insn->imm = f.imm;
	return 0;
}

/* Split "a, b, c" at top-level commas into o[]; returns the count or -1 if too many. */
static int split_operands(const char *p, const char *end, struct operand *o)
{
	int n = 0;

	p = skip_ws(p, end);
	if (p == end)
		return 0;
	for (;;) {
		const char *q = p;

		while (q < end && *q != ',')
			q++;
		if (n == MAX_OPERANDS)
			return -1;
		o[n++] = trim(p, q);
		if (q == end)
			return n;
		p = q + 1;
	}
}

/* End of a mnemonic word after "lock": stops at the memory operand too. */
static const char *word_end(const char *p, const char *end)
{
	while (p < end && !is_space(*p) && *p != '[' && *p != ',')
		p++;
	return p;
}

/* Append " word" to buf (which has room: callers check) and return the new length. */
static size_t append_word(char *buf, size_t len, const char *w, size_t wlen)
{
	buf[len++] = ' ';
	memcpy(buf + len, w, wlen);
	len += wlen;
	buf[len] = 0;
	return len;
}

/* The words of a mnemonic: "lock [fetch] op" and "call local" span two or three words. */
static const char *read_mnemonic(struct assembler *a, const char *p, const char *end,
				 char *buf, size_t buflen, int *bad)
{
	const char *w = p;
	size_t len;

	*bad = 0;
	while (p < end && !is_space(*p))
		p++;
	len = (size_t)(p - w);
	if (len >= buflen) {
		*bad = FAIL(a, w, "Invalid mnemonic '%.*s'", (int)len, w);
		return p;
	}
	memcpy(buf, w, len);
	buf[len] = 0;
	if (!strcmp(buf, "lock")) {
		const char *s = skip_ws(p, end), *e = word_end(s, end);

		if (e - s == 5 && !strncmp(s, "fetch", 5)) {
			s = skip_ws(e, end);
			e = word_end(s, end);
			len = append_word(buf, len, "fetch", 5);
		}
		if (e == s) {
			*bad = FAIL(a, w, "Invalid number of operands for lock");
			return p;
		}
		if (len + 2 + (size_t)(e - s) >= buflen) {
			*bad = FAIL(a, s, "Invalid mnemonic '%s %.*s'", buf, (int)(e - s), s);
			return p;
		}
		append_word(buf, len, s, (size_t)(e - s));
		p = e;
	} else if (!strcmp(buf, "call")) {
		const char *s = skip_ws(p, end);

		if (end - s >= 5 && !strncmp(s, "local", 5) && (end - s == 5 || is_space(s[5]))) {
			strcpy(buf, "call local");
			p = s + 5;
		}
	}
	return p;
}

/* Aliases for rows the table spells otherwise (kept tiny: no second opcode list). */
static const struct {
	const char *alias, *mnem;
} aliases[] = {
	{ "swap16", "bswap16" },
	{ "swap32", "bswap32" },
	{ "swap64", "bswap64" },
	{ "gotol", "ja32" },
	/* xchg and cmpxchg always fetch */
	{ "lock fetch xchg", "lock xchg" },
	{ "lock fetch xchg32", "lock xchg32" },
	{ "lock fetch cmpxchg", "lock cmpxchg" },
	{ "lock fetch cmpxchg32", "lock cmpxchg32" },
};

static int assemble_insn(struct assembler *a, const char *p, const char *end)
{
	const char *m = p;
	char mnem[48];
	struct operand o[MAX_OPERANDS];
	struct bpf_insn insn[2] = { { 0 } };
	enum brt_op rows[4];
	size_t nrows;
	unsigned want;
	int n, bad, op = -1;

	p = read_mnemonic(a, p, end, mnem, sizeof(mnem), &bad);
	if (bad)
		return bad;
	for (size_t i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcmp(mnem, aliases[i].alias))
			strcpy(mnem, aliases[i].mnem);
	n = split_operands(p, end, o);
	if (n < 0)
		return FAIL(a, m, "Invalid number of operands for %s: more than %d", mnem,
			    MAX_OPERANDS);
	/* "call %rN" is callx, the suite's spelling */
	if (!strcmp(mnem, "call") && n == 1 && is_reg_syntax(o[0]))
		strcpy(mnem, "callx");
	nrows = find_rows(mnem, strlen(mnem), rows, ARRAY_SIZE(rows));
	if (!nrows)
		return FAIL(a, m, "Invalid mnemonic '%s'", mnem);
	want = shape_operands((enum brt_shape)brt_ops[rows[0]].shape);
	if ((unsigned)n != want) {
		if (!strncmp(mnem, "lock", 4))
			return FAIL(a, m, "Invalid number of operands for lock");
		return FAIL(a, m, "Invalid number of operands for %s: expected %u, got %d", mnem,
			    want, n);
	}
	/* rows sharing a mnemonic differ in imm vs register source (second operand) */
	for (size_t i = 0; i < nrows && op < 0; i++) {
		enum brt_shape s = (enum brt_shape)brt_ops[rows[i]].shape;
		int reg_src = s == BRT_SHAPE_ALU_REG || s == BRT_SHAPE_JMP_REG;
		int imm_src = s == BRT_SHAPE_ALU_IMM || s == BRT_SHAPE_JMP_IMM;

		if (nrows == 1 || n < 2 || (reg_src && is_reg_syntax(o[1])) ||
		    (imm_src && !is_reg_syntax(o[1])))
			op = rows[i];
	}
	if (op < 0)
		op = rows[0];
	if (brt_ops[op].shape == BRT_SHAPE_EXIT && a->first_exit < 0)
		a->first_exit = (long)a->n;
	bad = encode(a, (enum brt_op)op, o, insn);
	if (bad)
		return bad;
	return emit(a, insn, brt_ops[op].shape == BRT_SHAPE_LDDW ? 2 : 1, m);
}

/* End of the code part of a line: comments start with #, // or ;. */
static const char *code_end(const char *p, const char *end)
{
	for (const char *q = p; q < end; q++)
		if (*q == '#' || *q == ';' || (*q == '/' && q + 1 < end && q[1] == '/'))
			return q;
	return end;
}

static int assemble_line(struct assembler *a, const char *p, const char *end)
{
	const char *w;
	int ret;

	end = code_end(p, end);
	p = skip_ws(p, end);
	/* any number of "label:" prefixes */
	for (;;) {
		for (w = p; w < end && is_ident(*w, w == p); w++)
			;
		if (w == p || w == end || *w != ':')
			break;
		ret = add_label(a, p, (size_t)(w - p));
		if (ret)
			return ret;
		p = skip_ws(w + 1, end);
	}
	if (p == end)
		return 0;
	return assemble_insn(a, p, end);
}

int brt_asm(const char *text, const char *filename, struct bpf_insn **out, size_t *n_insns,
	    char *err, size_t errlen)
{
	struct assembler a = { .file = filename ? filename : "<input>", .err = err,
			       .errlen = errlen, .first_exit = -1 };
	const char *p = text;
	int ret = 0;

	if (errlen)
		err[0] = 0;
	*out = NULL;
	*n_insns = 0;
	while (*p && !ret) {
		const char *end = strchr(p, '\n');

		if (!end)
			end = p + strlen(p);
		a.line++;
		a.line_start = p;
		ret = assemble_line(&a, p, end);
		p = *end ? end + 1 : end;
	}
	if (!ret)
		ret = resolve_fixups(&a);
	if (!ret && !a.n) {
		a.line = a.line ? a.line : 1;
		ret = fail_at(&a, (struct pos){ a.line, 1 }, -EINVAL,
			      "empty program: no instructions");
	}
	free(a.labels);
	free(a.fixups);
	if (ret) {
		free(a.insns);
		return ret;
	}
	*out = a.insns;
	*n_insns = a.n;
	return 0;
}

int bpfrt_asm(const char *text, const char *filename, struct bpf_insn **out, size_t *n_insns,
	      char *err, size_t errlen)
{
	int ret;

	if (!text || !out || !n_insns || (errlen && !err)) {
		if (errlen && err)
			snprintf(err, errlen, "asm: NULL argument");
		errno = EINVAL;
		return -EINVAL;
	}
	ret = brt_asm(text, filename, out, n_insns, err, errlen);
	if (ret)
		errno = -ret;
	return ret;
}
