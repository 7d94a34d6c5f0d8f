/* test_map_in_map.c - array_of_maps and hash_of_maps through bpf(): the same script of
 * creates, updates, lookups and deletes runs on bpfrt_bpf() and, as root, on the kernel,
 * and every step's result (errno, or the looked-up id being non-zero) must agree; then a
 * program follows the outer map to an inner one (lookup of a lookup) in bpfrt, also to an
 * inner map another process (gone since) stored into a pinned outer map, from 4 threads. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h" /* sys_fn, kernel_bpf(), elem() */
#include "vm/vm.h"

static int create(sys_fn sys, uint32_t type, uint32_t key, uint32_t value, uint32_t max,
		  uint32_t flags, int inner)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	a.inner_map_fd = (uint32_t)inner;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

#define NSTEPS 24

/* The script: results[] gets one value per step (errno, or 1/0 for "an id came back"). */
static void script(sys_fn sys, int results[NSTEPS])
{
	int inner, inner2, other, flexible, outer, houter, r, n = 0, fd;
	uint32_t k0 = 0, k1 = 1, k9 = 9, id = 0;
	int32_t v;

	inner = create(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0);
	inner2 = create(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0);
	other = create(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0, 0);
	flexible = create(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 3, BPF_F_INNER_MAP, 0);
	/* creation rules */
	fd = create(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 8, 2, 0, inner);
	results[n++] = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	fd = create(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, 1000);
	results[n++] = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	outer = create(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, inner);
	results[n++] = outer < 0 ? -errno : 0;
	fd = create(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, 0, outer);
	results[n++] = fd < 0 ? -errno : 0; /* a map of maps cannot be the inner map */
	if (fd >= 0)
		close(fd);
	houter = create(sys, BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 4, 0, flexible);
	results[n++] = houter < 0 ? -errno : 0;
	/* array of maps */
	results[n++] = elem(sys, BPF_MAP_LOOKUP_ELEM, outer, &k0, &id, 0); /* empty */
	v = inner;
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, outer, &k0, &v, BPF_ANY);
	r = elem(sys, BPF_MAP_LOOKUP_ELEM, outer, &k0, &id, 0);
	results[n++] = r ? r : id != 0;
	v = other;
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, outer, &k1, &v, BPF_ANY); /* mismatch */
	v = inner2;
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, outer, &k1, &v, BPF_NOEXIST);
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, outer, &k9, &v, BPF_ANY); /* past end */
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, outer, &k1, &v, BPF_ANY);
	v = 12345;
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, outer, &k0, &v, BPF_ANY); /* bad fd */
	results[n++] = elem(sys, BPF_MAP_DELETE_ELEM, outer, &k1, NULL, 0);
	results[n++] = elem(sys, BPF_MAP_DELETE_ELEM, outer, &k1, NULL, 0);
	results[n++] = elem(sys, BPF_MAP_DELETE_ELEM, outer, &k9, NULL, 0);
	/* hash of maps; BPF_F_INNER_MAP lets max_entries differ */
	v = inner;
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, houter, &k9, &v, BPF_ANY);
	v = create(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 7, BPF_F_INNER_MAP, 0);
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, houter, &k9, &v, BPF_NOEXIST);
	results[n++] = elem(sys, BPF_MAP_UPDATE_ELEM, houter, &k9, &v, BPF_NOEXIST);
	close(v);
	r = elem(sys, BPF_MAP_LOOKUP_ELEM, houter, &k9, &id, 0);
	results[n++] = r ? r : id != 0;
	results[n++] = elem(sys, BPF_MAP_LOOKUP_ELEM, houter, &k1, &id, 0);
	results[n++] = elem(sys, BPF_MAP_DELETE_ELEM, houter, &k9, NULL, 0);
	results[n++] = elem(sys, BPF_MAP_DELETE_ELEM, houter, &k9, NULL, 0);
	results[n++] = elem(sys, BPF_MAP_GET_NEXT_KEY, houter, NULL, &id, 0);
	for (int i = 0; i < 4; i++)
		close((int[]){ inner, inner2, other, flexible }[i]);
	if (outer >= 0)
		close(outer);
	if (houter >= 0)
		close(houter);
}

