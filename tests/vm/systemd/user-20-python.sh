#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Python as an ordinary user (uid 1000) in a login session under systemd as PID 1: the
# first leash.limit call of a process has the user manager move it into the leaf of its
# shared unit leash.slice/leash-jobs.service (Delegate=yes) and every later call reuses
# that; leash.limit(memory="32M") raises MemoryLimitExceeded enforced by the cgroup, and
# 1,000 calls in one process leave no scope, cgroup (but the shared unit's, which stays)
# or process behind once the process is gone.  The calls' timings are
# printed (a diagnostic: the figures of docs/PERFORMANCE.md come from bench/systemd-vm.sh).

. "$(dirname "$0")/lib.sh"

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
	"$PY" -c 'import json,re,sys; r=json.load(open(sys.argv[1])); sys.exit(not (re.match(r"0::/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-jobs.service/leash-leaf$", r["cgroup"]) and r["after"] == r["cgroup"]))' "$TMP/py.json"

# Nothing of the process is left once it is gone: its scope, cgroups, processes.
for _ in $(seq 50); do
	left=$(systemctl --user list-units --all --plain --no-legend 'leash-*.scope')
	[[ -z $left ]] && break
	sleep 0.1
done
tap_is "$left" "" "no leash scope is left in the user manager"
tap_is "$(find "$CG/user.slice/user-1000.slice/user@1000.service/leash.slice" -mindepth 1 -type d 2>/dev/null |
	grep -v -x -e '.*/leash-jobs.service' -e '.*/leash-jobs.service/leash-leaf')" "" \
	"no cgroup is left under the user's leash.slice but the shared unit and its leaf"
tap_is "$(pgrep -u 1000 -f 'leash|vm-hog')" "" "no process is left"
tap_plan "$_tap_n"
tap_done
