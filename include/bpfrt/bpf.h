/* bpfrt/bpf.h - the bpf() entry point and its libbpf-style wrappers: maps, programs and
 * pinned objects as real file descriptors.  Included by <bpfrt.h>.
 *
 * Objects are files: close() of the last fd (in any process) frees them, they survive
 * fork() and travel over SCM_RIGHTS, and BPF_OBJ_PIN links them into the bpffs-like
 * directory ($BPFRT_FS, default /dev/shm/bpfrt) where another process can BPF_OBJ_GET
 * them.  Map contents live in the file's shared mapping.  See docs/MEMORY_MODEL.md.
 */
#ifndef BPFRT_BPF_H
#define BPFRT_BPF_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bpf(2) system call, in user space: same commands, same union bpf_attr, same
 * errno for the same mistake.  attr may be larger than this library's union bpf_attr if
 * the extra bytes are zero (else E2BIG); fields a command does not use must be zero (else
 * EINVAL); pointers inside attr are checked (EFAULT) without being dereferenced blindly.
 * Returns what the kernel returns (an fd, 0, ...) or -1 with errno set.  Supported
 * commands and where bpfrt differs on purpose: docs/MEMORY_MODEL.md and bpfrt-bpf(3). */
BPFRT_API int bpfrt_bpf(int cmd, union bpf_attr *attr, unsigned int size);

/* The wrappers below return >= 0 on success or -errno (errno is set too).  Unlike
 * bpfrt_bpf() they trust their pointer arguments (NULL where documented). */

struct bpfrt_map_create_opts {
	size_t sz;             /* sizeof(struct bpfrt_map_create_opts) */
	uint32_t map_flags;    /* BPF_F_* for BPF_MAP_CREATE */
	uint32_t numa_node;    /* with BPF_F_NUMA_NODE */
	uint64_t map_extra;    /* attr.map_extra */
	uint32_t inner_map_fd; /* map-in-map templates (unsupported: must be 0) */
	uint32_t reserved;     /* zero; see BPFRT_OPTS() */
};
#define bpfrt_map_create_opts__last inner_map_fd

/* Create a map; name may be NULL (at most 15 characters of [A-Za-z0-9_.]).
 * Returns the map fd.  Errors as BPF_MAP_CREATE: EINVAL (bad sizes, flags, type, name),
 * E2BIG (key or value too large, too many entries), ENOMEM. */
BPFRT_API int bpfrt_map_create(enum bpf_map_type type, const char *name, uint32_t key_size,
			       uint32_t value_size, uint32_t max_entries,
			       const struct bpfrt_map_create_opts *opts);

/* flags: BPF_ANY, BPF_NOEXIST (EEXIST if present), BPF_EXIST (ENOENT if absent).
 * E2BIG when a hash map is full or an array index is out of range; EPERM on a frozen or
 * read-only map.  key is NULL for queue and stack maps (the update pushes). */
BPFRT_API int bpfrt_map_update_elem(int fd, const void *key, const void *value,
				    uint64_t flags);
/* Copy the value (all CPUs for per-CPU maps: ncpus * round_up(value_size, 8) bytes).
 * ENOENT if absent.  Queue/stack: peek (key NULL). */
BPFRT_API int bpfrt_map_lookup_elem(int fd, const void *key, void *value);
/* ENOENT if absent; EINVAL for arrays (elements cannot be deleted). */
BPFRT_API int bpfrt_map_delete_elem(int fd, const void *key);
/* key NULL or absent: the first key.  ENOENT after the last. */
BPFRT_API int bpfrt_map_get_next_key(int fd, const void *key, void *next_key);
/* Hash maps: copy and delete atomically; queue/stack: pop (key NULL). */
BPFRT_API int bpfrt_map_lookup_and_delete_elem(int fd, const void *key, void *value);
/* Make the map read-only for the bpf() side (programs may still write).  EBUSY if frozen. */
BPFRT_API int bpfrt_map_freeze(int fd);

