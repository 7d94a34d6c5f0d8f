/* pktgen.h - deterministic synthetic traffic for the packet-filter tests and benchmarks:
 * Ethernet frames carrying IPv4/IPv6 TCP, UDP, ICMP, ARP, 802.1Q tags, IPv4 options and
 * fragments, over a few hosts, nets and ports, in many sizes, some captured short.  Writes
 * classic pcap (through libpcap) or pcapng (by hand: libpcap only reads pcapng).
 * Header-only test support; include once per program.
 */
#ifndef BPFRT_TESTS_ATTACH_PKTGEN_H
#define BPFRT_TESTS_ATTACH_PKTGEN_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attach/pcap_io.h"

#define PKTGEN_MAX 1600
#define PKTGEN_DLT_EN10MB 1
#define PKTGEN_DLT_RAW 12 /* DLT_RAW as libpcap spells it on Linux (LINKTYPE_RAW 101 in files) */

struct pktgen {
	uint64_t seed;
	uint64_t n;          /* packets made so far */
	uint8_t buf[PKTGEN_MAX];
};

static uint32_t pg_rand(struct pktgen *g)
{
	/* xorshift64*: fixed sequence for a given seed, on every platform */
	g->seed ^= g->seed >> 12;
	g->seed ^= g->seed << 25;
	g->seed ^= g->seed >> 27;
	return (uint32_t)((g->seed * 0x2545F4914F6CDD1Dull) >> 32);
}

static uint32_t pg_pick(struct pktgen *g, const uint32_t *set, size_t n)
{
	return set[pg_rand(g) % n];
}

static void pg_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void pg_put32(uint8_t *p, uint32_t v)
{
	pg_put16(p, v >> 16);
	pg_put16(p + 2, v & 0xffff);
}

static const uint32_t pg_hosts4[] = {
	0x0a000001, 0x0a000002, 0x0a000003, 0x0a0000fe, 0xc0a80101, 0xc0a80164, 0xac100005,
	0x08080808, 0x01010101, 0xe0000001 /* multicast */, 0xffffffff /* broadcast */,
};
static const uint32_t pg_ports[] = {
	22, 53, 80, 443, 123, 8080, 8443, 1023, 1024, 3000, 5353, 6000, 6010, 40000, 65535,
};

/* L4 header + payload at p (room bytes), returns its length. */
static size_t pg_l4(struct pktgen *g, uint8_t *p, uint8_t proto, size_t payload, int v6)
{
	size_t hl;

	switch (proto) {
	case 6: { /* TCP with 0 or 12 bytes of options */
		static const uint32_t flags[] = { 0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x14, 0x01,
						  0x29, 0xc2 };
		hl = pg_rand(g) % 3 ? 20 : 32;
		memset(p, 0, hl);
		pg_put16(p, pg_rand(g) % 2 ? pg_pick(g, pg_ports, 15) : 1024 + pg_rand(g) % 60000);
		pg_put16(p + 2, pg_pick(g, pg_ports, 15));
		pg_put32(p + 4, pg_rand(g));
		pg_put32(p + 8, pg_rand(g));
		p[12] = (uint8_t)((hl / 4) << 4);
		p[13] = (uint8_t)pg_pick(g, flags, 10);
		pg_put16(p + 14, 65535);
		break;
	}
	case 17: /* UDP */
		hl = 8;
		pg_put16(p, pg_pick(g, pg_ports, 15));
		pg_put16(p + 2, pg_rand(g) % 4 ? pg_pick(g, pg_ports, 15) : pg_rand(g) & 0xffff);
		pg_put16(p + 4, (uint32_t)(8 + payload));
		pg_put16(p + 6, 0);
		break;
	default: /* ICMP / ICMPv6: echo request/reply, unreachable */
		hl = 8;
		memset(p, 0, 8);
		p[0] = v6 ? (uint8_t)(pg_rand(g) % 2 ? 128 : 129)
			  : (uint8_t)(pg_rand(g) % 3 == 0 ? 3 : pg_rand(g) % 2 ? 8 : 0);
		break;
	}
	for (size_t i = 0; i < payload; i++)
		p[hl + i] = (uint8_t)(g->n + i);
	return hl + payload;
}

