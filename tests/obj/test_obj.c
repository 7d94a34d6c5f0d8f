/* test_obj.c - objects are real fds: the cached mapping goes away after the last close,
 * dup'd fds keep the map, fork and SCM_RIGHTS share it, pinning lets a cold open find it,
 * and a truncated or corrupted pinned file gives errors, never a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "bpfrt.h"
#include "maps/maps.h"

static char fsdir[64];

static int new_hash(uint32_t max)
{
	return bpfrt_map_create(BPF_MAP_TYPE_HASH, "t", 4, 8, max, NULL);
}

static uint64_t get(int fd, uint32_t k)
{
	uint64_t v = 0xdead;

	if (bpfrt_map_lookup_elem(fd, &k, &v))
		return 0xdead;
	return v;
}

static void put(int fd, uint32_t k, uint64_t v)
{
	T_EQ_INT(0, bpfrt_map_update_elem(fd, &k, &v, BPF_ANY));
}

static void test_close_frees(void)
{
	int fd, fd2;

	T_CASE("close drops the mapping");
	brt_obj_sweep();
	T_EQ_INT(0, brt_obj_cached());
	fd = new_hash(4);
	T_ASSERT(fd >= 0);
	put(fd, 1, 11);
	T_EQ_INT(1, brt_obj_cached());
	close(fd);
	T_EQ_INT(1, brt_obj_sweep());
	T_EQ_INT(0, brt_obj_cached());

	T_CASE("a dup keeps the map");
	fd = new_hash(4);
	put(fd, 1, 12);
	fd2 = dup(fd);
	close(fd);
	T_EQ_INT(0, brt_obj_sweep());
	T_EQ_U64(12, get(fd2, 1));
	close(fd2);
	T_EQ_INT(1, brt_obj_sweep());
	T_EQ_INT(-EBADF, bpfrt_map_lookup_elem(fd2, &(uint32_t){ 1 }, &(uint64_t){ 0 }));
	T_EQ_INT(EBADF, errno);
}

static void test_fork(void)
{
	int fd = new_hash(4), st;
	pid_t pid;

	T_CASE("fork shares the map");
	put(fd, 1, 1);
	pid = fork();
	if (pid == 0) {
		uint32_t k = 2;
		uint64_t v = get(fd, 1) + 41;

		_exit(bpfrt_map_update_elem(fd, &k, &v, BPF_ANY) ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	T_EQ_U64(42, get(fd, 2));
	close(fd);
}

static int send_fd(int sock, int fd)
{
	char data = 'm', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char data, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static void test_scm_rights(void)
{
	int sv[2], st, fd;
	pid_t pid;

	T_CASE("map fd over SCM_RIGHTS outlives its creator");
	T_EQ_INT(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	if (pid == 0) {
		/* A fresh map the parent has never seen: its first use there is a cold open. */
		int m = new_hash(8);
		uint32_t k = 7;
		uint64_t v = 777;

		close(sv[0]);
		if (m < 0 || bpfrt_map_update_elem(m, &k, &v, BPF_ANY) || send_fd(sv[1], m))
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	fd = recv_fd(sv[0]);
	waitpid(pid, &st, 0);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	T_ASSERT(fd >= 0);
	T_EQ_U64(777, get(fd, 7));
	put(fd, 8, 888);
	T_EQ_U64(888, get(fd, 8));
	close(fd);
	close(sv[0]);
}

