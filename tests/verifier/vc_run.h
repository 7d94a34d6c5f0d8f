/* vc_run.h - running one verifier case through bpfrt's verifier and reducing a kernel
 * style log to its first error line; shared by the case runner and the oracle test. */
#ifndef BPFRT_TESTS_VERIFIER_VC_RUN_H
#define BPFRT_TESTS_VERIFIER_VC_RUN_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/case.h"

#define VC_LOG_SIZE (4u << 20)

struct vc_outcome {
	int err;          /* 0 or positive errno */
	char msg[256];    /* first error line */
	uint32_t processed; /* "processed N insns" of the log, 0 when absent */
};

/* the count of the log's statistics line, 0 when there is none */
static uint32_t vc_processed(const char *log)
{
	const char *q = strstr(log, "processed ");

	return q ? (uint32_t)strtoul(q + 10, NULL, 10) : 0;
}

static int vc_map_info(void *arg, int fd, struct brt_map_info *out)
{
	const struct vcase *c = arg;

	if (fd < 0 || fd >= VC_MAX_MAPS || !c->maps[fd].type)
		return -EBADF;
	memset(out, 0, sizeof(*out));
	out->type = c->maps[fd].type;
	out->key_size = c->maps[fd].key_size;
	out->value_size = c->maps[fd].value_size;
	out->max_entries = c->maps[fd].max_entries;
	out->map_flags = c->maps[fd].flags;
	out->frozen_rdonly = c->maps[fd].frozen && (c->maps[fd].flags & BPF_F_RDONLY_PROG);
	if (c->maps[fd].value_size <= sizeof(c->maps[fd].data))
		out->rodata = c->maps[fd].data;
	return 0;
}

/* The kernel's fault line: the last non-empty line before the statistics, skipping the
 * state dumps that follow "infinite loop detected" (the kernel-oracle's rule). */
static void vc_first_error(const char *log, char *out, size_t outlen)
{
	const char *p = log, *best = NULL;
	size_t best_len = 0;

	out[0] = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *stats = NULL;

		for (const char *q = p; q < p + len; q++)
			if (!strncmp(q, "processed ", 10) && strstr(q, " insns (limit ")) {
				stats = q;
				break;
			}
		if (stats) {
			/* a message printed without its newline sticks to the statistics */
			if (stats > p) {
				best = p;
				best_len = (size_t)(stats - p);
			}
			break;
		}
		if (len && strncmp(p, "verification time", 17) && strncmp(p, "stack depth", 11) &&
		    strncmp(p, "cur state:", 10) && strncmp(p, "old state:", 10)) {
			best = p;
			best_len = len;
		}
		p = e ? e + 1 : p + len;
	}
	if (best) {
		if (best_len >= outlen)
			best_len = outlen - 1;
		memcpy(out, best, best_len);
		out[best_len] = 0;
	}
}

#define VC_MAX_FUNCS 64

/* Subprogram starts as the verifier finds them (0, call and callback targets), sorted;
 * returns how many. */
static uint32_t vc_funcs(const struct vcase *c, uint32_t *starts)
{
	uint32_t n = 1;

	starts[0] = 0;
	for (size_t i = 0; i < c->len && n < VC_MAX_FUNCS; i++) {
		const struct bpf_insn *in = &c->insns[i];
		int64_t t = (int64_t)i + in->imm + 1;
		int dup = 0;

		if (!((in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) ||
		      (in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC)) ||
		    t < 0 || t >= (int64_t)c->len)
			continue;
		for (uint32_t k = 0; k < n; k++)
			dup |= starts[k] == (uint32_t)t;
		if (!dup)
			starts[n++] = (uint32_t)t;
	}
	for (uint32_t a = 1; a < n; a++) /* insertion sort: a handful of entries */
		for (uint32_t b = a; b > 0 && starts[b - 1] > starts[b]; b--) {
			uint32_t t = starts[b];

			starts[b] = starts[b - 1];
			starts[b - 1] = t;
		}
	return n;
}

/* VC_LOG2=<case name>: that case runs at log level 2 on both sides and each writes its
 * log to <build>/vc-<side>.log, to see where processed counts part */
static inline int vc_log2(const struct vcase *c)
{
	const char *want = getenv("VC_LOG2");

	return want && !strcmp(want, c->name);
}

static inline void vc_save_log(const char *side, const char *log)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/vc-%s.log", BPFRT_BINARY_DIR, side);
	f = fopen(path, "w");
	if (f) {
		fputs(log, f);
		fclose(f);
	}
}

/* bpfrt's verifier at log level `level` into log (log_size bytes) */
static inline void vc_run_ours_log(const struct vcase *c, struct vc_outcome *o, uint32_t level,
				   char *log, uint32_t log_size)
{
	uint32_t starts[VC_MAX_FUNCS], nfuncs = vc_funcs(c, starts);
	uint8_t linkage[VC_MAX_FUNCS];
	struct brt_verify_opts opts = {
		.prog_type = c->prog_type,
		.expected_attach_type = c->attach,
		.priv = c->priv,
		.prog_flags = c->prog_flags,
		.gpl = !c->non_gpl,
		.log_level = level,
		.log_buf = log,
		.log_size = log_size,
		.map_info = vc_map_info,
		.map_arg = (void *)(uintptr_t)c,
	};
	struct brt_verify_result res;
	int err;

	for (uint32_t i = 0; i < nfuncs; i++)
		linkage[i] = (c->global_funcs >> i) & 1; /* BTF_FUNC_GLOBAL is 1 */
	if (c->btf) {
		opts.func_linkage = linkage;
		opts.nfuncs = nfuncs;
		opts.btf_info = 1; /* the kernel side gets func_info too */
	}
	log[0] = 0;
	err = brt_verify(c->insns, c->len, &opts, &res);
	o->err = -err;
	o->msg[0] = 0;
	o->processed = vc_processed(log);
	if (vc_log2(c))
		vc_save_log("bpfrt", log);
	if (err)
		vc_first_error(log, o->msg, sizeof(o->msg));
}

/* At level 1 (2 for VC_LOG2's case, whose log is saved) */
static inline void vc_run_ours(const struct vcase *c, struct vc_outcome *o)
{
	static char log[VC_LOG_SIZE];

	vc_run_ours_log(c, o, vc_log2(c) ? 2 : 1, log, VC_LOG_SIZE);
}

#endif
