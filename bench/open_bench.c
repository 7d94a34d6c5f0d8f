/* open_bench.c - the open of eBPF ELF objects alone: bpfrt_object_open_file() against
 * libbpf's bpf_object__open_file() (when built with it), each timed in this thread's CPU
 * time (a loaded machine's waits do not count), closes untimed.  The sides take turns
 * object by object, the side that goes first alternating pass by pass.  A first, untimed
 * open of every object on every side leaves per-process state warm (bpfrt's vmlinux BTF
 * when an open needs it).  Objects a side cannot open are listed and left out of the
 * ratios.  Prints per object "OBJ <path> bpfrt <min> <median> libbpf <min> <median>
 * ratio <median ratio>" (microseconds), then the distribution of the ratios of medians:
 * median, the 5 worst and the 5 best; then that of the ratios of mins (MINRATIO: an
 * object above 1.0 by its median alone may be a noisy pass's, not bpfrt's).
 * Usage: open_bench [-n PASSES] [-q] OBJ...   (-q: only the summary) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfrt.h"
#ifdef HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif
#include "quiet.h"

enum side { BPFRT, LIBBPF, NSIDES };
static const char *const side_names[NSIDES] = { "bpfrt", "libbpf" };

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Open and close path on side s; the open's CPU time in *us.  0 or -errno. */
static int open_once(enum side s, const char *path, double *us)
{
	double t0 = cpu_us();

	if (s == BPFRT) {
		struct bpfrt_object *obj = bpfrt_object_open_file(path, NULL);

		*us = cpu_us() - t0;
		if (!obj)
			return -errno;
		bpfrt_object_close(obj);
		return 0;
	}
#ifdef HAVE_LIBBPF
	{
		struct bpf_object *obj = bpf_object__open_file(path, NULL);

		*us = cpu_us() - t0;
		if (!obj)
			return -errno;
		bpf_object__close(obj);
		return 0;
	}
#else
	return -EOPNOTSUPP;
#endif
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct row {
	const char *path;
	int ok[NSIDES];
	double min[NSIDES], med[NSIDES];
	double ratio;
	double min_ratio; /* of the mins: -1 when no ratio */
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->ratio < y->ratio ? -1 : x->ratio > y->ratio;
}

int main(int argc, char **argv)
{
	int passes = 11, summary_only = 0, first = 1, nobj;
	struct row *rows;
	double *samples;

	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "-n") && first + 1 < argc)
			passes = atoi(argv[++first]);
		else if (!strcmp(argv[first], "-q"))
			summary_only = 1;
		else
			break;
	}
	nobj = argc - first;
	if (nobj <= 0 || passes <= 0) {
		fprintf(stderr, "usage: open_bench [-n PASSES] [-q] OBJ...\n");
		return 2;
	}
	bpfrt_set_print(quiet);
#ifdef HAVE_LIBBPF
	libbpf_set_print(libbpf_quiet);
