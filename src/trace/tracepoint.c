/* tracepoint.c - kernel tracepoints as event sources: perf_event_open(PERF_TYPE_TRACEPOINT)
 * on every online CPU with PERF_SAMPLE_RAW into mmap'd rings; a link thread reads the raw
 * records and runs the program on each with the record as its context, as the kernel
 * runs BPF_PROG_TYPE_TRACEPOINT programs.  The context buffer is PERF_MAX_TRACE_SIZE
 * bytes (all the verifier lets a tracepoint program address), the record at its start;
 * attaching refuses programs that read past the record's fixed fields (EACCES, the
 * kernel's max_ctx_offset rule).  get_current_*() answer with the record's task; a
 * program that calls bpf_get_stackid()/bpf_get_stack() gets the records' call chains
 * (PERF_SAMPLE_CALLCHAIN, stack.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "api/link_rec.h"
#include "trace/trace.h"
#include "util/util.h"
#include "vm/vm.h"

#if defined(__x86_64__)
#include <asm/ptrace.h>
#endif

#define CTX_SIZE 8192      /* PERF_MAX_TRACE_SIZE */
#define DEFAULT_PAGES 64u  /* data pages per CPU ring */
#define MAX_REGIONS 16     /* the record and the program's array maps (.rodata, .bss, ...) */

/* Kernel raw tracepoints whose arguments bpfrt rebuilds from a tracepoint's record
 * (BPF_RAW_TRACEPOINT_OPEN of a BPF_PROG_TYPE_RAW_TRACEPOINT program): the syscall
 * tracepoints, whose raw arguments are (struct pt_regs *regs, long id) and (regs, long
 * ret).  The registers are the syscall's arguments (x86-64 syscall ABI: di, si, dx, r10,
 * r8, r9) in a pt_regs bpfrt fills, so bpf_probe_read_kernel() of regs->di reads them;
 * orig_ax is the id, ax -ENOSYS on entry (what the kernel sets) and the return value on
 * exit.  Every other raw tracepoint passes pointers to kernel objects: not rebuilt. */
enum raw_kind { RAW_NONE, RAW_SYS_ENTER, RAW_SYS_EXIT };

static const struct {
	const char *raw;     /* the raw tracepoint's name */
	const char *tp;      /* the tracepoint whose records hold its arguments */
	enum raw_kind kind;
} raw_tps[] = {
	{ "sys_enter", "raw_syscalls:sys_enter", RAW_SYS_ENTER },
	{ "sys_exit", "raw_syscalls:sys_exit", RAW_SYS_EXIT },
};

#define RAW_CTX_SIZE 96    /* what the verifier lets a raw tracepoint program read */

struct tp_source {
	struct brt_perf_source ps;     /* first: the rings (perf_ring.c) */
	char name[160];
	enum raw_kind raw;
	uint32_t off_id, off_second;   /* raw: the record's id and args[6] or ret */
	uint64_t raw_ctx[RAW_CTX_SIZE / 8];
#if defined(__x86_64__)
	struct pt_regs pt;             /* raw: what raw_ctx[0] points at */
#endif
	uint32_t record_size;
	uint32_t off_comm, off_pid;    /* a record naming a task: its comm[16] and pid, or 0 */
	struct brt_link *link;
	uint64_t ctx[CTX_SIZE / 8];    /* the record, as the program sees it */
	uint32_t last_len;             /* bytes of ctx the previous record used */
	/* what a checked engine may touch besides stack and helper results: the record, then
	 * the array maps the program addresses directly (a global's lddw), as test runs give */
	struct brt_region regs[MAX_REGIONS];
	size_t nregs;
};

/* The raw tracepoint's arguments from the record in src->ctx (record_size bytes were
 * checked at attach to cover the fields read here); the context's address. */
static uint64_t raw_args(struct tp_source *src)
{
	const uint8_t *rec = (const uint8_t *)src->ctx;
	uint64_t id, second[6];

	memcpy(&id, rec + src->off_id, 8);
	memcpy(second, rec + src->off_second, src->raw == RAW_SYS_ENTER ? 48 : 8);
	memset(src->raw_ctx, 0, sizeof(src->raw_ctx));
#if defined(__x86_64__)
	memset(&src->pt, 0, sizeof(src->pt));
	src->pt.orig_rax = id;
	if (src->raw == RAW_SYS_ENTER) {
		src->pt.rdi = second[0];
		src->pt.rsi = second[1];
		src->pt.rdx = second[2];
		src->pt.r10 = second[3];
		src->pt.r8 = second[4];
		src->pt.r9 = second[5];
		src->pt.rax = (unsigned long)-ENOSYS;
	} else {
		src->pt.rax = second[0];
	}
	src->raw_ctx[0] = (uint64_t)(uintptr_t)&src->pt;
#endif
	src->raw_ctx[1] = src->raw == RAW_SYS_ENTER ? id : second[0];
	return (uint64_t)(uintptr_t)src->raw_ctx;
}

/* A sample of src's rings (PERF_SAMPLE_RAW): p is u32 raw_size and raw_size bytes
 * (brt_perf_rings_run() checked the size is there). */
