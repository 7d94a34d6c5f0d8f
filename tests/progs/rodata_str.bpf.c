/* rodata_str: string literals land in .rodata.str1.1 (mergeable strings); a subprogram
 * sums the bytes of "hello" (532) and of "BPF" (216) and the program returns 748.  The
 * empty asm hides the pointers so clang cannot fold the sums at compile time. */
#include "bpfrt_progs.h"

static NOINLINE int strsum(const char *s)
{
	int sum = 0;

	asm volatile("" : "+r"(s));
	for (int i = 0; i < 16 && s[i]; i++)
		sum += s[i];
	return sum;
}

SEC("socket")
int hello(struct __sk_buff *skb)
{
	return strsum("hello") + strsum("BPF");
}

char _license[] SEC("license") = "GPL";
