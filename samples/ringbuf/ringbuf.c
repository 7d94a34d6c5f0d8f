/* ringbuf.c - user side of the event-stream sample: load ringbuf.bpf.o, attach its socket
 * filter to an interface (lo by default) and print one line per record its ring buffer
 * delivers, until Ctrl-C, -n events or -t seconds.  It sleeps in epoll_wait() on the
 * ring buffer's wake-up fd (bpfrt_ringbuf_poll_fd()), which a producer that finds the
 * consumer caught up makes readable, and consumes when woken.
 *
 *   ringbuf [-i IFACE] [-n EVENTS] [-t SECONDS] [-o OBJECT]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

#include "sample_attach.h"

struct event {
	unsigned long long ts_ns;
	unsigned int len;
	unsigned int saddr;
	unsigned int daddr;
	unsigned short sport;
	unsigned short dport;
	unsigned char proto;
	unsigned char pad[7];
};

struct consumer {
	unsigned long long seen, max;
	unsigned long long first_ns;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_event(void *arg, void *data, size_t size)
{
	struct consumer *c = arg;
	const struct event *e = data;
	char s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
	const char *proto = e->proto == 6 ? "TCP" : e->proto == 17 ? "UDP" : e->proto == 1 ? "ICMP"
											  : "IP";

	if (size < sizeof(*e))
		return 0;
	if (!c->first_ns)
		c->first_ns = e->ts_ns;
	inet_ntop(AF_INET, &e->saddr, s, sizeof(s));
	inet_ntop(AF_INET, &e->daddr, d, sizeof(d));
	printf("%10.6f %-4s %s:%u -> %s:%u len %u\n", (double)(e->ts_ns - c->first_ns) / 1e9, proto,
	       s, ntohs(e->sport), d, ntohs(e->dport), e->len);
	c->seen++;
	return c->max && c->seen >= c->max; /* stop consuming at the limit */
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
	struct sample smp = { .name = "ringbuf" };
	struct consumer cons = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	double deadline = 0;
	int c, ep, wake_fd;

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
				"Usage: ringbuf [-i IFACE] [-n EVENTS] [-t SECONDS] [-o OBJECT]\n"
				"Print one line per IPv4 packet of IFACE (default lo), as records a\n"
				"socket filter sends through a BPF ring buffer.\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (sample_attach(&smp, obj_path, "packet_events", "events", iface))
		return 1;
	printf("attached to %s: one line per IPv4 packet\n", iface);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ep = epoll_create1(EPOLL_CLOEXEC);
	wake_fd = bpfrt_ringbuf_poll_fd(bpfrt_map__fd(smp.map));
	if (ep < 0 || wake_fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, wake_fd, &ev)) {
		fprintf(stderr, "ringbuf: epoll on the ring buffer: %s\n", strerror(errno));
		sample_detach(&smp);
		return 1;
	}
	while (!stop && (!cons.max || cons.seen < cons.max) && (!deadline || now() < deadline)) {
		/* consume first: records may have come before the wake-up fd existed */
		int n = bpfrt_ringbuf_consume(bpfrt_map__fd(smp.map), on_event, &cons);
		double left = deadline ? deadline - now() : 1.0;

		if (n < 0) {
			fprintf(stderr, "ringbuf: consume: %s\n", strerror(-n));
			break;
		}
		fflush(stdout);
		if (n == 0 && left > 0 && epoll_wait(ep, &ev, 1, (int)(left * 1000) + 1) < 0 &&
		    errno != EINTR) {
			fprintf(stderr, "ringbuf: epoll_wait: %s\n", strerror(errno));
			break;
		}
	}
	close(wake_fd);
	close(ep);
	fflush(stdout);
	fprintf(stderr, "%llu events\n", cons.seen);
	sample_detach(&smp);
	return 0;
}
