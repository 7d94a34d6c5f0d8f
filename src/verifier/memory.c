/* memory.c - loads, stores and atomics: which pointer a memory access goes through
 * decides the rules.  Packet accesses need a proven range; map values must stay within
 * value_size for every value a variable offset may take.  The stack's byte-level model is
 * stack.c, the context's per program type fields ctx.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include <linux/btf.h>

#include "verifier/internal.h"

/* sizeof(struct bpf_flow_keys) */
#define FLOW_KEYS_SIZE 56

/* ---- helpers --------------------------------------------------------------------------- */
static void scratch_reg(struct brt_env *env, int regno)
{
	env->scratched_regs |= (uint16_t)(1u << regno);
}

/* __check_ptr_off_reg(): a pointer a helper or kfunc takes, at no offset (or a fixed one
 * when fixed_off_ok) */
static int check_ptr_off(struct brt_env *env, const struct brt_reg *reg, int regno,
			 int fixed_off_ok)
{
	if (reg->off < 0) {
		brt_verr(env, "negative offset %s ptr R%d off=%d disallowed\n",
			 brt_reg_type_str(env, reg->type), regno, reg->off);
		return -EACCES;
	}
	if (!fixed_off_ok && reg->off) {
		brt_verr(env, "dereference of modified %s ptr R%d off=%d disallowed\n",
			 brt_reg_type_str(env, reg->type), regno, reg->off);
		return -EACCES;
	}
	if (!brt_tnum_is_const(reg->var_off) || reg->var_off.value) {
		char tn[48];

		brt_tnum_strn(tn, sizeof(tn), reg->var_off);
		brt_verr(env, "variable %s access var_off=%s disallowed\n",
			 brt_reg_type_str(env, reg->type), tn);
		return -EACCES;
	}
	return 0;
}

int brt_check_ptr_off_reg(struct brt_env *env, const struct brt_reg *reg, int regno)
{
	return check_ptr_off(env, reg, regno, 0);
}

int brt_check_ptr_fixed_off_reg(struct brt_env *env, const struct brt_reg *reg, int regno)
{
	return check_ptr_off(env, reg, regno, 1);
}

int brt_check_arg_reg_off(struct brt_env *env, const struct brt_reg *reg, int regno)
{
	switch (reg->type) {
	case PTR_TO_STACK:
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
	case PTR_TO_MAP_KEY:
	case PTR_TO_MAP_VALUE:
	case PTR_TO_MEM:
	case PTR_TO_MEM | MEM_RDONLY:
	case PTR_TO_MEM | MEM_RINGBUF:
	case SCALAR_VALUE:
		return 0;
	default:
		return brt_check_ptr_off_reg(env, reg, regno);
	}
}

static int check_alignment(struct brt_env *env, const struct brt_reg *reg, int off, int size,
			   int strict_once)
{
	int strict = env->strict_alignment || strict_once;
	const char *desc = "";
	struct tnum ro;
	char tn[48];

	switch (reg->type) {
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		if (!strict || size == 1)
			return 0;
		/* NET_IP_ALIGN is taken as 2 under strict alignment */
		ro = brt_tnum_add(reg->var_off, brt_tnum_const((uint64_t)(2 + reg->off + off)));
		if (brt_tnum_is_aligned(ro, (uint64_t)size))
			return 0;
		brt_tnum_strn(tn, sizeof(tn), reg->var_off);
		brt_verr(env, "misaligned packet access off %d+%s+%d+%d size %d\n", 2, tn, reg->off,
			 off, size);
		return -EACCES;
	case PTR_TO_MAP_KEY:
		desc = "key ";
		break;
	case PTR_TO_MAP_VALUE:
		desc = "value ";
		break;
	case PTR_TO_CTX:
		desc = "context ";
		break;
	case PTR_TO_STACK:
		desc = "stack ";
		strict = 1; /* spill tracking needs aligned stack accesses */
		break;
	default:
		break;
	}
	if (!strict || size == 1)
		return 0;
	ro = brt_tnum_add(reg->var_off, brt_tnum_const((uint64_t)(int64_t)(reg->off + off)));
	if (brt_tnum_is_aligned(ro, (uint64_t)size))
		return 0;
	brt_tnum_strn(tn, sizeof(tn), reg->var_off);
	brt_verr(env, "misaligned %saccess off %s+%d+%d size %d\n", desc, tn, reg->off, off, size);
	return -EACCES;
}

int brt_check_ptr_alignment(struct brt_env *env, const struct brt_reg *reg, int off, int size,
			    int strict)
{
	return check_alignment(env, reg, off, size, strict);
}

