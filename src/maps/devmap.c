/* devmap.c - the XDP redirect targets: devmap, devmap_hash, cpumap and xskmap, and
 * bpf_redirect_map(), which picks one of their entries.
 *
 * Entries name things of the host: an interface (devmap: ifindex, plus an XDP program of
 * expected_attach_type BPF_XDP_DEVMAP with an 8-byte value), a CPU (cpumap: queue size,
 * plus a BPF_XDP_CPUMAP program) or an AF_XDP socket (xskmap).  The checks on update are
 * the kernel's, in its order and with its errnos (the interface must exist in this
 * process's network namespace, the CPU must be possible).  What the runtime stores is
 * what the kernel reports back: devmap and cpumap lookups return { ifindex or qsize,
 * program id }, in one 64-bit word per slot written atomically, so lookups from
 * programs and other processes need no lock.
 *
 * xskmap: user space cannot bind an AF_XDP socket to this runtime, but the kernel takes
 * any AF_XDP socket (bound or not), so the map does too; the slot keeps the socket's
 * cookie (SO_COOKIE) to tell "the same socket again" apart, and the queue id a
 * program's lookup reads and where it was bound (both as at the update, from sock_diag,
 * or without it only whether it was bound: a socket bound later reads as not bound).  A closed socket is not dropped from the map (the
 * kernel drops it on release).
 *
 * bpf_redirect_map() returns what the kernel's returns in a test run: XDP_REDIRECT when
 * the key names an entry, else the action in the low bits of flags.  A devmap entry
 * without a program of its own also becomes the run's redirect target, which a live
 * attachment (attach/link.c) sends the packet out of; an entry with a program names the
 * interface and the program, which the attachment runs on the packet first (its
 * XDP_PASS sends it, anything else drops it, as the kernel's devmap); a cpumap entry a
 * CPU whose worker there runs the entry's program; other targets (xskmap, broadcasts)
 * are only counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

/* One slot of devmap, cpumap and xskmap.  word: devmap ifindex | prog id << 32,
 * cpumap qsize | prog id << 32 (0: empty; the value layout is the low bytes), xskmap the
 * socket cookie.  aux: xskmap's queue id; dev: the interface the socket was bound to at
 * the update (0: not bound, XSK_BOUND_SOMEWHERE: bound, which interface unknown). */
struct slot {
	_Atomic uint64_t word;
	uint32_t aux;
	uint32_t dev;
};

#ifndef XDP_COPY
#define XDP_COPY (1 << 1)
#endif

/* Where an AF_XDP socket is bound: its interface and queue when the kernel's sock_diag
 * says (util/xsk_diag.c); else a bind() to no interface tells bound (-EBUSY: xsk_bind()
 * checks the state before the interface) from not (-ENODEV, changing nothing). */
static void xsk_where(int fd, uint64_t cookie, uint32_t *dev, uint32_t *queue)
{
	struct {
		uint16_t family, flags;
		uint32_t ifindex, queue_id, shared_umem_fd;
	} probe = { AF_XDP, 0, 0, 0, 0 }; /* struct sockaddr_xdp */
	uint32_t ifindex = 0;
	int r = brt_xsk_binding(cookie, &ifindex, queue);

	*dev = 0;
	if (r == 1) {
		*dev = ifindex;
		return;
	}
	*queue = 0;
	if (r == -EOPNOTSUPP && bind(fd, (struct sockaddr *)&probe, sizeof(probe)) &&
	    errno != ENODEV)
		*dev = XSK_BOUND_SOMEWHERE;
}

/* NR_CPUS of the running kernel (kernel_max is NR_CPUS - 1): cpumap's max_entries bound. */
static uint32_t kernel_max_cpus(void)
{
	static _Atomic uint32_t cached;
	uint32_t n = atomic_load_explicit(&cached, memory_order_relaxed);
	FILE *f;

	if (n)
		return n;
	n = 8192;
	f = fopen("/sys/devices/system/cpu/kernel_max", "re");
	if (f) {
		if (fscanf(f, "%u", &n) == 1 && n < (1u << 20))
			n++;
		else
			n = 8192;
		fclose(f);
	}
	atomic_store_explicit(&cached, n, memory_order_relaxed);
	return n;
}

