/* transcript.h - the kernel as the oracle, by transcript: a test's script runs once on the
 * kernel's bpf() and once on bpfrt_bpf(), writing one line per step (verdict, errno, first
 * error line, result), and compare_transcripts() checks the two line by line, one test case
 * per line, so a difference names the step.  Shared by the map and helper oracles
 * (tests/maps/test_*_oracle.c); include after harness.h.
 */
#ifndef BPFRT_TESTS_TRANSCRIPT_H
#define BPFRT_TESTS_TRANSCRIPT_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"

/* the two sides: kernel_bpf and bpfrt_bpf have this type */
typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static inline int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

#ifndef TRANSCRIPT_SIZE
#define TRANSCRIPT_SIZE (1 << 17)
#endif

struct transcript {
	char text[TRANSCRIPT_SIZE];
	size_t len;
	unsigned steps; /* what the script counts as a step */
	unsigned says;  /* calls of say() */
};

/* append to the transcript; a full one keeps its first TRANSCRIPT_SIZE bytes, which then
 * differ from the other side's only if the scripts do */
static inline __attribute__((format(printf, 2, 3))) void say(struct transcript *t,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t->len += (size_t)vsnprintf(t->text + t->len, sizeof(t->text) - t->len, fmt, ap);
	va_end(ap);
	if (t->len >= sizeof(t->text))
		t->len = sizeof(t->text) - 1;
	t->says++;
}

/* MAP_CREATE with the fields these scripts vary: the fd or -errno */
static inline int create_map(sys_fn sys, uint32_t type, uint32_t key, uint32_t value,
			     uint32_t max, uint32_t flags, uint64_t extra)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	a.map_extra = extra;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* OBJ_GET_INFO_BY_FD of map fd into *info (zeroed first): 0, or -errno with errno set */
