/* test_pkt_helpers.c - the packet helpers (src/attach/skb_helpers.c, csum_helpers.c,
 * xdp_helpers.c) and BPF_PROG_TEST_RUN's packet (headroom, tailroom, metadata) checked
 * against the kernel: each case is a small program that calls one helper with given
 * arguments, keeps its result, then (optionally) reloads the packet pointers and writes a
 * marker byte at data, and returns the result mixed with a context field.  It is loaded
 * into the kernel and into bpfrt (interpreter, checked engine, JIT) and run on the same
 * packet by both BPF_PROG_TEST_RUNs: the load verdict, the run's errno, retval, the output
 * packet (size and bytes) and the output context must be equal.  skb programs also keep
 * the result in cb[0..1] (and chosen context fields in cb[2..4]), so socket filters and
 * cgroup_skb (whose verdict is 0 or 1) are compared through the output context.  Values
 * that are the host's own (socket cookies, flow hashes, clocks) are compared by their
 * properties: nonzero, stable, left in skb->hash, the clock in units of 2^33 ns.  Packet
 * helpers run after up to two earlier calls (VLAN push/pop sequences).  Verifier cases: packet
 * pointers are stale after a helper that changes the packet, and only helpers with packet
 * access take a packet pointer.  Skips without root (neither side loads tc or XDP
 * programs then).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_packet.h>
#include <linux/pkt_cls.h>

#include "bpfrt.h"
#include "harness.h"
#include "host_kernel.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LSH_K(d, i) I(BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i)
#define XOR_X(d, s) I(BPF_ALU64 | BPF_XOR | BPF_X, d, s, 0, 0)
#define LDX_W(d, s, o) I(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define LDX_B(d, s, o) I(BPF_LDX | BPF_MEM | BPF_B, d, s, o, 0)
#define ST_B(d, o, i) I(BPF_ST | BPF_MEM | BPF_B, d, 0, o, i)
#define ST_W(d, o, i) I(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define JGT_X(d, s, o) I(BPF_JMP | BPF_JGT | BPF_X, d, s, o, 0)
#define JEQ_K(d, i, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JNE_X(d, s, o) I(BPF_JMP | BPF_JNE | BPF_X, d, s, o, 0)
#define OR_K(d, i) I(BPF_ALU64 | BPF_OR | BPF_K, d, 0, 0, i)
#define OR_X(d, s) I(BPF_ALU64 | BPF_OR | BPF_X, d, s, 0, 0)
#define RSH_K(d, i) I(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define STX_W(d, s, o) I(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#define MAX_INSNS 192
#define OUT_ROOM 20000
#define STACK_BUF 64 /* fp-64 .. fp-1 pre-filled with a pattern */

enum arg_kind { A_NONE, A_IMM, A_STACK, A_CTX };
struct arg {
	enum arg_kind kind;
	int64_t v; /* A_IMM: value; A_STACK: offset from fp */
};
#define IMM(x) ((struct arg){ A_IMM, (int64_t)(x) })
#define STK(x) ((struct arg){ A_STACK, (x) })
#define NUL ((struct arg){ A_IMM, 0 })

struct pcase {
	const char *name;
	enum bpf_prog_type type;
	int32_t helper;
	struct arg a[5];   /* r1..r5 (a[0] is normally the context) */
	int touch;         /* after the call: write 0xaa at data[0] when data < data_end */
	int16_t field;     /* >= 0: mix this u32 context field into r0 */
	const uint8_t *pkt;
	uint32_t len;
	uint32_t meta;     /* XDP: bytes of metadata at the start of pkt (ctx_in data) */
	int repeat;
	int post;          /* P_*: what r7 becomes after the call */
	int16_t cbfield[3];/* skb: > 0: copy these u32 context fields to cb[2..4] (0: none) */
	int16_t readback;  /* < 0: r7 = r7 << 32 | the u32 at fp + readback */
	struct {
		int32_t helper; /* 0: none */
		struct arg a[5];
	} pre[2];          /* calls before the one checked; r0 of each xored into r9 */
	int16_t zero[4];   /* < 0: u32 words at fp + zero[k] zeroed before the calls */
	int hashstk;       /* skb: after the call, a hash of fp-64 .. fp-1 into cb[4] */
};

/* What r7 (the helper's r0) becomes before it is returned: */
enum {
	P_NONE,
	P_SHR33,  /* r7 >> 33: a clock read by both sides in the same ~8.6 s */
	P_TWICE,  /* bit 0: r0 != 0; bit 1: a second call gives the same; bit 2: it equals the
		   * context field `field` (the values themselves are the host's) */
};

struct result {
	int load_ok;
	int err;
	uint32_t retval;
	uint32_t size_out;
	uint8_t out[OUT_ROOM];
	uint8_t ctx[sizeof(struct __sk_buff)];
	uint32_t ctx_size;
};

static size_t set_args(const struct arg *args, struct bpf_insn *p, size_t n)
{
	for (int r = 0; r < 5; r++) {
		const struct arg *a = &args[r];

		switch (a->kind) {
		case A_NONE:
			break;
		case A_CTX:
			p[n++] = MOV_X(r + 1, 6);
			break;
		case A_STACK:
			p[n++] = MOV_X(r + 1, 10);
			p[n++] = ADD_K(r + 1, (int32_t)a->v);
			break;
		case A_IMM:
			if (a->v == (int32_t)a->v) {
				p[n++] = MOV_K(r + 1, (int32_t)a->v);
			} else {
				p[n++] = I(BPF_LD | BPF_DW | BPF_IMM, r + 1, 0, 0, (int32_t)a->v);
				p[n++] = I(0, 0, 0, 0, (int32_t)((uint64_t)a->v >> 32));
			}
			break;
		}
	}
	return n;
}

