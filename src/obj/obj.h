/* obj.h - the fd-object layer: objects behind real file descriptors (each one a file the
 * kernel numbers, refcounts and frees), the per-process cache of their mappings, and the
 * shared-memory primitives everything stored in them builds on (process-shared locks,
 * word-wise atomic copies, consumer wake-ups).  It sits below maps/ and api/ and knows no
 * kind: each layer above registers how its kinds attach with brt_obj_set_attach().
 * Shared-memory layout, locking and the memory model: docs/MEMORY_MODEL.md.
 */
#ifndef BPFRT_SRC_OBJ_OBJ_H
#define BPFRT_SRC_OBJ_OBJ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <linux/bpf.h>

/* ---- object files -------------------------------------------------------------------- */

#define BRT_OBJ_MAGIC 0x4a424f5452465042ull /* "BPFRTOBJ" little-endian */
#define BRT_OBJ_VERSION 1
/* graph roots a map's value may have (the kernel's BTF_FIELDS_MAX) */
#define BRT_OBJ_HDR_ROOTS 11
#define BRT_PAGE 4096u

enum brt_obj_kind {
	BRT_OBJ_MAP = 1,
	BRT_OBJ_PROG = 2,
	BRT_OBJ_BTF = 3, /* BPF_BTF_LOAD (src/api/btf_load.c) */
	BRT_OBJ_PERF_RING = 4, /* perf output ring (perf_output.c) */
	BRT_OBJ_LINK = 5, /* no object files: only an id counter (api/link_rec.c records) */
	BRT_OBJ_KINDS
};

/* The header, stored in the LAST page of every object file so that the type's own data
 * starts at file offset 0 (mmap of an BPF_F_MMAPABLE array or of a ring buffer's consumer
 * page then sees what the kernel shows).  Written once at creation; only the fields marked
 * "atomic" change afterwards. */
