/* test_corrupt.c - maps whose shared region another process scribbles on (anyone who can
 * write a map's file can): every operation must still end, without a crash, an endless
 * iteration or a hang (docs/MEMORY_MODEL.md, "Corrupt regions").  First the corruptions
 * that once crashed or hung (a hash key moved out of its bucket, an LPM prefix length past
 * the key, ring buffer record headers and positions, queue indexes), then random writes
 * into live regions of each map type between operations.  Every case runs in a child with
 * a time limit: a signal is a crash, the limit a hang, exit status 3 an iteration that
 * never ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"
#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#define TRIALS_PER_TYPE 60 /* 9 types: 540 trials */
#define ROUNDS 8           /* corrupt, then exercise, this many times per trial */
#define LIMIT_MS 10000     /* a child still running after this is hung */
#define WALK_MAX 100000    /* get_next_key steps after which a walk counts as endless */
#define ENDLESS 3          /* a child's exit status for an endless iteration */

struct target {
	const char *name;
	uint32_t type, key_size, value_size, max_entries, flags;
};

static const struct target targets[] = {
	{ "hash", BPF_MAP_TYPE_HASH, 4, 8, 64, 0 },
	{ "lru_hash", BPF_MAP_TYPE_LRU_HASH, 4, 8, 64, 0 },
	{ "percpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 64, 0 },
	{ "array", BPF_MAP_TYPE_ARRAY, 4, 8, 64, 0 },
	{ "lpm_trie", BPF_MAP_TYPE_LPM_TRIE, 8, 8, 64, BPF_F_NO_PREALLOC },
	{ "queue", BPF_MAP_TYPE_QUEUE, 0, 8, 64, 0 },
	{ "ringbuf", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 },
	{ "bloom_filter", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 64, 0 }, /* the fixed cases index the ones above */
	/* elements on pages reserved as used (maps/hash.c "Lazy elements"): a scribbled
	 * index may name one nobody reserved */
	{ "hash_noprealloc", BPF_MAP_TYPE_HASH, 4, 8, 1024, BPF_F_NO_PREALLOC },
};

#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

/* A map and the attacker's view of its file: the whole region, writable. */
struct victim {
	const struct target *t;
	int fd;
	unsigned char *region;
	size_t size;      /* bytes of the type's region (the header page excluded) */
	size_t file_size;
	struct brt_map *map;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t key_of(uint32_t i)
{
	return 0x5a5a0000u + i;
}

static void lpm_key(unsigned char *k, uint32_t i)
{
	uint32_t len = 8 + (i % 4) * 8, data = key_of(i) << (i % 3);

	memcpy(k, &len, 4);
	memcpy(k + 4, &data, 4);
}

/* Key number i of t's type into k (8 bytes): an array's index i, key_of(i) for a hash,
 * lpm_key(i) for an LPM trie */
static void key_for(const struct target *t, unsigned char *k, uint32_t i)
{
	uint32_t key = t->type == BPF_MAP_TYPE_ARRAY ? i : key_of(i);

	if (t->type == BPF_MAP_TYPE_LPM_TRIE)
		lpm_key(k, i);
	else
		memcpy(k, &key, 4);
}

static int make_victim(const struct target *t, struct victim *v)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = t->flags);
	struct stat st;
	uint64_t val = 0x1111;

	memset(v, 0, sizeof(*v));
	v->t = t;
	v->fd = bpfrt_map_create(t->type, t->name, t->key_size, t->value_size, t->max_entries,
				 &o);
	if (v->fd < 0 || fstat(v->fd, &st) || brt_map_from_fd(v->fd, &v->map))
		return -1;
	v->file_size = (size_t)st.st_size;
	v->size = brt_obj_hdr_at(&v->map->obj.snap); /* everything before the header */
	v->region = mmap(NULL, v->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->region == MAP_FAILED)
		return -1;
	for (uint32_t i = 0; i < 48; i++) {
		uint64_t vals[256] = { val };
		unsigned char k[8];

		key_for(t, k, i);
		if (t->type == BPF_MAP_TYPE_QUEUE || t->type == BPF_MAP_TYPE_BLOOM_FILTER) {
			if (i < 16)
				bpfrt_map_update_elem(v->fd, NULL, &val, BPF_ANY);
		} else if (t->type != BPF_MAP_TYPE_RINGBUF) {
			bpfrt_map_update_elem(v->fd, k, vals, BPF_ANY);
		}
	}
	return 0;
}

