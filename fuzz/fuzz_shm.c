/* fuzz_shm.c - fuzz target for maps whose live shared region another process rewrites
 * (src/maps, src/obj/shm.c; docs/MEMORY_MODEL.md "Corrupt regions").  Each input makes
 * fresh maps of seven types, then runs steps: a step either writes input bytes into a
 * map's region (through a second mapping of its file, as another process would) or runs
 * an operation on it (lookup, the program side's lookup, update, delete, a full
 * get_next_key walk, a walk by lookup batches, push, pop, ring buffer reserve/submit and consume).
 * Nothing may crash, hang or read outside the region.  A step of map 0xff rewrites the
 * id counters' file instead (.bpfrt-ids: truncated to any length, or bytes written at any
 * offset, as any process of its owner may), then creates a map, whose id comes from that
 * file (obj.c's guarded accesses: a truncated page must not raise SIGBUS).  A step of
 * map 0xfe rewrites a copy of this process's reference table (obj/pub.c) as the process
 * that published it could, and reads it as another process's id walk does
 * (brt_pub_read(), then brt_pub_classify() of every live map's mapping and of the step's
 * own file and range): the reader must stay inside what it read.  The objects'
 * directory is a private one ($BPFRT_FS), so that no other process's ids are touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "bpfrt.h"
#include "maps/maps.h"
#include "vm/vm.h"

static const struct {
	uint32_t type, key_size, value_size, max_entries, flags;
} types[] = {
	{ BPF_MAP_TYPE_HASH, 4, 8, 8, 0 },        { BPF_MAP_TYPE_LRU_HASH, 4, 8, 8, 0 },
	{ BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 8, 0 }, { BPF_MAP_TYPE_ARRAY, 4, 8, 8, 0 },
	{ BPF_MAP_TYPE_LPM_TRIE, 8, 8, 8, BPF_F_NO_PREALLOC },
	{ BPF_MAP_TYPE_QUEUE, 0, 8, 8, 0 },       { BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 },
	/* elements reserved as used: a page of them nobody populated yet */
	{ BPF_MAP_TYPE_HASH, 4, 8, 512, BPF_F_NO_PREALLOC },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

struct live {
	int fd;
	struct brt_map *map;
	unsigned char *region;
	size_t size, file_size;
};

static int count(void *arg, void *data, size_t size)
{
	(void)data;
	if (size > 4096)
		__builtin_trap(); /* a record larger than the ring */
	++*(int *)arg;
	return 0;
}

static void operate(struct live *m, uint8_t op, const uint8_t *arg)
{
	unsigned char key[8] = { 0 }, next[8], vals[8 * 256] = { 0 };
	struct bpfrt_run_ctx ctx;
	uint64_t rec;
	int n = 0, have = 0;

	memcpy(key, arg, 8);
	key[0] &= 31; /* LPM prefix lengths up to the key and a few past it */
	switch (op % 8) {
	case 0:
		bpfrt_map_lookup_elem(m->fd, m->map->key_size ? key : NULL, vals);
		break;
	case 1:
		if (m->map->ops->lookup)
			m->map->ops->lookup(m->map, key);
		break;
	case 2:
		bpfrt_map_update_elem(m->fd, m->map->key_size ? key : NULL, vals, op >> 6);
		break;
	case 3:
		bpfrt_map_delete_elem(m->fd, key);
		bpfrt_map_lookup_and_delete_elem(m->fd, NULL, vals);
		break;
	case 4:
		/* a walk ends: every step moves forward (bounded here only as a backstop) */
		for (int i = 0; i < 100000 && !bpfrt_map_get_next_key(m->fd, have ? key : NULL,
								       next); i++) {
			memcpy(key, next, sizeof(key));
			have = 1;
		}
		break;
	case 5: {
		/* lookup batches bucket by bucket (arg[0] bit 7: lookup and delete), arg[0] & 15
		 * + 1 elements at a time, walked on from each out_batch to the end: a chain
		 * scribbled into a cycle must end the walk (EBUSY), never grow it */
		/* 16 values of 8 bytes per possible CPU (a per-CPU hash), up to 256 CPUs */
		static unsigned char bkeys[8 * 16], bvals[16 * 8 * 256];
		unsigned char in[8];
		union bpf_attr attr;
		int cmd = arg[0] & 0x80 ? BPF_MAP_LOOKUP_AND_DELETE_BATCH : BPF_MAP_LOOKUP_BATCH;

		for (int i = 0; i < 100000; i++) {
			memset(&attr, 0, sizeof(attr));
			attr.batch.map_fd = (uint32_t)m->fd;
			attr.batch.in_batch = i ? (uint64_t)(uintptr_t)in : 0;
			attr.batch.out_batch = (uint64_t)(uintptr_t)next;
			attr.batch.keys = (uint64_t)(uintptr_t)bkeys;
			attr.batch.values = (uint64_t)(uintptr_t)bvals;
			attr.batch.count = (arg[0] & 15u) + 1;
			if (bpfrt_bpf(cmd, &attr, sizeof(attr)))
				break;
			memcpy(in, next, sizeof(in));
		}
		break;
	}
	case 6:
		if (m->map->type != BPF_MAP_TYPE_RINGBUF)
			break;
		memset(&ctx, 0, sizeof(ctx));
		rec = brt_helper_ringbuf_reserve((uint64_t)(uintptr_t)m->map, arg[0], 0, 0, 0,
						 &ctx);
		if (rec)
			brt_helper_ringbuf_submit(rec, arg[1] & 3, 0, 0, 0, &ctx);
		break;
	default:
		if (m->map->type == BPF_MAP_TYPE_RINGBUF)
			bpfrt_ringbuf_consume(m->fd, count, &n);
		break;
	}
}

