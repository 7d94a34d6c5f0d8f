/* test_random_oracle.c - random map-command sequences against the kernel (issue #15,
 * item 4: the differential that first found the bpf() corners of LPM batches, per-CPU
 * padding, MAP_CREATE's tail and BPF_F_LOCK on batches).  A seeded generator writes one
 * script of MAP_CREATE (type, key and value sizes, max_entries and flags drawn from sets
 * that mix valid and invalid values), element commands (update, lookup, delete,
 * get_next_key, lookup_and_delete with drawn flags and keys from a small key space, LPM
 * prefixes included), batch commands (lookup, lookup_and_delete, update, delete with drawn
 * counts, flags and cursors), BPF_MAP_FREEZE and GET_INFO; the script runs on the kernel's
 * bpf() and on bpfrt_bpf(), one line per step, and the transcripts must be equal.
 * Choices never depend on results, so both sides run the same script.  What a hash
 * function orders (the walk of a hash map, its batches) is compared as a set: the kernel's
 * seed is random.  Output buffers start filled with a pattern, so bytes a side writes past
 * what it should show up.  RANDOM_ORACLE_SEED and RANDOM_ORACLE_STEPS change the run;
 * -v prints every differing line.  Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define TRANSCRIPT_SIZE (1 << 21)
#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"

#define KEYS 6        /* distinct keys the script draws from */
#define MAXV 64       /* largest value size drawn */
#define MAXK 20       /* largest key size drawn */
#define BUF (1 << 20) /* output buffers: values of every possible CPU, batches */

static uint64_t rng;

static uint32_t draw(uint32_t n)
{
	/* xorshift64*: the same sequence on both sides from the same seed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 33) % n;
}

static const uint32_t types[] = {
	BPF_MAP_TYPE_HASH,        BPF_MAP_TYPE_ARRAY,          BPF_MAP_TYPE_PERCPU_HASH,
	BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_LRU_HASH,      BPF_MAP_TYPE_LRU_PERCPU_HASH,
	BPF_MAP_TYPE_LPM_TRIE,    BPF_MAP_TYPE_QUEUE,          BPF_MAP_TYPE_STACK,
};

/* what a type's walk order depends on: a hash function (compared as a set) or not */
static int hashed(uint32_t type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static int percpu(uint32_t type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static int ncpus;

struct side {
	sys_fn sys;
	struct transcript *t;
	int fd;
	uint32_t type, key, value, max;
	uint8_t cursor[MAXK + 8]; /* the last batch's out_batch, this side's own */
	int have_cursor;
};

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* one of KEYS keys of the map's key size; an LPM key is a prefix length and data */
static void make_key(uint8_t *k, uint32_t size, uint32_t type)
{
	uint32_t i = draw(KEYS);

	memset(k, 0, MAXK + 8);
	if (type == BPF_MAP_TYPE_LPM_TRIE && size >= 4) {
		static const uint32_t plen[] = { 0, 8, 16, 24, 32, 33, 1, 40 };
		uint32_t p = plen[draw(8)];

		memcpy(k, &p, 4);
		for (uint32_t j = 4; j < size && j < MAXK; j++)
			k[j] = (uint8_t)(j == 4 ? 10 : j == 5 ? i : 0);
		return;
	}
	/* array indexes 0..KEYS-1 (some past max_entries), hash keys alike */
	if (size >= 1)
		k[0] = (uint8_t)i;
	if (size >= 2 && draw(4) == 0)
		k[1] = 0x80;
}

/* a value for update: bytes of a drawn seed over the whole per-CPU buffer */
static void make_value(uint8_t *v, size_t n)
{
	uint8_t s = (uint8_t)draw(256);

	for (size_t i = 0; i < n; i++)
		v[i] = (uint8_t)(s + i * 7);
}

/* bytes bpf() copies for one value: per-CPU values round_up(value_size, 8) per CPU */
static size_t value_bytes(const struct side *s)
{
	return percpu(s->type) ? (size_t)((s->value + 7) & ~7u) * (size_t)ncpus : s->value;
}

static int sys_call(struct side *s, int cmd, union bpf_attr *a)
{
	return s->sys(cmd, a, sizeof(*a)) < 0 ? -errno : 0;
}

static void op_create(struct side *s, uint32_t type, uint32_t key, uint32_t value, uint32_t max,
		      uint32_t flags)
{
	union bpf_attr a;
	struct bpf_map_info info;

	if (s->fd >= 0)
		close(s->fd);
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	s->fd = s->sys(BPF_MAP_CREATE, &a, sizeof(a));
	if (s->fd < 0)
		s->fd = -errno;
	s->type = type;
	s->key = key;
	s->value = value;
	s->max = max;
	s->have_cursor = 0;
	say(s->t, "create type %u key %u value %u max %u flags %#x: ", type, key, value, max,
	    flags);
	if (s->fd < 0) {
		say(s->t, "%d\n", s->fd);
		return;
	}
	if (map_info(s->sys, s->fd, &info))
		say(s->t, "ok, info %d\n", -errno);
	else
		say(s->t, "ok, map_flags %#x\n", info.map_flags);
}

static void op_elem(struct side *s, int cmd, const char *name, const uint8_t *key,
		    uint64_t flags, const uint8_t *val)
{
	static uint8_t out[BUF];
	union bpf_attr a;
	size_t vb = value_bytes(s);
	int r;

	memset(out, 0xa5, vb + 16);
	if (val)
		memcpy(out, val, vb);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)s->fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)out;
	a.flags = flags;
	r = sys_call(s, cmd, &a);
	say(s->t, "%s flags %#llx key %02x%02x%02x%02x%02x: %d", name, (unsigned long long)flags,
	    key[0], key[1], key[4], key[5], key[6], r);
	if (!r && !val) /* what a lookup wrote, and the pattern after it */
		say(s->t, " value %016llx", (unsigned long long)fnv(out, vb + 16));
	say(s->t, "\n");
}

static void op_next(struct side *s, const uint8_t *key)
{
	uint8_t next[MAXK + 8];
	union bpf_attr a;
	int r;

	memset(next, 0xa5, sizeof(next));
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)s->fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.next_key = (uint64_t)(uintptr_t)next;
	r = sys_call(s, BPF_MAP_GET_NEXT_KEY, &a);
	say(s->t, "get_next_key %s: %d", key ? "key" : "NULL", r);
	/* a hash map's order is its hash function's: whether a key has a next one, and
	 * which, depends on it; compare the errors and the bytes written past the key */
	if (hashed(s->type) && (!r || r == -ENOENT)) {
		s->t->len -= (size_t)snprintf(NULL, 0, "%d", r);
		say(s->t, "walks");
	} else if (!r) {
		say(s->t, " next %016llx", (unsigned long long)fnv(next, sizeof(next)));
	}
	say(s->t, "\n");
}

