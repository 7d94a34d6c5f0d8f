/* test_reuseport_oracle.c - BPF_MAP_TYPE_REUSEPORT_SOCKARRAY and bpf_sk_select_reuseport
 * against the kernel (src/maps/sockmap.c): one script on the kernel's bpf() and on
 * bpfrt_bpf(), a line per step, equal line by line:
 *   - MAP_CREATE: value sizes, key size, max_entries, flags;
 *   - element commands with 16 kinds of fd (TCP/UDP, v4/v6, with and without
 *     SO_REUSEPORT, listening, bound only, established, unix, ICMP, a file, closed, -1),
 *     flags, indexes past the end, a socket in two slots, replacement, lookups into 8-
 *     and 4-byte values (the cookie), deletes, get_next_key, lookup_and_delete;
 *   - programs: sk_select_reuseport from sk_reuseport with a reuseport array, sockmap,
 *     sockhash or array, from tc; map lookups of the array; BPF_PROG_TEST_RUN of
 *     sk_reuseport (the kernel has none: ENOTSUPP).
 * Root only (the kernel side); otherwise skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "sockets.h"
#include "verifier/cases/case.h"

enum { S_TCP4_RP, S_TCP4, S_TCP6_RP, S_TCP6ONLY_RP, S_UDP4_RP, S_UDP4, S_UDP6_RP,
       S_UDP4_UNBOUND_RP, S_TCP4_BOUND_RP, S_TCP4_EST, S_UNIX, S_UNIX_DGRAM, S_ICMP, S_FILE,
       S_CLOSED, S_NEG, S_TCP4_RP2, N_FDS };
static const char *const fd_names[N_FDS] = {
	"tcp4 listen reuseport", "tcp4 listen", "tcp6 listen reuseport",
	"tcp6 v6only listen reuseport", "udp4 bound reuseport", "udp4 bound",
	"udp6 bound reuseport", "udp4 unbound reuseport", "tcp4 bound reuseport",
	"tcp4 established", "unix stream", "unix dgram", "icmp", "file", "closed fd", "fd -1",
	"tcp4 listen reuseport 2",
};
static int fds[N_FDS];

static int make_fds(void)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int sv[2], peer;

	fds[S_TCP4_RP] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, SB_REUSEPORT);
	fds[S_TCP4_RP2] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, SB_REUSEPORT);
	fds[S_TCP4] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, 0);
	fds[S_TCP6_RP] = sock_bound(AF_INET6, SOCK_STREAM, 0, NULL, SB_REUSEPORT);
	fds[S_TCP6ONLY_RP] = sock_bound(AF_INET6, SOCK_STREAM, 0, NULL, SB_REUSEPORT | SB_V6ONLY);
	fds[S_UDP4_RP] = sock_bound(AF_INET, SOCK_DGRAM, 0, NULL, SB_REUSEPORT);
	fds[S_UDP4] = sock_bound(AF_INET, SOCK_DGRAM, 0, NULL, 0);
	fds[S_UDP6_RP] = sock_bound(AF_INET6, SOCK_DGRAM, 0, NULL, SB_REUSEPORT);
	fds[S_UDP4_UNBOUND_RP] = sock_bound(AF_INET, SOCK_DGRAM, 0, NULL,
					    SB_REUSEPORT | SB_NO_BIND);
	fds[S_TCP4_BOUND_RP] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL,
					  SB_REUSEPORT | SB_NO_LISTEN);
	peer = socket(AF_INET, SOCK_STREAM, 0);
	if (getsockname(fds[S_TCP4], (struct sockaddr *)&ss, &len) ||
	    connect(peer, (struct sockaddr *)&ss, len))
		return -1;
	fds[S_TCP4_EST] = accept(fds[S_TCP4], NULL, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	fds[S_UNIX] = sv[0];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return -1;
	fds[S_UNIX_DGRAM] = sv[0];
	fds[S_ICMP] = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
	fds[S_FILE] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds[S_CLOSED] = 9999;
	fds[S_NEG] = -1;
	for (int i = 0; i < N_FDS; i++) {
		if (fds[i] < 0 && i != S_NEG && i != S_ICMP) {
			fprintf(stderr, "could not make %s\n", fd_names[i]);
			return -1;
		}
		(void)sock_cookie(fds[i]);
	}
	return 0;
}

static void creates(sys_fn sys, struct transcript *t)
{
	static const struct {
		const char *what;
		uint32_t key, value, max, flags;
	} c[] = {
		{ "value 8", 4, 8, 4, 0 },
		{ "value 4", 4, 4, 4, 0 },
		{ "value 16", 4, 16, 4, 0 },
		{ "value 0", 4, 0, 4, 0 },
		{ "key 8", 8, 8, 4, 0 },
		{ "max 0", 4, 8, 0, 0 },
		{ "numa", 4, 8, 4, BPF_F_NUMA_NODE },
		{ "rdonly", 4, 8, 4, BPF_F_RDONLY },
		{ "wronly", 4, 8, 4, BPF_F_WRONLY },
		{ "rdonly_prog", 4, 8, 4, BPF_F_RDONLY_PROG },
		{ "rdonly_prog|wronly_prog", 4, 8, 4, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG },
		{ "mmapable", 4, 8, 4, BPF_F_MMAPABLE },
		{ "inner map", 4, 8, 4, BPF_F_INNER_MAP },
		{ "preserve elems", 4, 8, 4, BPF_F_PRESERVE_ELEMS },
		{ "no prealloc", 4, 8, 4, BPF_F_NO_PREALLOC },
		{ "big", 4, 8, 1u << 20, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int fd = create_map(sys, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, c[i].key, c[i].value,
				    c[i].max, c[i].flags, 0);

		t->steps++;
		say(t, "create %s: %d\n", c[i].what, fd < 0 ? fd : 0);
		if (fd >= 0)
			close(fd);
	}
}

static void say_lookup(sys_fn sys, struct transcript *t, int map, uint32_t k, int fd)
{
	uint64_t v = 0;
	int err = elem(sys, BPF_MAP_LOOKUP_ELEM, map, &k, &v, 0);

	if (err)
		say(t, " lookup %u %d", k, err);
	else
		say(t, " lookup %u %s", k, v == sock_cookie(fd) ? "cookie" : "other");
}

static void elements(sys_fn sys, struct transcript *t)
{
	int m8 = create_map(sys, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 4, 0, 0);
	int m4 = create_map(sys, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 4, 4, 0, 0);
	uint32_t k0 = 0, k1 = 1, k9 = 9, next;

	if (m8 < 0 || m4 < 0) {
		say(t, "elements: create %d %d\n", m8, m4);
		return;
	}
	for (int i = 0; i < N_FDS; i++) {
		uint64_t v8 = (uint64_t)(int64_t)fds[i];
		uint32_t v4 = (uint32_t)fds[i];

		t->steps++;
		say(t, "%s: update %d", fd_names[i], elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &v8, 0));
		say_lookup(sys, t, m8, 0, fds[i]);
		say(t, " noexist %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &v8, BPF_NOEXIST));
		say(t, " again %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &v8, 0));
		say(t, " slot 1 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k1, &v8, BPF_NOEXIST));
		say(t, " exist in 1 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k1, &v8, BPF_EXIST));
		say(t, " 4-byte %d", elem(sys, BPF_MAP_UPDATE_ELEM, m4, &k0, &v4, 0));
		say_lookup(sys, t, m4, 0, fds[i]);
		say(t, " delete %d", elem(sys, BPF_MAP_DELETE_ELEM, m8, &k0, NULL, 0));
		say(t, " again %d", elem(sys, BPF_MAP_DELETE_ELEM, m8, &k0, NULL, 0));
		say(t, " 4-byte delete %d", elem(sys, BPF_MAP_DELETE_ELEM, m4, &k0, NULL, 0));
		say(t, " slot 1 delete %d\n", elem(sys, BPF_MAP_DELETE_ELEM, m8, &k1, NULL, 0));
	}
	{
		uint64_t a = (uint64_t)fds[S_TCP4_RP], b = (uint64_t)fds[S_TCP4_RP2];
		uint64_t big = 1ull << 32 | (uint64_t)fds[S_TCP4_RP], v = 0;

		t->steps++;
		say(t, "flags 3 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &a, 3));
		say(t, " flags 4 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &a, 4));
		say(t, " index 9 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k9, &a, 0));
		say(t, " index 9 bad fd %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k9, &big, 0));
		say(t, " fd above S32_MAX %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &big, 0));
		say(t, " exist empty %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &a, BPF_EXIST));
		say(t, " add %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &a, BPF_NOEXIST));
		say(t, " replace %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &b, BPF_EXIST));
		say_lookup(sys, t, m8, 0, fds[S_TCP4_RP2]);
		say(t, " old one in 1 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k1, &a, 0));
		say(t, " new one in 1 %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k1, &b, 0));
		say_lookup(sys, t, m8, 9, -1);
		say(t, " 4-byte lookup 9 %d", elem(sys, BPF_MAP_LOOKUP_ELEM, m4, &k9, &v, 0));
		say(t, " delete 9 %d", elem(sys, BPF_MAP_DELETE_ELEM, m8, &k9, NULL, 0));
		say(t, " next NULL %d", elem(sys, BPF_MAP_GET_NEXT_KEY, m8, NULL, &next, 0));
		say(t, " %u", next);
		say(t, " next 1 %d", elem(sys, BPF_MAP_GET_NEXT_KEY, m8, &k1, &next, 0));
		say(t, " %u", next);
		say(t, " next 9 %d", elem(sys, BPF_MAP_GET_NEXT_KEY, m8, &k9, &next, 0));
		say(t, " %u", next);
		k9 = 3;
		say(t, " next 3 %d", elem(sys, BPF_MAP_GET_NEXT_KEY, m8, &k9, &next, 0));
		say(t, " lookup_and_delete %d",
		    elem(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, m8, &k0, &v, 0));
		say(t, " F_LOCK lookup %d", elem(sys, BPF_MAP_LOOKUP_ELEM, m8, &k0, &v, BPF_F_LOCK));
		say(t, " delete 0 %d delete 1 %d\n", elem(sys, BPF_MAP_DELETE_ELEM, m8, &k0, NULL, 0),
		    elem(sys, BPF_MAP_DELETE_ELEM, m8, &k1, NULL, 0));
	}
	{
		/* the same socket in two reuseport arrays */
		int other = create_map(sys, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8, 4, 0, 0);
		uint64_t a = (uint64_t)fds[S_UDP4_RP];

		t->steps++;
		say(t, "two arrays: first %d", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &a, 0));
		say(t, " second %d", elem(sys, BPF_MAP_UPDATE_ELEM, other, &k0, &a, 0));
		say(t, " after delete %d", (elem(sys, BPF_MAP_DELETE_ELEM, m8, &k0, NULL, 0),
					    elem(sys, BPF_MAP_UPDATE_ELEM, other, &k0, &a, 0)));
		say(t, " back %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, m8, &k0, &a, 0));
		close(other);
	}
	close(m8);
	close(m4);
}

