/* test_cases.c - the verifier case suite against the kernel's recorded answers
 * (cases/expected.inc): same verdict, same errno and the same first error line, except
 * for the documented disagreements (DISAGREEMENTS.md), which are counted, listed and held
 * to bpfrt's recorded answer.
 * Unprivileged cases carry their expected answer themselves (cases/unpriv.c). */
#include <stdio.h>

#include "harness.h"
#include "vc_run.h"

int main(void)
{
	struct vcase_list l = { 0 };
	size_t checked = 0, known = 0, missing = 0, unpriv = 0;

	vc_all(&l);
	T_CASE("suite size");
	T_ASSERT(l.n >= 400);
	for (size_t i = 0; i < l.n; i++) {
		const struct vcase *c = &l.v[i];
		const struct vexpect *e = vc_expect(c->name);
		struct vc_outcome o;

		for (size_t j = 0; j < i; j++)
			if (!strcmp(l.v[j].name, c->name))
				T_FAIL("duplicate case name %s", c->name);
		T_CASE(c->name);
		if (c->priv == BRT_PRIV_UNPRIV) {
			/* the kernel source's answer, recorded in the case itself */
			vc_run_ours(c, &o);
			unpriv++;
			T_EQ_INT(c->uerr, o.err);
			T_EQ_STR(c->umsg ? c->umsg : "", o.msg);
			continue;
		}
		if (!e) {
			missing++;
			T_FAIL("no kernel answer recorded: run test_verifier_cases_oracle --write");
			continue;
		}
		vc_run_ours(c, &o);
		if (e->known) {
			/* a documented disagreement: hold bpfrt to the answer recorded with it,
			 * so that a change (a fix or a regression) is noticed and the record
			 * regenerated (test_verifier_cases_oracle --write) */
			known++;
			T_EQ_INT(e->berr, o.err);
			T_EQ_STR(e->bmsg ? e->bmsg : "", o.msg);
			continue;
		}
		checked++;
		T_EQ_INT(e->err, o.err);
		T_EQ_STR(e->msg, o.msg);
	}
	printf("%zu cases: %zu match the kernel, %zu documented disagreements, %zu without "
	       "answer, %zu unprivileged checked against the kernel source's answers\n",
	       l.n, checked, known, missing, unpriv);
	return t_done();
}
