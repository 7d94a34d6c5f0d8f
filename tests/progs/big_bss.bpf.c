/* big_bss: a 64 KiB .bss array and a 4 KiB .data array, indexed from the packet length
 * (bounded by a mask); returns 4 + 2 = 6 on the first run, 4 + 4 = 8 on the second. */
#include "bpfrt_progs.h"

unsigned char space[65536];
unsigned int table[1024] = { [50] = 4 };

SEC("socket")
int big(struct __sk_buff *skb)
{
	unsigned int i = skb->len & 1023; /* 50 for the test frame */

	space[i * 64] += 2;
	return table[i] + space[i * 64];
}

char _license[] SEC("license") = "GPL";
