/* storage_oracle.h - what the local-storage oracles share (test_sk_storage_oracle.c,
 * test_local_storage_oracle.c; the socket oracles' storage maps, tests/attach): these maps want BTF for their key and value, so each map
 * is created with a small BTF of its own, and MAP_CREATE's checks are the same script for
 * every storage type.  Include after transcript.h.
 */
#ifndef BPFRT_TESTS_MAPS_STORAGE_ORACLE_H
#define BPFRT_TESTS_MAPS_STORAGE_ORACLE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "btf_blob.h"
#include "transcript.h"

#define STORAGE_BTF_INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))

/* [1] int, [2] u8 (unsigned char), [3] u8[nelems], [4] long (8 bytes): the fd or -errno */
static inline int storage_btf(sys_fn sys, uint32_t nelems)
{
	static const char strs[] = "\0int\0char\0long";
	const uint32_t types[] = {
		1, STORAGE_BTF_INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
		5, STORAGE_BTF_INFO(BTF_KIND_INT, 0), 1, 8,
		0, STORAGE_BTF_INFO(BTF_KIND_ARRAY, 0), 0, 2, 1, nelems,
		10, STORAGE_BTF_INFO(BTF_KIND_INT, 0), 8, (BTF_INT_SIGNED << 24) | 64,
	};
	int fd;

	fd = btf_blob_load(sys, types, sizeof(types), strs, sizeof(strs));
	return fd < 0 ? -errno : fd;
}

/* a map with value_size value, typed u8[value] (or long when value is 8 and key_id 4):
 * the fd or -errno */
static inline int storage_create(sys_fn sys, uint32_t type, uint32_t key, uint32_t value,
				 uint32_t max, uint32_t flags, uint32_t key_id, uint32_t value_id)
{
	int btf = storage_btf(sys, value), fd;
	union bpf_attr a;

	if (btf < 0)
		return btf;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = key_id;
	a.btf_value_type_id = value_id;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	fd = fd < 0 ? -errno : fd;
	close(btf);
	return fd;
}

/* the storage map the scripts use: an int key and a u8[16] value, not preallocated */
static inline int storage_map(sys_fn sys, uint32_t type)
{
	return storage_create(sys, type, 4, 16, 0, BPF_F_NO_PREALLOC, 1, 3);
}

/* MAP_CREATE's checks of a storage type: BTF required (an int key), BPF_F_NO_PREALLOC
 * required, max_entries 0, key 4, the value size limit, other flags; a line each,
 * "<prefix>create <case>: <0 or -errno>" */
static inline void storage_creates(sys_fn sys, struct transcript *t, uint32_t type,
				   const char *prefix)
{
	static const struct {
		const char *what;
		uint32_t key, value, max, flags, key_id, value_id;
	} c[] = {
		{ "ok", 4, 16, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "no BTF", 4, 16, 0, BPF_F_NO_PREALLOC, 0, 0 },
		{ "preallocated", 4, 16, 0, 0, 1, 3 },
		{ "max_entries 1", 4, 16, 1, BPF_F_NO_PREALLOC, 1, 3 },
		{ "key 8", 8, 16, 0, BPF_F_NO_PREALLOC, 4, 3 },
		{ "key a char array", 4, 4, 0, BPF_F_NO_PREALLOC, 3, 3 },
		{ "clone", 4, 16, 0, BPF_F_NO_PREALLOC | (1U << 9), 1, 3 },
		{ "rdonly_prog", 4, 16, 0, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG, 1, 3 },
		{ "numa", 4, 16, 0, BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE, 1, 3 },
		{ "value 65407", 4, 65407, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "value 65408", 4, 65408, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "value of another size", 4, 16, 0, BPF_F_NO_PREALLOC, 1, 1 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int fd = storage_create(sys, type, c[i].key, c[i].value, c[i].max, c[i].flags,
					c[i].key_id, c[i].value_id);

		say(t, "%screate %s: %d\n", prefix, c[i].what, fd < 0 ? fd : 0);
		if (fd >= 0)
			close(fd);
	}
}

#endif
