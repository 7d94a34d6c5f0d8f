/* test_cli_event_pipe.c - "bpfrt map event_pipe" as a user runs it: the CLI (another
 * process) puts its rings into a pinned perf event array, this process runs a program that
 * calls bpf_perf_event_output() on it until the CLI has printed -n samples; JSON and text
 * output, the single-ring form (cpu N index M), -t, --help and the errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"

#define CLI BPFRT_BINARY_DIR "/bpfrt"

static char fs[128], pin[192];

/* r10-8 = 0x0807060504030201; bpf_perf_event_output(ctx, map, FLAGS, r10-8, 8) */
static int load(int map_fd, uint32_t flags)
{
	struct bpf_insn p[] = {
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_0, 0, 0, 0x04030201 },
		{ 0, 0, 0, 0, 0x08070605 },
		{ BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -8, 0 },
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map_fd },
		{ 0, 0, 0, 0, 0 },
		{ BPF_LD | BPF_IMM | BPF_DW, BPF_REG_3, 0, 0, (int32_t)flags },
		{ 0, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_10, 0, 0 },
		{ BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, -8 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, 8 },
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_perf_event_output },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};

	return bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ep", "GPL", p,
			       sizeof(p) / sizeof(p[0]), NULL);
}

/* Start the CLI with argv; its stdout comes back through *out_fd. */
static pid_t spawn(char *const argv[], int *out_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(CLI, argv);
		_exit(127);
	}
	close(p[1]);
	*out_fd = p[0];
	return pid;
}

/* Read everything the CLI prints and its exit status. */
static int finish(pid_t pid, int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	int status = 0;

	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run the program until `want` outputs succeeded (the CLI may not have its rings in
 * the map yet: ENOENT until then) or the CLI exited; returns the successes. */
static int produce(int prog, pid_t cli, int want)
{
	unsigned char pkt[64] = { 0 };
	int got = 0;

	for (int tries = 0; tries < 3000 && got < want; tries++) {
		BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));
		struct timespec ms10 = { 0, 10000000 };

		if (!bpfrt_prog_test_run_opts(prog, &o) && o.retval == 0) {
			got++;
			continue;
		}
		if (waitpid(cli, NULL, WNOHANG) == cli)
			break;
		nanosleep(&ms10, NULL);
	}
	return got;
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

int main(void)
{
	static char out[65536];
	int map, prog, prog1, fd, rc, cpu = 0;
	char cpu_s[16], hdr[64];
	pid_t pid;
	cpu_set_t set;

	if (access(CLI, X_OK))
		T_SKIP("no CLI at %s", CLI);
	/* a fresh directory (not one named by the pid alone: a killed run of the same pid
	 * may have left its pins there) */
	snprintf(fs, sizeof(fs), "/tmp/bpfrt-test-eventpipe-XXXXXX");
	if (!t_scratch_dir(fs))
		snprintf(fs, sizeof(fs), "/tmp/bpfrt-test-eventpipe-%d", (int)getpid());
	setenv("BPFRT_FS", fs, 1);
	snprintf(pin, sizeof(pin), "%s/events", fs);
	map = bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "events", 4, 4, 4, NULL);
	T_CASE("setup");
	T_ASSERT(map >= 0);
	T_EQ_INT(0, bpfrt_obj_pin(map, pin));
	prog = load(map, (uint32_t)BPF_F_CURRENT_CPU);
	prog1 = load(map, 3);
	T_ASSERT(prog >= 0 && prog1 >= 0);

	T_CASE("event_pipe -j -n 3: one JSON line per sample");
	{
		char *argv[] = { "bpfrt", "map", "-j", "event_pipe", pin, "-n", "3", "-t", "60",
				 NULL };

		pid = spawn(argv, &fd);
		T_EQ_INT(3, produce(prog, pid, 3));
		rc = finish(pid, fd, out, sizeof(out));
		T_EQ_INT(0, rc);
		T_EQ_INT(3, count(out, "{\"type\":9,\"cpu\":"));
		/* 8 bytes + u32 size, padded to 8: 12 bytes, the last 4 zero */
		T_EQ_INT(3, count(out, "\"data\":[\"0x01\",\"0x02\",\"0x03\",\"0x04\",\"0x05\","
				       "\"0x06\",\"0x07\",\"0x08\",\"0x00\",\"0x00\",\"0x00\","
				       "\"0x00\"]}"));
	}

	T_CASE("event_pipe cpu C index 3, text");
	/* the first CPU this process may use: the CLI's one ring is for it */
	CPU_ZERO(&set);
	T_EQ_INT(0, sched_getaffinity(0, sizeof(set), &set));
	while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
		cpu++;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	T_EQ_INT(0, sched_setaffinity(0, sizeof(set), &set));
	snprintf(cpu_s, sizeof(cpu_s), "%d", cpu);
	snprintf(hdr, sizeof(hdr), " CPU: %d index: 3 =====", cpu);
	{
		char *argv[] = { "bpfrt", "map", "event_pipe", pin, "cpu", cpu_s, "index", "3",
				 "-n", "2", NULL };

		pid = spawn(argv, &fd);
		T_EQ_INT(2, produce(prog1, pid, 2));
		rc = finish(pid, fd, out, sizeof(out));
		T_EQ_INT(0, rc);
		T_EQ_INT(2, count(out, hdr));
		T_EQ_INT(2, count(out, "01 02 03 04 05 06 07 08 00 00 00 00\n"));
	}

	T_CASE("event_pipe -t: stops with nothing to print");
	{
		char *argv[] = { "bpfrt", "map", "event_pipe", pin, "-t", "0.2", NULL };

		pid = spawn(argv, &fd);
		T_EQ_INT(0, finish(pid, fd, out, sizeof(out)));
		T_EQ_STR("", out);
	}

	T_CASE("errors and help");
	{
		char *help[] = { "bpfrt", "map", "--help", NULL };
		char *arr[] = { "bpfrt", "map", "event_pipe", NULL, NULL };
		char *half[] = { "bpfrt", "map", "event_pipe", pin, "cpu", "0", NULL };
		char *junk[] = { "bpfrt", "map", "event_pipe", pin, "bogus", NULL };
		char apin[192];
		int a = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "arr", 4, 4, 1, NULL);

		pid = spawn(help, &fd);
		T_EQ_INT(0, finish(pid, fd, out, sizeof(out)));
		T_CONTAINS("map event_pipe MAP", out);
		snprintf(apin, sizeof(apin), "%s/arr", fs);
		T_EQ_INT(0, bpfrt_obj_pin(a, apin));
		arr[3] = apin;
		pid = spawn(arr, &fd);
		T_EQ_INT(1, finish(pid, fd, out, sizeof(out)));
		pid = spawn(half, &fd);
		T_EQ_INT(1, finish(pid, fd, out, sizeof(out)));
		pid = spawn(junk, &fd);
		T_EQ_INT(1, finish(pid, fd, out, sizeof(out)));
		close(a);
	}
	close(prog);
	close(prog1);
	close(map);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fs);
		(void)!system(cmd);
	}
	return t_done();
}
