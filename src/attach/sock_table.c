/* sock_table.c - the host's TCP and UDP sockets of this network namespace, found for the
 * socket lookups of packet programs (bpf_sk_lookup_tcp, bpf_sk_lookup_udp,
 * bpf_skc_lookup_tcp; sock_lookup.c calls brt_sock_table_lookup()) as the kernel's
 * lookups find them.
 *
 * What user space sees of the kernel's socket tables is NETLINK_SOCK_DIAG (inet_diag).
 * Besides dumps it answers an exact request, and that request runs the very lookup the
 * BPF helpers run: tcp_diag_find_one_icsk() calls inet_lookup() / inet6_lookup() and
 * udp_dump_one() __udp4_lib_lookup() / __udp6_lib_lookup() on the tuple, with the
 * bound-device index as dif, no skb and sdif 0, as __bpf_skc_lookup() does for a packet
 * on a device without an L3 master (a test run's loopback).  So a lookup here is one
 * exact request in the namespace of the calling thread (the kernel's caller_net: a test
 * run's device is the caller's loopback), and the answer is the kernel's own: connections
 * first (timewait and request sockets too), then listeners by score, SO_REUSEPORT groups
 * by the same tuple hash, wildcard and v4-mapped rules, UDP scores.  The reply describes
 * the socket: family, state, addresses, ports, bound device, cookie (the kernel's, so
 * bpf_sk_storage and the cookie helpers name the same socket), mark (INET_DIAG_MARK),
 * priority (INET_DIAG_CLASS_ID: sk_priority while no net_cls classid is set, always with
 * cgroup v2), IPV6_V6ONLY and the cgroup id.
 *
 * Where the two lookups differ, the helper's is rebuilt from a dump: an IPv6 TCP tuple
 * whose both addresses are v4-mapped (sock_diag looks such a tuple up as IPv4, the helper
 * as IPv6, where only IPv6 listeners on ::ffff:a.b.c.d or :: can match, by
 * inet6 compute_score()), and the listener a request socket stands for in the full-socket
 * lookups (sk_to_full_sk()).
 *
 * netns_id: a lookup in the namespace another one knows by an id (get_net_ns_by_id())
 * needs a sock_diag socket made in that namespace; it is found among the namespaces user
 * space can reach (diag_socket_of_nsid()).
 *
 * Caching: an answer is one netlink round trip (a few microseconds).  A BPF_PROG_TEST_RUN
 * keeps the answers of its lookups for all its repetitions (it sees the sockets as they
 * were when it first asked for that tuple); other runs (live attachments) reuse an answer
 * for ANSWER_TTL_NS: a connection younger than that may not be found yet, one closed
 * since may still be.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/inet_diag.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "attach/attach.h"
#include "util/nl.h"
#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#define ANSWER_TTL_NS (20 * 1000 * 1000ull) /* 20 ms, for runs other than test runs */
#define ANSWER_SLOTS 64                      /* answers kept (direct-mapped by tuple) */
#define LISTENERS_MAX 65536                  /* listeners a dump keeps at most */

/* TCP states as the kernel numbers them (include/net/tcp_states.h) */
#define ST_SYN_RECV 3
#define ST_TIME_WAIT 6
#define ST_CLOSE 7
#define ST_LISTEN 10
#define ST_NEW_SYN_RECV 12
#define LOOPBACK4_IPV6 0x7f000006 /* the IPv4 address an IPv6 socket keeps (__inet6_bind) */

struct host_sock {
	struct brt_sock s; /* what a program reads of it */
	uint8_t request;   /* a request socket (SYN received, not accepted yet) */
};

/* a cached answer: the question and the socket (or none) */
struct answer {
	struct brt_sock_tuple t;
	int dif;
	int32_t nsid; /* -1: the caller's namespace */
	uint8_t full, used, found;
	uint64_t run_gen;  /* the test run it was asked in (0: not a test run) */
	uint64_t taken_ns; /* CLOCK_MONOTONIC when asked */
	struct brt_sock s;
};

