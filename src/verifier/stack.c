/* stack.c - the verifier's model of a frame's stack: each byte is never written, part of
 * a spilled register, data, or zero, so spilled pointers and scalar bounds come back on
 * fills and uninitialised reads are refused.  Fixed and variable offsets, helper accesses.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "verifier/internal.h"

static struct brt_frame *reg_frame(struct brt_env *env, const struct brt_reg *reg)
{
	return env->cur->frame[reg->frameno];
}

int brt_stack_within_bounds(struct brt_env *env, int regno, int off, int size,
			    enum brt_access t)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	struct brt_frame *f = reg_frame(env, reg);
	const char *extra = t == BRT_READ ? " read from" : " write to";
	int64_t min_off, max_off, min_valid;
	int err = 0;

	if (brt_tnum_is_const(reg->var_off)) {
		min_off = (int64_t)reg->var_off.value + off;
		max_off = min_off + size;
	} else {
		if (reg->smax >= BRT_MAX_VAR_OFF || reg->smin <= -BRT_MAX_VAR_OFF) {
			brt_verr(env, "invalid unbounded variable-offset%s stack R%d\n", extra, regno);
			return -EACCES;
		}
		min_off = reg->smin + off;
		max_off = reg->smax + off + size;
	}
	min_valid = (t == BRT_WRITE || env->allow_uninit_stack) ? -BRT_MAX_STACK
								: -f->allocated_stack;
	if (min_off < min_valid || min_off > -1)
		err = -EACCES;
	else if (max_off > 0 || size < 0)
		err = -EINVAL;
	if (err) {
		if (brt_tnum_is_const(reg->var_off)) {
			brt_verr(env, "invalid%s stack R%d off=%d size=%d\n", extra, regno, off, size);
		} else {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), reg->var_off);
			brt_verr(env, "invalid variable-offset%s stack R%d var_off=%s off=%d size=%d\n",
				 extra, regno, tn, off, size);
		}
		return err;
	}
	if (brt_grow_stack(f, (int)-min_off))
		return -ENOMEM;
	if (f->allocated_stack > env->subprogs[f->subprogno].stack_depth)
		env->subprogs[f->subprogno].stack_depth = f->allocated_stack;
	return 0;
}

static uint8_t *slot_type(struct brt_frame *f, int off)
{
	int slot = -off - 1;

	return &f->stack[slot / 8].type[slot % 8];
}

static int reg_width(const struct brt_reg *r)
{
	int w = 0;

	while (w < 64 && (r->umax >> w))
		w++;
	return w;
}

static void save_spill(struct brt_frame *f, int spi, const struct brt_reg *reg, int size)
{
	int i;

	f->stack[spi].spilled = *reg;
	for (i = 8; i > 8 - size; i--)
		f->stack[spi].type[i - 1] = STACK_SPILL;
	for (; i; i--) {
		uint8_t *t = &f->stack[spi].type[i - 1];

		if (*t != STACK_ZERO && *t != STACK_INVALID)
			*t = STACK_MISC;
	}
}

/* A slice of bpf_dynptr_slice() whose bytes may be in its stack buffer (brt_slice_buf())
 * dies, as an unknown scalar, when a store reaches any byte of that buffer: measured on
 * the running 6.18.44 (`buf=fp[0]-40+8` in its log; a store to fp-33 or fp-40 makes the
 * slice `scalar()`, one to fp-41 does not), a backport 6.18.19's source lacks.  Every
 * copy in every frame, registers and spills. */
static void slice_bufs_written(struct brt_env *env, int frameno, int64_t lo, int64_t hi)
{
	struct brt_vstate *st = env->cur;

	for (int fi = 0; fi <= st->curframe; fi++) {
		struct brt_frame *fr = st->frame[fi];

		for (int r = 0; r < BRT_NREGS; r++) {
			struct brt_reg *x = &fr->regs[r];

			if (brt_slice_buf_hit(x, frameno, lo, hi))
				brt_mark_reg_unknown(env, x);
		}
		for (int s = 0; s < fr->allocated_stack / 8; s++)
			if (brt_is_spilled(&fr->stack[s]) &&
			    brt_slice_buf_hit(&fr->stack[s].spilled, frameno, lo, hi))
				brt_mark_reg_unknown(env, &fr->stack[s].spilled);
	}
}

