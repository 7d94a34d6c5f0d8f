/* test_prog_pin.c - a pinned program used by processes that did not load it: process A
 * (this binary re-executed) loads a program using a hash map, an array map and a
 * direct-value array, pins the program only and exits; B (another exec) opens the pin
 * and test-runs it; C finds the maps through the program's map_ids and
 * BPF_MAP_GET_FD_BY_ID and reads the counts; this process and B see each other's writes.
 * Then corrupted copies of the program file: a clean errno, never a crash.  And the map
 * links of an unpinned program are dropped by the next program pin that links a map,
 * and a program pinned twice keeps its maps until both pins are gone; a pin after an
 * unpin keeps what the programs still pinned name (read from their program links, no
 * walk), and with another user's links directory present the walk still answers for a
 * pin made without links; a batch sweeps once, what is unpinned meanwhile goes at the
 * next pin after it.  test_pin_concurrent.c: two processes pinning and unpinning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "map_links.h"
#include "bpfrt.h"
#include "api/api.h"
#include "maps/maps.h"

#define RUNS 5
#define REPEAT 3

/* hash[0] += 1, array[0] += 2, direct value += 3 per run; returns 7 */
static const char prog_text[] =
	"stw [%r10-4], 0\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"lddw %r1, map_fd 0\n"
	"call 1\n"
	"jeq %r0, 0, +2\n"
	"mov %r1, 1\n"
	"lock add [%r0+0], %r1\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"lddw %r1, map_fd 1\n"
	"call 1\n"
	"jeq %r0, 0, +2\n"
	"mov %r1, 2\n"
	"lock add [%r0+0], %r1\n"
	"lddw %r6, map_value 2 0\n"
	"mov %r1, 3\n"
	"lock add [%r6+0], %r1\n"
	"mov %r0, 7\n"
	"exit\n";

/* pad: that many instructions more in front (a program file past one page) */
static int load_prog(const int *fds, size_t pad)
{
	static const char pad_line[] = "mov %r7, 0\n";
	char err[256], *text = malloc(pad * (sizeof(pad_line) - 1) + sizeof(prog_text));
	struct bpf_insn *insns;
	size_t n;
	int fd;

	if (!text)
		return -1;
	text[0] = '\0';
	for (size_t i = 0; i < pad; i++)
		strcat(text, pad_line);
	strcat(text, prog_text);
	fd = bpfrt_asm(text, "count3", &insns, &n, err, sizeof(err));
	free(text);
	if (fd)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg)
			insns[i].imm = fds[insns[i].imm];
	fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "count3", "GPL", insns, n, NULL);
	free(insns);
	return fd;
}

/* Process A: maps, program, pin, nothing kept. */
static int proc_a(const char *path)
{
	uint32_t key = 0;
	uint64_t zero = 0;
	int fds[3], prog;

	fds[0] = bpfrt_map_create(BPF_MAP_TYPE_HASH, "h", 4, 8, 4, NULL);
	fds[1] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 8, 4, NULL);
	fds[2] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "v", 4, 8, 1, NULL);
	if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0 ||
	    bpfrt_map_update_elem(fds[0], &key, &zero, BPF_ANY))
		return 10;
	prog = load_prog(fds, 0);
	if (prog < 0)
		return 11;
	if (bpfrt_obj_pin(prog, path))
		return 12;
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(prog);
	return 0;
}

/* Process B: run the pinned program; exit status 0, or the run's errno + 100. */
static int proc_b(const char *path)
{
	unsigned char pkt[64] = { 0 };
	int fd = bpfrt_obj_get(path);

	if (fd < 0)
		return 20;
	for (int i = 0; i < RUNS; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
			   .repeat = REPEAT);
		int err = bpfrt_prog_test_run_opts(fd, &o);

		if (err)
			return 100 + (-err < 100 ? -err : 99);
		if (o.retval != 7)
			return 21;
	}
	close(fd);
	return 0;
}

static int map_by_id(uint32_t id, uint32_t flags)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_id = id;
	attr.open_flags = flags;
	return bpfrt_bpf(BPF_MAP_GET_FD_BY_ID, &attr, sizeof(attr));
}

