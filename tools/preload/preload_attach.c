/* preload_attach.c - bpfrt programs on the kernel's perf events and raw tracepoints:
 * perf_event_open() of a tracepoint or probe is remembered (tp_track()), and
 * PERF_EVENT_IOC_SET_BPF, BPF_LINK_CREATE (BPF_PERF_EVENT) or BPF_RAW_TRACEPOINT_OPEN of
 * a bpfrt program runs it in this process on the kernel's records; the links it hands
 * out (and preload_net.c's) detach on close() (preload.c: bpfrt_link_close()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "preload_int.h"

#define MAX_TP 256

/* Probe perf events: tracepoints (perf_event_open(PERF_TYPE_TRACEPOINT), libbpf's
 * attach_tracepoint, and tracefs kprobe/uprobe events, libbpf's legacy probes) and the
 * kprobe/uprobe PMUs (libbpf's attach_kprobe/attach_uprobe).  The kernel's event is
 * opened as asked (its errno when it refuses) and remembered with its attr; attaching a
 * bpfrt program to it (PERF_EVENT_IOC_SET_BPF, or BPF_LINK_CREATE with BPF_PERF_EVENT)
 * runs the program in this process on the kernel's records: a tracepoint program on
 * the tracepoint's records (bpfrt_tracepoint_attach(), as `bpfrt trace` does), a kprobe
 * program on the probe's sampled registers (bpfrt_perf_event_attach()).  DISABLE or
 * close() of the event detaches what SET_BPF attached; a link from LINK_CREATE detaches
 * when it is closed. */
struct tp_fd {
	int fd;
	dev_t dev;
	ino_t ino;
	struct perf_event_attr attr; /* as opened; config1 points at name for the PMUs */
	char *name;                  /* kprobe function or uprobe path, a copy (or NULL) */
	int pid, cpu;                /* perf_event_open()'s pid and cpu */
	int link;                    /* bpfrt's link from SET_BPF, or -1 */
};

static struct tp_fd tp_fds[MAX_TP];
static int ntp;
static pthread_mutex_t tp_lock = PTHREAD_MUTEX_INITIALIZER;

static void tp_forget(struct tp_fd *t)
{
	free(t->name);
	*t = tp_fds[--ntp];
}

static struct tp_fd *tp_find(int fd)
{
	struct stat st;

	for (int i = 0; i < ntp; i++) {
		if (tp_fds[i].fd != fd)
			continue;
		if (!fstat(fd, &st) && st.st_ino == tp_fds[i].ino && st.st_dev == tp_fds[i].dev)
			return &tp_fds[i];
		if (tp_fds[i].link >= 0)
			real_close(tp_fds[i].link);
		tp_forget(&tp_fds[i]); /* closed and reused */
		return NULL;
	}
	return NULL;
}

/* The type numbers of the kprobe and uprobe PMUs, read once; -1 where there is none. */
static long pmu_types[2] = { -2, -2 };

static long pmu_type(int uprobe)
{
	if (pmu_types[uprobe] == -2) {
		char buf[32];
		FILE *f = fopen(uprobe ? "/sys/bus/event_source/devices/uprobe/type"
				       : "/sys/bus/event_source/devices/kprobe/type", "re");

		pmu_types[uprobe] = f && fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : -1;
		if (f)
			fclose(f);
	}
	return pmu_types[uprobe];
}

/* A perf event the kernel opened: remember it when it is a probe bpfrt can attach to. */
void tp_track(int fd, const struct perf_event_attr *attr, int pid, int cpu)
{
	struct tp_fd e = { .fd = fd, .attr = *attr, .pid = pid, .cpu = cpu, .link = -1 };
	struct stat st;
	int pmu = (long)attr->type == pmu_type(0) || (long)attr->type == pmu_type(1);

	/* software and hardware events take perf_event programs (bpftrace's interval and
	 * profile probes: a CPU clock on each CPU) */
	if (attr->type != PERF_TYPE_TRACEPOINT && attr->type != PERF_TYPE_SOFTWARE &&
	    attr->type != PERF_TYPE_HARDWARE && !pmu)
		return;
	if (fstat(fd, &st))
		return;
	e.dev = st.st_dev;
	e.ino = st.st_ino;
	if (pmu && attr->config1) {
		/* the function name or path lives in the caller's memory only for the call */
		char buf[4096];
		size_t n = read_user(attr->config1, buf, sizeof(buf));

		if (!memchr(buf, '\0', n) || !(e.name = strdup(buf)))
			return;
		e.attr.config1 = (uint64_t)(uintptr_t)e.name;
	}
	pthread_mutex_lock(&tp_lock);
	if (!tp_find(fd) && ntp < MAX_TP) {
		tp_fds[ntp++] = e;
		e.name = NULL;
	}
	pthread_mutex_unlock(&tp_lock);
	free(e.name);
}

