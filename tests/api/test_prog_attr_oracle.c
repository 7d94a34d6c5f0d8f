/* test_prog_attr_oracle.c - BPF_PROG_LOAD's fields past this libc's union bpf_attr
 * (Linux 6.18's is 168 bytes, src/api/api.h): fd_array_cnt binds fd_array's maps to the
 * program (the kernel's process_fd_array(): maps or BTF objects, else the load fails with
 * its message and errno), prog_token_fd is read only with BPF_F_TOKEN_FD, a signature is
 * refused with the kernel's errno for one its keys do not verify, bytes past 168 are E2BIG and bytes a command does not read EINVAL.  Each case
 * runs the same attr through bpfrt_bpf() and, as root, syscall(__NR_bpf): the errno, the
 * level-1 log and the program's map list (bpf_prog_info map_ids, as positions in the
 * case's own maps) must be the expected ones on both.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>

#include "harness.h"
#include "api/diff.h"

#define ATTR_SIZE 168 /* Linux 6.18's sizeof(union bpf_attr) */
#define OFF_TOKEN_FD 144
#define OFF_FD_ARRAY_CNT 148
#define OFF_SIGNATURE 152
#define OFF_SIGNATURE_SIZE 160
#define OFF_KEYRING_ID 164
#ifndef BPF_F_TOKEN_FD
#define BPF_F_TOKEN_FD (1u << 16)
#endif
#define NMAPS 66
#define STATS "processed 0 insns (limit 1000000) max_states_per_insn 0 total_states 0 " \
	      "peak_states 0 mark_read 0\n"

union attr {
	union bpf_attr a;
	unsigned char raw[ATTR_SIZE + 8];
};

/* What a case's program is and what its attr says. */
enum fd_kind { FD_MAP, FD_BTF, FD_CLOSED, FD_NOT_BPF, FD_PERF_ARRAY, FD_CG_STORAGE, FD_MIM_LPM };

struct attr_case {
	const char *name;
	uint32_t prog_type;
	uint32_t attach;
	uint32_t flags;
	int use_idx;            /* >= 0: the program looks up fd_array[use_idx] (MAP_IDX) */
	int use_map;            /* >= 0: the program looks up maps[use_map] (MAP_FD) */
	int nfds;               /* fd_array's entries */
	enum fd_kind kinds[4];  /* of fd_array's first entries (the rest: FD_MAP) */
	int fd_map[4];          /* FD_MAP entries: which of the case's maps */
	uint32_t cnt;           /* fd_array_cnt */
	int no_fd_array;        /* fd_array NULL */
	int fault_after;        /* > 0: fd_array's memory ends after this many entries */
	int token;              /* 1: prog_token_fd a map fd, 2: a closed fd */
	int signature;
	int tail_byte;          /* non-zero: byte ATTR_SIZE set, attr passed with 176 bytes */
	int err;                /* expected errno, 0: loads */
	const char *log;        /* the expected whole level-1 log of a refusal, or NULL */
	int nids;               /* a load: its map list, as indexes into the case's maps */
	int ids[4];
};

