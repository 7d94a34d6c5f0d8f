/* map.c - what every map type shares: the type table (map_types.def), MAP_CREATE's
 * attribute checks in the kernel's order, turning a mapped file back into a map (with
 * every header field checked: the file may be another process's, or corrupt), and the
 * dispatchers that give syscall semantics on top of the ops tables.
 */
#include <errno.h>
#include <sched.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "maps/maps.h"
#include "util/util.h"


/* The offset of the header's struct bpf_timer (off1 = h->timer_off, 16 bytes) or struct
 * bpf_task_work (h->task_work_off, 8), if it is one (8-aligned, inside the value, a map
 * type that may have one): the header is another process's to write, and the timer
 * helpers and task work kfuncs write those bytes */
static int32_t field_off_of(const struct brt_obj_hdr *h, uint32_t off1, uint32_t size)
{
	if (!off1 || !h->btf_id || (off1 - 1) % 8 || (uint64_t)off1 - 1 + size > h->value_size ||
	    (h->type != BPF_MAP_TYPE_HASH && h->type != BPF_MAP_TYPE_LRU_HASH &&
	     h->type != BPF_MAP_TYPE_ARRAY))
		return -1;
	return (int32_t)(off1 - 1);
}

static int32_t timer_off_of(const struct brt_obj_hdr *h)
{
	return field_off_of(h, h->timer_off, 16);
}

static int32_t task_work_off_of(const struct brt_obj_hdr *h)
{
	return field_off_of(h, h->task_work_off, 8);
}

_Static_assert(BRT_OBJ_HDR_ROOTS == BRT_OBJ_MAX_ROOTS, "a map header holds every root");

/* The value's graph roots from a header: 0, or -1 when they cannot be (16 bytes, 8-aligned,
 * inside the value, with a lock, in a hash or array map; nodes inside an object) */
static int roots_of_hdr(struct brt_map *map, const struct brt_obj_hdr *h)
{
	map->nroots = 0;
	if (!h->ngraph_roots)
		return 0;
	if (h->ngraph_roots > BRT_OBJ_HDR_ROOTS ||
	    (h->type != BPF_MAP_TYPE_HASH && h->type != BPF_MAP_TYPE_ARRAY &&
	     h->type != BPF_MAP_TYPE_LRU_HASH))
		return -1;
	for (uint32_t i = 0; i < h->ngraph_roots; i++) {
		struct brt_obj_root r = { h->graph_roots[i][0], h->graph_roots[i][1],
					  h->graph_roots[i][2] };
		uint32_t size = r.rb == BRT_ROOT_KPTR ? 8 : 16;

		/* lists and trees need a lock and no LRU; kptrs neither */
		if (r.rb != BRT_ROOT_KPTR &&
		    ((!h->spin_lock_off && !h->res_spin_lock_off) || h->type == BPF_MAP_TYPE_LRU_HASH))
			return -1;
		if (r.off % 8 || h->value_size < size || r.off > h->value_size - size ||
		    r.rb > BRT_ROOT_KPTR || r.node_off % 8 || r.node_off > 4096 - 32)
			return -1;
		map->roots[map->nroots++] = r;
	}
	return 0;
}

/* The value's lock word from a header: a bpf_spin_lock's or a bpf_res_spin_lock's */
static void lock_of_hdr(struct brt_map *map, const struct brt_obj_hdr *h)
{
	map->lock_res = !h->spin_lock_off && h->res_spin_lock_off;
	map->lock_off = (int32_t)(map->lock_res ? h->res_spin_lock_off : h->spin_lock_off) - 1;
}

static const struct brt_map_ops *const map_ops[] = {
#define BRT_MAP_TYPE(type, name, ops) [type] = &ops,
#include "maps/map_types.def"
#undef BRT_MAP_TYPE
};

