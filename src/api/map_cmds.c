/* map_cmds.c - the BPF_MAP_* commands: resolve the fd, check access the way the kernel's
 * syscall.c does (in its order, so the same mistake gives the same errno), copy key and
 * value in and out through the call's uaccess, and dispatch to the map type.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "btf/btf.h"
#include "maps/maps.h"
#include "verifier/verifier.h"

#define SMALL_BUF 512 /* keys are at most 512 bytes; small values need no malloc */

/* A key or value buffer: on the stack when small. */
struct kbuf {
	void *p;
	unsigned char small[SMALL_BUF] __attribute__((aligned(8)));
};

static int kbuf_alloc(struct kbuf *b, size_t len)
{
	b->p = len <= sizeof(b->small) ? b->small : malloc(len);
	return b->p ? 0 : -ENOMEM;
}

static void kbuf_free(struct kbuf *b)
{
	if (b->p != b->small)
		free(b->p);
	b->p = NULL;
}

/* The kernel's __bpf_copy_key(): maps without keys take none (EINVAL if one is given). */
static int copy_key(struct brt_call *call, struct brt_map *map, uint64_t ukey, struct kbuf *b)
{
	int err;

	b->p = NULL;
	if (!map->key_size)
		return ukey ? -EINVAL : 0;
	err = kbuf_alloc(b, map->key_size);
	if (err)
		return err;
	err = call->ua->from(b->p, ukey, map->key_size);
	if (err)
		kbuf_free(b);
	return err;
}

/* The key copied in, then a buffer for the value (vsize bytes): 0, or -errno with
 * neither held. */
static int key_and_value(struct brt_call *call, struct brt_map *map, struct kbuf *key,
			 struct kbuf *value, uint32_t *vsize)
{
	int err = copy_key(call, map, call->attr->key, key);

	if (err)
		return err;
	*vsize = brt_map_value_size(map);
	err = kbuf_alloc(value, *vsize);
	if (err)
		kbuf_free(key);
	return err;
}

int brt_api_map_can_read(const struct brt_map *map, int fd)
{
	return !(map->flags & BPF_F_WRONLY) && brt_obj_fd_access(&map->obj, fd) != O_WRONLY;
}

int brt_api_map_can_write(const struct brt_map *map, int fd)
{
	return !(map->flags & BPF_F_RDONLY) &&
	       !atomic_load_explicit(&map->obj.hdr->frozen, memory_order_acquire) &&
	       brt_obj_fd_access(&map->obj, fd) != O_RDONLY;
}

enum { MAP_READ = 1, MAP_WRITE = 2 };

/* attr->map_fd's map, referenced, when the fd gives the access asked for (MAP_READ,
 * MAP_WRITE or both): 0, the fd's errno, or -EPERM, the kernel's order. */
static int map_get(const union bpf_attr *attr, int access, struct brt_map **map)
{
	int err = brt_map_from_fd((int)attr->map_fd, map);

	if (err)
		return err;
	if (((access & MAP_READ) && !brt_api_map_can_read(*map, (int)attr->map_fd)) ||
	    ((access & MAP_WRITE) && !brt_api_map_can_write(*map, (int)attr->map_fd))) {
		brt_map_put(*map);
		return -EPERM;
	}
	return 0;
}

/* Linux 6.18's excl_prog_hash / excl_prog_hash_size (bytes 80-91 of MAP_CREATE), checked
 * like the kernel after the map is made: a size without a hash or a hash whose size is
 * not SHA-256's is -EINVAL, an unreadable hash -EFAULT.  A map exclusive to one program
 * needs the program's SHA-256 digest at load, which this runtime does not compute: such
 * a map is refused with -EOPNOTSUPP rather than made without its guard. */
static int excl_prog_hash_check(struct brt_call *call)
{
	unsigned char digest[32];
	uint64_t hash;
	uint32_t size;

	memcpy(&hash, (const char *)call->attr + 80, 8);
	memcpy(&size, (const char *)call->attr + 88, 4);
	if (!hash)
		return size ? -EINVAL : 0;
	if (size != sizeof(digest))
		return -EINVAL;
	if (call->ua->from(digest, hash, sizeof(digest)))
		return -EFAULT;
	return -EOPNOTSUPP;
}

