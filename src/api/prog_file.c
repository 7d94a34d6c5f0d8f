/* prog_file.c - a loaded program's file in a form any process can rebuild it from: the
 * instructions with map references as indexes into the map table stored after them and,
 * once the program is pinned, links to its maps' files in the pinning user's links
 * directory ($BPFRT_FS/.bpfrt-maps for root, .bpfrt-maps.<uid> for others), so the maps
 * outlive every process that had them open, as a pinned program keeps its maps in the
 * kernel.  A link stays while some pinned program names it: unpinning is rm, which tells
 * nobody, so a program pin that links a new map first drops the links of its user no
 * pinned program names any more, holding that user's lock (a 0600 file no other user can
 * open, so none can hold it); readers take no lock.  docs/SECURITY.md.
 *
 * Finding out whether anything was unpinned must not cost a walk of every pin at every
 * pin (quadratic: `bpfrt prog loadall` of 34 objects into one directory made 650 system
 * calls per object, most of them opening other objects' pins).  So each pinned program
 * of the user is also hard-linked into the links directory as ".prog-<inode>": its link
 * count is its pins plus such links (this user's and any other user's), and a count with
 * no pin left means it was unpinned.  The lock file's first byte says whether every map
 * link is named by a program linked so ('c', clean) or not (anything else: a pin failed
 * after linking maps, a process died in between, a directory from an older version); the
 * full walk of $BPFRT_FS runs only when a program was unpinned or the state is not clean,
 * and it links the user's pinned programs it finds, so later unpins are seen.  When the
 * state was clean, the program links left after the unpinned ones are dropped are all the
 * user's pinned programs, and their map tables answer instead of the walk, unless another
 * user's links directory exists (collect_linked()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "btf/btf.h"
#include "maps/maps.h"
#include "util/util.h"
#include "verifier/verifier.h"

#define LINK_DIR ".bpfrt-maps"
#define NAME_LEN 48
/* a pinned program's link in its user's links directory (a leading dot: never taken for
 * a map link, which is hex, nor listed by tools counting the maps' links) */
#define PROG_LINK ".prog-"
#define STATE_CLEAN 'c'

uint64_t brt_prog_file_data_size(uint32_t insn_cnt, uint32_t nmaps, uint32_t nfuncs)
{
	return (uint64_t)insn_cnt * sizeof(struct bpf_insn) +
	       (uint64_t)nmaps * sizeof(struct brt_prog_mapref) + nfuncs;
}

/* The map table after insn_cnt instructions (the program's own count, never the shared
 * header's: another process may rewrite that one after it was checked). */
static struct brt_prog_mapref *table_of(const struct brt_obj *obj, uint32_t insn_cnt)
{
	return (struct brt_prog_mapref *)((char *)obj->base +
					  (size_t)insn_cnt * sizeof(struct bpf_insn));
}

const struct brt_prog_mapref *brt_prog_file_maps(const struct brt_prog *prog)
{
	return table_of(&prog->obj, prog->insn_cnt);
}

const uint8_t *brt_prog_file_linkage(const struct brt_prog *prog)
{
	return (const uint8_t *)(table_of(&prog->obj, prog->insn_cnt) + prog->nmaps);
}

void brt_prog_file_write(struct brt_obj *obj, const struct bpf_insn *stored, uint32_t n,
			 const struct brt_prog_maps *pm, const uint8_t *linkage, uint32_t nfuncs)
{
	struct brt_prog_mapref *t = table_of(obj, n);

	if (nfuncs)
		memcpy(t + pm->n, linkage, nfuncs);
	memcpy(obj->base, stored, (size_t)n * sizeof(*stored));
	for (uint32_t i = 0; i < pm->n; i++) {
		const struct brt_map *m = pm->maps[i];

		t[i] = (struct brt_prog_mapref){ .id = m->obj.snap.id, .type = m->type,
						 .key_size = m->key_size,
						 .value_size = m->value_size,
						 .max_entries = m->max_entries, .flags = m->flags,
						 .ino = (uint64_t)m->obj.ino };
	}
}

/* Every map reference takes an lddw (two instruction slots), every function at least an
 * instruction. */
static int sizes_ok(const struct brt_obj_hdr *hdr, uint64_t file_size)
{
	return hdr->max_entries && hdr->nmaps <= hdr->max_entries / 2 &&
	       hdr->nfuncs <= hdr->max_entries &&
	       hdr->data_size == brt_prog_file_data_size(hdr->max_entries, hdr->nmaps,
							 hdr->nfuncs) &&
	       hdr->file_size == file_size && hdr->data_size <= brt_obj_hdr_at(hdr);
}

