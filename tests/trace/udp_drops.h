/* udp_drops.h - packets the kernel drops on lo: UDP datagrams sent to a closed port of
 * 127.0.0.1 are freed with kfree_skb (reason NO_SOCKET) by the UDP receive path.
 */
#ifndef BPFRT_TESTS_TRACE_UDP_DROPS_H
#define BPFRT_TESTS_TRACE_UDP_DROPS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* A UDP port of 127.0.0.1 nobody listens on (bound once, then closed); 0 on failure. */
static inline uint16_t closed_udp_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	uint16_t port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s >= 0 && !bind(s, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(s, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

/* Send n one-byte datagrams to 127.0.0.1:port; returns how many were sent. */
static inline long send_udp_drops(uint16_t port, long n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	long sent = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (long i = 0; s >= 0 && i < n; i++)
		sent += sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1;
	if (s >= 0)
		close(s);
	return sent;
}

#endif
