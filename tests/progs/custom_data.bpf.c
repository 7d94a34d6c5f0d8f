/* custom_data: variables in custom sections (.data.config, .rodata.limits, .bss.scratch)
 * each become their own array map; returns 7 + 100 + scratch count (1, then 2) = 108. */
#include "bpfrt_progs.h"

int config_a SEC(".data.config") = 7;
const volatile int limit SEC(".rodata.limits") = 100;
int scratch[4] SEC(".bss.scratch");

SEC("socket")
int sum_custom(struct __sk_buff *skb)
{
	scratch[1]++;
	return config_a + limit + scratch[1];
}

char _license[] SEC("license") = "GPL";