/* ---- the program's BTF, func_info and line_info after the instructions' pages ----------
 * so another process answers OBJ_GET_INFO_BY_FD with them and BTF_GET_FD_BY_ID finds the
 * BTF while the program lives (a kernel program holds its BTF).  Read back, every byte is
 * untrusted: sizes checked against the file, copied to private memory, then the blob
 * goes through BPF_BTF_LOAD's checks and the records through BPF_PROG_LOAD's. */
struct prog_tail {
	uint32_t magic;     /* TAIL_MAGIC */
	uint32_t btf_size;  /* BTF blob after this header */
	uint32_t nfuncs;    /* struct bpf_func_info after the blob (4-byte aligned) */
	uint32_t nlines;    /* struct bpf_line_info after them */
};

#define TAIL_MAGIC 0x50465442u /* "BTFP" */
#define TAIL_MAX (4u << 20)    /* as a map's copy of its BTF: bigger ones are not kept */

static uint64_t tail_bytes(uint32_t btf_size, uint32_t nfuncs, uint32_t nlines)
{
	return sizeof(struct prog_tail) + (((uint64_t)btf_size + 3) & ~3ull) +
	       (uint64_t)nfuncs * sizeof(struct bpf_func_info) +
	       (uint64_t)nlines * sizeof(struct bpf_line_info);
}

uint32_t brt_prog_file_tail_size(const struct brt_prog_lines *pl)
{
	const void *blob;
	uint32_t size;
	uint64_t n;

	if (!pl || !pl->btf || !pl->types || brt_btf_obj_blob(pl->btf, &blob, &size))
		return 0;
	n = tail_bytes(size, pl->func_offs ? pl->nfuncs : 0, pl->n);
	return n <= TAIL_MAX ? (uint32_t)n : 0;
}

void brt_prog_file_write_tail(struct brt_obj *obj, const struct brt_prog_lines *pl)
{
	struct prog_tail t = { .magic = TAIL_MAGIC };
	unsigned char *at = (unsigned char *)obj->base + brt_obj_tail_off(&obj->snap);
	const void *blob;

	if (!obj->snap.tail_size || brt_btf_obj_blob(pl->btf, &blob, &t.btf_size))
		return;
	t.nfuncs = pl->func_offs ? pl->nfuncs : 0;
	t.nlines = pl->n;
	memcpy(at, &t, sizeof(t));
	at += sizeof(t);
	memcpy(at, blob, t.btf_size);
	at += (t.btf_size + 3) & ~3u;
	for (uint32_t i = 0; i < t.nfuncs; i++) {
		struct bpf_func_info fi = { .insn_off = pl->func_offs[i],
					    .type_id = pl->func_ids[i] };

		memcpy(at, &fi, sizeof(fi));
		at += sizeof(fi);
	}
	for (uint32_t i = 0; i < t.nlines; i++) {
		const struct brt_vline *v = &pl->lines[i];
		struct bpf_line_info li = {
			.insn_off = v->insn_off,
			.file_name_off = (uint32_t)(v->file - pl->types->strs),
			.line_off = (uint32_t)(v->src - pl->types->strs),
			.line_col = v->line << 10 | (v->col & 0x3ff),
		};

		memcpy(at, &li, sizeof(li));
		at += sizeof(li);
	}
}

/* A private copy of the tail when its sizes fit the file as first seen: 0 or -errno. */
static int tail_copy(const struct brt_obj *obj, struct prog_tail *t, unsigned char **out)
{
	uint64_t off = brt_obj_tail_off(&obj->snap), n = obj->snap.tail_size;
	unsigned char *copy;

	*out = NULL;
	if (!n || n > TAIL_MAX || n < sizeof(*t) || obj->size < BRT_PAGE ||
	    obj->snap.file_size != obj->size || off > brt_obj_hdr_at(&obj->snap) ||
	    n > brt_obj_hdr_at(&obj->snap) - off)
		return -ENOENT;
	copy = malloc(n);
	if (!copy)
		return -ENOMEM;
	/* one copy: the shared bytes are never read twice */
	memcpy(copy, (const unsigned char *)obj->base + off, n);
	memcpy(t, copy, sizeof(*t));
	if (t->magic != TAIL_MAGIC || tail_bytes(t->btf_size, t->nfuncs, t->nlines) != n) {
		free(copy);
		return -EINVAL;
	}
	*out = copy;
	return 0;
}

int brt_prog_file_btf(const struct brt_obj *obj, void **blob, uint32_t *size)
{
	struct prog_tail t;
	unsigned char *copy;
	int err = tail_copy(obj, &t, &copy);

	if (err)
		return err;
	memmove(copy, copy + sizeof(t), t.btf_size);
	*blob = copy;
	*size = t.btf_size;
	return 0;
}

int brt_prog_file_lines(const struct brt_prog *prog, const struct bpf_insn *insns,
			struct brt_prog_lines **out)
{
	const struct brt_obj *obj = &prog->obj;
	struct prog_tail t;
	unsigned char *copy, *recs;
	union bpf_attr attr;
	struct brt_call call = { .attr = &attr, .ua = &brt_uaccess_trusted };
	int err, btf_fd;