static int redirect_alloc_check(const union bpf_attr *attr)
{
	uint32_t t = attr->map_type, vs = attr->value_size;
	uint32_t allowed = BPF_F_NUMA_NODE | BPF_F_RDONLY | BPF_F_WRONLY;

	if (!attr->max_entries || attr->key_size != 4)
		return -EINVAL;
	if (t == BPF_MAP_TYPE_XSKMAP) {
		if (vs != 4)
			return -EINVAL;
	} else if (vs != 4 && vs != 8) {
		return -EINVAL;
	}
	if (t == BPF_MAP_TYPE_CPUMAP)
		allowed = BPF_F_NUMA_NODE;
	if (attr->map_flags & ~allowed)
		return -EINVAL;
	if (t == BPF_MAP_TYPE_DEVMAP_HASH && attr->max_entries > (1u << 31))
		return -EINVAL;
	if (t == BPF_MAP_TYPE_CPUMAP && attr->max_entries > kernel_max_cpus())
		return -E2BIG;
	return 0;
}

static int slots_data_size(const struct brt_map *map, uint64_t *size)
{
	if (map->max_entries > (1u << 27))
		return -ENOMEM;
	*size = (uint64_t)map->max_entries * sizeof(struct slot);
	return 0;
}

static struct slot *slot_of(struct brt_map *map, const void *key)
{
	uint32_t i;

	memcpy(&i, key, 4);
	return i < map->max_entries ? (struct slot *)map->data + i : NULL;
}

/* The id of program fd if it is an XDP program of that expected attach type, else 0. */
static uint32_t xdp_prog_id(int fd, uint32_t attach)
{
	struct brt_obj *prog;
	uint32_t id = 0;

	if (brt_obj_from_fd(fd, BRT_OBJ_PROG, &prog))
		return 0;
	if (prog->snap.type == BPF_PROG_TYPE_XDP && prog->snap.expected_attach_type == attach)
		id = prog->snap.id;
	brt_obj_put(prog);
	return id;
}

/* A devmap value (the kernel's struct bpf_devmap_val; the program fd is -1 when the
 * value is 4 bytes) as a slot word: 0 with *word, or the kernel's -EINVAL. */
static int devmap_word(const struct brt_map *map, const void *value, uint64_t *word)
{
	uint32_t ifindex, prog_id = 0;
	int32_t fd = -1;
	char name[IF_NAMESIZE];

	memcpy(&ifindex, value, 4);
	if (map->value_size == 8)
		memcpy(&fd, (const char *)value + 4, 4);
	if (!ifindex) {
		*word = 0;
		return fd > 0 ? -EINVAL : 0; /* no program for no device */
	}
	if (!if_indextoname(ifindex, name))
		return -EINVAL;
	if (fd > 0) {
		prog_id = xdp_prog_id(fd, BPF_XDP_DEVMAP);
		if (!prog_id)
			return -EINVAL;
	}
	*word = ifindex | (uint64_t)prog_id << 32;
	return 0;
}

/* devmap and cpumap: every slot "exists" (BPF_EXIST is fine on an empty one, BPF_NOEXIST
 * always fails), as for arrays; -EINVAL bad flags, -E2BIG past the end */
static int fixed_slot_update_check(struct brt_map *map, const void *key, uint64_t flags,
				   struct slot **s)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	*s = slot_of(map, key);
	if (!*s)
		return -E2BIG;
	return flags == BPF_NOEXIST ? -EEXIST : 0;
}

/* Is cpu a possible CPU of this machine (the kernel's cpu_possible())? */
static int cpu_possible(uint32_t cpu)
{
	return cpu < brt_ncpus();
}

static int cpumap_update(struct brt_map *map, const void *key, const void *value,
			 uint64_t flags)
{
	uint32_t cpu, qsize, prog_id = 0;
	int32_t fd = 0;
	struct slot *s;
	int err;

	memcpy(&cpu, key, 4);
	memcpy(&qsize, value, 4);
	if (map->value_size == 8)
		memcpy(&fd, (const char *)value + 4, 4);
	err = fixed_slot_update_check(map, key, flags, &s);
	if (err)
		return err;
	if (qsize > 16384)
		return -EOVERFLOW;
	if (!cpu_possible(cpu))
		return -ENODEV;
	if (qsize && fd > 0) {
		/* the kernel's entry allocation fails as a whole: -ENOMEM */
		prog_id = xdp_prog_id(fd, BPF_XDP_CPUMAP);
		if (!prog_id)
			return -ENOMEM;
	}
	atomic_store_explicit(&s->word, qsize ? qsize | (uint64_t)prog_id << 32 : 0,
			      memory_order_release);
	return 0;
}