static struct {
	pthread_mutex_t lock;
	uint64_t runs; /* test runs that looked a socket up so far */
	struct answer slot[ANSWER_SLOTS];
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- addresses -------------------------------------------------------------------------- */
static int v6_any(const uint32_t *a)
{
	return !(a[0] | a[1] | a[2] | a[3]);
}

static int v6_mapped(const uint32_t *a)
{
	return !a[0] && !a[1] && a[2] == htonl(0xffff);
}

/* The IPv4 address the kernel keeps beside an IPv6 one: its v4 part when v4-mapped, 0 for
 * ::, else LOOPBACK4_IPV6. */
static uint32_t v4_of_v6(const uint32_t *a)
{
	if (v6_mapped(a))
		return a[3];
	return v6_any(a) ? 0 : htonl(LOOPBACK4_IPV6);
}

/* ---- sock_diag ---------------------------------------------------------------------------- */
/* The socket's cgroup and its ancestors, as far as user space can name them: the
 * kernel's id of its cgroup (INET_DIAG_CGROUP_ID) found in the calling thread's chain
 * (a process looking up its own sockets); another cgroup is not known (levels 0). */
static void sock_cgroup(struct brt_sock *s, uint64_t id)
{
	uint64_t ids[BRT_SOCK_CGROUP_LEVELS];
	int n = id ? brt_cgroup_ids((int32_t)gettid(), ids, BRT_SOCK_CGROUP_LEVELS) : 0;

	for (int i = 0; i < n; i++)
		if (ids[i] == id) {
			memcpy(s->cgroup, ids, (size_t)(i + 1) * sizeof(ids[0]));
			s->cgroup_levels = (uint8_t)(i + 1);
			return;
		}
}

/* One inet_diag_msg for proto into *e; 0, or -1 when it is not an inet socket. */
static int parse_sock(const struct nlmsghdr *h, uint8_t proto, struct host_sock *e)
{
	const struct inet_diag_msg *r = brt_nlmsg_data(h);
	const struct rtattr *a;
	struct brt_sock *s = &e->s;
	int len, attrs = 0, connected;
	uint64_t cgroup = 0;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*r)) ||
	    (r->idiag_family != AF_INET && r->idiag_family != AF_INET6))
		return -1;
	memset(e, 0, sizeof(*e));
	s->sk.family = r->idiag_family;
	s->sk.type = proto == IPPROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;
	s->sk.protocol = proto;
	s->sk.state = r->idiag_state;
	s->sk.bound_dev_if = r->id.idiag_if;
	s->sk.src_port = ntohs(r->id.idiag_sport); /* host order, as skc_num */
	s->sk.dst_port = r->id.idiag_dport;        /* network order, as skc_dport */
	s->sk.rx_queue_mapping = -1;
	s->cookie = (uint64_t)r->id.idiag_cookie[0] | (uint64_t)r->id.idiag_cookie[1] << 32;
	len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*r));
	for (a = (const struct rtattr *)(r + 1); len > 0 && RTA_OK(a, len); a = brt_rta_next(a, &len)) {
		attrs = 1;
		if (a->rta_type == INET_DIAG_MARK && RTA_PAYLOAD(a) >= 4)
			memcpy(&s->sk.mark, brt_rta_data(a), 4);
		else if (a->rta_type == INET_DIAG_CLASS_ID && RTA_PAYLOAD(a) >= 4)
			memcpy(&s->sk.priority, brt_rta_data(a), 4);
		else if (a->rta_type == INET_DIAG_SKV6ONLY && RTA_PAYLOAD(a) >= 1)
			s->ipv6only = *(const uint8_t *)brt_rta_data(a) != 0;
		else if (a->rta_type == INET_DIAG_CGROUP_ID && RTA_PAYLOAD(a) >= 8)
			memcpy(&cgroup, brt_rta_data(a), 8);
	}
	/* inet_req_diag_fill() reports a request socket as SYN_RECV with no attributes (a
	 * full socket in SYN_RECV, a Fast Open child, has them): its state is the kernel's
	 * TCP_NEW_SYN_RECV */
	if (proto == IPPROTO_TCP && s->sk.state == ST_SYN_RECV && !attrs) {
		e->request = 1;
		s->sk.state = ST_NEW_SYN_RECV;
	}
	/* the addresses with the kernel's conventions (as maps/sockmap.c's snapshots): an
	 * IPv4 TCP connection also has its ends v4-mapped in the IPv6 words
	 * (sk_rcv_saddr_set/sk_daddr_set), a listener or UDP socket only the IPv4 ones, a
	 * timewait socket too (tcp_time_wait() copies the IPv6 ones of IPv6 sockets only) */
	connected = s->sk.state != ST_LISTEN && s->sk.state != ST_CLOSE &&
		    s->sk.state != ST_TIME_WAIT && s->sk.state != ST_NEW_SYN_RECV;
	if (r->idiag_family == AF_INET) {
		s->sk.src_ip4 = r->id.idiag_src[0];
		s->sk.dst_ip4 = r->id.idiag_dst[0];
		if (proto == IPPROTO_TCP && connected) {
			s->sk.src_ip6[2] = s->sk.dst_ip6[2] = htonl(0xffff);
			s->sk.src_ip6[3] = s->sk.src_ip4;
			s->sk.dst_ip6[3] = s->sk.dst_ip4;
		}
	} else {
		memcpy(s->sk.src_ip6, r->id.idiag_src, 16);
		memcpy(s->sk.dst_ip6, r->id.idiag_dst, 16);
		/* inet_rcv_saddr as __inet6_bind() or a connect() sets it; inet_daddr stays 0
		 * for an IPv6 peer (v4-mapped: the v4 part), but an accepted socket gets
		 * LOOPBACK4_IPV6 (tcp_v6_syn_recv_sock(): see accepted_v6()) */
		s->sk.src_ip4 = v4_of_v6(s->sk.src_ip6);
		s->sk.dst_ip4 = v6_mapped(s->sk.dst_ip6) ? s->sk.dst_ip6[3] : 0;
	}
	/* SOCK_RCU_FREE: TCP listeners and UDP sockets are not reference counted */
	s->refcounted = !(proto == IPPROTO_UDP || s->sk.state == ST_LISTEN);
	sock_cgroup(s, cgroup);
	return 0;
}