static int open_live(size_t i, struct live *m)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = types[i].flags);
	struct stat st;

	m->fd = bpfrt_map_create(types[i].type, "fz_shm", types[i].key_size,
				 types[i].value_size, types[i].max_entries, &o);
	if (m->fd < 0 || fstat(m->fd, &st) || brt_map_from_fd(m->fd, &m->map))
		__builtin_trap();
	m->file_size = (size_t)st.st_size;
	m->size = brt_obj_hdr_at(&m->map->obj.snap); /* the region and BTF copy: before the header */
	m->region = mmap(NULL, m->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->region == MAP_FAILED)
		__builtin_trap();
	return 0;
}

static char dir[64], ids[96];

static void cleanup(void)
{
	unlink(ids);
	rmdir(dir);
}

/* The id counters' file rewritten (op bit 0: truncated to off % 8192 bytes, else 8 bytes
 * written at off % 4096), then a map created and its id checked. */
static void ids_step(uint8_t op, size_t off, const uint8_t *arg)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	int fd = open(ids, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		if (op & 1) {
			if (ftruncate(fd, (off_t)(off % 8192)))
				__builtin_trap();
		} else if (pwrite(fd, arg, 8, (off_t)(off % 4096)) != 8) {
			__builtin_trap();
		}
		close(fd);
	}
	fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "fz_ids", 4, 8, 1, NULL);
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpfrt_obj_get_info_by_fd(fd, &info, &len) || !info.id)
		__builtin_trap();
	close(fd);
}

/* A copy of this process's reference table (its mapping found by name in /proc/self/maps
 * and read whole through /proc/self/map_files), in a memfd each input starts afresh. */
static int pub_fd = -1;

static void pub_copy(void)
{
	char line[512], path[96], buf[4096];
	unsigned long lo, hi;
	ssize_t n;
	off_t at = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	int in = -1;

	if (pub_fd < 0)
		pub_fd = memfd_create("fz-pub", MFD_CLOEXEC);
	if (pub_fd < 0 || ftruncate(pub_fd, 0))
		__builtin_trap();
	while (f && in < 0 && fgets(line, sizeof(line), f))
		if (strstr(line, BRT_PUB_MAPS_NAME) && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", lo, hi);
			in = open(path, O_RDONLY | O_CLOEXEC);
		}
	if (f)
		fclose(f);
	/* the head and the first slots are all a small process uses */
	while (in >= 0 && at < 16384 && (n = pread(in, buf, sizeof(buf), at)) > 0) {
		if (pwrite(pub_fd, buf, (size_t)n, at) != n)
			__builtin_trap();
		at += n;
	}
	if (in >= 0)
		close(in);
}

/* 8 bytes written at off % 16384 of the copy (op bit 0: truncated there instead), then
 * read as a walker reads a table and asked about every live map and the step's bytes. */
static void pub_step(uint8_t op, size_t off, const uint8_t *arg, const struct live *live)
{
	struct brt_pub_view v;
	struct stat st;
	char path[64];
	uint64_t x;

	if (op & 1) {
		if (ftruncate(pub_fd, (off_t)(off % 16384)))
			__builtin_trap();
	} else if (pwrite(pub_fd, arg, 8, (off_t)(off % 16384)) != 8) {
		__builtin_trap();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pub_fd);
	if (brt_pub_read(path, &v))
		return;
	for (size_t i = 0; i < NTYPES; i++) {
		if (fstat(live[i].fd, &st))
			__builtin_trap();
		if ((unsigned)brt_pub_classify(&v, st.st_dev, st.st_ino,
					       (uintptr_t)live[i].map->obj.base,
					       (uintptr_t)live[i].map->obj.base +
						       live[i].file_size) > BRT_PUB_NONE)
			__builtin_trap();
	}
	memcpy(&x, arg, 8);
	if ((unsigned)brt_pub_classify(&v, (dev_t)(x >> 48), (ino_t)(x & 0xffffffffffffu),
				       x & ~0xfffull, (x & ~0xfffull) + 4096) > BRT_PUB_NONE)
		__builtin_trap();
	brt_pub_view_free(&v);
}

/* Steps of 12 bytes: map, op (bit 7: a write of (op & 7) + 1 bytes), a 16-bit offset in
 * the region for a write, then 8 bytes of argument or data.  Map 0xff: ids_step(); map
 * 0xfe: pub_step(). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct live live[NTYPES];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/dev/shm/bpfrt-fuzz-shm.%d", (int)getpid());
		snprintf(ids, sizeof(ids), "%s/.bpfrt-ids", dir);
		if (mkdir(dir, 0700) && errno != EEXIST)
			__builtin_trap();
		setenv("BPFRT_FS", dir, 1);
		atexit(cleanup);
	}
	for (size_t i = 0; i < NTYPES; i++)
		open_live(i, &live[i]);
	pub_copy();
	for (; size >= 12; data += 12, size -= 12) {
		struct live *m = &live[data[0] % NTYPES];
		size_t off = (size_t)(data[2] | data[3] << 8) % m->size, len = (data[1] & 7) + 1;

		if (data[0] == 0xff) {
			ids_step(data[1], (size_t)(data[2] | data[3] << 8), data + 4);
			continue;
		}
		if (data[0] == 0xfe) {
			pub_step(data[1], (size_t)(data[2] | data[3] << 8), data + 4, live);
			continue;
		}

		if (!(data[1] & 0x80)) {
			operate(m, data[1], data + 4);
			continue;
		}
		if (off + len > m->size)
			len = m->size - off;
		memcpy(m->region + off, data + 4, len);
	}
	for (size_t i = 0; i < NTYPES; i++) {
		munmap(live[i].region, live[i].file_size);
		brt_map_put(live[i].map);
		close(live[i].fd);
	}
	return 0;
}