static uint64_t socket_cookie(int fd, int *err)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(int);
	int domain;

	if (fcntl(fd, F_GETFD) < 0) {
		*err = -EBADF;
		return 0;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len)) {
		*err = errno == ENOTSOCK ? -ENOTSOCK : -EBADF;
		return 0;
	}
	if (domain != AF_XDP) {
		*err = -EOPNOTSUPP;
		return 0;
	}
	len = sizeof(cookie);
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) || !cookie) {
		*err = -EOPNOTSUPP;
		return 0;
	}
	*err = 0;
	return cookie;
}

static int xskmap_update(struct brt_map *map, const void *key, const void *value,
			 uint64_t flags)
{
	uint32_t dev = 0, queue = 0;
	uint64_t cookie, old;
	struct slot *s;
	int32_t fd;
	int err;

	if (flags > BPF_EXIST)
		return -EINVAL;
	s = slot_of(map, key);
	if (!s)
		return -E2BIG;
	memcpy(&fd, value, 4);
	cookie = socket_cookie(fd, &err);
	if (err)
		return err;
	old = atomic_load_explicit(&s->word, memory_order_acquire);
	if (old == cookie)
		return 0;
	if (old && flags == BPF_NOEXIST)
		return -EEXIST;
	if (!old && flags == BPF_EXIST)
		return -ENOENT;
	/* the queue a program's lookup reads (struct bpf_xdp_sock): the socket's now */
	xsk_where(fd, cookie, &dev, &queue);
	s->aux = queue;
	s->dev = dev;
	atomic_store_explicit(&s->word, cookie, memory_order_release);
	return 0;
}

static int slots_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags)
{
	struct slot *s;
	uint64_t word;
	int err;

	if (map->type == BPF_MAP_TYPE_CPUMAP)
		return cpumap_update(map, key, value, flags);
	if (map->type == BPF_MAP_TYPE_XSKMAP)
		return xskmap_update(map, key, value, flags);
	err = fixed_slot_update_check(map, key, flags, &s);
	if (err)
		return err;
	err = devmap_word(map, value, &word);
	if (err)
		return err;
	atomic_store_explicit(&s->word, word, memory_order_release);
	return 0;
}

static int slots_delete(struct brt_map *map, const void *key)
{
	struct slot *s = slot_of(map, key);

	if (!s)
		return -EINVAL;
	atomic_store_explicit(&s->word, 0, memory_order_release);
	return 0;
}

/* Program side: devmap gives its { ifindex, prog id } (read-only: the map has
 * BPF_F_RDONLY_PROG), xskmap its socket's queue id; cpumap has no program lookup. */
static void *slots_lookup(struct brt_map *map, const void *key)
{
	struct slot *s = slot_of(map, key);

	if (!s || !atomic_load_explicit(&s->word, memory_order_acquire))
		return NULL;
	return map->type == BPF_MAP_TYPE_XSKMAP ? (void *)&s->aux : (void *)s;
}

static int slots_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct slot *s;
	uint64_t word;

	if (map->type == BPF_MAP_TYPE_XSKMAP)
		return -EOPNOTSUPP;
	s = slot_of(map, key);
	word = s ? atomic_load_explicit(&s->word, memory_order_acquire) : 0;
	if (!word)
		return -ENOENT;
	memcpy(value, &word, map->value_size);
	return 0;
}

/* What the three slot maps share; devmap and xskmap add a lookup for programs. */
#define SLOTS_OPS                                                                       \
	.alloc_check = redirect_alloc_check, .btf = BRT_MAP_BTF_NONE,                    \
	.data_size = slots_data_size,                                                    \
	.copy_value = slots_copy_value, .update = slots_update, .delete = slots_delete,  \
	.get_next_key = brt_array_get_next_key

const struct brt_map_ops brt_devmap_map_ops = {
	SLOTS_OPS,
	.forced_flags = BPF_F_RDONLY_PROG, /* lookups point at the entry: read-only */
	.lookup = slots_lookup,
};

const struct brt_map_ops brt_cpumap_map_ops = { SLOTS_OPS };

const struct brt_map_ops brt_xskmap_map_ops = {
	SLOTS_OPS,
	.lookup = slots_lookup,
};

