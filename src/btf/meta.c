/* meta.c - the per-record rules of the kernel's first BTF pass (btf_check_all_metas())
 * that the reader (btf.c) leaves alone because loaders rewrite those records before
 * BPF_BTF_LOAD: FUNC linkage, VAR linkage, DATASEC sizes and offsets, INT encodings.  clang emits
 * extern functions and variables (__ksym, __kconfig) with EXTERN linkage and every
 * DATASEC with size 0; the kernel refuses both, so libbpf (and bpfrt's object loader,
 * elf/open.c) rewrites them first.  BPF_BTF_LOAD in bpfrt must refuse them as the kernel
 * does, or a loader bug that only the kernel would catch goes unseen.  GCC 12 (bpf-gcc)
 * describes a plain `char` as an INT both CHAR and SIGNED, which the kernel refuses with
 * ENOTSUPP and libbpf (and bpfrt's loader) answer by loading without BTF.  Each refusal is
 * the kernel's errno with its last log line: "[id] KIND name details message".
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "util/util.h"

#define KSYM_NAME_LEN 512 /* the kernel's bound on a BTF identifier's length */
#define TYPE_ID_MAX 0xfffffu /* BTF_MAX_TYPE: BTF_TYPE_ID_VALID() */

/* btf_name_valid_identifier(): a letter, '_' or '.' first, then letters, digits, '_' or
 * '.', shorter than KSYM_NAME_LEN. */
static int valid_identifier(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)*s) && *s != '_' && *s != '.')
		return 0;
	for (; s[n] && n < KSYM_NAME_LEN; n++)
		if (!isalnum((unsigned char)s[n]) && s[n] != '_' && s[n] != '.')
			return 0;
	return !s[n];
}

/* btf_name_valid_section(): printable characters, not empty, shorter than KSYM_NAME_LEN */
static int valid_section(const char *s)
{
	size_t n = 0;

	for (; s[n] && n < KSYM_NAME_LEN; n++)
		if (!isprint((unsigned char)s[n]))
			return 0;
	return n && !s[n];
}

