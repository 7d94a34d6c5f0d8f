/* task.c - bpf_get_current_pid_tgid(), _uid_gid(), _comm(), _task() and send_signal(): who is "current".  For a
 * program run by the host (test runs, in-application probes) it is the calling thread;
 * for a program run on a kernel tracepoint record it is the task the record names (set by
 * the runner through brt_trace_set_task()), whose name comes from /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "trace/trace.h"
#include "util/util.h"
#include "vm/vm.h"

#define TASK_COMM_LEN 16

static _Thread_local const struct brt_trace_task *current_task;

void brt_trace_set_task(const struct brt_trace_task *task)
{
	current_task = task;
}

const struct brt_trace_task *brt_trace_get_task(void)
{
	return current_task;
}

uint64_t brt_helper_get_current_pid_tgid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_trace_task *t = current_task;

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	if (t)
		return (uint64_t)(uint32_t)t->tgid << 32 | (uint32_t)t->pid;
	return (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)gettid();
}

uint64_t brt_helper_get_current_uid_gid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_trace_task *t = current_task;
	char path[64], line[256];
	unsigned uid = 0, gid = 0;
	int have = 0;
	FILE *f;

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	if (!t)
		return (uint64_t)getgid() << 32 | getuid();
	/* another task: its real ids from /proc, or -EINVAL when it is gone, as the
	 * kernel answers without a task */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
	f = fopen(path, "re");
	if (!f)
		return (uint64_t)-EINVAL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u", &uid) == 1)
			have |= 1;
		else if (sscanf(line, "Gid: %u", &gid) == 1)
			have |= 2;
	}
	fclose(f);
	if (have != 3)
		return (uint64_t)-EINVAL;
	return (uint64_t)gid << 32 | uid;
}

/* Task names by thread id: what the perf rings announced (PERF_RECORD_COMM: each exec
 * or rename on a source's CPUs; PERF_RECORD_FORK: a new task has its parent's) and what
 * /proc said once.  A record whose task is gone before bpfrt runs the program on it (a
 * short-lived command's /proc entry leaves with it) still gets the name the kernel's
 * program saw in the task; and the runner does not open /proc for each record (a
 * program on sys_enter_openat would count the runner's own opens of /proc/PID/comm, each
 * one more record: a loop).  A small table: a slot keeps the last name of the last
 * thread id hashed to it. */
#define COMM_SLOTS 1024
static struct {
	int32_t tid;
	char comm[TASK_COMM_LEN];
} comms[COMM_SLOTS];
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;

void brt_trace_note_comm(int32_t tid, const char *comm, size_t len)
{
	unsigned slot = (uint32_t)tid % COMM_SLOTS;

	if (tid <= 0)
		return;
	len = strnlen(comm, len < TASK_COMM_LEN - 1 ? len : TASK_COMM_LEN - 1);
	pthread_mutex_lock(&comms_lock);
	comms[slot].tid = tid;
	memcpy(comms[slot].comm, comm, len);
	comms[slot].comm[len] = 0;
	pthread_mutex_unlock(&comms_lock);
}

/* Task tid's name from /proc: 0, or -ESRCH when it is gone. */
static int proc_comm(int32_t tid, char comm[TASK_COMM_LEN])
{
	char path[64];
	ssize_t n;

	memset(comm, 0, TASK_COMM_LEN);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	n = brt_fs_read_text(path, comm, TASK_COMM_LEN);
	if (n < 0)
		return -ESRCH;
	if (comm[n - 1] == '\n')
		comm[n - 1] = 0;
	return 0;
}

void brt_trace_note_fork(int32_t tid, int32_t parent)
{
	char comm[TASK_COMM_LEN];
	unsigned slot = (uint32_t)tid % COMM_SLOTS, from = (uint32_t)parent % COMM_SLOTS;
	int known;

	pthread_mutex_lock(&comms_lock);
	known = parent > 0 && comms[from].tid == parent;
	if (known)
		memcpy(comm, comms[from].comm, TASK_COMM_LEN);
	else if (comms[slot].tid == tid)
		comms[slot].tid = 0; /* a reused id: its old name is not the new task's */
	pthread_mutex_unlock(&comms_lock);
	/* a parent not seen yet: its name now, once (the child may be gone first) */
	if (!known && parent > 0 && !proc_comm(parent, comm)) {
		brt_trace_note_comm(parent, comm, TASK_COMM_LEN);
		known = 1;
	}
	if (known)
		brt_trace_note_comm(tid, comm, TASK_COMM_LEN);
}