/* Where a dump's sockets go (exact requests: the one answer in v[0]). */
struct sock_list {
	struct host_sock *v;
	size_t n, cap;
};

static void list_add(struct sock_list *l, const struct nlmsghdr *h, uint8_t proto)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct host_sock *v;

		if (cap > LISTENERS_MAX)
			return;
		v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	if (!parse_sock(h, proto, &l->v[l->n]))
		l->n++;
}

/* One SOCK_DIAG_BY_FAMILY request (a dump when dump is set) on nl (a sock_diag socket of
 * the namespace asked about), its sockets into l: 0, or -errno (-ENOENT: an exact request
 * found none). */
static int diag(int nl, struct inet_diag_req_v2 *r, int dump, struct sock_list *l)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	char buf[8192];

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0);
	req.h.nlmsg_seq = 1;
	req.r = *r;
	/* INET_DIAG_CLASS_ID's bit does not fit the u8; TCLASS's asks for it too */
	req.r.idiag_ext = 1 << (INET_DIAG_TCLASS - 1);
	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(nl, buf, sizeof(buf), 0);
		const struct nlmsghdr *h;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = brt_nlmsg_next(h, &n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = brt_nlmsg_data(h);

				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ? e->error : -EIO;
			}
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY)
				list_add(l, h, r->sdiag_protocol);
			/* an exact request's answer is one message, without NLMSG_DONE */
			if (!dump && l->n)
				return 0;
		}
	}
}

