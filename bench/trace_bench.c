/* trace_bench.c - what bench/sections/60-tracing.sh measures.
 *   trace_bench probe N      ns per hit of an in-application probe: the same loop with no
 *                            probe (baseline), with the probe and nothing attached, and
 *                            with an empty raw-tracepoint program attached (JIT)
 *   trace_bench drops SEC OBJ  UDP datagrams sent as fast as possible to a closed port of
 *                            127.0.0.1 for SEC seconds while dropmon's program (OBJ) is
 *                            attached to skb:kfree_skb: drops generated, records the link
 *                            ran the program on, records the kernel lost, NO_SOCKET drops
 *                            counted in the map
 * Prints "RES name value" lines (public API only).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpfrt.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void loop_plain(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = i;
}

__attribute__((noinline)) static void loop_probe(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		BPFRT_PROBE("bench:hit", i, n);
		sink = i;
	}
}

static double ns_per(void (*fn)(uint64_t), uint64_t n)
{
	double t0 = now();

	fn(n);
	return (now() - t0) * 1e9 / (double)n;
}

static int bench_probe(uint64_t n)
{
	static const struct bpf_insn empty[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, link;

	loop_probe(1000); /* register the site */
	printf("RES probe-baseline %.3f\n", ns_per(loop_plain, n));
	printf("RES probe-detached %.3f\n", ns_per(loop_probe, n));
	prog = bpfrt_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "empty", "GPL", empty, 2, NULL);
	link = prog >= 0 ? bpfrt_probe_attach(prog, "bench:hit") : prog;
	if (link < 0) {
		fprintf(stderr, "trace_bench: attach: %s\n", strerror(-link));
		return 1;
	}
	printf("RES probe-attached %.3f\n", ns_per(loop_probe, n / 4));
	bpfrt_link_detach(link);
	close(link);
	close(prog);
	return 0;
}

struct drop_key {
	unsigned long long location;
	unsigned int reason;
	unsigned int pad;
};

static unsigned long long map_total(int fd)
{
	struct drop_key k, next;
	unsigned long long sum = 0, v;
	int first = 1;

	while (!bpfrt_map_get_next_key(fd, first ? NULL : &k, &next)) {
		first = 0;
		k = next;
		if (k.reason == 3 && !bpfrt_map_lookup_elem(fd, &k, &v)) /* NO_SOCKET */
			sum += v;
	}
	return sum;
}

static int bench_drops(double secs, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct bpfrt_link_stats st = { 0 };
	struct bpfrt_object *obj = bpfrt_object_open_file(path, NULL);
	struct bpfrt_program *prog;
	struct bpfrt_map *map;
	unsigned long long sent = 0, before;
	socklen_t len = sizeof(a);
	int s, link;
	double t0, t1;

	if (!obj || bpfrt_object_load(obj)) {
		fprintf(stderr, "trace_bench: %s: cannot load\n", path);
		return 1;
	}
	prog = bpfrt_object_find_program_by_name(obj, "count_drops");
	map = bpfrt_object_find_map_by_name(obj, "drops");
	link = bpfrt_tracepoint_attach(bpfrt_program_fd(prog), "skb:kfree_skb", NULL);
	if (link < 0)
		return 1;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(s, (struct sockaddr *)&a, sizeof(a));
	getsockname(s, (struct sockaddr *)&a, &len);
	close(s);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	before = map_total(bpfrt_map__fd(map));
	t0 = now();
	while ((t1 = now()) - t0 < secs)
		for (int i = 0; i < 256; i++)
			sent += sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1;
	/* let the link drain what is in the rings */
	for (int i = 0; i < 200; i++) {
		unsigned long long seen = map_total(bpfrt_map__fd(map)) - before;

		bpfrt_link_stats(link, &st);
		if (seen + st.lost >= sent)
			break;
		usleep(10000);
	}
	bpfrt_link_stats(link, &st);
	printf("RES drops-sent %llu\nRES drops-secs %.3f\nRES drops-counted %llu\n"
	       "RES drops-lost %llu\nRES drops-events %llu\n", sent, t1 - t0,
	       map_total(bpfrt_map__fd(map)) - before, (unsigned long long)st.lost,
	       (unsigned long long)st.events);
	close(s);
	close(link);
	bpfrt_object_close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "probe"))
		return bench_probe(strtoull(argv[2], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "drops"))
		return bench_drops(strtod(argv[2], NULL), argv[3]);
	fprintf(stderr, "usage: trace_bench probe N | drops SECONDS DROPMON_OBJ\n");
	return 2;
}
