/* kfuncs.c - the kernel functions of src/vm/kfuncs.def as user space runs them, with the
 * helper ABI (a verified call reaches them as helper BRT_KFUNC_HELPER_BASE + row index,
 * api/prog.c).  What the kernel computes from its own state is answered from what user
 * space can see; each function says where that differs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach/attach.h"
#include "bpfrt.h"
#include "helpers/helpers.h"
#include "maps/maps.h"
#include "trace/trace.h"
#include "util/util.h"
#include "vm/vm.h"

/* ---- conntrack (net/netfilter/nf_conntrack_bpf.c) --------------------------------------- */
/* struct bpf_ct_opts as the kernel reads it: 16 bytes, or 12 without the zone fields */
struct ct_opts {
	int32_t netns_id;
	int32_t error;
	uint8_t l4proto;
	uint8_t dir;
	uint16_t ct_zone_id;
	uint8_t ct_zone_dir;
	uint8_t reserved[3];
};

/* __bpf_nf_ct_lookup()'s checks in the kernel's order, then the lookup: the conntrack
 * table lives in the kernel and user space holds none of its entries, so a well-formed
 * lookup finds nothing (-ENOENT), as the kernel answers for a flow it has not seen; a
 * netns id (>= 0) names a namespace of the kernel's nsid table, which user space does not
 * resolve here (-ENONET, the kernel's answer for an unknown id). */
static int ct_lookup_err(const void *tuple, uint32_t tuple_sz, struct ct_opts *o,
			 uint32_t opts_sz)
{
	if (!o || !tuple)
		return -EINVAL;
	if (opts_sz != 16 && opts_sz != 12)
		return -EINVAL;
	if (opts_sz == 16 ? o->reserved[0] || o->reserved[1] || o->reserved[2] : o->ct_zone_id)
		return -EINVAL;
	if (o->l4proto != 6 && o->l4proto != 17) /* IPPROTO_TCP, IPPROTO_UDP */
		return -EPROTO;
	if (o->netns_id < -1) /* BPF_F_CURRENT_NETNS */
		return -EINVAL;
	if (tuple_sz != 12 && tuple_sz != 36) /* sizeof ipv4 / ipv6 of struct bpf_sock_tuple */
		return -EAFNOSUPPORT;
	if (o->netns_id >= 0)
		return -ENONET;
	if (opts_sz == 16 && !o->ct_zone_dir)
		o->ct_zone_dir = 3; /* NF_CT_DEFAULT_ZONE_DIR */
	return -ENOENT;
}

/* The kernel stores the error in opts->error whatever opts__sz says (with opts__sz below
 * 8 past the memory the verifier checked); here only inside the checked opts__sz bytes. */
static uint64_t ct_lookup(uint64_t tuple, uint64_t tuple_sz, uint64_t opts, uint64_t opts_sz)
{
	struct ct_opts *o = (struct ct_opts *)(uintptr_t)opts;
	int32_t err = ct_lookup_err((const void *)(uintptr_t)tuple, (uint32_t)tuple_sz, o,
				    (uint32_t)opts_sz);

	if (o && (uint32_t)opts_sz >= 8)
		memcpy(&o->error, &err, sizeof(err));
	return 0;
}

/* (ctx, tuple, tuple__sz, opts, opts__sz) */
KFUNC_FN(bpf_skb_ct_lookup, ct_lookup(r2, r3, r4, r5))
KFUNC_FN(bpf_xdp_ct_lookup, ct_lookup(r2, r3, r4, r5))

/* __bpf_nf_ct_alloc_entry()'s checks in the kernel's order (the protocol before the
 * tuple's size, bpf_nf_ct_tuple_parse()), then the allocation, which user space cannot make
 * (no conntrack table here): -ENOMEM, as nf_conntrack_alloc() failing.  A known
 * difference: the kernel gives a new entry.  opts->error written as by the lookups. */
static uint64_t ct_alloc(uint64_t tuple, uint64_t tuple_sz, uint64_t opts, uint64_t opts_sz)
{
	struct ct_opts *o = (struct ct_opts *)(uintptr_t)opts;
	int32_t err = -ENOMEM;

	if (!o || !tuple || ((uint32_t)opts_sz != 16 && (uint32_t)opts_sz != 12))
		err = -EINVAL;
	else if ((uint32_t)opts_sz == 16 ? o->reserved[0] || o->reserved[1] || o->reserved[2]
					 : o->ct_zone_id)
		err = -EINVAL;
	else if (o->netns_id < -1)
		err = -EINVAL;
	else if (o->l4proto != 6 && o->l4proto != 17)
		err = -EPROTO;
	else if ((uint32_t)tuple_sz != 12 && (uint32_t)tuple_sz != 36)
		err = -EAFNOSUPPORT;
	else if (o->netns_id >= 0)
		err = -ENONET;
	else if ((uint32_t)opts_sz == 16 && !o->ct_zone_dir)
		o->ct_zone_dir = 3; /* NF_CT_DEFAULT_ZONE_DIR */
	if (o && (uint32_t)opts_sz >= 8)
		memcpy(&o->error, &err, sizeof(err));
	return 0;
}

/* (ctx, tuple, tuple__sz, opts, opts__sz) */
KFUNC_FN(bpf_skb_ct_alloc, ct_alloc(r2, r3, r4, r5))
KFUNC_FN(bpf_xdp_ct_alloc, ct_alloc(r2, r3, r4, r5))

