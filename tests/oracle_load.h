/* tests/oracle_load.h - what the kernel-differential oracles do on either side's bpf() (the
 * kernel's syscall, oracle_kernel_bpf(), or bpfrt_bpf()): one BPF_PROG_LOAD with a level-1
 * log, and one BPF_PROG_TEST_RUN of the loaded program (oracle_load_run() does both into a
 * struct oracle_res); with harness.h included first, oracle_compare() checks that the
 * two sides' results agree. */
#ifndef BPFRT_TESTS_ORACLE_LOAD_H
#define BPFRT_TESTS_ORACLE_LOAD_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

/* the kernel's side */
static inline int oracle_kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* attr loaded with logbuf for a level-1 log: the fd (left open), errno in *err and the
 * verdict's line in last, the last log line before "processed ..." (or the last line) */
static inline int oracle_load(bpf_fn bpf, union bpf_attr *attr, char *logbuf, size_t logsz,
			      int *err, char *last, size_t lastsz)
{
	char *line, *save;
	int fd;

	attr->log_buf = (uintptr_t)logbuf;
	attr->log_size = (uint32_t)logsz;
	attr->log_level = 1;
	logbuf[0] = 0;
	fd = bpf(BPF_PROG_LOAD, attr, sizeof(*attr));
	*err = fd < 0 ? errno : 0;
	last[0] = 0;
	for (line = strtok_r(logbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "processed ", 10))
			break;
		snprintf(last, lastsz, "%s", line);
	}
	return fd;
}

/* One test run of prog_fd on data (NULL: none, for syscall programs, which take no
 * repeat count either): errno in *run_err (0: ran) and the program's return value in
 * *retval */
static inline void oracle_test_run(bpf_fn bpf, int prog_fd, const void *data, uint32_t size,
				   int *run_err, uint32_t *retval)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)prog_fd;
	if (data) {
		attr.test.data_in = (uintptr_t)data;
		attr.test.data_size_in = size;
		attr.test.repeat = 1;
	}
	*run_err = bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
	*retval = attr.test.retval;
}

/* What one side gave for one program */
struct oracle_res {
	int fd;          /* the load's result (the program is closed after its run) */
	int err;         /* the load's errno, 0 if it loaded */
	int run_err;     /* the test run's errno, 0 if it ran, -1 if not run */
	uint32_t retval; /* the test run's return value (0 if not run) */
	char last[256];  /* a refusal's error line (oracle_load()) */
};

/* attr loaded on bpf into r; if it loads and run is set, test-run once on data (see
 * oracle_test_run()); then closed */
static inline void oracle_load_run(bpf_fn bpf, union bpf_attr *attr, int run, const void *data,
				   uint32_t size, struct oracle_res *r)
{
	static char logbuf[1 << 20];

	r->fd = oracle_load(bpf, attr, logbuf, sizeof(logbuf), &r->err, r->last,
			    sizeof(r->last));
	r->run_err = -1;
	r->retval = 0;
	if (r->fd < 0)
		return;
	if (run)
		oracle_test_run(bpf, r->fd, data, size, &r->run_err, &r->retval);
	close(r->fd);
}

/* attr loaded once more with a level-2 log into log (size bytes): the whole walk's log,
 * whatever the verdict (the program is closed) */
static inline void oracle_load_log2(bpf_fn bpf, union bpf_attr *attr, char *log, uint32_t size)
{
	int fd;

	attr->log_buf = (uintptr_t)log;
	attr->log_size = size;
	attr->log_level = 2;
	log[0] = 0;
	fd = bpf(BPF_PROG_LOAD, attr, sizeof(*attr));
	if (fd >= 0)
		close(fd);
}

#if defined(BPFRT_TESTS_HARNESS_H) && defined(BPFRT_TESTS_LOG_LINES_H)
/* The kernel's and bpfrt's level-2 logs of the case named name line by line, a map lddw's
 * operand normalised (log_lines.h; both split in place): 1 when identical, else a failure
 * naming the first line that differs and 0 */
static inline int oracle_compare_logs(const char *name, char *klog, char *blog)
{
	struct lines kl, bl;
	size_t i;
	int same;

	split(klog, &kl);
	split(blog, &bl);
	for (i = 0; i < kl.n && i < bl.n && !strcmp(kl.v[i], bl.v[i]); i++)
		;
	same = i == kl.n && i == bl.n;
	if (!same)
		T_FAIL("%s: level-2 logs differ at line %zu: kernel '%s', bpfrt '%s'", name, i + 1,
		       i < kl.n ? kl.v[i] : "(end)", i < bl.n ? bl.v[i] : "(end)");
	free(kl.v);
	free(bl.v);
	return same;
}
#endif

#ifdef BPFRT_TESTS_HARNESS_H
/* what oracle_compare() compares besides the load: nothing, the run's errno, or its errno
 * and return value */
enum oracle_cmp { ORACLE_CMP_LOAD, ORACLE_CMP_RUN_ERR, ORACLE_CMP_RUN };

/* Checks that the kernel's k and bpfrt's b agree for the case named name: verdict, errno,
 * a refusal's error line and, when cmp asks and both ran, the run.  1 when runs were
 * compared, else 0.  With the environment variable dump set, prints both sides. */
static inline int oracle_compare(const char *name, const struct oracle_res *k,
				 const struct oracle_res *b, enum oracle_cmp cmp, const char *dump)
{
	int ran = k->fd >= 0 && b->fd >= 0 && cmp != ORACLE_CMP_LOAD && k->run_err != -1;

	if (dump && getenv(dump))
		fprintf(stderr, "%s: kernel %d '%s' run %d/%d | bpfrt %d '%s' run %d/%d\n", name,
			k->err, k->last, k->run_err, (int32_t)k->retval, b->err, b->last,
			b->run_err, (int32_t)b->retval);
	T_EQ_INT(k->fd >= 0, b->fd >= 0);
	T_EQ_INT(k->err, b->err);
	if (k->fd < 0 && strcmp(k->last, b->last))
		T_FAIL("%s: error line: kernel '%s', bpfrt '%s'", name, k->last, b->last);
	if (ran) {
		T_EQ_INT(k->run_err, b->run_err);
		if (cmp == ORACLE_CMP_RUN)
			T_EQ_INT((int32_t)k->retval, (int32_t)b->retval);
	}
	return ran;
}
#endif

#endif
