/* bpfrt/probe.h - static probes inside host applications (like USDT): a probe site costs
 * one predictable branch on a flag while nothing is attached; attached programs run with
 * the seed's context, six u64 arguments.  Included by <bpfrt.h>.
 *
 *	BPFRT_PROBE("myapp:request", req->id, req->len);   // up to six arguments
 *
 * Programs attach by name with bpfrt_probe_attach() (or BPF_RAW_TRACEPOINT_OPEN through
 * bpfrt_bpf()); they are BPF_PROG_TYPE_RAW_TRACEPOINT programs, whose context is the
 * arguments as u64s - struct bpfrt_probe_ctx, the seed's struct bpf_context - missing
 * arguments are 0.  Attaching before the site first runs is fine: a site registers itself
 * by name on its first hit.
 */
#ifndef BPFRT_PROBE_H
#define BPFRT_PROBE_H

#include <stdint.h>

#include "bpfrt/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an attached program sees (r1 points to it; reads past arg6 are refused at attach). */
struct bpfrt_probe_ctx {
	uint64_t arg1;
	uint64_t arg2;
	uint64_t arg3;
	uint64_t arg4;
	uint64_t arg5;
	uint64_t arg6;
};

/* One probe site (static storage in the application; BPFRT_PROBE declares it). */
struct bpfrt_probe {
	int active;       /* checked on every hit: 1 until registered, then 1 iff attached */
	const char *name; /* "provider:name" */
	void *entry;      /* the runtime's record of this name, once registered */
};

#define BPFRT_PROBE_INIT(name) { 1, (name), 0 }

/* The slow path of a site whose flag is set: register it, run the attached programs
 * (in attach order) on the arguments.  Thread-safe; may run while programs attach and
 * detach. */
BPFRT_API void bpfrt_probe_fire(struct bpfrt_probe *site, uint64_t a1, uint64_t a2, uint64_t a3,
				uint64_t a4, uint64_t a5, uint64_t a6);

/* Attach a BPF_PROG_TYPE_RAW_TRACEPOINT program to every site named name (present and
 * future).  Returns a link fd: closing it (every copy) or bpfrt_link_detach() detaches;
 * the link holds the program.  Errors (-errno): EINVAL (not a raw tracepoint program, a
 * program reading past arg6, a name empty or longer than 63 bytes), EBADF, ENOMEM. */
BPFRT_API int bpfrt_probe_attach(int prog_fd, const char *name);

#if defined(__GNUC__) || defined(__clang__)
#define BPFRT_PROBE_ACTIVE_(site) \
	__builtin_expect(__atomic_load_n(&(site).active, __ATOMIC_RELAXED), 0)
#else
#define BPFRT_PROBE_ACTIVE_(site) ((site).active)
#endif

/* A probe site with exactly six arguments (any integer or pointer types). */
#define BPFRT_PROBE6(name, a1, a2, a3, a4, a5, a6)                                            \
	do {                                                                                  \
		static struct bpfrt_probe bpfrt_probe_site_ = BPFRT_PROBE_INIT(name);         \
		if (BPFRT_PROBE_ACTIVE_(bpfrt_probe_site_))                                   \
			bpfrt_probe_fire(&bpfrt_probe_site_, (uint64_t)(a1), (uint64_t)(a2),  \
					 (uint64_t)(a3), (uint64_t)(a4), (uint64_t)(a5),      \
					 (uint64_t)(a6));                                     \
	} while (0)

#define BPFRT_PROBE_PICK_(name, a1, a2, a3, a4, a5, a6, ...) \
	BPFRT_PROBE6(name, a1, a2, a3, a4, a5, a6)

/* BPFRT_PROBE("provider:name", up to six arguments): a probe site. */
#define BPFRT_PROBE(...) BPFRT_PROBE_PICK_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

#ifdef __cplusplus
}
#endif

#endif