/* ---- kfuncs that do nothing in user space (KFUNC_AS(..., nop, ...) rows) ------------- */
/* bpf_ct_release: no conntrack lookup returns an entry, so nothing is ever released (the
 * verifier sees to it that only a looked-up entry reaches here).  bpf_rcu_read_lock and
 * _unlock (kernel/bpf/helpers.c): the verifier pairs them and checks what runs inside; a
 * user-space run holds no read section of the kernel's. */
static KFUNC_FN(nop, 0)

/* bpf_rdonly_cast: the kernel rewrites its calls as r0 = r1; what may be read through the
 * result is the verifier's business */
static KFUNC_FN(first_arg, r1)

/* bpf_cast_to_kern_ctx: r0 = r1 in the kernel too, whose context is the kernel's struct;
 * a packet program's is stood in for (attach/kern_ctx.c) */
KFUNC_FN(bpf_cast_to_kern_ctx, brt_kern_ctx(r1, rc))

/* bpf_task_work_schedule_signal_impl and _resume_impl (task, tw, map__map, callback,
 * aux__prog): both run the callback at the end of the run (maps/task_work.c) */
static KFUNC_FN(task_work_schedule, brt_task_work_schedule(r1, r2, r3, r4, rc))

/* bpf_stream_vprintk_impl(stream_id, fmt__str, args, len__sz, aux__prog): trace/printk.c */
KFUNC_FN(bpf_stream_vprintk_impl, brt_trace_stream_vprintk(r1, r2, r3, r4, rc))

/* ---- crypto (kernel/bpf/crypto.c) ------------------------------------------------------- */
/* bpf_crypto_ctx_create(params, params__sz, err): the kernel's checks of the parameters,
 * then the type's lookup, which finds none here (no skcipher type is registered in user
 * space): -ENOENT, as the kernel without bpf_crypto_skcipher.  A known difference: the
 * kernel with the module makes a context. */
#define CRYPTO_PARAMS_SIZE 408 /* sizeof(struct bpf_crypto_params) */
static uint64_t crypto_create(uint64_t params, uint64_t params_sz, uint64_t err)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)params;
	int32_t e = -ENOENT;

	/* reserved[2] follows type[14] */
	if (!p || p[14] || p[15] || (uint32_t)params_sz != CRYPTO_PARAMS_SIZE)
		e = -EINVAL;
	memcpy((void *)(uintptr_t)err, &e, sizeof(e));
	return 0;
}

KFUNC_FN(bpf_crypto_ctx_create, crypto_create(r1, r2, r3))

/* encrypt and decrypt: never called with a context (none is ever made) */
static KFUNC_FN(crypto_crypt, (uint64_t)(int64_t)-EINVAL)

/* ---- cpumask (kernel/bpf/cpumask.c) ----------------------------------------------------- */
/* struct bpf_cpumask is a cpumask_t (NR_CPUS bits, at most 8192) followed by its
 * refcount; the mask starts the object, the count is kept in a header before it. */
#define CPUMASK_BYTES 1024
struct cpumask_obj {
	long usage;
	uint64_t bits[CPUMASK_BYTES / 8 + 1];
};

static struct cpumask_obj *cpumask_of(uint64_t p)
{
	return p ? (struct cpumask_obj *)(uintptr_t)(p - offsetof(struct cpumask_obj, bits))
		 : NULL;
}

static uint64_t cpumask_create(struct bpfrt_run_ctx *rc)
{
	struct cpumask_obj *m = calloc(1, sizeof(*m));

	if (!m)
		return 0;
	m->usage = 1;
	/* the program reads the mask (the verifier refuses writes: "only read is
	 * supported"); the checked engine lets it */
	if (bpfrt_run_grant(rc, m->bits, CPUMASK_BYTES, 0)) {
		free(m);
		return 0;
	}
	return (uint64_t)(uintptr_t)m->bits;
}

static uint64_t cpumask_acquire(uint64_t p)
{
	struct cpumask_obj *m = cpumask_of(p);

	if (m)
		__atomic_add_fetch(&m->usage, 1, __ATOMIC_RELAXED);
	return p;
}

static uint64_t cpumask_release(uint64_t p)
{
	struct cpumask_obj *m = cpumask_of(p);

	if (m && !__atomic_sub_fetch(&m->usage, 1, __ATOMIC_ACQ_REL))
		free(m);
	return 0;
}

KFUNC_FN(bpf_cpumask_create, cpumask_create(rc))
KFUNC_FN(bpf_cpumask_acquire, cpumask_acquire(r1))
KFUNC_FN(bpf_cpumask_release, cpumask_release(r1))

/* ---- strings (kernel/bpf/helpers.c) ---------------------------------------------------- */
/* The kernel's string kfuncs take any value as a string (__ign arguments) and read it
 * byte by byte with __get_kernel_nofault(), at most XATTR_SIZE_MAX bytes.  In a
 * user-space runtime the program's memory (stack, map values, context, the kernel
 * objects bpfrt stands in for) is this process's, which plays the kernel's address
 * space; so the kernel's copy_from_kernel_nofault_allowed() answers here: the kernel's
 * half of x86-64 (canonical, from 0xffff800000000000) is "kernel" and unmapped in user
 * space, so reading it fails with -EFAULT as an unmapped kernel address does; the NULL
 * page, non-canonical addresses and low-half addresses this process cannot read stand
 * for user addresses and answer -ERANGE (NULL and (char *)1, the selftests' user
 * pointers, included).  A string that runs into an unmapped page after a readable start
 * answers -EFAULT.  What differs: a real user-space address a program got from a kernel
 * object (a task's mm, a syscall argument) is read here where the kernel says -ERANGE. */
