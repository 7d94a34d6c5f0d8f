/* sockmap.c - BPF_MAP_TYPE_SOCKMAP and BPF_MAP_TYPE_SOCKHASH: sockets user space stores by
 * fd (an array of slots, or a hash with keys of any size), for sk_skb and sk_msg
 * programs to redirect to and sock_ops programs to fill.
 *
 * The kernel keeps the struct sock; a process can keep only what names it: an element
 * holds the socket's cookie (SO_COOKIE: the kernel's own, so a lookup from bpf() answers
 * what the kernel's map would), 0 when empty, and a snapshot of the socket taken from its
 * fd at the update (struct brt_sock: the struct bpf_sock a program reads, reuseport,
 * v6only), which a program's lookup hands it as its socket.  An update checks the fd as
 * the kernel's sock_map_update_elem_sys() does (a socket, of a protocol the kernel can
 * put in a map: TCP, UDP, unix, vsock; TCP listening or established, UDP bound, stream
 * unix and vsock connected), then the flags and the slot.  Not kept: the socket itself,
 * so closing it does not empty its slot (the kernel drops it), the snapshot does not
 * follow the socket's later state, and a redirect has no target (SK_DROP); sk_skb and
 * sk_msg programs do not test-run in the kernel either (docs/STATUS.md #15).
 *
 * The sockhash walks (GET_NEXT_KEY) as the kernel's: jhash(key, key_size, 0) picks one of
 * roundup_pow_of_two(max_entries) buckets, buckets in order, newest entry first within one
 * (a replaced key is new again).  Here entries live in max_entries fixed cells with an
 * insertion sequence number, which gives the same order; a process-shared lock serialises
 * writers, as for devmap_hash.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/tcp.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define SOCK_CREATE_FLAG_MASK (BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY)
#define MAX_BPF_STACK 512
#define TCP_STATE_ESTABLISHED 1
#define TCP_STATE_LISTEN 10

/* ---- the socket behind an fd, as sock_map_update_elem_sys() checks it ------------------- */
static int connected(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	return !getpeername(fd, (struct sockaddr *)&ss, &len);
}

/* an inet socket with a local port */
static int bound(int fd)
{
	struct sockaddr_in6 ss; /* the port is at the same offset in sockaddr_in */
	socklen_t len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	return !getsockname(fd, (struct sockaddr *)&ss, &len) && ss.sin6_port;
}

#define LOOPBACK4_IPV6 0x7f000006 /* inet_rcv_saddr of an IPv6 socket on a v6 address */
#define TCP_STATE_CLOSE 7

static int sockopt_int(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = 0;

	return getsockopt(fd, level, name, &v, &len) ? 0 : v;
}

/* The IPv4 address the kernel keeps for an IPv6 socket's address (__inet6_bind()): the
 * v4 part of a mapped address, 0 for ::, else LOOPBACK4_IPV6. */
static uint32_t v4_of_v6(const struct in6_addr *a)
{
	static const struct in6_addr any = IN6ADDR_ANY_INIT;

	if (IN6_IS_ADDR_V4MAPPED(a))
		return a->s6_addr32[3];
	return memcmp(a, &any, sizeof(any)) ? htonl(LOOPBACK4_IPV6) : 0;
}

static int v6_mapped_words(const uint32_t *a)
{
	return !a[0] && !a[1] && a[2] == htonl(0xffff);
}

/* One end's address into a struct bpf_sock (ip4, ip6[4], the port in *port).  An IPv4
 * socket's IPv6 words hold the v4-mapped address when the kernel set the end with
 * sk_rcv_saddr_set()/sk_daddr_set() (mapped): a connected or accepted TCP socket; bind()
 * and UDP's connect set only the IPv4 address. */
static void snap_addr(int family, const struct sockaddr_storage *ss, uint32_t *ip4,
		      uint32_t *ip6, uint16_t *port, int mapped)
{
	if (family == AF_INET && ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		*ip4 = in->sin_addr.s_addr;
		if (mapped) {
			ip6[2] = htonl(0xffff);
			ip6[3] = *ip4;
		}
		*port = in->sin_port;
	} else if (family == AF_INET6 && ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		memcpy(ip6, &in6->sin6_addr, 16);
		*ip4 = v4_of_v6(&in6->sin6_addr);
		*port = in6->sin6_port;
	}
}

