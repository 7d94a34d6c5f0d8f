/* test_map_btf_types_oracle.c - MAP_CREATE with BTF for every map type bpfrt offers
 * (maps/map_types.def), against the kernel.  The kernel's map_check_btf() takes a key
 * type only from a type whose ops have a map_check_btf (a keyless one otherwise EINVAL),
 * checks the value's special fields against the type (a bpf_spin_lock outside hash,
 * array and storage maps EOPNOTSUPP) and then asks the type: perf event and cgroup
 * arrays, maps of maps, dev, cpu and xsk maps, stack traces, sockmaps and sockhashes
 * take no BTF at all (map_check_no_btf(): ENOTSUPP), arrays want an int key, LPM tries a
 * struct, local storage an int, cgroup storage a u64, a bloom filter none.  Each type
 * with valid attributes: key and value types, the value type alone, a value holding a
 * bpf_spin_lock, btf_vmlinux_value_type_id (a struct_ops value, only for
 * BPF_MAP_TYPE_STRUCT_OPS), and key and value types with a max_entries the type refuses
 * (the type's checks come before the BTF's); and (review23) the key type alone, key or
 * value types of another size (map_check_btf() sizes them before the type's check: EINVAL
 * where a no-BTF type would be ENOTSUPP; an empty struct as the key of a keyless map is
 * taken), a value type id past the BTF's, a map's fd as btf_fd, a vmlinux value type
 * with a key type; bpfrt_bpf() and bpf(2) must give the same fd-or-errno and,
 * for a map made, the same type ids in OBJ_GET_INFO_BY_FD.  Before session 23 bpfrt
 * refused the map BTF of sockmaps and sockhashes only, took a keyless value type for no
 * type but the one-element array, and checked the BTF before the attributes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "btf_blob.h"
#include "harness.h"
#include "maps/maps.h"
#include "transcript.h"

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
static const char strs[] = "\0int\0s\0a\0b\0long long\0e\0bpf_spin_lock\0val\0lv\0l";
enum { T_INT = 1, T_S, T_LL, T_EMPTY, T_LOCK, T_LV };
/* [1] int, [2] struct s { int a; int b; }, [3] long long, [4] struct e {},
 * [5] struct bpf_spin_lock { int val; }, [6] struct lv { int a; struct bpf_spin_lock l; } */
static const uint32_t btf_types[] = {
	1,  INFO(BTF_KIND_INT, 0),    4, (BTF_INT_SIGNED << 24) | 32,
	5,  INFO(BTF_KIND_STRUCT, 2), 8, 7, T_INT, 0, 9, T_INT, 32,
	11, INFO(BTF_KIND_INT, 0),    8, (BTF_INT_SIGNED << 24) | 64,
	21, INFO(BTF_KIND_STRUCT, 0), 0,
	23, INFO(BTF_KIND_STRUCT, 1), 4, 37, T_INT, 0,
	41, INFO(BTF_KIND_STRUCT, 2), 8, 7, T_INT, 0, 44, T_LOCK, 32,
};

/* valid attributes of each type, and its key and value types */
struct row {
	uint32_t type, ks, vs, max, flags, key_id, value_id;
};

