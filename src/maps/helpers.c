/* helpers.c - the map helpers programs call (bpf_map_lookup_elem and friends), rows of
 * the helper registry (BRT_MAPS_HELPERS).  A lookup returns a pointer into the map's shared region and, in the
 * checked engine, grants the program that value.  In the checked engine (unverified
 * programs) every map pointer is checked against the program's own maps and every key or
 * value pointer against what the program may access, so a bad argument is an error
 * return, never a wild access.
 */
#include <errno.h>

#include "maps/maps.h"
#include "vm/vm.h"

struct brt_map *brt_map_helper_arg(uint64_t reg, struct bpfrt_run_ctx *ctx)
{
	const struct brt_prog_maps *pm;
	struct brt_map *map = (struct brt_map *)(uintptr_t)reg;

	if (!ctx->checked)
		return map;
	pm = bpfrt_run_user(ctx);
	if (!pm || pm->magic != BRT_PROG_MAPS_MAGIC)
		return NULL;
	for (uint32_t i = 0; i < pm->n; i++)
		if (pm->maps[i] == map)
			return map;
	for (uint32_t i = 0; i < pm->n; i++) /* an inner map a lookup returned */
		if (brt_map_in_map_holds(pm->maps[i], map))
			return map;
	return NULL;
}

static int readable(struct bpfrt_run_ctx *ctx, uint64_t p, uint32_t len)
{
	return len == 0 || bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)p, len, 0);
}

uint64_t brt_helper_map_lookup_elem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	void *v;

	(void)r3, (void)r4, (void)r5;
	if (!map || !map->ops->lookup || !readable(ctx, r2, map->key_size))
		return 0;
	v = map->ops->lookup(map, (const void *)(uintptr_t)r2);
	/* a map of maps returns the inner map: a handle for the helpers, not memory */
	if (v && ctx->checked && map->ops->lookup_size) {
		if (bpfrt_run_grant(ctx, v, map->ops->lookup_size, 0))
			return 0;
	} else if (v && ctx->checked && map->ops != &brt_map_in_map_ops &&
		   bpfrt_run_grant(ctx, v, map->value_size, !(map->flags & BPF_F_RDONLY_PROG))) {
		return 0;
	}
	return (uint64_t)(uintptr_t)v;
}

/* bpf_map_lookup_percpu_elem(map, key, cpu): another CPU's value of a per-CPU array or
 * hash (the verifier lets no other map type in); a CPU past the possible ones is NULL, as
 * the kernel's cpu >= nr_cpu_ids.  Only the 32 bits of cpu count (the kernel's u32). */
uint64_t brt_helper_map_lookup_percpu_elem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
					   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	uint32_t cpu = (uint32_t)r3;
	void *v;

	(void)r4, (void)r5;
	if (!map || !map->ops->lookup_cpu || !brt_map_is_percpu(map->type))
		return 0;
	if (cpu >= map->ncpus || !readable(ctx, r2, map->key_size))
		return 0;
	v = map->ops->lookup_cpu(map, (const void *)(uintptr_t)r2, cpu);
	if (v && ctx->checked &&
	    bpfrt_run_grant(ctx, v, map->value_size, !(map->flags & BPF_F_RDONLY_PROG)))
		return 0;
	return (uint64_t)(uintptr_t)v;
}

uint64_t brt_helper_map_update_elem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);

	(void)r5;
	if (!map || !readable(ctx, r2, map->key_size) || !readable(ctx, r3, map->value_size))
		return (uint64_t)-EINVAL;
	if (!map->ops->prog_update)
		return (uint64_t)(map->ops->push ? -EINVAL : -BRT_ENOTSUPP);
	if (map->lock_off >= 0) /* the value's bpf_spin_lock word is not the program's */
		return (uint64_t)(int64_t)brt_map_lock_prog_update(map, (const void *)(uintptr_t)r2,
								   (const void *)(uintptr_t)r3, r4);
	return (uint64_t)(int64_t)map->ops->prog_update(map, (const void *)(uintptr_t)r2,
							(const void *)(uintptr_t)r3, r4);
}

uint64_t brt_helper_map_delete_elem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);

	(void)r3, (void)r4, (void)r5;
	if (!map || !readable(ctx, r2, map->key_size))
		return (uint64_t)-EINVAL;
	if (!map->ops->delete)
		return (uint64_t)-EINVAL;
	return (uint64_t)(int64_t)map->ops->delete(map, (const void *)(uintptr_t)r2);
}

uint64_t brt_helper_map_push_elem(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);

	(void)r4, (void)r5;
	if (!map || !map->ops->push || !readable(ctx, r2, map->value_size))
		return (uint64_t)-EINVAL;
	return (uint64_t)(int64_t)map->ops->push(map, (const void *)(uintptr_t)r2, r3);
}

static uint64_t pop_or_peek(uint64_t r1, uint64_t r2, struct bpfrt_run_ctx *ctx, int pop)
{
	struct brt_map *map = brt_map_helper_arg(r1, ctx);
	void *dst = (void *)(uintptr_t)r2;

	/* a bloom filter peeks without popping, and reads the value */
	if (!map || !(pop ? map->ops->pop : map->ops->peek) ||
	    (ctx->checked && !bpfrt_run_access_ok(ctx, dst, map->value_size,
						  map->type != BPF_MAP_TYPE_BLOOM_FILTER)))
		return (uint64_t)-EINVAL;
	return (uint64_t)(int64_t)(pop ? map->ops->pop(map, dst) : map->ops->peek(map, dst));
}

BRT_HELPER_VARIANT(brt_helper_map_pop_elem, pop_or_peek, 1)
BRT_HELPER_VARIANT(brt_helper_map_peek_elem, pop_or_peek, 0)