static void drop_victim(struct victim *v)
{
	if (v->region && v->region != MAP_FAILED)
		munmap(v->region, v->file_size);
	if (v->map)
		brt_map_put(v->map);
	if (v->fd >= 0)
		close(v->fd);
}

/* ---- what a user of the map does -------------------------------------------------- */

/* get_next_key from the start until ENOENT, through the fd or, in a read-only trial (ro:
 * make_ro() below), the map's function; exits ENDLESS if it never gets there */
static void walk(struct victim *v, int ro)
{
	unsigned char key[8], next[8];
	const void *from = NULL;

	for (int steps = 0; !(ro ? brt_map_sys_get_next_key(v->map, from, next)
				 : bpfrt_map_get_next_key(v->fd, from, next));
	     steps++) {
		if (steps > WALK_MAX)
			_exit(ENDLESS);
		memcpy(key, next, sizeof(key));
		from = key;
	}
}

static void batches(struct victim *v)
{
	unsigned char keys[16 * 8], vals[16 * 8 * 256], token[8];
	union bpf_attr attr;
	int more = 1;

	for (int calls = 0; more; calls++) {
		if (calls > WALK_MAX)
			_exit(ENDLESS);
		memset(&attr, 0, sizeof(attr));
		attr.batch.map_fd = (uint32_t)v->fd;
		attr.batch.in_batch = calls ? (uint64_t)(uintptr_t)token : 0;
		attr.batch.out_batch = (uint64_t)(uintptr_t)token;
		attr.batch.keys = (uint64_t)(uintptr_t)keys;
		attr.batch.values = (uint64_t)(uintptr_t)vals;
		attr.batch.count = 16;
		more = !bpfrt_bpf(BPF_MAP_LOOKUP_BATCH, &attr, sizeof(attr)) && attr.batch.count;
	}
}

static int count_rec(void *arg, void *data, size_t size)
{
	(void)data;
	if (size > 4096)
		_exit(4); /* a record larger than the ring was handed out */
	++*(int *)arg;
	return 0;
}

static void ring_ops(struct victim *v)
{
	struct bpfrt_run_ctx ctx;
	uint64_t m = (uint64_t)(uintptr_t)v->map, rec;
	int n = 0;

	memset(&ctx, 0, sizeof(ctx));
	for (int i = 0; i < 4; i++) {
		rec = brt_helper_ringbuf_reserve(m, 8 + rnd() % 64, 0, 0, 0, &ctx);
		if (!rec)
			continue;
		/* the record's header rewritten while the program holds the record */
		if (rnd() % 2)
			memcpy((unsigned char *)(uintptr_t)rec - 8 + rnd() % 8, &rng_state, 1);
		if (rnd() % 3)
			brt_helper_ringbuf_submit(rec, rnd() % 4, 0, 0, 0, &ctx);
		else
			brt_helper_ringbuf_discard(rec, 0, 0, 0, 0, &ctx);
	}
	for (int i = 0; i < 4; i++)
		bpfrt_ringbuf_consume(v->fd, count_rec, &n);
}

static void exercise(struct victim *v)
{
	uint64_t vals[256] = { 0x2222 };
	unsigned char k[8];

	if (v->t->type == BPF_MAP_TYPE_RINGBUF) {
		ring_ops(v);
		return;
	}
	if (v->t->type == BPF_MAP_TYPE_BLOOM_FILTER) {
		for (int i = 0; i < 8; i++) {
			vals[0] = rnd() % 64;
			if (rnd() % 2)
				bpfrt_map_update_elem(v->fd, NULL, vals, BPF_ANY);
			else
				bpfrt_map_lookup_elem(v->fd, NULL, vals);
		}
		return;
	}
	if (v->t->type == BPF_MAP_TYPE_QUEUE) {
		for (int i = 0; i < 8; i++) {
			if (rnd() % 2)
				bpfrt_map_update_elem(v->fd, NULL, vals, rnd() % 2 ? BPF_EXIST : 0);
			else
				bpfrt_map_lookup_and_delete_elem(v->fd, NULL, vals);
		}
		bpfrt_map_lookup_elem(v->fd, NULL, vals);
		return;
	}
	for (int i = 0; i < 8; i++) {
		key_for(v->t, k, (uint32_t)(rnd() % 64));
		bpfrt_map_lookup_elem(v->fd, k, vals);
		/* the program side's lookup (lockless for hash maps) */
		if (v->map->ops->lookup)
			v->map->ops->lookup(v->map, k);
		switch (rnd() % 3) {
		case 0:
			bpfrt_map_update_elem(v->fd, k, vals, BPF_ANY);
			break;
		case 1:
			bpfrt_map_delete_elem(v->fd, k);
			break;
		default:
			break;
		}
	}
	walk(v, 0);
	if (v->t->type != BPF_MAP_TYPE_LPM_TRIE)
		batches(v);
}

