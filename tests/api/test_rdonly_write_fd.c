/* test_rdonly_write_fd.c - a map this process maps read-only (BPF_OBJ_GET with
 * BPF_F_RDONLY of a pin it may only read, obj.h's ro) and then reached through an fd
 * that may write its file but cannot be reopened read-write (a write-only fd: the user
 * may not read the file, so the mapping cannot be made writable in place).  Such an fd
 * must be refused (EACCES, as docs/SECURITY.md says of write-only fds bpfrt cannot map),
 * never let an update write the read-only mapping (SIGSEGV: the process crashed).
 * Two ways to such an fd, as uid 65534 in a child:
 * - its own pin, chmod 0200 after a read-only get, then got with BPF_F_WRONLY;
 * - a write-only fd of root's pin that root opened before the child dropped its
 *   privilege (as one received over SCM_RIGHTS), used by a command and by a handle.
 * And the in-place upgrade of a read-only mapping (obj.c's make_writable(), a MAP_FIXED
 * mmap) and a first mapping of a file must map the object's own file: the fd number a
 * command names can name another file by the time its mode is asked or its header read
 * (another thread's dup2()).  Mapping that file made the map read it, and the upgrade
 * wrote the map header's restricted word into it (a file that is no object at all).  As
 * nobody: root's pin got with BPF_F_RDONLY, looked up through one fd number for 3 s
 * while another thread puts a read-write fd of a zeroed file of the user's own and the
 * read-only fd there in turn; afterwards the map reads its value and the file is zeros
 * (a race: it failed 3 runs of 3 before the fix; it cannot pass wrongly).
 * Needs root (skipped otherwise); bpfrt only.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "diff.h"
#include "harness.h"

#define NOBODY 65534

static char fsdir[64];

/* the commands go to bpfrt, the pins in fsdir */
static int path_op(int cmd, int fd, const char *name, uint32_t flags)
{
	return diff_path_op(sys_bpfrt, cmd, fd, fsdir, name, flags);
}

static int elem_op(int cmd, int fd, uint32_t key, uint64_t *value)
{
	return diff_elem_op(sys_bpfrt, cmd, fd, key, value);
}

/* root's array pinned 0644 ("root") and one pinned 0444 owned by nobody ("own") */
static int maker(void)
{
	static const char *const names[] = { "root", "own" };
	char path[128];
	uint64_t v = 0x1234;
	int fd, err = 0;

	for (int i = 0; i < 2; i++) {
		fd = diff_map_new(sys_bpfrt, BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
		snprintf(path, sizeof(path), "%s/%s", fsdir, names[i]);
		if (fd < 0 || elem_op(BPF_MAP_UPDATE_ELEM, fd, 1, &v) ||
		    path_op(BPF_OBJ_PIN, fd, names[i], 0) || chmod(path, i ? 0444 : 0644) ||
		    (i && chown(path, NOBODY, NOBODY)))
			err = 1;
		close(fd);
	}
	return err;
}

/* The answers, as nobody; wfd: a write-only fd of "root" opened by root. */
static void worker(int wfd, int *r)
{
	struct bpfrt_map_handle *h;
	char path[128];
	uint64_t v = 0;
	uint32_t k = 1;
	int ro, wo;

	/* its own pin: read-only, then write-only (it may not read the file any more) */
	ro = path_op(BPF_OBJ_GET, -1, "own", BPF_F_RDONLY);
	r[0] = elem_op(BPF_MAP_LOOKUP_ELEM, ro, 1, &v) ? -1 : (int)v;
	snprintf(path, sizeof(path), "%s/own", fsdir);
	r[1] = chmod(path, 0200) ? -errno : 0;
	wo = path_op(BPF_OBJ_GET, -1, "own", BPF_F_WRONLY);
	v = 0x5678;
	r[2] = wo < 0 ? wo : elem_op(BPF_MAP_UPDATE_ELEM, wo, 1, &v);
	v = 0;
	r[3] = elem_op(BPF_MAP_LOOKUP_ELEM, ro, 1, &v) ? -1 : (int)v;
	/* root's pin read-only, then root's write-only fd */
	ro = path_op(BPF_OBJ_GET, -1, "root", BPF_F_RDONLY);
	r[4] = elem_op(BPF_MAP_LOOKUP_ELEM, ro, 1, &v) ? -1 : (int)v;
	v = 0x5678;
	r[5] = elem_op(BPF_MAP_UPDATE_ELEM, wfd, 1, &v);
	h = bpfrt_map_handle_open(wfd);
	r[6] = !h ? -errno : bpfrt_map_handle_update(h, &k, &v, BPF_ANY);
	bpfrt_map_handle_close(h);
	v = 0;
	r[7] = elem_op(BPF_MAP_LOOKUP_ELEM, ro, 1, &v) ? -1 : (int)v;
}

#define N 8

#define SLOT 100 /* the fd number both files take in turn */

static int ro_fd, other_fd;
static _Atomic int stop;

static void *swapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dup2(other_fd, SLOT);
		dup2(ro_fd, SLOT);
	}
	return NULL;
}

