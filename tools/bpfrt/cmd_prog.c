/* cmd_prog.c - `bpfrt prog`, modelled on bpftool's: load an object's programs (and pin
 * them), show programs (pinned ones, or one named), test-run one over data and context
 * read from files; `prog dump` is in prog_dump.c.  Text, or JSON with -j / -p. */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "cli.h"
#include "elf/elf.h"
#include "isa/isa.h"
#include "json.h"
#include "maps/maps.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt prog [-j|--json] [-p|--pretty] [-k|--kernel] COMMAND ...\n\n"
		"  prog load OBJ [PATH] [pinmaps MAPDIR] [--type TYPE] [--log-level N] [--btf FILE]\n"
		"                   load every program of an eBPF ELF object; pin the first at PATH\n"
		"                   and every map as MAPDIR/NAME\n"
		"  prog loadall OBJ [DIR] [pinmaps MAPDIR] [--type TYPE] [--log-level N] [--btf FILE]\n"
		"                   the same, pinning every program as DIR/NAME; each program has\n"
		"                   its section's type and TYPE is for sections that name none\n"
		"  prog show [PROG]  programs pinned in $BPFRT_FS (or just PROG)\n"
		"  prog dump xlated PROG [linum] [opcodes]\n"
		"                   the instructions as loaded, with source lines when known\n"
		"  prog dump jited PROG [linum] [opcodes|--opcodes]\n"
		"                   the x86-64 code the JIT emits, under the instruction it came\n"
		"                   from\n"
		"  prog run PROG [data_in FILE] [data_out FILE] [data_size_out N] [ctx_in FILE]\n"
		"                [ctx_out FILE] [ctx_size_out N] [repeat N]\n"
		"                   BPF_PROG_TEST_RUN; without data_in, a 64-byte IPv4 frame\n\n"
		"PROG is [pinned] PATH (a program pinned in $BPFRT_FS, default /dev/shm/bpfrt) or\n"
		"OBJ NAME: the object file is loaded and its program NAME used.  FILE '-' is\n"
		"stdin (input) or stdout (output, as hex).  Options may also be written as\n"
		"--data-in FILE, --ctx-in FILE, --repeat N, ... .\n"
		"  -j, --json       JSON output\n"
		"  -p, --pretty     indented JSON (implies -j)\n"
		"  -k, --kernel     use the running kernel's bpf(2) (load, show, run, xlated)\n"
		"  --type TYPE      program type for every program: a SEC() name (xdp, socket,\n"
		"                   classifier, ...) or a type name (sched_cls, ...)\n"
		"  --log-level N    verifier log level; the log is printed\n"
		"  --btf FILE       target BTF for the object's CO-RE relocations (a raw BTF file,\n"
		"                   as /sys/kernel/btf/vmlinux, the default, or an ELF file's\n"
		"                   .BTF section, as a vmlinux image's)\n");
}

struct progcli {
	int json, pretty, kernel;
	struct cli_load_opts lo;
	struct json j;
};

/* ---- prog load / loadall ---- */

static int pin_fd(const struct progcli *c, int fd, const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	attr.bpf_fd = (uint32_t)fd;
	if (cli_bpf_of(c->kernel)(BPF_OBJ_PIN, &attr, sizeof(attr)) < 0)
		return cli_error("prog: cannot pin at %s: %s", path, strerror(errno));
	return 0;
}

/* bpftool's `pinmaps DIR`: every map of the object pinned as DIR/NAME. */
static int pin_maps(const struct progcli *c, struct bpfrt_object *obj, const char *dir)
{
	struct bpfrt_map *m;
	char path[4096];
	int ret = 0;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return cli_error("prog: cannot create %s: %s", dir, strerror(errno));
	for (m = bpfrt_object_next_map(obj, NULL); m && !ret; m = bpfrt_object_next_map(obj, m)) {
		if (bpfrt_map__fd(m) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, bpfrt_map__name(m));
		ret = pin_fd(c, bpfrt_map__fd(m), path);
	}
	return ret;
}

/* The object do_load() leaves to the process's exit: volatile, because a static only
 * written is dropped by the compiler, and LeakSanitizer (CI's asan step) then finds the
 * object unreachable. */
