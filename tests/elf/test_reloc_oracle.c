/* test_reloc_oracle.c - libbpf as reference for linking: every corpus object libbpf 1.x
 * accepts is loaded with libbpf (into the kernel, which is when libbpf relocates), and
 * each program's final instructions must equal bpfrt's linked ones - same layout of
 * subprograms, same call offsets, same lddw kinds and value offsets, map references to
 * the same map (by position in the object).  Needs root and libbpf-dev; skipped otherwise. */
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "elf/elf.h"
#include "elf_test_util.h"
#include "harness.h"

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int runnable(enum bpf_prog_type t)
{
	return t == BPF_PROG_TYPE_SOCKET_FILTER || t == BPF_PROG_TYPE_SCHED_CLS ||
	       t == BPF_PROG_TYPE_XDP;
}

/* Position of the libbpf map whose fd is fd, or -1. */
static int map_pos(struct bpf_object *lo, int fd)
{
	struct bpf_map *m;
	int i = 0;

	bpf_object__for_each_map(m, lo) {
		if (bpf_map__fd(m) == fd)
			return i;
		i++;
	}
	return -1;
}

static void compare_prog(struct bpf_object *lo, const struct bpf_program *lp,
			 const struct brt_elf_prog *p)
{
	const struct bpf_insn *li = bpf_program__insns(lp);
	size_t n = bpf_program__insn_cnt(lp);

	T_EQ_INT(n, p->insn_cnt);
	for (size_t i = 0; i < n && i < p->insn_cnt; i++) {
		const struct bpf_insn *a = &li[i], *b = &p->insns[i];
		int wide = a->code == (BPF_LD | BPF_IMM | BPF_DW);
		int mapref = wide && (a->src_reg == BPF_PSEUDO_MAP_FD ||
				      a->src_reg == BPF_PSEUDO_MAP_VALUE);

		if (a->code != b->code || a->dst_reg != b->dst_reg || a->src_reg != b->src_reg ||
		    a->off != b->off || (!mapref && a->imm != b->imm) ||
		    (wide && a[1].imm != b[1].imm)) {
			T_FAIL("%s insn %zu: libbpf %02x %u %u %d %d, bpfrt %02x %u %u %d %d",
			       p->name, i, a->code, a->dst_reg, a->src_reg, a->off, a->imm, b->code,
			       b->dst_reg, b->src_reg, b->off, b->imm);
			return;
		}
		if (mapref)
			T_EQ_INT(map_pos(lo, a->imm), b->imm);
		i += wide;
	}
	T_OK();
}

static void compare_object(const char *name, int *compared)
{
	struct bpf_object *lo = bpf_object__open_file(corpus_path(name), NULL);
	struct brt_elf_obj *o;
	struct bpf_program *lp;
	struct bpf_map *m;
	unsigned char *buf;
	char err[512];
	size_t len;

	if (!lo)
		return; /* libbpf 1.x refuses legacy maps and cross-section calls */
	bpf_object__for_each_program(lp, lo)
		bpf_program__set_autoload(lp, runnable(bpf_program__type(lp)));
	/* a struct_ops map with its programs left out: libbpf 1.1 then reads no vmlinux BTF
	 * and looks the struct up in none (a NULL dereference); its programs are not
	 * runnable here anyway */
	bpf_object__for_each_map(m, lo)
		if (bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS) {
			bpf_object__close(lo);
			return;
		}
	if (bpf_object__load(lo)) {
		bpf_object__close(lo);
		return;
	}
	T_CASE(name);
	buf = corpus_read(name, &len);
	if (!buf || brt_elf_open(buf, len, name, &o, err, sizeof(err))) {
		T_FAIL("bpfrt cannot open what libbpf loads: %s", err);
		free(buf);
		bpf_object__close(lo);
		return;
	}
	bpf_object__for_each_program(lp, lo) {
		if (!bpf_program__autoload(lp))
			continue;
		for (size_t i = 0; i < o->nprogs; i++)
			if (!strcmp(o->progs[i].name, bpf_program__name(lp)))
				compare_prog(lo, lp, &o->progs[i]);
	}
	(*compared)++;
	brt_elf_free(o);
	free(buf);
	bpf_object__close(lo);
}

int main(void)
{
	char dir[512];
	struct dirent *de;
	int compared = 0;
	DIR *d;

	if (geteuid() != 0)
		T_SKIP("not root: libbpf relocates only when loading into the kernel");
	snprintf(dir, sizeof(dir), "%s/progs", BPFRT_BINARY_DIR);
	d = opendir(dir);
	if (!d)
		T_SKIP("corpus not built (clang missing)");
	libbpf_set_print(silent);
	while ((de = readdir(d))) {
		char name[256];
		size_t n = strlen(de->d_name);

		if (n < 7 || strcmp(de->d_name + n - 6, ".bpf.o") || !strncmp(de->d_name, "bad_", 4))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 6), de->d_name);
		compare_object(name, &compared);
	}
	closedir(d);
	printf("%d objects compared with libbpf\n", compared);
	T_ASSERT(compared >= 15);
	return t_done();
}
#else
int main(void)
{
	(void)t_case; /* the harness's case name is used only with libbpf */
	T_SKIP("libbpf-dev not found at configure time");
}
#endif
