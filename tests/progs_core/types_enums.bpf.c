/* types_enums.bpf.c - CO-RE in a subprogram appended to two programs, enum flavours, a
 * type that exists nowhere (TYPE_EXISTS/SIZE answer 0), arrays inside structs, and a
 * field read guarded by an enum-value check. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

enum bpf_map_type___local {
	BPF_MAP_TYPE_HASH___local = 1,
	BPF_MAP_TYPE_NO_SUCH___local = 12345,
};

struct no_such_type___x {
	int a;
} __attribute__((preserve_access_index));

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 16); __type(key, __u32); __type(value, __u64); } vals SEC(".maps");

static __noinline int store(__u32 k, __u64 v)
{
	bpf_map_update_elem(&vals, &k, &v, 0);
	return 0;
}

static __noinline int common(struct task_struct *t)
{
	char comm[16];

	store(0, BPF_CORE_READ(t, signal, nr_threads));
	bpf_core_read(&comm, sizeof(comm), &t->comm);
	store(1, comm[0]);
	store(2, bpf_core_field_offset(struct task_struct, comm[3]));
	store(3, BPF_CORE_READ(t, thread_pid, numbers[0].nr));
	return 0;
}

SEC("kprobe/do_nanosleep")
int first(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();

	common(t);
	store(4, bpf_core_enum_value_exists(enum bpf_map_type___local, BPF_MAP_TYPE_NO_SUCH___local));
	store(5, bpf_core_enum_value(enum bpf_map_type___local, BPF_MAP_TYPE_HASH___local));
	store(6, bpf_core_type_exists(struct no_such_type___x));
	store(7, bpf_core_type_size(struct no_such_type___x));
	store(8, bpf_core_type_id_local(struct no_such_type___x));
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int second(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();

	common(t);
	if (bpf_core_enum_value_exists(enum bpf_map_type___local, BPF_MAP_TYPE_NO_SUCH___local))
		store(9, bpf_core_enum_value(enum bpf_map_type___local, BPF_MAP_TYPE_NO_SUCH___local));
	if (bpf_core_type_exists(struct no_such_type___x))
		store(10, BPF_CORE_READ((struct no_such_type___x *)t, a));
	store(11, bpf_core_type_size(struct mm_struct));
	return 0;
}
