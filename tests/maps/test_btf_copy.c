/* test_btf_copy.c - a map created with BTF keeps a copy of the blob beside its region
 * (src/maps/map.c), so a cold open of the pinned map, after the BTF fd and the creator's
 * mapping are gone, still has the types; a scribbled copy fails to parse instead of
 * crashing, a lying size in the header refuses the file, and a blob over the bound leaves
 * the map with its ids only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/btf.h>

#include "harness.h"
#include "bpfrt.h"
#include "btf/btf.h"
#include "maps/maps.h"

static char fsdir[64];

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
static const char strs[] = "\0int\0s\0a\0b";
/* [1] int, [2] struct s { int a; int b; } */
static const uint32_t types[] = {
	1, INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
	5, INFO(BTF_KIND_STRUCT, 2), 8, 7, 1, 0, 9, 1, 32,
};

/* The blob: header, types, strings, then pad zero bytes of extra string section. */
static uint8_t *make_blob(uint32_t pad, uint32_t *size)
{
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_len = sizeof(types),
				.str_off = sizeof(types), .str_len = sizeof(strs) + pad };
	uint8_t *b;

	*size = (uint32_t)(sizeof(h) + sizeof(types) + sizeof(strs) + pad);
	b = calloc(1, *size);
	if (!b)
		abort();
	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), types, sizeof(types));
	memcpy(b + sizeof(h) + sizeof(types), strs, sizeof(strs));
	return b;
}

static int create(const uint8_t *blob, uint32_t size)
{
	union bpf_attr a;
	int btf, map;

	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)blob;
	a.btf_size = size;
	btf = bpfrt_bpf(BPF_BTF_LOAD, &a, sizeof(a));
	T_ASSERT(btf >= 0);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 4;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = 2;
	map = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	T_ASSERT(map >= 0);
	close(btf);
	return map;
}

/* Pin fd at name, close it, drop every cached mapping and open the pin cold. */
static int cold_open(int fd, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", fsdir, name);
	T_EQ_INT(0, bpfrt_obj_pin(fd, path));
	close(fd);
	brt_obj_sweep();
	T_EQ_INT(0, brt_obj_cached());
	return bpfrt_obj_get(path);
}

/* 0 with the map's blob copied out, or the accessor's -errno. */
static int blob_of(int fd, uint8_t **out, uint32_t *size)
{
	struct brt_map *map;
	const void *p;
	int err;

	err = brt_map_from_fd(fd, &map);
	if (err)
		return err;
	err = brt_map_btf_blob(map, &p, size);
	if (!err) {
		*out = malloc(*size);
		memcpy(*out, p, *size);
	}
	brt_map_put(map);
	return err;
}

static void test_cold_open(void)
{
	struct bpf_map_info info;
	uint32_t size, got_size, len = sizeof(info);
	uint8_t *blob = make_blob(0, &size), *got = NULL;
	struct brt_btf *btf = NULL;
	char path[128], err[128];
	int fd;

	T_CASE("a cold open of the pin has the blob");
	fd = cold_open(create(blob, size), "kept", path, sizeof(path));
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, blob_of(fd, &got, &got_size));
	T_EQ_INT(size, got_size);
	T_ASSERT(got && !memcmp(blob, got, size));
	T_EQ_INT(0, got ? brt_btf_parse(got, got_size, &btf, err, sizeof(err)) : -1);
	if (got && btf) {
		T_EQ_STR("s", brt_btf_name(btf, 2));
		brt_btf_free(btf);
	}
	T_CASE("OBJ_GET_INFO_BY_FD still reports ids");
	memset(&info, 0, sizeof(info));
	T_EQ_INT(0, bpfrt_obj_get_info_by_fd(fd, &info, &len));
	T_ASSERT(info.btf_id != 0);
	T_EQ_INT(1, info.btf_key_type_id);
	T_EQ_INT(2, info.btf_value_type_id);
	T_CASE("the map still works");
	{
		uint32_t k = 3;
		uint64_t v = 42, r = 0;

		T_EQ_INT(0, bpfrt_map_update_elem(fd, &k, &v, BPF_ANY));
		T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &k, &r));
		T_EQ_U64(42, r);
	}
	close(fd);
	unlink(path);
	free(got);
	free(blob);
}

