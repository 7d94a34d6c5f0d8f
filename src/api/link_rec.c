/* link_rec.c - links other processes can see: BPF_LINK_GET_NEXT_ID, BPF_LINK_GET_FD_BY_ID,
 * OBJ_GET_INFO_BY_FD and BPF_LINK_DETACH of a link made by another process (bpftool link
 * show|list|detach).  A link is one end of a socketpair whose other end a thread of the
 * process that made it waits on (api/link.c), so no file names it; the process therefore
 * writes a record, $BPFRT_FS/.bpfrt-links/<id>, saying what the kernel's bpf_link_info
 * would (type, program id, tracepoint name, probe path and offset, interface) and where
 * the link lives: its pid, its fd of the runtime's end (peer) with that socket's inode,
 * and the inode of the end handed out.  The link thread removes the record when it stops.
 *
 * Records are read as untrusted bytes (brt_link_rec_parse()): another user's process may
 * scribble or plant one.  A reader trusts a record only when its file belongs to root
 * or to the process it names, and only while that process still holds the peer socket
 * at that fd (readlink of /proc/PID/fd/N): a process that died, exec'd or detached
 * leaves a stale record, which the reader removes (reaping) when it may.  An fd of the
 * link for another process is a dup of the handed-out end taken with pidfd_getfd() from
 * a process that holds it (what ptrace attach allows: root), so it keeps the link
 * attached as the kernel's fd does; a detach from another process writes one byte on
 * it, which the link thread takes as its stop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/link_rec.h"
#include "obj/obj.h"
#include "util/util.h"

#define REC_DIR ".bpfrt-links"
#define REC_MAX (sizeof(struct brt_link_rec) + BRT_LINK_REC_NAME_MAX)

int brt_link_rec_parse(const void *buf, size_t len, struct brt_link_rec *out,
		       const char **name)
{
	const char *s;

	if (len < sizeof(*out) || len > REC_MAX)
		return -EINVAL;
	memcpy(out, buf, sizeof(*out));
	if (out->magic != BRT_LINK_REC_MAGIC || out->version != BRT_LINK_REC_VERSION ||
	    out->size != len || out->name_len != len - sizeof(*out) || !out->id ||
	    out->owner <= 0 || out->peer_fd < 0 || (out->flags & ~BRT_LINK_REC_DETACHED))
		return -EINVAL;
	switch (out->type) {
	case BRT_LINK_RAW_TRACEPOINT:
	case BRT_LINK_XDP:
	case BRT_LINK_TCX:
		break;
	case BRT_LINK_PERF_EVENT:
		if (out->perf_type < BRT_PERF_UPROBE || out->perf_type > BRT_PERF_TRACEPOINT)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	*name = NULL;
	if (!out->name_len)
		return 0;
	s = (const char *)buf + sizeof(*out);
	/* one NUL, at the end: the name is a C string of name_len - 1 bytes */
	if (s[out->name_len - 1] || memchr(s, '\0', out->name_len - 1))
		return -EINVAL;
	*name = s;
	return 0;
}

int brt_link_rec_fill(const struct brt_link_rec *r, const char *name,
		      struct brt_link_kinfo *info, uint64_t *ubuf, uint32_t *ulen)
{
	uint32_t len = name ? (uint32_t)strlen(name) + 1 : 1;

	info->type = r->type;
	info->id = r->id;
	info->prog_id = r->prog_id;
	*ubuf = 0;
	*ulen = 0;
	switch (r->type) {
	case BRT_LINK_RAW_TRACEPOINT:
		/* bpf_raw_tp_link_fill_link_info() */
		*ubuf = info->raw_tp.tp_name;
		*ulen = info->raw_tp.tp_name_len;
		if (!*ulen != !*ubuf)
			return -EINVAL;
		info->raw_tp.tp_name_len = len;
		info->raw_tp.cookie = r->cookie;
		return 0;
	case BRT_LINK_XDP:
		info->xdp.ifindex = r->ifindex;
		return 0;
	case BRT_LINK_TCX:
		info->tcx.ifindex = r->ifindex;
		info->tcx.attach_type = r->attach_type;
		return 0;
	default:
		break;
	}
	/* bpf_perf_link_fill_*(): the name's pointer and length sit at the same place in
	 * the uprobe, kprobe and tracepoint members */
	*ubuf = info->perf_event.uprobe.file_name;
	*ulen = info->perf_event.uprobe.name_len;
	if (!*ulen != !*ubuf)
		return -EINVAL;
	info->perf_event.type = r->perf_type;
	switch (r->perf_type) {
	case BRT_PERF_TRACEPOINT:
		info->perf_event.tracepoint.name_len = len;
		info->perf_event.tracepoint.cookie = r->cookie;
		break;
	case BRT_PERF_UPROBE:
	case BRT_PERF_URETPROBE:
		info->perf_event.uprobe.name_len = len;
		info->perf_event.uprobe.offset = (uint32_t)r->offset;
		info->perf_event.uprobe.cookie = r->cookie;
		info->perf_event.uprobe.ref_ctr_offset = r->addr;
		break;
	default:
		info->perf_event.kprobe.name_len = len;
		info->perf_event.kprobe.offset = (uint32_t)r->offset;
		info->perf_event.kprobe.addr = r->addr;
		info->perf_event.kprobe.missed = 0;
		info->perf_event.kprobe.cookie = r->cookie;
		break;
	}
	return 0;
}

