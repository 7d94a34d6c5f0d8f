/* maps.h - the map types.  The maps/ folder's interface: the common map code and dispatch
 * (map.c), one file per map type (map_types.def), perf output rings.  Maps are objects of
 * the fd layer below (src/obj/obj.h, kind BRT_OBJ_MAP).
 * Shared-memory layout, locking and the memory model: docs/MEMORY_MODEL.md.
 */
#ifndef BPFRT_SRC_MAPS_MAPS_H
#define BPFRT_SRC_MAPS_MAPS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>

#include "obj/obj.h"
#include "util/util.h"
#include "vm/helper_proto.h"

/* ---- maps ------------------------------------------------------------------------------ */

struct brt_map;

/* What a map type implements.  A NULL member means "not supported" and the dispatcher
 * returns the kernel's errno for that case.  Keys and values given here are in process
 * memory (already copied from the user); values of per-CPU maps on the syscall side hold
 * ncpus slots of round_up(value_size, 8) bytes. */
/* What a type's MAP_CREATE takes as key and value BTF: the kernel's map_check_btf op of
 * the type (api/btf_load.c checks it).  0, the default: the type has none, and a key
 * type is needed (a value type alone is EINVAL). */
enum brt_map_btf_kind {
	BRT_MAP_BTF_KEYED = 0,
	BRT_MAP_BTF_NONE,       /* map_check_no_btf(): no key or value BTF (ENOTSUPP) */
	BRT_MAP_BTF_ARRAY,      /* array_map_check_btf(): an int key, or keyless DATASEC */
	BRT_MAP_BTF_KEYLESS,    /* bloom_map_check_btf(): no key type */
	BRT_MAP_BTF_STRUCT_KEY, /* trie_check_btf(): a struct key */
	BRT_MAP_BTF_INT_KEY,    /* bpf_local_storage_map_check_btf(): an int key */
	BRT_MAP_BTF_CGROUP_KEY, /* cgroup_storage_check_btf(): u64, or the two-member key */
};

struct brt_map_ops {
	/* attribute check (the kernel's map_alloc_check): 0 or the kernel's errno */
	int (*alloc_check)(const union bpf_attr *attr);
	/* the key and value BTF the type takes */
	enum brt_map_btf_kind btf;
	/* map_flags the type adds at creation, reported by GET_INFO (devmap: the kernel
	 * sets BPF_F_RDONLY_PROG, lookups point at its entries) */
	uint32_t forced_flags;
	/* the type's syscall reads (lookup, get_next_key) write nothing shared when the
	 * process maps the file read-only (obj.h's ro: a BPF_OBJ_GET with BPF_F_RDONLY of a
	 * pin it may only read), so such a mapping may be made (map.c's ro_usable()) */
	int ro_reads;
	/* size of the shared region for the map's parameters (its fields up to value_stride),
	 * or -errno */
	int (*data_size)(const struct brt_map *map, uint64_t *size);
	/* optional: the part of the region (page aligned, *len 0: none) that is not reserved
	 * at creation, because the type reserves it as it is used (brt_obj_create_sparse(),
	 * the kernel's allocation at update of a BPF_F_NO_PREALLOC map) */
	void (*lazy_range)(const struct brt_map *map, uint64_t *off, uint64_t *len);
	/* initialise a fresh region */
	int (*init)(struct brt_map *map);
	/* validate an existing region (possibly from another process, possibly corrupt) and
	 * set up per-process state; 0 or -errno */
	int (*attach)(struct brt_map *map);
	void (*detach)(struct brt_map *map);
	/* program side: pointer to this CPU's value, NULL if absent */
	void *(*lookup)(struct brt_map *map, const void *key);
	/* per-CPU maps (bpf_map_lookup_percpu_elem): the value of CPU cpu (< ncpus), NULL if
	 * absent */
	void *(*lookup_cpu)(struct brt_map *map, const void *key, uint32_t cpu);
	/* nonzero: lookup returns not a value but a read-only object of this size (sockmap,
	 * sockhash: a struct brt_sock) */
	uint32_t lookup_size;
	/* syscall side: copy the value (all CPUs for per-CPU maps) */
	int (*copy_value)(struct brt_map *map, const void *key, void *value);
	/* syscall-side update (value for all CPUs) and program-side update (one CPU) */
	int (*update)(struct brt_map *map, const void *key, const void *value, uint64_t flags);
	int (*prog_update)(struct brt_map *map, const void *key, const void *value,
			   uint64_t flags);
	int (*delete)(struct brt_map *map, const void *key);
	int (*get_next_key)(struct brt_map *map, const void *key, void *next_key);
	int (*lookup_and_delete)(struct brt_map *map, const void *key, void *value);
	/* no fd refers to the map any more (programs may still hold it): prog arrays drop
	 * their entries, as the kernel does on the last user reference */
	void (*unref)(struct brt_map *map);
	/* unref runs whether or not the map is pinned: the kernel's map_release() of the
	 * closed file (perf event arrays), not map_release_uref(), which a pin defers */
	int unref_per_file;
	/* another process's file of a map of these parameters (params: no region, no priv),
	 * read with pread: fn(arg, bytes) with bytes [off, off + len) of the value of every
	 * element in use (CPU 0's of a per-CPU map); 0, or -errno on a short read or without
	 * memory (brt_map_file_values()) */
	int (*file_values)(const struct brt_map *params, int fd, uint32_t off, uint32_t len,
			   void (*fn)(void *arg, const void *bytes), void *arg);
	/* queue, stack (value only) */
	int (*push)(struct brt_map *map, const void *value, uint64_t flags);
	int (*pop)(struct brt_map *map, void *value);
	int (*peek)(struct brt_map *map, void *value);
};

