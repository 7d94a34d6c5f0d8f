/* static_link.c - a program linked against libbpfrt.a that uses only the public API and
 * names none of the files that register into lower folders when the library is loaded:
 * object kinds (maps/map.c, api/prog.c), the helper registry (helpers/source.c hands vm
 * and the verifier its answers) and bpf() commands implemented above api/ (trace/probe.c:
 * BPF_RAW_TRACEPOINT_OPEN).  From an archive of one object per file the linker would drop
 * those files and their registrations; libbpfrt.a is one object, so they must all work.
 *
 * The parent loads a program calling bpf_map_lookup_elem (a helper of maps/, found only
 * through the registry) and pins it with its map; a child, this binary re-executed so
 * that nothing is inherited, opens both pins (program and map files attach through their
 * kinds' callbacks), runs the program, and opens a raw tracepoint with it.
 *   static_link            run the test (ctest build.static_link)
 *   static_link child DIR  the re-executed half
 * Exits 0 when every step works, 1 naming the step that failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpfrt.h>

/* r0 = *lookup(map, 0), or 7 when the lookup fails */
static const char lookup_prog[] = "stw [%r10-4], 0\n"
				  "mov %r2, %r10\n"
				  "add %r2, -4\n"
				  "lddw %r1, map_fd 0\n" /* patched with the map fd */
				  "call 1\n"
				  "jeq %r0, 0, +2\n"
				  "ldxdw %r0, [%r0+0]\n"
				  "exit\n"
				  "mov %r0, 7\n"
				  "exit\n";

static int fail(const char *step)
{
	fprintf(stderr, "FAIL: %s: %s\n", step, strerror(errno));
	return 1;
}

static int child(const char *dir)
{
	char path[256];
	unsigned char pkt[64] = { 0 };
	uint32_t key = 0;
	uint64_t value = 0;
	int map_fd, prog_fd, link_fd, err;
	union bpf_attr attr;

	setenv("BPFRT_FS", dir, 1);
	snprintf(path, sizeof(path), "%s/map", dir);
	map_fd = bpfrt_obj_get(path);
	if (map_fd < 0)
		return fail("BPF_OBJ_GET of the pinned map (map kind)");
	if (bpfrt_map_lookup_elem(map_fd, &key, &value) || value != 42)
		return fail("lookup in the pinned map");
	snprintf(path, sizeof(path), "%s/prog", dir);
	prog_fd = bpfrt_obj_get(path);
	if (prog_fd < 0)
		return fail("BPF_OBJ_GET of the pinned program (program kind)");
	BPFRT_OPTS(bpfrt_test_run_opts, run, .data_in = pkt, .data_size_in = sizeof(pkt));
	err = bpfrt_prog_test_run_opts(prog_fd, &run);
	if (err) {
		errno = -err;
		return fail("BPF_PROG_TEST_RUN of the pinned program");
	}
	if (run.retval != 42) {
		fprintf(stderr, "FAIL: the pinned program returned %u, not 42\n", run.retval);
		return 1;
	}

	/* a command registered from trace/ into bpf()'s table */
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	prog_fd = bpfrt_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "rawtp", "GPL", ret0, 2, NULL);
	if (prog_fd < 0)
		return fail("loading a raw tracepoint program");
	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = (uint64_t)(uintptr_t)"bpfrt_static_link_site";
	attr.raw_tracepoint.prog_fd = (uint32_t)prog_fd;
	link_fd = bpfrt_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
	if (link_fd < 0)
		return fail("BPF_RAW_TRACEPOINT_OPEN (registered by trace/)");
	close(link_fd);
	printf("child: pinned map and program attached, program returned 42, raw tracepoint "
	       "opened\n");
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/bpfrt-static-XXXXXX", path[256], errbuf[256];
	struct bpf_insn *insns;
	uint32_t key = 0;
	uint64_t value = 42;
	size_t n;
	int map_fd, prog_fd, status, ret = 1;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "child"))
		return child(argv[2]);
	if (!mkdtemp(dir)) {
		printf("skipped: cannot create a directory in /tmp\n");
		return 77;
	}
	setenv("BPFRT_FS", dir, 1);
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "values", 4, 8, 1, NULL);
	if (map_fd < 0 || bpfrt_map_update_elem(map_fd, &key, &value, BPF_ANY))
		return fail("creating the map");
	if (bpfrt_asm(lookup_prog, "lookup", &insns, &n, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "FAIL: %s\n", errbuf);
		return 1;
	}
	insns[3].imm = map_fd;
	prog_fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "lookup", "GPL", insns, n, NULL);
	free(insns);
	if (prog_fd < 0)
		return fail("loading a program calling bpf_map_lookup_elem (helper registry)");
	snprintf(path, sizeof(path), "%s/map", dir);
	if (bpfrt_obj_pin(map_fd, path))
		return fail("pinning the map");
	snprintf(path, sizeof(path), "%s/prog", dir);
	if (bpfrt_obj_pin(prog_fd, path))
		return fail("pinning the program");
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		ret = WEXITSTATUS(status);
	snprintf(path, sizeof(path), "%s/map", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/prog", dir);
	unlink(path);
	rmdir(dir);
	if (ret == 0)
		printf("ok: libbpfrt.a registers kinds, helpers and commands in a static link\n");
	return ret;
}