static const struct attr_case cases[] = {
	{ "fd_array_cnt binds maps the code does not use", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1,
	  -1, 2, { FD_MAP, FD_MAP }, { 0, 1 }, 2, 0, 0, 0, 0, 0, 0, NULL, 2, { 0, 1 } },
	{ "a bound map the code uses by index", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, 1, -1, 2,
	  { FD_MAP, FD_MAP }, { 0, 1 }, 2, 0, 0, 0, 0, 0, 0, NULL, 2, { 0, 1 } },
	{ "bound maps first, then the code's", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, 2, 2,
	  { FD_MAP, FD_MAP }, { 1, 0 }, 2, 0, 0, 0, 0, 0, 0, NULL, 3, { 1, 0, 2 } },
	{ "the same map twice", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, 0, 2, { FD_MAP, FD_MAP },
	  { 0, 0 }, 2, 0, 0, 0, 0, 0, 0, NULL, 1, { 0 } },
	{ "fd_array without fd_array_cnt binds nothing", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1,
	  -1, 2, { FD_MAP, FD_MAP }, { 0, 1 }, 0, 0, 0, 0, 0, 0, 0, NULL, 0, { 0 } },
	{ "a BTF object", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 2, { FD_BTF, FD_MAP },
	  { 0, 1 }, 2, 0, 0, 0, 0, 0, 0, NULL, 1, { 1 } },
	{ "a closed fd", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 2, { FD_MAP, FD_CLOSED },
	  { 0, 0 }, 2, 0, 0, 0, 0, 0, EBADF,
	  "fd 999 is not pointing to valid bpf_map or btf\n" STATS, 0, { 0 } },
	{ "not a bpf fd", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 1, { FD_NOT_BPF }, { 0 }, 1,
	  0, 0, 0, 0, 0, EINVAL, NULL, 0, { 0 } },
	{ "fd_array_cnt too big", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 1, { FD_MAP }, { 0 },
	  0x40000000u, 0, 0, 0, 0, 0, EINVAL, "fd_array_cnt is too big (1073741824)\n" STATS, 0,
	  { 0 } },
	{ "fd_array_cnt without fd_array", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 0, { 0 },
	  { 0 }, 2, 1, 0, 0, 0, 0, EFAULT, STATS, 0, { 0 } },
	{ "fd_array_cnt past fd_array's memory", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 2,
	  { FD_MAP, FD_MAP }, { 0, 1 }, 3, 0, 2, 0, 0, 0, EFAULT, STATS, 0, { 0 } },
	{ "a bad fd past fd_array's memory comes first", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1,
	  -1, 2, { FD_MAP, FD_CLOSED }, { 0, 0 }, 3, 0, 2, 0, 0, 0, EBADF,
	  "fd 999 is not pointing to valid bpf_map or btf\n" STATS, 0, { 0 } },
	{ "65 maps", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 65, { 0 }, { 0, 1, 2, 3 }, 65, 0, 0, 0, 0,
	  0, E2BIG, "The total number of maps per program has reached the limit of 64\n" STATS,
	  0, { 0 } },
	{ "64 maps", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 64, { 0 }, { 0, 1, 2, 3 }, 64, 0, 0, 0, 0,
	  0, 0, NULL, 4, { 0, 1, 2, 3 } },
	{ "sleepable kprobe, a perf event array", BPF_PROG_TYPE_KPROBE, 0, BPF_F_SLEEPABLE, -1,
	  -1, 1, { FD_PERF_ARRAY }, { 0 }, 1, 0, 0, 0, 0, 0, EINVAL,
	  "Sleepable programs can only use array, hash, ringbuf and local storage maps, also as " \
	  "inner maps\n" STATS,
	  0, { 0 } },
	{ "sleepable kprobe, a perf event array in the code", BPF_PROG_TYPE_KPROBE, 0,
	  BPF_F_SLEEPABLE, 0, -1, 1, { FD_PERF_ARRAY }, { 0 }, 0, 0, 0, 0, 0, 0, EINVAL,
	  "Sleepable programs can only use array, hash, ringbuf and local storage maps, also as " \
	  "inner maps\n" STATS,
	  0, { 0 } },
	{ "sleepable kprobe, a map of LPM tries", BPF_PROG_TYPE_KPROBE, 0, BPF_F_SLEEPABLE, -1,
	  -1, 1, { FD_MIM_LPM }, { 0 }, 1, 0, 0, 0, 0, 0, EINVAL,
	  "Sleepable programs can only use array, hash, ringbuf and local storage maps, also as "
	  "inner maps\n" STATS, 0, { 0 } },
	{ "two cgroup storages", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_INGRESS, 0, -1, -1, 2,
	  { FD_CG_STORAGE, FD_CG_STORAGE }, { 0, 1 }, 2, 0, 0, 0, 0, 0, EBUSY,
	  "only one cgroup storage of each type is allowed\n" STATS, 0, { 0 } },
	{ "prog_token_fd without BPF_F_TOKEN_FD is not read", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0,
	  -1, -1, 0, { 0 }, { 0 }, 0, 0, 0, 1, 0, 0, 0, NULL, 0, { 0 } },
	{ "BPF_F_TOKEN_FD, a map's fd", BPF_PROG_TYPE_SOCKET_FILTER, 0, BPF_F_TOKEN_FD, -1, -1, 0,
	  { 0 }, { 0 }, 0, 0, 0, 1, 0, 0, EINVAL, "", 0, { 0 } },
	{ "BPF_F_TOKEN_FD, a closed fd", BPF_PROG_TYPE_SOCKET_FILTER, 0, BPF_F_TOKEN_FD, -1, -1, 0,
	  { 0 }, { 0 }, 0, 0, 0, 2, 0, 0, EBADF, "", 0, { 0 } },
	{ "a signature of too many bytes", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 0, { 0 },
	  { 0 }, 0, 0, 0, 0, 2, 0, EINVAL, "", 0, { 0 } },
	{ "a signature no key verifies", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 0, { 0 },
	  { 0 }, 0, 0, 0, 0, 1, 0, EOPNOTSUPP, "", 0, { 0 } },
	{ "a signature for a key that is not there", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 0,
	  { 0 }, { 0 }, 0, 0, 0, 0, 3, 0, EINVAL, "", 0, { 0 } },
	{ "a signature at a bad address", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 0, { 0 },
	  { 0 }, 0, 0, 0, 0, 4, 0, ENOMEM, "", 0, { 0 } },
	{ "a byte past Linux 6.18's attr", BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, -1, -1, 0, { 0 },
	  { 0 }, 0, 0, 0, 0, 0, 1, E2BIG, "", 0, { 0 } },
};

