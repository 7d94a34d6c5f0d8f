/* task_reads.bpf.c - CO-RE reads of task_struct: BPF_CORE_READ chains, a local flavour
 * (task_struct___old) with a field the kernel lacks behind bpf_core_field_exists(), sizes,
 * offsets, enum values, type existence and ids, bitfields and signedness. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct task_struct___old {
	int pid;
	long state;
	int no_such_field;
} __attribute__((preserve_access_index));

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 16); __type(key, __u32); __type(value, __u64); } out SEC(".maps");

static __always_inline void put(__u32 k, __u64 v)
{
	bpf_map_update_elem(&out, &k, &v, 0);
}

SEC("kprobe/do_nanosleep")
int reads(struct pt_regs *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	put(0, BPF_CORE_READ(t, pid));
	put(1, BPF_CORE_READ(t, real_parent, tgid));
	put(2, BPF_CORE_READ(t, mm, exe_file, f_inode, i_ino));
	put(3, bpf_core_field_exists(t->pid));
	put(4, bpf_core_type_size(struct task_struct));
	put(5, bpf_core_field_size(t->comm));
	put(6, bpf_core_field_offset(t->tgid));
	struct task_struct___old *o = (void *)t;
	if (bpf_core_field_exists(o->no_such_field))
		put(7, BPF_CORE_READ(o, no_such_field));
	put(8, BPF_CORE_READ(o, pid));
	put(9, bpf_core_enum_value_exists(enum bpf_map_type, BPF_MAP_TYPE_RINGBUF));
	put(10, bpf_core_enum_value(enum bpf_map_type, BPF_MAP_TYPE_RINGBUF));
	put(11, bpf_core_type_exists(struct task_struct___old));
	put(12, bpf_core_type_id_kernel(struct task_struct));
	return 0;
}

SEC("kprobe/do_nanosleep")
int bits(struct pt_regs *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	put(0, BPF_CORE_READ_BITFIELD_PROBED(t, sched_reset_on_fork));
	put(1, BPF_CORE_READ_BITFIELD_PROBED(t, in_execve));
	put(2, __builtin_preserve_field_info(t->pid, BPF_FIELD_SIGNED));
	return 0;
}