#define STR_MAX 65536 /* XATTR_SIZE_MAX */
#define STR_PAGE 4096u
#define STR_USER_END UINT64_C(0x0000800000000000)
#define STR_KERNEL_START UINT64_C(0xffff800000000000)

/* one byte of the string, or -EFAULT (the kernel's fault fixup) */
static int str_get(uint64_t a, unsigned char *c)
{
	if (a < STR_PAGE || a >= STR_USER_END)
		return -EFAULT;
	return brt_ucopy(c, (const void *)(uintptr_t)a, 1, 0) ? -EFAULT : 0;
}

/* copy_from_kernel_nofault_allowed(a, 1) as above */
static int str_allowed(uint64_t a)
{
	unsigned char c;

	if (a >= STR_KERNEL_START)
		return 1;
	return !str_get(a, &c);
}

/* the kernel builds with -funsigned-char: characters compare as 0..255; tolower() is
 * its lib/ctype.c's, Latin-1 (0xc0-0xde but 0xd7 fold too) */
static unsigned char str_lower(unsigned char c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7))
		return (unsigned char)(c + 32);
	return c;
}

/* The functions return an int: in the kernel a 32-bit result, r0's upper half zero as
 * x86-64's 32-bit moves leave it (verifier.kfunc_oracle compares r0 >> 32). */
static uint64_t str_ret(int v)
{
	return (uint64_t)(uint32_t)v;
}

static int str_cmp(uint64_t s1, uint64_t s2, int fold)
{
	unsigned char c1, c2;

	if (!str_allowed(s1) || !str_allowed(s2))
		return -ERANGE;
	for (int i = 0; i < STR_MAX; i++) {
		if (str_get(s1 + (uint64_t)i, &c1) || str_get(s2 + (uint64_t)i, &c2))
			return -EFAULT;
		if (fold) {
			c1 = str_lower(c1);
			c2 = str_lower(c2);
		}
		if (c1 != c2)
			return c1 < c2 ? -1 : 1;
		if (!c1)
			return 0;
	}
	return -E2BIG;
}

/* the index of c in the first count bytes (the NUL included), -ENOENT */
static int str_nchr(uint64_t s, uint64_t count, unsigned char c)
{
	unsigned char sc;
	int i;

	if (!str_allowed(s))
		return -ERANGE;
	for (i = 0; (uint64_t)i < count && i < STR_MAX; i++) {
		if (str_get(s + (uint64_t)i, &sc))
			return -EFAULT;
		if (sc == c)
			return i;
		if (!sc)
			return -ENOENT;
	}
	return i == STR_MAX ? -E2BIG : -ENOENT;
}

static int str_nlen(uint64_t s, uint64_t count)
{
	unsigned char c;
	int i;

	if (!str_allowed(s))
		return -ERANGE;
	for (i = 0; (uint64_t)i < count && i < STR_MAX; i++) {
		if (str_get(s + (uint64_t)i, &c))
			return -EFAULT;
		if (!c)
			return i;
	}
	return i == STR_MAX ? -E2BIG : i;
}

/* the length of s's first run of bytes in set (in: 1) or not in set (in: 0) */
static int str_span(uint64_t s, uint64_t set, int in)
{
	unsigned char cs, cx = 0;

	if (!str_allowed(s) || !str_allowed(set))
		return -ERANGE;
	for (int i = 0; i < STR_MAX; i++) {
		int j;

		if (str_get(s + (uint64_t)i, &cs))
			return -EFAULT;
		if (!cs)
			return i;
		for (j = 0; j < STR_MAX; j++) {
			if (str_get(set + (uint64_t)j, &cx))
				return -EFAULT;
			if (cx == cs || !cx)
				break;
		}
		if (j == STR_MAX)
			return -E2BIG;
		if (in ? !cx : cx != 0)
			return i;
	}
	return -E2BIG;
}

/* the index of s2 in the first len bytes of s1 (s2 may end exactly at len), -ENOENT */
static int str_nstr(uint64_t s1, uint64_t s2, uint64_t len)
{
	unsigned char c1, c2;

	if (!str_allowed(s1) || !str_allowed(s2))
		return -ERANGE;
	for (int i = 0; i < STR_MAX; i++) {
		int j;

		for (j = 0; (uint64_t)(i + j) <= len && j < STR_MAX; j++) {
			if (str_get(s2 + (uint64_t)j, &c2))
				return -EFAULT;
			if (!c2)
				return i;
			if ((uint64_t)(i + j) == len)
				break;
			if (str_get(s1 + (uint64_t)i + (uint64_t)j, &c1))
				return -EFAULT;
			if (!c1)
				return -ENOENT;
			if (c1 != c2)
				break;
		}
		if (j == STR_MAX)
			return -E2BIG;
		if ((uint64_t)(i + j) == len)
			return -ENOENT;
	}
	return -E2BIG;
}

/* the index of c or of the NUL, whichever comes first */
static int str_chrnul(uint64_t s, unsigned char c)
{
	unsigned char sc;

	if (!str_allowed(s))
		return -ERANGE;
	for (int i = 0; i < STR_MAX; i++) {
		if (str_get(s + (uint64_t)i, &sc))
			return -EFAULT;
		if (!sc || sc == c)
			return i;
	}
	return -E2BIG;
}

