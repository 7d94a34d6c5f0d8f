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

#include "bpfrt.h"
#include "harness.h"
#define TRANSCRIPT_SIZE (1 << 16)
#include "transcript.h"
#include "storage_oracle.h"
#include "verifier/cases/case.h"

#define SS BPF_MAP_TYPE_SK_STORAGE

static void creates(sys_fn sys, struct transcript *t)
{
	static const struct {
		const char *what;
		uint32_t type, key, value, max, flags, key_id, value_id;
	} c[] = {
		{ "value 70000", SS, 4, 70000, 0, BPF_F_NO_PREALLOC, 1, 3 },
		{ "sockmap with BTF", BPF_MAP_TYPE_SOCKMAP, 4, 4, 4, 0, 1, 1 },
		{ "sockhash with BTF", BPF_MAP_TYPE_SOCKHASH, 4, 8, 4, 0, 1, 4 },
	};

	storage_creates(sys, t, SS, "");
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int fd = storage_create(sys, c[i].type, c[i].key, c[i].value, c[i].max,
					c[i].flags, c[i].key_id, c[i].value_id);

		say(t, "create %s: %d\n", c[i].what, fd < 0 ? fd : 0);
		if (fd >= 0)
			close(fd);
	}
}

static void elements(sys_fn sys, struct transcript *t)
{
	int fd = storage_map(sys, SS);
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
#define LDMAP(r, fd) I(BPF_LD | BPF_IMM | BPF_DW, r, BPF_PSEUDO_MAP_FD, 0, fd), I(0, 0, 0, 0, 0)
#define P(what, type, at, ...)                                                            \
	do {                                                                              \
		const struct bpf_insn p_[] = { __VA_ARGS__ };                             \
		load_verdict(sys, t, what, type, at, p_, sizeof(p_) / sizeof(p_[0]));     \
	} while (0)
/* tc: r2 = skb->sk, NULL: return 0 */
#define SK_OF_SKB LDX(BPF_DW, 2, 1, 168), JIMM(BPF_JNE, 2, 0, 2), MOV64_IMM(0, 0), EXIT()

static void programs(sys_fn sys, struct transcript *t)
{
	int ss = storage_map(sys, SS);
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
	static const script_fn parts[] = { script, NULL };

	if (geteuid() != 0)
		T_SKIP("needs root for the kernel side");
	if (transcript_run("skstorage", parts, &kt, &bt))
		return 1;
	transcript_verdict("sk_storage oracle", kt.says, bt.says, &kt, &bt, 40);
	return t_done();
}
