/* cbpf.c - classic BPF (what tcpdump and SO_ATTACH_FILTER speak) checked with the
 * kernel's classic rules and translated into an eBPF socket filter.
 *
 * Theory of operation.  Classic BPF has two 32-bit registers, A and X, sixteen scratch
 * words M[0..15], forward-only jumps and a packet it reads with absolute or X-relative
 * loads.  Each classic instruction becomes a short fixed sequence of eBPF instructions:
 * A in r0, X in r7, M[k] in the eBPF stack, packet loads as LD_ABS/LD_IND (which read
 * through the context in r6 and end the program with 0 when out of bounds - exactly the
 * classic rule).  All arithmetic is 32-bit and all compares are JMP32, so A and X stay
 * zero-extended 32-bit values and constants >= 2^31 compare as classic BPF does.  The
 * length of each sequence depends only on the classic instruction, never on jump
 * distances, so a single pass records where every classic instruction starts and a
 * fix-up pass then turns classic jump targets into eBPF offsets.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "bpfrt.h"
#include "isa/isa.h"

/* What the checker needs to know about a classic opcode. */
enum {
	CF_VALID = 1 << 0,
	CF_MEM_READ = 1 << 1,  /* reads M[k] */
	CF_MEM_WRITE = 1 << 2, /* writes M[k] */
	CF_JA = 1 << 3,        /* unconditional jump by k */
	CF_JCOND = 1 << 4,     /* conditional jump by jt / jf */
	CF_RET = 1 << 5,
	CF_DIV_K = 1 << 6,     /* division or modulo by constant k */
	CF_SHIFT_K = 1 << 7,   /* shift by constant k */
};

#define ALU_KX(op, fl)                                                                         \
	[BPF_ALU | op | BPF_K] = CF_VALID | (fl), [BPF_ALU | op | BPF_X] = CF_VALID
#define JMP_KX(op)                                                                             \
	[BPF_JMP | op | BPF_K] = CF_VALID | CF_JCOND, [BPF_JMP | op | BPF_X] = CF_VALID | CF_JCOND

/* The classic instruction set as Linux accepts it (BPF_RET | BPF_X is not part of it). */
static const uint8_t cflags[256] = {
	[BPF_LD | BPF_W | BPF_ABS] = CF_VALID,
	[BPF_LD | BPF_H | BPF_ABS] = CF_VALID,
	[BPF_LD | BPF_B | BPF_ABS] = CF_VALID,
	[BPF_LD | BPF_W | BPF_IND] = CF_VALID,
	[BPF_LD | BPF_H | BPF_IND] = CF_VALID,
	[BPF_LD | BPF_B | BPF_IND] = CF_VALID,
	[BPF_LD | BPF_W | BPF_LEN] = CF_VALID,
	[BPF_LD | BPF_IMM] = CF_VALID,
	[BPF_LD | BPF_MEM] = CF_VALID | CF_MEM_READ,
	[BPF_LDX | BPF_W | BPF_LEN] = CF_VALID,
	[BPF_LDX | BPF_B | BPF_MSH] = CF_VALID,
	[BPF_LDX | BPF_IMM] = CF_VALID,
	[BPF_LDX | BPF_MEM] = CF_VALID | CF_MEM_READ,
	[BPF_ST] = CF_VALID | CF_MEM_WRITE,
	[BPF_STX] = CF_VALID | CF_MEM_WRITE,
	ALU_KX(BPF_ADD, 0),
	ALU_KX(BPF_SUB, 0),
	ALU_KX(BPF_MUL, 0),
	ALU_KX(BPF_DIV, CF_DIV_K),
	ALU_KX(BPF_MOD, CF_DIV_K),
	ALU_KX(BPF_AND, 0),
	ALU_KX(BPF_OR, 0),
	ALU_KX(BPF_XOR, 0),
	ALU_KX(BPF_LSH, CF_SHIFT_K),
	ALU_KX(BPF_RSH, CF_SHIFT_K),
	[BPF_ALU | BPF_NEG] = CF_VALID,
	[BPF_JMP | BPF_JA] = CF_VALID | CF_JA,
	JMP_KX(BPF_JEQ),
	JMP_KX(BPF_JGT),
	JMP_KX(BPF_JGE),
	JMP_KX(BPF_JSET),
	[BPF_RET | BPF_K] = CF_VALID | CF_RET,
	[BPF_RET | BPF_A] = CF_VALID | CF_RET,
	[BPF_MISC | BPF_TAX] = CF_VALID,
	[BPF_MISC | BPF_TXA] = CF_VALID,
};