/* Every type the kernel names, offered or not (messages, `bpfrt object show`). */
static const char *const map_names[] = {
#define BRT_MAP_TYPE(type, name, ops) [type] = #name,
#define BRT_MAP_TYPE_OTHER(type, name) [type] = #name,
#include "maps/map_types.def"
#undef BRT_MAP_TYPE
};

static const struct brt_map_ops *ops_of(uint32_t type)
{
	return type < BRT_ARRAY_SIZE(map_ops) ? map_ops[type] : NULL;
}

int brt_map_type_known(uint32_t type)
{
	return ops_of(type) != NULL;
}

int brt_map_type_btf(uint32_t type)
{
	return ops_of(type) ? (int)ops_of(type)->btf : -EINVAL;
}

const char *brt_map_type_name(uint32_t type)
{
	return type < BRT_ARRAY_SIZE(map_names) && map_names[type] ? map_names[type] : "unknown";
}

int brt_map_type_from_name(const char *name)
{
	for (uint32_t i = 0; i < BRT_ARRAY_SIZE(map_names); i++)
		if (ops_of(i) && map_names[i] && !strcmp(map_names[i], name))
			return (int)i;
	return -EINVAL;
}

int brt_map_is_percpu(uint32_t type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

int brt_map_ro_busy(const struct brt_map *map)
{
	brt_print(BPFRT_WARN, "bpfrt: a %s map open read-only in this process: what it read "
		  "was being changed through %d lockless reads (a writer busy with it, or one "
		  "that died in the middle until the next writer repairs the map): EBUSY\n",
		  brt_map_type_name(map->type), BRT_MAP_RO_TRIES);
	return -EBUSY;
}

int brt_map_gen_read(struct brt_map *map, _Atomic uint32_t *gen, void *out, size_t bytes,
		     int (*fn)(struct brt_map *map, const void *arg, void *tmp), const void *arg)
{
	unsigned char *tmp = malloc(bytes ? bytes : 1);
	int err;

	if (!tmp)
		return -ENOMEM;
	for (int tries = 0; tries < BRT_MAP_RO_TRIES; tries++) {
		uint32_t g = atomic_load_explicit(gen, memory_order_acquire);

		err = fn(map, arg, tmp);
		/* the reads above done before the second look at the word (a seqlock's
		 * smp_rmb()) */
		atomic_thread_fence(memory_order_acquire);
		if (!(g & 1) && atomic_load_explicit(gen, memory_order_relaxed) == g) {
			if (!err)
				memcpy(out, tmp, bytes);
			free(tmp);
			return err;
		}
		sched_yield();
	}
	free(tmp);
	return brt_map_ro_busy(map);
}

uint32_t brt_map_value_size(const struct brt_map *map)
{
	if (brt_map_is_percpu(map->type))
		return map->value_stride * map->ncpus;
	return map->value_size;
}

/* The kernel's bpf_obj_name_cpy(): letters, digits, '_' and '.', NUL within the field. */
static int name_ok(const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!name[i])
			return 1;
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '.')
			return 0;
	}
	return 0;
}

/* Checks made by the kernel's map_create() before the type's own alloc_check. */
static int generic_check(const union bpf_attr *attr)
{
	uint32_t f = attr->map_flags;

	if (attr->btf_vmlinux_value_type_id) {
		if (attr->map_type != BPF_MAP_TYPE_STRUCT_OPS || attr->btf_key_type_id ||
		    attr->btf_value_type_id)
			return -EINVAL;
	} else if (attr->btf_key_type_id && !attr->btf_value_type_id) {
		return -EINVAL;
	}
	if (attr->map_type != BPF_MAP_TYPE_BLOOM_FILTER && attr->map_type != BRT_MAP_TYPE_ARENA &&
	    attr->map_extra)
		return -EINVAL;
	if ((f & BPF_F_RDONLY) && (f & BPF_F_WRONLY))
		return -EINVAL;
	/* One NUMA node here: node 0 is online, any other is not. */
	if ((f & BPF_F_NUMA_NODE) && attr->numa_node != 0)
		return -EINVAL;
	return 0;
}

