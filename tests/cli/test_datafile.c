/* test_datafile.c - the .data file reader (tools/bpfrt/datafile.c): sections, the two raw forms, line
 * numbers kept for the assembler, long lines, a last line without newline, bad input. */
#include <errno.h>
#include <unistd.h>

#include "datafile.h"
#include "harness.h"

static int load_text(const char *text, struct datafile *df, char *err, size_t errlen)
{
	char path[] = "/tmp/bpfrt-datafile-XXXXXX";
	int fd = mkstemp(path), ret;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		snprintf(err, errlen, "cannot write %s", path);
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	ret = datafile_load(path, df, err, errlen);
	unlink(path);
	return ret;
}

static void test_sections(void)
{
	static const char text[] = "# comment\n"
				   "-- asm\n"
				   "mov %r0, 1\n"
				   "exit\n"
				   "-- mem\n"
				   "00 01 02\n"
				   "ff # trailing\n"
				   "-- c\n"
				   "int x-- = 0;\n"
				   "-- result\n"
				   "0x1122334455667788\n"
				   "-- no register offset\n"
				   "whatever\n"
				   "-- raw\n"
				   "0x5566778800000018\n"
				   "b7 00 00 00 01 00 00 00\n"
				   "-- error\n"
				   "\n"
				   "  Invalid register  ";
	struct datafile df;
	char err[256];

	T_CASE("all sections");
	T_EQ_INT(0, load_text(text, &df, err, sizeof(err)));
	T_EQ_STR("\n\nmov %r0, 1\nexit\n", df.asm_text);
	T_EQ_INT(4, df.mem_len);
	T_ASSERT(df.mem && !memcmp(df.mem, "\x00\x01\x02\xff", 4));
	T_ASSERT(df.has_result);
	T_EQ_U64(0x1122334455667788ull, df.result);
	T_EQ_INT(16, df.raw_len);
	T_ASSERT(df.raw && !memcmp(df.raw, "\x18\x00\x00\x00\x88\x77\x66\x55"
					   "\xb7\x00\x00\x00\x01\x00\x00\x00", 16));
	T_ASSERT(df.has_error);
	T_EQ_STR("Invalid register", df.error);
	datafile_free(&df);
}

static void test_long_mem_line(void)
{
	size_t bytes = 5000;
	char *text = malloc(bytes * 3 + 64), *p;
	struct datafile df;
	char err[256];
	int ok = 1;

	T_CASE("mem line longer than any fixed buffer");
	if (!text) {
		T_FAIL("out of memory");
		return;
	}
	p = text + sprintf(text, "-- asm\nexit\n-- mem\n");
	for (size_t i = 0; i < bytes; i++)
		p += sprintf(p, "%02zx ", i & 0xff);
	sprintf(p, "\n-- result\n7\n");
	T_EQ_INT(0, load_text(text, &df, err, sizeof(err)));
	T_EQ_INT(bytes, df.mem_len);
	for (size_t i = 0; i < df.mem_len && i < bytes; i++)
		ok &= df.mem[i] == (uint8_t)i;
	T_ASSERT(ok);
	T_EQ_U64(7, df.result);
	T_ASSERT(!df.has_error && df.error == NULL);
	datafile_free(&df);
	free(text);
}

struct bad_case {
	const char *text;
	const char *err;
};

static const struct bad_case bad_cases[] = {
	{ "-- mem\n00 0g\n", "line 2: bad hex token '0g'" },
	{ "-- raw\n123\n", "line 2: bad hex token '123'" },
	{ "-- result\n0x12z\n", "line 2: bad result '0x12z'" },
	{ "-- result\n99999999999999999999999\n", "line 2: bad result" },
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct datafile df;
		char err[256] = "";

		T_CASE(bad_cases[i].text);
		T_EQ_INT(-EINVAL, load_text(bad_cases[i].text, &df, err, sizeof(err)));
		T_CONTAINS(bad_cases[i].err, err);
		T_ASSERT(!df.asm_text && !df.raw && !df.mem && !df.error);
	}
	{
		struct datafile df;
		char err[256] = "";

		T_CASE("missing file");
		T_EQ_INT(-ENOENT, datafile_load("/nonexistent/x.data", &df, err, sizeof(err)));
		T_CONTAINS("/nonexistent/x.data: ", err);
	}
}

static void test_empty(void)
{
	struct datafile df;
	char err[64];

	T_CASE("no sections");
	T_EQ_INT(0, load_text("# only a comment\n", &df, err, sizeof(err)));
	T_ASSERT(!df.asm_text && !df.raw && !df.mem && !df.has_result && !df.has_error);
	datafile_free(&df);
	T_CASE("empty asm section");
	T_EQ_INT(0, load_text("-- asm\n-- result\n1\n", &df, err, sizeof(err)));
	T_EQ_STR("\n", df.asm_text);
	datafile_free(&df);
}

int main(void)
{
	test_sections();
	test_long_mem_line();
	test_bad();
	test_empty();
	return t_done();
}
