/* check.c - the verifier's driver: brt_verify() and the abstract walk.
 *
 * Theory of operation (the kernel's design, see docs/VERIFIER.md):
 *
 * 1. Structural passes (cfg.c), in the kernel's order so the first error is the same:
 *    subprograms and jump ranges, opcodes and lddw forms (map fds resolved through the
 *    caller's map_info callback), a depth-first walk for unreachable code and back-edges
 *    (refused without CAP_BPF), and static register liveness.
 * 2. The walk: starting from insn 0 with R1 = ctx and R10 = fp, each instruction is
 *    executed on an abstract state (state.c: register types, scalar ranges and tnums in
 *    bounds.c, stack slot contents).  Every memory access is checked against what the
 *    pointer's type allows (memory.c); helper and bpf-to-bpf calls go through calls.c.
 *    A conditional jump whose outcome is not known pushes the taken branch onto a stack
 *    and continues with the fall-through; each side learns the comparison's result.  An
 *    exit pops the next pending branch.  The walk ends when no branch is left (accept)
 *    or at the first violation (reject; the message is the kernel's).
 * 3. Pruning: at jump targets and conditional jumps the state is compared with states
 *    already proven safe there; if it is contained in one (same pointer types, scalar
 *    ranges inside, only live registers considered) the path stops.  A state equal to one
 *    still being explored at a loop head is an infinite loop.  Bounded loops simply run
 *    until their counter decides the exit, within 1,000,000 processed instructions.
 * 4. After the walk, the combined stack of every call chain is checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btf/btf.h"
#include "verifier/internal.h"

void brt_verr(struct brt_env *env, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	brt_vlog_va(&env->log, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vsnprintf(env->err_msg, sizeof(env->err_msg), fmt, ap);
	va_end(ap);
	n = strlen(env->err_msg);
	if (n && env->err_msg[n - 1] == '\n')
		env->err_msg[n - 1] = 0;
	env->err_insn = env->insn_idx;
}

void brt_vinfo(struct brt_env *env, const char *fmt, ...)
{
	va_list ap;

	if (!env->log.level)
		return;
	va_start(ap, fmt);
	brt_vlog_va(&env->log, fmt, ap);
	va_end(ap);
}

struct brt_frame *brt_cur_frame(struct brt_env *env)
{
	return env->cur->frame[env->cur->curframe];
}

struct brt_reg *brt_cur_regs(struct brt_env *env)
{
	return brt_cur_frame(env)->regs;
}

int brt_is_pointer_value(struct brt_env *env, int regno)
{
	return !env->allow_ptr_leaks && brt_cur_regs(env)[regno].type != SCALAR_VALUE;
}

int brt_check_reg_arg(struct brt_env *env, int regno, enum brt_reg_arg t)
{
	struct brt_reg *reg;

	if (regno >= BRT_NREGS) {
		brt_verr(env, "R%d is invalid\n", regno);
		return -EINVAL;
	}
	env->scratched_regs |= (uint16_t)(1u << regno);
	reg = &brt_cur_regs(env)[regno];
	if (t == SRC_OP) {
		if (reg->type == NOT_INIT) {
			brt_verr(env, "R%d !read_ok\n", regno);
			return -EACCES;
		}
		return 0;
	}
	if (regno == BPF_REG_10) {
		brt_verr(env, "frame pointer is read only\n");
		return -EACCES;
	}
	if (t == DST_OP)
		brt_mark_reg_unknown(env, reg);
	return 0;
}

/* Queue a path to walk later from insn_idx: a copy of the current state (push_stack()),
 * or with fresh set, an empty state of no frame, no parent and no history, as the
 * kernel's push_async_cb() queues an async callback (the caller's state does not matter;
 * its stored states do not wait for the callback's path to end). */
static int push_state(struct brt_env *env, int insn_idx, int prev_insn_idx, int fresh,
		      struct brt_vstate **out)
{
	struct brt_pending *p;