static struct bpfrt_object *volatile left_open;

static int do_load(struct progcli *c, int argc, char **argv, int all)
{
	struct bpfrt_object *obj;
	struct bpfrt_program *p;
	const char *pin = NULL, *pinmaps = NULL;
	int ret = 0, first = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "pinmaps") && i + 1 < argc) {
			pinmaps = argv[++i];
		} else if (!pin) {
			pin = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (argc < 1) {
		usage(stderr);
		return 2;
	}
	if (all && pin && mkdir(pin, 0700) && errno != EEXIST)
		return cli_error("prog: cannot create %s: %s", pin, strerror(errno));
	/* loadall: each section's own type first (libbpf's names, tc's rules); --type is the
	 * default for the sections that name none.  load: --type is the type. */
	c->lo.type_default = all;
	/* the load and the pins as one batch (api.h): the links' lock taken once */
	if (!c->kernel)
		brt_api_batch_begin();
	if (cli_object_load(argv[0], &c->lo, &obj)) {
		if (!c->kernel)
			brt_api_batch_end();
		return 1;
	}
	if (c->lo.log_level)
		fprintf(stderr, "%s", bpfrt_object_log(obj));
	if (c->json)
		json_begin_array(&c->j);
	for (p = bpfrt_object_next_program(obj, NULL); p; p = bpfrt_object_next_program(obj, p)) {
		char path[4096];
		int pinned = 0;

		if (bpfrt_program_fd(p) < 0)
			continue;
		if (pin && (all || first)) {
			if (all)
				snprintf(path, sizeof(path), "%s/%s", pin, bpfrt_program_name(p));
			else
				snprintf(path, sizeof(path), "%s", pin);
			ret = pin_fd(c, bpfrt_program_fd(p), path);
			if (ret)
				break;
			pinned = 1;
		}
		first = 0;
		if (c->json) {
			json_begin_object(&c->j);
			json_kv_string(&c->j, "name", bpfrt_program_name(p));
			json_kv_string(&c->j, "section", bpfrt_program_section_name(p));
			json_kv_string(&c->j, "type", brt_prog_type_name(bpfrt_program_type(p)));
			json_kv_uint(&c->j, "insns", bpfrt_program_insn_cnt(p));
			if (pinned)
				json_kv_string(&c->j, "pinned", path);
			json_end_object(&c->j);
		} else {
			printf("loaded '%s' (%s, %zu insns)", bpfrt_program_name(p),
			       brt_prog_type_name(bpfrt_program_type(p)),
			       bpfrt_program_insn_cnt(p));
			if (pinned)
				printf(", pinned at %s", path);
			printf("\n");
		}
	}
	if (c->json) {
		json_end_array(&c->j);
		json_finish(&c->j);
	}
	if (!ret && pinmaps)
		ret = pin_maps(c, obj, pinmaps);
	if (!c->kernel)
		brt_api_batch_end();
	if (ret) {
		bpfrt_object_close(obj);
		return ret;
	}
	/* The process exits next, which closes and unmaps all the object holds as close
	 * would (bpfrt's objects live as long as an fd, a mapping or a pin holds them, so
	 * nothing outlives the process that close would have dropped): the close's sweep
	 * (/proc/self/fd read, an fstat per fd, a munmap per program) and the frees were
	 * ~7 % of a many-program object's loadall.  Kept reachable for leak checkers. */
	left_open = obj;
	return 0;
}

/* ---- prog show ---- */

static void show_one(struct progcli *c, const struct bpf_prog_info *info, const char *pin,
		     const char *map_ids)
{
	const char *type = brt_prog_type_name(info->type);

	if (c->json) {
		json_begin_object(&c->j);
		json_kv_uint(&c->j, "id", info->id);
		json_kv_string(&c->j, "type", type);
		json_kv_string(&c->j, "name", info->name);
		json_key(&c->j, "gpl_compatible");
		json_bool(&c->j, info->gpl_compatible);
		json_kv_uint(&c->j, "bytes_xlated", info->xlated_prog_len);
		json_key(&c->j, "jited");
		json_bool(&c->j, info->jited_prog_len != 0);
		json_kv_uint(&c->j, "bytes_jited", info->jited_prog_len);
		json_kv_uint(&c->j, "nr_map_ids", info->nr_map_ids);
		if (pin)
			json_kv_string(&c->j, "pinned", pin);
		json_end_object(&c->j);
		return;
	}
	printf("%u: %s  name %s%s\n", info->id, type, info->name,
	       info->gpl_compatible ? "  gpl" : "");
	printf("\txlated %uB  %u insns", info->xlated_prog_len,
	       info->xlated_prog_len / (uint32_t)sizeof(struct bpf_insn));
	if (info->jited_prog_len)
		printf("  jited %uB", info->jited_prog_len);
	if (map_ids[0])
		printf("  map_ids %s", map_ids);
	printf("\n");
	if (pin)
		printf("\tpinned %s\n", pin);
}

