/* test_cbpf.c - the classic BPF checker and converter: a table of classic programs with a
 * packet and the value classic BPF returns for it, checked three ways - libpcap's own
 * classic interpreter agrees with the table, the converted eBPF loaded into the running
 * kernel as a socket filter returns it (BPF_PROG_TEST_RUN, when root), and bpfrt's engines
 * (interpreter, checked interpreter, JIT when built) return it - plus a table of bad classic programs and the message each one gets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "bpfrt.h"
#include "harness.h"
#include "kernel_ref.h"
#include "isa/isa.h"

#define MAXC 24

/* Which references apply to a case. */
enum {
	NO_PCAP = 1,   /* libpcap's interpreter differs or lacks the feature (ancillary...) */
	NO_KERNEL = 2, /* the kernel's test run can't reproduce the packet (wirelen, LL_OFF) */
};

struct run_case {
	const char *name;
	struct sock_filter prog[MAXC];
	uint32_t wirelen; /* 0: caplen */
	uint32_t expect;
	unsigned flags;
};

/* Ethernet + IPv4 (ihl 5) + TCP 1234 -> 80 with SYN, 64 bytes captured. */
static const uint8_t pkt[64] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x32, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
	0x04, 0xd2, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x50, 0x02, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xf0, 0x0d, 0x01, 0x02,
};

#define S(code, k) BPF_STMT(code, k)
#define J(code, k, jt, jf) BPF_JUMP(code, k, jt, jf)
#define RET_A S(BPF_RET | BPF_A, 0)
#define LDI(k) S(BPF_LD | BPF_IMM, k)
#define LDXI(k) S(BPF_LDX | BPF_IMM, k)
#define ALU_K(op, a, k) { LDI(a), S(BPF_ALU | op | BPF_K, k), RET_A }
#define ALU_X(op, a, x) { LDI(a), LDXI(x), S(BPF_ALU | op | BPF_X, 0), RET_A }
/* A = a, then "op k" jumps to ret 1 when true, ret 2 when false */
#define JMP_K(op, a, k) { LDI(a), J(BPF_JMP | op | BPF_K, k, 0, 1), S(BPF_RET | BPF_K, 1), \
			  S(BPF_RET | BPF_K, 2) }
#define JMP_X(op, a, x) { LDI(a), LDXI(x), J(BPF_JMP | op | BPF_X, 0, 1, 0), \
			  S(BPF_RET | BPF_K, 2), S(BPF_RET | BPF_K, 1) }

