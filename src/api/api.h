/* api.h - the api/ folder's interface: the bpf() command handlers (rows of cmds.def),
 * attribute checks and the copies to and from the caller's memory.  The entry point and
 * its theory of operation are in bpf.c.
 */
#ifndef BPFRT_SRC_API_API_H
#define BPFRT_SRC_API_API_H

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <linux/bpf.h>

#include "bpfrt.h"

#include "maps/maps.h"

/* How a command reaches the caller's memory.  bpfrt_bpf() checks every pointer (a bad one
 * is EFAULT, as in the kernel); the libbpf-style wrappers trust theirs and copy directly. */
struct brt_uaccess {
	int (*from)(void *dst, uint64_t src, size_t len); /* 0 or -EFAULT */
	int (*to)(uint64_t dst, const void *src, size_t len);
	/* NUL-terminated string of at most cap bytes: its length, -EFAULT, -ENAMETOOLONG */
	int (*str)(char *dst, uint64_t src, size_t cap);
};

extern const struct brt_uaccess brt_uaccess_checked;
extern const struct brt_uaccess brt_uaccess_trusted;

/* One bpf() call: the attr copy, where the caller's attr is (for commands that write
 * results back into it) and how to reach caller memory. */
struct brt_call {
	union bpf_attr *attr;
	uint64_t uattr;
	unsigned int size;
	/* bytes at attr: BRT_ATTR_SIZE from bpfrt_bpf(), which reads Linux 6.18's fields this
	 * libc's union lacks; 0 is sizeof(union bpf_attr) (lib.c's wrappers) */
	unsigned int attr_len;
	const struct brt_uaccess *ua;
	/* BPF_PROG_TEST_RUN from bpfrt_prog_test_run_opts(): each run's budget (struct
	 * brt_run_opts); 0 from the raw bpfrt_bpf(), which has no field for it */
	uint64_t run_budget;
	uint64_t run_budget_ns;
};

struct bpfrt_vm;
struct brt_region;
struct brt_map;

struct brt_vline;

/* A program's line_info checked against its BTF (btf_load.c): lines[] point into the
 * referenced BTF object's strings. */
struct brt_prog_lines {
	struct brt_obj *btf;      /* referenced BTF object */
	struct brt_vline *lines;  /* sorted by insn_off */
	uint32_t n;
	uint8_t *linkage;         /* func_info: BTF linkage of each function, or NULL */
	uint32_t nfuncs;
	/* func_info: each function's BTF_KIND_FUNC id in types (the BTF object's), for the
	 * verifier's global functions; NULL when the load had no func_info */
	uint32_t *func_ids;
	uint32_t *func_offs;      /* func_info: each function's first instruction */
	/* the BTF the strings of lines point into (OBJ_GET_INFO_BY_FD gives their offsets
	 * back), set whenever func_info or line_info was given */
	const struct brt_btf *types;
};

/* PROG_LOAD's prog_btf_fd, func_info and line_info, checked as the kernel does (messages
 * into log); *out gets the lines and the functions' linkage (NULL when there is neither).
 * 0 or -errno. */
int brt_prog_btf_check(struct brt_call *call, const struct bpf_insn *insns, char *log,
		       uint32_t log_size, struct brt_prog_lines **out);
void brt_prog_lines_free(struct brt_prog_lines *l);
/* MAP_CREATE's btf_fd, btf_key_type_id and btf_value_type_id checked as the kernel's
 * map_check_btf() does for sizes and a struct bpf_spin_lock in the value; on success *out
 * holds the BTF object's id and blob, 1 + the lock's offset (0: none) and a reference to
 * drop (brt_obj_put(out->ref)). */
int brt_map_btf_check(const union bpf_attr *attr, struct brt_map_btf *out);
/* The BTF the verifier checks programs using map m against: a private copy (the file's
 * copy is shared with every process that can write the file), made once per process and
 * map and kept with the map; for a map this process did not create, copied from the
 * file with one read and checked as BTF_LOAD and MAP_CREATE check it, its value's fields
 * equal to those the map runs with (its header as first read).  0 and *out (valid while
 * m is held), -ENOENT (no copy: no BTF, or one too big to keep), -EINVAL (the copy is
 * not the map's: rewritten), -ENOMEM. */
