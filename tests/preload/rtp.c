/* rtp.c - an ordinary libbpf application (skeleton, system libbpf) attaching raw
 * tracepoint programs (bpf_program__attach_raw_tracepoint: BPF_RAW_TRACEPOINT_OPEN) to
 * the kernel's sys_enter and sys_exit, run once on the kernel and once under `bpfrt
 * exec`: both print the same (the programs count this process's getpgid(424242) calls,
 * reading the argument from the pt_regs the raw tracepoint passes).
 *   rtp --switch: attach to sched_switch (the kernel: ok; bpfrt: EINVAL and one line). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rtp.skel.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("APP_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static unsigned long long get(struct rtp *skel, unsigned k)
{
	unsigned long long v = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, &v);
	return v;
}

/* bpfrt runs the programs on a thread of its own: wait (at most 2 s) */
static unsigned long long wait_count(struct rtp *skel, unsigned k, unsigned long long want)
{
	struct timespec ms = { 0, 1000000 };
	unsigned long long v = 0;

	for (int i = 0; i < 2000 && (v = get(skel, k)) < want; i++)
		nanosleep(&ms, NULL);
	return v;
}

int main(int argc, char **argv)
{
	struct bpf_link *in, *out;
	struct rtp *skel;
	int err;

	libbpf_set_print(silent);
	skel = rtp__open();
	if (!skel) {
		printf("open: %d\n", -errno);
		return 1;
	}
	skel->rodata->target_tgid = (unsigned)getpid();
	err = rtp__load(skel);
	printf("load: %d\n", err);
	if (err)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "--switch")) {
		struct bpf_link *l = bpf_program__attach_raw_tracepoint(skel->progs.on_switch,
									 "sched_switch");

		printf("attach sched_switch: %s\n", l ? "ok" : strerror(errno));
		bpf_link__destroy(l);
		rtp__destroy(skel);
		return 0;
	}
	in = bpf_program__attach_raw_tracepoint(skel->progs.on_enter, "sys_enter");
	out = bpf_program__attach_raw_tracepoint(skel->progs.on_exit, "sys_exit");
	printf("attach sys_enter: %s, sys_exit: %s\n", in ? "ok" : strerror(errno),
	       out ? "ok" : strerror(errno));
	if (!in || !out)
		return 1;
	for (int i = 0; i < 4; i++)
		syscall(SYS_getpgid, 424242);
	syscall(SYS_getpgid, 0);
	printf("entries %llu, ", wait_count(skel, 0, 4));
	printf("exits with ESRCH %llu\n", wait_count(skel, 1, 4));
	bpf_link__destroy(in);
	bpf_link__destroy(out);
	for (int i = 0; i < 3; i++)
		syscall(SYS_getpgid, 424242);
	usleep(200000);
	printf("after detach and 3 more: entries %llu, exits %llu\n", get(skel, 0), get(skel, 1));
	rtp__destroy(skel);
	printf("done\n");
	return 0;
}
