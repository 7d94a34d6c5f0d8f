/* test_attacks.c - issue 14's attacks by a second, unprivileged user (uid 65534) on root's
 * use of the default bpffs directory, run in a private mount namespace with a fresh tmpfs
 * on /dev/shm, each asserted to fail (docs/SECURITY.md):
 *   - the user creates /dev/shm/bpfrt first: root refuses to pin or get there;
 *   - the user links $BPFRT_FS/trace_pipe to a root file: root's trace_printk neither
 *     follows the link nor truncates it, nor a user's own big trace_pipe;
 *   - the user writes a program file claiming full privilege: root re-verifies it
 *     unprivileged and its pointer leak is rejected;
 *   - the user flock()s the links directory: root still pins and opens programs.
 * Controls (root's own files) show each check can pass.  Needs root and unshare(2).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"
#include "maps/maps.h"
#include "trace/trace.h"

#define NOBODY 65534
#define FS "/dev/shm/bpfrt"
#define BIG (9u << 20)

/* Run fn as uid/gid 65534 in a child; its exit status (fn's return), or -1. */
static int as_user(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(99);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* A child of ours doing fn, killed after 10 s: a hang becomes a failure. */
static int bounded(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		alarm(10);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void wipe_fs(void)
{
	T_EQ_INT(0, system("rm -rf " FS));
}

static int user_mkdir(void *arg)
{
	mode_t mode = *(const mode_t *)arg;

	return mkdir(FS, 0700) || chmod(FS, mode) ? errno : 0;
}

static int map_fd(void)
{
	return bpfrt_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);
}

static char printed[4096];

static int capture(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(printed);

	(void)level;
	vsnprintf(printed + n, sizeof(printed) - n, fmt, ap);
	return 0;
}

static void pin_dir_owned_by_user(void)
{
	static mode_t modes[] = { 0700, 0755, 01777 };
	bpfrt_print_fn old_print = bpfrt_set_print(capture);

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct stat st;
		int fd;

		T_CASE("pin directory made by another user: root refuses it");
		wipe_fs();
		T_EQ_INT(0, as_user(user_mkdir, &modes[i]));
		fd = map_fd(); /* works: an unpinnable memfd */
		T_ASSERT(fd >= 0);
		T_EQ_INT(-EACCES, bpfrt_obj_pin(fd, FS "/m"));
		T_ASSERT(lstat(FS "/m", &st) && errno == ENOENT);
		T_EQ_INT(-EACCES, bpfrt_obj_get(FS "/anything"));
		close(fd);
	}
	bpfrt_set_print(old_print);
	T_CASE("the refusal says what is wrong and what to do");
	T_CONTAINS("refusing " FS " as the bpffs directory", printed);
	T_CONTAINS("owned by uid 65534", printed);
	T_CONTAINS("have " FS " removed", printed);
	T_CONTAINS("BPFRT_FS=", printed);
	T_CASE("root creates the directory 01777 whatever its umask");
	{
		mode_t old = umask(077);
		struct stat st;
		int fd;

		wipe_fs();
		fd = map_fd();
		T_ASSERT(fd >= 0);
		T_EQ_INT(0, bpfrt_obj_pin(fd, FS "/m"));
		T_EQ_INT(0, stat(FS, &st));
		T_EQ_INT(01777, st.st_mode & 07777);
		T_EQ_INT(0, (int)st.st_uid);
		close(fd);
		fd = bpfrt_obj_get(FS "/m");
		T_ASSERT(fd >= 0);
		close(fd);
		umask(old);
	}
}

/* ---- trace_pipe ---------------------------------------------------------------------- */

static int user_symlink(void *arg)
{
	return symlink((const char *)arg, FS "/trace_pipe") ? errno : 0;
}

