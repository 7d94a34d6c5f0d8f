/* test_ldabs_oracle.c - legacy packet loads (LD_ABS, LD_IND) against the kernel: each
 * case is a socket filter `r6 = r1; [r7 = X;] ld{abs,ind}{b,h,w} ...; exit` run with
 * BPF_PROG_TEST_RUN on a 64-byte frame, and on every bpfrt engine with the same packet as
 * the kernel's skb sees it (after the 14-byte Ethernet header).  Offsets cover in range,
 * the last bytes, past the end (the program ends with r0 = 0), negative, SKF_NET_OFF
 * relative, and 32-bit wrap of src + imm.  Loads relative to SKF_LL_OFF are left out:
 * bpfrt has no separate link-layer header.  Needs root.
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
	{ "jit", BPFRT_ENGINE_JIT },
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
	T_ASSERT(compared >= 100);
	T_ASSERT(nonzero >= 40); /* the cases do read the packet, not only fail */
	return t_done();
}
