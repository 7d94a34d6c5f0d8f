/* test_load.c - bpfrt_object_load() through bpfrt_bpf(): every corpus program loads and
 * returns what its source says under BPF_PROG_TEST_RUN (twice, to see map and global
 * state persist), map contents are visible to user space, .rodata is frozen, pinned maps
 * are reused by a second object, and failures leave a log naming the program. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "elf/elf_test_util.h"
#include "harness.h"
#include "quiet.h"
#include "load_cases.h"

static void test_runs(void)
{
	for (size_t i = 0; i < sizeof(run_cases) / sizeof(run_cases[0]); i++) {
		const struct run_case *c = &run_cases[i];
		struct bpfrt_object *obj;
		uint32_t out[2] = { 0xdead, 0xdead };
		const char *step;
		int ret;

		T_CASE(c->prog);
		ret = test_load_run(corpus_path(c->file), c->prog, 0, out, &step, &obj);
		if (ret && c->bpfrt_gap && !strcmp(step, "load")) {
			/* Known gap: the refusal must be clean and explained. */
			printf("note: %s/%s not loadable in bpfrt yet (%s): %s", c->file, c->prog,
			       c->bpfrt_gap, bpfrt_object_log(obj));
			T_ASSERT(bpfrt_object_log(obj)[0] != 0);
			bpfrt_object_close(obj);
			continue;
		}
		if (ret) {
			T_FAIL("%s: %s: %s\n%s", c->file, step, strerror(-ret),
			       obj ? bpfrt_object_log(obj) : "");
			bpfrt_object_close(obj);
			continue;
		}
		T_EQ_INT(c->retval[0], out[0]);
		T_EQ_INT(c->retval[1], out[1]);
		bpfrt_object_close(obj);
	}
}

static void test_map_state(void)
{
	struct bpfrt_object *obj;
	uint32_t out[2];
	const char *step;
	int64_t v = 0;
	int key = 0, ret;

	T_CASE("map contents after runs");
	ret = test_load_run(corpus_path("legacy_map"), "count", 0, out, &step, &obj);
	T_EQ_INT(0, ret);
	if (!ret) {
		int fd = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "counters"));
		int32_t s = 0;

		T_ASSERT(fd >= 0);
		T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &key, &v));
		T_EQ_INT(2, v);
		fd = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "scratch"));
		T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &key, &s));
		T_EQ_INT(7, s);
		T_EQ_INT(-EBUSY, bpfrt_object_load(obj));
	}
	bpfrt_object_close(obj);

	T_CASE("global data maps");
	ret = test_load_run(corpus_path("global_data"), "data_sum", 0, out, &step, &obj);
	T_EQ_INT(0, ret);
	if (!ret) {
		int fd = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, ".bss"));
		int32_t three = 33;

		T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &key, &v));
		T_EQ_INT(2, v);
		/* .rodata is frozen: user space cannot change it after load. */
		fd = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, ".rodata"));
		T_EQ_INT(-EPERM, bpfrt_map_update_elem(fd, &key, &three, BPF_ANY));
	}
	bpfrt_object_close(obj);
}

/* `const volatile` configuration: a new .rodata image before load changes the result. */
static void test_rodata_config(void)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("global_data"), NULL);
	struct bpfrt_program *p;
	int32_t three = 1003;
	uint32_t r = 0;

	T_CASE("rodata set before load");
	if (!obj) {
		T_FAIL("open");
		return;
	}
	T_EQ_INT(0, bpfrt_map__set_initial_value(bpfrt_object_find_map_by_name(obj, ".rodata"),
						&three, 4));
	T_EQ_INT(0, bpfrt_object_load(obj));
	p = bpfrt_object_find_program_by_name(obj, "data_sum");
	T_EQ_INT(0, test_run_once(bpfrt_bpf, bpfrt_program_fd(p), &r));
	T_EQ_INT(1123, r);
	T_EQ_INT(-EBUSY, bpfrt_map__set_initial_value(bpfrt_object_find_map_by_name(obj, ".rodata"),
						     &three, 4));
	bpfrt_object_close(obj);
}

