/* test_struct_ops_unknown.c - a struct_ops map of a struct no kernel registers
 * (progs/struct_ops_unknown.bpf.o): the load stops in the loader, before any bpf() call,
 * at libbpf's bpf_map__init_kern_struct_ops() lookup of the struct in the kernel's BTF.
 * bpfrt's loader answers as libbpf >= 1.4 does: ESRCH (find_ksym_btf_id()'s "not in
 * vmlinux nor in a module") and the line "struct_ops init_kern: struct NAME is not found
 * in kernel BTF", into the kernel and into bpfrt alike.  Through the system's libbpf when
 * there is one: the same errno from 1.4 on; 1.2 and 1.3 answered ENOENT (their
 * btf__find_by_name_kind()'s), which this test checks is what an older libbpf still says,
 * so the difference stays the version's (docs/CORPUS.md, known differences).  Needs root
 * for the kernel side; skipped otherwise. */
#include <errno.h>
#include <unistd.h>

#include "elf/elf_test_util.h"
#include "bpfrt.h"
#include "harness.h"
#include "quiet.h"

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#endif

static const char line[] =
	"struct_ops init_kern: struct bpfrt_no_such_ops is not found in kernel BTF\n";

static int load_bpfrt(int kernel, const char **log, struct bpfrt_object **objp)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .kernel = kernel,
					    .log_level = 1, .log_size = 1u << 16 };
	struct bpfrt_object *obj = bpfrt_object_open_file(corpus_path("struct_ops_unknown"), &o);

	*objp = obj;
	*log = "";
	if (!obj)
		return -errno;
	if (!bpfrt_object_load(obj))
		return 0;
	*log = bpfrt_object_log(obj) ? bpfrt_object_log(obj) : "";
	return -errno;
}

int main(void)
{
	size_t len;
	unsigned char *buf = corpus_read("struct_ops_unknown", &len);
	struct bpfrt_object *obj;
	const char *log;

	if (!buf)
		T_SKIP("corpus not built (clang missing)");
	free(buf);
	bpfrt_set_print(t_print_quiet);
	T_CASE("bpfrt");
	T_EQ_INT(-ESRCH, load_bpfrt(0, &log, &obj));
	T_CONTAINS(line, log);
	bpfrt_object_close(obj);
	if (geteuid() != 0)
		T_SKIP("not root: cannot load into the kernel");
	T_CASE("bpfrt's loader into the kernel");
	T_EQ_INT(-ESRCH, load_bpfrt(1, &log, &obj));
	T_CONTAINS(line, log);
	bpfrt_object_close(obj);
#ifdef BPFRT_TEST_HAVE_LIBBPF
	T_CASE("libbpf");
	{
		struct bpf_object *l = bpf_object__open_file(corpus_path("struct_ops_unknown"), NULL);
		int want = LIBBPF_MAJOR_VERSION > 1 || LIBBPF_MINOR_VERSION >= 4 ? ESRCH : ENOENT;

		T_ASSERT(!libbpf_get_error(l));
		T_EQ_INT(-want, bpf_object__load(l) ? -errno : 0);
		bpf_object__close(l);
	}
#endif
	return t_done();
}
