/* filter_args.c - the command line of "bpfrt filter" and "bpfrt attach": usage, options,
 * the checks between them, and the tcpdump-like expression made of the remaining words.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "vm/vm.h"

static void usage(FILE *out)
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
	enum bpfrt_engine e;

	if (!strcmp(s, "libpcap"))
		return ENGINE_LIBPCAP;
	return brt_vm_engine_parse(s, 0, &e) ? -2 : (int)e;
}

const char *cli_filter_engine_name(int engine)
{
	if (engine == ENGINE_LIBPCAP)
		return "libpcap";
	/* o->engine starts as INTERP: nothing else prints as "default" */
	return brt_vm_engine_name(engine == BPFRT_ENGINE_DEFAULT ? BPFRT_ENGINE_INTERP
								 : (enum bpfrt_engine)engine);
}

int cli_filter_parse_args(int argc, char **argv, struct fopts *o, char **expr_buf)
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
				cli_error("%s: bad number '%s' for --duration", o->cmd, optarg);
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
				cli_error("%s: unknown engine '%s' (%s, libpcap)", o->cmd, optarg,
					  brt_vm_engine_list());
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
			if (cli_pkt_parse_type(optarg, &o->prog_type)) {
				cli_error("%s: unknown program type '%s' (socket, tc, xdp)", o->cmd,
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
				cli_error("%s: bad number '%s' for --%s", o->cmd, optarg,
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
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!strcmp(o->cmd, "attach") && !o->iface) {
		cli_error("attach: --iface is required");
		usage(stderr);
		return 2;
	}
	prog_given = o->prog_path ? "--prog" : o->object ? "--object" : o->ebpf ? "--ebpf" : NULL;
	if (!!o->prog_path + !!o->object + !!o->ebpf > 1) {
		cli_error("%s: give one of --prog, --object and --ebpf", o->cmd);
		return 2;
	}
	if (o->ebpf && !o->prog_type) {
		cli_error("%s: --ebpf needs --type socket|tc|xdp", o->cmd);
		return 2;
	}
	if ((o->object || o->ebpf) && (o->engine == ENGINE_LIBPCAP || o->dump || o->ebpf_out)) {
		cli_error("%s: %s runs eBPF: no libpcap engine, --dump or --ebpf-out", o->cmd,
			  prog_given);
		return 2;
	}
	if (o->prog_name && !o->object) {
		cli_error("%s: --name picks a program of --object", o->cmd);
		return 2;
	}
	if (o->iface) {
		if (prog_given && optind != argc) {
			cli_error("%s: %s takes no expression", o->cmd, prog_given);
			return 2;
		}
		if (o->repeat) {
			cli_error("%s: --repeat needs a capture file", o->cmd);
			return 2;
		}
	} else if (optind >= argc || (!prog_given && optind + 1 >= argc) ||
		   (prog_given && optind + 1 != argc)) {
		cli_error("%s: expected %s and a capture file", o->cmd,
			  prog_given ? "only" : "an expression");
		usage(stderr);
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
			cli_error("%s: out of memory", o->cmd);
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