/* A data write (not a spill) into slot s: the slot's spill is gone, and when the slot
 * held a spill, an iterator or an irq flag (its lowest byte says so) every initialised
 * byte of it becomes data, zeroes included (the kernel's scrub_spilled_slot() over
 * is_stack_slot_special()); the caller then types the bytes written. */
static void data_write_scrub(struct brt_stack_slot *s)
{
	brt_mark_reg_not_init(&s->spilled);
	if (brt_is_spilled(s) || s->type[7] == STACK_ITER || s->type[7] == STACK_IRQ_FLAG) {
		for (int i = 0; i < 8; i++)
			if (s->type[i] != STACK_INVALID)
				s->type[i] = STACK_MISC;
	} else if (s->type[0] == STACK_SPILL) {
		for (int i = 0; i < 8; i++)
			if (s->type[i] == STACK_SPILL)
				s->type[i] = STACK_MISC;
	}
}

static int stack_write_fixed(struct brt_env *env, struct brt_frame *f, int off, int size,
			     int value_regno, const struct bpf_insn *insn)
{
	int slot = -off - 1, spi = slot / 8;
	struct brt_frame *cur = env->cur->frame[env->cur->curframe];
	struct brt_reg *reg = value_regno >= 0 ? &cur->regs[value_regno] : NULL;
	struct brt_stack_slot *s = &f->stack[spi];
	int is_st = BPF_CLASS(insn->code) == BPF_ST;

	if (!env->allow_ptr_leaks && brt_is_spilled(s) && s->spilled.type != SCALAR_VALUE &&
	    size != 8) {
		brt_verr(env, "attempt to corrupt spilled pointer on stack\n");
		return -EACCES;
	}
	/* Spectre v4 without CAP_PERFMON: a store that spills a pointer or overwrites bytes
	 * that are neither data nor zero gets a barrier after it (aux nospec_result).  Which
	 * bytes: the running 6.18.44 behaves as if it looks at those written (the 6.18.19
	 * source looks at the slot's first `size` type bytes; unpriv_oracle `20000 7`: equal
	 * processed counts on 887 of 898 with the written bytes, 872 with the first ones) */
	if (!env->bypass_spec_v1) {
		int sanitize = reg && brt_is_pointer(reg);

		for (int i = 0; i < size && !sanitize; i++)
			sanitize = s->type[(slot - i) % 8] != STACK_MISC &&
				   s->type[(slot - i) % 8] != STACK_ZERO;
		if (sanitize)
			env->aux[env->insn_idx].nospec_result = 1;
	}
	/* a write into a dynptr's slot destroys it first (dynptr.c) */
	{
		int err = brt_dynptr_destroy_slot(env, f, spi);

		if (err)
			return err;
	}
	env->scratched_stack |= 1ULL << (spi & 63);
	/* a whole slot written: dead before this insn (the kernel's liveness; a partial
	 * write leaves the rest of the slot as it was) */
	if (!(off % 8) && size == 8)
		brt_stack_mark_write(env, f->frameno, 1ULL << (spi & 63));
	/* the precision walk follows a value through the slot only where a register was
	 * spilled (the kernel records the access in its history for spills, not for data
	 * writes) */
	if ((reg && !(off % 8) && reg->type == SCALAR_VALUE && env->bpf_capable) ||
	    (!reg && !(off % 8) && is_st && env->bpf_capable) || (reg && brt_is_pointer(reg)))
		brt_hist_stack(env, f->frameno, spi);
	if (reg && !(off % 8) && reg->type == SCALAR_VALUE && env->bpf_capable) {
		int fits = reg_width(reg) <= 8 * size;

		if (fits)
			brt_assign_scalar_id(env, reg);
		save_spill(f, spi, reg, size);
		if (!fits)
			s->spilled.id = 0;
	} else if (!reg && !(off % 8) && is_st && env->bpf_capable) {
		struct brt_reg fake;

		brt_mark_reg_unknown(env, &fake);
		brt_mark_reg_known(&fake, (uint64_t)(int64_t)insn->imm);
		save_spill(f, spi, &fake, size);
	} else if (reg && brt_is_pointer(reg)) {
		if (size != 8) {
			brt_verr(env, "invalid size of register spill\n");
			return -EACCES;
		}
		if (f != cur && reg->type == PTR_TO_STACK) {
			brt_verr(env, "cannot spill pointers to stack into stack frame of the caller\n");
			return -EINVAL;
		}
		save_spill(f, spi, reg, size);
	} else {
		uint8_t type = STACK_MISC;

		data_write_scrub(s);
		if ((reg && brt_reg_is_null(reg)) || (!reg && is_st && insn->imm == 0)) {
			/* the slot now says "zero": the register's value was relied on */
			int err = reg ? brt_mark_precise(env, value_regno) : 0;

			if (err)
				return err;
			type = STACK_ZERO;
		}
		for (int i = 0; i < size; i++)
			s->type[(slot - i) % 8] = type;
	}
	return 0;
}

