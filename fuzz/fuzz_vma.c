/* fuzz_vma.c - fuzz target for bpf_find_vma()'s reading of /proc/PID/maps (src/trace/vma.c):
 * the first 8 bytes are the address asked for, the rest the maps text.  Any text must be
 * read without crash or hang, and an answer must hold the address.  Seeds: a process's
 * maps, a line longer than the reader's buffer (corpus/vma/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addr, lo = 0, hi = 0;
	FILE *f;
	int ret;

	if (size < 8)
		return 0;
	memcpy(&addr, data, 8);
	f = fmemopen((void *)(uintptr_t)(data + 8), size - 8, "r");
	if (!f)
		return 0;
	ret = brt_vma_find_in(f, addr, &lo, &hi);
	fclose(f);
	if (ret && ret != -ENOENT)
		abort();
	if (!ret && !(lo <= addr && addr < hi))
		abort();
	return 0;
}