/* ---- random corruption ------------------------------------------------------------ */

/* A few writes into the region: half of them near the start of a page, where the
 * types keep their heads, positions, locks and buckets. */
static void scribble(struct victim *v)
{
	int writes = 1 + (int)(rnd() % 4);

	for (int i = 0; i < writes; i++) {
		size_t off = rnd() % 2 ? (size_t)(rnd() % v->size) :
					 (size_t)(rnd() % ((v->size + BRT_PAGE - 1) / BRT_PAGE)) *
							 BRT_PAGE + rnd() % 256;
		size_t len = 1 + rnd() % 8;
		uint64_t val;

		switch (rnd() % 4) {
		case 0:
			val = rnd();
			break;
		case 1:
			val = ~0ull;
			break;
		case 2:
			val = rnd() % 4;
			break;
		default:
			memcpy(&val, v->region + (off < v->size ? off : 0), sizeof(val));
			val ^= 1ull << (rnd() % 64);
			break;
		}
		if (off >= v->size)
			continue;
		if (off + len > v->size)
			len = v->size - off;
		memcpy(v->region + off, &val, len);
	}
}

/* ---- running a case in a child ------------------------------------------------------ */

enum outcome { OK, CRASH, HANG, LOOP };

static const char *const outcome_names[] = { "ok", "crash", "hang", "endless iteration" };

static enum outcome in_child(void (*fn)(struct victim *v, const void *arg), struct victim *v,
			     const void *arg)
{
	struct timespec ms = { 0, 1000000 };
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return CRASH;
	if (pid == 0) {
		fn(v, arg);
		_exit(0);
	}
	for (int waited = 0; waited < LIMIT_MS; waited++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? OK :
			       WIFEXITED(st) && WEXITSTATUS(st) == ENDLESS ? LOOP : CRASH;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return HANG;
}

static void random_trial(struct victim *v, const void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		scribble(v);
		exercise(v);
	}
}

static void random_trials(void)
{
	int counts[4] = { 0 };

	for (size_t t = 0; t < NTARGETS; t++) {
		for (int i = 0; i < TRIALS_PER_TYPE; i++) {
			struct victim v;
			enum outcome o;
			char name[96];

			rng_state = 0x9e3779b97f4a7c15ull * (t * 1000 + (size_t)i + 1);
			snprintf(name, sizeof(name), "random: %s trial %d", targets[t].name, i);
			T_CASE(name);
			T_ASSERT(make_victim(&targets[t], &v) == 0);
			o = in_child(random_trial, &v, NULL);
			counts[o]++;
			if (o != OK)
				T_FAIL("%s", outcome_names[o]);
			drop_victim(&v);
		}
	}
	printf("random corruption: %zu trials of %d rounds: %d ok, %d crashes, %d hangs, "
	       "%d endless iterations\n", NTARGETS * TRIALS_PER_TYPE, ROUNDS, counts[OK],
	       counts[CRASH], counts[HANG], counts[LOOP]);
	T_EQ_INT((int)(NTARGETS * TRIALS_PER_TYPE), counts[OK]);
}

/* ---- the corruptions that once crashed or hung ------------------------------------- */

/* Replace the first occurrence of 4 bytes in the region. */
static int replace(struct victim *v, uint32_t from, uint32_t to)
{
	for (size_t off = 0; off + 4 <= v->size; off += 4)
		if (!memcmp(v->region + off, &from, 4)) {
			memcpy(v->region + off, &to, 4);
			return 0;
		}
	return -1;
}