#undef ALU_KX
#undef JMP_KX

/* Ancillary loads (ld [SKF_AD_OFF + n]): the __sk_buff field holding the same value, or
 * no field for the ones a userspace packet has no equivalent of. */
struct anc {
	const char *name;
	int16_t field;   /* offsetof(struct __sk_buff, ...), -1 = unsupported */
	uint8_t ntohs;   /* the field is a big-endian 16-bit value; classic returns it in host order */
};

#define ANC(id, fld, swap) [(id) / 4] = { #id, (int16_t)offsetof(struct __sk_buff, fld), swap }
#define ANC_NONE(id) [(id) / 4] = { #id, -1, 0 }
static const struct anc ancillary[SKF_AD_MAX / 4] = {
	ANC(SKF_AD_PROTOCOL, protocol, 1),
	ANC(SKF_AD_PKTTYPE, pkt_type, 0),
	ANC(SKF_AD_IFINDEX, ifindex, 0),
	ANC_NONE(SKF_AD_NLATTR),
	ANC_NONE(SKF_AD_NLATTR_NEST),
	ANC(SKF_AD_MARK, mark, 0),
	ANC(SKF_AD_QUEUE, queue_mapping, 0),
	ANC_NONE(SKF_AD_HATYPE),
	ANC(SKF_AD_RXHASH, hash, 0),
	ANC_NONE(SKF_AD_CPU),
	[SKF_AD_ALU_XOR_X / 4] = { "SKF_AD_ALU_XOR_X", -1, 0 }, /* handled as an ALU op */
	ANC(SKF_AD_VLAN_TAG, vlan_tci, 0),
	ANC(SKF_AD_VLAN_TAG_PRESENT, vlan_present, 0),
	ANC_NONE(SKF_AD_PAY_OFFSET),
	ANC_NONE(SKF_AD_RANDOM),
	ANC(SKF_AD_VLAN_TPID, vlan_proto, 1),
};
#undef ANC
#undef ANC_NONE

/* Where an absolute load's k points. */
enum abs_kind {
	ABS_PACKET,    /* packet offset (also SKF_LL_OFF-relative: the packet starts at the
			* link layer) */
	ABS_ANCILLARY, /* SKF_AD_OFF + n */
	ABS_NET,       /* SKF_NET_OFF-relative: needs a network header offset we don't have */
	ABS_NEVER,     /* the kernel's load always fails (below SKF_LL_OFF, or an MSH load in
			* the SKF_AD_OFF range): the program returns 0 */
};

/* msh: for LDX MSH, whose load Linux never treats as ancillary: an offset in the SKF_AD_OFF
 * range becomes one relative to the network header that no packet is long enough for. */
static enum abs_kind classify_abs(uint32_t k, int msh, uint32_t *pkt_off)
{
	int32_t sk = (int32_t)k;

	*pkt_off = k;
	if (sk >= 0)
		return ABS_PACKET;
	if (sk >= SKF_AD_OFF)
		return msh ? ABS_NEVER : ABS_ANCILLARY;
	if (sk >= SKF_NET_OFF)
		return ABS_NET;
	if (sk >= SKF_LL_OFF) {
		*pkt_off = (uint32_t)(sk - SKF_LL_OFF);
		return ABS_PACKET;
	}
	return ABS_NEVER;
}

/* Reason an absolute load at k cannot be converted, or NULL. */
static const char *check_abs(uint32_t k, int msh, char *buf, size_t buflen)
{
	uint32_t off, n;

	switch (classify_abs(k, msh, &off)) {
	case ABS_NET:
		return "load relative to the network header (SKF_NET_OFF) is not supported";
	case ABS_ANCILLARY:
		n = k - (uint32_t)SKF_AD_OFF;
		if (n % 4 || n >= SKF_AD_MAX) {
			snprintf(buf, buflen, "unknown ancillary load SKF_AD_OFF+%u", n);
			return buf;
		}
		if (ancillary[n / 4].field < 0 && n != SKF_AD_ALU_XOR_X) {
			snprintf(buf, buflen, "ancillary load %s is not supported",
				 ancillary[n / 4].name);
			return buf;
		}
		return NULL;
	default:
		return NULL;
	}
}

