/* cmd_verify.c - "bpfrt verify": run the verifier on a raw program (or hex) and print the
 * kernel-style log, the verdict, the first error and the statistics (text or JSON). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "maps/maps.h"
#include "verifier/verifier.h"

#define MAX_MAPS 16

struct vmaps {
	struct brt_map_info m[MAX_MAPS];
	int n;
};

/* The map types --map accepts, by their map_types.def names. */
static const uint32_t map_types[] = {
	BPF_MAP_TYPE_HASH,
	BPF_MAP_TYPE_ARRAY,
	BPF_MAP_TYPE_PERCPU_HASH,
	BPF_MAP_TYPE_PERCPU_ARRAY,
	BPF_MAP_TYPE_LRU_HASH,
	BPF_MAP_TYPE_PROG_ARRAY,
	BPF_MAP_TYPE_PERF_EVENT_ARRAY,
	BPF_MAP_TYPE_RINGBUF,
	BPF_MAP_TYPE_QUEUE,
	BPF_MAP_TYPE_STACK,
};

static const struct {
	const char *name;
	uint32_t type;
	uint32_t attach;
} prog_types[] = {
	{ "socket", BPF_PROG_TYPE_SOCKET_FILTER, 0 },
	{ "xdp", BPF_PROG_TYPE_XDP, 0 },
	{ "tc", BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "sched_cls", BPF_PROG_TYPE_SCHED_CLS, 0 },
	{ "kprobe", BPF_PROG_TYPE_KPROBE, 0 },
	{ "tracepoint", BPF_PROG_TYPE_TRACEPOINT, 0 },
	{ "raw_tp", BPF_PROG_TYPE_RAW_TRACEPOINT, 0 },
	{ "cgroup_skb", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS },
	{ "perf_event", BPF_PROG_TYPE_PERF_EVENT, 0 },
};

static int map_info(void *arg, int fd, struct brt_map_info *out)
{
	struct vmaps *maps = arg;

	if (fd < 0 || fd >= maps->n)
		return -EBADF;
	*out = maps->m[fd];
	return 0;
}

static int parse_map(struct vmaps *maps, const char *spec)
{
	char name[32];
	unsigned ks, vs, max, flags = 0;
	size_t i;

	if (maps->n >= MAX_MAPS ||
	    sscanf(spec, "%31[a-z_]:%u:%u:%u:%u", name, &ks, &vs, &max, &flags) < 4)
		return -1;
	for (i = 0; i < sizeof(map_types) / sizeof(map_types[0]); i++)
		if (!strcmp(name, brt_map_type_name(map_types[i])))
			break;
	if (i == sizeof(map_types) / sizeof(map_types[0]))
		return -1;
	maps->m[maps->n] = (struct brt_map_info){ .type = map_types[i], .key_size = ks,
						  .value_size = vs, .max_entries = max,
						  .map_flags = flags };
	maps->n++;
	return 0;
}

static void usage(void)
{
	printf("Usage: bpfrt verify FILE [options]\n\n"
	       "Verify a raw eBPF program (8-byte little-endian instructions; '-' for stdin)\n"
	       "the way Linux 6.18 does, and print its log.\n\n"
	       "  --type T            socket (default), xdp, tc, kprobe, tracepoint, raw_tp,\n"
	       "                      cgroup_skb, perf_event\n"
	       "  --map T:KS:VS:MAX[:FLAGS]  a map for lddw imm N (N-th --map); T is hash,\n"
	       "                      array, percpu_hash, percpu_array, lru_hash, prog_array,\n"
	       "                      perf_event_array, ringbuf, queue, stack\n"
	       "  --log-level N       1, 2 (default 1); +4 adds statistics\n"
	       "  --log-size BYTES    log buffer size (default 16 MiB)\n"
	       "  --hex               FILE holds hex bytes\n"
	       "  --cap-bpf-only      CAP_BPF without CAP_PERFMON\n"
	       "  --unpriv            no capabilities\n"
	       "  --strict-align      BPF_F_STRICT_ALIGNMENT\n"
	       "  --license STR       default GPL\n"
	       "  --json              one JSON object: verdict, errno, error, statistics, log\n");
}

