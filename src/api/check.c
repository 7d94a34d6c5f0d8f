/* check.c - the one function BPF_PROG_LOAD calls to decide whether a program may load:
 * the verifier (src/verifier), with the caller's log_buf/log_size/log_level and the
 * program's maps resolved through the fd table, at the privilege level prog_flags asks
 * for or the caller's capabilities give.  It reports what Linux 6.18 reports, messages
 * included (unknown opcodes: "unknown opcode %02x" and the like).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "bpfrt.h"
#include "api/api.h"
#include "btf/btf.h"
#include "maps/maps.h"
#include "obj/obj.h"
#include "verifier/verifier.h"

int brt_map_memo_get(struct brt_map_memo *memo, int fd, struct brt_map **out)
{
	int err;

	for (uint32_t i = 0; memo && i < memo->n; i++)
		if (memo->fd[i] == fd) {
			brt_map_get(memo->map[i]);
			*out = memo->map[i];
			return 0;
		}
	err = brt_map_from_fd(fd, out);
	if (!err && memo && memo->n < BRT_MAP_MEMO_MAX) {
		brt_map_get(*out);
		memo->fd[memo->n] = fd;
		memo->map[memo->n++] = *out;
	}
	return err;
}

void brt_map_memo_free(struct brt_map_memo *memo)
{
	for (uint32_t i = 0; memo && i < memo->n; i++)
		brt_map_put(memo->map[i]);
	if (memo)
		memo->n = 0;
}

/* Map fds seen by the verifier: the map's shape, not a reference (resolve_maps() takes
 * the references the loaded program keeps; the memo, arg, holds one until then). */
static int map_info(void *arg, int fd, struct brt_map_info *out)
{
	struct brt_map *m;
	int err;

	err = brt_map_memo_get(arg, fd, &m);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->type = m->type;
	out->key_size = m->key_size;
	out->value_size = m->value_size;
	out->max_entries = m->max_entries;
	out->map_flags = m->flags;
	out->ptr = m;
	brt_map_in_map_template(m, &out->inner_type, &out->inner_key_size,
				&out->inner_value_size, &out->inner_max_entries,
				&out->inner_flags);
	{
		struct brt_mim_fields f;

		if (!brt_map_in_map_template_fields(m, &f)) {
			out->inner_spin_lock_off1 = f.lock_off1;
			out->inner_res_spin_lock_off1 = f.res_lock_off1;
			out->inner_timer_off1 = f.timer_off1;
			out->inner_has_btf = f.has_btf;
		}
	}
	/* frozen .rodata: the verifier reads it as constants (the program keeps a reference
	 * to the map, so the bytes outlive the program) */
	out->frozen_rdonly = (m->flags & BPF_F_RDONLY_PROG) &&
			     atomic_load_explicit(&m->obj.hdr->frozen, memory_order_acquire);
	out->rodata = m->type == BPF_MAP_TYPE_ARRAY ? m->data : NULL;
	out->spin_lock_off1 = m->lock_off >= 0 && !m->lock_res ? (uint32_t)m->lock_off + 1 : 0;
	out->res_spin_lock_off1 = m->lock_off >= 0 && m->lock_res ? (uint32_t)m->lock_off + 1 : 0;
	out->has_btf = m->obj.snap.btf_id != 0;
	out->timer_off1 = m->timer_off >= 0 ? (uint32_t)m->timer_off + 1 : 0;
	out->task_work_off1 = m->task_work_off >= 0 ? (uint32_t)m->task_work_off + 1 : 0;
	/* the BTF the map was created with: a private checked copy, never the file's (which
	 * another process may rewrite during or after the check); the program holds the map,
	 * and the map its copy, while the verifier reads it */
	if (m->obj.snap.btf_id && m->obj.snap.tail_size) {
		struct brt_btf_snap *s;
		int serr = brt_map_btf_snap(m, &s);

		if (serr && serr != -ENOENT) {
			brt_map_put(m);
			return serr == -ENOMEM ? serr : -EINVAL;
		}
		if (!serr) {
			out->btf_blob = s->blob;
			out->btf_size = s->size;
			out->btf = brt_btf_snap_btf(s);
			out->btf_value_type_id = m->obj.snap.btf_value_type_id;
		}
	}
	memcpy(out->map_name, m->obj.snap.name, sizeof(out->map_name));
	out->map_name[sizeof(out->map_name) - 1] = 0;
	brt_map_put(m);
	return 0;
}

