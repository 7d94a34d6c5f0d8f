/* test_rdonly_get_oracle.c - BPF_OBJ_GET with BPF_F_RDONLY / BPF_F_WRONLY by a user who
 * may only read the pin, against the kernel.  The kernel's bpf_obj_do_get() checks the
 * pin's permissions for the access the flags ask (read for BPF_F_RDONLY, write for
 * BPF_F_WRONLY, both without flags), so uid 65534 gets a read-only fd of a root pin of
 * mode 0444 or 0644: lookups, key walks and info work, updates, deletes and freezes are
 * EPERM, a shared writable mmap() of a BPF_F_MMAPABLE array is refused, and a program
 * pinned so is got and runs.  Before session 20 bpfrt opened every pin read-write, and
 * such a user got EACCES.
 *
 * A child (root) makes and pins the objects on both sides, in /sys/fs/bpf and in a
 * BPFRT_FS directory of root's, and exits; a second child, become uid 65534 (no
 * capability left), runs the steps through syscall(__NR_bpf) and bpfrt_bpf() and sends
 * the answers back to be compared.  Needs root and the kernel (skipped otherwise).
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "diff.h"
#include "harness.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define NOBODY T_NOBODY

static char fsdir[64], kdir[64];

/* The objects, made by root: an mmapable array of 8-byte values (element 1 = 0x1234)
 * pinned 0444 and another pinned 0644, a socket filter returning 7 pinned 0444, and an
 * array pinned 0600 (nothing for another user). */
static int make(sys_fn sys, const char *dir)
{
	static const char *const names[] = { "a444", "a644", "a600" };
	static const mode_t modes[] = { 0444, 0644, 0600 };
	char path[128];
	uint64_t v = 0x1234;
	int fd, err = 0;

	for (int i = 0; i < 3; i++) {
		fd = diff_map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_MMAPABLE);
		if (fd < 0 || diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, fd, 1, &v) ||
		    diff_path_op(sys, BPF_OBJ_PIN, fd, dir, names[i], 0))
			err = 1;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (chmod(path, modes[i]))
			err = 1;
		close(fd);
	}
	/* the worker's own pin, read-only until it chmods it */
	fd = diff_map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	snprintf(path, sizeof(path), "%s/own", dir);
	if (fd < 0 || diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, fd, 1, &v) ||
	    diff_path_op(sys, BPF_OBJ_PIN, fd, dir, "own", 0) || chmod(path, 0444) ||
	    chown(path, NOBODY, NOBODY))
		err = 1;
	close(fd);
	/* the worker's own ring buffer, likewise (bpfrt_only()) */
	fd = diff_map_new(sys, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	snprintf(path, sizeof(path), "%s/rown", dir);
	if (fd < 0 || diff_path_op(sys, BPF_OBJ_PIN, fd, dir, "rown", 0) || chmod(path, 0444) ||
	    chown(path, NOBODY, NOBODY))
		err = 1;
	close(fd);
	fd = diff_map_new(sys, BPF_MAP_TYPE_HASH, 4, 8, 4, 0);
	snprintf(path, sizeof(path), "%s/h444", dir);
	if (fd < 0 || diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, fd, 1, &v) ||
	    diff_path_op(sys, BPF_OBJ_PIN, fd, dir, "h444", 0) || chmod(path, 0444))
		err = 1;
	close(fd);
	fd = diff_tail_prog(sys, -1, 7);
	if (fd < 0 || diff_path_op(sys, BPF_OBJ_PIN, fd, dir, "p444", 0))
		err = 1;
	snprintf(path, sizeof(path), "%s/p444", dir);
	if (chmod(path, 0444))
		err = 1;
	close(fd);
	return err;
}

/* An mmap() of fd's first page: 0 (the value of element 1 checked) or -errno. */
static int map_page(int fd, int prot)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, prot, MAP_SHARED, fd, 0);
	int r;

	if (m == MAP_FAILED)
		return -errno;
	r = ((const uint64_t *)m)[1] == 0x1234 ? 0 : -1000;
	/* and made writable afterwards: refused as at the mmap() */
	if (!r && !(prot & PROT_WRITE))
		r = mprotect(m, (size_t)page, PROT_READ | PROT_WRITE) ? -errno : 1;
	munmap(m, (size_t)page);
	return r;
}

