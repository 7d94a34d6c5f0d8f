/* tests/oracle_load.h - what the kernel-differential oracles do on either side's bpf() (the
 * kernel's syscall, oracle_kernel_bpf(), or bpfrt_bpf()): one BPF_PROG_LOAD with a level-1
 * log, and one BPF_PROG_TEST_RUN of the loaded program; the caller compares what each
 * side gave. */
#ifndef BPFRT_TESTS_ORACLE_LOAD_H
#define BPFRT_TESTS_ORACLE_LOAD_H

#include <errno.h>
#include <stdio.h>
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

#endif
