/* test_holds_oracle.c - what objects hold for other processes' id walks, against the
 * kernel: the inner maps of a map of maps, the callback program of a bpf_timer, and the
 * events of a perf event array, once whatever held the holder is gone.  The kernel frees
 * a map of maps with its last reference and its inner maps with it (after a work item),
 * cancels a map's timers with its last user reference (an fd, a pin: map_release_uref())
 * and so releases their callbacks' programs, and clears the perf event array entries
 * installed through a map file when that file is closed.  bpfrt's objects are files that
 * every process's object cache maps until that process sweeps, and a holder's references
 * live in the process that stored them: so the holder's process stays idle (it never
 * sweeps) and another process asks by id (api/ids.c reads what a live holder's file names,
 * obj/pub.c publishes which references are held only by such naming).
 *
 * The same steps run through syscall(__NR_bpf) and bpfrt_bpf(); the answers are compared,
 * except where the kernel frees on a work queue: there the kernel is asked until its
 * answer settles (at most 2 s; bpfrt's answer is taken at once and must already be the
 * settled one).  Needs root and the kernel (skipped otherwise).
 */
#include <errno.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "diff.h"
#include "harness.h"
#include "mim_prog.h"
#include "xproc.h"
#include "obj/obj.h"

#define BTF_INFO_ENC(kind, kflag, vlen) (((kflag) << 31) | ((kind) << 24) | (vlen))
#define BTF_INT_ENC(enc, off, bits) (((enc) << 24) | ((off) << 16) | (bits))

static char fsdir[64];
static int kernel_side; /* the steps now run against the kernel */

/* ---- helpers ------------------------------------------------------------------------ */

static int map_new(sys_fn sys, uint32_t type, uint32_t ksize, uint32_t vsize, uint32_t max,
		   int inner, int btf)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = ksize;
	a.value_size = vsize;
	a.max_entries = max;
	if (inner >= 0)
		a.inner_map_fd = (uint32_t)inner;
	if (btf >= 0) {
		a.btf_fd = (uint32_t)btf;
		a.btf_key_type_id = 1;
		a.btf_value_type_id = 3;
	}
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

#define MAP BPF_MAP_GET_FD_BY_ID
#define PROG BPF_PROG_GET_FD_BY_ID

/* The kernel frees a map of maps' inner maps, a dead program's maps, a closed map's timer
 * callbacks on work queues: ask until the answer is ENOENT, at most 2 s.  bpfrt answers
 * at once (asked once: no wait). */
static int settled(sys_fn sys, int cmd, uint32_t id)
{
	int r = diff_by_id(sys, cmd, id);

	for (int i = 0; kernel_side && r != -ENOENT && i < 200; i++) {
		usleep(10000);
		r = diff_by_id(sys, cmd, id);
	}
	return r;
}

/* The child's loop: each byte from the checker is the index of an fd to close ('0' +
 * i), 'q' exits; each step answered with the byte. */
static void serve(const int *fd, int n, int in, int out)
{
	char c;

	for (;;) {
		get(in, &c, 1);
		if (c == 'q')
			_exit(0);
		if (c >= '0' && c < '0' + n && fd[c - '0'] >= 0)
			close(fd[c - '0']);
		put(out, &c, 1);
	}
}

/* A process that looks every id up (its cache then maps them all) and idles until 'q'. */
static pid_t spawn_looker(sys_fn sys, const uint32_t *ids, const int *cmds, int n, int *to,
			  int *from)
{
	pid_t pid = spawn(to, from);
	char c;

	if (pid)
		return pid;
	for (int i = 0; i < n; i++)
		diff_by_id(sys, cmds[i], ids[i]);
	put(*from, "r", 1);
	get(*to, &c, 1);
	_exit(0);
}

static void finish(pid_t pid, int to, int from)
{
	put(to, "q", 1);
	waitpid(pid, NULL, 0);
	close(to);
	close(from);
}

/* ---- maps of maps ---------------------------------------------------------------------- */

/* inner/outer pairs: array of maps, hash of maps, an array of maps held by program P3 */
enum { I1, O1, I2, O2, I3, O3, P3, NMIM };
static const int mim_cmd[NMIM] = { MAP, MAP, MAP, MAP, MAP, MAP, PROG };