struct brt_obj_hdr {
	uint64_t magic;              /* BRT_OBJ_MAGIC */
	uint32_t version;            /* BRT_OBJ_VERSION */
	uint32_t kind;               /* enum brt_obj_kind */
	uint64_t file_size;          /* total bytes, header page included */
	uint64_t data_size;          /* bytes of the type's region at offset 0 */
	uint32_t id;                 /* random id reported by OBJ_GET_INFO_BY_FD */
	uint32_t type;               /* map type or prog type */
	uint32_t key_size;           /* maps; attach_btf_id for programs */
	uint32_t value_size;         /* maps; programs: the exception callback's first insn */
	uint32_t max_entries;        /* maps; insn count for programs */
	uint32_t flags;              /* map_flags or prog_flags */
	_Atomic uint32_t frozen;     /* atomic: BPF_MAP_FREEZE done */
	uint32_t ncpus;              /* per-CPU maps: values per element */
	uint64_t map_extra;          /* maps: attr.map_extra */
	char name[BPF_OBJ_NAME_LEN]; /* NUL-terminated */
	uint32_t expected_attach_type; /* programs */
	uint32_t gpl;                /* programs: GPL-compatible licence */
	uint64_t created_ns;         /* CLOCK_REALTIME at creation */
	/* atomic: some fd of the object was opened read-only or write-only (BPF_OBJ_GET
	 * file_flags); until then no command needs to ask the kernel for an fd's mode.
	 * Maps only: a program's fd has no mode (the kernel's bpf_obj_get_user() gives the
	 * flags to maps alone), so the header a private copy keeps in process memory
	 * (private_copy below: programs, BTF objects), which never sees another process set
	 * the word, misses nothing (api.shared_header "read-only BPF_OBJ_GET") */
	_Atomic uint32_t restricted;
	/* maps: MAP_CREATE's BTF, checked by the caller (src/api/btf_load.c); btf_id is
	 * the BTF object's id, 0 when the map was created without BTF; programs: the id of
	 * their func/line info's BTF */
	uint32_t btf_id;
	uint32_t btf_key_type_id;
	uint32_t btf_value_type_id;
	/* bytes of a second region after the type's region, at its next page or packed
	 * right after it (tail_packed below; maps: a copy of their BTF blob, so a process
	 * that opens the pinned map after the loader exited still has the types; 0: none) */
	uint32_t tail_size;
	/* programs: entries of the map table stored after the instructions, then bytes of
	 * the functions' BTF linkage after it (src/api/prog_file.c) */
	uint32_t nmaps;
	uint32_t nfuncs;
	/* maps: 1 + offset of the struct bpf_spin_lock in the value (BTF), 0 when none */
	uint32_t spin_lock_off;
	/* maps: 1 + offset of the struct bpf_timer in the value (BTF), 0 when none */
	uint32_t timer_off;
	/* maps: 1 + offset of the struct bpf_res_spin_lock in the value (BTF), 0 when none
	 * (never with spin_lock_off) */
	uint32_t res_spin_lock_off;
	/* maps: the value's bpf_list_head and bpf_rb_root fields (BTF), ngraph_roots of them:
	 * {offset, offset of the node in the objects they hold, 1 for a tree} */
	uint32_t ngraph_roots;
	uint32_t graph_roots[BRT_OBJ_HDR_ROOTS][3];
	/* nonzero: the second region (tail_size) starts at the 8-byte boundary after the
	 * type's region, not at the next page, so the two share pages (programs: their
	 * instructions and their BTF tail, one page where two were for a small program;
	 * every page of a file is allocated at its creation and freed at its close).  0 in
	 * files of earlier versions and in BPF_F_MMAPABLE maps, whose region user space
	 * maps page by page (maps/map.c; 1 in other maps since session 18). */
	uint32_t tail_packed;
	/* nonzero: the header is in the file's last BRT_OBJ_HDR_ROOM bytes, after the data
	 * and tail in their last page, not at the start of a page of its own (write-once
	 * files: programs, BTF objects, brt_obj_create_once(); since session 19 maps whose
	 * region user space does not map, brt_obj_create_sparse()); 0 in BPF_F_MMAPABLE
	 * arrays, ring buffers and files of earlier versions (brt_obj_hdr_at()) */
	uint32_t hdr_at_end;
	/* maps: 1 + offset of the struct bpf_task_work in the value (BTF), 0 when none (0 in
	 * files of earlier versions, which had none) */
	uint32_t task_work_off;
	/* maps: MAP_CREATE's btf_vmlinux_value_type_id (struct_ops maps: the kernel's
	 * bpf_struct_ops_<name>), reported by OBJ_GET_INFO_BY_FD (0 in files of earlier
	 * versions) */
	uint32_t btf_vmlinux_value_type_id;
};

/* Where a file's header is.  Two layouts:
 * - a page of its own at the end (maps whose region user space maps page by page and
 *   must not see the header: BPF_F_MMAPABLE arrays, ring buffers; every file of earlier
 *   versions but one-page ones): at file_size - BRT_PAGE;
 * - the last BRT_OBJ_HDR_ROOM bytes of the file, after the data and tail in their last
 *   page (write-once files: programs, BTF objects; other maps since session 19), marked
 *   by hdr_at_end: a program of a few dozen instructions or a map of a few values takes
 *   one page of shared memory where it took two, a program of a few hundred (or one
 *   carrying its object's BTF) two where it took three (each page of a file is allocated
 *   at its creation and freed at its close).  One-page files of earlier versions have
 *   their header there too, unmarked.
 * A reader tells them apart by the bytes at the end (brt_obj_read_hdr()): an honest file
 * of the first layout has zeros there (the rest of its header page), one of the second a
 * header with hdr_at_end set.  An older bpfrt reads the start of the last page of a
 * file of the second layout, where data are, and refuses it (unless the data forge a
 * whole header, which any writer of the file can do anyway: every header is untrusted). */
