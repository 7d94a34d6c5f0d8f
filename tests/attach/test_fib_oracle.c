/* test_fib_oracle.c - bpf_fib_lookup (src/attach/fib.c) against the kernel's: in a network
 * namespace of its own the test builds a routing state (a veth pair with IPv4 and IPv6
 * addresses and MTUs, routes via gateways, direct, blackhole/unreachable/prohibit/throw,
 * a locked and an unlocked route MTU, a preferred source, a second table, neighbours in
 * several states, forwarding on some devices only), then runs one XDP and one tc program
 * per case through the kernel's BPF_PROG_TEST_RUN and bpfrt's (interpreter, checked
 * engine and JIT in turn, one per case).  The program fills struct bpf_fib_lookup, calls the helper and copies the
 * whole struct into the packet: retval (the BPF_FIB_LKUP_RET_* code or -errno) and every
 * field the helper wrote must be equal.  A second pass adds a policy rule (fwmark -> the
 * second table, which turns the kernel's merged local/main lookup into rule walking) and
 * changes a neighbour, to check that bpfrt's cache follows.  Skips without root or `ip`.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>

#include "bpfrt.h"
#include "harness.h"
#include "netns.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_W(d, s, o) I(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_W(d, s, o) I(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_W(d, o, i) I(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define JGT_X(d, s, o) I(BPF_JMP | BPF_JGT | BPF_X, d, s, o, 0)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#define FIB_LOOKUP_MARK (1u << 5)
#define PKT_LEN 128
#define BIG_LEN 1500 /* a tc frame over v0's MTU + L2 + VLAN (1418) */

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

struct fcase {
	uint8_t params[64];
	uint32_t flags;
	int32_t plen;
	enum bpf_prog_type type;
	uint32_t pkt_len;
};

struct out {
	int load_ok, err;
	uint32_t retval, size;
	uint8_t pkt[BIG_LEN + 64];
};

static size_t build(const struct fcase *c, struct bpf_insn *p)
{
	int xdp = c->type == BPF_PROG_TYPE_XDP;
	int16_t od = xdp ? offsetof(struct xdp_md, data) : offsetof(struct __sk_buff, data);
	int16_t oe = xdp ? offsetof(struct xdp_md, data_end) : offsetof(struct __sk_buff, data_end);
	size_t n = 0;

	p[n++] = MOV_X(6, 1);
	for (int k = 0; k < 16; k++) {
		int32_t w;

		memcpy(&w, c->params + 4 * k, 4);
		p[n++] = ST_W(10, -64 + 4 * k, w);
	}
	p[n++] = MOV_X(2, 10);
	p[n++] = ADD_K(2, -64);
	p[n++] = MOV_K(3, c->plen);
	p[n++] = MOV_K(4, (int32_t)c->flags);
	p[n++] = CALL(BPF_FUNC_fib_lookup);
	p[n++] = MOV_X(7, 0);
	p[n++] = LDX_W(2, 6, od);
	p[n++] = LDX_W(3, 6, oe);
	p[n++] = MOV_X(4, 2);
	p[n++] = ADD_K(4, 64);
	p[n++] = JGT_X(4, 3, 32);
	for (int k = 0; k < 16; k++) {
		p[n++] = LDX_W(5, 10, -64 + 4 * k);
		p[n++] = STX_W(2, 5, 4 * k);
	}
	p[n++] = MOV_X(0, 7);
	p[n++] = EXIT();
	return n;
}

static void run(bpf_fn bpf, const struct fcase *c, uint32_t prog_flags, struct out *o)
{
	static char log[1 << 16];
	struct bpf_insn insns[96];
	uint8_t pkt[BIG_LEN];
	union bpf_attr attr;
	size_t n = build(c, insns);
	int fd;

	memset(o, 0, sizeof(*o));
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = c->type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	attr.prog_flags = prog_flags;
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	o->load_ok = fd >= 0;
	if (fd < 0) {
		if (getenv("FIB_LOG"))
			fprintf(stderr, "load: %s\n", log);
		return;
	}
	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 7 + 3);
	memcpy(pkt + 12, "\x08\x00\x45", 3);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uintptr_t)pkt;
	attr.test.data_size_in = c->pkt_len;
	attr.test.data_out = (uintptr_t)o->pkt;
	attr.test.data_size_out = sizeof(o->pkt);
	o->err = bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) ? errno : 0;
	o->retval = attr.test.retval;
	o->size = attr.test.data_size_out;
	close(fd);
}

