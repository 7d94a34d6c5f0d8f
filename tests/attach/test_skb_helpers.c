/* test_skb_helpers.c - bpf_skb_load_bytes checked against the kernel: the same program,
 * loaded as a socket filter and as a tc classifier, runs on the same packet through
 * bpfrt's BPF_PROG_TEST_RUN and the kernel's, for offsets and lengths inside, at the edge
 * of and past the packet (the helper then fails with -EFAULT and zeroes the buffer).  The
 * return value folds the helper's result and the 16 bytes it wrote, so any difference
 * shows.  The verifier side: a call with a non-constant length or a destination that is
 * not stack is refused, by bpfrt as by the kernel.  Kernel comparisons skip without root.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "kernel_prog.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ (c), (d), (s), (o), (i) })
#define MOV_K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_X(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_K(d, i) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_W(d, s, o) I(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_DW(d, o, i) I(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define ALU_X(op, d, s) I(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#define PROG_LEN 23

/* r0 = ret(skb_load_bytes(skb, off, fp - 16, len)) * 31 folded with the 16 bytes at fp-16
 * (pre-filled with a pattern, so bytes the helper did not write show too). */
static void build(struct bpf_insn *p, int32_t off, int32_t len)
{
	int n = 0;

	p[n++] = ST_DW(10, -16, 0x5a5a5a5a);
	p[n++] = ST_DW(10, -8, 0x5a5a5a5a);
	p[n++] = MOV_K(2, off);
	p[n++] = MOV_X(3, 10);
	p[n++] = ADD_K(3, -16);
	p[n++] = MOV_K(4, len);
	p[n++] = CALL(BPF_FUNC_skb_load_bytes);
	p[n++] = MOV_X(6, 0);
	p[n++] = I(BPF_ALU | BPF_MUL | BPF_K, 6, 0, 0, 31);
	for (int k = 0; k < 4; k++) {
		p[n++] = LDX_W(7, 10, -16 + 4 * k);
		p[n++] = ALU_X(BPF_XOR, 6, 7);
		p[n++] = I(BPF_ALU | BPF_LSH | BPF_K, 6, 0, 0, 1);
	}
	p[n++] = MOV_X(0, 6);
	p[n++] = EXIT();
	(void)n; /* == PROG_LEN: the last slot is unused */
}

static int bpfrt_run(int fd, const uint8_t *pkt, size_t len, uint32_t *retval)
{
	BPFRT_OPTS(bpfrt_test_run_opts, o, .data_in = pkt, .data_size_in = (uint32_t)len);
	int ret = bpfrt_prog_test_run_opts(fd, &o);

	*retval = o.retval;
	return ret;
}

int main(void)
{
	static const struct {
		int32_t off, len;
	} cases[] = {
		{ 0, 1 }, { 0, 16 }, { 2, 8 }, { 20, 16 }, { 48, 16 }, { 49, 16 }, { 63, 1 },
		{ 64, 1 }, { 60, 8 }, { 100, 4 }, { -1, 4 }, { INT32_MAX, 4 }, { -14, 4 },
	};
	static const enum bpf_prog_type types[] = { BPF_PROG_TYPE_SOCKET_FILTER,
						    BPF_PROG_TYPE_SCHED_CLS };
	uint8_t pkt[78]; /* 14 Ethernet + 64: socket filters see 64, tc sees 78 */
	struct bpf_insn p[PROG_LEN];
	int have_kernel = geteuid() == 0, compared = 0;

	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 7 + 3);
	pkt[12] = 0x08;
	pkt[13] = 0;
	for (size_t t = 0; t < 2; t++) {
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			uint32_t r_b = 0, r_k = 0;
			int fb, fk = -1;

			build(p, cases[c].off, cases[c].len);
			T_CASE(t ? "tc" : "socket filter");
			fb = bpfrt_prog_load(types[t], "lb", "GPL", p, PROG_LEN, NULL);
			T_ASSERT(fb >= 0);
			if (fb < 0)
				continue;
			T_EQ_INT(0, bpfrt_run(fb, pkt, sizeof(pkt), &r_b));
			if (have_kernel)
				fk = kprog_load(types[t], p, PROG_LEN);
			if (fk >= 0) {
				T_EQ_INT(0, kprog_run(fk, pkt, sizeof(pkt), &r_k, NULL, 0));
				if (r_b != r_k)
					printf("off %d len %d: bpfrt %#x kernel %#x\n", cases[c].off,
					       cases[c].len, r_b, r_k);
				T_EQ_U64(r_k, r_b);
				compared++;
				close(fk);
			}
			close(fb);
		}
	}
	/* the verifier: the length must be a constant > 0, the destination writable memory */
	T_CASE("verifier");
	build(p, 0, 0);
	T_ASSERT(bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "lb", "GPL", p, PROG_LEN,
				 NULL) < 0);
	if (have_kernel)
		T_ASSERT(kprog_load(BPF_PROG_TYPE_SOCKET_FILTER, p, PROG_LEN) < 0);
	build(p, 0, 4);
	p[3] = MOV_X(3, 1); /* destination: the context */
	T_ASSERT(bpfrt_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "lb", "GPL", p, PROG_LEN,
				 NULL) < 0);
	if (have_kernel)
		T_ASSERT(kprog_load(BPF_PROG_TYPE_SOCKET_FILTER, p, PROG_LEN) < 0);
	build(p, 0, 4); /* XDP has no skb_load_bytes */
	T_ASSERT(bpfrt_prog_load(BPF_PROG_TYPE_XDP, "lb", "GPL", p, PROG_LEN, NULL) < 0);
	printf("%d runs compared with the kernel\n", compared);
	return t_done();
}