/* ---- programs ---------------------------------------------------------------------------- */
static int load(sys_fn sys, struct transcript *t, const char *name, uint32_t type,
		uint32_t attach, const struct bpf_insn *p, size_t n, int map_fd)
{
	static char log[1 << 16];
	struct bpf_insn insns[64];
	union bpf_attr a;
	int fd;

	memcpy(insns, p, n * sizeof(insns[0]));
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map_fd;
	prog_attr(&a, type, attach, insns, n);
	fd = prog_load_log(sys, &a, log, sizeof(log), 1);
	t->steps++;
	say(t, "%s: ", name);
	if (fd < 0)
		say_load_error(t, NULL, fd, log);
	return fd;
}

#define SELECT                                                                            \
	ST(BPF_W, 10, -4, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -4), LD_MAP(2, 0),      \
	MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_select_reuseport), MOV64_IMM(0, 1), EXIT()

static void programs(sys_fn sys, struct transcript *t)
{
	static const struct {
		const char *what;
		uint32_t map_type, key, value;
	} maps[] = {
		{ "reuseport array", BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 8 },
		{ "sockmap", BPF_MAP_TYPE_SOCKMAP, 4, 8 },
		{ "sockhash", BPF_MAP_TYPE_SOCKHASH, 4, 8 },
		{ "array", BPF_MAP_TYPE_ARRAY, 4, 8 },
		{ "hash", BPF_MAP_TYPE_HASH, 4, 8 },
	};
	static const struct bpf_insn select[] = { SELECT };
	static const struct bpf_insn lookup[] = {
		ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), LD_MAP(1, 0),
		CALL(BPF_FUNC_map_lookup_elem), MOV64_IMM(0, 1), EXIT(),
	};
	static const struct bpf_insn update[] = {
		ST(BPF_W, 10, -4, 0), ST(BPF_DW, 10, -16, 0), MOV64_REG(2, 10),
		ALU64_IMM(BPF_ADD, 2, -4), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -16),
		LD_MAP(1, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_map_update_elem), MOV64_IMM(0, 1),
		EXIT(),
	};
	static const struct bpf_insn key_short[] = {
		ST(BPF_H, 10, -2, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -2), LD_MAP(2, 0),
		MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_select_reuseport), MOV64_IMM(0, 1), EXIT(),
	};
	static const struct bpf_insn select_ret[] = {
		ST(BPF_W, 10, -4, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -4), LD_MAP(2, 0),
		MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_select_reuseport), EXIT(),
	};
	static const struct bpf_insn others[] = {
		MOV64_REG(6, 1), MOV64_IMM(2, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8),
		MOV64_IMM(4, 8), MOV64_IMM(5, 0), CALL(BPF_FUNC_skb_load_bytes_relative),
		LDX(BPF_DW, 1, 6, (int16_t)offsetof(struct sk_reuseport_md, sk)),
		CALL(BPF_FUNC_get_socket_cookie), CALL(BPF_FUNC_ktime_get_coarse_ns),
		MOV64_IMM(0, 1), EXIT(),
	};
	static const struct bpf_insn cookie_ctx[] = {
		CALL(BPF_FUNC_get_socket_cookie), MOV64_IMM(0, 1), EXIT(),
	};
	static const struct bpf_insn cookie_null[] = {
		MOV64_IMM(1, 0), CALL(BPF_FUNC_get_socket_cookie), MOV64_IMM(0, 1), EXIT(),
	};
	static const struct bpf_insn cookie_migrating[] = {
		LDX(BPF_DW, 1, 1, (int16_t)offsetof(struct sk_reuseport_md, migrating_sk)),
		CALL(BPF_FUNC_get_socket_cookie), MOV64_IMM(0, 1), EXIT(),
	};
	char name[128];

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int m = create_map(sys, maps[i].map_type, maps[i].key, maps[i].value, 4, 0, 0);
		int fd;

		if (m < 0) {
			say(t, "%s: create %d\n", maps[i].what, m);
			continue;
		}
		snprintf(name, sizeof(name), "sk_reuseport select from %s", maps[i].what);
		fd = load(sys, t, name, BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT, select,
			  sizeof(select) / sizeof(select[0]), m);
		if (fd >= 0) {
			union bpf_attr a;
			unsigned char pkt[64] = { 0 };

			memset(&a, 0, sizeof(a));
			a.test.prog_fd = (uint32_t)fd;
			a.test.data_in = (uint64_t)(uintptr_t)pkt;
			a.test.data_size_in = sizeof(pkt);
			say(t, "ok, test run %d\n", sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0);
			close(fd);
		}
		snprintf(name, sizeof(name), "sk_reuseport select_or_migrate from %s", maps[i].what);
		fd = load(sys, t, name, BPF_PROG_TYPE_SK_REUSEPORT,
			  BPF_SK_REUSEPORT_SELECT_OR_MIGRATE, select_ret,
			  sizeof(select_ret) / sizeof(select_ret[0]), m);
		if (fd >= 0) {
			say(t, "ok\n");
			close(fd);
		}
		snprintf(name, sizeof(name), "tc select from %s", maps[i].what);
		fd = load(sys, t, name, BPF_PROG_TYPE_SCHED_CLS, 0, select,
			  sizeof(select) / sizeof(select[0]), m);
		if (fd >= 0) {
			say(t, "ok\n");
			close(fd);
		}
		snprintf(name, sizeof(name), "sk_reuseport lookup in %s", maps[i].what);
		fd = load(sys, t, name, BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT, lookup,
			  sizeof(lookup) / sizeof(lookup[0]), m);
		if (fd >= 0) {
			say(t, "ok\n");
			close(fd);
		}
		snprintf(name, sizeof(name), "sk_reuseport update of %s", maps[i].what);
		fd = load(sys, t, name, BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT, update,
			  sizeof(update) / sizeof(update[0]), m);
		if (fd >= 0) {
			say(t, "ok\n");
			close(fd);
		}
		snprintf(name, sizeof(name), "sk_reuseport short key into %s", maps[i].what);
		fd = load(sys, t, name, BPF_PROG_TYPE_SK_REUSEPORT, BPF_SK_REUSEPORT_SELECT,
			  key_short, sizeof(key_short) / sizeof(key_short[0]), m);
		if (fd >= 0) {
			say(t, "ok\n");
			close(fd);
		}
		close(m);
	}
	{
		static const struct {
			const char *what;
			const struct bpf_insn *p;
			size_t n;
		} c[] = {
			{ "sk_reuseport load_bytes_relative, cookie, coarse_ns", others,
			  sizeof(others) / sizeof(others[0]) },
			{ "sk_reuseport cookie of the ctx", cookie_ctx,
			  sizeof(cookie_ctx) / sizeof(cookie_ctx[0]) },
			{ "sk_reuseport cookie of NULL", cookie_null,
			  sizeof(cookie_null) / sizeof(cookie_null[0]) },
			{ "sk_reuseport cookie of migrating_sk", cookie_migrating,
			  sizeof(cookie_migrating) / sizeof(cookie_migrating[0]) },
		};

		for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			int fd = load(sys, t, c[i].what, BPF_PROG_TYPE_SK_REUSEPORT,
				      BPF_SK_REUSEPORT_SELECT, c[i].p, c[i].n, -1);

			if (fd >= 0) {
				say(t, "ok\n");
				close(fd);
			}
		}
	}
}

static void script(sys_fn sys, struct transcript *t)
{
	creates(sys, t);
	elements(sys, t);
	programs(sys, t);
}

static struct transcript kt, bt;

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	if (make_fds())
		T_SKIP("could not make the sockets");
	script(kernel_bpf, &kt);
	script(bpfrt_bpf, &bt);
	compare_transcripts(&kt, &bt);
	if (getenv("BPFRT_SHOW"))
		fputs(kt.text, stdout);
	printf("reuseport oracle: %u steps, %u lines each side\n", kt.steps, kt.says);
	return t_done();
}