static const struct row rows[] = {
	{ BPF_MAP_TYPE_HASH, 4, 8, 4, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_LRU_HASH, 4, 8, 4, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 4, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_QUEUE, 0, 8, 4, 0, 0, T_S },
	{ BPF_MAP_TYPE_STACK, 0, 8, 4, 0, 0, T_S },
	{ BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0, T_EMPTY },
	{ BPF_MAP_TYPE_LPM_TRIE, 8, 8, 4, BPF_F_NO_PREALLOC, T_S, T_S },
	{ BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_DEVMAP, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_CPUMAP, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_XSKMAP, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_STACK_TRACE, 4, 8, 4, 0, T_INT, T_LL },
	{ BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 4, 0, 0, T_S },
	{ BPF_MAP_TYPE_CGROUP_STORAGE, 8, 8, 0, 0, T_LL, T_S },
	{ BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 8, 8, 0, 0, T_LL, T_S },
	{ BPF_MAP_TYPE_SOCKMAP, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_SOCKHASH, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4, 4, 4, 0, T_INT, T_INT },
	{ BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, T_INT, T_S },
	{ BPF_MAP_TYPE_INODE_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, T_INT, T_S },
	{ BPF_MAP_TYPE_TASK_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, T_INT, T_S },
	{ BRT_MAP_TYPE_CGRP_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, T_INT, T_S },
	/* value_size: the kernel's bpf_struct_ops_tcp_congestion_ops (main() sets it) */
	{ BPF_MAP_TYPE_STRUCT_OPS, 4, 0, 1, 0, T_INT, T_S },
	{ BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 4096, 0, 0, T_EMPTY },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

enum {
	V_KEYED, V_VALUE_ONLY, V_LOCK, V_VMLINUX, V_BAD_MAX, V_KEY_ONLY, V_KEY_SIZE,
	V_VALUE_SIZE, V_VALUE_RANGE, V_NOT_BTF, V_VMLINUX_KEY, NV
};
static const char *const vnames[NV] = {
	"key and value types", "the value type alone", "a value with a bpf_spin_lock",
	"btf_vmlinux_value_type_id", "key and value types, max_entries the type refuses",
	"the key type alone", "a key type of another size (an empty struct for no key)",
	"a value type of another size", "a value type id past the BTF's",
	"key and value types, btf_fd a map's", "btf_vmlinux_value_type_id and a key type",
};

static uint32_t st_id, st_size; /* bpf_struct_ops_tcp_congestion_ops in the kernel's BTF */

/* MAP_CREATE of row r's map with variant v's BTF: "1 key=K value=V vmlinux=W" for a map
 * made (its info's ids), else the errno */
static void create(sys_fn sys, struct transcript *t, const struct row *r, int v, int btf,
		   int inner)
{
	struct bpf_map_info info;
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = r->type;
	a.key_size = r->ks;
	a.value_size = r->type == BPF_MAP_TYPE_STRUCT_OPS ? st_size : r->vs;
	a.max_entries = r->max;
	a.map_flags = r->flags;
	a.btf_fd = (uint32_t)btf;
	if (r->type == BPF_MAP_TYPE_ARRAY_OF_MAPS || r->type == BPF_MAP_TYPE_HASH_OF_MAPS)
		a.inner_map_fd = (uint32_t)inner;
	switch (v) {
	case V_KEYED:
		a.btf_key_type_id = r->key_id;
		a.btf_value_type_id = r->value_id;
		break;
	case V_VALUE_ONLY:
		a.btf_value_type_id = r->value_id;
		break;
	case V_LOCK:
		a.btf_key_type_id = r->key_id;
		a.btf_value_type_id = T_LV;
		break;
	case V_VMLINUX:
		a.btf_vmlinux_value_type_id = st_id;
		break;
	case V_BAD_MAX:
		/* the type's own checks come first (map_alloc_check()), BTF after */
		a.btf_key_type_id = r->key_id;
		a.btf_value_type_id = r->value_id;
		a.max_entries = r->max ? 0 : 1;
		break;
	case V_KEY_ONLY:
		a.btf_key_type_id = r->key_id ? r->key_id : T_INT;
		break;
	case V_KEY_SIZE:
		/* map_check_btf() sizes the key before the type's map_check_btf */
		a.btf_key_type_id = !r->ks ? T_EMPTY : r->ks == 8 ? T_INT : T_LL;
		a.btf_value_type_id = r->value_id;
		break;
	case V_VALUE_SIZE:
		a.btf_key_type_id = r->key_id;
		a.btf_value_type_id = r->vs == 8 ? T_INT : T_LL;
		break;
	case V_VALUE_RANGE:
		a.btf_key_type_id = r->key_id;
		a.btf_value_type_id = 99;
		break;
	case V_NOT_BTF:
		a.btf_key_type_id = r->key_id;
		a.btf_value_type_id = r->value_id;
		a.btf_fd = (uint32_t)inner;
		break;
	default:
		a.btf_vmlinux_value_type_id = st_id;
		a.btf_key_type_id = T_INT;
	}
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0) {
		say(t, "%s: %s: errno %d\n", brt_map_type_name(r->type), vnames[v], errno);
		return;
	}
	if (map_info(sys, fd, &info))
		say(t, "%s: %s: made, info errno %d\n", brt_map_type_name(r->type), vnames[v],
		    errno);
	else
		say(t, "%s: %s: made, BTF %d key %u value %u vmlinux %u\n",
		    brt_map_type_name(r->type), vnames[v], info.btf_id != 0, info.btf_key_type_id,
		    info.btf_value_type_id, info.btf_vmlinux_value_type_id);
	close(fd);
}

