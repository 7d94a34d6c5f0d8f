/* sockets.h - real sockets for the oracles that hand the same fds to the kernel's bpf()
 * and to bpfrt's (sockmaps, reuseport arrays, bpf_sk_assign, the socket casts, lookups): a
 * socket address, a bound, listening socket in one call, and a socket's cookie.  The set of 11 sockets two of them
 * share is sock_set.h.
 */
#ifndef BPFRT_TESTS_SOCKETS_H
#define BPFRT_TESTS_SOCKETS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* sock_bound() flags */
enum {
	SB_REUSEPORT = 1, /* SO_REUSEPORT before bind */
	SB_V6ONLY = 2,    /* IPV6_V6ONLY on (AF_INET6; otherwise off, whatever the sysctl) */
	SB_NO_BIND = 4,   /* leave it unbound (and not listening) */
	SB_NO_LISTEN = 8, /* a stream socket bound but not listening */
	SB_TAGGED = 16,   /* SO_MARK 7, SO_PRIORITY 3: fields a program can read back */
};

/* addr (NULL: the family's loopback) and port p (host order) as a socket address of
 * family in *ss; its length. */
static inline socklen_t sock_addr(int family, const char *addr, uint16_t p,
				  struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)family;
	if (!addr)
		addr = family == AF_INET ? "127.0.0.1" : "::1";
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_port = htons(p);
		inet_pton(AF_INET, addr, &in->sin_addr);
		return sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_port = htons(p);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		return sizeof(*in6);
	}
}

/* A socket bound to addr (NULL: the family's loopback) port 0, listening (backlog 4) when
 * it is a stream socket; -1 when any step fails. */
static inline int sock_bound(int family, int type, int proto, const char *addr,
			     unsigned flags)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, type, proto), one = 1, mark = 7, prio = 3;
	int v6only = !!(flags & SB_V6ONLY);

	if (fd < 0)
		return -1;
	if (flags & SB_REUSEPORT)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (flags & SB_TAGGED) {
		setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
		setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &prio, sizeof(prio));
	}
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
	if (flags & SB_NO_BIND)
		return fd;
	len = sock_addr(family, addr, 0, &ss);
	if (bind(fd, (struct sockaddr *)&ss, len) ||
	    (type == SOCK_STREAM && !(flags & SB_NO_LISTEN) && listen(fd, 4))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The socket's cookie (SO_COOKIE), 0 for no socket.  The kernel's skc_cookie is 0 until
 * someone asks for it (SO_COOKIE, a sockmap update): an oracle asks before either side
 * runs, so both see the same number. */
static inline uint64_t sock_cookie(int fd)
{
	uint64_t c = 0;
	socklen_t len = sizeof(c);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_COOKIE, &c, &len))
		return 0;
	return c;
}

#endif
