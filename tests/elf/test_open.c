/* test_open.c - the ELF loader on the clang-compiled corpus (tests/progs): programs found
 * by section and symbol with their types, maps with their definitions, relocations
 * applied to the right instructions; and malformed objects (truncated, wrong machine or
 * byte order, bad relocations and symbols) refused with a message naming the place,
 * never a crash. */
#include <errno.h>
#include <stdint.h>

#include "elf/elf.h"
#include "elf_test_util.h"
#include "harness.h"

struct prog_expect {
	const char *name;
	const char *sec;
	uint32_t type;
	uint32_t attach;
	size_t map_relocs;   /* lddw BPF_PSEUDO_MAP_FD */
	size_t value_relocs; /* lddw BPF_PSEUDO_MAP_VALUE */
	size_t calls;        /* bpf-to-bpf calls */
	size_t funcs;        /* callback addresses */
	int has_subprogs;    /* insn_cnt > main_cnt */
	size_t insns;        /* exact count when non-zero */
};

struct map_expect {
	const char *name;
	enum brt_elf_map_kind kind;
	uint32_t type, key, value, max, flags, pinning;
	size_t nslots;
};

struct obj_case {
	const char *file;
	const char *license;
	uint32_t version;
	struct prog_expect progs[24];
	struct map_expect maps[6];
};

#define SOCK BPF_PROG_TYPE_SOCKET_FILTER

