/* preload_net.c - bpfrt programs on the process's sockets and interfaces: SO_ATTACH_BPF
 * of a socket filter on a datagram socket (run on what recv*() and read() return), XDP
 * and tc attach requests over rtnetlink (answered here with made-up kernel replies), and
 * BPF_LINK_CREATE of XDP and tcx links.  Hence the send and recv families live here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "preload_int.h"

/* ---- socket filters (SO_ATTACH_BPF of a bpfrt program) ----------------------------------
 *
 * A kernel socket cannot run a bpfrt program, but the process reads the socket only
 * through recv()/recvfrom()/recvmsg()/read(), and what a socket filter decides is which
 * datagrams (and how many of their bytes) those calls return.  So SO_ATTACH_BPF of a bpfrt
 * BPF_PROG_TYPE_SOCKET_FILTER program on a datagram socket is kept here, and each read
 * of the socket takes the next datagram from the kernel, runs the program on the bytes
 * the kernel's filter would see (BPF_PROG_TEST_RUN) and hands it on, trimmed to the
 * verdict, or drops it (0) and reads the next one:
 *   - packet sockets (the frame from the MAC header for SOCK_RAW, from the network
 *     header for SOCK_DGRAM) and IPv4 raw sockets (from the IP header): what recv()
 *     returns is what the filter sees;
 *   - UDP sockets: the filter sees the UDP header, then the payload recv() returns; the
 *     header is rebuilt from the sender's and the socket's ports and the length (the
 *     checksum reads 0).
 * Differences, by construction: the kernel has queued (and counted) the datagram before
 * the filter runs, so a dropped datagram still took receive-buffer room and wakes
 * poll()/epoll; recvmmsg() and packet-socket rings (PACKET_RX_RING) are not filtered;
 * stream sockets (TCP) and SO_ATTACH_REUSEPORT_EBPF keep the refusal (the kernel's errno
 * and a line on stderr). */
#define MAX_FILT 64
#define FILT_MAX_DGRAM 65536

enum filt_kind { FILT_FRAME, FILT_UDP };

struct sock_filt {
	int fd;
	dev_t dev;
	ino_t ino;
	int prog;            /* our dup of the program's fd */
	enum filt_kind kind;
	int v6;
};

static struct sock_filt filts[MAX_FILT];
static int nfilt;
static pthread_mutex_t filt_lock = PTHREAD_MUTEX_INITIALIZER;

/* fd's entry (filt_lock held), dropping a stale one (fd closed and reused). */
static struct sock_filt *filt_find(int fd)
{
	struct stat st;

	for (int i = 0; i < nfilt; i++) {
		if (filts[i].fd != fd)
			continue;
		if (!fstat(fd, &st) && st.st_ino == filts[i].ino && st.st_dev == filts[i].dev)
			return &filts[i];
		real_close(filts[i].prog);
		filts[i] = filts[--nfilt];
		return NULL;
	}
	return NULL;
}

static int filt_get(int fd, struct sock_filt *out)
{
	struct sock_filt *f;

	if (!nfilt)
		return 0;
	pthread_mutex_lock(&filt_lock);
	f = filt_find(fd);
	if (f)
		*out = *f;
	pthread_mutex_unlock(&filt_lock);
	return f != NULL;
}

/* Forget fd's filter (SO_DETACH_BPF, close): 1 when it had one. */
int filt_drop(int fd)
{
	struct sock_filt *f;
	int prog = -1;

	if (!nfilt)
		return 0;
	pthread_mutex_lock(&filt_lock);
	f = filt_find(fd);
	if (f) {
		prog = f->prog;
		*f = filts[--nfilt];
	}
	pthread_mutex_unlock(&filt_lock);
	if (prog >= 0)
		real_close(prog);
	return prog >= 0;
}

/* The bytes of the filter's view to keep (0: drop).  The test run wants an Ethernet
 * header in front, which it takes off for a socket filter as the kernel's does. */
