/* corpus_diff.c - the real-world corpus (docs/CORPUS.md) loaded program by program into
 * the kernel and into bpfrt (issue #15), with the verdicts compared.
 *
 * usage: corpus_diff [-v] [-r REPORT.tsv] [-b BASELINE] [-p GLOB [-l LOGDIR [-F]]] [-s N] [CORPUS_DIR]
 *
 * -v prints libbpf's messages of refusals, each differing test run with the bytes that
 * differ, and the runs that differ for a known reason; -r writes the per-program table.
 * -p GLOB loads only the programs whose "project/file.o:name" matches (no baseline check;
 * every program, where a whole run loads every Nth of a project baseline.txt samples);
 * -l LOGDIR then writes both verifiers' level-2 logs there (KEY.kernel.log, KEY.bpfrt.log,
 * '/' in the key as '_'), to see where the processed-insn counts part; each side's buffer
 * is 64 MiB and keeps a longer log's end (the kernel's rotating log; the load fails with
 * ENOSPC), or with -F its beginning (BPF_LOG_FIXED: where two long walks first part; the
 * kernel's side then loads through bpfrt's loader in kernel mode, as libbpf refuses the flag).
 * -s N (or BPFRT_CORPUS_SAMPLE=N) loads only every Nth object of the walk (no floor check):
 * the sanitizer builds run the corpus for memory errors in the loader and verifier, which a
 * quarter of the objects finds at a quarter of the cost; the release build runs it whole.
 *
 * The kernel side is libbpf (libbpf-dev): the loader these programs are written for (CO-RE,
 * its section names, its map formats), so "the kernel accepts" means what a user of the
 * project sees.  An object libbpf cannot open (iproute2's struct bpf_elf_map, the samples'
 * maps section) goes through bpfrt's own object loader in kernel mode (the real bpf(2))
 * instead.  The bpfrt side is bpfrt_object_* with bpfrt_bpf().  Each program is loaded
 * alone (autoload off for the others), with the program type the kernel side used: the
 * section's, or for sections that name none the type the project's loader gives
 * (types.txt next to this file), so the comparison is of verifiers, helpers and maps, and
 * whether bpfrt found that type from the section on its own is counted separately.
 *
 * Per program: kernel verdict, bpfrt verdict, and when both refuse, whether the errno
 * agrees ("first-error agreement"); for packet programs both accept, one BPF_PROG_TEST_RUN
 * on a fixed UDP packet, compared on errno, retval and output packet; for syscall programs,
 * one run on a zeroed context, compared on errno and retval.  A run that differs is
 * printed (TEST RUN DIFFERS) unless baseline.txt names it with the reason ("differs": a
 * random number, a clock, an address), and then counted apart.  bpfrt refusals are put into
 * categories (helper, map type, program type, object format, section name, ...) printed at
 * the end.  Exit 1 when bpfrt accepts a program the kernel refuses or accepts fewer programs
 * than the baseline's floor; 77 (skipped) without the corpus, libbpf or root.
 *
 * This file walks the corpus and drives each program; the loads are corpus_load.c, the
 * comparisons corpus_compare.c, the figures and baseline checks corpus_report.c
 * (corpus_diff.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfrt.h"
#include "corpus_diff.h"

int verbose;
const char *logdir;
int logdir_fixed;
char kpin[128];            /* bpffs of our own for the kernel side's pins */
static char bfs[64];       /* $BPFRT_FS for the bpfrt side */
static const char *only;   /* -p: glob over "project/file.o:name" */
static size_t unreadable;  /* objects neither libbpf nor bpfrt opens */
static long sample = 1;    /* -s: every Nth object */

/* baseline.txt's "sample PROJECT N": a whole run (no -p) loads only every Nth program of
 * PROJECT, counted across its objects in name order (programs in object order; the count
 * runs on from one object to the next, so objects of the same few programs, as Calico's,
 * are not all sampled at their first), a fixed rule that keeps a project of many costly
 * programs (Tracee's 171 in one 10 MB CO-RE object, each load opening it whole) within
 * CI's time; -p loads them all. */
static struct { char proj[64]; long every; } prog_samples[16];
static size_t nprog_samples;

/* baseline.txt's "unsampled PROJECT": a sampled run (-s N > 1, CI's ASan step) leaves the
 * project out: programs of millions of processed instructions (loxilb's) that a sanitiser
 * build verifies for longer than the step's budget; the release step loads them. */
static char unsampled[16][64];
static size_t nunsampled;