/* the index of c's last occurrence (c an int: a value above 255 never matches) */
static int str_rchr(uint64_t s, int32_t c)
{
	unsigned char sc;
	int last = -ENOENT;

	if (!str_allowed(s))
		return -ERANGE;
	for (int i = 0; i < STR_MAX; i++) {
		if (str_get(s + (uint64_t)i, &sc))
			return -EFAULT;
		if ((int32_t)sc == c)
			last = i;
		if (!sc)
			return last;
	}
	return -E2BIG;
}

#define STR_KFUNC(name, expr) KFUNC_FN(name, str_ret(expr))
/* char arguments are the register's low byte, int ones its low 32 bits, size_t all 64 */
STR_KFUNC(bpf_strcmp, str_cmp(r1, r2, 0))
STR_KFUNC(bpf_strcasecmp, str_cmp(r1, r2, 1))
STR_KFUNC(bpf_strchr, str_nchr(r1, STR_MAX, (unsigned char)r2))
STR_KFUNC(bpf_strnchr, str_nchr(r1, r2, (unsigned char)r3))
STR_KFUNC(bpf_strchrnul, str_chrnul(r1, (unsigned char)r2))
STR_KFUNC(bpf_strrchr, str_rchr(r1, (int32_t)r2))
STR_KFUNC(bpf_strlen, str_nlen(r1, STR_MAX))
STR_KFUNC(bpf_strnlen, str_nlen(r1, r2))
STR_KFUNC(bpf_strspn, str_span(r1, r2, 1))
STR_KFUNC(bpf_strcspn, str_span(r1, r2, 0))
STR_KFUNC(bpf_strstr, str_nstr(r1, r2, STR_MAX))
STR_KFUNC(bpf_strnstr, str_nstr(r1, r2, r3))
#undef STR_KFUNC

/* ---- non-preemptible sections (kernel/bpf/helpers.c) ----------------------------------- */
/* The verifier pairs them and checks what runs inside; a user-space run cannot keep the
 * scheduler away from its thread, and no other program run depends on it, so they do
 * nothing here. */
KFUNC_FN(bpf_preempt_disable, 0)
KFUNC_FN(bpf_preempt_enable, 0)

/* ---- irq flags and the resilient spin lock (kernel/bpf/helpers.c, rqspinlock.c) ------- */
/* Interrupts are the kernel's; a user-space thread has none to mask, so a saved flag is 0
 * (the verifier lets no program read it) and restoring does nothing.  The lock is
 * maps/res_lock.c's.  Pointers are what the verifier proved: a map value's lock word and
 * a stack slot; the checked engine, which also runs unverified programs, checks them. */
static uint64_t save_flag(uint64_t flags, struct bpfrt_run_ctx *rc)
{
	const uint64_t zero = 0;

	if (!bpfrt_run_access_ok(rc, (void *)(uintptr_t)flags, 8, 1)) {
		bpfrt_run_stop(rc, 0);
		return 0;
	}
	memcpy((void *)(uintptr_t)flags, &zero, sizeof(zero));
	return 0;
}

static int lock_word_ok(uint64_t lock, struct bpfrt_run_ctx *rc)
{
	if (lock % 4 || !bpfrt_run_access_ok(rc, (void *)(uintptr_t)lock, 4, 1)) {
		bpfrt_run_stop(rc, 0);
		return 0;
	}
	return 1;
}

/* 0, or the error as the kernel's int in r0: upper half zero (see str_ret()) */
static uint64_t res_lock(uint64_t lock, uint64_t flags, int irq, struct bpfrt_run_ctx *rc)
{
	int err;

	if (!lock_word_ok(lock, rc))
		return 0;
	if (irq && !bpfrt_run_access_ok(rc, (void *)(uintptr_t)flags, 8, 1)) {
		bpfrt_run_stop(rc, 0);
		return 0;
	}
	err = brt_res_lock((void *)(uintptr_t)lock, rc);
	/* the flag is written only when the lock was taken, as the kernel's */
	if (!err && irq)
		save_flag(flags, rc);
	return (uint64_t)(uint32_t)err;
}

static uint64_t res_unlock(uint64_t lock, struct bpfrt_run_ctx *rc)
{
	if (lock_word_ok(lock, rc))
		brt_res_unlock((void *)(uintptr_t)lock, rc);
	return 0;
}

KFUNC_FN(bpf_local_irq_save, save_flag(r1, rc))
KFUNC_FN(bpf_res_spin_lock, res_lock(r1, 0, 0, rc))
KFUNC_FN(bpf_res_spin_unlock, res_unlock(r1, rc))
KFUNC_FN(bpf_res_spin_lock_irqsave, res_lock(r1, r2, 1, rc))
KFUNC_FN(bpf_res_spin_unlock_irqrestore, res_unlock(r1, rc))

/* ---- tasks and cgroups (kernel/bpf/helpers.c) ------------------------------------------ */
/* No kernel task or cgroup lives in this address space.  A task or cgroup found by
 * bpf_task_from_pid() / bpf_cgroup_from_id() is a zeroed stand-in the size of a kernel
 * task_struct / cgroup and more (trace/task.c's convention for bpf_get_current_task_btf:
 * every field reads as 0), counted: acquire adds a reference, release drops one and the
 * last frees it.  Stand-ins are listed, so only a listed pointer is ever counted or freed:
 * the calling thread's own task (bpf_get_current_task_btf's stand-in, which its pid finds
 * too) and anything else the verifier let through are never freed. */