static int compared, succeeded;

static void check(const char *name, const struct fcase *c)
{
	static const uint32_t engines[] = { BPFRT_ENGINE_INTERP, BPFRT_ENGINE_CHECKED,
#ifdef BPFRT_HAVE_JIT
					    BPFRT_ENGINE_JIT
#endif
	};
	struct out k, b;

	T_CASE(name);
	run(kernel_bpf, c, 0, &k);
	T_ASSERT(k.load_ok);
	if (!k.err && k.retval == 0)
		succeeded++;
	/* One engine per case, in turn: the helper is the same C under every engine, which
	 * differ only in how they call it, and each still sees a third of some 13,000 cases;
	 * all three on every case made this the longest test of the suite (50 s alone). */
	static size_t turn;
	size_t e = turn++ % (sizeof(engines) / sizeof(engines[0]));

	{
		run(bpfrt_bpf, c, BPFRT_F_ENGINE(engines[e]), &b);
		T_EQ_INT(k.load_ok, b.load_ok);
		T_EQ_INT(k.err, b.err);
		T_EQ_U64(k.retval, b.retval);
		T_EQ_U64(k.size, b.size);
		if (k.size == b.size && k.size <= sizeof(k.pkt) && memcmp(k.pkt, b.pkt, k.size)) {
			char kb[200] = "", bb[200] = "";

			for (int i = 0; i < 64; i++) {
				snprintf(kb + 2 * i, 3, "%02x", k.pkt[i]);
				snprintf(bb + 2 * i, 3, "%02x", b.pkt[i]);
			}
			T_FAIL("%s: struct after the call (ret %d): kernel %s bpfrt %s", name,
			       (int)k.retval, kb, bb);
		}
		if (k.retval != b.retval || k.err != b.err)
			fprintf(stderr, "  %s flags %#x type %d: kernel err %d ret %d; bpfrt err %d "
				"ret %d\n", name, c->flags, c->type, k.err, (int)k.retval, b.err,
				(int)b.retval);
		compared++;
	}
}

static int write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
	close(fd);
	return ok ? 0 : -1;
}

static const char *const setup_cmds[] = {
	"ip link set lo up",
	"ip link add v0 type veth peer name v1",
	"ip link add v2 type veth peer name v3",
	"ip link set v0 address 02:00:00:00:00:a0 mtu 1400 up",
	"ip link set v1 address 02:00:00:00:00:a1 up",
	"ip link set v2 address 02:00:00:00:00:a2 up", /* v3 stays down */
	"ip addr add 10.1.0.1/24 dev v0",
	"ip addr add 10.1.0.9/24 dev v0", /* secondary */
	"ip addr add 10.2.0.1/24 dev v1",
	"ip addr add 10.3.0.1/24 dev v2",
	"ip -6 addr add fd00:1::1/64 dev v0 nodad",
	"ip -6 addr add fd00:2::1/64 dev v1 nodad",
	"ip route add 10.9.0.0/16 via 10.1.0.2 dev v0",
	"ip route add 10.8.0.0/16 via 10.2.0.2 dev v1 metric 5",
	"ip route add 10.8.0.0/16 via 10.1.0.2 dev v0 metric 9",
	"ip route add blackhole 10.66.0.0/16",
	"ip route add unreachable 10.67.0.0/16",
	"ip route add prohibit 10.68.0.0/16",
	"ip route add 10.70.0.0/16 via 10.1.0.2 dev v0 mtu lock 1000",
	"ip route add 10.71.0.0/16 dev v0 mtu 1200",
	"ip route add 10.72.0.0/16 via 10.1.0.2 dev v0 src 10.1.0.9",
	"ip route add 10.74.0.0/16 dev v2",
	"ip route add 10.75.0.0/16 via 10.3.0.2 dev v2",
	"ip route add 10.9.0.0/16 via 10.2.0.2 dev v1 table 100",
	"ip route add throw 10.73.0.0/16 table 100",
	"ip route add 10.76.0.0/16 via inet6 fd00:1::2 dev v0",
	"ip -6 route add fd00:9::/32 via fd00:1::2 dev v0",
	"ip -6 route add fd00:8::/32 dev v1 metric 7",
	"ip -6 route add blackhole fd00:66::/32",
	"ip -6 route add unreachable fd00:67::/32",
	"ip -6 route add prohibit fd00:68::/32",
	"ip -6 route add fd00:70::/32 via fd00:1::2 dev v0 mtu 1280",
	"ip -6 route add fd00:71::/32 via fd00:1::2 dev v0 mtu lock 1300",
	"ip -6 route add fd00:9::/32 via fd00:2::2 dev v1 table 100",
	"ip neigh add 10.1.0.2 lladdr 02:00:00:00:01:02 dev v0 nud permanent",
	"ip neigh add 10.2.0.2 lladdr 02:00:00:00:02:02 dev v1 nud stale",
	"ip neigh add 10.3.0.2 lladdr 02:00:00:00:03:02 dev v2 nud noarp",
	"ip neigh add 10.8.1.1 lladdr 02:00:00:00:08:01 dev v1 nud permanent",
	"ip neigh add 10.71.1.1 lladdr 02:00:00:00:71:01 dev v0 nud permanent",
	"ip neigh add fd00:1::2 lladdr 02:00:00:00:61:02 dev v0 nud permanent",
	"ip neigh add fd00:2::2 lladdr 02:00:00:00:62:02 dev v1 nud permanent",
	"ip neigh add fd00:8::5 lladdr 02:00:00:00:68:05 dev v1 nud reachable",
};