int brt_map_btf_snap(struct brt_map *m, struct brt_btf_snap **out);
/* The snapshot's blob parsed, once for every map that shares it (the verifier's view of a
 * map's BTF, kept until the snapshot goes), or NULL when it does not parse. */
const struct brt_btf *brt_btf_snap_btf(struct brt_btf_snap *s);
/* OBJ_GET_INFO_BY_FD of a BTF fd: struct bpf_btf_info of len bytes. */
int brt_btf_info(struct brt_call *call, struct brt_obj *obj, uint32_t len);
/* A new BTF object with this id (0: a new one) from a blob checked as BTF_LOAD checks
 * it: its fd or -errno (ids.c re-creates a map's BTF from the map's copy). */
int brt_btf_new_fd(const void *blob, uint32_t size, uint32_t id);
/* The kernel's own BTF (/sys/kernel/btf/vmlinux) as a BTF object with id 1, named
 * "vmlinux" and kernel_btf set in its info, as the kernel shows it: its fd or -errno. */
int brt_btf_vmlinux_fd(void);

/* A loaded program as this process holds it (the object's file holds its original
 * instructions and header). */
struct brt_prog {
	struct brt_obj obj;        /* first: a program is an object */
	struct brt_prog_maps pm;   /* maps its instructions name (referenced); run user */
	struct bpfrt_vm *vm;       /* rewritten instructions, ready to run */
	uint32_t type;             /* BPF_PROG_TYPE_* */
	uint32_t expected_attach_type;
	uint32_t insn_cnt;
	/* map table entries and linkage bytes of the file: the shared header's, validated
	 * once when the file is first seen and never read again (another process may
	 * rewrite the header; docs/MEMORY_MODEL.md) */
	uint32_t nmaps;
	uint32_t nfuncs;
	uint32_t max_ctx_offset;   /* highest ctx byte accessed + 1 (tracing attach checks) */
	uint32_t verified_insns;   /* the verifier's processed insns (bpf_prog_info) */
	struct brt_prog_lines *lines; /* source lines from line_info, or NULL */
	/* what the verifier found per stored insn (insn_cnt entries each, built with vm and
	 * pm): BRT_INSN_* flags, and pm index + 1 of the one map a helper call is passed (0:
	 * none or several); the kernel's xlated view is made from them (xlated.c) */
	uint8_t *xflags;
	uint16_t *xmap;
	uint32_t xpriv;            /* enum brt_priv it was verified with */
	/* bpf_loop calls the kernel inlines: 1 + the callback's first insn (insn_cnt
	 * entries), or NULL when there are none; the subprograms' stack depths */
	uint32_t *xloop;
	uint32_t *xstack;
	uint32_t nxstack;
	/* vm and pm are built (at load, or from the file on first use in this process:
	 * brt_prog_materialise()); set with release after them */
	_Atomic int ready;
	/* programs from another process: the most privilege re-verification may use, from
	 * who owns the file (brt_prog_file_max_priv()); BRT_PRIV_ROOT for our own loads */
	uint32_t max_priv;
};

/* Build the vm of a program loaded by another process from its file (maps re-opened,
 * instructions re-verified at the privilege they were loaded with); no-op when ready.
 * 0 or -errno (-ENOENT: a map it uses cannot be found any more). */
int brt_prog_materialise(struct brt_prog *prog);

/* ---- program files (prog_file.c) -------------------------------------------------------
 * A program's file holds its instructions with every map reference as
 * BPF_PSEUDO_MAP_IDX[_VALUE] and an index into the map table that follows them, so any
 * process can rebuild it.  Pinning a program also links the files of its maps into
 * the pinning user's $BPFRT_FS/.bpfrt-maps[.<uid>]/, so they outlive the processes
 * that had them open, for as long as
 * a pinned program names them. */
struct brt_prog_mapref {
	uint32_t id;          /* the map's header id */
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;
	uint64_t ino;         /* the map file's inode: with id, the name of its link */
};

uint64_t brt_prog_file_data_size(uint32_t insn_cnt, uint32_t nmaps, uint32_t nfuncs);
/* Write the stored instructions, the map table of pm (in index order) and the functions'
 * linkage from func_info (nfuncs bytes, the verifier needs them for callbacks). */
