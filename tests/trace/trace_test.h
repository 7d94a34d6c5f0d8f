/* trace_test.h - shared pieces of the tracing tests: load an assembly program through
 * bpfrt (or, as root, the kernel), run a raw-tracepoint program on u64 arguments, and a
 * private $BPFRT_FS so the trace pipe and objects of one test never meet another's.
 */
#ifndef BPFRT_TESTS_TRACE_TRACE_TEST_H
#define BPFRT_TESTS_TRACE_TRACE_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"

/* Assemble text and load it as type with licence lic; returns the fd or -errno.  The
 * verifier log lands in log (may be NULL). */
static inline int tt_load(uint32_t type, const char *lic, const char *text, char *log,
			  size_t loglen)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .log_level = log ? 1 : 0,
		   .log_size = log ? (uint32_t)loglen : 0, .log_buf = log);
	struct bpf_insn *insns;
	char err[256];
	size_t n;
	int fd;

	if (log)
		log[0] = 0;
	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "asm: %s\n", err);
		return -EINVAL;
	}
	fd = bpfrt_prog_load((enum bpf_prog_type)type, "t", lic, insns, n, &o);
	free(insns);
	return fd;
}

/* The same program through the real bpf(2); returns the fd or -errno. */
static inline int tt_kload(uint32_t type, const char *lic, const char *text, char *log,
			   size_t loglen)
{
	union bpf_attr a;
	struct bpf_insn *insns;
	char err[256];
	size_t n;
	int fd;

	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err)))
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)lic;
	if (log) {
		log[0] = 0;
		a.log_buf = (uint64_t)(uintptr_t)log;
		a.log_size = (uint32_t)loglen;
		a.log_level = 1;
	}
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fd = -errno;
	free(insns);
	return fd;
}

/* BPF_PROG_TEST_RUN of a raw tracepoint program on nargs u64 arguments. */
static inline int tt_run(int fd, const uint64_t *args, unsigned nargs, uint32_t *retval)
{
	BPFRT_OPTS(bpfrt_test_run_opts, o, .ctx_in = args, .ctx_size_in = nargs * 8);
	int err;

	if (!nargs)
		o.ctx_in = NULL;
	err = bpfrt_prog_test_run_opts(fd, &o);
	*retval = o.retval;
	return err;
}

/* A private bpffs directory under /tmp for this test process. */
static inline void tt_private_fs(const char *name)
{
	static char dir[256];

	/* a fresh directory: one named by the pid alone could be a stale one left by a killed
	 * run of the same pid, whose pins make this run's pins fail with EEXIST */
	snprintf(dir, sizeof(dir), "/tmp/bpfrt-test-%s-XXXXXX", name);
	if (!mkdtemp(dir))
		snprintf(dir, sizeof(dir), "/tmp/bpfrt-test-%s-%d", name, (int)getpid());
	setenv("BPFRT_FS", dir, 1);
}

static inline void tt_cleanup_fs(void)
{
	char cmd[400];
	const char *dir = getenv("BPFRT_FS");

	if (dir && !strncmp(dir, "/tmp/bpfrt-test-", 16)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
}

#endif
