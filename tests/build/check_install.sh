#!/bin/sh
# check_install.sh - install into a temporary prefix, check bpfrt.pc, then build and run a
# small C program against the installed files only: one #include <bpfrt.h> must declare every
# exported function (the program takes the address of each), with -std=c11 -Wpedantic -Werror,
# linked once against libbpfrt.so and once statically against libbpfrt.a.
#   check_install.sh BUILD_DIR SOURCE_DIR CC
set -eu
build=$1
src=$2
cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libbpfrt.so -print | head -n 1)")
for f in include/bpfrt.h bin/bpfrt; do
	[ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
[ -e "$libdir/libbpfrt.a" ] ||
	{ echo "FAIL: libbpfrt.a not installed next to libbpfrt.so"; exit 1; }
ls "$prefix"/share/man/man1/bpfrt.1 >/dev/null 2>&1 || echo "note: no man page installed yet"

# pkg-config: the installed .pc must point at the installed prefix and carry the version.
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc=$libdir/pkgconfig/bpfrt.pc
[ -f "$pc" ] || { echo "FAIL: bpfrt.pc not installed in $libdir/pkgconfig"; exit 1; }
pkg-config --validate bpfrt
want=$(sed -n 's/^project(bpfrt VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
got=$(pkg-config --modversion bpfrt)
[ "$got" = "$want" ] ||
	{ echo "FAIL: bpfrt.pc version '$got', CMakeLists.txt says '$want'"; exit 1; }
cflags=$(pkg-config --cflags bpfrt)
libs=$(pkg-config --libs bpfrt)
inc=$(pkg-config --variable=includedir bpfrt)
[ "$(cd "$inc" && pwd -P)" = "$(cd "$prefix/include" && pwd -P)" ] ||
	{ echo "FAIL: includedir '$inc' is not the installed $prefix/include"; exit 1; }
case "$libs" in *-lbpfrt*) ;; *) echo "FAIL: Libs '$libs' lacks -lbpfrt"; exit 1 ;; esac
echo "pkg-config: version $got, cflags '$cflags', libs '$libs'"

# The program: one include, every exported function referenced.
syms=$(nm -D --defined-only "$libdir/libbpfrt.so" |
	awk 'NF == 3 && $2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
{
	cat <<'PROG_HEAD'
#include <stdio.h>
#include <string.h>

#include <bpfrt.h>

typedef void (*fn_t)(void);
static const fn_t api[] = {
PROG_HEAD
	for s in $syms; do printf '\t(fn_t)%s,\n' "$s"; done
	cat <<PROG_TAIL
};

int main(void)
{
	printf("bpfrt %s, %zu functions\\n", bpfrt_version(), sizeof(api) / sizeof(api[0]));
	return strcmp(bpfrt_version(), "$want") != 0;
}
PROG_TAIL
} >"$tmp/prog.c"
flags="-std=c11 -Wall -Wextra -Wpedantic -Werror"
$cc $flags "$tmp/prog.c" -o "$tmp/prog_shared" $cflags $libs
LD_LIBRARY_PATH=$libdir "$tmp/prog_shared"
static_libs="$(echo "$libs" | sed 's/-lbpfrt/-l:libbpfrt.a/')"
static_libs="$static_libs $(pkg-config --libs --static bpfrt | sed 's/-L[^ ]*//; s/-lbpfrt//')"
$cc $flags "$tmp/prog.c" -o "$tmp/prog_static" $cflags -static-libgcc $static_libs
"$tmp/prog_static"
echo "install: OK ($(echo $syms | wc -w) functions via one #include <bpfrt.h>, shared and static)"
