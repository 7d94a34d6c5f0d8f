/* corpus_report.c - the corpus differential's figures (corpus_diff.c says how it works):
 * bpfrt's refusals by category, the per-program table, the totals by project, and the
 * checks against baseline.txt (known false accepts, known run differences, floors).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "bpfrt.h"
#include "corpus_diff.h"
#include "host_kernel.h"

/* ---- refusal categories ---- */

void categorise(struct result *r)
{
	const char *w = r->bpfrt_why;
	const char *p;

	if (r->bpfrt != V_REFUSED)
		return;
	if (!strncmp(w, "elf:", 4) || strstr(w, "open:")) {
		/* "elf: NAME: section N 'S' offset 0xX: what": keep the what */
		p = strstr(w, ": ");
		p = p ? strstr(p + 2, ": ") : NULL;
		while (p && strstr(p + 2, ": ") && !strstr(p, "map '"))
			p = strstr(p + 2, ": ");
		snprintf(r->category, sizeof(r->category), "object format: %.90s",
			 p ? p + 2 : w);
	} else if ((p = strstr(w, "BPF_MAP_CREATE (type "))) {
		snprintf(r->category, sizeof(r->category), "map type %.*s",
			 (int)strcspn(p + 21, ","), p + 21);
	} else if ((p = strstr(w, "unknown func ")) || (p = strstr(w, "helper "))) {
		snprintf(r->category, sizeof(r->category), "helper: %.100s", p);
	} else if ((p = strstr(w, ", type ")) && strstr(p, "): BPF_PROG_LOAD: ")) {
		/* the loader's line without a verifier log: the type itself is refused */
		snprintf(r->category, sizeof(r->category), "program type %.*s: %s",
			 (int)strcspn(p + 7, ")"), p + 7, strstr(p, "BPF_PROG_LOAD: ") + 15);
	} else if (strstr(w, "program type") || strstr(w, "prog_type")) {
		snprintf(r->category, sizeof(r->category), "program type %s",
			 libbpf_bpf_prog_type_str(r->type));
	} else if (strstr(w, "names no program type")) {
		snprintf(r->category, sizeof(r->category), "section name");
	} else {
		/* verifier and others: the message with numbers taken out */
		char *d = r->category;
		size_t n = 0;

		for (p = w; *p && n < sizeof(r->category) - 1; p++) {
			if (*p >= '0' && *p <= '9') {
				if (n && d[n - 1] == '#')
					continue;
				d[n++] = '#';
			} else {
				d[n++] = *p;
			}
		}
		d[n] = 0;
	}
}

/* The kernel refused r only because it lacks a helper upstream 6.18 grants the program's
 * type (its last line "... cannot use helper NAME#ID", tests/host_kernel.h probes it):
 * not a false accept of bpfrt's, which implements upstream. */
static int host_deviation(const struct result *r)
{
	const char *p = strstr(r->kernel_why, "cannot use helper ");
	const char *hash = p ? strrchr(p, '#') : NULL;

	return hash && host_refuses_helper((uint32_t)r->type, (int32_t)atoi(hash + 1));
}

struct totals {
	size_t progs, kernel_ok, bpfrt_ok, both_ok, false_accept, both_refused, errno_agree;
	size_t type_found, runs, runs_same, runs_known, kernel_na, libbpf_gave_up, maps_compared;
	size_t host; /* refused by a kernel that is not upstream 6.18 there, accepted by bpfrt */
	double kernel_ms, bpfrt_ms, both_kernel_ms, both_bpfrt_ms;
};

struct cat { char name[128]; size_t n; };

static int cmp_cat(const void *a, const void *b)
{
	const struct cat *x = a, *y = b;

	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

static void print_categories(FILE *out)
{
	struct cat *cats = calloc(nresults + 1, sizeof(*cats));
	size_t ncats = 0;

	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		size_t c;

		if (r->kernel != V_OK || r->bpfrt != V_REFUSED)
			continue;
		for (c = 0; c < ncats && strcmp(cats[c].name, r->category); c++)
			;
		if (c == ncats)
			snprintf(cats[ncats++].name, sizeof(cats[0].name), "%s", r->category);
		cats[c].n++;
	}
	qsort(cats, ncats, sizeof(*cats), cmp_cat);
	fprintf(out, "bpfrt refusals of programs the kernel accepts, by reason:\n");
	for (size_t c = 0; c < ncats; c++)
		fprintf(out, "  %4zu  %s\n", cats[c].n, cats[c].name);
	free(cats);
}

