/* d_path.c - bpf_d_path (helper 147) as the kernel's verifier sees it
 * (kernel/trace/bpf_trace.c: bpf_d_path_proto and bpf_d_path_allowed()): tracing programs
 * only, and of those iterators (BPF_TRACE_ITER), trampolines on the functions of the
 * kernel's btf_allowlist_d_path, and LSM programs on the hooks bpf_lsm_is_sleepable_hook()
 * names; its first argument is a kernel struct path (a PTR_TO_BTF_ID of struct path, or of
 * a struct holding one at the register's offset, as &file->f_path).  Whether the program
 * may call the helper at all is calls.c's helper_allowed(), which asks brt_d_path_allowed();
 * the argument's register type is checked there too, the struct here.
 *
 * At run time the helper is src/trace/task.c's: bpfrt never hands a program a struct path
 * (tracing programs load but do not run here), so it answers as the kernel does for a
 * path it cannot read.
 */
#include <errno.h>
#include <string.h>

#include "verifier/internal.h"

/* btf_allowlist_d_path with this kernel's options (CONFIG_SECURITY, _PATH): functions
 * that are handed a valid struct path by their callers */
static const char *const d_path_funcs[] = {
	"security_file_permission", "security_inode_getattr", "security_file_open",
	"security_path_truncate",   "vfs_truncate",           "vfs_fallocate",
	"dentry_open",              "vfs_getattr",            "filp_close",
};

/* kernel/bpf/bpf_lsm.c sleepable_lsm_hooks (CONFIG_SECURITY_PATH and _NETWORK set): the
 * hooks whose callers hold no lock a sleeping program could deadlock on, without the
 * "bpf_lsm_" prefix */
static const char *const sleepable_lsm[] = {
	"bpf", "bpf_map", "bpf_map_create", "bpf_map_free", "bpf_prog", "bpf_prog_load",
	"bpf_prog_free", "bpf_token_create", "bpf_token_free", "bpf_token_cmd",
	"bpf_token_capable", "bprm_check_security", "bprm_committed_creds",
	"bprm_committing_creds", "bprm_creds_for_exec", "bprm_creds_from_file", "capget",
	"capset", "cred_prepare", "file_ioctl", "file_lock", "file_open", "file_post_open",
	"file_receive", "inode_create", "inode_free_security", "inode_getattr", "inode_getxattr",
	"inode_mknod", "inode_need_killpriv", "inode_post_setxattr", "inode_post_removexattr",
	"inode_readlink", "inode_removexattr", "inode_rename", "inode_rmdir", "inode_setattr",
	"inode_setxattr", "inode_symlink", "inode_unlink", "kernel_module_request",
	"kernel_read_file", "kernfs_init_security", "path_unlink", "path_mkdir", "path_rmdir",
	"path_truncate", "path_symlink", "path_link", "path_rename", "path_chmod", "path_chown",
	"mmap_file", "netlink_send", "path_notify", "release_secctx", "sb_alloc_security",
	"sb_eat_lsm_opts", "sb_kern_mount", "sb_mount", "sb_remount", "sb_set_mnt_opts",
	"sb_show_options", "sb_statfs", "sb_umount", "settime", "inet_conn_established",
	"socket_accept", "socket_bind", "socket_connect", "socket_create", "socket_getpeername",
	"socket_getpeersec_dgram", "socket_getsockname", "socket_getsockopt", "socket_listen",
	"socket_post_create", "socket_recvmsg", "socket_sendmsg", "socket_shutdown",
	"socket_socketpair", "syslog", "task_alloc", "task_prctl", "task_setscheduler",
	"task_to_inode", "userns_create",
};

static int in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

int brt_d_path_allowed(const struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;
	const char *name = env->attach_name;

	if (o->prog_type == BPF_PROG_TYPE_TRACING && o->expected_attach_type == BPF_TRACE_ITER)
		return 1;
	if (o->prog_type == BPF_PROG_TYPE_LSM)
		return name && !strncmp(name, "bpf_lsm_", 8) &&
		       in_list(name + 8, sleepable_lsm, sizeof(sleepable_lsm) / sizeof(*sleepable_lsm));
	return in_list(name, d_path_funcs, sizeof(d_path_funcs) / sizeof(*d_path_funcs));
}

/* check_reg_type()'s struct match for ARG_PTR_TO_BTF_ID (not strict: a struct path nested
 * at the register's offset counts), then check_func_arg_reg_off(): a fixed offset is the
 * member's, a variable one is refused */
int brt_d_path_arg(struct brt_env *env, int regno, const struct brt_reg *reg)
{
	const struct brt_btf *kbtf = env->kbtf;
	int path = kbtf ? brt_btf_find(kbtf, "path", BTF_KIND_STRUCT) : -1;
	struct brt_reg r = *reg;

	if (path <= 0 || !brt_btf_struct_ids_match(kbtf, reg->btf_id, reg->off, (uint32_t)path, 0)) {
		brt_verr(env, "R%d is of type %s but path is expected\n", regno,
			 brt_btf_reg_name(env, reg->btf_id));
		return -EACCES;
	}
	if (r.off >= 0)
		r.off = 0;
	return brt_check_ptr_off_reg(env, &r, regno);
}
