/* test_perf_wakeup.c - the wake-up protocol of perf output rings (src/maps/perf_output.c):
 * a consumer that sleeps in poll() on a ring's wake-up fd is woken for every sample it has
 * not read, however the producer's writes interleave with its drain; a wake-up that
 * cannot be delivered (the consumer's process is gone) does not silence the ring for the
 * next consumer, nor does a byte left in a dead consumer's pipe.  A lost wake-up shows as
 * a poll() that times out while the ring holds unread records.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "bpfrt.h"
#include "maps/maps.h"

#define SAMPLES 200000

static struct brt_obj *obj;
static atomic_int stop;

static void count_sample(void *arg, const struct perf_event_header *rec)
{
	if (rec->type == PERF_RECORD_SAMPLE)
		(*(long *)arg)++;
}

/* Write SAMPLES samples as fast as the ring takes them, pausing now and then so that
 * the consumer both catches up (and sleeps) and races with the writes. */
static void *producer(void *arg)
{
	uint64_t v = 0;

	(void)arg;
	for (long i = 0; i < SAMPLES && !atomic_load(&stop); i++) {
		int err;

		while ((err = brt_perf_out_write(obj, 0, &v, 8, NULL, 0)) == -ENOSPC &&
		       !atomic_load(&stop))
			sched_yield();
		if (err)
			break;
		v++;
		if (i % 64 == 0) {
			struct timespec ts = { 0, (long)(i % 7) * 20000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* Wait up to ms for the wake-up fd to be readable. */
static int readable(int pfd, int ms)
{
	struct pollfd p = { .fd = pfd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static int unread(const struct brt_perf_walk *w)
{
	return __atomic_load_n(&w->meta->data_head, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&w->meta->data_tail, __ATOMIC_ACQUIRE);
}

static void test_race(void)
{
	int ring = bpfrt_perf_ring_create(-1, 4, NULL), pfd;
	struct brt_perf_walk w = { 0 };
	pthread_t t;
	long got = 0, lost_wakeups = 0;

	T_CASE("a consumer sleeping in poll is woken for every sample");
	T_ASSERT(ring >= 0);
	pfd = bpfrt_perf_ring_poll_fd(ring);
	T_ASSERT(pfd >= 0);
	T_EQ_INT(0, brt_obj_from_fd(ring, BRT_OBJ_PERF_RING, &obj));
	brt_perf_out_walker(obj, &w);
	T_EQ_INT(0, pthread_create(&t, NULL, producer, NULL));
	while (got < SAMPLES) {
		if (!readable(pfd, 2000)) {
			/* nothing woke us for 2 s: fine only if there is nothing to read */
			if (unread(&w))
				lost_wakeups++;
			else
				printf("# poll slept 2 s with nothing to read after %ld samples\n", got);
			break;
		}
		brt_perf_out_drain(obj);
		brt_perf_walk(&w, count_sample, &got);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	T_EQ_INT(0, lost_wakeups);
	T_EQ_INT(SAMPLES, got);
	free(w.bounce);
	brt_obj_put(obj);
	close(pfd);
	close(ring);
}

/* A child that becomes the ring's consumer and leaves without reading; with a sample
 * written first (sample_first), a wake-up byte is left in its pipe. */
static void dead_consumer(int ring, int sample_first)
{
	int ready[2], status;
	uint64_t v = 7;
	pid_t pid;
	char c;

	T_ASSERT(!pipe(ready));
	pid = fork();
	if (pid == 0) {
		int pfd = bpfrt_perf_ring_poll_fd(ring);

		if (pfd < 0 || write(ready[1], "r", 1) != 1)
			_exit(2);
		if (sample_first && !readable(pfd, 20000))
			_exit(3);
		_exit(0); /* no cleanup: its pid and pipe stay published */
	}
	T_ASSERT(pid > 0);
	T_EQ_INT(1, read(ready[0], &c, 1));
	if (sample_first)
		T_EQ_INT(0, brt_perf_out_write(obj, 0, &v, 8, NULL, 0));
	T_EQ_INT(pid, waitpid(pid, &status, 0));
	T_ASSERT(WIFEXITED(status));
	T_EQ_INT(0, WEXITSTATUS(status));
	/* its pipe is gone: this wake-up reaches nobody */
	T_EQ_INT(0, brt_perf_out_write(obj, 0, &v, 8, NULL, 0));
	close(ready[0]);
	close(ready[1]);
}

static void test_next_consumer(int sample_first)
{
	int ring = bpfrt_perf_ring_create(-1, 1, NULL), ready[2], status;
	uint64_t v = 9;
	pid_t pid;
	char c;

	T_CASE(sample_first ? "a byte left in a dead consumer's pipe: the next one is woken" :
			      "an undeliverable wake-up: the next consumer is woken");
	T_ASSERT(ring >= 0);
	T_EQ_INT(0, brt_obj_from_fd(ring, BRT_OBJ_PERF_RING, &obj));
	dead_consumer(ring, sample_first);
	T_ASSERT(!pipe(ready));
	pid = fork();
	if (pid == 0) {
		int pfd = bpfrt_perf_ring_poll_fd(ring);
		struct brt_perf_walk w = { 0 };
		long n = 0;

		if (pfd < 0 || write(ready[1], "r", 1) != 1)
			_exit(2);
		brt_perf_out_walker(obj, &w);
		/* the earlier samples are unread: announced at once; then the new one */
		while (n < 2 + sample_first) {
			if (!readable(pfd, 10000))
				_exit(3);
			brt_perf_out_drain(obj);
			brt_perf_walk(&w, count_sample, &n);
		}
		_exit(n == 2 + sample_first ? 0 : 4);
	}
	T_ASSERT(pid > 0);
	T_EQ_INT(1, read(ready[0], &c, 1));
	T_EQ_INT(0, brt_perf_out_write(obj, 0, &v, 8, NULL, 0));
	T_EQ_INT(pid, waitpid(pid, &status, 0));
	T_ASSERT(WIFEXITED(status));
	T_EQ_INT(0, WEXITSTATUS(status));
	brt_obj_put(obj);
	close(ready[0]);
	close(ready[1]);
	close(ring);
}

int main(void)
{
	test_race();
	test_next_consumer(0);
	test_next_consumer(1);
	return t_done();
}