static const struct run_case run_cases[] = {
	{ "ret k", { S(BPF_RET | BPF_K, 42) }, 0, 42 },
	{ "ret k max", { S(BPF_RET | BPF_K, 0xffffffff) }, 0, 0xffffffff },
	{ "ret a starts 0", { RET_A }, 0, 0 },
	{ "ret x starts 0", { S(BPF_MISC | BPF_TXA, 0), RET_A }, 0, 0 },
	{ "ld w abs", { S(BPF_LD | BPF_W | BPF_ABS, 26), RET_A }, 0, 0x0a000001 },
	{ "ld h abs", { S(BPF_LD | BPF_H | BPF_ABS, 12), RET_A }, 0, 0x0800 },
	{ "ld b abs", { S(BPF_LD | BPF_B | BPF_ABS, 23), RET_A }, 0, 6 },
	{ "ld w abs last bytes", { S(BPF_LD | BPF_W | BPF_ABS, 60), RET_A }, 0, 0xf00d0102 },
	{ "ld w abs oob", { S(BPF_LD | BPF_W | BPF_ABS, 61), S(BPF_RET | BPF_K, 9) }, 0, 0 },
	{ "ld h abs oob", { S(BPF_LD | BPF_H | BPF_ABS, 63), S(BPF_RET | BPF_K, 9) }, 0, 0 },
	{ "ld b abs last", { S(BPF_LD | BPF_B | BPF_ABS, 63), RET_A }, 0, 2 },
	{ "ld b abs oob", { S(BPF_LD | BPF_B | BPF_ABS, 64), S(BPF_RET | BPF_K, 9) }, 0, 0 },
	{ "ld abs huge k", { S(BPF_LD | BPF_B | BPF_ABS, 0x7fffffff), S(BPF_RET | BPF_K, 9) }, 0,
	  0 },
	{ "ld w ind", { LDXI(20), S(BPF_LD | BPF_W | BPF_IND, 6), RET_A }, 0, 0x0a000001 },
	{ "ld h ind", { LDXI(30), S(BPF_LD | BPF_H | BPF_IND, 4), RET_A }, 0, 0x04d2 },
	{ "ld b ind", { LDXI(50), S(BPF_LD | BPF_B | BPF_IND, 4), RET_A }, 0, 0xde },
	{ "ld ind oob", { LDXI(60), S(BPF_LD | BPF_W | BPF_IND, 2), S(BPF_RET | BPF_K, 9) }, 0, 0 },
	{ "ld ind x huge", { LDXI(0x7ffffff0), S(BPF_LD | BPF_B | BPF_IND, 0x20),
			     S(BPF_RET | BPF_K, 9) }, 0, 0 },
	{ "ld len", { S(BPF_LD | BPF_W | BPF_LEN, 0), RET_A }, 0, 64 },
	{ "ld len wire", { S(BPF_LD | BPF_W | BPF_LEN, 0), RET_A }, 1500, 1500, NO_KERNEL },
	{ "ldx len", { S(BPF_LDX | BPF_W | BPF_LEN, 0), S(BPF_MISC | BPF_TXA, 0), RET_A }, 0, 64 },
	{ "ld imm", { LDI(0xdeadbeef), RET_A }, 0, 0xdeadbeef },
	{ "ldx imm txa", { LDXI(77), S(BPF_MISC | BPF_TXA, 0), RET_A }, 0, 77 },
	{ "tax", { LDI(5), S(BPF_MISC | BPF_TAX, 0), LDI(0), S(BPF_MISC | BPF_TXA, 0), RET_A }, 0, 5 },
	{ "msh", { S(BPF_LDX | BPF_B | BPF_MSH, 14), S(BPF_MISC | BPF_TXA, 0), RET_A }, 0, 20 },
	{ "msh then ind: tcp dport", { S(BPF_LDX | BPF_B | BPF_MSH, 14),
				       S(BPF_LD | BPF_H | BPF_IND, 16), RET_A }, 0, 80 },
	{ "msh keeps a", { LDI(1234), S(BPF_LDX | BPF_B | BPF_MSH, 14), RET_A }, 0, 1234 },
	{ "msh oob", { S(BPF_LDX | BPF_B | BPF_MSH, 64), S(BPF_RET | BPF_K, 9) }, 0, 0 },
	{ "st ld mem", { LDI(5), S(BPF_ST, 3), LDI(0), S(BPF_LD | BPF_MEM, 3), RET_A }, 0, 5 },
	{ "stx ldx mem", { LDXI(6), S(BPF_STX, 15), LDXI(0), S(BPF_LDX | BPF_MEM, 15),
			   S(BPF_MISC | BPF_TXA, 0), RET_A }, 0, 6 },
	{ "mem slots apart", { LDI(1), S(BPF_ST, 0), LDI(2), S(BPF_ST, 1), S(BPF_LD | BPF_MEM, 0),
			       RET_A }, 0, 1 },
	{ "add k", ALU_K(BPF_ADD, 40, 2), 0, 42 },
	{ "add k wraps", ALU_K(BPF_ADD, 0xffffffff, 2), 0, 1 },
	{ "sub k", ALU_K(BPF_SUB, 1, 2), 0, 0xffffffff },
	{ "mul k", ALU_K(BPF_MUL, 0x10000, 0x10001), 0, 0x10000 },
	{ "div k", ALU_K(BPF_DIV, 100, 7), 0, 14 },
	{ "div k big", ALU_K(BPF_DIV, 0xffffffff, 0x80000000), 0, 1 },
	{ "mod k", ALU_K(BPF_MOD, 100, 7), 0, 2 },
	{ "and k", ALU_K(BPF_AND, 0xff0f, 0x0ff0), 0, 0x0f00 },
	{ "or k", ALU_K(BPF_OR, 0xf0, 0x0f), 0, 0xff },
	{ "xor k", ALU_K(BPF_XOR, 0xff, 0x0f), 0, 0xf0 },
	{ "lsh k", ALU_K(BPF_LSH, 0x80000001, 1), 0, 2 },
	{ "rsh k", ALU_K(BPF_RSH, 0x80000000, 31), 0, 1 },
	{ "neg", { LDI(1), S(BPF_ALU | BPF_NEG, 0), RET_A }, 0, 0xffffffff },
	{ "add x", ALU_X(BPF_ADD, 40, 2), 0, 42 },
	{ "sub x", ALU_X(BPF_SUB, 1, 2), 0, 0xffffffff },
	{ "mul x", ALU_X(BPF_MUL, 6, 7), 0, 42 },
	{ "div x", ALU_X(BPF_DIV, 100, 7), 0, 14 },
	{ "mod x", ALU_X(BPF_MOD, 100, 7), 0, 2 },
	{ "div x=0 returns 0", { LDI(100), LDXI(0), S(BPF_ALU | BPF_DIV | BPF_X, 0),
				 S(BPF_RET | BPF_K, 7) }, 0, 0 },
	{ "mod x=0 returns 0", { LDI(100), LDXI(0), S(BPF_ALU | BPF_MOD | BPF_X, 0),
				 S(BPF_RET | BPF_K, 7) }, 0, 0 },
	{ "and x", ALU_X(BPF_AND, 0xff0f, 0x0ff0), 0, 0x0f00 },
	{ "or x", ALU_X(BPF_OR, 0xf0, 0x0f), 0, 0xff },
	{ "xor x", ALU_X(BPF_XOR, 0xff, 0x0f), 0, 0xf0 },
	{ "lsh x", ALU_X(BPF_LSH, 3, 4), 0, 48 },
	{ "rsh x", ALU_X(BPF_RSH, 48, 4), 0, 3 },
	{ "jeq k true", JMP_K(BPF_JEQ, 5, 5), 0, 1 },
	{ "jeq k false", JMP_K(BPF_JEQ, 5, 6), 0, 2 },
	{ "jgt k true", JMP_K(BPF_JGT, 6, 5), 0, 1 },
	{ "jgt k false", JMP_K(BPF_JGT, 5, 5), 0, 2 },
	{ "jgt k unsigned", JMP_K(BPF_JGT, 0xffffffff, 0x80000000), 0, 1 },
	{ "jgt k unsigned false", JMP_K(BPF_JGT, 1, 0x80000000), 0, 2 },
	{ "jge k equal", JMP_K(BPF_JGE, 5, 5), 0, 1 },
	{ "jge k false", JMP_K(BPF_JGE, 4, 5), 0, 2 },
	{ "jge k top", JMP_K(BPF_JGE, 0xffffffff, 0xffffffff), 0, 1 },
	{ "jset k true", JMP_K(BPF_JSET, 6, 2), 0, 1 },
	{ "jset k false", JMP_K(BPF_JSET, 6, 1), 0, 2 },
	{ "jeq x true", JMP_X(BPF_JEQ, 9, 9), 0, 1 },
	{ "jeq x false", JMP_X(BPF_JEQ, 9, 8), 0, 2 },
	{ "jgt x unsigned", JMP_X(BPF_JGT, 0x80000000, 1), 0, 1 },
	{ "jge x false", JMP_X(BPF_JGE, 1, 2), 0, 2 },
	{ "jset x true", JMP_X(BPF_JSET, 0x80000000, 0x80000001), 0, 1 },
	{ "jset x false", JMP_X(BPF_JSET, 2, 1), 0, 2 },
	{ "jump both ways", { LDI(3), J(BPF_JMP | BPF_JGT | BPF_K, 2, 2, 1), S(BPF_RET | BPF_K, 9),
			      S(BPF_RET | BPF_K, 10), S(BPF_RET | BPF_K, 11) }, 0, 11 },
	{ "jump both ways false", { LDI(1), J(BPF_JMP | BPF_JGT | BPF_K, 2, 2, 1),
				    S(BPF_RET | BPF_K, 9), S(BPF_RET | BPF_K, 10),
				    S(BPF_RET | BPF_K, 11) }, 0, 10 },
	{ "jset jt=0 true", { LDI(4), J(BPF_JMP | BPF_JSET | BPF_K, 4, 0, 1),
			      S(BPF_RET | BPF_K, 1), S(BPF_RET | BPF_K, 2) }, 0, 1 },
	{ "jset jt=0 false", { LDI(4), J(BPF_JMP | BPF_JSET | BPF_K, 3, 0, 1),
			       S(BPF_RET | BPF_K, 1), S(BPF_RET | BPF_K, 2) }, 0, 2 },
	{ "jt == jf", { LDI(4), J(BPF_JMP | BPF_JEQ | BPF_K, 3, 1, 1), S(BPF_RET | BPF_K, 1),
			S(BPF_RET | BPF_K, 2) }, 0, 2 },
	{ "jt == jf == 0", { LDI(4), J(BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 0), S(BPF_RET | BPF_K, 1) },
	  0, 1 },
	{ "ja", { S(BPF_JMP | BPF_JA, 1), S(BPF_RET | BPF_K, 1), S(BPF_RET | BPF_K, 2) }, 0, 2 },
	{ "ja 0", { S(BPF_JMP | BPF_JA, 0), S(BPF_RET | BPF_K, 1) }, 0, 1 },
	{ "mem written on both paths", { S(BPF_LD | BPF_B | BPF_ABS, 23),
					 J(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 2), LDI(1),
					 S(BPF_JMP | BPF_JA, 1), LDI(2), S(BPF_ST, 4), LDI(0),
					 S(BPF_LD | BPF_MEM, 4), RET_A }, 0, 1 },
	{ "tcp syn filter", { S(BPF_LD | BPF_H | BPF_ABS, 12),
			      J(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, 6),
			      S(BPF_LD | BPF_B | BPF_ABS, 23),
			      J(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 4),
			      S(BPF_LDX | BPF_B | BPF_MSH, 14),
			      S(BPF_LD | BPF_B | BPF_IND, 27),
			      J(BPF_JMP | BPF_JSET | BPF_K, 0x02, 0, 1),
			      S(BPF_RET | BPF_K, 262144), S(BPF_RET | BPF_K, 0) }, 0, 262144 },
	{ "anc xor x", { LDI(0xff), LDXI(0x0f), S(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_ALU_XOR_X),
			 RET_A }, 0, 0xf0, NO_PCAP },
	{ "anc protocol", { S(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL), RET_A }, 0,
	  0x0800, NO_PCAP },
	{ "ll off", { S(BPF_LD | BPF_H | BPF_ABS, (uint32_t)(SKF_LL_OFF + 12)), RET_A }, 0, 0x0800,
	  NO_PCAP | NO_KERNEL },
	{ "msh ancillary range fails", { S(BPF_LDX | BPF_B | BPF_MSH, SKF_AD_OFF + SKF_AD_PROTOCOL),
					  S(BPF_RET | BPF_K, 9) }, 0, 0, NO_PCAP },
	{ "msh ll off", { LDI(7), S(BPF_LDX | BPF_B | BPF_MSH, (uint32_t)(SKF_LL_OFF + 14)),
			  S(BPF_ALU | BPF_ADD | BPF_X, 0), RET_A }, 0, 27, NO_PCAP | NO_KERNEL },
	{ "below ll off", { S(BPF_LD | BPF_H | BPF_ABS, (uint32_t)(SKF_LL_OFF - 4)),
			    S(BPF_RET | BPF_K, 9) }, 0, 0 },
};

