/* subprog_global: non-static (global) functions in .text, called through R_BPF_64_32
 * relocations against their own symbols; gsum(10) = 55 via a helper gadd. */
#include "bpfrt_progs.h"

NOINLINE int gadd(int a, int b)
{
	asm volatile("" : "+r"(a));
	return a + b;
}

NOINLINE int gsum(int n)
{
	int s = 0;

	for (int i = 1; i <= 10; i++)
		s = gadd(s, i);
	return s + n - 10;
}

SEC("socket")
int global_calls(struct __sk_buff *skb)
{
	return gsum(10);
}

char _license[] SEC("license") = "GPL";
