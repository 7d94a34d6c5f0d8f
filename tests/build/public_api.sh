#!/bin/sh
# public_api.sh - print the names of the functions declared BPFRT_API in the public headers
# (include/bpfrt.h and include/bpfrt/*.h), one per line, sorted.  Comments are stripped
# first so a name mentioned in a doc comment does not count.
#   public_api.sh INCLUDE_DIR
set -eu
for h in "$1"/bpfrt.h "$1"/bpfrt/*.h; do
	[ -f "$h" ] || continue
	# -fpreprocessed: drop comments, keep macros unexpanded.
	gcc -fpreprocessed -dD -E -P -x c "$h" 2>/dev/null
done | awk '
	/^[ \t]*#/ { next }
	/BPFRT_API/ && !/#define/ { decl = ""; want = 1 }
	want { decl = decl " " $0
	       if (index(decl, "(")) {
		       sub(/\(.*/, "", decl)
		       n = split(decl, w, /[^A-Za-z0-9_]+/)
		       while (n > 0 && w[n] == "") n--
		       print w[n]
		       want = 0
	       } }
' | sort -u
