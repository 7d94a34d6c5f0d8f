/* cmd_map.c - "bpfrt map": create, show, dump, lookup, update, delete, getnext, pin, push,
 * pop, peek and event_pipe (cmd_map_event_pipe.c) on maps named by their pinned path, in
 * bpftool's syntax (keys and values as byte lists: "key 0x01 0 0 0", or "key hex 01 00 00
 * 00") and with bpftool's output, plain text or JSON (-j); maps with BTF print typed keys
 * and values as bpftool does.
 * Another process sees the live values: the map lives in the pinned file's shared memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "cli.h"
#include "btf/btf.h"
#include "btf_format.h"
#include "maps/maps.h"
#include "util/util.h"

struct mapcli {
	int json;
	int fd;
	struct bpf_map_info info;
	uint32_t vsize;       /* syscall value size (all CPUs for per-CPU maps) */
	int ncpus;
	struct brt_btf *btf;  /* the map's types (its BTF copy, parsed), or NULL: raw bytes */
	struct json jw;  /* -j output */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: bpfrt map [-j] COMMAND ...\n\n"
		"  map create PATH type TYPE key KEY_SIZE value VALUE_SIZE entries MAX\n"
		"             [name NAME] [flags FLAGS]      create a map and pin it at PATH\n"
		"  map show   MAP                           type, sizes, flags, name, btf_id\n"
		"  map dump   MAP                           every key and value\n"
		"  map lookup MAP key DATA\n"
		"  map update MAP key DATA value DATA [any|exist|noexist]\n"
		"  map delete MAP key DATA\n"
		"  map getnext MAP [key DATA]               the key after DATA (or the first)\n"
		"  map pin    MAP PATH                      pin again under another name\n"
		"  map push   MAP value DATA  /  map pop MAP  /  map peek MAP   (queue, stack)\n"
		"  map event_pipe MAP [cpu N index M] [-n COUNT] [-t SECONDS] [--pages N]\n"
		"             print what bpf_perf_event_output() sends into a perf event array\n"
		"             (a ring per CPU, or one for cpu N at index M) until Ctrl-C\n\n"
		"MAP is [pinned] PATH, a file in $BPFRT_FS (default /dev/shm/bpfrt), or id MAP_ID\n"
		"(a map a pinned program uses, as its map_ids show, or a pinned map).\n"
		"DATA is a list of bytes, each decimal or 0x-hex (\"key 0x01 0 0 0\"), or \"hex\"\n"
		"followed by hex bytes (\"key hex 01 00 00 00\").  TYPE: hash, array, percpu_hash,\n"
		"percpu_array, lru_hash, lru_percpu_hash, queue, stack, ...\n"
		"A map created with BTF keeps its types: dump and lookup print keys and values\n"
		"through them as bpftool does (with -j, under \"formatted\").\n"
		"-j, --json: JSON output.\n");
}

static int is_keyword(const char *s)
{
	static const char *const words[] = { "key", "value", "any", "exist", "noexist" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(s, words[i]))
			return 1;
	return 0;
}

/* Parse bytes from argv[*i] on until a keyword; exactly len bytes are required. */
static int parse_bytes(int argc, char **argv, int *i, uint8_t *out, uint32_t len,
		       const char *what)
{
	int hex = 0;
	uint32_t n = 0;

	if (*i < argc && !strcmp(argv[*i], "hex")) {
		hex = 1;
		(*i)++;
	}
	for (; *i < argc && !is_keyword(argv[*i]); (*i)++) {
		char *end;
		unsigned long v = strtoul(argv[*i], &end, hex ? 16 : 0);

		if (*end || end == argv[*i] || v > 255)
			return cli_error("map: %s: '%s' is not a byte", what, argv[*i]);
		if (n == len)
			return cli_error("map: %s: more than the map's %u bytes", what, len);
		out[n++] = (uint8_t)v;
	}
	if (n != len)
		return cli_error("map: %s: %u bytes given, the map's %s has %u", what, n, what, len);
	return 0;
}

