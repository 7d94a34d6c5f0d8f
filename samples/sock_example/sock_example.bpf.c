/* sock_example.bpf.c - the seed's stateful socket filter: for every IPv4 packet on the
 * interface, add one (and its length) to the counters of its IP protocol in an array map
 * indexed by protocol number.  Packets start at the Ethernet header, as on a packet
 * socket.  The filter keeps nothing (returns 0): it only counts.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <stddef.h>

#include "bpf_sample.h"

struct proto_count {
	unsigned long long packets;
	unsigned long long bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, unsigned int);
	__type(value, struct proto_count);
} proto_counts SEC(".maps");

SEC("socket")
int count_protocols(struct __sk_buff *skb)
{
	unsigned int proto;
	struct proto_count *c;

	if (load_half(skb, offsetof(struct ethhdr, h_proto)) != ETH_P_IP)
		return 0;
	proto = load_byte(skb, ETH_HLEN + offsetof(struct iphdr, protocol));
	c = bpf_map_lookup_elem(&proto_counts, &proto);
	if (c) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, skb->len);
	}
	return 0;
}

char _license[] SEC("license") = "GPL";