struct brt_map {
	struct brt_obj obj;            /* first: a map is an object */
	const struct brt_map_ops *ops;
	uint32_t type;                 /* enum bpf_map_type */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;                /* map_flags */
	uint32_t ncpus;                /* values per element of per-CPU maps, else 1 */
	uint32_t value_stride;         /* round_up(value_size, 8) */
	uint64_t map_extra;            /* MAP_CREATE's map_extra (bloom filter: hash count) */
	void *data;                    /* the type's region (file offset 0) */
	uint64_t data_size;
	void *priv;                    /* per-process state of the type (ring buffer views) */
	/* the offset in the value of its lock word, -1 when none: a struct bpf_spin_lock
	 * (BPF_F_LOCK takes it) or, with lock_res, a struct bpf_res_spin_lock (res_lock.c);
	 * copies from and to the syscall side leave it out either way */
	int32_t lock_off;
	int lock_res;
	int32_t task_work_off;         /* struct bpf_task_work offset in the value (8-aligned,
					* inside it), -1 when none (task_work.c) */
	int32_t timer_off;             /* struct bpf_timer offset in the value (8-aligned,
					* inside it), -1 when none (timer.c) */
	/* the value's lists and trees (bpf_list_head, bpf_rb_root; always with a lock):
	 * emptied when the value is deleted or replaced, zero in what the syscall side
	 * reads, never written from it (spin_lock.c) */
	uint32_t nroots;
	struct brt_obj_root roots[BRT_OBJ_MAX_ROOTS];
	/* maps with a bpf_spin_lock: the redo journal of BPF_F_LOCK updates after the type's
	 * region (spin_lock.c), else NULL */
	void *journal;
	/* the BTF the verifier checks programs against (api/btf_load.c brt_map_btf_snap()):
	 * a private copy, never the file's, which another process may rewrite; the
	 * creator's is the BTF object's own blob, another process's is copied from the file
	 * and checked once, at the first program that uses the map; NULL until then */
	struct brt_btf_snap *_Atomic btf_snap;
};

#define BRT_MAP_TYPE(type, name, ops) extern const struct brt_map_ops ops;
/* map types newer than the uapi header bpfrt builds with */
#define BRT_MAP_TYPE_CGRP_STORAGE 32 /* BPF_MAP_TYPE_CGRP_STORAGE (Linux 6.2) */
#define BRT_MAP_TYPE_ARENA 33 /* BPF_MAP_TYPE_ARENA (Linux 6.9) */
#include "maps/map_types.def"
#undef BRT_MAP_TYPE

#define brt_map_of(o) ((struct brt_map *)(void *)(o))

/* A BTF blob in process memory that has passed BPF_BTF_LOAD's checks: a BTF object's
 * (api/btf_load.c), shared by reference with the maps made from it, or one copied from a
 * map's file and checked (brt_map_btf_snap()).  Never changes once made. */
struct brt_btf_snap {
	_Atomic uint32_t refs;
	uint32_t size;
	/* blob parsed once for the verifier (api/btf_load.c brt_btf_snap_btf(): not by every
	 * program load that reads a value's fields), NULL until then; freed with the snap by
	 * parsed_free, set at its creation (this layer knows no BTF) */
	_Atomic(void *) parsed;
	void (*parsed_free)(void *parsed);
	unsigned char blob[];
};
void brt_btf_snap_put(struct brt_btf_snap *snap);

/* MAP_CREATE's BTF once the caller checked it (src/api/btf_load.c): the BTF object's id
 * and raw bytes (valid while ref, the BTF object, is held); all zero for a map without BTF. */
struct brt_map_btf {
	uint32_t id;
	const void *blob;
	uint32_t size;
	struct brt_obj *ref;
	struct brt_btf_snap *snap; /* blob's, the BTF object's (the map takes a reference) */
	uint32_t lock_off; /* 1 + offset of the value's struct bpf_spin_lock, 0: none */
	uint32_t timer_off; /* 1 + offset of the value's struct bpf_timer, 0: none */
	uint32_t task_work_off; /* 1 + offset of its struct bpf_task_work, 0: none */
	uint32_t res_lock_off; /* 1 + offset of its struct bpf_res_spin_lock, 0: none */
	uint32_t nroots;       /* its bpf_list_head and bpf_rb_root fields */
	struct brt_obj_root roots[BRT_OBJ_MAX_ROOTS];
};

/* A map keeps a copy of a BTF blob up to this size (the kernel's BTF_MAX_SIZE is 16 MiB;
 * objects clang emits carry a few KiB); a bigger one leaves the map with ids only. */
#define BRT_MAP_BTF_MAX (4u << 20)

/* MAP_CREATE: check attributes like the kernel and create the map; returns fd or -errno.
 * btf may be NULL (no BTF). */
int brt_map_create(const union bpf_attr *attr, const struct brt_map_btf *btf,
		   struct brt_map **out);
/* Its checks that come before the kernel's map_check_btf(): map_create()'s own and the
 * type's map_alloc_check(); 0 or the kernel's errno. */
int brt_map_create_check(const union bpf_attr *attr);

/* The copy of the BTF blob the map was created with: 0 with *blob (shared memory, which
 * another process may scribble over: read it once, into a private copy, as
 * brt_map_btf_snap() does) and *size, or -ENOENT. */
int brt_map_btf_blob(const struct brt_map *map, const void **blob, uint32_t *size);

/* Maps whose value holds a bpf_spin_lock (spin_lock.c): the syscall side never reads or
 * writes the lock word except to take it (BPF_F_LOCK), as the kernel's
 * copy_map_value[_locked]().  A BPF_F_LOCK update is first written to a redo journal
 * that follows the type's region, so whoever takes the lock over from a writer killed
 * during the copy finishes it: brt_map_journal_size() bytes, after round_up(type's
 * region, 8). */