#define BRT_OBJ_HDR_ROOM 320u
_Static_assert(sizeof(struct brt_obj_hdr) <= BRT_OBJ_HDR_ROOM, "the header fits its room");
/* the first layout's place (a file of one page: its end) */
static inline uint64_t brt_obj_hdr_off(uint64_t file_size)
{
	return file_size > BRT_PAGE ? file_size - BRT_PAGE : BRT_PAGE - BRT_OBJ_HDR_ROOM;
}
/* the place of a header read by brt_obj_read_hdr() (or written by a creation) */
static inline uint64_t brt_obj_hdr_at(const struct brt_obj_hdr *hdr)
{
	return hdr->hdr_at_end ? hdr->file_size - BRT_OBJ_HDR_ROOM :
				 brt_obj_hdr_off(hdr->file_size);
}

/* May a file of kind have its header at its end (hdr_at_end): programs, BTF objects and
 * maps (which of them may: maps/map.c, at creation and at attach). */
static inline int brt_obj_kind_hdr_at_end(uint32_t kind)
{
	return kind == BRT_OBJ_PROG || kind == BRT_OBJ_BTF || kind == BRT_OBJ_MAP;
}

/* Is size one an object file of kind may have: whole pages, two or more; one only for
 * the kinds whose header may share the data's last page (brt_obj_kind_hdr_at_end()). */
static inline int brt_obj_size_ok(uint64_t size, uint32_t kind)
{
	return size && size % BRT_PAGE == 0 &&
	       (size > BRT_PAGE || brt_obj_kind_hdr_at_end(kind));
}

/* Read the header of a file of size bytes open as fd (one pread of its last page) from
 * where its layout has it, and check what every reader checks: magic, version, a known
 * kind, the file's size, a layout the kind may have.  0, or -EINVAL when the file is no
 * object of this version.  The other fields are the caller's to check. */
int brt_obj_read_hdr(int fd, uint64_t size, struct brt_obj_hdr *hdr);

/* Where the second region starts (see tail_packed), for a header already checked or
 * read from an untrusted file (the caller still checks it against the file's size). */
static inline uint64_t brt_obj_tail_off(const struct brt_obj_hdr *hdr)
{
	return hdr->tail_packed ? (hdr->data_size + 7) & ~(uint64_t)7 :
				  (hdr->data_size + 4095) & ~(uint64_t)4095;
}

/* What a cached object's entry publishes for other processes' id walks (pub.c, one slot
 * of this process's reference table): which mappings of the file are the cache's own
 * (such a mapping alone is no reference: the kernel would have freed the object with its
 * last fd) and how many references the process holds besides fds.  Written only by this
 * process; read by others as untrusted input (api/ids.c). */
struct brt_obj_pub {
	_Atomic uint64_t dev;         /* st_dev of the file */
	_Atomic uint64_t ino;         /* st_ino of the file; 0: a free slot */
	_Atomic uint64_t lo, hi;      /* the entry's mapping of the whole file (0: none) */
	_Atomic uint64_t aux_lo, aux_hi; /* another mapping the entry owns (aux below) */
	_Atomic int32_t refs;         /* brt_obj.refs: users besides fds */
	/* of them, held by other objects of this process whose files name this one (a
	 * program's map table, a prog array's slots): a walker counts those only for a
	 * holder it finds alive itself */
	_Atomic int32_t named;
	uint64_t reserved;
};

/* One object as this process sees it: a cached mapping of the object's file, found by
 * (st_dev, st_ino).  refs counts in-flight users and loaded programs that reference it;
 * an entry with refs == 0 whose file no fd of the process refers to any more is dropped
 * by the sweeper (obj.c). */
