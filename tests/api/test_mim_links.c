/* test_mim_links.c - the links that keep a named map of maps' entries alive past the
 * processes that stored them (src/maps/mim_links.c), against what the kernel does with
 * the same steps (an outer map holds its inner maps for as long as it lives):
 *   - a program pinned after its outer map was filled: another process running it after
 *     the loader exited finds the entry (kernel: 42; before session 19 bpfrt lost the
 *     entry with its storer: 1000, "outer[0] empty");
 *   - an entry deleted, or replaced, in a pinned outer map: its link goes at once
 *     (before: it stayed, with the inner map's memory, until the outer map was unpinned
 *     and collected), unless another slot still holds the same inner map, which stays
 *     usable after its storer exited.
 * Storers are forked children that exit; every check runs in the parent, another process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "mim_prog.h"

static char dir[] = "/tmp/bpfrt-mim-links.XXXXXX";

static int sys(int cmd, union bpf_attr *a)
{
	int r = bpfrt_bpf(cmd, a, sizeof(*a));

	return r < 0 ? -errno : r;
}

static int map_new(uint32_t type, uint32_t vsize, uint32_t max, int inner)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = vsize;
	a.max_entries = max;
	a.inner_map_fd = inner >= 0 ? (uint32_t)inner : 0;
	return sys(BPF_MAP_CREATE, &a);
}

static int update(int map, uint32_t key, const void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	return sys(BPF_MAP_UPDATE_ELEM, &a);
}

static int del(int map, uint32_t key)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	return sys(BPF_MAP_DELETE_ELEM, &a);
}

static int path_op(int cmd, int fd, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = fd >= 0 ? (uint32_t)fd : 0;
	return sys(cmd, &a);
}

static uint32_t id_of(int fd)
{
	struct bpf_map_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return sys(BPF_OBJ_GET_INFO_BY_FD, &a) ? 0 : info.id;
}

/* mim_prog.h's program */
static int mim_prog(int outer)
{
	struct bpf_insn insns[MIM_PROG_LEN];
	union bpf_attr a;

	mim_prog_insns(insns, outer);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = MIM_PROG_LEN;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return sys(BPF_PROG_LOAD, &a);
}

static long run(int prog)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	return sys(BPF_PROG_TEST_RUN, &a) ? -1 : (long)a.test.retval;
}

/* an array of one u64, value v: its fd */
static int inner_new(uint64_t v)
{
	int fd = map_new(BPF_MAP_TYPE_ARRAY, 8, 1, -1);

	if (fd >= 0)
		update(fd, 0, &v);
	return fd;
}

/* The entry links of this user's directory: names not starting with a dot (the outer
 * maps' own links and the lock do) */
