/* test_load_calls.c - system calls of the object loader (src/object/load.c, src/obj/obj.c)
 * counted by interposing them in this executable (the library is linked in statically, so
 * its calls of fstat, mmap and munmap come here):
 * - a load resolves the maps and the BTF object it has just created from its batch's memo:
 *   one fstat per object created (its inode), none when its programs use its maps (the
 *   memo of a created fd was dropped by the command that handed it out: an fstat per map
 *   and program using it);
 * - the close unmaps the maps' adjacent mappings in one call, also when the maps the
 *   program held die a sweep round after the others (a munmap per round and run). */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "elf/elf_test_util.h"
#include "harness.h"

static int counting;
static int n_fstat, n_munmap;
#define MAX_MAPS 64
static struct {
	uintptr_t lo, hi;
} maps[MAX_MAPS], unmaps[MAX_MAPS];
static int n_maps, n_unmaps;

int fstat(int fd, struct stat *st)
{
	n_fstat += counting;
	return (int)syscall(SYS_fstat, fd, st);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	if (counting && r != -1 && fd >= 0 && (flags & MAP_SHARED) && n_maps < MAX_MAPS) {
		maps[n_maps].lo = (uintptr_t)r;
		maps[n_maps++].hi = (uintptr_t)r + len;
	}
	return r == -1 ? MAP_FAILED : (void *)r;
}

int munmap(void *addr, size_t len)
{
	if (counting && n_unmaps < MAX_MAPS) {
		n_munmap++;
		unmaps[n_unmaps].lo = (uintptr_t)addr;
		unmaps[n_unmaps++].hi = (uintptr_t)addr + len;
	}
	return (int)syscall(SYS_munmap, addr, len);
}

static int count_maps(struct bpfrt_object *obj)
{
	int n = 0;

	for (struct bpfrt_map *m = bpfrt_object_next_map(obj, NULL); m;
	     m = bpfrt_object_next_map(obj, m))
		n++;
	return n;
}

static int count_progs(struct bpfrt_object *obj)
{
	int n = 0;

	for (struct bpfrt_program *p = bpfrt_object_next_program(obj, NULL); p;
	     p = bpfrt_object_next_program(obj, p))
		n++;
	return n;
}

/* runs of end-to-end ranges among maps[] (sorted in place) */
static int runs(void)
{
	int r = 0;

	for (int i = 0; i < n_maps; i++)
		for (int j = i + 1; j < n_maps; j++)
			if (maps[j].lo < maps[i].lo) {
				uintptr_t lo = maps[i].lo, hi = maps[i].hi;

				maps[i] = maps[j];
				maps[j].lo = lo;
				maps[j].hi = hi;
			}
	for (int i = 0; i < n_maps; i++)
		r += !i || maps[i].lo != maps[i - 1].hi;
	return r;
}

static int unmapped(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < n_unmaps; i++)
		if (unmaps[i].lo <= lo && hi <= unmaps[i].hi)
			return 1;
	return 0;
}

static void test_spread(void)
{
	struct bpfrt_object *obj;
	int nmaps, nprogs, expect;

	/* a first load and close: the id counters' file and the directory are set up */
	obj = bpfrt_object_open_file(corpus_path("spread_maps"), NULL);
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	T_EQ_INT(0, bpfrt_object_load(obj));
	bpfrt_object_close(obj);

	T_CASE("a load's programs resolve the maps it created without an fstat each");
	obj = bpfrt_object_open_file(corpus_path("spread_maps"), NULL);
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	nmaps = count_maps(obj);
	nprogs = count_progs(obj);
	T_EQ_INT(4, nmaps);
	T_EQ_INT(1, nprogs);
	n_fstat = 0;
	n_maps = 0;
	counting = 1;
	T_EQ_INT(0, bpfrt_object_load(obj));
	counting = 0;
	/* one per creation: four maps, the program, the BTF object */
	printf("fstat calls in the load: %d (objects created: %d)\n", n_fstat, nmaps + nprogs + 1);
	T_ASSERT(n_fstat <= nmaps + nprogs + 1);
	T_EQ_INT(nmaps, n_maps);

	T_CASE("the close unmaps the maps' adjacent mappings in one call");
	expect = runs();
	n_munmap = 0;
	n_unmaps = 0;
	counting = 1;
	bpfrt_object_close(obj);
	counting = 0;
	printf("munmap calls in the close: %d (runs of mappings: %d)\n", n_munmap, expect);
	T_EQ_INT(expect, n_munmap);
	for (int i = 0; i < n_maps; i++)
		T_ASSERT(unmapped(maps[i].lo, maps[i].hi));
}

int main(void)
{
	size_t len;
	unsigned char *probe = corpus_read("spread_maps", &len);

	if (!probe)
		T_SKIP("corpus not built (clang missing)");
	free(probe);
	test_spread();
	return t_done();
}
