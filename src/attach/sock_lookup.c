/* sock_lookup.c - the socket helpers of packet and socket programs: bpf_sk_lookup_tcp,
 * bpf_sk_lookup_udp, bpf_skc_lookup_tcp, bpf_sk_release, bpf_sk_fullsock, bpf_tcp_sock,
 * bpf_get_listener_sock.
 *
 * The kernel looks the tuple up in its socket tables (the test run's network namespace,
 * or the one netns_id names) and hands the program a referenced struct sock.  Here the
 * kernel's lookup runs through sock_diag (sock_table.c), and the program gets a copy of
 * what sock_diag tells of the socket found (struct brt_sock in
 * maps/maps.h, as a sockmap lookup does), which the casts and socket helpers below take
 * as that socket.  Releasing it drops nothing: there is no reference to drop, but the
 * verifier still makes the program release what a lookup returned.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/btf.h>

#include "attach/attach.h"
#include "btf/btf.h"
#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#define TCP_LISTEN 10
#define TCP_TIME_WAIT 6
#define TCP_NEW_SYN_RECV 12
#define TUPLE_V4_SIZE 12 /* sizeof(((struct bpf_sock_tuple *)0)->ipv4) */
#define TUPLE_V6_SIZE 36 /* sizeof(((struct bpf_sock_tuple *)0)->ipv6) */
#define LOOPBACK_IFINDEX 1

/* The sockets lookups found, per thread, reused round-robin (as maps/sockmap.c's): what
 * a program reads stays put while the table is refreshed.  A program holding more than
 * FOUND_HELD sockets at once would see the oldest overwritten; the verifier's reference
 * tracking keeps real programs far below. */
#define FOUND_HELD 16
static _Thread_local struct brt_sock found[FOUND_HELD];
static _Thread_local unsigned found_next;

/* The device a lookup is made for (the kernel's dif: skb->dev or the XDP rxq's device):
 * a test run's is the namespace's loopback device; a live packet's the one its context
 * names; a program without a packet (sock_addr) has none. */
static int lookup_dif(const struct brt_run_pkt *p)
{
	if (!p || !p->ctx)
		return 0;
	if (p->test_run)
		return LOOPBACK_IFINDEX;
	if (p->prog_type == BPF_PROG_TYPE_XDP)
		return (int)((const struct xdp_md *)p->ctx)->ingress_ifindex;
	return (int)((const struct __sk_buff *)p->ctx)->ifindex;
}

/* __bpf_skc_lookup() / __bpf_sk_lookup(): the tuple's size gives the family (12: IPv4,
 * 36: IPv6, else NULL), flags must be 0, netns_id negative as an s32 is the caller's
 * namespace, 0..S32_MAX a namespace id (get_net_ns_by_id()), anything else NULL.  XDP's
 * helpers take netns_id as a u32. */
static uint64_t sk_lookup(uint8_t proto, int full, uint64_t r2, uint64_t r3, uint64_t r4,
			  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const uint8_t *tuple = (const uint8_t *)(uintptr_t)r2;
	struct brt_run_pkt *p = ctx->pkt;
	struct brt_sock_tuple t;
	struct brt_sock *s;
	uint64_t netns = r4, gen_none = 0;

	if (p && p->prog_type == BPF_PROG_TYPE_XDP)
		netns = (uint32_t)netns;
	if ((r3 != TUPLE_V4_SIZE && r3 != TUPLE_V6_SIZE) || !tuple ||
	    !bpfrt_run_access_ok(ctx, tuple, (size_t)r3, 0))
		return 0;
	if (r5 || !((int32_t)netns < 0 || netns <= INT32_MAX))
		return 0;
	memset(&t, 0, sizeof(t));
	t.proto = proto;
	if (r3 == TUPLE_V4_SIZE) {
		t.family = AF_INET;
		memcpy(&t.saddr[0], tuple, 4);
		memcpy(&t.daddr[0], tuple + 4, 4);
		memcpy(&t.sport, tuple + 8, 2);
		memcpy(&t.dport, tuple + 10, 2);
	} else {
		t.family = AF_INET6;
		memcpy(t.saddr, tuple, 16);
		memcpy(t.daddr, tuple + 16, 16);
		memcpy(&t.sport, tuple + 32, 2);
		memcpy(&t.dport, tuple + 34, 2);
	}
	t.dport = ntohs(t.dport);
	s = &found[found_next++ % FOUND_HELD];
	if (!brt_sock_table_lookup(&t, (int32_t)netns < 0 ? -1 : (int32_t)netns, lookup_dif(p),
				   full, p && p->test_run,
				   p ? &p->sock_gen : &gen_none, s))
		return 0;
	if (bpfrt_run_grant(ctx, s, sizeof(*s), 0))
		return 0;
	return (uint64_t)(uintptr_t)s;
}

