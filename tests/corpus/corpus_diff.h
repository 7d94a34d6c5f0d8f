/* corpus_diff.h - what the files of the corpus differential share (issue #15; how it
 * works: the top of corpus_diff.c).  corpus_diff.c walks the corpus and drives each
 * program, corpus_load.c loads one program on each side, corpus_compare.c compares what
 * both accept (processed insns, a test run, the data maps after it), corpus_report.c
 * prints the figures and checks them against baseline.txt.
 */
#ifndef BPFRT_TESTS_CORPUS_DIFF_H
#define BPFRT_TESTS_CORPUS_DIFF_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "bpfrt.h"

#define LOG_CAP (1u << 16)
#define LOG1_SIZE (1u << 26) /* verifier log buffer of the level-1 reloads, each side */

/* ---- options and state the driver sets (corpus_diff.c) ---- */

extern int verbose;         /* -v */
extern const char *logdir;  /* -l: level-2 logs of both sides go here */
extern int logdir_fixed;    /* -F: BPF_LOG_FIXED (8) added to their level, else 0 */
extern char kpin[128];      /* bpffs of our own for the kernel side's pins */

/* ---- one program's results ---- */

enum verdict { V_NA, V_OK, V_REFUSED };

struct result {
	char key[512];           /* project/object.o:program */
	char sec[128];
	enum bpf_prog_type type;  /* type both sides loaded it with */
	enum bpf_attach_type attach;
	int rule_attach;          /* types.txt's attach=N for the section, else -1 */
	uint32_t rule_flags;      /* types.txt's prog_flags (sleepable) */
	int type_found;          /* bpfrt's section table gave the same type by itself */
	enum verdict kernel, bpfrt;
	int kernel_err, bpfrt_err;
	int run;                 /* 0 not run, 1 same, -1 differs, -2 differs for a known reason */
	char run_diff[160];      /* a differing run: each side's errno, retval and size */
	char *run_why;           /* -2: baseline.txt's reason */
	size_t maps_compared;    /* data maps compared after the run */
	char kernel_why[256];    /* last line of the kernel log when refused */
	char bpfrt_why[256];     /* bpfrt's reason when refused */
	char category[128];
	int libbpf_gave_up;      /* libbpf refused before the kernel saw it (CO-RE, externs) */
	uint32_t kernel_insns;   /* both accept: bpf_prog_info.verified_insns of each (#16) */
	uint32_t bpfrt_insns;
	/* both accept: each verifier's "verification time N usec" (log level 4) */
	uint64_t kernel_us;
	uint64_t bpfrt_us;
	int timed;               /* both lines were found */
	char libbpf_why[256];
	double kernel_ms, bpfrt_ms; /* open + load (verification) + close, each side */
	/* verifier logs (corpus_log.c): 0 not compared, 1 identical, -1 differ; the kernel's
	 * lines, how many of them are identical, and the first differing line of each */
	int log_cmp;
	int log_cut;             /* not compared: a log filled its LOG1_SIZE buffer */
	uint32_t log_lines, log_same, log_line;
	char log_kernel[160], log_bpfrt[160];
};

extern struct result *results; /* every program, in corpus order */
extern size_t nresults;

/* ---- loading (corpus_load.c) ---- */

/* messages of the last open or load: libbpf's (not its debug level) and bpfrt's */
extern char libbpf_msgs[LOG_CAP];
extern char bpfrt_msgs[LOG_CAP];

/* route libbpf's and bpfrt's messages into libbpf_msgs and bpfrt_msgs */
void capture_messages(void);
/* types.txt: the program type of sections that name none */
void read_rules(const char *path);
/* the type types.txt gives "project/object.o:section", or BPF_PROG_TYPE_UNSPEC; its
 * expected attach type (-1: none given) and prog_flags into *attach, *flags */
enum bpf_prog_type rule_type(const char *key, int *attach, uint32_t *flags);
/* the last line of log that is not a statistics line, into dst */
void last_line(char *dst, size_t len, const char *log);
/* open with libbpf, or NULL */
struct bpf_object *k_open(const char *path);
/* load program name alone with libbpf: the object (kept open for the test run) with its
 * fd in *fd, or NULL with r's kernel verdict set */
struct bpf_object *k_load_libbpf(const char *path, struct result *r, const char *name,
				 int *fd);
/* load program name alone with bpfrt's loader, into bpfrt (kernel 0) or into the kernel
 * (kernel 1, for objects libbpf cannot open): as k_load_libbpf() */
struct bpfrt_object *b_load(const char *path, struct result *r, const char *name,
			    int kernel, int *fd);

/* ---- .rodata a project's loader writes (corpus_rodata.c) ---- */

/* rodata.txt: values from the kernel's BTF for .rodata variables, per project */
void read_rodata_rules(const char *path);
/* give the object at path (key: the program loaded) the .rodata the rules make, on
 * libbpf's object or bpfrt's, before the load; nothing when no rule applies */
void rodata_libbpf(struct bpf_object *obj, const char *path, const char *key);
void rodata_bpfrt(struct bpfrt_object *obj, const char *path, const char *key);
void free_rodata(void);

/* ---- verifier logs (corpus_log.c) ---- */

/* log level of the loads: 4 (statistics) for the run, 1|4 for the reload of a program both
 * refuse; -l makes it 2 */
extern int log_level_req;
/* the verifier's log of the last load of each side (0 kernel, 1 bpfrt), kept by the loads */
extern char *side_log[2];
void keep_log(int side, const char *log);
/* side_log[0] against side_log[1] into r->log_* */
void compare_logs(struct result *r);
/* the figures of both groups (both accept, both refuse) and their biggest differences */
void print_logs(FILE *out);

/* ---- comparing what both accept (corpus_compare.c) ---- */

/* baseline.txt's "differs-bytes" rules: read them, free them */
void read_byte_rules(const char *path);
void free_byte_rules(void);
/* both sides accepted r's program (kfd, bfd): their processed insns, and for a type that
 * test-runs, one run each and the data maps after it (kobj or kbobj the kernel side's
 * object, bobj bpfrt's) into r */
void compare_accepted(struct result *r, int kfd, int bfd, struct bpf_object *kobj,
		      struct bpfrt_object *kbobj, struct bpfrt_object *bobj);

/* ---- figures and the baseline (corpus_report.c) ---- */

/* r->category from bpfrt's reason for refusing it */
void categorise(struct result *r);
/* baseline.txt's "differs" lines: mark the differing runs they explain */
void known_run_differences(const char *path);
/* the per-program table into report (NULL: none), and the lines of each false accept and
 * differing test run on stdout */
void print_results(const char *report);
/* the corpus's figures, by project, refusal categories, processed insns and times */
void print_totals(const char *dir, char **projs, size_t nproj, size_t unreadable);
/* One line as project proj (the i-th of nproj, from 1) is done: its figures and the run's
 * so far, flushed, so that a run killed by a timeout shows how far it got. */
void print_progress(const char *proj, size_t i, size_t nproj, double seconds);
/* 1 when a false accept is not a known one, or (floors) a project is below a floor */
int check_baseline(const char *path, int floors);

#endif
