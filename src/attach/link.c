/* link.c - a program attached to a live interface: the userspace stand-in for the seed's
 * setsockopt(SO_ATTACH_BPF) on a packet socket.  A thread reads the interface's TPACKET_V3
 * ring (socket.c) and runs the program on every packet (pkt_prog.c), counting what the
 * kernel's hook would do with each verdict.  Counters are updated with relaxed atomics so
 * the application reads them while the thread runs.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "util/util.h"

#define OPTS_KNOWN                                                                         \
	(offsetof(struct bpfrt_pkt_link_opts, bpfrt_pkt_link_opts__last) +                  \
	 sizeof(((struct bpfrt_pkt_link_opts *)0)->bpfrt_pkt_link_opts__last))
#define POLL_MS 100 /* how soon the thread notices bpfrt_pkt_link_destroy() */

struct bpfrt_pkt_link {
	struct brt_live *live;
	struct brt_pkt_prog *prog;
	uint32_t ifindex;
	pthread_t thread;
	int stop;                         /* atomic */
	struct bpfrt_pkt_link_stats st;   /* atomic fields */
};

static void add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

static void *run(void *arg)
{
	struct bpfrt_pkt_link *l = arg;
	struct brt_pkt_result res;
	struct brt_pkt pkt;
	char err[256];
	int ret;

	while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE)) {
		uint64_t seen, drops = 0;

		ret = brt_live_next(l->live, &pkt, POLL_MS, err, sizeof(err));
		/* a syscall: only when idle or once in a while */
		if ((ret == 0 || (l->st.packets & 0xfff) == 0) &&
		    brt_live_stats(l->live, &seen, &drops) == 0 && drops)
			add(&l->st.kernel_drops, drops);
		if (ret < 0) {
			brt_print(BPFRT_WARN, "bpfrt: attach: %s\n", err);
			break;
		}
		if (ret == 0)
			continue;
		if (brt_pkt_prog_run(l->prog, &pkt, l->ifindex, 0, &res, err, sizeof(err))) {
			/* the checked engine stopped a faulty run: the kernel would drop it */
			res.action = BPFRT_PKT_ABORTED;
		}
		add(&l->st.actions[res.action], 1);
		add(&l->st.bytes, pkt.wirelen);
		add(&l->st.packets, 1);
	}
	return NULL;
}

int bpfrt_prog_attach_iface(int prog_fd, const char *iface,
			    const struct bpfrt_pkt_link_opts *opts, struct bpfrt_pkt_link **out,
			    char *err, size_t errlen)
{
	struct bpfrt_pkt_link *l;
	int ret;

	if (!iface || !out || !brt_opts_valid(opts, OPTS_KNOWN, "bpfrt_pkt_link_opts")) {
		snprintf(err, errlen, "bpfrt_prog_attach_iface: bad arguments or options");
		errno = EINVAL;
		return -EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return -ENOMEM;
	}
	ret = brt_pkt_prog_open(prog_fd, &l->prog, err, errlen);
	if (ret)
		goto fail;
	ret = brt_live_open(iface, BRT_OPTS_GET(opts, ring_blocks, 0), &l->live, err, errlen);
	if (ret)
		goto fail;
	l->ifindex = if_nametoindex(iface);
	ret = -pthread_create(&l->thread, NULL, run, l);
	if (ret) {
		snprintf(err, errlen, "iface '%s': starting the thread: %s", iface, strerror(-ret));
		goto fail;
	}
	*out = l;
	return 0;
fail:
	brt_live_close(l->live);
	brt_pkt_prog_close(l->prog);
	free(l);
	errno = -ret;
	return ret;
}

void bpfrt_pkt_link_stats(struct bpfrt_pkt_link *l, struct bpfrt_pkt_link_stats *st)
{
	st->packets = __atomic_load_n(&l->st.packets, __ATOMIC_RELAXED);
	st->bytes = __atomic_load_n(&l->st.bytes, __ATOMIC_RELAXED);
	for (int i = 0; i < BPFRT_PKT_ACTION_MAX; i++)
		st->actions[i] = __atomic_load_n(&l->st.actions[i], __ATOMIC_RELAXED);
	st->kernel_drops = __atomic_load_n(&l->st.kernel_drops, __ATOMIC_RELAXED);
}

void bpfrt_pkt_link_destroy(struct bpfrt_pkt_link *l)
{
	if (!l)
		return;
	__atomic_store_n(&l->stop, 1, __ATOMIC_RELEASE);
	pthread_join(l->thread, NULL);
	brt_live_close(l->live);
	brt_pkt_prog_close(l->prog);
	free(l);
}