static int refuse(char *err, size_t errlen, const struct brt_btf *btf, uint32_t id,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* __btf_name_by_offset(): the name a log line shows */
static const char *log_name(const struct brt_btf *btf, uint32_t off)
{
	const char *s;

	if (!off)
		return "(anon)";
	s = brt_btf_str(btf, off);
	return s ? s : "(invalid-name-offset)";
}

/* The kernel's btf_verifier_log_type() line: "[id] KIND name <details> <message>". */
static int refuse(char *err, size_t errlen, const struct brt_btf *btf, uint32_t id,
		  const char *fmt, ...)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	int n = snprintf(err, errlen, "[%u] %s %s ", id, brt_btf_kind_name(BTF_INFO_KIND(t->info)),
			 log_name(btf, t->name_off));
	va_list ap;

	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* btf_int_encoding_str() */
static const char *enc_name(uint32_t enc)
{
	return !enc ? "(none)" : enc == BTF_INT_SIGNED ? "SIGNED" : enc == BTF_INT_CHAR ? "CHAR" :
	       enc == BTF_INT_BOOL ? "BOOL" : "UNKN";
}

/* btf_int_check_meta(): one 32-bit word of offset, bits and encoding; at most 128 bits
 * that fit the size; at most one encoding bit.  The kernel's line: the INT's details
 * (btf_int_log()), then msg. */
static int int_refuse(char *err, size_t errlen, const struct brt_btf *btf, uint32_t id,
		      uint32_t data, const char *msg)
{
	return refuse(err, errlen, btf, id, "size=%u bits_offset=%u nr_bits=%u encoding=%s %s",
		      brt_btf_type(btf, id)->size, BTF_INT_OFFSET(data), BTF_INT_BITS(data),
		      enc_name(BTF_INT_ENCODING(data)), msg);
}

static int int_meta(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	uint32_t data, nr_bits, enc;

	memcpy(&data, t + 1, sizeof(data));
	enc = BTF_INT_ENCODING(data);
	if (BTF_INFO_VLEN(t->info))
		return int_refuse(err, errlen, btf, id, data, "vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		return int_refuse(err, errlen, btf, id, data, "Invalid btf_info kind_flag");
	if (data & ~0x0fffffffu) /* BTF_INT_MASK; the kernel's line has no details here */
		return refuse(err, errlen, btf, id, "Invalid int_data:%x", data);
	nr_bits = BTF_INT_BITS(data) + BTF_INT_OFFSET(data);
	if (nr_bits > 128)
		return int_refuse(err, errlen, btf, id, data, "nr_bits exceeds 128");
	if ((nr_bits + 7) / 8 > t->size)
		return int_refuse(err, errlen, btf, id, data, "nr_bits exceeds type_size");
	if (enc && enc != BTF_INT_SIGNED && enc != BTF_INT_CHAR && enc != BTF_INT_BOOL) {
		int_refuse(err, errlen, btf, id, data, "Unsupported encoding");
		return -BRT_ENOTSUPP;
	}
	return 0;
}

static int func_meta(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	const char *name = brt_btf_str(btf, t->name_off);

	if (!t->name_off || !name || !valid_identifier(name))
		return refuse(err, errlen, btf, id, "type_id=%u Invalid name", t->type);
	/* 0 static, 1 global; BTF_FUNC_EXTERN (2) is refused: libbpf points an extern's
	 * DATASEC slot at a dummy variable and makes the FUNC global first */
	if (BTF_INFO_VLEN(t->info) > BTF_FUNC_GLOBAL)
		return refuse(err, errlen, btf, id, "type_id=%u Invalid func linkage", t->type);
	if (BTF_INFO_KFLAG(t->info))
		return refuse(err, errlen, btf, id, "type_id=%u Invalid btf_info kind_flag",
			      t->type);
	return 0;
}

static int var_meta(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	const struct btf_var *v = (const struct btf_var *)(t + 1);
	const char *name = brt_btf_str(btf, t->name_off);

#define VAR_REFUSE(msg) refuse(err, errlen, btf, id, "type_id=%u linkage=%u " msg, t->type, \
			       v->linkage)
	if (BTF_INFO_VLEN(t->info))
		return VAR_REFUSE("vlen != 0");
	if (BTF_INFO_KFLAG(t->info))
		return VAR_REFUSE("Invalid btf_info kind_flag");
	if (!t->name_off || !name || !valid_identifier(name))
		return VAR_REFUSE("Invalid name");
	if (!t->type || t->type > TYPE_ID_MAX)
		return VAR_REFUSE("Invalid type_id");
	if (v->linkage != BTF_VAR_STATIC && v->linkage != BTF_VAR_GLOBAL_ALLOCATED)
		return VAR_REFUSE("Linkage not supported");
#undef VAR_REFUSE
	return 0;
}

static int datasec_meta(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen,
			uint32_t *bad)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	const struct btf_var_secinfo *vs = (const struct btf_var_secinfo *)(const void *)(t + 1);
	const char *name = brt_btf_str(btf, t->name_off);
	uint64_t end = 0, sum = 0;
	const char *why = NULL;

	if (!t->size)
		return refuse(err, errlen, btf, id, "size=%u vlen=%u size == 0", t->size,
			      BTF_INFO_VLEN(t->info));
	if (BTF_INFO_KFLAG(t->info))
		return refuse(err, errlen, btf, id, "size=%u vlen=%u Invalid btf_info kind_flag",
			      t->size, BTF_INFO_VLEN(t->info));
	if (!t->name_off || !name || !valid_section(name))
		return refuse(err, errlen, btf, id, "size=%u vlen=%u Invalid name", t->size,
			      BTF_INFO_VLEN(t->info));
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++, vs++) {
		if (!vs->type || vs->type > TYPE_ID_MAX)
			why = "Invalid type_id";
		else if (vs->offset < end || vs->offset >= t->size)
			why = "Invalid offset";
		else if (!vs->size || vs->size > t->size)
			why = "Invalid size";
		else if ((end = (uint64_t)vs->offset + vs->size) > t->size)
			why = "Invalid offset+size";
		if (why) {
			/* in this pass the kernel's line for a member is the member alone */
			*bad = i;
			snprintf(err, errlen, "\t type_id=%u offset=%u size=%u %s", vs->type,
				 vs->offset, vs->size, why);
			return -EINVAL;
		}
		sum += vs->size;
	}
	if (t->size < sum)
		return refuse(err, errlen, btf, id, "size=%u vlen=%u Invalid btf_info size",
			      t->size, BTF_INFO_VLEN(t->info));
	return 0;
}