/* Map handles: the fast user-space path (no system call per operation).  The fd
 * wrappers above must ask the kernel what an fd is on every call, because only the kernel
 * knows whether it was closed or its number reused since; a handle resolves the fd once
 * and keeps its own duplicate of it, so the map stays alive and reachable through the
 * handle whatever happens to the caller's fd, until bpfrt_map_handle_close().  Each
 * operation then costs the map operation itself (tens of ns when the element is in cache)
 * instead of a system call.  Semantics and errnos are those of the fd wrappers on the fd
 * the handle was opened from (EPERM for a read-only, write-only or frozen map; EFAULT for
 * a NULL key or value; BPF_F_LOCK is EINVAL).  A handle may be used by many threads at
 * once and survives fork(); it is not a file descriptor and cannot be sent to another
 * process (send the fd, open a handle there). */
struct bpfrt_map_handle;

/* Open a handle on map fd; NULL with errno EBADF (closed fd), EINVAL (not a map),
 * ENOMEM or EMFILE. */
BPFRT_API struct bpfrt_map_handle *bpfrt_map_handle_open(int fd);
/* Release the handle, its fd and its map reference; NULL is ignored. */
BPFRT_API void bpfrt_map_handle_close(struct bpfrt_map_handle *h);
/* The handle's own fd (valid until bpfrt_map_handle_close(); do not close it). */
BPFRT_API int bpfrt_map_handle_fd(const struct bpfrt_map_handle *h);
/* As bpfrt_map_lookup_elem(), bpfrt_map_update_elem(), bpfrt_map_delete_elem(). */
BPFRT_API int bpfrt_map_handle_lookup(const struct bpfrt_map_handle *h, const void *key,
				      void *value);
BPFRT_API int bpfrt_map_handle_update(const struct bpfrt_map_handle *h, const void *key,
				      const void *value, uint64_t flags);
BPFRT_API int bpfrt_map_handle_delete(const struct bpfrt_map_handle *h, const void *key);

/* bpfrt's own BPF_PROG_LOAD prog_flags (the kernel has no such bits): the privilege level
 * the verifier applies, the kernel's capability rules.  FULL: root (CAP_SYS_ADMIN, or
 * CAP_BPF + CAP_PERFMON).  BPF_CAPABLE: CAP_BPF without CAP_PERFMON - no pointer leaks, no
 * uninitialised stack reads, Spectre v1 rules.  UNPRIV: no capability - also no loops, no
 * bpf-to-bpf calls, 4,096 instructions, socket filter and cgroup skb programs only.  None
 * set: the calling thread's effective capabilities decide (capget); more than one: EINVAL.
 * bpfrt runs programs inside the caller's process, so a level is the host's policy, not a
 * boundary against the caller: any caller may ask for any level.  docs/VERIFIER.md. */
#define BPFRT_F_PRIV_FULL (1U << 29)
#define BPFRT_F_PRIV_BPF_CAPABLE (1U << 30)
#define BPFRT_F_PRIV_UNPRIV (1U << 31)
#define BPFRT_F_PRIV_MASK (BPFRT_F_PRIV_FULL | BPFRT_F_PRIV_BPF_CAPABLE | BPFRT_F_PRIV_UNPRIV)

/* bpfrt's own BPF_PROG_LOAD prog_flags field: the engine the program runs on, an enum
 * bpfrt_engine in two bits, BPFRT_F_ENGINE(BPFRT_ENGINE_INTERP) etc.  DEFAULT (0): the
 * environment variable BPFRT_ENGINE (interp, checked or jit), the user's default, when it
 * is set; else native code (JIT) where the library was built with it, else CHECKED.  A
 * pinned program runs on the engine it was loaded with in every process.  JIT in a build
 * without it: EOPNOTSUPP. */