static int mem_in_range(struct brt_env *env, int regno, int64_t off, int size, uint32_t mem_size,
			int zero_ok)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	int size_ok = size > 0 || (size == 0 && zero_ok);

	if (off >= 0 && size_ok && (uint64_t)off + (uint64_t)size <= mem_size)
		return 0;
	switch (BASE_TYPE(reg->type)) {
	case PTR_TO_MAP_KEY:
		brt_verr(env, "invalid access to map key, key_size=%d off=%d size=%d\n", mem_size,
			 (int)off, size);
		break;
	case PTR_TO_MAP_VALUE:
		brt_verr(env, "invalid access to map value, value_size=%d off=%d size=%d\n",
			 mem_size, (int)off, size);
		break;
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
	case PTR_TO_PACKET_END:
		brt_verr(env, "invalid access to packet, off=%d size=%d, R%d(id=%u,off=%d,r=%d)\n",
			 (int)off, size, regno, reg->id, (int)off, (int)mem_size);
		break;
	default:
		brt_verr(env, "invalid access to memory, mem_size=%u off=%d size=%d\n", mem_size,
			 (int)off, size);
	}
	return -EACCES;
}

/* [off, off+size) for every value the register's variable part may take */
/* The kernel's check_map_access() field loop: no load, store or helper access may touch
 * the value's bpf_spin_lock ([x1, x2) overlaps [y1, y2) iff x1 < y2 && y1 < x2). */
/* the value's record when its kptrs are bpfrt's (objects of the program's BTF) */
static const struct brt_grec *map_kptrs(struct brt_env *env, int map_idx)
{
	const struct brt_grec *rec =
		env->maps[map_idx].info.has_btf ? brt_graph_map_rec(env, map_idx) : NULL;

	return rec && env->maps[map_idx].vrec_local ? rec : NULL;
}

/* check_map_access()'s kptr fields: loaded or stored whole, directly, at their offset */
static int check_kptr_fields(struct brt_env *env, int regno, int off, int size, int direct,
			     int64_t before)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	const struct brt_grec *rec = map_kptrs(env, reg->map_idx);
	const struct brt_gfield *f = NULL;

	for (int i = 0; rec && i < rec->n; i++) {
		const struct brt_gfield *g = &rec->f[i];

		if (brt_graph_kptr_at(rec, g->off) == g && reg->smin + off < (int64_t)g->off + 8 &&
		    (int64_t)g->off < (int64_t)reg->umax + off + size && (!f || g->off < f->off))
			f = g;
	}
	if (!f || (int64_t)f->off > before)
		return 0;
	if (!direct) {
		brt_verr(env, "%s cannot be accessed indirectly by helper\n", brt_gfield_name(f->kind));
		return -EACCES;
	}
	if (!brt_tnum_is_const(reg->var_off)) {
		brt_verr(env, "%s access cannot have variable offset\n", brt_gfield_name(f->kind));
		return -EACCES;
	}
	if ((int64_t)f->off != off + (int64_t)reg->var_off.value) {
		brt_verr(env, "%s access misaligned expected=%u off=%llu\n", brt_gfield_name(f->kind),
			 f->off, (unsigned long long)(off + (int64_t)reg->var_off.value));
		return -EACCES;
	}
	if (size != 8) {
		brt_verr(env, "%s access size must be BPF_DW\n", brt_gfield_name(f->kind));
		return -EACCES;
	}
	return 0;
}

static int check_map_fields(struct brt_env *env, int regno, const struct brt_map_info *m,
			    int off, int size, int direct)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	uint32_t lock1 = m->spin_lock_off1 ? m->spin_lock_off1 : m->res_spin_lock_off1;
	/* the value's special fields bpfrt records: a lock, a timer, a task work */
	const struct {
		uint32_t off1, size;
		const char *name;
	} f[] = { { lock1, 4, m->spin_lock_off1 ? "bpf_spin_lock" : "bpf_res_spin_lock" },
		  { m->timer_off1, 16, "bpf_timer" },
		  { m->task_work_off1, 8, "bpf_task_work" } };
	int64_t first = INT64_MAX;
	const char *name = NULL;
	int err;

	/* the kernel walks the fields in offset order: the first one touched is named */
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		int64_t p = (int64_t)f[i].off1 - 1;

		if (f[i].off1 && reg->smin + off < p + f[i].size &&
		    p < (int64_t)reg->umax + off + size && p < first) {
			first = p;
			name = f[i].name;
		}
	}
	/* ... a kptr before them answers first */
	err = check_kptr_fields(env, regno, off, size, direct, first);
	if (err)
		return err;
	if (name) {
		brt_verr(env, "%s cannot be accessed directly by load/store\n", name);
		return -EACCES;
	}
	return 0;
}

