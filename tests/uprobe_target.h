/* uprobe_target.h - a uprobe on a function of the test's own executable, opened by hand:
 * the uprobe PMU's type (perf_event_attr.type) and the function's offset in the file
 * (config2).  Shared by tests/trace/test_kprobe.c and tests/preload/kp.c; attach.sh
 * builds kp.c against the system libbpf outside CMake, so this is header-only, libc-only.
 */
#ifndef BPFRT_TESTS_UPROBE_TARGET_H
#define BPFRT_TESTS_UPROBE_TARGET_H

#include <stdint.h>
#include <stdio.h>

/* the offset in its file of the code at addr, from its mapping in /proc/self/maps; 0 when
 * no mapping holds it */
static inline uint64_t exe_file_offset(uint64_t addr)
{
	unsigned long long start, end, off;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx", &start, &end, perm, &off) == 4 &&
		    addr >= start && addr < end) {
			fclose(f);
			return addr - start + off;
		}
	if (f)
		fclose(f);
	return 0;
}

/* the type of PMU name ("uprobe", "kprobe"), or -1 when the kernel has none */
static inline long pmu_type(const char *name)
{
	char path[128];
	long type = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	f = fopen(path, "re");
	if (f && fscanf(f, "%ld", &type) != 1)
		type = -1;
	if (f)
		fclose(f);
	return type;
}

#endif
