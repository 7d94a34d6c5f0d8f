/* test_fs_link.c - brt_fs_link_fd(): an unnamed file (O_TMPFILE) and a named one get a
 * new name that is the same inode; a taken name is -EEXIST and left alone; a missing
 * directory -ENOENT; a file with no name left (unlinked) cannot be named again, as
 * linkat() of /proc/self/fd/N answers.  Then the /proc path behind the fd itself: a
 * process that dropped CAP_DAC_READ_SEARCH after opening the file (its credentials are
 * no longer the file's, so Linux refuses linkat(fd, "", AT_EMPTY_PATH) with ENOENT) still
 * names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"

static int same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* Drop CAP_DAC_READ_SEARCH from the effective set: 0, or -1 when it cannot be. */
static int drop_dac_read_search(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_DAC_READ_SEARCH / 32].effective &= ~(1u << (CAP_DAC_READ_SEARCH % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/* The child of the fallback case: exit 0 when named through /proc, 2 when AT_EMPTY_PATH
 * was not refused (nothing to test here), 1 on failure. */
static int fallback_child(const char *dir)
{
	char path[256], other[256];
	int fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);

	if (fd < 0 || drop_dac_read_search())
		return 1;
	snprintf(path, sizeof(path), "%s/probe", dir);
	if (!linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH))
		return 2;
	if (errno != ENOENT)
		return 1;
	snprintf(other, sizeof(other), "%s/fallback", dir);
	return !brt_fs_link_fd(fd, AT_FDCWD, other) && same_file(fd, other) ? 0 : 1;
}

int main(void)
{
	char dir[64] = "/dev/shm/bpfrt-fslink-XXXXXX", a[128], b[128], c[128], cmd[128];
	int fd, named, dirfd, st;
	pid_t pid;

	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(c, sizeof(c), "%s/missing/c", dir);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	T_ASSERT(dirfd >= 0);

	T_CASE("an unnamed file gets a name, relative to a directory fd");
	fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd < 0)
		T_SKIP("no O_TMPFILE in %s: %s", dir, strerror(errno));
	T_EQ_INT(0, brt_fs_link_fd(fd, dirfd, "a"));
	T_ASSERT(same_file(fd, a));

	T_CASE("a second name, absolute");
	T_EQ_INT(0, brt_fs_link_fd(fd, AT_FDCWD, b));
	T_ASSERT(same_file(fd, b));

	T_CASE("a taken name: -EEXIST, the name's file unchanged");
	named = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	T_ASSERT(named >= 0);
	T_EQ_INT(-EEXIST, brt_fs_link_fd(named, AT_FDCWD, a));
	T_ASSERT(same_file(fd, a));

	T_CASE("a missing directory: -ENOENT");
	T_EQ_INT(-ENOENT, brt_fs_link_fd(named, AT_FDCWD, c));

	T_CASE("a file whose names are all gone cannot be named again");
	T_EQ_INT(0, unlink(a));
	T_EQ_INT(0, unlink(b));
	T_EQ_INT(-ENOENT, brt_fs_link_fd(fd, AT_FDCWD, a));
	close(named);
	close(fd);

	T_CASE("without CAP_DAC_READ_SEARCH and the file's credentials: through /proc");
	pid = fork();
	if (pid == 0)
		_exit(fallback_child(dir));
	T_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	if (WEXITSTATUS(st) == 2)
		printf("note: linkat(AT_EMPTY_PATH) allowed without the capability here; the "
		       "/proc path was not reached\n");
	else
		T_EQ_INT(0, WEXITSTATUS(st));

	close(dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	T_EQ_INT(0, system(cmd));
	return t_done();
}