static int check_region(struct brt_env *env, int regno, int off, int size, uint32_t mem_size,
			int zero_ok)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	int err;

	if (reg->smin < 0 && (reg->smin == INT64_MIN ||
			      (int64_t)off + reg->smin != (int64_t)(int32_t)(off + reg->smin) ||
			      reg->smin + off < 0)) {
		brt_verr(env, "R%d min value is negative, either use unsigned index or do a if "
			      "(index >=0) check.\n",
			 regno);
		return -EACCES;
	}
	err = mem_in_range(env, regno, reg->smin + off, size, mem_size, zero_ok);
	if (err) {
		brt_verr(env, "R%d min value is outside of the allowed memory range\n", regno);
		return err;
	}
	if (reg->umax >= BRT_MAX_VAR_OFF) {
		brt_verr(env, "R%d unbounded memory access, make sure to bounds check any such "
			      "access\n",
			 regno);
		return -EACCES;
	}
	err = mem_in_range(env, regno, (int64_t)reg->umax + off, size, mem_size, zero_ok);
	if (err) {
		brt_verr(env, "R%d max value is outside of the allowed memory range\n", regno);
		return err;
	}
	return 0;
}

int brt_check_map_value_range(struct brt_env *env, int regno, int off, int size)
{
	const struct brt_map_info *m = &env->maps[brt_cur_regs(env)[regno].map_idx].info;
	int err = check_region(env, regno, off, size, m->value_size, 0);

	return err ? err : check_map_fields(env, regno, m, off, size, 0);
}

static int check_packet_access(struct brt_env *env, int regno, int off, int size, int zero_ok)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	int err;

	if (reg->smin < 0) {
		brt_verr(env, "R%d min value is negative, either use unsigned index or do a if "
			      "(index >=0) check.\n",
			 regno);
		return -EACCES;
	}
	err = reg->range < 0 ? -EINVAL
			     : mem_in_range(env, regno, off, size, (uint32_t)reg->range, zero_ok);
	if (err) {
		brt_verr(env, "R%d offset is outside of the packet\n", regno);
		return err;
	}
	return 0;
}

/* ---- check_mem_access ------------------------------------------------------------------ */
static int map_access_type(struct brt_env *env, const struct brt_map_info *m, int off, int size,
			   enum brt_access t)
{
	if (t == BRT_WRITE && (m->map_flags & BPF_F_RDONLY_PROG)) {
		brt_verr(env, "write into map forbidden, value_size=%d off=%d size=%d\n",
			 m->value_size, off, size);
		return -EACCES;
	}
	if (t == BRT_READ && (m->map_flags & BPF_F_WRONLY_PROG)) {
		brt_verr(env, "read from map forbidden, value_size=%d off=%d size=%d\n",
			 m->value_size, off, size);
		return -EACCES;
	}
	return 0;
}

/* A load from a frozen read-only array (.rodata): the value is a constant.  Only
 * single-element arrays have a direct address (the kernel: -ENOTSUPP otherwise). */
static int rodata_read(const struct brt_map_info *m, int off, int size, int is_ldsx,
		       struct brt_reg *dst)
{
	const unsigned char *p = m->rodata;
	uint64_t v = 0;

	if (m->max_entries != 1 || !p)
		return -524; /* ENOTSUPP */
	if (off < 0 || (uint32_t)off + (uint32_t)size > m->value_size)
		return -EINVAL;
	for (int i = size - 1; i >= 0; i--) /* little endian, as the value is stored */
		v = v << 8 | p[off + i];
	if (is_ldsx && size < 8)
		v = (uint64_t)((int64_t)(v << (64 - 8 * size)) >> (64 - 8 * size));
	dst->type = SCALAR_VALUE;
	brt_mark_reg_known(dst, v);
	return 0;
}

/* The kernel structure behind a map pointer of each type (the map_btf_id of its ops):
 * loads through a map pointer read it, and name it when refused.  NULL: none. */
static const char *map_struct_name(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		return "bpf_array";
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		return "bpf_htab";
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
		return "bpf_queue_stack";
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
		return "bpf_ringbuf_map";
	case BPF_MAP_TYPE_LPM_TRIE:
		return "lpm_trie";
	case BPF_MAP_TYPE_STACK_TRACE:
		return "bpf_stack_map";
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
		return "bpf_dtab";
	case BPF_MAP_TYPE_CPUMAP:
		return "bpf_cpu_map";
	case BPF_MAP_TYPE_XSKMAP:
		return "xsk_map";
	case BPF_MAP_TYPE_BLOOM_FILTER:
		return "bpf_bloom_filter";
	case BPF_MAP_TYPE_SOCKMAP:
		return "bpf_stab";
	case BPF_MAP_TYPE_SOCKHASH:
		return "bpf_shtab";
	case BPF_MAP_TYPE_CGROUP_STORAGE:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
		return "bpf_cgroup_storage_map";
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
		return "bpf_local_storage_map";
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		return "reuseport_array";
	default:
		return NULL;
	}
}

/* A read through a kernel pointer, which the kernel makes fault-safe (BPF_PROBE_MEM: a bad
 * address reads 0), as bpfrt's checked engine does for the loads so marked; the program
 * runs there (btf_loads).  A helper's read of such memory is no load. */
