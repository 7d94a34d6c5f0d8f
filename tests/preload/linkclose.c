/* linkclose.c - the kernel's close() of a link's last fd detaches and frees the link
 * before it returns: a libbpf application that destroys a link and at once asks for its
 * id (BPF_LINK_GET_FD_BY_ID) gets ENOENT.  Under the preload the same must hold for
 * every kind of link bpfrt makes (links.bpf.c's programs: a uprobe perf link, raw_tp
 * sys_enter, XDP and tcx on lo), ROUNDS times each; a dup of a link's fd keeps the link
 * after the first close (the kernel's close() of a copy); once the skeleton is destroyed
 * the XDP and tc programs are gone by id at once.  (The kernel frees a raw tracepoint or
 * perf link's program only after an RCU grace period, dealloc_deferred, so that program
 * and the map it uses are asked for until gone, at most 2 s.)  Prints counts only (no
 * ids), to be compared between the kernel and `bpfrt exec`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "links.skel.h"

#define ROUNDS 10

__attribute__((noinline)) int lc_func(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static unsigned id_of(int fd)
{
	struct bpf_link_info info; /* id is the second field of every kind's info */
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* 1: found (the fd closed again), 0: ENOENT, -1: anything else */
static int found(int (*by_id)(__u32), unsigned id)
{
	int fd = by_id(id);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == ENOENT ? 0 : -1;
}

/* found() once it had time to go (at most 2 s) */
static int found_late(int (*by_id)(__u32), unsigned id)
{
	for (int i = 0; i < 200 && found(by_id, id) == 1; i++)
		usleep(10000);
	return found(by_id, id);
}

/* A link of kind k as libbpf makes it: its fd, or -1. */
static int attach(struct links *s, int k, struct bpf_link **out)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "lc_func");
	int lo = if_nametoindex("lo");

	*out = NULL;
	switch (k) {
	case 1:
		*out = bpf_program__attach_uprobe_opts(s->progs.lk_up, 0, "/proc/self/exe", 0,
						       &uo);
		break;
	case 2:
		*out = bpf_program__attach(s->progs.lk_raw);
		break;
	case 3:
		*out = bpf_program__attach_xdp(s->progs.lk_xdp, lo);
		break;
	default:
		return bpf_link_create(bpf_program__fd(s->progs.lk_tc), lo, 46 /* TCX_INGRESS */,
				       NULL);
	}
	return *out ? bpf_link__fd(*out) : -1;
}

static void detach(struct bpf_link *l, int fd)
{
	if (l)
		bpf_link__destroy(l); /* close() of its fd (and of a perf link's event) */
	else
		close(fd);
}

int main(void)
{
	static const char *const kinds[] = { "", "uprobe", "raw_tp", "xdp", "tcx" };
	struct links *s = links__open_and_load();
	unsigned pid[4], mid;
	struct bpf_link *l;
	int fd, copy, gone;

	if (!s) {
		printf("open/load failed\n");
		return 1;
	}
	lc_func(getppid());
	for (int k = 1; k < 5; k++) {
		int ok = 0, enoent = 0;

		for (int r = 0; r < ROUNDS; r++) {
			unsigned id;

			fd = attach(s, k, &l);
			id = fd >= 0 ? id_of(fd) : 0;
			ok += id != 0;
			detach(l, fd);
			enoent += id && found(bpf_link_get_fd_by_id, id) == 0;
		}
		printf("%s: attached %d of %d, link by id ENOENT at once after the close %d\n",
		       kinds[k], ok, ROUNDS, enoent);
	}
	/* a copy of the fd keeps the link; the last close frees it */
	fd = attach(s, 2, &l);
	copy = fd >= 0 ? dup(fd) : -1;
	mid = fd >= 0 ? id_of(fd) : 0;
	detach(l, fd);
	printf("raw_tp dup: after the first close %d", found(bpf_link_get_fd_by_id, mid));
	close(copy);
	printf(", after the copy's %d\n", found(bpf_link_get_fd_by_id, mid));
	/* the programs and the map, once the skeleton (their fds) is gone */
	pid[0] = id_of(bpf_program__fd(s->progs.lk_xdp));
	pid[1] = id_of(bpf_program__fd(s->progs.lk_tc));
	pid[2] = id_of(bpf_program__fd(s->progs.lk_raw));
	pid[3] = id_of(bpf_program__fd(s->progs.lk_up));
	mid = id_of(bpf_map__fd(s->maps.hits));
	links__destroy(s);
	gone = found(bpf_prog_get_fd_by_id, pid[0]);
	printf("after the skeleton's destroy, at once: xdp prog %d, tc prog %d\n", gone,
	       found(bpf_prog_get_fd_by_id, pid[1]));
	gone = found_late(bpf_prog_get_fd_by_id, pid[2]);
	printf("within 2 s: raw_tp prog %d, uprobe prog %d, map %d\n", gone,
	       found_late(bpf_prog_get_fd_by_id, pid[3]), found_late(bpf_map_get_fd_by_id, mid));
	printf("done\n");
	return 0;
}
