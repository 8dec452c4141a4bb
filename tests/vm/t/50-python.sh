#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The Python package on a real cgroup-v2 kernel: a function that allocates past
# memory= is OOM-killed in its cgroup and raises leash.MemoryLimitExceeded (also a
# MemoryError) with reason memory; one that forks past pids= raises PidsLimitExceeded;
# the pynisher drop-in turns the OOM kill into MemoryLimitException, where pynisher
# itself would guess; leash.monitored's steps follow memory.current and a memory
# limit is ResourceExhaustion. (tests/python itself runs in make check; under emulation its
# full run exceeds a guest script's time.)

. "$(dirname "$0")/../../integration/lib.sh"

vm_python memory pids
export PYTHONPATH=$BUILD/python

cat >"$TMP/oom.py" <<'PYEOF'
import json, os, sys
import leash
import leash.compat.pynisher as pynisher

leash.configure(cgroup_parent=sys.argv[1])

def allocate(n, mib=1, pause=0):
    import time
    blocks = []
    for _ in range(n):
        b = bytearray(mib << 20)
        b[::4096] = b"x" * len(b[::4096])
        blocks.append(b)
        time.sleep(pause)
    return len(blocks)

def fork_many(n):
    pids = [os.fork() or os._exit(0) for _ in range(n)]
    return len(pids)

out = {}
try:
    leash.limit(allocate, memory="64M", wall_time=60)(256)
    out["oom"] = "no exception"
except leash.MemoryLimitExceeded as e:
    print("caught: %s: %s" % (type(e).__name__, e))
    print("isinstance MemoryError: %s; reason %s; enforced_by %s; oom_kills %s; signal %s" % (
        isinstance(e, MemoryError), e.report["reason"], e.report["limits"]["memory"]["enforced_by"],
        e.report["usage"]["oom_kills"], e.report["exit"]["signal"]))
    out["oom"] = [type(e).__name__, isinstance(e, MemoryError), e.report["reason"],
                  e.report["limits"]["memory"]["enforced_by"], e.report["usage"]["oom_kills"]]
try:
    leash.limit(fork_many, pids=16, wall_time=60)(64)
    out["pids"] = "no exception"
except leash.PidsLimitExceeded as e:
    out["pids"] = [type(e).__name__, e.report["reason"], e.report["usage"]["pids_max_events"]]
except Exception as e:
    out["pids"] = [type(e).__name__, str(e)]
try:
    pynisher.limit(allocate, memory=(64, "MB"), wall_time=60)(256)
    out["pynisher"] = "no exception"
except pynisher.MemoryLimitException as e:
    out["pynisher"] = [type(e).__name__]
# resource_monitor's API on memory.current: the steps see the memory arrive,
# and a memory limit ends the call as ResourceExhaustion
steps = []
try:
    leash.monitored(limits={"memory": 48}, interval=0.05,
                    callback=lambda i, n, step, r: steps.append((step, r.get("memory"))))(allocate)(16, 8, 0.2)
    out["monitored"] = "no exception"
except leash.ResourceExhaustion as e:
    mem = [m for s, m in steps if s > 0 and m is not None]
    print("monitored: %d steps, memory MB first %.1f peak %.1f; limits_exceeded %s; memory basis %s" % (
        len(steps), mem[0] if mem else -1, max(mem) if mem else -1, e.resources["limits_exceeded"],
        e.report["sampling"]["peaks"]["memory_bytes"]["basis"]))
    out["monitored"] = [type(e).__name__, e.resources["limits_exceeded"], steps[-1][0], len(mem),
                        (max(mem) - mem[0]) if mem else 0, e.report["sampling"]["peaks"]["memory_bytes"]["basis"]]
print(json.dumps(out))
PYEOF
"$PY" "$TMP/oom.py" "$PARENT" >"$TMP/out" 2>"$TMP/err"
rc=$?
while read -r line; do diag "$line"; done <"$TMP/out"
check "the Python probe ran (status $rc)" test "$rc" = 0
res=$(tail -1 "$TMP/out")
check "OOM in a limited function: MemoryLimitExceeded, a MemoryError, reason memory, by cgroup, oom_kills >= 1" \
	"$PY" -c 'import json,sys; o=json.loads(sys.argv[1])["oom"]; sys.exit(not (o[:4] == ["MemoryLimitExceeded", True, "memory", "cgroup"] and o[4] >= 1))' "$res"
check "forks past pids=16: PidsLimitExceeded, reason pids" \
	"$PY" -c 'import json,sys; o=json.loads(sys.argv[1])["pids"]; sys.exit(not (o[:2] == ["PidsLimitExceeded", "pids"]))' "$res"
check "the pynisher drop-in: the OOM kill is a MemoryLimitException" \
	"$PY" -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["pynisher"] != ["MemoryLimitException"])' "$res"
check "leash.monitored: memory.current steps grow by >= 24 MB, a memory limit of 48 MB is ResourceExhaustion" \
	"$PY" -c 'import json,sys; o=json.loads(sys.argv[1])["monitored"]; sys.exit(not (o[0] == "ResourceExhaustion" and o[1] == {"memory": 48} and o[2] == -1 and o[3] >= 5 and o[4] >= 24 and o[5] == "memory.current"))' "$res"
[ -s "$TMP/err" ] && diag "stderr: $(tail -5 "$TMP/err" | tr '\n' ' ')"

finish
