/* link.c - a program attached to a live interface: the userspace stand-in for the seed's
 * setsockopt(SO_ATTACH_BPF) on a packet socket, behind a link fd like every attachment
 * (src/api/link.c: closing every copy of the fd, or bpfrt_link_detach(), detaches).  The
 * link's thread reads the interface's TPACKET_V3 ring (socket.c) and runs the program on
 * every packet (pkt_prog.c), counting what the kernel's hook would do with each verdict.
 * Counters are updated with relaxed atomics so the application reads them while the
 * thread runs.  A redirect to an interface (XDP through a devmap, tc's bpf_redirect() to
 * egress) and XDP_TX are acted on: the packet as the program left it is sent out of that
 * interface through a send-only packet socket, as the kernel's xmit would.  A devmap entry
 * with a program of its own (BPF_XDP_DEVMAP) has it run on the packet first, with the
 * entry's interface as egress_ifindex: its XDP_PASS sends the packet as that program
 * left it, any other verdict drops it (the kernel's dev_map_bpf_prog_run_skb()).  A
 * redirect to a cpumap entry hands a copy of the packet to the link's worker thread for that CPU
 * (pinned to it, a queue of the entry's size at most, as the kernel's per-CPU kthread),
 * which runs the entry's BPF_XDP_CPUMAP program, if any, and sends what it redirects to
 * an interface; what it passes would enter the kernel's stack on that CPU, which user
 * space cannot do.  The packet itself still reaches this host's stack (a capture cannot
 * take it away), and other actions (drops, broadcasts) are only counted.  A redirect to
 * an xskmap entry cannot reach the socket's RX ring (user space cannot find the socket's
 * UMEM: util/xsk_diag.c); it is counted as the kernel's generic XDP ends it: XDP_DROP
 * when the socket is not bound to the receiving interface's queue 0 (or is closed),
 * else a redirect.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/link_rec.h"
#include "attach/attach.h"
#include "util/util.h"
#include "vm/vm.h"

#define OPTS_KNOWN                                                                         \
	(offsetof(struct bpfrt_pkt_link_opts, bpfrt_pkt_link_opts__last) +                  \
	 sizeof(((struct bpfrt_pkt_link_opts *)0)->bpfrt_pkt_link_opts__last))
#define POLL_MS 100 /* how soon an idle thread notices a detach or the last close */
/* A busy thread looks for a detach every this many packets: the look is a system call,
 * which would cost more than a short program if made per packet. */
#define STOP_EVERY 64

#define XSK_RECHECK_MS 200 /* how long an AF_XDP socket's binding is taken as known */
#define MAX_WORKERS 64  /* CPUs a link keeps cpumap workers for */
#define WORKER_QUEUE 256 /* packets waiting for one (the kernel: the entry's qsize) */

/* A redirect target's own program (a devmap entry's), opened by id at its first packet;
 * one per thread (the link thread's, each cpumap worker's), as a brt_pkt_prog is. */
struct entry_prog {
	uint32_t id;
	struct brt_pkt_prog *prog;
};

struct cpu_pkt {
	struct cpu_pkt *next;
	uint32_t prog_id;
	uint32_t len;
	uint8_t data[];
};

/* A cpumap CPU's worker: packets queued by the link thread, run on that CPU. */
struct cpu_worker {
	unsigned cpu;
	uint32_t ifindex;            /* the attached interface: the packets' ingress */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cpu_pkt *head, **tail; /* under lock */
	unsigned queued;             /* under lock */
	int stop;                    /* under lock */
	struct entry_prog prog;      /* the cpumap entry's program (worker only) */
	struct entry_prog dev_prog;  /* a devmap entry's its program redirects to */
	int tx_fd;
};

struct iface_source {
	struct brt_live *live;
	struct brt_pkt_prog *prog;
	uint32_t ifindex;
	unsigned dir;                     /* enum bpfrt_pkt_dir of the capture */
	int tx_fd;                        /* packet socket redirects are sent on, or -1 */
	struct entry_prog dev_prog;       /* the last devmap entry program run */
	uint64_t xsk_cookie;              /* the last xskmap target: its socket, */
	int xsk_ok;                       /* whether it would get the frame, */
	int64_t xsk_checked;              /* when that was asked (ms) */
	struct cpu_worker *workers[MAX_WORKERS]; /* started at a CPU's first packet */
	struct bpfrt_pkt_link_stats st;   /* atomic fields */
};

static void add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

/* Send a packet out of interface res->redirect_ifindex through the packet socket *fd
 * (opened at the first use). */
