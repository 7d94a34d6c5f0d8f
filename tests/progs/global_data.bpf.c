/* global_data: .data, .bss and .rodata variables reached by direct value access
 * (BPF_PSEUDO_MAP_VALUE); returns 100 + 20 + 3 = 123 on the first run. */
#include "bpfrt_progs.h"

int hundred = 100;               /* .data */
static int twenty = 20;          /* .data, static: relocated against the section symbol */
long long counter;               /* .bss */
const volatile int three = 3;    /* .rodata */
static const int table[4] = { 1, 2, 3, 4 };

SEC("socket")
int data_sum(struct __sk_buff *skb)
{
	counter++;
	return hundred + twenty + three + (int)counter - table[(skb->len & 1) ? 0 : 0];
}

char _license[] SEC("license") = "GPL";
