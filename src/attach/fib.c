/* fib.c - bpf_fib_lookup() answered from this network namespace's routing state, read
 * through rtnetlink: links, addresses, routes of every table, policy rules, neighbours and
 * the per-device forwarding switches (netconf).  The lookup follows the kernel's
 * bpf_ipv4_fib_lookup() / bpf_ipv6_fib_lookup() (net/core/filter.c) step by step, with its
 * return codes and the fields of struct bpf_fib_lookup it fills.
 *
 * Cache: the whole state is dumped on the first lookup and kept; a second netlink socket
 * subscribed to the change groups (links, addresses, routes, rules, neighbours, netconf of
 * both families) is drained without blocking at each lookup, and anything on it (or an
 * overrun, ENOBUFS) makes the next lookup dump again.  A change made before a lookup
 * starts is therefore always seen: the kernel queues the notification before the command
 * that made the change returns.  The socket belongs to the namespace the process was in at
 * the first lookup.
 *
 * Not modelled (documented in docs/STATUS.md #15): multipath routes take their first live
 * next hop (the kernel hashes the flow with a per-namespace seed), the default-route
 * choice among several equal ones by neighbour state, PMTU exceptions, VRF (l3mdev)
 * tables, IPv6 source-routed subtrees and the kernel's full IPv6 source address selection
 * (a global, else link-local, address of the device is taken).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/socket.h>

#include <linux/fib_rules.h>
#include <linux/if_ether.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "attach/attach.h"
#include "util/nl.h"
#include "vm/vm.h"

#define FIB_LOOKUP_MARK (1u << 5) /* BPF_FIB_LOOKUP_MARK, newer than the 6.1 uapi header */
#define FIB_FLAGS_MASK                                                                   \
	(BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_OUTPUT | BPF_FIB_LOOKUP_SKIP_NEIGH |      \
	 BPF_FIB_LOOKUP_TBID | BPF_FIB_LOOKUP_SRC | FIB_LOOKUP_MARK)
#define FIB_MARK_OFF 52 /* __u32 mark, in the union with smac/dmac (Linux 6.10+) */
#define NUD_VALID_STATES                                                                 \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)
#define IP_MAX_MTU 0xfff0u
#define IP6_MAX_MTU 65535u
#define VLAN_HLEN 4

struct fib_link {
	uint32_t ifindex, mtu, flags, type;
	uint8_t mac[6];
};

struct fib_addr {
	uint8_t family, prefixlen, scope, secondary;
	uint32_t ifindex;
	uint8_t local[16];
};

struct fib_nh {
	uint32_t oif;
	uint8_t gw_family, dead, linkdown;
	uint8_t gw[16];
};

struct fib_route {
	uint8_t family, dst_len, src_len, tos, type, scope, lwt, mtu_locked;
	uint8_t has_prefsrc;
	uint32_t table, priority, mtu;
	uint8_t dst[16], src[16], prefsrc[16];
	uint32_t nh_count;   /* next hops: nhs[nh_first .. nh_first + nh_count) */
	size_t nh_first;
};

struct fib_rule {
	uint8_t family, action, dst_len, src_len, tos, invert, ip_proto;
	uint8_t has_sport, has_dport, has_uid, has_suppress;
	uint32_t priority, table, fwmark, fwmask, suppress_prefixlen;
	uint16_t sport[2], dport[2];
	uint32_t uid[2];
	uint8_t dst[16], src[16];
	char iif[IFNAMSIZ], oif[IFNAMSIZ];
};

struct fib_neigh {
	uint8_t family, has_ll;
	uint16_t state;
	uint32_t ifindex;
	uint8_t addr[16];
	uint8_t ll[6];
};

struct fib_conf {
	int32_t ifindex;
	uint8_t family;
	int32_t forwarding;
};

#define VEC(T, name)                                                                     \
	struct {                                                                         \
		T *v;                                                                    \
		size_t n, cap;                                                           \
	} name

static struct {
	pthread_mutex_t lock;
	int nl;       /* requests and dumps */
	int events;   /* change notifications: a pending one means the cache is stale */
	int valid;
	uint32_t seq;
	VEC(struct fib_link, links);
	VEC(struct fib_addr, addrs);
	VEC(struct fib_route, routes);
	VEC(struct fib_nh, nhs);
	VEC(struct fib_rule, rules);
	VEC(struct fib_neigh, neighs);
	VEC(struct fib_conf, confs);
} fib = { .lock = PTHREAD_MUTEX_INITIALIZER, .nl = -1, .events = -1 };

/* a new zeroed element of vector vec, or NULL when out of memory */
static void *vec_push(void **v, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *nv = realloc(*v, nc * size);

		if (!nv)
			return NULL;
		*v = nv;
		*cap = nc;
	}
	memset((char *)*v + *n * size, 0, size);
	return (char *)*v + (*n)++ * size;
}
#define PUSH(vec) ((__typeof__((vec).v))vec_push((void **)&(vec).v, &(vec).n, &(vec).cap,  \
						   sizeof(*(vec).v)))

/* ---- netlink ---------------------------------------------------------------------------- */