static uint32_t filt_run(const struct sock_filt *f, const void *hdr, size_t hlen,
			 const void *data, size_t len)
{
	static _Thread_local unsigned char *buf;
	BPFRT_OPTS(bpfrt_test_run_opts, o, .repeat = 1);
	static int told;
	uint16_t proto = htons(f->v6 ? 0x86dd : 0x0800);

	if (!buf && !(buf = malloc(14 + 8 + FILT_MAX_DGRAM)))
		return UINT32_MAX;
	memset(buf, 0, 14);
	memcpy(buf + 12, &proto, 2);
	memcpy(buf + 14, hdr, hlen);
	memcpy(buf + 14 + hlen, data, len);
	o.data_in = buf;
	o.data_size_in = (uint32_t)(14 + hlen + len);
	if (bpfrt_prog_test_run_opts(f->prog, &o) < 0) {
		if (!told) {
			told = 1;
			fprintf(stderr, "bpfrt-preload: the socket filter did not run (%s): the "
					"datagram is kept\n", strerror(errno));
		}
		return UINT32_MAX;
	}
	return o.retval;
}

/* recvmsg() through fd's filter f. */
static ssize_t filt_recvmsg(const struct sock_filt *f, int fd, struct msghdr *msg, int flags)
{
	static _Thread_local unsigned char *data;

	if (!data && !(data = malloc(FILT_MAX_DGRAM))) {
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		struct sockaddr_storage from, self;
		struct iovec iov = { data, FILT_MAX_DGRAM };
		struct msghdr m = *msg;
		socklen_t slen = sizeof(self);
		unsigned char udp[8];
		uint32_t keep;
		size_t n, give, done = 0;
		ssize_t r;

		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
		r = real_recvmsg(fd, &m, flags & ~MSG_TRUNC);
		if (r < 0)
			return r;
		n = (size_t)r;
		if (f->kind == FILT_UDP) {
			uint16_t sport = 0, dport = 0, ulen = htons((uint16_t)(n + 8 > 0xffff ? 0xffff : n + 8));

			memset(&self, 0, sizeof(self));
			getsockname(fd, (struct sockaddr *)&self, &slen);
			if (from.ss_family == AF_INET6) {
				sport = ((struct sockaddr_in6 *)&from)->sin6_port;
				dport = ((struct sockaddr_in6 *)&self)->sin6_port;
			} else {
				sport = ((struct sockaddr_in *)&from)->sin_port;
				dport = ((struct sockaddr_in *)&self)->sin_port;
			}
			memcpy(udp, &sport, 2);
			memcpy(udp + 2, &dport, 2);
			memcpy(udp + 4, &ulen, 2);
			memset(udp + 6, 0, 2);
			keep = filt_run(f, udp, 8, data, n);
		} else {
			keep = filt_run(f, NULL, 0, data, n);
		}
		if (!keep) {
			if (flags & MSG_PEEK) { /* take the dropped datagram out of the queue */
				m.msg_name = NULL;
				m.msg_namelen = 0;
				m.msg_control = NULL;
				m.msg_controllen = 0;
				real_recvmsg(fd, &m, (flags & ~(MSG_PEEK | MSG_TRUNC)) | MSG_DONTWAIT);
			}
			continue;
		}
		/* sk_filter_trim_cap(): a UDP datagram keeps at least its header */
		if (f->kind == FILT_UDP)
			give = keep < 8 ? 0 : keep - 8;
		else
			give = keep;
		if (give > n)
			give = n;
		for (size_t i = 0; i < (size_t)msg->msg_iovlen && done < give; i++) {
			size_t c = give - done < msg->msg_iov[i].iov_len ? give - done
									 : msg->msg_iov[i].iov_len;

			memcpy(msg->msg_iov[i].iov_base, data + done, c);
			done += c;
		}
		if (msg->msg_name) {
			socklen_t l = m.msg_namelen < msg->msg_namelen ? m.msg_namelen
								       : msg->msg_namelen;

			memcpy(msg->msg_name, &from, l);
			msg->msg_namelen = m.msg_namelen;
		}
		msg->msg_controllen = m.msg_controllen;
		msg->msg_flags = m.msg_flags & ~MSG_TRUNC;
		if (done < give)
			msg->msg_flags |= MSG_TRUNC;
		return (ssize_t)((flags & MSG_TRUNC) ? give : done);
	}
}

