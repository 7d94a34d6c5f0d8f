/* test_diff_oracle.c - the interpreter against the real kernel.  For every ALU, JMP, LDX,
 * ST, STX and atomic row of the opcode table, edge operands (0, 1, -1, INT_MIN, INT64_MIN,
 * shift counts at and past the width, zero divisors, ...) are run as small cases.  Cases
 * are batched: one XDP program per row and chunk, each case writing its full 64-bit
 * result into a slot of the packet, so BPF_PROG_TEST_RUN's data_out carries every result
 * (retval alone would give only 32 bits).  The same body runs on every bpfrt engine with
 * r1 = the packet; the packets must match byte for byte.
 * Cases the kernel's verifier refuses on principle are left out and counted: division by
 * an immediate 0 and immediate shifts >= the width (it rejects them; bpfrt masks).
 * Needs root; prints how many cases were compared.
 */
#include <errno.h>
#include <stdarg.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfrt.h"
#include "harness.h"
#include "isa/isa.h"
#include "util/util.h"

#define IN_BYTES 64                       /* input pattern for loads */
#define SLOTS 256                         /* results per program */
#define PKT_BYTES (IN_BYTES + SLOTS * 8)
#define MAX_INSNS 4096

static const uint64_t reg_vals[] = {
	0, 1, 2, 7, (uint64_t)-1, (uint64_t)-7, 31, 32, 33, 63, 64, 65,
	0x7fffffff, 0x80000000, 0xffffffff, 0xffffffff80000000ull, 0x8000000000000000ull,
	0x7fffffffffffffffull, 0x123456789abcdef0ull, 0x100000001ull,
};
static const int32_t imm_vals[] = {
	0, 1, 2, 7, -1, -7, 31, 32, 33, 63, 64, 65, INT32_MAX, INT32_MIN, 0x12345678,
};

struct prog {
	struct bpf_insn insns[MAX_INSNS];
	size_t n;
	unsigned slots;     /* result slots used */
	unsigned cases;     /* cases in the program */
	char what[SLOTS][96]; /* description of each slot */
};

static unsigned compared, skipped_verifier, kernel_rejected;

static void emit(struct prog *p, struct bpf_insn insn)
{
	if (p->n < MAX_INSNS)
		p->insns[p->n++] = insn;
}

static void emit_lddw(struct prog *p, uint8_t reg, uint64_t v)
{
	emit(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = reg,
				   .imm = (int32_t)(uint32_t)v });
	emit(p, (struct bpf_insn){ .imm = (int32_t)(uint32_t)(v >> 32) });
}

/* store register reg into the next result slot (packet base in r7) */
static void emit_result(struct prog *p, uint8_t reg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void emit_result(struct prog *p, uint8_t reg, const char *fmt, ...)
{
	va_list ap;

	emit(p, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_7,
				   .src_reg = reg, .off = (int16_t)(IN_BYTES + 8 * p->slots) });
	va_start(ap, fmt);
	vsnprintf(p->what[p->slots], sizeof(p->what[0]), fmt, ap);
	va_end(ap);
	p->slots++;
}

/* The row's instruction with its discriminating field set. */
static struct bpf_insn row_insn(enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	struct bpf_insn insn = { .code = info->opcode };

	if (info->disc == BRT_DISC_OFF)
		insn.off = (int16_t)info->disc_val;
	else if (info->disc == BRT_DISC_IMM)
		insn.imm = info->disc_val;
	else if (info->disc == BRT_DISC_SRC)
		insn.src_reg = (uint8_t)info->disc_val;
	return insn;
}

static uint8_t pkt_in[PKT_BYTES];

/* --- running ---------------------------------------------------------------------------- */

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static char vlog[1 << 20];

/* Kernel: XDP prologue reading data/data_end from the context. */
static int run_kernel(const struct prog *body, uint8_t *out)
{
	static struct bpf_insn full[MAX_INSNS + 16];
	union bpf_attr attr;
	size_t n = 0;
	int fd, ret;

	full[n++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 7,
				       .src_reg = 1, .off = 0 };
	full[n++] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 8,
				       .src_reg = 1, .off = 4 };
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 9,
				       .src_reg = 7 };
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 9,
				       .imm = PKT_BYTES };
	full[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_JGT | BPF_X, .dst_reg = 9,
				       .src_reg = 8, .off = (int16_t)body->n };
	memcpy(&full[n], body->insns, body->n * sizeof(full[0]));
	n += body->n;
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = XDP_PASS };
	full[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.insns = (uint64_t)(uintptr_t)full;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	vlog[0] = 0;
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		/* again with a log, for the message (a log can itself fail with ENOSPC) */
		ret = -errno;
		attr.log_buf = (uint64_t)(uintptr_t)vlog;
		attr.log_size = sizeof(vlog);
		attr.log_level = 1;
		fd = sys_bpf(BPF_PROG_LOAD, &attr);
		if (fd >= 0)
			close(fd);
		return ret;
	}
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)fd;
	attr.test.data_in = (uint64_t)(uintptr_t)pkt_in;
	attr.test.data_size_in = PKT_BYTES;
	attr.test.data_out = (uint64_t)(uintptr_t)out;
	attr.test.data_size_out = PKT_BYTES;
	attr.test.repeat = 1;
	ret = sys_bpf(BPF_PROG_TEST_RUN, &attr);
	if (ret < 0)
		ret = -errno;
	else if (attr.test.retval != XDP_PASS || attr.test.data_size_out != PKT_BYTES)
		ret = -EPROTO;
	close(fd);
	return ret;
}

