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
# The newest clang-NN (15 or later) at hand, for sources whose project builds them with a
# clang that inlines __builtin_memcmp where clang 14 calls an extern memcmp (Calico's
# conntrack_cleanup); empty when there is none.
CLANG_NEW=${CLANG_NEW:-}
if [ -z "$CLANG_NEW" ]; then
	for v in 25 24 23 22 21 20 19 18 17 16 15; do
		command -v "clang-$v" >/dev/null && { CLANG_NEW=clang-$v; break; }
	done
fi
JOBS=${JOBS:-2}
PROJECTS="cilium-ebpf xdp-tools katran suricata iproute2 bcc-libbpf-tools libbpf-bootstrap cilium falco
	kernel-selftests inspektor-gadget tracee kubearmor calico tetragon elastic pwru netobserv
	otel-profiler"
# tracee and kubearmor load as their own loaders load them (tests/corpus/corpus_load.c):
# Tracee's leaves out maps of types the kernel lacks (its features_test_arena: arenas are
# refused here), KubeArmor's agent creates its maps of maps (kubearmor_containers,
# kubearmor_visibility) with the inner maps the objects lack.  tracee.bpf.o's 171 programs
# cost ~40-50 s a side whole on a loaded VM (the 15 MB CO-RE object is opened once per
# program; libbpf's side, its vmlinux parse per load and the kernel's verifier): baseline.txt's
# "sample tracee N" has corpus.diff load every Nth of them.
# kernel-selftests: every Nth file of tools/testing/selftests/bpf/progs in name order (a
# sample of fixed rule, not a choice of files: building and loading all ~900 would take the
# corpus past ~10 minutes on 2 cores); 1 builds them all.
SELFTESTS_EVERY=${BPFRT_CORPUS_SELFTESTS_EVERY:-4}

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

# src REPO[|FORK...] DEST PATHSPEC...: export the files of github REPO (owner/name) matching the git
# pathspecs into DEST; prints the commit.
# With alternatives, the first mirrored one is used (a fork when the project's own snapshot is
# too big to mirror); a clone tries the first.
src() {
	repos=$1 dest=$2
	shift 2
	mkdir -p "$dest"
	repo=${repos%%|*}
	for r in $(echo "$repos" | tr '|' ' '); do
		gd="$MIRROR/$(echo "$r" | tr / +)/repo"
		[ -n "$MIRROR" ] && [ -d "$gd" ] || continue
		# (archive, not a checkout: a mirror may lack blobs of paths outside the pathspecs)
		git --git-dir="$gd" archive HEAD "$@" 2>>"$LOG" | tar -x -C "$dest" 2>>"$LOG" ||
			return 1
		echo "$r@$(git --git-dir="$gd" rev-parse HEAD)"
		return 0
	done
	git clone -q --depth 1 "https://github.com/$repo" "$WORK/clone-$$" 2>>"$LOG" || return 1
	git -C "$WORK/clone-$$" archive HEAD "$@" | tar -x -C "$dest" || return 1
	git -C "$WORK/clone-$$" rev-parse HEAD
	rm -rf "$WORK/clone-$$"
}

