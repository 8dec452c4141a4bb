#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# An ordinary user (uid 1000): leash knows a scope by asking the user manager for the
# unit's Delegate property (systemd 252 writes no user.delegate mark on a user manager's
# scope).  So the second and third leash.limit configuration of one process reuse the
# unit the first one got (the shared leash-jobs.service), each enforced by the cgroup (it was placement none and
# RLIMIT_AS); inside `systemd-run --user --scope -p Delegate=yes` leash uses that scope;
# `leash check` names the scope a run would use; and the user manager's daemon-reload
# leaves a running job's cpu limit in place.

. "$(dirname "$0")/lib.sh"

export PYTHONPATH=$LEASH_VM_BUILDDIR/python
"$PY" - "$TMP/py.json" <<'PYEOF' >"$TMP/py.out" 2>&1
import json, os, sys, time
import leash

def hog():
    b = bytearray(200 << 20)
    b[::4096] = b"x" * len(b[::4096])

def forks():
    kids, n = [], 0
    for _ in range(20):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(2)
            os._exit(0)
        kids.append(pid)
        n += 1
    for k in kids:
        os.waitpid(k, 0)
    return n

res = {}
for key, mem in (("first", "32M"), ("third", "48M")):
    try:
        leash.limit(memory=mem)(hog)()
        res[key] = ["no exception"]
    except leash.MemoryLimitExceeded as e:
        res[key] = ["MemoryLimitExceeded", e.report["limits"]["memory"]["enforced_by"], e.report["placement"]["kind"]]
    if key == "first":
        lf = leash.limit(pids=10)(forks)
        n, rep = lf.call_with_report()
        res["second"] = [n, rep["limits"]["pids"]["enforced_by"], rep["placement"]["kind"], rep["placement"]["why"]]
res["cgroup"] = open("/proc/self/cgroup").read().strip()
json.dump(res, open(sys.argv[1], "w"))
PYEOF
tap_diag "$(cat "$TMP/py.out")"
tap_diag "python: $(cat "$TMP/py.json" 2>/dev/null)"
tap_check "first configuration, memory=32M: MemoryLimitExceeded by the cgroup" \
	"$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["first"] != ["MemoryLimitExceeded", "cgroup", "systemd"])' "$TMP/py.json"
tap_check "second configuration, pids=10: fewer than 10 of 20 forks, enforced by the cgroup in the same scope" \
	"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["second"]; sys.exit(not (r[0] < 10 and r[1:3] == ["cgroup", "systemd"]))' "$TMP/py.json"
tap_check "third configuration, memory=48M: MemoryLimitExceeded by the cgroup" \
	"$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["third"] != ["MemoryLimitExceeded", "cgroup", "systemd"])' "$TMP/py.json"
tap_check "the process stayed in its one scope's leaf" \
	"$PY" -c 'import json,re,sys; sys.exit(not re.match(r"0::/user.slice/user-1000.slice/user@1000.service/leash.slice/leash-jobs.service/leash-leaf$", json.load(open(sys.argv[1]))["cgroup"]))' "$TMP/py.json"

# A scope of the user's own with Delegate=yes: leash uses it.
systemd-run --user --quiet --scope -p Delegate=yes -- "$LEASH" run -m 32M -o "$TMP/d.json" -- cat /proc/self/cgroup \
	>"$TMP/d.out" 2>&1
tap_diag "$(cat "$TMP/d.out")"
tap_is "$(jget "$TMP/d.json" placement.kind)" delegated \
	"in systemd-run --user --scope -p Delegate=yes: placement delegated ($(jget "$TMP/d.json" placement.why))"
tap_check "the job's cgroup is in that run-*.scope ($(jget "$TMP/d.json" cgroup))" \
	grep -Eq "^$CG/user.slice/user-1000.slice/user@1000.service/app.slice/run-[^/]+\.scope/[^/]+$" <<<"$(jget "$TMP/d.json" cgroup)"
tap_is "$(jget "$TMP/d.json" limits.memory.enforced_by)" cgroup "memory is enforced by its cgroup"

# leash check names the scope a run would use.
"$LEASH" check >"$TMP/check.txt" 2>&1
tap_diag "$(grep '^placement' "$TMP/check.txt")"
tap_check "leash check names the unit: .../user@1000.service/leash.slice/leash-jobs.service" \
	grep -q '^placement: *systemd .*/user@1000.service/leash.slice/leash-jobs.service$' "$TMP/check.txt"

# The user manager's daemon-reload while a job runs under --cpus 0.5: the scope is
# delegated, so the manager leaves its subtree's cpu.max alone (as root's 10-root.sh).
"$LEASH" run -c 0.5 -w 8s -o "$TMP/reload.json" -- "$LEASH_VM_HOG" spin 20000 >/dev/null 2>&1 &
lpid=$!
wait_for 120 pgrep -P "$lpid" >/dev/null
systemctl --user daemon-reload
tap_is "$?" 0 "systemctl --user daemon-reload while a job runs"
wait "$lpid"
cpu=$(jget "$TMP/reload.json" usage.cpu_time_s)
wall=$(jget "$TMP/reload.json" usage.wall_time_s)
tap_is "$(jget "$TMP/reload.json" reason)" wall_time "the job ended at its wall-time limit"
tap_check "its CPU stayed at 0.5 core across the reload ($cpu s CPU in $wall s)" \
	awk -v c="$cpu" -v w="$wall" 'BEGIN { exit !(c <= 0.65 * w && c > 0) }'

wait_for 35 no_leash_scope
tap_check "no leash scope is left" no_leash_scope
tap_plan "$_tap_n"
tap_done
