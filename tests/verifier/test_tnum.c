/* test_tnum.c - exhaustive soundness of the known-bits domain at 6 bits: for every pair
 * of 6-bit tnums (3^6 each), every concrete result of each operation on members of the
 * inputs must be a member of the abstract result.  Plus exact checks of a few results.
 */
#include "harness.h"
#include "verifier/verifier.h"

#define BITS 6
#define NT 729 /* 3^6 */

static struct tnum all[NT];

static void build_all(void)
{
	for (int i = 0; i < NT; i++) {
		uint64_t v = 0, m = 0;
		int k = i;

		for (int b = 0; b < BITS; b++, k /= 3) {
			if (k % 3 == 1)
				v |= 1ULL << b;
			else if (k % 3 == 2)
				m |= 1ULL << b;
		}
		all[i] = (struct tnum){ v, m };
	}
}

/* Members of a 6-bit tnum, zero-extended (sext: bit 5 copied into bits 6..63). */
static int members(struct tnum t, int sext, uint64_t *out)
{
	int n = 0;

	for (uint64_t x = 0; x < (1u << BITS); x++) {
		if ((x & ~t.mask) != t.value)
			continue;
		out[n++] = sext && (x & 0x20) ? x | ~0x3fULL : x;
	}
	return n;
}

static struct tnum widen(struct tnum t, int sext)
{
	if (!sext)
		return t;
	if (t.mask & 0x20)
		t.mask |= ~0x3fULL;
	else if (t.value & 0x20)
		t.value |= ~0x3fULL;
	return t;
}

enum { OP_ADD, OP_SUB, OP_MUL, OP_AND, OP_OR, OP_XOR, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "add", "sub", "mul", "and", "or", "xor" };

static struct tnum abstract(int op, struct tnum a, struct tnum b)
{
	switch (op) {
	case OP_ADD: return brt_tnum_add(a, b);
	case OP_SUB: return brt_tnum_sub(a, b);
	case OP_MUL: return brt_tnum_mul(a, b);
	case OP_AND: return brt_tnum_and(a, b);
	case OP_OR: return brt_tnum_or(a, b);
	default: return brt_tnum_xor(a, b);
	}
}

static uint64_t concrete(int op, uint64_t x, uint64_t y)
{
	switch (op) {
	case OP_ADD: return x + y;
	case OP_SUB: return x - y;
	case OP_MUL: return x * y;
	case OP_AND: return x & y;
	case OP_OR: return x | y;
	default: return x ^ y;
	}
}

static void check_binary(int sext)
{
	static uint64_t ma[64], mb[64];

	for (int op = 0; op < OP_COUNT; op++) {
		long bad = 0;

		T_CASE(op_names[op]);
		for (int i = 0; i < NT; i++) {
			struct tnum a = widen(all[i], sext);
			int na = members(all[i], sext, ma);

			for (int j = 0; j < NT; j++) {
				struct tnum b = widen(all[j], sext);
				struct tnum r = abstract(op, a, b);
				int nb = members(all[j], sext, mb);

				if (r.value & r.mask)
					bad++;
				for (int x = 0; x < na; x++)
					for (int y = 0; y < nb; y++)
						if (!brt_tnum_contains(r, concrete(op, ma[x], mb[y])))
							bad++;
			}
		}
		T_EQ_INT(0, bad);
	}
}

static void check_shifts(void)
{
	static uint64_t m[64];
	long bad = 0;

	T_CASE("shifts");
	for (int sext = 0; sext < 2; sext++)
		for (int i = 0; i < NT; i++) {
			struct tnum a = widen(all[i], sext);
			int n = members(all[i], sext, m);

			for (uint8_t k = 0; k < 64; k++) {
				struct tnum l = brt_tnum_lshift(a, k), r = brt_tnum_rshift(a, k);
				struct tnum s = brt_tnum_arshift(a, k, 64);

				for (int x = 0; x < n; x++) {
					bad += !brt_tnum_contains(l, m[x] << k);
					bad += !brt_tnum_contains(r, m[x] >> k);
					bad += !brt_tnum_contains(s, (uint64_t)((int64_t)m[x] >> k));
					if (k < 32) {
						struct tnum s32 = brt_tnum_arshift(brt_tnum_cast(a, 4), k, 32);
						uint32_t v = (uint32_t)((int32_t)(uint32_t)m[x] >> k);

						bad += !brt_tnum_contains(s32, v);
					}
				}
			}
		}
	T_EQ_INT(0, bad);
}

