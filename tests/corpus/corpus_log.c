/* corpus_log.c - the corpus differential's verifier logs (corpus_diff.c says how it works):
 * each side's log of a program, compared line by line with the kernel's (#16, "message for
 * message").
 *
 * Programs both accept are compared on the log of the run itself (level 4, the statistics
 * level): "processed N insns ...", "stack depth ..." and whatever else the verifier keeps
 * of an accepted program.  Its level-1 log is the same text but for the "Func#N ... is safe"
 * line of the last global function, since both verifiers drop everything else of a path
 * that ends well (the kernel's bpf_vlog_reset).  Programs both refuse are loaded once more
 * on each side at level 1|4, so the whole path to the refusal is compared (the run's level
 * 4 has only the message): a reload of a refused program costs its walk to the error.
 * "verification time N usec" is left out of both sides (a clock); a map lddw's operand is
 * normalised (tests/log_lines.h).  A line counts as identical when it is in the longest
 * common subsequence of the two logs, out of the kernel's lines.  Nothing is compared with
 * -l (the logs are level 2 then).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_diff.h"
#include "../log_lines.h"

int log_level_req = 4;
char *side_log[2];
/* a side's log filled its buffer: the kernel's rolling log then keeps only its end, cut
 * mid-line at another place than bpfrt's, so the two are not compared */
static int side_cut[2];

/* log without bpfrt's loader lines (everything up to its "...: BPF_PROG_LOAD: ..." line
 * comes before the verifier's) and without the "verification time" line, as side's */
void keep_log(int side, const char *log)
{
	const char *at;
	char *out, *v;
	size_t n;

	free(side_log[side]);
	side_log[side] = NULL;
	if (!log)
		log = "";
	/* bpfrt's object log has its loader's line before the verifier's log */
	side_cut[side] = strlen(log) + 2 >= LOG1_SIZE;
	if (side == 1 || strstr(log, "): BPF_PROG_LOAD: ")) {
		at = strstr(log, "): BPF_PROG_LOAD: ");
		if (at && (at = strchr(at, '\n')))
			log = at + 1;
	}
	n = strlen(log);
	out = malloc(n + 1);
	if (!out)
		return;
	memcpy(out, log, n + 1);
	/* its own line, or the end of a message that has no newline (the kernel's "insn N
	 * cannot call exception cb directly"): the message stays */
	if ((v = strstr(out, "verification time ")) && v[18] >= '0' && v[18] <= '9') {
		char *e = strchr(v, '\n');

		e = e ? e + (v == out || v[-1] == '\n') : v + strlen(v);
		memmove(v, e, strlen(e) + 1);
	}
	side_log[side] = out;
}

/* A line with its numbers as '#', for the clusters of first differences */
static void squash(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	for (; *src && n + 1 < len; src++) {
		if (*src >= '0' && *src <= '9') {
			if (n && dst[n - 1] == '#')
				continue;
			dst[n++] = '#';
		} else {
			dst[n++] = *src;
		}
	}
	dst[n] = 0;
}

void compare_logs(struct result *r)
{
	struct lines k, b;
	size_t same, first = 0;

	r->log_cmp = 0;
	r->log_cut = side_cut[0] || side_cut[1];
	if (!side_log[0] || !side_log[1] || !side_log[0][0] || r->log_cut)
		return;
	split(side_log[0], &k);
	split(side_log[1], &b);
	if (!k.v || !b.v) {
		free(k.v);
		free(b.v);
		return;
	}
	same = lcs(&k, &b);
	r->log_lines = (uint32_t)k.n;
	r->log_same = (uint32_t)(same < k.n ? same : k.n);
	if (same == k.n && k.n == b.n) {
		r->log_cmp = 1;
	} else {
		r->log_cmp = -1;
		while (first < k.n && first < b.n && !strcmp(k.v[first], b.v[first]))
			first++;
		r->log_line = (uint32_t)first + 1;
		snprintf(r->log_kernel, sizeof(r->log_kernel), "%s",
			 first < k.n ? k.v[first] : "(end)");
		snprintf(r->log_bpfrt, sizeof(r->log_bpfrt), "%s",
			 first < b.n ? b.v[first] : "(end)");
	}
	free(k.v);
	free(b.v);
}

struct cluster {
	char k[128], b[128];
	size_t n;
};

static int cmp_cluster(const void *x, const void *y)
{
	const struct cluster *a = x, *b = y;

	return a->n != b->n ? (a->n < b->n ? 1 : -1) : strcmp(a->k, b->k);
}

/* one group's figures (both accept: ok 1; both refuse: ok 0) and its biggest clusters of
 * first differing lines */
static void print_group(FILE *out, int ok, const char *what)
{
	enum verdict v = ok ? V_OK : V_REFUSED;
	size_t progs = 0, same = 0, cap = 0, nc = 0, cut = 0;
	unsigned long long lines = 0, lines_same = 0;
	struct cluster *cl = NULL;

	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		char kq[128], bq[128];
		size_t c;

		if (r->kernel != v || r->bpfrt != v || !r->log_cmp) {
			cut += r->kernel == v && r->bpfrt == v && r->log_cut;
			continue;
		}
		progs++;
		lines += r->log_lines;
		lines_same += r->log_same;
		if (r->log_cmp > 0) {
			same++;
			continue;
		}
		squash(kq, sizeof(kq), r->log_kernel);
		squash(bq, sizeof(bq), r->log_bpfrt);
		for (c = 0; c < nc && (strcmp(cl[c].k, kq) || strcmp(cl[c].b, bq)); c++)
			;
		if (c == nc) {
			if (nc == cap) {
				struct cluster *m = realloc(cl, (cap = cap ? 2 * cap : 64) * sizeof(*m));

				if (!m)
					break;
				cl = m;
			}
			memcpy(cl[nc].k, kq, sizeof(kq));
			memcpy(cl[nc].b, bq, sizeof(bq));
			cl[nc++].n = 0;
		}
		cl[c].n++;
	}
	fprintf(out, "verifier logs, %s: %zu programs compared, identical %zu; lines identical "
		"%llu of the kernel's %llu (%.2f %%); %zu not compared (a log past %u MiB)\n",
		what, progs, same, lines_same, lines,
		lines ? 100.0 * (double)lines_same / (double)lines : 100.0, cut, LOG1_SIZE >> 20);
	if (nc)
		qsort(cl, nc, sizeof(*cl), cmp_cluster);
	for (size_t c = 0; c < nc && c < 12; c++)
		fprintf(out, "  %4zu  first difference: kernel `%s` / bpfrt `%s`\n", cl[c].n,
			cl[c].k, cl[c].b);
	free(cl);
}

void print_logs(FILE *out)
{
	if (logdir)
		return;
	print_group(out, 1, "both accept (level 4: statistics)");
	print_group(out, 0, "both refuse (level 1|4: the path to the refusal)");
}