static void read_prog_samples(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (nprog_samples < 16 &&
		    sscanf(line, "sample %63s %ld", prog_samples[nprog_samples].proj,
			   &prog_samples[nprog_samples].every) == 2 &&
		    prog_samples[nprog_samples].every > 0)
			nprog_samples++;
		else if (nunsampled < 16 && sscanf(line, "unsampled %63s", unsampled[nunsampled]) == 1)
			nunsampled++;
	}
	fclose(f);
}

static int left_out(const char *proj)
{
	for (size_t i = 0; sample > 1 && i < nunsampled; i++)
		if (!strcmp(unsampled[i], proj))
			return 1;
	return 0;
}

static long prog_every(const char *proj)
{
	for (size_t i = 0; !only && i < nprog_samples; i++)
		if (!strcmp(prog_samples[i].proj, proj))
			return prog_samples[i].every;
	return 1;
}

/* Is the next program of proj (in walk order) one its sample loads? */
static int sampled(const char *proj)
{
	static char cur[64];
	static size_t seq; /* programs of cur seen so far */

	if (strcmp(cur, proj)) {
		snprintf(cur, sizeof(cur), "%s", proj);
		seq = 0;
	}
	return seq++ % (size_t)prog_every(proj) == 0;
}

static double start_ms; /* the walk's start (progress lines) */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- driver ---- */

static void rm_tree(const char *path);

/* Pins left by one program's load (tc's pinned prog arrays keep their programs) must not
 * reach the next: each program is measured alone. */
static void clear_pins(void)
{
	struct dirent *e;
	DIR *d;

	for (int k = 0; k < 2; k++) {
		const char *root = k ? bfs : kpin;
		char sub[512];

		if (!root[0] || !(d = opendir(root)))
			continue;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", root, e->d_name);
			/* a pin is a file, tc's globals a directory of them */
			if (e->d_type == DT_DIR)
				rm_tree(sub);
			else
				unlink(sub);
		}
		closedir(d);
	}
}

struct result *results;
size_t nresults;
static size_t capresults;

/* Both sides refused r's program: each loaded once more at log level 1|4 (the run's level 4
 * has only the message), the two paths to the refusal compared (corpus_log.c).  Not when
 * a side refused before its verifier (no log: a map, BTF or the object). */
static void refused_logs(struct result *r, const char *path, const char *name, int libbpf)
{
	struct result tmp = *r;
	struct bpf_object *ko = NULL;
	struct bpfrt_object *kb = NULL, *bo;
	int fd = -1;

	if (!side_log[0] || !side_log[0][0] || !side_log[1] || !side_log[1][0])
		return;
	log_level_req = 1 | 4;
	if (libbpf)
		ko = k_load_libbpf(path, &tmp, name, &fd);
	else
		kb = b_load(path, &tmp, name, 1, &fd);
	bo = b_load(path, &tmp, name, 0, &fd);
	log_level_req = 4;
	/* a verdict that changed on the reload (a load that depends on time) is not compared */
	if (!ko && !kb && !bo && tmp.kernel == V_REFUSED && tmp.bpfrt == V_REFUSED)
		compare_logs(r);
	if (ko)
		bpf_object__close(ko);
	if (kb)
		bpfrt_object_close(kb);
	if (bo)
		bpfrt_object_close(bo);
	clear_pins();
}

/* Does the object carry a ".struct_ops.link" section?  Its name is among the section names
 * (and its DATASEC's in .BTF): a search of the file's bytes tells. */
static int has_struct_ops_link(const char *path)
{
	static const char want[] = ".struct_ops.link";
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	int found = 0;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n)
		found = memmem(buf, (size_t)n, want, sizeof(want)) != NULL; /* with its NUL */
	free(buf);
	if (f)
		fclose(f);
	return found;
}

