/* test_pkt_prog.c - eBPF programs of the packet types run by bpfrt's attach path
 * (src/attach/pkt_prog.c) checked against the kernel: an XDP program that drops, rewrites
 * and transmits, aborts and passes (tests/attach/progs/xdp_proto.s) and a tc classifier
 * that reads the packet with bpf_skb_load_bytes (tc_tcp.s) run on 400 generated packets
 * on every engine; verdict and packet after the run must equal what the kernel's
 * BPF_PROG_TEST_RUN returns.  Also: the action mapping of every XDP and TC code, and
 * program types that do not run on packets.  Kernel comparisons skip without root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/pkt_cls.h>

#include "attach/attach.h"
#include "vm/vm.h"
#include "bpfrt.h"
#include "harness.h"
#include "kernel_prog.h"
#include "pktgen.h"

#define PROGS BPFRT_SOURCE_DIR "/tests/attach/progs/"
#define NPKT 400

static int load_asm(const char *file, struct bpf_insn **insns, size_t *n)
{
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *f = fopen(file, "r");
	int ret;

	if (!f)
		return -errno;
	text = calloc(1, 65536);
	len = fread(text, 1, 65535, f);
	fclose(f);
	text[len] = 0;
	ret = bpfrt_asm(text, file, insns, n, err, sizeof(err));
	if (ret)
		printf("%s: %s\n", file, err);
	free(text);
	return ret;
}

static void compare(const char *file, enum bpf_prog_type type, const char *engine)
{
	struct brt_pkt_prog *pp = NULL;
	struct pktgen g = { .seed = 42 };
	uint8_t kout[PKTGEN_MAX];
	struct bpf_insn *insns;
	char err[256];
	size_t n;
	int fb, fk = -1, compared = 0, differ = 0;
	enum bpfrt_engine e = BPFRT_ENGINE_DEFAULT;

	T_CASE(file);
	if (load_asm(file, &insns, &n)) {
		T_FAIL("assembling %s", file);
		return;
	}
	T_EQ_INT(0, brt_vm_engine_parse(engine, 0, &e));
	{
		BPFRT_OPTS(bpfrt_prog_load_opts, o, .prog_flags = BPFRT_F_ENGINE(e));

		fb = bpfrt_prog_load(type, "t", "GPL", insns, n, &o);
	}
	T_ASSERT(fb >= 0);
	if (geteuid() == 0)
		fk = kprog_load(type, insns, n);
	free(insns);
	if (fb < 0)
		return;
	T_EQ_INT(0, brt_pkt_prog_open(fb, &pp, err, sizeof(err)));
	T_EQ_U64(type, brt_pkt_prog_type(pp));
	for (int i = 0; i < NPKT && pp; i++) {
		size_t caplen, len = pktgen_next(&g, 0, &caplen);
		struct brt_pkt pkt = { g.buf, (uint32_t)len, (uint32_t)len, 0, 0 };
		struct brt_pkt_result res;
		uint32_t kret = 0;

		if (brt_pkt_prog_run(pp, &pkt, 1, 0, &res, err, sizeof(err))) {
			T_FAIL("packet %d: %s", i, err);
			break;
		}
		T_ASSERT(res.caplen == len);
		if (fk < 0)
			continue;
		if (kprog_run(fk, g.buf, len, &kret, kout, sizeof(kout))) {
			T_FAIL("kernel test run: %s", strerror(errno));
			break;
		}
		compared++;
		if (kret != res.verdict || memcmp(kout, res.data, len)) {
			if (differ++ < 5)
				printf("%s [%s] packet %d: bpfrt %u, kernel %u%s\n", file, engine, i,
				       res.verdict, kret,
				       kret == res.verdict ? " (packet differs)" : "");
		}
	}
	T_EQ_INT(0, differ);
	printf("%s [%s]: %d packets compared with the kernel\n", file + strlen(PROGS), engine,
	       compared);
	brt_pkt_prog_close(pp);
	close(fb);
	if (fk >= 0)
		close(fk);
}

static void test_actions(void)
{
	static const struct {
		uint32_t type, verdict;
		enum bpfrt_pkt_action action;
		const char *name;
	} cases[] = {
		{ BPF_PROG_TYPE_XDP, XDP_ABORTED, BPFRT_PKT_ABORTED, "XDP_ABORTED" },
		{ BPF_PROG_TYPE_XDP, XDP_DROP, BPFRT_PKT_DROP, "XDP_DROP" },
		{ BPF_PROG_TYPE_XDP, XDP_PASS, BPFRT_PKT_PASS, "XDP_PASS" },
		{ BPF_PROG_TYPE_XDP, XDP_TX, BPFRT_PKT_TX, "XDP_TX" },
		{ BPF_PROG_TYPE_XDP, XDP_REDIRECT, BPFRT_PKT_REDIRECT, "XDP_REDIRECT" },
		{ BPF_PROG_TYPE_XDP, 77, BPFRT_PKT_ABORTED, NULL },
		{ BPF_PROG_TYPE_SCHED_CLS, (uint32_t)TC_ACT_UNSPEC, BPFRT_PKT_PASS, "TC_ACT_UNSPEC" },
		{ BPF_PROG_TYPE_SCHED_CLS, TC_ACT_OK, BPFRT_PKT_PASS, "TC_ACT_OK" },
		{ BPF_PROG_TYPE_SCHED_CLS, TC_ACT_SHOT, BPFRT_PKT_DROP, "TC_ACT_SHOT" },
		{ BPF_PROG_TYPE_SCHED_CLS, TC_ACT_STOLEN, BPFRT_PKT_DROP, "TC_ACT_STOLEN" },
		{ BPF_PROG_TYPE_SCHED_CLS, TC_ACT_REDIRECT, BPFRT_PKT_REDIRECT, "TC_ACT_REDIRECT" },
		{ BPF_PROG_TYPE_SCHED_ACT, TC_ACT_PIPE, BPFRT_PKT_PASS, "TC_ACT_PIPE" },
		{ BPF_PROG_TYPE_SCHED_CLS, 1000, BPFRT_PKT_ABORTED, NULL },
		{ BPF_PROG_TYPE_SOCKET_FILTER, 0, BPFRT_PKT_DROP, NULL },
		{ BPF_PROG_TYPE_SOCKET_FILTER, 60, BPFRT_PKT_PASS, NULL },
	};
	static const uint8_t frame[64] = { [12] = 0x08 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bpf_insn prog[2] = {
			{ .code = BPF_ALU | BPF_MOV | BPF_K, .imm = (int32_t)cases[i].verdict },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		int fd = bpfrt_prog_load(cases[i].type, "v", "GPL", prog, 2, NULL);
		struct brt_pkt pkt = { frame, sizeof(frame), sizeof(frame), 0, 0 };
		struct brt_pkt_prog *pp;
		struct brt_pkt_result res;
		const char *name;
		char err[256];

		T_CASE(cases[i].name ? cases[i].name : "other verdict");
		T_ASSERT(fd >= 0);
		if (fd < 0 || brt_pkt_prog_open(fd, &pp, err, sizeof(err))) {
			T_FAIL("open: %s", err);
			continue;
		}
		T_EQ_INT(0, brt_pkt_prog_run(pp, &pkt, 0, 0, &res, err, sizeof(err)));
		T_EQ_INT(cases[i].action, res.action);
		T_EQ_U64(cases[i].verdict, res.verdict);
		name = brt_pkt_verdict_name(cases[i].type, cases[i].verdict);
		T_EQ_STR(cases[i].name ? cases[i].name : "(null)", name ? name : "(null)");
		if (cases[i].type == BPF_PROG_TYPE_SOCKET_FILTER)
			T_EQ_U64(cases[i].verdict < 64 ? cases[i].verdict : 64, res.caplen);
		brt_pkt_prog_close(pp);
		close(fd);
	}
}

static void test_wrong_type(void)
{
	struct bpf_insn prog[2] = {
		{ .code = BPF_ALU | BPF_MOV | BPF_K },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct brt_pkt_prog *pp = NULL;
	char err[256] = "";
	int fd = bpfrt_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "r", "GPL", prog, 2, NULL);

	T_CASE("raw tracepoint program on packets");
	T_ASSERT(fd >= 0);
	T_EQ_INT(-EINVAL, brt_pkt_prog_open(fd, &pp, err, sizeof(err)));
	T_CONTAINS("does not run on packets", err);
	T_ASSERT(!pp);
	close(fd);
	T_CASE("closed fd");
	T_EQ_INT(-EBADF, brt_pkt_prog_open(fd, &pp, err, sizeof(err)));
}

int main(void)
{
	static const char *const engines[] = { "interp", "checked", "jit" };

	(void)pktgen_write_pcap; /* pktgen.h's writers serve other tests */
	(void)pktgen_write_pcapng;
	test_actions();
	test_wrong_type();
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
#ifndef BPFRT_HAVE_JIT
		if (!strcmp(engines[e], "jit"))
			continue;
#endif
		compare(PROGS "xdp_proto.s", BPF_PROG_TYPE_XDP, engines[e]);
		compare(PROGS "tc_tcp.s", BPF_PROG_TYPE_SCHED_CLS, engines[e]);
	}
	return t_done();
}
