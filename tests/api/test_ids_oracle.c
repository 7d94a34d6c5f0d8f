/* test_ids_oracle.c - BPF_{PROG,MAP,LINK}_GET_FD_BY_ID after the last holder of an object
 * is gone, against the kernel: the same steps through bpfrt_bpf() and syscall(__NR_bpf)
 * give the same answers.  The kernel frees a program, map or link when its last fd (or
 * other holder: a program's use of a map, a mapping of an mmapable array, a prog array's
 * slot, an attachment) goes, and its id then answers ENOENT; bpfrt keeps a per-process
 * mapping of every object it has seen (obj.c's cache), which must not make a dead
 * object look alive to the id walk (api/ids.c).  Some of the kernel's frees are deferred
 * (RCU, a work queue), so "gone" is polled for up to 2 s on both sides.  Needs root and
 * the kernel (skipped otherwise).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfrt.h"
#include "diff.h"
#include "harness.h"

static int map_new(sys_fn sys, uint32_t type, uint32_t vsize, uint32_t flags)
{
	return diff_map_new(sys, type, 4, vsize, 4, flags);
}


/* Is id still listed by GET_NEXT_ID?  (Takes no reference, unlike GET_FD_BY_ID: the
 * kernel clears a prog array's slots on a work queue holding the array, and a probe's
 * fd closed while that work is pending schedules it again, so probing by fd can keep a
 * prog array alive for as long as it probes.) */
static int listed(sys_fn sys, int cmd, uint32_t id)
{
	int next = cmd == BPF_PROG_GET_FD_BY_ID ? BPF_PROG_GET_NEXT_ID :
		   cmd == BPF_MAP_GET_FD_BY_ID  ? BPF_MAP_GET_NEXT_ID :
						  BPF_LINK_GET_NEXT_ID;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.start_id = id - 1;
	return !sys(next, &a, sizeof(a)) && a.next_id == id;
}

/* The answer once the object had time to go: its id polled until no longer listed, at
 * most 2 s, then asked for by id. */
static int gone(sys_fn sys, int cmd, uint32_t id)
{
	for (int i = 0; i < 200 && listed(sys, cmd, id); i++)
		usleep(10000);
	return diff_by_id(sys, cmd, id);
}