/* The exact request for tuple t (the kernel's own lookup): 1 and *out, or 0. */
static int exact(int nl, const struct brt_sock_tuple *t, int dif, struct host_sock *out)
{
	struct inet_diag_req_v2 r;
	struct sock_list l = { 0 };
	int found;

	memset(&r, 0, sizeof(r));
	r.sdiag_family = t->family;
	r.sdiag_protocol = t->proto;
	r.idiag_states = ~0u;
	r.id.idiag_if = (uint32_t)dif;
	r.id.idiag_cookie[0] = r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* tcp_diag_find_one_icsk() takes src as the local end, udp_dump_one() as the remote
	 * one ("swapped for historical reasons") */
	if (t->proto == IPPROTO_TCP) {
		memcpy(r.id.idiag_src, t->daddr, 16);
		memcpy(r.id.idiag_dst, t->saddr, 16);
		r.id.idiag_sport = htons(t->dport);
		r.id.idiag_dport = t->sport;
	} else {
		memcpy(r.id.idiag_src, t->saddr, 16);
		memcpy(r.id.idiag_dst, t->daddr, 16);
		r.id.idiag_sport = t->sport;
		r.id.idiag_dport = htons(t->dport);
	}
	found = !diag(nl, &r, 0, &l) && l.n;
	if (found)
		*out = l.v[0];
	free(l.v);
	return found;
}

/* inet6 compute_score() over the IPv6 TCP listeners bound to addr on the tuple's port:
 * the best, or NULL */
static const struct host_sock *v6_listener_at(const struct sock_list *l,
					      const struct brt_sock_tuple *t,
					      const uint32_t *addr, int dif)
{
	const struct host_sock *best = NULL;
	int hiscore = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct brt_sock *s = &l->v[i].s;
		int score;

		if (s->sk.family != AF_INET6 || s->sk.state != ST_LISTEN ||
		    s->sk.src_port != t->dport || memcmp(s->sk.src_ip6, addr, 16) ||
		    (s->sk.bound_dev_if && s->sk.bound_dev_if != (uint32_t)dif))
			continue;
		score = s->sk.bound_dev_if ? 2 : 1;
		if (score > hiscore) {
			best = &l->v[i];
			hiscore = score;
		}
	}
	return best;
}

/* __inet6_lookup_listener() for an IPv6 tuple with both addresses v4-mapped (the
 * helper's lookup, which sock_diag's exact request would make an IPv4 one): the listeners
 * bound to the destination, then to ::.  1 and *out, or 0. */
static int v6_mapped_listener(int nl, const struct brt_sock_tuple *t, int dif,
			      struct host_sock *out)
{
	static const uint32_t any[4];
	struct inet_diag_req_v2 r;
	struct sock_list l = { 0 };
	const struct host_sock *e = NULL;

	memset(&r, 0, sizeof(r));
	r.sdiag_family = AF_INET6;
	r.sdiag_protocol = IPPROTO_TCP;
	r.idiag_states = 1u << ST_LISTEN;
	if (!diag(nl, &r, 1, &l)) {
		e = v6_listener_at(&l, t, t->daddr, dif);
		if (!e)
			e = v6_listener_at(&l, t, any, dif);
		if (e)
			*out = *e;
	}
	free(l.v);
	return e != NULL;
}

/* An IPv6 TCP connection the kernel made from a SYN (accepted, or a request or timewait
 * socket of one) has inet_daddr LOOPBACK4_IPV6 where a connect() leaves 0; sock_diag
 * does not say which end made the connection: brt_tcp_listener_at() (util/inet_diag.c)
 * on its local end tells. */
static void accepted_v6(int nl, struct brt_sock *s, int dif)
{
	if (s->sk.family != AF_INET6 || s->sk.protocol != IPPROTO_TCP ||
	    s->sk.state == ST_LISTEN || v6_any(s->sk.dst_ip6) || v6_mapped(s->sk.dst_ip6))
		return;
	if (brt_tcp_listener_at(nl, AF_INET6, s->sk.src_ip6, (uint16_t)s->sk.src_port, dif) == 1)
		s->sk.dst_ip4 = htonl(LOOPBACK4_IPV6);
}

/* The kernel's answer for t now: 1 and *out, or 0. */
static int ask(int nl, const struct brt_sock_tuple *t, int dif, int full,
	       struct brt_sock *out)
{
	struct host_sock e;
	int found;

	if (t->proto == IPPROTO_TCP && t->family == AF_INET6 && v6_mapped(t->saddr) &&
	    v6_mapped(t->daddr)) {
		found = v6_mapped_listener(nl, t, dif, &e);
	} else {
		found = exact(nl, t, dif, &e);
		/* sk_to_full_sk(): a request socket stands for its listener */
		if (found && e.request && full) {
			struct brt_sock_tuple q = *t;

			memset(q.saddr, 0, sizeof(q.saddr));
			q.sport = 0;
			found = exact(nl, &q, dif, &e) && e.s.sk.state == ST_LISTEN;
		}
	}
	if (!found)
		return 0;
	accepted_v6(nl, &e.s, dif);
	*out = e.s;
	return 1;
}

