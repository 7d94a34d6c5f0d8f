/* test_lookup.c - bpf_map_lookup_elem calls the JIT binds to their map (src/jit/x86_64/
 * lookup.c): the same programs loaded with the fast interpreter and with the JIT, and, as
 * root, into the kernel, over arrays (plain, BPF_F_MMAPABLE, frozen), a per-CPU array and
 * hash maps, with keys in bounds, at max_entries and far out; each run returns what it
 * read and adds to the value it found, so the return values and the map contents after
 * all runs must agree.  The JIT's code must show the binding (inline for arrays, a direct
 * call otherwise), and a call site that sees two maps must not be bound.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_RSEQ 1
#endif
#endif

#include "harness.h"
#include "api/api.h"
#include "api/diff.h"
#include "jit/jit.h"
#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

enum { M_ARRAY, M_MMAP, M_FROZEN, M_PERCPU, M_HASH, M_LRU, M_HASH_LAZY, NMAPS };

static const struct {
	uint32_t type, value_size, max_entries, flags;
	const char *note; /* what the JIT must make of a lookup in it */
} shapes[NMAPS] = {
	[M_ARRAY] = { BPF_MAP_TYPE_ARRAY, 12, 5, 0, "array lookup inlined" },
	[M_MMAP] = { BPF_MAP_TYPE_ARRAY, 8, 4, BPF_F_MMAPABLE, "array lookup inlined" },
	[M_FROZEN] = { BPF_MAP_TYPE_ARRAY, 16, 3, 0, "array lookup inlined" },
	[M_PERCPU] = { BPF_MAP_TYPE_PERCPU_ARRAY, 8, 2, 0, "per-CPU array lookup inlined" },
	[M_HASH] = { BPF_MAP_TYPE_HASH, 8, 8, 0, "hash probe inlined" },
	[M_LRU] = { BPF_MAP_TYPE_LRU_HASH, 8, 8, 0, "hash probe inlined" },
	/* elements populated as used: the probe's bound is read from memory */
	[M_HASH_LAZY] = { BPF_MAP_TYPE_HASH, 8, 8, BPF_F_NO_PREALLOC, "hash probe inlined" },
};

/* What the JIT must make of a lookup in map shape m: a per-CPU array is inlined only where
 * glibc keeps the CPU number in an rseq area. */
static const char *note_of(int m)
{
#ifdef HAVE_RSEQ
	if (m != M_PERCPU || __rseq_size > 0)
		return shapes[m].note;
#else
	if (m != M_PERCPU)
		return shapes[m].note;
#endif
	return "lookup, called directly";
}

static const uint32_t keys[] = { 0, 1, 2, 3, 4, 5, 7, 0x80000000u, 0xffffffffu };
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* r0 = the value's first u32 plus its last, after adding 1 to its first u64 (atomic);
 * -1 when the lookup finds nothing */
static const char prog_fmt[] =
	"stw [%%r10-4], %d\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\ncall 1\n"
	"jeq %%r0, 0, +7\nmov %%r1, 1\nlock add [%%r0+0], %%r1\nldxw %%r1, [%%r0+0]\n"
	"ldxw %%r2, [%%r0+%d]\nadd %%r1, %%r2\nmov %%r0, %%r1\nexit\nmov %%r0, -1\nexit\n";

/* One call site, two maps (array or hash, by the packet's length): not bound. */
static const char two_maps[] =
	"ldxw %r3, [%r1+0]\nstw [%r10-4], 3\nmov %r2, %r10\nadd %r2, -4\n"
	"lddw %r1, map_fd 0\njgt %r3, 1000, +2\nlddw %r1, map_fd 4\ncall 1\n"
	"jeq %r0, 0, +2\nldxw %r0, [%r0+0]\nexit\nmov %r0, -1\nexit\n";

struct outcome {
	int ret[NMAPS][NKEYS];
	int ret_two;
	uint64_t sums[NMAPS][8]; /* per key 0..7: the value's first u64 summed over CPUs */
};

static int mk(sys_fn sys, int m)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = shapes[m].type;
	a.key_size = 4;
	a.value_size = shapes[m].value_size;
	a.max_entries = shapes[m].max_entries;
	a.map_flags = shapes[m].flags;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

static int elem(sys_fn sys, int cmd, int fd, uint32_t key, void *val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)val;
	return sys(cmd, &a, sizeof(a)) ? -errno : 0;
}

/* BPFRT_F_ENGINE() of the engine scenario() runs bpfrt on; 0 for the kernel */
static uint32_t engine_flags;

