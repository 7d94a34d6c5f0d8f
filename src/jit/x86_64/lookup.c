/* lookup.c - bpf_map_lookup_elem calls bound at load to one map (struct brt_jit_lookup):
 * an array's lookup becomes the bounds check and address computation inline, any other
 * map's a direct call of its type's lookup, skipping the generic helper, the run ctx and
 * the "stopped" check.  A call is bound only while the helper table resolves it to the
 * generic helper the binding stands in for, so a host's own map_lookup_elem still wins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_RSEQ 1
#endif
#endif

#include "jit/x86_64/x86.h"
#include "util/util.h"

#define B (&st->buf)

static const struct brt_jit_lookup *find(const struct brt_jit_env *env, size_t pc)
{
	size_t lo = 0, hi = env->nlookups;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (env->lookups[mid].insn == pc)
			return &env->lookups[mid];
		if (env->lookups[mid].insn < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Keys the probe hashes and compares inline: whole 8-byte words and a tail of 1, 2 or 4
 * bytes (one zero-extending load each), at most 32 bytes; a layout whose offsets and
 * sizes fit the instructions' immediates. */
static bool hash_fits(const struct brt_jit_hash_layout *h)
{
	uint32_t tail = h->key_size % 8;

	return h->key_size && h->key_size <= 32 && (tail == 0 || tail == 1 || tail == 2 ||
						     tail == 4) &&
	       h->n_buckets && !(h->n_buckets & (h->n_buckets - 1)) &&
	       h->n_buckets <= (1u << 30) && (h->bucket_size == 8 || h->bucket_size == 16) &&
	       h->n_elems && h->n_elems <= INT32_MAX && h->elem_size &&
	       h->elem_size <= INT32_MAX && h->value_off <= INT32_MAX &&
	       h->key_off + h->key_size <= 127 && h->head_off <= 127 && h->next_off <= 127;
}

/* Where this thread's CPU number is, as an offset from the fs base: glibc's rseq area
 * (struct rseq's cpu_id, which sched_getcpu() reads too); -1 when glibc registered none
 * (older glibc, or GLIBC_TUNABLES=glibc.pthread.rseq=0). */
static int64_t rseq_cpu_off(void)
{
#ifdef HAVE_RSEQ
	int64_t off = (int64_t)__rseq_offset + (int64_t)offsetof(struct rseq, cpu_id);

	if (__rseq_size >= offsetof(struct rseq, cpu_id) + 4 && is_simm32(off))
		return off;
#endif
	return -1;
}

/* How the binding of call pc is emitted, 0 when it is an ordinary helper call. */
static uint8_t kind_of(const struct jit_state *st, const struct brt_jit_lookup *l)
{
	bool blind = st->env->flags & BRT_JIT_BLIND; /* blinding: no map constant in the code */

	if (l->kind == BRT_JIT_LOOKUP_ARRAY && l->stride && l->stride <= INT32_MAX && !blind)
		return BRT_JIT_LOOKUP_ARRAY;
	if (l->kind == BRT_JIT_LOOKUP_PERCPU_ARRAY && l->op && !blind &&
	    (st->passes & BRT_JIT_PASS(percpu)) && l->stride && l->ncpus &&
	    (uint64_t)l->stride * l->ncpus <= INT32_MAX && rseq_cpu_off() >= 0 &&
	    is_simm32(brt_cpu_tls_off()))
		return BRT_JIT_LOOKUP_PERCPU_ARRAY;
	if (l->kind == BRT_JIT_LOOKUP_HASH && l->op && !blind &&
	    (st->passes & BRT_JIT_PASS(hashprobe)) && hash_fits(&l->hash))
		return BRT_JIT_LOOKUP_HASH;
	return l->op ? BRT_JIT_LOOKUP_OP : 0;
}

int brt_jit_bind_lookups(struct jit_state *st, const uint16_t *ops)
{
	const struct brt_jit_env *env = st->env;
	bool any = false;

	if (!env->nlookups)
		return 0;
	st->prog->lookup_kind = calloc(st->n, 1);
	if (!st->prog->lookup_kind) {
		snprintf(st->err, st->errlen, "out of memory for %zu instructions", st->n);
		return -ENOMEM;
	}
	for (size_t pc = 0; pc < st->n; pc++) {
		const struct brt_jit_lookup *l;

		if (ops[pc] != BRT_OP_call_helper || st->insns[pc].imm != BPF_FUNC_map_lookup_elem)
			continue;
		l = find(env, pc);
		if (!l || !env->helper || env->helper(env->helper_arg, BPF_FUNC_map_lookup_elem) !=
					      l->helper)
			continue;
		st->prog->lookup_kind[pc] = kind_of(st, l);
		any |= st->prog->lookup_kind[pc] != 0;
	}
	if (!any) {
		free(st->prog->lookup_kind);
		st->prog->lookup_kind = NULL;
	}
	return 0;
}

