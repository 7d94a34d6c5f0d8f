lddw %r1, map_value 3 16
lddw %r2, func L
call local L
L: ja32 exit
lock fetch add32 [%r10-8], %r1
call %r2
ldindw %r3, -4 # c
exit