	if (env->stack_len >= 8192 * 8) {
		brt_verr(env, "The sequence of %d jumps is too complex.\n", env->stack_len);
		return -E2BIG;
	}
	if (env->stack_len == env->stack_cap) {
		int cap = env->stack_cap ? env->stack_cap * 2 : 64;
		struct brt_pending *s = realloc(env->stack, (size_t)cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		env->stack = s;
		env->stack_cap = cap;
	}
	p = &env->stack[env->stack_len];
	p->st = fresh ? brt_state_new() : brt_state_dup(env->cur);
	if (!p->st)
		return -ENOMEM;
	p->insn_idx = insn_idx;
	p->prev_insn_idx = prev_insn_idx;
	p->log_pos = env->log.end_pos;
	env->stack_len++;
	if (!fresh && env->cur->parent)
		env->cur->parent->branches++;
	*out = p->st;
	return 0;
}

int brt_push_stack(struct brt_env *env, int insn_idx, int prev_insn_idx, struct brt_vstate **out)
{
	return push_state(env, insn_idx, prev_insn_idx, 0, out);
}

int brt_push_async(struct brt_env *env, int insn_idx, int prev_insn_idx, struct brt_vstate **out)
{
	return push_state(env, insn_idx, prev_insn_idx, 1, out);
}

/* A path ended: the stored states it passed have one live descendant fewer; those left
 * with none are complete and may now prune other paths. */
static void update_branch_counts(struct brt_env *env, struct brt_vstate *st)
{
	for (struct brt_vstate *p = st->parent, *up; p; p = up) {
		up = p->parent; /* p may be freed (an evicted state) */
		if (--p->branches)
			break;
		brt_state_done(env, p);
	}
}

static int pop_stack(struct brt_env *env, int *prev, int *idx)
{
	struct brt_pending *p;

	if (!env->stack_len)
		return -ENOENT;
	p = &env->stack[--env->stack_len];
	brt_state_free(env->cur);
	env->cur = p->st;
	*idx = p->insn_idx;
	*prev = p->prev_insn_idx;
	/* level 1 keeps only the trace of the failing path */
	if (!LOG_L2(env))
		brt_vlog_reset(&env->log, p->log_pos);
	return 0;
}

/* The kernel's verbose_linfo(): "; <line> @ <file>:<n>" when the line changes. */
static void print_line(struct brt_env *env, int idx)
{
	const struct brt_vline *l = NULL;
	const char *src, *file, *slash;
	uint32_t lo = 0, hi = env->opts->nlines;

	while (lo < hi) { /* last line starting at or before idx */
		uint32_t mid = lo + (hi - lo) / 2;

		if (env->opts->lines[mid].insn_off <= (uint32_t)idx) {
			l = &env->opts->lines[mid];
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (!l || l == env->prev_line)
		return;
	/* records differing only in column show the same text: print it once */
	if (env->prev_line && env->prev_line->file == l->file &&
	    env->prev_line->line == l->line) {
		env->prev_line = l;
		return;
	}
	src = l->src + strspn(l->src, " \t");
	slash = strrchr(l->file, '/');
	file = slash ? slash + 1 : l->file;
	brt_vinfo(env, "; %s @ %s:%u\n", src, file, l->line);
	env->prev_line = l;
}

void brt_print_scratched(struct brt_env *env)
{
	const struct brt_vstate *st = env->cur;

	if (!env->scratched_regs && !env->scratched_stack)
		return;
	if (env->prev_log_pos && env->prev_log_pos == env->log.end_pos) {
		uint64_t pos = env->prev_insn_print_pos;
		uint64_t w = (pos + 4 > 40 ? pos + 4 : 40);

		w = (w + 7) / 8 * 8 - pos - 1;
		brt_vlog_reset(&env->log, env->prev_log_pos - 1);
		brt_vinfo(env, "%*c;", (int)w, ' ');
	} else {
		brt_vinfo(env, "%d:", env->insn_idx);
	}
	/* only the touched registers and slots */
	brt_print_state(env, st, st->curframe, 0);
	env->scratched_regs = 0;
	env->scratched_stack = 0;
}

static int do_exit(struct brt_env *env, int *do_print)
{
	const struct bpf_insn *insn = &env->insns[env->insn_idx];
	int err;

	if (BPF_SRC(insn->code) != BPF_K || insn->imm || insn->src_reg || insn->dst_reg ||
	    BPF_CLASS(insn->code) == BPF_JMP32) {
		brt_verr(env, "BPF_EXIT uses reserved fields\n");
		return -EINVAL;
	}
	/* a subprogram's exit checks nothing: its caller goes on holding what it holds */
	err = brt_check_resource_leak(env, 0, !env->cur->curframe,
				      "BPF_EXIT instruction in main prog");
	if (err)
		return err;
	if (env->cur->curframe) {
		err = brt_prepare_func_exit(env, &env->insn_idx);
		if (err)
			return err;
		*do_print = 1;
		return 0;
	}
	err = brt_check_return_code(env, BPF_REG_0, "R0");
	return err ? err : 1;
}

static int do_jmp(struct brt_env *env, const struct bpf_insn *insn, int *do_print)
{
	uint8_t op = BPF_OP(insn->code), cls = BPF_CLASS(insn->code);

	env->jmps_processed++;
	if (op == BPF_CALL) {
		if (BPF_SRC(insn->code) != BPF_K ||
		    (insn->src_reg != BPF_PSEUDO_KFUNC_CALL && insn->off) ||
		    (insn->src_reg != 0 && insn->src_reg != BPF_PSEUDO_CALL &&
		     insn->src_reg != BPF_PSEUDO_KFUNC_CALL) ||
		    insn->dst_reg || cls == BPF_JMP32) {
			brt_verr(env, "BPF_CALL uses reserved fields\n");
			return -EINVAL;
		}
		/* while a lock is held only bpf_spin_unlock, bpf-to-bpf calls and the kfuncs
		 * the kernel's kfunc_spin_allowed() names */
		if (env->cur->active_locks &&
		    ((insn->src_reg == 0 && insn->imm != BPF_FUNC_spin_unlock) ||
		     (insn->src_reg == BPF_PSEUDO_KFUNC_CALL && !brt_kfunc_spin_allowed(insn)))) {
			brt_verr(env, "function calls are not allowed while holding a lock\n");
			return -EINVAL;
		}
		if (insn->src_reg == BPF_PSEUDO_CALL)
			return brt_check_func_call(env, insn, &env->insn_idx);
		if (insn->src_reg == BPF_PSEUDO_KFUNC_CALL) {
			int err = brt_check_kfunc_call(env, insn, env->insn_idx);

			return err || !brt_is_throw_call(insn) ? err : brt_throw_exit(env);
		}
		return brt_check_helper_call(env, insn, env->insn_idx);
	}
	if (op == BPF_JA) {
		if (BPF_SRC(insn->code) != BPF_K || insn->src_reg || insn->dst_reg ||
		    (cls == BPF_JMP && insn->imm) || (cls == BPF_JMP32 && insn->off)) {
			brt_verr(env, "BPF_JA uses reserved fields\n");
			return -EINVAL;
		}
		env->insn_idx += cls == BPF_JMP ? insn->off : insn->imm;
		return 0;
	}
	if (op == BPF_EXIT)
		return do_exit(env, do_print);
	if (op == BRT_JCOND)
		return brt_check_may_goto(env, insn, &env->insn_idx);
	return brt_check_cond_jmp(env, insn, &env->insn_idx);
}

/* One instruction.  Returns 0 to continue at env->insn_idx + 1, 1 when the path ended
 * (exit of the main program), or a negative errno. */
static int do_insn(struct brt_env *env, int *do_print)
{
	const struct bpf_insn *insn = &env->insns[env->insn_idx];
	uint8_t cls = BPF_CLASS(insn->code);
	int err;

	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		return brt_check_alu(env, insn);
	case BPF_LDX:
	case BPF_ST:
		return brt_check_load_store(env, insn);
	case BPF_STX:
		if (BPF_MODE(insn->code) == BPF_ATOMIC)
			return brt_check_atomic(env, insn);
		return brt_check_load_store(env, insn);
	case BPF_JMP:
	case BPF_JMP32:
		return do_jmp(env, insn, do_print);
	default: /* BPF_LD */
		if (BPF_MODE(insn->code) == BPF_ABS || BPF_MODE(insn->code) == BPF_IND)
			return brt_check_ld_abs(env, insn);
		if (BPF_MODE(insn->code) == BPF_IMM) {
			err = brt_check_ld_imm(env, insn);
			env->insn_idx++;
			return err;
		}
		brt_verr(env, "invalid BPF_LD mode\n");
		return -EINVAL;
	}
}

static int do_check(struct brt_env *env, int start)
{
	int do_print = 0, err, prev_idx = start;

	env->insn_idx = start;
	env->scratched_regs = 0xffff;
	for (;;) {
		if (env->insn_idx < 0 || env->insn_idx >= env->len) {
			brt_verr(env, "invalid insn idx %d insn_cnt %d\n", env->insn_idx, env->len);
			return -EFAULT;
		}
		if (++env->insn_processed > BRT_COMPLEXITY_LIMIT) {
			brt_verr(env, "BPF program is too large. Processed %u insn\n",
				 env->insn_processed);
			return -E2BIG;
		}
		if (!env->cur->speculative) /* the kernel's sanitize_mark_insn_seen() */
			env->aux[env->insn_idx].seen = 1;
		env->prev_insn_idx = prev_idx;
		env->cur->last_insn_idx = prev_idx;
		env->cur_hent = -1;
		if (env->aux[env->insn_idx].prune_point) {
			err = brt_is_state_visited(env, env->insn_idx);
			if (err < 0)
				return err;
			if (err == 1) {
				if (LOG_L1(env)) {
					if (do_print)
						brt_vinfo(env, "\nfrom %d to %d%s: safe\n", prev_idx,
							  env->insn_idx,
							  env->cur->speculative
								  ? " (speculative execution)" : "");
					else
						brt_vinfo(env, "%d: safe\n", env->insn_idx);
				}
				goto path_end;
			}
		}
		err = brt_hist_note(env, prev_idx);
		if (err)
			return err;
		if (LOG_L2(env) && do_print) {
			brt_vinfo(env, "\nfrom %d to %d%s:", prev_idx, env->insn_idx,
				  env->cur->speculative ? " (speculative execution)" : "");
			brt_print_state(env, env->cur, env->cur->curframe, 1);
			do_print = 0;
		}
		if (LOG_L1(env)) {
			brt_print_scratched(env);
			print_line(env, env->insn_idx);
			env->prev_log_pos = env->log.end_pos;
			brt_vinfo(env, "%d: ", env->insn_idx);
			brt_print_insn(env, env->insn_idx);
			env->prev_insn_print_pos = env->log.end_pos - env->prev_log_pos;
			env->prev_log_pos = env->log.end_pos;
		}
		prev_idx = env->insn_idx;
		/* a barrier stops speculative paths here (ptr_alu.c) */
		if (env->cur->speculative && env->aux[env->insn_idx].nospec)
			goto path_end;
		brt_stack_writes_start(env);
		err = do_insn(env, &do_print);
		if (err >= 0 || brt_spec_recoverable(env, err))
			brt_stack_writes_commit(env);
		if (!err && env->internal_err)
			err = env->internal_err;
		if (err < 0 && brt_spec_recoverable(env, err)) {
			/* the kernel keeps the program and puts a barrier before this insn */
			env->aux[env->insn_idx].nospec = 1;
			env->aux[env->insn_idx].alu_state = 0;
			env->err_msg[0] = 0;
			env->err_insn = -1;
			goto path_end;
		}
		if (err < 0)
			return err;
		/* a speculative path ends after a store the kernel puts a barrier after */
		if (err == 0 && env->cur->speculative && env->aux[prev_idx].nospec_result)
			goto path_end;
		if (err == 0) {
			env->insn_idx++;
			continue;
		}
path_end:
		env->scratched_regs = 0xffff;
		env->scratched_stack = ~0ULL;
		update_branch_counts(env, env->cur);
		brt_stack_live_sync(env);
		brt_live_log_update(env);
		if (pop_stack(env, &prev_idx, &env->insn_idx))
			break;
		do_print = 1;
	}
	/* the last path's end may have propagated a loop's backedges */
	return env->internal_err;
}

static void print_live_regs(struct brt_env *env)
{
	brt_vinfo(env, "Live regs before insn:\n");
	for (int i = 0; i < env->len; i++) {
		char regs[11];

		if (env->aux[i].second_slot)
			continue;
		for (int r = 0; r < 10; r++)
			regs[r] = (env->aux[i].live_in & (1u << r)) ? (char)('0' + r) : '.';
		regs[10] = 0;
		/* the loop's SCC number before the index, as 6.18's compute_live_registers() */
		if (env->aux[i].scc)
			brt_vinfo(env, "%3u ", env->aux[i].scc);
		else
			brt_vinfo(env, "    ");
		brt_vinfo(env, "%3d: %s ", i, regs);
		brt_print_insn(env, i);
	}
}

/* The kernel's can_be_sleepable() (check_attach_btf_id()): BPF_F_SLEEPABLE is for
 * programs that run where they may sleep; a kprobe's is only known at attach (uprobes). */
static int check_sleepable(struct brt_env *env)
{
	const struct brt_verify_opts *o = env->opts;
	int ok;

	if (o->prog_type == BPF_PROG_TYPE_SYSCALL) {
		if (o->prog_flags & BPF_F_SLEEPABLE)
			return 0;
		brt_verr(env, "Syscall programs can only be sleepable\n");
		return -EINVAL;
	}
	if (!(o->prog_flags & BPF_F_SLEEPABLE))
		return 0;
	switch (o->prog_type) {
	case BPF_PROG_TYPE_TRACING:
		ok = o->expected_attach_type == BPF_TRACE_FENTRY ||
		     o->expected_attach_type == BPF_TRACE_FEXIT ||
		     o->expected_attach_type == BPF_MODIFY_RETURN ||
		     o->expected_attach_type == BPF_TRACE_ITER;
		break;
	case BPF_PROG_TYPE_LSM:
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_STRUCT_OPS:
		ok = 1;
		break;
	default:
		ok = 0;
		break;
	}
	if (ok)
		return 0;
	brt_verr(env, "Only fentry/fexit/fmod_ret, lsm, iter, uprobe, and struct_ops programs "
		      "can be sleepable\n");
	return -EINVAL;
}

/* One walk (the kernel's do_check_common()): the main program from its context, or
 * global function sub on its own from its prototype.  The log of a walk that succeeds
 * is dropped at level 1, as the kernel's. */
static int walk(struct brt_env *env, int sub)
{
	struct brt_frame *f;
	int err = 0;

	env->prev_line = NULL;
	env->cur = brt_state_new();
	if (!env->cur)
		return -ENOMEM;
	f = env->cur->frame[0] = brt_frame_new(-1, 0, sub);
	if (!f)
		return -ENOMEM;
	env->cur->first_insn_idx = env->subprogs[sub].start;
	env->insn_idx = env->subprogs[sub].start;
	if (sub) {
		err = brt_global_entry(env, sub, f);
	} else {
		brt_global_main_args(env);
		f->regs[BPF_REG_1].type = PTR_TO_CTX;
		brt_mark_reg_known_zero(&f->regs[BPF_REG_1]);
	}
	if (!err)
		err = do_check(env, env->subprogs[sub].start);
	if (err)
		return err;
	if (!LOG_L2(env))
		brt_vlog_reset(&env->log, 0);
	brt_state_free(env->cur);
	env->cur = NULL;
	brt_reset_stored(env);
	return 0;
}

static int run_passes(struct brt_env *env)
{
	int err;

	err = brt_bind_fd_array(env);
	if (!err)
		err = brt_check_subprogs(env);
	if (!err)
		err = brt_check_insns(env);
	if (!err)
		err = brt_check_abnormal_return(env);
	if (!err)
		err = check_sleepable(env); /* where the kernel checks the attach target */
	if (!err)
		err = brt_check_attach_btf(env);
	env->insn_idx = 0;
	if (!err)
		err = brt_check_cfg(env);
	if (err)
		return err;
	err = brt_compute_liveness(env);
	if (!err)
		err = brt_compute_scc(env);
	if (err)
		return err;
	err = brt_live_log_init(env);
	if (err)
		return err;
	if (LOG_L2(env))
		print_live_regs(env);
	for (int i = 0; i < env->subprog_cnt; i++)
		env->subprogs[i].changes_pkt = env->subprogs[i].might_sleep = -1;
	err = walk(env, 0);
	/* the kernel's do_check_subprogs(): every global function a walk reached a call
	 * of, once, until no new one is reached; the exception callback is presumed
	 * called */
	if (env->exc_cb_subprog)
		env->subprogs[env->exc_cb_subprog].called = 1;
	for (int again = 1; !err && again;) {
		again = 0;
		for (int i = 1; !err && i < env->subprog_cnt; i++) {
			struct brt_subprog *sp = &env->subprogs[i];

			if (!brt_subprog_is_global(env, i) || !sp->called || sp->verified)
				continue;
			err = walk(env, i);
			if (err)
				break;
			/* level 1 or 2 only: the statistics level (4) prints none, as the
			 * kernel's do_check_subprogs() */
			if (LOG_L1(env))
				brt_vinfo(env, "Func#%d ('%s') is safe for any args that match "
					       "its prototype\n", i, brt_subprog_name(env, i));
			sp->verified = 1;
			again = 1;
		}
	}
	if (!err)
		err = brt_check_max_stack_depth(env);
	/* the kernel's convert_ctx_accesses(), after the walk, over the live instructions */
	for (int i = 0; !err && i < env->len; i++)
		if (env->aux[i].seen && env->aux[i].bad_ctx_conv) {
			brt_verr(env, "verifier bug: error during ctx access conversion (0)\n");
			err = -EFAULT;
		}
	/* do_misc_fixups()' fixup_kfunc_call(): a weak kfunc libbpf left unresolved (id 0)
	 * must be in code the walk never reached (removed as dead in the kernel) */
	for (int i = 0; !err && i < env->len; i++)
		if (env->aux[i].seen && env->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    env->insns[i].src_reg == BPF_PSEUDO_KFUNC_CALL && !env->insns[i].imm) {
			brt_verr(env, "invalid kernel function call not eliminated in verifier "
				      "pass\n");
			err = -EINVAL;
		}
	/* do_misc_fixups(): a function with a may_goto the walk reached (the kernel drops
	 * dead code and `may_goto +0` first) gets the counter's hidden slots, which the
	 * kernel's stack depth counts: 16 bytes on x86-64 (count and timestamp) */
	for (int k = 0; !err && k < env->subprog_cnt; k++)
		for (int i = env->subprogs[k].start; i < env->subprogs[k + 1].start; i++)
			if (env->aux[i].seen && brt_is_may_goto(&env->insns[i]) &&
			    env->insns[i].off) {
				env->subprogs[k].stack_depth += 16;
				break;
			}
	return err;
}

static void free_env(struct brt_env *env)
{
	brt_state_free(env->cur);
	for (int i = 0; i < env->stack_len; i++)
		brt_state_free(env->stack[i].st);
	free(env->stack);
	free(env->linked);
	brt_free_stored(env);
	free(env->explored);
	free(env->bucket_states);
	free(env->aux);
	free(env->stack_up);
	brt_live_log_free(env);
	brt_graph_free(env);
	if (env->maps != env->map_inline)
		free(env->maps);
	if (env->subprogs != env->sub_inline)
		free(env->subprogs);
	free(env->obj_types);
	free(env->own_ops);
}

/* Subprogram k's stack depth as the kernel's statistics line prints it, -1 for one it does
 * not print.  The kernel prints after its rewrites of a program it accepts (ok): a
 * privileged load drops every subprogram no path reached (opt_remove_dead_code), and an
 * inlined bpf_loop (flags known 0, one callback: the walk's loop_fit) takes 3 slots and the
 * round-up to 8 of its function's frame (optimize_bpf_loop).  Only the log: bpfrt's own
 * bpf_loop needs no slots. */
static int printed_depth(const struct brt_env *env, int k, int ok)
{
	int depth = env->subprogs[k].stack_depth, seen = 0, loop = 0;

	if (!ok)
		return depth;
	for (int i = env->subprogs[k].start; i < env->subprogs[k + 1].start; i++) {
		seen |= env->aux[i].seen != 0;
		loop |= env->aux[i].seen && env->aux[i].loop_init && env->aux[i].loop_fit;
	}
	if (!seen && env->bpf_capable)
		return -1;
	return loop ? depth + 3 * 8 + (-depth & 7) : depth;
}

static void print_stats(struct brt_env *env, int ok)
{
	if (env->log.level & BRT_LOG_STATS) {
		struct timespec now;
		uint64_t ns = 0;

		/* as the kernel's: the whole check, from entry to these statistics */
		if (env->start_ns && !clock_gettime(CLOCK_MONOTONIC, &now))
			ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec -
			     env->start_ns;
		brt_vinfo(env, "verification time %llu usec\n", (unsigned long long)(ns / 1000));
		brt_vinfo(env, "stack depth ");
		for (int i = 0, n = 0; i < env->subprog_cnt; i++) {
			int d = printed_depth(env, i, ok);

			if (d >= 0)
				brt_vinfo(env, "%s%d", n++ ? "+" : "", d);
		}
		/* do_misc_fixups() appends the default exception callback (r0 = r1; exit) */
		if (ok && env->seen_exception && !env->exc_cb_subprog)
			brt_vinfo(env, "+0");
		brt_vinfo(env, "\n");
	}
	brt_vinfo(env, "processed %u insns (limit %d) max_states_per_insn %u total_states %u "
		       "peak_states %u mark_read %u\n",
		  env->insn_processed, BRT_COMPLEXITY_LIMIT, env->max_states_per_insn,
		  env->total_states, env->peak_states, 0u);
}

int brt_verify_log_early(uint32_t level, struct brt_log_buf *buf, uint32_t size,
			 const char *msg, uint32_t *true_size)
{
	struct brt_env *env = calloc(1, sizeof(*env));
	struct brt_log_buf none = { NULL, 0 };
	int err;

	if (!env)
		return -ENOMEM;
	env->subprogs = env->sub_inline;
	env->subprog_cap = (int)(sizeof(env->sub_inline) / sizeof(env->sub_inline[0]));
	err = brt_vlog_init_grow(&env->log, level, buf && buf->buf ? buf : &none,
				 buf && buf->buf ? size : 0);
	if (!err) {
		if (msg && *msg)
			brt_vlog(&env->log, "%s", msg);
		env->subprog_cnt = 1; /* the kernel's stack depth line names the main program */
		print_stats(env, 0);
		err = brt_vlog_finalize(&env->log, true_size);
	}
	free(env);
	return err;
}

int brt_verify(const struct bpf_insn *insns, size_t n, const struct brt_verify_opts *opts,
	       struct brt_verify_result *res)
{
	struct brt_env *env;
	uint32_t true_size = 0;
	int err, lerr;

	if (res) {
		memset(res, 0, sizeof(*res));
		res->err_insn = -1;
	}
	if (!opts || !insns || n == 0 || !brt_prog_type_has(opts->prog_type, BRT_PT_LOAD))
		return -EINVAL;
	if (n > (opts->priv == BRT_PRIV_UNPRIV ? 4096u : (size_t)BRT_COMPLEXITY_LIMIT))
		return -E2BIG;
	if (opts->priv == BRT_PRIV_UNPRIV && !brt_prog_type_has(opts->prog_type, BRT_PT_UNPRIV))
		return -EPERM;
	if (opts->priv != BRT_PRIV_ROOT && brt_prog_type_has(opts->prog_type, BRT_PT_PERFMON))
		return -EPERM;
	/* fentry/fexit/fmod_ret run from a trampoline on a kernel function: there is none
	 * to build in user space.  Refused before any check with EPERM and no log, as the
	 * corpus host's Linux 6.18 refuses them (its policy forbids trampolines); the
	 * context and return-value rules for them are in btf_ctx.c all the same. */
	if (opts->prog_type == BPF_PROG_TYPE_TRACING &&
	    (opts->expected_attach_type == BPF_TRACE_FENTRY ||
	     opts->expected_attach_type == BPF_TRACE_FEXIT ||
	     opts->expected_attach_type == BPF_MODIFY_RETURN))
		return -EPERM;
	/* LSM programs run from a trampoline on an LSM hook, freplace (ext) programs from
	 * one on a program's function: the same, and the corpus host refuses every one of
	 * them with EPERM and no log, whatever its attach type, target or licence
	 * (tests/trace/test_btf_oracle.c) */
	if (opts->prog_type == BPF_PROG_TYPE_LSM || opts->prog_type == BPF_PROG_TYPE_EXT)
		return -EPERM;
	env = calloc(1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	env->subprogs = env->sub_inline;
	env->subprog_cap = (int)(sizeof(env->sub_inline) / sizeof(env->sub_inline[0]));
	env->maps = env->map_inline;
	env->maps_cap = (int)(sizeof(env->map_inline) / sizeof(env->map_inline[0]));
	{
		struct timespec t;

		if (!clock_gettime(CLOCK_MONOTONIC, &t))
			env->start_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
	}
	err = opts->log_grow ? brt_vlog_init_grow(&env->log, opts->log_level, opts->log_grow,
						 opts->log_size)
			     : brt_vlog_init(&env->log, opts->log_level, opts->log_buf,
					     opts->log_size);
	if (err) {
		free(env);
		return err;
	}
	env->insns = insns;
	env->len = (int)n;
	env->opts = opts;
	env->kbtf = opts->attach_btf;
	env->err_insn = -1;
	env->allow_ptr_leaks = opts->priv == BRT_PRIV_ROOT;
	env->allow_uninit_stack = opts->priv == BRT_PRIV_ROOT;
	env->bypass_spec_v1 = opts->priv == BRT_PRIV_ROOT;
	env->bpf_capable = opts->priv != BRT_PRIV_UNPRIV;
	env->strict_alignment = (opts->prog_flags & BPF_F_STRICT_ALIGNMENT) &&
				!(opts->prog_flags & BPF_F_ANY_ALIGNMENT);
	env->ops = opts->ops;
	if (!env->ops) {
		env->own_ops = malloc(n * sizeof(*env->own_ops));
		if (env->own_ops)
			brt_isa_lookup_prog(insns, n, env->own_ops);
		env->ops = env->own_ops;
	}
	env->aux = calloc(n, sizeof(*env->aux));
	env->stack_write_insn = -1;
	env->explored = calloc(n, sizeof(*env->explored));
	env->bucket_states = calloc(n, sizeof(*env->bucket_states));
	if (!env->aux || !env->explored || !env->bucket_states || !env->ops)
		err = -ENOMEM;
	else
		err = run_passes(env);
	print_stats(env, !err);
	lerr = brt_vlog_finalize(&env->log, &true_size);
	if (lerr)
		err = lerr;
	for (int i = 0; !err && opts->call_maps && i < env->len; i++) {
		int k = env->aux[i].call_map - 1;

		if (k < 0)
			continue;
		opts->call_maps[i] = env->maps[k].info.ptr;
		/* an inner map's template: its map of maps, for a caller that is told so */
		if (env->maps[k].is_tmpl && k > 0 && opts->insn_flags)
			opts->call_maps[i] = env->maps[k - 1].info.ptr;
	}
	for (int i = 0; !err && opts->ctx_read_off && i < env->len; i++)
		opts->ctx_read_off[i] = env->aux[i].ctx_read_off;
	for (int i = 0; !err && opts->loop_callback && i < env->len; i++)
		if (env->aux[i].seen && env->aux[i].loop_init && env->aux[i].loop_fit &&
		    env->aux[i].loop_subprog >= 0 && env->aux[i].loop_subprog < env->subprog_cnt)
			opts->loop_callback[i] =
				1 + (uint32_t)env->subprogs[env->aux[i].loop_subprog].start;
	for (int i = 0; !err && opts->insn_flags && i < env->len; i++) {
		int first = env->aux[i].second_slot && i ? i - 1 : i;

		opts->insn_flags[i] = (uint8_t)((env->aux[first].seen ? BRT_INSN_SEEN : 0) |
						(env->aux[i].ptr_kind == 1 ? BRT_INSN_CTX : 0) |
						(env->aux[i].pkt_write ? BRT_INSN_PKT_WRITE : 0) |
						(env->aux[i].probe_load ? BRT_INSN_PROBE : 0) |
						(env->aux[i].call_map > 0 &&
						 env->maps[env->aux[i].call_map - 1].is_tmpl ?
							 BRT_INSN_INNER_MAP : 0));
	}
	if (res) {
		res->insn_processed = env->insn_processed;
		res->max_states_per_insn = env->max_states_per_insn;
		res->total_states = env->total_states;
		res->peak_states = env->peak_states;
		res->log_true_size = true_size;
		res->subprog_cnt = (uint32_t)env->subprog_cnt;
		res->max_ctx_offset = env->max_ctx_offset;
		res->btf_loads = env->btf_loads;
		res->nobj_types = env->nobj_types;
		res->throws = env->seen_exception;
		res->exc_cb_insn = env->exc_cb_subprog ?
			(uint32_t)env->subprogs[env->exc_cb_subprog].start : 0;
		if (env->nobj_types)
			memcpy(res->obj_types, env->obj_types,
			       env->nobj_types * sizeof(res->obj_types[0]));
		for (int i = 0; i < env->subprog_cnt && i < 256; i++)
			res->stack_depth[i] = (uint32_t)env->subprogs[i].stack_depth;
		if (err && err != -ENOSPC) {
			res->err_insn = env->err_insn;
			memcpy(res->err_msg, env->err_msg, sizeof(res->err_msg));
		}
	}
	free_env(env);
	free(env);
	return err;
}
