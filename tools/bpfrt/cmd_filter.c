/* cmd_filter.c - "bpfrt filter" and "bpfrt attach": a tcpdump expression (or a classic
 * program) compiled by libpcap, converted to an eBPF socket filter and run by bpfrt over a
 * pcap/pcapng capture or live packets from an interface (TPACKET_V3 ring); counts,
 * per-verdict totals, matching packets written to a pcap, and a benchmark mode that
 * compares engines with libpcap's own interpreter on packets held in memory.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>
#include <sys/mman.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "bpfrt.h"
#include "cli.h"
#include "isa/isa.h"
#include "json.h"

#define ENGINE_LIBPCAP (-1) /* libpcap's classic interpreter instead of a bpfrt engine */
#define MAX_VERDICTS 8      /* distinct verdict values counted one by one */
#define BATCH 256           /* packets per bpfrt_pkt_filter_run_batch() in --repeat */

struct fopts {
	const char *expr;    /* tcpdump expression, or NULL with prog_path */
	const char *prog_path;
	const char *capture;  /* file, or NULL with iface */
	const char *iface;    /* live capture */
	double duration;      /* live: stop after this many seconds, 0 = never */
	const char *cmd;      /* "filter" or "attach", for messages */
	const char *write_path;
	int engine;          /* enum bpfrt_engine or ENGINE_LIBPCAP */
	int count_only;
	int json;
	int dump;
	const char *ebpf_out; /* write the converted program here (raw instructions) */
	const char *object;   /* eBPF instead of classic: an ELF object's program */
	const char *prog_name;
	const char *ebpf;     /* ... or raw instructions of prog_type */
	enum bpf_prog_type prog_type;
	int engine_set;       /* -e given */
	int pretty;
	uint64_t max;        /* 0 = all */
	unsigned repeat;     /* benchmark rounds, 0 = normal run */
};

struct stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t matched;
	uint64_t matched_bytes;
	uint32_t verdict[MAX_VERDICTS];
	uint64_t verdict_count[MAX_VERDICTS];
	size_t nr_verdicts;
	uint64_t other_verdicts; /* packets whose verdict did not fit the table */
	uint64_t actions[BPFRT_PKT_ACTION_MAX];
	uint64_t drops;          /* live: packets the kernel dropped (ring full) */
	double seconds;
	int interrupted;
};

/* Filter state: one of a bpfrt filter, libpcap's interpreter or an eBPF program of a
 * packet type (pp, with its object or fd). */
struct runner {
	struct bpfrt_pkt_filter *f;
	struct brt_pcap_classic *lib;
	struct brt_pkt_prog *pp;
	struct bpfrt_object *obj;
	int prog_fd;
	uint32_t type;       /* BPF_PROG_TYPE_*: SOCKET_FILTER for f and lib */
	uint32_t ifindex;    /* live: the interface's, for the program's context */
	struct sock_filter *classic;
	size_t classic_len;
};

/* Where packets come from. */
struct source {
	struct brt_pcap_reader *file;
	struct brt_live *live;
	double deadline; /* live: now() past this ends the run; 0 = never */
};

static volatile sig_atomic_t stop_requested;
static const char *cmd_name = "filter"; /* or "attach": prefixes messages */

