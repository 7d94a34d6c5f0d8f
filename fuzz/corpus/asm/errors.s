or %r0, %r50
lock
ja NOWHERE