/* IPv4 (options, fragments) or IPv6 at p; returns its length. */
static size_t pg_ip(struct pktgen *g, uint8_t *p, size_t payload)
{
	static const uint8_t protos[] = { 6, 6, 6, 17, 17, 1, 47 };
	uint8_t proto = protos[pg_rand(g) % 7];
	uint32_t r = pg_rand(g);

	if (r % 5 == 0) { /* IPv6 */
		if (proto == 1)
			proto = 58;
		memset(p, 0, 40);
		p[0] = 0x60;
		p[6] = proto;
		p[7] = 64;
		p[8] = 0x20;
		p[9] = 0x01;
		p[10] = 0x0d;
		p[11] = 0xb8;
		p[23] = (uint8_t)(1 + pg_rand(g) % 4);
		memcpy(p + 24, p + 8, 16);
		p[39] = (uint8_t)(1 + pg_rand(g) % 4);
		if (pg_rand(g) % 8 == 0) { /* link-local */
			p[8] = 0xfe;
			p[9] = 0x80;
			p[10] = p[11] = 0;
		}
		size_t l4 = pg_l4(g, p + 40, proto, payload, 1);
		pg_put16(p + 4, (uint32_t)l4);
		return 40 + l4;
	}
	size_t ihl = r % 7 == 0 ? 24 : 20;
	uint32_t frag = 0;
	switch ((r >> 8) % 10) {
	case 0:
		frag = 0x2000; /* first fragment: MF, offset 0 */
		break;
	case 1:
		frag = 0x2000 | (1 + pg_rand(g) % 100); /* middle */
		break;
	case 2:
		frag = 1 + pg_rand(g) % 100; /* last */
		break;
	case 3:
		frag = 0x4000; /* DF */
		break;
	}
	memset(p, 0, ihl);
	p[0] = (uint8_t)(0x40 | ihl / 4);
	if (ihl > 20)
		p[20] = 1; /* NOP options */
	pg_put16(p + 4, (uint32_t)(g->n & 0xffff));
	pg_put16(p + 6, frag);
	p[8] = (uint8_t)(1 + pg_rand(g) % 128);
	p[9] = proto;
	pg_put32(p + 12, pg_pick(g, pg_hosts4, 9));
	pg_put32(p + 16, pg_pick(g, pg_hosts4, 11));
	size_t l4;
	if (frag & 0x1fff) { /* non-first fragment: no L4 header, just bytes */
		l4 = payload + 8;
		for (size_t i = 0; i < l4; i++)
			p[ihl + i] = (uint8_t)(0x50 + i);
	} else {
		l4 = pg_l4(g, p + ihl, proto, payload, 0);
	}
	pg_put16(p + 2, (uint32_t)(ihl + l4));
	return ihl + l4;
}

/* The next packet: Ethernet (or raw IP when raw), returns its wire length; *caplen is
 * shorter than it for about 1 packet in 12 (a 68- or 96-byte snap). */