/* The records' directory, created (mode 1777: any user's process may publish its links,
 * only its owner and root remove a record) when create is set: an O_DIRECTORY fd, or
 * -errno.  It must be root's or ours, and sticky if others may write it. */
static int rec_dir(int create)
{
	const char *fs = brt_obj_fs_dir();
	struct stat st;
	int dfd, fd;

	if (create && brt_fs_dir_prepare(fs))
		return -ENOENT;
	dfd = open(fs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (create && !mkdirat(dfd, REC_DIR, 0700)) {
		fd = openat(dfd, REC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			(void)!fchmod(fd, 01777);
		if (fd >= 0)
			close(fd);
	}
	fd = openat(dfd, REC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (st.st_uid && st.st_uid != geteuid()) ||
	    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* Store record r (and its name) under its id: written whole under a temporary name,
 * then renamed over the old one, so a reader never sees half of it. */
static int rec_store(const struct brt_link_rec *r, const char *name)
{
	char buf[REC_MAX], tmp[64], final[16];
	int dfd, fd, err = 0;

	memcpy(buf, r, sizeof(*r));
	if (r->name_len)
		memcpy(buf + sizeof(*r), name, r->name_len);
	dfd = rec_dir(1);
	if (dfd < 0)
		return dfd;
	snprintf(tmp, sizeof(tmp), ".new-%u-%d", r->id, (int)r->owner);
	snprintf(final, sizeof(final), "%u", r->id);
	/* the owner's alone to read, as link ids are CAP_SYS_ADMIN's (root reads any) */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
	} else {
		if (write(fd, buf, r->size) != (ssize_t)r->size)
			err = -EIO;
		close(fd);
		if (!err && renameat(dfd, tmp, dfd, final))
			err = -errno;
		if (err)
			unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return err;
}

int brt_link_rec_write(const struct brt_link_desc *d, uint32_t id, uint32_t prog_id,
		       int peer_fd, uint64_t peer_ino, uint64_t user_ino)
{
	size_t nlen = d->name ? strlen(d->name) + 1 : 0;
	struct brt_link_rec r;

	if (nlen > BRT_LINK_REC_NAME_MAX)
		nlen = 0; /* longer than any path: kept without its name */
	memset(&r, 0, sizeof(r));
	r.magic = BRT_LINK_REC_MAGIC;
	r.version = BRT_LINK_REC_VERSION;
	r.size = (uint32_t)(sizeof(r) + nlen);
	r.id = id;
	r.type = d->type;
	r.prog_id = prog_id;
	r.attach_type = d->attach_type;
	r.owner = getpid();
	r.peer_fd = peer_fd;
	r.peer_ino = peer_ino;
	r.user_ino = user_ino;
	r.perf_type = d->perf_type;
	r.ifindex = d->ifindex;
	r.offset = d->offset;
	r.addr = d->addr;
	r.cookie = d->cookie;
	r.name_len = (uint32_t)nlen;
	return rec_store(&r, d->name);
}

/* Read record id from dfd into *r (name into name[BRT_LINK_REC_NAME_MAX], "" when none):
 * 0, or -errno; *uid the file's owner. */
static int rec_read(int dfd, uint32_t id, struct brt_link_rec *r, char *name, uid_t *uid)
{
	char fname[16], *buf;
	const char *n;
	struct stat st;
	ssize_t got;
	int fd, err;

	snprintf(fname, sizeof(fname), "%u", id);
	fd = brt_fs_open_reg(dfd, fname, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*r) || st.st_size > (off_t)REC_MAX ||
	    (st.st_uid && st.st_uid != geteuid() && geteuid())) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc(REC_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	got = pread(fd, buf, REC_MAX, 0);
	close(fd);
	err = got < 0 ? -errno : brt_link_rec_parse(buf, (size_t)got, r, &n);
	if (!err && r->id != id)
		err = -EINVAL;
	if (!err)
		snprintf(name, BRT_LINK_REC_NAME_MAX, "%s", n ? n : "");
	free(buf);
	*uid = st.st_uid;
	return err;
}

static int find_fd(const char *pid, uint64_t ino);

/* Is the link running (or detached but held): 1, 0 (its process is gone, exec'd or
 * closed it: stale), or -1 when this process cannot tell (another user's process, /proc
 * hidden). */
static int rec_live(const struct brt_link_rec *r, uid_t file_uid)
{
	char path[64], want[48], got[48];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d", (int)r->owner);
	if (stat(path, &st))
		return errno == ENOENT ? 0 : -1;
	/* a record names a process of the user who wrote it (root's may name any) */
	if (file_uid && st.st_uid != file_uid)
		return 0;
	if (r->flags & BRT_LINK_REC_DETACHED) {
		snprintf(path, sizeof(path), "%d", (int)r->owner);
		return find_fd(path, r->user_ino) >= 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)r->owner, (int)r->peer_fd);
	n = readlinkat(AT_FDCWD, path, got, sizeof(got) - 1);
	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	got[n] = '\0';
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)r->peer_ino);
	return !strcmp(got, want);
}

/* Remove stale record id (what the reader may remove: errors ignored). */
static void reap(int dfd, uint32_t id)
{
	char fname[16];

	snprintf(fname, sizeof(fname), "%u", id);
	unlinkat(dfd, fname, 0);
}

/* Is record id this process's link peer_ino's (into *r and name)?  After the ids wrapped,
 * the name may be another link's. */
static int own_rec(int dfd, uint32_t id, uint64_t peer_ino, struct brt_link_rec *r,
		   char name[BRT_LINK_REC_NAME_MAX])
{
	uid_t uid;

	return !rec_read(dfd, id, r, name, &uid) && r->peer_ino == peer_ino &&
	       r->owner == getpid();
}

void brt_link_rec_remove(uint32_t id, uint64_t peer_ino)
{
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec r;
	int dfd = rec_dir(0);

	if (dfd < 0)
		return;
	if (own_rec(dfd, id, peer_ino, &r, name))
		reap(dfd, id);
	close(dfd);
}

void brt_link_rec_detached(uint32_t id, uint64_t peer_ino)
{
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec r;
	int dfd = rec_dir(0);

	if (dfd < 0)
		return;
	if (own_rec(dfd, id, peer_ino, &r, name)) {
		/* the kernel's detached XDP and tcx links name no interface */
		r.flags |= BRT_LINK_REC_DETACHED;
		r.ifindex = 0;
		if (rec_store(&r, name))
			reap(dfd, id);
	}
	close(dfd);
}

/* The ids named in the directory, ascending: *ids (malloc'd) and their count. */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static size_t list_ids(int dfd, uint32_t **ids)
{
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd = dup(dfd);

	*ids = NULL;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long v;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		errno = 0;
		v = strtoul(de->d_name, &end, 10);
		if (*end || errno || !v || v > UINT32_MAX)
			continue;
		if (n == cap) {
			uint32_t *m = realloc(*ids, (cap = cap ? 2 * cap : 32) * sizeof(**ids));

			if (!m)
				break;
			*ids = m;
		}
		(*ids)[n++] = (uint32_t)v;
	}
	closedir(d);
	if (n)
		qsort(*ids, n, sizeof(**ids), cmp_u32);
	return n;
}