static void walk_and_batch(struct victim *v, const void *arg)
{
	(void)arg;
	walk(v, 0);
	batches(v);
}

static void key_moved(void)
{
	struct victim v;

	T_CASE("hash: a stored key that does not hash to its bucket");
	T_ASSERT(make_victim(&targets[0], &v) == 0);
	for (uint32_t i = 0; i < 8; i++)
		T_EQ_INT(0, replace(&v, key_of(i), key_of(i) ^ 0x00ff0000u));
	T_EQ_INT(OK, in_child(walk_and_batch, &v, NULL));
	drop_victim(&v);
}

/* Two elements of one bucket pointing at each other (A's next B, B's next A, B's key and
 * hash rewritten into A's bucket): get_next_key under the lock goes round the pair, and a
 * lookup batch reads a bucket key by key through it; the bucket must end (EBUSY) before
 * the batch's key buffer grows without bound. */
static unsigned char *elem_of(struct victim *v, size_t eoff, uint32_t es, uint32_t key,
			      uint32_t *idx)
{
	for (uint32_t i = 0; eoff + (size_t)(i + 1) * es <= v->size; i++)
		if (!memcmp(v->region + eoff + (size_t)i * es + 16, &key, 4)) {
			*idx = i + 1; /* element indexes are 1-based, 0 ends a chain */
			return v->region + eoff + (size_t)i * es;
		}
	return NULL;
}

static void bucket_cycle(void)
{
	struct victim v;
	uint32_t nb, es, seed, ka = key_of(5), kb = key_of(6), kc, ia, ib, ha;
	unsigned char *a, *b;
	size_t eoff;

	T_CASE("hash: two elements of a bucket pointing at each other, read by lookup batches");
	T_ASSERT(make_victim(&targets[0], &v) == 0);
	memcpy(&nb, v.region + 16, 4);
	memcpy(&es, v.region + 24, 4);
	memcpy(&seed, v.region + 28, 4);
	eoff = (64 + (size_t)nb * 8 + 63) & ~(size_t)63;
	a = elem_of(&v, eoff, es, ka, &ia);
	b = elem_of(&v, eoff, es, kb, &ib);
	T_ASSERT(a && b);
	ha = brt_keyhash(&ka, 4, seed);
	/* a key no element has, in A's bucket */
	for (kc = 0x7f000000u;; kc++)
		if ((brt_keyhash(&kc, 4, seed) & (nb - 1)) == (ha & (nb - 1)))
			break;
	memcpy(a, &ib, 4);
	memcpy(b, &ia, 4);
	memcpy(b + 4, &(uint32_t){ brt_keyhash(&kc, 4, seed) }, 4);
	memcpy(b + 16, &kc, 4);
	T_EQ_INT(OK, in_child(walk_and_batch, &v, NULL));
	drop_victim(&v);
}

static void lpm_walk(struct victim *v, const void *arg)
{
	unsigned char k[8];
	uint64_t val;

	(void)arg;
	walk(v, 0);
	for (uint32_t i = 0; i < 48; i++) {
		lpm_key(k, i);
		bpfrt_map_lookup_elem(v->fd, k, &val);
	}
}

static void lpm_prefixlen(void)
{
	struct victim v;
	uint32_t i;

	T_CASE("lpm: a prefix length past the key");
	T_ASSERT(make_victim(&targets[4], &v) == 0);
	/* slot: used, prefixlen, data: rewrite the prefix lengths of every used slot */
	for (i = 0; i + 12 <= v.size; i += 4) {
		uint32_t used, len;

		memcpy(&used, v.region + i, 4);
		memcpy(&len, v.region + i + 4, 4);
		if (used == 1 && len >= 8 && len <= 32 && len % 8 == 0)
			memset(v.region + i + 4, 0xff, 4);
	}
	T_EQ_INT(OK, in_child(lpm_walk, &v, NULL));
	drop_victim(&v);
}

static void ring_pg_off(struct victim *v, const void *arg)
{
	struct bpfrt_run_ctx ctx;
	uint64_t m = (uint64_t)(uintptr_t)v->map, rec;
	uint32_t pg_off = *(const uint32_t *)arg;
	int n = 0;

	memset(&ctx, 0, sizeof(ctx));
	rec = brt_helper_ringbuf_reserve(m, 16, 0, 0, 0, &ctx);
	if (!rec)
		_exit(5);
	memcpy((unsigned char *)(uintptr_t)rec - 4, &pg_off, 4);
	brt_helper_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP, 0, 0, 0, &ctx);
	if (bpfrt_ringbuf_consume(v->fd, count_rec, &n) != 1 || n != 1)
		_exit(6);
}

