/* graph.c - the kfuncs of objects a program allocates and of the lists they link into
 * (kernel/bpf/helpers.c's bpf_obj_new_impl ... bpf_list_back), on this process's heap.
 * The verifier's side is verifier/graph.c, which lists the types a program allocates
 * (struct brt_obj_type, carried by the run context): the kernel patches each call with
 * the type's size and record, here the kfunc looks its type id up in that list.
 *
 * An object is a header followed by the struct the program sees; the header names its
 * type and holds an address check, so that a list node can be traced back to its object.
 * struct bpf_list_head is {next, prev} of a circular list (zero: empty, as a map's fresh
 * value), struct bpf_list_node {next, prev, owner} (owner: the head it is in, NULL when
 * in none), the kernel's own layouts.  Objects live until dropped; lists in map values
 * are not emptied when the value is deleted (the kernel frees their nodes then).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/helpers.h"
#include "vm/vm.h"

#define OBJ_MAGIC UINT64_C(0x6270666f626a6b21)

struct obj_hdr {
	uint64_t check;        /* OBJ_MAGIC ^ the object's address */
	const struct brt_obj_type *type; /* the run's type entry, when its program ran */
	uint32_t size;
	int32_t refcount_off;  /* -1: none */
};

struct list_node {
	struct list_node *next;
	struct list_node *prev;
	void *owner;
};

static struct obj_hdr *hdr_of(void *obj)
{
	return (struct obj_hdr *)obj - 1;
}

static const struct brt_obj_type *find_type(const struct bpfrt_run_ctx *rc, uint64_t id,
					    int percpu)
{
	for (uint32_t i = 0; rc && i < rc->nobj_types; i++)
		if (rc->obj_types[i].btf_id == id && rc->obj_types[i].percpu == (uint32_t)percpu)
			return &rc->obj_types[i];
	return NULL;
}

/* the program may use the object: the checked engine's regions */
static void *grant(struct bpfrt_run_ctx *rc, void *obj)
{
	if (obj && bpfrt_run_grant(rc, obj, hdr_of(obj)->size, 1))
		return NULL;
	return obj;
}

static uint64_t obj_new(struct bpfrt_run_ctx *rc, uint64_t type_id, int percpu)
{
	const struct brt_obj_type *t = find_type(rc, type_id, percpu);
	/* a percpu object: one copy stands for every CPU's, since no program here reaches
	 * a copy (bpf_per_cpu_ptr/bpf_this_cpu_ptr of kernel per-CPU memory are refused) */
	size_t size;
	struct obj_hdr *h;
	void *obj;

	/* bpf_mem_alloc() serves at most 4096 bytes, its list link included */
	if (!t || !t->size || (uint64_t)t->size + 8 > 4096)
		return 0;
	size = t->size;
	h = calloc(1, sizeof(*h) + size);
	if (!h)
		return 0;
	obj = h + 1;
	h->check = OBJ_MAGIC ^ (uint64_t)(uintptr_t)obj;
	h->size = (uint32_t)size;
	h->refcount_off = t->refcount_off;
	/* bpf_obj_init(): the refcount starts at 1; lists start empty (zero) */
	if (t->refcount_off >= 0)
		__atomic_store_n((uint32_t *)((char *)obj + t->refcount_off), 1, __ATOMIC_RELAXED);
	if (!grant(rc, obj)) {
		free(h);
		return 0;
	}
	return (uint64_t)(uintptr_t)obj;
}

/* __bpf_obj_drop_impl(): a refcounted object is freed when its last reference goes */
static uint64_t obj_drop(uint64_t p)
{
	void *obj = (void *)(uintptr_t)p;
	struct obj_hdr *h;

	if (!obj)
		return 0;
	h = hdr_of(obj);
	if (h->refcount_off >= 0 &&
	    __atomic_sub_fetch((uint32_t *)((char *)obj + h->refcount_off), 1, __ATOMIC_ACQ_REL))
		return 0;
	h->check = 0;
	free(h);
	return 0;
}

