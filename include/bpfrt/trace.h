/* bpfrt/trace.h - tracing: the trace pipe bpf_trace_printk() writes to.  Included by
 * <bpfrt.h>.  Kernel tracepoints, in-application probes (see bpfrt/probe.h) and link fds
 * are declared here as they land.
 */
#ifndef BPFRT_TRACE_H
#define BPFRT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The trace pipe: one file, $BPFRT_FS/trace_pipe (default /dev/shm/bpfrt/trace_pipe),
 * shared by every process; bpf_trace_printk() appends one line per call ("comm-tid [cpu]
 * seconds: bpf_trace_printk: message"), `bpfrt trace-log` follows it.  Writes its path
 * into buf; returns its length or -ENAMETOOLONG. */
BPFRT_API int bpfrt_trace_pipe_path(char *buf, size_t len);

/* ---- kernel tracepoints ------------------------------------------------------------------ */

/* One field of a tracepoint's records, from its tracefs `format` file. */
struct bpfrt_tp_field {
	char name[64];     /* "skbaddr", "common_pid", "buf[16]" */
	char type[64];     /* "void *", "unsigned short" */
	uint32_t offset;   /* bytes from the start of the record (common_type at 0) */
	uint32_t size;     /* bytes */
	int is_signed;
};

/* The record layout of tracepoint tp ("category:name", e.g. "skb:kfree_skb"): up to cap
 * fields into fields (the common_ ones first), the fixed record size (end of the last
 * field) into *record_size and the tracepoint id into *id (both may be NULL).  Mounts
 * tracefs at /sys/kernel/tracing if needed.  Returns the number of fields (may exceed cap)
 * or -errno: ENOENT (no such tracepoint), EINVAL (malformed name), ENODEV (no tracefs),
 * EACCES (not readable); a message names the cause. */
BPFRT_API int bpfrt_tracepoint_fields(const char *tp, struct bpfrt_tp_field *fields,
				      size_t cap, uint32_t *record_size, uint32_t *id);

struct bpfrt_tracepoint_opts {
	size_t sz;           /* sizeof(struct bpfrt_tracepoint_opts) */
	uint32_t ring_pages; /* data pages of each CPU's ring, a power of two (0: 64) */
	uint32_t reserved;   /* zero; see BPFRT_OPTS() */
};
#define bpfrt_tracepoint_opts__last ring_pages

/* Attach a BPF_PROG_TYPE_TRACEPOINT program to kernel tracepoint tp ("skb:kfree_skb"):
 * the tracepoint is opened with perf_event_open() on every online CPU (root, or
 * perf_event_paranoid allowing it) and a thread of this process runs the program on each
 * record, the record as its context (the kernel's layout: common_ fields first; see
 * bpfrt_tracepoint_fields()).  Returns a link fd: closing it or bpfrt_link_detach()
 * detaches; bpfrt_link_stats() counts events.  Errors (-errno, with a message): EINVAL
 * (not a tracepoint program, bad name or opts), ENOENT (unknown tracepoint), ENODEV (no
 * tracefs), EACCES (the program reads past the record), EPERM/EACCES from
 * perf_event_open. */
BPFRT_API int bpfrt_tracepoint_attach(int prog_fd, const char *tp,
				      const struct bpfrt_tracepoint_opts *opts);

/* Attach a BPF_PROG_TYPE_RAW_TRACEPOINT program to kernel raw tracepoint name where
 * bpfrt can rebuild its arguments from a tracepoint's records: "sys_enter" (args[0] a
 * struct pt_regs holding the syscall's arguments in di, si, dx, r10, r8, r9 and the id in
 * orig_ax, readable with bpf_probe_read_kernel(); args[1] the id) and "sys_exit" (ax the
 * return value; args[1] it too), from raw_syscalls:sys_enter/sys_exit, x86-64.  Runs
 * as bpfrt_tracepoint_attach() does.  Returns a link fd or -errno: EOPNOTSUPP (another
 * raw tracepoint: its arguments point at kernel objects), EINVAL (not a raw tracepoint
 * program, reads past args[1]), and bpfrt_tracepoint_attach()'s. */
BPFRT_API int bpfrt_raw_tracepoint_attach(int prog_fd, const char *name,
					  const struct bpfrt_tracepoint_opts *opts);

/* ---- kernel probes (kprobe, uprobe) ------------------------------------------------------- */

struct bpfrt_perf_event_opts {
	size_t sz;           /* sizeof(struct bpfrt_perf_event_opts) */
	uint32_t ring_pages; /* data pages of each ring, a power of two (0: 64) */
	uint32_t cpu_plus1;  /* perf_event_open()'s cpu plus one: that CPU only; 0: pid's */
};
#define bpfrt_perf_event_opts__last cpu_plus1

/* Attach a BPF_PROG_TYPE_KPROBE program to the kernel probe that attr (a struct
 * perf_event_attr of attr_size bytes, as given to perf_event_open()) describes: the
 * kprobe or uprobe PMU (type from /sys/bus/event_source/devices/{kprobe,uprobe}/type,
 * config1 the function name or binary path, config2 the offset or address, config bit 0
 * the return probe) or a kprobe/uprobe event of tracefs (PERF_TYPE_TRACEPOINT and its
 * id).  The kernel creates the probe; bpfrt opens it again with the probe's registers
 * sampled (PERF_SAMPLE_REGS_INTR) into rings a thread of this process drains, and runs
 * the program on each hit with those registers as its struct pt_regs (x86-64 only).  pid
 * as perf_event_open()'s: -1 every process (one ring per online CPU), else that process
 * (0: this one).  bpf_get_current_*() answer with the hit's task and
 * bpf_probe_read_user() reads that task's memory (process_vm_readv() when it is another
 * process); kernel memory is not readable (-EFAULT).  The program runs after the hit,
 * not during it: it can observe, never change what the probed code does.  Returns a
 * link fd (closing it or bpfrt_link_detach() detaches) or -errno: EINVAL (not a kprobe
 * program, attr not a probe, bad opts), EOPNOTSUPP (not x86-64), or perf_event_open()'s
 * errno, with a message. */
/* A BPF_PROG_TYPE_PERF_EVENT program goes on any other event attr describes (a software
 * timer such as PERF_COUNT_SW_CPU_CLOCK, a hardware counter): the event keeps its
 * sample_period or sample_freq and the program runs on each overflow with struct
 * bpf_perf_event_data as its context (the interrupted registers; sample_period the
 * attr's period, 0 in frequency mode; addr 0), as bpftrace's interval and profile probes
 * want.  opts->cpu_plus1 names the one CPU to open the event on (perf_event_open()'s
 * cpu + 1), as those probes open one event per CPU. */
BPFRT_API int bpfrt_perf_event_attach(int prog_fd, const void *attr, size_t attr_size,
				      int pid, const struct bpfrt_perf_event_opts *opts);

/* ---- link fds ------------------------------------------------------------------------- */

/* What a link counted since it was created. */
struct bpfrt_link_stats {
	uint64_t events;  /* program runs (one per event) */
	uint64_t lost;    /* events the source dropped before bpfrt read them (ring full) */
	uint64_t errors;  /* runs that faulted (reported through the print callback) */
	uint64_t nonzero; /* runs that returned non-zero */
};

/* Counters of the link behind link_fd.  Returns 0, -EBADF (closed fd) or -EINVAL (not
 * a live link of this process). */
BPFRT_API int bpfrt_link_stats(int link_fd, struct bpfrt_link_stats *st);

/* Detach now (BPF_LINK_DETACH): when it returns, the program runs no more on the link's
 * source.  The fd stays open (inert) until closed.  Closing every copy of a link fd
 * detaches too, shortly after.  Returns 0, -EBADF or -EINVAL (not a live link). */
BPFRT_API int bpfrt_link_detach(int link_fd);

/* close(link_fd), and when that was the link's last fd (in every process), return only
 * once the link has detached: the program runs no more and the link's thread, rings and
 * reference on the program are gone, as after the kernel's close() of a link's last fd.
 * A plain close() detaches too, but the link's thread does it shortly after close()
 * returns.  For an fd that is no link of this process, or another copy of the link's fd
 * still open: close().  Returns 0 or -errno (close()'s; errno set too). */
BPFRT_API int bpfrt_link_close(int link_fd);

/* Links of bpfrt's attach functions that stand for a kernel link (a tracepoint, kprobe or
 * uprobe perf link, a raw tracepoint, an XDP or tcx link) are visible to other processes
 * as the kernel's are: BPF_LINK_GET_NEXT_ID, BPF_LINK_GET_FD_BY_ID and
 * BPF_OBJ_GET_INFO_BY_FD find them (`bpftool link show` under `bpfrt exec`), through a
 * record in $BPFRT_FS/.bpfrt-links.  Hide this one (an attachment the kernel makes
 * without a link, such as PERF_EVENT_IOC_SET_BPF or a netlink XDP attach).  Returns 0,
 * -EBADF or -EINVAL (not a live link of this process). */
BPFRT_API int bpfrt_link_hide(int link_fd);

#ifdef __cplusplus
}
#endif

#endif
