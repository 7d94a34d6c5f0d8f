/* prog_ref.c - how `bpfrt prog ...` names a program: `pinned PATH` or PATH (a program pinned
 * in $BPFRT_FS), or `OBJ NAME` (an eBPF ELF object, loaded here with only NAME's section,
 * so its source lines are known); plus the load of a whole object that `prog load` and
 * `object run` share. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "cli.h"
#include "elf/elf.h"
#include "isa/isa.h"
#include "maps/maps.h"

static int kernel_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

cli_bpf_fn cli_bpf_of(int kernel)
{
	return kernel ? kernel_bpf : bpfrt_bpf;
}

int cli_is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && !memcmp(magic, "\177ELF", 4);
}

int cli_parse_prog_type(const char *s, uint32_t *type, uint32_t *attach)
{
	uint32_t flags;

	*attach = 0;
	/* the SEC() names first ("xdp", "socket", "classifier"...), as bpftool does */
	if (!brt_elf_sec_type(s, type, attach, &flags) && *type)
		return 0;
	for (uint32_t t = 1; t < BRT_PROG_TYPE_COUNT; t++) {
		if (!strcmp(brt_prog_type_name(t), s)) {
			*type = t;
			return 0;
		}
	}
	return -1;
}

int cli_object_load(const char *path, const struct cli_load_opts *lo, struct bpfrt_object **out)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = lo->kernel, .log_level = lo->log_level,
		   .btf_custom_path = lo->btf);
	struct bpfrt_object *obj = bpfrt_object_open_file(path, &o);
	struct bpfrt_program *want = NULL, *p;
	int ret;

	*out = NULL;
	if (!obj)
		return cli_error("cannot open %s: %s", path, strerror(errno));
	if (lo->only) {
		want = bpfrt_object_find_program_by_name(obj, lo->only);
		if (!want) {
			bpfrt_object_close(obj);
			return cli_error("%s: no program '%s'", path, lo->only);
		}
	}
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		/* Programs of other sections may have types this build cannot load. */
		if (want)
			bpfrt_program_set_autoload(p, !strcmp(bpfrt_program_section_name(p),
							      bpfrt_program_section_name(want)));
		if (lo->type_default && bpfrt_program_type(p) != BPF_PROG_TYPE_UNSPEC)
			continue;
		if (lo->type)
			bpfrt_program_set_type(p, (enum bpf_prog_type)lo->type);
		if (lo->attach)
			bpfrt_program_set_expected_attach_type(p, (enum bpf_attach_type)lo->attach);
	}
	ret = bpfrt_object_load(obj);
	if (ret) {
		/* The failing step was printed already; the verifier log only on request. */
		if (lo->log_level)
			fprintf(stderr, "%s", bpfrt_object_log(obj));
		bpfrt_object_close(obj);
		return cli_error("cannot load %s: %s%s", path, strerror(-ret),
				 lo->log_level ? "" : " (--log-level 1 shows the verifier log)");
	}
	*out = obj;
	return 0;
}

/* A kernel fd says its kind in fdinfo; a bpfrt fd in its object header. */
static int is_prog(int fd, int kernel)
{
	struct brt_obj *obj;
	char path[64], line[256];
	FILE *f;
	int yes = 0;

	if (!kernel) {
		if (brt_obj_from_fd(fd, BRT_OBJ_PROG, &obj))
			return 0;
		brt_obj_put(obj);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!yes && fgets(line, sizeof(line), f))
		yes = !strncmp(line, "prog_type:", 10);
	fclose(f);
	return yes;
}

int cli_prog_open(int argc, char **argv, int *i, int kernel, struct cli_prog *out)
{
	const char *path;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->sys = cli_bpf_of(kernel);
	if (*i < argc && !strcmp(argv[*i], "pinned"))
		(*i)++;
	if (*i >= argc)
		return cli_error("prog: missing PROG (a pinned path, or an object file and a "
				 "program name)");
	path = argv[(*i)++];
	if (cli_is_elf(path)) {
		struct cli_load_opts lo = { .kernel = kernel };

		if (*i >= argc)
			return cli_error("prog: %s is an object file: name one of its programs",
					 path);
		lo.only = argv[(*i)++];
		if (cli_object_load(path, &lo, &out->obj))
			return 1;
		out->prog = bpfrt_object_find_program_by_name(out->obj, lo.only);
		out->fd = bpfrt_program_fd(out->prog);
		out->label = lo.only;
		return 0;
	}
	if (kernel) {
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.pathname = (uint64_t)(uintptr_t)path;
		out->fd = kernel_bpf(BPF_OBJ_GET, &attr, sizeof(attr));
	} else {
		out->fd = bpfrt_obj_get(path);
	}
	if (out->fd < 0)
		return cli_error("prog: %s: %s", path, strerror(errno));
	out->label = path;
	if (!is_prog(out->fd, kernel)) {
		cli_prog_close(out);
		return cli_error("prog: %s is not a program", path);
	}
	return 0;
}

void cli_prog_close(struct cli_prog *p)
{
	if (p->obj)
		bpfrt_object_close(p->obj);
	else if (p->fd >= 0)
		close(p->fd);
	p->obj = NULL;
	p->fd = -1;
}

int cli_prog_info(const struct cli_prog *p, struct bpf_prog_info *info)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)p->fd;
	attr.info.info_len = sizeof(*info);
	attr.info.info = (uint64_t)(uintptr_t)info;
	if (p->sys(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)))
		return cli_error("prog: %s: BPF_OBJ_GET_INFO_BY_FD: %s", p->label, strerror(errno));
	return 0;
}
