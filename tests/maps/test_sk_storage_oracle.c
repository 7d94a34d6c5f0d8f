/* test_sk_storage_oracle.c - socket storage maps (src/maps/sk_storage.c) against the
 * kernel: one script on the kernel's bpf() and on bpfrt_bpf(), a line per step, equal
 * line by line:
 *   - MAP_CREATE: BTF required (an int key), BPF_F_NO_PREALLOC required, max_entries 0,
 *     key 4, the value size limit, other flags; sockmaps refusing BTF;
 *   - element commands keyed by socket fds (a file, a closed fd, flags, values kept per
 *     socket, delete, get_next_key);
 *   - programs: bpf_sk_storage_get/delete per program type, the map <-> helper rules,
 *     the value argument, NULL checks.
 * Root only (the kernel side); otherwise skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/btf.h>

#include "bpfrt.h"
#include "harness.h"
#define TRANSCRIPT_SIZE (1 << 16)
#include "transcript.h"
#include "verifier/cases/case.h"

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (vlen))

/* [1] int, [2] u8 (unsigned char), [3] u8[nelems], [4] long (8 bytes) */
static int load_btf(sys_fn sys, uint32_t nelems)
{
	static const char strs[] = "\0int\0char\0long";
	const uint32_t types[] = {
		1, INFO(BTF_KIND_INT, 0), 4, (BTF_INT_SIGNED << 24) | 32,
		5, INFO(BTF_KIND_INT, 0), 1, 8,
		0, INFO(BTF_KIND_ARRAY, 0), 0, 2, 1, nelems,
		10, INFO(BTF_KIND_INT, 0), 8, (BTF_INT_SIGNED << 24) | 64,
	};
	unsigned char b[256];
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(h), .type_len = sizeof(types),
				.str_off = sizeof(types), .str_len = sizeof(strs) };
	union bpf_attr a;
	int fd;

	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), types, sizeof(types));
	memcpy(b + sizeof(h) + sizeof(types), strs, sizeof(strs));
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)b;
	a.btf_size = (uint32_t)(sizeof(h) + sizeof(types) + sizeof(strs));
	fd = sys(BPF_BTF_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

#define SS BPF_MAP_TYPE_SK_STORAGE

/* a map with value_size value, typed u8[value] (or long when value is 8 and key_id 4) */
static int create(sys_fn sys, uint32_t type, uint32_t key, uint32_t value, uint32_t max,
		  uint32_t flags, uint32_t key_id, uint32_t value_id)
{
	int btf = load_btf(sys, value), fd;
	union bpf_attr a;

	if (btf < 0)
		return btf;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	a.btf_fd = (uint32_t)btf;
	a.btf_key_type_id = key_id;
	a.btf_value_type_id = value_id;
	fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
	fd = fd < 0 ? -errno : fd;
	close(btf);
	return fd;
}

static void creates(sys_fn sys, struct transcript *t)
{
	static const struct {
		const char *what;
		uint32_t type, key, value, max, flags, key_id, value_id;
	} c[] = {
		{ "ok", SS, 4, 16, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "no BTF", SS, 4, 16, 0, BPF_F_NO_PREALLOC, 0, 0 },
		{ "preallocated", SS, 4, 16, 0, 0, 1, 3 },
		{ "max_entries 1", SS, 4, 16, 1, BPF_F_NO_PREALLOC, 1, 3 },
		{ "key 8", SS, 8, 16, 0, BPF_F_NO_PREALLOC, 4, 3 },
		{ "key a char array", SS, 4, 4, 0, BPF_F_NO_PREALLOC, 3, 3 },
		{ "clone", SS, 4, 16, 0, BPF_F_NO_PREALLOC | (1U << 9), 1, 3 },
		{ "rdonly_prog", SS, 4, 16, 0, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG, 1, 3 },
		{ "numa", SS, 4, 16, 0, BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE, 1, 3 },
		{ "value 65407", SS, 4, 65407, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "value 65408", SS, 4, 65408, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "value 70000", SS, 4, 70000, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "value of another size", SS, 4, 16, 0, BPF_F_NO_PREALLOC, 1, 1 },
		{ "sockmap with BTF", BPF_MAP_TYPE_SOCKMAP, 4, 4, 4, 0, 1, 1 },
		{ "sockhash with BTF", BPF_MAP_TYPE_SOCKHASH, 4, 8, 4, 0, 1, 4 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int fd = create(sys, c[i].type, c[i].key, c[i].value, c[i].max, c[i].flags,
				c[i].key_id, c[i].value_id);

		say(t, "create %s: %d\n", c[i].what, fd < 0 ? fd : 0);
		if (fd >= 0)
			close(fd);
	}
}

static void elements(sys_fn sys, struct transcript *t)
{
	int fd = create(sys, SS, 4, 16, 0, BPF_F_NO_PREALLOC, 1, 3);
	int s1 = socket(AF_INET, SOCK_DGRAM, 0), s2 = socket(AF_UNIX, SOCK_STREAM, 0);
	int file = open("/dev/null", O_RDONLY), bad = 9999;
	unsigned char v[16], out[16];
	int next;

	if (fd < 0 || s1 < 0 || s2 < 0 || file < 0) {
		say(t, "elements: %d %d %d %d\n", fd, s1, s2, file);
		goto out;
	}
	memset(v, 0x11, sizeof(v));
	say(t, "lookup none: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &s1, out, 0));
	say(t, "update exist: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &s1, v, BPF_EXIST));
	say(t, "update noexist: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &s1, v, BPF_NOEXIST));
	say(t, "update noexist again: %d\n",
	    elem(sys, BPF_MAP_UPDATE_ELEM, fd, &s1, v, BPF_NOEXIST));
	v[0] = 0x22;
	say(t, "update exist: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &s1, v, BPF_EXIST));
	v[0] = 0x33;
	say(t, "update unix: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &s2, v, BPF_ANY));
	memset(out, 0, sizeof(out));
	next = elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &s1, out, 0);
	say(t, "lookup udp: %d %02x %02x\n", next, out[0], out[15]);
	memset(out, 0, sizeof(out));
	next = elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &s2, out, 0);
	say(t, "lookup unix: %d %02x %02x\n", next, out[0], out[15]);
	for (uint64_t f = 3; f <= 5; f++)
		say(t, "update flags %llu: %d\n", (unsigned long long)f,
		    elem(sys, BPF_MAP_UPDATE_ELEM, fd, &s1, v, f));
	say(t, "update file: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &file, v, 0));
	say(t, "update bad fd: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &bad, v, 0));
	say(t, "update bad fd flags 9: %d\n", elem(sys, BPF_MAP_UPDATE_ELEM, fd, &bad, v, 9));
	say(t, "lookup file: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &file, out, 0));
	say(t, "lookup F_LOCK: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &s1, out, BPF_F_LOCK));
	say(t, "get_next_key NULL: %d\n", elem(sys, BPF_MAP_GET_NEXT_KEY, fd, NULL, &next, 0));
	say(t, "get_next_key: %d\n", elem(sys, BPF_MAP_GET_NEXT_KEY, fd, &s1, &next, 0));
	say(t, "delete udp: %d\n", elem(sys, BPF_MAP_DELETE_ELEM, fd, &s1, NULL, 0));
	say(t, "delete udp again: %d\n", elem(sys, BPF_MAP_DELETE_ELEM, fd, &s1, NULL, 0));
	say(t, "delete file: %d\n", elem(sys, BPF_MAP_DELETE_ELEM, fd, &file, NULL, 0));
	say(t, "lookup udp: %d\n", elem(sys, BPF_MAP_LOOKUP_ELEM, fd, &s1, out, 0));
	say(t, "lookup_and_delete unix: %d\n",
	    elem(sys, BPF_MAP_LOOKUP_AND_DELETE_ELEM, fd, &s2, out, 0));
out:
	if (fd >= 0)
		close(fd);
	close(s1);
	close(s2);
	close(file);
}

/* ---- programs --------------------------------------------------------------------------- */
static void load(sys_fn sys, struct transcript *t, const char *what, uint32_t type,
		 uint32_t attach, const struct bpf_insn *insns, size_t n)
{
	static char log[1 << 16];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = 0;
	fd = sys(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0) {
		const char *line = log, *p;

		for (p = log; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
			if (strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
			    strncmp(p, "stack depth", 11) && *p != '\n')
				line = p;
		say(t, "%s: load %d %.*s\n", what, -errno, (int)strcspn(line, "\n"), line);
		return;
	}
	say(t, "%s: ok\n", what);
	close(fd);
}

#define LDMAP(r, fd) I(BPF_LD | BPF_IMM | BPF_DW, r, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)
#define P(what, type, at, ...)                                                            \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                             \
		load(sys, t, what, type, at, p_, sizeof(p_) / sizeof(p_[0]));             \
	} while (0)
/* tc: r2 = skb->sk, NULL: return 0 */
#define SK_OF_SKB LDX(BPF_DW, 2, 1, 168), JIMM(BPF_JNE, 2, 0, 2), MOV64_IMM(0, 0), EXIT()

static void programs(sys_fn sys, struct transcript *t)
{
	int ss = create(sys, SS, 4, 16, 0, BPF_F_NO_PREALLOC, 1, 3);
	int arr;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 16;
	a.max_entries = 1;
	arr = sys(BPF_MAP_CREATE, &a, sizeof(a));
	if (ss < 0 || arr < 0) {
		say(t, "programs: create %d %d\n", ss, arr);
		return;
	}
	P("tc get, no value", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB, LDMAP(1, ss),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get),
	  JIMM(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 8), MOV64_IMM(0, 0), EXIT());
	P("tc get, read past the value", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB, LDMAP(1, ss),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get),
	  JIMM(BPF_JEQ, 0, 0, 1), LDX(BPF_DW, 0, 0, 16), MOV64_IMM(0, 0), EXIT());
	P("tc get unchecked", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB, LDMAP(1, ss),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get),
	  LDX(BPF_DW, 0, 0, 0), MOV64_IMM(0, 0), EXIT());
	P("tc get with a stack value", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB, ST(BPF_DW, 10, -8, 0),
	  ST(BPF_DW, 10, -16, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -16), LDMAP(1, ss),
	  MOV64_IMM(4, 1), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 0), EXIT());
	P("tc get with a short stack value", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB,
	  ST(BPF_DW, 10, -8, 0), MOV64_REG(3, 10), ALU64_IMM(BPF_ADD, 3, -8), LDMAP(1, ss),
	  MOV64_IMM(4, 1), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 0), EXIT());
	P("tc get of an unchecked sk", BPF_PROG_TYPE_SCHED_CLS, 0, LDX(BPF_DW, 2, 1, 168),
	  LDMAP(1, ss), MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get),
	  MOV64_IMM(0, 0), EXIT());
	P("tc get of the ctx", BPF_PROG_TYPE_SCHED_CLS, 0, MOV64_REG(2, 1), LDMAP(1, ss),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 0),
	  EXIT());
	P("tc delete", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB, LDMAP(1, ss),
	  CALL(BPF_FUNC_sk_storage_delete), MOV64_IMM(0, 0), EXIT());
	P("tc get on an array", BPF_PROG_TYPE_SCHED_CLS, 0, SK_OF_SKB, LDMAP(1, arr),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 0),
	  EXIT());
	P("tc lookup on sk_storage", BPF_PROG_TYPE_SCHED_CLS, 0, ST(BPF_W, 10, -4, 0),
	  MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), LDMAP(1, ss),
	  CALL(BPF_FUNC_map_lookup_elem), MOV64_IMM(0, 0), EXIT());
	P("xdp get", BPF_PROG_TYPE_XDP, 0, MOV64_IMM(2, 0), LDMAP(1, ss), MOV64_IMM(3, 0),
	  MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 0), EXIT());
	P("cgroup_skb get", BPF_PROG_TYPE_CGROUP_SKB, 0, SK_OF_SKB, LDMAP(1, ss),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 1),
	  EXIT());
	P("cgroup_sock get of ctx", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE,
	  MOV64_REG(2, 1), LDMAP(1, ss), MOV64_IMM(3, 0), MOV64_IMM(4, 0),
	  CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 1), EXIT());
	P("cgroup_sock delete", BPF_PROG_TYPE_CGROUP_SOCK, BPF_CGROUP_INET_SOCK_CREATE,
	  MOV64_REG(2, 1), LDMAP(1, ss), CALL(BPF_FUNC_sk_storage_delete), MOV64_IMM(0, 1),
	  EXIT());
	P("sock_ops get", BPF_PROG_TYPE_SOCK_OPS, 0, LDX(BPF_DW, 2, 1, 184),
	  JIMM(BPF_JNE, 2, 0, 2), MOV64_IMM(0, 1), EXIT(), LDMAP(1, ss), MOV64_IMM(3, 0),
	  MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 1), EXIT());
	P("sock_addr get", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT,
	  LDX(BPF_DW, 2, 1, 64), LDMAP(1, ss), MOV64_IMM(3, 0), MOV64_IMM(4, 0),
	  CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 1), EXIT());
	P("sk_skb get", BPF_PROG_TYPE_SK_SKB, BPF_SK_SKB_STREAM_VERDICT, SK_OF_SKB, LDMAP(1, ss),
	  MOV64_IMM(3, 0), MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 1),
	  EXIT());
	P("kprobe get", BPF_PROG_TYPE_KPROBE, 0, MOV64_IMM(2, 0), LDMAP(1, ss), MOV64_IMM(3, 0),
	  MOV64_IMM(4, 0), CALL(BPF_FUNC_sk_storage_get), MOV64_IMM(0, 0), EXIT());
	close(ss);
	close(arr);
}