static size_t build(const struct pcase *c, struct bpf_insn *p)
{
	int xdp = c->type == BPF_PROG_TYPE_XDP;
	int16_t off_data = xdp ? offsetof(struct xdp_md, data) : offsetof(struct __sk_buff, data);
	int16_t off_end = xdp ? offsetof(struct xdp_md, data_end)
			      : offsetof(struct __sk_buff, data_end);
	size_t n = 0, jmp;

	p[n++] = MOV_X(6, 1);
	for (int k = 0; k < STACK_BUF / 4; k++)
		p[n++] = ST_W(10, -STACK_BUF + 4 * k, (int32_t)(0x01020304u * (unsigned)(k + 1)));
	for (int k = 0; k < 4; k++)
		if (c->zero[k] < 0)
			p[n++] = ST_W(10, c->zero[k], 0);
	p[n++] = MOV_K(9, 0);
	for (int k = 0; k < 2 && c->pre[k].helper; k++) {
		n = set_args(c->pre[k].a, p, n);
		p[n++] = CALL(c->pre[k].helper);
		p[n++] = I(BPF_ALU64 | BPF_XOR | BPF_X, 9, 0, 0, 0);
	}
	n = set_args(c->a, p, n);
	p[n++] = CALL(c->helper);
	p[n++] = MOV_X(7, 0);
	if (c->post == P_SHR33)
		p[n++] = RSH_K(7, 33);
	if (c->post == P_TWICE) {
		n = set_args(c->a, p, n);
		p[n++] = CALL(c->helper);
		p[n++] = MOV_K(8, 0);
		p[n++] = JEQ_K(7, 0, 1);
		p[n++] = OR_K(8, 1);
		p[n++] = JNE_X(7, 0, 1);
		p[n++] = OR_K(8, 2);
		if (c->field >= 0) {
			p[n++] = LDX_W(0, 6, c->field);
			p[n++] = JNE_X(7, 0, 1);
			p[n++] = OR_K(8, 4);
		}
		p[n++] = MOV_X(7, 8);
	}
	if (c->readback < 0) {
		p[n++] = LSH_K(7, 32);
		p[n++] = LDX_W(8, 10, c->readback);
		p[n++] = OR_X(7, 8);
	}
	if (c->pre[0].helper) {
		p[n++] = LSH_K(9, 8);
		p[n++] = XOR_X(7, 9);
	}
	if (c->type != BPF_PROG_TYPE_XDP) {
		int16_t cb = offsetof(struct __sk_buff, cb);

		p[n++] = STX_W(6, 7, cb);
		p[n++] = MOV_X(8, 7);
		p[n++] = RSH_K(8, 32);
		p[n++] = STX_W(6, 8, cb + 4);
		for (int k = 0; k < 3; k++)
			if (c->cbfield[k] > 0) {
				p[n++] = LDX_W(8, 6, c->cbfield[k]);
				p[n++] = STX_W(6, 8, cb + 8 + 4 * k);
			}
		if (c->hashstk) { /* what a helper wrote to the stack buffer, all of it */
			p[n++] = MOV_K(8, 0);
			for (int k = 0; k < STACK_BUF / 4; k++) {
				p[n++] = LDX_W(0, 10, -STACK_BUF + 4 * k);
				p[n++] = I(BPF_ALU64 | BPF_MUL | BPF_K, 8, 0, 0, 0x01000193);
				p[n++] = XOR_X(8, 0);
			}
			p[n++] = STX_W(6, 8, cb + 16);
		}
	}
	if (c->touch) {
		p[n++] = LDX_W(2, 6, off_data);
		p[n++] = LDX_W(3, 6, off_end);
		p[n++] = MOV_X(4, 2);
		p[n++] = ADD_K(4, 1);
		jmp = n;
		p[n++] = JGT_X(4, 3, 0);
		p[n++] = ST_B(2, 0, 0xaa);
		p[jmp].off = (int16_t)(n - jmp - 1);
	}
	if (c->field >= 0 && c->post != P_TWICE) {
		p[n++] = LDX_W(8, 6, c->field);
		p[n++] = LSH_K(7, 16);
		p[n++] = XOR_X(7, 8);
	}
	p[n++] = MOV_X(0, 7);
	if (c->type == BPF_PROG_TYPE_CGROUP_SKB) /* returns 0 or 1; the rest is in cb */
		p[n++] = I(BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 1);
	p[n++] = EXIT();
	return n;
}

/* bpf(2) or bpfrt_bpf(): the same attributes through both. */
typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static int load(bpf_fn bpf, enum bpf_prog_type type, const struct bpf_insn *insns, size_t n,
		uint32_t flags)
{
	static char log[1 << 18];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.prog_flags = flags;
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	log[0] = 0;
	fd = bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0 && getenv("PKT_HELPERS_LOG"))
		fprintf(stderr, "errno %d: %s\n", errno, log);
	return fd;
}

static void run(bpf_fn bpf, const struct pcase *c, const struct bpf_insn *insns, size_t n,
		uint32_t flags, struct result *r)
{
	struct xdp_md md = { 0 };
	union bpf_attr attr;
	int fd = load(bpf, c->type, insns, n, flags);

	memset(r, 0, sizeof(*r));
	r->load_ok = fd >= 0;
	if (fd < 0)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uintptr_t)c->pkt;
	attr.test.data_size_in = c->len;
	attr.test.data_out = (uintptr_t)r->out;
	attr.test.data_size_out = sizeof(r->out);
	attr.test.repeat = (uint32_t)c->repeat;
	attr.test.ctx_out = (uintptr_t)r->ctx;
	attr.test.ctx_size_out = c->type == BPF_PROG_TYPE_XDP ? sizeof(struct xdp_md)
							       : sizeof(struct __sk_buff);
	if (c->type == BPF_PROG_TYPE_XDP) {
		md.data = c->meta;
		md.data_end = c->len;
		attr.test.ctx_in = (uintptr_t)&md;
		attr.test.ctx_size_in = sizeof(md);
	}
	r->err = bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
	r->retval = attr.test.retval;
	r->size_out = attr.test.data_size_out;
	r->ctx_size = attr.test.ctx_size_out;
	close(fd);
}

static int compared, host_deviations;

static void check(const struct pcase *c)
{
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT /* the switch build (-DBPFRT_JIT=OFF) has no JIT to load into */
					    BPFRT_ENGINE_JIT
#endif
	};
	static struct result k, b;
	struct bpf_insn p[MAX_INSNS];
	size_t n = build(c, p);

	T_CASE(c->name);
	run(kernel_bpf, c, p, n, 0, &k);
	if (!k.load_ok && host_refuses_helper(c->type, c->helper)) {
		/* the running kernel is not upstream 6.18 here (tests/host_kernel.h): nothing
		 * to compare with; bpfrt loads it as upstream does, every engine alike */
		static struct result first;

		host_deviations++;
		for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
			run(bpfrt_bpf, c, p, n, BPFRT_F_ENGINE(engines[e]), e ? &b : &first);
			if (!e) {
				T_ASSERT(first.load_ok);
				continue;
			}
			T_EQ_INT(first.load_ok, b.load_ok);
			T_EQ_INT(first.err, b.err);
			T_EQ_U64(first.retval, b.retval);
			T_EQ_U64(first.size_out, b.size_out);
		}
		return;
	}
	T_ASSERT(k.load_ok); /* every case is a valid program: a refusal is a broken case */
	if (getenv("PKT_HELPERS_DUMP"))
		fprintf(stderr, "%s: kernel err %d retval %#x size %u cb %08x %08x %08x %08x %08x\n",
			c->name, k.err, k.retval, k.size_out,
			((struct __sk_buff *)k.ctx)->cb[0], ((struct __sk_buff *)k.ctx)->cb[1],
			((struct __sk_buff *)k.ctx)->cb[2], ((struct __sk_buff *)k.ctx)->cb[3],
			((struct __sk_buff *)k.ctx)->cb[4]);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		run(bpfrt_bpf, c, p, n, BPFRT_F_ENGINE(engines[e]), &b);
		if (c->post == P_SHR33 && b.retval != k.retval) /* a clock crossed 2^33 ns */
			run(kernel_bpf, c, p, n, 0, &k);
		T_EQ_INT(k.load_ok, b.load_ok);
		T_EQ_INT(k.err, b.err);
		T_EQ_U64(k.retval, b.retval);
		T_EQ_U64(k.size_out, b.size_out);
		if (k.size_out == b.size_out && k.size_out <= OUT_ROOM &&
		    memcmp(k.out, b.out, k.size_out)) {
			for (uint32_t i = 0; i < k.size_out; i++)
				if (k.out[i] != b.out[i]) {
					T_FAIL("%s: output byte %u: kernel %#x bpfrt %#x", c->name, i,
					       k.out[i], b.out[i]);
					break;
				}
		}
		if (c->type == BPF_PROG_TYPE_XDP)
			T_ASSERT(!memcmp(k.ctx, b.ctx, sizeof(struct xdp_md)));
		else
			T_ASSERT(!memcmp(k.ctx, b.ctx, sizeof(struct __sk_buff)));
		if (k.retval != b.retval || k.err != b.err || k.size_out != b.size_out)
			fprintf(stderr, "  %s engine %u: kernel load %d err %d ret %#x size %u; "
				"bpfrt load %d err %d ret %#x size %u\n", c->name, engines[e],
				k.load_ok, k.err, k.retval, k.size_out, b.load_ok, b.err, b.retval,
				b.size_out);
		compared++;
	}
}

