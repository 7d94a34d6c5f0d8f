/* bounds.c - what the verifier knows about numbers: each scalar carries signed and
 * unsigned ranges at 64 and 32 bits plus a tnum, kept consistent with each other
 * (reg_bounds_sync).  ALU instructions transform them (conditional jumps narrow them in
 * branch.c); an ALU instruction on a pointer goes to ptr_alu.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verifier/internal.h"

static void mark_reg32_unbounded(struct brt_reg *r)
{
	r->s32_min = S32_MIN;
	r->s32_max = S32_MAX;
	r->u32_min = 0;
	r->u32_max = U32_MAX;
}

static void mark_reg64_unbounded(struct brt_reg *r)
{
	r->smin = INT64_MIN;
	r->smax = INT64_MAX;
	r->umin = 0;
	r->umax = UINT64_MAX;
}

static void update_reg32_bounds(struct brt_reg *r)
{
	struct tnum t = brt_tnum_subreg(r->var_off);

	r->s32_min = max_s32(r->s32_min, (int32_t)(uint32_t)(t.value | (t.mask & 0x80000000u)));
	r->s32_max = min_s32(r->s32_max, (int32_t)(uint32_t)(t.value | (t.mask & 0x7fffffffu)));
	r->u32_min = max_u32(r->u32_min, (uint32_t)t.value);
	r->u32_max = min_u32(r->u32_max, (uint32_t)(t.value | t.mask));
}

/* The smallest member of t above z (t's smallest if z is below it, t's largest if z is at
 * or above that): the kernel's tnum_step().  Members are value + s for s a submask of
 * mask; the one wanted is the smallest submask s >= e = z - value + 1.  When e has a bit
 * outside mask, the highest such bit h cannot be matched: fill every bit up to h and
 * every bit outside mask, add one, and the carry lands on the lowest mask bit above h
 * that e lacks, which exists because e <= mask. */
static uint64_t tnum_step(struct tnum t, uint64_t z)
{
	uint64_t tmax = t.value | t.mask, e, out, low;
	int h;

	if (z >= tmax)
		return tmax;
	if (z < t.value)
		return t.value;
	e = z - t.value + 1;
	out = e & ~t.mask;
	if (!out)
		return t.value | e;
	h = 63 - __builtin_clzll(out);
	low = h == 63 ? UINT64_MAX : (1ULL << (h + 1)) - 1;
	return t.value | (((e | low | ~t.mask) + 1) & t.mask);
}

static void set_known_bounds(struct brt_reg *r, uint64_t v)
{
	r->var_off = brt_tnum_const(v);
	r->smin = r->smax = (int64_t)v;
	r->umin = r->umax = v;
	r->s32_min = r->s32_max = (int32_t)(uint32_t)v;
	r->u32_min = r->u32_max = (uint32_t)v;
}

static void update_reg64_bounds(struct brt_reg *r)
{
	struct tnum t = r->var_off;
	uint64_t next, tmax = t.value | t.mask;
	int umin_in;

	r->smin = max_s64(r->smin, (int64_t)(t.value | (t.mask & (1ULL << 63))));
	r->smax = min_s64(r->smax, (int64_t)(t.value | (t.mask & ~(1ULL << 63))));
	r->umin = max_u64(r->umin, t.value);
	r->umax = min_u64(r->umax, tmax);
	/* the u64 range and the tnum share one value: the register is that constant (6.18's
	 * __update_reg64_bounds; `if w2 == 0` on var_off=(0x0; 0x200) leaves 512) */
	next = tnum_step(t, r->umin);
	umin_in = (r->umin & ~t.mask) == t.value;
	if (umin_in && next > r->umax)
		set_known_bounds(r, r->umin);
	else if (!umin_in && next == tmax)
		set_known_bounds(r, tmax);
	else if (!umin_in && next <= r->umax && tnum_step(t, next) > r->umax)
		set_known_bounds(r, next);
}

static void update_reg_bounds(struct brt_reg *r)
{
	update_reg32_bounds(r);
	update_reg64_bounds(r);
}

