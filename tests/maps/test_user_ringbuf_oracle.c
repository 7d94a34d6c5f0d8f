/* test_user_ringbuf_oracle.c - BPF_MAP_TYPE_USER_RINGBUF (maps/ringbuf.c) against the
 * kernel: MAP_CREATE's rules and the element commands' errnos through bpf(2) and
 * bpfrt_bpf(); then tests/progs/user_ringbuf.bpf.o loaded into each, the same records
 * written by this process into each ring with the kernel's layout and header (length,
 * BUSY while written, DISCARD to skip; producer_pos advanced at reserve), and the
 * program's bpf_user_ringbuf_drain() run by BPF_PROG_TEST_RUN after each step: the
 * helper's answer, the callback's count and sum, short records and consumer_pos must be
 * equal.  bpfrt's map file holds the data once, so its producer mapping is made
 * piecewise (producer page and data, then the data again), as the preload does for
 * libbpf's user_ring_buffer__new().  Skips without root or clang's objects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "elf/elf_test_util.h"

#define PAGE 4096u
#define SIZE 4096u /* the ring's data, max_entries of the object's map */
#define BUSY (1u << 31)
#define DISCARD (1u << 30)

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

static int create(bpf_fn bpf, uint32_t ks, uint32_t vs, uint32_t max, uint32_t flags)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_USER_RINGBUF;
	a.key_size = ks;
	a.value_size = vs;
	a.max_entries = max;
	a.map_flags = flags;
	fd = bpf(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static int elem(bpf_fn bpf, int cmd, int fd)
{
	uint64_t key = 0, next = 0, val[2] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a.next_key = (uint64_t)(uintptr_t)&next;
	else
		a.value = (uint64_t)(uintptr_t)val;
	return bpf(cmd, &a, sizeof(a)) < 0 ? -errno : 0;
}

/* one side: its object, the ring's mappings, the program */
struct side {
	const char *name;
	int kernel;
	struct bpfrt_object *obj;
	int prog, urb, out;
	volatile uint64_t *cons, *prod;
	unsigned char *data; /* SIZE bytes, mapped twice */
	unsigned char *base;
	size_t len;
};

static int open_side(struct side *s)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = s->kernel);
	unsigned char *area;

	s->obj = bpfrt_object_open_file(corpus_path("user_ringbuf"), &o);
	if (!s->obj || bpfrt_object_load(s->obj)) {
		fprintf(stderr, "%s: load: %s\n%s\n", s->name, strerror(errno),
			s->obj && bpfrt_object_log(s->obj) ? bpfrt_object_log(s->obj) : "");
		return -1;
	}
	s->prog = bpfrt_program_fd(bpfrt_object_find_program_by_name(s->obj, "drain"));
	s->urb = bpfrt_map__fd(bpfrt_object_find_map_by_name(s->obj, "urb"));
	s->out = bpfrt_map__fd(bpfrt_object_find_map_by_name(s->obj, "out"));
	s->cons = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, s->urb, 0);
	if (s->cons == MAP_FAILED)
		return -1;
	s->len = PAGE + 2 * SIZE;
	if (s->kernel) {
		area = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, s->urb, PAGE);
		if (area == MAP_FAILED)
			return -1;
	} else {
		area = mmap(NULL, s->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED ||
		    mmap(area, PAGE + SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s->urb,
			 PAGE) == MAP_FAILED ||
		    mmap(area + PAGE + SIZE, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 s->urb, 2 * PAGE) == MAP_FAILED)
			return -1;
	}
	s->base = area;
	s->prod = (volatile uint64_t *)(void *)area;
	s->data = area + PAGE;
	return 0;
}

/* reserve a record of len bytes: header BUSY, producer_pos past it (libbpf's order) */
static unsigned char *reserve(struct side *s, uint32_t len)
{
	uint64_t p = *s->prod;
	unsigned char *hdr = s->data + (p & (SIZE - 1));

	__atomic_store_n((uint32_t *)(void *)hdr, len | BUSY, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(void *)(hdr + 4), 0, __ATOMIC_RELAXED);
	__atomic_store_n(s->prod, p + ((len + 8 + 7) & ~7u), __ATOMIC_RELEASE);
	return hdr;
}

static void commit(unsigned char *hdr, int discard)
{
	uint32_t len = __atomic_load_n((uint32_t *)(void *)hdr, __ATOMIC_RELAXED) & ~BUSY;

	__atomic_store_n((uint32_t *)(void *)hdr, len | (discard ? DISCARD : 0),
			 __ATOMIC_RELEASE);
}

static void put(struct side *s, int64_t v, uint32_t len, int discard)
{
	unsigned char *hdr = reserve(s, len);

	memcpy(hdr + 8, &v, len < 8 ? len : 8);
	commit(hdr, discard);
}

