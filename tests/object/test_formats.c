/* test_formats.c - object formats of other loaders (issue #15): iproute2's struct
 * bpf_elf_map (pinning under tc/globals, inner_id/inner_idx map-in-map, "N/M" tail-call
 * sections, tc's default type for unknown sections), the kernel samples' struct
 * bpf_map_def (inner_map_idx, numa_node, outer value_size 0), libbpf 0.x section prefixes,
 * e_machine EM_NONE, and the refusals naming the field and its file offset.  Objects are
 * tests/progs/tc_elf_map.bpf.c and samples_maps.bpf.c.  As root the same objects also go
 * into the kernel through the same loader (a private bpffs for the pins) and must give the
 * same results.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfrt.h"
#include "elf/elf.h"
#include "elf/elf_test_util.h"
#include "harness.h"

static char msgs[4096];

static int keep_msg(enum bpfrt_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	vsnprintf(msgs, sizeof(msgs), fmt, ap);
	return 0;
}

static const struct brt_elf_map *map_named(const struct brt_elf_obj *o, const char *name)
{
	for (size_t i = 0; i < o->nmaps; i++)
		if (!strcmp(o->maps[i].name, name))
			return &o->maps[i];
	return NULL;
}

static const struct brt_elf_prog *prog_named(const struct brt_elf_obj *o, const char *name)
{
	for (size_t i = 0; i < o->nprogs; i++)
		if (!strcmp(o->progs[i].name, name))
			return &o->progs[i];
	return NULL;
}

static void parse_tc(const unsigned char *img, size_t len)
{
	struct brt_elf_obj *o = NULL;
	const struct brt_elf_map *jmp, *counts, *outer;
	const struct brt_elf_prog *tail;
	char err[512] = "";

	T_CASE("tc: parse");
	T_EQ_INT(0, brt_elf_open(img, len, "tc.o", &o, err, sizeof(err)));
	if (!o) {
		T_FAIL("%s", err);
		return;
	}
	jmp = map_named(o, "jmp_tc");
	counts = map_named(o, "counts");
	outer = map_named(o, "outer");
	tail = prog_named(o, "cls_tail");
	T_ASSERT(jmp && counts && outer && tail);
	if (!jmp || !counts || !outer || !tail)
		goto out;
	T_EQ_INT(1, jmp->id);
	T_EQ_INT(1, jmp->pinning);
	T_EQ_STR("tc/globals", jmp->pin_dir);
	T_EQ_INT(0, counts->pinning);
	/* "1/0": the tail-call section fills key 0 of the map with id 1 */
	T_EQ_INT(1, jmp->nslots);
	if (jmp->nslots) {
		T_EQ_INT(0, jmp->slots[0].index);
		T_EQ_INT((int)(tail - o->progs), jmp->slots[0].target);
	}
	/* the outer map: value 4 (tc's fd), inner map id 2 = counts, counts at key 1 */
	T_EQ_INT(4, outer->value_size);
	T_EQ_INT((int)(counts - o->maps) + 1, outer->inner_ref);
	T_EQ_INT(1, outer->nslots);
	if (outer->nslots) {
		T_EQ_INT(1, outer->slots[0].index);
		T_EQ_INT((int)(counts - o->maps), outer->slots[0].target);
	}
	/* tc loads every section of its object as a classifier */
	for (size_t i = 0; i < o->nprogs; i++) {
		T_CASE(o->progs[i].sec_name);
		T_EQ_INT(BPF_PROG_TYPE_SCHED_CLS, o->progs[i].type);
	}
out:
	brt_elf_free(o);
}

