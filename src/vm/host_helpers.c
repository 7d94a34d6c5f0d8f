/* host_helpers.c - the process-global registry of helpers a host application adds with a
 * prototype (bpfrt_helper_register()).  The verifier consults it after helpers.def, and
 * new vms copy its functions into their helper table.  Entries are appended under a mutex
 * and never change once published, so lookups read them without locking.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "bpfrt.h"
#include "util/util.h"
#include "vm/vm.h"

#define MAX_HOST_HELPERS 256

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

struct host_helper {
	struct brt_helper_proto proto;
	char name[64];
};

static struct host_helper helpers[MAX_HOST_HELPERS];
static size_t nr_published; /* entries [0, nr_published) are complete; atomic */
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
	return a == BRT_ARG_PTR_TO_MEM || a == BRT_ARG_PTR_TO_UNINIT_MEM;
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

static const struct brt_helper_proto *find(uint32_t id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (helpers[i].proto.id == id)
			return &helpers[i].proto;
	return NULL;
}

const struct brt_helper_proto *brt_helper_host_get(uint32_t id)
{
	return find(id, __atomic_load_n(&nr_published, __ATOMIC_ACQUIRE));
}

uint32_t brt_helper_host_max_id(void)
{
	size_t n = __atomic_load_n(&nr_published, __ATOMIC_ACQUIRE);
	uint32_t max = 0;

	for (size_t i = 0; i < n; i++)
		if (helpers[i].proto.id > max)
			max = helpers[i].proto.id;
	return max;
}

void brt_helper_host_fill(brt_helper_fn *table, size_t n)
{
	size_t nr = __atomic_load_n(&nr_published, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < nr; i++)
		if (helpers[i].proto.id < n)
			table[helpers[i].proto.id] = helpers[i].proto.fn;
}

int bpfrt_helper_register(const struct bpfrt_helper_proto *p)
{
	struct host_helper *h;
	int ret = 0;

	if (!p || !brt_opts_valid(p, KNOWN_SIZE, "bpfrt_helper_proto") ||
	    !BRT_OPTS_HAS(p, args) || !p->fn || !p->name || !p->id ||
	    p->id > BRT_VM_MAX_HELPER_ID || strlen(p->name) >= sizeof(h->name) ||
	    (p->ret != BPFRT_HELPER_RET_INTEGER && p->ret != BPFRT_HELPER_RET_VOID) ||
	    !args_ok(p->args)) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (brt_helper_proto_get(p->id)) {
		errno = EEXIST;
		return -EEXIST;
	}
	pthread_mutex_lock(&lock);
	if (find(p->id, nr_published)) {
		ret = -EEXIST;
	} else if (nr_published == MAX_HOST_HELPERS) {
		ret = -ENOSPC;
	} else {
		h = &helpers[nr_published];
		strcpy(h->name, p->name);
		h->proto = (struct brt_helper_proto){
			.id = p->id,
			.name = h->name,
			.fn = p->fn,
			.gpl_only = BRT_OPTS_GET(p, gpl_only, false),
			.ret = (uint8_t)p->ret,
		};
		for (int i = 0; i < 5; i++)
			h->proto.args[i] = (uint8_t)p->args[i];
		__atomic_store_n(&nr_published, nr_published + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	if (ret)
		errno = -ret;
	return ret;
}
