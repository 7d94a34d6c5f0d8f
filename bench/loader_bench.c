/* loader_bench.c - time to open, load (maps created, programs verified) and close a corpus
 * of eBPF ELF objects: bpfrt (bpfrt_object_open_file + bpfrt_object_load into bpfrt),
 * the same loader into the kernel (.kernel = 1: raw bpf(2)), and libbpf into the kernel
 * (bpf_object__open_file + bpf_object__load) when built with it.  One measurement is one
 * pass over every object that all sides load; the sides take turns pass by pass (so a
 * noisy machine hits them alike) and each pass prints "RES <side> <microseconds>".
 * bpfrt's objects live in a fresh directory under /dev/shm, where its default
 * ($BPFRT_FS=/dev/shm/bpfrt) is: a disk file system would add block allocation and
 * discards the default setup never pays.
 * With --per-object, every object is timed alone instead ("OBJ <side> <object> <us>"), the
 * sides taking turns object by object in each of their 6 orders in turn, pass by pass (a
 * rotation alone kept bpfrt right behind libbpf in every pass, so the kernel's deferred
 * freeing of libbpf's objects, and the cold caches after the raw loader's sockmap
 * creations that sleep ~25 ms each, always landed in the same side's time):
 * the many-program objects of the real-world corpus, each its own row.  The first,
 * untimed load of every object on every side (the check that all sides load it) leaves
 * bpfrt's per-process state warm (vmlinux BTF parsed, its CO-RE index built), as in a
 * process that loads objects; libbpf parses vmlinux again for every object it loads.
 * Usage: loader_bench [--per-object] PASSES OBJ... (needs root for the kernel sides). */
#define _GNU_SOURCE /* nftw() */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#ifdef HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif
#include "quiet.h"

enum side { BPFRT, KERNEL_RAW, KERNEL_LIBBPF, NSIDES };
static const char *const side_names[NSIDES] = { "bpfrt", "kernel-bpfrt-loader", "kernel-libbpf" };

static char pin_user[64], pin_kernel[64];

/* Open, load and close one object on one side; 0 or -errno. */
static int load_once(enum side s, const char *path)
{
	if (s == BPFRT || s == KERNEL_RAW) {
		BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = s == KERNEL_RAW,
			   .pin_root_path = s == BPFRT ? pin_user : pin_kernel);
		struct bpfrt_object *obj = bpfrt_object_open_file(path, &o);
		int ret;

		if (!obj)
			return -errno;
		ret = bpfrt_object_load(obj);
		bpfrt_object_close(obj);
		return ret;
	}
#ifdef HAVE_LIBBPF
	{
		LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = pin_kernel);
		struct bpf_object *obj = bpf_object__open_file(path, &o);
		int ret;

		if (!obj)
			return -errno;
		ret = bpf_object__load(obj);
		bpf_object__close(obj);
		return ret;
	}
#else
	return -EOPNOTSUPP;
#endif
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One object at a time, sides in turn: "OBJ <side> <path> <us>" per load.  Pass p uses
 * the sides' order number p % 6, so over 6 passes each side follows each other one as
 * often as it precedes it. */
static void per_object(int passes, const char **objs, int nobj, const int *have)
{
	static const unsigned char orders[6][NSIDES] = {
		{ 0, 1, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 0, 2, 1 }, { 2, 1, 0 }, { 1, 0, 2 },
	};

	for (int p = 0; p < passes; p++)
		for (int i = 0; i < nobj; i++)
			for (int k = 0; k < NSIDES; k++) {
				enum side s = (enum side)orders[p % 6][k];
				double t0;

				if (!have[s])
					continue;
				t0 = now_us();
				load_once(s, objs[i]);
				printf("OBJ %s %s %.1f\n", side_names[s], objs[i], now_us() - t0);
			}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

int main(int argc, char **argv)
{
	int per_obj = argc > 1 && !strcmp(argv[1], "--per-object");
	int passes, nobj = 0, have[NSIDES] = { 0 };
	const char **objs = calloc((size_t)argc, sizeof(*objs));
	char dir[] = "/dev/shm/bpfrt-loader-XXXXXX";

	argc -= per_obj;
	argv += per_obj;
	passes = argc > 1 ? atoi(argv[1]) : 5;
	if (!objs || passes < 1 || argc < 3 || !mkdtemp(dir))
		return 2;
	setenv("BPFRT_FS", dir, 1);
	snprintf(pin_user, sizeof(pin_user), "%s", dir);
	/* where the kernel sides' objects pin by themselves (iproute2's tc/globals) */
	snprintf(pin_kernel, sizeof(pin_kernel), "/sys/fs/bpf/bpfrt-loader-%d", (int)getpid());
	bpfrt_set_print(quiet);
#ifdef HAVE_LIBBPF
	libbpf_set_print(libbpf_quiet);
#endif
	/* The corpus: objects every available side loads. */
	for (int s = 0; s < NSIDES; s++)
		have[s] = load_once((enum side)s, argv[2]) != -EOPNOTSUPP && (s == BPFRT ||
											 geteuid() == 0);
	for (int i = 2; i < argc; i++) {
		int ok = 1;

		for (int s = 0; s < NSIDES && ok; s++)
			ok = !have[s] || !load_once((enum side)s, argv[i]);
		if (ok)
			objs[nobj++] = argv[i];
		else
			printf("NOTE skipped %s (not loadable on every side)\n", argv[i]);
	}
	printf("NOTE corpus %d objects\n", nobj);
	for (int s = 0; s < NSIDES; s++)
		if (!have[s])
			printf("NOTE side %s unavailable\n", side_names[s]);
	if (per_obj)
		per_object(passes, objs, nobj, have);
	for (int p = 0; p < passes && !per_obj; p++)
		for (int s = 0; s < NSIDES; s++) {
			double t0 = now_us();

			if (!have[s])
				continue;
			for (int i = 0; i < nobj; i++)
				load_once((enum side)s, objs[i]);
			printf("RES %s %.1f\n", side_names[s], now_us() - t0);
		}
	/* the directory keeps the id counters' file (.bpfrt-ids) and what objects pin by
	 * themselves (iproute2's tc/globals): unlinking a known list left 156 directories
	 * behind over a day of runs */
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	nftw(pin_kernel, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(objs);
	return 0;
}
