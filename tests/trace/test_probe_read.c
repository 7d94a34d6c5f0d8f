/* test_probe_read.c - bpf_probe_read_kernel/user and their _str forms, run by programs on
 * addresses of this process: good copies, truncated strings, and bad addresses (NULL, an
 * unmapped page, a range running into one) failing with -EFAULT and a zeroed buffer.
 */
#include <sys/mman.h>

#include "trace_test.h"

#define RAW BPF_PROG_TYPE_RAW_TRACEPOINT
#define VAL 64

static const char prog_fmt[] =
	"mov %%r6, %%r1\nstw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\n"
	"lddw %%r1, map_fd %d\ncall 1\njeq %%r0, 0, +5\nmov %%r1, %%r0\nmov %%r2, %u\n"
	"ldxdw %%r3, [%%r6+0]\ncall %s\nexit\nmov %%r0, 12345\nexit\n";

struct rcase {
	const char *name;
	const char *helper;
	int src;          /* which source address (below) */
	unsigned size;
	int32_t ret;      /* helper's return */
	const char *want; /* bytes expected at the start of the value (NULL: all zero) */
	unsigned want_len;
};

enum { SRC_TEXT, SRC_NULL, SRC_UNMAPPED, SRC_SPAN, SRC_LOW };

static const struct rcase cases[] = {
	{ "kernel: 11 bytes", "bpf_probe_read_kernel", SRC_TEXT, 11, 0, "hello trace", 11 },
	{ "user: 5 bytes", "bpf_probe_read_user", SRC_TEXT, 5, 0, "hello", 5 },
	{ "legacy probe_read", "bpf_probe_read", SRC_TEXT, 8, 0, "hello tr", 8 },
	{ "size 0 copies nothing", "bpf_probe_read_kernel", SRC_NULL, 0, 0, "\xff", 1 },
	{ "NULL: -EFAULT, zeroed", "bpf_probe_read_kernel", SRC_NULL, 16, -EFAULT, NULL, 16 },
	{ "low page: -EFAULT", "bpf_probe_read_user", SRC_LOW, 8, -EFAULT, NULL, 8 },
	{ "unmapped page: -EFAULT, zeroed", "bpf_probe_read_user", SRC_UNMAPPED, 32, -EFAULT,
	  NULL, 32 },
	{ "range into an unmapped page", "bpf_probe_read_kernel", SRC_SPAN, 16, -EFAULT, NULL, 16 },
	{ "str: length with NUL", "bpf_probe_read_kernel_str", SRC_TEXT, 64, 12, "hello trace\0",
	  12 },
	{ "str: truncated", "bpf_probe_read_user_str", SRC_TEXT, 6, 6, "hello\0", 6 },
	{ "str: legacy", "bpf_probe_read_str", SRC_TEXT, 3, 3, "he\0", 3 },
	{ "str: size 0", "bpf_probe_read_user_str", SRC_TEXT, 0, 0, "\xff", 1 },
	{ "str: unmapped, zeroed", "bpf_probe_read_kernel_str", SRC_UNMAPPED, 24, -EFAULT, NULL,
	  24 },
	{ "str: running into an unmapped page", "bpf_probe_read_user_str", SRC_SPAN, 40, -EFAULT,
	  NULL, 40 },
};

int main(void)
{
	unsigned char value[VAL], ff[VAL];
	uint64_t src[5];
	char *pages, text[1024];
	uint32_t key = 0, ret;
	int map_fd;

	tt_private_fs("probe_read");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "dst", 4, VAL, 1, NULL);
	T_ASSERT(map_fd >= 0);
	pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(pages != MAP_FAILED);
	/* a string ending 8 bytes before an inaccessible page, with no NUL before it */
	memset(pages + 4096 - 8, 'x', 8);
	mprotect(pages + 4096, 4096, PROT_NONE); /* unmapping would let the next mmap in */
	src[SRC_TEXT] = (uintptr_t)"hello trace";
	src[SRC_NULL] = 0;
	src[SRC_UNMAPPED] = (uintptr_t)(pages + 4096);
	src[SRC_SPAN] = (uintptr_t)(pages + 4096 - 8);
	src[SRC_LOW] = 0x100;
	memset(ff, 0xff, sizeof(ff));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];
		int fd;

		T_CASE(c->name);
		snprintf(text, sizeof(text), prog_fmt, map_fd, c->size, c->helper);
		fd = tt_load(RAW, "GPL", text, NULL, 0);
		T_ASSERT(fd >= 0);
		T_EQ_INT(0, bpfrt_map_update_elem(map_fd, &key, ff, BPF_ANY));
		T_EQ_INT(0, tt_run(fd, &src[c->src], 1, &ret));
		T_EQ_INT(c->ret, (int32_t)ret);
		T_EQ_INT(0, bpfrt_map_lookup_elem(map_fd, &key, value));
		if (c->want)
			T_ASSERT(!memcmp(value, c->want, c->want_len));
		else
			for (unsigned j = 0; j < c->want_len; j++)
				T_EQ_INT(0, value[j]);
		/* nothing written past the copy */
		if (c->size < VAL)
			T_EQ_INT(0xff, value[c->size < c->want_len ? c->want_len : c->size]);
		close(fd);
	}
	munmap(pages, 8192);
	close(map_fd);
	tt_cleanup_fs();
	return t_done();
}
