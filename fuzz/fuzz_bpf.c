/* fuzz_bpf.c - fuzz target for bpfrt_bpf() (src/api, src/maps): the first byte picks the
 * command, the rest fills union bpf_attr.  Four maps (hash, array, queue, perf event array
 * with a perf output ring to store) exist up front and fd fields are steered to them so
 * element commands reach the map code; sizes of new
 * maps are clamped so a run cannot reserve gigabytes.  Any input must return an errno or
 * succeed, never crash; every fd it creates is closed again.
 * MAP_CREATE's btf_fd is steered to a BTF made up front (btf_types(): value structs with
 * locks, a timer, a task work, a kptr, a cgroup storage key, a DATASEC), so the key/value
 * checks of each map type run; the bytes past union bpf_attr are then a script of element
 * commands (FREEZE among them) on the map just made (script()), which is closed after.
 * Seeds corpus/bpf/create_<map type>_<case>: one MAP_CREATE per key/value BTF case (a
 * field each type may or may not hold, keyless, DATASEC, cgroup storage key, no-BTF
 * types, a non-BTF fd), most with a script that writes, walks and freezes the map;
 * create_hash_zero_seed_long_chain puts 5 keys of 599 bytes in one bucket (BPF_F_ZERO_SEED:
 * brt_keyhash() with seed 0), more than the key walk's stack room holds (maps/hash_walk.c);
 * create_hash_batch_walk writes 7 keys and walks them by lookup batches of 4, each from
 * the last one's bucket token, then deletes them the same way.
 */
#include <errno.h>
#include <linux/btf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "bpfrt.h"

enum { KEY_BYTES = 4096, VALUE_BYTES = 16384, PAGE = 4096 };

static int maps[4] = { -1, -1, -1, -1 };
static int ring = -1;
static int btf = -1;
/* The only memory bpf() may reach: key buffer, value buffer, then a PROT_NONE page.  ASan
 * does not see writes done by process_vm_writev(), so an overrun must land on the guard
 * page (EFAULT) rather than on some live object. */
static unsigned char *area;

/* BTF written word by word: types[] then strs[] (names appended as used) */
static uint32_t types[256], ntw;
static char strs[512];
static uint32_t nstr = 1;

static uint32_t str(const char *name)
{
	uint32_t off = nstr;
	size_t n = strlen(name) + 1;

	if (nstr + n > sizeof(strs))
		__builtin_trap();
	memcpy(strs + nstr, name, n);
	nstr += (uint32_t)n;
	return off;
}

static void word(uint32_t w)
{
	if (ntw >= sizeof(types) / sizeof(types[0]))
		__builtin_trap();
	types[ntw++] = w;
}

static void type(const char *name, uint32_t kind, uint32_t vlen, uint32_t size_or_type)
{
	word(name ? str(name) : 0);
	word(kind << 24 | vlen);
	word(size_or_type);
}

static void member(const char *name, uint32_t type_id, uint32_t bit_off)
{
	word(str(name));
	word(type_id);
	word(bit_off);
}

/* Type ids 1..NTYPES, in this order; a MAP_CREATE's key and value ids are taken modulo
 * NTYPES + 2, so 0 and a missing id occur too. */
enum { NTYPES = 22 };

static void btf_types(void)
{
	type("int", BTF_KIND_INT, 0, 4), word(BTF_INT_SIGNED << 24 | 32);            /* 1 */
	type("u64", BTF_KIND_INT, 0, 8), word(64);                                    /* 2 */
	type("bpf_spin_lock", BTF_KIND_STRUCT, 1, 4), member("val", 1, 0);            /* 3 */
	type("bpf_res_spin_lock", BTF_KIND_STRUCT, 1, 4), member("val", 1, 0);        /* 4 */
	type("bpf_timer", BTF_KIND_STRUCT, 2, 16), member("a", 2, 0), member("b", 2, 64); /* 5 */
	type("bpf_task_work", BTF_KIND_STRUCT, 1, 8), member("a", 2, 0);             /* 6 */
	type("foo", BTF_KIND_STRUCT, 1, 4), member("val", 1, 0);                      /* 7 */
	type("kptr", BTF_KIND_TYPE_TAG, 0, 7);                                        /* 8 */
	type(NULL, BTF_KIND_PTR, 0, 8);                                               /* 9 */
	type("v_lock", BTF_KIND_STRUCT, 2, 8), member("a", 1, 0), member("l", 3, 32); /* 10 */
	type("v_res", BTF_KIND_STRUCT, 2, 8), member("a", 1, 0), member("l", 4, 32);  /* 11 */
	type("v_timer", BTF_KIND_STRUCT, 2, 24), member("a", 2, 0), member("t", 5, 64); /* 12 */
	type("v_work", BTF_KIND_STRUCT, 2, 16), member("a", 2, 0), member("w", 6, 64); /* 13 */
	type("v_kptr", BTF_KIND_STRUCT, 1, 8), member("p", 9, 0);                     /* 14 */
	type("v_all", BTF_KIND_STRUCT, 6, 48), member("l", 3, 0), member("a", 1, 32), /* 15 */
		member("t", 5, 64), member("w", 6, 192), member("p", 9, 256), member("b", 2, 320);
	/* a lock at two depths: E2BIG */
	type("v_nested", BTF_KIND_STRUCT, 2, 12), member("in", 10, 0), member("l", 3, 64); /* 16 */
	/* struct bpf_cgroup_storage_key's shape */
	type("key2", BTF_KIND_STRUCT, 2, 16), member("id", 2, 0), member("type", 1, 64); /* 17 */
	type("x", BTF_KIND_VAR, 0, 1), word(BTF_VAR_GLOBAL_ALLOCATED);               /* 18 */
	type(".data", BTF_KIND_DATASEC, 1, 4), word(18), word(0), word(4);          /* 19 */
	type(NULL, BTF_KIND_CONST, 0, 10);                                            /* 20 */
	type("u32", BTF_KIND_TYPEDEF, 0, 1);                                          /* 21 */
	/* int[4] (two locks at one level would be refused by BPF_BTF_LOAD: E2BIG) */
	type(NULL, BTF_KIND_ARRAY, 0, 0), word(1), word(1), word(4);                  /* 22 */
}

