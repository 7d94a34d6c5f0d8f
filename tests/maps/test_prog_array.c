/* test_prog_array.c - prog arrays and bpf_tail_call() against the kernel: slot updates
 * and their errnos, a tail call's result replacing the caller's, fall-through on an empty
 * slot, and the chain limit (a program that tail-calls itself runs 1 + 33 times).
 */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "api/diff.h"

static const char *const texts[] = {
	"mov %r0, 42\nexit\n",
	"mov %r0, 43\nexit\n",
	/* caller: tail call slot 1, else 7 */
	"lddw %r2, map_fd 0\nmov %r3, 1\ncall 12\nmov %r0, 7\nexit\n",
	/* counts its runs in map 1 and tail-calls slot 2 (itself) */
	"mov %r6, %r1\nstw [%r10-4], 0\nmov %r2, %r10\nadd %r2, -4\nlddw %r1, map_fd 1\n"
	"call 1\njeq %r0, 0, +2\nmov %r1, 1\nlock add [%r0+0], %r1\nmov %r1, %r6\n"
	"lddw %r2, map_fd 0\nmov %r3, 2\ncall 12\nmov %r0, 0\nexit\n",
	/* an XDP program */
	"mov %r0, 2\nexit\n",
};

struct result {
	int create_err[2];
	int upd_err[8];
	int lkp_err[2];
	int ret[4];
	uint64_t count;
	int del_err[2];
};

static int mk(sys_fn sys, uint32_t type, uint32_t k, uint32_t v, uint32_t max)
{
	return diff_map_new(sys, type, k, v, max, 0);
}

static int load(sys_fn sys, const char *text, uint32_t type, const int *maps)
{
	struct bpf_insn *insns;
	char err[128];
	size_t n;
	int fd;

	if (bpfrt_asm(text, "pa", &insns, &n, err, sizeof(err)))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg == 1)
			insns[i].imm = maps[insns[i].imm];
	fd = diff_prog_load(sys, type, insns, (uint32_t)n);
	free(insns);
	return fd;
}

static int elem(sys_fn sys, int cmd, int fd, uint32_t key, uint32_t *val, uint64_t flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)val;
	a.flags = flags;
	return sys(cmd, &a, sizeof(a)) ? errno : 0;
}

static int run(sys_fn sys, int prog)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)prog;
	a.test.data_in = (uint64_t)(uintptr_t)pkt;
	a.test.data_size_in = sizeof(pkt);
	return sys(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -1000 - errno : (int)a.test.retval;
}

static void scenario(sys_fn sys, struct result *r)
{
	int maps[2], p[5], fd, closed;
	uint32_t v, k0 = 0;
	uint64_t count = 0;

	memset(r, 0, sizeof(*r));
	fd = mk(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 8, 4);
	r->create_err[0] = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	fd = mk(sys, BPF_MAP_TYPE_PROG_ARRAY, 8, 4, 4);
	r->create_err[1] = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	maps[0] = mk(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4);
	maps[1] = mk(sys, BPF_MAP_TYPE_ARRAY, 4, 8, 1);
	for (int i = 0; i < 5; i++) {
		p[i] = load(sys, texts[i], i == 4 ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_SOCKET_FILTER,
			    maps);
		T_ASSERT(p[i] >= 0);
	}
	closed = dup(0);
	close(closed);
	v = (uint32_t)p[0];
	r->upd_err[0] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 1, &v, BPF_ANY);
	r->upd_err[1] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 1, &v, BPF_NOEXIST);
	r->upd_err[2] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 5, &v, BPF_ANY);
	v = (uint32_t)maps[1];
	r->upd_err[3] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 0, &v, BPF_ANY);
	v = (uint32_t)closed;
	r->upd_err[4] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 0, &v, BPF_ANY);
	v = (uint32_t)p[4];
	r->upd_err[5] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 0, &v, BPF_ANY);
	r->lkp_err[0] = elem(sys, BPF_MAP_LOOKUP_ELEM, maps[0], 1, &v, 0);
	r->lkp_err[1] = elem(sys, BPF_MAP_LOOKUP_ELEM, maps[0], 0, &v, 0);
	r->ret[0] = run(sys, p[2]);
	v = (uint32_t)p[1];
	elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 1, &v, BPF_ANY);
	r->ret[1] = run(sys, p[2]);
	r->del_err[0] = elem(sys, BPF_MAP_DELETE_ELEM, maps[0], 1, NULL, 0);
	r->del_err[1] = elem(sys, BPF_MAP_DELETE_ELEM, maps[0], 1, NULL, 0);
	r->ret[2] = run(sys, p[2]);
	v = (uint32_t)p[3];
	r->upd_err[6] = elem(sys, BPF_MAP_UPDATE_ELEM, maps[0], 2, &v, BPF_ANY);
	r->ret[3] = run(sys, p[3]);
	elem(sys, BPF_MAP_LOOKUP_ELEM, maps[1], k0, (uint32_t *)&count, 0);
	r->count = count;
	/* the self-reference would keep both alive in the kernel too until the slot goes */
	elem(sys, BPF_MAP_DELETE_ELEM, maps[0], 2, NULL, 0);
	for (int i = 0; i < 5; i++)
		close(p[i]);
	close(maps[0]);
	close(maps[1]);
}

int main(void)
{
	struct result m, k;

	scenario(sys_bpfrt, &m);
	T_CASE("bpfrt");
	T_EQ_INT(EINVAL, m.create_err[0]);
	T_EQ_INT(EINVAL, m.create_err[1]);
	T_EQ_INT(0, m.upd_err[0]);
	T_EQ_INT(EINVAL, m.upd_err[1]);
	T_EQ_INT(E2BIG, m.upd_err[2]);
	T_EQ_INT(EINVAL, m.upd_err[3]);
	T_EQ_INT(EBADF, m.upd_err[4]);
	T_EQ_INT(EINVAL, m.upd_err[5]);
	T_EQ_INT(0, m.lkp_err[0]);
	T_EQ_INT(ENOENT, m.lkp_err[1]);
	T_EQ_INT(42, m.ret[0]);
	T_EQ_INT(43, m.ret[1]);
	T_EQ_INT(0, m.del_err[0]);
	T_EQ_INT(ENOENT, m.del_err[1]);
	T_EQ_INT(7, m.ret[2]);
	T_EQ_U64(34, m.count);
	if (!kernel_available())
		return t_done();
	scenario(sys_kernel, &k);
	T_CASE("same as the kernel");
	T_ASSERT(!memcmp(&k, &m, sizeof(k)));
	for (int i = 0; i < 8; i++)
		T_EQ_INT(k.upd_err[i], m.upd_err[i]);
	for (int i = 0; i < 4; i++)
		T_EQ_INT(k.ret[i], m.ret[i]);
	T_EQ_U64(k.count, m.count);
	return t_done();
}
