/* data_past_end: lddw instructions whose offset lies outside their global-data section,
 * as GNU as 2.40 writes one for every variable not first in its section (the variable's
 * offset both in the instruction and through the symbol: docs/CORPUS.md, "A second
 * compiler").  libbpf does not check the offset: it hands it to the kernel, which refuses
 * the load ("invalid access to map value pointer", EINVAL), unless the load meets another
 * refusal first (a host that refuses trampolines answers an fentry program EPERM).
 * tests/object/test_data_past_end_oracle.c loads each program through libbpf and bpfrt.
 * clang writes such an lddw only when told to (inline asm); GCC 12 with GNU as 2.40 writes
 * it from plain C, so its build (ctest -L gcc) refuses the same programs the same way. */
#include "bpfrt_progs.h"

/* .data, 8 bytes: first at 0, second at 4 */
int first = 1;
int second = 2;

#ifdef __clang__
/* r0 = *(u32 *)(&first + OFF), the offset written into the lddw beside the relocation */
#define READ_AT(r, off) \
	asm volatile("r1 = first + " #off " ll; %0 = *(u32 *)(r1 + 0)" : "=r"(r) :: "r1")
#define READ_BEFORE(r, off) \
	asm volatile("r1 = first - " #off " ll; %0 = *(u32 *)(r1 + 0)" : "=r"(r) :: "r1")
#else
/* GNU as 2.40: whichever of the two GCC puts second in .data is an lddw of its offset
 * against itself (twice its offset: the end of the section), so every program here
 * reads past the end */
#define READ_AT(r, off) ((r) = first + second)
#define READ_BEFORE(r, off) ((r) = first + second)
#endif

SEC("socket")
int in_range(struct __sk_buff *skb)
{
	int r;

	READ_AT(r, 4);
	return r;
}

SEC("socket")
int past_end(struct __sk_buff *skb)
{
	int r;

	READ_AT(r, 8);
	return r;
}

SEC("socket")
int before_start(struct __sk_buff *skb)
{
	int r;

	READ_BEFORE(r, 8);
	return r;
}

SEC("fentry/bpf_fentry_test1")
int fentry_past_end(void *ctx)
{
	int r;

	READ_AT(r, 8);
	return r;
}

char _license[] SEC("license") = "GPL";