/* Does type id describe exactly size bytes? */
static int type_fits(const struct brt_btf *btf, uint32_t id, uint32_t size)
{
	uint64_t n;

	return brt_btf_type(btf, id) && !brt_btf_resolve_size(btf, id, &n) && n == size;
}

/* The map's types, from the copy of its BTF that the map file keeps (so they outlive the
 * loader), parsed privately: the copy is shared memory a writer may have scribbled on.
 * Types that no longer describe the key and value sizes are dropped with a note, and the
 * bytes print raw. */
static void load_types(struct mapcli *m, const char *path)
{
	struct brt_map *map;
	const void *blob;
	char err[256] = "the types do not match the key and value sizes";
	uint32_t size;
	void *copy = NULL;

	if (!m->info.btf_id || !m->info.btf_value_type_id || brt_map_from_fd(m->fd, &map))
		return;
	if (!brt_map_btf_blob(map, &blob, &size) && (copy = malloc(size)))
		memcpy(copy, blob, size);
	brt_map_put(map);
	if (!copy)
		return;
	if (brt_btf_parse(copy, size, &m->btf, err, sizeof(err)) ||
	    !type_fits(m->btf, m->info.btf_value_type_id, m->info.value_size) ||
	    (m->info.btf_key_type_id &&
	     !type_fits(m->btf, m->info.btf_key_type_id, m->info.key_size))) {
		fprintf(stderr, "bpfrt: map: %s: BTF unusable, printing raw bytes: %s\n", path,
			err);
		brt_btf_free(m->btf);
		m->btf = NULL;
	}
	free(copy);
}

