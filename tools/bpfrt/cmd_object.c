/* cmd_object.c - `bpfrt object show OBJ`: what the loader makes of an eBPF ELF object -
 * programs (section, type, instruction count, applied relocations, optionally the linked
 * code with source lines), maps (type, sizes, origin) - as text or JSON (-j, -p);
 * `bpfrt object load OBJ [PINDIR]` loads it (and pins the programs, like bpftool's
 * `prog loadall`); `bpfrt object run OBJ PROG` loads it and test-runs one program. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "cli.h"
#include "object/object.h"
#include "isa/isa.h"
#include "maps/maps.h"
#include "json.h"

static const char *const map_kinds[] = {
	[BRT_ELF_MAP_LEGACY] = "legacy",
	[BRT_ELF_MAP_BTF] = "btf",
	[BRT_ELF_MAP_DATA] = "data",
	[BRT_ELF_MAP_RODATA] = "rodata",
	[BRT_ELF_MAP_BSS] = "bss",
	[BRT_ELF_MAP_STRUCT_OPS] = "struct_ops",
};

static const char *const reloc_kinds[] = {
	[BRT_ELF_RELO_MAP_FD] = "map_fd",
	[BRT_ELF_RELO_MAP_VALUE] = "map_value",
	[BRT_ELF_RELO_CALL] = "call",
	[BRT_ELF_RELO_FUNC] = "func",
	[BRT_ELF_RELO_KSYM] = "ksym",
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: bpfrt object show [-j|--json] [-p|--pretty] [-d|--disasm] OBJ\n"
		     "       bpfrt object load [-k|--kernel] [-l|--log] [-j] OBJ [PINDIR]\n"
		     "       bpfrt object run [-k|--kernel] [-x|--data HEX] [-n|--size BYTES]\n"
		     "                        [-r|--repeat N] [-j] OBJ PROG\n\n"
		     "show: parse and link an eBPF ELF object (clang -target bpf -c) and list its\n"
		     "programs (section, type, instructions, relocations) and maps.\n"
		     "load: create its maps and load its programs; with PINDIR, pin each program\n"
		     "there under its name (inside $BPFRT_FS, or bpffs with --kernel).\n"
		     "run: load, then BPF_PROG_TEST_RUN program PROG once (or N times) over a\n"
		     "packet (default 64 zero bytes with an IPv4 ethertype) and print its r0.\n"
		     "  -j, --json     JSON output\n"
		     "  -p, --pretty   indented JSON (implies -j)\n"
		     "  -d, --disasm   also print each linked program with source lines\n"
		     "  -k, --kernel   load into the running kernel (bpf(2)) instead of bpfrt\n"
		     "  -l, --log      print the verifier log (level 1) even on success\n");
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
		       brt_prog_type_name(p->type));
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
		       i, m->name, map_kinds[m->kind], brt_map_type_name(m->type), m->key_size,
		       m->value_size, m->max_entries, m->map_flags);
		if (m->pinning)
			printf(", pinned by name");
		if (m->inner)
			printf(", inner %s key %u value %u", brt_map_type_name(m->inner->type),
			       m->inner->key_size, m->inner->value_size);
		for (size_t s = 0; s < m->nslots; s++)
			printf("%s[%u] = %s", s ? ", " : ", values ", m->slots[s].index,
			       m->type == BPF_MAP_TYPE_PROG_ARRAY || m->type == BPF_MAP_TYPE_STRUCT_OPS
				       ? o->progs[m->slots[s].target].name
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
		json_kv_string(&j, "type", brt_prog_type_name(p->type));
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
		json_kv_string(&j, "type", brt_map_type_name(m->type));
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

static int load_cmd(const char *path, const char *pindir, int kernel, int log, int json)
{
	struct json j;
	struct cli_load_opts lo = { .kernel = kernel, .log_level = log ? 1 : 0 };
	struct bpfrt_object *obj;
	struct bpfrt_program *p;
	int ret = 0;

	if (cli_object_load(path, &lo, &obj))
		return 1;
	if (log)
		fprintf(json ? stderr : stdout, "%s", bpfrt_object_log(obj));
	json_init(&j, stdout, 0);
	if (json)
		json_begin_array(&j);
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		char pin[4096];
		union bpf_attr attr;

		if (bpfrt_program_fd(p) < 0)
			continue;
		if (json) {
			json_begin_object(&j);
			json_kv_string(&j, "name", bpfrt_program_name(p));
			json_kv_uint(&j, "insns", bpfrt_program_insn_cnt(p));
		} else {
			printf("prog '%s': loaded (%zu insns)", bpfrt_program_name(p),
			       bpfrt_program_insn_cnt(p));
		}
		if (pindir) {
			snprintf(pin, sizeof(pin), "%s/%s", pindir, bpfrt_program_name(p));
			memset(&attr, 0, sizeof(attr));
			attr.pathname = (uint64_t)(uintptr_t)pin;
			attr.bpf_fd = (uint32_t)bpfrt_program_fd(p);
			if (cli_bpf_of(kernel)(BPF_OBJ_PIN, &attr, sizeof(attr)) < 0) {
				ret = cli_error("cannot pin '%s' at %s: %s", bpfrt_program_name(p), pin,
						strerror(errno));
				break;
			}
			if (json)
				json_kv_string(&j, "pinned", pin);
			else
				printf(", pinned at %s", pin);
		}
		if (json)
			json_end_object(&j);
		else
			printf("\n");
	}
	if (json) {
		json_end_array(&j);
		json_finish(&j);
	}
	bpfrt_object_close(obj);
	return ret;
}

struct run_args {
	int kernel;
	int json;
	int repeat;
	uint8_t *data;
	size_t size;
};

static int run_cmd(const char *path, const char *name, const struct run_args *a)
{
	struct cli_load_opts lo = { .kernel = a->kernel, .only = name };
	struct bpfrt_object *obj;
	union bpf_attr attr;
	int ret;

	if (cli_object_load(path, &lo, &obj))
		return 1;
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)bpfrt_program_fd(bpfrt_object_find_program_by_name(obj, name));
	attr.test.data_in = (uint64_t)(uintptr_t)a->data;
	attr.test.data_size_in = (uint32_t)a->size;
	attr.test.repeat = (uint32_t)a->repeat;
	ret = cli_bpf_of(a->kernel)(BPF_PROG_TEST_RUN, &attr, sizeof(attr));
	if (ret < 0) {
		ret = cli_error("BPF_PROG_TEST_RUN of '%s': %s", name, strerror(errno));
	} else if (a->json) {
		printf("{\"program\":\"%s\",\"retval\":%u,\"duration_ns\":%u}\n", name,
		       attr.test.retval, attr.test.duration);
	} else {
		printf("%u\n", attr.test.retval);
	}
	bpfrt_object_close(obj);
	return ret < 0 ? 1 : 0;
}

int cmd_object(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },     { "pretty", no_argument, NULL, 'p' },
		{ "disasm", no_argument, NULL, 'd' },   { "kernel", no_argument, NULL, 'k' },
		{ "log", no_argument, NULL, 'l' },      { "data", required_argument, NULL, 'x' },
		{ "size", required_argument, NULL, 'n' }, { "repeat", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },     { NULL, 0, NULL, 0 },
	};
	struct run_args ra = { .repeat = 1, .size = 64 };
	int json = 0, pretty = 0, dis = 0, log = 0, c, ret;
	const char *hex = NULL, *verb;
	struct bpfrt_object *obj;
	char err[128];

	optind = 1;
	while ((c = getopt_long(argc, argv, "jpdklx:n:r:h", opts, NULL)) != -1) {
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
		case 'k':
			ra.kernel = 1;
			break;
		case 'l':
			log = 1;
			break;
		case 'x':
			hex = optarg;
			break;
		case 'n':
			ra.size = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			ra.repeat = atoi(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	verb = argv[optind++];
	if (!strcmp(verb, "load") && (argc - optind == 1 || argc - optind == 2))
		return load_cmd(argv[optind], argc - optind == 2 ? argv[optind + 1] : NULL,
				ra.kernel, log, json);
	if (!strcmp(verb, "run") && argc - optind == 2) {
		ra.json = json;
		if (hex) {
			if (cli_parse_hex(hex, &ra.data, &ra.size, err, sizeof(err)))
				return cli_error("--data: %s", err);
		} else {
			ra.data = calloc(1, ra.size ? ra.size : 1);
			if (!ra.data)
				return cli_error("out of memory");
			if (ra.size > 13)
				ra.data[12] = 0x08; /* ethertype IPv4 */
		}
		ret = run_cmd(argv[optind], argv[optind + 1], &ra);
		free(ra.data);
		return ret;
	}
	if (strcmp(verb, "show") || argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	obj = bpfrt_object_open_file(argv[optind], NULL);
	if (!obj)
		return cli_error("cannot open %s: %s", argv[optind], strerror(errno));
	/* every program linked (a program that cannot be fails the command, as when the
	 * open linked them all) and relocated (CO-RE), as the open used to leave them */
	for (struct bpfrt_program *p = bpfrt_object_next_program(obj, NULL); p;
	     p = bpfrt_object_next_program(obj, p))
		if ((ret = brt_object_prog_link(obj, p))) {
			bpfrt_object_close(obj);
			return cli_error("cannot open %s: %s", argv[optind], strerror(-ret));
		}
	if (brt_object_core_all(obj)) {
		bpfrt_object_close(obj);
		return cli_error("cannot open %s: %s", argv[optind], strerror(ENOMEM));
	}
	if (json)
		show_json(obj->elf, pretty);
	else
		show_text(obj->elf, dis);
	bpfrt_object_close(obj);
	return 0;
}
