/* test_bpf.c - bpfrt_bpf() against the kernel's bpf(2): tables of cases per command and
 * map type, each run through bpfrt and (as root) the real syscall, asserting the expected
 * errno and identical return values, errno and data on both sides.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "harness.h"
#include "api/diff.h"
#include "maps/maps.h"

enum op_kind {
	UPD,     /* update key -> value with flags */
	LKP,     /* lookup key, compare value */
	DEL,     /* delete key */
	NEXT,    /* get_next_key(key) */
	FIRST,   /* get_next_key(NULL) */
	LAD,     /* lookup_and_delete key */
	FREEZE,  /* BPF_MAP_FREEZE */
	LKP_NULLKEY, /* lookup with key pointer NULL */
	LKP_BADVAL,  /* lookup with an unmapped value pointer */
	UPD_BADVAL,  /* update with an unmapped value pointer */
	UPD_BADKEY,  /* update with an unmapped key pointer */
	LKP_FLAGS,   /* lookup with flags */
	DEL_FLAGS,   /* delete with a non-zero attr.flags (past the command's last field) */
	PUSH,    /* update with key NULL (queue/stack) */
	POP,     /* lookup_and_delete with key NULL */
	PEEK,    /* lookup with key NULL */
};

struct op {
	int kind;
	uint64_t key;
	uint64_t value;
	uint64_t flags;
	int err;          /* expected errno, 0 for success */
	int unordered;    /* NEXT/FIRST on hash maps: the order is not the kernel's */
};

struct map_case {
	const char *name;
	uint32_t type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;
	const char *map_name;
	uint64_t map_extra;
	uint32_t numa_node;
	int create_err;
	struct op ops[16];
};

#define H BPF_MAP_TYPE_HASH
#define A BPF_MAP_TYPE_ARRAY