/* What a program sees of the socket behind fd (struct brt_sock, maps.h), as of now. */
static void snap_of_fd(int fd, int domain, int type, int proto, int tcp_state,
		       struct brt_sock *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint16_t port = 0;
	int peer, mapped, levels;

	memset(s, 0, sizeof(*s));
	s->sk.bound_dev_if = (uint32_t)sockopt_int(fd, SOL_SOCKET, SO_BINDTOIFINDEX);
	s->sk.family = (uint32_t)domain;
	s->sk.type = (uint32_t)type;
	s->sk.protocol = (uint32_t)proto;
	s->sk.mark = (uint32_t)sockopt_int(fd, SOL_SOCKET, SO_MARK);
	s->sk.priority = (uint32_t)sockopt_int(fd, SOL_SOCKET, SO_PRIORITY);
	memset(&ss, 0, sizeof(ss));
	peer = !getpeername(fd, (struct sockaddr *)&ss, &len);
	mapped = peer && proto == IPPROTO_TCP;
	if (peer) {
		snap_addr(domain, &ss, &s->sk.dst_ip4, s->sk.dst_ip6, &port, mapped);
		s->sk.dst_port = port; /* network byte order */
	}
	len = sizeof(ss);
	memset(&ss, 0, sizeof(ss));
	if (!getsockname(fd, (struct sockaddr *)&ss, &len)) {
		snap_addr(domain, &ss, &s->sk.src_ip4, s->sk.src_ip6, &port, mapped);
		s->sk.src_port = ntohs(port); /* host byte order */
	}
	/* an IPv6 TCP connection made from a SYN (accepted) has inet_daddr LOOPBACK4_IPV6
	 * (tcp_v6_syn_recv_sock()) where tcp_v6_connect() leaves 0, as UDP's connect() does */
	if (peer && domain == AF_INET6 && ss.ss_family == AF_INET6 &&
	    !v6_mapped_words(s->sk.dst_ip6)) {
		int accepted = proto == IPPROTO_TCP &&
			   brt_tcp_listener_at(-1, AF_INET6,
					       ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr32,
					       s->sk.src_port, (int)s->sk.bound_dev_if) == 1;
		s->sk.dst_ip4 = accepted ? htonl(LOOPBACK4_IPV6) : 0;
	}
	/* sk_state: TCP's own; UDP and unix use TCP_ESTABLISHED once connected, else
	 * TCP_CLOSE (a listening unix socket: TCP_LISTEN) */
	if (tcp_state)
		s->sk.state = (uint32_t)tcp_state;
	else if (domain == AF_UNIX && sockopt_int(fd, SOL_SOCKET, SO_ACCEPTCONN))
		s->sk.state = TCP_STATE_LISTEN;
	else
		s->sk.state = peer ? TCP_STATE_ESTABLISHED : TCP_STATE_CLOSE;
	/* sk_rx_queue_get(): -1 until the kernel records a receive queue.  An accepted TCP
	 * socket may have its SYN's: on loopback the kernel answers 0 in about 1 run in 5
	 * and -1 otherwise (tests/maps/test_sockmap_view_oracle.c), so -1 */
	s->sk.rx_queue_mapping = -1;
	s->reuseport = sockopt_int(fd, SOL_SOCKET, SO_REUSEPORT) != 0;
	s->ipv6only = domain == AF_INET6 && sockopt_int(fd, IPPROTO_IPV6, IPV6_V6ONLY);
	levels = brt_cgroup_ids((int32_t)gettid(), s->cgroup, BRT_SOCK_CGROUP_LEVELS);
	s->cgroup_levels = (uint8_t)(levels > 0 ? levels : 0);
	/* SOCK_RCU_FREE: TCP listeners (inet_hash) and hashed UDP sockets (udp_lib_get_port) */
	s->refcounted = !((domain == AF_INET || domain == AF_INET6) &&
			  ((proto == IPPROTO_TCP && tcp_state == TCP_STATE_LISTEN) ||
			   proto == IPPROTO_UDP));
}

/* What every map of sockets asks first of an fd: a socket (-EBADF, -ENOTSOCK), its
 * domain, type and protocol (opt_err when they cannot be read: the maps' errnos differ). */
static int sock_kind(int fd, int *domain, int *type, int *proto, int opt_err)
{
	socklen_t len = sizeof(int);
	struct stat st;

	if (fstat(fd, &st))
		return -EBADF;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, domain, &len) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, type, &len) ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, proto, &len))
		return opt_err;
	return 0;
}

/* The element an accepted socket becomes: its cookie (nonzero) and snapshot; -1 when it
 * has no cookie. */
