#!/bin/bash
# corpus-dump.sh DUMP_BINARY OUTDIR [CORPUS] - what the ELF stage makes of every object of
# the real-world corpus (tests/corpus/corpus_dump.c, built as build-*/tests/corpus_dump:
# every program linked and relocated, maps, messages), one file per object under OUTDIR, for
# comparing two builds (copy the corpus first if the corpus may be rebuilt meanwhile):
#   scripts/corpus-dump.sh build-a/tests/corpus_dump /tmp/a
#   scripts/corpus-dump.sh build-b/tests/corpus_dump /tmp/b
#   diff -r /tmp/a /tmp/b && echo identical
# (a loader change that moves work from the open to a program's first use must leave
# every dump identical: session 17's lazy linking was checked this way).
set -eu
bin=$1
out=$2
corpus=${3:-$HOME/.cache/bpfrt-corpus}
mkdir -p "$out"
n=0
while IFS= read -r -d '' obj; do
	rel=${obj#"$corpus"/}
	mkdir -p "$out/$(dirname "$rel")"
	"$bin" "$obj" >"$out/$rel.txt" 2>&1 || echo "exit $?" >>"$out/$rel.txt"
	n=$((n + 1))
done < <(find "$corpus" -name '*.o' -print0 | sort -z)
echo "$n objects dumped to $out"
