/* test_core_oracle.c - CO-RE relocations against libbpf: the corpus of tests/progs_core/
 * (built here against a vmlinux.h generated from the running kernel, build.sh) is opened
 * by bpfrt (relocated at open against /sys/kernel/btf/vmlinux) and loaded into the kernel
 * by the system libbpf; every program's instructions must be equal, map references by
 * position.  Then what libbpf cannot show: the relocations counted per kind, a target BTF
 * file in the open options, an unusable target refusing the object, the poisoned reads
 * (guarded ones load in bpfrt's verifier, an unguarded one is refused at its instruction).
 * Needs root, the kernel's BTF, bpftool, clang and libbpf-dev; skipped otherwise. */
#include <elf.h>
#include <errno.h>
#include <glob.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "object/object.h"

#ifdef BPFRT_TEST_HAVE_LIBBPF
#include <bpf/libbpf.h>

#define CORPUS BPFRT_BINARY_DIR "/progs_core"

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

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

static size_t insns_equal, insns_total;

static void compare_prog(struct bpf_object *lo, const struct bpf_program *lp,
			 const struct bpfrt_program *bp)
{
	const struct bpf_insn *li = bpf_program__insns(lp), *bi = bpfrt_program_insns(bp);
	size_t n = bpf_program__insn_cnt(lp), bn = bpfrt_program_insn_cnt(bp);

	T_EQ_INT(n, bn);
	for (size_t i = 0; i < n && i < bn; i++) {
		const struct bpf_insn *a = &li[i], *b = &bi[i];
		int wide = a->code == (BPF_LD | BPF_IMM | BPF_DW);
		int mapref = wide && (a->src_reg == BPF_PSEUDO_MAP_FD ||
				      a->src_reg == BPF_PSEUDO_MAP_VALUE);

		insns_total += 1 + wide;
		if (a->code != b->code || a->dst_reg != b->dst_reg || a->src_reg != b->src_reg ||
		    a->off != b->off || (!mapref && a->imm != b->imm) ||
		    (wide && a[1].imm != b[1].imm) ||
		    (mapref && map_pos(lo, a->imm) != b->imm)) {
			T_FAIL("%s insn %zu: libbpf %02x %u %u %d %d, bpfrt %02x %u %u %d %d",
			       bpfrt_program_name(bp), i, a->code, a->dst_reg, a->src_reg, a->off,
			       a->imm, b->code, b->dst_reg, b->src_reg, b->off, b->imm);
			continue;
		}
		insns_equal += 1 + wide;
		i += wide;
	}
	T_OK();
}

static uint32_t kinds[BPF_CORE_TYPE_MATCHES + 1], poisoned;

static uint32_t core_count(const struct bpfrt_object *bo)
{
	uint32_t n = 0;

	for (size_t k = 0; k <= BPF_CORE_TYPE_MATCHES; k++)
		n += bo->core_stats.applied[k];
	return n;
}

/* corpus: only objects both open and libbpf loads (a failure before relocation would leave
 * libbpf's instructions unrelocated); our own corpus: every object, because libbpf
 * relocates before the kernel refuses a reached poison. */
static void compare_object_btf(const char *path, int *compared, int corpus, const char *btf)
{
	LIBBPF_OPTS(bpf_object_open_opts, lopts, .btf_custom_path = btf);
	BPFRT_OPTS(bpfrt_object_open_opts, bopts, .btf_custom_path = btf);
	struct bpf_object *lo = bpf_object__open_file(path, btf ? &lopts : NULL);
	struct bpfrt_object *bo = bpfrt_object_open_file(path, btf ? &bopts : NULL);
	struct bpf_program *lp;

	T_CASE(path);
	/* every program relocated now, in order, as the open did before relocation became
	 * lazy (the counts below are then the object's) */
	if (bo)
		T_EQ_INT(0, brt_object_core_all(bo));
	if (corpus && (!lo || !bo || !core_count(bo)))
		goto out;
	if (!lo || !bo) {
		T_FAIL("open: libbpf %p bpfrt %p (errno %d)", (void *)lo, (void *)bo, errno);
		goto out;
	}
	/* programs whose unguarded poisoned reads the kernel refuses keep their relocated
	 * instructions in libbpf all the same */
	if (bpf_object__load(lo) && corpus)
		goto out;
	for (size_t k = 0; k <= BPF_CORE_TYPE_MATCHES; k++)
		kinds[k] += bo->core_stats.applied[k];
	poisoned += bo->core_stats.poisoned;
	bpf_object__for_each_program(lp, lo) {
		struct bpfrt_program *bp =
			bpfrt_object_find_program_by_name(bo, bpf_program__name(lp));

		if (!bp) {
			T_FAIL("no program %s in bpfrt's object", bpf_program__name(lp));
			continue;
		}
		/* libbpf relocates only what it loads: a program with autoload off (SEC("?..."),
		 * the kernel selftests' expected failures) keeps its ELF instructions there */
		if (!bpf_program__autoload(lp))
			continue;
		compare_prog(lo, lp, bp);
	}
	(*compared)++;
out:
	bpf_object__close(lo);
	bpfrt_object_close(bo);
}

