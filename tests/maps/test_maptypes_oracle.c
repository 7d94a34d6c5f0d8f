/* test_maptypes_oracle.c - the XDP redirect maps (devmap, devmap_hash, cpumap, xskmap),
 * stack_trace and cgroup_array, and corners of bpf() (LPM trie batches, per-CPU padding
 * bytes, MAP_CREATE's bytes from 72 on, BPF_F_LOCK on batches) against the kernel: one
 * script of
 * MAP_CREATE attribute checks (key/value sizes, flags, max_entries), GET_INFO's map_flags
 * and element operations (update, lookup with the bytes returned, delete, get_next_key,
 * lookup_and_delete) runs on the kernel and on bpfrt_bpf(), writing one line per step;
 * the two transcripts must be equal line by line.  Then programs: bpf_redirect_map()'s
 * test-run results and the verifier's map type <-> helper rules, same answers.
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* MAP_CREATE's verdict (errno, or "ok" and the flags GET_INFO reports) */
static void try_create(sys_fn sys, struct transcript *t, uint32_t type, uint32_t key,
		       uint32_t value, uint32_t max, uint32_t flags)
{
	int fd = create_map(sys, type, key, value, max, flags, 0);
	struct bpf_map_info info;

	say(t, "create type %u key %u value %u max %u flags %#x: ", type, key, value, max,
	    flags);
	if (fd < 0) {
		say(t, "%d\n", fd);
		return;
	}
	if (map_info(sys, fd, &info))
		say(t, "ok, info %d\n", -errno);
	else
		say(t, "ok, map_flags %#x\n", info.map_flags);
	close(fd);
}

struct script {
	sys_fn sys;
	struct transcript *t;
	int fd;
	uint32_t value_size;
};

static void upd(struct script *s, const char *what, uint32_t key, uint32_t v0, uint32_t v1,
		uint64_t flags)
{
	uint32_t v[2] = { v0, v1 };

	/* v1 may be the map's own fd, whose number differs between the two runs */
	say(s->t, "update %s key %u (%u, %d) flags %llu: %d\n", what, key, v0,
	    v1 == (uint32_t)s->fd ? -100 : (int)v1, (unsigned long long)flags,
	    elem(s->sys, BPF_MAP_UPDATE_ELEM, s->fd, &key, v, flags));
}

/* an update whose value is an fd (numbers differ between the two runs: not printed) */
static void upd_fd(struct script *s, const char *what, uint32_t key, int fd, uint64_t flags)
{
	uint32_t v[2] = { (uint32_t)fd, 0 };

	say(s->t, "update %s key %u flags %llu: %d\n", what, key, (unsigned long long)flags,
	    elem(s->sys, BPF_MAP_UPDATE_ELEM, s->fd, &key, v, flags));
}

static void lookup(struct script *s, int cmd, uint32_t key)
{
	unsigned char v[64];
	int r;

	memset(v, 0xa5, sizeof(v));
	r = elem(s->sys, cmd, s->fd, &key, v, 0);
	say(s->t, "%s key %u: %d", cmd == BPF_MAP_LOOKUP_ELEM ? "lookup" : "lookup_and_delete",
	    key, r);
	for (uint32_t i = 0; !r && i < s->value_size + 4 && i < sizeof(v); i++)
		say(s->t, "%s%02x", i ? "" : " value ", v[i]);
	say(s->t, "\n");
}

static void del(struct script *s, uint32_t key)
{
	say(s->t, "delete key %u: %d\n", key,
	    elem(s->sys, BPF_MAP_DELETE_ELEM, s->fd, &key, NULL, 0));
}

static void next(struct script *s, const uint32_t *key)
{
	uint32_t nk = 0xdead;
	int r = elem(s->sys, BPF_MAP_GET_NEXT_KEY, s->fd, key, &nk, 0);

	say(s->t, "next of %d: %d -> %u\n", key ? (int)*key : -1, r, nk);
}

/* every key the walk visits, from the start */
static void walk(struct script *s)
{
	uint32_t k, nk;
	int n = 0;

	say(s->t, "walk:");
	for (int r = elem(s->sys, BPF_MAP_GET_NEXT_KEY, s->fd, NULL, &nk, 0); !r && n < 64;
	     r = elem(s->sys, BPF_MAP_GET_NEXT_KEY, s->fd, &k, &nk, 0), n++) {
		say(s->t, " %u", nk);
		k = nk;
	}
	say(s->t, "\n");
}

