/* sock_lookup.c - the socket helpers of packet and socket programs: bpf_sk_lookup_tcp,
 * bpf_sk_lookup_udp, bpf_skc_lookup_tcp, bpf_sk_release, bpf_sk_fullsock, bpf_tcp_sock,
 * bpf_get_listener_sock.
 *
 * The kernel looks the tuple up in its socket tables (the test run's network namespace,
 * or the one netns_id names) and hands the program a referenced struct sock.  A process
 * has no such tables: bpfrt's programs never hold a socket (its test runs give
 * __sk_buff->sk as 0, lookups find nothing), so every lookup answers "not found", as the
 * kernel does for a tuple no socket of the namespace matches; the verifier still makes
 * the program handle that answer and release what a lookup could have returned.  The
 * only sockets programs hold are those a sockmap or sockhash lookup gives (snapshots,
 * struct brt_sock in maps/maps.h), so the casts see one of those or nothing.
 */
#include <netinet/in.h>
#include <stdint.h>

#include "attach/attach.h"
#include "maps/maps.h"
#include "vm/vm.h"

#define TCP_LISTEN 10

/* struct bpf_sock *bpf_sk_lookup_{tcp,udp}(ctx, tuple, len, netns, flags) and
 * bpf_skc_lookup_tcp(): NULL, no socket matches. */
uint64_t brt_helper_sk_lookup(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* long bpf_sk_release(sk): 0; there is no reference count to drop. */
uint64_t brt_helper_sk_release(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}

/* The socket a cast was given: a snapshot from a sockmap (the checked engine: one this
 * run was handed), else NULL. */
static const struct brt_sock *held_sock(uint64_t r1, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = (const struct brt_sock *)(uintptr_t)r1;

	return sk && bpfrt_run_access_ok(ctx, sk, sizeof(*sk), 0) ? sk : NULL;
}

/* struct bpf_sock *bpf_sk_fullsock(sk): a sockmap's socket is a full one, itself. */
uint64_t brt_helper_sk_fullsock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	return (uint64_t)(uintptr_t)held_sock(r1, ctx);
}

/* struct bpf_sock *bpf_get_listener_sock(sk): sk when it is a TCP listener (listening,
 * freed by RCU), else NULL. */
uint64_t brt_helper_get_listener_sock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const struct brt_sock *sk = held_sock(r1, ctx);

	(void)r2, (void)r3, (void)r4, (void)r5;
	if (!sk || sk->sk.state != TCP_LISTEN || sk->refcounted)
		return 0;
	return (uint64_t)(uintptr_t)sk;
}

/* struct bpf_tcp_sock *bpf_tcp_sock(sk): the kernel's tcp_sock counters (cwnd, rtt,
 * sequence numbers) are not visible from user space for a socket bpfrt only has a
 * snapshot of, so NULL (known difference for a TCP socket from a sockmap, docs/STATUS.md
 * #15). */
uint64_t brt_helper_tcp_sock(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}
