/* skb_meta.c - helpers about an skb's metadata rather than its bytes, with the kernel's
 * semantics on the skb BPF_PROG_TEST_RUN builds: bpf_get_socket_cookie,
 * bpf_get_socket_uid, bpf_get_hash_recalc, bpf_set_hash, bpf_set_hash_invalid,
 * bpf_skb_vlan_push, bpf_skb_vlan_pop, bpf_skb_ecn_set_ce.
 *
 * A test run's skb belongs to a dummy socket the kernel makes for each run (sock_init_data()
 * with no struct socket: owner uid 0, a cookie of its own); brt_run_pkt.has_sk says so.
 * The VLAN tag the kernel keeps out of the packet (skb->vlan_proto/vlan_tci, "hardware
 * accelerated") is the __sk_buff's vlan_present/vlan_proto/vlan_tci; skb->protocol is its
 * protocol field.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/in.h>

#include "attach/attach.h"
#include "vm/vm.h"

#define VLAN_HLEN 4
#define VLAN_ETH_HLEN 18
#define OVERFLOW_UID 65534 /* what the kernel answers for a socket-less skb */

/* Socket cookies: unique for the process's life and never 0, like the kernel's
 * (which are unique for the boot; their values are not the kernel's). */
static atomic_uint_fast64_t next_cookie = 1;

/* u64 bpf_get_socket_cookie(skb): the owning socket's cookie, 0 without one. */
uint64_t brt_helper_get_socket_cookie(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!p || !p->has_sk)
		return 0;
	if (!p->sk_cookie)
		p->sk_cookie = atomic_fetch_add(&next_cookie, 1);
	return p->sk_cookie;
}

/* The network namespace cookie of the calling thread's namespace (SO_NETNS_COOKIE, Linux
 * 5.14), 0 when the kernel does not say. */
#define BRT_SO_NETNS_COOKIE 71

static uint64_t netns_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, BRT_SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	close(fd);
	return cookie;
}

/* u64 bpf_get_netns_cookie(ctx): the cookie of the network namespace of the context's
 * socket, of the initial namespace for a NULL context or a socket-less skb (the kernel's
 * __bpf_get_netns_cookie()).  A test run's skb belongs to a socket the kernel makes in
 * the caller's namespace, as bpfrt's sockets are: the caller's cookie.  For the initial
 * namespace bpfrt answers the caller's too: the host's programs run there (a caller in
 * another namespace gets its own where the kernel would give init_net's). */
uint64_t brt_helper_get_netns_cookie(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return netns_cookie();
}

/* u32 bpf_get_socket_uid(skb): the owning socket's uid (the test run's socket: 0), the
 * overflow uid without one. */
uint64_t brt_helper_get_socket_uid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);

	(void)r2, (void)r3, (void)r4, (void)r5;
	return p && p->has_sk ? 0 : OVERFLOW_UID;
}

/* ---- flow hash -------------------------------------------------------------------------- */
/* The kernel hashes the flow dissector's keys with a key drawn at boot, so its values can
 * not be reproduced; this one hashes the same keys (addresses, protocol, ports) with a key
 * drawn once per process, keeping what programs can rely on: the same flow gives the same
 * nonzero hash, and skb->hash holds it afterwards. */
static uint64_t hash_key;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t mix_bytes(uint64_t h, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = mix(h, b[i]);
	return h;
}

static uint32_t flow_hash(const struct brt_run_pkt *p, uint16_t proto_be)
{
	const uint8_t *nh = p->network, *end = p->data_end;
	uint64_t h;
	uint16_t proto = ntohs(proto_be);
	uint8_t l4 = 0;
	const uint8_t *th = NULL;

	if (!__atomic_load_n(&hash_key, __ATOMIC_RELAXED)) {
		uint64_t k = 0;

		if (getrandom(&k, sizeof(k), 0) != sizeof(k))
			k = (uint64_t)(uintptr_t)&k ^ 0x5bd1e995ull;
		k |= 1;
		__atomic_compare_exchange_n(&hash_key, &(uint64_t){ 0 }, k, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	}
	h = mix(__atomic_load_n(&hash_key, __ATOMIC_RELAXED), proto);
	if (proto == ETH_P_IP && nh + 20 <= end && (nh[0] >> 4) == 4) {
		h = mix_bytes(h, nh + 12, 8);
		l4 = nh[9];
		if (!(((nh[6] << 8) | nh[7]) & 0x3fff)) /* not a fragment */
			th = nh + (nh[0] & 15) * 4;
	} else if (proto == ETH_P_IPV6 && nh + 40 <= end) {
		h = mix_bytes(h, nh + 8, 32);
		l4 = nh[6];
		th = nh + 40;
	}
	h = mix(h, l4);
	if (th && (l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_SCTP) && th + 4 <= end)
		h = mix_bytes(h, th, 4);
	return (uint32_t)(h ^ (h >> 32)) ? (uint32_t)(h ^ (h >> 32)) : 1;
}

/* u32 bpf_get_hash_recalc(skb): skb->hash, computed from the flow when none is set
 * (skb_get_hash()). */
uint64_t brt_helper_get_hash_recalc(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	struct __sk_buff *skb;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!p)
		return 0;
	skb = p->ctx;
	if (!p->hash_valid) {
		skb->hash = flow_hash(p, (uint16_t)skb->protocol);
		p->hash_valid = 1;
	}
	return skb->hash;
}