static void one_prog(const char *proj, const char *file, const char *path, const char *name,
		     const char *sec, enum bpf_prog_type type, int use_libbpf)
{
	struct result *r;
	struct bpf_object *kobj = NULL;
	struct bpfrt_object *kbobj = NULL, *bobj = NULL;
	int kfd = -1, bfd = -1;
	char key[512];

	if (nresults == capresults) {
		capresults = capresults ? 2 * capresults : 256;
		results = realloc(results, capresults * sizeof(*results));
		if (!results)
			exit(2);
	}
	r = &results[nresults++];
	memset(r, 0, sizeof(*r));
	snprintf(r->key, sizeof(r->key), "%s/%s:%s", proj, file, name);
	snprintf(r->sec, sizeof(r->sec), "%s", sec);
	snprintf(key, sizeof(key), "%s/%s:%s", proj, file, sec);
	r->type = type;
	r->rule_attach = -1;
	if (only && fnmatch(only, r->key, 0)) {
		nresults--;
		return;
	}
	if (r->type == BPF_PROG_TYPE_UNSPEC)
		r->type = rule_type(key, &r->rule_attach, &r->rule_flags);
	if (r->type == BPF_PROG_TYPE_UNSPEC) {
		/* nobody knows how this program is loaded: not counted */
		r->kernel = V_NA;
		snprintf(r->kernel_why, sizeof(r->kernel_why), "no program type for section");
		return;
	}
	double t0 = now_ms();

	/* -F: libbpf takes no BPF_LOG_FIXED (it refuses log levels above 7), so the kernel's
	 * side goes through bpfrt's loader in kernel mode */
	if (logdir_fixed)
		use_libbpf = 0;
	if (use_libbpf)
		kobj = k_load_libbpf(path, r, name, &kfd);
	r->kernel_ms = now_ms() - t0;
	/* libbpf gave up before the verifier (a CO-RE relocation it cannot resolve, which it
	 * turns into a call the kernel refuses; an extern; a map): the kernel's verdict then
	 * comes from bpfrt's loader in kernel mode, on the same instructions bpfrt gets */
	if (r->kernel == V_REFUSED && (!strstr(libbpf_msgs, "program load failed") ||
				       strstr(libbpf_msgs, "failed to resolve CO-RE"))) {
		r->libbpf_gave_up = 1;
		snprintf(r->libbpf_why, sizeof(r->libbpf_why), "%s", r->kernel_why);
	}
	/* libbpf 1.1 skips a ".struct_ops.link" section (1.2 added it) and loads its struct_ops
	 * programs with attach_btf_id 0, which the kernel answers ENOTSUPP (524) whether or not
	 * it registers the struct: the verdict a loader that reads the section gets (libbpf
	 * >= 1.2's, the project's own) comes from bpfrt's loader in kernel mode */
	if (r->kernel == V_REFUSED && r->kernel_err == 524 && r->type == BPF_PROG_TYPE_STRUCT_OPS &&
	    has_struct_ops_link(path)) {
		r->libbpf_gave_up = 1;
		snprintf(r->libbpf_why, sizeof(r->libbpf_why), "%s",
			 "libbpf 1.1 skips .struct_ops.link (ENOTSUPP)");
	}
	if (!use_libbpf || r->libbpf_gave_up) {
		r->kernel = V_NA;
		r->kernel_err = 0;
		t0 = now_ms();
		kbobj = b_load(path, r, name, 1, &kfd);
		r->kernel_ms += now_ms() - t0;
	}
	t0 = now_ms();
	bobj = b_load(path, r, name, 0, &bfd);
	r->bpfrt_ms = now_ms() - t0;
	if (r->kernel == V_OK && r->bpfrt == V_OK)
		compare_accepted(r, kfd, bfd, kobj, kbobj, bobj);
	categorise(r);
	if (!logdir && r->kernel == V_OK && r->bpfrt == V_OK)
		compare_logs(r);
	else if (!logdir && r->kernel == V_REFUSED && r->bpfrt == V_REFUSED)
		refused_logs(r, path, name, use_libbpf && !r->libbpf_gave_up);
	t0 = now_ms();
	if (kobj)
		bpf_object__close(kobj);
	if (kbobj)
		bpfrt_object_close(kbobj);
	r->kernel_ms += now_ms() - t0;
	t0 = now_ms();
	if (bobj)
		bpfrt_object_close(bobj);
	r->bpfrt_ms += now_ms() - t0;
	clear_pins();
}

