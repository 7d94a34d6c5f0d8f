/* object.c - the public object API (bpfrt/object.h) over the parsed object of elf.h:
 * opening from a file or memory, iteration, lookups and getters.  Loading through bpf()
 * lives in load.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "object/object.h"
#include "util/util.h"

/* Bytes of struct bpfrt_object_open_opts this build knows. */
#define OPEN_OPTS_KNOWN                                                             \
	(offsetof(struct bpfrt_object_open_opts, bpfrt_object_open_opts__last) +     \
	 sizeof(((struct bpfrt_object_open_opts *)0)->bpfrt_object_open_opts__last))

static struct bpfrt_object *set_errno_null(int err)
{
	errno = err;
	return NULL;
}

static int neg_errno(int ret)
{
	errno = -ret;
	return ret;
}

/* Open from buf (size bytes; the caller's) or, with buf NULL, from the file open at fd.
 * Programs are linked on first need (brt_object_prog_link()), as libbpf links at load. */
static struct bpfrt_object *open_obj(const void *buf, int fd, size_t size,
				     const struct bpfrt_object_open_opts *opts)
{
	const char *name = BRT_OPTS_GET(opts, object_name, NULL);
	const char *pin = BRT_OPTS_GET(opts, pin_root_path, NULL);
	struct bpfrt_object *obj;
	char err[512];
	int ret;

	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return set_errno_null(ENOMEM);
	name = name ? name : "<memory>";
	ret = buf || fd < 0 ? brt_elf_open_mem(buf, size, name, BRT_ELF_LAZY, &obj->elf, err,
					       sizeof(err))
			    : brt_elf_open_fd(fd, size, name, BRT_ELF_LAZY, &obj->elf, err,
					      sizeof(err));
	if (ret) {
		brt_print(BPFRT_WARN, "%s\n", err);
		free(obj);
		return set_errno_null(-ret);
	}
	obj->progs = calloc(obj->elf->nprogs + 1, sizeof(*obj->progs));
	obj->maps = calloc(obj->elf->nmaps + 1, sizeof(*obj->maps));
	obj->kernel = BRT_OPTS_GET(opts, kernel, 0);
	obj->btf_fd = -1;
	obj->log_level = BRT_OPTS_GET(opts, log_level, 0);
	obj->log_size = BRT_OPTS_GET(opts, log_size, 0);
	if (!obj->log_size)
		obj->log_size = 4u << 20;
	if (!pin)
		pin = obj->kernel ? "/sys/fs/bpf" : getenv("BPFRT_FS");
	obj->pin_root = strdup(pin ? pin : "/dev/shm/bpfrt");
	if (!obj->progs || !obj->maps || !obj->pin_root) {
		bpfrt_object_close(obj);
		return set_errno_null(ENOMEM);
	}
	for (size_t i = 0; i < obj->elf->nprogs; i++)
		obj->progs[i] = (struct bpfrt_program){
			.obj = obj, .p = &obj->elf->progs[i], .fd = -1,
			.autoload = !obj->elf->progs[i].no_autoload,
			.prog_flags = obj->elf->progs[i].prog_flags };
	for (size_t i = 0; i < obj->elf->nmaps; i++)
		obj->maps[i] = (struct bpfrt_map){ .obj = obj, .m = &obj->elf->maps[i], .fd = -1 };
	ret = brt_object_core(obj, BRT_OPTS_GET(opts, btf_custom_path, NULL));
	if (ret) {
		bpfrt_object_close(obj);
		return set_errno_null(-ret);
	}
	return obj;
}

struct bpfrt_object *bpfrt_object_open_mem(const void *buf, size_t size,
					   const struct bpfrt_object_open_opts *opts)
{
	if (!brt_opts_valid(opts, OPEN_OPTS_KNOWN, "bpfrt_object_open_opts") ||
	    (!buf && size))
		return set_errno_null(EINVAL);
	return open_obj(buf, -1, size, opts);
}

struct bpfrt_object *bpfrt_object_open_file(const char *path,
					    const struct bpfrt_object_open_opts *opts)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o) };
	struct bpfrt_object *obj;
	void *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd, err = 0;

	if (!path || !brt_opts_valid(opts, OPEN_OPTS_KNOWN, "bpfrt_object_open_opts"))
		return set_errno_null(EINVAL);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		err = -errno;
	/* a regular file is read section by section (not its debug info); anything else
	 * (a pipe) whole */
	else if (!S_ISREG(st.st_mode))
		err = brt_object_read_file(path, &buf, &len);
	if (err) {
		if (fd >= 0)
			close(fd);
		brt_print(BPFRT_WARN, "elf: %s: %s\n", path, strerror(-err));
		return set_errno_null(-err);
	}
	o.object_name = BRT_OPTS_GET(opts, object_name, NULL);
	if (!o.object_name)
		o.object_name = path;
	o.pin_root_path = BRT_OPTS_GET(opts, pin_root_path, NULL);
	o.log_level = BRT_OPTS_GET(opts, log_level, 0);
	o.kernel = BRT_OPTS_GET(opts, kernel, 0);
	o.btf_custom_path = BRT_OPTS_GET(opts, btf_custom_path, NULL);
	o.log_size = BRT_OPTS_GET(opts, log_size, 0);
	obj = buf ? open_obj(buf, -1, len, &o) : open_obj(NULL, fd, (size_t)st.st_size, &o);
	err = errno;
	close(fd);
	free(buf);
	errno = err;
	return obj;
}

