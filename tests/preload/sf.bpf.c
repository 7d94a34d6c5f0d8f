/* sf.bpf.c - the BPF side of sf.c: a socket filter on a UDP socket that drops datagrams
 * whose payload starts with 'x', trims those starting with 't' to 4 payload bytes and
 * counts its runs and the datagrams whose UDP header names the expected port. */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u16 port = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("socket")
int udp_filter(struct __sk_buff *skb)
{
	__u16 dport = 0;
	__u8 c = 0;

	bump(0);
	/* the filter sees the UDP header, then the payload */
	if (!bpf_skb_load_bytes(skb, 2, &dport, 2) && dport == bpf_htons(port))
		bump(1);
	if (bpf_skb_load_bytes(skb, 8, &c, 1))
		return skb->len;
	if (c == 'x')
		return 0;
	if (c == 't')
		return 8 + 4;
	return skb->len;
}

/* For a packet socket of type SOCK_DGRAM (sf --packet): the filter sees the IP header
 * first; UDP to the port is kept up to 4 payload bytes, everything else dropped. */
SEC("socket")
int ip_filter(struct __sk_buff *skb)
{
	__u16 dport = 0;
	__u8 proto = 0;

	if (bpf_skb_load_bytes(skb, 9, &proto, 1) || proto != 17 /* IPPROTO_UDP */)
		return 0;
	if (bpf_skb_load_bytes(skb, 22, &dport, 2) || dport != bpf_htons(port))
		return 0;
	return 20 + 8 + 4;
}
