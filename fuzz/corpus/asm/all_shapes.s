mov %r6, %r1
mov %r0, 0
mov32 %r2, %r0
add %r0, 5
stxdw [%r10-8], %r0
ldxw %r3, [%r10-8]
lock add [%r10-8], %r0
lock fetch or32 [%r10-8], %r3
lock xchg [%r10-8], %r0
lock cmpxchg [%r10-8], %r3
be16 %r3
le64 %r3
bswap32 %r3
neg32 %r3
neg %r3
sdiv %r3, 3
smod32 %r3, -3
movsx864 %r4, %r3
movsx1632 %r4, %r3
ldxsb %r5, [%r10-8]
stw [%r10-16], -5
lddw %r1, 0x1122334455667788
lddw %r1, -1
jeq %r3, 0x10, +1
jsgt32 %r3, %r1, +0
ja +0
call 5
call local sub
arsh %r0, 3
ldabsb 3
ldindh %r6, -2
exit
sub:
mov %r0, 1
ja32 +0
exit