static int stack_write_var(struct brt_env *env, struct brt_frame *f, int regno, int off, int size,
			   int value_regno, int insn_idx)
{
	const struct brt_reg *ptr = &brt_cur_regs(env)[regno];
	int64_t min_off = ptr->smin + off, max_off = ptr->smax + off + size;
	const struct brt_reg *val = value_regno >= 0 ? &brt_cur_regs(env)[value_regno] : NULL;
	int zero = val ? brt_reg_is_null(val) : env->insns[insn_idx].imm == 0;

	/* every dynptr the write may touch is destroyed first (dynptr.c) */
	for (int64_t i = min_off; i < max_off; i++) {
		int err = brt_dynptr_destroy_slot(env, f, (int)((-i - 1) / 8));

		if (err)
			return err;
	}
	for (int64_t i = min_off; i < max_off; i++) {
		int slot = (int)(-i - 1), spi = slot / 8;
		uint8_t *t = &f->stack[spi].type[slot % 8];

		/* every slot the write may reach shows in the log's state (the kernel's
		 * check_stack_write_var_off scratches them) */
		env->scratched_stack |= 1ULL << (spi & 63);
		if (!env->allow_ptr_leaks && *t != STACK_MISC && *t != STACK_ZERO) {
			brt_verr(env, "spilled ptr in range of var-offset stack write; insn %d, ptr "
				      "off: %d",
				 insn_idx, (int)i);
			return -EINVAL;
		}
		brt_mark_reg_not_init(&f->stack[spi].spilled);
		if (*t == STACK_INVALID && !env->allow_uninit_stack) {
			brt_verr(env, "uninit stack in range of var-offset write prohibited for "
				      "!root; insn %d, off: %d",
				 insn_idx, (int)i);
			return -EINVAL;
		}
		*t = zero && *t == STACK_ZERO ? STACK_ZERO : STACK_MISC;
	}
	if (zero && val)
		return brt_mark_precise(env, value_regno);
	return 0;
}

/* A read of data bytes [min, max): zero when all are STACK_ZERO, else unknown.  The slots
 * up to the first non-zero byte show in the log's state, as the kernel's
 * mark_reg_stack_read() scratches them. */
static void stack_read_result(struct brt_env *env, struct brt_frame *f, int min, int max,
			      int dst)
{
	int zeros = 0;
	struct brt_reg *r = &brt_cur_regs(env)[dst];

	for (int i = min; i < max; i++) {
		env->scratched_stack |= 1ULL << (((-i - 1) / 8) & 63);
		if (*slot_type(f, i) != STACK_ZERO)
			break;
		zeros++;
	}
	brt_mark_reg_unknown(env, r);
	if (zeros == max - min)
		brt_mark_reg_known(r, 0);
}

