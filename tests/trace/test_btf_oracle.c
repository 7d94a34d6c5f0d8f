/* test_btf_oracle.c - programs typed by the kernel's BTF (tp_btf, iter, fentry, lsm, struct_ops) against
 * the kernel: the same instructions with the same attach_btf_id (found in
 * /sys/kernel/btf/vmlinux as the loader finds it) load or fail alike through bpf(2) and
 * bpfrt_bpf(), with the same errno and the kernel's error line: the context as u64
 * arguments typed by the target's prototype, loads through the kernel pointers they hold
 * (struct walks, nested structs, offsets, writes, licences), iterator arguments that may
 * be NULL, and the attach checks.  Programs both accept are test-run on both sides
 * (bpf_prog_test_run_tracing(): attr checks, then -EFAULT for tp_btf and iter).
 */
#include "trace_test.h"

#include <sys/wait.h>

#include "btf/btf.h"

struct bcase {
	const char *name;
	uint32_t attach;    /* expected_attach_type */
	const char *target; /* after the section's '/'; NULL: attach_btf_id 0 */
	const char *lic;
	const char *text;   /* assembly; "@pid" and friends are struct offsets, below */
	const char *msg;    /* a line both logs must contain (NULL: none checked) */
	uint32_t btf_id;    /* used instead of target's id when set */
	uint32_t flags;     /* prog_flags (BPF_F_SLEEPABLE) */
	uint32_t type;      /* BPF_PROG_TYPE_*; 0: tracing (lsm and struct_ops: the target
			     * is a function's name, its FUNC id is attach_btf_id) */
};

static const struct brt_btf *vmlinux;

/* byte offset of member name in struct sname, or -1 */
static int member_off(const char *sname, const char *name)
{
	int id = brt_btf_find(vmlinux, sname, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	const struct btf_member *m;

	if (!t)
		return -1;
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(brt_btf_str(vmlinux, m[i].name_off), name))
			return (int)((BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							     : m[i].offset) /
				     8);
	return -1;
}

/* text with @pid, @tgid (task_struct) and @size (sizeof task_struct) replaced */
static char *expand(const char *text)
{
	static const struct {
		const char *key, *s, *m;
	} keys[] = { { "@pid", "task_struct", "pid" }, { "@tgid", "task_struct", "tgid" },
		     { "@parent", "task_struct", "real_parent" },
		     { "@leader", "task_struct", "group_leader" },
		     { "@wakee", "task_struct", "last_wakee" } };
	char *out = malloc(strlen(text) * 2 + 64), *o = out;
	int tsz = brt_btf_find(vmlinux, "task_struct", BTF_KIND_STRUCT);

	while (*text) {
		int done = 0;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !done; k++)
			if (!strncmp(text, keys[k].key, strlen(keys[k].key))) {
				o += sprintf(o, "%d", member_off(keys[k].s, keys[k].m));
				text += strlen(keys[k].key);
				done = 1;
			}
		if (!done && !strncmp(text, "@size", 5)) {
			o += sprintf(o, "%u", brt_btf_type(vmlinux, (uint32_t)tsz)->size);
			text += 5;
			done = 1;
		}
		if (!done)
			*o++ = *text++;
	}
	*o = 0;
	return out;
}

static int load(int kernel, const struct bcase *c, char *log, size_t loglen)
{
	union bpf_attr a;
	struct bpf_insn *insns;
	char err[256], *text = expand(c->text);
	size_t n;
	int fd;

	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "asm: %s\n", err);
		free(text);
		return -EINVAL;
	}
	free(text);
	memset(&a, 0, sizeof(a));
	a.prog_type = c->type ? c->type : BPF_PROG_TYPE_TRACING;
	a.expected_attach_type = c->attach;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)c->lic;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = getenv("BTF_ORACLE_L2") ? 2 : 1;
	log[0] = 0;
	a.attach_btf_id = c->btf_id;
	a.prog_flags = c->flags;
	if (!a.attach_btf_id && c->target && c->type) {
		int id = brt_btf_find(vmlinux, c->target, BTF_KIND_FUNC);

		a.attach_btf_id = id > 0 ? (uint32_t)id : 0;
	} else if (!a.attach_btf_id && c->target) {
		int id = brt_btf_attach_id(vmlinux, BPF_PROG_TYPE_TRACING, c->attach, c->target);

		a.attach_btf_id = id > 0 ? (uint32_t)id : 0;
	}
	fd = kernel ? (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a))
		    : bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fd = -errno;
	free(insns);
	return fd;
}

