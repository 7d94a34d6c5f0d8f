/* test_asm.c - the assembler: encodings of each syntax form, error messages with their
 * line:col, and every program of the conformance suite (../shared/conformance/tests). */
#include <dirent.h>
#include <errno.h>

#include "datafile.h"
#include "bpfrt.h"
#include "harness.h"
#include "isa/isa.h"

#define I(code, dst, src, off, imm) { (code), (dst), (src), (off), (imm) }

struct enc_case {
	const char *text;
	size_t n;
	struct bpf_insn insn[5];
};

static const struct enc_case enc_cases[] = {
	{ "add %r1, 5", 1, { I(0x07, 1, 0, 0, 5) } },
	{ "add %r1, %r2", 1, { I(0x0f, 1, 2, 0, 0) } },
	{ "add32 %r1, -1", 1, { I(0x04, 1, 0, 0, -1) } },
	{ "mov %r0, 0xffffffff", 1, { I(0xb7, 0, 0, 0, -1) } },
	{ "mov32 %r0, -2147483648", 1, { I(0xb4, 0, 0, 0, INT32_MIN) } },
	{ "mov %r10, %r9", 1, { I(0xbf, 10, 9, 0, 0) } },
	{ "sdiv %r1, 3", 1, { I(0x37, 1, 0, 1, 3) } },
	{ "smod32 %r1, %r2", 1, { I(0x9c, 1, 2, 1, 0) } },
	{ "div %r1, %r2", 1, { I(0x3f, 1, 2, 0, 0) } },
	{ "neg %r4", 1, { I(0x87, 4, 0, 0, 0) } },
	{ "neg32 %r4", 1, { I(0x84, 4, 0, 0, 0) } },
	{ "movsx864 %r1, %r2", 1, { I(0xbf, 1, 2, 8, 0) } },
	{ "movsx1632 %r1, %r2", 1, { I(0xbc, 1, 2, 16, 0) } },
	{ "movsx3264 %r1, %r2", 1, { I(0xbf, 1, 2, 32, 0) } },
	{ "be16 %r1", 1, { I(0xdc, 1, 0, 0, 16) } },
	{ "le64 %r1", 1, { I(0xd4, 1, 0, 0, 64) } },
	{ "bswap32 %r1", 1, { I(0xd7, 1, 0, 0, 32) } },
	{ "swap64 %r1", 1, { I(0xd7, 1, 0, 0, 64) } },
	{ "ldxb %r0, [%r1+2]", 1, { I(0x71, 0, 1, 2, 0) } },
	{ "ldxdw %r0, [%r10-8]", 1, { I(0x79, 0, 10, -8, 0) } },
	{ "ldxh %r0, [%r1]", 1, { I(0x69, 0, 1, 0, 0) } },
	{ "ldxw %r0, [ %r1 + 0x10 ]", 1, { I(0x61, 0, 1, 16, 0) } },
	{ "ldxsw %r0, [%r10-4]", 1, { I(0x81, 0, 10, -4, 0) } },
	{ "ldxb %r0, [%r1+0xffff]", 1, { I(0x71, 0, 1, -1, 0) } },
	{ "stb [%r10-1], 0xff", 1, { I(0x72, 10, 0, -1, 255) } },
	{ "stdw [%r1], -3", 1, { I(0x7a, 1, 0, 0, -3) } },
	{ "stxdw [%r10-16], %r1", 1, { I(0x7b, 10, 1, -16, 0) } },
	{ "lock add [%r10-8], %r1", 1, { I(0xdb, 10, 1, -8, BPF_ADD) } },
	{ "lock add32 [%r10-8], %r1", 1, { I(0xc3, 10, 1, -8, BPF_ADD) } },
	{ "lock fetch xor [%r10-8], %r1", 1, { I(0xdb, 10, 1, -8, BPF_XOR | BPF_FETCH) } },
	{ "lock xchg32 [%r10-8], %r1", 1, { I(0xc3, 10, 1, -8, BPF_XCHG) } },
	{ "lock cmpxchg [%r1+0], %r2", 1, { I(0xdb, 1, 2, 0, BPF_CMPXCHG) } },
	{ "lock fetch cmpxchg32 [%r1+0], %r2", 1, { I(0xc3, 1, 2, 0, BPF_CMPXCHG) } },
	{ "lock fetch xchg [%r1-4], %r2", 1, { I(0xdb, 1, 2, -4, BPF_XCHG) } },
	{ "lddw %r0, 0x1122334455667788", 2,
	  { I(0x18, 0, 0, 0, 0x55667788), I(0, 0, 0, 0, 0x11223344) } },
	{ "lddw %r1, 18446744073709551615", 2, { I(0x18, 1, 0, 0, -1), I(0, 0, 0, 0, -1) } },
	{ "lddw %r1, -2", 2, { I(0x18, 1, 0, 0, -2), I(0, 0, 0, 0, -1) } },
	{ "lddw %r1, map_fd 3", 2, { I(0x18, 1, 1, 0, 3), I(0, 0, 0, 0, 0) } },
	{ "lddw %r1, map_value 3 16", 2, { I(0x18, 1, 2, 0, 3), I(0, 0, 0, 0, 16) } },
	{ "lddw %r2, btf_id 77", 2, { I(0x18, 2, 3, 0, 77), I(0, 0, 0, 0, 0) } },
	{ "lddw %r2, func +2\nexit\nexit\nexit", 5,
	  { I(0x18, 2, 4, 0, 2), I(0, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0),
	    I(0x95, 0, 0, 0, 0) } },
	{ "lddw %r1, map_idx 0", 2, { I(0x18, 1, 5, 0, 0), I(0, 0, 0, 0, 0) } },
	{ "lddw %r1, map_idx_value 1 8", 2, { I(0x18, 1, 6, 0, 1), I(0, 0, 0, 0, 8) } },
	{ "ldabsw 12", 1, { I(0x20, 0, 0, 0, 12) } },
	{ "ldindh %r3, -4", 1, { I(0x48, 0, 3, 0, -4) } },
	{ "ja +1\nexit", 2, { I(0x05, 0, 0, 1, 0), I(0x95, 0, 0, 0, 0) } },
	{ "ja -1", 1, { I(0x05, 0, 0, -1, 0) } },
	{ "ja32 +3", 1, { I(0x06, 0, 0, 0, 3) } },
	{ "gotol -2", 1, { I(0x06, 0, 0, 0, -2) } },
	{ "jeq %r1, 0x10, +2", 1, { I(0x15, 1, 0, 2, 16) } },
	{ "jsle32 %r1, %r2, -3", 1, { I(0xde, 1, 2, -3, 0) } },
	{ "jne %r1, 0x80000000, +1", 1, { I(0x55, 1, 0, 1, INT32_MIN) } },
	{ "call 5", 1, { I(0x85, 0, 0, 0, 5) } },
	{ "call bpf_map_lookup_elem", 1, { I(0x85, 0, 0, 0, 1) } },
	{ "call ktime_get_ns", 1, { I(0x85, 0, 0, 0, 5) } },
	{ "call %r2", 1, { I(0x8d, 2, 0, 0, 0) } },
	{ "callx %r3", 1, { I(0x8d, 3, 0, 0, 0) } },
	{ "call local +4", 1, { I(0x85, 0, 1, 0, 4) } },
	{ "exit", 1, { I(0x95, 0, 0, 0, 0) } },
	/* labels, forward and backward, and the implicit "exit" target */
	{ "top: jne %r1, 0, out\nja top\nout:\nexit", 3,
	  { I(0x55, 1, 0, 1, 0), I(0x05, 0, 0, -2, 0), I(0x95, 0, 0, 0, 0) } },
	{ "jne %r1, 0, exit\nmov %r0, 1\nexit", 3,
	  { I(0x55, 1, 0, 1, 0), I(0xb7, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0) } },
	{ "call local f\nexit\nf: exit", 3,
	  { I(0x85, 0, 1, 0, 1), I(0x95, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0) } },
	{ "ja32 L\nL:\nexit", 2, { I(0x06, 0, 0, 0, 0), I(0x95, 0, 0, 0, 0) } },
	/* comments and blank lines */
	{ "# c\n\n  mov %r0, 1 # trailing\n// c++\nexit ; asm", 2,
	  { I(0xb7, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0) } },
	{ "mov r1, r2", 1, { I(0xbf, 1, 2, 0, 0) } },
	{ "mov %r0, 1\r\nexit\r\n", 2, { I(0xb7, 0, 0, 0, 1), I(0x95, 0, 0, 0, 0) } },
	{ "\tL1:\tjeq\t%r1 ,\t%r2 , L1", 1, { I(0x1d, 1, 2, -1, 0) } },
	{ "lddw %r2, func +1 7\nexit", 3,
	  { I(0x18, 2, 4, 0, 1), I(0, 0, 0, 0, 7), I(0x95, 0, 0, 0, 0) } },
};

