/* test_hash_stress.c - short concurrency stress of the hash map: threads of two processes
 * update, delete, re-insert and read the same few keys, half through the fd wrappers and
 * half through map handles (lockless lookups); a reader must never see a value whose
 * words disagree (torn) or that belongs to another key (a recycled element), a key that
 * is never deleted must always be found, and counters with one writer each must end
 * exact.  A map of one-word values (updated in place) gets the same traffic: a value read
 * must carry its own key.  Short enough for every CI run; meant to run under TSan too.
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

#define FIXED_KEY 100 /* inserted once, never deleted: must always be found */

struct val {
	uint64_t w[3]; /* all three words equal in every value ever written */
	uint64_t key;  /* the key it was written under */
};

static int map_fd, cnt_fd, word_fd;
static struct bpfrt_map_handle *map_h, *word_h;
static atomic_int torn, lost;

static int lookup(int i, uint32_t k, struct val *v)
{
	return i & 1 ? bpfrt_map_handle_lookup(map_h, &k, v) : bpfrt_map_lookup_elem(map_fd, &k, v);
}

static int bad(const struct val *v, uint32_t k)
{
	return v->w[0] != v->w[1] || v->w[1] != v->w[2] || v->key != k;
}

/* One-word values hold their key in the upper half. */
static void word_traffic(uint32_t id, uint32_t i, uint32_t k)
{
	uint64_t w = (uint64_t)k << 32 | (id << 16 | (i & 0xffff));
	uint32_t r = (k + 5) % NKEYS;

	if (i % 7 == 6)
		bpfrt_map_delete_elem(word_fd, &k);
	else if (i & 1)
		bpfrt_map_handle_update(word_h, &k, &w, BPF_ANY);
	else
		bpfrt_map_update_elem(word_fd, &k, &w, BPF_ANY);
	if (!(i & 1 ? bpfrt_map_handle_lookup(word_h, &r, &w) :
		      bpfrt_map_lookup_elem(word_fd, &r, &w)) && w >> 32 != r)
		atomic_fetch_add(&torn, 1);
}

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg, k;
	struct val v;

	for (uint32_t i = 0; i < ITERS; i++) {
		k = (i * 7 + id) % NKEYS;
		for (int j = 0; j < 3; j++)
			v.w[j] = ((uint64_t)id << 32) | i;
		v.key = k;
		if (i % 5 == 4)
			bpfrt_map_delete_elem(map_fd, &k);
		else if (i & 2)
			bpfrt_map_handle_update(map_h, &k, &v, BPF_ANY);
		else
			bpfrt_map_update_elem(map_fd, &k, &v, BPF_ANY);
		word_traffic(id, i, k);
		k = (k + 3) % NKEYS;
		if (!lookup((int)i, k, &v) && bad(&v, k))
			atomic_fetch_add(&torn, 1);
		if (lookup((int)i, FIXED_KEY, &v))
			atomic_fetch_add(&lost, 1);
		else if (bad(&v, FIXED_KEY))
			atomic_fetch_add(&torn, 1);
		/* one writer per counter key: read-modify-write must not lose updates */
		uint64_t c = 0;

		bpfrt_map_lookup_elem(cnt_fd, &id, &c);
		c++;
		bpfrt_map_update_elem(cnt_fd, &id, &c, BPF_ANY);
	}
	return NULL;
}

static atomic_int writers_done;

/* Lookups only, lockless through the handle, while the workers recycle elements. */
static void *reader(void *arg)
{
	struct val v;

	(void)arg;
	for (uint32_t i = 0; !atomic_load(&writers_done) || i < 1000; i++) {
		uint32_t k = i % NKEYS;

		if (!bpfrt_map_handle_lookup(map_h, &k, &v) && bad(&v, k))
			atomic_fetch_add(&torn, 1);
		if (bpfrt_map_handle_lookup(map_h, &(uint32_t){ FIXED_KEY }, &v))
			atomic_fetch_add(&lost, 1);
		else if (bad(&v, FIXED_KEY))
			atomic_fetch_add(&torn, 1);
	}
	return NULL;
}

static void run_threads(uint32_t base)
{
	pthread_t t[THREADS], r;

	atomic_store(&writers_done, 0);
	pthread_create(&r, NULL, reader, NULL);
	for (uint32_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(base + i));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&writers_done, 1);
	pthread_join(r, NULL);
}

int main(void)
{
	int st, child_torn = 0;
	pid_t pid;

	T_CASE("hash stress");
	map_fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "stress", 4, sizeof(struct val),
				  NKEYS + 1, NULL);
	cnt_fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "counts", 4, 8, 2 * THREADS, NULL);
	word_fd = bpfrt_map_create(BPF_MAP_TYPE_HASH, "words", 4, 8, NKEYS, NULL);
	T_ASSERT(map_fd >= 0 && cnt_fd >= 0 && word_fd >= 0);
	map_h = bpfrt_map_handle_open(map_fd);
	word_h = bpfrt_map_handle_open(word_fd);
	T_ASSERT(map_h != NULL && word_h != NULL);
	{
		struct val fixed = { { 7, 7, 7 }, FIXED_KEY };
		uint32_t k = FIXED_KEY;

		T_EQ_INT(0, bpfrt_map_update_elem(map_fd, &k, &fixed, BPF_NOEXIST));
	}
	pid = UNDER_TSAN ? 1 : fork();
	if (pid == 0) {
		run_threads(THREADS);
		_exit(atomic_load(&torn) || atomic_load(&lost) ? 1 : 0);
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
	T_EQ_INT(0, atomic_load(&lost));
	for (uint32_t id = 0; id < 2 * THREADS; id++) {
		uint64_t c = 0;

		T_EQ_INT(0, bpfrt_map_lookup_elem(cnt_fd, &id, &c));
		T_EQ_U64(ITERS, c);
	}
	bpfrt_map_handle_close(map_h);
	bpfrt_map_handle_close(word_h);
	close(map_fd);
	close(cnt_fd);
	close(word_fd);
	return t_done();
}
