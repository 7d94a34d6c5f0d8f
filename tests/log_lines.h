/* tests/log_lines.h - verifier logs compared line by line, the kernel's against bpfrt's
 * (verifier.log2_oracle's level-2 logs, corpus_diff's level-1 logs): a log split into
 * lines with the one thing that cannot be equal normalised (a map lddw's operand: the
 * kernel prints the map's address, bpfrt the map), and the length of the longest common
 * subsequence of two such logs (Myers), the lines counted as identical.
 */
#ifndef BPFRT_TESTS_LOG_LINES_H
#define BPFRT_TESTS_LOG_LINES_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_D 20000 /* edit distance past which a pair counts its common prefix only */

struct lines {
	char **v;
	size_t n;
};

/* The operand of a map lddw at p ("0xffff" and 12 hex digits, or "map[id:" to the next
 * space): its length, or 0 */
static inline size_t map_operand(const char *p)
{
	size_t n = 0;

	if (!strncmp(p, "0xffff", 6)) {
		for (n = 6; n < 18 && isxdigit((unsigned char)p[n]); n++)
			;
		return n == 18 && !isxdigit((unsigned char)p[n]) ? n : 0;
	}
	if (!strncmp(p, "map[id:", 7))
		return strcspn(p, " ");
	return 0;
}

/* Split log in place into lines, normalising map operands; a last line without '\n'
 * counts. */
static inline void split(char *log, struct lines *l)
{
	size_t cap = 1024;

	l->n = 0;
	l->v = malloc(cap * sizeof(*l->v));
	for (char *p = log; l->v && *p;) {
		char *e = strchr(p, '\n'), *m;

		if (e)
			*e = 0;
		/* lddw operands: "(18) rN = OPERAND" */
		for (m = strstr(p, "(18) r"); m; m = strstr(m + 1, "(18) r")) {
			char *q = strstr(m, " = ");
			size_t len = q ? map_operand(q + 3) : 0;

			if (len >= 5) { /* "<map>" fits where the operand was */
				char *rest = q + 3 + len;

				/* and the padding to the state's ';' column, which follows the
				 * operand's width */
				if (*rest == ' ' && rest[strspn(rest, " ")] == ';')
					rest += strspn(rest, " ") - 1;
				memcpy(q + 3, "<map>", 5);
				memmove(q + 8, rest, strlen(rest) + 1);
			}
		}
		if (l->n == cap) {
			char **nv = realloc(l->v, 2 * cap * sizeof(*nv));

			if (!nv)
				break;
			l->v = nv;
			cap *= 2;
		}
		l->v[l->n++] = p;
		if (!e)
			break;
		p = e + 1;
	}
}

/* Length of the longest common subsequence of a and b (Myers: shortest edit script D,
 * LCS = (n + m - D) / 2); past MAX_D edits, the common prefix and suffix only. */
static inline size_t lcs(const struct lines *a, const struct lines *b)
{
	long n = (long)a->n, m = (long)b->n, max = n + m < MAX_D ? n + m : MAX_D;
	long *v = calloc((size_t)(2 * max + 3), sizeof(*v)), *vv;
	size_t pre = 0, suf = 0;

	if (v) {
		vv = v + max + 1;
		for (long d = 0; d <= max; d++)
			for (long k = -d; k <= d; k += 2) {
				long x = k == -d || (k != d && vv[k - 1] < vv[k + 1]) ? vv[k + 1]
										    : vv[k - 1] + 1;
				long y = x - k;

				while (x < n && y < m && !strcmp(a->v[x], b->v[y]))
					x++, y++;
				vv[k] = x;
				if (x >= n && y >= m) {
					free(v);
					return (size_t)((n + m - d) / 2);
				}
			}
		free(v);
	}
	while (pre < a->n && pre < b->n && !strcmp(a->v[pre], b->v[pre]))
		pre++;
	while (suf < a->n - pre && suf < b->n - pre &&
	       !strcmp(a->v[a->n - 1 - suf], b->v[b->n - 1 - suf]))
		suf++;
	return pre + suf;
}

#endif