uint64_t brt_map_journal_size(uint32_t value_size);
int brt_map_lock_lookup(struct brt_map *map, const void *key, void *value, uint64_t flags);
int brt_map_lock_update(struct brt_map *map, const void *key, const void *value,
			uint64_t flags);
int brt_map_lock_lookup_and_delete(struct brt_map *map, const void *key, void *value,
				   uint64_t flags);

/* struct bpf_res_spin_lock (res_lock.c), for the bpf_res_spin_lock kfuncs: take the lock
 * word at lock (4-byte aligned, checked by the caller) for the run ctx: 0, -EDEADLK (AA,
 * or ABBA with another thread of this process) or -ETIMEDOUT (held for RES_DEF_TIMEOUT);
 * release it (the verifier makes programs release in the reverse order of taking). */
int brt_res_lock(void *lock, struct bpfrt_run_ctx *ctx);
void brt_res_unlock(void *lock, struct bpfrt_run_ctx *ctx);
/* How many of this process's accesses to the registry of waiting threads faulted (a
 * process of the user truncated the file): for tests */
unsigned brt_res_lock_registry_faults(void);
/* bpf_map_update_elem() from a program on such a map (BPF_F_LOCK allowed, as the kernel) */
int brt_map_lock_prog_update(struct brt_map *map, const void *key, const void *value,
			     uint64_t flags);

/* A value's lists and trees hold objects of bpf_obj_new, which live on this process's
 * heap (helpers/graph.c, which hands its function down when the library is loaded).
 * brt_map_free_roots(): the value is deleted or replaced: each root is taken out under
 * the value's lock and left empty (zero), then its nodes' objects are dropped (the
 * kernel's bpf_obj_free_fields(); nodes of another process's heap are left alone).
 * With mine set (this process lets the map go: its objects would outlive every use), only
 * the roots whose nodes are this process's are emptied.
 * brt_map_zero_roots(): what the syscall side reads shows them as zero.
 * The drain function: mine 0, drop the nodes of the root that was at root (its 16 bytes
 * as they were: saved); mine 1, only answer whether its first node is this process's. */
typedef int (*brt_map_drain_fn)(void *root, const void *saved, const struct brt_obj_root *r,
				int mine);
void brt_map_set_drain(brt_map_drain_fn fn);
void brt_map_free_roots(struct brt_map *map, void *value, int mine);
void brt_map_zero_roots(const struct brt_map *map, void *value);
/* A root with rb == BRT_ROOT_KPTR is a kptr field: no lock guards it, the free above
 * takes it with an atomic exchange. */
/* copy_map_value() into a value with roots or kptrs: every byte but theirs; fresh: they
 * start empty (a new element), else they keep what they hold (the caller frees it) */
void brt_map_put_value(const struct brt_map *map, void *dst, const void *src, int fresh);

/* Resolve a map fd (takes a reference: brt_map_put()).  -EBADF closed fd, -EINVAL not a
 * map (a program fd, a foreign fd). */
int brt_map_from_fd(int fd, struct brt_map **out);
void brt_map_get(struct brt_map *map);
void brt_map_put(struct brt_map *map);

/* Where a BPF_MAP_TYPE_ARRAY keeps its values, for lookups done inline (the kernel's
 * map_gen_lookup): index i < max_entries at base + i * stride.  0, or -EOPNOTSUPP for
 * any other type (per-CPU arrays: the value depends on the CPU). */
int brt_array_values(const struct brt_map *map, void **base, uint32_t *stride);
/* A per-CPU array's values: CPU c's value of index i at base + (i * ncpus + c) * stride;
 * -EOPNOTSUPP for any other map. */
int brt_percpu_array_values(const struct brt_map *map, void **base, uint32_t *stride,
			    uint32_t *ncpus);

/* What an inlined lookup of a BPF_MAP_TYPE_HASH needs (the JIT's probe, api/jit_lookup.c):
 * bucket b (hash & (n_buckets - 1)) at buckets + b * bucket_size holds the 1-based index
 * of its first element (u32 at head_off, 0: empty); element i at elems + (i - 1) *
 * elem_size, i <= n_elems, holds the index of the next element of its chain (u32 at
 * next_off, 0: the end), its hash (u32 at hash_off), its sequence word (u32 at seq_off:
 * odd while rewritten; a reader reads it before and after the element and trusts what it
 * read only if both are equal and even), the key (key_off) and the value (value_off).
 * The hash is util.h's BRT_KEYHASH steps with `seed`.  A probe may follow a chain (a
 * bounded number of elements: another process may have scribbled a loop into it) to an
 * element that holds the key, and return its value (an LRU map's: after stamping it, the
 * u32 at stamp_off, with the value an atomic add of 1 to the u32 at lru_clock returned),
 * or to the end of the chain, and return NULL; it may leave an element for its next only
 * when what it read of it was trusted and its hash is of the bucket (else the element
 * was recycled into another chain meanwhile).  Anything else (an index out of range, a
 * writer at work, a long chain) must call the map's lookup.  0, or -EOPNOTSUPP (another
 * type, or per-CPU). */
struct brt_hash_probe {
	void *buckets, *elems;
	void *lru_clock; /* LRU_HASH: the access counter, else NULL */
	/* NULL, or a u32 that bounds the indexes the probe may follow instead of n_elems:
	 * the elements this process may touch without the map's lookup (a BPF_F_NO_PREALLOC
	 * map's populated ones, hash.c "Lazy elements"); it only grows */
	const _Atomic uint32_t *n_elems_live;
	uint32_t n_buckets, n_elems, elem_size, key_size, value_off, seed;
	uint8_t bucket_size, head_off, next_off, hash_off, seq_off, key_off, stamp_off;
};
int brt_hash_probe(const struct brt_map *map, struct brt_hash_probe *out);

