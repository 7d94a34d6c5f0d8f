/* test_errno_diff.c - two errnos of bpfrt_bpf() checked against the kernel's bpf(2)
 * (issue 14): a BPF_PROG_LOAD whose func_info/line_info the BTF checks reject with a
 * 16-byte log (the kernel runs those checks inside the verifier, so its statistics line
 * does not fit: ENOSPC, not the rejection's EINVAL/EBADF), and BPF_OBJ_GET of a
 * directory (EACCES, not EISDIR).  The same calls go through syscall(__NR_bpf) and
 * bpfrt_bpf(); as root both must give the expected errno and the same log.
 */
#include <fcntl.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "harness.h"
#include "api/diff.h"

struct log_case {
	const char *name;
	uint32_t log_size;
	int func_info;   /* 1: func_info, 0: line_info */
	uint32_t btf_fd; /* 0: none given */
	int err;
};

static const struct log_case log_cases[] = {
	{ "func_info without BTF, 16-byte log", 16, 1, 0, ENOSPC },
	{ "func_info with a closed BTF fd, 16-byte log", 16, 1, 977, ENOSPC },
	{ "line_info with a closed BTF fd, 16-byte log", 16, 0, 977, ENOSPC },
	{ "func_info without BTF, 1-byte log", 1, 1, 0, ENOSPC },
	{ "func_info without BTF, log fits", 256, 1, 0, EINVAL },
	{ "line_info with a closed BTF fd, log fits", 256, 0, 977, EBADF },
};

static int load(sys_fn sys, const struct log_case *c, char *log)
{
	static const struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_func_info fi = { 0 };
	struct bpf_line_info li = { 0 };
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	memset(log, 'x', 256);
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = c->log_size;
	a.log_level = 1;
	a.prog_btf_fd = c->btf_fd;
	if (c->func_info) {
		a.func_info = (uint64_t)(uintptr_t)&fi;
		a.func_info_cnt = 1;
		a.func_info_rec_size = sizeof(fi);
	} else {
		a.line_info = (uint64_t)(uintptr_t)&li;
		a.line_info_cnt = 1;
		a.line_info_rec_size = sizeof(li);
	}
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static int obj_get(sys_fn sys, const char *path)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	fd = sys(BPF_OBJ_GET, &a, sizeof(a));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

int main(void)
{
	char dir[] = "/tmp/bpfrt-errno-XXXXXX", sub[64];
	char klog[256], ulog[256];
	int kernel = kernel_available();

	for (size_t i = 0; i < sizeof(log_cases) / sizeof(log_cases[0]); i++) {
		const struct log_case *c = &log_cases[i];

		T_CASE(c->name);
		T_EQ_INT(c->err, load(sys_bpfrt, c, ulog));
		if (!kernel)
			continue;
		T_EQ_INT(c->err, load(sys_kernel, c, klog));
		T_EQ_STR(klog, ulog);
	}

	T_CASE("BPF_OBJ_GET of a directory: EACCES");
	T_ASSERT(t_scratch_dir(dir) != NULL);
	setenv("BPFRT_FS", dir, 1);
	snprintf(sub, sizeof(sub), "%s/subdir", dir);
	T_EQ_INT(0, mkdir(sub, 0700));
	T_EQ_INT(EACCES, obj_get(sys_bpfrt, sub));
	T_EQ_INT(EACCES, obj_get(sys_bpfrt, dir));
	T_CASE("BPF_OBJ_GET of a FIFO: EACCES, without blocking on it");
	snprintf(sub, sizeof(sub), "%s/fifo", dir);
	T_EQ_INT(0, mkfifo(sub, 0600));
	T_EQ_INT(EACCES, obj_get(sys_bpfrt, sub));
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/subdir", dir);
	rmdir(sub);
	rmdir(dir);
	if (kernel) {
		/* bpffs or not, a directory is not an object: EACCES (bpf_inode_type()) */
		T_CASE("BPF_OBJ_GET of a directory: the kernel's EACCES");
		T_EQ_INT(EACCES, obj_get(sys_kernel, "/sys/fs/bpf"));
		T_EQ_INT(EACCES, obj_get(sys_kernel, "/tmp"));
	}
	if (!kernel)
		printf("kernel comparison skipped: not root or no bpf()\n");
	return t_done();
}
