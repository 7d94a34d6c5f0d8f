/* prog_dump.c - `bpfrt prog dump xlated|jited PROG [linum] [opcodes]`: the instructions
 * as the loaded program holds them (maps named by id) and the x86-64 code the JIT emits for
 * them, each instruction under its source line when line info is known (the object's
 * .BTF.ext for OBJ NAME, or the line info the program was loaded with). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "api/api.h"
#include "cli.h"
#include "helpers/helpers.h"
#include "isa/isa.h"
#include "jit/jit.h"
#include "json.h"
#include "maps/maps.h"
#include "verifier/verifier.h"
#include "vm/vm.h"

struct dump {
	struct cli_prog p;
	struct bpf_insn *insns;
	uint32_t n;
	struct brt_prog *bprog; /* bpfrt program of this process (map names), or NULL */
	int linum, opcodes, json;
	struct json j;
	const char *last_src; /* source line shown last */
	uint32_t last_line;
};

static int fetch_xlated(struct dump *d)
{
	struct bpf_prog_info info;
	uint32_t len;

	/* a bpfrt program shows the instructions it runs (OBJ_GET_INFO_BY_FD reports the
	 * kernel's rewrites of them, which bpftool shows), with the line info as loaded */
	if (d->p.sys == bpfrt_bpf && !brt_prog_from_fd(d->p.fd, &d->bprog)) {
		struct brt_xlated xl;

		if (brt_prog_xlated(d->bprog, 0, &xl))
			return cli_error("out of memory");
		d->insns = xl.insns;
		d->n = xl.n;
		xl.insns = NULL;
		brt_xlated_free(&xl);
		if (!d->n)
			return cli_error("prog dump: %s: no instructions to show", d->p.label);
		return 0;
	}
	d->bprog = NULL;
	memset(&info, 0, sizeof(info));
	if (cli_prog_info(&d->p, &info))
		return 1;
	len = info.xlated_prog_len;
	if (!len)
		return cli_error("prog dump: %s: no instructions to show", d->p.label);
	d->insns = calloc(1, len);
	if (!d->insns)
		return cli_error("out of memory");
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = len;
	info.xlated_prog_insns = (uint64_t)(uintptr_t)d->insns;
	if (cli_prog_info(&d->p, &info))
		return 1;
	d->n = len / (uint32_t)sizeof(struct bpf_insn);
	return 0;
}

/* Source line starting at instruction i, if the line info has one and it differs from
 * the previous one shown (clang repeats a line for each of its instructions). */
static const char *line_at(struct dump *d, size_t i, const char **file, uint32_t *line)
{
	const char *src = NULL;

	*file = NULL;
	*line = 0;
	if (d->bprog && d->bprog->lines) {
		/* the line info the program was loaded with (BPF_PROG_LOAD line_info) */
		const struct brt_prog_lines *pl = d->bprog->lines;
		uint32_t lo = 0, hi = pl->n;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (pl->lines[mid].insn_off < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < pl->n && pl->lines[lo].insn_off == i) {
			src = pl->lines[lo].src;
			*file = pl->lines[lo].file;
			*line = pl->lines[lo].line;
		}
	} else if (d->p.prog && i < bpfrt_program_insn_cnt(d->p.prog)) {
		src = bpfrt_program_line(d->p.prog, i, file, line);
	}
	if (!src || (src == d->last_src && *line == d->last_line))
		return NULL;
	d->last_src = src;
	d->last_line = *line;
	src += strspn(src, " \t");
	return *src ? src : NULL;
}

static int insn_text(const struct dump *d, size_t i, char *buf, size_t cap)
{
	/* xlated lddw name their maps by id, which the disassembler prints as bpftool */
	int slots = brt_disasm_insn(&d->insns[i], d->n - i, BRT_DISASM_KERNEL, buf, cap);

	return slots == 2 ? 2 : 1;
}

