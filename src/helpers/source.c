/* source.c - the registry's answers to vm and the verifier: the built-in helpers
 * (registry.c) first, then those the host registered (host.c).  Both folders sit below
 * the registry, so it hands them these answers (struct brt_helper_source,
 * vm/helper_proto.h) when the library is loaded, before any program can be loaded.
 * Design: helpers.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "helpers/helpers.h"
#include "verifier/verifier.h"
#include "vm/vm.h"

const struct brt_helper_proto *brt_helper_get(uint32_t id)
{
	const struct brt_helper_proto *p = brt_helper_builtin(id);

	return p ? p : brt_helper_host_get(id);
}

brt_helper_fn *brt_helper_table_new(size_t *n)
{
	size_t nb;
	const brt_helper_fn *fns = brt_helper_default_table(&nb);
	uint32_t host_max = brt_helper_host_max_id();
	size_t nr = host_max >= nb ? (size_t)host_max + 1 : nb;
	size_t nk = BRT_KFUNC_HELPER_BASE + BRT_KFUNC_COUNT;
	brt_helper_fn *table;

	if (nr < nk)
		nr = nk;
	table = calloc(nr, sizeof(*table));
	if (!table)
		return NULL;
	for (size_t id = 0; id < nb; id++)
		if (brt_helper_builtin((uint32_t)id))
			table[id] = fns[id];
	brt_helper_host_fill(table, nr);
	/* the kernel functions a verified program's kfunc calls became (api/prog.c) */
	for (size_t k = 0; k < BRT_KFUNC_COUNT; k++)
		table[BRT_KFUNC_HELPER_BASE + k] = brt_kfunc_fns[k];
	*n = nr;
	return table;
}

/* Every verified program's vm takes the same table (a copy per program was 2.7 KB to
 * allocate and ~200 lookups to fill, ~1.5 % of loading an object of eight tiny
 * programs).  Rebuilt once the host has registered more helpers; the tables it replaces
 * stay (vms still use them), as many as there were such changes between loads. */
struct shared_table {
	struct shared_table *prev;
	uint32_t host_count; /* brt_helper_host_count() before it was built */
	size_t n;
	brt_helper_fn *table;
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_table *_Atomic shared;

const brt_helper_fn *brt_helper_table_shared(size_t *n)
{
	uint32_t host = brt_helper_host_count();
	struct shared_table *s = atomic_load_explicit(&shared, memory_order_acquire);

	if (!s || s->host_count != host) {
		pthread_mutex_lock(&shared_lock);
		s = atomic_load_explicit(&shared, memory_order_relaxed);
		if (!s || s->host_count != host) {
			struct shared_table *t = calloc(1, sizeof(*t));

			/* a registration racing with this build may or may not be in it: its
			 * count, read before, makes the next load build again */
			if (t && (t->table = brt_helper_table_new(&t->n))) {
				t->host_count = host;
				t->prev = s;
				atomic_store_explicit(&shared, t, memory_order_release);
				s = t;
			} else {
				free(t);
				s = NULL;
			}
		}
		pthread_mutex_unlock(&shared_lock);
		if (!s)
			return NULL;
	}
	*n = s->n;
	return s->table;
}

static const struct brt_helper_source source = {
	.get = brt_helper_get,
	.table_new = brt_helper_table_new,
	.table_shared = brt_helper_table_shared,
};

/* Run when the library is loaded.  libbpfrt.a is one object (CMakeLists.txt), so a
 * static link that keeps any of the library keeps this too. */
__attribute__((constructor)) static void helpers_hand_down(void)
{
	brt_vm_set_helper_source(&source);
	brt_verify_set_helper_source(&source);
}