/* long bpf_set_hash(skb, u32 hash): skb->hash = hash, kept until the hash is cleared. */
uint64_t brt_helper_set_hash(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);

	(void)r3, (void)r4, (void)r5;
	if (p) {
		((struct __sk_buff *)p->ctx)->hash = (uint32_t)r2;
		p->hash_valid = 1;
	}
	return 0;
}

/* long bpf_skb_set_tstamp(skb, tstamp, tstamp_type): IPv4 and IPv6 packets only
 * (-EOPNOTSUPP); type BPF_SKB_CLOCK_REALTIME (0, any tstamp), _MONOTONIC (1) or _TAI (2)
 * (not with tstamp 0), else -EINVAL; the __sk_buff's tstamp and tstamp_type take them, as
 * the kernel's skb->tstamp and skb->tstamp_type do. */
uint64_t brt_helper_skb_set_tstamp(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	struct __sk_buff *skb;
	uint32_t type = (uint32_t)r3;

	(void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EOPNOTSUPP;
	skb = p->ctx;
	if (skb->protocol != htons(ETH_P_IP) && skb->protocol != htons(ETH_P_IPV6))
		return (uint64_t)-EOPNOTSUPP;
	if (type > 2 || (type && !r2))
		return (uint64_t)-EINVAL;
	skb->tstamp = r2;
	skb->tstamp_type = (uint8_t)type;
	return 0;
}

/* long bpf_set_hash_invalid(skb): clears skb->hash; the next bpf_get_hash_recalc computes
 * it again. */
uint64_t brt_helper_set_hash_invalid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (p) {
		((struct __sk_buff *)p->ctx)->hash = 0;
		p->hash_valid = 0;
	}
	return 0;
}

/* ---- VLAN tags -------------------------------------------------------------------------- */
static int eth_type_vlan(uint16_t proto_be)
{
	return proto_be == htons(ETH_P_8021Q) || proto_be == htons(ETH_P_8021AD);
}

static void put_hw_tag(struct __sk_buff *skb, uint16_t proto_be, uint16_t tci)
{
	skb->vlan_present = 1;
	skb->vlan_proto = proto_be;
	skb->vlan_tci = tci;
}

/* __skb_vlan_pop(): take the tag after the MAC addresses out of the packet. */
static int vlan_pop_inline(struct brt_run_pkt *p, struct __sk_buff *skb, uint16_t *tci)
{
	uint8_t *d = p->data;
	uint16_t enc, raw = 0;

	if (p->mac != p->data)
		return -EINVAL;
	if (p->data_end - p->data < VLAN_ETH_HLEN)
		return -ENOMEM;
	*tci = (uint16_t)(d[14] << 8 | d[15]);
	memmove(d + VLAN_HLEN, d, 2 * ETH_ALEN);
	memcpy(&enc, d + 16, 2);
	/* vlan_set_encap_proto(): an 802.3 length is no protocol */
	if (ntohs(enc) >= ETH_P_802_3_MIN) {
		skb->protocol = enc;
	} else {
		if (d + 20 <= p->data_end)
			memcpy(&raw, d + 18, 2);
		skb->protocol = htons(raw == 0xffff ? ETH_P_802_3 : ETH_P_802_2);
	}
	p->data += VLAN_HLEN;
	p->meta = p->data;
	p->mac = p->data;
	if (p->network < p->data + ETH_HLEN)
		p->network = p->data + ETH_HLEN;
	return 0;
}

/* long bpf_skb_vlan_push(skb, __be16 vlan_proto, u16 vlan_tci): a protocol other than
 * 802.1Q/802.1ad is taken as 802.1Q.  The new tag goes out of band; one already there
 * moves into the packet first (after the MAC addresses), as skb_vlan_push() does.
 * -EINVAL when the packet does not start at its link-layer header. */
