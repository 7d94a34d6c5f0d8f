/* bpfrt/object.h - eBPF objects as `clang -target bpf -c` writes them: open an ELF file
 * (programs by SEC() name, maps legacy and BTF-defined, global data, bpf-to-bpf calls),
 * inspect it, load it (maps created, references patched, programs loaded), use the fds.
 * Included by <bpfrt.h>; not meant to be included on its own.
 */
#ifndef BPFRT_OBJECT_H
#define BPFRT_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bpfrt_object;  /* an opened object file */
struct bpfrt_program; /* one program (entry function) of an object; owned by it */
struct bpfrt_map;     /* one map of an object, including global data; owned by it */

struct bpfrt_object_open_opts {
	size_t sz;                 /* sizeof(struct bpfrt_object_open_opts) */
	const char *object_name;   /* name in messages; default: the path, or "<memory>" */
	const char *pin_root_path; /* directory for LIBBPF_PIN_BY_NAME maps; default
				    * $BPFRT_FS or /dev/shm/bpfrt (bpfrt's bpffs), or
				    * /sys/fs/bpf with .kernel */
	uint32_t log_level;        /* verifier log level at load; 0: a level-1 log is
				    * fetched only when a program fails to load */
	int kernel;                /* non-zero: load maps and programs into the running
				    * kernel with the real bpf(2) instead of bpfrt_bpf() */
	const char *btf_custom_path; /* target BTF for CO-RE relocations (a raw BTF file,
				      * as /sys/kernel/btf/vmlinux, or an ELF file's .BTF
				      * section, as a vmlinux image's); default: the running
				      * kernel's /sys/kernel/btf/vmlinux */
	uint32_t log_size;         /* bytes of the verifier log buffer at load (0: 4 MiB);
				    * a log that does not fit fails the load with ENOSPC,
				    * as the kernel's does */
	uint32_t reserved;         /* zero; see BPFRT_OPTS() */
};
#define bpfrt_object_open_opts__last log_size

/* Open and parse an eBPF ELF object: sections, symbols, relocation records, maps, .BTF
 * and the layout of .BTF.ext are read and checked here; section names give program types
 * (libbpf's SEC() conventions).  Debug sections are not read.  Each program is linked
 * on first need - its load, bpfrt_program_insns(), _insn_cnt() or _line() - as libbpf
 * links and relocates at load what it loads: subprograms are appended to each program
 * that calls them, map references become lddw BPF_PSEUDO_MAP_FD / BPF_PSEUDO_MAP_VALUE
 * instructions, and CO-RE relocations (.BTF.ext records written by BPF_CORE_READ() and
 * the bpf_core_*() builtins) are applied with libbpf's rules against the target BTF
 * (btf_custom_path, read at open: a bad one refuses the object; or the running kernel's,
 * found at the first relocation): an unresolved field read is poisoned as libbpf does (a
 * call to helper 0xbad2310, refused by the verifier only if reached); a relocation that
 * cannot be applied at all is named then (program, instruction, relocation) and refuses
 * that program's load in bpfrt_object_load() (EINVAL, or ESRCH when no target BTF is
 * available) unless it is set autoload off.  What linking refuses (a call outside any
 * function, an lddw naming no map, a bad .BTF.ext line record, a CO-RE record off an
 * instruction) is reported when the program is first linked, with the message and errno
 * the open gave until session 17: bpfrt_object_load() fails with it, _insns() returns
 * NULL with errno set; a kernel symbol (__ksym) the running kernel lacks still fails
 * the whole object, at its first link (libbpf resolves externs for the whole object).
 * Nothing touches the bpf() layer until bpfrt_object_load().  opts may be NULL.
 * Returns the object, or NULL with errno set: EINVAL (malformed or unsupported input; the
 * message, naming section and offset, goes to the print callback), ENOTSUP (a construct
 * bpfrt does not support), ENOMEM, or the errno of open/read for
 * bpfrt_object_open_file(). */
BPFRT_API struct bpfrt_object *bpfrt_object_open_file(const char *path,
						      const struct bpfrt_object_open_opts *opts);
/* The same from a buffer (copied; buf may be freed on return). */
BPFRT_API struct bpfrt_object *bpfrt_object_open_mem(const void *buf, size_t size,
						     const struct bpfrt_object_open_opts *opts);
