/* xsk_diag.c - what user space can learn about the AF_XDP socket an xskmap slot names: its
 * binding, from the kernel's socket diagnostics (NETLINK_SOCK_DIAG, AF_XDP,
 * XDP_SHOW_INFO: the bound interface and queue, found by the socket's cookie in a dump
 * of this network namespace's AF_XDP sockets; the kernel answers only dumps).
 *
 * Why a live attachment cannot deliver into the socket (issue #15 item 3): the kernel
 * copies a redirected frame into the socket's UMEM at an address it takes from the fill
 * ring and posts a descriptor on the RX ring.  Both rings can be mapped by anyone holding
 * the socket's fd, but the UMEM is the registering process's own memory: its address
 * goes into the kernel with setsockopt(XDP_UMEM_REG) and comes back out nowhere (not
 * through getsockopt, sock_diag's XDP_DIAG_UMEM or /proc), so the descriptors' offsets
 * point into memory bpfrt cannot find.  What bpfrt does with the binding instead: an
 * xskmap slot keeps the socket's queue (what a program's lookup reads, maps/devmap.c),
 * and a live attachment counts a redirect as the kernel's generic XDP would end it
 * (attach/link.c): a socket that is not bound (xsk_rcv_check(): -ENXIO) or bound to
 * another interface or queue (-EINVAL) fails the redirect, an XDP_DROP.  Kernels built
 * without CONFIG_XDP_SOCKETS_DIAG answer no AF_XDP dump: then only whether the socket is
 * bound is known, from the fd at the map update (maps/devmap.c).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/nl.h"
#include "util/util.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* One message of the dump: 1 and the binding when it is cookie's socket, else 0. */
static int match(const struct nlmsghdr *h, uint64_t cookie, uint32_t *ifindex,
		 uint32_t *queue)
{
	const struct xdp_diag_msg *m = brt_nlmsg_data(h);
	size_t len, off;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) ||
	    ((uint64_t)m->xdiag_cookie[1] << 32 | m->xdiag_cookie[0]) != cookie)
		return 0;
	*ifindex = *queue = 0;
	len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	for (off = 0; off + sizeof(struct nlattr) <= len;) {
		const struct nlattr *a =
			(const void *)((const char *)m + NLMSG_ALIGN(sizeof(*m)) + off);

		if (a->nla_len < sizeof(*a) || off + a->nla_len > len)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == XDP_DIAG_INFO &&
		    a->nla_len >= NLA_HDRLEN + sizeof(struct xdp_diag_info)) {
			const struct xdp_diag_info *i = (const void *)((const char *)a + NLA_HDRLEN);

			*ifindex = i->ifindex;
			*queue = i->queue_id;
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return 1;
}

int brt_xsk_binding(uint64_t cookie, uint32_t *ifindex, uint32_t *queue)
{
	struct {
		struct nlmsghdr h;
		struct xdp_diag_req r;
	} req;
	/* from the heap: 32 KB of static thread-local storage were zeroed at the start of
	 * every process and thread (trace/task.c's stand-in says more) */
	enum { BUF_SIZE = 32768 };
	char *buf = malloc(BUF_SIZE);
	int fd = buf ? socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG) : -1;
	int found = -ENOENT, done = 0;

	if (!buf)
		return -ENOMEM;
	if (fd < 0) {
		found = -errno;
		free(buf);
		return found;
	}
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = AF_XDP;
	req.r.xdiag_show = XDP_SHOW_INFO;
	if (send(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
		found = -errno;
		done = 1;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, BUF_SIZE, 0);
		const struct nlmsghdr *h = (const void *)buf;

		if (n <= 0) {
			found = n < 0 ? -errno : found;
			break;
		}
		for (; NLMSG_OK(h, (size_t)n); h = brt_nlmsg_next(h, &n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = brt_nlmsg_data(h);

				/* the dump itself failed: no AF_XDP diagnostics in this
				 * kernel (CONFIG_XDP_SOCKETS_DIAG unset: -ENOENT) or other */
				found = -EOPNOTSUPP;
				(void)e;
				done = 1;
				break;
			}
			if (found == -ENOENT && match(h, cookie, ifindex, queue))
				found = *ifindex ? 1 : 0; /* keep reading to the end of the dump */
		}
	}
	close(fd);
	free(buf);
	return found;
}
