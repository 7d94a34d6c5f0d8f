/* vmlinux.c - the running kernel's BTF (/sys/kernel/btf/vmlinux), read once per process
 * (mapped and parsed in place where sysfs allows it, brt_btf_load_kernel()):
 * what programs typed by kernel BTF (tp_btf, fentry/fexit, iter, lsm) are checked against,
 * and where the loader finds their attach_btf_id.  BPFRT_VMLINUX_BTF names another file
 * (an empty value: none, as on a kernel built without CONFIG_DEBUG_INFO_BTF).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "btf/btf.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct brt_btf *vmlinux;

/* Read all of fd (size bytes by fstat: sysfs reports one) and parse a copy. */
static int read_parse(int fd, size_t size, struct brt_btf **out, char *err, size_t errlen)
{
	uint8_t *buf = malloc(size);
	size_t got = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != size) {
		snprintf(err, errlen, "short read: %zu of %zu bytes", got, size);
		ret = -EIO;
	} else {
		ret = brt_btf_parse(buf, got, out, err, errlen);
	}
	free(buf);
	return ret;
}

int brt_btf_load_kernel(const char *path, struct brt_btf **out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -EAGAIN;
	struct statfs sfs;
	struct stat st;

	*out = NULL;
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size > (1 << 30)) {
		snprintf(err, errlen, "not a regular file with a size");
		close(fd);
		return -EINVAL;
	}
	/* only sysfs's files hold the kernel's own read-only bytes: a file elsewhere could
	 * change under a private mapping (its pages are the page cache's until written) */
	if (!fstatfs(fd, &sfs) && sfs.f_type == SYSFS_MAGIC) {
		void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (map != MAP_FAILED) {
			ret = brt_btf_parse_mapped(map, (size_t)st.st_size, out, err, errlen);
			if (ret)
				munmap(map, (size_t)st.st_size);
		}
	}
	/* no mapping (a kernel before 6.16 cannot map it), or a layout not aligned there */
	if (ret == -EAGAIN)
		ret = read_parse(fd, (size_t)st.st_size, out, err, errlen);
	close(fd);
	return ret;
}

static void load(void)
{
	const char *path = getenv("BPFRT_VMLINUX_BTF");
	char err[128];

	if (!path)
		path = "/sys/kernel/btf/vmlinux";
	if (path[0] && brt_btf_load_kernel(path, &vmlinux, err, sizeof(err)))
		vmlinux = NULL;
}

const struct brt_btf *brt_btf_vmlinux(void)
{
	pthread_once(&once, load);
	return vmlinux;
}

int brt_btf_attach_id(const struct brt_btf *btf, uint32_t prog_type, uint32_t attach_type,
		      const char *target)
{
	/* the type names the kernel declares for each kind of target (libbpf's rules) */
	static const struct {
		uint32_t attach;
		const char *prefix;
		unsigned int kind;
	} rules[] = {
		{ BPF_TRACE_RAW_TP, "btf_trace_", BTF_KIND_TYPEDEF },
		{ BPF_TRACE_ITER, "bpf_iter_", BTF_KIND_FUNC },
		{ BPF_LSM_MAC, "bpf_lsm_", BTF_KIND_FUNC },
		{ BPF_LSM_CGROUP, "bpf_lsm_", BTF_KIND_FUNC },
		{ BPF_TRACE_FENTRY, "", BTF_KIND_FUNC },
		{ BPF_TRACE_FEXIT, "", BTF_KIND_FUNC },
		{ BPF_MODIFY_RETURN, "", BTF_KIND_FUNC },
	};
	char name[256];

	(void)prog_type;
	if (!btf || !target)
		return -ESRCH;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		int id;

		if (rules[i].attach != attach_type)
			continue;
		if ((size_t)snprintf(name, sizeof(name), "%s%s", rules[i].prefix, target) >=
		    sizeof(name))
			return -ENAMETOOLONG;
		id = brt_btf_find(btf, name, rules[i].kind);
		return id < 0 ? -ESRCH : id;
	}
	return -EINVAL;
}
