/* str_helpers.c - the string helpers of the kernel's bpf_base_func_proto() (every
 * program type, unprivileged too): bpf_strtol, bpf_strtoul and bpf_strncmp, with the
 * kernel's parsing rules (__bpf_strtoull() over lib/kstrtox.c) and answers.  Rows of the
 * helper registry (BRT_VM_HELPERS in vm.h).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "vm/vm.h"

#define STRTOX_BASE_MASK 0x1fu /* BPF_STRTOX_BASE_MASK */

/* the kernel's isspace(): its ctype table, which counts 0xa0 (no-break space) too */
static int k_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static int k_isxdigit(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int readable(struct bpfrt_run_ctx *ctx, uint64_t p, size_t len)
{
	return !ctx->checked || bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)p, len, 0);
}

/* __bpf_strtoull(): the number at the start of buf (buf_len bytes): optional white space
 * and '-', then at most 63 characters parsed in base flags (0: by prefix, 8, 10 or 16).
 * Returns the characters consumed, or -EINVAL (bad flags or base, nothing to parse, no
 * digit) or -ERANGE (more than 64 bits). */
static int strtoull_k(const char *buf, size_t buf_len, uint64_t flags, uint64_t *res, int *neg)
{
	unsigned base = (unsigned)(flags & STRTOX_BASE_MASK);
	size_t consumed = 0, len, ndig = 0;
	char str[64];
	const char *s;
	uint64_t v = 0;
	int overflow = 0;

	if (!buf || !buf_len)
		return -EINVAL;
	if ((base != 0 && base != 8 && base != 10 && base != 16) || (flags & ~(uint64_t)STRTOX_BASE_MASK))
		return -EINVAL;
	while (consumed < buf_len && k_isspace((unsigned char)buf[consumed]))
		consumed++;
	*neg = consumed < buf_len && buf[consumed] == '-';
	consumed += (size_t)*neg;
	len = buf_len - consumed;
	if (!len)
		return -EINVAL;
	if (len > sizeof(str) - 1)
		len = sizeof(str) - 1;
	memcpy(str, buf + consumed, len);
	str[len] = 0;
	s = str;
	/* _parse_integer_fixup_radix() */
	if (base == 0)
		base = s[0] != '0' ? 10 : ((s[1] | 0x20) == 'x' && k_isxdigit((unsigned char)s[2])) ? 16 : 8;
	if (base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	/* _parse_integer() */
	for (;; ndig++) {
		unsigned char c = (unsigned char)s[ndig];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		if ((v >> 60) && v > (UINT64_MAX - d) / base)
			overflow = 1;
		v = v * base + d;
	}
	*res = v;
	if (overflow)
		return -ERANGE;
	if (!ndig)
		return -EINVAL;
	return (int)(consumed + (size_t)(s - str) + ndig);
}

/* What bpf_strtol and bpf_strtoul share: *res (8 writable bytes) zeroed, then the
 * number in buf[0..len) parsed with flags: the characters consumed (v and *neg set), or
 * -errno. */
static int parse_number(struct bpfrt_run_ctx *ctx, uint64_t buf, uint64_t len, uint64_t flags,
			uint64_t *res, uint64_t *v, int *neg)
{
	if (ctx->checked && !bpfrt_run_access_ok(ctx, res, sizeof(*res), 1))
		return -EFAULT;
	*res = 0;
	if (!readable(ctx, buf, (size_t)len))
		return -EFAULT;
	return strtoull_k((const char *)(uintptr_t)buf, (size_t)len, flags, v, neg);
}

/* bpf_strtol(buf, buf_len, flags, res) and bpf_strtoul(...): *res is 0 unless a number
 * was parsed; the answer is the characters consumed or the error.  strtoul refuses a
 * '-' (-EINVAL); strtol refuses what does not fit a signed 64-bit value (-ERANGE). */
uint64_t brt_helper_strtol(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			   struct bpfrt_run_ctx *ctx)
{
	uint64_t *res = (uint64_t *)(uintptr_t)r4, v = 0;
	int neg = 0, n = parse_number(ctx, r1, r2, r3, res, &v, &neg);

	(void)r5;
	if (n < 0)
		return (uint64_t)(int64_t)n;
	if (neg ? (int64_t)(0 - v) > 0 : (int64_t)v < 0)
		return (uint64_t)-ERANGE;
	*res = neg ? 0 - v : v; /* the int64_t's two's complement bits */
	return (uint64_t)(int64_t)n;
}

uint64_t brt_helper_strtoul(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			    struct bpfrt_run_ctx *ctx)
{
	uint64_t *res = (uint64_t *)(uintptr_t)r4, v = 0;
	int neg = 0, n = parse_number(ctx, r1, r2, r3, res, &v, &neg);

	(void)r5;
	if (n < 0)
		return (uint64_t)(int64_t)n;
	if (neg)
		return (uint64_t)-EINVAL;
	*res = v;
	return (uint64_t)(int64_t)n;
}

/* bpf_strncmp(s1, s1_sz, s2): the kernel's strncmp() over at most s1_sz bytes: -1, 0 or 1
 * (not the difference of the bytes); s2 is a NUL-terminated constant string. */
uint64_t brt_helper_strncmp(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
			    struct bpfrt_run_ctx *ctx)
{
	const unsigned char *a = (const unsigned char *)(uintptr_t)r1;
	const unsigned char *b = (const unsigned char *)(uintptr_t)r3;
	uint32_t n = (uint32_t)r2;

	(void)r4, (void)r5;
	for (uint32_t i = 0; i < n; i++) {
		if (!readable(ctx, r1 + i, 1) || !readable(ctx, r3 + i, 1))
			return (uint64_t)-EFAULT;
		if (a[i] != b[i])
			return a[i] < b[i] ? (uint64_t)-1 : 1;
		if (!a[i])
			break;
	}
	return 0;
}