/* A struct_ops map after the type's own checks (maps/struct_ops.c), as the kernel's
 * bpf_struct_ops_map_alloc() and map_create() go on: the value type must be the
 * bpf_struct_ops_<name> of a struct the kernel registered (ENOTSUPP) and the value that
 * size (EINVAL); then the program's BTF, which the kernel requires although the value is
 * its own type (a bad fd EBADF, no BTF EINVAL). */
static int struct_ops_check(const union bpf_attr *attr)
{
	struct brt_struct_ops st;
	struct brt_obj *obj;
	int err;

	if (brt_struct_ops_find(brt_btf_vmlinux(), attr->btf_vmlinux_value_type_id, 1, &st))
		return -524; /* the kernel's internal ENOTSUPP */
	if (attr->value_size != st.value->size)
		return -EINVAL;
	err = brt_obj_from_fd_transient((int)attr->btf_fd, BRT_OBJ_BTF, &obj);
	if (err)
		return err;
	brt_obj_put(obj);
	return 0;
}

int brt_cmd_map_create(struct brt_call *call)
{
	struct brt_map_btf btf = { 0 };
	int err;

	/* like map_create(), the BTF fd is looked at only when type ids are given, and
	 * after the attributes' checks (a sockmap of no entries is EINVAL, not ENOTSUPP) */
	if (call->attr->btf_key_type_id || call->attr->btf_value_type_id) {
		err = brt_map_create_check(call->attr);
		if (!err)
			err = brt_map_btf_check(call->attr, &btf);
		if (err)
			return err;
	} else if (call->attr->btf_vmlinux_value_type_id &&
		   call->attr->map_type == BPF_MAP_TYPE_STRUCT_OPS) {
		/* the kernel keeps the program's BTF with a struct_ops map (info's btf_id);
		 * a bad fd is answered after the struct's checks (struct_ops_check()) */
		(void)brt_map_btf_check(call->attr, &btf);
	}
	err = brt_map_create(call->attr, &btf, NULL);
	if (btf.ref)
		brt_obj_put(btf.ref);
	if (err >= 0 && call->attr->map_type == BPF_MAP_TYPE_STRUCT_OPS) {
		int so = struct_ops_check(call->attr);

		if (so) {
			close(err);
			err = so;
		}
	}
	if (err >= 0) {
		int excl = excl_prog_hash_check(call);

		if (excl) {
			close(err);
			err = excl;
		}
	}
	return err;
}

/* MAP_LOOKUP_ELEM and MAP_LOOKUP_AND_DELETE_ELEM: the same checks and copies, in the
 * kernel's order; and_delete also needs a writable fd, refuses flags on a queue or stack
 * and removes the element. */
static int lookup(struct brt_call *call, int and_delete)
{
	union bpf_attr *attr = call->attr;
	struct kbuf key, value;
	struct brt_map *map;
	uint32_t vsize;
	int err;

	if (attr->flags & ~(uint64_t)BPF_F_LOCK)
		return -EINVAL;
	err = map_get(attr, MAP_READ | (and_delete ? MAP_WRITE : 0), &map);
	if (err)
		return err;
	err = -EINVAL;
	if (and_delete && attr->flags &&
	    (map->type == BPF_MAP_TYPE_QUEUE || map->type == BPF_MAP_TYPE_STACK))
		goto out_put;
	/* BPF_F_LOCK needs a bpf_spin_lock in the value (the map's BTF) */
	if ((attr->flags & BPF_F_LOCK) && (map->lock_off < 0 || map->lock_res))
		goto out_put;
	err = key_and_value(call, map, &key, &value, &vsize);
	if (err)
		goto out_put;
	if (!and_delete && map->type == BPF_MAP_TYPE_BLOOM_FILTER) {
		/* the kernel's map_lookup_elem(): a bloom filter's value is the question,
		 * copied in; nothing is copied out */
		err = call->ua->from(value.p, attr->value, vsize);
		if (!err)
			err = brt_map_sys_lookup(map, key.p, value.p, attr->flags);
		goto out_free;
	}
	if (and_delete)
		err = brt_map_sys_lookup_and_delete(map, key.p, value.p, attr->flags);
	else
		err = brt_map_sys_lookup(map, key.p, value.p, attr->flags);
	if (!err)
		err = call->ua->to(attr->value, value.p, vsize);
out_free:
	kbuf_free(&value);
	kbuf_free(&key);
out_put:
	brt_map_put(map);
	return err;
}

