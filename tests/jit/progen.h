/* progen.h - random programs that are safe to run natively, for the JIT's differential
 * test (tests/jit/test_random.c) and fuzzer (fuzz/fuzz_jit.c): rows are drawn from
 * insn.def, memory is touched only at constant in-range offsets from r6 (the input,
 * never written; also read through an lddw of its address) or r10 (64 zeroed stack
 * bytes; the stackreg idiom's slots below them, to r10 - 128, are loaded only after a
 * store no jump skips), jumps only go forward, bpf-to-bpf calls only to later functions, and r1-r5 are
 * reloaded after calls.  Each program runs on the checked interpreter and on the JIT with
 * the same buffer (plain, blinded, and with the input's middle as frozen read-only
 * bytes); r0 and the buffer must match.
 */
#ifndef BPFRT_TESTS_JIT_PROGEN_H
#define BPFRT_TESTS_JIT_PROGEN_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "api/api.h"
#include "isa/isa.h"
#include "jit/jit.h"
#include "maps/maps.h"
#include "util/util.h"
#include "vm/vm.h"

#define PG_MEM 64        /* input bytes the program addresses through r6 (and writes) */
#define PG_STACK 64      /* stack bytes the program uses */
#define PG_MAX_BODY 96   /* random instructions at most */
#define PG_MAX (PG_MAX_BODY * 8 + 256)
#define PG_HELPER 1      /* the deterministic helper's id */

/* Random choices: from the fuzzer's bytes while they last, then from a xorshift. */
struct pg_rand {
	const uint8_t *data;
	size_t size;
	size_t pos;
	uint64_t state;
};

static inline uint64_t pg_next(struct pg_rand *r)
{
	uint64_t v;

	if (r->pos + 8 <= r->size) {
		memcpy(&v, r->data + r->pos, 8);
		r->pos += 8;
		return v;
	}
	r->state ^= r->state << 13;
	r->state ^= r->state >> 7;
	r->state ^= r->state << 17;
	return r->state;
}

static inline uint32_t pg_below(struct pg_rand *r, uint32_t n)
{
	return (uint32_t)(pg_next(r) % n);
}

/* Immediates biased to the values where engines disagree. */
static inline int32_t pg_imm(struct pg_rand *r)
{
	static const int32_t edge[] = { 0, 1, -1, 2, 7, 8, 16, 31, 32, 63, 64, INT32_MIN, INT32_MAX,
					0x7f, 0x80, 0xff, 0x8000, 0xffff, -128, -32768 };

	if (pg_below(r, 2))
		return edge[pg_below(r, sizeof(edge) / sizeof(edge[0]))];
	return (int32_t)pg_next(r);
}

/* The input every engine runs on (pg_compare), at an address fixed for the process: the
 * rodata idiom loads from it through an lddw of that address, and one JIT run takes its
 * last PG_RO_SIZE bytes, which r6's offsets never reach, as frozen read-only bytes. */
#define PG_RO_SIZE 32     /* after them, bytes no instruction writes: frozen for the JIT */
#define PG_INPUT (PG_MEM + PG_RO_SIZE) /* the buffer and length each run gets */
_Alignas(8) static uint8_t pg_input[PG_INPUT];

/* r6 holds the input pointer and r10 the stack: never written.  Other registers are
 * fair game, r1 included (the program copies it to r6 first). */
static bool pg_no_r9; /* set while a loop body is generated: r9 is its counter */
/* set for one program in eight: no calls, divisions, atomics or packet loads, so the JIT's
 * passes for programs that call nothing (redzone, leafregs) see it */
static bool pg_leaf;
/* set for one leaf program in two: only r0-r6 named (r6 the input, no loops, whose counter
 * is r9), so pass leafregs leaves two scratch registers free for pass stackreg's slots */
static bool pg_low;

static inline uint8_t pg_wreg(struct pg_rand *r)
{
	static const uint8_t w[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9 };

	return w[pg_below(r, pg_low ? 6 : (uint32_t)(sizeof(w) - pg_no_r9))];
}

static inline uint8_t pg_rreg(struct pg_rand *r)
{
	return (uint8_t)pg_below(r, pg_low ? 7 : 10);
}

struct pg_prog {
	struct bpf_insn insns[PG_MAX];
	bool target[PG_MAX];  /* a jump may land here (not inside a multi-insn group) */
	uint8_t callee[PG_MAX]; /* call local: 1 + index of the function called */
	uint8_t lookup[PG_MAX]; /* a map lookup: 1 + index of the map (pg_maps) */
	size_t n;
	unsigned nfuncs;      /* functions after the main program (0-2) */
	unsigned cur_func;    /* function being generated: it may call only later ones */
	bool in_loop;         /* generating a loop body: no jumps, calls or writes to r9 */
};

static inline void pg_emit(struct pg_prog *p, struct bpf_insn insn, bool is_target)
{
	p->target[p->n] = is_target && !p->in_loop;
	p->callee[p->n] = 0;
	p->lookup[p->n] = 0;
	p->insns[p->n++] = insn;
}

/* Hash maps the programs look keys up in (the JIT's hash probe, pass hashprobe and
 * constkey), set up by pg_maps_init(); without it no program looks anything up.  A lookup
 * is the deterministic helper's id with r1 the map's address: pg_helper() then calls the
 * map's lookup, and the JIT runs bind that call to the map as BPF_PROG_LOAD binds
 * bpf_map_lookup_elem (api/jit_lookup.c), so the JIT probes the map inline.  r0 is the
 * value's address (the same in every engine) or 0.  Keys are u32 words, all but the first
 * fixed per map; the first is one of pg_map.present (inserted: 0..PG_SMALL - 1 and keys
 * that all share one bucket, a chain longer than the probe follows inline) or
 * pg_map.absent (PG_SMALL..2*PG_SMALL - 1 and more keys of that bucket). */
#define PG_NMAPS 3
#define PG_SMALL 32     /* small first words: a key the program computes at run time */
#define PG_CHAIN 12     /* keys inserted into one bucket */
#define PG_MAP_SLOT 16  /* the key's stack slot: r10 - 16 */
struct pg_map {
	struct brt_map *map;
	int fd;
	uint32_t ks; /* 4, 8 or 12 */
	uint32_t present[PG_SMALL + PG_CHAIN], absent[PG_SMALL + 8];
};
static struct pg_map pg_maps[PG_NMAPS];
static unsigned pg_nmaps;

static inline void pg_map_key(uint32_t w0, uint32_t *key)
{
	key[0] = w0;
	key[1] = 0x01020304u;
	key[2] = 7;
}

static inline void pg_maps_free(void)
{
	for (unsigned i = 0; i < pg_nmaps; i++) {
		brt_map_put(pg_maps[i].map);
		close(pg_maps[i].fd);
	}
	pg_nmaps = 0;
}

/* (Re)create the maps: a hash map of 4-byte keys, an LRU hash map of 8-byte keys and a
 * BPF_F_NO_PREALLOC hash map of 12-byte keys, each with a fresh random seed (other chains
 * on every call).  Returns 0 or a negative errno. */