static int count_entries(void)
{
	char p[256];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (geteuid())
		snprintf(p, sizeof(p), "%s/.bpfrt-inner.%u", dir, (unsigned)geteuid());
	else
		snprintf(p, sizeof(p), "%s/.bpfrt-inner", dir);
	d = opendir(p);
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Run fn in a child that then exits (the storer gone): its exit status */
static int in_child(int (*fn)(void *), void *arg)
{
	int st = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char prog_pin[160], outer_pin[160];

/* the loader: fills an outer map, closes the inner map's fd, pins a program naming the
 * outer map (the outer map itself is never pinned) */
static int loader(void *arg)
{
	int inner = inner_new(42), outer, prog;

	(void)arg;
	outer = inner >= 0 ? map_new(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 1, inner) : -1;
	if (outer < 0 || update(outer, 0, &inner))
		return 1;
	close(inner);
	prog = mim_prog(outer);
	if (prog < 0 || path_op(BPF_OBJ_PIN, prog, prog_pin))
		return 2;
	return 0;
}

struct store {
	uint32_t keys[2];
	int nkeys;
	uint64_t value;
	uint32_t id; /* out: the inner map's id, through a pipe */
	int pipe;
};

/* a storer: a new inner map holding value, stored under each key of the pinned outer map */
static int storer(void *arg)
{
	struct store *s = arg;
	int outer = path_op(BPF_OBJ_GET, -1, outer_pin), inner = inner_new(s->value);
	uint32_t id;

	if (outer < 0 || inner < 0)
		return 1;
	for (int i = 0; i < s->nkeys; i++)
		if (update(outer, s->keys[i], &inner))
			return 2;
	id = id_of(inner);
	return write(s->pipe, &id, sizeof(id)) == sizeof(id) ? 0 : 3;
}

static uint32_t store_in_child(uint32_t k0, uint32_t k1, int nkeys, uint64_t value)
{
	struct store s = { { k0, k1 }, nkeys, value, 0, -1 };
	int p[2];
	uint32_t id = 0;

	if (pipe(p))
		return 0;
	s.pipe = p[1];
	T_EQ_INT(0, in_child(storer, &s));
	close(p[1]);
	if (read(p[0], &id, sizeof(id)) != sizeof(id))
		id = 0;
	close(p[0]);
	return id;
}

/* Is outer_id's entry inner_id linked in this user's directory? */
static int has_link(uint32_t outer_id, uint32_t inner_id)
{
	char p[256];

	if (geteuid())
		snprintf(p, sizeof(p), "%s/.bpfrt-inner.%u/%08x-%08x", dir, (unsigned)geteuid(),
			 outer_id, inner_id);
	else
		snprintf(p, sizeof(p), "%s/.bpfrt-inner/%08x-%08x", dir, outer_id, inner_id);
	return access(p, F_OK) == 0;
}

int main(void)
{
	uint32_t i1, i2, i3, outer_id;
	int prog, outer, tmpl;

	if (!t_scratch_dir(dir))
		T_SKIP("mkdtemp: %s", strerror(errno));
	setenv("BPFRT_FS", dir, 1);
	snprintf(prog_pin, sizeof(prog_pin), "%s/prog", dir);
	snprintf(outer_pin, sizeof(outer_pin), "%s/outer", dir);

	T_CASE("program pinned after its outer map was filled, loader exited");
	T_EQ_INT(0, in_child(loader, NULL));
	prog = path_op(BPF_OBJ_GET, -1, prog_pin);
	T_ASSERT(prog >= 0);
	T_EQ_INT(42, run(prog)); /* the kernel's answer; 1000 before */
	T_EQ_INT(1, count_entries());
	close(prog);
	unlink(prog_pin);

	/* a pinned outer map of two slots, filled by storers that exit */
	tmpl = inner_new(0);
	outer = tmpl >= 0 ? map_new(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 2, tmpl) : -1;
	T_CASE("pinned outer map");
	T_ASSERT(outer >= 0 && !path_op(BPF_OBJ_PIN, outer, outer_pin));
	close(tmpl);
	outer_id = id_of(outer);
	prog = mim_prog(outer);
	T_ASSERT(prog >= 0);

	T_CASE("one inner map in both slots, one slot deleted");
	i1 = store_in_child(0, 1, 2, 7);
	T_ASSERT(i1 != 0);
	T_EQ_INT(1, has_link(outer_id, i1));
	T_EQ_INT(7, run(prog));
	T_EQ_INT(0, del(outer, 0));
	T_EQ_INT(1000, run(prog));
	/* slot 1 still holds it: its link stays, and the entry is usable (storer gone) */
	T_EQ_INT(1, has_link(outer_id, i1));
	{
		uint32_t k = 1, id = 0;
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)outer;
		a.key = (uint64_t)(uintptr_t)&k;
		a.value = (uint64_t)(uintptr_t)&id;
		T_EQ_INT(0, sys(BPF_MAP_LOOKUP_ELEM, &a));
		T_EQ_INT(i1, id);
	}
	T_CASE("the other slot deleted too");
	T_EQ_INT(0, del(outer, 1));
	T_EQ_INT(0, has_link(outer_id, i1)); /* 1 before: it stayed until the unpin */

	T_CASE("an entry replaced");
	i2 = store_in_child(0, 0, 1, 8);
	T_EQ_INT(8, run(prog));
	T_EQ_INT(1, has_link(outer_id, i2));
	i3 = store_in_child(0, 0, 1, 9);
	T_ASSERT(i2 && i3 && i2 != i3);
	T_EQ_INT(9, run(prog)); /* the storers exited: the link keeps it */
	T_EQ_INT(0, has_link(outer_id, i2)); /* 1 before: the replaced entry's link stayed */
	T_EQ_INT(1, has_link(outer_id, i3));
	T_CASE("the last entry deleted");
	T_EQ_INT(0, del(outer, 0));
	T_EQ_INT(1000, run(prog));
	T_EQ_INT(0, has_link(outer_id, i3));
	close(prog);
	close(outer);
	unlink(outer_pin);
	return t_done();
}
