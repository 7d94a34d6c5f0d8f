/* tp.bpf.c - the BPF side of tp.c: a tracepoint program counting one process's
 * getppid() calls into an array, and a socket filter for SO_ATTACH_BPF.  Built against
 * the system libbpf's bpf_helpers.h, no vmlinux.h. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0; /* .rodata: set by the loader */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int count_getppid(void *ctx)
{
	__u32 k = 0;
	__u64 *v;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

SEC("socket")
int keep_all(struct __sk_buff *skb)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return skb->len;
}