static inline int pg_maps_init(void)
{
	static const uint32_t types[PG_NMAPS] = { BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_LRU_HASH,
						  BPF_MAP_TYPE_HASH };
	static const uint32_t flags[PG_NMAPS] = { 0, 0, BPF_F_NO_PREALLOC };

	pg_maps_free();
	for (unsigned i = 0; i < PG_NMAPS; i++) {
		struct pg_map *m = &pg_maps[i];
		struct brt_hash_probe hp;
		union bpf_attr a;
		uint32_t key[3], np = 0, na = 0, bucket;
		uint64_t v = 0;
		int rc;

		memset(&a, 0, sizeof(a));
		a.map_type = types[i];
		a.key_size = m->ks = 4 * (i + 1);
		a.value_size = 8;
		a.max_entries = 64;
		a.map_flags = flags[i];
		m->fd = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
		if (m->fd < 0)
			return -errno;
		rc = brt_map_from_fd(m->fd, &m->map);
		if (rc || (rc = brt_hash_probe(m->map, &hp))) {
			close(m->fd);
			return rc;
		}
		pg_nmaps++;
		for (uint32_t k = 0; k < PG_SMALL; k++) {
			m->present[np++] = k;
			m->absent[na++] = PG_SMALL + k;
		}
		pg_map_key(0, key);
		bucket = brt_keyhash(key, m->ks, hp.seed) & (hp.n_buckets - 1);
		for (uint32_t w = 1000; np < PG_SMALL + PG_CHAIN || na < PG_SMALL + 8; w++) {
			pg_map_key(w, key);
			if ((brt_keyhash(key, m->ks, hp.seed) & (hp.n_buckets - 1)) != bucket)
				continue;
			if (np < PG_SMALL + PG_CHAIN)
				m->present[np++] = w;
			else
				m->absent[na++] = w;
		}
		for (uint32_t k = 0; k < np; k++) {
			pg_map_key(m->present[k], key);
			v = k;
			memset(&a, 0, sizeof(a));
			a.map_fd = (uint32_t)m->fd;
			a.key = (uint64_t)(uintptr_t)key;
			a.value = (uint64_t)(uintptr_t)&v;
			if (bpfrt_bpf(BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
				return -errno;
		}
	}
	return 0;
}

/* A memory operand: base r6 (input) or r10 (stack), offset in range and aligned.
 * Returns the base register. */
static inline uint8_t pg_mem(struct pg_rand *r, unsigned size, int16_t *off)
{
	if (pg_below(r, 2)) {
		*off = (int16_t)(pg_below(r, PG_MEM / size) * size);
		return 6;
	}
	*off = (int16_t)-(int)((pg_below(r, PG_STACK / size) + 1) * size);
	return 10;
}

static inline void pg_reload_args(struct pg_rand *r, struct pg_prog *p)
{
	for (uint8_t reg = 1; reg <= 5; reg++)
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = reg,
					      .imm = pg_imm(r) }, false);
}

static inline void pg_alu(struct pg_prog *p, bool w64, uint8_t op, uint8_t dst, int src, int32_t imm,
			  bool target)
{
	struct bpf_insn in = { .code = (uint8_t)((w64 ? BPF_ALU64 : BPF_ALU) | op |
						 (src < 0 ? BPF_K : BPF_X)),
			       .dst_reg = dst, .src_reg = (uint8_t)(src < 0 ? 0 : src),
			       .imm = src < 0 ? imm : 0 };

	pg_emit(p, in, target);
}

/* A lookup in one of pg_maps (above): the key's words stored at r10 - PG_MAP_SLOT, the
 * first a constant (pass constkey hashes it at compile time) or computed at run time
 * (three times it by the deterministic helper, divided by 3; or a byte of the input, a
 * small key), r2 = its address, r1 = the map, the call, its r0 kept in r7 or r8. */
static inline void pg_lookup(struct pg_rand *r, struct pg_prog *p)
{
	unsigned mi = pg_below(r, pg_nmaps), how = pg_below(r, 4);
	const struct pg_map *m = &pg_maps[mi];
	uint64_t addr = (uint64_t)(uintptr_t)m->map;
	uint32_t key[3];
	bool first = true;

	pg_map_key(pg_below(r, 4) ? m->present[pg_below(r, PG_SMALL + PG_CHAIN)]
				     : m->absent[pg_below(r, PG_SMALL + 8)], key);
	if (how == 1) {
		pg_alu(p, true, BPF_MOV, 1, -1, (int32_t)key[0], true);
		for (uint8_t reg = 2; reg <= 5; reg++)
			pg_alu(p, true, BPF_MOV, reg, -1, 0, false);
		pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = PG_HELPER },
			false);
		pg_alu(p, true, BPF_DIV, 0, -1, 3, false);
		first = false;
	} else if (how == 2) {
		pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_B, .dst_reg = 0,
					      .src_reg = 6, .off = (int16_t)pg_below(r, PG_MEM) },
			true);
		pg_alu(p, true, BPF_AND, 0, -1, 2 * PG_SMALL - 1, false);
		first = false;
	}
	for (uint32_t i = 0; i < m->ks / 4; i++) {
		int16_t off = (int16_t)(4 * i - PG_MAP_SLOT);

		if (!i && (how == 1 || how == 2))
			pg_emit(p, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_W,
						      .dst_reg = 10, .src_reg = 0, .off = off },
				false);
		else
			pg_emit(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_W,
						      .dst_reg = 10, .off = off,
						      .imm = (int32_t)key[i] }, first);
		first = false;
	}
	pg_alu(p, true, BPF_MOV, 2, 10, 0, false);
	pg_alu(p, true, BPF_ADD, 2, -1, -PG_MAP_SLOT, false);
	pg_emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1,
				      .imm = (int32_t)(uint32_t)addr }, false);
	pg_emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(addr >> 32) }, false);
	pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = PG_HELPER }, false);
	p->lookup[p->n - 1] = (uint8_t)(mi + 1);
	pg_alu(p, true, pg_below(r, 2) ? BPF_MOV : BPF_ADD, pg_below(r, 2) ? 7 : 8, 0, 0, false);
	pg_reload_args(r, p);
}

/* The idioms the JIT's passes (src/jit/x86_64/passes.def) rewrite, as clang emits them,
 * and near misses: rotates by shifts (x << k | x >> (w - k), in either order and either
 * or direction), rotates of a product by two multipliers (imm or constant registers),
 * `w = w` after a 32-bit write, <<32 >>32 pairs, a constant stored to a stack slot twice
 * (constfill), a copy and an add (lea), a conditional jump over a ja (jumpfold: the
 * ja sometimes a jump target itself), chains of jeq closed by a jne (eqset), `1 << x & K`
 * tested against 0 (bittest), ands and `w = w` after narrow values (knownbits), loads
 * through an lddw of the input's address and jumps on them or on constants (rodata,
 * constjump), byte swaps after a load or before a store (bswap), a value spilled to a
 * stack slot and reloaded (stackreg); sometimes with the wrong count, a temporary read
 * afterwards, a change of the slot between (an overlapping store, one through a copy of
 * r10) or a jump target inside, where the pass must not fire. */
