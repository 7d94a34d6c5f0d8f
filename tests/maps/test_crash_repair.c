/* test_crash_repair.c - the repair of a hash map after a process was killed in the middle
 * of an operation (src/maps/hash.c, docs/MEMORY_MODEL.md "Crashes"), on states built by
 * hand: a dead writer's lock word over a count reserved for nothing and a leaked element,
 * over an element left odd by an in-place rewrite, over a replacement linked before the
 * old element was unlinked, and a dead allocator lock over a half-updated free list.  The
 * random kills of tests/maps/test_kill_stress.c seldom stop a writer at exactly these
 * points; here each is made on purpose and must come out whole, with no slot lost.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"
#include "maps/maps.h"

/* hash.c's region, layout version 2, for max_entries 8, key 4, value 24: a 64-byte
 * header, 8 buckets of { lock, head }, elements from offset 128 of 16 + 8 + 24 bytes
 * ({ next, hash, stamp, seq }, key, value), then one allocation word per element.  The
 * test checks these against the geometry the header stores. */
#define MAX 8
#define NB 8
#define NE (MAX + 16)
#define ESIZE 48
#define EOFF 128
#define A_USED (1u << 31)
#define A_LISTED (1u << 30)

static _Atomic uint32_t *word(struct brt_map *map, size_t off)
{
	return (_Atomic uint32_t *)(void *)((unsigned char *)map->data + off);
}

#define COUNT(m) word(m, 0)
#define ALLOC_LOCK(m) word(m, 4)
#define FREE_HEAD(m) word(m, 8)
#define BUMP(m) word(m, 12)
#define BUCKET_LOCK(m, b) word(m, 64 + 8 * (size_t)(b))
#define BUCKET_HEAD(m, b) word(m, 64 + 8 * (size_t)(b) + 4)
#define ELEM(m, i) ((unsigned char *)(m)->data + EOFF + (size_t)((i) - 1) * ESIZE)
#define E_NEXT(m, i) word(m, EOFF + (size_t)((i) - 1) * ESIZE)
#define E_HASH(m, i) word(m, EOFF + (size_t)((i) - 1) * ESIZE + 4)
#define E_SEQ(m, i) word(m, EOFF + (size_t)((i) - 1) * ESIZE + 12)
#define ALLOC(m, i) word(m, EOFF + (size_t)NE * ESIZE + 4 * (size_t)((i) - 1))

/* The lock word a thread of a process that has exited (and was reaped) left. */
static uint32_t dead_word(void)
{
	uint32_t w = 0;
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		return 0;
	pid = fork();
	if (pid == 0) {
		w = brt_shm_self();
		_exit(write(p[1], &w, 4) == 4 ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &w, 4) != 4)
		w = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return w;
}

static void value_of(uint64_t v[3], uint32_t gen)
{
	v[0] = v[1] = v[2] = gen;
}

/* The element holding key (1-based index), 0 when absent. */
static uint32_t elem_of(struct brt_map *map, uint32_t key)
{
	unsigned char *v = map->ops->lookup(map, &key);

	return v ? (uint32_t)((v - 24 - ELEM(map, 1)) / ESIZE) + 1 : 0;
}

/* After one more writer call (a delete of an absent key: writers sweep when a repair is
 * due), the map's bookkeeping holds expect elements and nothing else. */
static int audit_clean(int fd, struct brt_map *map, uint32_t expect)
{
	struct brt_hash_audit a;
	uint32_t absent = 999;

	bpfrt_map_delete_elem(fd, &absent);
	if (brt_hash_audit(map, &a))
		return 0;
	if (a.count != expect || a.linked != expect || a.leaked || a.lost || a.torn ||
	    a.repair)
		printf("  audit: count %u linked %u leaked %u lost %u torn %u repair %u\n",
		       a.count, a.linked, a.leaked, a.lost, a.torn, a.repair);
	return a.count == expect && a.linked == expect && !a.leaked && !a.lost && !a.torn &&
	       !a.repair;
}

static int make(struct brt_map **map)
{
	int fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "repair", 4, 24, MAX, NULL);

	if (fd < 0 || brt_map_from_fd(fd, map))
		return -1;
	/* the layout this test builds states in */
	if (atomic_load(word(*map, 16)) != NB || atomic_load(word(*map, 20)) != NE ||
	    atomic_load(word(*map, 24)) != ESIZE || atomic_load(word(*map, 40)) != 2) {
		printf("hash.c's layout changed: update this test\n");
		return -1;
	}
	return fd;
}

static void done(int fd, struct brt_map *map)
{
	brt_map_put(map);
	close(fd);
}

/* Killed between reserving a count and linking the element it allocated, holding a bucket
 * lock nobody touches again: the map must still take max_entries keys. */
static void leaked_slot(void)
{
	struct brt_map *map;
	int fd = make(&map), n = 0;
	uint64_t v[3];

	T_CASE("count reserved and element allocated, never linked");
	T_ASSERT(fd >= 0);
	atomic_store(COUNT(map), 1);
	atomic_store(ALLOC(map, NE), A_USED);
	atomic_store(BUCKET_LOCK(map, 5), dead_word());
	value_of(v, 1);
	for (uint32_t key = 0; key < 64 && n < MAX; key++)
		n += !bpfrt_map_update_elem(fd, &key, v, BPF_NOEXIST);
	T_EQ_INT(MAX, n);
	T_ASSERT(audit_clean(fd, map, MAX));
	done(fd, map);
}

