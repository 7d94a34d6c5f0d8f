/* test_disasm_oracle.c - the kernel style of the disassembler against the real thing:
 * programs that use (nearly) every row of the opcode table are loaded into the running
 * kernel with log_level 2, and each "N: (xx) ..." line of its verifier log must equal
 * what brt_disasm_insn() prints for instruction N.  Needs root; skipped otherwise.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "isa/isa.h"

#define I(code, dst, src, off, imm) \
	((struct bpf_insn){ (code), (dst), (src), (off), (imm) })

struct prog {
	struct bpf_insn insns[1024];
	size_t n;
};

static void add(struct prog *p, struct bpf_insn insn)
{
	if (p->n < sizeof(p->insns) / sizeof(p->insns[0]))
		p->insns[p->n++] = insn;
}

/* r1-r5 hold small scalars, r0 too (cmpxchg reads it). */
static void init_regs(struct prog *p)
{
	for (uint8_t r = 0; r <= 5; r++)
		add(p, I(BPF_ALU64 | BPF_MOV | BPF_K, r, 0, 0, r + 1));
}

/* One instruction for row op that the verifier accepts in this program: scalars in
 * r0-r5, stack slots fp-8 and fp-16 initialised, r6 = ctx.  Returns 0 when the row
 * cannot appear in a loadable program (callx, call local: tested separately). */
/* What a conditional jump of variant 1 jumps over; the verifier knows the registers'
 * values, so it may never look at it. */
static const struct bpf_insn filler = { BPF_ALU64 | BPF_MOV | BPF_K, 9, 0, 0, -1 };

static int is_filler(const struct bpf_insn *insn)
{
	return !memcmp(insn, &filler, sizeof(filler));
}

static int is_shift(uint8_t code)
{
	return BPF_OP(code) == BPF_LSH || BPF_OP(code) == BPF_RSH || BPF_OP(code) == BPF_ARSH;
}

/* variant 0: small positive values, jumps of +0; variant 1: negative immediates and
 * offsets, conditional jumps over one instruction, other registers. */
static int row_insn(enum brt_op op, unsigned variant, struct prog *p)
{
	const struct brt_opinfo *info = &brt_ops[op];
	struct bpf_insn insn = I(info->opcode, variant ? 5 : 1, 0, 0, 0);
	int jumps = 0;

	switch ((enum brt_shape)info->shape) {
	case BRT_SHAPE_ALU_IMM:
	case BRT_SHAPE_JMP_IMM:
		/* a valid shift count and a non-zero divisor */
		insn.imm = !variant ? 3 : is_shift(info->opcode) ? 31 : -7;
		jumps = info->shape == BRT_SHAPE_JMP_IMM;
		break;
	case BRT_SHAPE_ALU_REG:
	case BRT_SHAPE_JMP_REG:
		insn.src_reg = variant ? 4 : 2;
		jumps = info->shape == BRT_SHAPE_JMP_REG;
		break;
	case BRT_SHAPE_LOAD:
		insn.src_reg = BPF_REG_10;
		insn.off = -16;
		break;
	case BRT_SHAPE_STORE_IMM:
		insn.dst_reg = BPF_REG_10;
		insn.off = -16;
		insn.imm = variant ? 0x7fffffff : -5;
		break;
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_ATOMIC:
		insn.dst_reg = BPF_REG_10;
		insn.src_reg = 3;
		insn.off = -8;
		break;
	case BRT_SHAPE_LDDW:
		add(p, I(info->opcode, 4, 0, 0, 0x55667788));
		add(p, I(0, 0, 0, 0, (int32_t)0x91223344));
		return 1;
	case BRT_SHAPE_LD_ABS:
		insn.dst_reg = 0;
		insn.imm = 2;
		break;
	case BRT_SHAPE_LD_IND:
		insn.dst_reg = 0;
		insn.src_reg = 2;
		insn.imm = variant ? 3 : -1;
		break;
	case BRT_SHAPE_CALL:
		insn.dst_reg = 0;
		insn.imm = BPF_FUNC_ktime_get_ns;
		break;
	case BRT_SHAPE_JA:
	case BRT_SHAPE_JA32:
		insn.dst_reg = 0; /* +0: what it jumped over would be unreachable */
		break;
	case BRT_SHAPE_MAY_GOTO: /* conditional: it may jump over one instruction */
		insn.dst_reg = 0;
		jumps = 1;
		break;
	case BRT_SHAPE_ENDIAN:
	case BRT_SHAPE_ALU_UNARY:
		break;
	case BRT_SHAPE_EXIT:
	case BRT_SHAPE_CALLX:
	case BRT_SHAPE_CALL_LOCAL:
		return 0;
	}
	if (info->disc == BRT_DISC_OFF)
		insn.off = (int16_t)info->disc_val;
	else if (info->disc == BRT_DISC_IMM)
		insn.imm = info->disc_val;
	else if (info->disc == BRT_DISC_SRC)
		insn.src_reg = (uint8_t)info->disc_val;
	if (jumps && variant)
		insn.off = 1;
	add(p, insn);
	if (jumps && variant)
		add(p, filler);
	/* calls and packet loads clobber r1-r5 */
	if (info->shape == BRT_SHAPE_CALL || info->shape == BRT_SHAPE_LD_ABS ||
	    info->shape == BRT_SHAPE_LD_IND)
		init_regs(p);
	return 1;
}