/* every key/value pair of a walk: sorted records hashed, so order does not count */
static int cmp_rec(const void *x, const void *y, void *n)
{
	return memcmp(x, y, *(size_t *)n);
}

static uint64_t set_hash(uint8_t *recs, size_t nrec, size_t rsz)
{
	qsort_r(recs, nrec, rsz, cmp_rec, &rsz);
	return fnv(recs, nrec * rsz);
}

static void op_batch(struct side *s, int cmd, const char *name, uint32_t count, uint64_t flags,
		     int use_cursor, int whole)
{
	static uint8_t keys[BUF], values[BUF], recs[2 * BUF];
	uint8_t out[MAXK + 8];
	union bpf_attr a;
	size_t vb = value_bytes(s);
	int r;

	if (count * (s->key + vb) > BUF / 2)
		count = 0;
	memset(keys, 0xa5, sizeof(keys));
	memset(values, 0xa5, sizeof(values));
	memset(out, 0xa5, sizeof(out));
	if (cmd == BPF_MAP_UPDATE_BATCH || cmd == BPF_MAP_DELETE_BATCH)
		for (uint32_t i = 0; i < count; i++) {
			make_key(keys + i * s->key, s->key, s->type);
			make_value(values + i * vb, vb);
		}
	memset(&a, 0, sizeof(a));
	a.batch.map_fd = (uint32_t)s->fd;
	a.batch.keys = (uint64_t)(uintptr_t)keys;
	a.batch.values = (uint64_t)(uintptr_t)values;
	a.batch.count = count;
	a.batch.elem_flags = flags;
	if (cmd == BPF_MAP_LOOKUP_BATCH || cmd == BPF_MAP_LOOKUP_AND_DELETE_BATCH) {
		a.batch.out_batch = (uint64_t)(uintptr_t)out;
		if (use_cursor && s->have_cursor)
			a.batch.in_batch = (uint64_t)(uintptr_t)s->cursor;
	}
	r = sys_call(s, cmd, &a);
	say(s->t, "%s count %u flags %#llx%s: %d count %u", name, count,
	    (unsigned long long)flags, a.batch.in_batch ? " in" : "", r, a.batch.count);
	if ((cmd == BPF_MAP_LOOKUP_BATCH || cmd == BPF_MAP_LOOKUP_AND_DELETE_BATCH) &&
	    (!r || r == -ENOENT) && a.batch.count <= count) {
		size_t rsz = s->key + vb, n = a.batch.count;

		for (size_t i = 0; i < n; i++) {
			memcpy(recs + i * rsz, keys + i * s->key, s->key);
			memcpy(recs + i * rsz + s->key, values + i * vb, vb);
		}
		/* a hash map's batches are its buckets': only a whole walk is comparable */
		if (!hashed(s->type))
			say(s->t, " got %016llx", (unsigned long long)fnv(recs, n * rsz));
		else if (whole && r == -ENOENT)
			say(s->t, " set %016llx", (unsigned long long)set_hash(recs, n, rsz));
		/* the bytes past the last record stay the pattern */
		say(s->t, " past %016llx",
		    (unsigned long long)(fnv(keys + n * s->key, 64) ^ fnv(values + n * vb, 64)));
		if (!r || r == -ENOENT) {
			memcpy(s->cursor, out, sizeof(s->cursor));
			s->have_cursor = !r;
		}
	}
	say(s->t, "\n");
}

