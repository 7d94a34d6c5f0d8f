/* test_object.c - the public object API (bpfrt/object.h) before load: opening from a file
 * and from memory, errno on failure, iteration, lookups, getters, setters and option
 * checks. */
#include <errno.h>
#include <unistd.h>

#include "bpfrt.h"
#include "elf/elf_test_util.h"
#include "harness.h"
#include "quiet.h"

static void test_iteration(void)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("multi_prog"), NULL);
	static const char *const names[] = { "prog_a", "prog_b", "prog_c" };
	struct bpfrt_program *p;
	struct bpfrt_map *m;
	size_t n = 0;

	T_CASE("iteration");
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	T_EQ_STR(corpus_path("multi_prog"), bpfrt_object_name(obj));
	T_EQ_STR("GPL", bpfrt_object_license(obj));
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		T_EQ_STR(names[n], bpfrt_program_name(p));
		T_EQ_STR("socket", bpfrt_program_section_name(p));
		T_EQ_INT(BPF_PROG_TYPE_SOCKET_FILTER, bpfrt_program_type(p));
		T_EQ_INT(-1, bpfrt_program_fd(p));
		T_ASSERT(bpfrt_program_insn_cnt(p) > 4);
		T_EQ_INT(BPF_JMP | BPF_EXIT, bpfrt_program_insns(p)[3].code);
		n++;
	}
	T_EQ_INT(3, n);
	m = bpfrt_object_next_map(obj, NULL);
	T_ASSERT(m != NULL);
	if (m) {
		T_EQ_STR("hits", bpfrt_map__name(m));
		T_EQ_INT(BPF_MAP_TYPE_ARRAY, bpfrt_map__type(m));
		T_EQ_INT(4, bpfrt_map__key_size(m));
		T_EQ_INT(4, bpfrt_map__value_size(m));
		T_EQ_INT(3, bpfrt_map__max_entries(m));
		T_EQ_INT(0, bpfrt_map__flags(m));
		T_EQ_INT(-1, bpfrt_map__fd(m));
		T_ASSERT(bpfrt_object_next_map(obj, m) == NULL);
	}
	T_ASSERT(bpfrt_object_find_program_by_name(obj, "prog_b") != NULL);
	errno = 0;
	T_ASSERT(bpfrt_object_find_program_by_name(obj, "nope") == NULL);
	T_EQ_INT(ENOENT, errno);
	T_ASSERT(bpfrt_object_find_map_by_name(obj, "hits") == m);
	T_ASSERT(bpfrt_object_find_map_by_name(obj, "nope") == NULL);
	/* Source lines from .BTF.ext. */
	{
		const char *file = NULL;
		uint32_t line = 0;
		const char *src = bpfrt_program_line(bpfrt_object_find_program_by_name(obj, "prog_a"),
						     0, &file, &line);

		T_ASSERT(src != NULL);
		T_CONTAINS("multi_prog.bpf.c", file);
		T_ASSERT(line > 10);
	}
	T_EQ_STR("", bpfrt_object_log(obj));
	bpfrt_object_close(obj);
}

static void test_data_and_setters(void)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("global_data"), NULL);
	struct bpfrt_map *rodata, *bss, *data;
	struct bpfrt_program *p;
	const void *v;
	size_t sz = 99;
	int32_t val = 0;

	T_CASE("global data and setters");
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	rodata = bpfrt_object_find_map_by_name(obj, ".rodata");
	bss = bpfrt_object_find_map_by_name(obj, ".bss");
	data = bpfrt_object_find_map_by_name(obj, ".data");
	T_ASSERT(rodata && bss && data);
	if (!rodata || !bss || !data)
		goto out;
	v = bpfrt_map__initial_value(rodata, &sz);
	T_EQ_INT(4, sz);
	if (v)
		memcpy(&val, v, 4);
	T_EQ_INT(3, val);
	T_ASSERT(bpfrt_map__initial_value(bss, &sz) == NULL);
	T_EQ_INT(0, sz);
	T_EQ_INT(BPF_F_RDONLY_PROG, bpfrt_map__flags(rodata));
	val = 30;
	T_EQ_INT(0, bpfrt_map__set_initial_value(rodata, &val, 4));
	memcpy(&val, bpfrt_map__initial_value(rodata, NULL), 4);
	T_EQ_INT(30, val);
	T_EQ_INT(-EINVAL, bpfrt_map__set_initial_value(rodata, &val, 8));
	T_EQ_INT(EINVAL, errno);
	p = bpfrt_object_next_program(obj, NULL);
	T_EQ_INT(0, bpfrt_program_set_type(p, BPF_PROG_TYPE_SCHED_CLS));
	T_EQ_INT(BPF_PROG_TYPE_SCHED_CLS, bpfrt_program_type(p));
	T_EQ_INT(0, bpfrt_program_set_expected_attach_type(p, BPF_CGROUP_INET_EGRESS));
	T_EQ_INT(BPF_CGROUP_INET_EGRESS, bpfrt_program_expected_attach_type(p));
