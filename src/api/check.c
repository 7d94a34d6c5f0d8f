/* check.c - the one function BPF_PROG_LOAD calls to decide whether a program may load.
 * Until the verifier (src/verifier) is wired in here, it is the structural check of
 * src/isa (every instruction decodes, jumps land inside, lddw is complete), and loaded
 * programs run in the checked engine, which is safe for any program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "isa/isa.h"

#define MAX_INSNS 1000000 /* BPF_COMPLEXITY_LIMIT_INSNS */

int brt_api_check_prog(const struct brt_prog_check *pc)
{
	char msg[256];
	int err;

	err = brt_isa_check_prog(pc->insns, pc->n, MAX_INSNS, msg, sizeof(msg));
	if (err && pc->log_level && pc->log_buf && pc->log_size)
		snprintf(pc->log_buf, pc->log_size, "%s\n", msg);
	return err;
}
