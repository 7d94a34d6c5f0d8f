/* cmd_btf.c - `bpfrt btf dump OBJ`: the types of an object's .BTF section, one per line in
 * bpftool's `btf dump file` format (so the two can be diffed), or as JSON (-j, -p). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bpfrt.h"
#include "cli.h"
#include "object/object.h"
#include "json.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: bpfrt btf dump [-j|--json] [-p|--pretty] OBJ\n\n"
		     "Print the BTF types of an eBPF ELF object, in the format of\n"
		     "`bpftool btf dump file OBJ`.\n");
}

static const char *name_or_anon(const struct brt_btf *btf, uint32_t off)
{
	const char *s = brt_btf_str(btf, off);

	return s && s[0] ? s : "(anon)";
}

static const char *int_encoding(uint32_t enc)
{
	switch (BTF_INT_ENCODING(enc)) {
	case BTF_INT_SIGNED:
		return "SIGNED";
	case BTF_INT_CHAR:
		return "CHAR";
	case BTF_INT_BOOL:
		return "BOOL";
	default:
		return "(none)";
	}
}

static const char *linkage(uint32_t l)
{
	return l == 0 ? "static" : l == 1 ? "global" : l == 2 ? "extern" : "(unknown)";
}

/* The members, parameters, values or variables that follow a type, indented. */
static void dump_extra(const struct brt_btf *btf, const struct btf_type *t)
{
	unsigned int kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
	const void *x = t + 1;

	for (uint32_t i = 0; i < vlen; i++) {
		if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION) {
			struct btf_member m;

			memcpy(&m, (const char *)x + i * sizeof(m), sizeof(m));
			printf("\t'%s' type_id=%u bits_offset=%u", name_or_anon(btf, m.name_off),
			       m.type, BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m.offset)
							       : m.offset);
			if (BTF_INFO_KFLAG(t->info) && BTF_MEMBER_BITFIELD_SIZE(m.offset))
				printf(" bitfield_size=%u", BTF_MEMBER_BITFIELD_SIZE(m.offset));
			printf("\n");
		} else if (kind == BTF_KIND_FUNC_PROTO) {
			struct btf_param p;

			memcpy(&p, (const char *)x + i * sizeof(p), sizeof(p));
			printf("\t'%s' type_id=%u\n", name_or_anon(btf, p.name_off), p.type);
		} else if (kind == BTF_KIND_ENUM) {
			struct btf_enum e;

			memcpy(&e, (const char *)x + i * sizeof(e), sizeof(e));
			if (BTF_INFO_KFLAG(t->info))
				printf("\t'%s' val=%d\n", name_or_anon(btf, e.name_off), e.val);
			else
				printf("\t'%s' val=%u\n", name_or_anon(btf, e.name_off),
				       (uint32_t)e.val);
		} else if (kind == BTF_KIND_ENUM64) {
			struct btf_enum64 e;
			uint64_t v;

			memcpy(&e, (const char *)x + i * sizeof(e), sizeof(e));
			v = ((uint64_t)e.val_hi32 << 32) | e.val_lo32;
			if (BTF_INFO_KFLAG(t->info))
				printf("\t'%s' val=%" PRId64 "\n", name_or_anon(btf, e.name_off),
				       (int64_t)v);
			else
				printf("\t'%s' val=%" PRIu64 "\n", name_or_anon(btf, e.name_off), v);
		} else if (kind == BTF_KIND_DATASEC) {
			struct btf_var_secinfo v;
			const struct btf_type *vt;

			memcpy(&v, (const char *)x + i * sizeof(v), sizeof(v));
			vt = brt_btf_type(btf, v.type);
			/* the member's own kind: a __ksym function sits in .ksyms as a FUNC */
			printf("\ttype_id=%u offset=%u size=%u (%s '%s')\n", v.type, v.offset,
			       v.size, brt_btf_kind_name(vt ? BTF_INFO_KIND(vt->info) : 0),
			       name_or_anon(btf, vt ? vt->name_off : 0));
		}
	}
}

