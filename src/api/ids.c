/* ids.c - BPF_{PROG,MAP,BTF,LINK}_GET_NEXT_ID and BPF_{PROG,BTF,LINK}_GET_FD_BY_ID (and
 * the search of BPF_MAP_GET_FD_BY_ID, pin.c).  The kernel walks its idr of live objects;
 * bpfrt's objects are files in $BPFRT_FS that live as long as something holds them, so
 * the live ones are found where the kernel would keep them alive: an fd of any process
 * (/proc/PID/fd), a mapping (/proc/PID/map_files: a program's maps, an mmap'd array) or a
 * pin (a name under $BPFRT_FS, the pinned programs' map links included).  Each candidate
 * is recognised by its header (last page: magic, version, kind, size, id), ids come from
 * the per-kind counters of obj.c, so they are unique in one $BPFRT_FS and ascend in
 * creation order as the kernel's do.  Both commands need CAP_SYS_ADMIN, as in the kernel;
 * opening another process's fd through /proc needs what ptrace needs, which root has.
 *
 * Links are no files (a socketpair per link, api/link.c): their ids and fds come from the
 * records of api/link_rec.c.
 * A walk costs one readlink per fd of every process and one read of each process's maps
 * (a few ms on a machine with a hundred processes); bpftool calls it twice per object.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "api/api.h"
#include "api/link_rec.h"
#include "maps/maps.h"
#include "util/util.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* What one walk looks for: the smallest id >= min of kind (GET_NEXT_ID) or, with open
 * set, an fd of the object with id min (GET_FD_BY_ID). */
struct id_walk {
	uint32_t kind, min;
	int open;
	uint32_t best;   /* GET_NEXT_ID: the answer so far, 0: none */
	int fd;          /* GET_FD_BY_ID: the object's new fd, or -1 */
	int map_fd;      /* BTF_GET_FD_BY_ID: a map holding a copy of that BTF, or -1 */
	char fs[PATH_MAX]; /* realpath of $BPFRT_FS, then "/" */
	size_t fs_len;
	/* (dev, ino) of files already looked at */
	struct { dev_t dev; ino_t ino; } *seen;
	size_t nseen, cap;
	/* what the live objects seen so far name as held: maps by their programs' tables
	 * (kind, id, inode), programs by prog arrays' slots and bpf_timers, maps by maps of
	 * maps (inode 0: by id alone; id 0: every object of the kind, when a holder's file
	 * could not be read) */
	struct { uint32_t kind, id; uint64_t ino; } *named;
	size_t nnamed, named_cap;
	/* files only objects naming them hold in the process that maps them
	 * (BRT_PUB_NAMED): alive if a live object names them, decided once every other
	 * holder was seen */
	struct { char path[256]; uint64_t ino; } *maybe;
	size_t nmaybe, maybe_cap;
	int named_only;  /* visit_path() of a maybe: only if named */
};

/* Grow *arr (of n, room for *cap, elements of size) by one: 0, or -1 without memory. */
static int grow(void *arr, size_t n, size_t *cap, size_t size)
{
	void **p = arr, *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int seen(struct id_walk *w, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].ino == ino && w->seen[i].dev == dev)
			return 1;
	if (grow(&w->seen, w->nseen, &w->cap, sizeof(*w->seen)))
		return 0; /* looked at again: slower, never wrong */
	w->seen[w->nseen].dev = dev;
	w->seen[w->nseen++].ino = ino;
	return 0;
}

static void add_named(struct id_walk *w, uint32_t kind, uint32_t id, uint64_t ino)
{
	if (grow(&w->named, w->nnamed, &w->named_cap, sizeof(*w->named)))
		return; /* not remembered: that object may read as gone, never a crash */
	w->named[w->nnamed].kind = kind;
	w->named[w->nnamed].id = id;
	w->named[w->nnamed++].ino = ino;
}

/* a prog array's slot: a program id (ino 0: any file) */
static void add_slot(void *arg, uint32_t id)
{
	add_named(arg, BRT_OBJ_PROG, id, 0);
}

/* a map of maps' value: an inner map's id */
static void add_inner(void *arg, const void *bytes)
{
	uint32_t id;

	memcpy(&id, bytes, sizeof(id));
	if (id)
		add_named(arg, BRT_OBJ_MAP, id, 0);
}

/* a value's struct bpf_timer: word 0 nonzero once initialised, word 1 the callback's
 * program id while one is set (maps/timer.c) */