static int user_big_pipe(void *arg)
{
	int fd = open(FS "/trace_pipe", O_CREAT | O_EXCL | O_WRONLY, 0644);

	(void)arg;
	return fd < 0 || ftruncate(fd, BIG) || close(fd) ? errno : 0;
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void trace_pipe_attacks(void)
{
	static char victim[] = "/dev/shm/victim";
	int fd;

	T_CASE("trace_pipe linked by another user to a root file: not followed, not cut");
	wipe_fs();
	fd = map_fd(); /* root makes the shared directory */
	T_ASSERT(fd >= 0);
	close(fd);
	fd = open(victim, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	T_ASSERT(fd >= 0 && !ftruncate(fd, BIG));
	close(fd);
	T_EQ_INT(0, as_user(user_symlink, victim));
	T_ASSERT(brt_trace_pipe_write("secret\n", 7) < 0);
	T_EQ_INT((long long)BIG, (long long)size_of(victim));

	T_CASE("a user's big trace_pipe: root neither writes to it nor truncates it");
	T_EQ_INT(0, unlink(FS "/trace_pipe"));
	T_EQ_INT(0, as_user(user_big_pipe, NULL));
	T_ASSERT(brt_trace_pipe_write("secret\n", 7) < 0);
	T_EQ_INT((long long)BIG, (long long)size_of(FS "/trace_pipe"));

	T_CASE("control: root's own trace_pipe is written and wraps past 8 MiB");
	T_EQ_INT(0, unlink(FS "/trace_pipe"));
	T_EQ_INT(0, brt_trace_pipe_write("line\n", 5));
	T_EQ_INT(5, (int)size_of(FS "/trace_pipe"));
	T_EQ_INT(0, truncate(FS "/trace_pipe", BIG));
	T_EQ_INT(0, brt_trace_pipe_write("line\n", 5));
	T_EQ_INT(5, (int)size_of(FS "/trace_pipe"));
	unlink(victim);
}

/* ---- forged privilege ---------------------------------------------------------------- */

struct image {
	char *b;
	size_t n;
	const char *path;
};

/* r0 = r10: a pointer leak only a fully privileged load may have */
static int leak_prog(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 0, .src_reg = 10 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .prog_flags = BPFRT_F_PRIV_FULL);

	return bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns, 2, &o);
}

static int read_fd(int fd, struct image *im)
{
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	im->n = (size_t)st.st_size;
	im->b = malloc(im->n);
	return im->b && pread(fd, im->b, im->n, 0) == (ssize_t)im->n ? 0 : -1;
}

static int write_image(void *arg)
{
	const struct image *im = arg;
	int fd = open(im->path, O_CREAT | O_EXCL | O_WRONLY, 0600);

	if (fd < 0)
		return errno;
	return write(fd, im->b, im->n) == (ssize_t)im->n && !close(fd) ? 0 : EIO;
}

/* Open the program file at path (a new inode: rebuilt as in another process) and run it:
 * 0 and *r0, or -errno. */
static int get_and_run(const char *path, uint32_t *r0)
{
	unsigned char pkt[64] = { 0 };
	BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
	int fd = bpfrt_obj_get(path), err;

	if (fd < 0)
		return fd;
	err = bpfrt_prog_test_run_opts(fd, &o);
	close(fd);
	*r0 = o.retval;
	return err;
}