#define CTX ((struct arg){ A_CTX, 0 })
#define TC BPF_PROG_TYPE_SCHED_CLS
#define XDP BPF_PROG_TYPE_XDP
#define F_PKT_TYPE offsetof(struct __sk_buff, pkt_type)
#define F_HASH offsetof(struct __sk_buff, hash)
#define F_LEN offsetof(struct __sk_buff, len)
#define F_PROTOCOL offsetof(struct __sk_buff, protocol)
#define F_VLAN_PRESENT offsetof(struct __sk_buff, vlan_present)
#define F_VLAN_TCI offsetof(struct __sk_buff, vlan_tci)
#define F_VLAN_PROTO offsetof(struct __sk_buff, vlan_proto)
#define SOCK BPF_PROG_TYPE_SOCKET_FILTER
#define CGSKB BPF_PROG_TYPE_CGROUP_SKB
#define NOARG ((struct arg){ 0 })

static uint8_t pkt64[64], pkt200[200], pkt_bcast[64], pkt_zero_dst[64];
static uint8_t pkt_vlan[68], pkt_qinq[72], pkt_8023[64], pkt_raw8023[64], pkt_v6[80],
	pkt_vlan_short[16], pkt_frag[64];

static void make_packets(void)
{
	for (size_t i = 0; i < sizeof(pkt200); i++)
		pkt200[i] = (uint8_t)(i * 13 + 5);
	pkt200[12] = 0x08;
	pkt200[13] = 0x00;
	pkt200[14] = 0x45; /* IPv4, 20-byte header */
	pkt200[23] = 17;   /* UDP */
	memcpy(pkt64, pkt200, sizeof(pkt64));
	pkt64[0] = 0x02; /* unicast destination: PACKET_OTHERHOST */
	memcpy(pkt_bcast, pkt64, sizeof(pkt64));
	memset(pkt_bcast, 0xff, 6);
	memcpy(pkt_zero_dst, pkt64, sizeof(pkt64));
	memset(pkt_zero_dst, 0, 6);
	pkt_zero_dst[40] = pkt_zero_dst[41] = 0; /* UDP checksum 0: "none" */
	/* 802.1Q tag 0x0123 in front of pkt64's IPv4; 802.1ad 0x0456 + 802.1Q 0x0789 */
	memcpy(pkt_vlan, pkt64, 12);
	memcpy(pkt_vlan + 12, "\x81\x00\x01\x23", 4);
	memcpy(pkt_vlan + 16, pkt64 + 12, 52);
	memcpy(pkt_qinq, pkt64, 12);
	memcpy(pkt_qinq + 12, "\x88\xa8\x04\x56\x81\x00\x07\x89", 8);
	memcpy(pkt_qinq + 20, pkt64 + 12, 52);
	memcpy(pkt_vlan_short, pkt_vlan, sizeof(pkt_vlan_short));
	memcpy(pkt_8023, pkt64, sizeof(pkt64));
	pkt_8023[12] = 0x00; /* an 802.3 length, then LLC */
	pkt_8023[13] = 0x32;
	memcpy(pkt_raw8023, pkt_8023, sizeof(pkt64));
	pkt_raw8023[14] = pkt_raw8023[15] = 0xff; /* raw 802.3 (IPX) */
	memcpy(pkt_v6, pkt64, 14);
	pkt_v6[12] = 0x86;
	pkt_v6[13] = 0xdd;
	for (size_t i = 14; i < sizeof(pkt_v6); i++)
		pkt_v6[i] = (uint8_t)(i * 7 + 1);
	pkt_v6[14] = 0x60;
	pkt_v6[20] = 6; /* TCP */
	memcpy(pkt_frag, pkt64, sizeof(pkt64));
	pkt_frag[20] = 0x20; /* more fragments */
}

static struct pcase tc(const char *name, int32_t helper, struct arg a2, struct arg a3,
		       struct arg a4, struct arg a5)
{
	return (struct pcase){ .name = name, .type = TC, .helper = helper,
			       .a = { CTX, a2, a3, a4, a5 }, .touch = 1, .field = -1,
			       .pkt = pkt64, .len = sizeof(pkt64) };
}

static struct pcase xdp(const char *name, int32_t helper, int64_t off, uint32_t meta)
{
	return (struct pcase){ .name = name, .type = XDP, .helper = helper,
			       .a = { CTX, IMM(off) }, .touch = 1, .field = -1, .pkt = pkt64,
			       .len = sizeof(pkt64), .meta = meta };
}

#define CHECK(expr)                                                                    \
	do {                                                                           \
		c = (expr);                                                            \
		check(&c);                                                             \
	} while (0)