#endif
	rows = calloc((size_t)nobj, sizeof(*rows));
	samples = calloc((size_t)nobj * NSIDES * (size_t)passes, sizeof(*samples));
	if (!rows || !samples)
		return 1;
	for (int o = 0; o < nobj; o++) {
		rows[o].path = argv[first + o];
		for (int s = 0; s < NSIDES; s++) {
			double us;

			rows[o].ok[s] = !open_once((enum side)s, rows[o].path, &us);
		}
	}
	for (int p = 0; p < passes; p++)
		for (int o = 0; o < nobj; o++)
			for (int k = 0; k < NSIDES; k++) {
				int s = (k + p + o) % NSIDES;
				double *at = &samples[((size_t)o * NSIDES + s) * passes + p];

				if (rows[o].ok[s])
					open_once((enum side)s, rows[o].path, at);
			}
	int nratio = 0;
	for (int o = 0; o < nobj; o++) {
		struct row *r = &rows[o];

		for (int s = 0; s < NSIDES; s++) {
			double *v = &samples[((size_t)o * NSIDES + s) * passes];

			if (!r->ok[s])
				continue;
			r->med[s] = median(v, (size_t)passes);
			r->min[s] = v[0];
		}
		r->ratio = r->ok[BPFRT] && r->ok[LIBBPF] && r->med[LIBBPF] > 0
				   ? r->med[BPFRT] / r->med[LIBBPF] : -1;
		r->min_ratio = r->ratio >= 0 && r->min[LIBBPF] > 0 ? r->min[BPFRT] / r->min[LIBBPF]
								      : -1;
		nratio += r->ratio >= 0;
		if (summary_only)
			continue;
		printf("OBJ %s", r->path);
		for (int s = 0; s < NSIDES; s++)
			if (r->ok[s])
				printf(" %s %.1f %.1f", side_names[s], r->min[s], r->med[s]);
			else
				printf(" %s - -", side_names[s]);
		if (r->ratio >= 0)
			printf(" ratio %.3f", r->ratio);
		printf("\n");
	}
	qsort(rows, (size_t)nobj, sizeof(*rows), cmp_row);
	{
		int lo = nobj - nratio; /* rows without a ratio sort first (-1) */
		double sum[NSIDES] = { 0 };

		for (int o = lo; o < nobj; o++)
			for (int s = 0; s < NSIDES; s++)
				sum[s] += rows[o].med[s];
		int only[NSIDES] = { 0 };

		for (int o = 0; o < lo; o++)
			for (int s = 0; s < NSIDES; s++)
				only[s] += rows[o].ok[s];
		printf("SUMMARY %d objects, %d opened by both, %d by bpfrt only, %d by libbpf "
		       "only, %d passes\n",
		       nobj, nratio, only[BPFRT], only[LIBBPF], passes);
		if (nratio) {
			int mid = lo + nratio / 2;
			double med = nratio % 2 ? rows[mid].ratio
						: (rows[mid - 1].ratio + rows[mid].ratio) / 2;
			int above = 0;

			for (int o = lo; o < nobj; o++)
				above += rows[o].ratio > 1.0;
			printf("RATIO median %.3f, min %.3f, max %.3f, above 1.0: %d of %d; sum of "
			       "medians bpfrt %.0f us, libbpf %.0f us (%.3f)\n",
			       med, rows[lo].ratio, rows[nobj - 1].ratio, above, nratio, sum[BPFRT],
			       sum[LIBBPF], sum[LIBBPF] > 0 ? sum[BPFRT] / sum[LIBBPF] : 0);
			{
				double *mr = malloc((size_t)nratio * sizeof(*mr));
				int n = 0, mabove = 0;

				for (int o = lo; o < nobj && mr; o++)
					if (rows[o].min_ratio >= 0) {
						mr[n++] = rows[o].min_ratio;
						mabove += rows[o].min_ratio > 1.0;
					}
				if (n) {
					double mmed = median(mr, (size_t)n); /* sorts mr */

					printf("MINRATIO median %.3f, max %.3f, above 1.0: %d of %d\n",
					       mmed, mr[n - 1], mabove, n);
				}
				free(mr);
			}
			for (int o = nobj - 1; o >= lo && o >= nobj - 5; o--)
				printf("WORST %.3f %s bpfrt %.1f / %.1f libbpf %.1f / %.1f min %.3f\n",
				       rows[o].ratio, rows[o].path, rows[o].min[BPFRT],
				       rows[o].med[BPFRT], rows[o].min[LIBBPF], rows[o].med[LIBBPF],
				       rows[o].min_ratio);
			for (int o = lo; o < nobj && o < lo + 5; o++)
				printf("BEST %.3f %s bpfrt %.1f / %.1f libbpf %.1f / %.1f\n",
				       rows[o].ratio, rows[o].path, rows[o].min[BPFRT],
				       rows[o].med[BPFRT], rows[o].min[LIBBPF], rows[o].med[LIBBPF]);
		}
		for (int o = 0; o < lo; o++)
			printf("ONLY %s %s\n", rows[o].ok[BPFRT] ? "bpfrt" : rows[o].ok[LIBBPF] ?
				"libbpf" : "neither", rows[o].path);
	}
	free(rows);
	free(samples);
	return 0;
}