/* recv()-style reads of a filtered socket: -2 when fd has no filter. */
static ssize_t filt_recv(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			 socklen_t *fromlen)
{
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_name = from, .msg_namelen = fromlen ? *fromlen : 0,
			    .msg_iov = &iov, .msg_iovlen = 1 };
	struct sock_filt f;
	ssize_t r;

	if (!filt_get(fd, &f))
		return -2;
	if (!from)
		m.msg_namelen = 0;
	r = filt_recvmsg(&f, fd, &m, flags);
	if (r >= 0 && from && fromlen)
		*fromlen = m.msg_namelen;
	return r;
}

/* SO_ATTACH_BPF of bpfrt program prog_fd on fd: 1 when kept here (*ret set), 0 for the
 * refusal. */
static int filt_attach(int fd, int prog_fd, int *ret)
{
	int domain = 0, type = 0, proto = 0, prog;
	socklen_t l = sizeof(int);
	struct sock_filt e = { .fd = fd };
	struct sock_filt *f;
	struct stat st;

	if (prog_type(prog_fd) != BPF_PROG_TYPE_SOCKET_FILTER ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) || fstat(fd, &st))
		return 0;
	if (domain == AF_PACKET || (domain == AF_INET && type == SOCK_RAW))
		e.kind = FILT_FRAME;
	else if ((domain == AF_INET || domain == AF_INET6) && type == SOCK_DGRAM &&
		 proto == IPPROTO_UDP)
		e.kind = FILT_UDP;
	else
		return 0;
	e.v6 = domain == AF_INET6;
	e.dev = st.st_dev;
	e.ino = st.st_ino;
	prog = fcntl(prog_fd, F_DUPFD_CLOEXEC, 0);
	*ret = -1;
	if (prog < 0)
		return 1;
	e.prog = prog;
	pthread_mutex_lock(&filt_lock);
	f = filt_find(fd);
	if (f) { /* a new filter replaces the old, as in the kernel */
		prog = f->prog;
		*f = e;
	} else if (nfilt < MAX_FILT) {
		filts[nfilt++] = e;
		prog = -1;
	} else {
		errno = ENOMEM;
	}
	pthread_mutex_unlock(&filt_lock);
	if (prog >= 0)
		real_close(prog);
	if (f || prog < 0)
		*ret = 0;
	return 1;
}

ssize_t read(int fd, void *buf, size_t len)
{
	ssize_t r;

	resolve();
	if (nfilt && (r = filt_recv(fd, buf, len, 0, NULL, NULL)) != -2)
		return r;
	return real_read(fd, buf, len);
}

/* ---- XDP and tc attach through rtnetlink (libbpf's bpf_xdp_attach, bpf_tc_attach) ----
 *
 * A request naming a bpfrt program never reaches the kernel (which could not run it):
 * RTM_SETLINK whose one attribute is IFLA_XDP with a bpfrt XDP program's fd (or -1 where
 * bpfrt attached one), RTM_NEWTFILTER of kind "bpf" with a bpfrt classifier's fd, and
 * RTM_DELTFILTER of a filter bpfrt attached.  The program is attached with
 * bpfrt_prog_attach_iface() (a thread runs it on the interface's packets: received ones
 * for XDP and tc ingress, sent ones for tc egress; verdicts are counted, not enforced),
 * and the replies the kernel would send (the echoed filter with TCA_BPF_ID, the ack or
 * the error) are queued for the socket's next recv()/recvmsg().  Everything else (the
 * clsact qdisc libbpf creates and deletes, queries) goes to the kernel; deleting a clsact
 * qdisc detaches bpfrt's filters on that interface too. */
#define MAX_NL_REPLIES 16
#define MAX_ATTACH 64

struct nl_reply {
	int fd;
	size_t len;
	char buf[256];
};

static struct nl_reply nl_replies[MAX_NL_REPLIES];
static int nnl;
static pthread_mutex_t nl_lock = PTHREAD_MUTEX_INITIALIZER;

/* What bpfrt attached: XDP (parent 0) or a tc filter, with its link. */
struct nl_attach {
	int ifindex;
	uint32_t parent, prio, handle; /* tc: the filter's identity; XDP: all 0 */
	int link;
};

static struct nl_attach attached[MAX_ATTACH];
static int nattached;

