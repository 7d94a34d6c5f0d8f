/* test_prog_file.c - a program file's shared header rewritten by another process after
 * this process checked it (src/api/prog_file.c): materialise, the retry after a failed
 * materialise and OBJ_GET_INFO keep using the sizes checked once, so a scribbled nfuncs,
 * nmaps or instruction count never makes them read past the file (it made the victim's
 * next run die in memcpy).  Process A (this binary re-executed) loads and pins the
 * program; this process never saw it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "bpfrt.h"
#include "api/api.h"
#include "maps/maps.h"

#define LINKS ".bpfrt-maps"
#define VERIFIED 11 /* processed insns of prog_text (brt_verify: "processed 11 insns") */

/* hash[0] += 1; returns 7 */
static const char prog_text[] =
	"stw [%r10-4], 0\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"lddw %r1, map_fd 0\n"
	"call 1\n"
	"jeq %r0, 0, +2\n"
	"mov %r1, 1\n"
	"lock add [%r0+0], %r1\n"
	"mov %r0, 7\n"
	"exit\n";

static int proc_a(const char *path)
{
	uint32_t key = 0;
	uint64_t zero = 0;
	struct bpf_insn *insns;
	char err[256];
	size_t n;
	int map, prog;

	map = bpfrt_map_create(BPF_MAP_TYPE_HASH, "h", 4, 8, 4, NULL);
	if (map < 0 || bpfrt_map_update_elem(map, &key, &zero, BPF_ANY) ||
	    bpfrt_asm(prog_text, "count", &insns, &n, err, sizeof(err)))
		return 10;
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg)
			insns[i].imm = map;
	prog = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "count", "GPL", insns, n, NULL);
	free(insns);
	if (prog < 0 || bpfrt_obj_pin(prog, path))
		return 11;
	return 0;
}

static int run_a(const char *self, const char *path)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		execl(self, self, "A", path, (char *)NULL);
		_exit(99);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* What another process writes into the header once this one has checked it. */
static void scribble(struct brt_obj_hdr *hdr, int how)
{
	switch (how) {
	case 0:
		hdr->nfuncs = 0x7fffffff;
		break;
	case 1:
		hdr->nmaps = 0x40000000;
		break;
	case 2:
		hdr->max_entries = 0x7fffffff;
		hdr->nfuncs = 0x1000000;
		break;
	default:
		hdr->data_size = ~0ull;
		break;
	}
}

static const char *const names[] = { "nfuncs", "nmaps", "insn count and nfuncs", "data_size" };

static int test_run(int fd, uint32_t *retval)
{
	unsigned char pkt[64] = { 0 };
	BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
	int err = bpfrt_prog_test_run_opts(fd, &o);

	*retval = o.retval;
	return err;
}

/* A fresh copy of the pinned file (a new inode: this process checks it as it would a
 * file from elsewhere); its fd, or -1. */
static int fresh_copy(const char *path, const char *copy)
{
	int in = open(path, O_RDONLY), out;
	struct stat st;
	char *buf;

	if (in < 0 || fstat(in, &st))
		return -1;
	buf = malloc((size_t)st.st_size);
	unlink(copy);
	out = open(copy, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (!buf || out < 0 || pread(in, buf, (size_t)st.st_size, 0) != st.st_size ||
	    write(out, buf, (size_t)st.st_size) != st.st_size)
		return -1;
	free(buf);
	close(in);
	return out;
}

static void scribbled_after_check(const char *dir, const char *path, int how, int fail_first)
{
	char copy[256], links[256], moved[256];
	struct bpf_prog_info info;
	struct brt_obj *obj;
	uint32_t len = sizeof(info), ids[4], retval = 0;
	int fd;

	snprintf(copy, sizeof(copy), "%s/copy", dir);
	snprintf(links, sizeof(links), "%s/" LINKS, dir);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	fd = fresh_copy(path, copy);
	T_ASSERT(fd >= 0);
	/* checked (attached) here, not built yet */
	T_EQ_INT(0, brt_obj_from_fd(fd, BRT_OBJ_PROG, &obj));
	if (fail_first) {
		/* the maps cannot be found: the first materialise fails, the next one retries */
		T_EQ_INT(0, rename(links, moved));
		T_EQ_INT(-ENOENT, brt_prog_materialise((struct brt_prog *)(void *)obj));
	}
	scribble(obj->hdr, how);
	if (fail_first)
		T_EQ_INT(0, rename(moved, links));
	T_EQ_INT(0, brt_prog_materialise((struct brt_prog *)(void *)obj));
	T_EQ_INT(0, test_run(fd, &retval));
	T_EQ_INT(7, (int)retval);
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 4;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	T_EQ_INT(0, bpfrt_obj_get_info_by_fd(fd, &info, &len));
	T_EQ_INT(1, (int)info.nr_map_ids);
	/* the kernel's view of the 11 stored: the hash lookup inlined (call, test, add) */
	T_EQ_INT(13 * 8, (int)info.xlated_prog_len);
	/* the re-verification's count, as the kernel's bpf_prog_info.verified_insns */
	T_EQ_INT(VERIFIED, (int)info.verified_insns);
	brt_obj_put(obj);
	close(fd);
	unlink(copy);
}

int main(int argc, char **argv)
{
	char dir[64] = "/dev/shm/bpfrt-progfile-XXXXXX", path[128], cmd[160];

	if (argc == 3 && !strcmp(argv[1], "A"))
		return proc_a(argv[2]);
	if (geteuid() != 0)
		T_SKIP("pinning a program's maps reads /proc/self/map_files: needs root");
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	snprintf(path, sizeof(path), "%s/count", dir);
	T_CASE("load and pin in another process");
	T_EQ_INT(0, run_a(argv[0], path));
	for (int how = 0; how < 4; how++) {
		for (int fail_first = 0; fail_first < 2; fail_first++) {
			char name[96];

			snprintf(name, sizeof(name), "%s scribbled%s", names[how],
				 fail_first ? " between two materialise attempts" :
					      " before materialise");
			T_CASE(name);
			scribbled_after_check(dir, path, how, fail_first);
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	T_EQ_INT(0, system(cmd));
	return t_done();
}