static void helper_cases(void)
{
	struct pcase c;

	/* bpf_skb_store_bytes: inside, at the edges, past the end, flags */
	static const int64_t sb_off[] = { 0, 10, 56, 60, 61, 64, 100, 0x7fffffff, 0x80000000 };
	for (size_t i = 0; i < sizeof(sb_off) / sizeof(sb_off[0]); i++) {
		CHECK((tc("store_bytes", BPF_FUNC_skb_store_bytes, IMM(sb_off[i]), STK(-16),
			       IMM(4), IMM(0))));
		c.touch = 0;
		c.a[3] = IMM(8);
		check(&c);
	}
	static const int64_t sb_flags[] = { BPF_F_RECOMPUTE_CSUM, BPF_F_INVALIDATE_HASH, 3, 4,
					    1ll << 40 };
	for (size_t i = 0; i < sizeof(sb_flags) / sizeof(sb_flags[0]); i++) {
		c = tc("store_bytes flags", BPF_FUNC_skb_store_bytes, IMM(2), STK(-32), IMM(16),
		       IMM(sb_flags[i]));
		c.field = F_HASH;
		check(&c);
	}

	/* bpf_l3_csum_replace / bpf_l4_csum_replace: the IPv4 checksum at 24, UDP's at 40 */
	static const struct {
		int64_t off, from, to, flags;
	} cs[] = {
		{ 24, 0x0a000001, 0x0a000002, 4 }, { 24, 0x1234, 0xabcd, 2 }, { 24, 0, 0x1234, 0 },
		{ 24, 5, 0x1234, 0 }, { 24, 0x12345678, 0x9abcdef0, 4 }, { 24, 1, 2, 3 },
		{ 24, 1, 2, 8 }, { 24, 1, 2, 0x10 | 4 }, { 25, 1, 2, 4 }, { 62, 1, 2, 4 },
		{ 63, 1, 2, 2 }, { 64, 1, 2, 2 }, { 0x10000, 1, 2, 2 }, { 40, 0xffff, 0, 2 },
		{ 40, 0x0000ffff, 0xffff0000, 4 }, { 40, 0x123456789ll, 0xfedcba987ll, 4 },
		{ 40, 0x1ffff, 0x20000, 2 },
	};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		CHECK((tc("l3_csum_replace", BPF_FUNC_l3_csum_replace, IMM(cs[i].off),
			       IMM(cs[i].from), IMM(cs[i].to), IMM(cs[i].flags))));
		c.touch = 0;
		c.helper = BPF_FUNC_l4_csum_replace;
		c.name = "l4_csum_replace";
		check(&c);
	}
	static const int64_t l4_flags[] = {
		BPF_F_PSEUDO_HDR | 4, BPF_F_MARK_MANGLED_0 | 4, BPF_F_MARK_MANGLED_0 | 2,
		BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE | 4, BPF_F_MARK_ENFORCE | 4,
		BPF_F_IPV6 | BPF_F_PSEUDO_HDR | 0, BPF_F_MARK_MANGLED_0 | 3, 1 << 8,
	};
	for (size_t i = 0; i < sizeof(l4_flags) / sizeof(l4_flags[0]); i++) {
		for (int z = 0; z < 2; z++) {
			c = tc("l4_csum_replace flags", BPF_FUNC_l4_csum_replace, IMM(40),
			       IMM(l4_flags[i] & 3 ? 0x0a000001 : 0), IMM(0x0a000002),
			       IMM(l4_flags[i]));
			if (z)
				c.pkt = pkt_zero_dst; /* UDP checksum 0 */
			check(&c);
			/* the result that folds to zero: 0xffff under MANGLED_0 */
			c.a[2] = IMM(0);
			c.a[3] = IMM(0);
			check(&c);
		}
	}

	/* bpf_csum_diff on stack buffers: sizes, seeds, NULL with size 0 */
	static const struct {
		int from_sz, to_sz;
		int64_t seed;
	} cd[] = {
		{ 4, 4, 0 }, { 8, 4, 0 }, { 0, 16, 0 }, { 16, 0, 0 }, { 0, 0, 0x12345678 },
		{ 12, 20, 0xffff }, { 20, 20, 0xffffffff }, { 3, 5, 0 }, { 0, 7, 0xfffe0001 },
		{ 64, 0, 1 }, { 40, 40, 0 }, { 0, 64, 0x80000000 }, { 1, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cd) / sizeof(cd[0]); i++) {
		for (int t = 0; t < 2; t++) {
			c = tc("csum_diff", BPF_FUNC_csum_diff, NUL, NUL, NUL, NUL);
			c.a[0] = cd[i].from_sz ? STK(-STACK_BUF) : NUL;
			c.a[1] = IMM(cd[i].from_sz);
			c.a[2] = cd[i].to_sz ? STK(-cd[i].to_sz) : NUL;
			c.a[3] = IMM(cd[i].to_sz);
			c.a[4] = IMM(cd[i].seed);
			c.touch = 0;
			if (t) {
				c.type = XDP;
				c.name = "csum_diff xdp";
			}
			check(&c);
		}
	}

	/* bpf_skb_pull_data, bpf_skb_change_tail, bpf_skb_change_type, bpf_redirect */
	static const int64_t pull[] = { 0, 1, 64, 65, 1000, 0xffffffff };
	for (size_t i = 0; i < sizeof(pull) / sizeof(pull[0]); i++)
		CHECK((tc("skb_pull_data", BPF_FUNC_skb_pull_data, IMM(pull[i]), (struct arg){ 0 },
			       (struct arg){ 0 }, (struct arg){ 0 })));
	static const int64_t tail[] = { 64, 63, 14, 13, 0, 65, 100, 16064, 16065, 0x7fffffff };
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++) {
		c = tc("skb_change_tail", BPF_FUNC_skb_change_tail, IMM(tail[i]), IMM(0),
		       (struct arg){ 0 }, (struct arg){ 0 });
		c.field = F_LEN;
		check(&c);
		c.a[2] = IMM(1);
		check(&c);
	}
	static const uint8_t *type_pkts[] = { pkt64, pkt_bcast, pkt_zero_dst };
	for (size_t t = 0; t < 3; t++)
		for (int64_t ty = 0; ty <= 5; ty++) {
			c = tc("skb_change_type", BPF_FUNC_skb_change_type, IMM(ty), (struct arg){ 0 },
			       (struct arg){ 0 }, (struct arg){ 0 });
			c.pkt = type_pkts[t];
			c.field = F_PKT_TYPE;
			check(&c);
		}
	static const int64_t rflags[] = { 0, BPF_F_INGRESS, 2, 1ll << 33 };
	for (size_t i = 0; i < sizeof(rflags) / sizeof(rflags[0]); i++) {
		c = tc("redirect", BPF_FUNC_redirect, IMM(1), IMM(rflags[i]), (struct arg){ 0 },
		       (struct arg){ 0 });
		c.a[0] = IMM(1);
		c.a[1] = IMM(rflags[i]);
		check(&c);
		c.type = XDP;
		c.name = "redirect xdp";
		check(&c);
	}

	/* XDP: adjust_head / adjust_meta / adjust_tail, with and without metadata */
	static const int64_t head[] = { 0, 1, -1, -4, -200, -216, -217, -256, 50, 51, 60, 1000,
					-1000 };
	static const int64_t meta_adj[] = { 0, -4, -8, -3, 4, -32, -36, -252, -256, -216, -212,
					    -220, 8 };
	static const int64_t tail_adj[] = { 0, -1, -50, -51, 10, 3456, 3457, 4000, -64 };
	static const uint32_t metas[] = { 0, 8, 32, 64 };
	for (size_t m = 0; m < sizeof(metas) / sizeof(metas[0]); m++) {
		for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++) {
			c = xdp("xdp_adjust_head", BPF_FUNC_xdp_adjust_head, head[i], metas[m]);
			check(&c);
			c.repeat = 3; /* repetitions run on the same, moved, packet */
			check(&c);
		}
		for (size_t i = 0; i < sizeof(meta_adj) / sizeof(meta_adj[0]); i++)
			CHECK((xdp("xdp_adjust_meta", BPF_FUNC_xdp_adjust_meta, meta_adj[i],
					metas[m])));
		for (size_t i = 0; i < sizeof(tail_adj) / sizeof(tail_adj[0]); i++) {
			c = xdp("xdp_adjust_tail", BPF_FUNC_xdp_adjust_tail, tail_adj[i], metas[m]);
			check(&c);
			c.pkt = pkt200;
			c.len = sizeof(pkt200);
			check(&c);
		}
	}
}

/* An interface of this namespace that is down (0: none). */
static unsigned down_ifindex(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	unsigned found = 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	for (i = ifs; fd >= 0 && i && i->if_index && !found; i++) {
		struct ifreq ifr;

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->if_name);
		if (!ioctl(fd, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP))
			found = i->if_index;
	}
	if (ifs)
		if_freenameindex(ifs);
	if (fd >= 0)
		close(fd);
	return found;
}