/* ---- devmap_hash ------------------------------------------------------------------------
 * The kernel hashes keys into roundup_pow_of_two(max_entries) buckets by their low bits
 * and walks (BPF_MAP_GET_NEXT_KEY) bucket by bucket, newest entry first within one.  Here
 * the entries live in max_entries fixed cells (ifindex 0: free) with an insertion
 * sequence number, which gives the same walk order; a process-shared lock serialises
 * writers, lookups scan without it (a cell's key and word are each read atomically). */

struct dh_cell {
	_Atomic uint32_t key;
	uint32_t seq;                  /* insertion order within the map */
	_Atomic uint64_t word;         /* ifindex | prog id << 32, 0: free */
};

struct dh_head {
	_Atomic uint32_t lock;
	uint32_t next_seq;
	uint32_t count;
	uint32_t pad;
	struct dh_cell cells[];
};

/* Take the writers' lock; one taken over from a writer that died holding it may have a
 * stale count (cells themselves change by one atomic store): count them again. */
static void dh_lock(struct brt_map *map)
{
	struct dh_head *h = map->data;

	if (!brt_shm_lock(&h->lock))
		return;
	h->count = 0;
	for (uint32_t i = 0; i < map->max_entries; i++)
		if (atomic_load_explicit(&h->cells[i].word, memory_order_relaxed))
			h->count++;
}

static int dh_data_size(const struct brt_map *map, uint64_t *size)
{
	if (map->max_entries > (1u << 27))
		return -ENOMEM;
	*size = sizeof(struct dh_head) + (uint64_t)map->max_entries * sizeof(struct dh_cell);
	return 0;
}

static struct dh_cell *dh_find(struct brt_map *map, uint32_t key)
{
	struct dh_head *h = map->data;

	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct dh_cell *c = &h->cells[i];

		if (atomic_load_explicit(&c->word, memory_order_acquire) &&
		    atomic_load_explicit(&c->key, memory_order_relaxed) == key)
			return c;
	}
	return NULL;
}

static void *dh_lookup(struct brt_map *map, const void *key)
{
	struct dh_cell *c;
	uint32_t k;

	memcpy(&k, key, 4);
	c = dh_find(map, k);
	return c ? (void *)((char *)c + offsetof(struct dh_cell, word)) : NULL;
}

static int dh_copy_value(struct brt_map *map, const void *key, void *value)
{
	struct dh_cell *c;
	uint64_t word;
	uint32_t k;

	memcpy(&k, key, 4);
	c = dh_find(map, k);
	word = c ? atomic_load_explicit(&c->word, memory_order_acquire) : 0;
	if (!word)
		return -ENOENT;
	memcpy(value, &word, map->value_size);
	return 0;
}

static int dh_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct dh_head *h = map->data;
	struct dh_cell *c;
	uint64_t word;
	uint32_t k;
	int err = 0;

	if (flags > BPF_EXIST)
		return -EINVAL;
	memcpy(&k, key, 4);
	dh_lock(map);
	c = dh_find(map, k);
	if (c && (flags & BPF_NOEXIST)) {
		err = -EEXIST;
		goto out;
	}
	err = devmap_word(map, value, &word);
	if (!err && !word) /* ifindex 0 names no device: the kernel finds none */
		err = -EINVAL;
	if (err)
		goto out;
	if (c) { /* replaced in place: the walk order stays */
		atomic_store_explicit(&c->word, word, memory_order_release);
		goto out;
	}
	if (h->count >= map->max_entries) {
		err = -E2BIG;
		goto out;
	}
	for (uint32_t i = 0; i < map->max_entries; i++) {
		c = &h->cells[i];
		if (atomic_load_explicit(&c->word, memory_order_relaxed))
			continue;
		atomic_store_explicit(&c->key, k, memory_order_relaxed);
		c->seq = h->next_seq++;
		atomic_store_explicit(&c->word, word, memory_order_release);
		h->count++;
		break;
	}
out:
	brt_shm_unlock(&h->lock);
	return err;
}

static int dh_delete(struct brt_map *map, const void *key)
{
	struct dh_head *h = map->data;
	struct dh_cell *c;
	uint32_t k;

	memcpy(&k, key, 4);
	dh_lock(map);
	c = dh_find(map, k);
	if (c) {
		atomic_store_explicit(&c->word, 0, memory_order_release);
		h->count--;
	}
	brt_shm_unlock(&h->lock);
	return c ? 0 : -ENOENT;
}

