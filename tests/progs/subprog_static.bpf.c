/* subprog_static: static functions in .text called from two programs in different
 * sections, one of them calling another (a call chain); each program gets its own copy.
 * add3(4) = 7, twice(7) = 14: "first" returns 14; "second" returns twice(5) = 10. */
#include "bpfrt_progs.h"

static NOINLINE int add3(int x)
{
	asm volatile("" : "+r"(x));
	return x + 3;
}

static NOINLINE int twice(int x)
{
	asm volatile("" : "+r"(x));
	return x * 2;
}

static NOINLINE int add3_twice(int x)
{
	return twice(add3(x));
}

SEC("socket")
int first(struct __sk_buff *skb)
{
	return add3_twice(4);
}

SEC("tc")
int second(struct __sk_buff *skb)
{
	return twice(5);
}

char _license[] SEC("license") = "GPL";
