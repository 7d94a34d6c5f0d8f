/* csum_helpers.c - the checksum helpers of tc and XDP programs: bpf_csum_diff,
 * bpf_l3_csum_replace and bpf_l4_csum_replace, with the kernel's arithmetic so that the
 * same inputs give the same bits.
 *
 * Theory of operation: an Internet checksum is a ones'-complement sum of 16-bit words;
 * the kernel carries it around unfolded in 32 bits (__wsum), folds it to 16 bits and
 * inverts it for the header (__sum16).  Unfolded values are only defined modulo 0xffff,
 * so two correct implementations may differ in the 32 bits a program sees from
 * bpf_csum_diff().  We therefore reproduce x86-64's csum_partial() exactly: a 64-bit
 * end-around-carry sum of little-endian 8-byte words (the tail zero-padded), seeded with
 * the 32-bit seed and folded to 32 bits the same way.  Memory holds checksums and the
 * values programs pass as they sit in the packet (network byte order read as a native
 * integer), as the kernel treats __be16/__be32/__sum16: no byte swapping anywhere.
 *
 * In a BPF_PROG_TEST_RUN the skb carries no checksum state (CHECKSUM_NONE), so the
 * l3/l4 helpers only rewrite the header field; the skb->csum updates the kernel makes
 * for CHECKSUM_COMPLETE do not apply.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <linux/bpf.h>

#include "attach/attach.h"
#include "vm/vm.h"

/* 32-bit ones'-complement addition (the kernel's csum_add()). */
static uint32_t csum_add(uint32_t a, uint32_t b)
{
	uint32_t r = a + b;

	return r + (r < b);
}

static uint16_t csum16_add(uint16_t a, uint16_t b)
{
	uint16_t r = (uint16_t)(a + b);

	return (uint16_t)(r + (r < b));
}

/* Fold 32 bits to 16 and invert (x86's csum_fold(): the high half plus the low half
 * shifted up, plus 0xffff and the carry, inverted). */
static uint16_t csum_fold(uint32_t sum)
{
	uint64_t t = (uint64_t)(sum & 0xffff0000u) + (uint32_t)(sum << 16);

	t = (uint32_t)t + 0xffffull + (t >> 32);
	return (uint16_t)(~(uint32_t)t >> 16);
}

/* The kernel's csum_from32to16(): a 32-bit sum folded to 16 bits, not inverted. */
static uint32_t csum_from32to16(uint32_t sum)
{
	sum += (sum >> 16) | (sum << 16);
	return sum >> 16;
}

static uint64_t add64_carry(uint64_t a, uint64_t b)
{
	uint64_t r = a + b;

	return r + (r < b);
}

/* x86-64's csum_partial(): see the theory comment. */
static uint32_t csum_partial(const uint8_t *p, uint32_t len, uint32_t seed)
{
	uint64_t sum = seed, w, hi;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		sum = add64_carry(sum, w);
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len); /* little-endian: the bytes land low, zero-padded */
		sum = add64_carry(sum, w);
	}
	/* csum_finalize_sum(): (sum + ror64(sum, 32)) >> 32 */
	hi = sum + ((sum >> 32) | (sum << 32));
	return (uint32_t)(hi >> 32);
}

/* s64 bpf_csum_diff(__be32 *from, u32 from_size, __be32 *to, u32 to_size, __wsum seed):
 * the checksum difference of replacing from by to, added to seed, folded to 16 bits.
 * Either buffer may be NULL with a zero size. */
uint64_t brt_helper_csum_diff(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			      struct bpfrt_run_ctx *ctx)
{
	const uint8_t *from = (const uint8_t *)(uintptr_t)r1, *to = (const uint8_t *)(uintptr_t)r3;
	uint32_t from_size = (uint32_t)r2, to_size = (uint32_t)r4, ret = (uint32_t)r5;

	if ((from_size && !bpfrt_run_access_ok(ctx, from, from_size, 0)) ||
	    (to_size && !bpfrt_run_access_ok(ctx, to, to_size, 0)))
		return (uint64_t)-EFAULT;
	if (from_size && to_size)
		ret = csum_add(csum_partial(to, to_size, ret), ~csum_partial(from, from_size, 0));
	else if (to_size)
		ret = csum_partial(to, to_size, ret);
	else if (from_size)
		ret = ~csum_partial(from, from_size, ~ret);
	return csum_from32to16(ret);
}