static int fill_params(struct brt_map *map, uint32_t type, uint32_t key_size,
		       uint32_t value_size, uint32_t max_entries, uint32_t flags, uint32_t ncpus)
{
	map->ops = ops_of(type);
	map->type = type;
	map->key_size = key_size;
	map->value_size = value_size;
	map->max_entries = max_entries;
	map->flags = flags;
	map->ncpus = brt_map_is_percpu(type) ? ncpus : 1;
	map->value_stride = (uint32_t)BRT_ROUND8(value_size);
	return map->ops ? 0 : -EINVAL;
}

/* this process lets the map go: the lists and trees of its values that hold this
 * process's objects are emptied (the kernel frees them with the map; here nobody else
 * could use them) */
static void release_roots(struct brt_map *map)
{
	unsigned char *key = map->nroots && map->ops && map->ops->get_next_key && map->ops->lookup
				     ? malloc(map->key_size)
				     : NULL;
	int first = 1;

	while (key && !map->ops->get_next_key(map, first ? NULL : key, key)) {
		void *v = map->ops->lookup(map, key);

		first = 0;
		if (v)
			brt_map_free_roots(map, v, 1);
	}
	free(key);
}

static void map_release(struct brt_obj *obj)
{
	struct brt_map *map = brt_map_of(obj);

	release_roots(map);
	if (map->ops && map->ops->detach)
		map->ops->detach(map);
	brt_btf_snap_put(atomic_load_explicit(&map->btf_snap, memory_order_acquire));
}

void brt_btf_snap_put(struct brt_btf_snap *snap)
{
	void *parsed;

	if (!snap || atomic_fetch_sub_explicit(&snap->refs, 1, memory_order_acq_rel) != 1)
		return;
	parsed = atomic_load_explicit(&snap->parsed, memory_order_acquire);
	if (parsed && snap->parsed_free)
		snap->parsed_free(parsed);
	free(snap);
}

static void map_unref(struct brt_obj *obj)
{
	struct brt_map *map = brt_map_of(obj);
	/* map_release_uref() runs when the last user reference goes, and a pin is one: a
	 * pinned map keeps its timers, a prog array its slots, until the pin goes too (the
	 * sweep asks again each time).  Whether the file is pinned is known as root only
	 * (brt_obj_pinned()); elsewhere, as before, the last fd of this process decides. */
	int pinned = (map->timer_off >= 0 || (map->ops->unref && !map->ops->unref_per_file)) &&
		     brt_obj_pinned(obj);

	if (map->timer_off >= 0 && !pinned) /* its timers are cancelled and freed */
		brt_timer_map_unref(map);
	if (map->ops->unref && (map->ops->unref_per_file || !pinned))
		map->ops->unref(map);
}

static int map_init(struct brt_obj *obj, void *arg)
{
	struct brt_map *map = brt_map_of(obj), *params = arg;
	int err;

	fill_params(map, params->type, params->key_size, params->value_size,
		    params->max_entries, params->flags, params->ncpus);
	map->map_extra = params->map_extra;
	map->data = obj->base;
	map->data_size = params->data_size; /* the type's region, without the journal */
	lock_of_hdr(map, &obj->snap);
	map->timer_off = timer_off_of(&obj->snap);
	map->task_work_off = task_work_off_of(&obj->snap);
	if (roots_of_hdr(map, &obj->snap))
		return -EINVAL;
	map->journal = map->lock_off >= 0 && !map->lock_res
			       ? (char *)obj->base + BRT_ROUND8(map->data_size)
			       : NULL;
	obj->release = map_release;
	obj->unref = map->ops->unref || map->timer_off >= 0 ? map_unref : NULL;
	err = map->ops->init ? map->ops->init(map) : 0;
	if (!err && map->ops->attach)
		err = map->ops->attach(map);
	if (err)
		obj->release = NULL;
	return err;
}