struct brt_obj {
	struct brt_obj *next;         /* cache chain */
	dev_t dev;                    /* st_dev of the file */
	ino_t ino;                    /* st_ino of the file */
	int last_fd;                  /* an fd that referred to it lately (sweeper hint) */
	/* users besides fds: &pub->refs once the entry is published (cached), own[0]
	 * before or when the table has no room (brt_obj_get()/brt_obj_put()) */
	_Atomic int32_t *refs;
	_Atomic int32_t *named;       /* &pub->named or own[1] (brt_obj_named()) */
	_Atomic int32_t own[2];
	struct brt_obj_pub *pub;      /* this entry's slot, or NULL */
	/* another mapping of the file this entry owns and unmaps at release (a ring
	 * buffer's data twice), published so walkers do not take it for a holder */
	void *aux;
	size_t aux_len;
	/* optional: make aux writable in place through fd (which may write the file) when a
	 * read-only mapping becomes writable (make_writable()), before ro is cleared: 0 or
	 * -errno (the object stays read-only) */
	int (*aux_writable)(struct brt_obj *obj, int fd);
	uint32_t kind;                /* enum brt_obj_kind */
	void *base;                   /* mapping of the whole file */
	size_t size;                  /* its length */
	struct brt_obj_hdr *hdr;      /* base + brt_obj_hdr_off(size): shared, read only its
				       * atomic fields (frozen, restricted) */
	/* The header as this process first read it (one pread, before the kind's attach
	 * callback validated it) or wrote it: every other field is read from here, never
	 * from hdr, which any process that can write the file may change at any time
	 * (docs/SECURITY.md, "Shared memory and crashes") */
	struct brt_obj_hdr snap;
	/* base is process memory, not a mapping: the copy this process wrote the file from
	 * (brt_obj_create_once() in a batch), freed, not unmapped.  Such a file is written
	 * once, so the copy is what the file holds; but no mapping keeps the file alive, so
	 * the first time an fd of it is resolved (brt_obj_from_fd(): every command that may
	 * hold the object past its fds, an attach, a link, a program array, starts there)
	 * the file is mapped into keep, as every other object is mapped, and stays alive and
	 * findable (/proc/PID/map_files) as long as the entry. */
	int private_copy;
	/* base is mapped read-only: this process may only read the file (a BPF_OBJ_GET with
	 * BPF_F_RDONLY of a pin it has read permission on, as the kernel's needs no more).
	 * Maps and programs only, and maps only of the types map.c's attach accepts so (their
	 * reads write nothing shared); every fd of it is treated as restricted, since the
	 * shared word cannot be set from here; and no program or map of this process may take
	 * it to write (brt_obj_writable()).  Cleared, the mapping made writable in place, when
	 * an fd that may write the file comes (the file's mode changed since). */
	_Atomic int ro;
	_Atomic(void *) keep;         /* that mapping (size bytes), NULL until then */
	void (*release)(struct brt_obj *obj); /* kind-specific teardown, then munmap */
	void (*unref)(struct brt_obj *obj);   /* optional: no fd left, refs remain */
	/* the last name this process pinned or got it by (absolute, malloc'd; NULL: none):
	 * brt_obj_pinned()'s answer where /proc/self/map_files cannot be followed */
	char *name;
};

/* Create an object file (O_TMPFILE in the bpffs directory, or a memfd when that is not
 * possible) of hdr->data_size bytes (and hdr->tail_size) plus the header page, write the header (magic,
 * version, sizes and, unless hdr->id is set, id are filled in here) and return a new fd (O_CLOEXEC) and the cached
 * object, referenced once.  The object struct is obj_size bytes (a struct embedding
 * struct brt_obj first), zeroed; init() completes it and the shared region.  Returns the
 * fd or -errno. */
int brt_obj_create(struct brt_obj_hdr *hdr, size_t obj_size,
		   int (*init)(struct brt_obj *obj, void *arg), void *arg, struct brt_obj **out);
/* The same with the data's pages [hole_off, hole_off + hole_len) (page aligned) left
 * unreserved: the kind reserves them as it uses them, with MADV_POPULATE_WRITE on its
 * mapping (an error, never SIGBUS, when memory is short), and touches no page of the hole
 * it has not populated in this process (a BPF_F_NO_PREALLOC hash map's elements,
 * maps/hash.c).  A hole that is not page aligned or reaches the header is ignored.
 * tail (NULL: zeros) is the second region's hdr->tail_size bytes, in the file before
 * init runs (a map's BTF copy: written with the rest of a small file, obj.c).  A caller
 * that sets hdr->hdr_at_end lets the header share the last page of the data (obj.h,
 * brt_obj_hdr_at(); kept only when the tail is packed or absent). */
