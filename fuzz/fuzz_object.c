/* fuzz_object.c - fuzz target for an object's whole load (src/object: open, CO-RE, then
 * the batched load of object/load.c: maps created, global data written, programs
 * verified and loaded through bpfrt_bpf(), fds resolved through the batch's memo), then
 * its close.  fuzz_elf stops at the parse; this one goes on whenever the bytes open.
 * Any input must open and load or fail with an errno, never crash, hang or leak.
 * Maps are clamped before the load (at most 256 entries, 16 pages for a ring buffer,
 * objects whose maps' key + value exceed 64 KiB are not loaded) so a run cannot reserve
 * gigabytes, and the pin root does not exist, so a pinned map fails the load instead of
 * writing files.  Seeds: small objects of tests/progs (corpus/object/).
 */
#include <stdlib.h>

#include "bpfrt.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpfrt_object_open_opts opts = { .sz = sizeof(opts),
					       .object_name = "fuzz.o",
					       .pin_root_path = "/nonexistent/bpfrt-fuzz" };
	struct bpfrt_object *obj = bpfrt_object_open_mem(data, size, &opts);
	struct bpfrt_map *m;

	if (!obj)
		return 0;
	for (m = bpfrt_object_next_map(obj, NULL); m; m = bpfrt_object_next_map(obj, m)) {
		enum bpf_map_type t = bpfrt_map__type(m);
		uint32_t max = t == BPF_MAP_TYPE_RINGBUF || t == BPF_MAP_TYPE_USER_RINGBUF
				       ? 16 * 4096 : 256;

		if ((uint64_t)bpfrt_map__key_size(m) + bpfrt_map__value_size(m) > 65536)
			goto out;
		if (bpfrt_map__max_entries(m) > max)
			bpfrt_map__set_max_entries(m, max);
	}
	bpfrt_object_load(obj);
out:
	bpfrt_object_close(obj);
	return 0;
}
