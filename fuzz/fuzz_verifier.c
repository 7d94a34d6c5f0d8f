/* fuzz_verifier.c - fuzz target for the verifier (src/verifier/): any program, of any type
 * and privilege, with maps behind fds 1-5, must get 0 or an errno other than EFAULT (the
 * internal-error code) and, when the walk ran, a NUL-terminated log - never a crash, a hang
 * or a leak.
 * Input: byte 0 picks the program type (netfilter's expected attach type BPF_NETFILTER),
 * byte 1 the privilege, log flags and whether the program has func_info (every function
 * static: callbacks allowed), the rest are instructions.  Programs with a backward jump are verified unprivileged (rejected at once):
 * a privileged loop may legitimately walk the full 1,000,000-instruction budget, seconds
 * under ASan, which would starve a 20-second run; bounded loops have their table tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "isa/isa.h"
#include "verifier/verifier.h"

static const uint32_t types[] = {
	BPF_PROG_TYPE_SOCKET_FILTER, BPF_PROG_TYPE_XDP,	       BPF_PROG_TYPE_SCHED_CLS,
	BPF_PROG_TYPE_KPROBE,	     BPF_PROG_TYPE_TRACEPOINT, BPF_PROG_TYPE_RAW_TRACEPOINT,
	BPF_PROG_TYPE_CGROUP_SKB,    BPF_PROG_TYPE_PERF_EVENT,
	/* appended (existing seeds' byte 0 keeps its type): sock_ops' header option helpers
	 * (bpf_load/store/reserve_hdr_opt), netfilter's BTF-typed context pointers */
	BPF_PROG_TYPE_SOCK_OPS,	     BRT_PROG_TYPE_NETFILTER,
};

static const unsigned char rodata[12] = "hello\0BPF\0\xff";

/* fd 4 and 5: frozen read-only arrays, whose constant-offset loads read rodata[] */
/* ptr: the map's identity, reported back in call_maps */
static char ids[5];
static const struct brt_map_info maps[] = {
	{ .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 16,
	  .ptr = &ids[0] },
	{ .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 64, .max_entries = 4,
	  .ptr = &ids[1] },
	{ .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096, .ptr = &ids[2] },
	{ .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = sizeof(rodata),
	  .max_entries = 1, .map_flags = BPF_F_RDONLY_PROG, .frozen_rdonly = 1, .rodata = rodata,
	  .ptr = &ids[3] },
	{ .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = sizeof(rodata),
	  .max_entries = 2, .map_flags = BPF_F_RDONLY_PROG, .frozen_rdonly = 1, .rodata = rodata,
	  .ptr = &ids[4] },
};

static int has_back_edge(const struct bpf_insn *insns, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t cls = BPF_CLASS(insns[i].code), op = BPF_OP(insns[i].code);

		if (cls != BPF_JMP && cls != BPF_JMP32)
			continue;
		if (op == BPF_CALL) {
			if (insns[i].src_reg == BPF_PSEUDO_CALL && insns[i].imm < 0)
				return 1;
		} else if (op == BPF_JA && cls == BPF_JMP32) {
			if (insns[i].imm < 0)
				return 1;
		} else if (op != BPF_EXIT && insns[i].off < 0) {
			return 1;
		}
	}
	return 0;
}

static int map_info(void *arg, int fd, struct brt_map_info *out)
{
	(void)arg;
	if (fd < 1 || fd > (int)(sizeof(maps) / sizeof(maps[0])))
		return -EBADF;
	*out = maps[fd - 1];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t all_static[256]; /* BTF_FUNC_STATIC for every function */
	struct brt_verify_opts opts = { 0 };
	struct brt_verify_result res;
	struct bpf_insn *insns;
	char log[4096];
	size_t n;
	int rc;

	if (size < 2)
		return 0;
	n = (size - 2) / sizeof(*insns);
	if (n > 4096) /* longer inputs only slow the search down */
		n = 4096;
	insns = malloc(n ? n * sizeof(*insns) : 1);
	if (!insns)
		return 0;
	memcpy(insns, data + 2, n * sizeof(*insns));
	opts.prog_type = types[data[0] % (sizeof(types) / sizeof(types[0]))];
	if (opts.prog_type == BRT_PROG_TYPE_NETFILTER)
		opts.expected_attach_type = BRT_NETFILTER;
	opts.priv = has_back_edge(insns, n) ? BRT_PRIV_UNPRIV : (data[1] & 3) % 3;
	opts.gpl = !(data[1] & 4);
	opts.log_level = (data[1] >> 3) & 7; /* levels 1, 2 and stats, in a small buffer */
	opts.log_buf = opts.log_level ? log : NULL;
	opts.log_size = opts.log_level ? sizeof(log) : 0;
	opts.map_info = map_info;
	if (data[1] & 0x40) {
		opts.func_linkage = all_static;
		opts.nfuncs = sizeof(all_static);
	}
	opts.call_maps = calloc(n ? n : 1, sizeof(*opts.call_maps));
	memset(log, 'x', sizeof(log));
	rc = brt_verify(insns, n, &opts, &res);
	/* a map bound to a call is one of ours, at a helper call of an accepted program */
	for (size_t i = 0; opts.call_maps && i < n; i++)
		if (opts.call_maps[i] &&
		    (rc || insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg ||
		     (char *)opts.call_maps[i] < ids || (char *)opts.call_maps[i] >= ids + 5))
			abort();
	free(opts.call_maps);
	/* 0 or a negative errno; -EFAULT is the verifier's "internal error", a bug. */
	if (rc > 0 || rc < -4095 || rc == -EFAULT)
		abort();
	/* When the walk ran, the log ends with "processed N insns ..." and a NUL. */
	if (opts.log_level && (rc == 0 || rc == -EACCES) && !memchr(log, 0, sizeof(log)))
		abort();
	free(insns);
	return 0;
}