int brt_obj_create_sparse(struct brt_obj_hdr *hdr, size_t obj_size, uint64_t hole_off,
			  uint64_t hole_len, const void *tail,
			  int (*init)(struct brt_obj *obj, void *arg), void *arg,
			  struct brt_obj **out);
/* The same for an object whose file is written once, by init, and then only read (a
 * program, a BTF object; one that leaves room for the header in its last page takes one
 * page in all, brt_obj_hdr_off()): init writes into process memory that is written to the file
 * in one call, which reserves its memory as fallocate would.  Outside a batch the file
 * is then mapped without populating it (this process seldom reads it again; a mapping
 * never touched is cheap to drop) and init must keep no pointer into obj->base (it
 * moves to the mapping).  In a batch (an object's load, whose programs are mostly never
 * looked up again) a small file is not mapped: the process memory stays obj->base
 * (private_copy above), which saves an mmap and an munmap per program.  Either way init
 * must not rely on the region being shared. */
int brt_obj_create_once(struct brt_obj_hdr *hdr, size_t obj_size,
			int (*init)(struct brt_obj *obj, void *arg), void *arg,
			struct brt_obj **out);

/* How a kind turns a mapped file into an object on first use in a process: allocate the
 * object struct, validate the header and the region (the file may come from another
 * process, may be corrupt) and set obj->release.  base/size/hdr/snap are already set in
 * the template; the callback validates tmpl->snap (never tmpl->hdr, which may change
 * between two reads) and returns a new object copying the template, or -errno. */
typedef int (*brt_obj_attach_fn)(const struct brt_obj *tmpl, struct brt_obj **out);
/* Register the callback of a kind; the layer owning the kind does it when the library is
 * loaded (a constructor), before any fd can be resolved.  Until then files of that kind
 * are refused with -EINVAL. */
void brt_obj_set_attach(uint32_t kind, brt_obj_attach_fn fn);

/* Resolve an fd to its object, mapping and validating the file on first use.  Takes a
 * reference (drop it with brt_obj_put()).  -EBADF for a closed fd, -EINVAL for an fd that
 * is not a bpfrt object or is of another kind (kind 0 accepts any). */
int brt_obj_from_fd(int fd, uint32_t kind, struct brt_obj **out);
/* The same for a caller that needs the object only while its call lasts, or whose own
 * file carries what others need of it (a program's file has a copy of its BTF blob, by
 * which another process finds the BTF's id: api/ids.c): a private copy (private_copy
 * above) is not mapped, so a load of many programs does not map and unmap its BTF object
 * for nothing.  brt_obj_keep_fd() maps it after all (obj an object resolved from fd). */
int brt_obj_from_fd_transient(int fd, uint32_t kind, struct brt_obj **out);
/* brt_obj_from_fd() of an fd the caller has just opened (BPF_OBJ_GET; rdwr: read-write),
 * st its stat() of the file: neither asked again, and an older memo of the fd's number in
 * the calling thread's batch (an fd closed since) is forgotten first.  An fd that is not
 * read-write, of a file the process cannot open read-write, maps a map or program
 * read-only (ro above); -EACCES when that cannot be. */
int brt_obj_from_opened(int fd, int rdwr, const struct stat *st, struct brt_obj **out);
/* 0 when this process's mapping of obj is writable (it may be written by a program or
 * through another map of this process), else -EACCES with a message naming what: for
 * what the kernel allows to a read-only fd's holder (a program using the map) but bpfrt
 * cannot do without write access to the file. */