/* The info and its map ids ("3,5") of an open program. */
static int prog_info_ids(const struct cli_prog *p, struct bpf_prog_info *info, char *ids,
			 size_t cap)
{
	uint32_t map_ids[64], n;
	size_t len = 0;

	ids[0] = 0;
	memset(info, 0, sizeof(*info));
	if (cli_prog_info(p, info))
		return 1;
	n = info->nr_map_ids < 64 ? info->nr_map_ids : 64;
	if (!n)
		return 0;
	memset(info, 0, sizeof(*info));
	info->nr_map_ids = n;
	info->map_ids = (uint64_t)(uintptr_t)map_ids;
	if (cli_prog_info(p, info))
		return 1;
	for (uint32_t i = 0; i < n && len + 12 < cap; i++)
		len += (size_t)snprintf(ids + len, cap - len, "%s%u", i ? "," : "", map_ids[i]);
	return 0;
}

static struct progcli *walk_cli; /* nftw() has no user argument */
static int walk_shown;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct bpf_prog_info info;
	struct cli_prog p = { .fd = -1, .sys = bpfrt_bpf, .label = path };
	struct brt_obj *obj;
	char ids[256];

	(void)st;
	(void)ftw;
	if (flag != FTW_F)
		return 0;
	p.fd = bpfrt_obj_get(path);
	if (p.fd < 0)
		return 0; /* not an object: the directory may hold other files */
	if (!brt_obj_from_fd(p.fd, BRT_OBJ_PROG, &obj)) {
		brt_obj_put(obj);
		if (!prog_info_ids(&p, &info, ids, sizeof(ids))) {
			show_one(walk_cli, &info, path, ids);
			walk_shown++;
		}
	}
	close(p.fd);
	return 0;
}

static int do_show(struct progcli *c, int argc, char **argv)
{
	struct bpf_prog_info info;
	struct cli_prog p;
	char ids[256];
	int i = 0;

	if (c->json)
		json_begin_array(&c->j);
	if (argc == 0) {
		if (c->kernel)
			return cli_error("prog show: name a pinned program with --kernel "
					 "(bpftool prog show lists the kernel's)");
		walk_cli = c;
		walk_shown = 0;
		if (nftw(brt_obj_fs_dir(), walk_one, 16, FTW_PHYS) && errno != ENOENT)
			return cli_error("prog show: %s: %s", brt_obj_fs_dir(), strerror(errno));
	} else {
		if (cli_prog_open(argc, argv, &i, c->kernel, &p))
			return 1;
		if (i != argc) {
			cli_prog_close(&p);
			return cli_error("prog show: unexpected '%s'", argv[i]);
		}
		if (prog_info_ids(&p, &info, ids, sizeof(ids))) {
			cli_prog_close(&p);
			return 1;
		}
		show_one(c, &info, p.obj ? NULL : p.label, ids);
		cli_prog_close(&p);
	}
	if (c->json) {
		json_end_array(&c->j);
		json_finish(&c->j);
	}
	return 0;
}

/* ---- prog run ---- */

struct run_io {
	const char *data_in, *data_out, *ctx_in, *ctx_out;
	uint32_t data_size_out, ctx_size_out, repeat;
};

