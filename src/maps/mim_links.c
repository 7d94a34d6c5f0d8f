/* mim_links.c - what keeps a pinned map of maps' inner maps alive once the processes that
 * stored them are gone.  The kernel's outer map holds a reference on each inner map for as
 * long as the outer map lives, and a pin keeps the outer map alive; in bpfrt an entry's
 * reference is the storing process's (map_in_map.c), so when the outer map's file outlives
 * every process (it has a name: a pin, or the link of a pinned program naming it), its
 * inner maps get names too, in the storing user's directory $BPFRT_FS/.bpfrt-inner (root)
 * or .bpfrt-inner.<uid> (0755, owner-only writable, as prog_file.c's map links):
 *
 *   .o<outer id>       the outer map's file itself, so its link count tells later whether
 *                      any other name is left (a pin goes by rm, which tells nobody);
 *   <outer id>-<inner id>  the inner map's file.
 *
 * Both are made under the user's lock (a 0600 .lock file in the directory), by the process
 * that stores into an outer map with a name and by the one that pins an outer map.  The
 * links of an outer map whose file has no name left but ours are dropped under the same
 * lock when the user next links an outer map, or an entry a second or more after the
 * last collection (collect(), collect_due()); an entry's link goes when this user deletes
 * or replaces the entry and no other slot holds the same map (brt_mim_unlink()).  Until
 * then they keep files alive, never ids: an id walk (api/ids.c) counts an inner link only
 * while it finds the outer map alive and its storage naming that inner map, and never
 * counts an outer link (brt_mim_link_kind()).
 *
 * Another process looking an entry up that it did not store itself (a program's
 * bpf_map_lookup_elem() on the outer map) opens <outer id>-<inner id> in the directory of
 * root, of the outer file's owner (the users who could have written the outer map: the
 * owner-trust rule, docs/SECURITY.md) or of its own user, and uses it only if it is the
 * map with that id and the shape of the outer map's template.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "maps/maps.h"
#include "util/util.h"

#define INNER_DIR ".bpfrt-inner"
#define NAME_LEN 40

static void dir_name(uid_t uid, char *buf, size_t len)
{
	if (uid == 0)
		snprintf(buf, len, INNER_DIR);
	else
		snprintf(buf, len, INNER_DIR ".%u", (unsigned)uid);
}

/* This user's directory (made when missing) with its lock held: the lock's fd, the
 * directory's in *dirfd, or -errno. */
static int lock_dir(int *dirfd)
{
	char name[64];
	int fs = brt_obj_fs_open(1), lock;

	if (fs < 0)
		return fs;
	dir_name(geteuid(), name, sizeof(name));
	lock = brt_fs_owned_dir_lock(fs, name, dirfd);
	close(fs);
	return lock;
}

static void unlock_dir(int lock, int dir)
{
	close(lock); /* releases the flock */
	close(dir);
}

static void outer_name(uint32_t outer_id, char *buf)
{
	snprintf(buf, NAME_LEN, ".o%08" PRIx32, outer_id);
}

static void inner_name(uint32_t outer_id, uint32_t inner_id, char *buf)
{
	snprintf(buf, NAME_LEN, "%08" PRIx32 "-%08" PRIx32, outer_id, inner_id);
}

/* Drop the links of every outer map in the locked directory dir whose file has no name
 * but its link here (unpinned, and no pinned program names it). */
static void collect(int dir)
{
	struct brt_dents d;
	const char *name;
	uint32_t dead[64];
	unsigned ndead = 0;

	if (brt_dents_start(&d, dir))
		return;
	while ((name = brt_dents_next(&d)) && ndead < 64) {
		struct stat st;
		unsigned id;
		int used = 0;

		if (sscanf(name, ".o%8x%n", &id, &used) != 1 || name[used] ||
		    fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) || st.st_nlink > 1)
			continue;
		dead[ndead++] = id;
	}
	for (unsigned i = 0; i < ndead; i++) {
		char prefix[NAME_LEN], oname[NAME_LEN];

		snprintf(prefix, sizeof(prefix), "%08" PRIx32 "-", dead[i]);
		if (brt_dents_start(&d, dir))
			return;
		while ((name = brt_dents_next(&d)))
			if (!strncmp(name, prefix, strlen(prefix)))
				unlinkat(dir, name, 0);
		outer_name(dead[i], oname);
		unlinkat(dir, oname, 0);
	}
}

/* Is the outer map's link in dir (an fd) the file of outer? */
static int outer_linked(int dir, const struct brt_map *outer)
{
	char name[NAME_LEN];
	struct stat st;

	outer_name(outer->obj.snap.id, name);
	return !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) && st.st_ino == outer->obj.ino &&
	       st.st_dev == outer->obj.dev;
}

/* When this process last collected (CLOCK_MONOTONIC_COARSE ns): a scan of the directory
 * is O(links), so it runs when an outer map is linked and at most once a second
 * otherwise, not at every store (filling a pinned 4,000-entry outer map scanned at each
 * of its stores: 0.9 ms an update) */