static void deduce32(struct brt_reg *r)
{
	if ((r->umin >> 32) == (r->umax >> 32)) {
		r->u32_min = max_u32(r->u32_min, (uint32_t)r->umin);
		r->u32_max = min_u32(r->u32_max, (uint32_t)r->umax);
		if ((int32_t)r->umin <= (int32_t)r->umax) {
			r->s32_min = max_s32(r->s32_min, (int32_t)r->umin);
			r->s32_max = min_s32(r->s32_max, (int32_t)r->umax);
		}
	}
	if ((r->smin >> 32) == (r->smax >> 32)) {
		if ((uint32_t)r->smin <= (uint32_t)r->smax) {
			r->u32_min = max_u32(r->u32_min, (uint32_t)r->smin);
			r->u32_max = min_u32(r->u32_max, (uint32_t)r->smax);
		}
		if ((int32_t)r->smin <= (int32_t)r->smax) {
			r->s32_min = max_s32(r->s32_min, (int32_t)r->smin);
			r->s32_max = min_s32(r->s32_max, (int32_t)r->smax);
		}
	}
	/* upper halves that are two consecutive numbers, the low half crossing zero */
	if ((uint32_t)(r->umin >> 32) + 1 == (uint32_t)(r->umax >> 32) && (int32_t)r->umin < 0 &&
	    (int32_t)r->umax >= 0) {
		r->s32_min = max_s32(r->s32_min, (int32_t)r->umin);
		r->s32_max = min_s32(r->s32_max, (int32_t)r->umax);
	}
	if ((uint32_t)((uint64_t)r->smin >> 32) + 1 == (uint32_t)((uint64_t)r->smax >> 32) &&
	    (int32_t)r->smin < 0 && (int32_t)r->smax >= 0) {
		r->s32_min = max_s32(r->s32_min, (int32_t)r->smin);
		r->s32_max = min_s32(r->s32_max, (int32_t)r->smax);
	}
	if ((int32_t)r->u32_min <= (int32_t)r->u32_max) {
		r->s32_min = max_s32(r->s32_min, (int32_t)r->u32_min);
		r->s32_max = min_s32(r->s32_max, (int32_t)r->u32_max);
	}
	if ((uint32_t)r->s32_min <= (uint32_t)r->s32_max) {
		r->u32_min = max_u32((uint32_t)r->s32_min, r->u32_min);
		r->u32_max = min_u32((uint32_t)r->s32_max, r->u32_max);
	}
}

static void deduce64(struct brt_reg *r)
{
	if ((int64_t)r->umin <= (int64_t)r->umax) {
		r->smin = max_s64(r->smin, (int64_t)r->umin);
		r->smax = min_s64(r->smax, (int64_t)r->umax);
	}
	if ((uint64_t)r->smin <= (uint64_t)r->smax) {
		r->umin = max_u64((uint64_t)r->smin, r->umin);
		r->umax = min_u64((uint64_t)r->smax, r->umax);
	} else if (r->umax < (uint64_t)r->smin) {
		/* the signed range wraps: the unsigned one says which half we are in */
		r->smin = (int64_t)r->umin;
		r->umax = min_u64(r->umax, (uint64_t)r->smax);
	} else if ((uint64_t)r->smax < r->umin) {
		r->smax = (int64_t)r->umax;
		r->umin = max_u64(r->umin, (uint64_t)r->smin);
	}
}

static void deduce_mixed(struct brt_reg *r)
{
	uint64_t nu_min = (r->umin & ~0xffffffffULL) | r->u32_min;
	uint64_t nu_max = (r->umax & ~0xffffffffULL) | r->u32_max;
	int64_t ns_min = (int64_t)(((uint64_t)r->smin & ~0xffffffffULL) | r->u32_min);
	int64_t ns_max = (int64_t)(((uint64_t)r->smax & ~0xffffffffULL) | r->u32_max);

	r->umin = max_u64(r->umin, nu_min);
	r->umax = min_u64(r->umax, nu_max);
	r->smin = max_s64(r->smin, ns_min);
	r->smax = min_s64(r->smax, ns_max);
	/* a sign-extended load leaves the upper half all zeros or all ones */
	if (r->s32_min >= 0 && r->smin >= S32_MIN && r->smax <= S32_MAX) {
		r->smin = r->s32_min;
		r->smax = r->s32_max;
		r->umin = (uint64_t)r->s32_min;
		r->umax = (uint64_t)r->s32_max;
		r->var_off = brt_tnum_intersect(r->var_off,
						brt_tnum_range((uint64_t)r->smin, (uint64_t)r->smax));
	}
}

static void deduce(struct brt_reg *r)
{
	deduce32(r);
	deduce64(r);
	deduce_mixed(r);
}

static void bound_offset(struct brt_reg *r)
{
	struct tnum v64 = brt_tnum_intersect(r->var_off, brt_tnum_range(r->umin, r->umax));
	struct tnum v32 = brt_tnum_intersect(brt_tnum_subreg(v64),
					     brt_tnum_range(r->u32_min, r->u32_max));

	r->var_off = brt_tnum_or(brt_tnum_clear_subreg(v64), v32);
}

void brt_reg_bounds_sync(struct brt_reg *reg)
{
	update_reg_bounds(reg);
	deduce(reg);
	deduce(reg);
	bound_offset(reg);
	update_reg_bounds(reg);
}

/* The 32-bit result of an ALU32 op becomes the whole register. */
void brt_zext_32_to_64(struct brt_reg *r)
{
	r->var_off = brt_tnum_subreg(r->var_off);
	r->umin = r->u32_min;
	r->umax = r->u32_max;
	if (r->s32_min >= 0) {
		r->smin = r->s32_min;
		r->smax = r->s32_max;
	} else {
		r->smin = 0;
		r->smax = U32_MAX;
	}
	r->umin = r->u32_min;
	r->umax = r->u32_max;
}

