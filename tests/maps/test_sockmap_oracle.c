/* test_sockmap_oracle.c - sockmap and sockhash (src/maps/sockmap.c) against the kernel:
 * one script runs on the kernel's bpf() and on bpfrt_bpf(), a line per step, and the
 * transcripts must be equal line by line:
 *   - MAP_CREATE's checks (key and value sizes, max_entries, flags) and GET_INFO;
 *   - updates from bpf() with the fds of sockets in each state the kernel tells apart
 *     (TCP listening, established, closed; UDP; unix stream connected or not, unix
 *     datagram; netlink), of a file, of no file, and flags; lookups (the socket's
 *     cookie, compared with SO_COOKIE; -ENOSPC for 4-byte values), deletes, the
 *     GET_NEXT_KEY walk (the sockhash's bucket order);
 *   - programs: which helpers take these maps in which program types, lookups giving a
 *     referenced socket, updates from programs, test runs on empty maps.
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "sockets.h"
#include "verifier/cases/case.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#define SM BPF_MAP_TYPE_SOCKMAP
#define SH BPF_MAP_TYPE_SOCKHASH

static void creates(sys_fn sys, struct transcript *t)
{
	static const struct create_case c[] = {
		{ "sockmap 4/4", SM, 4, 4, 8, 0 },
		{ "sockmap 4/8", SM, 4, 8, 8, 0 },
		{ "sockmap key 8", SM, 8, 8, 8, 0 },
		{ "sockmap key 0", SM, 0, 8, 8, 0 },
		{ "sockmap value 0", SM, 4, 0, 8, 0 },
		{ "sockmap value 2", SM, 4, 2, 8, 0 },
		{ "sockmap value 16", SM, 4, 16, 8, 0 },
		{ "sockmap max 0", SM, 4, 4, 0, 0 },
		{ "sockmap numa", SM, 4, 4, 8, BPF_F_NUMA_NODE },
		{ "sockmap rdonly", SM, 4, 4, 8, BPF_F_RDONLY },
		{ "sockmap wronly", SM, 4, 4, 8, BPF_F_WRONLY },
		{ "sockmap rdonly_prog", SM, 4, 4, 8, BPF_F_RDONLY_PROG },
		{ "sockmap no_prealloc", SM, 4, 4, 8, BPF_F_NO_PREALLOC },
		{ "sockmap mmapable", SM, 4, 4, 8, BPF_F_MMAPABLE },
		{ "sockmap inner", SM, 4, 4, 8, BPF_F_INNER_MAP },
		{ "sockhash 4/8", SH, 4, 8, 8, 0 },
		{ "sockhash 12/4", SH, 12, 4, 8, 0 },
		{ "sockhash key 0", SH, 0, 8, 8, 0 },
		{ "sockhash key 512", SH, 512, 8, 8, 0 },
		{ "sockhash key 513", SH, 513, 8, 8, 0 },
		{ "sockhash key 513 value 3", SH, 513, 3, 8, 0 },
		{ "sockhash value 12", SH, 4, 12, 8, 0 },
		{ "sockhash max 0", SH, 4, 8, 0, 0 },
		{ "sockhash max 1", SH, 4, 8, 1, 0 },
		{ "sockhash no_prealloc", SH, 4, 8, 8, BPF_F_NO_PREALLOC },
		{ "sockhash zero_seed", SH, 4, 8, 8, BPF_F_ZERO_SEED },
	};

	say_creates(sys, t, c, sizeof(c) / sizeof(c[0]));
}

/* ---- the sockets ------------------------------------------------------------------------ */
enum { S_LISTEN, S_CLIENT, S_SERVER, S_TCP_NEW, S_UDP, S_UDP_BOUND, S_UNIX_STREAM,
       S_UNIX_STREAM_NEW, S_UNIX_DGRAM, S_NETLINK, S_FILE, S_COUNT };
static const char *const sock_name[S_COUNT] = {
	"tcp listen", "tcp client", "tcp accepted", "tcp closed", "udp", "udp bound",
	"unix stream pair", "unix stream new", "unix dgram", "netlink", "file",
};
static int socks[S_COUNT];