static void test_pin(void)
{
	char path[128], outside[] = "/tmp/bpfrt-pin-XXXXXX";
	int fd, fd2, tmp;

	T_CASE("pin and get");
	snprintf(path, sizeof(path), "%s/m1", fsdir);
	fd = new_hash(4);
	put(fd, 3, 33);
	T_EQ_INT(0, bpfrt_obj_pin(fd, path));
	T_EQ_INT(-EEXIST, bpfrt_obj_pin(fd, path));
	close(fd);
	brt_obj_sweep();
	T_EQ_INT(0, brt_obj_cached());
	fd2 = bpfrt_obj_get(path);
	T_ASSERT(fd2 >= 0);
	T_EQ_U64(33, get(fd2, 3));
	close(fd2);
	unlink(path);

	T_CASE("pin outside the bpffs directory");
	fd = new_hash(4);
	tmp = mkstemp(outside);
	close(tmp);
	unlink(outside);
	T_EQ_INT(-EPERM, bpfrt_obj_pin(fd, outside));

	/* pin.c tells a directory below the bpffs directory by its spelling when every
	 * component after it is a real directory; anything else is resolved (the outside
	 * directories on the same filesystem, where a pin would succeed) */
	T_CASE("a symlink in the bpffs directory to a directory outside: refused");
	{
		char out_dir[] = "/dev/shm/bpfrt-pin-out-XXXXXX", sym[160], sub[200], dots[200];

		T_ASSERT(t_scratch_dir(out_dir) != NULL);
		snprintf(sym, sizeof(sym), "%s/to_tmp", fsdir);
		T_EQ_INT(0, symlink(out_dir, sym));
		snprintf(path, sizeof(path), "%s/to_tmp/m", fsdir);
		T_EQ_INT(-EPERM, bpfrt_obj_pin(fd, path));
		T_CASE("the same below a real directory: refused");
		snprintf(sub, sizeof(sub), "%s/real", fsdir);
		T_EQ_INT(0, mkdir(sub, 0700));
		snprintf(sub, sizeof(sub), "%s/real/to_tmp", fsdir);
		T_EQ_INT(0, symlink(out_dir, sub));
		snprintf(path, sizeof(path), "%s/real/to_tmp/m", fsdir);
		T_EQ_INT(-EPERM, bpfrt_obj_pin(fd, path));
		T_CASE("\"..\" out of the bpffs directory: refused");
		snprintf(dots, sizeof(dots), "%s/real/../../m", fsdir);
		T_EQ_INT(-EPERM, bpfrt_obj_pin(fd, dots));
		T_CASE("a sibling whose name starts with the bpffs directory's: refused");
		snprintf(sub, sizeof(sub), "%s-sibling", fsdir);
		T_EQ_INT(0, mkdir(sub, 0700));
		snprintf(path, sizeof(path), "%s-sibling/m", fsdir);
		T_EQ_INT(-EPERM, bpfrt_obj_pin(fd, path));
		rmdir(sub);
		T_CASE("nested real directories, and \"..\" that stays inside: pinned");
		snprintf(sub, sizeof(sub), "%s/real/deeper", fsdir);
		T_EQ_INT(0, mkdir(sub, 0700));
		snprintf(path, sizeof(path), "%s/real/deeper/m", fsdir);
		T_EQ_INT(0, bpfrt_obj_pin(fd, path));
		/* (while that pin holds it: a file whose names are all gone takes none again) */
		snprintf(dots, sizeof(dots), "%s/real/deeper/../m", fsdir);
		T_EQ_INT(0, bpfrt_obj_pin(fd, dots));
		T_EQ_INT(0, unlink(dots));
		T_EQ_INT(0, unlink(path));
		snprintf(path, sizeof(path), "%s/real/deeper", fsdir);
		rmdir(path);
		snprintf(sub, sizeof(sub), "%s/real/to_tmp", fsdir);
		unlink(sub);
		snprintf(path, sizeof(path), "%s/real", fsdir);
		rmdir(path);
		unlink(sym);
		rmdir(out_dir);
	}
	close(fd);
	T_CASE("get a missing path");
	snprintf(path, sizeof(path), "%s/nope", fsdir);
	T_EQ_INT(-ENOENT, bpfrt_obj_get(path));
	T_CASE("get a file that is not an object");
	snprintf(path, sizeof(path), "%s/plain", fsdir);
	tmp = open(path, O_CREAT | O_RDWR, 0600);
	T_EQ_INT(0, ftruncate(tmp, 16384));
	close(tmp);
	T_EQ_INT(-EACCES, bpfrt_obj_get(path));
	unlink(path);

	T_CASE("the bpffs directory made writable by others after a get: the next refuses it");
	snprintf(path, sizeof(path), "%s/trust", fsdir);
	fd = new_hash(4);
	T_EQ_INT(0, bpfrt_obj_pin(fd, path));
	close(fd);
	fd = bpfrt_obj_get(path);
	T_ASSERT(fd >= 0);
	close(fd);
	T_EQ_INT(0, chmod(fsdir, 0777)); /* not sticky: anyone could swap what is pinned */
	T_EQ_INT(-EACCES, bpfrt_obj_get(path));
	T_EQ_INT(0, chmod(fsdir, 0700));
	fd = bpfrt_obj_get(path);
	T_ASSERT(fd >= 0);
	close(fd);
	unlink(path);
}