static void test_no_btf(void)
{
	uint8_t *got = NULL;
	uint32_t size;
	int fd;

	T_CASE("a map without BTF has no blob");
	fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "plain", 4, 4, 2, NULL);
	T_ASSERT(fd >= 0);
	T_EQ_INT(-ENOENT, blob_of(fd, &got, &size));
	close(fd);
}

static void test_scribbled(void)
{
	uint32_t size, got_size;
	uint8_t *blob = make_blob(0, &size), *got = NULL, junk[64];
	struct brt_btf *btf = NULL;
	char path[128], err[128] = "";
	struct stat st;
	int fd, raw;

	T_CASE("a scribbled copy fails to parse");
	fd = create(blob, size);
	snprintf(path, sizeof(path), "%s/scribbled", fsdir);
	T_EQ_INT(0, bpfrt_obj_pin(fd, path));
	close(fd);
	brt_obj_sweep();
	raw = open(path, O_RDWR);
	T_ASSERT(raw >= 0);
	memset(junk, 0xa5, sizeof(junk));
	/* the copy starts after the hash map's region (brt_obj_tail_off()) */
	T_EQ_INT(0, fstat(raw, &st));
	{
		struct brt_obj_hdr h;

		/* the header at the file's end (hdr_at_end: obj.h brt_obj_hdr_at()) */
		T_EQ_INT(sizeof(h), pread(raw, &h, sizeof(h), st.st_size - BRT_OBJ_HDR_ROOM));
		T_EQ_INT(1, h.hdr_at_end);
		T_EQ_INT(size, h.tail_size);
		T_EQ_INT(sizeof(junk), pwrite(raw, junk, sizeof(junk),
					      (off_t)brt_obj_tail_off(&h)));
	}
	fd = bpfrt_obj_get(path);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, blob_of(fd, &got, &got_size));
	T_EQ_INT(-EINVAL, got ? brt_btf_parse(got, got_size, &btf, err, sizeof(err)) : 0);
	T_ASSERT(err[0] != 0);
	close(fd);
	free(got);
	brt_obj_sweep();

	T_CASE("a tail size past the file refuses the map");
	{
		uint32_t huge = BRT_MAP_BTF_MAX + 1;

		T_EQ_INT(4, pwrite(raw, &huge, 4, st.st_size - BRT_OBJ_HDR_ROOM +
				   (off_t)offsetof(struct brt_obj_hdr, tail_size)));
		huge = size + BRT_PAGE; /* in bound, but the file has no page for it */
		fd = bpfrt_obj_get(path);
		T_ASSERT(fd < 0 || bpfrt_map_lookup_elem(fd, &(uint32_t){ 0 }, junk) < 0);
		if (fd >= 0)
			close(fd);
		brt_obj_sweep();
		T_EQ_INT(4, pwrite(raw, &huge, 4, st.st_size - BRT_OBJ_HDR_ROOM +
				   (off_t)offsetof(struct brt_obj_hdr, tail_size)));
		fd = bpfrt_obj_get(path);
		T_ASSERT(fd < 0 || bpfrt_map_lookup_elem(fd, &(uint32_t){ 0 }, junk) < 0);
		if (fd >= 0)
			close(fd);
		brt_obj_sweep();
	}
	close(raw);
	unlink(path);
	free(blob);
}

