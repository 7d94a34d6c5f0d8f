/* graph.c - the kfuncs of objects a program allocates and of the lists they link into
 * (kernel/bpf/helpers.c's bpf_obj_new_impl ... bpf_list_back), on this process's heap.
 * The verifier's side is verifier/graph.c, which lists the types a program allocates
 * (struct brt_obj_type, carried by the run context): the kernel patches each call with
 * the type's size and record, here the kfunc looks its type id up in that list.
 *
 * An object is a header followed by the struct the program sees; the header holds an
 * address check, so that a list node can be traced back to its object, and before it the
 * object's own graph roots (its type's bpf_list_head and bpf_rb_root fields), which a
 * drop empties as the kernel's bpf_obj_free_fields() does: each node's object dropped in
 * turn.  struct bpf_list_head is {next, prev} of a circular list (zero: empty, as a map's
 * fresh value), struct bpf_list_node {next, prev, owner} (owner: the head it is in, NULL
 * when in none); struct bpf_rb_root is {root node, leftmost node} of a red-black tree
 * ordered by the program's less(), struct bpf_rb_node {parent | colour, right, left,
 * owner}: the kernel's own layouts.  A percpu object (bpf_percpu_obj_new) is one copy per
 * possible CPU, back to back after one header, its pointer the first copy's: the program
 * reaches a copy only through bpf_this_cpu_ptr / bpf_per_cpu_ptr (the verifier allows no
 * access through the percpu pointer itself).  Objects live until dropped; lists and trees in map
 * values are emptied when the value is deleted or replaced, or this process lets the map
 * go (maps/spin_lock.c calls map_drain(), handed down when the library is loaded).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/helpers.h"
#include "maps/maps.h"
#include "obj/obj.h"
#include "util/util.h"
#include "vm/vm.h"

#define OBJ_MAGIC UINT64_C(0x6270666f626a6b21)

struct obj_hdr {
	struct obj_hdr *next;  /* the live objects of this process (live_objs) */
	struct obj_hdr *prev;
	uint64_t check;        /* OBJ_MAGIC ^ the object's address */
	uint32_t nroots;       /* struct brt_obj_root entries before the header */
	uint32_t roots_bytes;  /* their bytes, a multiple of 8 */
	uint32_t size;         /* of one copy */
	int32_t refcount_off;  /* -1: none */
	uint32_t copies;       /* 1, or a percpu object's: one per possible CPU */
	uint32_t stride;       /* bytes from one copy to the next (size rounded up to 8) */
};

/* live objects of this process (tests read it: brt_graph_live_objects()) */
static long live_objects; /* under live_lock */

/* every live object, for the checked engine's question whether an address outside the
 * run's regions is inside one (brt_vm_set_obj_fn()): a kptr loaded from a map value
 * points at an object an earlier run stashed */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj_hdr live_head = { .next = &live_head, .prev = &live_head };

long brt_graph_live_objects(void)
{
	long n;

	pthread_mutex_lock(&live_lock);
	n = live_objects;
	pthread_mutex_unlock(&live_lock);
	return n;
}

static void live_add(struct obj_hdr *h)
{
	pthread_mutex_lock(&live_lock);
	h->next = live_head.next;
	h->prev = &live_head;
	live_head.next->prev = h;
	live_head.next = h;
	live_objects++;
	pthread_mutex_unlock(&live_lock);
}

static void live_del(struct obj_hdr *h)
{
	pthread_mutex_lock(&live_lock);
	h->prev->next = h->next;
	h->next->prev = h->prev;
	live_objects--;
	pthread_mutex_unlock(&live_lock);
}

