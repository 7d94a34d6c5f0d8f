/* deep_calls: a chain of six static subprograms, each with five arguments, called from
 * two programs; link order differs per program.  chain(1,2,3,4,5) = 15 + 5 * 5 = 40,
 * "shallow" calls level5 directly: 15 + 5 = 20. */
#include "bpfrt_progs.h"

#define LEVEL(n, next)                                                              \
	static NOINLINE int level##n(int a, int b, int c, int d, int e)             \
	{                                                                           \
		asm volatile("" : "+r"(a));                                         \
		return next(a, b, c, d, e) + 5;                                     \
	}

static NOINLINE int level6(int a, int b, int c, int d, int e)
{
	asm volatile("" : "+r"(a));
	return a + b + c + d + e;
}

LEVEL(5, level6)
LEVEL(4, level5)
LEVEL(3, level4)
LEVEL(2, level3)
LEVEL(1, level2)

SEC("socket")
int chain(struct __sk_buff *skb)
{
	return level1(1, 2, 3, 4, 5);
}

SEC("socket")
int shallow(struct __sk_buff *skb)
{
	return level5(1, 2, 3, 4, 5);
}

char _license[] SEC("license") = "GPL";
