/* flow.h - the flow-dissector workload: Ethernet (at most one 802.1Q/802.1ad tag), then
 * IPv4 (options skipped by IHL; a fragment has no ports) or IPv6 (up to three extension
 * headers: hop-by-hop, routing, destination options, fragment), then TCP/UDP/SCTP ports.
 * The tuple is folded into a 32-bit hash; 0 means "not parsed".  Bounds are checked
 * against an end pointer, the way the kernel verifier wants them for XDP.
 */
#ifndef BPFRT_BENCH_FLOW_H
#define BPFRT_BENCH_FLOW_H

#include "progs.h"

struct bench_flow {
	uint32_t saddr[4];
	uint32_t daddr[4];
	uint32_t ports; /* source port in the low half, as loaded */
	uint32_t proto; /* l3 version << 8 | l4 protocol */
};

/* Each `return 1` is "packet too short or not understood". */
BENCH_INLINE int bench_parse(const uint8_t *pkt, const uint8_t *end, struct bench_flow *f)
{
	const uint8_t *p = pkt + 14;
	uint16_t type;
	uint8_t l4;

	if (p > end)
		return 1;
	type = BENCH_LD16(pkt + 12);
	if (type == BENCH_NET16(0x8100) || type == BENCH_NET16(0x88a8)) {
		if (p + 4 > end)
			return 1;
		type = BENCH_LD16(p + 2);
		p += 4;
	}
	if (type == BENCH_NET16(0x0800)) {
		uint32_t hlen;

		if (p + 20 > end)
			return 1;
		hlen = (uint32_t)(p[0] & 15) * 4;
		if ((p[0] >> 4) != 4 || hlen < 20)
			return 1;
		l4 = p[9];
		f->proto = 4 << 8 | l4;
		f->saddr[0] = BENCH_LD32(p + 12);
		f->daddr[0] = BENCH_LD32(p + 16);
		if (BENCH_LD16(p + 6) & BENCH_NET16(0x3fff)) /* MF or offset: a fragment */
			return 0;
		p += hlen;
	} else if (type == BENCH_NET16(0x86dd)) {
		if (p + 40 > end || (p[0] >> 4) != 6)
			return 1;
		l4 = p[6];
		for (int i = 0; i < 4; i++) {
			f->saddr[i] = BENCH_LD32(p + 8 + 4 * i);
			f->daddr[i] = BENCH_LD32(p + 24 + 4 * i);
		}
		p += 40;
#pragma GCC unroll 3
		for (int i = 0; i < 3; i++) {
			if (l4 != 0 && l4 != 43 && l4 != 60 && l4 != 44)
				break;
			if (p + 8 > end)
				return 1;
			if (l4 == 44) {
				l4 = p[0];
				if (BENCH_LD16(p + 2) & BENCH_NET16(0xfff8)) { /* not the first */
					f->proto = 6 << 8 | l4;
					return 0;
				}
				p += 8;
			} else {
				l4 = p[0];
				p += ((uint32_t)p[1] + 1) * 8;
			}
		}
		f->proto = 6 << 8 | l4;
	} else {
		return 1;
	}
	if (l4 == 6 || l4 == 17 || l4 == 132) {
		if (p + 4 > end)
			return 1;
		f->ports = BENCH_LD32(p);
	}
	return 0;
}

BENCH_INLINE uint32_t bench_flow_hash(const struct bench_flow *f)
{
	uint64_t h = 0x6a09e667f3bcc908ull ^ f->proto;

#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		h = (h ^ f->saddr[i]) * 0x9e3779b97f4a7c15ull;
		h = (h ^ f->daddr[i]) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h = (h ^ f->ports) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	return (uint32_t)h | 1; /* never 0: 0 is "not parsed" */
}

BENCH_INLINE uint32_t bench_flow(const uint8_t *pkt, const uint8_t *end)
{
	struct bench_flow f = { { 0 }, { 0 }, 0, 0 };

	if (bench_parse(pkt, end, &f))
		return 0;
	return bench_flow_hash(&f);
}

#endif
