/* test_hash_batch_oracle.c - BPF_MAP_LOOKUP_BATCH and BPF_MAP_LOOKUP_AND_DELETE_BATCH of a
 * hash map against the kernel, whose __htab_map_lookup_and_delete_batch() goes bucket by
 * bucket: whole buckets only, ENOSPC when the first bucket does not fit in count, the
 * batch ending before a later bucket that does not, the token the u32 number of the
 * bucket to go on from.  bpfrt went key by key (count 4 over 5 keys: the kernel 3 where
 * two keys shared a bucket, bpfrt 4).  The two hash functions differ, so which keys share
 * a bucket does too; the maps are BPF_F_ZERO_SEED (the kernel's jhash with seed 0,
 * computed here; bpfrt's brt_keyhash() with seed 0), so each side's buckets are known:
 *  - keys alone in their buckets on both sides: the exact answers must be equal;
 *  - 4 keys in 4 buckets (some shared): each side's answers must be what the kernel's
 *    rule gives for its own buckets, and the kernel's too, so the rule is the kernel's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "transcript.h"
#include "util/util.h"

#define MAX_STEPS 16

static uint32_t rol32(uint32_t w, unsigned s)
{
	return (w << s) | (w >> (32 - s));
}

/* the kernel's jhash2() of one word (htab_map_hash() of a 4-byte key) */
static uint32_t jhash_u32(uint32_t k, uint32_t initval)
{
	uint32_t a, b, c;

	a = b = c = 0xdeadbeef + (1u << 2) + initval;
	a += k;
	c ^= b, c -= rol32(b, 14);
	a ^= c, a -= rol32(c, 11);
	b ^= a, b -= rol32(a, 25);
	c ^= b, c -= rol32(b, 16);
	a ^= c, a -= rol32(c, 4);
	b ^= a, b -= rol32(a, 14);
	c ^= b, c -= rol32(b, 24);
	return c;
}

static uint32_t bucket(int kernel, uint32_t key, uint32_t nb)
{
	return (kernel ? jhash_u32(key, 0) : brt_keyhash(&key, 4, 0)) & (nb - 1);
}

/* one batch after another with count each time until ENOENT or an error: the counts and
 * errnos, and the keys seen in all (a bitmask of keys 0..31) */
static int batches(sys_fn sys, int fd, int del, uint32_t count, int *cnt, int *err,
		   uint32_t *seen)
{
	uint32_t keys[32], vals[32], tok = 0;
	int n = 0;

	*seen = 0;
	for (; n < MAX_STEPS; n++) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.batch.map_fd = (uint32_t)fd;
		a.batch.keys = (uintptr_t)keys;
		a.batch.values = (uintptr_t)vals;
		a.batch.count = count;
		a.batch.in_batch = n ? (uintptr_t)&tok : 0;
		a.batch.out_batch = (uintptr_t)&tok;
		err[n] = sys(del ? BPF_MAP_LOOKUP_AND_DELETE_BATCH : BPF_MAP_LOOKUP_BATCH, &a,
			     sizeof(a)) ? -errno : 0;
		cnt[n] = (int)a.batch.count;
		for (uint32_t i = 0; i < a.batch.count && i < 32; i++)
			*seen |= 1u << (keys[i] & 31);
		if (err[n])
			return n + 1;
	}
	return n;
}

/* what the kernel's rule answers for buckets of sizes sz[0..nb) */
static int predict(const uint32_t *sz, uint32_t nb, uint32_t count, int *cnt, int *err)
{
	uint32_t b = 0;
	int n = 0;

	for (; n < MAX_STEPS; n++) {
		uint32_t total = 0;

		err[n] = 0;
		for (;; b++) {
			if (b >= nb) {
				err[n] = -ENOENT;
				break;
			}
			if (sz[b] > count - total) {
				if (!total)
					err[n] = -ENOSPC;
				break;
			}
			total += sz[b];
		}
		cnt[n] = (int)total;
		if (err[n])
			return n + 1;
	}
	return n;
}