static void opcodes_text(const struct bpf_insn *insn, int slots, char *buf, size_t cap)
{
	const uint8_t *b = (const uint8_t *)insn;
	size_t len = 0;

	buf[0] = 0;
	for (int k = 0; k < 8 * slots && len + 4 < cap; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%02x", k ? " " : "", b[k]);
}

static void src_comment(const struct dump *d, const char *src, const char *file, uint32_t line,
			const char *indent)
{
	if (d->linum)
		printf("%s; %s [file:%s line_num:%u]\n", indent, src, file, line);
	else
		printf("%s; %s\n", indent, src);
}

static void json_src(struct dump *d, const char *src, const char *file, uint32_t line)
{
	json_kv_string(&d->j, "src", src);
	if (d->linum) {
		json_kv_string(&d->j, "file", file);
		json_kv_uint(&d->j, "line_num", line);
	}
}

static int dump_xlated(struct dump *d)
{
	char text[160], ops[64];

	if (d->json)
		json_begin_array(&d->j);
	for (size_t i = 0; i < d->n;) {
		const char *file, *src;
		uint32_t line;
		int slots;

		src = line_at(d, i, &file, &line);
		slots = insn_text(d, i, text, sizeof(text));
		opcodes_text(&d->insns[i], slots, ops, sizeof(ops));
		if (d->json) {
			json_begin_object(&d->j);
			json_kv_uint(&d->j, "pc", i);
			json_kv_string(&d->j, "disasm", text);
			if (d->opcodes)
				json_kv_string(&d->j, "opcodes", ops);
			if (src)
				json_src(d, src, file, line);
			json_end_object(&d->j);
		} else {
			if (src)
				src_comment(d, src, file, line, "");
			printf("%4zu: %s\n", i, text);
			if (d->opcodes)
				printf("       %s\n", ops);
		}
		i += (size_t)slots;
	}
	if (d->json) {
		json_end_array(&d->j);
		json_finish(&d->j);
	}
	return 0;
}

#ifdef BPFRT_HAVE_JIT
static uint64_t placeholder(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			    struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

brt_helper_fn cli_jit_helper(void *arg, uint32_t id)
{
	size_t n;
	const brt_helper_fn *table = brt_helper_default_table(&n);

	(void)arg;
	return id < n && table[id] ? table[id] : placeholder;
}

/* Re-emit brt_jit_dump()'s text ("  N: insn" lines, each followed by its indented
 * machine code) with source lines, or as JSON: one object per instruction. */
static void jited_filter(struct dump *d, char *out)
{
	char text[160];
	int open = 0;

	if (d->json)
		json_begin_array(&d->j);
	for (char *l = out, *nl; *l; l = nl + 1) {
		size_t sp = strspn(l, " ");
		const char *file = NULL, *src = NULL;
		unsigned long pc;
		uint32_t line = 0;
		char *end;
		int is_insn;

		nl = strchr(l, '\n');
		if (!nl)
			nl = l + strlen(l) - 1;
		else
			*nl = 0;
		pc = strtoul(l + sp, &end, 10);
		is_insn = sp < 8 && end != l + sp && *end == ':';
		if (is_insn && pc < d->n) {
			src = line_at(d, pc, &file, &line);
			/* our text names maps, the JIT's shows their addresses */
			insn_text(d, pc, text, sizeof(text));
			end = text;
		}
		if (!d->json) {
			if (src)
				src_comment(d, src, file, line, "");
			if (is_insn && pc < d->n)
				printf("%4lu: %s\n", pc, text);
			else
				printf("%s\n", l);
		} else if (is_insn) {
			if (open) {
				json_end_array(&d->j);
				json_end_object(&d->j);
			}
			json_begin_object(&d->j);
			json_kv_uint(&d->j, "pc", pc);
			json_kv_string(&d->j, "disasm", end == text ? text : "");
			if (src)
				json_src(d, src, file, line);
			json_key(&d->j, "jited");
			json_begin_array(&d->j);
			open = 1;
		} else if (open && sp >= 8) {
			json_string(&d->j, l + sp);
		}
	}
	if (d->json) {
		if (open) {
			json_end_array(&d->j);
			json_end_object(&d->j);
		}
		json_end_array(&d->j);
		json_finish(&d->j);
	}
}

/* brt_jit_dump() into memory, then re-emitted by jited_filter(). */
static int print_jited(struct dump *d, const struct brt_jit_prog *jp)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	mem = open_memstream(&text, &len);
	if (!mem)
		return cli_error("out of memory");
	ret = brt_jit_dump(jp, d->insns, mem, d->opcodes ? BRT_JIT_DUMP_OPCODES : 0);
	if (fclose(mem) || ret) {
		free(text);
		return cli_error("jit dump: %s", strerror(ret ? -ret : errno));
	}
	jited_filter(d, text);
	free(text);
	return 0;
}

int cli_jit_print(const struct brt_jit_prog *jp, const struct bpf_insn *insns, size_t n,
		  const struct cli_dump_opts *o)
{
	struct dump d = { .json = o->json, .opcodes = o->opcodes, .n = (uint32_t)n };

	d.insns = (struct bpf_insn *)(uintptr_t)insns;
	json_init(&d.j, stdout, o->pretty);
	return print_jited(&d, jp);
}

/* The xlated instructions with map ids turned back into the addresses the loaded program
 * uses (0 when the program is not built in this process): what the JIT compiled. */
static struct bpf_insn *jit_insns(const struct dump *d)
{
	struct bpf_insn *insns = malloc((size_t)d->n * sizeof(*insns));

	if (!insns)
		return NULL;
	memcpy(insns, d->insns, (size_t)d->n * sizeof(*insns));
	for (uint32_t i = 0; i + 1 < d->n; i++) {
		struct bpf_insn *in = &insns[i];
		uint64_t addr = 0;

		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		for (uint32_t m = 0; d->bprog && m < d->bprog->pm.n; m++) {
			const struct brt_map *map = d->bprog->pm.maps[m];

			if (map->obj.snap.id != (uint32_t)in->imm)
				continue;
			addr = in->src_reg == BPF_PSEUDO_MAP_VALUE ?
				       (uintptr_t)map->data + (uint32_t)in[1].imm : (uintptr_t)map;
		}
		if (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_VALUE) {
			in[0].src_reg = 0;
			in[0].imm = (int32_t)(uint32_t)addr;
			in[1].imm = (int32_t)(uint32_t)(addr >> 32);
		}
		i++;
	}
	return insns;
}

static int dump_jited(struct dump *d)
{
	struct brt_jit_env env = { .helper = cli_jit_helper,
				   .pkt_data_off = offsetof(struct bpfrt_run_ctx, skb_data),
				   .pkt_len_off = offsetof(struct bpfrt_run_ctx, skb_len) };
	struct brt_jit_prog *jp;
	char err[512];
	int ret;

	struct bpf_insn *insns;

	if (d->p.sys != bpfrt_bpf)
		return cli_error("prog dump jited: not with --kernel (bpftool prog dump jited "
				 "shows the kernel's code)");
	/* a program of this process: the code its runs execute (map lookups bound) */
	if (d->bprog && d->bprog->vm) {
		const struct brt_jit_prog *own;

		if (!brt_vm_jit_code(d->bprog->vm, &own, err, sizeof(err)))
			return print_jited(d, own);
	}
	insns = jit_insns(d);
	if (!insns)
		return cli_error("out of memory");
	ret = brt_jit_compile(insns, d->n, &env, &jp, err, sizeof(err));
	free(insns);
	if (ret)
		return cli_error("prog dump jited: %s: %s", d->p.label, err);
	ret = print_jited(d, jp);
	brt_jit_free(jp);
	return ret;
}
#else
static int dump_jited(struct dump *d)
{
	(void)d;
	return cli_error("prog dump jited: this build has no JIT (-DBPFRT_JIT=OFF)");
}
#endif

int cli_prog_dump(int argc, char **argv, const struct cli_dump_opts *o)
{
	struct dump d = { .json = o->json, .opcodes = o->opcodes, .linum = o->linum };
	int i = 1, ret, jited;

	if (argc < 1 || (strcmp(argv[0], "xlated") && strcmp(argv[0], "jited")))
		return cli_error("prog dump: say 'xlated' or 'jited'");
	jited = argv[0][0] == 'j';
	json_init(&d.j, stdout, o->pretty);
	if (cli_prog_open(argc, argv, &i, o->kernel, &d.p))
		return 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "linum")) {
			d.linum = 1;
		} else if (!strcmp(argv[i], "opcodes")) {
			d.opcodes = 1;
		} else {
			cli_prog_close(&d.p);
			return cli_error("prog dump: unknown argument '%s'", argv[i]);
		}
	}
	ret = fetch_xlated(&d);
	if (!ret)
		ret = jited ? dump_jited(&d) : dump_xlated(&d);
	if (d.bprog)
		brt_obj_put(&d.bprog->obj);
	free(d.insns);
	cli_prog_close(&d.p);
	return ret;
}
