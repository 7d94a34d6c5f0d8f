/* test_hash_stress.c - short concurrency stress of the hash map: threads of two processes
 * update, delete, re-insert and read the same few keys; a reader must never see a value
 * whose words disagree (torn) and counters with one writer each must end exact.
 * Short enough for every CI run; meant to run under TSan too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "harness.h"
#include "bpfrt.h"

/* TSan sees one process: synchronisation through the other process's lock operations is
 * invisible to it and shows up as false races, so under TSan the threads run in one
 * process (the cross-process run is covered without TSan, and by test_xproc). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#define NKEYS 8
#define ITERS 4000
#define THREADS 3

struct val {
	uint64_t w[4]; /* all four words equal in every value ever written */
};

static int map_fd, cnt_fd;
static atomic_int torn;

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg, k;
	struct val v;

	for (uint32_t i = 0; i < ITERS; i++) {
		k = (i * 7 + id) % NKEYS;
		for (int j = 0; j < 4; j++)
			v.w[j] = ((uint64_t)id << 32) | i;
		if (i % 5 == 4)
			bpfrt_map_delete_elem(map_fd, &k);
		else
			bpfrt_map_update_elem(map_fd, &k, &v, BPF_ANY);
		k = (k + 3) % NKEYS;
		if (!bpfrt_map_lookup_elem(map_fd, &k, &v) &&
		    (v.w[0] != v.w[1] || v.w[1] != v.w[2] || v.w[2] != v.w[3]))
			atomic_fetch_add(&torn, 1);
		/* one writer per counter key: read-modify-write must not lose updates */
		uint64_t c = 0;

		bpfrt_map_lookup_elem(cnt_fd, &id, &c);
		c++;
		bpfrt_map_update_elem(cnt_fd, &id, &c, BPF_ANY);
	}
	return NULL;
}

static void run_threads(uint32_t base)
{
	pthread_t t[THREADS];

	for (uint32_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(base + i));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	int st, child_torn = 0;
	pid_t pid;

	T_CASE("hash stress");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "stress", 4, sizeof(struct val), NKEYS,
				  NULL);
	cnt_fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "counts", 4, 8, 2 * THREADS, NULL);
	T_ASSERT(map_fd >= 0 && cnt_fd >= 0);
	pid = UNDER_TSAN ? 1 : fork();
	if (pid == 0) {
		run_threads(THREADS);
		_exit(atomic_load(&torn) ? 1 : 0);
	}
	run_threads(0);
	if (UNDER_TSAN) {
		run_threads(THREADS);
	} else {
		waitpid(pid, &st, 0);
		child_torn = !WIFEXITED(st) || WEXITSTATUS(st);
	}
	T_EQ_INT(0, child_torn);
	T_EQ_INT(0, atomic_load(&torn));
	for (uint32_t id = 0; id < 2 * THREADS; id++) {
		uint64_t c = 0;

		T_EQ_INT(0, bpfrt_map_lookup_elem(cnt_fd, &id, &c));
		T_EQ_U64(ITERS, c);
	}
	close(map_fd);
	close(cnt_fd);
	return t_done();
}