static void parse_samples(const unsigned char *img, size_t len)
{
	struct brt_elf_obj *o = NULL;
	const struct brt_elf_map *inner, *outer, *numa;
	char err[512] = "";

	T_CASE("samples: parse");
	T_EQ_INT(0, brt_elf_open(img, len, "samples.o", &o, err, sizeof(err)));
	if (!o) {
		T_FAIL("%s", err);
		return;
	}
	inner = map_named(o, "inner_arr");
	outer = map_named(o, "outer_arr");
	numa = map_named(o, "numa_hash");
	T_ASSERT(inner && outer && numa);
	if (inner && outer && numa) {
		T_EQ_INT(4, outer->value_size);
		T_EQ_INT((int)(inner - o->maps) + 1, outer->inner_ref);
		T_EQ_INT(0, inner->inner_ref);
		T_EQ_INT(BPF_F_NUMA_NODE, numa->map_flags);
		T_EQ_INT(0, numa->numa_node);
	}
	T_CASE("samples: libbpf 0.x section prefixes");
	T_ASSERT(prog_named(o, "count") && prog_named(o, "xdp_pass"));
	if (prog_named(o, "count") && prog_named(o, "xdp_pass")) {
		T_EQ_INT(BPF_PROG_TYPE_SOCKET_FILTER, prog_named(o, "count")->type);
		T_EQ_INT(BPF_PROG_TYPE_XDP, prog_named(o, "xdp_pass")->type);
	}
	brt_elf_free(o);
}

/* Open a copy of img with the 32-bit word at byte off of section sec set to val; the
 * error text is returned in err. */
static int open_patched(const unsigned char *img, size_t len, const char *sec, size_t off,
			uint32_t val, char *err, size_t errlen)
{
	unsigned char *copy = malloc(len);
	struct brt_elf_obj *o = NULL;
	size_t s;
	int ret;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, img, len);
	s = raw_find_sec(copy, sec);
	memcpy(copy + raw_shdr(copy, s)->sh_offset + off, &val, 4);
	err[0] = 0;
	ret = brt_elf_open(copy, len, "bad.o", &o, err, errlen);
	brt_elf_free(o);
	free(copy);
	return ret;
}

static void refusals(const unsigned char *tc, size_t tclen, const unsigned char *sm,
		     size_t smlen)
{
	unsigned char *copy;
	struct brt_elf_obj *o = NULL;
	char err[512];

	/* maps lie in symbol order: tc's jmp_tc at 0, counts at 36, outer at 72 */
	T_CASE("bpf_elf_map custom pinning");
	T_EQ_INT(-EINVAL, open_patched(tc, tclen, "maps", 24, 7, err, sizeof(err)));
	T_CONTAINS("map 'jmp_tc': pinning 7 (struct bpf_elf_map, byte 24", err);
	T_CONTAINS("file offset 0x", err);
	T_CASE("bpf_elf_map inner_id names no map");
	T_EQ_INT(-EINVAL, open_patched(tc, tclen, "maps", 72 + 28, 9, err, sizeof(err)));
	T_CONTAINS("map 'outer': inner_id 9", err);
	T_CONTAINS("no map of the object has that id", err);
	T_CASE("samples inner_map_idx out of range");
	T_EQ_INT(-EINVAL, open_patched(sm, smlen, "maps", 28 + 20, 9, err, sizeof(err)));
	T_CONTAINS("map 'outer_arr': inner_map_idx 9 (the samples' struct bpf_map_def, byte 20",
		   err);
	T_CASE("e_machine EM_NONE");
	copy = malloc(tclen);
	if (copy) {
		memcpy(copy, tc, tclen);
		raw_ehdr(copy)->e_machine = EM_NONE;
		T_EQ_INT(0, brt_elf_open(copy, tclen, "em_none.o", &o, err, sizeof(err)));
		brt_elf_free(o);
		free(copy);
	}
}

static int test_run(int fd, int kernel, uint32_t *retval)
{
	static const unsigned char pkt[64] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0, 0x45 };
	union bpf_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uint64_t)(uintptr_t)pkt;
	attr.test.data_size_in = sizeof(pkt);
	attr.test.repeat = 1;
	ret = kernel ? (int)syscall(__NR_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)) :
		       bpfrt_bpf(BPF_PROG_TEST_RUN, &attr, sizeof(attr));
	*retval = attr.test.retval;
	return ret ? -errno : 0;
}

static int map_lookup(int fd, int kernel, uint32_t key, void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = (uint64_t)(uintptr_t)&key;
	attr.value = (uint64_t)(uintptr_t)value;
	return (kernel ? (int)syscall(__NR_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr)) :
			 bpfrt_bpf(BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr))) ? -errno : 0;
}

