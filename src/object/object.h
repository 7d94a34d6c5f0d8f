/* object.h - the object/ folder's interface: the public handles of bpfrt/object.h over a
 * parsed object (elf/elf.h).  object.c opens and answers getters; load.c loads through
 * bpfrt_bpf() (or the kernel's bpf(2)), which is why this layer sits above api/.
 */
#ifndef BPFRT_SRC_OBJECT_OBJECT_H
#define BPFRT_SRC_OBJECT_OBJECT_H

#include <stdint.h>

#include "elf/elf.h"

struct bpfrt_program {
	struct bpfrt_object *obj; /* owner */
	struct brt_elf_prog *p;   /* parsed program */
	int fd;                   /* after load, else -1 */
	int autoload;             /* loaded by bpfrt_object_load() */
	uint32_t prog_flags;      /* BPF_PROG_LOAD prog_flags (bpfrt_program_set_flags()) */
	/* CO-RE relocations applied (brt_object_core_prog(): at load, or when the code is
	 * asked for), and whether one failed (-errno, 0: none): loading it is refused, as
	 * libbpf refuses it at load; the object still opens, since libbpf relocates only the
	 * programs it loads (autoload off: SEC("?..."), set_autoload) */
	int core_done;
	int core_err;
	/* a struct_ops program: the kernel's struct it implements a member of (its index is
	 * p->expected_attach_type), set at load from the struct_ops map naming it; 0: none */
	uint32_t attach_btf_id;
};

struct bpfrt_map {
	struct bpfrt_object *obj; /* owner */
	struct brt_elf_map *m;    /* parsed definition */
	int fd;                   /* after load, else -1 */
	struct bpfrt_map *inner;  /* bpfrt_map__inner_map()'s handle, made on first call */
	int no_create;            /* bpfrt_map__set_autocreate(map, 0) */
	int inner_fd1;            /* 1 + bpfrt_map__set_inner_map_fd()'s fd, 0 none */
	/* a struct_ops map at load: the kernel's value type (bpf_struct_ops_<name>), its size
	 * and the value libbpf would give the kernel at attach (members copied, function
	 * pointers zero: the kernel takes program fds there) */
	uint32_t st_value_id, st_value_size;
	void *st_value;
};

/* CO-RE relocations applied so far, by enum bpf_core_relo_kind (a kind past the last is
 * refused before it is counted). */
struct brt_core_stats {
	uint32_t applied[BPF_CORE_TYPE_MATCHES + 1];
	uint32_t poisoned; /* of those, instructions replaced by a bad call */
};

struct bpfrt_object {
	struct brt_elf_obj *elf;       /* parsed and linked object */
	struct bpfrt_program *progs;   /* one per elf->progs */
	struct bpfrt_map *maps;        /* one per elf->maps */
	char *pin_root;                /* directory for pinned maps */
	char *log;                     /* last load's messages, or NULL */
	int loaded;                    /* fds are live */
	int kernel;                    /* load through bpf(2), not bpfrt_bpf() */
	int btf_fd;                    /* .BTF loaded into the kernel during load, or -1 */
	uint32_t log_level;            /* verifier log level at load */
	uint32_t log_size;             /* verifier log buffer at load, bytes */
	struct brt_core_stats core_stats; /* CO-RE relocations applied so far */
	struct brt_object_core *core;  /* the target and candidates (core.c), or NULL */
};

/* Link program prog if not yet (the open links nothing, as libbpf's; its load, its code,
 * count or lines ask for it): 0, or its -errno after printing the message a failed open
 * printed before linking moved here (later calls: the errno alone). */
int brt_object_prog_link(struct bpfrt_object *obj, struct bpfrt_program *prog);

/* At open: the target of the object's CO-RE relocations, btf_path, read now (NULL: the
 * running kernel's vmlinux BTF, parsed once per process, found at the first program
 * relocated).  0, or -errno after printing why (the object must then be refused).  Each
 * program is linked and relocated later, once, by
 * brt_object_core_prog(): an object of many programs (Tracee's 171, 34,753 relocations)
 * whose user loads a few pays for those few, as libbpf relocates only what it loads. */
int brt_object_core(struct bpfrt_object *obj, const char *btf_path);
/* Link (brt_object_prog_link()) and relocate one program if not done yet: its link's
 * -errno, or its core_err (0, or -errno after printing why). */
int brt_object_core_prog(struct bpfrt_object *obj, struct bpfrt_program *prog);
/* Every program, in order (what the open did before relocation became lazy): -ENOMEM or 0
 * (a program's own failure is its core_err). */
int brt_object_core_all(struct bpfrt_object *obj);
void brt_object_core_free(struct bpfrt_object *obj);

/* The whole file in one malloc'ed buffer sized from fstat (*out, *len), or -errno: a big
 * file read through stdio with a growing buffer spent more time copying than parsing
 * (vmlinux's 5.5 MB, Tracee's 15 MB object). */
int brt_object_read_file(const char *path, void **out, size_t *len);

/* Close the fds of a loaded object and mark it unloaded. */
void brt_object_unload(struct bpfrt_object *obj);

#endif