/* Load the object: create every map (a LIBBPF_PIN_BY_NAME map is reused from its pin when
 * one exists, else pinned after creation), write global data and freeze .rodata, give
 * each map reference its map's fd, load every program whose autoload is on with
 * BPF_PROG_LOAD, then fill prog-array and map-in-map entries from the object.  All of it
 * goes through bpfrt_bpf() (or bpf(2) with the .kernel open option).  On failure
 * everything created is closed again and the reason, with the verifier log, is in
 * bpfrt_object_log().  Returns 0 or -errno (errno set): EBUSY (already loaded), the
 * errno of the failing bpf() command (EACCES: verifier rejection; EINVAL: e.g. a program
 * without a type), ENOMEM. */
BPFRT_API int bpfrt_object_load(struct bpfrt_object *obj);

/* Close the program and map fds of a loaded object and free it.  NULL is ignored. */
BPFRT_API void bpfrt_object_close(struct bpfrt_object *obj);

/* Object name (see open opts), license string ("" if none) and "version" section (0). */
BPFRT_API const char *bpfrt_object_name(const struct bpfrt_object *obj);
BPFRT_API const char *bpfrt_object_license(const struct bpfrt_object *obj);
BPFRT_API uint32_t bpfrt_object_kversion(const struct bpfrt_object *obj);
/* The last load's log: the failing step's message and the verifier log; "" when none.
 * Valid until the next load or close. */
BPFRT_API const char *bpfrt_object_log(const struct bpfrt_object *obj);

/* Iteration in file order: pass NULL for the first; returns NULL after the last. */
BPFRT_API struct bpfrt_program *bpfrt_object_next_program(const struct bpfrt_object *obj,
							  const struct bpfrt_program *prev);
BPFRT_API struct bpfrt_map *bpfrt_object_next_map(const struct bpfrt_object *obj,
						  const struct bpfrt_map *prev);
/* Lookup by function name / map name (global data maps are named by their section,
 * ".data", ".rodata", ".bss", ".rodata.str1.1").  NULL with errno ENOENT when absent. */
BPFRT_API struct bpfrt_program *bpfrt_object_find_program_by_name(const struct bpfrt_object *obj,
								  const char *name);
BPFRT_API struct bpfrt_map *bpfrt_object_find_map_by_name(const struct bpfrt_object *obj,
							  const char *name);

/* Program properties.  The instructions are the linked, relocated code (map references
 * hold map indexes before load and fds after). */
BPFRT_API const char *bpfrt_program_name(const struct bpfrt_program *prog);
BPFRT_API const char *bpfrt_program_section_name(const struct bpfrt_program *prog);
BPFRT_API enum bpf_prog_type bpfrt_program_type(const struct bpfrt_program *prog);
BPFRT_API enum bpf_attach_type bpfrt_program_expected_attach_type(const struct bpfrt_program *prog);
BPFRT_API const struct bpf_insn *bpfrt_program_insns(const struct bpfrt_program *prog);
BPFRT_API size_t bpfrt_program_insn_cnt(const struct bpfrt_program *prog);
/* Override the type derived from the section name; before load only (-EBUSY after). */
BPFRT_API int bpfrt_program_set_type(struct bpfrt_program *prog, enum bpf_prog_type type);
BPFRT_API int bpfrt_program_set_expected_attach_type(struct bpfrt_program *prog,
						     enum bpf_attach_type type);
/* Whether bpfrt_object_load() loads this program (default on); before load only. */
BPFRT_API int bpfrt_program_set_autoload(struct bpfrt_program *prog, int autoload);
BPFRT_API int bpfrt_program_autoload(const struct bpfrt_program *prog);
/* BPF_PROG_LOAD prog_flags of this program (default 0): BPF_F_*, BPFRT_F_PRIV_*, the
 * engine as BPFRT_F_ENGINE(); before load only (-EBUSY after). */
BPFRT_API int bpfrt_program_set_flags(struct bpfrt_program *prog, uint32_t flags);
BPFRT_API uint32_t bpfrt_program_flags(const struct bpfrt_program *prog);
/* Program fd after a successful load, else -1. */
BPFRT_API int bpfrt_program_fd(const struct bpfrt_program *prog);
/* Source location of instruction insn_idx from .BTF.ext: sets *file and *line and returns
 * the source line's text, or NULL when unknown. */
