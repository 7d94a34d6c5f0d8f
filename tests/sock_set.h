/* sock_set.h - the 11 real sockets the socket-cast and test-run oracles
 * (tests/attach/test_sock_cast_oracle.c, tests/api/test_prog_test_run_oracle.c) put in a
 * sockmap for both the kernel and bpfrt: TCP listeners v4/v6 (::1, ::, v6only,
 * reuseport), UDP v4/v6 (bound, connected), a unix stream pair, an established TCP
 * connection (both ends); and the start of a program that takes one from the sockmap.
 * Include after transcript.h.
 */
#ifndef BPFRT_TESTS_SOCK_SET_H
#define BPFRT_TESTS_SOCK_SET_H

#include <errno.h>
#include <stdio.h>

#include "sockets.h"
#include "transcript.h"
#include "verifier/cases/case.h"

enum { S_TCP4, S_UDP4, S_TCP6, S_TCP6_ANY, S_TCP6_ONLY, S_TCP4_REUSE, S_UNIX, S_TCP4_EST,
       S_UDP4_CONN, S_UDP6, S_TCP4_CLIENT, N_SOCKS };

static inline const char *sock_set_name(int i)
{
	static const char *const names[N_SOCKS] = {
		"tcp4 listen", "udp4", "tcp6 listen ::1", "tcp6 listen ::", "tcp6 v6only",
		"tcp4 reuseport", "unix stream", "tcp4 established", "udp4 connected", "udp6",
		"tcp4 client"
	};

	return i >= 0 && i < N_SOCKS ? names[i] : "?";
}

/* Make the set into socks; peers gets the other ends, kept open (unix peer, TCP client).
 * flags: sock_bound()'s, for every bound socket.  0, or -1 if a socket is missing. */
static inline int sock_set_make(int socks[N_SOCKS], int peers[2], unsigned flags)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int sv[2];

	socks[S_TCP4] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, flags);
	socks[S_UDP4] = sock_bound(AF_INET, SOCK_DGRAM, 0, NULL, flags);
	socks[S_TCP6] = sock_bound(AF_INET6, SOCK_STREAM, 0, NULL, flags);
	socks[S_TCP6_ANY] = sock_bound(AF_INET6, SOCK_STREAM, 0, "::", flags);
	socks[S_TCP6_ONLY] = sock_bound(AF_INET6, SOCK_STREAM, 0, "::", flags | SB_V6ONLY);
	socks[S_TCP4_REUSE] = sock_bound(AF_INET, SOCK_STREAM, 0, NULL, flags | SB_REUSEPORT);
	socks[S_UDP6] = sock_bound(AF_INET6, SOCK_DGRAM, 0, NULL, flags);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	socks[S_UNIX] = sv[0];
	peers[0] = sv[1];
	/* an established TCP socket: a connection to the first listener, accepted */
	peers[1] = socket(AF_INET, SOCK_STREAM, 0);
	if (getsockname(socks[S_TCP4], (struct sockaddr *)&ss, &len) ||
	    connect(peers[1], (struct sockaddr *)&ss, len))
		return -1;
	socks[S_TCP4_EST] = accept(socks[S_TCP4], NULL, NULL);
	socks[S_TCP4_CLIENT] = peers[1];
	socks[S_UDP4_CONN] = sock_bound(AF_INET, SOCK_DGRAM, 0, NULL, flags);
	if (socks[S_UDP4_CONN] < 0 || connect(socks[S_UDP4_CONN], (struct sockaddr *)&ss, len))
		return -1;
	for (int i = 0; i < N_SOCKS; i++) {
		if (socks[i] < 0)
			return -1;
		(void)sock_cookie(socks[i]);
	}
	return 0;
}

/* The start of a program over the set's sockmap (map 0) and a record (map 1, key 0) into
 * p: r6 = ctx, r9 = the record, r7 = the socket in slot of the sockmap; an empty slot
 * sets the record's first u64 to -1 and exits 0.  The instruction count. */
static inline size_t sock_set_prologue(struct bpf_insn *p, int slot)
{
	size_t n = 0;

	EMIT(MOV64_REG(6, 1), ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
	     LD_MAP(1, 1), CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 2),
	     MOV64_IMM(0, 0), EXIT(), MOV64_REG(9, 0),
	     ST(BPF_W, 10, -8, slot), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), LD_MAP(1, 0),
	     CALL(BPF_FUNC_map_lookup_elem), JIMM(BPF_JNE, 0, 0, 3), ST(BPF_DW, 9, 0, -1),
	     MOV64_IMM(0, 0), EXIT(), MOV64_REG(7, 0));
	return n;
}

/* A sockmap (or sockhash: type) with every socket of the set, key i -> socks[i]. */
static inline int sock_set_map(sys_fn sys, const int socks[N_SOCKS], uint32_t type)
{
	int fd = create_map(sys, type, 4, 8, N_SOCKS, 0, 0);

	for (uint32_t i = 0; fd >= 0 && i < N_SOCKS; i++) {
		uint64_t v = (uint64_t)socks[i];

		if (elem(sys, BPF_MAP_UPDATE_ELEM, fd, &i, &v, 0))
			fprintf(stderr, "sockmap update %u (%s): %s\n", i, sock_set_name((int)i),
				strerror(errno));
	}
	return fd;
}

#endif