static uint32_t ifx(const char *name)
{
	return if_nametoindex(name);
}

static void set_v4(struct fcase *c, const char *dst, const char *src)
{
	c->params[0] = AF_INET;
	inet_pton(AF_INET, src, c->params + 16);
	inet_pton(AF_INET, dst, c->params + 32);
}

static void set_v6(struct fcase *c, const char *dst, const char *src)
{
	c->params[0] = AF_INET6;
	inet_pton(AF_INET6, src, c->params + 16);
	inet_pton(AF_INET6, dst, c->params + 32);
}

static void cases(int pass)
{
	static const char *v4_dst[] = { "10.9.1.1", "10.8.1.1", "10.66.1.1", "10.67.1.1",
					"10.68.1.1", "10.70.1.1", "10.71.1.1", "10.72.1.1",
					"10.1.0.2", "10.1.0.1", "10.1.0.99", "10.2.0.2",
					"192.0.2.1", "10.1.0.255", "127.0.0.1", "10.73.1.1",
					"10.74.1.1", "10.75.1.1", "10.76.1.1", "10.3.0.2" };
	static const char *v6_dst[] = { "fd00:9::1", "fd00:8::5", "fd00:8::6", "fd00:66::1",
					"fd00:67::1", "fd00:68::1", "fd00:70::1", "fd00:1::2",
					"fd00:1::1", "2001:db8::1", "fe80::1", "ff02::1", "fd00:71::1" };
	static const uint32_t flags[] = {
		0, BPF_FIB_LOOKUP_DIRECT, BPF_FIB_LOOKUP_OUTPUT, BPF_FIB_LOOKUP_SKIP_NEIGH,
		BPF_FIB_LOOKUP_SRC, BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_TBID,
		FIB_LOOKUP_MARK, BPF_FIB_LOOKUP_SRC | BPF_FIB_LOOKUP_SKIP_NEIGH, 1u << 6,
		BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_TBID | BPF_FIB_LOOKUP_SKIP_NEIGH,
	};
	const char *ifs[] = { "v0", "v1", "lo", "v2" };
	static const uint16_t tot_lens[] = { 0, 1000, 1401 };
	char name[96];
	struct fcase c;

	for (int fam = 0; fam < 2; fam++) {
		size_t nd = fam ? sizeof(v6_dst) / sizeof(v6_dst[0]) : sizeof(v4_dst) / sizeof(v4_dst[0]);

		for (size_t d = 0; d < nd; d++)
			for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
				for (size_t i = 0; i < 4; i++)
					for (int t = 0; t < 2; t++) {
						size_t nl = t ? 3 : 2;

						for (size_t l = 0; l < nl; l++) {
							memset(&c, 0, sizeof(c));
							if (fam)
								set_v6(&c, v6_dst[d], "fd00:2::7");
							else
								set_v4(&c, v4_dst[d], "10.2.0.7");
							c.params[1] = 17;
							memcpy(c.params + 2, "\x12\x34\x00\x35", 4);
							memcpy(c.params + 6, &tot_lens[l], 2);
							{
								uint32_t ix = ifx(ifs[i]);

								memcpy(c.params + 8, &ix, 4);
							}
							if (flags[f] & BPF_FIB_LOOKUP_TBID)
								c.params[48] = 100;
							if (flags[f] & FIB_LOOKUP_MARK)
								c.params[52] = 7;
							c.flags = flags[f];
							c.plen = 64;
							c.type = t ? BPF_PROG_TYPE_XDP
								   : BPF_PROG_TYPE_SCHED_CLS;
							c.pkt_len = l == 2 ? 100 : PKT_LEN;
							snprintf(name, sizeof(name), "pass %d %s %s%s",
								 pass, fam ? v6_dst[d] : v4_dst[d],
								 ifs[i], t ? " xdp" : " tc");
							check(name, &c);
						}
					}
	}
	/* family, plen, ifindex and tos corners */
	memset(&c, 0, sizeof(c));
	set_v4(&c, "10.9.1.1", "10.2.0.7");
	{
		uint32_t ix = ifx("v1");

		memcpy(c.params + 8, &ix, 4);
	}
	c.plen = 64;
	c.pkt_len = PKT_LEN;
	for (int t = 0; t < 2; t++) {
		c.type = t ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_SCHED_CLS;
		c.params[0] = 3;
		check("family 3", &c);
		c.params[0] = AF_INET;
		c.plen = 63;
		check("plen 63", &c);
		c.plen = 64;
		c.params[12] = 0x10; /* tos */
		check("tos", &c);
		c.params[12] = 0;
		memset(c.params + 8, 0xff, 4);
		check("ifindex unknown", &c);
		{
			uint32_t ix = ifx("v1");

			memcpy(c.params + 8, &ix, 4);
		}
	}
	/* a tc frame over the egress device's MTU + L2 + VLAN (v0: 1400), without and with
	 * tot_len (then the route's MTU is checked instead) */
	set_v4(&c, "10.9.1.1", "10.2.0.7");
	c.type = BPF_PROG_TYPE_SCHED_CLS;
	c.pkt_len = BIG_LEN;
	check("tc frame over the MTU", &c);
	c.params[6] = 100;
	check("tc frame over the MTU, tot_len", &c);
	c.pkt_len = 1418;
	c.params[6] = 0;
	check("tc frame at the MTU", &c);
}

