/* test_cases_oracle.c - every verifier case through the real kernel (raw bpf() syscall,
 * the maps each case needs created for it; CAP_SYS_ADMIN and CAP_PERFMON out of the
 * effective set for bpf_capable cases, CAP_BPF too for unprivileged ones, which run only
 * when kernel.unprivileged_bpf_disabled is 0 and are otherwise held to the answers read
 * from the kernel's source) and through bpfrt: verdicts must agree on >= 98% of the cases
 * and the first error line on >= 90% of the cases both reject.  Disagreements are listed in
 * <build>/verifier-disagreements.md.  With --write it also regenerates the expected
 * results (tests/verifier/cases/expected.inc) and tests/verifier/DISAGREEMENTS.md.
 * Root only; otherwise "skipped".
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "harness.h"
#include "vc_kernel.h"

static void c_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Disagreements understood case by case. */
static const struct {
	const char *name;
	const char *why;
} known_reasons[] = {
	{ "map/map_ptr_deref", "loads through a map pointer need kernel BTF (struct bpf_map); "
			       "bpfrt has no BTF and refuses them" },
};

static const char *reason(const struct vcase *c, const struct vc_outcome *k,
			  const struct vc_outcome *b)
{
	for (size_t i = 0; i < sizeof(known_reasons) / sizeof(known_reasons[0]); i++)
		if (!strcmp(known_reasons[i].name, c->name))
			return known_reasons[i].why;
	if (strstr(b->msg, "cannot use helper") || strstr(k->msg, "helper") ||
	    strstr(k->msg, "func "))
		return "helper not offered by bpfrt (no helpers.def row) or its prototype differs";
	return "unexplained";
}

/* Small log buffers: the kernel keeps the end of the log and fails the load with ENOSPC,
 * even when the program was rejected for another reason.  Same errno and same kept text. */
static void check_log_sizes(void)
{
	static const struct bpf_insn progs[][2] = {
		{ MOV64_IMM(0, 0), EXIT() },
		{ MOV64_REG(0, 2), EXIT() },
	};
	static const uint32_t sizes[] = { 16, 40, 90, 400 };
	char klog[512], blog[512];

	for (size_t p = 0; p < 2; p++)
		for (size_t s = 0; s < 4; s++)
			for (uint32_t level = 1; level <= 2; level++) {
				union bpf_attr a;
				struct brt_verify_opts o = { .prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
							     .gpl = 1, .log_level = level,
							     .log_buf = blog, .log_size = sizes[s] };
				int kerr, berr, fd;
				char name[64];

				snprintf(name, sizeof(name), "log prog %zu size %u level %u", p,
					 sizes[s], level);
				T_CASE(name);
				memset(&a, 0, sizeof(a));
				memset(klog, 0, sizeof(klog));
				memset(blog, 0, sizeof(blog));
				a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
				a.insn_cnt = 2;
				a.insns = (uint64_t)(uintptr_t)progs[p];
				a.license = (uint64_t)(uintptr_t)"GPL";
				a.log_level = level;
				a.log_buf = (uint64_t)(uintptr_t)klog;
				a.log_size = sizes[s];
				fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
				kerr = fd < 0 ? errno : 0;
				if (fd >= 0)
					close(fd);
				berr = -brt_verify(progs[p], 2, &o, NULL);
				T_EQ_INT(kerr, berr);
				/* level 2 starts with the liveness listing, whose lddw text differs */
				if (level == 1)
					T_EQ_STR(klog, blog);
			}
}

/* "processed N insns" of cases both accept, bpfrt against the kernel (#16): the ratio's
 * distribution, and the cases above 1.1x in <build>/verifier-processed.md */
#define PC_BUCKETS 7
static const double pc_edge[PC_BUCKETS - 1] = { 0.9, 0.999999, 1.000001, 1.1, 1.5, 3.0 };
static const char *const pc_label[PC_BUCKETS] = { "< 0.9", "0.9-1.0", "= 1.0", "1.0-1.1",
						  "1.1-1.5", "1.5-3", "> 3" };

struct pcount {
	size_t n, bucket[PC_BUCKETS];
	uint64_t sum_b, sum_k;
	FILE *f;
};

static void pc_add(struct pcount *pc, const char *name, uint32_t b, uint32_t k)
{
	double r = (double)b / (double)k;
	int i = 0;

	while (i < PC_BUCKETS - 1 && r >= pc_edge[i])
		i++;
	pc->bucket[i]++;
	pc->n++;
	pc->sum_b += b;
	pc->sum_k += k;
	if (!pc->f) {
		char path[512];

		snprintf(path, sizeof(path), "%s/verifier-processed.md", BPFRT_BINARY_DIR);
		pc->f = fopen(path, "w");
		if (pc->f)
			fprintf(pc->f, "| case | bpfrt | kernel | ratio |\n|---|---|---|---|\n");
	}
	if (pc->f && (r > 1.1 || r < 0.9))
		fprintf(pc->f, "| `%s` | %u | %u | %.2f |\n", name, b, k, r);
}

static void pc_report(struct pcount *pc)
{
	printf("processed insns, bpfrt / kernel, %zu cases both accept (sum %llu / %llu):", pc->n,
	       (unsigned long long)pc->sum_b, (unsigned long long)pc->sum_k);
	for (int i = 0; i < PC_BUCKETS; i++)
		printf(" %s: %zu;", pc_label[i], pc->bucket[i]);
	printf("\n");
	if (pc->f)
		fclose(pc->f);
}

/* 0 when the kernel lets a process without CAP_BPF load programs; the setting then holds
 * for the whole run: verifier.unpriv_oracle, which changes it, waits for this shared lock
 * (kept until exit; no lock file, as where no /work exists: no such test changes it) */
