/* fuzz_bpf.c - fuzz target for bpfrt_bpf() (src/api, src/maps): the first byte picks the
 * command, the rest fills union bpf_attr.  Four maps (hash, array, queue, perf event array
 * with a perf output ring to store) exist up front and fd fields are steered to them so
 * element commands reach the map code; sizes of new
 * maps are clamped so a run cannot reserve gigabytes.  Any input must return an errno or
 * succeed, never crash; every fd it creates is closed again.
 */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "bpfrt.h"

enum { KEY_BYTES = 4096, VALUE_BYTES = 16384, PAGE = 4096 };

static int maps[4] = { -1, -1, -1, -1 };
static int ring = -1;
/* The only memory bpf() may reach: key buffer, value buffer, then a PROT_NONE page.  ASan
 * does not see writes done by process_vm_writev(), so an overrun must land on the guard
 * page (EFAULT) rather than on some live object. */
static unsigned char *area;

static void setup(void)
{
	if (maps[0] >= 0)
		return;
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
		attr.max_entries %= 257;
		attr.value_size %= 4097;
		attr.key_size %= 600;
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
	if (ret > 2 && (cmd == BPF_MAP_CREATE || cmd == BPF_BTF_LOAD))
		close(ret);
	return 0;
}
