/* test_map_btf.c - the loader hands a BTF-defined map's key and value types to MAP_CREATE:
 * after loading tests/progs/btf_map.bpf.o into bpfrt, OBJ_GET_INFO_BY_FD of `pairs`
 * (__type key and value) reports a BTF object and non-zero type ids, `sizes` (key_size /
 * value_size only) none.  tests/progs/map_extra.bpf.o: map_extra, as __uint(map_extra, 3) and as
 * __ulong(map_extra, 5) (an enum of one value), reaches MAP_CREATE (bpfrt's loader had
 * refused the field: "unknown field 'map_extra'", the eBPF tutorial's arena map).
 * tests/progs/map_nobtf.bpf.c: a sockmap, a perf event array and a devmap declared with
 * __type(key) / __type(value) are created without BTF, as libbpf creates them (the kernel
 * refuses BTF for those types), and a hash map beside them keeps its types; into bpfrt
 * and, as root, into the kernel with the same loader (.kernel). */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "elf/elf_test_util.h"

static int info_of_sys(const struct bpfrt_object *o, const char *name,
		       struct bpf_map_info *info, int kernel)
{
	const struct bpfrt_map *m = bpfrt_object_find_map_by_name(o, name);
	union bpf_attr a;
	long r;

	memset(info, 0, sizeof(*info));
	memset(&a, 0, sizeof(a));
	if (!m)
		return -ENOENT;
	a.info.bpf_fd = (uint32_t)bpfrt_map__fd(m);
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	r = kernel ? syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a))
		   : bpfrt_bpf(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a));
	return r ? -errno : 0;
}

/* map_nobtf.bpf.o loaded into bpfrt or the kernel: BTF on the hash map only. */
static void nobtf(int kernel)
{
	struct bpfrt_object_open_opts opts = { .sz = sizeof(opts), .kernel = kernel };
	static const char *const none[] = { "socks", "events", "ports" };
	struct bpf_map_info info;
	struct bpfrt_object *o = bpfrt_object_open_file(corpus_path("map_nobtf"), &opts);

	T_CASE(kernel ? "map_nobtf into the kernel: open and load"
		      : "map_nobtf into bpfrt: open and load");
	T_ASSERT(o != NULL);
	if (!o)
		return;
	T_EQ_INT(0, bpfrt_object_load(o));
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		T_CASE(none[i]);
		T_EQ_INT(0, info_of_sys(o, none[i], &info, kernel));
		T_EQ_U64(0, info.btf_id);
		T_EQ_U64(0, info.btf_key_type_id);
		T_EQ_U64(0, info.btf_value_type_id);
	}
	T_CASE("counts keeps its BTF");
	T_EQ_INT(0, info_of_sys(o, "counts", &info, kernel));
	T_ASSERT(info.btf_id != 0);
	T_ASSERT(info.btf_key_type_id != 0);
	T_ASSERT(info.btf_value_type_id != 0);
	bpfrt_object_close(o);
}

static int info_of(const struct bpfrt_object *o, const char *name, struct bpf_map_info *info)
{
	return info_of_sys(o, name, info, 0);
}

int main(void)
{
	struct bpfrt_object *o;
	struct bpf_map_info info;
	size_t len;
	unsigned char *img = corpus_read("btf_map", &len);

	if (!img)
		T_SKIP("corpus not built (clang missing)");
	free(img);
	o = bpfrt_object_open_file(corpus_path("btf_map"), NULL);
	if (!o && errno == ENOTSUP)
		T_SKIP("built without libelf");
	T_CASE("load");
	T_ASSERT(o != NULL);
	if (!o)
		return t_done();
	T_EQ_INT(0, bpfrt_object_load(o));
	T_CASE("pairs: __type(key), __type(value)");
	T_EQ_INT(0, info_of(o, "pairs", &info));
	T_ASSERT(info.btf_id != 0);
	T_ASSERT(info.btf_key_type_id != 0);
	T_ASSERT(info.btf_value_type_id != 0);
	T_CASE("sizes: key_size, value_size");
	T_EQ_INT(0, info_of(o, "sizes", &info));
	T_EQ_U64(0, info.btf_id);
	T_EQ_U64(0, info.btf_value_type_id);
	bpfrt_object_close(o);

	/* bpfrt_map__set_key_size / set_value_size before the load (cilium/ebpf's perf
	 * event array fixup in tests/corpus uses them): MAP_CREATE gets the new sizes */
	o = bpfrt_object_open_file(corpus_path("btf_map"), NULL);
	T_CASE("set_value_size: open");
	T_ASSERT(o != NULL);
	if (!o)
		return t_done();
	{
		struct bpfrt_map *m = bpfrt_object_find_map_by_name(o, "sizes");

		T_CASE("set_value_size / set_key_size before the load");
		T_ASSERT(m != NULL);
		if (m) {
			T_EQ_INT(0, bpfrt_map__set_value_size(m, 16));
			T_EQ_INT(0, bpfrt_map__set_key_size(m, 4));
			T_EQ_U64(16, bpfrt_map__value_size(m));
			T_EQ_INT(0, bpfrt_object_load(o));
			T_EQ_INT(0, info_of(o, "sizes", &info));
			T_EQ_U64(16, info.value_size);
			T_EQ_U64(4, info.key_size);
			T_CASE("set_value_size after the load: EBUSY");
			T_EQ_INT(-EBUSY, bpfrt_map__set_value_size(m, 8));
		}
	}
	bpfrt_object_close(o);

	o = bpfrt_object_open_file(corpus_path("map_extra"), NULL);
	T_CASE("map_extra: open and load");
	T_ASSERT(o != NULL);
	if (!o)
		return t_done();
	T_EQ_INT(0, bpfrt_object_load(o));
	T_CASE("map_extra: __uint(map_extra, 3)");
	T_EQ_INT(0, info_of(o, "hashes3", &info));
	T_EQ_U64(3, info.map_extra);
	T_CASE("map_extra: __ulong(map_extra, 5)");
	T_EQ_INT(0, info_of(o, "hashes5", &info));
	T_EQ_U64(5, info.map_extra);
	bpfrt_object_close(o);

	nobtf(0);
	if (geteuid() == 0)
		nobtf(1);
	else
		printf("skipped: the kernel side needs root\n");
	return t_done();
}