/* Does user space map this map's region page by page (mmap() of its fd, as of the
 * kernel's): a BPF_F_MMAPABLE array (libbpf's .bss, .data), a ring buffer (its consumer
 * page at offset 0).  Its file keeps its header on a page of its own, which such a
 * mapping never shows, and its BTF copy on pages of their own; any other map's header
 * shares the last page of its data (hdr_at_end, obj.h) and its copy follows the region
 * (tail_packed): a map of a few values is one page. */
static int region_user_mapped(uint32_t type, uint32_t flags)
{
	return (flags & BPF_F_MMAPABLE) || type == BPF_MAP_TYPE_RINGBUF ||
	       type == BPF_MAP_TYPE_USER_RINGBUF;
}

/* Linux 6.18's MAP_CREATE fields past map_extra (this libc's header stops there). */
struct create_tail {
	int32_t value_type_btf_obj_fd; /* only read with BPF_F_VTYPE_BTF_OBJ_FD (struct_ops) */
	int32_t map_token_fd;          /* only read with BPF_F_TOKEN_FD */
};
#define CREATE_TAIL_OFF 72
#ifndef BPF_F_TOKEN_FD
#define BPF_F_TOKEN_FD (1u << 16)
#endif

/* The kernel looks up the token after the type's checks; this runtime creates no BPF
 * tokens, so an fd given as one is a closed fd (-EBADF) or not a token (-EINVAL). */
static int token_error(const union bpf_attr *attr)
{
	struct create_tail tail;

	memcpy(&tail, (const char *)attr + CREATE_TAIL_OFF, sizeof(tail));
	return tail.map_token_fd < 0 || fcntl(tail.map_token_fd, F_GETFD) < 0 ? -EBADF : -EINVAL;
}

int brt_map_create_check(const union bpf_attr *attr_in)
{
	/* BPF_F_TOKEN_FD says where the token is and is no map flag: the kernel clears it
	 * before any check */
	union bpf_attr copy = *attr_in, *attr = &copy;
	int token = !!(copy.map_flags & BPF_F_TOKEN_FD);
	const struct brt_map_ops *ops;
	int err;

	copy.map_flags &= ~BPF_F_TOKEN_FD;
	err = generic_check(attr);
	if (err)
		return err;
	/* Arenas (kernel address space shared with a user mapping) are not offered; the
	 * kernel this runtime is measured on refuses every BPF_MAP_TYPE_ARENA creation with
	 * EPERM after the generic checks, whatever its attributes (even ones arena_map_alloc
	 * would refuse with EINVAL), so a loader sees the kernel's answer (Tracee's
	 * features_test_arena; tests/maps/test_maptypes_oracle.c). */
	if (attr->map_type == BRT_MAP_TYPE_ARENA)
		return -EPERM;
	ops = ops_of(attr->map_type);
	if (!ops)
		return -EINVAL;
	err = ops->alloc_check ? ops->alloc_check(attr) : 0;
	if (err)
		return err;
	return token ? token_error(attr) : 0;
}

int brt_map_create(const union bpf_attr *attr_in, const struct brt_map_btf *btf,
		   struct brt_map **out)
{
	union bpf_attr copy = *attr_in, *attr = &copy;
	uint32_t btf_id = btf ? btf->id : 0;
	const struct brt_map_ops *ops;
	struct brt_obj_hdr hdr = { 0 };
	struct brt_map params = { 0 };
	struct brt_obj *obj;
	uint64_t size, hole_off, hole_len;
	int err, fd;

