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
	if (mkdir(brt_obj_fs_dir(), 01777) && errno != EEXIST)
		return -errno;
	pipe_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (pipe_fd < 0)
		return -errno;
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
	if (fd >= 0 && !fstat(fd, &st) && (uint64_t)st.st_size > PIPE_CAP)
		(void)!ftruncate(fd, 0);
	n = fd >= 0 ? write(fd, line, len) : fd;
	pthread_mutex_unlock(&lock);
	if (fd < 0)
		return fd;
	return n == (ssize_t)len ? 0 : -EIO;
}
