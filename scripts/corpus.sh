#!/bin/sh
# corpus.sh - build the real-world program corpus that tests/corpus (ctest label `corpus`)
# loads into the kernel and into bpfrt (issue #15).  Nothing built here is committed: the
# objects come from public projects, compiled with the local clang, into
#   $BPFRT_CORPUS_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/bpfrt-corpus)/<project>/*.o
# Sources come from a local mirror of bare git repositories laid out as
#   $BPFRT_CORPUS_MIRROR/<owner>+<name>/repo   (default /work/.mirror when it exists)
# or else from `git clone --depth 1 https://github.com/<owner>/<name>`.  A project that
# cannot be fetched, or of which no file compiles, is skipped with its reason; single files
# that do not compile are listed in build.log and left out.  A summary goes to
# $OUT/SOURCES (project, commit, objects) so the corpus figures can be traced.
#
# usage: scripts/corpus.sh [project...]   (default: all; see PROJECTS below)
set -u

OUT=${BPFRT_CORPUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bpfrt-corpus}
MIRROR=${BPFRT_CORPUS_MIRROR:-}
[ -z "$MIRROR" ] && [ -d /work/.mirror ] && MIRROR=/work/.mirror
CLANG=${CLANG:-clang}
JOBS=${JOBS:-2}
PROJECTS="cilium-ebpf xdp-tools katran suricata iproute2 bcc-libbpf-tools libbpf-bootstrap"

command -v "$CLANG" >/dev/null || { echo "corpus: no $CLANG" >&2; exit 1; }
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bpfrt-corpus.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
LOG="$OUT/build.log"
: >"$LOG"
: >"$OUT/SOURCES.new"

# Kernel types for CO-RE sources: the running kernel's BTF, so the offsets clang writes are
# the ones a CO-RE loader would relocate to on this machine (bpfrt does not relocate CO-RE).
mkdir -p "$WORK/vmlinux"
if [ -r /sys/kernel/btf/vmlinux ] && command -v bpftool >/dev/null; then
	bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$WORK/vmlinux/vmlinux.h" 2>>"$LOG" ||
		rm -f "$WORK/vmlinux/vmlinux.h"
fi
ARCH_INC=/usr/include/$(uname -m)-linux-gnu
# glibc headers reached through <string.h> want the 32-bit stubs on a non-x86_64 target
mkdir -p "$WORK/stubs/gnu" && : >"$WORK/stubs/gnu/stubs-32.h"

# src REPO DEST PATHSPEC...: export the files of github REPO (owner/name) matching the git
# pathspecs into DEST; prints the commit.
src() {
	repo=$1 dest=$2
	shift 2
	mkdir -p "$dest"
	gd="$MIRROR/$(echo "$repo" | tr / +)/repo"
	if [ -n "$MIRROR" ] && [ -d "$gd" ]; then
		git --git-dir="$gd" archive HEAD "$@" 2>>"$LOG" | tar -x -C "$dest" 2>>"$LOG" ||
			return 1
		git --git-dir="$gd" rev-parse HEAD
		return 0
	fi
	git clone -q --depth 1 "https://github.com/$repo" "$WORK/clone-$$" 2>>"$LOG" || return 1
	git -C "$WORK/clone-$$" archive HEAD "$@" | tar -x -C "$dest" || return 1
	git -C "$WORK/clone-$$" rev-parse HEAD
	rm -rf "$WORK/clone-$$"
}

# cc PROJECT FILE.c [CFLAGS...]: compile one source into $OUT/PROJECT/<flat name>.o
cc1() {
	proj=$1 f=$2
	shift 2
	o="$OUT/$proj/$(echo "$f" | sed 's|^\./||; s|/|__|g; s|\.c$|.o|')"
	if "$CLANG" -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wno-everything "$@" \
		-I"$WORK/vmlinux" -idirafter "$ARCH_INC" -idirafter "$WORK/stubs" -c "$f" -o "$o" 2>"$o.err"; then
		rm -f "$o.err"
	else
		{ echo "[$proj] $f: compile failed:"; head -5 "$o.err"; } >>"$LOG"
		rm -f "$o" "$o.err"
	fi
}

