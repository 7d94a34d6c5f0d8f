/* test_sock_lookup_oracle.c - socket pointers and their references against the kernel:
 * bpf_sk_lookup_tcp, bpf_sk_lookup_udp, bpf_skc_lookup_tcp, bpf_sk_release,
 * bpf_sk_fullsock, bpf_tcp_sock and bpf_get_listener_sock (src/attach/sock_lookup.c, the
 * verifier's socket types and references).  One script runs on the kernel's bpf() and on
 * bpfrt_bpf(), a line per program: the load's errno and error lines (everything the
 * level-1 log says that is not an instruction, a state or a statistic), then for packet
 * types two BPF_PROG_TEST_RUN results.  The transcripts must be equal line by line.
 *
 * The lookups ask for a tuple no socket listens on (10.255.255.1:1 -> 10.255.255.2:1),
 * so the kernel finds nothing either: both must answer NULL.  Programs that read
 * __sk_buff->sk are only loaded, not run (written when bpfrt's test run had no socket
 * there; since session 18 it has the kernel's dummy socket, which
 * api.prog_test_run_oracle compares).
 * Root only (the kernel side); otherwise skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#define TRANSCRIPT_SIZE (1 << 18)
#include "transcript.h"
#include "verifier/cases/case.h"

/* a line of the log that is part of the error, not the walk or the statistics */
static int error_line(const char *p, size_t n)
{
	const char *q = p;

	if (!n || *p == ';')
		return 0;
	while (q < p + n && isdigit((unsigned char)*q))
		q++;
	if (q > p && q < p + n && *q == ':')
		return 0; /* "12: (85) call ..." or "12: R0=..." */
	return strncmp(p, "from ", 5) && strncmp(p, "processed ", 10) &&
	       strncmp(p, "verification time", 17) && strncmp(p, "stack depth", 11);
}

struct pcase {
	const char *name;
	uint32_t type, attach;
	const struct bpf_insn *insns;
	size_t len;
	int norun; /* reads __sk_buff->sk: the kernel's test run has a dummy socket there */
};

static void run_case(sys_fn sys, struct transcript *t, const struct pcase *c)
{
	static char log[1 << 16];
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	int fd, run;

	memset(&a, 0, sizeof(a));
	a.prog_type = c->type;
	a.expected_attach_type = c->attach;
	a.insns = (uint64_t)(uintptr_t)c->insns;
	a.insn_cnt = (uint32_t)c->len;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = 0;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	t->steps++;
	say(t, "%s: ", c->name);
	if (fd < 0) {
		say(t, "load %d", -errno);
		for (const char *p = log; *p;) {
			size_t n = strcspn(p, "\n");

			if (error_line(p, n))
				say(t, " | %.*s", (int)n, p);
			p += n + (p[n] == '\n');
		}
		say(t, "\n");
		return;
	}
	run = !c->norun && (c->type == BPF_PROG_TYPE_SCHED_CLS || c->type == BPF_PROG_TYPE_XDP ||
	      c->type == BPF_PROG_TYPE_CGROUP_SKB);
	say(t, "ok");
	/* an IPv4 frame whose tuple the program may also take from the packet */
	pkt[12] = 0x08;
	pkt[14] = 0x45;
	pkt[23] = 6;
	for (int r = 0; run && r < 2; r++) {
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.repeat = 1;
		if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
			say(t, " run %d", -errno);
		else
			say(t, " retval %u", a.test.retval);
	}
	say(t, "\n");
	close(fd);
}

/* ---- the programs --------------------------------------------------------------------- */
#define TC BPF_PROG_TYPE_SCHED_CLS
#define F_LOOKUP_TCP BPF_FUNC_sk_lookup_tcp
#define F_LOOKUP_UDP BPF_FUNC_sk_lookup_udp
#define F_SKC BPF_FUNC_skc_lookup_tcp
#define F_RELEASE BPF_FUNC_sk_release