static void one_object(const char *proj, const char *file, const char *path)
{
	struct bpf_object *obj = k_open(path);

	if (obj) {
		struct bpf_program *p;
		size_t n = 0, i = 0;
		struct { char name[128], sec[128]; enum bpf_prog_type type; } *list;

		bpf_object__for_each_program(p, obj)
			n++;
		list = calloc(n + 1, sizeof(*list));
		bpf_object__for_each_program(p, obj) {
			snprintf(list[i].name, sizeof(list[i].name), "%s", bpf_program__name(p));
			snprintf(list[i].sec, sizeof(list[i].sec), "%s", bpf_program__section_name(p));
			list[i++].type = bpf_program__type(p);
		}
		bpf_object__close(obj);
		for (i = 0; i < n; i++)
			if (sampled(proj))
				one_prog(proj, file, path, list[i].name, list[i].sec, list[i].type, 1);
		free(list);
		return;
	}
	/* libbpf refuses the object: list its programs with bpfrt's parser */
	{
		struct bpfrt_object *b;
		struct bpfrt_program *p;

		bpfrt_msgs[0] = 0;
		b = bpfrt_object_open_file(path, NULL);
		if (!b) {
			char why[256];

			last_line(why, sizeof(why), libbpf_msgs);
			char bwhy[256];

			unreadable++;
			last_line(bwhy, sizeof(bwhy), bpfrt_msgs);
			printf("unreadable: %s/%s: libbpf: %s; bpfrt: %s\n", proj, file,
			       why + (strncmp(why, "libbpf: ", 8) ? 0 : 8), bwhy);
			return;
		}
		for (p = bpfrt_object_next_program(b, NULL); p; p = bpfrt_object_next_program(b, p))
			if (sampled(proj))
				one_prog(proj, file, path, bpfrt_program_name(p),
					 bpfrt_program_section_name(p), bpfrt_program_type(p), 0);
		bpfrt_object_close(b);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* flags: SD_DIRS only directories; SD_HIDDEN names starting with a dot too (never . and ..) */
enum { SD_DIRS = 1, SD_HIDDEN = 2 };

static char **sorted_dir(const char *path, size_t *n, int flags)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (e->d_name[0] == '.' && !(flags & SD_HIDDEN)) ||
		    ((flags & SD_DIRS) && e->d_type != DT_DIR))
			continue;
		v = realloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* What a killed run left: its bpffs (the kernel's pinned maps, held until unmounted) and
 * its $BPFRT_FS (NetObserv's maps alone are gigabytes).  Both names carry the run's pid;
 * a directory whose pid is gone is removed, so killed runs do not pile up until the next
 * run dies of the memory they hold (it happened: three runs killed by the OOM killer). */
static void remove_stale_runs(void)
{
	static const struct {
		const char *dir, *prefix;
		int bpffs;
	} places[] = {
		{ "/tmp", "bpfrt-corpus-bpffs.", 1 },
		{ "/dev/shm", "bpfrt-corpus.", 0 },
	};

	for (size_t p = 0; p < sizeof(places) / sizeof(places[0]); p++) {
		size_t n, len = strlen(places[p].prefix);
		char **v = sorted_dir(places[p].dir, &n, SD_DIRS);
		char path[1024], *end;
		long pid;

		for (size_t i = 0; i < n; i++) {
			if (!strncmp(v[i], places[p].prefix, len)) {
				errno = 0;
				pid = strtol(v[i] + len, &end, 10);
				if (!errno && pid > 0 && *end == '.' && kill((pid_t)pid, 0) &&
				    errno == ESRCH) {
					snprintf(path, sizeof(path), "%s/%s", places[p].dir, v[i]);
					if (places[p].bpffs)
						umount2(path, MNT_DETACH);
					rm_tree(path);
				}
			}
			free(v[i]);
		}
		free(v);
	}
}

static void rm_tree(const char *path)
{
	size_t n;
	char **v = sorted_dir(path, &n, SD_HIDDEN); /* bpfrt's .bpfrt-* too */
	char sub[1024];
	struct stat st;

	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, v[i]);
		if (!lstat(sub, &st) && S_ISDIR(st.st_mode))
			rm_tree(sub);
		else
			unlink(sub);
		free(v[i]);
	}
	free(v);
	rmdir(path);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("BPFRT_CORPUS_DIR"), *report = NULL;
	const char *baseline = BPFRT_SOURCE_DIR "/tests/corpus/baseline.txt";
	char home_dir[512];
	size_t nproj;
	char **projs;
	int opt, fail;

	const char *env_sample = getenv("BPFRT_CORPUS_SAMPLE");
	size_t nth = 0, sampled = 0;

	if (env_sample && *env_sample)
		sample = strtol(env_sample, NULL, 10);
	while ((opt = getopt(argc, argv, "vr:b:p:l:Fs:h")) != -1) {
		if (opt == 'v')
			verbose = 1;
		else if (opt == 'p')
			only = optarg;
		else if (opt == 'l')
			logdir = optarg;
		else if (opt == 'F')
			logdir_fixed = 8; /* BPF_LOG_FIXED */
		else if (opt == 'r')
			report = optarg;
		else if (opt == 'b')
			baseline = optarg;
		else if (opt == 's')
			sample = strtol(optarg, NULL, 10);
		else {
			fprintf(stderr, "usage: %s [-v] [-r REPORT.tsv] [-b BASELINE] "
				"[-p GLOB [-l LOGDIR [-F]]] [-s N] [CORPUS_DIR]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (sample < 1 || sample > 1000000) {
		fprintf(stderr, "corpus_diff: -s / BPFRT_CORPUS_SAMPLE: %ld is not in 1..1000000\n",
			sample);
		return 2;
	}
	if (optind < argc)
		dir = argv[optind];
	if (!dir || !*dir) {
		const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

		if (cache && *cache)
			snprintf(home_dir, sizeof(home_dir), "%s/bpfrt-corpus", cache);
		else
			snprintf(home_dir, sizeof(home_dir), "%s/.cache/bpfrt-corpus",
				 home ? home : "/root");
		dir = home_dir;
	}
	projs = sorted_dir(dir, &nproj, SD_DIRS);
	if (!projs || !nproj) {
		printf("skipped: no corpus at %s (built outside the repository: docs/CORPUS.md)\n", dir);
		return 77;
	}
	if (geteuid()) {
		printf("skipped: needs root (loads programs into the kernel)\n");
		return 77;
	}
	read_rules(BPFRT_SOURCE_DIR "/tests/corpus/types.txt");
	read_rodata_rules(BPFRT_SOURCE_DIR "/tests/corpus/rodata.txt");
	read_byte_rules(baseline);
	read_prog_samples(baseline);
	capture_messages();
	/* pinned maps (LIBBPF_PIN_BY_NAME, tc's pinning) go to a bpffs of our own, so that
	 * nothing is left behind and no pin of the host is reused */
	remove_stale_runs();
	snprintf(kpin, sizeof(kpin), "/tmp/bpfrt-corpus-bpffs.%d.XXXXXX", (int)getpid());
	if (!mkdtemp(kpin) || mount("bpf", kpin, "bpf", 0, NULL)) {
		printf("skipped: cannot mount a bpffs for pinned maps: %s\n", strerror(errno));
		return 77;
	}
	snprintf(bfs, sizeof(bfs), "/dev/shm/bpfrt-corpus.%d.XXXXXX", (int)getpid());
	if (!mkdtemp(bfs)) {
		perror("mkdtemp");
		return 2;
	}
	setenv("BPFRT_FS", bfs, 1);

	start_ms = now_ms();
	for (size_t i = 0; i < nproj; i++) {
		char pdir[1024];
		size_t nobj, before = nresults;
		char **objs;

		if (left_out(projs[i])) {
			printf("sampled: %s left out (baseline.txt: unsampled)\n", projs[i]);
			continue;
		}
		snprintf(pdir, sizeof(pdir), "%s/%s", dir, projs[i]);
		objs = sorted_dir(pdir, &nobj, 0);
		for (size_t j = 0; j < nobj; j++) {
			char path[2048];
			size_t len = strlen(objs[j]);

			if (len > 2 && !strcmp(objs[j] + len - 2, ".o") && nth++ % sample == 0) {
				sampled++;
				snprintf(path, sizeof(path), "%s/%s", pdir, objs[j]);
				one_object(projs[i], objs[j], path);
			}
			free(objs[j]);
		}
		free(objs);
		/* -p: only the projects it reached */
		if (!only || nresults > before)
			print_progress(projs[i], i + 1, nproj, (now_ms() - start_ms) / 1e3);
	}
	umount2(kpin, MNT_DETACH);
	rmdir(kpin);
	rm_tree(bfs);

	known_run_differences(baseline);
	print_results(report);
	print_totals(dir, projs, nproj, unreadable);
	for (size_t i = 0; !only && i < nprog_samples; i++)
		printf("sampled: %s: every %ldth program (baseline.txt)\n",
		       prog_samples[i].proj, prog_samples[i].every);
	if (sample > 1)
		printf("sampled: every %ldth object, %zu of %zu (floors not checked)\n", sample,
		       sampled, nth);
	fail = check_baseline(baseline, !only && sample == 1);
	for (size_t i = 0; i < nproj; i++)
		free(projs[i]);
	free(projs);
	for (size_t i = 0; i < nresults; i++)
		free(results[i].run_why);
	free_byte_rules();
	free_rodata();
	free(results);
	return fail;
}