static void ring_len(struct victim *v, const void *arg)
{
	struct bpfrt_run_ctx ctx;
	uint64_t m = (uint64_t)(uintptr_t)v->map, rec;
	uint32_t len = *(const uint32_t *)arg;
	int n = 0;

	memset(&ctx, 0, sizeof(ctx));
	rec = brt_helper_ringbuf_reserve(m, 16, 0, 0, 0, &ctx);
	if (!rec)
		_exit(5);
	brt_helper_ringbuf_submit(rec, 0, 0, 0, 0, &ctx);
	memcpy((unsigned char *)(uintptr_t)rec - 8, &len, 4);
	if (bpfrt_ringbuf_consume(v->fd, count_rec, &n) != -EUCLEAN || n)
		_exit(6);
}

static void ring_prod(struct victim *v, const void *arg)
{
	uint64_t pos = *(const uint64_t *)arg;
	int n = 0;

	memcpy(v->region + BRT_PAGE, &pos, 8);
	if (bpfrt_ringbuf_consume(v->fd, count_rec, &n) != -EUCLEAN)
		_exit(6);
}

static void ring_cases(void)
{
	static const uint32_t pg_offs[] = { 0, 1, 0x7fffffff, 0xffffffff, 1000 };
	static const uint32_t lens[] = { 0x3ffffff0, 4096, 4089, 0x0fffffff };
	static const uint64_t prods[] = { 1ull << 40, ~0ull, 4096 + 8 };
	struct victim v;

	for (size_t i = 0; i < sizeof(pg_offs) / sizeof(pg_offs[0]); i++) {
		T_CASE("ringbuf: pg_off rewritten before submit");
		T_ASSERT(make_victim(&targets[6], &v) == 0);
		T_EQ_INT(OK, in_child(ring_pg_off, &v, &pg_offs[i]));
		drop_victim(&v);
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		T_CASE("ringbuf: record length past the ring");
		T_ASSERT(make_victim(&targets[6], &v) == 0);
		T_EQ_INT(OK, in_child(ring_len, &v, &lens[i]));
		drop_victim(&v);
	}
	for (size_t i = 0; i < sizeof(prods) / sizeof(prods[0]); i++) {
		T_CASE("ringbuf: producer_pos far ahead");
		T_ASSERT(make_victim(&targets[6], &v) == 0);
		T_EQ_INT(OK, in_child(ring_prod, &v, &prods[i]));
		drop_victim(&v);
	}
}

static void queue_ops(struct victim *v, const void *arg)
{
	uint64_t val = 5;

	(void)arg;
	for (int i = 0; i < 100; i++) {
		bpfrt_map_update_elem(v->fd, NULL, &val, BPF_EXIST);
		bpfrt_map_lookup_elem(v->fd, NULL, &val);
		bpfrt_map_lookup_and_delete_elem(v->fd, NULL, &val);
	}
}

static void queue_indexes(void)
{
	struct victim v;
	uint32_t bad[2] = { 0xffffffff, 65 };

	T_CASE("queue: head and tail out of range");
	T_ASSERT(make_victim(&targets[5], &v) == 0);
	memcpy(v.region + 4, bad, sizeof(bad));
	T_EQ_INT(OK, in_child(queue_ops, &v, NULL));
	drop_victim(&v);
}

/* ---- read-only mappings ----------------------------------------------------------------
 * A process that may only read a map's file (BPF_OBJ_GET with BPF_F_RDONLY) maps it
 * read-only and reads hash chains without their locks (maps/hash_ro.c).  Made so in the
 * child (the map's mapping mprotect()ed read-only, obj.ro set; the attacker's mapping
 * stays writable), any write of the mapping is a crash; a scribble that leaves an element
 * odd or a chain cyclic must end in an error or a finite walk.  The reads go to the map's
 * functions, not through an fd: this process's fd may write the file, and resolving it
 * would make the mapping writable again (obj.c). */
