/* test_walk_nomem_oracle.c - BPF_MAP_GET_NEXT_KEY over the hash maps in a process that
 * has no memory left, against the kernel.  The kernel's htab_map_get_next_key() allocates
 * nothing: a walk of every key ends ENOENT whatever the process's memory.  bpfrt's key
 * walk copies a bucket's chain (maps/hash_walk.c); until session 23 it grew the copy with
 * realloc under the bucket's lock, and a process out of memory got ENOMEM from the first
 * call.  A child makes the maps on both sides (keys 1..NKEYS), then uses up its address
 * space (RLIMIT_AS just above what it has, malloc until nothing more is given), walks
 * every map through syscall(__NR_bpf) and bpfrt_bpf() and sends the answers back.  Not
 * under a sanitizer (its shadow memory and allocator are not the process's to use up).
 * The BPF_F_ZERO_SEED maps hold keys that bpfrt hashes to one bucket (its hash with seed
 * 0, util.h's brt_keyhash()): a chain longer than the walk's stack room, which a process
 * out of memory must walk too (the kernel's walk has no room to run out of).
 *
 * Then the same walks through read-only fds: a root child makes and pins the maps (mode
 * 0444) on both sides, a child become uid 65534 gets them with BPF_F_RDONLY (bpfrt maps
 * them read-only and walks without the buckets' locks), uses up its memory and walks.
 * Until session 24 bpfrt answered ENOMEM there for a chain longer than the stack room.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "util/util.h"

#define NKEYS 40
#define MAXKEY 512

/* the read-only phase's pins: a directory per side */
static char fsdir[64], kdir[64];

static const struct {
	const char *name;
	uint32_t type, flags, key_size, nkeys;
} maps[] = {
	{ "hash", BPF_MAP_TYPE_HASH, 0, 4, NKEYS },
	{ "hash BPF_F_NO_PREALLOC", BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, 4, NKEYS },
	{ "percpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 0, 4, NKEYS },
	{ "lru_hash", BPF_MAP_TYPE_LRU_HASH, 0, 4, NKEYS },
	{ "lru_percpu_hash", BPF_MAP_TYPE_LRU_PERCPU_HASH, 0, 4, NKEYS },
	/* one bucket's chain of 40 (the stack room holds 32 positions) */
	{ "hash BPF_F_ZERO_SEED, 40 keys in a bucket", BPF_MAP_TYPE_HASH, BPF_F_ZERO_SEED, 4,
	  NKEYS },
	{ "lru_hash BPF_F_ZERO_SEED, 40 keys in a bucket", BPF_MAP_TYPE_LRU_HASH,
	  BPF_F_ZERO_SEED, 4, NKEYS },
	/* 512-byte keys: the room holds 4 */
	{ "hash BPF_F_ZERO_SEED, 6 512-byte keys in a bucket", BPF_MAP_TYPE_HASH,
	  BPF_F_ZERO_SEED, MAXKEY, 6 },
};
#define NMAPS (int)(sizeof(maps) / sizeof(maps[0]))

/* per-CPU values: num_possible_cpus() * 8 bytes */
static uint64_t vbuf[4096];

/* The j-th key of map i (its first 4 bytes; the rest zero): 1, 2, ... or, in a
 * BPF_F_ZERO_SEED map, the j-th number whose key bpfrt puts in bucket 0 of 64. */
static uint32_t key_of(int i, uint32_t j)
{
	unsigned char key[MAXKEY] = { 0 };
	uint32_t k = 0;

	if (!(maps[i].flags & BPF_F_ZERO_SEED))
		return j + 1;
	for (uint32_t found = 0;; ) {
		k++;
		memcpy(key, &k, 4);
		if (!(brt_keyhash(key, maps[i].key_size, 0) & 63) && found++ == j)
			return k;
	}
}

static int make(sys_fn sys, int i)
{
	int fd = create_map(sys, maps[i].type, maps[i].key_size, 8, 64, maps[i].flags, 0);
	unsigned char key[MAXKEY] = { 0 };

	for (uint32_t j = 0; fd >= 0 && j < maps[i].nkeys; j++) {
		uint32_t k = key_of(i, j);

		memcpy(key, &k, 4);
		if (elem(sys, BPF_MAP_UPDATE_ELEM, fd, key, vbuf, BPF_ANY))
			return -1000;
	}
	return fd;
}

/* a walk of every key: count * 10000 + the sum of the keys' first words (mod 10000), or
 * -errno when it ends otherwise than ENOENT */
static int walk(sys_fn sys, int fd)
{
	unsigned char prev[MAXKEY] = { 0 }, next[MAXKEY] = { 0 };
	uint32_t sum = 0, k;
	union bpf_attr a;
	int count = 0, r;

	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		a.key = count ? (uint64_t)(uintptr_t)prev : 0;
		a.next_key = (uint64_t)(uintptr_t)next;
		r = sys(BPF_MAP_GET_NEXT_KEY, &a, sizeof(a)) ? -errno : 0;
		if (r || count > NKEYS)
			break;
		memcpy(&k, next, 4);
		sum += k;
		memcpy(prev, next, MAXKEY);
		count++;
	}
	return r == -ENOENT ? count * 10000 + (int)(sum % 10000) : r;
}

/* the address space used up: 1 when a small malloc fails afterwards */
static int use_up_memory(void)
{
	struct rlimit rl;
	unsigned long vm = 0;
	void **list = NULL, *p;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%lu", &vm) != 1)
		return 0;
	fclose(f);
	rl.rlim_cur = rl.rlim_max = vm * (unsigned long)sysconf(_SC_PAGESIZE) + (8ul << 20);
	if (setrlimit(RLIMIT_AS, &rl))
		return 0;
	for (size_t size = 1ul << 20; size >= sizeof(void *); size /= 2)
		while ((p = malloc(size))) {
			*(void **)p = list;
			list = p;
		}
	p = malloc(64);
	return p == NULL;
}

