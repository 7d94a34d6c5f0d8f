/* fs.c - paths another user may control: the bpffs-like directory ($BPFRT_FS) and the
 * files in it.  A directory is trusted like XDG_RUNTIME_DIR (or OpenSSH's safe_path):
 * it and every directory above it belong to root or to us, and none can be written by
 * anyone else unless it is sticky (then others cannot rename or remove what is ours).
 * Files in it are opened without following links and without O_CREAT, and only once
 * seen to be regular files.  docs/SECURITY.md has the threat model.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/util.h"

/* Why st (the directory at path, the bpffs directory itself when last) cannot be trusted
 * by euid; NULL when it can. */
static const char *dir_problem(const struct stat *st, int last, uid_t euid, char *buf,
			       size_t len)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != 0 && st->st_uid != euid) {
		snprintf(buf, len, "owned by uid %u, neither root nor you (uid %u)",
			 (unsigned)st->st_uid, (unsigned)euid);
		return buf;
	}
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
		return NULL;
	if (!(st->st_mode & S_ISVTX))
		return "writable by other users and not sticky";
	/* A shared (sticky, world-writable) bpffs directory must be root's: its owner may
	 * remove or rename anyone's pins. */
	if (last && st->st_uid != 0)
		return "shared (writable by other users) but not owned by root";
	return NULL;
}

int brt_fs_dir_check(const char *dir, char *why, size_t len)
{
	char real[PATH_MAX], buf[128];
	const char *problem;
	struct stat st;
	uid_t euid = geteuid();

	if (!realpath(dir, real)) {
		snprintf(why, len, "%s", strerror(errno));
		return -errno;
	}
	/* every ancestor, then the directory: one another user can rename could be swapped
	 * for theirs between the check and the use */
	for (char *p = real + 1;; p++) {
		int last = !*p;
		char c = *p;

		if (*p && *p != '/')
			continue;
		*p = 0;
		if (stat(real[0] ? real : "/", &st)) {
			snprintf(why, len, "%s: %s", real[0] ? real : "/", strerror(errno));
			*p = c;
			return -EACCES;
		}
		problem = dir_problem(&st, last, euid, buf, sizeof(buf));
		if (problem) {
			snprintf(why, len, "%s: %s", real[0] ? real : "/", problem);
			*p = c;
			return -EACCES;
		}
		*p = c;
		if (last)
			return 0;
	}
}

/* Create dir (not there yet) with the mode bpfrt intends whatever the umask: root makes
 * the shared directory, sticky and world-writable like bpffs's root; anyone else a
 * private one, which other users (root included) then refuse. */
static int make_dir(const char *dir)
{
	mode_t mode = geteuid() == 0 ? 01777 : 0700;
	struct stat st;
	int fd;

	if (mkdir(dir, 0700))
		return errno == EEXIST ? 0 : -errno;
	/* ours, made 0700 above: nobody else can have swapped it yet */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != geteuid() || fchmod(fd, mode)) {
		close(fd);
		return -EACCES;
	}
	close(fd);
	return 0;
}

/* A small text file (/proc, /sys) read whole into buf, NUL-terminated: its length (at
 * most cap - 1 bytes, the rest left unread), or -errno; an empty file is -ENODATA, so a
 * caller's "no answer" is one test. */