static void send_out(int *fd, const struct brt_pkt_result *res)
{
	struct sockaddr_ll to;

	if (res->caplen < ETH_HLEN)
		return;
	if (*fd < 0) /* protocol 0: the socket receives nothing */
		*fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return;
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_ifindex = (int)res->redirect_ifindex;
	/* a down or vanished target drops the packet, as the kernel's xmit does */
	if (sendto(*fd, res->data, res->caplen, MSG_DONTWAIT, (struct sockaddr *)&to,
		   sizeof(to)) < 0)
		brt_print(BPFRT_DEBUG, "bpfrt: attach: redirect to ifindex %u: %s\n",
			  res->redirect_ifindex, strerror(errno));
}

/* Make e hold program id (opened through bpf() by id when it changes); NULL when it is
 * gone (the map entry held it: a drop, as a target that vanished). */
static struct brt_pkt_prog *entry_prog_get(struct entry_prog *e, uint32_t id)
{
	char err[256];

	if (e->id != id) {
		union bpf_attr a;
		int fd;

		brt_pkt_prog_close(e->prog);
		e->prog = NULL;
		e->id = id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = bpfrt_bpf(BPF_PROG_GET_FD_BY_ID, &a, sizeof(a));
		if (fd >= 0) {
			if (brt_pkt_prog_open(fd, &e->prog, err, sizeof(err)))
				e->prog = NULL;
			close(fd);
		}
	}
	return e->prog;
}

/* Send a redirect's packet out of its interface; a devmap entry's program runs on it
 * first (ingress: where the packet came in), and only its XDP_PASS sends the packet, as
 * that program left it. */
static void send_redirect(int *fd, struct entry_prog *e, uint32_t ingress,
			  const struct brt_pkt_result *res)
{
	struct brt_pkt pkt = { .data = res->data, .caplen = res->caplen, .wirelen = res->caplen };
	struct brt_pkt_prog *prog;
	struct brt_pkt_result out;
	char err[256];

	if (!res->redirect_prog_id) {
		send_out(fd, res);
		return;
	}
	prog = entry_prog_get(e, res->redirect_prog_id);
	if (!prog)
		return;
	brt_pkt_prog_set_egress(prog, res->redirect_ifindex);
	/* a fault is XDP_ABORTED; XDP_TX and XDP_REDIRECT are invalid there: all drop */
	if (brt_pkt_prog_run(prog, &pkt, ingress, 0, &out, err, sizeof(err)) ||
	    out.verdict != XDP_PASS)
		return;
	out.redirect_ifindex = res->redirect_ifindex;
	send_out(fd, &out);
}

/* A cpumap worker's packet: the entry's program runs on it (opened by id at the first
 * packet for it); a redirect to an interface is sent. */
static void worker_packet(struct cpu_worker *w, const struct cpu_pkt *cp)
{
	struct brt_pkt pkt = { .data = cp->data, .caplen = cp->len, .wirelen = cp->len };
	struct brt_pkt_prog *prog;
	struct brt_pkt_result res;
	char err[256];

	if (!cp->prog_id)
		return; /* the kernel builds an skb for its stack here */
	prog = entry_prog_get(&w->prog, cp->prog_id);
	if (!prog || brt_pkt_prog_run(prog, &pkt, w->ifindex, 0, &res, err, sizeof(err)))
		return;
	/* a cpumap program may redirect again (not XDP_TX: the kernel drops that) */
	if (res.action == BPFRT_PKT_REDIRECT && res.redirect_ifindex && !res.redirect_cpu)
		send_redirect(&w->tx_fd, &w->dev_prog, w->ifindex, &res);
}

static void *worker_run(void *arg)
{
	struct cpu_worker *w = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* an offline CPU: anywhere */
	for (;;) {
		struct cpu_pkt *cp;

		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		cp = w->head;
		w->head = cp->next;
		if (!w->head)
			w->tail = &w->head;
		w->queued--;
		pthread_mutex_unlock(&w->lock);
		worker_packet(w, cp);
		free(cp);
	}
	return NULL;
}

