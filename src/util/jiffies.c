/* jiffies.c - the kernel's jiffies_64, for bpf_jiffies64 (and whatever else counts in the
 * kernel's ticks).
 *
 * The kernel starts jiffies_64 at INITIAL_JIFFIES ((unsigned int)(-300 * HZ): five minutes
 * before a 32-bit jiffies wraps, so wrap bugs show early) and its tick advances it by one
 * each 1/HZ s of CLOCK_MONOTONIC (tick_do_update_jiffies64() counts the periods of the
 * monotonic clock that passed, so a tickless CPU catches up and neither counts a suspend).
 * So bpfrt gives INITIAL_JIFFIES + CLOCK_MONOTONIC * HZ plus the kernel's own offset: its
 * tick starts counting a little after the monotonic clock does (its jiffies trail by
 * 64 ticks, 0.26 s, on the development host).  HZ is CONFIG_HZ of the kernel's
 * configuration (kconfig.c) when it is readable.  The offset comes from /proc/timer_list
 * when this process may read it (root on 6.18: its "now at <ns> nsecs" and the first
 * "jiffies: <n>" of one read, brt_jiffies_fit()): what is left of n past
 * INITIAL_JIFFIES + now * HZ, and values then follow the kernel's within a tick.  Without
 * the configuration HZ is the one of the kernel's choices (100, 250, 300, 1000) that puts
 * n nearest (a guess that can be wrong within a few seconds of 300 s of uptime, where
 * every choice puts it near 2^32), else 250 (the Kconfig default).  Without
 * /proc/timer_list (not root, or masked as containers mask it) there is no offset: the
 * rate is the kernel's, the value ahead of the kernel's by those ticks.  Worked out once
 * per process.
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
static int exact; /* the offset came from /proc/timer_list */

static uint64_t initial_jiffies(unsigned h)
{
	return (uint64_t)(uint32_t)(-300 * (int32_t)h);
}

/* monotonic ns in ticks of h */
static uint64_t ticks(uint64_t ns, unsigned h)
{
	return ns / 1000000000u * h + ns % 1000000000u * h / 1000000000u;
}

int brt_jiffies_fit(const char *text, unsigned config_hz, unsigned *hz_out,
		    int64_t *offset_out)
{
	static const unsigned choices[] = { 100, 250, 300, 1000 };
	uint64_t now = 0, j = 0, best = UINT64_MAX;
	const char *p;

	p = strstr(text, "now at ");
	if (!p || sscanf(p, "now at %" SCNu64, &now) != 1)
		return 0;
	p = strstr(text, "\njiffies: ");
	if (!p || sscanf(p, "\njiffies: %" SCNu64, &j) != 1)
		return 0;
	if (config_hz) {
		*hz_out = config_hz;
		*offset_out = (int64_t)(j - initial_jiffies(config_hz) - ticks(now, config_hz));
		return 1;
	}
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
		uint64_t want = initial_jiffies(choices[i]) + ticks(now, choices[i]);
		uint64_t d = j > want ? j - want : want - j;

		if (d < best) {
			best = d;
			*hz_out = choices[i];
			*offset_out = (int64_t)(j - want);
		}
	}
	return 1;
}

/* HZ and the offset from one read of /proc/timer_list (both lines come from the same pass
 * over the kernel's timers): 1 when it was read and fit */
static int from_timer_list(unsigned config_hz)
{
	static char buf[16384];
	FILE *f = fopen("/proc/timer_list", "re");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return brt_jiffies_fit(buf, config_hz, &hz, &offset);
}

static void calibrate(void)
{
	unsigned config_hz = 0;
	const char *v;

	if (!brt_kconfig_get("CONFIG_HZ", &v) && v) {
		unsigned long h = strtoul(v, NULL, 10);

		if (h >= 24 && h <= 10000)
			config_hz = (unsigned)h;
	}
	exact = from_timer_list(config_hz);
	if (!exact && config_hz)
		hz = config_hz;
}

int brt_jiffies_exact(void)
{
	pthread_once(&once, calibrate);
	return exact;
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