/* Process A: makes them, stores each inner map, closes the inner maps' fds and O3's
 * (P3 holds it), sends the ids and serves closes. */
static void mim_a(sys_fn sys, int in, int out)
{
	int fd[NMIM];
	uint32_t ids[NMIM];

	fd[I1] = map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, -1);
	fd[O1] = map_new(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, fd[I1], -1);
	fd[I2] = map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, -1);
	fd[O2] = map_new(sys, BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 4, fd[I2], -1);
	fd[I3] = map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, -1);
	fd[O3] = map_new(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, fd[I3], -1);
	fd[P3] = fd[O3] >= 0 ? diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, fd[O3]) : -1;
	for (int i = 0; i < NMIM; i++)
		ids[i] = fd[i] >= 0 ? diff_id_of(sys, fd[i]) : 0;
	if (diff_update(sys, fd[O1], 0, fd[I1]))
		ids[I1] = 0;
	if (diff_update(sys, fd[O2], 7, fd[I2]))
		ids[I2] = 0;
	if (diff_update(sys, fd[O3], 1, fd[I3]))
		ids[I3] = 0;
	for (int i = I1; i <= I3; i += 2) {
		close(fd[i]);
		fd[i] = -1;
	}
	close(fd[O3]);
	fd[O3] = -1;
	put(out, ids, sizeof(ids));
	serve(fd, NMIM, in, out);
}

static int pin_fd(sys_fn sys, int fd, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)fd;
	return sys(BPF_OBJ_PIN, &a, sizeof(a)) ? -errno : 0;
}

/* Process K: an array of maps holding an inner map whose value 0 is 42, and (pin set) the
 * outer map pinned there, after the store and the inner map's fd closed, or (pin_first)
 * before the store; sends the ids and waits to be killed. */
static void mim_k(sys_fn sys, const char *pin, int pin_first, int in, int out)
{
	int inner = map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, -1, -1);
	int outer = map_new(sys, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 1, inner, -1);
	uint32_t ids[2] = { 0, 0 };
	int pinned = -1;
	char c;

	if (pin && pin_first && outer >= 0)
		pinned = pin_fd(sys, outer, pin);
	if (outer >= 0 && !diff_update(sys, inner, 0, 42) && !diff_update(sys, outer, 0, inner)) {
		ids[0] = diff_id_of(sys, inner);
		ids[1] = diff_id_of(sys, outer);
	}
	close(inner);
	if (pin && !pin_first)
		pinned = pin_fd(sys, outer, pin);
	if (pin && pinned)
		ids[1] = 0;
	put(out, ids, sizeof(ids));
	get(in, &c, 1);
	_exit(0);
}

static int lookup(sys_fn sys, int map, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	return sys(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) ? -errno : 0;
}

/* mim_prog.h's program */
static int mim_prog(sys_fn sys, int outer)
{
	struct bpf_insn insns[MIM_PROG_LEN];

	mim_prog_insns(insns, outer);
	return diff_prog_load(sys, BPF_PROG_TYPE_SOCKET_FILTER, insns, MIM_PROG_LEN);
}

static int obj_get(sys_fn sys, const char *path)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	return sys(BPF_OBJ_GET, &a, sizeof(a));
}

static int delete(sys_fn sys, int map, uint32_t key)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	return sys(BPF_MAP_DELETE_ELEM, &a, sizeof(a)) ? -errno : 0;
}

/* The pinned outer map of a killed K, used from this process: the entry by lookup, the
 * inner map by id and its value, a program of ours looking through the outer map, then
 * the entry deleted (the inner map goes), the pin removed (the outer map goes). */
