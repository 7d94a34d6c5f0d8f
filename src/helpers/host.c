/* host.c - bpfrt_helper_register(), the one call that adds a helper: to one vm (its table,
 * vm.c), or process-wide with a prototype.  The verifier finds process-wide helpers after
 * the built-in ones (brt_helper_get()), and new vms copy their functions into their tables.
 *
 * There is no fixed count: the table is indexed by id in pages of 256 slots, allocated as
 * ids arrive, so every id in 1..BRT_VM_MAX_HELPER_ID that no built-in helper uses can be
 * registered and the only other limit is memory.  Entries are added under a mutex and
 * never change or move once published, so lookups read them without locking.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpfrt.h"
#include "helpers/helpers.h"
#include "util/util.h"
#include "vm/vm.h"

/* The public kinds are the verifier's kinds, value for value. */
#define SAME(pub, in) _Static_assert((int)BPFRT_HELPER_##pub == (int)BRT_##in, #pub)
SAME(ARG_DONTCARE, ARG_DONTCARE);
SAME(ARG_ANYTHING, ARG_ANYTHING);
SAME(ARG_CONST_MAP_PTR, ARG_CONST_MAP_PTR);
SAME(ARG_PTR_TO_MAP_KEY, ARG_PTR_TO_MAP_KEY);
SAME(ARG_PTR_TO_MAP_VALUE, ARG_PTR_TO_MAP_VALUE);
SAME(ARG_PTR_TO_MEM, ARG_PTR_TO_MEM);
SAME(ARG_PTR_TO_UNINIT_MEM, ARG_PTR_TO_UNINIT_MEM);
SAME(ARG_CONST_SIZE, ARG_CONST_SIZE);
SAME(ARG_CONST_SIZE_OR_ZERO, ARG_CONST_SIZE_OR_ZERO);
SAME(ARG_PTR_TO_CTX, ARG_PTR_TO_CTX);
SAME(ARG_PTR_TO_STACK, ARG_PTR_TO_STACK);
SAME(RET_INTEGER, RET_INTEGER);
SAME(RET_VOID, RET_VOID);
#undef SAME

#define NAME_SIZE 64 /* a name's bytes, its NUL included */

struct host_helper {
	struct brt_helper_proto proto;
	brt_helper_fn fn;
	char name[NAME_SIZE];
};

#define SLOT_BITS 8
#define SLOTS (1u << SLOT_BITS)
#define NR_PAGES ((BRT_VM_MAX_HELPER_ID >> SLOT_BITS) + 1)

/* pages[id >> SLOT_BITS][id % SLOTS]: both levels published with release stores */
static struct host_helper **pages[NR_PAGES];
static uint32_t max_id; /* highest registered id, 0 when none; atomic */
static uint32_t count;  /* registrations so far; atomic */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define KNOWN_SIZE (offsetof(struct bpfrt_helper_proto, bpfrt_helper_proto__last) + \
		    sizeof(((struct bpfrt_helper_proto *)0)->bpfrt_helper_proto__last))

static int arg_known(int a)
{
	return (a >= BPFRT_HELPER_ARG_DONTCARE && a <= BPFRT_HELPER_ARG_PTR_TO_CTX) ||
	       a == BPFRT_HELPER_ARG_PTR_TO_STACK;
}

static int is_mem(int a)
{
	return a == BRT_ARG_PTR_TO_MEM || a == BRT_ARG_PTR_TO_UNINIT_MEM ||
	       a == BRT_ARG_PTR_TO_MEM_WRITE || a == BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL;
}

static int is_size(int a)
{
	return a == BRT_ARG_CONST_SIZE || a == BRT_ARG_CONST_SIZE_OR_ZERO;
}

/* The shapes the verifier's argument checks rely on (sizes pair with pointers, maps come
 * before their keys). */
static int args_ok(const enum bpfrt_helper_arg *args)
{
	int map = 0, done = 0;

	for (int i = 0; i < 5; i++) {
		int a = args[i];

		if (!arg_known(a) || (done && a != BRT_ARG_DONTCARE))
			return 0;
		done |= a == BRT_ARG_DONTCARE;
		map |= a == BRT_ARG_CONST_MAP_PTR;
		if (is_mem(a) && (i == 4 || !is_size(args[i + 1])))
			return 0;
		if (is_size(a) && (i == 0 || !is_mem(args[i - 1])))
			return 0;
		if ((a == BRT_ARG_PTR_TO_MAP_KEY || a == BRT_ARG_PTR_TO_MAP_VALUE) && !map)
			return 0;
	}
	return 1;
}

