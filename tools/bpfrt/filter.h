/* filter.h - the pieces of "bpfrt filter" and "bpfrt attach" (cmd_filter.c: the run over a
 * capture or an interface, and its summary): argument parsing (filter_args.c), the filter
 * a run applies and what it counts (filter_runner.c), the benchmark mode (filter_bench.c).
 */
#ifndef BPFRT_TOOLS_FILTER_H
#define BPFRT_TOOLS_FILTER_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "attach/attach.h"
#include "attach/pcap_io.h"
#include "cli.h"

#define ENGINE_LIBPCAP (-1) /* libpcap's classic interpreter instead of a bpfrt engine */
#define MAX_VERDICTS 8      /* distinct verdict values counted one by one */

struct fopts {
	const char *expr;    /* tcpdump expression, or NULL with prog_path */
	const char *prog_path;
	const char *capture;  /* file, or NULL with iface */
	const char *iface;    /* live capture */
	double duration;      /* live: stop after this many seconds, 0 = never */
	const char *cmd;      /* "filter" or "attach": prefixes messages */
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

/* Options (filter_args.c): parse argv into o (o->cmd set by the caller); *expr_buf gets the
 * expression's words joined (free it).  Returns 0, -1 after --help, or the exit status of
 * a usage error (message printed). */
int cli_filter_parse_args(int argc, char **argv, struct fopts *o, char **expr_buf);
/* An engine of o->engine as it is printed ("interp", "jit", "libpcap"...). */
const char *cli_filter_engine_name(int engine);

/* The filter (filter_runner.c): open the program o asks for, for packets of linktype;
 * 0 or 1 (message printed).  Run it on one packet: res gets the verdict, its action and
 * the packet to write; 0 or -errno with err.  Count a packet's verdict and action. */
int cli_filter_runner_open(struct runner *r, const struct fopts *o, int linktype, int snaplen);
void cli_filter_runner_close(struct runner *r);
int cli_filter_run_one(struct runner *r, const struct brt_pkt *pkt, struct brt_pkt_result *res,
		       char *err, size_t errlen);
void cli_filter_count(struct stats *s, uint32_t wirelen, uint32_t verdict,
		      enum bpfrt_pkt_action action);

/* Benchmark mode (filter_bench.c): --repeat rounds over the capture held in memory, until
 * *stop; s->seconds is the CPU time.  0 or 1 (message printed). */
int cli_filter_run_bench(struct runner *r, struct brt_pcap_reader *rd, const struct fopts *o,
			 struct stats *s, const volatile sig_atomic_t *stop);
/* CPU time of this thread, in seconds. */
double cli_filter_cpu_now(void);

#endif
