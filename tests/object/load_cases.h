/* load_cases.h - the corpus programs that run under BPF_PROG_TEST_RUN and what they return,
 * shared by test_load.c (bpfrt) and test_load_oracle.c (the same objects in the kernel).
 * A run through bpf(2)-shaped function pointers, so both sides use the same code. */
#ifndef BPFRT_TESTS_ELF_LOAD_CASES_H
#define BPFRT_TESTS_ELF_LOAD_CASES_H

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"

struct run_case {
	const char *file;     /* corpus object */
	const char *prog;     /* program to run */
	uint32_t retval[2];   /* first and second run */
	const char *bpfrt_gap; /* non-NULL: bpfrt may refuse the load (what it lacks) */
};

static const struct run_case run_cases[] = {
	{ "legacy_map", "count", { 1, 2 } },
	{ "named_maps_sec", "count", { 1, 2 } }, /* "maps/<name>" sections (aya, cilium/ebpf) */
	{ "btf_map", "xdp_pairs", { 42, 42 } },
	{ "global_data", "data_sum", { 123, 124 } },
	{ "rodata_str", "hello", { 748, 748 } },
	{ "subprog_static", "first", { 14, 14 } },
	{ "subprog_static", "second", { 10, 10 } },
	{ "subprog_global", "global_calls", { 55, 55 } },
	{ "multi_prog", "prog_a", { 1, 1 } },
	{ "multi_prog", "prog_b", { 2, 2 } },
	{ "multi_prog", "prog_c", { 3, 3 } },
	{ "license_version", "lenplus", { 51, 51 } }, /* skb->len: 64 - ETH_HLEN */
	{ "pinned_map", "read_shared", { 0, 0 } },
	{ "percpu_lru", "count_both", { 3, 6 } },
	{ "xdp_parse", "parse", { XDP_PASS, XDP_PASS } },
	{ "deep_calls", "chain", { 40, 40 } },
	{ "deep_calls", "shallow", { 20, 20 } },
	{ "custom_data", "sum_custom", { 108, 109 } },
	{ "loops", "squares", { 2470, 2470 } },
	{ "static_prog", "hidden", { 31, 31 } },
	{ "static_prog", "visible", { 32, 32 } },
	{ "cross_section", "caller", { 45, 45 } },
	{ "cross_section", "helper_in_socket", { 44, 44 } },
	{ "mixed_maps", "sum_all", { 10, 10 } },
	{ "btf_kinds", "kinds", { 3, 3 } },
	{ "ld_abs", "abs_ind", { 61, 61 } },
	{ "tc_rewrite", "swap_macs", { 0, 0 } },
	{ "big_bss", "big", { 6, 8 } },
	{ "unrolled", "long_prog", { 47786, 47786 } },
	{ "call_order", "order", { 113, 113 } },
	{ "legacy_prog_array", "dispatch", { 7, 7 } },
	{ "hash_of_maps", "nested", { 10, 10 } },
	{ "queue_stack", "push_pop", { 13, 13 } },
	{ "prog_array", "entry", { 11, 11 } },
	{ "map_in_map", "through_outer", { 5, 5 } },
	{ "callback", "loop_sum", { 45, 45 } },
	{ "loop_stop", "loop_stop", { 464, 464 } },
	{ "loop_stop", "loop_refused", { 2207, 2207 } },
	{ "loop_stop", "loop_nested", { 204, 204 } },
	{ "for_each", "each_array", { 24640, 24644 } },
	{ "for_each", "each_hash", { 2236600, 2236600 } },
	{ "extern_btf", "externs", { 7, 7 } }, /* its BTF loads: see prog_btf_id() */
};

typedef int (*test_bpf_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static inline int test_kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* One BPF_PROG_TEST_RUN over a 64-byte IPv4-looking frame (zero MACs, ethertype 0x0800,
 * zero IPv4 header up to the protocol byte, then byte i = i); -errno or 0. */
static inline int test_run_once(test_bpf_fn sys, int fd, uint32_t *retval)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr attr;

	pkt[12] = 0x08;
	for (int i = 24; i < 64; i++)
		pkt[i] = (unsigned char)i;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uint64_t)(uintptr_t)pkt;
	attr.test.data_size_in = sizeof(pkt);
	attr.test.repeat = 1;
	if (sys(BPF_PROG_TEST_RUN, &attr, sizeof(attr)))
		return -errno;
	*retval = attr.test.retval;
	return 0;
}

/* The btf_id of a loaded program's info (0: loaded without BTF), or -errno. */
static inline int64_t test_prog_btf_id(test_bpf_fn sys, int fd)
{
	struct bpf_prog_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if (sys(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)))
		return -errno;
	return info.btf_id;
}

/* Open file, load only `prog`, run it twice.  Returns 0, or -errno of the failing step
 * with *step naming it. */
static inline int test_load_run(const char *path, const char *prog, int kernel,
				uint32_t out[2], const char **step, struct bpfrt_object **objp)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = kernel);
	struct bpfrt_object *obj = bpfrt_object_open_file(path, &o);
	struct bpfrt_program *p, *want;
	int ret;

	*objp = obj;
	*step = "open";
	if (!obj)
		return -errno;
	*step = "find";
	want = bpfrt_object_find_program_by_name(obj, prog);
	if (!want)
		return -ENOENT;
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p))
		bpfrt_program_set_autoload(p, p == want ||
						      !strcmp(bpfrt_program_section_name(p),
							      bpfrt_program_section_name(want)));
	*step = "load";
	ret = bpfrt_object_load(obj);
	if (ret)
		return ret;
	*step = "run";
	for (int i = 0; i < 2; i++)
		if ((ret = test_run_once(kernel ? test_kernel_bpf : bpfrt_bpf,
					 bpfrt_program_fd(want), &out[i])))
			return ret;
	return 0;
}

#endif