static void run_record(void *arg, const struct brt_trace_task *task, const uint8_t *p,
		       const uint8_t *end)
{
	struct tp_source *src = arg;
	struct brt_run_opts o = { 0 };
	uint32_t len;

	memcpy(&len, p, 4);
	p += 4;
	if (len > CTX_SIZE || len > (size_t)(end - p))
		return;
	memcpy(src->ctx, p, len);
	/* no stale bytes of a longer previous record behind this one */
	if (src->last_len > len)
		memset((uint8_t *)src->ctx + len, 0, src->last_len - len);
	src->last_len = len;
	if (src->off_comm && len >= src->record_size) {
		int32_t pid;

		/* the name the record gives its task, as the kernel read it then: a task that
		 * exits (sched_process_exit) is often gone from /proc before its record runs,
		 * and one forked before the attach had no PERF_RECORD_FORK to name it */
		memcpy(&pid, (const uint8_t *)src->ctx + src->off_pid, 4);
		brt_trace_note_comm(pid, (const char *)src->ctx + src->off_comm, 16);
	}
	o.r1 = (uint64_t)(uintptr_t)src->ctx;
	if (src->raw != RAW_NONE)
		o.r1 = raw_args(src);
	o.regions = src->regs;
	o.nr_regions = src->nregs;
	brt_perf_link_run(src->link, task, &o, src->name);
}

static const struct brt_link_ops tp_ops = {
	.kind = "tracepoint",
	.run = brt_perf_source_run,
	.detach = brt_perf_source_detach,
};

/* One ring per online CPU; CPUs that refuse (offline) are skipped. */
static int open_rings(struct tp_source *src, uint32_t id, unsigned pages)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_RAW;
	brt_perf_attr_sample(&attr);
	if (src->ps.chain) /* kernel and user chains, up to perf_event_max_stack frames */
		attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
	attr.watermark = 1;
	attr.wakeup_watermark = pages * 4096u / 4;
	return brt_perf_source_open(&src->ps, &attr, -1, -1, pages, src->name);
}

/* The record offsets of raw tracepoint kind's fields (id, then args[6] or ret) in tp's
 * format: 0, or -ENOENT when the format lacks them (a kernel that changed it). */
static int raw_fields(struct tp_source *src, const char *tp)
{
	struct bpfrt_tp_field f[32];
	const char *want = src->raw == RAW_SYS_ENTER ? "args[6]" : "ret";
	int n = bpfrt_tracepoint_fields(tp, f, BRT_ARRAY_SIZE(f), NULL, NULL), have = 0;

	for (int i = 0; i < n && i < (int)BRT_ARRAY_SIZE(f); i++) {
		if (!strcmp(f[i].name, "id") && f[i].size == 8) {
			src->off_id = f[i].offset;
			have |= 1;
		} else if (!strcmp(f[i].name, want) &&
			   f[i].size == (src->raw == RAW_SYS_ENTER ? 48u : 8u)) {
			src->off_second = f[i].offset;
			have |= 2;
		}
	}
	if (have == 3 && src->off_id + 8 <= src->record_size &&
	    src->off_second + 8 <= src->record_size)
		return 0;
	brt_print(BPFRT_WARN, "bpfrt: %s: the record has no fields id and %s\n", tp, want);
	return -ENOENT;
}

/* Records whose fields comm[16] and pid name a task (sched_process_exit, sched_wakeup,
 * signal_generate, ...): their offsets, so that each record notes the name (task.c). */
static void comm_fields(struct tp_source *src, const char *tp)
{
	struct bpfrt_tp_field f[32];
	int n = bpfrt_tracepoint_fields(tp, f, BRT_ARRAY_SIZE(f), NULL, NULL);
	uint32_t comm = 0, pid = 0;

	for (int i = 0; i < n && i < (int)BRT_ARRAY_SIZE(f); i++) {
		if (!strcmp(f[i].name, "comm[16]") && f[i].size == 16)
			comm = f[i].offset;
		else if (!strcmp(f[i].name, "pid") && f[i].size == 4)
			pid = f[i].offset;
	}
	if (comm && pid && comm + 16 <= src->record_size && pid + 4 <= src->record_size) {
		src->off_comm = comm;
		src->off_pid = pid;
	}
}

/* bpfrt_tracepoint_attach(), or with raw a raw tracepoint program on the record of the
 * tracepoint raw_tps[] names for it. */
static int attach(int prog_fd, const char *tp, const struct bpfrt_tracepoint_opts *opts,
		  enum raw_kind raw, const char *raw_name)
{
	struct brt_link_desc desc = { .type = BRT_LINK_PERF_EVENT,
				      .perf_type = BRT_PERF_TRACEPOINT };
	uint32_t want = raw == RAW_NONE ? BPF_PROG_TYPE_TRACEPOINT : BPF_PROG_TYPE_RAW_TRACEPOINT;
	struct brt_prog *prog;
	struct tp_source *src;
	unsigned pages;
	uint32_t id = 0;
	int err;

