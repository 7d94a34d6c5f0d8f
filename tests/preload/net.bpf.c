/* net.bpf.c - the BPF side of net.c: an XDP and a tc program counting UDP datagrams to
 * one port (set by the loader), passing everything. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u16 port = 0;

/* 0 XDP, 1 tc */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void count(void *data, void *end, __u32 k)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u64 *v;

	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl != 5 || udp->dest != bpf_htons(port))
		return;
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	count((void *)(long)ctx->data, (void *)(long)ctx->data_end, 0);
	return XDP_PASS;
}

SEC("tc")
int tc_count(struct __sk_buff *skb)
{
	count((void *)(long)skb->data, (void *)(long)skb->data_end, 1);
	return 0; /* TC_ACT_OK */
}
