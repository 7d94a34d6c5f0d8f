/* common.c - the case list: collecting every topic's cases, generated-name storage, and
 * the kernel's expected results (expected.inc, written by test_cases_oracle --write). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"

/* The cases (and the names and instructions they point to) live until the process exits;
 * keeping the array reachable from here tells LeakSanitizer so. */
static struct vcase *volatile live_cases; /* volatile: a store never read must stay */

void vc_add(struct vcase_list *l, const struct vcase *c)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
		live_cases = l->v;
	}
	l->v[l->n] = *c;
	if (!l->v[l->n].prog_type)
		l->v[l->n].prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	l->n++;
}

const struct bpf_insn *vc_keep(const struct bpf_insn *insns, size_t n)
{
	struct bpf_insn *p = malloc(n * sizeof(*p));

	if (!p)
		abort();
	memcpy(p, insns, n * sizeof(*p));
	return p;
}

const char *vc_name(const char *fmt, ...)
{
	char buf[128], *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p = strdup(buf);
	if (!p)
		abort();
	return p;
}

void vc_all(struct vcase_list *l)
{
#define VC_CALL(t) vcases_##t(l);
	VC_TOPICS(VC_CALL)
#undef VC_CALL
	vc_unpriv_twins(l);
}

static const struct vexpect expected[] = {
#include "expected.inc"
	{ NULL, 0, NULL, NULL },
};

const struct vexpect *vc_expect(const char *name)
{
	for (size_t i = 0; expected[i].name; i++)
		if (!strcmp(expected[i].name, name))
			return &expected[i];
	return NULL;
}
