/* fuzz_cbpf.c - fuzz target for the classic BPF checker and converter (src/attach/cbpf.c).
 * Input: a packet length byte, the packet, then 8-byte struct sock_filter records.  A
 * program the checker accepts must convert, load and run on the checked engine without a
 * fault, give the interpreter's verdict, and - where classic semantics are shared (no
 * ancillary or negative offsets, no X-relative loads or shifts) - libpcap's verdict.  The
 * direct paths of converted programs (pre-decoded interpreter, JIT with the packet in
 * registers and its batch entry) must give the interpreter's verdicts too, on the packet
 * and on shorter captures of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "bpfrt.h"
#include "fuzz.h"

/* libpcap and Linux differ on X-relative loads (signed offsets), shifts by X >= 32 and
 * negative constant offsets (ancillary data, SKF_LL_OFF); leave those to the engines. */
static int libpcap_comparable(const struct sock_filter *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t c = p[i].code;

		if (BPF_CLASS(c) == BPF_LD && BPF_MODE(c) == BPF_IND)
			return 0;
		if ((c == (BPF_ALU | BPF_LSH | BPF_X)) || c == (BPF_ALU | BPF_RSH | BPF_X))
			return 0;
		if ((BPF_MODE(c) == BPF_ABS || BPF_MODE(c) == BPF_MSH) && (int32_t)p[i].k < 0)
			return 0;
	}
	return 1;
}

/* The packet cut to several capture lengths, wire length plen + 7 */
#define NCUTS 4

/* The direct paths of engine e on every cut, one at a time and as one batch, against the
 * general interpreter's verdicts want[]. */
static void check_direct(const struct sock_filter *prog, size_t n, enum bpfrt_engine e,
			 const struct bpfrt_pkt *cuts, const uint32_t *want)
{
	BPFRT_OPTS(bpfrt_pkt_filter_opts, o, .engine = e);
	struct bpfrt_pkt_filter *f;
	uint32_t v[NCUTS];
	char err[256];
	int ret = bpfrt_pkt_filter_load_cbpf(prog, n, &o, &f, err, sizeof(err));

	if (ret == -EOPNOTSUPP)
		return; /* engine not built */
	if (ret)
		abort();
	for (size_t i = 0; i < NCUTS; i++)
		if (bpfrt_pkt_filter_run(f, cuts[i].data, cuts[i].caplen, cuts[i].wirelen, &v[i],
					 err, sizeof(err)) || v[i] != want[i])
			abort();
	memset(v, 0xee, sizeof(v));
	if (bpfrt_pkt_filter_run_batch(f, cuts, NCUTS, v, err, sizeof(err)))
		abort();
	for (size_t i = 0; i < NCUTS; i++)
		if (v[i] != want[i])
			abort();
	bpfrt_pkt_filter_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t plen = size ? data[0] : 0, n, n_insns;
	const uint8_t *pkt = data + 1;
	struct sock_filter *prog;
	struct bpf_insn *insns;
	char err[256];

	if (size < 1 + plen)
		return 0;
	n = (size - 1 - plen) / sizeof(*prog);
	prog = malloc(n ? n * sizeof(*prog) : 1);
	if (!prog)
		return 0;
	memcpy(prog, pkt + plen, n * sizeof(*prog));
	if (brt_cbpf_convert(prog, n, &insns, &n_insns, err, sizeof(err)) == 0) {
		struct bpfrt_pkt_filter *f[2];
		uint32_t v[2] = { 0, 0 };

		for (int e = 0; e < 2; e++) {
			BPFRT_OPTS(bpfrt_pkt_filter_opts, o,
				   .engine = e ? BPFRT_ENGINE_CHECKED : BPFRT_ENGINE_INTERP);
			if (bpfrt_pkt_filter_load(insns, n_insns, &o, &f[e], err, sizeof(err)) ||
			    bpfrt_pkt_filter_run(f[e], pkt, plen, plen + 7, &v[e], err, sizeof(err)))
				abort(); /* converted programs always load and never fault */
			bpfrt_pkt_filter_free(f[e]);
		}
		if (v[0] != v[1])
			abort();
		struct bpfrt_pkt cuts[NCUTS];
		uint32_t want[NCUTS];
		BPFRT_OPTS(bpfrt_pkt_filter_opts, io, .engine = BPFRT_ENGINE_INTERP);
		if (bpfrt_pkt_filter_load(insns, n_insns, &io, &f[0], err, sizeof(err)))
			abort();
		for (size_t i = 0; i < NCUTS; i++) {
			cuts[i] = (struct bpfrt_pkt){ pkt, (uint32_t)(plen * (NCUTS - i) / NCUTS),
						      (uint32_t)plen + 7 };
			if (bpfrt_pkt_filter_run(f[0], pkt, cuts[i].caplen, cuts[i].wirelen,
						 &want[i], err, sizeof(err)))
				abort();
		}
		bpfrt_pkt_filter_free(f[0]);
		check_direct(prog, n, BPFRT_ENGINE_INTERP, cuts, want);
		check_direct(prog, n, BPFRT_ENGINE_JIT, cuts, want);
		struct brt_pcap_classic *ref;
		if (libpcap_comparable(prog, n) && brt_pcap_classic_new(prog, n, &ref) == 0) {
			if (brt_pcap_classic_run(ref, pkt, (uint32_t)plen + 7, (uint32_t)plen) != v[0])
				abort();
			brt_pcap_classic_free(ref);
		}
		free(insns);
	}
	free(prog);
	return 0;
}