static void forged_privilege(void)
{
	struct image im = { 0 };
	uint32_t r0 = 0;
	int prog;

	wipe_fs();
	prog = leak_prog();
	T_CASE("a full-privilege program loads (root asked for it)");
	T_ASSERT(prog >= 0);
	T_ASSERT(prog >= 0 && !read_fd(prog, &im));
	close(prog);

	T_CASE("control: root's own copy runs at the privilege in its header");
	im.path = FS "/root_copy";
	T_EQ_INT(0, write_image(&im));
	T_EQ_INT(0, get_and_run(im.path, &r0));
	T_ASSERT(r0 != 0);

	T_CASE("the same file written by another user: re-verified unprivileged, rejected");
	im.path = FS "/forged";
	T_EQ_INT(0, as_user(write_image, &im));
	T_EQ_INT(-EACCES, get_and_run(im.path, &r0));

	T_CASE("root's file that others may write: re-verified unprivileged, rejected");
	im.path = FS "/writable";
	T_EQ_INT(0, write_image(&im));
	T_EQ_INT(0, chmod(im.path, 0666));
	T_EQ_INT(-EACCES, get_and_run(im.path, &r0));

	T_CASE("a header without a privilege level: refused");
	{
		/* the flags word of the header (obj.h: the last page's start, or the end of
		 * a one-page file) */
		char *word = im.b + brt_obj_hdr_off(im.n) + offsetof(struct brt_obj_hdr, flags);
		uint32_t flags;

		memcpy(&flags, word, 4);
		T_EQ_INT(BPFRT_F_PRIV_FULL, flags & BPFRT_F_PRIV_MASK);
		flags &= ~BPFRT_F_PRIV_MASK;
		memcpy(word, &flags, 4);
		im.path = FS "/nolevel";
		T_EQ_INT(0, write_image(&im));
		T_EQ_INT(-EINVAL, get_and_run(im.path, &r0));
	}
	free(im.b);
}

/* ---- the links' lock ----------------------------------------------------------------- */

static int user_lock(void *arg)
{
	int fd = open(FS "/.bpfrt-maps", O_RDONLY | O_DIRECTORY), lock;

	(void)arg;
	/* the lock file itself cannot even be opened */
	lock = open(FS "/.bpfrt-maps/.lock", O_RDONLY);
	if (lock >= 0 || errno != EACCES)
		return 1;
	if (fd < 0 || flock(fd, LOCK_EX))
		return 2;
	pause(); /* hold it until killed */
	return 0;
}

/* A program naming map (lddw), loaded and pinned at path: 0 or -errno. */
static int pin_map_prog(int map, const char *path)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 7 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns, 4, NULL);
	int err;

	if (prog < 0)
		return prog;
	err = bpfrt_obj_pin(prog, path);
	close(prog);
	return err;
}

static int pin_and_open(void *arg)
{
	struct image im = { 0 };
	uint32_t r0 = 0;
	int map = map_fd(), prog, err;

	(void)arg;
	err = pin_map_prog(map, FS "/p2");
	if (err)
		return 10;
	/* a copy of the pinned file is rebuilt from scratch: its map found by its link */
	prog = bpfrt_obj_get(FS "/p2");
	if (prog < 0 || read_fd(prog, &im))
		return 11;
	close(prog);
	im.path = FS "/p2copy";
	if (write_image(&im) || get_and_run(im.path, &r0) || r0 != 7)
		return 12;
	free(im.b);
	return 0;
}

static void held_lock(void)
{
	int map, st;
	pid_t holder;

	T_CASE("a user holding a flock on the links directory blocks no pin or open");
	wipe_fs();
	map = map_fd();
	T_EQ_INT(0, pin_map_prog(map, FS "/p1")); /* makes .bpfrt-maps and its .lock */
	close(map);
	holder = fork();
	if (holder == 0) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(99);
		_exit(user_lock(NULL));
	}
	T_ASSERT(holder > 0);
	usleep(200000);
	T_EQ_INT(0, waitpid(holder, &st, WNOHANG)); /* still holding it */
	T_EQ_INT(0, bounded(pin_and_open, NULL));
	kill(holder, SIGKILL);
	waitpid(holder, &st, 0);
}

int main(void)
{
	if (geteuid() != 0)
		T_SKIP("needs root (a second uid and a private mount namespace)");
	if (unshare(CLONE_NEWNS))
		T_SKIP("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"))
		T_SKIP("private tmpfs on /dev/shm: %s", strerror(errno));
	unsetenv("BPFRT_FS");
	pin_dir_owned_by_user();
	trace_pipe_attacks();
	forged_privilege();
	held_lock();
	return t_done();
}