#define RAW BPF_TRACE_RAW_TP
#define SW "sched_switch" /* (bool preempt, task_struct *prev, *next, unsigned prev_state) */
#define PREV "ldxdw %r2, [%r1+8]\n"
/* r1 = meta->seq, "%d" at fp-8, r2 = it, r3 = 3 */
#define SEQ                                                                               \
	"ldxdw %r6, [%r1+0]\nldxdw %r1, [%r6+0]\nstw [%r10-8], 0x6425\nmov %r2, %r10\n"     \
	"add %r2, -8\nmov %r3, 3\n"
/* r2-r4 of get_task_stack into 16 bytes at fp-16 */
#define STK "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\nmov %r4, 0\n"
/* r1-r3 of copy_from_user: 8 bytes at fp-8 from address 4096 */
#define CFU "mov %r1, %r10\nadd %r1, -8\nmov %r2, 8\nmov %r3, 4096\n"

static const struct bcase cases[] = {
	{ "return 0", RAW, SW, "GPL", "mov %r0, 0\nexit\n", NULL, 0 },
	{ "scalar argument", RAW, SW, "GPL", "ldxdw %r0, [%r1+0]\nexit\n", NULL, 0 },
	{ "u32 argument read with 4 bytes", RAW, SW, "GPL", "ldxw %r0, [%r1+24]\nexit\n", NULL,
	  0 },
	{ "prev->pid", RAW, SW, "GPL", PREV "ldxw %r0, [%r2+@pid]\nexit\n", NULL, 0 },
	{ "prev->real_parent->tgid", RAW, SW, "GPL",
	  PREV "ldxdw %r3, [%r2+@parent]\nldxw %r0, [%r3+@tgid]\nexit\n", NULL, 0 },
	{ "prev moved by a constant, then read", RAW, SW, "GPL",
	  PREV "add %r2, @pid\nldxw %r0, [%r2+0]\nexit\n", NULL, 0 },
	{ "prev moved by a variable", RAW, SW, "GPL",
	  PREV "ldxdw %r3, [%r1+0]\nand %r3, 8\nadd %r2, %r3\nldxw %r0, [%r2+0]\nexit\n",
	  "invalid variable offset", 0 },
	{ "write to the context", RAW, SW, "GPL", "stdw [%r1+0], 0\nmov %r0, 0\nexit\n",
	  "invalid bpf_context access off=0 size=8", 0 },
	{ "context offset not a multiple of 8", RAW, SW, "GPL", "ldxw %r0, [%r1+4]\nexit\n",
	  "func 'sched_switch' offset 4 is not multiple of 8", 0 },
	{ "argument past the last", RAW, SW, "GPL", "ldxdw %r0, [%r1+40]\nexit\n",
	  "func 'sched_switch' doesn't have 7-th argument", 0 },
	{ "the return value slot of a tracepoint", RAW, SW, "GPL", "ldxdw %r0, [%r1+32]\nexit\n",
	  "func 'sched_switch' doesn't have 5-th argument", 0 },
	{ "pointer argument read with 4 bytes", RAW, SW, "GPL", "ldxw %r0, [%r1+8]\nexit\n",
	  "func 'sched_switch' size 4 must be 8", 0 },
	{ "store through prev", RAW, SW, "GPL", PREV "stw [%r2+@pid], 0\nmov %r0, 0\nexit\n",
	  "only read is supported", 0 },
	{ "read past task_struct", RAW, SW, "GPL", PREV "ldxw %r0, [%r2+@size]\nexit\n",
	  "access beyond struct task_struct", 0 },
	{ "read below prev", RAW, SW, "GPL", PREV "ldxw %r0, [%r2-8]\nexit\n",
	  "R2 is ptr_task_struct invalid negative access: off=-8", 0 },
	{ "half of a pointer member", RAW, SW, "GPL", PREV "ldxw %r0, [%r2+@parent]\nexit\n",
	  "cannot access ptr member real_parent", 0 },
	{ "proprietary licence", RAW, SW, "Proprietary", PREV "ldxw %r0, [%r2+@pid]\nexit\n",
	  "Cannot access kernel 'struct task_struct' from non-GPL compatible program", 0 },
	{ "prev returned", RAW, SW, "GPL", PREV "mov %r0, %r2\nexit\n", NULL, 0 },
	{ "prev to bpf_probe_read_kernel", RAW, SW, "GPL",
	  PREV "mov %r3, %r2\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 8\n"
	       "call bpf_probe_read_kernel\nmov %r0, 0\nexit\n",
	  NULL, 0 },
	{ "prev spilled and filled", RAW, SW, "GPL",
	  PREV "stxdw [%r10-8], %r2\nldxdw %r3, [%r10-8]\nldxw %r0, [%r3+@pid]\nexit\n", NULL,
	  0 },
	{ "no attach_btf_id", RAW, NULL, "GPL", "mov %r0, 0\nexit\n",
	  "Tracing programs must provide btf_id", 0 },
	{ "a tracepoint that is a function", RAW, "sched_switch", "GPL", "mov %r0, 0\nexit\n",
	  "is not a typedef", 1 },
	{ "attach_btf_id out of range", RAW, NULL, "GPL", "mov %r0, 0\nexit\n", NULL, 0xffff0 },
	{ "iter/task, task used unchecked", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r2, [%r1+8]\nldxw %r0, [%r2+@pid]\nmov %r0, 0\nexit\n",
	  "invalid mem access 'trusted_ptr_or_null_'", 0 },
	{ "iter/task, task checked", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r2, [%r1+8]\njeq %r2, 0, +1\nldxw %r0, [%r2+@pid]\nmov %r0, 0\nexit\n", NULL,
	  0 },
	{ "iter/task returns 2", BPF_TRACE_ITER, "task", "GPL", "mov %r0, 2\nexit\n",
	  "At program exit the register R0 has", 0 },
	/* helpers taking or giving kernel objects, and the tracing type's helper rules */
	{ "tp_btf: get_current_task_btf, ->real_parent->tgid", RAW, SW, "GPL",
	  "call bpf_get_current_task_btf\nldxdw %r3, [%r0+@parent]\nldxw %r0, [%r3+@tgid]\n"
	  "exit\n", NULL, 0 },
	{ "tp_btf: get_task_stack of prev", RAW, SW, "GPL",
	  PREV "mov %r1, %r2\nmov %r2, %r10\nadd %r2, -16\nmov %r3, 16\nmov %r4, 0\n"
	       "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: get_task_stack of prev moved", RAW, SW, "GPL",
	  PREV "mov %r1, %r2\nadd %r1, @size\nmov %r2, %r10\nadd %r2, -16\nmov %r3, 16\n"
	       "mov %r4, 0\ncall bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter/task: get_task_stack of a task not checked", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\nmov %r2, %r10\nadd %r2, -16\nmov %r3, 16\nmov %r4, 0\n"
	  "call bpf_get_task_stack\nmov %r0, 0\nexit\n",
	  "R1 type=trusted_ptr_or_null_ expected=ptr_, trusted_ptr_, rcu_ptr_", 0 },
	{ "iter/task: get_task_stack of a checked task", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +5\nmov %r2, %r10\nadd %r2, -16\nmov %r3, 16\n"
	  "mov %r4, 0\ncall bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: get_attach_cookie", RAW, SW, "GPL", "call bpf_get_attach_cookie\nexit\n",
	  NULL, 0 },
	{ "iter/task: get_attach_cookie", BPF_TRACE_ITER, "task", "GPL",
	  "call bpf_get_attach_cookie\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_get_attach_cookie#174", 0 },
	{ "tp_btf: get_func_ip", RAW, SW, "GPL", "call bpf_get_func_ip\nexit\n",
	  "func bpf_get_func_ip#173 supported only for fentry/fexit/fmod_ret programs", 0 },
	{ "tp_btf: trace_vprintk without arguments", RAW, SW, "GPL",
	  "stw [%r10-8], 0x6968\nmov %r1, %r10\nadd %r1, -8\nmov %r2, 3\nmov %r3, 0\n"
	  "mov %r4, 0\ncall bpf_trace_vprintk\nmov %r0, 0\nexit\n", NULL, 0 },
	/* tracing's bpf_get_socket_cookie takes a kernel socket (tcp_probe: sk, skb) */
	{ "tp_btf: get_socket_cookie of a struct sock", RAW, "tcp_probe", "GPL",
	  "ldxdw %r1, [%r1+0]\ncall bpf_get_socket_cookie\nexit\n", NULL, 0 },
	{ "tp_btf: get_socket_cookie of a struct sk_buff", RAW, "tcp_probe", "GPL",
	  "ldxdw %r1, [%r1+8]\ncall bpf_get_socket_cookie\nexit\n",
	  "R1 is of type sk_buff but sock_common is expected", 0 },
	{ "tp_btf: get_socket_cookie of NULL", RAW, "tcp_probe", "Proprietary",
	  "mov %r1, 0\ncall bpf_get_socket_cookie\nexit\n", NULL, 0 },
	{ "tp_btf: get_socket_cookie of the context", RAW, "tcp_probe", "GPL",
	  "call bpf_get_socket_cookie\nexit\n", "R1 type=ctx expected=sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_\n", 0 },
	{ "iter/task: get_socket_cookie of NULL", BPF_TRACE_ITER, "task", "GPL",
	  "mov %r1, 0\ncall bpf_get_socket_cookie\nmov %r0, 0\nexit\n", NULL, 0 },
	/* bpf_seq_write(meta->seq, data, len): iterators only */
	{ "iter/task: seq_write to meta->seq", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r6, [%r1+0]\nldxdw %r1, [%r6+0]\nstdw [%r10-8], 0\nmov %r2, %r10\n"
	  "add %r2, -8\nmov %r3, 8\ncall bpf_seq_write\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter/task: seq_write to the task", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +5\nstdw [%r10-8], 0\nmov %r2, %r10\n"
	  "add %r2, -8\nmov %r3, 8\ncall bpf_seq_write\nmov %r0, 0\nexit\n",
	  "R1 is of type task_struct but seq_file is expected", 0 },
	{ "tp_btf: seq_write", RAW, SW, "GPL",
	  "mov %r1, 0\nmov %r2, 0\nmov %r3, 0\ncall bpf_seq_write\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_seq_write#127", 0 },
	/* bpf_seq_printf(seq, fmt, fmt_size, args, data_len), bpf_seq_printf_btf(seq, ptr,
	 * ptr_size, flags): iterators only; "%d" at fp-8, one argument at fp-16 */
	{ "iter/task: seq_printf", BPF_TRACE_ITER, "task", "GPL",
	  SEQ "stdw [%r10-16], 7\nmov %r4, %r10\nadd %r4, -16\nmov %r5, 8\n"
	  "call bpf_seq_printf\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter/task: seq_printf, no arguments", BPF_TRACE_ITER, "task", "GPL",
	  SEQ "mov %r4, 0\nmov %r5, 0\ncall bpf_seq_printf\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter/task: seq_printf, NULL arguments of size 8", BPF_TRACE_ITER, "task", "GPL",
	  SEQ "mov %r4, 0\nmov %r5, 8\ncall bpf_seq_printf\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter/task: seq_printf, format size 0", BPF_TRACE_ITER, "task", "GPL",
	  SEQ "mov %r3, 0\nmov %r4, 0\nmov %r5, 0\ncall bpf_seq_printf\nmov %r0, 0\nexit\n",
	  NULL, 0 },
	{ "iter/task: seq_printf, arguments past the stack", BPF_TRACE_ITER, "task", "GPL",
	  SEQ "mov %r4, %r10\nadd %r4, -16\nmov %r5, 24\ncall bpf_seq_printf\nmov %r0, 0\n"
	  "exit\n", NULL, 0 },
	{ "iter/task: seq_printf, proprietary", BPF_TRACE_ITER, "task", "MIT",
	  SEQ "mov %r4, 0\nmov %r5, 0\ncall bpf_seq_printf\nmov %r0, 0\nexit\n",
	  "Cannot access kernel 'struct bpf_iter_meta' from non-GPL", 0 },
	{ "iter/task: seq_printf to the task", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +8\nstw [%r10-8], 0x6425\nmov %r2, %r10\n"
	  "add %r2, -8\nmov %r3, 3\nmov %r4, 0\nmov %r5, 0\ncall bpf_seq_printf\nmov %r0, 0\n"
	  "exit\n", "R1 is of type task_struct but seq_file is expected", 0 },
	{ "tp_btf: seq_printf", RAW, SW, "GPL",
	  "stw [%r10-8], 0x6425\nmov %r1, 0\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 3\n"
	  "mov %r4, 0\nmov %r5, 0\ncall bpf_seq_printf\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_seq_printf#126", 0 },
	{ "iter/task: seq_printf_btf", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r6, [%r1+0]\nldxdw %r1, [%r6+0]\nstdw [%r10-16], 0\nstdw [%r10-8], 0\n"
	  "mov %r2, %r10\nadd %r2, -16\nmov %r3, 16\nmov %r4, 0\ncall bpf_seq_printf_btf\n"
	  "mov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: seq_printf_btf", RAW, SW, "GPL",
	  "stdw [%r10-16], 0\nstdw [%r10-8], 0\nmov %r1, 0\nmov %r2, %r10\nadd %r2, -16\n"
	  "mov %r3, 16\nmov %r4, 0\ncall bpf_seq_printf_btf\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_seq_printf_btf#150", 0 },
	/* a sleepable iterator: meta->seq stays trusted (the kernel's
	 * bpf_iter_meta__safe_trusted), so does ctx->task (bpf_iter__task__safe_trusted) */
	{ "iter.s/task: seq_printf to meta->seq", BPF_TRACE_ITER, "task", "GPL",
	  SEQ "mov %r4, 0\nmov %r5, 0\ncall bpf_seq_printf\nmov %r0, 0\nexit\n", NULL, 0,
	  BPF_F_SLEEPABLE },
	{ "iter.s/task: task_pt_regs of ctx->task", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +1\ncall bpf_task_pt_regs\nmov %r0, 0\nexit\n", NULL,
	  0, BPF_F_SLEEPABLE },
	/* task->group_leader: RCU-protected, never NULL (task_struct__safe_rcu) inside an
	 * RCU section, which a non-sleepable program is; untrusted in a sleepable one */
	{ "iter/task: get_task_stack of task->group_leader", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +6\nldxdw %r1, [%r1+@leader]\n" STK
	  "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter.s/task: get_task_stack of task->group_leader", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +6\nldxdw %r1, [%r1+@leader]\n" STK
	  "call bpf_get_task_stack\nmov %r0, 0\nexit\n", "R1 type=untrusted_ptr_", 0,
	  BPF_F_SLEEPABLE },
	/* a pointer field the kernel does not list (last_wakee): untrusted on the running
	 * 6.18.44, also outside sleepable programs */
	{ "iter/task: get_task_stack of task->last_wakee", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +6\nldxdw %r1, [%r1+@wakee]\n" STK
	  "call bpf_get_task_stack\nmov %r0, 0\nexit\n", "R1 type=untrusted_ptr_", 0 },
	{ "iter/task: task_pt_regs of task->group_leader, a field read", BPF_TRACE_ITER,
	  "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +3\nldxdw %r1, [%r1+@leader]\ncall bpf_task_pt_regs\n"
	  "ldxdw %r0, [%r0+0]\nmov %r0, 0\nexit\n", NULL, 0 },
	/* bpf_copy_from_user(dst, size, user_ptr), bpf_copy_from_user_task(dst, size, ptr,
	 * task, flags): they may sleep */
	{ "iter/task: copy_from_user", BPF_TRACE_ITER, "task", "GPL",
	  CFU "call bpf_copy_from_user\nmov %r0, 0\nexit\n",
	  "helper call might sleep in a non-sleepable prog", 0 },
	{ "iter.s/task: copy_from_user", BPF_TRACE_ITER, "task", "MIT",
	  CFU "call bpf_copy_from_user\nmov %r0, 0\nexit\n", NULL, 0, BPF_F_SLEEPABLE },
	{ "iter.s/task: copy_from_user_task of ctx->task", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r4, [%r1+8]\njeq %r4, 0, +6\n" CFU "mov %r5, 0\ncall bpf_copy_from_user_task\n"
	  "mov %r0, 0\nexit\n", NULL, 0, BPF_F_SLEEPABLE },
	{ "iter.s/task: copy_from_user_task, proprietary", BPF_TRACE_ITER, "task", "MIT",
	  "ldxdw %r4, [%r1+8]\njeq %r4, 0, +6\n" CFU "mov %r5, 0\ncall bpf_copy_from_user_task\n"
	  "mov %r0, 0\nexit\n", "cannot call GPL-restricted function", 0, BPF_F_SLEEPABLE },
	{ "iter.s/task: copy_from_user_task of the context", BPF_TRACE_ITER, "task", "GPL",
	  "mov %r4, %r1\n" CFU "mov %r5, 0\ncall bpf_copy_from_user_task\nmov %r0, 0\nexit\n",
	  "R4 type=ctx expected=ptr_, trusted_ptr_, rcu_ptr_", 0, BPF_F_SLEEPABLE },
	/* bpf_snprintf_btf(str, size, ptr, ptr_size, flags), bpf_task_pt_regs(task) */
	{ "tp_btf: snprintf_btf", RAW, SW, "MIT",
	  "stdw [%r10-16], 0\nstdw [%r10-8], 0\nstdw [%r10-24], 0\nmov %r1, %r10\n"
	  "add %r1, -24\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -16\nmov %r4, 16\nmov %r5, 0\n"
	  "call bpf_snprintf_btf\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: snprintf_btf into uninitialised stack", RAW, SW, "GPL",
	  "stdw [%r10-16], 0\nstdw [%r10-8], 0\nmov %r1, %r10\n"
	  "add %r1, -24\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -16\nmov %r4, 16\nmov %r5, 0\n"
	  "call bpf_snprintf_btf\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: task_pt_regs of prev, regs read", RAW, SW, "GPL",
	  PREV "mov %r1, %r2\ncall bpf_task_pt_regs\nldxdw %r0, [%r0+8]\nmov %r0, 0\nexit\n",
	  NULL, 0 },
	{ "tp_btf: task_pt_regs, proprietary", RAW, SW, "MIT",
	  PREV "mov %r1, %r2\ncall bpf_task_pt_regs\nmov %r0, 0\nexit\n",
	  "cannot call GPL-restricted function", 0 },
	{ "tp_btf: task_pt_regs of a number", RAW, SW, "GPL",
	  "ldxdw %r1, [%r1+0]\ncall bpf_task_pt_regs\nmov %r0, 0\nexit\n",
	  "R1 type=scalar expected=", 0 },
	{ "tp_btf: get_task_stack of prev->last_wakee (untrusted)", RAW, SW, "GPL",
	  PREV "ldxdw %r1, [%r2+@wakee]\n" STK "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: get_task_stack of prev->real_parent (RCU)", RAW, SW, "GPL",
	  PREV "ldxdw %r1, [%r2+@parent]\n" STK "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "tp_btf: get_task_stack of prev->real_parent, NULL-checked", RAW, SW, "GPL",
	  PREV "ldxdw %r1, [%r2+@parent]\njeq %r1, 0, +5\n" STK "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "iter/task: get_task_stack of task->last_wakee, NULL-checked", BPF_TRACE_ITER, "task", "GPL",
	  "ldxdw %r1, [%r1+8]\njeq %r1, 0, +7\nldxdw %r1, [%r1+@wakee]\njeq %r1, 0, +5\n" STK
	  "call bpf_get_task_stack\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "fentry returns 0", BPF_TRACE_FENTRY, "vfs_read", "GPL", "mov %r0, 0\nexit\n", NULL,
	  0 },
	{ "fexit returns 0", BPF_TRACE_FEXIT, "vfs_read", "GPL", "mov %r0, 0\nexit\n", NULL,
	  0 },
	{ "fmod_ret without attach_btf_id", BPF_MODIFY_RETURN, NULL, "GPL", "mov %r0, 0\nexit\n",
	  NULL, 0 },
	/* bpf_get_socket_cookie (46) of a kernel socket pointer: tracing's prototype */
	{ "socket cookie of a sock", RAW, "inet_sock_set_state", "GPL",
	  "ldxdw %r1, [%r1+0]\ncall 46\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "socket cookie of NULL", RAW, "inet_sock_set_state", "GPL",
	  "mov %r1, 0\ncall 46\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "socket cookie non-GPL", RAW, "inet_sock_set_state", "MIT",
	  "ldxdw %r1, [%r1+0]\ncall 46\nmov %r0, 0\nexit\n", NULL, 0 },
	{ "socket cookie of a task", RAW, SW, "GPL",
	  PREV "mov %r1, %r2\ncall 46\nmov %r0, 0\nexit\n",
	  "R1 is of type task_struct but sock_common is expected", 0 },
	{ "socket cookie of the context", RAW, SW, "GPL", "call 46\nmov %r0, 0\nexit\n",
	  "R1 type=ctx expected=sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_", 0 },
	{ "socket cookie of a number", RAW, SW, "GPL",
	  "ldxdw %r1, [%r1+0]\ncall 46\nmov %r0, 0\nexit\n", "R1 type=scalar expected=", 0 },
	/* LSM programs run from a trampoline too (bpfrt: EPERM, as the corpus host) */
	{ "lsm file_permission", BPF_LSM_MAC, "bpf_lsm_file_permission", "GPL",
	  "mov %r0, 0\nexit\n", NULL, 0, 0, BPF_PROG_TYPE_LSM },
	{ "lsm attach type 0", 0, "bpf_lsm_file_permission", "GPL", "mov %r0, 0\nexit\n", NULL,
	  0, 0, BPF_PROG_TYPE_LSM },
	/* freplace programs replace a program's function through a trampoline as well */
	{ "ext without a target", 0, NULL, "GPL", "mov %r0, 0\nexit\n", NULL, 0, 0,
	  BPF_PROG_TYPE_EXT },
	{ "ext on a kernel function", 0, "vfs_read", "GPL", "mov %r0, 0\nexit\n", NULL, 0, 0,
	  BPF_PROG_TYPE_EXT },
	/* struct_ops (the kernel's check_struct_ops_btf_id()): without attach_btf_id (libbpf
	 * loads a program no struct_ops map names so) ENOTSUPP and no message; a non-GPL
	 * licence first; a function is no struct of operations */
	{ "struct_ops without attach_btf_id", 0, NULL, "GPL", "mov %r0, 0\nexit\n", NULL, 0, 0,
	  BPF_PROG_TYPE_STRUCT_OPS },
	{ "struct_ops without attach_btf_id, uninit r2", 0, NULL, "GPL",
	  "mov %r0, %r2\nexit\n", NULL, 0, 0, BPF_PROG_TYPE_STRUCT_OPS },
	{ "struct_ops non-GPL", 0, NULL, "MIT", "mov %r0, 0\nexit\n",
	  "struct ops programs must have a GPL compatible license", 0, 0,
	  BPF_PROG_TYPE_STRUCT_OPS },
	{ "struct_ops on a function", 0, "vfs_read", "GPL", "mov %r0, 0\nexit\n",
	  "is not a supported struct", 0, 0, BPF_PROG_TYPE_STRUCT_OPS },
};