/* Queue one reply datagram for fd: the header filled from the request's. */
static void nl_queue(int fd, const struct nlmsghdr *req, uint16_t type, uint16_t flags,
		     const void *body, size_t blen)
{
	struct sockaddr_nl self;
	socklen_t slen = sizeof(self);
	struct nl_reply *r;
	struct nlmsghdr h;

	memset(&self, 0, sizeof(self));
	if (getsockname(fd, (struct sockaddr *)&self, &slen))
		self.nl_pid = 0;
	h = (struct nlmsghdr){ .nlmsg_len = (uint32_t)NLMSG_LENGTH(blen), .nlmsg_type = type,
			       .nlmsg_flags = flags, .nlmsg_seq = req->nlmsg_seq,
			       .nlmsg_pid = self.nl_pid };
	if (NLMSG_SPACE(blen) > sizeof(r->buf))
		return;
	pthread_mutex_lock(&nl_lock);
	if (nnl < MAX_NL_REPLIES) {
		r = &nl_replies[nnl++];
		memset(r, 0, sizeof(*r));
		r->fd = fd;
		r->len = NLMSG_SPACE(blen);
		memcpy(r->buf, &h, sizeof(h));
		memcpy(r->buf + NLMSG_HDRLEN, body, blen);
	}
	pthread_mutex_unlock(&nl_lock);
}

/* Append attribute type with len bytes of data at *off in buf (room checked). */
static void nla_put(char *buf, size_t cap, size_t *off, uint16_t type, const void *data,
		    size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	if (*off + NLA_ALIGN(a.nla_len) > cap)
		return;
	memcpy(buf + *off, &a, sizeof(a));
	if (len)
		memcpy(buf + *off + NLA_HDRLEN, data, len);
	*off += NLA_ALIGN(a.nla_len);
}

/* The ack (err 0) or error the kernel sends for req (header only: NLM_F_CAPPED), with
 * the kernel's extended-ack message when msg is not NULL (libbpf prints it). */
static void nl_ack(int fd, const struct nlmsghdr *req, int err, const char *msg)
{
	char body[sizeof(struct nlmsgerr) + 96];
	struct nlmsgerr e;
	size_t off = sizeof(e);

	memset(&e, 0, sizeof(e));
	e.error = -err;
	e.msg = *req;
	memcpy(body, &e, sizeof(e));
	if (msg)
		nla_put(body, sizeof(body), &off, NLMSGERR_ATTR_MSG, msg, strlen(msg) + 1);
	nl_queue(fd, req, NLMSG_ERROR, NLM_F_CAPPED | (msg ? NLM_F_ACK_TLVS : 0), body, off);
}

/* The attribute of type want among the attributes at p (len bytes), or NULL. */
static const struct nlattr *nla_find(const char *p, size_t len, uint16_t want)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)(const void *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == want)
			return a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			break;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

static int nla_s32(const struct nlattr *a, int32_t *v)
{
	if (!a || a->nla_len < NLA_HDRLEN + 4)
		return 0;
	memcpy(v, (const char *)a + NLA_HDRLEN, 4);
	return 1;
}

static struct nl_attach *attach_find(int ifindex, uint32_t parent, uint32_t prio,
				     uint32_t handle)
{
	for (int i = 0; i < nattached; i++)
		if (attached[i].ifindex == ifindex && attached[i].parent == parent &&
		    attached[i].prio == prio && attached[i].handle == handle)
			return &attached[i];
	return NULL;
}

static void attach_drop(struct nl_attach *a)
{
	int link = a->link;

	*a = attached[--nattached];
	bpfrt_link_detach(link);
	real_close(link);
}

/* Attach prog_fd to ifindex for dir: a link fd or -errno (a line on stderr).  A netlink
 * attachment (what without "link") makes no kernel link: other processes must not see
 * bpfrt's (bpfrt_link_hide()). */
static int iface_attach(int prog_fd, int ifindex, unsigned dir, const char *what)
{
	BPFRT_OPTS(bpfrt_pkt_link_opts, o, .direction = dir);
	char name[IF_NAMESIZE], err[256] = "";
	int link;

	if (!if_indextoname((unsigned)ifindex, name))
		return -ENODEV;
	link = bpfrt_prog_attach_iface(prog_fd, name, &o, err, sizeof(err));
	if (link < 0)
		fprintf(stderr, "bpfrt-preload: %s on %s: %s\n", what, name, err);
	else if (!strstr(what, "link"))
		bpfrt_link_hide(link);
	return link;
}

