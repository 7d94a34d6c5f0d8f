/* sec_types: one trivial program per SEC() convention, to check the section-name table
 * (types and expected attach types); each returns its own number. */
#include "bpfrt_progs.h"

#define P(sec, name, n) SEC(sec) int name(void *ctx) { return n; }

P("tracepoint/syscalls/sys_enter_write", tp_write, 1)
P("tp/sched/sched_switch", tp_short, 2)
P("raw_tp/sched_switch", raw_tp, 3)
P("raw_tracepoint/sys_enter", raw_tracepoint, 4)
P("kprobe/do_sys_open", kp, 5)
P("kretprobe/do_sys_open", krp, 6)
P("uprobe//bin/sh:main", up, 7)
P("xdp", xdp_prog, 8)
P("tc", tc_prog, 9)
P("classifier/ingress", cls_prog, 10)
P("cgroup_skb/ingress", cg_in, 11)
P("cgroup_skb/egress", cg_out, 12)
P("perf_event", perf, 13)
P("cgroup/connect4", connect4, 14)
P("sk_msg", skmsg, 15)
P("flow_dissector", dissect, 16)
P("fentry/do_unlinkat", fentry_prog, 17)
P("lsm/file_open", lsm_prog, 18)
P("sockops", sockops_prog, 19)
P("xdp/devmap", xdp_devmap, 20)
P("mystery_section", unknown, 21)

char _license[] SEC("license") = "Dual BSD/GPL";
unsigned int _version SEC("version") = 0x060100;