static int load(sys_fn sys, const char *text, const int *maps)
{
	struct bpf_insn *insns;
	union bpf_attr a;
	static char log[4096];
	char err[160];
	size_t n;
	int fd;

	if (bpfrt_asm(text, "lookup", &insns, &n, err, sizeof(err))) {
		T_FAIL("asm: %s", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg == 1)
			insns[i].imm = maps[insns[i].imm];
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	a.prog_flags = engine_flags;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		T_FAIL("load: %s\n%s", strerror(errno), log);
	free(insns);
	return fd;
}

/* The notes of the JIT code of program fd (bpfrt's, this process), or "" */
static char *jit_notes(int fd)
{
	const struct brt_jit_prog *jp;
	struct brt_prog *prog;
	char err[160], *text = NULL;
	const struct bpf_insn *insns;
	size_t len = 0, n;
	FILE *mem;

	if (brt_prog_from_fd(fd, &prog))
		return strdup("");
	insns = brt_vm_insns(prog->vm, &n);
	mem = open_memstream(&text, &len);
	if (mem && !brt_vm_jit_code(prog->vm, &jp, err, sizeof(err)))
		brt_jit_dump(jp, insns, mem, 0);
	if (mem)
		fclose(mem);
	brt_obj_put(&prog->obj);
	return text ? text : strdup("");
}

static void scenario(sys_fn sys, const char *engine, struct outcome *o)
{
	int maps[NMAPS], fd;
	char text[sizeof(prog_fmt) + 48];
	uint64_t init[2] = { 0x100, 0x2000000030ull };

	memset(o, 0, sizeof(*o));
	enum bpfrt_engine e = BPFRT_ENGINE_DEFAULT;

	if (engine)
		T_EQ_INT(0, brt_vm_engine_parse(engine, 0, &e));
	engine_flags = BPFRT_F_ENGINE(e);
	for (int m = 0; m < NMAPS; m++) {
		maps[m] = mk(sys, m);
		T_ASSERT(maps[m] >= 0);
	}
	/* some contents: arrays at 0 and 2, hashes at 1, 3, 5 */
	for (uint32_t k = 0; k < 6; k++) {
		uint64_t v[64] = { 0 };

		v[0] = init[0] + k;
		v[1] = init[1];
		if (k == 0 || k == 2)
			for (int m = M_ARRAY; m <= M_FROZEN; m++)
				T_EQ_INT(0, elem(sys, BPF_MAP_UPDATE_ELEM, maps[m], k, v));
		if (k & 1) {
			T_EQ_INT(0, elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_HASH], k, v));
			T_EQ_INT(0, elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_LRU], k, v));
			T_EQ_INT(0, elem(sys, BPF_MAP_UPDATE_ELEM, maps[M_HASH_LAZY], k, v));
		}
	}
	{
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)maps[M_FROZEN];
		T_EQ_INT(0, sys(BPF_MAP_FREEZE, &a, sizeof(a)));
	}
	for (int m = 0; m < NMAPS; m++) {
		for (size_t k = 0; k < NKEYS; k++) {
			snprintf(text, sizeof(text), prog_fmt, (int)keys[k], m,
				 (int)shapes[m].value_size - 4);
			fd = load(sys, text, maps);
			if (fd < 0)
				continue;
			if (engine && !strcmp(engine, "jit") && k == 0) {
				char *notes = jit_notes(fd);

				T_CASE(note_of(m));
				T_ASSERT(strstr(notes, note_of(m)) != NULL);
				free(notes);
			}
			o->ret[m][k] = diff_run64(sys, fd, 3);
			close(fd);
		}
	}
	fd = load(sys, two_maps, maps);
	if (fd >= 0) {
		if (engine && !strcmp(engine, "jit")) {
			char *notes = jit_notes(fd);

			T_CASE("two maps at one call: the generic helper");
			T_ASSERT(!strstr(notes, "lookup inlined") && !strstr(notes, "directly"));
			free(notes);
		}
		o->ret_two = diff_run64(sys, fd, 3);
		close(fd);
	}
	for (int m = 0; m < NMAPS; m++) {
		for (uint32_t k = 0; k < 8; k++) {
			uint64_t v[1024 * 2] = { 0 };
			uint32_t n = 1, stride = (shapes[m].value_size + 7) / 8;

			if (elem(sys, BPF_MAP_LOOKUP_ELEM, maps[m], k, v))
				continue;
			if (shapes[m].type == BPF_MAP_TYPE_PERCPU_ARRAY)
				n = brt_ncpus();
			for (uint32_t c = 0; c < n && c < 1024; c++)
				o->sums[m][k] += v[c * stride];
		}
		close(maps[m]);
	}
	engine_flags = 0;
}

static void compare(const char *what, const struct outcome *a, const struct outcome *b)
{
	char name[96];

	for (int m = 0; m < NMAPS; m++) {
		snprintf(name, sizeof(name), "%s: map %d (type %u)", what, m, shapes[m].type);
		T_CASE(name);
		for (size_t k = 0; k < NKEYS; k++)
			T_EQ_INT(a->ret[m][k], b->ret[m][k]);
		for (uint32_t k = 0; k < 8; k++)
			T_EQ_U64(a->sums[m][k], b->sums[m][k]);
	}
	snprintf(name, sizeof(name), "%s: two maps at one call", what);
	T_CASE(name);
	T_EQ_INT(a->ret_two, b->ret_two);
}

/* The inlined hash probe (lookup.c, emit_hash_probe) against the interpreter's generic
 * lookup on one map: every key size the probe hashes (whole words, tails of 1, 2 and 4)
 * and two it leaves to the map's lookup (6, 40 bytes); 24 keys in 32 buckets, so some
 * share a bucket and are found past its first element; absent keys; then after deleting
 * and rewriting some (elements replaced, bucket heads changed).  The keys are stored byte
 * by byte as constants, so keys of up to 16 bytes take pass constkey's path. */