static void worker_free(struct cpu_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	while (w->head) {
		struct cpu_pkt *cp = w->head;

		w->head = cp->next;
		free(cp);
	}
	brt_pkt_prog_close(w->prog.prog);
	brt_pkt_prog_close(w->dev_prog.prog);
	if (w->tx_fd >= 0)
		close(w->tx_fd);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Queue a copy of the packet for its cpumap CPU's worker (started at the first one); a
 * full queue drops it, as the kernel's ptr_ring does. */
static void to_cpu(struct iface_source *s, const struct brt_pkt_result *res)
{
	unsigned cpu = res->redirect_cpu - 1;
	struct cpu_worker *w;
	struct cpu_pkt *cp;

	if (cpu >= MAX_WORKERS)
		return;
	w = s->workers[cpu];
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return;
		w->cpu = cpu;
		w->ifindex = s->ifindex;
		w->tail = &w->head;
		w->tx_fd = -1;
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->cond, NULL);
		if (pthread_create(&w->thread, NULL, worker_run, w)) {
			pthread_cond_destroy(&w->cond);
			pthread_mutex_destroy(&w->lock);
			free(w);
			return;
		}
		s->workers[cpu] = w;
	}
	cp = malloc(sizeof(*cp) + res->caplen);
	if (!cp)
		return;
	cp->next = NULL;
	cp->prog_id = res->redirect_prog_id;
	cp->len = res->caplen;
	memcpy(cp->data, res->data, res->caplen);
	pthread_mutex_lock(&w->lock);
	if (w->queued >= WORKER_QUEUE) {
		pthread_mutex_unlock(&w->lock);
		free(cp);
		return;
	}
	*w->tail = cp;
	w->tail = &cp->next;
	w->queued++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Would the kernel's xsk_rcv_check() take a frame of this interface (queue 0) for the
 * AF_XDP socket of res?  Asked of sock_diag at most every XSK_RECHECK_MS; a kernel
 * without AF_XDP diagnostics leaves the binding the map update saw (a socket bound
 * somewhere counts as taking it; a closed one as gone). */
static int xsk_takes(struct iface_source *s, const struct brt_pkt_result *res)
{
	int64_t now = now_ms();
	uint32_t ifindex = 0, queue = 0;
	int r;

	if (res->redirect_xsk != s->xsk_cookie || now - s->xsk_checked >= XSK_RECHECK_MS) {
		s->xsk_cookie = res->redirect_xsk;
		s->xsk_checked = now;
		r = brt_xsk_binding(res->redirect_xsk, &ifindex, &queue);
		if (r == -EOPNOTSUPP)
			s->xsk_ok = res->redirect_xsk_dev == s->ifindex ||
				    res->redirect_xsk_dev == XSK_BOUND_SOMEWHERE;
		else
			s->xsk_ok = r == 1 && ifindex == s->ifindex && queue == 0;
	}
	return s->xsk_ok;
}

/* What a redirect or XDP_TX does; returns the action to count (a redirect the kernel
 * would fail is its XDP_DROP).  Not back out of the attached interface when the capture
 * also sees sent packets: the program would see its own packet again (the kernel's hooks
 * never run twice on one packet). */
static enum bpfrt_pkt_action deliver(struct iface_source *s, const struct brt_pkt_result *res)
{
	if (res->redirect_xsk)
		return xsk_takes(s, res) ? res->action : BPFRT_PKT_DROP;
	if (res->redirect_cpu)
		to_cpu(s, res);
	else if (res->redirect_ifindex &&
		 (res->redirect_ifindex != s->ifindex || s->dir == BPFRT_PKT_DIR_INGRESS))
		send_redirect(&s->tx_fd, &s->dev_prog, s->ifindex, res);
	return res->action;
}

static void iface_run(struct brt_link *link)
{
	struct iface_source *s = link->priv;
	struct brt_pkt_result res;
	struct brt_pkt pkt;
	unsigned since_look = 0;
	char err[256];
	int ret;

	for (;;) {
		uint64_t seen, drops = 0;

		ret = brt_live_next(s->live, &pkt, POLL_MS, err, sizeof(err));
		/* a syscall: only when idle or once in a while */
		if ((ret == 0 || (s->st.packets & 0xfff) == 0) &&
		    brt_live_stats(s->live, &seen, &drops) == 0 && drops) {
			add(&s->st.kernel_drops, drops);
			atomic_fetch_add(&link->lost, drops);
		}
		if (ret < 0) {
			brt_print(BPFRT_WARN, "bpfrt: attach: %s\n", err);
			break;
		}
		if (ret == 0 || ++since_look == STOP_EVERY) {
			since_look = 0;
			if (brt_link_should_stop(link))
				break;
		}
		if (ret == 0)
			continue;
		if (brt_pkt_prog_run(s->prog, &pkt, s->ifindex, 0, &res, err, sizeof(err))) {
			/* the checked engine stopped a faulty run: the kernel would drop it */
			res.action = BPFRT_PKT_ABORTED;
			atomic_fetch_add(&link->errors, 1);
		} else {
			if (res.verdict)
				atomic_fetch_add(&link->nonzero, 1);
			res.action = deliver(s, &res);
		}
		add(&s->st.actions[res.action], 1);
		add(&s->st.bytes, pkt.wirelen);
		add(&s->st.packets, 1);
		atomic_fetch_add(&link->events, 1);
	}
	/* the ring failed: wait for the detach or the last close like a quiet link */
	while (ret < 0 && !brt_link_should_stop(link))
		brt_live_next(s->live, &pkt, POLL_MS, err, sizeof(err));
}

