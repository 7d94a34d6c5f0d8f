/* tp.c - an ordinary libbpf application (skeleton, system libbpf) attaching a tracepoint
 * program through perf_event_open + PERF_EVENT_IOC_SET_BPF (libbpf's choice under bpfrt)
 * or a perf link (on the kernel), run once on the kernel and once under `bpfrt exec`:
 * both print the same.  SO_ATTACH_BPF of a socket filter on a TCP socket is printed
 * apart (stderr, the caller compares): bpfrt cannot filter a stream socket.
 *   tp [--socket] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tp.skel.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("APP_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static unsigned long long count(struct tp *skel, unsigned k)
{
	unsigned long long v = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, &v);
	return v;
}

/* bpfrt reads the tracepoint's records on a thread of its own: wait until want came
 * (the kernel counts at once), at most 2 s. */
static unsigned long long wait_count(struct tp *skel, unsigned long long want)
{
	struct timespec ms = { 0, 1000000 };
	unsigned long long v = 0;

	for (int i = 0; i < 2000 && (v = count(skel, 0)) < want; i++)
		nanosleep(&ms, NULL);
	return v;
}

int main(int argc, char **argv)
{
	struct bpf_link *link;
	struct tp *skel;
	int err;

	libbpf_set_print(silent);
	skel = tp__open();
	if (!skel) {
		printf("open: %d\n", -errno);
		return 1;
	}
	skel->rodata->target_tgid = (unsigned)getpid();
	err = tp__load(skel);
	printf("load: %d\n", err);
	if (err)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "--socket")) {
		/* a stream socket: bpfrt filters only datagram sockets' reads (sf.c) */
		int s = socket(AF_INET, SOCK_STREAM, 0), pfd = bpf_program__fd(skel->progs.keep_all);

		err = setsockopt(s, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof(pfd));
		printf("SO_ATTACH_BPF: %s\n", err ? strerror(errno) : "ok");
		close(s);
		tp__destroy(skel);
		return 0;
	}
	link = bpf_program__attach(skel->progs.count_getppid);
	printf("attach: %s\n", link ? "ok" : strerror(errno));
	if (!link)
		return 1;
	for (int i = 0; i < 5; i++)
		syscall(SYS_getppid);
	printf("count after 5 calls: %llu\n", wait_count(skel, 5));
	bpf_link__destroy(link);
	for (int i = 0; i < 3; i++)
		syscall(SYS_getppid);
	usleep(200000);
	printf("count after detach and 3 more: %llu\n", count(skel, 0));
	tp__destroy(skel);
	printf("done\n");
	return 0;
}
