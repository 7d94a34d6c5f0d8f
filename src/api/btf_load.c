/* btf_load.c - BPF_BTF_LOAD, and the func_info/line_info of BPF_PROG_LOAD checked against
 * that BTF.  A BTF fd is an object file holding the raw blob (so BPF_OBJ_GET_INFO_BY_FD
 * can hand it back), parsed once by the BTF reader of src/elf, which rejects what the
 * kernel's btf_parse() rejects for the cases that matter to loaders (header, section
 * bounds, string offsets, type references, loops).  A program's line info is checked in
 * the kernel's order and with its messages (check_btf_func_early(), check_btf_line()),
 * then kept resolved to text so the verifier log and `prog dump` can show source lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/btf.h>

#include "api/api.h"
#include "btf/btf.h"
#include "maps/maps.h"
#include "verifier/verifier.h"

#define BTF_MAX_SIZE (16u << 20)   /* the kernel's BTF_MAX_SIZE */
#define MIN_FUNCINFO_SIZE 8u       /* offsetofend(struct bpf_func_info, type_id) */
#define MIN_LINEINFO_SIZE 16u      /* offsetofend(struct bpf_line_info, line_col) */
#define MAX_INFO_REC_SIZE 252u     /* MAX_FUNCINFO_REC_SIZE, MAX_LINEINFO_REC_SIZE */

/* BPF_BTF_LOAD's attributes as Linux 6.18 lays them out (the libc header may be older). */
struct btf_load_attr {
	uint64_t btf;
	uint64_t btf_log_buf;
	uint32_t btf_size;
	uint32_t btf_log_size;
	uint32_t btf_log_level;
	uint32_t btf_log_true_size; /* out: bytes the whole log needs */
	uint32_t btf_flags;         /* BPF_F_TOKEN_FD */
	int32_t btf_token_fd;
};

/* A BTF object keeps the blob it checked in private memory: the file's copy is shared
 * with any process that can write the file, so neither its bytes nor the header's
 * data_size are read back (BTF_GET_INFO, a map's copy of its BTF). */
struct brt_btf_obj {
	struct brt_obj obj; /* first: a BTF is an object */
	struct brt_btf *btf;
	struct brt_btf_snap *snap; /* the checked blob, private; maps made with it share it */
	void *blob;         /* snap->blob */
	uint32_t size;      /* its bytes */
};

static void btf_release(struct brt_obj *obj)
{
	struct brt_btf_obj *b = (struct brt_btf_obj *)(void *)obj;

	brt_btf_free(b->btf);
	brt_btf_snap_put(b->snap);
}

static void snap_parsed_free(void *parsed)
{
	brt_btf_free(parsed);
}

static struct brt_btf_snap *snap_new(const void *blob, uint32_t size)
{
	struct brt_btf_snap *s = malloc(sizeof(*s) + (size ? size : 1));

	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	atomic_init(&s->parsed, NULL);
	s->parsed_free = snap_parsed_free;
	s->size = size;
	memcpy(s->blob, blob, size);
	return s;
}

struct btf_new {
	const void *blob;
	uint32_t size;
	struct brt_btf *btf;
};

static int btf_init(struct brt_obj *obj, void *arg)
{
	struct btf_new *n = arg;

	struct brt_btf_obj *b = (struct brt_btf_obj *)(void *)obj;

	b->snap = snap_new(n->blob, n->size);
	if (!b->snap)
		return -ENOMEM;
	b->blob = b->snap->blob;
	memcpy(obj->base, n->blob, n->size);
	b->size = n->size;
	b->btf = n->btf;
	n->btf = NULL;
	obj->release = btf_release;
	return 0;
}

/* The log into the caller's buffer (when one was given) as the kernel's verifier log keeps
 * it: the end of a log that does not fit (rotating), or its beginning with BPF_LOG_FIXED (8);
 * btf_log_true_size written back; -ENOSPC when it did not fit. */
static int put_log(struct brt_call *call, const struct btf_load_attr *a, const char *msg)
{
	uint32_t len = (uint32_t)strlen(msg) + 1, n = len;
	const char *from = msg;

	if (!a->btf_log_level)
		return 0;
	if (call->ua->to(call->uattr + offsetof(struct btf_load_attr, btf_log_true_size), &len,
			 sizeof(len)))
		return -EFAULT;
	if (!a->btf_log_buf)
		return 0;
	if (n > a->btf_log_size) {
		n = a->btf_log_size;
		if (!(a->btf_log_level & 8))
			from = msg + (len - n);
	}
	if (call->ua->to(a->btf_log_buf, from, n - 1) || call->ua->to(a->btf_log_buf + n - 1, "", 1))
		return -EFAULT;
	return n < len ? -ENOSPC : 0;
}

/* btf_verifier_log_hdr(): the header as read, then the first pass's lines */
static void log_header(FILE *log, const void *blob, uint32_t size)
{
	struct btf_header h;

	memcpy(&h, blob, sizeof(h));
	fprintf(log, "magic: 0x%x\nversion: %u\nflags: 0x%x\nhdr_len: %u\ntype_off: %u\n"
		"type_len: %u\nstr_off: %u\nstr_len: %u\nbtf_total_size: %u\n", h.magic, h.version,
		h.flags, h.hdr_len, h.type_off, h.type_len, h.str_off, h.str_len, size);
}

/* btf_parse_hdr(): a version or flags it does not know is ENOTSUPP, not EINVAL. */
static int header_rules(const void *blob, uint32_t size, char *err, size_t errlen)
{
	struct btf_header h;

	if (size < sizeof(h))
		return 0; /* the reader explains */
	memcpy(&h, blob, sizeof(h));
	if (h.magic != BTF_MAGIC)
		return 0;
	if (h.version != BTF_VERSION || h.flags) {
		snprintf(err, errlen, "offset 0x%x: unsupported %s %u",
			 h.version != BTF_VERSION ? 2 : 3, h.version != BTF_VERSION ?
			 "version" : "flags", h.version != BTF_VERSION ? h.version : h.flags);
		return -BRT_ENOTSUPP;
	}
	return 0;
}

/* The local storage maps (may hold a bpf_spin_lock) */
static int local_storage(uint32_t type)
{
	return type == BPF_MAP_TYPE_SK_STORAGE || type == BPF_MAP_TYPE_INODE_STORAGE ||
	       type == BPF_MAP_TYPE_TASK_STORAGE || type == BRT_MAP_TYPE_CGRP_STORAGE;
}