/* struct bpf_sock *bpf_sk_lookup_tcp(ctx, tuple, len, netns, flags) */
uint64_t brt_helper_sk_lookup_tcp(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1;
	return sk_lookup(IPPROTO_TCP, 1, r2, r3, r4, r5, ctx);
}

/* struct bpf_sock *bpf_sk_lookup_udp(ctx, tuple, len, netns, flags) */
uint64_t brt_helper_sk_lookup_udp(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1;
	return sk_lookup(IPPROTO_UDP, 1, r2, r3, r4, r5, ctx);
}

/* struct bpf_sock_common *bpf_skc_lookup_tcp(ctx, tuple, len, netns, flags): a request
 * or timewait socket as itself */
uint64_t brt_helper_skc_lookup_tcp(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1;
	return sk_lookup(IPPROTO_TCP, 0, r2, r3, r4, r5, ctx);
}

/* long bpf_sk_release(sk): 0; there is no reference count to drop. */
uint64_t brt_helper_sk_release(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* The socket a cast was given: a snapshot from a sockmap or a lookup (the checked engine:
 * one this run was handed), else NULL. */
static const struct brt_sock *held_sock(uint64_t r1, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = (const struct brt_sock *)(uintptr_t)r1;

	return sk && bpfrt_run_access_ok(ctx, sk, sizeof(*sk), 0) ? sk : NULL;
}

/* struct bpf_sock *bpf_sk_fullsock(sk): sk itself, NULL for a timewait or request socket
 * (sk_fullsock()) */
uint64_t brt_helper_sk_fullsock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = held_sock(r1, ctx);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!sk || sk->sk.state == TCP_TIME_WAIT || sk->sk.state == TCP_NEW_SYN_RECV)
		return 0;
	return (uint64_t)(uintptr_t)sk;
}

/* struct bpf_sock *bpf_get_listener_sock(sk): sk when it is a TCP listener (listening,
 * freed by RCU), else NULL. */
uint64_t brt_helper_get_listener_sock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = held_sock(r1, ctx);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!sk || sk->sk.state != TCP_LISTEN || sk->refcounted)
		return 0;
	return (uint64_t)(uintptr_t)sk;
}

/* struct bpf_tcp_sock *bpf_tcp_sock(sk): the kernel's tcp_sock counters (cwnd, rtt,
 * sequence numbers) are not visible from user space for a socket bpfrt only has a
 * snapshot of, so NULL (known difference for a TCP socket from a sockmap, docs/STATUS.md
 * #15). */
