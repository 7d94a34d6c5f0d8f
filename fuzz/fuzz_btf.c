/* fuzz_btf.c - fuzz target for the .BTF reader (src/btf/btf.c) and BPF_BTF_LOAD
 * (src/api/btf_load.c): any byte string must parse or be refused with a reason; once
 * parsed, every type's name, modifier chain and size must resolve without looping or
 * reading out of bounds.  The same bytes go to BPF_BTF_LOAD, which must agree with the
 * reader when it refuses; a loaded BTF then backs a PROG_LOAD whose func_info and
 * line_info records are the input's last 32 bytes (checked like the kernel's, never
 * trusted), and every fd is closed again.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "btf/btf.h"
#include "fuzz.h"

static void load_with_info(int btf_fd, const uint8_t *data, size_t size)
{
	struct bpf_insn insns[] = {
		{ BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	uint32_t rec[8] = { 0 };
	char log[512];
	union bpf_attr a;
	int fd;

	memcpy(rec, data + (size > sizeof(rec) ? size - sizeof(rec) : 0),
	       size < sizeof(rec) ? size : sizeof(rec));
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 4;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	a.prog_btf_fd = (uint32_t)btf_fd;
	a.func_info = (uint64_t)(uintptr_t)rec;
	a.func_info_cnt = rec[0] & 3;
	a.func_info_rec_size = 8;
	a.line_info = (uint64_t)(uintptr_t)(rec + 2);
	a.line_info_cnt = rec[1] & 1;
	a.line_info_rec_size = 16;
	fd = bpfrt_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0)
		close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct brt_btf *btf;
	char err[256] = "";
	union bpf_attr a;
	int parsed, fd;

	parsed = !brt_btf_parse(data, size, &btf, err, sizeof(err));
	if (!parsed && !err[0])
		abort();
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)data;
	a.btf_size = (uint32_t)size;
	fd = bpfrt_bpf(BPF_BTF_LOAD, &a, sizeof(a));
	if (fd >= 0 && !parsed)
		abort(); /* BTF_LOAD is the reader plus the kernel's extra rules */
	if (fd >= 0) {
		load_with_info(fd, data, size);
		close(fd);
	}
	if (!parsed)
		return 0;
	for (uint32_t id = 0; id < btf->ntypes + 2; id++) {
		uint64_t sz;

		if (!brt_btf_name(btf, id))
			abort();
		if (brt_btf_skip_mods(btf, id) > btf->ntypes + 1)
			abort();
		(void)brt_btf_resolve_size(btf, id, &sz);
	}
	brt_btf_free(btf);
	return 0;
}