static int btf_load(void)
{
	static unsigned char blob[sizeof(struct btf_header) + sizeof(types) + sizeof(strs)];
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h) };
	static char log[4096];
	union bpf_attr attr;
	int fd;

	btf_types();
	h.type_len = ntw * 4;
	h.str_off = h.type_len;
	h.str_len = nstr;
	memcpy(blob, &h, sizeof(h));
	memcpy(blob + sizeof(h), types, h.type_len);
	memcpy(blob + sizeof(h) + h.type_len, strs, nstr);
	memset(&attr, 0, sizeof(attr));
	attr.btf = (uint64_t)(uintptr_t)blob;
	attr.btf_size = (uint32_t)sizeof(h) + h.type_len + nstr;
	attr.btf_log_buf = (uint64_t)(uintptr_t)log;
	attr.btf_log_size = sizeof(log);
	attr.btf_log_level = 1;
	fd = bpfrt_bpf(BPF_BTF_LOAD, &attr, sizeof(attr));
	if (fd < 0) /* the BTF above is valid: a refusal is a bug here or there */
		fprintf(stderr, "fuzz_bpf: BPF_BTF_LOAD: %s (errno %d)\n", log, errno);
	return fd;
}

static void setup(void)
{
	if (maps[0] >= 0)
		return;
	btf = btf_load();
	if (btf < 0)
		__builtin_trap();
	maps[0] = bpfrt_map_create(BPF_MAP_TYPE_HASH, "fz_hash", 4, 8, 16, NULL);
	maps[1] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "fz_array", 4, 16, 8, NULL);
	maps[2] = bpfrt_map_create(BPF_MAP_TYPE_QUEUE, "fz_queue", 0, 8, 4, NULL);
	maps[3] = bpfrt_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "fz_perf", 4, 4, 4, NULL);
	ring = bpfrt_perf_ring_create(-1, 1, NULL);
	area = mmap(NULL, KEY_BYTES + VALUE_BYTES + PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		__builtin_trap();
	mprotect(area + KEY_BYTES + VALUE_BYTES, PAGE, PROT_NONE);
}

/* A pointer taken from the input is never used as is: libFuzzer learns live addresses from
 * the compares it traces (a stack address in batch.values once made bpf() write over this
 * function's frame, the "SEGV in walk()" of session 1).  Its bits choose NULL, an offset
 * in one of our buffers, or the guard page. */
static uint64_t sanitize(uint64_t raw)
{
	uint64_t off = raw >> 2;

	if (!raw)
		return 0;
	switch (raw & 3) {
	case 0:
		return (uint64_t)(uintptr_t)(area + KEY_BYTES + VALUE_BYTES + off % PAGE);
	case 1:
		return (uint64_t)(uintptr_t)(area + off % KEY_BYTES);
	case 2:
		return (uint64_t)(uintptr_t)(area + KEY_BYTES);
	default:
		return (uint64_t)(uintptr_t)(area + KEY_BYTES + off % VALUE_BYTES);
	}
}

#define F(field) offsetof(union bpf_attr, field)

