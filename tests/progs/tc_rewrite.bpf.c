/* tc_rewrite: a tc program that writes the packet (swaps the MAC addresses through direct
 * packet access) and returns TC_ACT_OK (0) when the frame is long enough, TC_ACT_SHOT (2)
 * otherwise. */
#include "bpfrt_progs.h"

SEC("tc")
int swap_macs(struct __sk_buff *skb)
{
	unsigned char *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;

	if (data + 12 > end)
		return 2;
	for (int i = 0; i < 6; i++) {
		unsigned char t = data[i];

		data[i] = data[i + 6];
		data[i + 6] = t;
	}
	return 0;
}

char _license[] SEC("license") = "GPL";