#define TASK_STAND_IN 32768
#define CGROUP_STAND_IN 8192

struct kobj {
	struct kobj *next;
	long usage;
	size_t size;
	int32_t pid; /* a task's: the process whose memory is its user memory */
	uint64_t body[];
};

static pthread_mutex_t kobj_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kobj *kobjs;

static uint64_t kobj_new(size_t size, int32_t pid, struct bpfrt_run_ctx *rc)
{
	struct kobj *o = calloc(1, sizeof(*o) + size);

	if (!o)
		return 0;
	/* readable by the checked engine; the verifier allows no store through it */
	if (bpfrt_run_grant(rc, o->body, size, 0)) {
		free(o);
		return 0;
	}
	o->usage = 1;
	o->size = size;
	o->pid = pid;
	pthread_mutex_lock(&kobj_lock);
	o->next = kobjs;
	kobjs = o;
	pthread_mutex_unlock(&kobj_lock);
	return (uint64_t)(uintptr_t)o->body;
}

/* a reference more (delta 1) or less (-1) on a listed stand-in; the last one frees it */
static void kobj_ref(uint64_t p, int delta, struct bpfrt_run_ctx *rc)
{
	struct kobj **pp, *dead = NULL;

	pthread_mutex_lock(&kobj_lock);
	for (pp = &kobjs; *pp; pp = &(*pp)->next) {
		struct kobj *o = *pp;

		if ((uint64_t)(uintptr_t)o->body != p)
			continue;
		o->usage += delta;
		if (delta > 0)
			bpfrt_run_grant(rc, o->body, o->size, 0);
		if (!o->usage) {
			*pp = o->next;
			dead = o;
		}
		break;
	}
	pthread_mutex_unlock(&kobj_lock);
	free(dead);
}

/* find_task_by_pid_ns(): a task with that id (any thread), seen in this process's pid
 * namespace (the kernel's bpf_task_from_pid() looks in the initial one) */
static uint64_t task_find(int32_t pid, struct bpfrt_run_ctx *rc)
{
	char path[32];
	struct stat st;

	if (pid <= 0)
		return 0;
	if (pid == (int32_t)gettid()) {
		/* the calling thread: bpf_get_current_task_btf()'s stand-in, the same pointer
		 * as the kernel's current */
		return brt_helper_get_current_task_btf(0, 0, 0, 0, 0, rc);
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return 0;
	return kobj_new(TASK_STAND_IN, pid, rc);
}

KFUNC_FN(bpf_task_from_pid, task_find((int32_t)r1, rc))
KFUNC_FN(bpf_task_from_vpid, task_find((int32_t)r1, rc))

/* bpf_task_acquire() / bpf_cgroup_acquire(): the same object, one reference more (the
 * kernel's refcount_inc_not_zero() of a live object) */
static uint64_t kobj_acquire(uint64_t p, struct bpfrt_run_ctx *rc)
{
	if (p)
		kobj_ref(p, 1, rc);
	return p;
}

static uint64_t kobj_release(uint64_t p, struct bpfrt_run_ctx *rc)
{
	if (p)
		kobj_ref(p, -1, rc);
	return 0;
}

KFUNC_FN(bpf_task_acquire, kobj_acquire(r1, rc))
KFUNC_FN(bpf_task_release, kobj_release(r1, rc))
KFUNC_FN(bpf_cgroup_acquire, kobj_acquire(r1, rc))
KFUNC_FN(bpf_cgroup_release, kobj_release(r1, rc))

/* a directory of the cgroup2 tree under dirfd whose inode is id (the kernel's cgroup id
 * is its kernfs node id, the inode number user space sees), depth levels down at most */
static int cgroup_walk(int dirfd, uint64_t id, int depth)
{
	DIR *d;
	struct dirent *e;
	int found = 0;

	if (depth <= 0)
		return 0;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return 0;
	}
	while (!found && (e = readdir(d))) {
		struct stat st;
		int fd;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		if ((uint64_t)st.st_ino == id) {
			found = 1;
			break;
		}
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			found = cgroup_walk(fd, id, depth - 1);
	}
	closedir(d);
	return found;
}

/* __cgroup_get_from_id(): a cgroup of the default (v2) hierarchy with that id, else NULL */
static uint64_t cgroup_from_id(uint64_t id, struct bpfrt_run_ctx *rc)
{
	char dir[512];
	struct stat st;
	int fd, found;

	if (!id || !brt_cgroup2_mount(dir, sizeof(dir)) || stat(dir, &st))
		return 0;
	found = (uint64_t)st.st_ino == id;
	if (!found) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		found = fd >= 0 && cgroup_walk(fd, id, BRT_CGROUP_MAX_LEVELS);
	}
	return found ? kobj_new(CGROUP_STAND_IN, 0, rc) : 0;
}

KFUNC_FN(bpf_cgroup_from_id, cgroup_from_id(r1, rc))

/* bpf_task_get_cgroup1(task, hierarchy_id): the task's cgroup in the v1 hierarchy of that
 * id (task_get_cgroup1()), NULL when no v1 hierarchy has the id (the kernel's -ENOENT).
 * The hierarchies are this process's: the lines "ID:controllers:path" of
 * /proc/self/cgroup (ID 0 is the v2 hierarchy, which the kernel's lookup does not take). */
