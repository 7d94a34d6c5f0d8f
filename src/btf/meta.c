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

/* The kernel's btf_verifier_log_type() line: "[id] KIND name <details> <message>". */
static int refuse(char *err, size_t errlen, const struct brt_btf *btf, uint32_t id,
		  const char *fmt, ...)
{
	const struct btf_type *t = brt_btf_type(btf, id);
	int n = snprintf(err, errlen, "[%u] %s %s ", id, brt_btf_kind_name(BTF_INFO_KIND(t->info)),
			 brt_btf_name(btf, id));
	va_list ap;

	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* btf_int_check_meta(): one 32-bit word of offset, bits and encoding; at most 128 bits
 * that fit the size; at most one encoding bit.  The kernel's line: the INT's details
 * (btf_int_log()), then msg. */
static int int_refuse(char *err, size_t errlen, const struct brt_btf *btf, uint32_t id,
		      uint32_t data, const char *msg)
{
	uint32_t enc = BTF_INT_ENCODING(data);
	const char *enc_name = !enc ? "(none)" : enc == BTF_INT_SIGNED ? "SIGNED" :
			       enc == BTF_INT_CHAR ? "CHAR" : enc == BTF_INT_BOOL ? "BOOL" : "UNKN";

	return refuse(err, errlen, btf, id, "size=%u bits_offset=%u nr_bits=%u encoding=%s %s",
		      brt_btf_type(btf, id)->size, BTF_INT_OFFSET(data), BTF_INT_BITS(data),
		      enc_name, msg);
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

static int datasec_meta(const struct brt_btf *btf, uint32_t id, char *err, size_t errlen)
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

int brt_btf_meta_rules(const struct brt_btf *btf, char *err, size_t errlen)
{
	int ret = 0;

	for (uint32_t id = 1; id < btf->ntypes && !ret; id++) {
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
			ret = datasec_meta(btf, id, err, errlen);
			break;
		default:
			break;
		}
	}
	return ret;
}
