/* check.c - the one function BPF_PROG_LOAD calls to decide whether a program may load:
 * the verifier (src/verifier), with the caller's log_buf/log_size/log_level and the
 * program's maps resolved through the fd table.  It reports what Linux 6.18 reports,
 * messages included (unknown opcodes: "unknown opcode %02x" and the like).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "maps/maps.h"
#include "verifier/verifier.h"

/* Map fds seen by the verifier: the map's shape, not a reference (resolve_maps() takes
 * the references the loaded program keeps). */
static int map_info(void *arg, int fd, struct brt_map_info *out)
{
	struct brt_map *m;
	int err;

	(void)arg;
	err = brt_map_from_fd(fd, &m);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->type = m->type;
	out->key_size = m->key_size;
	out->value_size = m->value_size;
	out->max_entries = m->max_entries;
	out->map_flags = m->flags;
	out->ptr = m;
	brt_map_in_map_template(m, &out->inner_type, &out->inner_key_size,
				&out->inner_value_size, &out->inner_max_entries,
				&out->inner_flags);
	brt_map_put(m);
	return 0;
}

int brt_api_check_prog(const struct brt_prog_check *pc)
{
	struct brt_verify_opts opts = {
		.prog_type = pc->prog_type,
		.expected_attach_type = pc->expected_attach_type,
		.priv = BRT_PRIV_ROOT, /* bpfrt runs programs for its caller: root's rules */
		.prog_flags = pc->prog_flags,
		.gpl = pc->gpl,
		.log_level = pc->log_level,
		.log_buf = pc->log_size ? pc->log_buf : NULL,
		.log_size = pc->log_buf ? pc->log_size : 0,
		.map_info = map_info,
		.fd_array = pc->fd_array,
		.fd_array_cnt = pc->fd_array_cnt,
		.lines = pc->lines,
		.nlines = pc->nlines,
	};

	struct brt_verify_result res;
	int err;

	memset(&res, 0, sizeof(res));
	err = brt_verify(pc->insns, pc->n, &opts, &res);
	if (pc->max_ctx_offset)
		*pc->max_ctx_offset = res.max_ctx_offset;
	return err;
}