/* RTM_SETLINK with IFLA_XDP: 1 when answered here. */
static int nl_setlink(int fd, const struct nlmsghdr *nh)
{
	const char *attrs = (const char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(struct ifinfomsg));
	size_t alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct ifinfomsg));
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	const struct nlattr *xdp = nla_find(attrs, alen, IFLA_XDP), *a;
	int32_t prog_fd, flags = 0;
	struct nl_attach *cur;
	int err = 0, link = -1;

	/* only libbpf's shape: IFLA_XDP alone */
	if (!xdp || (size_t)NLA_ALIGN(xdp->nla_len) < alen)
		return 0;
	a = (const struct nlattr *)(const void *)((const char *)xdp + NLA_HDRLEN);
	if (!nla_s32(nla_find((const char *)a, xdp->nla_len - NLA_HDRLEN, IFLA_XDP_FD), &prog_fd))
		return 0;
	nla_s32(nla_find((const char *)a, xdp->nla_len - NLA_HDRLEN, IFLA_XDP_FLAGS), &flags);
	pthread_mutex_lock(&nl_lock);
	cur = attach_find(ifi->ifi_index, 0, 0, 0);
	if (prog_fd < 0 && !cur) {
		pthread_mutex_unlock(&nl_lock);
		return 0; /* the kernel's own XDP program, or none: its business */
	}
	if (prog_fd >= 0 && prog_type(prog_fd) != BPF_PROG_TYPE_XDP) {
		pthread_mutex_unlock(&nl_lock);
		return 0; /* a kernel program (or not a program: the kernel's errno) */
	}
	if (prog_fd >= 0 && cur && (flags & XDP_FLAGS_UPDATE_IF_NOEXIST))
		err = EBUSY;
	else if (prog_fd >= 0 && nattached == MAX_ATTACH && !cur)
		err = ENOSPC;
	else if (prog_fd >= 0 && (link = iface_attach(prog_fd, ifi->ifi_index,
						      BPFRT_PKT_DIR_INGRESS, "XDP")) < 0)
		err = -link;
	if (!err) {
		if (cur)
			attach_drop(cur);
		if (link >= 0)
			attached[nattached++] = (struct nl_attach){ ifi->ifi_index, 0, 0, 0, link };
	}
	pthread_mutex_unlock(&nl_lock);
	if (nh->nlmsg_flags & NLM_F_ACK || err)
		nl_ack(fd, nh, err, err == EBUSY ? "XDP program already attached" : NULL);
	return 1;
}

