/* isa.h - the instruction set as data: the opcode table expanded into an enum and a
 * descriptor array, plus decoding and field validation of single instructions.
 * The table itself is insn.def; this header is the isa/ folder's interface.
 */
#ifndef BPFRT_SRC_ISA_ISA_H
#define BPFRT_SRC_ISA_ISA_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

/* Constants newer than the 6.1 uapi headers Debian 12 ships (ISA v4). */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif
#define BRT_MEMSX BPF_MEMSX
#ifndef BPF_JMP32
#error "linux/bpf.h too old: BPF_JMP32 missing"
#endif

/* BPF_JMP | BRT_JCOND is may_goto when src_reg is BRT_MAY_GOTO (libc headers may be older) */
#define BRT_JCOND 0xe0
#define BRT_MAY_GOTO 0
/* may_goto's hidden counter starts at the kernel's BPF_MAX_LOOPS in each function call */
#define BRT_MAX_LOOPS (8u * 1024 * 1024)
#define BRT_MAX_REGS 11 /* r0-r10 */
#define BRT_STACK_SIZE 512
#define BRT_MAX_CALL_DEPTH 8
/* Most instructions a program may have (the kernel's BPF_COMPLEXITY_LIMIT_INSNS); the
 * assembler and disassembler refuse longer programs. */
#define BRT_ISA_MAX_INSNS 1000000u

/* What besides the opcode byte selects a row (the "discriminator"). */
enum brt_disc {
	BRT_DISC_NONE,
	BRT_DISC_OFF,
	BRT_DISC_IMM,
	BRT_DISC_SRC,
};

/* Operand shapes: which instruction fields a row uses and how assembly spells them. */
enum brt_shape {
	BRT_SHAPE_ALU_IMM,    /* op %dst, imm */
	BRT_SHAPE_ALU_REG,    /* op %dst, %src */
	BRT_SHAPE_ALU_UNARY,  /* op %dst */
	BRT_SHAPE_ENDIAN,     /* op %dst            (width in imm) */
	BRT_SHAPE_LOAD,       /* op %dst, [%src+off] */
	BRT_SHAPE_STORE_IMM,  /* op [%dst+off], imm */
	BRT_SHAPE_STORE_REG,  /* op [%dst+off], %src */
	BRT_SHAPE_ATOMIC,     /* lock op [%dst+off], %src   (operation in imm) */
	BRT_SHAPE_LDDW,       /* lddw %dst, imm64   (two slots; src_reg = pseudo kind) */
	BRT_SHAPE_LD_ABS,     /* op imm */
	BRT_SHAPE_LD_IND,     /* op %src, imm */
	BRT_SHAPE_JA,         /* ja off */
	BRT_SHAPE_JA32,       /* ja32 imm  (gotol) */
	BRT_SHAPE_MAY_GOTO,   /* may_goto off */
	BRT_SHAPE_JMP_IMM,    /* op %dst, imm, off */
	BRT_SHAPE_JMP_REG,    /* op %dst, %src, off */
	BRT_SHAPE_CALL,       /* call imm   (helper id) */
	BRT_SHAPE_CALL_LOCAL, /* call local imm  (relative insn offset) */
	BRT_SHAPE_CALLX,      /* callx %dst */
	BRT_SHAPE_EXIT,       /* exit */
};

/* RFC 9669 conformance groups. */
enum brt_group {
	BRT_GROUP_base32,
	BRT_GROUP_base64,
	BRT_GROUP_atomic32,
	BRT_GROUP_atomic64,
	BRT_GROUP_divmul32,
	BRT_GROUP_divmul64,
	BRT_GROUP_packet,
	BRT_GROUP_callx, /* not an RFC group: conformance-suite extension */
	BRT_GROUP_COUNT,
};

enum brt_op {
#define INSN(id, opc, dk, dv, shape, mnem, grp, ver) BRT_OP_##id,
#include "isa/insn.def"
#undef INSN
	BRT_OP_COUNT,
	BRT_OP_INVALID = BRT_OP_COUNT,
};

/* One row of the table. */
struct brt_opinfo {
	const char *id;     /* C identifier of the row, e.g. "add64_imm" */
	const char *mnem;   /* assembler mnemonic, e.g. "add" or "lock fetch add32" */
	uint8_t opcode;     /* opcode byte */
	uint8_t disc;       /* enum brt_disc */
	int32_t disc_val;   /* value of the discriminating field */
	uint8_t shape;      /* enum brt_shape */
	uint8_t group;      /* enum brt_group */
	uint8_t version;    /* ISA version 1..4 that introduced it */
};