/* `id N`: BPF_MAP_GET_FD_BY_ID (a map a pinned program names, or a pinned map). */
static int map_by_id(const char *s, char *label, size_t cap)
{
	union bpf_attr attr;
	unsigned long id;
	char *end;

	errno = 0;
	id = strtoul(s, &end, 0);
	snprintf(label, cap, "id %s", s);
	if (!*s || *end || errno || id > UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.map_id = (uint32_t)id;
	return bpfrt_bpf(BPF_MAP_GET_FD_BY_ID, &attr, sizeof(attr));
}

static int open_map(struct mapcli *m, int argc, char **argv, int *i)
{
	uint32_t len = sizeof(m->info);
	char label[64];
	const char *path;

	if (*i < argc && !strcmp(argv[*i], "id")) {
		if (++*i >= argc)
			return cli_error("map: id: missing MAP_ID");
		m->fd = map_by_id(argv[(*i)++], label, sizeof(label));
		path = label;
	} else {
		if (*i < argc && !strcmp(argv[*i], "pinned"))
			(*i)++;
		if (*i >= argc)
			return cli_error("map: missing MAP (a pinned path, or id MAP_ID)");
		path = argv[(*i)++];
		m->fd = bpfrt_obj_get(path);
	}
	if (m->fd < 0)
		return cli_error("map: %s: %s", path, strerror(errno));
	memset(&m->info, 0, sizeof(m->info));
	if (bpfrt_obj_get_info_by_fd(m->fd, &m->info, &len) || !m->info.type ||
	    !brt_map_type_known(m->info.type)) {
		close(m->fd);
		return cli_error("map: %s: not a map", path);
	}
	m->ncpus = brt_map_is_percpu(m->info.type) ? bpfrt_num_possible_cpus() : 1;
	m->vsize = brt_map_is_percpu(m->info.type) ?
			   (uint32_t)BRT_ROUND8(m->info.value_size) * (uint32_t)m->ncpus :
			   m->info.value_size;
	load_types(m, path);
	return 0;
}

static int map_frozen(const struct mapcli *m)
{
	struct brt_map *map;
	int frozen;

	if (brt_map_from_fd(m->fd, &map))
		return 0;
	frozen = !!atomic_load_explicit(&map->obj.hdr->frozen, memory_order_acquire);
	brt_map_put(map);
	return frozen;
}

/* bpftool's fprint_hex(): bytes in hex, two spaces every 8, a new line every 16. */
static void print_hex(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("%s%02x", !i ? "" : !(i % 16) ? "\n" : !(i % 8) ? "  " : " ", p[i]);
}

static void print_hex_json(struct json *w, const uint8_t *p, uint32_t n)
{
	json_begin_array(w);
	for (uint32_t i = 0; i < n; i++)
		json_printf(w, "\"0x%02x\"", p[i]);
	json_end_array(w);
}

/* One entry through the map's BTF, as bpftool's do_dump_btf(): {"key": ..., "value": ...}
 * ("values": [{"cpu": N, "value": ...}] for per-CPU maps; no key for keyless types). */
static void print_typed(const struct mapcli *m, struct json *w, int plain,
			const uint8_t *key, const uint8_t *value)
{
	uint32_t stride = (uint32_t)BRT_ROUND8(m->info.value_size);
	uint32_t vid = m->info.btf_value_type_id;
	int err = 0;

	json_begin_object(w);
	if (m->info.btf_key_type_id) {
		json_key(w, "key");
		err = btf_format(m->btf, m->info.btf_key_type_id, key, m->info.key_size, plain,
				     w);
	}
	if (!err && !brt_map_is_percpu(m->info.type)) {
		json_key(w, "value");
		btf_format(m->btf, vid, value, m->info.value_size, plain, w);
	} else if (!err) {
		json_key(w, "values");
		json_begin_array(w);
		for (int c = 0; c < m->ncpus && !err; c++) {
			json_begin_object(w);
			json_key(w, "cpu");
			json_printf(w, "%d", c);
			json_key(w, "value");
			err = btf_format(m->btf, vid, value + (size_t)c * stride,
					     m->info.value_size, plain, w);
			json_end_object(w);
		}
		json_end_array(w);
	}
	json_end_object(w);
}

/* -j: bpftool's print_entry_json(): the raw bytes, then "formatted" when typed. */
static void print_entry_json(struct mapcli *m, const uint8_t *key, const uint8_t *value)
{
	uint32_t stride = (uint32_t)BRT_ROUND8(m->info.value_size);
	struct json *w = &m->jw;

	json_begin_object(w);
	json_key(w, "key");
	print_hex_json(w, key, m->info.key_size);
	if (brt_map_is_percpu(m->info.type)) {
		json_key(w, "values");
		json_begin_array(w);
		for (int c = 0; c < m->ncpus; c++) {
			json_begin_object(w);
			json_key(w, "cpu");
			json_printf(w, "%d", c);
			json_key(w, "value");
			print_hex_json(w, value + (size_t)c * stride, m->info.value_size);
			json_end_object(w);
		}
		json_end_array(w);
	} else {
		json_key(w, "value");
		print_hex_json(w, value, m->info.value_size);
	}
	if (m->btf) {
		json_key(w, "formatted");
		print_typed(m, w, 0, key, value);
	}
	json_end_object(w);
}

/* Text without types: bpftool's print_entry_plain(). */
static void print_entry_plain(const struct mapcli *m, const uint8_t *key, const uint8_t *value)
{
	uint32_t ks = m->info.key_size, vs = m->info.value_size;
	uint32_t stride = (uint32_t)BRT_ROUND8(vs);
	int break_names, one_line;

	if (brt_map_is_percpu(m->info.type)) {
		if (ks) {
			printf("key:\n");
			print_hex(key, ks);
			printf("\n");
		}
		for (int c = 0; vs && c < m->ncpus; c++) {
			printf("value (CPU %02d):%c", c, vs > 16 ? '\n' : ' ');
			print_hex(value + (size_t)c * stride, vs);
			printf("\n");
		}
		return;
	}
	/* names on their own line for long data, key and value on one line for short */
	break_names = ks > 16 || vs > 16;
	one_line = ks + vs <= 24 && !break_names;
	if (ks) {
		printf("key:%c", break_names ? '\n' : ' ');
		print_hex(key, ks);
		printf(one_line ? "  " : "\n");
	}
	if (vs) {
		printf("value:%c", break_names ? '\n' : ' ');
		print_hex(value, vs);
	}
	printf("\n");
}

/* One looked-up entry of `lookup`, `peek` or `pop`, a whole document. */
static void print_entry(struct mapcli *m, const uint8_t *key, const uint8_t *value)
{
	struct json w;

	if (m->json) {
		print_entry_json(m, key, value);
		json_finish(&m->jw);
	} else if (m->btf) {
		json_init(&w, stdout, JSON_BPFTOOL);
		print_typed(m, &w, 1, key, value);
		json_finish(&w);
	} else {
		print_entry_plain(m, key, value);
	}
}

static int do_show(struct mapcli *m)
{
	const struct bpf_map_info *in = &m->info;
	struct json *w = &m->jw;
	int frozen = map_frozen(m);

	if (m->json) {
		json_begin_object(w);
		json_key(w, "id");
		json_printf(w, "%u", in->id);
		json_key(w, "type");
		json_string(w, brt_map_type_name(in->type));
		if (in->name[0]) {
			json_key(w, "name");
			json_string(w, in->name);
		}
		json_key(w, "flags");
		json_printf(w, "%u", in->map_flags);
		json_key(w, "bytes_key");
		json_printf(w, "%u", in->key_size);
		json_key(w, "bytes_value");
		json_printf(w, "%u", in->value_size);
		json_key(w, "max_entries");
		json_printf(w, "%u", in->max_entries);
		json_key(w, "frozen");
		json_printf(w, "%d", frozen);
		if (in->btf_id) {
			json_key(w, "btf_id");
			json_printf(w, "%u", in->btf_id);
		}
		json_end_object(w);
		json_finish(w);
		return 0;
	}
	printf("%u: %s  ", in->id, brt_map_type_name(in->type));
	if (in->name[0])
		printf("name %s  ", in->name);
	printf("flags 0x%x\n\tkey %uB  value %uB  max_entries %u", in->map_flags, in->key_size,
	       in->value_size, in->max_entries);
	if (in->btf_id || frozen)
		printf("\n\t");
	if (in->btf_id)
		printf("btf_id %u", in->btf_id);
	if (frozen)
		printf("%sfrozen", in->btf_id ? "  " : "");
	printf("\n");
	return 0;
}

static int do_dump(struct mapcli *m)
{
	uint8_t *key = calloc(1, m->info.key_size + 1), *next = calloc(1, m->info.key_size + 1);
	uint8_t *value = calloc(1, m->vsize ? m->vsize : 1);
	struct json typed;
	int n = 0, err = 0, have = 0;

	if (!key || !next || !value) {
		err = cli_error("map dump: out of memory");
		goto out;
	}
	/* like bpftool: typed text is a JSON array laid out for reading, without a count */
	json_init(&typed, stdout, JSON_BPFTOOL);
	if (m->json)
		json_begin_array(&m->jw);
	else if (m->btf)
		json_begin_array(&typed);
	while (!bpfrt_map_get_next_key(m->fd, have ? key : NULL, next)) {
		memcpy(key, next, m->info.key_size);
		have = 1;
		if (bpfrt_map_lookup_elem(m->fd, key, value))
			continue; /* deleted meanwhile, or an empty slot of a prog/map array */
		if (m->json)
			print_entry_json(m, key, value);
		else if (m->btf)
			print_typed(m, &typed, 1, key, value);
		else
			print_entry_plain(m, key, value);
		n++;
	}
	if (errno != ENOENT && errno != EINVAL)
		err = cli_error("map dump: %s", strerror(errno));
	if (m->json) {
		json_end_array(&m->jw);
		json_finish(&m->jw);
	} else if (m->btf) {
		json_end_array(&typed);
		json_finish(&typed);
	} else {
		printf("Found %d element%s\n", n, n == 1 ? "" : "s");
	}
out:
	free(key);
	free(next);
	free(value);
	return err;
}

/* getnext as bpftool prints it; -j adds the keys "formatted" when the map has types. */
static void print_next(struct mapcli *m, const uint8_t *key, const uint8_t *next)
{
	struct json *w = &m->jw;

	if (!m->json) {
		if (key) {
			printf("key:\n");
			print_hex(key, m->info.key_size);
			printf("\n");
		} else {
			printf("key: None\n");
		}
		printf("next key:\n");
		print_hex(next, m->info.key_size);
		printf("\n");
		return;
	}
	json_begin_object(w);
	json_key(w, "key");
	if (key)
		print_hex_json(w, key, m->info.key_size);
	else
		json_printf(w, "null");
	json_key(w, "next_key");
	print_hex_json(w, next, m->info.key_size);
	if (m->btf && m->info.btf_key_type_id) {
		json_key(w, "formatted");
		json_begin_object(w);
		json_key(w, "key");
		if (key)
			btf_format(m->btf, m->info.btf_key_type_id, key, m->info.key_size, 0, w);
		else
			json_printf(w, "null");
		json_key(w, "next_key");
		btf_format(m->btf, m->info.btf_key_type_id, next, m->info.key_size, 0, w);
		json_end_object(w);
	}
	json_end_object(w);
	json_finish(w);
}

/* Per-CPU maps: a single value given on the command line goes to every CPU. */
static void spread(const struct mapcli *m, uint8_t *value)
{
	uint32_t stride = (uint32_t)BRT_ROUND8(m->info.value_size);

	for (int c = 1; c < m->ncpus && brt_map_is_percpu(m->info.type); c++)
		memcpy(value + (size_t)c * stride, value, m->info.value_size);
}

static int do_elem(struct mapcli *m, const char *cmd, int argc, char **argv, int i)
{
	uint8_t key[1024] = { 0 }, next[1024];
	uint8_t *value = calloc(1, m->vsize ? m->vsize : 1);
	uint64_t flags = BPF_ANY;
	int err = 0, have_key = 0;

	if (!value)
		return cli_error("map: out of memory");
	if (m->info.key_size > sizeof(key)) {
		err = cli_error("map: keys over %zu bytes are not supported here", sizeof(key));
		goto out;
	}
	while (i < argc && !err) {
		const char *w = argv[i++];

		if (!strcmp(w, "key")) {
			err = parse_bytes(argc, argv, &i, key, m->info.key_size, "key");
			have_key = 1;
		} else if (!strcmp(w, "value")) {
			err = parse_bytes(argc, argv, &i, value, m->info.value_size, "value");
			spread(m, value);
		} else if (!strcmp(w, "any")) {
			flags = BPF_ANY;
		} else if (!strcmp(w, "exist")) {
			flags = BPF_EXIST;
		} else if (!strcmp(w, "noexist")) {
			flags = BPF_NOEXIST;
		} else {
			err = cli_error("map %s: unexpected '%s'", cmd, w);
		}
	}
	if (err)
		goto out;
	if (!have_key && m->info.key_size && strcmp(cmd, "getnext")) {
		err = cli_error("map %s: missing key", cmd);
		goto out;
	}
	if (!strcmp(cmd, "lookup") || !strcmp(cmd, "peek")) {
		err = bpfrt_map_lookup_elem(m->fd, m->info.key_size ? key : NULL, value);
		if (!err) {
			print_entry(m, key, value);
		} else if (err == -ENOENT && !strcmp(cmd, "lookup")) {
			/* bpftool's answer for a missing key; still a failure */
			if (m->json) {
				printf("null\n");
			} else {
				printf("key:\n");
				print_hex(key, m->info.key_size);
				printf("\n\nNot found\n");
			}
			err = 1;
			goto out;
		}
	} else if (!strcmp(cmd, "pop")) {
		err = bpfrt_map_lookup_and_delete_elem(m->fd, NULL, value);
		if (!err)
			print_entry(m, key, value);
	} else if (!strcmp(cmd, "update") || !strcmp(cmd, "push")) {
		err = bpfrt_map_update_elem(m->fd, m->info.key_size ? key : NULL, value, flags);
	} else if (!strcmp(cmd, "delete")) {
		err = bpfrt_map_delete_elem(m->fd, key);
	} else {
		err = bpfrt_map_get_next_key(m->fd, have_key ? key : NULL, next);
		if (!err)
			print_next(m, have_key ? key : NULL, next);
	}
	if (err)
		err = cli_error("map %s: %s", cmd, strerror(-err));
out:
	free(value);
	return err;
}

static int parse_u32(const char *s, uint32_t *out, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*end || end == s || v > UINT32_MAX)
		return cli_error("map create: %s: '%s' is not a number", what, s);
	*out = (uint32_t)v;
	return 0;
}

