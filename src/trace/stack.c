/* stack.c - bpf_get_stackid() and bpf_get_stack() on the call chain of the event that
 * ran the program.
 *
 * The kernel's helpers walk the stack at the event (get_perf_callchain() from the
 * tracepoint's or probe's registers: the kernel chain, or with BPF_F_USER_STACK the
 * task's user chain).  A program bpfrt runs on a kernel event runs after it, on a
 * record: the event sources (tracepoint.c, kprobe.c) ask perf for the same chains with
 * PERF_SAMPLE_CALLCHAIN when the program may call these helpers, and the runner hands
 * the record's chain over in the current task (brt_trace_set_task()).  perf writes the
 * kernel part after a PERF_CONTEXT_KERNEL marker and the user part after
 * PERF_CONTEXT_USER, both from the registers the kernel's helper would start from, so
 * the ips are the kernel's; the helpers pick the part, cut it at the depth the kernel
 * would have asked for (the buffer's or value's frames plus the skip, at most
 * kernel.perf_event_max_stack), skip, and then store (stackmap.c's bucket step, the
 * kernel's hash) or copy the frames.  Events without a chain (test runs, in-application
 * probes) answer what the kernel answers when it cannot fetch one: -EFAULT.
 *
 * Build ids (a BPF_F_STACK_BUILD_ID map, bpf_get_stack with BPF_F_USER_BUILD_ID): the
 * kernel looks each user ip up in the task's mappings and reads the mapped file's
 * NT_GNU_BUILD_ID note; here the same through /proc/<tgid>/maps and the file (the
 * mapping's /proc/<tgid>/map_files/ entry, so a replaced path still reads the mapped
 * file).  A frame whose mapping or note is not found keeps its ip with status
 * BPF_STACK_BUILD_ID_IP, as the kernel's fallback; kernel frames always do.  The task may
 * have exited before its record is read: then every user frame falls back too (the
 * kernel had the task at hand).
 *
 * What differs: perf caps a record's kernel and user parts together at
 * perf_event_max_stack frames, so a user chain behind a very deep kernel one may come
 * out shorter than the kernel's helper, which asks for one part only.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "trace/trace.h"
#include "vm/vm.h"

#define BUILD_ID_FRAME 32u  /* sizeof(struct bpf_stack_build_id) */
#define MAX_PHDRS 256       /* the kernel's MAX_PHDR_CNT */
#define MAX_VMAS 4096       /* mappings read from /proc/<tgid>/maps */

int brt_trace_wants_chain(const struct brt_prog *prog)
{
	size_t n = 0;
	const struct bpf_insn *insns = prog->vm ? brt_vm_insns(prog->vm, &n) : NULL;

	for (size_t i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];

		/* a tail call may reach a program that calls them: chains for it too */
		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 &&
		    (in->imm == BPF_FUNC_get_stackid || in->imm == BPF_FUNC_get_stack ||
		     in->imm == BPF_FUNC_tail_call))
			return 1;
	}
	return 0;
}

/* The part of the current record's chain the helper asks for (user or kernel): its
 * first ip and count; -EFAULT when the event carried no chain. */
static int chain_part(int user, const uint64_t **ips, uint32_t *nr)
{
	const struct brt_trace_task *t = brt_trace_get_task();
	uint64_t want = user ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;
	uint32_t i = 0, start;

	if (!t || !t->chain)
		return -EFAULT;
	while (i < t->chain_nr && t->chain[i] != want)
		i++;
	start = i < t->chain_nr ? i + 1 : t->chain_nr; /* no such part: empty */
	for (i = start; i < t->chain_nr && t->chain[i] < PERF_CONTEXT_MAX; i++)
		;
	*ips = t->chain + start;
	*nr = i - start;
	return 0;
}

/* stack_map_calculate_max_depth(): the frames size holds, plus the skip, at most
 * perf_event_max_stack (read once: the kernel reads it per call; bpfrt keeps the first) */
static uint32_t max_depth(uint32_t size, uint32_t elem, uint64_t flags)
{
	static _Atomic uint32_t sysctl_max;
	uint32_t cap = atomic_load_explicit(&sysctl_max, memory_order_relaxed);
	uint32_t d = size / elem + (uint32_t)(flags & BPF_F_SKIP_FIELD_MASK);

	if (!cap) {
		cap = brt_stack_max();
		atomic_store_explicit(&sysctl_max, cap, memory_order_relaxed);
	}
	return d > cap ? cap : d;
}

