/* tnum.c - tristate numbers, the verifier's known-bits domain.
 *
 * A tnum (value; mask) stands for every 64-bit x with (x & ~mask) == value: bits set in mask
 * are unknown, the others are known and equal to the bit in value.  Invariant: value & mask
 * == 0.  Each operation returns a tnum containing every concrete result of the operation on
 * members of its inputs (tests/verifier/test_tnum.c checks this exhaustively at 6 bits).
 * Depends on nothing.
 */
#include <stdio.h>

#include "verifier/verifier.h"

const struct tnum brt_tnum_unknown = { .value = 0, .mask = UINT64_MAX };

struct tnum brt_tnum_const(uint64_t value)
{
	return (struct tnum){ .value = value, .mask = 0 };
}

struct tnum brt_tnum_range(uint64_t min, uint64_t max)
{
	uint64_t chi = min ^ max, delta;
	unsigned bits = 0;

	/* every bit below the highest bit where min and max differ may take any value */
	while (bits < 64 && (chi >> bits))
		bits++;
	if (bits > 63)
		return brt_tnum_unknown;
	delta = (1ULL << bits) - 1;
	return (struct tnum){ .value = min & ~delta, .mask = delta };
}

struct tnum brt_tnum_lshift(struct tnum a, uint8_t shift)
{
	return (struct tnum){ .value = a.value << shift, .mask = a.mask << shift };
}

struct tnum brt_tnum_rshift(struct tnum a, uint8_t shift)
{
	return (struct tnum){ .value = a.value >> shift, .mask = a.mask >> shift };
}

struct tnum brt_tnum_arshift(struct tnum a, uint8_t min_shift, uint8_t insn_bitness)
{
	/* a sign bit that is unknown (in mask) spreads as unknown; a known one as itself */
	if (insn_bitness == 32)
		return (struct tnum){ .value = (uint32_t)((int32_t)a.value >> min_shift),
				      .mask = (uint32_t)((int32_t)a.mask >> min_shift) };
	return (struct tnum){ .value = (uint64_t)((int64_t)a.value >> min_shift),
			      .mask = (uint64_t)((int64_t)a.mask >> min_shift) };
}

struct tnum brt_tnum_add(struct tnum a, struct tnum b)
{
	uint64_t sm = a.mask + b.mask, sv = a.value + b.value;
	uint64_t sigma = sm + sv;
	/* bits where a carry may or may not have propagated are unknown */
	uint64_t chi = sigma ^ sv;
	uint64_t mu = chi | a.mask | b.mask;

	return (struct tnum){ .value = sv & ~mu, .mask = mu };
}

struct tnum brt_tnum_sub(struct tnum a, struct tnum b)
{
	uint64_t dv = a.value - b.value;
	uint64_t alpha = dv + a.mask, beta = dv - b.mask;
	uint64_t chi = alpha ^ beta;
	uint64_t mu = chi | a.mask | b.mask;

	return (struct tnum){ .value = dv & ~mu, .mask = mu };
}

struct tnum brt_tnum_neg(struct tnum a)
{
	return brt_tnum_sub(brt_tnum_const(0), a);
}

struct tnum brt_tnum_and(struct tnum a, struct tnum b)
{
	uint64_t alpha = a.value | a.mask, beta = b.value | b.mask;
	uint64_t v = a.value & b.value;

	return (struct tnum){ .value = v, .mask = alpha & beta & ~v };
}

struct tnum brt_tnum_or(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask | b.mask;

	return (struct tnum){ .value = v, .mask = mu & ~v };
}

struct tnum brt_tnum_xor(struct tnum a, struct tnum b)
{
	uint64_t v = a.value ^ b.value, mu = a.mask | b.mask;

	return (struct tnum){ .value = v & ~mu, .mask = mu };
}

/* Long multiplication, one bit of a at a time: a known 1 adds b, an unknown bit adds
 * "b or nothing", which is b with all of b's set bits made unknown. */
struct tnum brt_tnum_mul(struct tnum a, struct tnum b)
{
	struct tnum acc_v = brt_tnum_const(a.value * b.value);
	struct tnum acc_m = brt_tnum_const(0);