static int nl_open(uint32_t groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int events_open(void)
{
	static const unsigned extra[] = { RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF,
					  RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE };
	int fd = nl_open(RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE |
			 RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE);

	for (size_t i = 0; fd >= 0 && i < sizeof(extra) / sizeof(extra[0]); i++)
		(void)setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &extra[i],
				 sizeof(extra[i]));
	return fd;
}

/* Each message of a dump of type `type` for `family`, handed to cb; 0 or -errno. */
static int nl_dump(uint16_t type, uint8_t family, void (*cb)(const struct nlmsghdr *))
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
		uint8_t pad[16];
	} req;
	static char buf[65536];
	uint32_t seq = ++fib.seq;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = NLMSG_LENGTH(type == RTM_GETNEIGH ? sizeof(struct ndmsg)
				      : type == RTM_GETROUTE || type == RTM_GETRULE
					      ? sizeof(struct rtmsg)
				      : type == RTM_GETLINK ? sizeof(struct ifinfomsg)
				      : type == RTM_GETADDR ? sizeof(struct ifaddrmsg)
							    : sizeof(struct netconfmsg));
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.h.nlmsg_seq = seq;
	req.g.rtgen_family = family; /* the first byte of every request header is the family */
	if (send(fib.nl, &req, req.h.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fib.nl, buf, sizeof(buf), 0);
		const struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = brt_nlmsg_next(h, &n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = brt_nlmsg_data(h);

				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) ? e->error : -EIO;
			}
			cb(h);
		}
	}
}

/* the attributes after a fixed header of hdr_len bytes, by type (tb[0..max]) */
static void parse_attrs(const struct nlmsghdr *h, size_t hdr_len, const struct rtattr **tb,
			int max)
{
	const struct rtattr *a = (const struct rtattr *)((const char *)brt_nlmsg_data(h) +
							NLMSG_ALIGN(hdr_len));
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(hdr_len);

	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	for (; len > 0 && RTA_OK(a, len); a = brt_rta_next(a, &len))
		if (a->rta_type <= max)
			tb[a->rta_type] = a;
}

static uint32_t attr_u32(const struct rtattr *a, uint32_t def)
{
	uint32_t v = def;

	if (a && RTA_PAYLOAD(a) >= 4)
		memcpy(&v, brt_rta_data(a), 4);
	return v;
}

static void attr_copy(void *dst, size_t cap, const struct rtattr *a)
{
	size_t n = a ? RTA_PAYLOAD(a) : 0;

	memcpy(dst, brt_rta_data(a), n < cap ? n : cap);
}

static void on_link(const struct nlmsghdr *h)
{
	const struct ifinfomsg *m = brt_nlmsg_data(h);
	const struct rtattr *tb[IFLA_MAX + 1];
	struct fib_link *l;

	if (h->nlmsg_type != RTM_NEWLINK || !(l = PUSH(fib.links)))
		return;
	parse_attrs(h, sizeof(*m), tb, IFLA_MAX);
	l->ifindex = (uint32_t)m->ifi_index;
	l->flags = m->ifi_flags;
	l->type = m->ifi_type;
	l->mtu = attr_u32(tb[IFLA_MTU], 0);
	if (tb[IFLA_ADDRESS])
		attr_copy(l->mac, sizeof(l->mac), tb[IFLA_ADDRESS]);
}

static void on_addr(const struct nlmsghdr *h)
{
	const struct ifaddrmsg *m = brt_nlmsg_data(h);
	const struct rtattr *tb[IFA_MAX + 1];
	struct fib_addr *a;

	if (h->nlmsg_type != RTM_NEWADDR || !(a = PUSH(fib.addrs)))
		return;
	parse_attrs(h, sizeof(*m), tb, IFA_MAX);
	a->family = m->ifa_family;
	a->prefixlen = m->ifa_prefixlen;
	a->scope = m->ifa_scope;
	a->ifindex = m->ifa_index;
	a->secondary = !!((tb[IFA_FLAGS] ? attr_u32(tb[IFA_FLAGS], 0) : m->ifa_flags) &
			  (IFA_F_SECONDARY | IFA_F_TENTATIVE | IFA_F_DADFAILED));
	if (tb[IFA_LOCAL] || tb[IFA_ADDRESS])
		attr_copy(a->local, sizeof(a->local), tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS]);
}

static void add_nh(struct fib_route *r, uint32_t oif, uint8_t flags, const struct rtattr *gw,
		   const struct rtattr *via)
{
	struct fib_nh *nh = PUSH(fib.nhs);

	if (!nh)
		return;
	if (!r->nh_count)
		r->nh_first = fib.nhs.n - 1;
	r->nh_count++;
	nh->oif = oif;
	nh->dead = !!(flags & RTNH_F_DEAD);
	nh->linkdown = !!(flags & RTNH_F_LINKDOWN);
	if (gw) {
		nh->gw_family = r->family;
		attr_copy(nh->gw, sizeof(nh->gw), gw);
	} else if (via && RTA_PAYLOAD(via) >= sizeof(struct rtvia)) {
		const struct rtvia *v = brt_rta_data(via);

		nh->gw_family = (uint8_t)v->rtvia_family;
		memcpy(nh->gw, v->rtvia_addr,
		       RTA_PAYLOAD(via) - sizeof(*v) < 16 ? RTA_PAYLOAD(via) - sizeof(*v) : 16);
	}
}

