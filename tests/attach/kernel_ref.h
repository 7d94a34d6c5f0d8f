/* kernel_ref.h - the running kernel as a reference for converted classic programs: load
 * eBPF as a socket filter and run it on one packet with BPF_PROG_TEST_RUN.  Test support,
 * header-only.
 */
#ifndef BPFRT_TESTS_ATTACH_KERNEL_REF_H
#define BPFRT_TESTS_ATTACH_KERNEL_REF_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

static int kref_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Load insns as a socket filter; -1 with the verifier's log in log when refused. */
static int kref_load(const struct bpf_insn *insns, size_t n, char *log, size_t loglen)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.log_buf = (uintptr_t)log;
	attr.log_size = (uint32_t)loglen;
	attr.log_level = 1;
	log[0] = 0;
	return kref_bpf(BPF_PROG_LOAD, &attr);
}

/* The kernel's socket-filter test run strips an Ethernet header first, so prepend one
 * whose type (IPv4) also becomes skb->protocol.  The packet is then both captured and
 * wire length: the kernel cannot model a short capture. */
static int kref_run(int fd, const uint8_t *data, size_t len, uint32_t *retval)
{
	static uint8_t buf[14 + 65536];
	union bpf_attr attr;

	if (len > sizeof(buf) - 14)
		return -E2BIG;
	memset(buf, 0, 14);
	buf[12] = 0x08;
	memcpy(buf + 14, data, len);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uintptr_t)buf;
	attr.test.data_size_in = (uint32_t)(14 + len);
	attr.test.repeat = 1;
	if (kref_bpf(BPF_PROG_TEST_RUN, &attr))
		return -errno;
	*retval = attr.test.retval;
	return 0;
}

/* 1 when this process may load and run socket filters. */
static int kref_usable(void)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096];
	int fd = kref_load(ret0, 2, log, sizeof(log));

	if (fd < 0) {
		printf("note: kernel reference unavailable: BPF_PROG_LOAD: %s\n", strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

#endif
