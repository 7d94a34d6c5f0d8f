/* test_perf_map.c - BPFRT_PERF_MAP=1 names the JIT's code for perf (src/jit/perf_map.c):
 * a line "START SIZE bpf_prog_<tag>_<name>" in /tmp/perf-<pid>.map whose range holds the
 * image BPF_OBJ_GET_INFO_BY_FD reports, for a program compiled at load (no helper calls)
 * and one compiled at its first run (a helper call); without the variable, no file.  A
 * build without the JIT writes nothing either way.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"

static const struct bpf_insn plain[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 7 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static const struct bpf_insn with_call[] = {
	{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_prandom_u32 },
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 9 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static char path[64];

/* Load and run once; the fd, or -1. */
static int load_run(const char *name, const struct bpf_insn *insns, size_t n, uint32_t want)
{
	static const unsigned char pkt[64];
	BPFRT_OPTS(bpfrt_test_run_opts, run, .data_in = pkt, .data_size_in = sizeof(pkt));
	int fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", insns, n, NULL);

	if (fd < 0) {
		T_FAIL("load %s: %s", name, strerror(errno));
		return -1;
	}
	T_EQ_INT(0, bpfrt_prog_test_run_opts(fd, &run));
	T_EQ_INT(want, run.retval);
	return fd;
}

#ifdef BPFRT_HAVE_JIT
/* Does the map file name the program's image, whole, as bpf_prog_<tag>_<name>? */
static void check_named(int fd, const char *name)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	uint64_t ksym = 0, lo, size;
	char want[64], sym[128], line[256];
	int n, found = 0;
	FILE *f;

	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uint64_t)(uintptr_t)&ksym;
	T_EQ_INT(0, bpfrt_obj_get_info_by_fd(fd, &info, &len));
	T_ASSERT(info.jited_prog_len > 0 && ksym != 0);
	n = snprintf(want, sizeof(want), "bpf_prog_");
	for (int i = 0; i < BPF_TAG_SIZE; i++)
		n += snprintf(want + n, sizeof(want) - (size_t)n, "%02x", info.tag[i]);
	snprintf(want + n, sizeof(want) - (size_t)n, "_%s", name);
	f = fopen(path, "r");
	if (!f) {
		T_FAIL("%s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		T_ASSERT(sscanf(line, "%" SCNx64 " %" SCNx64 " %127s", &lo, &size, sym) == 3);
		if (ksym >= lo && ksym + info.jited_prog_len <= lo + size && !strcmp(sym, want)) {
			printf("%s", line);
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		T_FAIL("no line of %s names [0x%" PRIx64 ", +0x%x) %s", path, ksym,
		       info.jited_prog_len, want);
	else
		T_OK();
}
#endif

int main(void)
{
	int fd1, fd2;

	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)getpid());
	unlink(path);

	T_CASE("off by default");
	unsetenv("BPFRT_PERF_MAP");
	fd1 = load_run("perf_quiet", plain, 2, 7);
	T_ASSERT(access(path, F_OK) != 0 && errno == ENOENT);
	if (fd1 >= 0)
		close(fd1);

	T_CASE("BPFRT_PERF_MAP=1");
	setenv("BPFRT_PERF_MAP", "1", 1);
	fd1 = load_run("perf_plain", plain, 2, 7);
	fd2 = load_run("perf_call", with_call, 3, 9);
#ifdef BPFRT_HAVE_JIT
	if (fd1 >= 0)
		check_named(fd1, "perf_plain");
	if (fd2 >= 0)
		check_named(fd2, "perf_call");
#else
	/* no JIT, no code to name: the variable does nothing */
	printf("no JIT in this build: checked that BPFRT_PERF_MAP=1 writes no file\n");
	T_ASSERT(access(path, F_OK) != 0 && errno == ENOENT);
#endif
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	unsetenv("BPFRT_PERF_MAP");
	unlink(path);
	return t_done();
}
