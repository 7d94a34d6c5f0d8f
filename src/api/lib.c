/* lib.c - the libbpf-style wrappers of bpfrt/bpf.h: each fills a union bpf_attr and
 * enters the command table with trusted copies (no EFAULT probing, no attr tail checks),
 * returning -errno and setting errno.
 */
#include <errno.h>
#include <string.h>

#include "bpfrt.h"
#include "api/api.h"
#include "maps/maps.h"
#include "util/util.h"

static int ret_errno(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static int call_trusted(int cmd, union bpf_attr *attr)
{
	struct brt_call call = {
		.attr = attr,
		.uattr = (uint64_t)(uintptr_t)attr,
		.size = sizeof(*attr),
		.ua = &brt_uaccess_trusted,
	};

	return ret_errno(brt_bpf_call(cmd, &call));
}

static uint64_t ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

int bpfrt_map_create(enum bpf_map_type type, const char *name, uint32_t key_size,
		     uint32_t value_size, uint32_t max_entries,
		     const struct bpfrt_map_create_opts *opts)
{
	union bpf_attr attr;

	if (!brt_opts_valid(opts, offsetof(struct bpfrt_map_create_opts, inner_map_fd) +
				    sizeof(opts->inner_map_fd), "bpfrt_map_create_opts"))
		return ret_errno(-EINVAL);
	memset(&attr, 0, sizeof(attr));
	attr.map_type = type;
	attr.key_size = key_size;
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	attr.map_flags = BRT_OPTS_GET(opts, map_flags, 0);
	attr.numa_node = BRT_OPTS_GET(opts, numa_node, 0);
	attr.map_extra = BRT_OPTS_GET(opts, map_extra, 0);
	attr.inner_map_fd = BRT_OPTS_GET(opts, inner_map_fd, 0);
	if (name) {
		if (strlen(name) >= sizeof(attr.map_name))
			return ret_errno(-EINVAL);
		memcpy(attr.map_name, name, strlen(name));
	}
	return call_trusted(BPF_MAP_CREATE, &attr);
}

static int elem_call(int cmd, int fd, const void *key, const void *value, uint64_t flags)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	attr.key = ptr(key);
	attr.value = ptr(value);
	attr.flags = flags;
	if (fd < 0)
		return ret_errno(-EBADF);
	return call_trusted(cmd, &attr);
}

int bpfrt_map_update_elem(int fd, const void *key, const void *value, uint64_t flags)
{
	return elem_call(BPF_MAP_UPDATE_ELEM, fd, key, value, flags);
}

int bpfrt_map_lookup_elem(int fd, const void *key, void *value)
{
	return elem_call(BPF_MAP_LOOKUP_ELEM, fd, key, value, 0);
}

int bpfrt_map_delete_elem(int fd, const void *key)
{
	return elem_call(BPF_MAP_DELETE_ELEM, fd, key, NULL, 0);
}

int bpfrt_map_get_next_key(int fd, const void *key, void *next_key)
{
	return elem_call(BPF_MAP_GET_NEXT_KEY, fd, key, next_key, 0);
}

int bpfrt_map_lookup_and_delete_elem(int fd, const void *key, void *value)
{
	return elem_call(BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, key, value, 0);
}

int bpfrt_map_freeze(int fd)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = (uint32_t)fd;
	return call_trusted(BPF_MAP_FREEZE, &attr);
}

int bpfrt_obj_pin(int fd, const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.bpf_fd = (uint32_t)fd;
	attr.pathname = ptr(path);
	return call_trusted(BPF_OBJ_PIN, &attr);
}

int bpfrt_obj_get(const char *path)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = ptr(path);
	return call_trusted(BPF_OBJ_GET, &attr);
}

int bpfrt_obj_get_info_by_fd(int fd, void *info, uint32_t *info_len)
{
	union bpf_attr attr;
	int err;

	if (!info_len)
		return ret_errno(-EINVAL);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = *info_len;
	attr.info.info = ptr(info);
	err = call_trusted(BPF_OBJ_GET_INFO_BY_FD, &attr);
	if (!err)
		*info_len = attr.info.info_len;
	return err;
}