/* What btf_parse() refuses beyond the reader's structural checks (the reader also reads
 * objects that libbpf fixes up before loading them, so these belong here). */
static int find_spin_lock(const struct brt_btf *btf, uint32_t id, uint32_t base, int nested,
			  uint32_t *seen);
static int find_field(const struct brt_btf *btf, uint32_t id, uint32_t base, int nested,
		      uint32_t *seen, const char *fname, uint32_t fsize, uint32_t falign);

static int later_rules(const struct brt_btf *btf, char *err, size_t errlen);

/* The kernel's first pass (meta.c, its lines into log when not NULL), then the rest; a
 * refusal of the rest is the log's last line. */
static int kernel_rules(const struct brt_btf *btf, char *err, size_t errlen, FILE *log)
{
	int ret = brt_btf_meta_rules(btf, err, errlen, log);

	if (ret)
		return ret;
	ret = brt_btf_resolve_rules(btf, err, errlen);
	if (!ret)
		ret = later_rules(btf, err, errlen);
	if (ret && log && err[0])
		fprintf(log, "%s\n", err);
	return ret;
}

static int later_rules(const struct brt_btf *btf, char *err, size_t errlen)
{
	uint32_t seen = 0;
	int lock, ret;

	for (uint32_t id = 1; id < btf->ntypes; id++) {
		const struct btf_type *t = brt_btf_type(btf, id);
		unsigned int kind = BTF_INFO_KIND(t->info);
		const struct btf_type *to = brt_btf_type(btf, t->type);

		if (kind == BTF_KIND_FUNC && (!to || BTF_INFO_KIND(to->info) != BTF_KIND_FUNC_PROTO)) {
			snprintf(err, errlen, "[%u] FUNC %s type_id=%u Invalid type_id", id,
				 brt_btf_name(btf, id), t->type);
			return -EINVAL;
		}
		/* each struct's own special fields (btf_parse_struct_metas()): at most one
		 * bpf_spin_lock, aligned; the kernel's log says nothing more */
		lock = find_spin_lock(btf, id, 0, 0, &seen);
		if (lock == -E2BIG || lock == -EFAULT) {
			err[0] = 0;
			return lock;
		}
		/* such a struct's fields are parsed whole (nested too), and a
		 * bpf_res_spin_lock beside the bpf_spin_lock is refused (EINVAL), two of
		 * them at one level too (E2BIG; measured on 6.18.44) */
		if (lock >= 0) {
			uint32_t rseen = 0;
			int res = find_field(btf, id, 0, 1, &rseen, "bpf_res_spin_lock", 4, 4);

			if (res >= 0 || res == -E2BIG || res == -ENOTUNIQ) {
				err[0] = 0;
				return res == -E2BIG ? res : -EINVAL;
			}
		}
	}
	/* and their lists', trees' and kptrs' fields: a root's "contains:" must name a
	 * struct of this BTF and a node of the root's kind in it */
	ret = brt_verifier_btf_struct_metas(btf);
	if (ret)
		err[0] = 0;
	return ret;
}

int brt_cmd_btf_load(struct brt_call *call)
{
	struct btf_load_attr *attr = (struct btf_load_attr *)(void *)call->attr;
	struct btf_new n = { .size = attr->btf_size };
	struct brt_obj_hdr hdr = { 0 };
	struct brt_obj *obj;
	char err[256], msg[300], *text = NULL;
	size_t text_len = 0;
	FILE *log = NULL;
	void *blob;
	int ret;

	/* no BPF tokens here: BPF_F_TOKEN_FD (1 << 16) is refused as an unknown flag */
	if (attr->btf_flags || attr->btf_token_fd)
		return -EINVAL;
	/* bpf_verifier_log_attr_valid() */
	if (!!attr->btf_log_buf != !!attr->btf_log_size ||
	    (attr->btf_log_buf && !attr->btf_log_level) || (attr->btf_log_level & ~15u) ||
	    attr->btf_log_size > (UINT32_MAX >> 2))
		return -EINVAL;
	if (attr->btf_size > BTF_MAX_SIZE)
		return -E2BIG;
	blob = malloc(n.size ? n.size : 1);
	if (!blob)
		return -ENOMEM;
	if (call->ua->from(blob, attr->btf, n.size)) {
		free(blob);
		return -EFAULT;
	}
	ret = header_rules(blob, n.size, err, sizeof(err));
	if (!ret)
		ret = brt_btf_parse(blob, n.size, &n.btf, err, sizeof(err));
	/* btf_resolve() answers a loop with EEXIST; the reader says "loops" */
	if (ret == -EINVAL && strstr(err, "or loops"))
		ret = -EEXIST;
	/* past the reader, the kernel's whole log: the header and the first pass's lines
	 * (a log too small for them fails the load with ENOSPC, as the kernel's) */
	if (!ret && attr->btf_log_level && !(log = open_memstream(&text, &text_len)))
		ret = -ENOMEM;
	if (!ret) {
		if (log)
			log_header(log, blob, n.size);
		ret = kernel_rules(n.btf, err, sizeof(err), log);
	}
	if (log && fclose(log) && !ret)
		ret = -ENOMEM;
	if (ret && n.btf) {
		brt_btf_free(n.btf);
		n.btf = NULL;
	}
	if (ret) {
		int lret;

		snprintf(msg, sizeof(msg), "%s\n", err);
		lret = put_log(call, attr, text ? text : msg);
		free(text);
		free(blob);
		/* btf_parse(): a log that did not fit (ENOSPC) or could not be written (EFAULT)
		 * overrides the refusal's errno */
		return lret ? lret : ret;
	}
	n.blob = blob;
	hdr.kind = BRT_OBJ_BTF;
	hdr.data_size = n.size;
	ret = put_log(call, attr, text ? text : "");
	free(text);
	if (!ret)
		ret = brt_obj_create_once(&hdr, sizeof(struct brt_btf_obj), btf_init, &n, &obj);
	if (ret >= 0)
		brt_obj_put(obj);
	brt_btf_free(n.btf);
	free(blob);
	return ret;
}

#define BTF_KERNEL 1u /* hdr.flags of a BTF object: the kernel's own (vmlinux) */

