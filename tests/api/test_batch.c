/* test_batch.c - a batch (obj.h: one object's load) resolves each fd once and answers it
 * from its memo afterwards; a number closed and handed out again by the library is the
 * new object, never the one the memo had: created again (MAP_CREATE), opened from a pin
 * (OBJ_GET), or a program's fd; a closed number never handed out again is EBADF once the
 * batch has ended.  Each answer is checked by the map's id against its own fd's info.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "api/api.h"
#include "maps/maps.h"

static int map_new(uint32_t max)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = max;
	return bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

/* max_entries of the map fd resolves to, or -errno */
static long resolved(int fd)
{
	struct brt_map *m;
	long r;
	int err = brt_map_from_fd(fd, &m);

	if (err)
		return err;
	r = m->max_entries;
	brt_map_put(m);
	return r;
}

int main(void)
{
	char dir[64] = "/dev/shm/bpfrt-batch-XXXXXX", pin[96], cmd[96];
	struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fa, fb, fc, fp;

	if (!mkdtemp(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	snprintf(pin, sizeof(pin), "%s/seven", dir);
	fc = map_new(7);
	T_ASSERT(fc >= 0);
	T_EQ_INT(0, bpfrt_obj_pin(fc, pin));
	close(fc);

	brt_api_batch_begin();
	T_CASE("resolved once, then from the memo");
	fa = map_new(1);
	T_EQ_INT(1, resolved(fa));
	T_EQ_INT(1, resolved(fa));

	T_CASE("closed and created again under the same number");
	close(fa);
	fb = map_new(2);
	T_EQ_INT(fa, fb);
	T_EQ_INT(2, resolved(fb));

	/* two numbers the memo knows, both closed: whatever OBJ_GET opens on its way,
	 * its fd and the program's below take these two */
	T_CASE("closed and opened from a pin under a known number");
	fa = map_new(3);
	T_EQ_INT(3, resolved(fa));
	close(fa);
	close(fb);
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)pin;
	fc = bpfrt_bpf(BPF_OBJ_GET, &a, sizeof(a));
	T_ASSERT(fc == fa || fc == fb);
	T_EQ_INT(7, resolved(fc));

	T_CASE("closed and a program's fd under a known number");
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)ret0;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t)"GPL";
	fp = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	T_ASSERT(fp == (fc == fa ? fb : fa));
	T_EQ_INT(-EINVAL, resolved(fp));
	close(fp);
	close(fc);
	brt_api_batch_end();

	T_CASE("after the batch: a closed number is EBADF");
	T_EQ_INT(-EBADF, resolved(fp));
	T_EQ_INT(-EBADF, resolved(fc));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) < 0)
		T_FAIL("cleanup");
	return t_done();
}
