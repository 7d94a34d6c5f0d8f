/* printk.c - bpf_trace_printk(fmt, fmt_size, a1, a2, a3): the kernel's format language
 * checked the kernel's way (util/bprintf.c, bpf_bprintf_prepare(): a NUL within
 * fmt_size, printable characters, spaces or bytes above 0x7f only, at most three conversions among %d %i %u %x %X
 * with l/ll, %c, %s, %pks, %pus, %p, %pK, %px, %ps, %pS, %pB, %pI4, %pi4, %pI6, %pi6,
 * flags "0+- " and a width), formatted, and appended to the trace pipe as one line
 * "comm-tid [cpu] seconds: bpf_trace_printk: message".  Returns the message's length, or
 * -EINVAL for a format the kernel refuses (nothing is written then).  %s strings are read
 * with the fault-safe copy (an unreadable one prints as ""); the pointer formats print
 * the raw address (the kernel prints a hash, or a symbol for %ps/%pS/%pB).
 * bpf_trace_vprintk() is the same with up to 12 arguments from an array, bpf_snprintf()
 * formats into the program's buffer.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bpfrt.h"
#include "trace/trace.h"
#include "util/util.h"

#define MAX_ARGS 3     /* bpf_trace_printk's */
#define MAX_VARGS 12   /* bpf_trace_vprintk's: the kernel's MAX_BPRINTF_VARARGS */
#define MSG_MAX 1024   /* the kernel's MAX_BPRINTF_BUF */
#define STR_MAX 512    /* bytes of a %s argument read at most */

/* The format handed to snprintf() is rebuilt from the checked conversion (flags, width, a
 * length modifier we choose, one letter), never the program's text as is. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/* An address format's text: %pI4 "1.2.3.4", %pi4 "001.002.003.004", %pI6 eight groups
 * of four hex digits with colons, %pi6 the same without them (the kernel's ip4/ip6
 * formats); the bytes are read fault-safe, zeros when they cannot be (as the kernel). */
static void ip_text(char *out, size_t room, const struct brt_bprintf_spec *s, uint64_t addr)
{
	uint8_t b[16] = { 0 };
	size_t n = s->kind == BRT_BPF_IP4 ? 4 : 16, pos = 0;

	if (brt_ucopy(b, (const void *)(uintptr_t)addr, n, 0))
		memset(b, 0, sizeof(b));
	if (s->kind == BRT_BPF_IP4) {
		snprintf(out, room, s->letter == 'I' ? "%u.%u.%u.%u" : "%03u.%03u.%03u.%03u", b[0],
			 b[1], b[2], b[3]);
		return;
	}
	for (size_t i = 0; i < 16 && pos + 5 < room; i += 2) {
		if (s->letter == 'I' && i)
			out[pos++] = ':';
		pos += (size_t)snprintf(out + pos, room - pos, "%02x%02x", b[i], b[i + 1]);
	}
	out[pos] = 0;
}

/* Print one conversion with its argument at out; returns what snprintf returns. */
static int print_spec(char *out, size_t room, const char *fmt,
		      const struct brt_bprintf_spec *s, uint64_t arg)
{
	char cfmt[32], str[STR_MAX];
	size_t wlen = s->width_end - s->start;

	if (wlen > 16)
		return -1;
	memcpy(cfmt, fmt + s->start, wlen);
	cfmt[wlen] = 0;
	switch (s->kind) {
	case BRT_BPF_INT:
		snprintf(cfmt + wlen, sizeof(cfmt) - wlen, "%c", s->letter);
		if (s->letter == 'd' || s->letter == 'i')
			return snprintf(out, room, cfmt, (int)arg);
		return snprintf(out, room, cfmt, (unsigned)arg);
	case BRT_BPF_LONG:
		snprintf(cfmt + wlen, sizeof(cfmt) - wlen, "ll%c", s->letter);
		if (s->letter == 'd' || s->letter == 'i')
			return snprintf(out, room, cfmt, (long long)arg);
		return snprintf(out, room, cfmt, (unsigned long long)arg);
	case BRT_BPF_CHAR:
		strcat(cfmt, "c");
		return snprintf(out, room, cfmt, (int)(unsigned char)arg);
	case BRT_BPF_STR:
		if (brt_trace_copy_str(str, arg, sizeof(str)) < 0)
			str[0] = 0;
		strcat(cfmt, "s");
		return snprintf(out, room, cfmt, str);
	case BRT_BPF_IP4:
	case BRT_BPF_IP6:
		ip_text(str, sizeof(str), s, arg);
		strcat(cfmt, "s");
		return snprintf(out, room, cfmt, str);
	default:
		/* %px: 16 hex digits, as %p and %pK (the kernel hashes those); %ps, %pS, %pB
		 * "0x" and the digits, as the kernel for an address no symbol holds (bpfrt
		 * has no kernel symbols) */
		if (fmt[s->end - 1] == 's' || fmt[s->end - 1] == 'S' || fmt[s->end - 1] == 'B') {
			strcat(cfmt, "s");
			snprintf(str, sizeof(str), "0x%llx", (unsigned long long)arg);
			return snprintf(out, room, cfmt, str);
		}
		/* the kernel's pointer_string(): 16 zero-padded digits unless a width is
		 * given, which the number then only fills */
		if (wlen == 1)
			return snprintf(out, room, "%016llx", (unsigned long long)arg);
		strcat(cfmt, "llx");
		return snprintf(out, room, cfmt, (unsigned long long)arg);
	}
}

