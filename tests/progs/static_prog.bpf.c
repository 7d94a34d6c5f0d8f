/* static_prog: a static function with a SEC() attribute is still a program (its symbol is
 * local), next to a global one in the same section; they return 31 and 32.  The unused
 * pointer in a custom section gives .BTF a pointer to void, which the reader must take. */
#include "bpfrt_progs.h"

SEC("socket")
static int hidden(struct __sk_buff *skb)
{
	return 31;
}

SEC("socket")
int visible(struct __sk_buff *skb)
{
	return 32;
}

const void *opaque SEC(".maps.unused");

char _license[] SEC("license") = "GPL";