static size_t pktgen_next(struct pktgen *g, int raw, size_t *caplen)
{
	static const uint32_t sizes[] = { 0, 0, 1, 6, 10, 18, 40, 64, 100, 200, 300, 512, 900, 1400 };
	uint8_t *p = g->buf;
	size_t len, payload = pg_pick(g, sizes, 14) + pg_rand(g) % 4;
	uint32_t r = pg_rand(g);

	g->n++;
	if (raw) {
		len = pg_ip(g, p, payload);
	} else {
		static const uint8_t macs[3][6] = {
			{ 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 },
			{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },
			{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		};
		size_t l2 = 14;

		memcpy(p, macs[r % 3], 6);
		memcpy(p + 6, macs[(r >> 2) % 2], 6);
		if (r % 6 == 0) { /* 802.1Q, sometimes stacked */
			pg_put16(p + 12, 0x8100);
			pg_put16(p + 14, (r >> 4) % 3 ? (r >> 4) % 3 * 100 : 1);
			l2 = 18;
			if ((r >> 10) % 4 == 0) {
				pg_put16(p + 16, 0x8100);
				pg_put16(p + 18, 7);
				l2 = 22;
			}
		}
		if ((r >> 12) % 16 == 0) { /* ARP request */
			pg_put16(p + l2 - 2, 0x0806);
			memset(p + l2, 0, 28);
			pg_put16(p + l2, 1);
			pg_put16(p + l2 + 2, 0x0800);
			p[l2 + 4] = 6;
			p[l2 + 5] = 4;
			pg_put16(p + l2 + 6, 1);
			pg_put32(p + l2 + 14, pg_pick(g, pg_hosts4, 9));
			pg_put32(p + l2 + 24, pg_pick(g, pg_hosts4, 9));
			len = l2 + 28;
		} else {
			size_t ip = pg_ip(g, p + l2, payload);

			pg_put16(p + l2 - 2, (p[l2] >> 4) == 6 ? 0x86dd : 0x0800);
			len = l2 + ip;
		}
	}
	*caplen = len;
	if ((r >> 16) % 12 == 0)
		*caplen = len < 68 ? len : (r >> 20) % 2 ? 68 : len < 96 ? len : 96;
	return len;
}

/* Write n packets to a pcap file; returns 0 or -errno with a message in err. */
static int pktgen_write_pcap(const char *path, uint64_t seed, size_t n, int raw, char *err,
			     size_t errlen)
{
	struct pktgen g = { .seed = seed };
	struct brt_pcap_writer *w;
	int ret = brt_pcap_writer_open(path, raw ? PKTGEN_DLT_RAW : PKTGEN_DLT_EN10MB, 65535, &w,
				       err, errlen);

	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		size_t caplen, len = pktgen_next(&g, raw, &caplen);
		struct brt_pkt pkt = { g.buf, (uint32_t)caplen, (uint32_t)len,
				       1700000000 + (int64_t)i / 1000, (int64_t)(i % 1000) * 1000 };

		brt_pcap_write(w, &pkt);
	}
	return brt_pcap_writer_close(w);
}

static void pg_le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	fwrite(b, 1, 4, f);
}

/* Write n Ethernet packets as pcapng: section header, one interface, enhanced packet
 * blocks (little-endian, microsecond timestamps). */
static int pktgen_write_pcapng(const char *path, uint64_t seed, size_t n)
{
	struct pktgen g = { .seed = seed };
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	pg_le32(f, 0x0a0d0d0a); /* SHB */
	pg_le32(f, 28);
	pg_le32(f, 0x1a2b3c4d);
	pg_le32(f, 1); /* version 1.0 */
	pg_le32(f, 0xffffffff);
	pg_le32(f, 0xffffffff); /* section length unknown */
	pg_le32(f, 28);
	pg_le32(f, 1); /* IDB */
	pg_le32(f, 20);
	pg_le32(f, PKTGEN_DLT_EN10MB); /* linktype, reserved */
	pg_le32(f, 65535);
	pg_le32(f, 20);
	for (size_t i = 0; i < n; i++) {
		size_t caplen, len = pktgen_next(&g, 0, &caplen);
		size_t pad = (4 - caplen % 4) % 4;
		uint64_t ts = (uint64_t)(1700000000 + i) * 1000000;

		pg_le32(f, 6); /* EPB */
		pg_le32(f, (uint32_t)(32 + caplen + pad));
		pg_le32(f, 0);
		pg_le32(f, (uint32_t)(ts >> 32));
		pg_le32(f, (uint32_t)ts);
		pg_le32(f, (uint32_t)caplen);
		pg_le32(f, (uint32_t)len);
		fwrite(g.buf, 1, caplen, f);
		fwrite("\0\0\0", 1, pad, f);
		pg_le32(f, (uint32_t)(32 + caplen + pad));
	}
	return fclose(f) ? -1 : 0;
}

#endif