/* r6 = ctx; fp-40: struct bpf_sock_tuple, ipv4 10.255.255.1:1 -> 10.255.255.2:1, the rest
 * of the 36 bytes (ipv6 size) zero */
#define TUPLE                                                                             \
	MOV64_REG(6, 1), ST(BPF_W, 10, -40, 0x01ffff0a), ST(BPF_W, 10, -36, 0x02ffff0a),  \
		ST(BPF_H, 10, -32, 0x100), ST(BPF_H, 10, -30, 0x100), ST(BPF_W, 10, -28, 0), \
		ST(BPF_W, 10, -24, 0), ST(BPF_W, 10, -20, 0), ST(BPF_W, 10, -16, 0),      \
		ST(BPF_W, 10, -12, 0), ST(BPF_W, 10, -8, 0)
/* r0 = fn(ctx, &tuple, size, netns, flags) */
#define CALL_LOOKUP(fn, size, netns, flags)                                               \
	MOV64_REG(1, 6), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(3, size), \
		MOV64_IMM(4, netns), MOV64_IMM(5, flags), CALL(fn)
#define LOOKUP(fn) TUPLE, CALL_LOOKUP(fn, 12, -1, 0)
/* NULL: return 1; else release and return 0 */
#define RELEASE_R0                                                                        \
	JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 1), EXIT(), MOV64_REG(1, 0), CALL(F_RELEASE), \
		MOV64_IMM(0, 0), EXIT()

#define CASE(n, t, at, ...) { .name = (n), .type = (t), .attach = (at), __VA_ARGS__ }