/* A live record: 0 with *r and name, -ENOENT (none, stale: reaped) or -EINVAL. */
static int rec_get(int dfd, uint32_t id, struct brt_link_rec *r, char *name)
{
	uid_t uid;
	int err = rec_read(dfd, id, r, name, &uid), live;

	if (err)
		return err == -ENOENT ? -ENOENT : -EINVAL;
	live = rec_live(r, uid);
	if (!live)
		reap(dfd, id);
	return live ? 0 : -ENOENT;
}

int brt_link_rec_next_id(uint32_t min, uint32_t *out)
{
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec r;
	uint32_t *ids;
	size_t n;
	int dfd = rec_dir(0), err = -ENOENT;

	if (dfd < 0)
		return -ENOENT;
	n = list_ids(dfd, &ids);
	for (size_t i = 0; i < n && err; i++)
		if (ids[i] >= min && !rec_get(dfd, ids[i], &r, name)) {
			*out = ids[i];
			err = 0;
		}
	free(ids);
	close(dfd);
	return err;
}

/* The live record of link id (0: the one whose handed-out socket is user_ino). */
int brt_link_rec_find(uint32_t id, uint64_t user_ino, struct brt_link_rec *r, char *name)
{
	uint32_t *ids;
	size_t n;
	int dfd = rec_dir(0), err = -ENOENT;

	if (dfd < 0)
		return -ENOENT;
	if (id) {
		err = rec_get(dfd, id, r, name);
	} else {
		n = list_ids(dfd, &ids);
		for (size_t i = 0; i < n && err; i++)
			if (!rec_get(dfd, ids[i], r, name) && r->user_ino == user_ino)
				err = 0;
		free(ids);
	}
	close(dfd);
	return err ? -ENOENT : 0;
}