/* ---- other namespaces: netns_id ------------------------------------------------------------ */
/* RTM_GETNSID on rtnl for the namespace attr (NETNSA_FD or NETNSA_NSID) names: its id in
 * the caller's namespace (-1: none assigned), or -errno (-ENOENT: no such id). */
static int32_t nsid_of(int rtnl, uint16_t attr, uint32_t val)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
		uint8_t pad[3];
		struct rtattr a;
		uint32_t v;
	} req;
	char buf[1024];
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_GETNSID;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.g.rtgen_family = AF_UNSPEC;
	req.a.rta_type = attr;
	req.a.rta_len = RTA_LENGTH(sizeof(req.v));
	req.v = val;
	if (send(rtnl, &req, sizeof(req), 0) < 0)
		return -errno;
	do
		n = recv(rtnl, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; n > 0 && NLMSG_OK(h, (size_t)n);
	     h = brt_nlmsg_next(h, &n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = brt_nlmsg_data(h);

			return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EIO;
		}
		if (h->nlmsg_type == RTM_NEWNSID) {
			int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct rtgenmsg)));
			const struct rtattr *a = (const struct rtattr *)((const char *)brt_nlmsg_data(h) +
							NLMSG_ALIGN(sizeof(struct rtgenmsg)));

			for (; len > 0 && RTA_OK(a, len); a = brt_rta_next(a, &len))
				if (a->rta_type == NETNSA_NSID && RTA_PAYLOAD(a) >= 4) {
					int32_t id;

					memcpy(&id, brt_rta_data(a), 4);
					return id;
				}
			return -1;
		}
	}
	return -EIO;
}

/* A namespace file of a task or a bind mount, opened when it is a namespace not seen yet
 * (seen[]: their inodes) whose id here is id: the fd, else -1. */
#define NS_SEEN 512
static int try_ns(int rtnl, const char *path, int32_t id, uint64_t *seen, int *nseen)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return -1;
	for (int i = 0; i < *nseen; i++)
		if (seen[i] == (uint64_t)st.st_ino)
			return -1;
	if (*nseen < NS_SEEN)
		seen[(*nseen)++] = (uint64_t)st.st_ino;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (nsid_of(rtnl, NETNSA_FD, (uint32_t)fd) == id)
		return fd;
	close(fd);
	return -1;
}

/* The namespace whose id in the caller's namespace is id, found among what user space
 * can reach: `ip netns` bind mounts under /run/netns and the namespaces of every task in
 * /proc (this process's threads first).  An fd of it, or -1 (the kernel may still know a
 * namespace only sockets or fds keep alive). */
static int ns_by_id(int rtnl, int32_t id)
{
	static const char *const roots[] = { "/run/netns", "/proc/self/task", "/proc" };
	static _Thread_local uint64_t seen[NS_SEEN];
	int nseen = 0, fd = -1;

	for (size_t r = 0; fd < 0 && r < sizeof(roots) / sizeof(roots[0]); r++) {
		DIR *d = opendir(roots[r]);
		struct dirent *de;

		while (d && fd < 0 && (de = readdir(d))) {
			char path[600]; /* a root, two names of up to 255 bytes and ns/net */

			if (de->d_name[0] == '.')
				continue;
			if (r == 0) {
				snprintf(path, sizeof(path), "%s/%s", roots[r], de->d_name);
				fd = try_ns(rtnl, path, id, seen, &nseen);
			} else if (r == 1) {
				snprintf(path, sizeof(path), "%s/%s/ns/net", roots[r], de->d_name);
				fd = try_ns(rtnl, path, id, seen, &nseen);
			} else if (de->d_name[0] >= '0' && de->d_name[0] <= '9') {
				/* every thread: one may have moved to another namespace */
				char dir[300];
				DIR *t;
				struct dirent *te;

				snprintf(dir, sizeof(dir), "/proc/%s/task", de->d_name);
				t = opendir(dir);
				while (t && fd < 0 && (te = readdir(t))) {
					if (te->d_name[0] == '.')
						continue;
					snprintf(path, sizeof(path), "%s/%s/ns/net", dir, te->d_name);
					fd = try_ns(rtnl, path, id, seen, &nseen);
				}
				if (t)
					closedir(t);
			}
		}
		if (d)
			closedir(d);
	}
	return fd;
}

