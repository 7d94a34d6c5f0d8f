/* test_socket.c - live capture through the TPACKET_V3 ring: UDP datagrams sent to
 * ourselves over the loopback interface come out of the ring once each, whole and in
 * order, and a compiled filter picks exactly them; unknown interfaces give a clear error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "attach/attach.h"
#include "bpfrt.h"
#include "harness.h"

#define NSEND 64

static void test_bad_iface(void)
{
	struct brt_live *l = NULL;
	char err[256] = "";

	T_CASE("unknown interface");
	T_EQ_INT(-ENODEV, brt_live_open("nope0", 0, &l, err, sizeof(err)));
	T_EQ_STR("iface 'nope0': no such interface: No such device", err);
	T_CASE("name too long");
	T_EQ_INT(-ENODEV, brt_live_open("a-name-longer-than-ifnamsiz", 0, &l, err, sizeof(err)));
	T_CONTAINS("no such interface", err);
}

static void test_loopback(void)
{
	uint16_t port = (uint16_t)(40000 + getpid() % 20000);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct bpfrt_pkt_filter *f = NULL;
	struct brt_live *l = NULL;
	char err[256] = "", expr[64];
	size_t seen = 0, in_order = 0, empty_polls = 0;
	int s, ret;

	T_CASE("loopback");
	ret = brt_live_open("lo", 2, &l, err, sizeof(err));
	if (ret == -EPERM || ret == -EACCES) {
		printf("note: live capture needs CAP_NET_RAW: %s\n", err);
		return;
	}
	T_EQ_INT(0, ret);
	if (ret) {
		T_FAIL("%s", err);
		return;
	}
	T_EQ_INT(1, brt_live_linktype(l));
	snprintf(expr, sizeof(expr), "udp dst port %u and ip dst 127.0.0.1", port);
	T_EQ_INT(0, bpfrt_pkt_filter_compile(expr, 1, 65535, NULL, &f, err, sizeof(err)));

	s = socket(AF_INET, SOCK_DGRAM, 0);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (uint32_t i = 0; i < NSEND; i++) {
		uint32_t payload[4] = { 0xb0f0b0f0, i, i * 3, ~i };

		T_EQ_INT(sizeof(payload), sendto(s, payload, sizeof(payload), 0,
						 (struct sockaddr *)&to, sizeof(to)));
	}
	close(s);
	/* other tests may talk over lo too: count only our datagrams */
	while (seen < NSEND && empty_polls < 20) {
		struct brt_pkt pkt;
		uint32_t verdict = 0, payload[4];

		ret = brt_live_next(l, &pkt, 100, err, sizeof(err));
		if (ret < 0) {
			T_FAIL("%s", err);
			break;
		}
		if (ret == 0) {
			empty_polls++;
			continue;
		}
		T_EQ_INT(0, bpfrt_pkt_filter_run(f, pkt.data, pkt.caplen, pkt.wirelen, &verdict, err,
						 sizeof(err)));
		if (!verdict)
			continue;
		T_EQ_INT(14 + 20 + 8 + 16, pkt.wirelen);
		T_EQ_INT(pkt.wirelen, pkt.caplen);
		memcpy(payload, pkt.data + 42, sizeof(payload));
		in_order += payload[0] == 0xb0f0b0f0 && payload[1] == seen &&
			    payload[3] == (uint32_t)~seen;
		seen++;
	}
	T_EQ_INT(NSEND, seen);
	T_EQ_INT(NSEND, in_order);
	{
		uint64_t packets = 0, drops = 0;

		T_EQ_INT(0, brt_live_stats(l, &packets, &drops));
		T_EQ_U64(0, drops);
		T_ASSERT(packets >= NSEND);
	}
	bpfrt_pkt_filter_free(f);
	brt_live_close(l);
}

int main(void)
{
	test_bad_iface();
	test_loopback();
	return t_done();
}