static void mark_probe_load(struct brt_env *env)
{
	env->btf_loads = 1;
	if (BPF_CLASS(env->insns[env->insn_idx].code) == BPF_LDX)
		env->aux[env->insn_idx].probe_load = 1;
}

int brt_check_mem_access(struct brt_env *env, int insn_idx, int regno, int off, int size,
			 enum brt_access t, int value_regno, int strict_once, int is_ldsx)
{
	struct brt_reg *regs = brt_cur_regs(env), *reg = &regs[regno];
	int err;

	err = check_alignment(env, reg, off, size, strict_once);
	if (err)
		return err;
	off += reg->off;
	if (reg->type == PTR_TO_MAP_KEY) {
		if (t == BRT_WRITE) {
			brt_verr(env, "write to change key R%d not allowed\n", regno);
			return -EACCES;
		}
		err = check_region(env, regno, off, size, env->maps[reg->map_idx].info.key_size, 0);
		if (err)
			return err;
		if (value_regno >= 0)
			brt_mark_reg_unknown(env, &regs[value_regno]);
	} else if (reg->type == PTR_TO_MAP_VALUE) {
		const struct brt_map_info *m = &env->maps[reg->map_idx].info;

		if (t == BRT_WRITE && value_regno >= 0 && brt_is_pointer_value(env, value_regno)) {
			brt_verr(env, "R%d leaks addr into map\n", value_regno);
			return -EACCES;
		}
		err = map_access_type(env, m, off, size, t);
		if (!err)
			err = check_region(env, regno, off, size, m->value_size, 0);
		if (!err)
			err = check_map_fields(env, regno, m, off, size, 1);
		if (err)
			return err;
		if (brt_tnum_is_const(reg->var_off)) {
			const struct brt_gfield *kf =
				brt_graph_kptr_at(map_kptrs(env, reg->map_idx),
						  off + (int64_t)reg->var_off.value);

			if (kf)
				return brt_graph_kptr_access(env, kf, value_regno);
		}
		if (t == BRT_READ && value_regno >= 0 && brt_tnum_is_const(reg->var_off) &&
		    m->frozen_rdonly && m->type == BPF_MAP_TYPE_ARRAY) {
			err = rodata_read(m, off + (int)reg->var_off.value, size, is_ldsx,
					  &regs[value_regno]);
			if (err)
				return err;
		} else if (t == BRT_READ && value_regno >= 0) {
			brt_mark_reg_unknown(env, &regs[value_regno]);
		}
	} else if (BASE_TYPE(reg->type) == PTR_TO_MEM) {
		if (reg->type & PTR_MAYBE_NULL) {
			brt_verr(env, "R%d invalid mem access '%s'\n", regno,
				 brt_reg_type_str(env, reg->type));
			return -EACCES;
		}
		if (t == BRT_WRITE && (reg->type & MEM_RDONLY)) {
			brt_verr(env, "R%d cannot write into %s\n", regno,
				 brt_reg_type_str(env, reg->type));
			return -EACCES;
		}
		if (t == BRT_WRITE && value_regno >= 0 && brt_is_pointer_value(env, value_regno)) {
			brt_verr(env, "R%d leaks addr into mem\n", value_regno);
			return -EACCES;
		}
		/* bpf_rdonly_cast()'s void pointer: no size, any offset read (the kernel
		 * reads it fault-safe, as bpfrt reads kernel objects: btf_loads) */
		if ((reg->type & (MEM_RDONLY | PTR_UNTRUSTED)) == (MEM_RDONLY | PTR_UNTRUSTED))
			mark_probe_load(env);
		else
			err = check_region(env, regno, off, size, reg->mem_size, 0);
		if (err)
			return err;
		if (value_regno >= 0 && t == BRT_READ)
			brt_mark_reg_unknown(env, &regs[value_regno]);
	} else if (reg->type == PTR_TO_CTX) {
		uint32_t rt;

		if (t == BRT_WRITE && value_regno >= 0 && brt_is_pointer_value(env, value_regno)) {
			brt_verr(env, "R%d leaks addr into ctx\n", value_regno);
			return -EACCES;
		}
		uint32_t btf_id = 0;

		err = brt_check_ptr_off_reg(env, reg, regno);
		if (err)
			return err;
		if (brt_prog_type(env->opts->prog_type)->ctx == BRT_CTX_BTF
			    ? !brt_btf_ctx_access(env, off, size, t, &rt, &btf_id)
			    : !brt_ctx_valid(env, off, size, t, &rt)) {
			brt_verr(env, "invalid bpf_context access off=%d size=%d\n", off, size);
			return -EACCES;
		}
		if (brt_prog_type(env->opts->prog_type)->ctx == BRT_CTX_NF &&
		    BASE_TYPE(rt) == PTR_TO_BTF_ID)
			btf_id = brt_btf_nf_ctx_id(env, off);
		if ((uint32_t)(off + size) > env->max_ctx_offset)
			env->max_ctx_offset = (uint32_t)(off + size);
		if (t == BRT_READ && BPF_CLASS(env->insns[env->insn_idx].code) == BPF_LDX &&
		    brt_ctx_read_off(env, off, size) != off)
			env->aux[env->insn_idx].ctx_read_off =
				(int16_t)(1 + brt_ctx_read_off(env, off, size) - reg->off);
		if (t == BRT_READ && value_regno >= 0) {
			brt_mark_reg_unknown(env, &regs[value_regno]);
			if (rt != SCALAR_VALUE) {
				brt_mark_reg_known_zero(&regs[value_regno]);
				regs[value_regno].type = rt;
				regs[value_regno].btf_id = btf_id;
				if (rt & PTR_MAYBE_NULL)
					regs[value_regno].id = ++env->id_gen;
				return 0;
			}
		}
	} else if (BASE_TYPE(reg->type) == PTR_TO_BTF_ID && !(reg->type & PTR_MAYBE_NULL)) {
		uint32_t rt, btf_id;

		err = brt_btf_ptr_access(env, regno, reg, off, size, t, &rt, &btf_id);
		if (err)
			return err;
		/* an allocated object is the runtime's own memory, a kernel object is not */
		if (!(reg->type & MEM_ALLOC))
			mark_probe_load(env);
		/* a store leaves its source as it was (check_ptr_to_btf_access() marks the
		 * register of a load only) */
		if (t == BRT_READ && value_regno >= 0) {
			brt_mark_reg_unknown(env, &regs[value_regno]);
			if (rt != SCALAR_VALUE) {
				brt_mark_reg_known_zero(&regs[value_regno]);
				regs[value_regno].type = rt;
				regs[value_regno].btf_id = btf_id;
				regs[value_regno].mem_size = 0;
				if (BASE_TYPE(rt) == PTR_TO_BTF_ID && (rt & PTR_MAYBE_NULL))
					regs[value_regno].id = ++env->id_gen;
				return 0;
			}
		}
	} else if (reg->type == PTR_TO_STACK) {
		err = brt_check_stack_access(env, regno, off, size, t, value_regno, insn_idx);
		if (err)
			return err;
	} else if (reg->type == PTR_TO_PACKET || reg->type == PTR_TO_PACKET_META) {
		if (t == BRT_WRITE && !brt_may_access_pkt(env, t)) {
			brt_verr(env, "cannot write into packet\n");
			return -EACCES;
		}
		if (t == BRT_WRITE && value_regno >= 0 && brt_is_pointer_value(env, value_regno)) {
			brt_verr(env, "R%d leaks addr into packet\n", value_regno);
			return -EACCES;
		}
		err = check_packet_access(env, regno, off, size, 0);
		if (err)
			return err;
		if (t == BRT_WRITE)
			env->aux[env->insn_idx].pkt_write = 1;
		if (t == BRT_READ && value_regno >= 0)
			brt_mark_reg_unknown(env, &regs[value_regno]);
	} else if (reg->type == CONST_PTR_TO_MAP &&
		   map_struct_name(env->maps[reg->map_idx].info.type) &&
		   (!env->allow_ptr_leaks || off < 0 || t != BRT_READ)) {
		/* check_ptr_to_map_access()'s refusals before its BTF walk of the map's
		 * struct; a read that passes them is refused at the end (bpfrt has no
		 * struct bpf_map to read: a documented difference) */
		const char *tname = map_struct_name(env->maps[reg->map_idx].info.type);

		if (!env->allow_ptr_leaks) {
			brt_verr(env, "'struct %s' access is allowed only to CAP_PERFMON and "
				      "CAP_SYS_ADMIN\n", tname);
			return -EPERM;
		}
		if (off < 0) {
			brt_verr(env, "R%d is %s invalid negative access: off=%d\n", regno, tname,
				 off);
			return -EACCES;
		}
		brt_verr(env, "only read from %s is supported\n", tname);
		return -EACCES;
	} else if (reg->type == PTR_TO_FLOW_KEYS) {
		if (t == BRT_WRITE && value_regno >= 0 && brt_is_pointer_value(env, value_regno)) {
			brt_verr(env, "R%d leaks addr into flow keys\n", value_regno);
			return -EACCES;
		}
		if (off < 0 || off + size > FLOW_KEYS_SIZE) {
			brt_verr(env, "invalid access to flow keys off=%d size=%d\n", off, size);
			return -EACCES;
		}
		if (t == BRT_READ && value_regno >= 0)
			brt_mark_reg_unknown(env, &regs[value_regno]);
	} else if (reg->type == PTR_TO_SOCKET || reg->type == PTR_TO_SOCK_COMMON ||
		   reg->type == PTR_TO_TCP_SOCK) {
		if (t == BRT_WRITE) {
			brt_verr(env, "R%d cannot write into %s\n", regno,
				 brt_reg_type_str(env, reg->type));
			return -EACCES;
		}
		if (reg->smin < 0) {
			brt_verr(env, "R%d min value is negative, either use unsigned index or do "
				      "a if (index >=0) check.\n", regno);
			return -EACCES;
		}
		if (reg->type == PTR_TO_TCP_SOCK ? !brt_tcp_sock_valid(off, size)
						 : !brt_sock_valid(off, size,
								   reg->type == PTR_TO_SOCK_COMMON)) {
			brt_verr(env, "R%d invalid %s access off=%d size=%d\n", regno,
				 brt_reg_type_str(env, reg->type), off, size);
			return -EACCES;
		}
		/* bpf_tcp_sock_convert_ctx_access() has no rewrite for a u32 inside the u64
		 * byte counters, which the access check lets through */
		if (reg->type == PTR_TO_TCP_SOCK && size == 4 && (off == 84 || off == 92))
			env->aux[insn_idx].bad_ctx_conv = 1;
		if (value_regno >= 0)
			brt_mark_reg_unknown(env, &regs[value_regno]);
	} else if (reg->type == PTR_TO_TP_BUFFER) {
		if (off < 0) {
			brt_verr(env, "R%d invalid tracepoint buffer access: off=%d, size=%d\n", regno,
				 off, size);
			return -EACCES;
		}
		if (!brt_tnum_is_const(reg->var_off) || reg->var_off.value) {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), reg->var_off);
			brt_verr(env, "R%d invalid variable buffer offset: off=%d, var_off=%s\n",
				 regno, off, tn);
			return -EACCES;
		}
		if (t == BRT_READ && value_regno >= 0)
			brt_mark_reg_unknown(env, &regs[value_regno]);
	} else {
		brt_verr(env, "R%d invalid mem access '%s'\n", regno, brt_reg_type_str(env, reg->type));
		return -EACCES;
	}
	if (size < 8 && value_regno >= 0 && t == BRT_READ &&
	    regs[value_regno].type == SCALAR_VALUE) {
		if (is_ldsx)
			brt_coerce_reg_to_size_sx(&regs[value_regno], size);
		else
			brt_coerce_reg_to_size(&regs[value_regno], size);
	}
	return 0;
}

