/* license_version: a "Dual MIT/GPL" license string and a "version" section; no maps.
 * Returns skb->len's low byte plus 1 (51 for a 64-byte test frame: the socket-filter
 * test run pulls the 14-byte Ethernet header, in the kernel and in bpfrt). */
#include "bpfrt_progs.h"

SEC("socket")
int lenplus(struct __sk_buff *skb)
{
	return (skb->len & 0xff) + 1;
}

char _license[] SEC("license") = "Dual MIT/GPL";
unsigned int _version SEC("version") = 0x050a00;
