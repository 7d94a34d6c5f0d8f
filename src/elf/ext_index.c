/* ext_index.c - the .BTF.ext records of one kind (func_info, line_info, CO-RE) found by
 * section name and instruction range.  Linking gives every program the records of each
 * function it places; scanning all of the object's records (with a strcmp of the section
 * name each) for every placed function of every program was quadratic: Tracee's 10 MB
 * object (171 programs, each with its subprograms appended) spent over half of its open
 * there.  The index is built once per object in one pass over the records: a section
 * the file lists in one block in instruction order, as clang writes it, is searched where
 * it is; one listed out of order or in several blocks gets an order of its own.  A
 * function's records are then two binary searches away.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/parse.h"

/* Record i's section name and instruction offset (memcpy: the records are of three
 * struct types that all start with these fields, read through their offsets). */
static const char *rec_sec(const struct brt_ext_index *ix, size_t i)
{
	const char *s;

	memcpy(&s, ix->recs + i * ix->stride + ix->sec_off, sizeof(s));
	return s;
}

static uint32_t rec_off(const struct brt_ext_index *ix, size_t i)
{
	uint32_t v;

	memcpy(&v, ix->recs + i * ix->stride + ix->off_off, sizeof(v));
	return v;
}

/* A run of records naming their section by the same string (one of the file's
 * per-section blocks): where it starts, how many, whether its offsets never decrease. */
struct block {
	const char *name;
	uint32_t first, count;
	int sorted;
};

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->first < y->first ? -1 : x->first > y->first;
}

/* a record's sort key within its group: offset, then file order */
struct rec_key {
	uint32_t off, idx;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec_key *x = a, *y = b;

	return x->off != y->off ? (x->off < y->off ? -1 : 1) : x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The blocks bl[0..nb) (one name, in file order) as group g's order: their records by
 * offset, ties in file order.  0 or -ENOMEM. */
static int order_group(struct brt_ext_index *ix, struct brt_ext_group *g, const struct block *bl,
		       size_t nb)
{
	struct rec_key *k = malloc(g->count * sizeof(*k));
	size_t n = 0;

	g->order = malloc(g->count * sizeof(*g->order));
	if (!k || !g->order) {
		free(k);
		return -ENOMEM;
	}
	for (size_t b = 0; b < nb; b++)
		for (uint32_t i = bl[b].first; i < bl[b].first + bl[b].count; i++)
			k[n++] = (struct rec_key){ rec_off(ix, i), i };
	qsort(k, n, sizeof(*k), cmp_rec);
	for (size_t i = 0; i < n; i++)
		g->order[i] = k[i].idx;
	free(k);
	return 0;
}

int brt_ext_index_build(struct brt_ext_index *ix, const void *recs, size_t n, size_t stride,
			size_t sec_off, size_t off_off)
{
	struct block *blocks = NULL;
	size_t nblocks = 0, cap = 0;
	int ret = 0;

	memset(ix, 0, sizeof(*ix));
	ix->recs = recs;
	ix->stride = stride;
	ix->sec_off = sec_off;
	ix->off_off = off_off;
	if (!n)
		return 0;
	if (n >= UINT32_MAX)
		return -E2BIG;
	/* one pass: the blocks, and whether each lists its records in offset order */
	for (size_t i = 0; i < n; i++) {
		const char *sec = rec_sec(ix, i);
		uint32_t off = rec_off(ix, i);

		if (nblocks && blocks[nblocks - 1].name == sec) {
			struct block *b = &blocks[nblocks - 1];

			b->sorted &= rec_off(ix, i - 1) <= off;
			b->count++;
			continue;
		}
		if (nblocks == cap) {
			struct block *nb;

			cap = cap ? 2 * cap : 64;
			nb = realloc(blocks, cap * sizeof(*nb));
			if (!nb) {
				free(blocks);
				return -ENOMEM;
			}
			blocks = nb;
		}
		blocks[nblocks++] = (struct block){ sec, (uint32_t)i, 1, 1 };
	}
	/* grouped by the name's text (two blocks may name one section) */
	qsort(blocks, nblocks, sizeof(*blocks), cmp_block);
	ix->groups = calloc(nblocks, sizeof(*ix->groups));
	if (!ix->groups)
		ret = -ENOMEM;
	for (size_t b = 0, e; b < nblocks && !ret; b = e) {
		struct brt_ext_group *g = &ix->groups[ix->ngroups++];

		for (e = b + 1; e < nblocks && !strcmp(blocks[e].name, blocks[b].name); e++)
			;
		g->name = blocks[b].name;
		g->first = blocks[b].first;
		for (size_t k = b; k < e; k++)
			g->count += blocks[k].count;
		/* the usual case, one block in offset order, is read where it is */
		if (e - b > 1 || !blocks[b].sorted)
			ret = order_group(ix, g, blocks + b, e - b);
	}
	free(blocks);
	if (ret)
		brt_ext_index_free(ix);
	return ret;
}

void brt_ext_index_free(struct brt_ext_index *ix)
{
	for (size_t g = 0; ix->groups && g < ix->ngroups; g++)
		free(ix->groups[g].order);
	free(ix->groups);
	memset(ix, 0, sizeof(*ix));
}

int brt_ext_index_group(const struct brt_ext_index *ix, const char *sec)
{
	size_t lo = 0, hi = ix->ngroups;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ix->groups[mid].name, sec);

		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

uint32_t brt_ext_index_rec(const struct brt_ext_index *ix, int g, size_t pos)
{
	const struct brt_ext_group *gr = &ix->groups[g];

	return gr->order ? gr->order[pos] : gr->first + (uint32_t)pos;
}

/* First position of group g whose record's offset is >= off. */
static size_t lower(const struct brt_ext_index *ix, int g, uint32_t off)
{
	size_t lo = 0, hi = ix->groups[g].count;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rec_off(ix, brt_ext_index_rec(ix, g, mid)) < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void brt_ext_index_range(const struct brt_ext_index *ix, int g, uint64_t lo, uint64_t hi,
			 size_t *from, size_t *to)
{
	*from = *to = 0;
	if (g < 0 || lo > UINT32_MAX || hi <= lo)
		return;
	*from = lower(ix, g, (uint32_t)lo);
	*to = hi > UINT32_MAX ? ix->groups[g].count : lower(ix, g, (uint32_t)hi);
}