static void check_set_ops(void)
{
	static uint64_t ma[64];
	long bad = 0;

	T_CASE("union/intersect/in/range/cast/neg");
	for (int i = 0; i < NT; i++) {
		int na = members(all[i], 1, ma);
		struct tnum a = widen(all[i], 1);
		struct tnum ng = brt_tnum_neg(a);

		for (int x = 0; x < na; x++) {
			bad += !brt_tnum_contains(ng, -ma[x]);
			bad += !brt_tnum_contains(brt_tnum_cast(a, 1), (uint8_t)ma[x]);
			bad += !brt_tnum_contains(brt_tnum_cast(a, 4), (uint32_t)ma[x]);
		}
		for (int j = 0; j < NT; j++) {
			struct tnum b = all[j], u = brt_tnum_union(all[i], b);
			int in = 1;
			static uint64_t mb[64];
			int nb = members(b, 0, mb);

			for (int y = 0; y < nb; y++) {
				bad += !brt_tnum_contains(u, mb[y]);
				in &= brt_tnum_contains(all[i], mb[y]);
			}
			for (int x = 0; x < (1 << BITS); x++)
				bad += brt_tnum_contains(all[i], (uint64_t)x) &&
				       !brt_tnum_contains(u, (uint64_t)x);
			/* brt_tnum_in must be exact: b inside a iff every member of b is in a */
			bad += brt_tnum_in(all[i], b) != in;
			/* intersect, when they overlap, keeps every common member */
			struct tnum is = brt_tnum_intersect(all[i], b);
			for (int y = 0; y < nb; y++)
				bad += brt_tnum_contains(all[i], mb[y]) && !brt_tnum_contains(is, mb[y]);
		}
	}
	for (uint64_t lo = 0; lo < 64; lo++)
		for (uint64_t hi = lo; hi < 64; hi++) {
			struct tnum r = brt_tnum_range(lo, hi);

			for (uint64_t x = lo; x <= hi; x++)
				bad += !brt_tnum_contains(r, x);
		}
	T_EQ_INT(0, bad);
}

static void check_exact(void)
{
	char buf[64];

	T_CASE("exact");
	T_EQ_U64(12, brt_tnum_add(brt_tnum_const(5), brt_tnum_const(7)).value);
	T_EQ_U64(0, brt_tnum_add(brt_tnum_const(5), brt_tnum_const(7)).mask);
	T_EQ_U64(0xff, brt_tnum_range(0, 255).mask);
	T_EQ_U64(UINT64_MAX, brt_tnum_range(0, UINT64_MAX).mask);
	T_ASSERT(brt_tnum_is_aligned(brt_tnum_const(16), 8));
	T_ASSERT(!brt_tnum_is_aligned((struct tnum){ 0, 4 }, 8));
	brt_tnum_strn(buf, sizeof(buf), (struct tnum){ 0, 0xffffffff });
	T_EQ_STR("(0x0; 0xffffffff)", buf);
	brt_tnum_strn(buf, sizeof(buf), brt_tnum_const(0));
	T_EQ_STR("0", buf);
	T_EQ_U64(0x12345678ULL << 32 | 7,
		 brt_tnum_with_subreg(brt_tnum_const(0x12345678ULL << 32 | 0xabc), brt_tnum_const(7)).value);
}

int main(void)
{
	build_all();
	check_exact();
	check_binary(0);
	check_binary(1);
	check_shifts();
	check_set_ops();
	return t_done();
}