/* the whole map through get_next_key and lookup, as a set */
static void op_dump(struct side *s)
{
	static uint8_t recs[2 * BUF], val[BUF];
	uint8_t key[MAXK + 8], next[MAXK + 8];
	size_t vb = value_bytes(s), rsz = s->key + vb, n = 0;
	int r = 0, first = 1;

	memset(key, 0, sizeof(key));
	while (n < 64 && (n + 1) * rsz <= sizeof(recs)) {
		union bpf_attr a;

		memset(next, 0, sizeof(next));
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)s->fd;
		a.key = first ? 0 : (uint64_t)(uintptr_t)key;
		a.next_key = (uint64_t)(uintptr_t)next;
		r = sys_call(s, BPF_MAP_GET_NEXT_KEY, &a);
		if (r)
			break;
		first = 0;
		memcpy(key, next, sizeof(key));
		memset(val, 0, vb);
		if (elem(s->sys, BPF_MAP_LOOKUP_ELEM, s->fd, key, val, 0))
			memset(val, 0xee, vb);
		memcpy(recs + n * rsz, key, s->key);
		memcpy(recs + n * rsz + s->key, val, vb);
		n++;
	}
	say(s->t, "dump: %d, %zu elements %016llx\n", r, n,
	    (unsigned long long)set_hash(recs, n, rsz));
}

static void op_freeze(struct side *s)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)s->fd;
	say(s->t, "freeze: %d\n", sys_call(s, BPF_MAP_FREEZE, &a));
}

static const uint64_t elem_flags[] = { BPF_ANY, BPF_NOEXIST, BPF_EXIST, BPF_F_LOCK, 4, 8 };