static inline int map_info(sys_fn sys, int fd, struct bpf_map_info *info)
{
	union bpf_attr a;

	memset(info, 0, sizeof(*info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info = (uint64_t)(uintptr_t)info;
	a.info.info_len = sizeof(*info);
	return sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0 ? -errno : 0;
}

/* one element command (lookup, update, delete, get_next_key, push/peek/pop): 0 or -errno */
static inline int elem(sys_fn sys, int cmd, int fd, const void *key, void *value,
		       uint64_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	a.flags = flags;
	return sys(cmd, &a, sizeof(a)) < 0 ? -errno : 0;
}

/* The attr of a GPL program's BPF_PROG_LOAD: type, expected attach type, instructions. */
static inline void prog_attr(union bpf_attr *a, uint32_t type, uint32_t attach,
			     const struct bpf_insn *insns, size_t n)
{
	memset(a, 0, sizeof(*a));
	a->prog_type = type;
	a->expected_attach_type = attach;
	a->insns = (uint64_t)(uintptr_t)insns;
	a->insn_cnt = (uint32_t)n;
	a->license = (uint64_t)(uintptr_t)"GPL";
}

/* BPF_PROG_LOAD of a with a log of level level in log (size bytes): the fd or -errno. */
static inline int prog_load_log(sys_fn sys, union bpf_attr *a, char *log, uint32_t size,
				uint32_t level)
{
	int fd;

	a->log_buf = (uint64_t)(uintptr_t)log;
	a->log_size = size;
	a->log_level = level;
	log[0] = 0;
	fd = sys(BPF_PROG_LOAD, a, sizeof(*a));
	return fd < 0 ? -errno : fd;
}

/* What a refused load's log says: its last line that is not a statistic ("processed",
 * "verification time", "stack depth"), as a pointer into log (the line ends at the next
 * '\n' or NUL: print it with "%.*s" and line_len()); *prev, when prev is not NULL, gets
 * the candidate before it: the line before, the log's start when it is the first, NULL
 * when there is none. */
static inline const char *log_error_line(const char *log, const char **prev)
{
	const char *line = log, *before = NULL;

	for (const char *p = log; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
		if (strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
		    strncmp(p, "stack depth", 11) && *p != '\n') {
			before = line;
			line = p;
		}
	if (prev)
		*prev = before;
	return line;
}

static inline int line_len(const char *line)
{
	return (int)strcspn(line, "\n");
}

/* says "<what>: load <err> <the error line of log>" (without "<what>: " when what is
 * NULL) and a newline, in one say() */
static inline void say_load_error(struct transcript *t, const char *what, int err,
				  const char *log)
{
	const char *line = log_error_line(log, NULL);

	say(t, "%s%sload %d %.*s\n", what ? what : "", what ? ": " : "", err, line_len(line),
	    line);
}

/* BPF_PROG_LOAD of a GPL program (type, expected attach type) at log level 1: the fd, or
 * -1 after saying "<what>: load <-errno> <error line>" (log_error_line()).  On success
 * nothing is said but "<what>: ": the caller adds the result. */
static inline int load_prog_attach(sys_fn sys, struct transcript *t, const char *what,
				   uint32_t type, uint32_t attach, const struct bpf_insn *insns,
				   uint32_t n)
{
	static char log[65536];
	union bpf_attr a;
	int fd;

	prog_attr(&a, type, attach, insns, n);
	fd = prog_load_log(sys, &a, log, sizeof(log), 1);
	t->steps++;
	say(t, "%s: ", what);
	if (fd >= 0)
		return fd;
	say_load_error(t, NULL, fd, log);
	return -1;
}

static inline int load_prog(sys_fn sys, struct transcript *t, const char *what, uint32_t type,
			    const struct bpf_insn *insns, uint32_t n)
{
	return load_prog_attach(sys, t, what, type, 0, insns, n);
}

/* A program that is only loaded, not run: "<what>: ok", or the load's error as above. */
static inline void load_verdict(sys_fn sys, struct transcript *t, const char *what,
				uint32_t type, uint32_t attach, const struct bpf_insn *insns,
				uint32_t n)
{
	int fd = load_prog_attach(sys, t, what, type, attach, insns, n);

	if (fd >= 0) {
		say(t, "ok\n");
		close(fd);
	}
}

/* MAP_CREATE, said as "create <what>: -errno", or on success with what OBJ_GET_INFO_BY_FD
 * reports of the map (type, flags, sizes); the map is closed again. */
static inline void say_create(sys_fn sys, struct transcript *t, const char *what, uint32_t type,
			      uint32_t key, uint32_t value, uint32_t max, uint32_t flags)
{
	int fd = create_map(sys, type, key, value, max, flags, 0);
	struct bpf_map_info info;

	if (fd < 0) {
		say(t, "create %s: %d\n", what, fd);
		return;
	}
	if (map_info(sys, fd, &info))
		say(t, "create %s: ok, info %d\n", what, -errno);
	else
		say(t, "create %s: ok, type %u flags %#x key %u value %u max %u\n", what, info.type,
		    info.map_flags, info.key_size, info.value_size, info.max_entries);
	close(fd);
}

/* A table of MAP_CREATE cases, each said as say_create() says it. */
struct create_case {
	const char *what;
	uint32_t type, key, value, max, flags;
};

static inline void say_creates(sys_fn sys, struct transcript *t, const struct create_case *c,
			       size_t n)
{
	for (size_t i = 0; i < n; i++)
		say_create(sys, t, c[i].what, c[i].type, c[i].key, c[i].value, c[i].max,
			   c[i].flags);
}

/* One part of an oracle's script, run on one side's bpf() into that side's transcript. */
typedef void (*script_fn)(sys_fn sys, struct transcript *t);

/* The oracles' run: each part of the script (a list ending in NULL) on the kernel's bpf()
 * into k, then on bpfrt's into b, with $BPFRT_FS a fresh directory /tmp/bpfrt-TAG-XXXXXX
 * (removed after, when the script left it empty).  -1 when it cannot be made. */
static inline int transcript_run(const char *tag, const script_fn *parts, struct transcript *k,
				 struct transcript *b)
{
	char tmpdir[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bpfrt-%s-XXXXXX", tag);
	if (!mkdtemp(tmpdir))
		return -1;
	setenv("BPFRT_FS", tmpdir, 1);
	for (; *parts; parts++) {
		(*parts)(kernel_bpf, k);
		(*parts)(bpfrt_bpf, b);
	}
	rmdir(tmpdir);
	return 0;
}

/* The lines where the two transcripts differ, the first show of them printed with their
 * line numbers: for oracles that report one verdict rather than a case per line. */
static inline unsigned transcript_diffs(const struct transcript *k, const struct transcript *b,
					unsigned show)
{
	const char *kp = k->text, *bp = b->text;
	unsigned line = 1, diffs = 0;

	for (; *kp || *bp; line++) {
		size_t kl = strcspn(kp, "\n"), bl = strcspn(bp, "\n");

		if ((kl != bl || memcmp(kp, bp, kl)) && diffs++ < show)
			printf("line %u:\n  kernel: %.*s\n  bpfrt:  %.*s\n", line, (int)kl, kp,
			       (int)bl, bp);
		kp += kl + (kp[kl] == '\n');
		bp += bl + (bp[bl] == '\n');
	}
	return diffs;
}

/* The verdict of an oracle that reports one (rather than a case per line): kn and bn,
 * what each side counted, equal and no line differing (the first show printed); with
 * $BPFRT_SHOW the kernel's transcript on stdout. */
static inline void transcript_verdict(const char *what, unsigned kn, unsigned bn,
				      const struct transcript *k, const struct transcript *b,
				      unsigned show)
{
	unsigned diffs;

	T_EQ_INT(kn, bn);
	diffs = transcript_diffs(k, b, show);
	if (getenv("BPFRT_SHOW"))
		fputs(k->text, stdout);
	printf("%s: %u steps each side, %u lines differ\n", what, kn, diffs);
	T_EQ_INT(0, diffs);
}

/* one test case per line of the kernel's transcript, named by its first 150 characters */
static inline void compare_transcripts(const struct transcript *k, const struct transcript *b)
{
	const char *kp = k->text, *bp = b->text;

	while (*kp || *bp) {
		size_t kl = strcspn(kp, "\n"), bl = strcspn(bp, "\n");
		char name[160];

		snprintf(name, sizeof(name), "%.*s", (int)(kl < 150 ? kl : 150), kp);
		T_CASE(name);
		if (kl == bl && !memcmp(kp, bp, kl))
			T_OK();
		else
			T_FAIL("kernel: %.*s\n     bpfrt:  %.*s", (int)kl, kp, (int)bl, bp);
		kp += kl + (kp[kl] == '\n');
		bp += bl + (bp[bl] == '\n');
	}
}

#endif