/* BPF_PROG_TEST_RUN of a program both sides accepted (bpfrt's fd a, the kernel's b):
 * bpf_prog_test_run_tracing() runs only fentry/fexit/fmod_ret programs, so tp_btf and
 * iter programs get its attr checks and then its -EFAULT; the same errno and retval on
 * both sides.  Returns the number of runs compared. */
static int test_runs(int a, int b)
{
	static const struct {
		uint32_t flags, cpu, batch, ctx, repeat;
	} runs[] = {
		{ 0, 0, 0, 0, 0 }, { 0, 0, 0, 16, 0 }, { 0, 0, 0, 0, 5 },
		{ BPF_F_TEST_RUN_ON_CPU, 0, 0, 0, 0 }, { 0, 1, 0, 0, 0 }, { 0, 0, 4, 0, 0 },
		{ 2, 0, 0, 0, 0 },
	};
	uint64_t ctx[2] = { 1, 2 };
	int n = 0;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		union bpf_attr ta, tb;
		int ra, rb;

		memset(&ta, 0, sizeof(ta));
		ta.test.prog_fd = (uint32_t)a;
		ta.test.flags = runs[i].flags;
		ta.test.cpu = runs[i].cpu;
		ta.test.batch_size = runs[i].batch;
		ta.test.repeat = runs[i].repeat;
		if (runs[i].ctx) {
			ta.test.ctx_in = (uint64_t)(uintptr_t)ctx;
			ta.test.ctx_size_in = runs[i].ctx;
		}
		tb = ta;
		tb.test.prog_fd = (uint32_t)b;
		ra = bpfrt_bpf(BPF_PROG_TEST_RUN, &ta, sizeof(ta)) ? -errno : 0;
		rb = syscall(__NR_bpf, BPF_PROG_TEST_RUN, &tb, sizeof(tb)) ? -errno : 0;
		T_EQ_INT(rb, ra);
		T_EQ_INT(tb.test.retval, ta.test.retval);
		n++;
	}
	return n;
}

