/* uaccess.c - copies between the caller's memory and ours.  bpf() must answer EFAULT for
 * a bad pointer instead of crashing, so the checked copies go through brt_ucopy()
 * (util/ucopy.c): a copy whose fault is caught and turned into -EFAULT, as the kernel's
 * exception table does for copy_from_user().  The trusted copies (for the C wrappers, whose pointers the caller vouches
 * for) are plain memcpy.
 */
#include <errno.h>
#include <string.h>

#include "api/api.h"
#include "util/util.h"

static int checked_from(void *dst, uint64_t src, size_t len)
{
	int err;

	if (!len)
		return 0;
	if (!src)
		return -EFAULT;
	err = brt_ucopy(dst, (const void *)(uintptr_t)src, len, 0);
	if (err == -ENOSYS) {
		/* No process_vm_* here (seccomp, old kernel): fall back to trusting. */
		memcpy(dst, (const void *)(uintptr_t)src, len);
		return 0;
	}
	return err;
}

static int checked_to(uint64_t dst, const void *src, size_t len)
{
	int err;

	if (!len)
		return 0;
	if (!dst)
		return -EFAULT;
	err = brt_ucopy((void *)(uintptr_t)dst, src, len, 1);
	if (err == -ENOSYS) {
		memcpy((void *)(uintptr_t)dst, src, len);
		return 0;
	}
	return err;
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