/* The steps; each answer goes into out[] for the comparison. */
static int steps(sys_fn sys, int *out)
{
	int n = 0, map, prog, arr, link, slot = 0;
	uint32_t pid, mid, lid;
	union bpf_attr a;
	void *mem;

	/* 1. a program alone: found while its fd is open, gone after the close (bpfrt
	 * also maps it: the info query below puts it in the process's cache) */
	prog = diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, -1);
	pid = prog >= 0 ? diff_id_of(sys, prog) : 0;
	out[n++] = prog >= 0 && pid;
	out[n++] = diff_by_id(sys, BPF_PROG_GET_FD_BY_ID, pid);
	close(prog);
	out[n++] = gone(sys, BPF_PROG_GET_FD_BY_ID, pid);

	/* 2. a map alone */
	map = map_new(sys, BPF_MAP_TYPE_ARRAY, 8, 0);
	mid = map >= 0 ? diff_id_of(sys, map) : 0;
	out[n++] = map >= 0 && mid;
	out[n++] = diff_by_id(sys, BPF_MAP_GET_FD_BY_ID, mid);
	close(map);
	out[n++] = gone(sys, BPF_MAP_GET_FD_BY_ID, mid);

	/* 3. a map a program uses: alive through the program, gone with it */
	map = map_new(sys, BPF_MAP_TYPE_ARRAY, 8, 0);
	mid = map >= 0 ? diff_id_of(sys, map) : 0;
	prog = diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, map);
	pid = prog >= 0 ? diff_id_of(sys, prog) : 0;
	out[n++] = prog >= 0 && pid && mid;
	close(map);
	out[n++] = diff_by_id(sys, BPF_MAP_GET_FD_BY_ID, mid);
	out[n++] = diff_by_id(sys, BPF_PROG_GET_FD_BY_ID, pid);
	close(prog);
	out[n++] = gone(sys, BPF_PROG_GET_FD_BY_ID, pid);
	out[n++] = gone(sys, BPF_MAP_GET_FD_BY_ID, mid);

	/* 4. an mmapable array: alive while mapped, gone after the munmap */
	map = map_new(sys, BPF_MAP_TYPE_ARRAY, 8, BPF_F_MMAPABLE);
	mid = map >= 0 ? diff_id_of(sys, map) : 0;
	mem = map >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, map, 0) :
			 MAP_FAILED;
	out[n++] = mem != MAP_FAILED && mid;
	close(map);
	out[n++] = diff_by_id(sys, BPF_MAP_GET_FD_BY_ID, mid);
	if (mem != MAP_FAILED)
		munmap(mem, 4096);
	out[n++] = gone(sys, BPF_MAP_GET_FD_BY_ID, mid);

	/* 5. a program in a prog array's slot: alive through the array, gone with it */
	arr = map_new(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 0);
	mid = arr >= 0 ? diff_id_of(sys, arr) : 0;
	prog = diff_prog_new(sys, BPF_PROG_TYPE_SOCKET_FILTER, -1);
	pid = prog >= 0 ? diff_id_of(sys, prog) : 0;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)arr;
	a.key = (uint64_t)(uintptr_t)&slot;
	a.value = (uint64_t)(uintptr_t)&prog;
	out[n++] = arr >= 0 && prog >= 0 && !sys(BPF_MAP_UPDATE_ELEM, &a, sizeof(a));
	close(prog);
	out[n++] = diff_by_id(sys, BPF_PROG_GET_FD_BY_ID, pid);
	close(arr);
	out[n++] = gone(sys, BPF_MAP_GET_FD_BY_ID, mid);
	out[n++] = gone(sys, BPF_PROG_GET_FD_BY_ID, pid);

	/* 6. a link (raw tracepoint): the link holds its program; both go with its fd */
	prog = diff_prog_new(sys, BPF_PROG_TYPE_RAW_TRACEPOINT, -1);
	pid = prog >= 0 ? diff_id_of(sys, prog) : 0;
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uint64_t)(uintptr_t)"sys_enter";
	a.raw_tracepoint.prog_fd = (uint32_t)prog;
	link = prog >= 0 ? sys(BPF_RAW_TRACEPOINT_OPEN, &a, sizeof(a)) : -1;
	lid = link >= 0 ? diff_id_of(sys, link) : 0;
	out[n++] = link >= 0 && lid;
	close(prog);
	out[n++] = diff_by_id(sys, BPF_PROG_GET_FD_BY_ID, pid);
	out[n++] = diff_by_id(sys, BPF_LINK_GET_FD_BY_ID, lid);
	close(link);
	out[n++] = gone(sys, BPF_LINK_GET_FD_BY_ID, lid);
	out[n++] = gone(sys, BPF_PROG_GET_FD_BY_ID, pid);
	return n;
}

static const char *names[] = {
	"prog loaded",        "prog by id (fd open)", "prog by id (closed)",
	"map created",        "map by id (fd open)",  "map by id (closed)",
	"prog with map",      "map by id (prog holds)", "prog by id (fd open)",
	"prog by id (closed)", "map by id (prog gone)", "mmapable map mapped",
	"map by id (mapped)", "map by id (unmapped)", "prog in prog array",
	"prog by id (in slot)", "prog array by id (closed)", "prog by id (array gone)",
	"raw tracepoint link", "prog by id (link holds)", "link by id (fd open)",
	"link by id (closed)", "prog by id (link gone)",
};

int main(void)
{
	char dir[64] = "/dev/shm/bpfrt-ids-XXXXXX";
	int kern[32], rt[32], nk, nr;

	if (!kernel_available())
		T_SKIP("needs root and the kernel's bpf()");
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	nk = steps(sys_kernel, kern);
	nr = steps(sys_bpfrt, rt);
	T_EQ_INT(nk, nr);
	T_EQ_INT((int)(sizeof(names) / sizeof(names[0])), nk);
	for (int i = 0; i < nk && i < nr; i++) {
		T_CASE(names[i]);
		T_EQ_INT(kern[i], rt[i]);
	}
	/* a few answers the comparison alone would not pin down */
	T_CASE("kernel: closed objects are gone");
	T_EQ_INT(-ENOENT, kern[2]);
	T_EQ_INT(1, kern[1]);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) < 0)
			T_FAIL("cleanup");
	}
	return t_done();
}