uint64_t brt_helper_skb_vlan_push(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint16_t proto = (uint16_t)r2, tci = (uint16_t)r3;
	struct __sk_buff *skb;

	(void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	skb = p->ctx;
	if (!eth_type_vlan(proto))
		proto = htons(ETH_P_8021Q);
	if (skb->vlan_present) {
		uint8_t *d = p->data - VLAN_HLEN;
		uint16_t old_tci = htons((uint16_t)skb->vlan_tci), old_proto = (uint16_t)skb->vlan_proto;

		if (p->mac != p->data)
			return (uint64_t)-EINVAL;
		if (d < p->head) /* the kernel would grow the headroom; test runs have plenty */
			return (uint64_t)-ENOMEM;
		memmove(d, p->data, 2 * ETH_ALEN);
		memcpy(d + 12, &old_proto, 2);
		memcpy(d + 14, &old_tci, 2);
		p->data = p->meta = p->mac = d;
		p->network -= VLAN_HLEN;
		skb->protocol = old_proto;
	}
	put_hw_tag(skb, proto, tci);
	brt_pkt_moved(ctx, p);
	return 0;
}

/* long bpf_skb_vlan_pop(skb): drop the out-of-band tag, or the first one in the packet
 * when there is none; then a further tag in the packet moves out of band (skb_vlan_pop()).
 * 0 with nothing done when the packet has no tag; -ENOMEM for a tagged packet shorter than
 * a VLAN Ethernet header. */
uint64_t brt_helper_skb_vlan_pop(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	struct __sk_buff *skb;
	uint16_t tci, proto;
	int err = 0;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	skb = p->ctx;
	if (skb->vlan_present) {
		skb->vlan_present = 0;
		skb->vlan_proto = 0;
		skb->vlan_tci = 0;
	} else {
		if (!eth_type_vlan((uint16_t)skb->protocol))
			goto out;
		err = vlan_pop_inline(p, skb, &tci);
		if (err)
			goto out;
	}
	if (!eth_type_vlan((uint16_t)skb->protocol))
		goto out;
	proto = (uint16_t)skb->protocol;
	err = vlan_pop_inline(p, skb, &tci);
	if (!err)
		put_hw_tag(skb, proto, tci);
out:
	brt_pkt_moved(ctx, p);
	return (uint64_t)(int64_t)err;
}

/* long bpf_skb_ecn_set_ce(skb): mark an ECN-capable IPv4/IPv6 packet Congestion
 * Experienced (IPv4: the header checksum follows, as csum16_add() in network order).
 * 1 when it is (or already was) CE, 0 for a packet that is not ECN-capable, not IP, or
 * shorter than the IP header.  A VLAN protocol is taken as not IP (the kernel looks
 * through in-packet tags; test cases here have none). */
uint64_t brt_helper_skb_ecn_set_ce(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	struct __sk_buff *skb;
	uint16_t proto;
	uint8_t *nh;

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!p)
		return 0;
	skb = p->ctx;
	proto = (uint16_t)skb->protocol;
	nh = p->network;
	if (proto == htons(ETH_P_IP)) {
		uint16_t check, add;
		unsigned ecn;

		if (p->data_end - p->data < 20 || nh + 20 > p->data_end)
			return 0;
		ecn = (unsigned)(nh[1] + 1) & 3;
		if (!(ecn & 2))
			return !ecn;
		memcpy(&check, nh + 10, 2);
		add = (uint16_t)(htons(0xfffb) + htons((uint16_t)ecn));
		check = (uint16_t)(check + add);
		check = (uint16_t)(check + (check < add));
		memcpy(nh + 10, &check, 2);
		nh[1] |= 3;
		brt_pkt_moved(ctx, p);
		return 1;
	}
	if (proto == htons(ETH_P_IPV6)) {
		if (p->data_end - p->data < 40 || nh + 40 > p->data_end)
			return 0;
		if (!(((nh[0] << 8 | nh[1]) >> 4) & 3)) /* the traffic class's ECN bits */
			return 0;
		nh[1] |= 3 << 4;
		brt_pkt_moved(ctx, p);
		return 1;
	}
	return 0;
}

/* ---- tunnel metadata -------------------------------------------------------------------- */
/* bpf_skb_set_tunnel_key() gives the skb a metadata dst holding an ip_tunnel_info (the
 * kernel's per-CPU md_dst, cleared by each set); get_tunnel_key/opt read it back.  A test
 * run's skb has no dst, so before a set both gets fail as the kernel's.  The bits of
 * uapi/linux/if_tunnel.h's IP_TUNNEL_*_BIT: */