static void test_encodings(void)
{
	for (size_t i = 0; i < sizeof(enc_cases) / sizeof(enc_cases[0]); i++) {
		const struct enc_case *c = &enc_cases[i];
		struct bpf_insn *out;
		size_t n;
		char err[256];
		int ret;

		T_CASE(c->text);
		ret = brt_asm(c->text, "t.s", &out, &n, err, sizeof(err));
		T_EQ_INT(0, ret);
		if (ret) {
			fprintf(stderr, "  error: %s\n", err);
			continue;
		}
		T_EQ_INT(c->n, n);
		for (size_t k = 0; k < n && k < c->n; k++) {
			if (memcmp(&out[k], &c->insn[k], sizeof(out[k]))) {
				T_FAIL("insn %zu: got %02x %u %u %d %d", k, out[k].code,
				       out[k].dst_reg, out[k].src_reg, out[k].off, out[k].imm);
			} else {
				T_OK();
			}
		}
		free(out);
	}
}

struct err_case {
	const char *text;
	int ret;
	const char *msg; /* expected substring, with the position */
};

static const struct err_case err_cases[] = {
	{ "or %r0, %r50\nexit", -EINVAL, "t.s:1:9: Invalid register '%r50'" },
	{ "exit\n  mov %r11, 1", -EINVAL, "t.s:2:7: Invalid register '%r11'" },
	{ "lock or [%r10-8]\nexit", -EINVAL, "t.s:1:1: Invalid number of operands for lock" },
	{ "lock\nexit", -EINVAL, "t.s:1:1: Invalid number of operands for lock" },
	{ "lock fetch\nexit", -EINVAL, "Invalid number of operands for lock" },
	{ "lock nand [%r1], %r2", -EINVAL, "t.s:1:1: Invalid mnemonic 'lock nand'" },
	{ "ldxq %r0, %r1\nexit", -EINVAL, "t.s:1:1: Invalid mnemonic 'ldxq'" },
	{ "ldxb %r0, %r1\nexit", -EINVAL, "t.s:1:11: Invalid memory operand '%r1'" },
	{ "ldxb %r0, [%r1+0x10000]", -EINVAL, "t.s:1:15: Invalid offset '+0x10000': out of 16" },
	{ "ldxb %r0, [%r1-32769]", -EINVAL, "out of 16-bit range" },
	{ "ldxb %r0, [%r1*2]", -EINVAL, "Invalid register '%r1*2'" },
	{ "mov32 %r0, 2147483648", -EINVAL, "t.s:1:12: Invalid immediate '2147483648': out of 32" },
	{ "mov32 %r0, 0x100000000", -EINVAL, "Invalid immediate '0x100000000': out of 32" },
	{ "mov32 %r0, -2147483649", -EINVAL, "out of 32-bit range" },
	{ "mov %r0, 12abc", -EINVAL, "t.s:1:10: Invalid immediate '12abc': not a number" },
	{ "lddw %r1, 0x10000000000000000", -EINVAL, "out of 64-bit range" },
	{ "lddw %r0\nexit", -EINVAL,
	  "t.s:1:1: Invalid number of operands for lddw: expected 2, got 1" },
	{ "exit %r0", -EINVAL, "Invalid number of operands for exit: expected 0, got 1" },
	{ "add %r1, 1, 2, 3, 4", -EINVAL, "Invalid number of operands for add" },
	{ "ja NOT_A_LABEL\nexit", -EINVAL, "t.s:1:4: Invalid label 'NOT_A_LABEL': not defined" },
	{ "ja 1abel", -EINVAL, "Invalid jump offset '1abel'" },
	{ "ja a-b", -EINVAL, "Invalid label 'a-b'" },
	{ "ja +32768", -EINVAL, "out of 16-bit range" },
	{ "x: exit\nx: exit", -EINVAL, "t.s:2:1: Duplicate label 'x' (first defined on line 1)" },
	{ "exit\n x: y: x: exit", -EINVAL,
	  "t.s:2:8: Duplicate label 'x' (first defined on line 2)" },
	{ "lddw %r1, map_foo 1", -EINVAL, "Invalid lddw operand 'map_foo 1'" },
	{ "", -EINVAL, "t.s:1:1: empty program: no instructions" },
	{ "# nothing\n\n", -EINVAL, "empty program" },
	{ "r3 = 0", -EINVAL, "t.s:1:1: Invalid mnemonic 'r3'" },
	{ "call local nowhere", -EINVAL, "Invalid label 'nowhere'" },
	{ "call nowhere", -EINVAL,
	  "t.s:1:6: Invalid helper 'nowhere' (a bpf-to-bpf call is 'call local LABEL')" },
	{ "call bpf_", -EINVAL, "Invalid helper 'bpf_'" },
	{ "call unspec", -EINVAL, "Invalid helper 'unspec'" },
	{ "stb [%r1-1], %r2", -EINVAL, "t.s:1:14: Invalid immediate '%r2': not a number" },
	/* malformed text of every kind: a message with a place, never a crash */
	{ "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz %r1", -EINVAL,
	  "t.s:1:1: Invalid mnemonic 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz'" },
	{ "lock fetch abcdefghijklmnopqrstuvwxyzabcdefghijklmnop [%r1], %r2", -EINVAL,
	  "t.s:1:12: Invalid mnemonic 'lock fetch abcdefghijklmnopqrstuvwxyzabcdefghijklmnop'" },
	{ "\xff\xfe\x01", -EINVAL, "t.s:1:1: Invalid mnemonic" },
	{ "ldxb %r0, [%r1+]", -EINVAL, "t.s:1:15: Invalid offset '+': not a number" },
	{ "ldxb %r0, []", -EINVAL, "t.s:1:12: Invalid register: operand is empty" },
	{ "ldxb %r0, [", -EINVAL, "t.s:1:11: Invalid memory operand '['" },
	{ "ldxb %r0, [%r1 8]", -EINVAL,
	  "t.s:1:16: Invalid memory operand '[%r1 8]': expected + or -" },
	{ "mov %r1,", -EINVAL, "t.s:1:9: Invalid immediate '': not a number" },
	{ "mov , 1", -EINVAL, "t.s:1:5: Invalid register: operand is empty" },
	{ "mov %r1, 0x", -EINVAL, "Invalid immediate '0x': not a number" },
	{ "mov %r1, --1", -EINVAL, "Invalid immediate '--1': not a number" },
	{ "mov %r01, 1", -EINVAL, "Invalid register '%r01'" },
	{ "lddw %r1, func", -EINVAL, "Invalid jump target: operand is empty" },
	{ "lddw %r1, map_fd", -EINVAL, "Invalid immediate '': not a number" },
	{ "lddw %r1, map_fd 1 2 3", -EINVAL, "Invalid immediate '2 3': not a number" },
	{ "call local", -EINVAL, "Invalid number of operands for call local: expected 1, got 0" },
	{ "jeq %r1, 1", -EINVAL, "t.s:1:1: Invalid number of operands for jeq: expected 3, got 2" },
	{ "jeq %r1, 1, 2, 3", -EINVAL, "Invalid number of operands for jeq: expected 3, got 4" },
	{ "ja32 +2147483648", -EINVAL, "Invalid jump offset '+2147483648': out of 32-bit range" },
	{ "exit\n\n\t  bogus", -EINVAL, "t.s:3:4: Invalid mnemonic 'bogus'" },
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *c = &err_cases[i];
		struct bpf_insn *out = (struct bpf_insn *)&out;
		size_t n = 99;
		char err[256] = "";

		T_CASE(c->text);
		T_EQ_INT(c->ret, brt_asm(c->text, "t.s", &out, &n, err, sizeof(err)));
		T_CONTAINS(c->msg, err);
		T_ASSERT(out == NULL && n == 0);
	}
}