static int mim_pinned_use(sys_fn sys, const char *pin, const uint32_t *kids, int *r)
{
	int n = 0, outer = obj_get(sys, pin), inner, prog;
	union bpf_attr a;
	uint32_t id = 0;
	uint64_t val = 0;

	r[n++] = outer >= 0;
	r[n++] = lookup(sys, outer, 0, &id);
	r[n++] = id == kids[0];
	memset(&a, 0, sizeof(a));
	a.map_id = kids[0];
	inner = sys(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	r[n++] = inner >= 0 ? lookup(sys, inner, 0, &val) : -errno;
	r[n++] = (int)val;
	if (inner >= 0)
		close(inner);
	prog = outer >= 0 ? mim_prog(sys, outer) : -1;
	r[n++] = prog >= 0 ? diff_run64(sys, prog, 1) : -1;
	r[n++] = diff_by_id(sys, MAP, kids[0]);
	/* the entry deleted: the inner map has no holder left */
	r[n++] = delete(sys, outer, 0);
	r[n++] = settled(sys, MAP, kids[0]);
	r[n++] = prog >= 0 ? diff_run64(sys, prog, 1) : -1;
	if (prog >= 0)
		close(prog);
	unlink(pin);
	if (outer >= 0)
		close(outer);
	brt_obj_sweep(); /* bpfrt's process looks for fds left (no-op for the kernel) */
	r[n++] = settled(sys, MAP, kids[1]);
	return n;
}

/* results of the map-of-maps steps, in the order of mim_names */
static int mim_steps(sys_fn sys, int *r)
{
	static const int lone[] = { MAP, MAP };
	int n = 0, a_to, a_from, l_to, l_from, k_to, k_from;
	uint32_t ids[NMIM], kids[2];
	char pin[128], c;
	pid_t a, l, k;

	a = spawn(&a_to, &a_from);
	if (a == 0)
		mim_a(sys, a_to, a_from);
	get(a_from, ids, sizeof(ids));
	for (int i = 0; i < NMIM; i++)
		r[n++] = ids[i] != 0;
	l = spawn_looker(sys, ids, mim_cmd, NMIM, &l_to, &l_from);
	get(l_from, &c, 1);
	/* every outer map held (A's fds, P3 for O3): its inner map with it */
	for (int i = 0; i < NMIM; i++)
		r[n++] = diff_by_id(sys, mim_cmd[i], ids[i]);
	/* A closes O1's fd, its last holder: gone, and its inner map with it */
	tell(a_to, a_from, '0' + O1);
	r[n++] = diff_by_id(sys, MAP, ids[O1]);
	r[n++] = settled(sys, MAP, ids[I1]);
	r[n++] = diff_by_id(sys, MAP, ids[I2]); /* the others are untouched */
	/* the same for the hash of maps */
	tell(a_to, a_from, '0' + O2);
	r[n++] = diff_by_id(sys, MAP, ids[O2]);
	r[n++] = settled(sys, MAP, ids[I2]);
	/* O3 is held by P3 only, and holds I3 */
	r[n++] = diff_by_id(sys, MAP, ids[O3]);
	r[n++] = diff_by_id(sys, MAP, ids[I3]);
	/* A closes P3: P3, then O3 and with it I3 */
	tell(a_to, a_from, '0' + P3);
	r[n++] = diff_by_id(sys, PROG, ids[P3]);
	r[n++] = settled(sys, MAP, ids[O3]);
	r[n++] = settled(sys, MAP, ids[I3]);
	finish(a, a_to, a_from);
	finish(l, l_to, l_from);

	/* K, killed with SIGKILL holding its outer map's only fd (a looker caches both) */
	k = spawn(&k_to, &k_from);
	if (k == 0)
		mim_k(sys, NULL, 0, k_to, k_from);
	get(k_from, kids, sizeof(kids));
	r[n++] = kids[0] && kids[1];
	l = spawn_looker(sys, kids, lone, 2, &l_to, &l_from);
	get(l_from, &c, 1);
	r[n++] = diff_by_id(sys, MAP, kids[0]);
	kill(k, SIGKILL);
	waitpid(k, NULL, 0);
	close(k_to);
	close(k_from);
	r[n++] = diff_by_id(sys, MAP, kids[1]);
	r[n++] = settled(sys, MAP, kids[0]);
	finish(l, l_to, l_from);

	/* K again, its outer map pinned (after the store, then before it): the pin holds
	 * the outer map, which holds the inner one, past K's death (mim_links.c) */
	if (kernel_side)
		snprintf(pin, sizeof(pin), "/sys/fs/bpf/bpfrt-holds-%d", (int)getpid());
	else
		snprintf(pin, sizeof(pin), "%s/outer", fsdir);
	for (int pin_first = 0; pin_first < 2; pin_first++) {
		k = spawn(&k_to, &k_from);
		if (k == 0)
			mim_k(sys, pin, pin_first, k_to, k_from);
		get(k_from, kids, sizeof(kids));
		r[n++] = kids[0] && kids[1];
		kill(k, SIGKILL);
		waitpid(k, NULL, 0);
		close(k_to);
		close(k_from);
		r[n++] = diff_by_id(sys, MAP, kids[1]);
		r[n++] = diff_by_id(sys, MAP, kids[0]);
		if (pin_first) {
			n += mim_pinned_use(sys, pin, kids, r + n);
			continue;
		}
		unlink(pin);
		r[n++] = settled(sys, MAP, kids[1]);
		r[n++] = settled(sys, MAP, kids[0]);
	}
	return n;
}

static const char *const mim_names[] = {
	"created: I1", "created: O1 (array of maps)", "created: I2", "created: O2 (hash of maps)",
	"created: I3", "created: O3 (held by P3)", "created: P3",
	"all held: I1", "all held: O1", "all held: I2", "all held: O2", "all held: I3",
	"all held: O3", "all held: P3",
	"O1's last fd closed: O1", "O1's last fd closed: I1, once settled",
	"O1's last fd closed: I2 untouched",
	"O2's last fd closed: O2", "O2's last fd closed: I2, once settled",
	"O3 held by P3 only: O3", "O3 held by P3 only: I3",
	"P3's last fd closed: P3", "P3's last fd closed: O3, once settled",
	"P3's last fd closed: I3, once settled",
	"killed holder: made", "killed holder: inner held before the kill",
	"killed holder: outer after the kill", "killed holder: inner, once settled",
	"pinned outer, killed maker: made", "pinned outer, killed maker: outer",
	"pinned outer, killed maker: inner",
	"pin removed: outer, once settled", "pin removed: inner, once settled",
	"pinned before the store, killed maker: made",
	"pinned before the store, killed maker: outer",
	"pinned before the store, killed maker: inner",
	"another process: BPF_OBJ_GET of the pinned outer map",
	"another process: lookup of the entry", "another process: the entry is the inner map's id",
	"another process: the inner map by id, its element 0 looked up",
	"another process: the inner map's value (42)",
	"another process: its program reads outer[0][0] (42)",
	"another process: the inner map by id again",
	"another process: the entry deleted", "entry deleted: inner, once settled",
	"entry deleted: the program finds outer[0] empty (1000)",
	"pin removed, fds closed: outer, once settled",
};
#define MIM_N (int)(sizeof(mim_names) / sizeof(mim_names[0]))
#define MIM_PINNED 30 /* "pinned outer, killed maker: inner" */
#define MIM_USE 36    /* "another process: BPF_OBJ_GET ..." */

/* ---- bpf_timer ------------------------------------------------------------------------- */

/* lookup M[0]; bpf_timer_init(value, M, CLOCK_MONOTONIC); set_callback(cb); start(10 s) */
static const char timer_text[] =
	"stw [%r10-4], 0\n"
	"lddw %r1, map_fd 0\n"
	"mov %r2, %r10\n"
	"add %r2, -4\n"
	"call bpf_map_lookup_elem\n"
	"jne %r0, 0, +2\n"
	"mov %r0, 1\n"
	"exit\n"
	"mov %r6, %r0\n"
	"mov %r1, %r6\n"
	"lddw %r2, map_fd 0\n"
	"mov %r3, 1\n"
	"call bpf_timer_init\n"
	"jne %r0, 0, fail\n"
	"mov %r1, %r6\n"
	"lddw %r2, func cb\n"
	"call bpf_timer_set_callback\n"
	"jne %r0, 0, fail\n"
	"mov %r1, %r6\n"
	"lddw %r2, 10000000000\n"
	"mov %r3, 0\n"
	"call bpf_timer_start\n"
	"jne %r0, 0, fail\n"
	"mov %r0, 2\n"
	"exit\n"
	"fail:\n"
	"mov %r0, 3\n"
	"exit\n"
	"cb:\n"
	"mov %r0, 0\n"
	"exit\n";

/* BTF: [1] int, [2] struct bpf_timer, [3] struct val { struct bpf_timer t; }, [4] int (void),
 * [5] main, [6] cb (a callback needs its func_info) */
static int timer_btf(sys_fn sys)
{
	static const char strs[] = "\0int\0bpf_timer\0x\0val\0t\0main\0cb";
	uint32_t types[] = {
		1, BTF_INFO_ENC(BTF_KIND_INT, 0, 0), 4, BTF_INT_ENC(BTF_INT_SIGNED, 0, 32),
		5, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 1), 16, 15, 1, 0,
		17, BTF_INFO_ENC(BTF_KIND_STRUCT, 0, 1), 16, 21, 2, 0,
		0, BTF_INFO_ENC(BTF_KIND_FUNC_PROTO, 0, 0), 1,
		23, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 4,
		28, BTF_INFO_ENC(BTF_KIND_FUNC, 0, 0), 4,
	};

	return btf_blob_load(sys, types, sizeof(types), strs, sizeof(strs));
}

