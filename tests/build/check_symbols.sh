#!/bin/sh
# check_symbols.sh - the library's symbol hygiene (STYLE.md section 4):
#   static  every global symbol defined in libbpfrt.a starts with bpfrt_ or brt_
#   shared  libbpfrt.so exports exactly the functions declared BPFRT_API in the public
#           headers, all under the version node of src/libbpfrt.map
# Usage: check_symbols.sh static LIBBPFRT_A
#        check_symbols.sh shared LIBBPFRT_SO SOURCE_DIR
set -eu
fail=0
case $1 in
static)
	bad=$(nm -g --defined-only "$2" | awk 'NF == 3 { print $3 }' | grep -Ev '^(bpfrt_|brt_)' || true)
	if [ -n "$bad" ]; then
		echo "FAIL: global symbols in $2 without a bpfrt_/brt_ prefix (make them static, or rename):"
		echo "$bad" | sed 's/^/  /'
		fail=1
	fi
	n=$(nm -g --defined-only "$2" | awk 'NF == 3' | wc -l)
	echo "static: $n global symbols checked"
	;;
shared)
	src=$3
	node=$(sed -n 's/^\([A-Z0-9_.]*\) *{.*/\1/p' "$src/src/libbpfrt.map" | tail -n 1)
	exported=$(nm -D --defined-only "$2" | awk 'NF == 3 && $2 != "A" { print $3 }' | sort)
	unversioned=$(echo "$exported" | grep -v "@@$node\$" || true)
	if [ -n "$unversioned" ]; then
		echo "FAIL: exports not in version node $node of src/libbpfrt.map:"
		echo "$unversioned" | sed 's/^/  /'
		fail=1
	fi
	exported=$(echo "$exported" | sed 's/@.*//' | sort -u)
	declared=$(sh "$(dirname "$0")/public_api.sh" "$src/include")
	extra=$(echo "$exported" | grep -vxF "$declared" || true)
	missing=$(echo "$declared" | grep -vxF "$exported" || true)
	if [ -n "$extra" ]; then
		echo "FAIL: exported but not declared BPFRT_API in include/:"
		echo "$extra" | sed 's/^/  /'
		fail=1
	fi
	if [ -n "$missing" ]; then
		echo "FAIL: declared BPFRT_API in include/ but not exported" \
			"(not defined, or not BPFRT_API at the definition?):"
		echo "$missing" | sed 's/^/  /'
		fail=1
	fi
	echo "shared: $(echo "$exported" | wc -l) exports, node $node:" $exported
	;;
*)
	echo "usage: $0 static LIB.a | shared LIB.so SOURCE_DIR" >&2
	exit 2
	;;
esac
exit $fail
