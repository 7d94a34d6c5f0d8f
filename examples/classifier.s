# r1 = packet, r2 = length -> r0 = TCP/UDP destination port, or 0
        mov %r0, 0
        jlt %r2, 34, out            # Ethernet + minimal IPv4
        ldxh %r3, [%r1+12]          # EtherType, network order
        jne %r3, 0x0008, out        # 0x0800 read little-endian
        ldxb %r4, [%r1+14]          # version and header length
        mov %r5, %r4
        rsh %r5, 4
        jne %r5, 4, out
        and %r4, 0xf
        lsh %r4, 2                  # IPv4 header length in bytes
        jlt %r4, 20, out
        ldxb %r5, [%r1+23]          # IP protocol
        jeq %r5, 6, ports           # TCP
        jne %r5, 17, out            # UDP
ports:  add %r4, 14                 # offset of the L4 header
        mov %r6, %r4
        add %r6, 4
        jgt %r6, %r2, out           # ports must be inside the packet
        add %r1, %r4
        ldxh %r0, [%r1+2]           # destination port
        be16 %r0
out:    exit
