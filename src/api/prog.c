/* prog.c - BPF_PROG_LOAD: the kernel's attribute checks in its order, the program check
 * (check.c), then map references resolved: every lddw naming a map fd (BPF_PSEUDO_MAP_FD,
 * _MAP_VALUE, or an fd_array index) takes a reference on the map and gets the map's
 * address (or the value's) as its 64-bit immediate, so the engines just load it.  The
 * program becomes an object file holding its instructions in a process-independent form
 * (map references as indexes into the map table stored after them, prog_file.c); the
 * process keeps the vm and the map references until the last fd is closed.  Another
 * process builds its own vm from that file the same way (brt_prog_materialise()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "btf/btf.h"
#include "jit/jit.h"
#include "maps/maps.h"
#include "util/util.h"
#include "verifier/verifier.h"
#include "vm/vm.h"

#ifndef BPF_F_TOKEN_FD
#define BPF_F_TOKEN_FD (1u << 16)
#endif
#define PROG_FLAGS                                                                     \
	(BPF_F_STRICT_ALIGNMENT | BPF_F_ANY_ALIGNMENT | BPF_F_TEST_RND_HI32 |           \
	 BPF_F_TEST_STATE_FREQ | BPF_F_SLEEPABLE | BPF_F_XDP_HAS_FRAGS | (1u << 6) |       \
	 (1u << 7) | BPF_F_TOKEN_FD | BPFRT_F_PRIV_MASK | BPFRT_F_ENGINE_MASK)
/* bpf_prog_verify_signature()'s limit: KMALLOC_MAX_CACHE_SIZE of x86-64's SLUB */
#define SIGNATURE_MAX 8192u
#define KEYCTL_DESCRIBE_ID 6 /* keyctl(2)'s KEYCTL_DESCRIBE (no libkeyutils here) */
#define LOG_MASK 15u
/* the log's first buffer: grown by the verifier as the log is written (up to log_size,
 * which may be 1 GiB: the kernel writes into the caller's buffer as it goes) */
#define LOG_BUF_FIRST 4096u
#define MAX_INSNS 1000000

struct load {
	union bpf_attr *attr;
	struct bpf_insn *insns;
	struct bpf_insn *stored; /* insns with map references as map table indexes */
	char license[128];
	int gpl;
	int *fd_array;
	uint32_t fd_array_cnt;  /* entries of fd_array read (a fault stops the reading) */
	uint32_t bind_cnt;      /* attr fd_array_cnt: fd_array's first entries bound at load */
	/* the exception callback's first insn (0: none): out of build(); into it when a
	 * program file without its BTF is rebuilt (the file's header keeps it) */
	uint32_t exc_cb_insn;
	struct brt_prog_maps pm;
	struct bpfrt_vm *vm;
	struct brt_log_buf log; /* the log while verifying (log.buf NULL: no log_buf) */
	uint32_t log_size;
	uint32_t log_true;      /* the whole log's size, NUL included */
	int log_true_set;       /* the verifier ran (bpf_check() in the kernel): write it back */
	uint32_t max_ctx_offset;
	uint32_t verified_insns;
	struct brt_prog_lines *lines; /* from line_info (btf_load.c) */
	uint32_t prog_flags;     /* attr.prog_flags with the privilege it was verified with */
	const struct brt_prog_vm_opts *vm_opts; /* brt_prog_load_vm(): its policy, or NULL */
	char *err;               /* brt_prog_load_vm(): the reason of a failure */
	size_t errlen;
	uint8_t *xflags;         /* brt_prog.xflags / xmap / xloop / xstack, once built */
	uint16_t *xmap;
	uint32_t *xloop;
	uint32_t *xstack;
	uint32_t nxstack;
	struct brt_map_memo memo; /* the map fds resolved so far */
};

/* The kernel's license_is_gpl_compatible(). */
static int gpl_compatible(const char *lic)
{
	static const char *const ok[] = { "GPL", "GPL v2", "GPL and additional rights",
					  "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(lic, ok[i]))
			return 1;
	return 0;
}

static int name_ok(const char *name, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!c)
			return 1;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.'))
			return 0;
	}
	return 0;
}

/* bpf_verifier_log_attr_valid() */
static int log_attr_ok(const union bpf_attr *attr)
{
	if (!!attr->log_buf != !!attr->log_size)
		return 0;
	if (attr->log_buf && !attr->log_level)
		return 0;
	if (attr->log_level & ~LOG_MASK)
		return 0;
	return attr->log_size <= (UINT32_MAX >> 2);
}

/* The map's index in the program's map table (first use order), or -errno. */
static int add_map(struct load *ld, struct brt_map *map)
{
	struct brt_map **maps;

	for (uint32_t i = 0; i < ld->pm.n; i++) {
		if (ld->pm.maps[i] == map) {
			brt_map_put(map);
			return (int)i;
		}
	}
	maps = realloc(ld->pm.maps, (ld->pm.n + 1) * sizeof(*maps));
	if (!maps) {
		brt_map_put(map);
		return -ENOMEM;
	}
	ld->pm.maps = maps;
	maps[ld->pm.n++] = map;
	return (int)ld->pm.n - 1;
}

/* The loaded program's maps are held by it from now on (delta 1) or no more (-1): held
 * as the maps its file's table names, which is what other processes' id walks follow
 * from a program they find alive (obj.h, brt_obj_named()). */
static void own_maps(struct brt_prog_maps *pm, int delta)
{
	for (uint32_t i = 0; i < pm->n; i++)
		brt_obj_named(&pm->maps[i]->obj, delta);
}

static void put_maps(struct brt_prog_maps *pm)
{
	for (uint32_t i = 0; i < pm->n; i++)
		brt_map_put(pm->maps[i]);
	free(pm->maps);
	pm->maps = NULL;
	pm->n = 0;
}

/* Rewrite the lddw at insns[i] naming a map (and its stored form, which names the map by
 * its index in the map table); the check already validated its form. */