static void add_timer(void *arg, const void *bytes)
{
	uint64_t w[2];

	memcpy(w, bytes, sizeof(w));
	if (w[0] && (uint32_t)w[1])
		add_named(arg, BRT_OBJ_PROG, (uint32_t)w[1], 0);
}

/* A live object's file (fd, header checked against st): remember what it names as held
 * (a program: the maps its table names, by id and inode; a prog array: the programs its
 * slots name, by id).  All of it is untrusted (another process may write the file):
 * sizes come from the checks an attach makes, and a scribbled entry can only make the
 * walk find an object that still exists somewhere. */
static void note_named(struct id_walk *w, int fd, const struct brt_obj_hdr *hdr,
		       const struct stat *st)
{
	struct brt_prog_mapref ref;
	off_t off = (off_t)hdr->max_entries * (off_t)sizeof(struct bpf_insn);

	if (hdr->kind == BRT_OBJ_MAP) {
		uint64_t size = (uint64_t)st->st_size;

		if (hdr->type == BPF_MAP_TYPE_PROG_ARRAY)
			brt_prog_array_file_ids(fd, hdr, size, add_slot, w);
		/* a file that cannot be read as one names every object of the kind: found a
		 * little longer, never lost while held */
		if ((hdr->type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
		     hdr->type == BPF_MAP_TYPE_HASH_OF_MAPS) &&
		    brt_map_file_values(fd, hdr, size, 0, 4, add_inner, w))
			add_named(w, BRT_OBJ_MAP, 0, 0);
		/* the kernel frees a map's timers with its last user reference
		 * (map_release_uref()), not its last reference: a map found only because a
		 * live program names it holds no callback */
		if (hdr->timer_off && !w->named_only &&
		    brt_map_file_values(fd, hdr, size, hdr->timer_off - 1, 16, add_timer, w))
			add_named(w, BRT_OBJ_PROG, 0, 0);
		return;
	}
	if (hdr->kind != BRT_OBJ_PROG || brt_prog_file_check(hdr, (uint64_t)st->st_size))
		return;
	for (uint32_t i = 0; i < hdr->nmaps; i++, off += (off_t)sizeof(ref)) {
		if (pread(fd, &ref, sizeof(ref), off) != (ssize_t)sizeof(ref))
			return;
		add_named(w, BRT_OBJ_MAP, ref.id, ref.ino);
	}
}

static int is_named(const struct id_walk *w, uint32_t kind, uint32_t id, uint64_t ino)
{
	for (size_t i = 0; i < w->nnamed; i++)
		if (w->named[i].kind == kind && (w->named[i].id == id || !w->named[i].id) &&
		    (w->named[i].ino == ino || !w->named[i].ino))
			return 1;
	return 0;
}

/* Does a file named target (a /proc link's text) live in $BPFRT_FS, or is it one of
 * obj.c's memfds? */
static int candidate(const struct id_walk *w, const char *target)
{
	return !strncmp(target, w->fs, w->fs_len) || !strncmp(target, "/memfd:bpfrt ", 13);
}

/* Look at the file path opens (a /proc link or a pinned name). */
static void visit_path(struct id_walk *w, const char *path)
{
	struct brt_obj_hdr hdr;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)BRT_PAGE ||
	    st.st_size % BRT_PAGE || seen(w, st.st_dev, st.st_ino) ||
	    brt_obj_read_hdr(fd, (uint64_t)st.st_size, &hdr)) {
		close(fd);
		return;
	}
	/* a file only objects naming it hold (visit_maybe()): looked at only once a live
	 * object names it, else left for a later pass (and so not counted as seen) */
	if (w->named_only && !is_named(w, hdr.kind, hdr.id, (uint64_t)st.st_ino)) {
		if (w->nseen && w->seen[w->nseen - 1].ino == st.st_ino &&
		    w->seen[w->nseen - 1].dev == st.st_dev)
			w->nseen--;
		close(fd);
		return;
	}
	note_named(w, fd, &hdr, &st);
	/* A map holds its BTF as the kernel's does, by a copy (map.c): the BTF counts as
	 * live while such a map is, and GET_FD_BY_ID re-creates it from the copy. */
	if (w->kind == BRT_OBJ_BTF && (hdr.kind == BRT_OBJ_MAP || hdr.kind == BRT_OBJ_PROG) &&
	    hdr.btf_id && hdr.tail_size && hdr.btf_id >= w->min) {
		if (w->open && hdr.btf_id == w->min && w->map_fd < 0) {
			w->map_fd = fd;
			return;
		}
		if (!w->open && (!w->best || hdr.btf_id < w->best))
			w->best = hdr.btf_id;
		close(fd);
		return;
	}
	close(fd);
	if (hdr.kind != w->kind || hdr.id < w->min)
		return;
	if (!w->open) {
		if (!w->best || hdr.id < w->best)
			w->best = hdr.id;
		return;
	}
	if (hdr.id != w->min)
		return;
	/* The same file read-write (what the kernel's new fd allows); it must still be
	 * the file looked at, and the object layer validates it before anyone uses it. */
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st2;

		if (fstat(fd, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino ||
		    fcntl(fd, F_SETFL, 0)) {
			close(fd);
			return;
		}
		w->fd = fd;
	}
}