static int open_map(struct script *s, uint32_t type, uint32_t value, uint32_t max)
{
	s->fd = create_map(s->sys, type, 4, value, max, 0, 0);
	s->value_size = value;
	say(s->t, "map type %u value %u max %u: %s\n", type, value, max,
	    s->fd >= 0 ? "ok" : "failed");
	return s->fd >= 0;
}

static void creates(sys_fn sys, struct transcript *t)
{
	static const uint32_t types[] = { BPF_MAP_TYPE_DEVMAP, BPF_MAP_TYPE_DEVMAP_HASH,
					  BPF_MAP_TYPE_CPUMAP, BPF_MAP_TYPE_XSKMAP,
					  BPF_MAP_TYPE_STACK_TRACE, BPF_MAP_TYPE_CGROUP_ARRAY };
	static const uint32_t keys[] = { 4, 8, 0 };
	static const uint32_t values[] = { 0, 3, 4, 8, 12, 16, 32, 1016, 1024, 4064, 4096 };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint32_t ty = types[i], good = ty == BPF_MAP_TYPE_STACK_TRACE ? 32 : 4;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			try_create(sys, t, ty, keys[k], good, 4, 0);
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++)
			try_create(sys, t, ty, 4, values[v], 4, 0);
		for (int b = 0; b < 14; b++)
			try_create(sys, t, ty, 4, good, 4, 1u << b);
		try_create(sys, t, ty, 4, 4064, 4, BPF_F_STACK_BUILD_ID);
		try_create(sys, t, ty, 4, 4096, 4, BPF_F_STACK_BUILD_ID);
		try_create(sys, t, ty, 4, good, 0, 0);
		try_create(sys, t, ty, 4, good, 3, 0);
		/* 2^31 + 1 slots: refused by the checks of these types; the array-like
		 * ones try the allocation (16 GiB in the kernel, whose outcome depends on
		 * the machine's memory; bpfrt: -ENOMEM) */
		if (ty == BPF_MAP_TYPE_DEVMAP_HASH || ty == BPF_MAP_TYPE_CPUMAP ||
		    ty == BPF_MAP_TYPE_STACK_TRACE)
			try_create(sys, t, ty, 4, good, (1u << 31) + 1, 0);
		try_create(sys, t, ty, 4, good, 100000, 0);
	}
	/* BPF_MAP_TYPE_ARENA (33): refused with EPERM after the generic checks on this
	 * kernel, attributes arena_map_alloc would refuse included; map_extra allowed as
	 * for bloom filters; types past it unknown (EINVAL) */
	try_create(sys, t, 33, 0, 0, 1, BPF_F_MMAPABLE);
	try_create(sys, t, 33, 4, 0, 1, BPF_F_MMAPABLE);
	try_create(sys, t, 33, 0, 0, 1, 0);
	try_create(sys, t, 33, 0, 0, 0, BPF_F_MMAPABLE);
	try_create(sys, t, 33, 0, 0, 1, BPF_F_RDONLY | BPF_F_WRONLY);
	say(t, "arena map_extra: %d\n", create_map(sys, 33, 0, 0, 1, BPF_F_MMAPABLE, 1ull << 32));
	say(t, "hash map_extra: %d\n", create_map(sys, BPF_MAP_TYPE_HASH, 4, 4, 1, 0, 1ull << 32));
	try_create(sys, t, 34, 0, 0, 1, BPF_F_MMAPABLE);
	try_create(sys, t, 35, 4, 4, 1, 0);
}

