/* perf_output.bpf.c - packet events through a perf event array, the way programs did it
 * before BPF ring buffers: for every IPv4 packet the socket filter sends a small header
 * it fills plus the first bytes of the packet (BPF_F_CTXLEN_MASK) with
 * bpf_perf_event_output() into the current CPU's ring; user space reads every CPU's ring.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>

#include "bpf_sample.h"

#define SNAP 42 /* Ethernet + IPv4 without options + the UDP header */

struct event {
	unsigned long long ts_ns;
	unsigned int len;      /* packet length */
	unsigned int snap;     /* packet bytes that follow this header */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
	/* no max_entries: the loader gives one slot per possible CPU, as libbpf does */
} events SEC(".maps");

SEC("socket")
int packet_heads(struct __sk_buff *skb)
{
	struct event e;
	unsigned long long snap;

	if (skb->protocol != __builtin_bswap16(ETH_P_IP))
		return 0;
	snap = skb->len < SNAP ? skb->len : SNAP;
	e.ts_ns = bpf_ktime_get_ns();
	e.len = skb->len;
	e.snap = (unsigned int)snap;
	bpf_perf_event_output(skb, &events, BPF_F_CURRENT_CPU | (snap << 32), &e, sizeof(e));
	return 0;
}

char _license[] SEC("license") = "GPL";