/* A BTF object's fd (BPF_BTF_LOAD): 0 and the object, for the verifier to count the
 * distinct ones fd_array_cnt binds; else -EBADF or -EINVAL. */
static int btf_fd(void *arg, int fd, const void **id)
{
	struct brt_obj *obj;
	int err;

	(void)arg;
	err = brt_obj_from_fd_transient(fd, BRT_OBJ_BTF, &obj);
	if (err)
		return err;
	*id = obj;
	brt_obj_put(obj);
	return 0;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#define CAP_BPF 39
#endif

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

/* The calling thread's capability sets; all clear when capget() fails. */
static void caller_caps(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	if (syscall(SYS_capget, &hdr, d))
		memset(d, 0, 2 * sizeof(*d));
}

int brt_api_sys_admin(void)
{
	struct __user_cap_data_struct d[2];

	caller_caps(d);
	return has_cap(d, CAP_SYS_ADMIN);
}

/* The level the kernel would give the calling thread: bpf_capable() is CAP_BPF or
 * CAP_SYS_ADMIN, perfmon_capable() CAP_PERFMON or CAP_SYS_ADMIN. */
static uint32_t caller_priv(void)
{
	/* one capget per batch (one object's programs, obj.h): only this thread changes
	 * its own capabilities, and it is inside one call of the library */
	static _Thread_local uint64_t batch_of;
	static _Thread_local uint32_t batch_priv;
	uint64_t batch = brt_obj_batch_id();
	struct __user_cap_data_struct d[2];
	int admin, bpf, perfmon;
	uint32_t priv;

	if (batch && batch == batch_of)
		return batch_priv;
	caller_caps(d);
	admin = has_cap(d, CAP_SYS_ADMIN);
	bpf = admin || has_cap(d, CAP_BPF);
	perfmon = admin || has_cap(d, CAP_PERFMON);
	priv = bpf && perfmon ? BRT_PRIV_ROOT : bpf ? BRT_PRIV_BPF_CAPABLE : BRT_PRIV_UNPRIV;
	batch_of = batch;
	batch_priv = priv;
	return priv;
}

/* prog_flags' BPFRT_F_PRIV_* bit, else the caller's capabilities; -EINVAL for two bits */
static int load_priv(uint32_t prog_flags, uint32_t *priv)
{
	switch (prog_flags & BPFRT_F_PRIV_MASK) {
	case 0:
		*priv = caller_priv();
		return 0;
	case BPFRT_F_PRIV_FULL:
		*priv = BRT_PRIV_ROOT;
		return 0;
	case BPFRT_F_PRIV_BPF_CAPABLE:
		*priv = BRT_PRIV_BPF_CAPABLE;
		return 0;
	case BPFRT_F_PRIV_UNPRIV:
		*priv = BRT_PRIV_UNPRIV;
		return 0;
	default:
		return -EINVAL;
	}
}

static uint32_t priv_bit(uint32_t priv)
{
	static const uint32_t bit[] = {
		[BRT_PRIV_ROOT] = BPFRT_F_PRIV_FULL,
		[BRT_PRIV_BPF_CAPABLE] = BPFRT_F_PRIV_BPF_CAPABLE,
		[BRT_PRIV_UNPRIV] = BPFRT_F_PRIV_UNPRIV,
	};

	return bit[priv];
}

int brt_api_prog_priv(uint32_t prog_flags, uint32_t *out)
{
	uint32_t priv;
	int err = load_priv(prog_flags, &priv);

	if (err)
		return err;
	*out = (prog_flags & ~BPFRT_F_PRIV_MASK) | priv_bit(priv);
	return 0;
}

int brt_api_prog_file_priv(uint32_t hdr_flags, uint32_t max_priv, uint32_t *out)
{
	uint32_t claimed;

	/* no bit would mean "the caller's capabilities": root's, for a file anyone wrote */
	if (!(hdr_flags & BPFRT_F_PRIV_MASK) || load_priv(hdr_flags, &claimed))
		return -EINVAL;
	/* BRT_PRIV_* grow less privileged as they grow */
	return brt_api_prog_priv((hdr_flags & ~BPFRT_F_PRIV_MASK) | priv_bit(claimed > max_priv ?
									      claimed : max_priv),
				 out);
}

int brt_api_check_prog(struct brt_prog_check *pc)
{
	struct brt_verify_opts opts = {
		.prog_type = pc->prog_type,
		.expected_attach_type = pc->expected_attach_type,
		.prog_flags = pc->prog_flags & ~(BPFRT_F_PRIV_MASK | BPFRT_F_ENGINE_MASK),
		.gpl = pc->gpl,
		.log_level = pc->log_level,
		.log_buf = pc->log_size ? pc->log_buf : NULL,
		.log_size = pc->log_buf || pc->log_grow ? pc->log_size : 0,
		.log_grow = pc->log_grow,
		.map_info = pc->no_maps ? NULL : map_info,
		.map_arg = pc->memo,
		.fd_array = pc->fd_array,
		.fd_array_cnt = pc->fd_array_cnt,
		.bind_cnt = pc->bind_cnt,
		.btf_fd = btf_fd,
		.lines = pc->lines,
		.nlines = pc->nlines,
		.func_linkage = pc->func_linkage,
		.nfuncs = pc->nfuncs,
		.prog_btf = pc->prog_btf,
		.func_btf_ids = pc->func_btf_ids,
		.func_offs = pc->func_offs,
		.exc_cb_insn = pc->exc_cb_insn,
		.btf_info = pc->btf_info,
		.call_maps = pc->call_maps,
		.ctx_read_off = pc->ctx_read_off,
		.insn_flags = pc->insn_flags,
		.loop_callback = pc->loop_callback,
		.ops = pc->ops,
		.attach_btf_id = pc->attach_btf_id,
		.attach_btf = pc->attach_btf_id ? brt_btf_vmlinux() : NULL,
		.local_btf = pc->local_btf,
	};

	struct brt_verify_result res;
	int err = load_priv(pc->prog_flags, &opts.priv);

	if (err)
		return err;
	memset(&res, 0, sizeof(res));
	err = brt_verify(pc->insns, pc->n, &opts, &res);
	if (pc->max_ctx_offset)
		*pc->max_ctx_offset = res.max_ctx_offset;
	if (pc->verified_insns)
		*pc->verified_insns = res.insn_processed;
	if (pc->log_true_size)
		*pc->log_true_size = res.log_true_size;
	pc->log_ran = 1;
	pc->btf_loads = res.btf_loads;
	pc->nobj_types = res.nobj_types;
	pc->throws = res.throws;
	pc->exc_cb_insn = res.exc_cb_insn;
	memcpy(pc->obj_types, res.obj_types, sizeof(pc->obj_types));
	pc->subprog_cnt = res.subprog_cnt < 256 ? res.subprog_cnt : 256;
	memcpy(pc->stack_depth, res.stack_depth, sizeof(pc->stack_depth));
	if (err && pc->err_msg)
		snprintf(pc->err_msg, pc->err_msglen, "verifier: %s%s",
			 res.err_msg[0] ? "" : "error ",
			 res.err_msg[0] ? res.err_msg : strerror(-err));
	return err;
}