static int make_sockets(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int pair[2];

	socks[S_LISTEN] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, 0);
	if (getsockname(socks[S_LISTEN], (struct sockaddr *)&sin, &len))
		return -1;
	socks[S_CLIENT] = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(socks[S_CLIENT], (struct sockaddr *)&sin, sizeof(sin)))
		return -1;
	socks[S_SERVER] = accept(socks[S_LISTEN], NULL, NULL);
	socks[S_TCP_NEW] = socket(AF_INET, SOCK_STREAM, 0);
	socks[S_UDP] = socket(AF_INET, SOCK_DGRAM, 0);
	socks[S_UDP_BOUND] = sock_bound(AF_INET6, SOCK_DGRAM, 0, NULL, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair))
		return -1;
	socks[S_UNIX_STREAM] = pair[0];
	socks[S_UNIX_STREAM_NEW] = socket(AF_UNIX, SOCK_STREAM, 0);
	socks[S_UNIX_DGRAM] = socket(AF_UNIX, SOCK_DGRAM, 0);
	socks[S_NETLINK] = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	socks[S_FILE] = open("/dev/null", O_RDONLY);
	for (int i = 0; i < S_COUNT; i++)
		if (socks[i] < 0)
			return -1;
	return 0;
}

/* a lookup's answer: the errno, or which socket's cookie it gave */
static void say_lookup(sys_fn sys, struct transcript *t, const char *what, int fd,
		       const void *key)
{
	uint64_t v = 0;
	int err = elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, &v, 0);

	if (err) {
		say(t, "%s lookup: %d\n", what, err);
		return;
	}
	for (int i = 0; i < S_COUNT; i++)
		if (v == sock_cookie(socks[i])) {
			say(t, "%s lookup: cookie of %s\n", what, sock_name[i]);
			return;
		}
	say(t, "%s lookup: unknown cookie\n", what);
}

static void walk(sys_fn sys, struct transcript *t, const char *what, int fd, uint32_t ksize)
{
	unsigned char key[16], next[16];
	char line[512];
	size_t n = 0;
	int err, first = 1;

	for (int i = 0; i < 64; i++) {
		err = elem(sys, BPF_MAP_GET_NEXT_KEY, fd, first ? NULL : key, next, 0);
		if (err)
			break;
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %u", next[0] | next[1] << 8);
		memcpy(key, next, ksize);
		first = 0;
		if (n >= sizeof(line) - 8)
			break;
	}
	line[n] = 0;
	say(t, "%s walk:%s end %d\n", what, line, err);
}