static const struct map_case map_cases[] = {
	/* --- MAP_CREATE attribute checks --- */
	{ "hash: key_size 0", H, 0, 8, 4, .create_err = EINVAL },
	{ "hash: value_size 0", H, 4, 0, 4, .create_err = EINVAL },
	{ "hash: max_entries 0", H, 4, 8, 0, .create_err = EINVAL },
	{ "hash: key_size 512 ok", H, 512, 8, 4 },
	{ "hash: key_size 4096 ok", H, 4096, 8, 4 },
	{ "hash: key+value >= 4M-48", H, 8, (4u << 20) - 48 - 8, 1, .create_err = E2BIG },
	{ "hash: key+value < 4M-48", H, 8, (4u << 20) - 48 - 9, 1 },
	{ "hash: value_size 4M", H, 4, 4u << 20, 4, .create_err = E2BIG },
	{ "hash: unknown flag", H, 4, 8, 4, 1u << 30, .create_err = EINVAL },
	{ "hash: mmapable", H, 4, 8, 4, BPF_F_MMAPABLE, .create_err = EINVAL },
	{ "hash: rdonly|wronly", H, 4, 8, 4, BPF_F_RDONLY | BPF_F_WRONLY, .create_err = EINVAL },
	{ "hash: rdonly_prog|wronly_prog", H, 4, 8, 4, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG,
	  .create_err = EINVAL },
	{ "hash: no_common_lru", H, 4, 8, 4, BPF_F_NO_COMMON_LRU, .create_err = EINVAL },
	{ "hash: no_prealloc ok", H, 4, 8, 4, BPF_F_NO_PREALLOC },
	{ "hash: zero_seed ok", H, 4, 8, 4, BPF_F_ZERO_SEED },
	{ "hash: numa node 0 ok", H, 4, 8, 4, BPF_F_NUMA_NODE },
	{ "hash: numa node 7", H, 4, 8, 4, BPF_F_NUMA_NODE, .numa_node = 7,
	  .create_err = EINVAL },
	{ "hash: map_extra", H, 4, 8, 4, .map_extra = 1, .create_err = EINVAL },
	{ "hash: name ok", H, 4, 8, 4, .map_name = "my_map.v1" },
	{ "hash: name with '-'", H, 4, 8, 4, .map_name = "bad-name", .create_err = EINVAL },
	{ "hash: name 16 chars unterminated", H, 4, 8, 4, .map_name = "0123456789abcdef",
	  .create_err = EINVAL },
	{ "hash: 2^27+1 entries", H, 4, 8, (1u << 27) + 1, .create_err = E2BIG },
	{ "hash: huge entries", H, 4, 8, 0x80000001u, .create_err = E2BIG },
	{ "array: value_size > INT_MAX", A, 4, 0x80000000u, 1, .create_err = E2BIG },
	{ "unknown type 9999", 9999, 4, 8, 4, .create_err = EINVAL },
	{ "type unspec", BPF_MAP_TYPE_UNSPEC, 4, 8, 4, .create_err = EINVAL },
	{ "array: key_size 8", A, 8, 8, 4, .create_err = EINVAL },
	{ "array: value_size 0", A, 4, 0, 4, .create_err = EINVAL },
	{ "array: max_entries 0", A, 4, 8, 0, .create_err = EINVAL },
	{ "array: no_prealloc", A, 4, 8, 4, BPF_F_NO_PREALLOC, .create_err = EINVAL },
	{ "array: mmapable ok", A, 4, 8, 4, BPF_F_MMAPABLE },
	{ "percpu_array: mmapable", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, BPF_F_MMAPABLE,
	  .create_err = EINVAL },
	{ "percpu_array: value 32k+1", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 32769, 4,
	  .create_err = E2BIG },
	{ "percpu_hash: numa", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4, BPF_F_NUMA_NODE,
	  .create_err = EINVAL },
	{ "lru_hash: no_prealloc", BPF_MAP_TYPE_LRU_HASH, 4, 8, 4, BPF_F_NO_PREALLOC,
	  .create_err = 524 },

	/* --- hash: the five element commands --- */
	{ "hash: update/lookup/delete", H, 4, 8, 4, .ops = {
		{ LKP, 1, .err = ENOENT },
		{ UPD, 1, 100 },
		{ LKP, 1 },
		{ UPD, 1, 101, BPF_NOEXIST, .err = EEXIST },
		{ UPD, 2, 200, BPF_EXIST, .err = ENOENT },
		{ UPD, 1, 102, BPF_EXIST },
		{ LKP, 1 },
		{ UPD, 1, 103, 3, .err = EINVAL },
		{ UPD, 1, 103, BPF_F_LOCK, .err = EINVAL },
		{ DEL, 1 },
		{ DEL, 1, .err = ENOENT },
		{ LKP, 1, .err = ENOENT },
	} },
	{ "hash: full map E2BIG, replace still works", H, 4, 8, 2, .ops = {
		{ UPD, 1, 1 },
		{ UPD, 2, 2 },
		{ UPD, 3, 3, .err = E2BIG },
		{ UPD, 2, 22 },
		{ UPD, 2, 23, BPF_EXIST },
		{ LKP, 2 },
		{ DEL, 1 },
		{ UPD, 3, 3, BPF_NOEXIST },
		{ LKP, 3 },
	} },
	{ "hash: get_next_key", H, 4, 8, 8, .ops = {
		{ FIRST, .err = ENOENT },
		{ NEXT, 5, .err = ENOENT },
		{ UPD, 5, 50 },
		{ FIRST },
		{ NEXT, 5, .err = ENOENT },
		{ NEXT, 6 },
		{ UPD, 6, 60 },
		{ FIRST, .unordered = 1 },
	} },
	{ "hash: lookup_and_delete", H, 4, 8, 4, .ops = {
		{ LAD, 1, .err = ENOENT },
		{ UPD, 1, 11 },
		{ LAD, 1 },
		{ LKP, 1, .err = ENOENT },
		{ LAD, 1, .flags = 1, .err = EINVAL },
		{ LAD, 1, .flags = BPF_F_LOCK, .err = EINVAL },
	} },
	{ "hash: bad pointers", H, 4, 8, 4, .ops = {
		{ UPD, 1, 7 },
		{ LKP_NULLKEY, .err = EFAULT },
		{ LKP_BADVAL, 1, .err = EFAULT },
		{ LKP_BADVAL, 2, .err = ENOENT },
		{ UPD_BADVAL, 1, .err = EFAULT },
		{ UPD_BADKEY, 1, .err = EFAULT },
		{ LKP_FLAGS, 1, .flags = 2, .err = EINVAL },
		{ LKP_FLAGS, 1, .flags = BPF_F_LOCK, .err = EINVAL },
		{ DEL_FLAGS, 1, .flags = 1, .err = EINVAL },
		{ LKP, 1 },
	} },
	{ "hash: odd sizes", H, 3, 5, 4, .ops = {
		{ UPD, 0x112233, 0x0102030405ull },
		{ LKP, 0x112233 },
		{ FIRST },
	} },
	{ "hash: freeze", H, 4, 8, 4, .ops = {
		{ UPD, 1, 1 },
		{ FREEZE },
		{ FREEZE, .err = EPERM },
		{ UPD, 1, 2, .err = EPERM },
		{ DEL, 1, .err = EPERM },
		{ LKP, 1 },
	} },
	{ "hash: rdonly", H, 4, 8, 4, BPF_F_RDONLY, .ops = {
		{ UPD, 1, 1, .err = EPERM },
		{ LKP, 1, .err = ENOENT },
		{ LAD, 1, .err = EPERM }, /* lookup_and_delete needs write too */
	} },
	{ "hash: wronly", H, 4, 8, 4, BPF_F_WRONLY, .ops = {
		{ UPD, 1, 1 },
		{ LKP, 1, .err = EPERM },
		{ LAD, 1, .err = EPERM }, /* and read */
		{ FIRST, .err = EPERM },
		{ DEL, 1 },
	} },

	/* --- array --- */
	{ "array: zero-filled, bounds", A, 4, 12, 3, .ops = {
		{ LKP, 0 },
		{ LKP, 2 },
		{ LKP, 3, .err = ENOENT },
		{ UPD, 1, 0x55 },
		{ LKP, 1 },
		{ UPD, 3, 1, .err = E2BIG },
		{ UPD, 1, 1, BPF_NOEXIST, .err = EEXIST },
		{ UPD, 1, 2, BPF_EXIST },
		{ UPD, 1, 2, 3, .err = EINVAL },
		{ DEL, 1, .err = EINVAL },
		{ LAD, 1, .err = 524 },
		{ LKP, 1 },
	} },
	{ "array: get_next_key", A, 4, 4, 3, .ops = {
		{ FIRST },
		{ NEXT, 0 },
		{ NEXT, 1 },
		{ NEXT, 2, .err = ENOENT },
		{ NEXT, 7 },
		{ NEXT, 0xffffffff },
	} },
	{ "percpu_array: all cpus", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 2, .ops = {
		{ LKP, 0 },
		{ UPD, 0, 0x77 },
		{ LKP, 0 },
		{ UPD, 2, 1, .err = E2BIG },
		{ DEL, 0, .err = EINVAL },
	} },
	{ "percpu_hash: all cpus", BPF_MAP_TYPE_PERCPU_HASH, 4, 12, 2, .ops = {
		{ UPD, 1, 0x99 },
		{ LKP, 1 },
		{ UPD, 1, 0x98 },
		{ LKP, 1 },
		{ LAD, 1 },
		{ LKP, 1, .err = ENOENT },
	} },
	{ "queue: key_size 4", BPF_MAP_TYPE_QUEUE, 4, 8, 2, .create_err = EINVAL },
	{ "queue: no_prealloc", BPF_MAP_TYPE_QUEUE, 0, 8, 2, BPF_F_NO_PREALLOC,
	  .create_err = EINVAL },
	{ "queue: fifo", BPF_MAP_TYPE_QUEUE, 0, 8, 2, .ops = {
		{ PEEK, .err = ENOENT },
		{ POP, .err = ENOENT },
		{ PUSH, .value = 1 },
		{ PUSH, .value = 2 },
		{ PUSH, .value = 3, .err = E2BIG },
		{ PUSH, .value = 3, .flags = BPF_EXIST },
		{ PUSH, .value = 4, .flags = BPF_NOEXIST, .err = EINVAL },
		{ PEEK },
		{ POP },
		{ POP },
		{ POP, .err = ENOENT },
		{ DEL, 1, .err = EINVAL },
		{ FIRST, .err = EINVAL },
		{ LKP, 1, .err = EINVAL },
	} },
	{ "stack: lifo", BPF_MAP_TYPE_STACK, 0, 12, 3, .ops = {
		{ PUSH, .value = 1 },
		{ PUSH, .value = 2 },
		{ PEEK },
		{ POP },
		{ PUSH, .value = 5 },
		{ PUSH, .value = 6 },
		{ PUSH, .value = 7, .err = E2BIG },
		{ PUSH, .value = 7, .flags = BPF_EXIST },
		{ POP },
		{ POP },
		{ POP },
		{ POP, .err = ENOENT },
		{ POP, .flags = 1, .err = EINVAL },
	} },
	{ "lpm: prealloc", BPF_MAP_TYPE_LPM_TRIE, 8, 8, 4, .create_err = EINVAL },
	{ "lpm: key_size 4", BPF_MAP_TYPE_LPM_TRIE, 4, 8, 4, BPF_F_NO_PREALLOC,
	  .create_err = EINVAL },
	{ "lpm: key_size 261", BPF_MAP_TYPE_LPM_TRIE, 261, 8, 4, BPF_F_NO_PREALLOC,
	  .create_err = EINVAL },
	{ "lpm: longest prefix", BPF_MAP_TYPE_LPM_TRIE, 8, 8, 3, BPF_F_NO_PREALLOC, .ops = {
		{ UPD, (0x0aull << 32) | 8, 1 },
		{ UPD, (0x010aull << 32) | 16, 2 },
		{ LKP, (0x0203010aull << 32) | 32 },
		{ LKP, (0x0203020aull << 32) | 32 },
		{ LKP, (0x0bull << 32) | 32, .err = ENOENT },
		{ UPD, (0x0aull << 32) | 33, 3, .err = EINVAL },
		{ UPD, (0x0aull << 32) | 8, 3, BPF_NOEXIST, .err = EEXIST },
		{ UPD, (0x0cull << 32) | 8, 3, BPF_EXIST, .err = ENOENT },
		{ UPD, (0x0c01ull << 32) | 16, 4 },
		{ UPD, (0x0dull << 32) | 8, 5, .err = ENOSPC },
		{ DEL, (0x0aull << 32) | 9, .err = ENOENT },
		{ FIRST },
		{ NEXT, (0x010aull << 32) | 16 },
		{ NEXT, (0x0aull << 32) | 8, .err = ENOENT }, /* 1.12/16, 10.1/16, 10/8 */
		{ DEL, (0x0aull << 32) | 8 },
		{ LKP, (0x0203020aull << 32) | 32, .err = ENOENT },
	} },
	{ "lru_hash: evicts instead of failing", BPF_MAP_TYPE_LRU_HASH, 4, 8, 64, .ops = {
		{ UPD, 1, 1 },
		{ LKP, 1 },
		{ DEL, 1 },
		{ DEL, 1, .err = ENOENT },
	} },
};