/* RTM_NEWTFILTER / RTM_DELTFILTER of kind "bpf": 1 when answered here. */
static int nl_tfilter(int fd, const struct nlmsghdr *nh)
{
	const struct tcmsg *tc = NLMSG_DATA(nh);
	const char *attrs = (const char *)tc + NLMSG_ALIGN(sizeof(*tc));
	size_t alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc));
	uint32_t prio = TC_H_MAJ(tc->tcm_info) >> 16, handle = tc->tcm_handle;
	const struct nlattr *kind = nla_find(attrs, alen, TCA_KIND), *opt;
	struct nl_attach *cur;
	int32_t prog_fd;
	int err = 0, link = -1;

	if (nh->nlmsg_type == RTM_DELTFILTER) {
		pthread_mutex_lock(&nl_lock);
		if (!prio && !handle) { /* a flush: ours go, the kernel's too */
			for (int i = nattached - 1; i >= 0; i--)
				if (attached[i].ifindex == tc->tcm_ifindex &&
				    attached[i].parent == tc->tcm_parent)
					attach_drop(&attached[i]);
			pthread_mutex_unlock(&nl_lock);
			return 0;
		}
		cur = attach_find(tc->tcm_ifindex, tc->tcm_parent, prio, handle);
		if (cur)
			attach_drop(cur);
		pthread_mutex_unlock(&nl_lock);
		if (!cur)
			return 0;
		if (nh->nlmsg_flags & NLM_F_ACK)
			nl_ack(fd, nh, 0, NULL);
		return 1;
	}
	opt = nla_find(attrs, alen, TCA_OPTIONS);
	if (!kind || kind->nla_len < NLA_HDRLEN + 4 ||
	    memcmp((const char *)kind + NLA_HDRLEN, "bpf", 4) || !opt ||
	    !nla_s32(nla_find((const char *)opt + NLA_HDRLEN, opt->nla_len - NLA_HDRLEN,
			      TCA_BPF_FD), &prog_fd) ||
	    prog_type(prog_fd) != BPF_PROG_TYPE_SCHED_CLS)
		return 0;
	/* the kernel's choices when the request leaves them to it */
	if (!prio)
		prio = 0xc000; /* tcf_auto_prio() of the first filter */
	if (!handle)
		handle = 1;    /* cls_bpf's first free handle */
	pthread_mutex_lock(&nl_lock);
	cur = attach_find(tc->tcm_ifindex, tc->tcm_parent, prio, handle);
	if (cur && !(nh->nlmsg_flags & NLM_F_REPLACE))
		err = EEXIST;
	else if (!cur && nattached == MAX_ATTACH)
		err = ENOSPC;
	else if (tc->tcm_parent != TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS) &&
		 tc->tcm_parent != TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS))
		err = EOPNOTSUPP;
	else if ((link = iface_attach(prog_fd, tc->tcm_ifindex,
				      TC_H_MIN(tc->tcm_parent) == TC_H_MIN_EGRESS ?
				      BPFRT_PKT_DIR_EGRESS : BPFRT_PKT_DIR_INGRESS, "tc")) < 0)
		err = -link;
	if (err == EOPNOTSUPP)
		fprintf(stderr, "bpfrt-preload: tc filter of a bpfrt program under parent %x: "
				"only clsact ingress and egress are attachable\n", tc->tcm_parent);
	if (!err) {
		if (cur)
			attach_drop(cur);
		attached[nattached++] = (struct nl_attach){ tc->tcm_ifindex, tc->tcm_parent, prio,
							    handle, link };
	}
	pthread_mutex_unlock(&nl_lock);
	if (!err && (nh->nlmsg_flags & NLM_F_ECHO)) {
		struct bpf_prog_info info;
		uint32_t ilen = sizeof(info);
		char body[128];
		struct tcmsg echo = *tc;
		size_t off = NLMSG_ALIGN(sizeof(echo)), nest;

		memset(&info, 0, sizeof(info));
		bpfrt_obj_get_info_by_fd(prog_fd, &info, &ilen);
		echo.tcm_handle = handle;
		echo.tcm_info = TC_H_MAKE(prio << 16, TC_H_MIN(tc->tcm_info));
		memset(body, 0, sizeof(body));
		memcpy(body, &echo, sizeof(echo));
		nla_put(body, sizeof(body), &off, TCA_KIND, "bpf", 4);
		nest = off;
		nla_put(body, sizeof(body), &off, TCA_OPTIONS, NULL, 0);
		nla_put(body, sizeof(body), &off, TCA_BPF_ID, &info.id, 4);
		((struct nlattr *)(void *)(body + nest))->nla_len = (uint16_t)(off - nest);
		nl_queue(fd, nh, RTM_NEWTFILTER, NLM_F_ECHO, body, off);
	}
	if (nh->nlmsg_flags & NLM_F_ACK || err)
		nl_ack(fd, nh, err, NULL);
	return 1;
}

/* A datagram about to be sent: 1 when it was a request answered here (not sent). */
static int nl_intercept(int fd, const void *buf, size_t len)
{
	struct nlmsghdr nh;
	int domain = 0, proto = 0;
	socklen_t olen = sizeof(int);

	if (len < NLMSG_HDRLEN || !buf)
		return 0;
	memcpy(&nh, buf, sizeof(nh));
	/* cheap looks first: most sends are no such request */
	if (nh.nlmsg_len != len ||
	    (nh.nlmsg_type != RTM_SETLINK && nh.nlmsg_type != RTM_NEWTFILTER &&
	     nh.nlmsg_type != RTM_DELTFILTER && nh.nlmsg_type != RTM_DELQDISC))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &olen) || domain != AF_NETLINK ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &olen) || proto != NETLINK_ROUTE)
		return 0;
	if (nh.nlmsg_type == RTM_SETLINK)
		return len >= NLMSG_LENGTH(sizeof(struct ifinfomsg)) && nl_setlink(fd, buf);
	if (len < NLMSG_LENGTH(sizeof(struct tcmsg)))
		return 0;
	if (nh.nlmsg_type == RTM_DELQDISC) {
		const struct tcmsg *tc = NLMSG_DATA((const struct nlmsghdr *)buf);

		if (tc->tcm_parent == TC_H_CLSACT) { /* the hook goes: bpfrt's filters too */
			pthread_mutex_lock(&nl_lock);
			for (int i = nattached - 1; i >= 0; i--)
				if (attached[i].ifindex == tc->tcm_ifindex && attached[i].parent)
					attach_drop(&attached[i]);
			pthread_mutex_unlock(&nl_lock);
		}
		return 0;
	}
	return nl_tfilter(fd, buf);
}

