/* test_shared_header.c - what a process that can write an object's file gains by
 * rewriting its header or its slots after another process opened it (issue 14, item 3;
 * docs/SECURITY.md "Shared memory and crashes"): nothing.  Each object here is scribbled
 * on through its shared mapping, as another process would, and the reader must keep
 * using what it checked when it first saw the file:
 *   - a map's header (sizes, max_entries): BPF_OBJ_GET_INFO_BY_FD reports the real map;
 *   - a map-of-maps template: an inner map of another shape is still refused;
 *   - a program's type in its header: a prog array still refuses a program of another
 *     type than the slots hold;
 *   - a BTF object's data_size and bytes: BTF_GET_INFO copies the checked blob;
 *   - a map-of-maps or prog-array slot given an id: never followed;
 *   - a read-only BPF_OBJ_GET by another process: a map's fds then ask the kernel for
 *     their mode (the shared header's restricted word), a program's have none, as in the
 *     kernel (bpf_obj_get_user() passes the flags to maps only), so a program whose
 *     header this process keeps in memory (a private copy) loses nothing by not seeing
 *     the word.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/btf.h>

#include "harness.h"
#include "bpfrt.h"
#include "btf_blob.h"
#include "maps/maps.h"

static int sys(int cmd, union bpf_attr *a)
{
	int r = bpfrt_bpf(cmd, a, sizeof(*a));

	return r < 0 ? -errno : r;
}

static int map_create(uint32_t type, uint32_t key, uint32_t value, uint32_t max, int inner)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.inner_map_fd = (uint32_t)inner;
	return sys(BPF_MAP_CREATE, &a);
}

static int prog_load(uint32_t type)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	return sys(BPF_PROG_LOAD, &a);
}

static int update(int map, uint32_t key, int32_t value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&value;
	return sys(BPF_MAP_UPDATE_ELEM, &a);
}

static struct brt_map *map_of(int fd)
{
	struct brt_map *m = NULL;

	if (brt_map_from_fd(fd, &m))
		return NULL;
	brt_map_put(m); /* the fd keeps it */
	return m;
}

static void map_header(void)
{
	struct bpf_map_info info;
	union bpf_attr a;
	int fd = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	struct brt_map *m = map_of(fd);

	T_CASE("map header rewritten after open: info and bounds are the checked ones");
	T_ASSERT(fd >= 0 && m);
	if (!m)
		return;
	m->obj.hdr->value_size = 1u << 20;
	m->obj.hdr->max_entries = 1u << 30;
	m->obj.hdr->data_size = 1ull << 40;
	m->obj.hdr->tail_size = 1u << 30;
	m->obj.hdr->btf_id = 7;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	T_EQ_INT(0, sys(BPF_OBJ_GET_INFO_BY_FD, &a));
	T_EQ_INT(8, (int)info.value_size);
	T_EQ_INT(4, (int)info.max_entries);
	T_EQ_INT(0, (int)info.btf_id);
	T_EQ_INT(-E2BIG, update(fd, 4, 1)); /* index 4: past the real max_entries */
	{
		const void *blob;
		uint32_t size;

		T_EQ_INT(-ENOENT, brt_map_btf_blob(m, &blob, &size));
	}
	close(fd);
}

static void map_of_maps(void)
{
	int inner = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 4, -1);
	int wide = map_create(BPF_MAP_TYPE_ARRAY, 4, 64, 4, -1);
	int outer = map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, inner);
	struct brt_map *m = map_of(outer);
	uint32_t type, ks, vs, max, flags, key = 1, bogus = 0x12345;
	uint32_t *tmpl;

	T_CASE("map-of-maps template rewritten: an inner map of another shape is refused");
	T_ASSERT(inner >= 0 && wide >= 0 && outer >= 0 && m);
	if (!m)
		return;
	/* the template (type, key, value, max_entries, flags, then the value's lock and timer
	 * fields: 32 bytes) ends the region */
	tmpl = (uint32_t *)((char *)m->data + m->data_size - 32);
	T_EQ_INT(BPF_MAP_TYPE_ARRAY, (int)tmpl[0]);
	tmpl[2] = 64;
	T_EQ_INT(-EINVAL, update(outer, 0, wide));
	T_EQ_INT(0, update(outer, 0, inner));
	T_EQ_INT(0, brt_map_in_map_template(m, &type, &ks, &vs, &max, &flags));
	T_EQ_INT(8, (int)vs);

	T_CASE("map-of-maps slot given an id by another process: never followed");
	/* slot 1 of the array storage: an id this process never stored there */
	memcpy((char *)m->data + 8, &bogus, 4);
	T_ASSERT(m->ops->lookup(m, &key) == NULL);
	memcpy((char *)m->data + 8, &m->obj.snap.id, 4); /* even the outer map's own id */
	T_ASSERT(m->ops->lookup(m, &key) == NULL);
	key = 0;
	T_ASSERT(m->ops->lookup(m, &key) == map_of(inner));
	close(outer);
	close(wide);
	close(inner);
}