static int resolve_lddw(struct load *ld, struct bpf_insn *insn, struct bpf_insn *stored)
{
	uint8_t kind = insn->src_reg;
	int32_t fd = insn->imm;
	struct brt_map *map;
	uint64_t addr;
	int err;

	if (kind == BPF_PSEUDO_MAP_IDX || kind == BPF_PSEUDO_MAP_IDX_VALUE) {
		if (!ld->fd_array || (uint32_t)fd >= ld->fd_array_cnt)
			return -EINVAL;
		fd = ld->fd_array[fd];
	}
	err = brt_map_memo_get(&ld->memo, fd, &map);
	if (err)
		return err;
	/* the program may write it, as the kernel lets it whatever the fd's mode */
	err = brt_obj_writable(&map->obj, "BPF_PROG_LOAD of a program using it");
	if (err) {
		brt_map_put(map);
		return err;
	}
	addr = (uint64_t)(uintptr_t)map;
	if (kind == BPF_PSEUDO_MAP_VALUE || kind == BPF_PSEUDO_MAP_IDX_VALUE) {
		uint32_t off = (uint32_t)insn[1].imm;

		/* the kernel's array_map_direct_value_addr() */
		if (map->type != BPF_MAP_TYPE_ARRAY) {
			brt_map_put(map);
			return -EINVAL;
		}
		if (map->max_entries != 1 || off >= map->value_size) {
			brt_map_put(map);
			return map->max_entries != 1 ? -EOPNOTSUPP : -EINVAL;
		}
		addr = (uint64_t)(uintptr_t)map->data + off;
	}
	err = add_map(ld, map);
	if (err < 0)
		return err;
	stored->src_reg = kind == BPF_PSEUDO_MAP_VALUE || kind == BPF_PSEUDO_MAP_IDX_VALUE ?
				  BPF_PSEUDO_MAP_IDX_VALUE : BPF_PSEUDO_MAP_IDX;
	stored->imm = err;
	insn[0].imm = (int32_t)(uint32_t)addr;
	insn[1].imm = (int32_t)(uint32_t)(addr >> 32);
	insn[0].src_reg = 0;
	return 0;
}

/* fd_array_cnt's maps (the verifier checked them: maps or BTF objects), in their order
 * first, as the kernel's used_maps: the program holds them whether its code names them
 * or not (BPF_PROG_BIND_MAP at load). */
static int bind_maps(struct load *ld)
{
	for (uint32_t i = 0; i < ld->bind_cnt && i < ld->fd_array_cnt; i++) {
		struct brt_map *map;
		int err;

		if (brt_map_memo_get(&ld->memo, ld->fd_array[i], &map))
			continue; /* a BTF object: nothing a program keeps here */
		err = add_map(ld, map);
		if (err < 0)
			return err;
	}
	return 0;
}

static int resolve_maps(struct load *ld, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i++) {
		struct bpf_insn *insn = &ld->insns[i];
		int err;

		if (insn->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		switch (insn->src_reg) {
		case 0:
		case BPF_PSEUDO_FUNC: /* the engines load the function's insn index */
			break;
		case BPF_PSEUDO_MAP_FD:
		case BPF_PSEUDO_MAP_VALUE:
		case BPF_PSEUDO_MAP_IDX:
		case BPF_PSEUDO_MAP_IDX_VALUE:
			err = resolve_lddw(ld, insn, &ld->stored[i]);
			if (err)
				return err;
			break;
		default:
			/* BTF ids need kernel BTF */
			return -EINVAL;
		}
		i++;
	}
	return 0;
}

/* The values of the program's frozen arrays that programs may only read (libbpf's .rodata
 * and .kconfig; single-element arrays, the only ones an lddw points into): constant from
 * now on, so the JIT may read them at compile time (pass rodata), as the verifier reads
 * them (check.c's map_info).  Frozen is for good: a map found frozen here stays so.
 * 0 with *out NULL when there are none, or -ENOMEM. */
static int rodata_ranges(const struct load *ld, struct brt_jit_rodata **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	for (uint32_t i = 0; i < ld->pm.n; i++) {
		const struct brt_map *m = ld->pm.maps[i];
		struct brt_jit_rodata *r;

		if (m->type != BPF_MAP_TYPE_ARRAY || m->max_entries != 1 ||
		    !(m->flags & BPF_F_RDONLY_PROG) ||
		    !atomic_load_explicit(&m->obj.hdr->frozen, memory_order_acquire))
			continue;
		r = realloc(*out, (*n + 1) * sizeof(**out));
		if (!r) {
			free(*out);
			*out = NULL;
			return -ENOMEM;
		}
		*out = r;
		r[(*n)++] = (struct brt_jit_rodata){ .addr = (uint64_t)(uintptr_t)m->data,
						     .size = m->value_size };
	}
	return 0;
}

/* The engine prog_flags asks for (BPFRT_F_ENGINE()), else the user's default: the
 * BPFRT_ENGINE environment variable, else native code, as Linux runs a verified program. */
static enum bpfrt_engine load_engine(uint32_t prog_flags)
{
	enum bpfrt_engine e = (enum bpfrt_engine)((prog_flags & BPFRT_F_ENGINE_MASK) >>
						  BPFRT_F_ENGINE_SHIFT);

	if (e != BPFRT_ENGINE_DEFAULT || !brt_vm_engine_parse(getenv("BPFRT_ENGINE"), 0, &e))
		return e;
#ifdef BPFRT_HAVE_JIT
	return BPFRT_ENGINE_JIT;
#else
	return BPFRT_ENGINE_CHECKED;
#endif
}

/* The privilege a load was verified with (exactly one BPFRT_F_PRIV_* bit is set). */
static uint32_t xlated_priv(uint32_t prog_flags)
{
	switch (prog_flags & BPFRT_F_PRIV_MASK) {
	case BPFRT_F_PRIV_FULL:
		return BRT_PRIV_ROOT;
	case BPFRT_F_PRIV_BPF_CAPABLE:
		return BRT_PRIV_BPF_CAPABLE;
	default:
		return BRT_PRIV_UNPRIV;
	}
}

static void prog_release(struct brt_obj *obj)
{
	struct brt_prog *prog = (struct brt_prog *)(void *)obj;

	bpfrt_vm_free(prog->vm);
	own_maps(&prog->pm, -1);
	put_maps(&prog->pm);
	brt_prog_lines_free(prog->lines);
	free(prog->xflags);
	free(prog->xmap);
	free(prog->xloop);
	free(prog->xstack);
}

