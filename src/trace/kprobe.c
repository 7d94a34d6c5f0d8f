/* kprobe.c - kernel probes (kprobes, uprobes) as event sources for BPF_PROG_TYPE_KPROBE
 * programs.  The kernel creates the probe (perf_event_open() of the kprobe/uprobe PMU,
 * or a tracefs kprobe_events/uprobe_events entry opened as a tracepoint); bpfrt opens
 * the same event again with the registers of each hit sampled (PERF_SAMPLE_REGS_INTR:
 * for a kprobe the kernel's registers at the probe, for a uprobe the user registers the
 * uprobe handler got) into mmap'd rings, and a link thread runs the program on each
 * sample with those registers laid out as the program's struct pt_regs.
 *
 * What differs from the kernel, by construction: the program runs after the hit, on a
 * thread of this process, not in the probed task (it cannot change what the task does;
 * bpf_override_return and bpf_send_signal are not offered); kernel memory is out of reach
 * (bpf_probe_read_kernel of a kernel address: -EFAULT); orig_rax is not sampled by perf
 * (0); a hit the ring had no room for is counted as lost, not run.  A program that calls
 * bpf_get_stackid()/bpf_get_stack() gets the hits' call chains (PERF_SAMPLE_CALLCHAIN,
 * walked by perf from the same registers: stack.c).
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
#include <asm/perf_regs.h>
#include <asm/ptrace.h>
#endif

#define DEFAULT_PAGES 64u  /* data pages per ring */
#define MAX_REGIONS 16     /* the registers and the program's array maps */
#define PT_REGS_BYTES 168  /* the verifier's context size for kprobe programs */
#define PERF_CTX_BYTES 184 /* struct bpf_perf_event_data: pt_regs, sample_period, addr */

#if defined(__x86_64__)
/* Where each sampled perf register goes in struct pt_regs; perf writes the registers of
 * the mask in ascending bit order.  DS, ES, FS and GS are not in x86-64's pt_regs (perf
 * refuses them there). */
static const struct {
	uint8_t perf;  /* PERF_REG_X86_* */
	uint8_t slot;  /* offset in struct pt_regs / 8 */
} reg_map[] = {
#define R(p, f) { PERF_REG_X86_##p, offsetof(struct pt_regs, f) / 8 }
	R(AX, rax), R(BX, rbx), R(CX, rcx), R(DX, rdx), R(SI, rsi), R(DI, rdi),
	R(BP, rbp), R(SP, rsp), R(IP, rip), R(FLAGS, eflags), R(CS, cs), R(SS, ss),
	R(R8, r8), R(R9, r9), R(R10, r10), R(R11, r11), R(R12, r12), R(R13, r13),
	R(R14, r14), R(R15, r15),
#undef R
};
_Static_assert(sizeof(struct pt_regs) == PT_REGS_BYTES, "pt_regs layout");
#endif

struct kp_source {
	struct brt_perf_source ps;        /* first: the rings (perf_ring.c) */
	struct brt_link *link;
	uint64_t regs[PERF_CTX_BYTES / 8]; /* the program's context */
	uint64_t period;                   /* a perf_event program's sample_period */
	uint64_t mask;                    /* PERF_SAMPLE_REGS_INTR mask */
	unsigned nregs;                   /* registers per sample */
	struct brt_region regions[MAX_REGIONS];
	size_t nregions;
};

/* A sample of src's rings (PERF_SAMPLE_REGS_INTR): vals is u64 abi and, when abi is not
 * PERF_SAMPLE_REGS_ABI_NONE, nregs u64 (brt_perf_rings_run() checked the abi is there). */
static void run_sample(void *arg, const struct brt_trace_task *task, const uint8_t *vals,
		       const uint8_t *end)
{
	struct kp_source *src = arg;
	struct brt_run_opts o = { 0 };
	uint64_t abi;

	memcpy(&abi, vals, 8);
	vals += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || (size_t)(end - vals) < (size_t)src->nregs * 8)
		return; /* no registers (a hit in a kernel thread's user part): nothing to run on */
	memset(src->regs, 0, sizeof(src->regs));
	src->regs[PT_REGS_BYTES / 8] = src->period;