static void fill(unsigned char *buf, unsigned len, uint64_t v)
{
	for (unsigned i = 0; i < len; i++)
		buf[i] = i < 8 ? (unsigned char)(v >> (8 * i)) : (unsigned char)(v * 31 + i);
}

static unsigned vsize_of(const struct map_case *c)
{
	if (brt_map_is_percpu(c->type))
		return (unsigned)(BRT_ROUND8(c->value_size) * brt_ncpus());
	return c->value_size;
}

static void fill_value(const struct map_case *c, unsigned char *buf, uint64_t v)
{
	if (!brt_map_is_percpu(c->type)) {
		fill(buf, c->value_size, v);
		return;
	}
	memset(buf, 0, vsize_of(c));
	for (unsigned cpu = 0; cpu < brt_ncpus(); cpu++)
		fill(buf + cpu * BRT_ROUND8(c->value_size), c->value_size, v + cpu);
}

static void *bad_ptr(void)
{
	static void *p;

	if (!p) {
		p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		T_ASSERT(p != MAP_FAILED);
	}
	return p;
}

static void run_op(sys_fn sys, int fd, const struct map_case *c, const struct op *op,
		   struct step_result *r)
{
	unsigned char key[1024], value[1 << 16], next[1024];
	union bpf_attr a;
	int cmd;