static void elements(sys_fn sys, struct transcript *t)
{
	struct script s = { .sys = sys, .t = t };
	uint32_t k3 = 3, k9 = 9, k12345 = 12345;
	int unix_fd, xsk_fd, xsk2_fd, cg_fd, tmp_fd, null_fd;

	if (open_map(&s, BPF_MAP_TYPE_DEVMAP, 8, 4)) {
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd(&s, "lo", 0, 1, 0, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd(&s, "lo no prog", 0, 1, -1, 0);
		upd(&s, "lo with a map fd as prog", 0, 1, s.fd, 0);
		upd(&s, "no such interface", 0, 99999, 0, 0);
		upd(&s, "ifindex 0", 1, 0, 0, 0);
		upd(&s, "ifindex 0 no prog", 1, 0, -1, 0);
		upd(&s, "ifindex 0 with prog", 1, 0, 3, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 1);
		upd(&s, "past the end", 4, 1, 0, 0);
		upd(&s, "noexist", 0, 1, 0, BPF_NOEXIST);
		upd(&s, "exist", 0, 1, 0, BPF_EXIST);
		upd(&s, "flags 4", 0, 1, 0, 4);
		upd(&s, "exist on empty", 2, 1, 0, BPF_EXIST);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 2);
		walk(&s);
		del(&s, 3);
		del(&s, 4);
		del(&s, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		next(&s, NULL);
		next(&s, &k3);
		next(&s, &k9);
		lookup(&s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, 2);
		close(s.fd);
	}
	if (open_map(&s, BPF_MAP_TYPE_DEVMAP, 4, 4)) {
		upd(&s, "lo", 0, 1, 77, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		close(s.fd);
	}
	if (open_map(&s, BPF_MAP_TYPE_DEVMAP_HASH, 8, 2)) {
		upd(&s, "lo", 100, 1, 0, 0);
		upd(&s, "noexist", 100, 1, 0, BPF_NOEXIST);
		upd(&s, "exist", 100, 1, 0, BPF_EXIST);
		upd(&s, "exist on absent", 5, 1, 0, BPF_EXIST);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 5);
		upd(&s, "third of two", 6, 1, 0, 0);
		upd(&s, "ifindex 0", 7, 0, 0, 0);
		upd(&s, "no such interface", 7, 99999, 0, 0);
		upd(&s, "map fd as prog", 100, 1, s.fd, 0);
		upd(&s, "flags 4", 100, 1, 0, 4);
		walk(&s);
		next(&s, &k12345);
		del(&s, 12345);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 12345);
		del(&s, 100);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 100);
		walk(&s);
		close(s.fd);
	}
	if (open_map(&s, BPF_MAP_TYPE_DEVMAP_HASH, 4, 8)) {
		for (uint32_t k = 0; k < 20; k += 3)
			upd(&s, "add", k, 1, 0, 0);
		upd(&s, "replace", 9, 1, 0, 0);
		walk(&s);
		del(&s, 9);
		upd(&s, "add back", 9, 1, 0, 0);
		upd(&s, "add", 1, 1, 0, 0);
		walk(&s);
		close(s.fd);
	}
	if (open_map(&s, BPF_MAP_TYPE_CPUMAP, 8, 4)) {
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd(&s, "qsize 192", 0, 192, 0, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd(&s, "qsize 16385", 0, 16385, 0, 0);
		upd(&s, "map fd as prog", 0, 16384, s.fd, 0);
		upd(&s, "no prog", 0, 16384, -1, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd(&s, "qsize 0", 1, 0, 0, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 1);
		upd(&s, "past the end", 4, 10, 0, 0);
		upd(&s, "noexist", 0, 10, 0, BPF_NOEXIST);
		upd(&s, "exist", 0, 10, 0, BPF_EXIST);
		upd(&s, "flags 4", 0, 10, 0, 4);
		walk(&s);
		del(&s, 1);
		del(&s, 4);
		del(&s, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		next(&s, &k3);
		lookup(&s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, 1);
		close(s.fd);
	}
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	unix_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	xsk_fd = socket(AF_XDP, SOCK_RAW, 0);
	xsk2_fd = socket(AF_XDP, SOCK_RAW, 0);
	if (open_map(&s, BPF_MAP_TYPE_XSKMAP, 4, 4)) {
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd(&s, "closed fd", 0, 99999, 0, 0);
		upd_fd(&s, "not a socket", 0, null_fd, 0);
		upd_fd(&s, "unix socket", 0, unix_fd, 0);
		upd_fd(&s, "AF_XDP exist on empty", 0, xsk_fd, BPF_EXIST);
		upd_fd(&s, "AF_XDP", 0, xsk_fd, 0);
		upd_fd(&s, "same socket noexist", 0, xsk_fd, BPF_NOEXIST);
		upd_fd(&s, "other socket noexist", 0, xsk2_fd, BPF_NOEXIST);
		upd_fd(&s, "other socket exist", 0, xsk2_fd, BPF_EXIST);
		upd_fd(&s, "flags 4", 0, xsk_fd, 4);
		upd_fd(&s, "past the end", 9, xsk_fd, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		walk(&s);
		del(&s, 0);
		del(&s, 0);
		del(&s, 9);
		lookup(&s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, 0);
		close(s.fd);
	}
	if (open_map(&s, BPF_MAP_TYPE_STACK_TRACE, 16, 5)) {
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 7);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 8);
		upd(&s, "any", 0, 1, 1, 0);
		upd(&s, "past the buckets", 8, 1, 1, 0);
		del(&s, 0);
		del(&s, 7);
		del(&s, 8);
		next(&s, NULL);
		next(&s, &k3);
		next(&s, &k12345);
		lookup(&s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, 0);
		lookup(&s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, 8);
		close(s.fd);
	}
	cg_fd = open("/sys/fs/cgroup/unified", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) /* a host where cgroup v2 is mounted at the top */
		cg_fd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tmp_fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (open_map(&s, BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4)) {
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd_fd(&s, "cgroup v2 root", 0, cg_fd, 0);
		lookup(&s, BPF_MAP_LOOKUP_ELEM, 0);
		upd_fd(&s, "a directory elsewhere", 1, tmp_fd, 0);
		upd(&s, "closed fd", 1, 99999, 0, 0);
		upd_fd(&s, "noexist", 0, cg_fd, BPF_NOEXIST);
		upd_fd(&s, "exist", 0, cg_fd, BPF_EXIST);
		upd_fd(&s, "past the end", 9, cg_fd, 0);
		walk(&s);
		del(&s, 0);
		del(&s, 0);
		del(&s, 9);
		next(&s, &k3);
		lookup(&s, BPF_MAP_LOOKUP_AND_DELETE_ELEM, 0);
		close(s.fd);
	}
	close(unix_fd);
	close(xsk_fd);
	close(xsk2_fd);
	close(cg_fd);
	close(tmp_fd);
	close(null_fd);
}

/* ---- programs ----------------------------------------------------------------------- */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_IMM(reg, imm) INSN(BPF_ALU64 | BPF_MOV | BPF_K, reg, 0, 0, imm)
#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* load (and test-run with a 64-byte packet when it loads): errno or retval, and the
 * first line of the log on failure */
static void run_prog(sys_fn sys, struct transcript *t, const char *what, uint32_t type,
		     const struct bpf_insn *insns, uint32_t n)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	int fd = load_prog(sys, t, what, type, insns, n);

	if (fd < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (type == BPF_PROG_TYPE_RAW_TRACEPOINT) { /* context only: 8 bytes of arguments */
		a.test.ctx_in = (uint64_t)(uintptr_t)pkt;
		a.test.ctx_size_in = 8;
	} else {
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.repeat = 1;
	}
	if (sys(BPF_PROG_TEST_RUN, &a, sizeof(a)))
		say(t, "run %d\n", -errno);
	else
		say(t, "retval %u\n", a.test.retval);
	close(fd);
}

/* lddw reg, map fd (two instructions) */
static void ld_map(struct bpf_insn *p, uint32_t *n, uint8_t reg, int fd)
{
	p[(*n)++] = INSN(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd);
	p[(*n)++] = INSN(0, 0, 0, 0, 0);
}

static void programs(sys_fn sys, struct transcript *t)
{
	int dev = create_map(sys, BPF_MAP_TYPE_DEVMAP, 4, 4, 4, 0, 0);
	int cpu = create_map(sys, BPF_MAP_TYPE_CPUMAP, 4, 4, 4, 0, 0);
	int xsk = create_map(sys, BPF_MAP_TYPE_XSKMAP, 4, 4, 4, 0, 0);
	int st = create_map(sys, BPF_MAP_TYPE_STACK_TRACE, 4, 32, 4, 0, 0);
	int cga = create_map(sys, BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4, 0, 0);
	int hash = create_map(sys, BPF_MAP_TYPE_HASH, 4, 4, 4, 0, 0);
	uint32_t k0 = 0, lo[1] = { 1 }, q[1] = { 64 }, cg[1];
	static const struct {
		const char *what;
		int map; /* 0 dev, 1 cpu, 2 xsk, 3 stack, 4 cgroup, 5 hash */
		uint32_t type;
		int32_t key, flags, helper;
	} cases[] = {
		{ "devmap redirect to a set slot", 0, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_redirect_map },
		{ "devmap redirect to an empty slot", 0, BPF_PROG_TYPE_XDP, 1, 0, BPF_FUNC_redirect_map },
		{ "devmap empty slot, fallback XDP_PASS", 0, BPF_PROG_TYPE_XDP, 1, XDP_PASS, BPF_FUNC_redirect_map },
		{ "devmap empty slot, fallback XDP_TX", 0, BPF_PROG_TYPE_XDP, 2, XDP_TX, BPF_FUNC_redirect_map },
		{ "devmap past the end, fallback XDP_DROP", 0, BPF_PROG_TYPE_XDP, 99, XDP_DROP, BPF_FUNC_redirect_map },
		{ "devmap broadcast", 0, BPF_PROG_TYPE_XDP, 1, BPF_F_BROADCAST, BPF_FUNC_redirect_map },
		{ "devmap unknown flag", 0, BPF_PROG_TYPE_XDP, 0, 1 << 6, BPF_FUNC_redirect_map },
		{ "cpumap redirect to a set slot", 1, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_redirect_map },
		{ "cpumap empty slot, fallback XDP_PASS", 1, BPF_PROG_TYPE_XDP, 1, XDP_PASS, BPF_FUNC_redirect_map },
		{ "cpumap broadcast flag", 1, BPF_PROG_TYPE_XDP, 0, BPF_F_BROADCAST, BPF_FUNC_redirect_map },
		{ "xskmap empty slot, fallback XDP_PASS", 2, BPF_PROG_TYPE_XDP, 0, XDP_PASS, BPF_FUNC_redirect_map },
		{ "redirect_map on a hash", 5, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_redirect_map },
		{ "redirect_map from tc", 0, BPF_PROG_TYPE_SCHED_CLS, 0, 0, BPF_FUNC_redirect_map },
		{ "lookup in a devmap", 0, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_map_lookup_elem },
		{ "lookup in a cpumap", 1, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_map_lookup_elem },
		{ "lookup in an xskmap", 2, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_map_lookup_elem },
		{ "lookup in a stack trace map", 3, BPF_PROG_TYPE_KPROBE, 0, 0, BPF_FUNC_map_lookup_elem },
		{ "delete in a devmap", 0, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_map_delete_elem },
		{ "lookup in a cgroup array", 4, BPF_PROG_TYPE_KPROBE, 0, 0, BPF_FUNC_map_lookup_elem },
		{ "get_stackid on a hash", 5, BPF_PROG_TYPE_KPROBE, 0, 0, BPF_FUNC_get_stackid },
		{ "get_stackid", 3, BPF_PROG_TYPE_KPROBE, 0, 0, BPF_FUNC_get_stackid },
		{ "get_stackid from xdp", 3, BPF_PROG_TYPE_XDP, 0, 0, BPF_FUNC_get_stackid },
		{ "current_task_under_cgroup", 4, BPF_PROG_TYPE_KPROBE, 0, 0, BPF_FUNC_current_task_under_cgroup },
		{ "current task under the v2 root", 4, BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0, BPF_FUNC_current_task_under_cgroup },
		{ "current task, empty slot", 4, BPF_PROG_TYPE_RAW_TRACEPOINT, 1, 0, BPF_FUNC_current_task_under_cgroup },
		{ "current task, past the end", 4, BPF_PROG_TYPE_RAW_TRACEPOINT, 7, 0, BPF_FUNC_current_task_under_cgroup },
		{ "current_task_under_cgroup on a devmap", 0, BPF_PROG_TYPE_KPROBE, 0, 0, BPF_FUNC_current_task_under_cgroup },
	};
	int maps[] = { dev, cpu, xsk, st, cga, hash };

	elem(sys, BPF_MAP_UPDATE_ELEM, dev, &k0, lo, 0);
	elem(sys, BPF_MAP_UPDATE_ELEM, cpu, &k0, q, 0);
	cg[0] = open("/sys/fs/cgroup/unified", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((int)cg[0] < 0)
		cg[0] = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	elem(sys, BPF_MAP_UPDATE_ELEM, cga, &k0, cg, 0);
	close((int)cg[0]);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bpf_insn p[16];
		uint32_t n = 0;
		int32_t h = cases[i].helper;

		if (h == BPF_FUNC_redirect_map || h == BPF_FUNC_current_task_under_cgroup) {
			ld_map(p, &n, 1, maps[cases[i].map]);
			p[n++] = MOV_IMM(2, cases[i].key);
			p[n++] = MOV_IMM(3, cases[i].flags);
		} else if (h == BPF_FUNC_get_stackid) {
			ld_map(p, &n, 2, maps[cases[i].map]);
			p[n++] = MOV_IMM(3, 0);
		} else { /* lookup/delete with key 0 on the stack */
			p[n++] = INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0);
			ld_map(p, &n, 1, maps[cases[i].map]);
			p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, BPF_REG_10, 0, 0);
			p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4);
		}
		if (h == BPF_FUNC_current_task_under_cgroup &&
		    cases[i].type == BPF_PROG_TYPE_RAW_TRACEPOINT) {
			p[n++] = CALL(h); /* its answer is the return value */
			p[n++] = EXIT();
		} else if (h == BPF_FUNC_get_stackid || h == BPF_FUNC_current_task_under_cgroup ||
		    h == BPF_FUNC_map_lookup_elem || h == BPF_FUNC_map_delete_elem) {
			p[n++] = CALL(h);
			p[n++] = MOV_IMM(0, 2);
			p[n++] = EXIT();
		} else {
			p[n++] = CALL(h);
			p[n++] = EXIT();
		}
		run_prog(sys, t, cases[i].what, cases[i].type, p, n);
	}
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		close(maps[i]);
}