/* file's shared_counts is pinned by name, private_counts not: libbpf's LIBBPF_PIN_BY_NAME
 * (pinned_map) or aya's pinning field in "maps/<name>" sections (named_maps_pin) */
static void test_pinning(const char *fs, const char *file)
{
	struct bpfrt_object *a, *b;
	char path[512], other[512];
	uint32_t out[2], key = 0, val = 77, r = 0;
	const char *step;
	int ret;

	T_CASE(file);
	snprintf(path, sizeof(path), "%s/shared_counts", fs);
	snprintf(other, sizeof(other), "%s/private_counts", fs);
	unlink(path);
	ret = test_load_run(corpus_path(file), "read_shared", 0, out, &step, &a);
	T_EQ_INT(0, ret);
	if (ret) {
		T_FAIL("%s: %s", step, bpfrt_object_log(a));
		bpfrt_object_close(a);
		return;
	}
	T_ASSERT(access(path, F_OK) == 0);
	T_ASSERT(access(other, F_OK) != 0);
	T_EQ_INT(0, bpfrt_map_update_elem(bpfrt_map__fd(bpfrt_object_find_map_by_name(a,
										   "shared_counts")),
					  &key, &val, BPF_ANY));
	b = bpfrt_object_open_file(corpus_path(file), NULL);
	T_EQ_INT(0, bpfrt_object_load(b));
	T_EQ_INT(0, test_run_once(bpfrt_bpf,
				  bpfrt_program_fd(bpfrt_object_find_program_by_name(b, "read_shared")),
				  &r));
	T_EQ_INT(77, r);
	bpfrt_object_close(a);
	bpfrt_object_close(b);
	unlink(path);
}

static void test_failures(void)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("sec_types"), NULL);
	struct bpfrt_program *p;

	T_CASE("program without a type");
	if (!obj) {
		T_FAIL("open");
		return;
	}
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p))
		bpfrt_program_set_autoload(p, !strcmp(bpfrt_program_name(p), "unknown"));
	T_EQ_INT(-EINVAL, bpfrt_object_load(obj));
	T_CONTAINS("prog 'unknown': section 'mystery_section' names no program type",
		   bpfrt_object_log(obj));
	T_EQ_INT(-1, bpfrt_program_fd(bpfrt_object_find_program_by_name(obj, "unknown")));

	T_CASE("type set by hand");
	p = bpfrt_object_find_program_by_name(obj, "unknown");
	T_EQ_INT(0, bpfrt_program_set_type(p, BPF_PROG_TYPE_SOCKET_FILTER));
	T_EQ_INT(0, bpfrt_object_load(obj));
	T_ASSERT(bpfrt_program_fd(p) >= 0);
	T_EQ_INT(-1, bpfrt_program_fd(bpfrt_object_find_program_by_name(obj, "tp_write")));
	{
		uint32_t r = 0;

		T_EQ_INT(0, test_run_once(bpfrt_bpf, bpfrt_program_fd(p), &r));
		T_EQ_INT(21, r);
	}
	bpfrt_object_close(obj);
}

int main(void)
{
	char fs[] = "/tmp/bpfrt-elf-fs-XXXXXX";
	struct bpfrt_object *probe;
	size_t len;
	unsigned char *buf = corpus_read("legacy_map", &len);

	if (!buf)
		T_SKIP("corpus not built (clang missing)");
	free(buf);
	if (!t_scratch_dir(fs))
		T_SKIP("mkdtemp: %s", strerror(errno));
	setenv("BPFRT_FS", fs, 1);
	bpfrt_set_print(t_print_quiet);
	probe = bpfrt_object_open_file(corpus_path("legacy_map"), NULL);
	if (!probe && errno == ENOTSUP)
		T_SKIP("built without libelf");
	bpfrt_object_close(probe);
	test_runs();
	test_map_state();
	test_rodata_config();
	test_pinning(fs, "pinned_map");
	test_pinning(fs, "named_maps_pin");
	test_failures();
	rmdir(fs);
	return t_done();
}