static const struct {
	const char *name;
	enum bpfrt_engine engine;
} engines[] = {
	{ "interp", BPFRT_ENGINE_INTERP },
	{ "checked", BPFRT_ENGINE_CHECKED },
	{ "jit", BPFRT_ENGINE_JIT },
};

/* bpfrt: the same body with r1 = packet, r2 = its length. */
static int run_bpfrt(const struct prog *body, enum bpfrt_engine engine, uint8_t *out,
		     char *err, size_t errlen)
{
	static struct bpf_insn full[MAX_INSNS + 16];
	BPFRT_OPTS(bpfrt_vm_opts, o, .engine = engine);
	struct bpfrt_vm *vm;
	uint64_t r0;
	size_t n = 0;
	int ret;

	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 7,
				       .src_reg = 1 };
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 8,
				       .src_reg = 1 };
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_X, .dst_reg = 8,
				       .src_reg = 2 };
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 9,
				       .src_reg = 7 };
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 9,
				       .imm = PKT_BYTES };
	full[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_JGT | BPF_X, .dst_reg = 9,
				       .src_reg = 8, .off = (int16_t)body->n };
	memcpy(&full[n], body->insns, body->n * sizeof(full[0]));
	n += body->n;
	full[n++] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = XDP_PASS };
	full[n++] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };

	ret = bpfrt_vm_load(full, n, &o, &vm, err, errlen);
	if (ret)
		return ret;
	memcpy(out, pkt_in, PKT_BYTES);
	ret = bpfrt_vm_run(vm, out, PKT_BYTES, &r0, err, errlen);
	bpfrt_vm_free(vm);
	if (!ret && r0 != XDP_PASS) {
		snprintf(err, errlen, "returned %llu", (unsigned long long)r0);
		ret = -EPROTO;
	}
	return ret;
}

/* Run a batch everywhere and compare slot by slot; then empty it. */
static void flush(struct prog *p, enum brt_op op)
{
	static uint8_t kout[PKT_BYTES], uout[PKT_BYTES];
	char err[512];
	int ret;

	if (!p->slots)
		return;
	T_CASE(brt_ops[op].id);
	ret = run_kernel(p, kout);
	if (ret) {
		const char *last = vlog;

		for (const char *s = vlog; *s; s++)
			if (s[0] == '\n' && s[1])
				last = s + 1;
		printf("note: kernel refused %s batch (%s): %.200s", brt_ops[op].id,
		       strerror(-ret), last);
		kernel_rejected += p->cases;
		goto out;
	}
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		ret = run_bpfrt(p, engines[e].engine, uout, err, sizeof(err));
		if (ret == -EOPNOTSUPP)
			continue;
		if (ret) {
			T_FAIL("%s [%s]: %s", brt_ops[op].id, engines[e].name, err);
			continue;
		}
		for (unsigned s = 0; s < p->slots; s++) {
			uint64_t k, u;

			memcpy(&k, kout + IN_BYTES + 8 * s, 8);
			memcpy(&u, uout + IN_BYTES + 8 * s, 8);
			if (k == u) {
				T_OK();
				compared++;
			} else {
				T_FAIL("%s [%s]: kernel 0x%llx, bpfrt 0x%llx", p->what[s],
				       engines[e].name, (unsigned long long)k,
				       (unsigned long long)u);
			}
		}
		if (memcmp(kout, uout, IN_BYTES))
			T_FAIL("%s [%s]: input bytes differ", brt_ops[op].id, engines[e].name);
	}
out:
	p->n = 0;
	p->slots = 0;
	p->cases = 0;
}

/* Make room for a case of up to `slots` results and `insns` instructions. */
static void room(struct prog *p, enum brt_op op, unsigned slots, size_t insns)
{
	if (p->slots + slots > SLOTS || p->n + insns > MAX_INSNS - 16)
		flush(p, op);
	p->cases++;
}