/* Damage a pinned map file in one way, then use it: errors are fine, crashes are not. */
struct damage {
	const char *name;
	long off;      /* from the start (>= 0) or from the end (< 0) */
	uint64_t val;
	int len;
	long truncate; /* new size, 0 = keep */
	int get_fails; /* BPF_OBJ_GET must fail */
};

/* header offsets from the end: a small map's header is the file's last 320 bytes (hdr_at_end,
 * src/obj/obj.h) */
static const struct damage damages[] = {
	{ "bad magic", -320, 0x1234, 8, .get_fails = 1 },
	{ "bad version", -320 + 8, 99, 4, .get_fails = 1 },
	{ "max_entries grown", -320 + 48, 1u << 20, 4, .get_fails = 1 },
	{ "key_size changed", -320 + 40, 64, 4, .get_fails = 1 },
	{ "type changed", -320 + 36, 9999, 4, .get_fails = 1 },
	{ "truncated by a page", 0, 0, 0, .truncate = -4096, .get_fails = 1 },
	{ "truncated to nothing", 0, 0, 0, .truncate = 1, .get_fails = 1 },
	{ "hash geometry changed", 16, 7, 4, .get_fails = 1 },
	{ "bucket heads point everywhere", 64, 0xffffffffffffffffull, 8 },
	{ "free list head out of range", 8, 0x7fffffff, 4 },
	{ "never-used cursor out of range", 12, 0xfffffff0, 4 },
	{ "layout version changed", 40, 1, 4, .get_fails = 1 },
	/* a 4-entry map: 20 elements of 32 bytes from offset 128, then their allocation
	 * words: all "in use and listed", next free 0x3fffffff */
	{ "allocation words scribbled", 128 + 20 * 32, 0xffffffffffffffffull, 8 },
	{ "allocation words scribbled (more)", 128 + 20 * 32 + 8, 0xffffffffffffffffull, 8 },
	{ "chain loops on itself", -1, 0, 0 },
};

/* Use a damaged 4-entry map holding keys 0..3 (value = key), and check the documented
 * answers (src/maps/hash.c): a corrupt region yields errors, never a wild access, so
 * a lookup finds a key that was put, with its value, or gives ENOENT; an update that
 * cannot get an element gives E2BIG; no call invents a key or a value.  64 keys, so
 * that some fall in every bucket (the hash seed is random); a missing walk bound hangs. */
static void use_damaged(int fd)
{
	uint8_t added[64] = { 0 };
	uint32_t k, next;
	uint64_t v;
	int r, n;

	for (k = 0; k < 64; k++) {
		v = 0xdead;
		r = bpfrt_map_lookup_elem(fd, &k, &v);
		if (r == 0) {
			T_ASSERT(k < 4); /* only keys 0..3 were ever put */
			T_EQ_U64(k, v);
		} else {
			T_EQ_INT(-ENOENT, r);
		}
		v = 100 + k;
		r = bpfrt_map_update_elem(fd, &k, &v, BPF_ANY);
		if (r == 0)
			added[k] = 1;
		else
			T_EQ_INT(-E2BIG, r);
	}
	/* what an update stored reads back */
	for (k = 0; k < 64; k++) {
		if (!added[k])
			continue;
		v = 0xdead;
		T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &k, &v));
		T_EQ_U64(100 + k, v);
	}
	/* a delete finds a key exactly when an update of it succeeded */
	k = 9;
	v = 109;
	r = bpfrt_map_update_elem(fd, &k, &v, BPF_ANY);
	if (r)
		T_EQ_INT(-E2BIG, r);
	T_EQ_INT(r ? -ENOENT : 0, bpfrt_map_delete_elem(fd, &k));
	added[9] = 0;
	/* the key walk returns only keys that are in the map; a looping chain may make it
	 * cycle, so it is cut at 64 steps */
	for (n = 0, r = 0; n < 64; n++) {
		r = bpfrt_map_get_next_key(fd, n ? &k : NULL, &next);
		if (r)
			break;
		T_ASSERT(next < 64 && (next < 4 || added[next]));
		if (next >= 64)
			break;
		k = next;
	}
	if (r)
		T_EQ_INT(-ENOENT, r);
}