out:
	bpfrt_object_close(obj);
}

/* libbpf's ring buffer sizes: a BTF-defined or resized ring buffer's max_entries becomes
 * the smallest power-of-2 multiple of the page size at or above it; the objects then load
 * (the kernel refuses any other size with EINVAL). */
static void test_ringbuf_sizes(void)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("ringbuf_size"), NULL);
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	struct bpfrt_map *small, *three, *exact;

	T_CASE("ring buffer sizes");
	T_ASSERT(obj != NULL);
	if (!obj)
		return;
	small = bpfrt_object_find_map_by_name(obj, "rb_small");
	three = bpfrt_object_find_map_by_name(obj, "urb_three");
	exact = bpfrt_object_find_map_by_name(obj, "rb_exact");
	T_ASSERT(small && three && exact);
	if (!small || !three || !exact)
		goto out;
	T_EQ_INT(page, bpfrt_map__max_entries(small));
	T_EQ_INT(3 * 4096 <= page ? page : 4 * 4096, bpfrt_map__max_entries(three));
	T_EQ_INT(8 * 4096 <= page ? page : 8 * 4096, bpfrt_map__max_entries(exact));
	T_EQ_INT(0, bpfrt_map__set_max_entries(small, page + 1));
	T_EQ_INT(2 * page, bpfrt_map__max_entries(small));
	T_EQ_INT(0, bpfrt_map__set_max_entries(small, 0));
	T_EQ_INT(0, bpfrt_map__max_entries(small)); /* left for MAP_CREATE to refuse */
	T_EQ_INT(0, bpfrt_map__set_max_entries(small, page));
	T_EQ_INT(page, bpfrt_map__max_entries(small));
	T_EQ_INT(0, bpfrt_object_load(obj));
	T_ASSERT(bpfrt_map__fd(small) >= 0 && bpfrt_map__fd(three) >= 0);
out:
	bpfrt_object_close(obj);
}

static void test_errors(void)
{
	static const unsigned char junk[] = "this is not an ELF file";
	struct bpfrt_object_open_opts big[2];
	struct bpfrt_object *obj;
	unsigned char *buf;
	size_t len;

	T_CASE("missing file");
	errno = 0;
	T_ASSERT(bpfrt_object_open_file("/nonexistent/x.o", NULL) == NULL);
	T_EQ_INT(ENOENT, errno);

	T_CASE("garbage");
	errno = 0;
	T_ASSERT(bpfrt_object_open_mem(junk, sizeof(junk), NULL) == NULL);
	T_EQ_INT(EINVAL, errno);

	T_CASE("NULL buffer");
	T_ASSERT(bpfrt_object_open_mem(NULL, 10, NULL) == NULL);
	T_EQ_INT(EINVAL, errno);

	T_CASE("opts: unknown non-zero tail");
	memset(big, 0, sizeof(big));
	big[0].sz = sizeof(big);
	((unsigned char *)big)[sizeof(big) - 1] = 1;
	T_ASSERT(bpfrt_object_open_file(corpus_path("legacy_map"), big) == NULL);
	T_EQ_INT(EINVAL, errno);

	T_CASE("opts: object name, from memory");
	buf = corpus_read("legacy_map", &len);
	if (buf) {
		BPFRT_OPTS(bpfrt_object_open_opts, o, .object_name = "named.o");

		obj = bpfrt_object_open_mem(buf, len, &o);
		free(buf);
		T_ASSERT(obj != NULL);
		if (obj)
			T_EQ_STR("named.o", bpfrt_object_name(obj));
		bpfrt_object_close(obj);
	}
	bpfrt_object_close(NULL);
}

int main(void)
{
	size_t len;
	unsigned char *probe = corpus_read("multi_prog", &len);
	struct bpfrt_object *obj;

	if (!probe)
		T_SKIP("corpus not built (clang missing)");
	bpfrt_set_print(t_print_quiet);
	obj = bpfrt_object_open_mem(probe, len, NULL);
	free(probe);
	if (!obj && errno == ENOTSUP)
		T_SKIP("built without libelf");
	bpfrt_object_close(obj);
	test_iteration();
	test_data_and_setters();
	test_ringbuf_sizes();
	test_errors();
	return t_done();
}