int brt_check_helper_mem(struct brt_env *env, int regno, int size, int zero_ok,
			 enum brt_access t, int raw)
{
	struct brt_reg *reg = &brt_cur_regs(env)[regno];
	int err;

	switch (BASE_TYPE(reg->type)) {
	case PTR_TO_PACKET:
	case PTR_TO_PACKET_META:
		return check_packet_access(env, regno, reg->off, size, zero_ok);
	case PTR_TO_BTF_ID: {
		/* a trusted kernel pointer a helper reads (helper_args.c let only readers
		 * through): the bytes must lie in one member of its struct, as a load's */
		uint32_t rt, id;

		return brt_btf_ptr_access(env, regno, reg, reg->off, size, BRT_READ, &rt, &id);
	}
	case PTR_TO_MAP_KEY:
		if (t == BRT_WRITE) {
			brt_verr(env, "R%d cannot write into %s\n", regno,
				 brt_reg_type_str(env, reg->type));
			return -EACCES;
		}
		return check_region(env, regno, reg->off, size,
				    env->maps[reg->map_idx].info.key_size, 0);
	case PTR_TO_MAP_VALUE:
		err = map_access_type(env, &env->maps[reg->map_idx].info, reg->off, size, t);
		if (!err)
			err = check_region(env, regno, reg->off, size,
					   env->maps[reg->map_idx].info.value_size, zero_ok);
		return err ? err
			   : check_map_fields(env, regno, &env->maps[reg->map_idx].info, reg->off,
					      size, 0);
	case PTR_TO_MEM:
		if (t == BRT_WRITE && (reg->type & MEM_RDONLY)) {
			brt_verr(env, "R%d cannot write into %s\n", regno,
				 brt_reg_type_str(env, reg->type));
			return -EACCES;
		}
		return check_region(env, regno, reg->off, size, reg->mem_size, zero_ok);
	case PTR_TO_CTX:
		/* only a context whose accesses the kernel does not rewrite (syscall,
		 * BTF-typed programs) is memory a function may take */
		switch (env->opts->prog_type) {
		case BPF_PROG_TYPE_SYSCALL:
		case BPF_PROG_TYPE_TRACING:
		case BPF_PROG_TYPE_LSM:
		case BPF_PROG_TYPE_STRUCT_OPS:
		case BPF_PROG_TYPE_EXT:
			return brt_check_ptr_off_reg(env, reg, regno);
		default:
			brt_verr(env, "R%d type=%s expected=fp\n", regno,
				 brt_reg_type_str(env, reg->type));
			return -EACCES;
		}
	case PTR_TO_STACK:
		if (size == 0 && !zero_ok) {
			brt_verr(env, "invalid zero-sized read\n");
			return -EACCES;
		}
		/* a zero-sized access too must be inside the stack, and grows it (the
		 * kernel's check_stack_range_initialized()) */
		err = brt_stack_within_bounds(env, regno, reg->off, size, t);
		if (err || size == 0)
			return err;
		return brt_stack_range_init(env, regno, reg->off, size, raw);
	default:
		if (zero_ok && size == 0 && brt_reg_is_null(reg))
			return 0;
		/* NULL where a pointer may be NULL only with size 0: check_helper_mem_access()
		 * names the stack alone */
		brt_verr(env, "R%d type=%s expected=%s\n", regno, brt_reg_type_str(env, reg->type),
			 reg->type == SCALAR_VALUE ? "fp"
						   : "fp, pkt, pkt_meta, map_key, map_value, mem, "
						     "ringbuf_mem, buf, trusted_ptr_");
		return -EACCES;
	}
}

