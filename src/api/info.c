/* info.c - BPF_OBJ_GET_INFO_BY_FD: struct bpf_map_info and struct bpf_prog_info with the
 * fields that make sense here (no BTF, no JIT image, no network namespace), following the
 * kernel's size rules: the caller's info_len may be larger than ours if the tail is zero
 * (else E2BIG); we copy min(ours, theirs) and write that back into info_len.  A program's
 * map ids and instructions come from its file, so any process sees them, in the kernel's
 * form (lddw BPF_PSEUDO_MAP_FD / _VALUE with the map id as immediate).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/link_rec.h"
#include "maps/maps.h"
#include "btf/btf.h"
#include "jit/jit.h"
#include "verifier/verifier.h"
#include "vm/vm.h"
#include "util/util.h"

static int tail_zero(struct brt_call *call, uint64_t uinfo, uint32_t ours, uint32_t len)
{
	unsigned char byte;

	/* The kernel's bpf_check_uarg_tail_zero(): more than a page is "silly large". */
	if (len > (uint32_t)sysconf(_SC_PAGESIZE))
		return -E2BIG;
	for (uint32_t i = ours; i < len; i++) {
		if (call->ua->from(&byte, uinfo + i, 1))
			return -EFAULT;
		if (byte)
			return -E2BIG;
	}
	return 0;
}

static int map_info(struct brt_call *call, struct brt_map *map, uint32_t len)
{
	struct bpf_map_info info;
	const struct brt_obj_hdr *hdr = &map->obj.snap;

	memset(&info, 0, sizeof(info));
	info.type = map->type;
	info.id = hdr->id;
	info.key_size = map->key_size;
	info.value_size = map->value_size;
	info.max_entries = map->max_entries;
	/* BPF_F_RDONLY / BPF_F_WRONLY describe the creating fd, not the map: the kernel
	 * (bpf_map_flags_retain_permanent()) does not report them */
	info.map_flags = map->flags & ~(uint32_t)(BPF_F_RDONLY | BPF_F_WRONLY);
	info.map_extra = hdr->map_extra;
	info.btf_id = hdr->btf_id;
	info.btf_key_type_id = hdr->btf_key_type_id;
	info.btf_value_type_id = hdr->btf_value_type_id;
	info.btf_vmlinux_value_type_id = hdr->btf_vmlinux_value_type_id;
	memcpy(info.name, hdr->name, sizeof(info.name));
	info.name[sizeof(info.name) - 1] = 0;
	return call->ua->to(call->attr->info.info, &info, len);
}

/* The kernel's tag of the stored instructions (tag.c). */
static int prog_tag(const struct brt_prog *prog, unsigned char tag[BPF_TAG_SIZE])
{
	return brt_prog_tag(prog->obj.base, prog->insn_cnt, tag);
}

/* created_ns is CLOCK_REALTIME (any process reads it); load_time is nanoseconds since
 * boot, as the kernel's ktime_get_boottime_ns() (bpftool adds the boot time back). */
static uint64_t boot_ns(uint64_t realtime_ns)
{
	struct timespec r, b;
	int64_t off;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_BOOTTIME, &b);
	off = ((int64_t)r.tv_sec - (int64_t)b.tv_sec) * 1000000000 + (r.tv_nsec - b.tv_nsec);
	return realtime_ns > (uint64_t)off ? realtime_ns - (uint64_t)off : 0;
}

/* Where stored instruction off is in the kernel's view (the next surviving one when it
 * was removed). */
static uint32_t xlated_off(const struct brt_xlated *xl, uint32_t off)
{
	return xl && xl->pos && off <= xl->norig ? xl->pos[off] : off;
}

/* Whether record i of n (insn offsets at stride bytes from first, ascending) stays in
 * the kernel's view: it lands inside it and the next record lands elsewhere. */
static int kept(const struct brt_xlated *xl, const uint32_t *first, uint32_t i, uint32_t n,
		size_t stride)
{
	const unsigned char *b = (const unsigned char *)first;
	uint32_t off = *(const uint32_t *)(const void *)(b + i * stride), next;

	if (!xl || !xl->pos)
		return 1;
	if (xlated_off(xl, off) >= xl->n)
		return 0;
	if (i + 1 == n)
		return 1;
	next = *(const uint32_t *)(const void *)(b + (i + 1) * stride);
	return xlated_off(xl, next) != xlated_off(xl, off);
}