static int sock_snap(int fd, int domain, int type, int proto, int tcp_state, uint64_t *cookie,
		     struct brt_sock *snap)
{
	socklen_t len = sizeof(*cookie);

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) || !*cookie)
		return -1;
	snap_of_fd(fd, domain, type, proto, tcp_state, snap);
	snap->cookie = *cookie;
	return 0;
}

/* 0 and the socket's cookie and snapshot, or the kernel's errno for this fd */
static int sock_of_fd(uint64_t ufd, uint64_t *cookie, struct brt_sock *snap)
{
	int fd = (int)ufd, domain, type, proto, tcp_state = 0, err;

	if (ufd > INT32_MAX)
		return -EINVAL;
	err = sock_kind(fd, &domain, &type, &proto, -EOPNOTSUPP);
	if (err)
		return err;
	/* sock_map_sk_is_suitable(): the protocols with a psock_update_sk_prot */
	if (domain == AF_INET || domain == AF_INET6) {
		if (type == SOCK_STREAM && proto == IPPROTO_TCP) {
			struct tcp_info ti;
			socklen_t tl = sizeof(ti);

			/* sock_map_sk_state_allowed(): established or listening */
			if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) ||
			    (ti.tcpi_state != TCP_STATE_ESTABLISHED &&
			     ti.tcpi_state != TCP_STATE_LISTEN))
				return -EOPNOTSUPP;
			tcp_state = ti.tcpi_state;
		} else if (!(type == SOCK_DGRAM && proto == IPPROTO_UDP)) {
			return -EOPNOTSUPP;
		} else if (!bound(fd)) { /* the kernel takes only a hashed (bound) UDP socket */
			return -EOPNOTSUPP;
		}
	} else if (domain == AF_UNIX) {
		if (type == SOCK_STREAM && !connected(fd))
			return -EOPNOTSUPP;
	} else if (domain == AF_VSOCK) {
		if ((type == SOCK_STREAM || type == SOCK_SEQPACKET) && !connected(fd))
			return -EOPNOTSUPP;
	} else {
		return -EOPNOTSUPP;
	}
	return sock_snap(fd, domain, type, proto, tcp_state, cookie, snap) ? -EOPNOTSUPP : 0;
}

/* The sockets programs hold: each lookup copies its element's snapshot into the next of
 * these (per thread, reused round-robin), so what the program reads stays put while
 * another process updates the map.  A program holding more than BRT_SOCK_HELD sockets
 * at once would see the oldest overwritten; the verifier's reference tracking keeps real
 * programs far below. */
#define BRT_SOCK_HELD 16
static _Thread_local struct brt_sock held[BRT_SOCK_HELD];
static _Thread_local unsigned held_next;

static struct brt_sock *sock_hold(const struct brt_sock *snap)
{
	struct brt_sock *s = &held[held_next++ % BRT_SOCK_HELD];

	*s = *snap;
	return s;
}

/* The fd in an update's value: a u64 for value_size 8, else a u32. */
static uint64_t value_fd(const struct brt_map *map, const void *value)
{
	uint64_t u64;
	uint32_t u32;

	if (map->value_size == 8) {
		memcpy(&u64, value, 8);
		return u64;
	}
	memcpy(&u32, value, 4);
	return u32;
}

/* sock_map_alloc() and sock_hash_alloc() */
static int sock_alloc_check(const union bpf_attr *attr)
{
	if (!attr->max_entries || !attr->key_size ||
	    (attr->map_type == BPF_MAP_TYPE_SOCKMAP && attr->key_size != 4) ||
	    (attr->value_size != 4 && attr->value_size != 8) ||
	    (attr->map_flags & ~SOCK_CREATE_FLAG_MASK))
		return -EINVAL;
	if (attr->key_size > MAX_BPF_STACK)
		return -E2BIG;
	return 0;
}

/* ---- sockmap ---------------------------------------------------------------------------- */
/* The region: max_entries cookies, then max_entries snapshots. */
static int smap_data_size(const struct brt_map *map, uint64_t *size)
{
	if (map->max_entries > (1u << 27))
		return -ENOMEM;
	*size = (uint64_t)map->max_entries * (8 + sizeof(struct brt_sock));
	return 0;
}

static _Atomic uint64_t *smap_slot(struct brt_map *map, const void *key)
{
	uint32_t i;

	memcpy(&i, key, 4);
	return i < map->max_entries ? (_Atomic uint64_t *)map->data + i : NULL;
}

static struct brt_sock *smap_snap(struct brt_map *map, _Atomic uint64_t *slot)
{
	size_t i = (size_t)(slot - (_Atomic uint64_t *)map->data);

