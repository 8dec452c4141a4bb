#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What the systemd step of placement costs, measured where it runs: in the systemd VM
# (Debian's systemd 252 as PID 1, one emulated CPU under TCG):
#
#   LEASH_VM_SCRIPT_TIMEOUT=900 flock /tmp/leash-vm.lock \
#     tests/vm/run --systemd --builddir $PWD/build --script bench/systemd-vm.sh
#
# Not a test: it prints figures (as TAP diagnostics, and into
# $builddir/tests/vm/systemd-keep/bench.txt for the host) and passes if it could measure.
#
# CLI launch, `leash run -- /bin/true`, as root (system manager) and as uid 1000 in a
# runuser -l login session (user manager):
#   A  systemd placement: no --cgroup-parent, from a cgroup nothing delegates (root: this
#      service; the user: the session scope): root's job joins the system manager's shared
#      unit leash.slice/leash-jobs.service (the first launch starts it) and leash stays
#      here; the user's launch has the user manager move leash into that unit's leaf
#      (AttachProcessesToUnit: the kernel lets no user move a process from its session
#      into its user manager's tree) and leaves a resident launcher there, which starts
#      the later launches' leash (they have no terminal); "user-manager" is the user's
#      launch with LEASH_RESIDENT=0, as from a terminal: the manager's move each time;
#   B  the floor: the same launch with --cgroup-parent naming a scope that is already
#      delegated (systemd-run --scope -p Delegate=yes, the launching shell in a leaf of
#      it): everything but the request for the scope.
# Blocks A B A B of N launches each (the medians of all A and all B; the blocks catch
# drift), timed by one Python harness with time.perf_counter around subprocess.run.
#
# Library call, leash.limit(wall_time=30)(f)() with f returning 1, as uid 1000: the first
# call of a fresh process (which asks for the scope), then the median of the next M, each
# of a new leash.limit (a new configuration: placement decided again), then the median of
# M calls of one leash.limit (placement decided once); the floor is the same in a process
# that leash.configure()s an already delegated scope as its cgroup_parent.

. "$(dirname "$0")/../tests/vm/tap.sh"

N=${N:-10}
M=${M:-60}
user=$(getent passwd 1000 | cut -d: -f1)
keep=${LEASH_VM_KEEP:-/tmp}/bench.txt
work=$(mktemp -d)
chmod 0755 "$work"
trap 'rm -rf -- "$work"' EXIT

cat >"$work/launch.py" <<'PYEOF'
import os, statistics, subprocess, sys, time
leash, n, parent = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if parent != "-":
    # the launching process into a leaf, so that the scope holds no process itself
    os.makedirs(parent + "/h", exist_ok=True)
    with open(parent + "/h/cgroup.procs", "w") as f:
        f.write("0")
cmd = [leash, "run", "-q"] + (["--cgroup-parent", parent] if parent != "-" else []) + ["--", "/bin/true"]
ts = []
for _ in range(n):
    t = time.perf_counter()
    # no terminal: a launch from a script (a login session's later ones go through the
    # resident launcher; from a terminal they ask the manager, the row "user-manager")
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ts.append(time.perf_counter() - t)
print(" ".join("%.6f" % x for x in ts))
PYEOF

cat >"$work/calls.py" <<'PYEOF'
import os, sys, time
sys.path.insert(0, sys.argv[1])
import leash
m, parent = int(sys.argv[2]), sys.argv[3]
if parent != "-":
    os.makedirs(parent + "/h", exist_ok=True)
    with open(parent + "/h/cgroup.procs", "w") as f:
        f.write("0")
    leash.configure(cgroup_parent=parent)
def one():
    return 1
t = time.perf_counter()
assert leash.limit(wall_time=30)(one)() == 1
first = time.perf_counter() - t
ts = []
for _ in range(m):
    t = time.perf_counter()
    assert leash.limit(wall_time=30)(one)() == 1
    ts.append(time.perf_counter() - t)
lf = leash.limit(wall_time=30)(one)
lf()
us = []
for _ in range(m):
    t = time.perf_counter()
    assert lf() == 1
    us.append(time.perf_counter() - t)
# the first call; M calls of a new leash.limit each; "|"; M calls of one
print("%.6f %s | %s" % (first, " ".join("%.6f" % x for x in ts), " ".join("%.6f" % x for x in us)))
PYEOF

