#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# systemd-suite.sh --builddir DIR --srcdir DIR [--mode suite|script] [--script FILE]
#                  [--phase systemd|systemd-truth|systemd-all]
#
# The guest side of the systemd flavour (tests/vm/run --systemd): started by systemd as
# leash-vm.service (tests/vm/init-systemd) once dbus and logind are up.  Runs, with no
# setup beyond what tests/vm/init-systemd installed the packaged way:
#
# - tests/vm/systemd/[0-9]*.sh as root, from this service's own cgroup (a system service
#   that delegates nothing: leash must ask the system manager for its scope);
# - tests/vm/systemd/user-*.sh as uid 1000 in a real login session: `runuser -l`, whose
#   PAM stack (pam_systemd) registers a logind session, puts the shell in the root-owned
#   session-N.scope and starts user@1000.service, the user manager.
#
# tests/vm/run boots two VMs at once in suite mode: phase systemd-truth runs the truth
# matrix and mode nest's Slurm cluster (50-truth.sh, 30-slurm-cgroup-v2.sh), phase systemd
# every other script; systemd-all (script mode, LEASH_VM_PARALLEL=0) runs them all.
#
# and prints their TAP merged (tests/vm/tap-merge.sh), the line the host trusts
# (leash-vm: status pass=N fail=N skip=N) on ttyS1, and powers the machine off.  After
# the scripts: no leash scope, no cgroup under either leash.slice and no process of uid
# 1000 may be left (the user manager and its session excepted), and the journal since
# the first script holds no warning from systemd about leash's units (but the ENODEV
# line of a scope a test stopped itself, see below).

set -u
export LC_ALL=C
exec </dev/null >/dev/ttyS1 2>&1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
echo "leash-vm: ready"

builddir=
srcdir=
mode=suite
script=
phase=systemd-all
while [[ $# -gt 0 ]]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--srcdir) srcdir=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--script) script=$2; shift 2 ;;
	--phase) phase=$2; shift 2 ;;
	*) echo "systemd-suite: unknown argument: $1"; shift ;;
	esac
done

. "$srcdir/tests/vm/tap-merge.sh"

# 1,000 leash.limit calls took 45 s here on a quiet host and 262 s at load 26
script_timeout=${LEASH_VM_SCRIPT_TIMEOUT:-600}
[[ $script_timeout =~ ^[0-9]+$ ]] || script_timeout=600
user=$(getent passwd 1000 | cut -d: -f1)
export LEASH=$builddir/src/cli/leash LEASH_VM_HOG=$builddir/tests/vm/vm-hog
export LEASH_VM_BUILDDIR=$builddir LEASH_VM_SRCDIR=$srcdir
export LEASH_CONFIG_DIR=$builddir/tests/no-such-config
# The guest writes what the host keeps (the verbatim reports of the closing note) here.
# (emptied by the host before it boots: the two VMs of a suite share it)
export LEASH_VM_KEEP=$builddir/tests/vm/systemd-keep
mkdir -p "$LEASH_VM_KEEP" && chmod 0777 "$LEASH_VM_KEEP"

echo "# leash-vm: systemd $(systemctl --version | head -n 1), kernel $(uname -r), $(nproc) CPU, phase $phase"
echo "# leash-vm: system state $(systemctl is-system-running), uid 1000 is '$user'"

