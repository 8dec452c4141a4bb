#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Watching a job (issue 12) on a pure cgroup-v2 kernel with the memory controller:
# the series' memory comes from memory.current (not the PSS fallback of a hybrid host)
# and shows a job's allocation steps, the processes column shows K forks, a measured
# limit (--limit disk=10M) stops a job writing 50 MiB with reason disk, and leash ps and
# stat see a running job's memory now and its peak (memory.current, memory.peak) and the
# limits it was given. Runs as root and, with --script, as uid 1000 in a delegated
# cgroup (then the job record is user.leash on the user's own cgroup).

. "$(dirname "$0")/../../integration/lib.sh"

MiB=1048576
if ! has_controller memory; then
	not_ok "the memory controller is available under $PARENT"
	finish
fi
# series_py FILE EXPR: EXPR over rows (dicts of floats, None for empty)
series_py() {
	"$PY" - "$1" "$2" <<'PY'
import csv, sys
rows = [{k: (None if v == "" else float(v)) for k, v in r.items()} for r in csv.DictReader(open(sys.argv[1]))]
r = eval(sys.argv[2])
print(r)
sys.exit(0 if r not in (False, None) else 1)
PY
}

# --- steps: 5 x 16 MiB, each seen in memory.current -------------------------------
run_leash --sample 100ms --series "$TMP/steps.csv" -o "$TMP/r.json" -- "$HELPERS/lh-steps" alloc 16 5 400
check "steps: exit 0" test "$RC" = 0
check "steps: the memory figure is memory.current here" \
	test "$(jget "$TMP/r.json" sampling.peaks.memory_bytes.basis)" = memory.current
series_py "$TMP/steps.csv" "[int((r['mem_current_bytes'] or 0) // 1048576) for r in rows]" | sed 's/^/# mem_current MiB per sample: /'
for k in 1 2 3 4 5; do
	lo=$((k * 16 * MiB))
	hi=$(((k * 16 + 12) * MiB))
	check "steps: a sample sees step $k in mem_current_bytes ($((k * 16)) MiB + at most 12)" \
		series_py "$TMP/steps.csv" "any(r['mem_current_bytes'] is not None and $lo <= r['mem_current_bytes'] <= $hi for r in rows)"
done
check "steps: mem_anon_bytes reaches the 80 MiB" series_py "$TMP/steps.csv" "max(r['mem_anon_bytes'] or 0 for r in rows) >= 80 * 1048576"

# --- K forks: the procs column shows them ------------------------------------------------
run_leash --sample 100ms --series "$TMP/fork.csv" -o "$TMP/r.json" -- "$HELPERS/lh-forkn" 20 1500
check "forks: exit 0" test "$RC" = 0
series_py "$TMP/fork.csv" "[(r['procs'], r['pids_current']) for r in rows]" | sed 's/^/# (procs, pids_current) per sample: /'
check "forks: a sample sees the 20 children and their parent in cgroup.procs" \
	series_py "$TMP/fork.csv" "max(r['procs'] or 0 for r in rows) == 21"
check "forks: pids.current agrees" series_py "$TMP/fork.csv" "max(r['pids_current'] or 0 for r in rows) == 21"

# --- --limit disk=10M on a job writing 50 MiB ------------------------------------------
mkdir "$TMP/disk"
run_leash --sample 50ms --sample-disk "$TMP/disk" --limit disk=10M --grace 1s -o "$TMP/r.json" \
	-- "$HELPERS/lh-steps" write "$TMP/disk/f" 2 25 40
check "disk: reason disk" test "$(jget "$TMP/r.json" reason)" = disk
size=$(stat -c %s "$TMP/disk/f")
check "disk: stopped before its 50 MiB ($size bytes)" fcmp "$size < 50 * $MiB"

# --- leash ps / stat on a running job holding 64 MiB --------------------------------------
mkfifo "$TMP/go"
"$LEASH" run --cgroup-parent "$PARENT" -q -n holder -m 256M -w 60s -- \
	sh -c "'$HELPERS/lh-alloc' 64 60000 & echo \$! >$TMP/pid; read x <$TMP/go; kill \$!" &
BG=$!
for _ in $(seq 400); do [ -s "$TMP/pid" ] && break; sleep 0.05; done
sleep 1 # the 64 MiB are touched
"$LEASH" ps --cgroup-parent "$PARENT" -o json >"$TMP/ps.json" 2>"$TMP/err"
check "ps: exit 0 ($(head -1 "$TMP/err"))" test $? = 0
"$LEASH" stat -o json --processes "$(cat "$TMP/pid")" >"$TMP/st.json" 2>"$TMP/err"
check "stat PID: exit 0 ($(head -1 "$TMP/err"))" test $? = 0
want=trusted.leash
[ "$(id -u)" = 0 ] || want=user.leash
# one interpreter for every figure: python's start-up is seconds under emulation
"$PY" - "$TMP/ps.json" "$TMP/st.json" "$BG" "$want" >"$TMP/checks" 2>&1 <<'PY'
import json, sys
ps, st, bg, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3]), sys.argv[4]
M = 1048576
j = ps["jobs"][0]
f = j["figures"]
def say(ok, what):
    print(("1 " if ok else "0 ") + what)
say(j["basis"].get("memory_bytes") == "memory.current", "ps: memory now from memory.current (%s)" % j["basis"].get("memory_bytes"))
say(64 * M <= (f.get("memory_bytes") or 0) <= 96 * M, "ps: memory now covers the 64 MiB held (%s)" % f.get("memory_bytes"))
say((f.get("mem_peak_bytes") or 0) >= (f.get("memory_bytes") or 1), "ps: the peak from memory.peak covers it (%s)" % f.get("mem_peak_bytes"))
say(j["limits"].get("memory") == 256 * M, "ps: the limit given (memory %s)" % j["limits"].get("memory"))
say(j["leash_pid"] == bg, "ps: the leash pid (%s)" % j["leash_pid"])
say(j["record"] == want, "ps: the record is %s (%s)" % (want, j["record"]))
say(any(p["command"] == "lh-alloc" and (p["rss_bytes"] or 0) >= 64 * M for p in st["processes"]), "stat --processes: the holder has >= 64 MiB RSS")
say((st["figures"].get("mem_anon_bytes") or 0) >= 64 * M, "stat: memory.stat's anon (%s)" % st["figures"].get("mem_anon_bytes"))
PY
while read -r good what; do
	if [ "$good" = 1 ]; then ok "$what"; else not_ok "$what"; fi
done <"$TMP/checks"
check "ps/stat: every figure checked" test "$(wc -l <"$TMP/checks")" = 8
echo >"$TMP/go"
wait "$BG"
finish
