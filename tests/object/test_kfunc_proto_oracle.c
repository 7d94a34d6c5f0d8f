/* test_kfunc_proto_oracle.c - a kfunc extern whose prototype does not match the kernel
 * function's, against libbpf: libbpf's bpf_object__resolve_ksym_func_btf_id() checks the
 * extern's BTF prototype with bpf_core_types_are_compat(), to which a forward-declared
 * struct is not compatible with the kernel's struct (the kinds differ), and refuses the
 * object: EINVAL, "extern (func ksym) 'NAME': func_proto [LOCAL] incompatible with
 * vmlinux [KERNEL]" (libbpf 1.1 says "kernel" where today's names the BTF it searched).
 * Before session 25 bpfrt's loader resolved such an extern by its name alone and the
 * program loaded.  Two objects compiled here with clang: a tp_btf program calling
 * bpf_task_acquire/bpf_task_release declared with `struct task_struct;` (refused) and
 * with a struct task_struct of its own (compatible: the program loads, as in the kernel).
 * Each goes through libbpf (when the system has it) and through bpfrt's loader into the
 * kernel and into bpfrt; errnos and messages must agree.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "bpfrt/object.h"
#include "harness.h"

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif

static const char prog_fmt[] =
	"#define SEC(n) __attribute__((section(n), used))\n"
	"#define __ksym __attribute__((section(\".ksyms\")))\n"
	"struct task_struct%s;\n"
	"extern struct task_struct *bpf_task_acquire(struct task_struct *p) __ksym;\n"
	"extern void bpf_task_release(struct task_struct *p) __ksym;\n"
	"SEC(\"tp_btf/task_newtask\") int acquire(unsigned long long *ctx)\n"
	"{\n"
	"\tstruct task_struct *t = bpf_task_acquire((struct task_struct *)ctx[0]);\n"
	"\n"
	"\tif (t)\n"
	"\t\tbpf_task_release(t);\n"
	"\treturn 0;\n"
	"}\n"
	"char _license[] SEC(\"license\") = \"GPL\";\n";

static char messages[4096];

static void keep(const char *fmt, va_list ap)
{
	size_t n = strlen(messages);

	if (n < sizeof(messages) - 1)
		vsnprintf(messages + n, sizeof(messages) - n, fmt, ap);
}

static int keep_bpfrt(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	keep(fmt, ap);
	return 0;
}

/* the line of messages naming the extern, "" if none */
static const char *extern_line(char *out, size_t n)
{
	const char *l = strstr(messages, "extern (func ksym)");
	size_t len = l ? strcspn(l, "\n") : 0;

	snprintf(out, n, "%.*s", (int)len, l ? l : "");
	return out;
}

/* bpfrt's loader into the kernel (kernel 1) or into bpfrt: 0 or -errno, *line its
 * message about the extern */
static int load_bpfrt(const char *path, int kernel, char *line, size_t n)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = kernel);
	struct bpfrt_object *obj;
	int err;

	messages[0] = 0;
	obj = bpfrt_object_open_file(path, &o);
	err = !obj ? -errno : bpfrt_object_load(obj) ? -errno : 0;
	bpfrt_object_close(obj);
	extern_line(line, n);
	return err;
}

#ifdef BPFRT_TEST_HAVE_LIBBPF
/* its warnings: the debug level names every extern it resolved */
static int keep_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		keep(fmt, ap);
	return 0;
}

static int load_libbpf(const char *path, char *line, size_t n)
{
	struct bpf_object *obj;
	int err;

	messages[0] = 0;
	obj = bpf_object__open_file(path, NULL);
	err = libbpf_get_error(obj) ? -EINVAL : bpf_object__load(obj) ? -errno : 0;
	if (!libbpf_get_error(obj))
		bpf_object__close(obj);
	extern_line(line, n);
	return err;
}
#endif

static int build(const char *dir, const char *name, const char *body)
{
	char src[512], cmd[2048];
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s.bpf.c", dir, name);
	f = fopen(src, "w");
	if (!f)
		return -1;
	fprintf(f, prog_fmt, body);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "clang -O2 -g -target bpf -c %s -o %s/%s.bpf.o", src, dir, name);
	return system(cmd) ? -1 : 0;
}

static void check(const char *dir, const char *name, int want)
{
	char path[512], kline[512], bline[512];
	int k, b;

	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, name);
	T_CASE(name);
	k = load_bpfrt(path, 1, kline, sizeof(kline));
	b = load_bpfrt(path, 0, bline, sizeof(bline));
	printf("%s: bpfrt's loader into the kernel %d \"%s\", into bpfrt %d \"%s\"\n", name, k,
	       kline, b, bline);
	T_EQ_INT(want, k);
	T_EQ_INT(k, b);
	T_EQ_STR(kline, bline);
	if (want)
		T_CONTAINS("extern (func ksym) 'bpf_task_acquire': func_proto [", bline);
#ifdef BPFRT_TEST_HAVE_LIBBPF
	{
		static const char old[] = "incompatible with kernel [";
		char lline[512], norm[600], *p;
		int l = load_libbpf(path, lline, sizeof(lline));

		/* libbpf 1.1's word for the BTF it searched */
		snprintf(norm, sizeof(norm), "%s", lline);
		if ((p = strstr(lline, old)))
			snprintf(norm, sizeof(norm), "%.*sincompatible with vmlinux [%s",
				 (int)(p - lline), lline, p + sizeof(old) - 1);
		printf("%s: libbpf %d \"%s\"\n", name, l, lline);
		T_EQ_INT(l, k);
		T_EQ_STR(norm, bline);
	}
#endif
}

int main(void)
{
	char dir[] = "/tmp/bpfrt-kfunc-proto-XXXXXX", cmd[600];

	if (geteuid() != 0)
		T_SKIP("not root: cannot load into the kernel");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		T_SKIP("no kernel BTF");
	if (system("clang --version >/dev/null 2>&1"))
		T_SKIP("clang not installed");
	if (!mkdtemp(dir))
		T_SKIP("no temporary folder");
	if (build(dir, "fwd", "") || build(dir, "full", " { int pid; }")) {
		T_FAIL("clang failed");
	} else {
		bpfrt_set_print(keep_bpfrt);
#ifdef BPFRT_TEST_HAVE_LIBBPF
		libbpf_set_print(keep_libbpf);
#endif
		check(dir, "fwd", -EINVAL);
		check(dir, "full", 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		T_FAIL("cannot remove %s", dir);
	return t_done();
}