/* ---- build ids ------------------------------------------------------------------------ */
struct vma {
	uint64_t start, end, off;
	int file;                   /* backed by a file (a path in the maps line) */
	int state;                  /* 0 not read yet, 1 build id found, -1 none */
	unsigned char id[20];
};

/* The mappings of task tgid, ascending (as /proc lists them); NULL when gone. */
static struct vma *read_vmas(int32_t tgid, size_t *n)
{
	char path[64], line[512];
	struct vma *v = NULL;
	size_t cap = 0;
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f) && *n < MAX_VMAS) {
		unsigned long long s, e, off;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s%n", &s, &e, &off, &pos) != 3)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct vma *nv = realloc(v, ncap * sizeof(*v));

			if (!nv)
				break;
			v = nv, cap = ncap;
		}
		while (line[pos] == ' ' || line[pos] == '\t')
			pos++;
		v[*n] = (struct vma){ .start = s, .end = e, .off = off,
				      .file = line[pos] == '/' };
		(*n)++;
	}
	fclose(f);
	return v;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EINVAL;
}

/* The NT_GNU_BUILD_ID note of a PT_NOTE segment (build_id_parse()'s parse_build_id) */
static int note_build_id(int fd, uint64_t off, uint64_t size, unsigned char id[20])
{
	uint64_t end = off + size;

	if (end < off)
		return -EINVAL;
	while (end - off > sizeof(Elf32_Nhdr) + 4) {
		struct {
			Elf32_Nhdr h;
			char name[4];
		} n;
		uint64_t next = off + sizeof(Elf32_Nhdr);

		if (pread_all(fd, &n, sizeof(n), off))
			return -EINVAL;
		next += ((uint64_t)n.h.n_namesz + 3) & ~3ull;
		next += ((uint64_t)n.h.n_descsz + 3) & ~3ull;
		if (next > end)
			break;
		if (n.h.n_type == NT_GNU_BUILD_ID && n.h.n_namesz == 4 &&
		    !memcmp(n.name, "GNU", 4) && n.h.n_descsz > 0 && n.h.n_descsz <= 20) {
			memset(id, 0, 20);
			return pread_all(fd, id, n.h.n_descsz, off + sizeof(Elf32_Nhdr) + 4);
		}
		off = next;
	}
	return -EINVAL;
}

/* The build id of an ELF executable or shared object (its first PT_NOTE holding one). */
static int file_build_id(int fd, unsigned char id[20])
{
	unsigned char ident[EI_NIDENT + 2];
	uint16_t type;

	if (pread_all(fd, ident, sizeof(ident), 0) || memcmp(ident, ELFMAG, SELFMAG))
		return -EINVAL;
	memcpy(&type, ident + EI_NIDENT, 2);
	if (type != ET_EXEC && type != ET_DYN)
		return -EINVAL;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr e;

		if (pread_all(fd, &e, sizeof(e), 0))
			return -EINVAL;
		for (uint32_t i = 0; i < e.e_phnum && i < MAX_PHDRS; i++) {
			Elf64_Phdr p;

			if (pread_all(fd, &p, sizeof(p), e.e_phoff + (uint64_t)i * sizeof(p)))
				return -EINVAL;
			if (p.p_type == PT_NOTE && !note_build_id(fd, p.p_offset, p.p_filesz, id))
				return 0;
		}
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr e;

		if (pread_all(fd, &e, sizeof(e), 0))
			return -EINVAL;
		for (uint32_t i = 0; i < e.e_phnum && i < MAX_PHDRS; i++) {
			Elf32_Phdr p;

			if (pread_all(fd, &p, sizeof(p), e.e_phoff + (uint64_t)i * sizeof(p)))
				return -EINVAL;
			if (p.p_type == PT_NOTE && !note_build_id(fd, p.p_offset, p.p_filesz, id))
				return 0;
		}
	}
	return -EINVAL;
}

static int vma_build_id(int32_t tgid, struct vma *v)
{
	char path[96];
	int fd;

	if (!v->state) {
		v->state = -1;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)tgid,
			 (unsigned long long)v->start, (unsigned long long)v->end);
		fd = v->file ? open(path, O_RDONLY | O_CLOEXEC) : -1;
		if (fd >= 0) {
			if (!file_build_id(fd, v->id))
				v->state = 1;
			close(fd);
		}
	}
	return v->state == 1 ? 0 : -ENOENT;
}

/* stack_map_get_build_id_offset(): frames[i].ip set on entry; each becomes its file
 * offset and build id (status VALID) or stays an ip (status IP, build id zeroed). */