static void prog_array(void)
{
	int pa = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	int sock = prog_load(BPF_PROG_TYPE_SOCKET_FILTER);
	int xdp = prog_load(BPF_PROG_TYPE_XDP);
	struct brt_obj *px = NULL;
	struct brt_map *m = map_of(pa);
	uint64_t bogus = 0x4242;

	T_CASE("program type rewritten in its header: a prog array still refuses it");
	T_ASSERT(pa >= 0 && sock >= 0 && xdp >= 0 && m);
	if (!m || brt_obj_from_fd(xdp, BRT_OBJ_PROG, &px))
		return;
	T_EQ_INT(0, update(pa, 0, sock));
	px->hdr->type = BPF_PROG_TYPE_SOCKET_FILTER;
	T_EQ_INT(-EINVAL, update(pa, 1, xdp));
	brt_obj_put(px);

	T_CASE("prog array slot given an id by another process: never followed");
	memcpy((char *)m->data + 16, &bogus, 8); /* slot 2: never set here */
	T_ASSERT(brt_prog_array_get(m, 2) == NULL);
	T_ASSERT(brt_prog_array_get(m, 0) != NULL);
	memcpy((char *)m->data, &bogus, 8); /* slot 0: now names another program */
	T_ASSERT(brt_prog_array_get(m, 0) == NULL);
	close(xdp);
	close(sock);
	close(pa);
}

static void btf(void)
{
	/* [1] int */
	static const uint32_t types[] = { 1, BTF_KIND_INT << 24, 4, 32 };
	static const char strs[] = "\0int";
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_len = sizeof(types),
				.str_off = sizeof(types), .str_len = sizeof(strs) };
	unsigned char blob[sizeof(h) + sizeof(types) + sizeof(strs)], out[4096];
	struct bpf_btf_info info;
	struct brt_obj *obj = NULL;
	union bpf_attr a;
	int fd;

	memcpy(blob, &h, sizeof(h));
	memcpy(blob + sizeof(h), types, sizeof(types));
	memcpy(blob + sizeof(h) + sizeof(types), strs, sizeof(strs));
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)blob;
	a.btf_size = sizeof(blob);
	fd = sys(BPF_BTF_LOAD, &a);
	T_CASE("BTF data_size and bytes rewritten: GET_INFO gives the checked blob");
	T_ASSERT(fd >= 0);
	if (fd < 0 || brt_obj_from_fd(fd, BRT_OBJ_BTF, &obj))
		return;
	obj->hdr->data_size = 1ull << 32;
	memset(obj->base, 0xff, sizeof(blob));
	memset(&info, 0, sizeof(info));
	memset(out, 0, sizeof(out));
	info.btf = (uint64_t)(uintptr_t)out;
	info.btf_size = sizeof(out);
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	T_EQ_INT(0, sys(BPF_OBJ_GET_INFO_BY_FD, &a));
	T_EQ_INT((int)sizeof(blob), (int)info.btf_size);
	T_ASSERT(!memcmp(out, blob, sizeof(blob)));
	T_ASSERT(out[sizeof(blob)] == 0);
	{
		/* a map made with it copies the checked blob, not the file's bytes */
		int m;
		const void *copy;
		uint32_t size;
		struct brt_map *map;

		m = btf_blob_map(bpfrt_bpf, BPF_MAP_TYPE_ARRAY, 4, 1, 0, fd, 1, "");
		map = m >= 0 ? map_of(m) : NULL;
		T_ASSERT(map && !brt_map_btf_blob(map, &copy, &size));
		if (map && !brt_map_btf_blob(map, &copy, &size)) {
			T_EQ_INT((int)sizeof(blob), (int)size);
			T_ASSERT(!memcmp(copy, blob, sizeof(blob)));
		}
		if (m >= 0)
			close(m);
	}
	brt_obj_put(obj);
	close(fd);
}