bool brt_jit_is_bound(const struct jit_state *st, size_t pc)
{
	return st->prog->lookup_kind && st->prog->lookup_kind[pc];
}

const struct brt_jit_hash_layout *brt_jit_probe_layout(const struct jit_state *st, size_t pc)
{
	if (!st->prog->lookup_kind || LOOKUP_KIND(st->prog->lookup_kind[pc]) != BRT_JIT_LOOKUP_HASH)
		return NULL;
	return &find(st->env, pc)->hash;
}

static const struct jit_ckey *ckey_at(const struct jit_state *st, size_t pc)
{
	size_t lo = 0, hi = st->nckeys;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->ckeys[mid].pc == pc)
			return &st->ckeys[mid];
		if (st->ckeys[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Forward rel32 jumps inside the probe (its slow path can be beyond a rel8's reach). */
static size_t jcc32_fwd(struct jit_state *st, enum x86_cc cc)
{
	emit2(B, 0x0f, (uint8_t)(0x80 | cc));
	emit_u32(B, 0);
	return B->len;
}

static size_t jmp32_fwd(struct jit_state *st)
{
	emit1(B, 0xe9);
	emit_u32(B, 0);
	return B->len;
}

static void patch32_here(struct jit_state *st, size_t end)
{
	uint32_t d = (uint32_t)(B->len - end);

	memcpy(B->p + end - 4, &d, 4);
}

/* cmp reg, [base + off] (32 or 64 bit) */
static void cmp_reg_mem(struct jit_state *st, bool w, int reg, int base, int32_t off)
{
	emit_rex(B, w, reg, base, false);
	emit1(B, 0x3b);
	emit_modrm_mem(B, reg, base, off);
}

/* mov dst32, [base + index * 8 + disp8] */
static void load32_index8(struct jit_state *st, int dst, int base, int index, int8_t disp)
{
	emit1(B, (uint8_t)(0x40 | ((dst & 8) ? 4 : 0) | ((index & 8) ? 2 : 0) | ((base & 8) ? 1 : 0)));
	emit1(B, 0x8b);
	emit1(B, (uint8_t)(0x40 | ((dst & 7) << 3) | 4)); /* mod 01: disp8, rm 100: SIB */
	emit1(B, (uint8_t)(0xc0 | ((index & 7) << 3) | (base & 7))); /* scale 8 */
	emit1(B, (uint8_t)disp);
}

/* cmp [base + off], imm (32 or 64 bit; the immediate sign-extended to 64) */
static void cmp_mem_imm(struct jit_state *st, bool w, int base, int32_t off, int32_t imm)
{
	emit_rex(B, w, 0, base, false);
	emit1(B, is_imm8(imm) ? 0x83 : 0x81);
	emit_modrm_mem(B, ALU_CMP, base, off);
	if (is_imm8(imm))
		emit1(B, (uint8_t)(int8_t)imm);
	else
		emit_u32(B, (uint32_t)imm);
}

/* dst = the key's bytes [off, off + size) zero-extended (size 1, 2, 4, 8) */
static void load_key_part(struct jit_state *st, int dst, int base, int32_t off, unsigned size)
{
	emit_load(B, size, false, dst, base, off);
}

/*
 * A hash map's lookup with the bucket's chain probed inline (maps/hash.c's layout,
 * struct brt_hash_probe's rules): rax = the key's hash (util.h's BRT_KEYHASH steps, the
 * seed folded into the first constant), rcx = the element at hand, r11d = elements left
 * to follow.  An empty bucket or the end of a chain is NULL; an element whose sequence
 * word is even and unchanged around reading its hash and key, with both equal to ours, is
 * the key's: r0 = its value; one that is not ours, even and unchanged around reading its
 * hash and next, with a hash of our bucket (else it was recycled into another chain while
 * we reached it), leads to its next, as find_lockless() walks.  Anything else (a chain
 * longer than JIT_PROBE_CHAIN, a writer at work, an index out of range) calls the map's
 * lookup with r1 and r2 untouched.  x86-64 loads are not reordered with each other, so
 * plain loads give the seqlock its order.  Uses rax, rcx, rdx, r8-r11.
 */
static void emit_hash_probe(struct jit_state *st, const struct brt_jit_lookup *l)
{
	const struct brt_jit_hash_layout *h = &l->hash;
	const int key = xreg(st, BPF_REG_2);
	uint32_t tail = h->key_size % 8, words = h->key_size / 8;
	size_t slow[8], ns = 0, next[8], nn = 0, j_null, j_done[2], loop;
	const struct jit_ckey *ck = (st->prog->lookup_kind[l->insn] & LOOKUP_CONST_KEY)
					    ? ckey_at(st, l->insn)
					    : NULL;

	if (ck) { /* constkey: the bucket is known, rcx = its head index */
		emit_mov_imm64(B, R8, h->buckets + (uint64_t)(ck->hash & (h->n_buckets - 1)) *
							   h->bucket_size);
		emit_load(B, 4, false, RCX, R8, h->head_off);
		goto head;
	}
	emit_mov_imm64(B, RAX, (uint64_t)h->seed ^ (uint64_t)h->key_size * BRT_KEYHASH_LEN);
	for (uint32_t i = 0; i < words; i++) {
		load_key_part(st, RDX, key, (int32_t)(8 * i), 8);
		emit_alu_rr(B, ALU_XOR, true, RAX, RDX);
		emit_mov_imm64(B, RCX, BRT_KEYHASH_WORD);
		emit_imul_rr(B, true, RAX, RCX);
		emit_mov_rr(B, true, RDX, RAX);
		emit_shift_ri(B, SH_SHR, true, RDX, 32);
		emit_alu_rr(B, ALU_XOR, true, RAX, RDX);
	}
	if (tail) {
		load_key_part(st, RDX, key, (int32_t)(8 * words), tail);
		emit_alu_rr(B, ALU_XOR, true, RAX, RDX);
		emit_mov_imm64(B, RCX, BRT_KEYHASH_TAIL);
		emit_imul_rr(B, true, RAX, RCX);
	}
	emit_mov_rr(B, true, RDX, RAX);
	emit_shift_ri(B, SH_SHR, true, RDX, 29);
	emit_alu_rr(B, ALU_XOR, true, RAX, RDX);
	emit_mov_imm64(B, RCX, BRT_KEYHASH_FIN);
	emit_imul_rr(B, true, RAX, RCX);
	emit_mov_rr(B, true, RDX, RAX);
	emit_shift_ri(B, SH_SHR, true, RDX, 32);
	emit_alu_rr(B, ALU_XOR, false, RAX, RDX); /* eax = hash, upper half zero */

	/* rcx = bucket's head index: ecx = [buckets + (hash & mask) * bucket_size + head] */
	emit_mov_rr(B, false, RCX, RAX);
	emit_alu_ri(B, ALU_AND, false, RCX, (int32_t)(h->n_buckets - 1));
	if (h->bucket_size == 16)
		emit_alu_rr(B, ALU_ADD, true, RCX, RCX);
	emit_mov_imm64(B, R8, h->buckets);
	load32_index8(st, RCX, R8, RCX, h->head_off);
head:
	emit_mov_ri32(B, TMP, JIT_PROBE_CHAIN);
	loop = B->len;
	emit_rr(B, 0x85, false, RCX, RCX); /* test ecx, ecx: empty bucket, end of chain */
	j_null = jcc32_fwd(st, CC_E);
	/* index - 1 < n_elems, else the map's own lookup judges; checked beside the address
	 * computation, which does not wait for it */
	emit_lea(B, AUX, RCX, -1);
	if (h->n_elems_live) { /* a bound that grows (the map's populated elements) */
		emit_mov_imm64(B, R8, h->n_elems_live);
		cmp_reg_mem(st, false, AUX, R8, 0);
	} else {
		emit_alu_ri(B, ALU_CMP, false, AUX, (int32_t)h->n_elems);
	}
	slow[ns++] = jcc32_fwd(st, CC_AE);
	/* rcx = element: (elems - elem_size) + index * elem_size (a shift when it can) */
	if (!(h->elem_size & (h->elem_size - 1)))
		emit_shift_ri(B, SH_SHL, true, RCX, (uint8_t)__builtin_ctz(h->elem_size));
	else
		emit_imul_rri(B, true, RCX, RCX, (int32_t)h->elem_size);
	emit_mov_imm64(B, R8, h->elems - h->elem_size);
	emit_alu_rr(B, ALU_ADD, true, RCX, R8);
	/* r8d = sequence word: even, or a writer is at work */
	emit_load(B, 4, false, R8, RCX, h->seq_off);
	emit_test_ri(B, false, R8, 1);
	slow[ns++] = jcc32_fwd(st, CC_NE);
	if (ck)
		cmp_mem_imm(st, false, RCX, h->hash_off, (int32_t)ck->hash);
	else
		cmp_reg_mem(st, false, RAX, RCX, h->hash_off);
	next[nn++] = jcc32_fwd(st, CC_NE);
	for (uint32_t i = 0; i < words; i++) {
		int32_t off = h->key_off + (int32_t)(8 * i);
		uint64_t w;

		if (ck) {
			memcpy(&w, ck->key + 8 * i, 8);
			if (is_simm32((int64_t)w)) {
				cmp_mem_imm(st, true, RCX, off, (int32_t)w);
			} else {
				emit_mov_imm64(B, RDX, w);
				cmp_reg_mem(st, true, RDX, RCX, off);
			}
		} else {
			load_key_part(st, RDX, key, (int32_t)(8 * i), 8);
			cmp_reg_mem(st, true, RDX, RCX, off);
		}
		next[nn++] = jcc32_fwd(st, CC_NE);
	}
	if (tail) { /* the stored key's padding is not trusted: compare tail bytes only */
		load_key_part(st, R9, RCX, h->key_off + (int32_t)(8 * words), tail);
		if (ck) {
			emit_alu_ri(B, ALU_CMP, false, R9,
				    (int32_t)brt_keyhash_tail(ck->key + 8 * words, tail));
		} else {
			load_key_part(st, RDX, key, (int32_t)(8 * words), tail);
			emit_alu_rr(B, ALU_CMP, false, RDX, R9);
		}
		next[nn++] = jcc32_fwd(st, CC_NE);
	}
	cmp_reg_mem(st, false, R8, RCX, h->seq_off);
	slow[ns++] = jcc32_fwd(st, CC_NE);
	if (h->lru_clock) { /* touch(): stamp = clock++ (lock xadd), as the map's lookup */
		emit_mov_imm64(B, R8, h->lru_clock);
		emit_mov_ri32(B, RDX, 1);
		emit_rmw(B, true, true, 0xc1, false, R8, 0, RDX);
		emit_store_r(B, 4, RCX, h->stamp_off, RDX);
	}
	emit_lea(B, RAX, RCX, (int32_t)h->value_off);
	j_done[0] = jmp32_fwd(st);
	/* not ours: edx = its hash, r9d = its next, both read before the sequence word
	 * again; its hash must be of our bucket */
	for (size_t i = 0; i < nn; i++)
		patch32_here(st, next[i]);
	emit_load(B, 4, false, RDX, RCX, h->hash_off);
	emit_load(B, 4, false, R9, RCX, h->next_off);
	cmp_reg_mem(st, false, R8, RCX, h->seq_off);
	slow[ns++] = jcc32_fwd(st, CC_NE);
	if (ck)
		emit_alu_ri(B, ALU_XOR, false, RDX, (int32_t)ck->hash);
	else
		emit_alu_rr(B, ALU_XOR, false, RDX, RAX);
	emit_test_ri(B, false, RDX, (int32_t)(h->n_buckets - 1));
	slow[ns++] = jcc32_fwd(st, CC_NE);
	emit_mov_rr(B, false, RCX, R9);
	emit_alu_ri(B, ALU_SUB, false, TMP, 1);
	emit_jcc_rel(B, CC_NE, (int64_t)loop - (int64_t)(B->len + 2) >= -128, loop);
	for (size_t i = 0; i < ns; i++)
		patch32_here(st, slow[i]);
	brt_jit_emit_call(st, l->op);
	j_done[1] = jmp32_fwd(st);
	patch32_here(st, j_null);
	emit_alu_rr(B, ALU_XOR, false, RAX, RAX);
	patch32_here(st, j_done[0]);
	patch32_here(st, j_done[1]);
}

/* rax = rax * k (a shift when k is a power of two) */
static void mul_const(struct jit_state *st, int reg, uint32_t k)
{
	if (!(k & (k - 1)))
		emit_shift_ri(B, SH_SHL, true, reg, (uint8_t)__builtin_ctz(k));
	else
		emit_imul_rri(B, true, reg, reg, (int32_t)k);
}

/* mov ecx, fs:[off] (no base, no index: SIB 0x25) */
static void emit_load_fs_ecx(struct jit_state *st, int32_t off)
{
	emit1(B, 0x64);
	emit2(B, 0x8b, (uint8_t)(((RCX & 7) << 3) | 4));
	emit1(B, 0x25);
	emit_u32(B, (uint32_t)off);
}

/*
 * A per-CPU array's lookup: r0 = base + (index * ncpus + cpu) * stride, NULL from
 * max_entries on; cpu is brt_cpu_now()'s: the record's CPU the trace runner set
 * (brt_cpu_event, CPU + 1, 0 for none: minus 1 it is below ncpus only when set), else
 * this thread's CPU as glibc's rseq area has it (fs-relative, the number sched_getcpu()
 * returns, so brt_cpu() would give the same below ncpus); a CPU number of ncpus or more
 * (or the -1 of an unregistered area) calls the map's lookup, with r1 and r2 untouched.
 * Uses rax, rcx, r8.
 */
static void emit_percpu_array(struct jit_state *st, const struct brt_jit_lookup *l)
{
	size_t j_null, j_slow, j_done, j_done2, j_event;

	emit_load(B, 4, false, RAX, xreg(st, BPF_REG_2), 0);
	emit_alu_ri(B, ALU_CMP, false, RAX, (int32_t)l->max_entries);
	j_null = jcc32_fwd(st, CC_AE);
	emit_load_fs_ecx(st, (int32_t)brt_cpu_tls_off());
	emit_alu_ri(B, ALU_SUB, false, RCX, 1);
	emit_alu_ri(B, ALU_CMP, false, RCX, (int32_t)l->ncpus);
	j_event = emit_jcc8_fwd(B, CC_B);
	emit_load_fs_ecx(st, (int32_t)rseq_cpu_off());
	emit_alu_ri(B, ALU_CMP, false, RCX, (int32_t)l->ncpus);
	j_slow = jcc32_fwd(st, CC_AE);
	patch8_here(B, j_event);
	mul_const(st, RAX, l->stride * l->ncpus);
	mul_const(st, RCX, l->stride);
	emit_alu_rr(B, ALU_ADD, true, RAX, RCX);
	emit_mov_imm64(B, R8, l->base);
	emit_alu_rr(B, ALU_ADD, true, RAX, R8);
	j_done = jmp32_fwd(st);
	patch32_here(st, j_null);
	emit_alu_rr(B, ALU_XOR, false, RAX, RAX);
	j_done2 = jmp32_fwd(st);
	patch32_here(st, j_slow);
	brt_jit_emit_call(st, l->op);
	patch32_here(st, j_done);
	patch32_here(st, j_done2);
}

/* The verifier proved r1 is the bound map and r2 points at key_size readable bytes; r1-r5
 * are dead after the call, so only r0 (rax) and the scratch registers change. */
void brt_jit_emit_lookup(struct jit_state *st, size_t pc)
{
	const struct brt_jit_lookup *l = find(st->env, pc);
	size_t j_null, j_done;

	if (LOOKUP_KIND(st->prog->lookup_kind[pc]) == BRT_JIT_LOOKUP_HASH) {
		emit_hash_probe(st, l);
		return;
	}
	if (LOOKUP_KIND(st->prog->lookup_kind[pc]) == BRT_JIT_LOOKUP_PERCPU_ARRAY) {
		emit_percpu_array(st, l);
		return;
	}
	if (LOOKUP_KIND(st->prog->lookup_kind[pc]) == BRT_JIT_LOOKUP_OP) {
		brt_jit_emit_call(st, l->op);
		return;
	}
	/* r0 = *(u32 *)r2; if (r0 >= max_entries) r0 = 0; else r0 = base + r0 * stride */
	emit_load(B, 4, false, RAX, xreg(st, BPF_REG_2), 0);
	emit_alu_ri(B, ALU_CMP, false, RAX, (int32_t)l->max_entries);
	j_null = emit_jcc8_fwd(B, CC_AE);
	if (!(l->stride & (l->stride - 1)))
		emit_shift_ri(B, SH_SHL, true, RAX, (uint8_t)__builtin_ctz(l->stride));
	else
		emit_imul_rri(B, true, RAX, RAX, (int32_t)l->stride);
	if (is_simm32((int64_t)l->base)) {
		emit_alu_ri(B, ALU_ADD, true, RAX, (int32_t)l->base);
	} else {
		emit_mov_imm64(B, TMP, l->base);
		emit_alu_rr(B, ALU_ADD, true, RAX, TMP);
	}
	j_done = emit_jmp8_fwd(B);
	patch8_here(B, j_null);
	emit_alu_rr(B, ALU_XOR, false, RAX, RAX);
	patch8_here(B, j_done);
}