	return (struct brt_sock *)((char *)map->data + (size_t)map->max_entries * 8) + i;
}

/* A program's lookup: the slot's socket (sock_hold()), NULL when empty.  A writer may
 * be replacing the snapshot: one whose cookie is not the slot's is read again. */
static void *smap_lookup(struct brt_map *map, const void *key)
{
	_Atomic uint64_t *slot = smap_slot(map, key);

	for (int tries = 0; slot && tries < 3; tries++) {
		uint64_t cookie = atomic_load_explicit(slot, memory_order_acquire);
		struct brt_sock snap;

		if (!cookie)
			return NULL;
		memcpy(&snap, smap_snap(map, slot), sizeof(snap));
		atomic_thread_fence(memory_order_acquire);
		if (snap.cookie == cookie && atomic_load_explicit(slot, memory_order_relaxed) == cookie)
			return sock_hold(&snap);
	}
	return NULL;
}

static int smap_copy_value(struct brt_map *map, const void *key, void *value)
{
	_Atomic uint64_t *slot;
	uint64_t cookie;

	if (map->value_size != 8)
		return -ENOSPC;
	slot = smap_slot(map, key);
	cookie = slot ? atomic_load_explicit(slot, memory_order_acquire) : 0;
	if (!cookie)
		return -ENOENT;
	memcpy(value, &cookie, 8);
	return 0;
}

static int smap_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	_Atomic uint64_t *slot;
	struct brt_sock snap;
	uint64_t cookie, old;
	int err = sock_of_fd(value_fd(map, value), &cookie, &snap);

	if (err)
		return err;
	/* sock_map_update_common() */
	if (flags > BPF_EXIST)
		return -EINVAL;
	slot = smap_slot(map, key);
	if (!slot)
		return -E2BIG;
	old = atomic_load_explicit(slot, memory_order_acquire);
	do {
		if (old && flags == BPF_NOEXIST)
			return -EEXIST;
		if (!old && flags == BPF_EXIST)
			return -ENOENT;
	} while (!atomic_compare_exchange_weak_explicit(slot, &old, cookie, memory_order_acq_rel,
							memory_order_acquire));
	/* after the cookie: a reader takes a snapshot only when its cookie matches */
	memcpy(smap_snap(map, slot), &snap, sizeof(snap));
	atomic_thread_fence(memory_order_release);
	return 0;
}

/* a socket pointer from a program: there is none here (the kernel: -EINVAL for NULL) */
static int sock_prog_update(struct brt_map *map, const void *key, const void *value,
			    uint64_t flags)
{
	(void)map, (void)key, (void)value, (void)flags;
	return -EINVAL;
}

static int smap_delete(struct brt_map *map, const void *key)
{
	_Atomic uint64_t *slot = smap_slot(map, key);

	if (!slot)
		return -EINVAL;
	return atomic_exchange_explicit(slot, 0, memory_order_acq_rel) ? 0 : -EINVAL;
}

const struct brt_map_ops brt_sockmap_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.alloc_check = sock_alloc_check,
	.data_size = smap_data_size,
	.lookup = smap_lookup,
	.lookup_size = sizeof(struct brt_sock),
	.copy_value = smap_copy_value,
	.update = smap_update,
	.prog_update = sock_prog_update,
	.delete = smap_delete,
	.get_next_key = brt_array_get_next_key,
};

/* ---- sockhash --------------------------------------------------------------------------- */
struct sh_cell {
	_Atomic uint64_t cookie; /* 0: free */
	uint32_t seq;            /* insertion order within the map */
	uint32_t hash;           /* jhash(key, key_size, 0) */
	struct brt_sock snap;    /* the socket as the update saw it */
	unsigned char key[];     /* round_up(key_size, 8) bytes */
};

struct sh_head {
	_Atomic uint32_t lock;
	uint32_t next_seq;
	uint32_t count;
	uint32_t pad;
};

static size_t sh_cell_size(const struct brt_map *map)
{
	return sizeof(struct sh_cell) + BRT_ROUND8(map->key_size);
}

static struct sh_cell *sh_cell(struct brt_map *map, uint32_t i)
{
	return (struct sh_cell *)((char *)map->data + sizeof(struct sh_head) +
				  (size_t)i * sh_cell_size(map));
}

