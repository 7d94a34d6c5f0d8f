/* test_struct_ops_oracle.c - BPF_PROG_TYPE_STRUCT_OPS programs (verifier/btf_ctx.c's
 * check_struct_ops(), btf/struct_ops.def) against the kernel: the same instructions with
 * attach_btf_id naming a registered struct of operations (tcp_congestion_ops, bpf_dummy_ops)
 * and expected_attach_type its member index load or fail alike through bpf(2) and
 * bpfrt_bpf(), with the same errno and a line both logs hold: members that are no function
 * or have no stub, the arguments typed by the member's prototype (struct sock promoted to
 * tcp_sock for congestion controls, the dummy's "__nullable" state), the writes each
 * struct's btf_struct_access allows, and returns of void members.  Then
 * BPF_MAP_TYPE_STRUCT_OPS maps (maps/struct_ops.c, api/map_cmds.c): MAP_CREATE's errno for
 * good and bad attributes (each side with a BTF of its own loaded for btf_fd) and the
 * element commands of an unregistered map; no update that the kernel would accept is
 * made (it would register a congestion control on the host).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "harness.h"

static const struct brt_btf *vmlinux;

/* byte range of member name in struct id or a struct nested in it, -1 when none */
static int find_off(uint32_t id, const char *name, int base, int depth)
{
	const struct btf_type *t = brt_btf_type(vmlinux, brt_btf_skip_mods(vmlinux, id));
	const struct btf_member *m;

	if (!t || depth > 8 ||
	    (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT && BTF_INFO_KIND(t->info) != BTF_KIND_UNION))
		return -1;
	m = (const struct btf_member *)(t + 1);
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < BTF_INFO_VLEN(t->info); i++) {
			uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
								 : m[i].offset;
			const char *n = brt_btf_str(vmlinux, m[i].name_off);
			int r;

			if (!pass && n && !strcmp(n, name))
				return base + (int)bits / 8;
			if (pass && (r = find_off(m[i].type, name, base + (int)bits / 8,
						  depth + 1)) >= 0)
				return r;
		}
	return -1;
}

