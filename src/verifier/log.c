/* log.c - the verifier log: the caller's log_buf with the kernel's semantics.
 *
 * Text is written at increasing logical positions.  By default the buffer keeps the END
 * of the log (the kernel's rotating mode): when it is full the oldest bytes go, and at the
 * end the kept text is moved to the start of the buffer and NUL-terminated.  With
 * BPF_LOG_FIXED it keeps the beginning instead.  Either way, a log that did not fit makes
 * the load fail with -ENOSPC, and len_max tells how big the buffer should have been.  A
 * position can be rewound (bpf_vlog_reset in the kernel), which is how level 1 drops the
 * trace of paths that verified fine.  A buffer the caller lets grow (struct brt_log_buf) is
 * grown as the text reaches it, so a large log_size costs what is written only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/internal.h"

int brt_vlog_init(struct brt_vlog *log, uint32_t level, char *ubuf, uint32_t size)
{
	memset(log, 0, sizeof(*log));
	log->level = level;
	log->ubuf = ubuf;
	log->len_total = size;
	/* the kernel's bpf_verifier_log_attr_valid() */
	if (!!ubuf != !!size)
		return -EINVAL;
	if (ubuf && level == 0)
		return -EINVAL;
	if (level & ~BRT_LOG_MASK)
		return -EINVAL;
	if (size > UINT32_MAX >> 2)
		return -EINVAL;
	log->alloc = size;
	return 0;
}

int brt_vlog_init_grow(struct brt_vlog *log, uint32_t level, struct brt_log_buf *grow,
		       uint32_t size)
{
	int err = brt_vlog_init(log, level, size ? grow->buf : NULL, size);

	if (err)
		return err;
	log->grow = grow;
	log->alloc = grow->alloc < size ? grow->alloc : size;
	return 0;
}

/* Make the buffer hold need bytes (at most len_total): grown by doubling.  0 when it
 * cannot (the log stops being kept; the load fails with -ENOMEM). */
static int ensure(struct brt_vlog *log, uint64_t need)
{
	uint64_t n = log->alloc ? log->alloc : 4096;
	char *p;

	if (need <= log->alloc)
		return 1;
	if (!log->grow || log->oom)
		return 0;
	while (n < need)
		n *= 2;
	if (n > log->len_total)
		n = log->len_total;
	p = realloc(log->grow->buf, n);
	if (!p) {
		log->oom = 1;
		return 0;
	}
	log->grow->buf = log->ubuf = p;
	log->grow->alloc = log->alloc = (uint32_t)n;
	return 1;
}

static void put_bytes(struct brt_vlog *log, const char *s, size_t n)
{
	uint64_t cap = log->len_total - 1, need = log->end_pos + n;
	int fixed = log->level & BRT_LOG_FIXED;

	/* the bytes written below: up to the cap, or around the whole ring */
	if (need > (fixed ? cap : log->len_total))
		need = fixed ? cap : log->len_total;
	if (log->ubuf && log->len_total > 1 && ensure(log, need)) {
		if (fixed) {
			for (size_t i = 0; i < n; i++) {
				uint64_t p = log->end_pos + i;

				if (p >= cap)
					break;
				log->ubuf[p] = s[i];
			}
		} else {
			for (size_t i = 0; i < n; i++) {
				uint64_t p = log->end_pos + i;

				log->ubuf[p % log->len_total] = s[i];
			}
			if (log->end_pos + n - log->start_pos > cap)
				log->start_pos = log->end_pos + n - cap;
		}
	}
	log->end_pos += n;
	if (log->end_pos + 1 > log->len_max)
		log->len_max = log->end_pos + 1;
}

void brt_vlog_va(struct brt_vlog *log, const char *fmt, va_list ap)
{
	char tmp[BRT_VLOG_TMP];
	int n;

	if (!log->level)
		return;
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	put_bytes(log, tmp, (size_t)n);
}

void brt_vlog(struct brt_vlog *log, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	brt_vlog_va(log, fmt, ap);
	va_end(ap);
}

void brt_vlog_reset(struct brt_vlog *log, uint64_t pos)
{
	if (!log->level || pos > log->end_pos)
		return;
	log->end_pos = pos;
	if (log->end_pos < log->start_pos)
		log->start_pos = log->end_pos;
}

/* Move the kept window [start_pos, end_pos) to the start of the buffer. */
static int rotate(struct brt_vlog *log)
{
	uint64_t len = log->end_pos - log->start_pos;
	char *tmp;

	if (log->level & BRT_LOG_FIXED) {
		len = log->end_pos < log->len_total - 1 ? log->end_pos : log->len_total - 1;
		if (!ensure(log, len + 1))
			return -ENOMEM;
		log->ubuf[len] = 0;
		return 0;
	}
	if (len > log->len_total - 1) {
		len = log->len_total - 1;
		log->start_pos = log->end_pos - len;
	}
	if (!ensure(log, len + 1))
		return -ENOMEM;
	if (!log->start_pos) { /* never wrapped: the text starts the buffer already */
		log->ubuf[len] = 0;
		return 0;
	}
	tmp = malloc(len + 1);
	if (!tmp)
		return -ENOMEM;
	for (uint64_t i = 0; i < len; i++)
		tmp[i] = log->ubuf[(log->start_pos + i) % log->len_total];
	memcpy(log->ubuf, tmp, len);
	log->ubuf[len] = 0;
	free(tmp);
	return 0;
}

int brt_vlog_finalize(struct brt_vlog *log, uint32_t *true_size)
{
	int err;

	*true_size = log->len_max > UINT32_MAX ? UINT32_MAX : (uint32_t)log->len_max;
	if (!log->level || !log->ubuf)
		return 0;
	if (log->oom)
		return -ENOMEM;
	err = rotate(log);
	if (err)
		return err;
	if (log->len_max > log->len_total)
		return -ENOSPC;
	return 0;
}
