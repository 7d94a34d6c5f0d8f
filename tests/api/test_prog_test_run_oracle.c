/* test_prog_test_run_oracle.c - BPF_PROG_TEST_RUN of flow_dissector and sk_lookup programs
 * against the kernel's (bpf_prog_test_run_flow_dissector(), bpf_prog_test_run_sk_lookup();
 * src/api/test_run.c).  One script loads each program and runs it on each input on the
 * kernel's bpf() and on bpfrt_bpf() (interpreter, checked engine, JIT), a line per run:
 * errno, retval, data_size_out and the flow keys, ctx_out and its size, and the program's
 * map value (the sk_lookup programs copy every context field they may read there, with
 * each load size).  The transcripts must be equal line by line.
 * Root only (the kernel side); otherwise skipped.
 */
#include <arpa/inet.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#define TRANSCRIPT_SIZE (1 << 20)
#include "transcript.h"
#include "sock_set.h"
#include "verifier/cases/case.h"

#define MAX_INSNS 512
#define VALUE_SIZE 256 /* the record map's value: room for every field at every size */

struct prog {
	const char *name;
	const struct bpf_insn *insns;
	size_t len;
	int map; /* insns name map 0 (LD_MAP imm 0): the record map */
};

/* ---- flow dissector programs ----------------------------------------------------------- */
#define KEYS(r) LDX(BPF_DW, r, 1, 144) /* r = ctx->flow_keys */
#define SET_OFFS(nh, th)                                                                  \
	KEYS(2), ST(BPF_H, 2, 0, nh), ST(BPF_H, 2, 2, th), MOV64_IMM(0, 0), EXIT()

/* byte-wise and word-wise steps the programs below repeat */
#define B(o) LDX(BPF_B, 3, 2, o), ALU64_REG(BPF_ADD, 0, 3)
#define W(o) ST(BPF_B, 2, o, (o) * 7 + 1)
#define C6(o) LDX(BPF_W, 4, 2, 22 + (o)), STX(BPF_W, 9, 4, 16 + (o))

static const struct prog fd_progs[] = {
	{ "ret 0", PROG(MOV64_IMM(0, 0), EXIT()) },
	{ "ret 2 (BPF_DROP)", PROG(MOV64_IMM(0, 2), EXIT()) },
	{ "ret -1", PROG(MOV64_IMM(0, -1), EXIT()) },
	{ "offsets 0 0", PROG(SET_OFFS(0, 0)) },
	{ "offsets 20 40", PROG(SET_OFFS(20, 40)) },
	{ "offsets 100 200", PROG(SET_OFFS(100, 200)) },
	{ "offsets 65535 5", PROG(SET_OFFS(0xffff, 5)) },
	{ "offsets 30 10", PROG(SET_OFFS(30, 10)) },
	{ "offsets 14 5000", PROG(SET_OFFS(14, 5000)) },
	/* what the program is given: n_proto, flags and nhoff copied elsewhere */
	{ "copy inputs", PROG(KEYS(2), LDX(BPF_H, 3, 2, 10), STX(BPF_H, 2, 3, 12),
			      LDX(BPF_W, 3, 2, 48), STX(BPF_W, 2, 3, 52), LDX(BPF_H, 3, 2, 0),
			      STX(BPF_H, 2, 3, 14), LDX(BPF_H, 3, 2, 2), STX(BPF_H, 2, 3, 4),
			      MOV64_IMM(0, 0), EXIT()) },
	/* the sum of every byte of the keys at entry, as the return value */
	{ "sum of keys", PROG(KEYS(2), MOV64_IMM(0, 0),
			      B(0), B(1), B(2), B(3), B(4), B(5), B(6), B(7), B(8), B(9), B(10),
			      B(11), B(12), B(13), B(14), B(15), B(16), B(17), B(18), B(19),
			      B(20), B(21), B(22), B(23), B(24), B(25), B(26), B(27), B(28),
			      B(29), B(30), B(31), B(32), B(33), B(34), B(35), B(36), B(37),
			      B(38), B(39), B(40), B(41), B(42), B(43), B(44), B(45), B(46),
			      B(47), B(48), B(49), B(50), B(51), B(52), B(53), B(54), B(55),
			      EXIT()) },
	/* every byte written: nhoff and thoff clamped afterwards */
	{ "write every byte", PROG(KEYS(2),
				   W(0), W(1), W(2), W(3), W(4), W(5), W(6), W(7), W(8), W(9),
				   W(10), W(11), W(12), W(13), W(14), W(15), W(16), W(17), W(18),
				   W(19), W(20), W(21), W(22), W(23), W(24), W(25), W(26), W(27),
				   W(28), W(29), W(30), W(31), W(32), W(33), W(34), W(35), W(36),
				   W(37), W(38), W(39), W(40), W(41), W(42), W(43), W(44), W(45),
				   W(46), W(47), W(48), W(49), W(50), W(51), W(52), W(53), W(54),
				   W(55),
				   MOV64_IMM(0, 0), EXIT()) },
	/* data_end - data into ipv4_src */
	{ "packet length", PROG(LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), ALU64_REG(BPF_SUB, 3, 2),
				KEYS(4), STX(BPF_W, 4, 3, 16), MOV64_IMM(0, 0), EXIT()) },
	/* bpf_skb_load_bytes: the kernel's test run has no skb (-EFAULT, buffer zeroed) */
	{ "skb_load_bytes", PROG(MOV64_REG(6, 1), ST(BPF_DW, 10, -8, -1), MOV64_IMM(2, 12),
				 MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8), MOV64_IMM(4, 4),
				 CALL(BPF_FUNC_skb_load_bytes), MOV64_REG(1, 6), KEYS(2),
				 STX(BPF_W, 2, 0, 52), LDX(BPF_DW, 3, 10, -8), STX(BPF_DW, 2, 3, 16),
				 MOV64_IMM(0, 0), EXIT()) },
	/* a small IPv4 dissector: addresses, protocol, ports, thoff from the IHL */
	{ "ipv4 dissector", PROG(
		LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), KEYS(9),
		MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 34), JREG(BPF_JLE, 4, 3, 2),
		MOV64_IMM(0, 2), EXIT(),
		LDX(BPF_H, 4, 2, 12), JIMM(BPF_JEQ, 4, 0x0008, 2), MOV64_IMM(0, 2), EXIT(),
		ST(BPF_H, 9, 4, 0x0800), LDX(BPF_B, 4, 2, 23), STX(BPF_B, 9, 4, 9),
		LDX(BPF_W, 4, 2, 26), STX(BPF_W, 9, 4, 16), LDX(BPF_W, 4, 2, 30),
		STX(BPF_W, 9, 4, 20), LDX(BPF_H, 4, 2, 20), ALU64_IMM(BPF_AND, 4, 0xff3f),
		JIMM(BPF_JEQ, 4, 0, 1), ST(BPF_B, 9, 6, 1),
		LDX(BPF_B, 5, 2, 14), ALU64_IMM(BPF_AND, 5, 15), ALU64_IMM(BPF_LSH, 5, 2),
		MOV64_REG(4, 5), ALU64_IMM(BPF_ADD, 4, 14), STX(BPF_H, 9, 4, 2),
		MOV64_REG(6, 2), ALU64_IMM(BPF_ADD, 6, 14), ALU64_REG(BPF_ADD, 6, 5),
		MOV64_REG(7, 6), ALU64_IMM(BPF_ADD, 7, 4), JREG(BPF_JLE, 7, 3, 2),
		MOV64_IMM(0, 0), EXIT(),
		LDX(BPF_H, 4, 6, 0), STX(BPF_H, 9, 4, 12), LDX(BPF_H, 4, 6, 2), STX(BPF_H, 9, 4, 14),
		MOV64_IMM(0, 0), EXIT()) },
	/* IPv6: addresses into ipv6_src/dst, next header, thoff 54 */
	{ "ipv6 dissector", PROG(
		LDX(BPF_W, 2, 1, 76), LDX(BPF_W, 3, 1, 80), KEYS(9),
		MOV64_REG(4, 2), ALU64_IMM(BPF_ADD, 4, 54), JREG(BPF_JLE, 4, 3, 2),
		MOV64_IMM(0, 2), EXIT(),
		LDX(BPF_H, 4, 2, 12), JIMM(BPF_JEQ, 4, 0xdd86, 2), MOV64_IMM(0, 2), EXIT(),
		ST(BPF_H, 9, 4, 0x86dd), LDX(BPF_B, 4, 2, 20), STX(BPF_B, 9, 4, 9),
		C6(0), C6(4), C6(8), C6(12), C6(16), C6(20), C6(24), C6(28),
		LDX(BPF_W, 4, 2, 14), ALU64_IMM(BPF_AND, 4, 0xffff0f00), STX(BPF_W, 9, 4, 52),
		ST(BPF_H, 9, 2, 54), ST(BPF_H, 9, 0, 14), MOV64_IMM(0, 0), EXIT()) },
	/* a map: counts runs (repeat) and keeps the last n_proto */
	{ "map counter", PROG(MOV64_REG(6, 1), LOOKUP_MAP0, JIMM(BPF_JNE, 0, 0, 2),
			      MOV64_IMM(0, 2), EXIT(), MOV64_IMM(1, 1),
			      ATOMIC(BPF_DW, 0, 1, 0, BPF_ADD), MOV64_REG(1, 6), KEYS(2),
			      LDX(BPF_H, 3, 2, 10), STX(BPF_H, 0, 3, 8), MOV64_IMM(0, 0), EXIT()),
	  .map = 1 },
};