#define BPFRT_F_ENGINE_SHIFT 26
#define BPFRT_F_ENGINE_MASK (3U << BPFRT_F_ENGINE_SHIFT)
#define BPFRT_F_ENGINE(engine) (((uint32_t)(engine) << BPFRT_F_ENGINE_SHIFT) & BPFRT_F_ENGINE_MASK)

struct bpfrt_prog_load_opts {
	size_t sz;                     /* sizeof(struct bpfrt_prog_load_opts) */
	uint32_t expected_attach_type; /* attr.expected_attach_type */
	uint32_t prog_flags;           /* BPF_F_* for BPF_PROG_LOAD, BPFRT_F_PRIV_*, BPFRT_F_ENGINE() */
	uint32_t log_level;            /* 0: no log */
	uint32_t log_size;             /* bytes of log_buf */
	char *log_buf;                 /* receives the check's messages */
	const int *fd_array;           /* for lddw BPF_PSEUDO_MAP_IDX(_VALUE) */
};
#define bpfrt_prog_load_opts__last fd_array

/* Load a program: checked, map fds in lddw resolved (the program then holds a reference on
 * each map), ready for BPF_PROG_TEST_RUN.  name may be NULL; license is required (EFAULT
 * when NULL, as in the kernel).  Returns the program fd.  Errors as BPF_PROG_LOAD: E2BIG
 * (no or too many instructions), EINVAL (bad instruction, type, flags, name, log
 * attributes), EBADF (an lddw names a closed fd), EACCES (rejected by the verifier). */
BPFRT_API int bpfrt_prog_load(enum bpf_prog_type type, const char *name, const char *license,
			      const struct bpf_insn *insns, size_t insn_cnt,
			      const struct bpfrt_prog_load_opts *opts);

struct bpfrt_test_run_opts {
	size_t sz;              /* sizeof(struct bpfrt_test_run_opts) */
	const void *data_in;    /* packet (skb and XDP programs) */
	void *data_out;         /* receives the packet after the run (may be NULL) */
	uint32_t data_size_in;
	uint32_t data_size_out; /* in: room in data_out; out: the packet's full size */
	const void *ctx_in;     /* struct __sk_buff, struct xdp_md, or raw_tp u64 arguments */
	void *ctx_out;
	uint32_t ctx_size_in;
	uint32_t ctx_size_out;  /* in: room in ctx_out; out: the context's size */
	uint32_t retval;        /* out: the program's return value */
	int repeat;             /* runs (0 = 1) */
	uint32_t duration;      /* out: mean ns per run */
	uint32_t flags;         /* BPF_F_TEST_* */
	uint32_t cpu;
	uint32_t batch_size;
	uint64_t run_budget;    /* each run's budget in counted instructions, 0: none (see
				 * struct bpfrt_vm_opts); bpfrt's own, the kernel has none */
	uint64_t run_budget_ns; /* ... in ns of wall time, 0: none */
};
#define bpfrt_test_run_opts__last run_budget_ns

/* BPF_PROG_TEST_RUN (socket filter, tc, cgroup skb, XDP, raw tracepoint).  Returns 0 or
 * -errno: EINVAL (bad sizes or context), ENOSPC (data_out or ctx_out too small: filled
 * as far as possible, sizes report what was needed), ENOTSUPP (524) for other types,
 * EFAULT when the run faulted in the checked engine, ETIME when a run spent its
 * run_budget or run_budget_ns (the reason goes to the print callback). */
BPFRT_API int bpfrt_prog_test_run_opts(int prog_fd, struct bpfrt_test_run_opts *opts);

/* Pin an object fd at path, which must lie in the bpffs directory ($BPFRT_FS, default
 * /dev/shm/bpfrt); EPERM elsewhere, EEXIST if path exists, EACCES when that directory
 * is not trusted (another user's: docs/SECURITY.md). */
