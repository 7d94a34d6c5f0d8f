/* helpers.c - the generic helpers that need nothing but the host: time and jiffies,
 * random numbers, CPU and NUMA ids (this folder's rows of the helper registry:
 * BRT_VM_HELPERS in vm.h).
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "jit/jit.h"
#include "util/util.h"
#include "vm/vm.h"

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t brt_helper_ktime_get_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t brt_helper_ktime_get_boot_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return clock_ns(CLOCK_BOOTTIME);
}

uint64_t brt_helper_ktime_get_coarse_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

uint64_t brt_helper_ktime_get_tai_ns(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return clock_ns(CLOCK_TAI);
}

/* bpf_jiffies64(): the kernel's jiffies_64 (util/jiffies.c: CLOCK_MONOTONIC at the host's
 * HZ, from INITIAL_JIFFIES) */
uint64_t brt_helper_jiffies64(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return brt_jiffies64();
}

/* The helpers whose answer in user space is always 0 (their rows in vm.h say why) */
uint64_t brt_helper_zero(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* bpf_get_branch_snapshot(buf, size, flags): the kernel asks the LBR for entries first,
 * then refuses flags; with none, -ENOENT (buf left as it was) */
uint64_t brt_helper_get_branch_snapshot(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)(int64_t)(r3 ? -EINVAL : -ENOENT);
}

/* bpf_get_retval() / bpf_set_retval(retval): the return code the cgroup hook running the
 * program will give the system call (bpf_cg_run_ctx's retval), read and replaced; bpfrt
 * runs the types that have them only without a hook (cgroup_skb test runs do not offer
 * them), so it starts at 0, as the kernel's first program of a hook sees it. */
uint64_t brt_helper_get_retval(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			       struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;
	return (uint64_t)(int64_t)ctx->cg_retval;
}

uint64_t brt_helper_set_retval(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			       struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	ctx->cg_retval = (int32_t)r1;
	return 0;
}

/* The cgroup_sysctl helpers.  The kernel runs these programs on a sysctl's access (table,
 * current and new value); bpfrt runs them only outside any, so there is no sysctl: the
 * full name needs the table's directory (-EINVAL), the base name is empty (0), no value
 * exists to read (the buffer zeroed, -EINVAL, as copy_sysctl_value() for none and
 * get_new_value() for a read access) or to replace (-EINVAL). */
#define SYSCTL_BASE_NAME 1u /* BPF_F_SYSCTL_BASE_NAME */

uint64_t brt_helper_sysctl_get_name(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	char *buf = (char *)(uintptr_t)r2;

	(void)r1, (void)r5;
	if (!buf)
		return (uint64_t)-EINVAL;
	if (!(r4 & SYSCTL_BASE_NAME))
		return (uint64_t)-EINVAL;
	if (r3 && (!ctx->checked || bpfrt_run_access_ok(ctx, buf, 1, 1)))
		buf[0] = 0; /* strscpy() of "" */
	return 0;
}

uint64_t brt_helper_sysctl_get_value(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	void *buf = (void *)(uintptr_t)r2;

	(void)r1, (void)r4, (void)r5;
	if (!buf)
		return (uint64_t)-EINVAL;
	if (!r3)
		return (uint64_t)-E2BIG;
	if (!ctx->checked || bpfrt_run_access_ok(ctx, buf, (size_t)r3, 1))
		memset(buf, 0, (size_t)r3);
	return (uint64_t)-EINVAL;
}

uint64_t brt_helper_sysctl_set_new_value(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EINVAL;
}

/* bpf_getsockopt / bpf_setsockopt of a sock_addr or sock_ops context (cgroup_sockopt's of
 * a socket pointer): the kernel applies them to the hook's socket.  bpfrt runs these types only outside a hook, with no socket,
 * which the kernel answers as for one that is not a full socket: -EINVAL, getsockopt's
 * buffer zeroed. */
uint64_t brt_helper_getsockopt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			       struct bpfrt_run_ctx *ctx)
{
	void *optval = (void *)(uintptr_t)r4;

	(void)r1, (void)r2, (void)r3;
	if (optval && (!ctx->checked || bpfrt_run_access_ok(ctx, optval, (size_t)(uint32_t)r5, 1)))
		memset(optval, 0, (size_t)(uint32_t)r5);
	return (uint64_t)-EINVAL;
}

uint64_t brt_helper_setsockopt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			       struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EINVAL;
}

/* long bpf_bind(ctx, addr, addr_len) of a sock_addr connect hook: the kernel's checks of
 * the address (-EINVAL for a length short of its family's, -EAFNOSUPPORT for a family
 * neither AF_INET nor AF_INET6), then the bind of the hook's socket.  bpfrt runs these
 * programs outside a hook, with no socket to bind: -EINVAL, as for getsockopt above. */
#define BRT_SIN6_LEN_RFC2133 24 /* a struct sockaddr_in6 without sin6_scope_id */

uint64_t brt_helper_bind(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			 struct bpfrt_run_ctx *ctx)
{
	const struct sockaddr *addr = (const struct sockaddr *)(uintptr_t)r2;
	int32_t len = (int32_t)r3;

	(void)r1, (void)r4, (void)r5;
	if (len < (int32_t)(offsetof(struct sockaddr, sa_family) + sizeof(addr->sa_family)))
		return (uint64_t)-EINVAL;
	if (!bpfrt_run_access_ok(ctx, addr, sizeof(addr->sa_family), 0))
		return (uint64_t)-EFAULT; /* an unverified program's bad pointer */
	if (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)
		return (uint64_t)-EINVAL; /* short, or no socket to bind */
	return (uint64_t)-EAFNOSUPPORT;
}

