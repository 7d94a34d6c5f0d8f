/* batch.c - the four BPF_MAP_*_BATCH commands, after the kernel's generic_map_*_batch():
 * elements one by one through the single-element code, count written back with how many
 * were done, ENOENT once a lookup walk reaches the end; the batch token (in_batch /
 * out_batch) is the last key.  A hash map's lookups go bucket by bucket as the kernel's
 * __htab_map_lookup_and_delete_batch(): whole buckets only (ENOSPC when the first does
 * not fit in count, else the batch ends before the bucket that does not), the token the
 * u32 number of the bucket to go on from.  Which keys share a bucket depends on the hash
 * seed, which differs from the kernel's: what is the same is how buckets are cut.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "maps/maps.h"

enum batch_op { LOOKUP, LOOKUP_AND_DELETE, UPDATE, DELETE };

static int is_hash(uint32_t type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static int supported(const struct brt_map *map, enum batch_op op)
{
	if (is_hash(map->type))
		return 1;
	if (map->type == BPF_MAP_TYPE_ARRAY || map->type == BPF_MAP_TYPE_PERCPU_ARRAY)
		return op == LOOKUP || op == UPDATE;
	/* Linux 6.18's LPM trie takes the generic lookup, update and delete batches */
	if (map->type == BPF_MAP_TYPE_LPM_TRIE)
		return op != LOOKUP_AND_DELETE;
	return 0;
}

struct bufs {
	unsigned char *key;
	unsigned char *prev;
	unsigned char *value;
};

/* A key get_next_key gave that the lookup then misses (deleted meanwhile, or a corrupt
 * region) is asked for again this many times, then the batch stops with EINTR: the
 * kernel's generic_map_lookup_batch() (MAP_LOOKUP_RETRIES), so a walk always ends. */
#define LOOKUP_RETRIES 3

static int walk(struct brt_call *call, struct brt_map *map, struct bufs *b, int del)
{
	union bpf_attr *attr = call->attr;
	uint32_t vsize = brt_map_value_size(map), ks = map->key_size, cp = 0;
	int have_prev = 0, err = 0, retry = LOOKUP_RETRIES;

	if (attr->batch.in_batch && !del) {
		if (call->ua->from(b->prev, attr->batch.in_batch, ks))
			return -EFAULT;
		have_prev = 1;
	}
	while (cp < attr->batch.count) {
		/* deleting as we go: the next element is always the first one left */
		err = brt_map_sys_get_next_key(map, have_prev && !del ? b->prev : NULL, b->key);
		if (err)
			break;
		err = del ? brt_map_sys_lookup_and_delete(map, b->key, b->value,
							  attr->batch.elem_flags) :
			    brt_map_sys_lookup(map, b->key, b->value, attr->batch.elem_flags);
		if (err == -ENOENT && retry--)
			continue;
		if (err == -ENOENT) {
			err = -EINTR;
			break;
		}
		if (err)
			return err;
		retry = LOOKUP_RETRIES;
		if (call->ua->to(attr->batch.keys + (uint64_t)cp * ks, b->key, ks) ||
		    call->ua->to(attr->batch.values + (uint64_t)cp * vsize, b->value, vsize))
			return -EFAULT;
		memcpy(b->prev, b->key, ks);
		have_prev = 1;
		cp++;
	}
	attr->batch.count = cp;
	if (BRT_PUT_ATTR(call, batch.count) ||
	    (cp && call->ua->to(attr->batch.out_batch, b->prev, ks)))
		return -EFAULT;
	return err;
}

/* the keys of the bucket *bi at or after *bi (its first key in b->key): n keys in *keys
 * (grown as needed), 0, -ENOENT when no bucket is left, or another -errno */
static int bucket_keys(struct brt_map *map, uint32_t *bi, unsigned char **keys, uint32_t *cap,
		       uint32_t *n, struct bufs *b)
{
	uint32_t ks = map->key_size;
	int err = brt_hash_first_key_from(map, *bi, b->key, bi);

	*n = 0;
	while (!err) {
		/* a bucket never holds more than the map's elements: more means a chain another
		 * process scribbled into a cycle (get_next_key would go round it for ever) */
		if (*n >= map->max_entries)
			return -EBUSY;
		if (*n == *cap) {
			unsigned char *k = realloc(*keys, (size_t)(*cap ? 2 * *cap : 8) * ks);

			if (!k)
				return -ENOMEM;
			*keys = k;
			*cap = *cap ? 2 * *cap : 8;
		}
		memcpy(*keys + (size_t)*n * ks, b->key, ks);
		(*n)++;
		err = brt_map_sys_get_next_key(map, b->key, b->prev);
		if (err || brt_hash_bucket_of(map, b->prev) != *bi)
			return err == -ENOENT ? 0 : err;
		memcpy(b->key, b->prev, ks);
	}
	return err;
}