extern const struct brt_opinfo brt_ops[BRT_OP_COUNT];
extern const char *const brt_group_names[BRT_GROUP_COUNT];

/* Size in bytes of a load/store/atomic row (1, 2, 4, 8), 0 for other rows. */
unsigned brt_isa_access_size(uint8_t opcode);

/* Look up the row for one instruction.  Returns the op (< BRT_OP_COUNT) or BRT_OP_INVALID
 * when no row matches the opcode byte and discriminator. */
enum brt_op brt_isa_lookup(const struct bpf_insn *insn);

/* Decode and validate one instruction: a row must match, registers must be r0-r10 (and the
 * destination of a write must not be r10), and every field the row's shape does not use
 * must be zero.  `avail` is how many instructions remain from `insn` on, so the second
 * slot of lddw can be checked.  Returns the op, or BRT_OP_INVALID with *reason set to a
 * static message without location (the caller adds "insn N: "). */
enum brt_op brt_isa_decode(const struct bpf_insn *insn, size_t avail, const char **reason);

/* Structural check of a whole program: every instruction decodes, lddw is complete, every
 * jump and local call lands inside the program and not on the second slot of an lddw, the
 * program is not empty and not longer than max_insns.  On failure writes
 * "insn N: <reason>" into err and returns -EINVAL (-E2BIG when too long). */
int brt_isa_check_prog(const struct bpf_insn *insns, size_t n, size_t max_insns, char *err,
		       size_t errlen);
/* The same check, keeping what it decoded: ops[pc] (n entries) gets each instruction's
 * row, BRT_OP_INVALID for the second slot of lddw.  The engines take this decoded form
 * instead of decoding the program again (vm.c's pre-decode, the JIT). */
int brt_isa_decode_prog(const struct bpf_insn *insns, size_t n, size_t max_insns,
			uint16_t *ops, char *err, size_t errlen);

/* The load-time check every runtime makes besides the structural one: no instruction
 * reads a register that some path from the entry leaves unwritten.  entry: the registers
 * the caller sets before the first instruction (bit r for rN; r10 always).  Calls count as
 * writing r0 and clobbering r1-r5 and read nothing (their argument count is unknown).
 * Runs brt_isa_check_prog() first.  On failure writes "insn N: rR is read before it is
 * written" into err and returns -EINVAL (or that check's error). */
int brt_isa_check_init_regs(const struct bpf_insn *insns, size_t n, uint16_t entry, char *err,
			    size_t errlen);

/* 1 for the rows that name another instruction: jumps (ja, ja32, conditional) and local
 * calls; 0 for the rest (helper calls, callx and exit included). */
int brt_isa_has_target(enum brt_op op);

/* Which registers an instruction names, reads and writes, as bit masks (bit r for rN).
 * The one place that knows it: the verifier's liveness and relevance and the JIT's
 * register scans all ask here. */
struct brt_isa_regs {
	uint16_t named; /* registers its dst_reg/src_reg fields name (not lddw's or a call's kind) */
	uint16_t use;   /* registers it reads, implicit ones included (r0 of exit, r6 of a
			 * packet load, r1-r5 of a call) */
	uint16_t def;   /* registers it writes, implicit ones included (r0-r5 after a call) */
	uint16_t flow;  /* the part of use that what it writes is computed from; the rest of
			 * use is an address, a stored value, a condition or an argument */
};

/* Fill *r for insn and return its row; an instruction whose discriminator no row has
 * gets the registers of its opcode byte's first row, one whose opcode byte no row has
 * gets none (and BRT_OP_INVALID).  brt_isa_regs_op(): the same for an instruction whose
 * row op is known (brt_isa_lookup()'s answer, BRT_OP_INVALID included), without looking
 * it up again. */
enum brt_op brt_isa_regs(const struct bpf_insn *insn, struct brt_isa_regs *r);
enum brt_op brt_isa_regs_op(const struct bpf_insn *insn, enum brt_op op, struct brt_isa_regs *r);

/* Every instruction's row as brt_isa_lookup() finds it (BRT_OP_INVALID where none), no
 * field checked: the decoded form of a program that may not pass brt_isa_decode_prog()
 * (the verifier rejects such programs with the kernel's own messages).  For a program
 * that passes, the rows are brt_isa_decode_prog()'s (but on second slots of lddw). */
void brt_isa_lookup_prog(const struct bpf_insn *insns, size_t n, uint16_t *ops);

