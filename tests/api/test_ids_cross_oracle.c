/* test_ids_cross_oracle.c - BPF_{PROG,MAP}_GET_FD_BY_ID and GET_NEXT_ID across processes, against
 * the kernel: process A creates objects and closes them, process B looked each of them
 * up by id (so its object cache maps them all) and then sits idle, and a third process
 * asks for them by id right after A's last reference is gone.  The kernel frees an
 * object with its last reference (fd, a program's use of a map, a mapping, a link) and
 * its id answers ENOENT at once; bpfrt's objects are files every process's cache maps
 * until that process sweeps, so the walk (api/ids.c) must tell the caches' mappings
 * from holders by the reference tables the processes publish (obj/pub.c).  The same
 * steps run through syscall(__NR_bpf) and bpfrt_bpf(); every answer is compared, with
 * no polling: the kernel's ids go synchronously for all of these.  Needs root and the
 * kernel (skipped otherwise).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "diff.h"
#include "harness.h"
#include "xproc.h"

/* map held by P, P, lone map, lone prog, ring buffer, mmapped array, prog array, program
 * held by PA's slot 0 */
enum { M, P, M2, P2, R, X, PA, Q, NOBJ };

static int cmd_of(int obj)
{
	return obj == P || obj == P2 || obj == Q ? BPF_PROG_GET_FD_BY_ID : BPF_MAP_GET_FD_BY_ID;
}

/* GET_FD_BY_ID: the fd (keep) or -errno */
static int open_id(sys_fn sys, int obj, uint32_t id)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	if (cmd_of(obj) == BPF_PROG_GET_FD_BY_ID)
		a.prog_id = id;
	else
		a.map_id = id;
	fd = sys(cmd_of(obj), &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* 1 when found (the fd closed at once), else -errno */
static int by_id(sys_fn sys, int obj, uint32_t id)
{
	int fd = open_id(sys, obj, id);

	if (fd < 0)
		return fd;
	close(fd);
	return 1;
}

/* Is id listed by GET_NEXT_ID? */
static int listed(sys_fn sys, int obj, uint32_t id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.start_id = id - 1;
	return !sys(cmd_of(obj) == BPF_PROG_GET_FD_BY_ID ? BPF_PROG_GET_NEXT_ID :
							 BPF_MAP_GET_NEXT_ID,
		    &a, sizeof(a)) &&
	       a.next_id == id;
}

/* Process A: creates the objects, sends their ids, then on each byte from the checker
 * does the next step: 'c' closes every fd (X stays mapped), 'u' unmaps X, 'q' exits. */
static void proc_a(sys_fn sys, int in, int out)
{
	uint32_t ids[NOBJ];
	int fd[NOBJ];
	void *mem = MAP_FAILED;
	char c;

	fd[M] = diff_map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0);
	fd[P] = diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, fd[M]);
	fd[M2] = diff_map_new(sys, BPF_MAP_TYPE_HASH, 4, 8, 4, 0);
	fd[P2] = diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, -1);
	fd[R] = diff_map_new(sys, BPF_MAP_TYPE_RINGBUF, 0, 0, 4096, 0);
	fd[X] = diff_map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_MMAPABLE);
	fd[PA] = diff_map_new(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, 0);
	fd[Q] = diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, -1);
	for (int i = 0; i < NOBJ; i++)
		ids[i] = fd[i] >= 0 ? diff_id_of(sys, fd[i]) : 0;
	{
		union bpf_attr a;
		uint32_t slot = 0;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd[PA];
		a.key = (uint64_t)(uintptr_t)&slot;
		a.value = (uint64_t)(uintptr_t)&fd[Q];
		if (sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
			ids[Q] = 0;
	}
	if (fd[X] >= 0)
		mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd[X], 0);
	if (mem == MAP_FAILED)
		ids[X] = 0;
	close(fd[M]); /* P holds it */
	close(fd[Q]); /* PA's slot holds it */
	fd[Q] = -1;
	put(out, ids, sizeof(ids));
	for (;;) {
		get(in, &c, 1);
		if (c == 'c') {
			for (int i = P; i < NOBJ; i++)
				if (fd[i] >= 0)
					close(fd[i]);
		} else if (c == 'u') {
			munmap(mem, 4096);
		} else {
			_exit(0);
		}
		put(out, &c, 1);
	}
}