uint64_t brt_helper_tcp_sock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* ---- casts to the kernel's socket structs: bpf_skc_to_* ---------------------------------
 * The kernel's casts return the socket itself, which the program then reads as a struct
 * tcp_sock, unix_sock, ... of the kernel's BTF (the verifier turns those loads into
 * fault-safe ones).  Those structs do not exist here: a cast of a socket the program
 * holds (a sockmap's snapshot) answers with a stand-in, zeroed memory as large as any of
 * them, holding what the snapshot knows at the kernel's offsets (vmlinux BTF): struct
 * sock_common's addresses, ports, family, state, bound device and cookie, and struct
 * sock's type, protocol, mark and priority.  Every other field reads as 0 (a TCP
 * socket's counters, a unix socket's path; known difference, docs/STATUS.md #15).
 * Programs that load through kernel pointers run on the checked engine, which is
 * granted the stand-in read-only.  A stand-in passed back to a helper (another cast,
 * bpf_sk_cgroup_id, the syncookie helpers) stands for its socket again. */
#define STAND_IN_SIZE 8192 /* the largest target, tcp6_sock, is 2,432 bytes on 6.18 */
#define STAND_INS 8

/* Allocated on a thread's first cast, freed when it exits: as static thread-local
 * storage these 64 KB were zeroed at the start of every process linking the library and
 * of each of its threads (trace/task.c's stand-in says more). */
static _Thread_local uint64_t (*stand_in)[STAND_IN_SIZE / 8];
static pthread_key_t stand_in_key;
static pthread_once_t stand_in_once = PTHREAD_ONCE_INIT;
static _Thread_local struct brt_sock stand_in_sock[STAND_INS];
static _Thread_local const void *stand_in_src[STAND_INS];
static _Thread_local unsigned stand_in_next;

/* the fields a stand-in fills, by their names in the kernel's structs */
enum { F_DADDR, F_RCV_SADDR, F_DPORT, F_NUM, F_FAMILY, F_STATE, F_BOUND_DEV_IF, F_V6_DADDR,
       F_V6_RCV_SADDR, F_COOKIE, F_TYPE, F_PROTOCOL, F_MARK, F_PRIORITY, N_FIELDS };
static const struct {
	const char *strct, *name;
} field_names[N_FIELDS] = {
	[F_DADDR] = { "sock_common", "skc_daddr" },
	[F_RCV_SADDR] = { "sock_common", "skc_rcv_saddr" },
	[F_DPORT] = { "sock_common", "skc_dport" },
	[F_NUM] = { "sock_common", "skc_num" },
	[F_FAMILY] = { "sock_common", "skc_family" },
	[F_STATE] = { "sock_common", "skc_state" },
	[F_BOUND_DEV_IF] = { "sock_common", "skc_bound_dev_if" },
	[F_V6_DADDR] = { "sock_common", "skc_v6_daddr" },
	[F_V6_RCV_SADDR] = { "sock_common", "skc_v6_rcv_saddr" },
	[F_COOKIE] = { "sock_common", "skc_cookie" },
	[F_TYPE] = { "sock", "sk_type" },
	[F_PROTOCOL] = { "sock", "sk_protocol" },
	[F_MARK] = { "sock", "sk_mark" },
	[F_PRIORITY] = { "sock", "sk_priority" },
};
/* byte offset in struct sock (struct sock_common is its first member, at 0) and size;
 * size 0: not found (not filled) */
static struct {
	uint32_t off, size;
} fields[N_FIELDS];
static pthread_once_t fields_once = PTHREAD_ONCE_INIT;

static void fields_init(void)
{
	const struct brt_btf *btf = brt_btf_vmlinux();

	for (int f = 0; btf && f < N_FIELDS; f++) {
		int id = brt_btf_find(btf, field_names[f].strct, BTF_KIND_STRUCT);

		/* a bitfield or a member past STAND_IN_SIZE is not used */
		if (id <= 0 || brt_btf_member_at(btf, (uint32_t)id, field_names[f].name,
						 &fields[f].off, &fields[f].size) ||
		    fields[f].off + fields[f].size > STAND_IN_SIZE)
			fields[f].size = 0;
	}
}

static void put_field(uint8_t *kern, int f, const void *v, uint32_t len)
{
	if (fields[f].size && len <= fields[f].size)
		memcpy(kern + fields[f].off, v, len);
}

static void stand_in_key_make(void)
{
	if (pthread_key_create(&stand_in_key, free))
		stand_in_key = (pthread_key_t)-1; /* the stand-ins of exited threads leak */
}

/* The calling thread's stand-ins, or NULL when they cannot be allocated (a cast then
 * answers NULL, as for a socket it cannot give). */
static uint64_t (*stand_ins(void))[STAND_IN_SIZE / 8]
{
	if (!stand_in) {
		pthread_once(&stand_in_once, stand_in_key_make);
		stand_in = calloc(STAND_INS, STAND_IN_SIZE);
		if (stand_in && stand_in_key != (pthread_key_t)-1)
			pthread_setspecific(stand_in_key, stand_in);
	}
	return stand_in;
}

const struct brt_sock *brt_sock_of_ptr(uint64_t r, struct bpfrt_run_ctx *ctx)
{
	for (int i = 0; stand_in && i < STAND_INS; i++)
		if (r == (uint64_t)(uintptr_t)stand_in[i] && stand_in_src[i])
			return &stand_in_sock[i];
	return held_sock(r, ctx);
}

/* A stand-in of sk (one per socket pointer held: a second cast of the same one gives the
 * same address, as the kernel's casts do), granted read-only to a checked run. */
static uint64_t stand_in_of(const struct brt_sock *sk, struct bpfrt_run_ctx *ctx)
{
	unsigned i;
	uint8_t *kern;
	uint16_t u16;

	if (!stand_ins())
		return 0;
	for (i = 0; i < STAND_INS; i++)
		if (stand_in_src[i] == sk || &stand_in_sock[i] == sk)
			break;
	if (i == STAND_INS)
		i = stand_in_next++ % STAND_INS;
	if (&stand_in_sock[i] != sk) {
		stand_in_sock[i] = *sk;
		stand_in_src[i] = sk;
	}
	pthread_once(&fields_once, fields_init);
	kern = (uint8_t *)stand_in[i];
	memset(kern, 0, STAND_IN_SIZE);
	sk = &stand_in_sock[i];
	put_field(kern, F_DADDR, &sk->sk.dst_ip4, 4);
	put_field(kern, F_RCV_SADDR, &sk->sk.src_ip4, 4);
	u16 = (uint16_t)sk->sk.dst_port; /* network order, as skc_dport */
	put_field(kern, F_DPORT, &u16, 2);
	u16 = (uint16_t)sk->sk.src_port; /* host order, as skc_num */
	put_field(kern, F_NUM, &u16, 2);
	u16 = (uint16_t)sk->sk.family;
	put_field(kern, F_FAMILY, &u16, 2);
	kern[fields[F_STATE].off] = fields[F_STATE].size ? (uint8_t)sk->sk.state : 0;
	put_field(kern, F_BOUND_DEV_IF, &sk->sk.bound_dev_if, 4);
	put_field(kern, F_V6_DADDR, sk->sk.dst_ip6, 16);
	put_field(kern, F_V6_RCV_SADDR, sk->sk.src_ip6, 16);
	put_field(kern, F_COOKIE, &sk->cookie, 8);
	u16 = (uint16_t)sk->sk.type;
	put_field(kern, F_TYPE, &u16, 2);
	u16 = (uint16_t)sk->sk.protocol;
	put_field(kern, F_PROTOCOL, &u16, 2);
	put_field(kern, F_MARK, &sk->sk.mark, 4);
	put_field(kern, F_PRIORITY, &sk->sk.priority, 4);
	if (bpfrt_run_grant(ctx, kern, STAND_IN_SIZE, 0))
		return 0;
	return (uint64_t)(uintptr_t)kern;
}

/* bpf_skc_to_<struct>(sk) for helper id: the kernel's tests on the socket, then sk as
 * that struct. */
static uint64_t skc_to(int id, uint64_t r1, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = brt_sock_of_ptr(r1, ctx);
	int full, ok = 0;

	if (!sk)
		return 0;
	full = sk->sk.state != TCP_TIME_WAIT && sk->sk.state != TCP_NEW_SYN_RECV;
	switch (id) {
	case BPF_FUNC_skc_to_tcp6_sock:
		ok = full && sk->sk.protocol == IPPROTO_TCP && sk->sk.family == AF_INET6;
		break;
	case BPF_FUNC_skc_to_tcp_sock:
		ok = full && sk->sk.protocol == IPPROTO_TCP;
		break;
	case BPF_FUNC_skc_to_tcp_timewait_sock:
		ok = sk->sk.protocol == IPPROTO_TCP && sk->sk.state == TCP_TIME_WAIT;
		break;
	case BPF_FUNC_skc_to_tcp_request_sock:
		ok = sk->sk.protocol == IPPROTO_TCP && sk->sk.state == TCP_NEW_SYN_RECV;
		break;
	case BPF_FUNC_skc_to_udp6_sock:
		ok = full && sk->sk.protocol == IPPROTO_UDP && sk->sk.type == SOCK_DGRAM &&
		     sk->sk.family == AF_INET6;
		break;
	case BPF_FUNC_skc_to_unix_sock:
		ok = full && sk->sk.family == AF_UNIX;
		break;
	default: /* skc_to_mptcp_sock: a sockmap holds no MPTCP subflow */
		break;
	}
	return ok ? stand_in_of(sk, ctx) : 0;
}

#define SKC_TO(name)                                                                     \
	uint64_t brt_helper_skc_to_##name(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, \
					  uint64_t r5, struct bpfrt_run_ctx *ctx)          \
	{                                                                                \
		(void)r2, (void)r3, (void)r4, (void)r5;                                  \
		return skc_to(BPF_FUNC_skc_to_##name, r1, ctx);                          \
	}
BRT_SKC_TO_STRUCTS(SKC_TO)
#undef SKC_TO

/* ---- cgroup ids ----------------------------------------------------------------------- */
/* __bpf_sk_ancestor_cgroup_id(): the socket's cgroup at level (the root is 0), 0 when
 * there is none, the level is negative or deeper than the socket's cgroup; level
 * OWN_CGROUP: the socket's own cgroup (__bpf_sk_cgroup_id()). */
#define OWN_CGROUP INT64_MAX
static uint64_t sk_cgroup_at(const struct brt_sock *sk, int64_t level)
{
	if (!sk || !sk->cgroup_levels)
		return 0;
	if (level == OWN_CGROUP)
		return sk->cgroup[sk->cgroup_levels - 1];
	if (level < 0 || level >= sk->cgroup_levels)
		return 0;
	return sk->cgroup[level];
}

uint64_t brt_helper_sk_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	return sk_cgroup_at(brt_sock_of_ptr(r1, ctx), OWN_CGROUP);
}