/* Helpers of the second group (#15): socket, hash, redirect, VLAN and clock helpers. */
static void more_cases(void)
{
	static const enum bpf_prog_type skb_types[] = { SOCK, TC, CGSKB };
	struct pcase c;

	/* bpf_skb_load_bytes_relative: from the MAC and network headers, offsets and sizes
	 * around the end, an unknown start header, offsets over 0xffff */
	static const int64_t lr_off[] = { 0, 10, 14, 34, 46, 49, 50, 60, 0xffff, 0x10000,
					  0xffffffff };
	static const int64_t lr_len[] = { 4, 14, 16 };
	for (size_t t = 0; t < 3; t++)
		for (int64_t hdr = 0; hdr <= 2; hdr++)
			for (size_t o = 0; o < sizeof(lr_off) / sizeof(lr_off[0]); o++)
				for (size_t l = 0; l < 3; l++) {
					c = tc("skb_load_bytes_relative",
					       BPF_FUNC_skb_load_bytes_relative, IMM(lr_off[o]),
					       STK(-16), IMM(lr_len[l]), IMM(hdr));
					c.type = skb_types[t];
					c.touch = 0;
					c.readback = -16;
					check(&c);
				}
	c = tc("skb_load_bytes_relative hdr>>32", BPF_FUNC_skb_load_bytes_relative, IMM(0),
	       STK(-16), IMM(4), IMM(1ll << 32));
	c.readback = -16;
	check(&c);

	/* bpf_get_socket_cookie, bpf_get_socket_uid: the test run's dummy socket */
	for (size_t t = 0; t < 3; t++) {
		c = tc("get_socket_cookie", BPF_FUNC_get_socket_cookie, NOARG, NOARG, NOARG, NOARG);
		c.type = skb_types[t];
		c.touch = 0;
		c.post = P_TWICE;
		check(&c);
		c.name = "get_socket_uid";
		c.helper = BPF_FUNC_get_socket_uid;
		c.post = P_NONE;
		check(&c);
	}

	/* bpf_get_hash_recalc: nonzero, stable, and left in skb->hash; before it, a hash
	 * invalidated by bpf_skb_store_bytes */
	static const uint8_t *hash_pkts[] = { pkt64, pkt200, pkt_v6, pkt_8023, pkt_frag,
					      pkt_vlan };
	static const uint32_t hash_lens[] = { 64, 200, 80, 64, 64, 68 };
	for (size_t i = 0; i < sizeof(hash_pkts) / sizeof(hash_pkts[0]); i++) {
		c = tc("get_hash_recalc", BPF_FUNC_get_hash_recalc, NOARG, NOARG, NOARG, NOARG);
		c.pkt = hash_pkts[i];
		c.len = hash_lens[i];
		c.post = P_TWICE;
		c.field = F_HASH;
		check(&c);
		c.pre[0].helper = BPF_FUNC_skb_store_bytes;
		c.pre[0].a[0] = CTX;
		c.pre[0].a[1] = IMM(40);
		c.pre[0].a[2] = STK(-16);
		c.pre[0].a[3] = IMM(2);
		c.pre[0].a[4] = IMM(BPF_F_INVALIDATE_HASH);
		check(&c);
	}

	/* bpf_clone_redirect: loopback out and in, no such interface, a down one, flags */
	unsigned down = down_ifindex();
	static const int64_t cr_flags[] = { 0, BPF_F_INGRESS, 2, 1ll << 16, 1ll << 17,
					    1ll << 40 };
	const int64_t cr_if[] = { 1, 0, 0x7fff0000, down ? down : 1 };
	for (size_t i = 0; i < sizeof(cr_if) / sizeof(cr_if[0]); i++)
		for (size_t f = 0; f < sizeof(cr_flags) / sizeof(cr_flags[0]); f++)
			for (int v = 0; v < 2; v++) {
				c = tc("clone_redirect", BPF_FUNC_clone_redirect, IMM(cr_if[i]),
				       IMM(cr_flags[f]), NOARG, NOARG);
				if (v) { /* after the VLAN tag went: still a link-layer header */
					c.pkt = pkt_vlan;
					c.len = sizeof(pkt_vlan);
					c.pre[0].helper = BPF_FUNC_skb_vlan_pop;
					c.pre[0].a[0] = CTX;
				}
				check(&c);
			}

	/* bpf_redirect_neigh: no parameters, a whole struct bpf_redir_neigh, a short one,
	 * flags; bpf_redirect_peer: flags */
	static const struct {
		int plen;
		int64_t flags;
	} rn[] = { { 0, 0 }, { 20, 0 }, { 24, 0 }, { 16, 0 }, { 4, 0 }, { 0, 1 }, { 20, 1ll << 35 } };
	for (size_t i = 0; i < sizeof(rn) / sizeof(rn[0]); i++) {
		c = tc("redirect_neigh", BPF_FUNC_redirect_neigh, rn[i].plen ? STK(-32) : NUL,
		       IMM(rn[i].plen), IMM(rn[i].flags), NOARG);
		c.a[0] = IMM(3);
		check(&c);
	}
	static const int64_t rp_flags[] = { 0, 1, 1ll << 40 };
	for (size_t i = 0; i < 3; i++) {
		c = tc("redirect_peer", BPF_FUNC_redirect_peer, IMM(rp_flags[i]), NOARG, NOARG,
		       NOARG);
		c.a[0] = IMM(5);
		check(&c);
	}

	/* bpf_skb_vlan_push / bpf_skb_vlan_pop: sequences of up to three calls on untagged,
	 * tagged, double-tagged, 802.3 and short packets; the out-of-band tag and protocol
	 * are copied to cb[2..4] */
	static const struct {
		const uint8_t *pkt;
		uint32_t len;
	} vp[] = { { pkt64, 64 }, { pkt_vlan, 68 }, { pkt_qinq, 72 }, { pkt_8023, 64 },
		   { pkt_vlan_short, 16 }, { pkt_raw8023, 64 } };
	static const int64_t vprotos[] = { 0x0081, 0xa888, 0x0008, 0x12340081 };
	enum { PUSH, POP };
	static const int seqs[][3] = { { PUSH, -1, -1 }, { POP, -1, -1 }, { PUSH, PUSH, -1 },
				       { PUSH, PUSH, PUSH }, { PUSH, POP, -1 },
				       { POP, POP, -1 }, { PUSH, PUSH, POP }, { POP, POP, POP },
				       { PUSH, POP, POP } };
	for (size_t pk = 0; pk < sizeof(vp) / sizeof(vp[0]); pk++)
		for (size_t sq = 0; sq < sizeof(seqs) / sizeof(seqs[0]); sq++)
			for (size_t pr = 0; pr < sizeof(vprotos) / sizeof(vprotos[0]); pr++) {
				struct arg push_a[5] = { CTX, IMM(vprotos[pr]),
							 IMM(0x1000 * (int64_t)pr + 0x10abc) };
				struct arg pop_a[5] = { CTX };
				int last = 0;

				if (pr && seqs[sq][0] == POP && seqs[sq][1] == POP)
					continue; /* protocols do not matter there */
				c = tc("skb_vlan_push/pop", 0, NOARG, NOARG, NOARG, NOARG);
				c.pkt = vp[pk].pkt;
				c.len = vp[pk].len;
				c.cbfield[0] = F_VLAN_PRESENT;
				c.cbfield[1] = F_VLAN_TCI;
				c.cbfield[2] = F_VLAN_PROTO;
				c.field = F_PROTOCOL;
				for (int k = 0; k < 3 && seqs[sq][k] >= 0; k++)
					last = k;
				for (int k = 0; k <= last; k++) {
					int32_t h = seqs[sq][k] == PUSH ? BPF_FUNC_skb_vlan_push
									: BPF_FUNC_skb_vlan_pop;
					struct arg *a = seqs[sq][k] == PUSH ? push_a : pop_a;

					if (k == last) {
						c.helper = h;
						memcpy(c.a, a, sizeof(c.a));
					} else {
						c.pre[k].helper = h;
						memcpy(c.pre[k].a, a, sizeof(c.a));
					}
				}
				check(&c);
			}

	/* bpf_xdp_load_bytes / bpf_xdp_store_bytes / bpf_xdp_get_buff_len, with metadata and
	 * after the head moved */
	static const int64_t xo[] = { 0, 10, 48, 60, 61, 64, 0xffff, 0x10000, 0xffffffff };
	static const uint32_t xmeta[] = { 0, 8 };
	for (size_t m = 0; m < 2; m++) {
		for (size_t o = 0; o < sizeof(xo) / sizeof(xo[0]); o++)
			for (int l = 0; l < 2; l++) {
				c = xdp("xdp_load_bytes", BPF_FUNC_xdp_load_bytes, xo[o], xmeta[m]);
				c.a[2] = STK(-16);
				c.a[3] = IMM(l ? 16 : 4);
				c.readback = -16;
				check(&c);
				c.name = "xdp_store_bytes";
				c.helper = BPF_FUNC_xdp_store_bytes;
				c.a[2] = STK(-32);
				c.readback = 0;
				c.touch = 0;
				check(&c);
			}
		static const int64_t heads[] = { 0, -10, 20 };
		for (size_t h = 0; h < 3; h++) {
			c = xdp("xdp_get_buff_len", BPF_FUNC_xdp_get_buff_len, 0, xmeta[m]);
			c.a[1] = NOARG;
			c.pre[0].helper = BPF_FUNC_xdp_adjust_head;
			c.pre[0].a[0] = CTX;
			c.pre[0].a[1] = IMM(heads[h]);
			check(&c);
			c.pkt = pkt200;
			c.len = sizeof(pkt200);
			check(&c);
		}
	}

	/* bpf_set_hash / bpf_set_hash_invalid, and what bpf_get_hash_recalc answers after */
	static const int64_t hashes[] = { 0, 1, 0xdeadbeef, (1ll << 32) | 5 };
	for (size_t i = 0; i < 4; i++) {
		c = tc("set_hash", BPF_FUNC_set_hash, IMM(hashes[i]), NOARG, NOARG, NOARG);
		c.field = F_HASH;
		check(&c);
		c = tc("set_hash, get_hash_recalc", BPF_FUNC_get_hash_recalc, NOARG, NOARG, NOARG,
		       NOARG);
		c.pre[0].helper = BPF_FUNC_set_hash;
		c.pre[0].a[0] = CTX;
		c.pre[0].a[1] = IMM(hashes[i]);
		c.field = F_HASH;
		check(&c);
		c.pre[1].helper = BPF_FUNC_set_hash_invalid;
		c.pre[1].a[0] = CTX;
		c.post = P_TWICE;
		check(&c);
	}
	c = tc("set_hash_invalid", BPF_FUNC_set_hash_invalid, NOARG, NOARG, NOARG, NOARG);
	c.field = F_HASH;
	check(&c);

	/* bpf_skb_change_head: sizes up to SKB_MAX_ALLOC, flags, negative rooms */
	static const int64_t rooms[] = { 0, 1, 14, 100, 16000, 16000, 16001, 16064 - 64,
					 16064 - 63, 0x7fffffff, 0x80000000, 0xffffffff };
	for (size_t i = 0; i < sizeof(rooms) / sizeof(rooms[0]); i++)
		for (int f = 0; f < 2; f++) {
			c = tc("skb_change_head", BPF_FUNC_skb_change_head, IMM(rooms[i]), IMM(f),
			       NOARG, NOARG);
			c.field = F_LEN;
			c.cbfield[0] = F_PROTOCOL;
			check(&c);
		}

	/* bpf_skb_ecn_set_ce: IPv4 with each ECN codepoint (and checksums that wrap), IPv6,
	 * not IP, short */
	static uint8_t ecn4[64], ecn6[80];
	for (int t = 0; t < 2; t++)
		for (int cp = 0; cp < 4; cp++)
			for (int ck = 0; ck < 3; ck++) {
				memcpy(ecn4, pkt64, sizeof(ecn4));
				memcpy(ecn6, pkt_v6, sizeof(ecn6));
				ecn4[15] = (uint8_t)(0xb8 | cp);
				ecn4[24] = ck == 0 ? 0x12 : ck == 1 ? 0xff : 0x00;
				ecn4[25] = ck == 0 ? 0x34 : ck == 1 ? 0xfe : 0x02;
				ecn6[15] = (uint8_t)((ecn6[15] & 0xcf) | cp << 4);
				for (int v = 0; v < 2; v++) {
					c = tc("skb_ecn_set_ce", BPF_FUNC_skb_ecn_set_ce, NOARG, NOARG,
					       NOARG, NOARG);
					c.pkt = v ? ecn6 : ecn4;
					c.len = v ? sizeof(ecn6) : sizeof(ecn4);
					c.type = t ? CGSKB : TC;
					c.touch = 0;
					check(&c);
				}
			}
	static const struct {
		const uint8_t *pkt;
		uint32_t len;
	} ecn_other[] = { { pkt_8023, 64 }, { pkt_vlan_short, 16 }, { pkt_frag, 64 } };
	for (size_t i = 0; i < sizeof(ecn_other) / sizeof(ecn_other[0]); i++) {
		c = tc("skb_ecn_set_ce", BPF_FUNC_skb_ecn_set_ce, NOARG, NOARG, NOARG, NOARG);
		c.pkt = ecn_other[i].pkt;
		c.len = ecn_other[i].len;
		check(&c);
	}

	/* bpf_ktime_get_coarse_ns (network types), bpf_ktime_get_tai_ns (every type): the
	 * host's clocks, in units of 2^33 ns */
	static const enum bpf_prog_type clock_types[] = { SOCK, TC, CGSKB, XDP };
	for (size_t t = 0; t < 4; t++)
		for (int h = 0; h < 2; h++) {
			c = tc(h ? "ktime_get_tai_ns" : "ktime_get_coarse_ns",
			       h ? BPF_FUNC_ktime_get_tai_ns : BPF_FUNC_ktime_get_coarse_ns, NOARG,
			       NOARG, NOARG, NOARG);
			c.a[0] = NOARG;
			c.type = clock_types[t];
			c.touch = 0;
			c.post = P_SHR33;
			check(&c);
		}
}

