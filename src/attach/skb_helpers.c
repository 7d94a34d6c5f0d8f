/* skb_helpers.c - helpers that read or change the packet of an skb program (socket
 * filter, tc, cgroup_skb) with the kernel's semantics on a linear skb, as
 * BPF_PROG_TEST_RUN builds it: bpf_skb_load_bytes, bpf_skb_store_bytes,
 * bpf_skb_load_bytes_relative, bpf_skb_pull_data, bpf_skb_change_tail,
 * bpf_skb_change_type, bpf_redirect, bpf_clone_redirect, bpf_redirect_neigh,
 * bpf_redirect_peer; and the run
 * packet's bookkeeping every packet helper shares (brt_pkt_of(), brt_pkt_moved()).
 *
 * The packet is the run's struct brt_run_pkt (vm/vm.h); the program's struct __sk_buff shows
 * its data, data_end, data_meta and len, which a helper that moves the packet updates.
 * Without a brt_run_pkt (a socket filter run by attach/filter.c) the helpers that only read
 * use the run's LD_ABS packet (bpfrt_run_ctx skb_data/skb_len).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/pkt_cls.h>

#include "attach/attach.h"
#include "maps/maps.h" /* BRT_ENOTSUPP */
#include "vm/vm.h"

#define SKB_MAX_ALLOC (16384 - 320) /* 4 pages less skb_shared_info: change_tail's limit */

struct brt_run_pkt *brt_pkt_of(struct bpfrt_run_ctx *ctx, uint64_t r1)
{
	struct brt_run_pkt *p = ctx->pkt;

	return p && (uint64_t)(uintptr_t)p->ctx == r1 ? p : NULL;
}

void brt_pkt_moved(struct bpfrt_run_ctx *ctx, struct brt_run_pkt *p)
{
	if (p->prog_type == BPF_PROG_TYPE_XDP) {
		struct xdp_md *md = p->ctx;

		md->data_meta = (uint32_t)(uintptr_t)p->meta;
		md->data = (uint32_t)(uintptr_t)p->data;
		md->data_end = (uint32_t)(uintptr_t)p->data_end;
	} else {
		struct __sk_buff *skb = p->ctx;

		skb->data = (uint32_t)(uintptr_t)p->data;
		skb->data_meta = skb->data;
		skb->data_end = (uint32_t)(uintptr_t)p->data_end;
		skb->len = (uint32_t)(p->data_end - p->data);
		ctx->skb_data = p->data;
		ctx->skb_len = (size_t)(p->data_end - p->data);
	}
	/* the checked engine: the new range is the program's to access (a failed grant only
	 * means the program faults on it, as memory it may not touch) */
	(void)bpfrt_run_grant(ctx, p->meta, (size_t)(p->data_end - p->meta), 1);
}

static uint32_t skb_len(const struct brt_run_pkt *p)
{
	return (uint32_t)(p->data_end - p->data);
}

/* long bpf_skb_load_bytes(const void *skb, u32 offset, void *to, u32 len): 0, or -EFAULT
 * with to zeroed when [offset, offset + len) is not inside the packet (the kernel's
 * skb_header_pointer() failing; offsets above INT_MAX fail the same way). */
uint64_t brt_helper_skb_load_bytes(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint32_t off = (uint32_t)r2, len = (uint32_t)r4;
	void *to = (void *)(uintptr_t)r3;

	(void)r1, (void)r5;
	/* unverified programs (checked engine): the destination must be theirs to write */
	if (!len || !bpfrt_run_access_ok(ctx, to, len, 1))
		return (uint64_t)-EFAULT;
	if (off > INT32_MAX || !ctx->skb_data || (uint64_t)off + len > ctx->skb_len) {
		memset(to, 0, len);
		return (uint64_t)-EFAULT;
	}
	memcpy(to, ctx->skb_data + off, len);
	return 0;
}

/* long bpf_skb_load_bytes_relative(skb, u32 offset, void *to, u32 len, u32 start_header):
 * like bpf_skb_load_bytes from the link-layer (BPF_HDR_START_MAC) or network
 * (BPF_HDR_START_NET) header, up to the end of the packet; -EFAULT with to zeroed for an
 * offset over 0xffff, another start_header, no link-layer header, or bytes past the end.
 * Without a run packet (attach/filter.c) the LD_ABS packet starts at the link layer. */