static int sh_data_size(const struct brt_map *map, uint64_t *size)
{
	if (map->max_entries > (1u << 24) || map->key_size > MAX_BPF_STACK)
		return -ENOMEM;
	*size = sizeof(struct sh_head) + (uint64_t)map->max_entries * sh_cell_size(map);
	return 0;
}

/* Take the writers' lock; one taken over from a writer that died holding it may have a
 * stale count: count the cells again. */
static void sh_lock(struct brt_map *map)
{
	struct sh_head *h = map->data;

	if (!brt_shm_lock(&h->lock))
		return;
	h->count = 0;
	for (uint32_t i = 0; i < map->max_entries; i++)
		if (atomic_load_explicit(&sh_cell(map, i)->cookie, memory_order_relaxed))
			h->count++;
}

static void sh_unlock(struct brt_map *map)
{
	brt_shm_unlock(&((struct sh_head *)map->data)->lock);
}

/* under the lock */
static struct sh_cell *sh_find(struct brt_map *map, const void *key)
{
	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct sh_cell *c = sh_cell(map, i);

		if (atomic_load_explicit(&c->cookie, memory_order_acquire) &&
		    !memcmp(c->key, key, map->key_size))
			return c;
	}
	return NULL;
}

static int sh_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct sh_cell *c;
	uint64_t cookie = 0;

	if (map->value_size != 8)
		return -ENOSPC;
	sh_lock(map);
	c = sh_find(map, key);
	if (c)
		cookie = atomic_load_explicit(&c->cookie, memory_order_acquire);
	sh_unlock(map);
	if (!cookie)
		return -ENOENT;
	memcpy(value, &cookie, 8);
	return 0;
}

static int sh_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct sh_head *h = map->data;
	struct brt_sock snap;
	struct sh_cell *c;
	uint64_t cookie;
	int err = sock_of_fd(value_fd(map, value), &cookie, &snap);

	if (err)
		return err;
	/* sock_hash_update_common() */
	if (flags > BPF_EXIST)
		return -EINVAL;
	sh_lock(map);
	c = sh_find(map, key);
	if (c && flags == BPF_NOEXIST) {
		err = -EEXIST;
		goto out;
	}
	if (!c && flags == BPF_EXIST) {
		err = -ENOENT;
		goto out;
	}
	if (c) { /* the kernel adds a new element at its bucket's head: newest again */
		c->seq = h->next_seq++;
		c->snap = snap;
		atomic_store_explicit(&c->cookie, cookie, memory_order_release);
		goto out;
	}
	if (h->count >= map->max_entries) {
		err = -E2BIG;
		goto out;
	}
	for (uint32_t i = 0; i < map->max_entries; i++) {
		c = sh_cell(map, i);
		if (atomic_load_explicit(&c->cookie, memory_order_relaxed))
			continue;
		memset(c->key, 0, BRT_ROUND8(map->key_size));
		memcpy(c->key, key, map->key_size);
		c->hash = brt_map_jhash(key, map->key_size, 0);
		c->seq = h->next_seq++;
		c->snap = snap;
		atomic_store_explicit(&c->cookie, cookie, memory_order_release);
		h->count++;
		break;
	}
out:
	sh_unlock(map);
	return err;
}

/* A program's lookup: the element's socket (sock_hold()), NULL when absent. */
static void *sh_lookup(struct brt_map *map, const void *key)
{
	struct brt_sock *held_sock = NULL;
	struct sh_cell *c;

	sh_lock(map);
	c = sh_find(map, key);
	if (c)
		held_sock = sock_hold(&c->snap);
	sh_unlock(map);
	return held_sock;
}

static int sh_delete(struct brt_map *map, const void *key)
{
	struct sh_head *h = map->data;
	struct sh_cell *c;

	sh_lock(map);
	c = sh_find(map, key);
	if (c) {
		atomic_store_explicit(&c->cookie, 0, memory_order_release);
		h->count--;
	}
	sh_unlock(map);
	return c ? 0 : -ENOENT;
}

/* Does a come before b in the kernel's walk (bucket, then newest first)? */
static int sh_before(const struct sh_cell *a, const struct sh_cell *b, uint32_t mask)
{
	uint32_t ba = a->hash & mask, bb = b->hash & mask;

	return ba != bb ? ba < bb : a->seq > b->seq;
}