static void test_too_big(void)
{
	struct bpf_map_info info;
	uint32_t size, got_size, len = sizeof(info);
	uint8_t *blob = make_blob(BRT_MAP_BTF_MAX, &size), *got = NULL;
	int fd;

	T_CASE("a blob over the bound: ids only");
	fd = create(blob, size);
	T_EQ_INT(-ENOENT, blob_of(fd, &got, &got_size));
	memset(&info, 0, sizeof(info));
	T_EQ_INT(0, bpfrt_obj_get_info_by_fd(fd, &info, &len));
	T_ASSERT(info.btf_id != 0);
	T_EQ_INT(2, info.btf_value_type_id);
	close(fd);
	free(blob);
}

/* The copy shares the region's last page (tail_packed), and so does the header
 * (hdr_at_end): a map of a few values and a small BTF is one page (three before session
 * 18, two before session 19). */
static void test_packed(void)
{
	uint32_t size;
	uint8_t *blob = make_blob(0, &size);
	const void *got;
	uint32_t got_size;
	struct brt_map *map;
	struct stat st;
	int fd;

	T_CASE("the copy packed after the region");
	fd = create(blob, size);
	T_EQ_INT(0, fstat(fd, &st));
	T_EQ_INT(BRT_PAGE, st.st_size);
	T_EQ_INT(0, brt_map_from_fd(fd, &map));
	T_EQ_INT(0, brt_map_btf_blob(map, &got, &got_size));
	T_EQ_INT(size, got_size);
	T_EQ_INT(0, memcmp(got, blob, size));
	brt_map_put(map);
	close(fd);
	free(blob);
}

/* Pin fd as name, close it and drop every cached mapping. */
static void pin_close(int fd, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", fsdir, name);
	T_EQ_INT(0, bpfrt_obj_pin(fd, path));
	close(fd);
	brt_obj_sweep();
}

/* pread / pwrite (write nonzero) of the pinned file at path through an fd of its own,
 * closed before it returns (an fd of the file would keep the cache's mapping, and a get
 * would not read the file again); len, or -1 */
static ssize_t raw_io(const char *path, int write, void *buf, size_t len, off_t off)
{
	int raw = open(path, O_RDWR);
	ssize_t n;

	if (raw < 0)
		return -1;
	n = write ? pwrite(raw, buf, len, off) : pread(raw, buf, len, off);
	close(raw);
	return n;
}

/* Opened cold, does the pinned map at path work (an update and a lookup)? */
static int map_works(const char *path)
{
	uint32_t k = 0, v = 7, got = 0;
	int fd = bpfrt_obj_get(path), ok;

	if (fd < 0)
		return 0;
	ok = !bpfrt_map_update_elem(fd, &k, &v, BPF_ANY) && !bpfrt_map_lookup_elem(fd, &k, &got) &&
	     got == 7;
	close(fd);
	brt_obj_sweep();
	return ok;
}

/* Where the header is (hdr_at_end, session 19): at the end of the data's last page in a
 * map whose region user space does not map, on a page of its own in one it maps
 * (BPF_F_MMAPABLE, ring buffers); a header in the other layout's place is refused. */