/* run the program; its out value and the ring's consumer_pos */
static void run(struct side *s, int64_t res[6])
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;
	int k = 0;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)s->prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	res[0] = (s->kernel ? kernel_bpf : bpfrt_bpf)(BPF_PROG_TEST_RUN, &a, sizeof(a)) < 0
			 ? -errno
			 : 0;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)s->out;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&res[1];
	if ((s->kernel ? kernel_bpf : bpfrt_bpf)(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
		res[1] = -1000 - errno;
	res[5] = (int64_t)*s->cons;
}

static void compare(struct side *sd, const char *step)
{
	int64_t r[2][6];

	T_CASE(step);
	run(&sd[0], r[0]);
	run(&sd[1], r[1]);
	if (getenv("URB_ORACLE_SHOW"))
		printf("%s: kernel %lld drained %lld samples %lld sum %lld short %lld cons %lld | "
		       "bpfrt %lld drained %lld samples %lld sum %lld short %lld cons %lld\n",
		       step, (long long)r[0][0], (long long)r[0][1], (long long)r[0][2],
		       (long long)r[0][3], (long long)r[0][4], (long long)r[0][5],
		       (long long)r[1][0], (long long)r[1][1], (long long)r[1][2],
		       (long long)r[1][3], (long long)r[1][4], (long long)r[1][5]);
	for (int i = 0; i < 6; i++)
		T_EQ_INT(r[0][i], r[1][i]);
}

int main(void)
{
	static const struct {
		const char *name;
		uint32_t ks, vs, max, flags;
	} creates[] = {
		{ "one page", 0, 0, 4096, 0 },
		{ "16 pages", 0, 0, 65536, 0 },
		{ "NUMA node 0", 0, 0, 4096, BPF_F_NUMA_NODE },
		{ "a key", 4, 0, 4096, 0 },
		{ "a value", 0, 8, 4096, 0 },
		{ "no entries", 0, 0, 0, 0 },
		{ "not a power of 2", 0, 0, 3 * 4096, 0 },
		{ "less than a page", 0, 0, 2048, 0 },
		{ "BPF_F_NO_PREALLOC", 0, 0, 4096, BPF_F_NO_PREALLOC },
		{ "BPF_F_RDONLY_PROG", 0, 0, 4096, BPF_F_RDONLY_PROG },
	};
	static const int cmds[] = { BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM, BPF_MAP_DELETE_ELEM,
				    BPF_MAP_GET_NEXT_KEY };
	struct side sd[2] = { { .name = "kernel", .kernel = 1 }, { .name = "bpfrt" } };

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	if (access(corpus_path("user_ringbuf"), R_OK))
		T_SKIP("tests/progs not built (no clang)");
	for (size_t i = 0; i < sizeof(creates) / sizeof(creates[0]); i++) {
		int k = create(kernel_bpf, creates[i].ks, creates[i].vs, creates[i].max,
			       creates[i].flags);
		int b = create(bpfrt_bpf, creates[i].ks, creates[i].vs, creates[i].max,
			       creates[i].flags);

		T_CASE(creates[i].name);
		T_EQ_INT(k < 0 ? k : 0, b < 0 ? b : 0);
		if (k >= 0 && b >= 0 && i == 0)
			for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
				T_EQ_INT(elem(kernel_bpf, cmds[c], k), elem(bpfrt_bpf, cmds[c], b));
		if (k >= 0)
			close(k);
		if (b >= 0)
			close(b);
	}
	for (int i = 0; i < 2; i++)
		if (open_side(&sd[i])) {
			T_CASE(sd[i].name);
			T_FAIL("cannot load user_ringbuf.bpf.o or map its ring");
			return t_done();
		}
	compare(sd, "empty ring");
	for (int i = 0; i < 2; i++) {
		put(&sd[i], 1, 8, 0);
		put(&sd[i], 2, 16, 0);
		put(&sd[i], 3, 8, 0);
	}
	compare(sd, "three records");
	for (int i = 0; i < 2; i++) {
		put(&sd[i], 10, 8, 0);
		put(&sd[i], 1000, 8, 1);
		put(&sd[i], 20, 24, 0);
	}
	compare(sd, "a discarded record between two");
	for (int i = 0; i < 2; i++)
		put(&sd[i], 7, 4, 0);
	compare(sd, "a record too short for the read");
	for (int i = 0; i < 2; i++)
		put(&sd[i], 0, 0, 0);
	compare(sd, "an empty record");
	for (int i = 0; i < 2; i++) {
		put(&sd[i], 5, 8, 0);
		put(&sd[i], 99, 8, 0);
		put(&sd[i], 6, 8, 0);
	}
	compare(sd, "the callback stops at 99");
	compare(sd, "the rest after the stop");
	{
		unsigned char *h[2];

		for (int i = 0; i < 2; i++) {
			h[i] = reserve(&sd[i], 8);
			memcpy(h[i] + 8, &(int64_t){ 40 }, 8);
			put(&sd[i], 2, 8, 0);
		}
		compare(sd, "a record still BUSY at the head");
		for (int i = 0; i < 2; i++)
			commit(h[i], 0);
		compare(sd, "after it is committed");
	}
	for (int i = 0; i < 2; i++)
		for (int64_t v = 1; v <= 200; v++)
			put(&sd[i], v, 8 + (uint32_t)(v % 3) * 8, 0);
	compare(sd, "200 records, written over unread ones past a ring's worth");
	for (int i = 0; i < 2; i++) {
		unsigned char *hdr = reserve(&sd[i], 8);

		commit(hdr, 0);
		/* a length past producer_pos: the kernel's -EINVAL, nothing consumed */
		__atomic_store_n((uint32_t *)(void *)hdr, 64, __ATOMIC_RELEASE);
	}
	compare(sd, "a record longer than what was produced");
	for (int i = 0; i < 2; i++) {
		__atomic_store_n(sd[i].prod, *sd[i].prod + 4, __ATOMIC_RELEASE);
	}
	compare(sd, "producer_pos not a multiple of 8");
	for (int i = 0; i < 2; i++) {
		munmap((void *)(uintptr_t)sd[i].cons, PAGE);
		munmap(sd[i].base, sd[i].len);
		bpfrt_object_close(sd[i].obj);
	}
	return t_done();
}
