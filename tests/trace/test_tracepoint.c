/* test_tracepoint.c - kernel tracepoints as event sources: a program attached to
 * syscalls:sys_enter_getppid counts this process's getppid() calls (its own tgid through
 * bpf_get_current_pid_tgid(), the syscall number from the record), a link fd that detaches
 * when closed or through bpfrt_link_detach(), and the refusals: unknown tracepoint,
 * malformed name, wrong program type, reads past the record; a record that names its task
 * (sched_process_exit's comm) names it for bpf_get_current_comm.  Skips without
 * root/tracefs.
 */
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "trace_test.h"

#define TP_NAME "syscalls:sys_enter_getppid"
#define CALLS 200

static uint64_t counted(int map_fd)
{
	uint32_t key = 0;
	uint64_t v = 0;

	bpfrt_map_lookup_elem(map_fd, &key, &v);
	return v;
}

/* Wait (up to ~10 s) for the map to reach want. */
static uint64_t wait_count(int map_fd, uint64_t want)
{
	uint64_t v = 0;

	for (int i = 0; i < 500 && (v = counted(map_fd)) < want; i++)
		usleep(20000);
	return v;
}

/* perf_event fds this process has open */
static int perf_fds(void)
{
	char path[300], target[128];
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	while (dir && (d = readdir(dir))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += strstr(target, "perf_event") != NULL;
		}
	}
	if (dir)
		closedir(dir);
	return n;
}

