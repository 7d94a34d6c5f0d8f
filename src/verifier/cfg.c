/* cfg.c - the passes that run before the abstract walk, in the kernel's order: find the
 * subprograms (call targets), check jumps stay inside their subprogram and that each one
 * ends in exit or goto, check opcodes and lddw forms and resolve map references, then a
 * depth-first walk of the control-flow graph for unreachable code and back-edges, and a
 * static register-liveness analysis that lets state pruning ignore dead registers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf/btf.h"
#include "verifier/internal.h"

/* The kernel's table of opcodes (bpf_opcode_in_insntable) is insn.def minus the
 * conformance-suite extension callx. */
int brt_is_kernel_opcode(uint8_t code)
{
	static uint8_t known[256];
	static int ready;

	if (!ready) {
		for (int op = 0; op < BRT_OP_COUNT; op++)
			if (brt_ops[op].group != BRT_GROUP_callx)
				known[brt_ops[op].opcode] = 1;
		ready = 1;
	}
	return known[code];
}

static int is_ldimm64(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW);
}

static int is_pseudo_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

static int is_pseudo_func(const struct bpf_insn *insn)
{
	return is_ldimm64(insn) && insn->src_reg == BPF_PSEUDO_FUNC;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* A table of the env that starts in its inline entries (inl), twice as big up to max
 * entries with its n used ones kept (*cap updated): the new table, or NULL (the old one
 * unchanged). */
static void *grow_table(void *tab, const void *inl, int n, int *cap, int max, size_t elem)
{
	int c = *cap * 2 > max ? max : *cap * 2;
	void *t = calloc((size_t)c, elem);

	if (!t)
		return NULL;
	memcpy(t, tab, (size_t)n * elem);
	if (tab != inl)
		free(tab);
	*cap = c;
	return t;
}

static int add_subprog(struct brt_env *env, int off)
{
	if (off < 0 || off >= env->len) {
		brt_verr(env, "call to invalid destination\n");
		return -EINVAL;
	}
	for (int i = 0; i < env->subprog_cnt; i++)
		if (env->subprogs[i].start == off)
			return 0;
	if (env->subprog_cnt >= BRT_MAX_SUBPROGS) {
		brt_verr(env, "too many subprograms\n");
		return -E2BIG;
	}
	/* room for this one and the end marker (brt_check_subprogs()) */
	if (env->subprog_cnt + 2 > env->subprog_cap) {
		struct brt_subprog *t = grow_table(env->subprogs, env->sub_inline,
						   env->subprog_cnt, &env->subprog_cap,
						   BRT_MAX_SUBPROGS + 1, sizeof(*t));

		if (!t)
			return -ENOMEM;
		env->subprogs = t;
	}
	env->subprogs[env->subprog_cnt++].start = off;
	return 0;
}

int brt_find_subprog(struct brt_env *env, int insn_idx)
{
	for (int i = 0; i < env->subprog_cnt; i++)
		if (env->subprogs[i].start == insn_idx)
			return i;
	return -1;
}

/* The kernel's add_kfunc_call() at load: a GPL program; id 0 with offset 0 (libbpf's
 * unresolved weak kfunc) waits for the dead code pass; offset > 0 names a module's BTF in
 * fd_array, which bpfrt has none of (module BTF objects exist in the kernel only); the id
 * must be a FUNC of the kernel's BTF with a prototype. */
static int add_kfunc_call(struct brt_env *env, const struct bpf_insn *insn)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	const struct btf_type *t;

	if (!vml) {
		brt_verr(env, "calling kernel function is not supported without "
			      "CONFIG_DEBUG_INFO_BTF\n");
		return -524; /* ENOTSUPP */
	}
	if (!env->opts->gpl) {
		brt_verr(env, "cannot call kernel function from non-GPL compatible program\n");
		return -EINVAL;
	}
	if (!insn->imm && !insn->off)
		return 0;
	if (insn->off) {
		if (insn->off < 0) {
			brt_verr(env, "negative offset disallowed for kernel module function call\n");
		} else if (!env->opts->fd_array) {
			brt_verr(env, "kfunc offset > 0 without fd_array is invalid\n");
			brt_verr(env, "failed to find BTF for kernel function\n");
			return -EPROTO;
		} else {
			brt_verr(env, "invalid module BTF fd specified\n");
		}
		brt_verr(env, "failed to find BTF for kernel function\n");
		return -EINVAL;
	}
	t = brt_btf_type(vml, (uint32_t)insn->imm);
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC) {
		brt_verr(env, "kernel btf_id %u is not a function\n", (uint32_t)insn->imm);
		return -EINVAL;
	}
	t = brt_btf_type(vml, t->type);
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC_PROTO) {
		brt_verr(env, "kernel function btf_id %u does not have a valid func_proto\n",
			 (uint32_t)insn->imm);
		return -EINVAL;
	}
	return 0;
}