/* The steps, each answer into r. */
static int steps(sys_fn sys, const char *dir, int *r)
{
	struct bpf_map_info info;
	union bpf_attr a;
	uint64_t v = 0;
	uint32_t k = 0, next = 0;
	char path[128];
	int n = 0, fd, rw;

	r[n++] = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a444", 0);
	r[n++] = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a444", BPF_F_WRONLY);
	r[n++] = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a444", BPF_F_RDONLY | BPF_F_WRONLY);
	fd = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a444", BPF_F_RDONLY);
	r[n++] = fd >= 0;
	r[n++] = diff_elem_op(sys, BPF_MAP_LOOKUP_ELEM, fd, 1, &v);
	r[n++] = (int)v;
	v = 99;
	r[n++] = diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, fd, 1, &v);
	r[n++] = diff_elem_op(sys, BPF_MAP_DELETE_ELEM, fd, 1, NULL);
	v = 0;
	r[n++] = diff_elem_op(sys, BPF_MAP_LOOKUP_ELEM, fd, 1, &v) ? -1 : (int)v; /* unchanged */
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&k;
	a.next_key = (uint64_t)(uintptr_t)&next;
	r[n++] = sys(BPF_MAP_GET_NEXT_KEY, &a, sizeof(a)) ? -errno : (int)next;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	r[n++] = sys(BPF_MAP_FREEZE, &a, sizeof(a)) ? -errno : 0;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	r[n++] = sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? -errno :
							       (int)(info.max_entries * 100 + info.value_size);
	r[n++] = map_page(fd, PROT_READ);
	r[n++] = map_page(fd, PROT_READ | PROT_WRITE);
	if (fd >= 0)
		close(fd);
	/* another user's pin of mode 0644: read only, likewise */
	r[n++] = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a644", 0);
	fd = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a644", BPF_F_RDONLY);
	r[n++] = fd >= 0;
	r[n++] = diff_elem_op(sys, BPF_MAP_LOOKUP_ELEM, fd, 1, &v) ? -1 : (int)v;
	r[n++] = diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, fd, 1, &v);
	if (fd >= 0)
		close(fd);
	/* 0600: nothing */
	r[n++] = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "a600", BPF_F_RDONLY);
	/* a program pinned 0444: got with BPF_F_RDONLY and run */
	r[n++] = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "p444", 0);
	fd = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "p444", BPF_F_RDONLY);
	r[n++] = fd >= 0;
	r[n++] = diff_run64(sys, fd, 1);
	if (fd >= 0)
		close(fd);
	/* its own pin: read-only, then made writable (chmod) and got read-write; the
	 * read-only fd stays so and sees what the read-write one wrote */
	fd = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "own", BPF_F_RDONLY);
	r[n++] = fd >= 0;
	r[n++] = diff_elem_op(sys, BPF_MAP_LOOKUP_ELEM, fd, 1, &v) ? -1 : (int)v;
	snprintf(path, sizeof(path), "%s/own", dir);
	r[n++] = chmod(path, 0644) ? -errno : 0;
	rw = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "own", 0);
	r[n++] = rw >= 0;
	v = 0x5678;
	r[n++] = diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, rw, 1, &v);
	r[n++] = diff_elem_op(sys, BPF_MAP_UPDATE_ELEM, fd, 1, &v);
	v = 0;
	r[n++] = diff_elem_op(sys, BPF_MAP_LOOKUP_ELEM, fd, 1, &v) ? -1 : (int)v;
	if (rw >= 0)
		close(rw);
	if (fd >= 0)
		close(fd);
	return n;
}

/* The other map types, each pinned 0444 by root with three entries (keys 1, 2, 3, values
 * 0x1001..0x1003; a queue and a stack two pushed values, a bloom filter one) and got
 * read-only by nobody: the kernel's map_lookup_elem() and map_get_next_key() ask only
 * FMODE_CAN_READ, the writes (update, delete, lookup_and_delete, freeze, the write
 * batches) FMODE_CAN_WRITE, so the fd reads and refuses writes with EPERM. */
