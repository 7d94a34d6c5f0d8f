/* jit_lookup.c - at BPF_PROG_LOAD, bind every bpf_map_lookup_elem call to the map the
 * verifier saw there on all paths (its call_maps output, the kernel's map_ptr_state), so
 * the JIT looks up itself: an array's value address computed inline (the kernel's
 * map_gen_lookup), a hash map's key hashed and its bucket's chain probed inline
 * (maps/hash.c describes the layout), any other type's lookup called directly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "jit/jit.h"
#include "maps/maps.h"
#include "vm/vm.h"

void brt_jit_hash_layout_of(const struct brt_hash_probe *hp, struct brt_jit_hash_layout *out)
{
	*out = (struct brt_jit_hash_layout){
		.buckets = (uint64_t)(uintptr_t)hp->buckets,
		.elems = (uint64_t)(uintptr_t)hp->elems,
		.lru_clock = (uint64_t)(uintptr_t)hp->lru_clock,
		.n_elems_live = (uint64_t)(uintptr_t)hp->n_elems_live,
		.stamp_off = hp->stamp_off,
		.n_buckets = hp->n_buckets, .n_elems = hp->n_elems,
		.elem_size = hp->elem_size, .key_size = hp->key_size,
		.value_off = hp->value_off, .seed = hp->seed,
		.bucket_size = hp->bucket_size, .head_off = hp->head_off,
		.next_off = hp->next_off, .hash_off = hp->hash_off, .seq_off = hp->seq_off,
		.key_off = hp->key_off,
	};
}

static int held(const struct brt_prog_maps *pm, const struct brt_map *map)
{
	for (uint32_t i = 0; i < pm->n; i++)
		if (pm->maps[i] == map)
			return 1;
	return 0;
}

int brt_prog_bind_lookups(struct bpfrt_vm *vm, const struct bpf_insn *insns, size_t n,
			  void *const *call_maps, const struct brt_prog_maps *pm)
{
	struct brt_jit_lookup *l = NULL;
	size_t nl = 0, cap = 0;
	int err;

	if (!call_maps || brt_vm_engine(vm) != BPFRT_ENGINE_JIT)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct brt_map *map = call_maps[i];
		struct brt_jit_lookup *e;
		struct brt_hash_probe hp;
		void *base;

		if (!map || insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg ||
		    insns[i].imm != BPF_FUNC_map_lookup_elem)
			continue;
		/* the program holds a reference on every map it names: the binding outlives
		 * nothing it points at */
		if (!held(pm, map) || !map->ops->lookup)
			continue;
		if (nl == cap) {
			cap = cap ? cap * 2 : 8;
			e = realloc(l, cap * sizeof(*l));
			if (!e) {
				free(l);
				return -ENOMEM;
			}
			l = e;
		}
		e = &l[nl++];
		memset(e, 0, sizeof(*e));
		e->insn = (uint32_t)i;
		e->kind = BRT_JIT_LOOKUP_OP;
		e->helper = brt_helper_map_lookup_elem;
		memcpy(&e->op, &map->ops->lookup, sizeof(e->op)); /* code address as data */
		if (!brt_array_values(map, &base, &e->stride)) {
			e->kind = BRT_JIT_LOOKUP_ARRAY;
			e->base = (uint64_t)(uintptr_t)base;
			e->max_entries = map->max_entries;
		} else if (!brt_percpu_array_values(map, &base, &e->stride, &e->ncpus)) {
			e->kind = BRT_JIT_LOOKUP_PERCPU_ARRAY;
			e->base = (uint64_t)(uintptr_t)base;
			e->max_entries = map->max_entries;
			/* brt_cpu() is the CPU modulo brt_ncpus(): the inline path takes CPUs
			 * below both, the map's lookup the rest */
			if (brt_ncpus() < e->ncpus)
				e->ncpus = brt_ncpus();
		} else if (!brt_hash_probe(map, &hp)) {
			e->kind = BRT_JIT_LOOKUP_HASH;
			brt_jit_hash_layout_of(&hp, &e->hash);
		}
	}
	err = nl ? brt_vm_bind_lookups(vm, l, nl) : 0;
	free(l);
	return err;
}