/* --- case generators by operand shape ----------------------------------------------------- */

static int is_shift(uint8_t code)
{
	return BPF_OP(code) == BPF_LSH || BPF_OP(code) == BPF_RSH || BPF_OP(code) == BPF_ARSH;
}

static int is_divmod(uint8_t code)
{
	return BPF_OP(code) == BPF_DIV || BPF_OP(code) == BPF_MOD;
}

static void gen_alu(struct prog *p, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	unsigned width = BPF_CLASS(info->opcode) == BPF_ALU64 ? 64 : 32;

	for (size_t d = 0; d < BRT_ARRAY_SIZE(reg_vals); d++) {
		size_t nsrc = info->shape == BRT_SHAPE_ALU_REG ? BRT_ARRAY_SIZE(reg_vals)
			      : info->shape == BRT_SHAPE_ALU_IMM ? BRT_ARRAY_SIZE(imm_vals)
								 : 1;

		for (size_t s = 0; s < nsrc; s++) {
			struct bpf_insn insn = row_insn(op);

			insn.dst_reg = 1;
			if (info->shape == BRT_SHAPE_ALU_IMM) {
				insn.imm = imm_vals[s];
				/* the verifier refuses these outright */
				if ((is_divmod(info->opcode) && insn.imm == 0) ||
				    (is_shift(info->opcode) && (uint32_t)insn.imm >= width)) {
					skipped_verifier++;
					continue;
				}
			}
			room(p, op, 1, 8);
			emit_lddw(p, 1, reg_vals[d]);
			if (info->shape == BRT_SHAPE_ALU_REG) {
				insn.src_reg = 2;
				emit_lddw(p, 2, reg_vals[s]);
			}
			emit(p, insn);
			emit_result(p, 1, "%s dst=0x%llx %s=0x%llx", info->id,
				    (unsigned long long)reg_vals[d],
				    info->shape == BRT_SHAPE_ALU_IMM ? "imm" : "src",
				    info->shape == BRT_SHAPE_ALU_IMM ? (unsigned long long)(int64_t)insn.imm
				    : info->shape == BRT_SHAPE_ALU_REG ? (unsigned long long)reg_vals[s]
									  : 0ull);
		}
	}
}

static void gen_jmp(struct prog *p, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	int is_imm = info->shape == BRT_SHAPE_JMP_IMM;
	size_t nsrc = is_imm ? BRT_ARRAY_SIZE(imm_vals) : BRT_ARRAY_SIZE(reg_vals);

	for (size_t d = 0; d < BRT_ARRAY_SIZE(reg_vals); d++) {
		for (size_t s = 0; s < nsrc; s++) {
			struct bpf_insn insn = row_insn(op);

			room(p, op, 1, 10);
			emit_lddw(p, 1, reg_vals[d]);
			insn.dst_reg = 1;
			if (is_imm) {
				insn.imm = imm_vals[s];
			} else {
				emit_lddw(p, 2, reg_vals[s]);
				insn.src_reg = 2;
			}
			emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3,
						   .imm = 0 });
			insn.off = 1;
			emit(p, insn);
			emit(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JA, .off = 1 });
			emit(p, (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3,
						   .imm = 1 });
			emit_result(p, 3, "%s dst=0x%llx %s=0x%llx taken", info->id,
				    (unsigned long long)reg_vals[d], is_imm ? "imm" : "src",
				    is_imm ? (unsigned long long)(int64_t)imm_vals[s]
					   : (unsigned long long)reg_vals[s]);
		}
	}
}

static void gen_load(struct prog *p, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	unsigned size = brt_isa_access_size(info->opcode);

	for (unsigned off = 0; off + size <= IN_BYTES; off++) {
		struct bpf_insn insn = row_insn(op);

		room(p, op, 1, 3);
		emit_lddw(p, 3, 0x5a5a5a5a5a5a5a5aull); /* a load must replace all 64 bits */
		insn.dst_reg = 3;
		insn.src_reg = 7;
		insn.off = (int16_t)off;
		emit(p, insn);
		emit_result(p, 3, "%s [pkt+%u]", info->id, off);
	}
}