uint64_t brt_helper_sk_ancestor_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5;
	return sk_cgroup_at(brt_sock_of_ptr(r1, ctx), (int32_t)r2);
}

/* The skb's socket: a test run's is the dummy socket the calling task creates, so its
 * cgroup is the caller's; a packet bpfrt received has none (0). */
static uint64_t skb_cgroup_at(struct bpfrt_run_ctx *ctx, int64_t level)
{
	uint64_t ids[BRT_CGROUP_MAX_LEVELS];
	int n;

	if (!ctx->pkt || !ctx->pkt->has_sk)
		return 0;
	n = brt_cgroup_ids((int32_t)gettid(), ids, BRT_CGROUP_MAX_LEVELS);
	if (n <= 0)
		return 0;
	if (level == OWN_CGROUP)
		return ids[n - 1];
	return level < 0 || level >= n ? 0 : ids[level];
}

uint64_t brt_helper_skb_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return skb_cgroup_at(ctx, OWN_CGROUP);
}

uint64_t brt_helper_skb_ancestor_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3,
					   uint64_t r4, uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r3, (void)r4, (void)r5;
	return skb_cgroup_at(ctx, (int32_t)r2);
}

/* ---- socket storage ------------------------------------------------------------------- */
/* void *bpf_sk_storage_get(map, sk, value, flags): NULL for no socket, one that is not a
 * full socket or flags above F_CREATE; the socket's value (kept under its cookie, as
 * bpf() keys it by the socket's fd), created from value (NULL: zeros) with F_CREATE. */