static void test_corrupt(void)
{
	char path[128];

	for (size_t i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		const struct damage *d = &damages[i];
		struct stat st;
		int fd, raw;

		T_CASE(d->name);
		snprintf(path, sizeof(path), "%s/c%zu", fsdir, i);
		fd = new_hash(4);
		for (uint32_t k = 0; k < 4; k++)
			put(fd, k, k);
		T_EQ_INT(0, bpfrt_obj_pin(fd, path));
		close(fd);
		brt_obj_sweep();
		raw = open(path, O_RDWR);
		fstat(raw, &st);
		if (d->truncate) {
			T_EQ_INT(0, ftruncate(raw, d->truncate < 0 ? st.st_size + d->truncate :
								       d->truncate));
		} else if (d->off == -1 && !d->len) {
			/* every element's next = 1, every bucket's head = 1: chains loop */
			uint32_t one = 1;

			for (long off = 128; off < 128 + 20 * 32; off += 32)
				T_EQ_INT(4, pwrite(raw, &one, 4, off));
			for (long b = 0; b < 4; b++)
				T_EQ_INT(4, pwrite(raw, &one, 4, 64 + b * 8 + 4));
		} else {
			long off = d->off < 0 ? st.st_size + d->off : d->off;

			T_EQ_INT(d->len, pwrite(raw, &d->val, (size_t)d->len, off));
		}
		close(raw);
		fd = bpfrt_obj_get(path);
		if (d->get_fails) {
			T_ASSERT(fd < 0);
		} else {
			T_ASSERT(fd >= 0);
			if (fd >= 0)
				use_damaged(fd);
			close(fd);
		}
		unlink(path);
	}
	brt_obj_sweep();
}

/* BPF_F_MMAPABLE: the values sit at offset 0 of the fd, as the kernel maps them. */
static void test_mmapable(void)
{
	BPFRT_OPTS(bpfrt_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpfrt_map_create(BPF_MAP_TYPE_ARRAY, "mm", 4, 12, 100, &o);
	uint32_t k = 7;
	unsigned char v[12] = { 0 };
	unsigned char *m;

	T_CASE("mmapable array");
	T_ASSERT(fd >= 0);
	m = mmap(NULL, 100 * 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_ASSERT(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return;
	m[7 * 16] = 0x5a; /* value stride is round_up(12, 8) = 16 */
	T_EQ_INT(0, bpfrt_map_lookup_elem(fd, &k, v));
	T_EQ_INT(0x5a, v[0]);
	v[1] = 0x66;
	T_EQ_INT(0, bpfrt_map_update_elem(fd, &k, v, BPF_ANY));
	T_EQ_INT(0x66, m[7 * 16 + 1]);
	munmap(m, 100 * 16);
	close(fd);
}

int main(void)
{
	snprintf(fsdir, sizeof(fsdir), "/dev/shm/bpfrt-test-XXXXXX");
	if (!t_scratch_dir(fsdir))
		T_SKIP("cannot create a directory in /dev/shm");
	setenv("BPFRT_FS", fsdir, 1);
	test_close_frees();
	test_fork();
	test_scm_rights();
	test_pin();
	test_corrupt();
	test_mmapable();
	brt_obj_sweep();
	T_EQ_INT(0, brt_obj_cached());
	rmdir(fsdir);
	return t_done();
}
