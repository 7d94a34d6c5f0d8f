/* links.bpf.c - the BPF side of links.c: one program per kind of link bpfrt publishes
 * (a tracepoint perf link, uprobe and uretprobe perf links, a raw tracepoint, XDP and
 * tcx links).  They count, but only their links matter to the test. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 6);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tp/syscalls/sys_enter_getppid")
int lk_tp(void *ctx)
{
	bump(0);
	return 0;
}

SEC("uprobe")
int lk_up(void *ctx)
{
	bump(1);
	return 0;
}

SEC("uretprobe")
int lk_uret(void *ctx)
{
	bump(2);
	return 0;
}

SEC("raw_tp/sys_enter")
int lk_raw(void *ctx)
{
	bump(3);
	return 0;
}

SEC("xdp")
int lk_xdp(struct xdp_md *ctx)
{
	bump(4);
	return XDP_PASS;
}

SEC("tc")
int lk_tc(struct __sk_buff *skb)
{
	bump(5);
	return TC_ACT_OK;
}