	memset(&a, 0, sizeof(a));
	memset(value, 0xee, sizeof(value));
	fill(key, c->key_size, op->key);
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.flags = op->flags;
	r->out_len = 0;
	switch (op->kind) {
	case UPD:
	case UPD_BADVAL:
	case UPD_BADKEY:
	case PUSH:
		cmd = BPF_MAP_UPDATE_ELEM;
		fill_value(c, value, op->value);
		a.value = (uint64_t)(uintptr_t)(op->kind == UPD_BADVAL ? bad_ptr() : value);
		if (op->kind == UPD_BADKEY)
			a.key = (uint64_t)(uintptr_t)bad_ptr();
		if (op->kind == PUSH)
			a.key = 0;
		break;
	case LKP:
	case LKP_NULLKEY:
	case LKP_BADVAL:
	case LKP_FLAGS:
	case PEEK:
		cmd = BPF_MAP_LOOKUP_ELEM;
		a.value = (uint64_t)(uintptr_t)(op->kind == LKP_BADVAL ? bad_ptr() : value);
		if (op->kind == LKP_NULLKEY || op->kind == PEEK)
			a.key = 0;
		r->out_len = vsize_of(c);
		break;
	case LAD:
	case POP:
		cmd = BPF_MAP_LOOKUP_AND_DELETE_ELEM;
		a.value = (uint64_t)(uintptr_t)value;
		if (op->kind == POP)
			a.key = 0;
		r->out_len = vsize_of(c);
		break;
	case DEL:
	case DEL_FLAGS:
		cmd = BPF_MAP_DELETE_ELEM;
		break;
	case NEXT:
	case FIRST:
		cmd = BPF_MAP_GET_NEXT_KEY;
		memset(next, 0xee, sizeof(next));
		a.next_key = (uint64_t)(uintptr_t)next;
		if (op->kind == FIRST)
			a.key = 0;
		break;
	default:
		cmd = BPF_MAP_FREEZE;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fd;
		break;
	}
	r->ret = sys(cmd, &a, sizeof(a));
	r->err = r->ret < 0 ? errno : 0;
	if (r->ret < 0) {
		r->out_len = 0;
		return;
	}
	if (cmd == BPF_MAP_GET_NEXT_KEY && !op->unordered) {
		r->out_len = c->key_size;
		memcpy(r->out, next, c->key_size);
	} else if (r->out_len) {
		if (r->out_len > sizeof(r->out))
			r->out_len = sizeof(r->out);
		memcpy(r->out, value, r->out_len);
	}
}