static int new_fd(const void *blob, uint32_t size, uint32_t id, const char *kname)
{
	struct btf_new n = { .blob = blob, .size = size };
	struct brt_obj_hdr hdr = { 0 };
	struct brt_obj *obj;
	char err[256];
	int ret;

	if (size > BTF_MAX_SIZE)
		return -E2BIG;
	ret = header_rules(blob, size, err, sizeof(err));
	if (!ret)
		ret = brt_btf_parse(blob, size, &n.btf, err, sizeof(err));
	if (!ret)
		ret = kernel_rules(n.btf, err, sizeof(err), NULL);
	if (!ret) {
		hdr.kind = BRT_OBJ_BTF;
		hdr.data_size = size;
		hdr.id = id;
		if (kname) {
			snprintf(hdr.name, sizeof(hdr.name), "%s", kname);
			hdr.flags = BTF_KERNEL;
		}
		ret = brt_obj_create_once(&hdr, sizeof(struct brt_btf_obj), btf_init, &n, &obj);
		if (ret >= 0)
			brt_obj_put(obj);
	}
	brt_btf_free(n.btf);
	return ret;
}

int brt_btf_new_fd(const void *blob, uint32_t size, uint32_t id)
{
	return new_fd(blob, size, id, NULL);
}

int brt_btf_vmlinux_fd(void)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC), ret;
	struct stat st;
	void *blob;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > BTF_MAX_SIZE) {
		close(fd);
		return -ENOENT;
	}
	blob = malloc((size_t)st.st_size);
	ret = blob ? 0 : -ENOMEM;
	/* sysfs hands a binary attribute out in pieces */
	for (size_t got = 0; !ret && got < (size_t)st.st_size;) {
		ssize_t n = read(fd, (char *)blob + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ret = -ENOENT;
		else
			got += (size_t)n;
	}
	close(fd);
	if (!ret)
		ret = new_fd(blob, (uint32_t)st.st_size, 1, "vmlinux");
	free(blob);
	return ret;
}

int brt_btf_obj_blob(const struct brt_obj *obj, const void **blob, uint32_t *size)
{
	const struct brt_btf_obj *b = (const struct brt_btf_obj *)(const void *)obj;

	if (!obj || obj->kind != BRT_OBJ_BTF)
		return -EINVAL;
	*blob = b->blob;
	*size = b->size;
	return 0;
}

int brt_btf_info(struct brt_call *call, struct brt_obj *obj, uint32_t len)
{
	const struct brt_btf_obj *b = (const struct brt_btf_obj *)(const void *)obj;
	struct bpf_btf_info info;
	uint32_t want;

	memset(&info, 0, sizeof(info));
	if (call->ua->from(&info, call->attr->info.info, len))
		return -EFAULT;
	want = info.btf_size;
	info.btf_size = b->size;
	info.id = obj->snap.id;
	if (info.btf && want &&
	    call->ua->to(info.btf, b->blob, want < info.btf_size ? want : info.btf_size))
		return -EFAULT;
	/* btf_get_info_by_fd(): the name (empty for loaded BTF) into the caller's buffer,
	 * truncated with ENOSPC; a buffer without length or the reverse is EINVAL */
	{
		uint64_t uname = info.name;
		uint32_t ulen = info.name_len, nlen;
		char name[BPF_OBJ_NAME_LEN];

		snprintf(name, sizeof(name), "%s", obj->snap.flags & BTF_KERNEL ? obj->snap.name : "");
		nlen = (uint32_t)strlen(name);
		if (!uname != !ulen)
			return -EINVAL;
		info.name_len = nlen;
		info.kernel_btf = !!(obj->snap.flags & BTF_KERNEL);
		if (uname && ulen >= nlen + 1 && call->ua->to(uname, name, nlen + 1))
			return -EFAULT;
		if (uname && ulen < nlen + 1) {
			if (call->ua->to(uname, name, ulen - 1) || call->ua->to(uname + ulen - 1, "", 1))
				return -EFAULT;
			return -ENOSPC;
		}
	}
	return call->ua->to(call->attr->info.info, &info, len);
}

/* ---- func_info and line_info of BPF_PROG_LOAD ---- */

struct info_check {
	struct brt_call *call;
	const struct bpf_insn *insns;
	uint32_t n;
	struct brt_btf *btf;
	uint32_t *subprogs; /* starts of the functions, sorted; [0] = 0 */
	uint32_t nsub;
	char *log;          /* the load's log buffer (NULL: none) */
	uint32_t log_size;
};