struct fd_input {
	const char *name;
	const unsigned char *pkt; /* NULL: pattern of len bytes */
	uint32_t len;
	const void *ctx; /* ctx_in */
	uint32_t ctx_len;
	uint32_t ctx_out; /* ctx_size_out (0: none) */
	uint32_t size_out; /* data_size_out hint */
	int no_data_out;
	uint32_t repeat, flags, cpu;
};

static const unsigned char ipv4_tcp[54] = {
	0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00, /* Ethernet */
	0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
	0x04, 0xd2, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0
};
static const unsigned char ipv4_opts_frag[66] = {
	0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00,
	0x47, 0, 0, 52, 0, 1, 0x20, 0x10, 64, 17, 0, 0, 192, 168, 1, 1, 192, 168, 1, 2,
	1, 1, 1, 1, 1, 1, 1, 1, 0x30, 0x39, 0x00, 0x35, 0, 12, 0, 0, 'x', 'y', 'z', 'w',
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
};
static const unsigned char ipv6_udp[62] = {
	0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x86, 0xdd,
	0x60, 0x0a, 0xbc, 0xde, 0, 8, 17, 64,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
	0x30, 0x39, 0x00, 0x35, 0, 8, 0, 0
};
static const unsigned char arp[42] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 2, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1
};
static const unsigned char vlan[60] = {
	0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x81, 0x00, 0, 5, 0x08, 0x00,
	0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2
};

/* struct bpf_flow_keys as ctx_in: flags at 48, the rest must be zero */
static const unsigned char keys_flags5[56] = { [48] = 5 };
static const unsigned char keys_flags_all[56] = { [48] = 0xff, 0xff, 0xff, 0xff };
static const unsigned char keys_nhoff[56] = { [0] = 1 };
static const unsigned char keys_label[56] = { [52] = 1 };
static const unsigned char keys_64_zero_tail[64] = { [48] = 1 };
static const unsigned char keys_64_tail[64] = { [48] = 1, [60] = 1 };
static const unsigned char keys_short[10] = { 0 };

static const struct fd_input fd_inputs[] = {
	{ "ipv4 tcp", ipv4_tcp, sizeof(ipv4_tcp), NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "ipv4 options frag", ipv4_opts_frag, sizeof(ipv4_opts_frag), NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "ipv6 udp", ipv6_udp, sizeof(ipv6_udp), NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "arp", arp, sizeof(arp), NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "vlan", vlan, sizeof(vlan), NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "eth only", ipv4_tcp, 14, NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "13 bytes", ipv4_tcp, 13, NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "0 bytes", NULL, 0, NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "ipv4 truncated 30", ipv4_tcp, 30, NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "4096 bytes", NULL, 4096, NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "4097 bytes", NULL, 4097, NULL, 0, 0, 0, 0, 0, 0, 0 },
	{ "flags 5, ctx_out", ipv4_tcp, sizeof(ipv4_tcp), keys_flags5, 56, 56, 0, 0, 0, 0, 0 },
	{ "flags all ones", ipv4_tcp, sizeof(ipv4_tcp), keys_flags_all, 56, 56, 0, 0, 0, 0, 0 },
	{ "ctx nhoff set", ipv4_tcp, sizeof(ipv4_tcp), keys_nhoff, 56, 56, 0, 0, 0, 0, 0 },
	{ "ctx flow_label set", ipv4_tcp, sizeof(ipv4_tcp), keys_label, 56, 0, 0, 0, 0, 0, 0 },
	{ "ctx 64 zero tail", ipv6_udp, sizeof(ipv6_udp), keys_64_zero_tail, 64, 64, 0, 0, 0, 0, 0 },
	{ "ctx 64 tail", ipv6_udp, sizeof(ipv6_udp), keys_64_tail, 64, 64, 0, 0, 0, 0, 0 },
	{ "ctx 10 bytes", ipv4_tcp, sizeof(ipv4_tcp), keys_short, 10, 56, 0, 0, 0, 0, 0 },
	{ "ctx_out only", ipv4_tcp, sizeof(ipv4_tcp), NULL, 0, 56, 0, 0, 0, 0, 0 },
	{ "ctx_out 8", ipv4_tcp, sizeof(ipv4_tcp), keys_flags5, 56, 8, 0, 0, 0, 0, 0 },
	{ "data_size_out 8", ipv4_tcp, sizeof(ipv4_tcp), keys_flags5, 56, 56, 8, 0, 0, 0, 0 },
	{ "no data_out, hint 8", ipv4_tcp, sizeof(ipv4_tcp), NULL, 0, 0, 8, 1, 0, 0, 0 },
	{ "no data_out", ipv4_tcp, sizeof(ipv4_tcp), NULL, 0, 0, 0, 1, 0, 0, 0 },
	{ "repeat 5", ipv6_udp, sizeof(ipv6_udp), NULL, 0, 0, 0, 0, 5, 0, 0 },
	{ "test flags 1", ipv4_tcp, sizeof(ipv4_tcp), NULL, 0, 0, 0, 0, 0, 1, 0 },
	{ "cpu 1", ipv4_tcp, sizeof(ipv4_tcp), NULL, 0, 0, 0, 0, 0, 0, 1 },
};

/* ---- sk_lookup programs ---------------------------------------------------------------- */
/* r7 = the record map's value (return 0 when missing), r6 = ctx */
#define RECORD_VALUE                                                                      \
	MOV64_REG(6, 1), LOOKUP_MAP0, JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(),     \
		MOV64_REG(7, 0)
#define CP(sz, o, at) LDX(sz, 1, 6, o), STX(sz, 7, 1, at)

#define H(o) CP(BPF_H, o, (o) + 64)
#define Q(o) CP(BPF_B, o, (o) + 128), CP(BPF_B, (o) + 1, (o) + 129)