static int in_live_object(uint64_t addr, uint64_t size)
{
	int found = 0;

	pthread_mutex_lock(&live_lock);
	for (struct obj_hdr *h = live_head.next; h != &live_head && !found; h = h->next) {
		uint64_t start = (uint64_t)(uintptr_t)(h + 1);
		uint64_t span = h->copies > 1 ? (uint64_t)h->stride * h->copies : h->size;

		found = addr >= start && addr - start <= span && size <= span - (addr - start);
	}
	pthread_mutex_unlock(&live_lock);
	return found;
}

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
	uint32_t copies = percpu ? brt_ncpus() : 1;
	size_t size, rb;
	struct obj_hdr *h;
	char *base;
	void *obj;

	/* bpf_mem_alloc() serves at most 4096 bytes, its list link included */
	if (!t || !t->size || (uint64_t)t->size + 8 > 4096 || t->nroots > BRT_OBJ_MAX_ROOTS)
		return 0;
	size = t->size;
	rb = (t->nroots * sizeof(struct brt_obj_root) + 7) & ~(size_t)7;
	base = calloc(1, rb + sizeof(*h) + (copies > 1 ? ((size + 7) & ~(size_t)7) * copies : size));
	if (!base)
		return 0;
	memcpy(base, t->roots, t->nroots * sizeof(struct brt_obj_root));
	h = (struct obj_hdr *)(void *)(base + rb);
	obj = h + 1;
	h->check = OBJ_MAGIC ^ (uint64_t)(uintptr_t)obj;
	h->nroots = t->nroots;
	h->roots_bytes = (uint32_t)rb;
	h->size = (uint32_t)size;
	h->refcount_off = t->refcount_off;
	h->copies = copies;
	h->stride = (uint32_t)((size + 7) & ~(size_t)7);
	live_add(h);
	/* bpf_obj_init(): the refcount starts at 1; lists start empty (zero) */
	if (t->refcount_off >= 0)
		__atomic_store_n((uint32_t *)((char *)obj + t->refcount_off), 1, __ATOMIC_RELAXED);
	if (!grant(rc, obj)) {
		live_del(h);
		free(base);
		return 0;
	}
	return (uint64_t)(uintptr_t)obj;
}

static void root_free(void *root, const struct brt_obj_root *r);

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
	/* bpf_obj_free_fields(): the object's lists and trees drop their nodes */
	for (uint32_t i = 0; i < h->nroots; i++) {
		const struct brt_obj_root *r =
			(const struct brt_obj_root *)(const void *)((const char *)h - h->roots_bytes) + i;

		if (r->rb == BRT_ROOT_KPTR) /* a stashed object goes with its holder */
			obj_drop(__atomic_exchange_n((uint64_t *)(void *)((char *)obj + r->off), 0,
						     __ATOMIC_ACQ_REL));
		else
			root_free((char *)obj + r->off, r);
	}
	h->check = 0;
	live_del(h);
	free((char *)h - h->roots_bytes);
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

/* ---- red-black trees ------------------------------------------------------------------- */
/* struct rb_node and struct rb_root_cached of the kernel (lib/rbtree.c's algorithm, written
 * here from the textbook one it follows: the same rotations in the same cases, so the
 * shape bpf_rbtree_root/left/right show is the kernel's) */
struct rb_node {
	uintptr_t parent_color; /* parent | 1 when black */
	struct rb_node *right;
	struct rb_node *left;
	void *owner;            /* the root it is in, 1 while being added, NULL: none */
};

struct rb_root {
	struct rb_node *node;
	struct rb_node *leftmost;
};

#define RB_BLACK ((uintptr_t)1)

static struct rb_node *rb_parent(const struct rb_node *n)
{
	return (struct rb_node *)(n->parent_color & ~RB_BLACK);
}

static int rb_red(const struct rb_node *n)
{
	return n && !(n->parent_color & RB_BLACK);
}

static void rb_set_parent(struct rb_node *n, struct rb_node *p)
{
	n->parent_color = (uintptr_t)p | (n->parent_color & RB_BLACK);
}

static void rb_set_black(struct rb_node *n, int black)
{
	n->parent_color = (n->parent_color & ~RB_BLACK) | (black ? RB_BLACK : 0);
}