#if defined(__x86_64__)
	for (unsigned i = 0, k = 0; i < BRT_ARRAY_SIZE(reg_map); i++)
		memcpy(&src->regs[reg_map[i].slot], vals + 8 * k++, 8);
#else
	(void)vals;
#endif
	o.r1 = (uint64_t)(uintptr_t)src->regs;
	o.regions = src->regions;
	o.nr_regions = src->nregions;
	brt_perf_link_run(src->link, task, &o, "kprobe program");
}

static const struct brt_link_ops kp_ops = {
	.kind = "kprobe",
	.run = brt_perf_source_run,
	.detach = brt_perf_source_detach,
};

/* The PMU type of /sys/bus/event_source/devices/<name>/type, or -1. */
static long pmu_type(const char *name)
{
	char path[128], buf[32];
	long type = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f))
		type = strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	return type;
}

#if !defined(__x86_64__)
int bpfrt_perf_event_attach(int prog_fd, const void *attr_in, size_t attr_size, int pid,
			    const struct bpfrt_perf_event_opts *opts)
{
	(void)prog_fd, (void)attr_in, (void)attr_size, (void)pid, (void)opts;
	brt_print(BPFRT_WARN, "bpfrt: kprobe programs on kernel probes: x86-64 only\n");
	return -(errno = EOPNOTSUPP);
}
#else
/* What the kernel's perf link on this probe says (bpf_perf_link_fill_probe()): the
 * function or path (config1, this process's string: read through brt_ucopy), the offset
 * (config2; a kprobe's address when no function is named), uretprobe/kretprobe from
 * config bit 0, a uprobe's ref_ctr_offset from config's upper half.  tracefs events
 * (PERF_TYPE_TRACEPOINT: libbpf's legacy probes) are not described here: unseen. */
static void publish(int fd, const struct perf_event_attr *a)
{
	struct brt_link_desc d = { .type = BRT_LINK_PERF_EVENT };
	char name[BRT_LINK_REC_NAME_MAX];
	size_t n = 0;
	int up = (long)a->type == pmu_type("uprobe");

	if (a->type == PERF_TYPE_TRACEPOINT || (!up && (long)a->type != pmu_type("kprobe")))
		return;
	/* byte by byte up to the NUL: the string may end just before an unmapped page */
	for (; a->config1 && n < sizeof(name) - 1; n++)
		if (brt_ucopy(&name[n], (const char *)(uintptr_t)a->config1 + n, 1, 0) ||
		    !name[n])
			break;
	name[n] = '\0';
	d.name = a->config1 ? name : NULL;
	if (up) {
		d.perf_type = a->config & 1 ? BRT_PERF_URETPROBE : BRT_PERF_UPROBE;
		d.offset = a->config2;
		d.addr = a->config >> 32;
	} else {
		d.perf_type = a->config & 1 ? BRT_PERF_KRETPROBE : BRT_PERF_KPROBE;
		if (a->config1)
			d.offset = a->config2;
		else
			d.addr = a->config2;
	}
	brt_link_publish(fd, &d);
}