/* Linked elements of a hash map (hash.c; 0 for other maps). */
uint64_t brt_hash_count(const struct brt_map *map);
/* A hash map's buckets, which BPF_MAP_LOOKUP(_AND_DELETE)_BATCH walks as the kernel's
 * does (api/batch.c): how many there are (roundup_pow_of_two(max_entries)), the bucket
 * of key, and the first key of the first non-empty bucket at or after bucket (0 with
 * *at its bucket, -ENOENT when there is none, or another -errno). */
uint32_t brt_hash_n_buckets(const struct brt_map *map);
uint32_t brt_hash_bucket_of(const struct brt_map *map, const void *key);
int brt_hash_first_key_from(struct brt_map *map, uint32_t bucket, void *key, uint32_t *at);
/* What the kernel reports as map's memlock (its map_mem_usage, fdinfo's "memlock"),
 * from the geometry with 6.18 x86-64's structure sizes (memlock.c): 0 and *out, or
 * -EOPNOTSUPP for a type without the formula. */
int brt_map_kernel_memlock(const struct brt_map *map, uint64_t *out);

/* A hash map's bookkeeping, checked under all its locks (tests of the crash repair in
 * hash.c): linked elements, elements in use but in no chain (leaked), free elements
 * neither on the free list nor reachable otherwise (lost), linked elements left odd
 * (torn), the count word, and whether a sweep is pending.  0, or -EINVAL (not a hash
 * map), -ENOMEM. */
struct brt_hash_audit {
	uint32_t linked, leaked, lost, torn, count, repair;
};
int brt_hash_audit(struct brt_map *map, struct brt_hash_audit *out);

/* Array-style iteration (array, percpu_array, prog_array). */
int brt_array_get_next_key(struct brt_map *map, const void *key, void *next_key);

/* The program in slot i of a prog array usable in this process, or NULL (not a prog
 * array, out of range, empty, or changed by another process).  No reference taken: the
 * array holds one while the slot is set. */
struct brt_obj *brt_prog_array_get(struct brt_map *map, uint32_t i);
/* The program ids the slots of a prog array's file name (fd, its header as read, the
 * file's size): fn(arg, id) for each nonzero slot, for another process's id walk
 * (api/ids.c), which counts a program a slot names as held while it finds the array
 * alive.  Everything is read from the file, untrusted; -EINVAL when hdr is no prog
 * array of that file's size, -EIO on a short read. */
int brt_prog_array_file_ids(int fd, const struct brt_obj_hdr *hdr, uint64_t file_size,
			    void (*fn)(void *arg, uint32_t id), void *arg);

/* What a map's file holds, read from outside for another process's id walk (api/ids.c:
 * the inner maps of a live map of maps, the callbacks of a live map's bpf_timers): fn(arg,
 * bytes) with the bytes [off, off + len) of the value of every element in use (fd, the
 * header as read once, the file's size).  The file is untrusted: its parameters pass
 * MAP_CREATE's checks again and its region must be what they imply, as at attach; then
 * only pread() within it.  Array, hash and LRU hash layouts and the maps of maps stored
 * in them; -EOPNOTSUPP for another type, -EINVAL for a corrupt header, -EIO, -ENOMEM. */
int brt_map_file_values(int fd, const struct brt_obj_hdr *hdr, uint64_t file_size,
			uint32_t off, uint32_t len, void (*fn)(void *arg, const void *bytes),
			void *arg);

/* Map-in-map (map_in_map.c): does outer hold inner in this process (the helpers accept
 * such an inner map from a program of outer)?  And the inner-map template outer was
 * created with (0 or -EINVAL when outer is not a map of maps). */
int brt_map_in_map_holds(struct brt_map *outer, const struct brt_map *inner);
/* outer (a map of maps) was just given a name (pinned): link the inner maps this process
 * holds for it so they outlive it (mim_links.c). */
void brt_map_in_map_named(struct brt_map *outer);
/* mim_links.c: an outer map of maps whose file has a name keeps its inner maps alive by
 * links in the user's $BPFRT_FS/.bpfrt-inner[.<uid>].  brt_mim_link(): link inner[0..n)
 * as outer's entries when outer's file has a name (else nothing): 0 or -errno.
 * brt_mim_open_linked(): an fd of the linked inner map inner_id of outer, or -errno.
 * brt_mim_link_kind(): for a path under $BPFRT_FS (base: where its last component
 * starts), 0: none of these links, 1: an outer map's link (no pin), 2: an inner map's
 * (held only while a live outer map names it).  brt_mim_is_link_dir(): a directory name
 * of those links. */
int brt_mim_link(struct brt_map *outer, struct brt_map *const *inner, uint32_t n);
int brt_mim_open_linked(const struct brt_map *outer, uint32_t inner_id);
/* brt_mim_unlink(): entry inner_id of outer was deleted or replaced here: its link in this
 * user's directory goes, unless stored(outer, inner_id) says a slot still holds that map
 * (map_in_map.c's reading of the storage, handed down so this file calls nothing of it);
 * links in other users' directories go at their collection. */
void brt_mim_unlink(struct brt_map *outer, uint32_t inner_id,
		    int (*stored)(struct brt_map *outer, uint32_t inner_id));
int brt_mim_link_kind(const char *path, int base);
int brt_mim_is_link_dir(const char *name);
int brt_map_in_map_template(const struct brt_map *outer, uint32_t *type, uint32_t *key_size,
			    uint32_t *value_size, uint32_t *max_entries, uint32_t *flags);
