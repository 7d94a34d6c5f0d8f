/* for_each: bpf_for_each_map_elem() over an array and a hash map the program fills itself:
 * sums of keys and values, values written back by the callback, an early stop, and the
 * helper's count.  Results are independent of the hash map's walk order, so the kernel and
 * bpfrt must return the same numbers (each run adds the same again to the array). */
#include "bpfrt_progs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, unsigned int);
	__type(value, unsigned long long);
	__uint(max_entries, 4);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, unsigned int);
	__type(value, unsigned long long);
	__uint(max_entries, 8);
} tab SEC(".maps");

struct acc {
	unsigned long long keys;
	unsigned long long values;
	unsigned long long calls;
};

static int add_elem(void *map, unsigned int *key, unsigned long long *value, struct acc *a)
{
	a->keys += *key;
	a->values += *value;
	a->calls++;
	*value += 1; /* seen by the next run */
	return 0;
}

/* stops at key 1: after two calls on the array, whose walk is in key order */
static int stop_at_1(void *map, unsigned int *key, unsigned long long *value, struct acc *a)
{
	a->calls++;
	return *key == 1;
}

SEC("socket")
int each_array(struct __sk_buff *skb)
{
	struct acc a = { 0, 0, 0 }, b = { 0, 0, 0 };
	long n = bpf_for_each_map_elem(&arr, add_elem, &a, 0);
	long m = bpf_for_each_map_elem(&arr, stop_at_1, &b, 0);

	/* 4 elements, keys 0+1+2+3 = 6, 4 calls, values 0 (first run) or 4 (second); the
	 * second walk stops after 2 */
	return (int)(m * 10000 + n * 1000 + a.keys * 100 + a.calls * 10 + a.values);
}

SEC("socket")
int each_hash(struct __sk_buff *skb)
{
	struct acc a = { 0, 0, 0 }, b = { 0, 0, 0 };
	unsigned long long v;
	unsigned int k;
	long n, flags;

	k = 1, v = 10;
	bpf_map_update_elem(&tab, &k, &v, BPF_ANY);
	k = 2, v = 20;
	bpf_map_update_elem(&tab, &k, &v, BPF_ANY);
	k = 3, v = 30;
	bpf_map_update_elem(&tab, &k, &v, BPF_ANY);
	n = bpf_for_each_map_elem(&tab, add_elem, &a, 0);
	flags = bpf_for_each_map_elem(&tab, stop_at_1, &b, 1);
	/* 3 elements, keys 6, values 60 (the callback adds 1 to each, but the updates above
	 * reset them), flags: -EINVAL and no call */
	return (int)(n * 10000 + a.keys * 1000 + a.values * 10 + b.calls - flags * 100000);
}

char _license[] SEC("license") = "GPL";