/* func_info and line_info as the load gave them (the kernel's bpf_prog_get_info_by_fd():
 * the counts always, up to the caller's count of records copied, record sizes that are
 * not the kernel's refused).  Only a program loaded in this process has them: its file
 * keeps none, so one built from a pin answers 0 records, as a kernel program without
 * BTF does.  bpfrt keeps the instructions as loaded, so the offsets need no adjusting. */
static int prog_btf_info(struct brt_call *call, const struct brt_prog *prog,
			 const struct brt_xlated *xl, struct bpf_prog_info *info)
{
	const struct brt_prog_lines *pl = prog->lines;
	uint32_t nf = pl && pl->func_offs ? pl->nfuncs : 0, nl = pl && pl->types ? pl->n : 0;
	uint32_t uf = info->nr_func_info, ul = info->nr_line_info, kf = 0, kl = 0;

	if ((uf || info->func_info_rec_size) &&
	    info->func_info_rec_size != sizeof(struct bpf_func_info))
		return -EINVAL;
	if ((ul || info->line_info_rec_size) &&
	    info->line_info_rec_size != sizeof(struct bpf_line_info))
		return -EINVAL;
	info->func_info_rec_size = sizeof(struct bpf_func_info);
	info->line_info_rec_size = sizeof(struct bpf_line_info);
	/* records of removed instructions go as the kernel's bpf_adj_linfo_after_remove():
	 * of those landing on one instruction the last stands (the instruction's own, or
	 * the last removed one's when it had none), none past the end */
	for (uint32_t i = 0; i < nf; i++) {
		struct bpf_func_info fi = { .insn_off = xlated_off(xl, pl->func_offs[i]),
					    .type_id = pl->func_ids[i] };

		if (!kept(xl, pl->func_offs, i, nf, sizeof(pl->func_offs[0])))
			continue;
		if (kf < uf && call->ua->to(info->func_info + kf * sizeof(fi), &fi, sizeof(fi)))
			return -EFAULT;
		kf++;
	}
	for (uint32_t i = 0; i < nl; i++) {
		const struct brt_vline *v = &pl->lines[i];
		struct bpf_line_info li = {
			.insn_off = xlated_off(xl, v->insn_off),
			.file_name_off = (uint32_t)(v->file - pl->types->strs),
			.line_off = (uint32_t)(v->src - pl->types->strs),
			.line_col = v->line << 10 | (v->col & 0x3ff),
		};

		if (!kept(xl, &pl->lines[0].insn_off, i, nl, sizeof(pl->lines[0])))
			continue;
		if (kl < ul && call->ua->to(info->line_info + kl * sizeof(li), &li, sizeof(li)))
			return -EFAULT;
		kl++;
	}
	info->nr_func_info = kf;
	info->nr_line_info = kl;
	return 0;
}

/* The JIT's image as the kernel reports its own (jited_prog_len and the bytes, one
 * symbol at the code's address, one function length: bpfrt compiles a program with its
 * subprograms into one image).  A program on another engine reports none ("not jited"),
 * as the kernel's interpreter does.  The image is the code a run of the program with its
 * own helpers executes (compiled now if no run needed it yet). */
static int prog_jited_info(struct brt_call *call, struct brt_prog *prog,
			   struct bpf_prog_info *info)
{
	uint32_t ulen = info->jited_prog_len, uk = info->nr_jited_ksyms;
	uint32_t uf = info->nr_jited_func_lens;
	const struct brt_jit_prog *jp;
	const uint32_t *off;
	const uint8_t *code;
	char err[256];
	size_t size;

	info->jited_prog_len = info->nr_jited_ksyms = info->nr_jited_func_lens = 0;
#ifndef BPFRT_HAVE_JIT
	(void)call, (void)prog, (void)ulen, (void)uk, (void)uf, (void)jp, (void)off, (void)code;
	(void)err, (void)size;
	return 0;
#else
	if (brt_prog_materialise(prog) || !prog->vm ||
	    brt_vm_engine(prog->vm) != BPFRT_ENGINE_JIT ||
	    brt_vm_jit_code(prog->vm, &jp, err, sizeof(err)))
		return 0;
	code = brt_jit_code(jp, &size, &off);
	if (!code || size > UINT32_MAX)
		return 0;
	info->jited_prog_len = (uint32_t)size;
	info->nr_jited_ksyms = info->nr_jited_func_lens = 1;
	if (ulen && info->jited_prog_insns &&
	    call->ua->to(info->jited_prog_insns, code, ulen < size ? ulen : size))
		return -EFAULT;
	if (uk && info->jited_ksyms) {
		uint64_t addr = (uint64_t)(uintptr_t)code;

		if (call->ua->to(info->jited_ksyms, &addr, sizeof(addr)))
			return -EFAULT;
	}
	if (uf && info->jited_func_lens) {
		uint32_t flen = (uint32_t)size;

		if (call->ua->to(info->jited_func_lens, &flen, sizeof(flen)))
			return -EFAULT;
	}
	return 0;
#endif
}