/* Without kernel BTF (BPFRT_VMLINUX_BTF empty: a kernel built without
 * CONFIG_DEBUG_INFO_BTF) the BTF-typed types are refused as that kernel refuses them:
 * an attach_btf_id is -EINVAL from bpf_prog_load() before the verifier (no log), and
 * without one the verifier's check_attach_btf_id() answers as it does on any kernel, so
 * those loads are compared with this kernel's.  Runs in a process of its own (the
 * kernel's BTF is read once per process). */
struct nobtf_case {
	const char *name;
	uint32_t type, attach, flags;
};

static const struct nobtf_case nobtf_cases[] = {
	{ "tp_btf", BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, 0 },
	{ "fentry", BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, 0 },
	{ "fexit", BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, 0 },
	{ "fmod_ret", BPF_PROG_TYPE_TRACING, BPF_MODIFY_RETURN, 0 },
	{ "iter", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, 0 },
	{ "iter.s", BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, BPF_F_SLEEPABLE },
	{ "lsm", BPF_PROG_TYPE_LSM, BPF_LSM_MAC, 0 },
	{ "lsm_cgroup", BPF_PROG_TYPE_LSM, BPF_LSM_CGROUP, 0 },
	{ "freplace", BPF_PROG_TYPE_EXT, 0, 0 },
	{ "struct_ops", BPF_PROG_TYPE_STRUCT_OPS, 0, 0 },
};

