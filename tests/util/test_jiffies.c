/* test_jiffies.c - util/jiffies.c's calibration on /proc/timer_list text
 * (brt_jiffies_fit()): HZ and the kernel's offset from "now at <ns> nsecs" and
 * "jiffies: <n>"; the configuration's HZ, when known, is the rate (near 300 s of uptime
 * every HZ puts INITIAL_JIFFIES + now * HZ near 2^32, so the nearest choice can be a
 * wrong one); text without both lines, or with no number in them, calibrates nothing.
 * Then the process's own answer: its HZ is the configuration's when the configuration is
 * readable, and jiffies advance.  No root needed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "util/util.h"

/* the kernel's INITIAL_JIFFIES at HZ h */
static uint64_t initial(unsigned h)
{
	return (uint64_t)(uint32_t)(-300 * (int32_t)h);
}

/* /proc/timer_list's text at monotonic now_ns with jiffies j (a CPU's timers between) */
static const char *text(uint64_t now_ns, uint64_t j)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
		 "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\n"
		 "now at %" PRIu64 " nsecs\n\ncpu: 0\n clock 0:\n  .base:       0x0\n"
		 "  .idle_jiffies   : %" PRIu64 "\njiffies: %" PRIu64 "\n\n",
		 now_ns, j - 3, j);
	return buf;
}

/* the jiffies a kernel of HZ h whose tick trails the monotonic clock by lag ticks shows
 * at now_ns */
static uint64_t kernel_jiffies(uint64_t now_ns, unsigned h, int64_t lag)
{
	return initial(h) + now_ns / 1000000000u * h + now_ns % 1000000000u * h / 1000000000u -
	       (uint64_t)lag;
}

static void fit(const char *name, const char *t, unsigned config_hz, int ok, unsigned hz,
		int64_t offset)
{
	unsigned h = 0;
	int64_t off = 0;

	T_CASE(name);
	T_EQ_INT(ok, brt_jiffies_fit(t, config_hz, &h, &off));
	if (ok) {
		T_EQ_INT(hz, h);
		T_EQ_INT(offset, off);
	}
}

int main(void)
{
	const uint64_t s = 1000000000u;
	const char *v;
	uint64_t a, b;
	const struct timespec gap = { 0, 50 * 1000 * 1000 };

	fit("1000 s up, HZ 250", text(1000 * s, kernel_jiffies(1000 * s, 250, 64)), 0, 1, 250,
	    -64);
	fit("1000 s up, HZ 1000", text(1000 * s, kernel_jiffies(1000 * s, 1000, 64)), 0, 1,
	    1000, -64);
	fit("10 s up, HZ 100", text(10 * s, kernel_jiffies(10 * s, 100, 5)), 0, 1, 100, -5);
	/* 300.1 s up at HZ 250, 64 ticks behind: 2^32 - 39, which HZ 100 (2^32 + 10) is
	 * nearer than 250 (2^32 + 25); the configuration's 250 decides */
	fit("300.1 s up, HZ 250, configured", text(300 * s + s / 10,
						  kernel_jiffies(300 * s + s / 10, 250, 64)),
	    250, 1, 250, -64);
	fit("configured HZ 300", text(5000 * s, kernel_jiffies(5000 * s, 300, 30)), 300, 1, 300,
	    -30);
	fit("empty", "", 0, 0, 0, 0);
	fit("no jiffies line", "now at 5000 nsecs\n", 250, 0, 0, 0);
	fit("no now line", "cpu: 0\njiffies: 4294937296\n", 250, 0, 0, 0);
	fit("not numbers", "now at x nsecs\njiffies: y\n", 0, 0, 0, 0);
	fit("jiffies not a number", "now at 5 nsecs\njiffies: \n", 0, 0, 0, 0);
	fit("cut off", "now at 1", 0, 0, 0, 0);

	T_CASE("this process: HZ the configuration's, jiffies advance");
	if (!brt_kconfig_get("CONFIG_HZ", &v) && v) {
		T_EQ_INT((int)strtoul(v, NULL, 10), (int)brt_jiffies_hz());
	} else {
		printf("configured HZ: skipped: no kernel configuration readable\n");
	}
	a = brt_jiffies64();
	nanosleep(&gap, NULL);
	b = brt_jiffies64();
	T_ASSERT(b > a && b - a <= brt_jiffies_hz() / 5 + 2);
	return t_done();
}