static void dump_type(const struct brt_btf *btf, uint32_t id)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	unsigned int kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
	const char *name = name_or_anon(btf, t->name_off);
	uint32_t u;
	struct btf_array a;

	printf("[%u] %s '%s'", id, brt_btf_kind_name(kind), name);
	switch (kind) {
	case BTF_KIND_INT:
		memcpy(&u, t + 1, 4);
		printf(" size=%u bits_offset=%u nr_bits=%u encoding=%s", t->size,
		       BTF_INT_OFFSET(u), BTF_INT_BITS(u), int_encoding(u));
		break;
	case BTF_KIND_PTR:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_TYPE_TAG:
		printf(" type_id=%u", t->type);
		break;
	case BTF_KIND_ARRAY:
		memcpy(&a, t + 1, sizeof(a));
		printf(" type_id=%u index_type_id=%u nr_elems=%u", a.type, a.index_type, a.nelems);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		printf(" size=%u vlen=%u", t->size, vlen);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		printf(" encoding=%s size=%u vlen=%u", BTF_INFO_KFLAG(t->info) ? "SIGNED" : "UNSIGNED",
		       t->size, vlen);
		break;
	case BTF_KIND_FWD:
		printf(" fwd_kind=%s", BTF_INFO_KFLAG(t->info) ? "union" : "struct");
		break;
	case BTF_KIND_FUNC:
		printf(" type_id=%u linkage=%s", t->type, linkage(vlen));
		break;
	case BTF_KIND_FUNC_PROTO:
		printf(" ret_type_id=%u vlen=%u", t->type, vlen);
		break;
	case BTF_KIND_VAR:
		memcpy(&u, t + 1, 4);
		printf(" type_id=%u, linkage=%s", t->type, linkage(u));
		break;
	case BTF_KIND_DATASEC:
		printf(" size=%u vlen=%u", t->size, vlen);
		break;
	case BTF_KIND_FLOAT:
		printf(" size=%u", t->size);
		break;
	case BTF_KIND_DECL_TAG:
		memcpy(&u, t + 1, 4);
		printf(" type_id=%u component_idx=%d", t->type, (int32_t)u);
		break;
	default:
		break;
	}
	printf("\n");
	dump_extra(btf, t);
}

static void dump_json(const struct brt_btf *btf, int pretty)
{
	struct json j;

	json_init(&j, stdout, pretty);
	json_begin_object(&j);
	json_key(&j, "types");
	json_begin_array(&j);
	for (uint32_t id = 1; id < btf->ntypes; id++) {
		const struct btf_type *t = brt_btf_type(btf, id);
		unsigned int kind = BTF_INFO_KIND(t->info);

		json_begin_object(&j);
		json_kv_uint(&j, "id", id);
		json_kv_string(&j, "kind", brt_btf_kind_name(kind));
		json_kv_string(&j, "name", name_or_anon(btf, t->name_off));
		switch (kind) {
		case BTF_KIND_INT:
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
		case BTF_KIND_DATASEC:
		case BTF_KIND_FLOAT:
			json_kv_uint(&j, "size", t->size);
			break;
		case BTF_KIND_FUNC_PROTO:
			json_kv_uint(&j, "ret_type_id", t->type);
			break;
		case BTF_KIND_ARRAY: {
			struct btf_array a;

			memcpy(&a, t + 1, sizeof(a));
			json_kv_uint(&j, "type_id", a.type);
			json_kv_uint(&j, "index_type_id", a.index_type);
			json_kv_uint(&j, "nr_elems", a.nelems);
			break;
		}
		default:
			json_kv_uint(&j, "type_id", t->type);
			break;
		}
		json_kv_uint(&j, "vlen", BTF_INFO_VLEN(t->info));
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

int cmd_btf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, pretty = 0, c;
	struct bpfrt_object *obj;
	const struct brt_btf *btf;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jph", opts, NULL)) != -1) {
		if (c == 'j') {
			json = 1;
		} else if (c == 'p') {
			json = pretty = 1;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind + 2 != argc || strcmp(argv[optind], "dump")) {
		usage(stderr);
		return 2;
	}
	obj = bpfrt_object_open_file(argv[optind + 1], NULL);
	if (!obj)
		return cli_error("cannot open %s: %s", argv[optind + 1], strerror(errno));
	btf = obj->elf->btf;
	if (!btf) {
		bpfrt_object_close(obj);
		return cli_error("%s: no .BTF section (compile with -g)", argv[optind + 1]);
	}
	if (json)
		dump_json(btf, pretty);
	else
		for (uint32_t id = 1; id < btf->ntypes; id++)
			dump_type(btf, id);
	bpfrt_object_close(obj);
	return 0;
}