# cc1 PROJECT FILE.c [CFLAGS...]: compile one source into $OUT/PROJECT/<flat name>.o, or
# into $OUT/PROJECT/$NAME.o when NAME is set (one source built with several option sets).
cc1() {
	proj=$1 f=$2
	shift 2
	if [ -n "${NAME:-}" ]; then
		o="$OUT/$proj/$NAME.o"
	else
		o="$OUT/$proj/$(echo "$f" | sed 's|^\./||; s|/|__|g; s|\.c$|.o|')"
	fi
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

# named PROJECT NAME FILE [CFLAGS...]: compile FILE into $OUT/PROJECT/NAME.o in the
# background, JOBS at a time (one source built with several option sets); the caller waits
# after the last.
NAMED=0
named() {
	nproj=$1 nname=$2
	shift 2
	NAME=$nname cc1 "$nproj" "$@" &
	NAMED=$((NAMED + 1))
	[ $((NAMED % JOBS)) -eq 0 ] && wait
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

# Cilium's datapath (bpf/): bpf_lxc, bpf_host, bpf_overlay, bpf_xdp, bpf_sock, bpf_wireguard,
# bpf_network with bpf/Makefile's flags (Makefile.bpf: gnu89, -nostdinc, -mcpu=v3,
# __NR_CPUS__ from nproc --all), each with three option sets of that Makefile: none (the
# defaults of node_config.h, as `make` without options), its MAX_*_OPTIONS for KERNEL=netnext
# (the load-tested maximum) and the last of its compile-tested permutation list; plus every
# 4th file of bpf/tests (the BPF_PROG_TEST_RUN unit tests, gnu99).  cilium/cilium's snapshot
# may be too big to mirror: a fork's is taken then (SOURCES says which).
p_cilium() {
	c=$(src "cilium/cilium|skmatti/cilium" "$1" bpf) || return 1
	cd "$1/bpf" || return 1
	[ -f bpf_lxc.c ] || return 1
	base="-DSKIP_DEBUG=1 -DENABLE_IPV4=1 -DENABLE_IPV6=1 -DENABLE_ROUTING=1
		-DPOLICY_VERDICT_NOTIFY=1 -DALLOW_ICMP_FRAG_NEEDED=1 -DENABLE_IDENTITY_MARK=1
		-DMONITOR_AGGREGATION=3 -DCT_REPORT_FLAGS=0x0002 -DENABLE_HOST_FIREWALL=1
		-DENABLE_ICMP_RULE=1 -DENABLE_CUSTOM_CALLS=1 -DENABLE_SRV6=1 -DENABLE_L7_LB=1
		-DENABLE_MASQUERADE_IPV4=1 -DENABLE_MASQUERADE_IPV6=1 -DENABLE_SRC_RANGE_CHECK=1
		-DENABLE_NODEPORT=1 -DENABLE_NODEPORT_ACCELERATION=1 -DENABLE_SESSION_AFFINITY=1
		-DENABLE_DSR_ICMP_ERRORS=1 -DENABLE_DSR=1 -DENABLE_DSR_HYBRID=1
		-DENABLE_IPV4_FRAGMENTS=1 -DENABLE_BANDWIDTH_MANAGER=1 -DENABLE_EGRESS_GATEWAY=1
		-DENABLE_VTEP=1 -DENABLE_TPROXY=1 -DENABLE_HOST_ROUTING=1 -DETH_HLEN=0"
	tun="-DENCAP_IFINDEX=1 -DTUNNEL_MODE=1"
	maglev="-DLB_SELECTION=1 -DLB_SELECTION_MAGLEV=1"
	wg="-DENABLE_WIREGUARD=1 -DENCRYPTION_STRICT_MODE=1"
	hs="-DENABLE_HIGH_SCALE_IPCACHE=1"
	flags="-Iinclude -I. -D__NR_CPUS__=$(nproc --all) -nostdinc -mcpu=v3"
	# NAME FILE OPTIONS: one object
	one() {
		# shellcheck disable=SC2086
		named cilium "$1" "$2" $flags -std=gnu89 $3
	}
	for f in lxc host overlay xdp sock wireguard; do
		one "bpf_${f}__default" "bpf_$f.c" ""
	done
	one bpf_network "bpf_network.c" "-DENABLE_IPV4=1 -DENABLE_IPV6=1 -DENABLE_IPSEC=1"
	one bpf_lxc__max bpf_lxc.c "$base $tun -DENABLE_IPSEC=1"
	one bpf_host__max bpf_host.c "$base $tun -DENABLE_IPSEC=1 $wg $hs"
	one bpf_overlay__max bpf_overlay.c "$base $tun -DENABLE_MULTICAST=1 $maglev -DENABLE_IPSEC=1 $hs"
	one bpf_xdp__max bpf_xdp.c "$base -DENABLE_PREFILTER=1 $maglev"
	one bpf_sock__max bpf_sock.c "$base -DENABLE_NAT_46X64=1 -DENABLE_NAT_46X64_GATEWAY=1 $tun $maglev -DENABLE_IPSEC=1"
	one bpf_wireguard__max bpf_wireguard.c "$base $tun $wg $hs"
	one bpf_lxc__perm bpf_lxc.c "-DENABLE_IPV4=1 -DENABLE_IPV6=1 -DENCAP_IFINDEX=1
		-DENABLE_TPROXY=1 -DENABLE_HOST_ROUTING=1 -DENABLE_SKIP_FIB=1 -DENABLE_ICMP_RULE=1
		-DENABLE_SCTP=1 -DENABLE_HIGH_SCALE_IPCACHE=1 -DENABLE_IPSEC=1"
	one bpf_host__perm bpf_host.c "-DDISABLE_LOOPBACK_LB=1 -DENABLE_IPV4=1 -DENABLE_IPV6=1
		-DENCAP_IFINDEX=1 -DPOLICY_VERDICT_NOTIFY=1 -DENABLE_NODEPORT=1
		-DENABLE_NODEPORT_ACCELERATION=1 -DENABLE_DSR=1 -DENABLE_DSR_HYBRID=1
		-DENABLE_PREFILTER=1 -DENABLE_SESSION_AFFINITY=1 -DENABLE_HOST_FIREWALL=1
		-DENABLE_ICMP_RULE=1 -DENABLE_SRV6=1 -DENABLE_SRV6_SRH_ENCAP=1 -DENCRYPTED_OVERLAY=1
		-DENABLE_SCTP=1 -DENABLE_VTEP=1 -DENABLE_HIGH_SCALE_IPCACHE=1 -DENABLE_IPSEC=1"
	one bpf_xdp__perm bpf_xdp.c "-DDISABLE_LOOPBACK_LB=1 -DENABLE_NODEPORT_ACCELERATION=1
		-DENABLE_IPV4=1 -DENABLE_IPV6=1 -DENABLE_NODEPORT=1 -DENABLE_DSR=1 -DENABLE_CAPTURE=1
		-DDSR_ENCAP_MODE=1 -DDSR_ENCAP_GENEVE=1 -DENABLE_SCTP=1 -DDSR_ENCAP_IPIP=2"
	one bpf_overlay__perm bpf_overlay.c "-DENABLE_IPV6=1 -DENCAP_IFINDEX=1 -DTUNNEL_MODE=1
		-DENABLE_NODEPORT=1 -DENABLE_NODEPORT_ACCELERATION=1 -DENABLE_SESSION_AFFINITY=1
		-DENABLE_BANDWIDTH_MANAGER=1 -DENABLE_SRC_RANGE_CHECK=1 -DLB_SELECTION=1
		-DLB_SELECTION_MAGLEV=1 -DENABLE_SOCKET_LB_HOST_ONLY=1 -DENABLE_L7_LB=1 -DENABLE_SCTP=1
		-DENABLE_VTEP=1 -DENABLE_CLUSTER_AWARE_ADDRESSING=1 -DENABLE_INTER_CLUSTER_SNAT=1"
	i=0
	for f in tests/*.c; do
		i=$((i + 1))
		[ $((i % 4)) -eq 1 ] || continue
		# shellcheck disable=SC2086
		named cilium "tests__$(basename "$f" .c)" "$f" $flags -std=gnu99 -Itests
	done
	wait
	echo "$c"
}

# Falco's modern BPF probe (falcosecurity/libs driver/modern_bpf): every *.bpf.c compiled as
# its CMakeLists does (CO-RE against the project's own vmlinux.h, __USE_VMLINUX__), then
# linked into one object with `bpftool gen object` as its build links the skeleton's object
# (the license and the maps are in files of their own).  driver_config.h is configured from
# its template with placeholder versions.
# kernel_libbpf_headers [DIR]: the BPF-side libbpf headers (bpf_helpers.h, bpf_tracing.h, ...)
# of the kernel's tools/lib/bpf, with bpf_helper_defs.h generated by its scripts/bpf_doc.py,
# into $WORK/libbpf/bpf: the newest libbpf headers at hand (Debian's are 1.1).  DIR holds an
# export of the kernel tree, else it is taken from the mirror; without one, the system's.
kernel_libbpf_headers() {
	[ -f "$WORK/libbpf/bpf/bpf_helpers.h" ] && return 0
	k=${1:-$WORK/kernel-libbpf}
	[ -f "$k/tools/lib/bpf/bpf_helpers.h" ] ||
		src "torvalds/linux|6952350+linux-6.18.y" "$k" tools/lib/bpf scripts/bpf_doc.py \
			include/uapi/linux/bpf.h >/dev/null
	mkdir -p "$WORK/libbpf"
	if [ -f "$k/tools/lib/bpf/bpf_helpers.h" ]; then
		cp -r "$k/tools/lib/bpf" "$WORK/libbpf/bpf"
		# the kernel's linux/bpf.h for sources that want a newer uapi than the system's
		# (-I"$WORK/libbpf/uapi", as libbpf's own include/uapi)
		mkdir -p "$WORK/libbpf/uapi/linux"
		cp "$k/include/uapi/linux/bpf.h" "$WORK/libbpf/uapi/linux/" 2>>"$LOG"
		python3 "$k/scripts/bpf_doc.py" --header --file "$k/include/uapi/linux/bpf.h" \
			>"$WORK/libbpf/bpf/bpf_helper_defs.h" 2>>"$LOG" && return 0
		rm -f "$WORK/libbpf/bpf/bpf_helper_defs.h"
		cp /usr/include/bpf/bpf_helper_defs.h "$WORK/libbpf/bpf/" 2>>"$LOG"
		return
	fi
	cp -r /usr/include/bpf "$WORK/libbpf/bpf" 2>>"$LOG"
}

p_falco() {
	command -v bpftool >/dev/null || { echo "corpus: falco: no bpftool to link it" >>"$LOG"; return 1; }
	c=$(src falcosecurity/libs "$1" driver) || return 1
	cd "$1/driver" || return 1
	[ -d modern_bpf ] || return 1
	sed -e 's/\${PPM_[A-Z_]*}/0/' -e 's/\${[A-Z_]*}/corpus/' \
		driver_config.h.in >driver_config.h
	mkdir -p "$WORK/falco"
	kernel_libbpf_headers
	cd modern_bpf || return 1
	i=0
	for f in $(find . -name '*.bpf.c' | sort); do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$CLANG" -g -O2 -target bpf -D__TARGET_ARCH_x86 -D__USE_VMLINUX__ -Wno-everything \
			-I"$WORK/libbpf" -I. -I.. -I../.. -c "$f" -o "$WORK/falco/$i.o" 2>"$WORK/falco/$i.err" ||
			{ echo "[falco] $f: compile failed:"; head -5 "$WORK/falco/$i.err"
			  rm -f "$WORK/falco/$i.o"; } >>"$LOG" &
		[ $((i % JOBS)) -eq 0 ] && wait
	done
	wait
	# shellcheck disable=SC2046
	bpftool gen object "$OUT/falco/modern_bpf.o" $(ls "$WORK"/falco/*.o) >>"$LOG" 2>&1 ||
		{ rm -f "$OUT/falco/modern_bpf.o"; return 1; }
	echo "$c"
}

# The kernel's BPF selftests (tools/testing/selftests/bpf/progs of the mirrored kernel, or of
# torvalds/linux), with the selftests Makefile's BPF_CFLAGS (gnu11, -mcpu=v3, the running
# kernel's vmlinux.h, the kernel's own libbpf headers and uapi, bpf_helper_defs.h generated
# by its scripts/bpf_doc.py), every $SELFTESTS_EVERY-th file in name order.  Programs that
# need bpf_testmod or a kernel config this host lacks are refused by the kernel, and count
# as such.
p_kernel_selftests() {
	c=$(src "torvalds/linux|6952350+linux-6.18.y" "$1" tools/testing/selftests/bpf \
		tools/lib/bpf tools/include scripts/bpf_doc.py include/uapi/linux/bpf.h) || return 1
	# (the mirror's directory is "<id>+<name>", not a GitHub owner: src() finds it as such)
	cd "$1" || return 1
	[ -f "$WORK/vmlinux/vmlinux.h" ] || { echo "corpus: kernel-selftests: no vmlinux.h" >>"$LOG"; return 1; }
	kernel_libbpf_headers "$1" || return 1
	cd tools/testing/selftests/bpf || return 1
	i=0
	set --
	for f in progs/*.c; do
		i=$((i + 1))
		[ $(((i - 1) % SELFTESTS_EVERY)) -eq 0 ] && set -- "$@" "$f"
	done
	build kernel-selftests -mcpu=v3 -std=gnu11 -fno-strict-aliasing -I"$WORK/libbpf" -I. \
		-I../../../include/uapi -idirafter /usr/include -- "$@"
	echo "$c"
}

# Aqua's tracee (pkg/ebpf/c): tracee.bpf.c, its one big CO-RE object, and the two LSM
# probes of lsmsupport, with its Makefile's flags (-DCORE against its own vmlinux.h, -mcpu=v2,
# COMMON_BUILD); libbpf is a submodule it builds from source, so the kernel's libbpf
# headers stand in for it.
p_tracee() {
	c=$(src aquasecurity/tracee "$1" pkg/ebpf/c) || return 1
	cd "$1/pkg/ebpf/c" || return 1
	kernel_libbpf_headers
	build tracee -D__BPF_TRACING__ -DCORE -DCOMMON_BUILD -mcpu=v2 -I"$WORK/libbpf" -I. -- \
		tracee.bpf.c lsmsupport/kprobe_check.bpf.c lsmsupport/lsm_check.bpf.c
	echo "$c"
}

# Inspektor Gadget's gadgets (gadgets/*/program.bpf.c, gadgets/ci/*, and the ebpf programs of
# pkg/) with `ig image build`'s in-tree flags: its own include/ and amd64 vmlinux.h (CO-RE).
# (clang 14 crashes on fsnotify and profile_blockio: "Incorrect flag for
# llvm.bpf.preserve.type.info intrinsic"; build.log lists them.)
p_inspektor_gadget() {
	c=$(src inspektor-gadget/inspektor-gadget "$1" include gadgets pkg) || return 1
	cd "$1" || return 1
	kernel_libbpf_headers
	build inspektor-gadget -I"$WORK/libbpf" -Iinclude -Iinclude/gadget/amd64 -- \
		$(find gadgets pkg -name '*.bpf.c' | sort)
	echo "$c"
}

# NetObserv's flow agent (netobserv/netobserv-ebpf-agent): the object its agent embeds,
# pkg/ebpf/bpf_x86_bpfel.o, which the project commits as its own build (bpf2go from
# bpf/flows.c: every feature in one object, configured at load time through constants, left
# at the object's zeros: the agent's defaults turn the optional trackers off).  Not compiled
# here: clang 14 turns flows.c's __builtin_memcmp into a call of an extern memcmp that
# neither libbpf nor bpfrt resolves, where the project's clang inlines it.
p_netobserv() {
	c=$(src netobserv/netobserv-ebpf-agent "$1" pkg/ebpf) || return 1
	cp "$1/pkg/ebpf/bpf_x86_bpfel.o" "$OUT/netobserv/" || return 1
	echo "$c"
}

# KubeArmor's BPF/ (kubearmor/KubeArmor): the LSM enforcers and monitors its Go code builds
# with bpf2go (-O2 -g -fno-stack-protector, CO-RE against the running kernel's vmlinux.h),
# and system_monitor.c with BPF/Makefile's flags for a kernel with BTF (BTF_SUPPORTED,
# BPF_NO_PRESERVE_ACCESS_INDEX, the running kernel's version), compiled in one step instead
# of its clang | opt | llc chain.  libbpf is a submodule: the kernel's libbpf headers stand in.
p_kubearmor() {
	c=$(src kubearmor/KubeArmor "$1" KubeArmor/BPF) || return 1
	cd "$1/KubeArmor/BPF" || return 1
	kernel_libbpf_headers
	build kubearmor -fno-stack-protector -I"$WORK/libbpf" -I. -- ./*.bpf.c
	v=$(uname -r | sed 's/[^0-9.].*//')
	# shellcheck disable=SC2046
	build kubearmor -I"$WORK/libbpf/bpf" -I. -DBTF_SUPPORTED -DBPF_NO_PRESERVE_ACCESS_INDEX \
		-DLINUX_VERSION_MAJOR=$(echo "$v" | cut -d. -f1) \
		-DLINUX_VERSION_PATCHLEVEL=$(echo "$v" | cut -d. -f2) \
		-DLINUX_VERSION_SUBLEVEL=$(echo "$v" | cut -d. -f3) -D__KERNEL__ -D__BPF_TRACING__ -- \
		system_monitor.c
	echo "$c"
}

# Calico's BPF dataplane (projectcalico/calico felix/bpf-gpl): the objects Felix loads, as
# its Makefile builds them: each name of its list-objs (tc.c, xdp.c, connect_balancer*.c
# for every endpoint type, direction, IP version) compiled with the
# options its calculate-flags derives from the name, at the log level Felix runs by default
# (BPFLogLevel off: the no_log objects), plus the tc/XDP preambles and the default policy
# programs.  Its Makefile's flags (-fno-stack-protector, libbpf's headers and uapi); -mcpu=v3,
# the default of the clang it is built with (clang 14's v1 cannot emit its 32-bit atomics).
# Felix sets its globals (.rodata) per interface before the load: the objects' own zeros
# stand in for them.
p_calico() {
	c=$(src projectcalico/calico "$1" felix/bpf-gpl) || return 1
	cd "$1/felix/bpf-gpl" || return 1
	command -v bash >/dev/null || { echo "corpus: calico: no bash for calculate-flags" >>"$LOG"; return 1; }
	kernel_libbpf_headers
	flags="-fno-stack-protector -mcpu=v3 -D__x86_64__ -I$WORK/libbpf/uapi -I$WORK/libbpf/bpf -I$WORK/libbpf"
	# NAME SOURCE OPTIONS: one object
	cal() {
		# shellcheck disable=SC2086
		named calico "$1" "$2" $flags $3
	}
	for o in $(bash list-objs | grep no_log); do
		o=$(basename "$o" .o)
		case $o in
		# (clang 14 turns conntrack_cleanup.c's __builtin_memcmp into a call of an extern
		# memcmp, which neither libbpf nor bpfrt resolves; Calico builds with LLVM 21
		# (metadata.mk), which inlines it, as clang 15 and later do: built with the newest
		# clang-NN at hand, left out without one)
		conntrack_cleanup*)
			[ -n "$CLANG_NEW" ] || continue
			c0=$CLANG CLANG=$CLANG_NEW
			cal "$o" conntrack_cleanup.c "$(bash calculate-flags "$o.ll" 2>/dev/null)"
			CLANG=$c0
			continue ;;
		connect_balancer_no_log_v46) s=connect_balancer_v46.c ;;
		connect_balancer_no_log_v6) s=connect_balancer_v6.c ;;
		connect_balancer*) s=connect_balancer.c ;;
		xdp*) s=xdp.c ;;
		*) s=tc.c ;;
		esac
		cal "$o" "$s" "$(bash calculate-flags "$o.ll" 2>/dev/null)"
	done
	for o in tc_preamble_ingress tc_preamble_egress policy_default_ingress policy_default_egress; do
		cal "$o" "${o%_*}.c" "$(bash calculate-flags "$o.ll" 2>/dev/null)"
	done
	cal xdp_preamble xdp_preamble.c -DCALI_COMPILE_FLAGS=64
	wait
	echo "$c"
}

