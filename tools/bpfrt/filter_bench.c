/* filter_bench.c - "bpfrt filter --repeat R": the capture held in memory (huge pages where
 * the kernel gives them) and filtered R times, in batches, timed in CPU time; compares
 * bpfrt's engines with libpcap's own interpreter on the same counting loop.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/mman.h>

#include "bpfrt.h"
#include "filter.h"

#define BATCH 256           /* packets per bpfrt_pkt_filter_run_batch() in --repeat */

/* cli_filter_count() over a batch of classic-filter verdicts (pass when non-zero), with the packets of
 * the most common verdict tallied in registers: this is the --repeat benchmark's loop,
 * shared by every engine, so it should cost little next to a filter of a few ns. */
static void count_batch(struct stats *s, const struct bpfrt_pkt *pkts, const uint32_t *verdicts,
			size_t m)
{
	uint64_t same = 0, bytes = 0;
	size_t j = 0;

	if (!s->nr_verdicts && m) { /* the first packet's verdict becomes verdict[0] */
		cli_filter_count(s, pkts[0].wirelen, verdicts[0],
		      verdicts[0] ? BPFRT_PKT_PASS : BPFRT_PKT_DROP);
		j = 1;
	}
	for (; j < m; j++) {
		if (verdicts[j] != s->verdict[0]) {
			cli_filter_count(s, pkts[j].wirelen, verdicts[j],
			      verdicts[j] ? BPFRT_PKT_PASS : BPFRT_PKT_DROP);
			continue;
		}
		same++;
		bytes += pkts[j].wirelen;
	}
	s->packets += same;
	s->bytes += bytes;
	s->verdict_count[0] += same;
	if (s->nr_verdicts && s->verdict[0]) {
		s->matched += same;
		s->matched_bytes += bytes;
		s->actions[BPFRT_PKT_PASS] += same;
	} else {
		s->actions[BPFRT_PKT_DROP] += same;
	}
}

/* CPU time of this thread: what --repeat reports, so that other load on the machine
 * does not count against the filter. */
double cli_filter_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The capture's bytes moved to memory backed by huge pages where the kernel gives them
 * (THP): a 1M-packet capture spans 70,000 small pages, and TLB misses would weigh on
 * every engine.  Returns the new copy (*mapped set: free with munmap) or arena itself. */
static uint8_t *huge_copy(uint8_t *arena, size_t used, size_t *mapped)
{
	size_t huge = 2u << 20, len = (used + huge - 1) & ~(huge - 1);
	uint8_t *m;

	*mapped = 0;
	if (used < huge)
		return arena;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return arena;
	madvise(m, len, MADV_HUGEPAGE); /* advice only: small pages work too */
	memcpy(m, arena, used);
	free(arena);
	*mapped = len;
	return m;
}

/* Benchmark: read everything first so only the filter is timed. */
int cli_filter_run_bench(struct runner *r, struct brt_pcap_reader *rd, const struct fopts *o,
			 struct stats *s, const volatile sig_atomic_t *stop)
{
	struct brt_pkt *pkts = NULL, pkt;
	struct bpfrt_pkt *bp = NULL;
	uint32_t verdicts[BATCH];
	enum bpfrt_pkt_action actions[BATCH];
	uint8_t *arena = NULL;
	size_t n = 0, cap = 0, used = 0, acap = 0, mapped = 0;
	char err[512];
	int ret;
	double t0;

	while ((!o->max || n < o->max) && (ret = brt_pcap_next(rd, &pkt, err, sizeof(err))) == 1) {
		if (n == cap) {
			struct brt_pkt *np = realloc(pkts, (cap = cap ? 2 * cap : 1024) * sizeof(*np));

			if (!np)
				goto out_nomem;
			pkts = np;
		}
		if (used + pkt.caplen > acap) {
			uint8_t *na = realloc(arena, acap = 2 * (acap + pkt.caplen));

			if (!na)
				goto out_nomem;
			arena = na;
		}
		memcpy(arena + used, pkt.data, pkt.caplen);
		pkt.data = (const uint8_t *)(uintptr_t)used; /* an offset until arena settles */
		used += pkt.caplen;
		pkts[n++] = pkt;
	}
	if (ret < 0) {
		ret = cli_error("%s: %s", o->cmd, err);
		goto out;
	}
	arena = huge_copy(arena, used, &mapped);
	for (size_t i = 0; i < n; i++)
		pkts[i].data = arena + (uintptr_t)pkts[i].data;
	bp = malloc((n ? n : 1) * sizeof(*bp));
	if (!bp)
		goto out_nomem;
	for (size_t i = 0; i < n; i++)
		bp[i] = (struct bpfrt_pkt){ pkts[i].data, pkts[i].caplen, pkts[i].wirelen };
	/* batches of BATCH packets: one call per batch for bpfrt, one bpf_filter() call per
	 * packet for libpcap (its API), the same counting loop for both */
	t0 = cli_filter_cpu_now();
	for (unsigned round = 0; round < o->repeat && !*stop; round++) {
		for (size_t i = 0; i < n; i += BATCH) {
			size_t m = n - i < BATCH ? n - i : BATCH;

			if (r->pp) {
				for (size_t j = 0; j < m; j++) {
					struct brt_pkt_result res;

					if (cli_filter_run_one(r, &pkts[i + j], &res, err, sizeof(err))) {
						ret = cli_error("%s: %s", o->cmd, err);
						goto out;
					}
					verdicts[j] = res.verdict;
					actions[j] = res.action;
				}
			} else if (r->lib) {
				for (size_t j = 0; j < m; j++)
					verdicts[j] = brt_pcap_classic_run(r->lib, bp[i + j].data,
									   bp[i + j].wirelen,
									   bp[i + j].caplen);
			} else if (bpfrt_pkt_filter_run_batch(r->f, bp + i, m, verdicts, err,
							      sizeof(err))) {
				ret = cli_error("%s: %s", o->cmd, err);
				goto out;
			}
			if (!r->pp) {
				count_batch(s, bp + i, verdicts, m);
				continue;
			}
			for (size_t j = 0; j < m; j++)
				cli_filter_count(s, pkts[i + j].wirelen, verdicts[j], actions[j]);
		}
	}
	s->seconds = cli_filter_cpu_now() - t0;
	s->interrupted = *stop;
	ret = 0;
	goto out;
out_nomem:
	ret = cli_error("%s: out of memory holding the capture", o->cmd);
out:
	free(bp);
	free(pkts);
	if (mapped)
		munmap(arena, mapped);
	else
		free(arena);
	return ret;
}