# as WHO CMD...: run CMD as root or as the user in a login session.
as() {
	local who=$1
	shift
	if [[ $who == root ]]; then
		"$@"
	else
		runuser -l "$user" -c "$(printf '%q ' "$@")"
	fi
}

# in_scope WHO CMD...: CMD inside a fresh delegated scope; its cgroup path as the last arg.
in_scope() {
	local who=$1 flag=
	shift
	[[ $who == root ]] || flag=--user
	as "$who" systemd-run $flag --scope -q -p Delegate=yes --slice=leash.slice -- \
		bash -c 'exec "$@" "/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)"' bash "$@"
}

median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) * 1000 }'; }

: >"$keep"
report() { echo "$*" >>"$keep"; tap_diag "$*"; }
report "systemd $(systemctl --version | head -n 1 | cut -d' ' -f2-), kernel $(uname -r), $(nproc) emulated CPU (TCG), N=$N launches per block, M=$M calls"

for who in root user user-manager; do
	a=
	b=
	# user-manager: the user's launch with LEASH_RESIDENT=0, as from a terminal (the
	# user manager moves leash each time)
	env=()
	[[ $who == user-manager ]] && env=(env LEASH_RESIDENT=0)
	for round in 1 2; do
		a+=" $(as "${who%-manager}" "${env[@]}" /usr/bin/python3 "$work/launch.py" "$LEASH" "$N" -)"
		b+=" $(in_scope "${who%-manager}" "${env[@]}" /usr/bin/python3 "$work/launch.py" "$LEASH" "$N")"
	done
	ma=$(median <<<"${a# }")
	mb=$(median <<<"${b# }")
	if [[ -n $ma && -n $mb ]]; then
		tap_ok "launch as $who measured"
		report "launch as $who: systemd placement $ma ms, floor (an already delegated scope) $mb ms, the scope costs $(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f ms (%.2fx floor)", a - b, a / b }') per launch"
	else
		tap_fail "launch as $who measured"
	fi
done

py=$LEASH_VM_BUILDDIR/python
# blocks A B A B, as the launches: a process each, its lines pooled
a=()
b=()
for round in 1 2; do
	a+=("$(as user /usr/bin/python3 "$work/calls.py" "$py" "$M" -)")
	b+=("$(in_scope user /usr/bin/python3 "$work/calls.py" "$py" "$M")")
done
# part LINES... FIELD: the first calls (first), the new-limit calls (new) or the
# one-limit calls (one) of every line, space-separated
part() {
	local f=${!#} l
	for l in "${@:1:$#-1}"; do
		case $f in
		first) cut -d' ' -f1 <<<"$l" ;;
		new) sed 's/ |.*//' <<<"$l" | cut -d' ' -f2- ;;
		one) sed 's/.*| //' <<<"$l" ;;
		esac
	done | tr '\n' ' ' | sed 's/ *$//'
}
if [[ -n ${a[0]} && -n ${a[1]} && -n ${b[0]} && -n ${b[1]} ]]; then
	tap_ok "leash.limit calls measured"
	first=$(part "${a[@]}" first | median)
	fb=$(part "${b[@]}" first | median)
	ma=$(part "${a[@]}" new | median)
	mb=$(part "${b[@]}" new | median)
	ra=$(part "${a[@]}" one | median)
	rb=$(part "${b[@]}" one | median)
	report "leash.limit as uid 1000 (2 processes each, alternated): first call of a process $first ms (asks for the scope), then $ma ms per call of a new leash.limit; floor (an already delegated scope): first $fb ms, then $mb ms per call; the scope costs $(awk -v f="$first" -v fb="$fb" 'BEGIN { printf "%.2f ms", f - fb }') once per process and $(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f ms (%.3fx floor)", a - b, a / b }') per later call"
	report "leash.limit as uid 1000, one limited function called $M times (2 processes each, alternated): $ra ms per call; floor (the same in an already delegated scope) $rb ms per call: $(awk -v a="$ra" -v b="$rb" 'BEGIN { printf "%.3fx floor", a / b }')"
else
	tap_fail "leash.limit calls measured"
fi
tap_plan "$_tap_n"
tap_done