static void test_public_api(void)
{
	struct bpf_insn *out;
	size_t n;
	char err[128];

	T_CASE("bpfrt_asm");
	errno = 0;
	T_EQ_INT(-EINVAL, bpfrt_asm("bogus", NULL, &out, &n, err, sizeof(err)));
	T_EQ_INT(EINVAL, errno);
	T_CONTAINS("<input>:1:1: Invalid mnemonic 'bogus'", err);
	T_EQ_INT(-EINVAL, bpfrt_asm(NULL, NULL, &out, &n, err, sizeof(err)));
	T_EQ_INT(0, bpfrt_asm("exit", NULL, &out, &n, NULL, 0));
	T_EQ_INT(1, n);
	free(out);
	/* a tiny error buffer truncates, never overflows */
	T_EQ_INT(-EINVAL, bpfrt_asm("bogus", "f", &out, &n, err, 4));
	T_EQ_STR("f:1", err);
}

static void test_too_long(void)
{
	size_t lines = BRT_ISA_MAX_INSNS / 2 + 1;
	char *text = malloc(lines * 16 + 1), *p = text;
	struct bpf_insn *out;
	size_t n;
	char err[128];

	T_CASE("too many instructions");
	if (!text) {
		T_FAIL("out of memory");
		return;
	}
	for (size_t i = 0; i < lines; i++)
		p += sprintf(p, "lddw %%r0, 1\n");
	T_EQ_INT(-E2BIG, brt_asm(text, "big.s", &out, &n, err, sizeof(err)));
	T_CONTAINS("big.s:500001:1: program has more than 1000000 instructions", err);
	/* exactly the limit is fine */
	text[(lines - 1) * 12] = 0;
	T_EQ_INT(0, brt_asm(text, "big.s", &out, &n, err, sizeof(err)));
	T_EQ_INT(BRT_ISA_MAX_INSNS, n);
	free(out);
	free(text);
}

