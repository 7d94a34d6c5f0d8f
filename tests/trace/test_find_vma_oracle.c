/* test_find_vma_oracle.c - bpf_find_vma() (trace/vma.c) against the kernel:
 * tests/progs/find_vma.bpf.o loaded into each side and test-run as a raw tracepoint (the
 * kernel's current is this thread, so both look in this process's address space) on
 * addresses of this process (its code, a global, its stack, the heap, the last byte of a
 * mapping and the page after it, the last user page, a kernel address, 0) and with flags: the helper's
 * answer, the callback's calls and the vm_start / vm_end it read must be equal.  Skips
 * without root or clang's objects.
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

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned size);

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

struct side {
	const char *name;
	int kernel;
	bpf_fn bpf;
	struct bpfrt_object *obj;
	int prog, in, out;
};

struct in {
	uint64_t addr, flags;
};

struct out {
	int64_t ret, calls;
	uint64_t start, end;
};

static int open_side(struct side *s)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = s->kernel);

	s->bpf = s->kernel ? kernel_bpf : bpfrt_bpf;
	s->obj = bpfrt_object_open_file(corpus_path("find_vma"), &o);
	if (!s->obj || bpfrt_object_load(s->obj)) {
		fprintf(stderr, "%s: load: %s\n%s\n", s->name, strerror(errno),
			s->obj && bpfrt_object_log(s->obj) ? bpfrt_object_log(s->obj) : "");
		return -1;
	}
	s->prog = bpfrt_program_fd(bpfrt_object_find_program_by_name(s->obj, "find"));
	s->in = bpfrt_map__fd(bpfrt_object_find_map_by_name(s->obj, "in"));
	s->out = bpfrt_map__fd(bpfrt_object_find_map_by_name(s->obj, "out"));
	return 0;
}

static int elem(struct side *s, int cmd, int fd, void *value)
{
	union bpf_attr a;
	int k = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)value;
	return s->bpf(cmd, &a, sizeof(a)) ? -errno : 0;
}

/* one run: the test run's errno, then the program's out */
static int run(struct side *s, uint64_t addr, uint64_t flags, struct out *o)
{
	struct in i = { addr, flags };
	union bpf_attr a;
	int err;

	memset(o, 0, sizeof(*o));
	if (elem(s, BPF_MAP_UPDATE_ELEM, s->in, &i) || elem(s, BPF_MAP_UPDATE_ELEM, s->out, o))
		return -1000;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)s->prog;
	err = s->bpf(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : 0;
	if (elem(s, BPF_MAP_LOOKUP_ELEM, s->out, o))
		return -1001;
	return err;
}

static int a_global = 7;

static void case_of(struct side *sd, const char *what, uint64_t addr, uint64_t flags)
{
	struct out o[2];
	int err[2];

	T_CASE(what);
	for (int i = 0; i < 2; i++)
		err[i] = run(&sd[i], addr, flags, &o[i]);
	if (getenv("FIND_VMA_SHOW"))
		printf("%s: kernel %d ret %lld calls %lld %llx-%llx | bpfrt %d ret %lld calls %lld "
		       "%llx-%llx\n", what, err[0], (long long)o[0].ret, (long long)o[0].calls,
		       (unsigned long long)o[0].start, (unsigned long long)o[0].end, err[1],
		       (long long)o[1].ret, (long long)o[1].calls, (unsigned long long)o[1].start,
		       (unsigned long long)o[1].end);
	T_EQ_INT(err[0], err[1]);
	T_EQ_INT(o[0].ret, o[1].ret);
	T_EQ_INT(o[0].calls, o[1].calls);
	T_EQ_INT(o[0].start, o[1].start);
	T_EQ_INT(o[0].end, o[1].end);
}

int main(void)
{
	struct side sd[2] = { { .name = "kernel", .kernel = 1 }, { .name = "bpfrt" } };
	int on_stack = 1;
	char *heap = malloc(64);
	unsigned char *page = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	if (access(corpus_path("find_vma"), R_OK))
		T_SKIP("tests/progs not built (no clang)");
	if (!heap || page == MAP_FAILED)
		T_SKIP("no memory");
	/* a hole: the middle page unmapped, so the first has a known end */
	munmap(page + 4096, 4096);
	for (int i = 0; i < 2; i++)
		if (open_side(&sd[i])) {
			T_CASE(sd[i].name);
			T_FAIL("cannot load find_vma.bpf.o");
			return t_done();
		}
	case_of(sd, "code (main)", (uint64_t)(uintptr_t)&main, 0);
	case_of(sd, "a global", (uint64_t)(uintptr_t)&a_global, 0);
	case_of(sd, "the stack", (uint64_t)(uintptr_t)&on_stack, 0);
	case_of(sd, "the heap", (uint64_t)(uintptr_t)heap, 0);
	case_of(sd, "a mapping's first byte", (uint64_t)(uintptr_t)page, 0);
	case_of(sd, "a mapping's last byte", (uint64_t)(uintptr_t)page + 4095, 0);
	case_of(sd, "the page after it (unmapped, then reused)", (uint64_t)(uintptr_t)page + 4096, 0);
	case_of(sd, "the mapping after the hole", (uint64_t)(uintptr_t)page + 2 * 4096, 0);
	case_of(sd, "address 0", 0, 0);
	case_of(sd, "the last user page", 0x7ffffffff000ull, 0);
	case_of(sd, "a kernel address", 0xffff888000000000ull, 0);
	case_of(sd, "flags 1", (uint64_t)(uintptr_t)&a_global, 1);
	case_of(sd, "flags 1, unmapped", 0, 1);
	for (int i = 0; i < 2; i++)
		bpfrt_object_close(sd[i].obj);
	munmap(page, 4096);
	munmap(page + 2 * 4096, 4096);
	free(heap);
	return t_done();
}