static void compare_object(const char *path, int *compared, int corpus)
{
	compare_object_btf(path, compared, corpus, NULL);
}

/* An ELF file (dst) whose one section .BTF holds the raw BTF file src: what libbpf's
 * btf__parse() reads from a vmlinux image or an object.  0 or -1. */
static int btf_elf(const char *src, const char *dst)
{
	static const char names[] = "\0.BTF\0.shstrtab";
	unsigned char *b = NULL;
	Elf64_Ehdr eh;
	Elf64_Shdr sh[3];
	long size;
	FILE *f = fopen(src, "rb"), *o = NULL;
	int ret = -1;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(b = malloc((size_t)size)) || fread(b, 1, (size_t)size, f) != (size_t)size)
		goto out;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_BPF;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 2;
	/* header, one odd byte (so .BTF is not aligned), the BTF, the names, the sections */
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = sizeof(eh) + 1,
			      .sh_size = (uint64_t)size, .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 6, .sh_type = SHT_STRTAB,
			      .sh_offset = sizeof(eh) + 1 + (uint64_t)size,
			      .sh_size = sizeof(names), .sh_addralign = 1 };
	eh.e_shoff = (sh[2].sh_offset + sizeof(names) + 7) & ~7ull;
	o = fopen(dst, "wb");
	if (!o || fwrite(&eh, sizeof(eh), 1, o) != 1 || fputc(0, o) == EOF ||
	    fwrite(b, 1, (size_t)size, o) != (size_t)size ||
	    fwrite(names, sizeof(names), 1, o) != 1)
		goto out;
	for (uint64_t at = sh[2].sh_offset + sizeof(names); at < eh.e_shoff; at++)
		fputc(0, o);
	if (fwrite(sh, sizeof(sh), 1, o) == 1)
		ret = 0;
out:
	if (o && fclose(o))
		ret = -1;
	if (f)
		fclose(f);
	free(b);
	return ret;
}

/* Load one program into bpfrt; returns the load's errno and leaves the log in *log. */
static int load_one(const char *path, const char *prog, const char **log,
		    struct bpfrt_object **keep)
{
	struct bpfrt_object *o = bpfrt_object_open_file(path, NULL);
	struct bpfrt_program *p;
	int ret;

	if (!o)
		return -errno;
	for (p = bpfrt_object_next_program(o, NULL); p; p = bpfrt_object_next_program(o, p))
		bpfrt_program_set_autoload(p, !strcmp(bpfrt_program_name(p), prog));
	ret = bpfrt_object_load(o);
	*log = bpfrt_object_log(o);
	*keep = o;
	return ret;
}

static void refusals(void)
{
	BPFRT_OPTS(bpfrt_object_open_opts, missing, .btf_custom_path = "/nonexistent.btf");
	BPFRT_OPTS(bpfrt_object_open_opts, vmlinux, .btf_custom_path = "/sys/kernel/btf/vmlinux");
	BPFRT_OPTS(bpfrt_object_open_opts, notbtf, .btf_custom_path = CORPUS "/vmlinux.h");
	struct bpfrt_object *o;

	T_CASE("target BTF named in the options");
	o = bpfrt_object_open_file(CORPUS "/task_reads.bpf.o", &vmlinux);
	T_ASSERT(o != NULL);
	bpfrt_object_close(o);
	/* an object file is ELF but its .BTF is no vmlinux: open, relocated against it */
	{
		BPFRT_OPTS(bpfrt_object_open_opts, elf, .btf_custom_path = CORPUS "/types_enums.bpf.o");

		o = bpfrt_object_open_file(CORPUS "/unguarded.bpf.o", &elf);
		T_ASSERT(o != NULL);
		bpfrt_object_close(o);
	}
	errno = 0;
	o = bpfrt_object_open_file(CORPUS "/task_reads.bpf.o", &missing);
	T_ASSERT(o == NULL);
	T_EQ_INT(EINVAL, errno);
	errno = 0;
	o = bpfrt_object_open_file(CORPUS "/task_reads.bpf.o", &notbtf);
	T_ASSERT(o == NULL);
	T_EQ_INT(EINVAL, errno);
}

