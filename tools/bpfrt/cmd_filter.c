/* cmd_filter.c - "bpfrt filter" and "bpfrt attach": a tcpdump expression (or a classic
 * program, or an eBPF program of a packet type) run by bpfrt over a pcap/pcapng capture or
 * live packets from an interface (TPACKET_V3 ring); counts, per-verdict totals, matching
 * packets written to a pcap.  Options: filter_args.c; the filter and its counters:
 * filter_runner.c; the benchmark mode (--repeat): filter_bench.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <net/if.h>

#include "bpfrt.h"
#include "filter.h"
#include "isa/isa.h"
#include "json.h"

/* Where packets come from. */
struct source {
	struct brt_pcap_reader *file;
	struct brt_live *live;
	double deadline; /* live: cli_now() past this ends the run; 0 = never */
};

static void dump_progs(const struct sock_filter *prog, size_t n, const struct bpf_insn *insns,
		       size_t ninsns)
{
	char buf[128];

	printf("classic (%zu insns, tcpdump -ddd form):\n%zu\n", n, n);
	for (size_t i = 0; i < n; i++)
		printf("%u %u %u %u\n", prog[i].code, prog[i].jt, prog[i].jf, prog[i].k);
	printf("\neBPF socket filter (%zu insns):\n", ninsns);
	for (size_t i = 0; i < ninsns; i++) {
		brt_disasm_insn(&insns[i], ninsns - i, BRT_DISASM_KERNEL, buf, sizeof(buf));
		printf("%4zu: %s\n", i, buf);
	}
}

static int dump_or_save(const struct fopts *o, const struct runner *r)
{
	struct bpf_insn *insns;
	char err[512];
	size_t n;
	FILE *f;
	int bad;

	if (brt_cbpf_convert(r->classic, r->classic_len, &insns, &n, err, sizeof(err)))
		return cli_error("%s: %s", o->cmd, err);
	if (o->dump)
		dump_progs(r->classic, r->classic_len, insns, n);
	if (o->ebpf_out) {
		f = fopen(o->ebpf_out, "wb");
		bad = !f || fwrite(insns, sizeof(*insns), n, f) != n;
		if (f)
			bad |= fclose(f) != 0;
		if (bad) {
			free(insns);
			return cli_error("%s: cannot write %s: %s", o->cmd, o->ebpf_out,
					 strerror(errno));
		}
	}
	free(insns);
	return 0;
}

static void progress(const struct stats *s, double *last)
{
	double t = cli_now();

	if (t - *last < 0.5)
		return;
	*last = t;
	fprintf(stderr, "\r%" PRIu64 " packets, %" PRIu64 " matched", s->packets, s->matched);
}

static void print_json(const struct fopts *o, const struct runner *r, const struct stats *s)
{
	char key[16];
	struct json j;

	json_init(&j, stdout, o->pretty);
	json_begin_object(&j);
	json_kv_string(&j, o->iface ? "iface" : "capture", o->iface ? o->iface : o->capture);
	json_kv_string(&j, "filter", o->prog_path ? o->prog_path : o->object ? o->object
						: o->ebpf ? o->ebpf : o->expr);
	json_kv_string(&j, "type", cli_pkt_type_name(r->type));
	json_kv_string(&j, "engine", cli_filter_engine_name(o->engine));
	json_kv_uint(&j, "packets", s->packets);
	json_kv_uint(&j, "matched", s->matched);
	json_kv_uint(&j, "bytes", s->bytes);
	json_kv_uint(&j, "matched_bytes", s->matched_bytes);
	json_key(&j, "verdicts");
	json_begin_object(&j);
	for (size_t i = 0; i < s->nr_verdicts; i++) {
		const char *name = brt_pkt_verdict_name(r->type, s->verdict[i]);

		snprintf(key, sizeof(key), "%" PRIu32, s->verdict[i]);
		json_kv_uint(&j, name ? name : key, s->verdict_count[i]);
	}
	json_end_object(&j);
	json_kv_uint(&j, "other_verdicts", s->other_verdicts);
	json_key(&j, "actions");
	json_begin_object(&j);
	for (int a = 0; a < BPFRT_PKT_ACTION_MAX; a++)
		json_kv_uint(&j, bpfrt_pkt_action_name((enum bpfrt_pkt_action)a), s->actions[a]);
	json_end_object(&j);
	json_key(&j, "interrupted");
	json_bool(&j, s->interrupted);
	if (o->iface)
		json_kv_uint(&j, "kernel_drops", s->drops);
	if (o->repeat)
		json_kv_uint(&j, "rounds", o->repeat);
	json_kv_uint(&j, "cpu_us", (uint64_t)(s->seconds * 1e6));
	json_kv_uint(&j, "packets_per_second",
		     s->seconds > 0 ? (uint64_t)((double)s->packets / s->seconds) : 0);
	json_end_object(&j);
	json_finish(&j);
}

