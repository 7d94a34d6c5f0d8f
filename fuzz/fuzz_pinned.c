/* fuzz_pinned.c - fuzz target for pinned objects whose files another process rewrites
 * between this process's operations (issue 14 item 3; docs/SECURITY.md).  Each input
 * pins a fresh array map (with BTF, whose copy its file keeps after the values), a hash
 * map of maps and a socket filter program that looks the array up (twice: one of a
 * page, one of two, its header at the file's end after the instructions in their last
 * page, obj.h brt_obj_hdr_at()), then runs steps: a step writes input bytes anywhere in
 * one of the files (the header page included, through a second mapping, as another
 * process with write access would), drops this process's cached objects (so the next
 * BPF_OBJ_GET maps and validates the file again, the scribbled header and all), or runs
 * an operation:
 * OBJ_GET, lookup, update, delete, a get_next_key walk, a batch lookup, GET_INFO, the
 * program's test run (re-verified from its file after a drop) or an xlated dump with
 * its func and line info (the BTF and records the program file keeps after its pages).
 * Nothing may crash, hang or read outside a mapping; errors are fine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/btf.h>

#include "fuzz.h"
#include "bpfrt.h"
#include "maps/maps.h"
#include "obj/obj.h"

enum { MAP, OUTER, PROG, BIG, NOBJ };

struct pinned {
	char path[128];
	int fd;               /* this process's fd from OBJ_GET, -1 when dropped */
	unsigned char *file;  /* a second mapping of the whole file */
	size_t size;
};

static char dir[64];

static int sys(int cmd, union bpf_attr *a)
{
	return bpfrt_bpf(cmd, a, sizeof(*a));
}

static int get(struct pinned *p)
{
	if (p->fd < 0)
		p->fd = bpfrt_obj_get(p->path);
	return p->fd;
}

/* Close this process's fds and sweep, so the files are attached anew on the next get. */
static void drop(struct pinned *o)
{
	for (int i = 0; i < NOBJ; i++) {
		if (o[i].fd >= 0)
			close(o[i].fd);
		o[i].fd = -1;
	}
	/* a program holds its maps: twice */
	brt_obj_sweep();
	brt_obj_sweep();
}

/* pad: that many instructions in front (BIG: a file of two pages) */
static int load_prog(int map, uint32_t pad)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 0, .off = 2 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 0, .src_reg = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	/* BTF with the function and a line for its func_info and line_info, which the
	 * program file keeps after its pages (prog_file.c): scribbles reach them too, read
	 * back when another process (here: after a drop) rebuilds the program */
	static const char strs[] = "\0f\0fz.c\0return 0;";
	struct {
		struct btf_header h;
		uint32_t types[10];
		char strs[sizeof(strs)];
	} btf = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(btf.h),
		       .type_off = 0, .type_len = sizeof(btf.types),
		       .str_off = sizeof(btf.types), .str_len = sizeof(strs) },
		/* [1] int, [2] int (void), [3] static f */
		.types = { 0, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
			   0, BTF_KIND_FUNC_PROTO << 24, 1,
			   1, BTF_KIND_FUNC << 24, 2 },
	};
	struct bpf_func_info fi = { .insn_off = 0, .type_id = 3 };
	struct bpf_line_info li[2] = { { .insn_off = 0, .file_name_off = 3, .line_off = 8,
					 .line_col = 1 << 10 },
				       { .insn_off = 5, .file_name_off = 3, .line_off = 8,
					 .line_col = 2 << 10 } };
	struct bpf_insn insns[600] = { 0 };
	union bpf_attr a;
	int btf_fd;

	if (pad + sizeof(prog) / sizeof(prog[0]) > sizeof(insns) / sizeof(insns[0]))
		__builtin_trap();
	for (uint32_t i = 0; i < pad; i++)
		insns[i] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 7 };
	memcpy(insns + pad, prog, sizeof(prog));
	li[1].insn_off += pad;
	memcpy(btf.strs, strs, sizeof(strs));
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)&btf;
	a.btf_size = sizeof(btf);
	btf_fd = sys(BPF_BTF_LOAD, &a);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = pad + (uint32_t)(sizeof(prog) / sizeof(prog[0]));
	a.license = (uint64_t)(uintptr_t)"GPL";
	if (btf_fd >= 0) {
		a.prog_btf_fd = (uint32_t)btf_fd;
		a.func_info = (uint64_t)(uintptr_t)&fi;
		a.func_info_cnt = 1;
		a.func_info_rec_size = sizeof(fi);
		a.line_info = (uint64_t)(uintptr_t)li;
		a.line_info_cnt = 2;
		a.line_info_rec_size = sizeof(li[0]);
	}
	btf_fd = sys(BPF_PROG_LOAD, &a);
	if (a.prog_btf_fd)
		close((int)a.prog_btf_fd);
	return btf_fd;
}

