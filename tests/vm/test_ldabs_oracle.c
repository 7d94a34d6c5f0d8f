/* test_ldabs_oracle.c - legacy packet loads (LD_ABS, LD_IND) against the kernel: each
 * case is a socket filter `r6 = r1; [r7 = X;] ld{abs,ind}{b,h,w} ...; exit` run with
 * BPF_PROG_TEST_RUN on a 64-byte frame, and on every bpfrt engine with the same packet as
 * the kernel's skb sees it (after the 14-byte Ethernet header).  Offsets cover in range,
 * the last bytes, past the end (the program ends with r0 = 0), negative, SKF_NET_OFF
 * relative, and 32-bit wrap of src + imm.  Second part: the same loads and header-relative
 * ones (SKF_LL_OFF + k reads the link-layer header, which lies before a socket filter's
 * data and at a tc program's; SKF_NET_OFF + k the network header, after a tc program's
 * data), and narrow __sk_buff loads (a 2-byte load of protocol's upper half returns the
 * whole field, as the kernel's narrow-load rewrite does), loaded as socket filters and tc
 * programs into the kernel and into bpfrt_bpf() on each engine and run by both
 * BPF_PROG_TEST_RUNs on the same frame.  Needs root.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "util/util.h"
#include "vm/vm.h"

#define FRAME 64
#define ETH 14

static uint8_t frame[FRAME];

static const int32_t abs_offs[] = {
	0, 1, 2, 3, 17, FRAME - ETH - 4, FRAME - ETH - 3, FRAME - ETH - 2, FRAME - ETH - 1,
	FRAME - ETH, FRAME - ETH + 1, 1000, INT32_MAX, -1, -4, SKF_NET_OFF, SKF_NET_OFF + 1,
	SKF_NET_OFF + FRAME - ETH - 1, SKF_NET_OFF + FRAME - ETH, INT32_MIN,
};
static const uint64_t ind_regs[] = { 0, 5, 47, (uint64_t)-1, 0xffffffff, 0x100000003ull,
				     (uint64_t)(int64_t)SKF_NET_OFF };
static const int32_t ind_imms[] = { 0, 2, -3, 48 };

static const struct {
	const char *name;
	enum bpfrt_engine engine;
} engines[] = {
	{ "interp", BPFRT_ENGINE_INTERP },
	{ "checked", BPFRT_ENGINE_CHECKED },
#ifdef BPFRT_HAVE_JIT /* a build without the JIT compares the engines it has */
	{ "jit", BPFRT_ENGINE_JIT },
#endif
};

static int kernel_run(const struct bpf_insn *insns, size_t n, uint32_t *retval)
{
	union bpf_attr a;
	int fd, ret;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)frame;
	a.test.data_size_in = FRAME;
	a.test.repeat = 1;
	ret = (int)syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a));
	ret = ret < 0 ? -errno : 0;
	*retval = a.test.retval;
	close(fd);
	return ret;
}

static unsigned compared, nonzero;

static void one(const char *what, const struct bpf_insn *insns, size_t n)
{
	uint32_t kret = 0;
	int ret;

	T_CASE(what);
	ret = kernel_run(insns, n, &kret);
	if (ret) {
		T_FAIL("kernel refused or failed: %s", strerror(-ret));
		return;
	}
	nonzero += kret != 0;
	for (size_t e = 0; e < BRT_ARRAY_SIZE(engines); e++) {
		BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engines[e].engine);
		uint8_t ctxmem[64] = { 0 };
		struct brt_run_opts ro = { .r1 = (uint64_t)(uintptr_t)ctxmem,
					   .skb_data = frame + ETH,
					   .skb_len = FRAME - ETH };
		struct bpfrt_vm *vm;
		char err[256];
		uint64_t r0;

		ret = bpfrt_vm_load(insns, n, &o, &vm, err, sizeof(err));
		if (ret == -EOPNOTSUPP)
			continue;
		if (ret) {
			T_FAIL("%s [%s]: load: %s", what, engines[e].name, err);
			continue;
		}
		ret = brt_vm_run_opts(vm, &ro, &r0, err, sizeof(err));
		bpfrt_vm_free(vm);
		if (ret) {
			T_FAIL("%s [%s]: %s", what, engines[e].name, err);
			continue;
		}
		if ((uint32_t)r0 == kret) {
			T_OK();
			compared++;
		} else {
			T_FAIL("%s [%s]: kernel 0x%x, bpfrt 0x%llx", what, engines[e].name, kret,
			       (unsigned long long)r0);
		}
	}
}

