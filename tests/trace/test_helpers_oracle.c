/* test_helpers_oracle.c - the verifier's prototypes of the tracing helpers, checked
 * against the kernel: the same programs (GPL and proprietary licences, good and bad
 * arguments, program types that may not call a helper) load or fail alike, with the same
 * errno, and the GPL refusal with the kernel's words.
 */
#include <sys/stat.h>

#include "trace_test.h"

#define RAW BPF_PROG_TYPE_RAW_TRACEPOINT
#define KP BPF_PROG_TYPE_KPROBE
#define TP BPF_PROG_TYPE_TRACEPOINT
#define SKF BPF_PROG_TYPE_SOCKET_FILTER
#define PE BPF_PROG_TYPE_PERF_EVENT

/* "%d\0" on the stack at -8, one u64 argument (5) at -16: vprintk(fmt, 3, args, 8) */
#define VFMT                                                                              \
	"stw [%r10-8], 0x6425\nstdw [%r10-16], 5\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 3\n"   \
	"mov %r3, %r10\nadd %r3, -16\n"
#define TASK "call bpf_get_current_task_btf\n"
#define STACK16 "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\nmov %r4, 0\n"

/* fmt "hi\0" on the stack, then r1 = fmt, r2 = 3 */
#define FMT "stw [%r10-8], 0x6968\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 3\n"
#define BUF16 "mov %r1, %r10\nadd %r1, -16\nmov %r2, 16\n"
#define RD "mov %r1, %r10\nadd %r1, -16\nmov %r2, 16\nmov %r3, 0\n"

struct vcase {
	const char *name;
	uint32_t type;
	const char *lic;
	const char *text;
	const char *msg; /* a line both logs must contain (NULL: none checked) */
	int run;         /* raw_tp accepted by both: BPF_PROG_TEST_RUN results compared */
};

static const char gplmsg[] =
	"cannot call GPL-restricted function from non-GPL compatible program";