/* Run a case; results[0] is the create, then one per op.  Returns the step count. */
static int run_case(sys_fn sys, const struct map_case *c, struct step_result *res)
{
	union bpf_attr a;
	int fd, n = 1;

	memset(&a, 0, sizeof(a));
	a.map_type = c->type;
	a.key_size = c->key_size;
	a.value_size = c->value_size;
	a.max_entries = c->max_entries;
	a.map_flags = c->flags;
	a.map_extra = c->map_extra;
	a.numa_node = c->numa_node;
	if (c->map_name)
		memcpy(a.map_name, c->map_name, strnlen(c->map_name, sizeof(a.map_name)));
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	res[0].ret = fd >= 0 ? 1 : fd;
	res[0].err = fd < 0 ? errno : 0;
	res[0].out_len = 0;
	if (fd < 0)
		return 1;
	for (int i = 0; i < 16 && c->ops[i].kind + c->ops[i].key + c->ops[i].value + c->ops[i].err;
	     i++, n++)
		run_op(sys, fd, c, &c->ops[i], &res[n]);
	close(fd);
	return n;
}

static void check_expected(const struct map_case *c, const struct step_result *res, int n,
			   const char *side)
{
	char what[160];

	snprintf(what, sizeof(what), "%s (%s)", c->name, side);
	T_CASE(what);
	T_EQ_INT(c->create_err, res[0].err);
	for (int i = 1; i < n; i++) {
		T_EQ_INT(c->ops[i - 1].err, res[i].err);
		if (res[i].err != c->ops[i - 1].err)
			fprintf(stderr, "  at op %d\n", i - 1);
	}
}

static void compare(const struct map_case *c, const struct step_result *a, int na,
		    const struct step_result *b, int nb)
{
	T_CASE(c->name);
	T_EQ_INT(na, nb);
	for (int i = 0; i < na && i < nb; i++) {
		T_EQ_INT(a[i].ret, b[i].ret);
		T_EQ_INT(a[i].err, b[i].err);
		T_EQ_INT(a[i].out_len, b[i].out_len);
		if (memcmp(a[i].out, b[i].out, a[i].out_len)) {
			T_FAIL("step %d: data differs from the kernel's", i);
		}
	}
}

/* Attr-level rules: sizes, tails, CHECK_ATTR, fds, pointers. */
struct raw_case {
	const char *name;
	int cmd;
	int fd_kind; /* 0 a hash map, 1 closed fd, 2 /dev/null, 3 a pipe, 4 -1, 5 a tmp file */
	unsigned size_delta;
	int tail_byte;    /* write a non-zero byte just past sizeof(attr) */
	int attr_null;    /* pass attr = NULL */
	int attr_bad;     /* pass an unmapped attr */
	int bad_field;    /* set a byte past the command's last field */
	int err;
};

static const struct raw_case raw_cases[] = {
	{ "unknown command", 9999, .err = EINVAL },
	{ "negative command", -1, .err = EINVAL },
	{ "size > page", BPF_MAP_LOOKUP_ELEM, .size_delta = 8192, .err = E2BIG },
	{ "larger attr, zero tail", BPF_MAP_GET_NEXT_KEY, .size_delta = 64, .err = ENOENT },
	/* past the end of any kernel's union bpf_attr (between the end of ours and the
	 * kernel's, bpfrt says E2BIG where the kernel checks the fields: EINVAL) */
	{ "larger attr, non-zero tail", BPF_MAP_GET_NEXT_KEY, .size_delta = 2048,
	  .tail_byte = 1, .err = E2BIG },
	{ "attr NULL", BPF_MAP_GET_NEXT_KEY, .attr_null = 1, .err = EFAULT },
	{ "attr unmapped", BPF_MAP_GET_NEXT_KEY, .attr_bad = 1, .err = EFAULT },
	{ "field past last (lookup)", BPF_MAP_LOOKUP_ELEM, .bad_field = 1, .err = EINVAL },
	{ "field past last (get_next_key)", BPF_MAP_GET_NEXT_KEY, .bad_field = 1,
	  .err = EINVAL },
	{ "closed fd", BPF_MAP_GET_NEXT_KEY, .fd_kind = 1, .err = EBADF },
	{ "/dev/null fd", BPF_MAP_GET_NEXT_KEY, .fd_kind = 2, .err = EINVAL },
	{ "pipe fd", BPF_MAP_GET_NEXT_KEY, .fd_kind = 3, .err = EINVAL },
	{ "fd -1", BPF_MAP_GET_NEXT_KEY, .fd_kind = 4, .err = EBADF },
	{ "regular file fd", BPF_MAP_GET_NEXT_KEY, .fd_kind = 5, .err = EINVAL },
	{ "freeze closed fd", BPF_MAP_FREEZE, .fd_kind = 1, .err = EBADF },
};

