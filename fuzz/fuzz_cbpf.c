/* fuzz_cbpf.c - fuzz target for the classic BPF checker and converter (src/attach/cbpf.c).
 * Input: a packet length byte, the packet, then 8-byte struct sock_filter records.  A
 * program the checker accepts must convert, load and run on the checked engine without a
 * fault, give the interpreter's verdict, and - where classic semantics are shared (no
 * ancillary or negative offsets, no X-relative loads or shifts) - libpcap's verdict.
 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t plen = size ? data[0] : 0, n;
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
	if (brt_cbpf_convert(prog, n, &insns, &n, err, sizeof(err)) == 0) {
		struct bpfrt_pkt_filter *f[2];
		uint32_t v[2] = { 0, 0 };

		for (int e = 0; e < 2; e++) {
			BPFRT_OPTS(bpfrt_pkt_filter_opts, o,
				   .engine = e ? BPFRT_ENGINE_CHECKED : BPFRT_ENGINE_INTERP);
			if (bpfrt_pkt_filter_load(insns, n, &o, &f[e], err, sizeof(err)) ||
			    bpfrt_pkt_filter_run(f[e], pkt, plen, plen + 7, &v[e], err, sizeof(err)))
				abort(); /* converted programs always load and never fault */
			bpfrt_pkt_filter_free(f[e]);
		}
		if (v[0] != v[1])
			abort();
		n = (size - 1 - plen) / sizeof(*prog);
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
