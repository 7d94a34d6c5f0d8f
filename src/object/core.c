/* core.c - CO-RE relocations of an opened object (btf/core.c computes them): the target BTF
 * is the running kernel's /sys/kernel/btf/vmlinux, parsed once per process and kept while
 * the file is the same (device, inode, size, mtime: a new kernel's BTF is another file),
 * or the file the open options name (raw BTF, or an ELF file's .BTF section as libbpf's
 * btf__parse() takes it), read for each object; candidates are searched once
 * per local type for all programs, in an index of the target's names built once per
 * target (vmlinux's once per process, with its parse), and every linked copy of a relocated instruction is patched.  A program whose relocations
 * cannot be applied - no target BTF, a malformed record, an ambiguous or impossible
 * relocation - is named when it is relocated (its load, or its code asked for) with its
 * instruction and relocation and refused at load (loading it unrelocated would read the
 * wrong fields); the object still opens, since libbpf fails only the programs it loads
 * (autoload off: SEC("?..."), set_autoload()).  vmlinux's BTF is found at the first
 * program with relocations, not at the open (an open parses nothing it may not need).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "bpfrt.h"
#include "object/object.h"
#include "util/util.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

int brt_object_read_file(const char *path, void **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap;
	struct stat st;
	char *buf;
	int err = 0;

	if (fd < 0)
		return -errno;
	cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 1 << 20;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t got;

		if (n == cap) {
			char *nb = realloc(buf, 2 * cap);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = -errno;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* The .BTF section of an ELF file (p, len bytes: untrusted) as libbpf's btf__parse()
 * accepts it for a target (a vmlinux image, an object): 0 with its offset and size, or
 * -EINVAL.  64-bit ELF of this machine's byte order only, as the BTF parser wants. */
static int elf_btf(const unsigned char *p, size_t len, size_t *off, size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)p;
	const Elf64_Shdr *sh, *strs;
	uint64_t tab;

	if (len < sizeof(*eh) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
#else
	    eh->e_ident[EI_DATA] != ELFDATA2MSB ||
#endif
	    eh->e_shentsize != sizeof(*sh) || eh->e_shoff > len ||
	    eh->e_shnum > (len - eh->e_shoff) / sizeof(*sh) || eh->e_shstrndx >= eh->e_shnum)
		return -EINVAL;
	sh = (const void *)(p + eh->e_shoff);
	strs = &sh[eh->e_shstrndx];
	if (strs->sh_offset > len || strs->sh_size > len - strs->sh_offset)
		return -EINVAL;
	tab = strs->sh_offset;
	for (size_t i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= strs->sh_size ||
		    strs->sh_size - sh[i].sh_name < sizeof(".BTF") ||
		    memcmp(p + tab + sh[i].sh_name, ".BTF", sizeof(".BTF")))
			continue;
		if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_offset > len ||
		    sh[i].sh_size > len - sh[i].sh_offset)
			return -EINVAL;
		*off = sh[i].sh_offset;
		*size = sh[i].sh_size;
		return 0;
	}
	return -EINVAL;
}

/* Parse raw (len bytes) as BTF, or as an ELF file holding a .BTF section. */
static int parse_target(const unsigned char *raw, size_t len, struct brt_btf **btf, char *msg,
			size_t msglen)
{
	size_t off = 0, size = len;

	if (len >= SELFMAG && !memcmp(raw, ELFMAG, SELFMAG) && elf_btf(raw, len, &off, &size)) {
		snprintf(msg, msglen, "an ELF file without a usable .BTF section");
		return -EINVAL;
	}
	return brt_btf_parse(raw + off, size, btf, msg, msglen);
}

/* The target BTF a file named by the open options holds (raw BTF or an ELF file's .BTF),
 * or NULL with *why set.  The file is mapped privately when it can be, else read; the
 * parser copies what it keeps (the file could change under the mapping; vmlinux's sysfs
 * file cannot, and brt_btf_load_kernel() parses it in place). */
static struct brt_btf *load_target(const char *path, char *why, size_t whylen)
{
	struct brt_btf *btf = NULL;
	char msg[256];
	void *raw = MAP_FAILED;
	size_t len = 0;
	struct statfs sfs;
	struct stat st;
	int ret = 0, fd = open(path, O_RDONLY | O_CLOEXEC);

	/* Mapped only from sysfs (the kernel's own BTF, which nobody can shrink): any other
	 * file's owner could truncate it while it is parsed, and the pages past the new end
	 * would raise SIGBUS even in a private mapping; those are read into memory. */
	if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    !fstatfs(fd, &sfs) && sfs.f_type == SYSFS_MAGIC) {
		len = (size_t)st.st_size;
		raw = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	if (fd >= 0)
		close(fd);
	if (raw == MAP_FAILED) {
		raw = NULL;
		ret = brt_object_read_file(path, &raw, &len);
		if (ret) {
			snprintf(why, whylen, "%s: %s", path, strerror(-ret));
			return NULL;
		}
		ret = parse_target(raw, len, &btf, msg, sizeof(msg));
		free(raw);
	} else {
		ret = parse_target(raw, len, &btf, msg, sizeof(msg));
		munmap(raw, len);
	}
	if (ret) {
		snprintf(why, whylen, "%s: %s", path, ret == -ENOMEM ? "out of memory" : msg);
		return NULL;
	}
	return btf;
}