static int load_prog(const char *path, int hex, struct bpf_insn **insns, size_t *n)
{
	char *data, err[128];
	size_t len;
	uint8_t *bytes;

	if (cli_read_file(path, &data, &len))
		return cli_error("cannot read %s: %s", path, strerror(errno));
	if (hex) {
		if (cli_parse_hex(data, &bytes, &len, err, sizeof(err))) {
			free(data);
			return cli_error("%s: %s", path, err);
		}
		free(data);
	} else {
		bytes = (uint8_t *)data;
	}
	if (!len || len % 8) {
		free(bytes);
		return cli_error("%s: %zu bytes is not a whole number of instructions", path, len);
	}
	*insns = (struct bpf_insn *)bytes;
	*n = len / 8;
	return 0;
}

static void print_result(int err, const struct brt_verify_result *res, const char *log, int json)
{
	struct json j;

	if (!json) {
		fputs(log, stdout);
		if (err)
			printf("verdict: reject (%s)\n", strerror(-err));
		else
			printf("verdict: accept\n");
		return;
	}
	json_init(&j, stdout, JSON_COMPACT);
	json_begin_object(&j);
	json_kv_string(&j, "verdict", err ? "reject" : "accept");
	json_kv_int(&j, "errno", -err);
	json_key(&j, "error");
	if (err) {
		json_begin_object(&j);
		json_kv_int(&j, "insn", res->err_insn);
		json_kv_string(&j, "message", res->err_msg);
		json_end_object(&j);
	} else {
		json_null(&j);
	}
	json_kv_uint(&j, "processed", res->insn_processed);
	json_kv_uint(&j, "max_states_per_insn", res->max_states_per_insn);
	json_kv_uint(&j, "total_states", res->total_states);
	json_kv_uint(&j, "peak_states", res->peak_states);
	json_kv_string(&j, "log", log);
	json_end_object(&j);
	json_finish(&j);
}

int cmd_verify(int argc, char **argv)
{
	struct vmaps maps = { .n = 0 };
	struct brt_verify_opts o = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER, .gpl = 1,
				     .log_level = 1 };
	struct brt_verify_result res;
	const char *path = NULL;
	uint32_t log_size = 16 << 20;
	int hex = 0, json = 0, err;
	struct bpf_insn *insns = NULL;
	size_t n = 0;
	char *log;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return 0;
		} else if (!strcmp(a, "--type") && v) {
			size_t k;

			for (k = 0; k < sizeof(prog_types) / sizeof(prog_types[0]); k++)
				if (!strcmp(v, prog_types[k].name))
					break;
			if (k == sizeof(prog_types) / sizeof(prog_types[0]))
				return cli_error("verify: unknown program type '%s'", v);
			o.prog_type = prog_types[k].type;
			o.expected_attach_type = prog_types[k].attach;
			i++;
		} else if (!strcmp(a, "--map") && v) {
			if (parse_map(&maps, v))
				return cli_error("verify: bad --map '%s' (TYPE:KS:VS:MAX[:FLAGS])", v);
			i++;
		} else if (!strcmp(a, "--log-level") && v) {
			o.log_level = (uint32_t)strtoul(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--log-size") && v) {
			log_size = (uint32_t)strtoul(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--license") && v) {
			o.gpl = !strcmp(v, "GPL") || !strcmp(v, "GPL v2") || !strcmp(v, "Dual BSD/GPL") ||
				!strcmp(v, "Dual MIT/GPL") || !strcmp(v, "GPL and additional rights");
			i++;
		} else if (!strcmp(a, "--hex")) {
			hex = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--cap-bpf-only")) {
			o.priv = BRT_PRIV_BPF_CAPABLE;
		} else if (!strcmp(a, "--unpriv")) {
			o.priv = BRT_PRIV_UNPRIV;
		} else if (!strcmp(a, "--strict-align")) {
			o.prog_flags |= BPF_F_STRICT_ALIGNMENT;
		} else if (a[0] == '-' && a[1]) {
			return cli_error("verify: unknown option '%s' (try --help)", a);
		} else {
			path = a;
		}
	}
	if (!path)
		return cli_error("verify: no program file given (try --help)");
	if (load_prog(path, hex, &insns, &n))
		return 1;
	log = calloc(1, (size_t)log_size + 1);
	if (!log) {
		free(insns);
		return cli_error("verify: out of memory");
	}
	o.log_buf = o.log_level ? log : NULL;
	o.log_size = o.log_level ? log_size : 0;
	o.map_info = map_info;
	o.map_arg = &maps;
	err = brt_verify(insns, n, &o, &res);
	print_result(err, &res, log, json);
	free(log);
	free(insns);
	return err ? 1 : 0;
}