	err = brt_map_create_check(attr_in);
	if (err)
		return err;
	copy.map_flags &= ~BPF_F_TOKEN_FD;
	ops = ops_of(attr->map_type);
	/* No device offload in this runtime; BTF type ids only once the caller checked them. */
	if (attr->map_ifindex || (attr->btf_value_type_id && !btf_id))
		return -EINVAL;
	fill_params(&params, attr->map_type, attr->key_size, attr->value_size,
		    attr->max_entries, attr->map_flags | ops->forced_flags, brt_ncpus());
	params.map_extra = attr->map_extra;
	err = ops->data_size(&params, &size);
	if (err)
		return err;
	params.data_size = size;
	if (btf_id && btf->lock_off) /* BPF_F_LOCK's journal */
		size = BRT_ROUND8(size) + brt_map_journal_size(attr->value_size);
	if (!name_ok(attr->map_name, sizeof(attr->map_name)))
		return -EINVAL;
	hdr.kind = BRT_OBJ_MAP;
	hdr.data_size = size;
	hdr.type = attr->map_type;
	hdr.key_size = attr->key_size;
	hdr.value_size = attr->value_size;
	hdr.max_entries = attr->max_entries;
	hdr.flags = params.flags;
	hdr.ncpus = params.ncpus;
	hdr.map_extra = attr->map_extra;
	memcpy(hdr.name, attr->map_name, sizeof(hdr.name));
	hdr.btf_vmlinux_value_type_id = attr->btf_vmlinux_value_type_id;
	if (btf_id) {
		hdr.btf_id = btf_id;
		hdr.btf_key_type_id = attr->btf_key_type_id;
		hdr.btf_value_type_id = attr->btf_value_type_id;
		if (btf->blob && btf->size <= BRT_MAP_BTF_MAX)
			hdr.tail_size = btf->size;
		/* the copy right after the region (8-byte aligned), not on pages of its
		 * own: a map of a few values takes one page where it took three (each one
		 * allocated at creation, unmapped and freed at close), except where user
		 * space maps the region and would see the copy past its values */
		hdr.tail_packed = !region_user_mapped(attr->map_type, params.flags);
		hdr.spin_lock_off = btf->lock_off;
		hdr.timer_off = btf->timer_off;
		hdr.task_work_off = btf->task_work_off;
		hdr.res_spin_lock_off = btf->res_lock_off;
		hdr.ngraph_roots = btf->nroots <= BRT_OBJ_HDR_ROOTS ? btf->nroots : 0;
		for (uint32_t i = 0; i < hdr.ngraph_roots; i++) {
			hdr.graph_roots[i][0] = btf->roots[i].off;
			hdr.graph_roots[i][1] = btf->roots[i].node_off;
			hdr.graph_roots[i][2] = btf->roots[i].rb;
		}
	}
	hdr.hdr_at_end = !region_user_mapped(attr->map_type, params.flags);
	hole_off = hole_len = 0;
	if (ops->lazy_range)
		ops->lazy_range(&params, &hole_off, &hole_len);
	fd = brt_obj_create_sparse(&hdr, sizeof(struct brt_map), hole_off, hole_len,
				   hdr.tail_size ? btf->blob : NULL, map_init, &params, &obj);
	/* no other thread or process knows the file before fd is returned */
	if (fd >= 0 && hdr.tail_size) {
		/* the verifier reads the checked blob, not the file's copy (maps.h) */
		if (btf->snap && btf->snap->size == hdr.tail_size) {
			atomic_fetch_add_explicit(&btf->snap->refs, 1, memory_order_relaxed);
			atomic_store_explicit(&brt_map_of(obj)->btf_snap, btf->snap,
					      memory_order_release);
		}
	}
	if (fd >= 0 && out)
		*out = brt_map_of(obj);
	else if (fd >= 0)
		brt_obj_put(obj);
	return fd;
}

/* Pages of a map file: the region, the BTF copy (on pages of its own, or packed after
 * the region: tail_packed) and the header (a page of its own, or in the last
 * BRT_OBJ_HDR_ROOM bytes after them: hdr_at_end), as obj.c's create() sizes it. */