void bpfrt_object_close(struct bpfrt_object *obj)
{
	if (!obj)
		return;
	brt_object_unload(obj);
	free(obj->progs);
	for (size_t i = 0; obj->maps && i < obj->elf->nmaps; i++) {
		free(obj->maps[i].inner);
		free(obj->maps[i].st_value);
	}
	free(obj->maps);
	free(obj->pin_root);
	free(obj->log);
	brt_object_core_free(obj);
	brt_elf_free(obj->elf);
	free(obj);
}

const char *bpfrt_object_name(const struct bpfrt_object *obj)
{
	return obj->elf->name;
}

const char *bpfrt_object_license(const struct bpfrt_object *obj)
{
	return obj->elf->license;
}

uint32_t bpfrt_object_kversion(const struct bpfrt_object *obj)
{
	return obj->elf->kern_version;
}

const char *bpfrt_object_log(const struct bpfrt_object *obj)
{
	return obj->log ? obj->log : "";
}

struct bpfrt_program *bpfrt_object_next_program(const struct bpfrt_object *obj,
						const struct bpfrt_program *prev)
{
	size_t i = prev ? (size_t)(prev - obj->progs) + 1 : 0;

	return i < obj->elf->nprogs ? &obj->progs[i] : NULL;
}

struct bpfrt_map *bpfrt_object_next_map(const struct bpfrt_object *obj,
					const struct bpfrt_map *prev)
{
	size_t i = prev ? (size_t)(prev - obj->maps) + 1 : 0;

	return i < obj->elf->nmaps ? &obj->maps[i] : NULL;
}

struct bpfrt_program *bpfrt_object_find_program_by_name(const struct bpfrt_object *obj,
							const char *name)
{
	for (size_t i = 0; name && i < obj->elf->nprogs; i++)
		if (!strcmp(obj->elf->progs[i].name, name))
			return &obj->progs[i];
	errno = ENOENT;
	return NULL;
}

struct bpfrt_map *bpfrt_object_find_map_by_name(const struct bpfrt_object *obj, const char *name)
{
	for (size_t i = 0; name && i < obj->elf->nmaps; i++)
		if (!strcmp(obj->elf->maps[i].name, name))
			return &obj->maps[i];
	errno = ENOENT;
	return NULL;
}

const char *bpfrt_program_name(const struct bpfrt_program *prog)
{
	return prog->p->name;
}

const char *bpfrt_program_section_name(const struct bpfrt_program *prog)
{
	return prog->p->sec_name;
}

enum bpf_prog_type bpfrt_program_type(const struct bpfrt_program *prog)
{
	return (enum bpf_prog_type)prog->p->type;
}

enum bpf_attach_type bpfrt_program_expected_attach_type(const struct bpfrt_program *prog)
{
	return (enum bpf_attach_type)prog->p->expected_attach_type;
}

const struct bpf_insn *bpfrt_program_insns(const struct bpfrt_program *prog)
{
	/* the code shown is the relocated code: CO-RE is applied on first need (the handle
	 * is the object's own, never const storage) */
	struct bpfrt_program *p = (struct bpfrt_program *)(uintptr_t)prog;
	int ret = brt_object_core_prog(p->obj, p);

	if (!prog->p->insns)
		errno = ret < 0 ? -ret : EINVAL; /* its link failed */
	return prog->p->insns;
}

size_t bpfrt_program_insn_cnt(const struct bpfrt_program *prog)
{
	/* linked on first need, as the code is (CO-RE changes no count) */
	brt_object_prog_link(prog->obj, (struct bpfrt_program *)(uintptr_t)prog);
	return prog->p->insn_cnt;
}

int bpfrt_program_set_type(struct bpfrt_program *prog, enum bpf_prog_type type)
{
	if (prog->obj->loaded)
		return neg_errno(-EBUSY);
	prog->p->type = type;
	return 0;
}

int bpfrt_program_set_expected_attach_type(struct bpfrt_program *prog, enum bpf_attach_type type)
{
	if (prog->obj->loaded)
		return neg_errno(-EBUSY);
	prog->p->expected_attach_type = type;
	return 0;
}

int bpfrt_program_set_autoload(struct bpfrt_program *prog, int autoload)
{
	if (prog->obj->loaded)
		return neg_errno(-EBUSY);
	prog->autoload = !!autoload;
	return 0;
}

int bpfrt_program_autoload(const struct bpfrt_program *prog)
{
	return prog->autoload;
}