static void build_ids(struct bpf_stack_build_id *frames, uint32_t nr, int user)
{
	const struct brt_trace_task *t = brt_trace_get_task();
	struct vma *v = NULL;
	size_t nv = 0;

	if (user && t)
		v = read_vmas(t->tgid, &nv);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t ip = frames[i].ip;
		size_t k = 0;

		/* find_vma(): the first mapping ending above ip */
		while (k < nv && v[k].end <= ip)
			k++;
		if (k < nv && !vma_build_id(t->tgid, &v[k])) {
			memcpy(frames[i].build_id, v[k].id, 20);
			frames[i].offset = v[k].off + ip - v[k].start;
			frames[i].status = BPF_STACK_BUILD_ID_VALID;
		} else {
			memset(frames[i].build_id, 0, sizeof(frames[i].build_id));
			frames[i].status = BPF_STACK_BUILD_ID_IP;
		}
	}
	free(v);
}

/* ---- the helpers ---------------------------------------------------------------------- */
uint64_t brt_helper_get_stackid(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
				uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	struct brt_map *map = brt_map_helper_arg(r2, ctx);
	uint32_t skip = (uint32_t)(r3 & BPF_F_SKIP_FIELD_MASK), depth, nr, elem;
	int user = !!(r3 & BPF_F_USER_STACK);
	const uint64_t *ips;
	void *frames;
	int64_t ret;

	(void)r1, (void)r4, (void)r5;
	if (!map || map->type != BPF_MAP_TYPE_STACK_TRACE)
		return (uint64_t)-EINVAL;
	if (r3 & ~(uint64_t)(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_FAST_STACK_CMP |
			     BPF_F_REUSE_STACKID))
		return (uint64_t)-EINVAL;
	if (chain_part(user, &ips, &nr))
		return (uint64_t)-EFAULT; /* no call chain (file comment) */
	elem = brt_stack_frame_size(map);
	depth = max_depth(map->value_size, elem, r3);
	if (nr > depth)
		nr = depth;
	if (nr <= skip)
		return (uint64_t)-EFAULT; /* skipping more than the stack has */
	nr -= skip;
	if (nr > depth - skip)
		nr = depth - skip;
	ips += skip;
	if (elem == 8)
		return (uint64_t)brt_stack_map_store(map, ips, ips, nr, r3);
	frames = calloc(nr, BUILD_ID_FRAME);
	if (!frames)
		return (uint64_t)-ENOMEM;
	for (uint32_t i = 0; i < nr; i++)
		((struct bpf_stack_build_id *)frames)[i].ip = ips[i];
	build_ids(frames, nr, user);
	ret = brt_stack_map_store(map, ips, frames, nr, r3);
	free(frames);
	return (uint64_t)ret;
}

uint64_t brt_helper_get_stack(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4,
			      uint64_t r5, struct bpfrt_run_ctx *ctx)
{
	void *buf = (void *)(uintptr_t)r2;
	uint32_t size = (uint32_t)r3, skip = (uint32_t)(r4 & BPF_F_SKIP_FIELD_MASK), elem;
	uint32_t depth, nr, len = 0;
	int user = !!(r4 & BPF_F_USER_STACK), build_id = !!(r4 & BPF_F_USER_BUILD_ID);
	const uint64_t *ips;
	int64_t err = -EINVAL;

	(void)r1, (void)r5;
	if (ctx->checked && size && !bpfrt_run_access_ok(ctx, buf, size, 1))
		return (uint64_t)-EINVAL;
	elem = build_id ? BUILD_ID_FRAME : 8;
	if ((r4 & ~(uint64_t)(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID)) ||
	    (build_id && !user) || size % elem)
		goto clear;
	err = -EFAULT;
	if (chain_part(user, &ips, &nr))
		goto clear; /* no call chain (file comment) */
	depth = max_depth(size, elem, r4);
	if (nr > depth)
		nr = depth;
	if (nr < skip)
		goto clear;
	nr -= skip;
	ips += skip;
	len = nr * elem;
	if (build_id) {
		struct bpf_stack_build_id *f = buf;

		for (uint32_t i = 0; i < nr; i++)
			f[i].ip = ips[i];
		build_ids(f, nr, user);
	} else {
		memcpy(buf, ips, len);
	}
	if (size > len)
		memset((char *)buf + len, 0, size - len);
	return len;
clear:
	if (size)
		memset(buf, 0, size);
	return (uint64_t)err;
}
