/* fuzz_bpf.c - fuzz target for bpfrt_bpf() (src/api, src/maps): the first byte picks the
 * command, the rest fills union bpf_attr.  Three maps (hash, array, queue) exist up front
 * and fd fields are steered to them so element commands reach the map code; sizes of new
 * maps are clamped so a run cannot reserve gigabytes.  Any input must return an errno or
 * succeed, never crash; every fd it creates is closed again.
 */
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "bpfrt.h"

static int maps[3] = { -1, -1, -1 };

static void setup(void)
{
	if (maps[0] >= 0)
		return;
	maps[0] = bpfrt_map_create(BPF_MAP_TYPE_HASH, "fz_hash", 4, 8, 16, NULL);
	maps[1] = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "fz_array", 4, 16, 8, NULL);
	maps[2] = bpfrt_map_create(BPF_MAP_TYPE_QUEUE, "fz_queue", 0, 8, 4, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t key[64] = { 0 }, value[512] = { 0 };
	union bpf_attr attr;
	int cmd, ret;

	setup();
	if (size < 2)
		return 0;
	cmd = data[0] % 40;
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, data + 1, size - 1 < sizeof(attr) ? size - 1 : sizeof(attr));
	if (cmd == BPF_MAP_CREATE) {
		attr.max_entries %= 257;
		attr.value_size %= 4097;
		attr.key_size %= 600;
	} else if (cmd == BPF_PROG_LOAD || cmd == BPF_OBJ_PIN || cmd == BPF_OBJ_GET) {
		return 0; /* programs have fuzz_verifier; pins would touch the filesystem */
	} else {
		/* steer the fd to one of our maps; pointers to our buffers unless the input
		 * says otherwise (bit 7 of the command byte) */
		attr.map_fd = (uint32_t)maps[attr.map_fd % 3];
		if (!(data[0] & 0x80)) {
			attr.key = (data[0] & 0x40) ? 0 : (uint64_t)(uintptr_t)key;
			attr.value = (uint64_t)(uintptr_t)value;
			memcpy(key, data + 1, size - 1 < sizeof(key) ? size - 1 : sizeof(key));
		}
	}
	ret = bpfrt_bpf(cmd, &attr, sizeof(attr));
	if (ret > 2 && cmd == BPF_MAP_CREATE)
		close(ret);
	return 0;
}