/* A program whose verdict at load is the point: both must agree. */
static void verdict(const char *name, enum bpf_prog_type type, const struct bpf_insn *p,
		    size_t n, int want_ok)
{
	int fb = load(bpfrt_bpf, type, p, n, 0), fk;

	T_CASE(name);
	T_EQ_INT(want_ok, fb >= 0);
	if (fb >= 0)
		close(fb);
	fk = load(kernel_bpf, type, p, n, 0);
	T_EQ_INT(want_ok, fk >= 0);
	if (fk >= 0)
		close(fk);
	compared++;
}

/* r8 = skb->data, bounds-checked for 4 bytes, optionally spilled; call helper; then read
 * through the old pointer (from r8 or the spill slot). */
static size_t stale_prog(struct bpf_insn *p, int xdp, int32_t helper, int spill, int pkt_arg)
{
	int16_t od = xdp ? offsetof(struct xdp_md, data) : offsetof(struct __sk_buff, data);
	int16_t oe = xdp ? offsetof(struct xdp_md, data_end) : offsetof(struct __sk_buff, data_end);
	size_t n = 0;

	p[n++] = MOV_X(6, 1);
	p[n++] = LDX_W(8, 6, od);
	p[n++] = LDX_W(3, 6, oe);
	p[n++] = MOV_X(4, 8);
	p[n++] = ADD_K(4, 4);
	p[n++] = JGT_X(4, 3, 0); /* patched below: to the exit */
	if (spill)
		p[n++] = I(BPF_STX | BPF_MEM | BPF_DW, 10, 8, -8, 0);
	p[n++] = ST_W(10, -16, 0x11223344);
	if (helper == BPF_FUNC_csum_diff) {
		p[n++] = pkt_arg ? MOV_X(1, 8) : MOV_X(1, 10);
		if (!pkt_arg)
			p[n++] = ADD_K(1, -16);
		p[n++] = MOV_K(2, 4);
		p[n++] = MOV_K(3, 0);
		p[n++] = MOV_K(4, 0);
		p[n++] = MOV_K(5, 0);
	} else {
		p[n++] = MOV_X(1, 6);
		p[n++] = MOV_K(2, 0);
		p[n++] = pkt_arg ? MOV_X(3, 8) : MOV_X(3, 10);
		if (!pkt_arg)
			p[n++] = ADD_K(3, -16);
		p[n++] = MOV_K(4, 4);
		p[n++] = MOV_K(5, 0);
	}
	p[n++] = CALL(helper);
	if (spill)
		p[n++] = I(BPF_LDX | BPF_MEM | BPF_DW, 8, 10, -8, 0);
	p[n++] = LDX_B(0, 8, 0);
	p[n++] = EXIT();
	p[5].off = (int16_t)(n - 6);
	p[n++] = MOV_K(0, 0);
	p[n++] = EXIT();
	return n;
}

/* bpf_skb_adjust_room and bpf_skb_change_proto: lengths around the limits, both modes,
 * every flag (encapsulation, decapsulation, L2 length), IPv4, IPv6 and non-IP packets,
 * a second call (encapsulated once only) and repetitions on the moved packet. */
