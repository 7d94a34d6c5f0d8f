/* cmd_trace.c - "bpfrt trace TRACEPOINT PROG": attach a program to a kernel tracepoint
 * (perf_event_open on every CPU, records read from the rings, the program run on each)
 * until Ctrl-C, --count events or --duration, then print a summary; --fields prints the
 * record layout the program sees.  PROG is an eBPF ELF object (its tracepoint program)
 * or a program file as `bpfrt run` reads it, loaded as BPF_PROG_TYPE_TRACEPOINT.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt trace [OPTIONS] TRACEPOINT PROG\n"
		"       bpfrt trace --fields [-j] TRACEPOINT\n\n"
		"Run PROG on every record of the kernel tracepoint TRACEPOINT (CATEGORY:NAME, e.g.\n"
		"skb:kfree_skb), read through perf_event_open on every CPU (needs root; tracefs is\n"
		"mounted at /sys/kernel/tracing if needed).  PROG is an eBPF ELF object (its first\n"
		"tracepoint program, or --prog NAME) or a program file as `bpfrt run` reads it,\n"
		"loaded as BPF_PROG_TYPE_TRACEPOINT: its context is the record (common_ fields\n"
		"first; reads past the record are refused).  Stops on Ctrl-C, --count or --duration\n"
		"and prints events, lost records, faulted runs and non-zero returns.\n\n"
		"  -n, --count N       stop after N events\n"
		"  -t, --duration SEC  stop after SEC seconds\n"
		"  -P, --prog NAME     the program of the object to attach\n"
		"  -F, --fields        print the tracepoint's record layout and exit\n"
		"  -l, --log           print the verifier log\n"
		"  -j, --json          JSON output; -p, --pretty: indented JSON\n"
		"  -h, --help          show this help\n");
}

struct topts {
	const char *tp;
	const char *prog_path;
	const char *prog_name;
	unsigned long long count;
	double duration;
	int fields, log, json, pretty;
};

static int parse(int argc, char **argv, struct topts *o)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 't' },
		{ "prog", required_argument, NULL, 'P' },
		{ "fields", no_argument, NULL, 'F' },
		{ "log", no_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:t:P:Fljph", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (cli_parse_count("trace", optarg, &o->count))
				return 2;
			break;
		case 't':
			if (cli_parse_duration("trace", optarg, &o->duration))
				return 2;
			break;
		case 'P':
			o->prog_name = optarg;
			break;
		case 'F':
			o->fields = 1;
			break;
		case 'l':
			o->log = 1;
			break;
		case 'p':
			o->pretty = 1;
			o->json = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + (o->fields ? 1 : 2) != argc) {
		cli_error("trace: expected %s", o->fields ? "a tracepoint" : "a tracepoint and a program");
		usage(stderr);
		return 2;
	}
	o->tp = argv[optind];
	o->prog_path = o->fields ? NULL : argv[optind + 1];
	return 0;
}

static int print_fields(const struct topts *o)
{
	struct bpfrt_tp_field f[128];
	uint32_t size, id;
	int n = bpfrt_tracepoint_fields(o->tp, f, 128, &size, &id);
	struct json j;

	if (n < 0)
		return cli_error("trace: %s: %s", o->tp, strerror(-n));
	if (n > 128)
		n = 128;
	if (!o->json) {
		printf("%s: id %u, %u bytes\n", o->tp, id, size);
		printf("%6s %4s %3s  %s\n", "offset", "size", "sgn", "field");
		for (int i = 0; i < n; i++)
			printf("%6u %4u %3s  %s %s\n", f[i].offset, f[i].size,
			       f[i].is_signed ? "yes" : "no", f[i].type, f[i].name);
		return 0;
	}
	json_init(&j, stdout, o->pretty);
	json_begin_object(&j);
	json_kv_string(&j, "tracepoint", o->tp);
	json_kv_uint(&j, "id", id);
	json_kv_uint(&j, "size", size);
	json_key(&j, "fields");
	json_begin_array(&j);
	for (int i = 0; i < n; i++) {
		json_begin_object(&j);
		json_kv_string(&j, "name", f[i].name);
		json_kv_string(&j, "type", f[i].type);
		json_kv_uint(&j, "offset", f[i].offset);
		json_kv_uint(&j, "size", f[i].size);
		json_key(&j, "signed");
		json_bool(&j, f[i].is_signed);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
	return 0;
}

/* An ELF object's tracepoint program (the object stays open in *objp). */
static int load_object(const struct topts *o, struct bpfrt_object **objp)
{
	BPFRT_OPTS(bpfrt_object_open_opts, oo, .log_level = o->log ? 1 : 0);
	struct bpfrt_object *obj = bpfrt_object_open_file(o->prog_path, &oo);
	struct bpfrt_program *p, *pick = NULL;
	int err;

	if (!obj)
		return -cli_error("trace: cannot open %s: %s", o->prog_path, strerror(errno));
	*objp = obj;
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		int match = o->prog_name ? !strcmp(bpfrt_program_name(p), o->prog_name)
					 : bpfrt_program_type(p) == BPF_PROG_TYPE_TRACEPOINT;

		if (match && !pick)
			pick = p;
		else
			bpfrt_program_set_autoload(p, 0);
	}
	if (!pick)
		return -cli_error("trace: %s has no %s%s", o->prog_path,
				  o->prog_name ? "program " : "tracepoint program",
				  o->prog_name ? o->prog_name : "");
	err = bpfrt_object_load(obj);
	if (o->log || err)
		fprintf(stderr, "%s", bpfrt_object_log(obj));
	if (err)
		return -cli_error("trace: cannot load %s: %s", o->prog_path, strerror(-err));
	return bpfrt_program_fd(pick);
}