/* Part two: both bpf() calls, BPF_PROG_TEST_RUN on the whole frame. */
typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* 0 and *retval, or -errno of the load (*loaded 0) or of the run */
static int test_run(sys_fn sys, uint32_t type, uint32_t flags, const struct bpf_insn *insns,
		    size_t n, uint32_t *retval, int *loaded)
{
	union bpf_attr a;
	int fd, ret;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.prog_flags = flags;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	*loaded = fd >= 0;
	if (fd < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)frame;
	a.test.data_size_in = FRAME;
	a.test.repeat = 1;
	ret = sys(BPF_PROG_TEST_RUN, &a, sizeof(a));
	ret = ret < 0 ? -errno : 0;
	*retval = a.test.retval;
	close(fd);
	return ret;
}

static unsigned compared2, differ2;

static void both(const char *what, uint32_t type, const struct bpf_insn *insns, size_t n)
{
	static const uint32_t engs[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					 BPFRT_ENGINE_JIT
#endif
	};
	uint32_t kret = 0, bret = 0;
	int kload, bload, kerr, berr;

	T_CASE(what);
	kerr = test_run(sys_kernel, type, 0, insns, n, &kret, &kload);
	for (size_t e = 0; e < BRT_ARRAY_SIZE(engs); e++) {
		berr = test_run(bpfrt_bpf, type, BPFRT_F_ENGINE(engs[e]), insns, n, &bret,
				&bload);
		if (kload != bload || kerr != berr || (!kerr && kret != bret)) {
			differ2++;
			T_FAIL("%s [engine %u]: kernel load %d err %d ret 0x%x; bpfrt load %d err %d "
			       "ret 0x%x", what, engs[e], kload, kerr, kret, bload, berr, bret);
			continue;
		}
		compared2++;
		T_OK();
	}
}