static void poisons(void)
{
	struct bpfrt_object *o = NULL;
	const char *log;
	int ret;

	/* every unresolved read in these is behind an existence check: dead code */
	T_CASE("guarded poisoned reads load");
	ret = load_one(CORPUS "/task_reads.bpf.o", "reads", &log, &o);
	T_EQ_INT(0, ret);
	if (ret)
		fprintf(stderr, "%s\n", log);
	bpfrt_object_close(o);
	ret = load_one(CORPUS "/types_enums.bpf.o", "second", &log, &o);
	T_EQ_INT(0, ret);
	if (ret)
		fprintf(stderr, "%s\n", log);
	bpfrt_object_close(o);
	ret = load_one(CORPUS "/unguarded.bpf.o", "guarded", &log, &o);
	T_EQ_INT(0, ret);
	bpfrt_object_close(o);
	T_CASE("unguarded poisoned read is refused where reached");
	ret = load_one(CORPUS "/unguarded.bpf.o", "unguarded", &log, &o);
	T_EQ_INT(-EINVAL, ret);
	/* the kernel's "N: (85) call unknown#195896080 / invalid func unknown#195896080",
	 * rewritten as libbpf rewrites it */
	T_ASSERT(strstr(log, ": <invalid CO-RE relocation>\nfailed to resolve CO-RE relocation "
			     "<byte_off> [") != NULL);
	T_ASSERT(strstr(log, "struct task_struct___gone.field_gone_since_forever (0:0 @ offset "
			     "0)\n") != NULL);
	if (t_failed)
		fprintf(stderr, "%s\n", log);
	bpfrt_object_close(o);
}

/* `--corpus`: every CO-RE object of the real-world corpus (docs/CORPUS.md, label corpus)
 * that libbpf loads, compared the same way. */
static int corpus_main(void)
{
	const char *dir = getenv("BPFRT_CORPUS_DIR"), *home = getenv("HOME");
	char pat[4096];
	int compared = 0;
	glob_t g;

	if (dir)
		snprintf(pat, sizeof(pat), "%s/*/*.o", dir);
	else
		snprintf(pat, sizeof(pat), "%s/.cache/bpfrt-corpus/*/*.o", home ? home : "/root");
	if (glob(pat, 0, NULL, &g)) {
		printf("skipped: no corpus at %s (docs/CORPUS.md)\n", pat);
		return 77;
	}
	libbpf_set_print(silent);
	for (size_t i = 0; i < g.gl_pathc; i++)
		compare_object(g.gl_pathv[i], &compared, 1);
	globfree(&g);
	printf("corpus CO-RE objects compared with libbpf: %d; instructions equal %zu / %zu\n",
	       compared, insns_equal, insns_total);
	printf("relocations applied:");
	for (uint32_t k = 0; k <= BPF_CORE_TYPE_MATCHES; k++)
		printf(" %s %u", brt_core_kind_name(k), kinds[k]);
	printf("; poisoned %u\n", poisoned);
	T_ASSERT(compared > 0);
	printf("%d passed, %d failed\n", t_passed, t_failed);
	return t_failed ? 1 : 0;
}

/* Called on each CO-RE record (struct bpf_core_relo: insn_off, type_id, access_str_off,
 * kind) of .BTF.ext with the name of its section in the strings of .BTF (strs, NULL
 * without .BTF); returns 1 when it changed the record. */
typedef int (*core_edit_fn)(unsigned char *rec, const char *strs, uint32_t sec_name_off,
			    const char *arg);

/* Copy the object at src to dst with edit applied to every CO-RE record of its .BTF.ext;
 * the number changed, or -1. */
