/* shm.c - the two primitives every map builds on: a process-shared lock (a futex word in
 * the shared mapping, so threads of other processes wait on the same word) and word-wise
 * atomic copies between shared values and process memory.  Why these and not pthread
 * mutexes: docs/MEMORY_MODEL.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "obj/obj.h"
#include "util/util.h"

/* Lock word: 0 free; held: the owner's thread id (bits 0-21: Linux's pid_max is at most
 * 2^22) with a 9-bit check of it (bits 22-30), so that a word another process scribbled
 * on is recognised as no owner's; bit 31: waiters may sleep on the word.  A waiter that
 * has slept LOCK_CHECK_NS asks whether the owner still exists (kill(tid, 0), and not a
 * zombie: /proc/<tid>/stat) and takes a dead owner's lock over, so a process killed inside a map operation leaves no map locked
 * for good (docs/MEMORY_MODEL.md, "Locks"). */
#define LOCK_TID 0x3fffffu
#define LOCK_WAITERS 0x80000000u
#define LOCK_CHECK_NS 20000000L

static uint32_t check_of(uint32_t tid)
{
	return ((tid * 0x9e3779b1u) >> 23) & 0x1ff;
}

static int word_valid(uint32_t w)
{
	uint32_t tid = w & LOCK_TID;

	return tid && ((w >> 22) & 0x1ff) == check_of(tid);
}

/* This thread's lock word, cached; a forked child's thread has another id. */
static _Thread_local uint32_t self;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void forget_self(void)
{
	self = 0;
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_self);
}

static uint32_t self_word(void)
{
	uint32_t tid;

	if (self)
		return self;
	pthread_once(&atfork_once, register_atfork);
	tid = (uint32_t)syscall(SYS_gettid) & LOCK_TID;
	self = tid | check_of(tid) << 22;
	return self;
}

/* Returns -1 with errno ETIMEDOUT when the timeout passed. */
static long futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *timeout)
{
	/* Not FUTEX_PRIVATE_FLAG: the word lives in a MAP_SHARED mapping other processes
	 * wait on too. */
	return syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAIT, val, timeout, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* A thread that has exited but whose process its parent has not reaped yet (a zombie,
 * state Z, or X while being reaped) still answers kill(tid, 0), yet it will never
 * unlock: ask /proc for its state.  Without /proc, or for a thread /proc cannot show,
 * the answer is "alive" (kill() said so). */
static int zombie(pid_t tid)
{
	char path[40], buf[512], *close_paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if (brt_fs_read_text(path, buf, sizeof(buf)) < 0)
		return 0;
	/* "tid (comm) S ...": comm may hold spaces and parentheses, the last ')' ends it */
	close_paren = strrchr(buf, ')');
	if (!close_paren || close_paren[1] != ' ')
		return 0;
	return close_paren[2] == 'Z' || close_paren[2] == 'X' || close_paren[2] == 'x';
}

/* Is the thread named by a held lock word gone?  ESRCH, or a zombie; EPERM means it
 * exists (in another user's process). */
static int owner_gone(uint32_t w)
{
	pid_t tid = (pid_t)(w & LOCK_TID);

	if (kill(tid, 0))
		return errno == ESRCH;
	return zombie(tid);
}

uint32_t brt_shm_self(void)
{
	return self_word();
}

int brt_shm_owner_dead(uint32_t word)
{
	int saved = errno, dead;

	word &= ~LOCK_WAITERS;
	if (!word)
		return 0;
	if (!word_valid(word))
		return 1;
	dead = owner_gone(word);
	errno = saved;
	return dead;
}

static int take(_Atomic uint32_t *lock, uint32_t *c, uint32_t to)
{
	return atomic_compare_exchange_strong_explicit(lock, c, to, memory_order_acquire,
						       memory_order_relaxed);
}

/* Returns 1 when the lock was taken over (see brt_shm_lock()). */
static int lock_slow(_Atomic uint32_t *lock, uint32_t me)
{
	const struct timespec check = { 0, LOCK_CHECK_NS };
	uint32_t c = atomic_load_explicit(lock, memory_order_relaxed);

	for (;;) {
		/* after waiting, take it with the waiters bit: others may still sleep */
		if (!c) {
			if (take(lock, &c, me | LOCK_WAITERS))
				return 0;
			continue;
		}
		/* not an owner's word (scribbled on), or our own id left by a dead thread
		 * whose id we now have: nobody will release it */
		if (!word_valid(c) || (c & LOCK_TID) == (me & LOCK_TID)) {
			if (take(lock, &c, me | LOCK_WAITERS))
				return 1;
			continue;
		}
		if (!(c & LOCK_WAITERS)) {
			uint32_t w = c | LOCK_WAITERS;

			if (!atomic_compare_exchange_strong_explicit(lock, &c, w,
								     memory_order_relaxed,
								     memory_order_relaxed))
				continue;
			c = w;
		}
		if (futex_wait(lock, c, &check) && errno == ETIMEDOUT && owner_gone(c) &&
		    take(lock, &c, me | LOCK_WAITERS))
			return 1; /* the owner died holding it */
		c = atomic_load_explicit(lock, memory_order_relaxed);
	}
}

int brt_shm_lock(_Atomic uint32_t *lock)
{
	uint32_t me = self_word(), c = 0;

	if (take(lock, &c, me))
		return 0;
	for (int spin = 0; spin < 64; spin++) {
		c = 0;
		if (atomic_compare_exchange_weak_explicit(lock, &c, me, memory_order_acquire,
							  memory_order_relaxed))
			return 0;
	}
	return lock_slow(lock, me);
}

int brt_shm_lock_reclaim(_Atomic uint32_t *lock)
{
	uint32_t c = atomic_load_explicit(lock, memory_order_relaxed);

	/* keep the waiters bit: threads may sleep on the word */
	return c && brt_shm_owner_dead(c) && take(lock, &c, self_word() | LOCK_WAITERS);
}

/* Release only a lock this thread holds: a word that names another thread means ours
 * was taken over (we were thought dead), and that owner keeps it. */
void brt_shm_unlock(_Atomic uint32_t *lock)
{
	uint32_t me = self_word(), c = me;

	if (atomic_compare_exchange_strong_explicit(lock, &c, 0, memory_order_release,
						    memory_order_relaxed))
		return;
	if (c == (me | LOCK_WAITERS) &&
	    atomic_compare_exchange_strong_explicit(lock, &c, 0, memory_order_release,
						    memory_order_relaxed))
		futex_wake(lock);
}

void brt_shm_read(void *dst, const void *shm, size_t n)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)(uintptr_t)shm;
	unsigned char *d = dst;
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		v = atomic_load_explicit(w++, memory_order_acquire);
		memcpy(d + i, &v, 8);
	}
	if (i < n) {
		v = atomic_load_explicit(w, memory_order_acquire);
		memcpy(d + i, &v, n - i);
	}
}