static int fail(struct info_check *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct info_check *c, int ret, const char *fmt, ...)
{
	va_list ap;

	if (c->log) {
		va_start(ap, fmt);
		vsnprintf(c->log, c->log_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Function starts as the verifier finds them: 0 and every bpf-to-bpf call target. */
static int find_subprogs(struct info_check *c)
{
	uint32_t k = 0;

	c->subprogs = malloc((c->n + 1) * sizeof(uint32_t));
	if (!c->subprogs)
		return -ENOMEM;
	c->subprogs[k++] = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct bpf_insn *in = &c->insns[i];
		int64_t t = (int64_t)i + in->imm + 1;

		if (((in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) ||
		     (in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC)) &&
		    t >= 0 && t < c->n)
			c->subprogs[k++] = (uint32_t)t;
	}
	qsort(c->subprogs, k, sizeof(uint32_t), cmp_u32);
	c->nsub = 0;
	for (uint32_t i = 0; i < k; i++)
		if (!c->nsub || c->subprogs[c->nsub - 1] != c->subprogs[i])
			c->subprogs[c->nsub++] = c->subprogs[i];
	return 0;
}

/* Record i of an array of rec_size-byte records: the known part copied, the rest must be
 * zero (bpf_check_uarg_tail_zero()). */
static int read_rec(struct info_check *c, uint64_t base, uint32_t rec_size, uint32_t i,
		    void *out, uint32_t ours)
{
	uint64_t at = base + (uint64_t)i * rec_size;
	uint8_t byte;

	memset(out, 0, ours);
	if (c->call->ua->from(out, at, rec_size < ours ? rec_size : ours))
		return -EFAULT;
	for (uint32_t b = ours; b < rec_size; b++) {
		if (c->call->ua->from(&byte, at + b, 1))
			return -EFAULT;
		if (byte)
			return -E2BIG;
	}
	return 0;
}

/* The exception callback the main function's "exception_callback:" tag names (the
 * kernel's bpf_find_exception_callback_insn_off(), which runs before the func_info
 * layout check): its insn_off, a function start besides the calls' targets.  0 when
 * there is none; -1 when the tag is bad, which the verifier reports with the kernel's
 * message before it looks at the layout (verifier/global.c). */
static int64_t exc_cb_off(struct info_check *c, const union bpf_attr *attr, uint32_t rs)
{
	struct bpf_func_info fi;
	const char *name = NULL;
	int64_t off = 0;
	uint32_t main_id;
	int id;

	if (read_rec(c, attr->func_info, rs, 0, &fi, sizeof(fi)))
		return 0;
	main_id = fi.type_id;
	for (uint32_t t = 1; t < c->btf->ntypes; t++) {
		const struct btf_type *tt = brt_btf_type(c->btf, t);
		const char *tn;

		if (BTF_INFO_KIND(tt->info) != BTF_KIND_DECL_TAG || tt->type != main_id ||
		    ((const struct btf_decl_tag *)(tt + 1))->component_idx != -1)
			continue;
		tn = brt_btf_name(c->btf, t);
		if (!tn || strncmp(tn, "exception_callback:", 19))
			continue;
		if (name)
			return -1;
		name = tn + 19;
	}
	if (!name)
		return 0;
	id = brt_btf_find(c->btf, name, BTF_KIND_FUNC);
	if (id <= 0 || BTF_INFO_VLEN(brt_btf_type(c->btf, (uint32_t)id)->info) != BTF_FUNC_GLOBAL)
		return -1;
	for (uint32_t i = 0; i < attr->func_info_cnt; i++) {
		if (read_rec(c, attr->func_info, rs, i, &fi, sizeof(fi)))
			return -1;
		if (fi.type_id == (uint32_t)id)
			off = fi.insn_off;
	}
	return off > 0 && off < c->n ? off : -1;
}

/* A function start besides the calls' targets, in order, once. */
static void add_start(struct info_check *c, uint32_t off)
{
	uint32_t i = 0;

	while (i < c->nsub && c->subprogs[i] < off)
		i++;
	if (i < c->nsub && c->subprogs[i] == off)
		return;
	memmove(&c->subprogs[i + 1], &c->subprogs[i], (c->nsub - i) * sizeof(uint32_t));
	c->subprogs[i] = off;
	c->nsub++;
}

static int check_funcs(struct info_check *c, const union bpf_attr *attr,
		       struct brt_prog_lines *out)
{
	uint32_t rs = attr->func_info_rec_size, prev = 0;
	struct bpf_func_info fi;
	uint32_t n;
	int64_t exc;
	int err;

	if (!attr->func_info_cnt)
		return 0;
	if (rs < MIN_FUNCINFO_SIZE || rs > MAX_INFO_REC_SIZE || rs % 4)
		return fail(c, -EINVAL, "invalid func info rec size %u\n", rs);
	for (uint32_t i = 0; i < attr->func_info_cnt; i++) {
		const struct btf_type *t;

		err = read_rec(c, attr->func_info, rs, i, &fi, sizeof(fi));
		if (err == -E2BIG)
			return fail(c, err, "nonzero tailing record in func info");
		if (err)
			return err;
		if (!i && fi.insn_off)
			return fail(c, -EINVAL, "nonzero insn_off %u for the first func info record",
				    fi.insn_off);
		if (i && fi.insn_off <= prev)
			return fail(c, -EINVAL, "same or smaller insn offset (%u) than previous "
				    "func info record (%u)", fi.insn_off, prev);
		t = brt_btf_type(c->btf, fi.type_id);
		if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC)
			return fail(c, -EINVAL, "invalid type id %d\n", fi.type_id);
		prev = fi.insn_off;
	}
	/* a bad tag: the verifier refuses it first, as the kernel (the layout is not
	 * checked then, the records are handed on as they are) */
	exc = exc_cb_off(c, attr, rs);
	if (exc > 0)
		add_start(c, (uint32_t)exc);
	if (exc >= 0 && attr->func_info_cnt != c->nsub)
		return fail(c, -EINVAL, "number of funcs in func_info doesn't match number of "
			    "subprogs\n");
	n = attr->func_info_cnt;
	out->linkage = calloc(n, 1);
	out->func_ids = calloc(n, sizeof(*out->func_ids));
	out->func_offs = calloc(n, sizeof(*out->func_offs));
	if (!out->linkage || !out->func_ids || !out->func_offs)
		return -ENOMEM;
	out->types = c->btf;
	for (uint32_t i = 0; i < n; i++) {
		err = read_rec(c, attr->func_info, rs, i, &fi, sizeof(fi));
		if (err)
			return err;
		if (exc >= 0 && fi.insn_off != c->subprogs[i])
			return fail(c, -EINVAL, "func_info BTF section doesn't match subprog layout "
				    "in BTF\n");
		/* static or global: the verifier's callbacks must be static */
		out->linkage[i] = (uint8_t)BTF_INFO_VLEN(brt_btf_type(c->btf, fi.type_id)->info);
		out->func_ids[i] = fi.type_id;
		out->func_offs[i] = fi.insn_off;
	}
	out->nfuncs = n;
	return 0;
}

static int check_lines(struct info_check *c, const union bpf_attr *attr,
		       struct brt_prog_lines *out)
{
	uint32_t rs = attr->line_info_rec_size, cnt = attr->line_info_cnt, prev = 0, s = 0;
	struct bpf_line_info li;
	int err;

	if (!cnt)
		return 0;
	if (rs < MIN_LINEINFO_SIZE || rs > MAX_INFO_REC_SIZE || rs % 4)
		return -EINVAL;
	out->lines = calloc(cnt, sizeof(*out->lines));
	if (!out->lines)
		return -ENOMEM;
	out->types = c->btf;
	for (uint32_t i = 0; i < cnt; i++) {
		struct brt_vline *l = &out->lines[i];
		const char *src, *file;

		err = read_rec(c, attr->line_info, rs, i, &li, sizeof(li));
		if (err == -E2BIG)
			return fail(c, err, "nonzero tailing record in line_info");
		if (err)
			return err;
		if ((i && li.insn_off <= prev) || li.insn_off >= c->n)
			return fail(c, -EINVAL, "Invalid line_info[%u].insn_off:%u (prev_offset:%u "
				    "prog->len:%u)\n", i, li.insn_off, prev, c->n);
		if (!c->insns[li.insn_off].code)
			return fail(c, -EINVAL, "Invalid insn code at line_info[%u].insn_off\n", i);
		src = brt_btf_str(c->btf, li.line_off);
		file = brt_btf_str(c->btf, li.file_name_off);
		if (!src || !file)
			return fail(c, -EINVAL, "Invalid line_info[%u].line_off or .file_name_off\n",
				    i);
		if (s != c->nsub) {
			if (li.insn_off == c->subprogs[s])
				s++;
			else if (c->subprogs[s] < li.insn_off)
				return fail(c, -EINVAL, "missing bpf_line_info for func#%u\n", s);
		}
		*l = (struct brt_vline){ .insn_off = li.insn_off, .src = src, .file = file,
					 .line = BPF_LINE_INFO_LINE_NUM(li.line_col),
					 .col = BPF_LINE_INFO_LINE_COL(li.line_col) };
		out->n = i + 1;
		prev = li.insn_off;
	}
	if (s != c->nsub)
		return fail(c, -EINVAL, "missing bpf_line_info for %u funcs starting from func#%u\n",
			    c->nsub - s, s);
	return 0;
}

void brt_prog_lines_free(struct brt_prog_lines *l)
{
	if (!l)
		return;
	if (l->btf)
		brt_obj_put(l->btf);
	free(l->lines);
	free(l->linkage);
	free(l->func_ids);
	free(l->func_offs);
	free(l);
}

int brt_prog_btf_check(struct brt_call *call, const struct bpf_insn *insns, char *log,
		       uint32_t log_size, struct brt_prog_lines **out)
{
	const union bpf_attr *attr = call->attr;
	struct info_check c = { .call = call, .insns = insns, .n = attr->insn_cnt,
				.log = log, .log_size = log_size };
	struct brt_prog_lines *pl;
	struct brt_obj *obj;
	int err;

	*out = NULL;
	/* the kernel looks at prog_btf_fd only when there is info to check */
	if (!attr->func_info_cnt && !attr->line_info_cnt)
		return 0;
	/* the program's file carries the blob (brt_prog_file_tail_size()); when it cannot,
	 * BPF_PROG_LOAD maps the BTF's own file (brt_obj_keep_fd()) */
	err = brt_obj_from_fd_transient((int)attr->prog_btf_fd, BRT_OBJ_BTF, &obj);
	if (err)
		return err;
	pl = calloc(1, sizeof(*pl));
	if (!pl) {
		brt_obj_put(obj);
		return -ENOMEM;
	}
	pl->btf = obj;
	c.btf = ((struct brt_btf_obj *)(void *)obj)->btf;
	err = find_subprogs(&c);
	if (!err)
		err = check_funcs(&c, attr, pl);
	if (!err)
		err = check_lines(&c, attr, pl);
	free(c.subprogs);
	if (err || (!pl->n && !pl->linkage)) {
		brt_prog_lines_free(pl);
		return err;
	}
	*out = pl;
	return 0;
}

/* The size of type id as btf_type_id_size() sees it: modifiers and typedefs followed,
 * void, functions and their prototypes have none. */
static int sized_type(const struct brt_btf *btf, uint32_t id, uint64_t *size)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));
	unsigned int kind;

	if (!id || !t)
		return -EINVAL;
	kind = BTF_INFO_KIND(t->info);
	if (kind == BTF_KIND_FUNC || kind == BTF_KIND_FUNC_PROTO || kind == BTF_KIND_FWD)
		return -EINVAL;
	return brt_btf_resolve_size(btf, id, size) ? -EINVAL : 0;
}