static void gen_store(struct prog *p, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];
	int is_imm = info->shape == BRT_SHAPE_STORE_IMM;
	size_t nval = is_imm ? BRT_ARRAY_SIZE(imm_vals) : BRT_ARRAY_SIZE(reg_vals);

	for (size_t v = 0; v < nval; v++) {
		struct bpf_insn insn = row_insn(op);

		room(p, op, 1, 6);
		/* the slot starts with a known pattern; the store overwrites its low bytes */
		emit_lddw(p, 3, 0xa5a5a5a5a5a5a5a5ull);
		emit_result(p, 3, "%s value=0x%llx", info->id,
			    is_imm ? (unsigned long long)(int64_t)imm_vals[v]
				   : (unsigned long long)reg_vals[v]);
		insn.dst_reg = 7;
		insn.off = (int16_t)(IN_BYTES + 8 * (p->slots - 1));
		if (is_imm) {
			insn.imm = imm_vals[v];
		} else {
			emit_lddw(p, 2, reg_vals[v]);
			insn.src_reg = 2;
		}
		emit(p, insn);
	}
}

static void gen_atomic(struct prog *p, enum brt_op op)
{
	const struct brt_opinfo *info = &brt_ops[op];

	for (size_t m = 0; m < BRT_ARRAY_SIZE(reg_vals); m += 3) {
		for (size_t s = 0; s < BRT_ARRAY_SIZE(reg_vals); s += 2) {
			/* cmpxchg: r0 equal to the memory (low half for 32-bit) or not */
			for (int eq = 0; eq < 2; eq++) {
				struct bpf_insn insn = row_insn(op);
				uint64_t r0 = eq ? reg_vals[m] : reg_vals[m] ^ 0x10;

				room(p, op, 3, 14);
				emit_lddw(p, 1, reg_vals[m]);
				emit(p, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | BPF_DW,
							   .dst_reg = 10, .src_reg = 1, .off = -8 });
				emit_lddw(p, 2, reg_vals[s]);
				emit_lddw(p, 0, r0);
				insn.dst_reg = 10;
				insn.src_reg = 2;
				insn.off = -8;
				emit(p, insn);
				emit(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_DW,
							   .dst_reg = 3, .src_reg = 10, .off = -8 });
				emit_result(p, 3, "%s mem=0x%llx src=0x%llx r0=0x%llx: memory",
					    info->id, (unsigned long long)reg_vals[m],
					    (unsigned long long)reg_vals[s], (unsigned long long)r0);
				emit_result(p, 2, "%s mem=0x%llx src=0x%llx r0=0x%llx: src", info->id,
					    (unsigned long long)reg_vals[m],
					    (unsigned long long)reg_vals[s], (unsigned long long)r0);
				emit_result(p, 0, "%s mem=0x%llx src=0x%llx r0=0x%llx: r0", info->id,
					    (unsigned long long)reg_vals[m],
					    (unsigned long long)reg_vals[s], (unsigned long long)r0);
			}
		}
	}
}

int main(void)
{
	static struct prog p;
	union bpf_attr probe;

	if (geteuid() != 0)
		T_SKIP("needs root for bpf(BPF_PROG_LOAD)");
	memset(&probe, 0, sizeof(probe));
	if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &probe, sizeof(probe)) < 0 && errno == ENOSYS)
		T_SKIP("no bpf() syscall");
	for (unsigned i = 0; i < IN_BYTES; i++)
		pkt_in[i] = (uint8_t)(i * 0x35 + 0x80) ^ (i & 8 ? 0xff : 0);
	memset(pkt_in + IN_BYTES, 0xa5, PKT_BYTES - IN_BYTES);

	for (unsigned op = 0; op < BRT_OP_COUNT; op++) {
		switch (brt_ops[op].shape) {
		case BRT_SHAPE_ALU_IMM:
		case BRT_SHAPE_ALU_REG:
		case BRT_SHAPE_ALU_UNARY:
		case BRT_SHAPE_ENDIAN:
			gen_alu(&p, (enum brt_op)op);
			break;
		case BRT_SHAPE_JMP_IMM:
		case BRT_SHAPE_JMP_REG:
			gen_jmp(&p, (enum brt_op)op);
			break;
		case BRT_SHAPE_LOAD:
			gen_load(&p, (enum brt_op)op);
			break;
		case BRT_SHAPE_STORE_IMM:
		case BRT_SHAPE_STORE_REG:
			gen_store(&p, (enum brt_op)op);
			break;
		case BRT_SHAPE_ATOMIC:
			gen_atomic(&p, (enum brt_op)op);
			break;
		default:
			continue; /* control flow, lddw, packet loads: covered elsewhere */
		}
		flush(&p, (enum brt_op)op);
	}
	printf("%u results compared with the kernel (all engines); %u cases left out because "
	       "the verifier refuses them (imm divisor 0, imm shift >= width); %u cases in "
	       "batches the kernel refused\n",
	       compared, skipped_verifier, kernel_rejected);
	T_ASSERT(compared > 10000);
	T_EQ_INT(0, kernel_rejected);
	return t_done();
}