static int add_subprogs(struct brt_env *env)
{
	int ret, exc;

	env->subprog_cnt = 1;
	env->subprogs[0].start = 0;
	for (int i = 0; i < env->len; i++) {
		const struct bpf_insn *insn = &env->insns[i];
		int is_func = is_ldimm64(insn) && insn->src_reg == BPF_PSEUDO_FUNC;
		int is_kfunc = insn->code == (BPF_JMP | BPF_CALL) &&
			       insn->src_reg == BPF_PSEUDO_KFUNC_CALL;

		if (!is_pseudo_call(insn) && !is_func && !is_kfunc)
			continue;
		if (!env->bpf_capable) {
			brt_verr(env, "loading/calling other bpf or kernel functions are allowed "
				      "for CAP_BPF and CAP_SYS_ADMIN\n");
			return -EPERM;
		}
		if (is_kfunc) {
			ret = add_kfunc_call(env, insn);
			if (ret)
				return ret;
			continue;
		}
		/* in 64 bits: imm may be INT_MAX; later passes see only checked targets */
		int64_t target = (int64_t)i + insn->imm + 1;

		ret = add_subprog(env, target < 0 || target >= env->len ? -1 : (int)target);
		if (ret)
			return ret;
	}
	/* the exception callback's tag is looked at once the calls made their subprograms,
	 * as the kernel's add_subprog_and_kfunc() does: a refusal there prints a stack depth
	 * for each of them */
	ret = brt_check_exception_cb(env);
	if (ret < 0)
		return ret;
	exc = ret;
	if (exc) {
		ret = add_subprog(env, exc);
		if (ret)
			return ret;
	}
	qsort(env->subprogs, (size_t)env->subprog_cnt, sizeof(env->subprogs[0]), cmp_int);
	for (int i = 1; exc && i < env->subprog_cnt; i++)
		if (env->subprogs[i].start == exc)
			env->exc_cb_subprog = i;
	/* a sentinel makes subprogs[i + 1].start the end of subprogram i */
	env->subprogs[env->subprog_cnt].start = env->len;
	if (LOG_L2(env))
		for (int i = 0; i < env->subprog_cnt; i++)
			brt_vinfo(env, "func#%d @%d\n", i, env->subprogs[i].start);
	return 0;
}

int brt_check_subprogs(struct brt_env *env)
{
	int cur = 0, start, end, ret;

	ret = add_subprogs(env);
	if (ret)
		return ret;
	start = env->subprogs[0].start;
	end = env->subprogs[1].start;
	for (int i = 0; i < env->len; i++) {
		const struct bpf_insn *insn = &env->insns[i];
		uint8_t code = insn->code, cls = BPF_CLASS(code);
		int off;

		if (code == (BPF_JMP | BPF_CALL) && insn->src_reg == 0 &&
		    insn->imm == BPF_FUNC_tail_call)
			env->subprogs[cur].has_tail_call = 1;
		if (cls == BPF_LD && (BPF_MODE(code) == BPF_ABS || BPF_MODE(code) == BPF_IND))
			env->subprogs[cur].has_ld_abs = 1;
		if ((cls == BPF_JMP || cls == BPF_JMP32) && BPF_OP(code) != BPF_EXIT &&
		    BPF_OP(code) != BPF_CALL) {
			/* gotol's 32-bit imm can overflow int: wrap it as the kernel's
			 * -fno-strict-overflow arithmetic does, so the message matches. */
			off = (int)(uint32_t)((uint32_t)i + 1u +
					      (uint32_t)(code == (BPF_JMP32 | BPF_JA) ?
							 insn->imm : insn->off));
			if (off < start || off >= end) {
				brt_verr(env, "jump out of range from insn %d to %d\n", i, off);
				return -EINVAL;
			}
		}
		if (i == end - 1) {
			/* no falling through from one subprogram into the next */
			if (code != (BPF_JMP | BPF_EXIT) && code != (BPF_JMP | BPF_JA) &&
			    code != (BPF_JMP32 | BPF_JA)) {
				brt_verr(env, "last insn is not an exit or jmp\n");
				return -EINVAL;
			}
			start = end;
			cur++;
			if (cur < env->subprog_cnt)
				end = env->subprogs[cur + 1].start;
		}
	}
	return 0;
}

/* The map types a sleepable program may use (check_map_prog_compatibility()). */
static int sleepable_map(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH: case BPF_MAP_TYPE_LRU_HASH: case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH: case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH: case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS: case BPF_MAP_TYPE_RINGBUF: case BPF_MAP_TYPE_USER_RINGBUF:
	case BPF_MAP_TYPE_INODE_STORAGE: case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE: case BPF_MAP_TYPE_QUEUE: case BPF_MAP_TYPE_STACK:
	case 32: /* BPF_MAP_TYPE_CGRP_STORAGE (Linux 6.2; this libc's header lacks it) */
	case 33: /* BPF_MAP_TYPE_ARENA (6.9) */
		return 1;
	default:
		return 0;
	}
}

/* The kernel's check_map_prog_compatibility(), for what bpfrt has: a map whose value holds
 * a bpf_spin_lock is refused to socket filters and tracing programs. */
static int check_map_prog_compat(struct brt_env *env, const struct brt_map_info *m)
{
	/* a program is attached with one storage of each kind (bpf_cgroup_storage_assign) */
	if (m->type == BPF_MAP_TYPE_CGROUP_STORAGE ||
	    m->type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE)
		for (int i = 0; i < env->nmaps; i++)
			if (env->maps[i].info.type == m->type && env->maps[i].info.ptr != m->ptr) {
				brt_verr(env, "only one cgroup storage of each type is allowed\n");
				return -EBUSY;
			}
	if (m->timer_off1 && !m->spin_lock_off1 && !m->res_spin_lock_off1 &&
	    brt_prog_type_has(env->opts->prog_type, BRT_PT_TRACING)) {
		brt_verr(env, "tracing progs cannot use bpf_timer yet\n");
		return -EINVAL;
	}
	if (m->type == BPF_MAP_TYPE_STRUCT_OPS) {
		brt_verr(env, "bpf_struct_ops map cannot be used in prog\n");
		return -EINVAL;
	}
	if ((env->opts->prog_flags & BPF_F_SLEEPABLE) &&
	    (!sleepable_map(m->type) || (m->inner_type && !sleepable_map(m->inner_type)))) {
		/* the running 6.18.44 checks a map of maps' inner map too, and says so */
		brt_verr(env, "Sleepable programs can only use array, hash, ringbuf and local "
			      "storage maps, also as inner maps\n");
		return -EINVAL;
	}
	/* either lock (BPF_SPIN_LOCK | BPF_RES_SPIN_LOCK) */
	if (!m->spin_lock_off1 && !m->res_spin_lock_off1)
		return 0;
	if (env->opts->prog_type == BPF_PROG_TYPE_SOCKET_FILTER) {
		brt_verr(env, "socket filter progs cannot use bpf_spin_lock yet\n");
		return -EINVAL;
	}
	if (brt_prog_type_has(env->opts->prog_type, BRT_PT_TRACING)) {
		brt_verr(env, "tracing progs cannot use bpf_spin_lock yet\n");
		return -EINVAL;
	}
	if (m->timer_off1 && brt_prog_type_has(env->opts->prog_type, BRT_PT_TRACING)) {
		brt_verr(env, "tracing progs cannot use bpf_timer yet\n");
		return -EINVAL;
	}
	return 0;
}

