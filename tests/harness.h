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
#ifdef _GNU_SOURCE /* the project's flags; api.opts_clang builds test_opts.c with plain C11 */
#include <ftw.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

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

/* Scratch directories (a $BPFRT_FS of its own per test, say): made from a mkdtemp()
 * template, changed in place, and removed with everything in them when the process that
 * made them exits by exit(), a return from main or T_SKIP, whatever the assertions said
 * (a fork's child that exits leaves them alone).  A bpfrt directory always holds files
 * (.bpfrt-ids, pins, links directories), so an rmdir() at the end of main is not enough,
 * and a failure path that returns early skipped it. */
#ifdef _GNU_SOURCE
#define T_SCRATCH_MAX 8
struct t_scratch {
	pid_t owner;
	int n;
	char dir[T_SCRATCH_MAX][128];
};

static inline struct t_scratch *t_scratch_state(void)
{
	static struct t_scratch s;

	return &s;
}

static inline int t_scratch_rm1(const char *path, const struct stat *st, int flag,
				struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static inline void t_scratch_rm_all(void)
{
	struct t_scratch *s = t_scratch_state();

	if (getpid() != s->owner)
		return;
	for (int i = 0; i < s->n; i++)
		nftw(s->dir[i], t_scratch_rm1, 16, FTW_DEPTH | FTW_PHYS);
	s->n = 0;
}

/* mkdtemp(tmpl) and remember it for removal at exit: tmpl, or NULL (errno set). */
static inline char *t_scratch_dir(char *tmpl)
{
	struct t_scratch *s = t_scratch_state();

	if (s->n == T_SCRATCH_MAX || strlen(tmpl) >= sizeof(s->dir[0]) || !mkdtemp(tmpl))
		return NULL;
	if (!s->n && !s->owner)
		atexit(t_scratch_rm_all);
	s->owner = getpid();
	snprintf(s->dir[s->n++], sizeof(s->dir[0]), "%s", tmpl);
	return tmpl;
}

#define T_NOBODY 65534

/* uid/gid 65534, no supplementary group; the uid change drops every capability.  0, or
 * nonzero when a step failed or the process is still root. */
static inline int t_become_nobody(void)
{
	return setgroups(0, NULL) || setresgid(T_NOBODY, T_NOBODY, T_NOBODY) ||
	       setresuid(T_NOBODY, T_NOBODY, T_NOBODY) || !geteuid();
}

/* Run fn in a child, which writes its answers (len bytes) to a pipe: 0 and the answers,
 * or the child's exit status (1 when it wrote too little). */
static inline int t_in_child(int (*fn)(int out), void *buf, size_t len)
{
	int p[2], st = 0, got;
	pid_t pid;

	fflush(stdout);
	if (pipe(p))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(fn(p[1]));
	}
	close(p[1]);
	got = pid > 0 && read(p[0], buf, len) == (ssize_t)len;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return st ? st : !got;
}
#endif

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