void brt_prog_file_write(struct brt_obj *obj, const struct bpf_insn *stored, uint32_t n,
			 const struct brt_prog_maps *pm, const uint8_t *linkage, uint32_t nfuncs);
/* The linkage bytes (prog->nfuncs of them). */
const uint8_t *brt_prog_file_linkage(const struct brt_prog *prog);
/* Sizes of a program file from anywhere, in hdr (a private snapshot of its shared
 * header: the caller uses what was checked, never the header again): 0 or -EINVAL. */
int brt_prog_file_check(const struct brt_obj_hdr *hdr, uint64_t file_size);
/* The program's BTF with its func_info and line_info, kept after the instructions so
 * other processes have them: the tail's size for pl (0: none or too big), written into
 * a new program's file (obj->snap.tail_size bytes). */
uint32_t brt_prog_file_tail_size(const struct brt_prog_lines *pl);
void brt_prog_file_write_tail(struct brt_obj *obj, const struct brt_prog_lines *pl);
/* The lines of a program file from its tail, checked as BPF_PROG_LOAD checks them
 * against insns (the BTF object re-created under the file's btf_id): 0 with *out (NULL
 * when there are none), -ENOENT (no tail) or another -errno (a bad one). */
int brt_prog_file_lines(const struct brt_prog *prog, const struct bpf_insn *insns,
			struct brt_prog_lines **out);
/* A private copy of the BTF blob a program file keeps (free() it): 0 or -errno. */
int brt_prog_file_btf(const struct brt_obj *obj, void **blob, uint32_t *size);
/* The blob a BTF object was loaded from (private to this process). */
int brt_btf_obj_blob(const struct brt_obj *obj, const void **blob, uint32_t *size);
/* The map table (prog->nmaps entries; shared memory: read each entry once). */
const struct brt_prog_mapref *brt_prog_file_maps(const struct brt_prog *prog);
/* The most privilege (BRT_PRIV_*) a program file opened as fd may be re-verified with:
 * what whoever could write it could have had.  Root's or the caller's own file that no
 * group or other user can write: any (the header's level stands); anything else:
 * BRT_PRIV_UNPRIV, as someone else could have edited the level.  docs/VERIFIER.md. */
uint32_t brt_prog_file_max_priv(int fd);
/* Open the table's maps by their links: *fds (malloc'd, *n entries, close them) in table
 * order.  0, -ENOENT when a link is gone, -EINVAL when it names another map. */
int brt_prog_file_open_maps(const struct brt_prog *prog, int **fds, uint32_t *n);
/* Around pinning prog: link its maps (dropping links no pinned program needs any more
 * when a new one is made) and hold the links' lock until brt_prog_file_pin_end(), so no
 * other process drops them before the program's own link exists.  prog must be built
 * (brt_prog_materialise(): its maps are known then).  Returns the lock (>= 0; 0 with
 * pl->lock -1 for a program without maps) or -errno; the pin goes on either way (a map
 * that could not be linked keeps the program usable only where it is already built).
 * pin_end (always called) links the program file (prog_fd, inode ino) when pinned says
 * the pin was made, so its unpin is seen later, and releases the lock. */
struct brt_pin_links {
	int lock, dir; /* the links' lock and directory, or -1 */
	int clean;     /* every map link is named by a linked program */
};
int brt_prog_file_pin_begin(struct brt_prog *prog, struct brt_pin_links *pl);
void brt_prog_file_pin_end(struct brt_pin_links *pl, int prog_fd, uint64_t ino, int pinned);
/* The end of the calling thread's batch: release the links' lock its pins held. */
void brt_prog_file_batch_end(void);
/* Is path (a file nftw() found; name at path + base) a program's link in a links'
 * directory rather than a pin? */
int brt_prog_file_is_prog_link(const char *path, int base);
/* BPF_MAP_GET_FD_BY_ID's search: a map with this id linked for a pinned program or
 * pinned itself in $BPFRT_FS.  A new O_RDWR fd or -ENOENT. */
int brt_prog_file_find_map(uint32_t id);
/* GET_FD_BY_ID's search (ids.c): a new O_RDWR fd of the live object of kind
 * (BRT_OBJ_*) with this id, found through any process's fds or mappings or a pin;
 * -ENOENT when there is none.  The caller checks the object before use. */
