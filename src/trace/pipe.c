/* pipe.c - the trace pipe: where bpf_trace_printk() lines go.  The kernel has one ring
 * (tracefs trace_pipe); bpfrt has one append-only file in the bpffs directory
 * ($BPFRT_FS/trace_pipe) shared by every process.  Each line is one write() with
 * O_APPEND, so lines from concurrent writers never interleave; readers (`bpfrt
 * trace-log`) follow the file.  When it passes PIPE_CAP it is emptied, like a ring that
 * wrapped: a follower that sees the file shrink starts again from its beginning.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "maps/maps.h"
#include "trace/trace.h"
#include "util/util.h"

#define PIPE_NAME "trace_pipe"
#define PIPE_CAP (8u << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipe_fd = -1;
static char pipe_path[4096];

int bpfrt_trace_pipe_path(char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" PIPE_NAME, brt_obj_fs_dir());

	if (n < 0 || (size_t)n >= len)
		return -(errno = ENAMETOOLONG);
	return n;
}

/* Open the pipe at path for appending without following a link or opening anything
 * but a regular file of ours (or root's) with one name: another user who controls the
 * name must not get our lines written or cut into a file of their choosing. */
static int open_pipe_file(const char *path)
{
	struct stat st;
	int fd;

	fd = brt_fs_open_reg(AT_FDCWD, path, O_WRONLY | O_APPEND, 0);
	if (fd == -ENOENT) {
		/* O_EXCL: created here, never an existing file or a link's target */
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0644);
		if (fd < 0 && errno == EEXIST)
			fd = brt_fs_open_reg(AT_FDCWD, path, O_WRONLY | O_APPEND, 0);
		else if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		if (fd == -ELOOP || fd == -EACCES)
			brt_print(BPFRT_WARN, "bpfrt: %s: not a regular file of yours (%s); "
				  "trace_printk output dropped\n", path, strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) || (st.st_uid != geteuid() && st.st_uid != 0) || st.st_nlink != 1) {
		brt_print(BPFRT_WARN, "bpfrt: %s: owned by uid %u or linked elsewhere; "
			  "trace_printk output dropped\n", path, (unsigned)st.st_uid);
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* The open pipe for the current $BPFRT_FS (reopened when it changed); lock held. */
static int pipe_open(void)
{
	char path[sizeof(pipe_path)];
	int err = bpfrt_trace_pipe_path(path, sizeof(path));

	if (err < 0)
		return err;
	if (pipe_fd >= 0 && !strcmp(path, pipe_path))
		return pipe_fd;
	if (pipe_fd >= 0)
		close(pipe_fd);
	pipe_fd = -1;
	err = brt_fs_dir_prepare(brt_obj_fs_dir());
	if (err)
		return err;
	err = open_pipe_file(path);
	if (err < 0)
		return err;
	pipe_fd = err;
	memcpy(pipe_path, path, sizeof(path));
	return pipe_fd;
}

int brt_trace_pipe_write(const char *line, size_t len)
{
	struct stat st;
	ssize_t n;
	int fd;

	pthread_mutex_lock(&lock);
	fd = pipe_open();
	/* emptied only when ours: root never cuts a file another user put there */
	if (fd >= 0 && !fstat(fd, &st) && (uint64_t)st.st_size > PIPE_CAP &&
	    st.st_uid == geteuid())
		(void)!ftruncate(fd, 0);
	n = fd >= 0 ? write(fd, line, len) : fd;
	pthread_mutex_unlock(&lock);
	if (fd < 0)
		return fd;
	return n == (ssize_t)len ? 0 : -EIO;
}