/* keep32: the 32-bit bounds stay as they were (the kernel's coerce_reg_to_size() at size
 * 4: the low half is the whole subregister), else they are the new 64-bit ones */
static void coerce_zext(struct brt_reg *r, int size, int keep32)
{
	uint64_t mask;

	r->var_off = brt_tnum_cast(r->var_off, (uint8_t)size);
	mask = size >= 8 ? UINT64_MAX : (1ULL << (size * 8)) - 1;
	if ((r->umin & ~mask) == (r->umax & ~mask)) {
		r->umin &= mask;
		r->umax &= mask;
	} else {
		r->umin = 0;
		r->umax = mask;
	}
	r->smin = (int64_t)r->umin;
	r->smax = (int64_t)r->umax;
	if (keep32) {
		/* nothing: reg_bounds_sync() below takes the 64-bit bounds from them */
	} else if (size < 4) {
		r->u32_min = (uint32_t)r->umin;
		r->u32_max = (uint32_t)r->umax;
		r->s32_min = (int32_t)r->u32_min;
		r->s32_max = (int32_t)r->u32_max;
	} else {
		mark_reg32_unbounded(r);
	}
	brt_reg_bounds_sync(r);
}

/* The kernel's coerce_reg_to_size() (a narrow load or fill, bswap16/32's truncation):
 * at size 4 the 32-bit bounds are kept, so a u32 fill of a spilled scalar whose low half
 * was bounded (umin32=6) keeps umin=6 (Cilium's conntrack test: bpfrt had made them
 * unbounded, a smin=0 the kernel does not print) */
void brt_coerce_reg_to_size(struct brt_reg *r, int size)
{
	coerce_zext(r, size, size == 4);
}

static int64_t sext(uint64_t v, int size)
{
	int sh = 64 - size * 8;

	return (int64_t)(v << sh) >> sh;
}

/* Sign-extending load or movsx: exact when the value is known or fits, else the full
 * signed range of the size. */
void brt_coerce_reg_to_size_sx(struct brt_reg *r, int size)
{
	int64_t lo = sext(0, size) - ((int64_t)1 << (size * 8 - 1)), hi = -lo - 1;

	if (brt_tnum_is_const(r->var_off)) {
		brt_mark_reg_known(r, (uint64_t)sext(r->var_off.value, size));
		return;
	}
	if (r->umax < (1ULL << (size * 8 - 1))) {
		/* no sign bit can be set: a plain zero-extension */
		coerce_zext(r, size, 0);
		return;
	}
	brt_mark_reg_unbounded(r);
	r->smin = lo;
	r->smax = hi;
	r->s32_min = (int32_t)lo;
	r->s32_max = (int32_t)hi;
	r->var_off = brt_tnum_unknown;
	if (size >= 4) {
		r->s32_min = S32_MIN;
		r->s32_max = S32_MAX;
	}
	brt_reg_bounds_sync(r);
}

void brt_coerce_subreg_to_size_sx(struct brt_reg *r, int size)
{
	int32_t lo = size == 1 ? -128 : -32768, hi = -lo - 1;

	if (brt_tnum_subreg_is_const(r->var_off)) {
		uint32_t v = (uint32_t)sext(r->var_off.value, size);

		r->var_off = brt_tnum_const(v);
		r->s32_min = r->s32_max = (int32_t)v;
		r->u32_min = r->u32_max = v;
		return;
	}
	mark_reg32_unbounded(r);
	r->s32_min = lo;
	r->s32_max = hi;
	if (r->u32_max < (1u << (size * 8 - 1))) {
		r->s32_min = 0;
		r->s32_max = (int32_t)((1u << (size * 8 - 1)) - 1);
	}
	r->var_off = brt_tnum_unknown;
	mark_reg64_unbounded(r);
}

/* ---- scalar ALU -------------------------------------------------------------------------- */
static void add32(struct brt_reg *d, const struct brt_reg *s)
{
	int32_t a, b;
	uint32_t c, e;
	int mino = __builtin_add_overflow(d->u32_min, s->u32_min, &c);
	int maxo = __builtin_add_overflow(d->u32_max, s->u32_max, &e);

	if (__builtin_add_overflow(d->s32_min, s->s32_min, &a) ||
	    __builtin_add_overflow(d->s32_max, s->s32_max, &b)) {
		d->s32_min = S32_MIN;
		d->s32_max = S32_MAX;
	} else {
		d->s32_min = a;
		d->s32_max = b;
	}
	d->u32_min = c;
	d->u32_max = e;
	if (!mino && maxo) {
		d->u32_min = 0;
		d->u32_max = U32_MAX;
	}
}

