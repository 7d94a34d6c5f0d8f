/* type_matches.bpf.c - local types for BPF_CORE_TYPE_MATCHES (libbpf's type-match rules):
 * clang 14 cannot emit that kind, so the program asks bpf_core_type_exists() and the
 * oracle test (test_core_oracle.c) rewrites these records' kind from TYPE_EXISTS to
 * TYPE_MATCHES before libbpf and bpfrt both open the object. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

/* matches: members by name, ints of the same size and sign (pid_t is an int) */
struct task_struct___m1 { int pid; int tgid; } __attribute__((preserve_access_index));
/* a member's int of another size */
struct task_struct___m2 { long pid; } __attribute__((preserve_access_index));
/* a member the kernel's struct lacks */
struct task_struct___m3 { int no_such_field; } __attribute__((preserve_access_index));
/* a pointer member: the pointee matched by name (a forward declaration) */
struct mm_struct___fwd;
struct task_struct___m4 { struct mm_struct___fwd *mm; } __attribute__((preserve_access_index));
/* an array member of the same element type and length */
struct task_struct___m5 { char comm[16]; } __attribute__((preserve_access_index));
/* an array member of another length */
struct task_struct___m6 { char comm[8]; } __attribute__((preserve_access_index));
/* a member of another kind (int where the kernel has a pointer) */
struct task_struct___m7 { int mm; } __attribute__((preserve_access_index));
/* unsigned where the kernel's is signed */
struct task_struct___m8 { unsigned int pid; } __attribute__((preserve_access_index));
/* enums: every local enumerator's name in the target's */
enum bpf_map_type___m1 { BPF_MAP_TYPE_HASH___m1 = 1, BPF_MAP_TYPE_ARRAY___m1 = 77 };
enum bpf_map_type___m2 { BPF_MAP_TYPE_NOPE___m2 = 1 };
/* a union and a struct/union kind mismatch */
union bpf_attr___m1 { __u32 map_type; } __attribute__((preserve_access_index));
struct bpf_attr___m2 { __u32 map_type; } __attribute__((preserve_access_index));
/* a name no kernel type has */
struct no_such_type___m { int a; } __attribute__((preserve_access_index));

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 16); __type(key, __u32); __type(value, __u64); } res SEC(".maps");

static __always_inline void store(__u32 k, __u64 v)
{
	bpf_map_update_elem(&res, &k, &v, 0);
}

SEC("kprobe/do_nanosleep")
int matches(void *ctx)
{
	store(0, bpf_core_type_exists(struct task_struct___m1));
	store(1, bpf_core_type_exists(struct task_struct___m2));
	store(2, bpf_core_type_exists(struct task_struct___m3));
	store(3, bpf_core_type_exists(struct task_struct___m4));
	store(4, bpf_core_type_exists(struct task_struct___m5));
	store(5, bpf_core_type_exists(struct task_struct___m6));
	store(6, bpf_core_type_exists(struct task_struct___m7));
	store(7, bpf_core_type_exists(struct task_struct___m8));
	store(8, bpf_core_type_exists(enum bpf_map_type___m1));
	store(9, bpf_core_type_exists(enum bpf_map_type___m2));
	store(10, bpf_core_type_exists(union bpf_attr___m1));
	store(11, bpf_core_type_exists(struct bpf_attr___m2));
	store(12, bpf_core_type_exists(struct no_such_type___m));
	return 0;
}