int bpfrt_num_possible_cpus(void)
{
	return (int)brt_ncpus();
}

int bpfrt_prog_load(enum bpf_prog_type type, const char *name, const char *license,
		    const struct bpf_insn *insns, size_t insn_cnt,
		    const struct bpfrt_prog_load_opts *opts)
{
	union bpf_attr attr;

	if (!brt_opts_valid(opts, offsetof(struct bpfrt_prog_load_opts, fd_array) +
				    sizeof(opts->fd_array), "bpfrt_prog_load_opts"))
		return ret_errno(-EINVAL);
	if (insn_cnt > UINT32_MAX)
		return ret_errno(-E2BIG);
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = ptr(insns);
	attr.insn_cnt = (uint32_t)insn_cnt;
	attr.license = ptr(license);
	attr.expected_attach_type = BRT_OPTS_GET(opts, expected_attach_type, 0);
	attr.prog_flags = BRT_OPTS_GET(opts, prog_flags, 0);
	attr.log_level = BRT_OPTS_GET(opts, log_level, 0);
	attr.log_size = BRT_OPTS_GET(opts, log_size, 0);
	attr.log_buf = ptr(BRT_OPTS_GET(opts, log_buf, NULL));
	attr.fd_array = ptr(BRT_OPTS_GET(opts, fd_array, NULL));
	if (name) {
		if (strlen(name) >= sizeof(attr.prog_name))
			return ret_errno(-EINVAL);
		memcpy(attr.prog_name, name, strlen(name));
	}
	return call_trusted(BPF_PROG_LOAD, &attr);
}

int bpfrt_prog_test_run_opts(int prog_fd, struct bpfrt_test_run_opts *opts)
{
	union bpf_attr attr;
	struct brt_call call = {
		.attr = &attr,
		.uattr = (uint64_t)(uintptr_t)&attr,
		.size = sizeof(attr),
		.ua = &brt_uaccess_trusted,
	};
	int err;

	if (!opts || !brt_opts_valid(opts, offsetof(struct bpfrt_test_run_opts, run_budget_ns) +
					   sizeof(opts->run_budget_ns), "bpfrt_test_run_opts"))
		return ret_errno(-EINVAL);
	call.run_budget = BRT_OPTS_GET(opts, run_budget, 0);
	call.run_budget_ns = BRT_OPTS_GET(opts, run_budget_ns, 0);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)prog_fd;
	attr.test.data_in = ptr(BRT_OPTS_GET(opts, data_in, NULL));
	attr.test.data_out = ptr(BRT_OPTS_GET(opts, data_out, NULL));
	attr.test.data_size_in = BRT_OPTS_GET(opts, data_size_in, 0);
	attr.test.data_size_out = BRT_OPTS_GET(opts, data_size_out, 0);
	attr.test.ctx_in = ptr(BRT_OPTS_GET(opts, ctx_in, NULL));
	attr.test.ctx_out = ptr(BRT_OPTS_GET(opts, ctx_out, NULL));
	attr.test.ctx_size_in = BRT_OPTS_GET(opts, ctx_size_in, 0);
	attr.test.ctx_size_out = BRT_OPTS_GET(opts, ctx_size_out, 0);
	attr.test.repeat = (uint32_t)BRT_OPTS_GET(opts, repeat, 0);
	attr.test.flags = BRT_OPTS_GET(opts, flags, 0);
	attr.test.cpu = BRT_OPTS_GET(opts, cpu, 0);
	attr.test.batch_size = BRT_OPTS_GET(opts, batch_size, 0);
	err = ret_errno(brt_bpf_call(BPF_PROG_TEST_RUN, &call));
	if (err && err != -ENOSPC)
		return err;
	opts->data_size_out = attr.test.data_size_out;
	opts->ctx_size_out = attr.test.ctx_size_out;
	opts->retval = attr.test.retval;
	opts->duration = attr.test.duration;
	return err;
}