/* A read of frame f's slots is recorded at each level of the call chain from f to the
 * current frame: at the current insn, and at each call insn on the way (the read happens
 * inside that call), as a read of the frame d levels up from that insn's frame (d = 0:
 * f's own call insn, aux.stack_read; d > 0: stack_up).  A caller frame's slot is then live
 * where the rest of the callee or what follows some call on the chain may read it (the
 * kernel's call chain instances in liveness.c, with every chain of a subprogram joined). */
static uint64_t slots_of(int64_t lo, int64_t hi)
{
	uint64_t mask = 0;

	for (int64_t i = lo; i < hi; i++)
		if (i < 0 && i >= -BRT_MAX_STACK)
			mask |= 1ULL << ((-i - 1) / 8);
	return mask;
}

static void record_read(struct brt_env *env, const struct brt_frame *f, uint64_t mask)
{
	const struct brt_vstate *st = env->cur;

	if (f->frameno < 0 || f->frameno > st->curframe || !mask)
		return;
	for (int g = f->frameno; g <= st->curframe; g++) {
		int d = g - f->frameno, at = g == st->curframe ? env->insn_idx : st->frame[g + 1]->callsite;
		uint64_t *rd;

		if (at < 0 || at >= env->len)
			continue;
		if (d == 0) {
			rd = &env->aux[at].stack_read;
		} else {
			if (!env->stack_up) {
				env->stack_up = calloc((size_t)env->len, sizeof(*env->stack_up));
				if (!env->stack_up) { /* unrecorded reads: the walk must stop */
					env->internal_err = -ENOMEM;
					return;
				}
			}
			rd = &env->stack_up[at].read[d - 1];
		}
		if ((*rd | mask) != *rd) {
			*rd |= mask;
			env->stack_live_dirty = 1;
		}
	}
}

void brt_stack_mark_read(struct brt_env *env, const struct brt_frame *f, int64_t lo, int64_t hi)
{
	uint64_t mask = slots_of(lo, hi);

	record_read(env, f, mask);
	brt_live_log_read(env, f->frameno, mask);
}

/* The kernel's must_write (liveness.c): a slot an insn writes whole on every visit is dead
 * before it unless the insn also reads it.  Only the insn's own frame is recorded: a
 * callee's writes into a caller's slots do not kill them here (the kernel passes them up
 * through the call insn; without it a slot stays live longer, which prunes less, never
 * wrongly). */
void brt_stack_mark_write(struct brt_env *env, int frame, uint64_t mask)
{
	if (env->stack_write_insn >= 0 && frame == env->cur->curframe)
		env->stack_write_acc |= mask;
	brt_live_log_write(env, frame, mask);
}

void brt_stack_writes_start(struct brt_env *env)
{
	env->stack_write_insn = env->insn_idx;
	env->stack_write_acc = 0;
	brt_live_log_insn_start(env);
}

void brt_stack_writes_commit(struct brt_env *env)
{
	struct brt_insn_aux *a;
	uint64_t mask = env->stack_write_acc;

	brt_live_log_insn_commit(env);
	if (env->stack_write_insn < 0 || env->stack_write_insn >= env->len)
		return;
	a = &env->aux[env->stack_write_insn];
	env->stack_write_insn = -1;
	/* seen before: only what every visit wrote (all 64 slots: 6.18.19's
	 * commit_stack_write_marks() held the old mask in a u32 and lost the slots below
	 * fp-256 on a second visit; the 6.18.44 kernel keeps them, verifier.stack_live_oracle) */
	if (a->stack_write_set)
		mask &= a->stack_write;
	if (!a->stack_write_set || mask != a->stack_write)
		env->stack_live_dirty = 1;
	a->stack_write = mask;
	a->stack_write_set = 1;
}