int main(void)
{
	netns_enter(setup_cmds, sizeof(setup_cmds) / sizeof(setup_cmds[0]));
	if (write_file("/proc/sys/net/ipv4/conf/v0/forwarding", "1") ||
	    write_file("/proc/sys/net/ipv4/conf/v1/forwarding", "1") ||
	    write_file("/proc/sys/net/ipv6/conf/v0/forwarding", "1") ||
	    write_file("/proc/sys/net/ipv6/conf/v1/forwarding", "1") ||
	    write_file("/proc/sys/net/ipv4/conf/v2/forwarding", "1"))
		T_SKIP("could not enable forwarding");
	cases(0);
	/* the cache follows changes: a policy rule (rule walking instead of the merged
	 * tables), a neighbour replaced, a route removed */
	if (netns_sh("ip rule add fwmark 7 table 100 pref 100") ||
	    netns_sh("ip -6 rule add fwmark 7 table 100 pref 100") ||
	    netns_sh("ip neigh replace 10.1.0.2 lladdr 02:00:00:00:01:22 dev v0 nud permanent") ||
	    netns_sh("ip route del 10.72.0.0/16"))
		T_FAIL("second pass setup failed");
	cases(1);
	printf("%d comparisons with the kernel (%d kernel lookups succeeded)\n", compared,
	       succeeded);
	return t_done();
}
