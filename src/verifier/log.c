/* log.c - the verifier log: the caller's log_buf with the kernel's semantics.
 *
 * Text is written at increasing logical positions.  By default the buffer keeps the END
 * of the log (the kernel's rotating mode): when it is full the oldest bytes go, and at the
 * end the kept text is moved to the start of the buffer and NUL-terminated.  With
 * BPF_LOG_FIXED it keeps the beginning instead.  Either way, a log that did not fit makes
 * the load fail with -ENOSPC, and len_max tells how big the buffer should have been.  A
 * position can be rewound (bpf_vlog_reset in the kernel), which is how level 1 drops the
 * trace of paths that verified fine.
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
	return 0;
}

static void put_bytes(struct brt_vlog *log, const char *s, size_t n)
{
	uint64_t cap;

	if (log->ubuf && log->len_total > 1) {
		cap = log->len_total - 1;
		if (log->level & BRT_LOG_FIXED) {
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
		log->ubuf[len] = 0;
		return 0;
	}
	if (len > log->len_total - 1) {
		len = log->len_total - 1;
		log->start_pos = log->end_pos - len;
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
	err = rotate(log);
	if (err)
		return err;
	if (log->len_max > log->len_total)
		return -ENOSPC;
	return 0;
}
