/* kfunc_oracle_cast.c - verifier.kfunc_oracle's casts (test_kfunc_oracle.c says what it
 * checks): bpf_cast_to_kern_ctx (the program type's kernel context struct, trusted:
 * sk_buff for tc and socket filters, xdp_buff for XDP) and bpf_rdonly_cast (a kernel
 * struct, untrusted; void: read-only untrusted memory of no size) - the argument rules,
 * the type id rules and their messages, reads and writes through the results.  Programs
 * whose test run reads what only the kernel has (a real sk_buff's fields, pointers walked
 * from it) are compared by their verdict alone (check_attr()).
 */
#include <stdio.h>
#include <string.h>

#include "kfunc_oracle.h"

#define P(...) ((const struct bpf_insn[]){ __VA_ARGS__ })

/* a verdict-only comparison: the program loaded on both sides, never run */
static void verdict(const char *name, enum bpf_prog_type type, const struct bpf_insn *insns,
		    size_t n)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uintptr_t) "GPL";
	check_attr(name, &attr);
}

static int member_off(const struct brt_btf *vml, int sid, const char *member)
{
	const struct btf_type *t = sid > 0 ? brt_btf_type(vml, (uint32_t)sid) : NULL;
	const struct btf_member *m = t ? (const struct btf_member *)(t + 1) : NULL;

	for (uint32_t i = 0; t && i < BTF_INFO_VLEN(t->info); i++) {
		const char *n = brt_btf_str(vml, m[i].name_off);

		if (n && !strcmp(n, member))
			return (int)(BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset)
							     : m[i].offset) / 8;
	}
	return -1;
}

