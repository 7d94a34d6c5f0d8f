/* test_throw_tail_call.c - bpf_throw across tail calls and processes.
 *
 * Tail calls, against the kernel (Linux's exception_tail_call selftest has the first
 * shape, 24): a tail call's target that throws ends only its own run, in the frame the
 * tail call replaced, so the tail-calling function's caller goes on with the cookie (or
 * the target's exception callback's value) as the function's r0; a target that throws
 * from a subprogram, a target with its own callback, a target reached through a chain,
 * and a caller that throws itself after its target threw.  The kernel's answers through
 * BPF_PROG_TEST_RUN, and each of bpfrt's engines (JIT, fast interpreter, checked
 * interpreter) must give them.
 *
 * Pins: a throwing program pinned, opened and run by another process (this binary
 * re-executed), which rebuilds it from its program file: with the BTF kept in the file,
 * and with a BTF too big for the file to keep (so only the callback's place in the file
 * names it).  The run's value is the child's exit status.  Root only for the kernel
 * side and for pins (map links read /proc/self/map_files); otherwise skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <linux/btf.h>

#include "btf/btf.h"
#include "btf_blob.h"
#include "harness.h"
#include "vm/vm.h"
#include "api/diff.h"
#include "../verifier/cases/case.h"

#define MAX_INSNS 16
#define MAX_FUNCS 2

/* bpf_throw (resolved to vmlinux's BTF id when loaded) */
#define KCALL_THROW I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, -2)
#define THROW(c) MOV64_IMM(1, c), KCALL_THROW, MOV64_IMM(0, 0), EXIT()
#define TAIL(slot) LD_MAP(2, 0), MOV64_IMM(3, slot), CALL(BPF_FUNC_tail_call)

/* BTF: [1] int, [2] long, [3] int (void), [4] int (long a), [5] static f0, [6] static f1,
 * [7] static t0, [8] global cb (int (long)), [9] t0's tag "exception_callback:cb" */
enum { F0 = 5, F1, T0, CB };

struct prog {
	const char *name;
	struct bpf_insn insns[MAX_INSNS];
	uint32_t n;
	uint32_t nf;                 /* func_info rows (0: loaded without BTF) */
	uint32_t off[MAX_FUNCS], type[MAX_FUNCS];
	int expect;                  /* test-run value (callers) */
};

#define TPROG(nm, fns, exp, ...) { .name = nm, .insns = { __VA_ARGS__ },                 \
	.n = sizeof((struct bpf_insn[]){ __VA_ARGS__ }) / sizeof(struct bpf_insn), fns,    \
	.expect = exp }
#define FUNCS1(t) .nf = 1, .off = { 0 }, .type = { t }
#define FUNCS2(t, o, u) .nf = 2, .off = { 0, o }, .type = { t, u }

/* the prog array's slots */
enum { S_THROW, S_SUB_THROW, S_CB, S_CHAIN, NSLOTS };

static const struct prog targets[NSLOTS] = {
	TPROG("throws 16", FUNCS1(F0), 0, THROW(16)),
	TPROG("throws 16 in a subprogram", FUNCS2(F0, 2, F1), 0,
	     CALL_SUB(1), EXIT(), THROW(16)),
	TPROG("throws 16, callback adds 100", FUNCS2(T0, 4, CB), 0,
	     THROW(16), MOV64_REG(0, 1), ALU64_IMM(BPF_ADD, 0, 100), EXIT()),
	/* no BTF: tail-calls the first target */
	TPROG("tail-calls slot 0", .nf = 0, 0, TAIL(S_THROW), MOV64_IMM(0, 5), EXIT()),
};

/* main calls a subprogram that tail-calls slot s (else 10), adds 8 */
#define VIA_SUB(nm, s, exp) TPROG(nm, FUNCS2(F0, 3, F1), exp, CALL_SUB(2),              \
	ALU64_IMM(BPF_ADD, 0, 8), EXIT(), TAIL(s), MOV64_IMM(0, 10), EXIT())

