/* load_sides.h - one side of a loader oracle (test_autocreate_oracle.c,
 * test_data_past_end_oracle.c): a program of tests/progs loaded alone through libbpf,
 * through bpfrt's loader into the kernel, or into bpfrt, with its errno, its log's last
 * lines and the test run's return value on a zeroed 64-byte packet. */
#ifndef BPFRT_TESTS_OBJECT_LOAD_SIDES_H
#define BPFRT_TESTS_OBJECT_LOAD_SIDES_H

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "bpfrt.h"

#define LOG_SIZE (1u << 20)

struct side {
	int err;        /* 0 or the load's errno */
	int retval;     /* the test run's, when loaded */
	char log[4096]; /* the level-1 log's last lines */
};

static inline void tail_of(char *dst, size_t n, const char *log)
{
	size_t len = strlen(log), from = len >= n ? len - (n - 1) : 0;

	memcpy(dst, log + from, len - from);
	dst[len - from] = 0;
}

static inline int run_kernel(int fd)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -errno;
	return (int)a.test.retval;
}

static inline int run_bpfrt(int fd)
{
	unsigned char pkt[64] = { 0 };
	struct bpfrt_test_run_opts o = { .sz = sizeof(o), .data_in = pkt,
					 .data_size_in = sizeof(pkt) };
	int err = bpfrt_prog_test_run_opts(fd, &o);

	return err ? err : (int)o.retval;
}

/* The log bpfrt's loader kept, as libbpf's log buffer holds it: the loader's own line
 * first ("prog 'x' (...): BPF_PROG_LOAD: ..."), then the verifier's log. */
static inline const char *verifier_log_of(const struct bpfrt_object *obj)
{
	const char *log = bpfrt_object_log(obj) ? bpfrt_object_log(obj) : "";

	if (!strncmp(log, "prog '", 6))
		log = strchr(log, '\n') ? strchr(log, '\n') + 1 : "";
	return log;
}

#endif
