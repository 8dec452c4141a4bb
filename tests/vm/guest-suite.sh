#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# guest-suite.sh --builddir DIR --srcdir DIR [--mode suite|selfcheck|script] [--script FILE]
#                [--phase root|user|all]
#
# Runs inside the VM, as root, chrooted into the host's read-only userland with the build
# tree mounted read-write (see tests/vm/init).  Runs each test script and merges their TAP
# into one stream, renumbered and labelled "[root] file" or "[uid1000] file", with the plan
# at the end; then prints the one line the host trusts:
#
#   leash-vm: status pass=N fail=N skip=N
#
# Phases: all runs, as root, every tests/integration/*.sh and tests/vm/t/*.sh (but user-*),
# then, as uid 1000 in a delegated cgroup, tests/integration/*.sh again and
# tests/vm/t/user-*.sh.  tests/vm/run boots the two halves in two VMs at once, balanced:
# root runs root's tests/integration/*.sh (then the tests/vm/t/*.sh whose head says
# "# leash-vm-phase: root"); user runs root's other tests/vm/t/*.sh first (the
# kernel proofs, as root), then the uid-1000 scripts (CI's run of bfac955 here, per
# script under emulation: root's integration scripts 673 s, root's t/*.sh 608 s of which
# the truth matrix's 90-truth.sh 159 s, the uid-1000 ones 375 s; 91-truth-callers.sh,
# ~210 s, asks for the root VM).
# Each script runs in a cgroup leaf of its own (root: leash-vm-root, the user:
# leash-vm-user/shell), so processes it leaves behind are found, counted and killed.
# The selfcheck mode runs only the kernel self-checks (t/00-*.sh, t/user-00-*.sh), which
# need neither leash nor its helpers; the script mode runs one given script both ways.
#
# A script's own failures count one each; a script that crashes, times out, exits non-zero
# without a failing test, or runs a different number of tests than it planned counts one
# more failure.  Exit 77 with no test run counts as one skip.  After each phase, the set
# of cgroups must be what it was before: a test that leaves one behind is a failure.

set -u
shopt -s extglob
export LC_ALL=C

builddir=
srcdir=
mode=suite
script=
phase=all
while [[ $# -gt 0 ]]; do
	case $1 in
	--builddir) builddir=$2; shift 2 ;;
	--srcdir) srcdir=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--script) script=$2; shift 2 ;;
	--phase) phase=$2; shift 2 ;;
	*) echo "guest-suite: unknown argument: $1" >&2; exit 2 ;;
	esac
done

user_uid=1000
script_timeout=${LEASH_VM_SCRIPT_TIMEOUT:-300}
[[ $script_timeout =~ ^[0-9]+$ ]] || script_timeout=150
cgroot=/sys/fs/cgroup
delegated=$cgroot/leash-vm-user
# Scale for tests that start many jobs at once (tests/integration/concurrency.sh, once it
# reads this): on one emulated CPU, 100 concurrent jobs took 38 s, 300 took 82 s, and
# 1000 did not finish in 240 s.
export LEASH_TEST_CONCURRENT_JOBS=${LEASH_TEST_CONCURRENT_JOBS:-100}

export LEASH=$builddir/src/cli/leash
export HELPERS=$builddir/tests/helpers
export LEASH_TEST_REQUIRE_CONTROLLERS=1
export LEASH_VM=1
export LEASH_VM_HOG=$builddir/tests/vm/vm-hog
export LEASH_VM_SRCDIR=$srcdir
export LEASH_VM_BUILDDIR=$builddir
# As tests/Makemodule.am's AM_TESTS_ENVIRONMENT sets them for make check.
export LEASH_SRCDIR=$srcdir
export LEASH_CONFIG_DIR=$builddir/tests/no-such-config
export TMPDIR=/tmp
export CI=${CI:-}
unset LEASH_TEST_PARENT

. "$(dirname "${BASH_SOURCE[0]}")/tap-merge.sh"

