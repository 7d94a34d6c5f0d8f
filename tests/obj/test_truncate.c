/* test_truncate.c - the files of $BPFRT_FS that bpfrt maps and that a process may
 * truncate under everyone's mappings (pages past a file's new end raise SIGBUS):
 *
 * - the id counters (.bpfrt-ids): any process of their owner may truncate them; object
 *   creation must go on (random ids, as without the file), in this process and in one
 *   that maps the file afresh, and never die of SIGBUS;
 * - the objects' own files and the registry of waiting bpf_res_spin_lock threads: owned
 *   by their creator, mode 0600, so that another user can neither open them for writing
 *   nor truncate them by name (truncate(2)), even in a shared sticky directory as root's
 *   /dev/shm/bpfrt (as uid 65534; needs root, skipped otherwise).  Whoever may write an
 *   object file is trusted as its owner (docs/SECURITY.md).
 */
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "maps/maps.h"
#include "vm/vm.h"

static int map_new(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 4;
	return bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

static uint32_t map_id(int fd)
{
	struct bpf_map_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? 0 : info.id;
}

/* a map created, its id read, an element written and read back: 1 when all worked */
static int map_works(uint32_t *id)
{
	uint32_t k = 1;
	uint64_t v = 42, out = 0;
	union bpf_attr a;
	int fd = map_new(), ok;

	if (fd < 0)
		return 0;
	*id = map_id(fd);
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	ok = !bpfrt_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
	a.value = (uint64_t)(uintptr_t)&out;
	ok = ok && !bpfrt_bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) && out == 42;
	close(fd);
	return ok && *id;
}

static void ids_truncated(const char *dir)
{
	char path[128];
	uint32_t id1 = 0, id2 = 0, id3 = 0;
	int status;
	pid_t pid;

	T_CASE("id counters truncated by a process of their owner");
	T_EQ_INT(map_works(&id1), 1);
	snprintf(path, sizeof(path), "%s/.bpfrt-ids", dir);
	T_EQ_INT(truncate(path, 0), 0);
	/* this process maps the file already: the next id's access faults */
	T_EQ_INT(map_works(&id2), 1);
	if (id2 == id1)
		T_FAIL("the same id %u twice", id1);
	/* a process that maps it after the truncation (the file is grown to a page again
	 * on open, so it counts from 0), then truncated while it runs */
	pid = fork();
	if (pid == 0) {
		int ok = map_works(&id3);

		ok = ok && !truncate(path, 0) && map_works(&id3);
		_exit(ok ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	T_EQ_INT(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
	T_EQ_INT(map_works(&id3), 1);
}

/* as uid 65534: open read-write, open read-only, truncate(2): -errno each, 0 when the
 * open or truncate worked */
static void other_user(const char *path, const char *what)
{
	int status, res[3] = { 0, 0, 0 }, p[2];
	pid_t pid;

	T_CASE(what);
	if (pipe(p)) {
		T_FAIL("pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		int fd;

		close(p[0]);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		fd = open(path, O_RDWR);
		res[0] = fd < 0 ? -errno : 0;
		fd = open(path, O_RDONLY);
		res[1] = fd < 0 ? -errno : 0;
		res[2] = truncate(path, 0) ? -errno : 0;
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 3);
	}
	close(p[1]);
	if (read(p[0], res, sizeof(res)) != sizeof(res))
		T_FAIL("no answer from the child");
	close(p[0]);
	waitpid(pid, &status, 0);
	T_EQ_INT(-EACCES, res[0]);
	T_EQ_INT(-EACCES, res[1]);
	T_EQ_INT(-EACCES, res[2]);
}

static void mode_0600(const char *path, const char *what)
{
	struct stat st;

	T_CASE(what);
	if (lstat(path, &st)) {
		T_FAIL("%s: %s", path, strerror(errno));
		return;
	}
	T_EQ_INT(1, S_ISREG(st.st_mode));
	T_EQ_INT(0600, (int)(st.st_mode & 07777));
	T_EQ_INT((int)geteuid(), (int)st.st_uid);
}

/* The registry appears at the first wait for a holder in another process. */
static void make_registry(void)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			      -1, 0);
	struct bpfrt_run_ctx ctx;
	int up[2], down[2], status;
	char c;
	pid_t pid;

	if (word == MAP_FAILED || pipe(up) || pipe(down))
		return;
	pid = fork();
	if (pid == 0) {
		memset(&ctx, 0, sizeof(ctx));
		if (brt_res_lock(word, &ctx))
			_exit(1);
		if (write(up[1], "x", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	if (read(up[0], &c, 1) == 1) {
		memset(&ctx, 0, sizeof(ctx));
		/* held by the child: published after a millisecond, the timeout answers */
		T_EQ_INT(-ETIMEDOUT, brt_res_lock(word, &ctx));
	}
	if (write(down[1], "x", 1) != 1)
		T_FAIL("pipe");
	waitpid(pid, &status, 0);
	for (int i = 0; i < 2; i++) {
		close(up[i]);
		close(down[i]);
	}
	munmap(word, 4096);
}

static void other_users(const char *dir)
{
	char pin[128], ids[128], reg[128];
	union bpf_attr a;
	int fd;

	if (geteuid() != 0) {
		printf("skipped: another user's view needs root\n");
		return;
	}
	/* the shared directory as root makes it */
	if (chmod(dir, 01777)) {
		T_FAIL("chmod: %s", strerror(errno));
		return;
	}
	snprintf(pin, sizeof(pin), "%s/m", dir);
	snprintf(ids, sizeof(ids), "%s/.bpfrt-ids", dir);
	snprintf(reg, sizeof(reg), "%s/.bpfrt-reslock.%u", dir, (unsigned)geteuid());
	fd = map_new();
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)pin;
	a.bpf_fd = (uint32_t)fd;
	T_CASE("pin a map in the shared directory");
	T_EQ_INT(0, bpfrt_bpf(BPF_OBJ_PIN, &a, sizeof(a)));
	make_registry();
	mode_0600(pin, "a pinned map's file: 0600, the creator's");
	mode_0600(ids, "the id counters: 0600, the creator's");
	mode_0600(reg, "the registry of waiting threads: 0600, the user's");
	other_user(pin, "another user cannot write or truncate a pinned map");
	other_user(ids, "another user cannot write or truncate the id counters");
	other_user(reg, "another user cannot write or truncate the registry");
	close(fd);
}

int main(void)
{
	char dir[64] = "/dev/shm/bpfrt-trunc-XXXXXX", cmd[96];
	int rc;

	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	ids_truncated(dir);
	other_users(dir);
	rc = t_done();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		rc = 1;
	return rc;
}