static int nobtf_load(int kernel, const struct nobtf_case *c, uint32_t btf_id, char *log,
		      size_t loglen)
{
	struct bpf_insn insns[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
				     { .code = BPF_JMP | BPF_EXIT } };
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = c->type;
	a.expected_attach_type = c->attach;
	a.prog_flags = c->flags;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = 1;
	a.attach_btf_id = btf_id;
	log[0] = 0;
	fd = kernel ? (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a))
		    : bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int no_vmlinux(void)
{
	static char log1[4096], log2[4096];

	T_CASE("no kernel BTF");
	T_ASSERT(brt_btf_vmlinux() == NULL);
	for (size_t i = 0; i < sizeof(nobtf_cases) / sizeof(nobtf_cases[0]); i++) {
		const struct nobtf_case *c = &nobtf_cases[i];
		int a, b;

		T_CASE(c->name);
		/* attach_btf_id of any type: bpf_prog_load()'s -EINVAL, nothing logged */
		T_EQ_INT(-EINVAL, nobtf_load(0, c, 1, log1, sizeof(log1)));
		T_EQ_STR("", log1);
		/* none: the verifier's answer, the same with or without kernel BTF */
		a = nobtf_load(0, c, 0, log1, sizeof(log1));
		b = nobtf_load(1, c, 0, log2, sizeof(log2));
		T_EQ_INT(b, a);
		T_EQ_STR(log2, log1);
		if (getenv("BTF_ORACLE_SHOW"))
			printf("%s: %d '%s'\n", c->name, a, strtok(log1, "\n") ? log1 : "");
	}
	return t_done();
}