/* A task's last known name: 0, or -ESRCH when none was seen. */
static int noted_comm(int32_t tid, char comm[TASK_COMM_LEN])
{
	unsigned slot = (uint32_t)tid % COMM_SLOTS;
	int err = -ESRCH;

	pthread_mutex_lock(&comms_lock);
	if (tid > 0 && comms[slot].tid == tid) {
		memcpy(comm, comms[slot].comm, TASK_COMM_LEN);
		err = 0;
	}
	pthread_mutex_unlock(&comms_lock);
	return err;
}

/* The task's comm (at most 15 characters), or -ESRCH when it is gone and no ring
 * announced its name. */
static int task_comm(const struct brt_trace_task *t, char comm[TASK_COMM_LEN])
{
	memset(comm, 0, TASK_COMM_LEN);
	if (!t) {
		if (prctl(PR_GET_NAME, comm, 0, 0, 0))
			return -errno;
		comm[TASK_COMM_LEN - 1] = 0;
		return 0;
	}
	if (!noted_comm(t->pid, comm))
		return 0;
	if (proc_comm(t->pid, comm))
		return -ESRCH;
	brt_trace_note_comm(t->pid, comm, TASK_COMM_LEN);
	return 0;
}

/* bpf_send_signal() and _thread(): sig to current's process (thread: to current itself),
 * as the kernel's bpf_send_signal_common(): a signal past _NSIG is -EINVAL, 0 only checks,
 * init (pid 1) is -EPERM.  Current is a kernel probe's task (its hit has passed: the
 * signal arrives after it, as the kernel's deferred irq_work does in atomic context) or,
 * for a program the host runs (test runs), the calling thread, as the kernel's test runs
 * signal the task that runs them. */
static uint64_t send_signal(uint64_t sig64, int thread)
{
	const struct brt_trace_task *t = current_task;
	uint32_t sig = (uint32_t)sig64; /* the helper's u32 argument */
	pid_t tgid = t ? t->tgid : getpid(), pid = t ? t->pid : gettid();

	if (sig > 64)
		return (uint64_t)-EINVAL;
	if (tgid == 1)
		return (uint64_t)-EPERM;
	if (thread ? tgkill(tgid, pid, (int)sig) : kill(tgid, (int)sig))
		return (uint64_t)-errno;
	return 0;
}

uint64_t brt_helper_send_signal(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return send_signal(r1, 0);
}

uint64_t brt_helper_send_signal_thread(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return send_signal(r1, 1);
}

/* bpf_get_current_task(): the kernel's answer is the address of current's task_struct.
 * No kernel task lives in this address space, so the answer is 0: the probe reads that
 * programs walk it with (BPF_CORE_READ(task, ...)) fail as the kernel's do on a bad
 * address (-EFAULT, destination zeroed) instead of reading whatever sits at a made-up
 * address of this process. */
uint64_t brt_helper_get_current_task(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* bpf_get_current_task_btf(): the verifier types the answer as a trusted kernel
 * task_struct whose fields programs load directly (the kernel turns those loads into
 * fault-safe ones).  No kernel task lives in this address space: the answer is a zeroed
 * stand-in of the calling thread, larger than the kernel's task_struct, so every field
 * reads as 0.  Pointer members read as 0 too, and a load through one of them would fault:
 * programs that load through kernel pointers run on the checked engine (api/prog.c),
 * where such a load reads 0 as the kernel's fault-safe one does (vm.h
 * brt_vm_set_probe_loads()), and it is granted the stand-in (read-only: the verifier
 * allows no store through a kernel pointer). */
#define TASK_STAND_IN_SIZE 32768

