/* test_local_storage_oracle.c - task, inode and cgroup storage maps (src/maps/sk_storage.c)
 * against the kernel: one script on the kernel's bpf() and on bpfrt_bpf(), a line per
 * step, equal line by line:
 *   - MAP_CREATE of each type: BTF required (an int key), BPF_F_NO_PREALLOC required,
 *     max_entries 0, key 4, the value size limit, other flags;
 *   - element commands keyed by each type's fds (task: pidfds of this process and of a
 *     reaped child, inode: files, O_PATH, sockets, cgroup: cgroup v2 directories) and
 *     by fds of the wrong kind, closed fds, flags, values kept per owner, delete,
 *     get_next_key, lookup_and_delete;
 *   - the map <-> helper rule for programs (bpf_map_lookup_elem is refused).
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#define TRANSCRIPT_SIZE (1 << 16)
#include "transcript.h"
#include "storage_oracle.h"
#include "verifier/cases/case.h"

#define CGRP_STORAGE 32 /* BPF_MAP_TYPE_CGRP_STORAGE, newer than the uapi header */

static const struct {
	uint32_t type;
	const char *name;
} types[] = {
	{ BPF_MAP_TYPE_INODE_STORAGE, "inode" },
	{ BPF_MAP_TYPE_TASK_STORAGE, "task" },
	{ CGRP_STORAGE, "cgrp" },
};

static void creates(sys_fn sys, struct transcript *t, uint32_t ty, const char *tn)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "%s ", tn);
	storage_creates(sys, t, ty, prefix);
}

/* the fds the element commands use as keys, made once for both sides */
enum { K_PIDFD, K_PIDFD_REAPED, K_FILE, K_FILE2, K_OPATH, K_SOCK, K_CG_ROOT, K_CG_CHILD,
       K_DIR, K_BAD, K_NEG, N_KEYS };
static const char *const key_names[N_KEYS] = {
	"pidfd self", "pidfd reaped", "file", "other file", "O_PATH", "socket", "cgroup root",
	"cgroup child", "plain dir", "closed fd", "fd -1"
};
static int keys[N_KEYS];
static char child_cg[128];

static void make_keys(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	pid_t child;

	keys[K_PIDFD] = (int)syscall(SYS_pidfd_open, getpid(), 0);
	child = fork();
	if (child == 0)
		_exit(0);
	keys[K_PIDFD_REAPED] = (int)syscall(SYS_pidfd_open, child, 0);
	waitpid(child, NULL, 0);
	keys[K_FILE] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	keys[K_FILE2] = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	keys[K_OPATH] = open("/tmp", O_PATH | O_CLOEXEC);
	keys[K_SOCK] = socket(AF_INET, SOCK_DGRAM, 0);
	keys[K_CG_ROOT] = -1;
	for (size_t i = 0; i < 2 && keys[K_CG_ROOT] < 0; i++) {
		keys[K_CG_ROOT] = open(roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(child_cg, sizeof(child_cg), "%s/bpfrt-local-storage-%d", roots[i],
			 (int)getpid());
	}
	keys[K_CG_CHILD] = -1;
	if (keys[K_CG_ROOT] >= 0 && !mkdir(child_cg, 0755))
		keys[K_CG_CHILD] = open(child_cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	keys[K_DIR] = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	keys[K_BAD] = 9999;
	keys[K_NEG] = -1;
}

static void elements(sys_fn sys, struct transcript *t, uint32_t ty, const char *tn)
{
	int fd = storage_map(sys, ty);
	unsigned char v[16], out[16];
	int next, r;

	if (fd < 0) {
		say(t, "%s elements: create %d\n", tn, fd);
		return;
	}
	for (int k = 0; k < N_KEYS; k++) {
		const int *key = &keys[k];
		const char *kn = key_names[k];

		memset(v, 0x10 + k, sizeof(v));
		say(t, "%s %s: lookup none %d", tn, kn, elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, out, 0));
		say(t, ", update exist %d", elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, v, BPF_EXIST));
		say(t, ", noexist %d", elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, v, BPF_NOEXIST));
		say(t, ", noexist again %d", elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, v, BPF_NOEXIST));
		v[1] = 0x99;
		say(t, ", exist %d", elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, v, BPF_EXIST));
		for (uint64_t f = 3; f <= 5; f++)
			say(t, ", flags %llu %d", (unsigned long long)f,
			    elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, v, f));
		memset(out, 0, sizeof(out));
		r = elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, out, 0);
		say(t, ", lookup %d %02x %02x", r, out[0], out[1]);
		say(t, ", F_LOCK %d", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, key, out, BPF_F_LOCK));
		say(t, ", next %d", elem(sys, BPF_MAP_GET_NEXT_KEY, fd, key, &next, 0));
		say(t, ", lookup_and_delete %d",
		    elem(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, key, out, 0));
		/* the first file's value stays for the second file's lookups */
		if (k != K_FILE) {
			say(t, ", delete %d", elem(sys, BPF_MAP_DELETE_ELEM, fd, key, NULL, 0));
			say(t, ", again %d", elem(sys, BPF_MAP_DELETE_ELEM, fd, key, NULL, 0));
		}
		say(t, "\n");
	}
	say(t, "%s next NULL: %d\n", tn, elem(sys, BPF_MAP_GET_NEXT_KEY, fd, NULL, &next, 0));
	close(fd);
}