static int map_new(sys_fn sys, uint32_t type)
{
	union bpf_attr a;
	int inner, fd;

	if (type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_LPM_TRIE;
		a.key_size = 8;
		a.value_size = 4;
		a.max_entries = 4;
		a.map_flags = BPF_F_NO_PREALLOC;
		inner = sys(BPF_MAP_CREATE, &a, sizeof(a));
		memset(&a, 0, sizeof(a));
		a.map_type = type;
		a.key_size = 4;
		a.value_size = 4;
		a.max_entries = 1;
		a.inner_map_fd = (uint32_t)inner;
		fd = sys(BPF_MAP_CREATE, &a, sizeof(a));
		close(inner);
		return fd;
	}
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = type == BPF_MAP_TYPE_CGROUP_STORAGE ? 16 : 4;
	a.value_size = 4;
	a.max_entries = type == BPF_MAP_TYPE_CGROUP_STORAGE ? 0 : 4;
	return sys(BPF_MAP_CREATE, &a, sizeof(a));
}

/* An empty BTF blob: header and one int type. */
static int btf_new(sys_fn sys)
{
	static const uint32_t blob[] = {
		0x0001eb9f, 24, 0, 16, 16, 5,    /* magic/version/flags, hdr_len, types, strs */
		1, 0x01000000, 4, 0x00000020, /* "int": INT, 4 bytes, 32 bits */
		0x746e6900, 0,                /* "\0int\0" */
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)blob;
	a.btf_size = 24 + 16 + 5;
	return sys(BPF_BTF_LOAD, &a, sizeof(a));
}

static uint32_t id_of(sys_fn sys, int fd)
{
	struct bpf_map_info info;
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? 0 : info.id;
}

/* The program's map ids, as indexes into maps[] (-1: none of them); their count. */
static int prog_maps(sys_fn sys, int prog, const int *maps, int nmaps, int *out, int cap)
{
	struct bpf_prog_info info;
	uint32_t ids[NMAPS];
	union bpf_attr a;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = NMAPS;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (sys(BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)))
		return -1;
	for (uint32_t i = 0; i < info.nr_map_ids && (int)i < cap; i++) {
		out[i] = -1;
		for (int k = 0; k < nmaps; k++)
			if (maps[k] >= 0 && id_of(sys, maps[k]) == ids[i])
				out[i] = k;
	}
	return (int)info.nr_map_ids;
}