/* processed insns of the programs both accept, bpfrt / kernel: the ratio's distribution */
static void print_processed(FILE *out)
{
	static const double edge[] = { 0.9, 0.999999, 1.000001, 1.1, 1.5, 3.0, 10.0 };
	static const char *const label[] = { "< 0.9", "0.9-1.0", "= 1.0", "1.0-1.1", "1.1-1.5",
					     "1.5-3", "3-10", "> 10" };
	size_t bucket[8] = { 0 }, n = 0;
	uint64_t sk = 0, sb = 0;

	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		double q;
		int b = 0;

		if (!r->kernel_insns || !r->bpfrt_insns)
			continue;
		q = (double)r->bpfrt_insns / (double)r->kernel_insns;
		while (b < 7 && q >= edge[b])
			b++;
		bucket[b]++;
		n++;
		sk += r->kernel_insns;
		sb += r->bpfrt_insns;
	}
	fprintf(out, "processed insns, bpfrt / kernel, %zu programs both accept (sum %llu / %llu):",
		n, (unsigned long long)sb, (unsigned long long)sk);
	for (int b = 0; b < 8; b++)
		fprintf(out, " %s: %zu;", label[b], bucket[b]);
	fprintf(out, "\n");
	{
		uint64_t tk = 0, tb = 0;
		size_t nt = 0, faster = 0;

		for (size_t i = 0; i < nresults; i++) {
			const struct result *r = &results[i];

			if (!r->kernel_insns || !r->bpfrt_insns || !r->timed)
				continue;
			nt++;
			tk += r->kernel_us;
			tb += r->bpfrt_us;
			faster += r->bpfrt_us <= r->kernel_us;
		}
		fprintf(out, "verification time (the logs' line), %zu programs both accept: "
			"kernel %llu usec, bpfrt %llu usec; bpfrt at or below the kernel on %zu\n",
			nt, (unsigned long long)tk, (unsigned long long)tb, faster);
	}
}

static const char *vname(enum verdict v)
{
	return v == V_OK ? "ok" : v == V_REFUSED ? "refused" : "n/a";
}

/* The figures of one project ("" for the whole corpus): the key's first component. */
static void count(struct totals *t, const char *proj)
{
	size_t plen = strlen(proj);

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		if (plen && (strncmp(r->key, proj, plen) || r->key[plen] != '/'))
			continue;
		if (r->kernel == V_NA) {
			t->kernel_na++;
			continue;
		}
		t->progs++;
		t->kernel_ok += r->kernel == V_OK;
		t->bpfrt_ok += r->bpfrt == V_OK;
		t->both_ok += r->kernel == V_OK && r->bpfrt == V_OK;
		t->type_found += r->type_found;
		t->libbpf_gave_up += r->libbpf_gave_up;
		if (r->kernel == V_REFUSED && r->bpfrt == V_OK && host_deviation(r))
			t->host++;
		else
			t->false_accept += r->kernel == V_REFUSED && r->bpfrt == V_OK;
		if (r->kernel == V_REFUSED && r->bpfrt == V_REFUSED) {
			t->both_refused++;
			t->errno_agree += r->kernel_err == r->bpfrt_err;
		}
		t->runs += r->run != 0;
		t->runs_same += r->run > 0;
		t->runs_known += r->run == -2;
		t->maps_compared += r->maps_compared;
		t->kernel_ms += r->kernel_ms;
		t->bpfrt_ms += r->bpfrt_ms;
		if (r->kernel == V_OK && r->bpfrt == V_OK) {
			t->both_kernel_ms += r->kernel_ms;
			t->both_bpfrt_ms += r->bpfrt_ms;
		}
	}
}

static void print_projects(FILE *out, char **projs, size_t nproj)
{
	fprintf(out, "by project: programs, kernel accepts, bpfrt accepts too, false accepts, "
		"both refuse (same errno), test runs (same result; differ for a known reason)\n");
	for (size_t i = 0; i < nproj; i++) {
		struct totals t;

		count(&t, projs[i]);
		fprintf(out, "  %-20s %5zu %5zu %5zu %3zu %5zu (%zu) %4zu (%zu; %zu)\n", projs[i],
			t.progs, t.kernel_ok, t.both_ok, t.false_accept, t.both_refused,
			t.errno_agree, t.runs, t.runs_same, t.runs_known);
	}
}

/* baseline.txt's "known KEY" lines: false accepts understood and not (yet) fixed, each
 * with its reason in the file.  Returns how many of the run's false accepts they name
 * (each printed); the others fail the test. */