static const struct prog sl_progs[] = {
	{ "ret 1", PROG(MOV64_IMM(0, 1), EXIT()) },
	{ "ret 0", PROG(MOV64_IMM(0, 0), EXIT()) },
	{ "sk is NULL", PROG(LDX(BPF_DW, 2, 1, 0), MOV64_IMM(0, 1), JIMM(BPF_JEQ, 2, 0, 1),
			     MOV64_IMM(0, 0), EXIT()) },
	{ "u32 fields", PROG(RECORD_VALUE,
			     CP(BPF_W, 8, 8), CP(BPF_W, 12, 12), CP(BPF_W, 16, 16),
			     CP(BPF_W, 20, 20), CP(BPF_W, 24, 24), CP(BPF_W, 28, 28),
			     CP(BPF_W, 32, 32), CP(BPF_W, 36, 36), CP(BPF_W, 40, 40),
			     CP(BPF_W, 44, 44), CP(BPF_W, 48, 48), CP(BPF_W, 52, 52),
			     CP(BPF_W, 56, 56), CP(BPF_W, 60, 60), CP(BPF_W, 64, 64),
			     MOV64_IMM(0, 1), EXIT()), .map = 1 },
	{ "u16 fields", PROG(RECORD_VALUE,
			     H(8), H(10), H(12), H(14), H(16), H(18), H(20), H(22), H(24),
			     H(26), H(28), H(30), H(32), H(34), H(36), H(38), H(40), H(42),
			     H(44), H(46), H(48), H(50), H(52), H(54), H(56), H(58), H(60),
			     H(62), H(64), H(66),
			     MOV64_IMM(0, 1), EXIT()), .map = 1 },
	{ "u8 fields", PROG(RECORD_VALUE,
			    Q(8), Q(10), Q(12), Q(14), Q(16), Q(18), Q(20), Q(22), Q(24),
			    Q(26), Q(28), Q(30), Q(32), Q(34), Q(36), Q(38), Q(40), Q(42),
			    Q(44), Q(46), Q(48), Q(50), Q(52), Q(54), Q(56), Q(58), Q(60),
			    Q(62), Q(64), Q(66),
			    MOV64_IMM(0, 1), EXIT()), .map = 1 },
	/* the verdict from the context: pass TCP, drop the rest; count runs */
	{ "pass tcp, count", PROG(RECORD_VALUE, MOV64_IMM(1, 1), ATOMIC(BPF_DW, 7, 1, 200, BPF_ADD),
				  LDX(BPF_W, 1, 6, 12), MOV64_IMM(0, 0), JIMM(BPF_JNE, 1, 6, 1),
				  MOV64_IMM(0, 1), EXIT()), .map = 1 },
	/* port-based: pass local port 80 only */
	{ "pass port 80", PROG(LDX(BPF_W, 2, 1, 60), MOV64_IMM(0, 0), JIMM(BPF_JNE, 2, 80, 1),
			       MOV64_IMM(0, 1), EXIT()) },
};

/* struct bpf_sk_lookup as bytes (72) */
struct sl_ctx {
	unsigned char b[80];
};

static void put32(unsigned char *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static void put16(unsigned char *b, size_t off, uint16_t v)
{
	memcpy(b + off, &v, 2);
}

/* family, protocol, remote ip4/port, local ip4/port; ip6 words filled too (the kernel
 * keeps only the family's addresses) */
static struct sl_ctx sl_make(uint32_t family, uint32_t proto, uint32_t lport)
{
	struct sl_ctx c;

	memset(&c, 0, sizeof(c));
	put32(c.b, 8, family);
	put32(c.b, 12, proto);
	put32(c.b, 16, htonl(0x7f000001));
	for (int i = 0; i < 4; i++) {
		put32(c.b, 20 + 4 * (size_t)i, htonl(0x20010db8u + (uint32_t)i));
		put32(c.b, 44 + 4 * (size_t)i, htonl(0xfe800000u + (uint32_t)i));
	}
	put16(c.b, 36, htons(4321));
	put32(c.b, 40, htonl(0x7f000002));
	put32(c.b, 60, lport);
	return c;
}

struct sl_input {
	const char *name;
	struct sl_ctx ctx;
	uint32_t ctx_len; /* 0: no ctx_in */
	uint32_t ctx_out;
	int data_in, size_out;
	uint32_t repeat, flags;
};

static struct sl_input sl_inputs[32];
static int have_socks; /* make_socks() worked */
static int cg_root = -1, cg_child = -1; /* the cgroup v2 root, a child we are not in */
static char cg_child_path[128];
static int have_perf; /* open_perf_events() worked, on CPU 0 */
static size_t n_sl_inputs;

static void sl_add(const char *name, struct sl_ctx c, uint32_t len, uint32_t out, int data_in,
		   int size_out, uint32_t repeat, uint32_t flags)
{
	sl_inputs[n_sl_inputs++] = (struct sl_input){ name, c, len, out, data_in, size_out,
						      repeat, flags };
}

static void sl_build_inputs(void)
{
	struct sl_ctx c;

	sl_add("v4 tcp", sl_make(AF_INET, 6, 80), 72, 72, 0, 0, 0, 0);
	sl_add("v4 udp port 53", sl_make(AF_INET, 17, 53), 72, 72, 0, 0, 0, 0);
	sl_add("v6 tcp", sl_make(AF_INET6, 6, 80), 72, 72, 0, 0, 0, 0);
	sl_add("v6 udp", sl_make(AF_INET6, 17, 443), 72, 72, 0, 0, 0, 0);
	sl_add("family 0x10002 proto 0x10006", sl_make(0x10002, 0x10006, 80), 72, 72, 0, 0, 0, 0);
	sl_add("family unix", sl_make(AF_UNIX, 6, 80), 72, 72, 0, 0, 0, 0);
	sl_add("family 0", sl_make(0, 6, 80), 72, 72, 0, 0, 0, 0);
	sl_add("local port 65535", sl_make(AF_INET, 6, 65535), 72, 72, 0, 0, 0, 0);
	sl_add("local port 65536", sl_make(AF_INET, 6, 65536), 72, 72, 0, 0, 0, 0);
	c = sl_make(AF_INET, 6, 80);
	c.b[0] = 1;
	sl_add("sk set", c, 72, 72, 0, 0, 0, 0);
	c = sl_make(AF_INET, 6, 80);
	c.b[64] = 1;
	sl_add("ingress_ifindex set", c, 72, 72, 0, 0, 0, 0);
	c = sl_make(AF_INET, 6, 80);
	c.b[68] = 1;
	sl_add("padding after ifindex set", c, 72, 72, 0, 0, 0, 0);
	c = sl_make(AF_INET, 6, 80);
	c.b[38] = 0xaa;
	c.b[39] = 0x55;
	sl_add("remote_port padding set", c, 72, 72, 0, 0, 0, 0);
	sl_add("ctx 80 zero tail", sl_make(AF_INET6, 6, 80), 80, 80, 0, 0, 0, 0);
	c = sl_make(AF_INET6, 6, 80);
	c.b[76] = 1;
	sl_add("ctx 80 tail set", c, 80, 80, 0, 0, 0, 0);
	sl_add("ctx 12 bytes", sl_make(AF_INET, 6, 80), 12, 72, 0, 0, 0, 0);
	sl_add("ctx 8 bytes", sl_make(AF_INET, 6, 80), 8, 72, 0, 0, 0, 0);
	sl_add("no ctx", sl_make(AF_INET, 6, 80), 0, 0, 0, 0, 0, 0);
	sl_add("ctx_out only", sl_make(AF_INET, 6, 80), 0, 72, 0, 0, 0, 0);
	sl_add("ctx_out 8", sl_make(AF_INET, 6, 80), 72, 8, 0, 0, 0, 0);
	sl_add("no ctx_out", sl_make(AF_INET, 6, 80), 72, 0, 0, 0, 0, 0);
	sl_add("data_in", sl_make(AF_INET, 6, 80), 72, 72, 1, 0, 0, 0);
	sl_add("data_size_out", sl_make(AF_INET, 6, 80), 72, 72, 0, 1, 0, 0);
	sl_add("repeat 3", sl_make(AF_INET, 6, 80), 72, 72, 0, 0, 3, 0);
	sl_add("test flags 1", sl_make(AF_INET, 6, 80), 72, 72, 0, 0, 0, 1);
}

/* ---- the script ------------------------------------------------------------------------ */
static void hex(struct transcript *t, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		say(t, "%02x", b[i]);
}

static int load_maps(sys_fn sys, struct transcript *t, uint32_t type, uint32_t attach,
		     uint32_t pflags, const struct prog *p, const int *map_fds);

/* load with the record map's fd patched in; the fd or -1 after saying why */
static int load(sys_fn sys, struct transcript *t, uint32_t type, uint32_t attach,
		uint32_t pflags, const struct prog *p, int map_fd)
{
	return load_maps(sys, t, type, attach, pflags, p, &map_fd);
}

/* load with map n's fd (LD_MAP imm n) patched in */
static int load_maps(sys_fn sys, struct transcript *t, uint32_t type, uint32_t attach,
		     uint32_t pflags, const struct prog *p, const int *map_fds)
{
	static char log[1 << 16];
	struct bpf_insn insns[MAX_INSNS];
	union bpf_attr a;
	int fd;

	memcpy(insns, p->insns, p->len * sizeof(insns[0]));
	for (size_t i = 0; i < p->len; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map_fds[insns[i].imm];
	prog_attr(&a, type, attach, insns, p->len);
	a.prog_flags = pflags;
	fd = prog_load_log(sys, &a, log, sizeof(log), 1);
	if (fd < 0) {
		say_load_error(t, p->name, fd, log);
		if (getenv("TEST_RUN_ORACLE_LOG"))
			fprintf(stderr, "%s: %s\n", p->name, log);
	}
	return fd;
}

static int mask_accepted; /* the run's socket is an accepted one */
static void mask_rx_queue(unsigned char *v);

static void say_map(sys_fn sys, struct transcript *t, int map_fd, size_t n)
{
	unsigned char v[VALUE_SIZE];
	uint32_t key = 0;

	if (map_fd < 0)
		return;
	memset(v, 0xee, sizeof(v));
	say(t, " map ");
	if (elem(sys, BPF_MAP_LOOKUP_ELEM, map_fd, &key, v, 0)) {
		say(t, "error");
		return;
	}
	if (mask_accepted)
		mask_rx_queue(v);
	hex(t, v, n);
}

static void reset_map(sys_fn sys, int map_fd)
{
	unsigned char v[VALUE_SIZE] = { 0 };
	uint32_t key = 0;

	if (map_fd >= 0)
		elem(sys, BPF_MAP_UPDATE_ELEM, map_fd, &key, v, 0);
}

/* One run of program fd on the IPv4 TCP packet with map rec zeroed first: "<name>: err E
 * retval R map <its first n bytes>" */
static void tcp_run(sys_fn sys, struct transcript *t, int fd, int rec, const char *name,
		    size_t n)
{
	union bpf_attr a;
	int err;

	reset_map(sys, rec);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)ipv4_tcp;
	a.test.data_size_in = sizeof(ipv4_tcp);
	err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
	say(t, "%s: err %d retval %#x", name, err, a.test.retval);
	say_map(sys, t, rec, n);
	say(t, "\n");
}

static void fd_run(sys_fn sys, struct transcript *t, int fd, int map_fd,
		   const struct prog *p, const struct fd_input *in)
{
	static unsigned char pattern[4200];
	unsigned char out[128], ctx_out[128];
	union bpf_attr a;
	int err;

	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(i * 13 + 7);
	memcpy(pattern, ipv4_tcp, sizeof(ipv4_tcp)); /* an IPv4 header, then noise */
	memset(out, 0xee, sizeof(out));
	memset(ctx_out, 0xee, sizeof(ctx_out));
	reset_map(sys, map_fd);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)(in->pkt ? in->pkt : pattern);
	a.test.data_size_in = in->len;
	if (!in->no_data_out)
		a.test.data_out = (uint64_t)(uintptr_t)out;
	a.test.data_size_out = in->size_out;
	if (in->ctx) {
		a.test.ctx_in = (uint64_t)(uintptr_t)in->ctx;
		a.test.ctx_size_in = in->ctx_len;
	}
	if (in->ctx_out) {
		a.test.ctx_out = (uint64_t)(uintptr_t)ctx_out;
		a.test.ctx_size_out = in->ctx_out;
	}
	a.test.repeat = in->repeat;
	a.test.flags = in->flags;
	a.test.cpu = in->cpu;
	err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
	t->steps++;
	say(t, "flow_dissector %s / %s: err %d", p->name, in->name, err);
	if (!err || err == -ENOSPC) {
		uint32_t n = a.test.data_size_out < sizeof(out) ? a.test.data_size_out : sizeof(out);

		say(t, " retval %#x size %u keys ", a.test.retval, a.test.data_size_out);
		hex(t, out, in->no_data_out ? 0 : n);
		say(t, " ctx_size %u ctx ", a.test.ctx_size_out);
		hex(t, ctx_out, in->ctx_out ? in->ctx_out : 0);
		if (p->map)
			say_map(sys, t, map_fd, 16);
	}
	say(t, "\n");
}