int main(int argc, char **argv)
{
	static char log1[65536], log2[65536];
	struct bcase c;
	int runs = 0;

	vmlinux = brt_btf_vmlinux();
	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	if (argc > 1 && !strcmp(argv[1], "--no-vmlinux"))
		return no_vmlinux();
	if (!vmlinux)
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	tt_private_fs("btf_oracle");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int a, b;

		c = cases[i];
		if (c.btf_id == 1) /* the function of that name instead of the typedef */
			c.btf_id = (uint32_t)brt_btf_find(vmlinux, "schedule", BTF_KIND_FUNC);
		a = load(0, &c, log1, sizeof(log1));
		b = load(1, &c, log2, sizeof(log2));
		T_CASE(c.name);
		if (getenv("BTF_ORACLE_SHOW"))
			printf("%s: bpfrt %d kernel %d\n", c.name, a < 0 ? a : 0, b < 0 ? b : 0);
		if ((c.attach == BPF_TRACE_FENTRY || c.attach == BPF_TRACE_FEXIT ||
		     c.attach == BPF_MODIFY_RETURN || c.type == BPF_PROG_TYPE_LSM ||
		     c.type == BPF_PROG_TYPE_EXT) &&
		    b != -EPERM) {
			/* a kernel whose policy lets it build trampolines checks these;
			 * bpfrt, which has none to build, refuses them all (EPERM) */
			T_EQ_INT(-EPERM, a);
			if (b >= 0)
				close(b);
			continue;
		}
		T_EQ_INT(b < 0 ? b : 0, a < 0 ? a : 0);
		if ((a < 0) != (b < 0) || (a < 0 && a != b))
			fprintf(stderr, "  bpfrt log:\n%s  kernel log:\n%s", log1, log2);
		if (c.msg) {
			T_CONTAINS(c.msg, log1);
			T_CONTAINS(c.msg, log2);
		}
		if (a >= 0 && b >= 0)
			runs += test_runs(a, b);
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	T_CASE("no kernel BTF, in a child");
	{
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			setenv("BPFRT_VMLINUX_BTF", "", 1);
			execl("/proc/self/exe", argv[0], "--no-vmlinux", (char *)NULL);
			_exit(127);
		}
		T_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
		T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	T_CASE("test runs");
	T_ASSERT(runs > 0);
	printf("%d test runs compared\n", runs);
	tt_cleanup_fs();
	return t_done();
}