static uint64_t map_file_pages(const struct brt_obj_hdr *h)
{
	uint64_t end = h->tail_size ? brt_obj_tail_off(h) + h->tail_size : h->data_size;
	uint64_t data = h->tail_packed ?
		BRT_ROUND_PAGE(brt_obj_tail_off(h) + h->tail_size) :
		BRT_ROUND_PAGE(h->data_size) + BRT_ROUND_PAGE(h->tail_size);

	if (h->hdr_at_end)
		return BRT_ROUND_PAGE(end + BRT_OBJ_HDR_ROOM) / BRT_PAGE;
	return data / BRT_PAGE + 1;
}

/* MAP_CREATE's checks again, on the parameters of a file's header: a map file must hold
 * a map MAP_CREATE could have made (a key size of 2^32 - 1 passes every size check of an
 * array's region, and the map commands would then copy that many bytes).  Map-of-maps
 * types check their storage as their own alloc_check does without the inner map fd it
 * opens. */
static int recheck(const struct brt_obj_hdr *h, const struct brt_map_ops *ops)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = h->type;
	a.key_size = h->key_size;
	a.value_size = h->value_size;
	a.max_entries = h->max_entries;
	a.map_flags = h->flags & ~ops->forced_flags;
	a.map_extra = h->map_extra;
	if (generic_check(&a))
		return -EINVAL;
	if (h->type == BPF_MAP_TYPE_ARRAY_OF_MAPS || h->type == BPF_MAP_TYPE_HASH_OF_MAPS) {
		if (a.value_size != 4 || (a.map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)))
			return -EINVAL;
		a.map_type = h->type == BPF_MAP_TYPE_ARRAY_OF_MAPS ? BPF_MAP_TYPE_ARRAY :
								       BPF_MAP_TYPE_HASH;
		ops = ops_of(a.map_type);
	}
	return ops->alloc_check && ops->alloc_check(&a) ? -EINVAL : 0;
}

/* A map file seen for the first time in this process (BRT_OBJ_MAP's attach callback).
 * Every field comes from tmpl->snap, the header as read once: another process that can
 * write the file may change the shared header between two reads, so a field checked here
 * and read again later could be a different one (the check would not cover the use). */
/* Can a process that may only read map's file map it read-only (obj.h's ro)?  When
 * nothing it does to the map short of a write writes the file: an array's lookups and
 * key walks read it only, a hash map's read its chains lockless (hash.c, "read-only
 * mappings"); other types' reads take locks (ops->ro_reads), and a lock, timer or graph
 * root in the value is written by reads (BPF_F_LOCK) and by this process's sweep. */
static int ro_usable(const struct brt_map *map, const struct brt_obj_hdr *hdr)
{
	return map->ops->ro_reads && map->lock_off < 0 && map->timer_off < 0 &&
	       map->task_work_off < 0 && !map->nroots && !hdr->spin_lock_off &&
	       !hdr->res_spin_lock_off &&
	       !map->ops->unref;
}