run_one() {
	local label=$1 t=$2 rel=${2#"$srcdir"/} out rc t0
	local envs="LEASH=$LEASH LEASH_VM_HOG=$LEASH_VM_HOG LEASH_VM_BUILDDIR=$builddir LEASH_VM_SRCDIR=$srcdir LEASH_CONFIG_DIR=$LEASH_CONFIG_DIR LEASH_VM_KEEP=$LEASH_VM_KEEP"
	out=$(mktemp)
	chmod 0644 "$out"
	t0=$EPOCHREALTIME
	if [[ $label == root ]]; then
		timeout -k 10 "$script_timeout" bash "$t" >"$out" 2>&1
	else
		# A login shell of its own: the session and its scope are logind's.
		timeout -k 10 "$script_timeout" runuser -l "$user" -c "env $envs bash '$t'" >"$out" 2>&1
	fi
	rc=$?
	echo "# [$label] $rel (exit $rc, $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s)"
	merge_tap "$label" "$rel" "$out" "$rc" "$script_timeout"
	rm -f -- "$out"
}

# leftovers: leash's scopes, cgroups below either leash.slice, and processes of uid 1000
# outside its user manager's init.scope.
leftovers() {
	local u
	u=$(systemctl list-units --all --plain --no-legend 'leash-*.scope' 2>/dev/null)
	u+=$(runuser -l "$user" -c 'systemctl --user list-units --all --plain --no-legend "leash-*.scope"' 2>/dev/null)
	u+=$(find /sys/fs/cgroup/leash.slice "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/leash.slice" \
		-mindepth 1 -type d 2>/dev/null)
	u+=$(ps -u 1000 -o pid=,args= | while read -r pid args; do
		grep -q 'user@1000.service/init.scope$' "/proc/$pid/cgroup" 2>/dev/null || echo "$pid $args"
	done)
	echo "$u"
}

tests=()
if [[ $mode == script ]]; then
	tests=("$script")
else
	for t in "$srcdir"/tests/vm/systemd/[0-9]*.sh "$srcdir"/tests/vm/systemd/user-*.sh; do
		case $phase:${t##*/} in
		systemd-all:* | systemd-truth:50-truth.sh | systemd-truth:30-slurm-cgroup-v2.sh) tests+=("$t") ;;
		systemd-truth:*) ;;
		systemd:50-truth.sh | systemd:30-slurm-cgroup-v2.sh) ;;
		*) tests+=("$t") ;;
		esac
	done
fi
rm -f /run/leash-vm-stopped-scopes
# uid 1000's scripts name the scopes they stop too (a VM of its own: no one else writes here)
install -m 0666 /dev/null /run/leash-vm-stopped-scopes
since=$(date +%s)
sleep 1
for t in "${tests[@]}"; do
	if [[ ,${LEASH_VM_EXCLUDE:-}, == *,"${t##*/}",* ]]; then
		emit_skip "${t#"$srcdir"/}" "excluded by LEASH_VM_EXCLUDE"
	elif [[ ${t##*/} == user-* ]]; then
		run_one uid1000 "$t"
	else
		run_one root "$t"
	fi
done

# Scopes go when their last process does; the user's go with the session. The shared
# units (leash-jobs.service) stay until stopped: stopped here, they must leave nothing.
echo "leash-jobs.service" >>/run/leash-vm-stopped-scopes
systemctl stop leash-jobs.service 2>/dev/null
runuser -l "$user" -c 'systemctl --user stop leash-jobs.service' 2>/dev/null
for _ in $(seq 50); do
	[[ -z $(leftovers) ]] && break
	sleep 0.2
done
left=$(leftovers)
if [[ -z $left ]]; then
	emit_ok "no leash scope, cgroup or uid-1000 process left behind"
else
	emit_not_ok "no leash scope, cgroup or uid-1000 process left behind"
	echo "$left" | sed 's/^/# left: /'
fi
complaints=$(journalctl -q --no-pager -p warning --since "@$since" | grep -v ' kernel: ' | grep -i 'leash')
# A scope a test stopped itself (10-root.sh's systemctl stop leash.slice, the services
# 40-stop.sh and user-30-stop.sh stop, the user's leash.slice): systemd's walk
# of it may race the job cgroup's removal by leash's cleanup, which systemd logs and ignores
# (ENODEV from a dying cgroup). That line, for those scopes only, is not a complaint.
while read -r scope; do
	[[ -n $scope ]] || continue
	complaints=$(grep -v -F -e "$scope: Failed to kill control group /leash.slice/$scope, ignoring: No such device" \
		-e "$scope: Failed to kill control group /user.slice/user-1000.slice/user@1000.service/leash.slice/$scope, ignoring: No such device" \
		<<<"$complaints")
done 2>/dev/null </run/leash-vm-stopped-scopes
if [[ -z $complaints ]]; then
	emit_ok "the journal holds no warning about leash's units"
else
	emit_not_ok "the journal holds no warning about leash's units"
	echo "$complaints" | sed 's/^/# journal: /'
fi
echo "1..$n"
echo "leash-vm: status pass=$pass fail=$fail skip=$skip"
sync
systemctl poweroff -ff