int brt_obj_writable(const struct brt_obj *obj, const char *what);
void brt_obj_keep_fd(struct brt_obj *obj, int fd);
void brt_obj_get(struct brt_obj *obj);
void brt_obj_put(struct brt_obj *obj);
/* delta (+1, -1) of obj's references that another object of this process holds and
 * names in its file (a program's map table, api/prog.c; a prog array's slot,
 * maps/prog_array.c): published apart from the others, so another process's id walk
 * counts them only when it finds the holder alive (a program or prog array no fd, link
 * or attachment holds any more is dead though its entry still holds what it names until
 * this process sweeps it). */
void brt_obj_named(struct brt_obj *obj, int delta);

/* What fd (an fd of obj) lets bpf() do: O_RDONLY, O_WRONLY or O_RDWR (as the kernel's
 * FMODE_CAN_READ / FMODE_CAN_WRITE).  No syscall unless obj->hdr->restricted is set. */
int brt_obj_fd_access(const struct brt_obj *obj, int fd);

/* The bpffs-like directory: $BPFRT_FS or /dev/shm/bpfrt. */
const char *brt_obj_fs_dir(void);
/* That directory opened (an fd), if trusted, created first when create is set: the fd,
 * or -errno (an untrusted one: -EACCES). */
int brt_obj_fs_open(int create);

/* A new id of kind from the directory's counters (what object creation uses; links,
 * which have no object files, take theirs here). */
uint32_t brt_obj_new_id(uint32_t kind);

/* Does an fd of this process still refer to obj's file: 1 (also when /proc cannot be
 * read: the answer that drops nothing), 0 when none does.  An fstat of the fd it was
 * last reached by, else a read of /proc/self/fd: not for every call of a fast path. */
int brt_obj_has_fd(struct brt_obj *obj);

/* Marks on obj's open file description, for what the kernel ties to one struct file of
 * an object (a perf event array's entries live until the map file that installed them is
 * released, and fork or SCM_RIGHTS share that file with other processes).  A mark is an
 * open-file-description read lock on byte off (far past the file's data) taken through
 * the fd this process last reached obj by, so it lasts exactly while some process still
 * holds that description.  brt_obj_desc_mark(): 0, or -1 when it could not be taken.
 * brt_obj_desc_marked(): 1 when some description holds a mark at off, 0 when none does,
 * -1 when this process has no fd to look through.  A few system calls each. */
int brt_obj_desc_mark(struct brt_obj *obj, uint64_t off);
int brt_obj_desc_marked(struct brt_obj *obj, uint64_t off);

/* fstat of obj's file (its owner; st_nlink: how many names it has, pins and the links of
 * pinned programs' maps and of pinned maps of maps' entries) through the fd this process
 * last reached obj by, under the cache's lock (other threads' fd lookups move that fd):
 * 0, or -EBADF when that fd no longer refers to obj.  Needs no privilege. */
int brt_obj_stat(const struct brt_obj *obj, struct stat *st);

/* Name obj's file name in dirfd through the fd this process last reached obj by: 0,
 * -EBADF when that fd no longer refers to obj, or linkat()'s -errno (-EEXIST). */
int brt_obj_link(struct brt_obj *obj, int dirfd, const char *name);

/* Is obj's file pinned (a name in a directory: BPF_OBJ_PIN linked it) now?  Read through
 * /proc/self/map_files, which only CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE) may follow;
 * without it, whether the name this process pinned or got obj by (brt_obj_note_name())
 * still names obj's file.  0 for a memfd (never pinnable).  A readlink and a stat or two:
 * not for fast paths. */
int brt_obj_pinned(struct brt_obj *obj);
/* Remember path (relative to the current directory) as a name of obj's file: what
 * BPF_OBJ_PIN made and BPF_OBJ_GET opened, for brt_obj_pinned(). */
void brt_obj_note_name(struct brt_obj *obj, const char *path);

/* Drop cached objects no fd or program refers to any more (done lazily on fd lookups
 * misses and creations; callable explicitly).  Returns how many were dropped. */
int brt_obj_sweep(void);

/* Number of cached objects (for leak tests). */
int brt_obj_cached(void);