static uint64_t task_get_cgroup1(uint64_t hierarchy_id, struct bpfrt_run_ctx *rc)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long id = strtoul(line, &end, 10);

		found = end != line && *end == ':' && id && id == (uint32_t)hierarchy_id;
	}
	fclose(f);
	return found ? kobj_new(CGROUP_STAND_IN, 0, rc) : 0;
}

KFUNC_FN(bpf_task_get_cgroup1, task_get_cgroup1(r2, rc))

/* ---- cpumask operations (kernel/bpf/cpumask.c) ------------------------------------------ */
/* nr_cpu_ids: the possible CPUs (/sys/devices/system/cpu/possible, "0-N"), at most the
 * stand-in's bits.  A CPU number at or past it is invalid (no bit changes, tests false);
 * searches that find nothing answer it, as the kernel's on a kernel whose NR_CPUS is
 * above 64 (small_cpumask_bits is nr_cpu_ids there). */
static uint32_t nr_cpus(void)
{
	static uint32_t n;
	uint32_t v = __atomic_load_n(&n, __ATOMIC_RELAXED);

	if (!v) {
		FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
		char line[256];

		v = 1;
		if (f && fgets(line, sizeof(line), f)) {
			/* the last number of a list like "0-3,8-11" */
			char *end = line + strcspn(line, "\n");
			char *p = end;

			while (p > line && p[-1] >= '0' && p[-1] <= '9')
				p--;
			if (p < end)
				v = (uint32_t)strtoul(p, NULL, 10) + 1;
		}
		if (f)
			fclose(f);
		if (v > CPUMASK_BYTES * 8)
			v = CPUMASK_BYTES * 8;
		__atomic_store_n(&n, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* A struct cpumask * argument may be any kernel cpumask the verifier trusts (a task's
 * cpus_ptr, ...): read it guarded into m, the bits past nr_cpu_ids cleared; a pointer
 * this process cannot read is an empty mask (the stand-ins hold no kernel masks). */
static void mask_read(uint64_t p, uint64_t *m)
{
	uint32_t n = nr_cpus();

	memset(m, 0, CPUMASK_BYTES);
	if (!p || brt_ucopy(m, (const void *)(uintptr_t)p, (n + 7) / 8, 0))
		memset(m, 0, CPUMASK_BYTES);
	if (n % 64)
		m[n / 64] &= (UINT64_C(1) << (n % 64)) - 1;
	for (uint32_t w = (n + 63) / 64; w < CPUMASK_BYTES / 8; w++)
		m[w] = 0;
}

/* a struct bpf_cpumask * argument: one of bpf_cpumask_create()'s (the verifier admits
 * no other), its bits */
static uint64_t *mask_bits(uint64_t p)
{
	return (uint64_t *)(uintptr_t)p;
}

static uint32_t mask_first(const uint64_t *m, int zero)
{
	uint32_t n = nr_cpus();

	for (uint32_t c = 0; c < n; c++)
		if ((int)((m[c / 64] >> (c % 64) & 1) == 0) == zero)
			return c;
	return n;
}

static uint32_t mask_weight(const uint64_t *m)
{
	uint32_t w = 0;

	for (uint32_t i = 0; i < CPUMASK_BYTES / 8; i++)
		w += (uint32_t)__builtin_popcountll(m[i]);
	return w;
}

/* the bit op on cpu of a bpf_cpumask: 0 set, 1 clear; returns the old bit */
static int mask_bit(uint64_t p, uint64_t cpu, int op)
{
	uint64_t *b = mask_bits(p), bit;
	uint32_t c = (uint32_t)cpu;

	if (!b || c >= nr_cpus())
		return 0;
	bit = UINT64_C(1) << (c % 64);
	if (op == 0)
		return (__atomic_fetch_or(&b[c / 64], bit, __ATOMIC_RELAXED) & bit) != 0;
	return (__atomic_fetch_and(&b[c / 64], ~bit, __ATOMIC_RELAXED) & bit) != 0;
}

#define MASK_KFUNC(name, body)                                                             \
	uint64_t brt_kfunc_##name(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,       \
				  uint64_t r5, struct bpfrt_run_ctx *rc)                    \
	{                                                                                  \
		uint64_t a[CPUMASK_BYTES / 8], b[CPUMASK_BYTES / 8];                       \
		(void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)rc, (void)a,       \
			(void)b;                                                           \
		body                                                                       \
	}
/* u32 and bool results: 32-bit and 8-bit values, zero-extended as the kernel's code
 * leaves them */
MASK_KFUNC(bpf_cpumask_first, mask_read(r1, a); return mask_first(a, 0);)
MASK_KFUNC(bpf_cpumask_first_zero, mask_read(r1, a); return mask_first(a, 1);)
MASK_KFUNC(bpf_cpumask_first_and, mask_read(r1, a); mask_read(r2, b);
	   for (size_t i = 0; i < CPUMASK_BYTES / 8; i++) a[i] &= b[i];
	   return mask_first(a, 0);)
MASK_KFUNC(bpf_cpumask_set_cpu, mask_bit(r2, r1, 0); return 0;)
MASK_KFUNC(bpf_cpumask_clear_cpu, mask_bit(r2, r1, 1); return 0;)
MASK_KFUNC(bpf_cpumask_test_cpu, mask_read(r2, a);
	   return (uint32_t)r1 < nr_cpus() && (a[(uint32_t)r1 / 64] >> ((uint32_t)r1 % 64) & 1);)
MASK_KFUNC(bpf_cpumask_test_and_set_cpu, return (uint64_t)mask_bit(r2, r1, 0);)
MASK_KFUNC(bpf_cpumask_test_and_clear_cpu, return (uint64_t)mask_bit(r2, r1, 1);)
MASK_KFUNC(bpf_cpumask_setall, uint64_t *d = mask_bits(r1);
	   uint32_t n = nr_cpus();
	   if (d) for (uint32_t c = 0; c < n; c++)
		   __atomic_fetch_or(&d[c / 64], UINT64_C(1) << (c % 64), __ATOMIC_RELAXED);
	   return 0;)
MASK_KFUNC(bpf_cpumask_clear, uint64_t *d = mask_bits(r1);
	   if (d) memset(d, 0, CPUMASK_BYTES);
	   return 0;)
/* dst = src1 op src2 (op 0 and, 1 or, 2 xor); and answers whether dst is not empty */
static uint64_t mask_op(uint64_t dst, uint64_t s1, uint64_t s2, int op)
{
	uint64_t a[CPUMASK_BYTES / 8], b[CPUMASK_BYTES / 8], *d = mask_bits(dst);
	int any = 0;

	mask_read(s1, a);
	mask_read(s2, b);
	for (size_t i = 0; i < CPUMASK_BYTES / 8; i++) {
		a[i] = op == 0 ? a[i] & b[i] : op == 1 ? a[i] | b[i] : a[i] ^ b[i];
		any |= a[i] != 0;
	}
	if (d)
		memcpy(d, a, CPUMASK_BYTES);
	return op == 0 ? (uint64_t)any : 0;
}
MASK_KFUNC(bpf_cpumask_and, return mask_op(r1, r2, r3, 0);)
MASK_KFUNC(bpf_cpumask_or, return mask_op(r1, r2, r3, 1);)
MASK_KFUNC(bpf_cpumask_xor, return mask_op(r1, r2, r3, 2);)
MASK_KFUNC(bpf_cpumask_equal, mask_read(r1, a); mask_read(r2, b);
	   return !memcmp(a, b, sizeof(a));)
MASK_KFUNC(bpf_cpumask_intersects, mask_read(r1, a); mask_read(r2, b);
	   for (size_t i = 0; i < CPUMASK_BYTES / 8; i++) if (a[i] & b[i]) return 1;
	   return 0;)
MASK_KFUNC(bpf_cpumask_subset, mask_read(r1, a); mask_read(r2, b);
	   for (size_t i = 0; i < CPUMASK_BYTES / 8; i++) if (a[i] & ~b[i]) return 0;
	   return 1;)
MASK_KFUNC(bpf_cpumask_empty, mask_read(r1, a);
	   return mask_weight(a) == 0;)
MASK_KFUNC(bpf_cpumask_full, mask_read(r1, a); return mask_weight(a) == nr_cpus();)
MASK_KFUNC(bpf_cpumask_copy, uint64_t *d = mask_bits(r1); mask_read(r2, a);
	   if (d) memcpy(d, a, CPUMASK_BYTES);
	   return 0;)
MASK_KFUNC(bpf_cpumask_weight, mask_read(r1, a); return mask_weight(a);)
#undef MASK_KFUNC

/* ---- sockets (net/core/filter.c) ------------------------------------------------------ */
/* bpf_sock_destroy(sk): the kernel aborts a TCP or UDP socket its iterator walks.  No
 * kernel socket is ever a program's here (bpfrt's iterators do not walk the kernel's
 * sockets), so the answer is the kernel's for a socket whose protocol cannot be
 * destroyed: -EOPNOTSUPP, and nothing happens. */
KFUNC_FN(bpf_sock_destroy, (uint64_t)(uint32_t)-EOPNOTSUPP)

/* ---- bpf_throw (kernel/bpf/helpers.c) ---------------------------------------------------- */
KFUNC_FN(bpf_throw, (brt_vm_throw(rc, r1), 0))

/* ---- user strings (kernel/bpf/helpers.c) ----------------------------------------------- */
#define F_PAD_ZEROS 1 /* BPF_F_PAD_ZEROS */

/* The pid of a task stand-in bpf_task_from_pid() made, 0 for any other task pointer. */
static int32_t kobj_pid(uint64_t p)
{
	int32_t pid = 0;

	pthread_mutex_lock(&kobj_lock);
	for (struct kobj *o = kobjs; o; o = o->next)
		if ((uint64_t)(uintptr_t)o->body == p)
			pid = o->pid;
	pthread_mutex_unlock(&kobj_lock);
	return pid;
}

/* n bytes of process pid's user memory (0: the current task's: this process, or the
 * traced task's process), 0 or -EFAULT */
static int user_read(int32_t pid, uint64_t a, char *c, size_t n)
{
	const struct brt_trace_task *t = brt_trace_get_task();

	if (!pid && t && t->tgid > 0 && t->tgid != getpid())
		pid = t->tgid;
	if (a < STR_PAGE || a >= STR_USER_END || a + n > STR_USER_END)
		return -EFAULT;
	if (pid && pid != getpid()) {
		struct iovec local = { c, n }, remote = { (void *)(uintptr_t)a, n };

		return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
	}
	return brt_ucopy(c, (const void *)(uintptr_t)a, n, 0) ? -EFAULT : 0;
}

/* The kernel's string copies go a word (8 bytes) at a time while 8 bytes remain, and a
 * word holding the NUL is stored whole with the bytes after the NUL as zeros; the rest
 * byte by byte.  strncpy_from_user(dst, src, max): the length (max when no NUL came),
 * -EFAULT at a fault (a word that faults is read again byte by byte; the bytes before
 * the fault stay in dst). */
static int strncpy_user(char *d, uint64_t src, uint32_t max)
{
	uint32_t res = 0;

	while (max - res >= 8) {
		char w[8];

		if (user_read(0, src + res, w, 8))
			break;
		for (int k = 0; k < 8; k++)
			if (!w[k]) {
				memcpy(d + res, w, (size_t)k);
				memset(d + res + k, 0, (size_t)(8 - k));
				return (int)res + k;
			}
		memcpy(d + res, w, 8);
		res += 8;
	}
	for (; res < max; res++) {
		if (user_read(0, src + res, &d[res], 1))
			return -EFAULT;
		if (!d[res])
			return (int)res;
	}
	return (int)res;
}

/* copy_remote_vm_str(tsk, src, dst, n) through strscpy(): dst starts empty; at most n - 1
 * bytes and a NUL, the length; -EFAULT at a fault, the string ended there (strings that
 * cross a page are copied as if they did not) */
static int strscpy_task(int32_t pid, char *d, uint64_t src, uint32_t n)
{
	uint32_t res = 0, count = n, max = STR_PAGE - (uint32_t)(src % STR_PAGE);

	d[0] = 0;
	if (max > n)
		max = n;
	while (max - res >= 8) {
		char w[8];

		if (user_read(pid, src + res, w, 8)) {
			d[res] = 0;
			return -EFAULT;
		}
		for (int k = 0; k < 8; k++)
			if (!w[k]) {
				memcpy(d + res, w, (size_t)k);
				memset(d + res + k, 0, (size_t)(8 - k));
				return (int)res + k;
			}
		count -= 8;
		if (!count) {
			memcpy(d + res, w, 7);
			d[res + 7] = 0;
			return (int)res + 7;
		}
		memcpy(d + res, w, 8);
		res += 8;
	}
	for (; count > 1; res++, count--) {
		if (user_read(pid, src + res, &d[res], 1)) {
			d[res] = 0;
			return -EFAULT;
		}
		if (!d[res])
			return (int)res;
	}
	d[res] = 0;
	return (int)res;
}

/* bpf_copy_from_user_str(dst, dst__sz, unsafe_ptr__ign, flags): strncpy_from_user() of
 * at most dst__sz - 1 bytes, then the NUL or, with BPF_F_PAD_ZEROS, zeroes to the end
 * (all of dst after a fault); the length with the NUL */
uint64_t brt_kfunc_bpf_copy_from_user_str(uint64_t dst, uint64_t sz, uint64_t src,
					  uint64_t flags, uint64_t r5,
					  struct bpfrt_run_ctx *rc)
{
	char *d = (char *)(uintptr_t)dst;
	uint32_t n = (uint32_t)sz;
	int ret;

	(void)r5;
	if (flags & ~(uint64_t)F_PAD_ZEROS)
		return str_ret(-EINVAL);
	if (!n)
		return 0;
	if (!bpfrt_run_access_ok(rc, d, n, 1))
		return str_ret(-EFAULT);
	ret = strncpy_user(d, src, n - 1);
	if (ret < 0) {
		if (flags & F_PAD_ZEROS)
			memset(d, 0, n);
		return str_ret(ret);
	}
	if (flags & F_PAD_ZEROS)
		memset(d + ret, 0, n - (uint32_t)ret);
	else
		d[ret] = 0;
	return str_ret(ret + 1);
}

/* bpf_copy_from_user_task_str(dst, dst__sz, unsafe_ptr__ign, tsk, flags): the task's
 * memory through copy_remote_vm_str() */
uint64_t brt_kfunc_bpf_copy_from_user_task_str(uint64_t dst, uint64_t sz, uint64_t src,
					       uint64_t tsk, uint64_t flags,
					       struct bpfrt_run_ctx *rc)
{
	char *d = (char *)(uintptr_t)dst;
	uint32_t n = (uint32_t)sz;
	int ret;

	if (flags & ~(uint64_t)F_PAD_ZEROS)
		return str_ret(-EINVAL);
	if (!n)
		return 0;
	if (!bpfrt_run_access_ok(rc, d, n, 1))
		return str_ret(-EFAULT);
	ret = strscpy_task(kobj_pid(tsk), d, src, n);
	if (ret < 0) {
		if (flags & F_PAD_ZEROS)
			memset(d, 0, n);
		return str_ret(ret);
	}
	if (flags & F_PAD_ZEROS)
		memset(d + ret, 0, n - (uint32_t)ret);
	return str_ret(ret + 1);
}

const brt_helper_fn brt_kfunc_fns[BRT_KFUNC_COUNT] = {
#define KFUNC(name, flags, sets) [BRT_KFUNC_##name] = brt_kfunc_##name,
#define KFUNC_AS(name, fn, flags, sets) [BRT_KFUNC_##name] = brt_kfunc_##fn,
#include "vm/kfuncs.def"
#undef KFUNC_AS
#undef KFUNC
};