static void print_summary(const struct fopts *o, const struct runner *r, const struct stats *s)
{
	if (o->count_only) {
		printf("%" PRIu64 "\n", s->matched);
		return;
	}
	if (o->json) {
		print_json(o, r, s);
		return;
	}
	printf("packets %" PRIu64 ", %s %" PRIu64 " (%.1f%%), bytes %" PRIu64
	       ", %s bytes %" PRIu64 "%s\n",
	       s->packets, r->pp ? "passed" : "matched", s->matched,
	       s->packets ? 100.0 * (double)s->matched / (double)s->packets : 0.0, s->bytes,
	       r->pp ? "passed" : "matched", s->matched_bytes,
	       s->interrupted ? " (interrupted)" : "");
	printf("verdicts:");
	for (size_t i = 0; i < s->nr_verdicts; i++) {
		const char *name = brt_pkt_verdict_name(r->type, s->verdict[i]);

		if (name)
			printf(" %s x%" PRIu64, name, s->verdict_count[i]);
		else
			printf(" %" PRIu32 " x%" PRIu64, s->verdict[i], s->verdict_count[i]);
	}
	if (s->other_verdicts)
		printf(" other x%" PRIu64, s->other_verdicts);
	printf("\nactions:");
	for (int a = 0; a < BPFRT_PKT_ACTION_MAX; a++)
		if (s->actions[a])
			printf(" %s x%" PRIu64, bpfrt_pkt_action_name((enum bpfrt_pkt_action)a),
			       s->actions[a]);
	printf("\n");
	if (o->iface)
		printf("kernel drops %" PRIu64 "\n", s->drops);
	if (o->repeat)
		printf("engine %s: %u rounds, %.3f s of CPU, %.2f Mpackets/s\n", cli_filter_engine_name(o->engine),
		       o->repeat, s->seconds,
		       s->seconds > 0 ? (double)s->packets / s->seconds / 1e6 : 0.0);
}

static int source_next(struct source *src, struct brt_pkt *pkt, char *err, size_t errlen)
{
	int ret;

	if (src->file) {
		if (src->deadline && cli_now() >= src->deadline)
			return 0;
		return brt_pcap_next(src->file, pkt, err, errlen);
	}
	do {
		if (cli_stop || (src->deadline && cli_now() >= src->deadline))
			return 0;
		ret = brt_live_next(src->live, pkt, 100, err, errlen);
	} while (ret == 0);
	return ret;
}

/* Filter the packets as they come. */
static int run_stream(struct runner *r, struct source *src, int linktype, int snaplen,
		      const struct fopts *o, struct stats *s)
{
	struct brt_pcap_writer *w = NULL;
	int tty = isatty(STDERR_FILENO) && !o->count_only && !o->json;
	double last = cli_now();
	char err[512];
	struct brt_pkt pkt;
	int ret;

	if (o->write_path && brt_pcap_writer_open(o->write_path, linktype, snaplen, &w, err,
						  sizeof(err)))
		return cli_error("%s: %s", o->cmd, err);
	while (!cli_stop && (!o->max || s->packets < o->max) &&
	       (ret = source_next(src, &pkt, err, sizeof(err))) == 1) {
		struct brt_pkt_result res;

		if (cli_filter_run_one(r, &pkt, &res, err, sizeof(err))) {
			ret = cli_error("%s: packet %" PRIu64 ": %s", o->cmd, s->packets, err);
			goto out;
		}
		cli_filter_count(s, pkt.wirelen, res.verdict, res.action);
		if (w && res.action == BPFRT_PKT_PASS) {
			pkt.data = res.data;
			pkt.caplen = res.caplen;
			brt_pcap_write(w, &pkt);
		}
		if (tty && (src->live || (s->packets & 0xffff) == 0))
			progress(s, &last);
	}
	if (ret < 0) {
		ret = cli_error("%s: %s", o->cmd, err);
		goto out;
	}
	ret = 0;
out:
	if (tty && (src->live || s->packets > 0xffff))
		fputc('\n', stderr);
	s->interrupted = cli_stop;
	if (src->live) {
		uint64_t seen;

		brt_live_stats(src->live, &seen, &s->drops);
	}
	if (w && brt_pcap_writer_close(w) && !ret)
		ret = cli_error("%s: %s: write failed", o->cmd, o->write_path);
	return ret;
}

int cli_filter_main(int argc, char **argv, const char *cmd)
{
	struct fopts o = { .engine = BPFRT_ENGINE_INTERP, .cmd = cmd };
	struct runner r = { .prog_fd = -1 };
	struct stats s = { 0 };
	struct source src = { 0 };
	char err[512], *expr_buf = NULL;
	int ret, linktype, snaplen;

	ret = cli_filter_parse_args(argc, argv, &o, &expr_buf);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.iface) {
		ret = brt_live_open(o.iface, 0, &src.live, err, sizeof(err));
		linktype = src.live ? brt_live_linktype(src.live) : 1;
		snaplen = 262144;
	} else {
		ret = brt_pcap_open(o.capture, &src.file, err, sizeof(err));
		linktype = src.file ? brt_pcap_linktype(src.file) : 1;
		snaplen = src.file ? brt_pcap_snaplen(src.file) : 262144;
	}
	if (ret) {
		ret = cli_error("%s: %s", o.cmd, err);
		goto out;
	}
	if (src.live)
		r.ifindex = if_nametoindex(o.iface);
	ret = cli_filter_runner_open(&r, &o, linktype, snaplen);
	if (ret)
		goto out;
	if (o.dump || o.ebpf_out) {
		ret = dump_or_save(&o, &r);
		if (ret || o.dump)
			goto out;
	}
	cli_stop_on(0);
	if (o.duration)
		src.deadline = cli_now() + o.duration;
	if (o.repeat) {
		ret = cli_filter_run_bench(&r, src.file, &o, &s, &cli_stop);
	} else {
		double t0 = cli_filter_cpu_now();

		ret = run_stream(&r, &src, linktype, snaplen, &o, &s);
		s.seconds = cli_filter_cpu_now() - t0;
	}
	cli_stop_off();
	if (!ret)
		print_summary(&o, &r, &s);
out:
	cli_filter_runner_close(&r);
	brt_pcap_close(src.file);
	brt_live_close(src.live);
	free(expr_buf);
	return ret;
}

int cmd_filter(int argc, char **argv)
{
	return cli_filter_main(argc, argv, "filter");
}
