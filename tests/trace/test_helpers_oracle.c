/* test_helpers_oracle.c - the verifier's prototypes of the tracing helpers, checked
 * against the kernel: the same programs (GPL and proprietary licences, good and bad
 * arguments, program types that may not call a helper) load or fail alike, with the same
 * errno, and the GPL refusal with the kernel's words.
 */
#include "trace_test.h"

#define RAW BPF_PROG_TYPE_RAW_TRACEPOINT
#define KP BPF_PROG_TYPE_KPROBE
#define TP BPF_PROG_TYPE_TRACEPOINT
#define SKF BPF_PROG_TYPE_SOCKET_FILTER

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
};

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
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	tt_cleanup_fs();
	return t_done();
}
