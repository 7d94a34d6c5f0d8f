/* test_sockmap_view_oracle.c - what a program reads of a sockmap's or sockhash's socket
 * (struct bpf_sock through bpf_map_lookup_elem), against the kernel, for sockets of every
 * address shape (src/maps/sockmap.c's snapshot, struct brt_sock).
 *
 * The same socket fds go into a kernel map and a bpfrt map; an sk_lookup program looks
 * each slot up and copies every bpf_sock field into an array, BPF_PROG_TEST_RUN runs it
 * and the array is read back: one line per socket and map type with every field named,
 * compared line by line.  The sockets: IPv4, IPv6 and v4-mapped IPv6 TCP listeners
 * (loopback, wildcard, v6only), connect()ed clients (bound first or not) and the ends
 * accept() gave, UDP bound and connected (to v6, v4-mapped and IPv4 sockaddrs), unix
 * stream and datagram (an accepted end and the connect()ed one differ in the kernel: IPv6
 * dst_ip4).  rx_queue_mapping of an accepted socket is masked: the kernel answers 0 (the
 * queue its SYN came in on) in about 1 run in 5 on loopback and -1 otherwise, bpfrt -1.
 * Root only (the kernel side); otherwise skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "sockets.h"
#include "verifier/cases/case.h"

#define MAX_SOCKS 48
#define REC_SIZE 96 /* struct bpf_sock (80) and a found flag */

struct sock_case {
	const char *name;
	int fd;
	int accepted; /* rx_queue_mapping masked */
};

static struct sock_case socks[MAX_SOCKS];
static int n_socks;
static int keep[MAX_SOCKS]; /* other ends, kept open */
static int n_keep;

static void add(const char *name, int fd, int accepted)
{
	if (fd < 0) {
		printf("socket %s: could not be made (%s)\n", name, strerror(errno));
		return;
	}
	if (n_socks < MAX_SOCKS) {
		(void)sock_cookie(fd); /* the cookie exists before either side asks */
		socks[n_socks++] = (struct sock_case){ name, fd, accepted };
	}
}

static void keep_fd(int fd)
{
	if (fd >= 0 && n_keep < MAX_SOCKS)
		keep[n_keep++] = fd;
}

/* addr ("127.0.0.1", "::1", "::ffff:127.0.0.1", ...) and port into ss; its length */
static socklen_t sockaddr_of(int family, const char *addr, uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		inet_pton(AF_INET, addr, &in->sin_addr);
		in->sin_port = htons(port);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	inet_pton(AF_INET6, addr, &in6->sin6_addr);
	in6->sin6_port = htons(port);
	return sizeof(*in6);
}

static uint16_t port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					     : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* A client of family cfam (bound to bind_addr first unless NULL) connected to to_addr at
 * the port of listener lfd; the end accept() gives, or -1 */
static int client(int cfam, int type, const char *bind_addr, int to_fam, const char *to_addr,
		  int lfd, int *acc)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = sock_bound(cfam, type, 0, bind_addr, bind_addr ? SB_NO_LISTEN : SB_NO_BIND);

	*acc = -1;
	if (fd < 0)
		return -1;
	len = sockaddr_of(to_fam, to_addr, port_of(lfd), &ss);
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	if (type == SOCK_STREAM)
		*acc = accept(lfd, NULL, NULL);
	return fd;
}