/* A batch: what one thread does between begin and end as one call of the library (the
 * load of one object's maps and programs, src/object/load.c), which would otherwise
 * repeat per map and program what cannot change within that call for that thread:
 * - at most one sweep (the first creation's, if due), not one every few creations;
 * - the bpffs directory's trust check once (a stat per creation otherwise);
 * - fds resolved once: brt_obj_from_fd() answers an fd it resolved or created earlier in
 *   the batch from its memo (a reference held until the end) without the fstat.  A number the
 *   library hands out again (brt_obj_create(), every command of bpf() that returns an
 *   fd: brt_obj_batch_forget()) is forgotten first, so a number closed and handed out
 *   again is never taken for the object it named (a number closed and then passed to
 *   the library without being reused would still answer for its old object: the
 *   batch's caller passes only fds it holds).
 * - the caller's privilege sampled once (api/check.c, keyed by brt_obj_batch_id()):
 *   capabilities are per thread and only the thread itself changes its own.
 * Nests (the outermost begin and end count).  Other threads are not affected. */
void brt_obj_batch_begin(void);
void brt_obj_batch_end(void);
/* A number for the calling thread's current batch, unique in the process; 0: none. */
uint64_t brt_obj_batch_id(void);
/* fd is now another file (or may be): drop what the batch's memo says of it. */
void brt_obj_batch_forget(int fd);
/* Around one bpf() command of the thread: brt_obj_batch_command() before it runs,
 * brt_obj_batch_handed() with the fd it returns, which is forgotten unless a creation
 * of that command memoized it (a new object's own fd: its programs then resolve the
 * maps and BTF object the load created without an fstat each).  A creation's fd that
 * the same command closed and had handed out again by another open would keep the old
 * answer: no command closes an object it created and then returns another fd. */
void brt_obj_batch_command(void);
void brt_obj_batch_handed(int fd);

/* ---- the reference table (pub.c) ---------------------------------------------------- */

/* The name the table's memfd has in /proc/PID/maps. */
#define BRT_PUB_MAPS_NAME "/memfd:bpfrt-refs"
/* A slot for an entry about to be cached with its current counts and mappings, or NULL
 * (no table: memfd or mmap failed, or it is full); brt_pub_free() when it is dropped. */
struct brt_obj_pub *brt_pub_alloc(const struct brt_obj *obj);
void brt_pub_free(struct brt_obj_pub *pub);

/* Another process's table as read once by a walker (every field untrusted). */
struct brt_pub_view {
	struct brt_obj_pub *slots;    /* sorted by (dev, ino) */
	size_t n;
};
/* Read the table at path (/proc/PID/map_files/LO-HI of its BRT_PUB_MAPS_NAME mapping):
 * 0, or -errno when it is not one (the caller then counts every mapping as a holder). */
int brt_pub_read(const char *path, struct brt_pub_view *v);
void brt_pub_view_free(struct brt_pub_view *v);
/* What a mapping [lo, hi) of the file (dev, ino) in that process stands for. */
enum brt_pub_verdict {
	BRT_PUB_HOLDER,  /* a reference: not the cache's mapping, or the entry holds it */
	BRT_PUB_NAMED,   /* only objects naming it hold it there: alive if one of them is */
	BRT_PUB_NONE,    /* the cache's mapping and nothing holds the object there */
};
enum brt_pub_verdict brt_pub_classify(const struct brt_pub_view *v, dev_t dev, ino_t ino,
				      uint64_t lo, uint64_t hi);

/* ---- shared memory (shm.c) ------------------------------------------------------- */

/* Process-shared lock (a futex word in shared memory) naming its owner thread.  Returns 0,
 * or 1 when the lock was taken over from an owner that died holding it or from a word
 * another process scribbled on: what the lock guards may then be half-changed, and the
 * caller repairs it before use (docs/MEMORY_MODEL.md, "Locks" and "Crashes"). */