/* Reason instruction pc is malformed on its own, or NULL. */
static const char *check_insn(const struct sock_filter *prog, size_t len, size_t pc, char *buf,
			      size_t buflen)
{
	const struct sock_filter *f = &prog[pc];
	uint8_t fl = f->code < 256 ? cflags[f->code] : 0;
	size_t left = len - pc - 1; /* instructions after this one */

	if (!(fl & CF_VALID)) {
		snprintf(buf, buflen, "unknown opcode 0x%02x", f->code);
		return buf;
	}
	if ((fl & (CF_MEM_READ | CF_MEM_WRITE)) && f->k >= BPF_MEMWORDS) {
		snprintf(buf, buflen, "scratch slot M[%u] out of range (0-%d)", f->k,
			 BPF_MEMWORDS - 1);
		return buf;
	}
	if ((fl & CF_DIV_K) && f->k == 0)
		return "division or modulo by constant 0";
	if ((fl & CF_SHIFT_K) && f->k >= 32) {
		snprintf(buf, buflen, "shift by constant %u (must be below 32)", f->k);
		return buf;
	}
	if ((fl & CF_JA) && f->k >= left) {
		snprintf(buf, buflen, "jump target %zu is past the end (program has %zu insns)",
			 pc + 1 + (size_t)f->k, len);
		return buf;
	}
	if ((fl & CF_JCOND) && (f->jt >= left || f->jf >= left)) {
		snprintf(buf, buflen, "jump target %zu is past the end (program has %zu insns)",
			 pc + 1 + (size_t)(f->jt >= left ? f->jt : f->jf), len);
		return buf;
	}
	if (f->code == (BPF_LD | BPF_W | BPF_ABS) || f->code == (BPF_LD | BPF_H | BPF_ABS) ||
	    f->code == (BPF_LD | BPF_B | BPF_ABS))
		return check_abs(f->k, 0, buf, buflen);
	if (f->code == (BPF_LDX | BPF_B | BPF_MSH))
		return check_abs(f->k, 1, buf, buflen);
	return NULL;
}

/* Scratch memory must be written on every path before it is read.  Jumps only go
 * forward, so one pass suffices: valid[pc] is the intersection of the masks of written
 * slots over every edge reaching pc (all ones while no edge has been seen). */
static int check_mem_init(const struct sock_filter *prog, size_t len, char *err, size_t errlen)
{
	uint16_t *valid = malloc(len * sizeof(*valid));
	uint16_t cur = 0; /* slots written on every path reaching this insn */
	int ret = 0;

	if (!valid)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		valid[i] = 0xffff;
	valid[0] = 0;
	for (size_t pc = 0; pc < len && !ret; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint8_t fl = cflags[f->code];

		cur &= valid[pc];
		if ((fl & CF_MEM_READ) && !(cur & (1u << f->k))) {
			snprintf(err, errlen, "cbpf insn %zu: reads M[%u] before it is written", pc,
				 f->k);
			ret = -EINVAL;
		} else if (fl & CF_MEM_WRITE) {
			cur |= (uint16_t)(1u << f->k);
		} else if (fl & CF_JA) {
			valid[pc + 1 + f->k] &= cur;
			cur = 0xffff; /* the next insn is reached only through jumps, if at all */
		} else if (fl & CF_JCOND) {
			valid[pc + 1 + f->jt] &= cur;
			valid[pc + 1 + f->jf] &= cur;
			cur = 0xffff;
		} else if (fl & CF_RET) {
			cur = 0xffff;
		}
	}
	free(valid);
	return ret;
}

