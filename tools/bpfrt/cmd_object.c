/* cmd_object.c - `bpfrt object show OBJ`: what the loader makes of an eBPF ELF object -
 * programs (section, type, instruction count, applied relocations, optionally the linked
 * code with source lines), maps (type, sizes, origin) - as text or JSON (-j, -p). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "cli.h"
#include "elf/elf.h"
#include "isa/isa.h"
#include "json.h"

static const char *const map_kinds[] = {
	[BRT_ELF_MAP_LEGACY] = "legacy",
	[BRT_ELF_MAP_BTF] = "btf",
	[BRT_ELF_MAP_DATA] = "data",
	[BRT_ELF_MAP_RODATA] = "rodata",
	[BRT_ELF_MAP_BSS] = "bss",
};

static const char *const reloc_kinds[] = {
	[BRT_ELF_RELO_MAP_FD] = "map_fd",
	[BRT_ELF_RELO_MAP_VALUE] = "map_value",
	[BRT_ELF_RELO_CALL] = "call",
	[BRT_ELF_RELO_FUNC] = "func",
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: bpfrt object show [-j|--json] [-p|--pretty] [-d|--disasm] OBJ\n\n"
		     "Parse and link an eBPF ELF object (clang -target bpf -c) and list its\n"
		     "programs (section, type, instructions, relocations) and maps.\n"
		     "  -j, --json     JSON output\n"
		     "  -p, --pretty   indented JSON (implies -j)\n"
		     "  -d, --disasm   also print each linked program with source lines\n");
}

static void reloc_text(const struct brt_elf_obj *o, const struct brt_elf_reloc *r)
{
	printf("    insn %u: %s", r->insn_idx, reloc_kinds[r->kind]);
	if (r->kind == BRT_ELF_RELO_MAP_FD || r->kind == BRT_ELF_RELO_MAP_VALUE)
		printf(" map %d '%s'", r->target, o->maps[r->target].name);
	else
		printf(" -> insn %d", r->target);
	if (r->kind == BRT_ELF_RELO_MAP_VALUE)
		printf(" + %u", r->off);
	if (r->elf_type)
		printf("  (%s '%s' at section offset 0x%x)", brt_elf_reloc_type_name(r->elf_type),
		       r->sym, r->sec_off);
	else
		printf("  (local call at section offset 0x%x)", r->sec_off);
	printf("\n");
}

static void disasm(const struct brt_elf_prog *p)
{
	const char *last_src = NULL;
	char buf[160];

	for (size_t i = 0; i < p->insn_cnt;) {
		const struct brt_elf_line *l = brt_elf_prog_line(p, i);
		int n;

		if (l && l->src != last_src && l->src[0]) {
			printf("    ; %s (%s:%u)\n", l->src, l->file, l->line);
			last_src = l->src;
		}
		n = brt_disasm_insn(&p->insns[i], p->insn_cnt - i, BRT_DISASM_KERNEL, buf,
				    sizeof(buf));
		printf("    %4zu: %s\n", i, buf);
		i += n == 2 ? 2 : 1;
	}
}

static void show_text(const struct brt_elf_obj *o, int dis)
{
	printf("%s: license \"%s\", version %u, %zu program%s, %zu map%s\n", o->name, o->license,
	       o->kern_version, o->nprogs, o->nprogs == 1 ? "" : "s", o->nmaps,
	       o->nmaps == 1 ? "" : "s");
	for (size_t i = 0; i < o->nprogs; i++) {
		const struct brt_elf_prog *p = &o->progs[i];

		printf("prog %zu '%s': section '%s', type %s", i, p->name, p->sec_name,
		       brt_elf_prog_type_name(p->type));
		if (p->expected_attach_type)
			printf(", attach %s", brt_elf_attach_type_name(p->expected_attach_type));
		printf(", %zu insns (%zu own)\n", p->insn_cnt, p->main_cnt);
		for (size_t r = 0; r < p->nrelocs; r++)
			reloc_text(o, &p->relocs[r]);
		if (dis)
			disasm(p);
	}
	for (size_t i = 0; i < o->nmaps; i++) {
		const struct brt_elf_map *m = &o->maps[i];

		printf("map %zu '%s': %s, type %s, key %u, value %u, max_entries %u, flags 0x%x",
		       i, m->name, map_kinds[m->kind], brt_elf_map_type_name(m->type), m->key_size,
		       m->value_size, m->max_entries, m->map_flags);
		if (m->pinning)
			printf(", pinned by name");
		if (m->inner)
			printf(", inner %s key %u value %u", brt_elf_map_type_name(m->inner->type),
			       m->inner->key_size, m->inner->value_size);
		for (size_t s = 0; s < m->nslots; s++)
			printf("%s[%u] = %s", s ? ", " : ", values ", m->slots[s].index,
			       m->type == BPF_MAP_TYPE_PROG_ARRAY ? o->progs[m->slots[s].target].name
								  : o->maps[m->slots[s].target].name);
		printf("\n");
	}
}

static void show_json(const struct brt_elf_obj *o, int pretty)
{
	struct json j;

	json_init(&j, stdout, pretty);
	json_begin_object(&j);
	json_kv_string(&j, "name", o->name);
	json_kv_string(&j, "license", o->license);
	json_kv_uint(&j, "version", o->kern_version);
	json_key(&j, "programs");
	json_begin_array(&j);
	for (size_t i = 0; i < o->nprogs; i++) {
		const struct brt_elf_prog *p = &o->progs[i];

		json_begin_object(&j);
		json_kv_string(&j, "name", p->name);
		json_kv_string(&j, "section", p->sec_name);
		json_kv_string(&j, "type", brt_elf_prog_type_name(p->type));
		json_kv_string(&j, "expected_attach_type",
			       p->expected_attach_type ?
				       brt_elf_attach_type_name(p->expected_attach_type) : "");
		json_kv_uint(&j, "insns", p->insn_cnt);
		json_kv_uint(&j, "own_insns", p->main_cnt);
		json_key(&j, "relocations");
		json_begin_array(&j);
		for (size_t r = 0; r < p->nrelocs; r++) {
			const struct brt_elf_reloc *rl = &p->relocs[r];

			json_begin_object(&j);
			json_kv_uint(&j, "insn", rl->insn_idx);
			json_kv_string(&j, "kind", reloc_kinds[rl->kind]);
			json_kv_int(&j, "target", rl->target);
			if (rl->kind == BRT_ELF_RELO_MAP_VALUE)
				json_kv_uint(&j, "offset", rl->off);
			json_kv_string(&j, "symbol", rl->sym ? rl->sym : "");
			json_end_object(&j);
		}
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_key(&j, "maps");
	json_begin_array(&j);
	for (size_t i = 0; i < o->nmaps; i++) {
		const struct brt_elf_map *m = &o->maps[i];

		json_begin_object(&j);
		json_kv_string(&j, "name", m->name);
		json_kv_string(&j, "kind", map_kinds[m->kind]);
		json_kv_string(&j, "type", brt_elf_map_type_name(m->type));
		json_kv_uint(&j, "key_size", m->key_size);
		json_kv_uint(&j, "value_size", m->value_size);
		json_kv_uint(&j, "max_entries", m->max_entries);
		json_kv_uint(&j, "flags", m->map_flags);
		json_kv_uint(&j, "pinning", m->pinning);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

int cmd_object(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },   { "pretty", no_argument, NULL, 'p' },
		{ "disasm", no_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, pretty = 0, dis = 0, c;
	struct bpfrt_object *obj;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jpdh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'p':
			json = pretty = 1;
			break;
		case 'd':
			dis = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 2 != argc || strcmp(argv[optind], "show")) {
		usage(stderr);
		return 2;
	}
	obj = bpfrt_object_open_file(argv[optind + 1], NULL);
	if (!obj)
		return cli_error("cannot open %s: %s", argv[optind + 1], strerror(errno));
	if (json)
		show_json(obj->elf, pretty);
	else
		show_text(obj->elf, dis);
	bpfrt_object_close(obj);
	return 0;
}
