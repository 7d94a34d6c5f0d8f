/* traffic.h - real packets on lo for the samples' tests: UDP datagrams to a bound port and
 * to a closed one, TCP connections carrying a message, ICMP echo requests through a raw
 * socket.  Each returns the packets it is sure went out (0 when the kernel refused).
 */
#ifndef BPFRT_TESTS_SAMPLES_TRAFFIC_H
#define BPFRT_TESTS_SAMPLES_TRAFFIC_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in tr_addr(uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* n datagrams to 127.0.0.1: to a socket of ours (open = 1) or to a port nobody has bound
 * (open = 0: the kernel answers each with an ICMP port unreachable). */
static int tr_udp(int n, int open)
{
	struct sockaddr_in a = tr_addr(0);
	socklen_t len = sizeof(a);
	int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0), sent = 0;

	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &len))
		goto out;
	if (!open) {
		close(rx); /* the port it had is now closed */
		rx = -1;
	}
	for (int i = 0; i < n; i++)
		sent += sendto(tx, "bpfrt", 5, 0, (struct sockaddr *)&a, sizeof(a)) == 5;
out:
	if (rx >= 0)
		close(rx);
	if (tx >= 0)
		close(tx);
	return sent;
}

/* n TCP connections to a listener on 127.0.0.1, each sending a message: every one is at
 * least 3 packets (SYN, SYN-ACK, ACK); returns 3 per connection made. */
static int tr_tcp(int n)
{
	struct sockaddr_in a = tr_addr(0);
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), made = 0;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, n) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		goto out;
	for (int i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s;
		char buf[8];

		if (c < 0)
			continue;
		if (!connect(c, (struct sockaddr *)&a, sizeof(a)) && (s = accept(l, NULL, NULL)) >= 0) {
			made += write(c, "bpfrt", 5) == 5 && read(s, buf, sizeof(buf)) > 0;
			close(s);
		}
		close(c);
	}
out:
	if (l >= 0)
		close(l);
	return 3 * made;
}

static uint16_t tr_csum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* n ICMP echo requests to 127.0.0.1 through a raw socket (root); each brings an echo
 * reply, which is not counted here. */
static int tr_icmp(int n)
{
	struct sockaddr_in a = tr_addr(0);
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), sent = 0;

	if (fd < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		struct icmphdr h;

		memset(&h, 0, sizeof(h));
		h.type = ICMP_ECHO;
		h.un.echo.id = htons((uint16_t)getpid());
		h.un.echo.sequence = htons((uint16_t)i);
		h.checksum = tr_csum(&h, sizeof(h));
		sent += sendto(fd, &h, sizeof(h), 0, (struct sockaddr *)&a, sizeof(a)) ==
			(ssize_t)sizeof(h);
	}
	close(fd);
	return sent;
}

#endif