struct rtype {
	const char *pin, *name;
	uint32_t type, ks, vs, max, flags;
};

static const struct rtype types[] = {
	{ "t_hash", "hash", BPF_MAP_TYPE_HASH, 4, 8, 64, 0 },
	{ "t_nphash", "hash BPF_F_NO_PREALLOC", BPF_MAP_TYPE_HASH, 4, 8, 64, BPF_F_NO_PREALLOC },
	{ "t_phash", "percpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 64, 0 },
	{ "t_lru", "lru_hash", BPF_MAP_TYPE_LRU_HASH, 4, 8, 64, 0 },
	{ "t_plru", "lru_percpu_hash", BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 8, 64, 0 },
	{ "t_lpm", "lpm_trie", BPF_MAP_TYPE_LPM_TRIE, 8, 8, 64, BPF_F_NO_PREALLOC },
	{ "t_queue", "queue", BPF_MAP_TYPE_QUEUE, 0, 8, 64, 0 },
	{ "t_stack", "stack", BPF_MAP_TYPE_STACK, 0, 8, 64, 0 },
	{ "t_bloom", "bloom_filter", BPF_MAP_TYPE_BLOOM_FILTER, 0, 8, 64, 0 },
	{ "t_ringbuf", "ringbuf", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0 },
	{ "t_uringbuf", "user_ringbuf", BPF_MAP_TYPE_USER_RINGBUF, 0, 0, 4096, 0 },
};
#define NT (int)(sizeof(types) / sizeof(types[0]))

static const char *const tsteps[] = {
	"BPF_F_RDONLY: an fd", "lookup of a present key (peek)", "lookup of an absent key",
	"get_next_key walk (count, digest)", "update (push): EPERM", "delete: EPERM",
	"lookup_and_delete (pop): EPERM", "lookup batch", "lookup batch's count",
	"freeze: EPERM", "info", "the present value after the refused writes",
};
#define NS (int)(sizeof(tsteps) / sizeof(tsteps[0]))

/* A read-only ring buffer fd's mmap() (session 22): libbpf maps the consumer page
 * read-write and the producer page and data read-only.  The kernel's answers: a
 * writable mapping of a file not open for writing EACCES (do_mmap()), a read-only one
 * EINVAL (do_mmap() takes VM_SHARED off, bpf_map_mmap() refuses the private mapping that
 * leaves), as for arrays (MMAP_READ below); bpfrt's fd is its file, which the user may
 * read: mapped, and never made writable (mprotect() refused). */
static const char *const rsteps[] = {
	"ringbuf: mmap of the consumer page PROT_READ|PROT_WRITE: EACCES",
	"ringbuf: mmap of the producer page PROT_READ|PROT_WRITE: EACCES",
	"ringbuf: mmap of the consumer page PROT_READ",
	"ringbuf: mmap of the producer page PROT_READ",
};
#define NR (int)(sizeof(rsteps) / sizeof(rsteps[0]))
#define R_RING_READ 2 /* the steps from here differ, as documented */

static int ring_map(int fd, int prot, long pg)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, prot, MAP_SHARED, fd, pg * page);
	int r = 0;

	if (m == MAP_FAILED)
		return -errno;
	/* mapped read-only: 1, or 2 when it could be made writable afterwards */
	if (!(prot & PROT_WRITE))
		r = mprotect(m, (size_t)page, PROT_READ | PROT_WRITE) ? 1 : 2;
	munmap(m, (size_t)page);
	return r;
}

static void ring_steps(sys_fn sys, const char *dir, int *r)
{
	int fd = diff_path_op(sys, BPF_OBJ_GET, -1, dir, "t_ringbuf", BPF_F_RDONLY);

	r[0] = ring_map(fd, PROT_READ | PROT_WRITE, 0);
	r[1] = ring_map(fd, PROT_READ | PROT_WRITE, 1);
	r[2] = ring_map(fd, PROT_READ, 0);
	r[3] = ring_map(fd, PROT_READ, 1);
	if (fd >= 0)
		close(fd);
}