/* ---- bpf() corners ------------------------------------------------------------------- */

static void batch(sys_fn sys, struct transcript *t, const char *what, int cmd, int fd,
		  uint32_t ks, uint32_t vs, uint32_t count, uint64_t elem_flags, void *keys,
		  void *values, void *in, void *out)
{
	union bpf_attr a;
	int r;

	memset(&a, 0, sizeof(a));
	a.batch.map_fd = (uint32_t)fd;
	a.batch.keys = (uint64_t)(uintptr_t)keys;
	a.batch.values = (uint64_t)(uintptr_t)values;
	a.batch.count = count;
	a.batch.elem_flags = elem_flags;
	a.batch.in_batch = (uint64_t)(uintptr_t)in;
	a.batch.out_batch = (uint64_t)(uintptr_t)out;
	if (cmd == BPF_MAP_LOOKUP_BATCH) {
		memset(keys, 0xa5, (size_t)count * ks);
		memset(values, 0xa5, (size_t)count * vs);
	}
	r = sys(cmd, &a, sizeof(a)) ? -errno : 0;
	say(t, "%s: %d count %u", what, r, a.batch.count);
	for (uint32_t i = 0; cmd == BPF_MAP_LOOKUP_BATCH && (!r || r == -ENOENT) &&
			     i < a.batch.count; i++) {
		say(t, " ");
		for (uint32_t j = 0; j < ks; j++)
			say(t, "%02x", ((unsigned char *)keys)[i * ks + j]);
		say(t, "=");
		for (uint32_t j = 0; j < vs; j++)
			say(t, "%02x", ((unsigned char *)values)[i * vs + j]);
	}
	say(t, "\n");
}

