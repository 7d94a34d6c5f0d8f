/* shm.c - the two primitives every map builds on: a process-shared lock (a futex word in
 * the shared mapping, so threads of other processes wait on the same word) and word-wise
 * atomic copies between shared values and process memory.  Why these and not pthread
 * mutexes: docs/MEMORY_MODEL.md.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "obj/obj.h"

/* Lock word: 0 free, 1 held, 2 held with (possible) waiters. */
static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	/* Not FUTEX_PRIVATE_FLAG: the word lives in a MAP_SHARED mapping other processes
	 * wait on too. */
	syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAIT, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (void *)(uintptr_t)word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void brt_shm_lock(_Atomic uint32_t *lock)
{
	uint32_t c = 0;

	if (atomic_compare_exchange_strong_explicit(lock, &c, 1, memory_order_acquire,
						    memory_order_relaxed))
		return;
	for (int spin = 0; spin < 64; spin++) {
		c = 0;
		if (atomic_compare_exchange_weak_explicit(lock, &c, 1, memory_order_acquire,
							  memory_order_relaxed))
			return;
	}
	/* A word that is not 0, 1 or 2 was scribbled on (the file is shared with other
	 * processes): take the lock over rather than wait for an owner that never was. */
	if (c > 2 && atomic_compare_exchange_strong_explicit(lock, &c, 1, memory_order_acquire,
							     memory_order_relaxed))
		return;
	c = atomic_exchange_explicit(lock, 2, memory_order_acquire);
	while (c == 1 || c == 2) {
		futex_wait(lock, 2);
		c = atomic_exchange_explicit(lock, 2, memory_order_acquire);
	}
}

void brt_shm_unlock(_Atomic uint32_t *lock)
{
	if (atomic_exchange_explicit(lock, 0, memory_order_release) == 2)
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
	int cpu = sched_getcpu();

	return cpu < 0 ? 0 : (uint32_t)cpu % brt_ncpus();
}
