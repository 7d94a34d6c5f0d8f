/* test_prog_engine.c - the engine of BPF_PROG_LOAD (src/api/prog.c): BPFRT_F_ENGINE() in
 * prog_flags picks it, over the user's default in the BPFRT_ENGINE environment variable;
 * with neither, a verified program runs as native code where the JIT is built.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "api/api.h"
#include "vm/vm.h"

#ifdef BPFRT_HAVE_JIT
#define NATIVE BPFRT_ENGINE_JIT
#else
#define NATIVE BPFRT_ENGINE_CHECKED
#endif

static const struct bpf_insn prog[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 7 },
	{ .code = BPF_JMP | BPF_EXIT },
};

/* The engine prog_flags' load gives the program, or -errno of the load. */
static int engine_of(uint32_t prog_flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .prog_flags = prog_flags);
	struct brt_prog *p;
	int fd = bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "e", "GPL", prog, 2, &o);
	int e;

	if (fd < 0)
		return -errno;
	if (brt_prog_from_fd(fd, &p)) {
		close(fd);
		return -EBADF;
	}
	e = (int)brt_vm_engine(p->vm);
	brt_obj_put(&p->obj);
	close(fd);
	return e;
}

int main(void)
{
	static const struct {
		const char *name;
		const char *env;    /* BPFRT_ENGINE, or NULL: unset */
		enum bpfrt_engine flag;
		int want;           /* engine, or -errno */
	} cases[] = {
		{ "no flag, no variable: native", NULL, BPFRT_ENGINE_DEFAULT, NATIVE },
		{ "flag interp", NULL, BPFRT_ENGINE_INTERP, BPFRT_ENGINE_INTERP },
		{ "flag checked", NULL, BPFRT_ENGINE_CHECKED, BPFRT_ENGINE_CHECKED },
#ifdef BPFRT_HAVE_JIT
		{ "flag jit", NULL, BPFRT_ENGINE_JIT, BPFRT_ENGINE_JIT },
		{ "flag jit over variable interp", "interp", BPFRT_ENGINE_JIT, BPFRT_ENGINE_JIT },
#else
		{ "flag jit, not built", NULL, BPFRT_ENGINE_JIT, -EOPNOTSUPP },
#endif
		{ "variable checked", "checked", BPFRT_ENGINE_DEFAULT, BPFRT_ENGINE_CHECKED },
		{ "variable interp", "interp", BPFRT_ENGINE_DEFAULT, BPFRT_ENGINE_INTERP },
		{ "flag checked over variable interp", "interp", BPFRT_ENGINE_CHECKED,
		  BPFRT_ENGINE_CHECKED },
		{ "unknown variable: native", "turbo", BPFRT_ENGINE_DEFAULT, NATIVE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_CASE(cases[i].name);
		if (cases[i].env)
			setenv("BPFRT_ENGINE", cases[i].env, 1);
		else
			unsetenv("BPFRT_ENGINE");
		T_EQ_INT(cases[i].want, engine_of(BPFRT_F_ENGINE(cases[i].flag)));
	}
	unsetenv("BPFRT_ENGINE");
	T_CASE("a bit next to the engine field is still refused");
	T_EQ_INT(-EINVAL, engine_of(BPFRT_F_ENGINE(BPFRT_ENGINE_INTERP) | (1u << 25)));
	return t_done();
}