/* old's parent (or the root) points at new instead */
static void rb_replace_child(struct rb_root *root, struct rb_node *parent, struct rb_node *old,
			     struct rb_node *new)
{
	if (!parent)
		root->node = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

/* x's right child y takes its place, x becomes y's left child (left) or the mirror */
static void rb_rotate(struct rb_root *root, struct rb_node *x, int left)
{
	struct rb_node *y = left ? x->right : x->left, *p = rb_parent(x);
	struct rb_node *mid = left ? y->left : y->right;

	if (left) {
		x->right = mid;
		y->left = x;
	} else {
		x->left = mid;
		y->right = x;
	}
	if (mid)
		rb_set_parent(mid, x);
	rb_set_parent(y, p);
	rb_replace_child(root, p, x, y);
	rb_set_parent(x, y);
}

static void rb_insert_fixup(struct rb_root *root, struct rb_node *n)
{
	struct rb_node *p;

	while ((p = rb_parent(n)) && rb_red(p)) {
		struct rb_node *g = rb_parent(p);
		int pleft = g->left == p;
		struct rb_node *u = pleft ? g->right : g->left;

		if (rb_red(u)) {
			rb_set_black(p, 1);
			rb_set_black(u, 1);
			rb_set_black(g, 0);
			n = g;
			continue;
		}
		if (n == (pleft ? p->right : p->left)) {
			rb_rotate(root, p, pleft);
			n = p;
			p = rb_parent(n);
		}
		rb_set_black(p, 1);
		rb_set_black(g, 0);
		rb_rotate(root, g, !pleft);
	}
	rb_set_black(root->node, 1);
}

/* after a black node left the tree: x (maybe NULL) under parent is one black short */
static void rb_erase_fixup(struct rb_root *root, struct rb_node *x, struct rb_node *parent)
{
	while (x != root->node && !rb_red(x) && parent) {
		int xleft = parent->left == x;
		struct rb_node *w = xleft ? parent->right : parent->left;

		if (rb_red(w)) {
			rb_set_black(w, 1);
			rb_set_black(parent, 0);
			rb_rotate(root, parent, xleft);
			w = xleft ? parent->right : parent->left;
		}
		if (!rb_red(w->left) && !rb_red(w->right)) {
			rb_set_black(w, 0);
			x = parent;
			parent = rb_parent(x);
			continue;
		}
		if (!rb_red(xleft ? w->right : w->left)) {
			rb_set_black(xleft ? w->left : w->right, 1);
			rb_set_black(w, 0);
			rb_rotate(root, w, !xleft);
			w = xleft ? parent->right : parent->left;
		}
		rb_set_black(w, !rb_red(parent));
		rb_set_black(parent, 1);
		rb_set_black(xleft ? w->right : w->left, 1);
		rb_rotate(root, parent, xleft);
		x = root->node;
		parent = NULL;
	}
	if (x)
		rb_set_black(x, 1);
}

static struct rb_node *rb_next(struct rb_node *n)
{
	struct rb_node *p;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return n;
	}
	while ((p = rb_parent(n)) && n == p->right)
		n = p;
	return p;
}

/* rb_erase_cached(): z leaves the tree, its in-order successor taking its place when it
 * has two children */
static void rb_erase(struct rb_root *root, struct rb_node *z)
{
	struct rb_node *x, *xparent, *zparent = rb_parent(z);
	int black;

	if (root->leftmost == z)
		root->leftmost = rb_next(z);
	if (!z->left || !z->right) {
		x = z->left ? z->left : z->right;
		xparent = zparent;
		black = !rb_red(z);
		rb_replace_child(root, zparent, z, x);
		if (x)
			rb_set_parent(x, zparent);
	} else {
		struct rb_node *y = z->right;

		while (y->left)
			y = y->left;
		black = !rb_red(y);
		x = y->right;
		if (rb_parent(y) == z) {
			xparent = y;
		} else {
			xparent = rb_parent(y);
			xparent->left = x;
			if (x)
				rb_set_parent(x, xparent);
			y->right = z->right;
			rb_set_parent(z->right, y);
		}
		y->left = z->left;
		rb_set_parent(z->left, y);
		y->parent_color = z->parent_color;
		rb_replace_child(root, zparent, z, y);
	}
	if (black)
		rb_erase_fixup(root, x, xparent);
	/* RB_CLEAR_NODE() */
	z->parent_color = (uintptr_t)z;
}

/* __bpf_rbtree_add(): less(node, parent) true goes left; a node already in a tree (a
 * refcounted object added twice) is dropped and the add fails */