/* Hand out a queued reply of fd: its length (the whole datagram's with MSG_TRUNC), or
 * -1 when none is queued.  MSG_PEEK leaves it queued. */
static ssize_t nl_take(int fd, struct iovec *iov, size_t niov, int flags, int *trunc,
		       void *addr, socklen_t *alen)
{
	struct nl_reply r;
	size_t done = 0;
	int found = -1;

	pthread_mutex_lock(&nl_lock);
	for (int i = 0; i < nnl; i++)
		if (nl_replies[i].fd == fd) {
			found = i;
			break;
		}
	if (found >= 0) {
		r = nl_replies[found];
		if (!(flags & MSG_PEEK)) {
			memmove(&nl_replies[found], &nl_replies[found + 1],
				(size_t)(nnl - found - 1) * sizeof(nl_replies[0]));
			nnl--;
		}
	}
	pthread_mutex_unlock(&nl_lock);
	if (found < 0)
		return -1;
	for (size_t i = 0; i < niov && done < r.len; i++) {
		size_t n = r.len - done < iov[i].iov_len ? r.len - done : iov[i].iov_len;

		memcpy(iov[i].iov_base, r.buf + done, n);
		done += n;
	}
	*trunc = done < r.len;
	if (addr && alen && *alen >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl k = { .nl_family = AF_NETLINK }; /* from the kernel */

		memcpy(addr, &k, sizeof(k));
		*alen = sizeof(k);
	}
	return (ssize_t)((flags & MSG_TRUNC) ? r.len : done);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	resolve();
	if (nl_intercept(fd, buf, len))
		return (ssize_t)len;
	return real_send(fd, buf, len, flags);
}

