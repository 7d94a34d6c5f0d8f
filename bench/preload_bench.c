/* preload_bench.c - the cost of one bpf() call (BPF_MAP_LOOKUP_ELEM of an array map)
 * three ways: the kernel's syscall, bpfrt_bpf() called directly, and syscall(__NR_bpf)
 * intercepted by libbpfrt-preload.so (bench/sections/90-preload.sh runs the "syscall"
 * mode with and without LD_PRELOAD).  Prints "RES <name> <ns per call>".
 * Usage: preload_bench MS direct|syscall NAME */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long sys_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

static long lib_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return bpfrt_bpf(cmd, attr, size);
}

int main(int argc, char **argv)
{
	long (*call)(int, union bpf_attr *, unsigned);
	union bpf_attr a;
	unsigned key = 0;
	unsigned long long val = 0, n = 0;
	double ms, t0, t;
	long fd;

	if (argc != 4)
		return 2;
	ms = atof(argv[1]);
	call = !strcmp(argv[2], "direct") ? lib_bpf : sys_bpf;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	fd = call(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0) {
		perror("map create");
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = (unsigned)fd;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)&val;
	t0 = now_ns();
	do {
		for (int i = 0; i < 1000; i++)
			if (call(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
				return 1;
		n += 1000;
		t = now_ns();
	} while (t - t0 < ms * 1e6);
	printf("RES %s %.1f\n", argv[3], (t - t0) / (double)n);
	return 0;
}
