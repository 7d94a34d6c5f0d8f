/* net.c - an ordinary libbpf application (skeleton, system libbpf) attaching an XDP and
 * a tc program to the loopback interface the ways libbpf offers, run once on the kernel
 * and once under `bpfrt exec`: both print the same.  Run it in a network namespace of
 * its own (lo up): nothing else's packets.
 *   net xdp   bpf_xdp_attach / bpf_xdp_detach (rtnetlink RTM_SETLINK IFLA_XDP)
 *   net link  bpf_program__attach_xdp (BPF_LINK_CREATE BPF_XDP), bpf_link__destroy
 *   net tc    bpf_tc_hook_create (clsact), bpf_tc_attach / bpf_tc_detach (RTM_NEWTFILTER,
 *             RTM_DELTFILTER), bpf_tc_hook_destroy
 *   net tcx   bpf_link_create(BPF_TCX_INGRESS) (libbpf 1.1 has no tcx attach of its own),
 *             close
 * Each sends 5 UDP datagrams to a port it listens on while attached and 3 after the
 * detach; the programs count the datagrams to that port and pass them.  bpfrt runs the
 * programs on a thread of its own: the application waits (at most 2 s) for the counts. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "net.skel.h"

static int rx = -1;
static struct sockaddr_in to;

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("APP_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static unsigned long long get(struct net *skel, unsigned k)
{
	unsigned long long v = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, &v);
	return v;
}

static unsigned long long wait_count(struct net *skel, unsigned k, unsigned long long want)
{
	struct timespec ms = { 0, 1000000 };
	unsigned long long v = 0;

	for (int i = 0; i < 2000 && (v = get(skel, k)) < want; i++)
		nanosleep(&ms, NULL);
	return v;
}

/* send n datagrams and read them back: how many arrived */
static int traffic(int n)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), got = 0;
	struct timeval tv = { 1, 0 };
	char buf[64];

	for (int i = 0; i < n; i++)
		sendto(s, "bpfrt", 5, 0, (struct sockaddr *)&to, sizeof(to));
	close(s);
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < n && recv(rx, buf, sizeof(buf), 0) > 0)
		got++;
	return got;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "xdp";
	int lo = (int)if_nametoindex("lo"), err, k = !strncmp(mode, "tc", 2);
	socklen_t len = sizeof(to);
	struct net *skel;

	libbpf_set_print(silent);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(rx, (struct sockaddr *)&to, sizeof(to)) || getsockname(rx, (void *)&to, &len))
		return printf("bind: %s\n", strerror(errno)), 1;
	skel = net__open();
	if (!skel)
		return printf("open: %d\n", -errno), 1;
	skel->rodata->port = ntohs(to.sin_port);
	err = net__load(skel);
	printf("load: %d\n", err);
	if (err)
		return 1;
	if (!strcmp(mode, "xdp")) {
		err = bpf_xdp_attach(lo, bpf_program__fd(skel->progs.xdp_count), 0, NULL);
		printf("bpf_xdp_attach: %d\n", err);
		err = bpf_xdp_attach(lo, bpf_program__fd(skel->progs.xdp_count),
				     XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		printf("bpf_xdp_attach again, UPDATE_IF_NOEXIST: %s\n", strerror(-err));
		printf("received %d of 5\n", traffic(5));
		printf("counted %llu\n", wait_count(skel, 0, 5));
		printf("bpf_xdp_detach: %d\n", bpf_xdp_detach(lo, 0, NULL));
	} else if (!strcmp(mode, "link")) {
		struct bpf_link *l = bpf_program__attach_xdp(skel->progs.xdp_count, lo);

		printf("bpf_program__attach_xdp: %s\n", l ? "ok" : strerror(errno));
		printf("received %d of 5\n", traffic(5));
		printf("counted %llu\n", wait_count(skel, 0, 5));
		printf("bpf_link__destroy: %d\n", bpf_link__destroy(l));
	} else if (!strcmp(mode, "tcx")) {
		int l = bpf_link_create(bpf_program__fd(skel->progs.tc_count), lo,
					46 /* BPF_TCX_INGRESS */, NULL);

		printf("bpf_link_create(BPF_TCX_INGRESS): %s\n", l >= 0 ? "ok" : strerror(errno));
		printf("received %d of 5\n", traffic(5));
		printf("counted %llu\n", wait_count(skel, 1, 5));
		printf("close: %d\n", close(l));
	} else {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lo, .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, o, .handle = 1, .priority = 1,
			    .prog_fd = bpf_program__fd(skel->progs.tc_count));

		err = bpf_tc_hook_create(&hook);
		printf("bpf_tc_hook_create: %d\n", err);
		err = bpf_tc_attach(&hook, &o);
		printf("bpf_tc_attach: %d handle %u priority %u prog_id %s\n", err, o.handle,
		       o.priority, o.prog_id ? "set" : "0");
		printf("received %d of 5\n", traffic(5));
		printf("counted %llu\n", wait_count(skel, 1, 5));
		o.prog_fd = o.prog_id = 0;
		o.flags = 0;
		printf("bpf_tc_detach: %d\n", bpf_tc_detach(&hook, &o));
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		printf("bpf_tc_hook_destroy: %d\n", bpf_tc_hook_destroy(&hook));
	}
	printf("after detach: received %d of 3\n", traffic(3));
	usleep(200000);
	printf("counted %llu\n", get(skel, k));
	net__destroy(skel);
	printf("done\n");
	return 0;
}
