/* bpfrt.h - the whole public API of libbpfrt, a userspace eBPF runtime.
 *
 * One include gives everything: version and diagnostics (bpfrt/common.h), the
 * instruction-level tools - assembler, disassembler, engines (bpfrt/vm.h) - and, as
 * they land, the bpf() entry point, maps, programs, objects and attach points.
 * Kernel types (struct bpf_insn, union bpf_attr, BPF_* constants) come unchanged from
 * <linux/bpf.h>.
 */
#ifndef BPFRT_H
#define BPFRT_H

#include <linux/bpf.h>

#include "bpfrt/common.h"
#include "bpfrt/asm.h"
#include "bpfrt/vm.h"
#include "bpfrt/attach.h"
#include "bpfrt/bpf.h"
#include "bpfrt/object.h"
#include "bpfrt/trace.h"
#include "bpfrt/probe.h"
#include "bpfrt/perf.h"

#endif