/* The map fds of a program, in map_ids order (n of them, at most 3). */
static int prog_maps(int prog, int *fds, uint32_t *n)
{
	struct bpf_prog_info info;
	uint32_t ids[3], len = sizeof(info);

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 3;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpfrt_obj_get_info_by_fd(prog, &info, &len))
		return -1;
	*n = info.nr_map_ids;
	for (uint32_t i = 0; i < *n && i < 3; i++) {
		fds[i] = map_by_id(ids[i], 0);
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

static uint64_t value_of(int fd)
{
	uint32_t key = 0;
	uint64_t v = ~0ull;

	bpfrt_map_lookup_elem(fd, &key, &v);
	return v;
}

/* Process C: read the counts through the program's map ids; prints them. */
static int proc_c(const char *path)
{
	int prog = bpfrt_obj_get(path), fds[3];
	uint32_t n = 0;

	if (prog < 0 || prog_maps(prog, fds, &n) || n != 3)
		return 30;
	printf("%llu %llu %llu\n", (unsigned long long)value_of(fds[0]),
	       (unsigned long long)value_of(fds[1]), (unsigned long long)value_of(fds[2]));
	return 0;
}

/* Run this binary as "what path"; its exit status, its stdout in out (may be NULL). */
static int spawn(const char *self, const char *what, const char *path, char *out, size_t cap)
{
	int p[2], st;
	ssize_t len = 0, r;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(self, self, what, path, (char *)NULL);
		_exit(99);
	}
	close(p[1]);
	while (out && (size_t)len + 1 < cap && (r = read(p[0], out + len, cap - 1 - len)) > 0)
		len += r;
	if (out)
		out[len] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- corrupted copies ---------------------------------------------------------------- */

struct image {
	unsigned char *b;
	size_t size;
};

/* where the file's layout has its header (obj.h brt_obj_hdr_at()) */
static struct brt_obj_hdr *hdr_of(struct image *im)
{
	struct brt_obj_hdr *end = (void *)(im->b + im->size - BRT_OBJ_HDR_ROOM);

	return end->magic == BRT_OBJ_MAGIC && end->hdr_at_end ?
		       end :
		       (struct brt_obj_hdr *)(void *)(im->b + brt_obj_hdr_off(im->size));
}

static struct bpf_insn *insns_of(struct image *im)
{
	return (struct bpf_insn *)(void *)im->b;
}

static struct brt_prog_mapref *table_of(struct image *im)
{
	return (struct brt_prog_mapref *)(void *)(im->b + hdr_of(im)->max_entries * 8);
}

/* the header where the other layout has it (obj.h brt_obj_hdr_at()): a file of pages
 * with its header moved from the end to the start of the last page (where instructions
 * are), still marked as at the end, or a file of one page with its header moved to the
 * page's start */
static void cut_header(struct image *im)
{
	struct brt_obj_hdr h = *hdr_of(im);

	memset(hdr_of(im), 0, BRT_OBJ_HDR_ROOM);
	memcpy(im->size > BRT_PAGE ? im->b + im->size - BRT_PAGE : im->b, &h, sizeof(h));
}
/* the same, the mark cleared: the first layout's place, but the instructions run into it */
static void unmarked_header(struct image *im)
{
	struct brt_obj_hdr h = *hdr_of(im);

	h.hdr_at_end = 0;
	memset(hdr_of(im), 0, BRT_OBJ_HDR_ROOM);
	memcpy(im->size > BRT_PAGE ? im->b + im->size - BRT_PAGE : im->b, &h, sizeof(h));
}
/* the file as an earlier version wrote it: the data's pages, then a page of its own for
 * the header, unmarked (a valid file, which must load and run) */
static void first_layout(struct image *im)
{
	struct brt_obj_hdr h = *hdr_of(im);
	uint64_t end = h.tail_size ? brt_obj_tail_off(&h) + h.tail_size : h.data_size;
	size_t size = (size_t)BRT_ROUND_PAGE(end) + BRT_PAGE;
	unsigned char *b = calloc(1, size);

	memcpy(b, im->b, (size_t)end);
	h.hdr_at_end = 0;
	h.file_size = size;
	memcpy(b + size - BRT_PAGE, &h, sizeof(h));
	free(im->b);
	im->b = b;
	im->size = size;
}
static void cut_last_page(struct image *im) { im->size -= BRT_PAGE; }
static void cut_odd(struct image *im) { im->size -= 100; }
static void many_maps(struct image *im) { hdr_of(im)->nmaps = 1000; }
static void bad_data_size(struct image *im) { hdr_of(im)->data_size += 8; }
static void zero_insns(struct image *im) { hdr_of(im)->max_entries = 0; }
static void many_funcs(struct image *im)
{
	hdr_of(im)->nfuncs = hdr_of(im)->max_entries + 1;
	hdr_of(im)->data_size += hdr_of(im)->nfuncs;
}
static void huge_insns(struct image *im) { hdr_of(im)->max_entries = 0x7fffffff; }
static void bad_magic(struct image *im) { hdr_of(im)->magic ^= 1; }
static void bad_type(struct image *im) { hdr_of(im)->type = 999; }
static void map_id_changed(struct image *im) { table_of(im)->id ^= 0x10; }
static void map_shape_changed(struct image *im) { table_of(im)->value_size = 16; }
static void garbage_insn(struct image *im) { insns_of(im)[1].code = 0xff; }
/* the exception callback's first insn (programs' value_size), past the instructions and
 * past INT_MAX */
static void exc_cb_past_end(struct image *im) { hdr_of(im)->value_size = 0x80000000u; }

static void index_out_of_range(struct image *im)
{
	for (uint32_t i = 0; i < hdr_of(im)->max_entries; i++)
		if (insns_of(im)[i].src_reg == BPF_PSEUDO_MAP_IDX) {
			insns_of(im)[i].imm = 77;
			return;
		}
}

static void fewer_maps(struct image *im)
{
	/* the table says 2 maps, the instructions use 3 */
	hdr_of(im)->nmaps = 2;
	hdr_of(im)->data_size -= sizeof(struct brt_prog_mapref);
}

static const struct {
	const char *name;
	void (*mutate)(struct image *im);
	int get_errno; /* OBJ_GET fails with it, or 0 */
	int run_errno; /* then TEST_RUN fails with it, or 0 */
} corrupt[] = {
	{ "the header where the other layout has it", cut_header, EACCES, 0 },
	{ "the header unmarked where the other layout has it", unmarked_header, EACCES, 0 },
	{ "the first layout (a page of its own for the header)", first_layout, 0, 0 },
	{ "header page cut off", cut_last_page, EACCES, 0 },
	{ "size not a page multiple", cut_odd, EACCES, 0 },
	{ "map table larger than the instructions allow", many_maps, EACCES, 0 },
	{ "data_size off by 8", bad_data_size, EACCES, 0 },
	{ "no instructions", zero_insns, EACCES, 0 },
	{ "more functions than instructions", many_funcs, EACCES, 0 },
	{ "insn count past the file", huge_insns, EACCES, 0 },
	{ "bad magic", bad_magic, EACCES, 0 },
	{ "unknown program type", bad_type, 0, EINVAL },
	{ "map id changed", map_id_changed, 0, ENOENT },
	{ "map shape changed", map_shape_changed, 0, EINVAL },
	{ "garbage opcode", garbage_insn, 0, EINVAL },
	{ "exception callback past the instructions", exc_cb_past_end, 0, EINVAL },
	{ "map index out of range", index_out_of_range, 0, EINVAL },
	{ "table shorter than the maps used", fewer_maps, 0, EINVAL },
};

static int read_file(const char *path, struct image *im)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	im->size = (size_t)st.st_size;
	im->b = malloc(im->size);
	if (!im->b || pread(fd, im->b, im->size, 0) != (ssize_t)im->size)
		return -1;
	close(fd);
	return 0;
}

