/* test_filter.c - socket filters run by bpfrt over captured packets: for every tcpdump
 * expression of exprs.h over generated Ethernet, raw-IP and pcapng captures (short
 * captures included), each bpfrt engine gives libpcap's verdict on every packet and so
 * the same match count as pcap_offline_filter(); plus the public API's edges (options,
 * faulty eBPF stopped by the checked engine, errno).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "bpfrt.h"
#include "exprs.h"
#include "harness.h"
#include "pktgen.h"

#define NPKT 800
#define SEED 0xf11e7e5

static char dir[512];

static const struct {
	enum bpfrt_engine engine;
	const char *name;
} engines[] = {
	{ BPFRT_ENGINE_INTERP, "interp" },
	{ BPFRT_ENGINE_CHECKED, "checked" },
	{ BPFRT_ENGINE_JIT, "jit" },
};
#define NENG (sizeof(engines) / sizeof(engines[0]))

static const char *path_of(const char *name)
{
	static char buf[2][640];
	static int i;

	i = (i + 1) % 2;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* A capture's packets (copies) with libpcap's verdicts, for one batch run of them all. */
struct kept {
	struct bpfrt_pkt *pkts;
	uint32_t *want;
	size_t n, cap;
};

static int keep_packet(struct kept *k, const struct brt_pkt *pkt, uint32_t want)
{
	void *copy;

	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 256;
		struct bpfrt_pkt *p = realloc(k->pkts, cap * sizeof(*p));
		uint32_t *w = p ? realloc(k->want, cap * sizeof(*w)) : NULL;

		if (p)
			k->pkts = p;
		if (!w)
			return -ENOMEM;
		k->want = w;
		k->cap = cap;
	}
	copy = malloc(pkt->caplen ? pkt->caplen : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, pkt->data, pkt->caplen);
	k->pkts[k->n] = (struct bpfrt_pkt){ copy, pkt->caplen, pkt->wirelen };
	k->want[k->n++] = want;
	return 0;
}

static void kept_free(struct kept *k)
{
	for (size_t i = 0; i < k->n; i++)
		free((void *)(uintptr_t)k->pkts[i].data);
	free(k->pkts);
	free(k->want);
}

/* Verdicts of one batch over every kept packet that differ from libpcap's. */
static uint64_t batch_differs(struct bpfrt_pkt_filter *f, const struct kept *k)
{
	uint32_t *v = calloc(k->n + 1, sizeof(*v));
	uint64_t differ = 0;
	char err[256];

	if (!v || bpfrt_pkt_filter_run_batch(f, k->pkts, k->n, v, err, sizeof(err))) {
		free(v);
		return k->n ? k->n : 1;
	}
	for (size_t i = 0; i < k->n; i++)
		differ += v[i] != k->want[i];
	free(v);
	return differ;
}