/* The array map with BTF for its key and value: the map file keeps a copy of the BTF
 * right after its values, in the same page (tail_packed), which a scribble can reach and
 * the program's verification after a drop reads back (map_info() in api/check.c). */
static int create_array(void)
{
	static const char strs[] = "\0int\0long";
	struct {
		struct btf_header h;
		uint32_t types[8];
		char strs[sizeof(strs)];
	} btf = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(btf.h),
		       .type_off = 0, .type_len = sizeof(btf.types),
		       .str_off = sizeof(btf.types), .str_len = sizeof(strs) },
		/* [1] int, [2] long */
		.types = { 1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
			   5, BTF_KIND_INT << 24, 8, BTF_INT_SIGNED << 24 | 64 },
	};
	union bpf_attr a;
	int btf_fd, fd;

	memcpy(btf.strs, strs, sizeof(strs));
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)&btf;
	a.btf_size = sizeof(btf);
	btf_fd = sys(BPF_BTF_LOAD, &a);
	if (btf_fd < 0)
		__builtin_trap();
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 4;
	memcpy(a.map_name, "fz_pin", 7);
	a.btf_fd = (uint32_t)btf_fd;
	a.btf_key_type_id = 1;
	a.btf_value_type_id = 2;
	fd = sys(BPF_MAP_CREATE, &a);
	close(btf_fd);
	return fd;
}

static int create(struct pinned *o)
{
	union bpf_attr a;
	int fds[NOBJ];
	struct stat st;

	fds[MAP] = create_array();
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH_OF_MAPS;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 4;
	a.inner_map_fd = (uint32_t)fds[MAP];
	fds[OUTER] = sys(BPF_MAP_CREATE, &a);
	fds[PROG] = fds[MAP] >= 0 ? load_prog(fds[MAP], 0) : -1;
	fds[BIG] = fds[MAP] >= 0 ? load_prog(fds[MAP], 500) : -1;
	for (int i = 0; i < NOBJ; i++) {
		if (fds[i] < 0 || fstat(fds[i], &st))
			__builtin_trap();
		snprintf(o[i].path, sizeof(o[i].path), "%s/o%d", dir, i);
		unlink(o[i].path);
		if (bpfrt_obj_pin(fds[i], o[i].path))
			__builtin_trap();
		o[i].size = (size_t)st.st_size;
		o[i].file = mmap(NULL, o[i].size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
		if (o[i].file == MAP_FAILED)
			__builtin_trap();
		o[i].fd = -1;
	}
	{
		uint32_t key = 1;
		int32_t inner = fds[MAP];

		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)fds[OUTER];
		a.key = (uint64_t)(uintptr_t)&key;
		a.value = (uint64_t)(uintptr_t)&inner;
		sys(BPF_MAP_UPDATE_ELEM, &a);
	}
	for (int i = 0; i < NOBJ; i++)
		close(fds[i]);
	return 0;
}

/* brt_map_file_values()'s callback: read every byte it is given (ASan checks them) */
static void touch(void *arg, const void *bytes)
{
	static volatile unsigned char sink;
	uint32_t n = *(const uint32_t *)arg;

	for (uint32_t i = 0; i < n; i++)
		sink = sink + ((const unsigned char *)bytes)[i];
}