static int map_attach_obj(const struct brt_obj *tmpl, struct brt_obj **out)
{
	const struct brt_obj_hdr *hdr = &tmpl->snap;
	struct brt_map *map;
	uint64_t size, total;
	int err;

	map = calloc(1, sizeof(*map));
	if (!map)
		return -ENOMEM;
	map->obj = *tmpl;
	err = fill_params(map, hdr->type, hdr->key_size, hdr->value_size, hdr->max_entries,
			  hdr->flags, hdr->ncpus);
	/* A per-CPU map has a value for each possible CPU, as every map created on this
	 * machine (MAP_CREATE: brt_ncpus()): the copies of a run's CPU (brt_cpu(), below
	 * brt_ncpus()) index it unchecked.  A header naming fewer, the region still the
	 * parameters' size (a key 8 bytes longer for each value fewer), made a run on a
	 * later CPU use the next element's bytes or the allocator's past the last. */
	if (err || (map->ncpus == 0 || map->ncpus > 8192) ||
	    (brt_map_is_percpu(hdr->type) && map->ncpus != brt_ncpus()) || recheck(hdr, map->ops))
		goto out_corrupt;
	map->map_extra = hdr->map_extra;
	/* a lock word inside the value, 4-byte aligned, in a map type that may have one */
	lock_of_hdr(map, hdr);
	map->timer_off = timer_off_of(hdr);
	map->task_work_off = task_work_off_of(hdr);
	if (roots_of_hdr(map, hdr) || (hdr->spin_lock_off && hdr->res_spin_lock_off) ||
	    (map->lock_off >= 0 &&
	     ((hdr->type != BPF_MAP_TYPE_HASH && hdr->type != BPF_MAP_TYPE_ARRAY) ||
	      hdr->value_size < 4 || map->lock_off % 4 ||
	      (uint32_t)map->lock_off > hdr->value_size - 4)))
		goto out_corrupt;
	err = map->ops->data_size(map, &size);
	total = err || !hdr->spin_lock_off ? size :
		BRT_ROUND8(size) + brt_map_journal_size(hdr->value_size);
	/* The region (and a lock map's journal) must be exactly what the parameters imply
	 * and, with the BTF copy after it, fill the file. */
	if (err || total != hdr->data_size || hdr->tail_size > BRT_MAP_BTF_MAX ||
	    hdr->tail_packed > 1 || hdr->hdr_at_end > 1 ||
	    (hdr->hdr_at_end && (region_user_mapped(hdr->type, hdr->flags) ||
				 (hdr->tail_size && !hdr->tail_packed))) ||
	    map_file_pages(hdr) != tmpl->size / BRT_PAGE)
		goto out_corrupt;
	map->data = tmpl->base;
	map->data_size = size;
	map->journal = hdr->spin_lock_off ? (char *)tmpl->base + BRT_ROUND8(size) : NULL;
	map->obj.release = map_release;
	map->obj.unref = map->ops->unref || map->timer_off >= 0 ? map_unref : NULL;
	if (atomic_load_explicit(&tmpl->ro, memory_order_relaxed) && !ro_usable(map, hdr)) {
		brt_print(BPFRT_WARN, "bpfrt: a %s map opened read-only (BPF_OBJ_GET with "
			  "BPF_F_RDONLY of a pin this user may only read): without write access to "
			  "the file bpfrt reads only arrays, hash maps, LPM tries, queues, stacks, "
			  "bloom filters and ring buffers without locks, timers or graph roots "
			  "(EACCES)\n", brt_map_type_name(hdr->type));
		free(map);
		return -EACCES;
	}
	if (map->ops->attach && map->ops->attach(map))
		goto out_corrupt;
	*out = &map->obj;
	return 0;

out_corrupt:
	free(map);
	return -EINVAL;
}

int brt_map_file_values(int fd, const struct brt_obj_hdr *hdr, uint64_t file_size,
			uint32_t off, uint32_t len, void (*fn)(void *arg, const void *bytes),
			void *arg)
{
	struct brt_map m;
	uint64_t size, total;

	memset(&m, 0, sizeof(m));
	if (hdr->kind != BRT_OBJ_MAP ||
	    fill_params(&m, hdr->type, hdr->key_size, hdr->value_size, hdr->max_entries,
			hdr->flags, hdr->ncpus) ||
	    !m.ncpus || m.ncpus > 8192 || recheck(hdr, m.ops))
		return -EINVAL;
	if (!m.ops->file_values)
		return -EOPNOTSUPP;
	/* the region as attach checks it: what the parameters imply, inside the file */
	if (m.ops->data_size(&m, &size))
		return -EINVAL;
	total = !hdr->spin_lock_off ? size : BRT_ROUND8(size) + brt_map_journal_size(hdr->value_size);
	if (total != hdr->data_size || hdr->file_size != file_size ||
	    total > brt_obj_hdr_at(hdr))
		return -EINVAL;
	return m.ops->file_values(&m, fd, off, len, fn, arg);
}