#define LOCK_SEARCH_MEMBERS 4096 /* bad BTF can nest wide structs deeply: bound the walk */

static int find_field(const struct brt_btf *btf, uint32_t id, uint32_t base, int nested,
		      uint32_t *seen, const char *fname, uint32_t fsize, uint32_t falign);

/* One place a search found (off, or -ENOENT for none, or an error; direct: the field
 * itself rather than a struct holding it) added to what it found before (*found, -ENOENT
 * for nothing yet): 0 to go on, else the search's error: two fields of one struct are the
 * kernel's -E2BIG, two at different depths bpfrt's -ENOTUNIQ (find_field()). */
static int note_field(int off, int direct, int *found, int *found_direct)
{
	if (off == -ENOENT)
		return 0;
	if (off < 0)
		return off;
	if (*found >= 0)
		return direct && *found_direct ? -E2BIG : -ENOTUNIQ;
	*found = off;
	*found_direct = direct;
	return 0;
}

/* btf_find_datasec_var(): a global data map's value is a DATASEC whose variables may be
 * the field itself (a global struct bpf_spin_lock; its section size must be the field's)
 * or a struct holding it (searched as a value is) */
static int find_datasec_field(const struct brt_btf *btf, const struct btf_type *t,
			      uint32_t *seen, const char *fname, uint32_t fsize, uint32_t falign)
{
	const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);
	int found = -ENOENT, found_direct = 0, direct, err;

	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++, v++) {
		const struct btf_type *var = brt_btf_type(btf, v->type);
		uint32_t vid = var ? brt_btf_skip_mods(btf, var->type) : 0;
		const struct btf_type *vt = brt_btf_type(btf, vid);
		const char *name = brt_btf_name(btf, vid);
		int off;

		if (++*seen > LOCK_SEARCH_MEMBERS)
			return -E2BIG;
		if (!var || BTF_INFO_KIND(var->info) != BTF_KIND_VAR || !vt ||
		    BTF_INFO_KIND(vt->info) != BTF_KIND_STRUCT || v->offset > INT32_MAX)
			continue;
		direct = name && !strcmp(name, fname) && vt->size == fsize;
		if (direct) {
			if (v->size != fsize)
				continue;
			off = v->offset % falign ? -ENOENT : (int)v->offset;
		} else if (v->size == vt->size) {
			off = find_field(btf, vid, v->offset, 1, seen, fname, fsize, falign);
		} else {
			continue;
		}
		err = note_field(off, direct, &found, &found_direct);
		if (err)
			return err;
	}
	return found;
}

/* The offset of a struct fname of fsize bytes (bpf_spin_lock, bpf_res_spin_lock,
 * bpf_timer) among the members of struct id (and of the structs nested in it when nested
 * is set; a DATASEC's variables too), the way the kernel's btf_find_field() looks (unions
 * and arrays are not searched): -ENOENT when there is none, -EFAULT for one not
 * falign-aligned, -E2BIG for two members of one struct (the kernel's error too) or for a
 * nested search past LOCK_SEARCH_MEMBERS members (*seen counts them; a struct that
 * contains itself is a BTF loop, refused at load), -ENOTUNIQ for two at different depths
 * (the kernel keeps both; bpfrt's maps have one word per kind). */
