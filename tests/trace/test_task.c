/* test_task.c - bpf_get_current_pid_tgid(), _uid_gid() and _comm() in programs run by
 * this process (the calling thread is current) and with a tracepoint record's task set
 * (another process is current: its ids and name come from /proc).
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "trace_test.h"
#include "trace/trace.h"
#include "vm/vm.h"

#define RAW BPF_PROG_TYPE_RAW_TRACEPOINT

static const char comm_prog_fmt[] =
	"stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\ncall 1\n"
	"jeq %%r0, 0, +4\nmov %%r1, %%r0\nmov %%r2, 16\ncall bpf_get_current_comm\nexit\n"
	"mov %%r0, 1\nexit\n";

/* Run the comm program and return the name it stored in the map. */
static void run_comm(int map_fd, char out[16])
{
	char text[512];
	uint32_t ret = 99, key = 0;
	int fd;

	memset(out, 0x7f, 16);
	snprintf(text, sizeof(text), comm_prog_fmt, map_fd);
	fd = tt_load(RAW, "GPL", text, NULL, 0);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, tt_run(fd, NULL, 0, &ret));
	T_EQ_INT(0, ret);
	T_EQ_INT(0, bpfrt_map_lookup_elem(map_fd, &key, out));
	close(fd);
}

/* The id of a process that ran and is gone (forked, exited at once, reaped). */
static pid_t gone_pid(void)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	return child;
}

int main(void)
{
	struct brt_trace_task task = { 0 };
	uint32_t ret = 0;
	char comm[16];
	int fd, map_fd;
	pid_t child;

	tt_private_fs("task");
	T_CASE("pid_tgid: tgid in the high half");
	fd = tt_load(RAW, "GPL", "call bpf_get_current_pid_tgid\nrsh %r0, 32\nexit\n", NULL, 0);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, tt_run(fd, NULL, 0, &ret));
	T_EQ_INT(getpid(), ret);
	close(fd);

	T_CASE("pid_tgid: thread id in the low half");
	fd = tt_load(RAW, "GPL", "call bpf_get_current_pid_tgid\nexit\n", NULL, 0);
	T_EQ_INT(0, tt_run(fd, NULL, 0, &ret));
	T_EQ_INT(gettid(), ret);

	T_CASE("pid_tgid: a record's task is current");
	task.pid = 4242;
	task.tgid = 4240;
	brt_trace_set_task(&task);
	T_EQ_U64((4240ull << 32) | 4242, brt_helper_get_current_pid_tgid(0, 0, 0, 0, 0, NULL));
	brt_trace_set_task(NULL);
	close(fd);

	T_CASE("uid_gid");
	fd = tt_load(RAW, "GPL", "call bpf_get_current_uid_gid\nexit\n", NULL, 0);
	T_EQ_INT(0, tt_run(fd, NULL, 0, &ret));
	T_EQ_INT(getuid(), ret);
	close(fd);
	fd = tt_load(RAW, "GPL", "call bpf_get_current_uid_gid\nrsh %r0, 32\nexit\n", NULL, 0);
	T_EQ_INT(0, tt_run(fd, NULL, 0, &ret));
	T_EQ_INT(getgid(), ret);
	close(fd);

	T_CASE("comm: the calling thread's name, zero-padded");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "comm", 4, 16, 1, NULL);
	T_ASSERT(map_fd >= 0);
	prctl(PR_SET_NAME, "trace-comm", 0, 0, 0);
	run_comm(map_fd, comm);
	T_EQ_STR("trace-comm", comm);
	T_EQ_INT(0, comm[15]);
	T_EQ_INT(0, comm[11]);

	T_CASE("comm: another process named by a record");
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "trace-child", 0, 0, 0);
		pause();
		_exit(0);
	}
	usleep(100000);
	task.pid = child;
	task.tgid = child;
	brt_trace_set_task(&task);
	for (int i = 0; i < 50; i++) {
		run_comm(map_fd, comm);
		if (!strcmp(comm, "trace-child"))
			break;
		usleep(20000);
	}
	T_EQ_STR("trace-child", comm);
	T_CASE("uid_gid: another process");
	T_EQ_U64((uint64_t)getgid() << 32 | getuid(),
		 brt_helper_get_current_uid_gid(0, 0, 0, 0, 0, NULL));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	struct bpfrt_run_ctx rc = { 0 }; /* not the checked engine: no regions */

	T_CASE("comm: a task gone since its name was read: that name (the kernel's program "
	       "ran in the task and saw it)");
	memset(comm, 0x55, sizeof(comm));
	T_EQ_U64(0, brt_helper_get_current_comm((uintptr_t)comm, 16, 0, 0, 0, &rc));
	T_EQ_STR("trace-child", comm);

	T_CASE("comm: a gone task a ring's PERF_RECORD_COMM named; its fork's child too");
	child = gone_pid();
	task.pid = task.tgid = child;
	brt_trace_note_comm(child, "short-lived-command", 19); /* the kernel's 15 + NUL */
	T_EQ_U64(0, brt_helper_get_current_comm((uintptr_t)comm, 16, 0, 0, 0, &rc));
	T_EQ_STR("short-lived-com", comm);
	task.pid = task.tgid = child + 1 + 1024 * 7; /* no /proc entry that old, likely */
	if (kill(task.pid, 0) && errno == ESRCH) {
		brt_trace_note_fork(task.pid, child);
		T_EQ_U64(0, brt_helper_get_current_comm((uintptr_t)comm, 16, 0, 0, 0, &rc));
		T_EQ_STR("short-lived-com", comm);
	}

	T_CASE("comm: a task that is gone, its name never seen: -EINVAL, buffer zeroed");
	child = gone_pid();
	task.pid = task.tgid = child;
	brt_trace_note_fork(child, 0); /* its id reused: an older task's name is not its */
	memset(comm, 0x55, sizeof(comm));
	{
		T_EQ_U64((uint64_t)-EINVAL, brt_helper_get_current_comm((uintptr_t)comm, 16, 0, 0,
									 0, &rc));
		T_EQ_INT(0, comm[0]);
		T_EQ_INT(0, comm[15]);
		T_EQ_U64((uint64_t)-EINVAL, brt_helper_get_current_uid_gid(0, 0, 0, 0, 0, &rc));
	}
	brt_trace_set_task(NULL);
	close(map_fd);
	tt_cleanup_fs();
	return t_done();
}
