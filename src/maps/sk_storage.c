/* sk_storage.c - the local storage maps: BPF_MAP_TYPE_SK_STORAGE, a value per socket,
 * which user space names by a socket fd (the key) and programs by a socket pointer
 * (bpf_sk_storage_get/delete); and with the same layout and rules the task, inode and
 * cgroup storages, a value per task (key: a pidfd), per inode (key: any fd of the file)
 * and per cgroup (key: an fd of its directory), kept under the pid, the file's device
 * and inode number, and the cgroup id.  Their programs' helpers (bpf_task_storage_get
 * and friends) are not offered yet: user space alone fills them.
 *
 * The kernel hangs the value on the struct sock and frees it with the socket.  Here a
 * value is kept under the socket's cookie (SO_COOKIE) in one of BRT_SK_STORAGE_CELLS cells
 * (the kernel has no limit: more sockets than that are -ENOMEM), and it stays when the
 * socket closes.  Programs hold sockets from sockmaps and socket lookups
 * (attach/sock_lookup.c), which carry the socket's cookie.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "maps/maps.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif
#ifndef BPF_F_CLONE
#define BPF_F_CLONE (1U << 9)
#endif

#define BRT_SK_STORAGE_CELLS 4096
/* BPF_LOCAL_STORAGE_MAX_VALUE_SIZE: U16_MAX less the kernel's 128-byte element header */
#define MAX_VALUE_SIZE (65535 - 128)

struct ss_head {
	_Atomic uint32_t lock;
	uint32_t count;
};

/* bpf_local_storage_map_alloc_check(); the key's BTF type must be a 32-bit int
 * (api/btf_load.c) */
static int ss_alloc_check(const union bpf_attr *attr)
{
	if ((attr->map_flags & ~(BPF_F_NO_PREALLOC | BPF_F_CLONE)) ||
	    !(attr->map_flags & BPF_F_NO_PREALLOC) || attr->max_entries ||
	    attr->key_size != 4 || !attr->value_size || !attr->btf_key_type_id ||
	    !attr->btf_value_type_id)
		return -EINVAL;
	if (attr->value_size > MAX_VALUE_SIZE)
		return -E2BIG;
	return 0;
}

static size_t ss_cell_size(const struct brt_map *map)
{
	return 8 + map->value_stride;
}

static _Atomic uint64_t *ss_cookie(struct brt_map *map, uint32_t i)
{
	return (_Atomic uint64_t *)((char *)map->data + sizeof(struct ss_head) +
				    (size_t)i * ss_cell_size(map));
}

/* the value after a cell's cookie */
static void *ss_value(struct brt_map *map, _Atomic uint64_t *cookie)
{
	size_t off = (size_t)((uintptr_t)cookie - (uintptr_t)map->data) + 8;

	return (char *)map->data + off;
}

static int ss_data_size(const struct brt_map *map, uint64_t *size)
{
	*size = sizeof(struct ss_head) + (uint64_t)BRT_SK_STORAGE_CELLS * ss_cell_size(map);
	return 0;
}

/* the task of pidfd key (the kernel's pidfd_get_pid(), then pid_task()): its pid, -EBADF
 * for an fd that is not a pidfd, -ENOENT for a task that is gone.  /proc/self/fdinfo
 * shows a pidfd's "Pid:" (-1 once the task is reaped); other fds have no such line. */
static int key_task(int32_t fd, uint64_t *id)
{
	char path[64], line[128];
	struct stat st;
	long pid = 0;
	int found = 0;
	FILE *f;

	if (fd < 0 || fstat(fd, &st))
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", (int)fd);
	f = fopen(path, "re");
	if (!f)
		return -EBADF;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Pid:\t%ld", &pid) == 1;
	fclose(f);
	if (!found)
		return -EBADF;
	if (pid <= 0)
		return -ENOENT;
	*id = (uint64_t)pid;
	return 0;
}

/* the inode behind fd key (fdget_raw(): any file, O_PATH too): its device and number */
static int key_inode(int32_t fd, uint64_t *id)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return -EBADF;
	/* a 64-bit name for (device, inode); 0 is the free cell's mark */
	*id = ((uint64_t)st.st_dev << 40 ^ (uint64_t)st.st_ino) | 1ull << 63;
	return 0;
}

/* the cgroup whose directory fd key is (cgroup_v1v2_get_from_fd()): its id, the
 * directory's inode number; -EBADF for anything else */
static int key_cgroup(int32_t fd, uint64_t *id)
{
	struct statfs sf;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || fstatfs(fd, &sf))
		return -EBADF;
	if (!S_ISDIR(st.st_mode) ||
	    (sf.f_type != CGROUP2_SUPER_MAGIC && sf.f_type != CGROUP_SUPER_MAGIC))
		return -EBADF;
	*id = (uint64_t)st.st_ino;
	return 0;
}

/* the socket of fd key: its cookie, or the kernel's sockfd_lookup() errno */
static int key_cookie(const void *key, uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	struct stat st;
	int32_t fd;

	memcpy(&fd, key, 4);
	if (fd < 0 || fstat(fd, &st))
		return -EBADF;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) || !*cookie)
		return -ENOTSOCK;
	return 0;
}

/* The owner a key names, as the type's *_elem functions resolve the fd: 0 and its id
 * (never 0), or their errno. */
static int key_owner(const struct brt_map *map, const void *key, uint64_t *id)
{
	int32_t fd;

	memcpy(&fd, key, 4);
	switch (map->type) {
	case BPF_MAP_TYPE_TASK_STORAGE:
		return key_task(fd, id);
	case BPF_MAP_TYPE_INODE_STORAGE:
		return key_inode(fd, id);
	case BRT_MAP_TYPE_CGRP_STORAGE:
		return key_cgroup(fd, id);
	default:
		return key_cookie(key, id);
	}
}