static void sl_run(sys_fn sys, struct transcript *t, int fd, int map_fd,
		   const struct prog *p, const struct sl_input *in)
{
	unsigned char ctx_out[128], data[64] = { 0 };
	union bpf_attr a;
	int err;

	memset(ctx_out, 0xee, sizeof(ctx_out));
	reset_map(sys, map_fd);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (in->ctx_len) {
		a.test.ctx_in = (uint64_t)(uintptr_t)in->ctx.b;
		a.test.ctx_size_in = in->ctx_len;
	}
	if (in->ctx_out) {
		a.test.ctx_out = (uint64_t)(uintptr_t)ctx_out;
		a.test.ctx_size_out = in->ctx_out;
	}
	if (in->data_in) {
		a.test.data_in = (uint64_t)(uintptr_t)data;
		a.test.data_size_in = sizeof(data);
	}
	if (in->size_out)
		a.test.data_size_out = 64;
	a.test.repeat = in->repeat;
	a.test.flags = in->flags;
	err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
	t->steps++;
	say(t, "sk_lookup %s / %s: err %d", p->name, in->name, err);
	if (!err || err == -ENOSPC) {
		say(t, " retval %#x ctx_size %u ctx ", a.test.retval, a.test.ctx_size_out);
		hex(t, ctx_out, in->ctx_out);
		if (p->map)
			say_map(sys, t, map_fd, 208);
	}
	say(t, "\n");
}

/* ---- sockets: bpf_sk_assign from a sockmap ---------------------------------------------- */
/* Real sockets, the same fds in the kernel's sockmap and in bpfrt's, so a selection's
 * cookie (SO_COOKIE) is the same number on both sides. */
static int socks[N_SOCKS];
static int peers[2]; /* the other ends, kept open */

/* What an sk_lookup program does with socket `slot` of map 0 (a sockmap): steps run in
 * order, each bpf_sk_assign's result recorded in map 1 (the record map) at 8 * step. */
struct sk_step {
	int slot;       /* -1: assign NULL */
	uint32_t flags;
};
struct sk_prog {
	const char *name;
	struct sk_step steps[3];
	int nsteps;
	int verdict;    /* the program's return value */
	int read_sk;    /* record the socket's fields (from the lookup) and ctx->sk's */
};

static const struct sk_prog sk_progs[] = {
	{ "assign", { { 0, 0 } }, 1, 1, 1 },
	{ "assign, drop", { { 0, 0 } }, 1, 0, 0 },
	{ "assign REPLACE", { { 0, BPF_SK_LOOKUP_F_REPLACE } }, 1, 1, 0 },
	{ "assign NO_REUSEPORT", { { 0, BPF_SK_LOOKUP_F_NO_REUSEPORT } }, 1, 1, 0 },
	{ "assign flags 4", { { 0, 4 } }, 1, 1, 0 },
	{ "assign twice", { { 0, 0 }, { 2, 0 } }, 2, 1, 0 },
	{ "assign twice, REPLACE", { { 0, 0 }, { 2, BPF_SK_LOOKUP_F_REPLACE } }, 2, 1, 0 },
	{ "assign NULL", { { -1, 0 } }, 1, 1, 0 },
	{ "assign, then NULL", { { 0, 0 }, { -1, 0 } }, 2, 1, 0 },
	{ "assign, then NULL REPLACE", { { 0, 0 }, { -1, BPF_SK_LOOKUP_F_REPLACE } }, 2, 1, 0 },
	{ "assign, REPLACE NO_REUSEPORT",
	  { { 0, 0 }, { 0, BPF_SK_LOOKUP_F_REPLACE | BPF_SK_LOOKUP_F_NO_REUSEPORT } }, 2, 1, 0 },
};

