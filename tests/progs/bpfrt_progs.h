/* bpfrt_progs.h - the few libbpf conventions the test programs in tests/progs/ use (SEC(),
 * BTF-defined map macros, helper declarations), written for bpfrt so the corpus builds
 * with nothing but clang and <linux/bpf.h>.  Compile with clang -O2 -g -target bpf -c.
 */
#ifndef BPFRT_TESTS_PROGS_H
#define BPFRT_TESTS_PROGS_H

#include <linux/bpf.h>

#define SEC(name) __attribute__((section(name), used))
#define NOINLINE __attribute__((noinline))

/* BTF-defined maps: each property is encoded in the type of a struct member, which
 * clang describes in .BTF; the loader reads them back from there. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) __typeof__(val) *name
#define __array(name, val) __typeof__(val) *name[]

#define LIBBPF_PIN_NONE 0
#define LIBBPF_PIN_BY_NAME 1

/* The legacy SEC("maps") definition. */
struct bpf_map_def {
	unsigned int type;
	unsigned int key_size;
	unsigned int value_size;
	unsigned int max_entries;
	unsigned int map_flags;
};

/* Helpers: a call through a constant function pointer becomes "call <id>". */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
				   unsigned long long flags) = (void *)BPF_FUNC_map_update_elem;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_delete_elem;
static long (*bpf_tail_call)(void *ctx, void *prog_array, unsigned int index) =
	(void *)BPF_FUNC_tail_call;
static unsigned long long (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;
static long (*bpf_loop)(unsigned int nr_loops, void *callback_fn, void *callback_ctx,
			unsigned long long flags) = (void *)BPF_FUNC_loop;
static long (*bpf_for_each_map_elem)(void *map, void *callback_fn, void *callback_ctx,
				     unsigned long long flags) = (void *)BPF_FUNC_for_each_map_elem;

#endif
