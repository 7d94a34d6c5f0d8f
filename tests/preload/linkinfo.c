/* linkinfo.c - another process's links as bpftool finds them (BPF_LINK_GET_NEXT_ID,
 * BPF_LINK_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD), every field of 6.18's bpf_link_info
 * for the link types links.c makes.  Usage: linkinfo NAME=PROG_ID...: one line per link
 * of those programs, in argument order, with the program's NAME instead of ids (which
 * differ between the kernel and bpfrt); then the name of the first named link read into
 * a 4-byte buffer (ENOSPC, truncated) and BPF_LINK_DETACH of every link (perf and raw
 * tracepoint links: EOPNOTSUPP; XDP and tcx detach), and the walk again. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>

/* 6.18's struct bpf_link_info (the build machine's header may be older) */
struct kinfo {
	uint32_t type, id, prog_id, pad;
	union {
		struct { uint64_t tp_name; uint32_t tp_name_len, pad; uint64_t cookie; } raw_tp;
		struct { uint32_t ifindex; } xdp;
		struct { uint32_t ifindex, attach_type; } tcx;
		struct {
			uint32_t type, pad;
			struct { uint64_t name; uint32_t name_len, offset; uint64_t a, b, c; } u;
		} perf;
		uint8_t bytes[48];
	};
};

static int nprogs;
static const char *names[16];
static unsigned ids[16];

static int which(unsigned prog_id)
{
	for (int i = 0; i < nprogs; i++)
		if (ids[i] == prog_id)
			return i;
	return -1;
}

static int info(int fd, struct kinfo *k, char *name, uint32_t len)
{
	uint32_t klen = sizeof(*k);

	memset(k, 0, sizeof(*k));
	memset(name, 0, 256);
	if (bpf_obj_get_info_by_fd(fd, k, &klen))
		return -errno;
	/* the name, in a second call as bpftool does */
	if (k->type == 1) {
		k->raw_tp.tp_name = (uintptr_t)name;
		k->raw_tp.tp_name_len = len;
	} else if (k->type == 7) {
		k->perf.u.name = (uintptr_t)name;
		k->perf.u.name_len = len;
	} else {
		return 0;
	}
	return bpf_obj_get_info_by_fd(fd, k, &klen) ? -errno : 0;
}

static void show(const struct kinfo *k, const char *name)
{
	int lo = (int)if_nametoindex("lo");

	printf("%s: type %u", names[which(k->prog_id)], k->type);
	switch (k->type) {
	case 1:
		printf(" tp_name '%s' len %u cookie %llu", name, k->raw_tp.tp_name_len,
		       (unsigned long long)k->raw_tp.cookie);
		break;
	case 6:
		printf(" ifindex %s", (int)k->xdp.ifindex == lo ? "lo" : k->xdp.ifindex ? "?" : "0");
		break;
	case 11:
		printf(" ifindex %s attach_type %u",
		       (int)k->tcx.ifindex == lo ? "lo" : k->tcx.ifindex ? "?" : "0",
		       k->tcx.attach_type);
		break;
	case 7:
		printf(" perf_type %u name '%s' name_len %u offset %u", k->perf.type, name,
		       k->perf.u.name_len, k->perf.u.offset);
		/* uprobe: cookie, ref_ctr_offset; kprobe: addr, missed, cookie; tp: cookie */
		printf(" %llu %llu %llu", (unsigned long long)k->perf.u.a,
		       (unsigned long long)k->perf.u.b, (unsigned long long)k->perf.u.c);
		break;
	}
	printf("\n");
}

/* The fds of our links, in argument order. */
static int walk(int *fds)
{
	unsigned id = 0;
	int n = 0;

	for (int i = 0; i < nprogs; i++)
		fds[i] = -1;
	while (!bpf_link_get_next_id(id, &id)) {
		struct kinfo k;
		char name[256];
		int fd = bpf_link_get_fd_by_id(id), w;

		if (fd < 0) {
			printf("link %u: get_fd_by_id: %s\n", id, strerror(errno));
			continue;
		}
		if (info(fd, &k, name, sizeof(name)) || k.id != id ||
		    (w = which(k.prog_id)) < 0 || fds[w] >= 0) {
			close(fd);
			continue;
		}
		fds[w] = fd;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	int fds[16], n;

	for (int i = 1; i < argc && nprogs < 16; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			continue;
		*eq = 0;
		names[nprogs] = argv[i];
		ids[nprogs++] = (unsigned)strtoul(eq + 1, NULL, 10);
	}
	n = walk(fds);
	printf("links found: %d\n", n);
	for (int i = 0; i < nprogs; i++) {
		struct kinfo k;
		char name[256];

		if (fds[i] < 0) {
			printf("%s: no link\n", names[i]);
			continue;
		}
		if (info(fds[i], &k, name, sizeof(name)))
			printf("%s: info: %s\n", names[i], strerror(errno));
		else
			show(&k, name);
	}
	for (int i = 0; i < nprogs; i++) {
		struct kinfo k;
		char name[256];
		int err;

		if (fds[i] < 0)
			continue;
		err = info(fds[i], &k, name, 4);
		if (k.type == 1 || k.type == 7)
			printf("%s: 4-byte name buffer: %s '%s'\n", names[i],
			       err ? strerror(-err) : "ok", name);
		err = bpf_link_detach(fds[i]);
		printf("%s: detach: %s\n", names[i], err ? strerror(errno) : "ok");
	}
	for (int i = 0; i < nprogs; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	n = walk(fds);
	printf("links found after detach: %d\n", n);
	for (int i = 0; i < nprogs; i++)
		if (fds[i] >= 0) {
			struct kinfo k;
			char name[256];

			printf("still listed: ");
			if (info(fds[i], &k, name, sizeof(name)))
				printf("%s: info: %s\n", names[i], strerror(errno));
			else
				show(&k, name);
			close(fds[i]);
		}
	return 0;
}