static void on_sigint(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void filter_usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt filter [OPTIONS] EXPRESSION... CAPTURE\n"
		"       bpfrt filter [OPTIONS] --prog FILE CAPTURE\n"
		"       bpfrt filter [OPTIONS] (--object OBJ.o [--name FUNC] |\n"
		"                              --ebpf FILE --type socket|tc|xdp) CAPTURE\n"
		"       bpfrt attach --iface IF [OPTIONS] [EXPRESSION... | --object ... | --ebpf ...]\n\n"
		"Compile a tcpdump EXPRESSION with libpcap for CAPTURE's link type, convert the\n"
		"classic BPF program to an eBPF socket filter and run it on every packet of\n"
		"CAPTURE (pcap or pcapng, '-' = stdin), or of live traffic on interface IF\n"
		"(AF_PACKET, TPACKET_V3 ring; needs CAP_NET_RAW; Ethernet and loopback).\n"
		"Prints packets, matches and bytes.  Instead of an expression, an eBPF program\n"
		"of a packet type runs on every packet from the Ethernet header on: a socket\n"
		"filter (verdict = bytes to keep, 0 = drop), a tc classifier (TC_ACT_*) or an XDP\n"
		"program (XDP_*); verdicts and actions (pass, drop, tx, redirect, aborted) are\n"
		"counted and --write keeps the passing packets as the program left them.\n\n"
		"Options:\n"
		"  -i, --iface IF      live capture on IF instead of a file (bpfrt attach needs it)\n"
		"  -t, --duration S    stop after S seconds\n"
		"  -c, --count         print only the number of matching packets\n"
		"  -w, --write OUT     write the matching packets to the pcap file OUT, each cut to\n"
		"                      the filter's verdict (bytes to keep)\n"
		"  -e, --engine E      interp (default), checked, jit, or libpcap (libpcap's own\n"
		"                      classic interpreter, for comparison)\n"
		"  -p, --prog FILE     classic program as printed by tcpdump -ddd (or -dd) instead\n"
		"                      of an expression\n"
		"  -n, --max N         stop after N packets\n"
		"  -j, --json          print the summary as one JSON object\n"
		"  -O, --object OBJ.o  run the eBPF object's first socket/tc/xdp program (the maps\n"
		"                      of the object are created in bpfrt)\n"
		"      --name FUNC     run the program FUNC of --object instead\n"
		"  -E, --ebpf FILE     run eBPF instructions (raw, hex, asm or .data as bpfrt run\n"
		"                      reads them) loaded as --type\n"
		"  -T, --type T        socket, tc or xdp: the program type of --ebpf\n"
		"      --pretty        -j, indented\n"
		"  -d, --dump          print the classic and the eBPF program and exit\n"
		"  -o, --ebpf-out OUT  also write the eBPF program to OUT as raw instructions (for\n"
		"                      bpfrt run/jit or a BPF_PROG_TYPE_SOCKET_FILTER load)\n"
		"      --repeat R      benchmark: hold the capture in memory and filter it R times,\n"
		"                      then report packets per second of CPU time\n"
		"  -h, --help          show this help\n\n"
		"Ctrl-C stops early and still prints the summary.  A progress line goes to stderr\n"
		"when it is a terminal.  Exit status: 0, 1 on errors, 2 on usage errors.\n");
}

static int parse_engine(const char *s)
{
	if (!strcmp(s, "interp"))
		return BPFRT_ENGINE_INTERP;
	if (!strcmp(s, "checked"))
		return BPFRT_ENGINE_CHECKED;
	if (!strcmp(s, "jit"))
		return BPFRT_ENGINE_JIT;
	if (!strcmp(s, "libpcap"))
		return ENGINE_LIBPCAP;
	return -2;
}

static const char *engine_name(int engine)
{
	switch (engine) {
	case BPFRT_ENGINE_CHECKED:
		return "checked";
	case BPFRT_ENGINE_JIT:
		return "jit";
	case ENGINE_LIBPCAP:
		return "libpcap";
	default:
		return "interp";
	}
}

/* A classic program in tcpdump -ddd form ("N" then N lines "code jt jf k") or -dd form
 * ("{ 0x28, 0, 0, 0x0000000c },"): all integers of the file, grouped by four. */