static void corrupted_copies(const char *dir, const char *path)
{
	struct image orig = { 0 };
	char copy[256];

	T_ASSERT(read_file(path, &orig) == 0);
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		struct image im = { malloc(orig.size), orig.size };
		unsigned char pkt[64] = { 0 };
		int fd, err;

		T_CASE(corrupt[i].name);
		memcpy(im.b, orig.b, orig.size);
		corrupt[i].mutate(&im);
		/* a new file each time: a fresh inode, checked as another process would */
		unlink(copy);
		fd = open(copy, O_CREAT | O_EXCL | O_WRONLY, 0600);
		T_ASSERT(fd >= 0);
		T_EQ_INT((int)im.size, (int)write(fd, im.b, im.size));
		close(fd);
		free(im.b);
		fd = bpfrt_obj_get(copy);
		if (corrupt[i].get_errno) {
			T_EQ_INT(-corrupt[i].get_errno, fd);
			continue;
		}
		T_ASSERT(fd >= 0);
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
		err = bpfrt_prog_test_run_opts(fd, &o);
		T_EQ_INT(-corrupt[i].run_errno, err);
		close(fd);
	}
	unlink(copy);
	free(orig.b);
}

/* ---- MAP_GET_FD_BY_ID against the kernel ------------------------------------------- */