static int unpriv_bpf_disabled(void)
{
	int lock = open(BPFRT_UNPRIV_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	FILE *f;
	int v = 1;

	if (lock >= 0)
		flock(lock, LOCK_SH);
	f = fopen("/proc/sys/kernel/unprivileged_bpf_disabled", "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 1;
		fclose(f);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct vcase_list l = { 0 };
	int write = argc > 1 && !strcmp(argv[1], "--write");
	size_t run = 0, verdict_same = 0, both_reject = 0, msg_same = 0, unpriv_src = 0;
	int unpriv_off = unpriv_bpf_disabled();
	FILE *exp = NULL, *dis;
	char path[512];
	struct pcount pc = { 0 };

	if (geteuid() != 0)
		T_SKIP("needs root to load programs into the kernel");
	vc_all(&l);
	snprintf(path, sizeof(path), "%s/verifier-disagreements.md", BPFRT_BINARY_DIR);
	if (write) {
		snprintf(path, sizeof(path), "%s/tests/verifier/DISAGREEMENTS.md", BPFRT_SOURCE_DIR);
		char ep[512];

		snprintf(ep, sizeof(ep), "%s/tests/verifier/cases/expected.inc", BPFRT_SOURCE_DIR);
		exp = fopen(ep, "w");
		if (!exp)
			T_SKIP("cannot write %s", ep);
		fprintf(exp, "/* expected.inc - what Linux said for each case (generated by "
			     "test_cases_oracle --write; do not edit) */\n");
	}
	dis = fopen(path, "w");
	if (!dis)
		T_SKIP("cannot write %s", path);
	fprintf(dis, "# Verifier disagreements with Linux\n\n"
		     "Generated by `test_verifier_cases_oracle%s`: every case of tests/verifier/cases "
		     "where bpfrt's verdict or first error line differs from the running kernel's, "
		     "with the reason.\n\n| case | kernel | bpfrt | reason |\n|---|---|---|---|\n",
		write ? " --write" : "");
	for (size_t i = 0; i < l.n; i++) {
		const struct vcase *c = &l.v[i];
		struct vc_outcome k, b;

		/* VC_ONLY=<case>, VC_LOG2=<case>: that case alone */
		if ((getenv("VC_LOG2") && !vc_log2(c)) ||
		    (getenv("VC_ONLY") && strcmp(getenv("VC_ONLY"), c->name)))
			continue;
		if (c->priv == BRT_PRIV_UNPRIV && unpriv_off) {
			/* the kernel refuses every unprivileged load: hold bpfrt to the answer
			 * read from the kernel's source instead */
			T_CASE(c->name);
			vc_run_ours(c, &b);
			T_EQ_INT(c->uerr, b.err);
			T_EQ_STR(c->umsg ? c->umsg : "", b.msg);
			unpriv_src++;
			continue;
		}
		if (run_kernel(c, &k)) {
			printf("case %s: could not create its maps: %s\n", c->name, strerror(errno));
			continue;
		}
		vc_run_ours(c, &b);
		run++;
		if (!k.err && !b.err && k.processed && b.processed)
			pc_add(&pc, c->name, b.processed, k.processed);
		if ((k.err == 0) == (b.err == 0))
			verdict_same++;
		if (k.err && b.err) {
			both_reject++;
			if (!strcmp(k.msg, b.msg))
				msg_same++;
		}
		if (exp && c->priv != BRT_PRIV_UNPRIV) {
			const struct vexpect *e = vc_expect(c->name);

			fprintf(exp, "{ ");
			c_string(exp, c->name);
			fprintf(exp, ", %d, ", k.err);
			c_string(exp, k.msg);
			fprintf(exp, ", ");
			if (k.err != b.err || strcmp(k.msg, b.msg)) {
				/* bpfrt's own answer too, so that test_cases notices when it
				 * changes */
				c_string(exp, e && e->known ? e->known : reason(c, &k, &b));
				fprintf(exp, ", %d, ", b.err);
				c_string(exp, b.msg);
			} else {
				fprintf(exp, "NULL");
			}
			fprintf(exp, " },\n");
		}
		if (k.err != b.err || strcmp(k.msg, b.msg))
			fprintf(dis, "| `%s` | %s %s | %s %s | %s |\n", c->name,
				k.err ? strerror(k.err) : "accept", k.msg,
				b.err ? strerror(b.err) : "accept", b.msg, reason(c, &k, &b));
	}
	fprintf(dis, "\nCases run: %zu. Verdict agreement: %zu (%.1f%%). Both reject: %zu, "
		     "same first error line: %zu (%.1f%%).\n",
		run, verdict_same, run ? 100.0 * (double)verdict_same / (double)run : 0.0,
		both_reject, msg_same, both_reject ? 100.0 * (double)msg_same / (double)both_reject : 0.0);
	fclose(dis);
	if (exp)
		fclose(exp);
	printf("cases run %zu, verdicts agree %zu, both reject %zu, same message %zu; details in %s\n",
	       run, verdict_same, both_reject, msg_same, path);
	if (unpriv_off)
		printf("unprivileged kernel comparison: skipped: kernel.unprivileged_bpf_disabled=%d "
		       "refuses loads without CAP_BPF; %zu unprivileged cases held to the kernel "
		       "source's answers instead\n", unpriv_off, unpriv_src);
	pc_report(&pc);
	check_log_sizes();
	T_CASE("agreement");
	T_ASSERT(run >= 400);
	T_ASSERT(verdict_same * 100 >= run * 98);
	T_ASSERT(msg_same * 100 >= both_reject * 90);
	return t_done();
}