static int prog_init(struct brt_obj *obj, void *arg)
{
	struct brt_prog *prog = (struct brt_prog *)(void *)obj;
	struct load *ld = arg;

	brt_prog_file_write(obj, ld->stored, ld->attr->insn_cnt, &ld->pm,
			    obj->snap.nfuncs ? ld->lines->linkage : NULL, obj->snap.nfuncs);
	if (obj->snap.tail_size)
		brt_prog_file_write_tail(obj, ld->lines);
	prog->pm = ld->pm;
	own_maps(&prog->pm, 1);
	prog->pm.magic = BRT_PROG_MAPS_MAGIC;
	prog->pm.owner = obj;
	prog->pm.prog_type = ld->attr->prog_type;
	prog->vm = ld->vm;
	prog->type = ld->attr->prog_type;
	prog->expected_attach_type = ld->attr->expected_attach_type;
	prog->insn_cnt = ld->attr->insn_cnt;
	prog->nmaps = obj->snap.nmaps;
	prog->nfuncs = obj->snap.nfuncs;
	prog->max_ctx_offset = ld->max_ctx_offset;
	prog->verified_insns = ld->verified_insns;
	ld->pm.maps = NULL;
	ld->pm.n = 0;
	ld->vm = NULL;
	prog->lines = ld->lines;
	ld->lines = NULL;
	prog->xflags = ld->xflags;
	prog->xmap = ld->xmap;
	prog->xloop = ld->xloop;
	prog->xstack = ld->xstack;
	prog->nxstack = ld->nxstack;
	prog->xpriv = xlated_priv(ld->prog_flags);
	ld->xflags = NULL;
	ld->xmap = NULL;
	ld->xloop = NULL;
	ld->xstack = NULL;
	obj->release = prog_release;
	atomic_store_explicit(&prog->ready, 1, memory_order_release);
	return 0;
}

static int copy_in(struct brt_call *call, struct load *ld)
{
	union bpf_attr *attr = call->attr;
	size_t bytes = (size_t)attr->insn_cnt * sizeof(struct bpf_insn);
	int err;

	ld->insns = malloc(bytes);
	if (!ld->insns)
		return -ENOMEM;
	err = call->ua->from(ld->insns, attr->insns, bytes);
	if (err)
		return err;
	ld->stored = malloc(bytes);
	if (!ld->stored)
		return -ENOMEM;
	memcpy(ld->stored, ld->insns, bytes);
	ld->bind_cnt = (uint32_t)brt_attr_field(call, BRT_PROG_LOAD_FD_ARRAY_CNT_OFF, 4);
	if (attr->fd_array || ld->bind_cnt) {
		/* The kernel reads fd_array entries as it meets them; we read the indexes the
		 * program can use, at most one per instruction pair, and the fd_array_cnt
		 * entries it binds (one too many for bpf_check(): "fd_array_cnt is too big") */
		uint32_t cnt = attr->insn_cnt, cap = 0;

		if (ld->bind_cnt > cnt && ld->bind_cnt < UINT32_MAX / sizeof(int))
			cnt = ld->bind_cnt;
		/* grown as entries read: a huge fd_array_cnt over a short array faults early */
		for (uint32_t i = 0; attr->fd_array && i < cnt; i++) {
			if (i == cap) {
				uint32_t ncap = cap ? (cap > cnt / 2 ? cnt : cap * 2) :
						      (cnt < 1024 ? cnt : 1024);
				int *t = realloc(ld->fd_array, (size_t)ncap * sizeof(int));

				if (!t)
					return -ENOMEM;
				ld->fd_array = t;
				cap = ncap;
			}
			if (call->ua->from(&ld->fd_array[i], attr->fd_array + 4ull * i, 4))
				break;
			ld->fd_array_cnt = i + 1;
		}
		/* the verifier sees an fd_array (an empty one when the first read faults) */
		if (!ld->fd_array && !(ld->fd_array = malloc(sizeof(int))))
			return -ENOMEM;
	}
	if (attr->log_level && attr->log_size) {
		ld->log_size = attr->log_size;
		ld->log.alloc = attr->log_size < LOG_BUF_FIRST ? attr->log_size : LOG_BUF_FIRST;
		ld->log.buf = calloc(1, ld->log.alloc);
		if (!ld->log.buf)
			return -ENOMEM;
	}
	return 0;
}

/* bpf_prog_load_check_attach(): the expected_attach_type each type may name at load
 * (types not listed take any).  The kernel defaults cgroup_sock's 0 to
 * BPF_CGROUP_INET_SOCK_CREATE and sk_reuseport's to BPF_SK_REUSEPORT_SELECT first
 * (fixup_attach_type()). */
static int attach_type_ok(uint32_t type, uint32_t at)
{
	switch (type) {
	case BPF_PROG_TYPE_CGROUP_SOCK:
		return at == BPF_CGROUP_INET_SOCK_CREATE || at == BPF_CGROUP_INET_SOCK_RELEASE ||
		       at == BPF_CGROUP_INET4_POST_BIND || at == BPF_CGROUP_INET6_POST_BIND;
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
		switch (at) {
		case BPF_CGROUP_INET4_BIND: case BPF_CGROUP_INET6_BIND:
		case BPF_CGROUP_INET4_CONNECT: case BPF_CGROUP_INET6_CONNECT:
		case BRT_CGROUP_UNIX_CONNECT:
		case BPF_CGROUP_INET4_GETPEERNAME: case BPF_CGROUP_INET6_GETPEERNAME:
		case BRT_CGROUP_UNIX_GETPEERNAME:
		case BPF_CGROUP_INET4_GETSOCKNAME: case BPF_CGROUP_INET6_GETSOCKNAME:
		case BRT_CGROUP_UNIX_GETSOCKNAME:
		case BPF_CGROUP_UDP4_SENDMSG: case BPF_CGROUP_UDP6_SENDMSG:
		case BRT_CGROUP_UNIX_SENDMSG:
		case BPF_CGROUP_UDP4_RECVMSG: case BPF_CGROUP_UDP6_RECVMSG:
		case BRT_CGROUP_UNIX_RECVMSG:
			return 1;
		default:
			return 0;
		}
	case BPF_PROG_TYPE_CGROUP_SKB:
		return at == BPF_CGROUP_INET_INGRESS || at == BPF_CGROUP_INET_EGRESS;
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
		return at == BPF_CGROUP_SETSOCKOPT || at == BPF_CGROUP_GETSOCKOPT;
	case BPF_PROG_TYPE_SK_LOOKUP:
		return at == BPF_SK_LOOKUP;
	case BPF_PROG_TYPE_SK_REUSEPORT:
		return at == BPF_SK_REUSEPORT_SELECT || at == BPF_SK_REUSEPORT_SELECT_OR_MIGRATE;
	case BRT_PROG_TYPE_NETFILTER:
		return at == BRT_NETFILTER;
	case BPF_PROG_TYPE_SYSCALL:
		return at == 0;
	default:
		return 1;
	}
}