/* Target of a jump or local call at index pc, as an instruction index (may be out of
 * range; callers check). */
int64_t brt_isa_jump_target(const struct bpf_insn *insn, enum brt_op op, size_t pc);

/* The 64-bit value the lddw at index pc loads: its two immediates, except for
 * src_reg = BPF_PSEUDO_FUNC (imm = offset of a function from the next instruction), which
 * loads the index of the function's first instruction: how every engine names a function
 * that a helper calls back (bpf_loop). */
uint64_t brt_isa_lddw_value(const struct bpf_insn *insn, size_t pc);

/* Assemble text in the conformance-suite syntax (documented in include/bpfrt/asm.h).
 * filename only labels messages (NULL: "<input>").  On success *out is a malloc()ed
 * array of *n_insns instructions (lddw takes two) and 0 is returned.  On failure returns
 * -EINVAL (bad input), -E2BIG (more than BRT_ISA_MAX_INSNS) or -ENOMEM, *out is NULL and
 * err holds "file:line:col: message". */
int brt_asm(const char *text, const char *filename, struct bpf_insn **out, size_t *n_insns,
	    char *err, size_t errlen);

enum brt_disasm_style {
	BRT_DISASM_KERNEL, /* the Linux verifier log: "(bf) r0 = r2" */
	BRT_DISASM_ASM,	   /* the conformance assembly brt_asm() reads back */
};

/* Write one instruction as text into buf (always NUL-terminated when buflen > 0).  avail
 * is how many instructions remain from insn on (lddw reads two).  Returns the number of
 * slots the instruction takes (1, or 2 for lddw); -EINVAL when it does not decode (buf
 * then says "invalid: <reason> (fields)"); -ENOSPC when buf was too small. */
int brt_disasm_insn(const struct bpf_insn *insn, size_t avail, enum brt_disasm_style style,
		    char *buf, size_t buflen);

/* The kernel's print_bpf_insn() for any instruction, valid or not (the verifier log lists
 * a program before it rejects its reserved fields): fields are printed as they are, an
 * opcode with no row as the kernel's "BUG_..." or "(code) ?".  Returns 1, -EINVAL when
 * avail is 0, -ENOSPC when buf was too small. */
int brt_disasm_kernel_unchecked(const struct bpf_insn *insn, size_t avail, char *buf,
				size_t buflen);

/* The verifier log's spelling of the BPF_OP of an ALU opcode ("+=", "s>>=", "neg",
 * "endian"); NULL for the two values no ALU operation uses. */
const char *brt_isa_alu_sym(uint8_t op);

/* "bpf_map_lookup_elem" for helper id 1, NULL for ids the uapi header does not name. */
const char *brt_isa_helper_name(int32_t id);

/* The id of the helper named name[0..len), with or without its "bpf_" prefix; -1 when the
 * uapi header names no such helper. */
int32_t brt_isa_helper_id(const char *name, size_t len);

/* The asm spelling of an lddw src_reg kind ("map_fd" for BPF_PSEUDO_MAP_FD), NULL for 0
 * (a plain constant) and unknown kinds; and back: the kind named name[0..len), or -1. */
const char *brt_isa_pseudo_name(unsigned src_reg);
int brt_isa_pseudo_kind(const char *name, size_t len);

/* ---- program types (prog_types.def) ---------------------------------------------------- */

/* Program types newer than the 6.1 uapi header. */
#define BRT_PROG_TYPE_NETFILTER 32u
#define BRT_PROG_TYPE_COUNT 33u /* one more than the highest type prog_types.def names */
/* attach types newer than the 6.1 uapi header (Linux 6.18's numbers) */
#define BRT_NETFILTER 45u
#define BRT_CGROUP_UNIX_CONNECT 49u
#define BRT_CGROUP_UNIX_SENDMSG 50u
#define BRT_CGROUP_UNIX_RECVMSG 51u
#define BRT_CGROUP_UNIX_GETPEERNAME 52u
#define BRT_CGROUP_UNIX_GETSOCKNAME 53u
#define BRT_TRACE_UPROBE_MULTI 48u
#define BRT_TRACE_KPROBE_SESSION 56u
#define BRT_TRACE_UPROBE_SESSION 57u
/* map flags newer than the 6.1 uapi header: a struct_ops map registered through a link,
 * and its value type named in module BTF (value_type_btf_obj_fd) */
#define BRT_F_LINK (1u << 13)
#define BRT_F_VTYPE_BTF_OBJ_FD (1u << 15)