/* per-CPU values are num_possible_cpus() * 8 bytes: room for any count */
static uint64_t vbuf[4096];

/* key k of a type: the u32, or an LPM key {prefixlen, 4 bytes} (k 1: 10.0.0.0/8, 2:
 * 10.1.0.0/16, 3: 192.168.0.0/16, 4: 10.2.0.0/16; 8: 10.1.2.3/32, 9: 11.0.0.1/32) */
static void key_of(const struct rtype *t, uint32_t k, unsigned char *key)
{
	static const unsigned char lpm[10][5] = {
		[1] = { 8, 10, 0, 0, 0 },    [2] = { 16, 10, 1, 0, 0 },
		[3] = { 16, 192, 168, 0, 0 }, [4] = { 16, 10, 2, 0, 0 },
		[8] = { 32, 10, 1, 2, 3 },   [9] = { 32, 11, 0, 0, 1 },
	};
	uint32_t plen;

	memset(key, 0, 8);
	if (t->type != BPF_MAP_TYPE_LPM_TRIE) {
		memcpy(key, &k, 4);
		return;
	}
	plen = lpm[k][0];
	memcpy(key, &plen, 4);
	memcpy(key + 4, lpm[k] + 1, 4);
}

static int raw_op(sys_fn sys, int cmd, int fd, const void *key, void *value, void *next)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	if (next)
		a.next_key = (uint64_t)(uintptr_t)next;
	return sys(cmd, &a, sizeof(a)) ? -errno : 0;
}

static int make_types(sys_fn sys, const char *dir)
{
	unsigned char key[8];
	char path[128];
	int err = 0, fd;

	for (int i = 0; i < NT; i++) {
		const struct rtype *t = &types[i];
		int keyed = t->ks != 0;
		int n = t->type == BPF_MAP_TYPE_BLOOM_FILTER ? 1 :
			t->type == BPF_MAP_TYPE_RINGBUF ||
					t->type == BPF_MAP_TYPE_USER_RINGBUF ? 0 :
			keyed                                ? 3 : 2;

		fd = diff_map_new(sys, t->type, t->ks, t->vs, t->max, t->flags);
		for (uint32_t k = 1; fd >= 0 && k <= (uint32_t)n; k++) {
			for (int c = 0; c < 4096; c++)
				vbuf[c] = 0x1000 + k;
			key_of(t, k, key);
			if (raw_op(sys, BPF_MAP_UPDATE_ELEM, fd, keyed ? key : NULL, vbuf, NULL))
				err = 1;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, t->pin);
		if (fd < 0 || diff_path_op(sys, BPF_OBJ_PIN, fd, dir, t->pin, 0) || chmod(path, 0444))
			err = 1;
		if (fd >= 0)
			close(fd);
	}
	return err;
}

static int present(const struct rtype *t, sys_fn sys, int fd)
{
	unsigned char key[8];
	int keyed = t->ks != 0, r;

	memset(vbuf, 0, sizeof(vbuf));
	if (t->type == BPF_MAP_TYPE_BLOOM_FILTER)
		vbuf[0] = 0x1001; /* the question */
	key_of(t, t->type == BPF_MAP_TYPE_LPM_TRIE ? 8 : 2, key);
	r = raw_op(sys, BPF_MAP_LOOKUP_ELEM, fd, keyed ? key : NULL, vbuf, NULL);
	return r ? r : (int)vbuf[0];
}

/* a walk of every key: count * 100000 + a digest independent of the order, or -errno
 * when it ends otherwise than ENOENT */