/* A label further than a 16-bit offset reaches; the same distance is fine for ja32. */
static void test_far_label(void)
{
	size_t lines = 40000;
	char *text = malloc(lines * 5 + 64), *p;
	struct bpf_insn *out;
	size_t n;
	char err[160];

	T_CASE("far label");
	if (!text) {
		T_FAIL("out of memory");
		return;
	}
	p = text + sprintf(text, "ja   far\n");
	for (size_t i = 0; i < lines; i++)
		p += sprintf(p, "exit\n");
	sprintf(p, "far: exit\n");
	T_EQ_INT(-EINVAL, brt_asm(text, "far.s", &out, &n, err, sizeof(err)));
	T_CONTAINS("far.s:1:6: jump to label 'far' is 40000 instructions away, out of 16-bit "
		   "offset range", err);
	memcpy(text, "ja32", 4);
	T_EQ_INT(0, brt_asm(text, "far.s", &out, &n, err, sizeof(err)));
	T_EQ_INT(40000, out[0].imm);
	free(out);
	free(text);
}

static const char *conformance_dir(char *buf, size_t len)
{
	const char *env = getenv("BPFRT_CONFORMANCE_DIR");

	if (env && *env)
		return env;
	snprintf(buf, len, "%s/conformance", BPFRT_SHARED_DIR);
	return buf;
}