static size_t prog_len(const struct sock_filter *p)
{
	size_t n = MAXC;

	while (n > 0 && p[n - 1].code == 0 && p[n - 1].k == 0 && p[n - 1].jt == 0 &&
	       p[n - 1].jf == 0)
		n--;
	return n;
}

static const struct {
	enum bpfrt_engine engine;
	const char *name;
} engines[] = {
	{ BPFRT_ENGINE_INTERP, "interp" },
	{ BPFRT_ENGINE_CHECKED, "checked" },
	{ BPFRT_ENGINE_JIT, "jit" },
};

static void test_run_cases(int kernel)
{
	for (size_t i = 0; i < sizeof(run_cases) / sizeof(run_cases[0]); i++) {
		const struct run_case *c = &run_cases[i];
		size_t n = prog_len(c->prog), nout = 0;
		uint32_t wire = c->wirelen ? c->wirelen : sizeof(pkt);
		struct bpf_insn *out = NULL;
		char err[256] = "";
		int ret;

		T_CASE(c->name);
		ret = brt_cbpf_convert(c->prog, n, &out, &nout, err, sizeof(err));
		T_EQ_INT(0, ret);
		if (ret) {
			T_FAIL("%s", err);
			continue;
		}
		T_EQ_INT(0, brt_isa_check_prog(out, nout, 100000, err, sizeof(err)));

		if (!(c->flags & NO_PCAP) && brt_pcap_available()) {
			struct brt_pcap_classic *pc;

			T_EQ_INT(0, brt_pcap_classic_new(c->prog, n, &pc));
			T_EQ_U64(c->expect, brt_pcap_classic_run(pc, pkt, wire, sizeof(pkt)));
			brt_pcap_classic_free(pc);
		}
		for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
			BPFRT_OPTS(bpfrt_pkt_filter_opts, o, .engine = engines[e].engine);
			struct bpfrt_pkt_filter *f;
			struct __sk_buff skb = { .len = wire, .protocol = htons(0x0800) };
			uint32_t rv = 0xbad;

			ret = bpfrt_pkt_filter_load(out, nout, &o, &f, err, sizeof(err));
			if (ret == -EOPNOTSUPP)
				continue;
			T_EQ_INT(0, ret);
			if (ret)
				continue;
			T_EQ_INT(0, brt_pkt_filter_run_skb(f, pkt, sizeof(pkt), &skb, &rv, err,
							   sizeof(err)));
			if (rv != c->expect)
				T_FAIL("engine %s: expected 0x%x, got 0x%x", engines[e].name,
				       c->expect, rv);
			else
				T_OK();
			bpfrt_pkt_filter_free(f);
		}
		if (kernel && !(c->flags & NO_KERNEL)) {
			char log[4096];
			uint32_t rv = 0;
			int fd = kref_load(out, nout, log, sizeof(log));

			if (fd < 0) {
				T_FAIL("kernel refused the converted program: %s", log);
			} else {
				T_EQ_INT(0, kref_run(fd, pkt, sizeof(pkt), &rv));
				T_EQ_U64(c->expect, rv);
				close(fd);
			}
		}
		free(out);
	}
}