static int walk_keys(const struct rtype *t, sys_fn sys, int fd)
{
	unsigned char prev[8], next[8];
	uint32_t digest = 0;
	int count = 0, r;

	for (;;) {
		r = raw_op(sys, BPF_MAP_GET_NEXT_KEY, fd, count ? prev : NULL, NULL, next);
		if (r || count > 64)
			break;
		for (uint32_t i = 0, h = 2166136261u; i < t->ks; i++) {
			h = (h ^ next[i]) * 16777619u;
			if (i + 1 == t->ks)
				digest += h;
		}
		memcpy(prev, next, sizeof(prev));
		count++;
	}
	return r == -ENOENT ? count * 100000 + (int)(digest % 100000) : r;
}

static void type_steps(sys_fn sys, const char *dir, int *r)
{
	struct bpf_map_info info;
	unsigned char key[8], outk[8 * 16];
	static uint64_t bvals[16 * 4096];
	uint32_t batch_out = 0;
	union bpf_attr a;

	for (int i = 0; i < NT; i++) {
		const struct rtype *t = &types[i];
		int *s = r + i * NS, keyed = t->ks != 0;
		int fd = diff_path_op(sys, BPF_OBJ_GET, -1, dir, t->pin, BPF_F_RDONLY);

		s[0] = fd >= 0 ? 1 : fd;
		s[1] = present(t, sys, fd);
		memset(vbuf, 0, sizeof(vbuf));
		if (t->type == BPF_MAP_TYPE_BLOOM_FILTER)
			vbuf[0] = 0x9999;
		key_of(t, 9, key);
		s[2] = raw_op(sys, BPF_MAP_LOOKUP_ELEM, fd, keyed ? key : NULL, vbuf, NULL);
		s[3] = walk_keys(t, sys, fd);
		for (int c = 0; c < 4096; c++)
			vbuf[c] = 0x4444;
		key_of(t, 4, key);
		s[4] = raw_op(sys, BPF_MAP_UPDATE_ELEM, fd, keyed ? key : NULL, vbuf, NULL);
		key_of(t, 1, key);
		s[5] = raw_op(sys, BPF_MAP_DELETE_ELEM, fd, keyed ? key : NULL, NULL, NULL);
		s[6] = raw_op(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, keyed ? key : NULL, vbuf,
			      NULL);
		memset(&a, 0, sizeof(a));
		a.batch.map_fd = (uint32_t)fd;
		a.batch.out_batch = (uint64_t)(uintptr_t)&batch_out;
		a.batch.keys = (uint64_t)(uintptr_t)outk;
		a.batch.values = (uint64_t)(uintptr_t)bvals;
		a.batch.count = 16;
		s[7] = sys(BPF_MAP_LOOKUP_BATCH, &a, sizeof(a)) ? -errno : 0;
		s[8] = (int)a.batch.count;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		s[9] = sys(BPF_MAP_FREEZE, &a, sizeof(a)) ? -errno : 0;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		s[10] = sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? -errno :
			(int)(info.type * 100000 + info.key_size * 1000 + info.value_size * 10 +
			      !!(info.map_flags & BPF_F_NO_PREALLOC));
		s[11] = present(t, sys, fd);
		if (fd >= 0)
			close(fd);
	}
}

static int count_rec(void *arg, void *data, size_t size)
{
	*(int *)arg += size == 8 && *(const uint64_t *)data == 0x5eed ? 1 : 1000;
	return 0;
}

/* A ring buffer this process maps read-only: consuming (which writes the consumer page)
 * is EACCES, what the kernel's mmap() of a read-only fd answers libbpf's writable
 * consumer page, and so is the consumer's wake-up pipe (published in that page); a
 * program may not use it.  Its pin made writable and got read-write: the data's
 * mappings become writable with the file's (obj.h aux_writable; before, the producer's
 * first record wrote a read-only page: a crash), records go through and are consumed. */