static int raw_fd(sys_fn sys, int kind, int *extra)
{
	union bpf_attr a;
	int p[2], fd;
	char tmpl[] = "/tmp/bpfrt-test-XXXXXX";

	*extra = -1;
	switch (kind) {
	case 1:
		fd = open("/dev/null", O_RDONLY);
		close(fd);
		return fd;
	case 2:
		return open("/dev/null", O_RDONLY);
	case 3:
		if (pipe(p))
			return -1;
		*extra = p[1];
		return p[0];
	case 4:
		return -1;
	case 5:
		fd = mkstemp(tmpl);
		unlink(tmpl);
		if (fd >= 0 && ftruncate(fd, 8192))
			return fd;
		return fd;
	default:
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_HASH;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 4;
		return sys(BPF_MAP_CREATE, &a, sizeof(a));
	}
}

static void run_raw(sys_fn sys, const struct raw_case *c, struct step_result *r)
{
	static unsigned char buf[8192 + sizeof(union bpf_attr)] __attribute__((aligned(8)));
	union bpf_attr *a = (union bpf_attr *)buf;
	unsigned char key[8] = { 1 }, next[8];
	int extra, fd = raw_fd(sys, c->fd_kind, &extra);

	memset(buf, 0, sizeof(buf));
	a->map_fd = (uint32_t)fd;
	a->key = (uint64_t)(uintptr_t)key;
	a->next_key = (uint64_t)(uintptr_t)next;
	if (c->tail_byte)
		buf[sizeof(union bpf_attr) + c->size_delta - 1] = 1;
	if (c->cmd == BPF_MAP_FREEZE)
		a->key = a->next_key = 0;
	if (c->bad_field)
		buf[c->cmd == BPF_MAP_GET_NEXT_KEY ? offsetof(union bpf_attr, flags) :
						     offsetof(union bpf_attr, flags) + 8] = 1;
	if (c->attr_null)
		a = NULL;
	if (c->attr_bad)
		a = bad_ptr();
	r->ret = sys(c->cmd, a, (unsigned)sizeof(union bpf_attr) + c->size_delta);
	r->err = r->ret < 0 ? errno : 0;
	r->out_len = 0;
	if (fd >= 0)
		close(fd);
	if (extra >= 0)
		close(extra);
}

/* OBJ_GET_INFO_BY_FD on a map: the fields both sides fill, info_len rules. */
struct info_result {
	int err_small, err_tail;
	uint32_t len_small, len_big;
	struct bpf_map_info info;
};

static void run_info(sys_fn sys, struct info_result *r)
{
	static unsigned char big[sizeof(struct bpf_map_info) + 64];
	union bpf_attr a;
	int fd;

	memset(r, 0, sizeof(*r));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 12;
	a.max_entries = 3;
	a.map_flags = BPF_F_MMAPABLE;
	memcpy(a.map_name, "info_test", 9);
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info = (uint64_t)(uintptr_t)&r->info;
	a.info.info_len = 8; /* type and id only */
	r->err_small = sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? errno : 0;
	r->len_small = a.info.info_len;
	memset(big, 0, sizeof(big));
	a.info.info = (uint64_t)(uintptr_t)big;
	a.info.info_len = sizeof(big);
	sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a));
	r->len_big = a.info.info_len;
	memcpy(&r->info, big, sizeof(r->info));
	big[sizeof(big) - 1] = 1;
	a.info.info_len = sizeof(big);
	r->err_tail = sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? errno : 0;
	close(fd);
}

static void test_info(int kernel)
{
	struct info_result m, k;

	run_info(sys_bpfrt, &m);
	T_CASE("info: bpfrt");
	T_EQ_INT(0, m.err_small);
	T_EQ_INT(8, m.len_small);
	T_EQ_INT(E2BIG, m.err_tail);
	T_EQ_INT(BPF_MAP_TYPE_ARRAY, m.info.type);
	T_EQ_INT(12, m.info.value_size);
	T_EQ_STR("info_test", m.info.name);
	if (!kernel)
		return;
	run_info(sys_kernel, &k);
	T_CASE("info: same as the kernel");
	T_EQ_INT(k.err_small, m.err_small);
	T_EQ_INT(k.len_small, m.len_small);
	T_EQ_INT(k.err_tail, m.err_tail);
	T_EQ_INT(k.info.type, m.info.type);
	T_EQ_INT(k.info.key_size, m.info.key_size);
	T_EQ_INT(k.info.value_size, m.info.value_size);
	T_EQ_INT(k.info.max_entries, m.info.max_entries);
	T_EQ_INT(k.info.map_flags, m.info.map_flags);
	T_EQ_STR(k.info.name, m.info.name);
	/* the kernel's struct may be longer than our 6.1 one: it reports the smaller */
	T_ASSERT(m.len_big == sizeof(struct bpf_map_info));
}

