/* tests/oracle_load.h - the kernel-differential oracles' program load.  One BPF_PROG_LOAD of
 * attr through either side's bpf() (the kernel's syscall or bpfrt_bpf()) with a level-1 log
 * in logbuf; the caller compares what it keeps: the fd (left open), errno and the verdict's
 * line, the last log line before "processed ..." (or the last line). */
#ifndef BPFRT_TESTS_ORACLE_LOAD_H
#define BPFRT_TESTS_ORACLE_LOAD_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

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

#endif