int brt_cbpf_check(const struct sock_filter *prog, size_t len, char *err, size_t errlen)
{
	char buf[128];

	if (!prog || len == 0) {
		snprintf(err, errlen, "cbpf: empty program");
		return -EINVAL;
	}
	if (len > BPF_MAXINSNS) {
		snprintf(err, errlen, "cbpf: program has %zu insns, classic BPF allows at most %d",
			 len, BPF_MAXINSNS);
		return -EINVAL;
	}
	for (size_t pc = 0; pc < len; pc++) {
		const char *why = check_insn(prog, len, pc, buf, sizeof(buf));

		if (why) {
			snprintf(err, errlen, "cbpf insn %zu: %s", pc, why);
			return -EINVAL;
		}
	}
	if (!(cflags[prog[len - 1].code] & CF_RET)) {
		snprintf(err, errlen, "cbpf insn %zu: last instruction is not a return", len - 1);
		return -EINVAL;
	}
	return check_mem_init(prog, len, err, errlen);
}

/* ---- translation -------------------------------------------------------------------- */

/* Longest eBPF sequence one classic instruction becomes (LDX MSH). */
#define MAX_PER_INSN 6
#define PROLOGUE_LEN 3

struct conv {
	struct bpf_insn *insns;
	int32_t *target; /* classic target of the jump at each eBPF index, -1 for none */
	size_t n;
	const uint8_t *live_out; /* per classic insn: LIVE_A | LIVE_X read later */
};

enum { LIVE_A = 1, LIVE_X = 2 };

static void emit(struct conv *c, uint8_t code, uint8_t dst, uint8_t src, int16_t off,
		 int32_t imm)
{
	struct bpf_insn *insn = &c->insns[c->n];

	memset(insn, 0, sizeof(*insn));
	insn->code = code;
	insn->dst_reg = dst & 0xf;
	insn->src_reg = src & 0xf;
	insn->off = off;
	insn->imm = imm;
	c->target[c->n++] = -1;
}

static void emit_jump(struct conv *c, uint8_t code, uint8_t dst, uint8_t src, int32_t imm,
		      size_t classic_target)
{
	emit(c, code, dst, src, 0, imm);
	c->target[c->n - 1] = (int32_t)classic_target;
}

enum { A = BRT_CBPF_REG_A, X = BRT_CBPF_REG_X, TMP = BRT_CBPF_REG_TMP, CTX = BRT_CBPF_REG_CTX };