# build PROJECT CFLAGS -- FILES: compile FILES (relative to the cwd) in parallel batches.
build() {
	proj=$1
	shift
	flags=""
	while [ "$1" != "--" ]; do flags="$flags $1"; shift; done
	shift
	n=0
	for f in "$@"; do
		[ -f "$f" ] || continue
		# shellcheck disable=SC2086
		cc1 "$proj" "$f" $flags &
		n=$((n + 1))
		[ $((n % JOBS)) -eq 0 ] && wait
	done
	wait
}

p_cilium_ebpf() {
	# prebuilt little-endian objects the Go library tests itself with
	c=$(src cilium/ebpf "$1" testdata btf/testdata cmd/bpf2go/testdata) || return 1
	find "$1" -name '*-el.elf' | while read -r f; do
		cp "$f" "$OUT/cilium-ebpf/$(echo "${f#"$1"/}" | tr / _ | sed 's/\.elf$/.o/')"
	done
	echo "$c"
}

p_xdp_tools() {
	c=$(src xdp-project/xdp-tools "$1" .) || return 1
	cd "$1" || return 1
	# HAVE_LIBBPF_*: configure's answers for a libbpf as recent as Debian's
	build xdp-tools -include stdbool.h -DHAVE_LIBBPF_BPF_PROGRAM__TYPE -DHAVE_LIBBPF_BPF_PROGRAM__FLAGS -Iheaders -Ilib/util -Ilib/libxdp -- $(find . -name '*.bpf.c') \
		xdp-dump/xdpdump_bpf.c lib/libxdp/xsk_def_xdp_prog.c lib/libxdp/xsk_def_xdp_prog_5.3.c
	echo "$c"
}

p_katran() {
	c=$(src facebookincubator/katran "$1" katran) || return 1
	cd "$1" || return 1
	build katran -I. -Ikatran/lib/bpf -Ikatran/lib/linux_includes -- \
		$(find katran -name '*.bpf.c') katran/lib/bpf/xdp_root.c katran/lib/bpf/xdp_pktcntr.c \
		katran/lib/bpf/healthchecking_ipip.c
	echo "$c"
}

p_suricata() {
	c=$(src OISF/suricata "$1" ebpf) || return 1
	cd "$1/ebpf" || return 1
	build suricata -Iinclude -D__KERNEL__ -D__ASM_SYSREG_H -- ./*.c
	echo "$c"
}

p_iproute2() {
	c=$(src iproute2/iproute2 "$1" examples/bpf include) || return 1
	cd "$1" || return 1
	build iproute2 -Iinclude -- $(find examples/bpf -name '*.c')
	echo "$c"
}

p_bcc_libbpf_tools() {
	# (the mirror may lack the big per-arch vmlinux headers: the local one is used)
	c=$(src iovisor/bcc "$1" libbpf-tools ':!libbpf-tools/*/vmlinux*') || return 1
	cd "$1/libbpf-tools" || return 1
	build bcc-libbpf-tools -I. -- ./*.bpf.c
	echo "$c"
}

p_libbpf_bootstrap() {
	c=$(src libbpf/libbpf-bootstrap "$1" examples/c) || return 1
	cd "$1/examples/c" || return 1
	build libbpf-bootstrap -I. -- ./*.bpf.c
	echo "$c"
}

[ $# -gt 0 ] && PROJECTS="$*"
for p in $PROJECTS; do
	fn=p_$(echo "$p" | tr - _)
	rm -rf "${OUT:?}/$p"
	mkdir -p "$OUT/$p"
	commit=$( ($fn "$WORK/src-$p") 2>>"$LOG" | tail -1)
	n=$(find "$OUT/$p" -name '*.o' | wc -l)
	if [ -z "$commit" ]; then
		echo "corpus: $p: skipped: sources not available (no mirror, clone failed)" >&2
		rm -rf "${OUT:?}/$p"
	elif [ "$n" -eq 0 ]; then
		echo "corpus: $p: skipped: no file compiled (see $LOG)" >&2
		rm -rf "${OUT:?}/$p"
	else
		echo "corpus: $p: $n objects ($commit)" >&2
		echo "$p $commit $n" >>"$OUT/SOURCES.new"
	fi
done
mv "$OUT/SOURCES.new" "$OUT/SOURCES"
echo "corpus: $(find "$OUT" -name '*.o' | wc -l) objects in $OUT" >&2