/* The checksum field at offset of the skb, after the kernel's checks: an even offset up
 * to 0xffff (else -EFAULT), 2 bytes inside the packet (else -EFAULT). */
static int csum_field(struct bpfrt_run_ctx *ctx, uint64_t r1, uint32_t off, uint8_t **field)
{
	struct brt_run_pkt *p = brt_pkt_of(ctx, r1);

	if (off > 0xffff || (off & 1))
		return -EFAULT;
	if (!p || (uint64_t)off + 2 > (uint64_t)(p->data_end - p->data))
		return -EFAULT;
	*field = p->data + off;
	return 0;
}

/* Update a checksum field for a change of `from` into `to` (size 2 or 4), or (size 0)
 * for the difference `to` bpf_csum_diff() computed: the kernel's csum_replace2(),
 * csum_replace4() and csum_replace_by_diff().  Returns 0 or -EINVAL for another size or
 * a non-zero from with size 0. */
static int csum_replace(uint8_t *field, uint64_t from, uint64_t to, unsigned size)
{
	uint16_t sum;

	memcpy(&sum, field, 2);
	switch (size) {
	case 0:
		if (from)
			return -EINVAL;
		sum = csum_fold(csum_add((uint32_t)to, ~(uint32_t)sum));
		break;
	case 2:
		sum = (uint16_t)~csum16_add(csum16_add((uint16_t)~sum, (uint16_t)~(uint16_t)from),
					    (uint16_t)to);
		break;
	case 4:
		sum = csum_fold(csum_add(csum_add(~(uint32_t)sum, ~(uint32_t)from), (uint32_t)to));
		break;
	default:
		return -EINVAL;
	}
	memcpy(field, &sum, 2);
	return 0;
}

/* long bpf_l3_csum_replace(skb, u32 offset, u64 from, u64 to, u64 flags): flags hold the
 * size of the changed field (BPF_F_HDR_FIELD_MASK) and nothing else. */
uint64_t brt_helper_l3_csum_replace(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint8_t *field;
	int err;

	if (r5 & ~(uint64_t)BPF_F_HDR_FIELD_MASK)
		return (uint64_t)-EINVAL;
	err = csum_field(ctx, r1, (uint32_t)r2, &field);
	if (!err)
		err = csum_replace(field, r3, r4, (unsigned)(r5 & BPF_F_HDR_FIELD_MASK));
	return (uint64_t)(int64_t)err;
}

/* long bpf_l4_csum_replace(skb, u32 offset, u64 from, u64 to, u64 flags): as l3, plus
 * BPF_F_MARK_MANGLED_0 (a zero checksum means "none", as UDP's: left alone, and a result
 * of zero is written as 0xffff), BPF_F_MARK_ENFORCE, BPF_F_PSEUDO_HDR and BPF_F_IPV6
 * (they only matter for checksum state a test-run skb does not have). */
uint64_t brt_helper_l4_csum_replace(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				    uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const uint64_t known = BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE | BPF_F_PSEUDO_HDR |
			       BPF_F_HDR_FIELD_MASK | BPF_F_IPV6;
	int mmzero = !!(r5 & BPF_F_MARK_MANGLED_0), mforce = !!(r5 & BPF_F_MARK_ENFORCE);
	unsigned size = (unsigned)(r5 & BPF_F_HDR_FIELD_MASK);
	uint16_t sum;
	uint8_t *field;
	int err;

	if (r5 & ~known)
		return (uint64_t)-EINVAL;
	err = csum_field(ctx, r1, (uint32_t)r2, &field);
	if (err)
		return (uint64_t)(int64_t)err;
	memcpy(&sum, field, 2);
	if (mmzero && !mforce && !sum)
		return 0;
	/* inet_proto_csum_replace2() is replace4 with the values widened */
	err = csum_replace(field, size == 2 ? (uint16_t)r3 : r3, size == 2 ? (uint16_t)r4 : r4,
			   size == 2 ? 4 : size);
	if (err)
		return (uint64_t)(int64_t)err;
	memcpy(&sum, field, 2);
	if (mmzero && !sum) {
		sum = 0xffff;
		memcpy(field, &sum, 2);
	}
	return 0;
}