/* Allocated on a thread's first use, freed when it exits (a key's destructor): as
 * static thread-local storage, 32 KB that the start of every process linking the library
 * and of every thread it makes zeroed (page faults included) whether it ran a program or
 * not (session 15: .tbss 154 KB, ~3.5 % of a small `bpfrt prog loadall`). */
static _Thread_local uint64_t *stand_in;
static pthread_key_t stand_in_key;
static pthread_once_t stand_in_once = PTHREAD_ONCE_INIT;

static void stand_in_key_make(void)
{
	if (pthread_key_create(&stand_in_key, free))
		stand_in_key = (pthread_key_t)-1; /* the stand-ins of exited threads leak */
}

/* The calling thread's stand-in, or NULL when it cannot be allocated (the helper then
 * answers NULL, which programs must check for a task_struct pointer anyway). */
static uint64_t *task_stand_in(void)
{
	if (!stand_in) {
		pthread_once(&stand_in_once, stand_in_key_make);
		stand_in = calloc(1, TASK_STAND_IN_SIZE);
		if (stand_in && stand_in_key != (pthread_key_t)-1)
			pthread_setspecific(stand_in_key, stand_in);
	}
	return stand_in;
}

uint64_t brt_helper_get_current_task_btf(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint64_t *t = task_stand_in();

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	if (t)
		bpfrt_run_grant(ctx, t, TASK_STAND_IN_SIZE, 0);
	return (uint64_t)(uintptr_t)t;
}

/* bpf_task_pt_regs(task): the registers the task entered the kernel with; the stand-in
 * task has none, so a zeroed struct pt_regs (the stand-in's own zeros, read-only as the
 * verifier keeps loads through kernel pointers). */
uint64_t brt_helper_task_pt_regs(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint64_t *t = task_stand_in();

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	if (t)
		bpfrt_run_grant(ctx, t, TASK_STAND_IN_SIZE, 0);
	return (uint64_t)(uintptr_t)t;
}

/* bpf_get_ns_current_pid_tgid(dev, ino, nsdata, size): current's pid and tgid as seen in
 * its active pid namespace when (dev, ino) name that namespace (what stat() of
 * /proc/self/ns/pid gives); -EINVAL and nsdata zeroed for a size other than 8, a device
 * number wider than the kernel's 32-bit dev_t, or another namespace. */
uint64_t brt_helper_get_ns_current_pid_tgid(uint64_t r1, uint64_t r2, uint64_t r3,
					    uint64_t r4, uint64_t r5,
					    struct bpfrt_run_ctx *ctx)
{
	const struct brt_trace_task *t = current_task;
	uint32_t *ns = (uint32_t *)(uintptr_t)r3, size = (uint32_t)r4;
	char path[64];
	struct stat st;

	(void)r5;
	if (size && !bpfrt_run_access_ok(ctx, ns, size, 1))
		return (uint64_t)-EINVAL;
	if (t)
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)t->pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	if (size != 8 || (r1 >> 32) || stat(path, &st) || (uint64_t)st.st_dev != r1 ||
	    (uint64_t)st.st_ino != r2) {
		memset(ns, 0, size);
		return (uint64_t)-EINVAL;
	}
	/* a tracepoint record's task is named by its ids in our namespace, which is the
	 * one the namespace check just matched */
	ns[0] = t ? (uint32_t)t->pid : (uint32_t)gettid();
	ns[1] = t ? (uint32_t)t->tgid : (uint32_t)getpid();
	return 0;
}

/* bpf_get_attach_cookie(ctx): the cookie given when the program was attached; bpfrt's
 * attachments take none, so 0 (the kernel's answer for a link made without one). */
uint64_t brt_helper_get_attach_cookie(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* bpf_get_func_ip(ctx): the probed function's address; kprobe programs (the only
 * non-trampoline type that may call it) never fire in bpfrt, so 0, the kernel's answer
 * when no kprobe on a function entry is running. */
