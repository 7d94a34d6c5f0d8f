/* vc_run.h - running one verifier case through bpfrt's verifier and reducing a kernel
 * style log to its first error line; shared by the case runner and the oracle test. */
#ifndef BPFRT_TESTS_VERIFIER_VC_RUN_H
#define BPFRT_TESTS_VERIFIER_VC_RUN_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cases/case.h"

#define VC_LOG_SIZE (4u << 20)

struct vc_outcome {
	int err;          /* 0 or positive errno */
	char msg[256];    /* first error line */
};

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

static void vc_run_ours(const struct vcase *c, struct vc_outcome *o)
{
	static char log[VC_LOG_SIZE];
	struct brt_verify_opts opts = {
		.prog_type = c->prog_type,
		.expected_attach_type = c->attach,
		.priv = c->priv,
		.prog_flags = c->prog_flags,
		.gpl = !c->non_gpl,
		.log_level = 1,
		.log_buf = log,
		.log_size = VC_LOG_SIZE,
		.map_info = vc_map_info,
		.map_arg = (void *)(uintptr_t)c,
	};
	struct brt_verify_result res;
	int err;

	log[0] = 0;
	err = brt_verify(c->insns, c->len, &opts, &res);
	o->err = -err;
	o->msg[0] = 0;
	if (err)
		vc_first_error(log, o->msg, sizeof(o->msg));
}

#endif
