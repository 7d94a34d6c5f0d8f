/* perf_output.c - user side of the perf-output sample: load perf_output.bpf.o, attach its
 * socket filter to an interface (lo by default), put a perf output ring per CPU into its
 * perf event array (bpfrt_perf_buffer_new, as libbpf's perf_buffer__new) and print one
 * line per packet from the header and packet bytes each sample carries, sleeping in
 * epoll between samples, until Ctrl-C, -n events or -t seconds.
 *
 *   perf_output [-i IFACE] [-n EVENTS] [-t SECONDS] [-o OBJECT]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

#include "sample_attach.h"

struct event {
	unsigned long long ts_ns;
	unsigned int len;
	unsigned int snap;
};

struct consumer {
	unsigned long long seen, max, lost;
	unsigned long long first_ns;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* A sample: struct event, then e->snap packet bytes from the Ethernet header on. */
static void on_sample(void *ctx, int cpu, void *data, uint32_t size)
{
	struct consumer *c = ctx;
	const unsigned char *pkt = (const unsigned char *)data + sizeof(struct event);
	const unsigned char *ip = pkt + 14;
	struct event ev, *e = &ev;
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
	unsigned sport = 0, dport = 0;
	const char *proto;

	if (size < sizeof(*e))
		return;
	/* raw data follows a u32 size in the record: 4-byte aligned, as in the kernel */
	memcpy(e, data, sizeof(*e));
	if (e->snap < 34 || size < sizeof(*e) + e->snap ||
	    (c->max && c->seen >= c->max))
		return;
	if (!c->first_ns)
		c->first_ns = e->ts_ns;
	proto = ip[9] == 6 ? "TCP" : ip[9] == 17 ? "UDP" : ip[9] == 1 ? "ICMP" : "IP";
	if ((ip[9] == 6 || ip[9] == 17) && (ip[0] & 0xf) == 5 && e->snap >= 38) {
		sport = (unsigned)ip[20] << 8 | ip[21];
		dport = (unsigned)ip[22] << 8 | ip[23];
	}
	inet_ntop(AF_INET, ip + 12, s, sizeof(s));
	inet_ntop(AF_INET, ip + 16, d, sizeof(d));
	printf("%10.6f %-4s %s:%u -> %s:%u len %u cpu %d\n",
	       (double)(e->ts_ns - c->first_ns) / 1e9, proto, s, sport, d, dport, e->len, cpu);
	c->seen++;
}

static void on_lost(void *ctx, int cpu, uint64_t cnt)
{
	struct consumer *c = ctx;

	c->lost += cnt;
	printf("cpu %d: %llu events lost\n", cpu, (unsigned long long)cnt);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *iface = "lo", *obj_path = NULL;
	struct sample smp = { .name = "perf_output" };
	struct consumer cons = { 0 };
	struct bpfrt_perf_buffer *pb;
	double deadline = 0;
	int c;

	while ((c = getopt(argc, argv, "i:n:t:o:h")) != -1) {
		switch (c) {
		case 'i':
			iface = optarg;
			break;
		case 'n':
			cons.max = strtoull(optarg, NULL, 10);
			break;
		case 't':
			deadline = now() + strtod(optarg, NULL);
			break;
		case 'o':
			obj_path = optarg;
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: perf_output [-i IFACE] [-n EVENTS] [-t SECONDS]"
				" [-o OBJECT]\n"
				"Print one line per IPv4 packet of IFACE (default lo), from the\n"
				"samples a socket filter sends with bpf_perf_event_output().\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (sample_attach(&smp, obj_path, "packet_heads", "events", iface))
		return 1;
	pb = bpfrt_perf_buffer_new(bpfrt_map__fd(smp.map), 8, on_sample, on_lost, &cons, NULL);
	if (!pb) {
		fprintf(stderr, "perf_output: perf buffer: %s\n", strerror(errno));
		sample_detach(&smp);
		return 1;
	}
	printf("attached to %s: one line per IPv4 packet\n", iface);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop && (!cons.max || cons.seen < cons.max)) {
		double left = deadline ? deadline - now() : 1.0;
		int n;

		if (left <= 0)
			break;
		n = bpfrt_perf_buffer_poll(pb, (int)(left * 1000) + 1);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "perf_output: poll: %s\n", strerror(-n));
			break;
		}
		fflush(stdout);
	}
	fflush(stdout);
	fprintf(stderr, "%llu events\n%llu lost\n", cons.seen, cons.lost);
	bpfrt_perf_buffer_free(pb);
	sample_detach(&smp);
	return 0;
}