static const struct vcase cases[] = {
	{ "trace_printk, GPL", RAW, "GPL", FMT "call bpf_trace_printk\nexit\n", NULL },
	{ "trace_printk, proprietary", RAW, "Proprietary", FMT "call bpf_trace_printk\nexit\n",
	  gplmsg },
	{ "trace_printk from kprobe", KP, "GPL", FMT "call bpf_trace_printk\nexit\n", NULL },
	{ "trace_printk, fmt never written", RAW, "GPL",
	  "mov %r1, %r10\nadd %r1, -8\nmov %r2, 3\ncall bpf_trace_printk\nexit\n", NULL },
	{ "trace_printk, size 0", RAW, "GPL",
	  "stw [%r10-8], 0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 0\ncall bpf_trace_printk\n"
	  "exit\n", NULL },
	{ "probe_read_kernel, GPL", RAW, "GPL", RD "call bpf_probe_read_kernel\nexit\n", NULL },
	{ "probe_read_kernel, proprietary", RAW, "Dual BSD", RD
	  "call bpf_probe_read_kernel\nexit\n", gplmsg },
	{ "probe_read_user, proprietary", KP, "MIT", RD "call bpf_probe_read_user\nexit\n",
	  gplmsg },
	{ "probe_read_user_str, proprietary", TP, "BSD", RD
	  "call bpf_probe_read_user_str\nexit\n", gplmsg },
	{ "probe_read_kernel_str, GPL", TP, "GPL v2", RD
	  "call bpf_probe_read_kernel_str\nexit\n", NULL },
	{ "probe_read legacy, proprietary", KP, "X", RD "call bpf_probe_read\nexit\n", gplmsg },
	{ "probe_read_str legacy, GPL", KP, "GPL", RD "call bpf_probe_read_str\nexit\n", NULL },
	{ "probe_read_kernel into ctx", RAW, "GPL",
	  "mov %r2, 8\nmov %r3, 0\ncall bpf_probe_read_kernel\nexit\n", NULL },
	{ "probe_read_kernel, unbounded size", RAW, "GPL",
	  "ldxdw %r2, [%r1+0]\nmov %r1, %r10\nadd %r1, -16\nmov %r3, 0\n"
	  "call bpf_probe_read_kernel\nexit\n", NULL },
	{ "probe_read_kernel, bounded size", RAW, "GPL",
	  "ldxdw %r2, [%r1+0]\nand %r2, 15\nmov %r1, %r10\nadd %r1, -16\nmov %r3, 0\n"
	  "call bpf_probe_read_kernel\nexit\n", NULL },
	{ "probe_read_kernel, 17 bytes into 16", RAW, "GPL",
	  "mov %r1, %r10\nadd %r1, -16\nmov %r2, 17\nmov %r3, 0\ncall bpf_probe_read_kernel\n"
	  "exit\n", NULL },
	{ "pid_tgid, proprietary", RAW, "Proprietary", "call bpf_get_current_pid_tgid\nexit\n",
	  NULL },
	{ "uid_gid, proprietary", TP, "Proprietary", "call bpf_get_current_uid_gid\nexit\n", NULL },
	{ "comm, proprietary", KP, "Proprietary", BUF16 "call bpf_get_current_comm\nexit\n",
	  NULL },
	{ "comm, size 0", KP, "GPL",
	  "mov %r1, %r10\nadd %r1, -16\nmov %r2, 0\ncall bpf_get_current_comm\nexit\n", NULL },
	{ "comm from a socket filter", SKF, "GPL", BUF16 "call bpf_get_current_comm\nexit\n",
	  NULL },
	{ "pid_tgid from a socket filter", SKF, "GPL", "call bpf_get_current_pid_tgid\nexit\n",
	  NULL },
	{ "uid_gid from a socket filter", SKF, "GPL", "call bpf_get_current_uid_gid\nexit\n",
	  NULL },
	{ "comm from xdp", BPF_PROG_TYPE_XDP, "GPL", BUF16 "call bpf_get_current_comm\nexit\n",
	  NULL },
	{ "current_task from kprobe", KP, "GPL", "call bpf_get_current_task\nexit\n", NULL },
	{ "current_task, proprietary", TP, "Proprietary", "call bpf_get_current_task\nexit\n",
	  gplmsg },
	{ "current_task from a socket filter", SKF, "GPL", "call bpf_get_current_task\nexit\n",
	  NULL },
	{ "current_task from xdp", BPF_PROG_TYPE_XDP, "GPL", "call bpf_get_current_task\nexit\n",
	  NULL },
	{ "current_task, result dereferenced", RAW, "GPL",
	  "call bpf_get_current_task\nldxdw %r0, [%r0+0]\nexit\n", "R0 invalid mem access 'scalar'" },
	{ "comm into a read-only map value", RAW, "GPL",
	  "mov %r1, 0\nmov %r2, 16\ncall bpf_get_current_comm\nexit\n", NULL },
	/* bpf_get_current_task_btf: a trusted kernel task_struct */
	{ "task_btf from kprobe, a field read", KP, "GPL", TASK "ldxw %r0, [%r0+0]\nexit\n",
	  NULL },
	{ "task_btf, proprietary", KP, "Proprietary", TASK "mov %r0, 0\nexit\n", gplmsg },
	{ "task_btf from a socket filter", SKF, "GPL", TASK "mov %r0, 0\nexit\n", NULL },
	{ "task_btf from xdp", BPF_PROG_TYPE_XDP, "GPL", TASK "mov %r0, 0\nexit\n", NULL },
	{ "task_btf, store through it", TP, "GPL", TASK "stw [%r0+0], 0\nmov %r0, 0\nexit\n",
	  "only read is supported" },
	{ "task_btf, read past task_struct", TP, "GPL",
	  TASK "ldxw %r0, [%r0+32760]\nexit\n", "access beyond struct task_struct" },
	{ "task_btf, read below it", RAW, "GPL", TASK "ldxw %r0, [%r0-8]\nexit\n",
	  "R0 is ptr_task_struct invalid negative access: off=-8" },
	{ "task_btf, read through a variable offset", RAW, "GPL",
	  TASK "mov %r1, %r0\ncall bpf_get_prandom_u32\nand %r0, 8\nadd %r1, %r0\n"
	       "ldxw %r0, [%r1+0]\nexit\n", NULL },
	{ "task_btf, test run reads a field", RAW, "GPL",
	  TASK "ldxw %r0, [%r0+0]\nmov %r0, 7\nexit\n", NULL, 1 },
	{ "task_btf to probe_read_kernel", RAW, "GPL",
	  TASK "mov %r3, %r0\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\n"
	       "call bpf_probe_read_kernel\nmov %r0, 0\nexit\n", NULL, 1 },
	/* bpf_get_task_stack(task, buf, size, flags) */
	{ "task_stack of task_btf", KP, "GPL",
	  TASK "mov %r1, %r0\n" STACK16 "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL },
	{ "task_stack, proprietary", KP, "Proprietary",
	  TASK "mov %r0, 0\nexit\n", gplmsg },
	{ "task_stack of the context", KP, "GPL",
	  STACK16 "call bpf_get_task_stack\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=ptr_, trusted_ptr_, rcu_ptr_" },
	{ "task_stack of a number", KP, "GPL",
	  "mov %r1, 0\n" STACK16 "call bpf_get_task_stack\nmov %r0, 0\nexit\n",
	  "R1 type=scalar expected=ptr_, trusted_ptr_, rcu_ptr_" },
	{ "task_stack from a socket filter", SKF, "GPL",
	  TASK "mov %r1, %r0\n" STACK16 "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL },
	{ "task_stack, test run", RAW, "GPL",
	  TASK "mov %r1, %r0\n" STACK16 "call bpf_get_task_stack\nexit\n", NULL, 0 },
	/* bpf_trace_vprintk(fmt, fmt_size, args, data_len) */
	{ "vprintk, GPL", RAW, "GPL", VFMT "mov %r4, 8\ncall bpf_trace_vprintk\nexit\n", NULL, 1 },
	{ "vprintk, proprietary", KP, "BSD", VFMT "mov %r4, 8\ncall bpf_trace_vprintk\nexit\n",
	  gplmsg },
	{ "vprintk, no arguments", RAW, "GPL",
	  "stw [%r10-8], 0x6968\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 3\nmov %r3, 0\n"
	  "mov %r4, 0\ncall bpf_trace_vprintk\nexit\n", NULL, 1 },
	{ "vprintk, NULL args with a size", RAW, "GPL",
	  VFMT "mov %r3, 0\nmov %r4, 8\ncall bpf_trace_vprintk\nexit\n", NULL },
	{ "vprintk, data_len 4", RAW, "GPL", VFMT "mov %r4, 4\ncall bpf_trace_vprintk\nexit\n",
	  NULL, 1 },
	{ "vprintk, fewer arguments than conversions", RAW, "GPL",
	  "stw [%r10-8], 0x6425\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 3\nmov %r3, 0\n"
	  "mov %r4, 0\ncall bpf_trace_vprintk\nexit\n", NULL, 1 },
	{ "vprintk, args past the stack frame", RAW, "GPL",
	  VFMT "mov %r4, 24\ncall bpf_trace_vprintk\nexit\n", NULL },
	{ "vprintk from a socket filter", SKF, "GPL",
	  VFMT "mov %r4, 8\ncall bpf_trace_vprintk\nexit\n", NULL },
	/* bpf_get_attach_cookie(ctx) */
	{ "attach_cookie from kprobe", KP, "Proprietary",
	  "call bpf_get_attach_cookie\nexit\n", NULL },
	{ "attach_cookie from a tracepoint", TP, "GPL", "call bpf_get_attach_cookie\nexit\n",
	  NULL },
	{ "attach_cookie from a raw tracepoint", RAW, "GPL",
	  "call bpf_get_attach_cookie\nexit\n", NULL, 1 },
	{ "attach_cookie from perf_event", PE, "GPL", "call bpf_get_attach_cookie\nexit\n",
	  NULL },
	{ "attach_cookie from a socket filter", SKF, "GPL",
	  "call bpf_get_attach_cookie\nexit\n", NULL },
	{ "attach_cookie of the stack", KP, "GPL",
	  "mov %r1, %r10\ncall bpf_get_attach_cookie\nexit\n", "R1 type=fp expected=ctx" },
	/* bpf_get_func_ip(ctx) */
	{ "func_ip from kprobe", KP, "GPL", "call bpf_get_func_ip\nexit\n", NULL },
	{ "func_ip, proprietary", KP, "Proprietary", "call bpf_get_func_ip\nexit\n", gplmsg },
	{ "func_ip from a tracepoint", TP, "GPL", "call bpf_get_func_ip\nexit\n",
	  "func bpf_get_func_ip#173 not supported for program type 5" },
	{ "func_ip from a raw tracepoint", RAW, "GPL", "call bpf_get_func_ip\nexit\n",
	  "func bpf_get_func_ip#173 not supported for program type 17" },
	{ "func_ip from a socket filter", SKF, "GPL", "call bpf_get_func_ip\nexit\n", NULL },
	/* bpf_get_ns_current_pid_tgid(dev, ino, nsdata, size) */
	{ "ns pid_tgid from a socket filter, proprietary", SKF, "Proprietary",
	  "mov %r1, 0\nmov %r2, 0\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 8\n"
	  "call bpf_get_ns_current_pid_tgid\nexit\n", NULL },
	{ "ns pid_tgid, another namespace", RAW, "GPL",
	  "mov %r1, 0\nmov %r2, 0\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 8\n"
	  "call bpf_get_ns_current_pid_tgid\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit\n",
	  NULL, 1 },
	{ "ns pid_tgid, size 4", RAW, "GPL",
	  "mov %r1, 0\nmov %r2, 0\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 4\n"
	  "call bpf_get_ns_current_pid_tgid\nexit\n", NULL, 1 },
	{ "ns pid_tgid into NULL", RAW, "GPL",
	  "mov %r1, 0\nmov %r2, 0\nmov %r3, 0\nmov %r4, 8\n"
	  "call bpf_get_ns_current_pid_tgid\nexit\n", NULL },
};

/* BPF_PROG_TEST_RUN of a raw tracepoint program through the real bpf(2), no arguments */
static int tt_krun(int fd, uint32_t *retval)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)))
		return -errno;
	*retval = a.test.retval;
	return 0;
}