static int find_field(const struct brt_btf *btf, uint32_t id, uint32_t base, int nested,
		      uint32_t *seen, const char *fname, uint32_t fsize, uint32_t falign)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, id));
	const struct btf_member *m;
	int found = -ENOENT, found_direct = 0, direct, err;

	if (t && BTF_INFO_KIND(t->info) == BTF_KIND_DATASEC && nested)
		return find_datasec_field(btf, t, seen, fname, fsize, falign);
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT)
		return -ENOENT;
	m = (const struct btf_member *)(t + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		uint32_t mid = brt_btf_skip_mods(btf, m->type);
		const struct btf_type *mt = brt_btf_type(btf, mid);
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) :
							   m->offset;
		const char *name = brt_btf_name(btf, mid);
		int off;

		if (nested && ++*seen > LOCK_SEARCH_MEMBERS)
			return -E2BIG;
		if (!mt || BTF_INFO_KIND(mt->info) != BTF_KIND_STRUCT)
			continue;
		if ((uint64_t)base + bits / 8 > INT32_MAX)
			return -EINVAL;
		direct = name && !strcmp(name, fname) && mt->size == fsize;
		if (direct)
			off = bits % (8 * falign) ? -EFAULT : (int)(base + bits / 8);
		else if (nested)
			off = find_field(btf, mid, base + bits / 8, 1, seen, fname, fsize, falign);
		else
			continue;
		err = note_field(off, direct, &found, &found_direct);
		if (err)
			return err;
	}
	return found;
}

static int find_spin_lock(const struct brt_btf *btf, uint32_t id, uint32_t base, int nested,
			  uint32_t *seen)
{
	return find_field(btf, id, base, nested, seen, "bpf_spin_lock", 4, 4);
}

static int kptr_map_type(uint32_t t)
{
	return t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_LRU_HASH || t == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       t == BPF_MAP_TYPE_ARRAY || t == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       t == BPF_MAP_TYPE_SK_STORAGE || t == BPF_MAP_TYPE_INODE_STORAGE ||
	       t == BPF_MAP_TYPE_TASK_STORAGE || t == 32 /* BPF_MAP_TYPE_CGRP_STORAGE */;
}

/* __btf_type_int_is_regular(): an int (after modifiers) of bytes whole bytes, bit 0 */
static int reg_int(const struct brt_btf *btf, uint32_t id, uint32_t bytes)
{
	const struct btf_type *t = id ? brt_btf_type(btf, brt_btf_skip_mods(btf, id)) : NULL;
	uint32_t data;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_INT)
		return 0;
	memcpy(&data, t + 1, sizeof(data));
	return !BTF_INT_OFFSET(data) && !(BTF_INT_BITS(data) % 8) &&
	       BTF_INT_BITS(data) / 8 == bytes;
}

/* btf_member_is_reg_int(): member m of struct s an int of bytes bytes at byte off */
static int reg_int_member(const struct brt_btf *btf, const struct btf_type *s,
			  const struct btf_member *m, uint32_t off, uint32_t bytes)
{
	const struct btf_type *t = brt_btf_type(btf, brt_btf_skip_mods(btf, m->type));
	uint32_t data, bits;

	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_INT)
		return 0;
	memcpy(&data, t + 1, sizeof(data));
	bits = BTF_INT_BITS(data);
	if (BTF_INFO_KFLAG(s->info))
		return !BTF_MEMBER_BITFIELD_SIZE(m->offset) &&
		       (BTF_MEMBER_BIT_OFFSET(m->offset) + 7) / 8 == off && (bits + 7) / 8 == bytes;
	return !BTF_INT_OFFSET(data) && !(m->offset % 8) && m->offset / 8 == off &&
	       !(bits % 8) && bits / 8 == bytes;
}

/* The type's map_check_btf (maps.h enum brt_map_btf_kind, the type's ops), which the kernel
 * asks after the value's fields: 0 or its errno. */
static int type_check_btf(const struct brt_btf *btf, const union bpf_attr *attr)
{
	uint32_t kid = attr->btf_key_type_id;
	const struct btf_type *kt = kid ? brt_btf_type(btf, brt_btf_skip_mods(btf, kid)) : NULL;
	const struct btf_type *vt =
		brt_btf_type(btf, brt_btf_skip_mods(btf, attr->btf_value_type_id));
	const struct btf_member *m;

	switch (brt_map_type_btf(attr->map_type)) {
	case BRT_MAP_BTF_NONE:
		return -524; /* map_check_no_btf(): ENOTSUPP */
	case BRT_MAP_BTF_ARRAY:
		/* keyless: a global data map, a one-element array of a DATASEC */
		if (!kid)
			return attr->map_type == BPF_MAP_TYPE_ARRAY && attr->max_entries == 1 &&
						       vt && BTF_INFO_KIND(vt->info) == BTF_KIND_DATASEC
				       ? 0
				       : -EINVAL;
		return reg_int(btf, kid, 4) ? 0 : -EINVAL;
	case BRT_MAP_BTF_KEYLESS:
		return kid ? -EINVAL : 0;
	case BRT_MAP_BTF_STRUCT_KEY:
		return kt && BTF_INFO_KIND(kt->info) == BTF_KIND_STRUCT ? 0 : -EINVAL;
	case BRT_MAP_BTF_INT_KEY:
		return reg_int(btf, kid, 4) ? 0 : -EINVAL;
	case BRT_MAP_BTF_CGROUP_KEY:
		/* struct bpf_cgroup_storage_key { __u64 cgroup_inode_id; __u32 attach_type; }
		 * (16 bytes) or the u64 inode id alone */
		if (attr->key_size != 16)
			return reg_int(btf, kid, 8) ? 0 : -EINVAL;
		if (!kt || BTF_INFO_KIND(kt->info) != BTF_KIND_STRUCT || BTF_INFO_VLEN(kt->info) != 2)
			return -EINVAL;
		m = (const struct btf_member *)(kt + 1);
		return reg_int_member(btf, kt, m, 0, 8) && reg_int_member(btf, kt, m + 1, 8, 4)
			       ? 0
			       : -EINVAL;
	default:
		return 0;
	}
}

/* map_check_btf() on a checked BTF: the key and value types against the map's
 * attributes, and the value's special fields into out (locks, timer, roots; the other
 * members are the caller's).  0 or the kernel's errno. */
static int value_fields(const struct brt_btf *btf, const union bpf_attr *attr,
			struct brt_map_btf *out)
{
	uint64_t size;
	uint32_t seen = 0;
	int err = -EINVAL, off, roff, toff, twoff, nroots = 0, nkptrs;
	struct brt_obj_root roots[BRT_OBJ_MAX_ROOTS] = { { 0 } };