/* (libc's declarations: a transparent union of address pointers with _GNU_SOURCE) */
ssize_t sendto(int fd, const void *buf, size_t len, int flags, __CONST_SOCKADDR_ARG to,
	       socklen_t tolen)
{
	resolve();
	if (nl_intercept(fd, buf, len))
		return (ssize_t)len;
	return real_sendto(fd, buf, len, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	resolve();
	if (msg && msg->msg_iovlen == 1 && msg->msg_iov &&
	    nl_intercept(fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len))
		return (ssize_t)msg->msg_iov[0].iov_len;
	return real_sendmsg(fd, msg, flags);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct sock_filt f;

	resolve();
	if (nfilt && msg && filt_get(fd, &f))
		return filt_recvmsg(&f, fd, msg, flags);
	if (nnl && msg) {
		int trunc = 0;
		ssize_t n = nl_take(fd, msg->msg_iov, msg->msg_iovlen, flags, &trunc,
				    msg->msg_name, &msg->msg_namelen);

		if (n >= 0) {
			msg->msg_flags = trunc ? MSG_TRUNC : 0;
			msg->msg_controllen = 0;
			return n;
		}
	}
	return real_recvmsg(fd, msg, flags);
}

ssize_t recvfrom(int fd, void *__restrict buf, size_t len, int flags, __SOCKADDR_ARG from,
		 socklen_t *__restrict fromlen)
{
	resolve();
	if (nnl) {
		struct iovec iov = { buf, len };
		struct sockaddr *addr;
		int trunc = 0;
		ssize_t n;

		_Static_assert(sizeof(from) == sizeof(addr), "one pointer");
		memcpy(&addr, &from, sizeof(addr));
		n = nl_take(fd, &iov, 1, flags, &trunc, addr, fromlen);
		if (n >= 0)
			return n;
	}
	if (nfilt) {
		struct sockaddr *addr;
		ssize_t n;

		memcpy(&addr, &from, sizeof(addr));
		n = filt_recv(fd, buf, len, flags, addr, fromlen);

		if (n >= 0)
			return n;
	}
	return real_recvfrom(fd, buf, len, flags, from, fromlen);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	resolve();
	if (nnl) {
		struct iovec iov = { buf, len };
		int trunc = 0;
		ssize_t n = nl_take(fd, &iov, 1, flags, &trunc, NULL, NULL);

		if (n >= 0)
			return n;
	}
	if (nfilt) {
		ssize_t n = filt_recv(fd, buf, len, flags, NULL, NULL);

		if (n != -2)
			return n;
	}
	return real_recv(fd, buf, len, flags);
}

/* BPF_LINK_CREATE on an interface: BPF_XDP (libbpf's bpf_program__attach_xdp) and
 * tcx ingress/egress (libbpf 1.3's bpf_program__attach_tcx): the program runs on the
 * interface's packets as above; closing the link detaches.  1 with *ret when answered
 * here. */
#define ATTACH_TCX_INGRESS 46 /* BPF_TCX_INGRESS, BPF_TCX_EGRESS: newer than some uapi */
#define ATTACH_TCX_EGRESS 47  /* headers this is built with (Debian 12's lack them) */

int xdp_link_create(const union bpf_attr *attr, long *ret)
{
	int prog_fd = (int)attr->link_create.prog_fd, link, ptype = prog_type(prog_fd);
	uint32_t at = attr->link_create.attach_type;

	if (!(at == BPF_XDP && ptype == BPF_PROG_TYPE_XDP) &&
	    !((at == ATTACH_TCX_INGRESS || at == ATTACH_TCX_EGRESS) &&
	      ptype == BPF_PROG_TYPE_SCHED_CLS))
		return 0;
	link = iface_attach(prog_fd, (int)attr->link_create.target_ifindex,
			    at == ATTACH_TCX_EGRESS ? BPFRT_PKT_DIR_EGRESS : BPFRT_PKT_DIR_INGRESS,
			    at == BPF_XDP ? "XDP link" : "tcx link");
	*ret = link;
	if (link < 0) {
		errno = -link;
		*ret = -1;
		return 1;
	}
	return 1;
}

/* SO_ATTACH_BPF of a bpfrt socket filter on a datagram socket: kept here (above);
 * SO_DETACH_BPF forgets it.  Any other SO_ATTACH_BPF of a bpfrt program (a stream socket,
 * SO_ATTACH_REUSEPORT_EBPF): the kernel answers (it refuses an fd that is no program of
 * its own) and stderr says why, once per process. */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static int told;
	int prog_fd, ret;

	resolve();
	if (level == SOL_SOCKET && name == SO_ATTACH_BPF && val && len == sizeof(int) &&
	    read_user((uint64_t)(uintptr_t)val, &prog_fd, sizeof(prog_fd)) == sizeof(prog_fd) &&
	    filt_attach(fd, prog_fd, &ret))
		return ret;
	/* (the kernel wants an int's room even here: EINVAL before detaching) */
	if (level == SOL_SOCKET && name == SO_DETACH_BPF && len >= sizeof(int) && filt_drop(fd))
		return 0;
	if (level == SOL_SOCKET && (name == SO_ATTACH_BPF || name == SO_ATTACH_REUSEPORT_EBPF) &&
	    val && len == sizeof(int) && read_user((uint64_t)(uintptr_t)val, &prog_fd,
						    sizeof(prog_fd)) == sizeof(prog_fd) &&
	    is_prog_fd(prog_fd) && !told) {
		told = 1;
		fprintf(stderr, "bpfrt-preload: %s of a bpfrt program: a kernel socket cannot "
				"run it, and bpfrt filters only datagram sockets' reads (the "
				"kernel's errno follows); `bpfrt attach IFACE` runs socket "
				"filters on an interface's packets\n",
			name == SO_ATTACH_BPF ? "SO_ATTACH_BPF" : "SO_ATTACH_REUSEPORT_EBPF");
	}
	return real_setsockopt(fd, level, name, val, len);
}