BPFRT_API int bpfrt_obj_pin(int fd, const char *path);
/* Open a pinned object; returns a new fd.  ENOENT; EACCES if path is not a bpfrt object
 * (a directory, a FIFO, any other file) or lies in an untrusted bpffs directory. */
BPFRT_API int bpfrt_obj_get(const char *path);

/* BPF_OBJ_GET_INFO_BY_FD: fill struct bpf_map_info or struct bpf_prog_info (info_len
 * bytes; updated to the bytes written). */
BPFRT_API int bpfrt_obj_get_info_by_fd(int fd, void *info, uint32_t *info_len);
/* The lines the kernel's /proc/PID/fdinfo/FD shows for a map or program fd after the
 * file's own (map_type ... memlock, map_id, frozen; prog_type ... verified_insns), memlock
 * computed with the kernel's formulas (absent for map types without one), written to buf
 * (size bytes, NUL-terminated).  The length, or -errno: EBADF/EINVAL not a bpfrt map or
 * program, ENOSPC too small (1024 bytes always suffice).  libbpfrt-preload.so answers
 * fdinfo reads with it. */
BPFRT_API int bpfrt_obj_fdinfo(int fd, char *buf, size_t size);

/* Consume the records a BPF_MAP_TYPE_RINGBUF holds (like libbpf's ring_buffer__consume):
 * cb runs for each submitted record in order (discarded ones are skipped) and the
 * consumer position moves past it; a non-zero return from cb stops.  At most one ring's
 * worth of records per call (call again while it returns records).  Returns the number
 * of records handed to cb, or -errno (EINVAL: not a ring buffer; EBADF; EUCLEAN: the
 * ring's positions or a record's length were overwritten by something other than a
 * producer, e.g. another process writing the map's file; records before it were
 * consumed). */
BPFRT_API int bpfrt_ringbuf_consume(int fd, int (*cb)(void *arg, void *data, size_t size),
				    void *arg);

/* An fd that polls readable (poll, select, epoll: POLLIN) when the ring buffer has records
 * to consume: a producer, in any process, wakes it when the consumer had caught up to the
 * record it submits (the kernel's rule: BPF_RB_FORCE_WAKEUP always wakes,
 * BPF_RB_NO_WAKEUP never).  Then call bpfrt_ringbuf_consume(), which also clears the
 * readiness.  It is a pipe's read end: close() it when done.  One consumer (one process)
 * per ring buffer is woken: the last process to call this wins.  Returns the fd or -errno
 * (EINVAL: not a ring buffer; EBADF). */
BPFRT_API int bpfrt_ringbuf_poll_fd(int fd);

/* Produce into a BPF_MAP_TYPE_USER_RINGBUF: an fd to mmap() the producer page and the
 * data through (MAP_SHARED, read-write, from offset one page, as libbpf's
 * user_ring_buffer__new() maps the kernel's), then close().  While a mapping made through
 * it lasts (in any process: a forked child's copy too), BPF_MAP_FREEZE of the map is
 * EBUSY, as the kernel's under a writable mapping; a mapping of the fd itself is not
 * seen; nor is one made by a process the map's file refuses to open (the fd came over
 * SCM_RIGHTS from another user, or the process dropped its privileges): Linux makes a new
 * open description only by opening a path, so that process gets a dup of fd, which maps
 * as the kernel's would.  It waits out a concurrent freeze (signals do not interrupt the
 * wait).  Returns the fd or -errno (EINVAL: not a user ring buffer; EACCES: fd is
 * read-only or write-only; EPERM: the map is frozen, whose writable mappings the kernel refuses; EBADF).
 * libbpfrt-preload.so maps libbpf's producers through it. */
BPFRT_API int bpfrt_user_ringbuf_producer_fd(int fd);

/* Number of CPUs whose values per-CPU maps keep (the kernel's possible CPUs). */
BPFRT_API int bpfrt_num_possible_cpus(void);

#ifdef __cplusplus
}
#endif

#endif