static void elements(sys_fn sys, struct transcript *t, uint32_t type, uint32_t ksize,
		     uint32_t vsize, uint32_t max)
{
	int fd = create_map(sys, type, ksize, vsize, max, 0, 0);
	unsigned char key[16] = { 0 };
	char what[64];
	uint64_t v;

	snprintf(what, sizeof(what), "type %u key %u value %u max %u", type, ksize, vsize, max);
	if (fd < 0) {
		say(t, "%s: create %d\n", what, fd);
		return;
	}
	/* each socket kind into key 0 (replacing), flags each */
	for (int i = 0; i < S_COUNT; i++) {
		v = (uint64_t)socks[i];
		say(t, "%s update %s: %d\n", what, sock_name[i],
		    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, BPF_ANY));
	}
	say_lookup(sys, t, what, fd, key);
	v = 999;
	say(t, "%s update closed fd: %d\n", what, elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, 0));
	v = (uint64_t)1 << 32 | (uint64_t)socks[S_CLIENT];
	say(t, "%s update fd above S32_MAX: %d\n", what,
	    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, 0));
	v = (uint64_t)socks[S_CLIENT];
	for (uint64_t f = 0; f <= 5; f++)
		say(t, "%s update flags %llu: %d\n", what, (unsigned long long)f,
		    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, f));
	v = (uint64_t)socks[S_TCP_NEW];
	say(t, "%s update closed socket flags 9: %d\n", what,
	    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, 9));
	/* fill keys 0..max+1 with alternating sockets */
	for (uint32_t k = 0; k < max + 2; k++) {
		memset(key, 0, sizeof(key));
		key[0] = (unsigned char)(k * 7);
		key[ksize - 1] ^= (unsigned char)k;
		v = (uint64_t)socks[k % 2 ? S_UDP : S_SERVER];
		say(t, "%s update key %u noexist: %d\n", what, key[0],
		    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, BPF_NOEXIST));
		say_lookup(sys, t, what, fd, key);
	}
	walk(sys, t, what, fd, ksize);
	memset(key, 0, sizeof(key));
	key[0] = 7;
	key[ksize - 1] ^= 1;
	v = (uint64_t)socks[S_LISTEN];
	say(t, "%s replace key 7: %d\n", what, elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, &v, BPF_EXIST));
	walk(sys, t, what, fd, ksize);
	say(t, "%s delete key 7: %d\n", what, elem(sys, BPF_MAP_DELETE_ELEM, fd, key, NULL, 0));
	say(t, "%s delete key 7 again: %d\n", what, elem(sys, BPF_MAP_DELETE_ELEM, fd, key, NULL, 0));
	say_lookup(sys, t, what, fd, key);
	walk(sys, t, what, fd, ksize);
	memset(key, 0xff, sizeof(key));
	say_lookup(sys, t, what, fd, key);
	say(t, "%s delete missing: %d\n", what, elem(sys, BPF_MAP_DELETE_ELEM, fd, key, NULL, 0));
	say(t, "%s get_next missing: %d\n", what,
	    elem(sys, BPF_MAP_GET_NEXT_KEY, fd, key, key + 8, 0));
	say(t, "%s lookup_and_delete: %d\n", what,
	    elem(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, key, &v, 0));
	say(t, "%s lookup F_LOCK: %d\n", what, elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, &v, BPF_F_LOCK));
	close(fd);
}

/* ---- programs --------------------------------------------------------------------------- */
static void run_prog(sys_fn sys, struct transcript *t, const char *what, uint32_t type,
		     uint32_t attach, const struct bpf_insn *insns, size_t n)
{
	static char log[1 << 16];
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	int fd;

	prog_attr(&a, type, attach, insns, n);
	fd = prog_load_log(sys, &a, log, sizeof(log), 1);
	if (fd < 0) {
		const char *prev, *line = log_error_line(log, &prev);

		/* the last two lines that are not statistics: the error */
		say(t, "%s: load %d %.*s | %.*s\n", what, fd, prev ? line_len(prev) : 0,
		    prev ? prev : "", line_len(line), line);
		return;
	}
	if (type == BPF_PROG_TYPE_SCHED_CLS || type == BPF_PROG_TYPE_XDP) {
		pkt[12] = 0x08;
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.repeat = 1;
		if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
			say(t, "%s: ok, run %d\n", what, -errno);
		else
			say(t, "%s: ok, retval %d\n", what, (int)a.test.retval);
	} else {
		say(t, "%s: ok\n", what);
	}
	close(fd);
}

#define TC BPF_PROG_TYPE_SCHED_CLS
#define KEY0 ST(BPF_W, 10, -8, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8)
/* r0 = bpf_map_lookup_elem(map fd, &key 0) */
#define LOOKUP(fd) KEY0, I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, fd), \
	I(0, 0, 0, 0, 0), CALL(BPF_FUNC_map_lookup_elem)
#define LDMAP(r, fd) I(BPF_LD | BPF_IMM | BPF_DW, r, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)
#define P(what, type, at, ...)                                                            \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                             \
		run_prog(sys, t, what, type, at, p_, sizeof(p_) / sizeof(p_[0]));         \
	} while (0)