/* r0 = inner[0] + 100 through outer[0] (the map fd at instruction 1), 0 when empty */
#define FOLLOW_PROG(outer)                                                              \
	{                                                                               \
		{ BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0 },                     \
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, outer },  \
		{ 0 },                                                                  \
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0 },           \
		{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4 },                   \
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem },              \
		{ BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 6, 0 },                      \
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_0, 0, 0 },            \
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0 },           \
		{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4 },                   \
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem },              \
		{ BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0 },                      \
		{ BPF_LDX | BPF_MEM | BPF_W, BPF_REG_0, BPF_REG_0, 0, 0 },              \
		{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_0, 0, 0, 100 },                  \
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },                                     \
	}

/* r0 = inner[0] + 100 through outer[0]; the inner map holds 42. */
static void program_follows_inner(void)
{
	int inner = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "in", 4, 4, 1, NULL);
	BPFRT_OPTS(bpfrt_map_create_opts, mo, .inner_map_fd = (uint32_t)inner);
	int outer = bpfrt_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "out", 4, 4, 1, &mo);
	uint32_t k = 0, v = 42;
	int32_t ifd = inner;
	struct bpf_insn prog[] = FOLLOW_PROG(outer);
	const char *engines[] = {
		"checked", "interp",
#ifdef BPFRT_HAVE_JIT
		"jit",
#endif
	};
	uint8_t pkt[64] = { 0 };

	T_CASE("program follows the inner map");
	T_ASSERT(inner >= 0 && outer >= 0);
	T_EQ_INT(0, bpfrt_map_update_elem(inner, &k, &v, BPF_ANY));
	T_EQ_INT(0, bpfrt_map_update_elem(outer, &k, &ifd, BPF_ANY));
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		BPFRT_OPTS(bpfrt_test_run_opts, ro, .data_in = pkt, .data_size_in = sizeof(pkt));
		enum bpfrt_engine kind = BPFRT_ENGINE_DEFAULT;
		int pfd;

		T_EQ_INT(0, brt_vm_engine_parse(engines[e], 0, &kind));
		BPFRT_OPTS(bpfrt_prog_load_opts, lo, .prog_flags = BPFRT_F_ENGINE(kind));
		pfd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "mim", "GPL", prog,
				      sizeof(prog) / sizeof(prog[0]), &lo);
		T_ASSERT(pfd >= 0);
		if (pfd < 0)
			continue;
		T_EQ_INT(0, bpfrt_prog_test_run_opts(pfd, &ro));
		T_EQ_INT(142, (int)ro.retval);
		close(pfd);
	}
	close(outer);
	close(inner);
}

static int follow_prog; /* the program of pinned_entry_followed(), for its threads */

static void *run_many(void *arg)
{
	uint8_t pkt[64] = { 0 };
	intptr_t bad = 0;

	(void)arg;
	for (int i = 0; i < 200; i++) {
		BPFRT_OPTS(bpfrt_test_run_opts, ro, .data_in = pkt, .data_size_in = sizeof(pkt));

		if (bpfrt_prog_test_run_opts(follow_prog, &ro) || ro.retval != 142)
			bad++;
	}
	return (void *)bad;
}

/* An entry another process stored into a pinned outer map, that process gone: this
 * process's program finds the inner map through the storer's link (maps/mim_links.c),
 * from 4 threads at once (the first lookups race to follow it). */