/* bpf_prog_verify_signature() (Linux 6.18), before the program's name is checked: the
 * kernel checks a PKCS#7 signature of the instructions with a key of its keyrings, which
 * user space cannot do, so a signed program is refused here (never accepted unchecked),
 * with the kernel's errno for a signature its key does not verify (-EOPNOTSUPP, measured
 * for signatures that are not PKCS#7), after its own checks: the size limit (-EINVAL), a
 * key it does not find (-EINVAL: the system keyrings 0-2 exist, a user key id is looked
 * up) and the copy (-ENOMEM for a bad pointer, kvmemdup_bpfptr()'s). */
static int signature_check(const struct brt_call *call)
{
	uint64_t sig = brt_attr_field(call, BRT_PROG_LOAD_SIGNATURE_OFF, 8);
	uint32_t size = (uint32_t)brt_attr_field(call, BRT_PROG_LOAD_SIGNATURE_SIZE_OFF, 4);
	int32_t keyring = (int32_t)brt_attr_field(call, BRT_PROG_LOAD_KEYRING_ID_OFF, 4);
	unsigned char byte;

	if (!sig)
		return 0;
	if (size > SIGNATURE_MAX)
		return -EINVAL;
	/* the id widens to u64 signed, so a negative one is a user keyring's */
	if ((uint64_t)(int64_t)keyring > 2 && syscall(SYS_keyctl, KEYCTL_DESCRIBE_ID, keyring,
						      NULL, 0) < 0 && errno != EACCES)
		return -EINVAL;
	for (uint32_t i = 0; i < size; i++)
		if (call->ua->from(&byte, sig + i, 1))
			return -ENOMEM;
	return -EOPNOTSUPP;
}

static int check_attrs(struct brt_call *call, struct load *ld)
{
	union bpf_attr *attr = call->attr;
	int len, err;

	if (attr->prog_flags & ~PROG_FLAGS)
		return -EINVAL;
	if (attr->prog_flags & BPF_F_TOKEN_FD) {
		/* bpf_token_get_from_fd(): this runtime creates no BPF tokens, so the fd is a
		 * closed one (-EBADF) or not a token (-EINVAL); without the flag the field is
		 * not read */
		int32_t tfd = (int32_t)brt_attr_field(call, BRT_PROG_LOAD_TOKEN_FD_OFF, 4);

		return tfd < 0 || fcntl(tfd, F_GETFD) < 0 ? -EBADF : -EINVAL;
	}
	len = call->ua->str(ld->license, attr->license, sizeof(ld->license));
	if (len == -ENAMETOOLONG) {
		/* the kernel keeps the first 127 bytes */
		ld->license[sizeof(ld->license) - 1] = 0;
	} else if (len < 0) {
		return -EFAULT;
	}
	ld->gpl = gpl_compatible(ld->license);
	if (attr->insn_cnt == 0 || attr->insn_cnt > MAX_INSNS)
		return -E2BIG;
	if (!brt_prog_type_has(attr->prog_type, BRT_PT_LOAD))
		return -EINVAL;
	if (attr->prog_type == BPF_PROG_TYPE_CGROUP_SOCK && !attr->expected_attach_type)
		attr->expected_attach_type = BPF_CGROUP_INET_SOCK_CREATE;
	if (attr->prog_type == BPF_PROG_TYPE_SK_REUSEPORT && !attr->expected_attach_type)
		attr->expected_attach_type = BPF_SK_REUSEPORT_SELECT;
	if (!attach_type_ok(attr->prog_type, attr->expected_attach_type))
		return -EINVAL;
	if (attr->prog_ifindex || attr->attach_prog_fd || attr->core_relo_cnt)
		return -EINVAL;
	/* bpf_prog_load(): an attach_btf_id names a type of the kernel's BTF (no kernel
	 * BTF: -EINVAL), for the BTF-typed program types only */
	if (attr->attach_btf_id &&
	    (!brt_btf_vmlinux() || attr->attach_btf_id > BTF_MAX_TYPE ||
	     !brt_prog_type_has(attr->prog_type, BRT_PT_BTF)))
		return -EINVAL;
	err = signature_check(call);
	if (err)
		return err;
	if (!name_ok(attr->prog_name, sizeof(attr->prog_name)))
		return -EINVAL;
	if (!log_attr_ok(attr))
		return -EINVAL;
	return 0;
}

/* The log into the caller's log_buf, and log_true_size into its attr when it has the
 * field and the verifier ran (bpf_check() writes it, whatever the verdict). */
static int write_log(struct brt_call *call, struct load *ld)
{
	size_t len;
	int err = 0;

	if (ld->log_true_set && call->size >= BRT_PROG_LOAD_LOG_TRUE_SIZE_OFF + 4)
		err = call->ua->to(call->uattr + BRT_PROG_LOAD_LOG_TRUE_SIZE_OFF, &ld->log_true,
				   sizeof(ld->log_true));
	if (!ld->log.buf || err)
		return err;
	len = strnlen(ld->log.buf, ld->log.alloc - 1) + 1;
	ld->log.buf[len - 1] = 0;
	return call->ua->to(call->attr->log_buf, ld->log.buf, len);
}

/* func_info/line_info checks (btf_load.c).  The kernel runs them inside bpf_check(), so a
 * rejection's log ends with the verifier's statistics and a log too small for that turns
 * the rejection into -ENOSPC (a 16-byte log_buf). */
static int btf_check(struct brt_call *call, struct load *ld)
{
	char msg[512] = "";
	int err, lerr;

	err = brt_prog_btf_check(call, ld->insns, call->attr->log_level ? msg : NULL, sizeof(msg),
				 &ld->lines);
	if (!err || !call->attr->log_level)
		return err;
	lerr = brt_verify_log_early(call->attr->log_level, &ld->log, ld->log_size, msg,
				    &ld->log_true);
	ld->log_true_set = 1;
	return lerr ? lerr : err;
}

/* What a rejection by the verifier (err) does to a brt_prog_load_vm() load, whose engine
 * is *engine (DEFAULT: not chosen yet): 0 and the engine to load on, or err. */
