/* links.c - a libbpf application holding one link of each kind bpfrt publishes while
 * another process (bpftool, linkinfo) looks at them: a tracepoint, a uprobe and a
 * uretprobe on lk_func (perf links), raw_tp sys_enter, XDP on lo (bpf_program__attach_xdp)
 * and tcx ingress on lo (bpf_link_create: libbpf 1.1 has no tcx attach).  Prints the
 * program ids (for the looker to pick its links among the system's) and "ready", then
 * waits for a line on stdin and exits (closing the links detaches them). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "links.skel.h"

__attribute__((noinline)) int lk_func(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static unsigned prog_id(struct bpf_program *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) ? 0 : info.id;
}

int main(void)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "lk_func");
	struct links *s = links__open_and_load();
	int lo = if_nametoindex("lo"), tcx;
	char line[16];

	if (!s || !lo) {
		printf("open/load failed\n");
		return 1;
	}
	s->links.lk_tp = bpf_program__attach(s->progs.lk_tp);
	s->links.lk_up = bpf_program__attach_uprobe_opts(s->progs.lk_up, 0, "/proc/self/exe",
							 0, &uo);
	uo.retprobe = 1;
	s->links.lk_uret = bpf_program__attach_uprobe_opts(s->progs.lk_uret, 0,
							   "/proc/self/exe", 0, &uo);
	s->links.lk_raw = bpf_program__attach(s->progs.lk_raw);
	s->links.lk_xdp = bpf_program__attach_xdp(s->progs.lk_xdp, lo);
	tcx = bpf_link_create(bpf_program__fd(s->progs.lk_tc), lo, 46 /* BPF_TCX_INGRESS */,
			      NULL);
	printf("attached tp %d up %d uret %d raw %d xdp %d tcx %d\n", !!s->links.lk_tp,
	       !!s->links.lk_up, !!s->links.lk_uret, !!s->links.lk_raw, !!s->links.lk_xdp,
	       tcx >= 0);
	printf("progs %u %u %u %u %u %u\n", prog_id(s->progs.lk_tp), prog_id(s->progs.lk_up),
	       prog_id(s->progs.lk_uret), prog_id(s->progs.lk_raw), prog_id(s->progs.lk_xdp),
	       prog_id(s->progs.lk_tc));
	lk_func(getppid());
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	if (tcx >= 0)
		close(tcx);
	links__destroy(s);
	printf("done\n");
	return 0;
}