/* btf_verifier_log_type()'s "[id] KIND name details" (each kind's log_details()) */
static void log_details(FILE *log, const struct brt_btf *btf, uint32_t id)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	uint32_t kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info), data;
	const struct btf_param *pa = (const struct btf_param *)(const void *)(t + 1);
	const struct btf_array *arr = (const struct btf_array *)(const void *)(t + 1);

	fprintf(log, "[%u] %s %s ", id, brt_btf_kind_name(kind), log_name(btf, t->name_off));
	switch (kind) {
	case BTF_KIND_INT:
		memcpy(&data, t + 1, sizeof(data));
		fprintf(log, "size=%u bits_offset=%u nr_bits=%u encoding=%s", t->size,
			BTF_INT_OFFSET(data), BTF_INT_BITS(data), enc_name(BTF_INT_ENCODING(data)));
		break;
	case BTF_KIND_FWD:
		fputs(BTF_INFO_KFLAG(t->info) ? "union" : "struct", log);
		break;
	case BTF_KIND_ARRAY:
		fprintf(log, "type_id=%u index_type_id=%u nr_elems=%u", arr->type, arr->index_type,
			arr->nelems);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_DATASEC:
		fprintf(log, "size=%u vlen=%u", t->size, vlen);
		break;
	case BTF_KIND_FUNC_PROTO: /* btf_func_proto_log() */
		fprintf(log, "return=%u args=(", t->type);
		if (!vlen)
			fputs("void", log);
		else if (vlen == 1 && !pa[0].type)
			fputs("vararg", log);
		for (uint32_t i = 0; vlen && !(vlen == 1 && !pa[0].type) && i < vlen; i++) {
			if (i == vlen - 1 && i && !pa[i].type)
				fputs(", vararg", log);
			else
				fprintf(log, "%s%u %s", i ? ", " : "", pa[i].type,
					log_name(btf, pa[i].name_off));
		}
		fputc(')', log);
		break;
	case BTF_KIND_VAR:
		memcpy(&data, t + 1, sizeof(data));
		fprintf(log, "type_id=%u linkage=%u", t->type, data);
		break;
	case BTF_KIND_FLOAT:
		fprintf(log, "size=%u", t->size);
		break;
	case BTF_KIND_DECL_TAG:
		memcpy(&data, t + 1, sizeof(data));
		fprintf(log, "type=%u component_idx=%d", t->type, (int)data);
		break;
	default: /* the reference kinds and FUNC: btf_ref_type_log() */
		fprintf(log, "type_id=%u", t->type);
		break;
	}
}

/* The line the kernel's first pass logs for type id (btf_verifier_log_type(env, t, NULL)),
 * and its members' lines up to member `upto`. */