static int stack_read_fixed(struct brt_env *env, struct brt_frame *f, int off, int size, int dst)
{
	int slot = -off - 1, spi = slot / 8;
	struct brt_stack_slot *s = &f->stack[spi];
	struct brt_reg *regs = brt_cur_regs(env);

	env->scratched_stack |= 1ULL << (spi & 63);
	record_read(env, f, slots_of(off, off + size));
	/* the kernel's liveness marks the slot of the lowest byte only */
	brt_live_log_read(env, f->frameno, 1ULL << (spi & 63));
	/* only a fill restores a register (the kernel's history records those reads, not
	 * reads of data bytes): the walk goes on through the slot from there */
	if (brt_is_spilled(s)) {
		int spill_size = 1;

		for (int i = 7; i > 0 && s->type[i - 1] == STACK_SPILL; i--)
			spill_size++;
		if (size != 8 || spill_size != 8) {
			if (s->spilled.type != SCALAR_VALUE) {
				brt_verr(env, "invalid size of register fill\n");
				return -EACCES;
			}
			if (dst < 0)
				return 0;
			/* narrow fill of the low bytes of a spilled scalar */
			if (size <= spill_size && !(off % 8)) {
				brt_hist_stack(env, f->frameno, spi);
				regs[dst] = s->spilled;
				if (reg_width(&s->spilled) > size * 8)
					regs[dst].id = 0;
				return 0;
			}
			int spills = 0, zeros = 0;

			for (int i = 0; i < size; i++) {
				uint8_t t = s->type[(slot - i) % 8];

				if (t == STACK_SPILL) {
					spills++;
					continue;
				}
				if (t == STACK_MISC)
					continue;
				if (t == STACK_ZERO) {
					zeros++;
					continue;
				}
				if (t == STACK_INVALID && env->allow_uninit_stack)
					continue;
				brt_verr(env, "invalid read from stack off %d+%d size %d\n", off, i, size);
				return -EACCES;
			}
			brt_mark_reg_unknown(env, &regs[dst]);
			if (spills == size && brt_tnum_equals_const(s->spilled.var_off, 0)) {
				brt_hist_stack(env, f->frameno, spi);
				brt_mark_reg_known(&regs[dst], 0);
			} else if (zeros == size) {
				brt_mark_reg_known(&regs[dst], 0);
			}
			return 0;
		}
		brt_hist_stack(env, f->frameno, spi);
		if (dst >= 0) {
			regs[dst] = s->spilled;
		} else if (!env->allow_ptr_leaks && brt_is_pointer(&s->spilled)) {
			brt_verr(env, "leaking pointer from stack off %d\n", off);
			return -EACCES;
		}
		return 0;
	}
	for (int i = 0; i < size; i++) {
		uint8_t t = s->type[(slot - i) % 8];

		if (t == STACK_MISC || t == STACK_ZERO ||
		    (t == STACK_INVALID && env->allow_uninit_stack))
			continue;
		brt_verr(env, "invalid read from stack off %d+%d size %d\n", off, i, size);
		return -EACCES;
	}
	if (dst >= 0)
		stack_read_result(env, f, off, off + size, dst);
	return 0;
}

/* Helper access and variable-offset reads: every byte must be initialised (or uninit
 * reads allowed); raw (write-only) helper memory just becomes data. */
