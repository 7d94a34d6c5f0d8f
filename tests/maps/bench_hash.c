/* bench_hash.c - user-space lookup and update cost on a 100k-entry hash map (4-byte key,
 * 8-byte value): bpfrt's wrappers, bpfrt_bpf() (pointers checked with process_vm_*), the
 * map's own lookup (what a program's helper call costs) and the kernel's bpf(2).
 * Thread CPU time per operation, so a loaded machine skews it less.  Not a test: run by
 * hand (build/tests/bench_map_hash [ops]).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#include "maps/maps.h"

#define ENTRIES 100000

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef int (*sys_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static int sys_kernel(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static int elem(sys_fn sys, int cmd, int fd, uint32_t *key, uint64_t *val)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)val;
	return sys(cmd, &a, sizeof(a));
}

static int create(sys_fn sys)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = ENTRIES;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

static void run(const char *name, sys_fn sys, long ops)
{
	int fd = create(sys);
	uint32_t key, seed = 1;
	uint64_t val = 0;
	double t0, upd, lkp;

	if (fd < 0) {
		printf("%-28s unavailable (%s)\n", name, strerror(errno));
		return;
	}
	for (key = 0; key < ENTRIES; key++)
		elem(sys, BPF_MAP_UPDATE_ELEM, fd, &key, &val);
	t0 = cpu_ns();
	for (long i = 0; i < ops; i++) {
		seed = seed * 1103515245 + 12345;
		key = seed % ENTRIES;
		elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &key, &val);
	}
	lkp = (cpu_ns() - t0) / ops;
	t0 = cpu_ns();
	for (long i = 0; i < ops; i++) {
		seed = seed * 1103515245 + 12345;
		key = seed % ENTRIES;
		val = i;
		elem(sys, BPF_MAP_UPDATE_ELEM, fd, &key, &val);
	}
	upd = (cpu_ns() - t0) / ops;
	printf("%-28s lookup %7.1f ns/op   update %7.1f ns/op\n", name, lkp, upd);
	close(fd);
}

static int wrap(int cmd, union bpf_attr *a, unsigned int size)
{
	(void)size;
	if (cmd == BPF_MAP_CREATE)
		return bpfrt_map_create(a->map_type, NULL, a->key_size, a->value_size,
					a->max_entries, NULL);
	if (cmd == BPF_MAP_LOOKUP_ELEM)
		return bpfrt_map_lookup_elem((int)a->map_fd, (void *)(uintptr_t)a->key,
					     (void *)(uintptr_t)a->value);
	return bpfrt_map_update_elem((int)a->map_fd, (void *)(uintptr_t)a->key,
				     (void *)(uintptr_t)a->value, a->flags);
}

static void run_helper(long ops)
{
	int fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 8, ENTRIES, NULL);
	struct brt_map *map;
	uint32_t key, seed = 1;
	uint64_t val = 0, sum = 0;
	double t0;

	for (key = 0; key < ENTRIES; key++)
		bpfrt_map_update_elem(fd, &key, &val, BPF_ANY);
	if (brt_map_from_fd(fd, &map))
		return;
	t0 = cpu_ns();
	for (long i = 0; i < ops; i++) {
		seed = seed * 1103515245 + 12345;
		key = seed % ENTRIES;
		sum += (uintptr_t)map->ops->lookup(map, &key);
	}
	printf("%-28s lookup %7.1f ns/op   (helper path, no copy)%s\n", "bpfrt map->ops->lookup",
	       (cpu_ns() - t0) / ops, sum ? "" : " ");
	brt_map_put(map);
	close(fd);
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 200000;

	printf("hash map, %d entries, 4-byte keys, 8-byte values, %ld random ops\n", ENTRIES, ops);
	run("kernel bpf(2)", sys_kernel, ops);
	run("bpfrt_bpf() (checked ptrs)", bpfrt_bpf, ops);
	run("bpfrt_map_*_elem()", wrap, ops);
	run_helper(ops);
	return 0;
}