BPFRT_API const char *bpfrt_program_line(const struct bpfrt_program *prog, size_t insn_idx,
					 const char **file, uint32_t *line);

/* Map properties, as defined in the object.  Calls on a struct bpfrt_map are named
 * bpfrt_map__*, as libbpf names its bpf_map__* getters, to keep them apart from the fd
 * calls of bpfrt/bpf.h (bpfrt_map_lookup_elem(), ...), which take the fd bpfrt_map__fd()
 * returns. */
BPFRT_API const char *bpfrt_map__name(const struct bpfrt_map *map);
BPFRT_API enum bpf_map_type bpfrt_map__type(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map__key_size(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map__value_size(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map__max_entries(const struct bpfrt_map *map);
BPFRT_API uint32_t bpfrt_map__flags(const struct bpfrt_map *map);
/* Initial contents of a global data map (value_size bytes) and its size, or of a
 * struct_ops map (the object's struct); NULL for other maps and for .bss (all zero). */
BPFRT_API const void *bpfrt_map__initial_value(const struct bpfrt_map *map, size_t *size);
/* Replace the initial contents of a global data map before load (e.g. to configure
 * `const volatile` variables in .rodata).  size must equal the value size.  0, -EINVAL,
 * -EBUSY after load, -ENOMEM. */
BPFRT_API int bpfrt_map__set_initial_value(struct bpfrt_map *map, const void *data,
					  size_t size);
/* Map fd after a successful load, else -1. */
/* Size of the map before bpfrt_object_load(), as libbpf's bpf_map__set_max_entries(): for
 * maps whose definition leaves it to user space (max_entries 0).  0 or -EBUSY (loaded). */
BPFRT_API int bpfrt_map__set_max_entries(struct bpfrt_map *map, uint32_t max_entries);
/* Key and value sizes before bpfrt_object_load(), as libbpf's bpf_map__set_key_size() and
 * bpf_map__set_value_size(): for loaders that complete a definition (cilium/ebpf gives a
 * perf event array without sizes 4-byte keys and values).  0, -EBUSY (loaded) or -EINVAL
 * (a global data map: .data, .rodata, .bss keep their section's size). */
BPFRT_API int bpfrt_map__set_key_size(struct bpfrt_map *map, uint32_t size);
BPFRT_API int bpfrt_map__set_value_size(struct bpfrt_map *map, uint32_t size);
/* The inner map template of a map of maps declared with BTF (__array(values, ...)), as
 * libbpf's bpf_map__inner_map(): to size an inner map whose definition leaves the size to
 * user space (a ring buffer of max_entries 0) before load.  Owned by the object; NULL
 * with errno EINVAL for other maps. */
BPFRT_API struct bpfrt_map *bpfrt_map__inner_map(struct bpfrt_map *map);
/* Whether bpfrt_object_load() creates the map (default yes), as libbpf's
 * bpf_map__set_autocreate(): a loader leaves out a map of a type the kernel lacks (Tracee's
 * for an arena).  An instruction loading a map left out becomes libbpf's poison (two calls
 * of unknown#2001000000 + the map's index): dead code passes, a reachable one is refused
 * and the log says "BPF map 'NAME' is referenced but wasn't created".  0 or -EBUSY
 * (loaded). */
BPFRT_API int bpfrt_map__set_autocreate(struct bpfrt_map *map, int autocreate);
BPFRT_API int bpfrt_map__autocreate(const struct bpfrt_map *map);
/* The inner map of a map of maps whose definition has no template (a legacy or BTF map
 * without __array(values, ...)), as libbpf's bpf_map__set_inner_map_fd(): an fd of the
 * loader's side (a kernel map with .kernel), used at load to create the outer map and not
 * closed.  0, -EINVAL (not a map of maps, or it has its template), -EBUSY (loaded). */
BPFRT_API int bpfrt_map__set_inner_map_fd(struct bpfrt_map *map, int fd);
BPFRT_API int bpfrt_map__fd(const struct bpfrt_map *map);

#ifdef __cplusplus
}
#endif

#endif