static int obj_get(const char *path, uint32_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.file_flags = flags;
	return sys(BPF_OBJ_GET, &a);
}

static int test_run(int prog)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	return sys(BPF_PROG_TEST_RUN, &a);
}

/* The restricted word of a file's header as the file holds it */
static uint32_t file_restricted(const char *path)
{
	struct brt_obj_hdr h;
	struct stat st;
	int fd = open(path, O_RDONLY);
	uint32_t r = 0xdead;

	if (fd >= 0 && !fstat(fd, &st) && !brt_obj_read_hdr(fd, (uint64_t)st.st_size, &h))
		r = atomic_load(&h.restricted);
	if (fd >= 0)
		close(fd);
	return r;
}

/* Another process gets each pin read-only (BPF_F_RDONLY) and uses it: its exit status
 * says what it could do (bit 0: the program ran, bit 1: the map was refused an update,
 * bit 2: the map was read) */
static int child_gets(const char *prog_pin, const char *map_pin)
{
	pid_t pid = fork();
	int st = -1;

	if (pid == 0) {
		int prog = obj_get(prog_pin, BPF_F_RDONLY), map = obj_get(map_pin, BPF_F_RDONLY);
		uint32_t key = 0;
		uint64_t v = 0;
		union bpf_attr a;
		int r = 0;

		r |= prog >= 0 && test_run(prog) == 0;
		r |= (map >= 0 && update(map, 0, 5) == -EPERM) << 1;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&v;
		r |= (map >= 0 && sys(BPF_MAP_LOOKUP_ELEM, &a) == 0) << 2;
		_exit(r);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void readonly_get(void)
{
	char dir[] = "/tmp/bpfrt-shared-hdr.XXXXXX", prog_pin[96], map_pin[96];
	int prog, map;

	T_CASE("read-only BPF_OBJ_GET by another process: maps restricted, programs not");
	if (!t_scratch_dir(dir)) {
		T_FAIL("mkdtemp: %s", strerror(errno));
		return;
	}
	setenv("BPFRT_FS", dir, 1);
	snprintf(prog_pin, sizeof(prog_pin), "%s/prog", dir);
	snprintf(map_pin, sizeof(map_pin), "%s/map", dir);
	/* loaded in a batch (an object's load): its header stays in this process's memory
	 * (obj.h private_copy), not in a mapping that would see the word change */
	brt_obj_batch_begin();
	prog = prog_load(BPF_PROG_TYPE_SOCKET_FILTER);
	brt_obj_batch_end();
	map = map_create(BPF_MAP_TYPE_ARRAY, 4, 4, 4, 0); /* update() writes 4 bytes */
	T_ASSERT(prog >= 0 && map >= 0);
	if (prog < 0 || map < 0)
		return;
	T_EQ_INT(0, bpfrt_obj_pin(prog, prog_pin));
	T_EQ_INT(0, bpfrt_obj_pin(map, map_pin));
	/* the kernel: the program's fd works whatever the flags, the map's is read-only */
	T_EQ_INT(7, child_gets(prog_pin, map_pin));
	T_EQ_INT(1, (int)file_restricted(map_pin));
	T_EQ_INT(0, (int)file_restricted(prog_pin)); /* never set for a program */
	/* this process's own fds keep what they had */
	T_EQ_INT(0, test_run(prog));
	T_EQ_INT(0, update(map, 0, 5));
	{
		int again = obj_get(prog_pin, BPF_F_WRONLY);

		T_ASSERT(again >= 0);
		T_EQ_INT(0, again >= 0 ? test_run(again) : -1);
		if (again >= 0)
			close(again);
	}
	close(prog);
	close(map);
	unlink(prog_pin);
	unlink(map_pin);
	unsetenv("BPFRT_FS");
}

int main(void)
{
	map_header();
	map_of_maps();
	prog_array();
	btf();
	readonly_get();
	return t_done();
}