static void on_route(const struct nlmsghdr *h)
{
	const struct rtmsg *m = brt_nlmsg_data(h);
	const struct rtattr *tb[RTA_MAX + 1];
	struct fib_route *r;

	if (h->nlmsg_type != RTM_NEWROUTE || (m->rtm_flags & RTM_F_CLONED) ||
	    !(r = PUSH(fib.routes)))
		return;
	parse_attrs(h, sizeof(*m), tb, RTA_MAX);
	r->family = m->rtm_family;
	r->dst_len = m->rtm_dst_len;
	r->src_len = m->rtm_src_len;
	r->tos = m->rtm_tos;
	r->type = m->rtm_type;
	r->scope = m->rtm_scope;
	r->table = attr_u32(tb[RTA_TABLE], m->rtm_table);
	r->priority = attr_u32(tb[RTA_PRIORITY], 0);
	r->lwt = tb[RTA_ENCAP] != NULL;
	if (tb[RTA_DST])
		attr_copy(r->dst, sizeof(r->dst), tb[RTA_DST]);
	if (tb[RTA_SRC])
		attr_copy(r->src, sizeof(r->src), tb[RTA_SRC]);
	if (tb[RTA_PREFSRC]) {
		r->has_prefsrc = 1;
		attr_copy(r->prefsrc, sizeof(r->prefsrc), tb[RTA_PREFSRC]);
	}
	if (tb[RTA_METRICS]) {
		const struct rtattr *mx = brt_rta_data(tb[RTA_METRICS]);
		int len = (int)RTA_PAYLOAD(tb[RTA_METRICS]);

		for (; RTA_OK(mx, len); mx = brt_rta_next(mx, &len)) {
			if (mx->rta_type == RTAX_MTU)
				r->mtu = attr_u32(mx, 0);
			if (mx->rta_type == RTAX_LOCK)
				r->mtu_locked = !!(attr_u32(mx, 0) & (1u << RTAX_MTU));
		}
	}
	if (tb[RTA_MULTIPATH]) {
		const struct rtnexthop *nh = brt_rta_data(tb[RTA_MULTIPATH]);
		int len = (int)RTA_PAYLOAD(tb[RTA_MULTIPATH]);

		while (len >= (int)sizeof(*nh) && nh->rtnh_len >= sizeof(*nh) &&
		       (int)nh->rtnh_len <= len) {
			const struct rtattr *ntb[RTA_MAX + 1], *a = brt_rtnh_data(nh);
			int alen = nh->rtnh_len - (int)sizeof(*nh);

			memset(ntb, 0, sizeof(ntb));
			for (; RTA_OK(a, alen); a = brt_rta_next(a, &alen))
				if (a->rta_type <= RTA_MAX)
					ntb[a->rta_type] = a;
			add_nh(r, (uint32_t)nh->rtnh_ifindex, nh->rtnh_flags, ntb[RTA_GATEWAY],
			       ntb[RTA_VIA]);
			if (ntb[RTA_ENCAP])
				r->lwt = 1;
			len -= (int)RTNH_ALIGN(nh->rtnh_len);
			nh = brt_rtnh_next(nh);
		}
	} else {
		add_nh(r, attr_u32(tb[RTA_OIF], 0), (uint8_t)m->rtm_flags, tb[RTA_GATEWAY],
		       tb[RTA_VIA]);
	}
}

static void on_rule(const struct nlmsghdr *h)
{
	const struct fib_rule_hdr *m = brt_nlmsg_data(h);
	const struct rtattr *tb[FRA_MAX + 1];
	struct fib_rule *r;

	if (h->nlmsg_type != RTM_NEWRULE || !(r = PUSH(fib.rules)))
		return;
	parse_attrs(h, sizeof(*m), tb, FRA_MAX);
	r->family = m->family;
	r->action = m->action;
	r->dst_len = m->dst_len;
	r->src_len = m->src_len;
	r->tos = m->tos;
	r->invert = !!(m->flags & FIB_RULE_INVERT);
	r->priority = attr_u32(tb[FRA_PRIORITY], 0);
	r->table = attr_u32(tb[FRA_TABLE], m->table);
	r->fwmark = attr_u32(tb[FRA_FWMARK], 0);
	r->fwmask = tb[FRA_FWMASK] ? attr_u32(tb[FRA_FWMASK], 0) : r->fwmark ? ~0u : 0;
	if (tb[FRA_DST])
		attr_copy(r->dst, sizeof(r->dst), tb[FRA_DST]);
	if (tb[FRA_SRC])
		attr_copy(r->src, sizeof(r->src), tb[FRA_SRC]);
	if (tb[FRA_IFNAME])
		attr_copy(r->iif, sizeof(r->iif) - 1, tb[FRA_IFNAME]);
	if (tb[FRA_OIFNAME])
		attr_copy(r->oif, sizeof(r->oif) - 1, tb[FRA_OIFNAME]);
	if (tb[FRA_IP_PROTO])
		r->ip_proto = *(const uint8_t *)brt_rta_data(tb[FRA_IP_PROTO]);
	if (tb[FRA_SPORT_RANGE] && RTA_PAYLOAD(tb[FRA_SPORT_RANGE]) >= 4) {
		r->has_sport = 1;
		memcpy(r->sport, brt_rta_data(tb[FRA_SPORT_RANGE]), 4);
	}
	if (tb[FRA_DPORT_RANGE] && RTA_PAYLOAD(tb[FRA_DPORT_RANGE]) >= 4) {
		r->has_dport = 1;
		memcpy(r->dport, brt_rta_data(tb[FRA_DPORT_RANGE]), 4);
	}
	if (tb[FRA_UID_RANGE] && RTA_PAYLOAD(tb[FRA_UID_RANGE]) >= 8) {
		r->has_uid = 1;
		memcpy(r->uid, brt_rta_data(tb[FRA_UID_RANGE]), 8);
	}
	if (tb[FRA_SUPPRESS_PREFIXLEN]) {
		r->suppress_prefixlen = attr_u32(tb[FRA_SUPPRESS_PREFIXLEN], ~0u);
		r->has_suppress = r->suppress_prefixlen != ~0u;
	}
}

