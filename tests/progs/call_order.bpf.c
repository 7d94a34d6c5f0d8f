/* call_order: main calls a() then b(), and a() calls c(); a loader appending depth-first
 * (as libbpf does) lays out main, a, c, b.  a(1) = c(1) + 1 = 12, b(1) = 101: returns 113. */
#include "bpfrt_progs.h"

static NOINLINE int c(int x)
{
	asm volatile("" : "+r"(x));
	return x + 10;
}

static NOINLINE int a(int x)
{
	return c(x) + 1;
}

static NOINLINE int b(int x)
{
	asm volatile("" : "+r"(x));
	return x + 100;
}

SEC("socket")
int order(struct __sk_buff *skb)
{
	return a(1) + b(1);
}

char _license[] SEC("license") = "GPL";