int bpfrt_perf_event_attach(int prog_fd, const void *attr_in, size_t attr_size, int pid,
			    const struct bpfrt_perf_event_opts *opts)
{
	struct perf_event_attr asked;
	struct perf_event_attr attr;
	struct brt_prog *prog;
	struct kp_source *src;
	unsigned pages;
	int err, probe;

	if (opts && !brt_opts_valid(opts, offsetof(struct bpfrt_perf_event_opts, cpu_plus1) +
					   sizeof(opts->cpu_plus1), "bpfrt_perf_event_opts"))
		return -(errno = EINVAL);
	pages = BRT_OPTS_GET(opts, ring_pages, 0) ? BRT_OPTS_GET(opts, ring_pages, 0)
						  : DEFAULT_PAGES;
	if ((pages & (pages - 1)) || !attr_in || attr_size < PERF_ATTR_SIZE_VER0 || pid < -1)
		return -(errno = EINVAL);
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, attr_in, attr_size < sizeof(attr) ? attr_size : sizeof(attr));
	asked = attr;
	probe = attr.type == PERF_TYPE_TRACEPOINT || (long)attr.type == pmu_type("kprobe") ||
		(long)attr.type == pmu_type("uprobe");
	err = brt_prog_from_fd(prog_fd, &prog);
	if (err)
		return -(errno = -err);
	/* the kernel's pairing (perf_event_set_bpf_prog()): kprobe programs on probes,
	 * perf_event programs on the other events (a timer, a counter) */
	if (prog->type != (probe ? BPF_PROG_TYPE_KPROBE : BPF_PROG_TYPE_PERF_EVENT)) {
		brt_print(BPFRT_WARN, probe ? "bpfrt: a kprobe or uprobe runs "
			  "BPF_PROG_TYPE_KPROBE programs; this one has type %u\n" :
			  "bpfrt: a perf event of type %u that is not a probe runs "
			  "BPF_PROG_TYPE_PERF_EVENT programs\n", probe ? prog->type : attr.type);
		brt_obj_put(&prog->obj);
		return -(errno = EINVAL);
	}
	src = calloc(1, sizeof(*src));
	if (!src) {
		err = -ENOMEM;
		goto out_put;
	}
	for (size_t i = 0; i < BRT_ARRAY_SIZE(reg_map); i++)
		src->mask |= 1ull << reg_map[i].perf;
	src->nregs = BRT_ARRAY_SIZE(reg_map);
	/* the caller's probe, sampled: every hit, its task, CPU and registers; a perf_event
	 * program's event keeps its period or frequency (the program runs on each overflow),
	 * and its context's sample_period is that period (0 with a frequency: perf adjusts
	 * it each time, unsampled here); addr is 0 */
	attr.size = sizeof(attr);
	if (probe) {
		attr.freq = 0;
		attr.sample_period = 1;
	} else if (!attr.freq) {
		src->period = attr.sample_period;
	}
	attr.sample_type = PERF_SAMPLE_REGS_INTR;
	brt_perf_attr_sample(&attr);
	src->ps.chain = brt_trace_wants_chain(prog);
	src->ps.min_tail = 8; /* u64 abi */
	src->ps.on_sample = run_sample;
	if (src->ps.chain) { /* kernel and user chains, up to perf_event_max_stack frames */
		attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr.exclude_callchain_kernel = 0;
		attr.exclude_callchain_user = 0;
		attr.sample_max_stack = 0;
	}
	attr.sample_regs_intr = src->mask;
	attr.read_format = 0;
	attr.disabled = 0;
	attr.inherit = 0;
	attr.enable_on_exec = 0;
	attr.precise_ip = 0;
	attr.watermark = 1;
	attr.wakeup_watermark = pages * 4096u / 4;
	src->regions[0] = (struct brt_region){ (uint64_t)(uintptr_t)src->regs,
					       probe ? PT_REGS_BYTES : PERF_CTX_BYTES, 0 };
	src->nregions = 1 + brt_prog_map_regions(prog, src->regions + 1, MAX_REGIONS - 1);
	err = brt_perf_source_open(&src->ps, &attr, pid,
				   (int)BRT_OPTS_GET(opts, cpu_plus1, 0) - 1, pages,
				   probe ? "the probe with sampled registers" :
				   "the event with sampled registers");
	if (err)
		goto out_free;
	err = brt_link_create(&kp_ops, prog, src, &src->link);
	if (err < 0)
		goto out_free;
	publish(err, &asked);
	brt_obj_put(&prog->obj);
	return err;
out_free:
	brt_perf_source_free(&src->ps);
out_put:
	brt_obj_put(&prog->obj);
	return -(errno = -err);
}
#endif
