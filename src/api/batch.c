/* batch.c - the four BPF_MAP_*_BATCH commands, after the kernel's generic_map_*_batch():
 * elements one by one through the single-element code, count written back with how many
 * were done, ENOENT once a lookup walk reaches the end.  The batch token (in_batch /
 * out_batch) is the last key, for hash maps too (the kernel's hash maps use a bucket
 * number there): callers that treat it as opaque, as they must, see no difference.
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
	if (op == LOOKUP || op == LOOKUP_AND_DELETE)
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
