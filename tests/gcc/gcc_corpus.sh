#!/bin/sh
# gcc_corpus.sh SRC_DIR OUT_DIR CORPUS_DIFF BTF_ORACLE [GCC] - bpfrt's own eBPF C programs compiled by a
# second compiler, GCC's BPF back end (Debian 12's gcc-bpf: bpf-gcc, GCC 12), into
# OUT_DIR/<set>/*.o, their .BTF loaded into the kernel and into bpfrt by BTF_ORACLE
# (tests/gcc/btf_oracle.c), then the programs loaded program by program into the kernel and into bpfrt by
# tests/corpus/corpus_diff with tests/gcc/baseline.txt (ctest gcc.corpus_diff; docs/CORPUS.md
# "A second compiler").  The real-world corpus is all clang's: GCC selects other
# instructions and writes other BTF (GCC 12: INT encodings the kernel refuses, .BTF.ext without
# func_info, binutils' own data relocation numbers), which the ELF loader, the BTF parser and
# the verifier must answer as the kernel and libbpf do.
# Sources GCC cannot compile are listed with GCC's first error, never left out silently.
# Exit 77 with "skipped: <reason>" without bpf-gcc.
src=$1
out=$2
diff=$3
btf=$4
gcc=${5:-}
if [ -z "$gcc" ]; then
	for g in bpf-gcc bpf-unknown-none-gcc bpf-none-gcc; do
		command -v "$g" >/dev/null 2>&1 && { gcc=$g; break; }
	done
fi
[ -n "$gcc" ] && command -v "$gcc" >/dev/null 2>&1 ||
	{ echo "skipped: no bpf-gcc (Debian: apt-get install gcc-bpf)"; exit 77; }
[ -x "$diff" ] || { echo "skipped: no corpus_diff (libbpf-dev missing)"; exit 77; }
echo "compiler: $("$gcc" --version | head -1)"
# bpf-gcc searches no host include directory: the UAPI headers (<linux/bpf.h>) are taken
# after its own, as clang -target bpf takes them.
inc="-idirafter /usr/include"
multi=$(gcc -print-multiarch 2>/dev/null)
[ -n "$multi" ] && inc="$inc -idirafter /usr/include/$multi"
rm -rf "$out" && mkdir -p "$out" || exit 2
# glibc's <gnu/stubs.h>, reached through <string.h> (the bench's programs), wants the 32-bit
# stubs on a target that is not x86_64: an empty one, as clang -target bpf needs too
mkdir -p "$out/.stubs/gnu" && : >"$out/.stubs/gnu/stubs-32.h"
inc="$inc -idirafter $out/.stubs"
nsrc=0 nfail=0
# compile SET SOURCE FLAGS...: SOURCE into OUT_DIR/SET/NAME.o, or its first error listed
compile() {
	set_=$1 c=$2
	shift 2
	mkdir -p "$out/$set_"
	nsrc=$((nsrc + 1))
	o="$out/$set_/$(basename "$c" .c).o"
	# -gbtf: .BTF and .BTF.ext as clang's -g writes them (GCC 12 writes no DWARF-free BTF
	# otherwise); the maps and global data are described there
	if ! "$gcc" -O2 -gbtf $inc "$@" -c "$c" -o "$o" 2>"$o.err"; then
		nfail=$((nfail + 1))
		echo "gcc cannot compile: $set_/$(basename "$c"): $(grep -m1 -E 'error' "$o.err")"
		rm -f "$o"
	fi
	rm -f "$o.err"
}
for c in "$src"/tests/progs/*.bpf.c; do
	compile progs "$c" -I"$src/tests/progs" -Wno-unused-function
done
for c in "$src"/samples/*/*.bpf.c; do
	compile samples "$c" -I"$src/samples/include"
done
for c in "$src"/bench/*/*.bpf.c; do
	compile bench "$c" -I"$(dirname "$c")" -I"$src/tests/progs" -ffreestanding
done
for c in "$src"/tests/preload/*.bpf.c; do
	compile preload "$c" -D__TARGET_ARCH_x86
done
rmdir "$out"/*/ 2>/dev/null # a set of which nothing compiled
echo "compiled: $((nsrc - nfail)) of $nsrc sources ($nfail gcc cannot compile)"
"$btf" "$out"/*/*.o
btf_rc=$?
[ $btf_rc -eq 77 ] && exit 77
"$diff" -b "${BASELINE:-$src/tests/gcc/baseline.txt}" -r "$out/report.tsv" "$out"
diff_rc=$?
[ $diff_rc -eq 0 ] && [ $btf_rc -ne 0 ] && exit $btf_rc
exit $diff_rc
