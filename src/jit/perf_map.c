/* perf_map.c - JIT'd code named for perf.  perf cannot see symbols in anonymous executable
 * memory; its convention for JITs (tools/perf/Documentation/jit-interface.txt) is a text
 * file /tmp/perf-<pid>.map of lines "START SIZE name" (hex, no 0x) that `perf report` reads
 * for the process.  With BPFRT_PERF_MAP=1 each compiled image gets a line, named as the
 * kernel names its JIT images in kallsyms (bpf_prog_<tag>_<name>), so a profile shows the
 * same symbol whichever side ran the program.  Off by default: writing a file in /tmp on
 * every load would surprise.  Never fails the compile: a line that cannot be written is
 * dropped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit/jit.h"

int brt_jit_perf_map_enabled(void)
{
	const char *v = getenv("BPFRT_PERF_MAP");

	/* read per compile, not cached: a compile costs far more than getenv() */
	return v && !strcmp(v, "1");
}

void brt_jit_perf_sym(char sym[BRT_JIT_PERF_SYM_LEN], const unsigned char tag[8],
		      const char *name)
{
	int len = snprintf(sym, BRT_JIT_PERF_SYM_LEN, "bpf_prog_");

	for (int i = 0; i < 8; i++)
		len += snprintf(sym + len, BRT_JIT_PERF_SYM_LEN - (size_t)len, "%02x", tag[i]);
	if (name && name[0])
		snprintf(sym + len, BRT_JIT_PERF_SYM_LEN - (size_t)len, "_%s", name);
}

void brt_jit_perf_map_add(const void *code, size_t size, const char *sym)
{
	char path[64], line[320];
	int fd, len;

	if (!code || !size || !brt_jit_perf_map_enabled())
		return;
	/* the pid now, not at the first line: a forked child's code goes to its own file */
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)getpid());
	len = snprintf(line, sizeof(line), "%lx %zx %s\n", (unsigned long)(uintptr_t)code, size,
		       sym && *sym ? sym : "bpf_prog");
	if (len <= 0)
		return;
	if ((size_t)len >= sizeof(line)) { /* a long name cut, the line still whole */
		len = (int)sizeof(line) - 1;
		line[len - 1] = '\n';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* one write() of the whole line: O_APPEND makes it atomic against other threads'
	 * lines, so concurrent compiles never interleave */
	if (write(fd, line, (size_t)len) != len) {
		/* nothing to do: a profile without the name is the only loss */
	}
	close(fd);
}