/* __htab_map_lookup_and_delete_batch(): bucket by bucket from in_batch's number */
static int walk_hash(struct brt_call *call, struct brt_map *map, struct bufs *b, int del)
{
	union bpf_attr *attr = call->attr;
	uint32_t vsize = brt_map_value_size(map), ks = map->key_size, total = 0, bi = 0;
	uint32_t nb = brt_hash_n_buckets(map), n, cap = 0;
	unsigned char *keys = NULL;
	int err = 0;

	if (attr->batch.in_batch && call->ua->from(&bi, attr->batch.in_batch, sizeof(bi)))
		return -EFAULT;
	if (bi >= nb)
		return -ENOENT;
	for (;;) {
		err = bucket_keys(map, &bi, &keys, &cap, &n, b);
		if (err == -ENOENT)
			bi = nb;
		if (err)
			break;
		if (n > attr->batch.count - total) {
			if (!total)
				err = -ENOSPC;
			break;
		}
		for (uint32_t i = 0; i < n; i++) {
			const unsigned char *k = keys + (size_t)i * ks;
			int e = del ? brt_map_sys_lookup_and_delete(map, k, b->value,
								    attr->batch.elem_flags) :
				      brt_map_sys_lookup(map, k, b->value, attr->batch.elem_flags);

			if (e == -ENOENT) /* deleted since its bucket was read */
				continue;
			if (e) {
				free(keys);
				return e;
			}
			if (call->ua->to(attr->batch.keys + (uint64_t)total * ks, k, ks) ||
			    call->ua->to(attr->batch.values + (uint64_t)total * vsize, b->value,
					 vsize)) {
				free(keys);
				return -EFAULT;
			}
			total++;
		}
		if (++bi >= nb) {
			err = -ENOENT;
			break;
		}
	}
	free(keys);
	if (err && err != -ENOENT && err != -ENOSPC)
		return err;
	attr->batch.count = total;
	if (call->ua->to(attr->batch.out_batch, &bi, sizeof(bi)) ||
	    BRT_PUT_ATTR(call, batch.count))
		return -EFAULT;
	return err;
}

static int apply(struct brt_call *call, struct brt_map *map, struct bufs *b, int del)
{
	union bpf_attr *attr = call->attr;
	uint32_t vsize = brt_map_value_size(map), ks = map->key_size, cp;
	int err = 0;

	for (cp = 0; cp < attr->batch.count; cp++) {
		if (call->ua->from(b->key, attr->batch.keys + (uint64_t)cp * ks, ks) ||
		    (!del && call->ua->from(b->value, attr->batch.values + (uint64_t)cp * vsize,
					    vsize))) {
			err = -EFAULT;
			break;
		}
		err = del ? brt_map_sys_delete(map, b->key) :
			    brt_map_sys_update(map, b->key, b->value, attr->batch.elem_flags);
		if (err)
			break;
	}
	attr->batch.count = cp;
	if (BRT_PUT_ATTR(call, batch.count))
		err = -EFAULT;
	return err;
}

static int do_batch(struct brt_call *call, enum batch_op op)
{
	union bpf_attr *attr = call->attr;
	int reads = op == LOOKUP || op == LOOKUP_AND_DELETE, writes = op != LOOKUP;
	struct bufs b = { 0 };
	struct brt_map *map;
	uint32_t max_count;
	int err;

	err = brt_map_from_fd((int)attr->batch.map_fd, &map);
	if (err)
		return err;
	err = -EPERM;
	if ((reads && !brt_api_map_can_read(map, (int)attr->batch.map_fd)) ||
	    (writes && !brt_api_map_can_write(map, (int)attr->batch.map_fd)))
		goto out_put;
	err = -BRT_ENOTSUPP;
	if (!supported(map, op))
		goto out_put;
	err = -EINVAL;
	if (attr->batch.elem_flags & ~(uint64_t)BPF_F_LOCK)
		goto out_put;
	if ((attr->batch.elem_flags & BPF_F_LOCK) && (map->lock_off < 0 || map->lock_res))
		goto out_put;
	/* htab's batches check the command's flags too */
	if (reads && is_hash(map->type) && attr->batch.flags)
		goto out_put;
	err = 0;
	if (!attr->batch.count)
		goto out_put;
	/* the kernel zeroes the caller's count before it starts */
	max_count = attr->batch.count;
	attr->batch.count = 0;
	err = -EFAULT;
	if (BRT_PUT_ATTR(call, batch.count))
		goto out_put;
	attr->batch.count = max_count;
	err = -ENOMEM;
	b.key = malloc(map->key_size + 1);
	b.prev = malloc(map->key_size + 1);
	b.value = malloc(brt_map_value_size(map));
	if (!b.key || !b.prev || !b.value)
		goto out_free;
	if (reads && is_hash(map->type))
		err = walk_hash(call, map, &b, op == LOOKUP_AND_DELETE);
	else if (reads)
		err = walk(call, map, &b, op == LOOKUP_AND_DELETE);
	else
		err = apply(call, map, &b, op == DELETE);
out_free:
	free(b.key);
	free(b.prev);
	free(b.value);
out_put:
	brt_map_put(map);
	return err;
}

int brt_cmd_map_lookup_batch(struct brt_call *call)
{
	return do_batch(call, LOOKUP);
}

int brt_cmd_map_lookup_and_delete_batch(struct brt_call *call)
{
	return do_batch(call, LOOKUP_AND_DELETE);
}

int brt_cmd_map_update_batch(struct brt_call *call)
{
	return do_batch(call, UPDATE);
}

int brt_cmd_map_delete_batch(struct brt_call *call)
{
	return do_batch(call, DELETE);
}
