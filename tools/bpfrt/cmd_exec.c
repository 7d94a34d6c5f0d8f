/* cmd_exec.c - "bpfrt exec -- CMD ARGS": run an unmodified program with its bpf() calls
 * going to bpfrt (libbpfrt-preload.so, tools/preload/, in LD_PRELOAD).  The
 * library is the one next to this binary (build tree), else the installed one; a static
 * executable cannot be preloaded, which is said (and refused with BPFRT_PRELOAD_STRICT).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef BPFRT_PRELOAD_NAME
#define BPFRT_PRELOAD_NAME "libbpfrt-preload.so"
#endif
#ifndef BPFRT_PRELOAD_BIN_TO_LIB
#define BPFRT_PRELOAD_BIN_TO_LIB "../lib"
#endif
#ifndef BPFRT_PRELOAD_LIBDIR
#define BPFRT_PRELOAD_LIBDIR "/usr/local/lib"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt exec [OPTIONS] -- COMMAND [ARGS...]\n\n"
		"Run COMMAND with libbpfrt-preload.so in LD_PRELOAD: its bpf() system calls\n"
		"(libbpf's syscall(__NR_bpf, ...), a bpf() symbol) go to bpfrt, so an unmodified\n"
		"libbpf application or bpftool runs on bpfrt, as any user.  Objects are bpfrt's\n"
		"real fds; /sys/fs/bpf paths of BPF_OBJ_PIN/BPF_OBJ_GET mean $BPFRT_FS.\n"
		"Perf buffers (perf_event_open of PERF_COUNT_SW_BPF_OUTPUT) are bpfrt perf\n"
		"rings; a bpfrt program set on a tracepoint's perf event (PERF_EVENT_IOC_SET_BPF)\n"
		"runs in this process on the kernel's records; SO_ATTACH_BPF of a bpfrt program\n"
		"gets the kernel's errno and one line on stderr.\n"
		"A statically linked COMMAND, or bpf() issued by its own syscall instruction,\n"
		"is not caught; with --strict (BPFRT_PRELOAD_STRICT=1) a static COMMAND is\n"
		"refused and inline bpf() syscalls trap into bpfrt instead of reaching the kernel.\n\n"
		"  -s, --strict        set BPFRT_PRELOAD_STRICT=1\n"
		"  -l, --library PATH  the preload library (default: $BPFRT_PRELOAD, else the one\n"
		"                      next to bpfrt or installed: %s)\n"
		"  -h, --help          show this help\n",
		BPFRT_PRELOAD_LIBDIR "/" BPFRT_PRELOAD_NAME);
}

/* The preload library: next to the running bpfrt (build tree), then BIN_TO_LIB relative
 * to it (a relocated install), then the configured libdir. */
static int find_library(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(out, len, "%s/%s", exe, BPFRT_PRELOAD_NAME) < len &&
			    !access(out, R_OK))
				return 0;
			if ((size_t)snprintf(out, len, "%s/%s/%s", exe, BPFRT_PRELOAD_BIN_TO_LIB,
					     BPFRT_PRELOAD_NAME) < len &&
			    !access(out, R_OK))
				return 0;
		}
	}
	snprintf(out, len, "%s/%s", BPFRT_PRELOAD_LIBDIR, BPFRT_PRELOAD_NAME);
	return access(out, R_OK) ? -1 : 0;
}

/* COMMAND as execvp() would find it. */
static int find_command(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(out, X_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t l = strcspn(path, ":");

		snprintf(out, len, "%.*s/%s", (int)l, l ? path : ".", cmd);
		if (!access(out, X_OK))
			return 0;
		path += l + (path[l] == ':');
	}
	return -1;
}

/* 1: an ELF executable without PT_INTERP (static: LD_PRELOAD is never read); 0: dynamic,
 * a script (its interpreter is what runs) or unreadable. */
static int is_static_elf(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), st = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(ph)) {
		st = 1;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph)) {
				st = 0;
				break;
			}
			if (ph.p_type == PT_INTERP) {
				st = 0;
				break;
			}
		}
	}
	close(fd);
	return st;
}

int cmd_exec(int argc, char **argv)
{
	char lib[PATH_MAX], cmd[PATH_MAX];
	const char *libarg = getenv("BPFRT_PRELOAD"), *old, *strict_env;
	char *preload;
	int i, strict = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-s") || !strcmp(argv[i], "--strict")) {
			strict = 1;
		} else if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "--library")) {
			if (++i == argc)
				return cli_error("exec: %s needs a PATH", argv[i - 1]) + 1;
			libarg = argv[i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "bpfrt: exec: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (libarg && *libarg)
		snprintf(lib, sizeof(lib), "%s", libarg);
	else if (find_library(lib, sizeof(lib)))
		return cli_error("exec: %s not found (next to bpfrt, nor in %s): "
				 "give --library PATH", BPFRT_PRELOAD_NAME, BPFRT_PRELOAD_LIBDIR);
	if (access(lib, R_OK))
		return cli_error("exec: %s: %s", lib, strerror(errno));
	if (strict)
		setenv("BPFRT_PRELOAD_STRICT", "1", 1);
	strict_env = getenv("BPFRT_PRELOAD_STRICT");
	strict = strict_env && *strict_env && strcmp(strict_env, "0");
	if (find_command(argv[i], cmd, sizeof(cmd)))
		return cli_error("exec: %s: command not found", argv[i]);
	if (is_static_elf(cmd)) {
		if (strict)
			return cli_error("exec: %s is statically linked: LD_PRELOAD cannot reach "
					 "its bpf() calls (BPFRT_PRELOAD_STRICT)", cmd);
		fprintf(stderr, "bpfrt: exec: warning: %s is statically linked: its bpf() "
				"calls reach the kernel, not bpfrt\n", cmd);
	}
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		size_t n = strlen(lib) + strlen(old) + 2;

		preload = malloc(n);
		if (!preload)
			return cli_error("exec: out of memory");
		snprintf(preload, n, "%s:%s", lib, old);
	} else {
		preload = lib;
	}
	setenv("LD_PRELOAD", preload, 1);
	execv(cmd, argv + i);
	return cli_error("exec: %s: %s", cmd, strerror(errno)) + 126;
}