static void log_type(FILE *log, const struct brt_btf *btf, uint32_t id, uint32_t upto)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	uint32_t kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
	const struct btf_member *m = (const struct btf_member *)(const void *)(t + 1);
	const struct btf_enum *e = (const struct btf_enum *)(const void *)(t + 1);
	const struct btf_enum64 *e64 = (const struct btf_enum64 *)(const void *)(t + 1);
	const struct btf_var_secinfo *vs = (const struct btf_var_secinfo *)(const void *)(t + 1);

	log_details(log, btf, id);
	fputc('\n', log);
	for (uint32_t i = 0; i < vlen && i < upto; i++) {
		switch (kind) {
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			if (BTF_INFO_KFLAG(t->info))
				fprintf(log, "\t%s type_id=%u bitfield_size=%u bits_offset=%u\n",
					log_name(btf, m[i].name_off), m[i].type,
					BTF_MEMBER_BITFIELD_SIZE(m[i].offset),
					BTF_MEMBER_BIT_OFFSET(m[i].offset));
			else
				fprintf(log, "\t%s type_id=%u bits_offset=%u\n",
					log_name(btf, m[i].name_off), m[i].type, m[i].offset);
			break;
		case BTF_KIND_ENUM:
			fprintf(log, BTF_INFO_KFLAG(t->info) ? "\t%s val=%d\n" : "\t%s val=%u\n",
				log_name(btf, e[i].name_off), e[i].val);
			break;
		case BTF_KIND_ENUM64: {
			uint64_t v = (uint64_t)e64[i].val_hi32 << 32 | e64[i].val_lo32;

			if (BTF_INFO_KFLAG(t->info))
				fprintf(log, "\t%s val=%lld\n", log_name(btf, e64[i].name_off),
					(long long)v);
			else
				fprintf(log, "\t%s val=%llu\n", log_name(btf, e64[i].name_off),
					(unsigned long long)v);
			break;
		}
		case BTF_KIND_DATASEC:
			fprintf(log, "\t type_id=%u offset=%u size=%u\n", vs[i].type, vs[i].offset,
				vs[i].size);
			break;
		default:
			break;
		}
	}
}

int brt_btf_meta_rules(const struct brt_btf *btf, char *err, size_t errlen, FILE *log)
{
	int ret = 0;

	for (uint32_t id = 1; id < btf->ntypes && !ret; id++) {
		uint32_t bad = UINT32_MAX;

		switch (BTF_INFO_KIND(brt_btf_type(btf, id)->info)) {
		case BTF_KIND_INT:
			ret = int_meta(btf, id, err, errlen);
			break;
		case BTF_KIND_FUNC:
			ret = func_meta(btf, id, err, errlen);
			break;
		case BTF_KIND_VAR:
			ret = var_meta(btf, id, err, errlen);
			break;
		case BTF_KIND_DATASEC:
			ret = datasec_meta(btf, id, err, errlen, &bad);
			break;
		default:
			break;
		}
		if (!log)
			continue;
		/* a refused type's line is err, but a DATASEC member's: its type and the
		 * members before it come first */
		if (!ret || bad != UINT32_MAX)
			log_type(log, btf, id, ret ? bad : UINT32_MAX);
		if (ret)
			fprintf(log, "%s\n", err);
	}
	return ret;
}

/* ---- the second pass's resolution depth (btf_check_all_types(), btf_resolve()) ---- */

#define RESOLVE_DEPTH 32 /* MAX_RESOLVE_DEPTH */

enum { MODE_TBD, MODE_PTR, MODE_STRUCT_OR_ARRAY };

static int is_modifier(uint32_t k)
{
	return k == BTF_KIND_TYPEDEF || k == BTF_KIND_VOLATILE || k == BTF_KIND_CONST ||
	       k == BTF_KIND_RESTRICT || k == BTF_KIND_TYPE_TAG;
}

static int is_struct_kind(uint32_t k)
{
	return k == BTF_KIND_STRUCT || k == BTF_KIND_UNION;
}

/* btf_type_needs_resolve() */
static int needs_resolve(uint32_t k)
{
	return is_modifier(k) || k == BTF_KIND_PTR || is_struct_kind(k) || k == BTF_KIND_ARRAY ||
	       k == BTF_KIND_VAR || k == BTF_KIND_FUNC || k == BTF_KIND_DECL_TAG ||
	       k == BTF_KIND_DATASEC;
}

/* env_type_is_resolve_sink(): types the resolution of the mode does not descend into */
static int is_sink(int mode, uint32_t k)
{
	if (mode == MODE_TBD)
		return !needs_resolve(k);
	if (mode == MODE_PTR)
		return !is_modifier(k) && k != BTF_KIND_PTR;
	return !is_modifier(k) && k != BTF_KIND_ARRAY && !is_struct_kind(k);
}

