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

		T_EQ_INT(sizeof(h), pread(raw, &h, sizeof(h), st.st_size - BRT_PAGE));
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

		T_EQ_INT(4, pwrite(raw, &huge, 4, st.st_size - BRT_PAGE +
				   (off_t)offsetof(struct brt_obj_hdr, tail_size)));
		huge = size + BRT_PAGE; /* in bound, but the file has no page for it */
		fd = bpfrt_obj_get(path);
		T_ASSERT(fd < 0 || bpfrt_map_lookup_elem(fd, &(uint32_t){ 0 }, junk) < 0);
		if (fd >= 0)
			close(fd);
		brt_obj_sweep();
		T_EQ_INT(4, pwrite(raw, &huge, 4, st.st_size - BRT_PAGE +
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

/* The copy shares the region's last page (tail_packed): a map of a few values and a
 * small BTF is two pages, the header's and one for both (three before session 18). */
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
	T_EQ_INT(2 * BRT_PAGE, st.st_size);
	T_EQ_INT(0, brt_map_from_fd(fd, &map));
	T_EQ_INT(0, brt_map_btf_blob(map, &got, &got_size));
	T_EQ_INT(size, got_size);
	T_EQ_INT(0, memcmp(got, blob, size));
	brt_map_put(map);
	close(fd);
	free(blob);
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
	brt_obj_sweep();
	rmdir(fsdir);
	return t_done();
}
