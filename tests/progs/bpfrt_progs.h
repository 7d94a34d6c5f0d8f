/* bpfrt_progs.h - the few libbpf conventions the test programs in tests/progs/ use (SEC(),
 * BTF-defined map macros, helper declarations), written for bpfrt so the corpus builds
 * with nothing but clang (or GCC 12's bpf-gcc) and <linux/bpf.h>.  Compile with clang -O2 -g -target bpf -c.
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

/* Helpers: a call through a constant function pointer becomes "call <id>".  GCC 12's BPF
 * back end (Debian's bpf-gcc, tests/gcc) leaves such a call an indirect one at -O2 when the
 * constant is not propagated into it (it refuses "indirect call in function"): there a helper
 * is declared with its kernel_helper attribute, GCC 12's own form (GCC 13 dropped it for the
 * pointer form). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#define BPFRT_HELPER(ret, name, args, id) ret name args __attribute__((kernel_helper(id)))
#else
#define BPFRT_HELPER(ret, name, args, id) static ret (*name) args = (void *)(id)
#endif

BPFRT_HELPER(void *, bpf_map_lookup_elem, (void *map, const void *key), BPF_FUNC_map_lookup_elem);
BPFRT_HELPER(long, bpf_map_update_elem,
	     (void *map, const void *key, const void *value, unsigned long long flags),
	     BPF_FUNC_map_update_elem);
BPFRT_HELPER(long, bpf_map_delete_elem, (void *map, const void *key), BPF_FUNC_map_delete_elem);
BPFRT_HELPER(long, bpf_tail_call, (void *ctx, void *prog_array, unsigned int index),
	     BPF_FUNC_tail_call);
BPFRT_HELPER(unsigned long long, bpf_ktime_get_ns, (void), BPF_FUNC_ktime_get_ns);
BPFRT_HELPER(long, bpf_loop,
	     (unsigned int nr_loops, void *callback_fn, void *callback_ctx, unsigned long long flags),
	     BPF_FUNC_loop);
BPFRT_HELPER(long, bpf_for_each_map_elem,
	     (void *map, void *callback_fn, void *callback_ctx, unsigned long long flags),
	     BPF_FUNC_for_each_map_elem);

#endif
