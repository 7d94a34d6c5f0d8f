/* for_each.c - bpf_for_each_map_elem(): a function of the program called for each element
 * of an array or hash map (the kernel's map_for_each_callback), through
 * brt_vm_call_func() on the run's engine.  The callback gets (map, &key, &value, ctx);
 * it returns 0 to go on, 1 to stop.  The helper returns how many elements it visited.
 */
#include <errno.h>
#include <string.h>

#include "maps/maps.h"
#include "vm/vm.h"

#define MAX_KEY 512 /* the kernel's largest hash key (MAX_BPF_STACK) */

uint64_t brt_helper_for_each_map_elem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	_Alignas(8) unsigned char key[MAX_KEY], next[MAX_KEY];
	uint64_t visited = 0, steps = 0;
	int more;

	(void)r5;
	if (!map || r4 || map->key_size > MAX_KEY || !map->ops->lookup || !map->ops->get_next_key)
		return (uint64_t)-EINVAL;
	more = !map->ops->get_next_key(map, NULL, next);
	/* a callback that deletes the next key restarts a hash walk: bound it */
	while (more && steps++ <= 2 * (uint64_t)map->max_entries) {
		uint64_t args[4];
		void *v;

		memcpy(key, next, map->key_size);
		/* the next key first: the callback may delete this element */
		more = !map->ops->get_next_key(map, key, next);
		v = map->ops->lookup(map, key);
		if (!v)
			continue;
		if (ctx->checked && (bpfrt_run_grant(ctx, key, map->key_size, 0) ||
				     bpfrt_run_grant(ctx, v, map->value_size,
						     !(map->flags & BPF_F_RDONLY_PROG))))
			return (uint64_t)-ENOMEM;
		args[0] = r1;
		args[1] = (uint64_t)(uintptr_t)key;
		args[2] = (uint64_t)(uintptr_t)v;
		args[3] = r3;
		visited++;
		if (brt_vm_call_func(ctx, r2, args, 4) || ctx->stopped)
			break;
	}
	return ctx->stopped ? 0 : visited;
}