static int after_check(const struct brt_prog_vm_opts *o, int err, enum bpfrt_engine *engine,
		       const char *why)
{
	if (err && o->keep_rejected == 2) {
		/* converted programs are safe by construction: a rejection is a bug here or
		 * in the verifier, worth a warning but not a refusal */
		brt_print(BPFRT_WARN, "bpfrt: converted classic program: %s\n", why);
	} else if (err && (!o->keep_rejected || (*engine != BPFRT_ENGINE_CHECKED &&
						  *engine != BPFRT_ENGINE_DEFAULT))) {
		return err; /* -EACCES for a rejection, as BPF_PROG_LOAD */
	}
	if (*engine == BPFRT_ENGINE_DEFAULT)
		*engine = o->keep_rejected == 2 || !err ? o->engine_default : BPFRT_ENGINE_CHECKED;
	return 0;
}

/* The verifier's map of each helper call as an index into the program's maps (+1), for
 * the kernel's view (xlated.c). */
static int xlated_maps(struct load *ld, void *const *call_maps)
{
	uint32_t n = ld->attr->insn_cnt;

	free(ld->xmap);
	ld->xmap = calloc(n ? n : 1, sizeof(*ld->xmap));
	if (!ld->xmap)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; call_maps[i] && k < ld->pm.n && k < UINT16_MAX; k++)
			if (ld->pm.maps[k] == call_maps[i]) {
				ld->xmap[i] = (uint16_t)(k + 1);
				break;
			}
	return 0;
}

/* The JIT's code named for perf (BPFRT_PERF_MAP=1, src/jit/perf_map.c) as the kernel names
 * its images in kallsyms, bpf_prog_<tag>_<name> (bpf_prog_<tag> without a name), the tag
 * over the instructions as loaded; sym[0] is 0 when no name is wanted (or no JIT). */