/* ... and the template's special fields (1 + offset, 0: none) and whether it has BTF */
struct brt_mim_fields {
	uint32_t lock_off1, res_lock_off1, timer_off1;
	int has_btf;
};
int brt_map_in_map_template_fields(const struct brt_map *outer, struct brt_mim_fields *f);

/* The cgroup id in slot i of a cgroup array (cgroup_array.c): 0, -E2BIG past the end,
 * -EAGAIN for an empty slot (bpf_current_task_under_cgroup()'s answers), -EINVAL when
 * map is no cgroup array. */
int brt_cgroup_array_get(struct brt_map *map, uint32_t i, uint64_t *cgroup_id);

/* The kernel's jhash() of len bytes and jhash2() of words 32-bit words (bloom.c). */
uint32_t brt_map_jhash(const unsigned char *k, uint32_t len, uint32_t seed);
uint32_t brt_map_jhash2(const void *key, uint32_t words, uint32_t seed);

/* Stack trace maps (stackmap.c), for the stack helpers of trace/stack.c.
 * kernel.perf_event_max_stack (127 when unreadable); a map's frame size (8, or 32 with
 * BPF_F_STACK_BUILD_ID); __bpf_get_stackid()'s bucket step for nr (>= 1, fitting the
 * value) frames: ips (nr u64) hashed, frames (nr frames of the map's size: the ips, or
 * their struct bpf_stack_build_id) compared and stored, flags BPF_F_FAST_STACK_CMP and
 * BPF_F_REUSE_STACKID; the stack's id or -EEXIST. */
uint32_t brt_stack_max(void);
uint32_t brt_stack_frame_size(const struct brt_map *map);
int64_t brt_stack_map_store(struct brt_map *map, const uint64_t *ips, const void *frames,
			    uint32_t nr, uint64_t flags);

/* roundup_pow_of_two(max_entries) (max_entries <= 2^31): the bucket count of the kernel's
 * hashed types (stack_trace, devmap_hash), whose ids and walk order follow it. */
static inline uint32_t brt_map_buckets(const struct brt_map *map)
{
	uint32_t n = 1;

	while (n && n < map->max_entries) /* 0 past 2^31 (a corrupt header) */
		n <<= 1;
	return n;
}

/* ---- read-only mappings (obj.h's ro: BPF_OBJ_GET with BPF_F_RDONLY of a pin the process
 * may only read) -----------------------------------------------------------------------
 * Such a process takes no lock: it reads a region its writers change under a lock by
 * validating what it read against a sequence word the writers keep odd while they change
 * it (hash.c's per element, brt_map_gen below for the types under one lock), retrying,
 * yielding, at most BRT_MAP_RO_TRIES times; then brt_map_ro_busy() (a writer busy, or
 * one that died in the middle until the next writer makes the word even again). */
#define BRT_MAP_RO_TRIES 64

static inline int brt_map_ro(const struct brt_map *map)
{
	return atomic_load_explicit(&map->obj.ro, memory_order_acquire);
}

/* a warning naming the map's type, and -EBUSY */
int brt_map_ro_busy(const struct brt_map *map);

/* A region's generation word, written by the holders of its one lock (lpm.c, queue.c)
 * around every change: odd while they change it.  A writer that dies leaves it odd; the
 * next writer's end makes it even. */
static inline void brt_map_gen_begin(_Atomic uint32_t *gen)
{
	uint32_t g = atomic_load_explicit(gen, memory_order_relaxed);

	/* the odd word is seen before any store that follows (a seqlock's smp_wmb()): an
	 * exchange's acquire half keeps them after it, without atomic_thread_fence(), which
	 * GCC's TSan builds refuse (-Wtsan) */
	atomic_exchange_explicit(gen, (g + 1) | 1, memory_order_acq_rel);
}

static inline void brt_map_gen_end(_Atomic uint32_t *gen)
{
	uint32_t g = atomic_load_explicit(gen, memory_order_relaxed);

	atomic_store_explicit(gen, (g | 1) + 1, memory_order_release);
}

/* A read-only reader of such a region: fn(map, arg, tmp) reads it without the lock into
 * a private buffer of bytes bytes, kept (copied to out) when gen was even and unchanged
 * around the read; retried as above.  fn's answer (0 or -errno, out written on 0 only),
 * -EBUSY (brt_map_ro_busy()) or -ENOMEM. */
int brt_map_gen_read(struct brt_map *map, _Atomic uint32_t *gen, void *out, size_t bytes,
		     int (*fn)(struct brt_map *map, const void *arg, void *tmp), const void *arg);

/* Size of the syscall-side value buffer: value_size, or ncpus * round_up(value_size, 8). */
uint32_t brt_map_value_size(const struct brt_map *map);
int brt_map_is_percpu(uint32_t type);
int brt_map_type_known(uint32_t type);
/* The key and value BTF an offered type takes (its ops' btf), -EINVAL for another. */
int brt_map_type_btf(uint32_t type);
/* Does a live process consume ring buffer map (it polls: bpfrt_ringbuf_poll_fd(), or
 * libbpf's consumer through the preload)?  The kernel refuses a freeze (EBUSY) while a
 * consumer maps the consumer page writable. */
int brt_ringbuf_consumer_live(struct brt_map *map);
/* BPF_MAP_FREEZE of a user ring buffer (ringbuf.c): -EBUSY while a producer maps it
 * (bpfrt_user_ringbuf_producer_fd()), else 0 with *hold an fd that keeps producers out
 * until the caller closes it (-1: nothing held; other map types). */
int brt_user_ringbuf_freeze_hold(struct brt_map *map, int fd, int *hold);
/* bpftool's name of any type the kernel names (map_types.def), "unknown" for others. */
const char *brt_map_type_name(uint32_t type);
/* The type of an offered map type's name; -EINVAL for other names. */
int brt_map_type_from_name(const char *name);