	*out = NULL;
	if (!obj->snap.btf_id)
		return -ENOENT;
	err = tail_copy(obj, &t, &copy);
	if (err)
		return err;
	/* the BTF object again under its id, as BTF_GET_FD_BY_ID re-creates it */
	btf_fd = brt_btf_new_fd(copy + sizeof(t), t.btf_size, obj->snap.btf_id);
	if (btf_fd < 0) {
		free(copy);
		return btf_fd;
	}
	recs = copy + sizeof(t) + ((t.btf_size + 3) & ~3u);
	memset(&attr, 0, sizeof(attr));
	attr.insn_cnt = prog->insn_cnt;
	attr.prog_btf_fd = (uint32_t)btf_fd;
	attr.func_info_rec_size = sizeof(struct bpf_func_info);
	attr.func_info = (uint64_t)(uintptr_t)recs;
	attr.func_info_cnt = t.nfuncs;
	attr.line_info_rec_size = sizeof(struct bpf_line_info);
	attr.line_info = (uint64_t)(uintptr_t)(recs + (size_t)t.nfuncs *
						  sizeof(struct bpf_func_info));
	attr.line_info_cnt = t.nlines;
	err = brt_prog_btf_check(&call, insns, NULL, 0, out);
	close(btf_fd);
	free(copy);
	return err;
}

int brt_prog_file_check(const struct brt_obj_hdr *hdr, uint64_t file_size)
{
	return file_size >= BRT_PAGE && sizes_ok(hdr, file_size) ? 0 : -EINVAL;
}

uint32_t brt_prog_file_max_priv(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return BRT_PRIV_UNPRIV;
	/* writable by others: anyone could have set the level, whoever owns it */
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return BRT_PRIV_UNPRIV;
	return st.st_uid == geteuid() || st.st_uid == 0 ? BRT_PRIV_ROOT : BRT_PRIV_UNPRIV;
}

static void link_name(uint32_t id, uint64_t ino, char *buf)
{
	snprintf(buf, NAME_LEN, "%08" PRIx32 "-%" PRIx64, id, ino);
}

/* The links' directory of uid: LINK_DIR for root (the name every version used), else
 * LINK_DIR.<uid>.  Each user links only into their own, so nobody can remove, replace
 * or lock a link another user's pinned program depends on. */
static void links_dir_name(uid_t uid, char *buf, size_t len)
{
	if (uid == 0)
		snprintf(buf, len, LINK_DIR);
	else
		snprintf(buf, len, LINK_DIR ".%u", (unsigned)uid);
}

/* Open the links' directory name in the bpffs directory fs (an fd) if it is a real
 * directory of uid that nobody else can write; -errno otherwise. */
static int open_links_dir(int fs, const char *name, uid_t uid)
{
	return brt_fs_owned_dir(fs, name, uid);
}

/* This user's links' directory, created when missing, and its lock held (util.h,
 * brt_fs_owned_dir_lock()).  The locked file's fd, the directory's fd in *dirfd, or
 * -errno. */
static int lock_links(int *dirfd)
{
	char name[64];
	int fs, lock;

	fs = brt_obj_fs_open(1);
	if (fs < 0)
		return fs;
	links_dir_name(geteuid(), name, sizeof(name));
	lock = brt_fs_owned_dir_lock(fs, name, dirfd);
	close(fs);
	if (lock < 0 && lock != -ENOLCK)
		brt_print(BPFRT_WARN, "bpfrt: %s/%s: not a directory of yours that only you can "
			  "write (%s); maps of pinned programs are not linked\n",
			  brt_obj_fs_dir(), name, strerror(-lock));
	return lock;
}

/* Call fn(dirfd, arg) for every trusted links' directory (every user's) until it
 * returns non-zero; that value, or 0. */