/* The bytes past union bpf_attr of a MAP_CREATE that made a map: a script of element
 * commands on it, one per byte of the first 32, so a map with BTF fields is written,
 * walked, frozen and written again.  Low 3 bits: the command; the others: flags and the
 * key's first byte (distinct keys for the walk).  The key's other bytes and the value are
 * the bytes past those 32; a map without keys (queue, stack, bloom filter) gets none. */
static void script(int fd, uint32_t key_size, const uint8_t *s, size_t n)
{
	static const uint64_t update_flags[4] = { BPF_ANY, BPF_NOEXIST, BPF_EXIST, BPF_F_LOCK };
	size_t nops = n < 32 ? n : 32, tail = n - nops;
	uint64_t key = key_size ? (uint64_t)(uintptr_t)area : 0;
	uint64_t value = (uint64_t)(uintptr_t)(area + KEY_BYTES);
	union bpf_attr a;

	memset(area, 0, KEY_BYTES + VALUE_BYTES);
	memcpy(area, s + nops, tail < KEY_BYTES ? tail : KEY_BYTES);
	memcpy(area + KEY_BYTES, s + nops, tail < VALUE_BYTES ? tail : VALUE_BYTES);
	for (size_t i = 0; i < nops; i++) {
		int cmd;

		/* only the command's own fields: the kernel refuses a nonzero byte past them */
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		area[0] = s[i] >> 3;
		switch (s[i] & 7) {
		case 0:
			cmd = BPF_MAP_FREEZE;
			break;
		case 1:
			cmd = BPF_MAP_UPDATE_ELEM;
			a.key = key;
			a.value = value;
			a.flags = update_flags[s[i] >> 6];
			break;
		case 2:
			cmd = BPF_MAP_LOOKUP_ELEM;
			a.key = key;
			a.value = value;
			a.flags = s[i] & 0x80 ? BPF_F_LOCK : 0;
			break;
		case 3:
			cmd = BPF_MAP_DELETE_ELEM;
			a.key = key;
			break;
		case 4:
			cmd = BPF_MAP_GET_NEXT_KEY;
			a.key = s[i] & 0x80 ? 0 : key; /* NULL: the first key */
			a.next_key = (uint64_t)(uintptr_t)(area + 2048);
			break;
		case 5:
			cmd = BPF_MAP_LOOKUP_AND_DELETE_ELEM;
			a.key = key;
			a.value = value;
			break;
		case 6:
			cmd = BPF_OBJ_GET_INFO_BY_FD;
			a.info.bpf_fd = (uint32_t)fd;
			a.info.info_len = 256;
			a.info.info = value;
			break;
		default:
			/* keys (4 x < 600 bytes) and out_batch below 4096; values 4 x <= 4096 */
			cmd = s[i] & 0x80 ? BPF_MAP_LOOKUP_AND_DELETE_BATCH : BPF_MAP_LOOKUP_BATCH;
			/* bit 6: on from the last batch's out_batch (a hash's bucket token),
			 * else from the first key (in_batch shares map_fd's bytes: set first) */
			a.batch.in_batch = s[i] & 0x40 ? (uint64_t)(uintptr_t)(area + 3000) : 0;
			a.batch.map_fd = (uint32_t)fd;
			a.batch.out_batch = (uint64_t)(uintptr_t)(area + 3000);
			a.batch.keys = (uint64_t)(uintptr_t)area;
			a.batch.values = value;
			a.batch.count = 4;
			break;
		}
		bpfrt_bpf(cmd, &a, sizeof(a));
	}
}

/* Every pointer field of every command the fuzzer can send.  A command with pointers that
 * is not listed gets the catch-all below; list it here when bpfrt learns it. */
static const struct {
	int cmd;
	unsigned short off[4];
	int n;
} pointers[] = {
	{ BPF_MAP_CREATE, { 0 }, 0 },
	{ BPF_MAP_LOOKUP_ELEM, { F(key), F(value) }, 2 },
	{ BPF_MAP_UPDATE_ELEM, { F(key), F(value) }, 2 },
	{ BPF_MAP_DELETE_ELEM, { F(key) }, 1 },
	{ BPF_MAP_GET_NEXT_KEY, { F(key), F(next_key) }, 2 },
	{ BPF_MAP_LOOKUP_AND_DELETE_ELEM, { F(key), F(value) }, 2 },
	{ BPF_MAP_FREEZE, { 0 }, 0 },
	{ BPF_PROG_TEST_RUN,
	  { F(test.data_in), F(test.data_out), F(test.ctx_in), F(test.ctx_out) }, 4 },
	{ BPF_OBJ_GET_INFO_BY_FD, { F(info.info) }, 1 },
	{ BPF_MAP_LOOKUP_BATCH,
	  { F(batch.in_batch), F(batch.out_batch), F(batch.keys), F(batch.values) }, 4 },
	{ BPF_MAP_LOOKUP_AND_DELETE_BATCH,
	  { F(batch.in_batch), F(batch.out_batch), F(batch.keys), F(batch.values) }, 4 },
	{ BPF_MAP_UPDATE_BATCH,
	  { F(batch.in_batch), F(batch.out_batch), F(batch.keys), F(batch.values) }, 4 },
	{ BPF_MAP_DELETE_BATCH,
	  { F(batch.in_batch), F(batch.out_batch), F(batch.keys), F(batch.values) }, 4 },
	{ BPF_BTF_LOAD, { F(btf), F(btf_log_buf) }, 2 },
};

