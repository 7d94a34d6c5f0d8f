/* memlock.c - what the kernel reports as a map's "memlock" (its map_mem_usage op, shown
 * by /proc/PID/fdinfo and so by `bpftool map show`), computed from the map's geometry
 * with the kernel's formulas so that tools print the same figure for the same map.  The
 * structure sizes are those of Linux 6.18 on x86-64 (read from its BTF: struct bpf_array
 * 312 bytes, bpf_htab 832, bucket 16, htab_elem 48, bpf_queue_stack 312,
 * bpf_ringbuf_map 304); another kernel's differ by some bytes.  Types without a formula
 * here answer -EOPNOTSUPP (their fdinfo shows no memlock line rather than a wrong one).
 */
#include <errno.h>
#include <linux/bpf.h>

#include "maps/maps.h"
#include "obj/obj.h"

#define K_PAGE 4096ull
#define K_BPF_ARRAY 312ull
#define K_BPF_HTAB 832ull
#define K_BUCKET 16ull
#define K_HTAB_ELEM 48ull
#define K_HTAB_LOCKS 8ull /* HASHTAB_MAP_LOCK_COUNT */
#define K_LLIST_NODE 8ull
#define K_QUEUE_STACK 312ull
#define K_RINGBUF_MAP 304ull
#define K_RINGBUF_META_PAGES 3ull /* the header page, then consumer and producer pages */

static uint64_t round8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

static uint64_t page_align(uint64_t v)
{
	return (v + K_PAGE - 1) & ~(K_PAGE - 1);
}

static uint64_t pow2_up(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* htab_map_mem_usage(): buckets, per-CPU lock counters, then the elements: all of them
 * when preallocated (plus one spare per CPU for a plain hash), the linked ones when not. */
static uint64_t htab_usage(const struct brt_map *map, uint64_t cpus, uint64_t linked)
{
	int percpu = map->type == BPF_MAP_TYPE_PERCPU_HASH ||
		     map->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	int lru = map->type == BPF_MAP_TYPE_LRU_HASH || map->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	int prealloc = lru || !(map->flags & BPF_F_NO_PREALLOC);
	uint64_t value = round8(map->value_size);
	uint64_t elem = K_HTAB_ELEM + round8(map->key_size) + (percpu ? 8 : value);
	uint64_t usage = K_BPF_HTAB + K_BUCKET * pow2_up(map->max_entries ? map->max_entries : 1) +
			 4 * cpus * K_HTAB_LOCKS;
	uint64_t n;

	if (prealloc) {
		n = map->max_entries + (!percpu && !lru ? cpus : 0);
		usage += elem * n;
		if (percpu)
			usage += value * cpus * n;
		else if (!lru)
			usage += 8 * cpus;
	} else {
		usage += (elem + K_LLIST_NODE) * linked;
		if (percpu)
			usage += (K_LLIST_NODE + 8 + value * cpus) * linked;
	}
	return usage;
}

int brt_map_kernel_memlock(const struct brt_map *map, uint64_t *out)
{
	uint64_t cpus = brt_ncpus(), entries = map->max_entries;
	uint64_t elem = round8(map->value_size), data_pages;

	switch (map->type) {
	case BPF_MAP_TYPE_ARRAY:
		*out = map->flags & BPF_F_MMAPABLE ?
			       page_align(K_BPF_ARRAY) + page_align(entries * elem) :
			       K_BPF_ARRAY + entries * elem;
		return 0;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		*out = K_BPF_ARRAY + entries * 8 + entries * elem * cpus;
		return 0;
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		/* fd arrays are arrays of 4-byte values, 8 bytes a slot */
		*out = K_BPF_ARRAY + entries * elem;
		return 0;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		*out = htab_usage(map, cpus, brt_hash_count(map));
		return 0;
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
		*out = K_QUEUE_STACK + (entries + 1) * map->value_size;
		return 0;
	case BPF_MAP_TYPE_RINGBUF:
		data_pages = entries / K_PAGE;
		*out = K_RINGBUF_MAP + (K_RINGBUF_META_PAGES + data_pages) * K_PAGE +
		       (K_RINGBUF_META_PAGES + 2 * data_pages) * 8;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}