static void check_expr(const char *file, const char *expr)
{
	struct bpfrt_pkt_filter *f[NENG] = { 0 };
	struct brt_pcap_reader *r = NULL;
	struct brt_pcap_classic *ref = NULL;
	struct sock_filter *prog = NULL;
	uint64_t packets = 0, lib_matched = 0, matched[NENG] = { 0 }, differ[NENG] = { 0 };
	uint64_t packets_seen = 0;
	struct kept all = { 0 };
	char err[256] = "";
	struct brt_pkt pkt;
	size_t n = 0;
	int ret;

	T_CASE(expr[0] ? expr : "(empty expression)");
	ret = brt_pcap_count_matches(path_of(file), expr, &packets, &lib_matched, err,
				     sizeof(err));
	if (!ret)
		ret = brt_pcap_open(path_of(file), &r, err, sizeof(err));
	if (!ret)
		ret = brt_pcap_compile(expr, brt_pcap_linktype(r), brt_pcap_snaplen(r), &prog, &n,
				       err, sizeof(err));
	if (!ret)
		ret = brt_pcap_classic_new(prog, n, &ref);
	for (size_t e = 0; !ret && e < NENG; e++) {
		BPFRT_OPTS(bpfrt_pkt_filter_opts, o, .engine = engines[e].engine);

		ret = bpfrt_pkt_filter_load_cbpf(prog, n, &o, &f[e], err, sizeof(err));
		if (ret == -EOPNOTSUPP)
			ret = 0;
	}
	T_EQ_INT(0, ret);
	if (ret) {
		T_FAIL("%s: %s", file, err);
		goto out;
	}
	while ((ret = brt_pcap_next(r, &pkt, err, sizeof(err))) == 1) {
		uint32_t want = brt_pcap_classic_run(ref, pkt.data, pkt.wirelen, pkt.caplen);

		if (keep_packet(&all, &pkt, want))
			ret = -ENOMEM;

		/* every 64th packet also goes through the batch entry, alone and doubled */
		if (packets_seen++ % 64 == 0) {
			struct bpfrt_pkt two[2] = { { pkt.data, pkt.caplen, pkt.wirelen },
						    { pkt.data, pkt.caplen, pkt.wirelen } };

			for (size_t e = 0; e < NENG; e++) {
				uint32_t v[2] = { 0xbad, 0xbad };

				if (f[e] && (bpfrt_pkt_filter_run_batch(f[e], two, 2, v, err,
									sizeof(err)) ||
					     v[0] != want || v[1] != want))
					differ[e]++;
			}
		}
		for (size_t e = 0; e < NENG; e++) {
			uint32_t got = 0xbad;

			if (!f[e])
				continue;
			if (bpfrt_pkt_filter_run(f[e], pkt.data, pkt.caplen, pkt.wirelen, &got, err,
						 sizeof(err)) || got != want)
				differ[e]++;
			matched[e] += got != 0;
		}
	}
	T_EQ_INT(0, ret);
	for (size_t e = 0; e < NENG; e++) /* and the whole capture as one batch */
		if (f[e])
			differ[e] += batch_differs(f[e], &all);
	for (size_t e = 0; e < NENG; e++) {
		if (!f[e])
			continue;
		if (differ[e] || matched[e] != lib_matched)
			T_FAIL("%s, engine %s: %llu verdicts differ from libpcap's; matched %llu, "
			       "libpcap %llu", file, engines[e].name, (unsigned long long)differ[e],
			       (unsigned long long)matched[e], (unsigned long long)lib_matched);
		else
			T_OK();
	}
	if (getenv("BPFRT_TEST_VERBOSE"))
		printf("%-14s %4llu/%-4llu %s\n", file, (unsigned long long)lib_matched,
		       (unsigned long long)packets, expr);
out:
	for (size_t e = 0; e < NENG; e++)
		bpfrt_pkt_filter_free(f[e]);
	brt_pcap_classic_free(ref);
	brt_pcap_close(r);
	free(prog);
	kept_free(&all);
}