static int probe_prog(sys_fn sys, int map, const unsigned char *key, uint32_t ks,
		      uint32_t engine)
{
	char text[4096];
	size_t len = 0;
	int fd, maps[1] = { map };

	for (uint32_t j = 0; j < ks; j++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "stb [%%r10%+d], %u\n",
					(int)j - 48, key[j]);
	snprintf(text + len, sizeof(text) - len,
		 "mov %%r2, %%r10\nadd %%r2, -48\nlddw %%r1, map_fd 0\ncall 1\n"
		 "jeq %%r0, 0, +2\nldxw %%r0, [%%r0+0]\nexit\nmov %%r0, -1\nexit\n");
	engine_flags = engine;
	fd = load(sys, text, maps);
	engine_flags = 0;
	return fd;
}

static void probe_key(unsigned char *key, uint32_t ks, uint32_t i)
{
	for (uint32_t j = 0; j < ks; j++)
		key[j] = (unsigned char)(i * 37 + j * 11 + 1);
}

static void hash_probe_sizes(void)
{
	static const uint32_t sizes[] = { 4, 8, 16, 32, 12, 2, 9, 20, 6, 40 };
	enum bpfrt_engine ei = BPFRT_ENGINE_DEFAULT, ej = BPFRT_ENGINE_DEFAULT;
	char name[64];

	T_EQ_INT(0, brt_vm_engine_parse("interp", 0, &ei));
	T_EQ_INT(0, brt_vm_engine_parse("jit", 0, &ej));
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t ks = sizes[s];
		unsigned char key[48];
		union bpf_attr a;
		int map, found = 0;

		snprintf(name, sizeof(name), "%s probe, %u-byte keys", s % 2 ? "LRU" : "hash", ks);
		T_CASE(name);
		memset(&a, 0, sizeof(a));
		a.map_type = s % 2 ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_HASH;
		a.key_size = ks;
		a.value_size = 8;
		a.max_entries = 32;
		map = sys_bpfrt(BPF_MAP_CREATE, &a, sizeof(a));
		T_ASSERT(map >= 0);
		for (uint32_t i = 0; i < 24; i++) {
			uint64_t v = 1000 + i;

			probe_key(key, ks, i);
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)map;
			a.key = (uint64_t)(uintptr_t)key;
			a.value = (uint64_t)(uintptr_t)&v;
			T_EQ_INT(0, sys_bpfrt(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)));
		}
		for (int phase = 0; phase < 2; phase++) {
			for (uint32_t i = 0; i < 30; i++) {
				int fi, fj, ri, rj;

				probe_key(key, ks, i);
				fi = probe_prog(sys_bpfrt, map, key, ks, BPFRT_F_ENGINE(ei));
				fj = probe_prog(sys_bpfrt, map, key, ks, BPFRT_F_ENGINE(ej));
				if (fi < 0 || fj < 0)
					continue;
				if (phase == 0 && i == 0) {
					char *notes = jit_notes(fj);
					bool inl = ks != 6 && ks != 40;

					T_ASSERT((strstr(notes, "hash probe inlined") != NULL) == inl);
					/* byte stores of constants: pass constkey takes keys
					 * of up to 16 (the slots its dataflow follows) */
					T_ASSERT((strstr(notes, "constant key") != NULL) ==
						 (inl && ks <= 16));
					free(notes);
				}
				ri = diff_run64(sys_bpfrt, fi, 1);
				rj = diff_run64(sys_bpfrt, fj, 1);
				T_EQ_INT(ri, rj);
				found += rj != -1;
				close(fi);
				close(fj);
			}
			/* delete 0..5, rewrite 6..11 (fresh elements take their places) */
			for (uint32_t i = 0; phase == 0 && i < 12; i++) {
				uint64_t v = 5000 + i;

				probe_key(key, ks, i);
				memset(&a, 0, sizeof(a));
				a.map_fd = (uint32_t)map;
				a.key = (uint64_t)(uintptr_t)key;
				if (i >= 6)
					a.value = (uint64_t)(uintptr_t)&v;
				T_EQ_INT(0, sys_bpfrt(i < 6 ? BPF_MAP_DELETE_ELEM : BPF_MAP_UPDATE_ELEM,
						      &a, sizeof(a)));
			}
		}
		T_EQ_INT(24 + 18, found);
		close(map);
	}
}

/* LRU hash maps: the probe stamps what it finds as the map's lookup does, so the same
 * lookups through either engine leave the same keys behind once new keys evict (two
 * maps with BPF_F_ZERO_SEED, the same operations: the same layout). */
