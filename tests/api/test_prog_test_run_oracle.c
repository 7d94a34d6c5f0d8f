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
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#define TRANSCRIPT_SIZE (1 << 20)
#include "transcript.h"
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

/* load with the record map's fd patched in; the fd or -1 after saying why */
static int load(sys_fn sys, struct transcript *t, uint32_t type, uint32_t attach,
		uint32_t pflags, const struct prog *p, int map_fd)
{
	static char log[1 << 16];
	struct bpf_insn insns[MAX_INSNS];
	union bpf_attr a;
	int fd;

	memcpy(insns, p->insns, p->len * sizeof(insns[0]));
	for (size_t i = 0; i < p->len; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map_fd;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)p->len;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	a.prog_flags = pflags;
	log[0] = 0;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0) {
		say(t, "%s: load %d\n", p->name, -errno);
		if (getenv("TEST_RUN_ORACLE_LOG"))
			fprintf(stderr, "%s: %s\n", p->name, log);
	}
	return fd;
}

static void say_map(sys_fn sys, struct transcript *t, int map_fd, size_t n)
{
	unsigned char v[VALUE_SIZE];
	uint32_t key = 0;

	if (map_fd < 0)
		return;
	memset(v, 0xee, sizeof(v));
	say(t, " map ");
	if (elem(sys, BPF_MAP_LOOKUP_ELEM, map_fd, &key, v, 0))
		say(t, "error");
	else
		hex(t, v, n);
}

static void reset_map(sys_fn sys, int map_fd)
{
	unsigned char v[VALUE_SIZE] = { 0 };
	uint32_t key = 0;

	if (map_fd >= 0)
		elem(sys, BPF_MAP_UPDATE_ELEM, map_fd, &key, v, 0);
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

static void script(sys_fn sys, uint32_t pflags, struct transcript *t)
{
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
	script(kernel_bpf, 0, &k);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		memset(&b, 0, sizeof(b));
		script(bpfrt_bpf, BPFRT_F_ENGINE(engines[e]), &b);
		compare_transcripts(&k, &b);
	}
	if (getenv("TEST_RUN_ORACLE_DUMP"))
		fputs(k.text, stderr);
	printf("%u runs per side, %zu engines\n", k.steps, sizeof(engines) / sizeof(engines[0]));
	return t_done();
}