static int kernel_by_id(uint32_t id, uint32_t flags)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_id = id;
	attr.open_flags = flags;
	return (int)syscall(__NR_bpf, BPF_MAP_GET_FD_BY_ID, &attr, sizeof(attr));
}

static void get_fd_by_id_errnos(void)
{
	static const struct {
		const char *name;
		uint32_t id, flags;
	} cases[] = {
		{ "id 0", 0, 0 },
		{ "unknown id", 0x7ffffff1, 0 },
		{ "unknown flag", 0x7ffffff1, 1u << 20 },
		{ "rdonly and wronly", 0x7ffffff1, BPF_F_RDONLY | BPF_F_WRONLY },
	};
	int kernel = geteuid() == 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ours, theirs = 0, ke;

		T_CASE(cases[i].name);
		ours = map_by_id(cases[i].id, cases[i].flags);
		T_EQ_INT(-1, ours);
		if (!kernel)
			continue;
		ke = kernel_by_id(cases[i].id, cases[i].flags) < 0 ? 0 : 1;
		theirs = errno;
		T_EQ_INT(0, ke);
		ours = map_by_id(cases[i].id, cases[i].flags);
		T_EQ_INT(theirs, errno);
	}
	if (!kernel)
		printf("kernel comparison skipped: not root\n");
}