static void build_table_prog(struct prog *p, unsigned variant)
{
	p->n = 0;
	add(p, I(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0)); /* r6 = ctx for ld_abs/ind */
	init_regs(p);
	add(p, I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -8, 0));
	add(p, I(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -16, 0));
	for (int op = 0; op < BRT_OP_COUNT; op++)
		row_insn((enum brt_op)op, variant, p);
	add(p, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
	/* a bpf-to-bpf call and its callee */
	add(p, I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1));
	add(p, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	add(p, I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1));
	add(p, I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
}

static int load(const struct prog *p, char *log, size_t log_len)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(uintptr_t)p->insns;
	attr.insn_cnt = (uint32_t)p->n;
	attr.license = (uint64_t)(uintptr_t) "GPL";
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = (uint32_t)log_len;
	attr.log_level = 2;
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Compare every "N: (xx) text[   ; state]" line of log with our rendering of insn N. */
static size_t compare_log(const struct prog *p, char *log, uint8_t *seen)
{
	size_t compared = 0;

	for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
		char *end, *semi, ours[160];
		unsigned long idx = strtoul(line, &end, 10);

		if (end == line || strncmp(end, ": (", 3) || idx >= p->n)
			continue;
		end += 2;
		semi = strchr(end, ';');
		if (semi)
			*semi = 0;
		for (size_t k = strlen(end); k && end[k - 1] == ' '; k--)
			end[k - 1] = 0;
		brt_disasm_insn(&p->insns[idx], p->n - idx, BRT_DISASM_KERNEL, ours, sizeof(ours));
		T_CASE(end);
		T_EQ_STR(end, ours);
		seen[idx] = 1;
		compared++;
	}
	return compared;
}

int main(void)
{
	static struct prog p;
	size_t log_len = 16 << 20, compared, missing = 0;
	uint8_t *seen;
	char *log;
	int ret;

	if (geteuid() != 0)
		T_SKIP("needs root to load programs into the kernel");
	log = calloc(1, log_len);
	if (!log)
		T_SKIP("out of memory");
	for (unsigned variant = 0; variant < 2; variant++) {
		build_table_prog(&p, variant);
		seen = calloc(p.n, 1);
		if (!seen)
			T_SKIP("out of memory");
		log[0] = 0;
		ret = load(&p, log, log_len);
		if (ret == -EPERM || ret == -ENOSYS)
			T_SKIP("bpf() not permitted here (%s)", strerror(-ret));
		T_CASE("kernel accepts the table program");
		T_EQ_INT(0, ret);
		if (ret)
			fprintf(stderr, "verifier log tail:\n%s\n",
				strlen(log) > 2000 ? log + strlen(log) - 2000 : log);
		compared = compare_log(&p, log, seen);
		missing = 0;
		for (size_t i = 0; i < p.n; i++) {
			if (seen[i] || (i && p.insns[i - 1].code == (BPF_LD | BPF_IMM | BPF_DW)) ||
			    is_filler(&p.insns[i]))
				continue;
			missing++;
			T_CASE("every instruction printed by the kernel");
			T_FAIL("variant %u: insn %zu never appeared in the log", variant, i);
		}
		printf("variant %u: %zu instructions, %zu log lines compared, %zu not in the "
		       "log\n", variant, p.n, compared, missing);
		free(seen);
	}
	free(log);
	return t_done();
}