static uint64_t lru_survivors(uint32_t ks, enum bpfrt_engine eng)
{
	unsigned char key[16];
	union bpf_attr a;
	uint64_t v = 7, alive = 0;
	int map;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_LRU_HASH;
	a.key_size = ks;
	a.value_size = 8;
	a.max_entries = 32;
	a.map_flags = BPF_F_ZERO_SEED;
	map = sys_bpfrt(BPF_MAP_CREATE, &a, sizeof(a));
	T_ASSERT(map >= 0);
	if (map < 0)
		return 0;
	for (uint32_t i = 0; i < 64; i++) {
		probe_key(key, ks, i);
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)key;
		a.value = (uint64_t)(uintptr_t)&v;
		T_EQ_INT(0, sys_bpfrt(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)));
		/* once full, the engine looks up every third of the first keys */
		for (uint32_t j = 0; i >= 32 && j < 32; j += 3) {
			int fd;

			probe_key(key, ks, j);
			fd = probe_prog(sys_bpfrt, map, key, ks, BPFRT_F_ENGINE(eng));
			if (fd >= 0) {
				diff_run64(sys_bpfrt, fd, 1);
				close(fd);
			}
		}
	}
	for (uint32_t i = 0; i < 64; i++) {
		probe_key(key, ks, i);
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)key;
		a.value = (uint64_t)(uintptr_t)&v;
		if (!sys_bpfrt(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
			alive |= 1ull << i;
	}
	close(map);
	return alive;
}

static void lru_probe(void)
{
	enum bpfrt_engine ei = BPFRT_ENGINE_DEFAULT, ej = BPFRT_ENGINE_DEFAULT;

	T_EQ_INT(0, brt_vm_engine_parse("interp", 0, &ei));
	T_EQ_INT(0, brt_vm_engine_parse("jit", 0, &ej));
	for (uint32_t ks = 4; ks <= 8; ks += 4) {
		uint64_t i = lru_survivors(ks, ei), j = lru_survivors(ks, ej);

		T_CASE(ks == 4 ? "LRU probe stamps, 4-byte keys" : "LRU probe stamps, 8-byte keys");
		T_EQ_U64(i, j);
		T_ASSERT(i != 0);
	}
}

/* Pass constkey: a key of constants stored through r10 just before the call is hashed at
 * compile time.  Each program against the interpreter on a map of 4-byte keys 0..23
 * (value 1000 + key), with the pass on and off; `konst`: whether the JIT may (and must)
 * take the key as constant.  The near misses change the key behind the dataflow's back or
 * leave a byte or the key's address unknown at the call. */
static void const_keys(void)
{
	static const struct {
		const char *what, *text;
		bool konst;
		int want;
	} progs[] = {
		{ "constant key",
		  "stw [%r10-8], 5\nmov %r2, %r10\nadd %r2, -8\n", true, 1005 },
		{ "constant key from two stores and a register",
		  "mov %r3, 0\nstxh [%r10-6], %r3\nstxb [%r10-7], %r3\nstb [%r10-8], 17\n"
		  "mov %r2, %r10\nadd %r2, -8\n", true, 1017 },
		{ "constant key addressed through a copy",
		  "stw [%r10-12], 9\nmov %r4, %r10\nadd %r4, -4\nmov %r2, %r4\nadd %r2, -8\n",
		  true, 1009 },
		{ "absent constant key",
		  "stw [%r10-8], 99\nmov %r2, %r10\nadd %r2, -8\n", true, -1 },
		{ "a byte rewritten through a copy of r10",
		  "stw [%r10-8], 5\nmov %r3, %r10\nstb [%r3-8], 7\nmov %r2, %r10\nadd %r2, -8\n",
		  false, 1007 },
		{ "a byte from the context",
		  "stw [%r10-8], 5\nldxw %r4, [%r1+0]\nrsh %r4, 3\nstxb [%r10-8], %r4\n"
		  "mov %r2, %r10\nadd %r2, -8\n", false, 1006 },
		{ "the key's address differs by path",
		  "ldxw %r4, [%r1+0]\nstw [%r10-8], 3\nstw [%r10-16], 9\nmov %r2, %r10\n"
		  "add %r2, -8\njgt %r4, 1000, +2\nmov %r2, %r10\nadd %r2, -16\n", false, 1009 },
		{ "the key's bytes differ by path",
		  "ldxw %r4, [%r1+0]\nstw [%r10-8], 3\njgt %r4, 1000, +1\nstw [%r10-8], 4\n"
		  "mov %r2, %r10\nadd %r2, -8\n", false, 1004 },
	};
	static const char tail[] = "lddw %r1, map_fd 0\ncall 1\njeq %r0, 0, +2\n"
				   "ldxw %r0, [%r0+0]\nexit\nmov %r0, -1\nexit\n";
	enum bpfrt_engine ei = BPFRT_ENGINE_DEFAULT, ej = BPFRT_ENGINE_DEFAULT;
	union bpf_attr a;
	int map;

	T_EQ_INT(0, brt_vm_engine_parse("interp", 0, &ei));
	T_EQ_INT(0, brt_vm_engine_parse("jit", 0, &ej));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 32;
	map = sys_bpfrt(BPF_MAP_CREATE, &a, sizeof(a));
	T_ASSERT(map >= 0);
	if (map < 0)
		return;
	for (uint32_t k = 0; k < 24; k++) {
		uint64_t v = 1000 + k;

		T_EQ_INT(0, elem(sys_bpfrt, BPF_MAP_UPDATE_ELEM, map, k, &v));
	}
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char text[1024];
		int maps[1] = { map };

		snprintf(text, sizeof(text), "%s%s", progs[i].text, tail);
		T_CASE(progs[i].what);
		for (int off = 0; off < 2; off++) {
			int fi, fj;

			if (off)
				setenv("BPFRT_JIT_PASSES", "-constkey", 1);
			engine_flags = BPFRT_F_ENGINE(ei);
			fi = load(sys_bpfrt, text, maps);
			engine_flags = BPFRT_F_ENGINE(ej);
			fj = load(sys_bpfrt, text, maps);
			engine_flags = 0;
			if (fi < 0 || fj < 0) {
				unsetenv("BPFRT_JIT_PASSES");
				continue;
			}
			{
				char *notes = jit_notes(fj);

				T_ASSERT(strstr(notes, "hash probe inlined") != NULL);
				T_ASSERT((strstr(notes, "constant key") != NULL) ==
					 (progs[i].konst && !off));
				free(notes);
			}
			T_EQ_INT(progs[i].want, diff_run64(sys_bpfrt, fi, 1));
			T_EQ_INT(progs[i].want, diff_run64(sys_bpfrt, fj, 1));
			close(fi);
			close(fj);
			/* the JIT may compile again at the first run: the setting stays until then */
			unsetenv("BPFRT_JIT_PASSES");
		}
	}
	close(map);
}

