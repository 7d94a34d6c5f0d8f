/* test_kill_stress.c - processes killed with SIGKILL in the middle of map operations (hash,
 * LRU hash, array, queue, ring buffer, and hash and array maps whose values hold a
 * bpf_spin_lock, updated with BPF_F_LOCK).  Each round runs a writer child, kills it at a
 * random moment, then checks the map in another child under a time limit:
 *   - no deadlock: the check ends within LIMIT_MS although the dead writer may have held a
 *     lock (src/obj/shm.c takes a dead owner's lock over);
 *   - every surviving element whole: values carry their key and a checksum; array values,
 *     written in place without atomicity as in the kernel, word by word; BPF_F_LOCK values
 *     (2 KiB, so that kills land inside the copy) whole, read with BPF_F_LOCK: the lock
 *     taken over from the dead writer finishes its copy from the map's redo journal;
 *   - no lost slot: the map takes max_entries elements again afterwards (hash maps: and
 *     brt_hash_audit() finds count = linked elements, nothing leaked or lost; ring buffer:
 *     nothing left unconsumed, a record of the whole ring fits).
 * 200 rounds per type by default (ctest); BPFRT_STRESS_FULL=1 runs 1,000 per type;
 * BPFRT_STRESS_ONLY=<name> (hash, lru_hash, ...) runs one type.  A lost slot says why.
 */
#include <errno.h>
#include <signal.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"
#include "btf_blob.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define ROUNDS 200       /* per map type; BPFRT_STRESS_FULL=1: 1,000 */
#define ROUNDS_FULL 1000
#define LIMIT_MS 5000    /* a check still running after this is a deadlock */
#define MAX 64
#define RING 4096
#define WORDS 3          /* value: 24 bytes, more than one atomic word */
#define LWORDS 256       /* BPF_F_LOCK maps: a lock word, padding, then 255 more words */

/* check results, as exit status bits of the checking child */
#define R_TORN 2
#define R_LOST 4

struct target {
	const char *name;
	uint32_t type, key_size, value_size, max_entries;
	int lock; /* value { struct bpf_spin_lock; int pad; u64 w[LWORDS - 1]; }, BPF_F_LOCK */
};

static const struct target targets[] = {
	{ "hash", BPF_MAP_TYPE_HASH, 4, 8 * WORDS, MAX },
	{ "lru_hash", BPF_MAP_TYPE_LRU_HASH, 4, 8 * WORDS, MAX },
	{ "array", BPF_MAP_TYPE_ARRAY, 4, 8 * WORDS, MAX },
	{ "queue", BPF_MAP_TYPE_QUEUE, 0, 8 * WORDS, MAX },
	{ "ringbuf", BPF_MAP_TYPE_RINGBUF, 0, 0, RING },
	{ "hash_lock", BPF_MAP_TYPE_HASH, 4, 8 * LWORDS, MAX, 1 },
	{ "array_lock", BPF_MAP_TYPE_ARRAY, 4, 8 * LWORDS, MAX, 1 },
};

static uint32_t mix(uint32_t key, uint32_t gen, uint32_t i)
{
	uint64_t h = ((uint64_t)key << 32 | gen) * 0x9e3779b97f4a7c15ull + i;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h >> 32) | 1; /* never 0: a zero word is "never written" */
}

/* Word i of the value of key written at generation gen: every word names its key. */
static uint64_t word_of(uint32_t key, uint32_t gen, uint32_t i)
{
	return (uint64_t)gen << 32 | mix(key, gen, i);
}

static void fill(uint64_t v[WORDS], uint32_t key, uint32_t gen)
{
	for (uint32_t i = 0; i < WORDS; i++)
		v[i] = word_of(key, gen, i);
}

/* Whole: every word of one generation, written for key. */
static int whole(const uint64_t v[WORDS], uint32_t key)
{
	for (uint32_t i = 0; i < WORDS; i++)
		if (v[i] != word_of(key, (uint32_t)(v[0] >> 32), i))
			return 0;
	return 1;
}