static inline void pg_idiom(struct pg_rand *r, struct pg_prog *p)
{
	bool w64 = pg_below(r, 3) != 0;
	unsigned w = w64 ? 64 : 32, k = 1 + pg_below(r, w - 1), k2 = w - k;
	uint8_t x = pg_wreg(r), a = pg_wreg(r), b = pg_wreg(r), m = pg_wreg(r);
	uint8_t sh1 = BPF_LSH, sh2 = BPF_RSH;
	bool in_t = !pg_below(r, 6); /* a jump may land inside */

	if (!pg_below(r, 8))
		k2 = (unsigned)pg_below(r, w); /* not a rotate */
	if (pg_below(r, 2)) {
		sh1 = BPF_RSH;
		sh2 = BPF_LSH;
	}
	switch (pg_below(r, 13)) {
	case 10: { /* rodata / constjump: a load through an lddw of the input's address (in
		    * the frozen part, across its edge or outside it; through a copy and an
		    * add), or a constant; ALU on it; a jump on it (both sides emitted; its
		    * operands unknown when a jump lands between) */
		static const uint8_t conds[] = { BPF_JEQ,  BPF_JNE,  BPF_JGT,  BPF_JGE,
						 BPF_JLT,  BPF_JLE,  BPF_JSGT, BPF_JSGE,
						 BPF_JSLT, BPF_JSLE, BPF_JSET };
		static const uint8_t alus[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_OR, BPF_AND,
						BPF_XOR, BPF_LSH, BPF_RSH, BPF_ARSH, BPF_DIV,
						BPF_MOD, BPF_NEG, BPF_END };
		static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
		unsigned si = pg_below(r, 4), size = 1u << si;
		bool jmp64 = pg_below(r, 3) != 0;
		uint8_t op;

		if (a == x)
			x = a == 0 ? 2 : 0;
		if (pg_below(r, 4)) {
			/* mostly in the frozen tail, some across its start or before it */
			uint32_t at = PG_MEM - 8 + pg_below(r, PG_RO_SIZE + 8 - size + 1),
				 o1 = pg_below(r, at + 1);

			if (!pg_below(r, 8))
				at = pg_below(r, PG_MEM - size + 1);
			if (o1 > at)
				o1 = at;
			uint64_t base = (uint64_t)(uintptr_t)pg_input + o1;

			if (!pg_below(r, 4)) { /* through a copy and an add */
				base -= o1;
				pg_emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW,
							      .dst_reg = x, .imm = (int32_t)(uint32_t)base },
					true);
				pg_emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(base >> 32) },
					false);
				pg_alu(p, true, BPF_MOV, a, x, 0, false);
				pg_alu(p, true, BPF_ADD, a, -1, (int32_t)o1, false);
			} else {
				pg_emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW,
							      .dst_reg = a, .imm = (int32_t)(uint32_t)base },
					true);
				pg_emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(base >> 32) },
					false);
			}
			pg_emit(p, (struct bpf_insn){ .code = (uint8_t)(BPF_LDX |
									(pg_below(r, 4) || si == 3 ? BPF_MEM
												   : BRT_MEMSX) |
									sizes[si]),
						      .dst_reg = a, .src_reg = a, .off = (int16_t)(at - o1) },
				in_t);
		} else {
			pg_alu(p, pg_below(r, 2), BPF_MOV, a, -1, pg_imm(r), true);
		}
		for (unsigned i = pg_below(r, 3); i > 0; i--) {
			op = alus[pg_below(r, sizeof(alus))];
			if (op == BPF_NEG || op == BPF_END) {
				pg_emit(p, (struct bpf_insn){ .code = (uint8_t)((op == BPF_END || pg_below(r, 2)
									  ? BPF_ALU : BPF_ALU64) | op |
									 (op == BPF_END && pg_below(r, 2)
										  ? BPF_TO_BE : 0)),
							      .dst_reg = a, .imm = op == BPF_END
								? 16 << pg_below(r, 3) : 0 }, false);
				continue;
			}
			if ((op == BPF_DIV || op == BPF_MOD) && pg_leaf)
				op = BPF_XOR;
			pg_alu(p, pg_below(r, 2), op, a, -1,
			       op == BPF_DIV || op == BPF_MOD ? 1 + (int32_t)pg_below(r, 9) : pg_imm(r),
			       false);
		}
		if (p->in_loop)
			break;
		if (pg_below(r, 3)) { /* against an immediate */
			pg_emit(p, (struct bpf_insn){ .code = (uint8_t)((jmp64 ? BPF_JMP : BPF_JMP32) |
									conds[pg_below(r, 11)] | BPF_K),
						      .dst_reg = a, .off = (int16_t)(1 + pg_below(r, 8)),
						      .imm = pg_below(r, 2) ? (int32_t)pg_below(r, 3)
									    : pg_imm(r) }, true);
		} else { /* against a constant register */
			pg_alu(p, true, BPF_MOV, b, -1, pg_imm(r), false);
			pg_emit(p, (struct bpf_insn){ .code = (uint8_t)((jmp64 ? BPF_JMP : BPF_JMP32) |
									conds[pg_below(r, 11)] | BPF_X),
						      .dst_reg = a, .src_reg = b,
						      .off = (int16_t)(1 + pg_below(r, 8)) }, true);
		}
		/* the side not taken: often one pure instruction, dead or read */
		pg_alu(p, true, BPF_MOV, m, -1, pg_imm(r), false);
		if (pg_below(r, 2))
			pg_alu(p, true, BPF_ADD, 0, m, 0, false);
		break;
	}
	case 11: { /* bswap: a load then a byte swap of its register (or of another, of another
		    * width), or a byte swap then a stack store of it (the register read after
		    * or not, the store of another size, a jump landing between) */
		static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
		unsigned si = pg_below(r, 4), bits = 16u << pg_below(r, 3);
		uint8_t swap_reg = pg_below(r, 8) ? a : x;
		int16_t off;

		if (pg_below(r, 2)) {
			uint8_t base = pg_mem(r, 1u << si, &off);

			if (pg_below(r, 3)) {
				pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | sizes[si],
							      .dst_reg = a, .src_reg = base, .off = off },
					true);
			} else { /* a mask of 16 bits or not */
				pg_alu(p, pg_below(r, 2), BPF_AND, a, -1,
				       pg_below(r, 2) ? 0xffff : pg_imm(r), true);
			}
			pg_emit(p, (struct bpf_insn){ .code = (uint8_t)(pg_below(r, 4)
									? BPF_ALU | BPF_END | BPF_TO_BE
									: BPF_ALU64 | BPF_END | BPF_TO_LE),
						      .dst_reg = swap_reg, .imm = (int32_t)bits }, in_t);
		} else {
			pg_emit(p, (struct bpf_insn){ .code = (uint8_t)(pg_below(r, 4)
									? BPF_ALU | BPF_END | BPF_TO_BE
									: BPF_ALU64 | BPF_END | BPF_TO_LE),
						      .dst_reg = a, .imm = (int32_t)bits }, true);
			if (pg_below(r, 4))
				si = bits == 16 ? 1 : bits == 32 ? 2 : 3;
			off = (int16_t)-(int)((pg_below(r, PG_STACK >> si) + 1) << si);
			/* of the swapped register, or (a near miss) of another */
			pg_emit(p, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | sizes[si],
						      .dst_reg = 10, .src_reg = swap_reg, .off = off },
				in_t);
		}
		if (!pg_below(r, 3))
			pg_alu(p, true, BPF_ADD, 0, a, 0, false);
		break;
	}
	case 7: { /* jumpfold: if c goto +1; goto T, of every condition, width and source */
		static const uint8_t conds[] = { BPF_JEQ,  BPF_JNE,  BPF_JGT,  BPF_JGE,
						 BPF_JLT,  BPF_JLE,  BPF_JSGT, BPF_JSGE,
						 BPF_JSLT, BPF_JSLE, BPF_JSET };
		bool imm = pg_below(r, 2);

		if (p->in_loop) { /* no jumps inside a counted loop */
			pg_alu(p, true, BPF_MOV, a, -1, pg_imm(r), true);
			break;
		}
		if (pg_below(r, 2)) { /* eqset: if x == K goto L (1-3 times); [a = imm;]
				       * if x != K goto M; L: (a jeq of the other width or
				       * register, or to elsewhere, sometimes) */
			unsigned neq = 1 + pg_below(r, 3), mv = pg_below(r, 2);
			bool wide = pg_below(r, 2);
			int32_t ks[4];

			for (unsigned i = 0; i <= neq; i++) /* small, so x often equals one */
				ks[i] = pg_below(r, 3) ? (int32_t)pg_below(r, 8) : pg_imm(r);
			for (unsigned i = 0; i < neq; i++)
				pg_emit(p, (struct bpf_insn){
						   .code = (uint8_t)(((pg_below(r, 12) ? wide : !wide) ? BPF_JMP
												: BPF_JMP32) |
								     BPF_JEQ | BPF_K),
						   .dst_reg = pg_below(r, 12) ? x : a,
						   .off = (int16_t)(neq - i + mv +
								    (pg_below(r, 12) ? 0 : 1)),
						   .imm = ks[i] },
					i == 0 && !pg_below(r, 4));
			if (mv)
				pg_alu(p, pg_below(r, 2), BPF_MOV, a == x ? b : a, -1,
				       pg_below(r, 2) ? 0 : pg_imm(r), false);
			pg_emit(p, (struct bpf_insn){ .code = (uint8_t)((wide ? BPF_JMP : BPF_JMP32) |
									BPF_JNE | BPF_K),
						      .dst_reg = x, .off = (int16_t)(1 + pg_below(r, 12)),
						      .imm = ks[neq] }, true);
			/* L: often the registers are written here first (dead), as the pass
			 * needs two of them */
			pg_alu(p, true, BPF_MOV, m, -1, pg_imm(r), !pg_below(r, 4));
			pg_alu(p, true, BPF_MOV, b, -1, pg_imm(r), false);
			break;
		}
		pg_emit(p, (struct bpf_insn){ .code = (uint8_t)((pg_below(r, 3) ? BPF_JMP : BPF_JMP32) |
								conds[pg_below(r, 11)] |
								(imm ? BPF_K : BPF_X)),
					      .dst_reg = pg_rreg(r), .src_reg = imm ? 0 : pg_rreg(r),
					      .off = 1, .imm = imm ? pg_imm(r) : 0 }, true);
		/* a target (pg_fix_jumps keeps the +1 and clamps the ja): other jumps may
		 * land on the ja, where the pass must not fire */
		if (pg_below(r, 4))
			pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JA,
						      .off = (int16_t)(1 + pg_below(r, 12)) }, true);
		else
			pg_emit(p, (struct bpf_insn){ .code = BPF_JMP32 | BPF_JA,
						      .imm = 1 + (int32_t)pg_below(r, 12) }, true);
		break;
	}
	case 8: { /* bittest: r = 1; r <<= x; [k = lddw K;] r &= k; [a move;] if r != 0 (== 0)
		   * goto +n [; goto T]; then r written (dead) or read; near misses: 1 << x of
		   * 2, a 32-bit shift, the move reading or writing r, a nonzero compare */
		uint8_t rr = a, kk = m != a ? m : x;
		bool fold = pg_below(r, 2);

		if (p->in_loop || a == x) {
			pg_alu(p, true, BPF_MOV, a, -1, pg_imm(r), true);
			break;
		}
		pg_alu(p, pg_below(r, 2), BPF_MOV, rr, -1, pg_below(r, 8) ? 1 : 2, true);
		pg_alu(p, pg_below(r, 8) != 0, BPF_LSH, rr, x, 0, false);
		if (pg_below(r, 2) && kk != rr) {
			uint64_t kv = pg_below(r, 2) ? pg_next(r) : (uint64_t)(int64_t)pg_imm(r);

			pg_emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = kk,
						      .imm = (int32_t)(uint32_t)kv }, false);
			pg_emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(kv >> 32) }, false);
		}
		pg_alu(p, true, BPF_AND, rr, kk, 0, in_t);
		if (!pg_below(r, 3))
			pg_alu(p, pg_below(r, 2), BPF_MOV, b, pg_below(r, 8) ? (int)m : (int)rr, 0,
			       false);
		pg_emit(p, (struct bpf_insn){ .code = (uint8_t)((pg_below(r, 8) ? BPF_JMP : BPF_JMP32) |
								(pg_below(r, 2) ? BPF_JNE : BPF_JEQ) | BPF_K),
					      .dst_reg = rr, .off = (int16_t)(fold ? 1 : 1 + pg_below(r, 8)),
					      .imm = pg_below(r, 8) ? 0 : 1 }, true);
		/* jumps flagged as targets: pg_fix_jumps points them at group starts */
		if (fold)
			pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JA,
						      .off = (int16_t)(1 + pg_below(r, 8)) }, true);
		if (pg_below(r, 3))
			pg_alu(p, true, BPF_MOV, rr, -1, pg_imm(r), true);
		else
			pg_alu(p, true, BPF_ADD, 0, rr, 0, true);
		break;
	}
	case 9: { /* knownbits: a narrow value (a 1/2/4-byte load, a 32-bit or masked or
		   * shifted one), then an and whose mask keeps or loses its bits, or w = w; a
		   * jump landing between brings other bits */
		static const int32_t masks[] = { 0xff, 0xffff, 0x3c, 0xf0, -1, 0x7fffffff,
						 (int32_t)0xfffffff0u, 1, 0x1ff, -256, 0x7f, 0xfff };
		static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W };

		switch (pg_below(r, 4)) {
		case 0: {
			unsigned si = pg_below(r, 3);
			int16_t off;
			uint8_t base = pg_mem(r, 1u << si, &off);

			pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | sizes[si], .dst_reg = a,
						      .src_reg = base, .off = off }, true);
			break;
		}
		case 1:
			pg_alu(p, pg_below(r, 2), BPF_MOV, a, -1, pg_imm(r), true);
			break;
		case 2:
			pg_alu(p, pg_below(r, 2), BPF_AND, a, -1, masks[pg_below(r, 12)], true);
			break;
		default:
			pg_alu(p, pg_below(r, 2), BPF_RSH, a, -1, 1 + (int32_t)pg_below(r, 31), true);
			break;
		}
		if (!pg_below(r, 3))
			pg_alu(p, pg_below(r, 2), BPF_MOV, b, a, 0, false);
		else
			b = a;
		if (pg_below(r, 4))
			pg_alu(p, pg_below(r, 2), BPF_AND, b, -1, masks[pg_below(r, 12)], in_t);
		else
			pg_alu(p, false, BPF_MOV, b, b, 0, in_t);
		break;
	}
	case 5: { /* constfill: a constant stored to a stack slot and stored again, with
		   * sometimes a change between: an overlapping store, a store through a copy
		   * of r10, a changed register, a jump landing */
		static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
		unsigned si = pg_below(r, 4), sz = 1u << si, si2 = pg_below(r, 4), sz2 = 1u << si2;
		int16_t off = (int16_t)-(int)((1 + pg_below(r, PG_STACK / sz)) * sz);
		int16_t off2 = pg_below(r, 2) && sz2 <= sz
				       ? off
				       : (int16_t)-(int)((1 + pg_below(r, PG_STACK / sz2)) * sz2);
		int32_t c = pg_below(r, 2) ? 0 : pg_imm(r);
		uint8_t m0 = sizes[si] | BPF_MEM;

		w64 = pg_below(r, 2);

		pg_alu(p, w64, BPF_MOV, a, -1, c, true);
		pg_emit(p, (struct bpf_insn){ .code = BPF_STX | m0, .dst_reg = 10, .src_reg = a,
					      .off = off }, false);
		switch (pg_below(r, 6)) {
		case 0:
			break;
		case 1:
			pg_alu(p, w64, BPF_MOV, a, -1, c, false);
			break;
		case 2: /* an overlapping store */
			pg_emit(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | sizes[si2],
						      .dst_reg = 10, .off = off2,
						      .imm = pg_below(r, 2) ? c : pg_imm(r) }, false);
			break;
		case 3: /* the same through a copy of r10, which is then overwritten */
			if (b == a)
				break;
			pg_alu(p, true, BPF_MOV, b, 10, 0, false);
			pg_alu(p, true, BPF_ADD, b, -1, off2, false);
			pg_emit(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | sizes[si2],
						      .dst_reg = b, .imm = pg_below(r, 2) ? c : 1 },
				false);
			pg_alu(p, true, BPF_MOV, b, -1, pg_imm(r), false);
			break;
		case 4:
			pg_alu(p, pg_below(r, 2), BPF_ADD, a, -1, pg_below(r, 2) ? 0 : 1, false);
			break;
		default: /* a jump may land here */
			pg_alu(p, w64, BPF_MOV, m, -1, c, true);
			break;
		}
		pg_alu(p, pg_below(r, 4) ? w64 : !w64, BPF_MOV, a, -1, c, in_t);
		if (pg_below(r, 3))
			pg_emit(p, (struct bpf_insn){ .code = BPF_STX | m0, .dst_reg = 10,
						      .src_reg = a, .off = off }, false);
		else
			pg_emit(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | sizes[si2],
						      .dst_reg = 10, .off = off2, .imm = c }, false);
		break;
	}
	case 12: { /* stackreg: a value spilled to a slot past the zeroed bytes (r10 - 72 to
		    * r10 - 128, never folded, within the red zone) and reloaded; mostly of 4
		    * or 8 bytes, stored first in a stretch no jump enters, so the load always
		    * reads what the stretch stored.  Near misses: a load of part of the slot,
		    * a load through a copy of r10, a second store over part of it; also a
		    * conditional store again and ALU between (the pass keeps the slot) */
		static const uint8_t sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
		unsigned si = pg_below(r, 8) ? 2 + pg_below(r, 2) : pg_below(r, 2), sz = 1u << si;
		unsigned si2 = pg_below(r, si + 1), sz2 = 1u << si2;
		int16_t off = (int16_t)-(int)(PG_STACK + sz * (1 + pg_below(r, (128 - PG_STACK) / sz)));
		int16_t off2 = (int16_t)(off + (int)(sz2 * pg_below(r, sz / sz2)));
		uint8_t m0 = sizes[si] | BPF_MEM;

		if (pg_below(r, 3))
			pg_emit(p, (struct bpf_insn){ .code = BPF_STX | m0, .dst_reg = 10,
						      .src_reg = a, .off = off }, true);
		else
			pg_emit(p, (struct bpf_insn){ .code = BPF_ST | m0, .dst_reg = 10, .off = off,
						      .imm = pg_imm(r) }, true);
		switch (pg_below(r, 8)) {
		case 0: /* part of the slot, another width */
			pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | sizes[si2],
						      .dst_reg = b, .src_reg = 10, .off = off2 }, false);
			break;
		case 1: /* through a copy of r10, overwritten after (the fold sees no address) */
			if (m == b)
				break;
			pg_alu(p, true, BPF_MOV, m, 10, 0, false);
			pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | m0, .dst_reg = b, .src_reg = m,
						      .off = off }, false);
			pg_alu(p, true, BPF_MOV, m, -1, pg_imm(r), false);
			break;
		case 2: /* a store over part of it */
			pg_emit(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | sizes[si2],
						      .dst_reg = 10, .off = off2, .imm = pg_imm(r) },
				false);
			break;
		case 3: /* stored again on one side of a branch (none inside a loop) */
			if (p->in_loop)
				break;
			pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = x,
						      .imm = pg_imm(r), .off = 1 }, false);
			pg_emit(p, (struct bpf_insn){ .code = BPF_STX | m0, .dst_reg = 10,
						      .src_reg = m, .off = off }, false);
			break;
		case 4:
			pg_alu(p, pg_below(r, 2), BPF_XOR, a, m, 0, false);
			pg_alu(p, true, BPF_ADD, m, -1, pg_imm(r), false);
			break;
		default:
			break;
		}
		pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | m0, .dst_reg = b, .src_reg = 10,
					      .off = off }, false);
		if (pg_below(r, 2))
			pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | m0, .dst_reg = x,
						      .src_reg = 10, .off = off }, false);
		break;
	}
	case 6: /* lea: a = x; a += imm (or += m); sometimes of other widths or registers */
		w64 = pg_below(r, 2);
		pg_alu(p, w64, BPF_MOV, a, x, 0, true);
		pg_alu(p, pg_below(r, 8) ? w64 : !w64, BPF_ADD, pg_below(r, 8) ? a : b,
		       pg_below(r, 2) ? -1 : (pg_below(r, 8) ? (int)m : (int)a), pg_imm(r), in_t);
		break;
	case 0: /* a = x; a <<= k; x >>= w - k; x |= a (or a |= x) */
		pg_alu(p, w64 || pg_below(r, 2), BPF_MOV, a, x, 0, true);
		if (pg_below(r, 2)) {
			pg_alu(p, w64, sh1, a, -1, (int32_t)k, in_t);
			pg_alu(p, w64, sh2, x, -1, (int32_t)k2, false);
		} else {
			pg_alu(p, w64, sh2, x, -1, (int32_t)k2, in_t);
			pg_alu(p, w64, sh1, a, -1, (int32_t)k, false);
		}
		if (pg_below(r, 2))
			pg_alu(p, w64, BPF_OR, x, a, 0, false);
		else
			pg_alu(p, w64, BPF_OR, a, x, 0, false);
		break;
	case 1: /* a = x; a <<= k; b = x; b >>= w - k; b |= a */
		pg_alu(p, true, BPF_MOV, a, x, 0, true);
		pg_alu(p, w64, sh1, a, -1, (int32_t)k, false);
		pg_alu(p, true, BPF_MOV, b, x, 0, in_t);
		pg_alu(p, w64, sh2, b, -1, (int32_t)k2, false);
		pg_alu(p, w64, BPF_OR, b, a, 0, false);
		break;
	case 2: { /* a = x * (K << (w - s)); b = (x * K) >> s; b |= a */
		uint64_t kb = pg_next(r) | 1, ka;
		unsigned sft = 1 + pg_below(r, w - 1);
		bool regs = pg_below(r, 2);
		uint8_t m2 = pg_wreg(r);

		if (!regs)
			kb = (uint64_t)(int64_t)pg_imm(r);
		if (!w64)
			kb = (uint32_t)kb;
		ka = kb << (w - sft);
		if (!w64)
			ka = (uint32_t)ka;
		if (!pg_below(r, 8))
			ka ^= 1u << pg_below(r, 8); /* not a rotate */
		if (regs) {
			pg_emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = m,
						      .imm = (int32_t)(uint32_t)ka }, true);
			pg_emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(ka >> 32) }, false);
			pg_emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = m2,
						      .imm = (int32_t)(uint32_t)kb }, true);
			pg_emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(kb >> 32) }, false);
		}
		pg_alu(p, true, BPF_MOV, a, x, 0, true);
		pg_alu(p, w64, BPF_MUL, a, regs ? m : -1, (int32_t)ka, false);
		pg_alu(p, true, BPF_MOV, b, x, 0, false);
		pg_alu(p, w64, BPF_MUL, b, regs ? m2 : -1, (int32_t)kb, in_t);
		pg_alu(p, w64, BPF_RSH, b, -1, (int32_t)sft, false);
		pg_alu(p, w64, BPF_OR, b, a, 0, false);
		break;
	}
	case 3: { /* a 32-bit write, then w = w */
		static const uint8_t ops[] = { BPF_ADD, BPF_XOR, BPF_MOV, BPF_LSH, BPF_MUL };

		if (pg_below(r, 2)) {
			int16_t off;
			uint8_t base = pg_mem(r, 4, &off);

			pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = a,
						      .src_reg = base, .off = off }, true);
		} else {
			uint8_t op = ops[pg_below(r, 5)];

			pg_alu(p, pg_below(r, 4) == 0, op, a, pg_below(r, 2) ? -1 : (int)m,
			       op == BPF_LSH ? (int32_t)(k & 31) : pg_imm(r), true);
		}
		pg_alu(p, false, BPF_MOV, pg_below(r, 4) ? a : b, a, 0, in_t);
		break;
	}
	default: /* r <<= 32; r >>= 32 (s>>= 32) */
		pg_alu(p, true, BPF_LSH, a, -1, pg_below(r, 6) ? 32 : (int32_t)k, true);
		pg_alu(p, true, pg_below(r, 2) ? BPF_RSH : BPF_ARSH, a, -1, 32, in_t);
		break;
	}
	/* read a temporary: the fused form must not be used (or must keep it) */
	if (!pg_below(r, 4))
		pg_alu(p, true, BPF_ADD, 0, pg_below(r, 2) ? a : x, 0, false);
}