/* Killed rewriting a linked element in place (per-CPU values, or all spares in flight):
 * the element is odd for good; after the takeover it is gone, never shown torn. */
static void odd_element(void)
{
	struct brt_map *map;
	int fd = make(&map);
	uint32_t key = 3, idx, b;
	uint64_t v[3];

	T_CASE("element left odd by an in-place rewrite");
	T_ASSERT(fd >= 0);
	value_of(v, 1);
	T_EQ_INT(0, bpfrt_map_update_elem(fd, &key, v, BPF_ANY));
	idx = elem_of(map, key);
	T_ASSERT(idx);
	b = atomic_load(E_HASH(map, idx)) % NB;
	atomic_fetch_or(E_SEQ(map, idx), 1);
	memset(ELEM(map, idx) + 24, 0xee, 12); /* half of the new value */
	atomic_store(BUCKET_LOCK(map, b), dead_word());
	T_EQ_INT(-ENOENT, bpfrt_map_lookup_elem(fd, &key, v));
	key = 4;
	T_EQ_INT(0, bpfrt_map_update_elem(fd, &key, v, BPF_ANY));
	T_ASSERT(audit_clean(fd, map, 1));
	done(fd, map);
}

/* Killed between linking a replacement at the chain head and unlinking the old element:
 * the key is there twice.  A delete must not bring the old value back. */
static void duplicate_key(void)
{
	struct brt_map *map;
	int fd = make(&map);
	uint32_t key = 3, a, dup = NE, b;
	uint64_t v[3];

	T_CASE("replacement linked before the old element was unlinked");
	T_ASSERT(fd >= 0);
	value_of(v, 1);
	T_EQ_INT(0, bpfrt_map_update_elem(fd, &key, v, BPF_ANY));
	a = elem_of(map, key);
	T_ASSERT(a && a != dup);
	b = atomic_load(E_HASH(map, a)) % NB;
	memcpy(ELEM(map, dup), ELEM(map, a), ESIZE);
	value_of(v, 2);
	memcpy(ELEM(map, dup) + 24, v, 24);
	atomic_store(E_SEQ(map, dup), 2);
	atomic_store(E_NEXT(map, dup), a);
	atomic_store(ALLOC(map, dup), A_USED);
	atomic_store(BUCKET_HEAD(map, b), dup);
	atomic_store(COUNT(map), 2); /* as the killed update left it: its slot reserved */
	atomic_store(BUCKET_LOCK(map, b), dead_word());
	T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &key, v));
	T_EQ_INT(2, (int)v[0]);
	T_EQ_INT(0, bpfrt_map_delete_elem(fd, &key));
	T_EQ_INT(-ENOENT, bpfrt_map_lookup_elem(fd, &key, v));
	T_ASSERT(audit_clean(fd, map, 0));
	done(fd, map);
}

/* Killed inside the allocator (an element popped from the free list, not yet marked):
 * the allocator lock is taken over and the element is back after the sweep. */
static void allocator(void)
{
	struct brt_map *map;
	int fd = make(&map), n = 0;
	uint64_t v[3];

	T_CASE("allocator lock of a dead process, element off the free list");
	T_ASSERT(fd >= 0);
	value_of(v, 1);
	/* twice: replacements take elements past the homes, which the deletes free */
	for (uint32_t key = 0; key < 2 * MAX; key++)
		n += !bpfrt_map_update_elem(fd, &(uint32_t){ key % MAX }, v, BPF_ANY);
	T_EQ_INT(2 * MAX, n);
	for (uint32_t key = 0; key < MAX; key++)
		bpfrt_map_delete_elem(fd, &key);
	/* a free element that is no bucket's home taken off the list as the allocator pops
	 * one, its listed bit still set: the allocator will never hand it out again */
	{
		_Atomic uint32_t *link = FREE_HEAD(map);
		uint32_t idx = atomic_load(link), steps = 0;

		while (idx && idx <= NB && steps++ < NE) {
			link = ALLOC(map, idx);
			idx = atomic_load(link) & (A_LISTED - 1);
		}
		T_ASSERT(idx > NB && idx <= NE);
		atomic_store(link, (atomic_load(link) & ~(A_LISTED - 1)) |
					   (atomic_load(ALLOC(map, idx)) & (A_LISTED - 1)));
		atomic_store(ALLOC_LOCK(map), dead_word());
	}
	n = 0;
	for (uint32_t key = 100; key < 200 && n < MAX; key++)
		n += !bpfrt_map_update_elem(fd, &key, v, BPF_NOEXIST);
	T_EQ_INT(MAX, n);
	T_EQ_INT(0, bpfrt_map_delete_elem(fd, &(uint32_t){ 100 })); /* a writer: sweeps */
	T_ASSERT(audit_clean(fd, map, MAX - 1));
	done(fd, map);
}

int main(void)
{
	leaked_slot();
	odd_element();
	duplicate_key();
	allocator();
	return t_done();
}