int brt_ids_open(uint32_t kind, uint32_t id);

/* prog_flags with the BPFRT_F_PRIV_* bit the program is verified with (the caller's
 * capabilities when none is given); -EINVAL for two bits (check.c). */
int brt_api_prog_priv(uint32_t prog_flags, uint32_t *out);
/* The prog_flags a program file is re-verified with: the header's flags, whose level
 * must be exactly one BPFRT_F_PRIV_* bit (else -EINVAL: a corrupt or forged file),
 * lowered to max_priv (BRT_PRIV_*) when it claims more (check.c). */
int brt_api_prog_file_priv(uint32_t hdr_flags, uint32_t max_priv, uint32_t *out);
/* The calling thread has CAP_SYS_ADMIN (check.c). */
int brt_api_sys_admin(void);

/* The calls of bpfrt_bpf() this thread makes until the end as one batch (obj.h's
 * brt_obj_batch_begin(): one sweep, one directory check, one privilege sample, each fd
 * resolved once; the links' lock of program pins taken once, prog_file.c): the load of
 * one object's maps and programs (src/object/load.c), `bpfrt prog loadall`'s load and
 * pins, whose fds stay open until the end (bpf.c). */
void brt_api_batch_begin(void);
void brt_api_batch_end(void);
/* The caller closed fds of objects (an object's unload): drop this process's mappings of
 * those no fd or program holds any more now, so the cost of their teardown is the
 * closer's, not whichever creation sweeps next (bpf.c). */
void brt_api_closed(void);

/* The kernel's map_get_sys_perms() checks: the map's creation flags (BPF_F_RDONLY,
 * BPF_F_WRONLY), the mode of fd (BPF_OBJ_GET file_flags) and, for writes, BPF_MAP_FREEZE.
 * 1 when the bpf() side may read (write) the map through fd. */
int brt_api_map_can_read(const struct brt_map *map, int fd);
int brt_api_map_can_write(const struct brt_map *map, int fd);

/* Resolve a program fd (takes a reference: brt_obj_put(&prog->obj)). */
int brt_prog_from_fd(int fd, struct brt_prog **out);
/* The checked engine's regions for direct map value access (lddw BPF_PSEUDO_MAP_VALUE):
 * at most cap entries written to r; returns how many (test_run.c, attach points). */
size_t brt_prog_map_regions(const struct brt_prog *prog, struct brt_region *r, size_t cap);

/* What "check the program" gets: the instructions as the user gave them (map fds not yet
 * resolved) and the load attributes.  The log is in process memory. */
/* The map fds one program load resolved: each fd is looked up (an fstat) once however
 * many instructions name it, and the verifier and the lddw rewrite see the same map. */
#define BRT_MAP_MEMO_MAX 64
struct brt_map_memo {
	uint32_t n;
	int fd[BRT_MAP_MEMO_MAX];
	struct brt_map *map[BRT_MAP_MEMO_MAX]; /* a reference each */
};
/* The map of fd (memo may be NULL), referenced once more for the caller; 0 or -errno as
 * brt_map_from_fd(). */
int brt_map_memo_get(struct brt_map_memo *memo, int fd, struct brt_map **out);
void brt_map_memo_free(struct brt_map_memo *memo);

struct brt_log_buf; /* verifier/verifier.h */