static int each_links_dir(int (*fn)(int dirfd, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d;
	int fs = brt_obj_fs_open(0), ret = 0;

	if (fs < 0)
		return 0;
	d = fdopendir(fs);
	if (!d) {
		close(fs);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		unsigned uid = 0;
		int used = 0, dir;

		if (strcmp(de->d_name, LINK_DIR) &&
		    (sscanf(de->d_name, LINK_DIR ".%u%n", &uid, &used) != 1 || de->d_name[used] ||
		     !uid))
			continue;
		dir = open_links_dir(dirfd(d), de->d_name, (uid_t)uid);
		if (dir < 0)
			continue;
		ret = fn(dir, arg);
		close(dir);
	}
	closedir(d);
	return ret;
}

/* Does the map opened as fd match the table entry? */
static int map_matches(int fd, const struct brt_prog_mapref *r)
{
	struct brt_map *m;
	int ok;

	if (brt_map_from_fd(fd, &m))
		return 0;
	ok = m->obj.snap.id == r->id && (uint64_t)m->obj.ino == r->ino && m->type == r->type &&
	     m->key_size == r->key_size && m->value_size == r->value_size &&
	     m->max_entries == r->max_entries && m->flags == r->flags;
	brt_map_put(m);
	return ok;
}

struct link_search {
	const char *name;                /* the link's name */
	const struct brt_prog_mapref *r; /* the map it must be */
	int mismatch;                    /* a link of that name was another map */
};

/* A regular file name in dirfd that is the map r names: its fd (positive), else 0. */
static int open_link(int dirfd, void *arg)
{
	struct link_search *ls = arg;
	int fd = brt_fs_open_reg(dirfd, ls->name, O_RDWR, 0);

	if (fd < 0)
		return 0;
	if (!map_matches(fd, ls->r)) {
		ls->mismatch = 1;
		close(fd);
		return 0;
	}
	return fd;
}

/* Readers take no lock: a link a pinned program names is never collected, and another
 * user must not be able to make us wait (docs/SECURITY.md). */
int brt_prog_file_open_maps(const struct brt_prog *prog, int **fds, uint32_t *n)
{
	uint32_t nmaps = prog->nmaps;
	struct brt_prog_mapref *t;
	char name[NAME_LEN];
	int err = 0;

	*n = 0;
	*fds = calloc(nmaps ? nmaps : 1, sizeof(int));
	if (!*fds)
		return -ENOMEM;
	if (!nmaps)
		return 0;
	/* a private copy: the link's name and the match are checked on the same entry */
	t = malloc((size_t)nmaps * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memcpy(t, brt_prog_file_maps(prog), (size_t)nmaps * sizeof(*t));
	for (uint32_t i = 0; i < nmaps && !err; i++) {
		struct link_search ls = { .name = name, .r = &t[i] };
		int fd;

		link_name(t[i].id, t[i].ino, name);
		fd = each_links_dir(open_link, &ls);
		if (fd <= 0) {
			err = ls.mismatch ? -EINVAL : -ENOENT;
			break;
		}
		(*fds)[(*n)++] = fd;
	}
	free(t);
	if (err) {
		for (uint32_t i = 0; i < *n; i++)
			close((*fds)[i]);
		*n = 0;
	}
	return err;
}

/* ---- pinning: links and their collection ------------------------------------------ */

struct idset {
	struct { uint32_t id; uint64_t ino; } *v;
	size_t n, cap;
};

static int idset_add(struct idset *s, uint32_t id, uint64_t ino)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		void *nv = realloc(s->v, cap * sizeof(*s->v));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n].id = id;
	s->v[s->n++].ino = ino;
	return 0;
}

static int idset_has(const struct idset *s, uint32_t id, uint64_t ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].id == id && s->v[i].ino == ino)
			return 1;
	return 0;
}

/* What one walk of $BPFRT_FS looks for (nftw() callbacks take no argument; a walk runs
 * on one thread). */
struct walk {
	struct idset *named; /* collect: maps named by pinned programs */
	int failed;          /* collect: a program file could not be read */
	int linkdir;         /* collect: link the user's pinned programs here (or -1) */
	uid_t uid;           /* collect: that user */
	uint32_t want_id;    /* find: a pinned map with this id */
	int found;           /* find: its fd */
};

static _Thread_local struct walk *walk;

/* Read the header of a file under $BPFRT_FS that may be an object; 0 when it is one of
 * kind. */
static int read_hdr(int fd, const struct stat *st, uint32_t kind, struct brt_obj_hdr *hdr)
{
	if (st->st_size < (off_t)BRT_PAGE || brt_obj_read_hdr(fd, (uint64_t)st->st_size, hdr))
		return -EINVAL;
	return hdr->kind == kind ? 0 : -EINVAL;
}

/* The program file open as fd (inode ino) linked into the links' directory dirfd as
 * PROG_LINK<ino>: 0 (also when it is there already) or -errno. */
static int link_prog(int dirfd, int fd, uint64_t ino)
{
	char name[NAME_LEN];
	int err;

	snprintf(name, sizeof(name), PROG_LINK "%" PRIx64, ino);
	err = brt_fs_link_fd(fd, dirfd, name);
	return err == -EEXIST ? 0 : err;
}

/* Add the map table of the file open as fd (st: its stat) to named when it is a program
 * file: 0, 1 when it is none or names no map (nothing added), -1 when the table could not
 * be read. */