int brt_shm_lock(_Atomic uint32_t *lock);
void brt_shm_unlock(_Atomic uint32_t *lock);
/* Take a lock at once if its owner is dead (or its word is no owner's): 1 when taken
 * over (the caller repairs and unlocks), 0 when free or held by a live owner.  For scans
 * that look for locks a killed process left, without waiting on live ones. */
int brt_shm_lock_reclaim(_Atomic uint32_t *lock);
/* This thread's owner word (thread id and check bits, never 0), as a held lock holds it;
 * other shared words name their owner with it (ring buffer records being written). */
uint32_t brt_shm_self(void);
/* Is a word that names an owner stale: not an owner's word (scribbled on), or a thread
 * that is gone (kill(tid, 0): ESRCH)?  0 for 0.  A system call: not for fast paths. */
int brt_shm_owner_dead(uint32_t word);

/* Copy between shared memory and process memory in 8-byte atomic words (loads acquire,
 * stores release: the hash map's element seqlock relies on it, and both are plain moves
 * on x86), so no reader ever sees half of a word another thread or process is writing.  shm is 8-byte
 * aligned and has round_up(n, 8) bytes; the padding of the last word is written as zero. */
void brt_shm_read(void *dst, const void *shm, size_t n);
void brt_shm_write(void *shm, const void *src, size_t n);
void brt_shm_zero(void *shm, size_t n);

/* Number of CPUs the per-CPU maps keep values for (the kernel's possible CPUs). */
uint32_t brt_ncpus(void);
/* Is CPU cpu online (/sys/devices/system/cpu/online, read each time: CPUs come and go);
 * 1 when the list cannot be read. */
int brt_cpu_online(uint32_t cpu);
/* The CPU a program runs on, in [0, brt_ncpus()). */
uint32_t brt_cpu(void);

#define BRT_ROUND8(x) (((uint64_t)(x) + 7) & ~(uint64_t)7)
#define BRT_ROUND_PAGE(x) (((uint64_t)(x) + BRT_PAGE - 1) & ~(uint64_t)(BRT_PAGE - 1))

/* ---- wake-ups (waker.c): a consumer in any process polls a pipe producers write to ----- */

/* In the object's shared memory: the consumer's pipe write end as process pid numbers it
 * and the pipe's inode (checked after opening /proc/pid/fd/fd).  pid 0: nobody polls. */
struct brt_waker {
	_Atomic uint32_t pid;
	_Atomic int32_t fd;
	_Atomic uint64_t ino;
};

/* This process's side. */
struct brt_waker_view {
	pthread_mutex_t lock;
	struct brt_waker *shared;
	int poll_r;            /* our consumer pipe's read end (private dup), or -1 */
	int poll_w;            /* its write end, or -1 */
	int user_fd;           /* the read end handed out last, or -1 (brt_waker_live()
				* looks at it when /proc cannot be read) */
	int peer;              /* another process's consumer pipe opened through /proc, or -1 */
	uint32_t peer_pid;
	uint64_t peer_ino;
};

void brt_waker_init(struct brt_waker_view *w, struct brt_waker *shared);
void brt_waker_fini(struct brt_waker_view *w);
/* Become the consumer (the last process to call this wins); a new read end or -errno. */
int brt_waker_poll_fd(struct brt_waker_view *w);
/* Does some process poll? */
int brt_waker_armed(const struct brt_waker_view *w);
/* Does a live process poll: one whose published pipe is still open (this process: the
 * read end it handed out last)?  (Opens the peer's pipe as a wake-up would, writes
 * nothing.) */
int brt_waker_live(struct brt_waker_view *w);
/* Write a byte to the consumer's pipe.  1: the pipe holds a byte (this one, or it was
 * full); 0: nobody got it (nobody polls, or the consumer is gone: then it is unpublished). */
int brt_waker_wake(struct brt_waker_view *w);
/* Consumer: empty the pipe before looking for records, so a later wake-up stays. */
void brt_waker_drain(struct brt_waker_view *w);

#endif