static void add64(struct brt_reg *d, const struct brt_reg *s)
{
	int64_t a, b;
	uint64_t c, e;
	int mino = __builtin_add_overflow(d->umin, s->umin, &c);
	int maxo = __builtin_add_overflow(d->umax, s->umax, &e);

	if (__builtin_add_overflow(d->smin, s->smin, &a) ||
	    __builtin_add_overflow(d->smax, s->smax, &b)) {
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else {
		d->smin = a;
		d->smax = b;
	}
	d->umin = c;
	d->umax = e;
	if (!mino && maxo) {
		d->umin = 0;
		d->umax = UINT64_MAX;
	}
}

static void sub32(struct brt_reg *d, const struct brt_reg *s)
{
	int32_t a, b;
	uint32_t c, e;
	int minu = __builtin_sub_overflow(d->u32_min, s->u32_max, &c);
	int maxu = __builtin_sub_overflow(d->u32_max, s->u32_min, &e);

	if (__builtin_sub_overflow(d->s32_min, s->s32_max, &a) ||
	    __builtin_sub_overflow(d->s32_max, s->s32_min, &b)) {
		d->s32_min = S32_MIN;
		d->s32_max = S32_MAX;
	} else {
		d->s32_min = a;
		d->s32_max = b;
	}
	d->u32_min = c;
	d->u32_max = e;
	if (minu && !maxu) {
		d->u32_min = 0;
		d->u32_max = U32_MAX;
	}
}

static void sub64(struct brt_reg *d, const struct brt_reg *s)
{
	int64_t a, b;
	uint64_t c, e;
	int minu = __builtin_sub_overflow(d->umin, s->umax, &c);
	int maxu = __builtin_sub_overflow(d->umax, s->umin, &e);

	if (__builtin_sub_overflow(d->smin, s->smax, &a) ||
	    __builtin_sub_overflow(d->smax, s->smin, &b)) {
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else {
		d->smin = a;
		d->smax = b;
	}
	d->umin = c;
	d->umax = e;
	if (minu && !maxu) {
		d->umin = 0;
		d->umax = UINT64_MAX;
	}
}

static void mul32(struct brt_reg *d, const struct brt_reg *s)
{
	int32_t p[4];
	uint32_t lo, hi;

	if (__builtin_mul_overflow(d->u32_max, s->u32_max, &hi) ||
	    __builtin_mul_overflow(d->u32_min, s->u32_min, &lo)) {
		d->u32_min = 0;
		d->u32_max = U32_MAX;
	} else {
		d->u32_min = lo;
		d->u32_max = hi;
	}
	if (__builtin_mul_overflow(d->s32_min, s->s32_min, &p[0]) ||
	    __builtin_mul_overflow(d->s32_min, s->s32_max, &p[1]) ||
	    __builtin_mul_overflow(d->s32_max, s->s32_min, &p[2]) ||
	    __builtin_mul_overflow(d->s32_max, s->s32_max, &p[3])) {
		d->s32_min = S32_MIN;
		d->s32_max = S32_MAX;
	} else {
		d->s32_min = min_s32(min_s32(p[0], p[1]), min_s32(p[2], p[3]));
		d->s32_max = max_s32(max_s32(p[0], p[1]), max_s32(p[2], p[3]));
	}
}

static void mul64(struct brt_reg *d, const struct brt_reg *s)
{
	int64_t p[4];
	uint64_t lo, hi;

	if (__builtin_mul_overflow(d->umax, s->umax, &hi) ||
	    __builtin_mul_overflow(d->umin, s->umin, &lo)) {
		d->umin = 0;
		d->umax = UINT64_MAX;
	} else {
		d->umin = lo;
		d->umax = hi;
	}
	if (__builtin_mul_overflow(d->smin, s->smin, &p[0]) ||
	    __builtin_mul_overflow(d->smin, s->smax, &p[1]) ||
	    __builtin_mul_overflow(d->smax, s->smin, &p[2]) ||
	    __builtin_mul_overflow(d->smax, s->smax, &p[3])) {
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	} else {
		d->smin = min_s64(min_s64(p[0], p[1]), min_s64(p[2], p[3]));
		d->smax = max_s64(max_s64(p[0], p[1]), max_s64(p[2], p[3]));
	}
}

static void known32(struct brt_reg *r, uint32_t v)
{
	r->var_off = brt_tnum_const_subreg(r->var_off, v);
	r->s32_min = r->s32_max = (int32_t)v;
	r->u32_min = r->u32_max = v;
}

/* and, or, xor at 32 bits: bounds from the already computed tnum */
static void bitop32(struct brt_reg *d, const struct brt_reg *s, int op)
{
	struct tnum t = brt_tnum_subreg(d->var_off);

	if (brt_tnum_subreg_is_const(s->var_off) && brt_tnum_subreg_is_const(d->var_off)) {
		known32(d, (uint32_t)t.value);
		return;
	}
	if (op == BPF_AND) {
		d->u32_min = (uint32_t)t.value;
		d->u32_max = min_u32(d->u32_max, s->u32_max);
	} else if (op == BPF_OR) {
		d->u32_min = max_u32(d->u32_min, s->u32_min);
		d->u32_max = (uint32_t)(t.value | t.mask);
	} else {
		d->u32_min = (uint32_t)t.value;
		d->u32_max = (uint32_t)(t.value | t.mask);
	}
	if ((int32_t)d->u32_min <= (int32_t)d->u32_max) {
		d->s32_min = (int32_t)d->u32_min;
		d->s32_max = (int32_t)d->u32_max;
	} else {
		d->s32_min = S32_MIN;
		d->s32_max = S32_MAX;
	}
}

static void bitop64(struct brt_reg *d, const struct brt_reg *s, int op)
{
	if (brt_tnum_is_const(s->var_off) && brt_tnum_is_const(d->var_off)) {
		brt_mark_reg_known(d, d->var_off.value);
		return;
	}
	if (op == BPF_AND) {
		d->umin = d->var_off.value;
		d->umax = min_u64(d->umax, s->umax);
	} else if (op == BPF_OR) {
		d->umin = max_u64(d->umin, s->umin);
		d->umax = d->var_off.value | d->var_off.mask;
	} else {
		d->umin = d->var_off.value;
		d->umax = d->var_off.value | d->var_off.mask;
	}
	if ((int64_t)d->umin <= (int64_t)d->umax) {
		d->smin = (int64_t)d->umin;
		d->smax = (int64_t)d->umax;
	} else {
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
	}
	update_reg_bounds(d);
}

static void shift32(struct brt_reg *d, int op, uint32_t k)
{
	struct tnum t = brt_tnum_subreg(d->var_off);

	switch (op) {
	case BPF_LSH:
		d->s32_min = S32_MIN;
		d->s32_max = S32_MAX;
		if (k > 31 || d->u32_max > 1ULL << (31 - k)) {
			d->u32_min = 0;
			d->u32_max = U32_MAX;
		} else {
			d->u32_min <<= k;
			d->u32_max <<= k;
		}
		d->var_off = brt_tnum_subreg(brt_tnum_lshift(t, (uint8_t)k));
		break;
	case BPF_RSH:
		d->s32_min = S32_MIN;
		d->s32_max = S32_MAX;
		d->var_off = brt_tnum_rshift(t, (uint8_t)k);
		d->u32_min >>= k;
		d->u32_max >>= k;
		break;
	default: /* BPF_ARSH */
		d->s32_min >>= k;
		d->s32_max >>= k;
		d->var_off = brt_tnum_subreg(brt_tnum_arshift(t, (uint8_t)k, 32));
		d->u32_min = 0;
		d->u32_max = U32_MAX;
		break;
	}
	mark_reg64_unbounded(d);
	update_reg32_bounds(d);
}

static void shift64(struct brt_reg *d, int op, uint32_t k)
{
	switch (op) {
	case BPF_LSH:
		/* <<32 (the compilers' sign extension, <<32 s>>32): the signed 32-bit bounds,
		 * shifted, bound the result, whatever their sign (6.18's
		 * __scalar64_min_max_lsh: the low half moves into the sign bit whole) */
		d->smax = k == 32 ? (int64_t)((uint64_t)(int64_t)d->s32_max << 32) : INT64_MAX;
		d->smin = k == 32 ? (int64_t)((uint64_t)(int64_t)d->s32_min << 32) : INT64_MIN;
		if (d->umax > 1ULL << (63 - k)) {
			d->umin = 0;
			d->umax = UINT64_MAX;
		} else {
			d->umin <<= k;
			d->umax <<= k;
		}
		d->var_off = brt_tnum_lshift(d->var_off, (uint8_t)k);
		break;
	case BPF_RSH:
		d->smin = INT64_MIN;
		d->smax = INT64_MAX;
		d->var_off = brt_tnum_rshift(d->var_off, (uint8_t)k);
		d->umin >>= k;
		d->umax >>= k;
		break;
	default:
		d->smin >>= k;
		d->smax >>= k;
		d->var_off = brt_tnum_arshift(d->var_off, (uint8_t)k, 64);
		d->umin = 0;
		d->umax = UINT64_MAX;
		break;
	}
	mark_reg32_unbounded(d);
	update_reg_bounds(d);
}

static int src_is_const(const struct brt_reg *s, int alu32)
{
	if (alu32)
		return brt_tnum_subreg_is_const(s->var_off) && s->s32_min == s->s32_max &&
		       s->u32_min == s->u32_max;
	return brt_tnum_is_const(s->var_off) && s->smin == s->smax && s->umin == s->umax;
}

static void scalar_alu(struct brt_env *env, const struct bpf_insn *insn, struct brt_reg *d,
		       struct brt_reg s)
{
	int op = BPF_OP(insn->code), alu32 = BPF_CLASS(insn->code) != BPF_ALU64;
	struct brt_reg old;

	switch (op) {
	case BPF_ADD:
	case BPF_SUB:
	case BPF_NEG:
	case BPF_AND:
	case BPF_OR:
	case BPF_XOR:
	case BPF_MUL:
		break;
	case BPF_LSH:
	case BPF_RSH:
	case BPF_ARSH:
		if (src_is_const(&s, alu32) && s.umax < (alu32 ? 32u : 64u))
			break;
		__attribute__((fallthrough)); /* unknown or oversized shift: result unknown */
	default:
		brt_mark_reg_unknown(env, d);
		return;
	}
	switch (op) {
	case BPF_ADD:
		add32(d, &s);
		add64(d, &s);
		d->var_off = brt_tnum_add(d->var_off, s.var_off);
		break;
	case BPF_SUB:
		sub32(d, &s);
		sub64(d, &s);
		d->var_off = brt_tnum_sub(d->var_off, s.var_off);
		break;
	case BPF_NEG:
		old = *d;
		brt_mark_reg_known(d, 0);
		sub32(d, &old);
		sub64(d, &old);
		d->var_off = brt_tnum_neg(old.var_off);
		break;
	case BPF_MUL:
		d->var_off = brt_tnum_mul(d->var_off, s.var_off);
		mul32(d, &s);
		mul64(d, &s);
		break;
	case BPF_AND:
		d->var_off = brt_tnum_and(d->var_off, s.var_off);
		bitop32(d, &s, op);
		bitop64(d, &s, op);
		break;
	case BPF_OR:
		d->var_off = brt_tnum_or(d->var_off, s.var_off);
		bitop32(d, &s, op);
		bitop64(d, &s, op);
		break;
	case BPF_XOR:
		d->var_off = brt_tnum_xor(d->var_off, s.var_off);
		bitop32(d, &s, op);
		bitop64(d, &s, op);
		break;
	default:
		if (alu32)
			shift32(d, op, (uint32_t)s.umin);
		else
			shift64(d, op, (uint32_t)s.umin);
		break;
	}
	if (alu32)
		brt_zext_32_to_64(d);
	/* the result is a new value: it is no longer a copy of anything */
	d->id = 0;
	d->off = 0;
	brt_reg_bounds_sync(d);
}

/* ---- ALU instructions ------------------------------------------------------------------- */
/* dst &= K or dst |= K where dst is 0 or -1 (a sign mask, r >>= 63 / w >>= 31 arithmetic):
 * the two values go separate ways, the result being K or 0 (or -1 and K): this path goes
 * on with -1, the other (pushed at this insn, the op done again) with 0 (6.18.44's
 * maybe_fork_scalars, with its BPF_OR fix: the branch reruns the op) */
static int fork_sign_mask(struct brt_env *env, const struct bpf_insn *insn, struct brt_reg *dst)
{
	struct brt_vstate *branch;
	struct brt_reg *breg;
	int alu32, err;

	if (dst->smin == -1 && dst->smax == 0)
		alu32 = 0;
	else if (dst->s32_min == -1 && dst->s32_max == 0)
		alu32 = 1;
	else
		return 0;
	err = brt_push_stack(env, env->insn_idx, env->insn_idx, &branch);
	if (err)
		return err;
	breg = &branch->frame[branch->curframe]->regs[insn->dst_reg];
	if (alu32) {
		known32(breg, 0);
		known32(dst, UINT32_MAX);
	} else {
		brt_mark_reg_known(breg, 0);
		brt_mark_reg_known(dst, UINT64_MAX);
	}
	return 0;
}

static int adjust_reg_min_max(struct brt_env *env, const struct bpf_insn *insn)
{
	struct brt_reg *regs = brt_cur_regs(env), *dst = &regs[insn->dst_reg], *src, off_reg;
	int op = BPF_OP(insn->code);

	if (BPF_SRC(insn->code) == BPF_X) {
		src = &regs[insn->src_reg];
		if (src->type != SCALAR_VALUE) {
			if (dst->type != SCALAR_VALUE) {
				if (op == BPF_SUB && env->allow_ptr_leaks) {
					brt_mark_reg_unknown(env, dst);
					return 0;
				}
				brt_verr(env, "R%d pointer %s pointer prohibited\n", insn->dst_reg,
					 brt_isa_alu_sym((uint8_t)op));
				return -EACCES;
			}
			/* scalar += pointer: the scalar's value becomes the pointer's offset */
			if (brt_mark_precise(env, insn->dst_reg))
				return -ENOMEM;
			return brt_ptr_alu(env, insn, src, dst);
		}
		if (dst->type != SCALAR_VALUE) {
			if (brt_mark_precise(env, insn->src_reg))
				return -ENOMEM;
			return brt_ptr_alu(env, insn, dst, src);
		}
	} else {
		memset(&off_reg, 0, sizeof(off_reg));
		off_reg.type = SCALAR_VALUE;
		brt_mark_reg_known(&off_reg, (uint64_t)(int64_t)insn->imm);
		src = &off_reg;
		if (dst->type != SCALAR_VALUE)
			return brt_ptr_alu(env, insn, dst, src);
	}
	if (brt_sanitize_val_alu(env, insn))
		return -EACCES;
	if ((op == BPF_AND || op == BPF_OR) && brt_tnum_is_const(src->var_off)) {
		int err = fork_sign_mask(env, insn, dst);

		if (err)
			return err;
	}
	uint32_t id = dst->id;
	uint64_t dst_umax = dst->umax;
	int alu32 = BPF_CLASS(insn->code) != BPF_ALU64;

	scalar_alu(env, insn, dst, *src);
	/* r1 = r2; r1 += K or r1 -= K (privileged): r1 stays linked to r2 at offset +-K, so a
	 * bounds check on either narrows both (the kernel's BPF_ADD_CONST64/32, in
	 * adjust_reg_min_max_vals, as 6.18.44 has it: negative offsets, BPF_SUB and 32-bit
	 * adds of a value below 2^32 too).  One offset only: a second add unlinks.  Not with
	 * r1 += r1, whose source changed with the add. */
	if (env->bpf_capable && (op == BPF_ADD || op == BPF_SUB) && id &&
	    !(BPF_SRC(insn->code) == BPF_X && insn->src_reg == insn->dst_reg) &&
	    (alu32 ? !(uint32_t)src->var_off.mask : brt_tnum_is_const(src->var_off))) {
		uint64_t val = alu32 ? (uint32_t)src->var_off.value : src->var_off.value;
		int32_t off = (int32_t)val;

		if (id & BRT_ADD_CONST)
			return 0;
		if (!alu32 && ((int64_t)val < INT32_MIN || (int64_t)val > INT32_MAX))
			return 0;
		if (alu32 && dst_umax > UINT32_MAX)
			return 0;
		if (op == BPF_SUB) {
			if (off == INT32_MIN)
				return 0;
			off = -off;
		}
		dst->id = id | (alu32 ? BRT_ADD_CONST32 : BRT_ADD_CONST64);
		dst->off = off;
	}
	return 0;
}

void brt_assign_scalar_id(struct brt_env *env, struct brt_reg *reg)
{
	if (reg->type != SCALAR_VALUE)
		return;
	if (reg->id & BRT_ADD_CONST) {
		reg->id = 0;
		reg->off = 0;
	}
	if (!reg->id && !brt_tnum_is_const(reg->var_off))
		reg->id = ++env->id_gen;
}

void brt_scalar_add_const(struct brt_reg *reg, int64_t delta, int zext)
{
	struct brt_reg k;

	memset(&k, 0, sizeof(k));
	k.type = SCALAR_VALUE;
	brt_mark_reg_known(&k, (uint64_t)delta);
	add32(reg, &k);
	add64(reg, &k);
	reg->var_off = brt_tnum_add(reg->var_off, k.var_off);
	if (zext)
		brt_zext_32_to_64(reg);
	brt_reg_bounds_sync(reg);
}

static int check_mov(struct brt_env *env, const struct bpf_insn *insn)
{
	struct brt_reg *regs = brt_cur_regs(env), *dst = &regs[insn->dst_reg];
	int alu64 = BPF_CLASS(insn->code) == BPF_ALU64, err;

	if (BPF_SRC(insn->code) == BPF_X) {
		int16_t off = insn->off;
		int bad = insn->imm || (off != 0 && off != 8 && off != 16 && (!alu64 || off != 32));

		if (bad) {
			brt_verr(env, "BPF_MOV uses reserved fields\n");
			return -EINVAL;
		}
		err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	} else if (insn->src_reg || insn->off) {
		brt_verr(env, "BPF_MOV uses reserved fields\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
	if (err)
		return err;
	if (BPF_SRC(insn->code) == BPF_K) {
		brt_mark_reg_unknown(env, dst);
		brt_mark_reg_known(dst, alu64 ? (uint64_t)(int64_t)insn->imm : (uint32_t)insn->imm);
		return 0;
	}
	struct brt_reg src = regs[insn->src_reg];

	if (alu64 && insn->off == 0) {
		/* copies share an id so a bounds check on one narrows the other */
		brt_assign_scalar_id(env, &regs[insn->src_reg]);
		*dst = regs[insn->src_reg];
		return 0;
	}
	/* a 32-bit or sign-extending copy of a scalar it leaves unchanged (it fits in 32
	 * bits, or below the sign bit of the width) is linked too, as the kernel's
	 * assign_scalar_id_before_mov() in check_alu_op() */
	if (src.type == SCALAR_VALUE &&
	    (insn->off ? src.umax < (1ULL << (insn->off - 1)) : src.umax <= UINT32_MAX)) {
		brt_assign_scalar_id(env, &regs[insn->src_reg]);
		src = regs[insn->src_reg];
	}
	if (brt_is_pointer_value(env, insn->src_reg)) {
		brt_verr(env, alu64 || insn->off ? "R%d sign-extension part of pointer\n"
						 : "R%d partial copy of pointer\n",
			 insn->src_reg);
		return -EACCES;
	}
	if (src.type != SCALAR_VALUE) {
		brt_mark_reg_unknown(env, dst);
	} else {
		*dst = src;
		if (insn->off ? src.umax >= (1ULL << (insn->off - 1)) : src.umax > UINT32_MAX) {
			dst->id = 0;
			dst->off = 0;
		}
		if (alu64)
			brt_coerce_reg_to_size_sx(dst, insn->off >> 3);
		else if (insn->off)
			brt_coerce_subreg_to_size_sx(dst, insn->off >> 3);
	}
	if (!alu64) {
		brt_zext_32_to_64(dst);
		brt_reg_bounds_sync(dst);
	}
	return 0;
}

static int check_neg_end(struct brt_env *env, const struct bpf_insn *insn)
{
	int op = BPF_OP(insn->code), err;
	struct brt_reg *dst = &brt_cur_regs(env)[insn->dst_reg];

	if (op == BPF_NEG) {
		if (BPF_SRC(insn->code) != BPF_K || insn->src_reg || insn->off || insn->imm) {
			brt_verr(env, "BPF_NEG uses reserved fields\n");
			return -EINVAL;
		}
	} else if (insn->src_reg || insn->off ||
		   (insn->imm != 16 && insn->imm != 32 && insn->imm != 64) ||
		   (BPF_CLASS(insn->code) == BPF_ALU64 && BPF_SRC(insn->code) != BPF_TO_LE)) {
		brt_verr(env, "BPF_END uses reserved fields\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if (brt_is_pointer_value(env, insn->dst_reg)) {
		brt_verr(env, "R%d pointer arithmetic prohibited\n", insn->dst_reg);
		return -EACCES;
	}
	if (op == BPF_NEG && dst->type == SCALAR_VALUE) {
		scalar_alu(env, insn, dst, *dst);
		return 0;
	}
	if (op == BPF_END && dst->type == SCALAR_VALUE) {
		/* the kernel's scalar_byte_swap(): bswap always swaps, to_be swaps on this
		 * little-endian host, to_le only truncates; the bounds follow the bits */
		if (BPF_CLASS(insn->code) == BPF_ALU64 || BPF_SRC(insn->code) == BPF_TO_BE) {
			dst->var_off = brt_tnum_bswap(dst->var_off, insn->imm);
			brt_mark_reg_unbounded(dst);
		}
		if (insn->imm == 16 || insn->imm == 32)
			brt_coerce_reg_to_size(dst, insn->imm / 8);
		/* a new value, no longer a copy of another register (unlike the kernel,
		 * which keeps the id here) */
		dst->id = 0;
		dst->off = 0;
		brt_reg_bounds_sync(dst);
		return 0;
	}
	return brt_check_reg_arg(env, insn->dst_reg, DST_OP);
}

int brt_check_alu(struct brt_env *env, const struct bpf_insn *insn)
{
	int op = BPF_OP(insn->code), err;

	if (op == BPF_NEG || op == BPF_END)
		return check_neg_end(env, insn);
	if (op == BPF_MOV)
		return check_mov(env, insn);
	if (BPF_SRC(insn->code) == BPF_X) {
		if (insn->imm || (insn->off != 0 && insn->off != 1) ||
		    (insn->off == 1 && op != BPF_MOD && op != BPF_DIV)) {
			brt_verr(env, "BPF_ALU uses reserved fields\n");
			return -EINVAL;
		}
		err = brt_check_reg_arg(env, insn->src_reg, SRC_OP);
		if (err)
			return err;
	} else if (insn->src_reg || (insn->off != 0 && insn->off != 1) ||
		   (insn->off == 1 && op != BPF_MOD && op != BPF_DIV)) {
		brt_verr(env, "BPF_ALU uses reserved fields\n");
		return -EINVAL;
	}
	err = brt_check_reg_arg(env, insn->dst_reg, SRC_OP);
	if (err)
		return err;
	if ((op == BPF_MOD || op == BPF_DIV) && BPF_SRC(insn->code) == BPF_K && insn->imm == 0) {
		brt_verr(env, "div by zero\n");
		return -EINVAL;
	}
	if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && BPF_SRC(insn->code) == BPF_K) {
		int size = BPF_CLASS(insn->code) == BPF_ALU64 ? 64 : 32;

		if (insn->imm < 0 || insn->imm >= size) {
			brt_verr(env, "invalid shift %d\n", insn->imm);
			return -EINVAL;
		}
	}
	err = brt_check_reg_arg(env, insn->dst_reg, DST_OP_NO_MARK);
	if (err)
		return err;
	return adjust_reg_min_max(env, insn);
}
