/* uaccess.c - copies between the caller's memory and ours.  bpf() must answer EFAULT for
 * a bad pointer instead of crashing, so the checked copies go through process_vm_readv()
 * and process_vm_writev() on our own pid: the kernel does the access and reports a fault
 * as an error.  The trusted copies (for the C wrappers, whose pointers the caller vouches
 * for) are plain memcpy.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "api/api.h"

static int checked_from(void *dst, uint64_t src, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)src, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (!src)
		return -EFAULT;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		/* No process_vm_* here (seccomp, old kernel): fall back to trusting. */
		memcpy(dst, (const void *)(uintptr_t)src, len);
		return 0;
	}
	return -EFAULT;
}

static int checked_to(uint64_t dst, const void *src, size_t len)
{
	struct iovec local = { .iov_base = (void *)(uintptr_t)src, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)dst, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (!dst)
		return -EFAULT;
	n = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy((void *)(uintptr_t)dst, src, len);
		return 0;
	}
	return -EFAULT;
}

static int trusted_from(void *dst, uint64_t src, size_t len)
{
	if (!len)
		return 0;
	if (!src)
		return -EFAULT;
	memcpy(dst, (const void *)(uintptr_t)src, len);
	return 0;
}

static int trusted_to(uint64_t dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	if (!dst)
		return -EFAULT;
	memcpy((void *)(uintptr_t)dst, src, len);
	return 0;
}

/* strncpy_from_user(): read up to a page boundary at a time, so a string that ends just
 * before unmapped memory is still read. */
static int checked_str(char *dst, uint64_t src, size_t cap)
{
	size_t n = 0;
	char *nul;

	if (!src)
		return -EFAULT;
	while (n < cap) {
		size_t chunk = 4096 - ((src + n) & 4095);
		int err;

		if (chunk > cap - n)
			chunk = cap - n;
		err = checked_from(dst + n, src + n, chunk);
		if (err)
			return err;
		nul = memchr(dst + n, 0, chunk);
		if (nul)
			return (int)(nul - dst);
		n += chunk;
	}
	return -ENAMETOOLONG;
}

static int trusted_str(char *dst, uint64_t src, size_t cap)
{
	size_t len;

	if (!src)
		return -EFAULT;
	len = strnlen((const char *)(uintptr_t)src, cap);
	if (len == cap)
		return -ENAMETOOLONG;
	memcpy(dst, (const char *)(uintptr_t)src, len + 1);
	return (int)len;
}

const struct brt_uaccess brt_uaccess_checked = {
	.from = checked_from,
	.to = checked_to,
	.str = checked_str,
};

const struct brt_uaccess brt_uaccess_trusted = {
	.from = trusted_from,
	.to = trusted_to,
	.str = trusted_str,
};