/* refcount_inc_not_zero() */
static uint64_t refcount_acquire(struct bpfrt_run_ctx *rc, uint64_t p)
{
	void *obj = (void *)(uintptr_t)p;
	uint32_t *ref, old;

	if (!obj || hdr_of(obj)->refcount_off < 0)
		return 0;
	ref = (uint32_t *)((char *)obj + hdr_of(obj)->refcount_off);
	old = __atomic_load_n(ref, __ATOMIC_RELAXED);
	do {
		if (!old)
			return 0;
	} while (!__atomic_compare_exchange_n(ref, &old, old + 1, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return (uint64_t)(uintptr_t)grant(rc, obj);
}

KFUNC_FN(bpf_obj_new_impl, obj_new(rc, r1, 0))
KFUNC_FN(bpf_percpu_obj_new_impl, obj_new(rc, r1, 1))
KFUNC_FN(bpf_obj_drop_impl, obj_drop(r1))
KFUNC_FN(bpf_percpu_obj_drop_impl, obj_drop(r1))
KFUNC_FN(bpf_refcount_acquire_impl, refcount_acquire(rc, r1))

/* ---- lists --------------------------------------------------------------------------- */
/* The object a node is in: the header before it whose check names it (objects are
 * 8-aligned and the node lies inside, so a walk back in 8-byte steps meets it first) */
static void *obj_of_node(void *node)
{
	char *p = node;

	for (size_t back = 0; back < 4096; back += 8) {
		const struct obj_hdr *h = (const struct obj_hdr *)(void *)(p - back) - 1;

		if (h->check == (OBJ_MAGIC ^ (uint64_t)(uintptr_t)(p - back)) &&
		    (size_t)h->size > back)
			return p - back;
	}
	return NULL;
}

static struct list_node *head_init(uint64_t head)
{
	struct list_node *h = (struct list_node *)(uintptr_t)head;

	/* a map's zeroed value: an empty list (the kernel's INIT_LIST_HEAD on first use) */
	if (!h->next) {
		h->next = h;
		h->prev = h;
	}
	return h;
}

/* __bpf_list_add(): a node already in a list (a refcounted object pushed twice) is
 * dropped and the push fails */
static uint64_t list_add(uint64_t head, uint64_t node, int tail)
{
	struct list_node *h = head_init(head), *n = (struct list_node *)(uintptr_t)node;
	void *none = NULL;

	if (!__atomic_compare_exchange_n(&n->owner, &none, (void *)(uintptr_t)1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		obj_drop((uint64_t)(uintptr_t)obj_of_node(n));
		return (uint64_t)(int64_t)-22; /* -EINVAL */
	}
	if (tail) {
		n->prev = h->prev;
		n->next = h;
		h->prev->next = n;
		h->prev = n;
	} else {
		n->next = h->next;
		n->prev = h;
		h->next->prev = n;
		h->next = n;
	}
	__atomic_store_n(&n->owner, (void *)h, __ATOMIC_RELEASE);
	return 0;
}

/* the object of a node the program gets back (its pointer is the node's) */
static uint64_t node_out(struct bpfrt_run_ctx *rc, struct list_node *n)
{
	void *obj = n ? obj_of_node(n) : NULL;

	return obj && grant(rc, obj) ? (uint64_t)(uintptr_t)n : 0;
}

/* __bpf_list_del() */
static uint64_t list_del(struct bpfrt_run_ctx *rc, uint64_t head, int tail)
{
	struct list_node *h = head_init(head), *n;

	if (h->next == h)
		return 0;
	n = tail ? h->prev : h->next;
	if (__atomic_load_n(&n->owner, __ATOMIC_ACQUIRE) != (void *)h)
		return 0;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = NULL;
	__atomic_store_n(&n->owner, NULL, __ATOMIC_RELEASE);
	return node_out(rc, n);
}

static uint64_t list_peek(struct bpfrt_run_ctx *rc, uint64_t head, int tail)
{
	struct list_node *h = head_init(head);

	if (h->next == h)
		return 0;
	return node_out(rc, tail ? h->prev : h->next);
}

KFUNC_FN(bpf_list_push_front_impl, list_add(r1, r2, 0))
KFUNC_FN(bpf_list_push_back_impl, list_add(r1, r2, 1))
KFUNC_FN(bpf_list_pop_front, list_del(rc, r1, 0))
KFUNC_FN(bpf_list_pop_back, list_del(rc, r1, 1))
KFUNC_FN(bpf_list_front, list_peek(rc, r1, 0))
KFUNC_FN(bpf_list_back, list_peek(rc, r1, 1))