/* Pass percpu: the inline path adds to the value of the CPU the thread runs on, as the
 * interpreter (brt_cpu()) does: pinned to each CPU in turn, one run of each engine must
 * add to that CPU's value; and, in a trace run for a record of another CPU
 * (brt_cpu_enter()), to that CPU's. */
static void percpu_slot(void)
{
	static const char text[] = "stw [%r10-4], 1\nmov %r2, %r10\nadd %r2, -4\n"
				   "lddw %r1, map_fd 0\ncall 1\njeq %r0, 0, +2\nmov %r1, 1\n"
				   "lock add [%r0+0], %r1\nmov %r0, 0\nexit\n";
	enum bpfrt_engine e[2] = { BPFRT_ENGINE_DEFAULT, BPFRT_ENGINE_DEFAULT };
	uint32_t ncpus = brt_ncpus();
	uint64_t want[64] = { 0 }; /* each CPU's value so far */
	cpu_set_t saved;
	union bpf_attr a;
	int map, fd[2];

	T_CASE("per-CPU array: the running CPU's value");
	T_EQ_INT(0, brt_vm_engine_parse("interp", 0, &e[0]));
	T_EQ_INT(0, brt_vm_engine_parse("jit", 0, &e[1]));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 3;
	map = sys_bpfrt(BPF_MAP_CREATE, &a, sizeof(a));
	T_ASSERT(map >= 0);
	if (map < 0 || sched_getaffinity(0, sizeof(saved), &saved))
		return;
	for (int k = 0; k < 2; k++) {
		int maps[1] = { map };

		engine_flags = BPFRT_F_ENGINE(e[k]);
		fd[k] = load(sys_bpfrt, text, maps);
		engine_flags = 0;
	}
	for (uint32_t c = 0; c < ncpus && c < 64 && fd[0] >= 0 && fd[1] >= 0; c++) {
		cpu_set_t one;
		uint64_t v[64 * 2];

		if (!CPU_ISSET(c, &saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		for (int k = 0; k < 4; k++) {
			/* runs 2 and 3 for a record of the next CPU, as the trace runner does */
			uint32_t slot = k < 2 ? c : (c + 1) % (ncpus < 64 ? ncpus : 64), prev = 0;

			if (k >= 2)
				prev = brt_cpu_enter(slot);
			memset(v, 0, sizeof(v));
			T_EQ_INT(0, diff_run64(sys_bpfrt, fd[k % 2], 1));
			if (k >= 2)
				brt_cpu_leave(prev);
			T_EQ_INT(0, elem(sys_bpfrt, BPF_MAP_LOOKUP_ELEM, map, 1, v));
			T_EQ_U64(++want[slot], v[slot]);
		}
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	if (fd[0] >= 0)
		close(fd[0]);
	if (fd[1] >= 0)
		close(fd[1]);
	close(map);
}

/* ---- chains: keys deep in a bucket's chain, and chains another process scribbled ----
 * The JIT compiled directly (brt_jit_compile) with the call bound to the map as
 * BPF_PROG_LOAD binds it, the map's lookup counted (counted_lookup): a key at any of the
 * first JIT_PROBE_CHAIN (8, src/jit/x86_64/x86.h) positions of its chain, or absent from
 * a chain that short, must be found without the map's lookup; past that, and wherever
 * the chain's indexes,
 * hashes or sequence words were scribbled (a loop, an index out of range, one of a free
 * element, an element of another bucket), the probe must end and call the map's lookup.
 * Each result is compared with the interpreter's run of the same program and with the
 * map's own lookup. */
static struct brt_map *chain_map;
static unsigned lookup_calls;

static void *counted_lookup(struct brt_map *map, const void *key)
{
	lookup_calls++;
	return map->ops->lookup(map, key);
}

static uint64_t chain_helper(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			     struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)(uintptr_t)((struct brt_map *)(uintptr_t)r1)
		->ops->lookup((struct brt_map *)(uintptr_t)r1, (const void *)(uintptr_t)r2);
}

static bpfrt_helper_fn chain_resolve(void *arg, uint32_t id)
{
	(void)arg;
	return id == BPF_FUNC_map_lookup_elem ? chain_helper : NULL;
}

/* r0 = lookup(map, key): the key's u32 from the input (konst: the constant k, stored
 * with st, which pass constkey hashes at compile time) */
static size_t chain_prog(struct bpf_insn *in, uint64_t map, bool konst, uint32_t k)
{
	size_t n = 0;

	if (konst) {
		in[n++] = (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10,
					     .off = -8, .imm = (int32_t)k };
	} else {
		in[n++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 3,
					     .src_reg = 1 };
		in[n++] = (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_W, .dst_reg = 10,
					     .src_reg = 3, .off = -8 };
	}
	in[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2,
				     .src_reg = 10 };
	in[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -8 };
	in[n++] = (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1,
				     .imm = (int32_t)(uint32_t)map };
	in[n++] = (struct bpf_insn){ .imm = (int32_t)(uint32_t)(map >> 32) };
	in[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
				     .imm = BPF_FUNC_map_lookup_elem };
	in[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	return n;
}

/* The lookup of k (chain_prog) compiled with its call bound to chain_map. */
static struct brt_jit_prog *chain_compile(struct bpf_insn *in, size_t n)
{
	struct brt_jit_lookup l = { .kind = BRT_JIT_LOOKUP_HASH, .helper = chain_helper };
	struct brt_jit_env env = { .helper = chain_resolve, .lookups = &l, .nlookups = 1 };
	void *(*op)(struct brt_map *, const void *) = counted_lookup;
	struct brt_hash_probe hp;
	struct brt_jit_prog *jp;
	char err[256];

	T_EQ_INT(0, brt_hash_probe(chain_map, &hp));
	l.insn = (uint32_t)(n - 2);
	memcpy(&l.op, &op, sizeof(l.op));
	brt_jit_hash_layout_of(&hp, &l.hash);
	if (brt_jit_compile(in, n, &env, &jp, err, sizeof(err))) {
		T_FAIL("compile: %s", err);
		return NULL;
	}
	return jp;
}

/* What the JIT's run of the lookup of k returns, with *calls the map lookups it made;
 * the interpreter's run and the map's lookup must return the same (checked here). */
static uint64_t chain_run(bool konst, uint32_t k, unsigned *calls)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = BPFRT_ENGINE_INTERP);
	BPFRT_OPTS(bpfrt_helper_proto, h, .id = BPF_FUNC_map_lookup_elem, .name = "lookup",
		   .fn = chain_helper);
	struct bpfrt_run_ctx ctx = { 0 };
	struct bpf_insn in[16];
	struct brt_jit_prog *jp;
	struct bpfrt_vm *vm;
	uint64_t r0 = 0, ri = 0, mem = k;
	char err[256];
	size_t n = chain_prog(in, (uint64_t)(uintptr_t)chain_map, konst, k);

	jp = chain_compile(in, n);
	if (!jp)
		return 0;
	lookup_calls = 0;
	r0 = brt_jit_call(jp, (uint64_t)(uintptr_t)&mem, 8, &ctx);
	*calls = lookup_calls;
	brt_jit_free(jp);
	if (bpfrt_vm_load(in, n, &o, &vm, err, sizeof(err))) {
		T_FAIL("interp load: %s", err);
		return r0;
	}
	bpfrt_helper_register(vm, &h);
	T_EQ_INT(0, bpfrt_vm_run(vm, &mem, 8, &ri, err, sizeof(err)));
	bpfrt_vm_free(vm);
	T_EQ_U64(ri, r0);
	T_EQ_U64((uint64_t)(uintptr_t)chain_map->ops->lookup(chain_map, &k), r0);
	return r0;
}

/* The u32 word at off of element idx (1-based) */
static _Atomic uint32_t *chain_word(const struct brt_hash_probe *hp, uint32_t idx, uint8_t off)
{
	return (_Atomic uint32_t *)(void *)((unsigned char *)hp->elems +
					    (size_t)(idx - 1) * hp->elem_size + off);
}

/* A hash map (type) of u32 keys and u64 values, 64 entries (64 buckets) */
static int chain_map_create(uint32_t type, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 64;
	a.map_flags = flags;
	return sys_bpfrt(BPF_MAP_CREATE, &a, sizeof(a));
}

static void hash_chains(uint32_t type, uint32_t flags, const char *what)
{
	enum { LONG = 12 }; /* keys in the crowded bucket */
	uint32_t chain[LONG + 1], key[LONG + 4], nk = 0, absent = 0, bucket, idx, len = 0;
	struct brt_hash_probe hp;
	unsigned calls;
	char name[128];
	int fd = chain_map_create(type, flags);

	T_CASE(what);
	T_ASSERT(fd >= 0);
	if (fd < 0 || brt_map_from_fd(fd, &chain_map))
		return;
	T_EQ_INT(0, brt_hash_probe(chain_map, &hp));
	/* LONG keys of one bucket, and one more of it left out */
	bucket = brt_keyhash(&nk, 4, hp.seed) & (hp.n_buckets - 1);
	for (uint32_t k = 0; nk < LONG + 1; k++)
		if ((brt_keyhash(&k, 4, hp.seed) & (hp.n_buckets - 1)) == bucket)
			key[nk++] = k;
	absent = key[LONG];
	for (uint32_t i = 0; i < LONG; i++) {
		uint64_t v = 100 + i;

		T_EQ_INT(0, elem(sys_bpfrt, BPF_MAP_UPDATE_ELEM, fd, key[i], &v));
	}
	/* the chain as it lies in memory: chain[p] is the key at position p + 1 */
	idx = atomic_load((_Atomic uint32_t *)(void *)((unsigned char *)hp.buckets +
						       (size_t)bucket * hp.bucket_size +
						       hp.head_off));
	while (idx && len < LONG + 1) {
		memcpy(&chain[len++], (unsigned char *)hp.elems + (size_t)(idx - 1) * hp.elem_size +
					      hp.key_off, 4);
		idx = *chain_word(&hp, idx, hp.next_off);
	}
	T_EQ_INT(LONG, (int)len);
	for (int konst = 0; konst < 2; konst++) {
		for (uint32_t pos = 0; pos < len; pos++) {
			snprintf(name, sizeof(name), "%s: key at position %u of a chain of %u%s",
				 what, pos + 1, len, konst ? ", constant key" : "");
			T_CASE(name);
			T_ASSERT(chain_run(konst, chain[pos], &calls) != 0);
			/* the first 8 inline, the map's lookup past them */
			T_EQ_INT(pos < 8 ? 0 : 1, (int)calls);
		}
	}
	/* a chain of 5: the absent key's end of chain inline */
	for (uint32_t i = 5; i < LONG; i++)
		T_EQ_INT(0, elem(sys_bpfrt, BPF_MAP_DELETE_ELEM, fd, key[i], NULL));
	len = 0;
	idx = atomic_load((_Atomic uint32_t *)(void *)((unsigned char *)hp.buckets +
						       (size_t)bucket * hp.bucket_size +
						       hp.head_off));
	while (idx && len < LONG + 1) {
		chain[len++] = idx;
		idx = *chain_word(&hp, idx, hp.next_off);
	}
	snprintf(name, sizeof(name), "%s: absent key, chain of 5", what);
	T_CASE(name);
	T_EQ_INT(5, (int)len);
	T_EQ_U64(0, chain_run(false, absent, &calls));
	T_EQ_INT(0, (int)calls);
	T_EQ_U64(0, chain_run(true, absent, &calls));
	T_EQ_INT(0, (int)calls);
	/* scribbles into the last element's next (and then a middle one's): a loop back to
	 * the head, to itself, indexes out of range, a free element's index; each lookup
	 * must end (the map's lookup judges) and agree with the interpreter's */
	{
		const uint32_t bad[] = { chain[0], chain[4], chain[2], hp.n_elems + 1, hp.n_elems,
					 0xffffffffu, 0x80000000u, 0 };
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			for (uint32_t at = 4; at >= 2; at -= 2) {
				_Atomic uint32_t *next = chain_word(&hp, chain[at], hp.next_off);
				uint32_t saved = *next;

				snprintf(name, sizeof(name), "%s: next of position %u scribbled to %#x",
					 what, at + 1, bad[b]);
				T_CASE(name);
				*next = bad[b];
				for (int konst = 0; konst < 2; konst++) {
					chain_run(konst, absent, &calls);
					for (uint32_t i = 0; i < 5; i++)
						chain_run(konst, key[i], &calls);
				}
				*next = saved;
			}
		}
	}
	/* an element of the chain scribbled into another bucket's (its hash) and left odd
	 * (a writer died in it): the map's lookup judges */
	for (int what2 = 0; what2 < 2; what2++) {
		_Atomic uint32_t *w = chain_word(&hp, chain[1], what2 ? hp.seq_off : hp.hash_off);
		uint32_t saved = *w;

		snprintf(name, sizeof(name), "%s: position 2's %s scribbled", what,
			 what2 ? "sequence word (odd)" : "hash (another bucket's)");
		T_CASE(name);
		*w = what2 ? saved | 1 : saved + 1;
		for (int konst = 0; konst < 2; konst++) {
			chain_run(konst, absent, &calls);
			T_ASSERT(calls == 1);
			for (uint32_t i = 0; i < 5; i++)
				chain_run(konst, key[i], &calls);
		}
		*w = saved;
	}
	brt_map_put(chain_map);
	chain_map = NULL;
	close(fd);
}