static int prog_info(struct brt_call *call, struct brt_prog *prog, uint32_t len)
{
	const struct brt_obj_hdr *hdr = &prog->obj.snap;
	const struct brt_prog_mapref *t = brt_prog_file_maps(prog);
	struct bpf_prog_info info;
	struct brt_xlated xl = { 0 };
	uint32_t ulen, xlated;
	int err;

	memset(&info, 0, sizeof(info));
	if (call->ua->from(&info, call->attr->info.info, len))
		return -EFAULT;
	info.type = prog->type;
	info.id = hdr->id;
	if (prog_tag(prog, info.tag))
		return -ENOMEM;
	info.load_time = boot_ns(hdr->created_ns);
	info.created_by_uid = (uint32_t)getuid();
	memcpy(info.name, hdr->name, sizeof(info.name));
	info.name[sizeof(info.name) - 1] = 0;
	info.gpl_compatible = hdr->gpl ? 1 : 0;
	info.nr_jited_line_info = 0;
	info.nr_prog_tags = 0;
	/* the kernel's view of the program: its instructions (read from /proc/kallsyms only
	 * when the caller asks for them), their count, the line and function info moved
	 * with them; a program that cannot be rebuilt here shows its stored ones */
	ulen = info.xlated_prog_len;
	brt_prog_materialise(prog);
	err = ulen && info.xlated_prog_insns ? brt_prog_xlated(prog, 1, &xl) :
					       brt_prog_xlated_len(prog, &xl);
	if (err)
		return err;
	xlated = xl.n * (uint32_t)sizeof(struct bpf_insn);
	err = prog_btf_info(call, prog, &xl, &info);
	if (!err)
		err = prog_jited_info(call, prog, &info);
	if (!err && ulen && info.xlated_prog_insns &&
	    call->ua->to(info.xlated_prog_insns, xl.insns, ulen < xlated ? ulen : xlated))
		err = -EFAULT;
	brt_xlated_free(&xl);
	if (err)
		return err;
	info.xlated_prog_len = xlated;
	info.verified_insns = prog->verified_insns;
	info.btf_id = hdr->btf_id;

	ulen = info.nr_map_ids;
	info.nr_map_ids = prog->nmaps;
	for (uint32_t i = 0; i < ulen && i < prog->nmaps; i++)
		if (call->ua->to(info.map_ids + 4ull * i, &t[i].id, 4))
			return -EFAULT;
	return call->ua->to(call->attr->info.info, &info, len);
}

/* OBJ_GET_INFO_BY_FD of a link (any process's: its record), as the kernel's
 * bpf_link_get_info_by_fd(): the caller's bytes read in (name buffers), filled, the name
 * copied with bpf_copy_to_user()'s truncation (ENOSPC), len bytes written back. */
static int link_info(struct brt_call *call, const struct brt_link_rec *r, const char *name)
{
	union bpf_attr *attr = call->attr;
	uint32_t len = attr->info.info_len, ulen, nlen = (uint32_t)strlen(name);
	struct brt_link_kinfo info;
	uint64_t ubuf;
	int err;

	err = tail_zero(call, attr->info.info, sizeof(info), len);
	if (err)
		return err;
	if (len > sizeof(info))
		len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (call->ua->from(&info, attr->info.info, len))
		return -EFAULT;
	err = brt_link_rec_fill(r, *name ? name : NULL, &info, &ubuf, &ulen);
	if (err)
		return err;
	if (ubuf) {
		if (ulen >= nlen + 1) {
			if (call->ua->to(ubuf, name, nlen + 1))
				return -EFAULT;
		} else {
			if (call->ua->to(ubuf, name, ulen - 1) || call->ua->to(ubuf + ulen - 1, "", 1))
				return -EFAULT;
			return -ENOSPC;
		}
	}
	if (call->ua->to(attr->info.info, &info, len))
		return -EFAULT;
	attr->info.info_len = len;
	return BRT_PUT_ATTR(call, info.info_len);
}

