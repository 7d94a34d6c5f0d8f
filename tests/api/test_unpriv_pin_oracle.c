/* test_unpriv_pin_oracle.c - a pinned prog array keeps its programs for an unprivileged
 * user, against the kernel.  The kernel clears a prog array when its last user reference
 * goes, and a pin is one (map_release_uref()): an unprivileged socket filter that
 * tail-calls through a pinned array whose fds were all closed still reaches its target.
 * bpfrt's process clears its slots at its sweep once it has no fd of the array unless the
 * array is pinned (maps/map.c map_unref(), obj.c brt_obj_pinned()), and an unprivileged
 * user cannot follow /proc/self/map_files to see that: before session 18 the slots went.
 *
 * A child that has become uid 65534 runs the same steps through syscall(__NR_bpf) (pins
 * in a directory of /sys/fs/bpf it owns) and bpfrt_bpf() (BPFRT_FS a directory it owns);
 * the answers are compared.  kernel.unprivileged_bpf_disabled is set 2 -> 0 for the run
 * and back (tests/unpriv.h).  Needs root and the kernel (skipped otherwise).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "diff.h"
#include "harness.h"
#include "unpriv.h"
#include "obj/obj.h"

static char fsdir[64], kdir[64];

static int path_op(sys_fn sys, int cmd, int fd, const char *path)
{
	union bpf_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)(fd < 0 ? 0 : fd);
	r = sys(cmd, &a, sizeof(a));
	return r < 0 ? -errno : r;
}

/* The kernel clears an unpinned array on a work queue: run until P's tail call fails,
 * at most 2 s (bpfrt answers at once). */
static int settled_run(sys_fn sys, int p)
{
	int ret = diff_run64(sys, p, 1);

	for (int i = 0; sys == sys_kernel && ret != 1 && i < 200; i++) {
		usleep(10000);
		ret = diff_run64(sys, p, 1);
	}
	return ret;
}

/* The steps, each answer into r: the array pinned and its fds closed (P, tail-calling
 * through it, must still reach Q), then got back by its name elsewhere in the process
 * and closed again, then unpinned. */
static int steps(sys_fn sys, const char *dir, int *r)
{
	int n = 0, p, fd;
	int pa = diff_map_new(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 1, 0);
	int q = diff_tail_prog(sys, -1, 7);
	char pin[96];

	snprintf(pin, sizeof(pin), "%s/pa", dir);
	p = pa >= 0 ? diff_tail_prog(sys, pa, 0) : -1;
	r[n++] = p >= 0 && q >= 0 && !diff_update(sys, pa, 0, q);
	r[n++] = diff_run64(sys, p, 1);
	r[n++] = path_op(sys, BPF_OBJ_PIN, pa, pin);
	close(pa);
	close(q);
	brt_obj_sweep(); /* bpfrt's process looks for fds left (no-op for the kernel) */
	r[n++] = diff_run64(sys, p, 1);
	/* opened by its name and closed again: still pinned */
	fd = path_op(sys, BPF_OBJ_GET, -1, pin);
	r[n++] = fd >= 0;
	if (fd >= 0)
		close(fd);
	brt_obj_sweep();
	r[n++] = diff_run64(sys, p, 1);
	unlink(pin);
	brt_obj_sweep();
	r[n++] = settled_run(sys, p);
	close(p);
	return n;
}

static const char *const names[] = {
	"made (as uid 65534)", "P tail-calls Q", "the array pinned",
	"every fd closed, pinned: P still reaches Q",
	"got back by its name", "that fd closed too: P still reaches Q",
	"unpinned: P's tail call fails, once settled",
};
#define N (int)(sizeof(names) / sizeof(names[0]))

/* The worker, as nobody: both sides' answers through the pipe. */
static void worker(int out)
{
	int r[2 * N];

	if (become_nobody())
		_exit(77);
	steps(sys_kernel, kdir, r);
	steps(sys_bpfrt, fsdir, r + N);
	if (write(out, r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(3);
	_exit(0);
}

int main(void)
{
	int r[2 * N], p[2], st = 0, got = 0;
	const char *why;
	pid_t pid;

	if (!kernel_available() || geteuid())
		T_SKIP("needs root and the kernel's bpf()");
	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-unpriv-XXXXXX");
	if (!t_scratch_dir(fsdir))
		T_SKIP("cannot create a directory in /dev/shm");
	snprintf(kdir, sizeof(kdir), "/sys/fs/bpf/bpfrt-unpriv-%d", (int)getpid());
	if (mkdir(kdir, 0700) || chown(kdir, NOBODY, NOBODY) || chown(fsdir, NOBODY, NOBODY)) {
		rmdir(kdir);
		T_SKIP("cannot make directories of uid %d", NOBODY);
	}
	setenv("BPFRT_FS", fsdir, 1);
	why = unpriv_enable();
	if (why) {
		rmdir(kdir);
		T_SKIP("%s", why);
	}
	fflush(stdout);
	if (pipe(p))
		T_SKIP("pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		worker(p[1]);
	}
	close(p[1]);
	got = pid > 0 && read(p[0], r, sizeof(r)) == (ssize_t)sizeof(r);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = 1 << 8;
	restore();
	rmdir(kdir);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		T_SKIP("cannot become uid %d", NOBODY);
	T_CASE("the worker ran both sides");
	T_EQ_INT(1, got);
	T_EQ_INT(0, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	for (int i = 0; got && i < N; i++) {
		T_CASE(names[i]);
		T_EQ_INT(r[i], r[N + i]);
	}
	/* the answers that make the comparison mean something */
	T_CASE("kernel: the pin keeps the slot, unpinning clears it");
	T_EQ_INT(1, r[0]);
	T_EQ_INT(7, r[1]);
	T_EQ_INT(7, r[3]);
	T_EQ_INT(7, r[5]);
	T_EQ_INT(1, r[6]);
	return t_done();
}