static void perf_sym(const struct load *ld, char sym[BRT_JIT_PERF_SYM_LEN])
{
#ifdef BPFRT_HAVE_JIT
	unsigned char tag[BPF_TAG_SIZE];
	char name[BPF_OBJ_NAME_LEN];

	sym[0] = 0;
	if (!brt_jit_perf_map_enabled() || brt_prog_tag(ld->insns, ld->attr->insn_cnt, tag))
		return;
	memcpy(name, ld->attr->prog_name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	brt_jit_perf_sym(sym, tag, name);
#else
	(void)ld;
	sym[0] = 0;
#endif
}

/* Check the program, resolve its maps and build the vm: the part of a load that another
 * process repeats from the program file, and all of a brt_prog_load_vm().  0 or -errno
 * (ld->err says why, when set). */
/* What a program reads through a kernel symbol (lddw BPF_PSEUDO_BTF_ID, see build()):
 * zeroes, as many as the verifier lets it read (cfg.c's BRT_KSYM_MEM_MAX) */
static uint8_t ksym_zeroes[1u << 20];

static int build(struct load *ld)
{
	const union bpf_attr *attr = ld->attr;
	const struct brt_prog_vm_opts *o = ld->vm_opts;
	BPFRT_OPTS(bpfrt_vm_opts, vo, .engine = load_engine(ld->prog_flags));
	struct brt_prog_check pc = { 0 };
	uint16_t *ops;
	char msg[256], sym[BRT_JIT_PERF_SYM_LEN];
	int err, verified;

	perf_sym(ld, sym); /* before the instructions are patched below */
	pc.insns = ld->insns;
	pc.n = attr->insn_cnt;
	pc.prog_type = attr->prog_type;
	pc.expected_attach_type = attr->expected_attach_type;
	pc.attach_btf_id = attr->attach_btf_id;
	pc.prog_flags = ld->prog_flags;
	pc.gpl = ld->gpl;
	pc.log_level = attr->log_level;
	pc.log_grow = ld->log.buf ? &ld->log : NULL;
	pc.log_size = ld->log_size;
	pc.log_true_size = &ld->log_true;
	pc.fd_array = ld->fd_array;
	pc.fd_array_cnt = ld->fd_array_cnt;
	pc.bind_cnt = ld->bind_cnt;
	pc.max_ctx_offset = &ld->max_ctx_offset;
	pc.verified_insns = &ld->verified_insns;
	pc.lines = ld->lines ? ld->lines->lines : NULL;
	pc.nlines = ld->lines ? ld->lines->n : 0;
	pc.func_linkage = ld->lines ? ld->lines->linkage : NULL;
	pc.nfuncs = ld->lines ? ld->lines->nfuncs : 0;
	pc.prog_btf = ld->lines && ld->lines->func_ids ? ld->lines->types : NULL;
	pc.func_btf_ids = pc.prog_btf ? ld->lines->func_ids : NULL;
	pc.func_offs = pc.prog_btf ? ld->lines->func_offs : NULL;
	pc.exc_cb_insn = pc.prog_btf ? 0 : ld->exc_cb_insn;
	pc.local_btf = ld->lines ? ld->lines->types : NULL;
	pc.btf_info = attr->func_info_cnt || attr->line_info_cnt || ld->lines;
	if (o) {
		/* no fd table, no map; the caller's engine rules (after_check()) */
		vo.engine = o->engine;
		vo.insn_budget = o->insn_budget;
		pc.no_maps = 1;
		pc.err_msg = ld->err;
		pc.err_msglen = ld->errlen;
	}
	/* the calls' maps bind lookups into the JIT's code and make the kernel's view
	 * (xlated.c), as do the instructions' flags */
	if (vo.engine == BPFRT_ENGINE_JIT || !o) {
		pc.call_maps = calloc(attr->insn_cnt ? attr->insn_cnt : 1, sizeof(*pc.call_maps));
		if (!pc.call_maps)
			return -ENOMEM;
	}
	if (!o) {
		free(ld->xflags);
		ld->xflags = calloc(attr->insn_cnt ? attr->insn_cnt : 1, 1);
		if (!ld->xflags) {
			free(pc.call_maps);
			return -ENOMEM;
		}
		pc.insn_flags = ld->xflags;
		free(ld->xloop);
		ld->xloop = calloc(attr->insn_cnt ? attr->insn_cnt : 1, sizeof(*ld->xloop));
		if (!ld->xloop) {
			free(pc.call_maps);
			return -ENOMEM;
		}
		pc.loop_callback = ld->xloop;
	}
	pc.ctx_read_off = calloc(attr->insn_cnt ? attr->insn_cnt : 1, sizeof(*pc.ctx_read_off));
	if (!pc.ctx_read_off) {
		free(pc.call_maps);
		return -ENOMEM;
	}
	/* The one decode of the program: the verifier and the vm take its rows.  One that
	 * does not decode goes to the verifier without them, for the kernel's message. */
	ops = malloc((attr->insn_cnt ? attr->insn_cnt : 1) * sizeof(*ops));
	if (!ops) {
		free(pc.call_maps);
		free(pc.ctx_read_off);
		return -ENOMEM;
	}
	if (brt_isa_decode_prog(ld->insns, attr->insn_cnt, BRT_VM_DEFAULT_MAX_INSNS, ops, msg,
				sizeof(msg))) {
		free(ops);
		ops = NULL;
	}
	pc.ops = ops;
	pc.memo = &ld->memo;
	err = brt_api_check_prog(&pc);
	ld->log_true_set |= pc.log_ran;
	/* loads through kernel pointers (bpf_get_current_task_btf's stand-in task and what
	 * it points to, which the kernel reads fault-safe): only the checked engine stops
	 * at a bad address instead of faulting */
	if (!err && pc.btf_loads)
		vo.engine = BPFRT_ENGINE_CHECKED;
	/* the kernel's narrow context loads that return their whole field read it at its
	 * start here (the verifier says which); the rest of the program stays as given */
	for (uint32_t i = 0; !err && i < attr->insn_cnt; i++)
		if (pc.ctx_read_off[i])
			ld->insns[i].off = (int16_t)(pc.ctx_read_off[i] - 1);
	free(pc.ctx_read_off);
	/* kernel function calls: one the runtime offers (vm/kfuncs.def) becomes a call of
	 * the helper id its function has in every helper table; any other the verifier let
	 * through only in dead code (unresolved weak ones, or kfuncs the walk never reached),
	 * which the kernel removes: the engines get a no-op in its place */
	for (uint32_t i = 0, patched = 0; !err && i < attr->insn_cnt; i++) {
		if (ld->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    ld->insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL) {
			int h = ld->insns[i].off ? -1 : brt_verifier_kfunc_helper(ld->insns[i].imm);

			ld->insns[i] = h < 0 ? (struct bpf_insn){ .code = BPF_JMP | BPF_JA }
					     : (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = h };
			patched = 1;
		}
		/* a helper call the walk never reached (libbpf's poisoned CO-RE relocation,
		 * call 0xbad2310, behind a branch its own relocation decided): the kernel
		 * removes such dead code, and an engine must not refuse the program for a
		 * helper it will never call */
		if (!o && ld->xflags && !(ld->xflags[i] & BRT_INSN_SEEN) &&
		    ld->insns[i].code == (BPF_JMP | BPF_CALL) && ld->insns[i].src_reg == 0) {
			ld->insns[i] = (struct bpf_insn){ .code = BPF_JMP | BPF_JA };
			patched = 1;
		}
		/* kernel symbols (lddw BPF_PSEUDO_BTF_ID): the kernel puts the symbol's address
		 * there; user space reads no kernel memory, so for a variable the address of
		 * zeroes stands in
		 * (the verifier allows no writes through it and at most BRT_KSYM_MEM_MAX bytes
		 * of reads; kernel objects are read fault-safe by the checked engine) */
		if (ld->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    ld->insns[i].src_reg == BPF_PSEUDO_BTF_ID && i + 1 < attr->insn_cnt) {
			/* a function's address is the kernel's (it is only compared) */
			uint64_t a = brt_verifier_ksym_addr(ld->insns[i].imm);

			if (!a)
				a = (uint64_t)(uintptr_t)ksym_zeroes;

			ld->insns[i].src_reg = 0;
			ld->insns[i].imm = (int32_t)(uint32_t)a;
			ld->insns[i + 1].imm = (int32_t)(uint32_t)(a >> 32);
			patched = 1;
		}
		if (patched && i + 1 == attr->insn_cnt && ops &&
		    brt_isa_decode_prog(ld->insns, attr->insn_cnt, BRT_VM_DEFAULT_MAX_INSNS, ops,
					msg, sizeof(msg))) {
			free(ops);
			ops = NULL;
		}
	}
	verified = !err;
	if (o)
		err = after_check(o, err, &vo.engine, ld->err);
	else if (!err)
		err = bind_maps(ld);
	if (!err && !o)
		err = resolve_maps(ld, attr->insn_cnt);
	if (!err && ops) {
		struct brt_jit_rodata *ro = NULL;
		size_t nro = 0;

		err = rodata_ranges(ld, &ro, &nro);
		if (!err)
			err = brt_vm_load_decoded(ld->insns, attr->insn_cnt, ops, &vo, ro, nro,
						  verified, sym[0] ? sym : NULL, &ld->vm,
						  o ? ld->err : msg, o ? ld->errlen : sizeof(msg));
		else
			free(ops);
		free(ro);
		ops = NULL; /* the vm's now */
	} else if (!err) {
		err = brt_vm_load_decoded(ld->insns, attr->insn_cnt, NULL, &vo, NULL, 0, verified,
					  sym[0] ? sym : NULL, &ld->vm, o ? ld->err : msg,
					  o ? ld->errlen : sizeof(msg));
	}
	free(ops);
	if (!err && pc.nobj_types)
		err = brt_vm_set_obj_types(ld->vm, pc.obj_types, pc.nobj_types);
	if (!err && pc.throws)
		err = brt_vm_set_exception(ld->vm, pc.exc_cb_insn);
	/* the checked engine's fault-safe loads (the kernel's BPF_PROBE_MEM) */
	if (!err && pc.btf_loads && ld->xflags)
		err = brt_vm_set_probe_loads(ld->vm, ld->xflags, BRT_INSN_PROBE);
	ld->exc_cb_insn = pc.exc_cb_insn;
	if (!err && !o)
		err = xlated_maps(ld, pc.call_maps);
	if (!err && !o) {
		uint32_t any = 0;

		for (uint32_t i = 0; i < attr->insn_cnt; i++)
			any |= ld->xloop[i];
		if (!any) {
			free(ld->xloop);
			ld->xloop = NULL;
		}
		free(ld->xstack);
		ld->nxstack = pc.subprog_cnt;
		ld->xstack = malloc((pc.subprog_cnt ? pc.subprog_cnt : 1) * sizeof(*ld->xstack));
		if (!ld->xstack)
			err = -ENOMEM;
		else
			memcpy(ld->xstack, pc.stack_depth, pc.subprog_cnt * sizeof(*ld->xstack));
	}
	/* the JIT binds a call to the map it is passed, never to a map of maps */
	for (uint32_t i = 0; !err && !o && i < attr->insn_cnt; i++)
		if (ld->xflags[i] & BRT_INSN_INNER_MAP)
			pc.call_maps[i] = NULL;
	if (!err && !o)
		err = brt_prog_bind_lookups(ld->vm, ld->insns, attr->insn_cnt, pc.call_maps,
					    &ld->pm);
	free(pc.call_maps);
	return err;
}

static void load_free(struct load *ld)
{
	bpfrt_vm_free(ld->vm);
	put_maps(&ld->pm);
	brt_map_memo_free(&ld->memo);
	free(ld->insns);
	free(ld->stored);
	free(ld->fd_array);
	free(ld->log.buf);
	free(ld->xflags);
	free(ld->xmap);
	free(ld->xloop);
	free(ld->xstack);
	brt_prog_lines_free(ld->lines);
}

int brt_cmd_prog_load(struct brt_call *call)
{
	union bpf_attr *attr = call->attr;
	struct load ld = { .attr = attr };
	struct brt_obj_hdr hdr = { 0 };
	struct brt_obj *obj;
	int err, fd;

	err = check_attrs(call, &ld);
	if (!err)
		err = brt_api_prog_priv(attr->prog_flags, &ld.prog_flags);
	if (err)
		return err;
	err = copy_in(call, &ld);
	if (!err)
		err = btf_check(call, &ld);
	if (!err)
		err = build(&ld);
	if (write_log(call, &ld) && !err)
		err = -EFAULT;
	if (err)
		goto out_free;
	hdr.kind = BRT_OBJ_PROG;
	hdr.nfuncs = ld.lines && ld.lines->linkage ? ld.lines->nfuncs : 0;
	hdr.data_size = brt_prog_file_data_size(attr->insn_cnt, ld.pm.n, hdr.nfuncs);
	hdr.type = attr->prog_type;
	hdr.max_entries = attr->insn_cnt;
	hdr.nmaps = ld.pm.n;
	hdr.flags = ld.prog_flags;
	hdr.expected_attach_type = attr->expected_attach_type;
	hdr.key_size = attr->attach_btf_id;
	hdr.value_size = ld.exc_cb_insn;
	/* the BTF of its func/line info, reported as the kernel's prog btf_id */
	hdr.btf_id = ld.lines ? ld.lines->btf->snap.id : 0;
	hdr.tail_size = brt_prog_file_tail_size(ld.lines);
	/* a file without the BTF blob cannot answer for its BTF's id: the BTF object's own
	 * file stays mapped as long as the program holds it (brt_prog_btf_check() did not) */
	if (ld.lines && !hdr.tail_size)
		brt_obj_keep_fd(ld.lines->btf, (int)attr->prog_btf_fd);
	hdr.tail_packed = 1; /* after the instructions and map table, in the same pages */
	hdr.gpl = (uint32_t)ld.gpl;
	memcpy(hdr.name, attr->prog_name, sizeof(hdr.name));
	fd = brt_obj_create_once(&hdr, sizeof(struct brt_prog), prog_init, &ld, &obj);
	if (fd >= 0)
		brt_obj_put(obj);
	err = fd;
out_free:
	load_free(&ld);
	return err;
}

/* Build this process's vm for a program another process loaded: its maps are opened
 * (prog_file.c), then it is checked and resolved as PROG_LOAD did, with the privilege it
 * was loaded with.  Called with materialise_lock held; 0 or -errno. */
static int materialise(struct brt_prog *prog)
{
	const struct brt_obj_hdr *hdr = &prog->obj.snap; /* not the shared one: see attach */
	union bpf_attr attr;
	struct load ld = { .attr = &attr };
	size_t bytes = (size_t)prog->insn_cnt * sizeof(struct bpf_insn);
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = prog->type;
	attr.insn_cnt = prog->insn_cnt;
	attr.expected_attach_type = prog->expected_attach_type;
	attr.attach_btf_id = hdr->key_size;
	ld.exc_cb_insn = hdr->value_size;
	memcpy(attr.prog_name, hdr->name, sizeof(attr.prog_name)); /* perf's name (build()) */
	/* the level in the header is only as good as whoever could write the file */
	err = brt_api_prog_file_priv(hdr->flags, prog->max_priv, &ld.prog_flags);
	if (err)
		return err;
	ld.gpl = hdr->gpl != 0;
	ld.insns = malloc(bytes);
	ld.stored = malloc(bytes);
	err = ld.insns && ld.stored ? 0 : -ENOMEM;
	if (!err) {
		memcpy(ld.insns, prog->obj.base, bytes);
		memcpy(ld.stored, ld.insns, bytes);
		err = brt_prog_file_open_maps(prog, &ld.fd_array, &ld.fd_array_cnt);
		/* numbers of our own: what a batch's memo knew under them is closed fds' */
		for (uint32_t i = 0; !err && i < ld.fd_array_cnt; i++)
			brt_obj_batch_forget(ld.fd_array[i]);
		/* the table in its order, maps the code does not name included (fd_array_cnt's
		 * at load): so the rebuilt table is the file's */
		ld.bind_cnt = ld.fd_array_cnt;
	}
	/* the BTF, func_info and line_info the load had, when the file keeps them (a bad
	 * copy is ignored: the program is still what its instructions are) */
	if (!err && brt_prog_file_lines(prog, ld.stored, &ld.lines))
		ld.lines = NULL;
	if (!err && !ld.lines && prog->nfuncs) {
		/* the func_info linkage (callbacks must be static); no source lines */
		ld.lines = calloc(1, sizeof(*ld.lines));
		if (ld.lines)
			ld.lines->linkage = malloc(prog->nfuncs);
		if (!ld.lines || !ld.lines->linkage) {
			err = -ENOMEM;
		} else {
			memcpy(ld.lines->linkage, brt_prog_file_linkage(prog), prog->nfuncs);
			ld.lines->nfuncs = prog->nfuncs;
		}
	}
	if (!err)
		err = build(&ld);
	/* an index past the file's table is the verifier's fault on user memory (EFAULT) in
	 * a load; here no caller memory is read: the file is bad */
	if (err == -EFAULT)
		err = -EINVAL;
	/* resolved (and so in a batch's memo), closed here: numbers free again */
	for (uint32_t i = 0; i < ld.fd_array_cnt; i++) {
		brt_obj_batch_forget(ld.fd_array[i]);
		close(ld.fd_array[i]);
	}
	if (!err && ld.pm.n != prog->nmaps)
		err = -EINVAL; /* a table that is not the file's */
	if (!err) {
		prog->pm.maps = ld.pm.maps;
		prog->pm.n = ld.pm.n;
		own_maps(&prog->pm, 1);
		ld.pm.maps = NULL;
		ld.pm.n = 0;
		prog->vm = ld.vm;
		ld.vm = NULL;
		prog->max_ctx_offset = ld.max_ctx_offset;
		prog->verified_insns = ld.verified_insns;
		prog->xflags = ld.xflags;
		prog->xmap = ld.xmap;
		prog->xloop = ld.xloop;
		prog->xstack = ld.xstack;
		prog->nxstack = ld.nxstack;
		prog->xpriv = xlated_priv(ld.prog_flags);
		ld.xflags = NULL;
		ld.xmap = NULL;
		ld.xloop = NULL;
		ld.xstack = NULL;
		if (ld.lines && ld.lines->types) {
			prog->lines = ld.lines;
			ld.lines = NULL;
		}
		atomic_store_explicit(&prog->ready, 1, memory_order_release);
	}
	load_free(&ld);
	return err;
}

int brt_prog_load_vm(const struct bpf_insn *insns, size_t n, const struct brt_prog_vm_opts *o,
		     struct bpfrt_vm **out, char *err, size_t errlen)
{
	union bpf_attr attr;
	struct load ld = { .attr = &attr, .vm_opts = o, .gpl = o->gpl, .err = err,
			   .errlen = errlen };
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = o->prog_type;
	attr.insn_cnt = (uint32_t)n;
	ret = brt_api_prog_priv(o->prog_flags, &ld.prog_flags);
	if (ret) {
		snprintf(err, errlen, "prog_flags 0x%x: more than one privilege", o->prog_flags);
		return ret;
	}
	ld.insns = malloc((n ? n : 1) * sizeof(*insns));
	if (!ld.insns) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(ld.insns, insns, n * sizeof(*insns));
	ret = build(&ld);
	if (!ret) {
		*out = ld.vm;
		ld.vm = NULL;
	}
	load_free(&ld);
	return ret;
}

static pthread_mutex_t materialise_lock = PTHREAD_MUTEX_INITIALIZER;

int brt_prog_materialise(struct brt_prog *prog)
{
	int err = 0;

	if (atomic_load_explicit(&prog->ready, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&materialise_lock);
	if (!atomic_load_explicit(&prog->ready, memory_order_relaxed))
		err = materialise(prog);
	pthread_mutex_unlock(&materialise_lock);
	return err;
}

int brt_prog_from_fd(int fd, struct brt_prog **out)
{
	struct brt_obj *obj;
	int err = brt_obj_from_fd(fd, BRT_OBJ_PROG, &obj);

	if (err)
		return err;
	*out = (struct brt_prog *)(void *)obj;
	err = brt_prog_materialise(*out);
	if (err) {
		brt_obj_put(obj);
		return err;
	}
	return 0;
}

/* A program file seen for the first time in this process (pinned by another process, or
 * its fd received): its header is checked here, on a private snapshot whose sizes the
 * program keeps (another process may rewrite the shared header at any time, a retried
 * materialise included); its vm is built on first use (brt_prog_materialise()). */
static int prog_attach_obj(const struct brt_obj *tmpl, struct brt_obj **out)
{
	struct brt_obj_hdr hdr;
	struct brt_prog *prog;
	int err;

	hdr = tmpl->snap;
	if (!hdr.max_entries || hdr.max_entries > MAX_INSNS)
		return -EINVAL;
	err = brt_prog_file_check(&hdr, tmpl->size);
	if (err)
		return err;
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	prog->obj = *tmpl;
	prog->pm.magic = BRT_PROG_MAPS_MAGIC;
	prog->pm.owner = &prog->obj;
	prog->pm.prog_type = hdr.type;
	prog->type = hdr.type;
	prog->expected_attach_type = hdr.expected_attach_type;
	prog->insn_cnt = hdr.max_entries;
	prog->nmaps = hdr.nmaps;
	prog->nfuncs = hdr.nfuncs;
	prog->max_priv = brt_prog_file_max_priv(tmpl->last_fd); /* the fd just mapped */
	prog->obj.release = prog_release;
	*out = &prog->obj;
	return 0;
}

/* The object layer (src/obj/) sits below api/ and names no kind: tell it how to attach
 * program files when the library is loaded, before any fd can be resolved. */
/* bpf_timer's callback (maps/timer.c, on its timer thread): function func of prog with
 * (map, key, value), on the program's engine; the checked engine may touch the key and
 * write the value.  The verifier made the callback return 0, which is dropped, as
 * bpf_timer_cb() drops it; a fault is printed, as a tail call's. */
static void timer_call(struct brt_obj *obj, uint64_t func, const uint64_t args[3],
		       uint32_t key_size, uint32_t value_size)
{
	struct brt_prog *prog = (struct brt_prog *)(void *)obj;
	const struct brt_region regions[2] = { { args[1], key_size, 0 }, { args[2], value_size, 1 } };
	struct brt_run_opts o = { .r1 = args[0], .r2 = args[1], .func = func, .user = &prog->pm,
				  .regions = regions, .nr_regions = 2 };
	char err[160];
	uint64_t r0;

	o.r3_5[0] = args[2];
	if (brt_prog_materialise(prog))
		return;
	if (brt_vm_run_opts(prog->vm, &o, &r0, err, sizeof(err)))
		brt_print(BPFRT_WARN, "bpf_timer callback: %s\n", err);
}

__attribute__((constructor)) static void prog_register_kind(void)
{
	brt_obj_set_attach(BRT_OBJ_PROG, prog_attach_obj);
	brt_timer_set_call(timer_call);
	brt_task_work_set_call(timer_call);
}
