#!/bin/sh
# man_install.sh BUILD_DIR SOURCE_DIR COMMANDS_DEF BPFRT - `cmake --install` with DESTDIR puts
# every man page and the bash completion in place; groff renders each installed page
# without a warning (.so links resolved as man does); the completion offers every
# command of commands.def and the verbs of the command groups.
set -u
BUILD=$1 SRC=$2 DEF=$3 B=$4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! DESTDIR="$T" cmake --install "$BUILD" >"$T/install.log" 2>&1; then
	cat "$T/install.log"
	echo "FAIL: cmake --install"
	exit 1
fi
mandir=$(find "$T" -type d -path '*/man/man1' | head -1)
[ -n "$mandir" ] || { echo "FAIL: no man1 directory installed"; exit 1; }
root=${mandir%/man1}
for f in "$SRC"/docs/man/*.[0-9]; do
	name=$(basename "$f")
	sec=${name##*.}
	[ -f "$root/man$sec/$name" ] || fail "$name not installed in man$sec"
done
for p in bpfrt.1 bpfrt-prog.1 bpfrt-object.1 bpfrt-btf.1 bpfrt-map.1 bpfrt-filter.1 \
	bpfrt-attach.1 bpfrt-trace.1 bpfrt_bpf.3; do
	[ -f "$root/man${p##*.}/$p" ] || fail "$p missing"
done
if command -v groff >/dev/null 2>&1; then
	for f in "$root"/man*/*; do
		rel=${f#"$root"/}
		out=$(cd "$root" && groff -man -ww -z -Tutf8 "$rel" 2>&1)
		[ -z "$out" ] || fail "groff warns on $rel: $out"
	done
	echo "ok: $(ls "$root"/man*/* | wc -l) pages render without warnings"
else
	echo "note: groff missing: pages installed but not rendered"
fi
# bpfrt(1) has a section for every command of commands.def, and each command's --help
# begins with its usage line (what the completion reads for verbs)
for c in $(sed -n -E 's/^CMD\(([a-z-]+),.*/\1/p' "$DEF"); do
	esc=$(printf '%s' "$c" | sed 's/-/\\\\-/g')
	grep -q "^\.SS $esc\$" "$SRC/docs/man/bpfrt.1" || fail "bpfrt.1 has no section for '$c'"
	case $("$B" "$c" --help 2>&1 | head -n 1) in
	"Usage: bpfrt "*) ;;
	*) fail "'bpfrt $c --help' does not begin with 'Usage: bpfrt'" ;;
	esac
done
echo "ok: bpfrt(1) and --help cover every command"
comp=$(find "$T" -path '*/bash-completion/completions/bpfrt' | head -1)
[ -n "$comp" ] || fail "bash completion not installed"
if [ -n "$comp" ] && command -v bash >/dev/null 2>&1; then
	cat >"$T/c.sh" <<'EOS'
. "$1"
B=$2
shift 2
COMP_WORDS=("$B" "$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_bpfrt
echo "${COMPREPLY[*]}"
EOS
	all=$(bash "$T/c.sh" "$comp" "$B" "")
	for c in $(sed -n -E 's/^CMD\(([a-z-]+),.*/\1/p' "$DEF"); do
		case " $all " in *" $c "*) ;; *) fail "completion lacks command '$c' ($all)" ;; esac
	done
	v=$(bash "$T/c.sh" "$comp" "$B" prog "")
	for w in load loadall show dump run; do
		case " $v " in *" $w "*) ;; *) fail "prog verbs lack $w ($v)" ;; esac
	done
	[ "$(bash "$T/c.sh" "$comp" "$B" prog dump "")" = "xlated jited" ] || fail "prog dump"
	[ "$(bash "$T/c.sh" "$comp" "$B" object "")" = "load run show" ] || fail "object verbs"
	case " $(bash "$T/c.sh" "$comp" "$B" prog --log) " in *" --log-level "*) ;;
	*) fail "prog --log-level" ;; esac
	echo "ok: completion"
fi
[ $fails -eq 0 ] || exit 1
echo "all passed"