/* Without BTF for its functions (func_info or line_info) a subprogram's return type is
 * unknown, so it may not end the program the abnormal ways: LD_ABS or a tail call. */
int brt_check_abnormal_return(struct brt_env *env)
{
	if (env->opts->btf_info)
		return 0;
	for (int i = 1; i < env->subprog_cnt; i++) {
		if (env->subprogs[i].has_ld_abs) {
			brt_verr(env, "LD_ABS is not allowed in subprogs without BTF\n");
			return -EINVAL;
		}
		if (env->subprogs[i].has_tail_call) {
			brt_verr(env, "tail_call is not allowed in subprogs without BTF\n");
			return -EINVAL;
		}
	}
	return 0;
}

/* The map behind fd in the program's table (the kernel's add_used_map()): its index,
 * added (after check_map_prog_compatibility()) when new; -errno.  A map's inner-map
 * template takes the entry after it, which the kernel's limit does not count.
 * *info: the map's, from map_info, which the caller has already filled (non-zero type)
 * or not. */
static int use_map(struct brt_env *env, int fd, struct brt_map_info *info)
{
	int err, idx, nreal = 0;

	for (int i = 0; i < env->nmaps; i++)
		if (env->maps[i].fd == fd && !env->maps[i].is_tmpl)
			return i;
	if (!info->type) {
		memset(info, 0, sizeof(*info));
		err = env->opts->map_info ? env->opts->map_info(env->opts->map_arg, fd, info)
					  : -EBADF;
		if (err) {
			/* -EBADF for no such fd, -EINVAL for an fd that is not a map */
			brt_verr(env, "fd %d is not pointing to valid bpf_map\n", fd);
			return err < 0 ? err : -EBADF;
		}
	}
	/* the same map through another fd (the kernel compares map pointers) */
	for (int i = 0; info->ptr && i < env->nmaps; i++)
		if (env->maps[i].info.ptr == info->ptr && !env->maps[i].is_tmpl)
			return i;
	for (int i = 0; i < env->nmaps; i++)
		nreal += !env->maps[i].is_tmpl;
	if (nreal >= BRT_MAX_USED_MAPS) {
		brt_verr(env, "The total number of maps per program has reached the limit of %u\n",
			 BRT_MAX_USED_MAPS);
		return -E2BIG;
	}
	err = check_map_prog_compat(env, info);
	if (err)
		return err;
	/* room for this one and its inner map's template */
	if (env->nmaps + 1 + !!info->inner_type > env->maps_cap) {
		struct brt_vmap *t = grow_table(env->maps, env->map_inline, env->nmaps,
						&env->maps_cap, 2 * BRT_MAX_USED_MAPS,
						sizeof(*t));

		if (!t)
			return -ENOMEM;
		env->maps = t;
	}
	env->maps[env->nmaps].info = *info;
	env->maps[env->nmaps].fd = fd;
	env->maps[env->nmaps].inner_idx = info->inner_type ? env->nmaps + 1 : -1;
	idx = env->nmaps++;
	if (info->inner_type) {
		struct brt_vmap *t = &env->maps[env->nmaps++];

		t->info = (struct brt_map_info){ .type = info->inner_type,
						 .key_size = info->inner_key_size,
						 .value_size = info->inner_value_size,
						 .max_entries = info->inner_max_entries,
						 .map_flags = info->inner_flags,
						 .spin_lock_off1 = info->inner_spin_lock_off1,
						 .res_spin_lock_off1 = info->inner_res_spin_lock_off1,
						 .timer_off1 = info->inner_timer_off1,
						 .has_btf = info->inner_has_btf };
		t->fd = -1;
		t->inner_idx = -1;
		t->is_tmpl = 1;
	}
	return idx;
}

static int resolve_map(struct brt_env *env, const struct bpf_insn *insn, int idx)
{
	const struct brt_verify_opts *o = env->opts;
	struct brt_map_info info = { 0 };
	int fd = insn->imm, m;

	if (insn->src_reg == BPF_PSEUDO_MAP_IDX || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
		if (!o->fd_array) {
			brt_verr(env, "fd_idx without fd_array is invalid\n");
			return -EPROTO;
		}
		/* an entry the copy-in could not read: the kernel's copy faults there */
		if (o->fd_array_cnt && (uint32_t)insn->imm >= o->fd_array_cnt)
			return -EFAULT;
		fd = o->fd_array[insn->imm];
	}
	m = use_map(env, fd, &info);
	if (m < 0)
		return m;
	env->aux[idx].map_idx = (int16_t)m;
	return 0;
}

/* The kernel's process_fd_array(), first thing after the log is set up: with
 * fd_array_cnt every one of fd_array's first fd_array_cnt entries is a map, bound to the
 * program (its table's first entries) whether the code names it or not, or a BTF
 * object (at most BRT_MAX_USED_BTFS different ones); anything else refuses the load. */