static int edit_core_records(const char *src, const char *dst, core_edit_fn edit,
			     const char *arg)
{
	FILE *f = fopen(src, "rb");
	unsigned char *b = NULL, *btf = NULL, *ext = NULL;
	long size;
	int changed = -1;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < (long)sizeof(Elf64_Ehdr) ||
	    fseek(f, 0, SEEK_SET) || !(b = malloc((size_t)size)) ||
	    fread(b, 1, (size_t)size, f) != (size_t)size)
		goto out;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)b;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)(b + eh->e_shoff);
	const char *names = (const char *)b + sh[eh->e_shstrndx].sh_offset;

	for (int i = 0; i < eh->e_shnum; i++) {
		if (!strcmp(names + sh[i].sh_name, ".BTF"))
			btf = b + sh[i].sh_offset;
		if (!strcmp(names + sh[i].sh_name, ".BTF.ext"))
			ext = b + sh[i].sh_offset;
	}
	if (ext) {
		uint32_t bhdr, str_off, hdr_len, off, len, rec;
		const char *strs = NULL;

		if (btf) {
			memcpy(&bhdr, btf + 4, 4);
			memcpy(&str_off, btf + 16, 4);
			strs = (const char *)btf + bhdr + str_off;
		}
		memcpy(&hdr_len, ext + 4, 4);
		memcpy(&off, ext + 24, 4);
		memcpy(&len, ext + 28, 4);
		unsigned char *p = ext + hdr_len + off, *end = p + len;

		memcpy(&rec, p, 4);
		changed = 0;
		for (p += 4; p + 8 <= end;) {
			uint32_t name_off, n;

			memcpy(&name_off, p, 4);
			memcpy(&n, p + 4, 4);
			p += 8;
			for (uint32_t r = 0; r < n && p + rec <= end; r++, p += rec)
				changed += edit(p, strs, name_off, arg);
		}
	}
	fclose(f);
	f = fopen(dst, "wb");
	if (!f || fwrite(b, 1, (size_t)size, f) != (size_t)size)
		changed = -1;
out:
	if (f)
		fclose(f);
	free(b);
	return changed;
}

/* TYPE_EXISTS becomes TYPE_MATCHES */
static int exists_to_matches(unsigned char *rec, const char *strs, uint32_t sec_name_off,
			     const char *arg)
{
	uint32_t kind;

	(void)strs;
	(void)sec_name_off;
	(void)arg;
	memcpy(&kind, rec + 12, 4);
	if (kind != BPF_CORE_TYPE_EXISTS)
		return 0;
	kind = BPF_CORE_TYPE_MATCHES;
	memcpy(rec + 12, &kind, 4);
	return 1;
}

/* Copy the object at src to dst with every TYPE_EXISTS record of its .BTF.ext turned
 * into TYPE_MATCHES (what clang >= 15 emits for bpf_core_type_matches()); the number
 * changed, or -1. */
static int to_type_matches(const char *src, const char *dst)
{
	return edit_core_records(src, dst, exists_to_matches, NULL);
}

/* a record of section arg gets the section's name as its access string */
static int point_at_section(unsigned char *rec, const char *strs, uint32_t sec_name_off,
			    const char *arg)
{
	if (!strs || strcmp(strs + sec_name_off, arg))
		return 0;
	memcpy(rec + 8, &sec_name_off, 4);
	return 1;
}

/* Copy src to dst with every CO-RE record of section sec pointing its access string at
 * the section's name (no accessor: the relocation fails, it is not poisoned); how many
 * changed, or -1. */
static int break_section(const char *src, const char *dst, const char *sec)
{
	return edit_core_records(src, dst, point_at_section, sec);
}

/* A program whose relocations fail is refused at load, not at open, and only when it is
 * loaded: libbpf opens the object and loads the others when it is set autoload off. */
static void failing_program(int *compared)
{
	const char *broken = CORPUS "/types_enums.broken.o";
	struct bpf_object *lo;
	struct bpfrt_object *bo;
	int ret;

	T_CASE("a program with failing relocations, autoload off");
	T_ASSERT(break_section(CORPUS "/types_enums.bpf.o", broken,
			       "tracepoint/syscalls/sys_enter_nanosleep") > 0);
	/* both load the object with the broken program on: both refuse */
	lo = bpf_object__open_file(broken, NULL);
	T_ASSERT(lo != NULL);
	T_ASSERT(bpf_object__load(lo) != 0);
	bpf_object__close(lo);
	bo = bpfrt_object_open_file(broken, NULL);
	T_ASSERT(bo != NULL);
	if (bo)
		T_EQ_INT(-EINVAL, bpfrt_object_load(bo));
	bpfrt_object_close(bo);
	/* off: libbpf loads the other program, bpfrt opens and relocates it the same */
	lo = bpf_object__open_file(broken, NULL);
	bo = bpfrt_object_open_file(broken, NULL);
	T_ASSERT(lo != NULL && bo != NULL);
	if (lo && bo) {
		struct bpfrt_program *bp = bpfrt_object_find_program_by_name(bo, "second");

		bpf_program__set_autoload(bpf_object__find_program_by_name(lo, "second"), false);
		T_ASSERT(bp != NULL);
		if (bp)
			bpfrt_program_set_autoload(bp, 0);
		/* nothing relocated at open: each program on first need */
		T_EQ_INT(0, core_count(bo));
		ret = bpf_object__load(lo);
		T_EQ_INT(0, ret);
		if (!ret) {
			compare_prog(lo, bpf_object__find_program_by_name(lo, "first"),
				     bpfrt_object_find_program_by_name(bo, "first"));
			(*compared)++;
		}
		/* "first"'s code was asked for and relocated; the broken one never was */
		T_ASSERT(core_count(bo) > 0);
		if (bp)
			T_ASSERT(!bp->core_done && !bp->core_err);
	}
	bpf_object__close(lo);
	bpfrt_object_close(bo);
}

