/* pin.c - BPF_OBJ_PIN, BPF_OBJ_GET and BPF_MAP_GET_FD_BY_ID.  An object is an unnamed
 * file in the bpffs-like directory ($BPFRT_FS, default /dev/shm/bpfrt), so pinning is
 * linkat() of the fd to a name there and getting is open() of that name: the pinned file
 * keeps the object alive after every fd is closed, and unlink() (rm) unpins it, as on
 * bpffs.  A pinned program keeps its maps alive the same way (prog_file.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/link_rec.h"
#include "maps/maps.h"
#include "util/util.h"

static int copy_path(struct brt_call *call, uint64_t upath, char *path, size_t cap)
{
	int len = call->ua->str(path, upath, cap);

	if (len < 0)
		return len;
	return len ? 0 : -ENOENT;
}

/* The last directory found inside the bpffs directory, and both as stat() saw them.
 * `bpfrt prog loadall` pins every program of an object in one directory (and a loader
 * pins its maps in one): the two realpath() walks of the check (a readlink and a stat per
 * path component: ~20 system calls a pin) run once per directory, and afterwards one stat
 * of each confirms the same directories.  What that lets through (the directory renamed
 * out of the bpffs directory since) needs write access to the bpffs directory, which only
 * its owner has (brt_fs_dir_prepare() checks), as fs.c's trust cache accepts.  Within one
 * batch (api.h: one `prog loadall`) a directory confirmed so, and the bpffs directory's
 * trust with it, is not stat()ed again: three stats a pin, while the batch's object
 * creations check the bpffs directory once (obj.c). */
static pthread_mutex_t in_fs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char dir[PATH_MAX], fs[PATH_MAX];
	dev_t dir_dev, fs_dev;
	ino_t dir_ino, fs_ino;
	uint64_t batch; /* the batch (obj.h) that confirmed both and the trust; 0: none */
} in_fs_last;

/* path's directory as in_fs() names it */
static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, cap, ".");
	else
		snprintf(dir, cap, "%.*s", (int)(slash - path + (slash == path)), path);
}

/* Did the calling thread's batch confirm path's directory and the bpffs directory's
 * trust already (set_batch_confirmed())? */
static bool batch_confirmed(const char *path)
{
	uint64_t batch = brt_obj_batch_id();
	char dir[PATH_MAX];
	bool same;

	if (!batch)
		return false;
	dir_of(path, dir, sizeof(dir));
	pthread_mutex_lock(&in_fs_lock);
	same = in_fs_last.batch == batch && !strcmp(in_fs_last.dir, dir) &&
	       !strcmp(in_fs_last.fs, brt_obj_fs_dir());
	pthread_mutex_unlock(&in_fs_lock);
	return same;
}

static void set_batch_confirmed(const char *path)
{
	uint64_t batch = brt_obj_batch_id();
	char dir[PATH_MAX];

	dir_of(path, dir, sizeof(dir));
	pthread_mutex_lock(&in_fs_lock);
	/* only when in_fs() remembered this very pair (absolute, stat()ed unchanged) */
	if (!strcmp(in_fs_last.dir, dir) && !strcmp(in_fs_last.fs, brt_obj_fs_dir()))
		in_fs_last.batch = batch;
	pthread_mutex_unlock(&in_fs_lock);
}

/* Are dir and fs (as stat() saw them: dst, fst) the pair in_fs() remembered? */
static bool in_fs_known(const char *dir, const char *fs, const struct stat *dst,
			const struct stat *fst)
{
	bool same;

	pthread_mutex_lock(&in_fs_lock);
	same = !strcmp(in_fs_last.dir, dir) && !strcmp(in_fs_last.fs, fs) &&
	       in_fs_last.dir_dev == dst->st_dev && in_fs_last.dir_ino == dst->st_ino &&
	       in_fs_last.fs_dev == fst->st_dev && in_fs_last.fs_ino == fst->st_ino;
	pthread_mutex_unlock(&in_fs_lock);
	return same;
}

static void remember(const char *dir, const char *fs, const struct stat *dst,
		     const struct stat *fst)
{
	pthread_mutex_lock(&in_fs_lock);
	snprintf(in_fs_last.dir, sizeof(in_fs_last.dir), "%s", dir);
	snprintf(in_fs_last.fs, sizeof(in_fs_last.fs), "%s", fs);
	in_fs_last.dir_dev = dst->st_dev;
	in_fs_last.dir_ino = dst->st_ino;
	in_fs_last.fs_dev = fst->st_dev;
	in_fs_last.fs_ino = fst->st_ino;
	in_fs_last.batch = 0; /* a new pair: its batch confirms it after the trust */
	pthread_mutex_unlock(&in_fs_lock);
}