static int member_idx(const char *sname, const char *member)
{
	int id = brt_btf_find(vmlinux, sname, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	const struct btf_member *m = t ? (const struct btf_member *)(t + 1) : NULL;

	for (uint32_t i = 0; t && i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(brt_btf_str(vmlinux, m[i].name_off), member))
			return (int)i;
	return -1;
}

/* the type of member name of struct sname (0: none) */
static uint32_t member_type(const char *sname, const char *member)
{
	int id = brt_btf_find(vmlinux, sname, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? brt_btf_type(vmlinux, (uint32_t)id) : NULL;
	const struct btf_member *m = t ? (const struct btf_member *)(t + 1) : NULL;

	for (uint32_t i = 0; t && i < BTF_INFO_VLEN(t->info); i++)
		if (!strcmp(brt_btf_str(vmlinux, m[i].name_off), member))
			return m[i].type;
	return 0;
}

/* "@name" becomes the offset of name in tcp_sock ("@ack_pending": icsk_ack.pending) */
static char *expand(const char *text)
{
	char *out = malloc(strlen(text) * 2 + 64), *o = out;
	int tcp = brt_btf_find(vmlinux, "tcp_sock", BTF_KIND_STRUCT);

	while (*text) {
		if (*text == '@') {
			char name[64];
			size_t n = strspn(text + 1, "abcdefghijklmnopqrstuvwxyz_0123456789");
			int off;

			snprintf(name, sizeof(name), "%.*s", (int)n, text + 1);
			if (!strcmp(name, "ack_pending"))
				off = find_off((uint32_t)tcp, "icsk_ack", 0, 0) +
				      find_off(member_type("inet_connection_sock", "icsk_ack"),
					       "pending", 0, 0);
			else
				off = find_off((uint32_t)tcp, name, 0, 0);
			o += sprintf(o, "%d", off);
			text += 1 + n;
		} else {
			*o++ = *text++;
		}
	}
	*o = 0;
	return out;
}

struct scase {
	const char *name;
	const char *st;     /* struct name; attach_btf_id its id ("value:" prefix: the value type) */
	const char *member; /* its index is expected_attach_type; "#N": index N */
	const char *lic;
	uint32_t flags;
	const char *text;
	const char *msg; /* a line both logs must contain, NULL: none checked */
};

#define CA "tcp_congestion_ops"
#define DUMMY "bpf_dummy_ops"
#define SK "ldxdw %r1, [%r1+0]\n"

static const struct scase cases[] = {
	{ "ssthresh reads snd_ssthresh", CA, "ssthresh", "GPL", 0,
	  SK "ldxw %r0, [%r1+@snd_ssthresh]\nexit\n", NULL },
	{ "undo_cwnd reads snd_cwnd", CA, "undo_cwnd", "GPL", 0,
	  SK "ldxw %r0, [%r1+@snd_cwnd]\nexit\n", NULL },
	{ "init writes sk_pacing_status, no r0", CA, "init", "GPL", 0,
	  SK "stw [%r1+@sk_pacing_status], 1\nexit\n", NULL },
	{ "cong_control writes sk_pacing_rate", CA, "cong_control", "GPL", 0,
	  SK "mov %r2, 1000\nstxdw [%r1+@sk_pacing_rate], %r2\nexit\n", NULL },
	{ "cong_control writes app_limited", CA, "cong_control", "GPL", 0,
	  SK "stw [%r1+@app_limited], 1\nexit\n", NULL },
	{ "cong_avoid writes snd_cwnd, snd_cwnd_cnt, snd_cwnd_stamp", CA, "cong_avoid", "GPL", 0,
	  SK "stw [%r1+@snd_cwnd], 1\nstw [%r1+@snd_cwnd_cnt], 1\n"
	     "stw [%r1+@snd_cwnd_stamp], 1\nstw [%r1+@snd_ssthresh], 1\nexit\n", NULL },
	{ "set_state writes ecn_flags", CA, "set_state", "GPL", 0,
	  SK "stb [%r1+@ecn_flags], 1\nexit\n", NULL },
	{ "init writes icsk_ca_priv inside", CA, "init", "GPL", 0,
	  SK "stdw [%r1+@icsk_ca_priv], 1\nmov %r2, %r1\nadd %r2, 8\nstw [%r2+@icsk_ca_priv], 7\n"
	     "exit\n", NULL },
	{ "cwnd_event writes icsk_ack.pending", CA, "cwnd_event", "GPL", 0,
	  SK "stb [%r1+@ack_pending], 1\nexit\n", NULL },
	{ "snd_cwnd written with 8 bytes", CA, "cong_avoid", "GPL", 0,
	  SK "stdw [%r1+@snd_cwnd], 1\nexit\n", "beyond the member of tcp_sock ended at" },
	{ "snd_ssthresh read, snd_una written", CA, "cong_avoid", "GPL", 0,
	  SK "stw [%r1+@snd_una], 1\nexit\n", "no write support to tcp_sock at off" },
	{ "write through the rate sample", CA, "cong_control", "GPL", 0,
	  "ldxdw %r1, [%r1+24]\nstw [%r1+0], 1\nexit\n", "only read is supported" },
	{ "cong_control reads its rate sample", CA, "cong_control", "GPL", 0,
	  "ldxdw %r1, [%r1+24]\nldxw %r0, [%r1+0]\nexit\n", NULL },
	{ "cong_avoid reads ack and acked", CA, "cong_avoid", "GPL", 0,
	  "ldxw %r0, [%r1+8]\nldxw %r0, [%r1+16]\nexit\n", NULL },
	{ "ssthresh reads a second argument", CA, "ssthresh", "GPL", 0,
	  "ldxdw %r0, [%r1+8]\nexit\n", "doesn't have 2-th argument" },
	{ "ssthresh without r0", CA, "ssthresh", "GPL", 0, "exit\n", "R0 !read_ok" },
	{ "ssthresh returns a pointer", CA, "ssthresh", "GPL", 0, SK "mov %r0, %r1\nexit\n", NULL },
	{ "ssthresh reads past tcp_sock", CA, "ssthresh", "GPL", 0,
	  SK "ldxw %r0, [%r1+8192]\nexit\n", "access beyond struct tcp_sock" },
	{ "ssthresh non-GPL", CA, "ssthresh", "MIT", 0, "mov %r0, 0\nexit\n",
	  "must have a GPL compatible license" },
	{ "get_info has no stub", CA, "get_info", "GPL", 0, "mov %r0, 0\nexit\n",
	  "attach to unsupported member get_info of struct tcp_congestion_ops" },
	{ "name is no function", CA, "name", "GPL", 0, "mov %r0, 0\nexit\n",
	  "attach to invalid member name(@idx" },
	{ "member index past the struct", CA, "#18", "GPL", 0, "mov %r0, 0\nexit\n",
	  "attach to invalid member idx 18 of struct tcp_congestion_ops" },
	{ "member index 1000", CA, "#1000", "GPL", 0, "mov %r0, 0\nexit\n", NULL },
	{ "the value type is no struct of operations", "value:" CA, "ssthresh", "GPL", 0,
	  "mov %r0, 0\nexit\n", "is not a supported struct" },
	{ "sock is not registered", "sock", "#0", "GPL", 0, "mov %r0, 0\nexit\n",
	  "is not a supported struct" },
	{ "sleepable congestion control", CA, "ssthresh", "GPL", BPF_F_SLEEPABLE,
	  SK "ldxw %r0, [%r1+@snd_ssthresh]\nexit\n", NULL },
	{ "dummy test_1 state may be NULL", DUMMY, "test_1", "GPL", 0,
	  "ldxdw %r1, [%r1+0]\nldxw %r0, [%r1+0]\nexit\n", "invalid mem access" },
	{ "dummy test_1 state checked", DUMMY, "test_1", "GPL", 0,
	  "ldxdw %r1, [%r1+0]\nmov %r0, 0\njeq %r1, 0, +2\nldxw %r0, [%r1+0]\nstw [%r1+0], 5\n"
	  "exit\n", NULL },
	{ "dummy test_2 writes its state", DUMMY, "test_2", "GPL", 0,
	  "ldxdw %r2, [%r1+8]\nldxdw %r1, [%r1+0]\nstxw [%r1+0], %r2\nmov %r0, 0\nexit\n",
	  NULL },
	{ "dummy test_2 writes past its state", DUMMY, "test_2", "GPL", 0,
	  "ldxdw %r1, [%r1+0]\nstdw [%r1+0], 1\nmov %r0, 0\nexit\n", "write access at off 0 with size 8" },
	{ "dummy test_2 reads its 5 arguments", DUMMY, "test_2", "GPL", 0,
	  "ldxdw %r0, [%r1+32]\nldxdw %r0, [%r1+24]\nldxdw %r0, [%r1+16]\nexit\n", NULL },
	{ "dummy test_1 sleepable", DUMMY, "test_1", "GPL", BPF_F_SLEEPABLE, "mov %r0, 0\nexit\n",
	  "attach to unsupported member test_1 of struct bpf_dummy_ops" },
	{ "dummy test_sleepable sleepable", DUMMY, "test_sleepable", "GPL", BPF_F_SLEEPABLE,
	  "mov %r0, 0\nexit\n", NULL },
	{ "dummy test_1 without r0", DUMMY, "test_1", "GPL", 0, "exit\n", "R0 !read_ok" },
	/* a congestion control's own helpers (bpf_tcp_ca_get_func_proto(); session 24: the
	 * selftests' bpf_dctcp), which the other structs' programs do not have */
	{ "cwnd_event sends an ACK", CA, "cwnd_event", "GPL", 0,
	  SK "mov %r2, 0\ncall bpf_tcp_send_ack\nexit\n", NULL },
	{ "cwnd_event sends an ACK of a scalar", CA, "cwnd_event", "GPL", 0,
	  "mov %r1, 0\nmov %r2, 0\ncall bpf_tcp_send_ack\nexit\n", "R1 type=scalar expected=" },
	{ "cwnd_event sends an ACK of its context", CA, "cwnd_event", "GPL", 0,
	  "mov %r2, 0\ncall bpf_tcp_send_ack\nexit\n", NULL },
	{ "dummy test_1 sends an ACK", DUMMY, "test_1", "GPL", 0,
	  "mov %r1, 0\nmov %r2, 0\ncall bpf_tcp_send_ack\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_tcp_send_ack#116" },
	{ "init sets a socket option", CA, "init", "GPL", 0,
	  SK "stdw [%r10-8], 0\nmov %r2, 6\nmov %r3, 3\nmov %r4, %r10\nadd %r4, -8\n"
	     "mov %r5, 4\ncall bpf_setsockopt\nexit\n", NULL },
	{ "init reads a socket option", CA, "init", "GPL", 0,
	  SK "mov %r2, 6\nmov %r3, 3\nmov %r4, %r10\nadd %r4, -8\nmov %r5, 4\n"
	     "call bpf_getsockopt\nexit\n", NULL },
	{ "release sets a socket option", CA, "release", "GPL", 0,
	  SK "stdw [%r10-8], 0\nmov %r2, 6\nmov %r3, 3\nmov %r4, %r10\nadd %r4, -8\n"
	     "mov %r5, 4\ncall bpf_setsockopt\nexit\n",
	  "program of this type cannot use helper bpf_setsockopt#49" },
	{ "release reads a socket option", CA, "release", "GPL", 0,
	  SK "mov %r2, 6\nmov %r3, 3\nmov %r4, %r10\nadd %r4, -8\nmov %r5, 4\n"
	     "call bpf_getsockopt\nexit\n",
	  "program of this type cannot use helper bpf_getsockopt#57" },
	{ "dummy test_1 sets a socket option", DUMMY, "test_1", "GPL", 0,
	  "mov %r1, 0\nmov %r2, 6\nmov %r3, 3\nmov %r4, %r10\nadd %r4, -8\nmov %r5, 4\n"
	  "call bpf_setsockopt\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_setsockopt#49" },
	{ "ssthresh reads the coarse clock", CA, "ssthresh", "GPL", 0,
	  "call bpf_ktime_get_coarse_ns\nexit\n", NULL },
	{ "dummy test_1 reads the coarse clock", DUMMY, "test_1", "GPL", 0,
	  "call bpf_ktime_get_coarse_ns\nmov %r0, 0\nexit\n",
	  "program of this type cannot use helper bpf_ktime_get_coarse_ns#160" },
	{ "ssthresh reads the clock", CA, "ssthresh", "GPL", 0, "call bpf_ktime_get_ns\nexit\n",
	  NULL },
	{ "dummy test_1 reads the clock", DUMMY, "test_1", "GPL", 0,
	  "call bpf_ktime_get_ns\nmov %r0, 0\nexit\n", NULL },
	{ "ssthresh sk_storage_get of no map", CA, "ssthresh", "GPL", 0,
	  SK "mov %r2, %r1\nmov %r1, 0\nmov %r3, 0\nmov %r4, 0\ncall bpf_sk_storage_get\n"
	     "mov %r0, 1\nexit\n", "R1 type=scalar expected=map_ptr" },
	{ "dummy test_1 sk_storage_get", DUMMY, "test_1", "GPL", 0,
	  "mov %r1, 0\nmov %r2, 0\nmov %r3, 0\nmov %r4, 0\ncall bpf_sk_storage_get\n"
	  "mov %r0, 0\nexit\n", "program of this type cannot use helper bpf_sk_storage_get#107" },
};

static int load(int kernel, const struct scase *c, char *log, size_t loglen)
{
	const char *st = strncmp(c->st, "value:", 6) ? c->st : c->st + 6;
	struct bpf_insn *insns;
	union bpf_attr a;
	char err[256], vname[96], *text = expand(c->text);
	size_t n;
	int fd, id;

	if (bpfrt_asm(text, "test.s", &insns, &n, err, sizeof(err))) {
		fprintf(stderr, "asm: %s\n", err);
		free(text);
		return -EINVAL;
	}
	free(text);
	snprintf(vname, sizeof(vname), "bpf_struct_ops_%s", st);
	id = brt_btf_find(vmlinux, st != c->st ? vname : st, BTF_KIND_STRUCT);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_STRUCT_OPS;
	a.attach_btf_id = id > 0 ? (uint32_t)id : 0;
	a.expected_attach_type = c->member[0] == '#' ? (uint32_t)atoi(c->member + 1)
						     : (uint32_t)member_idx(st, c->member);
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)c->lic;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = (uint32_t)loglen;
	a.log_level = 1;
	a.prog_flags = c->flags;
	log[0] = 0;
	fd = kernel ? (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a))
		    : bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fd = -errno;
	free(insns);
	return fd;
}