static int done(const struct id_walk *w)
{
	return w->open ? w->fd >= 0 : w->best == w->min;
}

static void visit_fds(struct id_walk *w, const char *pid)
{
	char dir[64], path[64 + 256], target[PATH_MAX];
	struct dirent *de;
	DIR *d;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	while (d && !done(w) && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* readlinkat: a preloaded readlink() (libbpfrt-preload.so) names bpfrt's
		 * objects as the kernel's anon inodes */
		n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!candidate(w, target))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		visit_path(w, path);
	}
	if (d)
		closedir(d);
}

/* One line of /proc/PID/maps: 1 with its fields, name pointing into line. */
static int maps_line(char *line, unsigned long *lo, unsigned long *hi, dev_t *dev,
		     unsigned long *ino, char **name)
{
	unsigned int maj, min;
	size_t len;
	int off;

	if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu %n", lo, hi, &maj, &min, ino, &off) != 5)
		return 0;
	*dev = makedev(maj, min);
	*name = line + off;
	len = strlen(*name);
	if (len && (*name)[len - 1] == '\n')
		(*name)[len - 1] = '\0';
	return 1;
}

/* Mappings of object files whose fds are gone (a loaded program's maps, an mmap'd
 * array): /proc/PID/maps names them, /proc/PID/map_files opens them (CAP_SYS_ADMIN).
 * The process's object cache maps every object it has seen until it sweeps, which a
 * dead object's last fd closing elsewhere does not make it do: such a mapping is no
 * holder, and the process's reference table says which mappings are the cache's and
 * what its entry holds (obj/pub.c).  A process without a table: every mapping holds.
 * One read of the maps: the candidates are kept, the table may come after them. */
static void visit_maps(struct id_walk *w, const char *pid)
{
	char path[96], line[PATH_MAX + 128], *name;
	struct brt_pub_view pub = { 0 };
	struct { unsigned long lo, hi, ino; dev_t dev; } *c = NULL;
	size_t nc = 0, cap = 0;
	unsigned long lo, hi, ino;
	int have_pub = 0;
	dev_t dev;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!maps_line(line, &lo, &hi, &dev, &ino, &name) || !ino)
			continue;
		if (!have_pub && !strncmp(name, BRT_PUB_MAPS_NAME, strlen(BRT_PUB_MAPS_NAME))) {
			snprintf(path, sizeof(path), "/proc/%s/map_files/%lx-%lx", pid, lo, hi);
			have_pub = !brt_pub_read(path, &pub);
			continue;
		}
		if (!candidate(w, name) || grow(&c, nc, &cap, sizeof(*c)))
			continue;
		c[nc].lo = lo;
		c[nc].hi = hi;
		c[nc].ino = ino;
		c[nc++].dev = dev;
	}
	fclose(f);
	for (size_t k = 0; k < nc && !done(w); k++) {
		enum brt_pub_verdict v = BRT_PUB_HOLDER;
		int known = 0;

		/* skip what was looked at already without opening it (same dev, ino) */
		for (size_t i = 0; i < w->nseen && !known; i++)
			known = w->seen[i].ino == (ino_t)c[k].ino && w->seen[i].dev == c[k].dev;
		if (known)
			continue;
		if (have_pub)
			v = brt_pub_classify(&pub, c[k].dev, (ino_t)c[k].ino, c[k].lo, c[k].hi);
		if (v == BRT_PUB_NONE)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/map_files/%lx-%lx", pid, c[k].lo, c[k].hi);
		if (v == BRT_PUB_HOLDER) {
			visit_path(w, path);
		} else if (!grow(&w->maybe, w->nmaybe, &w->maybe_cap, sizeof(*w->maybe))) {
			snprintf(w->maybe[w->nmaybe].path, sizeof(w->maybe[0].path), "%s", path);
			w->maybe[w->nmaybe++].ino = c[k].ino;
		}
	}
	free(c);
	brt_pub_view_free(&pub);
}