static int sh_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	struct sh_cell *cur = NULL, *best = NULL;
	uint32_t mask = brt_map_buckets(map) - 1;

	sh_lock(map);
	if (key)
		cur = sh_find(map, key);
	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct sh_cell *c = sh_cell(map, i);

		if (!atomic_load_explicit(&c->cookie, memory_order_relaxed) || c == cur)
			continue;
		if (cur && !sh_before(cur, c, mask))
			continue;
		if (!best || sh_before(c, best, mask))
			best = c;
	}
	if (best)
		memcpy(next_key, best->key, map->key_size);
	sh_unlock(map);
	return best ? 0 : -ENOENT;
}

const struct brt_map_ops brt_sockhash_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.alloc_check = sock_alloc_check,
	.data_size = sh_data_size,
	.lookup = sh_lookup,
	.lookup_size = sizeof(struct brt_sock),
	.copy_value = sh_copy_value,
	.update = sh_update,
	.prog_update = sock_prog_update,
	.delete = sh_delete,
	.get_next_key = sh_get_next_key,
};

/* ---- helpers ---------------------------------------------------------------------------- */
#define SK_DROP 0

/* bpf_sk_redirect_map/hash, bpf_msg_redirect_map/hash: no socket to redirect to here */
uint64_t brt_helper_sk_redirect_map(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return SK_DROP;
}

/* The sk_msg helpers of the message's bytes.  bpfrt runs sk_msg programs outside a send,
 * on no message: apply/cork only record a count (0); pull, push and pop answer as the
 * kernel's for an empty scatterlist: flags -EINVAL, pull's empty range -EINVAL, push's and
 * pop's zero length 0, any other range past the (empty) message -EINVAL. */
uint64_t brt_helper_msg_apply_bytes(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

uint64_t brt_helper_msg_pull_data(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EINVAL;
}

/* push and pop: (msg, start, len, flags) */
uint64_t brt_helper_msg_push_pop(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r5, (void)ctx;
	if (r4)
		return (uint64_t)-EINVAL;
	return (uint32_t)r3 ? (uint64_t)-EINVAL : 0;
}

/* bpf_sock_map_update/bpf_sock_hash_update from sock_ops: the kernel's answer outside the
 * established/listen callbacks (no sock_ops program runs here) */
uint64_t brt_helper_sock_map_update(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)(int64_t)-EOPNOTSUPP;
}

/* long bpf_sk_assign(ctx, sk, u64 flags).
 * sk_lookup (bpf_sk_lookup_assign): select sk (a socket from a sockmap, or NULL to clear)
 * as the lookup's result, with the kernel's checks in its order: flags REPLACE and
 * NO_REUSEPORT only (-EINVAL); a refcounted socket, a TCP one not listening or a UDP one
 * not in TCP_CLOSE -ESOCKTNOSUPPORT; another protocol -EPROTOTYPE; another family unless
 * an IPv6 socket that is not v6-only -EAFNOSUPPORT; a selection without REPLACE -EEXIST.
 * tc (bpf_sk_assign): flags must be 0 (-EINVAL); then the kernel wants the skb at tc
 * ingress, which a test run's never is, so -EOPNOTSUPP (bpfrt's tc programs hold no
 * socket to assign anyway: lookups find none). */
uint64_t brt_helper_sk_assign(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_prog_maps *pm = bpfrt_run_user(ctx);
	struct brt_sk_lookup_ctx *lc = (struct brt_sk_lookup_ctx *)(uintptr_t)r1;
	const struct brt_sock *sk = (const struct brt_sock *)(uintptr_t)r2;

	(void)r4, (void)r5;
	if (!pm || pm->magic != BRT_PROG_MAPS_MAGIC || pm->prog_type != BPF_PROG_TYPE_SK_LOOKUP)
		return (uint64_t)(int64_t)(!r2 || r3 ? -EINVAL : -EOPNOTSUPP);
	/* an unverified (checked) run may pass anything: only the run's context and a
	 * socket it was handed */
	if (!bpfrt_run_access_ok(ctx, lc, sizeof(*lc), 0) || lc->magic != BRT_SK_LOOKUP_MAGIC ||
	    (sk && !bpfrt_run_access_ok(ctx, sk, sizeof(*sk), 0)))
		return (uint64_t)(int64_t)-EINVAL;
	if (r3 & ~(uint64_t)(BPF_SK_LOOKUP_F_REPLACE | BPF_SK_LOOKUP_F_NO_REUSEPORT))
		return (uint64_t)(int64_t)-EINVAL;
	if (sk) {
		int tcp = sk->sk.type == SOCK_STREAM && sk->sk.protocol == IPPROTO_TCP;
		int udp = sk->sk.type == SOCK_DGRAM && sk->sk.protocol == IPPROTO_UDP;

		if (sk->refcounted || (tcp && sk->sk.state != TCP_STATE_LISTEN) ||
		    (udp && sk->sk.state != TCP_STATE_CLOSE))
			return (uint64_t)(int64_t)-ESOCKTNOSUPPORT;
		if ((uint16_t)sk->sk.protocol != (uint16_t)lc->uapi.protocol)
			return (uint64_t)(int64_t)-EPROTOTYPE;
		if (sk->sk.family != lc->uapi.family && (sk->sk.family == AF_INET || sk->ipv6only))
			return (uint64_t)(int64_t)-EAFNOSUPPORT;
	}
	if (lc->uapi.sk && !(r3 & BPF_SK_LOOKUP_F_REPLACE))
		return (uint64_t)(int64_t)-EEXIST;
	lc->uapi.sk = (struct bpf_sock *)(uintptr_t)r2;
	lc->no_reuseport = (r3 & BPF_SK_LOOKUP_F_NO_REUSEPORT) != 0;
	return 0;
}