static const struct pcase fixed[] = {
	/* the three lookups in every type the kernel offers them to, and some it does not */
	CASE("tc tcp", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("tc udp", TC, 0, PROG(LOOKUP(F_LOOKUP_UDP), RELEASE_R0)),
	CASE("tc skc", TC, 0, PROG(LOOKUP(F_SKC), RELEASE_R0)),
	CASE("xdp tcp", BPF_PROG_TYPE_XDP, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("xdp udp", BPF_PROG_TYPE_XDP, 0, PROG(LOOKUP(F_LOOKUP_UDP), RELEASE_R0)),
	CASE("xdp skc", BPF_PROG_TYPE_XDP, 0, PROG(LOOKUP(F_SKC), RELEASE_R0)),
	CASE("cgroup_skb tcp", BPF_PROG_TYPE_CGROUP_SKB, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("cgroup_skb skc", BPF_PROG_TYPE_CGROUP_SKB, 0, PROG(LOOKUP(F_SKC), RELEASE_R0)),
	CASE("sk_skb udp", BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT, PROG(LOOKUP(F_LOOKUP_UDP),
	     RELEASE_R0)),
	CASE("sock_addr tcp", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("socket filter tcp", BPF_PROG_TYPE_SOCKET_FILTER, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("kprobe tcp", BPF_PROG_TYPE_KPROBE, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("lwt_in tcp", BPF_PROG_TYPE_LWT_IN, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("sock_ops tcp", BPF_PROG_TYPE_SOCK_OPS, 0, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("sk_lookup tcp", BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, PROG(LOOKUP(F_LOOKUP_TCP),
	     RELEASE_R0)),
	CASE("cgroup_sock tcp", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE, PROG(LOOKUP(F_LOOKUP_TCP), RELEASE_R0)),
	/* tuple sizes, namespaces and flags the kernel refuses at run time: NULL */
	CASE("tc tcp ipv6 size", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_TCP, 36, -1, 0), RELEASE_R0)),
	CASE("tc tcp size 0", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_TCP, 0, -1, 0), RELEASE_R0)),
	CASE("tc tcp size 13", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_TCP, 13, -1, 0), RELEASE_R0)),
	CASE("tc tcp size 40", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_TCP, 40, -1, 0), RELEASE_R0)),
	CASE("tc udp netns 0", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_UDP, 12, 0, 0), RELEASE_R0)),
	CASE("tc udp netns 12345", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_UDP, 12, 12345, 0),
	     RELEASE_R0)),
	CASE("tc skc flags 1", TC, 0, PROG(TUPLE, CALL_LOOKUP(F_SKC, 12, -1, 1), RELEASE_R0)),
	CASE("xdp tcp netns -2", BPF_PROG_TYPE_XDP, 0, PROG(TUPLE, CALL_LOOKUP(F_LOOKUP_TCP, 12, -2, 0),
	     RELEASE_R0)),
	/* the tuple from the packet (pkt_access helpers) */
	CASE("tc tuple in packet", TC, 0, PROG(MOV64_REG(6, 1), LDX(BPF_W, 2, 1, 76),
	     LDX(BPF_W, 3, 1, 80), ALU64_IMM(BPF_ADD, 2, 26), MOV64_REG(4, 2),
	     ALU64_IMM(BPF_ADD, 4, 12), JREG(BPF_JLE, 4, 3, 2), MOV64_IMM(0, 3), EXIT(),
	     MOV64_REG(1, 6), MOV64_IMM(3, 12), MOV64_IMM(4, -1), MOV64_IMM(5, 0),
	     CALL(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("tc tuple in packet unchecked", TC, 0, PROG(MOV64_REG(6, 1), LDX(BPF_W, 2, 1, 76),
	     MOV64_IMM(3, 12), MOV64_IMM(4, -1), MOV64_IMM(5, 0), CALL(F_LOOKUP_TCP),
	     RELEASE_R0)),
	CASE("tc tuple size from ctx", TC, 0, PROG(TUPLE, LDX(BPF_W, 3, 6, 0), MOV64_REG(1, 6),
	     MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -40), MOV64_IMM(4, -1), MOV64_IMM(5, 0),
	     CALL(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("tc tuple uninit", TC, 0, PROG(MOV64_REG(6, 1), CALL_LOOKUP(F_LOOKUP_TCP, 12, -1, 0),
	     RELEASE_R0)),
	CASE("tc tuple not a pointer", TC, 0, PROG(MOV64_REG(6, 1), MOV64_REG(1, 6), MOV64_IMM(2, 0),
	     MOV64_IMM(3, 12), MOV64_IMM(4, -1), MOV64_IMM(5, 0), CALL(F_LOOKUP_TCP), RELEASE_R0)),
	CASE("tc ctx not ctx", TC, 0, PROG(TUPLE, MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -40),
	     MOV64_REG(2, 1), MOV64_IMM(3, 12), MOV64_IMM(4, -1), MOV64_IMM(5, 0),
	     CALL(F_LOOKUP_TCP), RELEASE_R0)),
	/* references */
	CASE("leak", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), MOV64_IMM(0, 0), EXIT())),
	CASE("leak after check", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 0),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("leak on one path", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 5),
	     LDX(BPF_W, 1, 0, 4), JIMM(BPF_JEQ, 1, 2, 3), MOV64_REG(1, 0), CALL(F_RELEASE),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("two lookups, one leaked", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), MOV64_REG(7, 0),
	     CALL_LOOKUP(F_LOOKUP_UDP, 12, -1, 0), JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0),
	     CALL(F_RELEASE), MOV64_IMM(0, 0), EXIT())),
	CASE("two lookups, both released", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), MOV64_REG(7, 0),
	     CALL_LOOKUP(F_LOOKUP_UDP, 12, -1, 0), JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0),
	     CALL(F_RELEASE), JIMM(BPF_JEQ, 7, 0, 2), MOV64_REG(1, 7), CALL(F_RELEASE),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("release unchecked", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), MOV64_REG(1, 0), CALL(F_RELEASE),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("release twice", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 5),
	     MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_REG(1, 7), CALL(F_RELEASE),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("use after release", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 4),
	     MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(F_RELEASE), LDX(BPF_W, 0, 7, 4),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("release a scalar", TC, 0, PROG(MOV64_IMM(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 0), EXIT())),
	CASE("release the ctx", TC, 0, PROG(CALL(F_RELEASE), MOV64_IMM(0, 0), EXIT())),
	CASE("release stack", TC, 0, PROG(MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -8),
	     CALL(F_RELEASE), MOV64_IMM(0, 0), EXIT())),
	CASE("spill and fill", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 4),
	     STX(BPF_DW, 10, 0, -48), LDX(BPF_DW, 1, 10, -48), CALL(F_RELEASE),
	     MOV64_IMM(0, 2), EXIT())),
	CASE("spill, release, fill", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 5),
	     STX(BPF_DW, 10, 0, -48), MOV64_REG(1, 0), CALL(F_RELEASE),
	     LDX(BPF_DW, 1, 10, -48), LDX(BPF_W, 0, 1, 0), MOV64_IMM(0, 2), EXIT())),
	CASE("overwritten before release", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 1),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("null check in a copy", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), MOV64_REG(7, 0),
	     JIMM(BPF_JEQ, 7, 0, 4), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT(),
	     MOV64_IMM(0, 1), EXIT())),
	CASE("compare with 1", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JNE, 0, 1, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	/* accesses */
	CASE("deref unchecked", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), LDX(BPF_W, 1, 0, 4),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("write into sock", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 4),
	     ST(BPF_W, 0, 16, 1), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("stx into sock", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 5),
	     MOV64_IMM(1, 1), STX(BPF_W, 0, 1, 16), MOV64_REG(1, 0), CALL(F_RELEASE),
	     MOV64_IMM(0, 2), EXIT())),
	CASE("arithmetic on sock_or_null", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), ALU64_IMM(BPF_ADD, 0, 4),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("arithmetic on sock", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 4),
	     ALU64_IMM(BPF_ADD, 0, 4), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("sock to a helper arg", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 8),
	     MOV64_REG(7, 0), MOV64_REG(1, 0), MOV64_IMM(2, 4), CALL(BPF_FUNC_csum_diff),
	     MOV64_REG(1, 7), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT(), MOV64_IMM(0, 2), EXIT())),
	CASE("spill then release", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 4),
	     STX(BPF_DW, 10, 0, -48), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("return the released sock", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), MOV64_REG(7, 0),
	     JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_REG(0, 7), EXIT())),
	/* the skb's own socket: no reference */
	CASE("ctx sk release", TC, 0, PROG(LDX(BPF_DW, 1, 1, 168), JIMM(BPF_JNE, 1, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), CALL(F_RELEASE), MOV64_IMM(0, 0), EXIT())),
	CASE("ctx sk fullsock", TC, 0, .norun = 1, PROG(LDX(BPF_DW, 1, 1, 168), JIMM(BPF_JNE, 1, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), CALL(BPF_FUNC_sk_fullsock), JIMM(BPF_JEQ, 0, 0, 1),
	     LDX(BPF_W, 0, 0, 8), EXIT())),
	CASE("ctx sk fullsock unchecked", TC, 0, PROG(LDX(BPF_DW, 1, 1, 168),
	     CALL(BPF_FUNC_sk_fullsock), MOV64_IMM(0, 0), EXIT())),
	CASE("ctx sk fullsock release", TC, 0, PROG(LDX(BPF_DW, 1, 1, 168), JIMM(BPF_JNE, 1, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), CALL(BPF_FUNC_sk_fullsock), JIMM(BPF_JEQ, 0, 0, 2),
	     MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 0), EXIT())),
	CASE("ctx sk tcp_sock", TC, 0, .norun = 1, PROG(LDX(BPF_DW, 1, 1, 168), JIMM(BPF_JNE, 1, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), CALL(BPF_FUNC_tcp_sock), JIMM(BPF_JEQ, 0, 0, 1),
	     LDX(BPF_DW, 0, 0, 80), EXIT())),
	CASE("ctx sk listener", TC, 0, .norun = 1, PROG(LDX(BPF_DW, 1, 1, 168), JIMM(BPF_JNE, 1, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), CALL(BPF_FUNC_get_listener_sock), JIMM(BPF_JEQ, 0, 0, 1),
	     LDX(BPF_W, 0, 0, 72), EXIT())),
	CASE("cgroup_skb ctx sk tcp_sock", BPF_PROG_TYPE_CGROUP_SKB, 0, .norun = 1, PROG(LDX(BPF_DW, 1, 1, 168),
	     JIMM(BPF_JNE, 1, 0, 2), MOV64_IMM(0, 0), EXIT(), CALL(BPF_FUNC_tcp_sock),
	     MOV64_IMM(0, 1), EXIT())),
	CASE("xdp fullsock", BPF_PROG_TYPE_XDP, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 4),
	     MOV64_REG(1, 0), CALL(BPF_FUNC_sk_fullsock), MOV64_IMM(0, 2), EXIT(),
	     MOV64_IMM(0, 1), EXIT())),
	CASE("fullsock of a scalar", TC, 0, PROG(MOV64_IMM(1, 0), CALL(BPF_FUNC_sk_fullsock),
	     MOV64_IMM(0, 0), EXIT())),
	/* casts keep the reference */
	CASE("skc fullsock, release the cast", TC, 0, PROG(LOOKUP(F_SKC), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_fullsock),
	     JIMM(BPF_JEQ, 0, 0, 4), LDX(BPF_W, 8, 0, 8), MOV64_REG(1, 0), CALL(F_RELEASE),
	     EXIT(), MOV64_REG(1, 7), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("skc fullsock, leak when NULL", TC, 0, PROG(LOOKUP(F_SKC), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_fullsock),
	     JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("skc fullsock, release both", TC, 0, PROG(LOOKUP(F_SKC), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_fullsock),
	     JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0), CALL(F_RELEASE), MOV64_REG(1, 7),
	     CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("tcp_sock, release the cast", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(BPF_FUNC_tcp_sock),
	     JIMM(BPF_JEQ, 0, 0, 4), LDX(BPF_DW, 8, 0, 88), MOV64_REG(1, 0), CALL(F_RELEASE),
	     EXIT(), MOV64_REG(1, 7), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("tcp_sock to fullsock", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(BPF_FUNC_tcp_sock),
	     JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_fullsock),
	     MOV64_REG(1, 7), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("write into tcp_sock", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(BPF_FUNC_tcp_sock),
	     JIMM(BPF_JEQ, 0, 0, 1), ST(BPF_W, 0, 0, 1), MOV64_REG(1, 7), CALL(F_RELEASE),
	     MOV64_IMM(0, 2), EXIT())),
	CASE("tcp_sock unchecked", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0), CALL(BPF_FUNC_tcp_sock),
	     LDX(BPF_W, 8, 0, 0), MOV64_REG(1, 7), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("release the listener", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 1), EXIT(), MOV64_REG(7, 0), MOV64_REG(1, 0),
	     CALL(BPF_FUNC_get_listener_sock), JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0),
	     CALL(F_RELEASE), MOV64_REG(1, 7), CALL(F_RELEASE), MOV64_IMM(0, 2), EXIT())),
	CASE("sockops tcp_sock of ctx sk", BPF_PROG_TYPE_SOCK_OPS, 0, PROG(LDX(BPF_DW, 1, 1, 184),
	     JIMM(BPF_JNE, 1, 0, 2), MOV64_IMM(0, 1), EXIT(), CALL(BPF_FUNC_tcp_sock),
	     MOV64_IMM(0, 1), EXIT())),
	CASE("sockops fullsock", BPF_PROG_TYPE_SOCK_OPS, 0, PROG(LDX(BPF_DW, 1, 1, 184),
	     JIMM(BPF_JNE, 1, 0, 2), MOV64_IMM(0, 1), EXIT(), CALL(BPF_FUNC_sk_fullsock),
	     MOV64_IMM(0, 1), EXIT())),
	CASE("sock_addr release ctx sk", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, PROG(LDX(BPF_DW, 1, 1, 64), CALL(F_RELEASE), MOV64_IMM(0, 1), EXIT())),
	CASE("sk_lookup release ctx sk", BPF_PROG_TYPE_SK_LOOKUP, BPF_SK_LOOKUP, PROG(LDX(BPF_DW, 1, 1, 0), JIMM(BPF_JEQ, 1, 0, 1), CALL(F_RELEASE), MOV64_IMM(0, 1),
	     EXIT())),
	/* a tail call or a bpf-to-bpf exit with a reference held */
	CASE("subprog leaks", TC, 0, PROG(CALL_SUB(2), MOV64_IMM(0, 0), EXIT(), LOOKUP(F_LOOKUP_TCP),
	     MOV64_IMM(0, 0), EXIT())),
	CASE("subprog releases the caller's", TC, 0, PROG(LOOKUP(F_LOOKUP_TCP), JIMM(BPF_JEQ, 0, 0, 2),
	     MOV64_REG(1, 0), CALL_SUB(2), MOV64_IMM(0, 0), EXIT(), CALL(F_RELEASE),
	     MOV64_IMM(0, 0), EXIT())),
};