/* The files only other objects of their process hold (a program's maps, a prog array's
 * programs), once every other holder was seen: those a live object names are alive (the
 * kernel's program holds its maps, its prog array its programs), and what they name in
 * turn, until nothing more is found. */
static void visit_maybe(struct id_walk *w)
{
	int more = 1;

	while (more && !done(w)) {
		more = 0;
		for (size_t i = 0; i < w->nmaybe && !done(w); i++) {
			size_t before = w->nseen;
			struct stat st;

			/* visited, or its process gone, or another file at that address now */
			if (!w->maybe[i].path[0])
				continue;
			if (stat(w->maybe[i].path, &st) || (uint64_t)st.st_ino != w->maybe[i].ino) {
				w->maybe[i].path[0] = '\0';
				continue;
			}
			w->named_only = 1;
			visit_path(w, w->maybe[i].path);
			w->named_only = 0;
			if (w->nseen != before) { /* looked at: named, or seen as a holder */
				w->maybe[i].path[0] = '\0';
				more = 1;
			}
		}
	}
}

static _Thread_local struct id_walk *pin_walk;

static int visit_pin(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct id_walk *w = pin_walk;
	int mim = flag == FTW_F ? brt_mim_link_kind(path, ftw->base) : 0;

	/* a pinned program's link in a links' directory is no pin (prog_file.c), nor is
	 * a map of maps' link of itself; its entries' links hold an inner map only while
	 * a live outer map names it, as a cache's mapping of one does (visit_maybe()) */
	if (mim == 2 && S_ISREG(st->st_mode) &&
	    !grow(&w->maybe, w->nmaybe, &w->maybe_cap, sizeof(*w->maybe)) &&
	    strlen(path) < sizeof(w->maybe[0].path)) {
		snprintf(w->maybe[w->nmaybe].path, sizeof(w->maybe[0].path), "%s", path);
		w->maybe[w->nmaybe++].ino = (uint64_t)st->st_ino;
	} else if (flag == FTW_F && S_ISREG(st->st_mode) && !mim &&
		   !brt_prog_file_is_prog_link(path, ftw->base)) {
		visit_path(w, path);
	}
	return done(w) ? FTW_STOP : FTW_CONTINUE;
}

static void walk(struct id_walk *w)
{
	struct dirent *de;
	DIR *d;

	/* This process's cache maps every object it has seen until a sweep finds no fd of
	 * it left; such a mapping is no holder (the kernel freed the object with its last
	 * fd, and answers ENOENT), yet the walk below would find it in /proc/self/maps.  So
	 * sweep first (its rounds also drop the maps only a dropped program held). */
	brt_obj_sweep();

	if (!realpath(brt_obj_fs_dir(), w->fs))
		snprintf(w->fs, sizeof(w->fs), "%s", brt_obj_fs_dir());
	w->fs_len = strlen(w->fs);
	if (w->fs_len + 1 < sizeof(w->fs)) {
		w->fs[w->fs_len++] = '/';
		w->fs[w->fs_len] = '\0';
	}
	d = opendir("/proc");
	while (d && !done(w) && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		visit_fds(w, de->d_name);
		if (!done(w))
			visit_maps(w, de->d_name);
	}
	if (d)
		closedir(d);
	if (!done(w)) {
		pin_walk = w;
		nftw(brt_obj_fs_dir(), visit_pin, 16, FTW_PHYS);
		pin_walk = NULL;
	}
	visit_maybe(w);
	free(w->seen);
	w->seen = NULL;
	free(w->named);
	w->named = NULL;
	free(w->maybe);
	w->maybe = NULL;
}

/* The BTF object with this id again, from a copy a map or a program holds (map_fd,
 * closed here). */
static int btf_from_map(int map_fd, uint32_t id)
{
	struct brt_obj *obj;
	struct brt_map *map;
	struct brt_btf_snap *s;
	void *copy;
	uint32_t size;
	int fd = -ENOENT;

	/* a number of our own, which a batch's memo may know from an fd closed since, and
	 * must not know once closed here */
	brt_obj_batch_forget(map_fd);
	if (!brt_map_from_fd(map_fd, &map)) {
		/* the map's checked private copy: the file's bytes could change between the
		 * check and the copy the new object keeps */
		if (map->obj.snap.btf_id == id && !brt_map_btf_snap(map, &s))
			fd = brt_btf_new_fd(s->blob, s->size, id);
		brt_obj_put(&map->obj);
	} else if (!brt_obj_from_fd(map_fd, BRT_OBJ_PROG, &obj)) {
		if (obj->snap.btf_id == id && !brt_prog_file_btf(obj, &copy, &size)) {
			fd = brt_btf_new_fd(copy, size, id);
			free(copy);
		}
		brt_obj_put(obj);
	}
	brt_obj_batch_forget(map_fd);
	close(map_fd);
	return fd < 0 ? -ENOENT : fd;
}