/* Is dir the bpffs directory fs spelled out, then directories that are no symlinks
 * ("fs/a/b": a and b real directories, no "." or "..")?  Then it lies below fs wherever
 * fs resolves to, told by an lstat() a component where the two realpath() walks cost a
 * readlink() per component of each (~13 system calls at a process's first pin, #17
 * item 3).  False when it cannot be told so (the walks decide); dst: what the last
 * lstat() saw, dir itself. */
static bool below_fs_plainly(const char *dir, const char *fs, struct stat *dst)
{
	size_t len = strlen(fs);
	char part[PATH_MAX];
	const char *c, *end;

	if (!len || fs[len - 1] == '/' || strncmp(dir, fs, len) || dir[len] != '/' ||
	    strlen(dir) >= sizeof(part))
		return false;
	for (c = dir + len; *c; c = end) {
		c++; /* the slash */
		end = strchr(c, '/');
		if (!end)
			end = c + strlen(c);
		if (end == c || (end - c == 1 && c[0] == '.') ||
		    (end - c == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		memcpy(part, dir, (size_t)(end - dir));
		part[end - dir] = '\0';
		if (lstat(part, dst) || !S_ISDIR(dst->st_mode))
			return false;
	}
	return true;
}

/* Is path's directory the bpffs directory or below it?  1 or 0, or -errno when that
 * directory does not resolve. */
static int in_fs(const char *path)
{
	char dir[PATH_MAX], real_dir[PATH_MAX], real_fs[PATH_MAX];
	const char *fs = brt_obj_fs_dir();
	struct stat dst, fst, a, b;
	bool stated;
	size_t len;
	int in;

	dir_of(path, dir, sizeof(dir));
	/* absolute paths only (a relative one depends on the working directory); dst and
	 * fst are what stat() saw before the walks */
	stated = strlen(dir) < sizeof(in_fs_last.dir) && strlen(fs) < sizeof(in_fs_last.fs) &&
		 dir[0] == '/' && !stat(dir, &dst);
	/* a pin in the bpffs directory itself (a loader's maps pinned by name): one stat */
	if (stated && !strcmp(dir, fs))
		fst = dst;
	else if (stated)
		stated = !stat(fs, &fst);
	if (stated && in_fs_known(dir, fs, &dst, &fst))
		return 1;
	if (stated && !strcmp(dir, fs)) {
		remember(dir, fs, &dst, &fst);
		return 1;
	}
	if (stated && below_fs_plainly(dir, fs, &a)) {
		if (a.st_dev == dst.st_dev && a.st_ino == dst.st_ino)
			remember(dir, fs, &dst, &fst);
		return 1;
	}
	if (!realpath(dir, real_dir))
		return -errno;
	if (!realpath(fs, real_fs))
		return 0;
	len = strlen(real_fs);
	in = !strncmp(real_dir, real_fs, len) && (!real_dir[len] || real_dir[len] == '/');
	/* remembered only when stat() sees the same directories after the walks as before
	 * them (nothing swapped in between) */
	if (in && stated && !stat(dir, &a) && !stat(fs, &b) && a.st_dev == dst.st_dev &&
	    a.st_ino == dst.st_ino && b.st_dev == fst.st_dev && b.st_ino == fst.st_ino)
		remember(dir, fs, &dst, &fst);
	return in;
}

/* The path's directory must be the bpffs directory or below it (the kernel answers EPERM
 * for a pin outside bpffs), and that directory must be trusted: another user's could
 * swap or read whatever is pinned there (EACCES, with a message). */
static int inside_fs(const char *path)
{
	int in;

	if (batch_confirmed(path))
		return 0;
	in = in_fs(path);
	if (in <= 0)
		return in ? in : -EPERM;
	if (brt_fs_dir_prepare(brt_obj_fs_dir()))
		return -EACCES;
	if (brt_obj_batch_id())
		set_batch_confirmed(path);
	return 0;
}

/* BPF_OBJ_GET of a path in the bpffs directory when that directory is not trusted:
 * -EACCES with a message, as nothing found there can be.  Paths elsewhere are opened as
 * before (their directory is the caller's choice).  A loader asks for each map it pins
 * by name (ENOENT, then it creates and pins the map: Cilium's objects, ~40 maps): the
 * batch's confirmation of the directory, or the trust remembered for the bpffs directory,
 * saves the full check (a readlink and a stat per path component) per map. */
static int get_dir_ok(const char *path)
{
	char why[PATH_MAX + 160];

	if (batch_confirmed(path) || in_fs(path) <= 0)
		return 0;
	if (!brt_fs_dir_trusted(brt_obj_fs_dir(), why, sizeof(why))) {
		/* the batch's later gets and pins there: no stat (inside_fs()) */
		if (brt_obj_batch_id())
			set_batch_confirmed(path);
		return 0;
	}
	brt_print(BPFRT_WARN, "bpfrt: BPF_OBJ_GET %s: refusing the bpffs directory: %s\n",
		  path, why);
	return -EACCES;
}

/* Is fd a link another process can see (api/link_rec.c)? */
static int is_link(int fd)
{
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec r;

	return !brt_link_rec_of_fd(fd, &r, name);
}

int brt_cmd_obj_pin(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	struct brt_pin_links links = { .lock = -1, .dir = -1 };
	char path[PATH_MAX];
	struct brt_obj *obj;
	int err;

	if (attr->file_flags)
		return -EINVAL;
	/* the pin's name keeps the file alive: a program loaded in a batch (a private
	 * copy, obj.h) is not mapped for it (an mmap, and the munmap at the exit, a pin) */
	err = brt_obj_from_fd_transient((int)attr->bpf_fd, 0, &obj);
	if (err && is_link((int)attr->bpf_fd)) {
		/* bpffs keeps a pinned link attached after its process exits; a bpfrt link
		 * runs on a thread of the process that made it, so it cannot: refused loudly
		 * rather than pinned in name only */
		brt_print(BPFRT_WARN, "bpfrt: BPF_OBJ_PIN of a link: not supported (a bpfrt "
			  "link runs in the process that attached it and cannot outlive it)\n");
		return -EINVAL;
	}
	if (err)
		return err;
	/* bpffs holds maps and programs */
	err = obj->kind != BRT_OBJ_MAP && obj->kind != BRT_OBJ_PROG ? -EINVAL : 0;
	if (!err)
		err = copy_path(call, attr->pathname, path, sizeof(path));
	if (err)
		goto out_put;
	err = inside_fs(path);
	if (err)
		goto out_put;
	/* A program received from another process and never used here is built first, to
	 * know its maps; when that fails the pin goes on without linking them (they may
	 * still be linked from an earlier pin).  prog_file.c never calls back into prog.c. */
	if (obj->kind == BRT_OBJ_PROG && !brt_prog_materialise((struct brt_prog *)(void *)obj))
		brt_prog_file_pin_begin((struct brt_prog *)(void *)obj, &links);
	err = brt_fs_link_fd((int)attr->bpf_fd, AT_FDCWD, path);
	if (err == -EXDEV)
		err = -EPERM;
	brt_prog_file_pin_end(&links, (int)attr->bpf_fd, (uint64_t)obj->ino, !err);
	/* a pinned map of maps keeps its entries past this process, as it does in the
	 * kernel (mim_links.c) */
	if (!err && obj->kind == BRT_OBJ_MAP) {
		brt_obj_note_name(obj, path);
		brt_map_in_map_named(brt_map_of(obj));
	}
	/* so does one a pinned program names (its link in .bpfrt-maps names it): what this
	 * process stored in it before is linked now, as at a pin of the outer map itself */
	if (!err && obj->kind == BRT_OBJ_PROG) {
		const struct brt_prog *prog = (const struct brt_prog *)(void *)obj;

		for (uint32_t i = 0; i < prog->pm.n; i++)
			brt_map_in_map_named(prog->pm.maps[i]);
	}
out_put:
	brt_obj_put(obj);
	return err;
}

/* The same file as fd with another access mode (fd is closed): -errno on failure. */
static int reopen(int fd, int mode)
{
	char proc[64];
	int nfd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	nfd = open(proc, mode | O_CLOEXEC);
	if (nfd < 0)
		nfd = -errno;
	brt_obj_batch_forget(fd); /* resolved, then closed here: a number free again */
	close(fd);
	return nfd;
}

/* fd (a program's, opened read-only or write-only) reopened read-write when the user may,
 * else fd itself */
static int reopen_rw(int fd)
{
	char proc[64];
	int nfd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	nfd = open(proc, O_RDWR | O_CLOEXEC);
	if (nfd < 0)
		return fd;
	brt_obj_batch_forget(fd); /* resolved, then closed here: a number free again */
	close(fd);
	return nfd;
}

int brt_cmd_obj_get(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	char path[PATH_MAX];
	struct brt_obj *obj;
	struct stat st;
	int err, fd, mode;

	if (attr->bpf_fd || (attr->file_flags & ~(uint32_t)(BPF_F_RDONLY | BPF_F_WRONLY)) ||
	    (attr->file_flags & BPF_F_RDONLY && attr->file_flags & BPF_F_WRONLY))
		return -EINVAL;
	err = copy_path(call, attr->pathname, path, sizeof(path));
	if (err)
		return err;
	err = get_dir_ok(path);
	if (err)
		return err;
	/* symlinks followed as bpffs does; anything but a regular file (a directory, a FIFO
	 * someone left there) is -EACCES like a bpffs directory, and never opened.  Opened
	 * with the access the flags ask for and no more, as the kernel's bpf_obj_do_get()
	 * checks the pin's permissions: a user who may only read the pin gets a read-only
	 * fd (BPF_F_RDONLY), and this process's mapping of the file is then read-only too
	 * (obj.h's ro; docs/SECURITY.md). */
	mode = attr->file_flags & BPF_F_RDONLY ? O_RDONLY :
	       attr->file_flags & BPF_F_WRONLY ? O_WRONLY : O_RDWR;
	fd = brt_fs_open_reg_st(AT_FDCWD, path, mode, 1, &st);
	if (fd < 0)
		return fd;
	/* the file as stat() saw it before opening it (the same inode) */
	err = brt_obj_from_opened(fd, mode == O_RDWR, &st, &obj);
	if (err) {
		close(fd);
		return err == -EBADF ? -EBADF : -EACCES;
	}
	/* A map fd's mode is what BPF_F_RDONLY / BPF_F_WRONLY grant, as on bpffs.  A
	 * program fd has no mode there (bpf_prog_new_fd() makes it read-write): ours is the
	 * file reopened read-write when the user may, else left as opened (nothing bpf()
	 * does with a program fd asks its mode). */
	if (obj->kind == BRT_OBJ_MAP)
		brt_obj_note_name(obj, path);
	if (obj->kind == BRT_OBJ_MAP && attr->file_flags &&
	    !atomic_load_explicit(&obj->ro, memory_order_acquire))
		atomic_store_explicit(&obj->hdr->restricted, 1, memory_order_release);
	if (obj->kind == BRT_OBJ_PROG && mode != O_RDWR)
		fd = reopen_rw(fd);
	/* A program loaded by another process is rebuilt here now, as the kernel's fd is
	 * runnable at once; when that fails (a map gone), using it reports why. */
	if (obj->kind == BRT_OBJ_PROG)
		brt_prog_materialise((struct brt_prog *)(void *)obj);
	brt_obj_put(obj);
	return fd;
}

/* A map is found by id first where a pinned program names it or where it is pinned
 * itself (prog_file.c), then wherever a process holds it (ids.c). */
int brt_cmd_map_get_fd_by_id(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	uint32_t flags = attr->open_flags;
	struct brt_obj *obj;
	int fd, err;

	if ((flags & ~(uint32_t)(BPF_F_RDONLY | BPF_F_WRONLY)) ||
	    (flags & BPF_F_RDONLY && flags & BPF_F_WRONLY))
		return -EINVAL;
	if (!brt_api_sys_admin())
		return -EPERM;
	fd = brt_prog_file_find_map(attr->map_id);
	if (fd < 0)
		fd = brt_ids_open(BRT_OBJ_MAP, attr->map_id);
	if (fd < 0)
		return fd;
	brt_obj_batch_forget(fd); /* a number the batch may know from an fd closed since */
	err = brt_obj_from_fd(fd, BRT_OBJ_MAP, &obj);
	if (err) {
		brt_obj_batch_forget(fd); /* memoized though of another kind */
		close(fd);
		return -ENOENT;
	}
	if (flags) {
		atomic_store_explicit(&obj->hdr->restricted, 1, memory_order_release);
		fd = reopen(fd, flags & BPF_F_RDONLY ? O_RDONLY : O_WRONLY);
	}
	brt_obj_put(obj);
	return fd;
}