static void map_op(int fd, uint8_t op, const uint8_t *arg)
{
	unsigned char key[8], next[8], vals[64] = { 0 };
	union bpf_attr a;
	int have = 0;

	memcpy(key, arg, 8);
	key[0] &= 7; /* indexes and keys that exist, and a few that do not */
	memset(&a, 0, sizeof(a));
	switch (op % 6) {
	case 0:
		bpfrt_map_lookup_elem(fd, key, vals);
		break;
	case 1:
		memcpy(vals, arg + 1, 7);
		bpfrt_map_update_elem(fd, key, vals, 0);
		break;
	case 2:
		bpfrt_map_delete_elem(fd, key);
		break;
	case 3:
		/* a walk ends (bounded here only as a backstop) */
		for (int i = 0; i < 100000 && !bpfrt_map_get_next_key(fd, have ? key : NULL, next);
		     i++) {
			memcpy(key, next, sizeof(key));
			have = 1;
		}
		break;
	case 4:
		a.batch.map_fd = (uint32_t)fd;
		a.batch.out_batch = (uint64_t)(uintptr_t)next;
		a.batch.keys = (uint64_t)(uintptr_t)vals;
		a.batch.values = (uint64_t)(uintptr_t)(vals + 32);
		a.batch.count = 2;
		sys(BPF_MAP_LOOKUP_BATCH, &a);
		break;
	default: {
		struct bpf_map_info info;
		struct brt_obj_hdr hdr;
		struct stat st;

		memset(&info, 0, sizeof(info));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		sys(BPF_OBJ_GET_INFO_BY_FD, &a);
		/* and the file as another process's id walk reads it (api/ids.c): the header
		 * as it is now, values [off, off + len) of every element in use */
		if (!fstat(fd, &st) && st.st_size >= (off_t)BRT_PAGE &&
		    pread(fd, &hdr, sizeof(hdr), (off_t)brt_obj_hdr_off((uint64_t)st.st_size)) ==
			    (ssize_t)sizeof(hdr)) {
			uint32_t len = arg[2] % 24;

			brt_map_file_values(fd, &hdr, (uint64_t)st.st_size, arg[1] % 24, len,
					    touch, &len);
		}
		break;
	}
	}
}

static void prog_op(int fd, uint8_t op)
{
	unsigned char pkt[64] = { 0 }, out[64];
	struct bpf_insn xlated[32];
	struct bpf_prog_info info;
	struct bpf_line_info lines[4];
	struct bpf_func_info funcs[2];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	if (op & 1) {
		a.test.prog_fd = (uint32_t)fd;
		a.test.data_in = (uint64_t)(uintptr_t)pkt;
		a.test.data_size_in = sizeof(pkt);
		a.test.data_out = (uint64_t)(uintptr_t)out;
		a.test.data_size_out = sizeof(out);
		a.test.repeat = 1;
		sys(BPF_PROG_TEST_RUN, &a);
		return;
	}
	memset(&info, 0, sizeof(info));
	info.xlated_prog_insns = (uint64_t)(uintptr_t)xlated;
	info.xlated_prog_len = sizeof(xlated);
	info.line_info = (uint64_t)(uintptr_t)lines;
	info.nr_line_info = 4;
	info.line_info_rec_size = sizeof(lines[0]);
	info.func_info = (uint64_t)(uintptr_t)funcs;
	info.nr_func_info = 2;
	info.func_info_rec_size = sizeof(funcs[0]);
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	sys(BPF_OBJ_GET_INFO_BY_FD, &a);
}

/* Steps of 12 bytes: object, op, a 16-bit offset, then 8 bytes of argument or data.
 * op bit 7: write (op & 7) + 1 bytes at the offset of the object's file (the header page
 * when bit 6 is set too); else op & 0x40: drop the cached objects; else an operation. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pinned o[NOBJ];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/bpfrt-fuzz-pinned.%d", (int)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST)
			__builtin_trap();
		setenv("BPFRT_FS", dir, 1);
	}
	create(o);
	for (; size >= 12; data += 12, size -= 12) {
		struct pinned *p = &o[data[0] % NOBJ];
		size_t off = (size_t)(data[2] | data[3] << 8), len = (data[1] & 7) + 1;

		if (data[1] & 0x80) {
			/* the header (its page, or a one-page file's end: obj.h), or anywhere */
			off = data[1] & 0x40 ? (p->size > BRT_PAGE ? p->size - BRT_PAGE + off % BRT_PAGE
							   : brt_obj_hdr_off(p->size) +
								     off % BRT_OBJ_HDR_ROOM)
					     : off % p->size;
			if (off + len > p->size)
				len = p->size - off;
			memcpy(p->file + off, data + 4, len);
		} else if (data[1] & 0x40) {
			drop(o);
		} else if (get(p) >= 0) {
			if (p == &o[PROG] || p == &o[BIG])
				prog_op(p->fd, data[1]);
			else
				map_op(p->fd, data[1], data + 4);
		}
	}
	drop(o);
	for (int i = 0; i < NOBJ; i++) {
		munmap(o[i].file, o[i].size);
		unlink(o[i].path);
	}
	return 0;
}