static void iface_free(struct iface_source *s)
{
	for (int i = 0; i < MAX_WORKERS; i++)
		if (s->workers[i])
			worker_free(s->workers[i]);
	if (s->tx_fd >= 0)
		close(s->tx_fd);
	brt_pkt_prog_close(s->dev_prog.prog);
	brt_live_close(s->live);
	brt_pkt_prog_close(s->prog);
	free(s);
}

static void iface_detach(struct brt_link *link)
{
	iface_free(link->priv);
}

static const struct brt_link_ops iface_ops = {
	.kind = "iface",
	.run = iface_run,
	.detach = iface_detach,
};

/* What the kernel's link for this attachment would be to other processes: an XDP link,
 * a tcx link for a classifier on one direction; a socket filter on an interface has no
 * kernel counterpart and stays unseen. */
static void publish(int fd, uint32_t prog_type, uint32_t ifindex, uint32_t dir)
{
	struct brt_link_desc d = { .ifindex = ifindex };

	if (prog_type == BPF_PROG_TYPE_XDP) {
		d.type = BRT_LINK_XDP;
	} else if (prog_type == BPF_PROG_TYPE_SCHED_CLS && dir != BPFRT_PKT_DIR_ANY) {
		d.type = BRT_LINK_TCX;
		d.attach_type = dir == BPFRT_PKT_DIR_INGRESS ? 46 : 47; /* BPF_TCX_INGRESS/EGRESS */
	} else {
		return;
	}
	brt_link_publish(fd, &d);
}

int bpfrt_prog_attach_iface(int prog_fd, const char *iface,
			    const struct bpfrt_pkt_link_opts *opts, char *err, size_t errlen)
{
	struct iface_source *s;
	struct brt_link *link;
	uint32_t ifindex, prog_type;
	int ret;

	if (!iface || !brt_opts_valid(opts, OPTS_KNOWN, "bpfrt_pkt_link_opts")) {
		snprintf(err, errlen, "bpfrt_prog_attach_iface: bad arguments or options");
		errno = EINVAL;
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return -ENOMEM;
	}
	s->tx_fd = -1;
	s->dir = BRT_OPTS_GET(opts, direction, 0);
	ret = brt_pkt_prog_open(prog_fd, &s->prog, err, errlen);
	if (ret)
		goto fail;
	ret = brt_live_open(iface, BRT_OPTS_GET(opts, ring_blocks, 0), &s->live, err, errlen);
	if (ret)
		goto fail;
	ret = brt_live_set_direction(s->live, BRT_OPTS_GET(opts, direction, 0));
	if (ret) {
		snprintf(err, errlen, "bpfrt_prog_attach_iface: unknown direction %u",
			 BRT_OPTS_GET(opts, direction, 0));
		goto fail;
	}
	s->ifindex = if_nametoindex(iface);
	ifindex = s->ifindex;
	prog_type = brt_pkt_prog_obj(s->prog)->type;
	ret = brt_link_create(&iface_ops, brt_pkt_prog_obj(s->prog), s, &link);
	if (ret < 0) {
		snprintf(err, errlen, "iface '%s': starting the link: %s", iface, strerror(-ret));
		goto fail;
	}
	publish(ret, prog_type, ifindex, BRT_OPTS_GET(opts, direction, 0));
	return ret;
fail:
	iface_free(s);
	errno = -ret;
	return ret;
}

static void read_stats(struct brt_link *link, void *arg)
{
	const struct iface_source *s = link->priv;
	struct bpfrt_pkt_link_stats *st = arg;

	st->packets = __atomic_load_n(&s->st.packets, __ATOMIC_RELAXED);
	st->bytes = __atomic_load_n(&s->st.bytes, __ATOMIC_RELAXED);
	for (int i = 0; i < BPFRT_PKT_ACTION_MAX; i++)
		st->actions[i] = __atomic_load_n(&s->st.actions[i], __ATOMIC_RELAXED);
	st->kernel_drops = __atomic_load_n(&s->st.kernel_drops, __ATOMIC_RELAXED);
}

int bpfrt_pkt_link_stats(int link_fd, struct bpfrt_pkt_link_stats *st)
{
	int ret = brt_link_with(link_fd, &iface_ops, read_stats, st);

	if (ret)
		errno = -ret;
	return ret;
}