static size_t known_false_accepts(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], key[512];
	size_t n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "known %511s", key) != 1)
			continue;
		for (size_t i = 0; i < nresults; i++) {
			const struct result *r = &results[i];

			if (r->kernel == V_REFUSED && r->bpfrt == V_OK && !strcmp(r->key, key)) {
				printf("known false accept: %s (baseline.txt says why)\n", key);
				n++;
			}
		}
	}
	fclose(f);
	return n;
}

/* baseline.txt's "differs GLOB REASON" lines: test runs whose result depends on what the
 * two sides cannot share (a random number, a clock, a kernel or user-space address the
 * program returns or writes, uninitialised stack), each with its reason.  A differing run
 * of a program GLOB matches is counted apart ("differ for a known reason") with that
 * reason; any other difference is printed as one to fix. */
void known_run_differences(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], glob[256];
	int n;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "differs %255s %n", glob, &n) != 1)
			continue;
		line[strcspn(line, "\n")] = 0;
		for (size_t i = 0; i < nresults; i++) {
			struct result *r = &results[i];

			if (r->run == -1 && !fnmatch(glob, r->key, 0)) {
				r->run = -2;
				r->run_why = strdup(line + n);
			}
		}
	}
	fclose(f);
}

/* baseline.txt's floors, "floor PROJECT N": bpfrt must accept at least N of the programs
 * of PROJECT the kernel accepts; "runs PROJECT N": at least N test runs give the kernel's
 * result or differ only for a known reason (one that flips between the two, such as
 * stack bytes never written that happen to be equal, moves no floor); "errno PROJECT N":
 * at least N programs both refuse with the same errno.  A project the corpus lacks (not built here) is not
 * checked, so a corpus of fewer projects passes as well as the full one.  Returns 1 when
 * one is below its floor. */
static int check_floors(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], proj[128];
	long v;
	int fail = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct totals t;

		char what[16];
		size_t have;

		if (sscanf(line, "%15s %127s %ld", what, proj, &v) != 3)
			continue;
		count(&t, proj);
		if (!t.progs)
			continue;
		if (!strcmp(what, "floor"))
			have = t.both_ok + t.host; /* upstream accepts those: bpfrt does */
		else if (!strcmp(what, "runs")) {
			have = t.runs_same + t.runs_known;
			/* a program the host kernel refuses (a host deviation) has no kernel
			 * run to compare with; the floor was set on kernels that ran it */
			if (t.host) {
				v -= (long)t.host;
				printf("note: %s: runs floor less %zu host kernel deviations (no "
				       "kernel run to compare with): %ld\n", proj, t.host, v);
			}
		}
		else if (!strcmp(what, "errno"))
			have = t.errno_agree;
		else
			continue;
		if ((long)have < v) {
			printf("FAIL: %s: %s %zu, below the floor %ld of %s\n", proj,
			       !strcmp(what, "floor") ? "bpfrt accepts of the kernel's programs" :
			       !strcmp(what, "runs") ? "test runs without an unexplained difference" :
			       "both refuse with the same errno", have, v, path);
			fail = 1;
		}
	}
	fclose(f);
	return fail;
}


void print_results(const char *report)
{
	FILE *rep = report ? fopen(report, "w") : NULL;

	if (rep)
		fprintf(rep, "program\tsection\ttype\tkernel\tbpfrt\tkernel_errno\tbpfrt_errno\t"
			"type_found\ttest_run\tcategory\tbpfrt_reason\tkernel_reason\t"
			"kernel_insns\tbpfrt_insns\tkernel_us\tbpfrt_us\ttest_run_diff\t"
			"log\tlog_lines_same\tlog_lines\tlog_first_diff\n");
	for (size_t i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		if (rep)
			fprintf(rep, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%u\t%u\t%llu\t%llu"
				"\t%s%s%s",
				r->key,
				r->sec, libbpf_bpf_prog_type_str(r->type) ?
					libbpf_bpf_prog_type_str(r->type) : "?",
				vname(r->kernel), vname(r->bpfrt), r->kernel_err, r->bpfrt_err,
				r->type_found, r->run, r->category, r->bpfrt_why, r->kernel_why,
				r->kernel_insns, r->bpfrt_insns, (unsigned long long)r->kernel_us,
				(unsigned long long)r->bpfrt_us, r->run_diff,
				r->run_why ? "; known: " : "", r->run_why ? r->run_why : "");
		if (rep) /* the log columns: same, differs or - (not compared) */
			fprintf(rep, "\t%s\t%u\t%u\t", r->log_cmp > 0 ? "same" :
				r->log_cmp < 0 ? "differs" : "-", r->log_same, r->log_lines);
		if (rep && r->log_cmp < 0)
			fprintf(rep, "line %u: kernel `%s` / bpfrt `%s`", r->log_line,
				r->log_kernel, r->log_bpfrt);
		if (rep)
			fprintf(rep, "\n");
		if (r->kernel == V_REFUSED && r->bpfrt == V_OK)
			printf("%s: %s (section %s, %s): kernel: %s\n",
			       host_deviation(r) ? "host kernel deviation" : "FALSE ACCEPT", r->key,
			       r->sec, libbpf_bpf_prog_type_str(r->type), r->kernel_why);
		if (r->run == -1)
			printf("TEST RUN DIFFERS: %s: %s\n", r->key, r->run_diff);
		else if (r->run == -2 && verbose)
			printf("test run differs (known: %s): %s: %s\n", r->run_why, r->key,
			       r->run_diff);
	}
	if (rep)
		fclose(rep);
}