/* ---- reuseport_sockarray ----------------------------------------------------------------
 * The kernel's BPF_MAP_TYPE_REUSEPORT_SOCKARRAY: an array of SO_REUSEPORT sockets that an
 * sk_reuseport program picks from (bpf_sk_select_reuseport).  The region is a sockmap's:
 * max_entries cookies, then the snapshots.  Updates come from bpf() only, with the
 * kernel's checks in its order (reuseport_array_update_check()); a socket already in a
 * reuseport array (the kernel: sk_user_data set) is -EBUSY, which bpfrt sees within this
 * map only; like a sockmap's, an element stays when its socket is closed. */
static int rsa_alloc_check(const union bpf_attr *attr)
{
	if (attr->value_size != 4 && attr->value_size != 8)
		return -EINVAL;
	return brt_array_map_ops.alloc_check(attr);
}

/* sock_flag(SOCK_RCU_FREE) && sk_hashed() && sk_reuseport_cb: a TCP listener or a bound
 * UDP socket, either with SO_REUSEPORT */
static int rsa_suitable(int fd, int type, int proto)
{
	if (!sockopt_int(fd, SOL_SOCKET, SO_REUSEPORT))
		return 0;
	if (type == SOCK_STREAM && proto == IPPROTO_TCP)
		return sockopt_int(fd, SOL_SOCKET, SO_ACCEPTCONN) != 0;
	if (type == SOCK_DGRAM && proto == IPPROTO_UDP)
		return bound(fd);
	return 0;
}

/* Sockets this process put in reuseport arrays (the kernel marks them in sk_user_data, so
 * a second array or slot is -EBUSY): the slot each is in.  A claim is dropped when its
 * slot is deleted or replaced, and when the map loses its last fd (rsa_unref(); the
 * kernel empties the array when it is freed); one whose slot no longer holds the socket
 * (another process changed it) is stale and ignored. */
struct rsa_claim {
	uint64_t cookie;
	_Atomic uint64_t *slot;
};
static struct rsa_claim *claims;
static size_t nclaims, capclaims;
static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;

static void unclaim_at(size_t i)
{
	claims[i] = claims[--nclaims];
}

static int claimed(uint64_t cookie)
{
	for (size_t i = 0; i < nclaims; i++) {
		if (claims[i].cookie != cookie)
			continue;
		if (atomic_load_explicit(claims[i].slot, memory_order_acquire) == cookie)
			return 1;
		unclaim_at(i);
		return 0;
	}
	return 0;
}

/* slot now holds cookie: it claims it, and whatever slot held before is released */
static void claim(struct brt_map *map, _Atomic uint64_t *slot, uint64_t cookie)
{
	(void)map;
	for (size_t i = 0; i < nclaims; i++)
		if (claims[i].slot == slot) {
			claims[i].cookie = cookie;
			return;
		}
	if (nclaims == capclaims) {
		size_t cap = capclaims ? capclaims * 2 : 16;
		struct rsa_claim *c = realloc(claims, cap * sizeof(*c));

		if (!c)
			return; /* not claimed: a second array would then take it */
		claims = c;
		capclaims = cap;
	}
	claims[nclaims++] = (struct rsa_claim){ cookie, slot };
}

static void unclaim_slots(_Atomic uint64_t *first, uint32_t n)
{
	pthread_mutex_lock(&claims_lock);
	for (size_t i = 0; i < nclaims;)
		if (claims[i].slot >= first && claims[i].slot < first + n)
			unclaim_at(i);
		else
			i++;
	pthread_mutex_unlock(&claims_lock);
}

