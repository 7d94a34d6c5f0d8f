/* sock_example.c - user side of the seed's sock_example on libbpfrt: load
 * sock_example.bpf.o, attach its socket filter to an interface's packet socket (lo by
 * default) and print the packets counted per IP protocol every second until Ctrl-C or
 * -n rounds.
 *
 *   sock_example [-i IFACE] [-n ROUNDS] [-o OBJECT]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include <bpfrt.h>

#include "sample_attach.h"

struct proto_count {
	unsigned long long packets;
	unsigned long long bytes;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print_counts(int map_fd)
{
	static const struct {
		unsigned int proto;
		const char *name;
	} shown[] = { { IPPROTO_TCP, "TCP" }, { IPPROTO_UDP, "UDP" }, { IPPROTO_ICMP, "ICMP" } };
	unsigned long long other = 0;
	struct proto_count c;

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		if (bpfrt_map_lookup_elem(map_fd, &shown[i].proto, &c))
			c.packets = 0;
		printf("%s%s %llu", i ? " " : "", shown[i].name, c.packets);
	}
	for (unsigned int p = 0; p < 256; p++)
		if (p != IPPROTO_TCP && p != IPPROTO_UDP && p != IPPROTO_ICMP &&
		    !bpfrt_map_lookup_elem(map_fd, &p, &c))
			other += c.packets;
	printf(" other %llu packets\n", other);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *iface = "lo", *obj_path = NULL;
	struct sample smp = { .name = "sock_example" };
	long rounds = -1;
	int c;

	while ((c = getopt(argc, argv, "i:n:o:h")) != -1) {
		switch (c) {
		case 'i':
			iface = optarg;
			break;
		case 'n':
			rounds = strtol(optarg, NULL, 10);
			break;
		case 'o':
			obj_path = optarg;
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: sock_example [-i IFACE] [-n ROUNDS] [-o OBJECT]\n"
				"Count the packets of IFACE (default lo) per IP protocol with the\n"
				"socket filter of OBJECT (default: sock_example.bpf.o next to this\n"
				"program) and print the counts every second.\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (sample_attach(&smp, obj_path, "count_protocols", "proto_counts", iface))
		return 1;
	printf("attached to %s: counting IPv4 packets per protocol\n", iface);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long i = 0; !stop && (rounds < 0 || i < rounds); i++) {
		sleep(1);
		print_counts(bpfrt_map__fd(smp.map));
	}
	sample_detach(&smp);
	return 0;
}