enum {
	TUN_CSUM = 0, TUN_KEY = 2, TUN_SEQ = 3, TUN_DONT_FRAGMENT = 8, TUN_GENEVE_OPT = 11,
	TUN_VXLAN_OPT = 12, TUN_NOCACHE = 13, TUN_ERSPAN_OPT = 14, TUN_GTP_OPT = 15,
	TUN_PFCP_OPT = 17,
};
#define TUN_OPTIONS_PRESENT                                                              \
	(1u << TUN_GENEVE_OPT | 1u << TUN_VXLAN_OPT | 1u << TUN_ERSPAN_OPT |              \
	 1u << TUN_GTP_OPT | 1u << TUN_PFCP_OPT)
#define TUN_OPTS_MAX 255 /* IP_TUNNEL_OPTS_MAX: options_len is a u8 */
#define IPV6_FLOWLABEL_MASK 0x000fffffu

/* the older, shorter struct bpf_tunnel_key layouts both helpers accept */
static int tunnel_key_compat_size(uint32_t size)
{
	return size == offsetof(struct bpf_tunnel_key, local_ipv6[0]) ||
	       size == offsetof(struct bpf_tunnel_key, tunnel_label) ||
	       size == offsetof(struct bpf_tunnel_key, tunnel_ext) ||
	       size == offsetof(struct bpf_tunnel_key, remote_ipv6[1]);
}

/* long bpf_skb_get_tunnel_key(skb, struct bpf_tunnel_key *key, u32 size, u64 flags):
 * the key set on the skb; remote is the key's source, local its destination (as the
 * kernel reads a received packet's key).  -EINVAL without one or for flags other than
 * BPF_F_TUNINFO_IPV6 | BPF_F_TUNINFO_FLAGS, -EPROTO when the family differs, -EINVAL for
 * a size no layout has (the 8-byte layout: IPv4 only); key zeroed on error. */
uint64_t brt_helper_skb_get_tunnel_key(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t size = (uint32_t)r3;
	struct bpf_tunnel_key k;
	void *to = (void *)(uintptr_t)r2;
	int err = -EINVAL;

	(void)r5;
	if (!size || !bpfrt_run_access_ok(ctx, to, size, 1))
		return (uint64_t)-EFAULT;
	if (!p || !p->tunnel_set || (r4 & ~(uint64_t)(BPF_F_TUNINFO_IPV6 | BPF_F_TUNINFO_FLAGS)))
		goto clear;
	if (p->tunnel_v6 != !!(r4 & BPF_F_TUNINFO_IPV6)) {
		err = -EPROTO;
		goto clear;
	}
	if (size != sizeof(k) &&
	    (!tunnel_key_compat_size(size) ||
	     (size == offsetof(struct bpf_tunnel_key, remote_ipv6[1]) && p->tunnel_v6)))
		goto clear;
	memset(&k, 0, sizeof(k));
	k.tunnel_id = p->tunnel_id;
	k.tunnel_tos = p->tunnel_tos;
	k.tunnel_ttl = p->tunnel_ttl;
	if (r4 & BPF_F_TUNINFO_FLAGS)
		k.tunnel_flags = htons((uint16_t)p->tunnel_flags);
	if (p->tunnel_v6) {
		memcpy(k.remote_ipv6, p->tunnel_src, sizeof(k.remote_ipv6));
		memcpy(k.local_ipv6, p->tunnel_dst, sizeof(k.local_ipv6));
		k.tunnel_label = ntohl(p->tunnel_label);
	} else {
		k.remote_ipv4 = ntohl(p->tunnel_src[0]);
		k.local_ipv4 = ntohl(p->tunnel_dst[0]);
	}
	memcpy(to, &k, size < sizeof(k) ? size : sizeof(k));
	return 0;
clear:
	memset(to, 0, size);
	return (uint64_t)(int64_t)err;
}

/* long bpf_skb_set_tunnel_key(skb, const struct bpf_tunnel_key *key, u32 size, u64 flags):
 * attach a transmit key (flags BPF_F_TUNINFO_IPV6, BPF_F_ZERO_CSUM_TX,
 * BPF_F_DONT_FRAGMENT, BPF_F_SEQ_NUMBER, BRT_F_NO_TUNNEL_KEY; else -EINVAL); -EINVAL for
 * another size, an IPv4 key with a flow label or a nonzero tunnel_ext.  Options set
 * before are dropped. */
