/* test_pin_concurrent.c - two processes of one user pinning and unpinning programs in one
 * $BPFRT_FS at the same time.  Each, ROUNDS times: two new maps, a program naming them,
 * pinned (a new map: the pin collects the links nobody names, under the user's lock),
 * then the previous program, pinned all along while the other process collected, checked
 * still linked and unpinned.  A collection that dropped a map of a program still pinned
 * (the other process's, or its own) is a missing link; then a third process rebuilds
 * each survivor from its pin, and one more pin leaves only the links the three pinned
 * programs name.  Half of the rounds pin inside a batch (api.h; `prog loadall`'s way,
 * the lock held across pins).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "map_links.h"
#include "bpfrt.h"
#include "api/api.h"

#define ROUNDS 400

struct prog {
	int maps[2], fd;
	char names[2][48]; /* the maps' link names, "<id>-<inode>" as prog_file.c makes them */
};

static int load(struct prog *p)
{
	struct bpf_insn insns[6] = {
		{ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 2, .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 3 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	for (int i = 0; i < 2; i++) {
		struct bpf_map_info info;
		uint32_t len = sizeof(info);
		struct stat st;

		p->maps[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "c", 4, 8, 1, NULL);
		memset(&info, 0, sizeof(info));
		if (p->maps[i] < 0 || bpfrt_obj_get_info_by_fd(p->maps[i], &info, &len) ||
		    fstat(p->maps[i], &st))
			return -1;
		snprintf(p->names[i], sizeof(p->names[i]), "%08" PRIx32 "-%" PRIx64, info.id,
			 (uint64_t)st.st_ino);
	}
	insns[0].imm = p->maps[0];
	insns[2].imm = p->maps[1];
	p->fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "conc", "GPL", insns, 6, NULL);
	return p->fd < 0 ? -1 : 0;
}

static void unload(struct prog *p)
{
	close(p->maps[0]);
	close(p->maps[1]);
	close(p->fd);
}

static int linked(const char *fs, const struct prog *p)
{
	char path[256];
	struct stat st;

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/" LINKS "/%s", fs, p->names[i]);
		if (stat(path, &st))
			return 0;
	}
	return 1;
}

static int failed(const char *tag, int round, int step, const char *what)
{
	fprintf(stderr, "worker %s, round %d: %s (%s)\n", tag, round, what, strerror(errno));
	return step;
}

/* A worker: exit 0, or the step that failed (printed). */
static int worker(const char *fs, const char *tag)
{
	struct prog cur, prev;
	char path[256], prev_path[256];

	for (int r = 0; r < ROUNDS; r++) {
		int batch = r % 2;

		if (load(&cur))
			return failed(tag, r, 1, "load");
		snprintf(path, sizeof(path), "%s/%s_%d", fs, tag, r);
		if (batch)
			brt_api_batch_begin();
		if (bpfrt_obj_pin(cur.fd, path))
			return failed(tag, r, 2, "pin");
		if (batch)
			brt_api_batch_end();
		if (!linked(fs, &cur))
			return failed(tag, r, 3, "the new program's maps not linked");
		if (r) {
			/* pinned since the last round, through the other's collections */
			if (!linked(fs, &prev))
				return failed(tag, r, 4, "a map of the program pinned last round unlinked");
			unlink(prev_path);
			unload(&prev);
		}
		prev = cur;
		snprintf(prev_path, sizeof(prev_path), "%s", path);
	}
	unload(&prev);
	return 0;
}

/* Rebuild the pinned program at path here (its maps opened through their links), run. */
static int check(const char *path)
{
	unsigned char pkt[64] = { 0 };
	BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
	int fd = bpfrt_obj_get(path);

	if (fd < 0)
		return 1;
	if (bpfrt_prog_test_run_opts(fd, &o) || o.retval != 3)
		return 2;
	return 0;
}

static pid_t run(const char *what, const char *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/proc/self/exe", "/proc/self/exe", what, arg, (char *)NULL);
		_exit(99);
	}
	return pid;
}

static int status_of(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(int argc, char **argv)
{
	char fs[64] = "/dev/shm/bpfrt-pinconc-XXXXXX", path[160], cmd[160];
	struct prog last;
	pid_t a, b;

	if (argc == 3 && !strcmp(argv[1], "A"))
		return worker(getenv("BPFRT_FS"), argv[2]);
	if (argc == 3 && !strcmp(argv[1], "C"))
		return check(argv[2]);
	if (geteuid() != 0)
		T_SKIP("pinning a program's maps reads /proc/self/map_files: needs root");
	if (!t_scratch_dir(fs))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", fs, 1);

	T_CASE("two processes pin and unpin; every pinned program stays linked");
	a = run("A", "x");
	b = run("A", "y");
	T_EQ_INT(0, status_of(a));
	T_EQ_INT(0, status_of(b));

	T_CASE("the survivors rebuilt in a third process");
	snprintf(path, sizeof(path), "%s/x_%d", fs, ROUNDS - 1);
	T_EQ_INT(0, status_of(run("C", path)));
	snprintf(path, sizeof(path), "%s/y_%d", fs, ROUNDS - 1);
	T_EQ_INT(0, status_of(run("C", path)));

	T_CASE("one more pin leaves the links the three pinned programs name");
	T_EQ_INT(0, load(&last));
	snprintf(path, sizeof(path), "%s/last", fs);
	T_EQ_INT(0, bpfrt_obj_pin(last.fd, path));
	T_EQ_INT(6, count_links(fs));
	unload(&last);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", fs);
	T_EQ_INT(0, system(cmd));
	return t_done();
}
