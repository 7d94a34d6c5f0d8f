/* tcpdump.c - a tcpdump-like filter on libbpfrt: a tcpdump expression is compiled to
 * classic BPF (libpcap inside bpfrt_pkt_filter_compile()), converted to an eBPF socket
 * filter, verified and JIT-compiled; every packet of a pcap file or of a live interface
 * that it accepts gets one summary line, as `tcpdump -nn -tt -q` would print it:
 *
 *   1700000000.000123 IP 10.0.0.1.443 > 10.0.0.2.51000: tcp 1448
 *
 *   tcpdump [-r FILE | -i IFACE] [-c COUNT] [-e interp|jit] EXPRESSION...
 *
 * The capture is read here (classic pcap files; AF_PACKET recvfrom() live), so the sample
 * needs nothing but <bpfrt.h>.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <bpfrt.h>

#define SNAP 65535

struct src {
	FILE *file;
	int swapped;        /* file written with the other byte order */
	int nsec;           /* nanosecond timestamps */
	int linktype;
	int sock;           /* live: AF_PACKET socket, else -1 */
	uint8_t buf[SNAP];
};

struct pkt {
	const uint8_t *data;
	uint32_t caplen, wirelen;
	uint64_t sec, usec;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint32_t rd32(const struct src *s, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return s->swapped ? __builtin_bswap32(v) : v;
}

static int open_file(struct src *s, const char *path)
{
	uint8_t h[24];
	uint32_t magic;

	s->file = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!s->file) {
		fprintf(stderr, "tcpdump: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fread(h, 1, sizeof(h), s->file) != sizeof(h)) {
		fprintf(stderr, "tcpdump: %s: not a pcap file (too short)\n", path);
		return -1;
	}
	memcpy(&magic, h, 4);
	s->swapped = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
	magic = rd32(s, h);
	if (magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
		fprintf(stderr, "tcpdump: %s: not a classic pcap file (magic %08x)\n", path, magic);
		return -1;
	}
	s->nsec = magic == 0xa1b23c4d;
	s->linktype = (int)(rd32(s, h + 20) & 0xffff);
	return 0;
}

static int open_live(struct src *s, const char *iface)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct timeval tick = { .tv_usec = 200000 };

	sll.sll_ifindex = (int)if_nametoindex(iface);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "tcpdump: %s: no such interface\n", iface);
		return -1;
	}
	s->sock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	/* wake up now and then to see Ctrl-C: signal() restarts recvfrom() */
	if (s->sock < 0 || setsockopt(s->sock, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof(tick)) ||
	    bind(s->sock, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "tcpdump: %s: %s\n", iface, strerror(errno));
		return -1;
	}
	s->linktype = 1;
	return 0;
}

/* 1 with *p set, 0 at the end, -1 on a corrupt file. */
static int next(struct src *s, struct pkt *p)
{
	uint8_t h[16];

	if (s->sock >= 0) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		struct timeval tv;
		ssize_t n;

		do {
			if (stop)
				return 0;
			fl = sizeof(from);
			n = recvfrom(s->sock, s->buf, sizeof(s->buf), MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);
			/* lo: each packet shows up sent and received; keep one */
		} while ((n < 0 && (errno == EINTR || errno == EAGAIN)) ||
			 (n >= 0 && from.sll_pkttype == PACKET_OUTGOING && from.sll_hatype == 772));
		if (n < 0)
			return stop ? 0 : -1;
		gettimeofday(&tv, NULL);
		p->data = s->buf;
		p->wirelen = (uint32_t)n;
		p->caplen = (uint32_t)n < SNAP ? (uint32_t)n : SNAP;
		p->sec = (uint64_t)tv.tv_sec;
		p->usec = (uint64_t)tv.tv_usec;
		return 1;
	}
	if (stop || fread(h, 1, sizeof(h), s->file) != sizeof(h))
		return 0;
	p->sec = rd32(s, h);
	p->usec = rd32(s, h + 4) / (s->nsec ? 1000 : 1);
	p->caplen = rd32(s, h + 8);
	p->wirelen = rd32(s, h + 12);
	if (p->caplen > SNAP || fread(s->buf, 1, p->caplen, s->file) != p->caplen)
		return -1;
	p->data = s->buf;
	return 1;
}

/* "SRC.PORT > DST.PORT: tcp N" or ": UDP, length N" with the payload length, as tcpdump -q
 * prints it; other protocols by number.  l4len: bytes of the layer-4 header and payload. */
static void print_l4(const char *a, const char *b, int proto, const uint8_t *l4,
		     const uint8_t *end, long l4len, uint32_t wirelen)
{
	if ((proto == 6 || proto == 17) && l4 + 4 <= end) {
		unsigned sp = (unsigned)(l4[0] << 8 | l4[1]), dp = (unsigned)(l4[2] << 8 | l4[3]);

		if (proto == 6) {
			if (l4 + 20 > end) /* header cut by the snap length */
				printf("%s.%u > %s.%u:  [|tcp]\n", a, sp, b, dp);
			else
				printf("%s.%u > %s.%u: tcp %ld\n", a, sp, b, dp,
				       l4len - (l4[12] >> 4) * 4);
			return;
		}
		if (proto == 17 && l4 + 6 <= end) {
			printf("%s.%u > %s.%u: UDP, length %d\n", a, sp, b, dp,
			       (l4[4] << 8 | l4[5]) - 8);
			return;
		}
	}
	printf("%s > %s: ip-proto-%d %u\n", a, b, proto, wirelen);
}