uint64_t brt_helper_skb_load_bytes_relative(uint64_t r1, uint64_t r2, uint64_t r3,
					    uint64_t r4, uint64_t r5,
					    struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t off = (uint32_t)r2, len = (uint32_t)r4;
	const uint8_t *start = NULL, *end;
	void *to = (void *)(uintptr_t)r3;

	if (!len || !bpfrt_run_access_ok(ctx, to, len, 1))
		return (uint64_t)-EFAULT;
	if (p) {
		end = p->data_end;
		start = (uint32_t)r5 == BPF_HDR_START_MAC ? p->mac
			: (uint32_t)r5 == BPF_HDR_START_NET ? p->network : NULL;
	} else {
		end = ctx->skb_data ? ctx->skb_data + ctx->skb_len : NULL;
		if (ctx->skb_data && (uint32_t)r5 == BPF_HDR_START_MAC)
			start = ctx->skb_data;
		else if (ctx->skb_data && (uint32_t)r5 == BPF_HDR_START_NET)
			start = ctx->skb_data + ETH_HLEN;
	}
	if (off > 0xffff || !start || (uintptr_t)start + off + len > (uintptr_t)end) {
		memset(to, 0, len);
		return (uint64_t)-EFAULT;
	}
	memcpy(to, start + off, len);
	return 0;
}

/* long bpf_skb_store_bytes(skb, u32 offset, const void *from, u32 len, u64 flags):
 * -EINVAL for flags other than BPF_F_RECOMPUTE_CSUM (no checksum state to recompute in a
 * test run) and BPF_F_INVALIDATE_HASH (clears skb->hash); -EFAULT when the bytes are not
 * all inside the packet (bpf_try_make_writable() failing). */
uint64_t brt_helper_skb_store_bytes(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t off = (uint32_t)r2, len = (uint32_t)r4;
	const void *from = (const void *)(uintptr_t)r3;

	if (r5 & ~(uint64_t)(BPF_F_RECOMPUTE_CSUM | BPF_F_INVALIDATE_HASH))
		return (uint64_t)-EINVAL;
	if (off > INT32_MAX)
		return (uint64_t)-EFAULT;
	if (!p || (uint64_t)off + len > skb_len(p) || !bpfrt_run_access_ok(ctx, from, len, 0))
		return (uint64_t)-EFAULT;
	memmove(p->data + off, from, len);
	if (r5 & BPF_F_INVALIDATE_HASH) {
		((struct __sk_buff *)p->ctx)->hash = 0;
		p->hash_valid = 0;
	}
	brt_pkt_moved(ctx, p);
	return 0;
}

/* long bpf_skb_pull_data(skb, u32 len): make len bytes (0: the whole linear part)
 * directly accessible.  A test-run skb is linear: 0, or -ENOMEM past its end. */