static void on_neigh(const struct nlmsghdr *h)
{
	const struct ndmsg *m = brt_nlmsg_data(h);
	const struct rtattr *tb[NDA_MAX + 1];
	struct fib_neigh *n;

	if (h->nlmsg_type != RTM_NEWNEIGH || !(n = PUSH(fib.neighs)))
		return;
	parse_attrs(h, sizeof(*m), tb, NDA_MAX);
	n->family = m->ndm_family;
	n->ifindex = (uint32_t)m->ndm_ifindex;
	n->state = m->ndm_state;
	if (tb[NDA_DST])
		attr_copy(n->addr, sizeof(n->addr), tb[NDA_DST]);
	if (tb[NDA_LLADDR]) {
		n->has_ll = 1;
		attr_copy(n->ll, sizeof(n->ll), tb[NDA_LLADDR]);
	}
}

static void on_conf(const struct nlmsghdr *h)
{
	const struct netconfmsg *m = brt_nlmsg_data(h);
	const struct rtattr *tb[NETCONFA_MAX + 1];
	struct fib_conf *c;

	if (h->nlmsg_type != RTM_NEWNETCONF || !(c = PUSH(fib.confs)))
		return;
	parse_attrs(h, sizeof(*m), tb, NETCONFA_MAX);
	c->family = m->ncm_family;
	c->ifindex = (int32_t)attr_u32(tb[NETCONFA_IFINDEX], 0);
	c->forwarding = (int32_t)attr_u32(tb[NETCONFA_FORWARDING], 0);
}

/* Dump everything again when a change was announced (or never dumped). */
static int refresh(void)
{
	static char buf[8192];
	int stale = !fib.valid, err = 0;

	if (fib.nl < 0) {
		fib.events = events_open();
		fib.nl = nl_open(0);
		if (fib.nl < 0 || fib.events < 0)
			return -errno;
	}
	for (;;) { /* drain: any notification (or an overrun) makes the cache stale */
		ssize_t n = recv(fib.events, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0 || (n < 0 && errno == ENOBUFS)) {
			stale = 1;
			continue;
		}
		break;
	}
	if (!stale)
		return 0;
	fib.links.n = fib.addrs.n = fib.routes.n = fib.nhs.n = fib.rules.n = 0;
	fib.neighs.n = fib.confs.n = 0;
	err = nl_dump(RTM_GETLINK, AF_UNSPEC, on_link);
	if (!err)
		err = nl_dump(RTM_GETADDR, AF_UNSPEC, on_addr);
	if (!err)
		err = nl_dump(RTM_GETROUTE, AF_INET, on_route);
	if (!err)
		err = nl_dump(RTM_GETROUTE, AF_INET6, on_route);
	if (!err)
		err = nl_dump(RTM_GETRULE, AF_INET, on_rule);
	if (!err)
		(void)nl_dump(RTM_GETRULE, AF_INET6, on_rule); /* no IPv6: no rules */
	if (!err)
		err = nl_dump(RTM_GETNEIGH, AF_UNSPEC, on_neigh);
	if (!err)
		err = nl_dump(RTM_GETNETCONF, AF_INET, on_conf);
	if (!err)
		(void)nl_dump(RTM_GETNETCONF, AF_INET6, on_conf);
	fib.valid = !err;
	return err;
}

/* ---- the lookup ------------------------------------------------------------------------- */

static const struct fib_link *find_link(uint32_t ifindex)
{
	for (size_t i = 0; i < fib.links.n; i++)
		if (fib.links.v[i].ifindex == ifindex)
			return &fib.links.v[i];
	return NULL;
}