/* One line: timestamp, then what the headers say (IPv4/IPv6 TCP/UDP, ARP, others). */
static void summary(const struct pkt *p, int linktype)
{
	const uint8_t *d = p->data, *end = p->data + p->caplen;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	unsigned type = 0x0800;

	printf("%" PRIu64 ".%06" PRIu64 " ", p->sec, p->usec);
	if (linktype == 1) {
		if (d + 14 > end)
			goto raw;
		type = (unsigned)(d[12] << 8 | d[13]);
		d += 14;
		while (type == 0x8100 && d + 4 <= end) {
			type = (unsigned)(d[2] << 8 | d[3]);
			d += 4;
		}
	} else if (d < end && (d[0] >> 4) == 6) {
		type = 0x86dd;
	}
	if (type == 0x0800 && d + 20 <= end && (d[0] >> 4) == 4) {
		int hl = (d[0] & 0xf) * 4;

		inet_ntop(AF_INET, d + 12, a, sizeof(a));
		inet_ntop(AF_INET, d + 16, b, sizeof(b));
		printf("IP ");
		if (((d[6] & 0x1f) << 8 | d[7]) != 0) { /* a later fragment: no ports */
			printf("%s > %s: ip-proto-%d\n", a, b, d[9]);
			return;
		}
		print_l4(a, b, d[9], d + hl, end, (long)(d[2] << 8 | d[3]) - hl, p->wirelen);
	} else if (type == 0x86dd && d + 40 <= end) {
		inet_ntop(AF_INET6, d + 8, a, sizeof(a));
		inet_ntop(AF_INET6, d + 24, b, sizeof(b));
		printf("IP6 ");
		print_l4(a, b, d[6], d + 40, end, (long)(d[4] << 8 | d[5]), p->wirelen);
	} else if (type == 0x0806) {
		printf("ARP, length %u\n", p->wirelen);
	} else {
raw:
		printf("ethertype 0x%04x, length %u\n", type, p->wirelen);
	}
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: tcpdump [-r FILE | -i IFACE] [-c COUNT] [-e interp|jit] EXPRESSION...\n"
		     "Print a summary line for each packet of FILE (classic pcap, - = stdin) or\n"
		     "of live traffic on IFACE that the tcpdump EXPRESSION accepts; the filter\n"
		     "runs as eBPF in libbpfrt (JIT by default).\n");
}

int main(int argc, char **argv)
{
	enum bpfrt_engine engine = BPFRT_ENGINE_JIT;
	const char *file = NULL, *iface = NULL;
	struct src s = { .sock = -1 };
	struct bpfrt_pkt_filter *f;
	char expr[4096] = "", err[512];
	unsigned long long count = 0, max = 0;
	struct pkt p;
	int c, ret;

	while ((c = getopt(argc, argv, "r:i:c:e:h")) != -1) {
		switch (c) {
		case 'r':
			file = optarg;
			break;
		case 'i':
			iface = optarg;
			break;
		case 'c':
			max = strtoull(optarg, NULL, 10);
			break;
		case 'e':
			engine = strcmp(optarg, "interp") ? BPFRT_ENGINE_JIT : BPFRT_ENGINE_INTERP;
			break;
		default:
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (!file == !iface) {
		usage(stderr);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		strncat(expr, argv[i], sizeof(expr) - strlen(expr) - 2);
		strcat(expr, " ");
	}
	if (file ? open_file(&s, file) : open_live(&s, iface))
		return 1;
	BPFRT_OPTS(bpfrt_pkt_filter_opts, fo, .engine = engine);
	ret = bpfrt_pkt_filter_compile(expr, s.linktype, SNAP, &fo, &f, err, sizeof(err));
	if (ret == -EOPNOTSUPP && engine == BPFRT_ENGINE_JIT) { /* built without the JIT */
		fo.engine = BPFRT_ENGINE_INTERP;
		ret = bpfrt_pkt_filter_compile(expr, s.linktype, SNAP, &fo, &f, err, sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "tcpdump: %s\n", err);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while ((!max || count < max) && (ret = next(&s, &p)) == 1) {
		uint32_t verdict;

		if (bpfrt_pkt_filter_run(f, p.data, p.caplen, p.wirelen, &verdict, err,
					 sizeof(err))) {
			fprintf(stderr, "tcpdump: %s\n", err);
			break;
		}
		if (verdict) {
			summary(&p, s.linktype);
			count++;
		}
	}
	fflush(stdout);
	if (ret < 0)
		fprintf(stderr, "tcpdump: %s: truncated or corrupt capture\n", file ? file : iface);
	fprintf(stderr, "%llu packets captured\n", count);
	bpfrt_pkt_filter_free(f);
	if (s.file && s.file != stdin)
		fclose(s.file);
	if (s.sock >= 0)
		close(s.sock);
	return ret < 0;
}
