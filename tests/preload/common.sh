# common.sh - sourced by the preload tests (preload.sh, attach.sh, links.sh,
# linkclose.sh): skip checks, the build of links.bpf.c with its skeleton, the
# kernel-against-bpfrt comparison, and keeping a failed run's files.  Needs SRC set to
# tests/preload.

# Exit 77 with the reason unless this machine can run them: an uninstrumented preload
# library, clang, bpftool, cc and the tools named, libbpf-dev, root, the uprobe PMU, and
# with "netns" among the arguments network namespaces.
preload_need() {
	if [ -n "${BPFRT_SANITIZED:-}" ]; then
		echo "skipped: the preload library is built with -fsanitize=$BPFRT_SANITIZED, which cannot be preloaded into the uninstrumented test programs"
		exit 77
	fi
	netns=
	for tool in clang bpftool cc "$@"; do
		[ "$tool" = netns ] && { netns=1; continue; }
		command -v $tool >/dev/null 2>&1 || { echo "skipped: $tool not installed"; exit 77; }
	done
	[ -f /usr/include/bpf/libbpf.h ] || { echo "skipped: libbpf-dev not installed"; exit 77; }
	[ "$(id -u)" = 0 ] || { echo "skipped: needs root for the kernel run and probe events"; exit 77; }
	[ -r /sys/bus/event_source/devices/uprobe/type ] ||
		{ echo "skipped: the kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 77; }
	[ -z "$netns" ] || unshare -n true 2>/dev/null ||
		{ echo "skipped: cannot create a network namespace"; exit 77; }
}

# links.bpf.c -> $1/links.bpf.o and $1/links.skel.h
links_skel() {
	clang -O2 -g -target bpf -I"/usr/include/$(cc -print-multiarch 2>/dev/null)" \
		-c "$SRC/links.bpf.c" -o "$1/links.bpf.o" &&
		bpftool gen skeleton "$1/links.bpf.o" name links > "$1/links.skel.h"
}

# Exit 1 with the difference unless the kernel's output ($1) and bpfrt's ($2) are equal.
same_or_fail() {
	cmp -s "$1" "$2" && return 0
	echo "FAIL: kernel and bpfrt differ:"
	diff "$1" "$2"
	exit 1
}

# A failed run keeps its files ($T: both sides' outputs, the diffs' inputs) in
# $TMPDIR/bpfrt-NAME-failed-DATE-PID (the newest 5 of NAME): land.sh's first ctest run
# prints no test output and its rerun rewrites ctest's log, so a rare failure in a
# landing was lost with its outputs (preload.libbpf's since session 13).
keep_failed() {
	keep="${TMPDIR:-/tmp}/bpfrt-$1-failed-$(date +%Y%m%d-%H%M%S)-$$"
	cp -r "$T" "$keep" 2>/dev/null && echo "outputs kept in $keep" >&2
	ls -dt "${TMPDIR:-/tmp}/bpfrt-$1-failed-"* 2>/dev/null | tail -n +6 |
		while read -r old; do rm -rf "$old"; done
}