static int forwarding(uint8_t family, uint32_t ifindex)
{
	for (size_t i = 0; i < fib.confs.n; i++)
		if (fib.confs.v[i].family == family && fib.confs.v[i].ifindex == (int32_t)ifindex)
			return fib.confs.v[i].forwarding;
	return 0; /* no IPv4/IPv6 state on the device: the kernel's !in_dev */
}

/* the first plen bits of a and b are equal */
static int prefix_eq(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, bytes))
		return 0;
	return !bits || !((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - bits)));
}

struct flow {
	uint8_t family, tos, proto;
	uint32_t iif, oif, mark;
	uint16_t sport, dport; /* network order */
	uint8_t src[16], dst[16];
};

struct result {
	const struct fib_route *r;
	const struct fib_nh *nh;
};

static int nh_ok(const struct flow *fl, const struct fib_nh *nh)
{
	const struct fib_link *l = find_link(nh->oif);

	if (nh->dead || (l && !(l->flags & IFF_UP)))
		return 0;
	/* IPv4 takes only next hops through the output device; IPv6 (not strict) prefers
	 * them among routes of one metric (rt6_check_dev() scores), below */
	return fl->family == AF_INET6 || !fl->oif || fl->oif == nh->oif;
}

/* Kinds of route lookup outcome, the kernel's fib_props[] errors. */
enum { LK_FOUND, LK_AGAIN, LK_BLACKHOLE, LK_UNREACHABLE, LK_PROHIBIT, LK_OTHER };

/* fib_table_lookup() over the routes of table (or, tables_merged, the local and main
 * tables as one trie): the longest prefix whose tos matches, lowest metric first; reject
 * types end the lookup, unicast/local ones need a usable next hop. */
static int table_lookup(const struct flow *fl, uint32_t table, int merged, struct result *res)
{
	const struct fib_route *best = NULL;
	const struct fib_nh *best_nh = NULL;
	unsigned alen = fl->family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < fib.routes.n; i++) {
		const struct fib_route *r = &fib.routes.v[i];
		const struct fib_nh *nh = NULL;

		if (r->family != fl->family)
			continue;
		if (merged ? r->table != RT_TABLE_MAIN && r->table != RT_TABLE_LOCAL
			   : r->table != table)
			continue;
		if (r->dst_len > alen * 8 || !prefix_eq(r->dst, fl->dst, r->dst_len))
			continue;
		if (r->src_len && !prefix_eq(r->src, fl->src, r->src_len))
			continue;
		if (fl->family == AF_INET && r->tos && (r->tos & 0xfc) != (fl->tos & 0xfc))
			continue;
		if (fl->family == AF_INET6 && r->type == RTN_UNICAST && !r->nh_count)
			continue;
		if (r->type == RTN_UNICAST || r->type == RTN_LOCAL || r->type == RTN_BROADCAST ||
		    r->type == RTN_MULTICAST || r->type == RTN_ANYCAST) {
			for (uint32_t k = 0; k < r->nh_count && !nh; k++)
				if (nh_ok(fl, &fib.nhs.v[r->nh_first + k]))
					nh = &fib.nhs.v[r->nh_first + k];
			if (!nh && r->type == RTN_UNICAST)
				continue;
		}
		if (best && (r->dst_len < best->dst_len ||
			     (r->dst_len == best->dst_len &&
			      (r->tos < best->tos ||
			       (r->tos == best->tos && r->priority > best->priority) ||
			       (r->tos == best->tos && r->priority == best->priority &&
				!(fl->family == AF_INET6 && fl->oif && nh && nh->oif == fl->oif &&
				  (!best_nh || best_nh->oif != fl->oif)))))))
			continue;
		best = r;
		best_nh = nh;
	}
	if (!best)
		return LK_AGAIN;
	switch (best->type) {
	case RTN_BLACKHOLE:
		return LK_BLACKHOLE;
	case RTN_UNREACHABLE:
		return LK_UNREACHABLE;
	case RTN_PROHIBIT:
		return LK_PROHIBIT;
	case RTN_THROW:
		return LK_AGAIN;
	default:
		res->r = best;
		res->nh = best_nh;
		return LK_FOUND;
	}
}

static int rule_matches(const struct fib_rule *ru, const struct flow *fl)
{
	unsigned alen = fl->family == AF_INET ? 4 : 16;
	int m = 1;

	if (ru->iif[0]) {
		char name[IF_NAMESIZE] = "";

		m = m && fl->iif && if_indextoname(fl->iif, name) && !strcmp(name, ru->iif);
	}
	if (ru->oif[0]) {
		char name[IF_NAMESIZE] = "";

		m = m && fl->oif && if_indextoname(fl->oif, name) && !strcmp(name, ru->oif);
	}
	m = m && !((ru->fwmark ^ fl->mark) & ru->fwmask);
	m = m && (!ru->src_len || (ru->src_len <= alen * 8 && prefix_eq(ru->src, fl->src, ru->src_len)));
	m = m && (!ru->dst_len || (ru->dst_len <= alen * 8 && prefix_eq(ru->dst, fl->dst, ru->dst_len)));
	m = m && (!ru->tos || fl->family != AF_INET || ru->tos == (fl->tos & 0xfc));
	m = m && (!ru->ip_proto || ru->ip_proto == fl->proto);
	m = m && (!ru->has_sport || (ntohs(fl->sport) >= ru->sport[0] && ntohs(fl->sport) <= ru->sport[1]));
	m = m && (!ru->has_dport || (ntohs(fl->dport) >= ru->dport[0] && ntohs(fl->dport) <= ru->dport[1]));
	m = m && (!ru->has_uid || ru->uid[0] == 0); /* the lookup's uid is root's */
	return ru->invert ? !m : m;
}