static _Atomic int64_t last_collect;

static int collect_due(int linked_outer)
{
	struct timespec ts;
	int64_t now, last = atomic_load_explicit(&last_collect, memory_order_relaxed);

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (!linked_outer && last && now - last < 1000000000)
		return 0;
	atomic_store_explicit(&last_collect, now, memory_order_relaxed);
	return 1;
}

int brt_mim_link(struct brt_map *outer, struct brt_map *const *inner, uint32_t n)
{
	char name[NAME_LEN];
	struct stat st;
	int links, dir, lock, err = 0, mine, made = 0;

	/* a file without a name dies with the processes holding it: nothing to keep */
	if (brt_obj_stat(&outer->obj, &st) || !st.st_nlink)
		return 0;
	links = st.st_nlink > INT32_MAX ? INT32_MAX : (int)st.st_nlink;
	lock = lock_dir(&dir);
	if (lock < 0)
		return lock;
	/* ours is no name of its own: the file is named when something else names it */
	mine = outer_linked(dir, outer);
	if (links > mine) {
		outer_name(outer->obj.snap.id, name);
		if (!mine) {
			err = brt_obj_link(&outer->obj, dir, name);
			if (err == -EEXIST) /* an older outer map's leftover of that id */
				err = unlinkat(dir, name, 0) ? -errno :
								brt_obj_link(&outer->obj, dir, name);
			made = !err;
		}
		for (uint32_t i = 0; i < n && !err; i++) {
			inner_name(outer->obj.snap.id, inner[i]->obj.snap.id, name);
			err = brt_obj_link(&inner[i]->obj, dir, name);
			/* there already; or no fd of it left here to name it by (a pin of an
			 * outer map whose entries this process stored long ago): that entry
			 * stays this process's alone */
			if (err == -EEXIST || err == -EBADF)
				err = 0;
		}
	}
	if (collect_due(made))
		collect(dir);
	unlock_dir(lock, dir);
	return err;
}

void brt_mim_unlink(struct brt_map *outer, uint32_t inner_id,
		    int (*stored)(struct brt_map *outer, uint32_t inner_id))
{
	char name[NAME_LEN], dname[64];
	struct stat st;
	int fs, dir, lock, linked;

	if (!inner_id || brt_obj_stat(&outer->obj, &st) || !st.st_nlink)
		return;
	/* nothing to do (and no directory to make) unless this user linked it */
	fs = brt_obj_fs_open(0);
	if (fs < 0)
		return;
	dir_name(geteuid(), dname, sizeof(dname));
	dir = brt_fs_owned_dir(fs, dname, geteuid());
	close(fs);
	inner_name(outer->obj.snap.id, inner_id, name);
	linked = dir >= 0 && !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW);
	if (dir >= 0)
		close(dir);
	if (!linked)
		return;
	lock = lock_dir(&dir);
	if (lock < 0)
		return;
	/* A store of the same map into the outer map (any slot, any process of this user)
	 * writes its slot and then links under this lock: the storage read under the lock
	 * shows every store whose link this could remove, and a store after it links again. */
	if (!stored(outer, inner_id))
		unlinkat(dir, name, 0);
	unlock_dir(lock, dir);
}

int brt_mim_open_linked(const struct brt_map *outer, uint32_t inner_id)
{
	char name[NAME_LEN], dname[64];
	/* root, the outer file's owner (whoever could write it: mode 0600) when an fd of it
	 * still tells, and this user (whose own links are its own doing) */
	uid_t uids[3] = { 0, 0, geteuid() };
	struct stat st;
	int fs, fd = -ENOENT;

	fs = brt_obj_fs_open(0);
	if (fs < 0)
		return fs;
	if (!brt_obj_stat(&outer->obj, &st))
		uids[1] = st.st_uid;
	inner_name(outer->obj.snap.id, inner_id, name);
	for (int i = 0; i < 3 && fd < 0; i++) {
		int dir;

		if (i && (!uids[i] || (i == 2 && uids[2] == uids[1])))
			continue;
		dir_name(uids[i], dname, sizeof(dname));
		dir = brt_fs_owned_dir(fs, dname, uids[i]);
		if (dir < 0)
			continue;
		fd = brt_fs_open_reg(dir, name, O_RDWR, 0);
		close(dir);
	}
	close(fs);
	return fd;
}

int brt_mim_link_kind(const char *path, int base)
{
	const char *dir;

	if (base < 1)
		return 0;
	for (dir = path + base - 1; dir > path && dir[-1] != '/'; dir--)
		;
	if (strncmp(dir, INNER_DIR, strlen(INNER_DIR)) ||
	    (dir[strlen(INNER_DIR)] != '/' && dir[strlen(INNER_DIR)] != '.'))
		return 0;
	return path[base] == '.' ? 1 : 2;
}

int brt_mim_is_link_dir(const char *name)
{
	return !strncmp(name, INNER_DIR, strlen(INNER_DIR)) &&
	       (!name[strlen(INNER_DIR)] || name[strlen(INNER_DIR)] == '.');
}
