/* bloom.c - bloom filter maps (the kernel's bloom_filter.c): a bit array probed by
 * map_extra's nr_hash_funcs hashes of the value.  Keyless: push sets the value's bits
 * (BPF_ANY only), peek answers 0 when all are set and -ENOENT otherwise; nothing can be
 * deleted or iterated.
 *
 * The sizes and the hash are the kernel's, so that a filter with BPF_F_ZERO_SEED answers
 * every peek as the kernel's does, false positives included: nr_hash_funcs * max_entries
 * * 7 / 5 bits rounded up to a power of two (at least 64; 2^32 when that overflows), and
 * bit i of a value is jhash2 (value_size a multiple of 4) or jhash of it with seed
 * hash_seed + i, masked.  The bits live in the shared region after a small header; a
 * corrupt bit only changes answers, so only the header is checked when another process
 * maps the file.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "maps/maps.h"

#define BLOOM_FLAGS                                                                     \
	(BPF_F_NUMA_NODE | BPF_F_ZERO_SEED | BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | \
	 BPF_F_WRONLY_PROG)

struct bloom_head {
	uint32_t nr_hash_funcs;
	uint32_t bitset_mask; /* bits - 1 */
	uint32_t hash_seed;
	uint32_t pad;
	_Atomic uint64_t bits[]; /* (bitset_mask + 1) / 64 words, set with atomic OR */
};

/* ---- Bob Jenkins' lookup3 as the kernel's <linux/jhash.h> uses it ---------------------- */
#define JHASH_INITVAL 0xdeadbeefu

static inline uint32_t rol32(uint32_t w, unsigned s)
{
	return (w << s) | (w >> (32 - s));
}

#define JHASH_MIX(a, b, c)                          \
	do {                                        \
		a -= c; a ^= rol32(c, 4); c += b;   \
		b -= a; b ^= rol32(a, 6); a += c;   \
		c -= b; c ^= rol32(b, 8); b += a;   \
		a -= c; a ^= rol32(c, 16); c += b;  \
		b -= a; b ^= rol32(a, 19); a += c;  \
		c -= b; c ^= rol32(b, 4); b += a;   \
	} while (0)

#define JHASH_FINAL(a, b, c)                         \
	do {                                         \
		c ^= b; c -= rol32(b, 14);           \
		a ^= c; a -= rol32(c, 11);           \
		b ^= a; b -= rol32(a, 25);           \
		c ^= b; c -= rol32(b, 16);           \
		a ^= c; a -= rol32(c, 4);            \
		b ^= a; b -= rol32(a, 14);           \
		c ^= b; c -= rol32(b, 24);           \
	} while (0)

static uint32_t load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4); /* the kernel's get_unaligned_cpu32: host byte order */
	return v;
}

/* jhash2: a whole number of 32-bit words (also the stack trace map's bucket hash,
 * stackmap.c) */
uint32_t brt_map_jhash2(const void *key, uint32_t words, uint32_t seed)
{
	const unsigned char *k = key;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + (words << 2) + seed;
	for (; words > 3; words -= 3, k += 12) {
		a += load32(k);
		b += load32(k + 4);
		c += load32(k + 8);
		JHASH_MIX(a, b, c);
	}
	switch (words) {
	case 3:
		c += load32(k + 8);
		__attribute__((fallthrough));
	case 2:
		b += load32(k + 4);
		__attribute__((fallthrough));
	case 1:
		a += load32(k);
		JHASH_FINAL(a, b, c);
		break;
	default:
		break;
	}
	return c;
}

/* jhash: any length of bytes (also the sockhash's bucket hash, sockmap.c) */
uint32_t brt_map_jhash(const unsigned char *k, uint32_t len, uint32_t seed)
{
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + len + seed;
	for (; len > 12; len -= 12, k += 12) {
		a += load32(k);
		b += load32(k + 4);
		c += load32(k + 8);
		JHASH_MIX(a, b, c);
	}
	switch (len) {
	case 12: c += (uint32_t)k[11] << 24; __attribute__((fallthrough));
	case 11: c += (uint32_t)k[10] << 16; __attribute__((fallthrough));
	case 10: c += (uint32_t)k[9] << 8; __attribute__((fallthrough));
	case 9:  c += k[8]; __attribute__((fallthrough));
	case 8:  b += (uint32_t)k[7] << 24; __attribute__((fallthrough));
	case 7:  b += (uint32_t)k[6] << 16; __attribute__((fallthrough));
	case 6:  b += (uint32_t)k[5] << 8; __attribute__((fallthrough));
	case 5:  b += k[4]; __attribute__((fallthrough));
	case 4:  a += (uint32_t)k[3] << 24; __attribute__((fallthrough));
	case 3:  a += (uint32_t)k[2] << 16; __attribute__((fallthrough));
	case 2:  a += (uint32_t)k[1] << 8; __attribute__((fallthrough));
	case 1:
		a += k[0];
		JHASH_FINAL(a, b, c);
		break;
	default:
		break;
	}
	return c;
}

/* ---- sizes ------------------------------------------------------------------------------ */
static uint32_t nr_hashes(uint64_t map_extra)
{
	return map_extra ? (uint32_t)map_extra : 5; /* the kernel's default */
}

