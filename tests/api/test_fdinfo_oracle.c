/* test_fdinfo_oracle.c - bpfrt_obj_fdinfo() against the kernel's /proc/self/fdinfo: the
 * same maps (types, sizes, flags, a frozen one, a hash without preallocation holding some
 * elements) created in the kernel and in bpfrt show the same bpf lines, ids aside, memlock
 * included (the kernel's map_mem_usage formulas, src/maps/memlock.c); a program's memlock,
 * type and tag match too.  Needs root and the kernel (skipped otherwise).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"

/* The kernel's fdinfo lines of fd from "map_type:"/"prog_type:" on, without the id line
 * and, for programs, without verified_insns and prog_jited (engines differ). */
static void kernel_lines(int fd, char *out, size_t cap)
{
	char path[64], line[256];
	FILE *f;
	int on = 0;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		on |= !strncmp(line, "map_type:", 9) || !strncmp(line, "prog_type:", 10);
		if (on)
			strncat(out, line, cap - strlen(out) - 1);
	}
	if (f)
		fclose(f);
}

/* Drop the lines whose key is one of keys (a space-separated list of "key:"). */
static void drop(char *text, const char *keys)
{
	char *p = text, *nl;

	while (*p) {
		char key[40];
		size_t klen = strcspn(p, ":");

		nl = strchr(p, '\n');
		nl = nl ? nl + 1 : p + strlen(p);
		snprintf(key, sizeof(key), " %.*s: ", (int)(klen < 30 ? klen : 30), p);
		if (strstr(keys, key))
			memmove(p, nl, strlen(nl) + 1);
		else
			p = nl;
	}
}

struct geo {
	const char *what;
	uint32_t type, key, value, max, flags;
	int fill;   /* elements to insert (hash without preallocation) */
	int freeze; /* BPF_MAP_FREEZE it */
};

static const struct geo geos[] = {
	{ "array", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0, 0, 0 },
	{ "array mmapable", BPF_MAP_TYPE_ARRAY, 4, 12, 1, BPF_F_MMAPABLE, 0, 0 },
	{ "array big value", BPF_MAP_TYPE_ARRAY, 4, 100, 300, 0, 0, 0 },
	{ "array frozen", BPF_MAP_TYPE_ARRAY, 4, 4, 1, BPF_F_RDONLY_PROG, 0, 1 },
	{ "percpu_array", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 3, 0, 0, 0 },
	{ "prog_array", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 8, 0, 0, 0 },
	{ "perf_event_array", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 2, 0, 0, 0 },
	{ "hash", BPF_MAP_TYPE_HASH, 4, 8, 64, 0, 0, 0 },
	{ "hash odd sizes", BPF_MAP_TYPE_HASH, 6, 13, 100, 0, 0, 0 },
	{ "hash no prealloc", BPF_MAP_TYPE_HASH, 4, 8, 64, BPF_F_NO_PREALLOC, 5, 0 },
	{ "percpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 16, 0, 0, 0 },
	{ "percpu_hash no prealloc", BPF_MAP_TYPE_PERCPU_HASH, 8, 4, 16, BPF_F_NO_PREALLOC, 3, 0 },
	{ "lru_hash", BPF_MAP_TYPE_LRU_HASH, 4, 4, 8, 0, 0, 0 },
	{ "lru_percpu_hash", BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 16, 32, 0, 0, 0 },
	{ "queue", BPF_MAP_TYPE_QUEUE, 0, 4, 16, 0, 0, 0 },
	{ "stack", BPF_MAP_TYPE_STACK, 0, 24, 5, 0, 0, 0 },
	{ "ringbuf", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0, 0, 0 },
	{ "ringbuf 64k", BPF_MAP_TYPE_RINGBUF, 0, 0, 65536, 0, 0, 0 },
};

static void fill(sys_fn sys, int fd, const struct geo *g)
{
	unsigned char key[64] = { 0 }, value[4096] = { 0 };
	union bpf_attr a;

	for (int i = 0; i < g->fill; i++) {
		key[0] = (unsigned char)i;
		elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, value, BPF_ANY);
	}
	if (g->freeze) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		sys(BPF_MAP_FREEZE, &a, sizeof(a));
	}
}

int main(void)
{
	char k[2048], b[2048];

	if (geteuid() != 0)
		T_SKIP("the kernel's maps need root");
	for (size_t i = 0; i < sizeof(geos) / sizeof(geos[0]); i++) {
		const struct geo *g = &geos[i];
		int kfd = create_map(kernel_bpf, g->type, g->key, g->value, g->max, g->flags, 0);
		int bfd = create_map(bpfrt_bpf, g->type, g->key, g->value, g->max, g->flags, 0);

		T_CASE(g->what);
		if (kfd < 0)
			T_SKIP("the kernel refuses %s: %s", g->what, strerror(-kfd));
		T_ASSERT(bfd >= 0);
		fill(kernel_bpf, kfd, g);
		fill(bpfrt_bpf, bfd, g);
		kernel_lines(kfd, k, sizeof(k));
		T_ASSERT(bpfrt_obj_fdinfo(bfd, b, sizeof(b)) > 0);
		drop(k, " map_id: ");
		drop(b, " map_id: ");
		T_EQ_STR(k, b);
		close(kfd);
		close(bfd);
	}

	T_CASE("a program: type, tag, memlock");
	{
		struct bpf_insn insns[64];
		union bpf_attr a;
		int n = 0, kfd, bfd;

		for (; n < 40; n++)
			insns[n] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
						      .dst_reg = 0, .imm = n };
		insns[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
		a.insns = (uint64_t)(uintptr_t)insns;
		a.insn_cnt = (uint32_t)n;
		a.license = (uint64_t)(uintptr_t)"GPL";
		kfd = kernel_bpf(BPF_PROG_LOAD, &a, sizeof(a));
		bfd = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
		T_ASSERT(kfd >= 0 && bfd >= 0);
		kernel_lines(kfd, k, sizeof(k));
		T_ASSERT(bpfrt_obj_fdinfo(bfd, b, sizeof(b)) > 0);
		drop(k, " prog_id: prog_jited: verified_insns: ");
		drop(b, " prog_id: prog_jited: verified_insns: ");
		T_EQ_STR(k, b);
		close(kfd);
		close(bfd);
	}

	T_CASE("errors");
	{
		int p[2];

		T_ASSERT(pipe(p) == 0);
		T_EQ_INT(-EBADF, bpfrt_obj_fdinfo(-1, b, sizeof(b)) < 0 ? -errno : 0);
		T_ASSERT(bpfrt_obj_fdinfo(p[0], b, sizeof(b)) < 0);
		close(p[0]);
		close(p[1]);
	}
	return t_done();
}
