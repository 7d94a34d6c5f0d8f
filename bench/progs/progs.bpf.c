/* progs.bpf.c - the benchmark workloads as eBPF (clang -O2 -target bpf), one program per
 * section.  raw_*: r1 = packet, r2 = length, the entry bpfrt engines use.  xdp_*: the same
 * work on an XDP context, for the kernel's JIT through BPF_PROG_TEST_RUN.  No maps, no
 * globals, no calls, so each section is self-contained raw instructions (bench/run.sh cuts
 * them out with llvm-objcopy).
 */
#include "flow.h"
#include "loop.h"

#define SEC(name) __attribute__((section(name), used))

struct xdp_md {
	uint32_t data;
	uint32_t data_end;
};

SEC("raw_empty") uint64_t prog_raw_empty(const uint8_t *pkt, uint64_t len)
{
	(void)pkt;
	(void)len;
	return 0;
}

SEC("raw_flow") uint64_t prog_raw_flow(const uint8_t *pkt, uint64_t len)
{
	return bench_flow(pkt, pkt + len);
}

SEC("raw_loop") uint64_t prog_raw_loop(const uint8_t *pkt, uint64_t len)
{
	return len < 8 ? 0 : bench_loop(BENCH_LD64(pkt));
}

SEC("xdp_empty") int prog_xdp_empty(struct xdp_md *ctx)
{
	(void)ctx;
	return 0;
}

SEC("xdp_flow") int prog_xdp_flow(struct xdp_md *ctx)
{
	const uint8_t *pkt = (const uint8_t *)(long)ctx->data;

	return (int)bench_flow(pkt, (const uint8_t *)(long)ctx->data_end);
}

SEC("xdp_loop") int prog_xdp_loop(struct xdp_md *ctx)
{
	const uint8_t *pkt = (const uint8_t *)(long)ctx->data;

	if (pkt + 8 > (const uint8_t *)(long)ctx->data_end)
		return 0;
	return (int)bench_loop(BENCH_LD64(pkt));
}
