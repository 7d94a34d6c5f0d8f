/* trace.h - the trace/ folder's interface: the tracing helpers (its rows of
 * the helper registry), the trace pipe trace_printk writes to, kernel tracepoints read
 * through perf_event_open, in-application probes and the link fds that keep them attached.
 * Design notes: docs/ARCHITECTURE.md, section "Tracing".
 */
#ifndef BPFRT_SRC_TRACE_TRACE_H
#define BPFRT_SRC_TRACE_TRACE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "maps/maps.h"

struct bpfrt_run_ctx;
struct brt_link;
struct brt_run_opts;

/* The task an event happened in.  A program run on a kernel tracepoint record answers
 * bpf_get_current_*() about the task the kernel recorded, not about bpfrt's thread; the
 * runner sets it for the duration of the run (task.c, thread-local). */
struct brt_trace_task {
	int32_t pid;  /* thread id (the kernel's pid) */
	int32_t tgid; /* process id */
	uint32_t cpu; /* CPU the event happened on */
	/* the record's call chain (PERF_SAMPLE_CALLCHAIN: ips behind perf's
	 * PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER markers), NULL when it carries none */
	const uint64_t *chain;
	uint32_t chain_nr;
};

/* Make task the current one of this thread's runs (NULL: the thread itself). */
void brt_trace_set_task(const struct brt_trace_task *task);

/* Thread tid is named comm (len bytes at most, NUL-terminated or not): a perf ring's
 * PERF_RECORD_COMM, the name a record of the task gets when it is gone from /proc. */
void brt_trace_note_comm(int32_t tid, const char *comm, size_t len);
/* Thread tid was created by thread parent (PERF_RECORD_FORK): it has parent's name. */
void brt_trace_note_fork(int32_t tid, int32_t parent);

/* The current task's name ("<...>" when gone), thread id and CPU, for trace lines. */
void brt_trace_current(char comm[16], int32_t *pid, int32_t *cpu);

/* The task of this thread's current run on a kernel record (NULL: the thread itself). */
const struct brt_trace_task *brt_trace_get_task(void);

/* Copy len bytes of the process's memory at src into dst without faulting: 0, or -EFAULT
 * when any byte of the range is not readable (probe_read.c). */
int brt_trace_copy(void *dst, uint64_t src, size_t len);
/* Copy a NUL-terminated string of at most cap bytes (NUL included, cap > 0); returns the
 * length including the NUL (cap when truncated: dst[cap - 1] is then NUL) or -EFAULT. */
long brt_trace_copy_str(char *dst, uint64_t src, size_t cap);

/* tracefs.c: the mounted tracefs (mounting it if needed) into buf: 0 or -ENODEV; the
 * events/CAT/NAME directory of tracepoint tp ("cat:name"): 0, -EINVAL (bad name),
 * -ENODEV (no tracefs), -ENOENT (unknown), each with a message. */
int brt_tracefs_dir(char *buf, size_t len);
int brt_tp_open_dir(const char *tp, char *dir, size_t len);

/* ---- perf_ring.c: one perf event and its mmap'd ring --------------------------------- */
struct brt_perf_ring {
	int fd;                              /* the perf event */
	void *base;                          /* control page + data pages */
	size_t map_len;
	struct brt_perf_walk walk;           /* its records (src/maps/maps.h) */
};

/* Open attr for pid (-1: all tasks) on cpu (-1: any) with a ring of pages data pages:
 * 0 or -errno. */
int brt_perf_ring_open(struct perf_event_attr *attr, int pid, int cpu, unsigned pages,
		       struct brt_perf_ring *r);
void brt_perf_ring_close(struct brt_perf_ring *r);
/* The sample fields every source asks for (perf_ring.c's struct sample): TID, TIME (on
 * CLOCK_MONOTONIC: the rings are read in the order the events happened) and CPU; and
 * PERF_RECORD_COMM and PERF_RECORD_FORK records (brt_trace_note_comm(), _fork()). */
void brt_perf_attr_sample(struct perf_event_attr *attr);

/* A link's event source on perf rings (tracepoint.c, kprobe.c): the first member of the
 * link's priv (calloc'd), whose samples have brt_perf_attr_sample()'s fields, with
 * chain set PERF_SAMPLE_CALLCHAIN, then at least min_tail bytes of the source's own
 * fields.  on_sample gets the priv, the task a sample names (its call chain included)
 * and the source's fields [p, end). */
typedef void (*brt_perf_sample_fn)(void *priv, const struct brt_trace_task *task,
				   const uint8_t *p, const uint8_t *end);