/* The dispatchers: syscall semantics (value layouts as above), kernel errnos. */
int brt_map_sys_lookup(struct brt_map *map, const void *key, void *value, uint64_t flags);
int brt_map_sys_update(struct brt_map *map, const void *key, const void *value,
		       uint64_t flags);
int brt_map_sys_delete(struct brt_map *map, const void *key);
int brt_map_sys_get_next_key(struct brt_map *map, const void *key, void *next_key);
int brt_map_sys_lookup_and_delete(struct brt_map *map, const void *key, void *value,
				  uint64_t flags);

/* The maps a loaded program may name: the run's user pointer (bpfrt_run_user()) points at
 * this, so helpers running an unverified program in the checked engine accept only these
 * map pointers and never dereference a made-up one. */
#define BRT_PROG_MAPS_MAGIC 0x7370616d676f7270ull /* "progmaps" */
struct brt_prog_maps {
	uint64_t magic;         /* BRT_PROG_MAPS_MAGIC */
	struct brt_map **maps;  /* referenced maps */
	uint32_t n;             /* entries */
	uint32_t prog_type;     /* the program's type: helpers whose kernel prototype
				 * differs by type (perf_event_output) look at it */
	struct brt_obj *owner;  /* the program object these belong to (bpf_timer's
				 * callback holds a reference on it), NULL: none */
};

/* ---- bpf_timer callbacks (timer.c) -------------------------------------------------------
 * An armed timer's callback runs on this process's timer thread.  Running a function of
 * a program is the program layer's business (api/), which registers how when the library
 * is loaded: call function func of prog (a callback the verifier walked) with r1-r3 =
 * args (map, key, value) where key and value are key_size and value_size bytes (the
 * checked engine's regions; the value writable). */
typedef void (*brt_timer_call_fn)(struct brt_obj *prog, uint64_t func, const uint64_t args[3],
				  uint32_t key_size, uint32_t value_size);
void brt_timer_set_call(brt_timer_call_fn fn);
/* ---- task works (task_work.c) ----------------------------------------------------------
 * bpf_task_work_schedule_signal_impl / _resume_impl (task, tw, map, callback, aux): the
 * kfuncs' body; the callback runs through fn (as a timer's) at the end of the run that
 * scheduled it (brt_task_work_run_pending(), called by the vm). */
uint64_t brt_task_work_schedule(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				struct bpfrt_run_ctx *ctx);
void brt_task_work_set_call(brt_timer_call_fn fn);
void brt_task_work_run_pending(void);
/* bpf_task_work_cancel_and_free(): the value is deleted, replaced, evicted or written; its
 * struct bpf_task_work is not copied: a pending work is cancelled (the word cleared, so
 * the work does not run on a freed element or a value made anew) */
static inline void brt_task_work_release(const struct brt_map *map, void *value)
{
	if (map->task_work_off >= 0)
		__atomic_store_n((uint64_t *)(void *)((char *)value + map->task_work_off), 0,
				 __ATOMIC_RELEASE);
}
/* The struct bpf_timer of a map value is freed (bpf_obj_free_timer(): the element deleted,
 * replaced or evicted, the value updated): cancel it without waiting for a callback
 * running now, drop its program, leave the value's timer uninitialised.  value is the
 * element's value in this process; no-op for maps without a timer. */
void brt_timer_release(struct brt_map *map, void *value);
/* No fd refers to map any more (the kernel's map_release_uref): every timer of it is
 * released as above. */
void brt_timer_map_unref(struct brt_map *map);
/* The key of the hash element whose value is value (this process's address), for a
 * callback's r2. */
const void *brt_hash_key_of(const struct brt_map *map, const void *value);

/* The map a helper received in a register, or NULL when a checked run passes something
 * that is not one of its program's maps. */
struct brt_map *brt_map_helper_arg(uint64_t reg, struct bpfrt_run_ctx *ctx);

/* A test run's cgroup storage starts zeroed, as the kernel allocates it for each
 * BPF_PROG_TEST_RUN (cgroup_storage.c); no-op for other map types. */
void brt_cgroup_storage_reset(struct brt_map *map);

/* A socket a program holds (PTR_TO_SOCKET), taken from a sockmap or sockhash slot
 * (sockmap.c): the struct bpf_sock the verifier lets it read, then what the socket
 * helpers ask of the kernel's struct sock.  A process has no struct sock, so this is a
 * snapshot of the socket taken from its fd when the slot was filled. */
#define BRT_SOCK_CGROUP_LEVELS 16
struct brt_sock {
	struct bpf_sock sk;  /* first: the program's pointer points here */
	uint64_t cookie;     /* SO_COOKIE */
	uint8_t reuseport;   /* SO_REUSEPORT set (sk_reuseport) */
	uint8_t ipv6only;    /* IPV6_V6ONLY */
	uint8_t refcounted;  /* not freed by RCU (sk_is_refcounted()): not a TCP listener or
			      * a UDP socket */
	uint8_t cgroup_levels; /* how many of cgroup[] are known (0: none) */
	uint8_t pad[4];
	/* the socket's cgroup v2 and its ancestors, the root's first (bpf_sk_cgroup_id,
	 * bpf_sk_ancestor_cgroup_id): the kernel records the creating task's cgroup, which
	 * user space cannot ask of a socket, so the cgroup of the thread that put the
	 * socket in the map (the same when one process creates and adds its sockets) */
	uint64_t cgroup[BRT_SOCK_CGROUP_LEVELS];
};

/* BPF_PROG_TEST_RUN's sk_lookup context (api/test_run.c): r1 points at uapi; the
 * selected socket is uapi.sk, set by bpf_sk_assign (sockmap.c) with its flag. */