# run_script LABEL SCRIPT CGROUP [UID]: run one TAP script as a member of CGROUP (a leaf
# of its own), as root or as UID, and merge its results.  Whatever the script leaves in
# its cgroup is a failure, and is killed so that it cannot disturb the next script.
run_script() {
	local label=$1 script=$2 cg=$3 uid=${4:-0}
	local rel=${script#"$srcdir"/} out rc t0 t1 left i limit=$script_timeout own
	# a script that needs more than the default says so in its head:
	# "# leash-vm-script-timeout: SECONDS" (never less than the default)
	own=$(sed -n '1,40s/^# leash-vm-script-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -n 1)
	[[ -n $own && $own -gt $limit ]] && limit=$own
	local cmd=(bash -c 'echo $$ >"$0/cgroup.procs" || exit 125; exec "$@"' "$cg")
	if [[ $uid != 0 ]]; then
		# Moved as root (the user may not write the root cgroup's cgroup.procs), then
		# privileges are dropped for good.
		cmd+=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all
			env HOME="/tmp/home-$uid" USER=user LOGNAME=user)
	fi
	out=$(mktemp)
	t0=$(date +%s.%N)
	timeout -k 10 "$limit" "${cmd[@]}" bash "$script" </dev/null >"$out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	left=$(tr '\n' ' ' <"$cg/cgroup.procs")
	if [[ -n $left ]]; then
		echo "# [$label] $rel left processes: $(for p in $left; do { tr '\0' ' ' </proc/$p/cmdline | cut -c1-60; } 2>/dev/null; echo -n '; '; done)"
		echo 1 >"$cg/cgroup.kill"
		for ((i = 0; i < 100; i++)); do
			grep -q '^populated 0' "$cg/cgroup.events" && break
			sleep 0.1
		done
	fi
	echo "# [$label] $rel (exit $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
	merge_tap "$label" "$rel" "$out" "$rc" "$limit"
	rm -f -- "$out"
	[[ -z $left ]] || emit_not_ok "[$label] $rel: no process left behind (left: $left)"
}

cgroups_now() { find "$cgroot" -mindepth 1 -type d | sort; }

# check_no_leftovers LABEL BEFORE-FILE: the cgroup tree is as it was.
check_no_leftovers() {
	local label=$1 before=$2 now extra
	now=$(mktemp)
	if ! cgroups_now >"$now" || ! extra=$(comm -13 "$before" "$now"); then
		emit_not_ok "[$label] no cgroup left behind (cannot list the cgroups)"
	elif [[ -z $extra ]]; then
		emit_ok "[$label] no cgroup left behind"
	else
		emit_not_ok "[$label] no cgroup left behind"
		while IFS= read -r d; do
			echo "# left: $d (procs: $(tr '\n' ' ' <"$d/cgroup.procs" 2>/dev/null))"
		done <<<"$extra"
	fi
	rm -f -- "$now"
}

# delegate: a cgroup for uid 1000 the way a service manager delegates one: the directory
# and the three delegation files, never the limit files (with them the user could raise
# its own memory.max).
delegate() {
	mkdir -p "$delegated/shell" || return 1
	local d f
	for d in "$delegated" "$delegated/shell"; do
		for f in "$d" "$d/cgroup.procs" "$d/cgroup.threads" "$d/cgroup.subtree_control"; do
			chown $user_uid:$user_uid "$f" || return 1
		done
	done
	# and marks it the way systemd marks a Delegate=yes unit: leash's placement
	# takes a subtree only where it is delegated (placement.c)
	/usr/bin/python3 -c 'import os, sys; [os.setxattr(sys.argv[1], n, b"1") for n in ("trusted.delegate", "user.delegate")]' \
		"$delegated" || return 1
	mkdir -p /tmp/home-$user_uid && chown $user_uid:$user_uid /tmp/home-$user_uid
}

undelegate() {
	local d
	# Whatever the user left below the delegated cgroup was already reported; remove it so
	# that the root phase's own check is not disturbed.
	for d in $(find "$delegated" -mindepth 1 -depth -type d 2>/dev/null); do
		[[ $d == "$delegated/shell" ]] && continue
		[[ -e $d/cgroup.kill ]] && echo 1 >"$d/cgroup.kill"
		rmdir "$d" 2>/dev/null
	done
	rmdir "$delegated/shell" "$delegated" 2>/dev/null
}

echo "# leash-vm: kernel $(uname -r), mode $mode, phase $phase, $(nproc) CPU, $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)"
echo "# leash-vm: cgroup2 root controllers: $(cat $cgroot/cgroup.subtree_control)"
echo "# leash-vm: LEASH=$LEASH HELPERS=$HELPERS"

root_tests=()
root_vm_tests=() # root's tests/vm/t/*.sh, the user phase's in suite mode
root_late_tests=() # those that ask for the root phase (# leash-vm-phase: root)
user_tests=()
if [[ $mode == script ]]; then
	# Development aid (tests/vm/run --script FILE): one script, as root and as uid 1000.
	root_tests=("$script")
	user_tests=("$script")
elif [[ $mode == selfcheck ]]; then
	root_tests=("$srcdir"/tests/vm/t/00-*.sh)
	user_tests=("$srcdir"/tests/vm/t/user-00-*.sh)
else
	for t in "$srcdir"/tests/integration/*.sh; do
		[[ -f $t && ${t##*/} != lib.sh ]] || continue
		root_tests+=("$t")
		[[ ${LEASH_VM_USER_INTEGRATION:-1} == 1 ]] && user_tests+=("$t")
	done
	for t in "$srcdir"/tests/vm/t/*.sh; do
		case ${t##*/} in
		user-*) user_tests+=("$t") ;;
		*)
			# "# leash-vm-phase: root" in its head: the root VM's, after the integration
			# scripts (that VM's phase is the shorter)
			if sed -n '1,40p' "$t" | grep -qx '# leash-vm-phase: root'; then
				root_late_tests+=("$t")
			else
				root_vm_tests+=("$t")
			fi
			;;
		esac
	done
	case $phase in
	root) root_tests+=("${root_late_tests[@]}") ;;
	user) root_tests=("${root_vm_tests[@]}") ;;
	*) root_tests+=("${root_vm_tests[@]}" "${root_late_tests[@]}") ;;
	esac
