#!/bin/sh
# check_symbols.sh - the library's symbol hygiene (STYLE.md section 4):
#   static  every global symbol defined in libbpfrt.a starts with bpfrt_ or brt_
#   map     src/libbpfrt.map lists every function declared BPFRT_API in the public
#           headers by name, and nothing else (no wildcard); no build needed
#   shared  libbpfrt.so exports exactly the functions declared BPFRT_API in the public
#           headers, all under the version node of src/libbpfrt.map
# Usage: check_symbols.sh static LIBBPFRT_A
#        check_symbols.sh map SOURCE_DIR
#        check_symbols.sh shared LIBBPFRT_SO SOURCE_DIR
set -eu
fail=0

# minus A B: the lines of A that are not lines of B (either may be empty)
minus()
{
	printf '%s\n' "$2" | awk -v a="$1" '
		{ inb[$0] = 1 }
		END { n = split(a, l, "\n"); for (i = 1; i <= n; i++) if (l[i] != "" && !(l[i] in inb)) print l[i] }'
}

# check_map SOURCE_DIR: the map's global names against the BPFRT_API declarations, both
# ways; on a difference it prints the exact lines to add or remove.
check_map()
{
	map=$1/src/libbpfrt.map
	# strip /* */ comments, then take the names between "global:" and "local:"
	listed=$(sed 's|/\*.*\*/||; /\/\*/,/\*\//d' "$map" | awk '
		/global:/ { g = 1; next }
		/local:/ { g = 0 }
		g { gsub(/[ \t;]/, ""); if ($0 != "") print }' | sort)
	declared=$(sh "$(dirname "$0")/public_api.sh" "$1/include")
	node=$(sed -n 's/^\([A-Z0-9_.]*\) *{.*/\1/p' "$map" | tail -n 1)
	wild=$(echo "$listed" | grep '[*?[]' || true)
	if [ -n "$wild" ]; then
		echo "FAIL: src/libbpfrt.map has a wildcard in global: (name every symbol instead):"
		echo "$wild" | sed 's/^/  /'
		fail=1
	fi
	add=$(minus "$declared" "$listed")
	del=$(minus "$listed" "$declared" | grep -v '[*?[]' || true)
	if [ -n "$add" ]; then
		echo "FAIL: declared BPFRT_API in include/ but not listed in src/libbpfrt.map;"
		echo "  add these lines to the global: list of node $node (kept sorted):"
		echo "$add" | sed 's/^/\t\t/; s/$/;/'
		fail=1
	fi
	if [ -n "$del" ]; then
		echo "FAIL: listed in src/libbpfrt.map but not declared BPFRT_API in include/"
		echo "  (renamed or removed?); remove these lines from src/libbpfrt.map, or declare"
		echo "  the function BPFRT_API in a public header:"
		echo "$del" | sed 's/^/\t\t/; s/$/;/'
		fail=1
	fi
	echo "map: $(echo "$listed" | grep -c .) names in node $node," \
		"$(echo "$declared" | grep -c .) BPFRT_API declarations"
}

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
map)
	check_map "$2"
	;;
shared)
	src=$3
	check_map "$src"
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
	extra=$(minus "$exported" "$declared")
	missing=$(minus "$declared" "$exported")
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
	echo "usage: $0 static LIB.a | map SOURCE_DIR | shared LIB.so SOURCE_DIR" >&2
	exit 2
	;;
esac
exit $fail