static void programs(sys_fn sys, struct transcript *t)
{
	int sm = create_map(sys, SM, 4, 8, 4, 0, 0), sh = create_map(sys, SH, 4, 8, 4, 0, 0);
	int arr = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0, 0);

	if (sm < 0 || sh < 0 || arr < 0) {
		say(t, "programs: create %d %d %d\n", sm, sh, arr);
		return;
	}
	for (int m = 0; m < 2; m++) {
		int fd = m ? sh : sm;
		char w[64];
		const char *mn = m ? "sockhash" : "sockmap";

#define W(s) (snprintf(w, sizeof(w), "%s %s", mn, s), w)
		P(W("lookup, release"), TC, 0, LOOKUP(fd), JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0),
		  CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 7), EXIT());
		P(W("lookup leaked"), TC, 0, LOOKUP(fd), MOV64_IMM(0, 0), EXIT());
		P(W("lookup unchecked"), TC, 0, LOOKUP(fd), LDX(BPF_W, 1, 0, 4), MOV64_IMM(0, 0),
		  EXIT());
		P(W("lookup, read family"), TC, 0, LOOKUP(fd), JIMM(BPF_JEQ, 0, 0, 3),
		  LDX(BPF_W, 6, 0, 4), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 7),
		  EXIT());
		P(W("lookup, write"), TC, 0, LOOKUP(fd), JIMM(BPF_JEQ, 0, 0, 3),
		  ST(BPF_W, 0, 4, 1), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 7),
		  EXIT());
		P(W("lookup in xdp"), BPF_PROG_TYPE_XDP, 0, LOOKUP(fd), JIMM(BPF_JEQ, 0, 0, 2),
		  MOV64_REG(1, 0), CALL(BPF_FUNC_sk_release), MOV64_IMM(0, 2), EXIT());
		P(W("lookup in socket filter"), BPF_PROG_TYPE_SOCKET_FILTER, 0, LOOKUP(fd),
		  JIMM(BPF_JEQ, 0, 0, 2), MOV64_REG(1, 0), CALL(BPF_FUNC_sk_release),
		  MOV64_IMM(0, 0), EXIT());
		P(W("update with a stack value"), TC, 0, KEY0, MOV64_REG(3, 2), LDMAP(1, fd),
		  MOV64_IMM(4, 0), CALL(BPF_FUNC_map_update_elem), EXIT());
		P(W("update with its own socket"), TC, 0, LOOKUP(fd), JIMM(BPF_JNE, 0, 0, 2),
		  MOV64_IMM(0, 1), EXIT(),
		  MOV64_REG(6, 0), MOV64_REG(3, 0), KEY0, LDMAP(1, fd), MOV64_IMM(4, 0),
		  CALL(BPF_FUNC_map_update_elem), MOV64_REG(1, 6), CALL(BPF_FUNC_sk_release),
		  MOV64_IMM(0, 7), EXIT());
		P(W("delete in tc"), TC, 0, KEY0, LDMAP(1, fd), CALL(BPF_FUNC_map_delete_elem), EXIT());
		P(W("delete in cgroup_skb"), BPF_PROG_TYPE_CGROUP_SKB, 0, KEY0, LDMAP(1, fd),
		  CALL(BPF_FUNC_map_delete_elem), MOV64_IMM(0, 1), EXIT());
		P(W("delete in sock_ops"), BPF_PROG_TYPE_SOCK_OPS, 0, KEY0, LDMAP(1, fd),
		  CALL(BPF_FUNC_map_delete_elem), MOV64_IMM(0, 1), EXIT());
		P(W("update in sock_ops"), BPF_PROG_TYPE_SOCK_OPS, 0, LDX(BPF_DW, 6, 1, 184),
		  JIMM(BPF_JNE, 6, 0, 2), MOV64_IMM(0, 1), EXIT(), MOV64_REG(3, 6), KEY0,
		  LDMAP(1, fd), MOV64_IMM(4, 0), CALL(BPF_FUNC_map_update_elem), MOV64_IMM(0, 1),
		  EXIT());
		P(W("sock_map_update"), BPF_PROG_TYPE_SOCK_OPS, 0, MOV64_REG(6, 1), KEY0,
		  MOV64_REG(3, 2), MOV64_REG(1, 6), LDMAP(2, fd), MOV64_IMM(4, 0),
		  CALL(BPF_FUNC_sock_map_update), MOV64_IMM(0, 1), EXIT());
		P(W("sock_hash_update"), BPF_PROG_TYPE_SOCK_OPS, 0, MOV64_REG(6, 1), KEY0,
		  MOV64_REG(3, 2), MOV64_REG(1, 6), LDMAP(2, fd), MOV64_IMM(4, 0),
		  CALL(BPF_FUNC_sock_hash_update), MOV64_IMM(0, 1), EXIT());
		P(W("sk_redirect_map"), BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT,
		  LDMAP(2, fd), MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_redirect_map),
		  EXIT());
		P(W("sk_redirect_hash"), BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT,
		  MOV64_REG(6, 1), KEY0, MOV64_REG(3, 2), MOV64_REG(1, 6), LDMAP(2, fd),
		  MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_redirect_hash), EXIT());
		P(W("msg_redirect_map"), BPF_PROG_TYPE_SK_MSG, BPF_SK_MSG_VERDICT, LDMAP(2, fd),
		  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_msg_redirect_map), EXIT());
		P(W("msg_redirect_hash"), BPF_PROG_TYPE_SK_MSG, BPF_SK_MSG_VERDICT, MOV64_REG(6, 1),
		  KEY0, MOV64_REG(3, 2), MOV64_REG(1, 6), LDMAP(2, fd), MOV64_IMM(4, 0),
		  CALL(BPF_FUNC_msg_redirect_hash), EXIT());
		P(W("sk_redirect_map in tc"), TC, 0, LDMAP(2, fd), MOV64_IMM(3, 0), MOV64_IMM(4, 0),
		  CALL(BPF_FUNC_sk_redirect_map), EXIT());
		P(W("redirect_map in xdp"), BPF_PROG_TYPE_XDP, 0, LDMAP(1, fd), MOV64_IMM(2, 0),
		  MOV64_IMM(3, 0), CALL(BPF_FUNC_redirect_map), EXIT());
		P(W("push"), TC, 0, KEY0, LDMAP(1, fd), MOV64_IMM(3, 0), CALL(BPF_FUNC_map_push_elem),
		  EXIT());
		P(W("pop"), TC, 0, KEY0, LDMAP(1, fd), CALL(BPF_FUNC_map_pop_elem), EXIT());
		P(W("tail call"), TC, 0, LDMAP(2, fd), MOV64_IMM(3, 0), CALL(BPF_FUNC_tail_call),
		  MOV64_IMM(0, 0), EXIT());
	}
	/* the sock_ops / sk_skb helpers on other maps */
	P("sk_redirect_map array", BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT,
	  LDMAP(2, arr), MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_redirect_map), EXIT());
	P("sock_map_update array", BPF_PROG_TYPE_SOCK_OPS, 0, MOV64_REG(6, 1), KEY0,
	  MOV64_REG(3, 2), MOV64_REG(1, 6), LDMAP(2, arr), MOV64_IMM(4, 0),
	  CALL(BPF_FUNC_sock_map_update), MOV64_IMM(0, 1), EXIT());
	close(sm);
	close(sh);
	close(arr);
}

static void script(sys_fn sys, struct transcript *t)
{
	creates(sys, t);
	elements(sys, t, SM, 4, 8, 6);
	elements(sys, t, SM, 4, 4, 3);
	elements(sys, t, SH, 4, 8, 6);
	elements(sys, t, SH, 12, 8, 5);
	elements(sys, t, SH, 2, 4, 3);
	programs(sys, t);
}

static struct transcript kt, bt;

int main(void)
{
	static const script_fn parts[] = { script, NULL };
	int probe;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	probe = create_map(kernel_bpf, SM, 4, 8, 1, 0, 0);
	if (probe < 0)
		T_SKIP("the kernel refuses a sockmap (%s)", strerror(-probe));
	close(probe);
	if (make_sockets())
		T_SKIP("cannot make the test's sockets (%s)", strerror(errno));
	if (transcript_run("sockmap", parts, &kt, &bt))
		return 1;
	transcript_verdict("sockmap oracle", kt.says, bt.says, &kt, &bt, 40);
	return t_done();
}
