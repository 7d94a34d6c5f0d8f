/* test_log.c - the verifier log buffer: attribute checks, the rotating mode that keeps the
 * tail, BPF_LOG_FIXED that keeps the head, rewinding, and -ENOSPC with the true size.
 */
#include <errno.h>

#include "harness.h"
#include "verifier/internal.h"

struct log_case {
	const char *name;
	uint32_t level;
	uint32_t size;     /* 0: no buffer */
	int nwrites;       /* "0123456789" written this many times */
	int reset_to;      /* >= 0: rewind here after the writes */
	const char *want;  /* buffer contents */
	int want_err;
	uint32_t want_true;
};

static const struct log_case cases[] = {
	{ "fits", 1, 32, 2, -1, "01234567890123456789", 0, 21 },
	{ "exact fit", 1, 21, 2, -1, "01234567890123456789", 0, 21 },
	{ "one short: tail kept", 1, 20, 2, -1, "1234567890123456789", -ENOSPC, 21 },
	{ "rotating keeps tail", 2, 8, 3, -1, "3456789", -ENOSPC, 31 },
	{ "fixed keeps head", 1 | BRT_LOG_FIXED, 8, 3, -1, "0123456", -ENOSPC, 31 },
	{ "size 1", 1, 1, 1, -1, "", -ENOSPC, 11 },
	{ "no buffer: size only", 1, 0, 3, -1, NULL, 0, 31 },
	{ "reset", 1, 64, 3, 5, "01234", 0, 31 },
	{ "reset within rotated", 1, 8, 3, 25, "34", -ENOSPC, 31 },
};

static void run_case(const struct log_case *c)
{
	char buf[128];
	struct brt_vlog log;
	uint32_t true_size = 0;
	int err;

	T_CASE(c->name);
	memset(buf, 'X', sizeof(buf));
	T_EQ_INT(0, brt_vlog_init(&log, c->level, c->size ? buf : NULL, c->size));
	for (int i = 0; i < c->nwrites; i++)
		brt_vlog(&log, "%s", "0123456789");
	if (c->reset_to >= 0)
		brt_vlog_reset(&log, (uint64_t)c->reset_to);
	err = brt_vlog_finalize(&log, &true_size);
	T_EQ_INT(c->want_err, err);
	T_EQ_INT(c->want_true, true_size);
	if (c->want)
		T_EQ_STR(c->want, buf);
	if (c->size)
		T_EQ_INT('X', buf[c->size]); /* nothing written past the buffer */
}

static void check_attrs(void)
{
	struct brt_vlog log;
	char buf[4];

	T_CASE("attributes");
	T_EQ_INT(-EINVAL, brt_vlog_init(&log, 1, buf, 0));
	T_EQ_INT(-EINVAL, brt_vlog_init(&log, 1, NULL, 4));
	T_EQ_INT(-EINVAL, brt_vlog_init(&log, 0, buf, 4));
	T_EQ_INT(-EINVAL, brt_vlog_init(&log, 16, buf, 4));
	T_EQ_INT(-EINVAL, brt_vlog_init(&log, 1, buf, UINT32_MAX));
	T_EQ_INT(0, brt_vlog_init(&log, 0, NULL, 0));
	T_EQ_INT(0, brt_vlog_init(&log, BRT_LOG_STATS, buf, 4));
}

static void check_long_message(void)
{
	static char big[2000], buf[4096];
	struct brt_vlog log;
	uint32_t true_size;

	T_CASE("message over 1 KiB is cut like the kernel's");
	memset(big, 'a', sizeof(big) - 1);
	brt_vlog_init(&log, 1, buf, sizeof(buf));
	brt_vlog(&log, "%s", big);
	T_EQ_INT(0, brt_vlog_finalize(&log, &true_size));
	T_EQ_INT(BRT_VLOG_TMP, true_size);
	T_EQ_INT(BRT_VLOG_TMP - 1, strlen(buf));
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	check_attrs();
	check_long_message();
	return t_done();
}