/* A writer thread deletes and reinserts the chain mates of a key while the JIT's probe
 * looks it up: the probe may meet elements unlinked, freed and reused under it, and must
 * still find the key (never removed) with its own value, and never an absent key of the
 * bucket (the map's own lookup would not). */
static _Atomic int writer_stop;
static _Atomic unsigned long writer_rounds;
static int writer_fd;
static uint32_t writer_keys[4];

static void *chain_writer(void *arg)
{
	uint64_t v;

	(void)arg;
	while (!atomic_load(&writer_stop)) {
		for (uint32_t i = 0; i < 4; i++)
			elem(sys_bpfrt, BPF_MAP_DELETE_ELEM, writer_fd, writer_keys[i], NULL);
		for (uint32_t i = 0; i < 4; i++) {
			v = 100 + writer_keys[3 - i];
			elem(sys_bpfrt, BPF_MAP_UPDATE_ELEM, writer_fd, writer_keys[3 - i], &v);
		}
		atomic_fetch_add(&writer_rounds, 1);
	}
	return NULL;
}

static void hash_chain_writer(void)
{
	uint32_t key[6], nk = 0, bucket;
	struct brt_hash_probe hp;
	struct brt_jit_prog *jp[2][2] = { { NULL } };
	struct bpfrt_run_ctx ctx = { 0 };
	struct bpf_insn in[2][2][16];
	unsigned long bad = 0, inline_runs = 0, runs = 0;
	pthread_t t;

	writer_fd = chain_map_create(BPF_MAP_TYPE_HASH, 0);
	T_CASE("hash chain rewritten by another thread under the probe");
	T_ASSERT(writer_fd >= 0);
	if (writer_fd < 0 || brt_map_from_fd(writer_fd, &chain_map))
		return;
	T_EQ_INT(0, brt_hash_probe(chain_map, &hp));
	bucket = brt_keyhash(&nk, 4, hp.seed) & (hp.n_buckets - 1);
	for (uint32_t k = 0; nk < 6; k++)
		if ((brt_keyhash(&k, 4, hp.seed) & (hp.n_buckets - 1)) == bucket)
			key[nk++] = k;
	/* key[4] stays, key[5] is never inserted, the others come and go */
	for (uint32_t i = 0; i < 5; i++) {
		uint64_t v = 100 + key[i];

		T_EQ_INT(0, elem(sys_bpfrt, BPF_MAP_UPDATE_ELEM, writer_fd, key[i], &v));
		if (i < 4)
			writer_keys[i] = key[i];
	}
	for (int konst = 0; konst < 2; konst++)
		for (int which = 0; which < 2; which++)
			jp[konst][which] = chain_compile(
				in[konst][which],
				chain_prog(in[konst][which], (uint64_t)(uintptr_t)chain_map, konst,
					   key[4 + which]));
	T_ASSERT(jp[0][0] && jp[0][1] && jp[1][0] && jp[1][1]);
	atomic_store(&writer_stop, 0);
	T_EQ_INT(0, pthread_create(&t, NULL, chain_writer, NULL));
	for (unsigned long i = 0; i < 400000 && jp[1][1]; i++) {
		int konst = i & 1, which = (i >> 1) & 1;
		uint64_t mem = key[4 + which], r0;

		lookup_calls = 0;
		r0 = brt_jit_call(jp[konst][which], (uint64_t)(uintptr_t)&mem, 8, &ctx);
		inline_runs += !lookup_calls;
		runs++;
		if (which ? r0 != 0 : (!r0 || *(uint64_t *)(uintptr_t)r0 != 100 + key[4]))
			bad++;
		if (!(i & 1023))
			sched_yield(); /* let the writer in on a loaded machine */
	}
	atomic_store(&writer_stop, 1);
	pthread_join(t, NULL);
	T_EQ_U64(0, bad);
	/* most lookups stay inline while the writer works */
	T_ASSERT(inline_runs > runs / 2);
	printf("chain writer: %lu lookups (%lu inline, %lu wrong) during %lu rounds of the "
	       "writer\n", runs, inline_runs, bad, atomic_load(&writer_rounds));
	for (int konst = 0; konst < 2; konst++)
		for (int which = 0; which < 2; which++)
			if (jp[konst][which])
				brt_jit_free(jp[konst][which]);
	brt_map_put(chain_map);
	chain_map = NULL;
	close(writer_fd);
}

