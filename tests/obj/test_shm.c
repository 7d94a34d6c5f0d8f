/* test_shm.c - the process-shared lock of src/obj/shm.c: exclusion between threads and
 * processes, and recovery: a lock whose owner (thread or process) died holding it, or
 * whose word another process scribbled on, is taken over by the next locker instead of
 * blocking it for ever.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "maps/maps.h"

#define THREADS 4
#define ITERS 200000

struct shared {
	_Atomic uint32_t lock;
	uint64_t counter; /* plain: only ever changed under the lock */
};

static struct shared *sh;

static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		brt_shm_lock(&sh->lock);
		sh->counter++;
		brt_shm_unlock(&sh->lock);
	}
	return NULL;
}

static void *die_holding(void *arg)
{
	(void)arg;
	brt_shm_lock(&sh->lock);
	return NULL; /* the thread exits with the lock held */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Take the lock in a child within 5 s: 0 when it could. */
static int lock_in_child(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		alarm(5);
		brt_shm_lock(&sh->lock);
		brt_shm_unlock(&sh->lock);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(void)
{
	pthread_t t[THREADS];
	pid_t pids[2];
	double t0;
	int st;

	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(sh != MAP_FAILED);

	T_CASE("threads and processes exclude each other");
	for (int p = 0; p < 2; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			adder(NULL);
			_exit(0);
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, adder, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int p = 0; p < 2; p++) {
		waitpid(pids[p], &st, 0);
		T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	T_EQ_U64((uint64_t)(THREADS + 2) * ITERS, sh->counter);
	T_EQ_INT(0, (int)atomic_load(&sh->lock));

	T_CASE("a thread that exited holding the lock");
	pthread_create(&t[0], NULL, die_holding, NULL);
	pthread_join(t[0], NULL);
	T_ASSERT(atomic_load(&sh->lock) != 0);
	t0 = now_s();
	brt_shm_lock(&sh->lock);
	brt_shm_unlock(&sh->lock);
	T_ASSERT(now_s() - t0 < 2);

	T_CASE("a process killed holding the lock");
	pids[0] = fork();
	if (pids[0] == 0) {
		brt_shm_lock(&sh->lock);
		pause();
		_exit(0);
	}
	while (!atomic_load(&sh->lock))
		usleep(1000);
	kill(pids[0], SIGKILL);
	waitpid(pids[0], &st, 0);
	T_EQ_INT(0, lock_in_child());
	T_EQ_INT(0, lock_in_child()); /* and it was released properly */

	T_CASE("a process killed holding the lock, not reaped yet (a zombie)");
	pids[0] = fork();
	if (pids[0] == 0) {
		brt_shm_lock(&sh->lock);
		pause();
		_exit(0);
	}
	while (!atomic_load(&sh->lock))
		usleep(1000);
	kill(pids[0], SIGKILL);
	{
		/* wait until it is a zombie, without reaping it: kill(pid, 0) still succeeds */
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		T_EQ_INT(0, waitid(P_PID, (id_t)pids[0], &si, WEXITED | WNOWAIT));
		T_EQ_INT(0, kill(pids[0], 0));
	}
	T_EQ_INT(0, lock_in_child());
	T_EQ_INT(0, lock_in_child());
	waitpid(pids[0], &st, 0);

	T_CASE("a live owner is waited for");
	pids[0] = fork();
	if (pids[0] == 0) {
		brt_shm_lock(&sh->lock);
		usleep(300000);
		sh->counter = 1;
		brt_shm_unlock(&sh->lock);
		_exit(0);
	}
	while (!atomic_load(&sh->lock))
		usleep(1000);
	sh->counter = 0;
	brt_shm_lock(&sh->lock);
	T_EQ_U64(1, sh->counter);
	brt_shm_unlock(&sh->lock);
	waitpid(pids[0], &st, 0);

	{
		static const uint32_t words[] = { 1, 2, 3, 0xffffffff, 0x7fffffff, 0x80000001,
						  0x12345678 };

		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			T_CASE("a scribbled lock word");
			atomic_store(&sh->lock, words[i]);
			T_EQ_INT(0, lock_in_child());
		}
	}
	return t_done();
}