int brt_ids_open(uint32_t kind, uint32_t id)
{
	struct id_walk w = { .kind = kind, .min = id, .open = 1, .fd = -1, .map_fd = -1 };

	if (!id)
		return -ENOENT;
	walk(&w);
	if (w.fd >= 0) {
		if (w.map_fd >= 0)
			close(w.map_fd);
		return w.fd;
	}
	return w.map_fd >= 0 ? btf_from_map(w.map_fd, id) : -ENOENT;
}

static uint32_t obj_kind_of(int cmd)
{
	switch (cmd) {
	case BPF_PROG_GET_NEXT_ID:
	case BPF_PROG_GET_FD_BY_ID:
		return BRT_OBJ_PROG;
	case BPF_MAP_GET_NEXT_ID:
		return BRT_OBJ_MAP;
	case BPF_BTF_GET_NEXT_ID:
	case BPF_BTF_GET_FD_BY_ID:
		return BRT_OBJ_BTF;
	default:
		return 0; /* links: link_rec.c */
	}
}

static int next_id(struct brt_call *call, int cmd)
{
	union bpf_attr *attr = call->attr;
	struct id_walk w = { .kind = obj_kind_of(cmd), .fd = -1, .map_fd = -1 };

	if (attr->start_id >= INT_MAX)
		return -EINVAL;
	if (!brt_api_sys_admin())
		return -EPERM;
	if (cmd == BPF_LINK_GET_NEXT_ID) {
		if (brt_link_rec_next_id(attr->start_id + 1, &w.best))
			return -ENOENT;
		attr->next_id = w.best;
		return BRT_PUT_ATTR(call, next_id);
	}
	if (!w.kind)
		return -ENOENT;
	/* BTF id 1: the kernel's vmlinux BTF, listed first as the kernel lists it (obj.c
	 * never hands out 1 for a BTF object) */
	if (cmd == BPF_BTF_GET_NEXT_ID && !attr->start_id && !access(VMLINUX_BTF, R_OK)) {
		attr->next_id = 1;
		return BRT_PUT_ATTR(call, next_id);
	}
	w.min = attr->start_id + 1;
	walk(&w);
	if (!w.best)
		return -ENOENT;
	attr->next_id = w.best;
	return BRT_PUT_ATTR(call, next_id);
}

int brt_cmd_prog_get_next_id(struct brt_call *call)
{
	return next_id(call, BPF_PROG_GET_NEXT_ID);
}

int brt_cmd_map_get_next_id(struct brt_call *call)
{
	return next_id(call, BPF_MAP_GET_NEXT_ID);
}

int brt_cmd_btf_get_next_id(struct brt_call *call)
{
	return next_id(call, BPF_BTF_GET_NEXT_ID);
}

int brt_cmd_link_get_next_id(struct brt_call *call)
{
	return next_id(call, BPF_LINK_GET_NEXT_ID);
}

int brt_cmd_prog_get_fd_by_id(struct brt_call *call)
{
	struct brt_prog *prog;
	int fd;

	if (!brt_api_sys_admin())
		return -EPERM;
	fd = brt_ids_open(BRT_OBJ_PROG, call->attr->prog_id);
	if (fd < 0)
		return fd;
	/* runnable at once, as the kernel's fd is (pin.c's OBJ_GET does the same) */
	if (!brt_prog_from_fd(fd, &prog)) {
		brt_prog_materialise(prog);
		brt_obj_put(&prog->obj);
	}
	return fd;
}

int brt_cmd_btf_get_fd_by_id(struct brt_call *call)
{
	/* BPF_F_TOKEN_FD: bpfrt has no tokens, the kernel's EINVAL for a flag it lacks */
	if (call->attr->open_flags)
		return -EINVAL;
	if (!brt_api_sys_admin())
		return -EPERM;
	if (call->attr->btf_id == 1)
		return brt_btf_vmlinux_fd();
	return brt_ids_open(BRT_OBJ_BTF, call->attr->btf_id);
}

int brt_cmd_link_get_fd_by_id(struct brt_call *call)
{
	if (!brt_api_sys_admin())
		return -EPERM;
	if (!call->attr->link_id)
		return -ENOENT;
	return brt_link_rec_open(call->attr->link_id);
}