static int make(sys_fn sys, uint32_t max, const uint32_t *keys, int n)
{
	int fd = create_map(sys, BPF_MAP_TYPE_HASH, 4, 4, max, BPF_F_ZERO_SEED, 0);

	for (int i = 0; fd >= 0 && i < n; i++) {
		uint32_t v = keys[i] * 10;

		if (elem(sys, BPF_MAP_UPDATE_ELEM, fd, &keys[i], &v, 0))
			return -1;
	}
	return fd;
}

/* the steps' counts and errnos of a (named an) and b equal */
static void same(const char *what, const char *an, int nk, const int *kc, const int *ke,
		 const char *bn, int nb, const int *bc, const int *be)
{
	T_CASE(what);
	T_EQ_INT(nk, nb);
	for (int i = 0; i < nk && i < nb; i++) {
		printf("%s step %d: %s %d %d, %s %d %d\n", what, i, an, kc[i], ke[i], bn, bc[i],
		       be[i]);
		T_EQ_INT(kc[i], bc[i]);
		T_EQ_INT(ke[i], be[i]);
	}
}

int main(void)
{
	uint32_t alone[5], shared[4] = { 1, 2, 3, 4 }, nalone = 0, used[2][1024] = { { 0 } };
	uint32_t seen_k, seen_b, sz[2][4] = { { 0 } };
	int kc[MAX_STEPS], ke[MAX_STEPS], bc[MAX_STEPS], be[MAX_STEPS], nk, nb, fk, fb;

	fk = create_map(kernel_bpf, BPF_MAP_TYPE_HASH, 4, 4, 4, BPF_F_ZERO_SEED, 0);
	if (fk < 0)
		T_SKIP("no kernel hash map with BPF_F_ZERO_SEED (root): %s", strerror(-fk));
	close(fk);
	/* five keys each alone in its bucket of 1024 on both sides */
	for (uint32_t k = 1; k < 32 && nalone < 5; k++) {
		uint32_t bk = bucket(1, k, 1024), bb = bucket(0, k, 1024);

		if (used[0][bk] || used[1][bb])
			continue;
		used[0][bk] = used[1][bb] = 1;
		alone[nalone++] = k;
	}
	T_CASE("five keys alone in their buckets");
	T_EQ_INT(5, nalone);
	for (int del = 0; del < 2; del++) {
		fk = make(kernel_bpf, 1024, alone, 5);
		fb = make(bpfrt_bpf, 1024, alone, 5);
		nk = batches(kernel_bpf, fk, del, 4, kc, ke, &seen_k);
		nb = batches(bpfrt_bpf, fb, del, 4, bc, be, &seen_b);
		same(del ? "alone, lookup_and_delete count 4" : "alone, lookup count 4", "kernel", nk,
		     kc, ke, "bpfrt", nb, bc, be);
		T_EQ_INT(seen_k, seen_b);
		T_EQ_INT(4, kc[0]);
		close(fk);
		close(fb);
	}
	/* four keys in four buckets: each side against the rule on its own buckets */
	for (int i = 0; i < 4; i++) {
		sz[0][bucket(1, shared[i], 4)]++;
		sz[1][bucket(0, shared[i], 4)]++;
	}
	for (uint32_t count = 1; count <= 3; count++) {
		int pk[MAX_STEPS], pe[MAX_STEPS], n;
		char what[64];

		fk = make(kernel_bpf, 4, shared, 4);
		fb = make(bpfrt_bpf, 4, shared, 4);
		nk = batches(kernel_bpf, fk, 0, count, kc, ke, &seen_k);
		nb = batches(bpfrt_bpf, fb, 0, count, bc, be, &seen_b);
		snprintf(what, sizeof(what), "shared, count %u: the kernel by its rule", count);
		n = predict(sz[0], 4, count, pk, pe);
		same(what, "rule", n, pk, pe, "kernel", nk, kc, ke);
		snprintf(what, sizeof(what), "shared, count %u: bpfrt by the rule", count);
		n = predict(sz[1], 4, count, pk, pe);
		same(what, "rule", n, pk, pe, "bpfrt", nb, bc, be);
		close(fk);
		close(fb);
	}
	return t_done();
}