uint64_t brt_helper_get_func_ip(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* bpf_seq_write(seq, data, len): iterator programs (BPF_TRACE_ITER) only, which never
 * run in bpfrt (no kernel object is iterated here); 0 as for a write that fit. */
uint64_t brt_helper_seq_write(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* bpf_d_path(path, buf, sz): the kernel copies the struct path the verifier proved to be
 * one (copy_from_kernel_nofault()) and formats it with d_path().  bpfrt never hands a
 * program a struct path: the programs that may call this (iterators, trampolines, LSM
 * hooks) load but do not run in user space, and a path's dentry and mount are not
 * visible from here (/proc/self/fd/N names an open file, not a struct path).  So the
 * answer is the kernel's for a path it cannot read, -EFAULT, with buf untouched; a size
 * of 0 answers 0 before the path is looked at, as the kernel's. */
uint64_t brt_helper_d_path(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			   struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r4, (void)r5, (void)ctx;
	if (!(uint32_t)r3)
		return 0;
	return (uint64_t)-EFAULT;
}

/* bpf_get_current_comm(buf, size): the name, NUL-terminated and zero-padded to size (the
 * kernel's strscpy_pad); 0, or -EINVAL with buf zeroed when there is no task. */
uint64_t brt_helper_get_current_comm(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	char *buf = (char *)(uintptr_t)r1;
	char comm[TASK_COMM_LEN];
	size_t size = (size_t)(uint32_t)r2, len;

	(void)r3, (void)r4, (void)r5;
	if (!size)
		return (uint64_t)-EINVAL;
	if (!bpfrt_run_access_ok(ctx, buf, size, 1))
		return (uint64_t)-EFAULT;
	if (task_comm(current_task, comm)) {
		memset(buf, 0, size);
		return (uint64_t)-EINVAL;
	}
	len = strnlen(comm, sizeof(comm));
	if (len > size - 1)
		len = size - 1;
	memcpy(buf, comm, len);
	memset(buf + len, 0, size - len);
	return 0;
}

void brt_trace_current(char comm[16], int32_t *pid, int32_t *cpu)
{
	const struct brt_trace_task *t = current_task;

	if (task_comm(t, comm))
		strcpy(comm, "<...>");
	*pid = t ? t->pid : (int32_t)gettid();
	*cpu = t ? (int32_t)t->cpu : brt_cpu_now();
}

/* Is task tid in the cgroup v2 whose directory has inode number id, or below it (the
 * kernel's task_under_cgroup_hierarchy())?  Its cgroup and every ancestor are compared. */
static int task_under_cgroup(int32_t tid, uint64_t id)
{
	uint64_t ids[BRT_CGROUP_MAX_LEVELS];
	int n = brt_cgroup_ids(tid, ids, BRT_CGROUP_MAX_LEVELS);

	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* long bpf_skb_under_cgroup(skb, map, u32 index) (tc, lwt): is the skb's socket under the
 * cgroup in the cgroup array's slot index?  The kernel asks the socket's cgroup, recorded
 * when the socket was created; a test run's skb has a dummy socket the calling task
 * creates, so that is the caller's cgroup, which task_under_cgroup() reads.  Without a
 * socket (a packet bpfrt received from an interface) -ENOENT; then the slot's answers:
 * -E2BIG past the end, -EAGAIN when empty. */
uint64_t brt_helper_skb_under_cgroup(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	uint64_t id;
	int err;

	(void)r1, (void)r4, (void)r5;
	if (!ctx->pkt || !ctx->pkt->has_sk)
		return (uint64_t)(int64_t)-ENOENT;
	if (!map)
		return (uint64_t)(int64_t)-EINVAL;
	err = brt_cgroup_array_get(map, (uint32_t)r3, &id);
	if (err)
		return (uint64_t)(int64_t)err;
	return (uint64_t)task_under_cgroup((int32_t)gettid(), id);
}

uint64_t brt_helper_current_task_under_cgroup(uint64_t r1, uint64_t r2, uint64_t r3,
					      uint64_t r4, uint64_t r5,
					      struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	const struct brt_trace_task *t = current_task;
	uint64_t id;
	int err;

	(void)r3, (void)r4, (void)r5;
	if (!map)
		return (uint64_t)-EINVAL;
	err = brt_cgroup_array_get(map, (uint32_t)r2, &id);
	if (err)
		return (uint64_t)(int64_t)err;
	return (uint64_t)task_under_cgroup(t ? t->pid : (int32_t)gettid(), id);
}

/* The task a program's task pointer names: the only one it can hold is the calling
 * thread's stand-in (bpf_get_current_task_btf), so its thread id (what a pidfd of it
 * gives as the key of BPF_MAP_LOOKUP_ELEM); 0 for anything else. */
static uint64_t task_owner(uint64_t r)
{
	return r && r == (uint64_t)(uintptr_t)stand_in ? (uint64_t)gettid() : 0;
}

/* void *bpf_task_storage_get(map, task, value, u64 flags): flags other than
 * BPF_LOCAL_STORAGE_GET_F_CREATE or no task: NULL; else the task's value, created from
 * value (NULL: zeros) with F_CREATE. */
uint64_t brt_helper_task_storage_get(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	uint64_t owner = task_owner(r2);
	void *v;

	(void)r5;
	if (!map || map->type != BPF_MAP_TYPE_TASK_STORAGE || !owner ||
	    (r4 & ~(uint64_t)BPF_LOCAL_STORAGE_GET_F_CREATE))
		return 0;
	if (r3 && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r3, map->value_size, 0))
		return 0;
	v = brt_local_storage_get(map, owner, (const void *)(uintptr_t)r3,
				  (r4 & BPF_LOCAL_STORAGE_GET_F_CREATE) != 0);
	if (v && ctx->checked && bpfrt_run_grant(ctx, v, map->value_size, 1))
		return 0;
	return (uint64_t)(uintptr_t)v;
}

/* long bpf_task_storage_delete(map, task): no task -EINVAL, no value -ENOENT */
uint64_t brt_helper_task_storage_delete(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	uint64_t owner = task_owner(r2);

	(void)r3, (void)r4, (void)r5;
	if (!r2)
		return (uint64_t)(int64_t)-EINVAL;
	if (!map || map->type != BPF_MAP_TYPE_TASK_STORAGE || !owner)
		return (uint64_t)(int64_t)-ENOENT;
	return (uint64_t)(int64_t)brt_local_storage_delete(map, owner);
}

/* void *bpf_cgrp_storage_get(map, cgrp, value, u64 flags) and long
 * bpf_cgrp_storage_delete(map, cgrp): a program reaches a kernel struct cgroup only
 * through kernel pointers (task->cgroups->dfl_cgrp), which bpfrt's stand-ins hold as 0,
 * so a run that gets this far passes NULL: get answers NULL, delete -EINVAL, as the
 * kernel's for no cgroup.  Map values keyed by cgroup fds stay reachable from bpf(). */
uint64_t brt_helper_cgrp_storage_get(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

uint64_t brt_helper_cgrp_storage_delete(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)(int64_t)(r2 ? -ENOENT : -EINVAL);
}

/* u64 bpf_get_current_cgroup_id() and bpf_get_current_ancestor_cgroup_id(int level): the
 * cgroup v2 id of the current task (a tracepoint record's task, else the calling thread)
 * or of its ancestor at level (the root is 0; a negative or deeper level: 0). */
static uint64_t current_cgroup_at(int64_t level, int own)
{
	const struct brt_trace_task *t = current_task;
	uint64_t ids[BRT_CGROUP_MAX_LEVELS];
	int n = brt_cgroup_ids(t ? t->pid : (int32_t)gettid(), ids, BRT_CGROUP_MAX_LEVELS);

	if (n <= 0)
		return 0;
	if (own)
		return ids[n - 1];
	return level < 0 || level >= n ? 0 : ids[level];
}

uint64_t brt_helper_get_current_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return current_cgroup_at(0, 1);
}

uint64_t brt_helper_get_current_ancestor_cgroup_id(uint64_t r1, uint64_t r2, uint64_t r3,
						   uint64_t r4, uint64_t r5,
						   struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return current_cgroup_at((int32_t)r1, 0);
}
