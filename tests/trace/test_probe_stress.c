/* test_probe_stress.c - probes fired from several threads while another thread attaches
 * and detaches programs (bpfrt_link_detach and close) over and over: no crash, no race
 * (run under TSan in CI), every counted hit is one that happened while a program was
 * attached, and once the last link is detached hits run nothing.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "trace_test.h"

#define THREADS 3
#define HITS 2000000 /* per thread at most; they stop when the cycles are done */
#define CYCLES 150

static int map_fd, prog_fd;
static atomic_int done;
static atomic_ulong fired;

static void hit(uint64_t i)
{
	BPFRT_PROBE("stress:hit", i, i + 1);
}

static void *firer(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < HITS && !atomic_load_explicit(&done, memory_order_relaxed); i++) {
		hit(i);
		atomic_fetch_add_explicit(&fired, 1, memory_order_relaxed);
	}
	return NULL;
}

static uint64_t counted(void)
{
	uint32_t key = 0;
	uint64_t v = 0;

	bpfrt_map_lookup_elem(map_fd, &key, &v);
	return v;
}

int main(void)
{
	pthread_t t[THREADS];
	char text[512];
	unsigned long runs = 0;
	int attached = 0;

	tt_private_fs("probe_stress");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "hits", 4, 8, 1, NULL);
	snprintf(text, sizeof(text),
		 "stw [%%r10-4], 0\nmov %%r2, %%r10\nadd %%r2, -4\nlddw %%r1, map_fd %d\n"
		 "call 1\njeq %%r0, 0, +2\nmov %%r1, 1\nlock add [%%r0+0], %%r1\nmov %%r0, 0\n"
		 "exit\n", map_fd);
	prog_fd = tt_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "GPL", text, NULL, 0);
	T_ASSERT(map_fd >= 0 && prog_fd >= 0);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, firer, NULL);
	for (int c = 0; c < CYCLES; c++) {
		struct bpfrt_link_stats st;
		int a = bpfrt_probe_attach(prog_fd, "stress:hit");
		int b = bpfrt_probe_attach(prog_fd, "stress:hit");

		if (a < 0 || b < 0) {
			T_FAIL("attach failed: %d %d", a, b);
			break;
		}
		attached++;
		usleep(200);
		if (!bpfrt_link_stats(a, &st))
			runs += st.events;
		bpfrt_link_detach(a);
		if (!bpfrt_link_stats(b, &st))
			runs += st.events;
		if (c % 2)
			bpfrt_link_detach(b);
		close(a);
		close(b); /* detaches b in its thread when not detached above */
	}
	atomic_store(&done, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);

	T_CASE("hits counted only while attached, never more than fired");
	T_ASSERT(counted() <= 2 * atomic_load(&fired));
	T_ASSERT(counted() >= runs);
	printf("%d cycles, %lu hits fired, %llu program runs\n", attached,
	       atomic_load(&fired), (unsigned long long)counted());

	T_CASE("after the last detach, hits run nothing");
	{
		uint64_t before;

		/* links closed without detach go away on their threads: wait for quiet */
		for (int i = 0; i < 1000; i++) {
			before = counted();
			hit(0);
			if (counted() == before)
				break;
			usleep(10000);
		}
		before = counted();
		for (int i = 0; i < 1000; i++)
			hit((uint64_t)i);
		T_EQ_INT(before, counted());
	}
	close(prog_fd);
	close(map_fd);
	tt_cleanup_fs();
	return t_done();
}