static int write_out(const char *path, const uint8_t *buf, uint32_t len, const char *what)
{
	FILE *f;

	if (!strcmp(path, "-")) {
		printf("%s:", what);
		for (uint32_t i = 0; i < len; i++)
			printf("%s%02x", i % 16 ? " " : "\n  ", buf[i]);
		printf("\n");
		return 0;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len) {
		if (f)
			fclose(f);
		return cli_error("prog run: cannot write %s: %s", path, strerror(errno));
	}
	return fclose(f) ? cli_error("prog run: %s: %s", path, strerror(errno)) : 0;
}

static int read_in(const char *path, char **buf, size_t *len, const char *what)
{
	int err = cli_read_file(path, buf, len);

	if (err)
		return cli_error("prog run: %s %s: %s", what, path, strerror(-err));
	return 0;
}

/* Keyword arguments after PROG: "data_in FILE", "repeat N", ... */
static int parse_run_words(int argc, char **argv, int i, struct run_io *io)
{
	for (; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!v)
			return cli_error("prog run: '%s' needs a value", k);
		if (!strcmp(k, "data_in"))
			io->data_in = v;
		else if (!strcmp(k, "data_out"))
			io->data_out = v;
		else if (!strcmp(k, "ctx_in"))
			io->ctx_in = v;
		else if (!strcmp(k, "ctx_out"))
			io->ctx_out = v;
		else if (!strcmp(k, "repeat") || !strcmp(k, "data_size_out") ||
			 !strcmp(k, "ctx_size_out")) {
			unsigned long n = strtoul(v, &end, 0);

			if (*end || end == v || n > UINT32_MAX)
				return cli_error("prog run: %s: '%s' is not a number", k, v);
			if (k[0] == 'r')
				io->repeat = (uint32_t)n;
			else if (k[0] == 'd')
				io->data_size_out = (uint32_t)n;
			else
				io->ctx_size_out = (uint32_t)n;
		} else {
			return cli_error("prog run: unknown argument '%s'", k);
		}
	}
	return 0;
}

static int run_report(struct progcli *c, const union bpf_attr *attr, const struct run_io *io,
		      const uint8_t *dout, const uint8_t *cout)
{
	if (c->json) {
		json_begin_object(&c->j);
		json_kv_uint(&c->j, "retval", attr->test.retval);
		json_kv_uint(&c->j, "duration", attr->test.duration);
		json_kv_uint(&c->j, "data_size_out", attr->test.data_size_out);
		json_kv_uint(&c->j, "ctx_size_out", attr->test.ctx_size_out);
		json_end_object(&c->j);
		json_finish(&c->j);
	} else {
		printf("Return value: %u, duration%s: %uns\n", attr->test.retval,
		       io->repeat > 1 ? " (average)" : "", attr->test.duration);
	}
	if (io->data_out && write_out(io->data_out, dout, attr->test.data_size_out, "data_out"))
		return 1;
	if (io->ctx_out && write_out(io->ctx_out, cout, attr->test.ctx_size_out, "ctx_out"))
		return 1;
	return 0;
}

static int do_run(struct progcli *c, int argc, char **argv, struct run_io *io)
{
	char *data = NULL, *ctx = NULL;
	uint8_t *dout = NULL, *cout = NULL;
	size_t dlen = 64, clen = 0;
	union bpf_attr attr;
	struct cli_prog p;
	int i = 0, ret = 1;

	if (cli_prog_open(argc, argv, &i, c->kernel, &p))
		return 1;
	if (parse_run_words(argc, argv, i, io))
		goto out;
	if (io->data_in ? read_in(io->data_in, &data, &dlen, "data_in") :
			  !(data = calloc(1, dlen)))
		goto out;
	if (!io->data_in)
		data[12] = 0x08; /* ethertype IPv4, as `object run` */
	if (io->ctx_in && read_in(io->ctx_in, &ctx, &clen, "ctx_in"))
		goto out;
	if (!io->data_size_out)
		io->data_size_out = (uint32_t)dlen + 256; /* room for bpf_skb_change_tail */
	if (!io->ctx_size_out)
		io->ctx_size_out = (uint32_t)clen;
	dout = calloc(1, io->data_size_out + 1);
	cout = calloc(1, io->ctx_size_out + 1);
	if (!dout || !cout) {
		cli_error("out of memory");
		goto out;
	}
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)p.fd;
	attr.test.data_in = (uint64_t)(uintptr_t)data;
	attr.test.data_size_in = (uint32_t)dlen;
	attr.test.repeat = io->repeat;
	if (io->data_out) {
		attr.test.data_out = (uint64_t)(uintptr_t)dout;
		attr.test.data_size_out = io->data_size_out;
	}
	if (ctx) {
		attr.test.ctx_in = (uint64_t)(uintptr_t)ctx;
		attr.test.ctx_size_in = (uint32_t)clen;
	}
	if (io->ctx_out) {
		attr.test.ctx_out = (uint64_t)(uintptr_t)cout;
		attr.test.ctx_size_out = io->ctx_size_out;
	}
	if (p.sys(BPF_PROG_TEST_RUN, &attr, sizeof(attr)) < 0)
		cli_error("prog run: BPF_PROG_TEST_RUN of %s: %s%s", p.label, strerror(errno),
			  errno == EPERM && !p.obj && !c->kernel ?
				  " (a bpfrt program runs only in the process that loaded it; "
				  "name it as OBJ NAME)" : "");
	else
		ret = run_report(c, &attr, io, dout, cout);
