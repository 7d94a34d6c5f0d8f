/* test_kinds.c - the object layer knows no kind by itself: a file of a kind nobody
 * registered is refused on its first open in a process, and once a layer registers the
 * kind with brt_obj_set_attach() its callback builds the object (and its release runs when
 * the sweeper drops it).  Uses the obj/ layer alone: no map or program code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "obj/obj.h"

#define PATTERN 0x5a

static int attached, released;

static int fill(struct brt_obj *obj, void *arg)
{
	(void)arg;
	memset(obj->base, PATTERN, BRT_PAGE);
	return 0;
}

static void count_release(struct brt_obj *obj)
{
	(void)obj;
	released++;
}

static int count_attach(const struct brt_obj *tmpl, struct brt_obj **out)
{
	struct brt_obj *obj = calloc(1, sizeof(*obj));

	if (!obj)
		return -ENOMEM;
	*obj = *tmpl;
	obj->release = count_release;
	attached++;
	*out = obj;
	return 0;
}

int main(void)
{
	struct brt_obj_hdr hdr = { .kind = BRT_OBJ_BTF, .data_size = BRT_PAGE };
	char fsdir[64] = "/dev/shm/bpfrt-kinds-XXXXXX", path[128], proc[64];
	struct brt_obj *obj;
	int fd, err;

	if (!t_scratch_dir(fsdir))
		T_SKIP("no /dev/shm: %s", strerror(errno));
	setenv("BPFRT_FS", fsdir, 1);
	snprintf(path, sizeof(path), "%s/o", fsdir);
	/* whatever registered BRT_OBJ_BTF at load (nothing today), start without it */
	brt_obj_set_attach(BRT_OBJ_BTF, NULL);

	T_CASE("create needs no attach callback");
	fd = brt_obj_create(&hdr, sizeof(struct brt_obj), fill, NULL, &obj);
	T_ASSERT(fd >= 0);
	T_EQ_INT(BRT_OBJ_BTF, obj->kind);
	brt_obj_put(obj);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW)) {
		close(fd);
		rmdir(fsdir);
		T_SKIP("cannot link an object file into %s: %s", fsdir, strerror(errno));
	}
	close(fd);
	T_EQ_INT(1, brt_obj_sweep());
	T_EQ_INT(0, brt_obj_cached());

	T_CASE("a kind nobody registered is refused");
	fd = open(path, O_RDWR | O_CLOEXEC);
	T_ASSERT(fd >= 0);
	T_EQ_INT(-EINVAL, brt_obj_from_fd(fd, 0, &obj));
	T_EQ_INT(-EINVAL, brt_obj_from_fd(fd, BRT_OBJ_BTF, &obj));
	T_EQ_INT(0, brt_obj_cached());

	T_CASE("a registered kind attaches through its callback");
	brt_obj_set_attach(BRT_OBJ_BTF, count_attach);
	err = brt_obj_from_fd(fd, BRT_OBJ_BTF, &obj);
	T_EQ_INT(0, err);
	if (!err) {
		T_EQ_INT(1, attached);
		T_EQ_INT(BRT_OBJ_BTF, obj->kind);
		T_EQ_INT(PATTERN, ((unsigned char *)obj->base)[BRT_PAGE - 1]);
		T_EQ_INT(BRT_OBJ_BTF, (int)obj->hdr->kind);
		brt_obj_put(obj);
	}
	T_CASE("the cached object is reused, and another kind is still refused");
	T_EQ_INT(0, brt_obj_from_fd(fd, 0, &obj));
	brt_obj_put(obj);
	T_EQ_INT(-EINVAL, brt_obj_from_fd(fd, BRT_OBJ_MAP, &obj));
	T_EQ_INT(1, attached);

	T_CASE("the sweeper releases through the kind's callback");
	close(fd);
	T_EQ_INT(1, brt_obj_sweep());
	T_EQ_INT(1, released);
	T_EQ_INT(0, brt_obj_cached());

	brt_obj_set_attach(BRT_OBJ_BTF, NULL);
	unlink(path);
	rmdir(fsdir);
	return t_done();
}