int brt_cmd_map_lookup(struct brt_call *call)
{
	return lookup(call, 0);
}

int brt_cmd_map_update(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	struct kbuf key, value;
	struct brt_map *map;
	uint32_t vsize;
	int err;

	err = map_get(attr, MAP_WRITE, &map);
	if (err)
		return err;
	err = -EINVAL;
	if ((attr->flags & BPF_F_LOCK) && (map->lock_off < 0 || map->lock_res))
		goto out_put;
	err = key_and_value(call, map, &key, &value, &vsize);
	if (err)
		goto out_put;
	err = call->ua->from(value.p, attr->value, vsize);
	if (!err)
		err = brt_map_sys_update(map, key.p, value.p, attr->flags);
	kbuf_free(&value);
	kbuf_free(&key);
out_put:
	brt_map_put(map);
	return err;
}

int brt_cmd_map_delete(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	struct brt_map *map;
	struct kbuf key;
	int err;

	err = map_get(attr, MAP_WRITE, &map);
	if (err)
		return err;
	err = copy_key(call, map, attr->key, &key);
	if (err)
		goto out_put;
	err = brt_map_sys_delete(map, key.p);
	kbuf_free(&key);
out_put:
	brt_map_put(map);
	return err;
}

int brt_cmd_map_get_next_key(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	struct kbuf key = { 0 }, next;
	struct brt_map *map;
	int err;

	err = map_get(attr, MAP_READ, &map);
	if (err)
		return err;
	if (attr->key) {
		err = copy_key(call, map, attr->key, &key);
		if (err)
			goto out_put;
	}
	err = kbuf_alloc(&next, map->key_size ? map->key_size : 1);
	if (err)
		goto out_free_key;
	err = brt_map_sys_get_next_key(map, key.p, next.p);
	if (!err)
		err = call->ua->to(attr->next_key, next.p, map->key_size);
	kbuf_free(&next);
out_free_key:
	kbuf_free(&key);
out_put:
	brt_map_put(map);
	return err;
}

int brt_cmd_map_lookup_and_delete(struct brt_call *call)
{
	return lookup(call, 1);
}

/* The fields of a map's value that bpfrt keeps no offset of (workqueues, kptrs of kernel
 * types, refcounts, uptrs) still give the kernel's map a record: asked of the map's BTF
 * (a map of a blob too big to copy keeps ids only: then the offsets alone answer). */
static int value_has_record(struct brt_map *map)
{
	struct brt_btf_snap *s;
	const struct brt_btf *btf;

	if (!map->obj.snap.btf_id || !map->obj.snap.tail_size ||
	    !map->obj.snap.btf_value_type_id || brt_map_btf_snap(map, &s))
		return 0;
	btf = brt_btf_snap_btf(s);
	return btf && brt_verifier_value_has_record(btf, map->obj.snap.btf_value_type_id);
}

int brt_cmd_map_freeze(struct brt_call *call)
{
	struct brt_map *map;
	uint32_t expected = 0;
	int err, hold = -1;

	union bpf_attr *attr = call->attr;

	err = brt_map_from_fd((int)attr->map_fd, &map);
	if (err)
		return err;
	/* map_freeze()'s order: no struct_ops map, no value with special fields (locks,
	 * timers, task works, lists, trees, kptrs: ENOTSUPP); write access, which a frozen
	 * map no longer has, so freezing it again is EPERM before the EBUSY tests; no
	 * writable mapping (EBUSY): of those bpfrt knows a ring buffer's live consumer and a
	 * user ring buffer's producers (held out until frozen is set). */
	if (map->type == BPF_MAP_TYPE_STRUCT_OPS || map->lock_off >= 0 || map->timer_off >= 0 ||
	    map->task_work_off >= 0 || map->nroots || value_has_record(map))
		err = -524; /* ENOTSUPP */
	else if (!brt_api_map_can_write(map, (int)attr->map_fd))
		err = -EPERM;
	else if (brt_ringbuf_consumer_live(map))
		err = -EBUSY;
	else if ((err = brt_user_ringbuf_freeze_hold(map, (int)attr->map_fd, &hold)))
		;
	else if (!atomic_compare_exchange_strong(&map->obj.hdr->frozen, &expected, 1))
		err = -EPERM;
	if (hold >= 0)
		close(hold);
	brt_map_put(map);
	return err;
}