static void rsa_unref(struct brt_map *map)
{
	unclaim_slots((_Atomic uint64_t *)map->data, map->max_entries);
}

static int rsa_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	uint64_t ufd = value_fd(map, value), cookie, old;
	int fd, domain, type, proto, err;
	_Atomic uint64_t *slot;
	struct brt_sock snap;

	/* bpf_fd_reuseport_array_update_elem() */
	if (flags > BPF_EXIST)
		return -EINVAL;
	slot = smap_slot(map, key);
	if (!slot)
		return -E2BIG;
	if (map->value_size == 8 && ufd > INT32_MAX)
		return -EINVAL;
	fd = (int)ufd;
	err = sock_kind(fd, &domain, &type, &proto, -EINVAL);
	if (err)
		return err;
	old = atomic_load_explicit(slot, memory_order_acquire);
	if (old && flags == BPF_NOEXIST)
		return -EEXIST;
	if (!old && flags == BPF_EXIST)
		return -ENOENT;
	if ((proto != IPPROTO_UDP && proto != IPPROTO_TCP) ||
	    (domain != AF_INET && domain != AF_INET6) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM))
		return -BRT_ENOTSUPP;
	if (!rsa_suitable(fd, type, proto))
		return -EINVAL;
	if (sock_snap(fd, domain, type, proto, proto == IPPROTO_TCP ? TCP_STATE_LISTEN : 0,
		      &cookie, &snap))
		return -EINVAL;
	pthread_mutex_lock(&claims_lock);
	if (claimed(cookie)) {
		pthread_mutex_unlock(&claims_lock);
		return -EBUSY;
	}
	if (!atomic_compare_exchange_strong_explicit(slot, &old, cookie, memory_order_acq_rel,
						     memory_order_acquire)) {
		pthread_mutex_unlock(&claims_lock);
		return -EBUSY; /* a concurrent update of the slot won */
	}
	memcpy(smap_snap(map, slot), &snap, sizeof(snap));
	atomic_thread_fence(memory_order_release);
	claim(map, slot, cookie);
	pthread_mutex_unlock(&claims_lock);
	return 0;
}

/* bpf_fd_reuseport_array_lookup_elem(): the cookie, only into an 8-byte value */
static int rsa_copy_value(struct brt_map *map, const void *key, void *value)
{
	if (map->value_size != 8)
		return -ENOSPC;
	return smap_copy_value(map, key, value);
}

static int rsa_delete(struct brt_map *map, const void *key)
{
	_Atomic uint64_t *slot = smap_slot(map, key);

	if (!slot)
		return -E2BIG;
	if (!atomic_exchange_explicit(slot, 0, memory_order_acq_rel))
		return -ENOENT;
	unclaim_slots(slot, 1);
	return 0;
}

const struct brt_map_ops brt_reuseport_array_map_ops = {
	.alloc_check = rsa_alloc_check,
	.data_size = smap_data_size,
	.lookup = smap_lookup,
	.lookup_size = sizeof(struct brt_sock),
	.copy_value = rsa_copy_value,
	.update = rsa_update,
	.prog_update = sock_prog_update,
	.delete = rsa_delete,
	.get_next_key = brt_array_get_next_key,
	.unref = rsa_unref,
};

/* long bpf_sk_select_reuseport(reuse, map, key, flags) (sk_reuseport): the kernel's first
 * checks on the map's socket: none -ENOENT; not in a reuseport group (a reuseport array
 * holds only such sockets, so one unhashed since: -ENOENT; a sockmap's may never have
 * been in one: -EINVAL).  No sk_reuseport program runs in bpfrt (no BPF_PROG_TEST_RUN,
 * as the kernel's; no live attach), so there is no group to compare with nor a selection
 * to record: a socket that passes is 0. */
uint64_t brt_helper_sk_select_reuseport(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	const struct brt_sock *sk;

	(void)r1, (void)r4, (void)r5;
	if (!map || !map->ops->lookup_size ||
	    (map->key_size && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r3,
						   map->key_size, 0)))
		return (uint64_t)(int64_t)-EINVAL;
	sk = map->ops->lookup(map, (const void *)(uintptr_t)r3);
	if (!sk)
		return (uint64_t)(int64_t)-ENOENT;
	if (!sk->reuseport)
		return (uint64_t)(int64_t)(map->type == BPF_MAP_TYPE_REUSEPORT_SOCKARRAY ? -ENOENT
										     : -EINVAL);
	return 0;
}