void brt_shm_write(void *shm, const void *src, size_t n)
{
	_Atomic uint64_t *w = shm;
	const unsigned char *s = src;
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		atomic_store_explicit(w++, v, memory_order_release);
	}
	if (i < n) {
		v = 0;
		memcpy(&v, s + i, n - i);
		atomic_store_explicit(w, v, memory_order_release);
	}
}

void brt_shm_zero(void *shm, size_t n)
{
	_Atomic uint64_t *w = shm;

	for (size_t i = 0; i < n; i += 8)
		atomic_store_explicit(w++, 0, memory_order_release);
}

static long possible_cpus(void)
{
	char buf[256], *p = buf, *end;
	long max = -1, v;
	ssize_t len;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	while (*p) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > max)
			max = v;
		p = end;
		while (*p == '-' || *p == ',' || *p == '\n')
			p++;
	}
	return max + 1;
}

int brt_cpu_online(uint32_t cpu)
{
	char buf[4096], *p = buf, *end;
	unsigned long lo, hi;

	if (brt_fs_read_text("/sys/devices/system/cpu/online", buf, sizeof(buf)) < 0)
		return 1;
	/* "0-3,5,7-9\n" */
	while (*p >= '0' && *p <= '9') {
		lo = hi = strtoul(p, &end, 10);
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (cpu >= lo && cpu <= hi)
			return 1;
		if (*p == ',')
			p++;
	}
	return 0;
}

uint32_t brt_ncpus(void)
{
	static _Atomic uint32_t cached;
	uint32_t n = atomic_load_explicit(&cached, memory_order_relaxed);
	long conf;

	if (n)
		return n;
	/* The kernel sizes per-CPU values by possible CPUs ("0-1", "0,2-5"): the highest
	 * number plus one, as libbpf counts them. */
	conf = possible_cpus();
	if (conf <= 0)
		conf = sysconf(_SC_NPROCESSORS_CONF);
	n = conf > 0 && conf < 8192 ? (uint32_t)conf : 1;
	atomic_store_explicit(&cached, n, memory_order_relaxed);
	return n;
}

uint32_t brt_cpu(void)
{
	int cpu = brt_cpu_now();

	return cpu < 0 ? 0 : (uint32_t)cpu % brt_ncpus();
}