int brt_bind_fd_array(struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;
	const void *btfs[BRT_MAX_USED_BTFS];
	uint32_t nbtf = 0;

	if (!o->bind_cnt)
		return 0;
	if (o->bind_cnt >= UINT32_MAX / sizeof(int)) {
		brt_verr(env, "fd_array_cnt is too big (%u)\n", o->bind_cnt);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < o->bind_cnt; i++) {
		struct brt_map_info info = { 0 };
		const void *id = NULL;
		uint32_t k;
		int fd, err;

		if (!o->fd_array || i >= o->fd_array_cnt)
			return -EFAULT;
		fd = o->fd_array[i];
		err = o->map_info ? o->map_info(o->map_arg, fd, &info) : -EBADF;
		if (!err) {
			err = use_map(env, fd, &info);
			if (err < 0)
				return err;
			continue;
		}
		if (!o->btf_fd || o->btf_fd(o->map_arg, fd, &id)) {
			brt_verr(env, "fd %d is not pointing to valid bpf_map or btf\n", fd);
			return err < 0 ? err : -EBADF;
		}
		for (k = 0; k < nbtf && btfs[k] != id; k++)
			;
		if (k < nbtf)
			continue;
		if (nbtf >= BRT_MAX_USED_BTFS) {
			brt_verr(env, "The total number of btfs per program has reached the "
				      "limit of %u\n", BRT_MAX_USED_BTFS);
			return -E2BIG;
		}
		btfs[nbtf++] = id;
	}
	return 0;
}

static int check_map_value_ref(struct brt_env *env, const struct bpf_insn *insn, int idx)
{
	const struct brt_map_info *m = &env->maps[env->aux[idx].map_idx].info;
	uint32_t off = (uint32_t)insn[1].imm;

	if (off >= BRT_MAX_VAR_OFF) {
		brt_verr(env, "direct value offset of %u is not allowed\n", off);
		return -EINVAL;
	}
	if (m->type != BPF_MAP_TYPE_ARRAY) {
		brt_verr(env, "no direct value access support for this map type\n");
		return -EINVAL;
	}
	if (m->max_entries != 1) {
		brt_verr(env, "invalid access to map value pointer, value_size=%u off=%u\n",
			 m->value_size, off);
		return -524; /* the kernel's internal ENOTSUPP leaks out here */
	}
	if (off >= m->value_size) {
		brt_verr(env, "invalid access to map value pointer, value_size=%u off=%u\n",
			 m->value_size, off);
		return -EINVAL;
	}
	env->aux[idx].map_off = off;
	return 0;
}

/* The kernel's check_pseudo_btf_id(): an lddw of a kernel symbol (a __ksym extern libbpf
 * resolved: imm its id in the kernel's BTF, the second imm a module BTF's fd, which bpfrt
 * has none of).  A FUNC gives read-only memory of size 0 (its address, to test a weak
 * kfunc for presence), a variable of the per-CPU section a per-CPU kernel object, a
 * struct variable a kernel object typed by its BTF, any other variable read-only memory
 * of its type's size.  The name must be in kallsyms (variables are not, in kernels
 * without CONFIG_KALLSYMS_ALL). */
#define BRT_KSYM_MEM_MAX (1u << 20) /* api/prog.c's stand-in for a variable's memory */
static int check_pseudo_btf_id(struct brt_env *env, const struct bpf_insn *insn, int i)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	const struct btf_type *t, *sec;
	uint32_t id = (uint32_t)insn->imm, type;
	int secid;
	uint64_t size = 0, addr;

	if (insn[1].imm) {
		brt_verr(env, "invalid module BTF object FD specified.\n");
		return -EINVAL;
	}
	if (!vml) {
		brt_verr(env, "kernel is missing BTF, make sure CONFIG_DEBUG_INFO_BTF=y is "
			      "specified in Kconfig.\n");
		return -EINVAL;
	}
	t = id ? brt_btf_type(vml, id) : NULL;
	if (!t && id) {
		brt_verr(env, "ldimm64 insn specifies invalid btf_id %d.\n", (int)id);
		return -ENOENT;
	}
	if (!t || (BTF_INFO_KIND(t->info) != BTF_KIND_VAR && BTF_INFO_KIND(t->info) != BTF_KIND_FUNC)) {
		brt_verr(env, "pseudo btf_id %d in ldimm64 isn't KIND_VAR or KIND_FUNC\n", (int)id);
		return -EINVAL;
	}
	/* kallsyms_lookup_name(): without /proc/kallsyms the symbol is taken as there */
	if (!brt_kallsyms_lookup(brt_btf_str(vml, t->name_off), &addr)) {
		brt_verr(env, "ldimm64 failed to find the address for kernel symbol '%s'.\n",
			 brt_btf_str(vml, t->name_off));
		return -ENOENT;
	}
	if (!env->kbtf)
		env->kbtf = vml;
	if (BTF_INFO_KIND(t->info) == BTF_KIND_FUNC) {
		env->aux[i].ksym_type = PTR_TO_MEM | MEM_RDONLY;
		env->aux[i].map_off = 0;
		return 0;
	}
	type = t->type;
	secid = brt_btf_find(vml, ".data..percpu", BTF_KIND_DATASEC);
	sec = secid > 0 ? brt_btf_type(vml, (uint32_t)secid) : NULL;
	for (uint32_t v = 0; sec && v < BTF_INFO_VLEN(sec->info); v++)
		if (((const struct btf_var_secinfo *)(sec + 1))[v].type == id) {
			env->aux[i].ksym_type = PTR_TO_BTF_ID | MEM_PERCPU;
			env->aux[i].ksym_btf_id = type;
			return 0;
		}
	t = brt_btf_type(vml, brt_btf_skip_mods(vml, type));
	if (t && (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT ||
		  BTF_INFO_KIND(t->info) == BTF_KIND_UNION)) {
		env->aux[i].ksym_type = PTR_TO_BTF_ID;
		env->aux[i].ksym_btf_id = type;
		return 0;
	}
	if (!t || brt_btf_resolve_size(vml, brt_btf_skip_mods(vml, type), &size) < 0) {
		brt_verr(env, "ldimm64 unable to resolve the size of type '%s': %d\n",
			 t ? brt_btf_str(vml, t->name_off) : "", -EINVAL);
		return -EINVAL;
	}
	/* bpfrt: reads see zeroes of a stand-in of at most BRT_KSYM_MEM_MAX bytes */
	if (size > BRT_KSYM_MEM_MAX) {
		brt_verr(env, "ldimm64 kernel variable of %llu bytes: bpfrt reads at most %u\n",
			 (unsigned long long)size, BRT_KSYM_MEM_MAX);
		return -E2BIG;
	}
	env->aux[i].ksym_type = PTR_TO_MEM | MEM_RDONLY;
	env->aux[i].map_off = (uint32_t)size;
	return 0;
}