/* bpf_sock fields a program reads from a socket in r7, into the record map (r9) at
 * base: bound_dev_if, family, type, protocol, mark, priority, src_ip4, src_ip6,
 * src_port, dst_port (u16), dst_ip4, dst_ip6, state.  Not rx_queue_mapping: the kernel
 * records a queue for an accepted socket, which bpfrt's snapshot cannot tell from a
 * connected one (docs/STATUS.md #15); it is read but kept only for the other sockets. */
static size_t emit_sock_fields(struct bpf_insn *p, size_t n, int base)
{
	static const int words[] = { 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 52, 56, 60,
				     64, 68, 72, 76 };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		EMIT(LDX(BPF_W, 1, 7, words[i]), STX(BPF_W, 9, 1, base + words[i]));
	EMIT(LDX(BPF_H, 1, 7, 48), STX(BPF_H, 9, 1, base + 48));
	return n;
}

/* the record of an accepted socket's rx_queue_mapping (see above) */
static void mask_rx_queue(unsigned char *v)
{
	memset(v + 32 + 76, 0xaa, 4);
	memset(v + 120 + 76, 0xaa, 4);
}

/* the program for sk, with `slot` replacing each step's slot 0 */
static size_t build_sk_prog(struct bpf_insn *p, const struct sk_prog *sp, int slot)
{
	size_t n = 0;

	/* r6 = ctx, r9 = record value */
	EMIT(MOV64_REG(6, 1), ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	     LD_MAP(1, 1), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0));
	for (int i = 0; i < sp->nsteps; i++) {
		int s = sp->steps[i].slot;

		if (s < 0) {
			EMIT(MOV64_REG(1, 6), MOV64_IMM(2, 0), MOV64_IMM(3, (int32_t)sp->steps[i].flags),
			     CALL(BPF_FUNC_sk_assign), STX(BPF_DW, 9, 0, 8 * i));
			continue;
		}
		/* r7 = the socket; missing: record -1 */
		EMIT(ST(BPF_W, 10, -8, s == 0 ? slot : s), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8),
		     LD_MAP(1, 0), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 3),
		     ST(BPF_DW, 9, 8 * i, -1), MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0));
		if (sp->read_sk)
			n = emit_sock_fields(p, n, 32);
		EMIT(MOV64_REG(1, 6), MOV64_REG(2, 7), MOV64_IMM(3, (int32_t)sp->steps[i].flags),
		     CALL(BPF_FUNC_sk_assign), STX(BPF_DW, 9, 0, 8 * i), MOV64_REG(1, 7),
		     CALL(BPF_FUNC_sk_release));
	}
	if (sp->read_sk) { /* the selection as the context shows it */
		EMIT(LDX(BPF_DW, 7, 6, 0), JIMM(BPF_JEQ, 7, 0, 40));
		n = emit_sock_fields(p, n, 120);
	}
	EMIT(MOV64_IMM(0, sp->verdict), EXIT());
	return n;
}

static void sock_script(sys_fn sys, uint32_t pflags, struct transcript *t, uint32_t map_type)
{
	static const struct { const char *name; uint32_t family, proto; } ctxs[] = {
		{ "v4 tcp", AF_INET, 6 }, { "v6 tcp", AF_INET6, 6 }, { "v4 udp", AF_INET, 17 },
		{ "v6 udp", AF_INET6, 17 },
	};
	int smap = sock_set_map(sys, socks, map_type);
	int rec = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1, 0, 0);

	say(t, "%s: %d %d\n", map_type == BPF_MAP_TYPE_SOCKMAP ? "sockmap" : "sockhash",
	    smap >= 0, rec >= 0);
	for (size_t i = 0; smap >= 0 && rec >= 0 && i < sizeof(sk_progs) / sizeof(sk_progs[0]);
	     i++) {
		for (int slot = 0; slot < N_SOCKS; slot++) {
			struct bpf_insn insns[MAX_INSNS];
			struct prog p = { sk_progs[i].name, insns, 0, 1 };
			int fds[2] = { smap, rec }, fd;

			/* the flag and NULL cases once, on the first socket and the reuseport one */
			if (i && slot != S_TCP4 && slot != S_TCP4_REUSE && slot != S_UDP4)
				continue;
			p.len = build_sk_prog(insns, &sk_progs[i], slot);
			fd = load_maps(sys, t, BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, pflags, &p, fds);
			if (fd < 0)
				continue;
			for (size_t c = 0; c < sizeof(ctxs) / sizeof(ctxs[0]); c++) {
				struct sl_input in = { 0 };
				char name[96];

				snprintf(name, sizeof(name), "%s, %s", sock_set_name(slot),
					 ctxs[c].name);
				in.name = name;
				in.ctx = sl_make(ctxs[c].family, ctxs[c].proto, 80);
				in.ctx_len = in.ctx_out = 72;
				mask_accepted = slot == S_TCP4_EST;
				sl_run(sys, t, fd, rec, &p, &in);
				mask_accepted = 0;
			}
			close(fd);
		}
	}
	if (smap >= 0)
		close(smap);
	if (rec >= 0)
		close(rec);
}

/* bpf_sk_assign's prototypes (sk_lookup: a full socket or NULL; tc: any socket, not
 * NULL) and tc's answers in a test run; map 0 a sockmap, map 1 the record map */
#define SK0 ST(BPF_W, 10, -8, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), LD_MAP(1, 0), \
	CALL(BPF_FUNC_map_lookup_elem)
#define REC MOV64_REG(8, 0), ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), \
	LD_MAP(1, 1), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JEQ, 0, 0, 1), STX(BPF_DW, 0, 8, 0)