/* whether the family's rules are other than the three defaults (the kernel merges IPv4's
 * local table into main until a rule is added) */
static int custom_rules(uint8_t family)
{
	for (size_t i = 0; i < fib.rules.n; i++) {
		const struct fib_rule *ru = &fib.rules.v[i];

		if (ru->family != family)
			continue;
		if (!((ru->priority == 0 && ru->table == RT_TABLE_LOCAL) ||
		      (ru->priority == 32766 && ru->table == RT_TABLE_MAIN) ||
		      (ru->priority == 32767 && ru->table == RT_TABLE_DEFAULT)) ||
		    ru->action != FR_ACT_TO_TBL || ru->src_len || ru->dst_len || ru->iif[0] ||
		    ru->oif[0] || ru->fwmask)
			return 1;
	}
	return 0;
}

/* The kernel's fib_lookup()/fib6_lookup(): the policy rules in priority order (just the
 * main table, local merged into it, while a namespace's IPv4 rules are the defaults). */
static int rules_lookup(const struct flow *fl, struct result *res)
{
	size_t n = 0, idx[256];
	int rc;

	for (size_t i = 0; i < fib.rules.n && n < 256; i++)
		if (fib.rules.v[i].family == fl->family)
			idx[n++] = i;
	if (fl->family == AF_INET && (!n || !custom_rules(AF_INET))) {
		rc = table_lookup(fl, RT_TABLE_MAIN, 1, res);
		return rc == LK_AGAIN ? LK_OTHER : rc;
	}
	if (!n) /* IPv6 without rules: local, then main */
		for (uint32_t t = 0; t < 2; t++) {
			rc = table_lookup(fl, t ? RT_TABLE_MAIN : RT_TABLE_LOCAL, 0, res);
			if (rc != LK_AGAIN)
				return rc;
		}
	/* the dump lists rules in priority order already; keep it stable */
	for (size_t a = 0; a < n; a++) {
		const struct fib_rule *ru = &fib.rules.v[idx[a]];

		if (!rule_matches(ru, fl))
			continue;
		switch (ru->action) {
		case FR_ACT_TO_TBL:
			rc = table_lookup(fl, ru->table, 0, res);
			if (rc == LK_FOUND && ru->has_suppress &&
			    res->r->dst_len <= ru->suppress_prefixlen)
				rc = LK_AGAIN;
			if (rc != LK_AGAIN)
				return rc;
			break;
		case FR_ACT_BLACKHOLE:
			return LK_BLACKHOLE;
		case FR_ACT_UNREACHABLE:
			return LK_UNREACHABLE;
		case FR_ACT_PROHIBIT:
			return LK_PROHIBIT;
		default: /* goto, nop: on to the next rule */
			break;
		}
	}
	return LK_OTHER;
}

/* inet_select_addr(dev, dst, scope) with the route's scope: a primary address of the
 * device within scope, preferably on dst's subnet; else one of any device (in_dev_select_addr:
 * not link scope) */
static int select_v4_src(uint32_t ifindex, const uint8_t *dst, uint8_t scope, uint8_t *out)
{
	int found = 0;

	for (size_t i = 0; i < fib.addrs.n; i++) {
		const struct fib_addr *a = &fib.addrs.v[i];

		if (a->family != AF_INET || a->ifindex != ifindex || a->secondary || a->scope > scope)
			continue;
		if (!dst || prefix_eq(a->local, dst, a->prefixlen)) {
			memcpy(out, a->local, 4);
			return 1;
		}
		if (!found) {
			memcpy(out, a->local, 4);
			found = 1;
		}
	}
	if (found)
		return 1;
	for (size_t i = 0; i < fib.addrs.n; i++) {
		const struct fib_addr *a = &fib.addrs.v[i];

		if (a->family == AF_INET && !a->secondary && a->scope != RT_SCOPE_LINK &&
		    a->scope <= scope) {
			memcpy(out, a->local, 4);
			return 1;
		}
	}
	return 0;
}

/* a source address on the device for dst: global (or site) scope first, then link-local
 * for a link-local destination; 0 when there is none */
static int select_v6_src(uint32_t ifindex, const uint8_t *dst, uint8_t *out)
{
	int ll_dst = dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < fib.addrs.n; i++) {
			const struct fib_addr *a = &fib.addrs.v[i];

			if (a->family != AF_INET6 || a->ifindex != ifindex || a->secondary)
				continue;
			if (pass == 0 ? (ll_dst ? a->scope != RT_SCOPE_LINK
						: a->scope != RT_SCOPE_UNIVERSE)
				      : a->scope == RT_SCOPE_HOST)
				continue;
			memcpy(out, a->local, 16);
			return 1;
		}
	return 0;
}