uint64_t brt_helper_skb_pull_data(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t len = (uint32_t)r2;

	(void)r3, (void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EFAULT;
	if (len > skb_len(p))
		return (uint64_t)-ENOMEM;
	brt_pkt_moved(ctx, p);
	return 0;
}

/* long bpf_skb_change_tail(skb, u32 len, u64 flags): grow (new bytes zeroed; the
 * kernel leaves them as its buffer had them) or trim the packet to len bytes.  -EINVAL
 * for flags, a length over SKB_MAX_ALLOC or one that would cut into the headers before
 * the network header. */
uint64_t brt_helper_skb_change_tail(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t new_len = (uint32_t)r2, cur;
	uint32_t min_len;

	(void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EFAULT;
	min_len = p->network > p->data ? (uint32_t)(p->network - p->data) : 0;
	if (r3 || new_len > SKB_MAX_ALLOC || new_len < min_len)
		return (uint64_t)-EINVAL;
	cur = skb_len(p);
	if (new_len > cur) {
		if (new_len - cur > (uint64_t)(p->end - p->data_end))
			return (uint64_t)-ENOMEM;
		memset(p->data_end, 0, new_len - cur);
	}
	p->data_end = p->data + new_len;
	brt_pkt_moved(ctx, p);
	return 0;
}

/* long bpf_skb_change_type(skb, u32 type): PACKET_HOST .. PACKET_OTHERHOST only, for the
 * old type and the new one (else -EINVAL). */
uint64_t brt_helper_skb_change_type(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	struct __sk_buff *skb;

	(void)r3, (void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EFAULT;
	skb = p->ctx;
	if (skb->pkt_type > PACKET_OTHERHOST || r2 > PACKET_OTHERHOST)
		return (uint64_t)-EINVAL;
	skb->pkt_type = (uint32_t)r2;
	return 0;
}

/* long bpf_redirect(u32 ifindex, u64 flags): records the target and returns the verdict
 * that makes the hook redirect: TC_ACT_REDIRECT for tc (TC_ACT_SHOT for flags other than
 * BPF_F_INGRESS), XDP_REDIRECT for XDP (XDP_ABORTED for any flag).  A test run returns
 * that verdict as the kernel's does; nothing is sent. */
uint64_t brt_helper_redirect(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = ctx->pkt;
	int xdp = p && p->prog_type == BPF_PROG_TYPE_XDP;

	(void)r3, (void)r4, (void)r5;
	if (xdp ? r2 != 0 : (r2 & ~(uint64_t)BPF_F_INGRESS) != 0)
		return xdp ? XDP_ABORTED : (uint64_t)TC_ACT_SHOT;
	if (p) {
		p->redirect_ifindex = (uint32_t)r1;
		p->redirect_cpu = 0; /* the last redirect of a run is its target */
		p->redirect_prog_id = 0;
		p->redirect_xsk = 0;
		p->redirect_flags = r2;
	}
	return xdp ? XDP_REDIRECT : TC_ACT_REDIRECT;
}

/* Whether interface ifindex is up (IFF_UP); 1 when that cannot be told. */
static unsigned brt_ifindex_up(uint32_t ifindex)
{
	struct ifreq ifr;
	int fd, up = 1;

	memset(&ifr, 0, sizeof(ifr));
	if (!if_indextoname(ifindex, ifr.ifr_name))
		return 1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr))
		up = !!(ifr.ifr_flags & IFF_UP);
	close(fd);
	return (unsigned)up;
}

/* long bpf_clone_redirect(skb, u32 ifindex, u64 flags): the kernel sends a clone of the
 * packet out of (or, BPF_F_INGRESS, into) interface ifindex and returns the transmit
 * result.  Checks as there: -EINVAL for other flags or an ifindex no interface of this
 * network namespace has, -EBADMSG for a GSO packet without a GSO type (a test run's
 * gso_size from ctx_in), -ERANGE without a link-layer header.  A down interface drops
 * the clone: NET_RX_DROP (1) into it, NET_XMIT_CN (2) out of it (its noop qdisc).  No
 * clone leaves bpfrt (test runs send nothing); the result is what the kernel returns
 * for a clone it sent. */
uint64_t brt_helper_clone_redirect(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	char name[IF_NAMESIZE];
	unsigned up;

	(void)r4, (void)r5;
	if (r3 & ~(uint64_t)BPF_F_INGRESS)
		return (uint64_t)-EINVAL;
	if (p && ((struct __sk_buff *)p->ctx)->gso_size)
		return (uint64_t)-EBADMSG;
	if (!(uint32_t)r2 || !if_indextoname((uint32_t)r2, name))
		return (uint64_t)-EINVAL;
	if (!p || !p->mac || p->mac >= p->network || p->data_end == p->data)
		return (uint64_t)-ERANGE;
	up = brt_ifindex_up((uint32_t)r2);
	if (!up)
		return r3 & BPF_F_INGRESS ? 1 : 2;
	return 0;
}

/* long bpf_redirect_neigh(u32 ifindex, struct bpf_redir_neigh *params, int plen,
 * u64 flags): TC_ACT_REDIRECT (to ifindex through the neighbour subsystem, params the
 * next hop), TC_ACT_SHOT for flags or a plen shorter than the structure. */
uint64_t brt_helper_redirect_neigh(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = ctx->pkt;
	uint32_t plen = (uint32_t)r3; /* an int compared with a size_t: unsigned */

	(void)r2, (void)r5;
	if ((plen && plen < sizeof(struct bpf_redir_neigh)) || r4)
		return TC_ACT_SHOT;
	if (p) {
		p->redirect_ifindex = (uint32_t)r1;
		p->redirect_cpu = 0; /* the last redirect of a run is its target */
		p->redirect_prog_id = 0;
		p->redirect_xsk = 0;
		p->redirect_flags = BRT_REDIRECT_NEIGH;
	}
	return TC_ACT_REDIRECT;
}

/* long bpf_redirect_peer(u32 ifindex, u64 flags): TC_ACT_REDIRECT to the peer of a
 * veth/netkit device, TC_ACT_SHOT for any flag. */
uint64_t brt_helper_redirect_peer(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = ctx->pkt;

	(void)r3, (void)r4, (void)r5;
	if (r2)
		return TC_ACT_SHOT;
	if (p) {
		p->redirect_ifindex = (uint32_t)r1;
		p->redirect_cpu = 0; /* the last redirect of a run is its target */
		p->redirect_prog_id = 0;
		p->redirect_xsk = 0;
		p->redirect_flags = 0;
	}
	return TC_ACT_REDIRECT;
}

/* long bpf_skb_change_head(skb, u32 head_room, u64 flags): head_room zeroed bytes in front
 * of the packet, which becomes its link-layer header (the network header stays).
 * -EINVAL for flags, head_room of 2^31 or more, or a packet that would exceed
 * SKB_MAX_ALLOC (no GSO in a test run). */
uint64_t brt_helper_skb_change_head(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint32_t room = (uint32_t)r2, len, new_len;

	(void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	len = skb_len(p);
	new_len = len + room;
	if (r3 || (int32_t)room < 0 || new_len > SKB_MAX_ALLOC || new_len < len)
		return (uint64_t)-EINVAL;
	if (room > (uint64_t)(p->data - p->head)) /* the kernel reallocates; test runs have room */
		return (uint64_t)-ENOMEM;
	p->data -= room;
	p->meta = p->mac = p->data;
	memset(p->data, 0, room);
	brt_pkt_moved(ctx, p);
	return 0;
}

/* ---- header room: bpf_skb_adjust_room, bpf_skb_change_proto ----------------------------- */

/* skb->gso_size of a test run comes from ctx_in with gso_type 0: a GSO packet that is not
 * TCP's, which both helpers refuse to resize (-ENOTSUPP). */
static int skb_is_gso(const struct brt_run_pkt *p)
{
	return ((const struct __sk_buff *)p->ctx)->gso_size != 0;
}

/* bpf_skb_net_hdr_push(): len zeroed bytes at off from the start (the link-layer header
 * moves to the front); the link-layer and network headers move with it.  -ENOMEM where the
 * kernel would reallocate the head (never in a test run: 64 KiB of headroom). */
static int net_hdr_push(struct brt_run_pkt *p, uint32_t off, uint32_t len)
{
	if (len > (uint64_t)(p->data - p->head))
		return -ENOMEM;
	p->data -= len;
	memmove(p->data, p->data + len, off);
	memset(p->data + off, 0, len);
	p->meta = p->data;
	if (p->mac)
		p->mac -= len;
	p->network -= len;
	return 0;
}

/* bpf_skb_net_hdr_pop(): len bytes at off removed, the first off bytes moved up;
 * -ENOMEM when the packet is shorter than off + len (pskb_may_pull() failing). */
static int net_hdr_pop(struct brt_run_pkt *p, uint32_t off, uint32_t len)
{
	uint8_t *old = p->data;

	if ((uint64_t)off + len > skb_len(p))
		return -ENOMEM;
	p->data += len;
	memmove(p->data, old, off);
	p->meta = p->data;
	if (p->mac)
		p->mac += len;
	p->network += len;
	return 0;
}

/* skb->protocol is the context's protocol field (network order); a new one drops the
 * route (none in a test run) */
static void set_protocol(struct brt_run_pkt *p, uint16_t proto)
{
	((struct __sk_buff *)p->ctx)->protocol = htons(proto);
}

static uint16_t skb_protocol(const struct brt_run_pkt *p)
{
	return (uint16_t)((const struct __sk_buff *)p->ctx)->protocol;
}

/* the kernel's bpf_skb_net_base_len(): the fixed IP header of skb->protocol */
static uint32_t net_base_len(const struct brt_run_pkt *p)
{
	if (skb_protocol(p) == htons(ETH_P_IP))
		return 20;
	if (skb_protocol(p) == htons(ETH_P_IPV6))
		return 40;
	return ~0u;
}

#define ADJ_ENCAP_L3 (BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 | BPF_F_ADJ_ROOM_ENCAP_L3_IPV6)
#define ADJ_DECAP_L3 (BRT_F_ADJ_ROOM_DECAP_L3_IPV4 | BRT_F_ADJ_ROOM_DECAP_L3_IPV6)
#define ADJ_MASK                                                                         \
	(BPF_F_ADJ_ROOM_FIXED_GSO | ADJ_ENCAP_L3 | BPF_F_ADJ_ROOM_ENCAP_L4_GRE |          \
	 BPF_F_ADJ_ROOM_ENCAP_L4_UDP | BPF_F_ADJ_ROOM_ENCAP_L2_ETH |                      \
	 BPF_F_ADJ_ROOM_ENCAP_L2(BPF_ADJ_ROOM_ENCAP_L2_MASK) | ADJ_DECAP_L3)

/* bpf_skb_net_grow(): room for an outer header; with an ENCAP_L3 flag the packet becomes
 * encapsulated (once: -EALREADY after) and skb->protocol follows the outer header. */
static int adjust_grow(struct brt_run_pkt *p, uint32_t off, uint32_t len, uint64_t flags)
{
	uint32_t inner_mac_len = (uint32_t)(flags >> BPF_ADJ_ROOM_ENCAP_L2_SHIFT) & 0xff;
	int encap = (flags & ADJ_ENCAP_L3) != 0;
	int err;

	if (skb_is_gso(p))
		return -BRT_ENOTSUPP;
	if (encap) {
		if (skb_protocol(p) != htons(ETH_P_IP) && skb_protocol(p) != htons(ETH_P_IPV6))
			return -BRT_ENOTSUPP;
		if ((flags & ADJ_ENCAP_L3) == ADJ_ENCAP_L3)
			return -EINVAL;
		if ((flags & BPF_F_ADJ_ROOM_ENCAP_L4_GRE) && (flags & BPF_F_ADJ_ROOM_ENCAP_L4_UDP))
			return -EINVAL;
		if ((flags & BPF_F_ADJ_ROOM_ENCAP_L2_ETH) && inner_mac_len < ETH_HLEN)
			return -EINVAL;
		if (p->encapsulation)
			return -EALREADY;
		if (inner_mac_len > len)
			return -EINVAL;
	}
	err = net_hdr_push(p, off, len);
	if (err)
		return err;
	if (encap) {
		p->encapsulation = 1;
		if (skb_protocol(p) == htons(ETH_P_IP) && (flags & BPF_F_ADJ_ROOM_ENCAP_L3_IPV6))
			set_protocol(p, ETH_P_IPV6);
		else if (skb_protocol(p) == htons(ETH_P_IPV6) &&
			 (flags & BPF_F_ADJ_ROOM_ENCAP_L3_IPV4))
			set_protocol(p, ETH_P_IP);
	}
	return 0;
}

/* bpf_skb_net_shrink(): remove an outer header; DECAP_L3 flags set skb->protocol to the
 * inner one. */
static int adjust_shrink(struct brt_run_pkt *p, uint32_t off, uint32_t len, uint64_t flags)
{
	int err;

	if (flags & ~(uint64_t)(BPF_F_ADJ_ROOM_FIXED_GSO | ADJ_DECAP_L3 |
				BPF_F_ADJ_ROOM_NO_CSUM_RESET))
		return -EINVAL;
	if (skb_is_gso(p))
		return -BRT_ENOTSUPP;
	err = net_hdr_pop(p, off, len);
	if (err)
		return err;
	if (skb_protocol(p) == htons(ETH_P_IP) && (flags & BRT_F_ADJ_ROOM_DECAP_L3_IPV6))
		set_protocol(p, ETH_P_IPV6);
	else if (skb_protocol(p) == htons(ETH_P_IPV6) && (flags & BRT_F_ADJ_ROOM_DECAP_L3_IPV4))
		set_protocol(p, ETH_P_IP);
	return 0;
}

/* long bpf_skb_adjust_room(skb, s32 len_diff, u32 mode, u64 flags): grow or shrink the
 * room after the link-layer header (BPF_ADJ_ROOM_MAC) or after the fixed IP header
 * (BPF_ADJ_ROOM_NET), the kernel's checks in its order: -EINVAL for flags, -EFAULT for
 * more than 0xfff bytes, -ENOTSUPP for a packet that is not IPv4/IPv6, another mode, a
 * shrink into the IP header or a packet past SKB_MAX_ALLOC; then the grow/shrink rules. */
uint64_t brt_helper_skb_adjust_room(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	int32_t diff = (int32_t)r2;
	uint32_t abs_diff = diff < 0 ? 0u - (uint32_t)diff : (uint32_t)diff;
	uint32_t len_min, len_cur, off;
	int shrink = diff < 0, err;

	(void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	len_min = net_base_len(p);
	if (r4 & ~(uint64_t)(ADJ_MASK | BPF_F_ADJ_ROOM_NO_CSUM_RESET))
		return (uint64_t)-EINVAL;
	if (abs_diff > 0xfff)
		return (uint64_t)-EFAULT;
	if (len_min == ~0u)
		return (uint64_t)-BRT_ENOTSUPP;
	off = p->mac ? (uint32_t)(p->network - p->mac) : 0;
	switch ((uint32_t)r3) {
	case BPF_ADJ_ROOM_NET:
		off += len_min;
		break;
	case BPF_ADJ_ROOM_MAC:
		break;
	default:
		return (uint64_t)-BRT_ENOTSUPP;
	}
	if (r4 & ADJ_DECAP_L3) {
		if (!shrink)
			return (uint64_t)-EINVAL;
		switch (r4 & ADJ_DECAP_L3) {
		case BRT_F_ADJ_ROOM_DECAP_L3_IPV4:
			len_min = 20;
			break;
		case BRT_F_ADJ_ROOM_DECAP_L3_IPV6:
			len_min = 40;
			break;
		default:
			return (uint64_t)-EINVAL;
		}
	}
	len_cur = skb_len(p) - (uint32_t)(p->network - p->data);
	if ((shrink && (abs_diff >= len_cur || len_cur - abs_diff < len_min)) ||
	    (!shrink && skb_len(p) + abs_diff > SKB_MAX_ALLOC && !skb_is_gso(p)))
		return (uint64_t)-BRT_ENOTSUPP;
	err = shrink ? adjust_shrink(p, off, abs_diff, r4) : adjust_grow(p, off, abs_diff, r4);
	brt_pkt_moved(ctx, p);
	return (uint64_t)(int64_t)err;
}

/* long bpf_skb_change_proto(skb, __be16 proto, u64 flags): IPv4 <-> IPv6 groundwork: 20
 * zeroed bytes after the link-layer header (4 -> 6) or 20 bytes removed there (6 -> 4),
 * skb->protocol set, the flow hash cleared; the program writes the new header.  -EINVAL
 * for flags, -ENOTSUPP for any other pair, -ENOMEM for a packet too short to pop. */
uint64_t brt_helper_skb_change_proto(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);
	uint16_t to = (uint16_t)r2;
	uint32_t off;
	int err = -BRT_ENOTSUPP;

	(void)r4, (void)r5;
	if (!p)
		return (uint64_t)-EINVAL;
	if (r3)
		return (uint64_t)-EINVAL;
	off = p->mac ? (uint32_t)(p->network - p->mac) : 0;
	if (skb_protocol(p) == htons(ETH_P_IP) && to == htons(ETH_P_IPV6)) {
		err = net_hdr_push(p, off, 20);
		if (!err)
			set_protocol(p, ETH_P_IPV6);
	} else if (skb_protocol(p) == htons(ETH_P_IPV6) && to == htons(ETH_P_IP)) {
		err = net_hdr_pop(p, off, 20);
		if (!err)
			set_protocol(p, ETH_P_IP);
	}
	if (!err) { /* skb_clear_hash() */
		((struct __sk_buff *)p->ctx)->hash = 0;
		p->hash_valid = 0;
	}
	brt_pkt_moved(ctx, p);
	return (uint64_t)(int64_t)err;
}