/* Does a come before b in the kernel's walk (bucket, then newest first)? */
static int dh_before(const struct dh_cell *a, const struct dh_cell *b, uint32_t mask)
{
	uint32_t ba = atomic_load_explicit(&a->key, memory_order_relaxed) & mask;
	uint32_t bb = atomic_load_explicit(&b->key, memory_order_relaxed) & mask;

	return ba != bb ? ba < bb : a->seq > b->seq;
}

static int dh_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	struct dh_head *h = map->data;
	struct dh_cell *cur = NULL, *best = NULL;
	uint32_t mask = brt_map_buckets(map) - 1, k;

	dh_lock(map);
	if (key) {
		memcpy(&k, key, 4);
		cur = dh_find(map, k);
	}
	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct dh_cell *c = &h->cells[i];

		if (!atomic_load_explicit(&c->word, memory_order_relaxed) || c == cur)
			continue;
		if (cur && !dh_before(cur, c, mask))
			continue;
		if (!best || dh_before(c, best, mask))
			best = c;
	}
	if (best)
		k = atomic_load_explicit(&best->key, memory_order_relaxed);
	brt_shm_unlock(&h->lock);
	if (!best)
		return -ENOENT;
	memcpy(next_key, &k, 4);
	return 0;
}

const struct brt_map_ops brt_devmap_hash_map_ops = {
	.btf = BRT_MAP_BTF_NONE,
	.alloc_check = redirect_alloc_check,
	.data_size = dh_data_size,
	.forced_flags = BPF_F_RDONLY_PROG,
	.lookup = dh_lookup,
	.copy_value = dh_copy_value,
	.update = dh_update,
	.delete = dh_delete,
	.get_next_key = dh_get_next_key,
};

/* ---- bpf_redirect_map ------------------------------------------------------------------- */

#define XDP_ACTION_MASK 3ull /* XDP_ABORTED | XDP_DROP | XDP_PASS | XDP_TX */

uint64_t brt_helper_redirect_map(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	uint64_t flag_mask = 0;
	uint32_t key = (uint32_t)r2;
	void *target;

	(void)r4, (void)r5;
	if (!map)
		return XDP_ABORTED;
	if (map->type == BPF_MAP_TYPE_DEVMAP || map->type == BPF_MAP_TYPE_DEVMAP_HASH)
		flag_mask = BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS;
	if (r3 & ~(XDP_ACTION_MASK | flag_mask))
		return XDP_ABORTED;
	/* cpumap offers programs no lookup: its slots are read here directly */
	if (map->type == BPF_MAP_TYPE_CPUMAP)
		target = slots_lookup(map, &key);
	else if (map->ops->lookup)
		target = map->ops->lookup(map, &key);
	else
		target = NULL;
	if (!target && !(r3 & BPF_F_BROADCAST))
		return r3 & XDP_ACTION_MASK;
	if (ctx->pkt) { /* the last redirect call of a run names its target, as the kernel's */
		uint64_t word = 0;

		if (target && !(r3 & BPF_F_BROADCAST) &&
		    (map->type == BPF_MAP_TYPE_DEVMAP || map->type == BPF_MAP_TYPE_DEVMAP_HASH))
			word = atomic_load_explicit((_Atomic uint64_t *)target,
						    memory_order_acquire);
		/* { ifindex, program id }: the program runs before the packet is sent */
		ctx->pkt->redirect_ifindex = (uint32_t)word;
		ctx->pkt->redirect_flags = 0;
		ctx->pkt->redirect_prog_id = (uint32_t)(word >> 32);
		/* an xskmap entry: its socket, whose binding the attachment checks */
		ctx->pkt->redirect_xsk = 0;
		if (target && !(r3 & BPF_F_BROADCAST) && map->type == BPF_MAP_TYPE_XSKMAP) {
			struct slot *s = (void *)((char *)target - offsetof(struct slot, aux));

			ctx->pkt->redirect_xsk = atomic_load_explicit(&s->word,
								      memory_order_acquire);
			ctx->pkt->redirect_xsk_dev = s->dev;
		}
		/* a cpumap entry { qsize, program id }: the CPU's worker runs the program */
		ctx->pkt->redirect_cpu = 0;
		if (target && map->type == BPF_MAP_TYPE_CPUMAP) {
			word = atomic_load_explicit((_Atomic uint64_t *)target,
						    memory_order_acquire);
			ctx->pkt->redirect_cpu = key + 1;
			ctx->pkt->redirect_prog_id = (uint32_t)(word >> 32);
		}
	}
	return XDP_REDIRECT;
}
