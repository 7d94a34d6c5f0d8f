/* jiffies.c - the kernel's jiffies_64, for bpf_jiffies64 (and whatever else counts in the
 * kernel's ticks).
 *
 * The kernel starts jiffies_64 at INITIAL_JIFFIES ((unsigned int)(-300 * HZ): five minutes
 * before a 32-bit jiffies wraps, so wrap bugs show early) and its tick advances it by one
 * each 1/HZ s of CLOCK_MONOTONIC (tick_do_update_jiffies64() counts the periods of the
 * monotonic clock that passed, so a tickless CPU catches up and neither counts a suspend).
 * So bpfrt gives INITIAL_JIFFIES + CLOCK_MONOTONIC * HZ plus the kernel's own offset: its
 * tick starts counting a little after the monotonic clock does (its jiffies trail by
 * 64 ticks, 0.26 s, on the development host).  Both come from /proc/timer_list when this process may read it (root
 * on 6.18: its "now at <ns> nsecs" and the first "jiffies: <n>" of one read): HZ is the
 * one of the kernel's choices (100, 250, 300, 1000) that puts n nearest
 * INITIAL_JIFFIES + now * HZ, the offset is what is left, and values then follow the
 * kernel's within a tick.  Otherwise HZ is CONFIG_HZ of the kernel's configuration
 * (kconfig.c), else 250 (the Kconfig default), without an offset: the rate is the
 * kernel's, the value ahead of the kernel's by those ticks.  Worked out once per process.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned hz = 250;
static int64_t offset;

static uint64_t initial_jiffies(unsigned h)
{
	return (uint64_t)(uint32_t)(-300 * (int32_t)h);
}

/* monotonic ns in ticks of h */
static uint64_t ticks(uint64_t ns, unsigned h)
{
	return ns / 1000000000u * h + ns % 1000000000u * h / 1000000000u;
}

/* HZ and the offset from /proc/timer_list: 1 when it was read */
static int from_timer_list(void)
{
	static const unsigned choices[] = { 100, 250, 300, 1000 };
	static char buf[16384];
	uint64_t now = 0, j = 0, best = UINT64_MAX;
	const char *p;
	FILE *f = fopen("/proc/timer_list", "re");
	size_t n;

	if (!f)
		return 0;
	/* one read: both lines come from the same pass over the kernel's timers */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strstr(buf, "now at ");
	if (!p || sscanf(p, "now at %" SCNu64, &now) != 1)
		return 0;
	p = strstr(buf, "\njiffies: ");
	if (!p || sscanf(p, "\njiffies: %" SCNu64, &j) != 1)
		return 0;
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
		uint64_t want = initial_jiffies(choices[i]) + ticks(now, choices[i]);
		uint64_t d = j > want ? j - want : want - j;

		if (d < best) {
			best = d;
			hz = choices[i];
			offset = (int64_t)(j - want);
		}
	}
	return 1;
}

static void calibrate(void)
{
	const char *v;

	if (from_timer_list())
		return;
	if (!brt_kconfig_get("CONFIG_HZ", &v) && v) {
		unsigned long h = strtoul(v, NULL, 10);

		if (h >= 24 && h <= 10000)
			hz = (unsigned)h;
	}
}

unsigned brt_jiffies_hz(void)
{
	pthread_once(&once, calibrate);
	return hz;
}

uint64_t brt_jiffies64(void)
{
	struct timespec ts;

	pthread_once(&once, calibrate);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return initial_jiffies(hz) +
	       ticks((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, hz) +
	       (uint64_t)offset;
}