static const struct { struct prog p; uint32_t type; } assign_progs[] = {
	{ { "sk_lookup assign ctx as socket", PROG(MOV64_REG(6, 1), MOV64_REG(2, 1),
	    MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign), MOV64_IMM(0, 1), EXIT()) },
	  BPF_PROG_TYPE_SK_LOOKUP },
	{ { "sk_lookup assign scalar", PROG(MOV64_IMM(2, 5), MOV64_IMM(3, 0),
	    CALL(BPF_FUNC_sk_assign), MOV64_IMM(0, 1), EXIT()) }, BPF_PROG_TYPE_SK_LOOKUP },
	{ { "sk_lookup assign unchecked lookup", PROG(MOV64_REG(6, 1), SK0, MOV64_REG(7, 0),
	    MOV64_REG(1, 6), MOV64_REG(2, 7), MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign),
	    JIMM(BPF_JEQ, 7, 0, 2), MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 1),
	    EXIT()), .map = 1 }, BPF_PROG_TYPE_SK_LOOKUP },
	{ { "sk_lookup assign leaks the socket", PROG(MOV64_REG(6, 1), SK0,
	    JIMM(BPF_JEQ, 0, 0, 3), MOV64_REG(1, 6), MOV64_REG(2, 0), MOV64_IMM(3, 0),
	    CALL(BPF_FUNC_sk_assign), MOV64_IMM(0, 1), EXIT()), .map = 1 },
	  BPF_PROG_TYPE_SK_LOOKUP },
	{ { "sk_lookup assign socket from ctx", PROG(MOV64_REG(6, 1), LDX(BPF_DW, 2, 1, 0),
	    MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign), MOV64_IMM(0, 1), EXIT()) },
	  BPF_PROG_TYPE_SK_LOOKUP },
	{ { "tc assign NULL", PROG(MOV64_IMM(2, 0), MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign),
	    MOV64_IMM(0, 0), EXIT()) }, BPF_PROG_TYPE_SCHED_CLS },
	{ { "tc assign unchecked lookup", PROG(MOV64_REG(6, 1), SK0, MOV64_REG(1, 6),
	    MOV64_REG(2, 0), MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign), MOV64_IMM(0, 0), EXIT()),
	    .map = 1 }, BPF_PROG_TYPE_SCHED_CLS },
	{ { "tc assign from sockmap", PROG(MOV64_REG(6, 1), SK0, JIMM(BPF_JNE, 0, 0, 2),
	    MOV64_IMM(0, 7), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 6), MOV64_REG(2, 7),
	    MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign), REC, MOV64_REG(1, 7),
	    CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 0), EXIT()), .map = 1 },
	  BPF_PROG_TYPE_SCHED_CLS },
	{ { "tc assign flags 1", PROG(MOV64_REG(6, 1), SK0, JIMM(BPF_JNE, 0, 0, 2),
	    MOV64_IMM(0, 7), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 6), MOV64_REG(2, 7),
	    MOV64_IMM(3, 1), CALL(BPF_FUNC_sk_assign), REC, MOV64_REG(1, 7),
	    CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 0), EXIT()), .map = 1 },
	  BPF_PROG_TYPE_SCHED_CLS },
	{ { "xdp assign", PROG(MOV64_REG(6, 1), SK0, JIMM(BPF_JEQ, 0, 0, 5), MOV64_REG(7, 0),
	    MOV64_REG(1, 6), MOV64_REG(2, 7), MOV64_IMM(3, 0), CALL(BPF_FUNC_sk_assign),
	    MOV64_IMM(0, 2), EXIT()), .map = 1 }, BPF_PROG_TYPE_XDP },
	{ { "sk_reuseport assign", PROG(MOV64_IMM(2, 0), MOV64_IMM(3, 0),
	    CALL(BPF_FUNC_sk_assign), MOV64_IMM(0, 1), EXIT()) }, BPF_PROG_TYPE_SK_REUSEPORT },
};

/* tc programs with a sockmap's socket (slot patched into the ST): bpf_sk_fullsock and
 * bpf_get_listener_sock; rec[0] = fullsock's family (0: NULL), rec[8] = the listener's
 * state (0: NULL), -1 when the slot is empty */
static size_t build_cast_prog(struct bpf_insn *p, int slot)
{
	size_t n = sock_set_prologue(p, slot);

	EMIT(MOV64_REG(1, 7), CALL(BPF_FUNC_sk_fullsock), JIMM(BPF_JEQ, 0, 0, 2),
	     LDX(BPF_W, 1, 0, 4), STX(BPF_DW, 9, 1, 0),
	     MOV64_REG(1, 7), CALL(BPF_FUNC_get_listener_sock), JIMM(BPF_JEQ, 0, 0, 2),
	     LDX(BPF_W, 1, 0, 72), STX(BPF_DW, 9, 1, 8),
	     MOV64_REG(1, 7), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 0), EXIT());
	return n;
}

/* bpf_skb_under_cgroup(skb, cgroup array, idx) in a tc test run: rec[0] = the answer */
static void under_cgroup_script(sys_fn sys, uint32_t pflags, struct transcript *t,
				int root_fd, int child_fd)
{
	int cg = create_map(sys, BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, 0, 0);
	int rec = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1, 0, 0);
	uint32_t k0 = 0, k1 = 1, v0 = (uint32_t)root_fd, v1 = (uint32_t)child_fd;

	if (cg >= 0 && root_fd >= 0)
		say(t, "cgroup array: root %d", elem(sys, BPF_MAP_UPDATE_ELEM, cg, &k0, &v0, 0));
	if (cg >= 0 && child_fd >= 0)
		say(t, " child %d", elem(sys, BPF_MAP_UPDATE_ELEM, cg, &k1, &v1, 0));
	say(t, "\n");
	for (int idx = 0; cg >= 0 && rec >= 0 && idx < 6; idx++) {
		static const uint32_t types[] = { BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_LWT_XMIT,
						  BPF_PROG_TYPE_CGROUP_SKB, BPF_PROG_TYPE_XDP };

		for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
			const struct bpf_insn insns[] = {
				MOV64_REG(6, 1), ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10),
				ALU64_IMM(BPF_ADD, 2, -4), LD_MAP(1, 1),
				CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2),
				MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0), MOV64_REG(1, 6),
				LD_MAP(2, 0), MOV64_IMM(3, idx), CALL(BPF_FUNC_skb_under_cgroup),
				STX(BPF_DW, 9, 0, 0), MOV64_IMM(0, 1), EXIT(),
			};
			char name[64];
			struct prog p = { name, insns, sizeof(insns) / sizeof(insns[0]), 1 };
			int fds[2] = { cg, rec }, fd;

			/* slot 4 is past the end; 5: a program of a type without the helper */
			if (idx == 5 && ti == 0)
				continue;
			snprintf(name, sizeof(name), "skb_under_cgroup type %u slot %d", types[ti], idx);
			fd = load_maps(sys, t, types[ti], 0, pflags, &p, fds);
			if (fd < 0)
				continue;
			tcp_run(sys, t, fd, rec, name, 8);
			close(fd);
		}
	}
	if (cg >= 0)
		close(cg);
	if (rec >= 0)
		close(rec);
}

static void assign_script(sys_fn sys, uint32_t pflags, struct transcript *t)
{
	int smap = sock_set_map(sys, socks, BPF_MAP_TYPE_SOCKMAP);
	int rec = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1, 0, 0);

	for (size_t i = 0; i < sizeof(assign_progs) / sizeof(assign_progs[0]); i++) {
		const struct prog *p = &assign_progs[i].p;
		uint32_t type = assign_progs[i].type;
		int fds[2] = { smap, rec }, fd;

		fd = load_maps(sys, t, type, type == BPF_PROG_TYPE_SK_LOOKUP ? BPF_SK_LOOKUP : 0,
			       pflags, p, fds);
		if (fd < 0)
			continue;
		if (type == BPF_PROG_TYPE_SCHED_CLS) {
			tcp_run(sys, t, fd, rec, p->name, 8);
		} else if (type == BPF_PROG_TYPE_SK_LOOKUP) {
			struct sl_input in = { 0 };

			reset_map(sys, rec);
			in.name = "v4 tcp";
			in.ctx = sl_make(AF_INET, 6, 80);
			in.ctx_len = in.ctx_out = 72;
			sl_run(sys, t, fd, rec, p, &in);
		} else {
			say(t, "%s: loaded\n", p->name);
		}
		close(fd);
	}
	for (int slot = 0; smap >= 0 && rec >= 0 && slot < N_SOCKS; slot++) {
		struct bpf_insn insns[MAX_INSNS];
		char name[64];
		struct prog p = { name, insns, 0, 1 };
		int fds[2] = { smap, rec }, fd;

		snprintf(name, sizeof(name), "tc casts of %s", sock_set_name(slot));
		p.len = build_cast_prog(insns, slot);
		fd = load_maps(sys, t, BPF_PROG_TYPE_SCHED_CLS, 0, pflags, &p, fds);
		if (fd < 0)
			continue;
		tcp_run(sys, t, fd, rec, name, 16);
		close(fd);
	}
	if (smap >= 0)
		close(smap);
	if (rec >= 0)
		close(rec);
}

/* ---- bpf_perf_event_read / _value on a perf event array --------------------------------- */
/* Slot 0 holds a BPF output event for CPU 0, slot 1 one for CPU 1, slot 2 nothing: the
 * kernel's perf_event_open() events on its side, bpfrt's perf rings on ours; the test
 * runs on CPU 0 (main() pins the thread).  rec[8 * i] gets each call's result, the value
 * struct's counter and whether enabled/running are positive. */
