/* test_helper_btf_mem_oracle.c - a helper's memory argument through a trusted kernel
 * pointer (bpf_get_current_task_btf()'s task), bpfrt's verdict and message against the
 * running kernel's: the kernel's mem_types take PTR_TO_BTF_ID | PTR_TRUSTED for helpers
 * that read (the bytes must lie in one member: "access beyond the end of member comm"),
 * refuse it to helpers that write ("bpf_probe_read_kernel() may write into memory
 * pointed by R1"), and allow the pointer a fixed offset into its struct.  bpfrt refused
 * every such argument by its type until session 18 (selftests' task_access_comm1-3).
 * The offset of task_struct.comm is this machine's (its BTF: 1752, 16 bytes).
 */
#include <stdio.h>

#include "bpfrt.h"
#include "harness.h"
#include "api/diff.h"

#define I(c, d, s, o, i) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }
#define COMM_OFF 1752

struct mem_case {
	const char *name;
	int helper;     /* BPF_FUNC_* called with (task + off, size) */
	int off;
	int size;
	int err;        /* 0: loads */
	const char *msg; /* the kernel's last log line before the statistics, or NULL */
};

static const struct mem_case cases[] = {
	{ "trace_printk of comm", BPF_FUNC_trace_printk, COMM_OFF, 16, 0, NULL },
	{ "trace_printk one byte past comm", BPF_FUNC_trace_printk, COMM_OFF, 17, EACCES,
	  "access beyond the end of member comm (mend:1768) in struct task_struct with off 1752 "
	  "size 17" },
	{ "trace_printk from inside comm past it", BPF_FUNC_trace_printk, COMM_OFF + 1, 16,
	  EACCES, "access beyond the end of member comm (mend:1768) in struct task_struct with "
		  "off 1753 size 16" },
	{ "probe_read_kernel into the task", BPF_FUNC_probe_read_kernel, COMM_OFF, 16, EACCES,
	  "bpf_probe_read_kernel() may write into memory pointed by R1 type=trusted_ptr_" },
};

static void check(sys_fn sys, const char *who, const struct mem_case *c)
{
	struct bpf_insn insns[] = {
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task_btf),
		I(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, c->off),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, c->size),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0),
		I(BPF_JMP | BPF_CALL, 0, 0, 0, c->helper),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	char name[160], log[8192], *last = NULL, *p;
	union bpf_attr a;
	int fd;

	snprintf(name, sizeof(name), "%s: %s", who, c->name);
	T_CASE(name);
	memset(&a, 0, sizeof(a));
	memset(log, 0, sizeof(log));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	T_EQ_INT(c->err, fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
	if (!c->msg)
		return;
	/* the line before "processed N insns ..." */
	for (p = log; (p = strchr(p, '\n')) && p[1] && strncmp(p + 1, "processed ", 10); p++)
		last = p + 1;
	if (last && strchr(last, '\n'))
		*strchr(last, '\n') = 0;
	T_EQ_STR(c->msg, last ? last : "(no line)");
}

int main(void)
{
	int kernel = kernel_available();

	if (geteuid() != 0) {
		printf("skipped: kprobe programs need root\n");
		return 77;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check(sys_bpfrt, "bpfrt", &cases[i]);
		if (kernel)
			check(sys_kernel, "kernel", &cases[i]);
	}
	return t_done();
}