/* This process's parsed vmlinux BTF and the file it came from: parsing takes most of a
 * CO-RE object's open (5.5 MB, ~100k types), and a process opening several objects (a
 * libbpf application under the preload, a test suite) pays it once.  Kept for the
 * process's life (never freed: objects only borrow it during open). */
static struct {
	pthread_mutex_t lock;
	struct brt_btf *btf;
	struct brt_core_index *index; /* btf's types by name (NULL: out of memory) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} vmlinux = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct brt_btf *vmlinux_target(int want_index, const struct brt_core_index **index,
				      char *why, size_t whylen)
{
	struct brt_btf *btf = NULL;
	struct stat st;

	if (stat(VMLINUX_BTF, &st)) {
		snprintf(why, whylen, "%s: %s", VMLINUX_BTF, strerror(errno));
		return NULL;
	}
	pthread_mutex_lock(&vmlinux.lock);
	if (vmlinux.btf && vmlinux.dev == st.st_dev && vmlinux.ino == st.st_ino &&
	    vmlinux.size == st.st_size && vmlinux.mtime.tv_sec == st.st_mtim.tv_sec &&
	    vmlinux.mtime.tv_nsec == st.st_mtim.tv_nsec) {
		btf = vmlinux.btf;
	} else {
		char msg[256] = "out of memory"; /* the one failure without a message */

		if (brt_btf_load_kernel(VMLINUX_BTF, &btf, msg, sizeof(msg)))
			snprintf(why, whylen, "%s: %s", VMLINUX_BTF, msg);
		if (btf) {
			/* the one it replaces (and its index) may be in use by another
			 * thread's open: kept */
			vmlinux.btf = btf;
			vmlinux.index = NULL;
			vmlinux.dev = st.st_dev;
			vmlinux.ino = st.st_ino;
			vmlinux.size = st.st_size;
			vmlinux.mtime = st.st_mtim;
		}
	}
	/* built under the lock, once: every object after this one then finds its
	 * candidates without scanning vmlinux (a failed build only costs the scans) */
	if (btf && want_index && !vmlinux.index && brt_core_index_build(btf, &vmlinux.index))
		vmlinux.index = NULL;
	*index = btf ? vmlinux.index : NULL;
	pthread_mutex_unlock(&vmlinux.lock);
	return btf;
}

/* The index pays from INDEX_MIN_TYPES searched local types on: its build reads every
 * record of the target once, where each search without it reads every record and most
 * names.  Measured (task-clock of `bpfrt prog loadall`, one process per object, vmlinux
 * of 6.18): 2 types (bcc's statsnoop) 10.3 ms with the index against 10.6 scanning, 3
 * (cilium-ebpf's manyprogs) 11.7 against 12.8, 6 (mountsnoop) 13.5 against 17.8. */
#define INDEX_MIN_TYPES 2

/* How many distinct local types the object's relocations search candidates for (all
 * kinds but TYPE_ID_LOCAL), counted up to INDEX_MIN_TYPES. */
static size_t searched_types(const struct brt_elf_obj *elf)
{
	uint8_t *seen = calloc(elf->btf->ntypes / 8 + 1, 1);
	size_t n = 0;

	if (!seen)
		return INDEX_MIN_TYPES; /* the index then: it allocates less than this */
	for (size_t k = 0; k < elf->ext.ncores && n < INDEX_MIN_TYPES; k++) {
		const struct brt_btf_core_relo *r = &elf->ext.cores[k];

		if (r->kind == BPF_CORE_TYPE_ID_LOCAL || r->type_id >= elf->btf->ntypes ||
		    seen[r->type_id / 8] & (1u << (r->type_id % 8)))
			continue;
		seen[r->type_id / 8] |= (uint8_t)(1u << (r->type_id % 8));
		n++;
	}
	free(seen);
	return n;
}

/* What an object keeps between its open and the relocation of its programs. */
struct brt_object_core {
	struct brt_core core;              /* candidates found so far, by local type */
	struct brt_btf *own_targ;          /* a named file's BTF (vmlinux's is the cache's) */
	struct brt_core_index *own_index;  /* that file's index, or NULL */
	int ready;                         /* core set up against the target (vmlinux's at
					    * the first program relocated: an open parses
					    * nothing it may not need) */
	int want_index;                    /* the target's name index pays (INDEX_MIN_TYPES) */
	char why[512];                     /* why there is no target, when there is none */
};

