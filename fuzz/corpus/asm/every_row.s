add %r1, 7
add %r1, %r2
sub %r1, 7
sub %r1, %r2
mul %r1, 7
mul %r1, %r2
div %r1, 7
div %r1, %r2
sdiv %r1, 7
sdiv %r1, %r2
or %r1, 7
or %r1, %r2
and %r1, 7
and %r1, %r2
lsh %r1, 7
lsh %r1, %r2
rsh %r1, 7
rsh %r1, %r2
neg %r1
mod %r1, 7
mod %r1, %r2
smod %r1, 7
smod %r1, %r2
xor %r1, 7
xor %r1, %r2
mov %r1, 7
mov %r1, %r2
movsx864 %r1, %r2
movsx1664 %r1, %r2
movsx3264 %r1, %r2
arsh %r1, 7
arsh %r1, %r2
bswap16 %r1
bswap32 %r1
bswap64 %r1
add32 %r1, 7
add32 %r1, %r2
sub32 %r1, 7
sub32 %r1, %r2
mul32 %r1, 7
mul32 %r1, %r2
div32 %r1, 7
div32 %r1, %r2
sdiv32 %r1, 7
sdiv32 %r1, %r2
or32 %r1, 7
or32 %r1, %r2
and32 %r1, 7
and32 %r1, %r2
lsh32 %r1, 7
lsh32 %r1, %r2
rsh32 %r1, 7
rsh32 %r1, %r2
neg32 %r1
mod32 %r1, 7
mod32 %r1, %r2
smod32 %r1, 7
smod32 %r1, %r2
xor32 %r1, 7
xor32 %r1, %r2
mov32 %r1, 7
mov32 %r1, %r2
movsx832 %r1, %r2
movsx1632 %r1, %r2
arsh32 %r1, 7
arsh32 %r1, %r2
le16 %r1
le32 %r1
le64 %r1
be16 %r1
be32 %r1
be64 %r1
ja -8
ja32 +7
jeq %r1, 7, -8
jeq %r1, %r2, -8
jeq32 %r1, 7, -8
jeq32 %r1, %r2, -8
jgt %r1, 7, -8
jgt %r1, %r2, -8
jgt32 %r1, 7, -8
jgt32 %r1, %r2, -8
jge %r1, 7, -8
jge %r1, %r2, -8
jge32 %r1, 7, -8
jge32 %r1, %r2, -8
jset %r1, 7, -8
jset %r1, %r2, -8
jset32 %r1, 7, -8
jset32 %r1, %r2, -8
jne %r1, 7, -8
jne %r1, %r2, -8
jne32 %r1, 7, -8
jne32 %r1, %r2, -8
jsgt %r1, 7, -8
jsgt %r1, %r2, -8
jsgt32 %r1, 7, -8
jsgt32 %r1, %r2, -8
jsge %r1, 7, -8
jsge %r1, %r2, -8
jsge32 %r1, 7, -8
jsge32 %r1, %r2, -8
jlt %r1, 7, -8
jlt %r1, %r2, -8
jlt32 %r1, 7, -8
jlt32 %r1, %r2, -8
jle %r1, 7, -8
jle %r1, %r2, -8
jle32 %r1, 7, -8
jle32 %r1, %r2, -8
jslt %r1, 7, -8
jslt %r1, %r2, -8
jslt32 %r1, 7, -8
jslt32 %r1, %r2, -8
jsle %r1, 7, -8
jsle %r1, %r2, -8
jsle32 %r1, 7, -8
jsle32 %r1, %r2, -8
call 7
call local +7
callx %r1
exit
lddw %r1, map_value 7 0
ldabsb 7
ldabsh 7
ldabsw 7
ldindb %r2, 7
ldindh %r2, 7
ldindw %r2, 7
ldxb %r1, [%r2-8]
ldxh %r1, [%r2-8]
ldxw %r1, [%r2-8]
ldxdw %r1, [%r2-8]
ldxsb %r1, [%r2-8]
ldxsh %r1, [%r2-8]
ldxsw %r1, [%r2-8]
stb [%r1-8], 7
sth [%r1-8], 7
stw [%r1-8], 7
stdw [%r1-8], 7
stxb [%r1-8], %r2
stxh [%r1-8], %r2
stxw [%r1-8], %r2
stxdw [%r1-8], %r2
lock add32 [%r1-8], %r2
lock add [%r1-8], %r2
lock or32 [%r1-8], %r2
lock or [%r1-8], %r2
lock and32 [%r1-8], %r2
lock and [%r1-8], %r2
lock xor32 [%r1-8], %r2
lock xor [%r1-8], %r2
lock fetch add32 [%r1-8], %r2
lock fetch add [%r1-8], %r2
lock fetch or32 [%r1-8], %r2
lock fetch or [%r1-8], %r2
lock fetch and32 [%r1-8], %r2
lock fetch and [%r1-8], %r2
lock fetch xor32 [%r1-8], %r2
lock fetch xor [%r1-8], %r2
lock xchg32 [%r1-8], %r2
lock xchg [%r1-8], %r2
lock cmpxchg32 [%r1-8], %r2
lock cmpxchg [%r1-8], %r2