static void test_api(void)
{
	/* r0 = *(u32 *)(r1 + 4096): outside the context */
	static const struct bpf_insn wild[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 0, .src_reg = 1, .off = 4096 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	/* r0 = skb->len */
	static const struct bpf_insn len[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 0, .src_reg = 1,
		  .off = offsetof(struct __sk_buff, len) },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const uint8_t data[20] = { 1 };
	struct bpfrt_pkt_filter *f = NULL;
	const struct bpf_insn *insns;
	uint32_t verdict = 0;
	char err[256] = "";
	size_t n = 0;

	T_CASE("raw ebpf defaults to the checked engine");
	T_EQ_INT(0, bpfrt_pkt_filter_load(wild, 2, NULL, &f, err, sizeof(err)));
	errno = 0;
	T_EQ_INT(-EFAULT, bpfrt_pkt_filter_run(f, data, sizeof(data), 60, &verdict, err,
					       sizeof(err)));
	T_EQ_INT(EFAULT, errno);
	T_CONTAINS("insn 0: ", err);
	{
		struct bpfrt_pkt pk[3] = { { data, 20, 60 }, { data, 20, 60 }, { data, 20, 60 } };
		uint32_t v[3];

		T_EQ_INT(-EFAULT, bpfrt_pkt_filter_run_batch(f, pk, 3, v, err, sizeof(err)));
		T_CONTAINS("packet 0: insn 0: ", err);
	}
	bpfrt_pkt_filter_free(f);

	T_CASE("unverified ebpf is refused on the fast engines");
	{
		BPFRT_OPTS(bpfrt_pkt_filter_opts, o, .engine = BPFRT_ENGINE_INTERP);

		errno = 0;
		T_EQ_INT(-EACCES, bpfrt_pkt_filter_load(wild, 2, &o, &f, err, sizeof(err)));
		T_EQ_INT(EACCES, errno);
		T_CONTAINS("verifier: ", err);
	}

	T_CASE("wire length is skb->len");
	T_EQ_INT(0, bpfrt_pkt_filter_load(len, 2, NULL, &f, err, sizeof(err)));
	T_EQ_INT(0, bpfrt_pkt_filter_run(f, data, sizeof(data), 1514, &verdict, err, sizeof(err)));
	T_EQ_INT(1514, verdict);
	insns = bpfrt_pkt_filter_insns(f, &n);
	T_EQ_INT(2, n);
	T_EQ_INT(len[0].off, insns[0].off);
	bpfrt_pkt_filter_free(f);

	T_CASE("opts with unknown fields");
	{
		struct {
			struct bpfrt_pkt_filter_opts o;
			uint64_t future;
		} big = { .o = { .sz = sizeof(big) }, .future = 1 };

		T_EQ_INT(-EINVAL, bpfrt_pkt_filter_load(len, 2, &big.o, &f, err, sizeof(err)));
		T_CONTAINS("bpfrt_pkt_filter_opts", err);
		big.future = 0;
		T_EQ_INT(0, bpfrt_pkt_filter_load(len, 2, &big.o, &f, err, sizeof(err)));
		bpfrt_pkt_filter_free(f);
	}

	T_CASE("bad classic program");
	{
		static const struct sock_filter noret[] = { BPF_STMT(BPF_LD | BPF_IMM, 1) };

		errno = 0;
		T_EQ_INT(-EINVAL, bpfrt_pkt_filter_load_cbpf(noret, 1, NULL, &f, err, sizeof(err)));
		T_EQ_INT(EINVAL, errno);
		T_CONTAINS("cbpf insn 0: last instruction is not a return", err);
	}

	T_CASE("compile");
	T_EQ_INT(0, bpfrt_pkt_filter_compile("ip", 1, 65535, NULL, &f, err, sizeof(err)));
	{
		uint8_t ip4[34] = { [12] = 0x08, [14] = 0x45 };

		T_EQ_INT(0, bpfrt_pkt_filter_run(f, ip4, sizeof(ip4), sizeof(ip4), &verdict, err,
						 sizeof(err)));
		T_EQ_INT(65535, verdict); /* libpcap returns the snap length */
		ip4[12] = 0x86;
		ip4[13] = 0xdd;
		T_EQ_INT(0, bpfrt_pkt_filter_run(f, ip4, sizeof(ip4), sizeof(ip4), &verdict, err,
						 sizeof(err)));
		T_EQ_INT(0, verdict);
	}
	bpfrt_pkt_filter_free(f);
	T_EQ_INT(-EINVAL, bpfrt_pkt_filter_compile("port 99999", 1, 65535, NULL, &f, err,
						   sizeof(err)));
	T_CONTAINS("pcap: 'port 99999': ", err);
}

/* Several threads share one filter (the per-thread context makes that safe): each thread
 * filters the whole capture and must count what libpcap counts. */
struct thread_arg {
	struct bpfrt_pkt_filter *f;
	const struct bpfrt_pkt *pkts;
	size_t n;
	uint64_t matched;
	int errors;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	char err[256];

	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < a->n; i++) {
			uint32_t v;

			if (bpfrt_pkt_filter_run(a->f, a->pkts[i].data, a->pkts[i].caplen,
						 a->pkts[i].wirelen, &v, err, sizeof(err)))
				a->errors++;
			a->matched += v != 0;
		}
	}
	return NULL;
}

