/* xproc.h - the plumbing of the cross-process differential tests (ids_cross_oracle,
 * holds_oracle): a child forked with a pipe each way, steps sent as bytes and answered,
 * whole-buffer reads and writes that end the child (exit 3) when the other side is gone.
 */
#ifndef BPFRT_TESTS_API_XPROC_H
#define BPFRT_TESTS_API_XPROC_H

#include <sys/types.h>
#include <unistd.h>

static inline void put(int fd, const void *buf, size_t n)
{
	if (write(fd, buf, n) != (ssize_t)n)
		_exit(3);
}

static inline void get(int fd, void *buf, size_t n)
{
	if (read(fd, buf, n) != (ssize_t)n)
		_exit(3);
}

/* fork with two pipes: 0 in the child (*to: where it reads, *from: where it writes), the
 * child's pid in the parent (*to: write to the child, *from: read from it), -1 */
static inline pid_t spawn(int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	*to = *from = -1;
	if (pipe(a) || pipe(b))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		*to = a[0];
		*from = b[1];
		return 0;
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

/* a step for the child: send c, wait for its one-byte answer */
static inline void tell(int to, int from, char c)
{
	char ack;

	put(to, &c, 1);
	get(from, &ack, 1);
}

#endif