static void pinned_entry_followed(const char *dir, const struct bpf_insn *prog, size_t n)
{
	char pin[128];
	pthread_t t[4];
	uint32_t k = 0;
	int outer, st = 0;
	pid_t pid;

	snprintf(pin, sizeof(pin), "%s/outer", dir);
	pid = fork();
	if (pid == 0) {
		int inner = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "in", 4, 4, 1, NULL);
		BPFRT_OPTS(bpfrt_map_create_opts, mo, .inner_map_fd = (uint32_t)inner);
		int o = bpfrt_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "out", 4, 4, 1, &mo);
		uint32_t v = 42;
		int32_t ifd = inner;

		_exit(inner < 0 || o < 0 || bpfrt_obj_pin(o, pin) ||
		      bpfrt_map_update_elem(inner, &k, &v, BPF_ANY) ||
		      bpfrt_map_update_elem(o, &k, &ifd, BPF_ANY));
	}
	T_CASE("an entry stored by a process gone, in a pinned outer map: followed");
	T_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
	T_EQ_INT(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	outer = bpfrt_obj_get(pin);
	T_ASSERT(outer >= 0);
	if (outer < 0)
		return;
	{
		struct bpf_insn copy[16];

		memcpy(copy, prog, n * sizeof(*prog));
		copy[1].imm = outer;
		follow_prog = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "mim", "GPL", copy,
					      n, NULL);
	}
	T_ASSERT(follow_prog >= 0);
	for (int i = 0; i < 4; i++)
		T_EQ_INT(0, pthread_create(&t[i], NULL, run_many, NULL));
	for (int i = 0; i < 4; i++) {
		void *bad = (void *)1;

		pthread_join(t[i], &bad);
		T_EQ_INT(0, (int)(intptr_t)bad);
	}
	T_CASE("the entry deleted: the program finds it empty (r0 = 0 + 100)");
	T_EQ_INT(0, bpfrt_map_delete_elem(outer, &k));
	{
		uint8_t pkt[64] = { 0 };
		BPFRT_OPTS(bpfrt_test_run_opts, ro, .data_in = pkt, .data_size_in = sizeof(pkt));

		T_EQ_INT(0, bpfrt_prog_test_run_opts(follow_prog, &ro));
		T_EQ_INT(100, (int)ro.retval);
	}
	close(follow_prog);
	close(outer);
	unlink(pin);
	/* the user's next store into a pinned outer map drops the links of the unpinned one:
	 * left are the lock, the new outer map's link and its entry's */
	T_CASE("links of an unpinned outer map collected at the next store");
	pid = fork();
	if (pid == 0) {
		int inner = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "in", 4, 4, 1, NULL);
		BPFRT_OPTS(bpfrt_map_create_opts, mo, .inner_map_fd = (uint32_t)inner);
		int o = bpfrt_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "out", 4, 4, 1, &mo);
		int32_t ifd = inner;

		_exit(inner < 0 || o < 0 || bpfrt_obj_pin(o, pin) ||
		      bpfrt_map_update_elem(o, &k, &ifd, BPF_ANY));
	}
	T_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
	T_EQ_INT(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	{
		char links[160];
		struct dirent *de;
		int names = 0;
		DIR *d;

		snprintf(links, sizeof(links), "%s/.bpfrt-inner", dir);
		d = opendir(links);
		T_ASSERT(d != NULL);
		while (d && (de = readdir(d)))
			names += de->d_name[0] != '.' || (de->d_name[1] && de->d_name[1] != '.');
		if (d)
			closedir(d);
		T_EQ_INT(3, names);
	}
	unlink(pin);
}

int main(void)
{
	static const char *const names[NSTEPS] = {
		"array_of_maps value_size 8", "inner fd not open", "array_of_maps",
		"map of maps as inner", "hash_of_maps", "lookup empty slot", "update slot 0",
		"lookup slot 0 gives an id", "update with a mismatched inner", "update NOEXIST",
		"update past the end", "update slot 1", "update with a closed fd",
		"delete slot 1", "delete slot 1 again", "delete past the end", "hash update",
		"hash NOEXIST new key", "hash NOEXIST again", "hash lookup gives an id",
		"hash lookup missing", "hash delete", "hash delete again", "hash get_next_key",
	};
	int ours[NSTEPS] = { 0 }, theirs[NSTEPS] = { 0 };
	char tmpdir[] = "/tmp/bpfrt-mim-XXXXXX";
	int probe;

	if (!t_scratch_dir(tmpdir))
		return 1;
	setenv("BPFRT_FS", tmpdir, 1);
	script(bpfrt_bpf, ours);
	/* what the kernel answers, written down for machines without bpf() */
	{
		static const int expected[NSTEPS] = {
			-EINVAL, -EBADF, 0, -EINVAL, 0, -ENOENT, 0, 1, -EINVAL, -EINVAL, -E2BIG,
			0, -EBADF, 0, -ENOENT, -E2BIG, -EINVAL, 0, -EEXIST, 1, -ENOENT, 0,
			-ENOENT, -ENOENT,
		};
		for (int i = 0; i < NSTEPS; i++) {
			T_CASE(names[i]);
			T_EQ_INT(expected[i], ours[i]);
		}
	}
	probe = geteuid() == 0 ? create(kernel_bpf, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0) : -1;
	if (probe >= 0) {
		close(probe);
		script(kernel_bpf, theirs);
		for (int i = 0; i < NSTEPS; i++) {
			T_CASE(names[i]);
			T_EQ_INT(theirs[i], ours[i]);
		}
	} else {
		printf("note: kernel comparison skipped (no bpf())\n");
	}
	program_follows_inner();
	{
		struct bpf_insn prog[] = FOLLOW_PROG(0);

		pinned_entry_followed(tmpdir, prog, sizeof(prog) / sizeof(prog[0]));
	}
	rmdir(tmpdir);
	return t_done();
}
