/* app.c - an ordinary libbpf application (skeleton from bpftool gen skeleton, system
 * libbpf) that the preload tests run once on the kernel and once under
 * libbpfrt-preload.so: the two outputs must be equal (ring buffer and perf buffer
 * consumers included).  It prints only what does not
 * depend on where it runs (no ids, fds or addresses).
 *   app [--test-run-only]  (the unprivileged subset: the same, no pinning) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "app.skel.h"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("APP_VERBOSE"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	const unsigned *e = data;

	(void)ctx;
	printf("event size=%zu len=%u first=%u run=%llu\n", size, e[0], e[1],
	       (unsigned long long)*(const unsigned long long *)(e + 2));
	return 0;
}

/* Perf samples land on the CPU each run ran on, which may differ between runs: they are
 * printed in run order after polling. */
static char samples[8][96];
static int nsamples;

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	const unsigned *e = data;
	unsigned long long run = *(const unsigned long long *)(e + 2);

	(void)ctx;
	(void)cpu;
	if (nsamples < 8 && run < 8)
		snprintf(samples[run], sizeof(samples[run]),
			 "perf sample size=%u len=%u first=%u run=%llu", size, e[0], e[1], run);
	nsamples++;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)ctx;
	(void)cpu;
	printf("perf lost %llu\n", (unsigned long long)cnt);
}

static int run(int prog_fd, unsigned char first, unsigned len)
{
	unsigned char pkt[128];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = 1);
	int err;

	memset(pkt, 0xab, sizeof(pkt));
	pkt[0] = first;
	err = bpf_prog_test_run_opts(prog_fd, &o);
	printf("test_run first=%u len=%u: err=%d retval=%u data_size_out=%u\n", first, len,
	       err ? -errno : 0, o.retval, o.data_size_out);
	return err;
}