/* Format fmt (fmt_size bytes, NUL within) into msg; returns the full length or -EINVAL. */
static int format(char *msg, size_t room, const char *fmt, size_t fmt_size,
		  const uint64_t *args, int max_args)
{
	const char *nul = memchr(fmt, 0, fmt_size);
	size_t len, i, pos = 0, total = 0;
	int nargs = 0;

	if (!nul)
		return -EINVAL;
	len = (size_t)(nul - fmt);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)fmt[i];
		struct brt_bprintf_spec s;
		int n;

		if (!brt_bprintf_char_ok(c))
			return -EINVAL;
		if (c != '%' || fmt[i + 1] == '%') {
			i += c == '%';
			n = 1;
			if (pos + 1 < room)
				msg[pos++] = (char)c;
			total += (size_t)n;
			continue;
		}
		if (nargs >= max_args || brt_bprintf_spec(fmt, i, &s))
			return -EINVAL;
		n = print_spec(msg + pos, room - pos, fmt, &s, args[nargs++]);
		if (n < 0)
			return -EINVAL;
		total += (size_t)n;
		pos += (size_t)n < room - pos ? (size_t)n : room - pos - 1;
		i = s.end - 1;
	}
	msg[pos] = 0;
	return (int)total;
}

/* Format and append one line; returns the message's length or -EINVAL. */
static int64_t printk(const char *fmt, size_t fmt_size, const uint64_t *args, int max_args,
		      struct bpfrt_run_ctx *ctx)
{
	char msg[MSG_MAX], line[MSG_MAX + 128], comm[16];
	struct timespec ts;
	int32_t pid, cpu;
	int len, n;

	if (!fmt_size || !bpfrt_run_access_ok(ctx, fmt, fmt_size, 0))
		return -EINVAL;
	len = format(msg, sizeof(msg), fmt, fmt_size, args, max_args);
	if (len < 0)
		return len;
	brt_trace_current(comm, &pid, &cpu);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(line, sizeof(line), "%16s-%-7d [%03d] %5lld.%06ld: bpf_trace_printk: %s\n",
		     comm, (int)pid, (int)cpu, (long long)ts.tv_sec, ts.tv_nsec / 1000, msg);
	if (n >= (int)sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	brt_trace_pipe_write(line, (size_t)n);
	return len;
}

uint64_t brt_helper_trace_printk(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	const uint64_t args[MAX_ARGS] = { r3, r4, r5 };

	return (uint64_t)printk((const char *)(uintptr_t)r1, (size_t)(uint32_t)r2, args,
				MAX_ARGS, ctx);
}

/* The argument array of bpf_trace_vprintk and bpf_seq_printf (bpf_bprintf_prepare()'s
 * rules): data_len a multiple of 8, at most 96, args non-NULL when it is not 0; 0 with
 * args filled (zeros past data_len) or -EINVAL. */
static int vargs(uint64_t *args, uint64_t p, uint32_t data_len, struct bpfrt_run_ctx *ctx)
{
	memset(args, 0, MAX_VARGS * sizeof(*args));
	if ((data_len & 7) || data_len > MAX_VARGS * 8 || (data_len && !p))
		return -EINVAL;
	if (data_len) {
		if (!bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)p, data_len, 0))
			return -EINVAL;
		memcpy(args, (const void *)(uintptr_t)p, data_len);
	}
	return 0;
}

/* bpf_seq_printf(seq, fmt, fmt_size, args, data_len): iterator programs only, which never
 * run in bpfrt (no kernel object is iterated, so no seq_file takes the text): the format
 * and arguments are checked as the kernel's and the text dropped; 0 as for a line that
 * fit, or -EINVAL. */
uint64_t brt_helper_seq_printf(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			       uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint64_t args[MAX_VARGS];
	char msg[MSG_MAX];
	const char *fmt = (const char *)(uintptr_t)r2;
	size_t fmt_size = (uint32_t)r3;

	(void)r1;
	if (vargs(args, r4, (uint32_t)r5, ctx) || !fmt_size ||
	    !bpfrt_run_access_ok(ctx, fmt, fmt_size, 0))
		return (uint64_t)-EINVAL;
	return format(msg, sizeof(msg), fmt, fmt_size, args, (int)((uint32_t)r5 / 8)) < 0
		       ? (uint64_t)-EINVAL
		       : 0;
}