static void script(sys_fn sys, struct transcript *t)
{
	int btf = btf_blob_load(sys, btf_types, sizeof(btf_types), strs, sizeof(strs));
	int inner = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0);

	say(t, "BTF loaded %d, inner map made %d\n", btf >= 0, inner >= 0);
	for (size_t i = 0; i < NROWS; i++)
		for (int v = 0; v < NV; v++) {
			/* the variants that ask something of this type */
			if (v == V_VALUE_ONLY && !rows[i].key_id)
				continue;
			if (v == V_LOCK && rows[i].vs != 8)
				continue;
			create(sys, t, &rows[i], v, btf, inner);
			t->steps++;
		}
	if (btf >= 0)
		close(btf);
	if (inner >= 0)
		close(inner);
}

int main(void)
{
	static struct transcript k, b;
	const struct brt_btf *vmlinux;
	const struct btf_type *vt;
	int id, made = 0, refused524 = 0;

	if (geteuid() || create_map(kernel_bpf, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0) < 0)
		T_SKIP("needs root and the kernel's bpf()");
	vmlinux = brt_btf_vmlinux();
	id = vmlinux ? brt_btf_find(vmlinux, "bpf_struct_ops_tcp_congestion_ops",
				    BTF_KIND_STRUCT)
		     : -1;
	vt = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	if (!vt)
		T_SKIP("no bpf_struct_ops_tcp_congestion_ops in the kernel's BTF");
	st_id = (uint32_t)id;
	st_size = vt->size;

	T_CASE("every type bpfrt offers has a row");
#define BRT_MAP_TYPE(t, name, ops)                                    \
	{                                                              \
		int found = 0;                                         \
		for (size_t i = 0; i < NROWS; i++)                     \
			found |= rows[i].type == (t);                   \
		if (!found)                                            \
			printf("no row for map type %s\n", #name);     \
		T_ASSERT(found);                                       \
	}
#include "maps/map_types.def"
#undef BRT_MAP_TYPE

	script(kernel_bpf, &k);
	script(bpfrt_bpf, &b);
	if (getenv("BPFRT_SHOW"))
		fputs(k.text, stdout);
	compare_transcripts(&k, &b);
	T_CASE("both transcripts end together");
	T_EQ_INT(k.steps, b.steps);
	for (const char *l = k.text; (l = strstr(l, ": made")); l++)
		made++;
	for (const char *l = k.text; (l = strstr(l, "errno 524")); l++)
		refused524++;
	/* the kernel's answers that make the comparison mean something: maps made with BTF,
	 * and the eleven types of map_check_no_btf() refused (key and value, value alone;
	 * a stack trace's 8-byte value with a lock) */
	printf("%u cases, kernel made %d maps, refused %d with ENOTSUPP\n", k.steps, made,
	       refused524);
	T_CASE("kernel: maps made with BTF, the no-BTF types refused");
	T_ASSERT(made >= 20);
	T_ASSERT(refused524 >= 22);
	return t_done();
}
