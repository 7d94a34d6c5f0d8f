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
 * casts (fullsock, tcp_sock, listener) are only reached with a socket, so they answer
 * NULL too.
 */
#include <stdint.h>

#include "attach/attach.h"
#include "vm/vm.h"

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

/* bpf_sk_fullsock(sk), bpf_tcp_sock(sk), bpf_get_listener_sock(sk): never reached with
 * a socket here (see the top of the file), so NULL. */
uint64_t brt_helper_sk_cast(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)ctx;
	return 0;
}
