/* probe.c - libbpf's feature probes (libbpf_probe_bpf_prog_type, _map_type, _helper) as
 * an application or `bpftool feature probe` runs them: one line per probe, so the
 * kernel's answers and bpfrt's (under libbpfrt-preload.so) can be compared line by line.
 *   probe [progs|maps|helpers]... (default: all three) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int main(int argc, char **argv)
{
	int progs = argc < 2, maps = argc < 2, helpers = argc < 2;
	const char *name;

	for (int i = 1; i < argc; i++) {
		progs |= !strcmp(argv[i], "progs");
		maps |= !strcmp(argv[i], "maps");
		helpers |= !strcmp(argv[i], "helpers");
	}
	libbpf_set_print(silent);
	for (int t = 1; progs && (name = libbpf_bpf_prog_type_str(t)); t++)
		printf("prog %s: %d\n", name, libbpf_probe_bpf_prog_type(t, NULL));
	for (int t = 1; maps && (name = libbpf_bpf_map_type_str(t)); t++)
		printf("map %s: %d\n", name, libbpf_probe_bpf_map_type(t, NULL));
	for (int t = 1; helpers && (name = libbpf_bpf_prog_type_str(t)); t++)
		for (int h = 1; h < 212; h++)
			printf("helper %s %d: %d\n", name, h, libbpf_probe_bpf_helper(t, h, NULL));
	return 0;
}