struct brt_perf_source {
	struct brt_perf_ring *rings;   /* one per CPU */
	int nrings;
	int chain;                     /* samples carry call chains (stack.c) */
	size_t min_tail;               /* the source's fields: at least this many bytes */
	brt_perf_sample_fn on_sample;
};
/* attr for pid on CPU cpu_only (>= 0: one ring, as perf_event_open()'s cpu), else on
 * every online CPU (pid -1; an offline CPU refuses with ENODEV or EINVAL: skipped) or on
 * any CPU (one process), a ring of pages data pages each: 0 when a ring opened, else
 * -errno after "bpfrt: perf_event_open of WHAT failed: ...". */
int brt_perf_source_open(struct brt_perf_source *ps, struct perf_event_attr *attr, int pid,
			 int cpu_only, unsigned pages, const char *what);
/* Close the rings and free the priv ps starts. */
void brt_perf_source_free(struct brt_perf_source *ps);
/* The link's ops: run is the link thread's loop (wait on the rings and on the link's
 * stop signals, hand each sample on, oldest first across the rings, add what
 * PERF_RECORD_LOST records count to link->lost; returns when the link stops), detach
 * frees the priv. */
void brt_perf_source_run(struct brt_link *link);
void brt_perf_source_detach(struct brt_link *link);

/* Run link's program once on a record, as task did it: o holds r1 and the regions (the
 * rest is set here).  Counts the run in link->events, a fault in link->errors (the first
 * few printed as "bpfrt: WHAT: MESSAGE"), a non-zero return in link->nonzero. */
void brt_perf_link_run(struct brt_link *link, const struct brt_trace_task *task,
		       struct brt_run_opts *o, const char *what);

/* stack.c: does prog call bpf_get_stackid() or bpf_get_stack() (or tail-call a program
 * that may)?  Its event source then asks perf for call chains (PERF_SAMPLE_CALLCHAIN). */
struct brt_prog;
int brt_trace_wants_chain(const struct brt_prog *prog);

/* vma.c: the mapping holding addr in a /proc/PID/maps text read from f (lines
 * "start-end ..." in hex): 0 with [*start, *end), or -ENOENT when no line holds it. */
int brt_vma_find_in(FILE *f, uint64_t addr, uint64_t *start, uint64_t *end);

/* Append one line (no newline in msg) to the trace pipe (pipe.c); 0 or -errno. */
int brt_trace_pipe_write(const char *line, size_t len);

/* The helpers this folder implements, for the registry (src/helpers/registry.c): one
 * X(id, function, program types) each; id names its row of src/vm/helpers.def, types
 * are BRT_FOR_* helper sets (vm/helper_proto.h).  The kernel and user reads are the
 * same copy of this process's memory, except on a kernel probe's hit in another
 * process: the user reads (and the legacy ones, which on x86-64 read user memory below
 * TASK_SIZE) read that process.  get_current_pid_tgid and
 * _uid_gid are in 6.18's bpf_base_func_proto before its capability checks: every
 * caller, unprivileged included, has them. */