static int add_prog_maps(int fd, const struct stat *st, struct idset *named)
{
	struct brt_obj_hdr hdr;
	struct brt_prog_mapref *t;
	size_t bytes;
	int ret = 0;

	if (read_hdr(fd, st, BRT_OBJ_PROG, &hdr) || !sizes_ok(&hdr, (uint64_t)st->st_size) ||
	    !hdr.nmaps)
		return 1;
	bytes = (size_t)hdr.nmaps * sizeof(*t);
	t = malloc(bytes);
	if (!t || pread(fd, t, bytes, (off_t)hdr.max_entries * 8) != (ssize_t)bytes) {
		ret = -1;
	} else {
		for (uint32_t i = 0; i < hdr.nmaps; i++)
			if (idset_add(named, t[i].id, t[i].ino))
				ret = -1;
	}
	free(t);
	return ret;
}

static void collect_prog(int fd, const struct stat *st)
{
	int r = add_prog_maps(fd, st, walk->named);

	if (r > 0)
		return;
	if (r < 0)
		walk->failed = 1;
	/* the user's own pinned programs only: another user's pins link their maps in
	 * their own directory, and a link of ours would keep their program's file alive */
	if (walk->linkdir >= 0 && st->st_uid == walk->uid &&
	    link_prog(walk->linkdir, fd, (uint64_t)st->st_ino))
		walk->failed = 1;
}

static void find_map(int fd, const struct stat *st, const char *path)
{
	struct brt_obj_hdr hdr;

	if (!read_hdr(fd, st, BRT_OBJ_MAP, &hdr) && hdr.id == walk->want_id)
		walk->found = brt_fs_open_reg(AT_FDCWD, path, O_RDWR, 0);
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	int fd;

	if (flag == FTW_D && (!strncmp(path + ftw->base, LINK_DIR, strlen(LINK_DIR)) ||
			      brt_mim_is_link_dir(path + ftw->base)))
		return FTW_SKIP_SUBTREE;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return FTW_CONTINUE;
	fd = brt_fs_open_reg(AT_FDCWD, path, O_RDONLY, 0);
	if (fd < 0)
		return FTW_CONTINUE;
	if (walk->named)
		collect_prog(fd, st);
	else
		find_map(fd, st, path);
	close(fd);
	return walk->found >= 0 ? FTW_STOP : FTW_CONTINUE;
}

static void walk_fs(struct walk *w)
{
	walk = w;
	nftw(brt_obj_fs_dir(), visit, 16, FTW_PHYS | FTW_ACTIONRETVAL);
	walk = NULL;
}

static int idset_add_prog(struct idset *named, const struct brt_prog *prog)
{
	for (uint32_t i = 0; i < prog->pm.n; i++)
		if (idset_add(named, prog->pm.maps[i]->obj.snap.id, prog->pm.maps[i]->obj.ino))
			return -1;
	return 0;
}

/* One pin's view of the locked links' directory: read from its own fd, rewound for each
 * pass (a DIR cost a dup, an fstat, two fcntl and a close; the fd's offset matters to
 * nothing else: every other use is an *at() call), and the other users' links'
 * directories beside it, looked up at most once. */
struct scan {
	int dirfd;   /* the user's links' directory, locked */
	struct brt_dents d;
	int others;  /* other users' links' directories found (any name one could have);
		      * -1: not looked up yet */
	int fds[16]; /* the trusted ones among them, opened */
	int nfds;
};

/* The directory at its start; NULL when it cannot be read. */
static struct brt_dents *scan_pass(struct scan *sc)
{
	return brt_dents_start(&sc->d, sc->dirfd) ? NULL : &sc->d;
}

/* How many other users' links' directories lie beside ours (in ".." of ours: the bpffs
 * directory lock_links() opened it in, from where only its owner or root can move it),
 * the trusted ones opened into sc->fds; -1 when that directory cannot be read. */
