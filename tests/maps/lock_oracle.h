/* tests/maps/lock_oracle.h - what the two lock oracles (test_spin_lock_oracle.c,
 * test_res_lock_oracle.c) do alike on either side's bpf(): create a map whose value type
 * may hold a lock, test-run a program on a small IPv4 packet, and run one program from two
 * threads at once, which only counts exactly if the lock excludes.  Include after
 * transcript.h.
 */
#ifndef BPFRT_TESTS_MAPS_LOCK_ORACLE_H
#define BPFRT_TESTS_MAPS_LOCK_ORACLE_H

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "btf_blob.h"
#include "transcript.h"

/* btf_blob_map_kv(): the fd or -errno */
static inline int lock_map(sys_fn sys, const char *name, uint32_t type, uint32_t value_size,
			   uint32_t max, uint32_t flags, int btf_fd, uint32_t key_type,
			   uint32_t value_type)
{
	int fd = btf_blob_map_kv(sys, type, value_size, max, flags, btf_fd, key_type, value_type,
				 name);

	return fd < 0 ? -errno : fd;
}

/* BPF_PROG_TEST_RUN of fd, repeat times, on a 64-byte IPv4 frame: retval or -errno */
static inline int lock_test_run(sys_fn sys, int fd, uint32_t repeat)
{
	static unsigned char pkt[64] = { [12] = 0x08, [13] = 0x00, [14] = 0x45 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	a.test.repeat = repeat;
	return sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno : (int)a.test.retval;
}

#define LOCK_THREAD_RUNS 20000

struct lock_runner {
	sys_fn sys;
	int fd;
	int ret; /* lock_test_run()'s */
};

static inline void *lock_run_thread(void *arg)
{
	struct lock_runner *r = arg;

	r->ret = lock_test_run(r->sys, r->fd, LOCK_THREAD_RUNS);
	return NULL;
}

/* Sets value words 0-2 of key in map_fd to 0, runs prog_fd (which increments words 0 and 2
 * under the lock in word 1) from two threads at once, and says both runs' results and both
 * counters: 2 x LOCK_THREAD_RUNS each if the lock excludes. */
static inline void lock_two_threads(sys_fn sys, struct transcript *t, int prog_fd, int map_fd,
				    uint32_t key)
{
	uint32_t v[3] = { 0, 0, 0 };
	struct lock_runner r[2];
	pthread_t th[2];

	elem(sys, BPF_MAP_UPDATE_ELEM, map_fd, &key, v, 0);
	for (int i = 0; i < 2; i++) {
		r[i] = (struct lock_runner){ .sys = sys, .fd = prog_fd };
		pthread_create(&th[i], NULL, lock_run_thread, &r[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	elem(sys, BPF_MAP_LOOKUP_ELEM, map_fd, &key, v, 0);
	say(t, "two threads x %d under the lock: runs %d %d, counters %u %u\n", LOCK_THREAD_RUNS,
	    r[0].ret, r[1].ret, v[0], v[2]);
}

#endif