struct brt_prog_check {
	const struct bpf_insn *insns;
	size_t n;
	uint32_t prog_type;
	uint32_t expected_attach_type;
	uint32_t attach_btf_id; /* a type of the kernel's BTF (tracing programs), or 0 */
	uint32_t prog_flags;
	int gpl;
	uint32_t log_level;
	char *log_buf;          /* NULL when log_size is 0 */
	uint32_t log_size;
	struct brt_log_buf *log_grow; /* instead of log_buf: grown up to log_size, or NULL */
	uint32_t *log_true_size; /* out (may be NULL): the whole log's size, NUL included, */
	int log_ran;             /* out: ... written (the verifier ran) */
	const int *fd_array;    /* attr.fd_array copied in, or NULL */
	uint32_t fd_array_cnt;  /* its entries read */
	uint32_t bind_cnt;      /* attr.fd_array_cnt (Linux 6.13): its first entries bound */
	uint32_t *max_ctx_offset; /* out (may be NULL): highest ctx byte accessed + 1 */
	uint32_t *verified_insns; /* out (may be NULL): processed insns */
	int btf_loads;          /* out: the program loads through kernel (BTF) pointers */
	const struct brt_vline *lines; /* source lines for the log, or NULL */
	uint32_t nlines;
	const uint8_t *func_linkage;   /* func_info: linkage per function, or NULL */
	uint32_t nfuncs;
	const struct brt_btf *prog_btf; /* func_info's BTF and FUNC ids, or NULL */
	const struct brt_btf *local_btf; /* prog_btf_fd's BTF, or NULL: allocated objects */
	struct brt_obj_type obj_types[BRT_MAX_OBJ_TYPES]; /* out: what bpf_obj_new allocates */
	uint32_t nobj_types;
	const uint32_t *func_btf_ids;
	const uint32_t *func_offs;      /* ... and insn_offs */
	int btf_info;           /* func_info or line_info given */
	int throws;             /* out: brt_verify_result.throws */
	uint32_t exc_cb_insn;   /* out: ... and .exc_cb_insn; in: brt_verify_opts.exc_cb_insn */
	void **call_maps;       /* out, or NULL: brt_verify_opts.call_maps */
	int16_t *ctx_read_off;  /* out, or NULL: brt_verify_opts.ctx_read_off */
	uint8_t *insn_flags;    /* out, or NULL: brt_verify_opts.insn_flags */
	uint32_t *loop_callback; /* out, or NULL: brt_verify_opts.loop_callback */
	uint32_t subprog_cnt;   /* out: subprograms and their stack depths (bytes) */
	uint32_t stack_depth[256];
	int no_maps;            /* no fd table: every map reference is a rejection */
	struct brt_map_memo *memo; /* the load's resolved map fds, or NULL */
	const uint16_t *ops;    /* the rows the load decoded (brt_verify_opts.ops), or NULL */
	char *err_msg;          /* out, or NULL: the first error line (brt_verify_result) */
	size_t err_msglen;
};

/* ---- xlated.c: the kernel's view of a program --------------------------------------------
 * OBJ_GET_INFO_BY_FD's xlated_prog_insns are what the kernel runs after its verifier's
 * rewrites; bpfrt runs the instructions as loaded, so it reports what the kernel (6.18,
 * x86-64, JIT on) would have made of them: dead code removed, context loads converted,
 * map helpers bound to the map's functions or inlined, helper calls by kernel address. */
struct brt_xlated {
	struct bpf_insn *insns; /* n instructions, map references as the kernel dumps them */
	uint32_t n;
	/* for each stored instruction (prog->insn_cnt + 1 entries): where it went, or the
	 * next surviving one when it was removed (line and function info follow it) */
	uint32_t *pos;
	uint32_t norig;         /* stored instructions (pos has norig + 1 entries) */
};

/* tag.c: the kernel's tag of insns[0..n) as loaded or as stored (map fd and map index
 * loads count alike).  0 or -ENOMEM. */
int brt_prog_tag(const struct bpf_insn *insns, size_t n, unsigned char tag[BPF_TAG_SIZE]);

/* kernel_view 0: the stored instructions, map references as ids (bpfrt's own form);
 * 1: the kernel's, helper call immediates from /proc/kallsyms.  0 or -ENOMEM. */
int brt_prog_xlated(const struct brt_prog *prog, int kernel_view, struct brt_xlated *out);
/* Only the length and pos of the kernel's view (no /proc/kallsyms read). */
int brt_prog_xlated_len(const struct brt_prog *prog, struct brt_xlated *out);
void brt_xlated_free(struct brt_xlated *x);

/* jit_lookup.c: bind the program's map_lookup_elem calls whose map the verifier knows
 * (call_maps: brt_verify_opts.call_maps, may be NULL) into vm's JIT code.  0 or -ENOMEM. */
int brt_prog_bind_lookups(struct bpfrt_vm *vm, const struct bpf_insn *insns, size_t n,
			  void *const *call_maps, const struct brt_prog_maps *pm);
/* The JIT's view of a hash map's layout (struct brt_hash_probe, maps/maps.h); tests that
 * bind lookups themselves use it too. */
