/* diff.h - the differential harness for bpf(): the same case runs through a function
 * pointer that is either bpfrt_bpf() or, as root, the real syscall(__NR_bpf), and the
 * results (return value, errno, bytes copied out) are compared.
 */
#ifndef BPFRT_TESTS_API_DIFF_H
#define BPFRT_TESTS_API_DIFF_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static inline int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static inline int sys_bpfrt(int cmd, union bpf_attr *attr, unsigned int size)
{
	return bpfrt_bpf(cmd, attr, size);
}

/* Can we compare against the kernel?  Root and a bpf() that creates an array map. */
static inline int kernel_available(void)
{
	union bpf_attr a;
	int fd;

	if (geteuid() != 0)
		return 0;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	fd = sys_kernel(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* BPF_PROG_TEST_RUN of prog over a zeroed 64-byte packet, repeat times: its retval, or
 * -1000 - errno when the command fails. */
static inline int diff_run64(sys_fn sys, int prog, uint32_t repeat)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = repeat;
	return sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -1000 - errno
								: (int)a.test.retval;
}

/* BPF_MAP_CREATE through sys: the fd, or -1 with errno. */
static inline int diff_map_new(sys_fn sys, uint32_t type, uint32_t key, uint32_t value,
			       uint32_t max, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

/* BPF_PROG_LOAD of n instructions of type, license "GPL", no log: the fd, or -1 with
 * errno. */
static inline int diff_prog_load(sys_fn sys, uint32_t type, const struct bpf_insn *insns,
				 uint32_t n)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

/* BPF_{PROG,MAP,LINK,BTF}_GET_FD_BY_ID of id: 1 when it gives an fd (closed at once),
 * else -errno. */
static inline int diff_by_id(sys_fn sys, int cmd, uint32_t id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	if (cmd == BPF_PROG_GET_FD_BY_ID)
		a.prog_id = id;
	else if (cmd == BPF_MAP_GET_FD_BY_ID)
		a.map_id = id;
	else if (cmd == BPF_LINK_GET_FD_BY_ID)
		a.link_id = id;
	else
		a.btf_id = id;
	fd = sys(cmd, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	close(fd);
	return 1;
}

/* An element command (BPF_MAP_{LOOKUP,UPDATE,DELETE}_ELEM ...) of map with a 4-byte key,
 * value its value buffer (flags 0): 0 or -errno. */
static inline int diff_elem_op(sys_fn sys, int cmd, int map, uint32_t key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	return sys(cmd, &a, sizeof(a)) ? -errno : 0;
}

/* BPF_MAP_UPDATE_ELEM of a 4-byte key and a 4-byte value (an fd, an id): 0 or -errno. */
static inline int diff_update(sys_fn sys, int map, uint32_t key, int32_t value)
{
	return diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, map, key, &value);
}

/* A path command (BPF_OBJ_PIN of fd, BPF_OBJ_GET) of dir/name with file_flags flags:
 * its return value (an fd for a get), or -errno. */
static inline int diff_path_op(sys_fn sys, int cmd, int fd, const char *dir, const char *name,
			       uint32_t flags)
{
	char path[128];
	union bpf_attr a;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)(fd < 0 ? 0 : fd);
	a.file_flags = flags;
	r = sys(cmd, &a, sizeof(a));
	return r < 0 ? -errno : r;
}

/* A socket filter: with pa >= 0, bpf_tail_call(ctx, pa, 0) then r0 = 1; else r0 = ret.
 * Its fd, or -1. */
static inline int diff_tail_prog(sys_fn sys, int pa, int ret)
{
	struct bpf_insn tail[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 2, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = pa },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_tail_call },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_insn leaf[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return diff_prog_load(sys, BPF_PROG_TYPE_SOCKET_FILTER, pa >= 0 ? tail : leaf,
			      pa >= 0 ? 6 : 2);
}

/* A program of type: r0 = 0 (after a lookup in map_fd when map_fd >= 0); exit.  The fd
 * or -1. */
static inline int diff_prog_new(sys_fn sys, uint32_t type, int map_fd)
{
	struct bpf_insn with_map[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map_fd },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	return map_fd >= 0 ? diff_prog_load(sys, type, with_map, 8)
			   : diff_prog_load(sys, type, with_map + 6, 2);
}

/* The id OBJ_GET_INFO_BY_FD gives fd's object (0 on failure). */
static inline uint32_t diff_id_of(sys_fn sys, int fd)
{
	struct bpf_prog_info info; /* the id is the first field of every kind's info */
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info.type) + sizeof(info.id);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)))
		return 0;
	/* bpf_prog_info: type, id; bpf_map_info: type, id; bpf_link_info: type, id */
	return info.id;
}

/* Result of one step: return value (fds normalised to 1), errno, bytes copied out. */
struct step_result {
	int ret;
	int err;
	unsigned char out[256];
	unsigned out_len;
};

#endif
