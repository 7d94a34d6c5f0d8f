/* test_lazy_hash.c - BPF_F_NO_PREALLOC hash maps reserve their elements as they are used
 * (maps/hash.c, "Lazy elements"), as the kernel allocates them at update:
 *  - a big map's file holds the buckets and allocation words at creation, not the
 *    elements (st_blocks), and grows with the keys; a preallocated map of the same shape
 *    is reserved whole (the control);
 *  - another process (a fork's child, which maps the file afresh) reads the keys, writes
 *    new ones the parent then reads;
 *  - on a tmpfs too small for the elements (a private mount, root only): creation
 *    succeeds, updates fail with ENOMEM once it is full (never SIGBUS), the keys in stay
 *    readable, a delete makes room again; a preallocated map of that size is ENOMEM at
 *    creation as before; bucket heads scribbled to name elements on pages nobody
 *    reserved read as absent keys.
 *  - a map whose elements would take more than the 4 GiB an object may reserve (4M
 *    values of 4 KiB: 16 GiB; the kernel creates such a map, and one of 16M) is created,
 *    its file reserving only its buckets and allocation words; a preallocated one is
 *    ENOMEM (obj.c, BRT_OBJ_MAX_BYTES).
 * Before session 18 the big map's file was reserved whole at creation (2-3.5 GiB for each
 * of NetObserv's maps) and the small-tmpfs creation failed with ENOMEM; before session 19
 * the 4 GiB cap applied to the whole file, hole included (ENOMEM for the 16 GiB map).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"

#define BIG_ENTRIES (1u << 20)
#define VALUE_SIZE 64 /* an element of 16 + 8 + 64 bytes: 93 MB of elements */
#define KEYS 20000

static int create(uint32_t entries, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags);

	return bpfrt_map_create(BPF_MAP_TYPE_HASH, "lazy", 8, VALUE_SIZE, entries, &o);
}

static uint64_t file_bytes(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_blocks * 512;
}

static void value_of(uint64_t *v, uint64_t key)
{
	for (int i = 0; i < VALUE_SIZE / 8; i++)
		v[i] = key * 31 + (uint64_t)i;
}

/* keys [from, to) present with their values: how many are */
static int count_present(int fd, uint64_t from, uint64_t to)
{
	uint64_t v[VALUE_SIZE / 8], want[VALUE_SIZE / 8];
	int n = 0;

	for (uint64_t k = from; k < to; k++) {
		value_of(want, k);
		n += !bpfrt_map_lookup_elem(fd, &k, v) && !memcmp(v, want, sizeof(v));
	}
	return n;
}

static int insert(int fd, uint64_t from, uint64_t to)
{
	uint64_t v[VALUE_SIZE / 8];
	int err;

	for (uint64_t k = from; k < to; k++) {
		value_of(v, k);
		err = bpfrt_map_update_elem(fd, &k, v, BPF_NOEXIST);
		if (err)
			return err;
	}
	return 0;
}

static void big_map(void)
{
	uint64_t elems = (uint64_t)(BIG_ENTRIES + 16) * (16 + 8 + VALUE_SIZE), at_create, grown;
	int fd, ctl, status;
	pid_t pid;

	T_CASE("no prealloc: elements reserved as used");
	fd = create(BIG_ENTRIES, BPF_F_NO_PREALLOC);
	T_ASSERT(fd >= 0);
	if (fd < 0)
		return;
	at_create = file_bytes(fd);
	/* buckets 8 MiB, allocation words 4 MiB, header: no element page */
	T_ASSERT(at_create < 16u << 20);
	T_EQ_INT(0, insert(fd, 1, KEYS + 1));
	T_EQ_INT(KEYS, count_present(fd, 1, KEYS + 1));
	grown = file_bytes(fd) - at_create;
	/* the keys' elements and at most a chunk beyond, nowhere near the whole */
	T_ASSERT(grown >= (uint64_t)KEYS * (16 + 8 + VALUE_SIZE));
	T_ASSERT(grown < (uint64_t)KEYS * (16 + 8 + VALUE_SIZE) + (1u << 20));

	T_CASE("no prealloc: another process reads and writes");
	pid = fork();
	if (pid == 0) {
		/* this process maps the file afresh: nothing of it populated here yet */
		int ok = count_present(fd, 1, KEYS + 1) == KEYS && !insert(fd, KEYS + 1, 2 * KEYS + 1);

		_exit(ok ? 0 : 1);
	}
	T_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	T_EQ_INT(2 * KEYS, count_present(fd, 1, 2 * KEYS + 1));
	for (uint64_t k = 1; k <= 2 * KEYS; k += 2)
		T_ASSERT(!bpfrt_map_delete_elem(fd, &k));
	T_EQ_INT(KEYS, count_present(fd, 1, 2 * KEYS + 1));
	/* deleted elements are reused: no growth for as many new keys */
	grown = file_bytes(fd);
	T_EQ_INT(0, insert(fd, 10 * KEYS, 11 * KEYS));
	T_ASSERT(file_bytes(fd) == grown);
	close(fd);

	T_CASE("preallocated control: reserved whole at creation");
	ctl = create(BIG_ENTRIES, 0);
	T_ASSERT(ctl >= 0);
	T_ASSERT(file_bytes(ctl) > elems);
	close(ctl);
}