	if (sized_type(btf, attr->btf_value_type_id, &size) || size != attr->value_size)
		return err;
	/* keyless BTF: only for a type with a map_check_btf, which decides */
	if (attr->btf_key_type_id) {
		if (sized_type(btf, attr->btf_key_type_id, &size) || size != attr->key_size)
			return err;
	} else if (brt_map_type_btf(attr->map_type) <= BRT_MAP_BTF_KEYED) {
		return err;
	}
	/* map_check_btf(): the value's special fields (btf_parse_fields(); of those bpfrt
	 * has: a bpf_spin_lock or a bpf_res_spin_lock, 4 bytes, 4-aligned; a bpf_timer, 16
	 * bytes, 8-aligned) */
	off = find_field(btf, attr->btf_value_type_id, 0, 1, &seen, "bpf_spin_lock", 4, 4);
	seen = 0;
	roff = find_field(btf, attr->btf_value_type_id, 0, 1, &seen, "bpf_res_spin_lock", 4, 4);
	seen = 0;
	toff = find_field(btf, attr->btf_value_type_id, 0, 1, &seen, "bpf_timer", 16, 8);
	seen = 0;
	/* Linux 6.18's struct bpf_task_work: 8 bytes, 8-aligned, one per value */
	twoff = find_field(btf, attr->btf_value_type_id, 0, 1, &seen, "bpf_task_work", 8, 8);
	/* two of a kind at different depths: the kernel keeps both, bpfrt's maps cannot (a
	 * documented difference, tests/api/test_map_lock.c) */
	err = -E2BIG;
	if (off == -ENOTUNIQ || roff == -ENOTUNIQ || toff == -ENOTUNIQ || twoff == -ENOTUNIQ)
		return err;
	/* a value whose fields do not parse (two of a kind at one level, both locks, offsets
	 * past the value) has none: map_check_btf() ignores btf_parse_fields()'s error
	 * (measured on 6.18.44: such a map is made, and programs may not lock it) */
	if ((off < 0 && off != -ENOENT) || (roff < 0 && roff != -ENOENT) ||
	    (toff < 0 && toff != -ENOENT) || (twoff < 0 && twoff != -ENOENT) ||
	    (off >= 0 && roff >= 0) || (off >= 0 && (uint64_t)off + 4 > attr->value_size) ||
	    (roff >= 0 && (uint64_t)roff + 4 > attr->value_size) ||
	    (toff >= 0 && (uint64_t)toff + 16 > attr->value_size) ||
	    (twoff >= 0 && (uint64_t)twoff + 8 > attr->value_size))
		off = roff = toff = twoff = -ENOENT;
	/* lists and trees (they need a lock: btf_parse_fields()): hash, LRU hash and array
	 * maps only; their nodes are freed with the value (maps/spin_lock.c) */
	nroots = brt_verifier_graph_roots(btf, attr->btf_value_type_id, roots, BRT_OBJ_MAX_ROOTS);
	/* a root whose "contains:" struct or node does not parse (a struct the object's BTF
	 * lacks: rbtree_btf_fail's add_wrong_type) fails btf_parse_fields() as a whole: no
	 * lock, timer or root (programs then read "map '.data.A' has no valid
	 * bpf_spin_lock") */
	if (nroots < 0) {
		off = roff = toff = twoff = -ENOENT;
		nroots = 0;
	}
	/* a value with fields is not for programs that may only read or only write it */
	err = -EACCES;
	if ((off >= 0 || roff >= 0 || toff >= 0 || twoff >= 0) &&
	    (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)))
		return err;
	/* locks: hash, array, cgroup storage (not per-CPU) and local storage maps only */
	err = -EOPNOTSUPP;
	if ((off >= 0 || roff >= 0) && attr->map_type != BPF_MAP_TYPE_HASH &&
	    attr->map_type != BPF_MAP_TYPE_ARRAY &&
	    attr->map_type != BPF_MAP_TYPE_CGROUP_STORAGE && !local_storage(attr->map_type))
		return err;
	/* timers and task works: hash, LRU hash and array maps only */
	if ((toff >= 0 || twoff >= 0) && attr->map_type != BPF_MAP_TYPE_HASH &&
	    attr->map_type != BPF_MAP_TYPE_LRU_HASH && attr->map_type != BPF_MAP_TYPE_ARRAY)
		return err;
	/* kptrs to objects of bpf_obj_new need no lock (kernel types' kptrs are not
	 * recorded: bpfrt does not exchange them) */
	nkptrs = 0;
	for (int i = 0; i < nroots; i++)
		nkptrs += roots[i].rb == BRT_ROOT_KPTR;
	if (!(off >= 0 || roff >= 0) && nkptrs < nroots) {
		int k = 0;

		for (int i = 0; i < nroots; i++)
			if (roots[i].rb == BRT_ROOT_KPTR)
				roots[k++] = roots[i];
		nroots = k;
	}
	err = -EACCES;
	if (nkptrs && (attr->map_flags & (BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG)))
		return err;
	err = -EOPNOTSUPP;
	if (nroots > nkptrs && attr->map_type != BPF_MAP_TYPE_HASH &&
	    attr->map_type != BPF_MAP_TYPE_LRU_HASH && attr->map_type != BPF_MAP_TYPE_ARRAY)
		return err;
	/* map_check_btf()'s map types for kptrs; bpfrt frees them in hash, LRU hash and
	 * array maps (its verifier keeps programs from the others' kptrs) */
	if (nkptrs && !kptr_map_type(attr->map_type))
		return err;
	if (nkptrs && attr->map_type != BPF_MAP_TYPE_HASH &&
	    attr->map_type != BPF_MAP_TYPE_LRU_HASH && attr->map_type != BPF_MAP_TYPE_ARRAY)
		nroots = 0;
	/* last, as the kernel asks it after the fields: the type's own map_check_btf */
	err = type_check_btf(btf, attr);
	if (err)
		return err;
	out->lock_off = off >= 0 ? (uint32_t)off + 1 : 0;
	out->res_lock_off = roff >= 0 ? (uint32_t)roff + 1 : 0;
	out->timer_off = toff >= 0 ? (uint32_t)toff + 1 : 0;
	out->task_work_off = twoff >= 0 ? (uint32_t)twoff + 1 : 0;
	out->nroots = nroots > 0 ? (uint32_t)nroots : 0;
	memcpy(out->roots, roots, sizeof(roots));
	return 0;
}