static int do_create(int argc, char **argv, int i)
{
	uint32_t type = 0, key = 0, value = 0, entries = 0, flags = 0;
	const char *path, *name = NULL;
	int fd, err = 0;

	if (i >= argc)
		return cli_error("map create: missing PATH");
	path = argv[i++];
	while (i + 1 < argc && !err) {
		const char *w = argv[i++], *v = argv[i++];

		if (!strcmp(w, "type")) {
			int t = brt_map_type_from_name(v);

			if (t < 0)
				return cli_error("map create: unknown type '%s'", v);
			type = (uint32_t)t;
		} else if (!strcmp(w, "key")) {
			err = parse_u32(v, &key, "key");
		} else if (!strcmp(w, "value")) {
			err = parse_u32(v, &value, "value");
		} else if (!strcmp(w, "entries")) {
			err = parse_u32(v, &entries, "entries");
		} else if (!strcmp(w, "flags")) {
			err = parse_u32(v, &flags, "flags");
		} else if (!strcmp(w, "name")) {
			name = v;
		} else {
			return cli_error("map create: unexpected '%s'", w);
		}
	}
	if (err)
		return err;
	if (i < argc)
		return cli_error("map create: '%s' has no value", argv[i]);
	if (!type)
		return cli_error("map create: missing type");
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = flags);
	fd = bpfrt_map_create(type, name, key, value, entries, &o);
	if (fd < 0)
		return cli_error("map create: %s", strerror(-fd));
	err = bpfrt_obj_pin(fd, path);
	close(fd);
	if (err)
		return cli_error("map create: pin %s: %s", path, strerror(-err));
	return 0;
}

