/* rtp.bpf.c - the BPF side of rtp.c: raw tracepoint programs on the kernel's sys_enter
 * and sys_exit counting getpgid(424242) calls of one process, the argument read through
 * the pt_regs pointer raw_tp passes (bpf_probe_read_kernel, as BPF_KPROBE_SYSCALL-style
 * code does), and one on sched_switch (whose arguments bpfrt cannot rebuild). */
#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0;

/* 0 entries with the argument, 1 exits returning -ESRCH, 2 sched_switch hits */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("raw_tp/sys_enter")
int on_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	unsigned long di = 0;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid || ctx->args[1] != __NR_getpgid)
		return 0;
	bpf_probe_read_kernel(&di, sizeof(di), &regs->rdi);
	if (di == 424242)
		bump(0);
	return 0;
}

SEC("raw_tp/sys_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	long id = 0;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	bpf_probe_read_kernel(&id, sizeof(id), &regs->orig_rax);
	if (id == __NR_getpgid && (long)ctx->args[1] == -3 /* ESRCH */)
		bump(1);
	return 0;
}

SEC("raw_tp/sched_switch")
int on_switch(struct bpf_raw_tracepoint_args *ctx)
{
	bump(2);
	return 0;
}
