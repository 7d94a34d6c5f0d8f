/* test_priv.c - BPF_PROG_LOAD picks the verifier's privilege level: a BPFRT_F_PRIV_* bit
 * in prog_flags, else the calling thread's effective capabilities (checked in forked
 * children that drop CAP_SYS_ADMIN, CAP_PERFMON and CAP_BPF with capset). */
#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "cases/case.h"
#include "harness.h"

#ifndef CAP_BPF
#define CAP_PERFMON 38
#define CAP_BPF 39
#endif

static const struct bpf_insn leak[] = { MOV64_REG(0, 10), EXIT() };
static const struct bpf_insn loop[] = { MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
					JIMM(BPF_JLT, 0, 4, -2), EXIT() };
static const struct bpf_insn call[] = { MOV64_IMM(1, 1), CALL_SUB(1), EXIT(), MOV64_REG(0, 1),
					EXIT() };
static const struct bpf_insn ok[] = { MOV64_IMM(0, 2), EXIT() };

static char log_buf[4096];

/* Load; returns the fd closed again (0) or -errno, the log in log_buf. */
static int load(enum bpf_prog_type type, const struct bpf_insn *p, size_t n, uint32_t flags)
{
	BPFRT_OPTS(bpfrt_prog_load_opts, o, .prog_flags = flags, .log_level = 1,
		   .log_buf = log_buf, .log_size = sizeof(log_buf));
	int fd;

	log_buf[0] = 0;
	fd = bpfrt_prog_load(type, NULL, "GPL", p, n, &o);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

#define SF BPF_PROG_TYPE_SOCKET_FILTER
#define LOAD(type, p, flags) load(type, p, sizeof(p) / sizeof(p[0]), flags)

static void explicit_levels(void)
{
	static const struct {
		const char *name;
		enum bpf_prog_type type;
		const struct bpf_insn *p;
		size_t n;
		uint32_t flags;
		int err;
		const char *msg;
	} t[] = {
		{ "full: pointer returned", SF, leak, 2, BPFRT_F_PRIV_FULL, 0, NULL },
		{ "bpf_capable: pointer returned", SF, leak, 2, BPFRT_F_PRIV_BPF_CAPABLE, -EACCES,
		  "R0 leaks addr as return value" },
		{ "unpriv: pointer returned", SF, leak, 2, BPFRT_F_PRIV_UNPRIV, -EACCES,
		  "R0 leaks addr as return value" },
		{ "full: loop", SF, loop, 4, BPFRT_F_PRIV_FULL, 0, NULL },
		{ "unpriv: loop", SF, loop, 4, BPFRT_F_PRIV_UNPRIV, -EINVAL,
		  "back-edge from insn 2 to 1" },
		{ "bpf_capable: bpf-to-bpf call", SF, call, 5, BPFRT_F_PRIV_BPF_CAPABLE, 0, NULL },
		{ "unpriv: bpf-to-bpf call", SF, call, 5, BPFRT_F_PRIV_UNPRIV, -EPERM,
		  "loading/calling other bpf or kernel functions are allowed for CAP_BPF and "
		  "CAP_SYS_ADMIN" },
		{ "unpriv: xdp", BPF_PROG_TYPE_XDP, ok, 2, BPFRT_F_PRIV_UNPRIV, -EPERM, NULL },
		{ "bpf_capable: xdp", BPF_PROG_TYPE_XDP, ok, 2, BPFRT_F_PRIV_BPF_CAPABLE, 0, NULL },
		{ "two levels at once", SF, ok, 2, BPFRT_F_PRIV_FULL | BPFRT_F_PRIV_UNPRIV, -EINVAL,
		  NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		T_CASE(t[i].name);
		T_EQ_INT(t[i].err, load(t[i].type, t[i].p, t[i].n, t[i].flags));
		if (t[i].msg)
			T_ASSERT(strstr(log_buf, t[i].msg) != NULL);
	}
}

static int caps(int set, struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return (int)syscall(set ? SYS_capset : SYS_capget, &h, d);
}

static int has(const struct __user_cap_data_struct d[2], int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

/* In a child: drop the capabilities in drop (bit per cap below 64) from the effective
 * set, then load leak, loop and call with no level bit.  Exit status: bit 0 leak
 * accepted, bit 1 loop accepted, bit 2 call accepted, bit 3 leak accepted when
 * BPFRT_F_PRIV_FULL asks for it; 255 when capset failed. */
static int child_verdicts(uint64_t drop)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct __user_cap_data_struct d[2];
		int r = 0;

		if (caps(0, d))
			_exit(255);
		for (int c = 0; c < 64; c++)
			if (drop >> c & 1)
				d[c / 32].effective &= ~(1u << (c % 32));
		if (caps(1, d))
			_exit(255);
		r |= LOAD(SF, leak, 0) == 0;
		r |= (LOAD(SF, loop, 0) == 0) << 1;
		r |= (LOAD(SF, call, 0) == 0) << 2;
		r |= (LOAD(SF, leak, BPFRT_F_PRIV_FULL) == 0) << 3;
		_exit(r);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void default_levels(void)
{
	struct __user_cap_data_struct d[2];
	uint64_t admin = 1ull << CAP_SYS_ADMIN, perfmon = 1ull << CAP_PERFMON;
	uint64_t bpf = 1ull << CAP_BPF;

	T_CASE("default: capget");
	T_EQ_INT(0, caps(0, d));
	if (!(has(d, CAP_SYS_ADMIN) || (has(d, CAP_BPF) && has(d, CAP_PERFMON)))) {
		printf("default levels: skipped: this process lacks CAP_SYS_ADMIN (and CAP_BPF + "
		       "CAP_PERFMON)\n");
		return;
	}
	T_CASE("default: full capabilities");
	T_EQ_INT(0, LOAD(SF, leak, 0));
	T_CASE("default: CAP_BPF without CAP_PERFMON is bpf_capable");
	/* bpf-to-bpf calls allowed; the bounded loop is refused there as 6.18 refuses it:
	 * without CAP_PERFMON the dead side of its decided exit is walked speculatively
	 * with the counter unknown, and that path loops ("infinite loop detected") */
	T_EQ_INT(4 | 8, child_verdicts(admin | perfmon));
	T_CASE("default: no CAP_BPF is unprivileged");
	T_EQ_INT(8, child_verdicts(admin | perfmon | bpf));
	T_CASE("default: CAP_BPF + CAP_PERFMON is full");
	T_EQ_INT(1 | 2 | 4 | 8, child_verdicts(admin));
}

int main(void)
{
	explicit_levels();
	default_levels();
	return t_done();
}
