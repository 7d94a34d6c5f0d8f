/* pkt_prog_load.c - the eBPF programs "bpfrt filter" and "bpfrt attach" can run instead of
 * a tcpdump expression: one of an ELF object (--object) or raw instructions (--ebpf) of a
 * packet type (socket filter, tc, XDP), loaded with the engine the command asks for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	enum bpf_prog_type type;
} types[] = {
	{ "socket", BPF_PROG_TYPE_SOCKET_FILTER },
	{ "tc", BPF_PROG_TYPE_SCHED_CLS },
	{ "xdp", BPF_PROG_TYPE_XDP },
};

static int packet_type(enum bpf_prog_type t)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == t)
			return 1;
	return t == BPF_PROG_TYPE_SCHED_ACT;
}

int cli_pkt_parse_type(const char *s, enum bpf_prog_type *type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(s, types[i].name)) {
			*type = types[i].type;
			return 0;
		}
	return -1;
}

const char *cli_pkt_type_name(enum bpf_prog_type type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return types[i].name;
	return type == BPF_PROG_TYPE_SCHED_ACT ? "tc" : "other";
}

/* The program of an object: by name, else the first one of a packet type. */
static int from_object(const char *cmd, const char *path, const char *name,
		       uint32_t prog_flags, struct bpfrt_object **objp, int *prog_fd)
{
	struct bpfrt_object *obj = bpfrt_object_open_file(path, NULL);
	struct bpfrt_program *p = NULL;

	if (!obj)
		return cli_error("%s: %s: %s", cmd, path, strerror(errno));
	*objp = obj;
	if (name) {
		p = bpfrt_object_find_program_by_name(obj, name);
		if (!p)
			return cli_error("%s: %s: no program named '%s'", cmd, path, name);
	} else {
		while ((p = bpfrt_object_next_program(obj, p)) && !packet_type(bpfrt_program_type(p)))
			;
		if (!p)
			return cli_error("%s: %s: no socket, tc or xdp program (give --name)", cmd,
					 path);
	}
	/* only the chosen program: others may be of types bpfrt cannot load */
	for (struct bpfrt_program *q = NULL; (q = bpfrt_object_next_program(obj, q));)
		bpfrt_program_set_autoload(q, q == p);
	bpfrt_program_set_flags(p, prog_flags);
	if (bpfrt_object_load(obj))
		return cli_error("%s: %s: %s", cmd, path, bpfrt_object_log(obj));
	*prog_fd = bpfrt_program_fd(p);
	return 0;
}

int cli_pkt_prog_load(const char *cmd, const char *object, const char *name, const char *ebpf,
		      enum bpf_prog_type type, uint32_t prog_flags, struct bpfrt_object **obj,
		      int *prog_fd)
{
	struct bpf_insn *insns;
	uint8_t *mem = NULL;
	size_t n, mem_len;
	char log[4096];
	int is_data;

	*obj = NULL;
	*prog_fd = -1;
	if (object)
		return from_object(cmd, object, name, prog_flags, obj, prog_fd);
	if (cli_load_program(ebpf, &insns, &n, &mem, &mem_len, &is_data))
		return 1;
	free(mem);
	log[0] = '\0';
	BPFRT_OPTS(bpfrt_prog_load_opts, lo, .prog_flags = prog_flags, .log_buf = log,
		   .log_size = sizeof(log), .log_level = 1);
	*prog_fd = bpfrt_prog_load(type, "cli", "GPL", insns, n, &lo);
	free(insns);
	if (*prog_fd < 0)
		return cli_error("%s: %s: loading as a %s program: %s\n%s", cmd, ebpf,
				 cli_pkt_type_name(type), strerror(errno), log);
	return 0;
}