static void ss_lock(struct brt_map *map)
{
	struct ss_head *h = map->data;

	if (!brt_shm_lock(&h->lock))
		return;
	h->count = 0; /* taken over from a dead writer: count again */
	for (uint32_t i = 0; i < BRT_SK_STORAGE_CELLS; i++)
		if (atomic_load_explicit(ss_cookie(map, i), memory_order_relaxed))
			h->count++;
}

static void ss_unlock(struct brt_map *map)
{
	brt_shm_unlock(&((struct ss_head *)map->data)->lock);
}

static _Atomic uint64_t *ss_find(struct brt_map *map, uint64_t cookie)
{
	for (uint32_t i = 0; i < BRT_SK_STORAGE_CELLS; i++)
		if (atomic_load_explicit(ss_cookie(map, i), memory_order_acquire) == cookie)
			return ss_cookie(map, i);
	return NULL;
}

static void *ss_sys_lookup(struct brt_map *map, const void *key, int *err)
{
	uint64_t cookie;
	_Atomic uint64_t *c;

	*err = key_owner(map, key, &cookie);
	if (*err)
		return NULL;
	c = ss_find(map, cookie);
	if (!c)
		*err = -ENOENT;
	return c ? ss_value(map, c) : NULL;
}

static void *ss_lookup(struct brt_map *map, const void *key)
{
	int err;

	return ss_sys_lookup(map, key, &err);
}

static int ss_copy_value(struct brt_map *map, const void *key, void *value)
{
	void *v;
	int err;

	ss_lock(map);
	v = ss_sys_lookup(map, key, &err);
	if (v)
		memcpy(value, v, map->value_size);
	ss_unlock(map);
	return v ? 0 : err;
}

static int ss_update(struct brt_map *map, const void *key, const void *value, uint64_t flags)
{
	struct ss_head *h = map->data;
	_Atomic uint64_t *c;
	uint64_t cookie;
	int err = key_owner(map, key, &cookie);

	if (err)
		return err;
	/* bpf_local_storage_update() */
	if ((flags & ~(uint64_t)BPF_F_LOCK) > BPF_EXIST ||
	    ((flags & BPF_F_LOCK) && (map->lock_off < 0 || map->lock_res)))
		return -EINVAL;
	ss_lock(map);
	c = ss_find(map, cookie);
	if (c && (flags & ~(uint64_t)BPF_F_LOCK) == BPF_NOEXIST)
		err = -EEXIST;
	else if (!c && (flags & ~(uint64_t)BPF_F_LOCK) == BPF_EXIST)
		err = -ENOENT;
	else if (!c && h->count >= BRT_SK_STORAGE_CELLS)
		err = -ENOMEM;
	if (!err && !c) {
		c = ss_find(map, 0);
		h->count++;
	}
	if (!err) {
		memcpy(ss_value(map, c), value, map->value_size);
		atomic_store_explicit(c, cookie, memory_order_release);
	}
	ss_unlock(map);
	return err;
}

static int ss_delete(struct brt_map *map, const void *key)
{
	struct ss_head *h = map->data;
	_Atomic uint64_t *c;
	uint64_t cookie;
	int err = key_owner(map, key, &cookie);

	if (err)
		return err;
	ss_lock(map);
	c = ss_find(map, cookie);
	if (c) {
		atomic_store_explicit(c, 0, memory_order_release);
		h->count--;
	}
	ss_unlock(map);
	return c ? 0 : -ENOENT;
}

/* the kernel's notsupp_get_next_key() */
static int ss_get_next_key(struct brt_map *map, const void *key, void *next_key)
{
	(void)map, (void)key, (void)next_key;
	return -BRT_ENOTSUPP;
}

const struct brt_map_ops brt_sk_storage_map_ops = {
	.btf = BRT_MAP_BTF_INT_KEY,
	.alloc_check = ss_alloc_check,
	.data_size = ss_data_size,
	.lookup = ss_lookup,
	.copy_value = ss_copy_value,
	.update = ss_update,
	.delete = ss_delete,
	.get_next_key = ss_get_next_key,
};

/* A program's get and delete on a local storage map for the owner id (socket storage:
 * the socket's cookie, task storage: the task's pid; the helpers that name owners are
 * above this folder, attach/sock_lookup.c and trace/task.c):
 * bpf_local_storage's lookup, creation with BPF_NOEXIST from init (NULL: zeros) when
 * create is set, and unlink.  The value, or NULL; 0 or -ENOENT. */
void *brt_local_storage_get(struct brt_map *map, uint64_t owner, const void *init, int create)
{
	struct ss_head *h = map->data;
	_Atomic uint64_t *c;
	void *v = NULL;

	if (!owner)
		return NULL;
	ss_lock(map);
	c = ss_find(map, owner);
	if (!c && create && h->count < BRT_SK_STORAGE_CELLS) {
		c = ss_find(map, 0);
		h->count++;
		if (init)
			memcpy(ss_value(map, c), init, map->value_size);
		else
			memset(ss_value(map, c), 0, map->value_size);
		atomic_store_explicit(c, owner, memory_order_release);
	}
	if (c)
		v = ss_value(map, c);
	ss_unlock(map);
	return v;
}

int brt_local_storage_delete(struct brt_map *map, uint64_t owner)
{
	struct ss_head *h = map->data;
	_Atomic uint64_t *c;

	ss_lock(map);
	c = owner ? ss_find(map, owner) : NULL;
	if (c) {
		atomic_store_explicit(c, 0, memory_order_release);
		h->count--;
	}
	ss_unlock(map);
	return c ? 0 : -ENOENT;
}