static int read_prog(const char *path, struct sock_filter **out, size_t *n)
{
	char *text, *p, *end;
	uint64_t *num = NULL;
	size_t len, cnt = 0, cap = 0, first = 0;
	int ret = cli_read_file(path, &text, &len);

	if (ret)
		return cli_error("%s: %s: %s", cmd_name, path, strerror(-ret));
	for (p = text; *p;) {
		if (*p < '0' || *p > '9') {
			p++;
			continue;
		}
		if (cnt == cap) {
			uint64_t *nn = realloc(num, (cap = cap ? cap * 2 : 64) * sizeof(*num));

			if (!nn) {
				free(num);
				free(text);
				return cli_error("%s: out of memory", cmd_name);
			}
			num = nn;
		}
		errno = 0;
		num[cnt] = strtoull(p, &end, 0);
		if (errno || num[cnt] > UINT32_MAX) {
			ret = cli_error("%s: %s: offset %zu: number out of range", cmd_name, path,
					(size_t)(p - text));
			goto out;
		}
		cnt++;
		p = end;
	}
	if (cnt >= 1 && cnt == 1 + 4 * num[0])
		first = 1; /* -ddd: leading count */
	else if (cnt == 0 || cnt % 4) {
		ret = cli_error("%s: %s: expected the output of tcpdump -ddd or -dd", cmd_name, path);
		goto out;
	}
	*n = (cnt - first) / 4;
	*out = calloc(*n ? *n : 1, sizeof(**out));
	if (!*out) {
		ret = cli_error("%s: out of memory", cmd_name);
		goto out;
	}
	for (size_t i = 0; i < *n; i++) {
		const uint64_t *q = &num[first + 4 * i];

		if (q[0] > UINT16_MAX || q[1] > UINT8_MAX || q[2] > UINT8_MAX) {
			free(*out);
			*out = NULL;
			ret = cli_error("%s: %s: insn %zu: code, jt or jf out of range", cmd_name, path, i);
			goto out;
		}
		(*out)[i] = (struct sock_filter){ (uint16_t)q[0], (uint8_t)q[1], (uint8_t)q[2],
						  (uint32_t)q[3] };
	}
	ret = 0;
out:
	free(num);
	free(text);
	return ret;
}

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
		return cli_error("%s: %s", cmd_name, err);
	if (o->dump)
		dump_progs(r->classic, r->classic_len, insns, n);
	if (o->ebpf_out) {
		f = fopen(o->ebpf_out, "wb");
		bad = !f || fwrite(insns, sizeof(*insns), n, f) != n;
		if (f)
			bad |= fclose(f) != 0;
		if (bad) {
			free(insns);
			return cli_error("%s: cannot write %s: %s", cmd_name, o->ebpf_out,
					 strerror(errno));
		}
	}
	free(insns);
	return 0;
}

/* An eBPF program of a packet type; packets start at the Ethernet header for it. */
static int runner_open_ebpf(struct runner *r, const struct fopts *o, int linktype)
{
	char err[512];
	int ret;

	if (o->engine_set)
		setenv("BPFRT_ENGINE", engine_name(o->engine), 1); /* read by BPF_PROG_LOAD */
	ret = cli_attach_load(cmd_name, o->object, o->prog_name, o->ebpf, o->prog_type, &r->obj,
			      &r->prog_fd);
	if (ret)
		return ret;
	if (brt_pkt_prog_open(r->prog_fd, &r->pp, err, sizeof(err)))
		return cli_error("%s: %s: %s", cmd_name, o->object ? o->object : o->ebpf, err);
	r->type = brt_pkt_prog_type(r->pp);
	if (linktype != 1) {
		const char *lt = brt_pcap_linktype_name(linktype);

		return cli_error("%s: %s programs need Ethernet frames; %s has link type %s",
				 cmd_name, cli_attach_type_name(r->type), o->capture,
				 lt ? lt : "unknown");
	}
	return 0;
}

static int runner_open(struct runner *r, const struct fopts *o, int linktype, int snaplen)
{
	char err[512];
	int ret;

	r->type = BPF_PROG_TYPE_SOCKET_FILTER;
	if (o->object || o->ebpf)
		return runner_open_ebpf(r, o, linktype);
	if (o->prog_path)
		ret = read_prog(o->prog_path, &r->classic, &r->classic_len);
	else if ((ret = brt_pcap_compile(o->expr, linktype, snaplen, &r->classic,
					 &r->classic_len, err, sizeof(err))))
		return cli_error("%s: %s", cmd_name, err);
	if (ret)
		return ret;
	if (o->engine == ENGINE_LIBPCAP) {
		ret = brt_cbpf_check(r->classic, r->classic_len, err, sizeof(err));
		if (ret)
			return cli_error("%s: %s", cmd_name, err);
		if (brt_pcap_classic_new(r->classic, r->classic_len, &r->lib))
			return cli_error("%s: libpcap's interpreter is not available", cmd_name);
		return 0;
	}
	BPFRT_OPTS(bpfrt_pkt_filter_opts, fo, .engine = (enum bpfrt_engine)o->engine);
	ret = bpfrt_pkt_filter_load_cbpf(r->classic, r->classic_len, &fo, &r->f, err,
					 sizeof(err));
	if (ret)
		return cli_error("%s: %s", cmd_name, err);
	return 0;
}

static void runner_close(struct runner *r)
{
	brt_pkt_prog_close(r->pp);
	if (r->obj)
		bpfrt_object_close(r->obj);
	else if (r->prog_fd >= 0)
		close(r->prog_fd);
	bpfrt_pkt_filter_free(r->f);
	brt_pcap_classic_free(r->lib);
	free(r->classic);
}

