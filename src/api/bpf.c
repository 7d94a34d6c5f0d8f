/* bpf.c - bpfrt_bpf(): the bpf(2) system call in user space.
 *
 * Theory of operation.  A call goes the way it goes in the kernel's __sys_bpf(): the
 * attr the caller passes (of any size up to a page) is copied in with its tail beyond our
 * union bpf_attr required to be zero (E2BIG), the command is looked up in cmds.def
 * (unknown: EINVAL), every byte past the command's last field must be zero (CHECK_ATTR,
 * EINVAL), and the handler runs.  Handlers reach caller memory only through a
 * struct brt_uaccess, so bad pointers become EFAULT (uaccess.c).  Objects are files
 * (obj/obj.c): the fd a command returns is a real fd the kernel numbers and refcounts.
 * The libbpf-style wrappers (lib.c) build an attr and enter at brt_bpf_call() with
 * trusted copies.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "bpfrt.h"
#include "api/api.h"
#include "util/util.h"

#define ATTR_END(field) (offsetof(union bpf_attr, field) + sizeof(((union bpf_attr *)0)->field))
#define USER_ATTR_MAX 4096 /* PAGE_SIZE: the kernel's limit on attr size */

struct cmd_row {
	size_t last_end;                  /* end of the last field the command reads */
	int (*fn)(struct brt_call *call); /* NULL: unknown command */
};

static const struct cmd_row cmds[] = {
#define BPF_CMD(cmd, last, fn) [cmd] = { ATTR_END(last), fn },
#include "api/cmds.def"
#undef BPF_CMD
};

int brt_bpf_call(int cmd, struct brt_call *call)
{
	const unsigned char *p = (const unsigned char *)call->attr;
	const struct cmd_row *row;

	if (cmd < 0 || (size_t)cmd >= BRT_ARRAY_SIZE(cmds) || !cmds[cmd].fn)
		return -EINVAL;
	row = &cmds[cmd];
	for (size_t i = row->last_end; i < sizeof(union bpf_attr); i++)
		if (p[i])
			return -EINVAL;
	return row->fn(call);
}

/* The kernel's bpf_check_uarg_tail_zero(): bytes we do not know must be zero. */
static int tail_zero(uint64_t uattr, unsigned int size)
{
	unsigned char buf[256];

	for (size_t off = sizeof(union bpf_attr); off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		int err = brt_uaccess_checked.from(buf, uattr + off, n);

		if (err)
			return err;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return -E2BIG;
	}
	return 0;
}

int bpfrt_bpf(int cmd, union bpf_attr *uattr, unsigned int size)
{
	union bpf_attr attr;
	struct brt_call call = {
		.attr = &attr,
		.uattr = (uint64_t)(uintptr_t)uattr,
		.size = size,
		.ua = &brt_uaccess_checked,
	};
	int ret;

	if (size > USER_ATTR_MAX) {
		ret = -E2BIG;
		goto out;
	}
	ret = tail_zero(call.uattr, size);
	if (ret)
		goto out;
	memset(&attr, 0, sizeof(attr));
	ret = brt_uaccess_checked.from(&attr, call.uattr,
				       size < sizeof(attr) ? size : sizeof(attr));
	if (ret)
		goto out;
	ret = brt_bpf_call(cmd, &call);
out:
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}