static void script(sys_fn sys, struct transcript *t)
{
	creates(sys, t);
	elements(sys, t);
	programs(sys, t);
}

static struct transcript kt, bt;

int main(void)
{
	char tmpdir[] = "/tmp/bpfrt-skstorage-XXXXXX";
	const char *k, *b;
	unsigned line = 1, diffs = 0;

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	if (!mkdtemp(tmpdir))
		return 1;
	setenv("BPFRT_FS", tmpdir, 1);
	script(kernel_bpf, &kt);
	script(bpfrt_bpf, &bt);
	T_EQ_INT(kt.says, bt.says);
	for (k = kt.text, b = bt.text; *k || *b; line++) {
		size_t kn = strcspn(k, "\n"), bn = strcspn(b, "\n");

		if (kn != bn || memcmp(k, b, kn)) {
			if (diffs++ < 40)
				printf("line %u:\n  kernel: %.*s\n  bpfrt:  %.*s\n", line, (int)kn, k,
				       (int)bn, b);
		}
		k += kn + (k[kn] == '\n');
		b += bn + (b[bn] == '\n');
	}
	if (getenv("BPFRT_SHOW"))
		fputs(kt.text, stdout);
	printf("sk_storage oracle: %u steps each side, %u lines differ\n", kt.says, diffs);
	T_EQ_INT(0, diffs);
	rmdir(tmpdir);
	return t_done();
}
