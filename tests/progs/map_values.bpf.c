/* map_values: maps whose key and value types exercise the BTF formatter behind `bpfrt map
 * dump|lookup` (compared with bpftool's output by tests/maps/map_fmt_vs_bpftool.sh): ints
 * of every width and sign, bool, chars and strings, bitfields, a nested anonymous struct and
 * union, arrays, an enum, typedefs and qualifiers, a pointer, a per-CPU hash, an array
 * value, and global data (.data, .bss, .rodata).  The program reads them and returns 7. */
#include "bpfrt_progs.h"

enum state { IDLE, BUSY = 3, GONE = -2 };
typedef unsigned short port_t;

struct flow_key {
	unsigned int id;
	char tag[4];
};

struct flow {
	unsigned int saddr;
	port_t sport;
	unsigned char proto;
	_Bool open;
	char name[8];
	enum state st;
	struct {
		unsigned int syn : 1;
		unsigned int ack : 1;
		unsigned int win : 14;
		int delta : 16;
	} flags;
	union {
		unsigned int ip4;
		unsigned char b[4];
	} u;
	long long balance;
	short hist[3];
	const volatile int cv;
	signed char sc;
	char c;
	void *ptr;
	unsigned long long big;
};

struct stats {
	unsigned long long pkts;
	int last;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct flow_key);
	__type(value, struct flow);
	__uint(max_entries, 8);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__type(key, unsigned int);
	__type(value, struct stats);
	__uint(max_entries, 4);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, unsigned int);
	__type(value, unsigned int[3]);
	__uint(max_entries, 2);
} triples SEC(".maps");

int gcount = 5;
unsigned long long gbss;
const volatile char gtag[8] = "bpfrt";

SEC("socket")
int read_values(struct __sk_buff *skb)
{
	struct flow_key k = { .id = 1 };
	unsigned int i = 0, *t;
	struct stats *s;
	struct flow *f;
	int r = 7;

	f = bpf_map_lookup_elem(&flows, &k);
	if (f && f->open)
		r += f->proto;
	s = bpf_map_lookup_elem(&stats, &i);
	if (s)
		s->pkts++;
	t = bpf_map_lookup_elem(&triples, &i);
	if (t)
		r += t[0];
	gbss += gcount;
	return gtag[0] == 'b' ? r : 0;
}

char _license[] SEC("license") = "GPL";
