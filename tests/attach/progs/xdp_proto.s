# xdp_proto.s - XDP (r1 = struct xdp_md *): IPv4 UDP -> XDP_DROP; IPv4 ICMP -> MAC
# addresses swapped, XDP_TX; ARP -> XDP_ABORTED; anything else (and frames too short to
# tell) -> XDP_PASS.  For tests/attach/cli_ebpf.sh.
        ldxw %r2, [%r1+0]           # data
        ldxw %r3, [%r1+4]           # data_end
        mov %r0, 2                  # XDP_PASS
        mov %r4, %r2
        add %r4, 14
        jgt %r4, %r3, out
        ldxh %r5, [%r2+12]          # EtherType, read little-endian
        jeq %r5, 0x0608, arp
        jne %r5, 0x0008, out
        mov %r4, %r2
        add %r4, 34
        jgt %r4, %r3, out
        ldxb %r5, [%r2+23]          # IP protocol
        jeq %r5, 17, drop
        jne %r5, 1, out
        ldxw %r6, [%r2+0]           # ICMP: swap destination and source MAC
        ldxh %r7, [%r2+4]
        ldxw %r8, [%r2+6]
        ldxh %r9, [%r2+10]
        stxw [%r2+0], %r8
        stxh [%r2+4], %r9
        stxw [%r2+6], %r6
        stxh [%r2+10], %r7
        mov %r0, 3                  # XDP_TX
        exit
drop:   mov %r0, 1                  # XDP_DROP
        exit
arp:    mov %r0, 0                  # XDP_ABORTED
out:    exit