/* the timer program on map, its fd or -1 */
static int timer_prog(sys_fn sys, int btf, int map)
{
	struct bpf_func_info fi[2] = { { 0, 5 }, { 0, 6 } };
	struct bpf_insn *insns;
	union bpf_attr a;
	char err[256];
	size_t n;
	int fd;

	if (bpfrt_asm(timer_text, "timer.s", &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "timer.s: %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (insns[i].code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map;
		if (insns[i].src_reg == BPF_PSEUDO_FUNC)
			fi[1].insn_off = (uint32_t)((int64_t)i + 1 + insns[i].imm);
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.prog_btf_fd = (uint32_t)btf;
	a.func_info = (uint64_t)(uintptr_t)fi;
	a.func_info_cnt = 2;
	a.func_info_rec_size = sizeof(fi[0]);
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	free(insns);
	return fd;
}

enum { TM, TP, NTIMER };

/* Process T: map M with a timer value, program P; a test run arms M[0]'s timer for 10 s
 * with P's callback; sends the ids (0 when any step failed), then serves closes. */
static void timer_proc(sys_fn sys, int in, int out)
{
	int btf = timer_btf(sys), fd[NTIMER];
	uint32_t ids[NTIMER] = { 0, 0 };

	fd[TM] = btf >= 0 ? map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 16, 1, -1, btf) : -1;
	fd[TP] = fd[TM] >= 0 ? timer_prog(sys, btf, fd[TM]) : -1;
	if (fd[TP] >= 0 && diff_run64(sys, fd[TP], 1) == 2) {
		ids[TM] = diff_id_of(sys, fd[TM]);
		ids[TP] = diff_id_of(sys, fd[TP]);
	}
	if (btf >= 0)
		close(btf);
	put(out, ids, sizeof(ids));
	serve(fd, NTIMER, in, out);
}

static int pin_obj(sys_fn sys, uint32_t id, const char *path)
{
	union bpf_attr a;
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.map_id = id;
	fd = sys(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	err = pin_fd(sys, fd, path);
	close(fd);
	return err;
}

static int timer_steps(sys_fn sys, int *r)
{
	static const int cmds[NTIMER] = { MAP, PROG };
	int n = 0, t_to, t_from, l_to, l_from;
	uint32_t ids[NTIMER];
	char pin[128], c;
	pid_t t, l;

	for (int pass = 0; pass < 2; pass++) {
		t = spawn(&t_to, &t_from);
		if (t == 0)
			timer_proc(sys, t_to, t_from);
		get(t_from, ids, sizeof(ids));
		r[n++] = ids[TM] && ids[TP];
		l = spawn_looker(sys, ids, cmds, NTIMER, &l_to, &l_from);
		get(l_from, &c, 1);
		/* P's fd closed: the armed timer holds it while M has its fd */
		tell(t_to, t_from, '0' + TP);
		r[n++] = diff_by_id(sys, PROG, ids[TP]);
		if (pass) {
			/* M pinned, then its fd closed: the pin is a user reference, the timer
			 * stays and holds P */
			if (kernel_side)
				snprintf(pin, sizeof(pin), "/sys/fs/bpf/bpfrt-timer-%d",
					 (int)getpid());
			else
				snprintf(pin, sizeof(pin), "%s/timer", fsdir);
			r[n++] = pin_obj(sys, ids[TM], pin);
			tell(t_to, t_from, '0' + TM);
			r[n++] = diff_by_id(sys, MAP, ids[TM]);
			r[n++] = diff_by_id(sys, PROG, ids[TP]);
			unlink(pin);
		} else {
			tell(t_to, t_from, '0' + TM);
		}
		/* M's last user reference gone: its timer, then P, then M (P's map) */
		r[n++] = settled(sys, PROG, ids[TP]);
		r[n++] = settled(sys, MAP, ids[TM]);
		finish(t, t_to, t_from);
		finish(l, l_to, l_from);
	}
	return n;
}

static const char *const timer_names[] = {
	"timer armed", "P's fd closed: P (held by M's timer)",
	"M's last fd closed: P, once settled", "M's last fd closed: M, once settled",
	"timer armed (pinned)", "pinned: P's fd closed: P (held by M's timer)",
	"pinned: M pinned", "pinned: M's fd closed: M (pinned)",
	"pinned: M's fd closed: P (held by the pinned map's timer)",
	"pin removed: P, once settled", "pin removed: M, once settled",
};
#define TIMER_N (int)(sizeof(timer_names) / sizeof(timer_names[0]))

/* ---- perf event array ------------------------------------------------------------------ */

/* bpf_perf_event_output(ctx, map, index 0, 8 zero bytes): its answer is the retval */
static int perf_prog(sys_fn sys, int map)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6, .src_reg = 1 },
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = 10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1, .src_reg = 6 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 4, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 4, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 5, .imm = 8 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_perf_event_output },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return diff_prog_load(sys, BPF_PROG_TYPE_SOCKET_FILTER, insns,
			      sizeof(insns) / sizeof(insns[0]));
}

