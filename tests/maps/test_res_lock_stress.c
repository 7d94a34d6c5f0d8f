/* test_res_lock_stress.c - the resilient spin lock's run time (src/maps/res_lock.c) alone:
 * its answers (AA: -EDEADLK; a live holder in another process: -ETIMEDOUT after a quarter
 * of a second, RES_DEF_TIMEOUT; ABBA between two threads: -EDEADLK, never a hang), a holder
 * killed with the lock held (taken over at once), ABBA between two processes (-EDEADLK
 * through the registry of waiting threads, well before the timeout), a run that ended
 * holding a lock (the thread's next run releases it), more nested locks than the held
 * table keeps, and
 * threads incrementing a shared counter under one lock (exact; TSan checks the
 * exclusion in the tsan build).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "maps/maps.h"
#include "obj/obj.h"
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

/* ABBA between two processes: each takes its first lock, tells the other, waits for the
 * other's word, then takes the other's lock.  The registry of waiting threads
 * ($BPFRT_FS/.bpfrt-reslock.<uid>) lets the waiters see the cycle: -EDEADLK within
 * milliseconds, where before only the 250 ms timeout answered. */
static int abba_side(int first, int second, int tell, int hear, long long *ms)
{
	struct bpfrt_run_ctx ctx;
	long long t0;
	char c = 'x';
	int err;

	new_run(&ctx);
	if (brt_res_lock(W(first), &ctx))
		return -1000;
	if (write(tell, &c, 1) != 1 || (hear >= 0 && read(hear, &c, 1) != 1))
		return -1001;
	t0 = now_ms();
	err = brt_res_lock(W(second), &ctx);
	*ms = now_ms() - t0;
	if (!err)
		brt_res_unlock(W(second), &ctx);
	brt_res_unlock(W(first), &ctx);
	return err;
}

/* registry faults the children of abba_processes() counted: a fork's counter is its own,
 * and which side's wait reaches a truncated registry first is a race */
static unsigned child_faults;

static void abba_processes(const char *what, int want_deadlocks)
{
	int deadlocks = 0, timeouts = 0, others = 0;
	long long worst = 0;

	T_CASE(what);
	/* the child tells when it holds word 6, then waits until the parent holds 7 */
	for (int r = 0; r < 5; r++) {
		int a[2], b[2], status, res[2] = { 0, 0 };
		long long ms[2] = { 0, 0 };
		pid_t pid;
		unsigned base = brt_res_lock_registry_faults(), f = base;

		if (pipe(a) || pipe(b)) {
			T_FAIL("pipe: %s", strerror(errno));
			return;
		}
		pid = fork();
		if (pid == 0) {
			int err = abba_side(6, 7, a[1], b[0], &ms[1]);

			f = brt_res_lock_registry_faults();
			/* the answer, how long it took and the faults, to the parent */
			if (write(a[1], &err, sizeof(err)) != sizeof(err) ||
			    write(a[1], &ms[1], sizeof(ms[1])) != sizeof(ms[1]) ||
			    write(a[1], &f, sizeof(f)) != sizeof(f))
				_exit(1);
			_exit(0);
		}
		{
			/* the parent's first lock only after the child holds its own */
			char c;

			if (read(a[0], &c, 1) != 1)
				T_FAIL("the child did not take its lock");
		}
		res[0] = abba_side(7, 6, b[1], -1, &ms[0]);
		if (read(a[0], &res[1], sizeof(res[1])) != sizeof(res[1]) ||
		    read(a[0], &ms[1], sizeof(ms[1])) != sizeof(ms[1]) ||
		    read(a[0], &f, sizeof(f)) != sizeof(f))
			T_FAIL("no answer from the child");
		child_faults += f - base;
		waitpid(pid, &status, 0);
		for (int i = 0; i < 4; i++)
			close(i < 2 ? a[i] : b[i - 2]);
		for (int i = 0; i < 2; i++) {
			deadlocks += res[i] == -EDEADLK;
			timeouts += res[i] == -ETIMEDOUT;
			others += res[i] && res[i] != -EDEADLK && res[i] != -ETIMEDOUT;
			worst = ms[i] > worst ? ms[i] : worst;
		}
	}
	printf("%s: %d of 10 waits -EDEADLK, %d -ETIMEDOUT, the longest wait %lld ms\n", what,
	       deadlocks, timeouts, worst);
	T_EQ_INT(others, 0);
	if (want_deadlocks) {
		T_EQ_INT(timeouts, 0);
		if (deadlocks < 5)
			T_FAIL("%d ABBA deadlocks detected in 5 rounds", deadlocks);
		if (worst > 200)
			T_FAIL("an ABBA wait took %lld ms", worst);
	} else if (worst > 1000) {
		T_FAIL("a wait took %lld ms", worst);
	}
	T_EQ_INT((int)sh->word[6], 0);
	T_EQ_INT((int)sh->word[7], 0);
}