# Tetragon's sensors (cilium/tetragon bpf/): the objects its agent loads on this kernel, as
# its Makefile builds them (its own vmlinux.h and libbpf headers, CO-RE, -mcpu=v2): of each
# program the newest kernel variant it has (_v61, else _v511, else the plain one), the generic
# kprobe/uprobe/usdt objects in their multi-attach (__MULTI_KPROBE) form too.
p_tetragon() {
	c=$(src cilium/tetragon "$1" bpf) || return 1
	cd "$1/bpf" || return 1
	flags="-I. -Iinclude -Ilib -Ilibbpf -Ierrmetrics -mcpu=v2 -fdebug-default-version=4"
	v61="-D__LARGE_BPF_PROG -D__V511_BPF_PROG -D__V61_BPF_PROG"
	v511="-D__LARGE_BPF_PROG -D__V511_BPF_PROG"
	tet() {
		# shellcheck disable=SC2086
		named tetragon "$1" "$2" $flags $3
	}
	tet bpf_execve_event_v61 process/bpf_execve_event_notc.c "$v61"
	for p in kprobe retkprobe tracepoint uprobe retuprobe rawtp usdt fentry fexit lsm_core \
		lsm_output lsm_ima_file lsm_ima_bprm; do
		tet "bpf_generic_${p}_v61" "process/bpf_generic_$p.c" "$v61"
	done
	for p in kprobe retkprobe uprobe retuprobe usdt; do
		tet "bpf_multi_${p}_v61" "process/bpf_generic_$p.c" "$v61 -D__MULTI_KPROBE"
	done
	tet bpf_execve_map_update_v61 process/bpf_execve_map_update.c "$v61"
	for p in process/bpf_exit process/bpf_fork process/bpf_loader cgroup/bpf_cgroup_mkdir \
		cgroup/bpf_cgroup_rmdir cgroup/bpf_cgroup_release test/bpf_lseek; do
		tet "$(basename "$p")_v511" "$p.c" "$v511"
	done
	for p in bpf_cgroup bpf_execve_bprm_commit_creds bpf_map_test_p1 bpf_map_test_p2 \
		bpf_map_test_p3 bpf_prog_iter; do
		tet "$p" "process/$p.c" ""
	done
	tet bpf_cgtracker cgroup/bpf_cgtracker.c ""
	tet bpf_enforcer process/bpf_enforcer.c -D__BPF_OVERRIDE_RETURN
	tet bpf_multi_enforcer process/bpf_enforcer.c "-D__BPF_OVERRIDE_RETURN -D__MULTI_KPROBE"
	tet bpf_fmodret_enforcer process/bpf_enforcer.c ""
	wait
	# The generic kprobe and uprobe objects call cel_expr_0..7, which Tetragon's loader links
	# in (pkg/selectors/celexpr.go: a policy's CEL expressions compiled to BPF, and for the
	# rest, all eight without a CEL policy, functions that return 0): those eight, linked
	# here with bpftool gen object (hidden: static functions of the program, as appended ones).
	if command -v bpftool >/dev/null; then
		i=0
		while [ $i -lt 8 ]; do
			echo "__attribute__((noinline, visibility(\"hidden\"))) int cel_expr_$i(long *argsoff, char *args) { return 0; }"
			i=$((i + 1))
		done >"$WORK/cel_expr.c"
		"$CLANG" -O2 -g -target bpf -c "$WORK/cel_expr.c" -o "$WORK/cel_expr.o" 2>>"$LOG"
		for o in "$OUT"/tetragon/*.o; do
			grep -q cel_expr_0 "$o" || continue
			if bpftool gen object "$o.linked" "$o" "$WORK/cel_expr.o" >>"$LOG" 2>&1; then
				mv "$o.linked" "$o"
			else
				rm -f "$o.linked"
			fi
		done
	fi
	echo "$c"
}

# Elastic's ebpf (elastic/ebpf GPL/): the event probe Elastic's endpoint and Auditbeat load
# (EventProbe.bpf.c: fentry/fexit programs and their kprobe fallbacks, tracepoints), and
# the host isolation programs (a kprobe, a tc classifier), with GPL/'s CMake flags: the
# project's own libbpf headers (contrib/libbpf) and x86_64 vmlinux.h (CO-RE), TcFilter's
# -nostdinc -mcpu=v2 with contrib/kernel_hdrs.  Its loader (non-GPL/Events/Lib) writes
# argument indexes and field offsets found in the kernel's BTF into .rodata before the
# load: rodata.txt's rules do the same on both sides.
p_elastic() {
	c=$(src elastic/ebpf "$1" GPL contrib/vmlinux contrib/kernel_hdrs contrib/libbpf/src) || return 1
	cd "$1" || return 1
	mkdir -p inc/bpf && cp contrib/libbpf/src/*.h inc/bpf/ || return 1
	cp contrib/vmlinux/x86_64/vmlinux.h inc/ || return 1
	d="-D__TARGET_ARCH_x86 -D__x86_64__ -fno-ident -I$1/inc"
	# shellcheck disable=SC2086
	named elastic EventProbe GPL/Events/EventProbe.bpf.c $d -D__KERNEL__ -DBPF_DEBUG_TRACE=0 -IGPL/Events
	# shellcheck disable=SC2086
	named elastic KprobeConnectHook GPL/HostIsolation/KprobeConnectHook/KprobeConnectHook.bpf.c $d \
		-IGPL/HostIsolation/KprobeConnectHook
	named elastic TcFilter GPL/HostIsolation/TcFilter/TcFilter.bpf.c -nostdinc -mcpu=v2 \
		-Icontrib/kernel_hdrs -I"$1/inc" -D__KERNEL__ -D__BPF_TRACING -fno-stack-protector \
		-fno-asynchronous-unwind-tables -fno-ident -IGPL/HostIsolation/TcFilter
	wait
	echo "$c"
}

# Cilium's pwru (cilium/pwru bpf/kprobe_pwru.c): one object of kprobe, kprobe.multi,
# fentry/fexit and kretprobe programs that its Go tool attaches to every kernel function
# taking an sk_buff, built as its build.go runs bpf2go (-O2 -mcpu=v1 -g, its own headers and
# vmlinux.h).  Its loader sets .rodata's CFG (the default flags' bits, the BTF ids of
# sk_buff and skb_shared_info in the kernel's BTF): rodata.txt's rules.
p_pwru() {
	c=$(src cilium/pwru "$1" bpf) || return 1
	cd "$1" || return 1
	named pwru kprobe_pwru bpf/kprobe_pwru.c -mcpu=v1 -fno-ident -I./bpf/headers
	wait
	echo "$c"
}

# The OpenTelemetry eBPF profiler (open-telemetry/opentelemetry-ebpf-profiler, Elastic's
# profiler given to OpenTelemetry: perf_event and kprobe unwinders for native code and 12
# language runtimes, chained by tail calls): support/ebpf/tracer.ebpf.amd64, the object the
# project commits as its own build (clang-17, llvm-link of every *.ebpf.c, llc -mcpu=v2) and
# its Go loader embeds.  Its programs are static, which this host's libbpf 1.1 refuses to
# open: their kernel verdicts come through bpfrt's loader in kernel mode.  Its loader's
# .rodata (task_struct and vm_area_struct offsets from BTF, ...): rodata.txt.
p_otel_profiler() {
	c=$(src open-telemetry/opentelemetry-ebpf-profiler "$1" support/ebpf/tracer.ebpf.amd64) || return 1
	cp "$1/support/ebpf/tracer.ebpf.amd64" "$OUT/otel-profiler/tracer.ebpf.amd64.o" || return 1
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
# projects not rebuilt this time keep their lines
[ -f "$OUT/SOURCES" ] && while read -r p rest; do
	[ -d "$OUT/$p" ] && ! grep -q "^$p " "$OUT/SOURCES.new" && echo "$p $rest" >>"$OUT/SOURCES.new"
done <"$OUT/SOURCES"
mv "$OUT/SOURCES.new" "$OUT/SOURCES"
echo "corpus: $(find "$OUT" -name '*.o' | wc -l) objects in $OUT" >&2