uint64_t brt_helper_sk_storage_get(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	const struct brt_sock *sk = brt_sock_of_ptr(r2, ctx);
	void *v;

	(void)r5;
	if (!map || map->type != BPF_MAP_TYPE_SK_STORAGE || !sk || !sk->cookie ||
	    sk->sk.state == TCP_TIME_WAIT || sk->sk.state == TCP_NEW_SYN_RECV ||
	    r4 > BPF_SK_STORAGE_GET_F_CREATE)
		return 0;
	if (r3 && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r3, map->value_size, 0))
		return 0;
	v = brt_local_storage_get(map, sk->cookie, (const void *)(uintptr_t)r3,
				  r4 == BPF_SK_STORAGE_GET_F_CREATE);
	if (v && bpfrt_run_grant(ctx, v, map->value_size, 1))
		return 0;
	return (uint64_t)(uintptr_t)v;
}

/* long bpf_sk_storage_delete(map, sk): no (full) socket -EINVAL, no value -ENOENT */
uint64_t brt_helper_sk_storage_delete(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	const struct brt_sock *sk = brt_sock_of_ptr(r2, ctx);

	(void)r3, (void)r4, (void)r5;
	if (!sk || sk->sk.state == TCP_TIME_WAIT || sk->sk.state == TCP_NEW_SYN_RECV)
		return (uint64_t)(int64_t)-EINVAL;
	if (!map || map->type != BPF_MAP_TYPE_SK_STORAGE || !sk->cookie)
		return (uint64_t)(int64_t)-ENOENT;
	return (uint64_t)(int64_t)brt_local_storage_delete(map, sk->cookie);
}