int brt_map_btf_check(const union bpf_attr *attr, struct brt_map_btf *out)
{
	struct brt_btf_obj *b;
	struct brt_obj *obj;
	int err;

	/* held until the map is made, which copies the blob into its own file */
	err = brt_obj_from_fd_transient((int)attr->btf_fd, BRT_OBJ_BTF, &obj);
	if (err)
		return err;
	b = (struct brt_btf_obj *)(void *)obj;
	memset(out, 0, sizeof(*out));
	/* no value type (a struct_ops map's value is the kernel's): the object alone */
	err = attr->btf_value_type_id ? value_fields(b->btf, attr, out) : 0;
	if (err) {
		brt_obj_put(obj);
		return err;
	}
	out->id = obj->snap.id;
	out->blob = b->blob;
	out->size = b->size;
	out->ref = obj;
	out->snap = b->snap;
	return 0;
}

/* Do the fields the map's runtime took from its header (as this process first read it:
 * maps/map.c) match what its BTF gives?  The verifier checks programs against the BTF
 * and the maps run with the header's: they must be one record. */
static int fields_match(const struct brt_obj_hdr *h, const struct brt_map_btf *f)
{
	uint32_t n = f->nroots <= BRT_OBJ_HDR_ROOTS ? f->nroots : 0;

	if (h->spin_lock_off != f->lock_off || h->res_spin_lock_off != f->res_lock_off ||
	    h->timer_off != f->timer_off || h->task_work_off != f->task_work_off ||
	    h->ngraph_roots != n)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (h->graph_roots[i][0] != f->roots[i].off ||
		    h->graph_roots[i][1] != f->roots[i].node_off ||
		    h->graph_roots[i][2] != f->roots[i].rb)
			return 0;
	return 1;
}

/* The copies this process checked last, with their parsed types: a loader that reuses an
 * object's pinned maps opens many maps of one BTF, and a copy equal to one of these is
 * not checked again (a 197 KB BTF: 345 us the check, a compare a few).  They stay until
 * pushed out by newer ones. */
#define SEEN_MAX 4
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct brt_btf_snap *snap;
	struct brt_btf *btf;
} seen[SEEN_MAX];
static unsigned seen_next;

/* value_fields() of the map on the copy s: *reuse gets an equal copy already checked
 * (referenced) when there is one; 0, or -EINVAL for a copy that is no BTF of this map */
static int check_copy(const union bpf_attr *a, struct brt_btf_snap *s, struct brt_map_btf *f,
		      struct brt_btf_snap **reuse)
{
	struct brt_btf *btf = NULL;
	char err[256];
	int ret;

	*reuse = NULL;
	pthread_mutex_lock(&seen_lock);
	for (unsigned i = 0; i < SEEN_MAX; i++)
		if (seen[i].snap && seen[i].snap->size == s->size &&
		    !memcmp(seen[i].snap->blob, s->blob, s->size)) {
			ret = value_fields(seen[i].btf, a, f);
			if (!ret) {
				atomic_fetch_add_explicit(&seen[i].snap->refs, 1,
							  memory_order_relaxed);
				*reuse = seen[i].snap;
			}
			pthread_mutex_unlock(&seen_lock);
			return ret;
		}
	pthread_mutex_unlock(&seen_lock);
	ret = header_rules(s->blob, s->size, err, sizeof(err));
	if (!ret)
		ret = brt_btf_parse(s->blob, s->size, &btf, err, sizeof(err));
	if (!ret)
		ret = kernel_rules(btf, err, sizeof(err), NULL);
	if (!ret)
		ret = value_fields(btf, a, f);
	if (ret) {
		brt_btf_free(btf);
		return ret;
	}
	pthread_mutex_lock(&seen_lock);
	brt_btf_snap_put(seen[seen_next].snap);
	brt_btf_free(seen[seen_next].btf);
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	seen[seen_next].snap = s;
	seen[seen_next].btf = btf;
	seen_next = (seen_next + 1) % SEEN_MAX;
	pthread_mutex_unlock(&seen_lock);
	return 0;
}

const struct brt_btf *brt_btf_snap_btf(struct brt_btf_snap *s)
{
	struct brt_btf *b = atomic_load_explicit(&s->parsed, memory_order_acquire);
	void *none = NULL;
	char err[64];

	if (b)
		return b;
	if (brt_btf_parse(s->blob, s->size, &b, err, sizeof(err)))
		return NULL;
	if (!atomic_compare_exchange_strong_explicit(&s->parsed, &none, b, memory_order_acq_rel,
						     memory_order_acquire)) {
		brt_btf_free(b); /* another thread's parse of the same bytes */
		b = none;
	}
	return b;
}

int brt_map_btf_snap(struct brt_map *m, struct brt_btf_snap **out)
{
	const struct brt_obj_hdr *h = &m->obj.snap;
	struct brt_btf_snap *s = atomic_load_explicit(&m->btf_snap, memory_order_acquire);
	struct brt_btf_snap *none = NULL, *reuse;
	struct brt_map_btf f = { 0 };
	union bpf_attr a;
	const void *blob;
	uint32_t size;
	int ret;

	if (s) {
		*out = s;
		return 0;
	}
	if (brt_map_btf_blob(m, &blob, &size))
		return -ENOENT;
	/* the one read of the file's copy: everything below checks and keeps these bytes */
	s = snap_new(blob, size);
	if (!s)
		return -ENOMEM;
	/* MAP_CREATE's own check of the types, on the parameters the map runs with */
	memset(&a, 0, sizeof(a));
	a.map_type = h->type;
	a.key_size = h->key_size;
	a.value_size = h->value_size;
	a.max_entries = h->max_entries;
	a.map_flags = m->flags & ~m->ops->forced_flags;
	a.btf_key_type_id = h->btf_key_type_id;
	a.btf_value_type_id = h->btf_value_type_id;
	ret = check_copy(&a, s, &f, &reuse);
	if (!ret && !fields_match(h, &f))
		ret = -EINVAL;
	if (reuse) {
		brt_btf_snap_put(s);
		s = reuse;
	}
	if (ret) {
		brt_btf_snap_put(s);
		return -EINVAL;
	}
	if (!atomic_compare_exchange_strong_explicit(&m->btf_snap, &none, s, memory_order_acq_rel,
						     memory_order_acquire)) {
		brt_btf_snap_put(s); /* another thread's is the same check of the same map */
		s = none;
	}
	*out = s;
	return 0;
}