static int check_ldimm64(struct brt_env *env, int i)
{
	const struct bpf_insn *insn = &env->insns[i];
	int ret;

	if (i == env->len - 1 || insn[1].code || insn[1].dst_reg || insn[1].src_reg ||
	    insn[1].off) {
		brt_verr(env, "invalid bpf_ld_imm64 insn\n");
		return -EINVAL;
	}
	env->aux[i + 1].second_slot = 1;
	switch (insn->src_reg) {
	case 0:
	case BPF_PSEUDO_FUNC: /* a callback: checked where the walk reaches it */
		return 0;
	case BPF_PSEUDO_BTF_ID:
		return check_pseudo_btf_id(env, insn, i);
	case BPF_PSEUDO_MAP_VALUE:
	case BPF_PSEUDO_MAP_IDX_VALUE:
		break;
	case BPF_PSEUDO_MAP_FD:
	case BPF_PSEUDO_MAP_IDX:
		if (insn[1].imm == 0)
			break;
		brt_verr(env, "unrecognized bpf_ld_imm64 insn\n");
		return -EINVAL;
	default:
		brt_verr(env, "unrecognized bpf_ld_imm64 insn\n");
		return -EINVAL;
	}
	ret = resolve_map(env, insn, i);
	if (ret)
		return ret;
	if (insn->src_reg == BPF_PSEUDO_MAP_VALUE || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE)
		return check_map_value_ref(env, insn, i);
	return 0;
}

