/* map_create_bench.c - what creating an object's maps costs, apart from its programs
 * (#17 item 3): the object is loaded once with every program's autoload off (its maps
 * created, with their BTF, as the loader creates them), each map's creation attributes
 * are read back (BPF_OBJ_GET_INFO_BY_FD, its BTF by BPF_BTF_GET_FD_BY_ID), and then each
 * round creates every map again with those attributes and closes it, as a load and a
 * close of the object do.  --kernel does the same with bpf(2) against the running kernel.
 * Global data maps (.bss, .data, .rodata) are left out unless --all: the loader creates
 * them BPF_F_MMAPABLE and writes their initial values (the object's load, not a map's).
 * Prints "RES <side> <us per round>" for each of ROUNDS blocks (thread CPU time: the
 * kernel's deferred frees, which run elsewhere, are not in the kernel's figure).
 * Usage: map_create_bench [--kernel] [--all] [--wall] BLOCKS ROUNDS OBJ */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static double now_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#define MAX_MAPS 64

int main(int argc, char **argv)
{
	int kernel = 0, all = 0, nblocks, nrounds, nmaps = 0, btf_fds[MAX_MAPS];
	clockid_t clk = CLOCK_THREAD_CPUTIME_ID;
	union bpf_attr attrs[MAX_MAPS];
	sys_fn sys = bpfrt_bpf;
	struct bpfrt_object *obj;
	struct bpfrt_program *p;
	struct bpfrt_map *m;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--kernel"))
			kernel = 1, sys = sys_kernel;
		else if (!strcmp(argv[1], "--all"))
			all = 1;
		else if (!strcmp(argv[1], "--wall"))
			clk = CLOCK_MONOTONIC;
		argv++, argc--;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: map_create_bench [--kernel] [--all] [--wall] BLOCKS ROUNDS OBJ\n");
		return 2;
	}
	nblocks = atoi(argv[1]);
	nrounds = atoi(argv[2]);
	{
		BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = kernel);
		obj = bpfrt_object_open_file(argv[3], &o);
	}
	if (!obj) {
		perror("open");
		return 1;
	}
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p))
		bpfrt_program_set_autoload(p, 0);
	if (bpfrt_object_load(obj)) {
		perror("load");
		return 1;
	}
	for (m = bpfrt_object_next_map(obj, NULL); m && nmaps < MAX_MAPS;
	     m = bpfrt_object_next_map(obj, m)) {
		struct bpf_map_info info;
		union bpf_attr a;

		if (!all && bpfrt_map__name(m)[0] == '.')
			continue;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)bpfrt_map__fd(m);
		a.info.info_len = sizeof(info);
		a.info.info = (uintptr_t)&info;
		if (sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a))) {
			perror("info");
			return 1;
		}
		memset(&attrs[nmaps], 0, sizeof(attrs[nmaps]));
		attrs[nmaps].map_type = info.type;
		attrs[nmaps].key_size = info.key_size;
		attrs[nmaps].value_size = info.value_size;
		attrs[nmaps].max_entries = info.max_entries;
		attrs[nmaps].map_flags = info.map_flags;
		attrs[nmaps].map_extra = info.map_extra;
		memcpy(attrs[nmaps].map_name, info.name, sizeof(attrs[nmaps].map_name));
		btf_fds[nmaps] = -1;
		if (info.btf_id) {
			memset(&a, 0, sizeof(a));
			a.btf_id = info.btf_id;
			btf_fds[nmaps] = sys(BPF_BTF_GET_FD_BY_ID, &a, sizeof(a));
			if (btf_fds[nmaps] < 0) {
				perror("btf by id");
				return 1;
			}
			attrs[nmaps].btf_fd = (uint32_t)btf_fds[nmaps];
			attrs[nmaps].btf_key_type_id = info.btf_key_type_id;
			attrs[nmaps].btf_value_type_id = info.btf_value_type_id;
		}
		fprintf(stderr, "map %s type %u key %u value %u max %u flags %#x btf %u/%u\n",
			info.name, info.type, info.key_size, info.value_size, info.max_entries,
			info.map_flags, info.btf_key_type_id, info.btf_value_type_id);
		nmaps++;
	}
	bpfrt_object_close(obj);
	for (int b = 0; b < nblocks; b++) {
		double t0 = now_us(clk);

		for (int r = 0; r < nrounds; r++) {
			int fds[MAX_MAPS];

			for (int i = 0; i < nmaps; i++) {
				union bpf_attr a = attrs[i];

				fds[i] = sys(BPF_MAP_CREATE, &a, sizeof(a));
				if (fds[i] < 0) {
					fprintf(stderr, "map %d: %s\n", i, strerror(errno));
					return 1;
				}
			}
			for (int i = 0; i < nmaps; i++)
				close(fds[i]);
		}
		printf("RES %s %.2f\n", kernel ? "kernel" : "bpfrt",
		       (now_us(clk) - t0) / nrounds);
	}
	return 0;
}