/* Run on one packet: res gets the verdict, its action and the packet to write (a socket
 * filter's verdict cuts it; tc and XDP programs may have changed it). */
static int run_one(struct runner *r, const struct brt_pkt *pkt, struct brt_pkt_result *res,
		   char *err, size_t errlen)
{
	int ret = 0;

	if (r->pp)
		return brt_pkt_prog_run(r->pp, pkt, r->ifindex, 0, res, err, errlen);
	if (r->lib)
		res->verdict = brt_pcap_classic_run(r->lib, pkt->data, pkt->wirelen, pkt->caplen);
	else
		ret = bpfrt_pkt_filter_run(r->f, pkt->data, pkt->caplen, pkt->wirelen,
					   &res->verdict, err, errlen);
	res->action = res->verdict ? BPFRT_PKT_PASS : BPFRT_PKT_DROP;
	res->data = pkt->data;
	res->caplen = res->verdict < pkt->caplen ? res->verdict : pkt->caplen;
	return ret;
}

static void count(struct stats *s, uint32_t wirelen, uint32_t verdict,
		  enum bpfrt_pkt_action action)
{
	size_t i;

	s->packets++;
	s->bytes += wirelen;
	s->actions[action]++;
	if (action == BPFRT_PKT_PASS) {
		s->matched++;
		s->matched_bytes += wirelen;
	}
	if (s->nr_verdicts && s->verdict[0] == verdict) {
		s->verdict_count[0]++; /* most packets share one verdict */
		return;
	}
	for (i = 0; i < s->nr_verdicts && s->verdict[i] != verdict; i++)
		;
	if (i == s->nr_verdicts) {
		if (i == MAX_VERDICTS) {
			s->other_verdicts++;
			return;
		}
		s->verdict[i] = verdict;
		s->nr_verdicts++;
	}
	s->verdict_count[i]++;
}

/* count() over a batch of classic-filter verdicts (pass when non-zero), with the packets of
 * the most common verdict tallied in registers: this is the --repeat benchmark's loop,
 * shared by every engine, so it should cost little next to a filter of a few ns. */