/* The kernel's bloom_map_alloc(): bits - 1 for these parameters. */
static uint32_t bitset_mask(uint32_t max_entries, uint32_t k)
{
	uint64_t bits = (uint64_t)max_entries * k;

	if (bits > UINT32_MAX)
		return UINT32_MAX;
	bits = bits / 5 * 7; /* 7 / 5 approximates 1 / ln 2; the division first, as there */
	if (bits > UINT32_MAX || bits > (1ull << 31))
		return UINT32_MAX;
	if (bits <= 64)
		return 63;
	return (uint32_t)((1ull << (64 - __builtin_clzll(bits - 1))) - 1); /* roundup_pow_of_two */
}

static int bloom_alloc_check(const union bpf_attr *attr)
{
	uint32_t f = attr->map_flags;

	/* the kernel's bloom_map_alloc_check(), then bloom_map_alloc() */
	if (attr->value_size > (4u << 20))
		return -E2BIG;
	if (attr->key_size || !attr->value_size || !attr->max_entries || (f & ~BLOOM_FLAGS) ||
	    ((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG)) || (attr->map_extra & ~0xFull))
		return -EINVAL;
	return 0;
}

static int bloom_data_size(const struct brt_map *map, uint64_t *size)
{
	uint64_t bits = (uint64_t)bitset_mask(map->max_entries, nr_hashes(map->map_extra)) + 1;

	*size = sizeof(struct bloom_head) + bits / 8;
	return 0;
}

static int bloom_init(struct brt_map *map)
{
	struct bloom_head *h = map->data;

	h->nr_hash_funcs = nr_hashes(map->map_extra);
	h->bitset_mask = bitset_mask(map->max_entries, h->nr_hash_funcs);
	if (!(map->flags & BPF_F_ZERO_SEED) &&
	    getrandom(&h->hash_seed, sizeof(h->hash_seed), 0) != sizeof(h->hash_seed))
		return -EAGAIN;
	return 0;
}

/* Another process's file: the header must be what the map's parameters give (the seed
 * may be anything), read once. */
static int bloom_attach(struct brt_map *map)
{
	const volatile struct bloom_head *h = map->data;
	uint32_t k = h->nr_hash_funcs, mask = h->bitset_mask;

	if (map->map_extra > 15 || k != nr_hashes(map->map_extra) ||
	    mask != bitset_mask(map->max_entries, k))
		return -EINVAL;
	return 0;
}

/* The bits of one value.  The hash count and the mask are the map's own (its parameters,
 * checked against the header at attach), never re-read from the shared header: a
 * scribbled mask would index past the region.  Only the seed is read there, once; any
 * seed is harmless. */
struct probe {
	uint32_t k, mask, seed;
};

static struct probe probe_of(const struct brt_map *map, const struct bloom_head *h)
{
	struct probe p;

	p.k = nr_hashes(map->map_extra);
	p.mask = bitset_mask(map->max_entries, p.k);
	p.seed = *(const volatile uint32_t *)&h->hash_seed;
	return p;
}

static uint32_t bit_of(const struct brt_map *map, const struct probe *p, const void *value,
		       uint32_t i)
{
	uint32_t v;

	if (map->value_size % 4 == 0)
		v = brt_map_jhash2(value, map->value_size / 4, p->seed + i);
	else
		v = brt_map_jhash(value, map->value_size, p->seed + i);
	return v & p->mask;
}

static int bloom_push(struct brt_map *map, const void *value, uint64_t flags)
{
	struct bloom_head *h = map->data;
	struct probe p = probe_of(map, h);

	if (flags != BPF_ANY)
		return -EINVAL;
	for (uint32_t i = 0; i < p.k; i++) {
		uint32_t b = bit_of(map, &p, value, i);

		atomic_fetch_or_explicit(&h->bits[b / 64], 1ull << (b % 64), memory_order_relaxed);
	}
	return 0;
}

/* value is the caller's input here, not an output */
static int bloom_peek(struct brt_map *map, void *value)
{
	struct bloom_head *h = map->data;
	struct probe p = probe_of(map, h);

	for (uint32_t i = 0; i < p.k; i++) {
		uint32_t b = bit_of(map, &p, value, i);

		if (!(atomic_load_explicit(&h->bits[b / 64], memory_order_relaxed) &
		      (1ull << (b % 64))))
			return -ENOENT;
	}
	return 0;
}

static int bloom_not_supported(struct brt_map *map, const void *key)
{
	(void)map, (void)key;
	return -EOPNOTSUPP;
}

static int bloom_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	(void)map, (void)key, (void)next_key;
	return -EOPNOTSUPP;
}

const struct brt_map_ops brt_bloom_map_ops = {
	.btf = BRT_MAP_BTF_KEYLESS,
	.ro_reads = 1, /* a lookup reads bits, nothing else */
	.alloc_check = bloom_alloc_check,
	.data_size = bloom_data_size,
	.init = bloom_init,
	.attach = bloom_attach,
	.delete = bloom_not_supported,
	.get_next_key = bloom_get_next_key,
	.push = bloom_push,
	.peek = bloom_peek,
};