int brt_object_core(struct bpfrt_object *obj, const char *btf_path)
{
	struct brt_elf_obj *elf = obj->elf;
	struct brt_object_core *oc;
	struct brt_btf *targ;
	int ret;

	/* the object's records, as libbpf decides whether to find a target (programs are
	 * linked later: a record of a function no program calls counts too) */
	if (!elf->ext.ncores)
		return 0;
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return -ENOMEM;
	/* every record kind but TYPE_ID_LOCAL needs the target; records were checked to name
	 * a type of .BTF when .BTF.ext was read, so elf->btf is there */
	oc->want_index = searched_types(elf) >= INDEX_MIN_TYPES;
	obj->core = oc;
	if (!btf_path)
		return 0; /* vmlinux's, found by the first program relocated */
	/* a named file is read now: a bad one refuses the object */
	targ = load_target(btf_path, oc->why, sizeof(oc->why));
	if (!targ) {
		brt_print(BPFRT_WARN, "libbpfrt: failed to parse target BTF %s\n", oc->why);
		brt_object_core_free(obj);
		return -EINVAL;
	}
	/* a named file's index serves this object alone */
	oc->own_targ = targ;
	ret = brt_core_init(&oc->core, elf->btf, targ);
	if (oc->want_index && !brt_core_index_build(targ, &oc->own_index))
		oc->core.index = oc->own_index;
	oc->ready = 1;
	if (ret)
		brt_object_core_free(obj);
	return ret;
}

/* The running kernel's BTF as the target, at the first program relocated. */
static int core_ready(struct brt_object_core *oc, const struct brt_btf *local)
{
	const struct brt_core_index *index = NULL;
	struct brt_btf *targ;
	int ret;

	if (oc->ready)
		return 0;
	targ = vmlinux_target(oc->want_index, &index, oc->why, sizeof(oc->why));
	if ((ret = brt_core_init(&oc->core, local, targ)))
		return ret;
	oc->core.index = index;
	oc->ready = 1;
	return 0;
}

int brt_object_prog_link(struct bpfrt_object *obj, struct bpfrt_program *prog)
{
	char err[512];
	int ret;

	if (prog->p->link_state)
		return prog->p->link_state < 0 ? prog->p->link_state : 0;
	ret = brt_elf_prog_link(obj->elf, (size_t)(prog - obj->progs), err, sizeof(err));
	if (ret)
		brt_print(BPFRT_WARN, "%s\n", err);
	return ret;
}

int brt_object_core_prog(struct bpfrt_object *obj, struct bpfrt_program *prog)
{
	struct brt_object_core *oc = obj->core;
	struct brt_core_stats *st = &obj->core_stats;
	struct brt_elf_prog *p = prog->p;
	const char *name = obj->elf->name;
	char err[512];
	int ret = 0;

	if ((ret = brt_object_prog_link(obj, prog)))
		return ret;
	if (prog->core_done || !oc)
		return prog->core_err;
	prog->core_done = 1;
	if (p->ncores && (ret = core_ready(oc, obj->elf->btf))) {
		prog->core_err = ret;
		return ret;
	}
	for (size_t k = 0; k < p->ncores && !ret; k++) {
		const struct brt_elf_core *c = &p->cores[k];
		struct brt_core_res res;
		int poisoned;

		ret = brt_core_calc(&oc->core, p->name, c->rec, &res, err, sizeof(err));
		if (ret == -ESRCH) {
			brt_print(BPFRT_WARN, "%s: %s (%s); refusing to load it unrelocated "
				  "(insn #%u of the linked program)\n", name, err, oc->why,
				  c->insn_idx);
			break;
		}
		if (!ret)
			ret = brt_core_patch(p->insns, p->insn_cnt, c->insn_idx, p->name, c->rec,
					     &res, &poisoned, err, sizeof(err));
		if (ret) {
			char desc[256];

			brt_core_describe(obj->elf->btf, c->rec, desc, sizeof(desc));
			if (err[0]) /* a few refusals (bad sizes) have no detail */
				brt_print(BPFRT_WARN, "%s: %s\n", name, err);
			brt_print(BPFRT_WARN, "%s: prog '%s': relo #%u (%s, insn #%u of the "
				  "linked program): failed to relocate: %s\n", name, p->name,
				  c->rec->sec_rec, desc, c->insn_idx, strerror(-ret));
			break;
		}
		if (err[0])
			brt_print(BPFRT_WARN, "%s\n", err);
		if (poisoned)
			brt_print(BPFRT_DEBUG, "prog '%s': relo #%u: substituting insn #%u w/ "
				  "invalid insn\n", p->name, c->rec->sec_rec, c->insn_idx);
		st->applied[c->rec->kind]++;
		st->poisoned += poisoned;
	}
	prog->core_err = ret;
	return ret;
}

int brt_object_core_all(struct bpfrt_object *obj)
{
	int ret = 0;

	for (size_t i = 0; i < obj->elf->nprogs && ret != -ENOMEM; i++)
		ret = brt_object_core_prog(obj, &obj->progs[i]);
	return ret == -ENOMEM ? ret : 0;
}

void brt_object_core_free(struct bpfrt_object *obj)
{
	struct brt_object_core *oc = obj->core;

	if (!oc)
		return;
	brt_core_fini(&oc->core);
	brt_core_index_free(oc->own_index);
	brt_btf_free(oc->own_targ); /* vmlinux's stays in the process's cache */
	free(oc);
	obj->core = NULL;
}
