/* license_version: a non-GPL license string and a "version" section; no maps.  Returns
 * the packet length's low byte plus 1 through a conditional. */
#include "bpfrt_progs.h"

SEC("socket")
int lenplus(struct __sk_buff *skb)
{
	return (skb->len & 0xff) + 1;
}

char _license[] SEC("license") = "Dual MIT/GPL";
unsigned int _version SEC("version") = 0x050a00;