/* a sock_diag socket made in the namespace ns_fd: a thread enters it for the socket() */
struct ns_socket {
	int ns_fd, fd;
};

static void *ns_socket_thread(void *arg)
{
	struct ns_socket *n = arg;

	n->fd = setns(n->ns_fd, CLONE_NEWNET)
			? -1
			: socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return NULL;
}

/* A sock_diag socket of the namespace netns_id names (get_net_ns_by_id(caller_net,
 * id)), or -1 when there is none or user space cannot reach it. */
static int diag_socket_of_nsid(int32_t id)
{
	int rtnl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct ns_socket n = { -1, -1 };
	pthread_t th;

	if (rtnl < 0)
		return -1;
	/* first whether the id is assigned at all: a quick NULL for most ids */
	if (nsid_of(rtnl, NETNSA_NSID, (uint32_t)id) == id)
		n.ns_fd = ns_by_id(rtnl, id);
	close(rtnl);
	if (n.ns_fd < 0)
		return -1;
	if (!pthread_create(&th, NULL, ns_socket_thread, &n))
		pthread_join(th, NULL);
	close(n.ns_fd);
	return n.fd;
}

/* ---- the cache ---------------------------------------------------------------------------- */
static unsigned slot_of(const struct brt_sock_tuple *t, int32_t nsid, int dif, int full)
{
	const uint8_t *b = (const uint8_t *)t;
	uint32_t h = 2166136261u ^ (uint32_t)dif ^ (uint32_t)full << 16 ^ (uint32_t)nsid << 8;

	for (size_t i = 0; i < sizeof(*t); i++)
		h = (h ^ b[i]) * 16777619u;
	return h % ANSWER_SLOTS;
}

int brt_sock_table_lookup(const struct brt_sock_tuple *t, int32_t nsid, int dif, int full,
			  int test_run, uint64_t *test_gen, struct brt_sock *out)
{
	struct brt_sock_tuple key = *t;
	struct answer *a;
	uint64_t now = now_ns(), gen;
	int found, nl;

	if (t->family == AF_INET) /* only [0] of an IPv4 address counts */
		memset(&key.saddr[1], 0, 12), memset(&key.daddr[1], 0, 12);
	pthread_mutex_lock(&cache.lock);
	if (test_run && !*test_gen)
		*test_gen = ++cache.runs;
	gen = test_run ? *test_gen : 0;
	a = &cache.slot[slot_of(&key, nsid, dif, full)];
	if (a->used && !memcmp(&a->t, &key, sizeof(key)) && a->dif == dif && a->full == full &&
	    a->nsid == nsid &&
	    a->run_gen == gen && (gen || now - a->taken_ns < ANSWER_TTL_NS)) {
		found = a->found;
		if (found)
			*out = a->s;
		pthread_mutex_unlock(&cache.lock);
		return found;
	}
	pthread_mutex_unlock(&cache.lock);
	/* asked without the lock: another thread's answer for the same slot may land first,
	 * either is current */
	nl = nsid < 0 ? socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)
		      : diag_socket_of_nsid(nsid);
	found = nl >= 0 && ask(nl, &key, dif, full, out);
	if (nl >= 0)
		close(nl);
	pthread_mutex_lock(&cache.lock);
	memset(a, 0, sizeof(*a));
	a->t = key;
	a->dif = dif;
	a->nsid = nsid;
	a->full = (uint8_t)full;
	a->used = 1;
	a->found = (uint8_t)found;
	a->run_gen = gen;
	a->taken_ns = now;
	if (found)
		a->s = *out;
	pthread_mutex_unlock(&cache.lock);
	return found;
}