/* One random row of insn.def, with fields its shape allows; jumps get fixed up later. */
static inline void pg_one(struct pg_rand *r, struct pg_prog *p)
{
	enum brt_op op = (enum brt_op)pg_below(r, BRT_OP_COUNT);
	const struct brt_opinfo *info = &brt_ops[op];

	if (pg_nmaps && !pg_leaf && !p->in_loop && !pg_below(r, 24)) {
		pg_lookup(r, p);
		return;
	}
	if (!pg_below(r, 10)) {
		pg_idiom(r, p);
		return;
	}
	struct bpf_insn in = { .code = info->opcode };
	unsigned size = brt_isa_access_size(info->opcode);

	if (info->disc == BRT_DISC_OFF)
		in.off = (int16_t)info->disc_val;
	if (pg_leaf && (info->shape == BRT_SHAPE_CALL || info->shape == BRT_SHAPE_CALLX ||
			info->shape == BRT_SHAPE_CALL_LOCAL || info->shape == BRT_SHAPE_ATOMIC ||
			info->shape == BRT_SHAPE_LD_ABS || info->shape == BRT_SHAPE_LD_IND ||
			((BPF_CLASS(info->opcode) == BPF_ALU ||
			  BPF_CLASS(info->opcode) == BPF_ALU64) &&
			 (BPF_OP(info->opcode) == BPF_DIV || BPF_OP(info->opcode) == BPF_MOD)))) {
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
					      .dst_reg = pg_wreg(r), .imm = pg_imm(r) }, true);
		return;
	}
	if (p->in_loop && (info->shape == BRT_SHAPE_JA || info->shape == BRT_SHAPE_JA32 ||
			   info->shape == BRT_SHAPE_JMP_IMM || info->shape == BRT_SHAPE_JMP_REG ||
			   info->shape == BRT_SHAPE_CALL || info->shape == BRT_SHAPE_CALLX ||
			   info->shape == BRT_SHAPE_CALL_LOCAL)) {
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
					      .dst_reg = pg_wreg(r), .imm = pg_imm(r) }, true);
		return;
	}
	switch (info->shape) {
	case BRT_SHAPE_ALU_IMM:
		in.dst_reg = pg_wreg(r);
		in.imm = pg_imm(r);
		break;
	case BRT_SHAPE_ALU_REG:
		in.dst_reg = pg_wreg(r);
		in.src_reg = pg_rreg(r);
		break;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
		in.dst_reg = pg_wreg(r);
		break;
	case BRT_SHAPE_LOAD:
		in.dst_reg = pg_wreg(r);
		in.src_reg = pg_mem(r, size, &in.off) & 0xf;
		break;
	case BRT_SHAPE_STORE_IMM:
		in.dst_reg = pg_mem(r, size, &in.off) & 0xf;
		in.imm = pg_imm(r);
		break;
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_ATOMIC:
		in.dst_reg = pg_mem(r, size, &in.off) & 0xf;
		/* fetch forms write src back */
		in.src_reg = info->shape == BRT_SHAPE_ATOMIC ? pg_wreg(r) : pg_rreg(r);
		break;
	case BRT_SHAPE_LDDW:
		in.dst_reg = pg_wreg(r);
		in.imm = pg_imm(r);
		pg_emit(p, in, true);
		pg_emit(p, (struct bpf_insn){ .imm = pg_imm(r) }, false);
		return;
	case BRT_SHAPE_LD_ABS:
		in.imm = (int32_t)pg_below(r, PG_MEM + 8) - 4;
		break;
	case BRT_SHAPE_LD_IND:
		in.src_reg = pg_rreg(r);
		in.imm = (int32_t)pg_below(r, PG_MEM + 8) - 4;
		break;
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_JMP_REG:
		in.dst_reg = pg_rreg(r);
		if (info->shape == BRT_SHAPE_JMP_REG)
			in.src_reg = pg_rreg(r);
		if (info->shape == BRT_SHAPE_JMP_IMM)
			in.imm = pg_imm(r);
		if (info->shape == BRT_SHAPE_JA || info->shape == BRT_SHAPE_JA32)
			in.dst_reg = 0;
		/* distance drawn now, clamped to the program's end later */
		if (info->shape == BRT_SHAPE_JA32)
			in.imm = 1 + (int32_t)pg_below(r, 12);
		else
			in.off = (int16_t)(1 + pg_below(r, 12));
		break;
	case BRT_SHAPE_CALL:
	case BRT_SHAPE_CALLX:
		if (info->shape == BRT_SHAPE_CALLX) {
			uint8_t reg = pg_wreg(r);

			pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
						      .dst_reg = reg, .imm = PG_HELPER }, true);
			in.dst_reg = reg;
			pg_emit(p, in, false);
		} else {
			/* one call in four a helper of the vm's own, which the JIT's pass
			 * `leafcall` calls without ctx or stop check: bpf_get_numa_node_id
			 * (always 0 here) or bpf_get_prandom_u32 (pass `inlinehelper`; each
			 * engine's run starts from the same state, pg_compare()) */
			unsigned k = pg_below(r, 8);

			in.imm = k < 6 ? PG_HELPER
				 : k == 6 ? BPF_FUNC_get_numa_node_id : BPF_FUNC_get_prandom_u32;
			pg_emit(p, in, true);
		}
		pg_reload_args(r, p);
		return;
	case BRT_SHAPE_CALL_LOCAL:
		/* only forward, to a later function: no recursion, at most 3 frames */
		if (p->cur_func < p->nfuncs) {
			unsigned f = p->cur_func + 1 + pg_below(r, p->nfuncs - p->cur_func);

			pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
						      .src_reg = BPF_PSEUDO_CALL }, true);
			p->callee[p->n - 1] = (uint8_t)f;
			pg_reload_args(r, p);
			return;
		}
		/* no later function: a plain move instead */
		__attribute__((fallthrough));
	case BRT_SHAPE_EXIT:
		/* early exits are not generated: emit a plain move instead */
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
					      .dst_reg = pg_wreg(r), .imm = pg_imm(r) }, true);
		return;
	}
	if (info->disc == BRT_DISC_IMM)
		in.imm = info->disc_val;
	else if (info->disc == BRT_DISC_SRC)
		in.src_reg = (uint8_t)info->disc_val;
	pg_emit(p, in, true);
}