static void test_threads(void)
{
	static const char *const expr = "tcp[tcpflags] & tcp-syn != 0 or udp port 53";
	struct brt_pcap_reader *r = NULL;
	struct bpfrt_pkt *pkts = calloc(NPKT, sizeof(*pkts));
	uint8_t *copy = malloc((size_t)NPKT * PKTGEN_MAX);
	uint64_t packets = 0, lib_matched = 0;
	char err[256] = "";
	struct brt_pkt pkt;
	size_t n = 0;

	T_CASE("threads share a filter");
	T_EQ_INT(0, brt_pcap_count_matches(path_of("ether.pcap"), expr, &packets, &lib_matched,
					   err, sizeof(err)));
	T_EQ_INT(0, brt_pcap_open(path_of("ether.pcap"), &r, err, sizeof(err)));
	while (n < NPKT && brt_pcap_next(r, &pkt, err, sizeof(err)) == 1) {
		memcpy(copy + n * PKTGEN_MAX, pkt.data, pkt.caplen);
		pkts[n] = (struct bpfrt_pkt){ copy + n * PKTGEN_MAX, pkt.caplen, pkt.wirelen };
		n++;
	}
	brt_pcap_close(r);
	for (size_t e = 0; e < NENG; e++) {
		BPFRT_OPTS(bpfrt_pkt_filter_opts, o, .engine = engines[e].engine);
		struct thread_arg args[4];
		pthread_t tids[4];
		struct bpfrt_pkt_filter *f;

		if (bpfrt_pkt_filter_compile(expr, 1, 65535, &o, &f, err, sizeof(err)))
			continue; /* engine not built */
		for (int t = 0; t < 4; t++) {
			args[t] = (struct thread_arg){ f, pkts, n, 0, 0 };
			pthread_create(&tids[t], NULL, thread_main, &args[t]);
		}
		for (int t = 0; t < 4; t++) {
			pthread_join(tids[t], NULL);
			T_EQ_INT(0, args[t].errors);
			T_EQ_U64(20 * lib_matched, args[t].matched);
		}
		bpfrt_pkt_filter_free(f);
	}
	free(copy);
	free(pkts);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char err[256] = "";

	if (!brt_pcap_available())
		T_SKIP("built without libpcap");
	snprintf(dir, sizeof(dir), "%s/bpfrt-filter-XXXXXX", tmp ? tmp : "/tmp");
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a temporary directory");

	T_CASE("generate");
	T_EQ_INT(0, pktgen_write_pcap(path_of("ether.pcap"), SEED, NPKT, 0, err, sizeof(err)));
	T_EQ_INT(0, pktgen_write_pcap(path_of("raw.pcap"), SEED, NPKT / 2, 1, err, sizeof(err)));
	T_EQ_INT(0, pktgen_write_pcapng(path_of("ether.pcapng"), SEED + 1, NPKT / 2));

	for (size_t i = 0; i < sizeof(ether_exprs) / sizeof(ether_exprs[0]); i++) {
		check_expr("ether.pcap", ether_exprs[i]);
		check_expr("ether.pcapng", ether_exprs[i]);
	}
	for (size_t i = 0; i < sizeof(raw_exprs) / sizeof(raw_exprs[0]); i++)
		check_expr("raw.pcap", raw_exprs[i]);
	test_api();
	test_threads();

	if (!t_failed) {
		unlink(path_of("ether.pcap"));
		unlink(path_of("raw.pcap"));
		unlink(path_of("ether.pcapng"));
		rmdir(dir);
	}
	return t_done();
}
