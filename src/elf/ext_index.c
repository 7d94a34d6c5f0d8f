/* ext_index.c - the .BTF.ext records of one kind (func_info, line_info, CO-RE) found by
 * section name and instruction range.  Linking gives every program the records of each
 * function it places; scanning all of the object's records (with a strcmp of the section
 * name each) for every placed function of every program was quadratic: Tracee's 10 MB
 * object (171 programs, each with its subprograms appended) spent over half of its open
 * there.  The index is built once per object in O(n) when the file lists each section's
 * records in instruction order, as clang writes them (a section listed out of order is
 * sorted on its own), and answers a function's records with two binary searches.
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

/* a block's sort key: its section name, then its place in the file */
struct block {
	const char *name;
	uint32_t first;
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

/* Sort group g's records by offset, ties in file order: 0 or -ENOMEM. */
static int sort_group(struct brt_ext_index *ix, size_t g)
{
	uint32_t *o = ix->order + ix->start[g];
	size_t len = ix->start[g + 1] - ix->start[g];
	struct rec_key *k = malloc(len * sizeof(*k));

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		k[i] = (struct rec_key){ rec_off(ix, o[i]), o[i] };
	qsort(k, len, sizeof(*k), cmp_rec);
	for (size_t i = 0; i < len; i++)
		o[i] = k[i].idx;
	free(k);
	return 0;
}

int brt_ext_index_build(struct brt_ext_index *ix, const void *recs, size_t n, size_t stride,
			size_t sec_off, size_t off_off)
{
	struct block *blocks = NULL;
	uint32_t *group_of = NULL, *count = NULL;
	size_t nblocks = 0;
	int ret = -ENOMEM;

	memset(ix, 0, sizeof(*ix));
	ix->recs = recs;
	ix->stride = stride;
	ix->sec_off = sec_off;
	ix->off_off = off_off;
	if (!n)
		return 0;
	if (n >= UINT32_MAX)
		return -E2BIG;
	/* blocks: runs of records naming their section by the same string (the file's
	 * per-section headers), grouped by the name's text */
	blocks = malloc(n * sizeof(*blocks));
	group_of = malloc(n * sizeof(*group_of));
	ix->order = malloc(n * sizeof(*ix->order));
	if (!blocks || !group_of || !ix->order)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!i || rec_sec(ix, i) != rec_sec(ix, i - 1))
			blocks[nblocks++] = (struct block){ rec_sec(ix, i), (uint32_t)i };
	qsort(blocks, nblocks, sizeof(*blocks), cmp_block);
	ix->names = malloc(nblocks * sizeof(*ix->names));
	ix->start = calloc(nblocks + 1, sizeof(*ix->start));
	count = calloc(nblocks + 1, sizeof(*count));
	if (!ix->names || !ix->start || !count)
		goto out;
	/* a block's first record gets its group, the others their block's */
	for (size_t k = 0; k < nblocks; k++) {
		if (!k || strcmp(blocks[k].name, ix->names[ix->ngroups - 1]))
			ix->names[ix->ngroups++] = blocks[k].name;
		group_of[blocks[k].first] = (uint32_t)ix->ngroups - 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (i && rec_sec(ix, i) == rec_sec(ix, i - 1))
			group_of[i] = group_of[i - 1];
		count[group_of[i] + 1]++;
	}
	/* counting sort by group, stable: each group's records in file order */
	for (size_t g = 0; g < ix->ngroups; g++)
		count[g + 1] += count[g];
	memcpy(ix->start, count, (ix->ngroups + 1) * sizeof(*count));
	for (size_t i = 0; i < n; i++)
		ix->order[count[group_of[i]]++] = (uint32_t)i;
	/* then by instruction offset, ties in file order (only a group not already so) */
	ret = 0;
	for (size_t g = 0; g < ix->ngroups && !ret; g++) {
		const uint32_t *o = ix->order + ix->start[g];
		size_t len = ix->start[g + 1] - ix->start[g], i = 1;

		while (i < len && rec_off(ix, o[i - 1]) <= rec_off(ix, o[i]))
			i++;
		if (i < len)
			ret = sort_group(ix, g);
	}
out:
	free(blocks);
	free(group_of);
	free(count);
	if (ret)
		brt_ext_index_free(ix);
	return ret;
}

void brt_ext_index_free(struct brt_ext_index *ix)
{
	free(ix->order);
	free(ix->start);
	free(ix->names);
	memset(ix, 0, sizeof(*ix));
}

int brt_ext_index_group(const struct brt_ext_index *ix, const char *sec)
{
	size_t lo = 0, hi = ix->ngroups;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ix->names[mid], sec);

		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* First position of group g whose record's offset is >= off. */
static size_t lower(const struct brt_ext_index *ix, int g, uint32_t off)
{
	size_t lo = ix->start[g], hi = ix->start[g + 1];

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rec_off(ix, ix->order[mid]) < off)
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
	*to = hi > UINT32_MAX ? ix->start[g + 1] : lower(ix, g, (uint32_t)hi);
}