int bpfrt_program_set_flags(struct bpfrt_program *prog, uint32_t flags)
{
	if (prog->obj->loaded)
		return neg_errno(-EBUSY);
	prog->prog_flags = flags;
	return 0;
}

uint32_t bpfrt_program_flags(const struct bpfrt_program *prog)
{
	return prog->prog_flags;
}

int bpfrt_program_fd(const struct bpfrt_program *prog)
{
	return prog->fd;
}

const char *bpfrt_program_line(const struct bpfrt_program *prog, size_t insn_idx,
			       const char **file, uint32_t *line)
{
	const struct brt_elf_line *l;

	brt_object_prog_link(prog->obj, (struct bpfrt_program *)(uintptr_t)prog);
	l = brt_elf_prog_line(prog->p, insn_idx);
	if (!l)
		return NULL;
	if (file)
		*file = l->file;
	if (line)
		*line = l->line;
	return l->src;
}

const char *bpfrt_map__name(const struct bpfrt_map *map)
{
	return map->m->name;
}

enum bpf_map_type bpfrt_map__type(const struct bpfrt_map *map)
{
	return (enum bpf_map_type)map->m->type;
}

uint32_t bpfrt_map__key_size(const struct bpfrt_map *map)
{
	return map->m->key_size;
}

uint32_t bpfrt_map__value_size(const struct bpfrt_map *map)
{
	return map->m->value_size;
}

uint32_t bpfrt_map__max_entries(const struct bpfrt_map *map)
{
	return map->m->max_entries;
}

uint32_t bpfrt_map__flags(const struct bpfrt_map *map)
{
	return map->m->map_flags;
}

const void *bpfrt_map__initial_value(const struct bpfrt_map *map, size_t *size)
{
	if (size)
		*size = map->m->data ? map->m->value_size : 0;
	return map->m->data;
}

int bpfrt_map__set_initial_value(struct bpfrt_map *map, const void *data, size_t size)
{
	struct brt_elf_map *m = map->m;
	uint8_t *copy;

	if (map->obj->loaded)
		return neg_errno(-EBUSY);
	if (m->kind != BRT_ELF_MAP_DATA && m->kind != BRT_ELF_MAP_RODATA &&
	    m->kind != BRT_ELF_MAP_BSS)
		return neg_errno(-EINVAL);
	if (size != m->value_size || !data)
		return neg_errno(-EINVAL);
	copy = malloc(size ? size : 1);
	if (!copy)
		return neg_errno(-ENOMEM);
	memcpy(copy, data, size);
	free(m->data);
	m->data = copy;
	return 0;
}

int bpfrt_map__set_max_entries(struct bpfrt_map *map, uint32_t max_entries)
{
	if (map->obj->loaded)
		return neg_errno(-EBUSY);
	map->m->max_entries = brt_elf_map_size(map->m->type, max_entries);
	return 0;
}

/* (global data maps keep the size of their section: their initial value is that size) */
static int set_size(struct bpfrt_map *map, uint32_t *field, uint32_t size)
{
	struct brt_elf_map *m = map->m;

	if (map->obj->loaded)
		return neg_errno(-EBUSY);
	if (m->kind == BRT_ELF_MAP_DATA || m->kind == BRT_ELF_MAP_RODATA ||
	    m->kind == BRT_ELF_MAP_BSS)
		return neg_errno(-EINVAL);
	*field = size;
	return 0;
}

int bpfrt_map__set_key_size(struct bpfrt_map *map, uint32_t size)
{
	return set_size(map, &map->m->key_size, size);
}

int bpfrt_map__set_value_size(struct bpfrt_map *map, uint32_t size)
{
	return set_size(map, &map->m->value_size, size);
}

int bpfrt_map__set_autocreate(struct bpfrt_map *map, int autocreate)
{
	if (map->obj->loaded)
		return neg_errno(-EBUSY);
	map->no_create = !autocreate;
	return 0;
}

int bpfrt_map__autocreate(const struct bpfrt_map *map)
{
	return !map->no_create;
}

int bpfrt_map__set_inner_map_fd(struct bpfrt_map *map, int fd)
{
	if (map->obj->loaded)
		return neg_errno(-EBUSY);
	if (fd < 0 || map->m->inner || (map->m->type != BPF_MAP_TYPE_ARRAY_OF_MAPS &&
					map->m->type != BPF_MAP_TYPE_HASH_OF_MAPS))
		return neg_errno(-EINVAL);
	map->inner_fd1 = fd + 1;
	return 0;
}

struct bpfrt_map *bpfrt_map__inner_map(struct bpfrt_map *map)
{
	if (!map->m->inner) {
		errno = EINVAL;
		return NULL;
	}
	if (!map->inner) {
		map->inner = malloc(sizeof(*map->inner));
		if (!map->inner) {
			errno = ENOMEM;
			return NULL;
		}
		*map->inner = (struct bpfrt_map){ .obj = map->obj, .m = map->m->inner, .fd = -1 };
	}
	return map->inner;
}

int bpfrt_map__fd(const struct bpfrt_map *map)
{
	return map->fd;
}
