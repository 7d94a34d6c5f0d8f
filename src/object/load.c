/* load.c - bpfrt_object_load(): maps created (or reused from their pin), global data
 * written and .rodata frozen, each lddw map reference given its map's fd, programs loaded,
 * then prog-array and map-in-map slots filled.  Everything goes through one bpf(2)-shaped
 * function - bpfrt_bpf(), or the kernel's syscall when the object was opened with
 * .kernel = 1 - so the same relocated object can be compared on both.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "btf/btf.h"
#include "isa/isa.h"
#include "maps/maps.h"
#include "object/object.h"
#include "util/util.h"


static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

typedef int (*bpf_fn)(int cmd, union bpf_attr *attr, unsigned int size);

static bpf_fn sys_of(const struct bpfrt_object *obj)
{
	return obj->kernel ? kernel_bpf : bpfrt_bpf;
}

/* Append to the object's log (kept for bpfrt_object_log()) and warn through print. */
static void logf_obj(struct bpfrt_object *obj, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_obj(struct bpfrt_object *obj, const char *fmt, ...)
{
	size_t old = obj->log ? strlen(obj->log) : 0;
	char line[1024];
	va_list ap;
	char *n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	brt_print(BPFRT_WARN, "%s", line);
	n = realloc(obj->log, old + strlen(line) + 1);
	if (!n)
		return;
	memcpy(n + old, line, strlen(line) + 1);
	obj->log = n;
}

static void log_append_raw(struct bpfrt_object *obj, const char *text)
{
	size_t old = obj->log ? strlen(obj->log) : 0, add = strlen(text);
	char *n = realloc(obj->log, old + add + 2);

	if (!n)
		return;
	memcpy(n + old, text, add);
	n[old + add] = add && text[add - 1] != '\n' ? '\n' : 0;
	n[old + add + 1] = 0;
	obj->log = n;
}

/* Kernel object names: at most 15 characters of [A-Za-z0-9_.]. */
static void obj_name(char dst[BPF_OBJ_NAME_LEN], const char *src)
{
	size_t n = 0;

	for (; *src && n < BPF_OBJ_NAME_LEN - 1; src++) {
		char c = *src;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '.')
			dst[n++] = c;
	}
	dst[n] = 0;
}

/* The name a map is created with.  Global data (.data*, .rodata*, .bss*, .kconfig) gets
 * libbpf's name for it, which the kernel then shows (bpftool, the verifier log's
 * map=NAME): the section's name after as much of the object's name (its file's base name
 * up to the first '.') as fits in 15 characters with at least 7 kept for the section, or
 * the section's name alone (cut to 15) when it has a second '.' (.rodata.config), any
 * character the kernel refuses as '_'.  Other maps: their own name, such characters
 * left out. */
static void map_name(const struct bpfrt_object *obj, const struct brt_elf_map *m,
		     char dst[BPF_OBJ_NAME_LEN])
{
	const char *file, *sec = m->name;
	size_t pfx, sfx, n;

	if (m->kind != BRT_ELF_MAP_DATA && m->kind != BRT_ELF_MAP_RODATA &&
	    m->kind != BRT_ELF_MAP_BSS && strcmp(sec, ".kconfig")) {
		obj_name(dst, sec);
		return;
	}
	file = strrchr(obj->elf->name, '/') ? strrchr(obj->elf->name, '/') + 1 : obj->elf->name;
	sfx = strlen(sec) > 7 ? strlen(sec) : 7;
	if (sfx > BPF_OBJ_NAME_LEN - 1)
		sfx = BPF_OBJ_NAME_LEN - 1;
	pfx = strcspn(file, ".");
	if (strchr(sec + 1, '.'))
		pfx = 0;
	else if (pfx > BPF_OBJ_NAME_LEN - 1 - sfx)
		pfx = BPF_OBJ_NAME_LEN - 1 - sfx;
	snprintf(dst, BPF_OBJ_NAME_LEN, "%.*s%.*s", (int)pfx, file, (int)sfx, sec);
	for (n = 0; dst[n]; n++)
		if (!isalnum((unsigned char)dst[n]) && dst[n] != '_' && dst[n] != '.')
			dst[n] = '_';
}