/* An event bpf_perf_event_output() may write: the kernel's BPF output event of this task
 * (cpu -1) or of one CPU, or a bpfrt ring of any CPU or of that one. */
static int perf_event(int cpu)
{
	struct perf_event_attr attr;

	if (!kernel_side)
		return bpfrt_perf_ring_create(cpu, 1, NULL);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_RAW;
	attr.sample_period = 1;
	return (int)syscall(__NR_perf_event_open, &attr, cpu < 0 ? 0 : -1, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

/* Process X: installs a mapped event of its own (of CPU 0, where the checker runs its
 * program: another task's event is not on the checker's CPU) into slot 0 through an fd
 * of the array it opened itself (a file of its own), then waits to be killed. */
static void perf_x(sys_fn sys, uint32_t map_id, int in, int out)
{
	union bpf_attr a;
	int ev = perf_event(0), map, ok;
	void *ring = ev >= 0 ? mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ev, 0)
			     : MAP_FAILED;
	char c;

	memset(&a, 0, sizeof(a));
	a.map_id = map_id;
	map = sys(BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
	ok = ring != MAP_FAILED && map >= 0 && !diff_update(sys, map, 0, ev);
	put(out, ok ? "y" : "n", 1);
	get(in, &c, 1);
	_exit(0);
}

static int perf_steps(sys_fn sys, int *r)
{
	int n = 0, ev = perf_event(-1), map, prog, x_to, x_from;
	/* the ring mapped as libbpf maps it (the kernel's event has no buffer before) */
	void *ring = ev >= 0 ? mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ev, 0)
			     : MAP_FAILED;
	cpu_set_t cpus, was;
	char c;
	pid_t x;

	map = map_new(sys, BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 1, -1, -1);
	prog = map >= 0 ? perf_prog(sys, map) : -1;
	r[n++] = ring != MAP_FAILED && prog >= 0 && !diff_update(sys, map, 0, ev);
	r[n++] = diff_run64(sys, prog, 1);
	/* X installs its own event through its own file of the array, and is killed (the
	 * program runs on CPU 0, the CPU of X's event) */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_getaffinity(0, sizeof(was), &was);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	x = spawn(&x_to, &x_from);
	if (x == 0)
		perf_x(sys, diff_id_of(sys, map), x_to, x_from);
	get(x_from, &c, 1);
	r[n++] = c == 'y';
	r[n++] = diff_run64(sys, prog, 1);
	kill(x, SIGKILL);
	waitpid(x, NULL, 0);
	close(x_to);
	close(x_from);
	r[n++] = diff_run64(sys, prog, 1);
	usleep(20000);
	r[n++] = diff_run64(sys, prog, 1);
	sched_setaffinity(0, sizeof(was), &was);
	/* ours again; then the array's only fd closed (the program holds the array): the
	 * entry installed through it goes in close() in the kernel, within a clock tick of
	 * the next output here */
	r[n++] = diff_update(sys, map, 0, ev);
	r[n++] = diff_run64(sys, prog, 1);
	close(map);
	r[n++] = diff_run64(sys, prog, 1);
	usleep(20000);
	r[n++] = diff_run64(sys, prog, 1);
	close(prog);
	if (ring != MAP_FAILED)
		munmap(ring, 2 * 4096);
	close(ev);
	return n;
}

static const char *const perf_names[] = {
	"perf: made", "perf: output into the slot",
	"perf: another process installs its event through its own fd",
	"perf: output into the other process's event",
	"perf: its installer killed, output at once (bpfrt: within a tick)",
	"perf: its installer killed, output 20 ms later",
	"perf: our event installed again", "perf: output into it",
	"perf: the array's fd closed, output at once (bpfrt: within a tick)",
	"perf: the array's fd closed, output 20 ms later",
};
#define PERF_N (int)(sizeof(perf_names) / sizeof(perf_names[0]))
/* the answers bpfrt gives only a clock tick later (docs/SECURITY.md, "Known limits") */
#define PERF_TICK(i) ((i) == 4 || (i) == 8)

/* ---- a pinned prog array ---------------------------------------------------------------- */


/* The kernel clears a prog array when its last user reference goes (prog_array_map_clear()
 * on a work queue), and a pin is one: P tail-calls through a pinned array whose fds are
 * all closed and still reaches Q; bpfrt's process clears its slots at its sweep once it
 * has no fd of the array, unless the array is pinned (brt_obj_pinned()). */
static int pa_steps(sys_fn sys, int *r)
{
	int n = 0, pa, q, p, ret;
	uint32_t qid;
	char pin[128];

	if (kernel_side)
		snprintf(pin, sizeof(pin), "/sys/fs/bpf/bpfrt-pa-%d", (int)getpid());
	else
		snprintf(pin, sizeof(pin), "%s/pa", fsdir);
	pa = map_new(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 1, -1, -1);
	q = diff_tail_prog(sys, -1, 7);
	p = pa >= 0 ? diff_tail_prog(sys, pa, 0) : -1;
	qid = q >= 0 ? diff_id_of(sys, q) : 0;
	r[n++] = p >= 0 && qid && !diff_update(sys, pa, 0, q);
	r[n++] = diff_run64(sys, p, 1);
	r[n++] = pin_obj(sys, diff_id_of(sys, pa), pin);
	close(pa);
	close(q);
	brt_obj_sweep(); /* bpfrt's process looks for fds left (no-op for the kernel) */
	r[n++] = diff_run64(sys, p, 1);
	r[n++] = diff_by_id(sys, PROG, qid);
	unlink(pin);
	brt_obj_sweep();
	ret = diff_run64(sys, p, 1);
	for (int i = 0; kernel_side && ret != 1 && i < 200; i++) {
		usleep(10000);
		ret = diff_run64(sys, p, 1);
	}
	r[n++] = ret;
	r[n++] = settled(sys, PROG, qid);
	close(p);
	return n;
}

static const char *const pa_names[] = {
	"prog array: made", "prog array: P tail-calls Q",
	"prog array: pinned", "prog array: every fd closed, pinned: P still reaches Q",
	"prog array: every fd closed, pinned: Q by id",
	"prog array: unpinned: P's tail call fails, once settled",
	"prog array: unpinned: Q by id, once settled",
};
#define PA_N (int)(sizeof(pa_names) / sizeof(pa_names[0]))

int main(void)
{
	int kern[MIM_N + TIMER_N + PERF_N + PA_N], rt[MIM_N + TIMER_N + PERF_N + PA_N];
	int nk = 0, nr = 0;

	if (!kernel_available())
		T_SKIP("needs root and the kernel's bpf()");
	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-holds-XXXXXX");
	if (!t_scratch_dir(fsdir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", fsdir, 1);
	signal(SIGPIPE, SIG_IGN);
	kernel_side = 1;
	nk += mim_steps(sys_kernel, kern + nk);
	nk += timer_steps(sys_kernel, kern + nk);
	nk += perf_steps(sys_kernel, kern + nk);
	nk += pa_steps(sys_kernel, kern + nk);
	kernel_side = 0;
	nr += mim_steps(sys_bpfrt, rt + nr);
	nr += timer_steps(sys_bpfrt, rt + nr);
	nr += perf_steps(sys_bpfrt, rt + nr);
	nr += pa_steps(sys_bpfrt, rt + nr);
	T_CASE("every step ran on both sides");
	T_EQ_INT(MIM_N + TIMER_N + PERF_N + PA_N, nk);
	T_EQ_INT(nk, nr);
	for (int i = 0; i < nk && i < nr; i++) {
		const char *name = i < MIM_N ? mim_names[i] :
				   i < MIM_N + TIMER_N ? timer_names[i - MIM_N] :
				   i < MIM_N + TIMER_N + PERF_N ? perf_names[i - MIM_N - TIMER_N] :
								  pa_names[i - MIM_N - TIMER_N - PERF_N];

		T_CASE(name);
		if (i >= MIM_N + TIMER_N && i < MIM_N + TIMER_N + PERF_N &&
			   PERF_TICK(i - MIM_N - TIMER_N)) {
			T_EQ_INT(-ENOENT, kern[i]);
			printf("note: %s: bpfrt %d\n", name, rt[i]);
		} else {
			T_EQ_INT(kern[i], rt[i]);
		}
	}
	/* the answers that make the comparison mean something */
	T_CASE("kernel: held objects found, released ones gone");
	T_EQ_INT(1, kern[7 + I1]);          /* held by O1 */
	T_EQ_INT(-ENOENT, kern[15]);        /* I1 after O1 */
	T_EQ_INT(1, kern[20]);              /* I3 held through P3 */
	T_EQ_INT(-ENOENT, kern[23]);        /* I3 after P3 */
	T_EQ_INT(1, kern[MIM_PINNED]);      /* held by a pinned outer map, maker dead */
	T_EQ_INT(0, kern[MIM_USE + 3]);     /* ... found by id from elsewhere */
	T_EQ_INT(42, kern[MIM_USE + 4]);
	T_EQ_INT(42, kern[MIM_USE + 5]);    /* through a program of another process */
	T_EQ_INT(-ENOENT, kern[MIM_USE + 8]);
	T_EQ_INT(1000, kern[MIM_USE + 9]);
	T_EQ_INT(1, kern[MIM_N + 1]);       /* P held by the timer */
	T_EQ_INT(-ENOENT, kern[MIM_N + 2]); /* P after M */
	T_EQ_INT(1, kern[MIM_N + 8]);       /* P held by a pinned map's timer */
	T_EQ_INT(0, kern[MIM_N + TIMER_N + 1]);
	T_EQ_INT(0, kern[MIM_N + TIMER_N + 3]);
	T_EQ_INT(-ENOENT, kern[MIM_N + TIMER_N + 5]);
	T_EQ_INT(-ENOENT, kern[MIM_N + TIMER_N + 9]);
	T_EQ_INT(7, kern[MIM_N + TIMER_N + PERF_N + 3]);
	T_EQ_INT(1, kern[MIM_N + TIMER_N + PERF_N + 5]);
	return t_done();
}