int main(void)
{
	static struct outcome interp, jit, kernel;

	scenario(sys_bpfrt, "interp", &interp);
	scenario(sys_bpfrt, "jit", &jit);
	T_CASE("sanity");
	T_EQ_INT(0x103 + 0x30, interp.ret[M_ARRAY][0]); /* after 3 runs, + last u32 */
	T_EQ_INT(-1, interp.ret[M_ARRAY][5]); /* index == max_entries */
	T_EQ_INT(-1, interp.ret[M_ARRAY][8]); /* 0xffffffff */
	T_EQ_INT(0x106, interp.ret[M_HASH][3]);
	T_EQ_INT(-1, interp.ret[M_HASH][2]);
	T_EQ_U64(0x103, interp.sums[M_ARRAY][0]);
	T_EQ_U64(3, interp.sums[M_PERCPU][1]);
	T_EQ_INT(0x106, interp.ret_two);
	compare("jit vs interp", &interp, &jit);
	hash_probe_sizes();
	lru_probe();
	const_keys();
	percpu_slot();
	hash_chains(BPF_MAP_TYPE_HASH, 0, "hash chain");
	hash_chains(BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, "no-prealloc hash chain");
	hash_chains(BPF_MAP_TYPE_LRU_HASH, 0, "LRU hash chain");
	hash_chain_writer();
	if (!kernel_available()) {
		printf("kernel comparison skipped: not root or no bpf()\n");
		return t_done();
	}
	scenario(sys_kernel, NULL, &kernel);
	compare("bpfrt vs kernel", &kernel, &jit);
	return t_done();
}