/* "category:name" of tracefs id, or -1 with errno ENOENT. */
static int tp_name(uint64_t id, char *out, size_t len)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };

	for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
		DIR *cats = opendir(roots[r]);
		struct dirent *c, *e;

		while (cats && (c = readdir(cats))) {
			char path[512];
			DIR *evs;

			if (c->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", roots[r], c->d_name);
			evs = opendir(path);
			while (evs && (e = readdir(evs))) {
				char idp[800], buf[32];
				FILE *f;
				int match = 0;

				if (e->d_name[0] == '.')
					continue;
				snprintf(idp, sizeof(idp), "%s/%s/id", path, e->d_name);
				f = fopen(idp, "re");
				if (!f)
					continue;
				match = fgets(buf, sizeof(buf), f) && strtoull(buf, NULL, 10) == id;
				fclose(f);
				if (match) {
					snprintf(out, len, "%s:%s", c->d_name, e->d_name);
					closedir(evs);
					closedir(cats);
					return 0;
				}
			}
			if (evs)
				closedir(evs);
		}
		if (cats)
			closedir(cats);
	}
	errno = ENOENT;
	return -1;
}

/* Attach bpfrt program prog_fd (of type ptype) to the event copy t describes: a link fd,
 * or -1 with errno and one line on stderr. */
static int ev_attach(const struct tp_fd *t, int prog_fd, int ptype)
{
	char name[600];
	int link;

	if (ptype == BPF_PROG_TYPE_KPROBE || ptype == BPF_PROG_TYPE_PERF_EVENT) {
		/* a probe's program runs on its hits on every CPU whatever the event's cpu (the
		 * kernel's trace_call_bpf(); libbpf opens probes on CPU 0), a timer's or
		 * counter's on that CPU's overflows only */
		BPFRT_OPTS(bpfrt_perf_event_opts, o,
			   .cpu_plus1 = ptype == BPF_PROG_TYPE_PERF_EVENT && t->cpu >= 0 ?
					t->cpu + 1u : 0);

		link = bpfrt_perf_event_attach(prog_fd, &t->attr, sizeof(t->attr), t->pid, &o);
		if (link < 0) {
			int e = -link;

			if (ptype == BPF_PROG_TYPE_PERF_EVENT || t->attr.type == PERF_TYPE_SOFTWARE ||
			    t->attr.type == PERF_TYPE_HARDWARE)
				fprintf(stderr, "bpfrt-preload: perf event of type %u config %llu: "
						"bpfrt cannot attach the program: %s\n",
					t->attr.type, (unsigned long long)t->attr.config,
					strerror(e));
			else
				fprintf(stderr, "bpfrt-preload: %s %s: bpfrt cannot attach the "
						"program: %s\n", (long)t->attr.type == pmu_type(1) ?
						"uprobe" : "kprobe", t->name ? t->name : "(address)",
					strerror(e));
			errno = e;
			return -1;
		}
		return link;
	}
	if (ptype != BPF_PROG_TYPE_TRACEPOINT || t->attr.type != PERF_TYPE_TRACEPOINT) {
		fprintf(stderr, "bpfrt-preload: a bpfrt program of type %d on a perf event of "
				"type %u: not attachable (EINVAL)\n", ptype, t->attr.type);
		errno = EINVAL;
		return -1;
	}
	if (tp_name(t->attr.config, name, sizeof(name))) {
		fprintf(stderr, "bpfrt-preload: tracepoint id %llu: not found in tracefs: "
				"cannot attach the program in bpfrt\n",
			(unsigned long long)t->attr.config);
		errno = EINVAL;
		return -1;
	}
	link = bpfrt_tracepoint_attach(prog_fd, name, NULL);
	if (link < 0) {
		int e = -link;

		fprintf(stderr, "bpfrt-preload: tracepoint %s: bpfrt cannot attach the program: "
				"%s\n", name, strerror(e));
		errno = e;
		return -1;
	}
	return link;
}

/* A copy of fd's entry (name duplicated: free it), or 0 when fd is no tracked event. */
static int tp_copy(int fd, struct tp_fd *out)
{
	struct tp_fd *t;
	int found;

	pthread_mutex_lock(&tp_lock);
	t = tp_find(fd);
	found = t != NULL;
	if (t) {
		*out = *t;
		out->name = t->name ? strdup(t->name) : NULL;
		if (out->name)
			out->attr.config1 = (uint64_t)(uintptr_t)out->name;
	}
	pthread_mutex_unlock(&tp_lock);
	return found;
}