int main(int argc, char **argv)
{
	char dir[64] = "/dev/shm/bpfrt-progpin-XXXXXX", path[128], big[160], out[256];
	struct stat pst;
	unsigned long long h = 0, a = 0, v = 0;
	int prog, fds[3], st;
	uint32_t n = 0, key = 0;
	uint64_t val;

	if (argc == 3 && !strcmp(argv[1], "A"))
		return proc_a(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "B"))
		return proc_b(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "C"))
		return proc_c(argv[2]);
	if (geteuid() != 0)
		T_SKIP("pinning a program's maps reads /proc/self/map_files: needs root");
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	snprintf(path, sizeof(path), "%s/count3", dir);

	T_CASE("A loads, pins the program only, exits");
	T_EQ_INT(0, spawn("/proc/self/exe", "A", path, NULL, 0));
	T_EQ_INT(3, count_links(dir));

	T_CASE("B runs the pinned program");
	T_EQ_INT(0, spawn("/proc/self/exe", "B", path, NULL, 0));

	T_CASE("C reads the counts by map id");
	T_EQ_INT(0, spawn("/proc/self/exe", "C", path, out, sizeof(out)));
	T_EQ_INT(3, sscanf(out, "%llu %llu %llu", &h, &a, &v));
	T_EQ_U64(RUNS * REPEAT, h);
	T_EQ_U64(2 * RUNS * REPEAT, a);
	T_EQ_U64(3 * RUNS * REPEAT, v);

	T_CASE("this process and B share the maps both ways");
	prog = bpfrt_obj_get(path);
	T_ASSERT(prog >= 0);
	T_EQ_INT(0, prog_maps(prog, fds, &n));
	T_EQ_INT(3, (int)n);
	val = 1000;
	T_EQ_INT(0, bpfrt_map_update_elem(fds[0], &key, &val, BPF_EXIST));
	T_EQ_INT(0, spawn("/proc/self/exe", "B", path, NULL, 0));
	T_EQ_U64(1000 + RUNS * REPEAT, value_of(fds[0]));
	T_EQ_U64(4 * RUNS * REPEAT, value_of(fds[1]));
	{
		unsigned char pkt[64] = { 0 };
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

		T_EQ_INT(0, bpfrt_prog_test_run_opts(prog, &o));
		T_EQ_INT(7, (int)o.retval);
		T_EQ_U64(1001 + RUNS * REPEAT, value_of(fds[0]));
		T_EQ_U64(3 * (2 * RUNS * REPEAT + 1), value_of(fds[2]));
	}

	T_CASE("read-only fd by id");
	{
		struct bpf_map_info mi;
		uint32_t len = sizeof(mi);
		int ro;

		memset(&mi, 0, sizeof(mi));
		T_EQ_INT(0, bpfrt_obj_get_info_by_fd(fds[0], &mi, &len));
		ro = map_by_id(mi.id, BPF_F_RDONLY);
		T_ASSERT(ro >= 0);
		T_EQ_U64(value_of(fds[0]), value_of(ro));
		T_EQ_INT(-EPERM, bpfrt_map_update_elem(ro, &key, &val, BPF_ANY));
		close(ro);
	}

	T_CASE("xlated names the maps by id");
	{
		struct bpf_prog_info info;
		struct bpf_map_info mi;
		struct bpf_insn insns[64];
		uint32_t len = sizeof(info), mlen = sizeof(mi);

		memset(&info, 0, sizeof(info));
		info.xlated_prog_len = sizeof(insns);
		info.xlated_prog_insns = (uint64_t)(uintptr_t)insns;
		T_EQ_INT(0, bpfrt_obj_get_info_by_fd(prog, &info, &len));
		memset(&mi, 0, sizeof(mi));
		T_EQ_INT(0, bpfrt_obj_get_info_by_fd(fds[2], &mi, &mlen));
		T_EQ_INT(BPF_PSEUDO_MAP_FD, insns[3].src_reg);
		/* the kernel's view: the lookups before it bound or inlined, so it moved */
		int vi = -1;

		for (int i = 0; i < (int)(info.xlated_prog_len / 8) && i < 64 && vi < 0; i++)
			if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
			    insns[i].src_reg == BPF_PSEUDO_MAP_VALUE)
				vi = i;
		T_ASSERT(vi > 0);
		T_EQ_INT((int)mi.id, insns[vi].imm);
	}
	/* a program's file ends with its header, after the instructions in their last
	 * page: one page for a small program, two for 600 instructions more; both checked
	 * alike, and as an earlier version laid them out (the header on a page of its own) */
	snprintf(big, sizeof(big), "%s/big", dir);
	T_CASE("a program of more than a page, pinned");
	{
		int bp = load_prog(fds, 600);

		T_ASSERT(bp >= 0);
		T_EQ_INT(0, bpfrt_obj_pin(bp, big));
		T_EQ_INT(0, stat(big, &pst));
		/* 5.1 KB of instructions and the header: two pages, not three */
		T_EQ_INT(2 * BRT_PAGE, (int)pst.st_size);
		close(bp);
	}
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(prog);

	T_CASE("the pinned small program's file is one page");
	T_EQ_INT(0, stat(path, &pst));
	T_EQ_INT(BRT_PAGE, (int)pst.st_size);
	corrupted_copies(dir, path);
	corrupted_copies(dir, big);
	unlink(big);

	T_CASE("bpf_map_get_fd_by_id errnos");
	get_fd_by_id_errnos();

	T_CASE("the maps' links gone: B gets ENOENT");
	{
		char lnk[256];
		DIR *d;
		struct dirent *de;

		snprintf(lnk, sizeof(lnk), "%s/" LINKS, dir);
		d = opendir(lnk);
		T_ASSERT(d != NULL);
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(d), de->d_name, 0);
		if (d)
			closedir(d);
		st = spawn("/proc/self/exe", "B", path, NULL, 0);
		T_EQ_INT(100 + ENOENT, st);
	}

	T_CASE("the next program pin drops the links of an unpinned program");
	{
		int mfds[3], p2;
		char p2path[160];

		T_EQ_INT(12, spawn("/proc/self/exe", "A", path, NULL, 0)); /* pin: EEXIST */
		unlink(path);
		T_EQ_INT(0, spawn("/proc/self/exe", "A", path, NULL, 0));
		T_EQ_INT(3, count_links(dir));
		unlink(path);
		for (int i = 0; i < 3; i++)
			mfds[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "x", 4, 8, 1, NULL);
		p2 = load_prog(mfds, 0);
		T_ASSERT(p2 >= 0);
		snprintf(p2path, sizeof(p2path), "%s/other", dir);
		T_EQ_INT(0, bpfrt_obj_pin(p2, p2path));
		/* A's three links are dropped, the new program's three made (the hash is an
		 * array here, the program does not care) */
		T_EQ_INT(3, count_links(dir));
		unlink(p2path);
		for (int i = 0; i < 3; i++)
			close(mfds[i]);
		close(p2);
	}

	T_CASE("a program pinned twice keeps its maps until both pins are gone");
	{
		char pa[160], pb[160], pc[160], pd[160];
		int ma[3], mc[3], md[3], p3, p4, p5;

		snprintf(pa, sizeof(pa), "%s/twice_a", dir);
		snprintf(pb, sizeof(pb), "%s/twice_b", dir);
		snprintf(pc, sizeof(pc), "%s/third", dir);
		snprintf(pd, sizeof(pd), "%s/fourth", dir);
		for (int i = 0; i < 3; i++) {
			ma[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "a", 4, 8, 1, NULL);
			mc[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "c", 4, 8, 1, NULL);
			md[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "d", 4, 8, 1, NULL);
		}
		p3 = load_prog(ma, 0);
		p4 = load_prog(mc, 0);
		p5 = load_prog(md, 0);
		T_ASSERT(p3 >= 0 && p4 >= 0 && p5 >= 0);
		T_EQ_INT(0, bpfrt_obj_pin(p3, pa));
		T_EQ_INT(3, count_links(dir)); /* "other"'s three dropped */
		T_EQ_INT(0, bpfrt_obj_pin(p3, pb)); /* no new map: nothing collected */
		T_EQ_INT(3, count_links(dir));
		unlink(pa);
		T_EQ_INT(0, bpfrt_obj_pin(p4, pc)); /* p3 still pinned at pb */
		T_EQ_INT(6, count_links(dir));
		unlink(pb);
		unlink(pc);
		T_EQ_INT(0, bpfrt_obj_pin(p5, pd)); /* p3 and p4 unpinned: theirs dropped */
		T_EQ_INT(3, count_links(dir));
		unlink(pd);
		for (int i = 0; i < 3; i++) {
			close(ma[i]);
			close(mc[i]);
			close(md[i]);
		}
		close(p3);
		close(p4);
		close(p5);
	}

	T_CASE("a pin after an unpin keeps the links of the programs still pinned");
	{
		char k1[160], k2[160], k3[160];
		int m1[3], m2[3], m3[3], q1, q2, q3;

		snprintf(k1, sizeof(k1), "%s/keep_1", dir);
		snprintf(k2, sizeof(k2), "%s/keep_2", dir);
		snprintf(k3, sizeof(k3), "%s/keep_3", dir);
		for (int i = 0; i < 3; i++) {
			m1[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "k1", 4, 8, 1, NULL);
			m2[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "k2", 4, 8, 1, NULL);
			m3[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "k3", 4, 8, 1, NULL);
		}
		q1 = load_prog(m1, 0);
		q2 = load_prog(m2, 0);
		q3 = load_prog(m3, 0);
		T_ASSERT(q1 >= 0 && q2 >= 0 && q3 >= 0);
		T_EQ_INT(0, bpfrt_obj_pin(q1, k1)); /* "fourth"'s three dropped */
		T_EQ_INT(3, count_links(dir));
		T_EQ_INT(0, bpfrt_obj_pin(q2, k2));
		T_EQ_INT(6, count_links(dir));
		unlink(k1);
		/* q1's links dropped; q2's kept: its program link's map table names them */
		T_EQ_INT(0, bpfrt_obj_pin(q3, k3));
		T_EQ_INT(6, count_links(dir));
		T_EQ_INT(0, spawn("/proc/self/exe", "B", k2, NULL, 0));
		T_EQ_INT(0, spawn("/proc/self/exe", "B", k3, NULL, 0));
		unlink(k2);
		unlink(k3);
		for (int i = 0; i < 3; i++) {
			close(m1[i]);
			close(m2[i]);
			close(m3[i]);
		}
		close(q1);
		close(q2);
		close(q3);
	}

	T_CASE("maps whose fds were closed, one reused by another file: linked all the same");
	{
		char fp[160], other[160];
		int f[3], pf, reused;

		/* prog_file.c links a map through the fd it was last resolved by when that is
		 * still the map's file, else through the process's mapping of it */
		snprintf(fp, sizeof(fp), "%s/closed_fds", dir);
		snprintf(other, sizeof(other), "%s/not_a_map", dir);
		for (int i = 0; i < 3; i++)
			f[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "f", 4, 8, 1, NULL);
		pf = load_prog(f, 0);
		T_ASSERT(pf >= 0);
		for (int i = 0; i < 3; i++)
			close(f[i]);
		/* the lowest free fd: a closed map's, now a file on the same filesystem */
		reused = open(other, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		T_ASSERT(reused == f[0] || reused == f[1] || reused == f[2]);
		T_EQ_INT(0, bpfrt_obj_pin(pf, fp));
		T_EQ_INT(3, count_links(dir)); /* the previous case's dropped, these made */
		T_EQ_INT(0, spawn("/proc/self/exe", "B", fp, NULL, 0));
		close(reused);
		unlink(other);
		unlink(fp);
		close(pf);
	}

	T_CASE("a batch sweeps at its first pin; an unpin meanwhile goes at the next pin after");
	{
		char zp[4][160];
		int zm[4][3], zf[4];

		for (int k = 0; k < 4; k++) {
			snprintf(zp[k], sizeof(zp[k]), "%s/batch_%d", dir, k);
			for (int i = 0; i < 3; i++)
				zm[k][i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "z", 4, 8, 1, NULL);
			zf[k] = load_prog(zm[k], 0);
			T_ASSERT(zf[k] >= 0);
		}
		T_EQ_INT(0, bpfrt_obj_pin(zf[0], zp[0])); /* the previous case's dropped */
		T_EQ_INT(3, count_links(dir));
		brt_api_batch_begin();
		T_EQ_INT(0, bpfrt_obj_pin(zf[1], zp[1]));
		unlink(zp[0]);
		T_EQ_INT(0, bpfrt_obj_pin(zf[2], zp[2])); /* no second sweep: z0's kept */
		T_EQ_INT(9, count_links(dir));
		brt_api_batch_end();
		T_EQ_INT(0, bpfrt_obj_pin(zf[3], zp[3])); /* z0's dropped now */
		T_EQ_INT(9, count_links(dir));
		for (int k = 1; k < 4; k++)
			T_EQ_INT(0, spawn("/proc/self/exe", "B", zp[k], NULL, 0));
		for (int k = 0; k < 4; k++) {
			if (k)
				unlink(zp[k]);
			for (int i = 0; i < 3; i++)
				close(zm[k][i]);
			close(zf[k]);
		}
	}

	T_CASE("another user's links' directory: the walk answers for pins it cannot see");
	{
		char gp[160], hp[160], rp[160], other[160], proc[64];
		int g[3], r[3], pg, ph, pr;

		/* a pin made without links (as by a user whose linking failed) of a program
		 * naming maps that only our links directory holds, while the program that
		 * linked them is unpinned: only the walk knows the maps are still named */
		snprintf(gp, sizeof(gp), "%s/g", dir);
		snprintf(hp, sizeof(hp), "%s/h_raw", dir);
		snprintf(rp, sizeof(rp), "%s/r", dir);
		snprintf(other, sizeof(other), "%s/" LINKS ".4242", dir);
		T_EQ_INT(0, mkdir(other, 0700));
		T_EQ_INT(0, chown(other, 4242, 4242));
		for (int i = 0; i < 3; i++) {
			g[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "g", 4, 8, 1, NULL);
			r[i] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "r", 4, 8, 1, NULL);
		}
		pg = load_prog(g, 0);
		ph = load_prog(g, 0);
		pr = load_prog(r, 0);
		T_ASSERT(pg >= 0 && ph >= 0 && pr >= 0);
		T_EQ_INT(0, bpfrt_obj_pin(pg, gp));
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ph);
		T_EQ_INT(0, linkat(AT_FDCWD, proc, AT_FDCWD, hp, AT_SYMLINK_FOLLOW));
		unlink(gp);
		T_EQ_INT(0, bpfrt_obj_pin(pr, rp));
		T_EQ_INT(6, count_links(dir)); /* g's kept for h_raw, r's made */
		T_EQ_INT(0, spawn("/proc/self/exe", "B", hp, NULL, 0));
		unlink(hp);
		unlink(rp);
		T_EQ_INT(0, rmdir(other));
		for (int i = 0; i < 3; i++) {
			close(g[i]);
			close(r[i]);
		}
		close(pg);
		close(ph);
		close(pr);
	}

	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		T_EQ_INT(0, system(cmd));
	}
	return t_done();
}