/* BPF_F_LOCK values: words 1.. of one generation for key (word 0: lock and padding). */
static void lfill(uint64_t v[LWORDS], uint32_t key, uint32_t gen)
{
	v[0] = 0;
	for (uint32_t i = 1; i < LWORDS; i++)
		v[i] = word_of(key, gen, i);
}

static int lwhole(const uint64_t v[LWORDS], uint32_t key)
{
	for (uint32_t i = 1; i < LWORDS; i++)
		if (v[i] != word_of(key, (uint32_t)(v[1] >> 32), i))
			return 0;
	return 1;
}

static int lock_elem(int fd, uint32_t key, uint64_t v[LWORDS])
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)v;
	a.flags = BPF_F_LOCK;
	return bpfrt_bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) ? -errno : 0;
}

/* A map whose value is { struct bpf_spin_lock l; int pad; u64 w[LWORDS - 1]; }, every key
 * present (generation 1). */
static int lock_map_create(uint32_t type)
{
	static const char strs[] = "\0int\0bpf_spin_lock\0val\0l\0w\0u64";
	enum { S_INT = 1, S_LOCK = 5, S_VAL = 19, S_L = 23, S_W = 25, S_U64 = 27 };
#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
	const uint32_t types[] = {
		/* [1] int */ S_INT, INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
		/* [2] struct bpf_spin_lock { int val; } */
		S_LOCK, INFO(BTF_KIND_STRUCT, 1), 4, S_INT, 1, 0,
		/* [3] u64 */ S_U64, INFO(BTF_KIND_INT, 0), 8, 64,
		/* [4] u64[LWORDS - 1] */ 0, INFO(BTF_KIND_ARRAY, 0), 0, 3, 1, LWORDS - 1,
		/* [5] struct val { struct bpf_spin_lock l; u64 w[]; at byte 8 } */
		S_VAL, INFO(BTF_KIND_STRUCT, 2), 8 * LWORDS, S_L, 2, 0, S_W, 4, 64,
	};
#undef INFO
	uint64_t v[LWORDS];
	union bpf_attr a;
	int btf, fd;

	btf = btf_blob_load(bpfrt_bpf, types, sizeof(types), strs, sizeof(strs));
	if (btf < 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = 8 * LWORDS;
	a.max_entries = MAX;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = 5;
	fd = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	close(btf);
	for (uint32_t key = 0; fd >= 0 && key < MAX; key++) {
		lfill(v, key, 1);
		if (bpfrt_map_update_elem(fd, &key, v, BPF_ANY))
			return -EIO;
	}
	return fd < 0 ? -errno : fd;
}

/* Array values are written in place word by word (no atomicity without BPF_F_LOCK, as in
 * the kernel): each word must be one written for this key, generations may differ. */
static int words_whole(const uint64_t v[WORDS], uint32_t key, int *mixed)
{
	for (uint32_t i = 0; i < WORDS; i++)
		if (v[i] != word_of(key, (uint32_t)(v[i] >> 32), i) && v[i])
			return 0;
	*mixed += !whole(v, key);
	return 1;
}

static void rb_write(struct brt_map *map, struct bpfrt_run_ctx *ctx, uint32_t gen)
{
	uint32_t words = 1 + gen % 8; /* 8 to 64 bytes */
	uint64_t rec = brt_helper_ringbuf_reserve((uint64_t)(uintptr_t)map, 8 * words, 0, 0,
						  0, ctx);
	uint64_t *p = (uint64_t *)(uintptr_t)rec;

	if (!rec)
		return;
	for (uint32_t i = 0; i < words; i++)
		p[i] = word_of(words, gen, i);
	if (gen % 5 == 0)
		brt_helper_ringbuf_discard(rec, 0, 0, 0, 0, ctx);
	else
		brt_helper_ringbuf_submit(rec, 0, 0, 0, 0, ctx);
}

static void writer(int fd, uint32_t type, struct brt_map *map, int lock)
{
	struct bpfrt_run_ctx ctx;
	uint64_t v[WORDS], lv[LWORDS];

	memset(&ctx, 0, sizeof(ctx));
	for (uint32_t n = (uint32_t)getpid() * 7919;; n++) {
		uint32_t key = n % (MAX + MAX / 2);

		if (lock) {
			key %= MAX;
			lfill(lv, key, n);
			bpfrt_map_update_elem(fd, &key, lv, BPF_F_LOCK | BPF_EXIST);
			continue;
		}
		switch (type) {
		case BPF_MAP_TYPE_QUEUE:
			fill(v, 0, n);
			bpfrt_map_update_elem(fd, NULL, v, n % 2 ? BPF_EXIST : BPF_ANY);
			if (n % 3 == 0)
				bpfrt_map_lookup_and_delete_elem(fd, NULL, v);
			break;
		case BPF_MAP_TYPE_RINGBUF:
			rb_write(map, &ctx, n);
			if (n % 4 == 0)
				bpfrt_ringbuf_consume(fd, NULL, NULL);
			break;
		case BPF_MAP_TYPE_ARRAY:
			key %= MAX;
			fill(v, key, n);
			bpfrt_map_update_elem(fd, &key, v, BPF_ANY);
			break;
		default:
			fill(v, key, n);
			if (n % 4 == 0)
				bpfrt_map_delete_elem(fd, &key);
			else if (n % 7 == 0)
				bpfrt_map_lookup_and_delete_elem(fd, &key, v);
			else
				bpfrt_map_update_elem(fd, &key, v, BPF_ANY);
			break;
		}
	}
}

static int bad_records;

static int check_rec(void *arg, void *data, size_t size)
{
	const uint64_t *p = data;
	uint32_t words = (uint32_t)(size / 8);

	(void)arg;
	if (size % 8 || !words || words > 8) {
		bad_records++;
		return 0;
	}
	for (uint32_t i = 0; i < words; i++)
		bad_records += p[i] != word_of(words, (uint32_t)(p[0] >> 32), i);
	return 0;
}

static int check_ringbuf(int fd, struct brt_map *map)
{
	struct bpfrt_run_ctx ctx;
	uint64_t rec;
	int res = 0, n;

	memset(&ctx, 0, sizeof(ctx));
	/* everything the dead producer committed, and its reserved record discarded: the
	 * consumer reaches producer_pos */
	for (int i = 0; i < 4 && (n = bpfrt_ringbuf_consume(fd, check_rec, NULL)) != 0; i++)
		if (n < 0)
			return R_TORN;
	if (brt_helper_ringbuf_query((uint64_t)(uintptr_t)map, BPF_RB_AVAIL_DATA, 0, 0, 0,
				     &ctx))
		res |= R_LOST;
	/* the whole ring is usable */
	rec = brt_helper_ringbuf_reserve((uint64_t)(uintptr_t)map, RING - 8, 0, 0, 0, &ctx);
	if (!rec)
		return res | R_LOST;
	brt_helper_ringbuf_submit(rec, 0, 0, 0, 0, &ctx);
	if (bpfrt_ringbuf_consume(fd, NULL, NULL) != 1)
		res |= R_LOST;
	return res | (bad_records ? R_TORN : 0);
}

static int check_queue(int fd)
{
	uint64_t v[WORDS];
	int res = 0, n = 0;

	while (!bpfrt_map_lookup_and_delete_elem(fd, NULL, v) && n++ <= MAX)
		if (!whole(v, 0))
			res |= R_TORN;
	if (n > MAX)
		res |= R_LOST;
	for (uint32_t i = 0; i < MAX; i++) {
		fill(v, 0, i);
		if (bpfrt_map_update_elem(fd, NULL, v, BPF_ANY))
			res |= R_LOST;
	}
	if (!bpfrt_map_update_elem(fd, NULL, v, BPF_ANY))
		res |= R_LOST; /* more than max_entries */
	for (uint32_t i = 0; i < MAX; i++)
		if (bpfrt_map_lookup_and_delete_elem(fd, NULL, v) || v[0] != word_of(0, i, 0) ||
		    !whole(v, 0))
			res |= R_LOST;
	return res;
}

static int check_array(int fd, int *mixed)
{
	uint64_t v[WORDS];
	int res = 0;

	for (uint32_t key = 0; key < MAX; key++) {
		if (bpfrt_map_lookup_elem(fd, &key, v))
			res |= R_LOST;
		else if (!words_whole(v, key, mixed))
			res |= R_TORN;
	}
	for (uint32_t key = 0; key < MAX; key++) {
		fill(v, key, 1);
		if (bpfrt_map_update_elem(fd, &key, v, BPF_ANY))
			res |= R_LOST;
	}
	return res;
}

static int check_hash(int fd, uint32_t type, struct brt_map *map)
{
	struct brt_hash_audit a;
	uint32_t key, next;
	uint64_t v[WORDS];
	int res = 0, have = 0, steps = 0;

	while (!bpfrt_map_get_next_key(fd, have ? &key : NULL, &next) && steps++ < 4 * MAX) {
		key = next;
		have = 1;
		if (!bpfrt_map_lookup_elem(fd, &key, v) && !whole(v, key))
			res |= R_TORN;
	}
	while (!bpfrt_map_get_next_key(fd, NULL, &next) && steps++ < 8 * MAX)
		bpfrt_map_delete_elem(fd, &next);
	/* max_entries keys fit, and (LRU) none of them was evicted to make room */
	for (key = 1000; key < 1000 + MAX; key++) {
		int err;

		fill(v, key, 1);
		err = bpfrt_map_update_elem(fd, &key, v, BPF_NOEXIST);
		if (err) {
			fprintf(stderr, "lost: refill of key %u: %d\n", key, err);
			res |= R_LOST;
		}
	}
	for (key = 1000; key < 1000 + MAX; key++)
		if (bpfrt_map_lookup_elem(fd, &key, v) || !whole(v, key)) {
			fprintf(stderr, "lost: key %u gone or torn after the refill\n", key);
			res |= R_LOST;
		}
	key = 2000;
	if (type == BPF_MAP_TYPE_HASH && bpfrt_map_update_elem(fd, &key, v, BPF_NOEXIST) != -E2BIG)
		res |= R_LOST;
	/* a lock taken over during the last updates leaves a sweep pending for the next
	 * writer (get_next_key sweeps too): let it run, then nothing may remain */
	if (!brt_hash_audit(map, &a) && a.repair)
		bpfrt_map_get_next_key(fd, NULL, &next);
	if (brt_hash_audit(map, &a) || a.count != MAX || a.linked != MAX || a.leaked ||
	    a.lost || a.torn || a.repair) {
		fprintf(stderr, "lost: audit count %u linked %u leaked %u lost %u torn %u "
			"repair %u\n", (unsigned)a.count, (unsigned)a.linked, (unsigned)a.leaked,
			(unsigned)a.lost, (unsigned)a.torn, (unsigned)a.repair);
		res |= R_LOST;
	}
	return res;
}

/* BPF_F_LOCK maps: every key there (none is deleted), every value whole; hash: the
 * audit finds nothing lost or leaked. */
static int check_locked(int fd, uint32_t type, struct brt_map *map)
{
	struct brt_hash_audit a;
	uint64_t v[LWORDS];
	int res = 0;

	for (uint32_t key = 0; key < MAX; key++) {
		if (lock_elem(fd, key, v))
			res |= R_LOST;
		else if (!lwhole(v, key))
			res |= R_TORN;
	}
	if (type == BPF_MAP_TYPE_HASH &&
	    (brt_hash_audit(map, &a) || a.count != MAX || a.linked != MAX || a.leaked ||
	     a.lost || a.torn || a.repair))
		res |= R_LOST;
	return res;
}

/* 0 ok, else R_TORN | R_LOST bits, 1 deadlock, 8 crash; *mixed counts array values whose
 * words come from different updates (allowed, as in the kernel) */
static int check_in_child(int fd, uint32_t type, struct brt_map *map, int lock, int *mixed)
{
	struct timespec ms = { 0, 1000000 };
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		return 8;
	pid = fork();
	if (pid == 0) {
		int res, m = 0;

		close(p[0]);
		switch (lock ? 0u : type) {
		case 0:
			res = check_locked(fd, type, map);
			break;
		case BPF_MAP_TYPE_RINGBUF:
			res = check_ringbuf(fd, map);
			break;
		case BPF_MAP_TYPE_QUEUE:
			res = check_queue(fd);
			break;
		case BPF_MAP_TYPE_ARRAY:
			res = check_array(fd, &m);
			break;
		default:
			res = check_hash(fd, type, map);
			break;
		}
		if (write(p[1], &m, sizeof(m)) != sizeof(m))
			_exit(8);
		_exit(res);
	}
	close(p[1]);
	for (int waited = 0; waited < LIMIT_MS; waited++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			int m = 0;

			if (read(p[0], &m, sizeof(m)) == sizeof(m))
				*mixed += m;
			close(p[0]);
			return WIFEXITED(st) ? WEXITSTATUS(st) & (R_TORN | R_LOST | 8) : 8;
		}
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(p[0]);
	return 1;
}

int main(void)
{
	const char *full = getenv("BPFRT_STRESS_FULL");
	int rounds = full && *full == '1' ? ROUNDS_FULL : ROUNDS, total = 0;
	int deadlocks = 0, torn = 0, lost = 0, crashes = 0;

	srand((unsigned)time(NULL));
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		const struct target *tg = &targets[t];
		const char *only = getenv("BPFRT_STRESS_ONLY"); /* one type by name */
		int fd = tg->lock ? lock_map_create(tg->type) :
				    bpfrt_map_create(tg->type, tg->name, tg->key_size,
						     tg->value_size, tg->max_entries, NULL);
		int d = 0, tn = 0, l = 0, c = 0, mixed = 0;
		struct timespec t0, t1;
		struct brt_map *map;

		if (only && *only && strcmp(only, tg->name)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		T_CASE(tg->name);
		T_ASSERT(fd >= 0 && !brt_map_from_fd(fd, &map));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int r = 0; r < rounds; r++) {
			struct timespec delay = { 0, (long)(rand() % 2000) * 1000 };
			pid_t pid = fork();
			int st, res;

			if (pid == 0) {
				writer(fd, tg->type, map, tg->lock);
				_exit(0);
			}
			nanosleep(&delay, NULL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			res = check_in_child(fd, tg->type, map, tg->lock, &mixed);
			d += res == 1;
			c += !!(res & 8);
			tn += !!(res & R_TORN) && !(res & 8);
			l += !!(res & R_LOST) && !(res & 8);
			if (res)
				T_FAIL("round %d: %s%s%s%s", r, res == 1 ? "deadlock " : "",
				       res != 1 && (res & R_TORN) ? "torn element " : "",
				       res != 1 && (res & R_LOST) ? "lost slot " : "",
				       res & 8 ? "crash" : "");
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%s: %d rounds in %.1f s: %d deadlocks, %d torn, %d with lost slots, "
		       "%d crashes", tg->name, rounds,
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		       d, tn, l, c);
		if (tg->type == BPF_MAP_TYPE_ARRAY && !tg->lock)
			printf(" (%d values with words of different updates: allowed)", mixed);
		printf("\n");
		deadlocks += d;
		torn += tn;
		lost += l;
		crashes += c;
		total += rounds;
		brt_map_put(map);
		close(fd);
	}
	printf("kill -9: %d rounds: %d deadlocks, %d torn, %d with lost slots, %d crashes\n",
	       total, deadlocks, torn, lost, crashes);
	T_EQ_INT(0, deadlocks + torn + lost + crashes);
	return t_done();
}
