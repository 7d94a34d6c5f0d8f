/* test_sk_storage_tracing_oracle.c - bpf_sk_storage_get and bpf_sk_storage_delete in
 * tracing programs (BPF_PROG_TYPE_TRACING) against the kernel: tracing_prog_func_proto()
 * offers bpf_sk_storage_{get,delete}_tracing_proto, whose socket argument is a kernel
 * pointer to struct sock_common or NULL, and whose .allowed (bpf_sk_storage_tracing_allowed())
 * lets iterators and tp_btf programs call them, fentry/fexit programs only when they do not
 * trace a bpf_sk_storage*() function, and no other attach type ("helper call is not allowed
 * in probe"; this host refuses the trampolines of fentry/fexit/fmod_ret programs,
 * EPERM, and bpfrt as it, so only iterators and tp_btf are compared).  Before session 25 bpfrt refused every call ("program of this type cannot use
 * helper bpf_sk_storage_get#107", EINVAL) where the kernel accepts, or refuses with
 * EACCES an untrusted socket pointer (the kernel selftests' nested_trust_failure
 * test_invalid_skb_field).  Each case loads through bpf(2) and bpfrt_bpf(): the same
 * verdict, errno and error line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"
#include "transcript.h"
#include "maps/storage_oracle.h"

#define LOG_SIZE (1 << 16)

struct scase {
	const char *name;
	uint32_t attach;    /* expected_attach_type */
	const char *target; /* the tracepoint or function */
	int helper;         /* BPF_FUNC_sk_storage_get or _delete */
	int sock;           /* r2: 0 NULL, 1 the first argument, 2 the second's first member
			     * (tcp_probe's skb->next, an untrusted pointer), 3 the second */
	int expect_err;     /* the kernel's errno (checked too, so both cannot agree elsewhere) */
	const char *msg;    /* a line the kernel's log holds */
};

static const struct scase cases[] = {
	{ "tp_btf/tcp_probe: get(sk)", BPF_TRACE_RAW_TP, "tcp_probe", BPF_FUNC_sk_storage_get, 1,
	  0, NULL },
	{ "tp_btf/tcp_probe: delete(sk)", BPF_TRACE_RAW_TP, "tcp_probe",
	  BPF_FUNC_sk_storage_delete, 1, 0, NULL },
	{ "tp_btf/tcp_probe: get(NULL)", BPF_TRACE_RAW_TP, "tcp_probe", BPF_FUNC_sk_storage_get,
	  0, 0, NULL },
	{ "tp_btf/tcp_probe: get(skb->next), untrusted", BPF_TRACE_RAW_TP, "tcp_probe",
	  BPF_FUNC_sk_storage_get, 2, EACCES,
	  "R2 type=untrusted_ptr_ expected=ptr_, trusted_ptr_, rcu_ptr_" },
	{ "tp_btf/tcp_probe: get(skb), not a socket", BPF_TRACE_RAW_TP, "tcp_probe",
	  BPF_FUNC_sk_storage_get, 3, EACCES, "R2 is of type sk_buff but sock_common is expected" },
	{ "iter/task: get(NULL)", BPF_TRACE_ITER, "task", BPF_FUNC_sk_storage_get, 0, 0, NULL },
	{ "iter/task: delete(NULL)", BPF_TRACE_ITER, "task", BPF_FUNC_sk_storage_delete, 0, 0,
	  NULL },
};

static int load(sys_fn sys, const struct scase *c, const struct brt_btf *vmlinux, char *log)
{
	int map = storage_create(sys, BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, 1, 4);
	int id = brt_btf_attach_id(vmlinux, BPF_PROG_TYPE_TRACING, c->attach, c->target), fd;
	struct bpf_insn insns[12], *p = insns;
	union bpf_attr a;

	if (map < 0 || id <= 0)
		return map < 0 ? map - 1000 : -2000;
	if (c->sock == 0)
		*p++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2 };
	else
		*p++ = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 2,
					  .src_reg = 1, .off = c->sock >= 2 ? 8 : 0 };
	if (c->sock == 2) /* struct sk_buff's first member, next */
		*p++ = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 2,
					  .src_reg = 2 };
	*p++ = (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1,
				  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map };
	*p++ = (struct bpf_insn){ 0 };
	*p++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3 };
	*p++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4 };
	*p++ = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = c->helper };
	*p++ = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 };
	*p++ = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACING;
	a.expected_attach_type = c->attach;
	a.attach_btf_id = (uint32_t)id;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = (uint32_t)(p - insns);
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = LOG_SIZE;
	a.log_level = 1;
	log[0] = 0;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	fd = fd < 0 ? -errno : fd;
	if (fd >= 0)
		close(fd);
	close(map);
	return fd < 0 ? fd : 0;
}

/* the log's last line before "processed ..." or the end: the verdict's */
static const char *last_line(char *log)
{
	char *end = strstr(log, "processed "), *l;

	if (end)
		*end = 0;
	l = log + strlen(log);
	while (l > log && l[-1] == '\n')
		*--l = 0;
	l = strrchr(log, '\n');
	return l ? l + 1 : log;
}

int main(void)
{
	static char klog[LOG_SIZE], blog[LOG_SIZE];
	const struct brt_btf *vmlinux = brt_btf_vmlinux();
	int probe;

	if (!vmlinux)
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	probe = storage_create(kernel_bpf, BPF_MAP_TYPE_SK_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, 1,
			       4);
	if (probe < 0)
		T_SKIP("no kernel socket storage (root): %s", strerror(-probe));
	close(probe);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *c = &cases[i];
		int k = load(kernel_bpf, c, vmlinux, klog), b = load(bpfrt_bpf, c, vmlinux, blog);
		const char *kl = last_line(klog), *bl = last_line(blog);

		T_CASE(c->name);
		printf("%s: kernel %d \"%s\", bpfrt %d \"%s\"\n", c->name, k, k ? kl : "",
		       b, b ? bl : "");
		T_EQ_INT(-c->expect_err, k);
		T_EQ_INT(k, b);
		if (k && b)
			T_EQ_STR(kl, bl);
		if (c->msg)
			T_CONTAINS(c->msg, kl);
	}
	return t_done();
}