out:
	free(data);
	free(ctx);
	free(dout);
	free(cout);
	cli_prog_close(&p);
	return ret;
}

int cmd_prog(int argc, char **argv)
{
	enum { O_TYPE = 256, O_LOG, O_BTF, O_DIN, O_DOUT, O_CIN, O_COUT, O_REPEAT, O_DSZ, O_CSZ, O_OPC, O_LINUM };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "kernel", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "type", required_argument, NULL, O_TYPE },
		{ "log-level", required_argument, NULL, O_LOG },
		{ "btf", required_argument, NULL, O_BTF },
		{ "data-in", required_argument, NULL, O_DIN },
		{ "data-out", required_argument, NULL, O_DOUT },
		{ "ctx-in", required_argument, NULL, O_CIN },
		{ "ctx-out", required_argument, NULL, O_COUT },
		{ "repeat", required_argument, NULL, O_REPEAT },
		{ "data-size-out", required_argument, NULL, O_DSZ },
		{ "ctx-size-out", required_argument, NULL, O_CSZ },
		{ "opcodes", no_argument, NULL, O_OPC },
		{ "linum", no_argument, NULL, O_LINUM },
		{ NULL, 0, NULL, 0 },
	};
	struct progcli c = { 0 };
	struct run_io io = { .repeat = 1 };
	struct cli_dump_opts dump = { 0 };
	const char *verb;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "jpkh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			c.json = 1;
			break;
		case 'p':
			c.json = c.pretty = 1;
			break;
		case 'k':
			c.kernel = c.lo.kernel = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_TYPE:
			if (cli_parse_prog_type(optarg, &c.lo.type, &c.lo.attach))
				return cli_error("prog: unknown program type '%s'", optarg);
			break;
		case O_LOG:
			c.lo.log_level = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_BTF:
			c.lo.btf = optarg;
			break;
		case O_DIN:
			io.data_in = optarg;
			break;
		case O_DOUT:
			io.data_out = optarg;
			break;
		case O_CIN:
			io.ctx_in = optarg;
			break;
		case O_COUT:
			io.ctx_out = optarg;
			break;
		case O_REPEAT:
			io.repeat = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_DSZ:
			io.data_size_out = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_CSZ:
			io.ctx_size_out = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_OPC:
			dump.opcodes = 1;
			break;
		case O_LINUM:
			dump.linum = 1;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	json_init(&c.j, stdout, c.pretty);
	verb = argv[optind++];
	argc -= optind;
	argv += optind;
	if (!strcmp(verb, "load") || !strcmp(verb, "loadall"))
		return do_load(&c, argc, argv, verb[4] == 'a');
	if (!strcmp(verb, "show") || !strcmp(verb, "list"))
		return do_show(&c, argc, argv);
	if (!strcmp(verb, "run"))
		return do_run(&c, argc, argv, &io);
	if (!strcmp(verb, "dump")) {
		dump.json = c.json;
		dump.pretty = c.pretty;
		dump.kernel = c.kernel;
		return cli_prog_dump(argc, argv, &dump);
	}
	cli_error("prog: unknown command '%s'", verb);
	usage(stderr);
	return 2;
}
