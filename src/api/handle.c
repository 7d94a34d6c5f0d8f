/* handle.c - map handles, the user-space path to a map without system calls.  An fd
 * wrapper must ask the kernel what the fd is on every call (fstat: a closed fd must fail
 * with EBADF and a reused fd number must reach the new object, and only the kernel knows
 * when that happened), which costs more than the map operation.  A handle resolves its
 * fd once and holds its own fd (a dup) and map reference, so each call is the map
 * operation and plain copies, with the errnos of the fd wrappers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "maps/maps.h"

#define BOUNCE 256 /* values up to this size are staged on the stack */

struct bpfrt_map_handle {
	struct brt_map *map; /* referenced */
	int fd;              /* our dup of the caller's fd: a user reference, as any fd */
	int mode;            /* its access mode (O_RDONLY...): an fd's never changes */
	uint32_t vsize;      /* bytes of a syscall-side value */
};

static int ret_errno(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

struct bpfrt_map_handle *bpfrt_map_handle_open(int fd)
{
	struct bpfrt_map_handle *h = calloc(1, sizeof(*h));
	int err;

	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	/* dup first, then resolve the dup: the caller may close and reuse fd meanwhile */
	h->fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (h->fd < 0) {
		err = fd < 0 || errno == EBADF ? -EBADF : -errno;
		goto out_free;
	}
	err = brt_map_from_fd(h->fd, &h->map);
	if (err)
		goto out_close;
	h->mode = fcntl(h->fd, F_GETFL);
	h->mode = h->mode < 0 ? O_RDWR : h->mode & O_ACCMODE;
	h->vsize = brt_map_value_size(h->map);
	return h;

out_close:
	close(h->fd);
out_free:
	free(h);
	errno = -err;
	return NULL;
}

void bpfrt_map_handle_close(struct bpfrt_map_handle *h)
{
	if (!h)
		return;
	brt_map_put(h->map);
	close(h->fd);
	free(h);
}

int bpfrt_map_handle_fd(const struct bpfrt_map_handle *h)
{
	return h->fd;
}

/* The kernel's __bpf_copy_key() rule with trusted pointers: maps without keys take
 * none. */
static int key_ok(const struct brt_map *map, const void *key)
{
	if (!map->key_size)
		return key ? -EINVAL : 0;
	return key ? 0 : -EFAULT;
}

/* brt_api_map_can_read/write() without asking the kernel for the fd's mode on every call
 * (they do when some fd of the map is restricted): the mode of our fd is known. */
static int fd_access(const struct bpfrt_map_handle *h)
{
	/* a read-only mapping's handles are all of read-only fds (obj.c's from_fd()) */
	if (atomic_load_explicit(&h->map->obj.ro, memory_order_acquire))
		return O_RDONLY;
	if (h->mode == O_RDWR ||
	    !atomic_load_explicit(&h->map->obj.hdr->restricted, memory_order_acquire))
		return O_RDWR;
	return h->mode;
}

static int can_read(const struct bpfrt_map_handle *h)
{
	return !(h->map->flags & BPF_F_WRONLY) && fd_access(h) != O_WRONLY;
}

static int can_write(const struct bpfrt_map_handle *h)
{
	return !(h->map->flags & BPF_F_RDONLY) &&
	       !atomic_load_explicit(&h->map->obj.hdr->frozen, memory_order_acquire) &&
	       fd_access(h) != O_RDONLY;
}

int bpfrt_map_handle_lookup(const struct bpfrt_map_handle *h, const void *key, void *value)
{
	unsigned char small[BOUNCE] __attribute__((aligned(8)));
	struct brt_map *map = h->map;
	void *buf = small;
	int err;

	if (!can_read(h))
		return ret_errno(-EPERM);
	err = key_ok(map, key);
	if (!err && !value)
		err = -EFAULT;
	if (err)
		return ret_errno(err);
	/* staged, so the caller's buffer is written only with a whole value on success */
	if (h->vsize > sizeof(small)) {
		buf = malloc(h->vsize);
		if (!buf)
			return ret_errno(-ENOMEM);
	}
	err = brt_map_sys_lookup(map, key, buf, 0);
	if (!err && h->vsize == 8) /* the common counter: no call to memcpy() */
		memcpy(value, buf, 8);
	else if (!err)
		memcpy(value, buf, h->vsize);
	if (buf != small)
		free(buf);
	return ret_errno(err);
}

int bpfrt_map_handle_update(const struct bpfrt_map_handle *h, const void *key,
			    const void *value, uint64_t flags)
{
	struct brt_map *map = h->map;
	int err;

	if (!can_write(h))
		return ret_errno(-EPERM);
	/* no BTF, so no value has a bpf_spin_lock to honour BPF_F_LOCK with */
	if (flags & BPF_F_LOCK)
		return ret_errno(-EINVAL);
	err = key_ok(map, key);
	if (!err && !value)
		err = -EFAULT;
	if (err)
		return ret_errno(err);
	return ret_errno(brt_map_sys_update(map, key, value, flags));
}

int bpfrt_map_handle_delete(const struct bpfrt_map_handle *h, const void *key)
{
	struct brt_map *map = h->map;
	int err;

	if (!can_write(h))
		return ret_errno(-EPERM);
	err = key_ok(map, key);
	if (err)
		return ret_errno(err);
	return ret_errno(brt_map_sys_delete(map, key));
}