static void room_cases(void)
{
	static const int64_t lens[] = { 0, 4, 20, 40, 0xfff, 0x1000, -4, -8, -20, -26, -30,
					-40, -45, -46, -66, -0xfff, -0x1000, 16000 };
	static const int64_t modes[] = { BPF_ADJ_ROOM_NET, BPF_ADJ_ROOM_MAC, 2 };
	static const int64_t flags[] = {
		0, BPF_F_ADJ_ROOM_FIXED_GSO, BPF_F_ADJ_ROOM_ENCAP_L3_IPV4,
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV6,
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L3_IPV6,
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L4_GRE,
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 | BPF_F_ADJ_ROOM_ENCAP_L4_UDP,
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L4_GRE |
			BPF_F_ADJ_ROOM_ENCAP_L4_UDP,
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L2_ETH |
			BPF_F_ADJ_ROOM_ENCAP_L2(14),
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L2_ETH |
			BPF_F_ADJ_ROOM_ENCAP_L2(10),
		BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 | BPF_F_ADJ_ROOM_ENCAP_L2(30),
		BPF_F_ADJ_ROOM_ENCAP_L2(8), 1 << 7, 1 << 8, 3 << 7, (1 << 7) | BPF_F_ADJ_ROOM_ENCAP_L3_IPV4,
		BPF_F_ADJ_ROOM_NO_CSUM_RESET, 1 << 9, 1ll << 40,
	};
	static const uint8_t *pkts[] = { pkt64, pkt_v6, pkt200, pkt_vlan, pkt_8023 };
	static const uint32_t plen[] = { sizeof(pkt64), sizeof(pkt_v6), sizeof(pkt200),
					 sizeof(pkt_vlan), sizeof(pkt_8023) };
	struct pcase c;

	for (size_t k = 0; k < 5; k++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			for (size_t m = 0; m < 3; m++) {
				if (k >= 3 && m) /* non-IP: refused before the mode matters */
					continue;
				c = tc("skb_adjust_room", BPF_FUNC_skb_adjust_room, IMM(lens[l]),
				       IMM(modes[m]), IMM(0), NOARG);
				c.pkt = pkts[k];
				c.len = plen[k];
				c.field = F_LEN;
				c.cbfield[0] = F_PROTOCOL;
				check(&c);
			}
	for (size_t k = 0; k < 2; k++)
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
			for (int64_t l = -24; l <= 40; l += 32) /* -24, 8, 40 */
				for (size_t m = 0; m < 2; m++) {
					c = tc("skb_adjust_room flags", BPF_FUNC_skb_adjust_room,
					       IMM(l), IMM(modes[m]), IMM(flags[f]), NOARG);
					c.pkt = pkts[k];
					c.len = plen[k];
					c.field = F_LEN;
					c.cbfield[0] = F_PROTOCOL;
					check(&c);
				}
	/* encapsulated once: a second encapsulating grow is -EALREADY, a plain one is not;
	 * repetitions run on the same skb */
	for (int second = 0; second < 3; second++) {
		c = tc("skb_adjust_room twice", BPF_FUNC_skb_adjust_room, IMM(20),
		       IMM(BPF_ADJ_ROOM_MAC),
		       IMM(second == 0 ? BPF_F_ADJ_ROOM_ENCAP_L3_IPV4
			   : second == 1 ? 0 : BPF_F_ADJ_ROOM_ENCAP_L3_IPV6), NOARG);
		c.pre[0].helper = BPF_FUNC_skb_adjust_room;
		c.pre[0].a[0] = CTX;
		c.pre[0].a[1] = IMM(20);
		c.pre[0].a[2] = IMM(BPF_ADJ_ROOM_MAC);
		c.pre[0].a[3] = IMM(BPF_F_ADJ_ROOM_ENCAP_L3_IPV4);
		c.field = F_LEN;
		c.cbfield[0] = F_PROTOCOL;
		check(&c);
		c.pre[0].helper = 0;
		c.repeat = 3;
		check(&c);
	}
	/* after a VLAN push (out of band: the packet is unchanged) and a shrink after grow */
	c = tc("skb_adjust_room after vlan_push", BPF_FUNC_skb_adjust_room, IMM(8),
	       IMM(BPF_ADJ_ROOM_NET), IMM(0), NOARG);
	c.pre[0].helper = BPF_FUNC_skb_vlan_push;
	c.pre[0].a[0] = CTX;
	c.pre[0].a[1] = IMM(0x0081);
	c.pre[0].a[2] = IMM(5);
	c.field = F_LEN;
	check(&c);
	c.pre[1] = c.pre[0]; /* the second push moves the first tag into the packet */
	check(&c);

	/* bpf_skb_change_proto: 4 -> 6, 6 -> 4, the same, others, flags, short packets */
	static const int64_t protos[] = { 0x0008, 0xdd86, 0x0081, 0, 0x0800, 0x86dd };
	/* (a shorter IPv6 frame, that 6 -> 4 could not pop, the kernel's test run refuses
	 * with EINVAL before the program runs: see docs/STATUS.md #15) */
	static uint8_t pkt_v6_short[60];
	memcpy(pkt_v6_short, pkt_v6, sizeof(pkt_v6_short));
	static const uint8_t *cp_pkts[] = { pkt64, pkt_v6, pkt_vlan, pkt_v6_short };
	static const uint32_t cp_len[] = { sizeof(pkt64), sizeof(pkt_v6), sizeof(pkt_vlan),
					   sizeof(pkt_v6_short) };
	for (size_t k = 0; k < 4; k++)
		for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
			for (int64_t fl = 0; fl <= 1; fl++) {
				c = tc("skb_change_proto", BPF_FUNC_skb_change_proto,
				       IMM(protos[i]), IMM(fl), NOARG, NOARG);
				c.pkt = cp_pkts[k];
				c.len = cp_len[k];
				c.field = F_LEN;
				c.cbfield[0] = F_PROTOCOL;
				c.cbfield[1] = F_HASH;
				check(&c);
			}
	/* the hash is cleared: set first, then the protocol changed */
	c = tc("skb_change_proto hash", BPF_FUNC_skb_change_proto, IMM(0x0008), IMM(0), NOARG,
	       NOARG);
	c.pkt = pkt_v6;
	c.len = sizeof(pkt_v6);
	c.pre[0].helper = BPF_FUNC_set_hash;
	c.pre[0].a[0] = CTX;
	c.pre[0].a[1] = IMM(0x1234);
	c.cbfield[0] = F_HASH;
	check(&c);
}

/* Tunnel metadata: get before any set, set with every flag and size, set then get (every
 * size and flag, both families), options set and read back. */
static void tunnel_cases(void)
{
	static const int64_t sizes[] = { 44, 28, 24, 22, 8, 4, 12, 43 };
	static const int64_t get_flags[] = { 0, BPF_F_TUNINFO_IPV6, BPF_F_TUNINFO_FLAGS,
					     BPF_F_TUNINFO_IPV6 | BPF_F_TUNINFO_FLAGS, 1 << 5 };
	static const int64_t set_flags[] = { 0, BPF_F_TUNINFO_IPV6, BPF_F_ZERO_CSUM_TX,
					     BPF_F_DONT_FRAGMENT, BPF_F_SEQ_NUMBER, 1 << 4,
					     BPF_F_ZERO_CSUM_TX | BPF_F_DONT_FRAGMENT | (1 << 4) |
						     BPF_F_TUNINFO_IPV6,
					     1 << 5, 1ll << 33 };
	/* a key at fp-64 whose tos/ttl/ext and label words are zero: valid for IPv4 */
	static const int16_t key_zero[4] = { -64 + 20, -64 + 24, 0, 0 };
	struct pcase c;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t f = 0; f < sizeof(get_flags) / sizeof(get_flags[0]); f++) {
			c = tc("skb_get_tunnel_key unset", BPF_FUNC_skb_get_tunnel_key, STK(-64),
			       IMM(sizes[s]), IMM(get_flags[f]), NOARG);
			c.touch = 0;
			c.hashstk = 1;
			check(&c);
		}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t f = 0; f < sizeof(set_flags) / sizeof(set_flags[0]); f++)
			for (int z = 0; z < 2; z++) {
				c = tc("skb_set_tunnel_key", BPF_FUNC_skb_set_tunnel_key, STK(-64),
				       IMM(sizes[s]), IMM(set_flags[f]), NOARG);
				c.touch = 0;
				if (z)
					memcpy(c.zero, key_zero, sizeof(c.zero));
				check(&c);
				/* then read back with each layout, both families, flags */
				if (!z || (s && s != 4))
					continue;
				for (size_t g = 0; g < sizeof(sizes) / sizeof(sizes[0]); g++)
					for (size_t gf = 0; gf < 4; gf++) {
						struct pcase d = c;

						d.name = "skb_set_tunnel_key + get";
						d.pre[0].helper = BPF_FUNC_skb_set_tunnel_key;
						memcpy(d.pre[0].a, c.a, sizeof(c.a));
						d.helper = BPF_FUNC_skb_get_tunnel_key;
						d.a[1] = STK(-64);
						d.a[2] = IMM(sizes[g]);
						d.a[3] = IMM(get_flags[gf]);
						d.hashstk = 1;
						check(&d);
					}
			}
	/* tunnel options: without a key, then after one (sizes, alignment), read back */
	static const int64_t opt_sizes[] = { 0, 3, 4, 8, 30, 32, 64 };
	for (size_t s = 0; s < sizeof(opt_sizes) / sizeof(opt_sizes[0]); s++) {
		c = tc("skb_set_tunnel_opt", BPF_FUNC_skb_set_tunnel_opt, STK(-64),
		       IMM(opt_sizes[s]), NOARG, NOARG);
		c.touch = 0;
		if (!opt_sizes[s])
			c.a[1] = STK(-64), c.a[2] = IMM(0);
		if (!opt_sizes[s])
			continue; /* size 0 with a stack pointer: refused by both verifiers */
		check(&c);
		memcpy(c.zero, key_zero, sizeof(c.zero));
		c.pre[0].helper = BPF_FUNC_skb_set_tunnel_key;
		c.pre[0].a[0] = CTX;
		c.pre[0].a[1] = STK(-64);
		c.pre[0].a[2] = IMM(44);
		c.pre[0].a[3] = IMM(0);
		check(&c);
		for (size_t g = 1; g < sizeof(opt_sizes) / sizeof(opt_sizes[0]); g++) {
			struct pcase d = c;

			d.name = "skb_set_tunnel_opt + get";
			d.pre[1].helper = BPF_FUNC_skb_set_tunnel_opt;
			memcpy(d.pre[1].a, c.a, sizeof(c.a));
			d.helper = BPF_FUNC_skb_get_tunnel_opt;
			d.a[1] = STK(-64);
			d.a[2] = IMM(opt_sizes[g]);
			d.hashstk = 1;
			check(&d);
			d.name = "skb_get_tunnel_opt no options";
			d.pre[1].helper = 0;
			check(&d);
			/* the key's flags show the options */
			d.name = "skb_set_tunnel_opt + get key flags";
			d.pre[1].helper = BPF_FUNC_skb_set_tunnel_opt;
			d.helper = BPF_FUNC_skb_get_tunnel_key;
			d.a[2] = IMM(44);
			d.a[3] = IMM(BPF_F_TUNINFO_FLAGS);
			check(&d);
		}
	}
	for (size_t g = 1; g < sizeof(opt_sizes) / sizeof(opt_sizes[0]); g++) {
		c = tc("skb_get_tunnel_opt unset", BPF_FUNC_skb_get_tunnel_opt, STK(-64),
		       IMM(opt_sizes[g]), NOARG, NOARG);
		c.touch = 0;
		c.hashstk = 1;
		check(&c);
	}
}