/* Process B: looks every id up and asks for its info (so its cache has each object),
 * closes them all but P, answers whether it found each, then idles: 'p' closes P,
 * 'l' looks every id up again and answers, 'q' exits. */
static void proc_b(sys_fn sys, const uint32_t *ids, int in, int out)
{
	int res[NOBJ], pfd = -1;
	char c;

	for (int i = 0; i < NOBJ; i++) {
		int fd = open_id(sys, i, ids[i]);

		res[i] = fd >= 0 && diff_id_of(sys, fd) == ids[i] ? 1 : fd < 0 ? fd : 0;
		if (i == P)
			pfd = fd;
		else if (fd >= 0)
			close(fd);
	}
	put(out, res, sizeof(res));
	for (;;) {
		get(in, &c, 1);
		if (c == 'p') {
			close(pfd);
			put(out, &c, 1);
		} else if (c == 'l') {
			for (int i = 0; i < NOBJ; i++)
				res[i] = by_id(sys, i, ids[i]);
			put(out, res, sizeof(res));
		} else {
			_exit(0);
		}
	}
}

/* The checker's steps; each answer into out[]. */
static int steps(sys_fn sys, int *out)
{
	int n = 0, a_to, a_from, b_to, b_from, res[NOBJ], pre;
	uint32_t ids[NOBJ], pre_id;
	pid_t a, b;

	/* the checker has a cache (and a reference table) of its own before it forks:
	 * each child must count on its own counters */
	pre = diff_map_new(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
	pre_id = pre >= 0 ? diff_id_of(sys, pre) : 0;
	a = spawn(&a_to, &a_from);
	if (a == 0)
		proc_a(sys, a_to, a_from);
	get(a_from, ids, sizeof(ids));
	for (int i = 0; i < NOBJ; i++)
		out[n++] = ids[i] != 0;
	b = spawn(&b_to, &b_from);
	if (b == 0)
		proc_b(sys, ids, b_to, b_from);
	get(b_from, res, sizeof(res));
	for (int i = 0; i < NOBJ; i++)
		out[n++] = res[i];
	/* every object has a holder: A's fds (M: A's program), B's fd of P */
	for (int i = 0; i < NOBJ; i++)
		out[n++] = by_id(sys, i, ids[i]);
	/* A closes every fd: M (P still held by B), P (B), X (mapped) stay.  PA is only
	 * looked for in the list: the kernel clears a closed prog array's slots on a work
	 * queue holding the array, and an fd of it closed while that work is pending
	 * schedules it again (so a probe by fd could keep it alive) */
	tell(a_to, a_from, 'c');
	for (int i = 0; i < NOBJ; i++)
		out[n++] = i != PA ? by_id(sys, i, ids[i]) : listed(sys, i, ids[i]) ? 1 : -ENOENT;
	for (int i = 0; i < NOBJ; i++)
		out[n++] = listed(sys, i, ids[i]);
	/* that work holds PA and, until it runs, Q: both are asked for until gone, at most
	 * 5 s (a loaded machine delays the work queue), on both sides; bpfrt's answers above
	 * are checked on their own: ENOENT at once */
	for (int i = 0; i < 500 && (listed(sys, PA, ids[PA]) || listed(sys, Q, ids[Q])); i++)
		usleep(10000);
	out[n++] = by_id(sys, PA, ids[PA]);
	out[n++] = by_id(sys, Q, ids[Q]);
	/* A unmaps X: gone */
	tell(a_to, a_from, 'u');
	out[n++] = by_id(sys, X, ids[X]);
	out[n++] = listed(sys, X, ids[X]);
	/* B closes P, the last holder of P and so of M.  The kernel frees a program's id
	 * at once but puts its maps after an RCU grace period and a work item
	 * (bpf_prog_free_deferred()), so M is asked for at once (not compared: bpfrt's
	 * answer is checked on its own) and then until gone, at most 2 s */
	tell(b_to, b_from, 'p');
	out[n++] = by_id(sys, P, ids[P]);
	out[n++] = listed(sys, P, ids[P]);
	out[n++] = by_id(sys, M, ids[M]);
	for (int i = 0; i < 200 && listed(sys, M, ids[M]); i++)
		usleep(10000);
	out[n++] = by_id(sys, M, ids[M]);
	/* B, whose cache maps them all, asks itself */
	put(b_to, "l", 1);
	get(b_from, res, sizeof(res));
	for (int i = 0; i < NOBJ; i++)
		out[n++] = res[i];
	/* the checker's own map, made before the forks, is still there */
	out[n++] = by_id(sys, M2, pre_id);
	put(a_to, "q", 1);
	put(b_to, "q", 1);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	close(a_to);
	close(a_from);
	close(b_to);
	close(b_from);
	close(pre);
	return n;
}

static const char *const obj_names[NOBJ] = { "map M (P uses it)", "prog P", "map M2",
					     "prog P2", "ring buffer R", "mmapped array X",
					     "prog array PA", "prog Q (in PA's slot)" };
static const char *const phase[] = { "A created", "B looked up", "all held",
				     "after A closed", "listed after A closed" };

int main(void)
{
	char dir[64] = "/dev/shm/bpfrt-idsx-XXXXXX", name[128];
	int kern[96], rt[96], nk, nr, i = 0;

	if (!kernel_available())
		T_SKIP("needs root and the kernel's bpf()");
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	signal(SIGPIPE, SIG_IGN);
	nk = steps(sys_kernel, kern);
	nr = steps(sys_bpfrt, rt);
	T_EQ_INT(nk, nr);
	T_EQ_INT(5 * NOBJ + 8 + NOBJ + 1, nk);
	for (; i < 5 * NOBJ && i < nk && i < nr; i++) {
		snprintf(name, sizeof(name), "%s: %s", phase[i / NOBJ], obj_names[i % NOBJ]);
		T_CASE(name);
		if (i / NOBJ >= 3 && (i % NOBJ == PA || i % NOBJ == Q))
			/* the kernel's work queue decides; bpfrt's gone at once */
			T_EQ_INT(i / NOBJ == 3 ? -ENOENT : 0, rt[i]);
		else
			T_EQ_INT(kern[i], rt[i]);
	}
	{
		static const char *const rest[] = {
			"PA by id after A closed, once gone", "Q by id after A closed, once gone",
			"X by id after A's munmap", "X listed after A's munmap",
			"P by id after B's close", "P listed after B's close",
			"M by id at once after B's close (P gone)",
			"M by id after B's close, once gone",
		};

		for (int k = 0; k < 8 && i < nk && i < nr; k++, i++) {
			T_CASE(rest[k]);
			if (k == 6) /* the kernel's answer depends on its work queue */
				T_EQ_INT(-ENOENT, rt[i]);
			else
				T_EQ_INT(kern[i], rt[i]);
		}
	}
	for (int k = 0; k < NOBJ && i < nk && i < nr; k++, i++) {
		snprintf(name, sizeof(name), "B asks again: %s", obj_names[k]);
		T_CASE(name);
		T_EQ_INT(kern[i], rt[i]);
	}
	if (i < nk && i < nr) {
		T_CASE("the checker's own map made before the forks");
		T_EQ_INT(kern[i], rt[i]);
	}
	/* the answers that make the comparison mean something */
	T_CASE("kernel: the closed objects are gone, the held ones found");
	T_EQ_INT(-ENOENT, kern[3 * NOBJ + M2]);
	T_EQ_INT(-ENOENT, kern[3 * NOBJ + R]);
	T_EQ_INT(1, kern[3 * NOBJ + M]);
	T_EQ_INT(1, kern[3 * NOBJ + X]);
	T_EQ_INT(-ENOENT, kern[5 * NOBJ]);
	T_EQ_INT(-ENOENT, kern[5 * NOBJ + 1]);
	T_EQ_INT(-ENOENT, kern[5 * NOBJ + 4]);
	T_EQ_INT(-ENOENT, kern[5 * NOBJ + 7]);
	T_EQ_INT(1, kern[2 * NOBJ + Q]);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) < 0)
			T_FAIL("cleanup");
	}
	return t_done();
}