static void emit_ret_zero(struct conv *c)
{
	emit(c, BPF_ALU | BPF_MOV | BPF_K, A, 0, 0, 0);
	emit(c, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/* ld{,h,b} [k] and ldx 4*([k]&0xf) read the packet, the context or nothing. */
static void emit_abs(struct conv *c, uint8_t size, uint32_t k, int msh)
{
	uint32_t off;
	const struct anc *anc;

	switch (classify_abs(k, msh, &off)) {
	case ABS_PACKET:
		emit(c, BPF_LD | BPF_ABS | size, 0, 0, 0, (int32_t)off);
		break;
	case ABS_ANCILLARY:
		off = k - (uint32_t)SKF_AD_OFF;
		if (off == SKF_AD_ALU_XOR_X) {
			emit(c, BPF_ALU | BPF_XOR | BPF_X, A, X, 0, 0);
			break;
		}
		anc = &ancillary[off / 4];
		emit(c, BPF_LDX | BPF_MEM | BPF_W, A, CTX, anc->field, 0);
		if (anc->ntohs)
			emit(c, BPF_ALU | BPF_END | BPF_TO_BE, A, 0, 0, 16);
		break;
	case ABS_NET:	/* refused by the checker */
	case ABS_NEVER:
		emit_ret_zero(c);
		break;
	}
}

/* Classic jump: eBPF has the inverse of JEQ/JGT/JGE, so "jt == 0" needs one insn too. */
static void emit_jcond(struct conv *c, const struct sock_filter *f, size_t pc)
{
	size_t t = pc + 1 + f->jt, e = pc + 1 + f->jf;
	uint8_t op = BPF_OP(f->code), src = BPF_SRC(f->code);
	uint8_t sreg = src == BPF_X ? X : 0;
	int32_t imm = src == BPF_X ? 0 : (int32_t)f->k;
	uint8_t inv = 0;

	if (t == e) {
		if (f->jt)
			emit_jump(c, BPF_JMP | BPF_JA, 0, 0, 0, t);
		return;
	}
	if (f->jt == 0) {
		inv = op == BPF_JEQ ? BPF_JNE : op == BPF_JGT ? BPF_JLE : op == BPF_JGE ? BPF_JLT : 0;
		if (inv) {
			emit_jump(c, BPF_JMP32 | inv | src, A, sreg, imm, e);
			return;
		}
	}
	emit_jump(c, BPF_JMP32 | op | src, A, sreg, imm, t);
	if (f->jf)
		emit_jump(c, BPF_JMP | BPF_JA, 0, 0, 0, e);
}

static void emit_alu(struct conv *c, const struct sock_filter *f)
{
	uint8_t op = BPF_OP(f->code);

	if (op == BPF_NEG) {
		emit(c, BPF_ALU | BPF_NEG, A, 0, 0, 0);
		return;
	}
	if (BPF_SRC(f->code) == BPF_K) {
		emit(c, BPF_ALU | op | BPF_K, A, 0, 0, (int32_t)f->k);
		return;
	}
	if (op == BPF_DIV || op == BPF_MOD) {
		/* eBPF defines x/0 = 0 and x%0 = x; classic BPF instead ends the program
		 * with 0, and filters rely on that. */
		emit(c, BPF_JMP32 | BPF_JNE | BPF_K, X, 0, 2, 0);
		emit_ret_zero(c);
	}
	emit(c, BPF_ALU | op | BPF_X, A, X, 0, 0);
}

static void emit_insn(struct conv *c, const struct sock_filter *f, size_t pc)
{
	uint32_t k = f->k, off;

	switch (BPF_CLASS(f->code)) {
	case BPF_LD:
		switch (BPF_MODE(f->code)) {
		case BPF_ABS:
			emit_abs(c, BPF_SIZE(f->code), k, 0);
			break;
		case BPF_IND:
			emit(c, BPF_LD | BPF_IND | BPF_SIZE(f->code), 0, X, 0, (int32_t)k);
			break;
		case BPF_MEM:
			emit(c, BPF_LDX | BPF_MEM | BPF_W, A, BPF_REG_10, BRT_CBPF_MEM_OFF(k), 0);
			break;
		case BPF_LEN:
			emit(c, BPF_LDX | BPF_MEM | BPF_W, A, CTX, offsetof(struct __sk_buff, len), 0);
			break;
		default: /* BPF_IMM */
			emit(c, BPF_ALU | BPF_MOV | BPF_K, A, 0, 0, (int32_t)k);
			break;
		}
		break;
	case BPF_LDX:
		switch (BPF_MODE(f->code)) {
		case BPF_MSH:
			/* X = 4 * (P[k] & 0xf); the byte load goes through r0, so A waits in TMP */
			if (classify_abs(k, 1, &off) == ABS_NEVER) {
				emit_ret_zero(c);
				break;
			}
			if (c->live_out[pc] & LIVE_A)
				emit(c, BPF_ALU64 | BPF_MOV | BPF_X, TMP, A, 0, 0);
			emit_abs(c, BPF_B, k, 1);
			emit(c, BPF_ALU | BPF_AND | BPF_K, A, 0, 0, 0xf);
			emit(c, BPF_ALU | BPF_LSH | BPF_K, A, 0, 0, 2);
			emit(c, BPF_ALU | BPF_MOV | BPF_X, X, A, 0, 0);
			if (c->live_out[pc] & LIVE_A)
				emit(c, BPF_ALU64 | BPF_MOV | BPF_X, A, TMP, 0, 0);
			break;
		case BPF_MEM:
			emit(c, BPF_LDX | BPF_MEM | BPF_W, X, BPF_REG_10, BRT_CBPF_MEM_OFF(k), 0);
			break;
		case BPF_LEN:
			emit(c, BPF_LDX | BPF_MEM | BPF_W, X, CTX, offsetof(struct __sk_buff, len), 0);
			break;
		default: /* BPF_IMM */
			emit(c, BPF_ALU | BPF_MOV | BPF_K, X, 0, 0, (int32_t)k);
			break;
		}
		break;
	case BPF_ST:
	case BPF_STX:
		emit(c, BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_CLASS(f->code) == BPF_ST ? A : X,
		     BRT_CBPF_MEM_OFF(k), 0);
		break;
	case BPF_ALU:
		emit_alu(c, f);
		break;
	case BPF_JMP:
		if (BPF_OP(f->code) == BPF_JA) {
			if (k)
				emit_jump(c, BPF_JMP | BPF_JA, 0, 0, 0, pc + 1 + k);
		} else {
			emit_jcond(c, f, pc);
		}
		break;
	case BPF_RET:
		if (BPF_RVAL(f->code) == BPF_K)
			emit(c, BPF_ALU | BPF_MOV | BPF_K, A, 0, 0, (int32_t)k);
		emit(c, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		break;
	default: /* BPF_MISC */
		if (BPF_MISCOP(f->code) == BPF_TAX)
			emit(c, BPF_ALU | BPF_MOV | BPF_X, X, A, 0, 0);
		else
			emit(c, BPF_ALU | BPF_MOV | BPF_X, A, X, 0, 0);
		break;
	}
}

/* Classic programs may hold instructions no path reaches; eBPF verifiers (the kernel's
 * too) refuse those, so they are left out of the translation.  A load below SKF_LL_OFF
 * always fails, which ends the program like a return. */
static void mark_reachable(const struct sock_filter *prog, size_t len, uint8_t *reach)
{
	uint32_t off;

	memset(reach, 0, len);
	reach[0] = 1;
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint8_t fl = cflags[f->code];
		int msh = f->code == (BPF_LDX | BPF_B | BPF_MSH);
		int abs = msh || f->code == (BPF_LD | BPF_W | BPF_ABS) ||
			  f->code == (BPF_LD | BPF_H | BPF_ABS) ||
			  f->code == (BPF_LD | BPF_B | BPF_ABS);

		if (!reach[pc])
			continue;
		if (fl & CF_JA) {
			reach[pc + 1 + f->k] = 1;
		} else if (fl & CF_JCOND) {
			reach[pc + 1 + f->jt] = 1;
			reach[pc + 1 + f->jf] = 1;
		} else if (!(fl & CF_RET) && !(abs && classify_abs(f->k, msh, &off) == ABS_NEVER)) {
			reach[pc + 1] = 1; /* the checker made sure the last insn is a return */
		}
	}
}

/* Which of A and X instruction f reads (*use) and writes (*def). */
static void uses_defs(const struct sock_filter *f, uint8_t *use, uint8_t *def)
{
	uint16_t c = f->code;
	uint8_t src_x = BPF_SRC(c) == BPF_X ? LIVE_X : 0;

	*use = *def = 0;
	switch (BPF_CLASS(c)) {
	case BPF_LD:
		*def = LIVE_A;
		if (BPF_MODE(c) == BPF_IND)
			*use = LIVE_X;
		else if (BPF_MODE(c) == BPF_ABS &&
			 f->k == (uint32_t)(SKF_AD_OFF + SKF_AD_ALU_XOR_X))
			*use = LIVE_A | LIVE_X;
		break;
	case BPF_LDX:
		*def = LIVE_X;
		break;
	case BPF_ST:
		*use = LIVE_A;
		break;
	case BPF_STX:
		*use = LIVE_X;
		break;
	case BPF_ALU:
		*use = LIVE_A | (BPF_OP(c) == BPF_NEG ? 0 : src_x);
		*def = LIVE_A;
		break;
	case BPF_JMP:
		if (BPF_OP(c) != BPF_JA)
			*use = LIVE_A | src_x;
		break;
	case BPF_RET:
		*use = BPF_RVAL(c) == BPF_A ? LIVE_A : 0;
		break;
	default: /* BPF_MISC */
		*use = BPF_MISCOP(c) == BPF_TAX ? LIVE_A : LIVE_X;
		*def = BPF_MISCOP(c) == BPF_TAX ? LIVE_X : LIVE_A;
		break;
	}
}

/* Liveness of A and X, backwards (jumps only go forward, so one pass suffices): out[pc]
 * says which of them some path from after pc reads before writing.  A dead A need not be
 * saved around LDX MSH, and registers dead at the start need no zeroing.  Returns what is
 * live at the start. */
static uint8_t live_registers(const struct sock_filter *prog, size_t len, const uint8_t *reach,
			      uint8_t *out, uint8_t *in)
{
	for (size_t i = len; i-- > 0;) {
		const struct sock_filter *f = &prog[i];
		uint8_t fl = cflags[f->code], use, def, o = 0;
		uint32_t off;
		int msh = f->code == (BPF_LDX | BPF_B | BPF_MSH);
		int abs = msh || (BPF_CLASS(f->code) == BPF_LD && BPF_MODE(f->code) == BPF_ABS);

		if (fl & CF_JA) {
			o = in[i + 1 + f->k];
		} else if (fl & CF_JCOND) {
			o = in[i + 1 + f->jt] | in[i + 1 + f->jf];
		} else if (!(fl & CF_RET) && !(abs && classify_abs(f->k, msh, &off) == ABS_NEVER)) {
			o = in[i + 1];
		}
		uses_defs(f, &use, &def);
		out[i] = o;
		in[i] = reach[i] ? (uint8_t)(use | (o & ~def)) : 0;
	}
	return in[0];
}

/* Turn the classic targets recorded by emit_jump() into eBPF offsets. */
static int fix_jumps(struct conv *c, const size_t *start, char *err, size_t errlen)
{
	for (size_t i = 0; i < c->n; i++) {
		int64_t off;

		if (c->target[i] < 0)
			continue;
		off = (int64_t)start[c->target[i]] - (int64_t)(i + 1);
		if (off < 0 || off > INT16_MAX) {
			snprintf(err, errlen, "internal error: jump at insn %zu has offset %lld", i,
				 (long long)off);
			return -EFAULT;
		}
		c->insns[i].off = (int16_t)off;
	}
	return 0;
}

int brt_cbpf_convert(const struct sock_filter *prog, size_t len, struct bpf_insn **out,
		     size_t *n_out, char *err, size_t errlen)
{
	struct conv c = { 0 };
	size_t *start = NULL, cap;
	uint8_t *reach = NULL, *live = NULL, live0;
	char buf[160];
	int ret;

	ret = brt_cbpf_check(prog, len, err, errlen);
	if (ret)
		return ret;
	cap = PROLOGUE_LEN + len * MAX_PER_INSN;
	c.insns = malloc(cap * sizeof(*c.insns));
	c.target = malloc(cap * sizeof(*c.target));
	start = malloc(len * sizeof(*start));
	reach = malloc(len);
	live = malloc(2 * len);
	if (!c.insns || !c.target || !start || !reach || !live) {
		snprintf(err, errlen, "cbpf: out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	/* r6 = ctx for LD_ABS/LD_IND; classic BPF starts with A = X = 0 (where it shows) */
	emit(&c, BPF_ALU64 | BPF_MOV | BPF_X, CTX, BPF_REG_1, 0, 0);
	mark_reachable(prog, len, reach);
	live0 = live_registers(prog, len, reach, live, live + len);
	c.live_out = live;
	if (live0 & LIVE_A)
		emit(&c, BPF_ALU | BPF_MOV | BPF_K, A, 0, 0, 0);
	if (live0 & LIVE_X)
		emit(&c, BPF_ALU | BPF_MOV | BPF_K, X, 0, 0, 0);
	for (size_t pc = 0; pc < len; pc++) {
		start[pc] = c.n;
		if (reach[pc])
			emit_insn(&c, &prog[pc], pc);
		assert(c.n - start[pc] <= MAX_PER_INSN);
	}
	ret = fix_jumps(&c, start, err, errlen);
	if (ret)
		goto out_free;
	/* the output must at least be well formed; anything else is our bug */
	ret = brt_isa_check_prog(c.insns, c.n, cap, buf, sizeof(buf));
	if (ret) {
		snprintf(err, errlen, "internal error: converted program: %s", buf);
		ret = -EFAULT;
		goto out_free;
	}
	*out = c.insns;
	*n_out = c.n;
	c.insns = NULL;
out_free:
	free(c.insns);
	free(c.target);
	free(start);
	free(reach);
	free(live);
	return ret;
}

int bpfrt_cbpf_convert(const struct sock_filter *prog, size_t len, struct bpf_insn **insns,
		       size_t *n_insns, char *err, size_t errlen)
{
	char dummy[1];
	int ret;

	if (!insns || !n_insns) {
		snprintf(err ? err : dummy, err ? errlen : 0, "cbpf: insns and n_insns are required");
		errno = EINVAL;
		return -EINVAL;
	}
	ret = brt_cbpf_convert(prog, len, insns, n_insns, err ? err : dummy, err ? errlen : 0);
	if (ret)
		errno = -ret;
	return ret;
}
