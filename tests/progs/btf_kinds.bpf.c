/* btf_kinds: a map value type that uses most BTF kinds - enum, union, bitfields,
 * typedefs, const/volatile, nested arrays, a float, a function pointer, a forward
 * declaration - for `bpfrt btf dump` against bpftool; the program returns 3. */
#include "bpfrt_progs.h"

enum color { RED, GREEN = 5, BLUE = -1 };
typedef unsigned int u32_t;
struct opaque;

union either {
	u32_t as_int;
	unsigned char bytes[4];
};

struct rich {
	enum color c;
	union either e;
	unsigned int flag : 1;
	unsigned int level : 3;
	unsigned int rest : 28;
	const volatile int cv;
	short grid[2][3];
	float ratio;
	int (*callback)(int);
	struct opaque *handle;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32_t);
	__type(value, struct rich);
	__uint(max_entries, 1);
} richmap SEC(".maps");

SEC("socket")
int kinds(struct __sk_buff *skb)
{
	u32_t k = 0;
	struct rich *r = bpf_map_lookup_elem(&richmap, &k);

	if (!r)
		return 0;
	r->level = 3;
	return r->level;
}

char _license[] SEC("license") = "GPL";