/* one script of steps on one side, from seed */
static void script(struct side *s, uint64_t seed, unsigned steps)
{
	static const uint32_t keysz[] = { 4, 4, 4, 8, 1, 3, 0, 16, 20, 5 };
	static const uint32_t valsz[] = { 4, 8, 8, 12, 3, 1, 0, 64, 20, 5 };
	static const uint32_t maxes[] = { 4, 8, 16, 1, 0, 3 };
	static const uint32_t flagset[] = {
		0, 0, 0, BPF_F_NO_PREALLOC, BPF_F_RDONLY, BPF_F_WRONLY, BPF_F_ZERO_SEED,
		BPF_F_RDONLY_PROG, BPF_F_WRONLY_PROG, BPF_F_NUMA_NODE, BPF_F_MMAPABLE, 1u << 20,
		BPF_F_NO_COMMON_LRU, BPF_F_RDONLY | BPF_F_WRONLY,
	};
	uint8_t key[MAXK + 8];
	static uint8_t val[BUF];

	rng = seed;
	s->fd = -1;
	for (unsigned i = 0; i < steps; i++) {
		uint32_t op = draw(100);

		s->t->steps++;
		say(s->t, "%u ", i);
		if (op < 6 || s->fd < 0) {
			uint32_t type = types[draw(sizeof(types) / sizeof(types[0]))];
			uint32_t k = keysz[draw(10)], v = valsz[draw(10)], m = maxes[draw(6)];
			uint32_t f = flagset[draw(sizeof(flagset) / sizeof(flagset[0]))];

			/* the types' usual shapes more often than not */
			if (type == BPF_MAP_TYPE_LPM_TRIE && draw(3)) {
				k = draw(2) ? 8 : 20;
				f |= BPF_F_NO_PREALLOC;
			}
			if ((type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY) &&
			    draw(3))
				k = 4;
			if ((type == BPF_MAP_TYPE_QUEUE || type == BPF_MAP_TYPE_STACK) && draw(3))
				k = 0;
			/* LRU maps evict by CPU-local lists: keep them from filling */
			if ((type == BPF_MAP_TYPE_LRU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH) &&
			    m && m < 64)
				m = 64;
			op_create(s, type, k, v, m, f);
			continue;
		}
		make_key(key, s->key, s->type);
		if (op < 30) {
			make_value(val, value_bytes(s));
			op_elem(s, BPF_MAP_UPDATE_ELEM, "update", key,
				draw(2) ? BPF_ANY
					: elem_flags[draw(sizeof(elem_flags) / sizeof(elem_flags[0]))],
				val);
		} else if (op < 45) {
			op_elem(s, BPF_MAP_LOOKUP_ELEM, "lookup", key, draw(4) ? 0 : draw(3) ? BPF_F_LOCK : 1,
				NULL);
		} else if (op < 53) {
			op_elem(s, BPF_MAP_DELETE_ELEM, "delete", key, 0, NULL);
		} else if (op < 60) {
			op_next(s, draw(3) ? key : NULL);
		} else if (op < 65) {
			op_elem(s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, "lookup_and_delete", key,
				draw(3) ? 0 : draw(2) ? BPF_F_LOCK : 2, NULL);
		} else if (op < 88) {
			static const uint32_t counts[] = { 0, 1, 2, 3, 16, 100 };
			static const struct {
				int cmd;
				const char *name;
			} cmds[] = {
				{ BPF_MAP_LOOKUP_BATCH, "lookup_batch" },
				{ BPF_MAP_LOOKUP_AND_DELETE_BATCH, "lookup_and_delete_batch" },
				{ BPF_MAP_UPDATE_BATCH, "update_batch" },
				{ BPF_MAP_DELETE_BATCH, "delete_batch" },
			};
			uint32_t c = draw(4), cnt = counts[draw(6)];
			uint64_t fl = draw(3) ? 0 : elem_flags[draw(6)];
			int cur = draw(2);

			/* a hash map's batches follow its buckets: only whole walks compare */
			if (hashed(s->type) && c < 2 && cnt) {
				cnt = 100;
				cur = 0;
			}
			op_batch(s, cmds[c].cmd, cmds[c].name, cnt, fl, cur, cnt == 100 && !cur);
		} else if (op < 96) {
			op_dump(s);
		} else if (op < 97) {
			op_freeze(s);
		} else {
			struct bpf_map_info info;
			int r = map_info(s->sys, s->fd, &info);

			say(s->t, "info: %d type %u key %u value %u max %u flags %#x\n", r,
			    info.type, info.key_size, info.value_size, info.max_entries,
			    info.map_flags);
		}
	}
	if (s->fd >= 0)
		close(s->fd);
}

static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int lo = 0, hi = 0, n = 0;
	char c;

	if (!f)
		return 1;
	while (fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		if (fscanf(f, "%c", &c) == 1 && c == '-' && fscanf(f, "%d%c", &hi, &c) < 1)
			break;
		n += hi - lo + 1;
		if (c != ',')
			break;
	}
	fclose(f);
	return n > 0 ? n : 1;
}

int main(int argc, char **argv)
{
	static struct transcript k, b;
	const char *e = getenv("RANDOM_ORACLE_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : 0x15c0ffee15ull;
	unsigned steps = getenv("RANDOM_ORACLE_STEPS") ? (unsigned)atoi(getenv("RANDOM_ORACLE_STEPS"))
						       : 3000;
	struct side ks = { .sys = kernel_bpf, .t = &k }, bs = { .sys = bpfrt_bpf, .t = &b };
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	unsigned diffs;

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	ncpus = possible_cpus();
	if (ncpus > 64)
		T_SKIP("%d possible CPUs: per-CPU values do not fit the buffers", ncpus);
	script(&ks, seed, steps);
	script(&bs, seed, steps);
	diffs = transcript_diffs(&k, &b, verbose ? ~0u : 10);
	if (getenv("RANDOM_ORACLE_DUMP")) { /* the two transcripts, for diff(1) */
		FILE *f = fopen("random_oracle.kernel", "w"), *g = fopen("random_oracle.bpfrt", "w");

		if (f)
			fputs(k.text, f);
		if (g)
			fputs(b.text, g);
		if (f)
			fclose(f);
		if (g)
			fclose(g);
	}
	printf("%u steps (seed %#llx), %u lines, %u differ\n", steps, (unsigned long long)seed,
	       k.steps, diffs);
	T_CASE("random map commands");
	T_EQ_INT(0, (int)diffs);
	return t_done();
}