static void programs(sys_fn sys, struct transcript *t, uint32_t ty, const char *tn)
{
	int ls = storage_map(sys, ty);
	struct bpf_insn p[] = {
		ST(BPF_W, 10, -4, 0), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4),
		I(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, ls), I(0, 0, 0, 0, 0),
		CALL(BPF_FUNC_map_lookup_elem), MOV64_IMM(0, 0), EXIT(),
	};
	char what[48];

	if (ls < 0)
		return;
	snprintf(what, sizeof(what), "%s tc lookup", tn);
	load_verdict(sys, t, what, BPF_PROG_TYPE_SCHED_CLS, 0, p, sizeof(p) / sizeof(p[0]));
	close(ls);
}

/* bpf_task_storage_get/delete from programs: loads (the prototype, the map rule, the
 * types that have it) and raw_tp/tc test runs on the current task, whose value user
 * space then reads with a pidfd of this process (the test runs on its main thread) */
static void task_programs(sys_fn sys, struct transcript *t)
{
	int ts = storage_map(sys, BPF_MAP_TYPE_TASK_STORAGE);
	int arr = create_map(sys, BPF_MAP_TYPE_ARRAY, 4, 16, 1, 0, 0);
#define TLD(r, fd) I(BPF_LD | BPF_IMM | BPF_DW, r, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)
#define TASK CALL(BPF_FUNC_get_current_task_btf), MOV64_REG(2, 0)
	/* get with flags f from a value on the stack (or NULL), add 1 to its first u64,
	 * return it (0: NULL) */
#define GET_TAIL(f)                                                                         \
	MOV64_IMM(4, f), CALL(BPF_FUNC_task_storage_get), JIMM(BPF_JEQ, 0, 0, 3),            \
	LDX(BPF_DW, 1, 0, 0), ALU64_IMM(BPF_ADD, 1, 1), STX(BPF_DW, 0, 1, 0), MOV64_REG(1, 0), \
	MOV64_IMM(0, 0), JIMM(BPF_JEQ, 1, 0, 1), LDX(BPF_DW, 0, 1, 0), EXIT()
#define GET0(map, f) TASK, TLD(1, map), MOV64_IMM(3, 0), GET_TAIL(f)
#define GETV(map, f)                                                                        \
	ST(BPF_DW, 10, -16, 0x7700), ST(BPF_DW, 10, -8, 0x66), TASK, TLD(1, map),            \
	MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -16), GET_TAIL(f)
	const struct { const char *what; uint32_t type; struct bpf_insn p[40]; size_t n; } c[] = {
#define C(w, ty, ...) { w, ty, { __VA_ARGS__ },                                              \
		sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn) }
		C("get, no create", BPF_PROG_TYPE_RAW_TRACEPOINT, GET0(ts, 0)),
		C("get create", BPF_PROG_TYPE_RAW_TRACEPOINT, GET0(ts, 1)),
		C("get create again", BPF_PROG_TYPE_RAW_TRACEPOINT, GETV(ts, 1)),
		C("get flags 2", BPF_PROG_TYPE_RAW_TRACEPOINT, GET0(ts, 2)),
		C("delete", BPF_PROG_TYPE_RAW_TRACEPOINT, TASK, TLD(1, ts),
		  CALL(BPF_FUNC_task_storage_delete), EXIT()),
		C("delete again", BPF_PROG_TYPE_RAW_TRACEPOINT, TASK, TLD(1, ts),
		  CALL(BPF_FUNC_task_storage_delete), EXIT()),
		C("get create from a stack value", BPF_PROG_TYPE_RAW_TRACEPOINT, GETV(ts, 1)),
		C("tc get create", BPF_PROG_TYPE_SCHED_CLS, GET0(ts, 1)),
		C("get NULL task", BPF_PROG_TYPE_RAW_TRACEPOINT, MOV64_IMM(2, 0), TLD(1, ts),
		  MOV64_IMM(3, 0), MOV64_IMM(4, 1), CALL(BPF_FUNC_task_storage_get),
		  JIMM(BPF_JEQ, 0, 0, 1), MOV64_IMM(0, 1), EXIT()),
		C("delete NULL task", BPF_PROG_TYPE_RAW_TRACEPOINT, MOV64_IMM(2, 0), TLD(1, ts),
		  CALL(BPF_FUNC_task_storage_delete), EXIT()),
		C("get of the ctx", BPF_PROG_TYPE_RAW_TRACEPOINT, MOV64_REG(2, 1), TLD(1, ts),
		  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_task_storage_get),
		  MOV64_IMM(0, 0), EXIT()),
		C("get on an array", BPF_PROG_TYPE_RAW_TRACEPOINT, TASK, TLD(1, arr),
		  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_task_storage_get),
		  MOV64_IMM(0, 0), EXIT()),
		C("get unchecked", BPF_PROG_TYPE_RAW_TRACEPOINT, TASK, TLD(1, ts),
		  MOV64_IMM(3, 0), MOV64_IMM(4, 1), CALL(BPF_FUNC_task_storage_get),
		  LDX(BPF_DW, 0, 0, 0), EXIT()),
		C("get, read past the value", BPF_PROG_TYPE_RAW_TRACEPOINT, TASK, TLD(1, ts),
		  MOV64_IMM(3, 0), MOV64_IMM(4, 1), CALL(BPF_FUNC_task_storage_get),
		  JIMM(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 16), MOV64_IMM(0, 0), EXIT()),
		C("get with a short stack value", BPF_PROG_TYPE_RAW_TRACEPOINT, ST(BPF_DW, 10, -8, 0),
		  TASK, TLD(1, ts), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8), MOV64_IMM(4, 1),
		  CALL(BPF_FUNC_task_storage_get), MOV64_IMM(0, 0), EXIT()),
		C("kprobe get", BPF_PROG_TYPE_KPROBE, GET0(ts, 1)),
		C("xdp delete", BPF_PROG_TYPE_XDP, TASK, TLD(1, ts),
		  CALL(BPF_FUNC_task_storage_delete), MOV64_IMM(0, 2), EXIT()),
