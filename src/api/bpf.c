/* bpf.c - bpfrt_bpf(): the bpf(2) system call in user space.
 *
 * Theory of operation.  A call goes the way it goes in the kernel's __sys_bpf(): the
 * attr the caller passes (of any size up to a page) is copied in with its tail beyond
 * Linux 6.18's union bpf_attr (BRT_ATTR_SIZE) required to be zero (E2BIG), the command
 * is looked up in cmds.def (unknown: EINVAL; a command a folder above api/ implements has
 * its handler registered from there when the library is loaded, brt_api_register_cmd()),
 * every byte up to BRT_ATTR_SIZE past the command's last field must be zero (CHECK_ATTR,
 * EINVAL), and the handler runs.  Handlers reach caller memory only through a
 * struct brt_uaccess, so bad pointers become EFAULT (uaccess.c).  Objects are files
 * (obj/obj.c): the fd a command returns is a real fd the kernel numbers and refcounts.
 * The libbpf-style wrappers (lib.c) build an attr and enter at brt_bpf_call() with
 * trusted copies.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "bpfrt.h"
#include "api/api.h"
#include "util/util.h"

#define ATTR_END(field) (offsetof(union bpf_attr, field) + sizeof(((union bpf_attr *)0)->field))
#define USER_ATTR_MAX 4096 /* PAGE_SIZE: the kernel's limit on attr size */

_Static_assert(BRT_ATTR_SIZE >= sizeof(union bpf_attr), "BRT_ATTR_SIZE below this libc's attr");

typedef int (*cmd_fn)(struct brt_call *call);

struct cmd_row {
	size_t last_end; /* end of the last field the command reads */
	cmd_fn fn;       /* NULL: unknown command, or one registered from above */
	int above;       /* BPF_CMD_ABOVE: the handler is in above[] once registered */
};

static const struct cmd_row cmds[] = {
#define BPF_CMD(cmd, last, fn) [cmd] = { ATTR_END(last), fn, 0 },
#define BPF_CMD_END(cmd, end, fn) [cmd] = { (end), fn, 0 },
#define BPF_CMD_ABOVE(cmd, last) [cmd] = { ATTR_END(last), NULL, 1 },
#include "api/cmds.def"
#undef BPF_CMD
#undef BPF_CMD_END
#undef BPF_CMD_ABOVE
};

/* Handlers of BPF_CMD_ABOVE rows, set when the library is loaded. */
static _Atomic(cmd_fn) above[BRT_ARRAY_SIZE(cmds)];

int brt_api_register_cmd(int cmd, int (*fn)(struct brt_call *call))
{
	if (cmd < 0 || (size_t)cmd >= BRT_ARRAY_SIZE(cmds) || !cmds[cmd].above)
		return -EINVAL;
	atomic_store_explicit(&above[cmd], fn, memory_order_release);
	return 0;
}

void brt_api_batch_begin(void)
{
	brt_obj_batch_begin();
}

void brt_api_batch_end(void)
{
	brt_obj_batch_end();
	if (!brt_obj_batch_id()) /* the outermost end */
		brt_prog_file_batch_end();
}

void brt_api_closed(void)
{
	brt_obj_sweep();
}

int brt_bpf_call(int cmd, struct brt_call *call)
{
	const unsigned char *p = (const unsigned char *)call->attr;
	const struct cmd_row *row;
	size_t end;
	cmd_fn fn;
	int ret;

	if (cmd < 0 || (size_t)cmd >= BRT_ARRAY_SIZE(cmds))
		return -EINVAL;
	row = &cmds[cmd];
	fn = row->above ? atomic_load_explicit(&above[cmd], memory_order_acquire) : row->fn;
	if (!fn)
		return -EINVAL;
	end = call->attr_len ? call->attr_len : sizeof(union bpf_attr);
	for (size_t i = row->last_end; i < end; i++)
		if (p[i])
			return -EINVAL;
	brt_obj_batch_command();
	ret = fn(call);
	/* a new fd may reuse a number the thread's batch resolved earlier (obj.h) */
	if (ret >= 0)
		brt_obj_batch_handed(ret);
	return ret;
}

/* The kernel's bpf_check_uarg_tail_zero(): bytes past Linux 6.18's attr must be zero. */
static int tail_zero(uint64_t uattr, unsigned int size)
{
	unsigned char buf[256];

	for (size_t off = BRT_ATTR_SIZE; off < size; off += sizeof(buf)) {
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
	/* this libc's union and the bytes of Linux 6.18's that it lacks */
	union {
		union bpf_attr attr;
		unsigned char raw[BRT_ATTR_SIZE];
	} attr;
	struct brt_call call = {
		.attr = &attr.attr,
		.uattr = (uint64_t)(uintptr_t)uattr,
		.size = size,
		.attr_len = BRT_ATTR_SIZE,
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
