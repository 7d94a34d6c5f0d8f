/* harness.h - the test harness: assertion macros that print the case, the expected and
 * the actual value, a pass/fail counter, and the skip convention (exit 77 after printing
 * "skipped: <reason>").  No external framework.
 */
#ifndef BPFRT_TESTS_HARNESS_H
#define BPFRT_TESTS_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed;
static int t_passed;
static const char *t_case = "";

#define T_CASE(name) (t_case = (name))

#define T_FAIL(...)                                                                    \
	do {                                                                           \
		fprintf(stderr, "FAIL %s:%d [%s]: ", __FILE__, __LINE__, t_case);      \
		fprintf(stderr, __VA_ARGS__);                                          \
		fputc('\n', stderr);                                                   \
		t_failed++;                                                            \
	} while (0)

#define T_OK() (t_passed++)

#define T_ASSERT(cond)                                                                 \
	do {                                                                           \
		if (cond)                                                              \
			T_OK();                                                        \
		else                                                                   \
			T_FAIL("assertion failed: %s", #cond);                         \
	} while (0)

#define T_EQ_U64(expected, actual)                                                    \
	do {                                                                           \
		uint64_t t_e = (uint64_t)(expected), t_a = (uint64_t)(actual);         \
		if (t_e == t_a)                                                        \
			T_OK();                                                        \
		else                                                                   \
			T_FAIL("%s: expected 0x%" PRIx64 ", got 0x%" PRIx64, #actual, t_e, \
			       t_a);                                                   \
	} while (0)

#define T_EQ_INT(expected, actual)                                                    \
	do {                                                                           \
		long long t_e = (long long)(expected), t_a = (long long)(actual);      \
		if (t_e == t_a)                                                        \
			T_OK();                                                        \
		else                                                                   \
			T_FAIL("%s: expected %lld, got %lld", #actual, t_e, t_a);      \
	} while (0)

#define T_EQ_STR(expected, actual)                                                    \
	do {                                                                           \
		const char *t_e = (expected), *t_a = (actual);                         \
		if (t_a && strcmp(t_e, t_a) == 0)                                      \
			T_OK();                                                        \
		else                                                                   \
			T_FAIL("%s: expected \"%s\", got \"%s\"", #actual, t_e,        \
			       t_a ? t_a : "(null)");                                  \
	} while (0)

#define T_CONTAINS(needle, haystack)                                                  \
	do {                                                                           \
		const char *t_n = (needle), *t_h = (haystack);                         \
		if (t_h && strstr(t_h, t_n))                                           \
			T_OK();                                                        \
		else                                                                   \
			T_FAIL("%s: expected to contain \"%s\", got \"%s\"", #haystack, t_n, \
			       t_h ? t_h : "(null)");                                  \
	} while (0)

/* Print "skipped: reason" and exit with ctest's skip code. */
#define T_SKIP(...)                                                                    \
	do {                                                                           \
		printf("skipped: ");                                                   \
		printf(__VA_ARGS__);                                                   \
		printf("\n");                                                          \
		exit(77);                                                              \
	} while (0)

/* Every test ends with this: the plain summary line, exit status 1 on any failure.
 * A test that checked nothing fails: it cannot have tested anything. */
static inline int t_done(void)
{
	printf("%d passed, %d failed\n", t_passed, t_failed);
	if (t_passed + t_failed == 0) {
		fprintf(stderr, "FAIL: no assertion ran\n");
		return 1;
	}
	return t_failed ? 1 : 0;
}

#endif