static const struct prog callers[] = {
	VIA_SUB("from a subprogram into a throwing target", S_THROW, 24),
	TPROG("from main into a throwing target", FUNCS1(F0), 16,
	     TAIL(S_THROW), MOV64_IMM(0, 10), EXIT()),
	VIA_SUB("target throws from its subprogram", S_SUB_THROW, 24),
	VIA_SUB("target's own exception callback", S_CB, 124),
	VIA_SUB("through a target that tail-calls on", S_CHAIN, 24),
	/* the caller throws (cookie: what came back + 8) after its target threw */
	TPROG("caller throws after its target threw", FUNCS2(F0, 6, F1), 24,
	     CALL_SUB(5), MOV64_REG(1, 0), ALU64_IMM(BPF_ADD, 1, 8), KCALL_THROW,
	     MOV64_IMM(0, 0), EXIT(), TAIL(S_THROW), MOV64_IMM(0, 10), EXIT()),
};
#define NCALLERS (sizeof(callers) / sizeof(callers[0]))

/* The BTF above; pad > 0 adds an unused string of that many bytes (a BTF bigger than a
 * program file keeps). */
static int load_btf(sys_fn sys, uint32_t pad)
{
	static const char base[] = "\0int\0long\0f0\0f1\0t0\0cb\0a\0exception_callback:cb";
	const uint32_t types[] = {
		1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
		5, BTF_KIND_INT << 24, 8, BTF_INT_SIGNED << 24 | 64,
		0, BTF_KIND_FUNC_PROTO << 24, 1,
		0, BTF_KIND_FUNC_PROTO << 24 | 1, 1, 22, 2,
		10, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, 3,
		13, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, 3,
		16, BTF_KIND_FUNC << 24 | BTF_FUNC_STATIC, 3,
		19, BTF_KIND_FUNC << 24 | BTF_FUNC_GLOBAL, 4,
		24, BTF_KIND_DECL_TAG << 24, T0, (uint32_t)-1,
	};
	uint32_t n = sizeof(base) + (pad ? pad + 1 : 0);
	char *strs = calloc(1, n);
	int fd;

	if (!strs)
		return -1;
	memcpy(strs, base, sizeof(base));
	memset(strs + sizeof(base), 'x', pad);
	fd = btf_blob_load(sys, types, sizeof(types), strs, n);
	free(strs);
	return fd;
}

/* BPFRT_F_ENGINE() of the engine bpfrt runs on; 0 for the kernel */
static uint32_t engine_flags;

static int load(sys_fn sys, const struct prog *p, int btf, int map)
{
	struct bpf_insn insns[MAX_INSNS];
	struct bpf_func_info fi[MAX_FUNCS];
	union bpf_attr a;

	memcpy(insns, p->insns, p->n * sizeof(insns[0]));
	for (uint32_t i = 0; i < p->n; i++) {
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD)
			insns[i].imm = map;
		if (insns[i].code == (BPF_JMP | BPF_CALL) &&
		    insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL)
			insns[i].imm = brt_btf_find(brt_btf_vmlinux(), "bpf_throw", BTF_KIND_FUNC);
	}
	for (uint32_t f = 0; f < p->nf; f++)
		fi[f] = (struct bpf_func_info){ .insn_off = p->off[f], .type_id = p->type[f] };
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = p->n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.prog_flags = engine_flags;
	if (p->nf) {
		a.prog_btf_fd = (uint32_t)btf;
		a.func_info = (uint64_t)(uintptr_t)fi;
		a.func_info_rec_size = sizeof(fi[0]);
		a.func_info_cnt = p->nf;
	}
	return sys(BPF_PROG_LOAD, &a, sizeof(a));
}

/* each caller's test-run value, or -errno of its load (-1000 - errno: of the run) */
static void scenario(sys_fn sys, const char *engine, int *ret)
{
	enum bpfrt_engine e = BPFRT_ENGINE_DEFAULT;
	int map, btf, t[NSLOTS];

	if (engine)
		T_EQ_INT(0, brt_vm_engine_parse(engine, 0, &e));
	engine_flags = BPFRT_F_ENGINE(e);
	map = diff_map_new(sys, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, NSLOTS, 0);
	btf = load_btf(sys, 0);
	T_ASSERT(map >= 0 && btf >= 0);
	for (uint32_t s = 0; s < NSLOTS; s++) {
		t[s] = load(sys, &targets[s], btf, map);
		T_CASE(targets[s].name);
		T_ASSERT(t[s] >= 0);
		T_EQ_INT(0, diff_update(sys, map, s, t[s]));
	}
	for (size_t i = 0; i < NCALLERS; i++) {
		int fd = load(sys, &callers[i], btf, map);

		ret[i] = fd < 0 ? -errno : diff_run64(sys, fd, 0);
		if (fd >= 0)
			close(fd);
	}
	for (uint32_t s = 0; s < NSLOTS; s++) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)map;
		a.key = (uint64_t)(uintptr_t)&s;
		sys(BPF_MAP_DELETE_ELEM, &a, sizeof(a)); /* targets naming the map */
		close(t[s]);
	}
	close(map);
	close(btf);
	engine_flags = 0;
}