int main(int argc, char **argv)
{
	glob_t g;
	int compared = 0, rc;
	char cmd[1024];

	if (geteuid() != 0) {
		printf("skipped: libbpf loads into the kernel (needs root)\n");
		return 77;
	}
	if (argc > 1 && !strcmp(argv[1], "--corpus"))
		return corpus_main();
	snprintf(cmd, sizeof(cmd), "sh %s/tests/progs_core/build.sh %s clang", BPFRT_SOURCE_DIR,
		 CORPUS);
	rc = system(cmd);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) == 77) {
		printf("skipped: the CO-RE corpus could not be built (see above)\n");
		return 77;
	}
	if (WEXITSTATUS(rc)) {
		T_FAIL("build.sh failed: %d", WEXITSTATUS(rc));
		return 1;
	}
	libbpf_set_print(silent);
	if (glob(CORPUS "/*.bpf.o", 0, NULL, &g)) {
		printf("skipped: empty CO-RE corpus\n");
		return 77;
	}
	for (size_t i = 0; i < g.gl_pathc; i++)
		compare_object(g.gl_pathv[i], &compared, 0);
	globfree(&g);
	/* the target named in the options as an ELF file holding vmlinux's BTF in .BTF
	 * (btf__parse()'s second form): libbpf and bpfrt relocate the same */
	T_CASE("target BTF in an ELF file's .BTF section");
	T_EQ_INT(0, btf_elf("/sys/kernel/btf/vmlinux", CORPUS "/vmlinux_btf.elf"));
	rc = compared;
	for (size_t i = 0; i < 3; i++) {
		static const char *const objs[] = { "/task_reads.bpf.o", "/types_enums.bpf.o",
						    "/unguarded.bpf.o" };
		char path[4096];

		snprintf(path, sizeof(path), "%s%s", CORPUS, objs[i]);
		compare_object_btf(path, &compared, 0, CORPUS "/vmlinux_btf.elf");
	}
	T_EQ_INT(rc + 3, compared);
	T_CASE("TYPE_MATCHES records");
	rc = to_type_matches(CORPUS "/type_matches.bpf.o", CORPUS "/type_matches.matches.o");
	T_ASSERT(rc >= 13);
	if (rc > 0)
		compare_object(CORPUS "/type_matches.matches.o", &compared, 0);
	printf("objects compared with libbpf: %d; instructions equal %zu / %zu\n", compared,
	       insns_equal, insns_total);
	printf("relocations applied:");
	for (uint32_t k = 0; k <= BPF_CORE_TYPE_MATCHES; k++)
		printf(" %s %u", brt_core_kind_name(k), kinds[k]);
	printf("; poisoned %u\n", poisoned);
	T_ASSERT(compared >= 2);
	T_ASSERT(insns_total > 0 && insns_equal == insns_total);
	/* the corpus exercises every kind (TYPE_MATCHES through the rewritten object) */
	for (uint32_t k = 0; k <= BPF_CORE_TYPE_MATCHES; k++) {
		T_CASE(brt_core_kind_name(k));
		T_ASSERT(kinds[k] > 0);
	}
	T_ASSERT(poisoned > 0);
	refusals();
	poisons();
	failing_program(&compared);
	printf("%d passed, %d failed\n", t_passed, t_failed);
	return t_failed ? 1 : 0;
}
#else
int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("skipped: built without libbpf-dev\n");
	return 77;
}
#endif
