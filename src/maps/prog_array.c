/* prog_array.c - BPF_MAP_TYPE_PROG_ARRAY, the jump table of bpf_tail_call().  The shared
 * region holds, per slot, the id of the program stored there (what BPF_MAP_LOOKUP_ELEM
 * returns, as in the kernel); each process keeps its own slot -> program references,
 * since a loaded program exists only in the process that loaded it.  A slot whose shared
 * id no longer matches the local program (another process changed it) acts as empty: an
 * id written into a slot is never followed.  The program type every slot must share comes
 * from each program's header as read once when the program was first seen (obj->snap),
 * not the shared header, which a process that can write the program's file may rewrite.
 * As in the kernel, the slots are cleared when no fd refers to the map any more and no
 * pin does (map.c's map_unref(); a pin is known as root only), which breaks the cycle of
 * a program that tail-calls through a map holding itself.  A slot's
 * reference is published as a named one (obj.h, brt_obj_named()): other processes' id
 * walks count it only while they find the array alive and its shared slot naming the
 * program (brt_prog_array_file_ids()), so an array this process has not swept since its
 * last fd went holds nothing for them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/maps.h"

struct pa_view {
	struct brt_obj **progs; /* max_entries local references, NULL = empty here */
	uint32_t owner_type;    /* program type of the first program stored (0 = none) */
};

static int pa_alloc_check(const union bpf_attr *attr)
{
	union bpf_attr a = *attr;

	if (attr->value_size != 4 || (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)))
		return -EINVAL;
	a.map_type = BPF_MAP_TYPE_ARRAY;
	return brt_array_map_ops.alloc_check(&a);
}

static int pa_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = (uint64_t)map->max_entries * 8;
	return 0;
}

static int pa_attach(struct brt_map *map)
{
	struct pa_view *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->progs = calloc(map->max_entries, sizeof(*v->progs));
	if (!v->progs) {
		free(v);
		return -ENOMEM;
	}
	map->priv = v;
	return 0;
}

static _Atomic uint64_t *slot_id(struct brt_map *map, uint32_t i)
{
	return (_Atomic uint64_t *)map->data + i;
}

/* A slot's local reference goes (NULL: none). */
static void drop(struct brt_obj *old)
{
	if (!old)
		return;
	brt_obj_named(old, -1);
	brt_obj_put(old);
}

static void pa_clear(struct brt_map *map)
{
	struct pa_view *v = map->priv;

	if (!v)
		return;
	for (uint32_t i = 0; i < map->max_entries; i++) {
		struct brt_obj *old = v->progs[i];

		v->progs[i] = NULL;
		drop(old);
	}
}

static void pa_detach(struct brt_map *map)
{
	struct pa_view *v = map->priv;

	pa_clear(map);
	if (v) {
		free(v->progs);
		free(v);
	}
	map->priv = NULL;
}

static int index_of(struct brt_map *map, const void *key, uint32_t *i)
{
	memcpy(i, key, 4);
	return *i < map->max_entries;
}

static int pa_copy_value(struct brt_map *map, const void *key, void *value)
{
	uint32_t i, id;

	if (!index_of(map, key, &i))
		return -ENOENT;
	id = (uint32_t)atomic_load_explicit(slot_id(map, i), memory_order_acquire);
	if (!id)
		return -ENOENT;
	memcpy(value, &id, 4);
	return 0;
}

static int pa_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct pa_view *v = map->priv;
	struct brt_obj *prog, *old;
	uint32_t i;
	int32_t fd;
	int err;

	if (flags != BPF_ANY)
		return -EINVAL;
	if (!index_of(map, key, &i))
		return -E2BIG;
	memcpy(&fd, value, 4);
	err = brt_obj_from_fd(fd, BRT_OBJ_PROG, &prog);
	if (err)
		return err;
	if (v->owner_type && v->owner_type != prog->snap.type) {
		brt_obj_put(prog);
		return -EINVAL;
	}
	v->owner_type = prog->snap.type;
	brt_obj_named(prog, 1);
	old = v->progs[i];
	v->progs[i] = prog;
	atomic_store_explicit(slot_id(map, i), prog->snap.id, memory_order_release);
	drop(old);
	return 0;
}

static int pa_delete(struct brt_map *map, const void *key)
{
	struct pa_view *v = map->priv;
	struct brt_obj *old;
	uint32_t i;

	if (!index_of(map, key, &i))
		return -E2BIG;
	if (!atomic_exchange_explicit(slot_id(map, i), 0, memory_order_acq_rel))
		return -ENOENT;
	old = v->progs[i];
	v->progs[i] = NULL;
	drop(old);
	return 0;
}

int brt_prog_array_file_ids(int fd, const struct brt_obj_hdr *hdr, uint64_t file_size,
			    void (*fn)(void *arg, uint32_t id), void *arg)
{
	uint64_t slots[512];

	if (hdr->kind != BRT_OBJ_MAP || hdr->type != BPF_MAP_TYPE_PROG_ARRAY)
		return -EINVAL;
	if (hdr->data_size != (uint64_t)hdr->max_entries * 8 || hdr->file_size != file_size ||
	    hdr->data_size > brt_obj_hdr_at(hdr))
		return -EINVAL;
	for (uint32_t i = 0; i < hdr->max_entries; i += 512) {
		uint32_t n = hdr->max_entries - i < 512 ? hdr->max_entries - i : 512;

		if (pread(fd, slots, n * sizeof(slots[0]), (off_t)i * 8) !=
		    (ssize_t)(n * sizeof(slots[0])))
			return -EIO;
		for (uint32_t k = 0; k < n; k++)
			if ((uint32_t)slots[k])
				fn(arg, (uint32_t)slots[k]);
	}
	return 0;
}

struct brt_obj *brt_prog_array_get(struct brt_map *map, uint32_t i)
{
	struct pa_view *v = map->priv;
	struct brt_obj *p;

	if (map->type != BPF_MAP_TYPE_PROG_ARRAY || !v || i >= map->max_entries)
		return NULL;
	p = v->progs[i];
	if (!p || atomic_load_explicit(slot_id(map, i), memory_order_acquire) != p->snap.id)
		return NULL;
	return p;
}

const struct brt_map_ops brt_prog_array_map_ops = {
	.alloc_check = pa_alloc_check,
	.data_size = pa_data_size,
	.attach = pa_attach,
	.detach = pa_detach,
	.copy_value = pa_copy_value,
	.update = pa_update,
	.delete = pa_delete,
	.get_next_key = brt_array_get_next_key,
	.unref = pa_clear,
};