void print_totals(const char *dir, char **projs, size_t nproj, size_t unreadable)
{
	struct totals t;

	count(&t, "");
	printf("corpus %s: %zu projects, %zu programs (%zu more with no known type)\n", dir,
	       nproj, t.progs, t.kernel_na);
	printf("  objects neither libbpf nor bpfrt opens: %zu\n", unreadable);
	printf("  libbpf gave up before the kernel (kernel verdict through bpfrt's loader): %zu\n",
	       t.libbpf_gave_up);
	printf("  kernel accepts        %zu\n", t.kernel_ok);
	printf("  bpfrt accepts         %zu (%.1f %% of the kernel's; %zu both)\n", t.bpfrt_ok,
	       t.kernel_ok ? 100.0 * (double)t.both_ok / (double)t.kernel_ok : 0.0, t.both_ok);
	printf("  false accepts         %zu\n", t.false_accept);
	if (t.host)
		printf("  host kernel deviation %zu (the kernel lacks a helper upstream grants: "
		       "tests/host_kernel.h; counted with both accept for the floors)\n", t.host);
	printf("  both refuse           %zu, same errno %zu\n", t.both_refused, t.errno_agree);
	printf("  section type found    %zu of %zu\n", t.type_found, t.progs);
	printf("  test runs             %zu, same result %zu, differ for a known reason %zu "
	       "(result: errno, retval, output packet, and %zu data maps read after the runs)\n",
	       t.runs, t.runs_same, t.runs_known, t.maps_compared);
	/* one pass, each program loaded alone: wall time, so a shared machine shows in it */
	printf("  load time (open + load/verify + close, one pass): every program: kernel "
	       "%.0f ms, bpfrt %.0f ms (%.2fx); the %zu both accept: kernel %.0f ms, bpfrt "
	       "%.0f ms (%.2fx)\n", t.kernel_ms, t.bpfrt_ms,
	       t.kernel_ms > 0 ? t.bpfrt_ms / t.kernel_ms : 0.0, t.both_ok, t.both_kernel_ms,
	       t.both_bpfrt_ms, t.both_kernel_ms > 0 ? t.both_bpfrt_ms / t.both_kernel_ms : 0.0);
	print_projects(stdout, projs, nproj);
	print_categories(stdout);
	print_processed(stdout);
	print_logs(stdout);
}

void print_progress(const char *proj, size_t i, size_t nproj, double seconds)
{
	struct totals p, t;

	count(&p, proj);
	count(&t, "");
	printf("progress: %zu/%zu %s: %zu programs, kernel accepts %zu, bpfrt too %zu, false "
	       "accepts %zu, both refuse %zu (same errno %zu); so far %zu programs, %zu, %zu, "
	       "%zu, %zu (%zu); %.1f s\n", i, nproj, proj, p.progs, p.kernel_ok, p.both_ok,
	       p.false_accept, p.both_refused, p.errno_agree, t.progs, t.kernel_ok, t.both_ok,
	       t.false_accept, t.both_refused, t.errno_agree, seconds);
	fflush(stdout);
}

int check_baseline(const char *path, int floors)
{
	struct totals t;
	int fail = 0;

	count(&t, "");
	if (t.false_accept) {
		size_t known = known_false_accepts(path);

		if (t.false_accept > known) {
			printf("FAIL: bpfrt accepts %zu programs the kernel refuses (%zu of them "
			       "known, %s)\n", t.false_accept, known, path);
			fail = 1;
		}
	}
	if (floors && check_floors(path))
		fail = 1;
	return fail;
}