static void corners(sys_fn sys, struct transcript *t)
{
	struct lpm_key {
		uint32_t prefixlen;
		uint8_t addr[4];
	} k[4] = { { 8, { 10 } }, { 16, { 10, 1 } }, { 24, { 192, 168, 1 } }, { 32, { 10, 1, 2, 3 } } };
	unsigned char keys[64 * 8], values[64 * 8], big[4096], tok[8] = { 0 };
	uint32_t v[4] = { 1, 2, 3, 4 }, ncpus, stride, key;
	union bpf_attr a;
	int fd;

	/* LPM trie batches */
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_LPM_TRIE;
	a.key_size = 8;
	a.value_size = 4;
	a.max_entries = 16;
	a.map_flags = BPF_F_NO_PREALLOC;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	say(t, "lpm create: %s\n", fd >= 0 ? "ok" : "failed");
	batch(sys, t, "lpm update_batch", BPF_MAP_UPDATE_BATCH, fd, 8, 4, 3, 0, k, v, NULL, NULL);
	batch(sys, t, "lpm lookup_batch", BPF_MAP_LOOKUP_BATCH, fd, 8, 4, 16, 0, keys, values,
	      NULL, tok);
	batch(sys, t, "lpm lookup_batch of 2", BPF_MAP_LOOKUP_BATCH, fd, 8, 4, 2, 0, keys, values,
	      NULL, tok);
	batch(sys, t, "lpm lookup_batch on", BPF_MAP_LOOKUP_BATCH, fd, 8, 4, 2, 0, keys, values,
	      tok, tok);
	batch(sys, t, "lpm lookup_batch BPF_F_LOCK", BPF_MAP_LOOKUP_BATCH, fd, 8, 4, 16,
	      BPF_F_LOCK, keys, values, NULL, tok);
	batch(sys, t, "lpm lookup_and_delete_batch", BPF_MAP_LOOKUP_AND_DELETE_BATCH, fd, 8, 4,
	      16, 0, keys, values, NULL, tok);
	batch(sys, t, "lpm delete_batch", BPF_MAP_DELETE_BATCH, fd, 8, 4, 2, 0, k, NULL, NULL,
	      NULL);
	batch(sys, t, "lpm delete_batch again", BPF_MAP_DELETE_BATCH, fd, 8, 4, 2, 0, k, NULL,
	      NULL, NULL);
	batch(sys, t, "lpm lookup_batch after", BPF_MAP_LOOKUP_BATCH, fd, 8, 4, 16, 0, keys,
	      values, NULL, tok);
	close(fd);

	/* BPF_F_LOCK on maps without a bpf_spin_lock */
	fd = create_map(sys, BPF_MAP_TYPE_HASH, 4, 4, 8, 0, 0);
	batch(sys, t, "hash (empty) lookup_batch BPF_F_LOCK", BPF_MAP_LOOKUP_BATCH, fd, 4, 4, 8,
	      BPF_F_LOCK, keys, values, NULL, tok);
	key = 1;
	elem(sys, BPF_MAP_UPDATE_ELEM, fd, &key, v, 0);
	batch(sys, t, "hash lookup_batch BPF_F_LOCK", BPF_MAP_LOOKUP_BATCH, fd, 4, 4, 8,
	      BPF_F_LOCK, keys, values, NULL, tok);
	batch(sys, t, "hash lookup_and_delete_batch BPF_F_LOCK", BPF_MAP_LOOKUP_AND_DELETE_BATCH,
	      fd, 4, 4, 8, BPF_F_LOCK, keys, values, NULL, tok);
	batch(sys, t, "hash update_batch BPF_F_LOCK", BPF_MAP_UPDATE_BATCH, fd, 4, 4, 1,
	      BPF_F_LOCK, &key, v, NULL, NULL);
	batch(sys, t, "hash lookup_batch flags 8", BPF_MAP_LOOKUP_BATCH, fd, 4, 4, 8, 8, keys,
	      values, NULL, tok);
	close(fd);
	fd = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 4, 8, 0, 0);
	batch(sys, t, "array lookup_batch BPF_F_LOCK", BPF_MAP_LOOKUP_BATCH, fd, 4, 4, 8,
	      BPF_F_LOCK, keys, values, NULL, tok);
	batch(sys, t, "array update_batch BPF_F_LOCK", BPF_MAP_UPDATE_BATCH, fd, 4, 4, 1,
	      BPF_F_LOCK, &key, v, NULL, NULL);
	close(fd);

	/* per-CPU values of 4 and 12 bytes: the caller's padding bytes come back */
	ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	for (int i = 0; i < 6; i++) {
		static const uint32_t types[] = { BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_PERCPU_HASH,
						  BPF_MAP_TYPE_LRU_PERCPU_HASH };
		uint32_t vs = i < 3 ? 4 : 12, ty = types[i % 3];
		int r;

		stride = (vs + 7) & ~7u;
		if (ncpus * stride > sizeof(big))
			break;
		fd = create_map(sys, ty, 4, vs, 4, 0, 0);
		for (uint32_t b = 0; b < ncpus * stride; b++)
			big[b] = (unsigned char)(0x10 + b);
		key = 0;
		r = elem(sys, BPF_MAP_UPDATE_ELEM, fd, &key, big, 0);
		memset(big, 0xee, sizeof(big));
		say(t, "per-cpu type %u value %u: update %d lookup %d:", ty, vs, r,
		    elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &key, big, 0));
		for (uint32_t b = 0; b < ncpus * stride; b++)
			say(t, "%02x", big[b]);
		say(t, "\n");
		close(fd);
	}

	/* MAP_CREATE bytes 64..127, one at a time, with and without BPF_F_TOKEN_FD and
	 * BPF_F_VTYPE_BTF_OBJ_FD */
	for (uint32_t off = 64; off < 128; off += 4) {
		for (int f = 0; f < 3; f++) {
			unsigned char raw[128] = { 0 };

			memcpy(&a, raw, sizeof(raw));
			memset(&a, 0, sizeof(a));
			a.map_type = BPF_MAP_TYPE_HASH;
			a.key_size = 4;
			a.value_size = 4;
			a.max_entries = 4;
			a.map_flags = f == 0 ? 0 : f == 1 ? 1u << 15 : 1u << 16;
			((unsigned char *)&a)[off] = 1;
			fd = sys(BPF_MAP_CREATE, &a, 128);
			say(t, "create with byte %u = 1, flags %#x: %d\n", off, a.map_flags,
			    fd < 0 ? -errno : 0);
			if (fd >= 0)
				close(fd);
		}
	}
	{
		static const struct {
			const char *what;
			int32_t token;
			uint32_t flags;
			int hash;       /* 0 none, 1 unreadable, 2 readable */
			uint32_t size;
		} c[] = {
			{ "token flag, closed fd", 99999, 1u << 16, 0, 0 },
			{ "token flag, fd 0", 0, 1u << 16, 0, 0 },
			{ "token flag, bad key size first", 0, 1u << 16, 0, 0 },
			{ "token fd without the flag", 99999, 0, 0, 0 },
			{ "excl hash, size 31", 0, 0, 2, 31 },
			{ "excl hash unreadable, size 32", 0, 0, 1, 32 },
			{ "excl size without hash", 0, 0, 0, 32 },
		};
		for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			unsigned char digest[32] = { 1 };
			uint64_t h = c[i].hash == 1 ? 8 : c[i].hash == 2 ? (uint64_t)(uintptr_t)digest : 0;

			memset(&a, 0, sizeof(a));
			a.map_type = BPF_MAP_TYPE_HASH;
			a.key_size = i == 2 ? 0 : 4;
			a.value_size = 4;
			a.max_entries = 4;
			a.map_flags = c[i].flags;
			memcpy((char *)&a + 76, &c[i].token, 4);
			memcpy((char *)&a + 80, &h, 8);
			memcpy((char *)&a + 88, &c[i].size, 4);
			fd = sys(BPF_MAP_CREATE, &a, 128);
			say(t, "create, %s: %d\n", c[i].what, fd < 0 ? -errno : 0);
			if (fd >= 0)
				close(fd);
		}
	}
}

int main(void)
{
	static struct transcript kern, ours;
	static const script_fn parts[] = { creates, elements, programs, corners, NULL };
	int probe;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel's bpf()");
	probe = create_map(kernel_bpf, BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0, 0);
	if (probe < 0)
		T_SKIP("the kernel refuses MAP_CREATE (%s)", strerror(-probe));
	close(probe);
	if (transcript_run("maptypes", parts, &kern, &ours))
		return 1;
	compare_transcripts(&kern, &ours);
	if (getenv("MAPTYPES_DUMP"))
		fputs(kern.text, stdout);
	return t_done();
}
