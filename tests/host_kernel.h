/* tests/host_kernel.h - where the running kernel is not upstream Linux 6.18.
 *
 * bpfrt implements upstream 6.18's behaviour.  A kernel built with a patch of its own can
 * refuse what upstream allows: 6.18.44-fc-v1300, say, refuses bpf_xdp_adjust_meta in XDP
 * programs ("program of this type cannot use helper bpf_xdp_adjust_meta#54"), which
 * upstream's xdp_func_proto() (net/core/filter.c) returns for every XDP program; the
 * 6.18.44-fc-v1272 build of the same release allowed it.  A kernel differential that meets
 * such a case cannot compare the two sides, so it reports it as a host deviation (printed,
 * counted) instead of failing or passing it.  Each deviation listed here is probed on the
 * running kernel (a one-call program loaded through bpf(2)), never assumed: on an upstream
 * kernel none of them is active and every case is compared.
 */
#ifndef BPFRT_TESTS_HOST_KERNEL_H
#define BPFRT_TESTS_HOST_KERNEL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

/* Helpers upstream 6.18 offers to a program type and a patched kernel may not: the one
 * list of them (with where upstream grants each). */
static const struct host_helper_deviation {
	uint32_t prog_type;
	int32_t helper;
	const char *name;
	const char *upstream; /* where upstream 6.18 grants it */
} host_helper_deviations[] = {
	{ BPF_PROG_TYPE_XDP, BPF_FUNC_xdp_adjust_meta, "bpf_xdp_adjust_meta",
	  "net/core/filter.c xdp_func_proto()" },
};

/* 1 when the running kernel refuses a program of prog_type that calls helper with "cannot
 * use helper" although upstream 6.18 grants it (one of the list above); 0 otherwise,
 * also when bpf(2) is not there.  The probe's answer is kept per entry. */
static inline int host_refuses_helper(uint32_t prog_type, int32_t helper)
{
	static int probed[sizeof(host_helper_deviations) / sizeof(host_helper_deviations[0])];

	for (size_t i = 0; i < sizeof(host_helper_deviations) / sizeof(host_helper_deviations[0]);
	     i++) {
		const struct host_helper_deviation *d = &host_helper_deviations[i];

		if (d->prog_type != prog_type || d->helper != helper)
			continue;
		if (!probed[i]) {
			/* r2 = 0; call helper (r1 = ctx); r0 = 0; exit */
			struct bpf_insn p[] = {
				{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2 },
				{ .code = BPF_JMP | BPF_CALL, .imm = helper },
				{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
				{ .code = BPF_JMP | BPF_EXIT },
			};
			static char log[4096];
			union bpf_attr a;
			int fd;

			memset(&a, 0, sizeof(a));
			a.prog_type = prog_type;
			a.insns = (uintptr_t)p;
			a.insn_cnt = sizeof(p) / sizeof(p[0]);
			a.license = (uintptr_t)"GPL";
			a.log_buf = (uintptr_t)log;
			a.log_size = sizeof(log);
			a.log_level = 1;
			log[0] = 0;
			fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
			if (fd >= 0)
				close(fd);
			probed[i] = fd < 0 && errno == EINVAL &&
					    strstr(log, "cannot use helper") ? 2 : 1;
			if (probed[i] == 2)
				printf("host kernel deviation: the running kernel refuses %s in "
				       "program type %u, which upstream 6.18 grants (%s): cases "
				       "that call it are not compared\n",
				       d->name, d->prog_type, d->upstream);
		}
		return probed[i] == 2;
	}
	return 0;
}

#endif