static uint64_t rbtree_add(struct bpfrt_run_ctx *rc, uint64_t root_p, uint64_t node_p,
			   uint64_t less, uint64_t off)
{
	struct rb_root *root = (struct rb_root *)(uintptr_t)root_p;
	struct rb_node *n = (struct rb_node *)(uintptr_t)node_p, **link = &root->node;
	struct rb_node *parent = NULL;
	void *none = NULL;
	int leftmost = 1;

	(void)off;
	if (!__atomic_compare_exchange_n(&n->owner, &none, (void *)(uintptr_t)1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		obj_drop((uint64_t)(uintptr_t)obj_of_node(n));
		return (uint64_t)(int64_t)-EINVAL;
	}
	while (*link) {
		uint64_t args[2] = { node_p, (uint64_t)(uintptr_t)*link };
		void *pobj = obj_of_node(*link);

		parent = *link;
		/* the callback reads both objects (the checked engine's regions); a stopped
		 * run asks it nothing more and goes right */
		if (pobj && !rc->stopped && grant(rc, pobj) &&
		    brt_vm_call_func(rc, less, args, 2) && !rc->stopped) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	n->parent_color = (uintptr_t)parent; /* red */
	n->left = n->right = NULL;
	*link = n;
	if (leftmost)
		root->leftmost = n;
	rb_insert_fixup(root, n);
	__atomic_store_n(&n->owner, (void *)root, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t rbtree_remove(struct bpfrt_run_ctx *rc, uint64_t root_p, uint64_t node_p)
{
	struct rb_root *root = (struct rb_root *)(uintptr_t)root_p;
	struct rb_node *n = (struct rb_node *)(uintptr_t)node_p;

	if (__atomic_load_n(&n->owner, __ATOMIC_ACQUIRE) != (void *)root)
		return 0;
	rb_erase(root, n);
	__atomic_store_n(&n->owner, NULL, __ATOMIC_RELEASE);
	return node_out(rc, (struct list_node *)(void *)n);
}

/* bpf_rbtree_left/right: a child of a node of this tree */
static uint64_t rbtree_child(struct bpfrt_run_ctx *rc, uint64_t root_p, uint64_t node_p,
			     int right)
{
	struct rb_node *n = (struct rb_node *)(uintptr_t)node_p;

	if (__atomic_load_n(&n->owner, __ATOMIC_ACQUIRE) != (void *)(uintptr_t)root_p)
		return 0;
	return node_out(rc, (struct list_node *)(void *)(right ? n->right : n->left));
}

static uint64_t rbtree_get(struct bpfrt_run_ctx *rc, uint64_t root_p, int first)
{
	struct rb_root *root = (struct rb_root *)(uintptr_t)root_p;

	return node_out(rc, (struct list_node *)(void *)(first ? root->leftmost : root->node));
}

KFUNC_FN(bpf_rbtree_add_impl, rbtree_add(rc, r1, r2, r3, r5))
KFUNC_FN(bpf_rbtree_remove, rbtree_remove(rc, r1, r2))
KFUNC_FN(bpf_rbtree_first, rbtree_get(rc, r1, 1))
KFUNC_FN(bpf_rbtree_root, rbtree_get(rc, r1, 0))
KFUNC_FN(bpf_rbtree_left, rbtree_child(rc, r1, r2, 0))
KFUNC_FN(bpf_rbtree_right, rbtree_child(rc, r1, r2, 1))

/* ---- freeing a root ------------------------------------------------------------------ */
/* the deepest first node of a post-order walk under n */
static struct rb_node *rb_deepest(struct rb_node *n)
{
	for (;;) {
		if (n->left)
			n = n->left;
		else if (n->right)
			n = n->right;
		else
			return n;
	}
}

/* The object at p is one of this process's: its header's check is readable here and
 * names it (a map value may hold another process's nodes, whose addresses mean nothing
 * or something else in this one) */
static int ours(const void *p)
{
	struct obj_hdr h;

	return p && !brt_ucopy(&h, (const struct obj_hdr *)p - 1, sizeof(h), 0) &&
	       h.check == (OBJ_MAGIC ^ (uint64_t)(uintptr_t)p);
}

/* bpf_list_head_free() / bpf_rb_root_free(): the nodes of the root that was at orig (its
 * two words as they were: w) are dropped (an object still referenced elsewhere,
 * refcounted, keeps its node's owner, as the kernel's does); check: each node must be
 * this process's, the walk stops at the first that is not */
static void drain(void *orig, const uint64_t w[2], const struct brt_obj_root *r, int check)
{
	if (r->rb) {
		struct rb_node *top = (struct rb_node *)(uintptr_t)w[0], *pos;

		if (!top || (check && !ours((char *)top - r->node_off)))
			return;
		pos = rb_deepest(top);
		while (pos) {
			struct rb_node *p = rb_parent(pos), *next = p;

			if (p && pos == p->left && p->right)
				next = rb_deepest(p->right);
			obj_drop((uint64_t)(uintptr_t)((char *)pos - r->node_off));
			pos = next;
		}
	} else {
		struct list_node *n = (struct list_node *)(uintptr_t)w[0];

		while (n && n != orig && (!check || ours((char *)n - r->node_off))) {
			struct list_node *next = n->next;

			obj_drop((uint64_t)(uintptr_t)((char *)n - r->node_off));
			n = next;
		}
	}
}

/* an object's own root: emptied, then drained (its nodes are this process's) */
static void root_free(void *root, const struct brt_obj_root *r)
{
	uint64_t w[2];

	memcpy(w, root, sizeof(w));
	memset(root, 0, sizeof(w));
	drain(root, w, r, 0);
}

/* a map value's root (maps/spin_lock.c's brt_map_free_roots()) */
static int map_drain(void *root, const void *saved, const struct brt_obj_root *r, int mine)
{
	uint64_t w[2];

	if (r->rb == BRT_ROOT_KPTR) { /* a kptr: one object, if it is this process's */
		memcpy(w, saved, 8);
		if (mine || !ours((void *)(uintptr_t)w[0]))
			return ours((void *)(uintptr_t)w[0]);
		obj_drop(w[0]);
		return 0;
	}
	memcpy(w, saved, sizeof(w));
	if (mine)
		return !w[0] || (void *)(uintptr_t)w[0] == root ||
		       ours((char *)(uintptr_t)w[0] - r->node_off);
	drain(root, w, r, 1);
	return 0;
}

/* bpf_kptr_xchg(dst, ptr): the object stashed at dst (a map value's or an object's kptr
 * field) swapped for ptr, or NULL; the verifier gave the result a reference.  A kptr of a
 * map shared with another process may hold that process's object, whose address means
 * nothing here: it is not handed to the program (answered as NULL, left with the field's
 * owner process, which frees it when it lets the map go). */
uint64_t brt_helper_kptr_xchg(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	_Atomic uint64_t *dst = (_Atomic uint64_t *)(uintptr_t)r1;
	uint64_t old;

	(void)r3, (void)r4, (void)r5;
	old = atomic_exchange_explicit(dst, r2, memory_order_acq_rel);
	if (old && !ours((void *)(uintptr_t)old))
		return 0;
	return (uint64_t)(uintptr_t)grant(ctx, (void *)(uintptr_t)old);
}

/* CPU cpu's copy of the percpu object at p, granted to the run; NULL past the possible
 * CPUs as the kernel's bpf_per_cpu_ptr().  The verifier took p for an RCU pointer the
 * program loaded from a __percpu_kptr field, so it may be another process's object (a
 * pinned map shared), whose address means nothing here: the copy is then a zeroed
 * scratch of this thread, as large as a percpu object may be (512 bytes), so the
 * program's accesses, which the verifier let through without a NULL check, land in
 * memory of its own. */
static uint64_t cpu_copy(struct bpfrt_run_ctx *rc, uint64_t p, uint32_t cpu)
{
	static _Thread_local uint64_t scratch[512 / 8];
	void *obj = (void *)(uintptr_t)p;
	char *copy;

	if (cpu >= brt_ncpus())
		return 0;
	if (!ours(obj)) {
		memset(scratch, 0, sizeof(scratch));
		return bpfrt_run_grant(rc, scratch, sizeof(scratch), 1) ? 0
									: (uint64_t)(uintptr_t)scratch;
	}
	copy = (char *)obj + (size_t)(hdr_of(obj)->copies > 1 ? cpu : 0) * hdr_of(obj)->stride;
	if (bpfrt_run_grant(rc, copy, hdr_of(obj)->size, 1))
		return 0;
	return (uint64_t)(uintptr_t)copy;
}

/* bpf_this_cpu_ptr(p): the copy of the CPU this run is on (brt_cpu(), as the per-CPU
 * maps' values); bpf_per_cpu_ptr(p, cpu): CPU cpu's (a u32, as the kernel's helper
 * takes it) */
uint64_t brt_helper_this_cpu_ptr(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r2, (void)r3, (void)r4, (void)r5;
	return cpu_copy(ctx, r1, brt_cpu());
}

uint64_t brt_helper_per_cpu_ptr(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r3, (void)r4, (void)r5;
	return cpu_copy(ctx, r1, (uint32_t)r2);
}

__attribute__((constructor)) static void graph_init(void)
{
	brt_map_set_drain(map_drain);
	brt_vm_set_obj_fn(in_live_object);
}