#undef C
	};
	int self = (int)syscall(SYS_pidfd_open, getpid(), 0);

	for (size_t i = 0; ts >= 0 && arr >= 0 && i < sizeof(c) / sizeof(c[0]); i++) {
		unsigned char pkt[64] = { 0 }, out[16];
		uint64_t args[1] = { 0 };
		union bpf_attr a;
		char what[64];
		int fd, err;

		snprintf(what, sizeof(what), "task %s", c[i].what);
		fd = load_prog(sys, t, what, c[i].type, c[i].p, (uint32_t)c[i].n);
		if (fd < 0)
			continue;
		memset(&a, 0, sizeof(a));
		a.test.prog_fd = (uint32_t)fd;
		if (c[i].type == BPF_PROG_TYPE_RAW_TRACEPOINT) {
			a.test.ctx_in = (uint64_t)(uintptr_t)args;
			a.test.ctx_size_in = sizeof(args);
		} else {
			pkt[12] = 8;
			a.test.data_in = (uint64_t)(uintptr_t)pkt;
			a.test.data_size_in = sizeof(pkt);
		}
		if (c[i].type == BPF_PROG_TYPE_KPROBE) {
			say(t, "loaded\n");
			close(fd);
			continue;
		}
		err = sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
		memset(out, 0, sizeof(out));
		say(t, "run %d retval %#x", err, a.test.retval);
		err = elem(sys, BPF_MAP_LOOKUP_ELEM, ts, &self, out, 0);
		say(t, ", lookup %d %02x%02x %02x\n", err, out[1], out[0], out[8]);
		close(fd);
	}
	if (ts >= 0)
		close(ts);
	if (arr >= 0)
		close(arr);
	close(self);
}

static void script(sys_fn sys, struct transcript *t)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		creates(sys, t, types[i].type, types[i].name);
		elements(sys, t, types[i].type, types[i].name);
		programs(sys, t, types[i].type, types[i].name);
	}
	task_programs(sys, t);
}

static struct transcript kt, bt;

int main(void)
{
	static const script_fn parts[] = { script, NULL };

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	make_keys();
	if (transcript_run("localstorage", parts, &kt, &bt))
		return 1;
	compare_transcripts(&kt, &bt);
	if (getenv("BPFRT_SHOW"))
		fputs(kt.text, stdout);
	printf("local storage oracle: %u lines each side\n", kt.says);
	if (keys[K_CG_CHILD] >= 0) {
		close(keys[K_CG_CHILD]);
		rmdir(child_cg);
	}
	return t_done();
}