/* bpf_seq_printf_btf(seq, ptr, ptr_size, flags) and bpf_snprintf_btf(str, size, ptr,
 * ptr_size, flags): bpf_btf_printf_prepare()'s checks (flags among BTF_F_COMPACT, NONAME,
 * PTR_RAW and ZERO; ptr_size that of struct btf_ptr; a type id) give its -EINVAL; bpfrt
 * has no printer of kernel objects by their BTF, so a valid call answers -EOPNOTSUPP (a
 * known difference; iterators, where seq_printf_btf is offered, never run here). */
static int64_t btf_printf_prepare(uint64_t ptr, uint32_t ptr_size, uint64_t flags,
				  struct bpfrt_run_ctx *ctx)
{
	uint32_t type_id;

	if ((flags & ~UINT64_C(0xf)) || ptr_size != 16)
		return -EINVAL;
	if (!bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)(ptr + 8), 4, 0))
		return -EINVAL;
	memcpy(&type_id, (const void *)(uintptr_t)(ptr + 8), 4);
	return type_id > 0 && type_id <= INT32_MAX ? -EOPNOTSUPP : -EINVAL;
}

uint64_t brt_helper_seq_printf_btf(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				   uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r5;
	return (uint64_t)btf_printf_prepare(r2, (uint32_t)r3, r4, ctx);
}

uint64_t brt_helper_snprintf_btf(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				 uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	(void)r1, (void)r2;
	return (uint64_t)btf_printf_prepare(r3, (uint32_t)r4, r5, ctx);
}

/* bpf_trace_vprintk(fmt, fmt_size, args, data_len): the same with up to 12 u64 arguments
 * in an array; data_len must be a multiple of 8, at most 96, and args non-NULL when it is
 * not 0 (-EINVAL); the format may use no more conversions than it gives. */
uint64_t brt_helper_trace_vprintk(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				  uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint64_t args[MAX_VARGS];
	uint32_t data_len = (uint32_t)r4;

	(void)r5;
	if (vargs(args, r3, data_len, ctx))
		return (uint64_t)-EINVAL;
	return (uint64_t)printk((const char *)(uintptr_t)r1, (size_t)(uint32_t)r2, args,
				(int)(data_len / 8), ctx);
}

/* The kfunc bpf_stream_vprintk_impl(stream_id, fmt__str, args, len__sz, aux__prog)
 * (kernel/bpf/stream.c): the kernel appends the formatted text to the program's stdout (1)
 * or stderr (2) stream, which BPF_PROG_STREAM_READ_BY_FD reads.  bpfrt keeps no stream (a
 * known difference, docs/STATUS.md #15): the kernel's answers for the arguments, -ENOENT
 * for another stream, -EINVAL for args and for a format the run cannot print, then the
 * kernel's answer when it finds no memory for the text (bpf_stream_page_replace()'s
 * alloc_pages_nolock() failing: -ENOMEM, which this host's 6.18 answers every time). */
uint64_t brt_trace_stream_vprintk(uint64_t id, uint64_t fmt, uint64_t data, uint64_t data_len,
				  struct bpfrt_run_ctx *ctx)
{
	uint64_t args[MAX_VARGS];
	char none[1];
	const char *f = (const char *)(uintptr_t)fmt;

	if (id != 1 && id != 2)
		return (uint64_t)-ENOENT;
	if (vargs(args, data, (uint32_t)data_len, ctx))
		return (uint64_t)-EINVAL;
	return format(none, sizeof(none), f, strlen(f) + 1, args, (int)((uint32_t)data_len / 8)) < 0
		       ? (uint64_t)-EINVAL
		       : (uint64_t)-ENOMEM;
}

/* bpf_snprintf(str, str_size, fmt, data, data_len): the same language (the verifier has
 * checked the constant fmt), up to 12 u64 arguments in data; the text truncated to
 * str_size with a NUL; returns the bytes the whole text needs with its NUL, or -EINVAL
 * for data_len (a multiple of 8, at most 96, data non-NULL when it is not 0). */
uint64_t brt_helper_snprintf(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			     uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	uint64_t args[MAX_VARGS];
	char none[1];
	const char *fmt = (const char *)(uintptr_t)r3;
	uint32_t size = (uint32_t)r2, data_len = (uint32_t)r5;
	int len;

	if (vargs(args, r4, data_len, ctx))
		return (uint64_t)-EINVAL;
	if (size && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)r1, size, 1))
		return (uint64_t)-EFAULT;
	len = format(size ? (char *)(uintptr_t)r1 : none, size ? size : 1, fmt, strlen(fmt) + 1,
		     args, (int)(data_len / 8));
	return len < 0 ? (uint64_t)(int64_t)len : (uint64_t)len + 1;
}