static int perf_fds_kernel[2] = { -1, -1 }, perf_fds_bpfrt[2] = { -1, -1 };

static int open_perf_events(void)
{
	for (int c = 0; c < 2; c++) {
		struct perf_event_attr pa;

		memset(&pa, 0, sizeof(pa));
		pa.type = PERF_TYPE_SOFTWARE;
		pa.size = sizeof(pa);
		pa.config = PERF_COUNT_SW_BPF_OUTPUT;
		pa.sample_type = PERF_SAMPLE_RAW;
		perf_fds_kernel[c] = (int)syscall(__NR_perf_event_open, &pa, -1, c, -1, 0);
		perf_fds_bpfrt[c] = bpfrt_perf_ring_create(c, 1, NULL);
		if (perf_fds_kernel[c] < 0 || perf_fds_bpfrt[c] < 0)
			return -1;
	}
	return 0;
}

#define PE_READ(i, flags) LD_MAP(1, 0), LD64(2, flags), CALL(BPF_FUNC_perf_event_read), \
	STX(BPF_DW, 9, 0, 8 * (i))
#define PE_VALUE(i, flags, size)                                                          \
	ST(BPF_DW, 10, -24, 7), ST(BPF_DW, 10, -16, 7), ST(BPF_DW, 10, -8, 7), LD_MAP(1, 0), \
	LD64(2, flags), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -24), MOV64_IMM(4, size),     \
	CALL(BPF_FUNC_perf_event_read_value), STX(BPF_DW, 9, 0, 8 * (i)),                  \
	LDX(BPF_DW, 1, 10, -24), STX(BPF_DW, 9, 1, 8 * (i) + 8), LDX(BPF_DW, 1, 10, -16),   \
	MOV64_IMM(2, 0), JIMM(BPF_JEQ, 1, 0, 1), MOV64_IMM(2, 1), STX(BPF_DW, 9, 2, 8 * (i) + 16), \
	LDX(BPF_DW, 1, 10, -8), MOV64_IMM(2, 0), JIMM(BPF_JEQ, 1, 0, 1), MOV64_IMM(2, 1),     \
	STX(BPF_DW, 9, 2, 8 * (i) + 24)

static void perf_script(sys_fn sys, uint32_t pflags, struct transcript *t)
{
	static const struct bpf_insn body[] = {
		ST(BPF_W, 10, -28, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -28), LD_MAP(1, 1),
		CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 0), EXIT(),
		MOV64_REG(9, 0),
		PE_READ(0, 0), PE_READ(1, 1), PE_READ(2, 2), PE_READ(3, 100),
		PE_READ(4, BPF_F_CURRENT_CPU), PE_READ(5, 1ull << 32), PE_READ(6, 0xffffffffull),
		PE_VALUE(7, 0, 24), PE_VALUE(11, 1, 24), PE_VALUE(15, 2, 24), PE_VALUE(19, 0, 16),
		PE_VALUE(23, BPF_F_CURRENT_CPU, 24),
		MOV64_IMM(0, 0), EXIT(),
	};
	static const uint32_t types[] = { BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_PROG_TYPE_SCHED_CLS,
					  BPF_PROG_TYPE_XDP, BPF_PROG_TYPE_KPROBE };
	const int *ev = sys == kernel_bpf ? perf_fds_kernel : perf_fds_bpfrt;
	int pe = create_map(sys, BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, 0, 0);
	int arr = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 4, 0, 0);
	int rec = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1, 0, 0);

	for (uint32_t k = 0; pe >= 0 && k < 2; k++) {
		uint32_t v = (uint32_t)ev[k];

		say(t, "perf array slot %u: %d\n", k, elem(sys, BPF_MAP_UPDATE_ELEM, pe, &k, &v, 0));
	}
	for (size_t ti = 0; rec >= 0 && ti < sizeof(types) / sizeof(types[0]); ti++) {
		for (int m = 0; m < 2; m++) {
			char name[64];
			struct prog p = { name, body, sizeof(body) / sizeof(body[0]), 1 };
			int fds[2] = { m ? arr : pe, rec }, fd, err;
			uint64_t args[2] = { 0 };
			union bpf_attr a;

			snprintf(name, sizeof(name), "perf_event_read type %u on %s", types[ti],
				 m ? "an array" : "a perf event array");
			fd = load_maps(sys, t, types[ti], 0, pflags, &p, fds);
			if (fd < 0)
				continue;
			reset_map(sys, rec);
			memset(&a, 0, sizeof(a));
			a.test.prog_fd = (uint32_t)fd;
			if (types[ti] == BPF_PROG_TYPE_RAW_TRACEPOINT) {
				a.test.ctx_in = (uint64_t)(uintptr_t)args;
				a.test.ctx_size_in = sizeof(args);
			} else {
				a.test.data_in = (uint64_t)(uintptr_t)ipv4_tcp;
				a.test.data_size_in = sizeof(ipv4_tcp);
			}
			if (types[ti] != BPF_PROG_TYPE_KPROBE) {
				err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
				say(t, "%s: err %d", name, err);
				say_map(sys, t, rec, 8 * 27);
			} else {
				say(t, "%s: loaded", name);
			}
			say(t, "\n");
			close(fd);
		}
	}
	if (pe >= 0)
		close(pe);
	if (arr >= 0)
		close(arr);
	if (rec >= 0)
		close(rec);
}

/* ---- packet programs as real-world objects leave them (tests/corpus's mismatches) ------ */
/* XDP_PASS, loaded for each XDP attach point: devmap and cpumap programs run on frames
 * already redirected, and the kernel's test run refuses them (EINVAL) */
static const struct bpf_insn xdp_pass[] = { MOV64_IMM(0, 2), EXIT() };
/* libbpf poisons a CO-RE relocation it cannot resolve with a call to helper 0xbad2310,
 * behind a branch another relocation decided (cilium/ebpf's relocs_enum core_ld64imm):
 * dead code the kernel removes, so the program loads and runs */
static const struct bpf_insn dead_poison[] = {
	MOV64_IMM(1, 0), JIMM(BPF_JEQ, 1, 0, 2), CALL(0xbad2310), CALL(0xbad2310), MOV64_IMM(0, 7),
	EXIT(),
};

/* the frame's ingress device, the loopback device the kernel's run takes the frame from
 * (Kubeshark's and the eBPF tutorial's XDP programs store it: bpfrt had 0) */
static const struct bpf_insn xdp_ingress_ifindex[] = {
	LDX(BPF_W, 0, 1, offsetof(struct xdp_md, ingress_ifindex)), EXIT(),
};
/* the skb's socket (skb->sk): the dummy the kernel's run makes (closed, AF_INET, the
 * packet's addresses, no rx queue); -1 without one (bpfrt had none: Kubeshark's packet
 * sniffer stops there); SK_FIELD reads a struct bpf_sock field of sock_common,
 * FULL_FIELD one after bpf_sk_fullsock() (-2 when it answers NULL) */
#define SK_OF_SKB LDX(BPF_DW, 2, 1, offsetof(struct __sk_buff, sk)), JIMM(BPF_JNE, 2, 0, 2), \
	MOV64_IMM(0, -1), EXIT()
#define SK_FIELD(f) { SK_OF_SKB, LDX(BPF_W, 0, 2, offsetof(struct bpf_sock, f)), EXIT() }
#define FULL_FIELD(f)                                                                      \
	{ SK_OF_SKB, MOV64_REG(1, 2), CALL(BPF_FUNC_sk_fullsock), JIMM(BPF_JNE, 0, 0, 2),      \
	  MOV64_IMM(0, -2), EXIT(), LDX(BPF_W, 0, 0, offsetof(struct bpf_sock, f)), EXIT() }