struct brt_jit_hash_layout;
void brt_jit_hash_layout_of(const struct brt_hash_probe *hp, struct brt_jit_hash_layout *out);

/* The single place a program load checks a program (check.c): the verifier.  Returns 0
 * or the errno BPF_PROG_LOAD returns; writes its messages into the log. */
int brt_api_check_prog(struct brt_prog_check *pc);

/* The program load of prog.c for a program that lives in this process only, without an
 * fd or a program file: checked by the verifier, then built into a vm (decoded once,
 * JIT code compiled), as BPF_PROG_LOAD does.  attach/filter.c's packet filters.
 *   prog_flags    BPFRT_F_PRIV_* (none: the caller's capabilities)
 *   engine        the engine asked for (a value no engine has fails in the vm, EINVAL)
 *   engine_default the engine of an accepted program loaded with engine DEFAULT
 *   keep_rejected what a rejection does: 0 refuses the load (its errno, "verifier:
 *                 <first error>" in err); 1 runs the program on the checked engine when
 *                 the engine is DEFAULT or CHECKED (else refuses); 2 warns and loads it
 *                 as asked (programs converted from classic BPF, safe by construction)
 *   insn_budget   the checked engine's budget per run (0: the vm's)
 * There is no fd table: a map reference is a rejection.  0 with *out set, or -errno with
 * err set. */
struct brt_prog_vm_opts {
	uint32_t prog_type;
	uint32_t prog_flags;
	int gpl;
	enum bpfrt_engine engine;
	enum bpfrt_engine engine_default;
	int keep_rejected;
	uint64_t insn_budget;
};
int brt_prog_load_vm(const struct bpf_insn *insns, size_t n, const struct brt_prog_vm_opts *o,
		     struct bpfrt_vm **out, char *err, size_t errlen);

struct bpfrt_run_ctx;

/* bpf_tail_call (tail_call.c). */
uint64_t brt_helper_tail_call(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx);

/* The helpers this folder implements, for the registry (src/helpers/registry.c): one
 * X(id, function, program types) each; id names its row of src/vm/helpers.def, types
 * are BRT_FOR_* helper sets (vm/helper_proto.h). */
#define BRT_API_HELPERS(X)                                                               \
	X(BPF_FUNC_tail_call, brt_helper_tail_call, BRT_FOR_ALL)

/* ---- links (link.c) ------------------------------------------------------------------ */
struct brt_link;
struct pollfd;

/* What attaches a program to one kind of source. */
struct brt_link_ops {
	const char *kind;                      /* "tracepoint", "probe" */
	/* the link thread's loop (optional): read the source until brt_link_stopping() says
	 * so about { link->peer, link->wake } polled with it; NULL: just wait for that */
	void (*run)(struct brt_link *link);
	/* undo the attachment (on the link thread, after run) */
	void (*detach)(struct brt_link *link);
};

struct brt_link {
	struct brt_link *next;         /* list of live links */
	const struct brt_link_ops *ops;
	struct brt_prog *prog;         /* referenced while the link lives */
	void *priv;                    /* the source's state */
	int peer;                      /* our end of the socketpair */
	int wake;                      /* eventfd: detach requested */
	dev_t dev;                     /* identify the user's end */
	ino_t ino;
	pthread_t thread;
	int joined;                    /* bpfrt_link_detach() joins and frees */
	_Atomic uint64_t events;       /* program runs */
	_Atomic uint64_t lost;         /* records the source lost */
	_Atomic uint64_t errors;       /* runs that faulted */
	_Atomic uint64_t nonzero;      /* runs that returned non-zero */
	/* what other processes see (api/link_rec.c; links_lock): the record's id (0: none)
	 * and type; stopped once the thread no longer runs the program */
	uint32_t rec_id, rec_type;
	uint64_t peer_ino;
	int stopped;
};

/* Create a link for prog (referenced) with the source's priv and start its thread;
 * returns the user's fd (O_CLOEXEC) or -errno.  *out is valid until ops->detach ran. */
int brt_link_create(const struct brt_link_ops *ops, struct brt_prog *prog, void *priv,
		    struct brt_link **out);
struct brt_link_desc;
/* Make the link behind link_fd visible to other processes as the kernel link d describes
 * (bpftool link show; api/link_rec.c).  Called by the attach function right after
 * brt_link_create() (by fd: a link whose thread stopped at once is gone already);
 * failures only leave it unseen. */
