/* filter.c - socket-filter programs run over packets in this process: the context is a
 * struct __sk_buff whose len is the wire length, LD_ABS/LD_IND read the captured bytes,
 * and r0 is the number of bytes to keep (the kernel's BPF_PROG_TYPE_SOCKET_FILTER
 * contract, which is also what cbpf.c produces from classic BPF).
 *
 * Programs converted from classic BPF call no helper and touch only their stack, the
 * context and the packet, so they skip the vm's general run entry: the vm's pre-decoded
 * program goes to the fast interpreter loop, or the vm's JIT code (the one version of a
 * helper-free program, compiled at load) is called directly, with a per-thread context
 * and stack.  With filters of a dozen instructions, the general entry's set-up would cost
 * more than the filter itself.  The program is loaded the one way every program is
 * (api/prog.c's brt_prog_load_vm(): verifier, then the vm's decode and JIT).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "bpfrt.h"
#include "util/util.h"
#include "vm/vm.h"
#ifdef BPFRT_HAVE_JIT
#include "jit/jit.h"
#endif

#define OPTS_KNOWN                                                                         \
	(offsetof(struct bpfrt_pkt_filter_opts, bpfrt_pkt_filter_opts__last) +              \
	 sizeof(((struct bpfrt_pkt_filter_opts *)0)->bpfrt_pkt_filter_opts__last))

struct bpfrt_pkt_filter {
	struct bpfrt_vm *vm;
	int checked;             /* the CHECKED engine: the context is granted as a region */
	int reads_pkt;           /* has LD_ABS/LD_IND: worth prefetching packets for */
	uint64_t insn_budget;    /* CHECKED: per packet; 0 = the vm's */
	const struct brt_dinsn *code;   /* converted + INTERP: the vm's, for the fast loop */
	const struct brt_jit_prog *jit; /* converted + JIT: the vm's code, called directly */
#ifdef BPFRT_HAVE_JIT
	brt_jit_pkt_fn *jit_pkt;  /* its entries with the packet in registers, or NULL */
	brt_jit_batch_fn *jit_batch;
#endif
};

/* Per-thread state of the direct runs: the context (fields other than len stay zero), the
 * run context the loops and the JIT's LD_ABS read the packet from, and the stack. */
struct direct_run {
	struct __sk_buff skb;
	struct bpfrt_run_ctx ctx;
	_Alignas(16) uint8_t stack[BRT_VM_STACK_BYTES];
	int cached;              /* the last batch ran at cache speed: no prefetching */
};
static _Thread_local struct direct_run tls;

#ifdef BPFRT_HAVE_JIT
/* The JIT's batch entry takes the caller's packets as they are, wire length as ctx_word */
_Static_assert(sizeof(struct bpfrt_pkt) == sizeof(struct brt_jit_pkt) &&
	       offsetof(struct bpfrt_pkt, data) == offsetof(struct brt_jit_pkt, data) &&
	       offsetof(struct bpfrt_pkt, caplen) == offsetof(struct brt_jit_pkt, len) &&
	       offsetof(struct bpfrt_pkt, wirelen) == offsetof(struct brt_jit_pkt, ctx_word) &&
	       offsetof(struct __sk_buff, len) == 0, "bpfrt_pkt is a brt_jit_pkt");
#endif

/* The direct paths for a program converted from classic BPF: what the vm made of it at
 * load.  A program the paths cannot take (none converted from classic) keeps the vm's
 * general run entry. */
static void prepare_direct(struct bpfrt_pkt_filter *f, enum bpfrt_engine engine)
{
	if (engine == BPFRT_ENGINE_INTERP)
		f->code = brt_vm_code(f->vm);
#ifdef BPFRT_HAVE_JIT
	if (engine == BPFRT_ENGINE_JIT) {
		f->jit = brt_vm_jit_fixed(f->vm);
		if (f->jit) {
			f->jit_pkt = brt_jit_pkt_entry(f->jit);
			f->jit_batch = brt_jit_batch_entry(f->jit);
		}
	}
#endif
}

static int set_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* from_classic: the program came out of cbpf.c, which makes INTERP safe by default.
 * Programs given as eBPF run on the fast engines only once the verifier accepts them.
 * The load itself is the program load of api/ (brt_prog_load_vm()): checked as the
 * kernel checks a socket filter loaded by root, then decoded and compiled by the vm. */