/* ---- instructions ------------------------------------------------------------------------ */
static int save_ptr_type(struct brt_env *env, uint32_t type)
{
	struct brt_insn_aux *aux = &env->aux[env->insn_idx];
	uint32_t t = BASE_TYPE(type) == PTR_TO_CTX ? 1 : BASE_TYPE(type) == PTR_TO_BTF_ID ? 3 : 2;

	if (!aux->ptr_kind) {
		aux->ptr_kind = (uint8_t)t;
		return 0;
	}
	if (aux->ptr_kind != t) {
		brt_verr(env, "same insn cannot be used with different pointers\n");
		return -EINVAL;
	}
	return 0;
}

int brt_check_load_store(struct brt_env *env, const struct bpf_insn *insn)
{
	uint8_t cls = BPF_CLASS(insn->code);
	int size = (int)brt_isa_access_size(insn->code), err;
	uint32_t type;

	if (cls == BPF_LDX) {
		err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (!err)
			err = brt_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
		if (err)
			return err;
		type = brt_cur_regs(env)[insn->src_reg].type;
		err = brt_check_mem_access(env, env->insn_idx, insn->src_reg, insn->off, size,
					   BRT_READ, insn->dst_reg, 0,
					   BPF_MODE(insn->code) == BRT_MEMSX);
		return err ? err : save_ptr_type(env, type);
	}
	if (cls == BPF_STX) {
		if (BPF_MODE(insn->code) != BPF_MEM || insn->imm) {
			brt_verr(env, "BPF_STX uses reserved fields\n");
			return -EINVAL;
		}
		err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (!err)
			err = brt_check_reg_arg(env, insn->dst_reg, SRC_OP);
		if (err)
			return err;
		type = brt_cur_regs(env)[insn->dst_reg].type;
		err = brt_check_mem_access(env, env->insn_idx, insn->dst_reg, insn->off, size,
					   BRT_WRITE, insn->src_reg, 0, 0);
		return err ? err : save_ptr_type(env, type);
	}
	/* BPF_ST */
	if (BPF_MODE(insn->code) != BPF_MEM || insn->src_reg) {
		brt_verr(env, "BPF_ST uses reserved fields\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	type = brt_cur_regs(env)[insn->dst_reg].type;
	err = brt_check_mem_access(env, env->insn_idx, insn->dst_reg, insn->off, size, BRT_WRITE,
				   -1, 0, 0);
	return err ? err : save_ptr_type(env, type);
}

int brt_check_atomic(struct brt_env *env, const struct bpf_insn *insn)
{
	struct brt_reg *regs = brt_cur_regs(env);
	int size = (int)brt_isa_access_size(insn->code), load_reg = -1, err;
	uint32_t dt;

	switch (insn->imm) {
	case BPF_ADD: case BPF_ADD | BPF_FETCH: case BPF_AND: case BPF_AND | BPF_FETCH:
	case BPF_OR: case BPF_OR | BPF_FETCH: case BPF_XOR: case BPF_XOR | BPF_FETCH:
	case BPF_XCHG: case BPF_CMPXCHG:
		break;
	default:
		brt_verr(env, "BPF_ATOMIC uses invalid atomic opcode %02x\n", insn->imm);
		return -EINVAL;
	}
	if (size != 4 && size != 8) {
		brt_verr(env, "invalid atomic operand size\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
	if (!err)
		err = brt_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if (insn->imm == BPF_CMPXCHG) {
		err = brt_check_reg_arg(env, BPF_REG_0, SRC_OP);
		if (err)
			return err;
		if (brt_is_pointer_value(env, BPF_REG_0)) {
			brt_verr(env, "R%d leaks addr into mem\n", BPF_REG_0);
			return -EACCES;
		}
	}
	if (brt_is_pointer_value(env, insn->src_reg)) {
		brt_verr(env, "R%d leaks addr into mem\n", insn->src_reg);
		return -EACCES;
	}
	dt = regs[insn->dst_reg].type;
	if (dt == PTR_TO_CTX || dt == PTR_TO_PACKET || dt == PTR_TO_PACKET_META ||
	    dt == PTR_TO_PACKET_END) {
		brt_verr(env, "BPF_ATOMIC stores into R%d %s is not allowed\n", insn->dst_reg,
			 brt_reg_type_str(env, dt));
		return -EACCES;
	}
	if (insn->imm & BPF_FETCH) {
		load_reg = insn->imm == BPF_CMPXCHG ? BPF_REG_0 : insn->src_reg;
		err = brt_check_reg_arg(env, load_reg, DST_OP);
		if (err)
			return err;
	}
	err = brt_check_mem_access(env, env->insn_idx, insn->dst_reg, insn->off, size, BRT_READ, -1,
				   1, 0);
	if (!err && load_reg >= 0)
		err = brt_check_mem_access(env, env->insn_idx, insn->dst_reg, insn->off, size,
					   BRT_READ, load_reg, 1, 0);
	if (!err)
		err = brt_check_mem_access(env, env->insn_idx, insn->dst_reg, insn->off, size,
					   BRT_WRITE, -1, 1, 0);
	return err;
}

int brt_check_ld_abs(struct brt_env *env, const struct bpf_insn *insn)
{
	struct brt_reg *regs = brt_cur_regs(env);
	int err;

	if (!brt_prog_type_has(env->opts->prog_type, BRT_PT_LD_ABS)) {
		brt_verr(env, "BPF_LD_[ABS|IND] instructions not allowed for this program type\n");
		return -EINVAL;
	}
	if (insn->dst_reg || insn->off || BPF_SIZE(insn->code) == BPF_DW ||
	    (BPF_MODE(insn->code) == BPF_ABS && insn->src_reg)) {
		brt_verr(env, "BPF_LD_[ABS|IND] uses reserved fields\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, BPF_REG_6, SRC_OP);
	if (err)
		return err;
	err = brt_check_resource_leak(env, 0, 1, "BPF_LD_[ABS|IND]");
	if (err)
		return err;
	if (regs[BPF_REG_6].type != PTR_TO_CTX) {
		brt_verr(env, "at the time of BPF_LD_ABS|IND R6 != pointer to skb\n");
		return -EINVAL;
	}
	if (BPF_MODE(insn->code) == BPF_IND) {
		err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	}
	err = brt_check_ptr_off_reg(env, &regs[BPF_REG_6], BPF_REG_6);
	if (err)
		return err;
	for (int i = 0; i <= BPF_REG_5; i++) {
		brt_mark_reg_not_init(&regs[i]);
		scratch_reg(env, i);
	}
	brt_mark_reg_unknown(env, &regs[BPF_REG_0]);
	return 0;
}

int brt_check_ld_imm(struct brt_env *env, const struct bpf_insn *insn)
{
	struct brt_reg *regs = brt_cur_regs(env), *dst;
	const struct brt_insn_aux *aux = &env->aux[env->insn_idx];
	int err;

	if (BPF_SIZE(insn->code) != BPF_DW) {
		brt_verr(env, "invalid BPF_LD_IMM insn\n");
		return -EINVAL;
	}
	if (insn->off) {
		brt_verr(env, "BPF_LD_IMM64 uses reserved fields\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, insn->dst_reg, DST_OP);
	if (err)
		return err;
	dst = &regs[insn->dst_reg];
	if (insn->src_reg == 0) {
		brt_mark_reg_known(dst, (uint64_t)(uint32_t)insn[1].imm << 32 | (uint32_t)insn->imm);
		return 0;
	}
	if (insn->src_reg == BPF_PSEUDO_BTF_ID) { /* a kernel symbol (cfg.c) */
		brt_mark_reg_known_zero(dst);
		dst->type = aux->ksym_type;
		if (BASE_TYPE(dst->type) == PTR_TO_MEM)
			dst->mem_size = aux->map_off;
		else
			dst->btf_id = aux->ksym_btf_id;
		return 0;
	}
	if (insn->src_reg == BPF_PSEUDO_FUNC) {
		int sub = brt_find_subprog(env, env->insn_idx + insn->imm + 1);

		if (!env->opts->func_linkage) {
			brt_verr(env, "missing btf func_info\n");
			return -EINVAL;
		}
		if (sub < 0 || (uint32_t)sub >= env->opts->nfuncs ||
		    env->opts->func_linkage[sub] != BTF_FUNC_STATIC) {
			brt_verr(env, "callback function not static\n");
			return -EINVAL;
		}
		dst->type = PTR_TO_FUNC;
		brt_mark_reg_known_zero(dst);
		dst->map_idx = (uint16_t)sub;
		return 0;
	}
	dst->type = CONST_PTR_TO_MAP;
	brt_mark_reg_known_zero(dst);
	dst->map_idx = (uint16_t)aux->map_idx;
	if (insn->src_reg == BPF_PSEUDO_MAP_VALUE || insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE) {
		dst->type = PTR_TO_MAP_VALUE;
		dst->off = (int32_t)aux->map_off;
	}
	return 0;
}