static void make_ro(struct victim *v)
{
	if (mprotect(v->map->obj.base, v->map->obj.size, PROT_READ))
		_exit(5);
	atomic_store(&v->map->obj.ro, 1);
}

static void ro_exercise(struct victim *v)
{
	uint64_t vals[256];
	unsigned char k[8];

	for (int i = 0; i < 8; i++) {
		vals[0] = rnd() % 64;
		key_for(v->t, k, (uint32_t)(rnd() % 64));
		brt_map_sys_lookup(v->map, v->t->key_size ? k : NULL, vals, 0);
	}
	walk(v, 1);
}

static void ro_trial(struct victim *v, const void *arg)
{
	(void)arg;
	make_ro(v);
	for (int r = 0; r < ROUNDS; r++) {
		scribble(v);
		ro_exercise(v);
	}
}

/* an element whose sequence word stays odd (a writer died rewriting it), a queue whose
 * generation word does: the read-only lookup gives up with EBUSY after its bounded
 * retries, the walk ends */
static void ro_odd(struct victim *v, const void *arg)
{
	uint64_t vals[256];
	uint32_t key = key_of(3);
	struct timespec t0, t1;
	int err;

	(void)arg;
	make_ro(v);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = brt_map_sys_lookup(v->map, v->t->key_size ? &key : NULL, vals, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err != -EBUSY || t1.tv_sec - t0.tv_sec > 1)
		_exit(6);
	walk(v, 1);
}

/* One chain through every element of a large map (in a random order), each holding the
 * same key under a stored hash of the right bucket that is not the key's: no lookup stops
 * at any of them.  Read-only reads of it must end in time: a key walk decided, for each
 * position of the chain it read, whether a lookup of its key would stop there by scanning
 * the positions before it (quadratic: 131,088 elements took seconds, a million minutes);
 * a lookup retried a chain looping back to its start, or one whose last element stays
 * odd, BRT_MAP_RO_TRIES times four walks of the whole map (262,160 elements: over 10 s
 * under load; the map's size is the pin the scribbler offers).  The same chain under the
 * bucket locks (a read-write fd): the locked key walk asked the same question position
 * by position, holding the bucket's lock, so writers of the bucket waited as long
 * (131,088 elements: seconds).  LONG_LAST_RIGHT: the chain's last element holds the
 * key's own hash, so a walk returns the key once and a lookup finds it.  CPU time, so
 * that a loaded machine does not fail it. */
enum long_shape { LONG_PLAIN, LONG_CYCLE, LONG_ODD_END, LONG_LAST_RIGHT };

struct long_case {
	enum long_shape shape;
	int ro;
};

static const struct target long_chain_targets[] = {
	{ "hash", BPF_MAP_TYPE_HASH, 4, 8, 1u << 17, 0 },
	{ "hash", BPF_MAP_TYPE_HASH, 4, 8, 1u << 18, 0 },
};