static void ring_only(const char *dir, int *r)
{
	uint64_t rec;
	struct bpfrt_run_ctx ctx;
	struct brt_map *map;
	char path[128];
	int fd, rw, n = 0;

	fd = diff_path_op(sys_bpfrt, BPF_OBJ_GET, -1, dir, "rown", BPF_F_RDONLY);
	r[0] = fd >= 0 ? bpfrt_ringbuf_consume(fd, count_rec, &n) : -1000;
	r[1] = fd >= 0 ? bpfrt_ringbuf_poll_fd(fd) : -1000;
	if (r[1] >= 0)
		close(r[1]);
	r[2] = diff_prog_new(sys_bpfrt, BPF_PROG_TYPE_SOCKET_FILTER, fd) < 0 ? -errno : 0;
	snprintf(path, sizeof(path), "%s/rown", dir);
	rw = chmod(path, 0644) ? -1 : diff_path_op(sys_bpfrt, BPF_OBJ_GET, -1, dir, "rown", 0);
	r[3] = -1000;
	if (rw >= 0 && !brt_map_from_fd(rw, &map)) {
		memset(&ctx, 0, sizeof(ctx));
		rec = brt_helper_ringbuf_reserve((uint64_t)(uintptr_t)map, 8, 0, 0, 0, &ctx);
		if (rec) {
			*(uint64_t *)(uintptr_t)rec = 0x5eed;
			brt_helper_ringbuf_submit(rec, 0, 0, 0, 0, &ctx);
		}
		r[3] = bpfrt_ringbuf_consume(rw, count_rec, &n) * 100 + n;
		brt_map_put(map);
	}
	/* the read-only fd stays so: it may not consume, and it may wait (the kernel's fd
	 * polls), now that the process may publish its wake-up pipe */
	r[4] = fd >= 0 ? bpfrt_ringbuf_consume(fd, count_rec, &n) : -1000;
	r[5] = fd >= 0 ? bpfrt_ringbuf_poll_fd(fd) : -1000;
	if (r[5] >= 0) {
		close(r[5]);
		r[5] = 0;
	}
	if (rw >= 0)
		close(rw);
	if (fd >= 0)
		close(fd);
}

/* What only bpfrt answers, as nobody: a program may use neither a hash nor an array this
 * process maps read-only (docs/SECURITY.md: its lookups would write the mapping), and a
 * handle of a read-only fd refuses updates. */
static void bpfrt_only(const char *dir, int *r)
{
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpfrt_map_handle *h;
	uint64_t v = 1;
	uint32_t k = 1;
	int fd;

	(void)ret0;
	fd = diff_path_op(sys_bpfrt, BPF_OBJ_GET, -1, dir, "h444", BPF_F_RDONLY);
	r[0] = diff_prog_new(sys_bpfrt, BPF_PROG_TYPE_SOCKET_FILTER, fd) < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	fd = diff_path_op(sys_bpfrt, BPF_OBJ_GET, -1, dir, "a444", BPF_F_RDONLY);
	r[1] = diff_prog_new(sys_bpfrt, BPF_PROG_TYPE_SOCKET_FILTER, fd) < 0 ? -errno : 0;
	h = bpfrt_map_handle_open(fd);
	r[2] = !h ? -1000 - errno : bpfrt_map_handle_update(h, &k, &v, BPF_ANY);
	r[3] = !h ? -1000 : bpfrt_map_handle_lookup(h, &k, &v) ? -errno : (int)v;
	bpfrt_map_handle_close(h);
	if (fd >= 0)
		close(fd);
	ring_only(dir, r + 4);
}

static const char *const names[] = {
	"a444 without flags: EACCES", "a444 BPF_F_WRONLY: EACCES", "a444 both flags: EINVAL",
	"a444 BPF_F_RDONLY: an fd", "lookup through it", "the value looked up",
	"update through it: EPERM", "delete through it: EPERM", "the value unchanged",
	"get_next_key through it", "freeze through it: EPERM", "info through it",
	"mmap PROT_READ (and mprotect to writable after)", "mmap PROT_READ|PROT_WRITE shared",
	"a644 (root's) without flags: EACCES", "a644 BPF_F_RDONLY: an fd",
	"lookup through it", "update through it: EPERM", "a600 BPF_F_RDONLY: EACCES",
	"p444 without flags: EACCES", "p444 BPF_F_RDONLY: an fd", "the program runs",
	"own pin 0444 BPF_F_RDONLY: an fd", "lookup through it", "chmod 0644 by its owner",
	"got without flags now", "update through the read-write fd",
	"update through the read-only fd: EPERM", "the read-only fd sees the update",
};
#define N (int)(sizeof(names) / sizeof(names[0]))
/* The one answer that differs, as docs/SECURITY.md says: the kernel's do_mmap() takes
 * VM_SHARED off a shared mapping of a file not open for writing, and bpf_map_mmap()
 * refuses the private mapping that leaves (EINVAL); bpfrt's fd is its file, which the
 * process may read, so the read-only mapping is made, and making it writable is refused
 * (EACCES). */