/* The program disassembled (asm style) and assembled again gives the same bytes. */
static void round_trip(const struct bpf_insn *insns, size_t n, const char *name)
{
	char *text = malloc(n * 80 + 1), err[256];
	struct bpf_insn *back;
	size_t pos = 0, m;

	if (!text) {
		T_FAIL("out of memory");
		return;
	}
	text[0] = 0;
	for (size_t i = 0; i < n;) {
		int slots = brt_disasm_insn(&insns[i], n - i, BRT_DISASM_ASM, text + pos, 79);

		if (slots < 1) {
			T_FAIL("%s: insn %zu: %s", name, i, text + pos);
			free(text);
			return;
		}
		pos += strlen(text + pos);
		text[pos++] = '\n';
		text[pos] = 0;
		i += (size_t)slots;
	}
	if (brt_asm(text, name, &back, &m, err, sizeof(err))) {
		T_FAIL("disassembly does not assemble: %s", err);
	} else {
		T_ASSERT(m == n && !memcmp(back, insns, n * sizeof(*insns)));
		free(back);
	}
	free(text);
}

/* Every program of the suite assembles, and round-trips through the disassembler; where a
 * file also has a raw section (lddw.data), the bytes are equal. */
static void test_conformance_files(void)
{
	char dirbuf[4096], path[8192], err[512];
	const char *base = conformance_dir(dirbuf, sizeof(dirbuf));
	struct dirent *e;
	DIR *d;
	int files = 0, raw_checked = 0;

	snprintf(path, sizeof(path), "%s/tests", base);
	d = opendir(path);
	if (!d) {
		printf("skipped: conformance file checks (suite not found at %s)\n", path);
		return;
	}
	while ((e = readdir(d))) {
		struct datafile df;
		struct bpf_insn *out;
		size_t n, len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 5, ".data"))
			continue;
		snprintf(path, sizeof(path), "%s/tests/%s", base, e->d_name);
		T_CASE(e->d_name);
		if (datafile_load(path, &df, err, sizeof(err))) {
			T_FAIL("load: %s", err);
			continue;
		}
		files++;
		T_ASSERT(df.asm_text != NULL);
		T_ASSERT(df.has_result || df.has_error);
		if (df.asm_text && brt_asm(df.asm_text, e->d_name, &out, &n, err, sizeof(err))) {
			T_FAIL("%s", err);
		} else if (df.asm_text) {
			T_OK();
			round_trip(out, n, e->d_name);
			if (df.raw) {
				raw_checked++;
				T_EQ_INT(df.raw_len, n * sizeof(*out));
				T_ASSERT(df.raw_len == n * sizeof(*out) &&
					 !memcmp(df.raw, out, df.raw_len));
			}
			free(out);
		}
		datafile_free(&df);
	}
	closedir(d);
	printf("%d conformance files assembled, %d compared with their raw section\n", files,
	       raw_checked);
	T_CASE("conformance file count");
	T_ASSERT(files >= 300);
	T_ASSERT(raw_checked >= 1);
}

int main(void)
{
	test_encodings();
	test_errors();
	test_public_api();
	test_too_long();
	test_far_label();
	test_conformance_files();
	return t_done();
}
