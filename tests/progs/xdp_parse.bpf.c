/* xdp_parse: direct packet access with bounds checks: Ethernet, then IPv4; returns
 * XDP_PASS (2) for IPv4 frames whose protocol byte is 0, XDP_DROP (1) otherwise. */
#include "bpfrt_progs.h"

struct eth {
	unsigned char dst[6], src[6];
	unsigned short proto;
};

struct ip4 {
	unsigned char vhl, tos;
	unsigned short len, id, frag;
	unsigned char ttl, proto;
	unsigned short csum;
	unsigned int saddr, daddr;
};

SEC("xdp")
int parse(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct eth *e = data;
	struct ip4 *ip;

	if ((void *)(e + 1) > end)
		return XDP_ABORTED;
	if (e->proto != __builtin_bswap16(0x0800))
		return XDP_DROP;
	ip = (void *)(e + 1);
	if ((void *)(ip + 1) > end)
		return XDP_DROP;
	return ip->proto == 0 ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