/* A run of 2-5 bpf_get_prandom_u32 calls (pass prandomreg keeps the state in a register
 * from a run's first inlined call to its last), each draw folded into r7 or r8, with 0-3
 * rows between: most leave the run whole (ALU on an immediate, a store of r0, a load),
 * some end it (a division or modulo, an atomic on r0, the deterministic helper, or any
 * random row: jumps, calls, lookups); a jump may land on a draw or between two. */
static inline void pg_prandom_run(struct pg_rand *r, struct pg_prog *p)
{
	unsigned draws = 2 + pg_below(r, 4);

	for (unsigned i = 0; i < draws && p->n < PG_MAX - 250; i++) {
		unsigned rows = pg_below(r, 4);
		int16_t off;
		uint8_t base;

		pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
					      .imm = BPF_FUNC_get_prandom_u32 },
			!i || !pg_below(r, 6));
		pg_alu(p, true, pg_below(r, 2) ? BPF_XOR : BPF_ADD, (uint8_t)(7 + pg_below(r, 2)),
		       0, 0, !pg_below(r, 8));
		for (unsigned k = 0; k < rows; k++) {
			bool t = !pg_below(r, 8);

			switch (pg_below(r, 10)) {
			case 0:
				pg_one(r, p);
				break;
			case 1:
				pg_alu(p, pg_below(r, 2), pg_below(r, 2) ? BPF_DIV : BPF_MOD,
				       pg_wreg(r), -1, pg_imm(r), t);
				break;
			case 2:
				base = pg_mem(r, 8, &off);
				pg_emit(p, (struct bpf_insn){ .code = BPF_STX | BPF_ATOMIC | BPF_DW,
							      .dst_reg = base, .src_reg = 0,
							      .off = off, .imm = BPF_ADD }, t);
				break;
			case 3:
				pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
							      .imm = PG_HELPER }, t);
				pg_reload_args(r, p);
				break;
			case 4:
			case 5:
				base = pg_mem(r, 8, &off);
				pg_emit(p, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW,
							      .dst_reg = base, .src_reg = 0,
							      .off = off }, t);
				break;
			case 6:
				base = pg_mem(r, 4, &off);
				pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W,
							      .dst_reg = pg_wreg(r),
							      .src_reg = base, .off = off }, t);
				break;
			default:
				pg_alu(p, pg_below(r, 2), pg_below(r, 2) ? BPF_MUL : BPF_XOR,
				       pg_wreg(r), -1, pg_imm(r), t);
				break;
			}
		}
	}
}