static void make_socks(void)
{
	int l4 = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, 0);
	int l4any = sock_bound(AF_INET, SOCK_STREAM, 0, "0.0.0.0", 0);
	int l6 = sock_bound(AF_INET6, SOCK_STREAM, 0, NULL, 0);
	int l6any = sock_bound(AF_INET6, SOCK_STREAM, 0, "::", 0);
	int l6only = sock_bound(AF_INET6, SOCK_STREAM, 0, "::", SB_V6ONLY);
	int l6map = sock_bound(AF_INET6, SOCK_STREAM, 0, "::ffff:127.0.0.1", 0);
	int u4 = sock_bound(AF_INET, SOCK_DGRAM, 0, NULL, 0);
	int u6 = sock_bound(AF_INET6, SOCK_DGRAM, 0, NULL, 0);
	int c, a, sv[2];

	add("tcp4 listen 127.0.0.1", l4, 0);
	add("tcp4 listen 0.0.0.0", l4any, 0);
	add("tcp6 listen ::1", l6, 0);
	add("tcp6 listen ::", l6any, 0);
	add("tcp6 listen :: v6only", l6only, 0);
	add("tcp6 listen ::ffff:127.0.0.1", l6map, 0);
	/* TCP connections: the connect()ed end and the accepted one */
	c = client(AF_INET, SOCK_STREAM, NULL, AF_INET, "127.0.0.1", l4, &a);
	add("tcp4 client", c, 0);
	add("tcp4 accepted", a, 1);
	c = client(AF_INET, SOCK_STREAM, "127.0.0.1", AF_INET, "127.0.0.1", l4, &a);
	add("tcp4 client bound first", c, 0);
	keep_fd(a);
	c = client(AF_INET6, SOCK_STREAM, NULL, AF_INET6, "::1", l6, &a);
	add("tcp6 client to ::1", c, 0);
	add("tcp6 accepted from ::1", a, 1);
	c = client(AF_INET6, SOCK_STREAM, "::1", AF_INET6, "::1", l6any, &a);
	add("tcp6 client bound ::1 first", c, 0);
	add("tcp6 accepted on :: from ::1", a, 1);
	c = client(AF_INET6, SOCK_STREAM, "::", AF_INET6, "::1", l6only, &a);
	add("tcp6 client bound :: first", c, 0);
	keep_fd(a);
	c = client(AF_INET6, SOCK_STREAM, NULL, AF_INET6, "::ffff:127.0.0.1", l4, &a);
	add("tcp6 client to ::ffff:127.0.0.1", c, 0);
	keep_fd(a);
	c = client(AF_INET, SOCK_STREAM, NULL, AF_INET, "127.0.0.1", l6any, &a);
	keep_fd(c);
	add("tcp6 accepted on :: from tcp4", a, 1);
	c = client(AF_INET6, SOCK_STREAM, NULL, AF_INET6, "::ffff:127.0.0.1", l6map, &a);
	keep_fd(c);
	add("tcp6 accepted on ::ffff:127.0.0.1", a, 1);
	/* UDP */
	add("udp4 bound", u4, 0);
	add("udp4 bound 0.0.0.0", sock_bound(AF_INET, SOCK_DGRAM, 0, "0.0.0.0", 0), 0);
	c = client(AF_INET, SOCK_DGRAM, NULL, AF_INET, "127.0.0.1", u4, &a);
	add("udp4 connected", c, 0);
	add("udp6 bound ::1", u6, 0);
	add("udp6 bound ::", sock_bound(AF_INET6, SOCK_DGRAM, 0, "::", 0), 0);
	add("udp6 bound ::ffff:127.0.0.1",
	    sock_bound(AF_INET6, SOCK_DGRAM, 0, "::ffff:127.0.0.1", 0), 0);
	c = client(AF_INET6, SOCK_DGRAM, NULL, AF_INET6, "::1", u6, &a);
	add("udp6 connected to ::1", c, 0);
	c = client(AF_INET6, SOCK_DGRAM, "::", AF_INET6, "::1", u6, &a);
	add("udp6 bound :: connected to ::1", c, 0);
	c = client(AF_INET6, SOCK_DGRAM, "::1", AF_INET6, "::1", u6, &a);
	add("udp6 bound ::1 connected to ::1", c, 0);
	c = client(AF_INET6, SOCK_DGRAM, NULL, AF_INET6, "::ffff:127.0.0.1", u4, &a);
	add("udp6 connected to ::ffff:127.0.0.1", c, 0);
	c = client(AF_INET6, SOCK_DGRAM, NULL, AF_INET, "127.0.0.1", u4, &a);
	add("udp6 connected to AF_INET 127.0.0.1", c, 0);
	/* unix */
	if (!socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		add("unix stream", sv[0], 0);
		keep_fd(sv[1]);
	}
	if (!socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		add("unix dgram", sv[0], 0);
		keep_fd(sv[1]);
	}
}

/* sk_lookup program: the socket at key `slot` of map 0 into map 1's value 0 (the fields
 * at their offsets, dst_port as the u16 it is; found flag at 80) */
static size_t build(struct bpf_insn *p, int slot)
{
	static const int words[] = { 0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 52, 56, 60,
				     64, 68, 72, 76 };
	const struct bpf_insn head[] = {
		ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), LD_MAP(1, 1),
		CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 1), EXIT(),
		MOV64_REG(9, 0),
		ST(BPF_W, 10, -8, slot), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), LD_MAP(1, 0),
		CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 1), EXIT(),
		MOV64_REG(7, 0), ST(BPF_W, 9, 80, 1),
	};
	size_t n = sizeof(head) / sizeof(head[0]);

	memcpy(p, head, sizeof(head));
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		p[n++] = (struct bpf_insn)LDX(BPF_W, 1, 7, words[i]);
		p[n++] = (struct bpf_insn)STX(BPF_W, 9, 1, words[i]);
	}
	p[n++] = (struct bpf_insn)LDX(BPF_H, 1, 7, 48);
	p[n++] = (struct bpf_insn)STX(BPF_H, 9, 1, 48);
	p[n++] = (struct bpf_insn)MOV64_REG(1, 7);
	p[n++] = (struct bpf_insn)CALL(BPF_FUNC_sk_release);
	p[n++] = (struct bpf_insn)MOV64_IMM(0, 1);
	p[n++] = (struct bpf_insn)EXIT();
	return n;
}

