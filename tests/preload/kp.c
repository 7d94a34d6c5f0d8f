/* kp.c - an ordinary libbpf application (skeleton, system libbpf) attaching uprobe and
 * uretprobe programs to its own functions with bpf_program__attach_uprobe_opts() (the
 * uprobe PMU's perf_event_open, then a perf link or PERF_EVENT_IOC_SET_BPF), run once on
 * the kernel and once under `bpfrt exec`: both print the same.
 *  - kp_add(a, b): the programs read the arguments and the return value from pt_regs;
 *  - kp_name(s), probed in every process: a child calls it with "bpfrt-marker" in a
 *    buffer that the parent overwrites after the fork, so only a program that reads the
 *    child's memory (bpf_probe_read_user_str on the child's hit) sees the marker; the
 *    parent's own calls see its garbage.
 * kp --ioctl attaches on_add the way libbpf's fallback does, by hand: perf_event_open
 * of the uprobe PMU, PERF_EVENT_IOC_SET_BPF, ENABLE; DISABLE and close detach.
 * bpfrt runs the programs on a thread of its own after the hits: the application waits
 * (at most 2 s) for the counts the kernel has at once. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kp.skel.h"
#include "../uprobe_target.h" /* tests/: pmu_type(), exe_file_offset() */

static char name_buf[64];

__attribute__((noinline)) long kp_add(long a, long b)
{
	__asm__ volatile("" ::: "memory"); /* keep the call and its arguments */
	return a * b + 1;
}

__attribute__((noinline)) int kp_name(const char *s)
{
	__asm__ volatile("" ::: "memory");
	return s[0];
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("APP_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static unsigned long long get(int map_fd, unsigned k)
{
	unsigned long long v = 0;

	bpf_map_lookup_elem(map_fd, &k, &v);
	return v;
}

/* wait until counts[k] reaches want, at most 2 s */
static unsigned long long wait_count(struct kp *skel, unsigned k, unsigned long long want)
{
	struct timespec ms = { 0, 1000000 };
	unsigned long long v = 0;

	for (int i = 0; i < 2000 && (v = get(bpf_map__fd(skel->maps.counts), k)) < want; i++)
		nanosleep(&ms, NULL);
	return v;
}

static struct bpf_link *attach(struct bpf_program *prog, int ret, pid_t pid, const char *fn)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = fn, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, pid, "/proc/self/exe", 0, &o);

	printf("attach %s%s pid %d: %s\n", fn, ret ? " (return)" : "", pid > 0 ? 1 : pid,
	       l ? "ok" : strerror(errno));
	return l;
}

static int by_ioctl(struct kp *skel)
{
	struct perf_event_attr a;
	long type = pmu_type("uprobe");
	int pfd, err;

	if (type < 0)
		return printf("no uprobe PMU\n"), 1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config1 = (uint64_t)(uintptr_t)"/proc/self/exe";
	a.config2 = exe_file_offset((uint64_t)(uintptr_t)kp_add);
	pfd = (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	printf("perf_event_open: %s\n", pfd < 0 ? strerror(errno) : "ok");
	if (pfd < 0)
		return 1;
	err = ioctl(pfd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(skel->progs.on_add));
	printf("SET_BPF: %s\n", err ? strerror(errno) : "ok");
	err = ioctl(pfd, PERF_EVENT_IOC_SET_BPF, bpf_program__fd(skel->progs.on_add));
	printf("SET_BPF again: %s\n", err ? strerror(errno) : "ok");
	ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
	for (long i = 1; i <= 5; i++)
		kp_add(i, 10 * i);
	printf("entries %llu, ", wait_count(skel, 0, 5));
	printf("sum of arguments %llu\n",
	       get(bpf_map__fd(skel->maps.sums), 0));
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	close(pfd);
	for (long i = 1; i <= 3; i++)
		kp_add(i, i);
	usleep(200000);
	printf("after close and 3 more calls: entries %llu\n",
	       get(bpf_map__fd(skel->maps.counts), 0));
	kp__destroy(skel);
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_link *l1, *l2, *l3;
	int go[2], counts_fd, sums_fd;
	struct kp *skel;
	pid_t child;
	long r = 0;
	int err;

	libbpf_set_print(silent);
	skel = kp__open();
	if (!skel) {
		printf("open: %d\n", -errno);
		return 1;
	}
	err = kp__load(skel);
	printf("load: %d\n", err);
	if (err)
		return 1;
	if (argc > 1 && !strcmp(argv[1], "--ioctl"))
		return by_ioctl(skel);
	counts_fd = bpf_map__fd(skel->maps.counts);
	sums_fd = bpf_map__fd(skel->maps.sums);
	l1 = attach(skel->progs.on_add, 0, 0, "kp_add");
	l2 = attach(skel->progs.on_add_ret, 1, 0, "kp_add");
	l3 = attach(skel->progs.on_name, 0, -1, "kp_name");
	if (!l1 || !l2 || !l3)
		return 1;
	for (long i = 1; i <= 5; i++)
		r += kp_add(i, 10 * i);
	printf("kp_add: 5 calls (returns summing to %ld)\n", r);
	printf("entries %llu, returns %llu\n", wait_count(skel, 0, 5), wait_count(skel, 1, 5));
	printf("sum of arguments %llu, of return values %llu\n", get(sums_fd, 0), get(sums_fd, 1));

	strcpy(name_buf, "bpfrt-marker");
	if (pipe(go) || (child = fork()) < 0)
		return 1;
	if (child == 0) {
		char c;

		close(go[1]);
		for (int i = 0; i < 3; i++)
			kp_name(name_buf);
		(void)!read(go[0], &c, 1); /* stay alive until the parent has counted */
		_exit(0);
	}
	close(go[0]);
	memset(name_buf, 'x', sizeof(name_buf) - 1);
	for (int i = 0; i < 2; i++)
		kp_name(name_buf);
	printf("kp_name: marker hits %llu (the child's 3), other hits %llu (the parent's 2)\n",
	       wait_count(skel, 2, 3), wait_count(skel, 3, 2));
	close(go[1]);
	waitpid(child, NULL, 0);

	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	bpf_link__destroy(l3);
	for (long i = 1; i <= 3; i++)
		kp_add(i, i);
	usleep(200000);
	printf("after detach and 3 more calls: entries %llu, returns %llu\n", get(counts_fd, 0),
	       get(counts_fd, 1));
	kp__destroy(skel);
	printf("done\n");
	return 0;
}
