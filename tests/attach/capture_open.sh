# capture_open.sh - sourced by the live attach tests (cli_filter.sh, cli_ebpf.sh):
# wait_capture PID returns once process PID has an AF_PACKET socket bound to an interface
# (its inode in /proc/net/packet with a non-zero Iface), that is once `bpfrt attach` sees
# every packet sent from then on (the ring keeps those that come before its loop starts);
# 1 if PID ended or 30 s passed.  A fixed pause before sending raced a loaded machine.
wait_capture() {
	wc_i=0
	while [ $wc_i -lt 300 ] && kill -0 "$1" 2>/dev/null; do
		for wc_f in /proc/"$1"/fd/*; do
			wc_l=$(readlink "$wc_f" 2>/dev/null) || continue
			case $wc_l in
			socket:*)
				wc_ino=${wc_l#socket:\[}
				wc_ino=${wc_ino%\]}
				awk -v i="$wc_ino" 'NR > 1 && $9 == i && $5 != 0 { f = 1 } END { exit !f }' \
					/proc/net/packet && return 0
				;;
			esac
		done
		sleep 0.1
		wc_i=$((wc_i + 1))
	done
	return 1
}
