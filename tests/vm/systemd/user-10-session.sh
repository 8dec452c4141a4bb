#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An ordinary user (uid 1000) in a real login session (runuser -l: pam_systemd's
# session-N.scope, owned by root, delegating nothing) under systemd as PID 1, with only
# what the packages install (leash.slice, user@.service's io drop-in): leash asks the
# user manager for leash-NAME-PID.scope with Delegate=yes and its limits are the
# cgroup's: -m 32M is an OOM kill with reason memory, -P 10 stops a 20-fork job, --cpus
# 0.5 throttles, leash.limit(memory="32M") raises MemoryLimitExceeded enforced by the
# cgroup, and 1,000 leash.limit calls in one process ask for one scope and leave nothing.

. "$(dirname "$0")/lib.sh"

own=$(sed -n 's/^0:://p' /proc/self/cgroup)
tap_check "the test runs in a login session's scope ($own)" grep -Eq '^/user.slice/user-1000.slice/session-[^/]+\.scope$' <<<"$own"
tap_check "which is not delegated to the user" test ! -w "$CG$own/cgroup.procs"

# The OOM kill, and the evidence the closing note shows.
run_leash -m 32M -w 60s -o "$TMP/oom.json" -- "$LEASH_VM_HOG" alloc 200
keep user-oom-report.json "$TMP/oom.json"
echo "$ERR" >"$LEASH_VM_KEEP/user-oom-stderr.txt"
tap_is "$RC" 137 "-m 32M: exit 137 (stderr: $ERR)"
tap_is "$(jget "$TMP/oom.json" reason)" memory "-m 32M: reason memory"
tap_is "$(jget "$TMP/oom.json" limits.memory.enforced_by)" cgroup "-m 32M: enforced_by cgroup"
cg=$(jget "$TMP/oom.json" cgroup)
tap_check "the job was in the user manager's leash.slice ($cg)" \
	grep -Eq "^$CG/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-run-[0-9]+\.scope/[^/]+$" <<<"$cg"
tap_is "$(jget "$TMP/oom.json" placement.kind)" systemd "the report's placement is systemd ($(jget "$TMP/oom.json" placement.why))"
"$LEASH" check >"$TMP/check.txt" 2>&1
tap_check "leash check: placement systemd, through the user manager" grep -q '^placement: *systemd .*user@1000.service' "$TMP/check.txt"
tap_check "leash check: the user manager delegates memory, pids, cpu and io (the packaged drop-in adds io)" \
	grep -q 'memory=yes pids=yes cpu=yes io=yes' "$TMP/check.txt"
keep user-leash-check.txt "$TMP/check.txt"
tap_diag "$(cat "$TMP/check.txt")"

# pids: 20 forks at once against -P 10.
run_leash -P 10 -w 60s -o "$TMP/pids.json" -- "$LEASH_VM_HOG" fork 20
tap_check "-P 10: the 20-fork job fails (exit $RC, $OUT)" test "$RC" -ne 0
tap_check "-P 10: fewer than 20 forks ($OUT)" bash -c "[[ '$OUT' =~ forked=([0-9]+) ]] && (( BASH_REMATCH[1] < 10 ))"
tap_is "$(jget "$TMP/pids.json" limits.pids.enforced_by)" cgroup "-P 10: enforced_by cgroup"

# cpu: 0.5 core for 4 s of wall time.
run_leash -c 0.5 -w 4s -o "$TMP/cpu.json" -- "$LEASH_VM_HOG" spin 20000
cpu=$(jget "$TMP/cpu.json" usage.cpu_time_s)
wall=$(jget "$TMP/cpu.json" usage.wall_time_s)
tap_check "--cpus 0.5 throttles: $cpu s CPU in $wall s" awk -v c="$cpu" -v w="$wall" 'BEGIN { exit !(c <= 0.65 * w && c > 0) }'
tap_is "$(jget "$TMP/cpu.json" limits.cpus.enforced_by)" cgroup "--cpus 0.5: enforced_by cgroup"
tap_check "--cpus 0.5: throttled periods counted ($(jget "$TMP/cpu.json" usage.cpu_throttled_periods))" \
	awk -v t="$(jget "$TMP/cpu.json" usage.cpu_throttled_periods)" 'BEGIN { exit !(t > 0) }'

# Python: one scope for the process, reused by every call.
export PYTHONPATH=$LEASH_VM_BUILDDIR/python
"$PY" - "$TMP/py.json" <<'PYEOF' >"$TMP/py.out" 2>&1
import json, os, sys, time
import leash

def hog():
    b = bytearray(200 << 20)
    b[::4096] = b"x" * len(b[::4096])

def one():
    return 1

res = {}
t0 = time.perf_counter()
try:
    leash.limit(memory="32M")(hog)()
    res["oom"] = ["no exception"]
except leash.MemoryLimitExceeded as e:
    res["oom"] = ["MemoryLimitExceeded", e.report["reason"], e.report["limits"]["memory"]["enforced_by"]]
first = time.perf_counter() - t0
cg = open("/proc/self/cgroup").read().strip()
res["cgroup"] = cg
times = []
for i in range(1000):
    t = time.perf_counter()
    assert leash.limit(wall_time=30)(one)() == 1
    times.append(time.perf_counter() - t)
res["after"] = open("/proc/self/cgroup").read().strip()
times.sort()
res["median_ms"] = times[len(times) // 2] * 1e3
res["mean_ms"] = sum(times) / len(times) * 1e3
res["first_ms"] = first * 1e3
json.dump(res, open(sys.argv[1], "w"))
PYEOF
tap_diag "$(cat "$TMP/py.out")"
res=$(cat "$TMP/py.json" 2>/dev/null)
tap_diag "python: $res"
keep user-python.json "$TMP/py.json"
tap_check "leash.limit(memory=\"32M\") raises MemoryLimitExceeded, reason memory, enforced by cgroup" \
	"$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["oom"] != ["MemoryLimitExceeded", "memory", "cgroup"])' "$TMP/py.json"
tap_check "the Python process sat in its scope's leaf, the same after 1,000 calls" \
	"$PY" -c 'import json,re,sys; r=json.load(open(sys.argv[1])); sys.exit(not (re.match(r"0::/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-python3-\d+\.scope/leash-leaf$", r["cgroup"]) and r["after"] == r["cgroup"]))' "$TMP/py.json"

# Nothing of the process is left once it is gone: its scope, cgroups, processes.
for _ in $(seq 50); do
	left=$(systemctl --user list-units --all --plain --no-legend 'leash-*.scope')
	[[ -z $left ]] && break
	sleep 0.1
done
tap_is "$left" "" "no leash scope is left in the user manager"
tap_is "$(find "$CG/user.slice/user-1000.slice/user@1000.service/leash.slice" -mindepth 1 -type d 2>/dev/null)" "" \
	"no cgroup is left under the user's leash.slice"
tap_is "$(pgrep -u 1000 -f 'leash|vm-hog')" "" "no process is left"
tap_plan "$_tap_n"
tap_done
