/* callback_bench.c - run time of bpf_loop() with 1,000 callback calls and of the same
 * work as an open-coded loop (bench/callback/loop.bpf.c), in the kernel (BPF_PROG_TEST_RUN
 * through bpf(2), JIT as configured) and in bpfrt on each engine (BPFRT_ENGINE picks it at
 * load).  Prints "RES <side> <program> <ns per run>" for each of PASSES passes of
 * BPF_PROG_TEST_RUN with repeat REPEAT.  Usage: callback_bench OBJ PASSES REPEAT (root). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"

static const char *const progs[] = { "with_callback", "open_coded" };
static const struct {
	const char *name;
	enum bpfrt_engine engine;
} engines[] = { { "interp", BPFRT_ENGINE_INTERP }, { "checked", BPFRT_ENGINE_CHECKED },
		{ "jit", BPFRT_ENGINE_JIT } };

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* Load obj into the kernel or bpfrt and print the time per run of each program. */
static int measure(const char *path, int kernel, uint32_t engine_flags, const char *side,
		   int passes, int repeat)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = kernel);
	struct bpfrt_object *obj = bpfrt_object_open_file(path, &o);
	unsigned char pkt[64] = { 0 };
	int ret;

	if (!obj)
		return -errno;
	ret = 0;
	for (struct bpfrt_program *p = bpfrt_object_next_program(obj, NULL); p && !kernel;
	     p = bpfrt_object_next_program(obj, p))
		ret = ret ? ret : bpfrt_program_set_flags(p, engine_flags);
	ret = ret ? ret : bpfrt_object_load(obj);
	for (size_t p = 0; !ret && p < sizeof(progs) / sizeof(progs[0]); p++) {
		struct bpfrt_program *prog = bpfrt_object_find_program_by_name(obj, progs[p]);

		for (int i = 0; prog && !ret && i < passes; i++) {
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.test.prog_fd = (uint32_t)bpfrt_program_fd(prog);
			a.test.data_in = (uint64_t)(uintptr_t)pkt;
			a.test.data_size_in = sizeof(pkt);
			a.test.repeat = (uint32_t)repeat;
			if ((kernel ? kernel_bpf : bpfrt_bpf)(BPF_PROG_TEST_RUN, &a, sizeof(a)))
				ret = -errno;
			else if (a.test.retval != 499500)
				ret = -EBADMSG;
			else
				printf("RES %s %s %u\n", side, progs[p], a.test.duration);
		}
	}
	bpfrt_object_close(obj);
	return ret;
}

int main(int argc, char **argv)
{
	int passes = argc > 2 ? atoi(argv[2]) : 5, repeat = argc > 3 ? atoi(argv[3]) : 1000;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: callback_bench OBJ [PASSES [REPEAT]]\n");
		return 2;
	}
	ret = measure(argv[1], 1, 0, "kernel", passes, repeat);
	if (ret)
		fprintf(stderr, "kernel: %s\n", strerror(-ret));
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		char side[32];

		snprintf(side, sizeof(side), "bpfrt-%s", engines[e].name);
		ret = measure(argv[1], 0, BPFRT_F_ENGINE(engines[e].engine), side, passes, repeat);
		if (ret) {
			fprintf(stderr, "%s: %s\n", side, strerror(-ret));
			return 1;
		}
	}
	return 0;
}