static const struct fib_neigh *find_neigh(uint8_t family, uint32_t ifindex, const uint8_t *addr)
{
	unsigned alen = family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < fib.neighs.n; i++) {
		const struct fib_neigh *n = &fib.neighs.v[i];

		if (n->family == family && n->ifindex == ifindex && !memcmp(n->addr, addr, alen))
			return n;
	}
	return NULL;
}

static uint16_t get16(const uint8_t *p, size_t off)
{
	uint16_t v;

	memcpy(&v, p + off, 2);
	return v;
}

static uint32_t get32(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, 4);
	return v;
}

static void put16(uint8_t *p, size_t off, uint16_t v)
{
	memcpy(p + off, &v, 2);
}

static void put32(uint8_t *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

#define O(f) offsetof(struct bpf_fib_lookup, f)

/* bpf_ipv4_fib_lookup() / bpf_ipv6_fib_lookup() on the 64-byte parameters p */
static int64_t fib_lookup(uint8_t *p, uint32_t flags, int check_mtu, uint32_t *mtu_out)
{
	int v6 = p[O(family)] == AF_INET6;
	unsigned alen = v6 ? 16 : 4;
	uint8_t *src = p + (v6 ? O(ipv6_src) : O(ipv4_src));
	uint8_t *dst = p + (v6 ? O(ipv6_dst) : O(ipv4_dst));
	struct flow fl = { .family = v6 ? AF_INET6 : AF_INET };
	const struct fib_link *dev;
	const struct fib_neigh *ne;
	struct result res = { 0 };
	uint32_t ifindex = get32(p, O(ifindex)), mtu = 0;
	int rc;

	if (v6 && ((dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) || dst[0] == 0xff ||
		   (src[0] == 0xfe && (src[1] & 0xc0) == 0x80) || src[0] == 0xff))
		return BPF_FIB_LKUP_RET_NOT_FWDED; /* rt6_need_strict(): never forwarded */
	dev = find_link(ifindex);
	if (!dev)
		return -ENODEV;
	if (!forwarding(fl.family, ifindex))
		return BPF_FIB_LKUP_RET_FWD_DISABLED;
	if (flags & BPF_FIB_LOOKUP_OUTPUT)
		fl.oif = ifindex;
	else
		fl.iif = ifindex;
	fl.tos = v6 ? 0 : p[O(tos)];
	fl.proto = p[O(l4_protocol)];
	fl.sport = get16(p, O(sport));
	fl.dport = get16(p, O(dport));
	memcpy(fl.src, src, alen);
	memcpy(fl.dst, dst, alen);
	if (flags & BPF_FIB_LOOKUP_DIRECT) {
		uint32_t tbid = RT_TABLE_MAIN;

		if (flags & BPF_FIB_LOOKUP_TBID) {
			tbid = get32(p, O(tbid));
			put32(p, O(tbid), 0);
		}
		rc = LK_OTHER;
		/* IPv4's main table holds the local one while the rules are the defaults */
		for (size_t i = 0; i < fib.routes.n; i++) /* a table exists once it has a route */
			if (fib.routes.v[i].family == fl.family && fib.routes.v[i].table == tbid) {
				rc = table_lookup(&fl, tbid,
						  !v6 && tbid == RT_TABLE_MAIN && !custom_rules(AF_INET),
						  &res);
				if (rc == LK_AGAIN)
					rc = LK_OTHER;
				break;
			}
	} else {
		if (flags & FIB_LOOKUP_MARK)
			fl.mark = get32(p, FIB_MARK_OFF);
		rc = rules_lookup(&fl, &res);
	}
	switch (rc) {
	case LK_FOUND:
		break;
	case LK_BLACKHOLE:
		return BPF_FIB_LKUP_RET_BLACKHOLE;
	case LK_UNREACHABLE:
		return BPF_FIB_LKUP_RET_UNREACHABLE;
	case LK_PROHIBIT:
		return BPF_FIB_LKUP_RET_PROHIBIT;
	default:
		return BPF_FIB_LKUP_RET_NOT_FWDED;
	}
	if (res.r->type != RTN_UNICAST || !res.nh)
		return BPF_FIB_LKUP_RET_NOT_FWDED;
	dev = find_link(res.nh->oif);
	if (!dev)
		return BPF_FIB_LKUP_RET_NOT_FWDED;
	if (check_mtu) {
		mtu = res.r->mtu && res.r->mtu_locked ? res.r->mtu : dev->mtu;
		if (mtu > (v6 ? IP6_MAX_MTU : IP_MAX_MTU))
			mtu = v6 ? IP6_MAX_MTU : IP_MAX_MTU;
		if (get16(p, O(tot_len)) > mtu) {
			put16(p, O(mtu_result), (uint16_t)mtu);
			return BPF_FIB_LKUP_RET_FRAG_NEEDED;
		}
	}
	if (res.r->lwt)
		return BPF_FIB_LKUP_RET_UNSUPP_LWT;
	if (v6 && res.nh->gw_family)
		memcpy(dst, res.nh->gw, 16);
	put32(p, O(rt_metric), res.r->priority);
	put32(p, O(ifindex), dev->ifindex);
	if (flags & BPF_FIB_LOOKUP_SRC) {
		if (res.r->has_prefsrc)
			memcpy(src, res.r->prefsrc, alen);
		else if (v6 && !select_v6_src(dev->ifindex, fl.dst, src))
			return BPF_FIB_LKUP_RET_NO_SRC_ADDR;
		else if (!v6 && !select_v4_src(dev->ifindex,
					       res.nh->gw_family == AF_INET ? res.nh->gw : NULL,
					       res.r->scope, src))
			memset(src, 0, 4); /* inet_select_addr() found none: 0.0.0.0 */
	}
	if (!v6 && res.nh->gw_family == AF_INET) {
		memcpy(dst, res.nh->gw, 4);
	} else if (!v6 && res.nh->gw_family == AF_INET6) {
		p[O(family)] = AF_INET6;
		memcpy(p + O(ipv6_dst), res.nh->gw, 16);
		v6 = 1;
		dst = p + O(ipv6_dst);
	}
	if (!(flags & BPF_FIB_LOOKUP_SKIP_NEIGH)) {
		uint8_t key[16] = { 0 };

		/* loopback and point-to-point devices keep one neighbour, at address 0 */
		if (v6 || !(dev->flags & (IFF_LOOPBACK | IFF_POINTOPOINT)))
			memcpy(key, dst, v6 ? 16 : 4);
		ne = find_neigh(v6 ? AF_INET6 : AF_INET, dev->ifindex, key);
		if (!ne || !(ne->state & NUD_VALID_STATES))
			return BPF_FIB_LKUP_RET_NO_NEIGH;
		memcpy(p + O(dmac), ne->ll, 6);
		memcpy(p + O(smac), dev->mac, 6);
	}
	/* bpf_fib_set_fwd_params() */
	put16(p, O(h_vlan_TCI), 0);
	put16(p, O(h_vlan_proto), 0);
	if (mtu)
		put16(p, O(mtu_result), (uint16_t)mtu);
	*mtu_out = dev->mtu;
	return BPF_FIB_LKUP_RET_SUCCESS;
}

/* long bpf_fib_lookup(ctx, struct bpf_fib_lookup *params, int plen, u32 flags) for XDP
 * and tc (see the top of this file).  -EINVAL for plen below 64 or other flags,
 * -EAFNOSUPPORT for a family other than AF_INET/AF_INET6, -ENODEV for an unknown ifindex;
 * else a BPF_FIB_LKUP_RET_* code.  XDP checks the MTU always; tc when tot_len is given,
 * else (on success) the packet against the egress device (FRAG_NEEDED) and mtu_result is
 * that device's MTU.  When the routing state cannot be read: NOT_FWDED. */
uint64_t brt_helper_fib_lookup(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *pk = brt_pkt_of(ctx, r1);
	uint8_t *p = (uint8_t *)(uintptr_t)r2;
	int xdp = pk && pk->prog_type == BPF_PROG_TYPE_XDP;
	uint32_t flags = (uint32_t)r4, dev_mtu = 0;
	int check_mtu;
	int64_t rc;

	(void)r5;
	if ((int32_t)r3 < (int32_t)sizeof(struct bpf_fib_lookup))
		return (uint64_t)-EINVAL;
	if (flags & ~FIB_FLAGS_MASK)
		return (uint64_t)-EINVAL;
	if (!bpfrt_run_access_ok(ctx, p, sizeof(struct bpf_fib_lookup), 1))
		return (uint64_t)-EFAULT;
	if (p[O(family)] != AF_INET && p[O(family)] != AF_INET6)
		return (uint64_t)-EAFNOSUPPORT;
	check_mtu = xdp || get16(p, O(tot_len)) != 0;
	pthread_mutex_lock(&fib.lock);
	rc = refresh() ? BPF_FIB_LKUP_RET_NOT_FWDED : fib_lookup(p, flags, check_mtu, &dev_mtu);
	if (rc == BPF_FIB_LKUP_RET_SUCCESS && !check_mtu && pk) {
		const struct fib_link *dev = find_link(get32(p, O(ifindex)));
		uint32_t len = (uint32_t)(pk->data_end - pk->data);
		uint32_t hh = dev && (dev->type == ARPHRD_ETHER || dev->type == ARPHRD_LOOPBACK)
				      ? ETH_HLEN : 0;

		/* is_skb_forwardable(): an up device, the frame within MTU + L2 + VLAN */
		if (!dev || !(dev->flags & IFF_UP) ||
		    (len > dev->mtu + hh + VLAN_HLEN &&
		     !((struct __sk_buff *)pk->ctx)->gso_size))
			rc = BPF_FIB_LKUP_RET_FRAG_NEEDED;
		put16(p, O(mtu_result), (uint16_t)dev_mtu);
	}
	pthread_mutex_unlock(&fib.lock);
	return (uint64_t)rc;
}