int brt_cmd_obj_get_info(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	uint32_t ours, len = attr->info.info_len;
	char name[BRT_LINK_REC_NAME_MAX];
	struct brt_link_rec r;
	struct brt_obj *obj;
	int err;

	err = brt_obj_from_fd((int)attr->info.bpf_fd, 0, &obj);
	if (err && !brt_link_rec_of_fd((int)attr->info.bpf_fd, &r, name))
		return link_info(call, &r, name);
	if (err)
		return err;
	if (obj->kind == BRT_OBJ_PERF_RING) {
		/* a perf output ring stands for a perf event fd: not a bpf object */
		brt_obj_put(obj);
		return -EINVAL;
	}
	ours = obj->kind == BRT_OBJ_MAP ? sizeof(struct bpf_map_info) :
	       obj->kind == BRT_OBJ_BTF ? sizeof(struct bpf_btf_info) :
					  sizeof(struct bpf_prog_info);
	err = tail_zero(call, attr->info.info, ours, len);
	if (err)
		goto out_put;
	if (len > ours)
		len = ours;
	if (obj->kind == BRT_OBJ_MAP)
		err = map_info(call, brt_map_of(obj), len);
	else if (obj->kind == BRT_OBJ_BTF)
		err = brt_btf_info(call, obj, len);
	else
		err = prog_info(call, (struct brt_prog *)(void *)obj, len);
	if (!err) {
		attr->info.info_len = len;
		err = BRT_PUT_ATTR(call, info.info_len);
	}
out_put:
	brt_obj_put(obj);
	return err;
}

/* The kernel's struct bpf_prog is 96 bytes before its instructions (6.18 x86-64), and a
 * program's memlock is the pages that allocation takes (bpf_prog_show_fdinfo()). */
#define K_BPF_PROG 96ull

static int fdinfo_map(struct brt_map *map, char *buf, size_t size)
{
	const struct brt_obj_hdr *hdr = &map->obj.snap;
	char memlock[40] = "";
	uint64_t ml;

	/* "0x%x", not "%#x": the kernel's printf writes 0 as 0x0, glibc's as 0 */
	if (!brt_map_kernel_memlock(map, &ml))
		snprintf(memlock, sizeof(memlock), "memlock:\t%" PRIu64 "\n", ml);
	return snprintf(buf, size,
			"map_type:\t%u\nkey_size:\t%u\nvalue_size:\t%u\nmax_entries:\t%u\n"
			"map_flags:\t0x%x\nmap_extra:\t0x%" PRIx64 "\n%smap_id:\t%u\n"
			"frozen:\t%u\n",
			map->type, map->key_size, map->value_size, map->max_entries,
			map->flags & ~(uint32_t)(BPF_F_RDONLY | BPF_F_WRONLY),
			(uint64_t)hdr->map_extra, memlock, hdr->id,
			atomic_load_explicit(&map->obj.hdr->frozen, memory_order_acquire) ? 1u : 0u);
}

static int fdinfo_prog(struct brt_prog *prog, char *buf, size_t size)
{
	unsigned char tag[BPF_TAG_SIZE];
	char hex[2 * BPF_TAG_SIZE + 1];
	uint64_t bytes = K_BPF_PROG + 8ull * prog->insn_cnt;
	int jited;

	if (prog_tag(prog, tag))
		return -ENOMEM;
	for (int i = 0; i < BPF_TAG_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", tag[i]);
	jited = !brt_prog_materialise(prog) && prog->vm &&
		brt_vm_engine(prog->vm) == BPFRT_ENGINE_JIT;
	/* run statistics are not kept (the kernel's are 0 too until BPF_ENABLE_STATS) */
	return snprintf(buf, size,
			"prog_type:\t%u\nprog_jited:\t%u\nprog_tag:\t%s\nmemlock:\t%" PRIu64
			"\nprog_id:\t%u\nrun_time_ns:\t0\nrun_cnt:\t0\n"
			"recursion_misses:\t0\nverified_insns:\t%u\n",
			prog->type, jited ? 1u : 0u, hex, (bytes + 4095) / 4096 * 4096,
			prog->obj.snap.id, prog->verified_insns);
}

int bpfrt_obj_fdinfo(int fd, char *buf, size_t size)
{
	struct brt_obj *obj;
	int n, err = brt_obj_from_fd(fd, 0, &obj);

	if (err) {
		errno = -err;
		return err;
	}
	if (obj->kind == BRT_OBJ_MAP)
		n = fdinfo_map(brt_map_of(obj), buf, size);
	else if (obj->kind == BRT_OBJ_PROG)
		n = fdinfo_prog((struct brt_prog *)(void *)obj, buf, size);
	else
		n = -EINVAL; /* BTF and links have no bpf lines in the kernel's fdinfo */
	brt_obj_put(obj);
	if (n >= 0 && (size_t)n >= size)
		n = -ENOSPC;
	if (n < 0)
		errno = -n;
	return n;
}
