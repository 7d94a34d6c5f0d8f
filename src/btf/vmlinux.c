/* vmlinux.c - the running kernel's BTF (/sys/kernel/btf/vmlinux), read once per process:
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
#include <sys/stat.h>
#include <unistd.h>

#include "btf/btf.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct brt_btf *vmlinux;

static void load(void)
{
	const char *path = getenv("BPFRT_VMLINUX_BTF");
	char err[128];
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd;

	if (!path)
		path = "/sys/kernel/btf/vmlinux";
	if (!path[0])
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* sysfs reports a size; a regular file has one; read until EOF either way */
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > (1 << 30)) {
		close(fd);
		return;
	}
	buf = malloc((size_t)st.st_size);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (buf && got == (size_t)st.st_size && brt_btf_parse(buf, got, &vmlinux, err, sizeof(err)))
		vmlinux = NULL;
	free(buf);
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