int brt_check_insns(struct brt_env *env)
{
	for (int i = 0; i < env->len; i++) {
		const struct bpf_insn *insn = &env->insns[i];
		uint8_t mode = BPF_MODE(insn->code);
		int ret;

		env->aux[i].map_idx = -1;
		if (BPF_CLASS(insn->code) == BPF_LDX &&
		    ((mode != BPF_MEM && mode != BRT_MEMSX) || insn->imm != 0)) {
			brt_verr(env, "BPF_LDX uses reserved fields\n");
			return -EINVAL;
		}
		if (is_ldimm64(insn)) {
			ret = check_ldimm64(env, i);
			if (ret)
				return ret;
			env->aux[++i].map_idx = -1;
			continue;
		}
		if (!brt_is_kernel_opcode(insn->code)) {
			brt_verr(env, "unknown opcode %02x\n", insn->code);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- depth-first walk ---------------------------------------------------------------- */
enum { DISCOVERED = 1, EXPLORED = 2 };

/* A call whose callback the walk runs from the call itself: a helper's (bpf_loop,
 * bpf_for_each_map_elem, ...) or a kfunc's (bpf_rbtree_add_impl's less()). */
static int calls_callback(struct brt_env *env, const struct bpf_insn *insn)
{
	if (insn->code != (BPF_JMP | BPF_CALL))
		return 0;
	if (!insn->src_reg)
		return brt_is_callback_helper(insn->imm);
	return insn->src_reg == BPF_PSEUDO_KFUNC_CALL && brt_kfunc_calls_callback(env, insn);
}

/* Successors of insn t in the kernel's visiting order; returns how many. */
static int successors(struct brt_env *env, int t, int succ[2], int *branch)
{
	const struct bpf_insn *insn = &env->insns[t];
	uint8_t cls = BPF_CLASS(insn->code), op = BPF_OP(insn->code);

	*branch = -1;
	if (is_pseudo_func(insn)) {
		/* the kernel walks a callback's body from where its address is taken */
		succ[0] = t + 2;
		succ[1] = t + insn->imm + 1;
		*branch = 1;
		return 2;
	}
	if (is_ldimm64(insn)) {
		succ[0] = t + 2;
		return 1;
	}
	if (cls != BPF_JMP && cls != BPF_JMP32) {
		succ[0] = t + 1;
		return 1;
	}
	if (op == BPF_EXIT)
		return 0;
	if (op == BPF_CALL) {
		succ[0] = t + 1;
		if (is_pseudo_call(insn)) {
			succ[1] = t + insn->imm + 1;
			*branch = 1;
			return 2;
		}
		return 1;
	}
	if (op == BPF_JA) {
		succ[0] = t + 1 + (cls == BPF_JMP32 ? insn->imm : insn->off);
		*branch = 0;
		return 1;
	}
	succ[0] = t + 1;
	succ[1] = t + 1 + insn->off;
	*branch = 1;
	return 2;
}

static int dfs(struct brt_env *env, uint8_t *state, int *stack, uint8_t *next)
{
	int sp = 0, exc = env->exc_cb_subprog ? env->subprogs[env->exc_cb_subprog].start : 0;

	stack[sp++] = 0;
	state[0] = DISCOVERED;
again:
	while (sp) {
		int t = stack[sp - 1], succ[2], branch, n = successors(env, t, succ, &branch);

		if (next[t] == 0 && n == 2 && branch == 1)
			env->aux[t].prune_point = 1; /* conditional jumps and calls */
		if (next[t] == 0 && calls_callback(env, &env->insns[t])) {
			/* callback iterations return here: states are compared and stored */
			env->aux[t].calls_callback = 1;
			env->aux[t].prune_point = 1;
			env->aux[t].jmp_point = 1;
		}
		/* a call that pushes an async callback (a task work's): its state is
		 * checked before the callback is pushed again (is_async_callback_calling_insn()) */
		if (next[t] == 0 && env->insns[t].code == (BPF_JMP | BPF_CALL) &&
		    env->insns[t].src_reg == BPF_PSEUDO_KFUNC_CALL &&
		    brt_kfunc_calls_async(env, &env->insns[t]))
			env->aux[t].prune_point = 1;
		if (next[t] == 0 && env->insns[t].code == (BPF_JMP | BPF_CALL) &&
		    env->insns[t].src_reg == BPF_PSEUDO_KFUNC_CALL &&
		    brt_kfunc_is_iter_next(env, &env->insns[t])) {
			/* an iterator's next: its loop converges here, a state is always stored
			 * (the kernel's mark_force_checkpoint(); prune.c) */
			env->aux[t].iter_next = 1;
			env->aux[t].prune_point = 1;
		}
		if (next[t] == 0 && (is_pseudo_func(&env->insns[t]) ||
				     env->insns[t].code == (BPF_JMP | BPF_CALL)) &&
		    succ[0] < env->len) {
			/* after a call (and after taking a callback's address) the kernel
			 * checks and stores states, and records the return in the history */
			env->aux[succ[0]].prune_point = 1;
			env->aux[succ[0]].jmp_point = 1;
		}
		if (next[t] >= n) {
			state[t] = EXPLORED;
			sp--;
			continue;
		}
		int w = succ[next[t]], is_branch = (int)next[t] == branch;

		next[t]++;
		if (w < 0 || w >= env->len) {
			brt_verr(env, "jump out of range from insn %d to %d\n", t, w);
			return -EINVAL;
		}
		if (is_branch) {
			env->aux[w].prune_point = 1;
			env->aux[w].jmp_point = 1;
		}
		if (state[w] == 0) {
			state[w] = DISCOVERED;
			stack[sp++] = w;
		} else if (state[w] == DISCOVERED) {
			if (!env->bpf_capable) {
				brt_verr(env, "back-edge from insn %d to %d\n", t, w);
				return -EINVAL;
			}
			env->aux[w].loop_head = 1;
			env->aux[w].prune_point = 1;
		}
	}
	/* nothing calls the exception callback: the kernel walks it after the program */
	if (exc && state[exc] != EXPLORED) {
		state[exc] = DISCOVERED;
		stack[sp++] = exc;
		goto again;
	}
	return 0;
}

int brt_check_cfg(struct brt_env *env)
{
	/* the DFS stack first (int-aligned), then the two byte arrays: one allocation */
	int *stack = calloc((size_t)env->len, sizeof(int) + 2);
	uint8_t *state, *next;
	int ret;

	if (!stack)
		return -ENOMEM;
	state = (uint8_t *)(stack + env->len);
	next = state + env->len;
	ret = dfs(env, state, stack, next);
	if (ret)
		goto out_free;
	for (int i = 0; i < env->len; i++) {
		if (state[i] != EXPLORED) {
			brt_verr(env, "unreachable insn %d\n", i);
			ret = -EINVAL;
			goto out_free;
		}
		if (is_ldimm64(&env->insns[i])) {
			if (state[i + 1]) {
				brt_verr(env, "jump into the middle of ldimm64 insn %d\n", i);
				ret = -EINVAL;
				goto out_free;
			}
			i++;
		}
	}
out_free:
	free(stack);
	return ret;
}

/* ---- register liveness ------------------------------------------------------------------ */
/* Registers instruction t reads and writes (isa's table, by the row the load decoded:
 * env->ops); a helper call reads only the arguments its prototype names. */
static enum brt_op insn_regs(struct brt_env *env, int t, struct brt_isa_regs *r)
{
	const struct bpf_insn *insn = &env->insns[t];
	enum brt_op op = brt_isa_regs_op(insn, (enum brt_op)env->ops[t], r);

	if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == 0)
		r->use = brt_helper_arg_regs(env, insn->imm);
	if (insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_KFUNC_CALL) {
		/* get_call_summary(): a kfunc the program may call reads its prototype's
		 * arguments, any other r1-r5 */
		int n = brt_kfunc_nargs(env, insn);

		r->use = (uint16_t)(n < 0 ? 0x3e : ((1u << (n + 1)) - 2));
	}
	return op;
}

/* Within one subprogram: a call continues at the next insn, exit ends the path. */
static int intra_successors(struct brt_env *env, int t, int succ[2])
{
	const struct bpf_insn *insn = &env->insns[t];
	int branch, n = successors(env, t, succ, &branch);

	if ((BPF_CLASS(insn->code) == BPF_JMP && BPF_OP(insn->code) == BPF_CALL) ||
	    is_pseudo_func(insn))
		return 1;
	return n;
}

/* What the two backward analyses below need of each insn, found once: both iterate to a
 * fixed point (two passes or more over every insn), and decoding the insn's registers
 * and successors again on every pass was most of their time on small programs. */
struct live_facts {
	uint16_t use;   /* registers read (liveness) */
	uint16_t ldef;  /* registers written, as liveness counts them */
	uint16_t def;   /* registers written */
	uint16_t flow;  /* of use, what the written value is computed from */
	uint16_t sinks; /* registers whose value matters here whatever follows (relevance) */
	int succ[2];
	int nsucc;      /* intra_successors(); -1: second slot of an lddw */
};

/* Scalar relevance ("may this register's value matter?"), the static stand-in for the
 * kernel's precision marks.  A value matters when it may reach, through registers, a
 * branch condition, a memory address, a value stored to memory (the stack is compared
 * in full), a helper or callee argument, or an exit whose value is checked.  Backward
 * may-analysis: rel_in = sinks | (rel_out - def) | (sources of def if def in rel_out).
 * The sinks of insn t (r: its registers as insn_regs() gives them). */
static uint16_t rel_sinks(struct brt_env *env, int t, enum brt_op op,
			  const struct brt_isa_regs *r)
{
	uint16_t sinks = r->use & (uint16_t)~r->flow;
	int64_t lo, hi;

	/* a subprogram's r0 goes to its caller; the main program's is checked for some
	 * program types only */
	if (op != BRT_OP_INVALID && brt_ops[op].shape == BRT_SHAPE_EXIT &&
	    !brt_find_subprog_of(env, t) && !brt_ret_range(env, &lo, &hi))
		sinks = 0;
	/* without CAP_PERFMON a register added to or subtracted from a pointer sets the
	 * instruction's Spectre mask, which every path must agree on (ptr_alu.c): its value
	 * matters even when the result is never used (the kernel marks it precise) */
	if (!env->bypass_spec_v1 && BPF_SRC(env->insns[t].code) == BPF_X &&
	    (BPF_CLASS(env->insns[t].code) == BPF_ALU64 || BPF_CLASS(env->insns[t].code) == BPF_ALU) &&
	    (BPF_OP(env->insns[t].code) == BPF_ADD || BPF_OP(env->insns[t].code) == BPF_SUB))
		sinks |= (uint16_t)(r->use & (1u << env->insns[t].src_reg | 1u << env->insns[t].dst_reg));
	return sinks;
}

static void live_facts(struct brt_env *env, struct live_facts *f)
{
	for (int t = 0; t < env->len; t++) {
		struct brt_isa_regs r;
		enum brt_op op;

		if (env->aux[t].second_slot) {
			f[t].nsucc = -1;
			continue;
		}
		f[t].nsucc = intra_successors(env, t, f[t].succ);
		op = insn_regs(env, t, &r);
		f[t].sinks = rel_sinks(env, t, op, &r);
		f[t].flow = r.flow;
		/* 6.18's compute_insn_live_regs() leaves packet loads at its defaults: every
		 * register read, none written (the "Live regs" listing shows it, and pruning
		 * then compares them all there, as the kernel's); relevance keeps what the
		 * insn itself writes */
		f[t].def = f[t].ldef = r.def;
		f[t].use = r.use;
		if (BPF_CLASS(env->insns[t].code) == BPF_LD &&
		    (BPF_MODE(env->insns[t].code) == BPF_ABS ||
		     BPF_MODE(env->insns[t].code) == BPF_IND)) {
			f[t].use = 0xffff;
			f[t].ldef = 0;
		}
	}
}

/* prec_in: scalars whose value may matter before each insn.  Used where precise marks
 * are not final yet (callback iterations still being explored, their widening). */
static void compute_relevance(struct brt_env *env, const struct live_facts *f)
{
	int changed = 1;

	while (changed) {
		changed = 0;
		for (int t = env->len - 1; t >= 0; t--) {
			uint16_t out = 0, in;

			if (f[t].nsucc < 0)
				continue;
			for (int k = 0; k < f[t].nsucc; k++)
				if (f[t].succ[k] >= 0 && f[t].succ[k] < env->len)
					out |= env->aux[f[t].succ[k]].prec_in;
			in = (uint16_t)((out & ~f[t].def) | (out & f[t].def ? f[t].flow : 0) |
					f[t].sinks) &
			     env->aux[t].live_in;
			if (in != env->aux[t].prec_in) {
				env->aux[t].prec_in = in;
				changed = 1;
			}
		}
	}
}

int brt_find_subprog_of(struct brt_env *env, int insn_idx)
{
	int i = 0;

	while (i + 1 < env->subprog_cnt && env->subprogs[i + 1].start <= insn_idx)
		i++;
	return i;
}

int brt_compute_liveness(struct brt_env *env)
{
	struct live_facts *f = malloc((size_t)env->len * sizeof(*f));
	int changed = 1;

	if (!f)
		return -ENOMEM;
	live_facts(env, f);
	/* round-robin backward iteration to a fixed point: programs are small */
	while (changed) {
		changed = 0;
		for (int t = env->len - 1; t >= 0; t--) {
			uint16_t out = 0, in;

			if (f[t].nsucc < 0)
				continue;
			for (int k = 0; k < f[t].nsucc; k++)
				if (f[t].succ[k] >= 0 && f[t].succ[k] < env->len)
					out |= env->aux[f[t].succ[k]].live_in;
			in = (uint16_t)(f[t].use | (out & ~f[t].ldef));
			if (in != env->aux[t].live_in) {
				env->aux[t].live_in = in;
				changed = 1;
			}
		}
	}
	compute_relevance(env, f);
	free(f);
	return 0;
}

/* Stack liveness (the role of 6.18's liveness.c, simpler): a slot is live before an insn
 * when some path from it reads the slot before an insn that wrote it whole on every visit
 * (aux.stack_write: an 8-byte store through any pointer to the slot, a dynptr, iterator or
 * irq flag; an insn the walk never reached kills nothing, as the kernel's).
 * Reads are those the walk recorded (aux.stack_read; a callee's reads of a caller's slots
 * count at the caller's call insn), so only states whose exploration is complete may be
 * compared with it: every path from them has been walked.  A caller's slots, read by a
 * callee through a pointer (stack_up), are live until the callee's last read of them: no
 * store of the callee's kills them (the kernel's must_write marks them, bpfrt does not). */
void brt_compute_stack_live(struct brt_env *env)
{
	int changed = 1;

	env->stack_live_dirty = 0;
	while (changed) {
		changed = 0;
		for (int t = env->len - 1; t >= 0; t--) {
			const struct bpf_insn *insn = &env->insns[t];
			int succ[2], n;
			uint64_t out = 0, in, kill = 0;

			if (env->aux[t].second_slot)
				continue;
			n = intra_successors(env, t, succ);
			if (insn->code == (BPF_JMP | BPF_EXIT))
				n = 0;
			for (int k = 0; k < n; k++)
				if (succ[k] >= 0 && succ[k] < env->len)
					out |= env->aux[succ[k]].stack_live;
			kill = env->aux[t].stack_write;
			in = env->aux[t].stack_read | (out & ~kill);
			if (in != env->aux[t].stack_live) {
				env->aux[t].stack_live = in;
				changed = 1;
			}
			if (!env->stack_up)
				continue;
			for (int d = 0; d < BRT_MAX_FRAMES - 1; d++) {
				struct brt_stack_up *u = &env->stack_up[t];

				in = u->read[d];
				for (int k = 0; k < n; k++)
					if (succ[k] >= 0 && succ[k] < env->len)
						in |= env->stack_up[succ[k]].live[d];
				if (in != u->live[d]) {
					u->live[d] = in;
					changed = 1;
				}
			}
		}
	}
}

/* The kernel's bpf_update_live_stack(): the reads and writes recorded since are
 * propagated only where the kernel does it, at a path's end and at a function's exit, not
 * when a state is compared or cleaned: a state cleaned (clean_live_states()) before the
 * current path's reads reach the propagation keeps the slots they make live dead, and
 * prunes what the kernel prunes (otel-profiler unwind_php: 12,896 -> 12,826 processed,
 * the kernel's count). */
void brt_stack_live_sync(struct brt_env *env)
{
	if (env->stack_live_dirty)
		brt_compute_stack_live(env);
}

/* The slots of frame `frame` of st, stopped at insn_idx, that some path from there may
 * read (as of the last brt_stack_live_sync()): in the current frame's rest (at insn_idx, as a frame that many levels up), or
 * after one of the calls on the chain returns (at its return point, or at a callback's
 * helper call, which calls again), as the kernel's bpf_stack_slot_alive(). */
uint64_t brt_stack_live_frame(struct brt_env *env, const struct brt_vstate *st, int insn_idx,
			      int frame)
{
	uint64_t live = 0;

	for (int g = frame; g <= st->curframe; g++) {
		const struct brt_frame *callee = g < st->curframe ? st->frame[g + 1] : NULL;
		int d = g - frame, at = !callee		    ? insn_idx
					: callee->in_callback_fn ? callee->callsite
								 : callee->callsite + 1;

		if (at < 0 || at >= env->len)
			return ~0ULL;
		if (d == 0)
			live |= env->aux[at].stack_live;
		else if (env->stack_up)
			live |= env->stack_up[at].live[d - 1];
	}
	return live;
}

/* Strongly connected components of the control flow within each subprogram (Tarjan,
 * iterative), as the kernel's compute_scc(): a component gets an id when it has two or
 * more instructions or one that is its own successor.  A call that calls back (bpf_loop)
 * is its own successor here: the walk comes back to it after each callback iteration,
 * so the states inside the callback belong to that loop (6.18.44: "SCC enter" at the
 * bpf_loop call, a backedge at each iteration's return). */
int brt_compute_scc(struct brt_env *env)
{
	/* one allocation for the six arrays: this runs for every program, most of them tiny */
	int n = env->len, *pre = calloc((size_t)n, 4 * sizeof(int) + 2), *low, *stack, *dfs;
	uint8_t *next, *onstack;
	int order = 1, sp = 0;
	uint32_t id = 1;

	if (!pre)
		return -ENOMEM;
	low = pre + n;
	stack = low + n;
	dfs = stack + n;
	next = (uint8_t *)(dfs + n);
	onstack = next + n;
	for (int i = 0; i < n; i++) {
		int depth = 0;

		if (pre[i] || env->aux[i].second_slot)
			continue;
		dfs[depth++] = i;
		while (depth) {
			int w = dfs[depth - 1], succ[3], cnt, k;

			if (!pre[w]) {
				pre[w] = low[w] = order++;
				stack[sp++] = w;
				onstack[w] = 1;
			}
			cnt = intra_successors(env, w, succ);
			if (env->aux[w].calls_callback)
				succ[cnt++] = w;
			for (k = next[w]; k < cnt; k++) {
				int s = succ[k];

				if (s < 0 || s >= n)
					continue;
				if (!pre[s])
					break;
				if (onstack[s] && pre[s] < low[w])
					low[w] = pre[s];
			}
			if (k < cnt) {
				next[w] = (uint8_t)(k + 1);
				dfs[depth++] = succ[k];
				continue;
			}
			depth--;
			if (depth && low[w] < low[dfs[depth - 1]])
				low[dfs[depth - 1]] = low[w];
			if (low[w] != pre[w])
				continue;
			/* w roots a component: what is above it on the stack */
			int self = stack[sp - 1] != w;

			for (k = 0; k < cnt; k++)
				self |= succ[k] == w;
			for (int t = -1; t != w;) {
				t = stack[--sp];
				onstack[t] = 0;
				env->aux[t].scc = self ? id : 0;
			}
			if (self)
				id++;
		}
	}
	free(pre);
	return 0;
}
