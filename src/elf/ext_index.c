/* ext_index.c - the .BTF.ext records of one kind (func_info, line_info, CO-RE) found by
 * section name and instruction range.  Linking gives every program the records of each
 * function it places; scanning all of the object's records (with a strcmp of the section
 * name each) for every placed function of every program was quadratic: Tracee's 10 MB
 * object (171 programs, each with its subprograms appended) spent over half of its open
 * there.  The index is built from the file's blocks (one per section name, btf.c lists
 * them), not its records: the blocks sorted by name, so a section's records are a binary
 * search away, and nothing read per record until a program linked needs that section.  A
 * section the file lists in one block in instruction order, as clang writes it, is then
 * searched where it is (checked once, at its first use); one listed out of order or in
 * several blocks gets an order of its own at its first use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/parse.h"

/* The instruction offset of record i of block b. */
static uint32_t blk_off(const struct brt_ext_index *ix, const struct brt_btf_ext_block *b,
			size_t i)
{
	uint32_t v;

	memcpy(&v, b->recs + i * b->stride + ix->off_off, sizeof(v));
	return v;
}

/* Block k of group g (file order). */
static const struct brt_btf_ext_block *gblock(const struct brt_ext_index *ix,
					      const struct brt_ext_group *g, uint32_t k)
{
	return &ix->blocks[ix->by_name[g->first_blk + k]];
}

/* The block of group g holding record number rec (its blocks are in file order, so their
 * first record numbers increase). */
static const struct brt_btf_ext_block *rec_block(const struct brt_ext_index *ix,
						 const struct brt_ext_group *g, uint32_t rec)
{
	uint32_t lo = 0, hi = g->nblk;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (gblock(ix, g, mid)->first <= rec)
			lo = mid;
		else
			hi = mid;
	}
	return gblock(ix, g, lo);
}

static uint32_t rec_off(const struct brt_ext_index *ix, const struct brt_ext_group *g,
			uint32_t rec)
{
	const struct brt_btf_ext_block *b = rec_block(ix, g, rec);

	return blk_off(ix, b, rec - b->first);
}

static int cmp_by_name(const void *a, const void *b, void *arg)
{
	const struct brt_btf_ext_block *blocks = (const struct brt_btf_ext_block *)arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(blocks[x].sec, blocks[y].sec);

	return c ? c : x < y ? -1 : x > y;
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

/* Group g's records in (offset, file order), at its first use: read in place when it is
 * one block already in that order, else an order array.  0 or -ENOMEM. */
static int settle(struct brt_ext_index *ix, struct brt_ext_group *g)
{
	struct rec_key *k;
	size_t n = 0;

	if (g->settled)
		return 0;
	if (g->nblk == 1) {
		const struct brt_btf_ext_block *b = gblock(ix, g, 0);
		int sorted = 1;

		for (uint32_t i = 1; i < b->count && sorted; i++)
			sorted = blk_off(ix, b, i - 1) <= blk_off(ix, b, i);
		if (sorted) {
			g->settled = 1;
			return 0;
		}
	}
	k = malloc(g->count * sizeof(*k));
	g->order = malloc(g->count * sizeof(*g->order));
	if (!k || !g->order) {
		free(k);
		free(g->order);
		g->order = NULL;
		return -ENOMEM;
	}
	for (uint32_t bk = 0; bk < g->nblk; bk++) {
		const struct brt_btf_ext_block *b = gblock(ix, g, bk);

		for (uint32_t i = 0; i < b->count; i++)
			k[n++] = (struct rec_key){ blk_off(ix, b, i), b->first + i };
	}
	qsort(k, n, sizeof(*k), cmp_rec);
	for (size_t i = 0; i < n; i++)
		g->order[i] = k[i].idx;
	free(k);
	g->settled = 1;
	return 0;
}

int brt_ext_index_build(struct brt_ext_index *ix, const struct brt_btf_ext_block *blocks,
			size_t nblocks, size_t off_off)
{
	memset(ix, 0, sizeof(*ix));
	ix->blocks = blocks;
	ix->nblocks = nblocks;
	ix->off_off = off_off;
	if (!nblocks)
		return 0;
	if (nblocks >= UINT32_MAX)
		return -E2BIG;
	ix->by_name = malloc(nblocks * sizeof(*ix->by_name));
	ix->groups = calloc(nblocks, sizeof(*ix->groups));
	if (!ix->by_name || !ix->groups) {
		brt_ext_index_free(ix);
		return -ENOMEM;
	}
	for (size_t b = 0; b < nblocks; b++)
		ix->by_name[b] = (uint32_t)b;
	/* grouped by the name's text (two blocks may name one section), each group's blocks
	 * in file order */
	qsort_r(ix->by_name, nblocks, sizeof(*ix->by_name), cmp_by_name,
		(void *)(uintptr_t)blocks);
	for (size_t b = 0, e; b < nblocks; b = e) {
		struct brt_ext_group *g = &ix->groups[ix->ngroups++];
		const char *name = blocks[ix->by_name[b]].sec;

		g->name = name;
		g->first_blk = (uint32_t)b;
		for (e = b; e < nblocks && !strcmp(blocks[ix->by_name[e]].sec, name); e++)
			g->count += blocks[ix->by_name[e]].count;
		g->nblk = (uint32_t)(e - b);
	}
	return 0;
}

void brt_ext_index_free(struct brt_ext_index *ix)
{
	for (size_t g = 0; ix->groups && g < ix->ngroups; g++)
		free(ix->groups[g].order);
	free(ix->groups);
	free(ix->by_name);
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

	return gr->order ? gr->order[pos] : gblock(ix, gr, 0)->first + (uint32_t)pos;
}

const struct brt_btf_ext_block *brt_ext_index_block(const struct brt_ext_index *ix, int g,
						    uint32_t rec)
{
	return rec_block(ix, &ix->groups[g], rec);
}

/* First position of group g whose record's offset is >= off. */
static size_t lower(const struct brt_ext_index *ix, int g, uint32_t off)
{
	const struct brt_ext_group *gr = &ix->groups[g];
	size_t lo = 0, hi = gr->count;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rec_off(ix, gr, brt_ext_index_rec(ix, g, mid)) < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int brt_ext_index_range(struct brt_ext_index *ix, int g, uint64_t lo, uint64_t hi, size_t *from,
			size_t *to)
{
	int ret;

	*from = *to = 0;
	if (g < 0 || lo > UINT32_MAX || hi <= lo)
		return 0;
	if ((ret = settle(ix, &ix->groups[g])))
		return ret;
	*from = lower(ix, g, (uint32_t)lo);
	*to = hi > UINT32_MAX ? ix->groups[g].count : lower(ix, g, (uint32_t)hi);
	return 0;
}