static void verifier_cases(void)
{
	struct bpf_insn p[64];
	size_t n;

	for (int spill = 0; spill < 2; spill++) {
		n = stale_prog(p, 0, BPF_FUNC_skb_store_bytes, spill, 0);
		verdict("stale pkt pointer after skb_store_bytes", TC, p, n, 0);
		n = stale_prog(p, 0, BPF_FUNC_csum_diff, spill, 0);
		verdict("pkt pointer kept over csum_diff", TC, p, n, 1);
		n = stale_prog(p, 1, BPF_FUNC_xdp_adjust_head, spill, 0); /* (ctx, 0) */
		verdict("stale pkt pointer after xdp_adjust_head", XDP, p, n, 0);
	}
	/* which types have the new helpers (the kernel's *_func_proto): a call with r1 = ctx */
	static const struct {
		enum bpf_prog_type type;
		int32_t helper;
		int ok;
	} avail[] = {
		{ BPF_PROG_TYPE_KPROBE, BPF_FUNC_ktime_get_coarse_ns, 0 },
		{ BPF_PROG_TYPE_KPROBE, BPF_FUNC_ktime_get_tai_ns, 1 },
		{ BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_ktime_get_tai_ns, 1 },
		{ XDP, BPF_FUNC_ktime_get_coarse_ns, 1 },
		{ SOCK, BPF_FUNC_get_hash_recalc, 0 },
		{ CGSKB, BPF_FUNC_get_hash_recalc, 0 },
		{ XDP, BPF_FUNC_get_socket_cookie, 0 },
		{ XDP, BPF_FUNC_get_socket_uid, 0 },
		{ SOCK, BPF_FUNC_skb_vlan_push, 0 },
		{ CGSKB, BPF_FUNC_skb_vlan_pop, 0 },
		{ SOCK, BPF_FUNC_clone_redirect, 0 },
		{ XDP, BPF_FUNC_redirect_neigh, 0 },
		{ XDP, BPF_FUNC_redirect_peer, 0 },
		{ BPF_PROG_TYPE_KPROBE, BPF_FUNC_skb_load_bytes_relative, 0 },
		{ CGSKB, BPF_FUNC_get_socket_uid, 1 },
		{ SOCK, BPF_FUNC_get_socket_cookie, 1 },
		{ TC, BPF_FUNC_xdp_load_bytes, 0 },
		{ XDP, BPF_FUNC_xdp_get_buff_len, 1 },
		{ TC, BPF_FUNC_xdp_get_buff_len, 0 },
		{ XDP, BPF_FUNC_set_hash_invalid, 0 },
		{ CGSKB, BPF_FUNC_set_hash_invalid, 0 },
		{ TC, BPF_FUNC_set_hash_invalid, 1 },
		{ SOCK, BPF_FUNC_skb_change_head, 0 },
	};
	for (size_t i = 0; i < sizeof(avail) / sizeof(avail[0]); i++) {
		n = 0;
		p[n++] = CALL(avail[i].helper);
		p[n++] = MOV_K(0, 0);
		p[n++] = EXIT();
		verdict("helper availability", avail[i].type, p, n, avail[i].ok);
	}
	n = stale_prog(p, 0, BPF_FUNC_skb_store_bytes, 0, 1);
	verdict("skb_store_bytes from the packet", TC, p, n, 0);
	n = stale_prog(p, 0, BPF_FUNC_csum_diff, 0, 1);
	verdict("csum_diff over the packet (tc)", TC, p, n, 1);
	n = stale_prog(p, 1, BPF_FUNC_csum_diff, 0, 1);
	verdict("csum_diff over the packet (xdp)", XDP, p, n, 1);
}

int main(void)
{
	/* tc and XDP programs need CAP_BPF + CAP_NET_ADMIN in bpfrt as in the kernel */
	if (geteuid() != 0)
		T_SKIP("not root: tc and XDP programs cannot be loaded");
	make_packets();
	helper_cases();
	more_cases();
	room_cases();
	tunnel_cases();
	verifier_cases();
	printf("%d comparisons with the kernel, %d cases not compared (host kernel deviations)\n",
	       compared, host_deviations);
	return t_done();
}
