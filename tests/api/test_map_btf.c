/* test_map_btf.c - MAP_CREATE with btf_fd, btf_key_type_id and btf_value_type_id against
 * the kernel: the same attributes (good ids, a type of the wrong size, a bad fd, a fd
 * that is not BTF, a keyless hash map...) must give the same answer from bpfrt_bpf() and,
 * as root, from bpf(2); OBJ_GET_INFO_BY_FD then reports the type ids. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "btf_blob.h"
#include "harness.h"
#include "api/diff.h"

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))
static const char strs[] = "\0int\0s\0a\0b";
/* [1] int, [2] struct s { int a; int b; }, [3] int (void) proto */
static const uint32_t types[] = {
	1, INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
	5, INFO(BTF_KIND_STRUCT, 2), 8, 7, 1, 0, 9, 1, 32,
	0, INFO(BTF_KIND_FUNC_PROTO, 0), 1,
};

static int load_btf(sys_fn sys)
{
	return btf_blob_load(sys, types, sizeof(types), strs, sizeof(strs));
}

enum { FD_BTF, FD_BAD, FD_MAP };
static const struct map_case {
	const char *name;
	uint32_t type, key, value;
	int fd;
	uint32_t key_id, value_id;
} cases[] = {
	{ "int key, struct value", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 1, 2 },
	{ "array of structs", BPF_MAP_TYPE_ARRAY, 4, 8, FD_BTF, 1, 2 },
	{ "value type of the wrong size", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 1, 1 },
	{ "key type of the wrong size", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 2, 2 },
	{ "bad btf fd", BPF_MAP_TYPE_HASH, 4, 8, FD_BAD, 1, 2 },
	{ "btf fd is a map", BPF_MAP_TYPE_HASH, 4, 8, FD_MAP, 1, 2 },
	{ "key id 0 with a value id", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 0, 2 },
	{ "key id without a value id", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 1, 0 },
	{ "value id past the types", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 1, 9 },
	{ "value is a func proto", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 1, 3 },
	{ "btf fd without ids", BPF_MAP_TYPE_HASH, 4, 8, FD_BTF, 0, 0 },
};

/* ret 1 for a new fd, else -errno; info ids checked when the map was made */
static int run(sys_fn sys, const struct map_case *c, uint32_t *key_id, uint32_t *value_id)
{
	int btf = load_btf(sys), map = -1, ret;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	map = sys(BPF_MAP_CREATE, &a, sizeof(a));
	if (btf < 0 || map < 0)
		return -1000;
	memset(&a, 0, sizeof(a));
	a.map_type = c->type;
	a.key_size = c->key;
	a.value_size = c->value;
	a.max_entries = 4;
	a.btf_fd = (uint32_t)(c->fd == FD_BTF ? btf : c->fd == FD_MAP ? map : 9999);
	a.btf_key_type_id = c->key_id;
	a.btf_value_type_id = c->value_id;
	ret = sys(BPF_MAP_CREATE, &a, sizeof(a));
	if (ret >= 0) {
		struct bpf_map_info info;

		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)ret;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		*key_id = *value_id = 77;
		if (!sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a))) {
			*key_id = info.btf_key_type_id;
			*value_id = info.btf_value_type_id;
		}
		close(ret);
		ret = 1;
	} else {
		ret = -errno;
	}
	close(btf);
	close(map);
	return ret;
}

int main(void)
{
	int kernel = kernel_available();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct map_case *c = &cases[i];
		uint32_t kk = 0, kv = 0, bk = 0, bv = 0;
		int got = run(sys_bpfrt, c, &bk, &bv);

		T_CASE(c->name);
		if (got == 1) {
			T_EQ_U64(c->key_id, bk);
			T_EQ_U64(c->value_id, bv);
		}
		/* the expectations that hold without the kernel */
		if (i < 2 || i == 10)
			T_EQ_INT(1, got);
		else
			T_ASSERT(got < 0 && got != -1000);
		if (kernel) {
			T_EQ_INT(run(sys_kernel, c, &kk, &kv), got);
			if (got == 1) {
				T_EQ_U64(kk, bk);
				T_EQ_U64(kv, bv);
			}
		}
	}
	if (!kernel)
		printf("note: kernel comparison skipped (not root or no bpf())\n");
	return t_done();
}