int cmd_map(int argc, char **argv)
{
	struct mapcli m = { .fd = -1 };
	const char *cmd;
	int i = 1, err;

	json_init(&m.jw, stdout, JSON_COMPACT);
	for (int j = 1; j < argc; j++) {
		if (!strcmp(argv[j], "-j") || !strcmp(argv[j], "--json") || !strcmp(argv[j], "-p")) {
			m.json = 1;
			memmove(&argv[j], &argv[j + 1], (size_t)(argc - j) * sizeof(*argv));
			argc--;
			j--;
		}
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[i++];
	if (!strcmp(cmd, "create"))
		return do_create(argc, argv, i);
	if (strcmp(cmd, "show") && strcmp(cmd, "dump") && strcmp(cmd, "lookup") &&
	    strcmp(cmd, "update") && strcmp(cmd, "delete") && strcmp(cmd, "getnext") &&
	    strcmp(cmd, "pin") && strcmp(cmd, "push") && strcmp(cmd, "pop") && strcmp(cmd, "peek") &&
	    strcmp(cmd, "event_pipe")) {
		cli_error("map: unknown command '%s'", cmd);
		usage(stderr);
		return 2;
	}
	err = open_map(&m, argc, argv, &i);
	if (err)
		return err;
	if (!strcmp(cmd, "show"))
		err = do_show(&m);
	else if (!strcmp(cmd, "dump"))
		err = do_dump(&m);
	else if (!strcmp(cmd, "event_pipe"))
		err = m.info.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY ?
			      cli_map_event_pipe(m.fd, argv[i - 1], argc, argv, i, m.json) :
			      cli_error("map event_pipe: %s is not a perf event array (type %s)",
					argv[i - 1], brt_map_type_name(m.info.type));
	else if (!strcmp(cmd, "pin"))
		err = i < argc ? (bpfrt_obj_pin(m.fd, argv[i]) ?
					  cli_error("map pin: %s: %s", argv[i], strerror(errno)) : 0) :
				 cli_error("map pin: missing PATH");
	else
		err = do_elem(&m, cmd, argc, argv, i);
	brt_btf_free(m.btf);
	close(m.fd);
	return err;
}
