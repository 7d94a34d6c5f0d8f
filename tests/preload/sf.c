/* sf.c - an ordinary libbpf application (skeleton, system libbpf) putting a socket filter
 * on a UDP socket with SO_ATTACH_BPF, run once on the kernel and once under `bpfrt
 * exec`: both print the same.  Five datagrams are sent to the socket; the filter drops
 * the one starting with 'x' and trims the one starting with 't' to 4 bytes; they are
 * read with recv, recvfrom, recvmsg and read.  After SO_DETACH_BPF nothing is filtered.
 *   sf --packet: the filter on a packet socket (SOCK_DGRAM, ETH_P_IP, bound to lo) keeps
 *   the UDP datagrams to the port (both of loopback's copies), trimmed to 32 bytes, and
 *   drops the rest. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sf.skel.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("APP_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static unsigned long long get(struct sf *skel, unsigned k)
{
	unsigned long long v = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, &v);
	return v;
}

static void show(const char *how, ssize_t n, const char *buf)
{
	if (n < 0)
		printf("%s: %s\n", how, strerror(errno));
	else
		printf("%s: %zd bytes \"%.*s\"\n", how, n, (int)n, buf);
}

/* sf --packet */
static int packet(struct sf *skel, struct sockaddr_in *to)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
				   .sll_ifindex = (int)if_nametoindex("lo") };
	struct timeval tv = { 0, 300000 };
	struct sockaddr_in other = *to;
	int ps = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP)), tx, pfd, err;
	char buf[2048];
	ssize_t n;

	if (ps < 0 || bind(ps, (struct sockaddr *)&sll, sizeof(sll)))
		return printf("packet socket: %s\n", strerror(errno)), 1;
	pfd = bpf_program__fd(skel->progs.ip_filter);
	err = setsockopt(ps, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof(pfd));
	printf("SO_ATTACH_BPF on a packet socket: %s\n", err ? strerror(errno) : "ok");
	setsockopt(ps, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	other.sin_port = htons((uint16_t)(ntohs(to->sin_port) ^ 1));
	for (int i = 0; i < 3; i++) {
		sendto(tx, "to-the-port", 11, 0, (struct sockaddr *)to, sizeof(*to));
		sendto(tx, "elsewhere", 9, 0, (struct sockaddr *)&other, sizeof(other));
	}
	for (;;) {
		socklen_t len = sizeof(sll);
		uint16_t dport = 0;

		n = recvfrom(ps, buf, sizeof(buf), 0, (struct sockaddr *)&sll, &len);
		if (n < 0)
			break;
		if (n >= 24)
			memcpy(&dport, buf + 22, 2);
		printf("packet: %zd bytes, %s, to the port: %s\n", n,
		       sll.sll_pkttype == PACKET_OUTGOING ? "outgoing" : "received",
		       dport == to->sin_port ? "yes" : "no");
	}
	printf("then: %s\n", strerror(errno));
	sf__destroy(skel);
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const msgs[] = { "a-one", "x-drop", "b-two", "t-trimmed", "c-three" };
	struct sockaddr_in to, from;
	struct timeval tv = { 1, 0 };
	socklen_t len = sizeof(to);
	int rx, tx, pfd, err;
	struct sf *skel;
	char buf[64];
	ssize_t n;

	libbpf_set_print(silent);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(rx, (struct sockaddr *)&to, sizeof(to)) || getsockname(rx, (void *)&to, &len))
		return printf("bind: %s\n", strerror(errno)), 1;
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	skel = sf__open();
	if (!skel)
		return printf("open: %d\n", -errno), 1;
	skel->rodata->port = ntohs(to.sin_port);
	err = sf__load(skel);
	printf("load: %d\n", err);
	if (err)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "--packet"))
		return packet(skel, &to);
	pfd = bpf_program__fd(skel->progs.udp_filter);
	err = setsockopt(rx, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof(pfd));
	printf("SO_ATTACH_BPF: %s\n", err ? strerror(errno) : "ok");
	for (int i = 0; i < 5; i++)
		sendto(tx, msgs[i], strlen(msgs[i]), 0, (struct sockaddr *)&to, sizeof(to));
	n = recv(rx, buf, sizeof(buf), 0);
	show("recv", n, buf);
	len = sizeof(from);
	n = recvfrom(rx, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len);
	show("recvfrom", n, buf);
	printf("from 127.0.0.1: %s\n", from.sin_addr.s_addr == htonl(INADDR_LOOPBACK) ? "yes" : "no");
	{
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

		n = recvmsg(rx, &m, MSG_TRUNC);
		show("recvmsg", n, buf);
	}
	n = read(rx, buf, 3);
	show("read into 3 bytes", n, buf);
	n = recv(rx, buf, sizeof(buf), MSG_DONTWAIT);
	show("recv, none left", n, buf);
	printf("filter runs %llu, port seen %llu\n", get(skel, 0), get(skel, 1));
	err = setsockopt(rx, SOL_SOCKET, SO_DETACH_BPF, NULL, 0);
	printf("SO_DETACH_BPF without an int: %s\n", err ? strerror(errno) : "ok");
	err = setsockopt(rx, SOL_SOCKET, SO_DETACH_BPF, &pfd, sizeof(pfd));
	printf("SO_DETACH_BPF: %s\n", err ? strerror(errno) : "ok");
	sendto(tx, "x-after", 7, 0, (struct sockaddr *)&to, sizeof(to));
	n = recv(rx, buf, sizeof(buf), 0);
	show("recv after detach", n, buf);
	printf("filter runs %llu\n", get(skel, 0));
	sf__destroy(skel);
	printf("done\n");
	return 0;
}