/* Load both objects (bpfrt, or the kernel) and run them: the classifier tail-calls into
 * "1/0" (42) after counting in the inner map reached through the outer map; the pin is at
 * <root>/tc/globals/jmp_tc; the samples' outer map is made with its inner map. */
static void load_and_run(const char *root, int kernel)
{
	struct bpfrt_object_open_opts o = { .sz = sizeof(o), .pin_root_path = root,
					    .kernel = kernel };
	struct bpfrt_object *obj;
	struct bpfrt_program *p;
	char path[512];
	uint32_t ret = 0;
	uint64_t count = 0;
	struct stat st;

	T_CASE(kernel ? "kernel: tc object" : "bpfrt: tc object");
	obj = bpfrt_object_open_file(corpus_path("tc_elf_map"), &o);
	T_ASSERT(obj);
	if (!obj)
		return;
	if (bpfrt_object_load(obj)) {
		T_FAIL("load: %s\n%s", strerror(errno), bpfrt_object_log(obj));
		bpfrt_object_close(obj);
		return;
	}
	snprintf(path, sizeof(path), "%s/tc/globals/jmp_tc", root);
	T_EQ_INT(0, stat(path, &st));
	p = bpfrt_object_find_program_by_name(obj, "cls_entry");
	T_ASSERT(p);
	if (p) {
		T_EQ_INT(0, test_run(bpfrt_program_fd(p), kernel, &ret));
		T_EQ_INT(42, ret);
		T_EQ_INT(0, map_lookup(bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "counts")),
				       kernel, 0, &count));
		T_EQ_U64(1, count);
	}
	p = bpfrt_object_find_program_by_name(obj, "from_container");
	if (p) {
		T_EQ_INT(0, test_run(bpfrt_program_fd(p), kernel, &ret));
		T_EQ_INT(1, ret);
	}
	bpfrt_object_close(obj);
	/* the pinned prog array is reused by the next load, as tc does */
	obj = bpfrt_object_open_file(corpus_path("tc_elf_map"), &o);
	T_ASSERT(obj && !bpfrt_object_load(obj));
	bpfrt_object_close(obj);
	unlink(path);

	T_CASE(kernel ? "kernel: samples object" : "bpfrt: samples object");
	obj = bpfrt_object_open_file(corpus_path("samples_maps"), &o);
	T_ASSERT(obj);
	if (!obj)
		return;
	if (bpfrt_object_load(obj)) {
		T_FAIL("load: %s\n%s", strerror(errno), bpfrt_object_log(obj));
	} else {
		p = bpfrt_object_find_program_by_name(obj, "count");
		T_EQ_INT(0, test_run(bpfrt_program_fd(p), kernel, &ret));
		/* the samples' loader leaves the outer map empty */
		T_EQ_INT(100, ret);
	}
	bpfrt_object_close(obj);
}

/* root/tc/globals, root/tc and root (left empty by load_and_run) */
static void rm_dirs(const char *root)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/tc/globals", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/tc", root);
	rmdir(path);
	rmdir(root);
}

int main(void)
{
	size_t tclen, smlen;
	unsigned char *tc = corpus_read("tc_elf_map", &tclen);
	unsigned char *sm = corpus_read("samples_maps", &smlen);
	char root[] = "/tmp/bpfrt-formats.XXXXXX";

	if (!tc || !sm)
		T_SKIP("corpus not built (clang missing)");
	bpfrt_set_print(keep_msg);
	parse_tc(tc, tclen);
	parse_samples(sm, smlen);
	refusals(tc, tclen, sm, smlen);

	if (!t_scratch_dir(root))
		T_SKIP("mkdtemp: %s", strerror(errno));
	/* bpfrt pins only inside its bpffs directory */
	setenv("BPFRT_FS", root, 1);
	load_and_run(root, 0);
	rm_dirs(root);
	if (geteuid() == 0 && !mkdir(root, 0700) && !mount("bpf", root, "bpf", 0, NULL)) {
		load_and_run(root, 1);
		umount2(root, MNT_DETACH);
		rmdir(root);
	} else {
		printf("kernel part skipped: not root or no bpffs\n");
	}
	free(tc);
	free(sm);
	return t_done();
}
