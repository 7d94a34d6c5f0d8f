/* sample_attach.h - the user side the packet samples share, as the kernel's samples share
 * bpf_load.c: find NAME.bpf.o next to the program, open and load it with libbpfrt, look up
 * its program and map by name, and attach the program to an interface.  Header-only, for
 * programs that include <bpfrt.h>.
 */
#ifndef BPFRT_SAMPLES_SAMPLE_ATTACH_H
#define BPFRT_SAMPLES_SAMPLE_ATTACH_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpfrt.h>

struct sample {
	const char *name;           /* "sock_example": messages and the default object */
	struct bpfrt_object *obj;
	struct bpfrt_map *map;
	int link_fd;                /* the program on the interface until closed */
};

/* Load obj_path (NULL: NAME.bpf.o in the program's directory, where the build puts it),
 * attach its program prog_name to iface and find its map map_name.  0, or 1 with the
 * reason printed and nothing left open. */
static inline int sample_attach(struct sample *s, const char *obj_path, const char *prog_name,
				const char *map_name, const char *iface)
{
	char path[PATH_MAX], err[256];
	struct bpfrt_program *prog;
	ssize_t n;

	if (!obj_path) {
		n = readlink("/proc/self/exe", path, sizeof(path) - strlen(s->name) - 8);
		path[n > 0 ? n : 0] = '\0';
		snprintf(strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
			 sizeof(path) - (size_t)(n > 0 ? n : 0), "%s.bpf.o", s->name);
		obj_path = path;
	}
	s->obj = bpfrt_object_open_file(obj_path, NULL);
	if (!s->obj) {
		fprintf(stderr, "%s: %s: %s\n", s->name, obj_path, strerror(errno));
		return 1;
	}
	if (bpfrt_object_load(s->obj)) {
		fprintf(stderr, "%s: loading %s: %s\n", s->name, obj_path, bpfrt_object_log(s->obj));
		goto fail;
	}
	prog = bpfrt_object_find_program_by_name(s->obj, prog_name);
	s->map = bpfrt_object_find_map_by_name(s->obj, map_name);
	if (!prog || !s->map) {
		fprintf(stderr, "%s: %s: no program %s or map %s\n", s->name, obj_path, prog_name,
			map_name);
		goto fail;
	}
	/* the seed: sock = open_raw_sock(iface); setsockopt(sock, SO_ATTACH_BPF, &prog_fd) */
	s->link_fd = bpfrt_prog_attach_iface(bpfrt_program_fd(prog), iface, NULL, err,
					     sizeof(err));
	if (s->link_fd < 0) {
		fprintf(stderr, "%s: %s\n", s->name, err);
		goto fail;
	}
	return 0;
fail:
	bpfrt_object_close(s->obj);
	s->obj = NULL;
	return 1;
}

/* Detach and close everything. */
static inline void sample_detach(struct sample *s)
{
	close(s->link_fd); /* the last copy: detaches */
	bpfrt_object_close(s->obj);
}

#endif
