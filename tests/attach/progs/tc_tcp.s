# tc_tcp.s - tc classifier (r1 = struct __sk_buff *): IPv4 TCP -> TC_ACT_SHOT, everything
# else -> TC_ACT_OK; the protocol byte comes through bpf_skb_load_bytes and the IPv4 test
# through skb->protocol.  For tests/attach/cli_ebpf.sh.
        mov %r0, 0                  # TC_ACT_OK
        ldxw %r2, [%r1+16]          # skb->protocol, network order
        jne %r2, 0x0008, out
        mov %r2, 23                 # Ethernet + offsetof(struct iphdr, protocol)
        mov %r3, %r10
        add %r3, -8
        mov %r4, 1
        call 26                     # bpf_skb_load_bytes(skb, 23, fp - 8, 1)
        mov %r1, %r0
        mov %r0, 0
        jne %r1, 0, out
        ldxb %r2, [%r10-8]
        jne %r2, 6, out
        mov %r0, 2                  # TC_ACT_SHOT
out:    exit
