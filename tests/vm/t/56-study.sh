#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# leash.Executor's study budget on a real cgroup-v2 kernel (issue 42): the
# issue's "8 tasks each allocating 2 GiB under a 6 GiB study", scaled to the
# guest's memory (LEASH_VM_MEM, 1024 MiB by default): 8 tasks, each under
# memory=96M, each allocating and touching 64 MiB and holding it until all
# have tried, under a study of 192 MiB (3 tasks' worth). The study cgroup's
# memory.peak stays within 192 MiB; the tasks the kernel killed for it end
# with MemoryLimitExceeded naming the study (their reports' "study"), the
# others return; the control, the same tasks without the
# study, all return (512 MiB in total, more than the budget).

. "$(dirname "$0")/../../integration/lib.sh"

vm_python memory pids
export PYTHONPATH=$BUILD/python

cat >"$TMP/study.py" <<'PYEOF'
import json, os, sys, time, warnings
import concurrent.futures as cf
import leash

leash.configure(cgroup_parent=sys.argv[1])
gate = sys.argv[2]

def hold(mib):
    b = bytearray(mib << 20)
    b[::4096] = b"x" * len(b[::4096])
    with open(gate + ".%d" % os.getpid(), "w"):
        pass
    while not os.path.exists(gate):  # held until the driver has seen every task try
        time.sleep(0.05)
    return mib

def run(study):
    for f in os.listdir(os.path.dirname(gate)):
        if f.startswith(os.path.basename(gate)):
            os.unlink(os.path.join(os.path.dirname(gate), f))
    with leash.Executor(max_workers=8, memory="96M", wall_time=120, study=study) as ex:
        fs = [ex.submit(hold, 64) for _ in range(8)]
        # every task either holds its 64 MiB (a marker file named by its
        # pid) or has ended: counted once each, by pid
        prefix = os.path.basename(gate) + "."
        while len({int(n[len(prefix):]) for n in os.listdir(os.path.dirname(gate)) if n.startswith(prefix)}
                   | {f.report["pid"] for f in fs if f.done()}) < 8:
            time.sleep(0.05)
        open(gate, "w").close()
        cf.wait(fs)
    out = []
    for f in fs:
        e = f.exception()
        out.append([type(e).__name__ if e else "ok", f.report["reason"], f.report["usage"]["oom_kills"],
                    (f.report.get("study") or {}).get("reason"), str(e)[:120] if e else None])
    rep = ex.study_report
    return {"tasks": out, "study": None if rep is None else
            [rep["usage"]["memory_peak_bytes"], rep["usage"]["memory_peak_basis"], rep["tasks"],
             rep["limits"]["memory"]["enforced_by"]]}

print(json.dumps({"study": run({"memory": "192M", "pids": 256}), "control": run(None)}))
PYEOF
"$PY" "$TMP/study.py" "$PARENT" "$TMP/gate" >"$TMP/out" 2>"$TMP/err"
rc=$?
while read -r line; do diag "$line"; done <"$TMP/out"
check "the Python probe ran (status $rc)" test "$rc" = 0
res=$(tail -1 "$TMP/out")
check "the study's memory.peak <= 192 MiB, enforced by the cgroup, its report counts 8 tasks" \
	"$PY" -c 'import json,sys; s=json.loads(sys.argv[1])["study"]["study"]; sys.exit(not (s[0] <= 192 << 20 and s[1] == "memory.peak" and s[2]["count"] == 8 and s[3] == "cgroup"))' "$res"
check "under the study: at most 3 tasks return 64, the others end by the study's memory limit (MemoryLimitExceeded, reason memory, the report's study.reason memory)" \
	"$PY" -c 'import json,sys; t=json.loads(sys.argv[1])["study"]["tasks"]; ok=[x for x in t if x[0]=="ok"]; bad=[x for x in t if x[0]!="ok"]; sys.exit(not (len(ok) <= 3 and len(bad) >= 5 and all(x[0]=="MemoryLimitExceeded" and x[1]=="memory" and x[3]=="memory" for x in bad)))' "$res"
check "control: without the study all 8 tasks hold 64 MiB at once and return" \
	"$PY" -c 'import json,sys; t=json.loads(sys.argv[1])["control"]["tasks"]; sys.exit(not all(x[0]=="ok" for x in t))' "$res"
check "no cgroup left under the test parent" \
	"$PY" -c 'import os,sys; sys.exit(any(e.is_dir() for e in os.scandir(sys.argv[1])))' "$PARENT"
[ -s "$TMP/err" ] && diag "stderr: $(tail -5 "$TMP/err" | tr '\n' ' ')"

finish