static int load(const struct bpf_insn *insns, size_t n, const struct bpfrt_pkt_filter_opts *opts,
		int from_classic, struct bpfrt_pkt_filter **out, char *err, size_t errlen)
{
	enum bpfrt_engine engine = BRT_OPTS_GET(opts, engine, BPFRT_ENGINE_DEFAULT);
	struct brt_prog_vm_opts lo = {
		.prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
		.prog_flags = BPFRT_F_PRIV_FULL,
		.engine = engine,
		.gpl = 1,
		.engine_default = BPFRT_ENGINE_INTERP,
		.keep_rejected = from_classic ? 2 : 1,
	};
	struct bpfrt_pkt_filter *f;
	int ret;

	if (!brt_opts_valid(opts, OPTS_KNOWN, "bpfrt_pkt_filter_opts")) {
		snprintf(err, errlen, "bpfrt_pkt_filter_opts: size too small or unknown fields set");
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	lo.insn_budget = BRT_OPTS_GET(opts, insn_budget, 0);
	ret = brt_prog_load_vm(insns, n, &lo, &f->vm, err, errlen);
	if (ret) {
		free(f);
		return ret;
	}
	engine = brt_vm_engine(f->vm);
	f->checked = engine == BPFRT_ENGINE_CHECKED;
	for (size_t i = 0; i < n; i++)
		if (BPF_CLASS(insns[i].code) == BPF_LD &&
		    (BPF_MODE(insns[i].code) == BPF_ABS || BPF_MODE(insns[i].code) == BPF_IND))
			f->reads_pkt = 1;
	f->insn_budget = lo.insn_budget;
	if (from_classic)
		prepare_direct(f, engine);
	*out = f;
	return 0;
}

int bpfrt_pkt_filter_load(const struct bpf_insn *insns, size_t n,
			  const struct bpfrt_pkt_filter_opts *opts, struct bpfrt_pkt_filter **out,
			  char *err, size_t errlen)
{
	return set_err(load(insns, n, opts, 0, out, err, errlen));
}

int bpfrt_pkt_filter_load_cbpf(const struct sock_filter *prog, size_t len,
			       const struct bpfrt_pkt_filter_opts *opts,
			       struct bpfrt_pkt_filter **out, char *err, size_t errlen)
{
	struct bpf_insn *insns;
	size_t n;
	int ret = brt_cbpf_convert(prog, len, &insns, &n, err, errlen);

	if (ret)
		return set_err(ret);
	ret = load(insns, n, opts, 1, out, err, errlen);
	free(insns);
	return set_err(ret);
}

int bpfrt_pkt_filter_compile(const char *expr, int linktype, int snaplen,
			     const struct bpfrt_pkt_filter_opts *opts,
			     struct bpfrt_pkt_filter **out, char *err, size_t errlen)
{
	struct sock_filter *prog;
	size_t n;
	int ret = brt_pcap_compile(expr, linktype, snaplen, &prog, &n, err, errlen);

	if (ret)
		return set_err(ret);
	ret = bpfrt_pkt_filter_load_cbpf(prog, n, opts, out, err, errlen);
	free(prog);
	return ret;
}

int brt_pkt_filter_run_skb(struct bpfrt_pkt_filter *f, const uint8_t *pkt, uint32_t caplen,
			   struct __sk_buff *skb, uint32_t *verdict, char *err, size_t errlen)
{
	/* the program may read its context, nothing else but the stack and LD_ABS */
	struct brt_region region = { (uint64_t)(uintptr_t)skb, sizeof(*skb), 0 };
	struct brt_run_opts o = {
		.r1 = (uint64_t)(uintptr_t)skb,
		.regions = &region,
		.nr_regions = f->checked,
		.skb_data = pkt,
		.skb_len = caplen,
		.insn_budget = f->insn_budget,
	};
	uint64_t r0 = 0;
	int ret = brt_vm_run_opts(f->vm, &o, &r0, err, errlen);

	*verdict = (uint32_t)r0;
	return ret;
}

int bpfrt_pkt_filter_run(struct bpfrt_pkt_filter *f, const void *pkt, size_t caplen,
			 size_t wirelen, uint32_t *verdict, char *err, size_t errlen)
{
	/* Zeroing a whole __sk_buff per packet costs as much as running a short filter, so
	 * each thread keeps one whose fields stay zero but len (programs may only read it:
	 * the checked engine grants it read-only, converted programs never write it). */
	static _Thread_local struct __sk_buff skb;
	int ret;

	if (caplen > UINT32_MAX || wirelen > UINT32_MAX) {
		snprintf(err, errlen, "packet of %zu bytes is too large", caplen);
		return set_err(-EINVAL);
	}
	if (f->code || f->jit) {
		uint64_t r0 = 0;

		tls.skb.len = (uint32_t)wirelen;
		tls.ctx.skb_data = pkt;
		tls.ctx.skb_len = caplen;
#ifdef BPFRT_HAVE_JIT
		if (f->jit_pkt) {
			*verdict = (uint32_t)f->jit_pkt((uint64_t)(uintptr_t)&tls.skb, pkt, caplen);
			return 0;
		}
		if (f->jit) {
			*verdict = (uint32_t)brt_jit_call(f->jit, (uint64_t)(uintptr_t)&tls.skb, 0,
							  &tls.ctx);
			return 0;
		}
#endif
		struct brt_exec ex = {
			.code = f->code,
			.r1 = (uint64_t)(uintptr_t)&tls.skb,
			.stack = tls.stack,
			.ctx = &tls.ctx,
		};
		if (brt_vm_interp_fast(&ex, &r0))
			return set_err(brt_vm_fault_msg(&ex.fault, err, errlen));
		*verdict = (uint32_t)r0;
		return 0;
	}
	skb.len = (uint32_t)wirelen;
	ret = brt_pkt_filter_run_skb(f, pkt, (uint32_t)caplen, &skb, verdict, err, errlen);
	return ret ? set_err(ret) : 0;
}

/* Packets of a large capture are not in the cache: the filter's first load waits for
 * memory, and that wait is most of a short filter's time.  A batch runs in chunks of CHUNK
 * packets, and before each chunk the headers (two cache lines: tcpdump filters read the
 * first ~60 bytes) of the packets PREFETCH_DIST places ahead are requested into L2 (into
 * L1, the requests would queue behind each other), so the waits overlap with the work on
 * the current packets.  Filters that never read the packet skip this. */
#define CHUNK 16
#define PREFETCH_DIST 32

static void prefetch_headers(const struct bpfrt_pkt *pkts, size_t from, size_t n)
{
	size_t end = from + CHUNK < n ? from + CHUNK : n;

	for (size_t i = from; i < end; i++) {
		const char *d = pkts[i].data;

		__builtin_prefetch(d, 0, 2); /* prefetcht1: to L2 */
		__builtin_prefetch(d + 60, 0, 2);
		/* GCC 12 deletes a loop of nothing but prefetches; a use of d keeps it */
		__asm__ volatile("" : : "r"(d));
	}
}

/* pkts[0..n), n <= CHUNK.  On failure *bad is the index of the packet that failed. */
static int run_chunk(struct bpfrt_pkt_filter *f, const struct bpfrt_pkt *pkts, size_t n,
		     uint32_t *verdicts, size_t *bad, char *err, size_t errlen)
{
#ifdef BPFRT_HAVE_JIT
	if (f->jit_batch) {
		f->jit_batch(&tls.skb, (const struct brt_jit_pkt *)(const void *)pkts, n, verdicts);
		return 0;
	}
	if (f->jit) {
		struct direct_run *t = &tls;

		for (size_t i = 0; i < n; i++) {
			t->skb.len = pkts[i].wirelen;
			t->ctx.skb_data = pkts[i].data;
			t->ctx.skb_len = pkts[i].caplen;
			verdicts[i] = (uint32_t)brt_jit_call(f->jit, (uint64_t)(uintptr_t)&t->skb, 0,
							     &t->ctx);
		}
		return 0;
	}
#endif
	for (size_t i = 0; i < n; i++) {
		int ret = bpfrt_pkt_filter_run(f, pkts[i].data, pkts[i].caplen, pkts[i].wirelen,
					       &verdicts[i], err, errlen);

		if (ret) {
			*bad = i;
			return ret;
		}
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bpfrt_pkt_filter_run_batch(struct bpfrt_pkt_filter *f, const struct bpfrt_pkt *pkts,
			       size_t n, uint32_t *verdicts, char *err, size_t errlen)
{
	/* Packets already in the cache (a small capture filtered again and again) gain
	 * nothing from prefetching and lose up to a third of a JIT filter's speed to the
	 * prefetch instructions.  So each thread times its batches: cached packets take a
	 * few ns each, packets from memory over CACHED_NS with or without prefetching. */
	enum { CACHED_NS = 10 };
	int timed = f->reads_pkt && n >= 4 * CHUNK, pf = f->reads_pkt && !tls.cached;
	uint64_t t0 = timed ? now_ns() : 0;

	/* the packets the first chunks reach before the steady prefetching does */
	for (size_t i = CHUNK; pf && i < PREFETCH_DIST; i += CHUNK)
		prefetch_headers(pkts, i, n);
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t m = n - i < CHUNK ? n - i : CHUNK, bad = 0;
		int ret;

		if (pf)
			prefetch_headers(pkts, i + PREFETCH_DIST, n);
		ret = run_chunk(f, pkts + i, m, verdicts + i, &bad, err, errlen);
		if (ret) {
			char msg[256];

			snprintf(msg, sizeof(msg), "%s", err);
			snprintf(err, errlen, "packet %zu: %s", i + bad, msg);
			return ret;
		}
	}
	if (timed)
		tls.cached = now_ns() - t0 < (uint64_t)CACHED_NS * n;
	return 0;
}

const struct bpf_insn *bpfrt_pkt_filter_insns(const struct bpfrt_pkt_filter *f, size_t *n)
{
	return brt_vm_insns(f->vm, n);
}

void bpfrt_pkt_filter_free(struct bpfrt_pkt_filter *f)
{
	if (!f)
		return;
	bpfrt_vm_free(f->vm);
	free(f);
}