/* ---- pins ---------------------------------------------------------------------------- */

/* the child: open the pin at path, test-run it; its value as the exit status (200 + errno
 * when something fails) */
static int child_run(const char *path)
{
	union bpf_attr a;
	int fd, r;

	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	fd = bpfrt_bpf(BPF_OBJ_GET, &a, sizeof(a));
	if (fd < 0) {
		fprintf(stderr, "OBJ_GET %s: %s\n", path, strerror(errno));
		return 200;
	}
	r = diff_run64(sys_bpfrt, fd, 0);
	if (r < 0)
		fprintf(stderr, "test run: %d\n", r);
	return r < 0 || r > 199 ? 201 : r;
}

/* this binary re-executed as "run path": its exit status */
static int run_elsewhere(const char *path)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/proc/self/exe", "/proc/self/exe", "run", path, (char *)NULL);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* target slot s loaded with a BTF padded by pad bytes, pinned at dir/name, run here and
 * in another process: both values must be want */
static void pinned(const char *dir, const char *name, int s, uint32_t pad, int want)
{
	char path[256];
	union bpf_attr a;
	int btf = load_btf(sys_bpfrt, pad), fd;

	T_CASE(name);
	T_ASSERT(btf >= 0);
	fd = load(sys_bpfrt, &targets[s], btf, -1);
	T_ASSERT(fd >= 0);
	T_EQ_INT(want, diff_run64(sys_bpfrt, fd, 0));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.bpf_fd = (uint32_t)fd;
	T_EQ_INT(0, bpfrt_bpf(BPF_OBJ_PIN, &a, sizeof(a)));
	close(fd);
	close(btf);
	T_EQ_INT(want, run_elsewhere(path));
	unlink(path);
}

int main(int argc, char **argv)
{
	static const char *const engines[] = { "jit", "interp", "checked" };
	static int kernel[NCALLERS], eng[NCALLERS];
	int have_kernel = kernel_available();
	char name[160], dir[] = "/dev/shm/bpfrt-throw-XXXXXX";

	if (argc == 3 && !strcmp(argv[1], "run"))
		return child_run(argv[2]);
	if (have_kernel)
		scenario(sys_kernel, NULL, kernel);
	else
		printf("kernel comparison skipped: not root or no bpf()\n");
	for (int e = 0; e < 3; e++) {
#ifndef BPFRT_HAVE_JIT
		if (!strcmp(engines[e], "jit"))
			continue;
#endif
		scenario(sys_bpfrt, engines[e], eng);
		for (size_t i = 0; i < NCALLERS; i++) {
			snprintf(name, sizeof(name), "%s: %s", engines[e], callers[i].name);
			T_CASE(name);
			T_EQ_INT(callers[i].expect, eng[i]);
			if (!have_kernel)
				continue;
			snprintf(name, sizeof(name), "%s vs kernel: %s", engines[e],
				 callers[i].name);
			T_CASE(name);
			T_EQ_INT(kernel[i], eng[i]);
		}
	}
	if (geteuid() != 0) {
		printf("pins skipped: pinning reads /proc/self/map_files, needs root\n");
		return t_done();
	}
	if (!t_scratch_dir(dir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", dir, 1);
	pinned(dir, "default_cb", S_THROW, 0, 16);
	pinned(dir, "own_cb", S_CB, 0, 116);
	/* more than prog_file.c's TAIL_MAX (4 MiB): the file keeps no BTF */
	pinned(dir, "own_cb_no_btf_kept", S_CB, 5u << 20, 116);
	return t_done();
}
