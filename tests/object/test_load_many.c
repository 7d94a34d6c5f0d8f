/* test_load_many.c - the object loader on an object with many programs (src/object/load.c):
 * every program gets its own fd, id, info and test run; a program freed by its last fd
 * leaves the others running; and a refusal in program k of n leaves nothing behind (no fd
 * of the object's maps or programs open, every program's fd -1), as libbpf's load does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "elf/elf_test_util.h"
#include "harness.h"
#include "quiet.h"
#include "load_cases.h"

#define NPROGS 16

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	union bpf_attr attr;

	memset(info, 0, sizeof(*info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(*info);
	attr.info.info = (uint64_t)(uintptr_t)info;
	return bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) ? -errno : 0;
}

static int fd_by_id(uint32_t id)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	return bpfrt_bpf(BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
}

static long hits(int map_fd, int key)
{
	union bpf_attr attr;
	long v = -1;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)map_fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)&v;
	return bpfrt_bpf(BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr)) ? -errno : v;
}

/* 16 programs: distinct fds and ids, each one's info and run; then the object closed, the
 * programs kept by fds from their ids, one of them freed (its last fd closed), and the
 * other 15 run again on the default engine (the JIT where built). */
static void test_many(void)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("many_progs"), NULL);
	int fds[NPROGS], own[NPROGS], map_fd, n = 0;
	uint32_t ids[NPROGS];
	struct bpfrt_program *p;

	T_CASE("16 programs: fds, ids, info, runs");
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	T_EQ_INT(0, bpfrt_object_load(obj));
	map_fd = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "hits"));
	T_ASSERT(map_fd >= 0);
	for (p = bpfrt_object_next_program(obj, NULL); p && n < NPROGS;
	     p = bpfrt_object_next_program(obj, p), n++) {
		struct bpf_prog_info info;
		char name[16];
		uint32_t r = 0xdead;

		fds[n] = bpfrt_program_fd(p);
		T_ASSERT(fds[n] >= 0);
		for (int i = 0; i < n; i++)
			T_ASSERT(fds[i] != fds[n]);
		T_EQ_INT(0, prog_info(fds[n], &info));
		ids[n] = info.id;
		T_ASSERT(ids[n] != 0);
		for (int i = 0; i < n; i++)
			T_ASSERT(ids[i] != ids[n]);
		snprintf(name, sizeof(name), "prog_%d", n);
		T_EQ_STR(name, bpfrt_program_name(p));
		T_EQ_STR(name, info.name);
		T_EQ_INT(BPF_PROG_TYPE_SOCKET_FILTER, info.type);
		T_ASSERT(info.xlated_prog_len >= 8 * bpfrt_program_insn_cnt(p));
		T_EQ_INT(1, info.nr_map_ids);
		T_EQ_INT(0, test_run_once(bpfrt_bpf, fds[n], &r));
		T_EQ_INT(n, r);
	}
	T_EQ_INT(NPROGS, n);
	for (int i = 0; i < NPROGS; i++) {
		T_EQ_INT(1, hits(map_fd, i));
		own[i] = fd_by_id(ids[i]);
		T_ASSERT(own[i] >= 0);
	}
	map_fd = dup(map_fd);
	bpfrt_object_close(obj);

	T_CASE("one program freed, the others still run");
	T_EQ_INT(0, close(own[7]));
	for (int i = 0; i < NPROGS; i++) {
		struct bpf_prog_info info;
		uint32_t r = 0xdead;

		if (i == 7)
			continue;
		T_EQ_INT(0, prog_info(own[i], &info));
		T_EQ_INT(ids[i], info.id);
		T_EQ_INT(0, test_run_once(bpfrt_bpf, own[i], &r));
		T_EQ_INT(i, r);
		T_EQ_INT(2, hits(map_fd, i));
		close(own[i]);
	}
	close(map_fd);
}

/* bad_many's prog_5 of 8 is refused: the load fails with the verifier's errno, every
 * program and map fd is -1 again, and the process holds no more fds than before. */
static void test_failure_midway(void)
{
	int before = open_fds(), after;
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("bad_many"), NULL);
	struct bpfrt_program *p;
	int n = 0;

	T_CASE("program 5 of 8 refused: all cleaned up");
	T_ASSERT(before > 0);
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	errno = 0;
	T_EQ_INT(-EACCES, bpfrt_object_load(obj));
	T_EQ_INT(EACCES, errno);
	T_CONTAINS("prog_5", bpfrt_object_log(obj));
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		T_EQ_INT(-1, bpfrt_program_fd(p));
		n++;
	}
	T_EQ_INT(8, n);
	T_EQ_INT(-1, bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "hits")));
	after = open_fds();
	T_EQ_INT(before, after);
	bpfrt_object_close(obj);
	T_EQ_INT(before, open_fds());
}

/* The object's close takes its fds in runs (close_range() over consecutive numbers,
 * src/object/load.c): with the caller's own fds in between, at holes the load filled two
 * by two, every one of the caller's stays open and the object's go; a program fd the
 * caller dup'd keeps its program. */
static void test_close_interleaved(void)
{
	enum { SLOTS = 60 };
	int held[SLOTS], kept = 0, ok = 1, dupfd, gone = 0, before, nfd = 0;
	int objfd[NPROGS + 2];
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("many_progs"), NULL);
	struct bpfrt_program *p;
	struct stat null_st, st;
	uint32_t r = 0xdead;

	T_CASE("close: the caller's fds between the object's stay open");
	T_ASSERT(obj != NULL);
	if (!obj || stat("/dev/null", &null_st))
		return;
	for (int i = 0; i < SLOTS; i++)
		held[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* holes of two, each between two of the caller's fds */
	for (int i = 0; i < SLOTS; i++)
		if (i % 3 != 2 && held[i] >= 0) {
			close(held[i]);
			held[i] = -1;
		}
	before = open_fds();
	T_EQ_INT(0, bpfrt_object_load(obj));
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p))
		objfd[nfd++] = bpfrt_program_fd(p);
	objfd[nfd++] = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "hits"));
	T_EQ_INT(NPROGS + 1, nfd);
	/* the load's fds went into the holes: runs of two between the caller's */
	for (int i = 0; i < nfd; i++)
		T_ASSERT(objfd[i] >= 0 && objfd[i] < held[SLOTS - 1]);
	dupfd = dup(objfd[3]);
	T_ASSERT(dupfd >= 0);
	bpfrt_object_close(obj);
	for (int i = 0; i < SLOTS; i++) {
		if (held[i] < 0)
			continue;
		kept++;
		ok &= !fstat(held[i], &st) && st.st_rdev == null_st.st_rdev &&
		      S_ISCHR(st.st_mode);
	}
	T_ASSERT(kept == SLOTS / 3);
	T_ASSERT(ok);
	for (int i = 0; i < nfd; i++)
		gone += objfd[i] != dupfd && fcntl(objfd[i], F_GETFD) < 0 && errno == EBADF;
	T_EQ_INT(nfd, gone);
	T_EQ_INT(0, test_run_once(bpfrt_bpf, dupfd, &r));
	T_EQ_INT(3, r);
	close(dupfd);
	T_EQ_INT(before, open_fds());
	for (int i = 0; i < SLOTS; i++)
		if (held[i] >= 0)
			close(held[i]);
}

int main(void)
{
	size_t len;
	unsigned char *probe = corpus_read("many_progs", &len);

	if (!probe)
		T_SKIP("corpus not built (clang missing)");
	free(probe);
	bpfrt_set_print(t_print_quiet);
	test_many();
	test_failure_midway();
	test_close_interleaved();
	return t_done();
}