/* every offset and size of struct bpf_sock / bpf_tcp_sock through each pointer type */
static void access_cases(sys_fn sys, struct transcript *t)
{
	static const int sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
	static const char *const sz_name[] = { "u8", "u16", "u32", "u64" };

	for (int kind = 0; kind < 3; kind++) {
		int end = kind == 2 ? 120 : 88;

		for (int off = -4; off < end; off += kind == 2 ? 4 : 1)
			for (int s = 0; s < 4; s++) {
				struct bpf_insn p[64] = {
					LOOKUP(kind == 1 ? F_SKC : F_LOOKUP_TCP),
					JIMM(BPF_JNE, 0, 0, 2), MOV64_IMM(0, 1), EXIT(),
					MOV64_REG(7, 0), MOV64_REG(1, 0),
				};
				struct pcase c = { .type = TC, .insns = p };
				size_t n = 23; /* the lookup, its NULL exit, r7 = r1 = r0 */
				char name[64];

				if (kind == 2) {
					p[n++] = (struct bpf_insn)CALL(BPF_FUNC_tcp_sock);
					p[n++] = (struct bpf_insn)JIMM(BPF_JEQ, 0, 0, 1);
					p[n++] = (struct bpf_insn)LDX(sizes[s], 8, 0, off);
				} else {
					p[n++] = (struct bpf_insn)LDX(sizes[s], 8, 1, off);
				}
				p[n++] = (struct bpf_insn)MOV64_REG(1, 7);
				p[n++] = (struct bpf_insn)CALL(F_RELEASE);
				p[n++] = (struct bpf_insn)MOV64_IMM(0, 2);
				p[n++] = (struct bpf_insn)EXIT();
				c.len = n;
				snprintf(name, sizeof(name), "%s read %s at %d",
					 kind == 0 ? "sock" : kind == 1 ? "sock_common" : "tcp_sock",
					 sz_name[s], off);
				c.name = name;
				run_case(sys, t, &c);
			}
	}
}

static void script(sys_fn sys, struct transcript *t)
{
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		run_case(sys, t, &fixed[i]);
	access_cases(sys, t);
}

static struct transcript kt, bt;

int main(void)
{
	static const script_fn parts[] = { script, NULL };

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	if (transcript_run("sock", parts, &kt, &bt))
		return 1;
	transcript_verdict("sock lookup oracle", kt.steps, bt.steps, &kt, &bt, 30);
	return t_done();
}
