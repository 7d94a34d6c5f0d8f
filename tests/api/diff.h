/* diff.h - the differential harness for bpf(): the same case runs through a function
 * pointer that is either bpfrt_bpf() or, as root, the real syscall(__NR_bpf), and the
 * results (return value, errno, bytes copied out) are compared.
 */
#ifndef BPFRT_TESTS_API_DIFF_H
#define BPFRT_TESTS_API_DIFF_H

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static inline int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static inline int sys_bpfrt(int cmd, union bpf_attr *attr, unsigned int size)
{
	return bpfrt_bpf(cmd, attr, size);
}

/* Can we compare against the kernel?  Root and a bpf() that creates an array map. */
static inline int kernel_available(void)
{
	union bpf_attr a;
	int fd;

	if (geteuid() != 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	fd = sys_kernel(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* BPF_PROG_TEST_RUN of prog over a zeroed 64-byte packet, repeat times: its retval, or
 * -1000 - errno when the command fails. */
static inline int diff_run64(sys_fn sys, int prog, uint32_t repeat)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = repeat;
	return sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -1000 - errno
								: (int)a.test.retval;
}

/* Result of one step: return value (fds normalised to 1), errno, bytes copied out. */
struct step_result {
	int ret;
	int err;
	unsigned char out[256];
	unsigned out_len;
};

#endif
