/* sock_example.c - user side of the seed's sock_example on libbpfrt: load
 * sock_example.bpf.o, attach its socket filter to an interface's packet socket (lo by
 * default) and print the packets counted per IP protocol every second until Ctrl-C or
 * -n rounds.
 *
 *   sock_example [-i IFACE] [-n ROUNDS] [-o OBJECT]
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include <bpfrt.h>

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

/* The object next to the executable, where the build puts it. */
static void default_object(char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	char *slash;

	if (n <= 0) {
		snprintf(path, len, "sock_example.bpf.o");
		return;
	}
	path[n] = '\0';
	slash = strrchr(path, '/');
	snprintf(slash + 1, len - (size_t)(slash + 1 - path), "sock_example.bpf.o");
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
	char path[PATH_MAX], err[256];
	struct bpfrt_object *obj;
	struct bpfrt_pkt_link *link;
	struct bpfrt_program *prog;
	struct bpfrt_map *map;
	long rounds = -1;
	int c, ret;

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
	if (!obj_path) {
		default_object(path, sizeof(path));
		obj_path = path;
	}
	obj = bpfrt_object_open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "sock_example: %s: %s\n", obj_path, strerror(errno));
		return 1;
	}
	if (bpfrt_object_load(obj)) {
		fprintf(stderr, "sock_example: loading %s: %s\n", obj_path, bpfrt_object_log(obj));
		bpfrt_object_close(obj);
		return 1;
	}
	prog = bpfrt_object_find_program_by_name(obj, "count_protocols");
	map = bpfrt_object_find_map_by_name(obj, "proto_counts");
	if (!prog || !map) {
		fprintf(stderr, "sock_example: %s: no count_protocols or proto_counts\n", obj_path);
		bpfrt_object_close(obj);
		return 1;
	}
	/* the seed: sock = open_raw_sock(iface); setsockopt(sock, SO_ATTACH_BPF, prog_fd) */
	ret = bpfrt_prog_attach_iface(bpfrt_program_fd(prog), iface, NULL, &link, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "sock_example: %s\n", err);
		bpfrt_object_close(obj);
		return 1;
	}
	printf("attached to %s: counting IPv4 packets per protocol\n", iface);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long i = 0; !stop && (rounds < 0 || i < rounds); i++) {
		sleep(1);
		print_counts(bpfrt_map_fd(map));
	}
	bpfrt_pkt_link_destroy(link);
	bpfrt_object_close(obj);
	return 0;
}
