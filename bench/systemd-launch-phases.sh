#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Where a login-session launch spends its time against the floor (docs/PERFORMANCE.md,
# systemd section): five `leash run -q -- /bin/true` under strace --seccomp-bpf (it stops
# only at the traced calls) as uid 1000 in a login session, each followed by one with
# --cgroup-parent a fresh delegated scope; the traces go to $LEASH_VM_KEEP/ph-*.txt; then
# six untraced pairs.  Run it as bench/systemd-attach-route-probe.sh says.
. "$LEASH_VM_SRCDIR/tests/vm/systemd/lib.sh"
"$LEASH" run -q -- true
tr=execve,openat,connect,sendmsg,recvmsg,mkdirat,clone,clone3,exit_group,unlinkat,rmdir,pidfd_open,ppoll,poll
for i in 1 2 3 4 5; do
	strace --seccomp-bpf -f -ttt -e trace=$tr -o "$LEASH_VM_KEEP/ph-sys-$i.txt" "$LEASH" run -q -- /bin/true
	systemd-run --user --scope -q -p Delegate=yes --slice=leash.slice -- bash -c '
		p=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup); mkdir -p $p/h; echo $$ > $p/h/cgroup.procs
		strace --seccomp-bpf -f -ttt -e trace='$tr' -o "'$LEASH_VM_KEEP'/ph-floor-'$i'.txt" "'$LEASH'" run -q --cgroup-parent $p -- /bin/true'
done
for i in 1 2 3 4 5 6; do
	t0=$EPOCHREALTIME; "$LEASH" run -q -- /bin/true; t1=$EPOCHREALTIME
	systemd-run --user --scope -q -p Delegate=yes --slice=leash.slice -- bash -c '
		p=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup); mkdir -p $p/h; echo $$ > $p/h/cgroup.procs
		t0=$EPOCHREALTIME; "'$LEASH'" run -q --cgroup-parent $p -- /bin/true; t1=$EPOCHREALTIME
		echo "# phases floor launch $(awk -v a=$t0 -v b=$t1 "BEGIN{printf \"%.1f\", (b-a)*1e3}") ms"'
	echo "# phases systemd launch $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.1f", (b-a)*1e3}') ms"
done
echo "# phases loadavg $(cat /proc/loadavg)"
echo "ok 1 - phases ran"
echo "1..1"