static void test_layout(void)
{
	BPFRT_OPTS(bpfrt_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	_Alignas(8) unsigned char page[BRT_PAGE];
	struct brt_obj_hdr h;
	char path[128];
	struct stat st;
	int fd;

	T_CASE("a small map is one page, its header at its end");
	fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "small", 4, 4, 4, NULL);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, fstat(fd, &st));
	T_EQ_INT(BRT_PAGE, st.st_size);
	pin_close(fd, "small", path, sizeof(path));
	T_EQ_INT(sizeof(h), raw_io(path, 0, &h, sizeof(h), BRT_PAGE - BRT_OBJ_HDR_ROOM));
	T_EQ_INT(1, h.hdr_at_end);
	T_ASSERT(map_works(path));
	unlink(path);

	T_CASE("a marked header moved to the start of a page of its own is refused");
	/* 900 values of 8 bytes (4 rounded up), the header in the second page's last bytes */
	fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "two", 4, 4, 900, NULL);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, fstat(fd, &st));
	T_EQ_INT(2 * BRT_PAGE, st.st_size);
	pin_close(fd, "two", path, sizeof(path));
	T_ASSERT(map_works(path));
	T_EQ_INT(BRT_PAGE, raw_io(path, 0, page, BRT_PAGE, BRT_PAGE));
	memcpy(&h, page + BRT_PAGE - BRT_OBJ_HDR_ROOM, sizeof(h));
	T_EQ_INT(1, h.hdr_at_end);
	memset(page, 0, BRT_PAGE);
	memcpy(page, &h, sizeof(h));
	T_EQ_INT(BRT_PAGE, raw_io(path, 1, page, BRT_PAGE, BRT_PAGE));
	T_ASSERT(!map_works(path));
	T_CASE("unmarked there, the file's pages do not fit the layout: refused");
	h.hdr_at_end = 0;
	memcpy(page, &h, sizeof(h));
	T_EQ_INT(BRT_PAGE, raw_io(path, 1, page, BRT_PAGE, BRT_PAGE));
	T_ASSERT(!map_works(path));
	T_CASE("and back at the end, marked, it is a map again");
	h.hdr_at_end = 1;
	memset(page, 0, BRT_PAGE);
	memcpy(page + BRT_PAGE - BRT_OBJ_HDR_ROOM, &h, sizeof(h));
	T_EQ_INT(BRT_PAGE, raw_io(path, 1, page, BRT_PAGE, BRT_PAGE));
	T_ASSERT(map_works(path));
	unlink(path);

	T_CASE("an mmapable array keeps its header page, which its mmap does not show");
	fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "mm", 4, 4, 1, &mm);
	T_ASSERT(fd >= 0);
	T_EQ_INT(0, fstat(fd, &st));
	T_EQ_INT(2 * BRT_PAGE, st.st_size);
	{
		unsigned char *m = mmap(NULL, BRT_PAGE, PROT_READ, MAP_SHARED, fd, 0);
		size_t nonzero = 0;

		T_ASSERT(m != MAP_FAILED);
		for (size_t i = 0; i < BRT_PAGE; i++)
			nonzero += m[i] != 0;
		T_EQ_INT(0, nonzero);
		munmap(m, BRT_PAGE);
	}
	pin_close(fd, "mm", path, sizeof(path));
	T_EQ_INT(sizeof(h), raw_io(path, 0, &h, sizeof(h), BRT_PAGE));
	T_EQ_INT(0, h.hdr_at_end);
	T_ASSERT(map_works(path));
	T_CASE("an mmapable array with its header at its end is refused");
	/* one page, a marked header at its end: every size fits, only the kind's rule
	 * refuses it */
	h.hdr_at_end = 1;
	h.file_size = BRT_PAGE;
	T_EQ_INT(0, truncate(path, BRT_PAGE));
	T_EQ_INT(sizeof(h), raw_io(path, 1, &h, sizeof(h), BRT_PAGE - BRT_OBJ_HDR_ROOM));
	T_ASSERT(!map_works(path));
	T_CASE("the same file without BPF_F_MMAPABLE is a map");
	h.flags &= ~(uint32_t)BPF_F_MMAPABLE;
	T_EQ_INT(sizeof(h), raw_io(path, 1, &h, sizeof(h), BRT_PAGE - BRT_OBJ_HDR_ROOM));
	T_ASSERT(map_works(path));
	unlink(path);
}

int main(void)
{
	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-test-XXXXXX");
	if (!t_scratch_dir(fsdir))
		T_SKIP("no /dev/shm");
	setenv("BPFRT_FS", fsdir, 1);
	test_cold_open();
	test_no_btf();
	test_scribbled();
	test_too_big();
	test_packed();
	test_layout();
	brt_obj_sweep();
	rmdir(fsdir);
	return t_done();
}