/* The context layout r1 points to (prog_types.def's ctx column). */
enum brt_ctx_kind {
	BRT_CTX_NONE,
	BRT_CTX_SKB,          /* struct __sk_buff */
	BRT_CTX_XDP,          /* struct xdp_md */
	BRT_CTX_PT_REGS,      /* struct pt_regs (kprobe) */
	BRT_CTX_TP,           /* a tracepoint's record */
	BRT_CTX_RAW_TP,       /* u64 arguments */
	BRT_CTX_PERF_EVENT,   /* struct bpf_perf_event_data */
	BRT_CTX_SOCK,         /* struct bpf_sock */
	BRT_CTX_SOCK_ADDR,    /* struct bpf_sock_addr */
	BRT_CTX_SOCK_OPS,     /* struct bpf_sock_ops */
	BRT_CTX_SK_MSG,       /* struct sk_msg_md */
	BRT_CTX_CGROUP_DEV,   /* struct bpf_cgroup_dev_ctx */
	BRT_CTX_SYSCTL,       /* struct bpf_sysctl */
	BRT_CTX_SOCKOPT,      /* struct bpf_sockopt */
	BRT_CTX_SK_REUSEPORT, /* struct sk_reuseport_md */
	BRT_CTX_SK_LOOKUP,    /* struct bpf_sk_lookup */
	BRT_CTX_NF,           /* struct bpf_nf_ctx */
	BRT_CTX_SYSCALL,      /* the caller's bytes, any layout */
	BRT_CTX_LIRC,         /* one u32 sample */
	BRT_CTX_BTF,          /* typed by kernel BTF (tracing, lsm, ext, struct_ops) */
};

/* How BPF_PROG_TEST_RUN runs a type (prog_types.def's run column). */
enum brt_test_run {
	BRT_RUN_NONE,           /* not test-runnable: ENOTSUPP */
	BRT_RUN_SKB,            /* an skb from data_in, the network header at data */
	BRT_RUN_SKB_L2,         /* the same from the Ethernet header on (tc) */
	BRT_RUN_XDP,
	BRT_RUN_RAW_TP,
	BRT_RUN_FLOW_DISSECTOR,
	BRT_RUN_SK_LOOKUP,
	BRT_RUN_SYSCALL,
	BRT_RUN_NF,
	BRT_RUN_TRACING,
	BRT_RUN_STRUCT_OPS,
};

/* prog_types.def's flags column. */
enum brt_prog_type_flags {
	BRT_PT_LOAD = 1 << 0,       /* bpfrt loads and verifies it */
	BRT_PT_UNPRIV = 1 << 1,     /* loadable without CAP_BPF */
	BRT_PT_PERFMON = 1 << 2,    /* needs CAP_PERFMON (is_perfmon_prog_type) */
	BRT_PT_TRACING = 1 << 3,    /* the kernel's is_tracing_prog_type() */
	BRT_PT_LD_ABS = 1 << 4,     /* may use BPF_LD_ABS/IND (may_access_skb) */
	BRT_PT_PKT_READ = 1 << 5,   /* direct packet reads (may_access_direct_pkt_data) */
	BRT_PT_PKT_WRITE = 1 << 6,  /* direct packet writes */
	BRT_PT_BTF = 1 << 7,        /* typed by kernel BTF: needs attach_btf_id */
	BRT_PT_PKT_ATTACH = 1 << 8, /* bpfrt runs it on live packets (bpfrt_pkt_attach) */
};

/* One row of prog_types.def. */
struct brt_prog_type {
	uint32_t type;        /* BPF_PROG_TYPE_* */
	const char *name;     /* "socket_filter" */
	uint8_t ctx;          /* enum brt_ctx_kind */
	const char *ctx_name; /* "struct __sk_buff" */
	uint32_t ctx_size;
	uint8_t ret_checked;  /* r0 at exit must be in [ret_lo, ret_hi] */
	int32_t ret_lo, ret_hi;
	uint8_t run;          /* enum brt_test_run */
	uint32_t helpers;     /* the type whose helper set this one has */
	uint32_t flags;       /* enum brt_prog_type_flags */
};

/* The row of program type type; NULL for numbers past the table. */
const struct brt_prog_type *brt_prog_type(uint32_t type);

/* flags & brt_prog_type(type)->flags, 0 for unknown types. */
uint32_t brt_prog_type_has(uint32_t type, uint32_t flags);

/* bpftool's name of program type type, "unknown" for numbers past the table. */
const char *brt_prog_type_name(uint32_t type);

#endif