/* PERF_EVENT_IOC_SET_BPF of prog_fd on a tracked event: 1 with *ret when bpfrt took it
 * (a bpfrt program), 0 for the kernel (one of its own programs). */
int tp_set_bpf(int fd, int prog_fd, int *ret)
{
	struct tp_fd copy, *t;
	int ptype = prog_type(prog_fd), link;

	if (!ntp || ptype < 0 || !tp_copy(fd, &copy))
		return 0;
	*ret = -1;
	if (copy.link >= 0) {
		free(copy.name);
		errno = EEXIST; /* the kernel's answer for a second program on one event */
		return 1;
	}
	link = ev_attach(&copy, prog_fd, ptype);
	free(copy.name);
	if (link < 0)
		return 1;
	bpfrt_link_hide(link); /* SET_BPF makes no kernel link: unseen by bpftool link */
	pthread_mutex_lock(&tp_lock);
	t = tp_find(fd);
	if (t && t->link < 0) {
		t->link = link;
		link = -1;
		*ret = 0;
	} else {
		errno = t ? EEXIST : EBADF;
	}
	pthread_mutex_unlock(&tp_lock);
	if (link >= 0)
		real_close(link);
	return 1;
}

/* BPF_LINK_CREATE with BPF_PERF_EVENT (what libbpf uses once its perf-link probe
 * passes): 1 with *ret when the preload answered, 0 for bpfrt_bpf(). */
int perf_link_create(const union bpf_attr *attr, long *ret)
{
	int prog_fd = (int)attr->link_create.prog_fd, fd = (int)attr->link_create.target_fd;
	int ptype = prog_type(prog_fd), link;
	struct tp_fd copy;

	if (attr->link_create.attach_type != BPF_PERF_EVENT || ptype < 0)
		return 0;
	*ret = -1;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		errno = EBADF; /* the kernel's answer for a bad event fd (libbpf probes it) */
		return 1;
	}
	if (!tp_copy(fd, &copy)) {
		fprintf(stderr, "bpfrt-preload: BPF_LINK_CREATE of a bpfrt program on fd %d: "
				"not a tracepoint, kprobe or uprobe event (EINVAL)\n", fd);
		errno = EINVAL;
		return 1;
	}
	if (attr->link_create.perf_event.bpf_cookie)
		fprintf(stderr, "bpfrt-preload: BPF_LINK_CREATE: the bpf_cookie is not kept "
				"(bpf_get_attach_cookie() answers 0)\n");
	link = ev_attach(&copy, prog_fd, ptype);
	free(copy.name);
	if (link < 0)
		return 1;
	*ret = link;
	return 1;
}

/* BPF_RAW_TRACEPOINT_OPEN of a kernel raw tracepoint (a name without the "provider:"
 * of bpfrt's in-application probes, which bpfrt_bpf() serves): bpfrt runs the program on
 * the records of the tracepoint it can rebuild the arguments from (sys_enter,
 * sys_exit); any other gets the kernel's answer for a program fd it does not know
 * (EINVAL) and the library's line on stderr.  1 with *ret when answered here. */
int raw_tp_open(const union bpf_attr *attr, long *ret)
{
	int prog_fd = (int)attr->raw_tracepoint.prog_fd, link;
	char name[128];

	memset(name, 0, sizeof(name));
	if (!attr->raw_tracepoint.name ||
	    !read_user(attr->raw_tracepoint.name, name, sizeof(name)) ||
	    !memchr(name, '\0', sizeof(name)) || strchr(name, ':') ||
	    prog_type(prog_fd) != BPF_PROG_TYPE_RAW_TRACEPOINT)
		return 0;
	link = bpfrt_raw_tracepoint_attach(prog_fd, name, NULL);
	*ret = link;
	if (link < 0) {
		*ret = -1;
		errno = link == -EOPNOTSUPP ? EINVAL : -link;
		return 1;
	}
	return 1;
}

/* Detach fd's program (DISABLE or close of the event). */
void tp_detach(int fd, int forget)
{
	struct tp_fd *t;
	int link = -1;

	if (!ntp)
		return;
	pthread_mutex_lock(&tp_lock);
	t = tp_find(fd);
	if (t) {
		link = t->link;
		t->link = -1;
		if (forget)
			tp_forget(t);
	}
	pthread_mutex_unlock(&tp_lock);
	if (link >= 0) {
		bpfrt_link_detach(link);
		real_close(link);
	}
}