#define MMAP_READ 12
/* the answers: the steps on both sides, bpfrt's own ten, then the types' on both, then
 * the ring buffer's mmap() steps on both */
#define R_TYPES (2 * N + 10)
#define R_RING (R_TYPES + 2 * NT * NS)
#define R_LEN (R_RING + 2 * NR)

static int maker(int out)
{
	int r[2] = { make(sys_kernel, kdir) || make_types(sys_kernel, kdir),
		     make(sys_bpfrt, fsdir) || make_types(sys_bpfrt, fsdir) };

	return write(out, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 3;
}

static int worker(int out)
{
	int r[R_LEN];

	if (t_become_nobody())
		return 77;
	steps(sys_kernel, kdir, r);
	steps(sys_bpfrt, fsdir, r + N);
	bpfrt_only(fsdir, r + 2 * N);
	type_steps(sys_kernel, kdir, r + R_TYPES);
	type_steps(sys_bpfrt, fsdir, r + R_TYPES + NT * NS);
	ring_steps(sys_kernel, kdir, r + R_RING);
	ring_steps(sys_bpfrt, fsdir, r + R_RING + NR);
	return write(out, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 3;
}

static void cleanup(void)
{
	static const char *const pins[] = { "a444", "a644", "a600", "p444", "own", "h444",
					    "rown" };
	char path[128];

	for (unsigned i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", kdir, pins[i]);
		unlink(path);
	}
	for (int i = 0; i < NT; i++) {
		snprintf(path, sizeof(path), "%s/%s", kdir, types[i].pin);
		unlink(path);
	}
	rmdir(kdir);
}

int main(void)
{
	int made[2], r[R_LEN], st, equal = 0, total = 0;
	char name[128];

	if (!kernel_available() || geteuid())
		T_SKIP("needs root and the kernel's bpf()");
	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-rdonly-XXXXXX");
	if (!t_scratch_dir(fsdir) || chmod(fsdir, 0755))
		T_SKIP("cannot create a directory in /dev/shm");
	snprintf(kdir, sizeof(kdir), "/sys/fs/bpf/bpfrt-rdonly-%d", (int)getpid());
	if (mkdir(kdir, 0755))
		T_SKIP("cannot make %s: %s", kdir, strerror(errno));
	setenv("BPFRT_FS", fsdir, 1);
	/* made by a child, so that this process (the worker's parent) never maps them */
	st = t_in_child(maker, made, sizeof(made));
	T_CASE("root pinned the objects on both sides");
	T_EQ_INT(0, st);
	T_EQ_INT(0, st ? -1 : made[0]);
	T_EQ_INT(0, st ? -1 : made[1]);
	st = st ? st : t_in_child(worker, r, sizeof(r));
	cleanup();
	if (st == 77)
		T_SKIP("cannot become uid %d", NOBODY);
	T_CASE("the worker ran both sides");
	T_EQ_INT(0, st);
	for (int i = 0; !st && i < N; i++) {
		total++;
		equal += r[i] == r[N + i];
		if (i == MMAP_READ)
			continue; /* below */
		T_CASE(names[i]);
		T_EQ_INT(r[i], r[N + i]);
	}
	for (int i = 0; !st && i < NT; i++) {
		const int *k = r + R_TYPES + i * NS, *b = k + NT * NS;

		for (int j = 0; j < NS; j++) {
			total++;
			equal += k[j] == b[j];
			if (k[j] != b[j])
				printf("differs: %s: %s: kernel %d, bpfrt %d\n", types[i].name,
				       tsteps[j], k[j], b[j]);
			snprintf(name, sizeof(name), "%s: %s", types[i].name, tsteps[j]);
			T_CASE(name);
			T_EQ_INT(k[j], b[j]);
		}
		/* the kernel's answers that make the comparison mean something */
		snprintf(name, sizeof(name), "%s: kernel: an fd, writes EPERM", types[i].name);
		T_CASE(name);
		T_EQ_INT(1, k[0]);
		if (types[i].type != BPF_MAP_TYPE_RINGBUF &&
		    types[i].type != BPF_MAP_TYPE_USER_RINGBUF)
			T_EQ_INT(types[i].type == BPF_MAP_TYPE_QUEUE ? 0x1001 :
				 types[i].type == BPF_MAP_TYPE_BLOOM_FILTER ? 0x1001 : 0x1002, k[1]);
		else /* ENOTSUPP: no lookup, get_next_key or batch of a ring buffer */
			T_EQ_INT(-524, k[1]);
		T_EQ_INT(-EPERM, k[4]);
		T_EQ_INT(-EPERM, k[6]);
		T_EQ_INT(k[1], k[11]);
	}
	for (int j = 0; !st && j < NR; j++) {
		const int *k = r + R_RING, *b = k + NR;

		total++;
		equal += k[j] == b[j];
		if (k[j] != b[j])
			printf("differs: %s: kernel %d, bpfrt %d\n", rsteps[j], k[j], b[j]);
		T_CASE(rsteps[j]);
		if (j < R_RING_READ) {
			T_EQ_INT(-EACCES, k[j]);
			T_EQ_INT(k[j], b[j]);
		} else { /* the documented difference */
			T_EQ_INT(-EINVAL, k[j]);
			T_EQ_INT(1, b[j]);
		}
	}
	if (!st)
		printf("steps equal to the kernel: %d of %d\n", equal, total);
	/* the kernel's answers that make the comparison mean something */
	T_CASE("kernel: read-only fds of readable pins, refused writes");
	if (!st) {
		T_EQ_INT(-EACCES, r[0]);
		T_EQ_INT(1, r[3]);
		T_EQ_INT(0x1234, r[5]);
		T_EQ_INT(-EPERM, r[6]);
		T_EQ_INT(0x1234, r[8]);
		T_EQ_INT(1, r[15]);
		T_EQ_INT(1, r[20]);
		T_EQ_INT(7, r[21]);
		T_EQ_INT(1, r[25]);
		T_EQ_INT(-EPERM, r[27]);
		T_EQ_INT(0x5678, r[28]);
	}
	T_CASE("bpfrt: no program of this process uses a hash it maps read-only");
	if (!st)
		T_EQ_INT(-EACCES, r[2 * N]);
	T_CASE("bpfrt: no program of this process uses a map it maps read-only");
	if (!st)
		T_EQ_INT(-EACCES, r[2 * N + 1]);
	T_CASE("bpfrt: a handle of a read-only fd: update EPERM, lookup reads");
	if (!st) {
		T_EQ_INT(-EPERM, r[2 * N + 2]);
		T_EQ_INT(0x1234, r[2 * N + 3]);
	}
	T_CASE("bpfrt: a ring buffer it maps read-only: no consumer, no program");
	if (!st) {
		T_EQ_INT(-EACCES, r[2 * N + 4]);
		T_EQ_INT(-EACCES, r[2 * N + 5]);
		T_EQ_INT(-EACCES, r[2 * N + 6]);
	}
	T_CASE("bpfrt: the ring buffer's pin made writable: a record produced and consumed");
	if (!st) {
		T_EQ_INT(101, r[2 * N + 7]);
		T_EQ_INT(-EACCES, r[2 * N + 8]);
		T_EQ_INT(0, r[2 * N + 9]);
	}
	T_CASE("mmap PROT_READ of a read-only fd: kernel EINVAL, bpfrt readable, never writable");
	if (!st) {
		T_EQ_INT(-EINVAL, r[MMAP_READ]);
		T_EQ_INT(-EACCES, r[N + MMAP_READ]);
	}
	return t_done();
}