/* a BTF of one int, the program BTF a struct_ops map needs; fd or -errno */
static int load_btf(int kernel)
{
	struct {
		struct btf_header h;
		uint32_t t[4];
		char s[8];
	} b;
	union bpf_attr a;
	int fd;

	memset(&b, 0, sizeof(b));
	b.h.magic = BTF_MAGIC;
	b.h.version = BTF_VERSION;
	b.h.hdr_len = sizeof(b.h);
	b.h.type_len = sizeof(b.t);
	b.h.str_off = sizeof(b.t);
	b.h.str_len = 5;
	memcpy(b.s, "\0int", 5);
	b.t[0] = 1;
	b.t[1] = BTF_KIND_INT << 24;
	b.t[2] = 4;
	b.t[3] = BTF_INT_SIGNED << 24 | 32;
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)&b;
	a.btf_size = sizeof(b.h) + sizeof(b.t) + 5;
	fd = kernel ? (int)syscall(__NR_bpf, BPF_BTF_LOAD, &a, sizeof(a))
		    : bpfrt_bpf(BPF_BTF_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

struct mcase {
	const char *name;
	uint32_t key, value, max, flags, vid_kind, btf, key_type;
	/* vid_kind: 0 the value type, 1 none, 2 the struct itself, 3 an int;
	 * value: 0 the value type's size; btf: 0 the loaded BTF, 1 none (fd 0 unset), 2 a
	 * closed fd, 3 a map fd */
};

static const struct mcase mcases[] = {
	{ "tcp_congestion_ops", 4, 0, 1, 0, 0, 0, 0 },
	{ "with BPF_F_LINK", 4, 0, 1, 1u << 13, 0, 0, 0 },
	{ "key of 8 bytes", 8, 0, 1, 0, 0, 0, 0 },
	{ "2 entries", 4, 0, 2, 0, 0, 0, 0 },
	{ "BPF_F_NO_PREALLOC", 4, 0, 1, BPF_F_NO_PREALLOC, 0, 0, 0 },
	{ "no value type", 4, 0, 1, 0, 1, 0, 0 },
	{ "the struct, not its value type", 4, 0, 1, 0, 2, 0, 0 },
	{ "an int as the value type", 4, 0, 1, 0, 3, 0, 0 },
	{ "value one byte short", 4, 1, 1, 0, 0, 0, 0 },
	{ "a key type with the value type", 4, 0, 1, 0, 0, 0, 1 },
	{ "a closed BTF fd", 4, 0, 1, 0, 0, 2, 0 },
	{ "a map fd as BTF", 4, 0, 1, 0, 0, 3, 0 },
};

static int mcreate(int kernel, const struct mcase *c, int btf, int other)
{
	int vid = brt_btf_find(vmlinux, "bpf_struct_ops_" CA, BTF_KIND_STRUCT);
	const struct btf_type *vt = brt_btf_type(vmlinux, (uint32_t)vid);
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_STRUCT_OPS;
	a.key_size = c->key;
	a.value_size = vt->size - c->value;
	a.max_entries = c->max;
	a.map_flags = c->flags;
	a.btf_vmlinux_value_type_id = c->vid_kind == 0 ? (uint32_t)vid
				      : c->vid_kind == 2
					      ? (uint32_t)brt_btf_find(vmlinux, CA, BTF_KIND_STRUCT)
				      : c->vid_kind == 3 ? (uint32_t)brt_btf_find(vmlinux, "int",
										   BTF_KIND_INT)
							 : 0;
	a.btf_key_type_id = c->key_type;
	a.btf_fd = c->btf == 0 ? (uint32_t)btf : c->btf == 2 ? 9999 : c->btf == 3 ? (uint32_t)other : 0;
	fd = kernel ? (int)syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof(a))
		    : bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* an element command on a struct_ops map; flags and key as given, the value zero but
 * for its common header's first byte (state) when state is set */
static int melem(int kernel, int cmd, int fd, uint32_t key, uint64_t flags, int state)
{
	static unsigned char value[4096];
	uint32_t next = 7;
	union bpf_attr a;
	int ret;

	memset(value, 0, sizeof(value));
	value[0] = (unsigned char)state;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = cmd == BPF_MAP_GET_NEXT_KEY && key == 99 ? 0 : (uint64_t)(uintptr_t)&key;
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		a.next_key = (uint64_t)(uintptr_t)&next;
	else if (cmd != BPF_MAP_DELETE_ELEM)
		a.value = (uint64_t)(uintptr_t)value;
	a.flags = flags;
	ret = kernel ? (int)syscall(__NR_bpf, cmd, &a, sizeof(a)) : bpfrt_bpf(cmd, &a, sizeof(a));
	if (ret < 0)
		return -errno;
	/* what a lookup or get_next_key gave */
	if (cmd == BPF_MAP_GET_NEXT_KEY)
		return (int)next;
	for (size_t i = 0; cmd == BPF_MAP_LOOKUP_ELEM && i < sizeof(value); i++)
		if (value[i])
			return 1000 + (int)i;
	return 0;
}

static void map_cases(void)
{
	int btf[2] = { load_btf(1), load_btf(0) }, other[2];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	other[0] = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	other[1] = bpfrt_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	T_CASE("BTF and array maps for the map cases");
	T_ASSERT(btf[0] >= 0 && btf[1] >= 0 && other[0] >= 0 && other[1] >= 0);
	for (size_t i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
		int k = mcreate(1, &mcases[i], btf[0], other[0]);
		int b = mcreate(0, &mcases[i], btf[1], other[1]);

		T_CASE(mcases[i].name);
		if (getenv("STRUCT_OPS_ORACLE_SHOW"))
			printf("map %s: bpfrt %d kernel %d\n", mcases[i].name, b < 0 ? b : 0,
			       k < 0 ? k : 0);
		T_EQ_INT(k < 0 ? k : 0, b < 0 ? b : 0);
		if (k >= 0 && b >= 0) {
			/* lookup 0 and 1, get_next_key from none and from 0, delete, updates the
			 * kernel refuses before it looks at the members */
			static const struct {
				int cmd;
				uint32_t key;
				uint64_t flags;
				int state;
			} e[] = {
				{ BPF_MAP_LOOKUP_ELEM, 0, 0, 0 },    { BPF_MAP_LOOKUP_ELEM, 1, 0, 0 },
				{ BPF_MAP_GET_NEXT_KEY, 99, 0, 0 },  { BPF_MAP_GET_NEXT_KEY, 0, 0, 0 },
				{ BPF_MAP_DELETE_ELEM, 0, 0, 0 },    { BPF_MAP_UPDATE_ELEM, 0, 1, 0 },
				{ BPF_MAP_UPDATE_ELEM, 1, 0, 0 },    { BPF_MAP_UPDATE_ELEM, 0, 0, 1 },
			};

			for (size_t j = 0; j < sizeof(e) / sizeof(e[0]); j++) {
				int ke = melem(1, e[j].cmd, k, e[j].key, e[j].flags, e[j].state);
				int be = melem(0, e[j].cmd, b, e[j].key, e[j].flags, e[j].state);

				if (getenv("STRUCT_OPS_ORACLE_SHOW"))
					printf("  cmd %d key %u: bpfrt %d kernel %d\n", e[j].cmd,
					       e[j].key, be, ke);
				T_EQ_INT(ke, be);
			}
		}
		if (k >= 0)
			close(k);
		if (b >= 0)
			close(b);
	}
	for (int i = 0; i < 2; i++) {
		close(btf[i]);
		close(other[i]);
	}
}

/* BPF_PROG_TEST_RUN of struct_ops programs (api/test_run.c's run_struct_ops(), the
 * kernel's bpf_struct_ops_test_run()): bpf_dummy_ops members run with their arguments
 * from ctx_in and the state the first one points to; a congestion control's program does
 * not run.  Per program and input: errno, retval, the state after the run, and that the
 * attributes the kernel does not write (duration, data_size_out, ctx_size_out) are left. */
struct rprog {
	const char *name, *st, *member;
	uint32_t flags;
	const char *text;
};

static const struct rprog rprogs[] = {
	{ "test_1: state or 7, state set to 5", DUMMY, "test_1", 0,
	  "ldxdw %r1, [%r1+0]\nmov %r0, 7\njeq %r1, 0, +2\nldxw %r0, [%r1+0]\nstw [%r1+0], 5\n"
	  "exit\n" },
	{ "test_2: a1 into the state, a1 + a2 + a3 + a4", DUMMY, "test_2", 0,
	  "ldxdw %r2, [%r1+8]\nldxdw %r3, [%r1+16]\nldxdw %r4, [%r1+24]\nldxdw %r5, [%r1+32]\n"
	  "ldxdw %r1, [%r1+0]\nstxw [%r1+0], %r2\nmov %r0, %r2\nadd %r0, %r3\nadd %r0, %r4\n"
	  "add %r0, %r5\nexit\n" },
	{ "test_2: a1's high half", DUMMY, "test_2", 0, "ldxdw %r0, [%r1+8]\nrsh %r0, 32\nexit\n" },
	{ "test_2: a2's high half", DUMMY, "test_2", 0, "ldxdw %r0, [%r1+16]\nrsh %r0, 32\nexit\n" },
	{ "test_2: a3's high half", DUMMY, "test_2", 0, "ldxdw %r0, [%r1+24]\nrsh %r0, 32\nexit\n" },
	{ "test_2: a4's high half", DUMMY, "test_2", 0, "ldxdw %r0, [%r1+32]\nrsh %r0, 32\nexit\n" },
	{ "test_2: the state's value", DUMMY, "test_2", 0,
	  "ldxdw %r1, [%r1+0]\nldxw %r0, [%r1+0]\nexit\n" },
	{ "test_sleepable: state + 1", DUMMY, "test_sleepable", BPF_F_SLEEPABLE,
	  "ldxdw %r1, [%r1+0]\nldxw %r0, [%r1+0]\nadd %r0, 1\nstxw [%r1+0], %r0\nexit\n" },
	{ "congestion control ssthresh", CA, "ssthresh", 0, "mov %r0, 3\nexit\n" },
};

struct rin {
	const char *name;
	int nargs;        /* ctx_size_in = 8 * nargs; -1: no ctx_in */
	int state;        /* args[0]: 0 NULL, 1 the state, 2 a bad pointer */
	int bad_ctx;      /* ctx_in a bad pointer */
	int extra;        /* data_in, data_out, repeat, flags, cpu set too */
};

static const struct rin rins[] = {
	{ "1 argument, state", 1, 1, 0, 0 },
	{ "1 argument, NULL", 1, 0, 0, 0 },
	{ "5 arguments, state", 5, 1, 0, 0 },
	{ "5 arguments, NULL", 5, 0, 0, 0 },
	{ "5 arguments, a bad state pointer", 5, 2, 0, 0 },
	{ "1 argument, a bad state pointer", 1, 2, 0, 0 },
	{ "2 arguments", 2, 1, 0, 0 },
	{ "6 arguments", 6, 1, 0, 0 },
	{ "no ctx_in", -1, 0, 0, 0 },
	{ "ctx_in a bad pointer", 1, 1, 1, 0 },
	{ "ctx_in a bad pointer, 5", 5, 1, 1, 0 },
	{ "1 argument with data, repeat, flags, cpu", 1, 1, 0, 1 },
	{ "5 arguments with data, repeat, flags, cpu", 5, 1, 0, 1 },
};

struct rout {
	int err;
	uint32_t retval, duration, data_size_out, ctx_size_out;
	int32_t state;
};

static struct rout trun(int kernel, int fd, const struct rin *in)
{
	static unsigned char data[64], out[64];
	uint64_t args[6] = { 0, 0xfffffffe80000001ull, 0x123456789abcdef0ull,
			     0xffffffffffffff80ull, 0x8000000000000001ull, 6 };
	int32_t state = 0x11223344;
	union bpf_attr a;
	struct rout r;

	args[0] = in->state == 1 ? (uint64_t)(uintptr_t)&state : in->state == 2 ? 8 : 0;
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	if (in->nargs >= 0) {
		a.test.ctx_in = in->bad_ctx ? 8 : (uint64_t)(uintptr_t)args;
		a.test.ctx_size_in = (uint32_t)in->nargs * 8u;
	}
	a.test.duration = 0x1234;
	a.test.data_size_out = 7;
	if (in->extra) {
		a.test.data_in = (uint64_t)(uintptr_t)data;
		a.test.data_size_in = sizeof(data);
		a.test.data_out = (uint64_t)(uintptr_t)out;
		a.test.data_size_out = sizeof(out);
		a.test.repeat = 3;
		a.test.flags = 1;
		a.test.cpu = 1;
	}
	r.err = (kernel ? (int)syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a))
			: bpfrt_bpf(BPF_PROG_TEST_RUN, &a, sizeof(a))) ? errno : 0;
	r.retval = a.test.retval;
	r.duration = a.test.duration;
	r.data_size_out = a.test.data_size_out;
	r.ctx_size_out = a.test.ctx_size_out;
	r.state = state;
	return r;
}

