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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "util/util.h"

#define NKEYS 40
#define MAXKEY 512

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

static int child(int out)
{
	int fds[2][NMAPS], r[2 * NMAPS + 1];
	char stack[1 << 18];

	/* the stack it will use, touched while there is memory (kept: the asm reads it) */
	memset(stack, 1, sizeof(stack));
	__asm__ volatile("" : : "r"(stack) : "memory");
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

int main(void)
{
	int p[2], st = 0, r[2 * NMAPS + 1];
	pid_t pid;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	T_SKIP("under a sanitizer (its allocator is not the process's to use up)");
#endif
	if (geteuid() || create_map(kernel_bpf, BPF_MAP_TYPE_HASH, 4, 8, 1, 0, 0) < 0)
		T_SKIP("needs root and the kernel's bpf()");
	fflush(stdout);
	if (pipe(p))
		T_SKIP("no pipe");
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(child(p[1]));
	}
	close(p[1]);
	T_CASE("the child walked every map on both sides");
	T_EQ_INT(1, read(p[0], r, sizeof(r)) == (ssize_t)sizeof(r));
	T_EQ_INT(pid, waitpid(pid, &st, 0));
	T_EQ_INT(0, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	if (st)
		return t_done();
	printf("memory used up in the child: %s\n", r[2 * NMAPS] ? "yes" : "no");
	for (int i = 0; i < NMAPS; i++) {
		T_CASE(maps[i].name);
		if (r[i] != r[NMAPS + i])
			printf("differs: %s: kernel %d, bpfrt %d\n", maps[i].name, r[i], r[NMAPS + i]);
		T_EQ_INT(r[i], r[NMAPS + i]);
		/* the kernel's answer: every key, then ENOENT */
		uint32_t sum = 0;

		for (uint32_t j = 0; j < maps[i].nkeys; j++)
			sum += key_of(i, j);
		T_EQ_INT((int)(maps[i].nkeys * 10000 + sum % 10000), r[i]);
	}
	T_CASE("the child's memory was used up (else the walks proved nothing)");
	T_EQ_INT(1, r[2 * NMAPS]);
	return t_done();
}