/* The batch commands: counts, errnos, and (arrays) the exact data; hash maps compare the
 * set of keys, since the order is not the kernel's. */
struct batch_result {
	int err[8];
	uint32_t count[8];
	uint32_t keys[16];
	uint64_t values[16];
	uint32_t key_sum;
};

static int batch(sys_fn sys, int cmd, int fd, void *in, void *out, uint32_t *keys,
		 uint64_t *values, uint32_t *count, uint64_t elem_flags)
{
	union bpf_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.batch.map_fd = (uint32_t)fd;
	a.batch.in_batch = (uint64_t)(uintptr_t)in;
	a.batch.out_batch = (uint64_t)(uintptr_t)out;
	a.batch.keys = (uint64_t)(uintptr_t)keys;
	a.batch.values = (uint64_t)(uintptr_t)values;
	a.batch.count = *count;
	a.batch.elem_flags = elem_flags;
	ret = sys(cmd, &a, sizeof(a));
	*count = a.batch.count;
	return ret < 0 ? errno : 0;
}

static void run_batch(sys_fn sys, struct batch_result *r)
{
	uint32_t keys[8] = { 0, 1, 2, 3, 4 }, token = 0, token2 = 0, n;
	uint64_t values[8] = { 10, 11, 12, 13, 14 };
	union bpf_attr a;
	int fd, h;

	memset(r, 0, sizeof(*r));
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 5;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.max_entries = 8;
	h = sys(BPF_MAP_CREATE, &a, sizeof(a));
	n = 5;
	r->err[0] = batch(sys, BPF_MAP_UPDATE_BATCH, fd, NULL, NULL, keys, values, &n, 0);
	r->count[0] = n;
	n = 3;
	r->err[1] = batch(sys, BPF_MAP_LOOKUP_BATCH, fd, NULL, &token, r->keys, r->values, &n, 0);
	r->count[1] = n;
	n = 3;
	r->err[2] = batch(sys, BPF_MAP_LOOKUP_BATCH, fd, &token, &token2, r->keys + 3,
			  r->values + 3, &n, 0);
	r->count[2] = n;
	n = 2;
	r->err[3] = batch(sys, BPF_MAP_DELETE_BATCH, fd, NULL, NULL, keys, NULL, &n, 0);
	n = 2;
	r->err[4] = batch(sys, BPF_MAP_UPDATE_BATCH, fd, NULL, NULL, keys, values, &n, 1);
	n = 5;
	r->err[5] = batch(sys, BPF_MAP_UPDATE_BATCH, h, NULL, NULL, keys, values, &n, 0);
	r->count[5] = n;
	uint32_t hk[8];
	uint64_t hv[8];

	n = 8;
	r->err[6] = batch(sys, BPF_MAP_LOOKUP_AND_DELETE_BATCH, h, NULL, &token, hk, hv, &n, 0);
	r->count[6] = n;
	for (uint32_t i = 0; i < n && i < 8; i++)
		r->key_sum += hk[i] * 100 + (uint32_t)hv[i];
	n = 8;
	r->err[7] = batch(sys, BPF_MAP_LOOKUP_BATCH, h, NULL, &token, hk, hv, &n, 0);
	r->count[7] = n;
	close(fd);
	close(h);
}

static void test_batch(int kernel)
{
	struct batch_result m, k;

	run_batch(sys_bpfrt, &m);
	T_CASE("batch: bpfrt");
	T_EQ_INT(0, m.err[0]);
	T_EQ_INT(5, m.count[0]);
	T_EQ_INT(0, m.err[1]);
	T_EQ_INT(3, m.count[1]);
	T_EQ_INT(ENOENT, m.err[2]);
	T_EQ_INT(2, m.count[2]);
	T_EQ_U64(14, m.values[4]);
	T_EQ_INT(524, m.err[3]);
	T_EQ_INT(EINVAL, m.err[4]);
	T_EQ_INT(5, m.count[6]);
	T_EQ_INT(ENOENT, m.err[7]);
	T_EQ_INT(0, m.count[7]);
	if (!kernel)
		return;
	run_batch(sys_kernel, &k);
	T_CASE("batch: same as the kernel");
	for (int i = 0; i < 8; i++) {
		T_EQ_INT(k.err[i], m.err[i]);
		T_EQ_INT(k.count[i], m.count[i]);
	}
	T_ASSERT(!memcmp(k.keys, m.keys, sizeof(k.keys)));
	T_ASSERT(!memcmp(k.values, m.values, sizeof(k.values)));
	T_EQ_INT(k.key_sum, m.key_sum);
}

