/* helper_args.c - the built-in helpers' arguments of a program the checked engine runs
 * unverified (bpfrt_vm_load(), or a program kept after the verifier refused it).
 *
 * A built-in helper trusts what the verifier proved about its arguments, as the kernel's
 * do: bpf_snprintf's fmt is a NUL-terminated string in a read-only map value, a
 * syncookie helper's iph points at 20 readable bytes, a socket argument is a socket.  A
 * program nobody verified proved nothing, so before such a call the checked engine
 * checks what it can from the helper's prototype (helpers.def), and a helper whose
 * arguments it cannot check is not in the program's table at all (its call is the
 * unknown-helper fault):
 *   - scalars need nothing; the map family (a map pointer, its key and value) is checked
 *     by the map helpers themselves (brt_map_helper_arg(), readable()), a callback by
 *     brt_vm_call_func(): nothing here;
 *   - memory with its size in the next argument, the 8-byte long of strtol, the fixed
 *     headers of the syncookie helpers and a constant string are checked against the
 *     run's regions and stack (bpfrt_run_access_ok()) before the call;
 *   - everything else (the context, sockets, kernel objects, dynptrs, timers, locks,
 *     ring buffer records) is refused.
 * Only the checked engine: the fast engines trust an unverified program whole.
 * Helpers the host registered check their own arguments (bpfrt_run_access_ok()), as the
 * public API documents, and so does any function set with brt_vm_set_helper(). */
#include "vm/helper_proto.h"
#include "vm/vm.h"

/* What one argument type needs without a verifier. */
enum arg_need { NEED_NOTHING, NEED_MEM, NEED_FIXED, NEED_STR, NEED_REFUSE };

static enum arg_need arg_need(uint8_t t, unsigned *fixed, int *writable)
{
	*fixed = 0;
	*writable = 0;
	switch (t) {
	case BRT_ARG_DONTCARE:
	case BRT_ARG_ANYTHING:
	case BRT_ARG_CONST_SIZE:
	case BRT_ARG_CONST_SIZE_OR_ZERO:
	case BRT_ARG_CONST_ALLOC_SIZE_OR_ZERO:
	case BRT_ARG_CONST_MAP_PTR:
	case BRT_ARG_PTR_TO_MAP_KEY:
	case BRT_ARG_PTR_TO_MAP_VALUE:
	case BRT_ARG_PTR_TO_MAP_VALUE_OR_NULL:
	/* a callback is called through brt_vm_call_func(), which faults on a value that
	 * names no function of the program; the stack pointer beside it (bpf_loop,
	 * for_each_map_elem, user_ringbuf_drain) is handed to the callback, never read */
	case BRT_ARG_PTR_TO_FUNC:
	case BRT_ARG_PTR_TO_STACK_OR_NULL:
		return NEED_NOTHING;
	case BRT_ARG_PTR_TO_UNINIT_MEM:
	case BRT_ARG_PTR_TO_MEM_WRITE:
	case BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL:
		*writable = 1;
		return NEED_MEM;
	case BRT_ARG_PTR_TO_MEM:
	case BRT_ARG_PTR_TO_MEM_OR_NULL:
		return NEED_MEM;
	case BRT_ARG_PTR_TO_LONG:
		*fixed = 8;
		*writable = 1;
		return NEED_FIXED;
	case BRT_ARG_PTR_TO_MEM_IPHDR: /* struct iphdr */
	case BRT_ARG_PTR_TO_MEM_TCPHDR: /* struct tcphdr */
		*fixed = 20;
		return NEED_FIXED;
	case BRT_ARG_PTR_TO_MEM_IPV6HDR: /* struct ipv6hdr */
		*fixed = 40;
		return NEED_FIXED;
	case BRT_ARG_PTR_TO_CONST_STR:
		return NEED_STR;
	default:
		return NEED_REFUSE;
	}
}

static int is_size(uint8_t t)
{
	return t == BRT_ARG_CONST_SIZE || t == BRT_ARG_CONST_SIZE_OR_ZERO;
}

static int may_be_null(uint8_t t)
{
	return t == BRT_ARG_PTR_TO_MEM_OR_NULL || t == BRT_ARG_PTR_TO_MEM_WRITE_OR_NULL;
}

int brt_vm_helper_need(const struct brt_helper_proto *p)
{
	int need = BRT_HELPER_NEED_NOTHING;
	unsigned fixed;
	int writable;

	if (p->host)
		return BRT_HELPER_NEED_NOTHING;
	for (int i = 0; i < 5; i++) {
		switch (arg_need(p->args[i], &fixed, &writable)) {
		case NEED_NOTHING:
			break;
		case NEED_MEM:
			/* the size must follow, as the kernel's check_func_proto() requires */
			if (i == 4 || !is_size(p->args[i + 1]))
				return BRT_HELPER_NEED_REFUSE;
			need = BRT_HELPER_NEED_CHECK;
			break;
		case NEED_FIXED:
		case NEED_STR:
			need = BRT_HELPER_NEED_CHECK;
			break;
		case NEED_REFUSE:
			return BRT_HELPER_NEED_REFUSE;
		}
	}
	return need;
}

unsigned brt_vm_helper_args_bad(const struct brt_helper_proto *p, const uint64_t *reg,
				struct bpfrt_run_ctx *ctx)
{
	unsigned fixed;
	int writable;

	for (int i = 0; i < 5; i++) {
		uint64_t ptr = reg[i + 1];

		switch (arg_need(p->args[i], &fixed, &writable)) {
		case NEED_NOTHING:
			break;
		case NEED_MEM: {
			uint64_t size = i < 4 ? reg[i + 2] : 0;

			if (!ptr && may_be_null(p->args[i]) && !size)
				break;
			if (size > UINT32_MAX || (!size && p->args[i + 1] == BRT_ARG_CONST_SIZE))
				return (unsigned)i + 1;
			if (size && !bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)ptr,
							 (size_t)size, writable))
				return (unsigned)i + 1;
			break;
		}
		case NEED_FIXED:
			if (!bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)ptr, fixed, writable))
				return (unsigned)i + 1;
			break;
		case NEED_STR:
			/* byte by byte: the regions bound the walk */
			for (uint64_t a = ptr;; a++) {
				if (!bpfrt_run_access_ok(ctx, (const void *)(uintptr_t)a, 1, 0))
					return (unsigned)i + 1;
				if (!*(const char *)(uintptr_t)a)
					break;
			}
			break;
		case NEED_REFUSE:
			return (unsigned)i + 1;
		}
	}
	return 0;
}