static void part_two(void)
{
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W };
	static const int32_t hdr_offs[] = {
		SKF_LL_OFF, SKF_LL_OFF + 1, SKF_LL_OFF + 12, SKF_LL_OFF + 13, SKF_LL_OFF + 14,
		SKF_LL_OFF + FRAME - 4, SKF_LL_OFF + FRAME - 1, SKF_LL_OFF + FRAME,
		SKF_LL_OFF - 1, SKF_NET_OFF, SKF_NET_OFF + 2, SKF_NET_OFF + FRAME - ETH - 4,
		SKF_NET_OFF + FRAME - ETH - 2, SKF_NET_OFF + FRAME - ETH, SKF_NET_OFF - 1, 0, 3,
		FRAME - ETH - 2, FRAME - 2, -1,
	};
	static const int32_t ind_bases[] = { SKF_LL_OFF, SKF_LL_OFF + 10, SKF_NET_OFF,
					     SKF_NET_OFF + 40, -2 };
	static const uint32_t types[] = { BPF_PROG_TYPE_SOCKET_FILTER, BPF_PROG_TYPE_SCHED_CLS };
	struct bpf_insn p[6];
	char what[160];

	for (size_t t = 0; t < BRT_ARRAY_SIZE(types); t++) {
		for (size_t s = 0; s < sizeof(sizes); s++) {
			for (size_t i = 0; i < BRT_ARRAY_SIZE(hdr_offs); i++) {
				p[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
							  .dst_reg = 6, .src_reg = 1 };
				p[1] = (struct bpf_insn){ .code = BPF_LD | BPF_ABS | sizes[s],
							  .imm = hdr_offs[i] };
				p[2] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
				snprintf(what, sizeof(what), "type %u ldabs size %u off %d", types[t],
					 sizes[s], hdr_offs[i]);
				both(what, types[t], p, 3);
			}
			for (size_t i = 0; i < BRT_ARRAY_SIZE(ind_bases); i++) {
				p[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
							  .dst_reg = 6, .src_reg = 1 };
				p[1] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
							  .dst_reg = 7, .imm = ind_bases[i] };
				p[2] = (struct bpf_insn){ .code = BPF_LD | BPF_IND | sizes[s],
							  .src_reg = 7, .imm = 3 };
				p[3] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
				snprintf(what, sizeof(what), "type %u ldind size %u src %d + 3",
					 types[t], sizes[s], ind_bases[i]);
				both(what, types[t], p, 4);
			}
		}
		/* narrow context loads over every byte of protocol and pkt_type */
		for (int off = 0; off < 24; off++)
			for (size_t s = 0; s < 2; s++) {
				int size = sizes[s] == BPF_B ? 1 : 2;

				if (off % size)
					continue;
				p[0] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | sizes[s],
							  .dst_reg = 0, .src_reg = 1,
							  .off = (int16_t)off };
				p[1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
				snprintf(what, sizeof(what), "type %u ctx load size %d off %d",
					 types[t], size, off);
				both(what, types[t], p, 2);
			}
	}
}

int main(void)
{
	static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W };
	struct bpf_insn p[8];
	char what[128];

	if (geteuid() != 0)
		T_SKIP("needs root for bpf(BPF_PROG_LOAD)");
	for (unsigned i = 0; i < FRAME; i++)
		frame[i] = (uint8_t)(0x80 + i * 7);
	frame[12] = 0x08; /* IPv4 ethertype: the kernel sets skb->protocol from it */
	frame[13] = 0x00;

	for (size_t s = 0; s < sizeof(sizes); s++) {
		for (size_t i = 0; i < BRT_ARRAY_SIZE(abs_offs); i++) {
			p[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6,
						  .src_reg = 1 };
			p[1] = (struct bpf_insn){ .code = BPF_LD | BPF_ABS | sizes[s],
						  .imm = abs_offs[i] };
			p[2] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
			snprintf(what, sizeof(what), "ldabs size %u off %d", sizes[s], abs_offs[i]);
			one(what, p, 3);
		}
		for (size_t r = 0; r < BRT_ARRAY_SIZE(ind_regs); r++) {
			for (size_t i = 0; i < BRT_ARRAY_SIZE(ind_imms); i++) {
				p[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
							  .dst_reg = 6, .src_reg = 1 };
				p[1] = (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW,
							  .dst_reg = 7,
							  .imm = (int32_t)(uint32_t)ind_regs[r] };
				p[2] = (struct bpf_insn){ .imm = (int32_t)(uint32_t)(ind_regs[r] >> 32) };
				p[3] = (struct bpf_insn){ .code = BPF_LD | BPF_IND | sizes[s],
							  .src_reg = 7, .imm = ind_imms[i] };
				p[4] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
				snprintf(what, sizeof(what), "ldind size %u src 0x%llx imm %d",
					 sizes[s], (unsigned long long)ind_regs[r], ind_imms[i]);
				one(what, p, 5);
			}
		}
	}
	printf("%u packet-load results compared with the kernel (all engines)\n", compared);
	part_two();
	printf("%u test runs (header-relative loads, narrow context loads) equal to the "
	       "kernel's, %u differ\n", compared2, differ2);
	T_ASSERT(compared2 >= 300);
	T_ASSERT(compared >= 100);
	T_ASSERT(nonzero >= 40); /* the cases do read the packet, not only fail */
	return t_done();
}
