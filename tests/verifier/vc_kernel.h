/* vc_kernel.h - running one verifier case through the real kernel (raw bpf() syscall, the
 * maps it needs created for it, func_info BTF, CAP_SYS_ADMIN / CAP_PERFMON / CAP_BPF out
 * of the effective set for bpf_capable and unprivileged cases); shared by the case oracle
 * and the level-2 log oracle. */
#ifndef BPFRT_TESTS_VERIFIER_VC_KERNEL_H
#define BPFRT_TESTS_VERIFIER_VC_KERNEL_H

#include <linux/btf.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vc_run.h"

static inline long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

struct caps {
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
};

static inline int caps_get(struct caps *c)
{
	c->hdr.version = _LINUX_CAPABILITY_VERSION_3;
	c->hdr.pid = 0;
	return (int)syscall(SYS_capget, &c->hdr, c->data);
}

static inline int caps_set(struct caps *c)
{
	return (int)syscall(SYS_capset, &c->hdr, c->data);
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static inline void cap_drop(struct caps *c, int cap)
{
	c->data[cap / 32].effective &= ~(1u << (cap % 32));
}

static inline int create_map(const struct vc_map *m)
{
	static const unsigned char zero[sizeof(m->data)];
	unsigned char value[256];
	uint32_t key = 0;
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = m->type;
	a.key_size = m->key_size;
	a.value_size = m->value_size;
	a.max_entries = m->max_entries;
	a.map_flags = m->flags;
	fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
	if (fd < 0 || (!m->frozen && !memcmp(m->data, zero, sizeof(zero))))
		return fd;
	/* key 0 gets data, then the map is frozen: a .rodata map as loaders leave it */
	memset(value, 0, sizeof(value));
	memcpy(value, m->data, sizeof(m->data));
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)value;
	if (m->value_size > sizeof(value) || sys_bpf(BPF_MAP_UPDATE_ELEM, &a)) {
		close(fd);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	if (m->frozen && sys_bpf(BPF_MAP_FREEZE, &a)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A BTF blob for func_info: int, a prototype "int (void)", and FUNC f<i> of that type
 * for each of n functions (static, or global where bit i of global is set).  Loads it and
 * returns its fd, or -1. */
static inline int load_func_btf(uint32_t n, uint32_t global)
{
	uint32_t words[8 + 2 * 3 + 3 * VC_MAX_FUNCS], *t = words + 6, nt = 0;
	char strs[4 + 5 * VC_MAX_FUNCS] = "\0int";
	uint32_t slen = 5;
	union bpf_attr a;

	*t++ = 1;                                  /* [1] int: name "int" */
	*t++ = (uint32_t)BTF_KIND_INT << 24;
	*t++ = 4;
	*t++ = (uint32_t)BTF_INT_SIGNED << 24 | 32; /* encoding, offset 0, bits */
	*t++ = 0;                                  /* [2] int (void) */
	*t++ = (uint32_t)BTF_KIND_FUNC_PROTO << 24;
	*t++ = 1;
	for (uint32_t i = 0; i < n; i++) {         /* [3 + i] f<i> */
		*t++ = slen;
		*t++ = (uint32_t)BTF_KIND_FUNC << 24 | ((global >> i) & 1);
		*t++ = 2;
		slen += (uint32_t)snprintf(strs + slen, sizeof(strs) - slen, "f%u", i) + 1;
	}
	nt = (uint32_t)(t - (words + 6)) * 4;
	words[0] = 0xeB9F | 1u << 16;              /* magic, version 1, flags 0 */
	words[1] = 24;                             /* hdr_len */
	words[2] = 0;                              /* type_off */
	words[3] = nt;                             /* type_len */
	words[4] = nt;                             /* str_off */
	words[5] = slen;                           /* str_len */
	{
		static unsigned char blob[sizeof(words) + sizeof(strs)];

		memcpy(blob, words, 24 + nt);
		memcpy(blob + 24 + nt, strs, slen);
		memset(&a, 0, sizeof(a));
		a.btf = (uint64_t)(uintptr_t)blob;
		a.btf_size = 24 + nt + slen;
		return (int)sys_bpf(BPF_BTF_LOAD, &a);
	}
}

/* Load into the kernel at log level `level` into log (log_size bytes); fills o like
 * vc_run_ours().  Returns -1 when the case could not be run (map creation failed). */
static inline int vc_run_kernel_log(const struct vcase *c, struct vc_outcome *o, uint32_t level,
			     char *log, uint32_t log_size)
{
	int fds[VC_MAX_MAPS] = { -1, -1, -1, -1 }, fd, ret = 0, btf_fd = -1;
	struct bpf_insn *insns = malloc(c->len * sizeof(*insns));
	struct bpf_func_info fi[VC_MAX_FUNCS];
	uint32_t starts[VC_MAX_FUNCS], nfuncs = vc_funcs(c, starts);
	struct caps saved, dropped;
	union bpf_attr a;

	if (!insns)
		return -1;
	memcpy(insns, c->insns, c->len * sizeof(*insns));
	for (int i = 0; i < VC_MAX_MAPS; i++) {
		if (!c->maps[i].type)
			continue;
		fds[i] = create_map(&c->maps[i]);
		if (fds[i] < 0) {
			ret = -1;
			goto out;
		}
	}
	for (size_t i = 0; i + 1 < c->len; i++)
		if (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    (insns[i].src_reg == BPF_PSEUDO_MAP_FD ||
		     insns[i].src_reg == BPF_PSEUDO_MAP_VALUE)) {
			int idx = insns[i].imm;

			insns[i].imm = idx >= 0 && idx < VC_MAX_MAPS && fds[idx] >= 0 ? fds[idx]
										 : 1000000;
			i++;
		}
	memset(&a, 0, sizeof(a));
	a.prog_type = c->prog_type;
	a.insn_cnt = (uint32_t)c->len;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.license = (uint64_t)(uintptr_t)(c->non_gpl ? "MIT" : "GPL");
	a.log_level = level;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = log_size;
	a.prog_flags = c->prog_flags;
	a.expected_attach_type = c->attach;
	if (c->btf) {
		btf_fd = load_func_btf(nfuncs, c->global_funcs);
		if (btf_fd < 0) {
			ret = -1;
			goto out;
		}
		for (uint32_t i = 0; i < nfuncs; i++)
			fi[i] = (struct bpf_func_info){ .insn_off = starts[i], .type_id = 3 + i };
		a.prog_btf_fd = (uint32_t)btf_fd;
		a.func_info = (uint64_t)(uintptr_t)fi;
		a.func_info_cnt = nfuncs;
		a.func_info_rec_size = sizeof(fi[0]);
	}
	log[0] = 0;
	caps_get(&saved);
	dropped = saved;
	/* the maps were created with every capability, as a loader's would be */
	if (c->priv != BRT_PRIV_ROOT) {
		cap_drop(&dropped, CAP_SYS_ADMIN);
		cap_drop(&dropped, CAP_PERFMON);
		if (c->priv == BRT_PRIV_UNPRIV)
			cap_drop(&dropped, CAP_BPF);
		caps_set(&dropped);
	}
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	o->err = fd < 0 ? errno : 0;
	o->processed = vc_processed(log);
	if (vc_log2(c))
		vc_save_log("kernel", log);
	if (c->priv != BRT_PRIV_ROOT)
		caps_set(&saved);
	if (fd >= 0)
		close(fd);
	o->msg[0] = 0;
	if (o->err)
		vc_first_error(log, o->msg, sizeof(o->msg));
out:
	if (btf_fd >= 0)
		close(btf_fd);
	for (int i = 0; i < VC_MAX_MAPS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(insns);
	return ret;
}

/* At level 1 (2 for VC_LOG2's case, whose log is saved) */
static inline int run_kernel(const struct vcase *c, struct vc_outcome *o)
{
	static char log[VC_LOG_SIZE];

	return vc_run_kernel_log(c, o, vc_log2(c) ? 2 : 1, log, VC_LOG_SIZE);
}

#endif
