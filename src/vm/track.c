/* track.c - the checked engine's optional write tracking: which registers and stack bytes
 * a run has written, so that a read of anything else faults.  The kernel's verifier
 * refuses such reads, so a program that runs to its end without one only observes what it
 * computed itself and must give the same result on every engine, whatever the unchecked
 * engines (fast interpreter, JIT) leave in unwritten registers and stack.  Rules follow
 * the verifier: r1, r2 and r10 start written; a helper call or LD_ABS/LD_IND leaves r1-r5
 * unwritten; a bpf-to-bpf callee starts with r1-r5 and r10 only and a fresh stack frame.
 */
#include <string.h>

#include "vm/vm.h"

/* Bitmask of register r. */
#define REG(r) (1u << (r))
#define ARGS (REG(1) | REG(2) | REG(3) | REG(4) | REG(5))

void brt_vm_track_init(struct brt_track *t, const uint8_t *stack, uint8_t helper_args)
{
	memset(t, 0, sizeof(*t));
	t->written = REG(1) | REG(2) | REG(10);
	t->stack_lo = (uint64_t)(uintptr_t)stack;
	t->helper_args = helper_args > 5 ? 5 : helper_args;
}

static int stack_bit(const struct brt_track *t, uint64_t i)
{
	return t->stack[i / 8] >> (i % 8) & 1;
}

/* Bytes [addr, addr + size) of the stack: all written (read), or mark them written. */
static int stack_access(struct brt_track *t, uint64_t addr, unsigned size, int write)
{
	uint64_t i = addr - t->stack_lo;

	if (addr < t->stack_lo || i >= BRT_VM_STACK_BYTES || size > BRT_VM_STACK_BYTES - i)
		return 0; /* not stack: a region, written by whoever granted it */
	for (unsigned k = 0; k < size; k++) {
		if (write)
			t->stack[(i + k) / 8] |= (uint8_t)(1u << ((i + k) % 8));
		else if (!stack_bit(t, i + k))
			return -1;
	}
	return 0;
}

/* Registers one instruction reads and writes (memory aside). */
static void reg_sets(const struct brt_dinsn *d, unsigned *rd, unsigned *wr)
{
	const struct brt_opinfo *info = &brt_ops[d->op];

	*rd = 0;
	*wr = 0;
	switch (info->shape) {
	case BRT_SHAPE_ALU_IMM:
		*rd = d->op == BRT_OP_mov64_imm || d->op == BRT_OP_mov32_imm ? 0 : REG(d->dst);
		*wr = REG(d->dst);
		break;
	case BRT_SHAPE_ALU_REG:
		/* every mov form (plain and sign-extending) shares the opcode's BPF_MOV bits */
		*rd = REG(d->src) | (BPF_OP(info->opcode) == BPF_MOV ? 0 : REG(d->dst));
		*wr = REG(d->dst);
		break;
	case BRT_SHAPE_ALU_UNARY:
	case BRT_SHAPE_ENDIAN:
		*rd = *wr = REG(d->dst);
		break;
	case BRT_SHAPE_LOAD:
		*rd = REG(d->src);
		*wr = REG(d->dst);
		break;
	case BRT_SHAPE_STORE_IMM:
	case BRT_SHAPE_JMP_IMM:
	case BRT_SHAPE_CALLX:
		*rd = REG(d->dst);
		break;
	case BRT_SHAPE_STORE_REG:
	case BRT_SHAPE_JMP_REG:
		*rd = REG(d->dst) | REG(d->src);
		break;
	case BRT_SHAPE_ATOMIC:
		*rd = REG(d->dst) | REG(d->src);
		if (info->disc_val == BPF_CMPXCHG) {
			*rd |= REG(0);
			*wr = REG(0);
		} else if (info->disc_val & BPF_FETCH) {
			*wr = REG(d->src);
		}
		break;
	case BRT_SHAPE_LDDW:
		*wr = REG(d->dst);
		break;
	case BRT_SHAPE_LD_IND:
		*rd = REG(d->src);
		break;
	default:
		break;
	}
}

static int fault_reg(struct brt_fault *f, unsigned missing)
{
	f->kind = BRT_FAULT_UNWRITTEN_REG;
	f->reg = (uint8_t)__builtin_ctz(missing);
	return -1;
}

void brt_vm_track_return(struct brt_track *t)
{
	if (t->depth)
		t->written = (t->saved[--t->depth] & ~ARGS) | REG(0);
}

int brt_vm_track(struct brt_track *t, const struct brt_dinsn *d, const uint64_t *reg,
		 struct brt_fault *f)
{
	unsigned rd, wr, size;
	uint8_t base;
	enum brt_shape shape;

	if (d->op == BRT_OP_INVALID)
		return 0;
	shape = brt_ops[d->op].shape;
	reg_sets(d, &rd, &wr);
	if (rd & ~t->written)
		return fault_reg(f, rd & ~t->written);
	size = brt_isa_access_size(brt_ops[d->op].opcode);
	switch (shape) {
	case BRT_SHAPE_LOAD:
	case BRT_SHAPE_ATOMIC:
		base = shape == BRT_SHAPE_LOAD ? d->src : d->dst;
		if (stack_access(t, reg[base] + (uint64_t)(int64_t)d->off, size, 0)) {
			f->kind = BRT_FAULT_UNWRITTEN_STACK;
			f->size = size;
			f->reg = base;
			f->off = d->off;
			return -1;
		}
		if (shape == BRT_SHAPE_ATOMIC)
			stack_access(t, reg[base] + (uint64_t)(int64_t)d->off, size, 1);
		break;
	case BRT_SHAPE_STORE_IMM:
	case BRT_SHAPE_STORE_REG:
		stack_access(t, reg[d->dst] + (uint64_t)(int64_t)d->off, size, 1);
		break;
	case BRT_SHAPE_CALL:
		/* r1..rN for N = helper_args */
		rd = (REG(t->helper_args + 1) - 1) & ~REG(0);
		if (rd & ~t->written)
			return fault_reg(f, rd & ~t->written);
		t->written = (t->written & ~ARGS) | REG(0);
		return 0;
	case BRT_SHAPE_CALLX:
		t->written = (t->written & ~ARGS) | REG(0);
		return 0;
	case BRT_SHAPE_LD_ABS:
	case BRT_SHAPE_LD_IND:
		t->written = (t->written & ~ARGS) | REG(0);
		return 0;
	case BRT_SHAPE_CALL_LOCAL:
		if (t->depth + 1 >= BRT_MAX_CALL_DEPTH)
			return 0; /* the loop reports the depth fault */
		t->saved[t->depth++] = (uint16_t)t->written;
		t->written &= ARGS | REG(10);
		/* the callee's frame is the next 512 bytes down: nothing written there yet */
		memset(t->stack + (BRT_VM_STACK_BYTES - (t->depth + 1) * BRT_STACK_SIZE) / 8, 0,
		       BRT_STACK_SIZE / 8);
		return 0;
	case BRT_SHAPE_EXIT:
		if (!(t->written & REG(0)))
			return fault_reg(f, REG(0));
		brt_vm_track_return(t);
		return 0;
	default:
		break;
	}
	t->written |= wr;
	return 0;
}