/* The registry is any of the user's processes' to write: scribbled over (every byte
 * 0xff, then random bytes, then slots that all name one live thread with huge counts),
 * waits still end with an answer of the lock's (0, -EDEADLK or -ETIMEDOUT) in bounded
 * time, and nothing crashes. */
static void scribbled_registry(const char *dir)
{
	char path[128];
	unsigned char *m;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/.bpfrt-reslock.%u", dir, (unsigned)geteuid());
	fd = open(path, O_RDWR);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		T_FAIL("no registry at %s", path);
		return;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	memset(m, 0xff, (size_t)st.st_size);
	abba_processes("ABBA between processes, registry all 0xff", 0);
	srand(14);
	for (off_t i = 0; i < st.st_size; i++)
		m[i] = (unsigned char)rand();
	abba_processes("ABBA between processes, registry random", 0);
	for (off_t i = 0; i + 16 <= st.st_size; i += 16) {
		uint32_t w[4] = { brt_shm_self(), 0, 0xffffffffu, 31 };

		memcpy(m + i, w, sizeof(w));
	}
	abba_processes("ABBA between processes, registry naming this thread", 0);
	munmap(m, (size_t)st.st_size);
}

/* Any of the user's processes may also truncate the registry under the mappings of the
 * others (a mapped file's pages past its end raise SIGBUS): truncated to nothing while
 * no one waits, the next waits fault, grow it back and still find the cycle; truncated
 * and rewritten over and over by another process while waits run, every wait still ends
 * with an answer, and nothing dies of SIGBUS (a child's death shows as a missing answer,
 * the parent's as the test's). */
static void truncated_registry(const char *dir)
{
	char path[128];
	unsigned before;
	struct stat st;
	off_t size;
	pid_t pid;
	int fd, status;

	T_CASE("registry truncated to nothing between waits");
	snprintf(path, sizeof(path), "%s/.bpfrt-reslock.%u", dir, (unsigned)geteuid());
	fd = open(path, O_RDWR);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		T_FAIL("no registry at %s", path);
		if (fd >= 0)
			close(fd);
		return;
	}
	size = st.st_size;
	/* zero it first: the scribbles of the case before would leave stale slots */
	T_EQ_INT(ftruncate(fd, 0), 0);
	before = brt_res_lock_registry_faults();
	child_faults = 0;
	abba_processes("ABBA between processes, registry truncated before", 1);
	/* the first wait of either side meets the truncated file (session 16's CI: the
	 * child's did, and this process's never faulted) */
	if (brt_res_lock_registry_faults() == before && !child_faults)
		T_FAIL("no access of either process faulted on the truncated registry");
	if (fstat(fd, &st) || st.st_size != size)
		T_FAIL("the registry was not grown back to %lld bytes", (long long)size);
	printf("the registry after the waits: %lld bytes, faults: this process %u, its children %u\n",
	       (long long)st.st_size, brt_res_lock_registry_faults() - before, child_faults);

	T_CASE("registry truncated and rewritten while waits run");
	pid = fork();
	if (pid == 0) {
		unsigned char junk[4096];

		srand(15);
		/* until killed: nothing, a few bytes, random bytes of random length */
		for (unsigned i = 0;; i++) {
			size_t n = (size_t)rand() % sizeof(junk);

			if (ftruncate(fd, 0))
				_exit(2);
			for (size_t j = 0; j < n; j++)
				junk[j] = (unsigned char)rand();
			if (i % 2 && pwrite(fd, junk, n, 0) < 0)
				_exit(3);
			if (i % 3 == 0 && ftruncate(fd, size))
				_exit(4);
			sched_yield();
		}
	}
	before = brt_res_lock_registry_faults();
	abba_processes("ABBA between processes, registry truncated meanwhile", 0);
	abba_processes("ABBA between processes, registry truncated meanwhile (again)", 0);
	printf("this process's faults meanwhile: %u\n", brt_res_lock_registry_faults() - before);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	T_EQ_INT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, 1);
	T_EQ_INT(ftruncate(fd, 0), 0);
	close(fd);
	abba_processes("ABBA between processes after the truncations", 1);
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
	char dir[64] = "/dev/shm/bpfrt-reslock-XXXXXX", cmd[96];
	int rc;

	/* a private objects' directory for the registry of waiting threads */
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		T_SKIP("mmap: %s", strerror(errno));
	single_thread();
	other_process();
	abba();
	abba_processes("ABBA between two processes", 1);
	scribbled_registry(dir);
	truncated_registry(dir);
	counters();
	rc = t_done();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		rc = 1;
	return rc;
}