static const struct bpf_insn sk_family[] = SK_FIELD(family);
static const struct bpf_insn sk_state[] = SK_FIELD(state);
static const struct bpf_insn sk_src_ip4[] = SK_FIELD(src_ip4);
static const struct bpf_insn sk_dst_ip4[] = SK_FIELD(dst_ip4);
static const struct bpf_insn sk_src_ip6[] = SK_FIELD(src_ip6[3]);
static const struct bpf_insn sk_src_port[] = SK_FIELD(src_port);
static const struct bpf_insn sk_rx_queue[] = SK_FIELD(rx_queue_mapping);
static const struct bpf_insn sk_type[] = FULL_FIELD(type);
static const struct bpf_insn sk_protocol[] = FULL_FIELD(protocol);
static const struct bpf_insn sk_mark[] = FULL_FIELD(mark);

struct pkt_case {
	const char *name;
	uint32_t type, attach;
	struct prog p;
};

#define PKT_PROG(n, i) { n, i, sizeof(i) / sizeof(i[0]), 0 }
static const struct pkt_case pkt_cases[] = {
	{ "xdp", BPF_PROG_TYPE_XDP, 0, PKT_PROG("xdp_pass", xdp_pass) },
	{ "xdp devmap", BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP, PKT_PROG("xdp_pass", xdp_pass) },
	{ "xdp cpumap", BPF_PROG_TYPE_XDP, BPF_XDP_CPUMAP, PKT_PROG("xdp_pass", xdp_pass) },
	{ "xdp BPF_XDP", BPF_PROG_TYPE_XDP, BPF_XDP, PKT_PROG("xdp_pass", xdp_pass) },
	{ "socket", BPF_PROG_TYPE_SOCKET_FILTER, 0, PKT_PROG("dead_poison", dead_poison) },
	{ "tc", BPF_PROG_TYPE_SCHED_CLS, 0, PKT_PROG("dead_poison", dead_poison) },
	{ "xdp", BPF_PROG_TYPE_XDP, 0, PKT_PROG("dead_poison", dead_poison) },
	{ "xdp", BPF_PROG_TYPE_XDP, 0, PKT_PROG("ingress_ifindex", xdp_ingress_ifindex) },
#define SK_CASES(t, tn)                                                                    \
	{ tn, t, 0, PKT_PROG("sk family", sk_family) },                                     \
	{ tn, t, 0, PKT_PROG("sk state", sk_state) },                                       \
	{ tn, t, 0, PKT_PROG("sk src_ip4", sk_src_ip4) },                                   \
	{ tn, t, 0, PKT_PROG("sk dst_ip4", sk_dst_ip4) },                                   \
	{ tn, t, 0, PKT_PROG("sk src_ip6[3]", sk_src_ip6) },                                \
	{ tn, t, 0, PKT_PROG("sk src_port", sk_src_port) },                                 \
	{ tn, t, 0, PKT_PROG("sk rx_queue_mapping", sk_rx_queue) },                         \
	{ tn, t, 0, PKT_PROG("fullsock type", sk_type) },                                   \
	{ tn, t, 0, PKT_PROG("fullsock protocol", sk_protocol) },                           \
	{ tn, t, 0, PKT_PROG("fullsock mark", sk_mark) }
	/* (tc: a cgroup_skb program may return only 0 or 1) */
	SK_CASES(BPF_PROG_TYPE_SCHED_CLS, "tc"),
#undef SK_CASES
};

static void pkt_script(sys_fn sys, uint32_t pflags, struct transcript *t)
{
	for (size_t i = 0; i < sizeof(pkt_cases) / sizeof(pkt_cases[0]); i++) {
		const struct pkt_case *c = &pkt_cases[i];
		int fd = load(sys, t, c->type, c->attach, pflags, &c->p, -1);
		unsigned char out[128];
		union bpf_attr a;
		int err;

		t->steps++;
		say(t, "packet %s %s:", c->name, c->p.name);
		if (fd < 0) {
			say(t, " load %d\n", -errno);
			continue;
		}
		memset(out, 0xee, sizeof(out));
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		a.test.data_in = (uint64_t)(uintptr_t)ipv4_tcp;
		a.test.data_size_in = sizeof(ipv4_tcp);
		a.test.data_out = (uint64_t)(uintptr_t)out;
		a.test.data_size_out = sizeof(out);
		a.test.repeat = 1;
		err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
		say(t, " err %d", err);
		if (!err) {
			say(t, " retval %#x size %u out ", a.test.retval, a.test.data_size_out);
			hex(t, out, a.test.data_size_out < sizeof(out) ? a.test.data_size_out
								  : sizeof(out));
		}
		say(t, "\n");
		close(fd);
	}
}

static void script(sys_fn sys, uint32_t pflags, struct transcript *t)
{
	pkt_script(sys, pflags, t);
	for (size_t i = 0; i < sizeof(fd_progs) / sizeof(fd_progs[0]); i++) {
		const struct prog *p = &fd_progs[i];
		int map_fd = p->map ? create_map(sys, BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1, 0, 0)
				    : -1;
		int fd = load(sys, t, BPF_PROG_TYPE_FLOW_DISSECTOR, BPF_FLOW_DISSECTOR, pflags, p,
			      map_fd);

		for (size_t j = 0; fd >= 0 && j < sizeof(fd_inputs) / sizeof(fd_inputs[0]); j++)
			fd_run(sys, t, fd, map_fd, p, &fd_inputs[j]);
		if (fd >= 0)
			close(fd);
		if (map_fd >= 0)
			close(map_fd);
	}
	for (size_t i = 0; i < sizeof(sl_progs) / sizeof(sl_progs[0]); i++) {
		const struct prog *p = &sl_progs[i];
		int map_fd = p->map ? create_map(sys, BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, 1, 0, 0)
				    : -1;
		int fd = load(sys, t, BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, pflags, p, map_fd);

		for (size_t j = 0; fd >= 0 && j < n_sl_inputs; j++)
			sl_run(sys, t, fd, map_fd, p, &sl_inputs[j]);
		if (fd >= 0)
			close(fd);
		if (map_fd >= 0)
			close(map_fd);
	}
	if (have_socks) {
		sock_script(sys, pflags, t, BPF_MAP_TYPE_SOCKMAP);
		sock_script(sys, pflags, t, BPF_MAP_TYPE_SOCKHASH);
		assign_script(sys, pflags, t);
	}
	under_cgroup_script(sys, pflags, t, cg_root, cg_child);
	if (have_perf)
		perf_script(sys, pflags, t);
}

int main(void)
{
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					    BPFRT_ENGINE_JIT
#endif
	};
	static struct transcript k, b;

	if (geteuid() != 0) {
		printf("skipped: needs root for the kernel's BPF_PROG_TEST_RUN\n");
		return 77;
	}
	sl_build_inputs();
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		have_perf = !sched_setaffinity(0, sizeof(set), &set) && !open_perf_events();
		if (!have_perf)
			printf("perf events: could not set up; perf_event_read cases skipped\n");
	}
	have_socks = !sock_set_make(socks, peers, 0);
	{
		static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
		char child[128];

		for (size_t i = 0; i < 2 && cg_root < 0; i++) {
			cg_root = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			snprintf(child, sizeof(child), "%s/bpfrt-test-run-%d", roots[i], (int)getpid());
		}
		if (cg_root >= 0 && !mkdir(child, 0755))
			cg_child = open(child, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(cg_child_path, sizeof(cg_child_path), "%s", child);
	}
	if (!have_socks)
		printf("sockets: could not set up (%s); sk_assign cases skipped\n", strerror(errno));
	script(kernel_bpf, 0, &k);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		memset(&b, 0, sizeof(b));
		script(bpfrt_bpf, BPFRT_F_ENGINE(engines[e]), &b);
		compare_transcripts(&k, &b);
	}
	if (cg_child >= 0) {
		close(cg_child);
		rmdir(cg_child_path);
	}
	if (getenv("TEST_RUN_ORACLE_DUMP"))
		fputs(k.text, stderr);
	printf("%u runs per side, %zu engines\n", k.steps, sizeof(engines) / sizeof(engines[0]));
	return t_done();
}