	if (opts && !brt_opts_valid(opts, offsetof(struct bpfrt_tracepoint_opts, ring_pages) +
					   sizeof(opts->ring_pages), "bpfrt_tracepoint_opts"))
		return -(errno = EINVAL);
	pages = BRT_OPTS_GET(opts, ring_pages, 0) ? BRT_OPTS_GET(opts, ring_pages, 0)
						  : DEFAULT_PAGES;
	if (pages & (pages - 1))
		return -(errno = EINVAL);
	err = brt_prog_from_fd(prog_fd, &prog);
	if (err)
		return -(errno = -err);
	src = calloc(1, sizeof(*src));
	if (!src) {
		err = -ENOMEM;
		goto out_put;
	}
	snprintf(src->name, sizeof(src->name), "%s", tp);
	src->raw = raw;
	if (prog->type != want) {
		brt_print(BPFRT_WARN, "bpfrt: %s: a %s runs %s programs; this one has type %u\n",
			  tp, raw ? "raw tracepoint" : "tracepoint",
			  raw ? "BPF_PROG_TYPE_RAW_TRACEPOINT" : "BPF_PROG_TYPE_TRACEPOINT",
			  prog->type);
		err = -EINVAL;
		goto out_free;
	}
	err = bpfrt_tracepoint_fields(tp, NULL, 0, &src->record_size, &id);
	if (err < 0)
		goto out_free;
	if (raw != RAW_NONE) {
		err = raw_fields(src, tp);
		if (err)
			goto out_free;
		/* the kernel's rule (bpf_raw_tp_link_attach): no reads past the arguments */
		if (prog->max_ctx_offset > 2 * 8) {
			brt_print(BPFRT_WARN, "bpfrt: raw tracepoint %s has 2 arguments; the "
				  "program reads its context up to byte %u\n", tp,
				  prog->max_ctx_offset);
			err = -EINVAL;
			goto out_free;
		}
		src->regs[0] = (struct brt_region){ (uint64_t)(uintptr_t)src->raw_ctx,
						    RAW_CTX_SIZE, 0 };
		/* args[0] points at the rebuilt pt_regs: a checked engine (the build without
		 * a JIT) lets bpf_probe_read_kernel read only what its regions name */
		src->regs[1] = (struct brt_region){ (uint64_t)(uintptr_t)&src->pt,
						    sizeof(src->pt), 0 };
	} else if (prog->max_ctx_offset > src->record_size) {
		brt_print(BPFRT_WARN, "bpfrt: %s: the program reads its context up to byte %u; "
			  "the records have %u bytes\n", tp, prog->max_ctx_offset,
			  src->record_size);
		err = -EACCES;
		goto out_free;
	} else {
		src->regs[0] = (struct brt_region){ (uint64_t)(uintptr_t)src->ctx, CTX_SIZE, 0 };
		comm_fields(src, tp);
	}
	{
		size_t first = raw != RAW_NONE ? 2 : 1;

		src->nregs = first + brt_prog_map_regions(prog, src->regs + first,
							  MAX_REGIONS - first);
	}
	src->ps.chain = brt_trace_wants_chain(prog);
	src->ps.min_tail = 4; /* u32 raw_size */
	src->ps.on_sample = run_record;
	err = open_rings(src, id, pages);
	if (err)
		goto out_free;
	err = brt_link_create(&tp_ops, prog, src, &src->link);
	if (err < 0)
		goto out_free;
	/* what the kernel's link would say: a perf link naming the tracepoint without its
	 * category (tp_event->tp->name), or a raw tracepoint link */
	desc.name = strchr(tp, ':') ? strchr(tp, ':') + 1 : tp;
	if (raw != RAW_NONE)
		desc = (struct brt_link_desc){ .type = BRT_LINK_RAW_TRACEPOINT, .name = raw_name };
	brt_link_publish(err, &desc);
	brt_obj_put(&prog->obj);
	return err;
out_free:
	brt_perf_source_free(&src->ps);
out_put:
	brt_obj_put(&prog->obj);
	return -(errno = -err);
}

int bpfrt_tracepoint_attach(int prog_fd, const char *tp,
			    const struct bpfrt_tracepoint_opts *opts)
{
	return attach(prog_fd, tp, opts, RAW_NONE, NULL);
}

int bpfrt_raw_tracepoint_attach(int prog_fd, const char *name,
				const struct bpfrt_tracepoint_opts *opts)
{
#if defined(__x86_64__)
	for (size_t i = 0; name && i < BRT_ARRAY_SIZE(raw_tps); i++)
		if (!strcmp(name, raw_tps[i].raw))
			return attach(prog_fd, raw_tps[i].tp, opts, raw_tps[i].kind,
				      raw_tps[i].raw);
#endif
	brt_print(BPFRT_WARN, "bpfrt: raw tracepoint %s: its arguments cannot be rebuilt "
		  "from a tracepoint's record in user space (bpfrt rebuilds sys_enter and "
		  "sys_exit on x86-64)\n", name ? name : "(null)");
	return -(errno = EOPNOTSUPP);
}
