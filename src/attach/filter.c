/* filter.c - socket-filter programs run over packets in this process: the context is a
 * struct __sk_buff whose len is the wire length, LD_ABS/LD_IND read the captured bytes,
 * and r0 is the number of bytes to keep (the kernel's BPF_PROG_TYPE_SOCKET_FILTER
 * contract, which is also what cbpf.c produces from classic BPF).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "bpfrt.h"
#include "util/util.h"
#include "vm/vm.h"

#define OPTS_KNOWN                                                                         \
	(offsetof(struct bpfrt_pkt_filter_opts, bpfrt_pkt_filter_opts__last) +              \
	 sizeof(((struct bpfrt_pkt_filter_opts *)0)->bpfrt_pkt_filter_opts__last))

struct bpfrt_pkt_filter {
	struct bpfrt_vm *vm;
	int checked;             /* the CHECKED engine: the context is granted as a region */
	uint64_t insn_budget;    /* CHECKED: per packet; 0 = the vm's */
};

static int set_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* from_classic: the program came out of cbpf.c, which makes INTERP safe by default. */
static int load(const struct bpf_insn *insns, size_t n, const struct bpfrt_pkt_filter_opts *opts,
		int from_classic, struct bpfrt_pkt_filter **out, char *err, size_t errlen)
{
	enum bpfrt_engine engine = BRT_OPTS_GET(opts, engine, BPFRT_ENGINE_DEFAULT);
	struct bpfrt_pkt_filter *f;
	int ret;

	if (!brt_opts_valid(opts, OPTS_KNOWN, "bpfrt_pkt_filter_opts")) {
		snprintf(err, errlen, "bpfrt_pkt_filter_opts: size too small or unknown fields set");
		return -EINVAL;
	}
	if (engine == BPFRT_ENGINE_DEFAULT)
		engine = from_classic ? BPFRT_ENGINE_INTERP : BPFRT_ENGINE_CHECKED;
	f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	BPFRT_OPTS(bpfrt_vm_opts, vo, .engine = engine,
		   .insn_budget = BRT_OPTS_GET(opts, insn_budget, 0));
	ret = bpfrt_vm_load(insns, n, &vo, &f->vm, err, errlen);
	if (ret) {
		free(f);
		return ret;
	}
	f->checked = engine == BPFRT_ENGINE_CHECKED;
	f->insn_budget = BRT_OPTS_GET(opts, insn_budget, 0);
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
	skb.len = (uint32_t)wirelen;
	ret = brt_pkt_filter_run_skb(f, pkt, (uint32_t)caplen, &skb, verdict, err, errlen);
	return ret ? set_err(ret) : 0;
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