/* The next id type id's resolution descends into, in the kernel's order, from its
 * next_member (advanced); *next becomes UINT32_MAX when none is left (a FUNC is checked
 * without descending) */
static uint32_t resolve_dep(const struct brt_btf *btf, uint32_t id, uint32_t *next)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	uint32_t k = BTF_INFO_KIND(t->info), n = (*next)++;

	if ((is_modifier(k) || k == BTF_KIND_PTR || k == BTF_KIND_VAR ||
	     k == BTF_KIND_DECL_TAG) && n == 0)
		return t->type;
	if (k == BTF_KIND_ARRAY && n < 2) {
		const struct btf_array *a = (const struct btf_array *)(const void *)(t + 1);

		return n == 0 ? a->index_type : a->type;
	}
	if (is_struct_kind(k) && n < BTF_INFO_VLEN(t->info))
		return ((const struct btf_member *)(const void *)(t + 1))[n].type;
	if (k == BTF_KIND_DATASEC && n < BTF_INFO_VLEN(t->info))
		return ((const struct btf_var_secinfo *)(const void *)(t + 1))[n].type;
	*next = UINT32_MAX;
	return 0;
}

int brt_btf_resolve_rules(const struct brt_btf *btf, char *err, size_t errlen)
{
	/* 0 not visited, 1 on the stack, 2 resolved */
	uint8_t *state = calloc(btf->ntypes ? btf->ntypes : 1, 1);
	struct { uint32_t id, next; } stack[RESOLVE_DEPTH];
	int ret = 0;

	if (!state)
		return -ENOMEM;
	for (uint32_t id = 1; id < btf->ntypes && !ret; id++) {
		uint32_t kind = BTF_INFO_KIND(brt_btf_type(btf, id)->info), top = 0;
		int mode = kind == BTF_KIND_PTR ? MODE_PTR :
			   is_struct_kind(kind) || kind == BTF_KIND_ARRAY ? MODE_STRUCT_OR_ARRAY :
			   MODE_TBD;

		if (!needs_resolve(kind) || state[id] == 2)
			continue;
		state[id] = 1;
		stack[top].id = id;
		stack[top++].next = 0;
		while (top && !ret) {
			uint32_t *next = &stack[top - 1].next;
			uint32_t dep = resolve_dep(btf, stack[top - 1].id, next), dk;

			if (*next == UINT32_MAX) {
				state[stack[--top].id] = 2; /* env_stack_pop_resolved() */
				continue;
			}
			if (!dep || dep >= btf->ntypes || state[dep] == 2)
				continue;
			dk = BTF_INFO_KIND(brt_btf_type(btf, dep)->info);
			if (is_sink(mode, dk))
				continue;
			/* env_stack_push() */
			if (top == RESOLVE_DEPTH)
				ret = -E2BIG;
			else if (state[dep])
				ret = -EEXIST;
			else {
				state[dep] = 1;
				stack[top].id = dep;
				stack[top++].next = 0;
				/* the first pointer, struct or array pushed sets the mode */
				if (mode == MODE_TBD)
					mode = dk == BTF_KIND_PTR ? MODE_PTR :
					       is_struct_kind(dk) || dk == BTF_KIND_ARRAY ?
					       MODE_STRUCT_OR_ARRAY : MODE_TBD;
			}
		}
		if (ret) {
			/* btf_resolve(): the line of the type whose resolution failed */
			char *text = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&text, &len);

			if (f) {
				log_details(f, btf, id);
				if (ret == -E2BIG)
					fprintf(f, " Exceeded max resolving depth:%u", RESOLVE_DEPTH);
				else
					fputs(" Loop detected", f);
				fclose(f);
				snprintf(err, errlen, "%s", text ? text : "");
				free(text);
			}
		}
	}
	free(state);
	return ret;
}