	while (a.value || a.mask) {
		if (a.value & 1)
			acc_m = brt_tnum_add(acc_m, (struct tnum){ .value = 0, .mask = b.mask });
		else if (a.mask & 1)
			acc_m = brt_tnum_add(acc_m,
					 (struct tnum){ .value = 0, .mask = b.value | b.mask });
		a = brt_tnum_rshift(a, 1);
		b = brt_tnum_lshift(b, 1);
	}
	return brt_tnum_add(acc_v, acc_m);
}

struct tnum brt_tnum_intersect(struct tnum a, struct tnum b)
{
	uint64_t v = a.value | b.value, mu = a.mask & b.mask;

	return (struct tnum){ .value = v & ~mu, .mask = mu };
}

struct tnum brt_tnum_union(struct tnum a, struct tnum b)
{
	uint64_t mu = a.mask | b.mask | (a.value ^ b.value);

	return (struct tnum){ .value = a.value & ~mu, .mask = mu };
}

struct tnum brt_tnum_cast(struct tnum a, uint8_t size_bytes)
{
	uint64_t keep = size_bytes >= 8 ? UINT64_MAX : (1ULL << (size_bytes * 8)) - 1;

	return (struct tnum){ .value = a.value & keep, .mask = a.mask & keep };
}

int brt_tnum_is_const(struct tnum a)
{
	return a.mask == 0;
}

int brt_tnum_equals_const(struct tnum a, uint64_t b)
{
	return a.mask == 0 && a.value == b;
}

int brt_tnum_is_unknown(struct tnum a)
{
	return a.mask == UINT64_MAX;
}

int brt_tnum_is_aligned(struct tnum a, uint64_t size)
{
	if (!size)
		return 1;
	return ((a.value | a.mask) & (size - 1)) == 0;
}

int brt_tnum_overlap(struct tnum a, struct tnum b)
{
	uint64_t known = ~a.mask & ~b.mask;

	return (a.value & known) == (b.value & known);
}

int brt_tnum_in(struct tnum a, struct tnum b)
{
	/* b is inside a when a knows no bit that b leaves unknown, and they agree elsewhere */
	if (b.mask & ~a.mask)
		return 0;
	b.value &= ~a.mask;
	return a.value == b.value;
}

int brt_tnum_contains(struct tnum a, uint64_t x)
{
	return (x & ~a.mask) == a.value;
}

struct tnum brt_tnum_subreg(struct tnum a)
{
	return brt_tnum_cast(a, 4);
}

struct tnum brt_tnum_clear_subreg(struct tnum a)
{
	return brt_tnum_lshift(brt_tnum_rshift(a, 32), 32);
}

struct tnum brt_tnum_with_subreg(struct tnum reg, struct tnum subreg)
{
	return brt_tnum_or(brt_tnum_clear_subreg(reg), brt_tnum_subreg(subreg));
}

struct tnum brt_tnum_const_subreg(struct tnum a, uint32_t value)
{
	return brt_tnum_with_subreg(a, brt_tnum_const(value));
}

int brt_tnum_subreg_is_const(struct tnum a)
{
	return !(a.mask & UINT32_MAX);
}

/* The kernel prints "%#llx" as 0x0 for zero, unlike C libraries, so the prefix is spelled
 * out; a known value prints as a plain number, as 6.18 logs show ("off 0+0+-6"). */
int brt_tnum_strn(char *str, size_t size, struct tnum a)
{
	if (a.mask == 0)
		return snprintf(str, size, "%lld", (long long)a.value);
	return snprintf(str, size, "(0x%llx; 0x%llx)", (unsigned long long)a.value,
			(unsigned long long)a.mask);
}

/* The bytes of a (its low 16, 32 or all 64 bits) reversed: a known byte stays known. */
struct tnum brt_tnum_bswap(struct tnum a, int bits)
{
	if (bits == 16)
		return (struct tnum){ __builtin_bswap16((uint16_t)a.value),
				      __builtin_bswap16((uint16_t)a.mask) };
	if (bits == 32)
		return (struct tnum){ __builtin_bswap32((uint32_t)a.value),
				      __builtin_bswap32((uint32_t)a.mask) };
	return (struct tnum){ __builtin_bswap64(a.value), __builtin_bswap64(a.mask) };
}