fi

# Root's scripts run in a leaf of their own too, so that what they leave can be found.
root_leaf=$cgroot/leash-vm-root
mkdir -p "$root_leaf"
# excluded SCRIPT: named in LEASH_VM_EXCLUDE (a development aid; each counts as a skip).
excluded() { [[ ,${LEASH_VM_EXCLUDE:-}, == *,"${1##*/}",* ]]; }
[[ $phase != user || $mode == suite ]] || root_tests=()
[[ $phase != root ]] || user_tests=()
# The default parent of job cgroups (<cgroup2>/leash) is a persistent part of
# the tree, made by the first run like a systemd slice: made up front here so
# that the leftover check below sees job cgroups only.
mkdir -p "$cgroot/leash"
before=$(mktemp)
cgroups_now >"$before"
for t in "${root_tests[@]}"; do
	if excluded "$t"; then
		emit_skip "[root] ${t#"$srcdir"/}" "excluded by LEASH_VM_EXCLUDE"
	elif [[ -f $t ]]; then
		run_script root "$t" "$root_leaf"
	else
		emit_not_ok "[root] $t: no such file in the guest"
	fi
done
[[ ${#root_tests[@]} -eq 0 ]] || check_no_leftovers root "$before"

if [[ ${#user_tests[@]} -eq 0 ]]; then
	:
elif delegate; then
	cgroups_now >"$before"
	export LEASH_TEST_PARENT=$delegated
	for t in "${user_tests[@]}"; do
		if excluded "$t"; then
			emit_skip "[uid$user_uid] ${t#"$srcdir"/}" "excluded by LEASH_VM_EXCLUDE"
		elif [[ -f $t ]]; then
			run_script uid$user_uid "$t" "$delegated/shell" $user_uid
		else
			emit_not_ok "[uid$user_uid] $t: no such file in the guest"
		fi
	done
	unset LEASH_TEST_PARENT
	check_no_leftovers uid$user_uid "$before"
	leftover=$(ps -o pid= -u $user_uid | tr -d ' ' | tr '\n' ' ')
	if [[ -z $leftover ]]; then
		emit_ok "[uid$user_uid] no process left behind"
	else
		emit_not_ok "[uid$user_uid] no process left behind"
		echo "# left: $(ps -o pid,args -u $user_uid | tail -n +2 | tr '\n' ';')"
	fi
	undelegate
else
	emit_not_ok "[uid$user_uid] delegate $delegated to uid $user_uid"
fi

rmdir "$root_leaf" 2>/dev/null
echo "1..$n"
echo "leash-vm: status pass=$pass fail=$fail skip=$skip"