/* The number of pid's fd on socket inode ino, or -1. */
static int find_fd(const char *pid, uint64_t ino)
{
	char dir[64], want[48], got[48];
	struct dirent *de;
	int found = -1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)ino);
	d = opendir(dir);
	while (d && found < 0 && (de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, got, sizeof(got) - 1);

		if (n <= 0)
			continue;
		got[n] = '\0';
		if (!strcmp(got, want))
			found = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* A dup of pid's fd (O_CLOEXEC) when it still is socket ino, or -1. */
static int grab(int pid, int fd, uint64_t ino)
{
	struct stat st;
	int pfd, got;

	if (pid == getpid()) {
		got = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	} else {
		pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pfd < 0)
			return -1;
		got = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
		close(pfd);
	}
	if (got >= 0 && (fstat(got, &st) || !S_ISSOCK(st.st_mode) || st.st_ino != ino)) {
		close(got);
		got = -1;
	}
	return got;
}

int brt_link_rec_open(uint32_t id)
{
	char name[BRT_LINK_REC_NAME_MAX], pid[16];
	struct brt_link_rec r;
	struct dirent *de;
	int fd = -1, n;
	DIR *d;

	if (brt_link_rec_find(id, 0, &r, name))
		return -ENOENT;
	/* the process running the link most likely holds a handed-out fd; else whoever
	 * got one (fork, SCM_RIGHTS) */
	snprintf(pid, sizeof(pid), "%d", (int)r.owner);
	n = find_fd(pid, r.user_ino);
	if (n >= 0)
		fd = grab(r.owner, n, r.user_ino);
	d = fd < 0 ? opendir("/proc") : NULL;
	while (d && fd < 0 && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == r.owner)
			continue;
		n = find_fd(de->d_name, r.user_ino);
		if (n >= 0)
			fd = grab(atoi(de->d_name), n, r.user_ino);
	}
	if (d)
		closedir(d);
	return fd >= 0 ? fd : -ENOENT;
}

/* The record of the link behind fd (a socket), or -ENOENT. */
int brt_link_rec_of_fd(int fd, struct brt_link_rec *r, char *name)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(type), dlen = sizeof(domain);
	struct stat st;

	/* only a Unix seqpacket socket can be a link: the preload asks this of every fd
	 * it must classify (epoll, readlink), sockets of a network program included */
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) || domain != AF_UNIX)
		return -ENOENT;
	return brt_link_rec_find(0, st.st_ino, r, name);
}

int brt_link_rec_detach_remote(int fd, const struct brt_link_rec *r)
{
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec now;
	int type = 0;
	socklen_t len = sizeof(type);

	/* a byte on a socket: only on the kind of socket a link is */
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET)
		return -EINVAL;
	if (send(fd, "d", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		return -errno;
	/* detached when the link thread has removed its record (the kernel's detach is
	 * synchronous); a thread that does not answer within 2 s is left to finish */
	for (int i = 0; i < 400; i++) {
		if (brt_link_rec_find(r->id, 0, &now, name) || now.peer_ino != r->peer_ino ||
		    (now.flags & BRT_LINK_REC_DETACHED))
			return 0;
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	return 0;
}