static int scan_others(struct scan *sc)
{
	char mine[64];
	struct brt_dents d;
	const char *name;
	int fd;

	if (sc->others >= 0)
		return sc->others;
	links_dir_name(geteuid(), mine, sizeof(mine));
	fd = openat(sc->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d.fd = fd;
	d.got = d.at = 0;
	sc->others = 0;
	while ((name = brt_dents_next(&d))) {
		unsigned uid = 0;
		int used = 0, o;

		if (strncmp(name, LINK_DIR, strlen(LINK_DIR)) || !strcmp(name, mine))
			continue;
		sc->others++;
		if (sc->nfds == (int)(sizeof(sc->fds) / sizeof(sc->fds[0])) ||
		    (strcmp(name, LINK_DIR) &&
		     (sscanf(name, LINK_DIR ".%u%n", &uid, &used) != 1 || name[used] || !uid)))
			continue;
		o = open_links_dir(fd, name, (uid_t)uid);
		if (o >= 0)
			sc->fds[sc->nfds++] = o;
	}
	close(fd);
	return sc->others;
}

static void scan_end(struct scan *sc)
{
	for (int i = 0; i < sc->nfds; i++)
		close(sc->fds[i]);
}

static void held_forget_links(void);

/* Drop the map links of the directory that named does not hold: 0, or -1 when the
 * directory cannot be read. */
static int drop_unnamed(struct scan *sc, const struct idset *named)
{
	struct brt_dents *d = scan_pass(sc);
	const char *name;

	held_forget_links(); /* what it drops may be remembered as linked */
	if (!d)
		return -1;
	while ((name = brt_dents_next(d))) {
		uint32_t id;
		uint64_t ino;
		int used;

		if (sscanf(name, "%8" SCNx32 "-%" SCNx64 "%n", &id, &ino, &used) != 2 ||
		    name[used])
			continue;
		if (!idset_has(named, id, ino))
			unlinkat(sc->dirfd, name, 0);
	}
	return 0;
}

/* Drop the links (in the locked directory) that no pinned program and not prog names,
 * and link the user's pinned programs (PROG_LINK).  0 when every pinned program could
 * be read and linked, -1 otherwise (nothing dropped then when unreadable: keep
 * everything rather than drop a link in use). */
static int collect(struct scan *sc, const struct brt_prog *prog)
{
	struct idset named = { 0 };
	struct walk w = { .named = &named, .found = -1, .linkdir = sc->dirfd,
			  .uid = geteuid() };
	int ret = -1;

	if (idset_add_prog(&named, prog))
		goto out;
	walk_fs(&w);
	if (!w.failed)
		ret = drop_unnamed(sc, &named);
out:
	free(named.v);
	return ret;
}

/* Drop this directory's program links whose program has no pin left (its link count is
 * only such links, here and in other users' directories): 1 when one was dropped (the
 * links of its maps may be named by nobody now), 0 when none, -1 when the directory
 * cannot be read. */
static int sweep(struct scan *sc)
{
	struct brt_dents *d = scan_pass(sc);
	struct stat st, ost;
	const char *name;
	int dropped = 0;

	if (!d)
		return -1;
	while ((name = brt_dents_next(d))) {
		nlink_t links = 1;

		if (strncmp(name, PROG_LINK, strlen(PROG_LINK)) ||
		    fstatat(sc->dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (st.st_nlink > 1)
			scan_others(sc);
		for (int i = 0; i < sc->nfds && st.st_nlink > links; i++)
			if (!fstatat(sc->fds[i], name, &ost, AT_SYMLINK_NOFOLLOW) &&
			    ost.st_ino == st.st_ino && ost.st_dev == st.st_dev)
				links++;
		if (st.st_nlink <= links) {
			unlinkat(sc->dirfd, name, 0);
			dropped = 1;
		}
	}
	return dropped;
}

/* collect() without the walk of $BPFRT_FS, when the state was clean before sweep()
 * dropped the links of unpinned programs: then every map link here is named by a program
 * linked here (PROG_LINK), and those sweep() kept are the ones still pinned, so their
 * map tables and prog's are all the names there are.  Another user's pinned program
 * links its maps in its own directory, but one whose linking failed may rely on ours,
 * which only the walk would see: so only when no other user's links' directory exists.
 * 0 when done, -1 when the walk must answer (nothing dropped then). */
static int collect_linked(struct scan *sc, const struct brt_prog *prog)
{
	struct idset named = { 0 };
	struct brt_dents *d;
	const char *name;
	struct stat st;
	int fd, ret = -1;

	if (scan_others(sc) || idset_add_prog(&named, prog) || !(d = scan_pass(sc)))
		goto out;
	ret = 0;
	while (!ret && (name = brt_dents_next(d))) {
		if (strncmp(name, PROG_LINK, strlen(PROG_LINK)))
			continue;
		/* only this user makes names here (a directory no one else can write) */
		fd = openat(sc->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
		    add_prog_maps(fd, &st, &named) < 0)
			ret = -1;
		if (fd >= 0)
			close(fd);
	}
	if (!ret)
		ret = drop_unnamed(sc, &named);
out:
	free(named.v);
	return ret;
}

/* Is map linked in the links' directory dirfd? */
static int map_linked(int dirfd, const struct brt_map *map, char *name)
{
	struct stat st;

	link_name(map->obj.snap.id, (uint64_t)map->obj.ino, name);
	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && st.st_ino == map->obj.ino;
}

/* A name for map's file in the links' directory.  First the fd the object was last
 * resolved through, when it still is the map's file: linked through the fd itself, no
 * /proc lookup (a process's first one costs ~11 us more, #17 item 3), and the new name
 * checked afterwards (another thread may have closed and reused the fd in between).
 * Then, as this process maps the file, the mapping's /proc/self/map_files entry (that
 * needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE); failing that, any fd of the process
 * that refers to it.  linked: the caller saw it linked already (under the lock, so it
 * still is), -1: saw it not linked (under the lock: nobody links it meanwhile), 0: did
 * not look.  0 when linked, -errno. */
static int link_map(int lnk, const struct brt_map *map, int linked)
{
	char name[NAME_LEN], src[300];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int err = -ENOENT, fd = map->obj.last_fd;

	if (linked > 0 || (!linked && map_linked(lnk, map, name)))
		return 0;
	link_name(map->obj.snap.id, (uint64_t)map->obj.ino, name);
	if (fd >= 0 && !fstat(fd, &st) && st.st_dev == map->obj.dev &&
	    st.st_ino == map->obj.ino && !brt_fs_link_fd(fd, lnk, name)) {
		if (map_linked(lnk, map, name))
			return 0;
		unlinkat(lnk, name, 0); /* not the map's file: the fd was reused */
	}
	snprintf(src, sizeof(src), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)(uintptr_t)map->obj.base,
		 (unsigned long)(uintptr_t)map->obj.base + map->obj.size);
	if (!linkat(AT_FDCWD, src, lnk, name, AT_SYMLINK_FOLLOW))
		return 0;
	dir = opendir("/proc/self/fd");
	while (dir && err && (de = readdir(dir))) {
		if (fstatat(dirfd(dir), de->d_name, &st, 0) || st.st_dev != map->obj.dev ||
		    st.st_ino != map->obj.ino)
			continue;
		snprintf(src, sizeof(src), "/proc/self/fd/%s", de->d_name);
		err = linkat(AT_FDCWD, src, lnk, name, AT_SYMLINK_FOLLOW) ? -errno : 0;
	}
	if (dir)
		closedir(dir);
	return err;
}

/* The links' lock a batch holds (api.h): the pins of one `prog loadall` take it, with
 * its directory, once rather than per pin (about 12 system calls each); other processes'
 * pins wait until the batch ends, as they would wait for one pin.  While the batch holds
 * the flock nobody else writes the state byte, so it is read once and written only when
 * it changes (a pread and a pwrite a pin before). */
static _Thread_local struct {
	uint64_t batch;
	uid_t uid;
	int lock, dir; /* or -1 */
	char state;    /* the lock file's state byte as this batch last read or wrote it; 0: not read */
	int swept;     /* the batch swept the directory (at its first pin of a new map) */
	/* maps this batch saw linked or linked itself: still linked, as only
	 * drop_unnamed() removes map links and it forgets them (an fstatat a map a pin:
	 * the programs of one object mostly share their maps) */
	struct { uint32_t id; uint64_t ino; } linked[32];
	unsigned nlinked;
} held = { .lock = -1, .dir = -1 };

static int held_linked(const struct brt_map *map)
{
	for (unsigned i = 0; i < held.nlinked; i++)
		if (held.linked[i].id == map->obj.snap.id &&
		    held.linked[i].ino == (uint64_t)map->obj.ino)
			return 1;
	return 0;
}

static void held_forget_links(void)
{
	held.nlinked = 0;
}

static void held_link(const struct brt_map *map)
{
	if (held_linked(map) || held.nlinked == sizeof(held.linked) / sizeof(held.linked[0]))
		return;
	held.linked[held.nlinked].id = map->obj.snap.id;
	held.linked[held.nlinked++].ino = (uint64_t)map->obj.ino;
}

static int state_clean(int lock)
{
	char c;

	if (lock == held.lock && held.state)
		return held.state == STATE_CLEAN;
	if (pread(lock, &c, 1, 0) != 1)
		return 0;
	if (lock == held.lock)
		held.state = c;
	return c == STATE_CLEAN;
}

static void state_set(int lock, char c)
{
	if (lock == held.lock && held.state == c)
		return;
	if (pwrite(lock, &c, 1, 0) != 1) {
		if (lock == held.lock)
			held.state = 0; /* unknown: read again */
		return; /* left as it was: a state that is not clean only costs a walk */
	}
	if (lock == held.lock)
		held.state = c;
}

void brt_prog_file_batch_end(void)
{
	if (held.lock < 0)
		return;
	close(held.dir);
	close(held.lock); /* releases the flock */
	held.lock = held.dir = -1;
	held.batch = 0;
	held.state = 0;
	held.swept = 0;
	held.nlinked = 0;
}

/* lock_links(), or the lock the calling thread's batch holds already. */
static int lock_links_held(int *dirfd)
{
	uint64_t batch = brt_obj_batch_id();
	uid_t uid;
	int lock;

	/* the batch's own user: as its privilege (check.c), sampled at its first pin */
	if (held.lock >= 0 && batch && held.batch == batch) {
		*dirfd = held.dir;
		return held.lock;
	}
	uid = geteuid();
	brt_prog_file_batch_end(); /* another batch's */
	lock = lock_links(dirfd);
	if (lock >= 0 && batch) {
		held.batch = batch;
		held.uid = uid;
		held.lock = lock;
		held.dir = *dirfd;
		held.state = 0;
		held.swept = 0;
		held.nlinked = 0;
	}
	return lock;
}

int brt_prog_file_pin_begin(struct brt_prog *prog, struct brt_pin_links *pl)
{
	struct scan sc = { .others = -1 };
	char name[NAME_LEN];
	int fresh = 0, clean, batch;
	uint32_t seen;

	pl->lock = pl->dir = -1;
	pl->clean = 0;
	if (!prog->pm.n)
		return 0; /* nothing to link, nothing the pin could leave behind */
	pl->lock = lock_links_held(&pl->dir);
	if (pl->lock < 0)
		return pl->lock;
	/* maps [0, seen) were found linked: neither sweep() nor collect() drops the link of
	 * a map prog names, and nobody else does while the lock is held */
	batch = pl->lock == held.lock;
	for (seen = 0; seen < prog->pm.n && !fresh; seen++) {
		struct brt_map *m = prog->pm.maps[seen];

		fresh = !(batch && held_linked(m)) && !map_linked(pl->dir, m, name);
		if (!fresh && batch)
			held_link(m);
	}
	if (fresh)
		seen--;
	clean = state_clean(pl->lock);
	/* Links are added only by a pin that makes a new one; that is when the ones
	 * nobody names any more are dropped (the sweep is cheap, the walk is not). */
	sc.dirfd = pl->dir;
	if (fresh || !clean) {
		/* A batch (one `prog loadall`, the lock held from its first pin to its end)
		 * sweeps at its first pin of a new map only: a program unpinned meanwhile is
		 * collected by the next such pin after it, as if unpinned then. */
		int swept;

		/* 1: a program was unpinned, -1: unreadable */
		swept = batch && held.swept && clean ? 0 : sweep(&sc);
		if (batch)
			held.swept = 1;
		/* a clean state: the programs linked here name every map linked here */
		if (swept > 0 && clean && !collect_linked(&sc, prog))
			swept = 0;
		if (swept || !clean) {
			clean = !collect(&sc, prog);
			if (clean && !fresh)
				state_set(pl->lock, STATE_CLEAN);
		}
	}
	scan_end(&sc);
	if (fresh && state_clean(pl->lock))
		state_set(pl->lock, 'd'); /* until the program's own link exists */
	/* A map that cannot be linked leaves the program usable where it is loaded only,
	 * as before pinning (docs/MEMORY_MODEL.md). */
	for (uint32_t i = 0; i < prog->pm.n; i++)
		if (!link_map(pl->dir, prog->pm.maps[i], i < seen ? 1 : i == seen ? -1 : 0) &&
		    batch)
			held_link(prog->pm.maps[i]);
	pl->clean = clean;
	return pl->lock;
}

void brt_prog_file_pin_end(struct brt_pin_links *pl, int prog_fd, uint64_t ino, int pinned)
{
	if (pl->lock < 0)
		return;
	if (pinned && !link_prog(pl->dir, prog_fd, ino)) {
		if (pl->clean)
			state_set(pl->lock, STATE_CLEAN);
	} else if (pinned) {
		state_set(pl->lock, 'd'); /* its unpin would go unseen: walk next time */
	}
	/* a batch's lock stays held until the batch ends */
	if (pl->lock != held.lock) {
		close(pl->dir);
		close(pl->lock); /* releases the flock */
	}
	pl->lock = pl->dir = -1;
}

int brt_prog_file_is_prog_link(const char *path, int base)
{
	const char *dir;

	if (base < 1 || strncmp(path + base, PROG_LINK, strlen(PROG_LINK)))
		return 0;
	/* the parent directory's name: LINK_DIR or LINK_DIR.<uid> */
	for (dir = path + base - 1; dir > path && dir[-1] != '/'; dir--)
		;
	return !strncmp(dir, LINK_DIR, strlen(LINK_DIR));
}

/* ---- BPF_MAP_GET_FD_BY_ID ---------------------------------------------------------- */

/* The first link in dirfd to a map with id *arg: its fd (positive), else 0. */
static int find_in_dir(int dirfd, void *arg)
{
	char prefix[16];
	struct dirent *de;
	DIR *dir;
	int dfd = dup(dirfd), fd = 0;

	snprintf(prefix, sizeof(prefix), "%08" PRIx32 "-", *(const uint32_t *)arg);
	dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (fd <= 0 && (de = readdir(dir)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			fd = brt_fs_open_reg(dirfd, de->d_name, O_RDWR, 0);
	closedir(dir);
	return fd > 0 ? fd : 0;
}

static int find_link(uint32_t id)
{
	int fd = each_links_dir(find_in_dir, &id);

	return fd > 0 ? fd : -ENOENT;
}

int brt_prog_file_find_map(uint32_t id)
{
	struct walk w = { .want_id = id, .found = -1 };
	int fd = find_link(id);

	if (fd >= 0)
		return fd;
	walk_fs(&w);
	return w.found >= 0 ? w.found : -ENOENT;
}