/* Bad buffers in the batch commands (the fuzz_bpf finding of session 1 was a harness
 * pointer, but this is the path it went through): a values or keys array that runs into
 * an unmapped page, NULL arrays with and without a count.  EFAULT and the count the
 * caller sees must be the kernel's. */
static void run_batch_fault(sys_fn sys, unsigned char *guard, int err[6], uint32_t cnt[6])
{
	uint32_t keys[8] = { 0, 1, 2, 3, 4 }, token = 0, n;
	uint64_t values[8] = { 10, 11, 12, 13, 14 };
	/* two values fit before the guard page, the third faults */
	uint64_t *edge = (uint64_t *)(void *)(guard - 2 * sizeof(uint64_t));
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 5;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	n = 5;
	batch(sys, BPF_MAP_UPDATE_BATCH, fd, NULL, NULL, keys, values, &n, 0);
	n = 4;
	err[0] = batch(sys, BPF_MAP_LOOKUP_BATCH, fd, NULL, &token, keys, edge, &n, 0);
	cnt[0] = n;
	memcpy(edge, values, 2 * sizeof(uint64_t));
	n = 4;
	err[1] = batch(sys, BPF_MAP_UPDATE_BATCH, fd, NULL, NULL, keys, edge, &n, 0);
	cnt[1] = n;
	n = 0;
	err[2] = batch(sys, BPF_MAP_LOOKUP_BATCH, fd, NULL, NULL, NULL, NULL, &n, 0);
	cnt[2] = n;
	n = 3;
	err[3] = batch(sys, BPF_MAP_LOOKUP_BATCH, fd, NULL, &token, NULL, values, &n, 0);
	cnt[3] = n;
	n = 3;
	err[4] = batch(sys, BPF_MAP_DELETE_BATCH, fd, NULL, NULL, NULL, NULL, &n, 0);
	cnt[4] = n;
	n = 2;
	err[5] = batch(sys, BPF_MAP_LOOKUP_BATCH, fd, (void *)guard, &token, keys, values, &n, 0);
	cnt[5] = n;
	close(fd);
}

static void test_batch_fault(int kernel)
{
	static const int want_err[6] = { EFAULT, EFAULT, 0, EFAULT, 524 /* ENOTSUPP */, EFAULT };
	static const uint32_t want_cnt[6] = { 0, 2, 0, 0, 3, 0 };
	int err[6], kerr[6];
	uint32_t cnt[6], kcnt[6];
	unsigned char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(page != MAP_FAILED);
	T_ASSERT(!mprotect(page + 4096, 4096, PROT_NONE));
	run_batch_fault(sys_bpfrt, page + 4096, err, cnt);
	for (int i = 0; i < 6; i++) {
		static const char *const names[6] = { "lookup values fault", "update values fault",
			"count 0 NULL arrays", "lookup keys NULL", "array delete: no batch op",
			"in_batch unmapped" };

		T_CASE(names[i]);
		T_EQ_INT(want_err[i], err[i]);
		T_EQ_INT(want_cnt[i], cnt[i]);
	}
	if (kernel) {
		run_batch_fault(sys_kernel, page + 4096, kerr, kcnt);
		for (int i = 0; i < 6; i++) {
			T_CASE("batch fault: same as the kernel");
			T_EQ_INT(kerr[i], err[i]);
			T_EQ_INT(kcnt[i], cnt[i]);
		}
	}
	munmap(page, 8192);
}

int main(void)
{
	static struct step_result mine[17], theirs[17];
	int kernel = kernel_available();

	if (!kernel)
		printf("note: not root or no bpf(): checking bpfrt against the tables only\n");
	for (size_t i = 0; i < sizeof(map_cases) / sizeof(map_cases[0]); i++) {
		const struct map_case *c = &map_cases[i];
		int n = run_case(sys_bpfrt, c, mine);

		check_expected(c, mine, n, "bpfrt");
		if (kernel) {
			int nk = run_case(sys_kernel, c, theirs);

			check_expected(c, theirs, nk, "kernel");
			compare(c, mine, n, theirs, nk);
		}
	}
	for (size_t i = 0; i < sizeof(raw_cases) / sizeof(raw_cases[0]); i++) {
		const struct raw_case *c = &raw_cases[i];

		run_raw(sys_bpfrt, c, &mine[0]);
		T_CASE(c->name);
		T_EQ_INT(c->err, mine[0].err);
		if (kernel) {
			run_raw(sys_kernel, c, &theirs[0]);
			T_EQ_INT(c->err, theirs[0].err);
			T_EQ_INT(theirs[0].ret < 0 ? -1 : 0, mine[0].ret < 0 ? -1 : 0);
		}
	}
	test_info(kernel);
	test_batch(kernel);
	test_batch_fault(kernel);
	return t_done();
}