uint64_t brt_helper_skb_set_tunnel_key(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t size = (uint32_t)r3;
	const void *from = (const void *)(uintptr_t)r2;
	struct bpf_tunnel_key k;

	(void)r5;
	if (r4 & ~(uint64_t)(BPF_F_TUNINFO_IPV6 | BPF_F_ZERO_CSUM_TX | BPF_F_DONT_FRAGMENT |
			     BPF_F_SEQ_NUMBER | BRT_F_NO_TUNNEL_KEY))
		return (uint64_t)-EINVAL;
	if (size != sizeof(k) && !tunnel_key_compat_size(size))
		return (uint64_t)-EINVAL;
	if (!bpfrt_run_access_ok(ctx, from, size, 0))
		return (uint64_t)-EFAULT;
	memset(&k, 0, sizeof(k));
	memcpy(&k, from, size);
	if ((!(r4 & BPF_F_TUNINFO_IPV6) && k.tunnel_label) || k.tunnel_ext)
		return (uint64_t)-EINVAL;
	if (!p)
		return 0;
	p->tunnel_set = 1;
	p->tunnel_v6 = !!(r4 & BPF_F_TUNINFO_IPV6);
	p->tunnel_flags = 1u << TUN_NOCACHE;
	if (r4 & BPF_F_DONT_FRAGMENT)
		p->tunnel_flags |= 1u << TUN_DONT_FRAGMENT;
	if (!(r4 & BPF_F_ZERO_CSUM_TX))
		p->tunnel_flags |= 1u << TUN_CSUM;
	if (r4 & BPF_F_SEQ_NUMBER)
		p->tunnel_flags |= 1u << TUN_SEQ;
	if (!(r4 & BRT_F_NO_TUNNEL_KEY))
		p->tunnel_flags |= 1u << TUN_KEY;
	p->tunnel_id = k.tunnel_id;
	p->tunnel_tos = k.tunnel_tos;
	p->tunnel_ttl = k.tunnel_ttl;
	memset(p->tunnel_src, 0, sizeof(p->tunnel_src));
	memset(p->tunnel_dst, 0, sizeof(p->tunnel_dst));
	p->tunnel_label = 0;
	p->tunnel_opt_len = 0;
	if (p->tunnel_v6) {
		memcpy(p->tunnel_dst, k.remote_ipv6, sizeof(p->tunnel_dst));
		memcpy(p->tunnel_src, k.local_ipv6, sizeof(p->tunnel_src));
		p->tunnel_label = htonl(k.tunnel_label) & htonl(IPV6_FLOWLABEL_MASK);
	} else {
		p->tunnel_dst[0] = htonl(k.remote_ipv4);
		p->tunnel_src[0] = htonl(k.local_ipv4);
	}
	return 0;
}

/* long bpf_skb_get_tunnel_opt(skb, void *opt, u32 size): the options set with the key,
 * the rest of opt zeroed; their length, -ENOENT when there are none, -ENOMEM when size is
 * shorter (opt zeroed on error). */
uint64_t brt_helper_skb_get_tunnel_opt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t size = (uint32_t)r3;
	uint8_t *to = (uint8_t *)(uintptr_t)r2;

	(void)r4, (void)r5;
	if (!size || !bpfrt_run_access_ok(ctx, to, size, 1))
		return (uint64_t)-EFAULT;
	if (!p || !p->tunnel_set || !(p->tunnel_flags & TUN_OPTIONS_PRESENT)) {
		memset(to, 0, size);
		return (uint64_t)-ENOENT;
	}
	if (size < p->tunnel_opt_len) {
		memset(to, 0, size);
		return (uint64_t)-ENOMEM;
	}
	memcpy(to, p->tunnel_opts, p->tunnel_opt_len);
	memset(to + p->tunnel_opt_len, 0, size - p->tunnel_opt_len);
	return p->tunnel_opt_len;
}

/* long bpf_skb_set_tunnel_opt(skb, const void *opt, u32 size): options for the key set
 * before (-EINVAL without one, or for a size that is not a multiple of 4; -ENOMEM past
 * IP_TUNNEL_OPTS_MAX).  Size 0 keeps the flags of options set earlier, as the kernel. */
uint64_t brt_helper_skb_set_tunnel_opt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t size = (uint32_t)r3;
	const void *from = (const void *)(uintptr_t)r2;

	(void)r4, (void)r5;
	if (!p || !p->tunnel_set || (size & 3))
		return (uint64_t)-EINVAL;
	if (size > TUN_OPTS_MAX)
		return (uint64_t)-ENOMEM;
	if (!bpfrt_run_access_ok(ctx, from, size, 0))
		return (uint64_t)-EFAULT;
	p->tunnel_opt_len = (uint8_t)size;
	if (size) {
		memcpy(p->tunnel_opts, from, size);
		p->tunnel_flags |= TUN_OPTIONS_PRESENT;
	}
	return 0;
}