static int runs_compared;

static void run_cases(void)
{
	static char log1[65536], log2[65536];

	for (size_t i = 0; i < sizeof(rprogs) / sizeof(rprogs[0]); i++) {
		const struct rprog *p = &rprogs[i];
		struct scase c = { p->name, p->st, p->member, "GPL", p->flags, p->text, NULL };
		int b = load(0, &c, log1, sizeof(log1)), k = load(1, &c, log2, sizeof(log2));

		T_CASE(p->name);
		T_EQ_INT(k < 0 ? k : 0, b < 0 ? b : 0);
		if (k < 0 || b < 0) {
			fprintf(stderr, "%s: load: bpfrt %d kernel %d\n  bpfrt log:\n%s  kernel log:\n%s",
				p->name, b, k, log1, log2);
			if (k >= 0)
				close(k);
			if (b >= 0)
				close(b);
			continue;
		}
		for (size_t j = 0; j < sizeof(rins) / sizeof(rins[0]); j++) {
			struct rout kr = trun(1, k, &rins[j]), br = trun(0, b, &rins[j]);

			T_CASE(rins[j].name);
			if (getenv("STRUCT_OPS_ORACLE_SHOW") || kr.err != br.err ||
			    kr.retval != br.retval || kr.state != br.state)
				printf("run %s, %s: kernel %d/%#x state %#x | bpfrt %d/%#x state %#x\n",
				       p->name, rins[j].name, kr.err, kr.retval, (unsigned)kr.state,
				       br.err, br.retval, (unsigned)br.state);
			T_EQ_INT(kr.err, br.err);
			T_EQ_INT(kr.retval, br.retval);
			T_EQ_INT(kr.state, br.state);
			T_EQ_INT(kr.duration, br.duration);
			T_EQ_INT(kr.data_size_out, br.data_size_out);
			T_EQ_INT(kr.ctx_size_out, br.ctx_size_out);
			runs_compared++;
		}
		close(k);
		close(b);
	}
}