#define BRT_TRACE_HELPERS(X)                                                             \
	X(BPF_FUNC_probe_read, brt_helper_probe_read_user,                               \
	  BRT_FOR_TRACE | BRT_FOR_SYSCALL)                                               \
	X(BPF_FUNC_probe_read_str, brt_helper_probe_read_user_str,                       \
	  BRT_FOR_TRACE | BRT_FOR_SYSCALL)                                               \
	X(BPF_FUNC_probe_read_user, brt_helper_probe_read_user,                          \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_probe_read_kernel, brt_helper_probe_read_kernel,                      \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_probe_read_user_str, brt_helper_probe_read_user_str,                  \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_probe_read_kernel_str, brt_helper_probe_read_kernel_str,              \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_trace_printk, brt_helper_trace_printk,                                \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_get_current_pid_tgid, brt_helper_get_current_pid_tgid,                \
	  BRT_FOR_ALL)                                                \
	X(BPF_FUNC_get_current_uid_gid, brt_helper_get_current_uid_gid,                  \
	  BRT_FOR_ALL)                                                \
	X(BPF_FUNC_get_current_comm, brt_helper_get_current_comm,                        \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_get_current_task, brt_helper_get_current_task,                        \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	/* 6.18's bpf_base_func_proto() with CAP_PERFMON (task.c) */                      \
	X(BPF_FUNC_send_signal, brt_helper_send_signal, BRT_FOR_ALL | BRT_NEED_PERFMON)   \
	X(BPF_FUNC_send_signal_thread, brt_helper_send_signal_thread,                    \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_current_task_under_cgroup, brt_helper_current_task_under_cgroup,      \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BPF_FUNC_skb_under_cgroup, brt_helper_skb_under_cgroup, BRT_FOR_TC | BRT_FOR_LWT) \
	X(BPF_FUNC_task_storage_get, brt_helper_task_storage_get, BRT_FOR_ALL | BRT_NEED_BPF) \
	X(BPF_FUNC_task_storage_delete, brt_helper_task_storage_delete,                  \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BRT_FUNC_cgrp_storage_get, brt_helper_cgrp_storage_get, BRT_FOR_ALL | BRT_NEED_BPF) \
	X(BPF_FUNC_get_current_cgroup_id, brt_helper_get_current_cgroup_id,              \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BPF_FUNC_get_current_ancestor_cgroup_id, brt_helper_get_current_ancestor_cgroup_id, \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BRT_FUNC_cgrp_storage_delete, brt_helper_cgrp_storage_delete,                  \
	  BRT_FOR_ALL | BRT_NEED_BPF)                                                    \
	X(BPF_FUNC_trace_vprintk, brt_helper_trace_vprintk, BRT_FOR_ALL | BRT_NEED_PERFMON) \
	X(BPF_FUNC_snprintf, brt_helper_snprintf, BRT_FOR_ALL | BRT_NEED_PERFMON)           \
	X(BPF_FUNC_get_current_task_btf, brt_helper_get_current_task_btf,                \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_get_ns_current_pid_tgid, brt_helper_get_ns_current_pid_tgid,          \
	  BRT_FOR_ALL)                                                                   \
	X(BPF_FUNC_get_attach_cookie, brt_helper_get_attach_cookie, BRT_FOR_TRACE)       \
	X(BPF_FUNC_get_func_ip, brt_helper_get_func_ip, BRT_FOR_TRACE | BRT_FOR_SYSCALL) \
	X(BPF_FUNC_seq_write, brt_helper_seq_write, BRT_HSET(BPF_PROG_TYPE_TRACING))      \
	X(BPF_FUNC_seq_printf, brt_helper_seq_printf, BRT_HSET(BPF_PROG_TYPE_TRACING))  \
	X(BPF_FUNC_seq_printf_btf, brt_helper_seq_printf_btf, BRT_HSET(BPF_PROG_TYPE_TRACING)) \
	/* 6.18's bpf_base_func_proto() with CAP_PERFMON; the copies from user memory    \
	 * may sleep: sleepable programs only (the verifier's helper_might_sleep()) */      \
	X(BPF_FUNC_snprintf_btf, brt_helper_snprintf_btf, BRT_FOR_ALL | BRT_NEED_PERFMON) \
	X(BPF_FUNC_copy_from_user, brt_helper_probe_read_user, BRT_FOR_ALL | BRT_NEED_PERFMON) \
	X(BPF_FUNC_copy_from_user_task, brt_helper_copy_from_user_task,                  \
	  BRT_FOR_ALL | BRT_NEED_PERFMON)                                                \
	X(BPF_FUNC_task_pt_regs, brt_helper_task_pt_regs, BRT_FOR_ALL | BRT_NEED_PERFMON) \
	/* the mapping holding an address, to a callback (vma.c) */                      \
	X(BPF_FUNC_find_vma, brt_helper_find_vma, BRT_FOR_ALL | BRT_NEED_PERFMON)         \
	/* the event's call chain into a stack trace map or a buffer (stack.c) */        \
	X(BPF_FUNC_get_stackid, brt_helper_get_stackid, BRT_FOR_TRACE | BRT_FOR_SYSCALL) \
	X(BPF_FUNC_get_stack, brt_helper_get_stack, BRT_FOR_TRACE | BRT_FOR_SYSCALL)   \
	/* tracing_prog_func_proto() (LSM's and syscall's sets fall back on it); which   \
	 * attach points may call it is the verifier's bpf_d_path_allowed()               \
	 * (verifier/d_path.c): never a syscall program, refused by that check */         \
	X(BPF_FUNC_d_path, brt_helper_d_path,                                            \
	  BRT_HSET(BPF_PROG_TYPE_TRACING) | BRT_HSET(BPF_PROG_TYPE_LSM) | BRT_FOR_SYSCALL)

/* the helpers' declarations: the list is the one place that names them */
BRT_TRACE_HELPERS(BRT_HELPER_DECLARE)

/* the kfunc bpf_stream_vprintk_impl's work (printk.c): the kernel's answers; no stream is
 * kept */
uint64_t brt_trace_stream_vprintk(uint64_t id, uint64_t fmt, uint64_t data, uint64_t data_len,
				  struct bpfrt_run_ctx *ctx);

#endif
