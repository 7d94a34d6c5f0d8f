/* tail_call.c - bpf_tail_call(): jump to the program in slot r3 of prog array r2 with the
 * same context.  An empty slot or an index out of range falls through, as in the kernel;
 * brt_vm_tail_call() (src/vm/vm.c) counts the chain (33 at most) and replaces the running
 * program: JIT code jumps to JIT code, anything else runs the callee nested and stops the
 * caller with its result.
 */
#include "api/api.h"
#include "util/util.h"
#include "vm/vm.h"

uint64_t brt_helper_tail_call(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	struct brt_prog *callee;
	struct brt_obj *obj;

	(void)r4, (void)r5;
	if (!map || r3 > UINT32_MAX)
		return 0;
	obj = brt_prog_array_get(map, (uint32_t)r3);
	if (!obj)
		return 0;
	callee = (struct brt_prog *)(void *)obj;
	if (!callee->vm) /* another process's program (attached by prog.c) */
		return 0;
	return brt_vm_tail_call(callee->vm, &callee->pm, r1, ctx);
}