/* Does MAP_CREATE refuse this map's key and value BTF?  The kernel does for the types
 * that take none (map_check_no_btf(): ENOTSUPP; sockmaps, perf event and cgroup arrays,
 * stack traces, maps of maps, dev, cpu and xsk maps) and, EINVAL, for a type without a
 * map_check_btf given no key type (queue, stack): the type's ops say which (maps.h enum
 * brt_map_btf_kind).  Such maps get none from the start, as libbpf's loader makes them
 * (bpf_object__create_map()): a refused create of a sockmap costs the kernel ~25 ms
 * before the retry without BTF (test_sockmap_listen: 66 ms against libbpf's 0.5). */
static bool takes_no_btf(const struct brt_elf_map *m)
{
	int kind = brt_map_type_btf(m->type);

	return kind == BRT_MAP_BTF_NONE || (kind == BRT_MAP_BTF_KEYED && !m->btf_key_type_id);
}

static int create_one(struct bpfrt_object *obj, const struct brt_elf_map *m, int inner_fd)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = m->type;
	attr.key_size = m->key_size;
	attr.value_size = m->value_size;
	attr.max_entries = m->max_entries;
	/* libbpf's rule: a perf event array without a size gets a slot per possible CPU */
	if (m->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && !attr.max_entries)
		attr.max_entries = (uint32_t)bpfrt_num_possible_cpus();
	attr.map_flags = m->map_flags;
	attr.numa_node = m->numa_node;
	attr.map_extra = m->map_extra;
	attr.inner_map_fd = inner_fd > 0 ? (uint32_t)inner_fd : 0;
	map_name(obj, m, attr.map_name);
	/* the map's types for `map dump`; like libbpf, a map whose BTF is refused is still
	 * made, without it */
	if (obj->btf_fd >= 0 && m->btf_value_type_id && !takes_no_btf(m)) {
		attr.btf_fd = (uint32_t)obj->btf_fd;
		attr.btf_key_type_id = m->btf_key_type_id;
		attr.btf_value_type_id = m->btf_value_type_id;
		fd = sys_of(obj)(BPF_MAP_CREATE, &attr, sizeof(attr));
		if (fd >= 0)
			return fd;
		attr.btf_fd = attr.btf_key_type_id = attr.btf_value_type_id = 0;
	}
	fd = sys_of(obj)(BPF_MAP_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static int map_update(struct bpfrt_object *obj, int fd, const void *key, const void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)key;
	attr.value = (uint64_t)(uintptr_t)value;
	attr.flags = BPF_ANY;
	return sys_of(obj)(BPF_MAP_UPDATE_ELEM, &attr, sizeof(attr)) ? -errno : 0;
}

/* <pin root>/NAME, or <pin root>/<pin_dir>/NAME for tc's PIN_GLOBAL_NS / PIN_OBJECT_NS
 * ("tc/globals"), whose directories are made as tc makes them. */
static int pin_path(struct bpfrt_object *obj, const struct brt_elf_map *m, char *buf,
		    size_t len)
{
	size_t used;
	int n;

	if (!m->pin_dir) {
		n = snprintf(buf, len, "%s/%s", obj->pin_root, m->name);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	n = snprintf(buf, len, "%s/%s", obj->pin_root, m->pin_dir);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;

		*p = 0;
		if (mkdir(buf, 0700) && errno != EEXIST) {
			logf_obj(obj, "map '%s': cannot create %s: %s\n", m->name, buf,
				 strerror(errno));
			return -errno;
		}
		*p = c;
		if (!c)
			break;
	}
	used = strlen(buf);
	n = snprintf(buf + used, len - used, "/%s", m->name);
	return n < 0 || (size_t)n >= len - used ? -ENAMETOOLONG : 0;
}