void brt_link_publish(int link_fd, const struct brt_link_desc *d);
/* After polling { link->peer, link->wake } (in this order) with POLLIN: stop now? */
int brt_link_stopping(const struct pollfd *peer_wake);
/* Non-blocking: has the user closed every copy of the link's fd or asked for a detach?
 * For run loops that wait on their source with a timeout of their own. */
int brt_link_should_stop(const struct brt_link *link);
/* Call fn(link, arg) with the live link behind fd held, when its ops are ops (NULL: any
 * kind).  0, -EBADF (closed fd) or -EINVAL (not a live link of this process or kind). */
int brt_link_with(int fd, const struct brt_link_ops *ops,
		  void (*fn)(struct brt_link *link, void *arg), void *arg);

/* Linux 6.18's sizeof(union bpf_attr) (BPF_PROG_LOAD's keyring_id ends it): bpfrt_bpf()
 * copies in this much, the tail past it must be zero (E2BIG) and the bytes up to it past a
 * command's last field (CHECK_ATTR, EINVAL), as the kernel's __sys_bpf() */
#define BRT_ATTR_SIZE 168
/* BPF_PROG_LOAD's fields past this libc's header (it stops at core_relo_rec_size):
 * log_true_size (Linux 6.4) is the log's whole size, written back after the verifier ran
 * when the caller's attr holds it; prog_token_fd (6.9, with BPF_F_TOKEN_FD); fd_array_cnt
 * (6.13: fd_array's maps bound to the program); signature, signature_size, keyring_id
 * (6.18: a PKCS#7 signature of the instructions) */
#define BRT_PROG_LOAD_LOG_TRUE_SIZE_OFF 140
#define BRT_PROG_LOAD_TOKEN_FD_OFF 144
#define BRT_PROG_LOAD_FD_ARRAY_CNT_OFF 148
#define BRT_PROG_LOAD_SIGNATURE_OFF 152
#define BRT_PROG_LOAD_SIGNATURE_SIZE_OFF 160
#define BRT_PROG_LOAD_KEYRING_ID_OFF 164
#define BRT_PROG_LOAD_ATTR_END BRT_ATTR_SIZE
/* The bytes of a field at off (a u32 or u64 of the fields above) of the call's attr, 0
 * when the attr it came in does not reach it (inline: bpf.c dispatches to the handlers
 * that read these, so neither may call the other). */
static inline uint64_t brt_attr_field(const struct brt_call *call, size_t off, size_t size)
{
	size_t len = call->attr_len ? call->attr_len : sizeof(union bpf_attr);
	uint64_t v = 0;
	uint32_t v32 = 0;

	if (off + size > len)
		return 0;
	if (size == sizeof(v32)) {
		memcpy(&v32, (const unsigned char *)call->attr + off, sizeof(v32));
		return v32;
	}
	memcpy(&v, (const unsigned char *)call->attr + off, sizeof(v));
	return v;
}

#define BPF_CMD(cmd, last, fn) int fn(struct brt_call *call);
#define BPF_CMD_END(cmd, end, fn) int fn(struct brt_call *call);
#define BPF_CMD_ABOVE(cmd, last)
#include "api/cmds.def"
#undef BPF_CMD
#undef BPF_CMD_END
#undef BPF_CMD_ABOVE

/* The handler of a BPF_CMD_ABOVE row of cmds.def, from the folder above api/ that
 * implements it, called when the library is loaded (a constructor: libbpfrt.a is one
 * object, so it comes along with any of the library).  Until then the command fails
 * with EINVAL like an unknown one.  0, or -EINVAL for a command that has no such row. */
int brt_api_register_cmd(int cmd, int (*fn)(struct brt_call *call));

/* Run one command on an attr already in process memory; returns >= 0 or -errno. */
int brt_bpf_call(int cmd, struct brt_call *call);

/* Write a field of the caller's attr back (PROG_TEST_RUN results, batch counts). */
#define BRT_PUT_ATTR(call, field)                                                         \
	(call)->ua->to((call)->uattr + offsetof(union bpf_attr, field), &(call)->attr->field, \
		       sizeof((call)->attr->field))

#endif
