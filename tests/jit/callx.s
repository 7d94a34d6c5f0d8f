; callx.s - a helper call through a register (callx), for jit.cli_dump: the dump must
; name the callx, show the indirect call and the shared exits.
mov %r1, 7
mov %r2, 5
callx %r2
mov %r0, 2
exit