int main(void)
{
	static char log1[65536], log2[65536];

	if (geteuid() != 0)
		T_SKIP("no kernel bpf() to compare with (needs root)");
	vmlinux = brt_btf_vmlinux();
	if (!vmlinux)
		T_SKIP("no kernel BTF (/sys/kernel/btf/vmlinux)");
	if (brt_btf_find(vmlinux, "bpf_struct_ops_" CA, BTF_KIND_STRUCT) <= 0)
		T_SKIP("the kernel registers no tcp_congestion_ops struct_ops");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *c = &cases[i];
		int a = load(0, c, log1, sizeof(log1)), b = load(1, c, log2, sizeof(log2));

		T_CASE(c->name);
		if (getenv("STRUCT_OPS_ORACLE_SHOW"))
			printf("%s: bpfrt %d kernel %d\n", c->name, a < 0 ? a : 0, b < 0 ? b : 0);
		T_EQ_INT(b < 0 ? b : 0, a < 0 ? a : 0);
		if ((a < 0) != (b < 0) || (a < 0 && a != b) || getenv("STRUCT_OPS_ORACLE_SHOW"))
			fprintf(stderr, "  bpfrt log:\n%s  kernel log:\n%s", log1, log2);
		if (c->msg) {
			T_CONTAINS(c->msg, log1);
			T_CONTAINS(c->msg, log2);
		}
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	map_cases();
	run_cases();
	printf("%d struct_ops test runs compared with the kernel\n", runs_compared);
	return t_done();
}