ssize_t brt_fs_read_text(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	else if (n == 0)
		n = -ENODATA;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* The last directory found trustworthy.  Every map and program is created in it, so the
 * full check (a mkdir, a realpath and a stat per path component: ~10 system calls) runs
 * once per directory; afterwards one stat() confirms it is still the same directory with
 * the same owner and mode.  What the check excludes (another user renaming or replacing a
 * directory on the path) cannot happen later without root or us changing owner or mode
 * of a directory above, which we accept as the kernel accepts bpffs mount changes. */
static pthread_mutex_t trusted_lock = PTHREAD_MUTEX_INITIALIZER;
static char trusted_path[PATH_MAX];
static struct stat trusted_st;

static int still_trusted(const char *dir)
{
	struct stat st;
	int same;

	pthread_mutex_lock(&trusted_lock);
	same = !strcmp(trusted_path, dir);
	pthread_mutex_unlock(&trusted_lock);
	if (!same || stat(dir, &st))
		return 0;
	pthread_mutex_lock(&trusted_lock);
	same = !strcmp(trusted_path, dir) && st.st_dev == trusted_st.st_dev &&
	       st.st_ino == trusted_st.st_ino && st.st_mode == trusted_st.st_mode &&
	       st.st_uid == trusted_st.st_uid;
	pthread_mutex_unlock(&trusted_lock);
	return same;
}

static void remember_trusted(const char *dir)
{
	struct stat st;

	if (strlen(dir) >= sizeof(trusted_path) || stat(dir, &st))
		return;
	pthread_mutex_lock(&trusted_lock);
	snprintf(trusted_path, sizeof(trusted_path), "%s", dir);
	trusted_st = st;
	pthread_mutex_unlock(&trusted_lock);
}

int brt_fs_dir_trusted(const char *dir, char *why, size_t len)
{
	int err;

	if (still_trusted(dir))
		return 0;
	err = brt_fs_dir_check(dir, why, len);
	if (!err)
		remember_trusted(dir);
	return err;
}

int brt_fs_dir_prepare(const char *dir)
{
	static _Thread_local char warned[PATH_MAX];
	char why[PATH_MAX + 160];
	int err;

	if (still_trusted(dir))
		return 0;
	err = make_dir(dir);
	if (!err)
		err = brt_fs_dir_check(dir, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s: %s", dir, strerror(-err));
	if (!err) {
		remember_trusted(dir);
		return 0;
	}
	/* once per directory and thread: object creation falls back to memfds quietly */
	if (strncmp(warned, dir, sizeof(warned))) {
		snprintf(warned, sizeof(warned), "%s", dir);
		/* what to do, not only what is wrong: the usual cause is another user who
		 * made the directory first (squatting), which bpfrt reports, not prevents */
		brt_print(BPFRT_WARN,
			  "bpfrt: refusing %s as the bpffs directory (%s): %s. Until it is "
			  "fixed, maps and programs cannot be pinned or opened there (EACCES). "
			  "Either have %s removed (by root or its owner) and let bpfrt create it "
			  "again (root should create it first, at boot), or set BPFRT_FS to a "
			  "directory of yours, e.g. BPFRT_FS=$XDG_RUNTIME_DIR/bpfrt\n",
			  dir, strerror(-err), why, dir);
	}
	return err;
}

int brt_fs_open_reg(int dirfd, const char *path, int flags, int follow)
{
	struct stat st;

	return brt_fs_open_reg_st(dirfd, path, flags, follow, &st);
}

int brt_fs_open_reg_st(int dirfd, const char *path, int flags, int follow, struct stat *st)
{
	char proc[64];
	int pfd, fd;

	pfd = openat(dirfd, path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		fd = -errno;
	} else if (!S_ISREG(st->st_mode)) {
		fd = -EACCES; /* the kernel's BPF_OBJ_GET of a directory or a non-bpffs file */
	} else {
		/* reopening the O_PATH fd opens exactly the inode checked, with the access
		 * checks of a normal open */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		fd = open(proc, (flags & ~(O_CREAT | O_TRUNC | O_NOFOLLOW)) | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	close(pfd);
	return fd;
}

int brt_fs_link_fd(int fd, int dirfd, const char *path)
{
	char proc[64];

	/* The fd itself first: the /proc path's lookup costs ~2.5 us more (4 against 1.4 on
	 * tmpfs), and a pin makes two links (#17 item 3).  Linux allows it to whoever holds
	 * CAP_DAC_READ_SEARCH or, from 6.10, opened the file with the same credentials; else
	 * ENOENT, as from a kernel before 2.6.39 EINVAL: then the /proc path, which needs
	 * neither (a missing directory answers ENOENT there too). */
	if (!linkat(fd, "", dirfd, path, AT_EMPTY_PATH))
		return 0;
	if (errno != ENOENT && errno != EINVAL && errno != EPERM)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, dirfd, path, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

int brt_dents_start(struct brt_dents *d, int fd)
{
	d->fd = fd;
	d->got = d->at = 0;
	return lseek(fd, 0, SEEK_SET) < 0 ? -errno : 0;
}

const char *brt_dents_next(struct brt_dents *d)
{
	/* the kernel's struct linux_dirent64 */
	struct rec {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};

	for (;;) {
		const struct rec *r;

		if (d->at >= d->got) {
			d->got = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
			d->at = 0;
			if (d->got <= 0)
				return NULL;
		}
		r = (const void *)(d->buf + d->at);
		d->at += r->reclen;
		if (strcmp(r->name, ".") && strcmp(r->name, ".."))
			return r->name;
	}
}

int brt_fs_owned_dir(int fs, const char *name, uid_t uid)
{
	struct stat st;
	int fd = openat(fs, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != uid || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

int brt_fs_owned_dir_lock(int fs, const char *name, int *dirfd)
{
	uid_t uid = geteuid();
	struct stat st;
	int dir, lock;

	/* there already but for a user's first use: opened first, made when missing */
	dir = brt_fs_owned_dir(fs, name, uid);
	if (dir == -ENOENT && !mkdirat(fs, name, 0700)) {
		dir = brt_fs_owned_dir(fs, name, uid);
		if (dir >= 0 && fchmod(dir, 0755)) {
			close(dir);
			dir = -errno;
		}
	} else if (dir == -ENOENT && errno != EEXIST) {
		dir = -errno;
	} else if (dir == -ENOENT) {
		dir = brt_fs_owned_dir(fs, name, uid); /* made by another process meanwhile */
	}
	if (dir < 0)
		return dir == -ENOLCK ? -EACCES : dir;
	lock = openat(dir, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0 || fstat(lock, &st) || st.st_uid != uid || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 077)) {
		if (lock >= 0)
			close(lock);
		close(dir);
		return -ENOLCK;
	}
	while (flock(lock, LOCK_EX)) {
		if (errno != EINTR) {
			close(lock);
			close(dir);
			return -ENOLCK;
		}
	}
	*dirfd = dir;
	return lock;
}