/* LIBBPF_PIN_BY_NAME: reuse the pinned map if there is one, else pin the new one. */
static int obj_get(struct bpfrt_object *obj, const char *path)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	fd = sys_of(obj)(BPF_OBJ_GET, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static int obj_pin(struct bpfrt_object *obj, int fd, const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	attr.bpf_fd = (uint32_t)fd;
	return sys_of(obj)(BPF_OBJ_PIN, &attr, sizeof(attr)) ? -errno : 0;
}

/* A struct_ops map (libbpf's bpf_map__init_kern_struct_ops()): the struct the kernel
 * registered under the local struct's name, each local member matched by name to the
 * kernel's; a function pointer makes its program implement that member (attach_btf_id,
 * expected_attach_type), other members are copied into the kernel's value.  libbpf's
 * messages and errnos. */
static int prepare_struct_ops(struct bpfrt_object *obj, struct bpfrt_map *map)
{
	const struct brt_btf *btf = obj->elf->btf, *vml = brt_btf_vmlinux();
	const struct brt_elf_map *m = map->m;
	const struct btf_type *lt = btf ? brt_btf_type(btf, m->btf_value_type_id) : NULL;
	const struct btf_member *lm, *km;
	const char *raw = btf ? brt_btf_name(btf, m->btf_value_type_id) : "";
	struct brt_struct_ops st;
	uint32_t data_off = 0;
	char tname[128];

	snprintf(tname, sizeof(tname), "%.*s", (int)brt_core_essential_len(raw), raw);
	/* ESRCH: libbpf >= 1.4's find_ksym_btf_id(), after vmlinux and every module's BTF
	 * (1.2 and 1.3 answered ENOENT; 1.1 ignores .struct_ops.link and leaves it to the
	 * kernel's ENOTSUPP for a program without a struct: docs/CORPUS.md) */
	if (!lt || brt_struct_ops_by_name(vml, tname, &st)) {
		logf_obj(obj, "struct_ops init_kern: struct %s is not found in kernel BTF\n", tname);
		return -ESRCH;
	}
	km = (const struct btf_member *)(st.value + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(st.value->info); i++)
		if (!strcmp(brt_btf_str(vml, km[i].name_off), "data"))
			data_off = km[i].offset / 8;
	free(map->st_value);
	map->st_value = calloc(1, st.value->size);
	if (!map->st_value)
		return -ENOMEM;
	map->st_value_id = st.value_id;
	map->st_value_size = st.value->size;
	lm = (const struct btf_member *)(lt + 1);
	km = (const struct btf_member *)(st.type + 1);
	for (uint32_t i = 0; i < BTF_INFO_VLEN(lt->info); i++) {
		const char *mname = brt_btf_str(btf, lm[i].name_off);
		uint32_t moff = lm[i].offset / 8, k, kidx = UINT32_MAX;
		uint64_t lsz = 0, ksz = 0;
		int prog = -1, nonzero = 0;

		if (!mname)
			continue;
		for (k = 0; k < BTF_INFO_VLEN(st.type->info); k++)
			if (!strcmp(brt_btf_str(vml, km[k].name_off), mname)) {
				kidx = k;
				break;
			}
		for (size_t s = 0; s < m->nslots; s++)
			if (m->slots[s].index == moff)
				prog = m->slots[s].target;
		if (brt_btf_resolve_size(btf, lm[i].type, &lsz))
			lsz = 0;
		for (uint64_t b = 0; b < lsz && moff + b < m->value_size; b++)
			nonzero |= m->data[moff + b];
		if (kidx == UINT32_MAX) {
			if (!nonzero && prog < 0)
				continue; /* a member this kernel lacks, left unset */
			logf_obj(obj, "struct_ops init_kern %s: Cannot find member %s in kernel "
				 "BTF\n", m->name, mname);
			return -EOPNOTSUPP;
		}
		if (brt_btf_func_ptr_proto(btf, lm[i].type)) {
			if (prog < 0)
				continue;
			if (!brt_btf_func_ptr_proto(vml, km[kidx].type)) {
				logf_obj(obj, "struct_ops init_kern %s: kernel member %s is not a func "
					 "ptr\n", m->name, mname);
				return -EOPNOTSUPP;
			}
			obj->progs[prog].attach_btf_id = st.type_id;
			obj->progs[prog].p->expected_attach_type = kidx;
			continue;
		}
		if (brt_btf_resolve_size(vml, km[kidx].type, &ksz) || ksz != lsz) {
			logf_obj(obj, "struct_ops init_kern %s: Error in size of member %s: %llu != "
				 "%llu(kernel)\n", m->name, mname, (unsigned long long)lsz,
				 (unsigned long long)ksz);
			return -EOPNOTSUPP;
		}
		if (data_off + km[kidx].offset / 8 + lsz <= st.value->size &&
		    moff + lsz <= m->value_size)
			memcpy((char *)map->st_value + data_off + km[kidx].offset / 8,
			       m->data + moff, lsz);
	}
	return 0;
}

/* MAP_CREATE of a struct_ops map as libbpf makes it: the kernel's value type and size, the
 * object's BTF (the kernel wants one), one entry.  The value is written only at attach,
 * where the kernel registers the struct (bpfrt cannot: see STATUS #15). */
static int create_struct_ops(struct bpfrt_object *obj, struct bpfrt_map *map)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_STRUCT_OPS;
	attr.key_size = 4;
	attr.value_size = map->st_value_size;
	attr.max_entries = 1;
	attr.map_flags = map->m->map_flags;
	attr.btf_vmlinux_value_type_id = map->st_value_id;
	attr.btf_fd = obj->btf_fd >= 0 ? (uint32_t)obj->btf_fd : 0;
	obj_name(attr.map_name, map->m->name);
	fd = sys_of(obj)(BPF_MAP_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static int create_map(struct bpfrt_object *obj, struct bpfrt_map *map)
{
	const struct brt_elf_map *m = map->m;
	char path[512];
	int inner_fd = -1, fd, ret;

	if (m->kind == BRT_ELF_MAP_STRUCT_OPS) {
		ret = prepare_struct_ops(obj, map);
		fd = ret ? ret : create_struct_ops(obj, map);
		if (fd < 0) {
			if (!ret)
				logf_obj(obj, "map '%s': BPF_MAP_CREATE (type %s, key 4, value %u, "
					 "max_entries 1, flags 0x%x): %s\n", m->name,
					 brt_map_type_name(m->type), map->st_value_size, m->map_flags,
					 strerror(-fd));
			return fd;
		}
		map->fd = fd;
		return 0;
	}

	if (m->pinning) {
		if ((ret = pin_path(obj, m, path, sizeof(path))))
			return ret;
		fd = obj_get(obj, path);
		if (fd >= 0) {
			map->fd = fd;
			return 0;
		}
		if (fd != -ENOENT) {
			logf_obj(obj, "map '%s': cannot open pin %s: %s\n", m->name, path,
				 strerror(-fd));
			return fd;
		}
	}
	if (m->inner) {
		inner_fd = create_one(obj, m->inner, -1);
		if (inner_fd < 0) {
			logf_obj(obj, "map '%s': inner map template: %s\n", m->name,
				 strerror(-inner_fd));
			return inner_fd;
		}
	}
	/* legacy formats: the inner map is another map of the object, made first */
	fd = create_one(obj, m, m->inner ? inner_fd : map->inner_fd1 ? map->inner_fd1 - 1 :
			m->inner_ref ? obj->maps[m->inner_ref - 1].fd : -1);
	if (inner_fd >= 0)
		close(inner_fd);
	if (fd < 0) {
		logf_obj(obj, "map '%s': BPF_MAP_CREATE (type %s, key %u, value %u, max_entries %u, "
			 "flags 0x%x): %s\n", m->name, brt_map_type_name(m->type), m->key_size,
			 m->value_size, m->max_entries, m->map_flags, strerror(-fd));
		return fd;
	}
	map->fd = fd;
	if (m->data) {
		uint32_t zero = 0;

		if ((ret = map_update(obj, fd, &zero, m->data))) {
			logf_obj(obj, "map '%s': writing initial data: %s\n", m->name, strerror(-ret));
			return ret;
		}
	}
	if (m->kind == BRT_ELF_MAP_RODATA) {
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (uint32_t)fd;
		if (sys_of(obj)(BPF_MAP_FREEZE, &attr, sizeof(attr))) {
			ret = -errno;
			logf_obj(obj, "map '%s': BPF_MAP_FREEZE: %s\n", m->name, strerror(-ret));
			return ret;
		}
	}
	if (m->pinning && (ret = obj_pin(obj, fd, path))) {
		logf_obj(obj, "map '%s': cannot pin at %s: %s\n", m->name, path, strerror(-ret));
		return ret;
	}
	return 0;
}

/* The object's .BTF into the kernel or bpfrt, so func_info and line_info can go with the
 * programs (callbacks and global functions need them; the log shows source lines).  Failure is not fatal: programs that need
 * no BTF still load, as with libbpf. */
static void load_btf(struct bpfrt_object *obj)
{
	char log[4096] = "";
	union bpf_attr attr;
	size_t len;
	void *raw;

	obj->btf_fd = -1;
	if (!obj->elf->btf || brt_btf_raw(obj->elf->btf, &raw, &len))
		return;
	memset(&attr, 0, sizeof(attr));
	attr.btf = (uint64_t)(uintptr_t)raw;
	attr.btf_size = (uint32_t)len;
	/* without a log first, as libbpf: the kernel's log of a big BTF (Cilium's) overflows
	 * any small buffer, and an overflowed log fails the load with ENOSPC */
	obj->btf_fd = sys_of(obj)(BPF_BTF_LOAD, &attr, sizeof(attr));
	if (obj->btf_fd < 0) {
		/* again with a log, for the reason */
		attr.btf_log_buf = (uint64_t)(uintptr_t)log;
		attr.btf_log_size = sizeof(log);
		attr.btf_log_level = 1;
		obj->btf_fd = sys_of(obj)(BPF_BTF_LOAD, &attr, sizeof(attr));
	}
	if (obj->btf_fd < 0)
		brt_print(BPFRT_INFO, "elf: %s: BPF_BTF_LOAD: %s; loading without BTF\n%s",
			  obj->elf->name, strerror(errno), log);
	free(raw);
}

/* Line info in the kernel's form: one record per instruction, strictly increasing. */
static struct bpf_line_info *line_info(const struct brt_elf_prog *p, uint32_t *cnt)
{
	struct bpf_line_info *li = calloc(p->nlines ? p->nlines : 1, sizeof(*li));
	uint32_t n = 0;

	if (!li)
		return NULL;
	for (size_t i = 0; i < p->nlines; i++) {
		const struct brt_elf_line *l = &p->lines[i];

		if (n && li[n - 1].insn_off == l->insn_idx)
			continue;
		li[n++] = (struct bpf_line_info){ .insn_off = l->insn_idx,
						  .file_name_off = l->file_off,
						  .line_off = l->src_off,
						  .line_col = (l->line << 10) | (l->col & 0x3ff) };
	}
	*cnt = n;
	return li;
}

static int prog_load(struct bpfrt_object *obj, const struct bpfrt_program *prog,
		     const struct bpf_insn *insns, uint32_t attach_btf_id, char *log,
		     uint32_t log_size)
{
	const struct brt_elf_prog *p = prog->p;
	struct bpf_line_info *li = NULL;
	union bpf_attr attr;
	uint32_t nli = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = p->type;
	attr.expected_attach_type = p->expected_attach_type;
	attr.attach_btf_id = attach_btf_id;
	attr.prog_flags = prog->prog_flags;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = (uint32_t)p->insn_cnt;
	attr.license = (uint64_t)(uintptr_t)obj->elf->license;
	attr.kern_version = obj->elf->kern_version;
	obj_name(attr.prog_name, p->name);
	if (log) {
		log[0] = 0;
		attr.log_buf = (uint64_t)(uintptr_t)log;
		attr.log_size = log_size;
		attr.log_level = obj->log_level ? obj->log_level : 1;
	}
	if (obj->btf_fd >= 0 && p->nfunc_info) {
		attr.prog_btf_fd = (uint32_t)obj->btf_fd;
		attr.func_info = (uint64_t)(uintptr_t)p->func_info;
		attr.func_info_cnt = (uint32_t)p->nfunc_info;
		attr.func_info_rec_size = sizeof(*p->func_info);
		li = line_info(p, &nli);
		if (li && nli && li[0].insn_off == 0) {
			attr.line_info = (uint64_t)(uintptr_t)li;
			attr.line_info_cnt = nli;
			attr.line_info_rec_size = sizeof(*li);
		}
	}
	fd = sys_of(obj)(BPF_PROG_LOAD, &attr, sizeof(attr));
	fd = fd < 0 ? -errno : fd;
	free(li);
	return fd;
}

/* libbpf's poison for an instruction loading a map that was not created
 * (bpf_map__set_autocreate(map, false)): the 16-byte load becomes two calls of this base
 * plus the map's index, which the verifier refuses only if it reaches them. */
#define POISON_MAP_BASE 2001000000

/* Copy of the program with every map reference holding its map's fd. */
static struct bpf_insn *patched(const struct bpfrt_object *obj, const struct brt_elf_prog *p)
{
	struct bpf_insn *insns = malloc(p->insn_cnt * sizeof(*insns));

	if (!insns)
		return NULL;
	memcpy(insns, p->insns, p->insn_cnt * sizeof(*insns));
	for (size_t r = 0; r < p->nrelocs; r++) {
		const struct brt_elf_reloc *rl = &p->relocs[r];

		if ((rl->kind == BRT_ELF_RELO_MAP_FD || rl->kind == BRT_ELF_RELO_MAP_VALUE) &&
		    obj->maps[rl->target].no_create && rl->insn_idx + 1 < p->insn_cnt) {
			for (int k = 0; k < 2; k++)
				insns[rl->insn_idx + k] = (struct bpf_insn){
					.code = BPF_JMP | BPF_CALL,
					.imm = POISON_MAP_BASE + (int32_t)rl->target };
		} else if (rl->kind == BRT_ELF_RELO_MAP_FD || rl->kind == BRT_ELF_RELO_MAP_VALUE) {
			insns[rl->insn_idx].imm = obj->maps[rl->target].fd;
		}
	}
	return insns;
}

/* libbpf's rewrite of the verifier's complaint about a poisoned CO-RE instruction:
 *   N: (85) call unknown#195896080
 *   invalid func unknown#195896080
 * becomes
 *   N: <invalid CO-RE relocation>
 *   failed to resolve CO-RE relocation <spec of the record at N>
 * (in place; the log buffer is obj->log_size bytes). */
static void fixup_core_log(const struct bpfrt_object *obj, const struct brt_elf_prog *p,
			   char *log)
{
	static const char call[] = ": (85) call unknown#195896080\n",
			  inval[] = "invalid func unknown#195896080\n";
	char *at = strstr(log, call), *line, *end;
	char desc[256], patch[512];
	unsigned long idx;
	size_t n, tail;

	if (!at || strncmp(at + sizeof(call) - 1, inval, sizeof(inval) - 1))
		return;
	for (line = at; line > log && line[-1] != '\n'; line--)
		;
	idx = strtoul(line, NULL, 10);
	for (n = 0; n < p->ncores && p->cores[n].insn_idx != idx; n++)
		;
	if (n == p->ncores)
		return;
	brt_core_describe(obj->elf->btf, p->cores[n].rec, desc, sizeof(desc));
	snprintf(patch, sizeof(patch), "%lu: <invalid CO-RE relocation>\n"
		 "failed to resolve CO-RE relocation %s\n", idx, desc);
	end = at + sizeof(call) - 1 + sizeof(inval) - 1;
	tail = strlen(end);
	if ((size_t)(line - log) + strlen(patch) + tail + 1 > obj->log_size)
		return;
	memmove(line + strlen(patch), end, tail + 1);
	memcpy(line, patch, strlen(patch));
}

/* libbpf's rewrite of the complaint about a poisoned map load (patched()):
 *   N: (85) call unknown#2001000003
 *   invalid func unknown#2001000003
 * becomes
 *   N: <invalid BPF map reference>
 *   BPF map 'NAME' is referenced but wasn't created
 * (in place, as fixup_core_log()). */
static void fixup_map_log(const struct bpfrt_object *obj, char *log)
{
	static const char inval[] = "\ninvalid func unknown#";
	char *at = strstr(log, inval), *line, *end, patch[256];
	unsigned long idx, code, code2;
	size_t tail;

	if (!at)
		return;
	code = strtoul(at + sizeof(inval) - 1, &end, 10);
	if (*end != '\n' || code < POISON_MAP_BASE || code - POISON_MAP_BASE >= obj->elf->nmaps)
		return;
	end++;
	for (line = at; line > log && line[-1] != '\n'; line--)
		;
	if (sscanf(line, "%lu: (%*d) call unknown#%lu", &idx, &code2) != 2 || code2 != code)
		return;
	snprintf(patch, sizeof(patch), "%lu: <invalid BPF map reference>\n"
		 "BPF map '%s' is referenced but wasn't created\n", idx,
		 obj->maps[code - POISON_MAP_BASE].m->name);
	tail = strlen(end);
	if ((size_t)(line - log) + strlen(patch) + tail + 1 > obj->log_size)
		return;
	memmove(line + strlen(patch), end, tail + 1);
	memcpy(line, patch, strlen(patch));
}

static int load_prog(struct bpfrt_object *obj, struct bpfrt_program *prog)
{
	const struct brt_elf_prog *p = prog->p;
	struct bpf_insn *insns;
	uint32_t btf_id = 0;
	char *log = NULL;
	int fd;

	if (p->type == BPF_PROG_TYPE_UNSPEC) {
		logf_obj(obj, "prog '%s': section '%s' names no program type; set one with "
			 "bpfrt_program_set_type()\n", p->name, p->sec_name);
		return -EINVAL;
	}
	if (brt_prog_type_has(p->type, BRT_PT_BTF) && p->type != BPF_PROG_TYPE_STRUCT_OPS &&
	    p->type != BPF_PROG_TYPE_EXT) {
		/* the kernel function, tracepoint or iterator named after the section's '/',
		 * found in the kernel's BTF as libbpf finds it */
		const char *slash = strchr(p->sec_name, '/');
		int id = slash ? brt_btf_attach_id(brt_btf_vmlinux(), p->type,
						   p->expected_attach_type, slash + 1)
			       : -ESRCH;

		if (id < 0) {
			logf_obj(obj, "prog '%s': failed to find kernel BTF type ID of '%s': %s\n",
				 p->name, slash ? slash + 1 : p->sec_name, strerror(-id));
			return -ESRCH;
		}
		btf_id = (uint32_t)id;
	}
	if (p->type == BPF_PROG_TYPE_STRUCT_OPS)
		btf_id = prog->attach_btf_id;
	insns = patched(obj, p);
	if (!insns)
		return -ENOMEM;
	/* Without a log first, like libbpf: a log costs time; ask for it only on failure. */
	if (obj->log_level) {
		log = malloc(obj->log_size);
		fd = log ? prog_load(obj, prog, insns, btf_id, log, obj->log_size) : -ENOMEM;
	} else {
		fd = prog_load(obj, prog, insns, btf_id, NULL, 0);
		if (fd < 0 && fd != -ENOMEM) {
			log = malloc(obj->log_size);
			if (log)
				fd = prog_load(obj, prog, insns, btf_id, log, obj->log_size);
		}
	}
	if (fd < 0)
		logf_obj(obj, "prog '%s' (section '%s', type %s): BPF_PROG_LOAD: %s\n", p->name,
			 p->sec_name, brt_prog_type_name(p->type), strerror(-fd));
	if (log && log[0]) {
		if (fd < 0 && p->ncores)
			fixup_core_log(obj, p, log);
		if (fd < 0)
			fixup_map_log(obj, log);
		log_append_raw(obj, log);
	}
	free(log);
	free(insns);
	if (fd >= 0)
		prog->fd = fd;
	return fd < 0 ? fd : 0;
}

static int fill_slots(struct bpfrt_object *obj, struct bpfrt_map *map)
{
	const struct brt_elf_map *m = map->m;

	if (map->no_create) /* left out: nothing to fill */
		return 0;
	for (size_t s = 0; s < m->nslots; s++) {
		uint32_t key = m->slots[s].index;
		int32_t val;

		/* a struct of operations gets its programs at attach, as with libbpf */
		if (m->type == BPF_MAP_TYPE_STRUCT_OPS)
			return 0;
		val = m->type == BPF_MAP_TYPE_PROG_ARRAY ?
				      obj->progs[m->slots[s].target].fd :
				      obj->maps[m->slots[s].target].fd;
		int ret;

		/* A program left out by autoload leaves its slot empty. */
		if (val < 0)
			continue;
		ret = map_update(obj, map->fd, &key, &val);

		if (ret) {
			logf_obj(obj, "map '%s': setting entry %u: %s\n", m->name, key,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int fd_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close the n fds of fds (sorted here; each the object's own, so no other thread can hold
 * one of their numbers): a run of consecutive numbers in one close_range(), as an object's
 * maps and programs were created one after another (syncsnoop: 11 closes -> 1). */
static void close_fds(int *fds, size_t n)
{
	qsort(fds, n, sizeof(*fds), fd_cmp);
	for (size_t i = 0; i < n;) {
		size_t e = i + 1;

		while (e < n && fds[e] <= fds[e - 1] + 1) /* a number twice: closed once */
			e++;
		if (e - i < 2 || syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[e - 1], 0))
			for (size_t k = i; k < e; k++)
				if (k == i || fds[k] != fds[k - 1])
					close(fds[k]);
		i = e;
	}
}

/* fd, one of the object's, to close with the others (fds NULL: at once) */
static void add_fd(int *fds, size_t *nfd, int fd)
{
	if (fds)
		fds[*nfd] = fd;
	else
		close(fd);
	++*nfd;
}

void brt_object_unload(struct bpfrt_object *obj)
{
	size_t nfd = 0, cap = obj->elf->nprogs + obj->elf->nmaps + 1;
	int small[64], *fds = cap <= 64 ? small : malloc(cap * sizeof(*fds));

	for (size_t i = 0; i < obj->elf->nprogs; i++) {
		if (obj->progs[i].fd >= 0)
			add_fd(fds, &nfd, obj->progs[i].fd);
		obj->progs[i].fd = -1;
	}
	for (size_t i = 0; i < obj->elf->nmaps; i++) {
		if (obj->maps[i].fd >= 0)
			add_fd(fds, &nfd, obj->maps[i].fd);
		obj->maps[i].fd = -1;
	}
	if (obj->btf_fd >= 0)
		add_fd(fds, &nfd, obj->btf_fd);
	obj->btf_fd = -1;
	if (fds && nfd)
		close_fds(fds, nfd);
	if (fds != small)
		free(fds);
	obj->loaded = 0;
	/* the object's own teardown, now (whatever the user still holds stays) */
	if (nfd && !obj->kernel)
		brt_api_closed();
}

int bpfrt_object_load(struct bpfrt_object *obj)
{
	int ret = 0;

	if (!obj) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (obj->loaded) {
		errno = EBUSY;
		return -EBUSY;
	}
	/* the programs to load linked, then relocated (CO-RE), in order, before anything is
	 * created: libbpf links and relocates at load what it loads, and so does bpfrt since
	 * session 17 (a program that cannot be linked fails the load with the message and
	 * errno that failed the open before) */
	for (size_t i = 0; i < obj->elf->nprogs; i++)
		if (obj->progs[i].autoload && (ret = brt_object_prog_link(obj, &obj->progs[i]))) {
			errno = -ret;
			return ret;
		}
	for (size_t i = 0; i < obj->elf->nprogs; i++)
		if (obj->progs[i].autoload && brt_object_core_prog(obj, &obj->progs[i])) {
			brt_print(BPFRT_WARN, "libbpfrt: prog '%s': failed to relocate CO-RE "
				  "(see above): not loaded unrelocated\n", obj->progs[i].p->name);
			errno = -obj->progs[i].core_err;
			return obj->progs[i].core_err;
		}
	free(obj->log);
	obj->log = NULL;
	/* one batch for the whole object: what bpfrt_bpf() would do per map and program
	 * but cannot change within this call (api.h) is done once */
	if (!obj->kernel)
		brt_api_batch_begin();
	load_btf(obj);
	/* maps naming another map as their inner map after all others */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < obj->elf->nmaps && !ret; i++)
			if (!obj->maps[i].m->inner_ref == !pass && !obj->maps[i].no_create)
				ret = create_map(obj, &obj->maps[i]);
	for (size_t i = 0; i < obj->elf->nprogs && !ret; i++)
		if (obj->progs[i].autoload)
			ret = load_prog(obj, &obj->progs[i]);
	for (size_t i = 0; i < obj->elf->nmaps && !ret; i++)
		ret = fill_slots(obj, &obj->maps[i]);
	/* before the unload below closes the batch's fds */
	if (!obj->kernel)
		brt_api_batch_end();
	if (ret) {
		brt_object_unload(obj);
		errno = -ret;
		return ret;
	}
	obj->loaded = 1;
	return 0;
}