/* long bpf_tcp_send_ack(tp, rcv_nxt): a congestion control's ACK; bpfrt runs no TCP
 * stack under its struct_ops programs, so there is none to send (0, the kernel's answer) */
uint64_t brt_helper_tcp_send_ack(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* long bpf_sock_ops_cb_flags_set(ctx, flags): -EOPNOTSUPP outside the kernel's locked TCP
 * callbacks (is_locked_tcp_sock_ops()), where bpfrt, running no sock_ops hook, always is */
uint64_t brt_helper_sock_ops_cb_flags_set(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EOPNOTSUPP;
}

/* The TCP header option helpers of sock_ops programs (bpf_load_hdr_opt, bpf_store_hdr_opt,
 * bpf_reserve_hdr_opt) work on the header of the packet a callback parses or writes.
 * bpfrt runs no sock_ops hook, so there is none: loading answers as outside the kernel's
 * locked TCP callbacks (-EOPNOTSUPP, as bpf_sock_ops_cb_flags_set above), storing and
 * reserving as outside BPF_SOCK_OPS_WRITE_HDR_OPT_CB / _HDR_OPT_LEN_CB (-EPERM). */
uint64_t brt_helper_load_hdr_opt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				 struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EOPNOTSUPP;
}

uint64_t brt_helper_store_hdr_opt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EPERM;
}

uint64_t brt_helper_reserve_hdr_opt(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return (uint64_t)-EPERM;
}

/* One xorshift64* state per thread, seeded from the clock and the state's address so
 * threads started together still differ.  Not cryptographic, like the kernel's.
 * Initial-exec TLS: its offset from the thread pointer is the same in every thread, so
 * the JIT's pass `inlinehelper` reads and writes it at fs:[offset] (jit/x86_64/inline.c);
 * static TLS is there for the shared library, the static one and the preload alike. */
static _Thread_local uint64_t prandom_state __attribute__((tls_model("initial-exec")));

uint64_t *brt_prandom_state(void)
{
	return &prandom_state;
}

static inline uint64_t prandom_step(uint64_t *state, uint64_t x)
{
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

/* A thread's seed: the clock and the state's address (threads started together differ);
 * never 0, the state that means "not seeded" (and xorshift's one fixed point). */
static uint64_t prandom_seed_of(const uint64_t *state)
{
	uint64_t x = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)state ^ 0x9e3779b97f4a7c15ull;

	return x ? x : 0x9e3779b97f4a7c15ull;
}

/* A thread's first call, out of line: inlined, its clock call made every call of the
 * helper save a register (24 instructions a call, now 20). */
__attribute__((noinline)) static uint64_t prandom_first(uint64_t *state)
{
	return prandom_step(state, prandom_seed_of(state));
}

#if defined(BPFRT_HAVE_JIT) && defined(__x86_64__)
/* Seed this thread's state without drawing, when it is 0: the JIT's programs that inline
 * the helper (pass `inlinehelper`) call this at their entry, so that their draws need no
 * test; the next number is the one the helper's first call would have given. */
static void prandom_seed(void)
{
	uint64_t *state = &prandom_state;

	if (!*state)
		*state = prandom_seed_of(state);
}
#endif

uint64_t brt_helper_get_prandom_u32(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	/* the thread-local's address once: in a shared library each access is a call the
	 * compiler must assume clobbers registers */
	uint64_t *state = &prandom_state;

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	__asm__("" : "+r"(state));
	if (__builtin_expect(!*state, 0))
		return prandom_first(state);
	return prandom_step(state, *state);
}

uint64_t brt_helper_get_smp_processor_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	int cpu = brt_cpu_now(); /* the record's CPU when the trace runner runs it */

	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return cpu < 0 ? 0 : (uint64_t)cpu;
}

uint64_t brt_helper_get_numa_node_id(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* The helpers here that never read their run ctx, so never stop the run: the JIT calls
 * them without passing the ctx or checking for a stop afterwards (pass `leafcall`).
 * Keyed by function, so a host's own helper under the same id is called the full way. */
#ifdef BPFRT_HAVE_JIT /* a build without the JIT has no one to hand them to */
__attribute__((constructor)) static void helpers_leaf_hand_down(void)
{
	static const bpfrt_helper_fn leaf[] = {
		brt_helper_ktime_get_ns,	  brt_helper_ktime_get_boot_ns,
		brt_helper_ktime_get_coarse_ns,	  brt_helper_ktime_get_tai_ns,
		brt_helper_get_prandom_u32,	  brt_helper_get_smp_processor_id,
		brt_helper_get_numa_node_id,	  brt_helper_jiffies64,
	};

	brt_jit_set_leaf_helpers(leaf, sizeof(leaf) / sizeof(leaf[0]));
#if defined(__x86_64__)
	{
		uintptr_t tp;

		/* the thread pointer: fs:0 holds the TCB's own address (x86-64 TLS ABI) */
		__asm__("mov %%fs:0, %0" : "=r"(tp));
		brt_jit_set_prandom(brt_helper_get_prandom_u32, prandom_seed,
				    (int64_t)((uintptr_t)&prandom_state - tp));
	}
#endif
}
#endif
