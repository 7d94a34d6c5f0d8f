/* inet_diag.c - whether a TCP connection was accepted or connect()ed, as far as user
 * space can tell (NETLINK_SOCK_DIAG, inet_diag).
 *
 * The kernel fills a socket's fields differently for the two: an IPv6 connection made
 * from a SYN (tcp_v6_syn_recv_sock(): ir_rmt_addr = LOOPBACK4_IPV6) has inet_daddr
 * LOOPBACK4_IPV6 where tcp_v6_connect() leaves it 0, and an accepted socket records the
 * queue its SYN came in on (rx_queue_mapping).  Nothing a socket's fd or sock_diag reports
 * says which end made the connection.  An accepted socket shares its local address and
 * port with a listener; a connect()ed one has a port of its own (a listener's port can be
 * shared only with SO_REUSEPORT on both, which clients do not set).  So "a listener takes
 * connections to my local address and port" is taken as the sign; an accepted socket
 * whose listener has been closed since looks connect()ed.
 *
 * The question is sock_diag's exact request with the local end only (remote :: port 0):
 * tcp_diag_find_one_icsk() runs inet_lookup()/inet6_lookup() on it, which finds no
 * connection with that remote end and falls back to the listeners, by the kernel's own
 * rules (the address or the wildcard, dual-stack v4-mapped, the bound device).
 * Used by maps/sockmap.c (a sockmap's snapshot) and attach/sock_table.c (socket lookups).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "util/nl.h"
#include "util/util.h"

#define TCP_STATE_LISTEN 10

int brt_tcp_listener_at(int nl, int family, const uint32_t addr[4], uint16_t port, int dif)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	char buf[4096] __attribute__((aligned(8)));
	int own = nl < 0, ans = 0;

	if (family != AF_INET && family != AF_INET6)
		return 0;
	if (own)
		nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	req.r.sdiag_family = (uint8_t)family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_if = (uint32_t)dif;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* tcp_diag_find_one_icsk(): src is the local end */
	memcpy(req.r.id.idiag_src, addr, family == AF_INET ? 4 : 16);
	req.r.id.idiag_sport = htons(port);
	if (send(nl, &req, sizeof(req), 0) < 0) {
		ans = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ans = n < 0 ? -errno : -EIO;
			break;
		}
		/* the answer is one message: a socket, or an error (-ENOENT: none) */
		if (NLMSG_OK(h, (size_t)n) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = brt_nlmsg_data(h);

			ans = m->idiag_state == TCP_STATE_LISTEN;
		}
		break;
	}
out:
	if (own)
		close(nl);
	return ans;
}