static void check(sys_fn sys, const char *who, const struct attr_case *c)
{
	struct bpf_insn insns[8] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1 },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int maps[NMAPS], got[4], nids = 0, fd, err, btf = -1, devnull = -1;
	char name[200], log[4096];
	static unsigned char sig[16] = { 1 };
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *mem;
	int *fds;
	union attr u;
	uint32_t v;

	snprintf(name, sizeof(name), "%s: %s", who, c->name);
	T_CASE(name);
	/* fd_array at the end of a page the next page of which is inaccessible: PROT_NONE,
	 * not unmapped, so that no mapping made meanwhile (a one-page map file's) can take
	 * its place */
	mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED) {
		T_FAIL("mmap");
		return;
	}
	if (mprotect(mem + page, (size_t)page, PROT_NONE)) {
		T_FAIL("mprotect");
		munmap(mem, (size_t)page * 2);
		return;
	}
	fds = (int *)(void *)(mem + page) - (c->fault_after ? c->fault_after : NMAPS);
	for (int i = 0; i < NMAPS; i++)
		maps[i] = -1;
	for (int i = 0; i < NMAPS; i++) {
		enum fd_kind k = i < 4 ? c->kinds[i] : FD_MAP;
		uint32_t type = k == FD_PERF_ARRAY ? BPF_MAP_TYPE_PERF_EVENT_ARRAY :
				k == FD_CG_STORAGE ? BPF_MAP_TYPE_CGROUP_STORAGE :
				k == FD_MIM_LPM ? BPF_MAP_TYPE_ARRAY_OF_MAPS :
						     BPF_MAP_TYPE_ARRAY;

		if (i < c->nfds || i < 3)
			maps[i] = map_new(sys, i < c->nfds ? type : BPF_MAP_TYPE_ARRAY);
	}
	for (int i = 0; i < c->nfds; i++) {
		enum fd_kind k = i < 4 ? c->kinds[i] : FD_MAP;

		if (k == FD_BTF && btf < 0)
			btf = btf_new(sys);
		if (k == FD_NOT_BPF && devnull < 0)
			devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		fds[i] = k == FD_BTF ? btf : k == FD_CLOSED ? 999 : k == FD_NOT_BPF ? devnull :
			 maps[i < 4 && k == FD_MAP ? c->fd_map[i] : i];
	}
	memset(&u, 0, sizeof(u));
	memset(log, 0, sizeof(log));
	u.a.prog_type = c->prog_type;
	u.a.expected_attach_type = c->attach;
	u.a.prog_flags = c->flags;
	u.a.license = (uint64_t)(uintptr_t)"GPL";
	u.a.log_buf = (uint64_t)(uintptr_t)log;
	u.a.log_size = sizeof(log);
	u.a.log_level = 1;
	if (c->use_idx >= 0) {
		insns[3].src_reg = BPF_PSEUDO_MAP_IDX;
		insns[3].imm = c->use_idx;
	} else if (c->use_map >= 0) {
		insns[3].src_reg = BPF_PSEUDO_MAP_FD;
		insns[3].imm = maps[c->use_map];
	}
	u.a.insns = (uint64_t)(uintptr_t)(c->use_idx >= 0 || c->use_map >= 0 ? insns : insns + 6);
	u.a.insn_cnt = c->use_idx >= 0 || c->use_map >= 0 ? 8 : 2;
	if (!c->no_fd_array && (c->nfds || c->use_idx >= 0))
		u.a.fd_array = (uint64_t)(uintptr_t)fds;
	memcpy(u.raw + OFF_FD_ARRAY_CNT, &c->cnt, 4);
	if (c->token) {
		int32_t t = c->token == 1 ? maps[0] : 998;

		memcpy(u.raw + OFF_TOKEN_FD, &t, 4);
	}
	if (c->signature) {
		/* 1: 16 bytes that are no PKCS#7 for keyring 0, 2: too long, 3: a key id no
		 * keyring has, 4: at address 8 */
		uint64_t p = c->signature == 4 ? 8 : (uint64_t)(uintptr_t)sig;
		int32_t keyring = c->signature == 3 ? 0x7ffffff0 : 0;

		v = c->signature == 2 ? 8193 : sizeof(sig);
		memcpy(u.raw + OFF_SIGNATURE, &p, 8);
		memcpy(u.raw + OFF_SIGNATURE_SIZE, &v, 4);
		memcpy(u.raw + OFF_KEYRING_ID, &keyring, 4);
	}
	if (c->tail_byte)
		u.raw[ATTR_SIZE] = 1;
	fd = sys(BPF_PROG_LOAD, &u.a, c->tail_byte ? ATTR_SIZE + 8 : ATTR_SIZE);
	err = fd < 0 ? errno : 0;
	T_EQ_INT(c->err, err);
	if (c->err && c->log)
		T_EQ_STR(c->log, log);
	if (fd >= 0) {
		/* the program holds its maps: closing their fds changes nothing */
		for (int i = 0; i < NMAPS; i++)
			if (maps[i] >= 0 && i >= 4) {
				close(maps[i]);
				maps[i] = -1;
			}
		nids = prog_maps(sys, fd, maps, NMAPS, got, 4);
		T_EQ_INT(c->nfds == 64 ? 64 : c->nids, nids);
		for (int i = 0; i < c->nids && i < nids && i < 4; i++)
			T_EQ_INT(c->ids[i], got[i]);
		close(fd);
	}
	for (int i = 0; i < NMAPS; i++)
		if (maps[i] >= 0)
			close(maps[i]);
	if (btf >= 0)
		close(btf);
	if (devnull >= 0)
		close(devnull);
	munmap(mem, (size_t)page * 2);
}

/* Bytes of the 6.18 attr past a command's last field: CHECK_ATTR's EINVAL, not E2BIG. */
static void check_map_create_tail(sys_fn sys, const char *who)
{
	char name[100];
	union attr u;

	snprintf(name, sizeof(name), "%s: MAP_CREATE, a byte at 150", who);
	T_CASE(name);
	memset(&u, 0, sizeof(u));
	u.a.map_type = BPF_MAP_TYPE_ARRAY;
	u.a.key_size = 4;
	u.a.value_size = 4;
	u.a.max_entries = 1;
	u.raw[150] = 1;
	T_EQ_INT(-1, sys(BPF_MAP_CREATE, &u.a, ATTR_SIZE));
	T_EQ_INT(EINVAL, errno);
}

int main(void)
{
	int kernel = kernel_available();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check(sys_bpfrt, "bpfrt", &cases[i]);
		if (kernel)
			check(sys_kernel, "kernel", &cases[i]);
	}
	check_map_create_tail(sys_bpfrt, "bpfrt");
	if (kernel)
		check_map_create_tail(sys_kernel, "kernel");
	if (!kernel)
		printf("note: not root or no bpf(2): bpfrt checked against the expected values only\n");
	return t_done();
}
