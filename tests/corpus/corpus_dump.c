/* corpus_dump.c - everything the ELF stage makes of an object, as text, so two builds can
 * be compared over the whole corpus (scripts/corpus-dump.sh): every program linked and
 * CO-RE relocated (code, relocations, source lines, func_info, CO-RE records), the maps,
 * and the messages printed on the way (sorted: which step prints a message - the open or
 * a program's first use - may differ between builds, the set may not).  A program that
 * cannot be linked ends the dump with its errno, as an open that failed does.
 * Usage: corpus_dump OBJ  (writes to stdout) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "object/object.h"

static char **msgs;
static size_t nmsgs;

static int collect(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	char buf[2048];
	char **n;

	(void)level;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = realloc(msgs, (nmsgs + 1) * sizeof(*n));
	if (!n)
		return 0;
	msgs = n;
	msgs[nmsgs++] = strdup(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_msgs(void)
{
	if (nmsgs)
		qsort(msgs, nmsgs, sizeof(*msgs), cmp_str);
	for (size_t i = 0; i < nmsgs; i++)
		printf("msg %s%s", msgs[i] ? msgs[i] : "(null)\n",
		       msgs[i] && strchr(msgs[i], '\n') ? "" : "\n");
}

static void dump_prog(const struct bpfrt_program *prog)
{
	const struct brt_elf_prog *p = prog->p;

	printf("prog %s sec %s type %u attach %u flags %u noauto %d insns %zu own %zu core_err %d\n",
	       p->name, p->sec_name, p->type, p->expected_attach_type, p->prog_flags,
	       p->no_autoload, p->insn_cnt, p->main_cnt, prog->core_err);
	for (size_t i = 0; i < p->insn_cnt; i++) {
		const struct bpf_insn *in = &p->insns[i];

		printf(" i%zu %02x %x %x %d %d\n", i, in->code, in->dst_reg, in->src_reg, in->off,
		       in->imm);
	}
	for (size_t r = 0; r < p->nrelocs; r++) {
		const struct brt_elf_reloc *rl = &p->relocs[r];

		printf(" r %u %d %d %u %u %u %u %s\n", rl->insn_idx, rl->kind, rl->target, rl->off,
		       rl->sec_idx, rl->sec_off, rl->elf_type, rl->sym ? rl->sym : "(null)");
	}
	for (size_t l = 0; l < p->nlines; l++) {
		const struct brt_elf_line *ln = &p->lines[l];

		printf(" l %u %u %u %u:%u %s | %s\n", ln->insn_idx, ln->file_off, ln->src_off,
		       ln->line, ln->col, ln->file, ln->src);
	}
	for (size_t f = 0; f < p->nfunc_info; f++)
		printf(" f %u %u\n", p->func_info[f].insn_off, p->func_info[f].type_id);
	for (size_t c = 0; c < p->ncores; c++) {
		const struct brt_btf_core_relo *rec = p->cores[c].rec;

		printf(" c %u %s %u %u %s %u %u\n", p->cores[c].insn_idx, rec->sec, rec->insn_off,
		       rec->type_id, rec->access, rec->kind, rec->sec_rec);
	}
}

static void dump_map(const struct brt_elf_map *m, const char *indent)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t b = 0; m->data && b < m->value_size; b++)
		h = (h ^ m->data[b]) * 0x100000001b3ull;
	printf("%smap %s kind %d sec %u off %u type %u key %u value %u max %u flags %u numa %u "
	       "pin %u %s id %u inner_ref %u btf %u %u data %d %016llx values %u %u\n",
	       indent, m->name, m->kind, m->sec_idx, m->sec_off, m->type, m->key_size,
	       m->value_size, m->max_entries, m->map_flags, m->numa_node, m->pinning,
	       m->pin_dir ? m->pin_dir : "-", m->id, m->inner_ref, m->btf_key_type_id,
	       m->btf_value_type_id, m->data != NULL, (unsigned long long)h, m->values_off,
	       m->values_end);
	for (size_t s = 0; s < m->nslots; s++)
		printf("%s slot %u %d\n", indent, m->slots[s].index, m->slots[s].target);
	if (m->inner)
		dump_map(m->inner, "  inner ");
}

int main(int argc, char **argv)
{
	struct bpfrt_object *obj;
	struct brt_elf_obj *o;
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: corpus_dump OBJ\n");
		return 2;
	}
	bpfrt_set_print(collect);
	obj = bpfrt_object_open_file(argv[1], NULL);
	if (!obj) {
		printf("open failed: %s\n", strerror(errno));
		print_msgs();
		return 0;
	}
	o = obj->elf;
	/* every program linked and relocated, in order; a program that cannot be linked
	 * ends the dump as a failed open did */
#ifdef BRT_ELF_LAZY
	for (size_t i = 0; i < o->nprogs && !ret; i++)
		ret = brt_object_prog_link(obj, &obj->progs[i]);
	if (ret) {
		printf("open failed: %s\n", strerror(-ret));
		print_msgs();
		bpfrt_object_close(obj);
		return 0;
	}
#endif
	ret = brt_object_core_all(obj);
	printf("object %s license %s version %u progs %zu maps %zu syms %zu core_all %d\n",
	       o->name, o->license, o->kern_version, o->nprogs, o->nmaps, o->nsyms_seen, ret);
	for (size_t i = 0; i < o->nprogs; i++)
		dump_prog(&obj->progs[i]);
	for (size_t i = 0; i < o->nmaps; i++)
		dump_map(&o->maps[i], "");
	printf("stats");
	for (size_t k = 0; k < sizeof(obj->core_stats.applied) / sizeof(obj->core_stats.applied[0]);
	     k++)
		printf(" %u", obj->core_stats.applied[k]);
	printf(" poisoned %u\n", obj->core_stats.poisoned);
	print_msgs();
	bpfrt_object_close(obj);
	return 0;
}