static void long_walk(struct victim *v, const void *arg)
{
	const struct long_case *lc = arg;
	uint32_t key = key_of(7), next = 0, next2;
	uint64_t vals[256];
	struct timespec t0, t1;
	int err, err2, err3 = -ENOENT, want;
	long ms;

	if (lc->ro)
		make_ro(v);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	err = brt_map_sys_get_next_key(v->map, NULL, &next);
	if (!err)
		err3 = brt_map_sys_get_next_key(v->map, &next, &next2);
	err2 = brt_map_sys_lookup(v->map, &key, vals, 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	/* a chain that stays odd is busy to a reader that takes no lock (a walk under the
	 * lock does not look at sequence words); one that loops ends where it loops, as a
	 * walk under the lock ends after n_elems elements */
	want = lc->shape == LONG_ODD_END && lc->ro ? -EBUSY :
	       lc->shape == LONG_LAST_RIGHT	     ? 0 :
						       -ENOENT;
	if (err != want || err2 != want || err3 != -ENOENT || (!err && next != key))
		_exit(7);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	printf("  two key walk steps and a lookup: %ld ms CPU\n", ms);
	fflush(stdout);
	/* a few walks of the map take tens of ms (a few hundred under ASan); the faults
	 * took seconds */
	if (ms > 2000)
		_exit(6);
}

static void long_chain(enum long_shape shape, int ro)
{
	static const char *const names[] = { "plain", "looping", "odd at its end",
					     "its last element right" };
	const struct target *t = &long_chain_targets[shape == LONG_CYCLE || shape == LONG_ODD_END];
	struct long_case lc = { shape, ro };
	uint32_t nb, ne, es, seed, key = key_of(7), hash, *perm;
	struct victim v;
	char name[128];
	size_t eoff;

	snprintf(name, sizeof(name), "%s hash: a chain through every element (%s), no "
		 "lookup stops there", ro ? "read-only" : "locked", names[shape]);
	T_CASE(name);
	T_ASSERT(make_victim(t, &v) == 0);
	/* struct htab_head: n_buckets, n_elems, elem_size, seed at 16..31, 64 bytes; the
	 * buckets (lock, head) after it; the elements (next, hash, stamp, seq, key) from the
	 * next 64-byte line */
	memcpy(&nb, v.region + 16, 4);
	memcpy(&ne, v.region + 20, 4);
	memcpy(&es, v.region + 24, 4);
	memcpy(&seed, v.region + 28, 4);
	T_ASSERT(nb == t->max_entries && ne > t->max_entries);
	perm = malloc((size_t)ne * sizeof(*perm));
	T_ASSERT(perm != NULL);
	rng_state = 0x2545f4914f6cdd1dull;
	for (uint32_t i = 0; i < ne; i++)
		perm[i] = i + 1;
	for (uint32_t i = ne - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rnd() % (i + 1)), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	eoff = (64 + (size_t)nb * 8 + 63) & ~(size_t)63;
	hash = brt_keyhash(&key, 4, seed);
	for (uint32_t b = 0; b < nb; b++)
		memcpy(v.region + 64 + (size_t)b * 8 + 4, &(uint32_t){ 0 }, 4);
	memcpy(v.region + 64 + (size_t)(hash & (nb - 1)) * 8 + 4, &perm[0], 4);
	for (uint32_t k = 0; k < ne; k++) {
		unsigned char *e = v.region + eoff + (size_t)(perm[k] - 1) * es;
		int last = k + 1 == ne;
		uint32_t w[4] = { !last ? perm[k + 1] : shape == LONG_CYCLE ? perm[0] : 0,
				  last && shape == LONG_LAST_RIGHT ? hash : hash ^ nb, 0,
				  shape == LONG_ODD_END && last };

		memcpy(e, w, sizeof(w));
		memcpy(e + 16, &key, 4);
	}
	free(perm);
	T_EQ_INT(OK, in_child(long_walk, &v, &lc));
	drop_victim(&v);
}

static void ro_cases(void)
{
	int counts[4] = { 0 }, trials = 0;
	struct victim v;

	T_CASE("read-only hash: an element left odd");
	T_ASSERT(make_victim(&targets[0], &v) == 0);
	/* the sequence word is the 4 bytes before the key (struct htab_elem) */
	for (size_t off = 4; off + 4 <= v.size; off += 4) {
		uint32_t k = key_of(3), odd = 1;

		if (!memcmp(v.region + off, &k, 4)) {
			memcpy(v.region + off - 4, &odd, 4);
			break;
		}
	}
	T_EQ_INT(OK, in_child(ro_odd, &v, NULL));
	drop_victim(&v);
	for (int ro = 1; ro >= 0; ro--)
		for (enum long_shape sh = LONG_PLAIN; sh <= LONG_LAST_RIGHT; sh++)
			long_chain(sh, ro);
	T_CASE("read-only queue: its generation word left odd");
	T_ASSERT(make_victim(&targets[5], &v) == 0);
	/* struct qs_head: lock, head, tail, size, then the generation word */
	memcpy(v.region + 16, &(uint32_t){ 1 }, 4);
	T_EQ_INT(OK, in_child(ro_odd, &v, NULL));
	drop_victim(&v);
	for (size_t t = 0; t < NTARGETS; t++) {
		for (int i = 0; i < TRIALS_PER_TYPE / 2; i++) {
			enum outcome o;
			char name[96];

			rng_state = 0x7f4a7c159e3779b9ull * (t * 1000 + (size_t)i + 1);
			snprintf(name, sizeof(name), "read-only: %s trial %d", targets[t].name, i);
			T_CASE(name);
			T_ASSERT(make_victim(&targets[t], &v) == 0);
			if (!v.map->ops->ro_reads) { /* a type never mapped so (map.c) */
				drop_victim(&v);
				break;
			}
			o = in_child(ro_trial, &v, NULL);
			counts[o]++;
			trials++;
			if (o != OK)
				T_FAIL("%s", outcome_names[o]);
			drop_victim(&v);
		}
	}
	printf("read-only mappings: %d trials of %d rounds: %d ok, %d crashes, %d hangs, "
	       "%d endless iterations\n", trials, ROUNDS, counts[OK], counts[CRASH],
	       counts[HANG], counts[LOOP]);
	T_EQ_INT(trials, counts[OK]);
}

/* A per-CPU map's header names its values per element (ncpus); a writer of the file may
 * name fewer than this machine's CPUs with the region still the size the parameters imply
 * (a per-CPU hash's key 8 bytes longer, one value fewer).  A run for a CPU past the map's
 * values (a trace record's CPU, BPF_F_TEST_RUN_ON_CPU) must get a value of this element,
 * never the next element's bytes or past the region. */
static void percpu_ncpus(void)
{
	char dir[] = "/dev/shm/bpfrt-test-XXXXXX", path[64];
	uint64_t key[2] = { 7, 0 }, vals[256] = { 1 };
	struct brt_obj_hdr h;
	struct brt_map *map = NULL;
	unsigned char *v0, *v1;
	uint32_t prev;
	struct stat st;
	off_t at;
	int fd, raw;

	T_CASE("a per-CPU hash whose header names fewer CPUs than the machine's");
	if (brt_ncpus() < 2)
		return; /* one possible CPU: nothing past the values */
	T_ASSERT(t_scratch_dir(dir));
	setenv("BPFRT_FS", dir, 1); /* pins under it (read once: this case runs first) */
	snprintf(path, sizeof(path), "%s/pc", dir);
	fd = bpfrt_map_create(BPF_MAP_TYPE_PERCPU_HASH, "pc", 8, 8, 4, NULL);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, bpfrt_map_update_elem(fd, key, vals, BPF_ANY));
	T_EQ_INT(0, bpfrt_obj_pin(fd, path));
	close(fd);
	brt_obj_sweep();
	raw = open(path, O_RDWR);
	T_ASSERT(raw >= 0 && !fstat(raw, &st));
	at = (off_t)st.st_size - BRT_OBJ_HDR_ROOM;
	T_EQ_INT(sizeof(h), pread(raw, &h, sizeof(h), at));
	if (h.hdr_at_end != 1) {
		at = (off_t)brt_obj_hdr_off((uint64_t)st.st_size);
		T_EQ_INT(sizeof(h), pread(raw, &h, sizeof(h), at));
	}
	T_EQ_INT(brt_ncpus(), h.ncpus);
	/* key 8 -> 8 + 8 (ncpus - 1): the same element size */
	h.key_size += 8 * (h.ncpus - 1);
	h.ncpus = 1;
	T_EQ_INT(sizeof(h), pwrite(raw, &h, sizeof(h), at));
	close(raw);
	fd = bpfrt_obj_get(path);
	/* refused as corrupt (OBJ_GET of a file not an object: EACCES), or each CPU's value
	 * inside the element */
	if (fd < 0)
		T_EQ_INT(-EACCES, fd);
	if (fd >= 0 && !brt_map_from_fd(fd, &map)) {
		key[1] = 9; /* a key of the new size */
		T_EQ_INT(0, bpfrt_map_update_elem(fd, key, vals, BPF_ANY));
		prev = brt_cpu_enter(0);
		v0 = map->ops->lookup(map, key);
		brt_cpu_enter(1);
		v1 = map->ops->lookup(map, key);
		brt_cpu_leave(prev);
		T_ASSERT(v0 != NULL);
		/* the map has one value an element: every CPU's is it */
		T_ASSERT(v1 == v0);
		brt_map_put(map);
	}
	if (fd >= 0)
		close(fd);
	brt_obj_sweep();
	unlink(path);
}

int main(void)
{
	percpu_ncpus();
	key_moved();
	bucket_cycle();
	lpm_prefixlen();
	ring_cases();
	queue_indexes();
	ro_cases();
	random_trials();
	return t_done();
}