static int load_file(const struct topts *o)
{
	static char log[1 << 20];
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .log_level = 1, .log_size = sizeof(log),
		   .log_buf = log);
	struct bpf_insn *insns;
	uint8_t *mem = NULL; /* set only for .data files */
	size_t n, mem_len;
	int is_data, fd;

	if (cli_load_program(o->prog_path, &insns, &n, &mem, &mem_len, &is_data))
		return -1;
	free(mem);
	fd = bpfrt_prog_load(BPF_PROG_TYPE_TRACEPOINT, "trace", "GPL", insns, n, &lo);
	free(insns);
	if (o->log || fd < 0)
		fprintf(stderr, "%s", log);
	if (fd < 0)
		return -cli_error("trace: %s: the verifier refused the program: %s",
				  o->prog_path, strerror(-fd));
	return fd;
}

static int is_elf(const char *path)
{
	unsigned char magic[4] = { 0 };
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	if (fread(magic, 1, 4, f) != 4)
		magic[0] = 0;
	fclose(f);
	return !memcmp(magic, "\177ELF", 4);
}

static void summary(const struct topts *o, const struct bpfrt_link_stats *st, double secs)
{
	struct json j;

	if (!o->json) {
		printf("%s: %llu events (%.1f/s), %llu lost, %llu faulted, %llu returned non-zero, "
		       "%.2f s\n", o->tp, (unsigned long long)st->events,
		       secs > 0 ? (double)st->events / secs : 0.0, (unsigned long long)st->lost,
		       (unsigned long long)st->errors, (unsigned long long)st->nonzero, secs);
		return;
	}
	json_init(&j, stdout, o->pretty);
	json_begin_object(&j);
	json_kv_string(&j, "tracepoint", o->tp);
	json_kv_uint(&j, "events", st->events);
	json_kv_uint(&j, "lost", st->lost);
	json_kv_uint(&j, "faulted", st->errors);
	json_kv_uint(&j, "nonzero", st->nonzero);
	json_key(&j, "seconds");
	json_uint(&j, (uint64_t)(secs * 1000.0 + 0.5) / 1000);
	json_kv_uint(&j, "milliseconds", (uint64_t)(secs * 1000.0 + 0.5));
	json_end_object(&j);
	json_finish(&j);
}

int cmd_trace(int argc, char **argv)
{
	struct topts o = { 0 };
	struct bpfrt_object *obj = NULL;
	struct bpfrt_link_stats st = { 0 };
	int ret, prog, link;
	double t0;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (o.fields)
		return print_fields(&o);
	if (access(o.prog_path, R_OK))
		return cli_error("trace: cannot read %s: %s", o.prog_path, strerror(errno));
	prog = is_elf(o.prog_path) ? load_object(&o, &obj) : load_file(&o);
	if (prog < 0) {
		bpfrt_object_close(obj);
		return 1;
	}
	link = bpfrt_tracepoint_attach(prog, o.tp, NULL);
	if (link < 0) {
		ret = cli_error("trace: cannot attach to %s: %s", o.tp, strerror(-link));
		goto out;
	}
	cli_stop_on(1);
	t0 = cli_now();
	while (!cli_stop) {
		usleep(20000);
		bpfrt_link_stats(link, &st);
		if ((o.count && st.events >= o.count) || (o.duration && cli_now() - t0 >= o.duration))
			break;
	}
	/* the summary counts what ran until now; the link's counters go with it */
	bpfrt_link_stats(link, &st);
	bpfrt_link_detach(link);
	cli_stop_off();
	summary(&o, &st, cli_now() - t0);
	close(link);
	ret = 0;
out:
	if (!obj)
		close(prog);
	bpfrt_object_close(obj);
	return ret;
}