static const struct obj_case cases[] = {
	{ "legacy_map", "GPL", 0,
	  { { "count", "socket", SOCK, 0, .map_relocs = 2 } },
	  { { "counters", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_ARRAY, 4, 8, 4 },
	    { "scratch", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_HASH, 4, 4, 16 } } },
	{ "btf_map", "GPL", 0,
	  { { "xdp_pairs", "xdp", BPF_PROG_TYPE_XDP, BPF_XDP, .map_relocs = 3 } },
	  { { "pairs", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_HASH, 4, 16, 128 },
	    { "sizes", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 8, 2 } } },
	{ "global_data", "GPL", 0,
	  { { "data_sum", "socket", SOCK, 0, .value_relocs = 3 } },
	  { { ".data", BRT_ELF_MAP_DATA, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
	    { ".rodata", BRT_ELF_MAP_RODATA, BPF_MAP_TYPE_ARRAY, 4, 4, 1, BPF_F_RDONLY_PROG },
	    { ".bss", BRT_ELF_MAP_BSS, BPF_MAP_TYPE_ARRAY, 4, 8, 1 } } },
	{ "rodata_str", "GPL", 0,
	  { { "hello", "socket", SOCK, 0, .value_relocs = 2, .calls = 2, .has_subprogs = 1 } },
	  { { ".rodata.str1.1", BRT_ELF_MAP_RODATA, BPF_MAP_TYPE_ARRAY, 4, 10, 1,
	      BPF_F_RDONLY_PROG } } },
	{ "subprog_static", "GPL", 0,
	  { { "first", "socket", SOCK, 0, .calls = 3, .has_subprogs = 1 },
	    { "second", "tc", BPF_PROG_TYPE_SCHED_CLS, 0, .calls = 1, .has_subprogs = 1 } } },
	{ "subprog_global", "GPL", 0,
	  { { "global_calls", "socket", SOCK, 0, .calls = 11, .has_subprogs = 1 } } },
	{ "multi_prog", "GPL", 0,
	  { { "prog_a", "socket", SOCK, 0, .map_relocs = 1, .calls = 1, .has_subprogs = 1 },
	    { "prog_b", "socket", SOCK, 0, .map_relocs = 1, .calls = 1, .has_subprogs = 1 },
	    { "prog_c", "socket", SOCK, 0, .map_relocs = 1, .calls = 1, .has_subprogs = 1 } },
	  { { "hits", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 4, 3 } } },
	{ "prog_array", "GPL", 0,
	  { { "tail_one", "socket", SOCK, 0, .insns = 2 },
	    { "tail_two", "socket", SOCK, 0, .insns = 2 },
	    { "entry", "socket", SOCK, 0, .map_relocs = 1 } },
	  { { "jump_table", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4, .nslots = 2 } } },
	{ "pinned_map", "GPL", 0,
	  { { "read_shared", "socket", SOCK, 0, .map_relocs = 2 } },
	  { { "shared_counts", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_HASH, 4, 4, 8, .pinning = 1 },
	    { "private_counts", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 4, 1 } } },
	/* aya's legacy definitions in "maps/<name>" sections: its pinning field */
	{ "named_maps_pin", "GPL", 0,
	  { { "read_shared", "socket", SOCK, 0, .map_relocs = 2 } },
	  { { "shared_counts", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_HASH, 4, 4, 8, .pinning = 1 },
	    { "private_counts", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_ARRAY, 4, 4, 1 } } },
	{ "map_in_map", "GPL", 0,
	  { { "through_outer", "socket", SOCK, 0, .map_relocs = 1 } },
	  { { "inner_a", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
	    { "outer", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 2, .nslots = 1 } } },
	{ "callback", "GPL", 0,
	  { { "loop_sum", "socket", SOCK, 0, .funcs = 1, .has_subprogs = 1 } } },
	{ "license_version", "Dual MIT/GPL", 0x050a00,
	  { { "lenplus", "socket", SOCK, 0, .insns = 4 } } },
	{ "percpu_lru", "GPL", 0,
	  { { "count_both", "socket", SOCK, 0, .map_relocs = 3 } },
	  { { "per_cpu", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1 },
	    { "recent", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_LRU_HASH, 4, 8, 32 } } },
	{ "xdp_parse", "GPL", 0, { { "parse", "xdp", BPF_PROG_TYPE_XDP, BPF_XDP } } },
	{ "deep_calls", "GPL", 0,
	  { { "chain", "socket", SOCK, 0, .calls = 6, .has_subprogs = 1 },
	    { "shallow", "socket", SOCK, 0, .calls = 2, .has_subprogs = 1 } } },
	{ "custom_data", "GPL", 0,
	  { { "sum_custom", "socket", SOCK, 0, .value_relocs = 3 } },
	  { { ".data.config", BRT_ELF_MAP_DATA, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
	    { ".rodata.limits", BRT_ELF_MAP_RODATA, BPF_MAP_TYPE_ARRAY, 4, 4, 1, BPF_F_RDONLY_PROG },
	    { ".bss.scratch", BRT_ELF_MAP_BSS, BPF_MAP_TYPE_ARRAY, 4, 16, 1 } } },
	{ "loops", "GPL", 0,
	  { { "squares", "tc", BPF_PROG_TYPE_SCHED_CLS, 0, .map_relocs = 1 } },
	  { { "total", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 8, 1 } } },
	{ "static_prog", "GPL", 0,
	  { { "hidden", "socket", SOCK, 0, .insns = 2 },
	    { "visible", "socket", SOCK, 0, .insns = 2 } } },
	{ "cross_section", "GPL", 0,
	  { { "helper_in_socket", "socket", SOCK, 0 },
	    { "caller", "tc", BPF_PROG_TYPE_SCHED_CLS, 0, .calls = 1, .has_subprogs = 1 } } },
	{ "legacy_prog_array", "GPL", 0,
	  { { "dispatch", "socket", SOCK, 0, .map_relocs = 2 }, { "target", "socket", SOCK, 0 } },
	  { { "progs", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 8 },
	    { "seen", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_HASH, 4, 4, 4, BPF_F_NO_PREALLOC } } },
	{ "mixed_maps", "GPL", 0,
	  { { "sum_all", "socket", SOCK, 0, .map_relocs = 6, .value_relocs = 2 } },
	  { { "old_style", BRT_ELF_MAP_LEGACY, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
	    { "new_style", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
	    { "sized", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_HASH, 8, 4, 2, BPF_F_NO_PREALLOC },
	    { ".data", BRT_ELF_MAP_DATA, BPF_MAP_TYPE_ARRAY, 4, 4, 1 },
	    { ".bss", BRT_ELF_MAP_BSS, BPF_MAP_TYPE_ARRAY, 4, 4, 1 } } },
	{ "btf_kinds", "GPL", 0,
	  { { "kinds", "socket", SOCK, 0, .map_relocs = 1 } },
	  { { "richmap", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_ARRAY, 4, 48, 1 } } },
	{ "ld_abs", "GPL", 0, { { "abs_ind", "socket", SOCK, 0 } } },
	{ "tc_rewrite", "GPL", 0, { { "swap_macs", "tc", BPF_PROG_TYPE_SCHED_CLS, 0 } } },
	{ "hash_of_maps", "GPL", 0,
	  { { "nested", "socket", SOCK, 0, .map_relocs = 1 } },
	  { { "slot7", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_HASH, 4, 4, 4 },
	    { "by_id", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_HASH_OF_MAPS, 4, 4, 8, .nslots = 1 } } },
	{ "big_bss", "GPL", 0,
	  { { "big", "socket", SOCK, 0, .value_relocs = 2 } },
	  { { ".data", BRT_ELF_MAP_DATA, BPF_MAP_TYPE_ARRAY, 4, 4096, 1 },
	    { ".bss", BRT_ELF_MAP_BSS, BPF_MAP_TYPE_ARRAY, 4, 65536, 1 } } },
	{ "unrolled", "GPL", 0, { { "long_prog", "socket", SOCK, 0 } } },
	{ "queue_stack", "GPL", 0,
	  { { "push_pop", "socket", SOCK, 0, .map_relocs = 12 } },
	  { { "fifo", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_QUEUE, 0, 4, 8 },
	    { "lifo", BRT_ELF_MAP_BTF, BPF_MAP_TYPE_STACK, 0, 4, 8 } } },
	{ "call_order", "GPL", 0,
	  { { "order", "socket", SOCK, 0, .calls = 3, .has_subprogs = 1 } } },
	{ "sec_types", "Dual BSD/GPL", 0x060100,
	  { { "tp_write", "tracepoint/syscalls/sys_enter_write", BPF_PROG_TYPE_TRACEPOINT, 0, .insns = 2 },
	    { "tp_short", "tp/sched/sched_switch", BPF_PROG_TYPE_TRACEPOINT, 0, .insns = 2 },
	    { "raw_tp", "raw_tp/sched_switch", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, .insns = 2 },
	    { "raw_tracepoint", "raw_tracepoint/sys_enter", BPF_PROG_TYPE_RAW_TRACEPOINT, 0, .insns = 2 },
	    { "kp", "kprobe/do_sys_open", BPF_PROG_TYPE_KPROBE, 0, .insns = 2 },
	    { "krp", "kretprobe/do_sys_open", BPF_PROG_TYPE_KPROBE, 0, .insns = 2 },
	    { "up", "uprobe//bin/sh:main", BPF_PROG_TYPE_KPROBE, 0, .insns = 2 },
	    { "xdp_prog", "xdp", BPF_PROG_TYPE_XDP, BPF_XDP, .insns = 2 },
	    { "tc_prog", "tc", BPF_PROG_TYPE_SCHED_CLS, 0, .insns = 2 },
	    { "cls_prog", "classifier/ingress", BPF_PROG_TYPE_SCHED_CLS, 0, .insns = 2 },
	    { "cg_in", "cgroup_skb/ingress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS, .insns = 2 },
	    { "cg_out", "cgroup_skb/egress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS, .insns = 2 },
	    { "perf", "perf_event", BPF_PROG_TYPE_PERF_EVENT, 0, .insns = 2 },
	    { "connect4", "cgroup/connect4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, .insns = 2 },
	    { "skmsg", "sk_msg", BPF_PROG_TYPE_SK_MSG, BPF_SK_MSG_VERDICT, .insns = 2 },
	    { "dissect", "flow_dissector", BPF_PROG_TYPE_FLOW_DISSECTOR, BPF_FLOW_DISSECTOR, .insns = 2 },
	    { "fentry_prog", "fentry/do_unlinkat", BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, .insns = 2 },
	    { "lsm_prog", "lsm/file_open", BPF_PROG_TYPE_LSM, BPF_LSM_MAC, .insns = 2 },
	    { "sockops_prog", "sockops", BPF_PROG_TYPE_SOCK_OPS, BPF_CGROUP_SOCK_OPS, .insns = 2 },
	    { "xdp_devmap", "xdp/devmap", BPF_PROG_TYPE_XDP, BPF_XDP_DEVMAP, .insns = 2 },
	    { "unknown", "mystery_section", BPF_PROG_TYPE_UNSPEC, 0, .insns = 2 } } },
};

/* Every relocation must have rewritten the instruction it names, in the shape its kind
 * promises; and every lddw with a pseudo source must be one of them. */
static void check_relocs(const struct brt_elf_obj *o, const struct brt_elf_prog *p,
			 const struct prog_expect *pe)
{
	size_t count[5] = { 0 };
	size_t pseudo_lddw = 0;

	for (size_t r = 0; r < p->nrelocs; r++) {
		const struct brt_elf_reloc *rl = &p->relocs[r];
		const struct bpf_insn *insn = &p->insns[rl->insn_idx];

		T_ASSERT(rl->insn_idx < p->insn_cnt);
		count[rl->kind]++;
		switch (rl->kind) {
		case BRT_ELF_RELO_MAP_FD:
		case BRT_ELF_RELO_MAP_VALUE:
			T_EQ_INT(BPF_LD | BPF_IMM | BPF_DW, insn->code);
			T_EQ_INT(rl->kind == BRT_ELF_RELO_MAP_FD ? BPF_PSEUDO_MAP_FD
								 : BPF_PSEUDO_MAP_VALUE,
				 insn->src_reg);
			T_EQ_INT(rl->target, insn->imm);
			T_ASSERT(rl->target >= 0 && (size_t)rl->target < o->nmaps);
			T_EQ_INT(rl->off, insn[1].imm);
			break;
		case BRT_ELF_RELO_CALL:
			T_EQ_INT(BPF_JMP | BPF_CALL, insn->code);
			T_EQ_INT(BPF_PSEUDO_CALL, insn->src_reg);
			T_EQ_INT(rl->target, (int64_t)rl->insn_idx + insn->imm + 1);
			/* Calls land in an appended subprogram (or recursion into the entry). */
			T_ASSERT(rl->target >= 0 && (size_t)rl->target < p->insn_cnt);
			break;
		case BRT_ELF_RELO_KSYM: /* a kfunc call, or an lddw of a kernel symbol */
			T_ASSERT(insn->code == (BPF_JMP | BPF_CALL) ||
				 insn->code == (BPF_LD | BPF_IMM | BPF_DW));
			T_EQ_INT(rl->target, insn->imm);
			break;
		case BRT_ELF_RELO_FUNC:
			T_EQ_INT(BPF_LD | BPF_IMM | BPF_DW, insn->code);
			T_EQ_INT(BPF_PSEUDO_FUNC, insn->src_reg);
			T_EQ_INT(rl->target, (int64_t)rl->insn_idx + insn->imm + 1);
			T_ASSERT((size_t)rl->target >= p->main_cnt && (size_t)rl->target < p->insn_cnt);
			break;
		}
	}
	for (size_t i = 0; i < p->insn_cnt; i++) {
		if (p->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			pseudo_lddw += p->insns[i].src_reg != 0;
			i++;
		}
	}
	T_EQ_INT(pe->map_relocs, count[BRT_ELF_RELO_MAP_FD]);
	T_EQ_INT(pe->value_relocs, count[BRT_ELF_RELO_MAP_VALUE]);
	T_EQ_INT(pe->calls, count[BRT_ELF_RELO_CALL]);
	T_EQ_INT(pe->funcs, count[BRT_ELF_RELO_FUNC]);
	T_EQ_INT(count[BRT_ELF_RELO_MAP_FD] + count[BRT_ELF_RELO_MAP_VALUE] +
			 count[BRT_ELF_RELO_FUNC],
		 pseudo_lddw);
}

static void check_case(const struct obj_case *c)
{
	struct brt_elf_obj *o;
	unsigned char *buf;
	char err[512];
	size_t len, np = 0, nm = 0;
	int ret;

	T_CASE(c->file);
	buf = corpus_read(c->file, &len);
	if (!buf) {
		T_FAIL("missing %s", corpus_path(c->file));
		return;
	}
	ret = brt_elf_open(buf, len, c->file, &o, err, sizeof(err));
	free(buf);
	if (ret) {
		T_FAIL("open: %d %s", ret, err);
		return;
	}
	T_EQ_STR(c->license, o->license);
	T_EQ_INT(c->version, o->kern_version);
	while (np < 24 && c->progs[np].name)
		np++;
	while (nm < 6 && c->maps[nm].name)
		nm++;
	T_EQ_INT(np, o->nprogs);
	/* Extra maps may come from compiler-generated constants (.rodata.cst16). */
	T_ASSERT(o->nmaps >= nm);
	for (size_t i = 0; i < np && i < o->nprogs; i++) {
		const struct prog_expect *pe = &c->progs[i];
		const struct brt_elf_prog *p = &o->progs[i];

		T_EQ_STR(pe->name, p->name);
		T_EQ_STR(pe->sec, p->sec_name);
		T_EQ_INT(pe->type, p->type);
		T_EQ_INT(pe->attach, p->expected_attach_type);
		if (pe->insns)
			T_EQ_INT(pe->insns, p->insn_cnt);
		T_EQ_INT(pe->has_subprogs, p->insn_cnt > p->main_cnt);
		T_EQ_INT(BPF_JMP | BPF_EXIT, p->insns[p->main_cnt - 1].code);
		/* -g objects carry line info for the entry instruction. */
		T_ASSERT(brt_elf_prog_line(p, 0) != NULL);
		check_relocs(o, p, pe);
	}
	for (size_t i = 0; i < nm && i < o->nmaps; i++) {
		const struct map_expect *me = &c->maps[i];
		const struct brt_elf_map *m = &o->maps[i];

		T_EQ_STR(me->name, m->name);
		T_EQ_INT(me->kind, m->kind);
		T_EQ_INT(me->type, m->type);
		T_EQ_INT(me->key, m->key_size);
		T_EQ_INT(me->value, m->value_size);
		T_EQ_INT(me->max, m->max_entries);
		T_EQ_INT(me->flags, m->map_flags);
		T_EQ_INT(me->pinning, m->pinning);
		T_EQ_INT(me->nslots, m->nslots);
	}
	brt_elf_free(o);
}

/* Details the table cannot express. */
static void check_details(void)
{
	struct brt_elf_obj *o;
	unsigned char *buf;
	char err[512];
	size_t len;

	T_CASE("prog_array slots");
	buf = corpus_read("prog_array", &len);
	if (buf && !brt_elf_open(buf, len, "prog_array", &o, err, sizeof(err))) {
		T_EQ_INT(1, o->maps[0].slots[0].index);
		T_EQ_STR("tail_one", o->progs[o->maps[0].slots[0].target].name);
		T_EQ_INT(3, o->maps[0].slots[1].index);
		T_EQ_STR("tail_two", o->progs[o->maps[0].slots[1].target].name);
		brt_elf_free(o);
	} else {
		T_FAIL("prog_array: %s", err);
	}
	free(buf);

	T_CASE("map_in_map inner and slot");
	buf = corpus_read("map_in_map", &len);
	if (buf && !brt_elf_open(buf, len, "map_in_map", &o, err, sizeof(err))) {
		const struct brt_elf_map *outer = &o->maps[1];

		T_ASSERT(outer->inner != NULL);
		if (outer->inner) {
			T_EQ_INT(BPF_MAP_TYPE_ARRAY, outer->inner->type);
			T_EQ_INT(4, outer->inner->value_size);
		}
		T_EQ_INT(0, outer->slots[0].index);
		T_EQ_INT(0, outer->slots[0].target);
		brt_elf_free(o);
	} else {
		T_FAIL("map_in_map: %s", err);
	}
	free(buf);

	T_CASE("global data initial values");
	buf = corpus_read("global_data", &len);
	if (buf && !brt_elf_open(buf, len, "global_data", &o, err, sizeof(err))) {
		int32_t v;

		memcpy(&v, o->maps[0].data, 4);
		T_EQ_INT(100, v);
		memcpy(&v, o->maps[1].data, 4);
		T_EQ_INT(3, v);
		T_ASSERT(o->maps[2].data == NULL);
		brt_elf_free(o);
	} else {
		T_FAIL("global_data: %s", err);
	}
	free(buf);

	T_CASE("rodata strings");
	buf = corpus_read("rodata_str", &len);
	if (buf && !brt_elf_open(buf, len, "rodata_str", &o, err, sizeof(err))) {
		T_EQ_STR("hello", (const char *)o->maps[0].data);
		T_EQ_STR("BPF", (const char *)o->maps[0].data + 6);
		brt_elf_free(o);
	} else {
		T_FAIL("rodata_str: %s", err);
	}
	free(buf);
}

/* ---- malformed input ---- */

enum mutation {
	M_TRUNC_HEADER,
	M_TRUNC_HALF,
	M_MACHINE,
	M_BIG_ENDIAN,
	M_CLASS32,
	M_EXEC,
	M_SHOFF_PAST_END,
	M_SEC_PAST_END,
	M_SHSTRNDX,
	M_NO_SYMTAB,
	M_SYM_NAME,
	M_SYM_SHNDX,
	M_REL_OFFSET,
	M_REL_SYM,
	M_REL_TYPE,
	M_REL_MISALIGNED,
	M_REL_TARGET,
	M_REL_NOT_LDDW,
	M_BTF_MAGIC,
	M_BTF_STR_OFF,
	M_MAPS_SIZE,
};

struct bad_case {
	const char *name;
	const char *file;      /* corpus object to corrupt */
	enum mutation m;
	int err;               /* expected -errno */
	const char *msg;       /* expected substring */
};

static const struct bad_case bad_cases[] = {
	{ "truncated header", "legacy_map", M_TRUNC_HEADER, -EINVAL, "elf: bad.o: " },
	{ "truncated half", "legacy_map", M_TRUNC_HALF, -EINVAL, "elf: bad.o: " },
	{ "wrong machine", "legacy_map", M_MACHINE, -EINVAL, "e_machine 62 is not EM_BPF (247)" },
	{ "big endian", "legacy_map", M_BIG_ENDIAN, -EINVAL, "big-endian object" },
	{ "32-bit class", "legacy_map", M_CLASS32, -EINVAL, "ELF class 1" },
	{ "executable", "legacy_map", M_EXEC, -EINVAL, "only relocatable objects" },
	{ "section table past end", "legacy_map", M_SHOFF_PAST_END, -EINVAL, "elf: bad.o: " },
	{ "section contents past end", "legacy_map", M_SEC_PAST_END, -EINVAL,
	  "section 3 'socket': contents [0x40, +0x" },
	{ "bad shstrndx", "legacy_map", M_SHSTRNDX, -EINVAL, "elf: bad.o: " },
	{ "no symbol table", "legacy_map", M_NO_SYMTAB, -EINVAL, "no symbol table" },
	{ "symbol name offset", "legacy_map", M_SYM_NAME, -EINVAL, "name offset" },
	{ "symbol section index", "legacy_map", M_SYM_SHNDX, -EINVAL, "is in section 999" },
	{ "relocation offset", "legacy_map", M_REL_OFFSET, -EINVAL,
	  "relocation 0 at offset 0x100000 is outside section" },
	{ "relocation symbol", "legacy_map", M_REL_SYM, -EINVAL,
	  "relocation 0 refers to symbol 100000, symtab has" },
	{ "relocation type", "legacy_map", M_REL_TYPE, -ENOTSUP,
	  "type 77 (unknown) against 'counters' is not supported in code" },
	{ "relocation misaligned", "legacy_map", M_REL_MISALIGNED, -EINVAL,
	  "is not on an instruction boundary" },
	{ "relocation target section", "legacy_map", M_REL_TARGET, -EINVAL,
	  "relocations for section 4000" },
	{ "relocation on non-lddw", "legacy_map", M_REL_NOT_LDDW, -EINVAL, "not an lddw" },
	{ "BTF magic", "btf_map", M_BTF_MAGIC, -EINVAL, "section 17 '.BTF' offset 0x0: bad magic 0xeb60" },
	{ "BTF string section", "btf_map", M_BTF_STR_OFF, -EINVAL, "string section" },
	{ "legacy maps size", "legacy_map", M_MAPS_SIZE, -EINVAL, "struct bpf_map_def" },
};

static size_t rel_sec_for(unsigned char *img, const char *target)
{
	size_t t = raw_find_sec(img, target);
	Elf64_Ehdr *eh = raw_ehdr(img);

	for (size_t i = 1; i < eh->e_shnum; i++)
		if (raw_shdr(img, i)->sh_type == SHT_REL && raw_shdr(img, i)->sh_info == t)
			return i;
	return 0;
}

/* Apply the mutation; returns the (possibly shorter) length. */
static size_t mutate(unsigned char *img, size_t len, enum mutation m)
{
	Elf64_Ehdr *eh = raw_ehdr(img);
	Elf64_Shdr *sh;
	Elf64_Rel *rel;
	Elf64_Sym *sym;

	switch (m) {
	case M_TRUNC_HEADER:
		return 20;
	case M_TRUNC_HALF:
		return len / 2;
	case M_MACHINE:
		eh->e_machine = EM_X86_64;
		break;
	case M_BIG_ENDIAN:
		img[EI_DATA] = ELFDATA2MSB;
		break;
	case M_CLASS32:
		img[EI_CLASS] = ELFCLASS32;
		break;
	case M_EXEC:
		eh->e_type = ET_EXEC;
		break;
	case M_SHOFF_PAST_END:
		eh->e_shoff = len + 64;
		break;
	case M_SEC_PAST_END:
		raw_shdr(img, raw_find_sec(img, "socket"))->sh_size = len * 2;
		break;
	case M_SHSTRNDX:
		eh->e_shstrndx = (uint16_t)(eh->e_shnum + 3);
		break;
	case M_NO_SYMTAB:
		raw_shdr(img, raw_find_type(img, SHT_SYMTAB))->sh_type = SHT_PROGBITS;
		break;
	case M_SYM_NAME:
		sh = raw_shdr(img, raw_find_type(img, SHT_SYMTAB));
		sym = (Elf64_Sym *)(void *)(img + sh->sh_offset);
		sym[2].st_name = 0x7fffffff;
		break;
	case M_SYM_SHNDX:
		sh = raw_shdr(img, raw_find_type(img, SHT_SYMTAB));
		sym = (Elf64_Sym *)(void *)(img + sh->sh_offset);
		sym[sh->sh_size / sizeof(*sym) - 1].st_shndx = 999;
		break;
	case M_REL_OFFSET:
	case M_REL_SYM:
	case M_REL_TYPE:
	case M_REL_MISALIGNED:
	case M_REL_TARGET:
		sh = raw_shdr(img, rel_sec_for(img, "socket"));
		rel = (Elf64_Rel *)(void *)(img + sh->sh_offset);
		if (m == M_REL_OFFSET)
			rel[0].r_offset = 0x100000;
		else if (m == M_REL_SYM)
			rel[0].r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(rel[0].r_info));
		else if (m == M_REL_TYPE)
			rel[0].r_info = ELF64_R_INFO(ELF64_R_SYM(rel[0].r_info), 77);
		else if (m == M_REL_MISALIGNED)
			rel[0].r_offset += 4;
		else
			sh->sh_info = 4000;
		break;
	case M_REL_NOT_LDDW: {
		Elf64_Shdr *code = raw_shdr(img, raw_find_sec(img, "socket"));

		sh = raw_shdr(img, rel_sec_for(img, "socket"));
		rel = (Elf64_Rel *)(void *)(img + sh->sh_offset);
		/* Turn the lddw into mov r1, 0 + nop-like second slot (ja +0). */
		img[code->sh_offset + rel[0].r_offset] = BPF_ALU64 | BPF_MOV | BPF_K;
		img[code->sh_offset + rel[0].r_offset + 8] = BPF_JMP | BPF_JA;
		break;
	}
	case M_BTF_MAGIC:
		img[raw_shdr(img, raw_find_sec(img, ".BTF"))->sh_offset] ^= 0xff;
		break;
	case M_BTF_STR_OFF: {
		/* btf_header.str_len sits at byte 20 of the header. */
		unsigned char *h = img + raw_shdr(img, raw_find_sec(img, ".BTF"))->sh_offset;
		uint32_t big = 0x7fffff00;

		memcpy(h + 20, &big, 4);
		break;
	}
	case M_MAPS_SIZE:
		raw_shdr(img, raw_find_sec(img, "maps"))->sh_size = 12;
		break;
	}
	return len;
}

/* Whole corpus objects the loader must refuse, with the reason. */
static const struct {
	const char *file;
	int err;
	const char *msg;
} refused[] = {
	{ "bad_extern", -ESRCH, "extern (kcfg) 'CONFIG_BPFRT_NOT_A_CONFIG': value not found" },
	{ "bad_data_ptr", -ENOTSUP, "'.rel.data' offset 0x0: relocation 0 in '.data' at 0x8 "
				    "against 'target': pointers in global data are not supported" },
};

static void check_refused(void)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct brt_elf_obj *o = NULL;
		unsigned char *buf;
		char err[512];
		size_t len;

		T_CASE(refused[i].file);
		buf = corpus_read(refused[i].file, &len);
		if (!buf) {
			T_FAIL("missing %s", corpus_path(refused[i].file));
			continue;
		}
		T_EQ_INT(refused[i].err, brt_elf_open(buf, len, refused[i].file, &o, err,
						      sizeof(err)));
		T_CONTAINS(refused[i].msg, err);
		T_ASSERT(o == NULL);
		free(buf);
	}
}

static void check_bad(const struct bad_case *c)
{
	struct brt_elf_obj *o = NULL;
	unsigned char *buf;
	char err[512];
	size_t len;
	int ret;

	T_CASE(c->name);
	buf = corpus_read(c->file, &len);
	if (!buf) {
		T_FAIL("missing %s", corpus_path(c->file));
		return;
	}
	len = mutate(buf, len, c->m);
	ret = brt_elf_open(buf, len, "bad.o", &o, err, sizeof(err));
	if (getenv("BPFRT_TEST_VERBOSE"))
		printf("%-28s %s\n", c->name, err);
	T_EQ_INT(c->err, ret);
	T_CONTAINS(c->msg, err);
	T_CONTAINS("elf: bad.o: ", err);
	T_ASSERT(o == NULL);
	brt_elf_free(o);
	free(buf);
}

/* A map of maps' slots as GNU as before binutils 2.41 relocates them (bpf-gcc on Debian 12:
 * R_BPF_DATA_64, 12, where LLVM writes R_BPF_64_ABS64, 2): the same slots as clang's object;
 * another type stays refused. */
static void check_gnu_slots(void)
{
	struct brt_elf_obj *o = NULL, *g = NULL;
	unsigned char *buf;
	char err[512];
	size_t len, rs;
	Elf64_Shdr *sh;
	Elf64_Rel *rel;

	T_CASE("GNU as's data relocation names");
	/* elsewhere (.BTF, .struct_ops) they are known types, not "unknown" refusals */
	T_EQ_STR("R_BPF_DATA_64", brt_elf_reloc_type_name(12));
	T_EQ_STR("R_BPF_DATA_32", brt_elf_reloc_type_name(11));
	T_CASE("R_BPF_DATA_64 in .maps");
	buf = corpus_read("map_in_map", &len);
	if (!buf) {
		T_FAIL("missing %s", corpus_path("map_in_map"));
		return;
	}
	T_EQ_INT(0, brt_elf_open(buf, len, "map_in_map.o", &o, err, sizeof(err)));
	rs = rel_sec_for(buf, ".maps");
	T_ASSERT(rs != 0);
	if (!o || !rs) {
		brt_elf_free(o);
		free(buf);
		return;
	}
	sh = raw_shdr(buf, rs);
	rel = (Elf64_Rel *)(void *)(buf + sh->sh_offset);
	for (size_t i = 0; i < sh->sh_size / sizeof(*rel); i++) {
		T_EQ_INT(2, (int)ELF64_R_TYPE(rel[i].r_info));
		rel[i].r_info = ELF64_R_INFO(ELF64_R_SYM(rel[i].r_info), 12);
	}
	T_EQ_INT(0, brt_elf_open(buf, len, "gnu.o", &g, err, sizeof(err)));
	if (g) {
		size_t slots = 0;

		T_EQ_INT((int)o->nmaps, (int)g->nmaps);
		for (size_t m = 0; m < o->nmaps && m < g->nmaps; m++) {
			T_EQ_INT((int)o->maps[m].nslots, (int)g->maps[m].nslots);
			for (size_t k = 0; k < o->maps[m].nslots && k < g->maps[m].nslots; k++) {
				T_EQ_INT((int)o->maps[m].slots[k].index, (int)g->maps[m].slots[k].index);
				T_EQ_INT(o->maps[m].slots[k].target, g->maps[m].slots[k].target);
			}
			slots += g->maps[m].nslots;
		}
		T_ASSERT(slots > 0);
		brt_elf_free(g);
	}
	rel[0].r_info = ELF64_R_INFO(ELF64_R_SYM(rel[0].r_info), 77);
	T_CASE("relocation type 77 in .maps");
	g = NULL;
	T_EQ_INT(-ENOTSUP, brt_elf_open(buf, len, "bad.o", &g, err, sizeof(err)));
	T_CONTAINS("type 77 in .maps", err);
	brt_elf_free(g);
	brt_elf_free(o);
	free(buf);
}

/* Every prefix and a few thousand deterministic byte flips: errors are fine, crashes (the
 * ASan build) and successes with inconsistent output are not. */
static void check_garbage(void)
{
	static const char *const files[] = { "legacy_map", "prog_array", "subprog_static",
					     "global_data" };
	uint32_t seed = 12345;

	T_CASE("truncations and bit flips");
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		unsigned char *orig, *buf;
		size_t len;

		orig = corpus_read(files[f], &len);
		if (!orig)
			continue;
		buf = malloc(len);
		for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
			struct brt_elf_obj *o;
			char err[512];

			if (!brt_elf_open(orig, cut, "cut.o", &o, err, sizeof(err)))
				brt_elf_free(o);
			else
				T_ASSERT(err[0] != 0);
		}
		for (int iter = 0; iter < 1500; iter++) {
			struct brt_elf_obj *o;
			char err[512];

			memcpy(buf, orig, len);
			for (int k = 0; k < 1 + iter % 4; k++) {
				seed = seed * 1103515245 + 12345;
				buf[(seed >> 8) % len] ^= (unsigned char)(1u << (seed % 8));
			}
			if (!brt_elf_open(buf, len, "flip.o", &o, err, sizeof(err))) {
				for (size_t i = 0; i < o->nprogs; i++)
					for (size_t r = 0; r < o->progs[i].nrelocs; r++)
						T_ASSERT(o->progs[i].relocs[r].insn_idx <
							 o->progs[i].insn_cnt);
				brt_elf_free(o);
			} else {
				T_ASSERT(!strncmp(err, "elf: flip.o: ", 13));
			}
		}
		free(buf);
		free(orig);
		T_OK();
	}
}

int main(void)
{
	struct brt_elf_obj *o;
	char err[256];
	size_t len;
	unsigned char *probe = corpus_read("legacy_map", &len);

	if (!probe)
		T_SKIP("corpus not built (clang missing): %s", corpus_path("legacy_map"));
	if (brt_elf_open(probe, len, "probe", &o, err, sizeof(err)) == -ENOTSUP)
		T_SKIP("%s", err);
	brt_elf_free(o);
	free(probe);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	check_details();
	check_refused();
	check_gnu_slots();
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		check_bad(&bad_cases[i]);
	check_garbage();
	return t_done();
}