static void huge_map(void)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	static uint64_t v[4096 / 8], got[4096 / 8];
	uint64_t k;
	struct stat st;
	int fd;

	T_CASE("no prealloc past the 4 GiB an object may reserve: created, reserved as used");
	fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "huge", 8, sizeof(v), 4u << 20, &o);
	T_EQ_INT(1, fd >= 0);
	if (fd < 0)
		return;
	T_EQ_INT(0, fstat(fd, &st));
	T_ASSERT((uint64_t)st.st_size > (16ull << 30));
	/* buckets 32 MiB, allocation words 16 MiB */
	T_ASSERT((uint64_t)st.st_blocks * 512 < (64u << 20));
	for (k = 1; k <= 1000; k++) {
		v[0] = k;
		v[511] = ~k;
		T_ASSERT(!bpfrt_map_update_elem(fd, &k, v, BPF_NOEXIST));
	}
	for (k = 1; k <= 1000; k++) {
		memset(got, 0, sizeof(got));
		T_ASSERT(!bpfrt_map_lookup_elem(fd, &k, got) && got[0] == k && got[511] == ~k);
	}
	/* the keys' elements and a chunk beyond */
	T_EQ_INT(0, fstat(fd, &st));
	T_ASSERT((uint64_t)st.st_blocks * 512 < (64u << 20) + 1000 * 4200 + (1u << 20));
	close(fd);
	T_CASE("preallocated, the same map is ENOMEM (the 4 GiB cap)");
	o.map_flags = 0;
	T_EQ_INT(-ENOMEM, bpfrt_map_create(BPF_MAP_TYPE_HASH, "huge", 8, sizeof(v), 4u << 20, &o));
}

/* In a child with its own mount namespace: $BPFRT_FS on a tmpfs of 24 MiB. */
static int small_tmpfs(const char *dir)
{
	uint64_t v[VALUE_SIZE / 8], k, n;
	int fd, err, bad = 0;
	uint32_t *region;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=24m,mode=1777"))
		return 77;
	setenv("BPFRT_FS", dir, 1);
#define CHECK(c) (bad |= !(c) ? (fprintf(stderr, "FAIL small tmpfs: %s\n", #c), 1) : 0)
	/* 93 MB of elements cannot fit; 12 MiB of buckets and allocation words do */
	CHECK(create(BIG_ENTRIES, 0) == -ENOMEM);
	fd = create(BIG_ENTRIES, BPF_F_NO_PREALLOC);
	CHECK(fd >= 0);
	if (fd < 0)
		return 1;
	for (k = 1, err = 0; k < BIG_ENTRIES && !err; k++) {
		value_of(v, k);
		err = bpfrt_map_update_elem(fd, &k, v, BPF_NOEXIST);
	}
	n = k - 2; /* keys 1..n went in */
	CHECK(err == -ENOMEM);
	CHECK(n > 1000 && n < BIG_ENTRIES / 2);
	CHECK(count_present(fd, 1, n + 1) == (int)n);
	/* a delete gives its element back: the next key takes it */
	k = 1;
	CHECK(!bpfrt_map_delete_elem(fd, &k));
	k = BIG_ENTRIES + 5;
	value_of(v, k);
	CHECK(!bpfrt_map_update_elem(fd, &k, v, BPF_NOEXIST));
	CHECK(count_present(fd, BIG_ENTRIES + 5, BIG_ENTRIES + 6) == 1);
	/* every bucket head made to name the last element, on a page nobody reserved (and
	 * none can be: the tmpfs is full): absent keys, no SIGBUS */
	region = mmap(NULL, 16u << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(region != MAP_FAILED);
	if (region != MAP_FAILED) {
		for (uint32_t b = 0; b < BIG_ENTRIES; b++)
			region[16 + 2 * b + 1] = BIG_ENTRIES + 16;
		CHECK(count_present(fd, 2, 200) == 0);
		munmap(region, 16u << 20);
	}
	close(fd);
	return bad;
#undef CHECK
}

int main(void)
{
	char dir[] = "/tmp/bpfrt-lazy.XXXXXX";
	int status;
	pid_t pid;

	big_map();
	huge_map();
	T_CASE("no prealloc on a full tmpfs: ENOMEM at update, never SIGBUS");
	if (geteuid()) {
		printf("not root: the small tmpfs case is skipped\n");
		return t_done();
	}
	T_ASSERT(t_scratch_dir(dir));
	pid = fork();
	if (pid == 0)
		_exit(small_tmpfs(dir));
	T_ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("no private mount namespace: the small tmpfs case is skipped\n");
		return t_done();
	}
	if (WIFSIGNALED(status))
		T_FAIL("child killed by signal %d", WTERMSIG(status));
	else
		T_EQ_INT(0, WEXITSTATUS(status));
	return t_done();
}