void cast_rules(void)
{
	const struct brt_btf *vml = brt_btf_vmlinux();
	int kctx = kid("bpf_cast_to_kern_ctx"), rdc = kid("bpf_rdonly_cast");
	int skb = brt_btf_find(vml, "sk_buff", BTF_KIND_STRUCT);
	int xdpb = brt_btf_find(vml, "xdp_buff", BTF_KIND_STRUCT);
	int intid = brt_btf_find(vml, "int", BTF_KIND_INT);
	int u32id = brt_btf_find(vml, "u32", BTF_KIND_TYPEDEF);
	int len = member_off(vml, skb, "len"), sk = member_off(vml, skb, "sk");

	if (kctx <= 0 || rdc <= 0 || skb <= 0 || xdpb <= 0 || intid <= 0 || u32id <= 0 ||
	    len < 0 || sk < 0) {
		printf("cast rules: skipped (the kernel's BTF lacks the casts or sk_buff)\n");
		return;
	}
	/* bpf_cast_to_kern_ctx: reads at the kernel struct's offsets; the runs return 0 */
	kcheck("kern ctx: tc reads sk_buff->len", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(KCALL(kctx, 0), LDX(BPF_W, 2, 0, (int16_t)len), MOV_K(0, 0), EXIT()), 4);
	kcheck("kern ctx: socket filter", BPF_PROG_TYPE_SOCKET_FILTER, 0,
	       P(KCALL(kctx, 0), LDX(BPF_W, 2, 0, (int16_t)len), MOV_K(0, 0), EXIT()), 4);
	kcheck("kern ctx: xdp reads xdp_buff->data", BPF_PROG_TYPE_XDP, 0,
	       P(KCALL(kctx, 0), LDX(BPF_DW, 2, 0, 0), MOV_K(0, 2), EXIT()), 4);
	kcheck("kern ctx: of the stack", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_X(1, 10), ADD_K(1, -8), KCALL(kctx, 0), MOV_K(0, 0), EXIT()), 5);
	kcheck("kern ctx: of a modified ctx", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(ADD_K(1, 8), KCALL(kctx, 0), MOV_K(0, 0), EXIT()), 4);
	kcheck("kern ctx: of NULL", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(1, 0), KCALL(kctx, 0), MOV_K(0, 0), EXIT()), 4);
	kcheck("kern ctx: write", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(KCALL(kctx, 0), ST(BPF_W, 0, (int16_t)len, 0), MOV_K(0, 0), EXIT()), 4);
	kcheck("kern ctx: read past the struct", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(KCALL(kctx, 0), LDX(BPF_W, 2, 0, 4096), MOV_K(0, 0), EXIT()), 4);
	verdict("kern ctx: returned (an address)", BPF_PROG_TYPE_SCHED_CLS,
		P(KCALL(kctx, 0), EXIT()), 2);
	verdict("kern ctx: a pointer walked from sk_buff", BPF_PROG_TYPE_SCHED_CLS,
		P(KCALL(kctx, 0), LDX(BPF_DW, 1, 0, (int16_t)sk), JEQ_K(1, 0, 1),
		  LDX(BPF_W, 2, 1, 0), MOV_K(0, 0), EXIT()), 6);
	/* bpf_rdonly_cast: the id is the kernel's (a __k constant) */
	kcheck("rdonly_cast: ctx to sk_buff, read len", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(2, skb), KCALL(rdc, 0), LDX(BPF_W, 2, 0, (int16_t)len), MOV_K(0, 0),
		 EXIT()), 5);
	kcheck("rdonly_cast: write through a struct", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(2, skb), KCALL(rdc, 0), ST(BPF_W, 0, (int16_t)len, 0), MOV_K(0, 0),
		 EXIT()), 5);
	kcheck("rdonly_cast: void, stack byte read", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(ST(BPF_DW, 10, -8, 42), MOV_X(1, 10), ADD_K(1, -8), MOV_K(2, 0), KCALL(rdc, 0),
		 LDX(BPF_B, 0, 0, 0), EXIT()), 7);
	kcheck("rdonly_cast: void, write", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(ST(BPF_DW, 10, -8, 42), MOV_X(1, 10), ADD_K(1, -8), MOV_K(2, 0), KCALL(rdc, 0),
		 ST(BPF_B, 0, 0, 1), MOV_K(0, 0), EXIT()), 8);
	kcheck("rdonly_cast: void, pointer arithmetic", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(ST(BPF_DW, 10, -8, 42), MOV_X(1, 10), ADD_K(1, -16), MOV_K(2, 0), KCALL(rdc, 0),
		 ADD_K(0, 8), LDX(BPF_B, 0, 0, 0), EXIT()), 8);
	kcheck("rdonly_cast: of a scalar", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(1, 1234), MOV_K(2, skb), KCALL(rdc, 0), MOV_K(0, 0), EXIT()), 5);
	kcheck("rdonly_cast: id not constant", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_X(6, 1), CALLH(BPF_FUNC_get_prandom_u32), MOV_X(2, 0), MOV_X(1, 6),
		 KCALL(rdc, 0), MOV_K(0, 0), EXIT()), 7);
	kcheck("rdonly_cast: unknown id", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(2, 0x7ffffff0), KCALL(rdc, 0), MOV_K(0, 0), EXIT()), 4);
	kcheck("rdonly_cast: an int", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(2, intid), KCALL(rdc, 0), MOV_K(0, 0), EXIT()), 4);
	kcheck("rdonly_cast: a typedef", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(2, u32id), KCALL(rdc, 0), MOV_K(0, 0), EXIT()), 4);
	kcheck("rdonly_cast: xdp_buff in xdp", BPF_PROG_TYPE_XDP, 0,
	       P(MOV_K(2, xdpb), KCALL(rdc, 0), LDX(BPF_DW, 2, 0, 0), MOV_K(0, 2), EXIT()), 5);
	kcheck("rdonly_cast: struct passed to a trusted kfunc", BPF_PROG_TYPE_SCHED_CLS, 0,
	       P(MOV_K(2, skb), KCALL(rdc, 0), MOV_X(1, 0), KCALL(kctx, 0), MOV_K(0, 0), EXIT()),
	       6);
	verdict("rdonly_cast: a pointer walked from sk_buff", BPF_PROG_TYPE_SCHED_CLS,
		P(MOV_K(2, skb), KCALL(rdc, 0), LDX(BPF_DW, 1, 0, (int16_t)sk), LDX(BPF_W, 2, 1, 0),
		  MOV_K(0, 0), EXIT()), 6);
	verdict("rdonly_cast: void, far read", BPF_PROG_TYPE_SCHED_CLS,
		P(MOV_K(1, 0), MOV_K(2, 0), KCALL(rdc, 0), LDX(BPF_DW, 0, 0, 4096), EXIT()), 5);
}