/* A counted loop: r9 = 1..8; body of straight-line rows that leave r9 alone; r9 -= 1;
 * back while r9 != 0.  Nothing outside jumps into it. */
static inline void pg_loop(struct pg_rand *r, struct pg_prog *p)
{
	size_t top;
	unsigned len = 1 + pg_below(r, 5);

	pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 9,
				      .imm = 1 + (int32_t)pg_below(r, 8) }, true);
	p->in_loop = true;
	pg_no_r9 = true;
	top = p->n;
	for (unsigned i = 0; i < len; i++)
		pg_one(r, p);
	pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_SUB | BPF_K, .dst_reg = 9, .imm = 1 },
		false);
	pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 9,
				      .off = (int16_t)((int64_t)top - (int64_t)p->n - 1) }, false);
	p->in_loop = false;
	pg_no_r9 = false;
}

/* Point the forward jumps of insns[start..end) at group starts in (pc, end]. */
static inline void pg_fix_jumps(struct pg_prog *p, size_t start, size_t end)
{
	for (size_t pc = start; pc < end; pc++) {
		enum brt_op op = brt_isa_lookup(&p->insns[pc]);
		int64_t t;
		int shape;

		if (!p->target[pc] || op == BRT_OP_INVALID)
			continue;
		shape = brt_ops[op].shape;
		if (shape != BRT_SHAPE_JA && shape != BRT_SHAPE_JA32 && shape != BRT_SHAPE_JMP_IMM &&
		    shape != BRT_SHAPE_JMP_REG)
			continue;
		t = brt_isa_jump_target(&p->insns[pc], op, pc);
		if (t > (int64_t)end)
			t = (int64_t)end;
		while (!p->target[t])
			t++;
		if (shape == BRT_SHAPE_JA32)
			p->insns[pc].imm = (int32_t)(t - (int64_t)pc - 1);
		else
			p->insns[pc].off = (int16_t)(t - (int64_t)pc - 1);
	}
}

