/* nl.h - walking netlink messages and route attributes through const pointers.  The uapi
 * macros (NLMSG_DATA, NLMSG_NEXT, RTA_DATA, RTA_NEXT, RTNH_DATA, RTNH_NEXT) cast their
 * argument to a plain char *, which drops the const of the received buffer they walk
 * (clang -Wcast-qual in the fuzz build); these do the same arithmetic and keep it.  The
 * length checks stay the macros' (NLMSG_OK, RTA_OK, NLMSG_LENGTH...): they only read.
 */
#ifndef BPFRT_UTIL_NL_H
#define BPFRT_UTIL_NL_H

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/types.h>

static inline const void *brt_nlmsg_data(const struct nlmsghdr *h)
{
	return (const char *)h + NLMSG_HDRLEN;
}

/* the message after h; *left (bytes from h on) loses h's aligned length */
static inline const struct nlmsghdr *brt_nlmsg_next(const struct nlmsghdr *h, ssize_t *left)
{
	*left -= (ssize_t)NLMSG_ALIGN(h->nlmsg_len);
	return (const void *)((const char *)h + NLMSG_ALIGN(h->nlmsg_len));
}

static inline const void *brt_rta_data(const struct rtattr *a)
{
	return (const char *)a + RTA_LENGTH(0);
}

/* the attribute after a; *left (bytes from a on) loses a's aligned length */
static inline const struct rtattr *brt_rta_next(const struct rtattr *a, int *left)
{
	*left -= (int)RTA_ALIGN(a->rta_len);
	return (const void *)((const char *)a + RTA_ALIGN(a->rta_len));
}

static inline const struct rtattr *brt_rtnh_data(const struct rtnexthop *nh)
{
	return (const void *)((const char *)nh + RTNH_LENGTH(0));
}

static inline const struct rtnexthop *brt_rtnh_next(const struct rtnexthop *nh)
{
	return (const void *)((const char *)nh + RTNH_ALIGN(nh->rtnh_len));
}

#endif