static void call_getppid(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* sched:sched_process_exit of a child forked and named before the attach (no ring saw its
 * fork or name) and reaped before bpfrt runs the record (the runner drains every 50 ms,
 * the parent reaps at once): bpf_get_current_comm must still give its name, the one the
 * record's comm field holds, as the kernel's program reads it from the exiting task. */
static void exit_comm(void)
{
	static const char name[] = "brt-exit-name";
	char text[1024], got[16] = { 0 };
	int map_fd, prog, link, go[2], ready[2], status;
	uint32_t key = 0;
	pid_t child;

	T_CASE("sched_process_exit: a task gone before its record runs has the record's name");
	if (bpfrt_tracepoint_fields("sched:sched_process_exit", NULL, 0, NULL, NULL) < 0) {
		fprintf(stderr, "  (no sched:sched_process_exit: case not run)\n");
		return;
	}
	T_ASSERT(pipe(go) == 0 && pipe(ready) == 0);
	child = fork();
	if (child == 0) {
		char c = 0;

		prctl(PR_SET_NAME, name, 0, 0, 0);
		close(go[1]);
		(void)!write(ready[1], &c, 1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	T_ASSERT(child > 0);
	close(go[0]);
	close(ready[1]);
	/* named before the attach: no PERF_RECORD_COMM of the rename reaches the rings */
	T_EQ_INT(1, (int)read(ready[0], got, 1));
	close(ready[0]);
	got[0] = 0;
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "comm", 4, 16, 1, NULL);
	snprintf(text, sizeof(text),
		 "call bpf_get_current_pid_tgid\nrsh %%r0, 32\njne %%r0, %d, out\n"
		 "stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call 1\njeq %%r0, 0, out\nmov %%r1, %%r0\nmov %%r2, 16\n"
		 "call bpf_get_current_comm\nout:\nmov %%r0, 0\nexit\n",
		 (int)child, map_fd);
	prog = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", text, NULL, 0);
	T_ASSERT(prog >= 0);
	link = bpfrt_tracepoint_attach(prog, "sched:sched_process_exit", NULL);
	T_ASSERT(link >= 0);
	close(go[1]); /* the child's read returns: it exits */
	T_EQ_INT(child, waitpid(child, &status, 0));
	for (int i = 0; i < 250 && !got[0]; i++) {
		usleep(20000);
		bpfrt_map_lookup_elem(map_fd, &key, got);
	}
	T_EQ_STR(name, got);
	close(link);
	close(prog);
	close(map_fd);
}

int main(void)
{
	static char log[65536];
	struct bpfrt_link_stats st;
	char text[2048];
	int map_fd, prog, link, fd;
	uint32_t size = 0, id = 0;
	uint64_t before;

	tt_private_fs("tracepoint");
	if (geteuid() != 0)
		T_SKIP("needs root for perf_event_open on tracepoints");
	if (bpfrt_tracepoint_fields(TP_NAME, NULL, 0, &size, &id) < 0)
		T_SKIP("no tracefs or no %s tracepoint", TP_NAME);
	T_CASE("format: record size");
	T_EQ_INT(12, size);

	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "cnt", 4, 8, 1, NULL);
	snprintf(text, sizeof(text),
		 "mov %%r7, %%r1\nldxw %%r6, [%%r7+8]\njne %%r6, %d, +12\n"
		 "call bpf_get_current_pid_tgid\nrsh %%r0, 32\njne %%r0, %d, +9\n"
		 "stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call 1\njeq %%r0, 0, +2\nmov %%r1, 1\nlock add [%%r0+0], %%r1\n"
		 "mov %%r0, 0\nexit\n",
		 (int)SYS_getppid, (int)getpid(), map_fd);
	prog = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", text, log, sizeof(log));
	T_CASE("load the counting program");
	if (prog < 0)
		fprintf(stderr, "%s\n", log);
	T_ASSERT(prog >= 0);

	T_CASE("attach, count this process's getppid() calls");
	link = bpfrt_tracepoint_attach(prog, TP_NAME, NULL);
	T_ASSERT(link >= 0);
	call_getppid(CALLS);
	T_EQ_INT(CALLS, wait_count(map_fd, CALLS));
	usleep(100000);
	T_EQ_INT(CALLS, counted(map_fd));
	T_EQ_INT(0, bpfrt_link_stats(link, &st));
	T_ASSERT(st.events >= CALLS);
	T_EQ_INT(0, st.errors);

	T_CASE("closing the link fd detaches");
	close(link);
	/* the link thread sees the hangup and closes the perf events: wait for that */
	for (int i = 0; i < 1000 && perf_fds() > 0; i++)
		usleep(10000);
	T_EQ_INT(0, perf_fds());
	before = counted(map_fd);
	call_getppid(50);
	usleep(200000);
	T_EQ_INT(before, counted(map_fd));

	T_CASE("bpfrt_link_detach detaches at once; the fd stays open");
	link = bpfrt_tracepoint_attach(prog, "syscalls/sys_enter_getppid", NULL);
	T_ASSERT(link >= 0);
	call_getppid(10);
	before = wait_count(map_fd, before + 10);
	T_EQ_INT(0, bpfrt_link_detach(link));
	call_getppid(20);
	usleep(200000);
	T_EQ_INT(before, counted(map_fd));
	T_EQ_INT(-EINVAL, bpfrt_link_detach(link));
	close(link);
	T_EQ_INT(-EBADF, bpfrt_link_detach(link));

	T_CASE("closing the program fd leaves the link attached (it holds the program)");
	link = bpfrt_tracepoint_attach(prog, TP_NAME, NULL);
	close(prog);
	call_getppid(10);
	T_EQ_INT(before + 10, wait_count(map_fd, before + 10));
	close(link);

	T_CASE("unknown tracepoint: ENOENT");
	prog = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", "mov %r0, 0\nexit\n", NULL, 0);
	T_EQ_INT(-ENOENT, bpfrt_tracepoint_attach(prog, "skb:no_such_event", NULL));
	T_EQ_INT(-ENOENT, bpfrt_tracepoint_attach(prog, "nosuchcat:kfree_skb", NULL));
	T_CASE("malformed names: EINVAL");
	T_EQ_INT(-EINVAL, bpfrt_tracepoint_attach(prog, "kfree_skb", NULL));
	T_EQ_INT(-EINVAL, bpfrt_tracepoint_attach(prog, "../..:x", NULL));
	T_EQ_INT(-EINVAL, bpfrt_tracepoint_attach(prog, "skb:", NULL));
	close(prog);

	T_CASE("a program of another type: EINVAL");
	fd = tt_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", "mov %r0, 0\nexit\n", NULL, 0);
	T_EQ_INT(-EINVAL, bpfrt_tracepoint_attach(fd, TP_NAME, NULL));
	close(fd);
	T_CASE("not a program fd: EINVAL; closed fd: EBADF");
	T_EQ_INT(-EINVAL, bpfrt_tracepoint_attach(map_fd, TP_NAME, NULL));
	T_EQ_INT(-EBADF, bpfrt_tracepoint_attach(1000, TP_NAME, NULL));

	T_CASE("reading past the record: EACCES at attach (the kernel's max_ctx_offset)");
	fd = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", "ldxw %r0, [%r1+12]\nexit\n", NULL, 0);
	T_ASSERT(fd >= 0);
	T_EQ_INT(-EACCES, bpfrt_tracepoint_attach(fd, TP_NAME, NULL));
	close(fd);
	fd = tt_load(BPF_PROG_TYPE_TRACEPOINT, "GPL", "ldxw %r0, [%r1+8]\nexit\n", NULL, 0);
	link = bpfrt_tracepoint_attach(fd, TP_NAME, NULL);
	T_ASSERT(link >= 0);
	close(link);
	close(fd);
	close(map_fd);
	exit_comm();
	tt_cleanup_fs();
	return t_done();
}
