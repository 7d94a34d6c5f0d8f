/* test_res_lock_stress.c - the resilient spin lock's run time (src/maps/res_lock.c) alone:
 * its answers (AA: -EDEADLK; a live holder in another process: -ETIMEDOUT after a quarter
 * of a second, RES_DEF_TIMEOUT; ABBA between two threads: -EDEADLK, never a hang), a holder
 * killed with the lock held (taken over at once), a run that ended holding a lock (the
 * thread's next run releases it), more nested locks than the held table keeps, and
 * threads incrementing a shared counter under one lock (exact; TSan checks the
 * exclusion in the tsan build).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "maps/maps.h"
#include "vm/vm.h"

/* shared with children: lock words and a counter */
struct shared {
	_Alignas(8) uint32_t word[48]; /* the locks' words: only res_lock.c writes them */
	uint64_t counter;
};

static struct shared *sh;
#define W(i) ((void *)&sh->word[i])

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* a fresh run context (what the engines give each run) */
static void new_run(struct bpfrt_run_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
}

static void single_thread(void)
{
	struct bpfrt_run_ctx ctx, ctx2;

	T_CASE("AA and nesting");
	new_run(&ctx);
	T_EQ_INT(brt_res_lock(W(0), &ctx), 0);
	T_EQ_INT(brt_res_lock(W(0), &ctx), -EDEADLK);
	T_EQ_INT(brt_res_lock(W(1), &ctx), 0);
	brt_res_unlock(W(1), &ctx);
	brt_res_unlock(W(0), &ctx);
	T_EQ_INT((int)sh->word[0], 0);

	T_CASE("more locks than the held table keeps");
	for (int i = 0; i < 40; i++)
		T_EQ_INT(brt_res_lock(W(i), &ctx), 0);
	for (int i = 39; i >= 0; i--)
		brt_res_unlock(W(i), &ctx);
	for (int i = 0; i < 40; i++)
		T_EQ_INT((int)sh->word[i], 0);
	T_EQ_INT(brt_res_lock(W(0), &ctx), 0);
	T_EQ_INT(brt_res_lock(W(0), &ctx), -EDEADLK);
	brt_res_unlock(W(0), &ctx);

	T_CASE("a run that ended holding a lock");
	T_EQ_INT(brt_res_lock(W(2), &ctx), 0);
	new_run(&ctx2);
	T_EQ_INT(brt_res_lock(W(2), &ctx2), 0);
	brt_res_unlock(W(2), &ctx2);
	T_EQ_INT((int)sh->word[2], 0);
}

/* another process takes word[3] and keeps it (stopped in pause()), then is killed */
static void other_process(void)
{
	struct bpfrt_run_ctx ctx;
	long long t0, dt;
	int p[2], status;
	pid_t pid;
	char c;

	T_CASE("a live holder in another process, then killed");
	if (pipe(p))
		T_FAIL("pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		new_run(&ctx);
		c = (char)('0' - brt_res_lock(W(3), &ctx));
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	T_EQ_INT(read(p[0], &c, 1), 1);
	T_EQ_INT(c, '0');
	new_run(&ctx);
	t0 = now_ms();
	T_EQ_INT(brt_res_lock(W(3), &ctx), -ETIMEDOUT);
	dt = now_ms() - t0;
	if (dt < 240 || dt > 3000)
		T_FAIL("timed out after %lld ms, expected about 250", dt);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t0 = now_ms();
	T_EQ_INT(brt_res_lock(W(3), &ctx), 0);
	dt = now_ms() - t0;
	if (dt > 200)
		T_FAIL("a dead holder's lock took %lld ms to take over", dt);
	brt_res_unlock(W(3), &ctx);
	close(p[0]);
	close(p[1]);
}

/* ABBA: each thread takes its first lock, waits for the other, then takes the other's */
struct abba {
	pthread_barrier_t *bar;
	int first, second;
	int err;
};

static void *abba_thread(void *arg)
{
	struct abba *a = arg;
	struct bpfrt_run_ctx ctx;

	new_run(&ctx);
	if (brt_res_lock(W(a->first), &ctx)) {
		a->err = -1;
		return NULL;
	}
	pthread_barrier_wait(a->bar);
	a->err = brt_res_lock(W(a->second), &ctx);
	if (!a->err)
		brt_res_unlock(W(a->second), &ctx);
	brt_res_unlock(W(a->first), &ctx);
	return NULL;
}

static void abba(void)
{
	int deadlocks = 0, timeouts = 0, others = 0;
	long long t0 = now_ms();

	T_CASE("ABBA between two threads");
	for (int r = 0; r < 20; r++) {
		pthread_barrier_t bar;
		struct abba a[2] = { { &bar, 4, 5, 0 }, { &bar, 5, 4, 0 } };
		pthread_t th[2];

		pthread_barrier_init(&bar, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, abba_thread, &a[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&bar);
		for (int i = 0; i < 2; i++) {
			deadlocks += a[i].err == -EDEADLK;
			timeouts += a[i].err == -ETIMEDOUT;
			others += a[i].err && a[i].err != -EDEADLK && a[i].err != -ETIMEDOUT;
		}
	}
	/* each round deadlocks unless one thread got both before the other took its first */
	T_EQ_INT(timeouts, 0);
	T_EQ_INT(others, 0);
	if (!deadlocks)
		T_FAIL("no ABBA deadlock detected in 20 rounds");
	if (now_ms() - t0 > 3000)
		T_FAIL("20 ABBA rounds took %lld ms", now_ms() - t0);
	T_EQ_INT((int)sh->word[4], 0);
	T_EQ_INT((int)sh->word[5], 0);
}

#define THREADS 4
#define ROUNDS 50000

static void *count_thread(void *arg)
{
	struct bpfrt_run_ctx ctx;
	int *fails = arg;

	for (int i = 0; i < ROUNDS; i++) {
		new_run(&ctx);
		if (brt_res_lock(W(6), &ctx)) {
			(*fails)++;
			continue;
		}
		sh->counter++;
		brt_res_unlock(W(6), &ctx);
	}
	return NULL;
}

static void counters(void)
{
	pthread_t th[THREADS];
	int fails[THREADS] = { 0 };
	int total = 0;

	T_CASE("threads counting under one lock");
	sh->counter = 0;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, count_thread, &fails[i]);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		total += fails[i];
	}
	T_EQ_INT(total, 0);
	T_EQ_U64(sh->counter, (uint64_t)THREADS * ROUNDS);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		T_SKIP("mmap: %s", strerror(errno));
	single_thread();
	other_process();
	abba();
	counters();
	return t_done();
}
