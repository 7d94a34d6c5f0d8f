/* kernel_prog.h - the running kernel as the reference for programs of the packet types:
 * load eBPF of any type with bpf(BPF_PROG_LOAD), run it on one packet with
 * BPF_PROG_TEST_RUN (verdict and the packet after the run).  Test support, header-only.
 */
#ifndef BPFRT_TESTS_ATTACH_KERNEL_PROG_H
#define BPFRT_TESTS_ATTACH_KERNEL_PROG_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

/* The program fd, or -1 with errno (the verifier's refusal: EACCES, EINVAL). */
static inline int kprog_load(enum bpf_prog_type type, const struct bpf_insn *insns, size_t n)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	return (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

/* One run on len bytes of pkt: 0 with *retval (and the packet after the run in out, out_len
 * bytes of room, when out is not NULL), or -errno. */
static inline int kprog_run(int fd, const uint8_t *pkt, size_t len, uint32_t *retval,
			    uint8_t *out, size_t out_len)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uintptr_t)pkt;
	attr.test.data_size_in = (uint32_t)len;
	attr.test.data_out = (uintptr_t)out;
	attr.test.data_size_out = out ? (uint32_t)out_len : 0;
	attr.test.repeat = 1;
	if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)))
		return -errno;
	*retval = attr.test.retval;
	return 0;
}

#endif
