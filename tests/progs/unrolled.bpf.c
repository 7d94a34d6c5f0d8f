/* unrolled: a fully unrolled loop gives a program of over a thousand instructions (the
 * linker and the loader must not care): 400 steps of acc = (acc ^ acc << 3) + i from
 * skb->len (50 for the test frame); returns the low 16 bits. */
#include "bpfrt_progs.h"

SEC("socket")
int long_prog(struct __sk_buff *skb)
{
	unsigned int acc = skb->len;

#pragma clang loop unroll(full)
	for (int i = 0; i < 400; i++)
		acc = (acc ^ (acc << 3)) + (unsigned int)i;
	return (int)(acc & 0xffff);
}

char _license[] SEC("license") = "GPL";
