/* sockmap.c - BPF_MAP_TYPE_SOCKMAP and BPF_MAP_TYPE_SOCKHASH: sockets user space stores by
 * fd (an array of slots, or a hash with keys of any size), for sk_skb and sk_msg
 * programs to redirect to and sock_ops programs to fill.
 *
 * The kernel keeps the struct sock; a process can keep only what names it: an element
 * holds the socket's cookie (SO_COOKIE: the kernel's own, so a lookup from bpf() answers
 * what the kernel's map would), 0 when empty.  An update checks the fd as the kernel's
 * sock_map_update_elem_sys() does (a socket, of a protocol the kernel can put in a map:
 * TCP, UDP, unix, vsock; TCP listening or established, UDP bound, stream unix and vsock
 * connected),
 * then the flags and the slot.  Not kept: the socket itself, so closing it does not
 * empty its slot (the kernel drops it), and programs never get a socket from a lookup
 * (NULL) or a redirect target (SK_DROP); those programs do not test-run in the kernel
 * either (docs/STATUS.md #15).
 *
 * The sockhash walks (GET_NEXT_KEY) as the kernel's: jhash(key, key_size, 0) picks one of
 * roundup_pow_of_two(max_entries) buckets, buckets in order, newest entry first within one
 * (a replaced key is new again).  Here entries live in max_entries fixed cells with an
 * insertion sequence number, which gives the same order; a process-shared lock serialises
 * writers, as for devmap_hash.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/bpf.h>
#include <linux/tcp.h>
#include <netinet/in.h>

#include "maps/maps.h"

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

/* 0 and the socket's cookie, or the kernel's errno for this fd */
static int sock_of_fd(uint64_t ufd, uint64_t *cookie)
{
	int fd = (int)ufd, domain, type, proto;
	socklen_t len = sizeof(int);
	struct stat st;

	if (ufd > INT32_MAX)
		return -EINVAL;
	if (fstat(fd, &st))
		return -EBADF;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len))
		return -EOPNOTSUPP;
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
	len = sizeof(*cookie);
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) || !*cookie)
		return -EOPNOTSUPP;
	return 0;
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
static int smap_data_size(const struct brt_map *map, uint64_t *size)
{
	if (map->max_entries > (1u << 27))
		return -ENOMEM;
	*size = (uint64_t)map->max_entries * 8;
	return 0;
}

static _Atomic uint64_t *smap_slot(struct brt_map *map, const void *key)
{
	uint32_t i;

	memcpy(&i, key, 4);
	return i < map->max_entries ? (_Atomic uint64_t *)map->data + i : NULL;
}

/* programs get no socket from a lookup (see the top of the file) */
static void *sock_lookup(struct brt_map *map, const void *key)
{
	(void)map, (void)key;
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
	uint64_t cookie, old;
	int err = sock_of_fd(value_fd(map, value), &cookie);

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
	.alloc_check = sock_alloc_check,
	.data_size = smap_data_size,
	.lookup = sock_lookup,
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
	struct sh_cell *c;
	uint64_t cookie;
	int err = sock_of_fd(value_fd(map, value), &cookie);

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
		atomic_store_explicit(&c->cookie, cookie, memory_order_release);
		h->count++;
		break;
	}
out:
	sh_unlock(map);
	return err;
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
	.alloc_check = sock_alloc_check,
	.data_size = sh_data_size,
	.lookup = sock_lookup,
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

/* bpf_sock_map_update/bpf_sock_hash_update from sock_ops: the kernel's answer outside the
 * established/listen callbacks (no sock_ops program runs here) */
uint64_t brt_helper_sock_map_update(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)(int64_t)-EOPNOTSUPP;
}
