/* test_kern_ctx_oracle.c - bpf_cast_to_kern_ctx() of XDP and tc programs in test runs
 * (attach/kern_ctx.c), against the kernel.  tests/progs_core/kern_ctx.bpf.c reads the
 * kernel's struct xdp_buff (its buffer pointers, frame_sz, rxq->dev's ifindex, name and
 * network namespace) and struct sk_buff (len, head, data, end, tail, protocol, mark, dev,
 * skb_shinfo()'s meta_len and nr_frags, and a load through its NULL frag_list, which the
 * kernel makes fault-safe) and stores what it read in an array.  Each program is
 * loaded into the kernel and into bpfrt (the object API, .kernel on one side), run once
 * on the same packet, and the arrays and run results must be equal.  Before session 25
 * bpfrt's runs stopped with EFAULT (the cast returned the user-visible context, read with
 * the kernel's layout), as did the kernel selftests' type_cast md_xdp and md_skb.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpfrt.h"
#include "bpfrt/object.h"
#include "harness.h"
#include "transcript.h"

#define OBJ_DIR BPFRT_BINARY_DIR "/progs_core_kctx"
#define NOUT 16

struct side {
	int kernel;
	int err;           /* load or run: -errno */
	uint32_t retval;
	uint64_t out[NOUT];
};

static void run_side(struct side *s, const char *prog, const void *pkt, uint32_t len)
{
	BPFRT_OPTS(bpfrt_object_open_opts, o, .kernel = s->kernel);
	union bpf_attr a;
	struct bpfrt_object *obj = bpfrt_object_open_file(OBJ_DIR "/kern_ctx.bpf.o", &o);
	int fd, out;

	memset(s->out, 0xee, sizeof(s->out));
	s->retval = 0;
	if (!obj || bpfrt_object_load(obj)) {
		s->err = -errno;
		fprintf(stderr, "%s load: %s\n%s\n", s->kernel ? "kernel" : "bpfrt", strerror(errno),
			obj && bpfrt_object_log(obj) ? bpfrt_object_log(obj) : "");
		bpfrt_object_close(obj);
		return;
	}
	fd = bpfrt_program_fd(bpfrt_object_find_program_by_name(obj, prog));
	out = bpfrt_map__fd(bpfrt_object_find_map_by_name(obj, "out"));
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uintptr_t)pkt;
	a.test.data_size_in = len;
	a.test.repeat = 1;
	s->err = (s->kernel ? kernel_bpf : bpfrt_bpf)(BPF_PROG_TEST_RUN, &a, sizeof(a)) ? -errno
											   : 0;
	s->retval = a.test.retval;
	for (uint32_t k = 0; k < NOUT; k++) {
		union bpf_attr e;

		memset(&e, 0, sizeof(e));
		e.map_fd = (uint32_t)out;
		e.key = (uintptr_t)&k;
		e.value = (uintptr_t)&s->out[k];
		(s->kernel ? kernel_bpf : bpfrt_bpf)(BPF_MAP_LOOKUP_ELEM, &e, sizeof(e));
	}
	bpfrt_object_close(obj);
}

static const char *const xdp_names[] = {
	"rxq->dev->ifindex", "dev->nd_net.net->ns.inum", "dev->name[0..8]", "dev->name[8..16]",
	"data_end - data", "data - data_hard_start", "frame_sz", "rxq->queue_index",
	"ctx->ingress_ifindex", "data_meta == data",
};
static const char *const skb_names[] = {
	"len", "data - head", "protocol", "mark", "shinfo->meta_len", "shinfo->frag_list->len",
	"shinfo->nr_frags", "dev->ifindex", "end", "tail", "data_len", "dev->nd_net.net->ns.inum",
};

static void compare(const char *prog, const char *const *names, size_t n)
{
	unsigned char pkt[64] = { 0 };
	struct side k = { .kernel = 1 }, b = { .kernel = 0 };

	/* Ethernet + IPv4 (eth_type_trans() gives skb->protocol from the ethertype) */
	pkt[12] = 0x08;
	pkt[14] = 0x45;
	run_side(&k, prog, pkt, sizeof(pkt));
	run_side(&b, prog, pkt, sizeof(pkt));
	T_CASE(prog);
	printf("%s: kernel err %d ret %u, bpfrt err %d ret %u\n", prog, k.err, k.retval, b.err,
	       b.retval);
	T_EQ_INT(0, k.err);
	T_EQ_INT(k.err, b.err);
	T_EQ_INT(k.retval, b.retval);
	for (size_t i = 0; i < n; i++) {
		T_CASE(names[i]);
		if (k.out[i] != b.out[i])
			printf("differs: %s %s: kernel %#llx, bpfrt %#llx\n", prog, names[i],
			       (unsigned long long)k.out[i], (unsigned long long)b.out[i]);
		printf("  %s: %#llx\n", names[i], (unsigned long long)k.out[i]);
		T_EQ_U64(k.out[i], b.out[i]);
	}
}

int main(void)
{
	char cmd[1024];
	int rc;

	if (geteuid() != 0)
		T_SKIP("the kernel's side needs root");
	/* a folder of its own: object.core_oracle builds the default one, maybe at once */
	snprintf(cmd, sizeof(cmd), "sh %s/tests/progs_core/build.sh %s clang", BPFRT_SOURCE_DIR,
		 OBJ_DIR);
	rc = system(cmd);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) == 77)
		T_SKIP("the CO-RE programs could not be built (see above)");
	if (WEXITSTATUS(rc))
		T_FAIL("build.sh failed: %d", WEXITSTATUS(rc));
	compare("xdp_kctx", xdp_names, sizeof(xdp_names) / sizeof(xdp_names[0]));
	compare("skb_kctx", skb_names, sizeof(skb_names) / sizeof(skb_names[0]));
	return t_done();
}
