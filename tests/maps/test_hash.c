/* test_hash.c - the hash map's element allocator under churn: homes taken and given back,
 * the free list with entries taken as homes meanwhile, in-place one-word updates and
 * out-of-place larger ones.  Round after round a full map must take exactly max_entries
 * keys (E2BIG for one more, an update of a present key still succeeds), hold the values
 * last written, iterate over exactly its keys, and empty completely: an element lost or
 * handed out twice shows up as a wrong count, a wrong value or an early E2BIG.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"

#define ENTRIES 64
#define ROUNDS 40

struct variant {
	const char *name;
	uint32_t type;
	uint32_t value_size; /* 8: updated in place; larger: a fresh element per update */
	uint32_t flags;      /* BPF_F_NO_PREALLOC: elements reserved as used, no homes */
};

static const struct variant variants[] = {
	{ "hash, one-word values", BPF_MAP_TYPE_HASH, 8 },
	{ "hash, 24-byte values", BPF_MAP_TYPE_HASH, 24 },
	{ "hash, 4-byte values", BPF_MAP_TYPE_HASH, 4 },
	{ "lru_hash, 24-byte values", BPF_MAP_TYPE_LRU_HASH, 24 },
	{ "percpu_hash, one-word values", BPF_MAP_TYPE_PERCPU_HASH, 8 },
	{ "hash, no prealloc, 24-byte values", BPF_MAP_TYPE_HASH, 24, BPF_F_NO_PREALLOC },
	{ "hash, no prealloc, one-word values", BPF_MAP_TYPE_HASH, 8, BPF_F_NO_PREALLOC },
	{ "percpu_hash, no prealloc", BPF_MAP_TYPE_PERCPU_HASH, 8, BPF_F_NO_PREALLOC },
};

/* A value buffer big enough for every CPU of a per-CPU map, filled with a pattern of
 * (key, round). */
static void fill_value(uint64_t *v, size_t words, uint32_t key, uint32_t round)
{
	for (size_t i = 0; i < words; i++)
		v[i] = (uint64_t)key << 32 | round << 8 | i;
}

static int count_keys(int fd)
{
	uint32_t key, next;
	int n = 0;

	for (int err = bpfrt_map_get_next_key(fd, NULL, &next); !err && n <= 2 * ENTRIES;
	     err = bpfrt_map_get_next_key(fd, &key, &next)) {
		key = next;
		n++;
	}
	return n;
}

static void churn(const struct variant *v)
{
	int percpu = v->type == BPF_MAP_TYPE_PERCPU_HASH, ncpu = bpfrt_num_possible_cpus();
	size_t words = percpu ? (size_t)ncpu * ((v->value_size + 7) / 8) : (v->value_size + 7) / 8;
	uint64_t *val = calloc(words, 8), *got = calloc(words, 8), *want = calloc(words, 8);
	uint32_t keys[ENTRIES], extra;
	int fd;

	T_CASE(v->name);
	T_ASSERT(val && got && want && ncpu > 0);
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = v->flags);
	fd = bpfrt_map_create(v->type, "churn", 4, v->value_size, ENTRIES, &o);
	T_ASSERT(fd >= 0);
	srand(7);
	for (uint32_t round = 0; round < ROUNDS; round++) {
		/* a different key set each round: different homes, collisions, free-list order */
		for (int i = 0; i < ENTRIES; i++) {
			keys[i] = (uint32_t)rand();
			for (int j = 0; j < i; j++)
				if (keys[j] == keys[i])
					keys[i]++, j = -1;
			fill_value(val, words, keys[i], round);
			T_EQ_INT(0, bpfrt_map_update_elem(fd, &keys[i], val, BPF_NOEXIST));
		}
		extra = keys[0] ^ 0x80000000u;
		if (v->type != BPF_MAP_TYPE_LRU_HASH)
			T_EQ_INT(-E2BIG, bpfrt_map_update_elem(fd, &extra, val, BPF_ANY));
		/* replace every value of the full map (odd keys twice) */
		for (int i = 0; i < ENTRIES; i++)
			for (uint32_t n = 0; n <= (keys[i] & 1); n++) {
				fill_value(val, words, keys[i], round + 1000 + n);
				T_EQ_INT(0, bpfrt_map_update_elem(fd, &keys[i], val, BPF_EXIST));
			}
		T_EQ_INT(ENTRIES, count_keys(fd));
		for (int i = 0; i < ENTRIES; i++) {
			fill_value(want, words, keys[i], round + 1000 + (keys[i] & 1));
			if (v->value_size < 8)
				want[0] &= 0xffffffffull;
			T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &keys[i], got));
			T_EQ_INT(0, memcmp(want, got, percpu ? words * 8 : v->value_size));
		}
		/* empty it in an order other than insertion's, half by lookup_and_delete */
		for (int i = ENTRIES - 1; i >= 0; i--) {
			int idx = (i * 37) % ENTRIES;

			if (i & 1 || percpu)
				T_EQ_INT(0, bpfrt_map_delete_elem(fd, &keys[idx]));
			else
				T_EQ_INT(0, bpfrt_map_lookup_and_delete_elem(fd, &keys[idx], got));
		}
		T_EQ_INT(0, count_keys(fd));
	}
	close(fd);
	free(val);
	free(got);
	free(want);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		churn(&variants[i]);
	return t_done();
}