/* bpf_get_ns_current_pid_tgid with this process's pid namespace: the kernel's test run
 * and bpfrt's give the same pid and tgid (program: r0 = pid ^ tgid << 1 ^ retval) */
static void ns_case(void)
{
	static char log1[65536], log2[65536];
	char text[512];
	struct stat st;
	uint32_t r1 = 0, r2 = 1;
	int a, b;

	T_CASE("ns pid_tgid, this namespace: test runs");
	if (stat("/proc/self/ns/pid", &st)) {
		T_FAIL("stat /proc/self/ns/pid: %s", strerror(errno));
		return;
	}
	snprintf(text, sizeof(text),
		 "lddw %%r1, %llu\nlddw %%r2, %llu\nmov %%r3, %%r10\nadd %%r3, -8\nmov %%r4, 8\n"
		 "call bpf_get_ns_current_pid_tgid\nldxw %%r1, [%%r10-8]\nldxw %%r2, [%%r10-4]\n"
		 "lsh %%r2, 1\nxor %%r1, %%r2\nxor %%r0, %%r1\nexit\n",
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	a = tt_load(RAW, "GPL", text, log1, sizeof(log1));
	b = tt_kload(RAW, "GPL", text, log2, sizeof(log2));
	T_ASSERT(a >= 0 && b >= 0);
	if (a >= 0 && b >= 0) {
		T_EQ_INT(0, tt_run(a, NULL, 0, &r1));
		T_EQ_INT(0, tt_krun(b, &r2));
		T_EQ_INT(r2, r1);
		T_EQ_INT((uint32_t)(getpid() ^ (getpid() << 1)), r1);
	}
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

int main(void)
{
	static char log1[65536], log2[65536];
	int kernel;

	tt_private_fs("helpers_oracle");
	kernel = geteuid() == 0 && tt_kload(RAW, "GPL", "mov %r0, 0\nexit\n", NULL, 0) >= 0;
	if (!kernel)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vcase *c = &cases[i];
		int a = tt_load(c->type, c->lic, c->text, log1, sizeof(log1));
		int b = tt_kload(c->type, c->lic, c->text, log2, sizeof(log2));

		T_CASE(c->name);
		T_EQ_INT(b < 0 ? b : 0, a < 0 ? a : 0);
		if (a < 0 && b < 0 && a != b)
			fprintf(stderr, "  bpfrt log:\n%s  kernel log:\n%s", log1, log2);
		if (c->msg) {
			T_CONTAINS(c->msg, log1);
			T_CONTAINS(c->msg, log2);
		}
		if (c->run && a >= 0 && b >= 0) {
			uint32_t r1 = 0, r2 = 1;

			T_EQ_INT(tt_krun(b, &r2), tt_run(a, NULL, 0, &r1));
			T_EQ_INT(r2, r1);
		}
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	ns_case();
	tt_cleanup_fs();
	return t_done();
}
