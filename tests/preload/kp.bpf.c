/* kp.bpf.c - the BPF side of kp.c: uprobe and uretprobe programs reading their
 * struct pt_regs (arguments, return value) and, through bpf_probe_read_user_str(), a
 * string in the probed process's memory (another process's, for a hit in kp.c's child).
 * Built against the system libbpf's headers, no vmlinux.h. */
#include <linux/bpf.h>
#include <asm/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* counts: 0 kp_add hits, 1 kp_add returns, 2 kp_name hits naming the marker, 3 other
 * kp_name hits; sums: 0 of kp_add's arguments, 1 of its return values */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} sums SEC(".maps");

static void add(void *map, __u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, &k);

	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("uprobe")
int BPF_KPROBE(on_add, long a, long b)
{
	add(&counts, 0, 1);
	add(&sums, 0, a + b);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(on_add_ret, long ret)
{
	add(&counts, 1, 1);
	add(&sums, 1, ret);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_name, const char *name)
{
	/* "bpfrt-marker" and its NUL, as two little-endian words: no string constant */
	char buf[16] = {};
	long n = bpf_probe_read_user_str(buf, sizeof(buf), name);
	__u64 w0 = *(__u64 *)buf, w1 = *(__u64 *)(buf + 8);
	int same = n == 13 && w0 == 0x616d2d7472667062ull && w1 == 0x72656b72ull;

	add(&counts, same ? 2 : 3, 1);
	return 0;
}