static void count_batch(struct stats *s, const struct bpfrt_pkt *pkts, const uint32_t *verdicts,
			size_t m)
{
	uint64_t same = 0, bytes = 0;
	size_t j = 0;

	if (!s->nr_verdicts && m) { /* the first packet's verdict becomes verdict[0] */
		count(s, pkts[0].wirelen, verdicts[0],
		      verdicts[0] ? BPFRT_PKT_PASS : BPFRT_PKT_DROP);
		j = 1;
	}
	for (; j < m; j++) {
		if (verdicts[j] != s->verdict[0]) {
			count(s, pkts[j].wirelen, verdicts[j],
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this thread: what --repeat reports, so that other load on the machine
 * does not count against the filter. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const struct stats *s, double *last)
{
	double t = now();

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
	json_kv_string(&j, "type", cli_attach_type_name(r->type));
	json_kv_string(&j, "engine", engine_name(o->engine));
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
		printf("engine %s: %u rounds, %.3f s of CPU, %.2f Mpackets/s\n", engine_name(o->engine),
		       o->repeat, s->seconds,
		       s->seconds > 0 ? (double)s->packets / s->seconds / 1e6 : 0.0);
}

static int source_next(struct source *src, struct brt_pkt *pkt, char *err, size_t errlen)
{
	int ret;

	if (src->file) {
		if (src->deadline && now() >= src->deadline)
			return 0;
		return brt_pcap_next(src->file, pkt, err, errlen);
	}
	do {
		if (stop_requested || (src->deadline && now() >= src->deadline))
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
	double last = now();
	char err[512];
	struct brt_pkt pkt;
	int ret;

	if (o->write_path && brt_pcap_writer_open(o->write_path, linktype, snaplen, &w, err,
						  sizeof(err)))
		return cli_error("%s: %s", o->cmd, err);
	while (!stop_requested && (!o->max || s->packets < o->max) &&
	       (ret = source_next(src, &pkt, err, sizeof(err))) == 1) {
		struct brt_pkt_result res;

		if (run_one(r, &pkt, &res, err, sizeof(err))) {
			ret = cli_error("%s: packet %" PRIu64 ": %s", cmd_name, s->packets, err);
			goto out;
		}
		count(s, pkt.wirelen, res.verdict, res.action);
		if (w && res.action == BPFRT_PKT_PASS) {
			pkt.data = res.data;
			pkt.caplen = res.caplen;
			brt_pcap_write(w, &pkt);
		}
		if (tty && (src->live || (s->packets & 0xffff) == 0))
			progress(s, &last);
	}
	if (ret < 0) {
		ret = cli_error("%s: %s", cmd_name, err);
		goto out;
	}
	ret = 0;
out:
	if (tty && (src->live || s->packets > 0xffff))
		fputc('\n', stderr);
	s->interrupted = stop_requested;
	if (src->live) {
		uint64_t seen;

		brt_live_stats(src->live, &seen, &s->drops);
	}
	if (w && brt_pcap_writer_close(w) && !ret)
		ret = cli_error("%s: %s: write failed", cmd_name, o->write_path);
	return ret;
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
static int run_bench(struct runner *r, struct brt_pcap_reader *rd, const struct fopts *o,
		     struct stats *s)
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
		ret = cli_error("%s: %s", cmd_name, err);
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
	t0 = cpu_now();
	for (unsigned round = 0; round < o->repeat && !stop_requested; round++) {
		for (size_t i = 0; i < n; i += BATCH) {
			size_t m = n - i < BATCH ? n - i : BATCH;

			if (r->pp) {
				for (size_t j = 0; j < m; j++) {
					struct brt_pkt_result res;

					if (run_one(r, &pkts[i + j], &res, err, sizeof(err))) {
						ret = cli_error("%s: %s", cmd_name, err);
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
				ret = cli_error("%s: %s", cmd_name, err);
				goto out;
			}
			if (!r->pp) {
				count_batch(s, bp + i, verdicts, m);
				continue;
			}
			for (size_t j = 0; j < m; j++)
				count(s, pkts[i + j].wirelen, verdicts[j], actions[j]);
		}
	}
	s->seconds = cpu_now() - t0;
	s->interrupted = stop_requested;
	ret = 0;
	goto out;
out_nomem:
	ret = cli_error("%s: out of memory holding the capture", cmd_name);
out:
	free(bp);
	free(pkts);
	if (mapped)
		munmap(arena, mapped);
	else
		free(arena);
	return ret;
}

static int parse_args(int argc, char **argv, struct fopts *o, char **expr_buf)
{
	static const struct option opts[] = {
		{ "count", no_argument, NULL, 'c' },
		{ "iface", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 't' },
		{ "write", required_argument, NULL, 'w' },
		{ "engine", required_argument, NULL, 'e' },
		{ "prog", required_argument, NULL, 'p' },
		{ "max", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "dump", no_argument, NULL, 'd' },
		{ "ebpf-out", required_argument, NULL, 'o' },
		{ "repeat", required_argument, NULL, 'R' },
		{ "object", required_argument, NULL, 'O' },
		{ "name", required_argument, NULL, 'N' },
		{ "ebpf", required_argument, NULL, 'E' },
		{ "type", required_argument, NULL, 'T' },
		{ "pretty", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prog_given;
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+ci:t:w:e:p:n:jdo:O:E:T:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->iface = optarg;
			break;
		case 't':
			o->duration = strtod(optarg, &end);
			if (*end || !*optarg || !(o->duration > 0)) {
				cli_error("%s: bad number '%s' for --duration", cmd_name, optarg);
				return 2;
			}
			break;
		case 'c':
			o->count_only = 1;
			break;
		case 'w':
			o->write_path = optarg;
			break;
		case 'e':
			o->engine = parse_engine(optarg);
			if (o->engine == -2) {
				cli_error("%s: unknown engine '%s' (interp, checked, jit, libpcap)", cmd_name,
					  optarg);
				return 2;
			}
			o->engine_set = 1;
			break;
		case 'O':
			o->object = optarg;
			break;
		case 'N':
			o->prog_name = optarg;
			break;
		case 'E':
			o->ebpf = optarg;
			break;
		case 'T':
			if (cli_attach_parse_type(optarg, &o->prog_type)) {
				cli_error("%s: unknown program type '%s' (socket, tc, xdp)", cmd_name,
					  optarg);
				return 2;
			}
			break;
		case 'P':
			o->json = o->pretty = 1;
			break;
		case 'p':
			o->prog_path = optarg;
			break;
		case 'n':
		case 'R':
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || (c == 'R' && (v == 0 || v > 1000000))) {
				cli_error("%s: bad number '%s' for --%s", cmd_name, optarg,
					  c == 'n' ? "max" : "repeat");
				return 2;
			}
			if (c == 'n')
				o->max = v;
			else
				o->repeat = (unsigned)v;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'd':
			o->dump = 1;
			break;
		case 'o':
			o->ebpf_out = optarg;
			break;
		case 'h':
			filter_usage(stdout);
			return -1;
		default:
			filter_usage(stderr);
			return 2;
		}
	}
	if (!strcmp(cmd_name, "attach") && !o->iface) {
		cli_error("attach: --iface is required");
		filter_usage(stderr);
		return 2;
	}
	prog_given = o->prog_path ? "--prog" : o->object ? "--object" : o->ebpf ? "--ebpf" : NULL;
	if (!!o->prog_path + !!o->object + !!o->ebpf > 1) {
		cli_error("%s: give one of --prog, --object and --ebpf", cmd_name);
		return 2;
	}
	if (o->ebpf && !o->prog_type) {
		cli_error("%s: --ebpf needs --type socket|tc|xdp", cmd_name);
		return 2;
	}
	if ((o->object || o->ebpf) && (o->engine == ENGINE_LIBPCAP || o->dump || o->ebpf_out)) {
		cli_error("%s: %s runs eBPF: no libpcap engine, --dump or --ebpf-out", cmd_name,
			  prog_given);
		return 2;
	}
	if (o->prog_name && !o->object) {
		cli_error("%s: --name picks a program of --object", cmd_name);
		return 2;
	}
	if (o->iface) {
		if (prog_given && optind != argc) {
			cli_error("%s: %s takes no expression", cmd_name, prog_given);
			return 2;
		}
		if (o->repeat) {
			cli_error("%s: --repeat needs a capture file", cmd_name);
			return 2;
		}
	} else if (optind >= argc || (!prog_given && optind + 1 >= argc) ||
		   (prog_given && optind + 1 != argc)) {
		cli_error("%s: expected %s and a capture file", cmd_name,
			  prog_given ? "only" : "an expression");
		filter_usage(stderr);
		return 2;
	}
	if (!o->iface)
		o->capture = argv[--argc];
	if (!prog_given) {
		/* like tcpdump, the words before the capture form the expression */
		size_t len = 1;

		for (int i = optind; i < argc; i++)
			len += strlen(argv[i]) + 1;
		*expr_buf = calloc(1, len);
		if (!*expr_buf) {
			cli_error("%s: out of memory", cmd_name);
			return 1;
		}
		for (int i = optind; i < argc; i++) {
			if (i > optind)
				strcat(*expr_buf, " ");
			strcat(*expr_buf, argv[i]);
		}
		o->expr = *expr_buf;
	}
	return 0;
}

int cli_filter_main(int argc, char **argv, const char *cmd)
{
	struct fopts o = { .engine = BPFRT_ENGINE_INTERP };
	struct runner r = { .prog_fd = -1 };
	struct stats s = { 0 };
	struct source src = { 0 };
	struct sigaction sa;
	char err[512], *expr_buf = NULL;
	int ret, linktype, snaplen;

	cmd_name = cmd;
	ret = parse_args(argc, argv, &o, &expr_buf);
	if (ret)
		return ret < 0 ? 0 : ret;
	o.cmd = cmd;
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
		ret = cli_error("%s: %s", cmd_name, err);
		goto out;
	}
	if (src.live)
		r.ifindex = if_nametoindex(o.iface);
	ret = runner_open(&r, &o, linktype, snaplen);
	if (ret)
		goto out;
	if (o.dump || o.ebpf_out) {
		ret = dump_or_save(&o, &r);
		if (ret || o.dump)
			goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	if (o.duration)
		src.deadline = now() + o.duration;
	if (o.repeat) {
		ret = run_bench(&r, src.file, &o, &s);
	} else {
		double t0 = cpu_now();

		ret = run_stream(&r, &src, linktype, snaplen, &o, &s);
		s.seconds = cpu_now() - t0;
	}
	signal(SIGINT, SIG_DFL);
	if (!ret)
		print_summary(&o, &r, &s);
out:
	runner_close(&r);
	brt_pcap_close(src.file);
	brt_live_close(src.live);
	free(expr_buf);
	return ret;
}

int cmd_filter(int argc, char **argv)
{
	return cli_filter_main(argc, argv, "filter");
}