/* A function's own 512-byte frame starts with garbage in the JIT: zero what it uses. */
static inline void pg_zero_stack(struct pg_prog *p)
{
	for (int s = 8; s <= PG_STACK; s += 8)
		pg_emit(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = 10,
					      .off = (int16_t)-s }, false);
}

/* Fold every register but r6 (an address) and every stack slot into r0. */
static inline void pg_fold(struct pg_prog *p)
{
	for (uint8_t reg = 1; reg <= 9; reg++) {
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MUL | BPF_K, .dst_reg = 0,
					      .imm = 31 }, reg == 1);
		if (reg != 6 && !(pg_low && reg > 6))
			pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_X,
						      .dst_reg = 0, .src_reg = reg }, false);
	}
	for (int s = 8; s <= PG_STACK; s += 8) {
		pg_emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 1,
					      .src_reg = 10, .off = (int16_t)-s }, false);
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_XOR | BPF_X, .dst_reg = 0,
					      .src_reg = 1 }, false);
		pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MUL | BPF_K, .dst_reg = 0,
					      .imm = 0x2545f491 }, false);
	}
	pg_emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT }, false);
}

/* The main program (r6 = input, stack zeroed, registers seeded, random body, fold) and
 * up to two functions (stack zeroed, random body, fold); calls go to later functions. */
static inline void pg_generate(struct pg_rand *r, struct pg_prog *p, size_t body)
{
	size_t fstart[3], start, end;

	p->n = 0;
	pg_leaf = !pg_below(r, 8);
	pg_low = pg_leaf && pg_below(r, 2);
	p->nfuncs = pg_leaf ? 0 : pg_below(r, 3);
	for (p->cur_func = 0; p->cur_func <= p->nfuncs; p->cur_func++) {
		size_t len = p->cur_func ? body / 4 : body;

		fstart[p->cur_func] = p->n;
		if (!p->cur_func)
			pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
						      .dst_reg = 6, .src_reg = 1 }, false);
		pg_zero_stack(p);
		for (uint8_t reg = 0; reg <= 9 && !p->cur_func; reg++)
			if (reg != 1 && reg != 6 && !(pg_low && reg > 6))
				pg_emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K,
							      .dst_reg = reg, .imm = pg_imm(r) },
					false);
		start = p->n;
		for (size_t i = 0; i < len && p->n < PG_MAX - 200; i++)
			if (!pg_leaf && !pg_below(r, 20))
				pg_prandom_run(r, p);
			else if (pg_below(r, 12) || pg_low)
				pg_one(r, p);
			else
				pg_loop(r, p);
		end = p->n;
		p->target[end] = true;
		pg_fold(p);
		pg_fix_jumps(p, start, end);
	}
	for (size_t pc = 0; pc < p->n; pc++)
		if (p->callee[pc])
			p->insns[pc].imm = (int32_t)((int64_t)fstart[p->callee[pc]] - (int64_t)pc - 1);
}

static inline uint64_t pg_helper(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
				 struct bpfrt_run_ctx *ctx)
{
	(void)ctx;
	for (unsigned i = 0; i < pg_nmaps; i++)
		if (r1 == (uint64_t)(uintptr_t)pg_maps[i].map)
			return (uint64_t)(uintptr_t)pg_maps[i].map->ops->lookup(
				pg_maps[i].map, (const void *)(uintptr_t)r2);
	return r1 * 3 + r2 * 5 + r3 * 7 + r4 * 11 + r5 * 13;
}

/* The JIT's binding of p's lookups to their maps (sorted by pc); the count. */
static inline size_t pg_bindings(const struct pg_prog *p, struct brt_jit_lookup *l, size_t max)
{
	size_t n = 0;

	for (size_t pc = 0; pc < p->n && n < max; pc++) {
		const struct pg_map *m;
		struct brt_hash_probe hp;

		if (!p->lookup[pc])
			continue;
		m = &pg_maps[p->lookup[pc] - 1];
		if (brt_hash_probe(m->map, &hp))
			continue;
		memset(&l[n], 0, sizeof(l[n]));
		l[n].insn = (uint32_t)pc;
		l[n].kind = BRT_JIT_LOOKUP_HASH;
		l[n].helper = pg_helper;
		memcpy(&l[n].op, &m->map->ops->lookup, sizeof(l[n].op));
		brt_jit_hash_layout_of(&hp, &l[n].hash);
		n++;
	}
	return n;
}