static void sanitize_pointers(int cmd, union bpf_attr *attr)
{
	unsigned char *p = (unsigned char *)attr;
	uint64_t v;
	size_t i, j;

	for (i = 0; i < sizeof(pointers) / sizeof(pointers[0]); i++) {
		if (pointers[i].cmd != cmd)
			continue;
		for (j = 0; j < (size_t)pointers[i].n; j++) {
			memcpy(&v, p + pointers[i].off[j], 8);
			v = sanitize(v);
			memcpy(p + pointers[i].off[j], &v, 8);
		}
		return;
	}
	/* unknown to this table: any word that could be a user address is one */
	for (j = 0; j + 8 <= sizeof(*attr); j += 8) {
		memcpy(&v, p + j, 8);
		if (v >= 0x10000 && v < 0x800000000000ull) {
			v = sanitize(v);
			memcpy(p + j, &v, 8);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union bpf_attr attr;
	int cmd, ret;

	setup();
	if (size < 2)
		return 0;
	cmd = data[0] % 40;
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, data + 1, size - 1 < sizeof(attr) ? size - 1 : sizeof(attr));
	if (cmd == BPF_PROG_LOAD || cmd == BPF_OBJ_PIN || cmd == BPF_OBJ_GET ||
	    cmd == BPF_MAP_GET_FD_BY_ID)
		return 0; /* programs have fuzz_verifier; pins and ids would walk the filesystem */
	sanitize_pointers(cmd, &attr);
	if (cmd == BPF_MAP_CREATE) {
		/* a ring buffer's size is pages: up to 16 of them */
		attr.max_entries %= attr.map_type == BPF_MAP_TYPE_RINGBUF ||
						   attr.map_type == BPF_MAP_TYPE_USER_RINGBUF
					   ? 16 * 4096 + 1
					   : 257;
		attr.value_size %= 4097;
		attr.key_size %= 600;
		/* 0: no BTF; 1, 2: the BTF of btf_types(); 3: a map's fd (not a BTF) */
		attr.btf_fd = attr.btf_fd % 4 == 0   ? 0
			      : attr.btf_fd % 4 == 3 ? (uint32_t)maps[0]
						     : (uint32_t)btf;
		attr.btf_key_type_id %= NTYPES + 2;
		attr.btf_value_type_id %= NTYPES + 2;
		/* map of maps: an inner map of ours, or none */
		attr.inner_map_fd = attr.inner_map_fd ? (uint32_t)maps[attr.inner_map_fd % 4] : 0;
	} else if (cmd >= BPF_MAP_LOOKUP_BATCH && cmd <= BPF_MAP_DELETE_BATCH) {
		attr.batch.map_fd = (uint32_t)maps[attr.batch.map_fd % 4];
	} else {
		/* steer the fd to one of our maps; element commands get our buffers unless
		 * the input says otherwise (bit 7 of the command byte) */
		attr.map_fd = (uint32_t)maps[attr.map_fd % 4];
		if (!(data[0] & 0x80) &&
		    (cmd <= BPF_MAP_GET_NEXT_KEY || cmd == BPF_MAP_LOOKUP_AND_DELETE_ELEM)) {
			memset(area, 0, KEY_BYTES);
			memcpy(area, data + 1, size - 1 < KEY_BYTES ? size - 1 : KEY_BYTES);
			attr.key = (data[0] & 0x40) ? 0 : (uint64_t)(uintptr_t)area;
			attr.value = (uint64_t)(uintptr_t)(area + KEY_BYTES);
			/* a value that is the ring's fd: perf event array updates succeed */
			if ((data[0] & 0x20) && cmd == BPF_MAP_UPDATE_ELEM)
				memcpy(area + KEY_BYTES, &ring, sizeof(ring));
		}
	}
	ret = bpfrt_bpf(cmd, &attr, sizeof(attr));
	if (ret > 2 && cmd == BPF_MAP_CREATE && size > 1 + sizeof(attr))
		script(ret, attr.key_size, data + 1 + sizeof(attr), size - 1 - sizeof(attr));
	if (ret > 2 && (cmd == BPF_MAP_CREATE || cmd == BPF_BTF_LOAD))
		close(ret);
	return 0;
}
