/* test_struct_ops_two.c - two structs of operations in one .struct_ops section
 * (progs/struct_ops_two.bpf.o, as the kernel selftests' bpf_dctcp.c): clang leaves the
 * section's DATASEC offsets 0, so the loader must place each struct by its symbol, as
 * libbpf does (btf_fixup_datasec()).  bpfrt's loader had read ca_two at offset 0: its
 * relocations (byte 40 on) fell outside every struct and the open failed with EINVAL
 * ("struct_ops: relocation 3 against 'ssthresh_two' is no function pointer of a struct to
 * a program").  Now each map holds its own struct (its name field), and the object (whose
 * cong_avoid calls the tcp_reno_cong_avoid kfunc, bpf_tcp_ca_kfunc_set's) loads
 * into bpfrt, through bpfrt's loader into the kernel, and through the system's libbpf
 * alike (root for the kernel sides; skipped otherwise). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

static char said[4096];

/* the loader's messages, kept to see why an open failed */
static int keep_print(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(said);

	(void)level;
	if (n < sizeof(said) - 1)
		vsnprintf(said + n, sizeof(said) - n, fmt, ap);
	return 0;
}

/* The image with ca_two's symbol value set to v; 0 when there is no such symbol. */
static int set_sym_value(unsigned char *img, const char *name, uint64_t v)
{
	size_t symtab = raw_find_type(img, SHT_SYMTAB);
	Elf64_Shdr *sh = symtab ? raw_shdr(img, symtab) : NULL;
	Elf64_Sym *syms;
	const char *strs;

	if (!sh)
		return 0;
	syms = (Elf64_Sym *)(void *)(img + sh->sh_offset);
	strs = (const char *)img + raw_shdr(img, sh->sh_link)->sh_offset;
	for (size_t i = 1; i < sh->sh_size / sizeof(*syms); i++)
		if (!strcmp(strs + syms[i].st_name, name)) {
			syms[i].st_value = v;
			return 1;
		}
	return 0;
}

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
	bpfrt_set_print(keep_print);
	/* A symbol whose value is near 2^64: offset plus the struct's size wraps, which the
	 * bounds check must not take for in the section (it read far outside the image). */
	T_CASE("a struct's symbol at an offset that wraps: EINVAL");
	T_ASSERT(set_sym_value(buf, "ca_two", UINT64_MAX - 7));
	obj = bpfrt_object_open_mem(buf, len, NULL);
	T_EQ_INT(-EINVAL, obj ? 0 : -errno);
	T_ASSERT(strstr(said, "'ca_two' lies outside its section") != NULL);
	bpfrt_object_close(obj);
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