int brt_stack_range_init(struct brt_env *env, int regno, int off, int size, int raw)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	struct brt_frame *f = reg_frame(env, reg);
	int64_t min_off, max_off;
	int clobber = raw == BRT_STACK_CLOBBER;

	if (clobber)
		raw = 0;
	if (brt_tnum_is_const(reg->var_off)) {
		min_off = max_off = (int64_t)reg->var_off.value + off;
	} else {
		if (!env->bypass_spec_v1) {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), reg->var_off);
			brt_verr(env, "R%d variable offset stack access prohibited for !root, "
				      "var_off=%s\n",
				 regno, tn);
			return -EACCES;
		}
		min_off = reg->smin + off;
		max_off = reg->smax + off;
		if (raw) { /* the kernel drops raw mode here: the write clobbers instead */
			raw = 0;
			clobber = 1;
		}
	}
	if (!raw)
		brt_stack_mark_read(env, f, min_off, max_off + size);
	else if (brt_dynptr_raw_overlap(env, f, min_off, max_off + size))
		return -EACCES;
	for (int64_t i = min_off; i < max_off + size; i++) {
		int slot = (int)(-i - 1), spi = slot / 8;
		uint8_t *t;

		if (f->allocated_stack <= slot) {
			brt_verr(env, "allocated_stack too small\n");
			return -EFAULT;
		}
		t = &f->stack[spi].type[slot % 8];
		if (raw) {
			/* the kernel writes the helper's bytes one by one, and a 1-byte
			 * write into a spilled pointer is refused without CAP_PERFMON */
			if (!env->allow_ptr_leaks && brt_is_spilled(&f->stack[spi]) &&
			    f->stack[spi].spilled.type != SCALAR_VALUE) {
				brt_verr(env, "attempt to corrupt spilled pointer on stack\n");
				return -EACCES;
			}
			/* each byte is a 1-byte store for the kernel (check_helper_call's
			 * raw-mode loop), with stack_write_fixed's barrier rule */
			if (!env->bypass_spec_v1 && *t != STACK_MISC && *t != STACK_ZERO)
				env->aux[env->insn_idx].nospec_result = 1;
			data_write_scrub(&f->stack[spi]);
			*t = STACK_MISC;
			env->scratched_stack |= 1ULL << (spi & 63);
			continue;
		}
		if (*t == STACK_MISC)
			continue;
		if (*t == STACK_ZERO || (*t == STACK_INVALID && env->allow_uninit_stack)) {
			if (clobber)
				*t = STACK_MISC;
			continue;
		}
		if (brt_is_spilled(&f->stack[spi]) &&
		    (f->stack[spi].spilled.type == SCALAR_VALUE || env->allow_ptr_leaks)) {
			if (clobber) {
				brt_mark_reg_unknown(env, &f->stack[spi].spilled);
				for (int j = 0; j < 8; j++)
					if (f->stack[spi].type[j] != STACK_INVALID)
						f->stack[spi].type[j] = STACK_MISC;
			}
			continue;
		}
		if (brt_tnum_is_const(reg->var_off)) {
			brt_verr(env, "invalid read from stack R%d off %d+%d size %d\n", regno,
				 (int)min_off, (int)(i - min_off), size);
		} else {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), reg->var_off);
			brt_verr(env, "invalid read from stack R%d var_off %s+%d size %d\n", regno, tn,
				 (int)(i - min_off), size);
		}
		return -EACCES;
	}
	return 0;
}

int brt_check_stack_access(struct brt_env *env, int regno, int off, int size,
			   enum brt_access t, int value_regno, int insn_idx)
{
	const struct brt_reg *reg = &brt_cur_regs(env)[regno];
	struct brt_frame *f = reg_frame(env, reg);
	int err = brt_stack_within_bounds(env, regno, off, size, t);

	if (err)
		return err;
	if (t == BRT_READ) {
		if (brt_tnum_is_const(reg->var_off))
			return stack_read_fixed(env, f, off + (int)reg->var_off.value, size,
						value_regno);
		if (value_regno < 0) {
			char tn[48];

			brt_tnum_strn(tn, sizeof(tn), reg->var_off);
			brt_verr(env, "variable offset stack pointer cannot be passed into helper "
				      "function; var_off=%s off=%d size=%d\n",
				 tn, off, size);
			return -EACCES;
		}
		err = brt_stack_range_init(env, regno, off, size, 0);
		if (!err) /* the kernel's check_stack_read_var_off(): zero if every byte is */
			stack_read_result(env, f, (int)(reg->smin + off),
					  (int)(reg->smax + off + size), value_regno);
		return err;
	}
	{
		int64_t lo = brt_tnum_is_const(reg->var_off) ? off + (int64_t)reg->var_off.value
							    : reg->smin + off;
		int64_t hi = brt_tnum_is_const(reg->var_off) ? lo + size : reg->smax + off + size;
		int fno = reg->frameno;

		if (brt_tnum_is_const(reg->var_off))
			err = stack_write_fixed(env, f, (int)lo, size, value_regno,
						&env->insns[insn_idx]);
		else
			err = stack_write_var(env, f, regno, off, size, value_regno, insn_idx);
		if (!err)
			slice_bufs_written(env, fno, lo, hi);
		return err;
	}
}
