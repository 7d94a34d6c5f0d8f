/* api.h - the api/ folder's interface: the bpf() command handlers (rows of cmds.def),
 * attribute checks and the copies to and from the caller's memory.  The entry point and
 * its theory of operation are in bpf.c.
 */
#ifndef BPFRT_SRC_API_API_H
#define BPFRT_SRC_API_API_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

/* How a command reaches the caller's memory.  bpfrt_bpf() checks every pointer (a bad one
 * is EFAULT, as in the kernel); the libbpf-style wrappers trust theirs and copy directly. */
struct brt_uaccess {
	int (*from)(void *dst, uint64_t src, size_t len); /* 0 or -EFAULT */
	int (*to)(uint64_t dst, const void *src, size_t len);
	/* NUL-terminated string of at most cap bytes: its length, -EFAULT, -ENAMETOOLONG */
	int (*str)(char *dst, uint64_t src, size_t cap);
};

extern const struct brt_uaccess brt_uaccess_checked;
extern const struct brt_uaccess brt_uaccess_trusted;

/* One bpf() call: the attr copy, where the caller's attr is (for commands that write
 * results back into it) and how to reach caller memory. */
struct brt_call {
	union bpf_attr *attr;
	uint64_t uattr;
	unsigned int size;
	const struct brt_uaccess *ua;
};

#define BPF_CMD(cmd, last, fn) int fn(struct brt_call *call);
#include "api/cmds.def"
#undef BPF_CMD

/* Run one command on an attr already in process memory; returns >= 0 or -errno. */
int brt_bpf_call(int cmd, struct brt_call *call);

/* Write a field of the caller's attr back (PROG_TEST_RUN results, batch counts). */
#define BRT_PUT_ATTR(call, field)                                                         \
	(call)->ua->to((call)->uattr + offsetof(union bpf_attr, field), &(call)->attr->field, \
		       sizeof((call)->attr->field))

#endif