/* ---- bad programs ---- */

struct bad_case {
	const char *name;
	struct sock_filter prog[MAXC];
	size_t len; /* 0: prog_len() */
	const char *errstr;
};

static const struct bad_case bad_cases[] = {
	{ "unknown opcode", { S(0xff, 0), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: unknown opcode 0xff" },
	{ "ret x", { S(BPF_RET | BPF_X, 0) }, 0, "cbpf insn 0: unknown opcode 0x0e" },
	{ "opcode above 255", { S(BPF_RET | BPF_K, 0), S(0x106, 0) }, 0,
	  "cbpf insn 1: unknown opcode 0x106" },
	{ "ld h imm", { S(BPF_LD | BPF_H | BPF_IMM, 0), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: unknown opcode 0x08" },
	{ "ebpf jne", { J(BPF_JMP | BPF_JNE | BPF_K, 0, 0, 0), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: unknown opcode 0x55" },
	{ "jt out of range", { J(BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0), S(BPF_RET | BPF_K, 0),
			       S(BPF_RET | BPF_K, 1) }, 0,
	  "cbpf insn 0: jump target 6 is past the end (program has 3 insns)" },
	{ "jf out of range", { LDI(0), J(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1), S(BPF_RET | BPF_K, 0) },
	  0, "cbpf insn 1: jump target 3 is past the end" },
	{ "ja out of range", { S(BPF_JMP | BPF_JA, 0xffffffff), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: jump target 4294967296 is past the end" },
	{ "jump to the last+1", { S(BPF_JMP | BPF_JA, 1), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: jump target 2 is past the end" },
	{ "no ret", { LDI(0) }, 1, "cbpf insn 0: last instruction is not a return" },
	{ "alu last", { LDI(0), S(BPF_RET | BPF_K, 0), S(BPF_ALU | BPF_ADD | BPF_K, 0) }, 3,
	  "cbpf insn 2: last instruction is not a return" },
	{ "st slot 16", { S(BPF_ST, 16), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: scratch slot M[16] out of range (0-15)" },
	{ "ldx mem slot", { LDI(0), S(BPF_ST, 1), S(BPF_LDX | BPF_MEM, 99), S(BPF_RET | BPF_K, 0) },
	  0, "cbpf insn 2: scratch slot M[99] out of range" },
	{ "div k 0", { S(BPF_ALU | BPF_DIV | BPF_K, 0), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: division or modulo by constant 0" },
	{ "mod k 0", { LDI(1), S(BPF_ALU | BPF_MOD | BPF_K, 0), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 1: division or modulo by constant 0" },
	{ "lsh k 32", { S(BPF_ALU | BPF_LSH | BPF_K, 32), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: shift by constant 32 (must be below 32)" },
	{ "rsh k huge", { S(BPF_ALU | BPF_RSH | BPF_K, 0xffffffff), S(BPF_RET | BPF_K, 0) }, 0,
	  "cbpf insn 0: shift by constant 4294967295" },
	{ "mem read uninit", { S(BPF_LD | BPF_MEM, 2), RET_A }, 0,
	  "cbpf insn 0: reads M[2] before it is written" },
	{ "mem read other slot", { S(BPF_ST, 1), S(BPF_LDX | BPF_MEM, 2), RET_A }, 0,
	  "cbpf insn 1: reads M[2] before it is written" },
	{ "mem written on one path", { S(BPF_LD | BPF_B | BPF_ABS, 23),
				       J(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 1), S(BPF_ST, 4),
				       S(BPF_LD | BPF_MEM, 4), RET_A }, 0,
	  "cbpf insn 3: reads M[4] before it is written" },
	{ "mem written after jump target", { S(BPF_JMP | BPF_JA, 1), S(BPF_ST, 0),
					     S(BPF_LD | BPF_MEM, 0), RET_A }, 0,
	  "cbpf insn 2: reads M[0] before it is written" },
	{ "anc cpu", { S(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_CPU), RET_A }, 0,
	  "cbpf insn 0: ancillary load SKF_AD_CPU is not supported" },
	{ "anc unknown", { S(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + 100), RET_A }, 0,
	  "cbpf insn 0: unknown ancillary load SKF_AD_OFF+100" },
	{ "msh net off", { S(BPF_LDX | BPF_B | BPF_MSH, (uint32_t)SKF_NET_OFF), RET_A }, 0,
	  "cbpf insn 0: load relative to the network header (SKF_NET_OFF) is not supported" },
	{ "net off", { S(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF + 9), RET_A }, 0,
	  "cbpf insn 0: load relative to the network header (SKF_NET_OFF) is not supported" },
};

static void test_bad_cases(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct bpf_insn *out = NULL;
		size_t nout = 0;
		char err[256] = "";

		T_CASE(c->name);
		T_EQ_INT(-EINVAL, brt_cbpf_convert(c->prog, c->len ? c->len : prog_len(c->prog),
						   &out, &nout, err, sizeof(err)));
		T_CONTAINS(c->errstr, err);
		T_ASSERT(out == NULL);
	}
}

static void test_sizes(void)
{
	struct sock_filter *big = calloc(BPF_MAXINSNS + 1, sizeof(*big));
	struct bpf_insn *out = NULL;
	size_t nout;
	char err[256] = "";

	T_CASE("empty");
	T_EQ_INT(-EINVAL, brt_cbpf_convert(big, 0, &out, &nout, err, sizeof(err)));
	T_CONTAINS("cbpf: empty program", err);

	/* the longest program, every insn the widest expansion (MSH with A live after it: the
	 * program returns A), one jump over it all */
	T_CASE("longest");
	big[0] = (struct sock_filter)J(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1);
	big[1] = (struct sock_filter)S(BPF_JMP | BPF_JA, BPF_MAXINSNS - 3);
	for (size_t i = 2; i < BPF_MAXINSNS - 1; i++)
		big[i] = (struct sock_filter)S(BPF_LDX | BPF_B | BPF_MSH, 14);
	big[BPF_MAXINSNS - 1] = (struct sock_filter)RET_A;
	T_EQ_INT(0, brt_cbpf_convert(big, BPF_MAXINSNS, &out, &nout, err, sizeof(err)));
	/* r6 = r1, w0 = 0 (A is read first; X is not), jne, ja, MSHs, exit */
	T_EQ_INT(2 + 1 + 1 + 6 * (BPF_MAXINSNS - 3) + 1, nout);
	T_EQ_INT(6 * (BPF_MAXINSNS - 3), out[3].off); /* the ja lands on the return */
	free(out);

	/* unreachable classic insns are left out: eBPF verifiers refuse dead code */
	T_CASE("dead code");
	{
		static const struct sock_filter dead[] = {
			S(BPF_JMP | BPF_JA, 2), LDI(1), LDI(2), S(BPF_RET | BPF_K, 3),
		};
		T_EQ_INT(0, brt_cbpf_convert(dead, 4, &out, &nout, err, sizeof(err)));
		T_EQ_INT(1 + 1 + 2, nout); /* r6 = r1 (A, X unread), ja, ret */
		T_EQ_INT(0, out[1].off);
		free(out);
	}

	/* A and X are zeroed only when read before written; A is saved around MSH only when
	 * read after it */
	T_CASE("liveness");
	{
		static const struct {
			struct sock_filter p[4];
			size_t len, n;
		} lv[] = {
			{ { S(BPF_LDX | BPF_B | BPF_MSH, 14), S(BPF_LD | BPF_H | BPF_IND, 14), RET_A },
			  3, 1 + 4 + 1 + 1 },
			{ { LDI(1), S(BPF_LDX | BPF_B | BPF_MSH, 14), RET_A }, 3, 1 + 1 + 6 + 1 },
			{ { S(BPF_MISC | BPF_TXA, 0), RET_A }, 2, 1 + 1 + 1 + 1 },
			{ { S(BPF_ALU | BPF_ADD | BPF_X, 0), RET_A }, 2, 1 + 2 + 1 + 1 },
			{ { LDI(1), S(BPF_RET | BPF_K, 0) }, 2, 1 + 1 + 2 },
		};
		for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
			T_EQ_INT(0, brt_cbpf_convert(lv[i].p, lv[i].len, &out, &nout, err,
						     sizeof(err)));
			T_EQ_INT(lv[i].n, nout);
			free(out);
		}
	}

	T_CASE("too long");
	big[BPF_MAXINSNS] = (struct sock_filter)S(BPF_RET | BPF_K, 3);
	T_EQ_INT(-EINVAL, brt_cbpf_convert(big, BPF_MAXINSNS + 1, &out, &nout, err, sizeof(err)));
	T_CONTAINS("cbpf: program has 4097 insns, classic BPF allows at most 4096", err);
	free(big);
}

/* The public wrapper: errno set, NULL err allowed. */
static void test_public(void)
{
	static const struct sock_filter ok[] = { S(BPF_RET | BPF_K, 1) };
	static const struct sock_filter bad[] = { LDI(1) };
	struct bpf_insn *out = NULL;
	size_t n = 0;

	T_CASE("public ok");
	T_EQ_INT(0, bpfrt_cbpf_convert(ok, 1, &out, &n, NULL, 0));
	T_EQ_INT(3, n);
	free(out);
	T_CASE("public bad");
	errno = 0;
	T_EQ_INT(-EINVAL, bpfrt_cbpf_convert(bad, 1, &out, &n, NULL, 0));
	T_EQ_INT(EINVAL, errno);
	T_EQ_INT(-EINVAL, bpfrt_cbpf_convert(ok, 1, NULL, &n, NULL, 0));
}

int main(void)
{
	int kernel = kref_usable();

	test_run_cases(kernel);
	test_bad_cases();
	test_sizes();
	test_public();
	return t_done();
}