int main(int argc, char **argv)
{
	int pin = !(argc > 1 && !strcmp(argv[1], "--test-run-only"));
	struct ring_buffer *rb = NULL;
	struct user_ring_buffer *urb;
	struct perf_buffer *pb = NULL;
	struct app *skel;
	__u32 key, next, *pk = NULL;
	__u64 val, pc[512];
	int err, n, fd, ncpu = libbpf_num_possible_cpus();

	libbpf_set_print(silent);
	skel = app__open();
	if (!skel) {
		printf("open: %d\n", -errno);
		return 1;
	}
	skel->rodata->drop_byte = 0x42;
	err = app__load(skel);
	printf("load: %d\n", err);
	if (err)
		return 1;
	printf("bss runs=%llu data bytes_seen=%llu rodata drop_byte=0x%x\n",
	       (unsigned long long)skel->bss->runs, (unsigned long long)skel->data->bytes_seen,
	       skel->rodata->drop_byte);
	/* a value written through the mmap'd .data is what the program sees */
	skel->data->bytes_seen = 1000;

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
	printf("ring_buffer__new: %s\n", rb ? "ok" : strerror(errno));
	pb = perf_buffer__new(bpf_map__fd(skel->maps.perf_events), 8, on_sample, on_lost, NULL,
			      NULL);
	printf("perf_buffer__new: %s\n", pb ? "ok" : strerror(errno));

	run(bpf_program__fd(skel->progs.count_packets), 1, 60);
	run(bpf_program__fd(skel->progs.count_packets), 0x42, 14);
	run(bpf_program__fd(skel->progs.count_packets), 1, 100);
	run(bpf_program__fd(skel->progs.count_packets), 7, 0);

	printf("bss runs=%llu last_len=%u data bytes_seen=%llu\n",
	       (unsigned long long)skel->bss->runs, skel->bss->last_len,
	       (unsigned long long)skel->data->bytes_seen);
	if (rb) {
		n = ring_buffer__poll(rb, 1000);
		printf("ring_buffer__poll: %d\n", n);
		n = ring_buffer__poll(rb, 10);
		printf("ring_buffer__poll again: %d\n", n);
	}
	if (pb) {
		/* three runs wrote one sample each (the fourth failed) */
		for (int i = 0; i < 20 && nsamples < 3; i++) {
			n = perf_buffer__poll(pb, 100);
			if (n < 0) {
				printf("perf_buffer__poll: %d\n", n);
				break;
			}
		}
		for (int i = 0; i < 8; i++)
			if (samples[i][0])
				printf("%s\n", samples[i]);
		printf("perf_buffer__poll: %d samples\n", nsamples);
		n = perf_buffer__poll(pb, 10);
		printf("perf_buffer__poll again: %d, %d samples\n", n, nsamples);
	}

	fd = bpf_map__fd(skel->maps.by_first_byte);
	for (err = bpf_map_get_next_key(fd, pk, &next); !err;
	     err = bpf_map_get_next_key(fd, pk, &next)) {
		key = next;
		pk = &key;
	}
	/* hash order differs between implementations: look keys up in a fixed order */
	for (key = 0; key < 256; key++)
		if (!bpf_map_lookup_elem(fd, &key, &val))
			printf("hash[%u]=%llu\n", key, (unsigned long long)val);
	fd = bpf_map__fd(skel->maps.verdicts);
	for (key = 0; key < 4; key++)
		if (!bpf_map_lookup_elem(fd, &key, &val))
			printf("array[%u]=%llu\n", key, (unsigned long long)val);
	key = 4;
	printf("array[4]: %d\n", bpf_map_lookup_elem(fd, &key, &val) ? -errno : 0);
	fd = bpf_map__fd(skel->maps.pcpu);
	key = 0;
	if (ncpu > 0 && ncpu <= 512 && !bpf_map_lookup_elem(fd, &key, pc)) {
		__u64 sum = 0;

		for (int i = 0; i < ncpu; i++)
			sum += pc[i];
		printf("percpu sum=%llu\n", (unsigned long long)sum);
	}
	fd = bpf_map__fd(skel->maps.lru);
	for (key = 0; key < 128; key++) {
		__u32 v;

		if (!bpf_map_lookup_elem(fd, &key, &v))
			printf("lru[%u]=%u\n", key, v);
	}
	fd = bpf_map__fd(skel->maps.lens);
	while (!bpf_map_lookup_and_delete_elem(fd, NULL, &key))
		printf("queue pop %u\n", key);
	printf("queue empty: %d\n", -errno);
	/* the user updates, the program reads */
	key = 0x42;
	val = 5;
	printf("hash update: %d\n",
	       bpf_map_update_elem(bpf_map__fd(skel->maps.by_first_byte), &key, &val, BPF_NOEXIST)
		       ? -errno : 0);

	if (pin) {
		const char *path = "/sys/fs/bpf/bpfrt_preload_test_verdicts";
		int got;

		unlink(path);
		err = bpf_map__pin(skel->maps.verdicts, path);
		printf("pin: %d\n", err);
		got = bpf_obj_get(path);
		printf("obj_get: %s\n", got >= 0 ? "ok" : strerror(errno));
		key = 1;
		val = 0;
		err = got >= 0 ? bpf_map_lookup_elem(got, &key, &val) : -1;
		printf("pinned array[1]: %d %llu\n", err, (unsigned long long)val);
		if (got >= 0)
			close(got);
		bpf_map__unpin(skel->maps.verdicts, path);
	}
	/* An epoll set closed behind the preload's back (a raw close(2), as close_range()
	 * closes), its number and that of the wake-up pipe the preload registered in it for
	 * the ring buffer taken again by the application: closing the set's number must
	 * close none of the application's files (the kernel registers the map's fd itself). */
	{
		int dn = open("/dev/null", O_RDONLY | O_CLOEXEC), tfd = -1, ok;
		int ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		char path[64], line[128];
		FILE *f;

		fd = bpf_map__fd(skel->maps.events);
		if (dn >= 0 && ep >= 0 && !epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
			snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
			f = fopen(path, "r");
			while (f && fgets(line, sizeof(line), f))
				if (sscanf(line, "tfd: %d", &tfd) == 1)
					break;
			if (f)
				fclose(f);
		}
		if (tfd == fd)
			tfd = -1; /* the kernel's: nothing of the preload's */
		syscall(SYS_close, ep);
		if (tfd >= 0)
			syscall(SYS_close, tfd);
		ok = dn >= 0 && ep >= 0 && dup2(dn, ep) == ep && (tfd < 0 || dup2(dn, tfd) == tfd);
		close(ep);
		printf("an epoll set closed behind the preload, its numbers reused: %s\n",
		       ok && fcntl(dn, F_GETFD) >= 0 && (tfd < 0 || fcntl(tfd, F_GETFD) >= 0)
			       ? "the application's files stay open" : "closed");
		if (tfd >= 0)
			close(tfd);
		if (dn >= 0)
			close(dn);
	}
	/* the kernel freezes no ring buffer under its consumer's writable mapping (EBUSY),
	 * and does once ring_buffer__free() unmapped it */
	fd = bpf_map__fd(skel->maps.events);
	if (rb)
		printf("freeze of the ring buffer under its consumer: %d\n",
		       bpf_map_freeze(fd) ? -errno : 0);
	ring_buffer__free(rb);
	printf("freeze of the ring buffer after ring_buffer__free: %d\n",
	       bpf_map_freeze(fd) ? -errno : 0);
	/* a user ring buffer likewise under its producer's writable mapping (EBUSY), frozen
	 * once user_ring_buffer__free() unmapped it; then a producer's writable mapping is
	 * EPERM (libbpf's warning, which names the fd, left unprinted) */
	fd = bpf_map__fd(skel->maps.uevents);
	urb = user_ring_buffer__new(fd, NULL);
	printf("user_ring_buffer__new: %s\n", urb ? "ok" : strerror(errno));
	if (urb)
		printf("freeze of the user ring buffer under its producer: %d\n",
		       bpf_map_freeze(fd) ? -errno : 0);
	user_ring_buffer__free(urb);
	printf("freeze of the user ring buffer after user_ring_buffer__free: %d\n",
	       bpf_map_freeze(fd) ? -errno : 0);
	libbpf_set_print(NULL);
	urb = user_ring_buffer__new(fd, NULL);
	printf("user_ring_buffer__new of the frozen user ring buffer: %s\n",
	       urb ? "ok" : strerror(errno));
	libbpf_set_print(silent);
	user_ring_buffer__free(urb);
	perf_buffer__free(pb);
	app__destroy(skel);
	printf("done\n");
	return 0;
}