static inline int pg_run(const struct pg_prog *p, enum bpfrt_engine engine, uint8_t *mem,
			 uint64_t *r0, char *err, size_t errlen)
{
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine, .insn_budget = 100000);
	BPFRT_OPTS(bpfrt_helper_proto, h, .id = PG_HELPER, .name = "pg", .fn = pg_helper);
	struct brt_jit_lookup l[PG_MAX / 8];
	struct bpfrt_vm *vm;
	int rc = bpfrt_vm_load(p->insns, p->n, &o, &vm, err, errlen);
	size_t nl = engine == BPFRT_ENGINE_JIT ? pg_bindings(p, l, PG_MAX / 8) : 0;

	if (rc)
		return rc;
	if (nl && (rc = brt_vm_bind_lookups(vm, l, nl))) {
		bpfrt_vm_free(vm);
		snprintf(err, errlen, "binding lookups: %d", rc);
		return rc;
	}
	bpfrt_helper_register(vm, &h);
	rc = bpfrt_vm_run(vm, mem, PG_INPUT, r0, err, errlen);
	bpfrt_vm_free(vm);
	return rc;
}

static inline brt_helper_fn pg_resolve(void *arg, uint32_t id)
{
	(void)arg;
	return id == PG_HELPER			? pg_helper
	       : id == BPF_FUNC_get_numa_node_id ? brt_helper_get_numa_node_id
	       : id == BPF_FUNC_get_prandom_u32	? brt_helper_get_prandom_u32
						: NULL;
}

/* The JIT directly, with constant blinding and without BMI2 (the vm exposes neither), or
 * with the input's middle as frozen read-only bytes (pass rodata; the vm's loads through
 * bpfrt_vm_load() have none). */
static inline int pg_run_env(const struct pg_prog *p, uint8_t *mem, uint32_t flags, bool ro,
			     uint64_t *r0, char *err, size_t errlen)
{
	struct brt_jit_rodata rodata = { .addr = (uint64_t)(uintptr_t)mem + PG_MEM,
					 .size = PG_RO_SIZE };
	struct brt_jit_env env = { .helper = pg_resolve, .flags = flags,
				   .pkt_data_off = offsetof(struct bpfrt_run_ctx, skb_data),
				   .pkt_len_off = offsetof(struct bpfrt_run_ctx, skb_len),
				   .rodata = ro ? &rodata : NULL, .nrodata = ro };
	struct bpfrt_run_ctx ctx = { .skb_data = mem, .skb_len = PG_INPUT };
	struct brt_jit_lookup l[PG_MAX / 8];
	struct brt_jit_prog *jp;
	int rc;

	env.nlookups = pg_bindings(p, l, PG_MAX / 8);
	env.lookups = env.nlookups ? l : NULL;
	rc = brt_jit_compile(p->insns, p->n, &env, &jp, err, errlen);

	if (rc)
		return rc;
	*r0 = brt_jit_call(jp, (uint64_t)(uintptr_t)mem, PG_INPUT, &ctx);
	brt_jit_free(jp);
	return 0;
}

static inline void pg_print(const struct pg_prog *p, FILE *out)
{
	char line[128];

	for (size_t pc = 0; pc < p->n; pc++) {
		int k = brt_disasm_insn(&p->insns[pc], p->n - pc, BRT_DISASM_KERNEL, line,
					sizeof(line));

		fprintf(out, "%4zu: %s\n", pc, line);
		if (k == 2)
			pc++;
	}
}

/* The generated code, for failure messages. */
static inline void pg_dump_jit(const struct pg_prog *p)
{
	struct brt_jit_rodata rodata = { .addr = (uint64_t)(uintptr_t)pg_input + PG_MEM,
					 .size = PG_RO_SIZE };
	struct brt_jit_env env = { .helper = pg_resolve,
				   .pkt_data_off = offsetof(struct bpfrt_run_ctx, skb_data),
				   .pkt_len_off = offsetof(struct bpfrt_run_ctx, skb_len),
				   .rodata = &rodata, .nrodata = 1 };
	struct brt_jit_lookup l[PG_MAX / 8];
	struct brt_jit_prog *jp;
	char err[256];

	env.nlookups = pg_bindings(p, l, PG_MAX / 8);
	env.lookups = env.nlookups ? l : NULL;

	if (brt_jit_compile(p->insns, p->n, &env, &jp, err, sizeof(err)))
		return;
	fprintf(stderr, "JIT code:\n");
	brt_jit_dump(jp, p->insns, stderr, BRT_JIT_DUMP_OPCODES);
	brt_jit_free(jp);
}

/* Run p on the checked interpreter, the fast one and the JIT from the same input.  Returns
 * 1 when all ran and agree, 0 when the interpreter faulted (skipped), -1 on a mismatch (printed). */
static inline int pg_compare(const struct pg_prog *p, const uint8_t *input)
{
	_Alignas(8) static uint8_t after_interp[PG_INPUT], start[PG_INPUT];
	uint8_t *mem = pg_input;
	uint64_t r0_i = 0, r0_j = 0, *rand = brt_prandom_state(), rand0, rand_i;
	char err[256];
	int rc;

	/* the frozen tail: from the input, half its bytes 0 or 1 (flags to branch on) */
	memcpy(start, input, PG_MEM);
	for (size_t i = 0; i < PG_RO_SIZE; i++)
		start[PG_MEM + i] = i & 4 ? input[i] & 1 : input[i] ^ 0x5a;
	/* bpf_get_prandom_u32's state at each run's start: from the input, never 0 (0 seeds
	 * from the clock); at each run's end it must be the interpreter's */
	memcpy(&rand0, input, 8);
	rand0 |= 1;

	memcpy(mem, start, PG_INPUT);
	*rand = rand0;
	if (pg_run(p, BPFRT_ENGINE_CHECKED, mem, &r0_i, err, sizeof(err))) {
		if (getenv("PG_VERBOSE"))
			fprintf(stderr, "skipped: %s\n", err);
		return 0;
	}
	rand_i = *rand;
	memcpy(after_interp, mem, PG_INPUT);
	/* the fast interpreter (superinstructions) must agree too */
	memcpy(mem, start, PG_INPUT);
	*rand = rand0;
	rc = pg_run(p, BPFRT_ENGINE_INTERP, mem, &r0_j, err, sizeof(err));
	if (rc || r0_i != r0_j || memcmp(mem, after_interp, PG_INPUT) || *rand != rand_i) {
		fprintf(stderr, "fast interpreter: ");
		goto differs;
	}
	memcpy(mem, start, PG_INPUT);
	*rand = rand0;
	rc = pg_run(p, BPFRT_ENGINE_JIT, mem, &r0_j, err, sizeof(err));
	if (!rc && r0_i == r0_j && !memcmp(mem, after_interp, PG_INPUT) && *rand == rand_i) {
		memcpy(mem, start, PG_INPUT);
		*rand = rand0;
		rc = pg_run_env(p, mem, BRT_JIT_BLIND | BRT_JIT_NO_BMI2, true, &r0_j, err,
				sizeof(err));
		if (!rc && r0_i == r0_j && !memcmp(mem, after_interp, PG_INPUT) &&
		    *rand == rand_i) {
			memcpy(mem, start, PG_INPUT);
			*rand = rand0;
			rc = pg_run_env(p, mem, 0, true, &r0_j, err, sizeof(err));
			if (!rc && r0_i == r0_j && !memcmp(mem, after_interp, PG_INPUT) &&
			    *rand == rand_i)
				return 1;
			fprintf(stderr, "with frozen input bytes: ");
		} else {
			fprintf(stderr, "with constant blinding: ");
		}
	}
differs:
	fprintf(stderr, "differs from the checked interpreter: rc %d (%s), r0 0x%llx vs 0x%llx, "
			"memory %s, prandom state 0x%llx vs 0x%llx\n", rc, rc ? err : "",
		(unsigned long long)r0_i, (unsigned long long)r0_j,
		memcmp(mem, after_interp, PG_INPUT) ? "differs" : "same",
		(unsigned long long)rand_i, (unsigned long long)*rand);
	pg_print(p, stderr);
	pg_dump_jit(p);
	return -1;
}

#endif