/* As nobody, the race: 0 when the map and the user's file came through, else which
 * went wrong (13: the map reads another file; 14: that file was written). */
static int racer(void)
{
	char buf[4096], zero[4096];
	struct timespec t0, t;
	pthread_t th;
	uint64_t v = 0;
	long n = 0;

	ro_fd = path_op(BPF_OBJ_GET, -1, "root", BPF_F_RDONLY);
	if (ro_fd < 0 || elem_op(BPF_MAP_LOOKUP_ELEM, ro_fd, 1, &v) || v != 0x1234)
		return 10;
	other_fd = memfd_create("bpfrt-race-other", MFD_CLOEXEC);
	memset(zero, 0, sizeof(zero));
	if (other_fd < 0 || pwrite(other_fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero))
		return 11;
	if (dup2(ro_fd, SLOT) != SLOT || pthread_create(&th, NULL, swapper, NULL))
		return 12;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++, n++)
			elem_op(BPF_MAP_LOOKUP_ELEM, SLOT, 1, &v);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 3000000000L);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "%ld lookups raced\n", n);
	v = 0;
	if (elem_op(BPF_MAP_LOOKUP_ELEM, ro_fd, 1, &v) || v != 0x1234)
		return 13;
	if (pread(other_fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    memcmp(buf, zero, sizeof(buf)))
		return 14;
	return 0;
}

static int become_nobody(void)
{
	return setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	       setresuid(NOBODY, NOBODY, NOBODY) || !geteuid();
}

/* a child's exit status, or 128 + the signal that killed it */
static int reap(pid_t pid)
{
	int ws = 0;

	if (waitpid(pid, &ws, 0) != pid)
		return -1;
	return WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
}

int main(void)
{
	char path[128];
	int p[2], r[N], st = 0, wfd;
	pid_t pid;

	if (geteuid())
		T_SKIP("needs root (to become uid %d)", NOBODY);
	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-rdonly-w-XXXXXX");
	if (!t_scratch_dir(fsdir) || chmod(fsdir, 0755))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", fsdir, 1);
	fflush(stdout);
	/* made by a child, so that this process (the worker's parent) never maps them */
	pid = fork();
	if (pid == 0)
		_exit(maker());
	T_CASE("root pinned the maps");
	T_EQ_INT(pid, waitpid(pid, &st, 0));
	T_EQ_INT(0, st);
	snprintf(path, sizeof(path), "%s/root", fsdir);
	wfd = open(path, O_WRONLY | O_CLOEXEC);
	T_CASE("root opened its pin write-only");
	T_EQ_INT(1, wfd >= 0);
	if (pipe(p))
		T_SKIP("pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		int w[N];

		close(p[0]);
		if (become_nobody())
			_exit(77);
		worker(wfd, w);
		_exit(write(p[1], w, sizeof(w)) == (ssize_t)sizeof(w) ? 0 : 3);
	}
	close(p[1]);
	memset(r, 0, sizeof(r));
	st = read(p[0], r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : -1;
	close(p[0]);
	T_CASE("the worker did not crash");
	{
		int ws = reap(pid);

		if (ws == 77)
			T_SKIP("cannot become uid %d", NOBODY);
		T_EQ_INT(0, ws);
		T_EQ_INT(0, st);
	}
	if (!st) {
		T_CASE("own pin: read-only get reads, chmod 0200");
		T_EQ_INT(0x1234, r[0]);
		T_EQ_INT(0, r[1]);
		T_CASE("own pin: BPF_F_WRONLY get of a file mapped read-only: EACCES");
		T_EQ_INT(-EACCES, r[2]);
		T_EQ_INT(0x1234, r[3]);
		T_CASE("root's pin: read-only get reads");
		T_EQ_INT(0x1234, r[4]);
		T_CASE("root's write-only fd: update EACCES, handle EACCES, value unchanged");
		T_EQ_INT(-EACCES, r[5]);
		T_EQ_INT(-EACCES, r[6]);
		T_EQ_INT(0x1234, r[7]);
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(become_nobody() ? 77 : racer());
	T_CASE("dup2() racing a read-only map's fd: the map reads its value, the other file "
	       "untouched, no crash");
	T_EQ_INT(0, reap(pid));
	return t_done();
}