/* a pin's path: the kernel's in kdir, bpfrt's in fsdir */
static void pin_path(sys_fn sys, int i, char *path, size_t len)
{
	snprintf(path, len, "%s/m%d", sys == kernel_bpf ? kdir : fsdir, i);
}

static int path_op(sys_fn sys, int cmd, int fd, int i, uint32_t flags)
{
	char path[128];
	union bpf_attr a;

	pin_path(sys, i, path, sizeof(path));
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)(fd < 0 ? 0 : fd);
	a.file_flags = flags;
	return sys(cmd, &a, sizeof(a));
}

/* root: every map made and pinned 0444 on both sides */
static int pinner(int out)
{
	char path[128];
	int r = 0;

	for (int i = 0; i < NMAPS; i++)
		for (int side = 0; side < 2; side++) {
			sys_fn sys = side ? bpfrt_bpf : kernel_bpf;
			int fd = make(sys, i);

			pin_path(sys, i, path, sizeof(path));
			if (fd < 0 || path_op(sys, BPF_OBJ_PIN, fd, i, 0) || chmod(path, 0444))
				r = 1;
		}
	return write(out, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 3;
}

static int child(int out)
{
	int fds[2][NMAPS], r[2 * NMAPS + 1];
	char stack[1 << 18];

	/* the stack it will use, touched while there is memory (kept: the asm reads it) */
	memset(stack, 1, sizeof(stack));
	__asm__ volatile("" : : "r"(stack) : "memory");
	if (fsdir[0]) {
		/* the read-only phase: the maps pinned by pinner(), got read-only */
		if (t_become_nobody())
			return 77;
		for (int i = 0; i < NMAPS; i++) {
			fds[0][i] = path_op(kernel_bpf, BPF_OBJ_GET, -1, i, BPF_F_RDONLY);
			fds[1][i] = path_op(bpfrt_bpf, BPF_OBJ_GET, -1, i, BPF_F_RDONLY);
		}
	} else
		for (int i = 0; i < NMAPS; i++) {
			fds[0][i] = make(kernel_bpf, i);
			fds[1][i] = make(bpfrt_bpf, i);
		}
	r[2 * NMAPS] = use_up_memory();
	for (int i = 0; i < NMAPS; i++) {
		r[i] = fds[0][i] < 0 ? -2000 : walk(kernel_bpf, fds[0][i]);
		r[NMAPS + i] = fds[1][i] < 0 ? -2000 : walk(bpfrt_bpf, fds[1][i]);
	}
	return write(out, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 3;
}

/* one phase's answers: each map's walk on both sides, and the kernel's the whole walk */
static void compare(const char *phase, const int *r)
{
	char name[160];

	printf("%s: memory used up in the child: %s\n", phase, r[2 * NMAPS] ? "yes" : "no");
	for (int i = 0; i < NMAPS; i++) {
		uint32_t sum = 0;

		snprintf(name, sizeof(name), "%s: %s", phase, maps[i].name);
		T_CASE(name);
		if (r[i] != r[NMAPS + i])
			printf("differs: %s: kernel %d, bpfrt %d\n", name, r[i], r[NMAPS + i]);
		T_EQ_INT(r[i], r[NMAPS + i]);
		/* the kernel's answer: every key, then ENOENT */
		for (uint32_t j = 0; j < maps[i].nkeys; j++)
			sum += key_of(i, j);
		T_EQ_INT((int)(maps[i].nkeys * 10000 + sum % 10000), r[i]);
	}
	snprintf(name, sizeof(name), "%s: the child's memory was used up (else the walks "
		 "proved nothing)", phase);
	T_CASE(name);
	T_EQ_INT(1, r[2 * NMAPS]);
}

int main(void)
{
	int st, made = 1, r[2 * NMAPS + 1];
	char path[128];

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	T_SKIP("under a sanitizer (its allocator is not the process's to use up)");
#endif
	if (geteuid() || create_map(kernel_bpf, BPF_MAP_TYPE_HASH, 4, 8, 1, 0, 0) < 0)
		T_SKIP("needs root and the kernel's bpf()");
	st = t_in_child(child, r, sizeof(r));
	T_CASE("the child walked every map on both sides");
	T_EQ_INT(0, st);
	if (!st)
		compare("read-write", r);

	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-walkro-XXXXXX");
	snprintf(kdir, sizeof(kdir), "/sys/fs/bpf/bpfrt-walkro-%d", (int)getpid());
	if (!t_scratch_dir(fsdir) || chmod(fsdir, 0755) || mkdir(kdir, 0755)) {
		printf("read-only phase skipped: cannot make %s or %s: %s\n", fsdir, kdir,
		       strerror(errno));
		return t_done();
	}
	setenv("BPFRT_FS", fsdir, 1);
	/* pinned by a child: this process never maps them, so the walker's are read-only */
	st = t_in_child(pinner, &made, sizeof(made));
	T_CASE("root pinned the maps on both sides");
	T_EQ_INT(0, st ? st : made);
	st = st || made ? 1 : t_in_child(child, r, sizeof(r));
	for (int i = 0; i < NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/m%d", kdir, i);
		unlink(path);
	}
	rmdir(kdir);
	if (st == 77) {
		printf("read-only phase skipped: cannot become uid %d\n", T_NOBODY);
		return t_done();
	}
	T_CASE("uid 65534 walked every map through read-only fds on both sides");
	T_EQ_INT(0, st);
	if (!st)
		compare("read-only", r);
	return t_done();
}