static const char *ip4(uint32_t a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

static const char *ip6(const uint32_t *a, char *buf)
{
	return inet_ntop(AF_INET6, a, buf, INET6_ADDRSTRLEN);
}

static void say_sock(struct transcript *t, const unsigned char *v, int accepted)
{
	struct bpf_sock s;
	uint32_t found;
	char b1[64], b2[64], b3[64], b4[64];

	memcpy(&s, v, sizeof(s));
	memcpy(&found, v + 80, 4);
	if (!found) {
		say(t, "not found");
		return;
	}
	say(t, "if %u family %u type %u proto %u mark %u prio %u state %u", s.bound_dev_if,
	    s.family, s.type, s.protocol, s.mark, s.priority, s.state);
	say(t, " src %s [%s]:%u dst %s [%s]:%u", ip4(s.src_ip4, b1), ip6(s.src_ip6, b2),
	    s.src_port, ip4(s.dst_ip4, b3), ip6(s.dst_ip6, b4), ntohs((uint16_t)s.dst_port));
	if (accepted)
		say(t, " rxq (accepted)");
	else
		say(t, " rxq %d", s.rx_queue_mapping);
}

static void script(sys_fn sys, struct transcript *t, uint32_t map_type)
{
	const char *mname = map_type == BPF_MAP_TYPE_SOCKMAP ? "sockmap" : "sockhash";
	int smap = create_map(sys, map_type, 4, 8, MAX_SOCKS, 0, 0);
	int rec = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, REC_SIZE, 1, 0, 0);

	say(t, "%s: create %d %d\n", mname, smap >= 0, rec >= 0);
	if (smap < 0 || rec < 0)
		goto out;
	for (int i = 0; i < n_socks; i++) {
		struct bpf_insn insns[96];
		unsigned char v[REC_SIZE], ctx[72];
		uint64_t fdv = (uint64_t)socks[i].fd;
		uint32_t key = (uint32_t)i, zero = 0;
		size_t n = build(insns, i);
		union bpf_attr a;
		int fd, err;

		t->steps++;
		say(t, "%s %s: ", mname, socks[i].name);
		err = elem(sys, BPF_MAP_UPDATE_ELEM, smap, &key, &fdv, 0);
		if (err) {
			say(t, "update %d\n", err);
			continue;
		}
		for (size_t j = 0; j < n; j++)
			if (insns[j].code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    insns[j].src_reg == BPF_PSEUDO_MAP_FD)
				insns[j].imm = insns[j].imm ? rec : smap;
		memset(v, 0, sizeof(v));
		elem(sys, BPF_MAP_UPDATE_ELEM, rec, &zero, v, 0);
		fd = load_prog_attach(sys, t, "prog", BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, insns,
				      (uint32_t)n);
		if (fd < 0)
			continue;
		/* an sk_lookup context: IPv4 TCP to 127.0.0.1:80 */
		memset(ctx, 0, sizeof(ctx));
		((uint32_t *)ctx)[2] = AF_INET;
		((uint32_t *)ctx)[3] = IPPROTO_TCP;
		((uint32_t *)ctx)[4] = htonl(0x7f000001);
		((uint32_t *)ctx)[10] = htonl(0x7f000001);
		((uint32_t *)ctx)[15] = 80;
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		a.test.ctx_in = (uint64_t)(uintptr_t)ctx;
		a.test.ctx_size_in = sizeof(ctx);
		err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
		close(fd);
		if (err) {
			say(t, "run %d\n", err);
			continue;
		}
		memset(v, 0xee, sizeof(v));
		if (elem(sys, BPF_MAP_LOOKUP_ELEM, rec, &zero, v, 0))
			say(t, "record lookup %d", -errno);
		else
			say_sock(t, v, socks[i].accepted);
		say(t, "\n");
	}
out:
	if (smap >= 0)
		close(smap);
	if (rec >= 0)
		close(rec);
}

static void script_sockmap(sys_fn sys, struct transcript *t)
{
	script(sys, t, BPF_MAP_TYPE_SOCKMAP);
}

static void script_sockhash(sys_fn sys, struct transcript *t)
{
	script(sys, t, BPF_MAP_TYPE_SOCKHASH);
}

int main(void)
{
	static const script_fn parts[] = { script_sockmap, script_sockhash, NULL };
	static struct transcript k, b;

	if (geteuid() != 0) {
		printf("skipped: needs root for the kernel's sockmaps and BPF_PROG_TEST_RUN\n");
		return 77;
	}
	make_socks();
	if (transcript_run("sockview", parts, &k, &b)) {
		printf("skipped: cannot make a BPFRT_FS directory\n");
		return 77;
	}
	compare_transcripts(&k, &b);
	if (getenv("BPFRT_SHOW"))
		fputs(k.text, stdout);
	printf("%u sockets, %u steps per side\n", (unsigned)n_socks, k.steps);
	for (int i = 0; i < n_socks; i++)
		close(socks[i].fd);
	for (int i = 0; i < n_keep; i++)
		close(keep[i]);
	return t_done();
}