#define BRT_SK_LOOKUP_MAGIC 0x6b6f6f6c6b73ull /* "sklook" */
struct brt_sk_lookup_ctx {
	struct bpf_sk_lookup uapi;
	uint64_t magic;       /* BRT_SK_LOOKUP_MAGIC: bpf_sk_assign checks it is given this */
	uint8_t no_reuseport; /* BPF_SK_LOOKUP_F_NO_REUSEPORT of the selection */
};

/* Local storage maps (sk_storage.c) for helpers that name their owner elsewhere (task
 * storage: trace/task.c): the owner's value, created from init (NULL: zeros) when create
 * is set, else NULL; delete: 0 or -ENOENT. */
void *brt_local_storage_get(struct brt_map *map, uint64_t owner, const void *init, int create);
int brt_local_storage_delete(struct brt_map *map, uint64_t owner);

/* The helpers this folder implements, for the registry (src/helpers/registry.c): one
 * X(id, function, program types) each; id names its row of src/vm/helpers.def, types
 * are BRT_FOR_* helper sets (vm/helper_proto.h). */
#define BRT_MAPS_HELPERS(X)                                                              \
	X(BPF_FUNC_map_lookup_elem, brt_helper_map_lookup_elem, BRT_FOR_ALL)             \
	X(BPF_FUNC_map_lookup_percpu_elem, brt_helper_map_lookup_percpu_elem, BRT_FOR_ALL) \
	X(BPF_FUNC_map_update_elem, brt_helper_map_update_elem, BRT_FOR_ALL)             \
	X(BPF_FUNC_map_delete_elem, brt_helper_map_delete_elem, BRT_FOR_ALL)             \
	X(BPF_FUNC_map_push_elem, brt_helper_map_push_elem, BRT_FOR_ALL)                 \
	X(BPF_FUNC_map_pop_elem, brt_helper_map_pop_elem, BRT_FOR_ALL)                   \
	X(BPF_FUNC_map_peek_elem, brt_helper_map_peek_elem, BRT_FOR_ALL)                 \
	X(BPF_FUNC_ringbuf_output, brt_helper_ringbuf_output, BRT_FOR_ALL)               \
	X(BPF_FUNC_ringbuf_reserve, brt_helper_ringbuf_reserve, BRT_FOR_ALL)             \
	X(BPF_FUNC_ringbuf_submit, brt_helper_ringbuf_submit, BRT_FOR_ALL)               \
	X(BPF_FUNC_ringbuf_discard, brt_helper_ringbuf_discard, BRT_FOR_ALL)             \
	X(BPF_FUNC_ringbuf_query, brt_helper_ringbuf_query, BRT_FOR_ALL)                 \
	/* bpf_base_func_proto with CAP_BPF */                                            \
	X(BPF_FUNC_ringbuf_reserve_dynptr, brt_helper_ringbuf_reserve_dynptr,            \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BPF_FUNC_ringbuf_submit_dynptr, brt_helper_ringbuf_submit_dynptr,              \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BPF_FUNC_ringbuf_discard_dynptr, brt_helper_ringbuf_discard_dynptr,            \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BPF_FUNC_perf_event_output, brt_helper_perf_event_output, BRT_FOR_PERF_OUTPUT) \
	/* tracing_prog_func_proto() (LSM's and syscall's sets fall back on it): the packet \
	 * a tracing program was handed, by its BTF type; one function for both             \
	 * (perf_event_array.c).  A syscall program has no such pointer to give, and no     \
	 * perf event array (sleepable), but its refusal names R1 as the kernel's does */   \
	X(BPF_FUNC_skb_output, brt_helper_skb_output,                                    \
	  BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_HSET(BPF_PROG_TYPE_LSM) | BRT_FOR_SYSCALL) \
	X(BPF_FUNC_xdp_output, brt_helper_skb_output,                                    \
	  BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_HSET(BPF_PROG_TYPE_LSM) | BRT_FOR_SYSCALL) \
	/* bpf_base_func_proto() with CAP_PERFMON */                                      \
	X(BPF_FUNC_perf_event_read, brt_helper_perf_event_read, BRT_FOR_ALL | BRT_NEED_PERFMON) \
	X(BPF_FUNC_perf_event_read_value, brt_helper_perf_event_read_value,              \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_for_each_map_elem, brt_helper_for_each_map_elem, BRT_FOR_ALL | BRT_NEED_BPF) \
	/* bpf_base_func_proto() with CAP_BPF */                                          \
	X(BPF_FUNC_user_ringbuf_drain, brt_helper_user_ringbuf_drain,                    \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	/* bpf_base_func_proto with CAP_BPF; the verifier keeps socket filters and      \
	 * tracing types from maps with a lock (cfg.c) */                                 \
	X(BPF_FUNC_spin_lock, brt_helper_spin_lock, BRT_FOR_ALL | BRT_NEED_BPF)          \
	X(BPF_FUNC_spin_unlock, brt_helper_spin_unlock, BRT_FOR_ALL | BRT_NEED_BPF)      \
	X(BPF_FUNC_timer_init, brt_helper_timer_init, BRT_FOR_ALL | BRT_NEED_BPF)        \
	X(BPF_FUNC_timer_set_callback, brt_helper_timer_set_callback, BRT_FOR_ALL | BRT_NEED_BPF) \
	X(BPF_FUNC_timer_start, brt_helper_timer_start, BRT_FOR_ALL | BRT_NEED_BPF)      \
	X(BPF_FUNC_timer_cancel, brt_helper_timer_cancel, BRT_FOR_ALL | BRT_NEED_BPF)    \
	/* bpf_base_func_proto with CAP_BPF; their functions are helpers/graph.c's, next to \
	 * the objects they exchange or point into (a percpu object's copies) */          \
	X(BPF_FUNC_kptr_xchg, brt_helper_kptr_xchg, BRT_FOR_ALL | BRT_NEED_BPF)          \
	X(BPF_FUNC_per_cpu_ptr, brt_helper_per_cpu_ptr, BRT_FOR_ALL | BRT_NEED_BPF)       \
	X(BPF_FUNC_this_cpu_ptr, brt_helper_this_cpu_ptr, BRT_FOR_ALL | BRT_NEED_BPF)     \
	X(BPF_FUNC_redirect_map, brt_helper_redirect_map, BRT_FOR_XDP)                   \
	/* get_task_stack(task, buf, size, flags): get_stack's checks, then -EFAULT (no  \
	 * kernel task's stack is readable here); get_stackid and get_stack, which read   \
	 * the event's call chain, are trace/'s (BRT_TRACE_HELPERS) */                     \
	X(BPF_FUNC_get_task_stack, brt_helper_get_task_stack, BRT_FOR_ALL | BRT_NEED_PERFMON) \
	X(BPF_FUNC_get_local_storage, brt_helper_get_local_storage,                      \
	  BRT_FOR_CGSKB | BRT_FOR_CGROUP)
/* sockmap.c: sockmap/sockhash redirects and sock_ops updates (the kernel's sk_skb, sk_msg
 * and sock_ops sets) */
#define BRT_MAPS_SOCK_HELPERS(X)                                                         \
	X(BPF_FUNC_sk_redirect_map, brt_helper_sk_redirect_map, BRT_FOR_SKSKB)           \
	X(BPF_FUNC_sk_redirect_hash, brt_helper_sk_redirect_map, BRT_FOR_SKSKB)          \
	X(BPF_FUNC_msg_redirect_map, brt_helper_sk_redirect_map, BRT_FOR_SKMSG)          \
	X(BPF_FUNC_msg_redirect_hash, brt_helper_sk_redirect_map, BRT_FOR_SKMSG)         \
	X(BPF_FUNC_msg_apply_bytes, brt_helper_msg_apply_bytes, BRT_FOR_SKMSG)           \
	X(BPF_FUNC_msg_cork_bytes, brt_helper_msg_apply_bytes, BRT_FOR_SKMSG)            \
	X(BPF_FUNC_msg_pull_data, brt_helper_msg_pull_data, BRT_FOR_SKMSG)               \
	X(BPF_FUNC_msg_push_data, brt_helper_msg_push_pop, BRT_FOR_SKMSG)                \
	X(BPF_FUNC_msg_pop_data, brt_helper_msg_push_pop, BRT_FOR_SKMSG)                 \
	X(BPF_FUNC_sock_map_update, brt_helper_sock_map_update, BRT_FOR_SOCKOPS)         \
	X(BPF_FUNC_sock_hash_update, brt_helper_sock_map_update, BRT_FOR_SOCKOPS)         \
	X(BPF_FUNC_sk_assign, brt_helper_sk_assign, BRT_FOR_TC | BRT_FOR_SKLOOKUP)       \
	X(BPF_FUNC_sk_select_reuseport, brt_helper_sk_select_reuseport, BRT_FOR_REUSEPORT)

/* the helpers' declarations: the two lists are the one place that names them */
BRT_MAPS_HELPERS(BRT_HELPER_DECLARE)
BRT_MAPS_SOCK_HELPERS(BRT_HELPER_DECLARE)

/* ---- perf output rings (perf_output.c): what a BPF_MAP_TYPE_PERF_EVENT_ARRAY holds ----- */

/* Records of a perf mmap ring (the kernel's or ours) from data_tail to data_head: cb gets
 * each one (records that wrap are copied into the bounce buffer; valid during the call),
 * then data_tail moves past them.  Returns how many; stops at a corrupt header. */
struct brt_perf_walk {
	struct perf_event_mmap_page *meta; /* control page */
	uint8_t *data;                     /* data area */
	uint64_t size;                     /* its length (a power of two) */
	void *bounce;                      /* heap, grown on demand; free() it */
	size_t bounce_len;
};
int brt_perf_walk(struct brt_perf_walk *w,
		  void (*cb)(void *arg, const struct perf_event_header *rec), void *arg);
/* One record without consuming it (brt_perf_walk()'s step, for a reader that merges
 * rings): the record at position tail, head being data_head as read (acquire) before;
 * NULL at head or at a corrupt header, else the record (a wrapped one in the bounce
 * buffer: valid until the next call on w) and *next, the position after it.  The caller
 * publishes data_tail. */
const struct perf_event_header *brt_perf_peek(struct brt_perf_walk *w, uint64_t tail,
					     uint64_t head, uint64_t *next);

/* A ring's records for brt_perf_walk() (meta, data, size); the consumer's wake-up
 * acknowledgement, made before reading: empties the pipe, then clears the pending wake-up. */
void brt_perf_out_walker(struct brt_obj *ring, struct brt_perf_walk *w);
void brt_perf_out_drain(struct brt_obj *ring);

/* Is obj a perf output ring, and which CPU was it made for (-1: any)? */
int brt_perf_out_cpu(const struct brt_obj *obj);

/* Write one PERF_RECORD_SAMPLE with PERF_SAMPLE_RAW { u32 size; meta, then extra, zero
 * padding to 8 } into the ring (a PERF_RECORD_LOST first when earlier samples were lost).
 * cpu is the producer's CPU: a ring made for another CPU refuses (-EOPNOTSUPP, the
 * kernel's event->oncpu check).  0, -ENOSPC (full: counted as lost), -E2BIG (a record
 * larger than a perf header can describe). */
int brt_perf_out_write(struct brt_obj *ring, uint32_t cpu, const void *meta, uint32_t meta_size,
		       const void *extra, uint32_t extra_size);



#endif