/* The object layer (src/obj/) sits below maps/ and names no kind: tell it how to attach
 * map files when the library is loaded, before any fd can be resolved. */
__attribute__((constructor)) static void map_register_kind(void)
{
	brt_obj_set_attach(BRT_OBJ_MAP, map_attach_obj);
}

int brt_map_btf_blob(const struct brt_map *map, const void **blob, uint32_t *size)
{
	/* the header as validated when the file was first seen (attach checked that the
	 * copy fits the file) */
	uint32_t n = map->obj.snap.tail_size;
	uint64_t off = brt_obj_tail_off(&map->obj.snap);

	if (!n || !map->obj.snap.btf_id || off + n > brt_obj_hdr_at(&map->obj.snap))
		return -ENOENT;
	*blob = (const char *)map->obj.base + off;
	*size = n;
	return 0;
}

int brt_map_from_fd(int fd, struct brt_map **out)
{
	struct brt_obj *obj;
	int err = brt_obj_from_fd(fd, BRT_OBJ_MAP, &obj);

	if (!err)
		*out = brt_map_of(obj);
	return err;
}

void brt_map_get(struct brt_map *map)
{
	brt_obj_get(&map->obj);
}

void brt_map_put(struct brt_map *map)
{
	brt_obj_put(&map->obj);
}

/* the syscall side never sees a value's struct bpf_timer or struct bpf_task_work: the
 * kernel zeroes them in what it copies out (check_and_init_map_value()) */
static int mask_timer(const struct brt_map *map, void *value, int err)
{
	if (!err && map->timer_off >= 0)
		memset((char *)value + map->timer_off, 0, 16);
	if (!err && map->task_work_off >= 0)
		memset((char *)value + map->task_work_off, 0, 8);
	if (!err)
		brt_map_zero_roots(map, value);
	return err;
}

int brt_map_sys_lookup(struct brt_map *map, const void *key, void *value, uint64_t flags)
{
	if (map->lock_off >= 0)
		return mask_timer(map, value, brt_map_lock_lookup(map, key, value, flags));
	if (map->ops->peek)
		return map->ops->peek(map, value);
	if (!map->ops->copy_value)
		return -BRT_ENOTSUPP;
	return mask_timer(map, value, map->ops->copy_value(map, key, value));
}

int brt_map_sys_update(struct brt_map *map, const void *key, const void *value,
		       uint64_t flags)
{
	if (map->lock_off >= 0)
		return brt_map_lock_update(map, key, value, flags);
	if (map->ops->push)
		return map->ops->push(map, value, flags);
	if (!map->ops->update)
		return -BRT_ENOTSUPP;
	return map->ops->update(map, key, value, flags);
}

int brt_map_sys_delete(struct brt_map *map, const void *key)
{
	if (!map->ops->delete)
		return map->type == BPF_MAP_TYPE_RINGBUF || map->type == BPF_MAP_TYPE_USER_RINGBUF
			       ? -BRT_ENOTSUPP
			       : -EINVAL;
	return map->ops->delete(map, key);
}

int brt_map_sys_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	if (!map->ops->get_next_key)
		return map->ops->push ? -EINVAL : -BRT_ENOTSUPP;
	return map->ops->get_next_key(map, key, next_key);
}

int brt_map_sys_lookup_and_delete(struct brt_map *map, const void *key, void *value,
				  uint64_t flags)
{
	if (map->lock_off >= 0)
		return brt_map_lock_lookup_and_delete(map, key, value, flags);
	if (map->ops->pop) {
		if (flags)
			return -EINVAL;
		return map->ops->pop(map, value);
	}
	if (!map->ops->lookup_and_delete)
		return -BRT_ENOTSUPP;
	return map->ops->lookup_and_delete(map, key, value);
}