static const struct host_helper *find(uint32_t id)
{
	struct host_helper **page;

	if (id > BRT_VM_MAX_HELPER_ID)
		return NULL;
	page = __atomic_load_n(&pages[id >> SLOT_BITS], __ATOMIC_ACQUIRE);
	return page ? __atomic_load_n(&page[id % SLOTS], __ATOMIC_ACQUIRE) : NULL;
}

const struct brt_helper_proto *brt_helper_host_get(uint32_t id)
{
	const struct host_helper *h = find(id);

	return h ? &h->proto : NULL;
}

uint32_t brt_helper_host_max_id(void)
{
	return __atomic_load_n(&max_id, __ATOMIC_ACQUIRE);
}

uint32_t brt_helper_host_count(void)
{
	return __atomic_load_n(&count, __ATOMIC_ACQUIRE);
}

void brt_helper_host_fill(brt_helper_fn *table, size_t n)
{
	uint32_t max = brt_helper_host_max_id();

	for (uint32_t pg = 0; pg <= max >> SLOT_BITS; pg++) {
		struct host_helper **page = __atomic_load_n(&pages[pg], __ATOMIC_ACQUIRE);

		for (uint32_t i = 0; page && i < SLOTS; i++) {
			const struct host_helper *h = __atomic_load_n(&page[i], __ATOMIC_ACQUIRE);
			size_t id = (size_t)pg * SLOTS + i;

			if (h && id < n)
				table[id] = h->fn;
		}
	}
}

/* Publish a new entry for p (its checks done); called with the lock held.  0 or -ENOMEM. */
static int add(const struct bpfrt_helper_proto *p)
{
	struct host_helper ***slot = &pages[p->id >> SLOT_BITS];
	struct host_helper **page = *slot;
	struct host_helper *h;

	if (!page) {
		page = calloc(SLOTS, sizeof(*page));
		if (!page)
			return -ENOMEM;
		__atomic_store_n(slot, page, __ATOMIC_RELEASE);
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	strcpy(h->name, p->name);
	h->fn = p->fn;
	h->proto = (struct brt_helper_proto){
		.id = p->id,
		.name = h->name,
		.gpl_only = BRT_OPTS_GET(p, gpl_only, false),
		.ret = (uint8_t)p->ret,
		.host = 1,
	};
	for (int i = 0; i < 5; i++)
		h->proto.args[i] = (uint8_t)p->args[i];
	__atomic_store_n(&page[p->id % SLOTS], h, __ATOMIC_RELEASE);
	if (p->id > max_id)
		__atomic_store_n(&max_id, p->id, __ATOMIC_RELEASE);
	__atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
	return 0;
}

_Static_assert(BPFRT_HELPER_MAX_ID == BRT_VM_MAX_HELPER_ID, "one highest helper id");

/* A vm's program is not verified: only the function matters (name is for messages). */
static int register_vm(struct bpfrt_vm *vm, const struct bpfrt_helper_proto *p)
{
	if (!p || !brt_opts_valid(p, KNOWN_SIZE, "bpfrt_helper_proto") || !BRT_OPTS_HAS(p, fn) ||
	    !p->fn || p->id > BRT_VM_MAX_HELPER_ID) {
		errno = EINVAL;
		return -EINVAL;
	}
	return brt_vm_set_helper(vm, p->id, p->name, p->fn);
}

int bpfrt_helper_register(struct bpfrt_vm *vm, const struct bpfrt_helper_proto *p)
{
	int ret;

	if (vm)
		return register_vm(vm, p);
	if (!p || !brt_opts_valid(p, KNOWN_SIZE, "bpfrt_helper_proto") ||
	    !BRT_OPTS_HAS(p, args) || !p->fn || !p->name || !p->id ||
	    p->id > BRT_VM_MAX_HELPER_ID || strlen(p->name) >= NAME_SIZE ||
	    (p->ret != BPFRT_HELPER_RET_INTEGER && p->ret != BPFRT_HELPER_RET_VOID) ||
	    !args_ok(p->args)) {
		errno = EINVAL;
		return -EINVAL;
	}
	/* built-in ids, and those a verified kfunc call is sent to */
	if (brt_helper_builtin(p->id) || (p->id >= BRT_KFUNC_HELPER_BASE &&
					  p->id < BRT_KFUNC_HELPER_BASE + BRT_KFUNC_COUNT)) {
		errno = EEXIST;
		return -EEXIST;
	}
	pthread_mutex_lock(&lock);
	ret = find(p->id) ? -EEXIST : add(p);
	pthread_mutex_unlock(&lock);
	if (ret)
		errno = -ret;
	return ret;
}
