/* test_struct_ops_two.c - two structs of operations in one .struct_ops section
 * (progs/struct_ops_two.bpf.o, as the kernel selftests' bpf_dctcp.c): clang leaves the
 * section's DATASEC offsets 0, so the loader must place each struct by its symbol, as
 * libbpf does (btf_fixup_datasec()).  bpfrt's loader had read ca_two at offset 0: its
 * relocations (byte 40 on) fell outside every struct and the open failed with EINVAL
 * ("struct_ops: relocation 3 against 'ssthresh_two' is no function pointer of a struct to
 * a program").  Now each map holds its own struct (its name field), and the object loads
 * into bpfrt, through bpfrt's loader into the kernel, and through the system's libbpf
 * alike (root for the kernel sides; skipped otherwise). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_test_util.h"
#include "bpfrt.h"
#include "harness.h"
#include "quiet.h"

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif

#define NAME_OFF 24 /* char name[16] after three function pointers */

static int load_bpfrt(int kernel)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .kernel = kernel };
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("struct_ops_two"), &o);
	int err;

	if (!obj)
		return -errno;
	err = bpfrt_object_load(obj) ? -errno : 0;
	bpfrt_object_close(obj);
	return err;
}

int main(void)
{
	static const char *const names[] = { "ca_one", "ca_two" };
	static const char *const values[] = { "bpfrt_ca_one", "bpfrt_ca_two" };
	size_t len;
	unsigned char *buf = corpus_read("struct_ops_two", &len);
	struct bpfrt_object *obj;

	if (!buf)
		T_SKIP("corpus not built (clang missing)");
	free(buf);
	bpfrt_set_print(t_print_quiet);
	T_CASE("each struct at its symbol's offset");
	obj = bpfrt_object_open_file(corpus_path("struct_ops_two"), NULL);
	T_ASSERT(obj != NULL);
	for (int i = 0; i < 2; i++) {
		const struct bpfrt_map *m = bpfrt_object_find_map_by_name(obj, names[i]);
		size_t size = 0;
		const char *v = m ? bpfrt_map__initial_value(m, &size) : NULL;

		T_ASSERT(v != NULL && size >= NAME_OFF + 16);
		T_EQ_STR(values[i], v + NAME_OFF);
	}
	bpfrt_object_close(obj);
	T_CASE("bpfrt");
	T_EQ_INT(0, load_bpfrt(0));
	if (geteuid() != 0)
		T_SKIP("not root: cannot load into the kernel");
	T_CASE("bpfrt's loader into the kernel");
	T_EQ_INT(0, load_bpfrt(1));
#ifdef BPFRT_TEST_HAVE_LIBBPF
	T_CASE("libbpf");
	{
		struct bpf_object *l = bpf_object__open_file(corpus_path("struct_ops_two"), NULL);

		T_ASSERT(!libbpf_get_error(l));
		T_EQ_INT(0, bpf_object__load(l) ? -errno : 0);
		bpf_object__close(l);
	}
#endif
	return t_done();
}
