/* bad_data_ptr: a pointer initialised in global data needs an address no loader can give
 * a program; bpfrt refuses the object at open, naming the section and offset. */
#include "bpfrt_progs.h"

int target = 5;
int *ptr = &target;

SEC("socket")
int via_ptr(struct __sk_buff *skb)
{
	return target;
}

char _license[] SEC("license") = "GPL";
