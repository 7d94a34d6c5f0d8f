/* ringbuf.bpf.c - an event stream: for every IPv4 packet of the interface the socket filter
 * reserves a record in a BPF ring buffer, fills it from the headers it reads with
 * bpf_skb_load_bytes and submits it; user space consumes the records in order.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>

#include "bpf_sample.h"

struct event {
	unsigned long long ts_ns;
	unsigned int len;
	unsigned int saddr; /* network order */
	unsigned int daddr;
	unsigned short sport; /* network order; 0 when not TCP/UDP */
	unsigned short dport;
	unsigned char proto;
	unsigned char pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

SEC("socket")
int packet_events(struct __sk_buff *skb)
{
	struct iphdr ip;
	unsigned short ports[2] = { 0, 0 };
	struct event *e;

	if (skb->protocol != __builtin_bswap16(ETH_P_IP))
		return 0;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip, sizeof(ip)))
		return 0;
	if ((ip.protocol == 6 || ip.protocol == 17) && !(ip.frag_off & __builtin_bswap16(0x1fff)))
		bpf_skb_load_bytes(skb, ETH_HLEN + ip.ihl * 4, ports, sizeof(ports));
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0; /* full: the consumer is behind, this event is lost */
	e->ts_ns = bpf_ktime_get_ns();
	e->len = skb->len;
	e->saddr = ip.saddr;
	e->daddr = ip.daddr;
	e->sport = ports[0];
	e->dport = ports[1];
	e->proto = ip.protocol;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
